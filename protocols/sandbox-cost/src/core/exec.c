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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/run.h"

extern char **environ;

int exec_cancel_fd = -1;

/* {==== Command strings ==== */

int exec_needs_shell(const char *cmd) {
  /* The contract's list, plus characters whose meaning a plain split would
   * change silently (a comment, ~, a glob class, a line break). */
  if (strpbrk(cmd, "'\"$*?|&;<>()`\\\n\t#~[") != NULL)
    return 1;
  /* "NAME=value cmd" is an assignment for the shell, a file name for
   * exec. */
  const char *p = cmd;
  while (*p == ' ')
    p++;
  const char *eq = strchr(p, '=');
  const char *sp = strchr(p, ' ');
  return eq != NULL && (sp == NULL || eq < sp) && eq != p;
}

void exec_argv_free(char **argv) {
  if (!argv)
    return;
  for (char **a = argv; *a; a++)
    core_free(*a);
  core_free(argv);
}

char **exec_argv(const char *cmd) {
  if (exec_needs_shell(cmd)) {
    char **v = core_calloc(4, sizeof *v);
    if (!v)
      return NULL;
    v[0] = core_strdup("/bin/sh");
    v[1] = core_strdup("-c");
    v[2] = core_strdup(cmd);
    if (!v[0] || !v[1] || !v[2]) {
      exec_argv_free(v);
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
        exec_argv_free(v);
        return NULL;
      }
      memset(nv + cap, 0, cap * sizeof *v);
      v = nv;
      cap *= 2;
    }
    if (!(v[n++] = core_strndup(p, len))) {
      exec_argv_free(v);
      return NULL;
    }
    p += len;
  }
  if (n == 0) {
    exec_argv_free(v);
    return NULL;
  }
  return v;
}

/* }==== */

/* {==== Process clean-up ==== */

void exec_become_subreaper(void) {
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
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)me,
           (int)me);
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
  if (proc_descendants(me, &pids, &np) == CORE_OK) {
    for (size_t i = 0; i < np && n < max; i++) {
      char sp[64];
      snprintf(sp, sizeof sp, "/proc/%d/stat", pids[i]);
      FILE *s = fopen(sp, "r");
      if (!s)
        continue;
      char buf[512];
      size_t r = fread(buf, 1, sizeof buf - 1, s);
      fclose(s);
      buf[r] = 0;
      char *rp = strrchr(buf, ')');
      long ppid = 0;
      if (rp && sscanf(rp + 1, " %*c %ld", &ppid) == 1 && ppid == me)
        out[n++] = pids[i];
    }
  }
  core_free(pids);
  return n;
}

size_t exec_kill_all_children(void) {
  size_t killed = 0;
  /* Killing a child can orphan its own children onto us, so repeat until
   * nothing is left (bounded, in case something keeps forking). */
  for (int round = 0; round < 200; round++) {
    pid_t kids[256];
    size_t n = own_children(kids, 256);
    while (waitpid(-1, NULL, WNOHANG) > 0)
      ;
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

/* Signals the run's group and every descendant that left it. */
static void kill_tree(pid_t pid, int sig) {
  int *d = NULL;
  size_t n = 0;
  if (proc_descendants(pid, &d, &n) == CORE_OK)
    for (size_t i = 0; i < n; i++)
      kill(d[i], sig);
  core_free(d);
  killpg(pid, sig);
  kill(pid, sig);
}

/* }==== */

/* {==== Spawning ==== */

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
  int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (write(fd, "5", 1) < 0) {
      /* not allowed here: nothing to do */
    }
    close(fd);
  }
}

static void sink_take(exec_sink *s, const char *p, size_t n) {
  if (!s)
    return;
  size_t room = s->limit > s->written ? s->limit - s->written : 0;
  size_t keep = n < room ? n : room;
  if (keep < n)
    s->truncated = 1;
  if (keep == 0)
    return;
  if (s->buf)
    core_buf_append(s->buf, p, keep);
  else if (s->fd >= 0) {
    size_t off = 0;
    while (off < keep) {
      ssize_t w = write(s->fd, p + off, keep - off);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        break;
      off += (size_t)w;
    }
  }
  s->written += keep;
}

static int sink_active(const exec_sink *s) {
  return s && (s->fd >= 0 || s->buf);
}

/* Reads what is there; returns 0 at EOF or on error. */
static int pump(int fd, exec_sink *s) {
  char buf[65536];
  ssize_t r = read(fd, buf, sizeof buf);
  if (r < 0 && (errno == EINTR || errno == EAGAIN))
    return 1;
  if (r <= 0)
    return 0;
  sink_take(s, buf, (size_t)r);
  return 1;
}

/* The fork path, used only to move the child into a cgroup before it
 * execs (posix_spawn has no hook for that). */
static pid_t fork_into_cgroup(char **argv, char **envp, const char *cwd,
                              int out_w, int err_w, const char *cgdir,
                              int *err_no) {
  int ep[2];
  if (pipe2(ep, O_CLOEXEC) != 0) {
    *err_no = errno;
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    *err_no = errno;
    close(ep[0]);
    close(ep[1]);
    return -1;
  }
  if (pid == 0) {
    int e = 0;
    setpgid(0, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/cgroup.procs", cgdir);
    int fd = open(path, O_WRONLY);
    if (fd < 0 || write(fd, "0", 1) != 1)
      e = errno ? errno : EIO;
    if (fd >= 0)
      close(fd);
    int nul = open("/dev/null", O_RDWR);
    if (!e && nul >= 0) {
      dup2(nul, 0);
      dup2(out_w >= 0 ? out_w : nul, 1);
      dup2(err_w >= 0 ? err_w : nul, 2);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (!e && cwd && chdir(cwd) != 0)
      e = errno;
    if (!e) {
      execvpe(argv[0], argv, envp);
      e = errno;
    }
    if (write(ep[1], &e, sizeof e) < 0) {
      /* the parent then sees EOF and assumes success: nothing better */
    }
    _exit(127);
  }
  close(ep[1]);
  int e = 0;
  ssize_t r = read(ep[0], &e, sizeof e);
  close(ep[0]);
  if (r == (ssize_t)sizeof e) {
    waitpid(pid, NULL, 0);
    *err_no = e;
    return -1;
  }
  return pid;
}

static double now_s(void) { return core_monotonic(); }

core_status exec_command(const exec_req *req, exec_res *res, core_err *err) {
  memset(res, 0, sizeof *res);
  res->maxrss_kib = -1;
  core_status st = CORE_OK;
  char **argv = NULL, **envp = NULL;
  int outp[2] = {-1, -1}, errp[2] = {-1, -1}, pidfd = -1;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  int fa_ok = 0, at_ok = 0;
  double grace = req->grace_s > 0 ? req->grace_s : 2.0;

  exec_become_subreaper();
  argv = exec_argv(req->cmd);
  if (!argv) {
    res->exited = 1;
    res->exit_code = 127;
    snprintf(res->why, sizeof res->why, "empty command '%s'", req->cmd);
    goto cleanup;
  }
  envp = make_env(req->env);
  if (!envp) {
    st = core_fail(err, CORE_ENOMEM, "out of memory starting '%s'",
                   req->cmd);
    goto cleanup;
  }
  if ((sink_active(req->out) && pipe2(outp, O_CLOEXEC) != 0) ||
      (sink_active(req->err) && pipe2(errp, O_CLOEXEC) != 0)) {
    st = core_fail(err, CORE_ERUN, "cannot make a pipe: %s",
                   strerror(errno));
    goto cleanup;
  }

  pid_t pid = -1;
  reset_hiwater();
  double t0 = now_s();
  if (req->cgroup_dir) {
    int e = 0;
    t0 = now_s();
    pid = fork_into_cgroup(argv, envp, req->cwd, outp[1], errp[1],
                           req->cgroup_dir, &e);
    if (pid < 0) {
      res->exited = 1;
      res->exit_code = 127;
      snprintf(res->why, sizeof res->why, "cannot execute '%s': %s",
               argv[0], strerror(e));
      goto cleanup;
    }
  } else {
    posix_spawn_file_actions_init(&fa);
    fa_ok = 1;
    posix_spawnattr_init(&at);
    at_ok = 1;
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (outp[1] >= 0)
      posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
    else
      posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (errp[1] >= 0)
      posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    else
      posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    /* Descriptors of ours without O_CLOEXEC (a batch file, a lock) must
     * not leak into the command. */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    if (req->cwd)
      posix_spawn_file_actions_addchdir_np(&fa, req->cwd);
    sigset_t none, def;
    sigemptyset(&none);
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGHUP);
    sigaddset(&def, SIGQUIT);
    sigaddset(&def, SIGCHLD);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    t0 = now_s();
    int e = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp);
    if (e != 0) {
      res->exited = 1;
      res->exit_code = 127;
      if (req->cwd && e == ENOENT && !core_is_dir(req->cwd))
        snprintf(res->why, sizeof res->why,
                 "cannot enter working folder %s", req->cwd);
      else
        snprintf(res->why, sizeof res->why, "cannot execute '%s': %s",
                 argv[0], strerror(e));
      goto cleanup;
    }
  }
  res->spawned = 1;
  if (outp[1] >= 0) {
    close(outp[1]);
    outp[1] = -1;
  }
  if (errp[1] >= 0) {
    close(errp[1]);
    errp[1] = -1;
  }
#ifdef SYS_pidfd_open
  pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif

  double deadline = req->timeout_s > 0 ? t0 + req->timeout_s : -1;
  double sample_at =
      req->pss && req->pss->after_s >= 0 ? t0 + req->pss->after_s : -1;
  double kill_at = -1;
  int status = 0, reaped = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  double t1 = t0;

  while (!reaped) {
    double t = now_s();
    if (deadline >= 0 && t >= deadline && !res->timed_out &&
        !res->stopped) {
      res->timed_out = 1;
      kill_tree(pid, SIGTERM);
      kill_at = t + grace;
      deadline = -1;
    }
    if (sample_at >= 0 && t >= sample_at) {
      core_err perr = {0};
      if (proc_sample_pss(req->pss, pid, &res->pss_kib, &res->pss_counted,
                          &res->pss_unreadable, &perr) == CORE_OK)
        res->pss_sampled = 1;
      else
        snprintf(res->why, sizeof res->why, "pss sample: %s", perr.msg);
      sample_at = -1;
      if (req->pss->stop_after && !res->timed_out) {
        res->stopped = 1;
        kill_tree(pid, SIGTERM);
        kill_at = now_s() + grace;
        deadline = -1;
      }
    }
    if (kill_at >= 0 && t >= kill_at) {
      kill_tree(pid, SIGKILL);
      kill_at = -1;
    }
    /* Next moment something must happen. */
    double next = -1;
    double cands[3] = {deadline, sample_at, kill_at};
    for (int i = 0; i < 3; i++)
      if (cands[i] >= 0 && (next < 0 || cands[i] < next))
        next = cands[i];
    int timeout_ms = -1;
    if (next >= 0) {
      double d = (next - now_s()) * 1000.0;
      timeout_ms = d <= 0 ? 0 : (int)d + 1;
    }
    if (pidfd < 0 && (timeout_ms < 0 || timeout_ms > 2))
      timeout_ms = 2; /* no pidfd: poll for the exit */

    struct pollfd pf[4];
    int np = 0, i_pid = -1, i_out = -1, i_err = -1, i_can = -1;
    if (pidfd >= 0) {
      pf[np] = (struct pollfd){.fd = pidfd, .events = POLLIN};
      i_pid = np++;
    }
    if (outp[0] >= 0) {
      pf[np] = (struct pollfd){.fd = outp[0], .events = POLLIN};
      i_out = np++;
    }
    if (errp[0] >= 0) {
      pf[np] = (struct pollfd){.fd = errp[0], .events = POLLIN};
      i_err = np++;
    }
    if (exec_cancel_fd >= 0 && !res->interrupted) {
      pf[np] = (struct pollfd){.fd = exec_cancel_fd, .events = POLLIN};
      i_can = np++;
    }
    int pr = poll(pf, (nfds_t)np, timeout_ms);
    if (pr < 0 && errno != EINTR) {
      st = core_fail(err, CORE_ERUN, "poll: %s", strerror(errno));
      kill_tree(pid, SIGKILL);
      waitpid(pid, NULL, 0);
      goto cleanup;
    }
    if (pr > 0) {
      if (i_out >= 0 && pf[i_out].revents && !pump(outp[0], req->out)) {
        close(outp[0]);
        outp[0] = -1;
      }
      if (i_err >= 0 && pf[i_err].revents && !pump(errp[0], req->err)) {
        close(errp[0]);
        errp[0] = -1;
      }
      if (i_can >= 0 && pf[i_can].revents) {
        res->interrupted = 1;
        kill_tree(pid, SIGKILL);
      }
    }
    if (pidfd < 0 || (pr > 0 && i_pid >= 0 && pf[i_pid].revents)) {
      pid_t w = wait4(pid, &status, pidfd >= 0 ? 0 : WNOHANG, &ru);
      if (w == pid) {
        t1 = now_s();
        reaped = 1;
      } else if (w < 0 && errno != EINTR) {
        st = core_fail(err, CORE_ERUN, "wait4: %s", strerror(errno));
        goto cleanup;
      }
    }
  }

  res->wall_s = t1 - t0;
  res->user_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
  res->sys_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  res->maxrss_kib = ru.ru_maxrss; /* KiB on Linux */
  if (WIFEXITED(status)) {
    res->exited = 1;
    res->exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    res->signo = WTERMSIG(status);
  }
  if (sample_at >= 0 && req->pss) {
    /* Ended before the sample was due: say so rather than sample an empty
     * tree. */
    snprintf(res->why, sizeof res->why,
             "ended after %.3f s, before the PSS sample at %g s",
             res->wall_s, req->pss->after_s);
  }

  /* Whatever happened, nothing of this run may outlive it: the group, and
   * any descendant that left the group (now adopted by us). */
  killpg(pid, SIGKILL);
  exec_kill_all_children();

  /* Drain what the dead processes left in the pipes; a writer we could
   * not kill must not hang us, so the wait is bounded. */
  double drain_end = now_s() + 2.0;
  while ((outp[0] >= 0 || errp[0] >= 0) && now_s() < drain_end) {
    struct pollfd pf[2];
    int np = 0, i_out = -1, i_err = -1;
    if (outp[0] >= 0) {
      pf[np] = (struct pollfd){.fd = outp[0], .events = POLLIN};
      i_out = np++;
    }
    if (errp[0] >= 0) {
      pf[np] = (struct pollfd){.fd = errp[0], .events = POLLIN};
      i_err = np++;
    }
    int pr = poll(pf, (nfds_t)np, 100);
    if (pr <= 0) {
      exec_kill_all_children();
      continue;
    }
    if (i_out >= 0 && pf[i_out].revents && !pump(outp[0], req->out)) {
      close(outp[0]);
      outp[0] = -1;
    }
    if (i_err >= 0 && pf[i_err].revents && !pump(errp[0], req->err)) {
      close(errp[0]);
      errp[0] = -1;
    }
  }

cleanup:
  if (fa_ok)
    posix_spawn_file_actions_destroy(&fa);
  if (at_ok)
    posix_spawnattr_destroy(&at);
  for (int i = 0; i < 2; i++) {
    if (outp[i] >= 0)
      close(outp[i]);
    if (errp[i] >= 0)
      close(errp[i]);
  }
  if (pidfd >= 0)
    close(pidfd);
  exec_argv_free(argv);
  core_free(envp);
  return st;
}

/* }==== */
