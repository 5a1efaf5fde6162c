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
#include "core/limits.h"
#include "data/data.h"
#include "protocols/proto.h"

/* What a report shows */

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

struct report_row_facts;

/* Everything a report shows. An input owns all it points to (rows is a
 * core_malloc'd rowset), whether report_gather() built it or a test did
 * by hand with core_malloc'd parts; report_input_free frees it. A
 * hand-built input may leave any pointer NULL except sheet and summary.
 * The rows come one of two ways: in memory (rows, as tests build them),
 * or read again from the data folder (exp, as report_gather leaves it,
 * with facts gathered on the first reading), so that a million rows are
 * never all in memory. */
typedef struct report_input {
  proto_sheet *sheet; /* the current (newest) version */
  analysis_summary *summary;
  data_rowset *rows;              /* every row, or NULL */
  data_experiment *exp;           /* the open data folder, or NULL */
  struct report_row_facts *facts; /* what the rows say (report_internal.h),
                                     or NULL: worked out from rows */
  data_report_inputs *extra;      /* batch facts, process lists, manifest */
  char *manifest_sha256;          /* of DATA/ID/MANIFEST, or NULL */
  char *registered_at;            /* UTC of version 0, or NULL */
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

/* Rendering and writing */

/* One plot: the overview of every ratio (workload and metric NULL), or
 * one workload and metric's runs (its distribution per arm and its run
 * order); its file name in the report folder ("overview.svg",
 * "plot-1-startup-wall_s.svg") and the SVG text. */
typedef struct report_plot {
  char *workload, *metric;
  char *file;
  char *svg;
  size_t svg_len;
} report_plot;

/* The analysis a report is rendered from, written beside it as this file
 * (`prereg analyze --json` of the same data); report.md records its
 * SHA-256 on the line "- Analysis: `analysis.json`, SHA-256 `HEX` ...". */
#define REPORT_ANALYSIS_FILE "analysis.json"

/* The renderer's edition, written beside the report as this file: verify
 * of a bundle holds a report of the same edition to what this prereg
 * renders byte for byte, and names one of another edition (or none, as
 * bundles made before the file existed) as not compared. Raise the
 * number with any change a committed golden shows (docs/HACKING.md). */
#define REPORT_FORMAT_FILE "FORMAT"
#define REPORT_FORMAT_TEXT "prereg report format 4\n"

/* The text artefacts of a report, in memory; the doc owns every string
 * and the plots (report_doc_free). */
typedef struct report_doc {
  char *analysis; /* the analysis JSON (REPORT_ANALYSIS_FILE) */
  size_t analysis_len;
  char analysis_sha256[CORE_SHA256_HEX]; /* "" when none */
  char *md;
  size_t md_len;
  char *html;
  size_t html_len;
  char *provenance; /* provenance.md: every file's digest, every batch
                       fact, every amendment's diff */
  size_t provenance_len;
  report_plot *plots; /* the overview first */
  size_t n_plots;
} report_doc;

/** Renders analysis.json, report.md, report.html, provenance.md and the
 * plots of in
 * (borrowed for the call). OUT: *doc filled from scratch (free with
 * report_doc_free); on error it is empty. CORE_EMARKDOWN when cmark
 * fails. */
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

/** Writes doc's files (analysis.json, report.md, report.html,
 * provenance.md, plots) and report.xlsx to dir, which must exist, all or
 * none: each is written into a staging folder (".DIR.tmp.PID" beside
 * dir), and only when all are written are they renamed into dir. A link,
 * FIFO or folder in dir where a file goes is refused before anything
 * moves, and left as it is. */
core_status report_write_all(const report_input *in, const report_doc *doc,
                             const char *dir, core_err *err);

/* The report the data give now */

/** Renders the report of the sheet at sheet_path over data_dir (as
 * `prereg report` does, verification included) into dir, which must
 * exist: what publish bundles, from the data it bundles rather than a
 * report folder that may be stale. */
core_status report_render_to(const char *sheet_path, const char *data_dir,
                             const char *dir, core_err *err);

/** For a bundle that verified (data_bundle_verify), extracted by
 * data_resolve_input (sheet_path and data_dir, as it gives them):
 * renders its report afresh from its data and compares every file of
 * the bundled report with it, byte for byte when the report is of this
 * renderer's edition (report/FORMAT); a report of another edition has its
 * analysis.json checked value by value (analysis_json_compare) and its
 * other files named as not compared. Appends one line per problem (or
 * an "ok" line) to out; CORE_EVERIFY names the first. OUT: *whole, 1 when
 * every file of the report was compared (or there is none), 0 when some
 * were not: the caller must then say so where the reader looks first. */
core_status report_verify_bundle(const char *bundle, const char *sheet_path,
                                 const char *data_dir, core_buf *out,
                                 int *whole, core_err *err);

/* Building blocks, exposed for tests */

/** One row of a forest plot; label, group and verdict are the caller's. */
typedef struct report_forest_row {
  const char *label;
  double ratio, lo, hi; /* ratio and CI; non-finite or <= 0 are skipped */
  const char *verdict;
  const char *group; /* a heading row is drawn where it changes; NULL */
  int worse;         /* 1 worse than the reference, -1 better, 0 neither */
} report_forest_row;

/** A line a forest plot draws across its rows: a threshold of the rule
 * (at x, "slower above 1.1") or, with x2 > x, a band ("tie"). */
typedef struct report_forest_mark {
  double x, x2;
  const char *label;
} report_forest_mark;

/** A line a plot shows under its title, the heading in bold: one of the
 * report's notices, shortened ("UNVERIFIED: the data did not verify"). */
typedef struct report_plot_note {
  const char *heading, *text;
} report_plot_note;

/** Appends to out a standalone SVG forest plot of the n rows: ratios and
 * intervals on a log axis (ticks 1-3-10 where the range allows), a line
 * at 1, the marks, and the numbers and verdict written beside each row;
 * under the title one line per note (the picture taller by them; with
 * none, NULL and 0, the same bytes as a plot without notes).
 * Every text fits inside the viewBox (its width estimated generously). */
void report_forest_svg(core_buf *out, const char *title,
                       const report_forest_row *rows, size_t n,
                       const report_forest_mark *marks, size_t n_marks,
                       const report_plot_note *notes, size_t n_notes);

/** What one arm's runs of a workload and metric look like: values in
 * collection order with their positions (increasing numbers) and
 * batches, borrowed. */
typedef struct report_series {
  const char *arm;
  const double *values;
  const unsigned *order, *batch; /* order increasing */
  size_t n;
  /* The box: quartiles and extremes when known (analysis has them), else
   * NaN (then they are worked out from the values). */
  double q1, median, q3, min, max;
} report_series;

/** Appends to out a standalone SVG of one workload and metric: on the
 * left every value per arm (a box over its points, or above
 * REPORT_POINTS_MAX values a histogram per arm), on the right the values
 * against collection order, arms by colour and shape, batch boundaries
 * dashed and named (batch_names[i], n_batch_names of them). unit is the
 * values' ("s" is shown as s, ms or µs). The notes as report_forest_svg
 * shows them. */
void report_runs_svg(core_buf *out, const char *title, const char *unit,
                     const report_series *arms, size_t n_arms,
                     const char *const *batch_names, size_t n_batch_names,
                     const report_plot_note *notes, size_t n_notes);

#endif
