/* exec_stub.c: prereg-exec, the smallest process between the spawn
 * helper and a command.
 * SPDX-License-Identifier: MIT
 *
 * A child's ru_maxrss starts from the resident size of the memory map it
 * execs from: spawned by the helper (a fork of prereg, about 3 MiB
 * resident), every command's maxrss_kib had that floor, twice what GNU
 * time reports for `dash -c true`. This program, linked statically, holds
 * a few hundred KiB: it spawns the command with everything it was given
 * (descriptors 0-2, process group, signals, environment), waits for it,
 * and tells the helper on descriptor 3 what wait4 said of the command
 * alone (run_stub_record), then ends as the command did.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run/stub_internal.h"

extern char **environ;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void tell(const run_stub_record *r) {
  if (write(3, r, sizeof *r) != (ssize_t)sizeof *r) {
    /* the helper is gone: nothing to tell */
  }
}

int main(int argc, char **argv) {
  run_stub_record r = {0};
  pid_t pid;
  if (argc < 2)
    return 127;
  fcntl(3, F_SETFD, FD_CLOEXEC); /* not the command's */
  r.kind = 1;
  r.t = now();
  r.err = posix_spawnp(&pid, argv[1], NULL, NULL, argv + 1, environ);
  tell(&r);
  if (r.err)
    return 127;
  while (wait4(pid, &r.status, 0, &r.ru) < 0)
    if (errno != EINTR)
      return 127;
  r.t = now();
  r.kind = 2;
  tell(&r);
  if (WIFSIGNALED(r.status)) {
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(WTERMSIG(r.status), SIG_DFL);
    raise(WTERMSIG(r.status));
  }
  return WIFEXITED(r.status) ? WEXITSTATUS(r.status) : 127;
}
