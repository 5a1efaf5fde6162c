/* svg.c: forest plots written by prereg: one row per arm, its ratio to
 * the reference as a dot and its interval as a bar, on a log axis with a
 * line at 1. Fixed-precision coordinates keep the bytes reproducible.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <string.h>

#include "reports/report.h"

#define WIDTH 720.0
#define LEFT 150.0  /* x where the axis starts (labels to the left) */
#define RIGHT 500.0 /* x where it ends (numbers to the right) */
#define TOP 44.0
#define ROW 30.0
#define BOTTOM 46.0

void report_html_escape(core_buf *b, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '<':
      core_buf_puts(b, "&lt;");
      break;
    case '>':
      core_buf_puts(b, "&gt;");
      break;
    case '&':
      core_buf_puts(b, "&amp;");
      break;
    case '"':
      core_buf_puts(b, "&quot;");
      break;
    case '\'':
      core_buf_puts(b, "&#39;");
      break;
    default:
      core_buf_append(b, s, 1);
    }
  }
}

static int usable(const report_forest_row *r) {
  return isfinite(r->ratio) && isfinite(r->lo) && isfinite(r->hi) &&
         r->ratio > 0 && r->lo > 0 && r->hi > 0;
}

static double xpos(double v, double l0, double l1) {
  return LEFT + (log10(v) - l0) / (l1 - l0) * (RIGHT - LEFT);
}

/* Tick values m * 10^k inside [l0, l1] (log10 bounds) for the given
 * mantissas; returns how many were written to t (at most max). */
static size_t ticks(double l0, double l1, const double *mant, size_t nm,
                    double *t, size_t max) {
  size_t n = 0;
  for (int k = (int)floor(l0) - 1; k <= (int)ceil(l1) && n < max; k++)
    for (size_t i = 0; i < nm && n < max; i++) {
      double v = mant[i] * pow(10, k), lv = log10(v);
      if (lv >= l0 - 1e-12 && lv <= l1 + 1e-12)
        t[n++] = v;
    }
  return n;
}

void report_forest_svg(core_buf *out, const char *title,
                       const report_forest_row *rows, size_t n) {
  double l0 = 0, l1 = 0, height, tv[64];
  size_t nt;
  static const double m125[] = {1, 2, 5}, m1[] = {1},
                      fine[] = {1, 1.2, 1.5, 2, 3, 5, 7};
  for (size_t i = 0; i < n; i++) {
    if (!usable(&rows[i]))
      continue;
    l0 = fmin(l0, log10(fmin(rows[i].lo, rows[i].ratio)));
    l1 = fmax(l1, log10(fmax(rows[i].hi, rows[i].ratio)));
  }
  /* The axis always shows 1 and some room on both sides of the data. */
  {
    double pad = fmax((l1 - l0) * 0.08, 0.02);
    l0 -= pad;
    l1 += pad;
  }
  nt = ticks(l0, l1, m125, 3, tv, 64);
  if (nt > 9)
    nt = ticks(l0, l1, m1, 1, tv, 64);
  if (nt < 3)
    nt = ticks(l0, l1, fine, 7, tv, 64);
  if (nt < 3) {
    /* A narrow range (a tie): evenly spaced values at a round step. */
    double a = pow(10, l0), z = pow(10, l1), raw = (z - a) / 4;
    double step = pow(10, floor(log10(raw))), v;
    if (raw / step >= 5)
      step *= 5;
    else if (raw / step >= 2)
      step *= 2;
    nt = 0;
    for (v = ceil(a / step) * step; v <= z && nt < 64; v += step)
      tv[nt++] = round(v / step) * step;
  }
  height = TOP + ROW * (double)(n ? n : 1) + BOTTOM;
  core_buf_printf(out,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                  "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "font-family=\"Helvetica, Arial, sans-serif\" "
                  "font-size=\"13\">\n",
                  WIDTH, height, WIDTH, height);
  core_buf_puts(out, "<title>");
  report_html_escape(out, title);
  core_buf_puts(out, "</title>\n<rect width=\"100%\" height=\"100%\" "
                     "fill=\"#ffffff\"/>\n");
  core_buf_printf(out, "<text x=\"%.1f\" y=\"20\" font-weight=\"bold\">",
                  10.0);
  report_html_escape(out, title);
  core_buf_puts(out, "</text>\n");
  /* Grid and tick labels. */
  for (size_t i = 0; i < nt; i++) {
    double x = xpos(tv[i], l0, l1);
    char lab[32];
    core_fmt_sig(lab, sizeof lab, tv[i], 3);
    /* "1.00" reads worse than "1" on an axis: drop trailing zeros. */
    if (strchr(lab, '.')) {
      size_t k = strlen(lab);
      while (k && lab[k - 1] == '0')
        lab[--k] = '\0';
      if (k && lab[k - 1] == '.')
        lab[--k] = '\0';
    }
    core_buf_printf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#dddddd\"/>\n"
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                    "fill=\"#555555\">%s×</text>\n",
                    x, TOP - 8, x, height - BOTTOM + 4, x,
                    height - BOTTOM + 22, lab);
  }
  {
    double x1 = xpos(1, l0, l1);
    core_buf_printf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#333333\" stroke-dasharray=\"4 3\"/>\n",
                    x1, TOP - 8, x1, height - BOTTOM + 4);
  }
  core_buf_printf(out,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#333333\"/>\n"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                  "fill=\"#555555\">ratio to the reference (log scale)"
                  "</text>\n",
                  LEFT, height - BOTTOM + 4, RIGHT, height - BOTTOM + 4,
                  (LEFT + RIGHT) / 2, height - 6);
  for (size_t i = 0; i < n; i++) {
    const report_forest_row *r = &rows[i];
    double y = TOP + ROW * (double)i + ROW / 2;
    char a[32], lo[32], hi[32];
    core_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                    LEFT - 10, y + 4);
    report_html_escape(out, r->label);
    core_buf_puts(out, "</text>\n");
    if (!usable(r)) {
      core_buf_printf(out,
                      "<text x=\"%.1f\" y=\"%.1f\" fill=\"#777777\">"
                      "no ratio</text>\n",
                      RIGHT + 10, y + 4);
      continue;
    }
    core_fmt_sig(a, sizeof a, r->ratio, 3);
    core_fmt_sig(lo, sizeof lo, r->lo, 3);
    core_fmt_sig(hi, sizeof hi, r->hi, 3);
    core_buf_printf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#1f4e79\" stroke-width=\"2\"/>\n"
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#1f4e79\" stroke-width=\"2\"/>\n"
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#1f4e79\" stroke-width=\"2\"/>\n"
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" "
                    "fill=\"#1f4e79\"/>\n",
                    xpos(r->lo, l0, l1), y, xpos(r->hi, l0, l1), y,
                    xpos(r->lo, l0, l1), y - 5, xpos(r->lo, l0, l1), y + 5,
                    xpos(r->hi, l0, l1), y - 5, xpos(r->hi, l0, l1), y + 5,
                    xpos(r->ratio, l0, l1) - 4.5, y - 4.5);
    core_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\">%s× [%s–%s] ",
                    RIGHT + 10, y + 4, a, lo, hi);
    report_html_escape(out, r->verdict ? r->verdict : "");
    core_buf_puts(out, "</text>\n");
  }
  if (n == 0)
    core_buf_printf(out,
                    "<text x=\"%.1f\" y=\"%.1f\" fill=\"#777777\">"
                    "no arm has a ratio yet</text>\n",
                    LEFT + 10, TOP + ROW / 2 + 4);
  core_buf_puts(out, "</svg>\n");
}
