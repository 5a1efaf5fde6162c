/* xlsx.c: report.xlsx with libxlsxwriter: Summary (the hypotheses, every
 * arm's median, spread and ratio, verdicts coloured, and a native chart of
 * the ratios with their intervals), Hypotheses, Deviations, Raw (the
 * rows, up to REPORT_RAW_MAX), Processes, Provenance, Manifest (Raw and
 * Manifest hidden, so not printed).
 * SPDX-License-Identifier: MIT
 *
 * Made to print: every sheet fits one page wide, columns are as wide as
 * their text (up to a limit, then wrapped, rows as tall as the lines they
 * hold), numbers keep three significant digits. The workbook is written in
 * constant-memory mode: each sheet's rows go out in order and are flushed,
 * and the raw rows are read again from the data folder one at a time.
 * workbook_close() is the commit point; nothing before it is final.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xlsxwriter.h>

#include "reports/report.h"
#include "reports/report_internal.h"

#define MAX_CELL 32767 /* Excel's limit on a cell's text */
#define MAX_COLS 24    /* the workbook's widest sheet, a layout constant */
#define WRAP_AT 60     /* characters: wider text wraps */
#define LINE_PT 15.0
#define CHART_MAX 120 /* comparisons in the chart (a series each) */

typedef struct xctx {
  lxw_workbook *wb;
  lxw_worksheet *ws;
  const char *sheet; /* name, for messages */
  lxw_error e;       /* the first error */
  lxw_format *bold, *title, *wrap, *stamp, *mono, *head, *label;
  lxw_format *v_worse, *v_better, *v_tie, *v_other, *h_held, *h_not;
  lxw_format *h_other;             /* an outcome neither held nor not held */
  lxw_format *num[10], *ratio[10]; /* by decimals */
  const report_input *in;
  /* The widths the current sheet's columns need, in characters, while
   * measure is set (the first rows of Raw tell enough). */
  double width[MAX_COLS];
  int measure;
} xctx;

/* Writing cells */

/* Characters as a column shows them (UTF-8 code points). */
static size_t chars(const char *s) {
  size_t n = 0;
  for (; s && *s; s++)
    n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static void need(xctx *x, lxw_col_t c, double w) {
  if (x->measure && c < MAX_COLS && w > x->width[c])
    x->width[c] = w;
}

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
  if (x->measure)
    need(x, c, (double)chars(s) * (f == x->bold || f == x->head ? 1.1 : 1.0));
  x->e = worksheet_write_string(x->ws, r, c, s, f);
  core_free(cut);
}

/* A number with the format f; its width as f shows it (decimals d). */
static void put_num(xctx *x, lxw_row_t r, lxw_col_t c, double v, lxw_format *f,
                    int d) {
  char t[64];
  if (x->e)
    return;
  if (!isfinite(v)) {
    put_str(x, r, c, "n/a", NULL);
    return;
  }
  if (x->measure) {
    snprintf(t, sizeof t, "%.*f", d < 0 ? 0 : d, v);
    need(x, c, (double)strlen(t) + 1.5);
  }
  x->e = worksheet_write_number(x->ws, r, c, v, f);
}

static int add_sheet(xctx *x, const char *name) {
  if (x->e)
    return 0;
  x->ws = workbook_add_worksheet(x->wb, name);
  x->sheet = name;
  x->measure = 1;
  memset(x->width, 0, sizeof x->width);
  if (!x->ws) {
    x->e = LXW_ERROR_SHEETNAME_ALREADY_USED;
    return 0;
  }
  /* Printed: A4, one page wide, as many pages down as it takes. */
  worksheet_set_paper(x->ws, 9);
  worksheet_fit_to_pages(x->ws, 1, 0);
  worksheet_set_margins(x->ws, 0.4, 0.4, 0.5, 0.5);
  return 1;
}

/* The widths the sheet's text needs, each column at most cap wide (its
 * cells wrap beyond). */
static void fit_columns(xctx *x, double cap) {
  for (lxw_col_t c = 0; c < MAX_COLS && !x->e; c++)
    if (x->width[c] > 0)
      x->e =
          worksheet_set_column(x->ws, c, c, fmin(x->width[c] + 2, cap), NULL);
}

/* How tall a row must be for text wrapped at width characters. */
static double row_height(const char *text, double width) {
  double lines = 0, col = 0;
  for (const char *p = text; p && *p; p++) {
    if (*p == '\n') {
      lines++;
      col = 0;
    } else if (((unsigned char)*p & 0xC0) != 0x80 && ++col > width) {
      lines++;
      col = 1;
    }
  }
  lines++;
  return fmin(LINE_PT * lines + 3, 409); /* Excel's tallest row */
}

/* " (provisional)" after a verdict or outcome on incomplete or quick
 * data. */
static const char *prov(const analysis_summary *a) {
  return a && a->provisional ? " (provisional)" : "";
}

static void header(xctx *x, lxw_row_t r, const char *const *names, size_t n) {
  for (size_t i = 0; i < n; i++)
    put_str(x, r, (lxw_col_t)i, names[i], x->head);
}

/* Decimals that show v with 3 significant digits (0 to 9). */
static int decimals(double v, int digits) {
  int d;
  if (!isfinite(v) || v == 0)
    return 2;
  d = digits - 1 - (int)floor(log10(fabs(v)));
  return d < 0 ? 0 : d > 9 ? 9 : d;
}

/* Summary */

static lxw_format *verdict_format(xctx *x, const analysis_result *r) {
  if (!r)
    return x->v_other;
  if (r->worse > 0)
    return x->v_worse;
  if (r->worse < 0)
    return x->v_better;
  if (strcmp(r->verdict, "inconclusive") != 0)
    return x->v_tie;
  return x->v_other;
}

/* Text across the sheet, cut into lines of at most width characters at
 * spaces, one row each (the text runs over the empty cells beside it;
 * constant-memory mode cannot merge cells). Returns the next free row. */
static lxw_row_t lines_across(xctx *x, lxw_row_t r, const char *t,
                              size_t width, lxw_format *f) {
  const char *p = t;
  double w0 = x->width[0];
  while (p && *p && !x->e) {
    const char *q = p, *cut = NULL;
    size_t n = 0;
    char *line;
    for (; *q && n < width; q++) {
      if (*q == ' ')
        cut = q;
      n += ((unsigned char)*q & 0xC0) != 0x80;
    }
    /* The rest fits; else the last space; else a word longer than a
     * line, cut. */
    if (!*q || !cut)
      cut = q;
    line = core_strndup(p, (size_t)(cut - p));
    if (!line) {
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
      break;
    }
    put_str(x, r++, 0, line, f);
    core_free(line);
    p = *cut == ' ' ? cut + 1 : cut;
  }
  x->width[0] = w0; /* text across sets no column's width */
  return r;
}

/* A notice's details, each line not empty as "- LINE" across the
 * sheet. Returns the next free row. */
static lxw_row_t notice_details(xctx *x, lxw_row_t r, const char *details) {
  for (const char *p = details; *p && !x->e;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char *line = len ? core_asprintf("- %.*s", (int)len, p) : NULL;
    if (len && !line)
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    else if (line)
      r = lines_across(x, r, line, 120, x->stamp);
    core_free(line);
    p += len + (nl ? 1 : 0);
  }
  return r;
}

/* The report's notices (report_notices: the list Markdown shows at the
 * top), each from row r across the sheet, its code spans as plain text.
 * Returns the next free row. */
static lxw_row_t notices(xctx *x, lxw_row_t r) {
  report_notice n[REPORT_MAX_NOTICES];
  int count = report_notices(x->in, n);
  if (count < 0)
    x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
  for (int i = 0; i < count && !x->e; i++) {
    core_buf b;
    core_buf_init(&b);
    core_buf_printf(&b, "%s: ", n[i].heading);
    for (const char *p = n[i].text; *p; p++)
      if (*p != '`')
        core_buf_append(&b, p, 1);
    if (n[i].details)
      core_buf_puts(&b, ":");
    else if (n[i].section)
      core_buf_printf(&b, " (see %s in report.md or report.html).",
                      n[i].section);
    else
      core_buf_puts(&b, ".");
    if (b.oom)
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    else
      r = lines_across(x, r, b.data, 120, x->stamp);
    core_buf_free(&b);
    if (n[i].details)
      r = notice_details(x, r, n[i].details);
  }
  report_notices_free(n, count);
  return r;
}

/* The first rows of a sheet: on the Summary (status set) the status
 * line, how the data stand to the plan, and the report's notices, where
 * they cannot be missed (the UNVERIFIED one among them); on every other
 * sheet the UNVERIFIED stamp when --force was used. Returns the first row
 * free for content. */
static lxw_row_t stamp(xctx *x, int status) {
  const analysis_summary *a = x->in->summary;
  lxw_row_t r = 0;
  if (status && a) {
    char line[256], *text;
    data_status st = report_status(x->in);
    data_status_line(&st, line, sizeof line);
    text = core_asprintf("Status: %s%s", line,
                         a->provisional ? " (verdicts are provisional)" : "");
    if (!text)
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    put_str(x, r++, 0, text, x->bold);
    core_free(text);
    r = notices(x, r);
  } else if (x->in->unverified)
    put_str(x, r++, 0,
            "UNVERIFIED: prereg verify found problems with this data; the "
            "report was written with --force.",
            x->stamp);
  x->width[0] = 0; /* the stamps run across; they set no width */
  return r;
}

/* Hypotheses as sentences, across the table. */
static lxw_row_t summary_sentences(xctx *x, lxw_row_t r, size_t across) {
  const analysis_summary *a = x->in->summary;
  for (size_t i = 0; i < a->n_hypotheses && !x->e; i++) {
    const analysis_hypothesis *h = &a->hypotheses[i];
    char *t = core_asprintf(
        "%s %s%s: %s%s%s%s", h->id, proto_outcome_word(h->outcome), prov(a),
        h->says, h->reason && *h->reason ? " (" : "",
        h->reason ? h->reason : "", h->reason && *h->reason ? ")" : "");
    if (!t) {
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
      break;
    }
    r = lines_across(x, r, t, across, NULL);
    core_free(t);
  }
  return r;
}

/* A result's verdict (provisional on incomplete or quick data) and, when
 * the registered sample is analysed too, its verdict there. */
static void verdict_cells(xctx *x, lxw_row_t r, const analysis_result *res) {
  const analysis_summary *a = x->in->summary;
  const analysis_result *g;
  char *v = core_asprintf("%s%s", res->verdict, prov(a));
  if (!v)
    x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
  put_str(x, r, 15, v, verdict_format(x, res));
  core_free(v);
  if (a->original &&
      !analysis_registered_has(a, res->workload, res->metric, res->arm)) {
    put_str(x, r, 16, "not in the registered plan", x->v_other);
    return;
  }
  if (!a->original || !(g = report_find_result(a->original, res->workload,
                                               res->metric, res->arm)))
    return;
  v = core_asprintf("%s%s (n=%zu)%s", g->verdict, prov(a->original), g->n,
                    analysis_same_decision(g, res) ? "" : ", changed");
  if (!v)
    x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
  put_str(x, r, 16, v, verdict_format(x, g));
  core_free(v);
}

/* One cell's row: workload, metric, arm, n, median, unit, IQR, extremes,
 * and beside the reference the ratio, CI and verdict. */
static void summary_row(xctx *x, lxw_row_t r, const analysis_cell *c) {
  const report_input *in = x->in;
  const analysis_result *res =
      report_find_result(in->summary, c->workload, c->metric, c->arm);
  int ref =
      in->summary->reference && strcmp(c->arm, in->summary->reference) == 0;
  int d = decimals(c->median, 3), dr = res ? decimals(res->ratio, 3) : 2;
  /* A spread far below its median keeps two digits of its own. */
  int di = decimals(c->q3 - c->q1, 2) > d ? decimals(c->q3 - c->q1, 2) : d;
  put_str(x, r, 0, c->workload, NULL);
  put_str(x, r, 1, c->metric, NULL);
  put_str(x, r, 2, c->arm, NULL);
  put_num(x, r, 3, (double)c->n_valid, NULL, 0);
  if (c->n_valid) {
    put_num(x, r, 4, c->median, x->num[d], d);
    put_str(x, r, 5, proto_metric_unit_of(in->sheet, c->metric), NULL);
    put_num(x, r, 6, c->q3 - c->q1, x->num[di], di);
    put_num(x, r, 7, c->min, x->num[d], d);
    put_num(x, r, 8, c->max, x->num[d], d);
  }
  if (ref) {
    put_str(x, r, 15, "reference", x->v_other);
    return;
  }
  if (!res) {
    put_str(x, r, 15, "no comparison", x->v_other);
    return;
  }
  put_num(x, r, 9, res->ratio, x->ratio[dr], dr + 1);
  put_num(x, r, 10, res->ci_low, x->ratio[dr], dr + 1);
  put_num(x, r, 11, res->ci_high, x->ratio[dr], dr + 1);
  /* The difference in the metric's unit, to the median's decimals. */
  put_num(x, r, 12, res->difference, x->num[d], d);
  put_num(x, r, 13, res->difference_ci_low, x->num[d], d);
  put_num(x, r, 14, res->difference_ci_high, x->num[d], d);
  verdict_cells(x, r, res);
}

/* Whether a comparison can be drawn on a log axis. */
static int drawable(const analysis_result *r) {
  return r->ci_low > 0 && r->ci_high >= r->ratio && r->ratio >= r->ci_low &&
         isfinite(r->ci_high);
}

/* The chart's log axis: from the decade below the lowest interval end
 * (or 0.9) to the decade above the highest (or 1.2). */
static void chart_axis(const analysis_summary *a, double *lo, double *hi) {
  *lo = 1;
  *hi = 1;
  for (size_t i = 0; i < a->n_results; i++)
    if (drawable(&a->results[i])) {
      *lo = fmin(*lo, a->results[i].ci_low);
      *hi = fmax(*hi, a->results[i].ci_high);
    }
  *lo = pow(10, floor(log10(fmin(*lo, 0.9))));
  *hi = pow(10, ceil(log10(fmax(*hi, 1.2))));
}

/* The chart's numbers, on a hidden sheet: per comparison its label, the
 * interval's low end (the invisible start of its bar), then the bar from
 * there to the ratio and from the ratio to the high end. Each part is
 * drawn at least CHART_MIN_PART of the axis wide, so that a narrow
 * interval (equal values in every run) still shows its bar; the label
 * gives the numbers. OUT: the axis' bounds. */
#define CHART_MIN_PART 0.006
static size_t chart_data(xctx *x, double *lo, double *hi) {
  const analysis_summary *a = x->in->summary;
  size_t n = 0;
  if (!add_sheet(x, "Chart data"))
    return 0;
  worksheet_hide(x->ws);
  chart_axis(a, lo, hi);
  double part = pow(*hi / *lo, CHART_MIN_PART);
  for (size_t i = 0; i < a->n_results && n < CHART_MAX && !x->e; i++) {
    const analysis_result *res = &a->results[i];
    char *label;
    if (!drawable(res))
      continue;
    label = core_asprintf("%s · %s · %s: %.3g× %s", res->workload, res->metric,
                          res->arm, res->ratio, res->verdict);
    if (!label) {
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
      break;
    }
    put_str(x, (lxw_row_t)n, 0, label, NULL);
    core_free(label);
    double l = fmax(*lo, fmin(res->ci_low, res->ratio / part));
    double h = fmin(*hi, fmax(res->ci_high, res->ratio * part));
    put_num(x, (lxw_row_t)n, 1, l, NULL, 3);
    put_num(x, (lxw_row_t)n, 2, res->ratio - l, NULL, 3);
    put_num(x, (lxw_row_t)n, 3, h - res->ratio, NULL, 3);
    n++;
  }
  return n;
}

/* A colour per verdict: worse red, better green, a tie blue, the rest
 * grey; dark from the low end to the ratio, light from it to the high
 * end, so the ratio is where the two meet. */
static lxw_color_t verdict_colour(const analysis_result *r, int light) {
  if (r->worse > 0)
    return light ? 0xE6A39B : 0xB03A2E;
  if (r->worse < 0)
    return light ? 0x9ED3AE : 0x1E7B3C;
  if (strcmp(r->verdict, "inconclusive") != 0)
    return light ? 0x9DC3E6 : 0x1F4E79;
  return light ? 0xC9C9C9 : 0x6B6B6B;
}

/* Per-point fills of one segment. */
static void colour_points(xctx *x, lxw_chart_series *s, int light,
                          lxw_chart_fill *fills, lxw_chart_point *pts,
                          lxw_chart_point **list, size_t n) {
  const analysis_summary *a = x->in->summary;
  size_t k = 0;
  for (size_t i = 0; i < a->n_results && k < n; i++) {
    if (!drawable(&a->results[i]))
      continue;
    fills[k].color = verdict_colour(&a->results[i], light);
    pts[k].fill = &fills[k];
    list[k] = &pts[k];
    k++;
  }
  list[k] = NULL;
  if (!x->e)
    x->e = chart_series_set_points(s, list);
}

/* The ratios as a chart of floating bars, each interval from its low to
 * its high end on a log axis, parted at the ratio (libxlsxwriter has no
 * custom error bars; LibreOffice draws no high-low lines outside stock
 * charts). */
static void summary_chart(xctx *x, lxw_worksheet *summary, lxw_row_t at) {
  double lo, hi;
  size_t n = chart_data(x, &lo, &hi);
  lxw_chart *ch;
  lxw_chart_series *s[3];
  lxw_chart_fill none = {0}, *fills;
  lxw_chart_line no_line = {0};
  lxw_chart_point *pts, **list;
  lxw_chart_options o = {0};
  if (x->e || n == 0)
    return;
  ch = workbook_add_chart(x->wb, LXW_CHART_BAR_STACKED);
  fills = core_calloc(n, sizeof *fills);
  pts = core_calloc(n, sizeof *pts);
  list = core_calloc(n + 1, sizeof *list);
  if (!ch || !fills || !pts || !list) {
    x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    goto done;
  }
  for (int k = 0; k < 3; k++) {
    if (!(s[k] = chart_add_series(ch, NULL, NULL))) {
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
      goto done;
    }
    chart_series_set_categories(s[k], "Chart data", 0, 0, (lxw_row_t)n - 1, 0);
    chart_series_set_values(s[k], "Chart data", 0, (lxw_col_t)(k + 1),
                            (lxw_row_t)n - 1, (lxw_col_t)(k + 1));
  }
  none.none = LXW_TRUE;
  no_line.none = LXW_TRUE;
  chart_series_set_fill(s[0], &none);
  chart_series_set_line(s[0], &no_line);
  colour_points(x, s[1], 0, fills, pts, list, n);
  if (!x->e) {
    lxw_chart_fill *f2 = core_calloc(n, sizeof *f2);
    lxw_chart_point *p2 = core_calloc(n, sizeof *p2);
    if (f2 && p2)
      colour_points(x, s[2], 1, f2, p2, list, n);
    else
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    core_free(f2);
    core_free(p2);
  }
  chart_set_series_gap(ch, 80);
  chart_title_set_name(ch, "Ratio to the reference, with its interval (log "
                           "scale; the ratio where the shades meet)");
  chart_axis_set_log_base(ch->x_axis, 10);
  chart_axis_set_min(ch->x_axis, lo);
  chart_axis_set_max(ch->x_axis, hi);
  chart_axis_set_num_format(ch->x_axis, "General\"×\"");
  /* The first comparison on top, and the ratio axis below. */
  chart_axis_set_reverse(ch->y_axis);
  chart_axis_set_crossing_max(ch->y_axis);
  chart_legend_set_position(ch, LXW_CHART_LEGEND_NONE);
  o.x_scale = 2.0;
  o.y_scale = fmax(1.0, 0.09 * (double)n + 0.5);
  if (!x->e)
    x->e = worksheet_insert_chart_opt(summary, at, 0, ch, &o);
done:
  core_free(fills);
  core_free(pts);
  core_free(list);
}

static void summary(xctx *x) {
  static const char *const h[] = {"Workload",
                                  "Metric",
                                  "Arm",
                                  "n",
                                  "Median",
                                  "Unit",
                                  "IQR",
                                  "Min",
                                  "Max",
                                  "Ratio",
                                  "CI low",
                                  "CI high",
                                  "Difference",
                                  "Difference CI low",
                                  "Difference CI high",
                                  "Verdict",
                                  "At the registered sample"};
  const analysis_summary *a = x->in->summary;
  lxw_worksheet *ws;
  lxw_row_t r0, r;
  char note[256];
  if (!add_sheet(x, "Summary"))
    return;
  ws = x->ws;
  worksheet_set_landscape(ws);
  /* The headline on one page when it is a page's worth: the table and
   * its chart together. */
  if (a->n_cells <= 48)
    worksheet_fit_to_pages(ws, 1, 1);
  r0 = stamp(x, 1);
  if (!x->e)
    x->e = worksheet_set_row(ws, r0, 22, NULL);
  put_str(x, r0, 0,
          x->in->sheet->title ? x->in->sheet->title : x->in->sheet->id,
          x->title);
  x->width[0] = 0; /* the title runs across */
  r = summary_sentences(x, r0 + 1, 120);
  r++;
  header(x, r, h, sizeof h / sizeof h[0] - (a->original ? 0 : 1));
  r++;
  for (size_t i = 0; i < a->n_cells && !x->e; i++, r++)
    summary_row(x, r, &a->cells[i]);
  snprintf(note, sizeof note,
           "Medians of the valid runs, IQR and extremes in the unit given; "
           "ratios to %s with %.6g%% percentile bootstrap intervals.",
           a->reference ? a->reference : "the reference", a->confidence * 100);
  lines_across(x, r + 1, note, 120, NULL);
  need(x, 0, 10);
  fit_columns(x, 40);
  summary_chart(x, ws, r + 3);
  x->ws = ws;
  x->sheet = "Summary";
}

/* Pairs */

/* A pair's verdict at the registered sample, or that the registered plan
 * did not make it. */
static void pair_registered(xctx *x, lxw_row_t r, const analysis_result *p) {
  const analysis_summary *a = x->in->summary;
  const analysis_result *g = analysis_registered_pair(a, p);
  char *v;
  if (!a->original)
    return;
  if (!g) {
    put_str(x, r, 11, "not in the registered plan", x->v_other);
    return;
  }
  v = core_asprintf("%s%s (n=%zu)%s", g->verdict, prov(a->original), g->n,
                    analysis_same_decision(g, p) ? "" : ", changed");
  if (!v)
    x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
  put_str(x, r, 11, v, verdict_format(x, g));
  core_free(v);
}

/* The rule's pairs, each later arm against each earlier one (named in
 * Against), with the pair's ratio, interval and verdict: a sheet of
 * their own, only when the summary has pairs. */
static void pairs(xctx *x) {
  static const char *const h[] = {"Workload",
                                  "Metric",
                                  "Arm",
                                  "Against",
                                  "Ratio",
                                  "CI low",
                                  "CI high",
                                  "Difference",
                                  "Difference CI low",
                                  "Difference CI high",
                                  "Verdict",
                                  "At the registered sample"};
  const analysis_summary *a = x->in->summary;
  lxw_row_t r;
  if (!a->n_pairs || !add_sheet(x, "Pairs"))
    return;
  worksheet_set_landscape(x->ws);
  r = stamp(x, 0);
  r = lines_across(x, r,
                   a->pairs_exploratory
                       ? "Pairs, each later arm against each earlier one "
                         "under the same rule (analyze --pairs: "
                         "exploratory, not registered)."
                       : "Pairs, each later arm against each earlier one "
                         "under the same rule (pairs = \"all\").",
                   120, NULL);
  header(x, r++, h, a->original ? 12 : 11);
  for (size_t i = 0; i < a->n_pairs && !x->e; i++, r++) {
    const analysis_result *p = &a->pairs[i];
    int dr = decimals(p->ratio, 3), dd = decimals(p->median_reference, 3);
    char *v = core_asprintf("%s%s", p->verdict, prov(a));
    if (!v)
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    put_str(x, r, 0, p->workload, NULL);
    put_str(x, r, 1, p->metric, NULL);
    put_str(x, r, 2, p->arm, NULL);
    put_str(x, r, 3, p->reference, NULL);
    put_num(x, r, 4, p->ratio, x->ratio[dr], dr + 1);
    put_num(x, r, 5, p->ci_low, x->ratio[dr], dr + 1);
    put_num(x, r, 6, p->ci_high, x->ratio[dr], dr + 1);
    put_num(x, r, 7, p->difference, x->num[dd], dd);
    put_num(x, r, 8, p->difference_ci_low, x->num[dd], dd);
    put_num(x, r, 9, p->difference_ci_high, x->num[dd], dd);
    put_str(x, r, 10, v, verdict_format(x, p));
    core_free(v);
    pair_registered(x, r, p);
  }
  fit_columns(x, 40);
  x->sheet = "Pairs";
}

/* Hypotheses and Deviations */

/* An outcome, coloured, with its marks ("held (provisional)"). */
static void outcome_cell(xctx *x, lxw_row_t r, lxw_col_t c, proto_outcome o,
                         const char *mark, const char *more) {
  char *v = core_asprintf("%s%s%s", proto_outcome_word(o), mark, more);
  if (!v)
    x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
  put_str(x, r, c, v,
          o == PROTO_HELD       ? x->h_held
          : o == PROTO_NOT_HELD ? x->h_not
                                : x->h_other);
  core_free(v);
}

static void hypotheses(xctx *x) {
  static const char *const h[] = {"ID", "Says", "Outcome", "Reason",
                                  "At the registered sample"};
  const analysis_summary *a = x->in->summary;
  lxw_row_t r;
  if (!add_sheet(x, "Hypotheses"))
    return;
  worksheet_set_landscape(x->ws);
  r = stamp(x, 0);
  header(x, r++, h, a->original ? 5 : 4);
  for (size_t i = 0; i < a->n_hypotheses && !x->e; i++, r++) {
    const analysis_hypothesis *hy = &a->hypotheses[i];
    double ht =
        fmax(row_height(hy->says, WRAP_AT), row_height(hy->reason, WRAP_AT));
    x->e = worksheet_set_row(x->ws, r, ht, NULL);
    /* Every cell of the row top-aligned, so that a long Says stays
     * beside its own ID. */
    put_str(x, r, 0, hy->id, x->wrap);
    put_str(x, r, 1, hy->says, x->wrap);
    outcome_cell(x, r, 2, hy->outcome, prov(a), "");
    put_str(x, r, 3, hy->reason, x->wrap);
    int registered = 0;
    for (size_t j = 0; a->original && j < a->original->n_hypotheses; j++)
      if (strcmp(a->original->hypotheses[j].id, hy->id) == 0) {
        registered = 1;
        outcome_cell(
            x, r, 4, a->original->hypotheses[j].outcome, prov(a->original),
            a->original->hypotheses[j].outcome != hy->outcome ? ", changed"
                                                              : "");
      }
    if (a->original && !registered)
      put_str(x, r, 4, "not in the registered plan", x->v_other);
  }
  fit_columns(x, WRAP_AT + 2);
}

/* One field of an amendment: its name and its text, wrapped. */
static lxw_row_t field_row(xctx *x, lxw_row_t r, const char *name,
                           const char *text) {
  if (!text || !*text)
    return r;
  x->e = x->e ? x->e : worksheet_set_row(x->ws, r, row_height(text, 90), NULL);
  put_str(x, r, 1, name, x->label);
  put_str(x, r, 2, text, x->wrap);
  return r + 1;
}

/* The diff, one line per row, in a monospaced font. */
static lxw_row_t diff_rows(xctx *x, lxw_row_t r, const char *diff) {
  const char *p = diff;
  put_str(x, r, 1, "Diff", x->bold);
  while (p && *p && !x->e) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char *line = core_strndup(p, len);
    if (!line) {
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
      break;
    }
    /* A leading '-' or '=' stays text: a string cell is never a formula. */
    put_str(x, r++, 2, *line ? line : " ", x->mono);
    core_free(line);
    p += len + (nl ? 1 : 0);
  }
  return r;
}

static void deviations(xctx *x) {
  static const char *const h[] = {"Amendment", "Field", "Text"};
  lxw_row_t r;
  char num[32];
  if (!add_sheet(x, "Deviations"))
    return;
  r = stamp(x, 0);
  header(x, r++, h, 3);
  if (x->in->n_amendments == 0)
    put_str(x, r, 0, "None.", NULL);
  for (size_t i = 0; i < x->in->n_amendments && !x->e; i++) {
    const report_amendment *m = &x->in->amendments[i];
    put_num(x, r, 0, m->number, NULL, 0);
    r = field_row(x, r, "Dated", m->date);
    r = field_row(x, r, "Recorded", m->filed_at);
    if (m->runs_before >= 0)
      snprintf(num, sizeof num, "%ld", m->runs_before);
    else
      snprintf(num, sizeof num, "unknown");
    r = field_row(x, r, "Runs before", num);
    r = field_row(x, r, "Why", m->why);
    r = field_row(x, r, "Affects", m->affected);
    if (m->diff && *m->diff)
      r = diff_rows(x, r, m->diff);
    r++;
  }
  need(x, 2, 0);
  x->width[2] = fmin(x->width[2], 90);
  fit_columns(x, 92);
}

/* Raw */

typedef struct raw_ctx {
  xctx *x;
  size_t done, total;
  lxw_row_t r;
  int begun;
  int cols[REPORT_RAW_COLS]; /* the columns written, in order */
  int n_cols;
  const report_row_facts *f;
} raw_ctx;

/* "sheet_version = 1; source = run; empty: reason": the columns with one
 * value in every row, which are not columns of the sheet. */
static void same_in_every_row(const raw_ctx *rc, core_buf *same) {
  for (int empty = 0; empty < 2; empty++) {
    size_t k = 0;
    for (int c = 0; c < REPORT_RAW_COLS; c++) {
      int kept = 0;
      const char *v = rc->f->raw_first[c];
      for (int i = 0; i < rc->n_cols; i++)
        kept |= rc->cols[i] == c;
      if (kept || !v || (*v == '\0') != empty)
        continue;
      if (empty)
        core_buf_printf(same, "%s%s",
                        k++         ? ", "
                        : same->len ? "; empty: "
                                    : "empty: ",
                        report_raw_name(c));
      else
        core_buf_printf(same, "%s%s = %s", k++ ? "; " : "", report_raw_name(c),
                        v);
    }
  }
}

/* The Raw sheet's top: how many rows it holds, the columns with one
 * value in every row, then the header of the others. */
static void raw_begin(raw_ctx *rc) {
  xctx *x = rc->x;
  core_buf same;
  lxw_row_t r;
  rc->begun = 1;
  if (!add_sheet(x, "Raw"))
    return;
  /* Pages of rows nobody reads on paper: hidden, so not printed. */
  worksheet_hide(x->ws);
  r = stamp(x, 0);
  if (rc->total > REPORT_RAW_MAX) {
    char *t = core_asprintf(
        "Rows 1 to %d of %zu, in the order of the data; every row is in the "
        "frozen batch files (batches/BATCH.csv, their digests on the "
        "Manifest sheet).",
        REPORT_RAW_MAX, rc->total);
    if (!t)
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    else
      r = lines_across(x, r, t, 120, x->bold);
    core_free(t);
  }
  core_buf_init(&same);
  same_in_every_row(rc, &same);
  if (same.oom)
    x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
  if (same.len) {
    char *t = core_asprintf("The same in every row: %s.", same.data);
    if (!t)
      x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    else
      r = lines_across(x, r, t, 120, NULL);
    core_free(t);
  }
  core_buf_free(&same);
  x->width[0] = 0;
  for (int i = 0; i < rc->n_cols; i++)
    put_str(x, r, (lxw_col_t)i, report_raw_name(rc->cols[i]), x->head);
  if (!x->e && rc->n_cols)
    x->e = worksheet_autofilter(x->ws, r, 0, r, (lxw_col_t)(rc->n_cols - 1));
  if (!x->e)
    x->e = worksheet_repeat_rows(x->ws, r, r);
  worksheet_freeze_panes(x->ws, r + 1, 0);
  rc->r = r + 1;
}

/* 0 or [1-9][0-9]{0,14}: an integer a double holds exactly, whose
 * number prints as the same text. */
static int plain_integer(const char *s) {
  size_t n = 0;
  if (!s || !*s || (s[0] == '0' && s[1]))
    return 0;
  for (; s[n]; n++)
    if (s[n] < '0' || s[n] > '9' || n >= 15)
      return 0;
  return 1;
}

static void raw_cell(xctx *x, lxw_row_t r, lxw_col_t c, int col,
                     const data_row *d) {
  char buf[64];
  switch (col) {
  case 0:
    put_num(x, r, c, d->sheet_version, NULL, 0);
    break;
  case 6:
    put_num(x, r, c, (double)d->round, NULL, 0);
    break;
  case 7:
    put_num(x, r, c, (double)d->seq, NULL, 0);
    break;
  case 15:
    put_num(x, r, c, d->valid, NULL, 0);
    break;
  case 18:
    if (d->has_value)
      put_num(x, r, c, d->value, NULL, 6);
    break;
  case 19:
    put_num(x, r, c, d->quick, NULL, 0);
    break;
  case 8:
    /* A run id that is a plain integer ("17", not "017") is written as
     * the number it reads as: the same text, a fifth of the XML. */
    if (plain_integer(d->run_id))
      put_num(x, r, c, strtod(d->run_id, NULL), NULL, 0);
    else
      put_str(x, r, c, d->run_id, NULL);
    break;
  default:
    put_str(x, r, c, report_raw_field(d, col, buf, sizeof buf), NULL);
  }
}

/* Stops the reading of the rows once the sheet is full: not a failure. */
#define RAW_FULL CORE_ERUN

static core_status raw_row(void *vctx, const data_row *d, core_err *err) {
  raw_ctx *rc = vctx;
  xctx *x = rc->x;
  (void)err;
  if (!rc->begun)
    raw_begin(rc);
  if (rc->done >= REPORT_RAW_MAX)
    return RAW_FULL;
  x->measure = rc->done < 1000;
  for (int i = 0; i < rc->n_cols && !x->e; i++)
    raw_cell(x, rc->r, (lxw_col_t)i, rc->cols[i], d);
  rc->r++;
  rc->done++;
  return x->e ? CORE_EXLSX : CORE_OK;
}

static void raw(xctx *x, const report_row_facts *f) {
  raw_ctx rc;
  core_err err = {0};
  core_status st;
  memset(&rc, 0, sizeof rc);
  rc.x = x;
  rc.f = f;
  rc.total = f->rows;
  /* Columns with one value in every row are said once, above the table:
   * a million copies of a digest tell nothing more. The arm and the value
   * are always columns. */
  for (int c = 0; c < REPORT_RAW_COLS; c++)
    if (f->rows <= 1 || !f->raw_same[c] || c == 5 || c == 18)
      rc.cols[rc.n_cols++] = c;
  if (x->e)
    return;
  st = report_each_row(x->in, raw_row, &rc, &err);
  if (st != CORE_OK && !(st == RAW_FULL && rc.done == REPORT_RAW_MAX) && !x->e)
    x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
  if (!rc.begun)
    raw_begin(&rc);
  /* The widths the rows need: from the header, and the first rows'
   * values as written. */
  fit_columns(x, 40);
}

/* Processes and Provenance */

static void processes(xctx *x) {
  const data_report_inputs *in = x->in->extra;
  lxw_row_t r;
  size_t tables = 0;
  if (!add_sheet(x, "Processes"))
    return;
  worksheet_set_landscape(x->ws);
  r = stamp(x, 0);
  put_str(x, r++, 0,
          "Per-run process lists found in the batch folders "
          "(what pss_mib summed).",
          x->bold);
  x->width[0] = 0;
  for (size_t b = 0; in && b < in->n_batches; b++)
    for (size_t t = 0; t < in->batches[b].n_procs && !x->e; t++) {
      const data_table *tb = &in->batches[b].procs[t];
      tables++;
      r++;
      put_str(x, r, 0, "batch", x->head);
      put_str(x, r, 1, "file", x->head);
      for (size_t c = 0; c < tb->n_cols; c++)
        put_str(x, r, (lxw_col_t)(c + 2), tb->header[c], x->head);
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
            put_num(x, r, (lxw_col_t)(c + 2), d, NULL, 0);
          else
            put_str(x, r, (lxw_col_t)(c + 2), v, NULL);
        }
      }
    }
  if (tables == 0)
    put_str(x, r + 1, 0, "None: no batch holds a process list.", NULL);
  fit_columns(x, 50);
}

static lxw_row_t key_value(xctx *x, lxw_row_t r, const char *k,
                           const char *v) {
  put_str(x, r, 0, k, x->bold);
  put_str(x, r, 1, v, NULL);
  return r + 1;
}

static void provenance(xctx *x) {
  const data_report_inputs *in = x->in->extra;
  char sw[256];
  lxw_row_t r;
  if (!add_sheet(x, "Provenance"))
    return;
  r = stamp(x, 0);
  r = key_value(x, r, "Sheet SHA-256", x->in->sheet->sha256);
  r = key_value(x, r, "Registered", x->in->registered_at);
  r = key_value(x, r, "Manifest SHA-256", x->in->manifest_sha256);
  r = key_value(x, r, "Verification",
                x->in->unverified ? x->in->unverified : "passed");
  snprintf(sw, sizeof sw, "%s %s; %s; GSL %s; libxlsxwriter %s; cmark-gfm %s",
           PREREG_NAME, PREREG_VERSION, proto_lua_version(),
           analysis_gsl_version(), LXW_VERSION, report_cmark_version());
  r = key_value(x, r, "Software", sw);
  r = key_value(x, r, "Not printed",
                "the Raw and Manifest sheets (every row, every file's "
                "digest) are hidden, so that the workbook prints what is "
                "read on paper; show them to see them");
  r++;
  put_str(x, r, 0, "Batch fact", x->head);
  put_str(x, r, 1, "Value", x->head);
  put_str(x, r++, 2, "Batch", x->head);
  for (size_t b = 0; in && b < in->n_batches; b++)
    for (size_t i = 0; i < in->batches[b].n_facts; i++, r++) {
      put_str(x, r, 0, in->batches[b].facts[i].key, NULL);
      put_str(x, r, 1, in->batches[b].facts[i].value, x->wrap);
      put_str(x, r, 2, in->batches[b].id, NULL);
    }
  fit_columns(x, 70);
}

/* Every file of the data folder's MANIFEST with its digest: hidden, so
 * not printed (pages of hashes). */
static void manifest(xctx *x) {
  const data_report_inputs *in = x->in->extra;
  lxw_row_t r;
  if (!add_sheet(x, "Manifest"))
    return;
  worksheet_hide(x->ws);
  r = stamp(x, 0);
  put_str(x, r, 0, "File", x->head);
  put_str(x, r++, 1, "SHA-256", x->head);
  for (size_t i = 0; in && i < in->n_manifest; i++, r++) {
    put_str(x, r, 0, in->manifest[i].path, NULL);
    put_str(x, r, 1, in->manifest[i].sha256, NULL);
  }
  fit_columns(x, 70);
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

static lxw_format *fmt(xctx *x, int bold, const char *num, lxw_color_t bg,
                       int wrap) {
  lxw_format *f = workbook_add_format(x->wb);
  if (!f) {
    x->e = LXW_ERROR_MEMORY_MALLOC_FAILED;
    return NULL;
  }
  if (bold)
    format_set_bold(f);
  if (num)
    format_set_num_format(f, num);
  if (bg)
    format_set_bg_color(f, bg);
  if (wrap) {
    format_set_text_wrap(f);
    format_set_align(f, LXW_ALIGN_VERTICAL_TOP);
  }
  return f;
}

static void formats(xctx *x) {
  char num[32];
  x->bold = fmt(x, 1, NULL, 0, 0);
  x->label = fmt(x, 1, NULL, 0, 0);
  if (x->label)
    format_set_align(x->label, LXW_ALIGN_VERTICAL_TOP);
  x->head = fmt(x, 1, NULL, 0xEEF2F7, 0);
  x->title = fmt(x, 1, NULL, 0, 0);
  if (x->title)
    format_set_font_size(x->title, 14);
  x->wrap = fmt(x, 0, NULL, 0, 1);
  x->mono = fmt(x, 0, NULL, 0, 0);
  if (x->mono)
    format_set_font_name(x->mono, "DejaVu Sans Mono");
  x->stamp = fmt(x, 1, NULL, 0xFF9999, 0);
  x->v_worse = fmt(x, 1, NULL, 0xF4CCCC, 0);
  x->v_better = fmt(x, 1, NULL, 0xD9EAD3, 0);
  x->v_tie = fmt(x, 1, NULL, 0xCFE2F3, 0);
  x->v_other = fmt(x, 1, NULL, 0xEEEEEE, 0);
  x->h_held = fmt(x, 1, NULL, 0xD9EAD3, 0);
  x->h_not = fmt(x, 1, NULL, 0xF4CCCC, 0);
  x->h_other = fmt(x, 1, NULL, 0xEEEEEE, 0);
  lxw_format *top[] = {x->h_held, x->h_not, x->h_other};
  for (size_t i = 0; i < 3; i++)
    if (top[i])
      format_set_align(top[i], LXW_ALIGN_VERTICAL_TOP);
  for (int d = 0; d < 10; d++) {
    snprintf(num, sizeof num, "0%s%.*s", d ? "." : "", d, "000000000");
    x->num[d] = fmt(x, 0, num, 0, 0);
    snprintf(num, sizeof num, "0%s%.*s\"×\"", d ? "." : "", d, "000000000");
    x->ratio[d] = fmt(x, 0, num, 0, 0);
  }
}

/* A document property as docProps/core.xml may hold it: a control
 * character (XML 1.0 has no place for one; Excel calls the workbook
 * damaged) becomes a space. Newly allocated (core_free); NULL for NULL or
 * when out of memory. */
static char *plain_prop(const char *s) {
  char *d = s ? core_strdup(s) : NULL;
  size_t len = d ? strlen(d) : 0, i;
  while (d && (i = core_control_at(d, len)) < len) {
    if ((unsigned char)d[i] == 0xC2) /* a C1 control: both its bytes */
      d[i + 1] = ' ';
    d[i] = ' ';
  }
  return d;
}

core_status report_write_xlsx(const report_input *in, const char *path,
                              core_err *err) {
  lxw_workbook_options o = {0};
  lxw_doc_properties props = {0};
  report_row_facts local;
  int used;
  const report_row_facts *facts = report_facts_of(in, &local, &used);
  xctx x;
  lxw_error e;
  if (!facts) {
    if (used)
      report_facts_free(&local);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  memset(&x, 0, sizeof x);
  x.in = in;
  o.constant_memory = LXW_TRUE;
  /* Big data: zip64 lifts the 4 GiB limit on a part of the package. */
  o.use_zip64 = facts->rows > 2000000 ? LXW_TRUE : LXW_FALSE;
  x.wb = workbook_new_opt(path, &o);
  if (!x.wb) {
    if (used)
      report_facts_free(&local);
    return core_fail(err, CORE_EXLSX,
                     "%s: libxlsxwriter could not start the workbook", path);
  }
  formats(&x);
  props.title = plain_prop(in->sheet->title);
  props.author = plain_prop(in->sheet->author);
  if ((in->sheet->title && !props.title) ||
      (in->sheet->author && !props.author))
    x.e = LXW_ERROR_MEMORY_MALLOC_FAILED;
  props.comments = (char *)"Written by " PREREG_NAME " " PREREG_VERSION;
  props.created = created_time(facts->newest, in->registered_at);
  if (!x.e)
    x.e = workbook_set_properties(x.wb, &props);
  core_free(props.title);
  core_free(props.author);
  summary(&x);
  pairs(&x);
  hypotheses(&x);
  deviations(&x);
  raw(&x, facts);
  processes(&x);
  provenance(&x);
  manifest(&x);
  if (used)
    report_facts_free(&local);
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
