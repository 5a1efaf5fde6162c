/* test_stats.c: medians, type-7 quantiles and the bootstrap on C arrays:
 * fixtures F1 and F2, determinism across threads and runs, errors.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    CHECK_NEAR(analysis_quantile_sorted(t, f1[k].b, 1.0 - a), f1[k].hi,
               1e-9);
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
  double support[] = {110.0 / 105, 110.0 / 102, 110.0 / 100, 111.0 / 105,
                      111.0 / 102, 111.0 / 100, 130.0 / 105, 130.0 / 102,
                      130.0 / 100};
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
  CHECK(analysis_bootstrap_ratio(ref, NR, cand, NC, B, 0.95, 99, 1, &lo1,
                                 &hi1, r1, &err) == CORE_OK);
  CHECK(analysis_bootstrap_ratio(ref, NR, cand, NC, B, 0.95, 99, 2, &lo2,
                                 &hi2, r2, &err) == CORE_OK);
  CHECK(memcmp(r1, r2, B * sizeof *r1) == 0);
  CHECK(lo1 == lo2 && hi1 == hi2);
  CHECK(analysis_bootstrap_ratio(ref, NR, cand, NC, B, 0.95, 99, 0, &lo3,
                                 &hi3, r3, &err) == CORE_OK);
  CHECK(memcmp(r1, r3, B * sizeof *r1) == 0);
  /* Reversed input order: the same numbers (indices point into sorted
   * values). */
  for (size_t i = 0; i < NR; i++)
    shuffled[i] = ref[NR - 1 - i];
  CHECK(analysis_bootstrap_ratio(shuffled, NR, cand, NC, B, 0.95, 99, 2,
                                 &lo4, &hi4, NULL, &err) == CORE_OK);
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
      CHECK(analysis_bootstrap_ratio(ref, 12, cand, 9, bs[b], confs[c], 3,
                                     1, &lo1, &hi1, reps, &err) == CORE_OK);
      CHECK(analysis_bootstrap_ratio(ref, 12, cand, 9, bs[b], confs[c], 3,
                                     1, &lo2, &hi2, NULL, &err) == CORE_OK);
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
  /* The batch reader is gsl_rng_mt19937 + gsl_rng_uniform_int, draw for
   * draw, including seed 0 (GSL's 4357), 32-bit seeds and n that need
   * rejections. */
  {
    unsigned long seeds[] = {0, 1, 17, 4357, 2147483648UL, 4294967295UL};
    unsigned long ns[] = {1, 2, 3, 10, 30, 1000, 100000, 65537,
                          1073741825UL, 2147483647UL};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
      for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        CHECK(analysis_rng_selfcheck(seeds[i], ns[k], 5000));
  }
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

int main(void) {
  analysis_init();
  test_median();
  test_f1();
  test_f2();
  test_determinism();
  test_selection_quantiles();
  test_seeds();
  test_errors();
  return HARNESS_END();
}
