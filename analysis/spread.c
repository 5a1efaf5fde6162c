/* spread.c: what the medians leave out: quartiles, MAD, extremes and
 * outliers of each arm's values, and whether an arm drifted over the
 * collection (a rank test between batches, or between the two halves of
 * its runs).
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "analysis/analysis.h"
#include "analysis/analysis_internal.h"

/* Spread */

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

int analysis_median_interval(const double *x, size_t n, double confidence,
                             double *lo, double *hi, core_err *err) {
  double alpha = 1.0 - confidence, *y;
  size_t j = 0; /* the interval is [y[j - 1], y[n - j]], 1-based j */
  *lo = *hi = NAN;
  /* j values below the median or fewer: 2 P(B <= j - 1), B ~ Bin(n, 1/2),
   * is what the interval misses. */
  while (j < n / 2 && 2 * gsl_cdf_binomial_P((unsigned)j, 0.5, (unsigned)n) <=
                          alpha * (1 + 1e-12))
    j++;
  if (j == 0)
    return 0;
  if (!(y = core_malloc(n * sizeof *y))) {
    core_fail(err, CORE_ENOMEM, "analysis: out of memory");
    return -1;
  }
  memcpy(y, x, n * sizeof *y);
  qsort(y, n, sizeof *y, cmp_double);
  *lo = y[j - 1];
  *hi = y[n - j];
  core_free(y);
  return 1;
}

core_status analysis_spread(double *x, size_t n, analysis_cell *c,
                            core_err *err) {
  double *dev, med, lo, hi;
  c->q1 = c->q3 = c->mad = c->min = c->max = NAN;
  c->n_outliers = 0;
  if (n == 0)
    return CORE_OK;
  qsort(x, n, sizeof *x, cmp_double);
  med = analysis_quantile_sorted(x, n, 0.5);
  c->q1 = analysis_quantile_sorted(x, n, 0.25);
  c->q3 = analysis_quantile_sorted(x, n, 0.75);
  c->min = x[0];
  c->max = x[n - 1];
  lo = c->q1 - 1.5 * (c->q3 - c->q1);
  hi = c->q3 + 1.5 * (c->q3 - c->q1);
  for (size_t i = 0; i < n; i++)
    c->n_outliers += x[i] < lo || x[i] > hi;
  dev = core_malloc(n * sizeof *dev);
  if (!dev)
    return core_fail(err, CORE_ENOMEM, "analysis: out of memory");
  for (size_t i = 0; i < n; i++)
    dev[i] = fabs(x[i] - med);
  c->mad = analysis_median_inplace(dev, n);
  core_free(dev);
  return CORE_OK;
}

/* The rank test */

/* P(U <= u) for sizes m and n without ties, by the recurrence of the
 * counts c(i, j, k) of arrangements of i and j values with U = k:
 * c(i, j, k) = c(i - 1, j, k - j) + c(i, j - 1, k), additions only.
 * prev and cur are (n + 1) rows of m * n + 1 counts each. */
static double exact_cdf(size_t m, size_t n, double u, double *prev,
                        double *cur) {
  size_t w = m * n + 1;
  double total = 0, below = 0;
  for (size_t j = 0; j <= n; j++) {
    memset(prev + j * w, 0, w * sizeof *prev);
    prev[j * w] = 1; /* i = 0: U = 0 only */
  }
  for (size_t i = 1; i <= m; i++) {
    memset(cur, 0, (n + 1) * w * sizeof *cur);
    cur[0] = 1; /* j = 0: U = 0 only */
    for (size_t j = 1; j <= n; j++)
      for (size_t k = 0; k <= i * j; k++)
        cur[j * w + k] =
            (k >= j ? prev[j * w + k - j] : 0) + cur[(j - 1) * w + k];
    memcpy(prev, cur, (n + 1) * w * sizeof *prev);
  }
  for (size_t k = 0; k < w; k++) {
    total += prev[n * w + k];
    if ((double)k <= u + 1e-9)
      below += prev[n * w + k];
  }
  return below / total;
}

core_status analysis_rank_test(const double *a, size_t na, const double *b,
                               size_t nb, double *p, core_err *err) {
  size_t n = na + nb, i = 0, j = 0;
  double *x, *y, ra = 0, ties = 0, u, mu, sigma;
  *p = 1;
  if (na == 0 || nb == 0)
    return CORE_OK;
  x = core_malloc(na * sizeof *x);
  y = core_malloc(nb * sizeof *y);
  if (!x || !y) {
    core_free(x);
    core_free(y);
    return core_fail(err, CORE_ENOMEM, "analysis: out of memory");
  }
  memcpy(x, a, na * sizeof *x);
  memcpy(y, b, nb * sizeof *y);
  qsort(x, na, sizeof *x, cmp_double);
  qsort(y, nb, sizeof *y, cmp_double);
  /* Merged in order: each run of equal values shares the mean of its
   * ranks; a's share is its count times that mean. */
  while (i < na || j < nb) {
    double v = j >= nb || (i < na && x[i] <= y[j]) ? x[i] : y[j];
    size_t ka = 0, kb = 0, first = i + j + 1;
    while (i < na && x[i] == v)
      i++, ka++;
    while (j < nb && y[j] == v)
      j++, kb++;
    ra += (double)ka * ((double)first + (double)(first + ka + kb - 1)) / 2;
    ties += pow((double)(ka + kb), 3) - (double)(ka + kb);
  }
  core_free(x);
  core_free(y);
  u = ra - (double)na * (double)(na + 1) / 2;
  mu = (double)na * (double)nb / 2;
  if (ties == 0 && n <= 60) {
    size_t cells = (nb + 1) * (na * nb + 1);
    double *prev = core_malloc(cells * sizeof *prev);
    double *cur = core_malloc(cells * sizeof *cur);
    double lo = u < mu ? u : (double)na * (double)nb - u;
    if (prev && cur)
      *p = fmin(1, 2 * exact_cdf(na, nb, lo, prev, cur));
    core_free(prev);
    core_free(cur);
    return prev && cur
               ? CORE_OK
               : core_fail(err, CORE_ENOMEM, "analysis: out of memory");
  }
  sigma = sqrt((double)na * (double)nb / 12 *
               ((double)(n + 1) - ties / ((double)n * (double)(n - 1))));
  if (!(sigma > 0))
    return CORE_OK; /* every value equal: no shift */
  *p = fmin(1, 2 * gsl_cdf_ugaussian_Q((fabs(u - mu) - 0.5) / sigma));
  return CORE_OK;
}

/* Drift */

/* One comparison of later values against earlier ones. */
static core_status compare_parts(const double *x, size_t nx, const double *y,
                                 size_t ny, analysis_drift *d, core_err *err) {
  double *copy = core_malloc((nx > ny ? nx : ny) * sizeof *copy), mx, my;
  core_status st;
  if (!copy)
    return core_fail(err, CORE_ENOMEM, "analysis: out of memory");
  memcpy(copy, x, nx * sizeof *copy);
  mx = analysis_median_inplace(copy, nx);
  memcpy(copy, y, ny * sizeof *copy);
  my = analysis_median_inplace(copy, ny);
  core_free(copy);
  d->shift = mx != 0 ? my / mx : NAN;
  st = analysis_rank_test(x, nx, y, ny, &d->p, err);
  d->tested = st == CORE_OK;
  return st;
}

/* The values of batch k, in order, into out; returns how many. */
static size_t values_of_batch(const analysis_cell *c, unsigned k,
                              double *out) {
  size_t n = 0;
  for (size_t i = 0; i < c->n_valid; i++)
    if (c->batch[i] == k)
      out[n++] = c->values[i];
  return n;
}

/* Between consecutive batches that hold 3 or more of the cell's values:
 * the pair with the smallest p. */
static core_status drift_by_batch(analysis_cell *c, size_t n_batches,
                                  double *a, double *b, core_err *err) {
  long prev = -1;
  size_t na = 0;
  for (size_t k = 0; k < n_batches; k++) {
    size_t nb = values_of_batch(c, (unsigned)k, b);
    analysis_drift d = {0};
    core_status st;
    if (nb < 3)
      continue;
    if (prev >= 0) {
      if ((st = compare_parts(a, na, b, nb, &d, err)) != CORE_OK)
        return st;
      if (!c->drift.tested || d.p < c->drift.p) {
        c->drift = d;
        c->drift.by_batch = 1;
        c->drift.earlier = (size_t)prev;
        c->drift.later = k;
      }
    }
    memcpy(a, b, nb * sizeof *a);
    na = nb;
    prev = (long)k;
  }
  return CORE_OK;
}

core_status analysis_drift_of(analysis_cell *c, size_t n_batches, double low,
                              double high, core_err *err) {
  size_t n = c->n_valid, batches = 0;
  double *a, *b;
  core_status st = CORE_OK;
  memset(&c->drift, 0, sizeof c->drift);
  if (!c->values || n < 6)
    return CORE_OK;
  for (size_t k = 0; k < n_batches; k++) {
    size_t i = 0;
    while (i < n && c->batch[i] != k)
      i++;
    batches += i < n;
  }
  a = core_malloc(n * sizeof *a);
  b = core_malloc(n * sizeof *b);
  if (!a || !b) {
    core_free(a);
    core_free(b);
    return core_fail(err, CORE_ENOMEM, "analysis: out of memory");
  }
  if (batches > 1)
    st = drift_by_batch(c, n_batches, a, b, err);
  if (st == CORE_OK && !c->drift.tested) {
    /* One batch (or batches too small): the halves in collection
     * order. */
    size_t half = n / 2;
    st = compare_parts(c->values, half, c->values + half, n - half, &c->drift,
                       err);
    c->drift.by_batch = 0;
    c->drift.earlier = half;
    c->drift.later = n - half;
  }
  core_free(a);
  core_free(b);
  c->drift.flagged = c->drift.tested && c->drift.p < ANALYSIS_DRIFT_P &&
                     isfinite(c->drift.shift) &&
                     (c->drift.shift < low || c->drift.shift > high);
  return st;
}
