/* family.c: the rule's correction for many comparisons. The family is a
 * workload's comparisons (each arm with the reference at every metric,
 * and every pair when the rule registers pairs). Each is ranked by the
 * smallest error alpha at which its interval decides (a p-value read from
 * its own bootstrap distribution), and Holm's step-down gives the k-th
 * of m, k = 1..m, the error alpha / (m - k + 1) until the first that does
 * not decide there; it and every later one stay at that error. alpha is
 * the look's share (proto_look_confidence): the look first, then Holm
 * within it. Bonferroni gives each alpha / m.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_internal.h"

/* One comparison of the family. */
typedef struct member {
  analysis_result *r;
  size_t metric, arm, ref; /* sheet indexes */
  double p;                /* the smallest error that decides it */
  size_t order;            /* its place among the results */
} member;

/* Whether the interval of the sorted replicates rep at error alpha
 * decides r under the rule. */
static int decides_at(const proto_rule *rule, const analysis_result *r,
                      const double *rep, size_t n, double alpha) {
  double lo = analysis_quantile_sorted(rep, n, alpha / 2),
         hi = analysis_quantile_sorted(rep, n, 1 - alpha / 2);
  return analysis_verdict_rule(rule, r->ratio, lo, hi) != NULL;
}

/* The smallest error at which m's interval decides (1 when none does, or
 * it has no interval): narrower intervals decide more, so the errors
 * that decide are an interval up to 1, found by bisection. */
static core_status p_of(const acc *c, member *m, size_t w,
                        double *const *sorted, double *rep, int threads,
                        core_err *err) {
  const proto_sheet *sh = c->sheet;
  const analysis_result *r = m->r;
  size_t base = c->cell_base[w] + m->metric * sh->n_arms, n;
  double lo, hi, a = 0, b = 1;
  core_err berr = {0};
  m->p = 1;
  if (isnan(r->ci_low) || isnan(r->ci_high) || r->n < (size_t)sh->rule.min_n ||
      r->n_reference < (size_t)sh->rule.min_n)
    return CORE_OK;
  n = (size_t)sh->rule.resamples;
  core_status st = analysis_bootstrap_ratio(
      sorted[base + m->ref], r->n_reference, sorted[base + m->arm], r->n,
      sh->rule.resamples, r->confidence_used, r->seed, threads, &lo, &hi, rep,
      &berr);
  if (st == CORE_ENOMEM) {
    *err = berr;
    return st;
  }
  if (st != CORE_OK || !decides_at(&sh->rule, r, rep, n, 1 - 1e-12))
    return CORE_OK;
  for (int i = 0; i < 60; i++) {
    double mid = (a + b) / 2;
    if (decides_at(&sh->rule, r, rep, n, mid))
      b = mid;
    else
      a = mid;
  }
  m->p = b;
  return CORE_OK;
}

void analysis_family_errors(int family, double alpha, size_t m,
                            const double *p, size_t n, double *out,
                            size_t *idx) {
  double held = 0;
  /* Ranked by p ascending, ties in the members' order (a stable
   * insertion sort: families are small). */
  for (size_t i = 0; i < n; i++) {
    size_t j = i;
    for (; j > 0 && p[idx[j - 1]] > p[i]; j--)
      idx[j] = idx[j - 1];
    idx[j] = i;
  }
  for (size_t k = 0; k < n; k++) {
    double a = family == PROTO_FAMILY_BONFERRONI ? alpha / (double)m
               : family == PROTO_FAMILY_HOLM     ? alpha / (double)(m - k)
                                                 : alpha;
    /* Holm stops at the first that does not decide: it and every later
     * one keep that error. */
    if (family == PROTO_FAMILY_HOLM && (held > 0 || p[idx[k]] > a))
      a = held > 0 ? held : (held = a);
    out[idx[k]] = a;
  }
}

/* The members of workload w's family from s's results and registered
 * pairs. OUT: *out newly allocated, *n; *out NULL when there are none. */
static core_status members_of(const acc *c, analysis_summary *s, size_t w,
                              member **out, size_t *n, core_err *err) {
  const proto_sheet *sh = c->sheet;
  size_t cap = s->n_results + s->n_pairs, k = 0;
  member *v = core_calloc(cap ? cap : 1, sizeof *v);
  if (!v)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t i = 0; i < cap; i++) {
    analysis_result *r =
        i < s->n_results ? &s->results[i] : &s->pairs[i - s->n_results];
    long metric = -1;
    if (i >= s->n_results && sh->rule.pairs != PROTO_PAIRS_ALL)
      break;
    if (r->host || strcmp(r->workload, sh->workloads[w].name) != 0)
      continue;
    for (size_t j = 0; j < sh->workloads[w].n_metrics && metric < 0; j++)
      if (strcmp(sh->workloads[w].metrics[j], r->metric) == 0)
        metric = (long)j;
    v[k] = (member){r,
                    (size_t)metric,
                    (size_t)proto_arm_index(sh, r->arm),
                    (size_t)proto_arm_index(sh, r->reference),
                    1,
                    i};
    k++;
  }
  *out = v;
  *n = k;
  return CORE_OK;
}

/* Workload w's family: every member ranked, given its error, decided
 * again there; the family counts the comparisons the rule makes, those
 * without data too (m). */
static core_status one_family(const acc *c, analysis_summary *s, size_t w,
                              double *const *sorted, double *rep, int threads,
                              core_err *err) {
  const proto_sheet *sh = c->sheet;
  const proto_workload *wl = &sh->workloads[w];
  size_t m = wl->n_metrics * proto_comparisons_per_metric(sh), n = 0;
  double alpha = 1 - proto_look_confidence(sh, wl), *p = NULL, *a = NULL;
  size_t *idx = NULL;
  member *v = NULL;
  core_status st = members_of(c, s, w, &v, &n, err);
  if (st == CORE_OK && (!(p = core_calloc(n + 1, sizeof *p)) ||
                        !(a = core_calloc(n + 1, sizeof *a)) ||
                        !(idx = core_calloc(n + 1, sizeof *idx))))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    st = p_of(c, &v[i], w, sorted, rep, threads, err);
    p[i] = v[i].p;
  }
  if (st == CORE_OK)
    analysis_family_errors(sh->rule.family, alpha, m, p, n, a, idx);
  for (size_t k = 0; k < n && st == CORE_OK; k++) {
    size_t base = c->cell_base[w] + v[k].metric * sh->n_arms;
    v[k].r->family_size = m;
    st = acc_decide(c, v[k].r, w, v[k].metric, 1 - a[k],
                    sorted[base + v[k].ref], sorted[base + v[k].arm], threads,
                    err);
  }
  core_free(v);
  core_free(p);
  core_free(a);
  core_free(idx);
  return st;
}

core_status acc_family(const acc *c, analysis_summary *s,
                       double *const *sorted, int threads, core_err *err) {
  const proto_sheet *sh = c->sheet;
  core_status st = CORE_OK;
  double *rep;
  if (sh->rule.family == PROTO_FAMILY_NONE || sh->hosts.declared)
    return CORE_OK;
  if (!(rep = core_malloc((size_t)sh->rule.resamples * sizeof *rep)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t w = 0; w < sh->n_workloads && st == CORE_OK; w++)
    st = one_family(c, s, w, sorted, rep, threads, err);
  core_free(rep);
  return st;
}
