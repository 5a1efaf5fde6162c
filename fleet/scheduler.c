/* scheduler.c: the scheduler's commands (salloc, srun, scancel, squeue,
 * scontrol) as child processes of the coordinator: started from an argv
 * (no shell: a partition or constraint may hold & or |), each in a group
 * of its own, with pipes for what it writes; and a short one run to its
 * end with a deadline.
 * SPDX-License-Identifier: MIT
 *
 * These are not measured runs (run_exec is for those): they run beside
 * each other while the coordinator reads them, and they die with it
 * (PR_SET_PDEATHSIG), so that a coordinator killed with -9 does not leave
 * an srun waiting on a node.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fleet/fleet_internal.h"

/* In the child between fork and exec: only async-signal-safe calls. */
static void exec_child(const char *const argv[], int out, int errfd,
                       pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent)
    _exit(127);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGPIPE, SIG_DFL);
  int null = open("/dev/null", O_RDWR);
  if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 ||
      dup2(errfd >= 0 ? errfd : null, 2) < 0)
    _exit(127);
  execvp(argv[0], (char *const *)argv);
  _exit(127);
}

core_status run_child_spawn(const char *const argv[], run_child *c,
                            core_err *err) {
  int o[2] = {-1, -1}, e[2] = {-1, -1};
  memset(c, 0, sizeof *c);
  c->pid = -1;
  c->out = c->err = -1;
  if (pipe2(o, O_CLOEXEC) != 0 || pipe2(e, O_CLOEXEC) != 0) {
    int en = errno;
    for (int i = 0; i < 2; i++) {
      if (o[i] >= 0)
        close(o[i]);
      if (e[i] >= 0)
        close(e[i]);
    }
    return core_fail(err, CORE_ERUN, "%s: cannot make a pipe: %s", argv[0],
                     strerror(en));
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0)
    exec_child(argv, o[1], e[1], parent);
  close(o[1]);
  close(e[1]);
  if (pid < 0) {
    int en = errno;
    close(o[0]);
    close(e[0]);
    return core_fail(err, CORE_ERUN, "%s: cannot start: %s", argv[0],
                     strerror(en));
  }
  setpgid(pid, pid); /* also here: whichever runs first */
  c->pid = pid;
  c->out = o[0];
  c->err = e[0];
  return CORE_OK;
}

void run_child_kill(run_child *c) {
  if (c->pid > 0)
    kill(-c->pid, SIGKILL);
}

int run_child_reap(run_child *c, int wait) {
  if (c->pid <= 0)
    return 1;
  int status;
  pid_t r = waitpid(c->pid, &status, wait ? 0 : WNOHANG);
  if (r == 0)
    return 0;
  if (r == c->pid)
    c->status =
        WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  else
    c->status = -1;
  c->pid = -1;
  return 1;
}

void run_child_close(run_child *c) {
  if (c->out >= 0)
    close(c->out);
  if (c->err >= 0)
    close(c->err);
  c->out = c->err = -1;
}

/* Reads what is there on fd into b (at most limit bytes kept); returns 0
 * at end of file. */
static int drain(int fd, core_buf *b, size_t limit) {
  char chunk[4096];
  ssize_t n = read(fd, chunk, sizeof chunk);
  if (n < 0)
    return errno == EINTR || errno == EAGAIN;
  if (n > 0 && b && b->len < limit)
    core_buf_append(b, chunk,
                    b->len + (size_t)n > limit ? limit - b->len : (size_t)n);
  return n > 0;
}

core_status run_child_tool(const char *const argv[], core_buf *out,
                           core_buf *errout, int *code, double timeout_s,
                           core_err *err) {
  run_child c;
  core_status st = run_child_spawn(argv, &c, err);
  if (st != CORE_OK)
    return st;
  double end = core_monotonic() + timeout_s;
  int open_out = 1, open_err = 1, timed_out = 0;
  while (open_out || open_err) {
    struct pollfd pf[2] = {{open_out ? c.out : -1, POLLIN, 0},
                           {open_err ? c.err : -1, POLLIN, 0}};
    double left = end - core_monotonic();
    if (left <= 0) {
      timed_out = 1;
      break;
    }
    if (poll(pf, 2, (int)(left * 1000) + 1) < 0 && errno != EINTR)
      break;
    if (pf[0].revents && !drain(c.out, out, (size_t)1 << 20))
      open_out = 0;
    if (pf[1].revents && !drain(c.err, errout, 64 * 1024))
      open_err = 0;
  }
  if (timed_out)
    run_child_kill(&c);
  run_child_reap(&c, 1);
  run_child_close(&c);
  *code = timed_out ? -1 : c.status;
  if ((out && out->oom) || (errout && errout->oom))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return CORE_OK;
}
