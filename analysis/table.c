/* table.c: the terminal table of an analysis, shaped like the published
 * one: per workload and metric, arm, median with unit, ratio, CI, verdict.
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

/* Width of the widest arm name, so that the columns line up. */
static int arm_width(const analysis_summary *s) {
  size_t w = 3;
  for (size_t i = 0; i < s->n_cells; i++)
    if (strlen(s->cells[i].arm) > w)
      w = strlen(s->cells[i].arm);
  return (int)w;
}

static void write_comparisons(const analysis_summary *s, core_buf *out) {
  int aw = arm_width(s);
  for (size_t i = 0; i < s->n_cells; i++) {
    const analysis_cell *c = &s->cells[i];
    const analysis_result *r;
    const char *unit = proto_metric_unit(c->metric);
    char med[32], ratio[32], lo[32], hi[32], medu[48];
    int first = i == 0 || strcmp(c->workload, s->cells[i - 1].workload) ||
                strcmp(c->metric, s->cells[i - 1].metric);
    if (first)
      core_buf_printf(out, "%s%s · %s\n", i ? "\n" : "", c->workload,
                      c->metric);
    sig3(c->median, med, sizeof med);
    if (c->n_valid == 0)
      snprintf(medu, sizeof medu, "no data");
    else
      snprintf(medu, sizeof medu, "%s%s%s", med, unit && unit[0] ? " " : "",
               unit ? unit : "");
    core_buf_printf(out, "  %-*s  %-11s", aw, c->arm, medu);
    if (s->reference && strcmp(c->arm, s->reference) == 0) {
      core_buf_puts(out, "  reference");
    } else if ((r = find(s, c->workload, c->metric, c->arm)) != NULL) {
      sig3(r->ratio, ratio, sizeof ratio);
      sig3(r->ci_low, lo, sizeof lo);
      sig3(r->ci_high, hi, sizeof hi);
      core_buf_printf(out, "  %6s×  [%s, %s]  %s", ratio, lo, hi, r->verdict);
      if (r->note)
        core_buf_printf(out, " (%s)", r->note);
    }
    core_buf_printf(out, "  n=%zu", c->n_valid);
    if (c->n_planned)
      core_buf_printf(out, "/%zu", c->n_planned);
    if (c->n_invalid)
      core_buf_printf(out, ", %zu invalid", c->n_invalid);
    if (c->n_superseded)
      core_buf_printf(out, ", %zu superseded", c->n_superseded);
    core_buf_puts(out, "\n");
  }
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
    core_buf_printf(out, "  %-8s %ld/%ld rounds  %s\n", h->name,
                    h->rounds_done, h->rounds_planned,
                    h->counted ? "counted" : "not counted");
  }
  for (size_t i = 0; i < s->n_results; i++) {
    const analysis_result *x = &s->results[i];
    if (!x->across)
      continue;
    char ratio[32], lo[32], hi[32];
    sig3(x->ratio, ratio, sizeof ratio);
    sig3(x->ci_low, lo, sizeof lo);
    sig3(x->ci_high, hi, sizeof hi);
    core_buf_printf(out,
                    "\n%s · %s · %s across hosts: %s×  [%s, %s]  %s: %s\n",
                    x->workload, x->metric, x->arm, ratio, lo, hi, x->verdict,
                    x->why ? x->why : "");
    for (size_t k = 0; k < s->n_results; k++) {
      const analysis_result *r = &s->results[k];
      if (r->across || strcmp(r->workload, x->workload) ||
          strcmp(r->metric, x->metric) || strcmp(r->arm, x->arm))
        continue;
      sig3(r->ratio, ratio, sizeof ratio);
      sig3(r->ci_low, lo, sizeof lo);
      sig3(r->ci_high, hi, sizeof hi);
      core_buf_printf(out, "  %-8s %6s×  [%s, %s]  %s  n=%zu/%zu\n", r->host,
                      ratio, lo, hi, r->verdict, r->n, r->n_reference);
    }
  }
}

static void write_hypotheses(const analysis_summary *s, core_buf *out) {
  if (s->n_hypotheses == 0)
    return;
  core_buf_puts(out, "\nHypotheses\n");
  for (size_t i = 0; i < s->n_hypotheses; i++) {
    const analysis_hypothesis *h = &s->hypotheses[i];
    if (s->across)
      core_buf_printf(out, "  %s  %s %s: %s\n", h->id,
                      h->host ? h->host : "across hosts",
                      proto_outcome_word(h->outcome), h->says);
    else
      core_buf_printf(out, "  %s  %s: %s\n", h->id,
                      proto_outcome_word(h->outcome), h->says);
    core_buf_printf(out, "      %s: %s\n", h->claim ? h->claim : "",
                    h->reason ? h->reason : "");
  }
}

static void write_exclusions(const analysis_summary *s, core_buf *out) {
  if (s->n_exclusions == 0)
    return;
  core_buf_puts(out, "\nNot counted\n");
  for (size_t i = 0; i < s->n_exclusions; i++) {
    const analysis_exclusion *e = &s->exclusions[i];
    core_buf_printf(out, "  %s / %s: %zu run%s: %s\n", e->workload, e->arm,
                    e->runs, e->runs == 1 ? "" : "s", e->reason);
  }
}

void analysis_write_table(const analysis_summary *s, core_buf *out) {
  char conf[32];
  /* "95", "99.9": the level as the sheet wrote it. */
  snprintf(conf, sizeof conf, "%.10g", s->confidence * 100.0);
  core_buf_printf(out,
                  "%s (sheet version %d): %s per arm, ratio to %s, %s%% "
                  "percentile bootstrap CI, %ld resamples, seed %lu\n\n",
                  s->protocol, s->sheet_version, s->estimator,
                  s->reference ? s->reference : "the reference", conf,
                  s->resamples, s->seed);
  write_comparisons(s, out);
  if (s->across)
    write_hosts(s, out);
  write_hypotheses(s, out);
  write_exclusions(s, out);
  if (s->original) {
    core_buf_printf(out,
                    "\nUnder the registered rule (version 0), because %s\n\n",
                    s->original_why ? s->original_why : "of an amendment");
    write_comparisons(s->original, out);
    write_hypotheses(s->original, out);
  }
}
