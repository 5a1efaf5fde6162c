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
 * (run_stub_record), then ends as the command did. The two clock
 * readings are the command's own: just before its execve (in the vfork
 * child) and just after wait4 returns, so that neither the process that
 * execs it nor prereg's bookkeeping is inside wall_s.
 *
 * The CPU times are those of every process of the run, not only of the
 * ones the command waited for: bubblewrap's outer process, for one, does
 * not wait for the sandbox's first process, whose CPU wait4 of the
 * command then never sees. This program is a child subreaper: what the
 * command leaves behind is adopted here; once the command ends, all of
 * it is killed and reaped, and the CPU times are this program's
 * RUSAGE_CHILDREN, the sum of everything reaped below it (this program's
 * own CPU excluded). ru_maxrss stays what wait4 said of the command, as
 * GNU time reports it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

/* SIGKILLs every child of ours listed in path (our orphans included);
 * returns how many could be signalled (a zombie can), or -1 when the
 * file cannot be read. Reads in chunks: a number may straddle two. */
static int kill_children(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  char buf[1024];
  int found = 0, in_number = 0;
  long v = 0;
  ssize_t r;
  if (fd < 0)
    return -1;
  do {
    r = read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR)
      continue;
    /* r <= 0 is the end: a last number is then ended by a space. */
    for (ssize_t i = 0; i < (r > 0 ? r : 1); i++) {
      char c = r > 0 ? buf[i] : ' ';
      if (c >= '0' && c <= '9') {
        v = v * 10 + (c - '0');
        in_number = 1;
      } else if (in_number) {
        if (kill((pid_t)v, SIGKILL) == 0)
          found++;
        v = 0;
        in_number = 0;
      }
    }
  } while (r > 0 || (r < 0 && errno == EINTR));
  close(fd);
  return found;
}

/* Once the command has ended: kills and reaps everything it left, again
 * while killing one orphans more onto us; bounded (about 2 s) in case
 * something forks as fast as we kill. The helper kills whatever is left
 * (without the children file, all of it: its CPU is then not counted). */
static void reap_rest(void) {
  for (int round = 0; round < 2000; round++) {
    pid_t w;
    while ((w = waitpid(-1, NULL, WNOHANG)) > 0)
      ;
    /* No child left (ECHILD): the common case ends here, without /proc. */
    if (w < 0 || kill_children("/proc/thread-self/children") <= 0)
      return;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
}

/* Waits for the command (pid), reaping the orphans that end meanwhile;
 * r gets its status and what wait4 said of it. Returns 0, or -1. */
static int wait_command(pid_t pid, run_stub_record *r) {
  for (;;) {
    int status;
    struct rusage ru;
    pid_t w = wait4(-1, &status, 0, &ru);
    if (w == pid) {
      r->status = status;
      r->ru = ru;
      return 0;
    }
    if (w < 0 && errno != EINTR)
      return -1;
  }
}

/* The CPU times of every process reaped below us, into r. */
static void all_cpu(run_stub_record *r) {
  struct rusage all;
  reap_rest();
  if (getrusage(RUSAGE_CHILDREN, &all) == 0) {
    r->ru.ru_utime = all.ru_utime;
    r->ru.ru_stime = all.ru_stime;
  }
}

int main(int argc, char **argv) {
  run_stub_record r = {0};
  pid_t pid;
  if (argc < 2)
    return 127;
  fcntl(3, F_SETFD, FD_CLOEXEC); /* not the command's */
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
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
  if (wait_command(pid, &r) != 0)
    return 127;
  r.t = now();
  all_cpu(&r);
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
