/* test_exec_nochildren.c: the runner on a kernel without
 * /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN=n). The link wraps
 * open and fopen (-Wl,--wrap) so that every such path fails with ENOENT,
 * as there; the helper must then find the run's orphans by scanning
 * /proc, and still leave nothing running.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "marked.h"
#include "run/run.h"

int __real_open(const char *path, int flags, ...);
FILE *__real_fopen(const char *path, const char *mode);
int __wrap_open(const char *path, int flags, ...);
FILE *__wrap_fopen(const char *path, const char *mode);

/* How often a children file was asked for and refused, in this process
 * (the helper is a fork: its own count dies with it). */
static int hidden;

static int is_children_file(const char *path) {
  size_t n = strlen(path);
  return n >= 9 && strcmp(path + n - 9, "/children") == 0;
}

int __wrap_open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0;
  va_end(ap);
  if (is_children_file(path)) {
    hidden++;
    errno = ENOENT;
    return -1;
  }
  return __real_open(path, flags, mode);
}

FILE *__wrap_fopen(const char *path, const char *mode) {
  if (is_children_file(path)) {
    hidden++;
    errno = ENOENT;
    return NULL;
  }
  return __real_fopen(path, mode);
}

int main(void) {
  char mark[32], cmd[256];
  snprintf(mark, sizeof mark, "%d5151", (int)getpid());
  /* One orphan that left the group (setsid), one that stayed in it; both
   * lose their parent at once, so the helper adopts them. */
  snprintf(cmd, sizeof cmd,
           "(setsid sleep 321.%s &); (sleep 322.%s &); sleep 0.3", mark, mark);
  run_req q = {0};
  run_res r;
  core_err e = {0};
  q.cmd = cmd;
  q.timeout_s = 60;
  CHECK(run_exec(&q, &r, &e) == CORE_OK);
  CHECK(r.exited && r.exit_code == 0);
  /* The wrap takes effect in this process (so in the helper, its fork):
   * the engine's own sweep, which the helper's reply leaves with nothing
   * to do after a run, asks for the children file too. */
  run_kill_all_children();
  CHECK(hidden > 0);
  CHECK(count_marked(mark) == 0);

  /* And again with a timeout: the orphans are signalled as the run is. */
  snprintf(cmd, sizeof cmd, "(setsid sleep 323.%s &); sleep 100.%s", mark,
           mark);
  q.timeout_s = 0.5;
  CHECK(run_exec(&q, &r, &e) == CORE_OK);
  CHECK(r.timed_out);
  CHECK(count_marked(mark) == 0);
  run_helper_stop();
  return HARNESS_END();
}
