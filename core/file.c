/* file.c: reading and durably writing files; folders, their listings and
 * their removal.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

core_status core_read_file(const char *path, char **data, size_t *len,
                           core_err *err) {
  core_buf b;
  char chunk[65536];
  ssize_t n;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  *data = NULL;
  *len = 0;
  if (fd < 0)
    return core_fail(err, CORE_EIO, "%s: cannot open: %s", path,
                     strerror(errno));
  core_buf_init(&b);
  while ((n = read(fd, chunk, sizeof chunk)) != 0) {
    if (n < 0) {
      if (errno == EINTR)
        continue;
      core_fail(err, CORE_EIO, "%s: cannot read: %s", path, strerror(errno));
      close(fd);
      core_buf_free(&b);
      return CORE_EIO;
    }
    core_buf_append(&b, chunk, (size_t)n);
  }
  close(fd);
  if (b.oom) {
    core_buf_free(&b);
    return core_fail(err, CORE_ENOMEM, "%s: out of memory reading it", path);
  }
  *len = b.len;
  *data = b.data ? core_buf_steal(&b) : core_strdup("");
  if (!*data)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
  return CORE_OK;
}

static char *parent_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return core_strdup(".");
  if (slash == path)
    return core_strdup("/");
  return core_strndup(path, (size_t)(slash - path));
}

core_status core_fsync_dir(const char *path, core_err *err) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return core_fail(err, CORE_EIO, "%s: cannot open folder: %s", path,
                     strerror(errno));
  if (fsync(fd) != 0 && errno != EINVAL) {
    int e = errno;
    close(fd);
    return core_fail(err, CORE_EIO, "%s: cannot sync folder: %s", path,
                     strerror(e));
  }
  close(fd);
  return CORE_OK;
}

core_status core_write_file_atomic(const char *path, const void *data,
                                   size_t len, unsigned mode, core_err *err) {
  char *tmp = core_asprintf("%s.tmp.%ld", path, (long)getpid());
  char *dir = parent_of(path);
  const char *p = data;
  size_t left = len;
  core_status st = CORE_OK;
  int fd = -1;
  if (!tmp || !dir) {
    st = core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
    goto cleanup;
  }
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot create: %s", tmp,
                   strerror(errno));
    goto cleanup;
  }
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      st = core_fail(err, CORE_EIO, "%s: cannot write: %s", path,
                     strerror(errno));
      goto cleanup;
    }
    p += n;
    left -= (size_t)n;
  }
  if (fsync(fd) != 0) {
    st =
        core_fail(err, CORE_EIO, "%s: cannot sync: %s", path, strerror(errno));
    goto cleanup;
  }
  if (fchmod(fd, (mode_t)mode) != 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot set mode: %s", path,
                   strerror(errno));
    goto cleanup;
  }
  close(fd);
  fd = -1;
  if (rename(tmp, path) != 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot rename into place: %s", path,
                   strerror(errno));
    goto cleanup;
  }
  st = core_fsync_dir(dir, err);
cleanup:
  if (fd >= 0)
    close(fd);
  if (st != CORE_OK && tmp)
    unlink(tmp);
  core_free(tmp);
  core_free(dir);
  return st;
}

core_status core_mkdir_p(const char *path, unsigned mode, core_err *err) {
  char *copy = core_strdup(path);
  char *p;
  if (!copy)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
  for (p = copy + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char saved = *p;
      *p = '\0';
      if (mkdir(copy, (mode_t)mode) != 0 && errno != EEXIST) {
        core_fail(err, CORE_EIO, "%s: cannot create folder: %s", copy,
                  strerror(errno));
        core_free(copy);
        return CORE_EIO;
      }
      *p = saved;
      if (saved == '\0')
        break;
    }
  }
  core_free(copy);
  if (!core_is_dir(path))
    return core_fail(err, CORE_EIO, "%s: exists and is not a folder", path);
  return CORE_OK;
}

int core_exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

int core_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *core_path_join(const char *a, const char *b) {
  size_t la = strlen(a);
  if (la == 0)
    return core_strdup(b);
  if (*b == '\0')
    return core_strdup(a);
  return core_asprintf("%s%s%s", a, a[la - 1] == '/' ? "" : "/", b);
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void core_names_free(char **names, size_t n) {
  for (size_t i = 0; i < n; i++)
    core_free(names[i]);
  core_free(names);
}

core_status core_list_dir(const char *dir, char ***names, size_t *n,
                          core_err *err) {
  DIR *d = opendir(dir);
  struct dirent *de;
  char **v = NULL;
  size_t len = 0, cap = 0;
  *names = NULL;
  *n = 0;
  if (!d) {
    if (errno == ENOENT)
      return CORE_OK;
    return core_fail(err, CORE_EIO, "%s: cannot open folder: %s", dir,
                     strerror(errno));
  }
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    char **nv = core_grow(v, &cap, len, sizeof *nv, 16);
    if (!nv)
      goto oom;
    v = nv;
    if (!(v[len] = core_strdup(de->d_name)))
      goto oom;
    len++;
  }
  closedir(d);
  if (len > 1)
    qsort(v, len, sizeof *v, cmp_names);
  *names = v;
  *n = len;
  return CORE_OK;
oom:
  closedir(d);
  core_names_free(v, len);
  return core_fail(err, CORE_ENOMEM, "%s: out of memory", dir);
}

/* {==== Removing a tree ==== */

/* The first failure of a removal, kept while it goes on. */
static void remove_failed(core_status *st, core_err *err, const char *where,
                          const char *name) {
  if (*st == CORE_OK)
    *st = core_fail(err, CORE_EIO, "%s/%s: cannot remove: %s", where, name,
                    strerror(errno));
}

/* Empties the folder open at dfd (path is for messages). Works on
 * descriptors (openat, fstatat, unlinkat with AT_SYMLINK_NOFOLLOW and
 * O_NOFOLLOW): no path is resolved twice, so no entry can be swapped for
 * a link between the look and the removal, and the depth is not bounded
 * by PATH_MAX. */
static void empty_folder(int dfd, const char *path, core_status *st,
                         core_err *err) {
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    remove_failed(st, err, path, ".");
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    const char *name = e->d_name;
    struct stat sb;
    if (!strcmp(name, ".") || !strcmp(name, ".."))
      continue;
    if (fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
      continue; /* gone meanwhile */
    if (S_ISDIR(sb.st_mode)) {
      /* Made accessible before it is opened. Should the folder be swapped
       * for a link in between, the chmod reaches the link's target, but
       * O_NOFOLLOW keeps us from descending into it. */
      if ((sb.st_mode & 0700) != 0700)
        fchmodat(dirfd(d), name, (sb.st_mode & 07777) | 0700, 0);
      int sub = openat(dirfd(d), name,
                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      char *subpath = core_path_join(path, name);
      if (sub < 0)
        remove_failed(st, err, path, name);
      else
        empty_folder(sub, subpath ? subpath : path, st, err);
      core_free(subpath);
      if (sub < 0)
        continue;
    }
    if (unlinkat(dirfd(d), name, S_ISDIR(sb.st_mode) ? AT_REMOVEDIR : 0) !=
            0 &&
        errno != ENOENT)
      remove_failed(st, err, path, name);
  }
  closedir(d);
}

core_status core_remove_tree(const char *path, core_err *err) {
  struct stat sb;
  core_status st = CORE_OK;
  if (lstat(path, &sb) != 0)
    return errno == ENOENT
               ? CORE_OK
               : core_fail(err, CORE_EIO, "%s: %s", path, strerror(errno));
  if (S_ISDIR(sb.st_mode)) {
    if ((sb.st_mode & 0700) != 0700)
      chmod(path, (sb.st_mode & 07777) | 0700);
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
      return core_fail(err, CORE_EIO, "%s: cannot open folder: %s", path,
                       strerror(errno));
    empty_folder(dfd, path, &st, err);
    if (rmdir(path) != 0 && errno != ENOENT && st == CORE_OK)
      st = core_fail(err, CORE_EIO, "%s: cannot remove: %s", path,
                     strerror(errno));
  } else if (unlink(path) != 0 && errno != ENOENT) {
    st = core_fail(err, CORE_EIO, "%s: cannot remove: %s", path,
                   strerror(errno));
  }
  return st;
}

/* }==== */
