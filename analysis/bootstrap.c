/* bootstrap.c: medians, type-7 quantiles and the percentile bootstrap of a
 * ratio of medians, with a random-stream layout that does not depend on
 * how many threads run it.
 * SPDX-License-Identifier: MIT
 */
/* The self-check calls gsl_rng_uniform_int as GSL's header defines it. */
#define HAVE_INLINE 1

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "analysis/analysis.h"

/* {==== The stream layout ====
 *
 * Everything a reader needs to reproduce our replicates with GSL alone
 * (it is also written to the JSON under "rng"):
 *
 * 1. Comparison seed. For rule seed S, workload W, metric M and
 *    non-reference arm A, the comparison seed is the first 4 bytes,
 *    big-endian, of SHA-256("prereg-bootstrap-v1" NUL S NUL W NUL M NUL A),
 *    S written in decimal. A comparison's numbers thus depend only on its
 *    own names and the rule seed: adding an arm or a workload, or
 *    reordering them, changes no other comparison.
 * 2. Blocks. Replicates 0..B-1 are cut into blocks of
 *    ANALYSIS_BLOCK_SIZE (the last one may be shorter). Block k has its
 *    own gsl_rng_mt19937, seeded (gsl_rng_set) with the first 4 bytes,
 *    big-endian, of SHA-256("prereg-block-v1" NUL C NUL k), C the
 *    comparison seed and k the block index, both in decimal. Threads take
 *    whole blocks and write to fixed slots, so the replicates are the
 *    same for any thread count.
 * 3. Within a block, replicate by replicate: n_ref indices for the
 *    reference arm, then n_cand for the candidate arm, each drawn with
 *    gsl_rng_uniform_int(r, n). Indices point into the arm's values
 *    sorted ascending (so the order rows were stored in does not matter).
 * 4. Replicate = median(candidate resample) / median(reference
 *    resample), median as in analysis_median.
 * 5. The B replicates are sorted ascending and the interval is the type-7
 *    quantiles (gsl_stats_quantile_from_sorted_data) at a = (1 - conf)/2
 *    and 1 - a.
 * }==== */

const char analysis_rng_layout[] =
    "gsl_rng_mt19937; comparison seed = first 4 bytes (big-endian) of "
    "SHA-256(\"prereg-bootstrap-v1\" NUL rule_seed NUL workload NUL metric "
    "NUL arm), rule_seed in decimal; replicates in blocks of 500, block k "
    "seeded with first 4 bytes of SHA-256(\"prereg-block-v1\" NUL "
    "comparison_seed NUL k), both in decimal; per replicate n_reference "
    "draws then n draws of gsl_rng_uniform_int into each arm's values "
    "sorted ascending; replicate = median(candidate)/median(reference); "
    "type-7 quantiles (gsl_stats_quantile_from_sorted_data) of the sorted "
    "replicates at (1-confidence)/2 and 1-(1-confidence)/2";

/* First 4 bytes of SHA-256 of the NUL-separated parts, big-endian. */
static unsigned long seed_from_parts(const char *const *parts, size_t n) {
  core_buf b;
  char hex[CORE_SHA256_HEX];
  char head[9];
  core_buf_init(&b);
  for (size_t i = 0; i < n; i++) {
    if (i > 0)
      core_buf_append(&b, "", 1); /* the NUL separator */
    core_buf_puts(&b, parts[i]);
  }
  /* On out-of-memory the digest is of a shorter text; the caller cannot
   * tell, so fall back to a digest of the parts one by one instead. */
  if (b.oom) {
    core_sha256_ctx *c = core_sha256_begin();
    for (size_t i = 0; c && i < n; i++)
      core_sha256_update(c, parts[i], strlen(parts[i]) + 1);
    if (c)
      core_sha256_end(c, hex);
    else
      memset(hex, '0', sizeof hex - 1);
    hex[CORE_SHA256_HEX - 1] = '\0';
  } else {
    core_sha256_hex(b.data ? b.data : "", b.len, hex);
  }
  core_buf_free(&b);
  memcpy(head, hex, 8);
  head[8] = '\0';
  return strtoul(head, NULL, 16);
}

unsigned long analysis_comparison_seed(unsigned long rule_seed,
                                       const char *workload,
                                       const char *metric, const char *arm) {
  char s[32];
  const char *parts[5];
  snprintf(s, sizeof s, "%lu", rule_seed);
  parts[0] = "prereg-bootstrap-v1";
  parts[1] = s;
  parts[2] = workload;
  parts[3] = metric;
  parts[4] = arm;
  return seed_from_parts(parts, 5);
}

unsigned long analysis_block_seed(unsigned long comparison_seed,
                                  size_t block) {
  char c[32], k[32];
  const char *parts[3];
  snprintf(c, sizeof c, "%lu", comparison_seed);
  snprintf(k, sizeof k, "%zu", block);
  parts[0] = "prereg-block-v1";
  parts[1] = c;
  parts[2] = k;
  return seed_from_parts(parts, 3);
}

/* }==== */

/* {==== Medians and quantiles ==== */

void analysis_init(void) { gsl_set_error_handler_off(); }

/* Hoare's selection: afterwards x[k] is the k-th smallest, everything
 * before it is <= and everything after it >=. */
static void select_kth(double *x, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    double pivot = x[lo + (hi - lo) / 2];
    size_t i = lo, j = hi;
    while (i <= j) {
      while (x[i] < pivot)
        i++;
      while (x[j] > pivot)
        j--;
      if (i <= j) {
        double t = x[i];
        x[i] = x[j];
        x[j] = t;
        i++;
        if (j == 0)
          break;
        j--;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return;
  }
}

/* The median of x, reordering x. */
static double median_inplace(double *x, size_t n) {
  size_t k = (n - 1) / 2;
  select_kth(x, n, k);
  if (n % 2 == 1)
    return x[k];
  /* The upper middle is the smallest value after x[k]. */
  double up = x[k + 1];
  for (size_t i = k + 2; i < n; i++)
    if (x[i] < up)
      up = x[i];
  return 0.5 * (x[k] + up);
}

double analysis_median_inplace(double *x, size_t n) {
  return n == 0 ? NAN : median_inplace(x, n);
}

double analysis_median(const double *x, size_t n) {
  double small[64];
  double *tmp;
  double m;
  if (n == 0)
    return NAN;
  /* The input is const; select on a copy (on the stack when small). */
  tmp = n <= 64 ? small : core_malloc(n * sizeof *tmp);
  if (!tmp)
    return NAN;
  memcpy(tmp, x, n * sizeof *tmp);
  m = median_inplace(tmp, n);
  if (tmp != small)
    core_free(tmp);
  return m;
}

double analysis_quantile_sorted(const double *x, size_t n, double f) {
  /* GSL 2.7.1 does not range-check f (bug #59624): an f outside [0, 1]
   * would read outside x. */
  if (n == 0 || !(f >= 0.0 && f <= 1.0))
    return NAN;
  return gsl_stats_quantile_from_sorted_data(x, 1, n, f);
}

/* }==== */

/* {==== The bootstrap ==== */

/* {==== GSL's mt19937, read in batches ====
 *
 * The generator is gsl_rng_mt19937 exactly: seeded as gsl_rng_set seeds
 * it (GSL's rng/mt.c: seed 0 means 4357, then the 2002 init_genrand) and
 * producing the same 32-bit outputs as gsl_rng_get. Indices follow
 * gsl_rng_uniform_int's algorithm exactly (scale = 0xffffffff / n, draw
 * k = get / scale, reject k >= n). We re-implement both here only because
 * calling GSL once per draw through its function pointer costs about
 * 10 ns on this class of machine, while the tempering done for 624
 * outputs at a time costs about 2 ns: for two arms of 100,000 values and
 * 10,000 resamples (2e9 draws) that is the difference between 20 s and
 * 5 s. analysis_rng_selfcheck() compares this path with gsl_rng_get and
 * gsl_rng_uniform_int draw by draw, and the tests run it. */

#define MT_N 624
#define MT_M 397

typedef struct mt_stream {
  uint32_t mt[MT_N];
  uint32_t out[MT_N]; /* tempered outputs of the current batch */
  int next;
} mt_stream;

static void mt_seed(mt_stream *m, unsigned long s) {
  if (s == 0)
    s = 4357; /* GSL's default seed, as in gsl_rng_set */
  m->mt[0] = (uint32_t)(s & 0xffffffffUL);
  for (int i = 1; i < MT_N; i++)
    m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) +
               (uint32_t)i;
  m->next = MT_N;
}

static void mt_refill(mt_stream *m) {
  uint32_t *mt = m->mt, y;
  int k;
#define MT_TWIST(a, b, c)                                                    \
  (y = (mt[a] & 0x80000000u) | (mt[b] & 0x7fffffffu),                        \
   mt[a] = mt[c] ^ (y >> 1) ^ (-(y & 1u) & 0x9908b0dfu))
  for (k = 0; k < MT_N - MT_M; k++)
    MT_TWIST(k, k + 1, k + MT_M);
  for (; k < MT_N - 1; k++)
    MT_TWIST(k, k + 1, k + (MT_M - MT_N));
  MT_TWIST(MT_N - 1, 0, MT_M - 1);
#undef MT_TWIST
  for (int i = 0; i < MT_N; i++) {
    uint32_t t = mt[i];
    t ^= t >> 11;
    t ^= (t << 7) & 0x9d2c5680u;
    t ^= (t << 15) & 0xefc60000u;
    t ^= t >> 18;
    m->out[i] = t;
  }
  m->next = 0;
}

static inline uint32_t mt_get(mt_stream *m) {
  if (m->next >= MT_N)
    mt_refill(m);
  return m->out[m->next++];
}

/* gsl_rng_uniform_int(r, n) for mt19937 (min 0, max 0xffffffff): draw
 * k = get / scale with scale = 0xffffffff / n, reject k >= n. The
 * division by scale is done as a multiplication by inv = floor(2^64 /
 * scale) + 1, keeping the high 64 bits: for every 32-bit x this is exactly
 * floor(x / scale), because the error x * (inv - 2^64 / scale) / 2^64 is
 * below 2^-32 <= 1 / scale, less than the distance from x / scale to the
 * next integer. A hardware division per draw cost a fifth of the time of
 * a small comparison. */
typedef struct index_div {
  uint32_t n, scale;
  uint64_t inv;
} index_div;

static index_div index_div_make(uint32_t n) {
  index_div d;
  d.n = n;
  d.scale = 0xffffffffu / n;
  d.inv = UINT64_MAX / d.scale + 1; /* fits: scale >= 2 as n < 2^31 */
  return d;
}

/* floor(x / scale), candidates >= n are rejected by the caller. */
static inline uint32_t index_of(uint32_t x, const index_div *d) {
#if defined(__SIZEOF_INT128__)
  __extension__ typedef unsigned __int128 u128;
  return (uint32_t)(((u128)x * d->inv) >> 64);
#else
  return x / d->scale;
#endif
}

static inline uint32_t mt_index(mt_stream *m, const index_div *d) {
  uint32_t k;
  do
    k = index_of(mt_get(m), d);
  while (k >= d->n);
  return k;
}

int analysis_rng_selfcheck(unsigned long seed, unsigned long n,
                           size_t draws) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  mt_stream *m = core_malloc(sizeof *m);
  int same = r && m && n > 0 && n <= ANALYSIS_MAX_ARM;
  if (same) {
    index_div d = index_div_make((uint32_t)n);
    gsl_rng_set(r, seed);
    mt_seed(m, seed);
    for (size_t i = 0; same && i < draws; i++)
      same = gsl_rng_get(r) == mt_get(m);
    for (size_t i = 0; same && i < draws; i++)
      same = gsl_rng_uniform_int(r, n) == mt_index(m, &d);
  }
  if (r)
    gsl_rng_free(r);
  core_free(m);
  return same;
}

/* }==== */

typedef struct job {
  const double *ref, *cand; /* sorted ascending */
  size_t n_ref, n_cand;
  index_div div_ref, div_cand;
  size_t resamples, n_blocks;
  unsigned long seed; /* comparison seed */
  double *out;        /* resamples slots */
  pthread_mutex_t lock;
  size_t next_block; /* under lock */
} job;

typedef struct worker {
  job *j;
  mt_stream *rng;
  unsigned *counts; /* max(n_ref, n_cand) */
  int bad;          /* a non-finite replicate */
} worker;

/* The median of a resample of sorted x: n indices drawn as
 * gsl_rng_uniform_int draws them and counted, then the middle order
 * statistics read off the counts. This is a counting selection, O(n) with
 * no copy of the values and no sort, and it gives exactly the median of
 * the resampled values because x is sorted. */
/* GSL's type-7 quantile of x at f without sorting x: the two order
 * statistics gsl_stats_quantile_from_sorted_data reads (ranks
 * lhs = (int)(f * (n - 1)) and lhs + 1) are put in place by selection, and
 * GSL's function is then called on x, so the arithmetic is GSL's and the
 * result is bit-identical to sorting first (test_stats checks this). Full
 * sorting took a third of the time of a small comparison. */
static double quantile_by_selection(double *x, size_t n, double f) {
  double index = f * (double)(n - 1);
  size_t lhs = (size_t)(int)index; /* as GSL computes it */
  if (!(f >= 0.0 && f <= 1.0) || n == 0)
    return NAN;
  select_kth(x, n, lhs);
  if (lhs + 1 < n) {
    /* Everything after lhs is >= x[lhs]: the next order statistic is the
     * smallest of them. */
    size_t m = lhs + 1;
    for (size_t i = lhs + 2; i < n; i++)
      if (x[i] < x[m])
        m = i;
    double t = x[lhs + 1];
    x[lhs + 1] = x[m];
    x[m] = t;
  }
  return gsl_stats_quantile_from_sorted_data(x, 1, n, f);
}

static double resample_median(mt_stream *r, const double *x, size_t n,
                              const index_div *div, unsigned *counts) {
  size_t lo_rank = (n - 1) / 2, hi_rank = n / 2; /* 0-based ranks */
  size_t seen = 0, i = 0;
  double lo;
  /* The stream position lives in a local while counting: counts and the
   * stream's fields may alias as far as the compiler knows, which would
   * store and reload it at every draw. */
  int next = r->next;
  memset(counts, 0, n * sizeof *counts);
  for (size_t d = 0; d < n; d++) {
    uint32_t k;
    do {
      if (next >= MT_N) {
        mt_refill(r);
        next = 0;
      }
      k = index_of(r->out[next++], div);
    } while (k >= div->n);
    counts[k]++;
  }
  r->next = next;
  /* Walk the counts until the lower middle rank is covered. */
  while (seen + counts[i] <= lo_rank)
    seen += counts[i++];
  lo = x[i];
  if (hi_rank == lo_rank)
    return lo;
  if (seen + counts[i] > hi_rank)
    return 0.5 * (lo + x[i]);
  seen += counts[i++];
  while (counts[i] == 0)
    i++;
  return 0.5 * (lo + x[i]);
}

static void run_block(worker *w, size_t k) {
  job *j = w->j;
  size_t first = k * ANALYSIS_BLOCK_SIZE;
  size_t end = first + ANALYSIS_BLOCK_SIZE;
  if (end > j->resamples)
    end = j->resamples;
  mt_seed(w->rng, analysis_block_seed(j->seed, k));
  for (size_t b = first; b < end; b++) {
    double mr =
        resample_median(w->rng, j->ref, j->n_ref, &j->div_ref, w->counts);
    double mc =
        resample_median(w->rng, j->cand, j->n_cand, &j->div_cand, w->counts);
    double t = mc / mr;
    if (!isfinite(t))
      w->bad = 1;
    j->out[b] = t;
  }
}

static void *worker_main(void *arg) {
  worker *w = arg;
  job *j = w->j;
  for (;;) {
    size_t k;
    pthread_mutex_lock(&j->lock);
    k = j->next_block++;
    pthread_mutex_unlock(&j->lock);
    if (k >= j->n_blocks)
      break;
    run_block(w, k);
  }
  return NULL;
}

int analysis_threads_default(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1)
    return 1;
  return n > 64 ? 64 : (int)n;
}

/* A sorted copy, checked for values a ratio of medians cannot use. */
static core_status sorted_copy(const double *x, size_t n, const char *what,
                               double **out, core_err *err) {
  double *c;
  if (n == 0)
    return core_fail(err, CORE_ESTATS, "bootstrap: the %s arm has no values",
                     what);
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return core_fail(err, CORE_ESTATS,
                       "bootstrap: value %zu of the %s arm is not finite",
                       i + 1, what);
  c = core_malloc(n * sizeof *c);
  if (!c)
    return core_fail(err, CORE_ENOMEM, "bootstrap: out of memory");
  memcpy(c, x, n * sizeof *c);
  gsl_sort(c, 1, n);
  *out = c;
  return CORE_OK;
}

core_status analysis_bootstrap_ratio(const double *ref, size_t n_ref,
                                     const double *cand, size_t n_cand,
                                     long resamples, double confidence,
                                     unsigned long seed, int threads,
                                     double *lo, double *hi,
                                     double *replicates, core_err *err) {
  job j;
  worker *ws = NULL;
  pthread_t *tids = NULL;
  double *sref = NULL, *scand = NULL, *out = NULL;
  size_t maxn, n_workers, started = 0;
  double a;
  int bad = 0;
  core_status st = CORE_OK;

  *lo = *hi = NAN;
  if (resamples < 1)
    return core_fail(err, CORE_ESTATS,
                     "bootstrap: resamples must be at least 1 (got %ld)",
                     resamples);
  if (!(confidence > 0.0 && confidence < 1.0))
    return core_fail(err, CORE_ESTATS,
                     "bootstrap: confidence must be between 0 and 1 "
                     "(got %g)",
                     confidence);
  if (n_ref > ANALYSIS_MAX_ARM || n_cand > ANALYSIS_MAX_ARM)
    return core_fail(err, CORE_ESTATS,
                     "bootstrap: more than %lu values in one arm",
                     (unsigned long)ANALYSIS_MAX_ARM);
  if ((st = sorted_copy(ref, n_ref, "reference", &sref, err)) != CORE_OK ||
      (st = sorted_copy(cand, n_cand, "candidate", &scand, err)) != CORE_OK)
    goto cleanup;

  memset(&j, 0, sizeof j);
  j.ref = sref;
  j.cand = scand;
  j.n_ref = n_ref;
  j.n_cand = n_cand;
  j.div_ref = index_div_make((uint32_t)n_ref);
  j.div_cand = index_div_make((uint32_t)n_cand);
  j.resamples = (size_t)resamples;
  j.n_blocks = (j.resamples + ANALYSIS_BLOCK_SIZE - 1) / ANALYSIS_BLOCK_SIZE;
  j.seed = seed;

  /* Threads pay off from about 1e5 draws (a few hundred microseconds of
   * work; starting and joining a thread costs tens): a typical comparison
   * of 20 runs per arm at 10,000 resamples is 4e5 draws. The numbers are
   * the same either way. */
  if (threads <= 0)
    threads = analysis_threads_default();
  if ((double)j.resamples * (double)(n_ref + n_cand) < 1e5)
    threads = 1;
  n_workers = (size_t)threads < j.n_blocks ? (size_t)threads : j.n_blocks;
  maxn = n_ref > n_cand ? n_ref : n_cand;

  /* Everything is allocated here, before any thread starts: core_malloc's
   * fault injection is not thread-safe. */
  out = replicates ? replicates : core_malloc(j.resamples * sizeof *out);
  ws = core_calloc(n_workers, sizeof *ws);
  tids = core_calloc(n_workers, sizeof *tids);
  if (!out || !ws || !tids) {
    st = core_fail(err, CORE_ENOMEM, "bootstrap: out of memory");
    goto cleanup;
  }
  j.out = out;
  for (size_t i = 0; i < n_workers; i++) {
    ws[i].j = &j;
    ws[i].counts = core_malloc(maxn * sizeof *ws[i].counts);
    ws[i].rng = core_malloc(sizeof *ws[i].rng);
    if (!ws[i].counts || !ws[i].rng) {
      st = core_fail(err, CORE_ENOMEM, "bootstrap: out of memory");
      goto cleanup;
    }
  }

  if (n_workers == 1) {
    for (size_t k = 0; k < j.n_blocks; k++)
      run_block(&ws[0], k);
  } else {
    if (pthread_mutex_init(&j.lock, NULL) != 0) {
      st = core_fail(err, CORE_ESTATS, "bootstrap: cannot create a mutex");
      goto cleanup;
    }
    for (started = 0; started < n_workers; started++)
      if (pthread_create(&tids[started], NULL, worker_main, &ws[started]) !=
          0)
        break;
    /* If a thread could not start, the ones that did (or this thread)
     * still take every block: the shared counter hands out all of them. */
    if (started == 0)
      worker_main(&ws[0]);
    for (size_t i = 0; i < started; i++)
      pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&j.lock);
  }
  for (size_t i = 0; i < n_workers; i++)
    bad |= ws[i].bad;
  if (bad) {
    st = core_fail(err, CORE_ESTATS,
                   "bootstrap: a resample's reference median is 0, so the "
                   "ratio is undefined");
    goto cleanup;
  }

  a = (1.0 - confidence) / 2.0;
  if (replicates) {
    gsl_sort(out, 1, j.resamples);
    *lo = analysis_quantile_sorted(out, j.resamples, a);
    *hi = analysis_quantile_sorted(out, j.resamples, 1.0 - a);
  } else {
    *lo = quantile_by_selection(out, j.resamples, a);
    *hi = quantile_by_selection(out, j.resamples, 1.0 - a);
  }

cleanup:
  if (ws)
    for (size_t i = 0; i < n_workers; i++) {
      core_free(ws[i].counts);
      core_free(ws[i].rng);
    }
  core_free(ws);
  core_free(tids);
  if (out != replicates)
    core_free(out);
  core_free(sref);
  core_free(scand);
  return st;
}

/* }==== */
