/* plan.c: the report's "Sample size" section: how the sheet's runs were
 * chosen (its plan block, frozen with it), what the plan expected to
 * decide against what was decided, and the pilot, which never counts.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

/* Comparisons of the analysis with a verdict of the rule. */
static size_t decided(const analysis_summary *a, size_t *of) {
  size_t n = 0;
  *of = a->n_results;
  for (size_t i = 0; i < a->n_results; i++) {
    const char *v = a->results[i].rule_verdict;
    n += v && strcmp(v, "inconclusive") && strcmp(v, ANALYSIS_INSUFFICIENT);
  }
  return n;
}

/* How the runs were chosen: the smallest size reaching the power, or the
 * runs the author gave (plan --runs) with the power found there; for
 * which comparisons; with looks or not. */
static void chosen(core_buf *b, const proto_plan *p) {
  const char *which = p->sized_for_hypotheses
                          ? "every comparison a hypothesis tests (all of "
                            "a workload's when none tests it; the others "
                            "did not set the size)"
                          : "every comparison of it";
  if (p->n_looks) {
    core_buf_puts(b, " The design is sequential, with looks at ");
    for (size_t i = 0; i < p->n_looks; i++)
      core_buf_printf(b, "%s%ld", i ? ", " : "", p->looks[i]);
    core_buf_puts(b, " runs per arm, simulated as `run` stops.");
  }
  if (p->runs > 0) {
    core_buf_printf(b,
                    " The runs per arm (%ld) were given by the author; the "
                    "plan found the probability that %s decides there",
                    p->runs, which);
    if (p->achieved >= 0)
      core_buf_printf(b, ": at least %.3g%%", 100.0 * p->achieved);
    core_buf_printf(b, " (against the power %g%% it was asked for).",
                    100.0 * p->power);
    return;
  }
  core_buf_printf(b,
                  " Each workload's runs are the smallest %s at which %s "
                  "decided (any verdict but inconclusive) with a "
                  "probability of at least %g%%",
                  p->n_looks ? "design (its last look)" : "size", which,
                  100.0 * p->power);
  if (p->achieved >= 0)
    core_buf_printf(b, " (the least of them: %.3g%%)", 100.0 * p->achieved);
  core_buf_puts(b, ".");
}

int report_plan_rule_notice(const report_input *in, report_notice *n) {
  char now[CORE_SHA256_HEX];
  if (!proto_plan_rule_changed(in->sheet, now))
    return 0;
  n->where = REPORT_NOTICE_TOP;
  n->heading = "RULE CHANGED AFTER THE PLAN";
  n->section = "Sample size";
  n->text = core_asprintf(
      "The runs per arm were chosen by `prereg plan` for another rule "
      "than the one registered here (the rule, arms, metrics or "
      "hypotheses it was computed for have SHA-256 `%.12s`, these "
      "`%.12s`): the power and the decisions the plan expected are not "
      "this rule's",
      in->sheet->plan.rule_sha256, now);
  return n->text ? 1 : -1;
}

/* Whether the plan was computed for the rule registered, in words. */
static void rule_planned_for(core_buf *b, const proto_plan *p,
                             const proto_sheet *s) {
  char now[CORE_SHA256_HEX];
  if (!p->rule_sha256)
    core_buf_puts(b, " The plan block does not record the rule it was "
                     "computed for (`rule_sha256`): whether the rule changed "
                     "after the plan cannot be told.");
  else if (proto_plan_rule_changed(s, now))
    core_buf_puts(b, " **The rule was changed after the plan**: the plan "
                     "was computed for another rule, arms, metrics or "
                     "hypotheses than these, so what it gives below is not "
                     "this rule's power.");
}

static void planned(core_buf *b, const report_input *in) {
  const proto_plan *p = &in->sheet->plan;
  size_t of, n = decided(in->summary, &of);
  core_buf_printf(b,
                  "%s by `prereg plan` before "
                  "registering, from the values of a %s (at least %ld "
                  "values per cell, SHA-256 `%.12s`): for each comparison "
                  "and each size tried (",
                  p->runs > 0 ? "The power at the runs per arm was found"
                              : "The runs per arm were chosen",
                  p->pilot_source, p->pilot_runs, p->pilot_sha256);
  for (size_t i = 0; i < p->n_sizes; i++)
    core_buf_printf(b, "%s%ld", i ? ", " : "", p->sizes[i]);
  core_buf_printf(b,
                  " runs per arm), %ld simulated experiments drew that many "
                  "values per arm from them and applied this rule.",
                  p->sims);
  rule_planned_for(b, p, in->sheet);
  chosen(b, p);
  if (p->assurance > 0 && p->power_low >= 0)
    core_buf_printf(b,
                    " Over the pilot's plausible truths (the pilot "
                    "resampled per arm, smoothed), it decided with a "
                    "probability of at least %.3g%% in %g%% of them.",
                    100.0 * p->power_low, 100.0 * p->assurance);
  if (p->expected >= 0 && p->comparisons >= 0) {
    core_buf_printf(b, " The plan expected %.3g", p->expected);
    if (p->expected_se >= 0)
      core_buf_printf(b, " (± %.2g, the simulation's error)", p->expected_se);
    core_buf_printf(b, " of its %ld comparisons to decide; %s%zu of %zu did.",
                    p->comparisons,
                    in->summary->provisional ? "so far (the data are not "
                                               "complete) "
                                             : "",
                    n, of);
  }
  core_buf_puts(b, "\n\n");
}

/* The look workload w stopped at (1-based), from its results; 0 when it
 * did not stop before its last look. */
static long stopped_at(const report_input *in, size_t w) {
  const proto_workload *wl = &in->sheet->workloads[w];
  const analysis_summary *a = in->summary;
  for (size_t i = 0; a && i < a->n_results; i++)
    if (strcmp(a->results[i].workload, wl->name) == 0 &&
        a->results[i].look > 0 && a->results[i].look < (long)wl->n_looks)
      return a->results[i].look;
  return 0;
}

/* The runs the early stops saved against the registered maximum, or
 * nothing when no workload stopped early. Returns whether one did. */
static int early_stops(core_buf *b, const report_input *in, int say) {
  const proto_sheet *s = in->sheet;
  long saved = 0, max = 0;
  for (size_t w = 0; w < s->n_workloads; w++) {
    const proto_workload *wl = &s->workloads[w];
    long k = stopped_at(in, w);
    if (!proto_workload_runs_itself(wl))
      continue;
    max += wl->runs * (long)s->n_arms;
    if (k > 0)
      saved += (wl->runs - wl->looks[k - 1]) * (long)s->n_arms;
  }
  if (!say || saved == 0)
    return saved > 0;
  core_buf_printf(b, "Workloads with looks were analysed after each "
                     "preregistered look and stopped at the first where every "
                     "comparison was decided, each look's interval at its "
                     "share of the error. ");
  for (size_t w = 0; w < s->n_workloads; w++) {
    long k = stopped_at(in, w);
    if (k > 0) {
      report_md_esc(b, s->workloads[w].name);
      core_buf_printf(b, " stopped at look %ld of %zu (n=%ld). ", k,
                      s->workloads[w].n_looks, s->workloads[w].looks[k - 1]);
    }
  }
  core_buf_printf(b,
                  "The early stops saved %ld of the %ld runs planned "
                  "at the registered maximum.\n\n",
                  saved, max);
  return 1;
}

void report_plan_section(core_buf *b, const report_input *in) {
  long runs = -1, valid = -1;
  core_err err = {0};
  if (in->exp)
    (void)data_pilot_count(in->exp, &runs, &valid, &err);
  if (!in->sheet->plan.declared && runs < 0 && !early_stops(b, in, 0))
    return;
  core_buf_puts(b, "## Sample size\n\n");
  early_stops(b, in, 1);
  if (in->sheet->plan.declared)
    planned(b, in);
  else
    core_buf_puts(b, "The runs per arm are the sheet's own: it has no plan "
                     "block saying how they were chosen.\n\n");
  if (runs >= 0)
    core_buf_printf(b,
                    "A pilot of %ld runs (%ld valid) is kept in `pilot/` "
                    "beside the data, listed in the MANIFEST and bundled. "
                    "It is a pilot: none of its runs counts for the plan's "
                    "runs, the analysis or any verdict in this report.\n\n",
                    runs, valid);
}
