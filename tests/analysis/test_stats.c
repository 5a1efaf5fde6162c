/* test_stats.c: medians, type-7 quantiles and the bootstrap on C arrays:
 * fixtures F1 and F2, determinism across threads and runs, the documented
 * stream layout rebuilt with GSL, errors.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The layout test rebuilds the bootstrap's stream from its documentation
 * with GSL directly, as a reader of the JSON would. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "analysis/analysis.h"
#include "harness.h"

/* A small deterministic generator for test data (not the bootstrap's). */
static unsigned long lcg_state = 12345;
static double lcg(void) {
  lcg_state = (lcg_state * 6364136223846793005UL + 1442695040888963407UL);
  return (double)((lcg_state >> 11) & 0xfffffffffffffUL) / 4503599627370496.0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median by sorting, to check the selection against. */
static double sorted_median(const double *x, size_t n) {
  double *c = malloc(n * sizeof *c);
  double m;
  memcpy(c, x, n * sizeof *c);
  qsort(c, n, sizeof *c, cmp_d);
  m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
  free(c);
  return m;
}

static void test_median(void) {
  double odd[] = {3, 1, 2};
  double even[] = {4, 1, 3, 2};
  double one[] = {7.5};
  double ties[] = {2, 2, 2, 1, 2, 3};
  double keep[] = {5, 4, 3, 2, 1};
  CHECK(analysis_median(odd, 3) == 2);
  CHECK(analysis_median(even, 4) == 2.5);
  CHECK(analysis_median(one, 1) == 7.5);
  CHECK(analysis_median(ties, 6) == 2);
  CHECK(isnan(analysis_median(NULL, 0)));
  analysis_median(keep, 5);
  CHECK(keep[0] == 5 && keep[4] == 1); /* input left alone */

  /* Selection agrees with sorting on random data, with and without ties,
   * for small (stack copy) and large (heap copy) n. */
  for (size_t n = 1; n <= 200; n += (n < 20 ? 1 : 37)) {
    for (int rep = 0; rep < 20; rep++) {
      double *x = malloc(n * sizeof *x);
      int mismatch = 0;
      for (size_t i = 0; i < n; i++)
        x[i] = rep % 2 ? floor(lcg() * 5) : lcg() * 100;
      if (analysis_median(x, n) != sorted_median(x, n))
        mismatch = 1;
      CHECK(!mismatch);
      free(x);
    }
  }
}

/* F1: t = 1..B, so each value equals its rank; type-7 values from R. */
static void test_f1(void) {
  struct {
    size_t b;
    double lo, hi;
  } f1[] = {{999, 25.95, 974.05},
            {9999, 250.95, 9749.05},
            {10000, 250.975, 9750.025}};
  double a = (1.0 - 0.95) / 2.0;
  for (size_t k = 0; k < 3; k++) {
    double *t = malloc(f1[k].b * sizeof *t);
    for (size_t i = 0; i < f1[k].b; i++)
      t[i] = (double)(i + 1);
    CHECK_NEAR(analysis_quantile_sorted(t, f1[k].b, a), f1[k].lo, 1e-9);
    CHECK_NEAR(analysis_quantile_sorted(t, f1[k].b, 1.0 - a), f1[k].hi, 1e-9);
    CHECK(analysis_quantile_sorted(t, f1[k].b, 0.0) == 1.0);
    CHECK(analysis_quantile_sorted(t, f1[k].b, 1.0) == (double)f1[k].b);
    /* GSL 2.7.1 would read outside the array here. */
    CHECK(isnan(analysis_quantile_sorted(t, f1[k].b, -0.01)));
    CHECK(isnan(analysis_quantile_sorted(t, f1[k].b, 1.01)));
    CHECK(isnan(analysis_quantile_sorted(t, f1[k].b, NAN)));
    free(t);
  }
  CHECK(isnan(analysis_quantile_sorted(NULL, 0, 0.5)));
}

/* F2: the exact enumeration puts both 2.5% and 97.5% points deep inside
 * the end atoms, so any correct within-arm bootstrap gives exactly
 * [110/105, 130/100], whatever the seed. */
static void test_f2(void) {
  double ref[] = {100, 102, 105}, cand[] = {110, 111, 130};
  double support[] = {110.0 / 105, 110.0 / 102, 110.0 / 100,
                      111.0 / 105, 111.0 / 102, 111.0 / 100,
                      130.0 / 105, 130.0 / 102, 130.0 / 100};
  double *reps = malloc(10000 * sizeof *reps);
  unsigned long seeds[] = {17, 1, 0, 4242, 4294967295UL};
  for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
    double lo = 0, hi = 0;
    core_err err = {0};
    int outside = 0, sorted = 1;
    CHECK(analysis_bootstrap_ratio(ref, 3, cand, 3, 10000, 0.95, seeds[s], 1,
                                   &lo, &hi, reps, &err) == CORE_OK);
    CHECK(lo == 110.0 / 105.0);
    CHECK(hi == 1.3);
    for (size_t i = 0; i < 10000; i++) {
      int in = 0;
      for (size_t k = 0; k < 9; k++)
        in |= reps[i] == support[k];
      outside |= !in;
      if (i && reps[i] < reps[i - 1])
        sorted = 0;
    }
    CHECK(!outside);
    CHECK(sorted);
  }
  free(reps);
}

/* Numbers depend on the data, the seed and B only: not on the thread
 * count, the run, or the order of the values. */
static void test_determinism(void) {
  enum { NR = 80, NC = 95, B = 10000 };
  double ref[NR], cand[NC], shuffled[NR];
  double *r1 = malloc(B * sizeof *r1), *r2 = malloc(B * sizeof *r2);
  double *r3 = malloc(B * sizeof *r3);
  double lo1, hi1, lo2, hi2, lo3, hi3, lo4, hi4;
  core_err err = {0};
  for (size_t i = 0; i < NR; i++)
    ref[i] = 1.0 + lcg();
  for (size_t i = 0; i < NC; i++)
    cand[i] = 1.2 + lcg() * 1.5;
  CHECK(analysis_bootstrap_ratio(ref, NR, cand, NC, B, 0.95, 99, 1, &lo1, &hi1,
                                 r1, &err) == CORE_OK);
  CHECK(analysis_bootstrap_ratio(ref, NR, cand, NC, B, 0.95, 99, 2, &lo2, &hi2,
                                 r2, &err) == CORE_OK);
  CHECK(memcmp(r1, r2, B * sizeof *r1) == 0);
  CHECK(lo1 == lo2 && hi1 == hi2);
  CHECK(analysis_bootstrap_ratio(ref, NR, cand, NC, B, 0.95, 99, 0, &lo3, &hi3,
                                 r3, &err) == CORE_OK);
  CHECK(memcmp(r1, r3, B * sizeof *r1) == 0);
  /* Reversed input order: the same numbers (indices point into sorted
   * values). */
  for (size_t i = 0; i < NR; i++)
    shuffled[i] = ref[NR - 1 - i];
  CHECK(analysis_bootstrap_ratio(shuffled, NR, cand, NC, B, 0.95, 99, 2, &lo4,
                                 &hi4, NULL, &err) == CORE_OK);
  CHECK(lo4 == lo1 && hi4 == hi1);
  /* Another seed gives other replicates. */
  CHECK(analysis_bootstrap_ratio(ref, NR, cand, NC, B, 0.95, 100, 1, &lo3,
                                 &hi3, r3, &err) == CORE_OK);
  CHECK(memcmp(r1, r3, B * sizeof *r1) != 0);
  /* A B that is not a multiple of the block size: still identical. */
  CHECK(analysis_bootstrap_ratio(ref, NR, cand, NC, 10001, 0.9, 5, 1, &lo1,
                                 &hi1, NULL, &err) == CORE_OK);
  CHECK(analysis_bootstrap_ratio(ref, NR, cand, NC, 10001, 0.9, 5, 2, &lo2,
                                 &hi2, NULL, &err) == CORE_OK);
  CHECK(lo1 == lo2 && hi1 == hi2);
  CHECK(lo1 < hi1);
  free(r1);
  free(r2);
  free(r3);
}

/* Without a replicate buffer the quantiles come from selection instead
 * of a sort: the same bits. */
static void test_selection_quantiles(void) {
  long bs[] = {1, 2, 3, 7, 999, 1000, 4001};
  double confs[] = {0.5, 0.9, 0.95, 0.999};
  double ref[12], cand[9];
  for (size_t i = 0; i < 12; i++)
    ref[i] = floor(lcg() * 20) + 100; /* ties */
  for (size_t i = 0; i < 9; i++)
    cand[i] = lcg() * 30 + 100;
  for (size_t b = 0; b < sizeof bs / sizeof bs[0]; b++)
    for (size_t c = 0; c < sizeof confs / sizeof confs[0]; c++) {
      double *reps = malloc((size_t)bs[b] * sizeof *reps);
      double lo1, hi1, lo2, hi2;
      core_err err = {0};
      CHECK(analysis_bootstrap_ratio(ref, 12, cand, 9, bs[b], confs[c], 3, 1,
                                     &lo1, &hi1, reps, &err) == CORE_OK);
      CHECK(analysis_bootstrap_ratio(ref, 12, cand, 9, bs[b], confs[c], 3, 1,
                                     &lo2, &hi2, NULL, &err) == CORE_OK);
      CHECK(lo1 == lo2 && hi1 == hi2);
      CHECK(lo1 <= hi1);
      free(reps);
    }
}

/* The derivation is a function of the names and the rule seed alone. */
static void test_seeds(void) {
  unsigned long a = analysis_comparison_seed(17, "startup", "wall_s", "bwrap");
  CHECK(a == analysis_comparison_seed(17, "startup", "wall_s", "bwrap"));
  CHECK(a != analysis_comparison_seed(18, "startup", "wall_s", "bwrap"));
  CHECK(a != analysis_comparison_seed(17, "startup", "wall_s", "kata"));
  CHECK(a != analysis_comparison_seed(17, "startu", "pwall_s", "bwrap"));
  CHECK(a <= 0xffffffffUL);
  CHECK(analysis_block_seed(a, 0) != analysis_block_seed(a, 1));
}

/* The stream layout, rebuilt from its description:
 *
 * An independent reading of the layout documented in analysis/bootstrap.c
 * and in the JSON's "rng" text (analysis_rng_layout), written with GSL
 * calls and plain arithmetic alone: seeds from analysis_block_seed (whose
 * SHA-256 derivation cross_check.py rebuilds), one gsl_rng_mt19937 per
 * block of 500, and per replicate the reference then the candidate
 * median: for n <= ANALYSIS_TABLE_MAX by inverse CDF over rank tables
 * built as the text says (here with a plain search instead of the
 * library's guide table and stored gap probabilities), above it from
 * gsl_ran_beta order statistics. The library's replicates must match it
 * bit for bit, for any thread count. */

static double doc_value_at(const double *x, size_t n, double u) {
  double t = ceil((double)n * u);
  if (t < 1)
    t = 1;
  if (t > (double)n)
    t = (double)n;
  return x[(size_t)t - 1];
}

static double doc_beta_median(gsl_rng *r, const double *x, size_t n) {
  size_t m = (n + 1) / 2;
  double u = gsl_ran_beta(r, (double)m, (double)(n - m + 1)), v;
  if (n % 2)
    return doc_value_at(x, n, u);
  v = gsl_ran_beta(r, 1.0, (double)(n - m));
  return 0.5 * (doc_value_at(x, n, u) + doc_value_at(x, n, u + (1 - u) * v));
}

/* "[..]": a product rounded to 53 bits with an unbounded exponent. Kept
 * here as mant * 2^ex with mant in [1, 2) (the library keeps [0.5, 1):
 * any normal-range scaling rounds alike). */
typedef struct doc_big {
  double mant;
  long ex;
} doc_big;

static doc_big doc_big_of(double x, long ex) {
  int k;
  if (x == 0.0)
    return (doc_big){0.0, 0};
  k = ilogb(x);
  return (doc_big){scalbn(x, -k), ex + k};
}

static doc_big doc_mul(doc_big a, doc_big b) {
  return doc_big_of(a.mant * b.mant, a.ex + b.ex);
}

/* dbl[..]: the double nearest, with gradual underflow. */
static double doc_dbl(doc_big a) {
  return scalbn(a.mant, (int)a.ex);
}

/* pw(x, e): r = 1, b = x; for each bit of e from the lowest: if set
 * r = r * b; b = b * b. */
static doc_big doc_pw(double x, size_t e) {
  doc_big r = doc_big_of(1.0, 0), b = doc_big_of(x, 0);
  while (e) {
    if (e & 1)
      r = doc_mul(r, b);
    b = doc_mul(b, b);
    e >>= 1;
  }
  return r;
}

static double doc_div(size_t a, size_t b) {
  return (double)a / (double)b;
}

/* C(n, j): the product over i = 1..j, left to right, of (n-j+i)/i. */
static doc_big doc_choose(size_t n, size_t j) {
  doc_big c = doc_big_of(1.0, 0);
  for (size_t i = 1; i <= j; i++)
    c = doc_mul(c, doc_big_of(doc_div(n - j + i, i), 0));
  return c;
}

/* The tables of the text, for one n: F[0..n] and, for even n, q[0..n]. */
typedef struct doc_tables {
  size_t n, m;
  double *F, *q;
} doc_tables;

static doc_tables doc_tables_of(size_t n) {
  doc_tables t = {n, (n + 1) / 2, calloc(n + 1, sizeof(double)),
                  calloc(n + 1, sizeof(double))};
  size_t m = t.m;
  t.F[0] = 0.0;
  for (size_t k = 1; k < n; k++) {
    double p = doc_div(k, n), q = doc_div(n - k, n), rho, tt = 1, s = 1, f;
    doc_big L;
    if (k < m) {
      L = doc_mul(doc_mul(doc_choose(n, m), doc_pw(p, m)), doc_pw(q, n - m));
      rho = doc_div(k, n - k);
      for (size_t j = m; j <= n - 1; j++) {
        tt = (tt * doc_div(n - j, j + 1)) * rho;
        if (s + tt == s)
          break;
        s = s + tt;
      }
      f = doc_dbl(doc_mul(L, doc_big_of(s, 0)));
    } else {
      L = doc_mul(doc_mul(doc_choose(n, m - 1), doc_pw(p, m - 1)),
                  doc_pw(q, n - m + 1));
      rho = doc_div(n - k, k);
      for (size_t j = m - 1; j >= 1; j--) {
        tt = (tt * doc_div(j, n - j + 1)) * rho;
        if (s + tt == s)
          break;
        s = s + tt;
      }
      f = 1 - doc_dbl(doc_mul(L, doc_big_of(s, 0)));
    }
    t.F[k] = f > t.F[k - 1] ? f : t.F[k - 1];
  }
  t.F[n] = 1.0;
  for (size_t k = 1; n % 2 == 0 && k <= n; k++) {
    double P = 0, g, d = t.F[k] - t.F[k - 1];
    if (k < n)
      P = doc_dbl(doc_mul(doc_mul(doc_choose(n, m), doc_pw(doc_div(k, n), m)),
                          doc_pw(doc_div(n - k, n), n - m)));
    g = P * (1 - doc_dbl(doc_pw(doc_div(k - 1, k), m)));
    t.q[k] = d > 0 ? (g / d < 1 ? g / d : 1) : 0;
  }
  return t;
}

static double doc_table_median(gsl_rng *r, const doc_tables *t,
                               const double *x) {
  size_t n = t->n, k1 = 1, k2, j;
  double u = gsl_rng_uniform(r), v, w;
  while (!(u < t->F[k1]))
    k1++;
  if (n % 2)
    return x[k1 - 1];
  v = gsl_rng_uniform(r);
  if (v < 1 - t->q[k1])
    return 0.5 * (x[k1 - 1] + x[k1 - 1]);
  w = (v - (1 - t->q[k1])) / t->q[k1];
  for (j = 1; j < n - k1; j++) {
    double G = doc_dbl(doc_pw(doc_div(n - k1 - j, n - k1), n - t->m));
    if (w < 1 - G)
      break;
  }
  k2 = k1 + j; /* j == n - k1 when no smaller j does */
  return 0.5 * (x[k1 - 1] + x[k2 - 1]);
}

static double doc_median(gsl_rng *r, const doc_tables *t, const double *x,
                         size_t n) {
  return n <= ANALYSIS_TABLE_MAX ? doc_table_median(r, t, x)
                                 : doc_beta_median(r, x, n);
}

static void check_layout(const double *ref, size_t nr, const double *cand,
                         size_t nc, long B, unsigned long seed) {
  double *sr = malloc(nr * sizeof *sr), *sc = malloc(nc * sizeof *sc);
  double *want = malloc((size_t)B * sizeof *want);
  double *got = malloc((size_t)B * sizeof *got);
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  double lo, hi;
  core_err err = {0};
  memcpy(sr, ref, nr * sizeof *sr);
  memcpy(sc, cand, nc * sizeof *sc);
  qsort(sr, nr, sizeof *sr, cmp_d);
  qsort(sc, nc, sizeof *sc, cmp_d);
  doc_tables tr = {0}, tc = {0};
  if (nr <= ANALYSIS_TABLE_MAX)
    tr = doc_tables_of(nr);
  if (nc <= ANALYSIS_TABLE_MAX)
    tc = doc_tables_of(nc);
  for (long b = 0; b < B; b++) {
    double mr;
    if (b % ANALYSIS_BLOCK_SIZE == 0)
      gsl_rng_set(g,
                  analysis_block_seed(seed, (size_t)b / ANALYSIS_BLOCK_SIZE));
    mr = doc_median(g, &tr, sr, nr);
    want[b] = doc_median(g, &tc, sc, nc) / mr;
  }
  free(tr.F);
  free(tr.q);
  free(tc.F);
  free(tc.q);
  qsort(want, (size_t)B, sizeof *want, cmp_d);
  for (int threads = 1; threads <= 3; threads++) {
    CHECK(analysis_bootstrap_ratio(ref, nr, cand, nc, B, 0.95, seed, threads,
                                   &lo, &hi, got, &err) == CORE_OK);
    CHECK(memcmp(got, want, (size_t)B * sizeof *got) == 0);
    CHECK(lo == analysis_quantile_sorted(want, (size_t)B, 0.025));
    CHECK(hi == analysis_quantile_sorted(want, (size_t)B, 0.975));
  }
  gsl_rng_free(g);
  free(sr);
  free(sc);
  free(want);
  free(got);
}

static void test_layout(void) {
  /* Unsorted input on purpose: indices point into the sorted values. */
  double ref[] = {15.3, 14.9, 15.0, 15.4, 15.1, 14.8, 15.2};
  double cand[] = {15.5, 15.1, 16.0, 15.2, 15.7, 15.9, 15.3, 15.6};
  double one[] = {2.0}, two[] = {3.0, 1.0};
  enum { NBIG = 100001 };
  double *big_r = malloc(NBIG * sizeof *big_r);
  double *big_c = malloc((NBIG - 1) * sizeof *big_c);
  for (size_t i = 0; i < NBIG; i++)
    big_r[i] = 1.0 + lcg();
  for (size_t i = 0; i + 1 < NBIG; i++)
    big_c[i] = 1.3 + lcg();
  /* 1234 replicates: three blocks, the last one partial. */
  check_layout(ref, 7, cand, 8, 1234, 2875190329UL);
  check_layout(cand, 8, ref, 7, 2000, 0);
  check_layout(one, 1, two, 2, 1001, 4294967295UL);
  check_layout(big_r, NBIG, big_c, NBIG - 1, 2345, 17);
  /* Either side of ANALYSIS_TABLE_MAX: tables for one arm, Beta order
   * statistics for the other, in both orders. */
  check_layout(big_r, ANALYSIS_TABLE_MAX, big_c, ANALYSIS_TABLE_MAX + 1, 1500,
               5);
  check_layout(big_c, ANALYSIS_TABLE_MAX + 2, big_r, ANALYSIS_TABLE_MAX - 1,
               1500, 6);
  /* Equal sizes (the library shares one table) and ties. */
  for (size_t i = 0; i < 30; i++)
    big_c[i] = floor(big_c[i] * 10);
  check_layout(big_r, 24, big_c, 24, 3000, 7);
  check_layout(big_c, 30, big_r + 30, 30, 3000, 8);
  free(big_r);
  free(big_c);
}

static void test_errors(void) {
  double ref[] = {1, 2, 3}, cand[] = {2, 3, 4}, zero[] = {0, 0, 0};
  double bad[] = {1, NAN, 3};
  double lo, hi;
  core_err err = {0};
  CHECK(analysis_bootstrap_ratio(ref, 3, cand, 3, 0, 0.95, 1, 1, &lo, &hi,
                                 NULL, &err) == CORE_ESTATS);
  CHECK(strstr(err.msg, "resamples") != NULL);
  CHECK(analysis_bootstrap_ratio(ref, 3, cand, 3, 100, 1.0, 1, 1, &lo, &hi,
                                 NULL, &err) == CORE_ESTATS);
  CHECK(strstr(err.msg, "confidence") != NULL);
  CHECK(analysis_bootstrap_ratio(ref, 0, cand, 3, 100, 0.95, 1, 1, &lo, &hi,
                                 NULL, &err) == CORE_ESTATS);
  CHECK(strstr(err.msg, "reference arm has no values") != NULL);
  CHECK(analysis_bootstrap_ratio(bad, 3, cand, 3, 100, 0.95, 1, 1, &lo, &hi,
                                 NULL, &err) == CORE_ESTATS);
  CHECK(strstr(err.msg, "value 2 of the reference arm") != NULL);
  CHECK(analysis_bootstrap_ratio(zero, 3, cand, 3, 100, 0.95, 1, 1, &lo, &hi,
                                 NULL, &err) == CORE_ESTATS);
  CHECK(strstr(err.msg, "reference median is 0") != NULL);
  CHECK(isnan(lo) && isnan(hi));
  /* Out of memory is reported, not crashed on. */
  for (long k = 0; k < 6; k++) {
    core_status st;
    core_mem_fail_after(k, 1);
    st = analysis_bootstrap_ratio(ref, 3, cand, 3, 100, 0.95, 1, 1, &lo, &hi,
                                  NULL, &err);
    core_mem_fail_after(-1, 0);
    CHECK(st == CORE_OK || st == CORE_ENOMEM);
  }
}

/* The two-level bootstrap across hosts: exact where the answer is known,
 * the same numbers from the same seed, errors rather than NaN ratios. */
static void test_hosts_bootstrap(void) {
  double one[] = {1, 1, 1, 1}, two[] = {2, 2, 2, 2}, four[] = {4, 4, 4};
  double zero[] = {0, 0, 0}, lo, hi, lo2, hi2;
  core_err err = {0};
  /* Every host's ratio is 2 whatever is drawn: the CI is [2, 2]. */
  const double *r3[] = {one, one, one}, *c3[] = {two, two, two};
  size_t n4[] = {4, 4, 4};
  CHECK(analysis_bootstrap_hosts(r3, n4, c3, n4, 3, 2000, 0.95, 7, &lo, &hi,
                                 &err) == CORE_OK);
  CHECK_NEAR(lo, 2, 1e-12);
  CHECK_NEAR(hi, 2, 1e-12);
  /* Two hosts of ratio 1 and 4: a replicate is 1, 2 or 4 with chances
   * 1/4, 1/2, 1/4 (drawing hosts is the only randomness left), so the
   * 95% interval is [1, 4]; a single-level bootstrap of the pooled runs
   * would not see that the hosts differ. */
  const double *r2[] = {one, one}, *c2[] = {one, four};
  size_t nr[] = {4, 4}, nc[] = {4, 3};
  CHECK(analysis_bootstrap_hosts(r2, nr, c2, nc, 2, 4000, 0.95, 7, &lo, &hi,
                                 &err) == CORE_OK);
  CHECK_NEAR(lo, 1, 1e-12);
  CHECK_NEAR(hi, 4, 1e-12);
  CHECK(analysis_bootstrap_hosts(r2, nr, c2, nc, 2, 4000, 0.5, 7, &lo2, &hi2,
                                 &err) == CORE_OK);
  CHECK(lo2 >= 1 && hi2 <= 4 && lo2 <= 2 && hi2 >= 2);
  /* Same seed, same numbers; noisy values. */
  double a[] = {1.0, 1.2, 0.9, 1.1, 1.05}, b[] = {2.1, 1.9, 2.4, 2.0, 2.2};
  double c[] = {1.5, 1.4, 1.6, 1.55}, d[] = {2.9, 3.3, 3.1, 3.0};
  const double *ra[] = {a, c}, *ca[] = {b, d};
  size_t na[] = {5, 4};
  CHECK(analysis_bootstrap_hosts(ra, na, ca, na, 2, 1000, 0.95, 11, &lo, &hi,
                                 &err) == CORE_OK);
  CHECK(analysis_bootstrap_hosts(ra, na, ca, na, 2, 1000, 0.95, 11, &lo2, &hi2,
                                 &err) == CORE_OK);
  CHECK(lo == lo2 && hi == hi2 && lo < hi);
  CHECK(lo > 1.5 && hi < 2.6);
  /* A host whose reference median is 0, or a host without values. */
  const double *rz[] = {one, zero}, *cz[] = {two, two};
  size_t nz[] = {4, 3};
  CHECK(analysis_bootstrap_hosts(rz, nz, cz, nz, 2, 100, 0.95, 1, &lo, &hi,
                                 &err) == CORE_ESTATS);
  CHECK(isnan(lo) && isnan(hi));
  size_t n0[] = {4, 0};
  CHECK(analysis_bootstrap_hosts(r2, n0, c2, nc, 2, 100, 0.95, 1, &lo, &hi,
                                 &err) == CORE_ESTATS);
  for (long k = 0; k < 4; k++) {
    core_mem_fail_after(k, 1);
    core_status st = analysis_bootstrap_hosts(r3, n4, c3, n4, 3, 100, 0.95, 7,
                                              &lo, &hi, &err);
    core_mem_fail_after(-1, 0);
    CHECK(st == CORE_OK || st == CORE_ENOMEM);
  }
}

int main(void) {
  analysis_init();
  test_hosts_bootstrap();
  test_median();
  test_f1();
  test_f2();
  test_determinism();
  test_selection_quantiles();
  test_seeds();
  test_layout();
  test_errors();
  return HARNESS_END();
}
