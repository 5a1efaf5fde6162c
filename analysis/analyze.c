/* analyze.c: from the runs that count to comparisons, verdicts and
 * hypotheses, under the current sheet and, when an amendment came after
 * data, at the registered sample and rule too.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_internal.h"

/* Summary building */

static int same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void free_result(analysis_result *r) {
  core_free(r->host);
  core_free(r->why);
  core_free(r->workload);
  core_free(r->metric);
  core_free(r->arm);
  core_free(r->reference);
  core_free(r->verdict);
  core_free(r->rule_verdict);
  core_free(r->note);
}

void acc_results_free(analysis_result *r, size_t n) {
  for (size_t i = 0; i < n; i++)
    free_result(&r[i]);
  core_free(r);
}

void acc_hypotheses_free(analysis_hypothesis *h, size_t n) {
  for (size_t i = 0; i < n; i++) {
    core_free(h[i].id);
    core_free(h[i].says);
    core_free(h[i].reason);
    core_free(h[i].claim);
    core_free(h[i].host);
  }
  core_free(h);
}

static void free_cell(analysis_cell *c) {
  core_free(c->workload);
  core_free(c->metric);
  core_free(c->arm);
  core_free(c->values);
  core_free(c->order);
  core_free(c->batch);
}

static void replication_free(analysis_summary *s) {
  for (size_t i = 0; s->replication && i < s->n_replication; i++) {
    core_free(s->replication[i].why);
    core_free(s->replication[i].original_rule_verdict);
  }
  core_free(s->replication);
  core_free(s->hyp_original);
  core_free(s->hyp_outcome);
}

void analysis_summary_free(analysis_summary *s) {
  if (!s)
    return;
  core_free(s->protocol);
  core_free(s->sheet_sha256);
  core_free(s->registration);
  core_free(s->estimator);
  core_free(s->reference);
  acc_results_free(s->results, s->n_results);
  acc_results_free(s->pairs, s->n_pairs);
  for (size_t i = 0; i < s->n_cells; i++)
    free_cell(&s->cells[i]);
  core_free(s->cells);
  acc_hypotheses_free(s->hypotheses, s->n_hypotheses);
  for (size_t i = 0; i < s->n_hosts; i++)
    core_free(s->hosts[i].name);
  core_free(s->hosts);
  acc_results_free(s->host_results, s->n_host_results);
  acc_hypotheses_free(s->host_hypotheses, s->n_host_hypotheses);
  for (size_t i = 0; i < s->n_exclusions; i++) {
    core_free(s->exclusions[i].workload);
    core_free(s->exclusions[i].arm);
    core_free(s->exclusions[i].reason);
  }
  core_free(s->exclusions);
  for (size_t i = 0; i < s->n_batches; i++)
    core_free(s->batches[i]);
  core_free(s->batches);
  analysis_summary_free(s->original);
  core_free(s->original_why);
  replication_free(s);
  core_free(s);
}

#define OOM(err) core_fail(err, CORE_ENOMEM, "analysis: out of memory")

/* One cell from its gathered values: counts, median and spread, drift,
 * and (keep) the values in collection order. OUT: *sorted the values
 * sorted (newly allocated; NULL when none), for the comparisons. */
static core_status fill_cell(acc *c, analysis_summary *s, size_t w, size_t m,
                             size_t a, int keep, double **sorted,
                             core_err *err) {
  const proto_workload *wl = &c->sheet->workloads[w];
  acc_vals *v = &c->vals[c->cell_base[w] + m * c->sheet->n_arms + a];
  size_t t = w * c->sheet->n_arms + a;
  analysis_cell *cell = &s->cells[s->n_cells++];
  core_status st;
  *sorted = NULL;
  cell->workload = core_strdup(wl->name);
  cell->metric = core_strdup(wl->metrics[m]);
  cell->arm = core_strdup(c->sheet->arms[a].name);
  if (!cell->workload || !cell->metric || !cell->arm)
    return OOM(err);
  cell->n_valid = v->n;
  cell->n_planned = wl->runs > 0 ? (size_t)wl->runs : 0;
  cell->median = NAN;
  /* Runs, not rows: the rule's tally of the workload and arm (the plan's
   * pairs come first, in sheet order); with hosts, planned is of every
   * host together, or of a host's own plan in its analysis. */
  if (t < c->n_tallies) {
    cell->n_planned =
        c->tallies[t].planned > 0 ? (size_t)c->tallies[t].planned : 0;
    cell->n_invalid = (size_t)c->tallies[t].invalid;
    cell->n_superseded = (size_t)c->tallies[t].superseded;
    cell->n_beyond = (size_t)c->tallies[t].beyond;
  }
  if (v->n) {
    if (!(*sorted = core_malloc(v->n * sizeof **sorted)))
      return OOM(err);
    memcpy(*sorted, v->v, v->n * sizeof **sorted);
  }
  if ((st = analysis_spread(*sorted, v->n, cell, err)) != CORE_OK)
    return st;
  if (v->n)
    cell->median = analysis_quantile_sorted(*sorted, v->n, 0.5);
  /* The cell takes the values over. */
  cell->values = v->v;
  cell->order = v->order;
  cell->batch = v->batch;
  v->v = NULL;
  v->order = v->batch = NULL;
  v->n = v->cap = 0;
  st = analysis_drift_of(cell, s->n_batches, s->noise_low, s->noise_high, err);
  if (!keep) {
    core_free(cell->values);
    core_free(cell->order);
    core_free(cell->batch);
    cell->values = NULL;
    cell->order = cell->batch = NULL;
  }
  return st;
}

static core_status add_cells(acc *c, analysis_summary *s, int keep,
                             double **sorted, core_err *err) {
  s->cells = core_calloc(c->n_cells ? c->n_cells : 1, sizeof *s->cells);
  if (!s->cells)
    return OOM(err);
  for (size_t w = 0; w < c->sheet->n_workloads; w++)
    for (size_t m = 0; m < c->sheet->workloads[w].n_metrics; m++)
      for (size_t a = 0; a < c->sheet->n_arms; a++) {
        core_status st =
            fill_cell(c, s, w, m, a, keep, &sorted[s->n_cells], err);
        if (st != CORE_OK)
          return st;
      }
  return CORE_OK;
}

/* The band the rule calls noise: its tie band, else 1/x to x for its
 * smallest ratio_above x > 1, else 0.95 to 1.05. */
static void noise_band(const proto_rule *r, double *low, double *high) {
  double x = 0;
  *low = 0.95;
  *high = 1.05;
  for (size_t i = 0; i < r->n_verdicts; i++)
    if (r->verdicts[i].ratio.has_ci_within) {
      *low = r->verdicts[i].ratio.ci_within[0];
      *high = r->verdicts[i].ratio.ci_within[1];
      return;
    }
  for (size_t i = 0; i < r->n_verdicts; i++)
    if (r->verdicts[i].ratio.has_above && r->verdicts[i].ratio.above > 1 &&
        (x == 0 || r->verdicts[i].ratio.above < x))
      x = r->verdicts[i].ratio.above;
  if (x > 1) {
    *low = 1 / x;
    *high = x;
  }
}

/* The looks of workload w on r: the list, and the look the data are at
 * (the one it stopped at, else the last). */
static void look_fields(const acc *c, analysis_result *r, size_t w) {
  const proto_workload *wl = &c->sheet->workloads[w];
  long stopped = c->counter ? data_counter_stopped(c->counter, w) : 0;
  r->n_looks = wl->n_looks;
  for (size_t k = 0; k < wl->n_looks; k++)
    r->looks[k] = wl->looks[k];
  r->look = stopped ? stopped : (long)wl->n_looks;
  r->family_size = 1;
}

/* One comparison of arm a with the reference on workload w, metric m,
 * from the sorted values of both: the ratio, its CI at the look's
 * confidence, and the verdict in the words of the metric, or
 * ANALYSIS_INSUFFICIENT under min_n. */
static core_status compare_arm(const acc *c, analysis_result *r, size_t w,
                               size_t m, size_t a, size_t b, const double *ref,
                               size_t rn, const double *cand, size_t cn,
                               int threads, core_err *err) {
  const proto_sheet *sh = c->sheet;
  const proto_workload *wl = &sh->workloads[w];
  r->workload = core_strdup(wl->name);
  r->metric = core_strdup(wl->metrics[m]);
  r->arm = core_strdup(sh->arms[a].name);
  r->reference = core_strdup(sh->arms[b].name);
  r->n = cn;
  r->n_reference = rn;
  r->median = analysis_quantile_sorted(cand, cn, 0.5);
  r->median_reference = analysis_quantile_sorted(ref, rn, 0.5);
  /* A pair's seed names both arms, so that it is not the seed of the
   * arm's comparison with the reference. */
  char both[512];
  snprintf(both, sizeof both, "%s vs %s", sh->arms[a].name, sh->arms[b].name);
  r->seed =
      analysis_comparison_seed(sh->rule.seed, wl->name, wl->metrics[m],
                               b == sh->reference ? sh->arms[a].name : both);
  if (r->seed == ANALYSIS_SEED_NONE || !r->arm || !r->reference ||
      !r->workload || !r->metric)
    return OOM(err);
  r->kind = proto_metric_kind_of(sh, wl->metrics[m]);
  r->higher_better = proto_metric_higher_better(sh, wl->metrics[m]);
  look_fields(c, r, w);
  return acc_decide(c, r, w, m, proto_look_confidence(sh, wl), ref, cand,
                    threads, err);
}

static core_status add_results(const acc *c, analysis_summary *s,
                               double *const *sorted, int threads,
                               core_err *err) {
  const proto_sheet *sh = c->sheet;
  size_t na = sh->n_arms;
  s->results = core_calloc(c->n_cells ? c->n_cells : 1, sizeof *s->results);
  if (!s->results)
    return OOM(err);
  for (size_t w = 0; w < sh->n_workloads; w++)
    for (size_t m = 0; m < sh->workloads[w].n_metrics; m++) {
      size_t base = c->cell_base[w] + m * na;
      const analysis_cell *rc = &s->cells[base + sh->reference];
      for (size_t a = 0; a < na && rc->n_valid > 0; a++) {
        const analysis_cell *cc = &s->cells[base + a];
        core_status st;
        if (a == sh->reference || cc->n_valid == 0)
          continue;
        st =
            compare_arm(c, &s->results[s->n_results++], w, m, a, sh->reference,
                        sorted[base + sh->reference], rc->n_valid,
                        sorted[base + a], cc->n_valid, threads, err);
        if (st != CORE_OK)
          return st;
      }
    }
  return CORE_OK;
}

/* 1 when a hypothesis compares arms a and b (either way round) on
 * workload w, metric m: a claim `against` an arm besides the reference. */
static int claimed_pair(const proto_sheet *sh, size_t w, size_t m, size_t a,
                        size_t b) {
  const proto_workload *wl = &sh->workloads[w];
  for (size_t i = 0; i < sh->n_hypotheses; i++) {
    const proto_hypothesis *h = &sh->hypotheses[i];
    long vs = h->against ? proto_arm_index(sh, h->against) : -1;
    if (vs < 0 || (size_t)vs == sh->reference || !h->workload || !h->metric ||
        strcmp(h->workload, wl->name) || strcmp(h->metric, wl->metrics[m]))
      continue;
    for (size_t k = 0; k < h->n_arms; k++) {
      long x = proto_arm_index(sh, h->arms[k]);
      if ((x == (long)a && vs == (long)b) || (x == (long)b && vs == (long)a))
        return 1;
    }
  }
  return 0;
}

/* The pairs: each later arm against each earlier one, the reference left
 * out (its comparisons are the results); all of them under the rule's
 * pairs (registered) or analyze --pairs (exploratory), else those a
 * hypothesis compares (registered with it). */
static core_status add_pairs(const acc *c, analysis_summary *s,
                             double *const *sorted, int threads,
                             core_err *err) {
  const proto_sheet *sh = c->sheet;
  size_t na = sh->n_arms, n = 0;
  if (na < 3)
    return CORE_OK;
  s->pairs_exploratory = sh->rule.pairs == PROTO_PAIRS_EXPLORATORY;
  size_t cap = 0;
  for (size_t w = 0; w < sh->n_workloads; w++)
    cap += sh->workloads[w].n_metrics;
  cap *= (na - 1) * (na - 2) / 2;
  s->pairs = core_calloc(cap + 1, sizeof *s->pairs);
  if (!s->pairs)
    return OOM(err);
  for (size_t w = 0; w < sh->n_workloads; w++)
    for (size_t m = 0; m < sh->workloads[w].n_metrics; m++) {
      size_t base = c->cell_base[w] + m * na;
      for (size_t a = 0; a < na; a++)
        for (size_t b = 0; b < a; b++) {
          const analysis_cell *ca = &s->cells[base + a],
                              *cb = &s->cells[base + b];
          int claimed;
          if (a == sh->reference || b == sh->reference || !ca->n_valid ||
              !cb->n_valid)
            continue;
          claimed = claimed_pair(sh, w, m, a, b);
          if (!sh->rule.pairs && !claimed)
            continue;
          s->pairs[n].exploratory =
              sh->rule.pairs == PROTO_PAIRS_EXPLORATORY && !claimed;
          core_status st = compare_arm(
              c, &s->pairs[n++], w, m, a, b, sorted[base + b], cb->n_valid,
              sorted[base + a], ca->n_valid, threads, err);
          s->n_pairs = n;
          if (st != CORE_OK)
            return st;
        }
    }
  return CORE_OK;
}

const analysis_result *analysis_registered_pair(const analysis_summary *s,
                                                const analysis_result *r) {
  const analysis_summary *o = s ? s->original : NULL;
  for (size_t i = 0; o && i < o->n_pairs; i++) {
    const analysis_result *g = &o->pairs[i];
    if (!strcmp(g->workload, r->workload) && !strcmp(g->metric, r->metric) &&
        !strcmp(g->arm, r->arm) && !strcmp(g->reference, r->reference))
      return g;
  }
  return NULL;
}

/* The entry of arm against vs on w/m among results and pairs, or NULL. */
static const analysis_result *find_entry(const analysis_summary *s,
                                         const char *w, const char *m,
                                         const char *arm, const char *vs) {
  for (size_t i = 0; i < s->n_results + s->n_pairs; i++) {
    const analysis_result *r =
        i < s->n_results ? &s->results[i] : &s->pairs[i - s->n_results];
    if (same_str(r->workload, w) && same_str(r->metric, m) &&
        same_str(r->arm, arm) && same_str(r->reference, vs))
      return r;
  }
  return NULL;
}

/* The comparison of arm with vs on w/m: the entry as it is, or the entry
 * of vs against arm turned round into *tmp (its strings borrowed; never
 * freed): the ratio and its CI's ends inverted, the difference and its
 * ends negated (the same resamples, seen from the other arm), and the
 * rule's verdict on the turned ratio. NULL: neither is there. */
static const analysis_result *comparison(const proto_sheet *sh,
                                         const analysis_summary *s,
                                         const char *w, const char *m,
                                         const char *arm, const char *vs,
                                         analysis_result *tmp) {
  const analysis_result *g = find_entry(s, w, m, arm, vs);
  if (g || !(g = find_entry(s, w, m, vs, arm)))
    return g;
  *tmp = *g;
  tmp->arm = g->reference;
  tmp->reference = g->arm;
  tmp->n = g->n_reference;
  tmp->n_reference = g->n;
  tmp->median = g->median_reference;
  tmp->median_reference = g->median;
  tmp->ratio = 1 / g->ratio;
  tmp->ci_low = 1 / g->ci_high;
  tmp->ci_high = 1 / g->ci_low;
  /* The rule of a pair made this way round: a ratio that is not finite
   * (a reference median of 0, or one too small beside the other) is no
   * ratio, and an interval with an end that is not finite no interval. */
  if (isinf(tmp->ratio)) {
    tmp->ratio = tmp->ci_low = tmp->ci_high = NAN;
    tmp->note =
        (char *)(g->median == 0 ? "ratio not finite: reference median is 0"
                                : "ratio not finite: the reference median is "
                                  "too small beside the other");
  } else if (isinf(tmp->ci_low) || isinf(tmp->ci_high)) {
    tmp->ci_low = tmp->ci_high = NAN;
    tmp->note = (char *)"CI not finite: some resamples have a reference "
                        "median of 0 or one too small, so their ratio is "
                        "not finite, and an end falls among them";
  }
  tmp->difference = -g->difference;
  tmp->difference_ci_low = -g->difference_ci_high;
  tmp->difference_ci_high = -g->difference_ci_low;
  tmp->worse = -g->worse;
  if (strcmp(g->verdict, ANALYSIS_INSUFFICIENT) != 0) {
    analysis_estimate e = acc_estimate_of(tmp);
    const proto_verdict_rule *v = analysis_verdict_rule_d(&sh->rule, &e);
    tmp->verdict = (char *)proto_verdict_word(sh, v, m);
    tmp->rule_verdict = (char *)(v ? v->name : "inconclusive");
  }
  return tmp;
}

static char *claim_words(const proto_sheet *sh, const proto_hypothesis *h) {
  core_buf b;
  core_buf_init(&b);
  switch (h->kind) {
  case PROTO_CLAIM_AT_LEAST:
    core_buf_printf(&b, "at_least(%g)", h->x);
    break;
  case PROTO_CLAIM_BELOW:
    core_buf_printf(&b, "below(%g)", h->x);
    break;
  case PROTO_CLAIM_DIFF_BELOW:
    core_buf_printf(&b, "diff_below(%g)", h->x);
    break;
  case PROTO_CLAIM_DIFF_AT_LEAST:
    core_buf_printf(&b, "diff_at_least(%g)", h->x);
    break;
  case PROTO_CLAIM_VERDICT_IS:
    core_buf_printf(&b, "verdict_is(\"%s\")", h->verdict ? h->verdict : "");
    break;
  case PROTO_CLAIM_FUNCTION:
    core_buf_puts(&b, "function of all results");
    break;
  }
  if (h->kind != PROTO_CLAIM_FUNCTION) {
    core_buf_puts(&b, " for ");
    if (h->n_arms == 0)
      core_buf_puts(&b, "every arm");
    for (size_t i = 0; i < h->n_arms; i++)
      core_buf_printf(&b, "%s%s", i ? ", " : "", h->arms[i]);
    core_buf_printf(&b, " against %s on %s/%s",
                    h->against ? h->against : sh->arms[sh->reference].name,
                    h->workload ? h->workload : "?",
                    h->metric ? h->metric : "?");
  }
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return core_buf_steal(&b);
}

/* The view a claim sees of result r. */
static proto_result_view view_of(const analysis_result *r) {
  proto_result_view v = {0};
  v.workload = r->workload;
  v.metric = r->metric;
  v.arm = r->arm;
  v.reference = r->reference;
  v.verdict = r->verdict;
  v.rule_verdict = r->rule_verdict;
  v.ratio = r->ratio;
  v.ci_low = r->ci_low;
  v.ci_high = r->ci_high;
  v.median = r->median;
  v.median_reference = r->median_reference;
  v.difference = r->difference;
  v.difference_ci_low = r->difference_ci_low;
  v.difference_ci_high = r->difference_ci_high;
  v.n = r->n;
  v.n_reference = r->n_reference;
  return v;
}

/* A function claim sees every result of this analysis, and its pairs. */
static core_status eval_function(const acc *c, const analysis_summary *s,
                                 const proto_hypothesis *h,
                                 analysis_hypothesis *out, core_err *err) {
  size_t n = s->n_results + s->n_pairs;
  proto_result_view *views = core_calloc(n ? n : 1, sizeof *views);
  core_err ferr = {0};
  core_status st;
  if (!views)
    return OOM(err);
  for (size_t i = 0; i < n; i++)
    views[i] = view_of(i < s->n_results ? &s->results[i]
                                        : &s->pairs[i - s->n_results]);
  st = proto_eval_claim_pairs(c->sheet, h, views, s->n_results,
                              views + s->n_results, s->n_pairs, &out->outcome,
                              &out->reason, &ferr);
  core_free(views);
  if (st == CORE_ENOMEM)
    return OOM(err);
  if (st != CORE_OK) {
    /* A claim that fails to evaluate decides nothing; say why in the
     * reason rather than losing every other result. */
    out->outcome = PROTO_INCONCLUSIVE;
    /* Which budget stopped it, and where, is the machine's: the reason
     * a report records must be the same wherever it is rendered. */
    if (proto_budget_spent(c->sheet))
      out->reason = core_strdup(
          "the claim's function failed: it spent the sheet's Lua budget "
          "(10 million instructions, 0.2 s of CPU or 256 MiB allocated, "
          "whichever this machine reached first); a sheet should declare, "
          "not compute");
    else
      out->reason = core_asprintf("the claim's function failed: %s",
                                  ferr.msg[0] ? ferr.msg : core_strerror(st));
  }
  return out->reason ? CORE_OK : OOM(err);
}

/* One arm of a per-arm claim h, its reason appended to why (after "; "
 * unless it is the first shown). */
static proto_outcome claim_arm(const proto_sheet *sh,
                               const analysis_summary *s,
                               const proto_hypothesis *h, const char *arm,
                               core_buf *why, size_t shown) {
  const char *vs = h->against ? h->against : sh->arms[sh->reference].name;
  char *reason = NULL;
  analysis_result turned;
  const analysis_result *r =
      comparison(sh, s, h->workload, h->metric, arm, vs, &turned);
  proto_outcome oc =
      analysis_claim_outcome(h, r, h->workload ? h->workload : "?",
                             h->metric ? h->metric : "?", arm, &reason);
  if (!reason) {
    why->oom = 1;
    return oc;
  }
  core_buf_printf(why, "%s%s", shown ? "; " : "", reason);
  if (r == &turned)
    core_buf_printf(why, " (the pair %s against %s, turned round)", vs, arm);
  core_free(reason);
  return oc;
}

static core_status add_hypotheses(const acc *c, analysis_summary *s,
                                  core_err *err) {
  const proto_sheet *sh = c->sheet;
  s->hypotheses = core_calloc(sh->n_hypotheses ? sh->n_hypotheses : 1,
                              sizeof *s->hypotheses);
  if (!s->hypotheses)
    return OOM(err);
  for (size_t i = 0; i < sh->n_hypotheses; i++) {
    const proto_hypothesis *h = &sh->hypotheses[i];
    analysis_hypothesis *o = &s->hypotheses[s->n_hypotheses++];
    core_buf why;
    int any_not = 0, all_held = 1;
    size_t n_arms = h->n_arms;
    o->id = core_strdup(h->id ? h->id : "");
    o->says = core_strdup(h->says ? h->says : "");
    o->claim = claim_words(sh, h);
    if (!o->id || !o->says || !o->claim)
      return OOM(err);
    if (h->kind == PROTO_CLAIM_FUNCTION) {
      core_status st = eval_function(c, s, h, o, err);
      if (st != CORE_OK)
        return st;
      continue;
    }
    /* No arms named: the claim is about every non-reference arm. */
    if (n_arms == 0)
      n_arms = sh->n_arms > 0 ? sh->n_arms - 1 : 0;
    core_buf_init(&why);
    for (size_t k = 0, shown = 0; k < (h->n_arms ? h->n_arms : sh->n_arms);
         k++) {
      const char *arm;
      proto_outcome oc;
      if (h->n_arms)
        arm = h->arms[k];
      else if (k == sh->reference)
        continue;
      else
        arm = sh->arms[k].name;
      oc = claim_arm(sh, s, h, arm, &why, shown++);
      if (oc == PROTO_NOT_HELD)
        any_not = 1;
      if (oc != PROTO_HELD)
        all_held = 0;
    }
    if (n_arms == 0) {
      all_held = 0;
      core_buf_puts(&why, "no arm to compare");
    }
    o->outcome = any_not    ? PROTO_NOT_HELD
                 : all_held ? PROTO_HELD
                            : PROTO_INCONCLUSIVE;
    if (why.oom) {
      core_buf_free(&why);
      return OOM(err);
    }
    o->reason = core_buf_steal(&why);
    if (!o->reason)
      return OOM(err);
  }
  return CORE_OK;
}

/* Exclusions: (workload, arm, reason) with the number of distinct runs,
 * in the order of the sheet's workloads and arms (unknown ones last, by
 * name), then reason. */
static int cmp_drop(const void *pa, const void *pb) {
  const acc_drop *x = *(const acc_drop *const *)pa,
                 *y = *(const acc_drop *const *)pb;
  int d;
  if (x->w != y->w)
    return x->w < y->w ? -1 : 1;
  if ((d = strcmp(x->wname, y->wname)) != 0)
    return d;
  if (x->a != y->a)
    return x->a < y->a ? -1 : 1;
  if ((d = strcmp(x->aname, y->aname)) != 0)
    return d;
  if ((d = strcmp(x->reason, y->reason)) != 0)
    return d;
  return x->run < y->run ? -1 : x->run > y->run;
}

static core_status add_exclusions(const acc *c, analysis_summary *s,
                                  core_err *err) {
  const acc_drop **d = core_malloc((c->n_drops ? c->n_drops : 1) * sizeof *d);
  size_t n = c->n_drops;
  if (!d)
    return OOM(err);
  for (size_t i = 0; i < n; i++)
    d[i] = &c->drops[i];
  qsort(d, n, sizeof *d, cmp_drop);
  s->exclusions = core_calloc(n ? n : 1, sizeof *s->exclusions);
  if (!s->exclusions) {
    core_free(d);
    return OOM(err);
  }
  for (size_t i = 0; i < n; i++) {
    /* Interned: the same name or reason is the same pointer. */
    int new_group = i == 0 || d[i]->wname != d[i - 1]->wname ||
                    d[i]->aname != d[i - 1]->aname ||
                    d[i]->reason != d[i - 1]->reason;
    analysis_exclusion *e;
    if (!new_group) {
      s->exclusions[s->n_exclusions - 1].runs += d[i]->run != d[i - 1]->run;
      continue;
    }
    e = &s->exclusions[s->n_exclusions++];
    e->workload = core_strdup(d[i]->wname);
    e->arm = core_strdup(d[i]->aname);
    e->reason = core_strdup(d[i]->reason);
    e->runs = 1;
    if (!e->workload || !e->arm || !e->reason) {
      core_free(d);
      return OOM(err);
    }
  }
  core_free(d);
  return CORE_OK;
}

static core_status summary_head(const acc *c, const analysis_stream *st,
                                const char *sha256, int version,
                                analysis_summary *s, core_err *err) {
  const proto_sheet *sh = c->sheet;
  s->protocol = core_strdup(sh->id ? sh->id : "");
  s->sheet_sha256 = core_strdup(sha256);
  s->sheet_version = version;
  s->estimator =
      core_strdup(sh->rule.estimator ? sh->rule.estimator : "median");
  s->confidence = sh->rule.confidence;
  s->resamples = sh->rule.resamples;
  s->seed = sh->rule.seed;
  s->min_n = sh->rule.min_n;
  s->family = sh->rule.family;
  for (size_t w = 0; w < sh->n_workloads; w++)
    s->looks |= sh->workloads[w].n_looks > 0;
  s->reference = core_strdup(sh->arms[sh->reference].name);
  s->n_rows = st->n_rows;
  s->status = c->status;
  s->provisional = data_status_provisional(&s->status);
  noise_band(&sh->rule, &s->noise_low, &s->noise_high);
  if (!s->protocol || !s->sheet_sha256 || !s->estimator || !s->reference)
    return OOM(err);
  s->batches =
      core_calloc(st->n_batches ? st->n_batches : 1, sizeof *s->batches);
  if (!s->batches)
    return OOM(err);
  for (size_t i = 0; i < st->n_batches; i++, s->n_batches++)
    if (!(s->batches[i] = core_strdup(st->batches[i])))
      return OOM(err);
  return CORE_OK;
}

core_status acc_summary(acc *c, const analysis_stream *st, const char *sha256,
                        int version, int threads, int keep_values,
                        analysis_summary **out, core_err *err) {
  analysis_summary *s = core_calloc(1, sizeof *s);
  double **sorted = core_calloc(c->n_cells ? c->n_cells : 1, sizeof *sorted);
  core_status rc;
  *out = NULL;
  if (!s || !sorted) {
    core_free(s);
    core_free(sorted);
    return OOM(err);
  }
  if ((rc = summary_head(c, st, sha256, version, s, err)) != CORE_OK ||
      (rc = add_cells(c, s, keep_values, sorted, err)) != CORE_OK ||
      (rc = add_results(c, s, sorted, threads, err)) != CORE_OK ||
      (rc = add_pairs(c, s, sorted, threads, err)) != CORE_OK ||
      (rc = acc_family(c, s, sorted, threads, err)) != CORE_OK ||
      (rc = add_hypotheses(c, s, err)) != CORE_OK ||
      (rc = add_exclusions(c, s, err)) != CORE_OK) {
    analysis_summary_free(s);
    s = NULL;
  }
  for (size_t i = 0; i < c->n_cells; i++)
    core_free(sorted[i]);
  core_free(sorted);
  *out = s;
  return rc;
}

int analysis_provisional(const analysis_summary *s, const char *host) {
  if (!s)
    return 0;
  for (size_t i = 0; host && i < s->n_hosts; i++)
    if (strcmp(s->hosts[i].name, host) == 0)
      return data_status_provisional(&s->hosts[i].status);
  return s->provisional;
}

/* The registered sample */

int analysis_same_decision(const analysis_result *a,
                           const analysis_result *b) {
  const char *x = a->rule_verdict ? a->rule_verdict : a->verdict;
  const char *y = b->rule_verdict ? b->rule_verdict : b->verdict;
  return strcmp(x ? x : "", y ? y : "") == 0;
}

int analysis_registered_has(const analysis_summary *s, const char *workload,
                            const char *metric, const char *arm) {
  if (!s->original)
    return 1;
  for (size_t i = 0; i < s->original->n_cells; i++) {
    const analysis_cell *c = &s->original->cells[i];
    if (strcmp(c->workload, workload) == 0 && strcmp(c->metric, metric) == 0 &&
        strcmp(c->arm, arm) == 0)
      return 1;
  }
  return 0;
}

/* What changed between two parsed versions that the analysis depends on,
 * in words ("" when nothing): the rule's decisions, the hypotheses, the
 * runs planned. An amendment that changes the verdicts' words only
 * decides every comparison as before. */
static const proto_hypothesis *hyp_of(const proto_sheet *s, const char *id) {
  for (size_t i = 0; i < s->n_hypotheses; i++)
    if (strcmp(s->hypotheses[i].id, id) == 0)
      return &s->hypotheses[i];
  return NULL;
}

/* The hypotheses of `of` that `other` lacks (what 'a': added, 'r':
 * removed) or states otherwise ('c': changed), as "added hypothesis H2"
 * or "changed hypotheses H1, H3", after " and " when b holds something. */
static void hypotheses_that(const proto_sheet *of, const proto_sheet *other,
                            char what, core_buf *b) {
  size_t n = 0, k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < of->n_hypotheses; i++) {
      const proto_hypothesis *h = &of->hypotheses[i];
      const proto_hypothesis *g = hyp_of(other, h->id);
      if (what == 'c' ? !g || proto_same_hypothesis(g, h) : g != NULL)
        continue;
      if (pass == 0) {
        n++;
        continue;
      }
      if (k++ == 0)
        core_buf_printf(b, "%s%s hypothes%s ", b->len ? " and " : "",
                        what == 'a'   ? "added"
                        : what == 'r' ? "removed"
                                      : "changed",
                        n == 1 ? "is" : "es");
      core_buf_printf(b, "%s%s", k > 1 ? ", " : "", h->id);
    }
}

static void describe_change(const proto_sheet *before,
                            const proto_sheet *after, core_buf *b) {
  int rule = !proto_same_rule(&before->rule, &after->rule);
  size_t k = 0;
  if (rule)
    core_buf_puts(b, "changed the rule");
  /* What it did to the hypotheses, each by name: one the registered
   * version lacks was added, not changed. */
  hypotheses_that(after, before, 'a', b);
  hypotheses_that(after, before, 'c', b);
  hypotheses_that(before, after, 'r', b);
  for (size_t i = 0; i < after->n_workloads; i++) {
    long j = proto_workload_index(before, after->workloads[i].name);
    long was = j >= 0 ? before->workloads[j].runs : 0;
    long now = after->workloads[i].runs;
    if (j < 0 || was == now)
      continue;
    core_buf_printf(b, "%s%sruns of %s from %ld to %ld",
                    b->len ? (k ? ", " : " and ") : "",
                    k ? "" : (now > was ? "raised " : "changed "),
                    after->workloads[i].name, was, now);
    k++;
  }
}

/* What amendment v changed, or nothing: between its frozen copy and the
 * one before, or (when those cannot be read) between the ends of the
 * chain, which can only over-report; and the workloads whose rows it
 * superseded (the chain says so: versions/vN.json). */
static void change_of(const proto_sheet *sheet, const proto_sheet *orig,
                      const data_experiment *exp, const data_version *v,
                      core_buf *change) {
  core_err lerr = {0};
  proto_sheet *prev = data_load_version(exp, v->number - 1, &lerr);
  proto_sheet *cur = prev ? data_load_version(exp, v->number, &lerr) : NULL;
  if (prev && cur)
    describe_change(prev, cur, change);
  else if (orig)
    describe_change(orig, sheet, change);
  proto_sheet_free(prev);
  proto_sheet_free(cur);
  if (v->n_supersedes > 0) {
    core_buf_printf(change, "%ssuperseded earlier rows of ",
                    change->len ? " and " : "");
    for (size_t k = 0; k < v->n_supersedes; k++)
      core_buf_printf(change, "%s%s", k ? ", " : "", v->supersedes[k]);
  }
}

/* Why the analysis is also given under the registered sample and rule,
 * or NULL when it is not: an amendment filed after data existed that
 * changed the runs planned, the rule's decisions or the hypotheses, or
 * superseded rows. */
core_status analysis_original_reason(const proto_sheet *sheet,
                                     const proto_sheet *orig,
                                     const data_experiment *exp, char **why,
                                     core_err *err) {
  core_buf b;
  *why = NULL;
  core_buf_init(&b);
  for (size_t i = 0; exp && i < exp->n_versions; i++) {
    const data_version *v = &exp->versions[i];
    core_buf change;
    if (v->number < 1 || v->rows_when_filed <= 0)
      continue;
    core_buf_init(&change);
    change_of(sheet, orig, exp, v, &change);
    if (change.len)
      core_buf_printf(&b, "%samendment %d, filed when %ld runs existed, %s",
                      b.len ? "; " : "", v->number, v->rows_when_filed,
                      change.data);
    if (change.oom)
      b.oom = 1;
    core_buf_free(&change);
  }
  if (b.oom) {
    core_buf_free(&b);
    return OOM(err);
  }
  if (b.len)
    *why = core_buf_steal(&b);
  core_buf_free(&b);
  return CORE_OK;
}
