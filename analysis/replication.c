/* replication.c: each published ratio against the one measured here and,
 * for a replication's sheet, whether the finding replicated: the ratio of
 * the two ratios with a bootstrap interval drawn from both raw data sets,
 * and an outcome.
 * SPDX-License-Identifier: MIT
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_internal.h"
#include "data/data.h"

#define OOM(err) core_fail(err, CORE_ENOMEM, "analysis: out of memory")

/* The original's side of the bootstrap draws from a stream of its own:
 * with the replication's seed both would resample alike. */
#define ORIGINAL_SEED_MIX 0x6f726967UL
/* The seed of the shuffle that pairs the two sides' replicates. */
#define PAIRING_SEED_MIX 0x70616972UL

static const analysis_result *find_result(const analysis_summary *s,
                                          const char *w, const char *m,
                                          const char *arm, const char *ref) {
  for (size_t i = 0; i < s->n_results; i++) {
    const analysis_result *r = &s->results[i];
    if (strcmp(r->workload, w) == 0 && strcmp(r->metric, m) == 0 &&
        strcmp(r->arm, arm) == 0 && (!ref || strcmp(r->reference, ref) == 0))
      return r;
  }
  return NULL;
}

static const analysis_cell *find_cell(const analysis_summary *s, const char *w,
                                      const char *m, const char *arm) {
  for (size_t i = 0; i < s->n_cells; i++) {
    const analysis_cell *c = &s->cells[i];
    if (strcmp(c->workload, w) == 0 && strcmp(c->metric, m) == 0 &&
        strcmp(c->arm, arm) == 0)
      return c->values && c->n_valid ? c : NULL;
  }
  return NULL;
}

static int decided(const char *rule_verdict) {
  return rule_verdict && strcmp(rule_verdict, "inconclusive") != 0 &&
         strcmp(rule_verdict, ANALYSIS_INSUFFICIENT) != 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* B bootstrap ratios of one experiment's comparison (sorted). */
static core_status side(const analysis_summary *s, const analysis_result *r,
                        unsigned long seed, long b, double conf, int threads,
                        double *out, core_err *err) {
  const analysis_cell *ref =
      find_cell(s, r->workload, r->metric, r->reference);
  const analysis_cell *cand = find_cell(s, r->workload, r->metric, r->arm);
  double lo, hi;
  if (!ref || !cand)
    return CORE_ESTATS;
  return analysis_bootstrap_ratio(ref->values, ref->n_valid, cand->values,
                                  cand->n_valid, b, conf, seed, threads, &lo,
                                  &hi, out, err);
}

/* The interval of the replication's ratio over the original's: each
 * side's bootstrap ratios (analysis_bootstrap_ratio, its runs resampled
 * within its arms), the original's in a seeded random order so that the
 * pairs are independent draws, then the percentiles of the quotients. */
static core_status quotient_ci(const analysis_summary *rep,
                               const analysis_result *rr,
                               const analysis_summary *orig,
                               const analysis_result *orr, int threads,
                               analysis_replication *e, core_err *err) {
  long b = rep->resamples;
  double conf = rep->confidence;
  double *x = core_calloc((size_t)b, sizeof *x);
  double *y = core_calloc((size_t)b, sizeof *y);
  core_status st = CORE_OK;
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  if (!x || !y || !g)
    st = OOM(err);
  if (st == CORE_OK)
    st = side(rep, rr, rr->seed, b, conf, threads, x, err);
  if (st == CORE_OK)
    st = side(orig, orr, (orr->seed ^ ORIGINAL_SEED_MIX) & 0xffffffffUL, b,
              conf, threads, y, err);
  if (st == CORE_OK) {
    gsl_rng_set(g, (rr->seed ^ PAIRING_SEED_MIX) & 0xffffffffUL);
    for (long i = b - 1; i > 0; i--) {
      long j = (long)gsl_rng_uniform_int(g, (unsigned long)i + 1);
      double t = y[i];
      y[i] = y[j];
      y[j] = t;
    }
    for (long i = 0; i < b; i++)
      x[i] = x[i] / y[i];
    qsort(x, (size_t)b, sizeof *x, cmp_double);
    e->ci_low = analysis_quantile_sorted(x, (size_t)b, (1 - conf) / 2);
    e->ci_high = analysis_quantile_sorted(x, (size_t)b, 1 - (1 - conf) / 2);
  }
  if (g)
    gsl_rng_free(g);
  core_free(x);
  core_free(y);
  return st == CORE_ESTATS ? CORE_OK : st;
}

/* 1, with why said, when either experiment's comparison has fewer
 * values in an arm than an interval at the replication's confidence
 * needs (proto_effective_min_n under the replication's rule, as for
 * each comparison's own interval): then the quotient has no interval. */
static int few_for_ci(const proto_rule *rule, double confidence,
                      const analysis_result *rr, const analysis_result *orr,
                      analysis_replication *e) {
  long need = proto_effective_min_n(rule, confidence);
  const analysis_result *few = NULL;
  if ((long)rr->n < need || (long)rr->n_reference < need)
    few = rr;
  else if ((long)orr->n < need || (long)orr->n_reference < need)
    few = orr;
  if (!few)
    return 0;
  e->why = core_asprintf("no interval of the ratio of ratios: the %s has "
                         "%zu value%s for %s and %zu for %s; a %.4g%% "
                         "interval needs at least %ld per arm",
                         few == rr ? "replication" : "original", few->n,
                         few->n == 1 ? "" : "s", few->arm, few->n_reference,
                         few->reference, confidence * 100, need);
  return 1;
}

/* The outcome of one entry of a replication's sheet. */
static core_status judge(analysis_summary *s, const analysis_summary *orig,
                         const proto_rule *rule, analysis_replication *e,
                         int threads, core_err *err) {
  const proto_published *p = e->published;
  const analysis_result *r = e->result, *orr = NULL;
  const char *before = p->verdict, *here;
  if (orig && (orr = find_result(orig, p->workload, p->metric, p->arm,
                                 p->reference)) != NULL) {
    before = orr->rule_verdict;
    if (!(e->original_rule_verdict = core_strdup(before)))
      return OOM(err);
  }
  /* The published column must be the original's: a ratio its own frozen
   * data do not give (an edited sheet, text that redefines protocol())
   * is said, never set beside this one as the original's. */
  if (orr && !isnan(orr->ratio) &&
      fabs(p->ratio - orr->ratio) > 1e-9 * fabs(orr->ratio)) {
    e->outcome = ANALYSIS_NOT_REPLICATED;
    e->why = core_asprintf("the published ratio %.6g is not the %.6g the "
                           "original's data give: not the original's",
                           p->ratio, orr->ratio);
    return e->why ? CORE_OK : OOM(err);
  }
  if (p->missing || !r || isnan(r->ratio)) {
    e->outcome = ANALYSIS_NOT_REPLICATED;
    e->why = p->missing
                 ? core_strdup(p->missing)
                 : core_asprintf("no ratio here: %s",
                                 r && r->note ? r->note : "no valid runs");
    return e->why ? CORE_OK : OOM(err);
  }
  here = orr ? r->rule_verdict : r->verdict;
  if (!decided(before) || !decided(here))
    e->outcome = ANALYSIS_REP_INCONCLUSIVE;
  else
    e->outcome = strcmp(before, here) == 0 ? ANALYSIS_REPLICATED
                                           : ANALYSIS_NOT_REPLICATED;
  if (!orr || isnan(orr->ratio))
    return CORE_OK;
  if (few_for_ci(rule, s->confidence, r, orr, e))
    return e->why ? CORE_OK : OOM(err);
  return quotient_ci(s, r, orig, orr, threads, e, err);
}

/* Each hypothesis against the original's of the same id: the same
 * outcome words as the comparisons. */
static core_status compare_hypotheses(analysis_summary *s,
                                      const analysis_summary *orig,
                                      core_err *err) {
  size_t n = s->n_hypotheses ? s->n_hypotheses : 1;
  s->hyp_original = core_calloc(n, sizeof *s->hyp_original);
  s->hyp_outcome = core_calloc(n, sizeof *s->hyp_outcome);
  if (!s->hyp_original || !s->hyp_outcome)
    return OOM(err);
  for (size_t i = 0; i < s->n_hypotheses; i++) {
    const analysis_hypothesis *h = &s->hypotheses[i], *o = NULL;
    for (size_t k = 0; k < orig->n_hypotheses && !o; k++)
      if (strcmp(orig->hypotheses[k].id, h->id) == 0)
        o = &orig->hypotheses[k];
    if (!o) {
      s->hyp_outcome[i] = ANALYSIS_NOT_REPLICATED;
      continue;
    }
    s->hyp_original[i] = proto_outcome_word(o->outcome);
    if (o->outcome == PROTO_INCONCLUSIVE || h->outcome == PROTO_INCONCLUSIVE)
      s->hyp_outcome[i] = ANALYSIS_REP_INCONCLUSIVE;
    else
      s->hyp_outcome[i] = o->outcome == h->outcome ? ANALYSIS_REPLICATED
                                                   : ANALYSIS_NOT_REPLICATED;
  }
  return CORE_OK;
}

static void count(analysis_summary *s, const analysis_replication *e) {
  if (!e->outcome)
    return;
  if (strcmp(e->outcome, ANALYSIS_REPLICATED) == 0)
    s->n_replicated++;
  else if (strcmp(e->outcome, ANALYSIS_NOT_REPLICATED) == 0)
    s->n_not_replicated++;
  else
    s->n_rep_inconclusive++;
}

core_status analysis_replication_fill(analysis_summary *s,
                                      const proto_sheet *sheet,
                                      const analysis_summary *orig,
                                      int threads, core_err *err) {
  core_status st = CORE_OK;
  if (sheet->n_published == 0)
    return CORE_OK;
  if (!(s->replication =
            core_calloc(sheet->n_published, sizeof *s->replication)))
    return OOM(err);
  s->n_replication = sheet->n_published;
  for (size_t i = 0; st == CORE_OK && i < sheet->n_published; i++) {
    analysis_replication *e = &s->replication[i];
    const proto_published *p = &sheet->published[i];
    e->published = p;
    e->ci_low = e->ci_high = e->ratio_of_ratios = NAN;
    if (!p->missing)
      e->result = find_result(s, p->workload, p->metric, p->arm, p->reference);
    if (e->result && !isnan(e->result->ratio))
      e->ratio_of_ratios = e->result->ratio / p->ratio;
    if (sheet->replicates &&
        (st = judge(s, orig, &sheet->rule, e, threads, err)) == CORE_OK)
      count(s, e);
  }
  if (st == CORE_OK && orig)
    st = compare_hypotheses(s, orig, err);
  return st;
}
