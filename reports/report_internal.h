/* report_internal.h: what the files of reports/ share (private): what the
 * rows say about the setup, gathered row by row, and the small helpers of
 * every page (numbers, units, names, lookups).
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_REPORT_INTERNAL_H
#define PREREG_REPORT_INTERNAL_H

#include "reports/report.h"

/* What the rows say */

/* Distinct (group, value) pairs with counts, each string copied. At most
 * REPORT_TALLY_MAX pairs; the rest are counted in other, so that a
 * free-text column cannot make the report quadratic in the rows. */
#define REPORT_TALLY_MAX 64
typedef struct report_tally_entry {
  char *group, *value;
  size_t count;
} report_tally_entry;

typedef struct report_tally {
  report_tally_entry v[REPORT_TALLY_MAX];
  size_t n, other;
} report_tally;

/* Where in the collection a run came: start time, then batch and
 * execution order. */
typedef struct report_when {
  char at[40]; /* UTC ISO 8601, "" when not known */
  long batch, seq;
} report_when;

/* The first and last run of an arm on a workload that has a start time,
 * and how many. */
typedef struct report_span {
  report_when first, last;
  size_t runs;
} report_span;

/* The columns of the Raw sheet, in the CSV's order. */
#define REPORT_RAW_COLS 20

/* What the rows say about the setup, gathered row by row; it owns its
 * strings (report_facts_free). */
/* One fact's spread over an arm's runs. */
typedef struct report_cond_spread {
  size_t n;
  double min, max, sum;
} report_cond_spread;

typedef struct report_row_facts {
  report_tally digests; /* group: arm */
  report_tally caches;  /* group: workload */
  report_tally hosts;   /* group: "" */
  size_t rows, runs, quick_runs;
  size_t leaked_runs; /* runs that left processes running ("left running:"
                         in their reason), stopped by prereg */
  char newest[40];    /* latest started_at, or "" */
  /* Page cache before the runs (cached_mib=N in cache_state). */
  int has_cached;
  long cached_min, cached_max;
  report_span *spans; /* per workload x arm of the sheet */
  size_t n_spans, n_arms;
  /* The Raw sheet's columns that hold one value in every row, and that
   * value (the first row's), as text. */
  int raw_same[REPORT_RAW_COLS];
  char *raw_first[REPORT_RAW_COLS];
  double raw_num[REPORT_RAW_COLS]; /* the first row's numbers */
  /* The conditions around the runs: per arm of the sheet and fact
   * (cond[arm * DATA_NFACTS + fact]), over the runs that recorded it; the
   * runs that recorded any, and those a registered bound excluded (their
   * reason starts with DATA_CONDITIONS), per bound. */
  report_cond_spread *cond;
  size_t cond_runs;
  size_t excluded_load, excluded_swap_in, excluded_throttle;
  int oom; /* a copy failed: the facts are short */
} report_row_facts;

/** Starts empty facts for sheet s. CORE_ENOMEM when its spans cannot be
 * allocated. */
core_status report_facts_init(report_row_facts *f, const proto_sheet *s,
                              core_err *err);
/** Counts one row (borrowed for the call); a failed copy sets f->oom. */
void report_facts_add(report_row_facts *f, const proto_sheet *s,
                      const data_row *r);
/** Frees what f owns and zeroes it. */
void report_facts_free(report_row_facts *f);

/** The Conditions section: the registered bounds, the runs each excluded,
 * the spread of each fact per arm, the host's facts per host and the A/A
 * arms' ratios (the host's noise floor); rows without facts are said to
 * have none. */
void report_conditions(const report_input *in, const report_row_facts *f,
                       core_buf *b);

/** The facts of in: in->facts, or worked out from in->rows into *local
 * (free it with report_facts_free when it was used: *used is 1). NULL
 * when out of memory. */
const report_row_facts *report_facts_of(const report_input *in,
                                        report_row_facts *local, int *used);

/** Text of raw column col of r into buf (cap bytes): the CSV's field. */
const char *report_raw_field(const data_row *r, int col, char *buf,
                             size_t cap);
/** The CSV header's name of raw column col (static). */
const char *report_raw_name(int col);

/** Calls fn for each row of in: in->rows, else the data folder read
 * again. */
core_status report_each_row(const report_input *in, data_row_fn fn, void *ctx,
                            core_err *err);

/* Helpers of every page */

/** x with digits significant digits; "n/a" when not finite. */
void report_sig(char *out, size_t cap, double x, int digits);

/** The unit to show a row of values in (seconds as s, ms or µs by the
 * largest median of the cells of workload w, metric m): OUT *factor. */
const char *report_row_unit(const report_input *in, const char *w,
                            const char *m, double *factor);

const analysis_result *report_find_result(const analysis_summary *a,
                                          const char *w, const char *m,
                                          const char *arm);
const analysis_cell *report_find_cell(const analysis_summary *a, const char *w,
                                      const char *m, const char *arm);

/** The status of in's data as every page states it: the analysis's, with
 * UNVERIFIED when the report was written past a failed verification. */
data_status report_status(const report_input *in);

/** A reason as a table shows it: "superseded by amendment N" without the
 * amendment's text (given once, under Deviations). OUT: into buf. */
const char *report_short_reason(const char *reason, char *buf, size_t cap);

/** Width of text in DejaVu Sans at size px, estimated on the wide side,
 * so that a plot's box always holds its labels. */
double report_text_width(const char *text, double size);

/* A sheet with hosts (reports/hosts.c) */

/** Appends to doc->plots one plot per cross-host comparison: each host's
 * ratio and interval, and the cross-host estimate's ("hosts-K-...svg"),
 * with the notes pn under its title. Nothing for a sheet without hosts. */
struct report_plot_notes;
core_status report_host_plots(const report_input *in, report_doc *doc,
                              const struct report_plot_notes *pn,
                              core_err *err);
/** The "Across hosts" section (nothing without hosts). */
void report_hosts_section(core_buf *b, const report_input *in,
                          const report_doc *doc);
/** The host threats of the batch facts, as "- ..." lines, counted in
 * *count: hosts that are one machine, a reboot within or between
 * batches. */
void report_host_threats(const report_input *in, core_buf *b, size_t *count);

/** Appends report.md for in to b (the caller's buffer); doc->plots must
 * be filled already (the overview first). */
void report_markdown(const report_input *in, const report_doc *doc,
                     core_buf *b);

/** Appends provenance.md for in to b. */
void report_provenance(const report_input *in, core_buf *b);

/** The setup section of report.md: hosts, load per batch, tool versions
 * per arm, images and cache states. */
void report_setup(const report_input *in, const report_row_facts *f,
                  core_buf *b);

/** Appends s escaped for Markdown, or a dash when empty. */
void report_md_esc(core_buf *b, const char *s);
/** Appends each line of text (NULL: none) that is not empty as prefix,
 * the line escaped for Markdown and a newline. Out of memory sets
 * b->oom. */
void report_md_lines(core_buf *b, const char *text, const char *prefix);

/** 1 when any version of sum is time-stamped or signed. */
int report_any_proof(const analysis_summary *sum);
/** A version's "stamped TIME by TSA" or "not stamped", then sep, then
 * "signed by `KEY`" or "not signed" (header line and provenance.md). */
void report_proof_words(core_buf *b, const data_registration *r,
                        const char *sep);
/** A replication's sheet (`replicates`): the section What differs from
 * the original, from both protocols and both data folders (the original's
 * under DATA/ID/original/), appended to b; nothing for another sheet. */
void report_replication_differences(core_buf *b, const report_input *in);
/** Appends text (facts.c) as a Markdown code span: delimiters longer than any
 * run of backticks in it, padded with spaces when it starts or ends with one.
 * Not for table cells ('|' would end the cell). */
void report_code_span(core_buf *b, const char *text);

/** The "Sample size" section (plan.c): the sheet's plan block and the
 * pilot, when it has either; nothing otherwise. */
void report_plan_section(core_buf *b, const report_input *in);

/* The notices at the top */

/* Where report.md shows a notice: a line of the status quote, its own
 * quote above the title, or under the title. XLSX shows every one under
 * the Summary's status line. */
enum {
  REPORT_NOTICE_STATUS, /* "> - HEADING: TEXT (see SECTION)." */
  REPORT_NOTICE_TOP,    /* "> **HEADING.** TEXT (see SECTION)." */
  REPORT_NOTICE_HEAD    /* the same, under the title */
};

/** A notice at the top of the report, where it cannot be missed: what
 * the data or the report are that the registered plan is not. */
typedef struct report_notice {
  int where;           /* REPORT_NOTICE_... */
  const char *heading; /* in capitals: "RULE CHANGED AFTER THE PLAN" */
  char *text;          /* newly allocated, without its last full stop;
                          Markdown inline: no markup but code spans in
                          single backticks around text without any */
  const char *section; /* the report's section that says more, or NULL */
  const char *details; /* borrowed: plain text, one item a line, shown
                          after the text and a colon (section unused),
                          or NULL */
} report_notice;

#define REPORT_MAX_NOTICES 16

/** The notices that apply to in, in order (notices.c): the one list
 * that Markdown (so HTML) and XLSX show. Fills out and returns how many;
 * -1 when out of memory. Free with report_notices_free. */
int report_notices(const report_input *in,
                   report_notice out[REPORT_MAX_NOTICES]);
void report_notices_free(report_notice *n, int count);
/** Appends the notices shown at where (REPORT_NOTICE_...) as Markdown;
 * returns how many. Out of memory sets b->oom. */
int report_notices_markdown(core_buf *b, const report_input *in, int where);

/** The notice when the rule changed after the plan
 * (proto_plan_rule_changed), plan.c: 1 with *n filled, 0 when the rule
 * did not change, -1 when out of memory. */
int report_plan_rule_notice(const report_input *in, report_notice *n);

/* The notices of report_notices as every plot shows them under its
 * title: each heading with the first clause of its text (up to "; ",
 * ": " or " ("), without backticks. */
typedef struct report_plot_notes {
  report_plot_note v[REPORT_MAX_NOTICES];
  char *text[REPORT_MAX_NOTICES]; /* owned: v[i].text */
  size_t n;
} report_plot_notes;
/** Fills pn from in; 0, or -1 when out of memory (pn then empty). Free
 * with report_plot_notes_free. */
int report_plot_notes_get(const report_input *in, report_plot_notes *pn);
void report_plot_notes_free(report_plot_notes *pn);

/** The notes in an SVG (svg.c): how much taller and how wide (at least)
 * the picture is for them; _open draws them under the title (at y 18)
 * and shifts what follows down by that height, _close ends the shift.
 * With no note each is 0 or writes nothing. */
double report_svg_notes_height(size_t n);
double report_svg_notes_width(const report_plot_note *notes, size_t n);
void report_svg_notes_open(core_buf *out, const report_plot_note *notes,
                           size_t n);
void report_svg_notes_close(core_buf *out, size_t n);

/* Used by the files of reports/ only */

/** The versions behind a report (libraries.c): "1.1.4" of libxlsxwriter
 * and "0.29.0.gfm.6" of cmark-gfm (static strings). */
const char *report_cmark_version(void);
const char *report_xlsxwriter_version(void);

/** Appends s to b escaped for HTML/XML text and attributes. */
void report_html_escape(core_buf *b, const char *s);

#endif
