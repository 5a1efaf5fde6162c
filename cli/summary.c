/* summary.c: the analysis behind `prereg analyze` and the summary `prereg
 * run` ends with: every row streamed once into the analysis (never all
 * in memory), and the terminal's width for the matrix.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli_internal.h"
#include "data/data.h"

int cli_term_width(FILE *out) {
  const char *c = getenv("COLUMNS");
  struct winsize ws;
  if (c && *c) {
    char *end;
    long n;
    errno = 0;
    n = strtol(c, &end, 10);
    if (!errno && !*end && n > 0 && n < 10000)
      return (int)n;
  }
  if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  return 80;
}

static core_status feed(void *ctx, const data_row *r, core_err *err) {
  return analysis_stream_add(ctx, r, err);
}

core_status cli_analyze_experiment(const proto_sheet *sheet,
                                   const data_experiment *exp, int threads,
                                   analysis_summary **out, core_err *err) {
  proto_sheet *orig;
  analysis_stream *st;
  core_status rc;
  *out = NULL;
  if (!(orig = data_load_version(exp, 0, err)))
    return err->status ? err->status : CORE_EIO;
  analysis_init();
  if ((rc = analysis_stream_begin(sheet, orig, exp, &st, err)) == CORE_OK) {
    rc = data_scan_rows(exp, feed, st, err);
    if (rc == CORE_OK)
      rc = analysis_stream_end(st, threads, out, err);
    else
      analysis_stream_free(st);
  }
  proto_sheet_free(orig);
  return rc;
}
