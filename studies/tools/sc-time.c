/* sc-time.c: the inner clock of the sandbox-cost experiment. Runs a
 * command and appends "NAME=SECONDS" to the file named by $PREREG_METRICS,
 * so that a workload is also timed from inside the sandbox, without the
 * sandbox's own start-up. Built statically by CMake (target sc-time,
 * build/sc-time) and copied into the images by scripts/rootfs.sh and
 * scripts/docker/agent-image.sh (busybox's date has no sub-second clock).
 * SPDX-License-Identifier: MIT
 *
 * Usage: sc-time NAME COMMAND [ARG...]
 * Exit status: the command's; 127 when it cannot be started; 125 when the
 * metric cannot be written (the run must not count without its metric).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: sc-time NAME COMMAND [ARG...]\n");
    return 125;
  }
  double t0 = now();
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "sc-time: fork: %s\n", strerror(errno));
    return 125;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    fprintf(stderr, "sc-time: %s: %s\n", argv[2], strerror(errno));
    _exit(127);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      fprintf(stderr, "sc-time: waitpid: %s\n", strerror(errno));
      return 125;
    }
  double dt = now() - t0;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  /* A failed command reports no time: a metric of a failed run would
   * only tempt someone to analyse it. */
  if (code != 0)
    return code;
  const char *path = getenv("PREREG_METRICS");
  if (path == NULL || path[0] == '\0') {
    fprintf(stderr, "sc-time: PREREG_METRICS is not set; %s=%.6f\n", argv[1],
            dt);
    return 125;
  }
  FILE *f = fopen(path, "a");
  if (f == NULL || fprintf(f, "%s=%.6f\n", argv[1], dt) < 0 ||
      fclose(f) != 0) {
    fprintf(stderr, "sc-time: %s: %s\n", path, strerror(errno));
    return 125;
  }
  return 0;
}
