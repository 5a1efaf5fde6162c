/* exec_stub.c: prereg-exec, the smallest process between the spawn
 * helper and a command.
 * SPDX-License-Identifier: MIT
 *
 * A child's ru_maxrss starts from the resident size of the memory map it
 * execs from: spawned by the helper (a fork of prereg, about 3 MiB
 * resident), every command's maxrss_kib had that floor, twice what GNU
 * time reports for `dash -c true`. This program, linked statically, holds
 * a few hundred KiB: it starts the command with everything it was given
 * (descriptors 0-2, process group, signals, environment), waits for it,
 * and tells the helper on descriptor 3 what wait4 said of the command
 * alone (run_stub_record), then ends as the command did. The two clock
 * readings are the command's own: just before its execve (in the vfork
 * child) and just after wait4 returns, so that neither the process that
 * execs it nor prereg's bookkeeping is inside wall_s.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

/* What the child shares with us until it execs (vfork): the clock just
 * before its execve, and the errno of a command that could not start. */
static volatile double exec_at;
static volatile int exec_err;

/* execve of file, searched in PATH as posix_spawnp does (no shell for a
 * file without #!): a file in a folder that lacks it or may not be run
 * is looked for further, EACCES is said when nothing else ran. Only in
 * the vfork child: no allocation, the clock read just before each
 * execve, so that the last one is the command's start. Returns the
 * errno. */
static int exec_path(const char *file, char **argv) {
  const char *path = getenv("PATH"), *p;
  char buf[4096];
  int seen_eacces = 0;
  size_t fl = strlen(file);
  if (strchr(file, '/')) {
    exec_at = now();
    execve(file, argv, environ);
    return errno;
  }
  if (!path)
    path = "/bin:/usr/bin";
  for (p = path;; p++) {
    const char *e = strchr(p, ':');
    size_t dl = e ? (size_t)(e - p) : strlen(p);
    if (dl + fl + 2 <= sizeof buf) {
      memcpy(buf, p, dl);
      buf[dl] = '/';
      memcpy(buf + (dl ? dl + 1 : 0), file, fl + 1);
      exec_at = now();
      execve(buf, argv, environ);
      if (errno == EACCES)
        seen_eacces = 1;
      else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE &&
               errno != ENODEV && errno != ETIMEDOUT)
        return errno;
    }
    if (!e)
      break;
    p = e;
  }
  return seen_eacces ? EACCES : ENOENT;
}

int main(int argc, char **argv) {
  run_stub_record r = {0};
  pid_t pid;
  if (argc < 2)
    return 127;
  fcntl(3, F_SETFD, FD_CLOEXEC); /* not the command's */
  /* vfork: the child only execs, and takes the clock as it does; no
   * signal handler of ours can run in it (we install none). */
  pid = vfork();
  if (pid == 0) {
    exec_err = exec_path(argv[1], argv + 1);
    _exit(127);
  }
  r.kind = 1;
  r.t = exec_at;
  r.err = pid < 0 ? errno : exec_err;
  if (r.err) {
    if (pid > 0)
      waitpid(pid, NULL, 0);
    tell(&r);
    return 127;
  }
  tell(&r);
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
