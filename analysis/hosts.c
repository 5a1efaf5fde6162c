/* hosts.c: the analysis of a sheet with hosts: the sheet's rule on each
 * host's rows, which hosts count (a declared share of their rounds
 * completed), a cross-host estimate (the geometric mean of the counted
 * hosts' ratios, with a two-level bootstrap: hosts, then runs within
 * each) from enough hosts, the cross-host verdict under the declared
 * rule, and hypotheses held only when held on every counted host. Which
 * runs each host has, and how many of its rounds it completed, is the
 * counting rule's (data/count.c), the one every command shares.
 * SPDX-License-Identifier: MIT
 */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_internal.h"

#define OOM(err) core_fail(err, CORE_ENOMEM, "analysis: out of memory")

/* The two-level bootstrap */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of n values drawn with replacement from x (into tmp). */
static double resampled_median(const gsl_rng *r, const double *x, size_t n,
                               double *tmp) {
  for (size_t i = 0; i < n; i++)
    tmp[i] = x[gsl_rng_uniform_int(r, n)];
  return analysis_median_inplace(tmp, n);
}

core_status analysis_bootstrap_hosts(
    const double *const *ref, const size_t *n_ref, const double *const *cand,
    const size_t *n_cand, size_t n_hosts, long resamples, double confidence,
    unsigned long seed, double *lo, double *hi, core_err *err) {
  *lo = *hi = NAN;
  size_t most = 1;
  for (size_t h = 0; h < n_hosts; h++) {
    most = n_ref[h] > most ? n_ref[h] : most;
    most = n_cand[h] > most ? n_cand[h] : most;
    if (!n_ref[h] || !n_cand[h])
      return core_fail(err, CORE_ESTATS, "a host without values");
  }
  double *rep = core_malloc((size_t)resamples * sizeof *rep);
  double *tmp = core_malloc(most * sizeof *tmp);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  core_status st = CORE_OK;
  if (!rep || !tmp || !r) {
    st = OOM(err);
    goto done;
  }
  gsl_rng_set(r, analysis_block_seed(seed ^ 0x686f737473UL, 0));
  for (long b = 0; b < resamples && st == CORE_OK; b++) {
    double logsum = 0;
    for (size_t k = 0; k < n_hosts; k++) {
      size_t h = gsl_rng_uniform_int(r, n_hosts);
      double mr = resampled_median(r, ref[h], n_ref[h], tmp);
      double mc = resampled_median(r, cand[h], n_cand[h], tmp);
      double ratio = mc / mr;
      if (!(ratio > 0) || !isfinite(ratio))
        st = core_fail(err, CORE_ESTATS,
                       "a resampled host ratio is not positive: no CI");
      logsum += log(ratio);
    }
    rep[b] = exp(logsum / (double)n_hosts);
  }
  if (st == CORE_OK) {
    qsort(rep, (size_t)resamples, sizeof *rep, cmp_double);
    double tail = (1 - confidence) / 2;
    *lo = analysis_quantile_sorted(rep, (size_t)resamples, tail);
    *hi = analysis_quantile_sorted(rep, (size_t)resamples, 1 - tail);
  }
done:
  gsl_rng_free(r);
  core_free(rep);
  core_free(tmp);
  return st;
}

/* Each host, run by run */

/* The hosts of a plan with hosts, each with the cells of its runs; host
 * h is the counter's host h (data_run_fate.host). */
struct analysis_across {
  acc *acc;
  size_t n, cap;
};

core_status analysis_across_begin(acc *c, core_err *err) {
  if (!(c->across = core_calloc(1, sizeof *c->across)))
    return OOM(err);
  return CORE_OK;
}

/* Host h's analysis, made (with those before it) on first need. */
static core_status host_acc(acc *c, size_t h, acc **out, core_err *err) {
  struct analysis_across *x = c->across;
  while (x->n <= h) {
    if (x->n == x->cap) {
      acc *na = core_grow(x->acc, &x->cap, x->n, sizeof *na, 8);
      if (!na)
        return OOM(err);
      x->acc = na;
    }
    core_status st = acc_init_cells(&x->acc[x->n], c->sheet, err);
    x->n++; /* freed by analysis_across_free, also half made */
    if (st != CORE_OK)
      return st;
  }
  *out = &x->acc[h];
  return CORE_OK;
}

core_status analysis_across_place(acc *c, acc_strings *strs,
                                  const acc_run *run, const data_run_fate *f,
                                  core_err *err) {
  acc *h;
  core_status st;
  if (f->host < 0)
    return CORE_OK; /* an imported run, or a host not the plan's */
  if ((st = host_acc(c, (size_t)f->host, &h, err)) != CORE_OK)
    return st;
  return acc_place(h, strs, run, f, err);
}

void analysis_across_free(acc *c) {
  struct analysis_across *x = c->across;
  if (!x)
    return;
  c->across = NULL;
  for (size_t i = 0; i < x->n; i++)
    acc_free(&x->acc[i]);
  core_free(x->acc);
  core_free(x);
}

/* Across hosts */

typedef struct across {
  const proto_sheet *sheet;
  char **names; /* borrowed from the counter's host tallies */
  size_t n;
  int sums_version;        /* the sheet version the summaries are of */
  analysis_summary **sums; /* per host */
  analysis_host *hosts;
} across;

static const analysis_result *host_result(const analysis_summary *s,
                                          const char *w, const char *m,
                                          const char *a) {
  for (size_t i = 0; s && i < s->n_results; i++)
    if (!strcmp(s->results[i].workload, w) &&
        !strcmp(s->results[i].metric, m) && !strcmp(s->results[i].arm, a))
      return &s->results[i];
  return NULL;
}

static const analysis_cell *host_cell(const analysis_summary *s, const char *w,
                                      const char *m, const char *a) {
  for (size_t i = 0; i < s->n_cells; i++)
    if (!strcmp(s->cells[i].workload, w) && !strcmp(s->cells[i].metric, m) &&
        !strcmp(s->cells[i].arm, a))
      return &s->cells[i];
  return NULL;
}

/* The cross-host verdict under hosts.across, and why in words. */
static const char *across_verdict(const proto_hosts *rule,
                                  const analysis_result *const *per, size_t k,
                                  double spread, core_buf *why) {
  if ((long)k < rule->min_hosts) {
    core_buf_printf(why,
                    "%zu counted host%s with a ratio; the cross-host "
                    "estimate needs %ld",
                    k, k == 1 ? "" : "s", rule->min_hosts);
    return ANALYSIS_ACROSS_FEW;
  }
  int undecided = 0;
  for (size_t i = 0; i < k; i++) {
    undecided |= !strcmp(per[i]->verdict, "inconclusive");
    for (size_t j = 0; rule->same_verdict && j < i; j++)
      if (strcmp(per[i]->verdict, per[j]->verdict) != 0 &&
          strcmp(per[i]->verdict, "inconclusive") != 0 &&
          strcmp(per[j]->verdict, "inconclusive") != 0) {
        core_buf_printf(why, "%s on %s, %s on %s", per[j]->verdict,
                        per[j]->host, per[i]->verdict, per[i]->host);
        return ANALYSIS_ACROSS_DEPENDS;
      }
  }
  if (spread > rule->max_spread) {
    core_buf_printf(why,
                    "the host ratios spread %.4gx, more than the %gx "
                    "declared",
                    spread, rule->max_spread);
    return ANALYSIS_ACROSS_DEPENDS;
  }
  if (rule->same_verdict && undecided) {
    core_buf_puts(why, "a counted host's verdict is inconclusive");
    return ANALYSIS_ACROSS_UNDECIDED;
  }
  core_buf_printf(why, "%s on every counted host, spread %.4gx within %gx",
                  rule->same_verdict ? per[0]->verdict : "ratios", spread,
                  rule->max_spread);
  return ANALYSIS_ACROSS_CARRIES;
}

/* The counted hosts' values of one side of a comparison: each host's
 * (borrowed from its summary's cells) and all of them pooled. */
typedef struct side {
  const double **v;
  size_t *n;
  double *all;
  size_t n_all;
} side;

static void side_free(side *sd) {
  core_free(sd->v);
  core_free(sd->n);
  core_free(sd->all);
}

static core_status side_gather(const across *x, const size_t *host, size_t k,
                               const char *w, const char *m, const char *a,
                               side *sd, core_err *err) {
  memset(sd, 0, sizeof *sd);
  if (!(sd->v = core_calloc(k ? k : 1, sizeof *sd->v)) ||
      !(sd->n = core_calloc(k ? k : 1, sizeof *sd->n)))
    return OOM(err);
  size_t total = 0;
  for (size_t i = 0; i < k; i++) {
    const analysis_cell *c = host_cell(x->sums[host[i]], w, m, a);
    sd->v[i] = c ? c->values : NULL;
    sd->n[i] = c && c->values ? c->n_valid : 0;
    total += sd->n[i];
  }
  if (!(sd->all = core_malloc((total ? total : 1) * sizeof *sd->all)))
    return OOM(err);
  for (size_t i = 0; i < k; i++) {
    memcpy(sd->all + sd->n_all, sd->v[i], sd->n[i] * sizeof *sd->all);
    sd->n_all += sd->n[i];
  }
  return CORE_OK;
}

/* Notes why a cross-host entry has no CI when a counted host has fewer
 * values in an arm than an interval at the rule's confidence needs
 * (proto_effective_min_n, as for each host's own): 1 then, else 0. */
static int few_on_a_host(const across *x, const analysis_result *const *per,
                         const size_t *host, size_t k, analysis_result *r) {
  const proto_rule *rule = &x->sheet->rule;
  long need = proto_effective_min_n(rule, rule->confidence);
  for (size_t i = 0; i < k; i++) {
    const analysis_result *p = per[i];
    if ((long)p->n >= need && (long)p->n_reference >= need)
      continue;
    r->note = core_asprintf("no CI across hosts: %s has %zu value%s for %s "
                            "and %zu for %s; a %.4g%% interval needs at "
                            "least %ld per arm on every counted host",
                            x->hosts[host[i]].name, p->n, p->n == 1 ? "" : "s",
                            p->arm, p->n_reference, p->reference,
                            rule->confidence * 100, need);
    return 1;
  }
  return 0;
}

/* The estimate, its CI and the verdict of one cross-host entry. */
static core_status estimate(const across *x, analysis_result *r,
                            const analysis_result *const *per,
                            const size_t *host, size_t k, core_err *err) {
  const proto_sheet *sh = x->sheet;
  double logsum = 0, lo = INFINITY, hi = 0;
  int worse = k ? per[0]->worse : 0;
  for (size_t i = 0; i < k; i++) {
    logsum += log(per[i]->ratio);
    lo = per[i]->ratio < lo ? per[i]->ratio : lo;
    hi = per[i]->ratio > hi ? per[i]->ratio : hi;
    r->n += per[i]->n;
    r->n_reference += per[i]->n_reference;
    worse = per[i]->worse == worse ? worse : 0;
  }
  r->ratio = k ? exp(logsum / (double)k) : NAN;
  r->spread = k ? hi / lo : NAN;
  r->ci_low = r->ci_high = NAN;
  r->difference = r->difference_ci_low = r->difference_ci_high = NAN;
  side ref = {0}, cand = {0};
  core_status st =
      side_gather(x, host, k, r->workload, r->metric, r->reference, &ref, err);
  if (st == CORE_OK)
    st = side_gather(x, host, k, r->workload, r->metric, r->arm, &cand, err);
  core_buf why;
  core_buf_init(&why);
  const char *v = across_verdict(&sh->hosts, per, k, r->spread, &why);
  if (st == CORE_OK) {
    r->median = analysis_median(cand.all, cand.n_all);
    r->median_reference = analysis_median(ref.all, ref.n_all);
    r->difference = r->median - r->median_reference;
  }
  int few =
      (long)k >= sh->hosts.min_hosts && few_on_a_host(x, per, host, k, r);
  if (few && !r->note && st == CORE_OK)
    st = OOM(err);
  if (st == CORE_OK && (long)k >= sh->hosts.min_hosts && !few) {
    core_err berr = {0};
    core_status bs = analysis_bootstrap_hosts(
        (const double *const *)ref.v, ref.n, (const double *const *)cand.v,
        cand.n, k, sh->rule.resamples, sh->rule.confidence, r->seed,
        &r->ci_low, &r->ci_high, &berr);
    if (bs == CORE_ESTATS)
      r->note = core_strdup(berr.msg);
    else if (bs != CORE_OK)
      st = bs, *err = berr;
  } else if ((long)k < sh->hosts.min_hosts) {
    r->note = core_asprintf("too few counted hosts for a cross-host CI (%zu "
                            "of %ld)",
                            k, sh->hosts.min_hosts);
  }
  side_free(&ref);
  side_free(&cand);
  r->worse = strcmp(v, ANALYSIS_ACROSS_CARRIES) == 0 ? worse : 0;
  r->verdict = core_strdup(v);
  r->rule_verdict = core_strdup(v);
  r->why = why.oom ? NULL : core_buf_steal(&why);
  core_buf_free(&why);
  if (st == CORE_OK && (!r->verdict || !r->rule_verdict || !r->why))
    st = OOM(err);
  return st;
}

/* One cross-host entry for workload w, metric m, arm a. */
static core_status cross_entry(const across *x, const char *w, const char *m,
                               const char *a, analysis_result *r,
                               core_err *err) {
  const analysis_result **per = core_calloc(x->n + 1, sizeof *per);
  size_t *host = core_calloc(x->n + 1, sizeof *host), k = 0;
  if (!per || !host) {
    core_free(per);
    core_free(host);
    return OOM(err);
  }
  for (size_t h = 0; h < x->n; h++) {
    const analysis_result *hr = host_result(x->sums[h], w, m, a);
    if (x->hosts[h].counted && hr && hr->ratio > 0 && isfinite(hr->ratio)) {
      per[k] = hr;
      host[k++] = h;
    }
  }
  memset(r, 0, sizeof *r);
  r->across = 1;
  r->hosts_counted = k;
  r->workload = core_strdup(w);
  r->metric = core_strdup(m);
  r->arm = core_strdup(a);
  r->reference = core_strdup(x->sheet->arms[x->sheet->reference].name);
  r->kind = proto_metric_kind_of(x->sheet, m);
  r->higher_better = proto_metric_higher_better(x->sheet, m);
  r->seed = analysis_comparison_seed(x->sheet->rule.seed, w, m, a);
  core_status st = !r->workload || !r->metric || !r->arm || !r->reference
                       ? OOM(err)
                       : estimate(x, r, per, host, k, err);
  core_free(per);
  core_free(host);
  return st;
}

/* The summary */

/* The cross-host entries, in the sheet's order, for every comparison a
 * host has; each host's own entries move to s->host_results. */
static core_status merge_results(across *x, analysis_summary *s,
                                 core_err *err) {
  const proto_sheet *sh = x->sheet;
  size_t cap = 0, per_cap = 0;
  for (size_t h = 0; h < x->n; h++)
    per_cap += x->sums[h]->n_results;
  for (size_t w = 0; w < sh->n_workloads; w++)
    cap += sh->workloads[w].n_metrics * sh->n_arms;
  analysis_result *v = core_calloc(cap ? cap : 1, sizeof *v);
  analysis_result *hv = core_calloc(per_cap ? per_cap : 1, sizeof *hv);
  size_t n = 0, hn = 0;
  core_status st = v && hv ? CORE_OK : OOM(err);
  for (size_t w = 0; w < sh->n_workloads && st == CORE_OK; w++)
    for (size_t m = 0; m < sh->workloads[w].n_metrics && st == CORE_OK; m++)
      for (size_t a = 0; a < sh->n_arms && st == CORE_OK; a++) {
        const char *wn = sh->workloads[w].name,
                   *mn = sh->workloads[w].metrics[m], *an = sh->arms[a].name;
        int any = 0;
        for (size_t h = 0; h < x->n && !any; h++)
          any = host_result(x->sums[h], wn, mn, an) != NULL;
        if (a != sh->reference && any)
          st = cross_entry(x, wn, mn, an, &v[n++], err);
      }
  for (size_t h = 0; h < x->n && st == CORE_OK; h++) {
    analysis_summary *hs = x->sums[h];
    for (size_t i = 0; i < hs->n_results; i++) {
      hv[hn] = hs->results[i];
      memset(&hs->results[i], 0, sizeof hs->results[i]);
      if (!(hv[hn++].host = core_strdup(x->names[h])))
        st = OOM(err);
    }
  }
  /* The analysis of every host's rows together goes: it mixes hosts. */
  acc_results_free(s->results, s->n_results);
  s->results = v;
  s->n_results = n;
  s->host_results = hv;
  s->n_host_results = hn;
  return st;
}

/* A hypothesis across hosts: held only when held on every counted host
 * (and there are enough of them), not held when not held on one. */
static core_status overall(const across *x, size_t i, analysis_hypothesis *o,
                           core_err *err) {
  const analysis_hypothesis *any = NULL;
  size_t counted = 0, held = 0;
  core_buf why;
  core_buf_init(&why);
  o->outcome = PROTO_INCONCLUSIVE;
  for (size_t h = 0; h < x->n; h++) {
    const analysis_hypothesis *hh = &x->sums[h]->hypotheses[i];
    any = hh;
    if (!x->hosts[h].counted)
      continue;
    counted++;
    held += hh->outcome == PROTO_HELD;
    core_buf_printf(&why, "%s%s on %s", why.len ? "; " : "",
                    proto_outcome_word(hh->outcome), x->names[h]);
    if (hh->outcome == PROTO_NOT_HELD)
      o->outcome = PROTO_NOT_HELD;
  }
  if (o->outcome != PROTO_NOT_HELD && counted &&
      (long)counted >= x->sheet->hosts.min_hosts && held == counted)
    o->outcome = PROTO_HELD;
  if ((long)counted < x->sheet->hosts.min_hosts)
    core_buf_printf(&why, "%s%zu counted host%s, %ld needed to hold",
                    why.len ? "; " : "", counted, counted == 1 ? "" : "s",
                    x->sheet->hosts.min_hosts);
  o->id = core_strdup(any->id);
  o->says = core_strdup(any->says);
  o->claim = core_strdup(any->claim);
  /* A reason cut short by out of memory is an error, not an empty one. */
  int cut = why.oom;
  o->reason = cut ? NULL : core_buf_steal(&why);
  if (!o->reason && !cut)
    o->reason = core_strdup("");
  core_buf_free(&why);
  return o->id && o->says && o->claim && o->reason ? CORE_OK : OOM(err);
}

static core_status merge_hypotheses(across *x, analysis_summary *s,
                                    core_err *err) {
  size_t nh = x->sheet->n_hypotheses;
  analysis_hypothesis *v = core_calloc(nh + 1, sizeof *v);
  analysis_hypothesis *hv = core_calloc(nh * x->n + 1, sizeof *hv);
  size_t n = 0, hn = 0;
  core_status st = v && hv ? CORE_OK : OOM(err);
  for (size_t i = 0; i < nh && st == CORE_OK && x->n; i++)
    st = overall(x, i, &v[n++], err);
  for (size_t h = 0; h < x->n && st == CORE_OK; h++)
    for (size_t i = 0; i < x->sums[h]->n_hypotheses; i++) {
      hv[hn] = x->sums[h]->hypotheses[i];
      memset(&x->sums[h]->hypotheses[i], 0, sizeof hv[hn]);
      if (!(hv[hn++].host = core_strdup(x->names[h])))
        st = OOM(err);
    }
  acc_hypotheses_free(s->hypotheses, s->n_hypotheses);
  s->hypotheses = v;
  s->n_hypotheses = n;
  s->host_hypotheses = hv;
  s->n_host_hypotheses = hn;
  return st;
}

/* Each host's summary under its tallies and status from the counter; a
 * host counts with the declared share of its rounds completed. */
static core_status each_host(acc *c, const analysis_stream *st, across *x,
                             data_host_tally *ht, int threads, core_err *err) {
  const proto_hosts *h = &x->sheet->hosts;
  for (size_t i = 0; i < x->n; i++) {
    analysis_host *ah = &x->hosts[i];
    acc *hc;
    core_status rc;
    if ((rc = host_acc(c, i, &hc, err)) != CORE_OK)
      return rc;
    if (!(ah->name = core_strdup(ht[i].name)))
      return OOM(err);
    ah->rounds_done = ht[i].rounds_done;
    ah->rounds_planned = ht[i].rounds_planned;
    ah->status = ht[i].status;
    /* The host's tallies, as the rule made them, go to its cells. */
    data_tally_free(hc->tallies, hc->n_tallies);
    hc->tallies = ht[i].tallies;
    hc->n_tallies = ht[i].n_tallies;
    hc->status = ht[i].status;
    ht[i].tallies = NULL; /* hc's now */
    ht[i].n_tallies = 0;
    if ((rc = acc_summary(hc, st, x->sheet->sha256, x->sums_version, threads,
                          1, &x->sums[i], err)) != CORE_OK)
      return rc;
    ah->counted = ah->rounds_planned > 0 &&
                  (double)ah->rounds_done >=
                      h->min_completed * (double)ah->rounds_planned - 1e-9;
  }
  return CORE_OK;
}

core_status analysis_across_end(acc *c, const analysis_stream *st, int threads,
                                analysis_summary *s, core_err *err) {
  const proto_sheet *sheet = c->sheet;
  data_host_tally *ht = NULL;
  size_t nh = 0;
  core_status rc = data_counter_hosts(c->counter, &ht, &nh, err);
  across x = {.sheet = sheet, .n = nh, .sums_version = s->sheet_version};
  size_t k = nh ? nh : 1;
  if (rc == CORE_OK && (!(x.names = core_calloc(k, sizeof *x.names)) ||
                        !(x.sums = core_calloc(k, sizeof *x.sums)) ||
                        !(x.hosts = core_calloc(k, sizeof *x.hosts))))
    rc = OOM(err);
  for (size_t i = 0; rc == CORE_OK && i < nh; i++)
    x.names[i] = ht[i].name;
  if (rc == CORE_OK)
    rc = each_host(c, st, &x, ht, threads, err);
  if (rc == CORE_OK)
    rc = merge_results(&x, s, err);
  if (rc == CORE_OK)
    rc = merge_hypotheses(&x, s, err);
  s->across = 1;
  s->same_verdict = sheet->hosts.same_verdict;
  s->max_spread = sheet->hosts.max_spread;
  s->min_completed = sheet->hosts.min_completed;
  s->min_hosts = sheet->hosts.min_hosts;
  s->hosts = x.hosts;
  s->n_hosts = x.hosts ? x.n : 0;
  for (size_t i = 0; x.sums && i < x.n; i++)
    analysis_summary_free(x.sums[i]);
  core_free(x.sums);
  core_free(x.names);
  data_host_tallies_free(ht, nh);
  return rc;
}
