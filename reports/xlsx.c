/* xlsx.c: report.xlsx with libxlsxwriter: Summary (with a native chart of
 * the ratios and their intervals), Hypotheses, Deviations, Raw (every
 * row, split across sheets at Excel's row limit), Processes, Provenance.
 * SPDX-License-Identifier: MIT
 *
 * The workbook is written in constant-memory mode: each sheet's rows go
 * out in order and are flushed, so a million raw rows cost little memory.
 * workbook_close() is the commit point; nothing before it is final.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xlsxwriter.h>

#include "reports/report.h"
#include "reports/report_internal.h"

#define MAX_CELL 32767         /* Excel's limit on a cell's text */
#define ROWS_PER_SHEET 1048576 /* Excel's limit, header included */

const char *report_xlsxwriter_version(void) {
  return LXW_VERSION;
}

typedef struct xctx {
  lxw_workbook *wb;
  lxw_worksheet *ws;
  const char *sheet; /* name, for messages */
  lxw_error e;       /* the first error */
  lxw_format *bold, *num, *ratio, *wrap, *stamp;
  lxw_format *v_slower, *v_faster, *v_tie, *v_other, *h_held, *h_not;
  const report_input *in;
} xctx;

/* Every write goes through these: the first failure is kept, and later
 * writes are skipped so that the message names the first problem. */
static void put_str(xctx *x, lxw_row_t r, lxw_col_t c, const char *s,
                    lxw_format *f) {
  char *cut = NULL;
  /* An empty string is an empty cell: writing nothing keeps the Raw
   * sheet's XML (and its compression time) smaller. */
  if (x->e || !s || !*s)
    return;
  if (strlen(s) > MAX_CELL - 100) {
    /* A long diff or reason would make the whole write fail; keep what
     * fits and say so. */
    cut = core_asprintf("%.*s… (cut: longer than an Excel cell holds)",
                        MAX_CELL - 200, s);
    if (!cut) {
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
      return;
    }
    s = cut;
  }
  x->e = worksheet_write_string(x->ws, r, c, s, f);
  core_free(cut);
}

static void put_num(xctx *x, lxw_row_t r, lxw_col_t c, double v,
                    lxw_format *f) {
  if (x->e)
    return;
  if (!isfinite(v))
    x->e = worksheet_write_string(x->ws, r, c, "n/a", NULL);
  else
    x->e = worksheet_write_number(x->ws, r, c, v, f);
}

static int add_sheet(xctx *x, const char *name) {
  if (x->e)
    return 0;
  x->ws = workbook_add_worksheet(x->wb, name);
  x->sheet = name;
  if (!x->ws) {
    x->e = LXW_ERROR_SHEETNAME_ALREADY_USED;
    return 0;
  }
  return 1;
}

/* The UNVERIFIED stamp, first row of every sheet when --force was used.
 * Returns the first row free for content. */
static lxw_row_t stamp(xctx *x) {
  if (!x->in->unverified)
    return 0;
  put_str(x, 0, 0,
          "UNVERIFIED: prereg verify found problems with this data; the "
          "report was written with --force.",
          x->stamp);
  return 1;
}

static void header(xctx *x, lxw_row_t r, const char *const *names, size_t n) {
  for (size_t i = 0; i < n; i++)
    put_str(x, r, (lxw_col_t)i, names[i], x->bold);
}

static lxw_format *verdict_format(xctx *x, const char *v) {
  if (!v)
    return x->v_other;
  if (strcmp(v, "slower") == 0 || strstr(v, "more"))
    return x->v_slower;
  if (strcmp(v, "faster") == 0 || strstr(v, "less"))
    return x->v_faster;
  if (strcmp(v, "tie") == 0)
    return x->v_tie;
  return x->v_other;
}

static void summary(xctx *x) {
  static const char *const h[] = {
      "Workload", "Metric",  "Arm",          "Reference", "n",
      "n (ref)",  "Median",  "Median (ref)", "Unit",      "Ratio",
      "CI low",   "CI high", "Verdict",      "Label"};
  const analysis_summary *a = x->in->summary;
  lxw_row_t r0, r;
  if (!add_sheet(x, "Summary"))
    return;
  r0 = stamp(x);
  put_str(x, r0, 0,
          x->in->sheet->title ? x->in->sheet->title : x->in->sheet->id,
          x->bold);
  header(x, r0 + 1, h, sizeof h / sizeof h[0]);
  r = r0 + 2;
  for (size_t i = 0; i < a->n_results && !x->e; i++, r++) {
    const analysis_result *res = &a->results[i];
    char *label =
        core_asprintf("%s / %s / %s%s%s", res->workload, res->metric, res->arm,
                      !a->across  ? ""
                      : res->host ? " on "
                                  : " across hosts",
                      res->host ? res->host : "");
    put_str(x, r, 0, res->workload, NULL);
    put_str(x, r, 1, res->metric, NULL);
    put_str(x, r, 2, res->arm, NULL);
    put_str(x, r, 3, res->reference, NULL);
    put_num(x, r, 4, (double)res->n, NULL);
    put_num(x, r, 5, (double)res->n_reference, NULL);
    put_num(x, r, 6, res->median, x->num);
    put_num(x, r, 7, res->median_reference, x->num);
    put_str(x, r, 8, proto_metric_unit(res->metric), NULL);
    put_num(x, r, 9, res->ratio, x->ratio);
    put_num(x, r, 10, res->ci_low, x->ratio);
    put_num(x, r, 11, res->ci_high, x->ratio);
    put_str(x, r, 12, res->verdict, verdict_format(x, res->verdict));
    if (!label)
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    put_str(x, r, 13, label, NULL);
    core_free(label);
  }
  if (!x->e)
    x->e = worksheet_set_column(x->ws, 0, 3, 16, NULL);
  if (!x->e)
    x->e = worksheet_set_column(x->ws, 13, 13, 36, NULL);
  /* A native chart of the ratios with their intervals: a line chart's
   * (line series without lines) high-low lines are the intervals and the
   * diamond is the ratio (libxlsxwriter has no custom error bars and no
   * stock chart), on a log axis. */
  if (!x->e && a->n_results) {
    lxw_chart *ch = workbook_add_chart(x->wb, LXW_CHART_LINE);
    lxw_chart_series *sh, *sl, *sr;
    lxw_row_t first = r0 + 2, last = r - 1;
    lxw_chart_line none = {0};
    none.none = LXW_TRUE;
    if (!ch) {
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
      return;
    }
    sh = chart_add_series(ch, NULL, NULL);
    sl = chart_add_series(ch, NULL, NULL);
    sr = chart_add_series(ch, NULL, NULL);
    if (!sh || !sl || !sr) {
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
      return;
    }
    chart_series_set_categories(sh, "Summary", first, 13, last, 13);
    chart_series_set_categories(sl, "Summary", first, 13, last, 13);
    chart_series_set_categories(sr, "Summary", first, 13, last, 13);
    chart_series_set_values(sh, "Summary", first, 11, last, 11);
    chart_series_set_values(sl, "Summary", first, 10, last, 10);
    chart_series_set_values(sr, "Summary", first, 9, last, 9);
    chart_series_set_name(sh, "CI high");
    chart_series_set_name(sl, "CI low");
    chart_series_set_name(sr, "Ratio");
    chart_series_set_line(sh, &none);
    chart_series_set_line(sl, &none);
    chart_series_set_line(sr, &none);
    chart_series_set_marker_type(sh, LXW_CHART_MARKER_LONG_DASH);
    chart_series_set_marker_type(sl, LXW_CHART_MARKER_LONG_DASH);
    chart_series_set_marker_type(sr, LXW_CHART_MARKER_DIAMOND);
    chart_set_high_low_lines(ch, NULL);
    chart_title_set_name(ch, "Ratio to the reference, with CI");
    chart_axis_set_log_base(ch->y_axis, 10);
    chart_axis_set_name(ch->y_axis, "ratio (log scale)");
    x->e = worksheet_insert_chart(x->ws, r + 1, 0, ch);
  }
}

static void hypotheses(xctx *x) {
  static const char *const h[] = {"ID", "Says", "Verdict", "Reason",
                                  "Original rule"};
  const analysis_summary *a = x->in->summary;
  lxw_row_t r;
  if (!add_sheet(x, "Hypotheses"))
    return;
  r = stamp(x);
  header(x, r++, h, a->original ? 5 : 4);
  for (size_t i = 0; i < a->n_hypotheses; i++, r++) {
    const analysis_hypothesis *hy = &a->hypotheses[i];
    char *id = hy->host ? core_asprintf("%s on %s", hy->id, hy->host)
                        : core_strdup(hy->id);
    if (!id)
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    put_str(x, r, 0, id, NULL);
    core_free(id);
    put_str(x, r, 1, hy->says, x->wrap);
    put_str(x, r, 2, proto_outcome_word(hy->outcome),
            hy->outcome == PROTO_HELD       ? x->h_held
            : hy->outcome == PROTO_NOT_HELD ? x->h_not
                                            : x->v_other);
    put_str(x, r, 3, hy->reason, x->wrap);
    for (size_t j = 0; a->original && j < a->original->n_hypotheses; j++)
      if (strcmp(a->original->hypotheses[j].id, hy->id) == 0)
        put_str(x, r, 4,
                proto_outcome_word(a->original->hypotheses[j].outcome), NULL);
  }
  if (!x->e)
    x->e = worksheet_set_column(x->ws, 1, 1, 50, NULL);
  if (!x->e)
    x->e = worksheet_set_column(x->ws, 3, 3, 50, NULL);
}

static void deviations(xctx *x) {
  static const char *const h[] = {"Amendment",   "Dated", "Recorded",
                                  "Runs before", "Why",   "Workloads affected",
                                  "Diff"};
  lxw_row_t r;
  if (!add_sheet(x, "Deviations"))
    return;
  r = stamp(x);
  header(x, r++, h, 7);
  if (x->in->n_amendments == 0)
    put_str(x, r, 0, "None.", NULL);
  for (size_t i = 0; i < x->in->n_amendments; i++, r++) {
    const report_amendment *m = &x->in->amendments[i];
    put_num(x, r, 0, m->number, NULL);
    put_str(x, r, 1, m->date, NULL);
    put_str(x, r, 2, m->filed_at, NULL);
    if (m->runs_before >= 0)
      put_num(x, r, 3, (double)m->runs_before, NULL);
    else
      put_str(x, r, 3, "unknown", NULL);
    put_str(x, r, 4, m->why, x->wrap);
    put_str(x, r, 5, m->affected, x->wrap);
    put_str(x, r, 6, m->diff, x->wrap);
  }
  if (!x->e)
    x->e = worksheet_set_column(x->ws, 4, 6, 45, NULL);
}

static void raw(xctx *x) {
  static const char *const h[] = {
      "sheet_version", "sheet_sha256", "batch",     "source",
      "workload",      "arm",          "round",     "seq",
      "run_id",        "started_at",   "host",      "image_digest",
      "cache_policy",  "cache_state",  "exit_code", "valid",
      "reason",        "metric",       "value",     "quick"};
  const data_rowset *rs = x->in->rows;
  size_t done = 0, part = 0, total = rs ? rs->n : 0;
  do {
    char name[32];
    lxw_row_t r, r0, cap;
    part++;
    if (part == 1)
      snprintf(name, sizeof name, "Raw");
    else
      snprintf(name, sizeof name, "Raw %zu", part);
    if (!add_sheet(x, name))
      return;
    r0 = stamp(x);
    if (part > 1) {
      char note[128];
      snprintf(note, sizeof note,
               "Continued from the previous Raw sheet: "
               "rows %zu onwards.",
               done + 1);
      put_str(x, r0++, 0, note, x->bold);
    }
    header(x, r0, h, 20);
    if (!x->e)
      x->e = worksheet_autofilter(x->ws, r0, 0, r0, 19);
    worksheet_freeze_panes(x->ws, r0 + 1, 0);
    cap = ROWS_PER_SHEET - r0 - 1;
    /* Constant-memory mode cannot go back to a row, so the note that the
     * rows go on is written now, beside the header. */
    if (total - done > cap)
      put_str(x, r0, 20, "Continued on the next Raw sheet.", x->bold);
    for (r = r0 + 1; done < total && r - r0 - 1 < cap && !x->e; r++, done++) {
      const data_row *d = &rs->rows[done];
      put_num(x, r, 0, d->sheet_version, NULL);
      put_str(x, r, 1, d->sheet_sha256, NULL);
      put_str(x, r, 2, d->batch, NULL);
      put_str(x, r, 3, d->source, NULL);
      put_str(x, r, 4, d->workload, NULL);
      put_str(x, r, 5, d->arm, NULL);
      put_num(x, r, 6, (double)d->round, NULL);
      put_num(x, r, 7, (double)d->seq, NULL);
      put_str(x, r, 8, d->run_id, NULL);
      put_str(x, r, 9, d->started_at, NULL);
      put_str(x, r, 10, d->host, NULL);
      put_str(x, r, 11, d->image_digest, NULL);
      put_str(x, r, 12, d->cache_policy, NULL);
      put_str(x, r, 13, d->cache_state, NULL);
      put_str(x, r, 14, d->exit_code, NULL);
      put_num(x, r, 15, d->valid, NULL);
      put_str(x, r, 16, d->reason, NULL);
      put_str(x, r, 17, d->metric, NULL);
      if (d->has_value)
        put_num(x, r, 18, d->value, NULL);
      put_num(x, r, 19, d->quick, NULL);
    }
  } while (done < total && !x->e);
}

static void processes(xctx *x) {
  const data_report_inputs *in = x->in->extra;
  lxw_row_t r;
  size_t tables = 0;
  if (!add_sheet(x, "Processes"))
    return;
  r = stamp(x);
  put_str(x, r++, 0,
          "Per-run process lists found in the batch folders "
          "(what pss_mib summed).",
          x->bold);
  for (size_t b = 0; in && b < in->n_batches; b++)
    for (size_t t = 0; t < in->batches[b].n_procs && !x->e; t++) {
      const data_table *tb = &in->batches[b].procs[t];
      tables++;
      r++;
      put_str(x, r, 0, "batch", x->bold);
      put_str(x, r, 1, "file", x->bold);
      for (size_t c = 0; c < tb->n_cols; c++)
        put_str(x, r, (lxw_col_t)(c + 2), tb->header[c], x->bold);
      r++;
      for (size_t i = 0; i < tb->n_rows && !x->e; i++, r++) {
        put_str(x, r, 0, in->batches[b].id, NULL);
        put_str(x, r, 1, tb->source, NULL);
        for (size_t c = 0; c < tb->n_cols; c++) {
          const char *v = tb->cells[i * tb->n_cols + c];
          char *end;
          double d = strtod(v, &end);
          /* Numbers stay numbers, so that PSS sums in the sheet. */
          if (*v && *end == '\0' && isfinite(d))
            put_num(x, r, (lxw_col_t)(c + 2), d, NULL);
          else
            put_str(x, r, (lxw_col_t)(c + 2), v, NULL);
        }
      }
    }
  if (tables == 0)
    put_str(x, r + 1, 0, "None: no batch holds a process list.", NULL);
}

static void provenance(xctx *x) {
  const data_report_inputs *in = x->in->extra;
  char sw[256];
  lxw_row_t r;
  if (!add_sheet(x, "Provenance"))
    return;
  r = stamp(x);
  put_str(x, r, 0, "Sheet SHA-256", x->bold);
  put_str(x, r++, 1, x->in->sheet->sha256, NULL);
  put_str(x, r, 0, "Registered", x->bold);
  put_str(x, r++, 1, x->in->registered_at, NULL);
  snprintf(sw, sizeof sw, "%s %s; %s; GSL %s; libxlsxwriter %s; cmark-gfm %s",
           PREREG_NAME, PREREG_VERSION, proto_lua_version(),
           analysis_gsl_version(), LXW_VERSION, report_cmark_version());
  put_str(x, r, 0, "Software", x->bold);
  put_str(x, r++, 1, sw, NULL);
  r++;
  put_str(x, r, 0, "File", x->bold);
  put_str(x, r++, 1, "SHA-256", x->bold);
  for (size_t i = 0; in && i < in->n_manifest; i++, r++) {
    put_str(x, r, 0, in->manifest[i].path, NULL);
    put_str(x, r, 1, in->manifest[i].sha256, NULL);
  }
  if (!x->e)
    x->e = worksheet_set_column(x->ws, 0, 0, 30, NULL);
  if (!x->e)
    x->e = worksheet_set_column(x->ws, 1, 1, 70, NULL);
}

/* The workbook's creation time, from the data and never the clock: the
 * newest run, else the registration, else a fixed date (libxlsxwriter
 * takes 0 as "now"). */
static time_t created_time(const char *newest, const char *registered_at) {
  long long t;
  if (newest && core_parse_utc(newest, &t, NULL) == CORE_OK && t > 0)
    return (time_t)t;
  if (registered_at && core_parse_utc(registered_at, &t, NULL) == CORE_OK &&
      t > 0)
    return (time_t)t;
  return (time_t)946684800; /* 2000-01-01T00:00:00Z */
}

static lxw_format *fmt(lxw_workbook *wb, int bold, const char *num,
                       lxw_color_t bg, int wrap) {
  lxw_format *f = workbook_add_format(wb);
  if (!f)
    return NULL;
  if (bold)
    format_set_bold(f);
  if (num)
    format_set_num_format(f, num);
  if (bg)
    format_set_bg_color(f, bg);
  if (wrap)
    format_set_text_wrap(f);
  return f;
}

core_status report_write_xlsx(const report_input *in, const char *path,
                              core_err *err) {
  lxw_workbook_options o = {0};
  lxw_doc_properties props = {0};
  report_row_facts facts;
  xctx x;
  lxw_error e;
  memset(&x, 0, sizeof x);
  x.in = in;
  o.constant_memory = LXW_TRUE;
  /* Big data: zip64 lifts the 4 GiB limit on a part of the package. */
  o.use_zip64 = in->rows && in->rows->n > 2000000 ? LXW_TRUE : LXW_FALSE;
  x.wb = workbook_new_opt(path, &o);
  if (!x.wb)
    return core_fail(err, CORE_EXLSX,
                     "%s: libxlsxwriter could not start "
                     "the workbook",
                     path);
  x.bold = fmt(x.wb, 1, NULL, 0, 0);
  x.num = fmt(x.wb, 0, "0.0000", 0, 0);
  x.ratio = fmt(x.wb, 0, "0.000\"×\"", 0, 0);
  x.wrap = fmt(x.wb, 0, NULL, 0, 1);
  x.stamp = fmt(x.wb, 1, NULL, 0xFF9999, 0);
  x.v_slower = fmt(x.wb, 1, NULL, 0xF4CCCC, 0);
  x.v_faster = fmt(x.wb, 1, NULL, 0xD9EAD3, 0);
  x.v_tie = fmt(x.wb, 1, NULL, 0xCFE2F3, 0);
  x.v_other = fmt(x.wb, 1, NULL, 0xEEEEEE, 0);
  x.h_held = fmt(x.wb, 1, NULL, 0xD9EAD3, 0);
  x.h_not = fmt(x.wb, 1, NULL, 0xF4CCCC, 0);
  if (!x.bold || !x.num || !x.ratio || !x.wrap || !x.stamp || !x.v_slower ||
      !x.v_faster || !x.v_tie || !x.v_other || !x.h_held || !x.h_not)
    x.e = LXW_ERROR_MEMORY_MALLOC_FAILED;
  report_facts_of_rows(in, &facts);
  props.title = in->sheet->title;
  props.author = in->sheet->author;
  props.comments = (char *)"Written by " PREREG_NAME " " PREREG_VERSION;
  props.created = created_time(facts.newest, in->registered_at);
  if (!x.e)
    x.e = workbook_set_properties(x.wb, &props);
  summary(&x);
  hypotheses(&x);
  deviations(&x);
  raw(&x);
  processes(&x);
  provenance(&x);
  if (x.e) {
    const char *sheet = x.sheet ? x.sheet : "workbook";
    core_fail(err, CORE_EXLSX, "%s: sheet %s: %s", path, sheet,
              lxw_strerror(x.e));
    workbook_close(x.wb); /* frees; the partial file is not the result */
    return CORE_EXLSX;
  }
  e = workbook_close(x.wb);
  if (e != LXW_NO_ERROR)
    return core_fail(err, CORE_EXLSX, "%s: %s (is the folder writable?)", path,
                     lxw_strerror(e));
  return CORE_OK;
}
