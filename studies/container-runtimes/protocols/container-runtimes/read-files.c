/* read-files DIR: opens, stats and reads every regular file in DIR and in
 * its subfolders (one level, as the image lays them out), timed on the
 * monotonic clock from the first opendir to the last close, and prints
 * read_files_s=SECONDS and files_read=COUNT for $PREREG_METRICS. Exit 1
 * if a file cannot be read, so that a failure is never a fast run.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long files, bytes;

static int read_one(const char *path) {
  char buf[65536];
  struct stat st;
  ssize_t n;
  int fd = open(path, O_RDONLY);
  if (fd < 0 || fstat(fd, &st) != 0) {
    perror(path);
    if (fd >= 0)
      close(fd);
    return -1;
  }
  while ((n = read(fd, buf, sizeof buf)) > 0)
    bytes += n;
  close(fd);
  if (n < 0) {
    perror(path);
    return -1;
  }
  files++;
  return 0;
}

static int walk(const char *dir, int depth) {
  char path[4096];
  struct dirent *e;
  struct stat st;
  int rc = 0;
  DIR *d = opendir(dir);
  if (!d) {
    perror(dir);
    return -1;
  }
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >=
        (int)sizeof path)
      return closedir(d), -1;
    if (lstat(path, &st) != 0) {
      perror(path);
      rc = -1;
    } else if (S_ISDIR(st.st_mode) && depth == 0)
      rc = walk(path, 1);
    else if (S_ISREG(st.st_mode))
      rc = read_one(path);
  }
  closedir(d);
  return rc;
}

int main(int argc, char **argv) {
  struct timespec t0, t1;
  int rc;
  if (argc != 2) {
    fputs("usage: read-files DIR\n", stderr);
    return 2;
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rc = walk(argv[1], 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc != 0 || files == 0)
    return 1;
  printf("read_files_s=%.6f\nfiles_read=%ld\nbytes_read=%ld\n",
         (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
         files, bytes);
  return 0;
}
