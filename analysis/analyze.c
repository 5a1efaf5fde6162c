/* analyze.c: from frozen rows to comparisons, verdicts and hypotheses,
 * under the current sheet and, when an amendment came after data, under
 * the registered one too.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_internal.h"

/* {==== Verdicts and claims ==== */

const char *analysis_verdict(const proto_rule *rule, double ratio,
                             double ci_low, double ci_high) {
  if (isnan(ratio) || isnan(ci_low) || isnan(ci_high))
    return "inconclusive";
  for (size_t i = 0; i < rule->n_verdicts; i++) {
    const proto_verdict_rule *v = &rule->verdicts[i];
    /* Boundaries as documented in proto.h: strict for excludes, above and
     * below; inclusive for within. */
    if (v->has_ci_excludes &&
        !(ci_low > v->ci_excludes || ci_high < v->ci_excludes))
      continue;
    if (v->has_ratio_above && !(ratio > v->ratio_above))
      continue;
    if (v->has_ratio_below && !(ratio < v->ratio_below))
      continue;
    if (v->has_ci_within &&
        !(v->ci_within[0] <= ci_low && ci_high <= v->ci_within[1]))
      continue;
    return v->name;
  }
  return "inconclusive";
}

proto_outcome analysis_claim_outcome(const proto_hypothesis *h,
                                     const analysis_result *r,
                                     const char *workload, const char *metric,
                                     const char *arm, char **reason) {
  if (!r || isnan(r->ci_low) || isnan(r->ci_high)) {
    *reason =
        core_asprintf("no valid data for %s/%s/%s", workload, metric, arm);
    return PROTO_INCONCLUSIVE;
  }
  switch (h->kind) {
  case PROTO_CLAIM_AT_LEAST:
    if (r->ci_low >= h->x) {
      *reason =
          core_asprintf("%s: CI low end %.6g >= %g", arm, r->ci_low, h->x);
      return PROTO_HELD;
    }
    if (r->ci_high < h->x) {
      *reason =
          core_asprintf("%s: CI high end %.6g < %g", arm, r->ci_high, h->x);
      return PROTO_NOT_HELD;
    }
    *reason = core_asprintf("%s: CI [%.6g, %.6g] contains %g", arm, r->ci_low,
                            r->ci_high, h->x);
    return PROTO_INCONCLUSIVE;
  case PROTO_CLAIM_BELOW:
    if (r->ci_high < h->x) {
      *reason =
          core_asprintf("%s: CI high end %.6g < %g", arm, r->ci_high, h->x);
      return PROTO_HELD;
    }
    if (r->ci_low >= h->x) {
      *reason =
          core_asprintf("%s: CI low end %.6g >= %g", arm, r->ci_low, h->x);
      return PROTO_NOT_HELD;
    }
    *reason = core_asprintf("%s: CI [%.6g, %.6g] contains %g", arm, r->ci_low,
                            r->ci_high, h->x);
    return PROTO_INCONCLUSIVE;
  case PROTO_CLAIM_VERDICT_IS: {
    const char *want = h->verdict ? h->verdict : "";
    if (strcmp(r->verdict, want) == 0) {
      *reason =
          core_asprintf("%s: verdict %s (ratio %.6g, CI [%.6g, %.6g])", arm,
                        r->verdict, r->ratio, r->ci_low, r->ci_high);
      return PROTO_HELD;
    }
    *reason =
        core_asprintf("%s: verdict %s, not %s (ratio %.6g, CI [%.6g, %.6g])",
                      arm, r->verdict, want, r->ratio, r->ci_low, r->ci_high);
    /* An undecided comparison neither supports nor refutes the claim. */
    return strcmp(r->verdict, "inconclusive") == 0 ? PROTO_INCONCLUSIVE
                                                   : PROTO_NOT_HELD;
  }
  case PROTO_CLAIM_FUNCTION:
  default:
    *reason = core_strdup("not a per-arm claim");
    return PROTO_INCONCLUSIVE;
  }
}

/* }==== */

/* {==== Row classification ==== */

/* What one row is, for one analysis. */
typedef struct row_class {
  int counts;     /* 1: a value that enters the comparison */
  int superseded; /* 1: not counted because an amendment superseded it */
  char *reason;   /* why it does not count (owned), NULL when it counts
                     or when the row is not about this sheet at all */
} row_class;

typedef struct ctx {
  const proto_sheet *sheet;   /* structure, rule and hypotheses */
  const proto_sheet *amended; /* whose amendments supersede; NULL: none */
  size_t amend_base;          /* amendments already in version 0 */
  const data_experiment *exp; /* the chain, or NULL */
  const data_rowset *rows;
  int threads;
  row_class *cls;
} ctx;

/* The version (>= 1) of the first amendment after the row's version that
 * supersedes the row's workload, or 0; *why is its reason. The chain of
 * the experiment says it directly; without one (tests), version N records
 * amendment amend_base + N - 1 of the sheet (prereg amend adds exactly
 * one). */
static int superseding_version(const ctx *c, const data_row *r,
                               const char **why) {
  const proto_sheet *s = c->amended;
  if (!s)
    return 0;
  if (c->exp && c->exp->n_versions > 0) {
    for (size_t i = 0; i < c->exp->n_versions; i++) {
      const data_version *v = &c->exp->versions[i];
      if (v->number <= r->sheet_version)
        continue;
      for (size_t k = 0; k < v->n_supersedes; k++)
        if (strcmp(v->supersedes[k], r->workload) == 0) {
          *why = v->why;
          return v->number;
        }
    }
    return 0;
  }
  for (size_t i = c->amend_base; i < s->n_amendments; i++) {
    int version = (int)(i - c->amend_base + 1);
    if (version <= r->sheet_version)
      continue;
    for (size_t k = 0; k < s->amendments[i].n_supersedes; k++)
      if (strcmp(s->amendments[i].supersedes[k], r->workload) == 0) {
        *why = s->amendments[i].why;
        return version;
      }
  }
  return 0;
}

static core_status classify(ctx *c, core_err *err) {
  const data_rowset *rs = c->rows;
  c->cls = core_calloc(rs->n ? rs->n : 1, sizeof *c->cls);
  if (!c->cls)
    return core_fail(err, CORE_ENOMEM, "analysis: out of memory");
  for (size_t i = 0; i < rs->n; i++) {
    const data_row *r = &rs->rows[i];
    row_class *k = &c->cls[i];
    const char *why = NULL;
    long w = proto_workload_index(c->sheet, r->workload);
    int version;
    if (w < 0) {
      k->reason = core_asprintf("workload %s is not in this version of the "
                                "sheet",
                                r->workload);
    } else if (proto_arm_index(c->sheet, r->arm) < 0) {
      k->reason =
          core_asprintf("arm %s is not in this version of the sheet", r->arm);
    } else if (r->metric && r->metric[0] &&
               !proto_workload_has_metric(&c->sheet->workloads[w],
                                          r->metric)) {
      k->reason = core_asprintf("metric %s is not declared for %s", r->metric,
                                r->workload);
    } else if ((version = superseding_version(c, r, &why)) > 0) {
      k->superseded = 1;
      k->reason = core_asprintf("superseded by amendment %d: %s", version,
                                why ? why : "");
    } else if (!r->valid) {
      k->reason =
          core_strdup(r->reason && r->reason[0] ? r->reason : "invalid");
    } else if (!r->has_value) {
      k->reason = core_strdup("no value recorded");
    } else if (!r->source || (strcmp(r->source, "run") != 0 &&
                              strcmp(r->source, "import") != 0)) {
      k->reason =
          core_asprintf("unknown source '%s'", r->source ? r->source : "");
    } else {
      k->counts = 1;
      continue;
    }
    if (!k->reason)
      return core_fail(err, CORE_ENOMEM, "analysis: out of memory");
  }
  return CORE_OK;
}

/* A run's identity, for counting runs rather than rows (a run has one row
 * per metric). */
static char *run_key(const data_row *r) {
  if (r->run_id && r->run_id[0])
    return core_asprintf("%s\x1f%s", r->batch ? r->batch : "", r->run_id);
  return core_asprintf("%s\x1f#%ld", r->batch ? r->batch : "", r->seq);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Distinct strings in keys[0..n) (sorted in place). */
static size_t count_distinct(char **keys, size_t n) {
  size_t d = 0;
  qsort(keys, n, sizeof *keys, cmp_str);
  for (size_t i = 0; i < n; i++)
    if (i == 0 || strcmp(keys[i], keys[i - 1]) != 0)
      d++;
  return d;
}

static void free_keys(char **keys, size_t n) {
  for (size_t i = 0; i < n; i++)
    core_free(keys[i]);
}

/* }==== */

/* {==== Summary building ==== */

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
  core_free(r->note);
}

void analysis_summary_free(analysis_summary *s) {
  if (!s)
    return;
  core_free(s->protocol);
  core_free(s->sheet_sha256);
  core_free(s->estimator);
  core_free(s->reference);
  for (size_t i = 0; i < s->n_results; i++)
    free_result(&s->results[i]);
  core_free(s->results);
  for (size_t i = 0; i < s->n_cells; i++) {
    core_free(s->cells[i].workload);
    core_free(s->cells[i].metric);
    core_free(s->cells[i].arm);
  }
  core_free(s->cells);
  for (size_t i = 0; i < s->n_hypotheses; i++) {
    core_free(s->hypotheses[i].id);
    core_free(s->hypotheses[i].says);
    core_free(s->hypotheses[i].reason);
    core_free(s->hypotheses[i].claim);
    core_free(s->hypotheses[i].host);
  }
  core_free(s->hypotheses);
  for (size_t i = 0; i < s->n_hosts; i++)
    core_free(s->hosts[i].name);
  core_free(s->hosts);
  for (size_t i = 0; i < s->n_exclusions; i++) {
    core_free(s->exclusions[i].workload);
    core_free(s->exclusions[i].arm);
    core_free(s->exclusions[i].reason);
  }
  core_free(s->exclusions);
  analysis_summary_free(s->original);
  core_free(s->original_why);
  core_free(s);
}

#define OOM(err) core_fail(err, CORE_ENOMEM, "analysis: out of memory")

/* Values of the rows that count for workload/metric/arm. OUT: *vals newly
 * allocated (NULL when none). */
static core_status gather(const ctx *c, const char *w, const char *m,
                          const char *a, double **vals, size_t *n,
                          core_err *err) {
  size_t k = 0;
  *vals = NULL;
  *n = 0;
  for (size_t i = 0; i < c->rows->n; i++) {
    const data_row *r = &c->rows->rows[i];
    if (c->cls[i].counts && same_str(r->workload, w) &&
        same_str(r->metric, m) && same_str(r->arm, a))
      k++;
  }
  if (k == 0)
    return CORE_OK;
  *vals = core_malloc(k * sizeof **vals);
  if (!*vals)
    return OOM(err);
  for (size_t i = 0; i < c->rows->n; i++) {
    const data_row *r = &c->rows->rows[i];
    if (c->cls[i].counts && same_str(r->workload, w) &&
        same_str(r->metric, m) && same_str(r->arm, a))
      (*vals)[(*n)++] = r->value;
  }
  return CORE_OK;
}

/* Runs of workload/arm that do not count, by superseded or not (rows
 * without a metric belong to every metric of the workload). */
static core_status count_runs(const ctx *c, const char *w, const char *m,
                              const char *a, int superseded, size_t *out,
                              core_err *err) {
  char **keys;
  size_t n = 0;
  *out = 0;
  keys = core_malloc((c->rows->n ? c->rows->n : 1) * sizeof *keys);
  if (!keys)
    return OOM(err);
  for (size_t i = 0; i < c->rows->n; i++) {
    const data_row *r = &c->rows->rows[i];
    const row_class *k = &c->cls[i];
    if (k->counts || !k->reason || k->superseded != superseded)
      continue;
    if (!same_str(r->workload, w) || !same_str(r->arm, a))
      continue;
    if (r->metric && r->metric[0] && strcmp(r->metric, m) != 0)
      continue;
    if (!(keys[n] = run_key(r))) {
      free_keys(keys, n);
      core_free(keys);
      return OOM(err);
    }
    n++;
  }
  *out = count_distinct(keys, n);
  free_keys(keys, n);
  core_free(keys);
  return CORE_OK;
}

static core_status add_cells(ctx *c, analysis_summary *s, core_err *err) {
  const proto_sheet *sh = c->sheet;
  size_t total = 0;
  for (size_t w = 0; w < sh->n_workloads; w++)
    total += sh->workloads[w].n_metrics * sh->n_arms;
  s->cells = core_calloc(total ? total : 1, sizeof *s->cells);
  if (!s->cells)
    return OOM(err);
  for (size_t w = 0; w < sh->n_workloads; w++) {
    const proto_workload *wl = &sh->workloads[w];
    for (size_t m = 0; m < wl->n_metrics; m++)
      for (size_t a = 0; a < sh->n_arms; a++) {
        analysis_cell *cell = &s->cells[s->n_cells++];
        double *v;
        size_t n;
        core_status st;
        cell->workload = core_strdup(wl->name);
        cell->metric = core_strdup(wl->metrics[m]);
        cell->arm = core_strdup(sh->arms[a].name);
        if (!cell->workload || !cell->metric || !cell->arm)
          return OOM(err);
        if ((st = gather(c, wl->name, wl->metrics[m], sh->arms[a].name, &v, &n,
                         err)) != CORE_OK)
          return st;
        cell->n_valid = n;
        cell->median = analysis_median_inplace(v, n);
        core_free(v);
        if ((st = count_runs(c, wl->name, wl->metrics[m], sh->arms[a].name, 0,
                             &cell->n_invalid, err)) != CORE_OK ||
            (st = count_runs(c, wl->name, wl->metrics[m], sh->arms[a].name, 1,
                             &cell->n_superseded, err)) != CORE_OK)
          return st;
        cell->n_planned = wl->runs > 0 ? (size_t)wl->runs : 0;
      }
  }
  return CORE_OK;
}

static core_status add_results(ctx *c, analysis_summary *s, core_err *err) {
  const proto_sheet *sh = c->sheet;
  const proto_arm *ref = &sh->arms[sh->reference];
  size_t total = 0;
  for (size_t w = 0; w < sh->n_workloads; w++)
    total += sh->workloads[w].n_metrics * sh->n_arms;
  s->results = core_calloc(total ? total : 1, sizeof *s->results);
  if (!s->results)
    return OOM(err);
  for (size_t w = 0; w < sh->n_workloads; w++) {
    const proto_workload *wl = &sh->workloads[w];
    for (size_t m = 0; m < wl->n_metrics; m++) {
      double *rv = NULL;
      size_t rn = 0;
      core_status st =
          gather(c, wl->name, wl->metrics[m], ref->name, &rv, &rn, err);
      if (st != CORE_OK)
        return st;
      for (size_t a = 0; a < sh->n_arms && rn > 0; a++) {
        double *cv;
        size_t cn;
        analysis_result *r;
        core_err berr = {0};
        if (a == sh->reference)
          continue;
        if ((st = gather(c, wl->name, wl->metrics[m], sh->arms[a].name, &cv,
                         &cn, err)) != CORE_OK) {
          core_free(rv);
          return st;
        }
        if (cn == 0)
          continue;
        r = &s->results[s->n_results++];
        r->workload = core_strdup(wl->name);
        r->metric = core_strdup(wl->metrics[m]);
        r->arm = core_strdup(sh->arms[a].name);
        r->reference = core_strdup(ref->name);
        r->n = cn;
        r->n_reference = rn;
        /* The bootstrap sorts its own copies: reordering is harmless. */
        r->median = analysis_median_inplace(cv, cn);
        r->median_reference = analysis_median_inplace(rv, rn);
        r->ratio = r->median / r->median_reference;
        r->ci_low = r->ci_high = NAN;
        r->seed = analysis_comparison_seed(sh->rule.seed, wl->name,
                                           wl->metrics[m], sh->arms[a].name);
        if (r->seed == ANALYSIS_SEED_NONE) {
          core_free(cv);
          core_free(rv);
          return OOM(err);
        }
        if (r->median_reference == 0.0) {
          r->ratio = NAN;
          r->note = core_strdup("the reference median is 0: no ratio");
        } else {
          st = analysis_bootstrap_ratio(
              rv, rn, cv, cn, sh->rule.resamples, sh->rule.confidence, r->seed,
              c->threads, &r->ci_low, &r->ci_high, NULL, &berr);
          if (st == CORE_ESTATS) {
            /* Undefined, not broken: the comparison stays, undecided. */
            r->note = core_strdup(berr.msg);
          } else if (st != CORE_OK) {
            core_free(cv);
            core_free(rv);
            *err = berr;
            return st;
          }
        }
        core_free(cv);
        r->verdict = core_strdup(
            analysis_verdict(&sh->rule, r->ratio, r->ci_low, r->ci_high));
        if (!r->workload || !r->metric || !r->arm || !r->reference ||
            !r->verdict) {
          core_free(rv);
          return OOM(err);
        }
      }
      core_free(rv);
    }
  }
  return CORE_OK;
}

static const analysis_result *find_result(const analysis_summary *s,
                                          const char *w, const char *m,
                                          const char *a) {
  for (size_t i = 0; i < s->n_results; i++)
    if (same_str(s->results[i].workload, w) &&
        same_str(s->results[i].metric, m) && same_str(s->results[i].arm, a))
      return &s->results[i];
  return NULL;
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
    core_buf_printf(&b, " against %s on %s/%s", sh->arms[sh->reference].name,
                    h->workload ? h->workload : "?",
                    h->metric ? h->metric : "?");
  }
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return core_buf_steal(&b);
}

/* A function claim sees every result of this analysis. */
static core_status eval_function(const ctx *c, const analysis_summary *s,
                                 const proto_hypothesis *h,
                                 analysis_hypothesis *out, core_err *err) {
  proto_result_view *views =
      core_calloc(s->n_results ? s->n_results : 1, sizeof *views);
  core_err ferr = {0};
  core_status st;
  if (!views)
    return OOM(err);
  for (size_t i = 0; i < s->n_results; i++) {
    const analysis_result *r = &s->results[i];
    views[i].workload = r->workload;
    views[i].metric = r->metric;
    views[i].arm = r->arm;
    views[i].verdict = r->verdict;
    views[i].ratio = r->ratio;
    views[i].ci_low = r->ci_low;
    views[i].ci_high = r->ci_high;
    views[i].median = r->median;
    views[i].median_reference = r->median_reference;
    views[i].n = r->n;
    views[i].n_reference = r->n_reference;
  }
  st = proto_eval_claim(c->sheet, h, views, s->n_results, &out->outcome,
                        &out->reason, &ferr);
  core_free(views);
  if (st == CORE_ENOMEM)
    return OOM(err);
  if (st != CORE_OK) {
    /* A claim that fails to evaluate decides nothing; say why in the
     * reason rather than losing every other result. */
    out->outcome = PROTO_INCONCLUSIVE;
    out->reason = core_asprintf("the claim's function failed: %s",
                                ferr.msg[0] ? ferr.msg : core_strerror(st));
  }
  return out->reason ? CORE_OK : OOM(err);
}

static core_status add_hypotheses(ctx *c, analysis_summary *s, core_err *err) {
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
      char *reason = NULL;
      proto_outcome oc;
      if (h->n_arms)
        arm = h->arms[k];
      else if (k == sh->reference)
        continue;
      else
        arm = sh->arms[k].name;
      oc = analysis_claim_outcome(h,
                                  find_result(s, h->workload, h->metric, arm),
                                  h->workload ? h->workload : "?",
                                  h->metric ? h->metric : "?", arm, &reason);
      if (!reason) {
        core_buf_free(&why);
        return OOM(err);
      }
      core_buf_printf(&why, "%s%s", shown++ ? "; " : "", reason);
      core_free(reason);
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
 * in the order of the sheet's workloads and arms, then reason. */
typedef struct excl_rec {
  long w, a;
  const char *reason;
  char *key;
  const char *wname, *aname;
} excl_rec;

static int cmp_excl(const void *pa, const void *pb) {
  const excl_rec *x = pa, *y = pb;
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
  return strcmp(x->key, y->key);
}

static core_status add_exclusions(ctx *c, analysis_summary *s, core_err *err) {
  const data_rowset *rs = c->rows;
  excl_rec *recs = core_calloc(rs->n ? rs->n : 1, sizeof *recs);
  size_t n = 0;
  core_status st = CORE_OK;
  if (!recs)
    return OOM(err);
  for (size_t i = 0; i < rs->n; i++) {
    const data_row *r = &rs->rows[i];
    long w, a;
    if (c->cls[i].counts || !c->cls[i].reason)
      continue;
    /* Workloads and arms unknown to the sheet sort last, by name. */
    w = proto_workload_index(c->sheet, r->workload);
    a = proto_arm_index(c->sheet, r->arm);
    recs[n].w = w < 0 ? (long)c->sheet->n_workloads : w;
    recs[n].a = a < 0 ? (long)c->sheet->n_arms : a;
    recs[n].wname = r->workload ? r->workload : "";
    recs[n].aname = r->arm ? r->arm : "";
    recs[n].reason = c->cls[i].reason;
    if (!(recs[n].key = run_key(r))) {
      st = OOM(err);
      goto done;
    }
    n++;
  }
  qsort(recs, n, sizeof *recs, cmp_excl);
  s->exclusions = core_calloc(n ? n : 1, sizeof *s->exclusions);
  if (!s->exclusions) {
    st = OOM(err);
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    analysis_exclusion *e;
    int new_group = i == 0 || recs[i].w != recs[i - 1].w ||
                    recs[i].a != recs[i - 1].a ||
                    strcmp(recs[i].wname, recs[i - 1].wname) != 0 ||
                    strcmp(recs[i].aname, recs[i - 1].aname) != 0 ||
                    strcmp(recs[i].reason, recs[i - 1].reason) != 0;
    if (new_group) {
      e = &s->exclusions[s->n_exclusions++];
      e->workload = core_strdup(recs[i].wname);
      e->arm = core_strdup(recs[i].aname);
      e->reason = core_strdup(recs[i].reason);
      if (!e->workload || !e->arm || !e->reason) {
        st = OOM(err);
        goto done;
      }
      e->runs = 1;
    } else if (strcmp(recs[i].key, recs[i - 1].key) != 0) {
      s->exclusions[s->n_exclusions - 1].runs++;
    }
  }
done:
  for (size_t i = 0; i < n; i++)
    core_free(recs[i].key);
  core_free(recs);
  return st;
}

static core_status analyze_one(ctx *c, const char *sha256, int version,
                               analysis_summary **out, core_err *err) {
  const proto_sheet *sh = c->sheet;
  analysis_summary *s = core_calloc(1, sizeof *s);
  core_status st;
  *out = NULL;
  if (!s)
    return OOM(err);
  s->protocol = core_strdup(sh->id ? sh->id : "");
  s->sheet_sha256 = core_strdup(sha256);
  s->sheet_version = version;
  s->estimator =
      core_strdup(sh->rule.estimator ? sh->rule.estimator : "median");
  s->confidence = sh->rule.confidence;
  s->resamples = sh->rule.resamples;
  s->seed = sh->rule.seed;
  if (sh->n_arms > 0 && sh->reference < sh->n_arms)
    s->reference = core_strdup(sh->arms[sh->reference].name);
  if (!s->protocol || !s->sheet_sha256 || !s->estimator ||
      (sh->n_arms > 0 && !s->reference)) {
    st = OOM(err);
    goto fail;
  }
  if (sh->n_arms == 0 || sh->reference >= sh->n_arms) {
    st = core_fail(err, CORE_EPROTOCOL, "%s: no reference arm",
                   sh->path ? sh->path : "sheet");
    goto fail;
  }
  if ((st = classify(c, err)) != CORE_OK ||
      (st = add_cells(c, s, err)) != CORE_OK ||
      (st = add_results(c, s, err)) != CORE_OK ||
      (st = add_hypotheses(c, s, err)) != CORE_OK ||
      (st = add_exclusions(c, s, err)) != CORE_OK)
    goto fail;
  *out = s;
  goto done;
fail:
  analysis_summary_free(s);
done:
  if (c->cls)
    for (size_t i = 0; i < c->rows->n; i++)
      core_free(c->cls[i].reason);
  core_free(c->cls);
  c->cls = NULL;
  return st;
}

/* }==== */

/* {==== When the original rule is also given ==== */

/* What changed between two parsed versions, in words ("" when nothing the
 * analysis depends on). */
static void describe_change(const proto_sheet *before,
                            const proto_sheet *after, core_buf *b) {
  int rule = !proto_same_rule(&before->rule, &after->rule);
  int hyp = !proto_same_hypotheses(before, after);
  if (rule && hyp)
    core_buf_puts(b, "changed the rule and the hypotheses");
  else if (rule)
    core_buf_puts(b, "changed the rule");
  else if (hyp)
    core_buf_puts(b, "changed the hypotheses");
}

/* Why the original analysis is needed, or NULL (and *need 0) when it is
 * not: an amendment filed after data existed that changed the rule or the
 * hypotheses, or superseded rows. */
static core_status original_reason(const proto_sheet *sheet,
                                   const proto_sheet *orig,
                                   const data_experiment *exp,
                                   size_t amend_base, char **why,
                                   core_err *err) {
  core_buf b;
  *why = NULL;
  core_buf_init(&b);
  if (exp) {
    for (size_t i = 0; i < exp->n_versions; i++) {
      const data_version *v = &exp->versions[i];
      size_t ai = amend_base + (size_t)v->number - 1;
      size_t mark = b.len;
      core_buf change;
      if (v->number < 1 || v->rows_when_filed <= 0)
        continue;
      core_buf_init(&change);
      {
        core_err lerr = {0};
        proto_sheet *prev = data_load_version(exp, v->number - 1, &lerr);
        proto_sheet *cur =
            prev ? data_load_version(exp, v->number, &lerr) : NULL;
        if (prev && cur) {
          describe_change(prev, cur, &change);
        } else if (orig) {
          /* The frozen copies could not be read: compare the ends of the
           * chain instead, which can only over-report. */
          describe_change(orig, sheet, &change);
        }
        proto_sheet_free(prev);
        proto_sheet_free(cur);
      }
      if (v->n_supersedes > 0) {
        core_buf_printf(&change, "%ssuperseded earlier rows of ",
                        change.len ? " and " : "");
        for (size_t k = 0; k < v->n_supersedes; k++)
          core_buf_printf(&change, "%s%s", k ? ", " : "", v->supersedes[k]);
      } else if (ai < sheet->n_amendments &&
                 sheet->amendments[ai].n_supersedes > 0) {
        const proto_amendment *am = &sheet->amendments[ai];
        core_buf_printf(&change, "%ssuperseded earlier rows of ",
                        change.len ? " and " : "");
        for (size_t k = 0; k < am->n_supersedes; k++)
          core_buf_printf(&change, "%s%s", k ? ", " : "", am->supersedes[k]);
      }
      if (change.len)
        core_buf_printf(&b, "%samendment %d, filed when %ld runs existed, %s",
                        mark ? "; " : "", v->number, v->rows_when_filed,
                        change.data);
      if (change.oom)
        b.oom = 1;
      core_buf_free(&change);
    }
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

/* }==== */

core_status analysis_plain(const proto_sheet *sheet,
                           const data_experiment *exp, const data_rowset *rows,
                           int threads, analysis_summary **out,
                           core_err *err) {
  ctx c = {.sheet = sheet,
           .amended = sheet,
           .exp = exp,
           .rows = rows,
           .threads = threads};
  int version = exp && exp->n_versions
                    ? exp->versions[exp->n_versions - 1].number
                    : (int)sheet->n_amendments;
  if (exp && exp->n_versions && (size_t)version <= sheet->n_amendments)
    c.amend_base = sheet->n_amendments - (size_t)version;
  return analyze_one(&c, sheet->sha256, version, out, err);
}

core_status analysis_counted_values(const proto_sheet *sheet,
                                    const data_experiment *exp,
                                    const data_rowset *rows, const char *w,
                                    const char *m, const char *a,
                                    double **vals, size_t *n, core_err *err) {
  ctx c = {.sheet = sheet, .amended = sheet, .exp = exp, .rows = rows};
  if (exp && exp->n_versions) {
    size_t v = (size_t)exp->versions[exp->n_versions - 1].number;
    if (v <= sheet->n_amendments)
      c.amend_base = sheet->n_amendments - v;
  }
  core_status st = classify(&c, err);
  if (st == CORE_OK)
    st = gather(&c, w, m, a, vals, n, err);
  for (size_t i = 0; c.cls && i < rows->n; i++)
    core_free(c.cls[i].reason);
  core_free(c.cls);
  return st;
}

core_status analysis_run(const proto_sheet *sheet, const proto_sheet *orig,
                         const data_experiment *exp, const data_rowset *rows,
                         int threads, analysis_summary **out, core_err *err) {
  ctx c;
  data_rowset empty = {0};
  analysis_summary *s = NULL;
  char *why = NULL;
  int version = 0;
  core_status st;
  *out = NULL;
  memset(&c, 0, sizeof c);
  c.sheet = sheet;
  c.amended = sheet;
  c.rows = rows ? rows : &empty;
  c.threads = threads;
  c.exp = exp;
  /* Version N records amendment base + N - 1: base is what the registered
   * sheet already listed (normally none). orig may be the sheet itself
   * (callers without a registered copy), which says nothing. */
  if (exp && exp->n_versions > 0) {
    version = exp->versions[exp->n_versions - 1].number;
    if ((size_t)version <= sheet->n_amendments)
      c.amend_base = sheet->n_amendments - (size_t)version;
  } else {
    c.amend_base = orig && orig != sheet ? orig->n_amendments : 0;
    if (c.amend_base > sheet->n_amendments)
      c.amend_base = sheet->n_amendments;
    version = (int)(sheet->n_amendments - c.amend_base);
  }

  if ((st = analyze_one(&c, sheet->sha256, version, &s, err)) != CORE_OK)
    return st;
  if ((st = original_reason(sheet, orig, exp, c.amend_base, &why, err)) !=
      CORE_OK)
    goto fail;
  if (why) {
    ctx o = c;
    o.sheet = orig ? orig : sheet;
    o.amended = NULL; /* the registered plan knew of no supersession */
    if ((st = analyze_one(&o, o.sheet->sha256, 0, &s->original, err)) !=
        CORE_OK)
      goto fail;
    s->original_why = why;
    why = NULL;
  }
  if (sheet->hosts.declared &&
      (st = analysis_across(sheet, exp, c.rows, threads, s, err)) != CORE_OK)
    goto fail;
  *out = s;
  return CORE_OK;
fail:
  core_free(why);
  analysis_summary_free(s);
  return st;
}
