/* svg.c: the overview forest plot: one row per comparison, grouped by
 * workload and metric, its ratio to the reference as a dot and its
 * interval as a bar on a log axis, the rule's thresholds drawn across.
 * Fixed-precision coordinates keep the bytes reproducible; every label's
 * width is estimated on the wide side and the picture sized to hold it.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

#define FONT 13.0
#define PLOT_W 520.0 /* the axis' length */
#define TOP 58.0     /* the title and the marks' labels above the rows */
#define ROW 24.0
#define GROUP 24.0
#define BOTTOM 46.0
#define PAD 10.0

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

/* The axis */

typedef struct axis {
  double l0, l1; /* log10 bounds */
  double x0, x1; /* pixels */
  double tv[64]; /* tick values */
  size_t nt;
} axis;

static double xpos(const axis *a, double v) {
  return a->x0 + (log10(v) - a->l0) / (a->l1 - a->l0) * (a->x1 - a->x0);
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

/* Ticks 1x 3x 10x 30x where the range allows, finer where it is narrow,
 * evenly spaced for a tie's few percent. */
static void choose_ticks(axis *a) {
  static const double m13[] = {1, 3}, m125[] = {1, 2, 5}, m1[] = {1},
                      fine[] = {1, 1.2, 1.5, 2, 3, 5, 7};
  a->nt = ticks(a->l0, a->l1, m13, 2, a->tv, 64);
  if (a->nt > 9)
    a->nt = ticks(a->l0, a->l1, m1, 1, a->tv, 64);
  if (a->nt < 3)
    a->nt = ticks(a->l0, a->l1, m125, 3, a->tv, 64);
  if (a->nt < 3)
    a->nt = ticks(a->l0, a->l1, fine, 7, a->tv, 64);
  if (a->nt < 3) {
    double lo = pow(10, a->l0), hi = pow(10, a->l1), raw = (hi - lo) / 4;
    double step = pow(10, floor(log10(raw)));
    if (raw / step >= 5)
      step *= 5;
    else if (raw / step >= 2)
      step *= 2;
    a->nt = 0;
    for (double v = ceil(lo / step) * step; v <= hi && a->nt < 64; v += step)
      a->tv[a->nt++] = round(v / step) * step;
  }
}

/* "1.00" reads worse than "1" on an axis: trailing zeros dropped. */
static void tick_label(double v, char *lab, size_t cap) {
  core_fmt_sig(lab, cap, v, 3);
  if (strchr(lab, '.')) {
    size_t k = strlen(lab);
    while (k && lab[k - 1] == '0')
      lab[--k] = '\0';
    if (k && lab[k - 1] == '.')
      lab[--k] = '\0';
  }
}

static void bounds(axis *a, const report_forest_row *rows, size_t n,
                   const report_forest_mark *marks, size_t nm) {
  double pad;
  a->l0 = a->l1 = 0; /* the axis always shows 1 */
  for (size_t i = 0; i < n; i++) {
    if (!usable(&rows[i]))
      continue;
    a->l0 = fmin(a->l0, log10(fmin(rows[i].lo, rows[i].ratio)));
    a->l1 = fmax(a->l1, log10(fmax(rows[i].hi, rows[i].ratio)));
  }
  for (size_t i = 0; i < nm; i++)
    if (marks[i].x > 0 && isfinite(marks[i].x)) {
      double hi = marks[i].x2 > marks[i].x ? marks[i].x2 : marks[i].x;
      a->l0 = fmin(a->l0, log10(marks[i].x));
      a->l1 = fmax(a->l1, log10(hi));
    }
  pad = fmax((a->l1 - a->l0) * 0.06, 0.02);
  a->l0 -= pad;
  a->l1 += pad;
  choose_ticks(a);
}

/* Colours */

static const char *row_colour(const report_forest_row *r) {
  if (r->worse > 0)
    return "#b03a2e";
  if (r->worse < 0)
    return "#1e7b3c";
  if (r->verdict && strcmp(r->verdict, "inconclusive") != 0)
    return "#1f4e79"; /* a tie, or a verdict without a direction */
  return "#6b6b6b";
}

static void numbers(const report_forest_row *r, char *out, size_t cap) {
  char a[32], lo[32], hi[32];
  if (!usable(r)) {
    if (isfinite(r->ratio) && r->ratio > 0) {
      core_fmt_sig(a, sizeof a, r->ratio, 3);
      snprintf(out, cap, "%s×, no CI, %s", a, r->verdict ? r->verdict : "");
    } else {
      snprintf(out, cap, "no ratio, %s", r->verdict ? r->verdict : "");
    }
    return;
  }
  core_fmt_sig(a, sizeof a, r->ratio, 3);
  core_fmt_sig(lo, sizeof lo, r->lo, 3);
  core_fmt_sig(hi, sizeof hi, r->hi, 3);
  snprintf(out, cap, "%s× [%s–%s] %s", a, lo, hi,
           r->verdict ? r->verdict : "");
}

static void text(core_buf *out, double x, double y, const char *anchor,
                 const char *extra, const char *s) {
  core_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\"%s%s%s%s>", x, y,
                  anchor ? " text-anchor=\"" : "", anchor ? anchor : "",
                  anchor ? "\"" : "", extra ? extra : "");
  report_html_escape(out, s);
  core_buf_puts(out, "</text>\n");
}

/* The notes under the title */

#define NOTE_FONT 12.0
#define NOTE_LINE 17.0

double report_svg_notes_height(size_t n) {
  return NOTE_LINE * (double)n;
}

double report_svg_notes_width(const report_plot_note *notes, size_t n) {
  double w = 0;
  for (size_t i = 0; i < n; i++) /* the heading bold, so a tenth wider */
    w = fmax(w, PAD + 1.1 * report_text_width(notes[i].heading, NOTE_FONT) +
                    report_text_width(": ", NOTE_FONT) +
                    report_text_width(notes[i].text, NOTE_FONT) + PAD);
  return w;
}

void report_svg_notes_open(core_buf *out, const report_plot_note *notes,
                           size_t n) {
  for (size_t i = 0; i < n; i++) {
    core_buf_printf(out,
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%g\" "
                    "fill=\"#b03a2e\"><tspan font-weight=\"bold\">",
                    PAD, 18 + NOTE_LINE * (double)(i + 1), NOTE_FONT);
    report_html_escape(out, notes[i].heading);
    core_buf_puts(out, "</tspan>: ");
    report_html_escape(out, notes[i].text);
    core_buf_puts(out, "</text>\n");
  }
  if (n)
    core_buf_printf(out, "<g transform=\"translate(0 %.1f)\">\n",
                    report_svg_notes_height(n));
}

void report_svg_notes_close(core_buf *out, size_t n) {
  if (n)
    core_buf_puts(out, "</g>\n");
}

#define MARK_FONT 11.0 /* the marks' labels */
#define MARK_LINE 14.0 /* between their lines */
#define MARK_GAP 6.0   /* between two labels on a line */
#define MARK_MAX 16    /* marks laid out (the overview passes 16 at most) */

/* Where mark i's label is centred: over its line, or its band's middle. */
static double mark_x(const axis *a, const report_forest_mark *m) {
  return m->x2 > m->x ? (xpos(a, m->x) + xpos(a, m->x2)) / 2 : xpos(a, m->x);
}

/* The line of each mark's label (0 nearest the rows): taken left to
 * right, each goes on the first line where it clears the labels already
 * there, so that no two labels overlap however close their marks are.
 * OUT: line[i]; returns how many lines are used. */
static size_t place_marks(const axis *a, const report_forest_mark *marks,
                          size_t nm, size_t *line) {
  double end[MARK_MAX];
  int done[MARK_MAX] = {0};
  size_t lines = 0;
  for (size_t k = 0; k < nm && k < MARK_MAX; k++) {
    size_t i = MARK_MAX;
    for (size_t j = 0; j < nm && j < MARK_MAX; j++)
      if (!done[j] &&
          (i == MARK_MAX || mark_x(a, &marks[j]) < mark_x(a, &marks[i])))
        i = j;
    done[i] = 1;
    double w =
        report_text_width(marks[i].label ? marks[i].label : "", MARK_FONT);
    double left = mark_x(a, &marks[i]) - w / 2;
    size_t l = 0;
    while (l < lines && end[l] + MARK_GAP > left)
      l++;
    if (l == lines)
      lines++;
    end[l] = left + w;
    line[i] = l;
  }
  return lines;
}

/* Lines and labels of the rule's thresholds, behind the rows, each label
 * on the line place_marks gave it. */
static void draw_marks(core_buf *out, const axis *a, double y0, double y1,
                       const report_forest_mark *marks, size_t nm,
                       const size_t *line) {
  for (size_t i = 0; i < nm && i < MARK_MAX; i++) {
    const report_forest_mark *m = &marks[i];
    double x = xpos(a, m->x), lx = x;
    if (!(m->x > 0))
      continue;
    if (m->x2 > m->x) {
      double x2 = xpos(a, m->x2);
      core_buf_printf(out,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                      "height=\"%.1f\" fill=\"#dbe7f3\"/>\n",
                      x, y0, x2 - x, y1 - y0);
      lx = (x + x2) / 2;
    } else {
      core_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"#b03a2e\" stroke-dasharray=\"2 3\"/>\n",
                      x, y0, x, y1);
    }
    text(out, lx, y0 - 6 - (double)line[i] * MARK_LINE, "middle",
         " font-size=\"11\" fill=\"#555555\"", m->label ? m->label : "");
  }
}

static void draw_axis(core_buf *out, const axis *a, double y0, double y1,
                      const char *what) {
  double x1 = xpos(a, 1);
  for (size_t i = 0; i < a->nt; i++) {
    double x = xpos(a, a->tv[i]);
    char lab[40], full[48];
    tick_label(a->tv[i], lab, sizeof lab);
    snprintf(full, sizeof full, "%s×", lab);
    core_buf_printf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#e2e2e2\"/>\n",
                    x, y0, x, y1);
    text(out, x, y1 + 18, "middle", " fill=\"#555555\"", full);
  }
  core_buf_printf(out,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#333333\"/>\n"
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#333333\"/>\n",
                  x1, y0, x1, y1, a->x0, y1, a->x1, y1);
  text(out, (a->x0 + a->x1) / 2, y1 + 38, "middle", " fill=\"#555555\"", what);
}

static void draw_row(core_buf *out, const axis *a, double y,
                     const report_forest_row *r, double label_x) {
  const char *c = row_colour(r);
  char num[160];
  text(out, label_x, y + 4, "end", NULL, r->label);
  numbers(r, num, sizeof num);
  if (usable(r)) {
    double lo = xpos(a, r->lo), hi = xpos(a, r->hi), x = xpos(a, r->ratio);
    core_buf_printf(out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"%s\" stroke-width=\"2\"/>\n"
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"%s\" stroke-width=\"2\"/>\n"
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"%s\" stroke-width=\"2\"/>\n"
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" "
                    "fill=\"%s\"/>\n",
                    lo, y, hi, y, c, lo, y - 5, lo, y + 5, c, hi, y - 5, hi,
                    y + 5, c, x - 4.5, y - 4.5, c);
  }
  text(out, a->x1 + PAD, y + 4, NULL,
       usable(r) ? " fill=\"#1b1b1b\"" : " fill=\"#777777\"", num);
}

void report_forest_svg(core_buf *out, const char *title,
                       const report_forest_row *rows, size_t n,
                       const report_forest_mark *marks, size_t n_marks,
                       const report_plot_note *notes, size_t n_notes) {
  axis a;
  double label_w = 0, num_w = 0, head_w = 0, width, height, y;
  size_t groups = 0;
  const char *what = "ratio to the reference (log scale)";
  for (size_t i = 0; i < n; i++) {
    char num[160];
    int head =
        rows[i].group && (i == 0 || !rows[i - 1].group ||
                          strcmp(rows[i].group, rows[i - 1].group) != 0);
    groups += head;
    /* Bold, so a tenth wider. */
    if (head)
      head_w = fmax(head_w, 1.1 * report_text_width(rows[i].group, FONT));
    label_w = fmax(label_w, report_text_width(rows[i].label, FONT));
    numbers(&rows[i], num, sizeof num);
    num_w = fmax(num_w, report_text_width(num, FONT));
  }
  bounds(&a, rows, n, marks, n_marks);
  /* The headings stay left of the axis too. */
  a.x0 = PAD + fmax(14 + label_w, head_w) + PAD;
  a.x1 = a.x0 + PLOT_W;
  width = a.x1 + PAD + num_w + PAD;
  width = fmax(width, PAD + 1.1 * report_text_width(title, FONT) + PAD);
  width = fmax(width, PAD + head_w + PAD);
  width = fmax(width, report_svg_notes_width(notes, n_notes));
  /* Two lines of labels fit under the title; more push the rows down. */
  size_t line[MARK_MAX] = {0};
  size_t lines = place_marks(&a, marks, n_marks, line);
  double top = TOP + (lines > 2 ? (double)(lines - 2) * MARK_LINE : 0);
  height = top + ROW * (double)n + GROUP * (double)groups + BOTTOM;
  if (n == 0)
    height += ROW;
  height += report_svg_notes_height(n_notes);
  core_buf_printf(out,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                  "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
                  "font-size=\"13\">\n<title>",
                  ceil(width), height, ceil(width), height);
  report_html_escape(out, title);
  core_buf_puts(out, "</title>\n<rect width=\"100%\" height=\"100%\" "
                     "fill=\"#ffffff\"/>\n");
  text(out, PAD, 18, NULL, " font-weight=\"bold\"", title);
  report_svg_notes_open(out, notes, n_notes);
  /* Below the notes, in the shifted frame: as tall as without them. */
  double bottom = height - report_svg_notes_height(n_notes) - BOTTOM + 4;
  draw_marks(out, &a, top - 4, bottom, marks, n_marks, line);
  draw_axis(out, &a, top - 4, bottom, what);
  y = top;
  for (size_t i = 0; i < n; i++) {
    if (rows[i].group && (i == 0 || !rows[i - 1].group ||
                          strcmp(rows[i].group, rows[i - 1].group) != 0)) {
      text(out, PAD, y + GROUP / 2 + 4, NULL, " font-weight=\"bold\"",
           rows[i].group);
      y += GROUP;
    }
    draw_row(out, &a, y + ROW / 2, &rows[i], a.x0 - PAD);
    y += ROW;
  }
  if (n == 0)
    text(out, a.x0 + PAD, TOP + ROW / 2 + 4, NULL, " fill=\"#777777\"",
         "no arm has a ratio yet");
  report_svg_notes_close(out, n_notes);
  core_buf_puts(out, "</svg>\n");
}
