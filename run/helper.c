/* helper.c: the spawn helper: starts each command, reaps it, and takes
 * down whatever of the run is left.
 * SPDX-License-Identifier: MIT
 *
 * Why a helper: a child's ru_maxrss starts from the high-water mark of
 * the memory map it execs from. After fork that is a copy of ours
 * (everything prereg holds); after vfork it is the parent's own map,
 * including its old peak. Both were measured on Linux 6.18: /bin/true
 * reported 200 MiB while prereg held 200 MiB. So every command is
 * started by a helper whose map stays small: prereg-exec, a static
 * program of a few hundred KiB that serves the whole batch (or, without
 * it, a fork of prereg made at the first run, about 3 MiB resident). The
 * helper vforks and execs each command itself, so that one process and
 * one execve stand between a request and the command; it takes the clock
 * in the vfork child just before execve and just after wait4 returns, so
 * that neither its own work nor prereg's bookkeeping is inside wall_s,
 * its maxrss_kib is what wait4 said of the command, and its CPU times
 * are those of every process of the run (run_cpu). One command at a time, over
 * a SOCK_SEQPACKET pair; the pipe ends travel as SCM_RIGHTS.
 *
 * The helper itself stays on one CPU of the run's set (its home), and
 * each command gets the run's whole set back, or the arm's CPUs, in the
 * child before its clock starts. A helper free to move follows prereg
 * from CPU to CPU at each request, and the command then starts where
 * prereg has just done its bookkeeping: on 2 CPUs that made /bin/true's
 * median 1.12x hyperfine's, against 0.92x with the helper at home.
 *
 * This file is built into the engine and into prereg-exec: it uses none
 * of prereg's libraries.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/limits.h"
#include "run/helper_internal.h"

static double helper_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Resets our own peak RSS to the current one, so that a child execing in
 * our memory map (vfork) cannot inherit an old peak of ours as its
 * ru_maxrss on kernels that record the old map's high-water mark at
 * exec. Failing is harmless (the value is then only an upper bound). */
void run_helper_reset_hiwater(void) {
  /* Kept open, since this comes before every spawn; per process, since
   * a helper forked from prereg must reset its own map. */
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

/* Spawning */

/* The signals a command starts with at their default action (we ignore
 * or catch some of them), and with none blocked. */
static const int reset_sigs[] = {SIGPIPE, SIGINT,  SIGTERM, SIGHUP,
                                 SIGQUIT, SIGCHLD, SIGUSR1};

/* What the vfork child shares with us until it execs: the clock just
 * before its execve, and the errno of a command that could not start. */
static volatile double exec_at;
static volatile int exec_err;

typedef struct spawn_args {
  char **argv, **envp;
  const char *cwd, *procs; /* procs: the cgroup's cgroup.procs or NULL */
  const cpu_set_t *cpus;   /* NULL: the CPUs we may use */
  int out_w, err_w, null_fd;
} spawn_args;

/* execve of file, searched in envp's PATH as execvpe does (no shell for
 * a file without #!): a file in a folder that lacks it or may not be run
 * is looked for further, EACCES is said when nothing else ran. Only in
 * the vfork child: no allocation, the clock read just before each
 * execve, so that the last one is the command's start. Returns the
 * errno. */
static int exec_path(const char *file, char **argv, char **envp) {
  const char *path = NULL, *p;
  char buf[4096];
  int seen_eacces = 0;
  size_t fl = strlen(file);
  for (char **e = envp; *e && !path; e++)
    if (strncmp(*e, "PATH=", 5) == 0)
      path = *e + 5;
  if (strchr(file, '/') || !*file) {
    exec_at = helper_now();
    execve(file, argv, envp);
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
      exec_at = helper_now();
      execve(buf, argv, envp);
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

/* The vfork child: its own group, into the cgroup, the descriptors, the
 * folder, the signals, then the command. Only system calls: it runs in
 * our memory until it execs. */
_Noreturn static void spawn_child(const spawn_args *a) {
  int e = 0;
  sigset_t none;
  sigemptyset(&none);
  setpgid(0, 0);
  if (a->procs) {
    int fd = open(a->procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1)
      e = errno ? errno : EIO;
    if (fd >= 0)
      close(fd);
  }
  if (!e && (dup2(a->null_fd, 0) < 0 ||
             dup2(a->out_w >= 0 ? a->out_w : a->null_fd, 1) < 0 ||
             dup2(a->err_w >= 0 ? a->err_w : a->null_fd, 2) < 0))
    e = errno;
  /* Descriptors without O_CLOEXEC (a batch file, a lock of prereg's when
   * the helper is its fork) must not reach the command. */
  closefrom(3);
  if (!e && a->cwd && chdir(a->cwd) != 0)
    e = errno;
  if (!e && a->cpus && sched_setaffinity(0, sizeof *a->cpus, a->cpus) != 0)
    e = errno;
  for (size_t i = 0; i < sizeof reset_sigs / sizeof reset_sigs[0]; i++)
    signal(reset_sigs[i], SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (!e)
    e = exec_path(a->argv[0], a->argv, a->envp);
  exec_err = e;
  _exit(127);
}

int run_helper_spawn(char **argv, char **envp, const char *cwd, int out_w,
                     int err_w, const char *cgdir, const cpu_set_t *cpus,
                     pid_t *pid, double *t0) {
  static int null_fd = -1;
  char procs[4096];
  spawn_args a = {argv, envp, cwd, NULL, cpus, out_w, err_w, -1};
  sigset_t all, old;
  if (null_fd < 0 && (null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
    return errno;
  a.null_fd = null_fd;
  if (cgdir) {
    if (snprintf(procs, sizeof procs, "%s/cgroup.procs", cgdir) >=
        (int)sizeof procs)
      return ENAMETOOLONG;
    a.procs = procs;
  }
  run_helper_reset_hiwater();
  /* No handler of ours may run in the child while it shares our memory:
   * it starts with every signal blocked, and unblocks them only once
   * their actions are the defaults. */
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);
  exec_at = 0;
  exec_err = 0;
  pid_t p = vfork();
  if (p == 0)
    spawn_child(&a);
  int e = p < 0 ? errno : exec_err;
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (p > 0 && e)
    waitpid(p, NULL, 0);
  if (e)
    return e;
  *pid = p;
  *t0 = exec_at;
  return 0;
}

/* Clean-up */

/* The process group of the command the helper is running, so that the
 * helper can take it down when prereg itself dies (kill -9): the kernel
 * then sends the helper SIGUSR1 (PR_SET_PDEATHSIG). */
static volatile sig_atomic_t running_pgid;

/* The helper is a child subreaper: a descendant of the command whose
 * parent exits (a daemon that double-forked, or left the group with
 * setsid) becomes the helper's child instead of init's. Since the helper
 * runs one command at a time, every child it has besides that command is
 * an orphan of the run. */
static char children_path[64];

/* SIGKILLs every child listed in the children file; returns how many
 * could be signalled (a zombie can: it is then reaped), or -1 when the
 * file cannot be read (a kernel without CONFIG_PROC_CHILDREN). Reads in
 * chunks: a number may straddle two. Async-signal-safe. */
static int kill_listed_children(void) {
  int fd = open(children_path, O_RDONLY | O_CLOEXEC);
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

/* The parent of pid from /proc/PID/stat (after the name, which may hold
 * anything but ends at the last ')'); -1 when it is gone. */
static int stat_ppid(const char *pid) {
  char path[64], buf[1024];
  int ppid = -1;
  snprintf(path, sizeof path, "/proc/%s/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  char *rp = strrchr(buf, ')');
  if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
    return -1;
  return ppid;
}

/* Without the children file: the same, our children found by a scan of
 * /proc (which allocates, so not in a signal handler). */
static int kill_scanned_children(void) {
  DIR *d = opendir("/proc");
  if (!d)
    return 0;
  int me = (int)getpid(), killed = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end == '\0' && pid > 0 && stat_ppid(e->d_name) == me)
      killed += kill((pid_t)pid, SIGKILL) == 0;
  }
  closedir(d);
  return killed;
}

/* Kills (SIGKILL) and reaps every child of the helper, again and again
 * while killing one orphans more onto it; bounded (about 2 s) in case
 * something forks as fast as we kill or cannot die. in_handler: called
 * from the SIGUSR1 handler, so only async-signal-safe calls; there,
 * without the children file, the group kill has to do. */
static void kill_children(int in_handler) {
  for (int round = 0; round < 2000; round++) {
    pid_t w;
    while ((w = waitpid(-1, NULL, WNOHANG)) > 0)
      ;
    /* No child at all, running or a zombie: as a subreaper we are the
     * top of every descendant's chain of parents, so none is left. */
    if (w < 0 && errno == ECHILD)
      return;
    int found = kill_listed_children();
    if (found < 0) {
      if (in_handler)
        return;
      found = kill_scanned_children();
    }
    if (found == 0)
      return;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
}

static void parent_died(int sig) {
  (void)sig;
  if (running_pgid > 0)
    kill(-(pid_t)running_pgid, SIGKILL);
  kill_children(1);
  _exit(1);
}

/* Serving */

/* One spawn request as the helper receives it. Layout of the message:
 * "flags\0" (5 digits: has out fd, has err fd, has cwd, has cgroup, has
 * CPUs), the counts of argv and env, then cwd, cgroup, the CPUs (their
 * numbers, each followed by a comma), argv and env, each ended by NUL;
 * the pipe ends come as SCM_RIGHTS. */
typedef struct helper_request {
  char **argv, **envp; /* point into the message (free the arrays only) */
  char *cwd, *cg;
  int out_w, err_w, has_cpus;
  cpu_set_t cpus;
} helper_request;

/* The CPU numbers of list ("0,2,3,") into *set; 0 when one is not a CPU
 * number this set can hold. */
static int take_cpus(const char *list, cpu_set_t *set) {
  CPU_ZERO(set);
  while (*list) {
    char *end;
    long c = strtol(list, &end, 10);
    if (end == list || *end != ',' || c < 0 || c >= CPU_SETSIZE)
      return 0;
    CPU_SET((int)c, set);
    list = end + 1;
  }
  return 1;
}

/* The n strings from *p on (not past end) as a NULL-ended array. */
static char **take_strings(char **p, const char *end, long n) {
  char **v =
      n >= 0 && n < HELPER_MSG_MAX ? calloc((size_t)n + 1, sizeof *v) : NULL;
  for (long i = 0; v && i < n && *p < end; i++, *p += strlen(*p) + 1)
    v[i] = *p;
  return v;
}

/* Receives and parses one request; 0 when the socket is closed (we are
 * done). */
static int helper_read(int sock, char *buf, helper_request *q) {
  char cbuf[CMSG_SPACE(2 * sizeof(int))];
  struct iovec io = {.iov_base = buf, .iov_len = HELPER_MSG_MAX - 1};
  struct msghdr mh = {.msg_iov = &io,
                      .msg_iovlen = 1,
                      .msg_control = cbuf,
                      .msg_controllen = sizeof cbuf};
  ssize_t n;
  while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
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
  int cpus_ok = 1;
  if (flags[4] == '1') {
    q->has_cpus = 1;
    cpus_ok = take_cpus(p, &q->cpus);
    p += strlen(p) + 1;
  }
  q->argv = cpus_ok ? take_strings(&p, end, nargv) : NULL;
  q->envp = cpus_ok ? take_strings(&p, end, nenv) : NULL;
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
static void helper_reap(pid_t pid, run_helper_reply *d) {
  running_pgid = pid; /* the command leads its own group */
  /* Orphans the run leaves to us while it goes on are reaped as they
   * end, so that no zombie of ours stands in its PSS sample. */
  for (;;) {
    pid_t w = wait4(-1, &d->status, 0, &d->ru);
    if (w == pid) {
      d->t = helper_now();
      break;
    }
    if (w < 0 && errno != EINTR) {
      d->t = helper_now();
      break;
    }
  }
  /* Nothing of the run outlives it: its group, and the orphans we
   * adopted. SIGUSR1 waits, so that its handler does not do the same
   * at the same time. */
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, &old);
  kill(-pid, SIGKILL);
  running_pgid = 0;
  kill_children(0);
  sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The CPU times of every process of the run, reaped by now (the run's
 * orphans are ours, and helper_reap killed and reaped what was left):
 * what our children's times grew by since *before, into d. A launcher
 * that does not wait for its first process (bubblewrap with its own PID
 * namespace) would otherwise leave that process's CPU out; our own CPU
 * is not in it. */
static void run_cpu(const struct rusage *before, run_helper_reply *d) {
  struct rusage after;
  if (getrusage(RUSAGE_CHILDREN, &after) != 0)
    return;
  timersub(&after.ru_utime, &before->ru_utime, &d->ru.ru_utime);
  timersub(&after.ru_stime, &before->ru_stime, &d->ru.ru_stime);
}

/* The CPUs the run may use: the helper's own when it started, before it
 * went home. */
static cpu_set_t run_set;
static int at_home;

/* Stays on the CPU it is on, when the run has more than one: see the top
 * of this file. A failure only leaves the helper free to move. */
static void go_home(void) {
  CPU_ZERO(&run_set);
  int cpu = sched_getcpu();
  if (sched_getaffinity(0, sizeof run_set, &run_set) != 0 ||
      CPU_COUNT(&run_set) < 2 || cpu < 0 || cpu >= CPU_SETSIZE ||
      !CPU_ISSET(cpu, &run_set))
    return;
  cpu_set_t home;
  CPU_ZERO(&home);
  CPU_SET(cpu, &home);
  at_home = sched_setaffinity(0, sizeof home, &home) == 0;
}

static void helper_main(int sock) {
  char *buf = malloc(HELPER_MSG_MAX);
  if (!buf)
    _exit(1);
  helper_request q;
  while (helper_read(sock, buf, &q)) {
    run_helper_reply r = {.kind = 1};
    struct rusage before;
    getrusage(RUSAGE_CHILDREN, &before);
    if (!q.argv || !q.envp || !q.argv[0])
      r.err = ENOMEM;
    else
      r.err = run_helper_spawn(q.argv, q.envp, q.cwd, q.out_w, q.err_w, q.cg,
                               q.has_cpus ? &q.cpus
                               : at_home  ? &run_set
                                          : NULL,
                               &r.pid, &r.t);
    free(q.argv);
    free(q.envp);
    if (r.err)
      close_ends(&q);
    if (send(sock, &r, sizeof r, 0) != (ssize_t)sizeof r)
      _exit(1);
    if (r.err)
      continue;
    run_helper_reply d = {.kind = 2, .pid = r.pid};
    helper_reap(r.pid, &d);
    run_cpu(&before, &d);
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

_Noreturn void run_helper_serve(int sock, pid_t parent) {
  /* It must not outlive prereg, nor take its Ctrl-C: prereg decides what
   * happens to the run. */
  signal(SIGUSR1, parent_died);
  prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0);
  if (getppid() != parent)
    _exit(0);
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  snprintf(children_path, sizeof children_path, "/proc/%d/task/%d/children",
           (int)getpid(), (int)getpid());
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  run_helper_reset_hiwater();
  go_home();
  helper_main(sock);
  _exit(0);
}
