/* report.h: the report of an experiment: report.md, report.html (from the
 * Markdown by cmark-gfm, safe mode), forest plots as SVG and report.xlsx.
 * Only reports/ includes xlsxwriter.h and the cmark-gfm headers.
 * SPDX-License-Identifier: MIT
 *
 * Everything is rendered from a report_input: plain structs gathered by
 * report_gather() from the data folder, or built by hand in tests. The
 * same input gives byte-identical Markdown, HTML and SVG: no clock, no
 * absolute paths, numbers by core_fmt_sig and "%.*f" in the C locale.
 */
#ifndef PREREG_REPORT_H
#define PREREG_REPORT_H

#include <stddef.h>

#include "analysis/analysis.h"
#include "core/core.h"
#include "data/data.h"
#include "protocols/proto.h"

/* {==== What a report shows ==== */

/* One amendment, as the Deviations section shows it. */
typedef struct report_amendment {
  int number;       /* sheet version it made (>= 1) */
  char *date;       /* the sheet's `date` (YYYY-MM-DD) */
  char *filed_at;   /* when prereg amend recorded it (UTC) or NULL */
  long runs_before; /* runs collected when filed; -1 unknown */
  char *why;
  char *diff;     /* unified diff vN-1 -> vN, or NULL */
  char *affected; /* "startup, compile (superseded)" or "none" */
} report_amendment;

/* Everything a report shows. An input owns all it points to (rows is a
 * core_malloc'd rowset), whether report_gather() built it or a test did
 * by hand with core_malloc'd parts; report_input_free frees it. A
 * hand-built input may leave any pointer NULL except sheet and summary. */
typedef struct report_input {
  proto_sheet *sheet; /* the current (newest) version */
  analysis_summary *summary;
  data_rowset *rows;         /* every row, or NULL */
  data_report_inputs *extra; /* batch facts, process lists, manifest */
  char *registered_at;       /* UTC of version 0, or NULL */
  report_amendment *amendments;
  size_t n_amendments;
  /* How the user named the sheet and data folder, for the commands that
   * reproduce the report (as typed: no absolute path is added). */
  char *sheet_arg, *data_arg;
  /* NULL when data_verify passed; else its problems (one per line) and
   * every page is stamped UNVERIFIED. */
  char *unverified;
} report_input;

/** Loads everything for the report of sheet (already loaded from
 * sheet_arg) from the experiment folder under data_arg: versions,
 * rows, analysis (threads as in analysis_run), batch facts, manifest and
 * verification. A failed verification is CORE_EVERIFY naming the files,
 * unless force, which records the problems in in->unverified. Takes
 * ownership of sheet (freed with the input, also on error); the strings
 * are copied. OUT: *in newly allocated (free with report_input_free),
 * NULL on error. */
core_status report_gather(proto_sheet *sheet, const char *sheet_arg,
                          const char *data_arg, int force, report_input **in,
                          core_err *err);
/** Frees an input and everything it points to; NULL is a no-op. */
void report_input_free(report_input *in);

/* }==== */

/* {==== Rendering and writing ==== */

/* One forest plot: a workload and metric, its file name in the report
 * folder ("plot-1-startup-wall_s.svg") and the SVG text. */
typedef struct report_plot {
  char *workload, *metric;
  char *file;
  char *svg;
  size_t svg_len;
} report_plot;

/* The text artefacts of a report, in memory; the doc owns every string
 * and the plots (report_doc_free). */
typedef struct report_doc {
  char *md;
  size_t md_len;
  char *html;
  size_t html_len;
  report_plot *plots;
  size_t n_plots;
} report_doc;

/** Renders report.md, report.html and the plots of in (borrowed for the
 * call). OUT: *doc filled from scratch (free with report_doc_free); on
 * error it is empty. CORE_EMARKDOWN when cmark fails. */
core_status report_render(const report_input *in, report_doc *doc,
                          core_err *err);
/** Frees what doc owns and zeroes it; NULL is a no-op. */
void report_doc_free(report_doc *doc);

/** Writes report.xlsx to path (rows in order, constant-memory mode).
 * CORE_EXLSX names the sheet and libxlsxwriter's error. */
core_status report_write_xlsx(const report_input *in, const char *path,
                              core_err *err);

/** Checks that dir exists (or can be created), is a folder and not a
 * link, and that the report can be written, before any long work: makes
 * the staging folder report_write_all will use, then removes it. */
core_status report_check_dir(const char *dir, core_err *err);

/** Writes doc's files (report.md, report.html, plots) and report.xlsx to
 * dir, which must exist, all or none: each is written into a staging
 * folder (".DIR.tmp.PID" beside dir), and only when all are written are
 * they renamed into dir. A link, FIFO or folder in dir where a file goes
 * is refused before anything moves, and left as it is. */
core_status report_write_all(const report_input *in, const report_doc *doc,
                             const char *dir, core_err *err);

/* }==== */

/* {==== Building blocks, exposed for tests ==== */

/** Appends s to b escaped for HTML/XML text and attributes. */
void report_html_escape(core_buf *b, const char *s);

/** One row of a forest plot; label and verdict are the caller's. */
typedef struct report_forest_row {
  const char *label;
  double ratio, lo, hi; /* ratio and CI; non-finite or <= 0 are skipped */
  const char *verdict;
} report_forest_row;

/** Appends to out a standalone SVG forest plot of the n rows: ratios and
 * intervals on a log axis, a line at 1, the numbers written beside each
 * row. */
void report_forest_svg(core_buf *out, const char *title,
                       const report_forest_row *rows, size_t n);

/* }==== */

/** The versions behind a report: "libxlsxwriter 1.1.4" and "cmark-gfm
 * 0.29.0.gfm.6" (static strings). */
const char *report_xlsxwriter_version(void);
const char *report_cmark_version(void);

#endif
