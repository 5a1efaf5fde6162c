/* log.c: the batch's log, a line per recorded run in batches/BATCH/
 * BATCH.log: what a terminal's progress line shows only for the moment,
 * kept with the batch (frozen with the rest of its folder) for a log
 * read later, off a terminal or in CI.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "run/run_internal.h"

core_status run_log_run(const char *bdir, const char *bid, int *fd,
                        const run_event *ev, core_err *err) {
  char path[PATH_MAX + 32], line[2048];
  snprintf(path, sizeof path, "%s/%s.log", bdir, bid);
  int n = snprintf(line, sizeof line,
                   "[%zu/%zu] %s%s%s %s round %ld: %s "
                   "(%.4g s)\n",
                   ev->done, ev->total, ev->host ? ev->host : "",
                   ev->host ? " " : "", ev->workload, ev->arm, ev->round,
                   ev->failure ? ev->failure : "ok", ev->wall_s);
  if (n < 0)
    return CORE_OK;
  if ((size_t)n >= sizeof line) {
    n = (int)sizeof line - 1;
    line[n - 1] = '\n';
  }
  /* Opened once (checked a regular file of its own, not a link) and
   * written unbuffered: a line is on disk as soon as it is written. */
  core_status st = CORE_OK;
  if (*fd < 0 && (st = core_open_regular_write(path, O_WRONLY | O_APPEND, fd,
                                               err)) != CORE_OK)
    return st;
  if (write(*fd, line, (size_t)n) != n)
    st = core_fail(err, CORE_EIO, "%s: cannot write", path);
  return st;
}
