/* plots.c: the data behind one workload and metric, as an SVG: on the
 * left every valid run per arm in real units (a box over its points, or a
 * histogram per arm when there are thousands), on the right the runs in
 * collection order, arms by colour and shape, batch boundaries dashed.
 * Above REPORT_POINTS_MAX values per arm both panels summarise, so that
 * the file stays small at a million rows.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

#define FONT 12.0
#define PLOT_TOP 64.0
#define PLOT_H 190.0
#define COL_W 64.0
#define ORDER_W 420.0
#define GAP 56.0
#define PAD 10.0
#define BINS 40        /* of a histogram */
#define ORDER_BINS 200 /* of a summarised run order, per arm */

static const char *const colours[] = {"#0072b2", "#e69f00", "#009e73",
                                      "#cc79a7", "#56b4e9", "#d55e00",
                                      "#000000"};
#define N_COLOURS (sizeof colours / sizeof colours[0])

/* The value axis */

typedef struct vaxis {
  int log;
  double lo, hi; /* in value units (log: both > 0) */
  double y0, y1; /* pixels: y0 at lo (bottom), y1 at hi (top) */
  double factor; /* values times factor are in unit */
  const char *unit;
  double tv[32];
  size_t nt;
} vaxis;

static double ypos(const vaxis *a, double v) {
  double f = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
                    : (v - a->lo) / (a->hi - a->lo);
  return a->y0 - f * (a->y0 - a->y1);
}

/* Four to seven ticks: the smallest step of 1, 2 or 5 times a power of
 * ten that is at least a sixth of the range. */
static void linear_ticks(vaxis *a) {
  double raw = (a->hi - a->lo) / 6, step = pow(10, floor(log10(raw)));
  if (raw > 5 * step)
    step *= 10;
  else if (raw > 2 * step)
    step *= 5;
  else if (raw > step)
    step *= 2;
  a->nt = 0;
  for (double v = ceil(a->lo / step) * step;
       v <= a->hi + step * 1e-9 && a->nt < 32; v += step)
    a->tv[a->nt++] = fabs(v) < step * 1e-9 ? 0 : v;
}

static void log_ticks(vaxis *a) {
  static const double m[] = {1, 2, 5};
  a->nt = 0;
  for (int k = (int)floor(log10(a->lo)); k <= (int)ceil(log10(a->hi)); k++)
    for (int i = 0; i < 3 && a->nt < 32; i++) {
      double v = m[i] * pow(10, k);
      if (v >= a->lo && v <= a->hi)
        a->tv[a->nt++] = v;
    }
}

/* A linear axis unless the values span more than 8 times (then every
 * arm stays readable on a log one). */
static void value_axis(vaxis *a, const report_series *arms, size_t n,
                       const char *unit) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t k = 0; k < n; k++)
    for (size_t i = 0; i < arms[k].n; i++)
      if (isfinite(arms[k].values[i])) {
        lo = fmin(lo, arms[k].values[i]);
        hi = fmax(hi, arms[k].values[i]);
      }
  if (!isfinite(lo)) {
    lo = 0;
    hi = 1;
  }
  a->log = lo > 0 && hi / lo > 8;
  if (a->log) {
    a->lo = lo / 1.15;
    a->hi = hi * 1.15;
  } else {
    double pad = hi > lo ? (hi - lo) * 0.08 : (lo != 0 ? fabs(lo) * 0.1 : 1);
    a->lo = lo - pad;
    a->hi = hi + pad;
    /* Values that are all positive keep a positive axis when that is
     * near: no "-0.5 MiB". */
    if (lo >= 0 && a->lo < 0)
      a->lo = 0;
  }
  a->unit = core_scale_unit(unit, fmax(fabs(lo), fabs(hi)), &a->factor);
  a->y0 = PLOT_TOP + PLOT_H;
  a->y1 = PLOT_TOP;
  if (a->log)
    log_ticks(a);
  if (!a->log || a->nt < 2) {
    a->log = 0;
    linear_ticks(a);
  }
}

static void tick_text(const vaxis *a, double v, char *out, size_t cap) {
  core_fmt_sig(out, cap, v * a->factor, 3);
  if (strchr(out, '.') && !strchr(out, 'e')) {
    size_t k = strlen(out);
    while (k && out[k - 1] == '0')
      out[--k] = '\0';
    if (k && out[k - 1] == '.')
      out[--k] = '\0';
  }
}

/* Pieces */

static void text(core_buf *out, double x, double y, const char *anchor,
                 const char *extra, const char *s) {
  core_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\"%s%s%s%s>", x, y,
                  anchor ? " text-anchor=\"" : "", anchor ? anchor : "",
                  anchor ? "\"" : "", extra ? extra : "");
  report_html_escape(out, s);
  core_buf_puts(out, "</text>\n");
}

/* A marker of shape k (circle, square, triangle, diamond, ...) at x, y. */
static void marker(core_buf *out, size_t k, double x, double y, double r,
                   const char *fill, const char *extra) {
  switch (k % 4) {
  case 0:
    core_buf_printf(out,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" "
                    "fill=\"%s\"%s/>\n",
                    x, y, r, fill, extra);
    break;
  case 1:
    core_buf_printf(out,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"%.1f\" fill=\"%s\"%s/>\n",
                    x - r, y - r, 2 * r, 2 * r, fill, extra);
    break;
  case 2:
    core_buf_printf(out,
                    "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" "
                    "fill=\"%s\"%s/>\n",
                    x, y - 1.2 * r, x + 1.1 * r, y + 0.8 * r, x - 1.1 * r,
                    y + 0.8 * r, fill, extra);
    break;
  default:
    core_buf_printf(out,
                    "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" "
                    "fill=\"%s\"%s/>\n",
                    x, y - 1.3 * r, x + 1.3 * r, y, x, y + 1.3 * r,
                    x - 1.3 * r, y, fill, extra);
  }
}

/* A spread of offsets in [-0.5, 0.5) that depends on i alone. */
static double jitter(size_t i) {
  return (double)((i * 2654435761u) % 1000u) / 1000.0 - 0.5;
}

static void draw_value_axis(core_buf *out, const vaxis *a, double x0,
                            double x1, double x2, double x3) {
  char lab[40];
  for (size_t i = 0; i < a->nt; i++) {
    double y = ypos(a, a->tv[i]);
    tick_text(a, a->tv[i], lab, sizeof lab);
    core_buf_printf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#e6e6e6\"/>\n"
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#e6e6e6\"/>\n",
                    x0, y, x1, y, x2, y, x3, y);
    text(out, x0 - 6, y + 4, "end", " fill=\"#555555\"", lab);
    text(out, x2 - 6, y + 4, "end", " fill=\"#555555\"", lab);
  }
  core_buf_printf(out,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#333333\"/>\n"
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#333333\"/>\n",
                  x0, a->y1, x0, a->y0, x2, a->y1, x2, a->y0);
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* The distribution per arm */

/* A box from the quartiles, the median across it, whiskers to the
 * extremes; then each point, or a histogram when there are many. */
static void draw_arm(core_buf *out, const vaxis *a, const report_series *s,
                     size_t k, double cx) {
  const char *c = colours[k % N_COLOURS];
  double q1 = s->q1, med = s->median, q3 = s->q3, lo = s->min, hi = s->max;
  size_t n = 0;
  for (size_t i = 0; i < s->n; i++)
    n += isfinite(s->values[i]) && (!a->log || s->values[i] > 0);
  if (n && !(isfinite(q1) && isfinite(med) && isfinite(q3) && isfinite(lo) &&
             isfinite(hi))) {
    /* Not given: from a sorted copy. */
    double *v = core_malloc(n * sizeof *v);
    size_t m = 0;
    if (!v) {
      out->oom = 1;
      return;
    }
    for (size_t i = 0; i < s->n; i++)
      if (isfinite(s->values[i]) && (!a->log || s->values[i] > 0))
        v[m++] = s->values[i];
    qsort(v, m, sizeof *v, cmp_double);
    q1 = analysis_quantile_sorted(v, m, 0.25);
    med = analysis_quantile_sorted(v, m, 0.5);
    q3 = analysis_quantile_sorted(v, m, 0.75);
    lo = v[0];
    hi = v[m - 1];
    core_free(v);
  }
  if (n)
    core_buf_printf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"%s\"/>\n"
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"26\" height=\"%.1f\" "
                    "fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>\n"
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"%s\" stroke-width=\"2.5\"/>\n",
                    cx, ypos(a, lo), cx, ypos(a, hi), c, cx - 13, ypos(a, q3),
                    fmax(ypos(a, q1) - ypos(a, q3), 1), c, cx - 16,
                    ypos(a, med), cx + 16, ypos(a, med), c);
  if (n > REPORT_POINTS_MAX) {
    /* A histogram of BINS rows, mirrored: a violin of counts. */
    size_t count[BINS] = {0}, top = 1;
    for (size_t i = 0; i < s->n; i++) {
      double f;
      size_t b;
      if (!isfinite(s->values[i]) || (a->log && s->values[i] <= 0))
        continue;
      f = (a->y0 - ypos(a, s->values[i])) / (a->y0 - a->y1);
      b = f <= 0 ? 0 : f >= 1 ? BINS - 1 : (size_t)(f * BINS);
      if (++count[b] > top)
        top = count[b];
    }
    for (size_t b = 0; b < BINS; b++) {
      double hw = 24.0 * (double)count[b] / (double)top, h = PLOT_H / BINS;
      if (count[b])
        core_buf_printf(
            out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
            "height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.35\"/>\n",
            cx - hw, a->y0 - h * (double)(b + 1), 2 * hw, h, c);
    }
    return;
  }
  for (size_t i = 0; i < s->n; i++)
    if (isfinite(s->values[i]) && (!a->log || s->values[i] > 0))
      marker(out, k, cx + 24 * jitter(i), ypos(a, s->values[i]), 2.4, c,
             " fill-opacity=\"0.6\"");
}

/* The run order */

typedef struct point {
  unsigned order, batch;
  unsigned arm;
  double v;
} point;

/* Dashed lines where the batch changes, each named once. */
static void draw_batches(core_buf *out, const point *p, size_t n, double x0,
                         double w, const vaxis *a, const char *const *names,
                         size_t n_names) {
  double last_label = -1e9;
  for (size_t i = 0; i < n; i++) {
    double x = x0 + (double)i / (double)n * w;
    const char *name;
    if (i > 0 && p[i].batch == p[i - 1].batch)
      continue;
    name = p[i].batch < n_names ? names[p[i].batch] : "";
    if (i > 0)
      core_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"#888888\" stroke-dasharray=\"4 3\"/>\n",
                      x, a->y1, x, a->y0);
    /* A name that would overlap the one before is left out. */
    if (x - last_label > report_text_width(name, 11) + 6 &&
        x + 3 + report_text_width(name, 11) <= x0 + w + 40) {
      text(out, x + 3, a->y1 - 4, NULL, " font-size=\"11\" fill=\"#555555\"",
           name);
      last_label = x;
    }
  }
}

/* Thousands of runs per arm: per bin of ORDER_BINS, the median as a line
 * and the quartiles as a band. */
static void draw_order_summary(core_buf *out, const point *p, size_t n,
                               size_t n_arms, double x0, double w,
                               const vaxis *a) {
  double *buf = core_malloc(n * sizeof *buf);
  if (!buf) {
    out->oom = 1;
    return;
  }
  for (size_t k = 0; k < n_arms; k++) {
    int open = 0;
    core_buf_printf(out, "<path fill=\"none\" stroke=\"%s\" d=\"",
                    colours[k % N_COLOURS]);
    for (size_t b = 0; b < ORDER_BINS; b++) {
      size_t i0 = n * b / ORDER_BINS, i1 = n * (b + 1) / ORDER_BINS, m = 0;
      for (size_t i = i0; i < i1; i++)
        if (p[i].arm == k && isfinite(p[i].v) && (!a->log || p[i].v > 0))
          buf[m++] = p[i].v;
      if (!m)
        continue;
      qsort(buf, m, sizeof *buf, cmp_double);
      core_buf_printf(out, "%s%.1f %.1f", open ? "L" : "M",
                      x0 + ((double)(i0 + i1) / 2) / (double)n * w,
                      ypos(a, analysis_quantile_sorted(buf, m, 0.5)));
      open = 1;
    }
    core_buf_puts(out, "\"/>\n");
  }
  core_free(buf);
}

static void draw_order(core_buf *out, const report_series *arms, size_t n_arms,
                       double x0, double w, const vaxis *a,
                       const char *const *names, size_t n_names) {
  size_t n = 0, most = 0, k2 = 0;
  point *p;
  for (size_t k = 0; k < n_arms; k++) {
    n += arms[k].order ? arms[k].n : 0;
    most = arms[k].n > most ? arms[k].n : most;
  }
  if (n == 0)
    return;
  if (!(p = core_malloc(n * sizeof *p))) {
    out->oom = 1;
    return;
  }
  /* Each arm's runs come in collection order: a merge of the arms puts
   * them all in order without a sort. */
  {
    size_t *at = core_calloc(n_arms, sizeof *at);
    if (!at) {
      core_free(p);
      out->oom = 1;
      return;
    }
    while (k2 < n) {
      size_t best = n_arms;
      for (size_t k = 0; k < n_arms; k++)
        if (arms[k].order && at[k] < arms[k].n &&
            (best == n_arms ||
             arms[k].order[at[k]] < arms[best].order[at[best]]))
          best = k;
      if (best == n_arms)
        break;
      p[k2++] = (point){arms[best].order[at[best]],
                        arms[best].batch ? arms[best].batch[at[best]] : 0,
                        (unsigned)best, arms[best].values[at[best]]};
      at[best]++;
    }
    n = k2;
    core_free(at);
  }
  draw_batches(out, p, n, x0, w, a, names, n_names);
  if (most > REPORT_POINTS_MAX)
    draw_order_summary(out, p, n, n_arms, x0, w, a);
  else
    for (size_t i = 0; i < n; i++)
      if (isfinite(p[i].v) && (!a->log || p[i].v > 0))
        marker(out, p[i].arm, x0 + ((double)i + 0.5) / (double)n * w,
               ypos(a, p[i].v), 2.6, colours[p[i].arm % N_COLOURS],
               " fill-opacity=\"0.8\"");
  core_free(p);
}

void report_runs_svg(core_buf *out, const char *title, const char *unit,
                     const report_series *arms, size_t n_arms,
                     const char *const *batch_names, size_t n_batch_names,
                     const report_plot_note *notes, size_t n_notes) {
  vaxis a;
  double tick_w = 0, col_w = COL_W, x0, x1, r0, r1, width, height, lx;
  char lab[40], axis_name[64];
  memset(&a, 0, sizeof a);
  value_axis(&a, arms, n_arms, unit);
  for (size_t i = 0; i < a.nt; i++) {
    tick_text(&a, a.tv[i], lab, sizeof lab);
    tick_w = fmax(tick_w, report_text_width(lab, FONT));
  }
  for (size_t k = 0; k < n_arms; k++)
    col_w = fmax(col_w, report_text_width(arms[k].arm, FONT) + 8);
  x0 = PAD + tick_w + 8;
  x1 = x0 + col_w * (double)(n_arms ? n_arms : 1);
  r0 = x1 + GAP + tick_w;
  r1 = r0 + ORDER_W;
  width = r1 + PAD + 40; /* room for a batch name at the right edge */
  lx = r0;
  for (size_t k = 0; k < n_arms; k++)
    lx += 13 + report_text_width(arms[k].arm, FONT) + 14;
  width = fmax(width, lx + PAD);
  width = fmax(width, PAD + 1.1 * report_text_width(title, 13) + PAD);
  width = fmax(width, report_svg_notes_width(notes, n_notes));
  height = PLOT_TOP + PLOT_H + 46 + report_svg_notes_height(n_notes);
  core_buf_printf(out,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                  "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
                  "font-size=\"12\">\n<title>",
                  ceil(width), height, ceil(width), height);
  report_html_escape(out, title);
  core_buf_puts(out, "</title>\n<rect width=\"100%\" height=\"100%\" "
                     "fill=\"#ffffff\"/>\n");
  text(out, PAD, 18, NULL, " font-weight=\"bold\" font-size=\"13\"", title);
  report_svg_notes_open(out, notes, n_notes);
  snprintf(axis_name, sizeof axis_name, "%s%s", a.unit,
           a.log ? " (log scale)" : "");
  text(out, PAD, PLOT_TOP - 14, NULL, " fill=\"#555555\"", axis_name);
  draw_value_axis(out, &a, x0, x1, r0, r1);
  for (size_t k = 0; k < n_arms; k++) {
    double cx = x0 + col_w * ((double)k + 0.5);
    draw_arm(out, &a, &arms[k], k, cx);
    text(out, cx, a.y0 + 18, "middle", NULL, arms[k].arm);
  }
  text(out, (x0 + x1) / 2, a.y0 + 36, "middle", " fill=\"#555555\"",
       "every valid run per arm");
  draw_order(out, arms, n_arms, r0, ORDER_W, &a, batch_names, n_batch_names);
  text(out, (r0 + r1) / 2, a.y0 + 18, "middle", " fill=\"#555555\"",
       "runs in collection order");
  /* The legend: each arm's marker and name, above the run order. */
  lx = r0;
  for (size_t k = 0; k < n_arms; k++) {
    marker(out, k, lx + 5, 34, 4, colours[k % N_COLOURS], "");
    text(out, lx + 13, 38, NULL, NULL, arms[k].arm);
    lx += 13 + report_text_width(arms[k].arm, FONT) + 14;
  }
  report_svg_notes_close(out, n_notes);
  core_buf_puts(out, "</svg>\n");
}
