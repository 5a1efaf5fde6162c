/* markdown.c: report.md, the source every other page is rendered from.
 * The headline first, as the published study has it (the hypotheses in
 * words, the matrix of medians and ratios, the chart of every ratio),
 * then the data shown (every run per arm, in collection order, with its
 * spread), the setup, the arms and workloads, the rule, the deviations,
 * what fell, the threats, provenance in brief and the commands that
 * reproduce it; long lists go to provenance.md.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "imports/imports.h"
#include "reports/report.h"
#include "reports/report_internal.h"

/* Formatting */

#define esc report_md_esc
#define code_span report_code_span

/* x with 3 significant digits; "n/a" when not finite. */
static void sig(core_buf *b, double x) {
  char t[64];
  report_sig(t, sizeof t, x, 3);
  core_buf_puts(b, t);
}

/* A spread to 2 significant digits: enough to judge a median's 3. */
static void sig2(core_buf *b, double x) {
  char t[64];
  report_sig(t, sizeof t, x, 2);
  core_buf_puts(b, t);
}

/* "2.20× [1.87–2.45]"; what is missing in words: "no ratio" (a
 * reference median of 0, an overflow), "0.500×, no CI" (too few values
 * for min_n). */
static void ratio_ci(core_buf *b, const analysis_result *r) {
  if (!isfinite(r->ratio)) {
    core_buf_puts(b, "no ratio,");
    return;
  }
  sig(b, r->ratio);
  if (!isfinite(r->ci_low) || !isfinite(r->ci_high)) {
    core_buf_puts(b, "×, no CI,");
    return;
  }
  core_buf_puts(b, "× [");
  sig(b, r->ci_low);
  core_buf_puts(b, "–");
  sig(b, r->ci_high);
  core_buf_puts(b, "]");
}

/* " (provisional)" after a verdict or outcome on incomplete or quick
 * data, wherever one is shown. */
static const char *prov(const analysis_summary *a) {
  return a && a->provisional ? " (provisional)" : "";
}

/* A verdict as every page writes it: bold, last in its cell or sentence,
 * then its marks: provisional on data that do not complete the plan, and
 * the registered sample's verdict where that decides otherwise. */
static void verdict(core_buf *b, const analysis_summary *a,
                    const analysis_result *r) {
  const analysis_result *g;
  core_buf_puts(b, "**");
  esc(b, r->verdict);
  core_buf_printf(b, "**%s", prov(a));
  if (!a->original)
    return;
  g = report_find_result(a->original, r->workload, r->metric, r->arm);
  if (g && analysis_same_decision(g, r))
    return;
  if (!analysis_registered_has(a, r->workload, r->metric, r->arm)) {
    core_buf_puts(b, "; not in the registered plan");
    return;
  }
  core_buf_puts(b, "; **changed**: at the registered sample ");
  if (!g) {
    core_buf_puts(b, "no comparison");
    return;
  }
  core_buf_printf(b, "(n=%zu) ", g->n);
  esc(b, g->verdict);
  core_buf_puts(b, prov(a->original));
}

static const analysis_hypothesis *orig_hyp(const analysis_summary *o,
                                           const char *id) {
  for (size_t i = 0; o && i < o->n_hypotheses; i++)
    if (strcmp(o->hypotheses[i].id, id) == 0)
      return &o->hypotheses[i];
  return NULL;
}

static void join_list(core_buf *b, char **v, size_t n) {
  if (n == 0)
    core_buf_puts(b, "–");
  for (size_t i = 0; i < n; i++) {
    core_buf_puts(b, i ? "; " : "");
    esc(b, v[i]);
  }
}

/* The headline */

/* The status line, the very first line of the page, with what each flag
 * means: how the data stand to the plan (data/count.c). */
static void status_line(core_buf *b, const report_input *in) {
  data_status both = report_status(in);
  const data_status *st = &both;
  char line[256];
  core_buf flags; /* each flag in words: the status notices */
  data_status_line(st, line, sizeof line);
  core_buf_printf(b, "> **Status: %s.**", line);
  if (st->stopped) {
    core_buf_puts(b, " Stopped early at a preregistered look, every "
                     "comparison decided there: ");
    esc(b, st->stops);
    core_buf_puts(b, ".");
  }
  core_buf_init(&flags);
  if (!report_notices_markdown(&flags, in, REPORT_NOTICE_STATUS)) {
    core_buf_printf(b,
                    " Every run the plan calls for was collected (%ld), "
                    "and the data are analysed as registered.\n\n",
                    st->collected);
    b->oom |= flags.oom;
    core_buf_free(&flags);
    return;
  }
  if (data_status_provisional(st))
    core_buf_puts(b, st->incomplete || st->quick
                         ? " The verdicts and hypothesis outcomes below are "
                           "**provisional**: the data do not complete the "
                           "plan."
                         : " The verdicts and hypothesis outcomes below are "
                           "**provisional**: not every run used the "
                           "registered inputs.");
  core_buf_puts(b, "\n>\n");
  if (flags.oom)
    b->oom = 1; /* the caller checks b->oom: one check for all */
  else
    core_buf_append(b, flags.data, flags.len);
  core_buf_free(&flags);
  core_buf_puts(b, "\n");
}

static void hypothesis_sentences(core_buf *b, const report_input *in) {
  const analysis_summary *a = in->summary;
  if (a->n_hypotheses == 0) {
    core_buf_puts(b, "The sheet states no hypothesis.\n\n");
    return;
  }
  for (size_t i = 0; i < a->n_hypotheses; i++) {
    const analysis_hypothesis *h = &a->hypotheses[i];
    const analysis_hypothesis *g = orig_hyp(a->original, h->id);
    core_buf_puts(b, "- ");
    esc(b, h->id);
    core_buf_printf(b, " **%s**%s", proto_outcome_word(h->outcome), prov(a));
    if (a->original && !g)
      core_buf_puts(b, "; not in the registered plan");
    else if (a->original && g->outcome != h->outcome)
      core_buf_printf(b, "; **changed**: at the registered sample %s%s",
                      proto_outcome_word(g->outcome), prov(a->original));
    core_buf_puts(b, ": ");
    esc(b, h->says);
    if (h->reason && *h->reason) {
      core_buf_puts(b, " (");
      esc(b, h->reason);
      core_buf_puts(b, ")");
    }
    core_buf_puts(b, ".\n");
  }
  core_buf_puts(b, "\n");
}

/* One cell of the matrix: median and IQR, and beside the reference the
 * ratio, its CI and the verdict. */
static void matrix_cell(core_buf *b, const report_input *in,
                        const analysis_cell *c, const char *unit, double f) {
  const analysis_result *r =
      report_find_result(in->summary, c->workload, c->metric, c->arm);
  if (!c->n_valid) {
    core_buf_puts(b, "no data");
    return;
  }
  sig(b, c->median * f);
  core_buf_printf(b, "%s%s (IQR ", *unit ? " " : "", unit);
  sig2(b, (c->q3 - c->q1) * f);
  core_buf_puts(b, ")");
  if (r) {
    core_buf_puts(b, " · ");
    ratio_ci(b, r);
    core_buf_puts(b, " ");
    verdict(b, in->summary, r);
  }
}

/* n of each arm: one number when all agree. */
static void matrix_n(core_buf *b, const report_input *in, const char *w,
                     const char *m) {
  const proto_sheet *s = in->sheet;
  int same = 1;
  size_t first = 0;
  for (size_t i = 0; i < s->n_arms; i++) {
    const analysis_cell *c =
        report_find_cell(in->summary, w, m, s->arms[i].name);
    size_t n = c ? c->n_valid : 0;
    if (i == 0)
      first = n;
    same &= n == first;
  }
  for (size_t i = 0; i < s->n_arms; i++) {
    const analysis_cell *c =
        report_find_cell(in->summary, w, m, s->arms[i].name);
    if (i && same)
      break;
    core_buf_printf(b, "%s%zu", i ? "/" : "", c ? c->n_valid : 0);
  }
}

static void matrix(core_buf *b, const report_input *in) {
  const proto_sheet *s = in->sheet;
  core_buf_puts(b, "| Workload · metric | n |");
  for (size_t i = 0; i < s->n_arms; i++) {
    core_buf_puts(b, " ");
    esc(b, s->arms[i].name);
    core_buf_puts(b, i == s->reference ? " (reference) |" : " |");
  }
  core_buf_puts(b, "\n|---|--:|");
  for (size_t i = 0; i < s->n_arms; i++)
    core_buf_puts(b, "---|");
  core_buf_puts(b, "\n");
  for (size_t w = 0; w < s->n_workloads; w++)
    for (size_t m = 0; m < s->workloads[w].n_metrics; m++) {
      const char *wn = s->workloads[w].name, *mn = s->workloads[w].metrics[m];
      double f;
      const char *unit = report_row_unit(in, wn, mn, &f);
      core_buf_puts(b, "| ");
      esc(b, wn);
      core_buf_puts(b, " · ");
      esc(b, mn);
      core_buf_puts(b, " | ");
      matrix_n(b, in, wn, mn);
      for (size_t i = 0; i < s->n_arms; i++) {
        const analysis_cell *c =
            report_find_cell(in->summary, wn, mn, s->arms[i].name);
        core_buf_puts(b, " | ");
        if (c)
          matrix_cell(b, in, c, unit, f);
        else
          core_buf_puts(b, "no data");
      }
      core_buf_puts(b, " |\n");
    }
  core_buf_printf(b, "\nMedians of the valid runs with their interquartile "
                     "range; ratios to ");
  esc(b, s->arms[s->reference].name);
  core_buf_printf(b,
                  " with %.6g%% percentile bootstrap intervals; verdicts "
                  "under the decision rule below.\n\n",
                  in->summary->confidence * 100);
}

/* Each comparison's absolute difference (arm minus the arm it is
 * compared with, in the metric's unit) with its interval, from the same
 * resamples as the ratio's. */
static void differences_table(core_buf *b, const report_input *in) {
  const analysis_summary *a = in->summary;
  size_t n = 0;
  for (size_t i = 0; i < a->n_results + a->n_pairs; i++) {
    const analysis_result *r =
        i < a->n_results ? &a->results[i] : &a->pairs[i - a->n_results];
    char words[200];
    if (r->host)
      continue;
    if (!n++)
      core_buf_puts(b, "Differences, each arm's median minus that of the arm "
                       "it is compared with, in the metric's unit, with the "
                       "same percentile bootstrap (the differences of the "
                       "resampled medians):\n\n| Workload · metric | Arm | "
                       "Against | Difference [CI] |\n|---|---|---|---|\n");
    analysis_difference_words(r, proto_metric_unit_of(in->sheet, r->metric),
                              words, sizeof words);
    core_buf_puts(b, "| ");
    esc(b, r->workload);
    core_buf_puts(b, " · ");
    esc(b, r->metric);
    core_buf_puts(b, " | ");
    esc(b, r->arm);
    core_buf_puts(b, " | ");
    esc(b, r->reference);
    core_buf_puts(b, " | ");
    esc(b, words);
    core_buf_puts(b, " |\n");
  }
  if (n)
    core_buf_puts(b, "\n");
}

/* After the matrix: whether the registered sample and rule agree. */
static void registered_summary(core_buf *b, const analysis_summary *a) {
  size_t changed = 0, beyond = 0, added = 0;
  if (!a->original)
    return;
  for (size_t i = 0; i < a->n_results; i++) {
    const analysis_result *r = &a->results[i];
    const analysis_result *g =
        report_find_result(a->original, r->workload, r->metric, r->arm);
    if (!analysis_registered_has(a, r->workload, r->metric, r->arm))
      beyond++;
    else
      changed += !g || !analysis_same_decision(g, r);
  }
  if (beyond)
    core_buf_printf(b,
                    "%zu comparison%s %s not in the registered plan: version "
                    "0's sheet does not have %s arm, workload or metric (a "
                    "later amendment added %s; see Deviations), so %s no "
                    "registered verdict.\n\n",
                    beyond, beyond == 1 ? "" : "s", beyond == 1 ? "is" : "are",
                    beyond == 1 ? "its" : "their", beyond == 1 ? "it" : "them",
                    beyond == 1 ? "it has" : "they have");
  for (size_t i = 0; i < a->n_hypotheses; i++) {
    const analysis_hypothesis *g = orig_hyp(a->original, a->hypotheses[i].id);
    changed += g && g->outcome != a->hypotheses[i].outcome;
    added += !g;
  }
  if (added)
    core_buf_printf(b,
                    "%zu hypothes%s %s not in the registered plan: version "
                    "0's sheet does not state %s (a later amendment added "
                    "%s; see Deviations), so %s no registered outcome.\n\n",
                    added, added == 1 ? "is" : "es", added == 1 ? "is" : "are",
                    added == 1 ? "it" : "them", added == 1 ? "it" : "them",
                    added == 1 ? "it has" : "they have");
  if (changed)
    core_buf_printf(b,
                    "%zu verdict%s or outcome%s differ%s at the registered "
                    "sample and rule (version 0's runs, rule and "
                    "hypotheses; see Deviations).\n\n",
                    changed, changed == 1 ? "" : "s", changed == 1 ? "" : "s",
                    changed == 1 ? "s" : "");
  else
    core_buf_puts(b, "At the registered sample and rule (version 0's runs, "
                     "rule and hypotheses; see Deviations) every verdict and "
                     "outcome is the same.\n\n");
}

/* The rule's pairs (pairs = "all"), each later arm against each earlier
 * one, with the pair's verdict; one the registered rule did not make
 * says so. */
static void pairs_table(core_buf *b, const analysis_summary *a) {
  if (!a->n_pairs)
    return;
  core_buf_printf(b,
                  "Pairs, each later arm against each earlier one under "
                  "the same rule (`pairs = \"all\"`%s):\n\n",
                  a->pairs_exploratory ? "; exploratory, not registered" : "");
  core_buf_puts(b, "| Workload · metric | Arm | Against | Ratio [CI] | "
                   "Verdict |\n|---|---|---|---|---|\n");
  for (size_t i = 0; i < a->n_pairs; i++) {
    const analysis_result *r = &a->pairs[i];
    const analysis_result *g = analysis_registered_pair(a, r);
    core_buf_puts(b, "| ");
    esc(b, r->workload);
    core_buf_puts(b, " · ");
    esc(b, r->metric);
    core_buf_puts(b, " | ");
    esc(b, r->arm);
    core_buf_puts(b, " | ");
    esc(b, r->reference);
    core_buf_puts(b, " | ");
    ratio_ci(b, r);
    core_buf_printf(b, " | **");
    esc(b, r->verdict);
    core_buf_printf(b, "**%s", prov(a));
    if (a->original && !g)
      core_buf_puts(b, "; not in the registered plan");
    else if (g && !analysis_same_decision(g, r)) {
      core_buf_printf(b, "; **changed**: at the registered sample (n=%zu) ",
                      g->n);
      esc(b, g->verdict);
    }
    core_buf_puts(b, " |\n");
  }
  core_buf_puts(b, "\n");
}

static void headline(core_buf *b, const report_input *in,
                     const report_doc *doc) {
  core_buf_puts(b, "## Summary\n\n");
  if (in->sheet->replicates && in->summary->n_replication)
    core_buf_printf(b,
                    "%zu of %zu comparisons replicated, %zu did not, %zu "
                    "inconclusive (see Published and measured).\n\n",
                    in->summary->n_replicated, in->summary->n_replication,
                    in->summary->n_not_replicated,
                    in->summary->n_rep_inconclusive);
  hypothesis_sentences(b, in);
  if (in->summary->n_results == 0)
    core_buf_puts(b, "No comparison yet: no arm has valid data beside the "
                     "reference.\n\n");
  matrix(b, in);
  pairs_table(b, in->summary);
  differences_table(b, in);
  registered_summary(b, in->summary);
  if (doc->n_plots && !doc->plots[0].workload) {
    core_buf_puts(b, "![Every ratio to ");
    esc(b, in->sheet->arms[in->sheet->reference].name);
    core_buf_printf(b,
                    " with its interval, on a log axis, with the rule's "
                    "thresholds](%s)\n\n",
                    doc->plots[0].file);
  }
}

/* Published and measured */

/* The host the data were measured on, from the last batch's facts. */
static void measured_where(core_buf *b, const report_input *in) {
  const data_report_inputs *x = in->extra;
  const data_batch_info *last =
      x && x->n_batches ? &x->batches[x->n_batches - 1] : NULL;
  if (!last)
    return;
  const char *cpu = data_fact_get(last, "host.cpu_model");
  const char *cores = data_fact_get(last, "host.cores");
  const char *mem = data_fact_get(last, "host.mem_total_mib");
  const char *kernel = data_fact_get(last, "host.kernel");
  if (!cpu && !kernel) {
    core_buf_puts(b, "The batches do not record the host they were measured "
                     "on (imported data).\n\n");
    return;
  }
  core_buf_puts(b, "Measured here on: ");
  esc(b, cpu ? cpu : "an unrecorded CPU");
  core_buf_puts(b, ", ");
  esc(b, cores ? cores : "?");
  core_buf_puts(b, " cores, ");
  esc(b, mem ? mem : "?");
  core_buf_puts(b, " MiB of memory, ");
  esc(b, kernel ? kernel : "an unrecorded kernel");
  core_buf_puts(b, " (batch ");
  esc(b, last->id);
  core_buf_puts(b, "; the tool versions are under Setup).\n\n");
}

/* The first cells of a published comparison's row: workload, metric and
 * arm, each its own column. */
static void published_cells(core_buf *b, const proto_published *p) {
  core_buf_puts(b, "| ");
  esc(b, p->workload);
  core_buf_puts(b, " | ");
  esc(b, p->metric);
  core_buf_puts(b, " | ");
  esc(b, p->arm);
  core_buf_puts(b, " | ");
}

/* One published ratio and the one measured here, with what differs. */
static void published_row(core_buf *b, const analysis_summary *a,
                          const proto_published *p) {
  const analysis_result *r =
      report_find_result(a, p->workload, p->metric, p->arm);
  published_cells(b, p);
  sig(b, p->ratio);
  core_buf_puts(b, "×");
  if (p->verdict) {
    core_buf_puts(b, " (");
    esc(b, p->verdict);
    core_buf_puts(b, ")");
  }
  if (r && !isnan(r->ratio)) {
    core_buf_puts(b, " | ");
    sig(b, r->ratio);
    core_buf_puts(b, "× | ");
    sig(b, r->ci_low);
    core_buf_puts(b, "–");
    sig(b, r->ci_high);
    core_buf_puts(b, " | **");
    esc(b, r->verdict);
    core_buf_puts(b, "** | ");
  } else
    core_buf_puts(b, " | – | – | no data | ");
  esc(b, p->source);
  core_buf_puts(b, " | ");
  esc(b, p->note ? p->note : "");
  core_buf_puts(b, " |\n");
}

/* "1.96× [1.90–2.01]", "1.96×" without an interval, "–" without a ratio. */
static void ratio_interval(core_buf *b, double ratio, double lo, double hi) {
  if (!isfinite(ratio)) {
    core_buf_puts(b, "–");
    return;
  }
  sig(b, ratio);
  core_buf_puts(b, "×");
  if (isfinite(lo) && isfinite(hi)) {
    core_buf_puts(b, " [");
    sig(b, lo);
    core_buf_puts(b, "–");
    sig(b, hi);
    core_buf_puts(b, "]");
  }
}

/* One comparison of a replication: the original's, the replication's,
 * their ratio with its interval and the outcome. */
static void replication_row(core_buf *b, const analysis_replication *e) {
  const proto_published *p = e->published;
  const analysis_result *r = e->result;
  published_cells(b, p);
  ratio_interval(b, p->ratio, p->ci_low, p->ci_high);
  core_buf_puts(b, " ");
  esc(b, p->verdict ? p->verdict : "");
  core_buf_puts(b, " | ");
  if (r && isfinite(r->ratio)) {
    ratio_interval(b, r->ratio, r->ci_low, r->ci_high);
    core_buf_puts(b, " ");
    esc(b, r->verdict);
  } else
    core_buf_puts(b, "–");
  core_buf_puts(b, " | ");
  ratio_interval(b, e->ratio_of_ratios, e->ci_low, e->ci_high);
  core_buf_puts(b, " | **");
  esc(b, e->outcome);
  core_buf_puts(b, "**");
  if (e->why) {
    core_buf_puts(b, ": ");
    esc(b, e->why);
  }
  core_buf_puts(b, " |\n");
}

/* A replication's sheet: every published comparison of the original,
 * whether it replicated here, and why not when it is not here. */
static void replication_table(core_buf *b, const report_input *in,
                              const char *conf) {
  const analysis_summary *a = in->summary;
  const proto_replicates *rp = in->sheet->replicates;
  core_buf_puts(b, "## Published and measured\n\n");
  core_buf_puts(b, "This experiment replicates ");
  esc(b, rp->experiment);
  core_buf_printf(b, " (its sheet version %ld, bundle sha256 ", rp->version);
  code_span(b, rp->bundle_sha256);
  core_buf_puts(b, ", published ");
  esc(b, rp->published_at);
  core_buf_puts(b, "; source: ");
  esc(b, a->replication[0].published->source);
  core_buf_printf(
      b,
      "). Each ratio is the arm's median against %s's with its %s CI, in "
      "the original and here, each under its own sheet's rule; the ratio of "
      "ratios is this one over the original's, its interval a bootstrap "
      "from both experiments' raw data (each one's runs resampled within "
      "its arms). The outcome: replicated when both decided alike, not "
      "replicated when both decided differently or the comparison is not "
      "here, inconclusive when either did not decide.\n\n",
      in->sheet->arms[in->sheet->reference].name, conf);
  core_buf_puts(b, "| Workload | Metric | Arm | Original | Here | Ratio of "
                   "ratios | Outcome |\n|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < a->n_replication; i++)
    replication_row(b, &a->replication[i]);
  core_buf_puts(b, "\n");
  for (size_t i = 0; a->hyp_outcome && i < a->n_hypotheses; i++) {
    core_buf_puts(b, "- ");
    esc(b, a->hypotheses[i].id);
    core_buf_printf(b, ": %s here, %s in the original: **%s**\n",
                    proto_outcome_word(a->hypotheses[i].outcome),
                    a->hyp_original[i] ? a->hyp_original[i] : "not stated",
                    a->hyp_outcome[i]);
  }
  if (a->hyp_outcome && a->n_hypotheses)
    core_buf_puts(b, "\n");
  measured_where(b, in);
}

/* The ratios a publication reports (the sheet's `published`) beside the
 * ones measured here. */
static void published(core_buf *b, const report_input *in) {
  const proto_sheet *s = in->sheet;
  const analysis_summary *a = in->summary;
  if (s->n_published == 0)
    return;
  char conf[32];
  snprintf(conf, sizeof conf, "%.6g%%", a->confidence * 100);
  if (s->replicates && a->n_replication) {
    replication_table(b, in, conf);
    return;
  }
  core_buf_puts(b, "## Published and measured\n\n");
  core_buf_printf(b,
                  "Each ratio is the arm's median against %s's, on the same "
                  "workload and metric: as published, and as measured "
                  "here under this sheet's rule.\n\n",
                  s->arms[s->reference].name);
  core_buf_printf(b,
                  "| Workload | Metric | Arm | Published | Measured | %s CI "
                  "| Verdict here | Source | What differs |\n"
                  "|---|---|---|--:|--:|---|---|---|---|\n",
                  conf);
  for (size_t i = 0; i < s->n_published; i++)
    published_row(b, a, &s->published[i]);
  core_buf_puts(b, "\n");
  measured_where(b, in);
}

/* The data */

static void spread_row(core_buf *b, const report_input *in,
                       const analysis_cell *c, const char *unit, double f) {
  core_buf_puts(b, "| ");
  esc(b, c->workload);
  core_buf_puts(b, " · ");
  esc(b, c->metric);
  core_buf_puts(b, " | ");
  esc(b, c->arm);
  core_buf_printf(b, " | %zu", c->n_valid);
  if (c->n_planned)
    core_buf_printf(b, " of %zu", c->n_planned);
  core_buf_puts(b, " | ");
  if (c->n_valid) {
    sig(b, c->median * f);
    core_buf_printf(b, "%s%s | ", *unit ? " " : "", unit);
    sig2(b, (c->q3 - c->q1) * f);
    core_buf_puts(b, " | ");
    sig2(b, c->mad * f);
    core_buf_puts(b, " | ");
    sig(b, c->min * f);
    core_buf_puts(b, "–");
    sig(b, c->max * f);
    core_buf_printf(b, " | %zu | ", c->n_outliers);
  } else
    core_buf_puts(b, "– | – | – | – | – | ");
  if (c->n_invalid)
    core_buf_printf(b, "%zu invalid", c->n_invalid);
  if (c->n_superseded)
    core_buf_printf(b, "%s%zu superseded", c->n_invalid ? ", " : "",
                    c->n_superseded);
  if (c->n_beyond)
    core_buf_printf(b, "%s%zu beyond the plan",
                    c->n_invalid || c->n_superseded ? ", " : "", c->n_beyond);
  if (!c->n_invalid && !c->n_superseded && !c->n_beyond)
    core_buf_puts(b, "–");
  core_buf_puts(b, " |\n");
  (void)in;
}

/* The import formats the values of workload w came from (bit f for
 * data_import_formats()[f]), and whether any came from prereg's own runs
 * (*own): from the batches' facts. */
static unsigned import_formats(const report_input *in, const char *w,
                               int *own) {
  const analysis_summary *a = in->summary;
  size_t nf;
  const data_import_format *fm = data_import_formats(&nf);
  unsigned seen = 0;
  *own = 0;
  for (size_t i = 0; in->extra && i < a->n_cells; i++) {
    const analysis_cell *c = &a->cells[i];
    if (strcmp(c->workload, w) != 0 || !c->batch)
      continue;
    for (size_t k = 0; k < c->n_valid; k++) {
      const char *id =
          c->batch[k] < a->n_batches ? a->batches[c->batch[k]] : NULL;
      const char *kind = NULL, *fmt = NULL;
      for (size_t j = 0; id && j < in->extra->n_batches; j++)
        if (strcmp(in->extra->batches[j].id, id) == 0) {
          kind = data_fact_get(&in->extra->batches[j], "kind");
          fmt = data_fact_get(&in->extra->batches[j], "format");
        }
      if (!kind || strcmp(kind, "import") != 0) {
        *own = 1;
        continue;
      }
      for (size_t f = 0; f < nf; f++)
        if (fmt && strcmp(fmt, fm[f].name) == 0)
          seen |= 1u << f;
    }
  }
  return seen;
}

/* How imported values were collected, in words: the tools, and that they
 * ran each arm's runs in one block where they do, or that a file does
 * not say in what order. */
static void imported_how(core_buf *b, unsigned formats) {
  size_t nf, k = 0;
  const data_import_format *fm = data_import_formats(&nf);
  const char *unordered = NULL;
  int blocks = 0;
  core_buf_puts(b, "imported from ");
  for (size_t f = 0; f < nf; f++)
    if (formats & (1u << f)) {
      core_buf_printf(b, "%s%s", k++ ? " and " : "", fm[f].tool);
      if (fm[f].unordered)
        unordered = fm[f].unordered;
      else
        blocks = 1;
    }
  if (blocks)
    core_buf_puts(b, unordered ? " (the tools ran each arm's runs in one "
                                 "block, not interleaved)"
                               : ", which ran each arm's runs in one "
                                 "block, not interleaved");
  if (unordered && blocks)
    core_buf_printf(b,
                    "; %s does not say in what order its runs were "
                    "collected",
                    unordered);
  else if (unordered)
    core_buf_puts(b, ", which does not say in what order its runs were "
                     "collected");
}

/* "### startup: `true`, 30 runs per arm, interleaved, cache warm"; for
 * data imported from a tool, how that tool collected them. */
static void workload_heading(core_buf *b, const report_input *in,
                             const proto_workload *w) {
  int own = 0;
  unsigned formats = import_formats(in, w->name, &own);
  core_buf_puts(b, "### ");
  esc(b, w->name);
  core_buf_puts(b, ": ");
  if (w->cmd) {
    code_span(b, w->cmd);
    core_buf_puts(b, ", ");
  } else if (w->n_steps) {
    core_buf_printf(b, "%zu commands in order (listed in provenance.md), ",
                    w->n_steps);
  } else if (w->by_arms) {
    core_buf_puts(b, "each arm's command, ");
  } else {
    core_buf_puts(b, "imported data, ");
  }
  if (w->runs > 0 && formats && !own) {
    core_buf_printf(b, "%ld runs per arm, ", w->runs);
    imported_how(b, formats);
    core_buf_puts(b, "\n\n");
  } else if (w->runs > 0) {
    core_buf_printf(b, "%ld runs per arm, %s, cache %s", w->runs,
                    w->order == PROTO_ORDER_BLOCKED ? "blocked"
                                                    : "interleaved",
                    w->cache == PROTO_CACHE_COLD ? "cold" : "warm");
    if (formats) {
      core_buf_puts(b, "; some ");
      imported_how(b, formats);
    }
    core_buf_puts(b, "\n\n");
  } else if (formats) {
    core_buf_puts(b, "as many runs as imported, ");
    imported_how(b, formats);
    core_buf_puts(b, "\n\n");
  } else {
    core_buf_puts(b, "as many runs as imported\n\n");
  }
}

static void the_data(core_buf *b, const report_input *in,
                     const report_doc *doc) {
  const proto_sheet *s = in->sheet;
  const analysis_summary *a = in->summary;
  size_t plot = 1;
  core_buf_puts(b, "## The data\n\nFor each workload and metric: every "
                   "valid run per arm in real units (a box from the "
                   "quartiles, the median across it, whiskers to the "
                   "extremes), and the runs in the order they were "
                   "collected, batch boundaries dashed.\n\n");
  for (size_t w = 0; w < s->n_workloads; w++) {
    workload_heading(b, in, &s->workloads[w]);
    for (size_t m = 0; m < s->workloads[w].n_metrics; m++)
      if (plot < doc->n_plots &&
          strcmp(doc->plots[plot].workload, s->workloads[w].name) == 0 &&
          strcmp(doc->plots[plot].metric, s->workloads[w].metrics[m]) == 0) {
        core_buf_puts(b, "![");
        esc(b, s->workloads[w].name);
        core_buf_puts(b, " · ");
        esc(b, s->workloads[w].metrics[m]);
        core_buf_printf(b,
                        ": every valid run per arm, and in collection "
                        "order](%s)\n\n",
                        doc->plots[plot].file);
        plot++;
      }
  }
  core_buf_puts(b, "### Spread\n\n| Workload · metric | Arm | Valid | Median "
                   "| IQR | MAD | Min–max | Outliers | Not counted |\n"
                   "|---|---|--:|--:|--:|--:|--:|--:|---|\n");
  for (size_t i = 0; i < a->n_cells; i++) {
    double f;
    const char *unit =
        report_row_unit(in, a->cells[i].workload, a->cells[i].metric, &f);
    spread_row(b, in, &a->cells[i], unit, f);
  }
  core_buf_puts(b, "\nIQR, MAD (median absolute deviation, not scaled) and "
                   "extremes in the median's unit; outliers lie beyond 1.5 "
                   "IQR outside the quartiles (Tukey's fences), counted and "
                   "never removed.\n\n");
}

/* Arms, workloads, rule */

static void arms_and_workloads(core_buf *b, const proto_sheet *s) {
  core_buf_puts(b, "## Arms and workloads\n\n| Arm | Role | Runs as | "
                   "Requires | Image |\n|---|---|---|---|---|\n");
  for (size_t i = 0; i < s->n_arms; i++) {
    const proto_arm *a = &s->arms[i];
    const proto_image *im =
        a->image.tree || a->image.digest_cmd ? &a->image : &s->image;
    core_buf_puts(b, "| ");
    esc(b, a->name);
    core_buf_puts(b, a->reference ? " | reference | " : " | compared | ");
    esc(b, a->run ? a->run : "{cmd}");
    core_buf_puts(b, " | ");
    join_list(b, a->requires, a->n_requires);
    core_buf_puts(b, " | ");
    if (im->tree) {
      core_buf_puts(b, "tree ");
      esc(b, im->tree);
    } else if (im->digest_cmd) {
      core_buf_puts(b, "digest from ");
      esc(b, im->digest_cmd);
    } else
      core_buf_puts(b, "–");
    core_buf_puts(b, " |\n");
  }
  core_buf_puts(b, "\n| Workload | Runs | Warm-up | Command | Metrics | "
                   "Order | Cache |\n|---|--:|--:|---|---|---|---|\n");
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *w = &s->workloads[i];
    core_buf_puts(b, "| ");
    esc(b, w->name);
    if (w->runs > 0)
      core_buf_printf(b, " | %ld | %ld | ", w->runs, w->warmup);
    else
      core_buf_puts(b, " | import only | – | ");
    if (w->cmd)
      esc(b, w->cmd);
    else if (w->n_steps)
      core_buf_printf(b, "%zu steps (listed in provenance.md)", w->n_steps);
    else if (w->by_arms)
      core_buf_puts(b, "each arm's command");
    else
      core_buf_puts(b, "(imported)");
    core_buf_puts(b, " | ");
    join_list(b, w->metrics, w->n_metrics);
    core_buf_puts(b, w->order == PROTO_ORDER_BLOCKED ? " | blocked"
                                                     : " | interleaved");
    core_buf_puts(b, w->cache == PROTO_CACHE_COLD ? " | cold |\n"
                                                  : " | warm |\n");
  }
  core_buf_puts(b, "\n");
}

/* What verdict v reads on the kinds of metric the sheet measures, where
 * that is not its name: " (more memory on memory)". */
static void kind_words(core_buf *b, const proto_sheet *s,
                       const proto_verdict_rule *v) {
  int shown = 0, seen[PROTO_N_KINDS] = {0};
  for (size_t w = 0; w < s->n_workloads; w++)
    for (size_t m = 0; m < s->workloads[w].n_metrics; m++) {
      proto_metric_kind k =
          proto_metric_kind_of(s, s->workloads[w].metrics[m]);
      const char *word = proto_verdict_word_on(s, v, k);
      if (seen[k]++ || strcmp(word, v->name) == 0)
        continue;
      core_buf_puts(b, shown++ ? ", " : " (reads ");
      esc(b, word);
      core_buf_printf(b, " on %s", proto_kind_word(k));
    }
  core_buf_puts(b, shown ? ")" : "");
}

static void rule(core_buf *b, const proto_sheet *s) {
  core_buf words;
  core_buf_init(&words);
  proto_rule_words(s, &words);
  core_buf_puts(b, "## Decision rule\n\n");
  /* words ran out of memory: b fails with it, rather than the report
   * going out with the rule cut short or shown as a dash. */
  if (words.oom)
    b->oom = 1;
  esc(b, words.data);
  core_buf_free(&words);
  core_buf_puts(b, "\n\n");
  for (size_t i = 0; i < s->rule.n_verdicts; i++) {
    const proto_verdict_rule *v = &s->rule.verdicts[i];
    int k = 0;
    core_buf_printf(b, "%zu. **", i + 1);
    esc(b, v->name);
    core_buf_puts(b, "**");
    kind_words(b, s, v);
    core_buf_puts(b, " when ");
    if (v->ratio.has_ci_excludes)
      core_buf_printf(b, "%sthe CI excludes %.6g", k++ ? "and " : "",
                      v->ratio.ci_excludes);
    if (v->ratio.has_above)
      core_buf_printf(b, "%sthe ratio is above %.6g", k++ ? " and " : "",
                      v->ratio.above);
    if (v->ratio.has_below)
      core_buf_printf(b, "%sthe ratio is below %.6g", k++ ? " and " : "",
                      v->ratio.below);
    if (v->ratio.has_ci_within)
      core_buf_printf(b, "%sthe whole CI lies within %.6g–%.6g",
                      k++ ? " and " : "", v->ratio.ci_within[0],
                      v->ratio.ci_within[1]);
    if (proto_bounds_any(&v->diff))
      proto_bounds_words(&v->diff, 1, k++ ? " and " : "", b);
    if (!k)
      core_buf_puts(b, "always");
    core_buf_puts(b, "\n");
  }
  if (s->rule.n_verdicts)
    core_buf_puts(b, "\nThe first matching verdict wins; none: "
                     "inconclusive.\n\n");
}

/* Deviations and what fell */

static void amendment(core_buf *b, const report_amendment *m) {
  core_buf_printf(b, "**Amendment %d**, dated ", m->number);
  esc(b, m->date);
  core_buf_puts(b, ", recorded ");
  esc(b, m->filed_at);
  if (m->runs_before < 0)
    core_buf_puts(b, " (when, against the data, is not known)");
  else if (m->runs_before == 0)
    core_buf_puts(b, ", before any data");
  else
    core_buf_printf(b, ", after %ld run%s had been collected", m->runs_before,
                    m->runs_before == 1 ? "" : "s");
  core_buf_puts(b, ". Why: ");
  esc(b, m->why);
  core_buf_puts(b, " Affects: ");
  esc(b, m->affected ? m->affected : "none");
  core_buf_puts(b, m->diff && *m->diff ? ". Its diff is in provenance.md.\n\n"
                                       : ".\n\n");
}

/* The registered sample and rule's verdicts: only those that decide
 * otherwise, each with its n. */
static void original_rule(core_buf *b, const analysis_summary *a) {
  size_t differ = 0, hyp = 0;
  const analysis_summary *o = a->original;
  for (size_t i = 0; i < a->n_results; i++) {
    const analysis_result *r = &a->results[i];
    const analysis_result *x =
        report_find_result(o, r->workload, r->metric, r->arm);
    differ += !x || !analysis_same_decision(x, r);
  }
  for (size_t i = 0; i < a->n_hypotheses; i++) {
    const analysis_hypothesis *g = orig_hyp(o, a->hypotheses[i].id);
    hyp += !g || g->outcome != a->hypotheses[i].outcome;
  }
  core_buf_puts(b, "At the registered sample and rule (version 0), given "
                   "because ");
  esc(b, a->original_why);
  core_buf_puts(b, " (version 0's runs in collection order, its rule and "
                   "hypotheses, nothing superseded)");
  if (!differ && !hyp) {
    core_buf_printf(b,
                    ": every one of the %zu comparisons is decided the "
                    "same, and every hypothesis too.\n\n",
                    a->n_results);
    return;
  }
  core_buf_puts(b, ", these decide otherwise:\n\n| Comparison | Amended | "
                   "At the registered sample |\n|---|---|---|\n");
  for (size_t i = 0; i < a->n_results; i++) {
    const analysis_result *r = &a->results[i];
    const analysis_result *x =
        report_find_result(o, r->workload, r->metric, r->arm);
    if (x && analysis_same_decision(x, r))
      continue;
    core_buf_puts(b, "| ");
    esc(b, r->workload);
    core_buf_puts(b, " · ");
    esc(b, r->metric);
    core_buf_puts(b, " · ");
    esc(b, r->arm);
    core_buf_puts(b, " | ");
    esc(b, r->verdict);
    core_buf_printf(b, "%s (n=%zu) | ", prov(a), r->n);
    if (x) {
      esc(b, x->verdict);
      core_buf_printf(b, "%s (n=%zu)", prov(o), x->n);
    } else if (!analysis_registered_has(a, r->workload, r->metric, r->arm)) {
      core_buf_puts(b, "(not in the registered plan)");
    } else {
      core_buf_puts(b, "(not analysed)");
    }
    core_buf_puts(b, " |\n");
  }
  for (size_t i = 0; i < a->n_hypotheses; i++) {
    const analysis_hypothesis *g = orig_hyp(o, a->hypotheses[i].id);
    if (g && g->outcome == a->hypotheses[i].outcome)
      continue;
    core_buf_puts(b, "| hypothesis ");
    esc(b, a->hypotheses[i].id);
    core_buf_printf(b, " | %s%s | ",
                    proto_outcome_word(a->hypotheses[i].outcome), prov(a));
    if (g)
      core_buf_printf(b, "%s%s |\n", proto_outcome_word(g->outcome), prov(o));
    else
      core_buf_puts(b, "(not in the registered plan) |\n");
  }
  core_buf_puts(b, "\n");
}

static void deviations(core_buf *b, const report_input *in) {
  const analysis_summary *a = in->summary;
  core_buf_puts(b, "## Deviations\n\n");
  if (in->n_amendments == 0) {
    core_buf_puts(b, "None. The data were collected and analysed under the "
                     "registered sheet.\n\n");
    return;
  }
  for (size_t i = 0; i < in->n_amendments; i++)
    amendment(b, &in->amendments[i]);
  if (a->original)
    original_rule(b, a);
  else
    core_buf_puts(b, "No amendment filed after data existed changed the runs "
                     "planned, the rule's decisions, the hypotheses or what "
                     "counts, so the registered sample gives the same "
                     "analysis.\n\n");
}

/* Exclusions by workload and reason, the arms and their runs in one
 * cell: "bare 10, bwrap 10". */
static void fell(core_buf *b, const report_input *in) {
  const analysis_summary *a = in->summary;
  size_t total = 0;
  core_buf_puts(b, "## What fell along the way\n\n");
  if (a->n_exclusions == 0) {
    core_buf_puts(b, "Nothing: every run collected counts.\n\n");
    return;
  }
  for (size_t i = 0; i < a->n_exclusions; i++)
    total += a->exclusions[i].runs;
  core_buf_printf(b,
                  "%zu run%s did not count:\n\n| Workload | Reason | Runs "
                  "|\n|---|---|---|\n",
                  total, total == 1 ? "" : "s");
  for (size_t i = 0; i < a->n_exclusions; i++) {
    const analysis_exclusion *e = &a->exclusions[i];
    char ri[128], rj[128];
    const char *why = report_short_reason(e->reason, ri, sizeof ri);
    int seen = 0;
    for (size_t j = 0; j < i && !seen; j++)
      seen =
          strcmp(a->exclusions[j].workload, e->workload) == 0 &&
          strcmp(report_short_reason(a->exclusions[j].reason, rj, sizeof rj),
                 why) == 0;
    if (seen)
      continue;
    core_buf_puts(b, "| ");
    esc(b, e->workload);
    core_buf_puts(b, " | ");
    esc(b, why);
    core_buf_puts(b, " | ");
    for (size_t j = i, k = 0; j < a->n_exclusions; j++) {
      const analysis_exclusion *x = &a->exclusions[j];
      if (strcmp(x->workload, e->workload) != 0 ||
          strcmp(report_short_reason(x->reason, rj, sizeof rj), why) != 0)
        continue;
      core_buf_puts(b, k++ ? ", " : "");
      esc(b, x->arm);
      core_buf_printf(b, " %zu", x->runs);
    }
    core_buf_puts(b, " |\n");
  }
  core_buf_puts(b, "\n");
}

/* Threats prereg detects */

/* The first number in a fact value ("0.52", "[0.52, 0.4, 0.3]"). */
static int fact_number(const char *v, double *x) {
  char *end;
  while (v && *v && !(*v >= '0' && *v <= '9'))
    v++;
  if (!v || !*v)
    return 0;
  *x = strtod(v, &end);
  return end != v;
}

static const char *last_part(const char *key) {
  const char *d = strrchr(key, '.');
  return d ? d + 1 : key;
}

/* Load average and core count from a batch's facts, whatever the exact
 * key names ("host.loadavg[0]", "load1", "host.cores", "nproc"). */
static void load_and_cores(const data_batch_info *b, double *load,
                           double *cores) {
  *load = -1;
  *cores = -1;
  for (size_t i = 0; i < b->n_facts; i++) {
    const char *k = last_part(b->facts[i].key);
    double x;
    if (!fact_number(b->facts[i].value, &x))
      continue;
    /* Several load keys (start, end; 1, 5, 15 minutes): the highest
     * counts. */
    if (strstr(k, "load"))
      *load = x > *load ? x : *load;
    else if ((strstr(k, "cores") || strstr(k, "nproc") ||
              strcmp(k, "cpus") == 0 || strstr(k, "ncpu")) &&
             *cores < 0)
      *cores = x;
  }
}

/* Whether batch id holds a value the analysis counted: a batch whose
 * runs an amendment superseded (or that were all invalid) is not the
 * data, so what it ran under is no threat to them. A summary without
 * the values' batches (one built by hand) cannot tell: it counts. */
static int batch_counted(const analysis_summary *s, const char *id) {
  size_t k = 0, with_values = 0;
  while (k < s->n_batches && strcmp(s->batches[k], id) != 0)
    k++;
  for (size_t i = 0; i < s->n_cells; i++) {
    const analysis_cell *c = &s->cells[i];
    if (!c->batch)
      continue;
    with_values++;
    for (size_t j = 0; j < c->n_valid; j++)
      if (c->batch[j] == k)
        return 1;
  }
  return with_values == 0;
}

static int span_before(const report_when *x, const report_when *y) {
  int c = strcmp(x->at, y->at);
  if (c != 0)
    return c < 0;
  return x->batch < y->batch || (x->batch == y->batch && x->seq < y->seq);
}

/* An arm whose runs of an interleaved workload all came before or after
 * the reference's (an arm added later, a workload rerun for one arm
 * with --only, data imported apart): the sheet says interleaved, the data
 * says otherwise, and a drift of the machine falls on that arm alone. */
static void not_interleaved(const report_input *in, const report_row_facts *f,
                            core_buf *b, size_t *count) {
  const proto_sheet *s = in->sheet;
  const char *ref = s->arms[s->reference].name;
  for (size_t w = 0; w < s->n_workloads && f->spans; w++) {
    const report_span *r = &f->spans[w * f->n_arms + s->reference];
    if (s->workloads[w].order == PROTO_ORDER_BLOCKED)
      continue; /* declared, and said above */
    for (size_t a = 0; a < s->n_arms && r->runs >= 2; a++) {
      const report_span *x = &f->spans[w * f->n_arms + a];
      int after = x->runs >= 2 && span_before(&r->last, &x->first);
      int before = x->runs >= 2 && span_before(&x->last, &r->first);
      if (a == s->reference || (!after && !before))
        continue;
      core_buf_puts(b, "- Not interleaved: all runs of arm ");
      esc(b, s->arms[a].name);
      core_buf_puts(b, " on workload ");
      esc(b, s->workloads[w].name);
      core_buf_printf(b, " were collected %s those of the reference arm ",
                      after ? "after" : "before");
      esc(b, ref);
      core_buf_puts(b, ", so a drift in the machine over time falls on "
                       "one arm.\n");
      (*count)++;
    }
  }
}

/* "startup · wall_s runc" */
static void cell_name(core_buf *b, const analysis_cell *c) {
  esc(b, c->workload);
  core_buf_puts(b, " · ");
  esc(b, c->metric);
  core_buf_puts(b, " ");
  esc(b, c->arm);
}

/* Drift: each flagged arm once, with the test that flagged it. */
static void drift(const report_input *in, core_buf *b, size_t *count) {
  const analysis_summary *a = in->summary;
  size_t k = 0;
  for (size_t i = 0; i < a->n_cells; i++) {
    const analysis_cell *c = &a->cells[i];
    const analysis_drift *d = &c->drift;
    char p[32];
    if (!d->flagged)
      continue;
    if (k++ == 0)
      core_buf_printf(b,
                      "- Drift, by a two-sided Mann-Whitney rank test of "
                      "each arm's later runs against its earlier ones "
                      "(between consecutive batches when its runs span "
                      "batches, else the second half of its runs in "
                      "collection order against the first), flagged at p "
                      "< %g when the shift lies outside the rule's noise "
                      "band %.6g–%.6g: ",
                      ANALYSIS_DRIFT_P, a->noise_low, a->noise_high);
    else
      core_buf_puts(b, "; ");
    cell_name(b, c);
    core_buf_puts(b, ": ");
    report_sig(p, sizeof p, d->p, 2);
    if (d->by_batch) {
      esc(b, d->later < a->n_batches ? a->batches[d->later] : "?");
      core_buf_puts(b, " ");
      sig(b, d->shift);
      core_buf_puts(b, "× ");
      esc(b, d->earlier < a->n_batches ? a->batches[d->earlier] : "?");
    } else {
      core_buf_printf(b, "the last %zu runs ", d->later);
      sig(b, d->shift);
      core_buf_printf(b, "× the first %zu", d->earlier);
    }
    core_buf_printf(b, " (p = %s)", p);
  }
  if (k) {
    core_buf_puts(b, ".\n");
    (*count)++;
  }
}

/* Outliers and arms with few runs: one line each, every cell named. */
static void outliers_and_few(const report_input *in, core_buf *b,
                             size_t *count) {
  const analysis_summary *a = in->summary;
  size_t k = 0;
  for (size_t i = 0; i < a->n_cells; i++) {
    const analysis_cell *c = &a->cells[i];
    if (!c->n_outliers)
      continue;
    core_buf_puts(b, k++ ? "; "
                         : "- Outliers beyond Tukey's fences (1.5 "
                           "IQR outside the quartiles; counted, not "
                           "removed): ");
    cell_name(b, c);
    core_buf_printf(b, " %zu of %zu", c->n_outliers, c->n_valid);
  }
  if (k) {
    core_buf_puts(b, ".\n");
    (*count)++;
  }
  k = 0;
  for (size_t i = 0; i < a->n_cells; i++) {
    const analysis_cell *c = &a->cells[i];
    long w = proto_workload_index(in->sheet, c->workload);
    /* One mention per workload and arm: its first metric stands for the
     * runs. */
    if ((w >= 0 && in->sheet->workloads[w].n_metrics &&
         strcmp(c->metric, in->sheet->workloads[w].metrics[0]) != 0) ||
        c->n_valid >= 6)
      continue;
    core_buf_puts(b, k++ ? "; "
                         : "- Few valid runs (fewer than 6: the "
                           "bootstrap interval of a median is "
                           "coarse): ");
    esc(b, c->workload);
    core_buf_puts(b, " ");
    esc(b, c->arm);
    core_buf_printf(b, " %zu", c->n_valid);
  }
  if (k) {
    core_buf_puts(b, ".\n");
    (*count)++;
  }
}

/* The machine and the images: order, digests, cache states, hosts, load
 * and quick runs. */
/* An arm that ran on more than one image digest; a workload that saw
 * more than one cache state. */
static void mixed_threats(const report_input *in, const report_row_facts *f,
                          core_buf *b, size_t *count) {
  const proto_sheet *s = in->sheet;
#define THREAT() (core_buf_puts(b, "- "), (*count)++)
  for (size_t i = 0; i < s->n_arms; i++) {
    size_t k = 0;
    for (size_t j = 0; j < f->digests.n; j++)
      k += strcmp(f->digests.v[j].group, s->arms[i].name) == 0;
    if (k > 1) {
      THREAT();
      core_buf_printf(b, "Image changed during collection: arm ");
      esc(b, s->arms[i].name);
      core_buf_printf(b, " ran on %zu different image digests.\n", k);
    }
  }
  for (size_t i = 0; i < s->n_workloads; i++) {
    size_t k = 0;
    for (size_t j = 0; j < f->caches.n; j++)
      k += strcmp(f->caches.v[j].group, s->workloads[i].name) == 0;
    if (k > 1) {
      THREAT();
      core_buf_puts(b, "Mixed cache states: workload ");
      esc(b, s->workloads[i].name);
      core_buf_printf(b, " saw %zu different cache states (see Setup).\n", k);
    }
  }
#undef THREAT
}

/* Every interrupted batch: when, at how many runs, and how it ended. */
static void interrupted_threats(const report_input *in, core_buf *b,
                                size_t *count) {
#define THREAT() (core_buf_puts(b, "- "), (*count)++)
  for (size_t i = 0; in->extra && i < in->extra->n_batches; i++) {
    const data_batch_info *bi = &in->extra->batches[i];
    const char *intr = data_fact_get(bi, "interrupted");
    const char *at = data_fact_get(bi, "interrupted_at");
    const char *end = data_fact_get(bi, "ended_at");
    const char *runs = data_fact_get(bi, "runs_recorded");
    const char *planned = data_fact_get(bi, "runs_planned");
    int recovered = data_fact_get(bi, "recovered") &&
                    strcmp(data_fact_get(bi, "recovered"), "true") == 0;
    if (!intr || strcmp(intr, "true") != 0)
      continue;
    THREAT();
    core_buf_puts(b, "Interrupted batch: ");
    esc(b, bi->id);
    core_buf_puts(b, " was interrupted");
    if (recovered ? at != NULL : end != NULL) {
      core_buf_puts(b, recovered ? " after the run started at " : " at ");
      esc(b, recovered ? at : end);
    }
    core_buf_puts(b, ", at ");
    esc(b, runs ? runs : "0");
    core_buf_puts(b, " runs");
    if (planned) {
      core_buf_puts(b, " of the ");
      esc(b, planned);
      core_buf_puts(b, " it planned");
    }
    core_buf_puts(b, recovered ? " (prereg ended without freezing it: a kill "
                                 "-9, a crash or a power loss; `run "
                                 "--resume` froze what it held and ran the "
                                 "rest in a later batch).\n"
                               : " (a signal ended it; `run --resume` ran "
                                 "the rest in a later batch).\n");
  }
#undef THREAT
}

static void setup_threats(const report_input *in, const report_row_facts *f,
                          core_buf *b, size_t *count) {
  const proto_sheet *s = in->sheet;
#define THREAT() (core_buf_puts(b, "- "), (*count)++)
  for (size_t i = 0; i < s->n_workloads; i++)
    if (s->workloads[i].order == PROTO_ORDER_BLOCKED) {
      THREAT();
      core_buf_puts(b, "Blocked order: workload ");
      esc(b, s->workloads[i].name);
      core_buf_puts(b, " ran each arm's runs together, not interleaved, so "
                       "a drift in the machine over time falls on one arm."
                       "\n");
    }
  not_interleaved(in, f, b, count);
  mixed_threats(in, f, b, count);
  report_host_threats(in, b, count);
  if (f->hosts.n > 1 && !in->summary->across) {
    THREAT();
    core_buf_printf(b, "The host changed between batches: %zu hosts (",
                    f->hosts.n);
    for (size_t i = 0; i < f->hosts.n; i++) {
      core_buf_puts(b, i ? ", " : "");
      esc(b, f->hosts.v[i].value);
    }
    core_buf_puts(b, ").\n");
  }
  for (size_t i = 0; in->extra && i < in->extra->n_batches; i++) {
    double load, cores;
    load_and_cores(&in->extra->batches[i], &load, &cores);
    if (load >= 0 && cores > 0 && load > cores &&
        batch_counted(in->summary, in->extra->batches[i].id)) {
      char l[32];
      core_fmt_sig(l, sizeof l, load, 3);
      THREAT();
      core_buf_puts(b, "High load: batch ");
      esc(b, in->extra->batches[i].id);
      core_buf_printf(b, " ran with a load average of %s on %.0f cores.\n", l,
                      cores);
    }
  }
  interrupted_threats(in, b, count);
  if (f->leaked_runs) {
    THREAT();
    core_buf_printf(b,
                    "Processes left running: %zu run%s left processes "
                    "running after %s and %s cleanup had ended (prereg "
                    "stopped them; those runs are invalid, and their "
                    "reasons name each process).\n",
                    f->leaked_runs, f->leaked_runs == 1 ? "" : "s",
                    f->leaked_runs == 1 ? "it" : "they",
                    f->leaked_runs == 1 ? "its" : "their");
  }
  if (f->quick_runs) {
    THREAT();
    core_buf_printf(b,
                    "Quick mode: %zu of %zu runs were collected with "
                    "`run --quick` and do not follow the plan.\n",
                    f->quick_runs, f->runs);
  }
#undef THREAT
}

static void threats(core_buf *b, const report_input *in,
                    const report_row_facts *f) {
  size_t n = 0;
  core_buf_puts(b, "## Threats to validity\n\nDeclared in the sheet:\n\n");
  if (in->sheet->n_threats == 0)
    core_buf_puts(b, "- None declared.\n");
  for (size_t i = 0; i < in->sheet->n_threats; i++) {
    core_buf_puts(b, "- ");
    esc(b, in->sheet->threats[i]);
    core_buf_puts(b, "\n");
  }
  core_buf_puts(b, "\nDetected by prereg:\n\n");
  setup_threats(in, f, b, &n);
  drift(in, b, &n);
  outliers_and_few(in, b, &n);
  core_buf_puts(b, n ? "\n" : "- None detected.\n\n");
}

/* Provenance, reproduce */

/* Files under the manifest by what they are. */
static void file_counts(core_buf *b, const data_report_inputs *x) {
  size_t versions = 0, csv = 0, facts = 0, per_run = 0, empty = 0, other = 0;
  static const char empty_sha[] =
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  for (size_t i = 0; i < x->n_manifest; i++) {
    const char *p = x->manifest[i].path;
    size_t n = strlen(p);
    if (strncmp(p, "versions/", 9) == 0)
      versions++;
    else if (strncmp(p, "batches/", 8) == 0 && !strchr(p + 8, '/') && n > 4 &&
             strcmp(p + n - 4, ".csv") == 0)
      csv++;
    else if (strncmp(p, "batches/", 8) == 0 && !strchr(p + 8, '/'))
      facts++;
    else if (strncmp(p, "batches/", 8) == 0)
      per_run++;
    else
      other++;
    empty += strcmp(x->manifest[i].sha256, empty_sha) == 0;
  }
  core_buf_printf(b,
                  "%zu files: %zu sheet versions and diffs, %zu batch CSVs, "
                  "%zu batch facts, %zu per-run files",
                  x->n_manifest, versions, csv, facts, per_run);
  if (other)
    core_buf_printf(b, ", %zu others", other);
  core_buf_printf(b, "; %zu of the %zu are empty", empty, x->n_manifest);
}

static void provenance(core_buf *b, const report_input *in,
                       const report_doc *doc, const report_row_facts *f) {
  const data_report_inputs *x = in->extra;
  core_buf_printf(b, "## Provenance\n\n- Sheet: version %d, SHA-256 `%s`.\n",
                  in->summary->sheet_version, in->sheet->sha256);
  if (doc->analysis_sha256[0])
    core_buf_printf(b,
                    "- Analysis: `" REPORT_ANALYSIS_FILE "`, SHA-256 `%s` "
                    "(`prereg analyze --json` of these data, which every "
                    "number here comes from).\n",
                    doc->analysis_sha256);
  if (x && x->n_manifest) {
    core_buf_puts(b, "- Data: ");
    file_counts(b, x);
    core_buf_printf(b, ", %zu rows", f->rows);
    if (f->rows > REPORT_RAW_MAX)
      core_buf_printf(b, " (the workbook's Raw sheet holds the first %d)",
                      REPORT_RAW_MAX);
    if (in->manifest_sha256)
      core_buf_printf(b, "; the manifest's SHA-256 is `%s`",
                      in->manifest_sha256);
    core_buf_puts(b, ".\n");
  } else
    core_buf_puts(b, "- Data: the experiment has no manifest yet.\n");
  if (in->unverified)
    core_buf_puts(b, "- Verification: **failed** (see the top of this "
                     "report); written with `--force`.\n");
  else
    core_buf_puts(b, "- Verification: passed; every file matches its digest "
                     "in the manifest and the chain of sheet versions holds "
                     "(`prereg verify`).\n");
  core_buf_puts(b, "- Every file's digest, every batch fact and every "
                   "amendment's diff: [provenance.md](provenance.md), beside "
                   "this report, and the workbook's Provenance sheet.\n");
  core_buf_printf(b,
                  "- Software: %s %s; %s; GSL %s; libxlsxwriter %s; "
                  "cmark-gfm %s.\n\n",
                  PREREG_NAME, PREREG_VERSION, proto_lua_version(),
                  analysis_gsl_version(), report_xlsxwriter_version(),
                  report_cmark_version());
}

/* The commands are written from the data alone (never from how this
 * report was invoked), so that the same data give the same report from a
 * checkout or from a published bundle. The newest frozen version is the
 * sheet to name: its text is the sheet's, byte for byte. */
static void reproduce(core_buf *b, const report_input *in) {
  const char *id = in->sheet->id;
  int version =
      in->summary ? in->summary->sheet_version : (int)in->n_amendments;
  core_buf_puts(b, "## Reproduce\n\nFrom the folder that holds the data "
                   "folder `data/` (name another with `--data DIR`), with "
                   "the newest frozen version of the sheet:\n\n```sh\n");
  /* ids match [a-z0-9][a-z0-9-]*: no quoting needed */
  core_buf_printf(b,
                  "prereg verify data/%s/versions/v%d.lua\n"
                  "prereg analyze data/%s/versions/v%d.lua --json\n"
                  "prereg report data/%s/versions/v%d.lua --out "
                  "report-again\n```\n\n",
                  id, version, id, version, id, version);
  core_buf_printf(b,
                  "From a bundle made by `prereg publish`: the same "
                  "commands with `%s.tar.gz` in place of the sheet.\n",
                  id);
}

/* The header's when and who of each version, when any version is stamped
 * or signed (provenance.md says the same, with how to check it). */
static void header_proofs(core_buf *b, const report_input *in) {
  const analysis_summary *sum = in->summary;
  for (size_t i = 0; report_any_proof(sum) && i < sum->n_registration; i++) {
    core_buf_printf(b, "%sv%d ", i ? "; " : " · ",
                    sum->registration[i].version);
    report_proof_words(b, &sum->registration[i], ", ");
  }
}

void report_markdown(const report_input *in, const report_doc *doc,
                     core_buf *b) {
  const proto_sheet *s = in->sheet;
  report_row_facts local;
  int used;
  const report_row_facts *f = report_facts_of(in, &local, &used);
  if (!f) {
    b->oom = 1;
    if (used)
      report_facts_free(&local);
    return;
  }
  status_line(b, in);
  report_notices_markdown(b, in, REPORT_NOTICE_TOP);
  core_buf_puts(b, "# ");
  esc(b, s->title ? s->title : s->id);
  core_buf_puts(b, "\n\n");
  report_notices_markdown(b, in, REPORT_NOTICE_HEAD);
  esc(b, s->question);
  core_buf_puts(b, "\n\nBy ");
  esc(b, s->author);
  core_buf_puts(b, " · experiment ");
  esc(b, s->id);
  core_buf_puts(b, " · registered ");
  esc(b, in->registered_at ? in->registered_at : "not registered");
  core_buf_printf(b, " · sheet version %d, %zu amendment%s",
                  in->summary->sheet_version, in->n_amendments,
                  in->n_amendments == 1 ? "" : "s");
  header_proofs(b, in);
  core_buf_puts(b, ".\n\n");
  headline(b, in, doc);
  published(b, in);
  report_replication_differences(b, in);
  the_data(b, in, doc);
  report_hosts_section(b, in, doc);
  report_setup(in, f, b);
  report_conditions(in, f, b);
  arms_and_workloads(b, s);
  rule(b, s);
  report_plan_section(b, in);
  deviations(b, in);
  fell(b, in);
  threats(b, in, f);
  provenance(b, in, doc, f);
  reproduce(b, in);
  if (used)
    report_facts_free(&local);
}
