/* exec.c: runs one command the way a measurement needs it: no stdin, its
 * own process group, bounded output, a timeout, nothing left behind.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run/helper_internal.h"
#include "run/run.h"
#include "run/run_internal.h"

extern char **environ;

int run_cancel_fd = -1;

/* Cancellation */

static volatile sig_atomic_t cancelled;
static int cancel_pipe[2] = {-1, -1};

void run_cancel_disarm(void) {
  /* Called once no handler can run run_cancel any more: closing the pipe
   * under a handler could make it write into a reused descriptor. */
  for (int i = 0; i < 2; i++)
    if (cancel_pipe[i] >= 0) {
      close(cancel_pipe[i]);
      cancel_pipe[i] = -1;
    }
  run_cancel_fd = -1;
}

void run_cancel_arm(void) {
  run_cancel_disarm();
  cancelled = 0;
  if (pipe2(cancel_pipe, O_CLOEXEC | O_NONBLOCK) == 0)
    run_cancel_fd = cancel_pipe[0];
}

void run_cancel(void) {
  int e = errno;
  cancelled = 1;
  /* The byte stays unread: every command from now on ends at once. */
  if (cancel_pipe[1] >= 0 && write(cancel_pipe[1], "x", 1) < 0) {
    /* the flag alone still stops the batch between runs */
  }
  errno = e;
}

int run_cancelled(void) {
  return cancelled != 0;
}

/* Command strings */

int run_needs_shell(const char *cmd) {
  /* The contract's list, plus characters whose meaning a plain split would
   * change silently (a comment, ~, a glob class, a line break). */
  if (strpbrk(cmd, "'\"$*?|&;<>()`\\\n\t#~[") != NULL)
    return 1;
  const char *p = cmd;
  while (*p == ' ')
    p++;
  /* Words that only a shell understands (make keeps the same list):
   * exec would fail with "not found" or run something else. */
  static const char *const builtins[] = {
      "exit",  "cd",       "read",     "export", "set",     "unset",
      ".",     "source",   "if",       "for",    "while",   "until",
      "case",  "ulimit",   "umask",    "trap",   "eval",    "exec",
      "shift", "wait",     "alias",    "type",   "command", "return",
      "break", "continue", "readonly", "local",  "!",       "{",
      NULL};
  size_t w = strcspn(p, " ");
  for (size_t i = 0; builtins[i]; i++)
    if (strlen(builtins[i]) == w && strncmp(p, builtins[i], w) == 0)
      return 1;
  /* "NAME=value cmd" is an assignment for the shell, a file name for
   * exec. */
  const char *eq = strchr(p, '=');
  const char *sp = strchr(p, ' ');
  return eq != NULL && (sp == NULL || eq < sp) && eq != p;
}

void run_argv_free(char **argv) {
  if (!argv)
    return;
  for (char **a = argv; *a; a++)
    core_free(*a);
  core_free(argv);
}

char **run_argv(const char *cmd) {
  if (run_needs_shell(cmd)) {
    char **v = core_calloc(4, sizeof *v);
    if (!v)
      return NULL;
    v[0] = core_strdup("/bin/sh");
    v[1] = core_strdup("-c");
    v[2] = core_strdup(cmd);
    if (!v[0] || !v[1] || !v[2]) {
      for (int i = 0; i < 3; i++)
        core_free(v[i]);
      core_free(v);
      return NULL;
    }
    return v;
  }
  size_t n = 0, cap = 8;
  char **v = core_calloc(cap, sizeof *v);
  if (!v)
    return NULL;
  for (const char *p = cmd; *p;) {
    while (*p == ' ')
      p++;
    if (!*p)
      break;
    const char *e = strchr(p, ' ');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (n + 2 > cap) {
      char **nv = core_realloc(v, 2 * cap * sizeof *v);
      if (!nv) {
        run_argv_free(v);
        return NULL;
      }
      memset(nv + cap, 0, cap * sizeof *v);
      v = nv;
      cap *= 2;
    }
    if (!(v[n++] = core_strndup(p, len))) {
      run_argv_free(v);
      return NULL;
    }
    p += len;
  }
  if (n == 0) {
    run_argv_free(v);
    return NULL;
  }
  return v;
}

/* Process clean-up */

/* The spawn helper (see below): one of our children that is not a run. */
static int helper_sock = -1;
static pid_t helper_pid = -1;

int run_helper_pid(void) {
  return helper_sock >= 0 ? (int)helper_pid : -1;
}

void run_become_subreaper(void) {
  static int done;
  if (!done) {
    /* Without it, a descendant that calls setsid() and whose parent exits
     * is adopted by init and escapes both the group kill and us. */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    done = 1;
  }
}

/* Our direct children, from /proc (a subreaper adopts orphans, so these
 * include descendants of finished runs). */
static size_t own_children(pid_t *out, size_t max) {
  pid_t me = getpid();
  size_t n = 0;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)me, (int)me);
  FILE *f = fopen(path, "r");
  if (f) {
    long v;
    while (n < max && fscanf(f, "%ld", &v) == 1)
      out[n++] = (pid_t)v;
    fclose(f);
    return n;
  }
  /* Older kernels without the children file: scan /proc. */
  int *pids = NULL;
  size_t np = 0;
  if (run_descendants(me, &pids, &np) == CORE_OK) {
    for (size_t i = 0; i < np && n < max; i++)
      if (run_proc_ppid(pids[i]) == me)
        out[n++] = pids[i];
  }
  core_free(pids);
  return n;
}

size_t run_kill_all_children(void) {
  size_t killed = 0;
  /* Killing a child can orphan its own children onto us, so repeat until
   * nothing is left (bounded, in case something keeps forking). */
  for (int round = 0; round < 200; round++) {
    pid_t kids[256];
    size_t n = own_children(kids, 256);
    /* Collect zombies, but never the helper's (it reports its own
     * end through its socket). */
    for (size_t i = 0; i < n; i++)
      if (kids[i] != helper_pid)
        waitpid(kids[i], NULL, WNOHANG);
    if (n == 0)
      break;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (kids[i] != helper_pid)
        kids[k++] = kids[i];
    n = k;
    if (n == 0)
      break;
    for (size_t i = 0; i < n; i++) {
      if (kill(kids[i], SIGKILL) == 0)
        killed++;
      waitpid(kids[i], NULL, 0);
    }
  }
  return killed;
}

/* Signals the run's group, every descendant that left it, and the run's
 * orphans that the adopter (see run_adopted) took in. The descendants
 * are listed while the tree is intact, but the group is signalled first:
 * a shell whose child died first would otherwise go on to its next
 * command and exit normally, and a timed-out run would look finished. */
static void kill_tree(pid_t pid, pid_t adopter, int sig) {
  int *d = NULL;
  size_t n = 0;
  if (run_descendants(pid, &d, &n) != CORE_OK)
    n = 0;
  killpg(pid, sig);
  kill(pid, sig);
  for (size_t i = 0; i < n; i++)
    kill(d[i], sig);
  core_free(d);
  d = NULL;
  if (run_adopted(adopter, pid, &d, &n) == CORE_OK)
    for (size_t i = 0; i < n; i++)
      kill(d[i], sig);
  core_free(d);
}

/* Spawning */

/* environ plus the request's NAME=VALUE entries (which win). */
static char **make_env(const char *const *extra) {
  size_t ne = 0, nx = 0;
  while (environ[ne])
    ne++;
  if (extra)
    while (extra[nx])
      nx++;
  char **v = core_calloc(ne + nx + 1, sizeof *v);
  if (!v)
    return NULL;
  size_t k = 0;
  for (size_t i = 0; i < ne; i++) {
    int replaced = 0;
    const char *eq = strchr(environ[i], '=');
    size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
    for (size_t j = 0; j < nx; j++)
      if (strncmp(extra[j], environ[i], len) == 0 && extra[j][len] == '=')
        replaced = 1;
    if (!replaced)
      v[k++] = environ[i];
  }
  for (size_t j = 0; j < nx; j++)
    v[k++] = (char *)extra[j];
  return v;
}

/* Keeps what fits under the sink's limit. A failed write to its file is
 * remembered in s->error (the first errno) rather than ignored: a full
 * disk would otherwise leave a run recorded with its output missing. The
 * rest of the output is then drained and dropped, so that the command is
 * not blocked on a full pipe. */
/* The sink's file, created at its first byte when it has a path. Its
 * name is new in the batch folder: anything already there (a link or a
 * FIFO the command made) is not written through. */
static int sink_fd(run_sink *s) {
  if (s->fd < 0 && s->path) {
    s->fd = open(
        s->path,
        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0644);
    if (s->fd < 0)
      s->error = errno;
  }
  return s->fd;
}

static void sink_take(run_sink *s, const char *p, size_t n) {
  if (!s || s->error)
    return;
  size_t room = s->limit > s->written ? s->limit - s->written : 0;
  size_t keep = n < room ? n : room;
  if (keep < n)
    s->truncated = 1;
  if (keep == 0)
    return;
  if (s->buf)
    core_buf_append(s->buf, p, keep);
  else if (sink_fd(s) >= 0) {
    size_t off = 0;
    while (off < keep) {
      ssize_t w = write(s->fd, p + off, keep - off);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0) {
        s->error = w < 0 ? errno : ENOSPC; /* 0 bytes: no room either */
        s->written += off;
        return;
      }
      off += (size_t)w;
    }
  }
  s->written += keep;
}

static int sink_active(const run_sink *s) {
  return s && (s->fd >= 0 || s->path || s->buf);
}

void run_sink_note(run_sink *s, const char *fmt, ...) {
  if (!s || s->buf || s->error || (s->fd < 0 && !s->path) || sink_fd(s) < 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vdprintf(s->fd, fmt, ap);
  va_end(ap);
}

/* Reads what is there; returns 0 at EOF or on error. */
static int pump(int fd, run_sink *s) {
  char buf[65536];
  ssize_t r = read(fd, buf, sizeof buf);
  if (r < 0 && (errno == EINTR || errno == EAGAIN))
    return 1;
  if (r <= 0)
    return 0;
  sink_take(s, buf, (size_t)r);
  return 1;
}

/* Adds the read end fd (when still open) to the poll set of np entries;
 * *idx is its place or -1. Returns the new count. */
static int watch_output(struct pollfd *pf, int np, int fd, int *idx) {
  *idx = -1;
  if (fd >= 0) {
    pf[np] = (struct pollfd){.fd = fd, .events = POLLIN};
    *idx = np++;
  }
  return np;
}

/* Moves what poll found at idx into the sink; closes *fd at its end. */
static void read_output(const struct pollfd *pf, int idx, int *fd,
                        run_sink *s) {
  if (idx >= 0 && pf[idx].revents && !pump(*fd, s)) {
    close(*fd);
    *fd = -1;
  }
}

/* The spawn helper (run/helper.c): prereg-exec beside our executable,
 * started once, or when it is missing (or cannot be run) a fork of ours
 * running the same code. */

/* prereg-exec beside our executable, or "" (then the helper is a fork of
 * ours, and commands' maxrss_kib has its size as a floor). */
static char stub_path[4096];

static void find_stub(void) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  char *slash;
  stub_path[0] = '\0';
  if (n <= 0)
    return;
  self[n] = '\0';
  if (!(slash = strrchr(self, '/')))
    return;
  *slash = '\0';
  if (strlen(self) + sizeof RUN_STUB_NAME + 1 > sizeof stub_path)
    return;
  memcpy(stub_path, self, strlen(self));
  stub_path[strlen(self)] = '/';
  memcpy(stub_path + strlen(self) + 1, RUN_STUB_NAME, sizeof RUN_STUB_NAME);
  if (access(stub_path, X_OK) != 0)
    stub_path[0] = '\0';
}

/* The helper's process: prereg-exec with the socket on descriptor 3 and
 * nothing else of ours open, or, without it, this fork itself. */
_Noreturn static void helper_child(int sock, pid_t parent) {
  /* Dying with us from the start: prereg-exec sets it again. */
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != parent)
    _exit(0);
  if (stub_path[0] &&
      (sock == 3 ? fcntl(3, F_SETFD, 0) == 0 : dup2(sock, 3) == 3)) {
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)parent);
    char name[] = RUN_STUB_NAME, serve[] = RUN_STUB_SERVE;
    char *argv[] = {name, serve, pid, NULL};
    closefrom(4);
    execve(stub_path, argv, environ);
    sock = 3; /* it could not be run: serve from here */
  }
  run_helper_serve(sock, parent);
}

/* Starts the helper once; returns 0 when it is not available (then we
 * spawn ourselves). */
static int helper_start(void) {
  static int tried;
  if (helper_sock >= 0)
    return 1;
  if (tried)
    return 0;
  tried = 1;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return 0;
  find_stub();
  int big = HELPER_MSG_MAX + 4096;
  setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  pid_t parent = getpid();
  pid_t p = fork();
  if (p < 0) {
    close(sv[0]);
    close(sv[1]);
    return 0;
  }
  if (p == 0) {
    close(sv[0]);
    helper_child(sv[1], parent);
  }
  close(sv[1]);
  helper_sock = sv[0];
  helper_pid = p;
  return 1;
}

void run_helper_start(void) {
  helper_start();
}

static void helper_stop(void) {
  if (helper_sock >= 0) {
    close(helper_sock);
    waitpid(helper_pid, NULL, 0);
  }
  helper_sock = -1;
  helper_pid = -1;
}

void run_helper_stop(void) {
  helper_stop();
}

/* The CPUs every command starts on while a pin is on (run_exec_pin). */
static cpu_set_t pin_set;
static int pin_on;

void run_exec_pin(const cpu_set_t *cpus) {
  pin_on = cpus != NULL;
  if (cpus)
    pin_set = *cpus;
}

/* Sends one spawn request. Returns 0 or an errno; -1 when we ran out of
 * memory building it (an error of ours, not of the command). */
static int helper_send(char **argv, char **envp, const char *cwd, int out_w,
                       int err_w, const char *cg) {
  core_buf m;
  core_buf_init(&m);
  size_t na = 0, ne = 0;
  while (argv[na])
    na++;
  while (envp[ne])
    ne++;
  char flags[6] = {out_w >= 0 ? '1' : '0', err_w >= 0 ? '1' : '0',
                   cwd ? '1' : '0',        cg ? '1' : '0',
                   pin_on ? '1' : '0',     0};
  core_buf_append(&m, flags, 6);
  core_buf_printf(&m, "%zu", na);
  core_buf_append(&m, "", 1);
  core_buf_printf(&m, "%zu", ne);
  core_buf_append(&m, "", 1);
  if (cwd)
    core_buf_append(&m, cwd, strlen(cwd) + 1);
  if (cg)
    core_buf_append(&m, cg, strlen(cg) + 1);
  for (int c = 0; pin_on && c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &pin_set))
      core_buf_printf(&m, "%d,", c);
  if (pin_on)
    core_buf_append(&m, "", 1);
  for (size_t i = 0; i < na; i++)
    core_buf_append(&m, argv[i], strlen(argv[i]) + 1);
  for (size_t i = 0; i < ne; i++)
    core_buf_append(&m, envp[i], strlen(envp[i]) + 1);
  if (m.oom || m.len >= HELPER_MSG_MAX) {
    int e = m.oom ? -1 : E2BIG;
    core_buf_free(&m);
    return e;
  }
  int fds[2], nf = 0;
  if (out_w >= 0)
    fds[nf++] = out_w;
  if (err_w >= 0)
    fds[nf++] = err_w;
  char cbuf[CMSG_SPACE(2 * sizeof(int))];
  memset(cbuf, 0, sizeof cbuf);
  struct iovec io = {.iov_base = m.data, .iov_len = m.len};
  struct msghdr mh = {.msg_iov = &io, .msg_iovlen = 1};
  if (nf > 0) {
    mh.msg_control = cbuf;
    mh.msg_controllen = CMSG_SPACE(nf * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(nf * sizeof(int));
    memcpy(CMSG_DATA(c), fds, nf * sizeof(int));
  }
  ssize_t w;
  while ((w = sendmsg(helper_sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
    ;
  int e = w == (ssize_t)m.len ? 0 : (errno ? errno : EIO);
  core_buf_free(&m);
  return e;
}

static int helper_recv(run_helper_reply *r) {
  ssize_t n;
  while ((n = recv(helper_sock, r, sizeof *r, 0)) < 0 && errno == EINTR)
    ;
  return n == (ssize_t)sizeof *r ? 0 : -1;
}

/* Running one command */

static double now_s(void) {
  return core_monotonic();
}

/* One command from its spawn to its end. */
typedef struct exec_run {
  const run_req *req;
  run_res *res;
  char **argv, **envp;
  int outp[2], errp[2]; /* the output pipes, -1 when closed */
  int pidfd;            /* without the helper, when the kernel has them */
  int via_helper;       /* spawned and reaped by the helper */
  int waitfd;           /* readable when the command was reaped, or -1 */
  pid_t pid, adopter;   /* adopter: the subreaper its orphans go to */
  double t0, t1;        /* spawn and reap */
  double grace, deadline, sample_at, kill_at; /* < 0: not due */
  int status, reaped;
  struct rusage ru;
} exec_run;

/* The argv, environment and pipes. CORE_OK with x->argv NULL when the
 * command has no word (res says so). */
static core_status exec_prepare(exec_run *x, core_err *err) {
  const run_req *req = x->req;
  if (!(x->argv = run_argv(req->cmd))) {
    if (req->cmd[strspn(req->cmd, " ")]) /* a word: out of memory */
      return core_fail(err, CORE_ENOMEM, "out of memory starting '%s'",
                       req->cmd);
    x->res->exited = 1;
    x->res->exit_code = 127;
    snprintf(x->res->why, sizeof x->res->why, "empty command '%s'", req->cmd);
    return CORE_OK;
  }
  if (!(x->envp = make_env(req->env)))
    return core_fail(err, CORE_ENOMEM, "out of memory starting '%s'",
                     req->cmd);
  if ((sink_active(req->out) && pipe2(x->outp, O_CLOEXEC) != 0) ||
      (sink_active(req->err) && pipe2(x->errp, O_CLOEXEC) != 0))
    return core_fail(err, CORE_ERUN, "cannot make a pipe: %s",
                     strerror(errno));
  return CORE_OK;
}

/* Spawns through the helper, or ourselves when there is none (or it
 * died). *failed: 1 when the command could not be started (res says
 * why); an error only when we ran out of memory. */
static core_status exec_spawn(exec_run *x, int *failed, core_err *err) {
  const run_req *req = x->req;
  int e = 0;
  x->via_helper = helper_start();
  if (x->via_helper) {
    run_helper_reply r;
    e = helper_send(x->argv, x->envp, req->cwd, x->outp[1], x->errp[1],
                    req->cgroup_dir);
    if (e < 0)
      return core_fail(err, CORE_ENOMEM, "out of memory starting '%s'",
                       req->cmd);
    if (e == 0 && helper_recv(&r) != 0) {
      /* The helper died: from now on we spawn ourselves. */
      helper_stop();
      x->via_helper = 0;
    } else if (e == 0) {
      e = r.err;
      x->pid = r.pid;
      x->t0 = r.t;
    }
  }
  if (!x->via_helper)
    e = run_helper_spawn(x->argv, x->envp, req->cwd, x->outp[1], x->errp[1],
                         req->cgroup_dir, pin_on ? &pin_set : NULL, &x->pid,
                         &x->t0);
  if (e != 0) {
    run_res *res = x->res;
    res->exited = 1;
    res->exit_code = 127;
    if (req->cwd && e == ENOENT && !core_is_dir(req->cwd))
      snprintf(res->why, sizeof res->why, "cannot enter working folder %s",
               req->cwd);
    else
      snprintf(res->why, sizeof res->why, "cannot execute '%s': %s",
               x->argv[0], strerror(e));
  }
  *failed = e != 0;
  return CORE_OK;
}

/* After the spawn: our write ends go, and the moments that are due. */
static void exec_started(exec_run *x) {
  const run_req *req = x->req;
  x->res->spawned = 1;
  if (x->outp[1] >= 0)
    close(x->outp[1]);
  if (x->errp[1] >= 0)
    close(x->errp[1]);
  x->outp[1] = x->errp[1] = -1;
#ifdef SYS_pidfd_open
  if (!x->via_helper)
    x->pidfd = (int)syscall(SYS_pidfd_open, x->pid, 0);
#endif
  /* With the helper, its socket says when the command was reaped. */
  x->waitfd = x->via_helper ? helper_sock : x->pidfd;
  /* Whoever spawned the command is a subreaper running one command at a
   * time: its other children are this run's orphans. */
  x->adopter = x->via_helper ? helper_pid : getpid();
  x->deadline = req->timeout_s > 0 ? x->t0 + req->timeout_s : -1;
  x->sample_at =
      req->pss && req->pss->after_s >= 0 ? x->t0 + req->pss->after_s : -1;
  x->kill_at = -1;
  x->t1 = x->t0;
}

/* The next moment something is due (the deadline, the PSS sample, the
 * SIGKILL after the grace period), -1 for none. */
static double next_moment(const exec_run *x) {
  double next = -1, cands[3] = {x->deadline, x->sample_at, x->kill_at};
  for (int i = 0; i < 3; i++)
    if (cands[i] >= 0 && (next < 0 || cands[i] < next))
      next = cands[i];
  return next;
}

/* Whether a moment is due at t and the reap may already be told: a
 * reply (or the pidfd's exit) waiting to be read. It is read first, so
 * that a stall of ours past the moment neither times out nor samples a
 * command that had ended; its end is judged against the deadline as
 * read (exec_finish). */
static int reap_before_due(const exec_run *x, double t) {
  double next = next_moment(x);
  struct pollfd p = {.fd = x->waitfd, .events = POLLIN};
  return next >= 0 && t >= next && x->waitfd >= 0 && poll(&p, 1, 0) > 0;
}

/* Does what is due now (the timeout's SIGTERM, the PSS sample, the
 * SIGKILL after the grace period); returns the poll timeout until the
 * next moment, -1 for none. */
static int exec_due(exec_run *x) {
  run_res *res = x->res;
  double t = now_s();
  if (reap_before_due(x, t))
    return 0;
  if (x->deadline >= 0 && t >= x->deadline && !res->timed_out &&
      !res->stopped) {
    res->timed_out = 1;
    kill_tree(x->pid, x->adopter, SIGTERM);
    x->kill_at = t + x->grace;
    x->deadline = -1;
  }
  if (x->sample_at >= 0 && t >= x->sample_at) {
    core_err perr = {0};
    if (run_sample_pss(x->req->pss, x->pid, x->adopter, &res->pss_kib,
                       &res->pss_counted, &res->pss_unreadable,
                       &perr) == CORE_OK)
      res->pss_sampled = 1;
    else {
      res->pss_failed = 1;
      snprintf(res->why, sizeof res->why, "%.500s", perr.msg);
    }
    x->sample_at = -1;
    if (x->req->pss->stop_after && !res->timed_out) {
      res->stopped = 1;
      kill_tree(x->pid, x->adopter, SIGTERM);
      x->kill_at = now_s() + x->grace;
      x->deadline = -1;
    }
  }
  if (x->kill_at >= 0 && t >= x->kill_at) {
    kill_tree(x->pid, x->adopter, SIGKILL);
    x->kill_at = -1;
  }
  double next = next_moment(x);
  int timeout_ms = -1;
  if (next >= 0) {
    double d = (next - now_s()) * 1000.0;
    timeout_ms = d <= 0 ? 0 : (int)d + 1;
  }
  if (x->waitfd < 0 && (timeout_ms < 0 || timeout_ms > 2))
    timeout_ms = 2; /* no pidfd: poll for the exit */
  return timeout_ms;
}

/* Whether the command was reaped, told by the helper or seen by us. */
static core_status exec_reap(exec_run *x, int ready, core_err *err) {
  if (x->via_helper) {
    run_helper_reply d;
    if (!ready)
      return CORE_OK;
    if (helper_recv(&d) != 0 || d.kind != 2) {
      kill_tree(x->pid, x->adopter, SIGKILL);
      helper_stop();
      return core_fail(err, CORE_ERUN, "the spawn helper died");
    }
    x->status = d.status;
    x->ru = d.ru;
    x->t1 = d.t;
    x->reaped = 1;
    return CORE_OK;
  }
  if (x->pidfd >= 0 && !ready)
    return CORE_OK;
  pid_t w = wait4(x->pid, &x->status, x->pidfd >= 0 ? 0 : WNOHANG, &x->ru);
  if (w == x->pid) {
    x->t1 = now_s();
    x->reaped = 1;
  } else if (w < 0 && errno != EINTR) {
    return core_fail(err, CORE_ERUN, "wait4: %s", strerror(errno));
  }
  return CORE_OK;
}

/* One wait: output moved to the sinks, a cancellation, the reap. */
static core_status exec_wait(exec_run *x, core_err *err) {
  int timeout_ms = exec_due(x);
  struct pollfd pf[4];
  int np = 0, i_pid = -1, i_out, i_err, i_can = -1;
  if (x->waitfd >= 0) {
    pf[np] = (struct pollfd){.fd = x->waitfd, .events = POLLIN};
    i_pid = np++;
  }
  np = watch_output(pf, np, x->outp[0], &i_out);
  np = watch_output(pf, np, x->errp[0], &i_err);
  if (run_cancel_fd >= 0 && !x->res->interrupted && !x->req->uncancellable) {
    pf[np] = (struct pollfd){.fd = run_cancel_fd, .events = POLLIN};
    i_can = np++;
  }
  int pr = poll(pf, (nfds_t)np, timeout_ms);
  if (pr < 0 && errno != EINTR) {
    kill_tree(x->pid, x->adopter, SIGKILL);
    waitpid(x->pid, NULL, 0);
    return core_fail(err, CORE_ERUN, "poll: %s", strerror(errno));
  }
  if (pr > 0) {
    read_output(pf, i_out, &x->outp[0], x->req->out);
    read_output(pf, i_err, &x->errp[0], x->req->err);
    if (i_can >= 0 && pf[i_can].revents) {
      x->res->interrupted = 1;
      kill_tree(x->pid, x->adopter, SIGKILL);
    }
  }
  return exec_reap(x, pr > 0 && i_pid >= 0 && pf[i_pid].revents, err);
}

/* The figures of the reaped command; then nothing of it may outlive it
 * (its group, and any descendant that left the group, adopted by us),
 * and what the dead processes left in the pipes is drained: a writer we
 * could not kill must not hang us, so that wait is bounded. */
static void exec_finish(exec_run *x) {
  run_res *res = x->res;
  res->wall_s = x->t1 - x->t0;
  /* Ended on its own past its deadline, before we acted on it. */
  if (x->deadline >= 0 && x->t1 >= x->deadline && !res->stopped)
    res->timed_out = 1;
  res->user_s =
      (double)x->ru.ru_utime.tv_sec + (double)x->ru.ru_utime.tv_usec / 1e6;
  res->sys_s =
      (double)x->ru.ru_stime.tv_sec + (double)x->ru.ru_stime.tv_usec / 1e6;
  res->maxrss_kib = x->ru.ru_maxrss; /* KiB on Linux */
  res->ctxsw_invol = x->ru.ru_nivcsw;
  if (WIFEXITED(x->status)) {
    res->exited = 1;
    res->exit_code = WEXITSTATUS(x->status);
  } else if (WIFSIGNALED(x->status)) {
    res->signo = WTERMSIG(x->status);
  }
  if (x->sample_at >= 0 && x->req->pss)
    /* Ended before the sample was due: say so rather than sample an empty
     * tree. */
    snprintf(res->why, sizeof res->why,
             "ended after %.3f s, before the PSS sample at %g s", res->wall_s,
             x->req->pss->after_s);
  /* The helper did this before it replied (its group, and every orphan
   * it adopted as the subreaper above the command); ourselves, we are
   * the command's parent and subreaper. */
  if (!x->via_helper) {
    killpg(x->pid, SIGKILL);
    run_kill_all_children();
  }
  double drain_end = now_s() + 2.0;
  while ((x->outp[0] >= 0 || x->errp[0] >= 0) && now_s() < drain_end) {
    struct pollfd pf[2];
    int i_out, i_err;
    int np = watch_output(pf, 0, x->outp[0], &i_out);
    np = watch_output(pf, np, x->errp[0], &i_err);
    if (poll(pf, (nfds_t)np, 100) <= 0) {
      run_kill_all_children();
      continue;
    }
    read_output(pf, i_out, &x->outp[0], x->req->out);
    read_output(pf, i_err, &x->errp[0], x->req->err);
  }
}

core_status run_exec(const run_req *req, run_res *res, core_err *err) {
  exec_run x = {.req = req,
                .res = res,
                .outp = {-1, -1},
                .errp = {-1, -1},
                .pidfd = -1,
                .waitfd = -1,
                .pid = -1,
                .grace = req->grace_s > 0 ? req->grace_s : 2.0};
  memset(res, 0, sizeof *res);
  res->maxrss_kib = -1;
  run_become_subreaper();
  core_status st = exec_prepare(&x, err);
  int failed = 1;
  if (st == CORE_OK && x.argv)
    st = exec_spawn(&x, &failed, err);
  if (st == CORE_OK && !failed) {
    exec_started(&x);
    while (st == CORE_OK && !x.reaped)
      st = exec_wait(&x, err);
    if (st == CORE_OK)
      exec_finish(&x);
  }
  for (int i = 0; i < 2; i++) {
    if (x.outp[i] >= 0)
      close(x.outp[i]);
    if (x.errp[i] >= 0)
      close(x.errp[i]);
  }
  if (x.pidfd >= 0)
    close(x.pidfd);
  run_argv_free(x.argv);
  core_free(x.envp);
  return st;
}
