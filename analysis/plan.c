/* plan.c: how often the registered rule decides at each candidate size,
 * simulated from a pilot's values: each simulated experiment's interval
 * comes from the exact law of the resampled median (no resampling), its
 * verdict from the analysis's own verdict code.
 * SPDX-License-Identifier: MIT
 *
 * One simulated experiment of a comparison at size n:
 * 1. n values of the reference drawn with replacement from its pilot
 *    values (sorted ascending first, so the rows' order does not matter),
 *    value = pilot[gsl_rng_uniform_int(r, N)], then n of the arm alike
 *    (in the null simulations, of each comparison alone and of a
 *    family, both arms from the reference's values smoothed);
 * 2. the ratio = median(arm) / median(reference), as analyze computes it;
 * 3. the interval: the type-7 percentile interval analyze's bootstrap
 *    converges to as its resamples grow, i.e. the quantiles at
 *    a = (1 - confidence) / 2 and 1 - a of the exact law of
 *    median(arm resample) / median(reference resample), each median's law
 *    from the rank tables of bootstrap.c (analysis_median_law). Only
 *    where the interval's ends lie against each bound of the rule matters
 *    to the verdict, and that is exact: with H(c) = P(ratio <= c) and
 *    H(c-) = P(ratio < c), the quantile at u is <= c exactly when
 *    H(c) >= u and < c exactly when H(c-) >= u;
 * 4. the verdict: analysis_verdict_rule on the ratio and on interval ends
 *    placed exactly so against every bound (equal to a bound, or strictly
 *    between the same two), or "insufficient data" when n is below the
 *    rule's min_n or the level's (proto_effective_min_n).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>

#include "analysis/analysis_internal.h"
#include "core/limits.h"

/* One value of a resample median's law. */
typedef struct atom {
  double v, w;
} atom;

/* A simulation to run: one cell (or a workload and metric's reference
 * alone) at one size. */
typedef struct task {
  size_t cell, size; /* size n_sizes: the sequential design */
  /* 1: no difference; 2: cell is a family, no difference; 3: cell is a
   * family, drawn from the pilot; 4: the plausible truths (counts: the
   * decided experiments per truth) */
  int null;
  long *counts; /* n_outcomes slots (a family's: 1, the truths': one each) */
  double *runs; /* the runs per arm its experiments took, summed */
} task;

typedef struct sizelaw {
  size_t n;
  analysis_median_atom *a;
  size_t na;
  size_t *rows; /* n_rows + 1: where each k1's atoms start, then na */
  size_t n_rows;
} sizelaw;

/* The pilot's values of one cell, sorted. */
typedef struct pcell {
  double *ref, *cand;
  size_t n_ref, n_cand;
  const char *workload, *metric, *arm;
  /* What the seeds name: the arm, or for a pair "arm vs reference" (as
   * analyze seeds it), and for its null draws "vs reference". */
  char *key, *null_key;
  /* Per arm, on the log scale: the mean of the pilot's logarithms and
   * the smoothing's spread (draw_smooth). */
  double m_ref, m_cand, h_ref, h_cand;
  /* The plausible truths: per truth, n_ref then n_cand pilot indexes
   * drawn with replacement, and (in spread) the reference's then the
   * arm's factor of spread; NULL when a cell has more than
   * PLAN_TRUTH_MAX_PILOT values (each truth is then the pilot itself). */
  uint32_t *truth;
  double *spread;
} pcell;

/* A workload's family: its comparisons (cells), each drawing its two
 * samples from slots, one per metric and arm, every slot from the
 * reference's values at its metric (no difference anywhere). */
typedef struct family {
  size_t *cells, *slot_ref, *slot_arm, *slot_cell;
  size_t n, n_slots;
  long *any_false; /* per column: experiments with a false verdict */
  /* Drawn from the pilot (each slot its own arm's values, sorted): per
   * slot its values, and per comparison i and column s the experiments
   * in which it decided, at [i * ncol + s]; NULL without a correction. */
  const double **vals;
  size_t *nv;
  long *decided;
} family;

typedef struct ctx {
  const proto_rule *rule;
  family *fams;
  size_t n_fams;
  pcell *cells;
  sizelaw *laws;
  task *tasks;
  size_t n_tasks, n_outcomes;
  long sims;
  size_t n_sizes;      /* fixed sizes: laws[0..n_sizes) */
  const size_t *looks; /* the sequential design: laws[n_sizes + k] */
  size_t n_looks;
  double *bounds; /* the rule's interval bounds, sorted, distinct */
  size_t n_bounds;
  size_t max_pilot; /* the most values of a pilot cell */
  size_t n_truths;  /* plausible truths per comparison */
  long *hits;       /* [cell][size][truth]: its experiments that decided */
  pthread_mutex_t lock;
  size_t next; /* under lock */
} ctx;

typedef struct worker {
  ctx *c;
  gsl_rng *rng;
  double *xr, *xc;
  atom *ar, *ac, *tr, *tc; /* each arm's atoms and merge space */
  size_t *bounds;          /* merge_rows' runs */
  double *dv, *acc;        /* distinct values, atoms summed by value */
  uint32_t *dk;            /* rank -> distinct value */
  size_t *rows2;           /* rows of the summed atoms */
  double *cum;
  double *le, *lt; /* per bound: H(c), H(c-) */
  unsigned *count; /* draws per pilot index (draw) */
  size_t *ir, *ic; /* the pilot indexes drawn in order (sequential) */
  double *sr, *sc; /* smoothed values drawn in order (sequential) */
  int failed;
} worker;

/* The atoms of one k1 are sorted already (x is, and k2 grows): merging
 * the rows pairwise, log2(rows) passes, sorts them all. Returns the
 * array that holds them sorted (a or tmp). */
static atom *merge_rows(atom *a, atom *tmp, const size_t *rows, size_t n_rows,
                        size_t *bounds) {
  memcpy(bounds, rows, (n_rows + 1) * sizeof *bounds);
  while (n_rows > 1) {
    size_t out = 0;
    for (size_t r = 0; r < n_rows; r += 2) {
      size_t i = bounds[r], mid = bounds[r + 1];
      size_t end = r + 2 <= n_rows ? bounds[r + 2] : mid, j = mid, k = i;
      while (i < mid && j < end)
        tmp[k++] = a[j].v < a[i].v ? a[j++] : a[i++];
      while (i < mid)
        tmp[k++] = a[i++];
      while (j < end)
        tmp[k++] = a[j++];
      bounds[out++] = bounds[r];
    }
    bounds[out] = bounds[n_rows];
    n_rows = out;
    atom *t = a;
    a = tmp;
    tmp = t;
  }
  return a;
}

/* One simulated experiment */

/* The distinct values of sorted x (n values) in dv, and for each rank
 * k = 1..n the index of its value in dk[k]; returns how many. */
static size_t distinct(const double *x, size_t n, double *dv, uint32_t *dk) {
  size_t d = 0;
  for (size_t k = 0; k < n; k++) {
    if (d == 0 || x[k] != dv[d - 1])
      dv[d++] = x[k];
    dk[k + 1] = (uint32_t)(d - 1);
  }
  return d;
}

/* The atoms of equal values summed: with a pilot of few values a sample
 * of hundreds has only a few distinct ones, and the (value, value) pairs
 * of the law then number far fewer than its (rank, rank) atoms. Rows of
 * the first value, each sorted by the second. */
static size_t law_by_value(worker *w, const sizelaw *L, size_t d, atom *out,
                           size_t *n_rows) {
  double *sum = w->acc;
  size_t m = 0, odd = L->n % 2, wide = odd ? 1 : d;
  memset(sum, 0, d * wide * sizeof *sum);
  for (size_t i = 0; i < L->na; i++)
    sum[w->dk[L->a[i].k1] * wide + (odd ? 0 : w->dk[L->a[i].k2])] += L->a[i].p;
  *n_rows = 0;
  for (size_t a = 0; a < d; a++) {
    w->rows2[(*n_rows)++] = m;
    for (size_t b = a; b < (odd ? a + 1 : d); b++)
      if (sum[a * wide + (odd ? 0 : b)] > 0.0)
        out[m++] = (atom){a == b ? w->dv[a] : 0.5 * (w->dv[a] + w->dv[b]),
                          sum[a * wide + (odd ? 0 : b)]};
  }
  w->rows2[*n_rows] = m;
  return m;
}

/* The law of the median of a resample of sorted x (n values) as atoms
 * sorted by value, in out or tmp (*sorted says which, *n_out how many);
 * returns their total mass. */
static double law_of(worker *w, const sizelaw *L, const double *x, atom *out,
                     atom *tmp, atom **sorted, size_t *n_out) {
  double total = 0.0;
  size_t d = distinct(x, L->n, w->dv, w->dk), n_rows;
  for (size_t i = 0; i < L->na; i++)
    total += L->a[i].p;
  if (L->n % 2 == 1 || 2 * d * d <= L->na) {
    *n_out = law_by_value(w, L, d, out, &n_rows);
    *sorted = merge_rows(out, tmp, w->rows2, n_rows, w->bounds);
    return total;
  }
  for (size_t i = 0; i < L->na; i++) {
    const analysis_median_atom *m = &L->a[i];
    out[i].v =
        m->k1 == m->k2 ? x[m->k1 - 1] : 0.5 * (x[m->k1 - 1] + x[m->k2 - 1]);
    out[i].w = m->p;
  }
  *n_out = L->na;
  *sorted = merge_rows(out, tmp, L->rows, L->n_rows, w->bounds);
  return total;
}

/* H(c) and H(c-) of cand / ref for every bound, one merge pass each: ref
 * and cand sorted ascending and positive, so cand[j] / ref[i] falls as i
 * grows and the cand atoms at or below the bound only grow. */
static void ratio_cdfs(worker *w, const atom *r, size_t nr, const atom *k,
                       size_t na) {
  const ctx *c = w->c;
  w->cum[0] = 0.0;
  for (size_t j = 0; j < na; j++)
    w->cum[j + 1] = w->cum[j] + k[j].w;
  for (size_t b = 0; b < c->n_bounds; b++) {
    double t = c->bounds[b], le = 0.0, lt = 0.0;
    size_t jle = 0, jlt = 0;
    for (size_t i = 0; i < nr; i++) {
      double a = r[i].v;
      while (jle < na && k[jle].v / a <= t)
        jle++;
      while (jlt < jle && k[jlt].v / a < t)
        jlt++;
      le += r[i].w * w->cum[jle];
      lt += r[i].w * w->cum[jlt];
    }
    w->le[b] = le;
    w->lt[b] = lt;
  }
}

/* An interval end with the quantile's place against every bound: the
 * bound itself when the quantile is it, else a value strictly between
 * the same two bounds. u is already scaled by the law's total mass. */
static double placed_end(const worker *w, double u) {
  const ctx *c = w->c;
  size_t m = c->n_bounds, i = 0;
  if (m == 0)
    return 1.0;
  while (i < m && !(w->le[i] >= u))
    i++;
  if (i == m)
    return c->bounds[m - 1] + fabs(c->bounds[m - 1]) + 1.0;
  if (!(w->lt[i] >= u))
    return c->bounds[i]; /* H(c-) < u <= H(c): the quantile is c */
  if (i == 0)
    return c->bounds[0] - fabs(c->bounds[0]) - 1.0;
  return 0.5 * (c->bounds[i - 1] + c->bounds[i]);
}

static double median_sorted(const double *x, size_t n) {
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* n values drawn from the sorted pilot (np values), sorted: by counting
 * the indices drawn when the pilot is small (its values are sorted, so
 * the indices in order give the values in order), else by sorting. */
static void draw(const gsl_rng *r, const double *pilot, size_t np, double *x,
                 size_t n, unsigned *count) {
  if (np > 4 * n + 64) {
    for (size_t i = 0; i < n; i++)
      x[i] = pilot[gsl_rng_uniform_int(r, (unsigned long)np)];
    gsl_sort(x, 1, n);
    return;
  }
  memset(count, 0, np * sizeof *count);
  for (size_t i = 0; i < n; i++)
    count[gsl_rng_uniform_int(r, (unsigned long)np)]++;
  for (size_t k = 0, at = 0; k < np; k++)
    for (unsigned c = count[k]; c > 0; c--)
      x[at++] = pilot[k];
}

/* One arm's smoothed truth: its pilot values v (nv), the indexes of the
 * truth's resample (NULL: the pilot itself), the mean m of the pilot's
 * logarithms, the smoothing h and the truth's factor of spread f. */
typedef struct smooth {
  const double *v;
  const uint32_t *idx;
  size_t nv;
  double m, h, f;
} smooth;

/* n values of a smoothed truth, in x: each exp(m + f (log v[idx[J]] - m
 * + h Z)), J uniform over its nv indexes, then Z standard normal (in
 * that order); sorted when sort is 1. */
static void draw_smooth(const gsl_rng *r, const smooth *t, double *x, size_t n,
                        int sort) {
  for (size_t i = 0; i < n; i++) {
    size_t j = gsl_rng_uniform_int(r, (unsigned long)t->nv);
    double z = gsl_ran_gaussian_ziggurat(r, 1.0);
    double y = log(t->v[t->idx ? t->idx[j] : j]);
    x[i] = exp(t->m + t->f * (y - t->m + t->h * z));
  }
  if (sort)
    gsl_sort(x, 1, n);
}

/* The reference's values smoothed, as they are (no difference). */
static smooth null_truth(const pcell *p) {
  return (smooth){p->ref, NULL, p->n_ref, p->m_ref, p->h_ref, 1.0};
}

/* The outcome index of one experiment of sorted xr and xc (n values
 * each) under law L, its interval at confidence conf. */
static size_t decide(worker *w, const sizelaw *L, double conf) {
  const ctx *c = w->c;
  size_t n = L->n;
  if ((long)n < proto_effective_min_n(c->rule, conf))
    return c->n_outcomes - 1;
  double ratio = median_sorted(w->xc, n) / median_sorted(w->xr, n);
  atom *sr, *sc;
  size_t nr, nc;
  double mass = law_of(w, L, w->xr, w->ar, w->tr, &sr, &nr);
  mass *= law_of(w, L, w->xc, w->ac, w->tc, &sc, &nc);
  ratio_cdfs(w, sr, nr, sc, nc);
  double a = (1.0 - conf) / 2.0;
  double lo = placed_end(w, a * mass), hi = placed_end(w, (1.0 - a) * mass);
  const proto_verdict_rule *v = analysis_verdict_rule(c->rule, ratio, lo, hi);
  return v ? (size_t)(v - c->rule->verdicts) : c->n_outcomes - 2;
}

/* The first n of the np pilot indexes drawn (idx), their values sorted
 * into x: by counting, as draw does. */
static void prefix(const double *pilot, size_t np, const size_t *idx, size_t n,
                   double *x, unsigned *count) {
  memset(count, 0, np * sizeof *count);
  for (size_t i = 0; i < n; i++)
    count[idx[i]]++;
  for (size_t k = 0, at = 0; k < np; k++)
    for (unsigned c = count[k]; c > 0; c--)
      x[at++] = pilot[k];
}

/* One experiment of the sequential design: the last look's values drawn
 * as draw draws them (the same calls, so the same values as the fixed
 * design of that size), each look deciding on the first values at the
 * look's confidence; it stops at the first look that decides. *runs: the
 * runs per arm it took. */
static size_t sequential(worker *w, const pcell *p, int null, double *runs) {
  const ctx *c = w->c;
  const double *cand = null ? p->ref : p->cand;
  size_t n_cand = null ? p->n_ref : p->n_cand, o = c->n_outcomes - 1;
  size_t nk = c->looks[c->n_looks - 1];
  double conf = 1.0 - (1.0 - c->rule->confidence) / (double)c->n_looks;
  smooth nt = null_truth(p);
  if (null) {
    draw_smooth(w->rng, &nt, w->sr, nk, 0);
    draw_smooth(w->rng, &nt, w->sc, nk, 0);
  }
  for (size_t i = 0; !null && i < nk; i++)
    w->ir[i] = gsl_rng_uniform_int(w->rng, (unsigned long)p->n_ref);
  for (size_t i = 0; !null && i < nk; i++)
    w->ic[i] = gsl_rng_uniform_int(w->rng, (unsigned long)n_cand);
  for (size_t k = 0; k < c->n_looks; k++) {
    size_t n = c->looks[k];
    if (null) {
      memcpy(w->xr, w->sr, n * sizeof *w->xr);
      memcpy(w->xc, w->sc, n * sizeof *w->xc);
      gsl_sort(w->xr, 1, n);
      gsl_sort(w->xc, 1, n);
    } else {
      prefix(p->ref, p->n_ref, w->ir, n, w->xr, w->count);
      prefix(cand, n_cand, w->ic, n, w->xc, w->count);
    }
    o = decide(w, &c->laws[c->n_sizes + k], conf);
    *runs = (double)n;
    if (o + 2 < c->n_outcomes)
      break;
  }
  return o;
}

/* The outcome index of simulated experiment s. */
static size_t one_experiment(worker *w, const task *t, long s, double *runs) {
  const ctx *c = w->c;
  const pcell *p = &c->cells[t->cell];
  if (t->size == c->n_sizes)
    return sequential(w, p, t->null, runs);
  const sizelaw *L = &c->laws[t->size];
  size_t n = L->n;
  if (t->null == 1) {
    smooth nt = null_truth(p);
    draw_smooth(w->rng, &nt, w->xr, n, 1);
    draw_smooth(w->rng, &nt, w->xc, n, 1);
  } else if (t->null == 4) {
    size_t b = (size_t)(s % (long)c->n_truths);
    const uint32_t *ti =
        p->truth ? p->truth + b * (p->n_ref + p->n_cand) : NULL;
    smooth tr = {p->ref,   ti,       p->n_ref,
                 p->m_ref, p->h_ref, ti ? p->spread[2 * b] : 1.0};
    smooth tc = {p->cand,   ti ? ti + p->n_ref : NULL,
                 p->n_cand, p->m_cand,
                 p->h_cand, ti ? p->spread[2 * b + 1] : 1.0};
    draw_smooth(w->rng, &tr, w->xr, n, 1);
    draw_smooth(w->rng, &tc, w->xc, n, 1);
  } else {
    draw(w->rng, p->ref, p->n_ref, w->xr, n, w->count);
    draw(w->rng, p->cand, p->n_cand, w->xc, n, w->count);
  }
  *runs = (double)n;
  return decide(w, L, c->rule->confidence);
}

/* The family's experiments */

/* The verdict of an interval at error alpha, w->le and w->lt holding
 * its law's H at the bounds. */
static const proto_verdict_rule *verdict_at(const worker *w, double ratio,
                                            double mass, double alpha) {
  double lo = placed_end(w, alpha / 2 * mass);
  double hi = placed_end(w, (1 - alpha / 2) * mass);
  return analysis_verdict_rule(w->c->rule, ratio, lo, hi);
}

/* The smallest error at which the interval decides, as family.c ranks
 * (1 when none does), by bisection. */
static double smallest_error(const worker *w, double ratio, double mass) {
  double a = 0, b = 1;
  if (!verdict_at(w, ratio, mass, 1 - 1e-12))
    return 1;
  for (int i = 0; i < 60; i++) {
    double mid = (a + b) / 2;
    if (verdict_at(w, ratio, mass, mid))
      b = mid;
    else
      a = mid;
  }
  return b;
}

/* Scratch of one family's experiment. */
typedef struct fscratch {
  size_t *idx;              /* n_slots x the largest n: pilot indexes */
  double *ratio, *mass, *h; /* per cell; h: its H(c), H(c-) per bound */
  double *p, *err;
  size_t *order;
  double *sv; /* no difference: n_slots x the largest n smoothed values */
  int alt;    /* drawn from each slot's own values (f->vals) */
  int *dec;   /* per cell: decided at the look that ended the experiment */
} fscratch;

/* Each comparison of family f at n values (law L), at error alpha
 * shared by the family's correction. Returns 1 when every one decides;
 * *any: whether one gives a verdict with a direction. */
static int family_look(worker *w, const family *f, fscratch *fs,
                       const sizelaw *L, size_t max_n, double alpha,
                       int *any) {
  const ctx *c = w->c;
  size_t nb = c->n_bounds, n = L->n;
  int all = 1;
  for (size_t i = 0; i < f->n; i++) {
    size_t kr = f->slot_ref[i], ka = f->slot_arm[i];
    fs->p[i] = 1;
    if ((long)n < c->rule->min_n)
      continue;
    if (fs->alt) {
      prefix(f->vals[kr], f->nv[kr], fs->idx + kr * max_n, n, w->xr, w->count);
      prefix(f->vals[ka], f->nv[ka], fs->idx + ka * max_n, n, w->xc, w->count);
    } else {
      memcpy(w->xr, fs->sv + kr * max_n, n * sizeof *w->xr);
      memcpy(w->xc, fs->sv + ka * max_n, n * sizeof *w->xc);
      gsl_sort(w->xr, 1, n);
      gsl_sort(w->xc, 1, n);
    }
    fs->ratio[i] = median_sorted(w->xc, n) / median_sorted(w->xr, n);
    atom *sr, *sc;
    size_t nr, nc;
    fs->mass[i] = law_of(w, L, w->xr, w->ar, w->tr, &sr, &nr);
    fs->mass[i] *= law_of(w, L, w->xc, w->ac, w->tc, &sc, &nc);
    ratio_cdfs(w, sr, nr, sc, nc);
    memcpy(fs->h + 2 * i * nb, w->le, nb * sizeof *w->le);
    memcpy(fs->h + (2 * i + 1) * nb, w->lt, nb * sizeof *w->lt);
    fs->p[i] = smallest_error(w, fs->ratio[i], fs->mass[i]);
  }
  analysis_family_errors(c->rule->family, alpha, f->n, fs->p, f->n, fs->err,
                         fs->order);
  *any = 0;
  for (size_t i = 0; i < f->n; i++) {
    const proto_verdict_rule *v = NULL;
    if ((long)n >= proto_effective_min_n(c->rule, 1 - fs->err[i])) {
      memcpy(w->le, fs->h + 2 * i * nb, nb * sizeof *w->le);
      memcpy(w->lt, fs->h + (2 * i + 1) * nb, nb * sizeof *w->lt);
      v = verdict_at(w, fs->ratio[i], fs->mass[i], fs->err[i]);
    }
    all &= v != NULL;
    fs->dec[i] = v != NULL;
    *any |= v && proto_verdict_direction(v) != 0;
  }
  return all;
}

/* One experiment of family f with no difference at column col (a fixed
 * size, or the looks, stopping at the first where every comparison
 * decides): whether a verdict with a direction is reported. */
static int family_experiment(worker *w, const family *f, fscratch *fs,
                             size_t col) {
  const ctx *c = w->c;
  int seq = col == c->n_sizes, any = 0;
  size_t k0 = seq ? c->n_sizes : col,
         k1 = seq ? c->n_sizes + c->n_looks : col + 1;
  size_t max_n = c->laws[k1 - 1].n;
  double alpha = (1.0 - c->rule->confidence) / (double)(seq ? c->n_looks : 1);
  /* No difference: each slot draws from the reference's values at its
   * metric smoothed, as the null of each comparison alone does (ties of
   * a small pilot would make false verdicts rarer than they are). */
  for (size_t sl = 0; sl < f->n_slots; sl++) {
    const pcell *p = &c->cells[f->slot_cell[sl]];
    smooth nt = null_truth(p);
    if (!fs->alt) {
      draw_smooth(w->rng, &nt, fs->sv + sl * max_n, max_n, 0);
      continue;
    }
    for (size_t i = 0; i < max_n; i++)
      fs->idx[sl * max_n + i] =
          gsl_rng_uniform_int(w->rng, (unsigned long)f->nv[sl]);
  }
  for (size_t k = k0; k < k1; k++)
    if (family_look(w, f, fs, &c->laws[k], max_n, alpha, &any))
      break;
  return any;
}

static void run_family(worker *w, const task *t) {
  const ctx *c = w->c;
  const family *f = &c->fams[t->cell];
  size_t max_n =
      c->laws[t->size == c->n_sizes ? c->n_sizes + c->n_looks - 1 : t->size].n;
  fscratch fs;
  fs.idx = core_malloc((f->n_slots * max_n + 1) * sizeof *fs.idx);
  fs.sv = core_malloc((f->n_slots * max_n + 1) * sizeof *fs.sv);
  fs.ratio = core_malloc((f->n + 1) * sizeof *fs.ratio);
  fs.mass = core_malloc((f->n + 1) * sizeof *fs.mass);
  fs.h = core_malloc((2 * f->n * c->n_bounds + 1) * sizeof *fs.h);
  fs.p = core_malloc((f->n + 1) * sizeof *fs.p);
  fs.err = core_malloc((f->n + 1) * sizeof *fs.err);
  fs.order = core_malloc((f->n + 1) * sizeof *fs.order);
  fs.dec = core_malloc((f->n + 1) * sizeof *fs.dec);
  fs.alt = t->null == 3;
  size_t ncol = c->n_sizes + (c->n_looks > 0);
  unsigned long seed =
      analysis_plan_seed(c->rule->seed, c->cells[f->cells[0]].workload, "",
                         "family", max_n, !fs.alt);
  if (!fs.idx || !fs.sv || !fs.ratio || !fs.mass || !fs.h || !fs.p ||
      !fs.err || !fs.order || !fs.dec || seed == ANALYSIS_SEED_NONE)
    w->failed = 1;
  else {
    gsl_rng_set(w->rng, seed);
    for (long s = 0; s < c->sims; s++) {
      int any = family_experiment(w, f, &fs, t->size);
      if (!fs.alt)
        t->counts[0] += any;
      for (size_t i = 0; fs.alt && i < f->n; i++)
        t->counts[i * ncol + t->size] += fs.dec[i];
    }
  }
  core_free(fs.dec);
  core_free(fs.idx);
  core_free(fs.sv);
  core_free(fs.ratio);
  core_free(fs.mass);
  core_free(fs.h);
  core_free(fs.p);
  core_free(fs.err);
  core_free(fs.order);
}

static void run_task(worker *w, const task *t) {
  const ctx *c = w->c;
  if (t->null == 2 || t->null == 3) {
    run_family(w, t);
    return;
  }
  const pcell *p = &c->cells[t->cell];
  size_t n =
      t->size == c->n_sizes ? c->looks[c->n_looks - 1] : c->laws[t->size].n;
  unsigned long seed = analysis_plan_seed(
      c->rule->seed, p->workload, p->metric,
      t->null == 1 ? p->null_key : p->key, n, t->null == 4 ? 2 : t->null);
  if (seed == ANALYSIS_SEED_NONE) {
    w->failed = 1;
    return;
  }
  gsl_rng_set(w->rng, seed);
  for (long s = 0; s < c->sims; s++) {
    double runs = 0.0;
    size_t o = one_experiment(w, t, s, &runs);
    if (t->null == 4)
      t->counts[s % (long)c->n_truths] += o + 2 < c->n_outcomes;
    else
      t->counts[o]++;
    if (t->runs)
      *t->runs += runs;
  }
}

static void *worker_main(void *arg) {
  worker *w = arg;
  ctx *c = w->c;
  for (;;) {
    pthread_mutex_lock(&c->lock);
    size_t k = c->next++;
    pthread_mutex_unlock(&c->lock);
    if (k >= c->n_tasks)
      break;
    run_task(w, &c->tasks[k]);
  }
  return NULL;
}

/* Setting up and running */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Where each k1's atoms start (they come in order of k1, then k2). */
static core_status law_rows(sizelaw *L, core_err *err) {
  L->rows = core_malloc((L->na + 1) * sizeof *L->rows);
  if (!L->rows)
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  L->n_rows = 0;
  for (size_t i = 0; i < L->na; i++)
    if (i == 0 || L->a[i].k1 != L->a[i - 1].k1)
      L->rows[L->n_rows++] = i;
  L->rows[L->n_rows] = L->na;
  return CORE_OK;
}

/* The rule's interval bounds (ci_excludes, ci_within), sorted, distinct. */
static core_status collect_bounds(ctx *c, core_err *err) {
  const proto_rule *r = c->rule;
  size_t n = 0;
  c->bounds = core_malloc((3 * r->n_verdicts + 1) * sizeof *c->bounds);
  if (!c->bounds)
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const proto_verdict_rule *v = &r->verdicts[i];
    if (v->ratio.has_ci_excludes)
      c->bounds[n++] = v->ratio.ci_excludes;
    if (v->ratio.has_ci_within) {
      c->bounds[n++] = v->ratio.ci_within[0];
      c->bounds[n++] = v->ratio.ci_within[1];
    }
  }
  qsort(c->bounds, n, sizeof *c->bounds, cmp_double);
  c->n_bounds = 0;
  for (size_t i = 0; i < n; i++)
    if (c->n_bounds == 0 || c->bounds[c->n_bounds - 1] != c->bounds[i])
      c->bounds[c->n_bounds++] = c->bounds[i];
  return CORE_OK;
}

static core_status copy_sorted(const double *x, size_t n, const char *what,
                               const analysis_plan_cell *cell, double **out,
                               core_err *err) {
  if (n == 0 || n > (size_t)PLAN_MAX_PILOT)
    return core_fail(err, CORE_EINPUT,
                     "pilot: %s/%s/%s: %zu values of the %s (1 to %ld can be "
                     "planned from)",
                     cell->workload, cell->metric, cell->arm, n, what,
                     PLAN_MAX_PILOT);
  for (size_t i = 0; i < n; i++)
    if (!(isfinite(x[i]) && x[i] > 0.0))
      return core_fail(err, CORE_EINPUT,
                       "pilot: %s/%s: a value of the %s is %g; the plan's "
                       "ratios need positive, finite values",
                       cell->workload, cell->metric, what, x[i]);
  if (!(*out = core_malloc(n * sizeof **out)))
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  memcpy(*out, x, n * sizeof **out);
  gsl_sort(*out, 1, n);
  return CORE_OK;
}

static void ctx_free(ctx *c, size_t n_cells, size_t n_sizes) {
  for (size_t i = 0; c->cells && i < n_cells; i++) {
    core_free(c->cells[i].ref);
    core_free(c->cells[i].cand);
    core_free(c->cells[i].key);
    core_free(c->cells[i].null_key);
    core_free(c->cells[i].truth);
    core_free(c->cells[i].spread);
  }
  for (size_t i = 0; c->laws && i < n_sizes + c->n_looks; i++) {
    core_free(c->laws[i].a);
    core_free(c->laws[i].rows);
  }
  for (size_t f = 0; c->fams && f < c->n_fams; f++) {
    core_free(c->fams[f].cells);
    core_free(c->fams[f].slot_ref);
    core_free(c->fams[f].slot_arm);
    core_free(c->fams[f].slot_cell);
    core_free(c->fams[f].vals);
    core_free(c->fams[f].nv);
    core_free(c->fams[f].decided);
    core_free(c->fams[f].any_false);
  }
  core_free(c->fams);
  core_free(c->cells);
  core_free(c->laws);
  core_free(c->tasks);
  core_free(c->bounds);
  core_free(c->hits);
}

/* Whether cell i is the first of its workload and metric: the one whose
 * task holds the null simulation they all share. */
static int same_reference(const char *a, const char *b) {
  return a == b || (a && b && !strcmp(a, b));
}

static size_t null_owner(const analysis_plan_cell *cells, size_t i) {
  for (size_t j = 0; j < i; j++)
    if (!strcmp(cells[j].workload, cells[i].workload) &&
        !strcmp(cells[j].metric, cells[i].metric) &&
        same_reference(cells[j].reference, cells[i].reference))
      return j;
  return i;
}

/* The slot of family f for metric and arm (NULL: the sheet's
 * reference), added when new; names[] and metrics[] per slot. */
static size_t slot_of(family *f, const char **metrics, const char **names,
                      const char *metric, const char *name) {
  for (size_t s = 0; s < f->n_slots; s++)
    if (!strcmp(metrics[s], metric) && same_reference(names[s], name))
      return s;
  metrics[f->n_slots] = metric;
  names[f->n_slots] = name;
  return f->n_slots++;
}

/* Each slot's own values (its arm's at its metric, sorted), for the
 * family drawn from the pilot. */
static core_status family_values(const ctx *c, family *f,
                                 const analysis_plan_cell *cells,
                                 const char **metrics, const char **names,
                                 core_err *err) {
  f->vals = core_calloc(f->n_slots + 1, sizeof *f->vals);
  f->nv = core_calloc(f->n_slots + 1, sizeof *f->nv);
  if (!f->vals || !f->nv)
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  for (size_t s = 0; s < f->n_slots; s++)
    for (size_t i = 0; i < f->n && !f->vals[s]; i++) {
      const analysis_plan_cell *x = &cells[f->cells[i]];
      const pcell *p = &c->cells[f->cells[i]];
      if (strcmp(x->metric, metrics[s]) != 0)
        continue;
      if (same_reference(x->reference, names[s]))
        f->vals[s] = p->ref, f->nv[s] = p->n_ref;
      else if (names[s] && !strcmp(x->arm, names[s]))
        f->vals[s] = p->cand, f->nv[s] = p->n_cand;
    }
  return CORE_OK;
}

/* Family f (its cells set): its slots, each drawing from the
 * reference's values at its metric (and, under a correction, from its
 * own). */
static core_status family_slots(const ctx *c, family *f,
                                const analysis_plan_cell *cells,
                                core_err *err) {
  const char **metrics = core_calloc(2 * f->n + 1, sizeof *metrics);
  const char **names = core_calloc(2 * f->n + 1, sizeof *names);
  f->slot_ref = core_calloc(f->n + 1, sizeof *f->slot_ref);
  f->slot_arm = core_calloc(f->n + 1, sizeof *f->slot_arm);
  f->slot_cell = core_calloc(2 * f->n + 1, sizeof *f->slot_cell);
  if (!metrics || !names || !f->slot_ref || !f->slot_arm || !f->slot_cell) {
    core_free(metrics);
    core_free(names);
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  }
  for (size_t i = 0; i < f->n; i++) {
    const analysis_plan_cell *x = &cells[f->cells[i]];
    f->slot_ref[i] = slot_of(f, metrics, names, x->metric, x->reference);
    f->slot_arm[i] = slot_of(f, metrics, names, x->metric, x->arm);
  }
  for (size_t s = 0; s < f->n_slots; s++)
    for (size_t i = f->n; i-- > 0;)
      if (!strcmp(cells[f->cells[i]].metric, metrics[s]) &&
          !cells[f->cells[i]].reference)
        f->slot_cell[s] = f->cells[i];
  core_status st = c->rule->family != PROTO_FAMILY_NONE
                       ? family_values(c, f, cells, metrics, names, err)
                       : CORE_OK;
  core_free(metrics);
  core_free(names);
  return st;
}

/* One family per workload, its cells in order, and its tasks. */
static core_status setup_families(ctx *c, const analysis_plan_cell *cells,
                                  size_t n_cells, size_t ncol, core_err *err) {
  core_status st;
  if (!(c->fams = core_calloc(n_cells + 1, sizeof *c->fams)))
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  for (size_t i = 0; i < n_cells; i++) {
    size_t f = 0;
    while (f < c->n_fams &&
           strcmp(cells[c->fams[f].cells[0]].workload, cells[i].workload))
      f++;
    if (f == c->n_fams) {
      c->fams[f].cells = core_calloc(n_cells, sizeof *c->fams[f].cells);
      c->fams[f].any_false = core_calloc(ncol, sizeof(long));
      if (!c->fams[f].cells || !c->fams[f].any_false)
        return core_fail(err, CORE_ENOMEM, "plan: out of memory");
      c->n_fams++;
    }
    c->fams[f].cells[c->fams[f].n++] = i;
  }
  for (size_t f = 0; f < c->n_fams; f++) {
    family *fm = &c->fams[f];
    if ((st = family_slots(c, fm, cells, err)) != CORE_OK)
      return st;
    for (size_t s = 0; s < ncol; s++)
      c->tasks[c->n_tasks++] = (task){f, s, 2, fm->any_false + s, NULL};
    if (!fm->vals)
      continue;
    if (!(fm->decided = core_calloc(fm->n * ncol + 1, sizeof(long))))
      return core_fail(err, CORE_ENOMEM, "plan: out of memory");
    for (size_t s = 0; s < ncol; s++)
      c->tasks[c->n_tasks++] = (task){f, s, 3, fm->decided, NULL};
  }
  return CORE_OK;
}

/* The mean of the logarithms of positive v (n values) in *m, and the
 * smoothing's spread: sd / sqrt(n) of them (sd with n - 1; 0 for one
 * value), which makes the smoothed resample's variance the sample's. */
static double smoothing(const double *v, size_t n, double *m) {
  double mean = 0.0, ss = 0.0;
  for (size_t i = 0; i < n; i++)
    mean += log(v[i]) / (double)n;
  *m = mean;
  if (n < 2)
    return 0.0;
  for (size_t i = 0; i < n; i++)
    ss += (log(v[i]) - mean) * (log(v[i]) - mean);
  return sqrt(ss / (double)(n - 1) / (double)n);
}

/* A truth's factor of spread for a pilot of n values: sqrt((n - 1) /
 * X), X chi-squared with n - 1 degrees of freedom (the spread's
 * uncertainty, as a normal sample's); 1 for one value. */
static double spread_factor(const gsl_rng *r, size_t n) {
  double x = n > 1 ? gsl_ran_chisq(r, (double)(n - 1)) : 0.0;
  return n > 1 && x > 0 ? sqrt((double)(n - 1) / x) : 1.0;
}

/* Cell p's plausible truths: each, the pilot's reference then its arm
 * resampled with replacement (their indexes), from a gsl_rng_mt19937
 * seeded as the truths' experiments at n = 0; and its smoothing. */
static core_status setup_truths(ctx *c, pcell *p, core_err *err) {
  size_t stride = p->n_ref + p->n_cand;
  unsigned long seed;
  gsl_rng *r;
  p->h_ref = smoothing(p->ref, p->n_ref, &p->m_ref);
  p->h_cand = smoothing(p->cand, p->n_cand, &p->m_cand);
  if (p->n_ref > PLAN_TRUTH_MAX_PILOT || p->n_cand > PLAN_TRUTH_MAX_PILOT)
    return CORE_OK;
  seed =
      analysis_plan_seed(c->rule->seed, p->workload, p->metric, p->key, 0, 2);
  p->truth = core_malloc(c->n_truths * stride * sizeof *p->truth);
  p->spread = core_malloc(2 * c->n_truths * sizeof *p->spread);
  if (seed == ANALYSIS_SEED_NONE || !p->truth || !p->spread ||
      !(r = gsl_rng_alloc(gsl_rng_mt19937)))
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  gsl_rng_set(r, seed);
  for (size_t b = 0; b < c->n_truths; b++) {
    uint32_t *t = p->truth + b * stride;
    for (size_t i = 0; i < p->n_ref; i++)
      t[i] = (uint32_t)gsl_rng_uniform_int(r, (unsigned long)p->n_ref);
    for (size_t j = 0; j < p->n_cand; j++)
      t[p->n_ref + j] =
          (uint32_t)gsl_rng_uniform_int(r, (unsigned long)p->n_cand);
    p->spread[2 * b] = spread_factor(r, p->n_ref);
    p->spread[2 * b + 1] = spread_factor(r, p->n_cand);
  }
  gsl_rng_free(r);
  return CORE_OK;
}

/* The law of the median at each fixed size, then at each look. */
static core_status setup_laws(ctx *c, const size_t *sizes, core_err *err) {
  core_status st;
  for (size_t s = 0; s < c->n_sizes + c->n_looks; s++) {
    size_t n = s < c->n_sizes ? sizes[s] : c->looks[s - c->n_sizes];
    c->laws[s].n = n;
    if ((st = analysis_median_law(n, PLAN_ATOM_FLOOR, &c->laws[s].a,
                                  &c->laws[s].na, err)) != CORE_OK)
      return st;
    if ((st = law_rows(&c->laws[s], err)) != CORE_OK)
      return st;
  }
  return CORE_OK;
}

static core_status ctx_setup(ctx *c, const analysis_plan_cell *cells,
                             size_t n_cells, const size_t *sizes,
                             size_t n_sizes, long *counts, double *runs,
                             core_err *err) {
  core_status st;
  size_t ncol = n_sizes + (c->n_looks > 0);
  c->cells = core_calloc(n_cells ? n_cells : 1, sizeof *c->cells);
  c->laws = core_calloc(n_sizes + c->n_looks, sizeof *c->laws);
  c->tasks = core_calloc(5 * n_cells * ncol + 1, sizeof *c->tasks);
  c->hits = core_calloc(n_cells * n_sizes * c->n_truths + 1, sizeof(long));
  if (!c->cells || !c->laws || !c->tasks || !c->hits)
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  if ((st = collect_bounds(c, err)) != CORE_OK)
    return st;
  for (size_t i = 0; i < n_cells; i++) {
    pcell *p = &c->cells[i];
    p->workload = cells[i].workload;
    p->metric = cells[i].metric;
    p->arm = cells[i].arm;
    p->n_ref = cells[i].n_ref;
    p->n_cand = cells[i].n_cand;
    p->key = cells[i].reference
                 ? core_asprintf("%s vs %s", cells[i].arm, cells[i].reference)
                 : core_strdup(cells[i].arm);
    p->null_key = cells[i].reference
                      ? core_asprintf("vs %s", cells[i].reference)
                      : core_strdup("");
    if (!p->key || !p->null_key)
      return core_fail(err, CORE_ENOMEM, "plan: out of memory");
    if ((st = copy_sorted(cells[i].ref, p->n_ref, "reference", &cells[i],
                          &p->ref, err)) != CORE_OK ||
        (st = copy_sorted(cells[i].cand, p->n_cand, "arm", &cells[i], &p->cand,
                          err)) != CORE_OK ||
        (st = setup_truths(c, p, err)) != CORE_OK)
      return st;
  }
  for (size_t i = 0; i < n_cells; i++) {
    if (c->cells[i].n_ref > c->max_pilot)
      c->max_pilot = c->cells[i].n_ref;
    if (c->cells[i].n_cand > c->max_pilot)
      c->max_pilot = c->cells[i].n_cand;
  }
  if ((st = setup_laws(c, sizes, err)) != CORE_OK)
    return st;
  /* Tasks: every cell at every size (the sequential design last), then
   * the null simulations, one per workload and metric. counts:
   * [cell][column][null][outcome], runs: [cell][column][null]. */
  for (int null = 0; null < 2; null++)
    for (size_t i = 0; i < n_cells; i++)
      for (size_t s = 0; s < ncol; s++) {
        size_t at = (i * ncol + s) * 2 + (size_t)null;
        if (null && null_owner(cells, i) != i)
          continue;
        c->tasks[c->n_tasks++] =
            (task){i, s, null, counts + at * c->n_outcomes, runs + at};
      }
  for (size_t i = 0; i < n_cells; i++)
    for (size_t s = 0; s < n_sizes; s++)
      c->tasks[c->n_tasks++] =
          (task){i, s, 4, c->hits + (i * n_sizes + s) * c->n_truths, NULL};
  return setup_families(c, cells, n_cells, ncol, err);
}

static int threads_online(int threads) {
  long n = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

static void worker_free(worker *w) {
  if (w->rng)
    gsl_rng_free(w->rng);
  core_free(w->xr);
  core_free(w->xc);
  core_free(w->ar);
  core_free(w->ac);
  core_free(w->cum);
  core_free(w->le);
  core_free(w->lt);
  core_free(w->count);
  core_free(w->tr);
  core_free(w->tc);
  core_free(w->bounds);
  core_free(w->dv);
  core_free(w->dk);
  core_free(w->acc);
  core_free(w->rows2);
  core_free(w->ir);
  core_free(w->ic);
  core_free(w->sr);
  core_free(w->sc);
}

static core_status run_workers(ctx *c, size_t max_n, size_t max_atoms,
                               int threads, core_err *err) {
  size_t nw = (size_t)threads_online(threads), started = 0;
  worker *ws;
  pthread_t *tids;
  core_status st = CORE_OK;
  if (nw > c->n_tasks)
    nw = c->n_tasks ? c->n_tasks : 1;
  ws = core_calloc(nw, sizeof *ws);
  tids = core_calloc(nw, sizeof *tids);
  for (size_t i = 0; ws && tids && i < nw; i++) {
    worker *w = &ws[i];
    w->c = c;
    w->rng = gsl_rng_alloc(gsl_rng_mt19937);
    w->xr = core_malloc(max_n * sizeof *w->xr);
    w->xc = core_malloc(max_n * sizeof *w->xc);
    w->ar = core_malloc(max_atoms * sizeof *w->ar);
    w->ac = core_malloc(max_atoms * sizeof *w->ac);
    w->tr = core_malloc(max_atoms * sizeof *w->tr);
    w->tc = core_malloc(max_atoms * sizeof *w->tc);
    w->bounds = core_malloc((max_atoms + max_n + 2) * sizeof *w->bounds);
    w->dv = core_malloc(max_n * sizeof *w->dv);
    w->dk = core_malloc((max_n + 1) * sizeof *w->dk);
    /* d * d <= max_atoms / 2 when summed (even n), d <= n (odd n). */
    w->acc = core_malloc((max_atoms + max_n + 1) * sizeof *w->acc);
    w->rows2 = core_malloc((max_n + 2) * sizeof *w->rows2);
    w->cum = core_malloc((max_atoms + 1) * sizeof *w->cum);
    w->le = core_malloc((c->n_bounds + 1) * sizeof *w->le);
    w->lt = core_malloc((c->n_bounds + 1) * sizeof *w->lt);
    w->count = core_malloc((c->max_pilot + 1) * sizeof *w->count);
    w->ir = core_malloc((max_n + 1) * sizeof *w->ir);
    w->ic = core_malloc((max_n + 1) * sizeof *w->ic);
    w->sr = core_malloc((max_n + 1) * sizeof *w->sr);
    w->sc = core_malloc((max_n + 1) * sizeof *w->sc);
    if (!w->sr || !w->sc || !w->ir || !w->ic || !w->rng || !w->xr || !w->xc ||
        !w->ar || !w->ac || !w->cum || !w->le || !w->lt || !w->count ||
        !w->tr || !w->tc || !w->bounds || !w->dv || !w->dk || !w->acc ||
        !w->rows2)
      st = core_fail(err, CORE_ENOMEM, "plan: out of memory");
  }
  if (!ws || !tids)
    st = core_fail(err, CORE_ENOMEM, "plan: out of memory");
  if (st == CORE_OK) {
    pthread_mutex_init(&c->lock, NULL);
    for (; nw > 1 && started < nw; started++)
      if (pthread_create(&tids[started], NULL, worker_main, &ws[started]))
        break;
    if (started == 0)
      worker_main(&ws[0]);
    for (size_t i = 0; i < started; i++)
      pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&c->lock);
  }
  for (size_t i = 0; ws && i < nw; i++) {
    if (ws[i].failed && st == CORE_OK)
      st = core_fail(err, CORE_ENOMEM, "plan: out of memory for a seed");
    worker_free(&ws[i]);
  }
  core_free(ws);
  core_free(tids);
  return st;
}

/* The results */

static void result_free(analysis_plan_result *r) {
  core_free(r->workload);
  core_free(r->metric);
  core_free(r->arm);
  core_free(r->reference);
  core_free(r->p_verdicts);
  core_free(r->p_null);
  core_free(r->p_decided);
  core_free(r->p_false);
  core_free(r->p_false_up);
  core_free(r->p_false_down);
  core_free(r->expected_runs);
  core_free(r->p_decided_se);
  core_free(r->p_false_se);
  core_free(r->power);
  core_free(r->power_se);
  core_free(r->power_low);
  core_free(r->p_decided_family);
}

double analysis_plan_power(const analysis_plan_result *r, size_t col) {
  return r->p_decided_family ? r->p_decided_family[col] : r->p_decided[col];
}

void analysis_plan_free(analysis_plan *p) {
  if (!p)
    return;
  for (size_t i = 0; i < p->n_results; i++)
    result_free(&p->results[i]);
  for (size_t i = 0; i < p->n_picks; i++) {
    core_free(p->picks[i].workload);
    core_free(p->picks[i].why);
  }
  core_names_free(p->outcomes, p->n_outcomes);
  core_free(p->results);
  core_free(p->picks);
  core_free(p->sizes);
  core_free(p->looks);
  core_names_free(p->family_workloads, p->n_families);
  core_free(p->family_size);
  core_free(p->p_false_family);
  core_free(p);
}

static double binomial_se(double p, long k) {
  return sqrt(p * (1.0 - p) / (double)k);
}

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

/* Over the plausible truths of cell i at each fixed size: the mean
 * power, its standard error (of the truths' powers, sd / sqrt(truths))
 * and the power that a share `assurance` of them reach (their powers
 * ranked from the highest, the ceil(assurance x truths)-th). */
static core_status fill_power(const ctx *c, const analysis_plan *p, size_t i,
                              analysis_plan_result *r, core_err *err) {
  size_t nt = c->n_truths;
  double *pb = core_malloc((nt + 1) * sizeof *pb);
  if (!pb)
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  for (size_t s = 0; s < p->n_cols; s++) {
    size_t m = 0, at;
    double sum = 0.0, ss = 0.0, mean;
    r->power[s] = r->power_se[s] = r->power_low[s] = NAN;
    for (size_t b = 0; s < c->n_sizes && b < nt; b++) {
      long k = c->sims / (long)nt + ((long)b < c->sims % (long)nt);
      if (k > 0)
        sum += pb[m++] =
            (double)c->hits[(i * c->n_sizes + s) * nt + b] / (double)k;
    }
    if (m == 0)
      continue;
    mean = sum / (double)m;
    for (size_t b = 0; b < m; b++)
      ss += (pb[b] - mean) * (pb[b] - mean);
    qsort(pb, m, sizeof *pb, cmp_desc);
    at = (size_t)ceil(p->assurance * (double)m - 1e-9);
    r->power[s] = mean;
    r->power_se[s] = m > 1 ? sqrt(ss / (double)(m - 1) / (double)m) : NAN;
    r->power_low[s] = pb[at < 1 ? 0 : at > m ? m - 1 : at - 1];
  }
  core_free(pb);
  return CORE_OK;
}

/* Counts to probabilities for result r (cell i). */
static core_status fill_result(const ctx *c, const proto_rule *rule,
                               analysis_plan *p, size_t i, const long *counts,
                               const double *runs, size_t owner,
                               core_err *err) {
  analysis_plan_result *r = &p->results[i];
  size_t ns = p->n_cols, no = p->n_outcomes;
  r->p_verdicts = core_calloc(ns * no, sizeof(double));
  r->p_null = core_calloc(ns * no, sizeof(double));
  r->p_decided = core_calloc(ns, sizeof(double));
  r->p_false = core_calloc(ns, sizeof(double));
  r->p_false_up = core_calloc(ns, sizeof(double));
  r->p_false_down = core_calloc(ns, sizeof(double));
  r->expected_runs = core_calloc(ns, sizeof(double));
  r->p_decided_se = core_calloc(ns, sizeof(double));
  r->p_false_se = core_calloc(ns, sizeof(double));
  r->power = core_calloc(ns, sizeof(double));
  r->power_se = core_calloc(ns, sizeof(double));
  r->power_low = core_calloc(ns, sizeof(double));
  if (!r->p_verdicts || !r->p_null || !r->p_decided || !r->p_false ||
      !r->p_false_up || !r->p_false_down || !r->expected_runs ||
      !r->p_decided_se || !r->p_false_se || !r->power || !r->power_se ||
      !r->power_low)
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  for (size_t s = 0; s < ns; s++) {
    const long *alt = counts + ((i * ns + s) * 2) * no;
    r->expected_runs[s] = runs[(i * ns + s) * 2] / (double)c->sims;
    const long *nul = counts + ((owner * ns + s) * 2 + 1) * no;
    for (size_t o = 0; o < no; o++) {
      r->p_verdicts[s * no + o] = (double)alt[o] / (double)c->sims;
      r->p_null[s * no + o] = (double)nul[o] / (double)c->sims;
      if (o + 2 < no)
        r->p_decided[s] += r->p_verdicts[s * no + o];
      if (o + 2 < no) {
        int d = proto_verdict_direction(&rule->verdicts[o]);
        double q = r->p_null[s * no + o];
        if (d > 0)
          r->p_false_up[s] += q;
        if (d < 0)
          r->p_false_down[s] += q;
        if (d != 0)
          r->p_false[s] += q;
      }
    }
    r->p_decided_se[s] = binomial_se(r->p_decided[s], c->sims);
    r->p_false_se[s] = binomial_se(r->p_false[s], c->sims);
  }
  return fill_power(c, p, i, r, err);
}

/* The pilot's own ratio and interval under the rule. */
static core_status pilot_interval(const proto_sheet *sh, const pcell *pc,
                                  analysis_plan_result *r, int threads,
                                  core_err *err) {
  r->pilot_n_ref = pc->n_ref;
  r->pilot_n_cand = pc->n_cand;
  r->pilot_ratio =
      median_sorted(pc->cand, pc->n_cand) / median_sorted(pc->ref, pc->n_ref);
  return analysis_bootstrap_ratio(
      pc->ref, pc->n_ref, pc->cand, pc->n_cand, sh->rule.resamples,
      sh->rule.confidence,
      analysis_comparison_seed(sh->rule.seed, pc->workload, pc->metric,
                               pc->key),
      threads, &r->pilot_ci_low, &r->pilot_ci_high, NULL, err);
}

static core_status fill_outcomes(const proto_rule *rule, analysis_plan *p,
                                 core_err *err) {
  p->n_outcomes = rule->n_verdicts + 2;
  if (!(p->outcomes = core_calloc(p->n_outcomes, sizeof *p->outcomes)))
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  for (size_t o = 0; o < rule->n_verdicts; o++)
    p->outcomes[o] = core_strdup(rule->verdicts[o].name);
  p->outcomes[rule->n_verdicts] = core_strdup("inconclusive");
  p->outcomes[rule->n_verdicts + 1] = core_strdup(ANALYSIS_INSUFFICIENT);
  for (size_t o = 0; o < p->n_outcomes; o++)
    if (!p->outcomes[o])
      return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  return CORE_OK;
}

/* Recommendations */

/* The power plan chooses by at fixed size col: power_low (the power a
 * share `assurance` of the plausible truths reach), or under the rule's
 * family correction, when it has one, the lower of it and
 * p_decided_family (the pilot taken as the truth, corrected). */
static double chosen_power(const analysis_plan_result *r, size_t col) {
  double b = r->power_low[col];
  if (!r->p_decided_family)
    return isnan(b) ? r->p_decided[col] : b;
  return isnan(b) || r->p_decided_family[col] < b ? r->p_decided_family[col]
                                                  : b;
}

/* The bound of the rule (any verdict's ratio_above, ratio_below,
 * ci_excludes, ci_within end) in [lo, hi] nearest to x, or NaN. */
static double bound_within(const proto_rule *rule, double x, double lo,
                           double hi) {
  double at = NAN;
  for (size_t i = 0; i < rule->n_verdicts; i++) {
    const proto_verdict_rule *v = &rule->verdicts[i];
    double b[5] = {v->ratio.has_above ? v->ratio.above : NAN,
                   v->ratio.has_below ? v->ratio.below : NAN,
                   v->ratio.has_ci_excludes ? v->ratio.ci_excludes : NAN,
                   v->ratio.has_ci_within ? v->ratio.ci_within[0] : NAN,
                   v->ratio.has_ci_within ? v->ratio.ci_within[1] : NAN};
    for (int k = 0; k < 5; k++)
      if (b[k] >= lo && b[k] <= hi &&
          (isnan(at) || fabs(b[k] - x) < fabs(at - x)))
        at = b[k];
  }
  return at;
}

/* The pilot cannot tell on which side of the rule's bound `at` the
 * truth lies (its interval spans it): how many pilot rounds per arm
 * would, were its ratio to stay, narrow the interval (as the square
 * root of the values) to exclude the bound. */
static char *pilot_too_small(const char *head, const analysis_plan_result *r,
                             double at) {
  size_t np =
      r->pilot_n_ref < r->pilot_n_cand ? r->pilot_n_ref : r->pilot_n_cand;
  double x = r->pilot_ratio;
  double end = at < x ? r->pilot_ci_low : r->pilot_ci_high;
  double d = fabs(log(at / x)), wd = fabs(log(end / x));
  double rounds = d > 0 ? ceil((double)np * (wd / d) * (wd / d)) : INFINITY;
  char *where = core_asprintf(
      "%s: the pilot is too small to tell: its interval [%.3g, %.3g] (%zu "
      "and %zu values) spans the rule's bound %g, so the truth may lie on "
      "either side of it",
      head, r->pilot_ci_low, r->pilot_ci_high, r->pilot_n_ref, r->pilot_n_cand,
      at);
  char *out;
  if (!where)
    return NULL;
  if (rounds <= (double)PILOT_MAX_RUNS)
    out = core_asprintf("%s; a pilot of about %.0f rounds would settle it "
                        "were its ratio %.3g to stay",
                        where,
                        rounds < (double)np + 1 ? (double)np + 1 : rounds, x);
  else
    out = core_asprintf("%s; its ratio %.3g sits so close to it that no "
                        "pilot of up to %ld rounds would settle it: the "
                        "difference, if any, is smaller than the rule "
                        "can resolve",
                        where, x, PILOT_MAX_RUNS);
  core_free(where);
  return out;
}

/* Why comparison r does not reach the power at the largest size. */
static char *why_not(const proto_rule *rule, const analysis_plan *p,
                     const analysis_plan_result *r) {
  size_t last = p->n_sizes - 1, nmax = p->sizes[last];
  size_t np =
      r->pilot_n_ref < r->pilot_n_cand ? r->pilot_n_ref : r->pilot_n_cand;
  double f = sqrt((double)np / (double)nmax), x = r->pilot_ratio;
  double lo = x * pow(r->pilot_ci_low / x, f);
  double hi = x * pow(r->pilot_ci_high / x, f), at = NAN;
  double told = bound_within(rule, x, r->pilot_ci_low, r->pilot_ci_high);
  at = bound_within(rule, x, lo, hi);
  /* Where the interval shrinks to as n grows: the pilot ratio itself. */
  const proto_verdict_rule *limit = analysis_verdict_rule(rule, x, x, x);
  char head[512];
  snprintf(head, sizeof head,
           "%s/%s/%s%s%s decides with a probability of %.1f%% at n = %zu "
           "(in %.0f%% of the pilot's plausible truths, and under the "
           "rule's family correction if it has one), under the power %.0f%%",
           r->workload, r->metric, r->arm, r->reference ? " against " : "",
           r->reference ? r->reference : "", 100.0 * chosen_power(r, last),
           nmax, 100.0 * p->assurance, 100.0 * p->power);
  if (!isnan(told))
    return pilot_too_small(head, r, told);
  if (!limit)
    return core_asprintf("%s: its pilot ratio %.3g lies between the rule's "
                         "bounds, where no verdict holds even for an "
                         "interval of no width; change the rule or the "
                         "metric",
                         head, x);
  if (!isnan(at) && fabs(x / at - 1.0) <= 0.02)
    return core_asprintf("%s: its pilot ratio %.3g sits at the rule's bound "
                         "%g; change the rule or the metric, or plan larger "
                         "sizes",
                         head, x, at);
  if (!isnan(at))
    return core_asprintf("%s: its spread is too wide: the interval expected "
                         "at n = %zu is about [%.3g, %.3g] around its pilot "
                         "ratio %.3g, across the rule's bound %g",
                         head, nmax, lo, hi, x, at);
  return core_asprintf("%s: its spread is too wide: the interval expected "
                       "at n = %zu is about [%.3g, %.3g] around its pilot "
                       "ratio %.3g",
                       head, nmax, lo, hi, x);
}

static core_status pick_for(const proto_rule *rule, analysis_plan *p,
                            const char *workload, analysis_plan_pick *k,
                            core_err *err) {
  const analysis_plan_result *weak = NULL;
  k->workload = core_strdup(workload);
  for (size_t s = 0; s < p->n_sizes && k->runs == 0; s++) {
    int all = 1;
    for (size_t i = 0; i < p->n_results; i++)
      if (!strcmp(p->results[i].workload, workload) &&
          !p->results[i].secondary &&
          !(chosen_power(&p->results[i], s) >= p->power))
        all = 0;
    if (all)
      k->runs = (long)p->sizes[s];
  }
  for (size_t i = 0; k->runs == 0 && i < p->n_results; i++) {
    const analysis_plan_result *r = &p->results[i];
    size_t last = p->n_sizes - 1;
    if (!strcmp(r->workload, workload) && !r->secondary &&
        (!weak || chosen_power(r, last) < chosen_power(weak, last)))
      weak = r;
  }
  if (weak)
    k->why = why_not(rule, p, weak);
  if (!k->workload || (weak && !k->why))
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  return CORE_OK;
}

static core_status fill_picks(const proto_sheet *sh, analysis_plan *p,
                              core_err *err) {
  p->picks = core_calloc(sh->n_workloads + 1, sizeof *p->picks);
  if (!p->picks)
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  for (size_t w = 0; w < sh->n_workloads; w++) {
    int has = 0;
    for (size_t i = 0; i < p->n_results; i++)
      has |= !strcmp(p->results[i].workload, sh->workloads[w].name);
    if (!has)
      continue;
    core_status st = pick_for(&sh->rule, p, sh->workloads[w].name,
                              &p->picks[p->n_picks++], err);
    if (st != CORE_OK)
      return st;
  }
  return CORE_OK;
}

/* The plan */

/* The looks: 2 to CORE_MAX_LOOKS increasing sizes, each a size plan
 * can simulate. */
static core_status check_looks(const size_t *looks, size_t n_looks,
                               core_err *err) {
  if (n_looks == 0)
    return CORE_OK;
  if (n_looks < 2 || n_looks > CORE_MAX_LOOKS)
    return core_fail(err, CORE_EUSAGE, "--looks: 2 to %d looks",
                     CORE_MAX_LOOKS);
  for (size_t k = 0; k < n_looks; k++) {
    if (looks[k] < 1 || looks[k] > (size_t)PLAN_MAX_SIZE)
      return core_fail(err, CORE_EUSAGE, "--looks: %zu is not from 1 to %ld",
                       looks[k], PLAN_MAX_SIZE);
    if (k > 0 && looks[k] <= looks[k - 1])
      return core_fail(err, CORE_EUSAGE,
                       "--looks: looks must increase (%zu after %zu)",
                       looks[k], looks[k - 1]);
  }
  return CORE_OK;
}

static core_status check_request(const size_t *sizes, size_t n_sizes,
                                 const size_t *looks, size_t n_looks,
                                 size_t n_cells, long sims, double power,
                                 double assurance, core_err *err) {
  double draws = n_looks ? (double)looks[n_looks - 1] : 0.0;
  core_status st = check_looks(looks, n_looks, err);
  if (st != CORE_OK)
    return st;
  if (n_sizes == 0 || n_sizes > PLAN_MAX_SIZES)
    return core_fail(err, CORE_EUSAGE, "--sizes: 1 to %d sizes",
                     PLAN_MAX_SIZES);
  for (size_t s = 0; s < n_sizes; s++) {
    if (sizes[s] < 1 || sizes[s] > (size_t)PLAN_MAX_SIZE)
      return core_fail(err, CORE_EUSAGE, "--sizes: %zu is not from 1 to %ld",
                       sizes[s], PLAN_MAX_SIZE);
    if (s > 0 && sizes[s] <= sizes[s - 1])
      return core_fail(err, CORE_EUSAGE,
                       "--sizes: sizes must increase (%zu after %zu)",
                       sizes[s], sizes[s - 1]);
    draws += (double)sizes[s];
  }
  if (sims < 1 || sims > PLAN_MAX_SIMS)
    return core_fail(err, CORE_EUSAGE, "--sims: %ld is not from 1 to %ld",
                     sims, PLAN_MAX_SIMS);
  if (!(power > 0.0 && power < 1.0))
    return core_fail(err, CORE_EUSAGE,
                     "--power: %g is not between 0 and 1 (exclusive)", power);
  if (!(assurance > 0.0 && assurance < 1.0))
    return core_fail(err, CORE_EUSAGE,
                     "--assurance: %g is not between 0 and 1 (exclusive)",
                     assurance);
  draws *= 6.0 * (double)sims * (double)n_cells;
  if (draws > PLAN_MAX_DRAWS)
    return core_fail(err, CORE_EUSAGE,
                     "plan: %.3g values to draw, over the budget of %.3g "
                     "(fewer --sims or smaller --sizes)",
                     draws, PLAN_MAX_DRAWS);
  return CORE_OK;
}

/* Each family's false directional rate, per column. */
static core_status fill_families(const ctx *c, const analysis_plan_cell *cells,
                                 analysis_plan *p, core_err *err) {
  size_t nf = c->n_fams;
  p->family_workloads = core_calloc(nf + 1, sizeof *p->family_workloads);
  p->family_size = core_calloc(nf + 1, sizeof *p->family_size);
  p->p_false_family = core_calloc(nf * p->n_cols + 1, sizeof(double));
  if (!p->family_workloads || !p->family_size || !p->p_false_family)
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  for (size_t f = 0; f < nf; f++) {
    p->n_families++;
    if (!(p->family_workloads[f] =
              core_strdup(cells[c->fams[f].cells[0]].workload)))
      return core_fail(err, CORE_ENOMEM, "plan: out of memory");
    p->family_size[f] = c->fams[f].n;
    for (size_t i = 0; c->fams[f].decided && i < c->fams[f].n; i++) {
      analysis_plan_result *r = &p->results[c->fams[f].cells[i]];
      if (!(r->p_decided_family = core_calloc(p->n_cols, sizeof(double))))
        return core_fail(err, CORE_ENOMEM, "plan: out of memory");
      for (size_t s = 0; s < p->n_cols; s++)
        r->p_decided_family[s] =
            (double)c->fams[f].decided[i * p->n_cols + s] / (double)c->sims;
    }
    for (size_t s = 0; s < p->n_cols; s++)
      p->p_false_family[f * p->n_cols + s] =
          (double)c->fams[f].any_false[s] / (double)c->sims;
  }
  return CORE_OK;
}

static core_status plan_fill(const proto_sheet *sh, const ctx *c,
                             const analysis_plan_cell *cells, size_t n_cells,
                             const long *counts, const double *runs,
                             int threads, analysis_plan *p, core_err *err) {
  core_status st;
  if (!(p->results = core_calloc(n_cells ? n_cells : 1, sizeof *p->results)))
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  for (size_t i = 0; i < n_cells; i++) {
    analysis_plan_result *r = &p->results[p->n_results++];
    r->workload = core_strdup(cells[i].workload);
    r->metric = core_strdup(cells[i].metric);
    r->arm = core_strdup(cells[i].arm);
    r->reference = cells[i].reference ? core_strdup(cells[i].reference) : NULL;
    r->secondary = cells[i].secondary;
    if (!r->workload || !r->metric || !r->arm ||
        (cells[i].reference && !r->reference))
      return core_fail(err, CORE_ENOMEM, "plan: out of memory");
    if ((st = fill_result(c, &sh->rule, p, i, counts, runs,
                          null_owner(cells, i), err)) != CORE_OK ||
        (st = pilot_interval(sh, &c->cells[i], r, threads, err)) != CORE_OK)
      return st;
  }
  if ((st = fill_families(c, cells, p, err)) != CORE_OK)
    return st;
  return fill_picks(sh, p, err);
}

/* The plan's frame: its sizes, looks and outcomes. */
static analysis_plan *plan_new(const proto_rule *rule, const size_t *sizes,
                               size_t n_sizes, const size_t *looks,
                               size_t n_looks, long sims, double power,
                               double assurance, core_err *err) {
  analysis_plan *p = core_calloc(1, sizeof *p);
  if (!p || !(p->sizes = core_malloc(n_sizes * sizeof *p->sizes)) ||
      !(p->looks = core_malloc((n_looks + 1) * sizeof *p->looks))) {
    analysis_plan_free(p);
    core_fail(err, CORE_ENOMEM, "plan: out of memory");
    return NULL;
  }
  memcpy(p->sizes, sizes, n_sizes * sizeof *sizes);
  if (n_looks)
    memcpy(p->looks, looks, n_looks * sizeof *looks);
  p->n_sizes = n_sizes;
  p->n_looks = n_looks;
  p->n_cols = n_sizes + (n_looks > 0);
  p->look_confidence = n_looks
                           ? 1.0 - (1.0 - rule->confidence) / (double)n_looks
                           : rule->confidence;
  p->sims = sims;
  p->power = power;
  p->assurance = assurance;
  p->truths = PLAN_TRUTHS;
  if (fill_outcomes(rule, p, err) != CORE_OK) {
    analysis_plan_free(p);
    return NULL;
  }
  return p;
}

core_status analysis_plan_run(const proto_sheet *sh,
                              const analysis_plan_cell *cells, size_t n_cells,
                              const size_t *sizes, size_t n_sizes,
                              const size_t *looks, size_t n_looks, long sims,
                              double power, double assurance, int threads,
                              analysis_plan **out, core_err *err) {
  ctx c;
  analysis_plan *p;
  long *counts = NULL;
  double *runs = NULL;
  size_t max_atoms = 1, max_n = sizes[n_sizes - 1], slots;
  core_status st;
  *out = NULL;
  /* Its intervals are the ratio's: a verdict on the difference would
   * read as never reached. */
  if (proto_rule_on_diff(&sh->rule))
    return core_fail(err, CORE_EPROTOCOL,
                     "%s: rule: plan simulates verdicts on the ratio only, "
                     "and a verdict of this rule decides on the difference "
                     "(diff_ci_excludes, diff_above, diff_below, "
                     "diff_ci_within); plan a copy of the sheet whose rule "
                     "has only its verdicts on the ratio, or choose runs "
                     "yourself",
                     sh->path);
  if ((st = check_request(sizes, n_sizes, looks, n_looks, n_cells, sims, power,
                          assurance, err)) != CORE_OK)
    return st;
  if (!(p = plan_new(&sh->rule, sizes, n_sizes, looks, n_looks, sims, power,
                     assurance, err)))
    return err->status;
  memset(&c, 0, sizeof c);
  c.rule = &sh->rule;
  c.sims = sims;
  c.n_sizes = n_sizes;
  c.looks = looks;
  c.n_looks = n_looks;
  c.n_outcomes = p->n_outcomes;
  c.n_truths = PLAN_TRUTHS;
  slots = 2 * (n_cells ? n_cells : 1) * p->n_cols;
  counts = core_calloc(slots * p->n_outcomes, sizeof *counts);
  runs = core_calloc(slots, sizeof *runs);
  if (!counts || !runs) {
    st = core_fail(err, CORE_ENOMEM, "plan: out of memory");
    goto done;
  }
  if ((st = ctx_setup(&c, cells, n_cells, sizes, n_sizes, counts, runs,
                      err)) != CORE_OK)
    goto done;
  for (size_t s = 0; s < n_sizes + n_looks; s++)
    if (c.laws[s].na > max_atoms)
      max_atoms = c.laws[s].na;
  if (n_looks && looks[n_looks - 1] > max_n)
    max_n = looks[n_looks - 1];
  if ((st = run_workers(&c, max_n, max_atoms, threads, err)) == CORE_OK)
    st = plan_fill(sh, &c, cells, n_cells, counts, runs, threads, p, err);
done:
  ctx_free(&c, n_cells, n_sizes);
  core_free(counts);
  core_free(runs);
  if (st != CORE_OK)
    analysis_plan_free(p);
  else
    *out = p;
  return st;
}
