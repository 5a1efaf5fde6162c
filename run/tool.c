/* tool.c: running a helper program prereg needs for itself (curl to reach
 * a time-stamping authority, ssh-keygen to sign and check signatures):
 * an argument vector executed directly (never through a shell), its
 * input from memory, its output read into memory up to a cap, all of it
 * within a time-out after which it is killed.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/run.h"

extern char **environ;

/* The input as a file descriptor the program reads from the start: a
 * memory file, so that nothing is written to disk and a program that
 * exits early cannot make us die of SIGPIPE. */
static int input_fd(const void *in, size_t len) {
  int fd = memfd_create("prereg-input", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  if (core_write_all(fd, in, len, "prereg-input", NULL) != CORE_OK ||
      lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static core_status spawn(const char *const argv[], int in, int out_w,
                         int err_w, pid_t *pid, core_err *err) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  sigset_t none, def;
  int e;
  sigemptyset(&none);
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&at);
  if (in >= 0)
    posix_spawn_file_actions_adddup2(&fa, in, 0);
  else
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_w, 1);
  posix_spawn_file_actions_adddup2(&fa, err_w, 2);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &def);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
                                    POSIX_SPAWN_SETSIGMASK |
                                    POSIX_SPAWN_SETSIGDEF);
  e = posix_spawnp(pid, argv[0], &fa, &at, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  if (e != 0)
    return core_fail(err, CORE_ERUN, "%s: cannot start: %s", argv[0],
                     strerror(e));
  return CORE_OK;
}

/* Appends what fd has to b, keeping at most cap bytes; 0 at its end. */
static int drain(int fd, core_buf *b, size_t cap, int *over) {
  char chunk[8192];
  ssize_t n = read(fd, chunk, sizeof chunk);
  if (n < 0)
    return errno == EINTR || errno == EAGAIN;
  if (n == 0)
    return 0;
  if (b->len + (size_t)n > cap) {
    *over = 1;
    n = (ssize_t)(cap > b->len ? cap - b->len : 0);
  }
  core_buf_append(b, chunk, (size_t)n);
  return 1;
}

/* Reads both pipes until both end, the cap is passed or time runs out.
 * Returns 0, or 1 for time out, 2 for too much output. */
static int collect(int out_r, int err_r, run_tool_result *res, size_t cap,
                   double timeout_s) {
  struct pollfd p[2] = {{out_r, POLLIN, 0}, {err_r, POLLIN, 0}};
  double end = core_monotonic() + timeout_s;
  int over = 0;
  while (p[0].fd >= 0 || p[1].fd >= 0) {
    double left = end - core_monotonic();
    if (left <= 0)
      return 1;
    int r = poll(p, 2, (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return 1;
    for (int i = 0; i < 2; i++)
      if (p[i].fd >= 0 && p[i].revents &&
          !drain(p[i].fd, i ? &res->err : &res->out, i ? 4096 : cap, &over))
        p[i].fd = -1;
    if (over)
      return 2;
  }
  return 0;
}

core_status run_tool(const char *const argv[], const void *in, size_t in_len,
                     size_t cap, double timeout_s, run_tool_result *res,
                     core_err *err) {
  int out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
  int in_fd = in ? input_fd(in, in_len) : -1;
  int status = 0, how;
  pid_t pid;
  core_status st;
  memset(res, 0, sizeof *res);
  if ((in && in_fd < 0) || pipe2(out_p, O_CLOEXEC) != 0 ||
      pipe2(err_p, O_CLOEXEC) != 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot set up its input and output: %s",
                   argv[0], strerror(errno));
    goto done;
  }
  if ((st = spawn(argv, in_fd, out_p[1], err_p[1], &pid, err)) != CORE_OK)
    goto done;
  close(out_p[1]);
  close(err_p[1]);
  out_p[1] = err_p[1] = -1;
  how = collect(out_p[0], err_p[0], res, cap, timeout_s);
  if (how)
    kill(-pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  res->timed_out = how == 1;
  res->too_long = how == 2;
  res->exited = !how && WIFEXITED(status);
  res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (res->out.oom || res->err.oom)
    st = core_fail(err, CORE_ENOMEM, "%s: out of memory", argv[0]);
done:
  for (int i = 0; i < 2; i++) {
    if (out_p[i] >= 0)
      close(out_p[i]);
    if (err_p[i] >= 0)
      close(err_p[i]);
  }
  if (in_fd >= 0)
    close(in_fd);
  return st;
}

void run_tool_result_free(run_tool_result *res) {
  core_buf_free(&res->out);
  core_buf_free(&res->err);
}

void run_tool_why(const run_tool_result *res, char *out, size_t cap) {
  const char *e = res->err.data ? res->err.data : "";
  size_t n = strlen(e);
  while (n && (e[n - 1] == '\n' || e[n - 1] == '\r'))
    n--;
  if (res->timed_out)
    snprintf(out, cap, "no answer in time");
  else if (res->too_long)
    snprintf(out, cap, "the answer was longer than allowed");
  else if (n)
    snprintf(out, cap, "%.*s", (int)(n < 300 ? n : 300), e);
  else
    snprintf(out, cap, "exit code %d", res->exit_code);
  for (char *p = out; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = ' ';
}
