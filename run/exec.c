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
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run/run.h"
#include "run/run_internal.h"
#include "run/stub_internal.h"

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

/* Resets our own peak RSS to the current one, so that a child execing in
 * our memory map (vfork) cannot inherit an old peak of ours as its
 * ru_maxrss on kernels that record the old map's high-water mark at
 * exec. Failing is harmless (the value is then only an upper bound). */
static void reset_hiwater(void) {
  /* Kept open, since this comes before every spawn; per process, since
   * the helper is a fork of ours and must reset its own map. */
  static int fd = -1;
  static pid_t owner;
  pid_t me = getpid();
  if (fd >= 0 && owner != me) {
    close(fd);
    fd = -1;
  }
  if (fd < 0) {
    fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    owner = me;
  }
  if (fd >= 0 && write(fd, "5", 1) < 0) {
    /* not allowed here: nothing to do */
  }
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

/* The signals a command starts with at their default action (we ignore
 * or catch some of them), and with none blocked. */
static const int reset_sigs[] = {SIGPIPE, SIGINT,  SIGTERM,
                                 SIGHUP,  SIGQUIT, SIGCHLD};

static int spawn_posix(char **argv, char **envp, const char *cwd, int out_w,
                       int err_w, int rep_w, pid_t *pid, double *t0) {
  sigset_t none, def;
  sigemptyset(&none);
  sigemptyset(&def);
  for (size_t i = 0; i < sizeof reset_sigs / sizeof reset_sigs[0]; i++)
    sigaddset(&def, reset_sigs[i]);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&at);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (out_w >= 0)
    posix_spawn_file_actions_adddup2(&fa, out_w, 1);
  else
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (err_w >= 0)
    posix_spawn_file_actions_adddup2(&fa, err_w, 2);
  else
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  /* Descriptors without O_CLOEXEC (a batch file, a lock) must not leak
   * into the command; prereg-exec reports on 3. */
  if (rep_w >= 0)
    posix_spawn_file_actions_adddup2(&fa, rep_w, 3);
  posix_spawn_file_actions_addclosefrom_np(&fa, rep_w >= 0 ? 4 : 3);
  if (cwd)
    posix_spawn_file_actions_addchdir_np(&fa, cwd);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &def);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
                                    POSIX_SPAWN_SETSIGMASK |
                                    POSIX_SPAWN_SETSIGDEF);
  *t0 = core_monotonic();
  int e = posix_spawnp(pid, argv[0], &fa, &at, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  return e;
}

/* The child of spawn_cgroup: into the cgroup, then exec; a failure's
 * errno goes back through ep. */
_Noreturn static void cgroup_child(char **argv, char **envp, const char *cwd,
                                   int out_w, int err_w, const char *cgdir,
                                   int ep) {
  int e = 0;
  sigset_t none;
  sigemptyset(&none);
  setpgid(0, 0);
  char path[4096];
  snprintf(path, sizeof path, "%s/cgroup.procs", cgdir);
  int fd = open(path, O_WRONLY);
  if (fd < 0 || write(fd, "0", 1) != 1)
    e = errno ? errno : EIO;
  int nul = open("/dev/null", O_RDWR);
  if (!e && nul >= 0) {
    dup2(nul, 0);
    dup2(out_w >= 0 ? out_w : nul, 1);
    dup2(err_w >= 0 ? err_w : nul, 2);
  }
  for (size_t i = 0; i < sizeof reset_sigs / sizeof reset_sigs[0]; i++)
    signal(reset_sigs[i], SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (!e && cwd && chdir(cwd) != 0)
    e = errno;
  if (!e) {
    execvpe(argv[0], argv, envp);
    e = errno;
  }
  if (write(ep, &e, sizeof e) < 0) {
    /* the parent then sees EOF and takes it for success */
  }
  _exit(127);
}

/* With a cgroup the child moves itself into it before it execs, which
 * needs fork (posix_spawn has no hook for it). */
static int spawn_cgroup(char **argv, char **envp, const char *cwd, int out_w,
                        int err_w, const char *cgdir, pid_t *pid, double *t0) {
  int ep[2];
  if (pipe2(ep, O_CLOEXEC) != 0)
    return errno;
  *t0 = core_monotonic();
  pid_t p = fork();
  if (p < 0) {
    int e = errno;
    close(ep[0]);
    close(ep[1]);
    return e;
  }
  if (p == 0)
    cgroup_child(argv, envp, cwd, out_w, err_w, cgdir, ep[1]);
  close(ep[1]);
  int e = 0;
  ssize_t r = read(ep[0], &e, sizeof e);
  close(ep[0]);
  if (r == (ssize_t)sizeof e) {
    waitpid(p, NULL, 0);
    return e;
  }
  *pid = p;
  return 0;
}

/* Starts argv in a new process group with stdin from /dev/null and
 * stdout/stderr on out_w/err_w (or /dev/null when < 0), in cgdir when
 * not NULL. Returns 0, or the errno of the failure. OUT: *pid, *t0 (the
 * clock just before the spawn). */
static int spawn_local(char **argv, char **envp, const char *cwd, int out_w,
                       int err_w, const char *cgdir, pid_t *pid, double *t0) {
  reset_hiwater();
  if (!cgdir)
    return spawn_posix(argv, envp, cwd, out_w, err_w, -1, pid, t0);
  return spawn_cgroup(argv, envp, cwd, out_w, err_w, cgdir, pid, t0);
}

/* The spawn helper */

/* Why a helper: a child's ru_maxrss starts from the high-water mark of the
 * memory map it execs from. After fork that is a copy of ours (everything
 * we hold); after vfork/posix_spawn it is our own map, including our old
 * peak. Both were measured on Linux 6.18: /bin/true reported 200 MiB
 * while we held 200 MiB. So every command is spawned by a helper forked
 * at the first run, while we are still small; its map stays small however
 * much we allocate later, and /bin/true reports ~1 MiB. The helper also
 * reaps the command and takes both clock readings, so wall_s is spawn to
 * reap exactly. One command at a time, over a SOCK_SEQPACKET pair; the
 * pipe ends travel as SCM_RIGHTS. */

typedef struct helper_reply {
  int kind; /* 1: spawned (pid, err, t0); 2: reaped (status, ru, t1) */
  int err;
  pid_t pid;
  int status;
  double t;
  struct rusage ru;
} helper_reply;

/* The process group of the command the helper is running, so that the
 * helper can take it down when prereg itself dies (kill -9): the kernel
 * then sends the helper SIGUSR1 (PR_SET_PDEATHSIG). */
static volatile sig_atomic_t helper_running_pgid;

/* The helper is a child subreaper: a descendant of the command whose
 * parent exits (a daemon that double-forked, or left the group with
 * setsid) becomes the helper's child instead of init's. Since the helper
 * runs one command at a time, every child it has besides that command is
 * an orphan of the run. */
static char helper_children_path[64];

/* SIGKILLs every child listed in the children file; returns how many
 * could be signalled (a zombie can: it is then reaped), or -1 when the
 * file cannot be read (a kernel without CONFIG_PROC_CHILDREN). Reads in
 * chunks: a number may straddle two. Async-signal-safe. */
static int kill_listed_children(void) {
  int fd = open(helper_children_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  char buf[4096];
  int found = 0, in_number = 0;
  long v = 0;
  ssize_t r;
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
        /* One we may not signal (EPERM: a set-uid program run by a
         * user) would keep us retrying for nothing. */
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

/* Without the children file: every descendant found by a scan of /proc
 * (which allocates and uses stdio, so not in a signal handler). */
static int kill_scanned_descendants(void) {
  int *d = NULL;
  size_t n = 0;
  if (run_descendants((int)getpid(), &d, &n) != CORE_OK)
    return 0;
  int killed = 0;
  for (size_t i = 0; i < n; i++)
    killed += kill(d[i], SIGKILL) == 0;
  core_free(d);
  return killed;
}

/* Kills (SIGKILL) and reaps every child of the helper, again and again
 * while killing one orphans more onto it; bounded (about 2 s) in case
 * something forks as fast as we kill or cannot die. in_handler: called
 * from the SIGUSR1 handler, so only async-signal-safe calls; there,
 * without the children file, the group kill has to do. */
static void helper_kill_children(int in_handler) {
  for (int round = 0; round < 2000; round++) {
    while (waitpid(-1, NULL, WNOHANG) > 0)
      ;
    int found = kill_listed_children();
    if (found < 0) {
      if (in_handler)
        return;
      found = kill_scanned_descendants();
    }
    if (found == 0)
      return;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
}

static void helper_parent_died(int sig) {
  (void)sig;
  if (helper_running_pgid > 0)
    kill(-(pid_t)helper_running_pgid, SIGKILL);
  helper_kill_children(1);
  _exit(1);
}

/* One spawn request as the helper receives it. Layout of the message:
 * "flags\0" (4 digits: has out fd, has err fd, has cwd, has cgroup), the
 * counts of argv and env, then cwd, cgroup, argv and env, each ended by
 * NUL; the pipe ends come as SCM_RIGHTS. */
typedef struct helper_request {
  char **argv, **envp; /* point into the message (free the arrays only) */
  char *cwd, *cg;
  int out_w, err_w;
} helper_request;

/* Receives and parses one request; 0 when the socket is closed (we are
 * done). */
static int helper_read(int sock, char *buf, helper_request *q) {
  char cbuf[CMSG_SPACE(2 * sizeof(int))];
  struct iovec io = {.iov_base = buf, .iov_len = HELPER_MSG_MAX - 1};
  struct msghdr mh = {.msg_iov = &io,
                      .msg_iovlen = 1,
                      .msg_control = cbuf,
                      .msg_controllen = sizeof cbuf};
  ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  if (n <= 0)
    return 0;
  buf[n] = 0;
  int fds[2] = {-1, -1};
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy(fds, CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0));
  char *p = buf, *end = buf + n, *flags = p;
  p += strlen(p) + 1;
  long nargv = strtol(p, NULL, 10);
  p += strlen(p) + 1;
  long nenv = strtol(p, NULL, 10);
  p += strlen(p) + 1;
  memset(q, 0, sizeof *q);
  if (flags[2] == '1') {
    q->cwd = p;
    p += strlen(p) + 1;
  }
  if (flags[3] == '1') {
    q->cg = p;
    p += strlen(p) + 1;
  }
  q->argv = calloc((size_t)nargv + 1, sizeof *q->argv);
  q->envp = calloc((size_t)nenv + 1, sizeof *q->envp);
  for (long i = 0; q->argv && i < nargv && p < end; i++, p += strlen(p) + 1)
    q->argv[i] = p;
  for (long i = 0; q->envp && i < nenv && p < end; i++, p += strlen(p) + 1)
    q->envp[i] = p;
  int k = 0;
  q->out_w = flags[0] == '1' ? fds[k++] : -1;
  q->err_w = flags[1] == '1' ? fds[k++] : -1;
  return 1;
}

static void close_ends(helper_request *q) {
  if (q->out_w >= 0)
    close(q->out_w);
  if (q->err_w >= 0)
    close(q->err_w);
  q->out_w = q->err_w = -1;
}

/* Waits for the command, then takes down everything of the run. */
static void helper_reap(pid_t pid, helper_reply *d) {
  helper_running_pgid = pid; /* the command leads its own group */
  /* Orphans the run leaves to us while it goes on are reaped as they
   * end, so that no zombie of ours stands in its PSS sample. */
  for (;;) {
    pid_t w = wait4(-1, &d->status, 0, &d->ru);
    if (w == pid || (w < 0 && errno != EINTR))
      break;
  }
  d->t = core_monotonic();
  /* Nothing of the run outlives it: its group, and the orphans we
   * adopted. SIGUSR1 waits, so that its handler does not do the same
   * at the same time. */
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, &old);
  kill(-pid, SIGKILL);
  helper_running_pgid = 0;
  helper_kill_children(0);
  sigprocmask(SIG_SETMASK, &old, NULL);
}

/* prereg-exec beside our executable, or "" (then commands are spawned
 * directly, and their maxrss_kib has the helper's size as a floor). */
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

/* Reads one record of prereg-exec's; 0 when none came. */
static int stub_record(int fd, int kind, run_stub_record *rec) {
  ssize_t n;
  do
    n = read(fd, rec, sizeof *rec);
  while (n < 0 && errno == EINTR);
  return n == (ssize_t)sizeof *rec && rec->kind == kind;
}

/* Spawns q's command through prereg-exec. Returns 0 with *rep the
 * descriptor of its records (the first read: the command runs, r->t its
 * start), or an errno (the command did not start). */
static int spawn_stubbed(helper_request *q, helper_reply *r, int *rep) {
  int fds[2];
  size_t n = 0;
  run_stub_record rec;
  *rep = -1;
  while (q->argv[n])
    n++;
  char **argv = calloc(n + 2, sizeof *argv);
  if (!argv || pipe2(fds, O_CLOEXEC) != 0) {
    free(argv);
    return argv ? errno : ENOMEM;
  }
  argv[0] = stub_path;
  memcpy(argv + 1, q->argv, (n + 1) * sizeof *argv);
  reset_hiwater();
  int e = spawn_posix(argv, q->envp, q->cwd, q->out_w, q->err_w, fds[1],
                      &r->pid, &r->t);
  free(argv);
  close(fds[1]);
  if (!e) {
    if (!stub_record(fds[0], 1, &rec))
      e = ECHILD; /* it died before it could say */
    else if (rec.err)
      e = rec.err; /* as posix_spawnp would have said it */
    else
      r->t = rec.t;
    if (e)
      waitpid(r->pid, NULL, 0);
  }
  if (e)
    close(fds[0]);
  else
    *rep = fds[0];
  return e;
}

/* after - before, of struct timeval. */
static struct timeval tv_minus(struct timeval after, struct timeval before) {
  struct timeval d;
  timersub(&after, &before, &d);
  return d;
}

/* The CPU times of every process of a run spawned without prereg-exec,
 * reaped by now: what our RUSAGE_CHILDREN grew by since *before (the
 * run's orphans are ours and were reaped in helper_reap). prereg-exec
 * tells the same of the processes below it, its own CPU excluded. */
static void helper_run_cpu(const struct rusage *before, helper_reply *d) {
  struct rusage after;
  if (getrusage(RUSAGE_CHILDREN, &after) != 0)
    return;
  d->ru.ru_utime = tv_minus(after.ru_utime, before->ru_utime);
  d->ru.ru_stime = tv_minus(after.ru_stime, before->ru_stime);
}

static void helper_main(int sock) {
  char *buf = malloc(HELPER_MSG_MAX);
  if (!buf)
    _exit(1);
  helper_request q;
  while (helper_read(sock, buf, &q)) {
    helper_reply r = {.kind = 1};
    int rep = -1;
    struct rusage before;
    /* prereg-exec counts the run's CPU itself: no system call here. */
    int count = !(stub_path[0] && !q.cg);
    if (count)
      getrusage(RUSAGE_CHILDREN, &before);
    if (!q.argv || !q.envp)
      r.err = ENOMEM;
    else if (stub_path[0] && !q.cg)
      r.err = spawn_stubbed(&q, &r, &rep);
    else
      r.err = spawn_local(q.argv, q.envp, q.cwd, q.out_w, q.err_w, q.cg,
                          &r.pid, &r.t);
    free(q.argv);
    free(q.envp);
    if (r.err)
      close_ends(&q);
    if (send(sock, &r, sizeof r, 0) != (ssize_t)sizeof r)
      _exit(1);
    if (r.err)
      continue;
    helper_reply d = {.kind = 2, .pid = r.pid};
    helper_reap(r.pid, &d);
    if (count)
      helper_run_cpu(&before, &d);
    if (rep >= 0) {
      /* What wait4 said of the command alone, when prereg-exec lived to
       * say it (a group killed at a timeout takes it down too). */
      run_stub_record rec;
      if (stub_record(rep, 2, &rec)) {
        d.status = rec.status;
        d.ru = rec.ru;
        d.t = rec.t;
      }
      close(rep);
    }
    /* Our copies of the pipe ends go only now: their end of file and the
     * reply then reach prereg together, waking it once rather than
     * twice. */
    int sent = send(sock, &d, sizeof d, 0) == (ssize_t)sizeof d;
    close_ends(&q);
    if (!sent)
      _exit(1);
  }
  _exit(0);
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
    /* It must not outlive us, nor take our Ctrl-C: we decide what happens
     * to the run. */
    signal(SIGUSR1, helper_parent_died);
    prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0);
    if (getppid() != parent)
      _exit(0);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    snprintf(helper_children_path, sizeof helper_children_path,
             "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    reset_hiwater();
    helper_main(sv[1]);
    _exit(0);
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
  char flags[5] = {out_w >= 0 ? '1' : '0', err_w >= 0 ? '1' : '0',
                   cwd ? '1' : '0', cg ? '1' : '0', 0};
  core_buf_append(&m, flags, 5);
  core_buf_printf(&m, "%zu", na);
  core_buf_append(&m, "", 1);
  core_buf_printf(&m, "%zu", ne);
  core_buf_append(&m, "", 1);
  if (cwd)
    core_buf_append(&m, cwd, strlen(cwd) + 1);
  if (cg)
    core_buf_append(&m, cg, strlen(cg) + 1);
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

static int helper_recv(helper_reply *r) {
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
    helper_reply r;
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
    e = spawn_local(x->argv, x->envp, req->cwd, x->outp[1], x->errp[1],
                    req->cgroup_dir, &x->pid, &x->t0);
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

/* Does what is due now (the timeout's SIGTERM, the PSS sample, the
 * SIGKILL after the grace period); returns the poll timeout until the
 * next moment, -1 for none. */
static int exec_due(exec_run *x) {
  run_res *res = x->res;
  double t = now_s();
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
  double next = -1, cands[3] = {x->deadline, x->sample_at, x->kill_at};
  for (int i = 0; i < 3; i++)
    if (cands[i] >= 0 && (next < 0 || cands[i] < next))
      next = cands[i];
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
    helper_reply d;
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
  killpg(x->pid, SIGKILL);
  run_kill_all_children();
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
