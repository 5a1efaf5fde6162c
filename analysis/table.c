/* table.c: the terminal summary of an analysis, shaped like the published
 * table: workloads and metrics down, arms across, each cell the median
 * with its IQR and, beside the reference, the ratio, its CI and the
 * verdict; cut into blocks of arms that fit the terminal's width.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

/* x with 3 significant digits, as the published report writes it; a
 * missing number (NaN) is "-". */
static void sig3(double x, char *out, size_t cap) {
  if (isnan(x))
    snprintf(out, cap, "-");
  else
    core_fmt_sig(out, cap, x, 3);
}

static const analysis_result *find(const analysis_summary *s, const char *w,
                                   const char *m, const char *a) {
  for (size_t i = 0; i < s->n_results; i++)
    if (strcmp(s->results[i].workload, w) == 0 &&
        strcmp(s->results[i].metric, m) == 0 &&
        strcmp(s->results[i].arm, a) == 0)
      return &s->results[i];
  return NULL;
}

/* " (provisional)" after every verdict and outcome on incomplete or
 * quick data: of every host for the entries across hosts (host NULL), of
 * its host for a host's. */
static const char *prov(const analysis_summary *s, const char *host) {
  return analysis_provisional(s, host) ? " (provisional)" : "";
}

/* The matrix */

/* Text is UTF-8 ("×", "·", "µ"): its width on a terminal is its count of
 * code points. */
static size_t width_of(const char *t) {
  size_t n = 0;
  for (; *t; t++)
    n += ((unsigned char)*t & 0xC0) != 0x80;
  return n;
}

/* The lines of one cell of the matrix: the median, the comparison, and
 * under its verdict the verdict's marks (provisional, the registered
 * sample's verdict where it decides otherwise), when it has any: a third
 * line keeps the arms side by side where a longer second one would not
 * fit the width. */
typedef struct cell_text {
  char top[96], bottom[160], marks[160];
} cell_text;

/* One row of the matrix: a workload and metric. Cells are in s->cells in
 * workload, metric, arm order, so a row is a run of cells. */
typedef struct row_text {
  char label[160];
  size_t first, n; /* its cells */
  cell_text *cells;
  int empty; /* no arm has a valid value: listed once, after the matrix */
  int lines; /* 2, or 3 when a cell has marks */
} row_text;

static void cell_of(const analysis_summary *s, const analysis_cell *c,
                    const analysis_cell *ref, const char *unit, double f,
                    cell_text *t) {
  const analysis_result *r = find(s, c->workload, c->metric, c->arm);
  char med[32], iqr[32], ra[32], lo[32], hi[32];
  t->bottom[0] = t->marks[0] = '\0';
  if (c->n_valid == 0) {
    snprintf(t->top, sizeof t->top, "no data");
    return;
  }
  sig3(c->median * f, med, sizeof med);
  /* The spread to 2 digits: enough to judge the median's 3. */
  if (isnan(c->q3 - c->q1))
    snprintf(iqr, sizeof iqr, "-");
  else
    core_fmt_sig(iqr, sizeof iqr, (c->q3 - c->q1) * f, 2);
  snprintf(t->top, sizeof t->top, "%s%s%s (IQR %s)", med, *unit ? " " : "",
           unit, iqr);
  if (s->reference && strcmp(c->arm, s->reference) == 0) {
    snprintf(t->bottom, sizeof t->bottom, "reference, n=%zu", c->n_valid);
    return;
  }
  if (!r) {
    snprintf(t->bottom, sizeof t->bottom, "no comparison, n=%zu", c->n_valid);
    return;
  }
  /* What is missing is said in words (the reason is under the matrix). */
  sig3(r->ratio, ra, sizeof ra);
  sig3(r->ci_low, lo, sizeof lo);
  sig3(r->ci_high, hi, sizeof hi);
  if (isnan(r->ratio))
    snprintf(t->bottom, sizeof t->bottom, "no ratio, %s", r->verdict);
  else if (isnan(r->ci_low) || isnan(r->ci_high))
    snprintf(t->bottom, sizeof t->bottom, "%s×, no CI, %s", ra, r->verdict);
  else
    snprintf(t->bottom, sizeof t->bottom, "%s× [%s, %s] %s", ra, lo, hi,
             r->verdict);
  if (ref && ref->n_valid != c->n_valid) {
    size_t k = strlen(t->bottom);
    snprintf(t->bottom + k, sizeof t->bottom - k, ", n=%zu", c->n_valid);
  }
  snprintf(t->marks, sizeof t->marks, "%s",
           s->provisional ? "(provisional)" : "");
  if (s->original) {
    /* The registered sample's verdict when it decides otherwise. */
    const analysis_result *g =
        find(s->original, c->workload, c->metric, c->arm);
    size_t k = strlen(t->marks);
    if (!analysis_registered_has(s, c->workload, c->metric, c->arm))
      snprintf(t->marks + k, sizeof t->marks - k,
               "%snot in the registered plan", k ? " " : "");
    else if (!g)
      snprintf(t->marks + k, sizeof t->marks - k,
               "%sregistered: no comparison", k ? " " : "");
    else if (!analysis_same_decision(g, r))
      snprintf(t->marks + k, sizeof t->marks - k, "%sregistered (n=%zu): %s",
               k ? " " : "", g->n, g->verdict);
  }
}

/* The rows of the matrix; NULL when out of memory. */
static row_text *rows_of(const analysis_summary *s, const proto_sheet *sheet,
                         size_t n_arms, size_t *n_rows) {
  size_t n = n_arms ? s->n_cells / n_arms : 0;
  row_text *rows = core_calloc(n ? n : 1, sizeof *rows);
  cell_text *cells = core_calloc(s->n_cells ? s->n_cells : 1, sizeof *cells);
  if (!rows || !cells) {
    core_free(rows);
    core_free(cells);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    row_text *r = &rows[i];
    const analysis_cell *c0 = &s->cells[i * n_arms], *ref = NULL;
    const char *unit = sheet ? proto_metric_unit_of(sheet, c0->metric)
                             : proto_metric_unit(c0->metric);
    double top = NAN, f;
    r->first = i * n_arms;
    r->n = n_arms;
    r->cells = cells + r->first;
    r->empty = 1;
    for (size_t a = 0; a < n_arms; a++) {
      const analysis_cell *c = &s->cells[r->first + a];
      r->empty &= c->n_valid == 0;
      if (c->n_valid && (isnan(top) || c->median > top))
        top = c->median;
      if (s->reference && strcmp(c->arm, s->reference) == 0)
        ref = c;
    }
    unit = core_scale_unit(unit, top, &f);
    snprintf(r->label, sizeof r->label, "%s · %s", c0->workload, c0->metric);
    r->lines = 2;
    for (size_t a = 0; a < n_arms; a++) {
      cell_of(s, &s->cells[r->first + a], ref, unit, f, &r->cells[a]);
      if (r->cells[a].marks[0])
        r->lines = 3;
    }
  }
  *n_rows = n;
  return rows;
}

static void pad(core_buf *out, const char *t, size_t w) {
  size_t n = width_of(t);
  core_buf_puts(out, t);
  for (; n < w; n++)
    core_buf_puts(out, " ");
}

/* One block: the label column and arms [a0, a1). */
static void write_block(core_buf *out, const analysis_summary *s,
                        const row_text *rows, size_t n_rows, size_t lw,
                        const size_t *cw, size_t a0, size_t a1) {
  pad(out, "", lw);
  for (size_t a = a0; a < a1; a++) {
    const char *arm = rows[0].cells ? s->cells[a].arm : "";
    core_buf_puts(out, "  ");
    pad(out, arm, a + 1 < a1 ? cw[a] : 0);
  }
  core_buf_puts(out, "\n");
  for (size_t i = 0; i < n_rows; i++)
    for (int line = 0; line < rows[i].lines && !rows[i].empty; line++) {
      pad(out, line ? "" : rows[i].label, lw);
      for (size_t a = a0; a < a1; a++) {
        const cell_text *t = &rows[i].cells[a];
        core_buf_puts(out, "  ");
        pad(out,
            line == 0   ? t->top
            : line == 1 ? t->bottom
                        : t->marks,
            a + 1 < a1 ? cw[a] : 0);
      }
      /* No trailing blanks. */
      while (out->len && out->data[out->len - 1] == ' ')
        out->data[--out->len] = '\0';
      core_buf_puts(out, "\n");
    }
}

static void wrap(core_buf *out, const char *text, int width, int first,
                 int rest);
/* wrap of the text built in line, whose running out of memory is out's;
 * frees line. */
static void wrap_out(core_buf *out, core_buf *line, int width, int first,
                     int rest) {
  if (line->data)
    wrap(out, line->data, width, first, rest);
  if (line->oom)
    out->oom = 1;
  core_buf_free(line);
}

/* Rows with no valid value in any arm take one line between them, not two
 * lines each of "no data". */
static void write_empty_rows(core_buf *out, const row_text *rows,
                             size_t n_rows, int width, int after_matrix) {
  core_buf line;
  core_buf_init(&line);
  for (size_t i = 0; i < n_rows; i++)
    if (rows[i].empty)
      core_buf_printf(&line, "%s%s",
                      line.len ? ", " : "No data yet: ", rows[i].label);
  if (line.len) {
    core_buf_puts(out, after_matrix ? "\n" : "");
    wrap(out, line.data, width, 0, 2);
  }
  if (line.oom)
    out->oom = 1;
  core_buf_free(&line);
}

static void write_matrix(const analysis_summary *s, const proto_sheet *sheet,
                         int width, core_buf *out) {
  size_t n_arms = 0, n_rows, lw = 0, *cw;
  row_text *rows;
  /* The arms are those of the first row's cells, in the sheet's order. */
  while (n_arms < s->n_cells &&
         strcmp(s->cells[n_arms].workload, s->cells[0].workload) == 0 &&
         strcmp(s->cells[n_arms].metric, s->cells[0].metric) == 0)
    n_arms++;
  if (n_arms == 0)
    return;
  rows = rows_of(s, sheet, n_arms, &n_rows);
  cw = core_calloc(n_arms, sizeof *cw);
  if (!rows || !cw) {
    out->oom = 1;
    if (rows)
      core_free(rows[0].cells);
    core_free(rows);
    core_free(cw);
    return;
  }
  size_t shown = 0;
  for (size_t i = 0; i < n_rows; i++) {
    if (rows[i].empty)
      continue;
    shown++;
    if (width_of(rows[i].label) > lw)
      lw = width_of(rows[i].label);
    for (size_t a = 0; a < n_arms; a++) {
      size_t t = width_of(rows[i].cells[a].top),
             b = width_of(rows[i].cells[a].bottom),
             k = width_of(rows[i].cells[a].marks);
      size_t h = width_of(s->cells[a].arm), m = t > b ? t : b;
      m = m > h ? m : h;
      m = m > k ? m : k;
      cw[a] = m > cw[a] ? m : cw[a];
    }
  }
  /* As many arms per block as fit; always at least one. */
  for (size_t a0 = 0; a0 < n_arms && shown;) {
    size_t a1 = a0 + 1, used = lw + 2 + cw[a0];
    while (a1 < n_arms && used + 2 + cw[a1] <= (size_t)width)
      used += 2 + cw[a1++];
    if (a0)
      core_buf_puts(out, "\n");
    write_block(out, s, rows, n_rows, lw, cw, a0, a1);
    a0 = a1;
  }
  write_empty_rows(out, rows, n_rows, width, shown > 0);
  core_free(rows[0].cells);
  core_free(rows);
  core_free(cw);
}

/* Prose, wrapped to the width */

/* Appends text as lines of at most width columns (a word longer than a
 * line stands alone), the first indented by first spaces, the rest by
 * rest. */
static void wrap(core_buf *out, const char *text, int width, int first,
                 int rest) {
  size_t col = 0, ind = (size_t)first;
  const char *p = text;
  while (*p) {
    const char *e = p;
    size_t wlen;
    char word[1024];
    while (*e && *e != ' ')
      e++;
    wlen = (size_t)(e - p) < sizeof word ? (size_t)(e - p) : sizeof word - 1;
    memcpy(word, p, wlen);
    word[wlen] = '\0';
    if (col && col + 1 + width_of(word) > (size_t)width) {
      core_buf_puts(out, "\n");
      col = 0;
      ind = (size_t)rest;
    }
    if (col == 0) {
      for (size_t i = 0; i < ind; i++)
        core_buf_puts(out, " ");
      col = ind;
    } else {
      core_buf_puts(out, " ");
      col++;
    }
    core_buf_puts(out, word);
    col += width_of(word);
    p = *e ? e + 1 : e;
  }
  core_buf_puts(out, "\n");
}

/* Why a comparison has no ratio or no CI (too few values for the rule's
 * min_n, a reference median of 0, a ratio that overflows), one line
 * each: too long for a cell of the matrix. */
static void write_notes(const analysis_summary *s, int width, core_buf *out) {
  int any = 0;
  for (size_t i = 0; i < s->n_results; i++) {
    const analysis_result *r = &s->results[i];
    core_buf line;
    if (!r->note)
      continue;
    if (!any++)
      core_buf_puts(out, "\nWhy a ratio or CI is missing\n");
    core_buf_init(&line);
    core_buf_printf(&line, "%s · %s  %s: %s: %s", r->workload, r->metric,
                    r->arm, r->verdict, r->note);
    wrap_out(out, &line, width, 2, 6);
  }
}

/* A host line's ratio and interval: "1.23×", or "no ratio" in words
 * where there is none (the reason is in the verdict). */
static void ratio_cell(const analysis_result *r, char *ratio, size_t rcap,
                       char *lo, size_t lcap, char *hi, size_t hcap) {
  if (isnan(r->ratio)) {
    snprintf(ratio, rcap, "no ratio");
  } else {
    sig3(r->ratio, ratio, rcap);
    strncat(ratio, "×", rcap - strlen(ratio) - 1);
  }
  sig3(r->ci_low, lo, lcap);
  sig3(r->ci_high, hi, hcap);
}

/* A sheet with hosts: each host's share of its rounds, then every
 * comparison on each host beside the cross-host verdict's reason. */
static void write_hosts(const analysis_summary *s, core_buf *out) {
  core_buf_printf(out,
                  "\nHosts (one counts with %g%% of its rounds "
                  "completed; a cross-host estimate needs %ld)\n",
                  s->min_completed * 100, s->min_hosts);
  for (size_t i = 0; i < s->n_hosts; i++) {
    const analysis_host *h = &s->hosts[i];
    core_buf_printf(out, "  %-8s %ld/%ld rounds  %s", h->name, h->rounds_done,
                    h->rounds_planned, h->counted ? "counted" : "not counted");
    if (h->status.incomplete)
      core_buf_printf(out, "  incomplete: %ld of %ld runs",
                      h->status.collected, h->status.planned);
    core_buf_puts(out, "\n");
  }
  for (size_t i = 0; i < s->n_results; i++) {
    const analysis_result *x = &s->results[i];
    if (!x->across)
      continue;
    char ratio[32], lo[32], hi[32];
    ratio_cell(x, ratio, sizeof ratio, lo, sizeof lo, hi, sizeof hi);
    core_buf_printf(out,
                    "\n%s · %s · %s across hosts: %s  [%s, %s]  %s%s: %s\n",
                    x->workload, x->metric, x->arm, ratio, lo, hi, x->verdict,
                    prov(s, NULL), x->why ? x->why : "");
    for (size_t k = 0; k < s->n_host_results; k++) {
      const analysis_result *r = &s->host_results[k];
      if (strcmp(r->workload, x->workload) || strcmp(r->metric, x->metric) ||
          strcmp(r->arm, x->arm))
        continue;
      ratio_cell(r, ratio, sizeof ratio, lo, sizeof lo, hi, sizeof hi);
      core_buf_printf(out, "  %-8s %7s  [%s, %s]  %s%s  n=%zu/%zu\n", r->host,
                      ratio, lo, hi, r->verdict, prov(s, r->host), r->n,
                      r->n_reference);
    }
  }
}

static void write_hypotheses(const analysis_summary *s, int width,
                             core_buf *out) {
  if (s->n_hypotheses == 0)
    return;
  core_buf_puts(out, "\nHypotheses\n");
  /* Across hosts: the outcome across hosts, then each host's. */
  for (size_t i = 0; i < s->n_hypotheses + s->n_host_hypotheses; i++) {
    const analysis_hypothesis *h =
        i < s->n_hypotheses ? &s->hypotheses[i]
                            : &s->host_hypotheses[i - s->n_hypotheses];
    core_buf line;
    core_buf_init(&line);
    if (s->across)
      core_buf_printf(
          &line, "%s  %s %s%s: %s", h->id, h->host ? h->host : "across hosts",
          proto_outcome_word(h->outcome), prov(s, h->host), h->says);
    else
      core_buf_printf(&line, "%s  %s%s: %s", h->id,
                      proto_outcome_word(h->outcome), prov(s, NULL), h->says);
    if (line.data)
      wrap(out, line.data, width, 2, 6);
    core_buf_free(&line);
    core_buf_init(&line);
    core_buf_printf(&line, "%s: %s", h->claim ? h->claim : "",
                    h->reason ? h->reason : "");
    wrap_out(out, &line, width, 6, 6);
  }
}

static void write_exclusions(const analysis_summary *s, int width,
                             core_buf *out) {
  if (s->n_exclusions == 0)
    return;
  core_buf_puts(out, "\nNot counted\n");
  for (size_t i = 0; i < s->n_exclusions; i++) {
    const analysis_exclusion *e = &s->exclusions[i];
    core_buf line;
    core_buf_init(&line);
    core_buf_printf(&line, "%s / %s: %zu run%s: %s", e->workload, e->arm,
                    e->runs, e->runs == 1 ? "" : "s", e->reason);
    wrap_out(out, &line, width, 2, 6);
  }
}

/* At the registered sample and rule: only what decides otherwise. The
 * registered sample's verdicts share the data's status. */
static void write_original(const analysis_summary *s, int width,
                           core_buf *out) {
  size_t differ = 0, added = 0, added_results = 0;
  core_buf line;
  core_buf_init(&line);
  core_buf_printf(&line,
                  "At the registered sample and rule (version 0), because "
                  "%s:",
                  s->original_why ? s->original_why : "of an amendment");
  core_buf_puts(out, "\n");
  wrap_out(out, &line, width, 0, 2);
  for (size_t i = 0; i < s->n_results; i++) {
    const analysis_result *r = &s->results[i];
    const analysis_result *o =
        find(s->original, r->workload, r->metric, r->arm);
    if (o && analysis_same_decision(o, r))
      continue;
    if (!o && !analysis_registered_has(s, r->workload, r->metric, r->arm)) {
      added++;
      added_results++;
      core_buf_printf(out, "  %s · %s  %s: not in the registered plan\n",
                      r->workload, r->metric, r->arm);
      continue;
    }
    differ++;
    if (o)
      core_buf_printf(out, "  %s · %s  %s: %s%s (n=%zu), amended: %s\n",
                      r->workload, r->metric, r->arm, o->verdict,
                      prov(s->original, NULL), o->n, r->verdict);
    else
      core_buf_printf(out, "  %s · %s  %s: not analysed\n", r->workload,
                      r->metric, r->arm);
  }
  /* The hypotheses: only those whose outcome differs, or that the
   * registered version does not state. */
  for (size_t i = 0; i < s->n_hypotheses; i++) {
    const analysis_hypothesis *h = &s->hypotheses[i], *g = NULL;
    for (size_t j = 0; j < s->original->n_hypotheses; j++)
      if (strcmp(s->original->hypotheses[j].id, h->id) == 0)
        g = &s->original->hypotheses[j];
    if (g && g->outcome == h->outcome)
      continue;
    if (!g)
      added++;
    else
      differ++;
    if (g)
      core_buf_printf(out, "  hypothesis %s: %s%s, amended: %s\n", h->id,
                      proto_outcome_word(g->outcome), prov(s->original, NULL),
                      proto_outcome_word(h->outcome));
    else
      core_buf_printf(out, "  hypothesis %s: not in the registered plan\n",
                      h->id);
  }
  if (!differ)
    core_buf_printf(out,
                    "  every comparison and hypothesis %sis decided the "
                    "same (%zu comparison%s, %zu hypothes%s)\n",
                    added ? "the registered plan has " : "",
                    s->n_results - added_results,
                    s->n_results - added_results == 1 ? "" : "s",
                    s->original->n_hypotheses,
                    s->original->n_hypotheses == 1 ? "is" : "es");
}

/* The level of the intervals in words ("95", or with looks or a family
 * "95% overall: 98.3 to 99.2" per comparison), and each early stop
 * (status_stops), so that no interval is read at a level it is not. */
static void conf_words(const analysis_summary *s, char *out, size_t cap) {
  double lo = 1, hi = 0;
  for (size_t i = 0; i < s->n_results + s->n_pairs; i++) {
    const analysis_result *r =
        i < s->n_results ? &s->results[i] : &s->pairs[i - s->n_results];
    lo = r->confidence_used < lo ? r->confidence_used : lo;
    hi = r->confidence_used > hi ? r->confidence_used : hi;
  }
  if ((!s->looks && !s->family) || hi < lo)
    snprintf(out, cap, "%.10g", s->confidence * 100.0);
  else if (lo == hi)
    snprintf(out, cap, "%.10g%% overall, each at %.4g", s->confidence * 100,
             lo * 100);
  else
    snprintf(out, cap, "%.10g%% overall, each at %.4g to %.4g",
             s->confidence * 100, lo * 100, hi * 100);
}

static void status_stops(const analysis_summary *s, core_buf *out) {
  if (s->status.stopped)
    core_buf_printf(out, "early stop: %s\n", s->status.stops);
}

/* Pairs that no registered rule made are said so under the status. */
static void write_exploratory(const analysis_summary *s, core_buf *out) {
  if (s->pairs_exploratory && s->n_pairs)
    core_buf_printf(out,
                    "exploratory: analyze --pairs adds %zu comparison%s of "
                    "pairs of arms that the registered rule does not make\n",
                    s->n_pairs, s->n_pairs == 1 ? "" : "s");
}

static void brief_line(const analysis_result *r, core_buf *line);

/* The rule's pairs, a line each as the run's summary writes them. */
static void write_pairs(const analysis_summary *s, int width, core_buf *out) {
  if (!s->n_pairs)
    return;
  core_buf_printf(out,
                  "\nPairs (each later arm against each earlier one, "
                  "the same rule%s)\n",
                  s->pairs_exploratory ? "; exploratory: not registered" : "");
  for (size_t i = 0; i < s->n_pairs; i++) {
    core_buf b;
    core_buf_init(&b);
    brief_line(&s->pairs[i], &b);
    wrap_out(out, &b, width, 2, 6);
  }
}

void analysis_write_table(const analysis_summary *s, const proto_sheet *sheet,
                          int width, core_buf *out) {
  char conf[80], line[256];
  core_buf head;
  if (width < 40)
    width = 40;
  /* First, where it cannot be missed: how the data stand to the plan. */
  data_status_line(&s->status, line, sizeof line);
  core_buf_printf(out, "status: %s%s\n", line,
                  s->provisional ? " (verdicts are provisional)" : "");
  status_stops(s, out);
  write_exploratory(s, out);
  /* "95", "99.9": the level as the sheet wrote it. */
  conf_words(s, conf, sizeof conf);
  core_buf_init(&head);
  core_buf_printf(&head,
                  "%s (sheet version %d): %s per arm (IQR), ratio to %s, "
                  "%s%% percentile bootstrap CI, %ld resamples, seed %lu",
                  s->protocol, s->sheet_version, s->estimator,
                  s->reference ? s->reference : "the reference", conf,
                  s->resamples, s->seed);
  wrap_out(out, &head, width, 0, 0);
  core_buf_puts(out, "\n");
  write_matrix(s, sheet, width, out);
  write_pairs(s, width, out);
  write_notes(s, width, out);
  if (s->across)
    write_hosts(s, out);
  write_hypotheses(s, width, out);
  write_exclusions(s, width, out);
  if (s->original)
    write_original(s, width, out);
}

/* The brief summary */

/* A comparison as hyperfine says it: the factor by which the arm's value
 * stands above the reference's ("2.08× [1.59–3.41] of a") or, below it,
 * the inverse ("6.80× [5.29–10.0] below gzip"), then the verdict. */
static void brief_line(const analysis_result *r, core_buf *line) {
  char ra[32], lo[32], hi[32];
  const char *ref = r->reference ? r->reference : "the reference";
  core_buf_printf(line, "%s · %s  %s  ", r->workload, r->metric, r->arm);
  if (isnan(r->ratio)) {
    core_buf_printf(line, "no ratio to %s: %s", ref, r->verdict);
    return;
  }
  int below = r->ratio > 0 && r->ratio < 1;
  sig3(below ? 1 / r->ratio : r->ratio, ra, sizeof ra);
  if (isnan(r->ci_low) || isnan(r->ci_high)) {
    core_buf_printf(line, "%s× (no CI) %s %s: %s", ra, below ? "below" : "of",
                    ref, r->verdict);
    return;
  }
  sig3(below ? 1 / r->ci_high : r->ci_low, lo, sizeof lo);
  sig3(below ? 1 / r->ci_low : r->ci_high, hi, sizeof hi);
  core_buf_printf(line, "%s× [%s–%s] %s %s: %s", ra, lo, hi,
                  below ? "below" : "of", ref, r->verdict);
}

/* What did not count, each reason once with the workloads and arms it
 * applies to. */
static void brief_exclusions(const analysis_summary *s, int width,
                             core_buf *out) {
  if (s->n_exclusions)
    core_buf_puts(out, "\nNot counted\n");
  for (size_t i = 0; i < s->n_exclusions; i++) {
    const analysis_exclusion *e = &s->exclusions[i];
    size_t j = 0;
    while (j < i && strcmp(s->exclusions[j].reason, e->reason) != 0)
      j++;
    if (j < i)
      continue; /* said with its first */
    core_buf line;
    core_buf_init(&line);
    for (size_t k = i; k < s->n_exclusions; k++) {
      const analysis_exclusion *x = &s->exclusions[k];
      if (strcmp(x->reason, e->reason) == 0)
        core_buf_printf(&line, "%s%s / %s (%zu run%s)", k > i ? ", " : "",
                        x->workload, x->arm, x->runs, x->runs == 1 ? "" : "s");
    }
    core_buf_printf(&line, ": %s", e->reason);
    wrap_out(out, &line, width, 2, 6);
  }
}

void analysis_write_brief(const analysis_summary *s, const char *sheet_path,
                          int width, core_buf *out) {
  char line[256], conf[80];
  if (width < 40)
    width = 40;
  data_status_line(&s->status, line, sizeof line);
  core_buf_printf(out, "status: %s%s\n", line,
                  s->provisional ? " (verdicts are provisional)" : "");
  status_stops(s, out);
  write_exploratory(s, out);
  conf_words(s, conf, sizeof conf);
  core_buf_printf(out, "%s (sheet version %d): %s ratio, %s%% CI\n",
                  s->protocol, s->sheet_version, s->estimator, conf);
  for (size_t i = 0; i < s->n_results + s->n_pairs; i++) {
    const analysis_result *r =
        i < s->n_results ? &s->results[i] : &s->pairs[i - s->n_results];
    if (r->host)
      continue; /* a host's own: in analyze's Hosts part */
    core_buf b;
    core_buf_init(&b);
    brief_line(r, &b);
    wrap_out(out, &b, width, 2, 6);
  }
  for (size_t i = 0; i < s->n_hypotheses; i++) {
    const analysis_hypothesis *h = &s->hypotheses[i];
    core_buf b;
    core_buf_init(&b);
    core_buf_printf(&b, "%s %s: %s", h->id, proto_outcome_word(h->outcome),
                    h->says);
    if (b.data)
      wrap(out, b.data, width, 2, 6);
    core_buf_free(&b);
  }
  brief_exclusions(s, width, out);
  if (s->original)
    core_buf_puts(out, "\nan amendment changed the plan: analyze says what "
                       "the registered sample and rule decide\n");
  core_buf_printf(out, "the whole table: prereg analyze %s\n",
                  sheet_path ? sheet_path : "SHEET");
}
