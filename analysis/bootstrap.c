/* bootstrap.c: medians, type-7 quantiles and the percentile bootstrap of a
 * ratio of medians, with a random-stream layout that does not depend on
 * how many threads run it.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "analysis/analysis.h"
#include "analysis/analysis_internal.h"

/* The stream layout:
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
 * 3. Within a block, replicate by replicate: the reference arm's resample
 *    median, then the candidate arm's, each from the arm's n values
 *    sorted ascending, x[0..n-1] (so the order rows were stored in does
 *    not matter), with m = floor((n + 1) / 2). Both methods draw the
 *    exact law of the median of n indices drawn with replacement (the
 *    reasoning is in "One replicate in O(1)" below); which one an arm
 *    uses depends on its n alone:
 *    a. n <= ANALYSIS_TABLE_MAX (2048): the ranks, by inverse CDF over
 *       tables F, q and G built from n alone (analysis_rng_layout, just
 *       below, gives every operation in the order that fixes the bits;
 *       the section "Rank tables" gives the reasoning):
 *         u = gsl_rng_uniform(r); K1 = smallest k in 1..n with
 *         u < F[k];
 *         odd n:  median = x[K1 - 1];
 *         even n: v = gsl_rng_uniform(r); K2 = K1 if v < 1 - q[K1],
 *                 else K1 + J, J = smallest j in 1..n-K1 with
 *                 (v - (1 - q[K1])) / q[K1] < 1 - G(K1, j) (n-K1 if
 *                 none); median = 0.5 * (x[K1 - 1] + x[K2 - 1]).
 *    b. n > ANALYSIS_TABLE_MAX: two Beta order statistics,
 *         u = gsl_ran_beta(r, m, n - m + 1);  lo = x[ceil(n u) - 1];
 *         odd n:  median = lo;
 *         even n: v = gsl_ran_beta(r, 1, n - m);
 *                 median = 0.5 * (lo + x[ceil(n (u + (1 - u) v)) - 1]);
 *       every index clamped to [0, n - 1].
 * 4. Replicate = median(candidate resample) / median(reference
 *    resample), median as in analysis_median.
 * 5. The B replicates are sorted ascending and the interval is the type-7
 *    quantiles (gsl_stats_quantile_from_sorted_data) at a = (1 - conf)/2
 *    and 1 - a.
 */

/* The threshold in the text is the header's, expanded before it is
 * quoted. */
#define TEXT_OF(x) #x
#define TEXT_OF_VALUE(x) TEXT_OF(x)
#define TABLE_MAX_TEXT TEXT_OF_VALUE(ANALYSIS_TABLE_MAX)

const char analysis_rng_layout[] =
    "gsl_rng_mt19937; comparison seed = first 4 bytes (big-endian) of "
    "SHA-256(\"prereg-bootstrap-v1\" NUL rule_seed NUL workload NUL metric "
    "NUL arm), rule_seed in decimal; replicates in blocks of 500, block k "
    "seeded (gsl_rng_set) with first 4 bytes of SHA-256(\"prereg-block-v1\" "
    "NUL comparison_seed NUL k), both in decimal; per replicate the "
    "reference arm's resample median, then the candidate arm's, each drawn "
    "from the arm's n values x[0..n-1] sorted ascending as the exact law "
    "of the median of n values resampled with replacement, "
    "m = floor((n+1)/2). If n <= " TABLE_MAX_TEXT
    ", by inverse CDF over the ranks: "
    "u = gsl_rng_uniform(r), K1 = smallest k in 1..n with u < F[k]; odd n: "
    "median = x[K1-1]; even n: v = gsl_rng_uniform(r), K2 = K1 if "
    "v < 1-q[K1], else K1+J with J = smallest j in 1..n-K1 with "
    "(v-(1-q[K1]))/q[K1] < 1-G(K1,j) (n-K1 if none), "
    "median = 0.5*(x[K1-1]+x[K2-1]). Tables, IEEE-754 double, round to "
    "nearest, each operation rounded to double (no FMA, no x87 extended "
    "precision), in the order written, a/b of integers meaning "
    "(double)a/(double)b; in [..] every partial product is rounded to 53 "
    "bits with an unbounded exponent (fraction and power of two kept "
    "apart), and read as a double (gradual underflow) only where dbl[..] "
    "says; "
    "pw(x,e) = [x^e] by binary powering (r=1, b=x; for each bit of e from "
    "the lowest: if set r=r*b; b=b*b); C(n,j) = [product over i=1..j, left "
    "to right, of (n-j+i)/i]; F[0]=0, F[n]=1; for k=1..n-1, pk=k/n, "
    "qk=(n-k)/n: if k<m, L=[C(n,m)*pw(pk,m)*pw(qk,n-m)], rho=k/(n-k), t=1, "
    "s=1, for j=m..n-1 {t=(t*((n-j)/(j+1)))*rho; stop if s+t==s; s=s+t}, "
    "F[k]=dbl[L*s]; else L=[C(n,m-1)*pw(pk,m-1)*pw(qk,n-m+1)], "
    "rho=(n-k)/k, t=1, s=1, for j=m-1 down to 1 "
    "{t=(t*(j/(n-j+1)))*rho; stop if s+t==s; s=s+t}, F[k]=1-dbl[L*s]; "
    "then F[k]=max(F[k],F[k-1]). Even n, k=1..n: P=dbl[C(n,m)*pw(pk,m)*"
    "pw(qk,n-m)] (0 for k=n), g=P*(1-dbl[pw((k-1)/k,m)]), d=F[k]-F[k-1], "
    "q[k]=min(1,g/d) if d>0 else 0; G(k,j)=dbl[pw((n-k-j)/(n-k),n-m)]. "
    "If n > " TABLE_MAX_TEXT ", by two Beta order statistics: "
    "u = gsl_ran_beta(r, m, n-m+1), "
    "lo = x[ceil(n*u)-1]; odd n: median = lo; even n: "
    "v = gsl_ran_beta(r, 1, n-m), "
    "median = 0.5*(lo + x[ceil(n*(u+(1-u)*v))-1]), "
    "indices clamped to [0, n-1]. Replicate = median(candidate)/"
    "median(reference); type-7 quantiles "
    "(gsl_stats_quantile_from_sorted_data) of the sorted replicates at "
    "(1-confidence)/2 and 1-(1-confidence)/2";

/* First 4 bytes of SHA-256 of the NUL-separated parts, big-endian, or
 * ANALYSIS_SEED_NONE when the text does not fit on the stack and cannot
 * be allocated. The text is built on the stack whenever it fits (every
 * block seed, and comparisons with names of sane length): then nothing
 * can fail, nothing allocates inside worker threads, and no fallback can
 * silently derive a different seed. */
static unsigned long seed_from_parts(const char *const *parts, size_t n) {
  /* Zeroed only because GCC cannot see that every byte read is written. */
  char small[1024] = {0};
  char *text = small;
  char hex[CORE_SHA256_HEX];
  char head[9];
  size_t len = 0, at = 0;
  for (size_t i = 0; i < n; i++)
    len += strlen(parts[i]) + (i > 0); /* NUL separators */
  if (len > sizeof small && !(text = core_malloc(len)))
    return ANALYSIS_SEED_NONE;
  for (size_t i = 0; i < n; i++) {
    size_t k = strlen(parts[i]);
    if (i > 0)
      text[at++] = '\0';
    memcpy(text + at, parts[i], k);
    at += k;
  }
  core_sha256_hex(text, len, hex);
  if (text != small)
    core_free(text);
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

/* Medians and quantiles */

void analysis_init(void) {
  gsl_set_error_handler_off();
}

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

/* The bootstrap */

/* GSL's mt19937, read in batches:
 *
 * The replicates come from gsl_rng_mt19937 through GSL's own samplers
 * (gsl_ran_beta, and the gamma and ziggurat Gaussian it calls), which
 * read the generator through r->type->get and get_double. GSL's mt19937
 * twists and tempers one output per call; this type, handed to
 * gsl_rng_alloc, produces the same outputs (seeded as gsl_rng_set seeds
 * it: GSL's rng/mt.c, seed 0 meaning 4357, then the 2002 init_genrand)
 * but tempers 624 at a time, which made a Beta draw about a third
 * cheaper here (45 against 65 ns). test_stats rebuilds our replicates
 * with GSL's gsl_rng_mt19937 itself and requires the same bits. */

#define MT_N 624
#define MT_M 397

typedef struct mt_stream {
  uint32_t mt[MT_N];
  uint32_t out[MT_N]; /* tempered outputs of the current batch */
  int next;
} mt_stream;

static void mt_set(void *v, unsigned long s) {
  mt_stream *m = v;
  if (s == 0)
    s = 4357; /* GSL's default seed, as in gsl_rng_set */
  m->mt[0] = (uint32_t)(s & 0xffffffffUL);
  for (int i = 1; i < MT_N; i++)
    m->mt[i] =
        1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i;
  m->next = MT_N;
}

static void mt_refill(mt_stream *m) {
  uint32_t *mt = m->mt, y;
  int k;
#define MT_TWIST(a, b, c)                                                     \
  (y = (mt[a] & 0x80000000u) | (mt[b] & 0x7fffffffu),                         \
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

static unsigned long mt_get(void *v) {
  mt_stream *m = v;
  if (m->next >= MT_N)
    mt_refill(m);
  return m->out[m->next++];
}

/* As GSL's mt_get_double: the 32-bit output over 2^32. */
static double mt_get_double(void *v) {
  return mt_get(v) / 4294967296.0;
}

static const gsl_rng_type mt19937_batched = {
    "mt19937 (batched)", 0xffffffffUL, 0, sizeof(mt_stream), mt_set, mt_get,
    mt_get_double};

/* One replicate in O(1): order statistics of uniforms:
 *
 * A resample of an arm draws n indices with replacement into its values
 * sorted ascending, x[0] <= ... <= x[n-1], and takes the median. Drawing
 * an index uniformly from {0, ..., n-1} is the same as drawing U uniform
 * on (0, 1) and taking ceil(n U) - 1. The map u -> ceil(n u) is
 * non-decreasing, so the j-th smallest of the n indices is
 * ceil(n U_(j)) - 1, U_(j) the j-th smallest of the n uniforms; and as x
 * is sorted, the j-th smallest resampled value is x[ceil(n U_(j)) - 1].
 * The median needs only ranks m = (n + 1) / 2 (integer division: the
 * middle for odd n, the lower middle for even n) and, for even n, m + 1.
 * Their joint law is known exactly:
 *   U_(m) ~ Beta(m, n - m + 1);
 *   given U_(m) = u, the other n - m uniforms above u are iid uniform on
 *   (u, 1), so U_(m+1) = u + (1 - u) V with V, the smallest of n - m
 *   uniforms on (0, 1), ~ Beta(1, n - m).
 * So two Beta draws give a resample median with exactly the distribution
 * of drawing n indices, at a cost that does not depend on n: the
 * bootstrap of 1,000,000 rows takes milliseconds instead of minutes. In
 * floating point u + (1 - u) V >= u, so the two ranks never cross. A u
 * of exactly 0 or 1 (possible only through rounding) is clamped to the
 * first or last value. The stream is gsl_rng_mt19937's (read in batches,
 * above) and the sampler GSL's gsl_ran_beta, so it can be rebuilt with
 * GSL alone (tests/analysis/test_stats.c does, from this description).
 *
 * For the arms a sheet usually has (5 to a few thousand values) a Beta
 * draw is the whole cost of a replicate: GSL's gamma sampler takes
 * several uniforms, a Gaussian, a log and a pow. The rank tables below
 * draw the same law with one or two uniforms and a table look-up, and
 * with nothing but +, -, *, / and exact frexp/ldexp, so the draws are the
 * same bits on any IEEE-754 machine and libm's accuracy never enters. */

/* x[ceil(n u) - 1], clamped to [0, n - 1] (NaN cannot occur, but would
 * land on the first value rather than read out of bounds). */
static double value_at(const double *x, size_t n, double u) {
  double t = ceil((double)n * u);
  if (!(t >= 1.0))
    t = 1.0;
  if (t > (double)n)
    t = (double)n;
  return x[(size_t)t - 1];
}

/* The median of one resample of sorted x (as analysis_median computes
 * it: even n, the mean of the two middle values) for arms above
 * ANALYSIS_TABLE_MAX. Draws, in this order, gsl_ran_beta(r, m, n - m + 1)
 * and, for even n only, gsl_ran_beta(r, 1, n - m). */
static double beta_median(const gsl_rng *r, const double *x, size_t n) {
  size_t m = (n + 1) / 2;
  double u = gsl_ran_beta(r, (double)m, (double)(n - m + 1));
  double lo = value_at(x, n, u), v;
  if (n % 2 == 1)
    return lo;
  v = gsl_ran_beta(r, 1.0, (double)(n - m));
  return 0.5 * (lo + value_at(x, n, u + (1.0 - u) * v));
}

/* Rank tables: the median's ranks by inverse CDF:
 *
 * Ranks are 1-based here: K1 is the rank (in x) of the m-th smallest of
 * the n resampled indices, K2 that of the (m+1)-th.
 *
 * K1. Let S_k ~ Binomial(n, k/n) count the resampled indices among the k
 * smallest values. K1 <= k exactly when at least m of them are, so
 * F[k] = P(K1 <= k) = P(S_k >= m), and K1 = smallest k with u < F[k] for
 * u uniform on [0, 1). The tail is summed from its largest term outwards:
 * the mode of S_k is k, so for k < m the upper tail P(S_k >= m) starts
 * at j = m and its terms shrink as j grows; for k >= m we sum the lower
 * tail P(S_k <= m - 1) downwards from j = m - 1 and take 1 minus it. So
 * we always sum the side without the mode, the smaller one; its terms
 * decrease (and their ratios too: binomial terms are log-concave), so
 * once a term no longer changes the sum the rest adds at most a few
 * units in its last place, and a table costs O(n^1.5), not O(n^2): about
 * 0.3 ms for n = 2048. The first term,
 * C(n, j) p^j q^(n-j), over- or underflows a double for n in the hundreds
 * (C(2048, 1024) ~ 2^2040, (1/2)^2048): it is carried as a fraction and
 * a separate power of two (frexp/ldexp, both exact), and each product
 * rounds exactly as with an unbounded exponent.
 *
 * K2, even n. Given K1 = k, K2 = k unless exactly m indices fall at or
 * below k and the m-th is k itself: P(K1 = k, K2 > k) =
 * P(S_k = m) (1 - ((k-1)/k)^m) (given S_k = m those m indices are iid
 * uniform on 1..k, and one of them must be k). Divided by
 * P(K1 = k) = F[k] - F[k-1] that is q[k], the chance of a gap. In a gap
 * the other n - m indices are iid uniform on k+1..n, so K2 = k + J with
 * P(J > j) = ((n-k-j)/(n-k))^(n-m) = G(k, j). The gap is the usual case
 * (about 1 - 1/e of replicates for large n: the two middle draws are two
 * different values), and J is usually small (P(J > j) ~ e^-j), so
 * 1 - G(k, j) is stored for j <= GAP_STORED and computed by binary
 * search beyond.
 *
 * The law drawn is exact up to the resolution of the uniforms (2^-32,
 * gsl_rng_uniform's) and the rounding of the tables (about 1e-16 in
 * F): the Beta method above has the same kind of limit.
 * analysis_rng_layout gives each operation: changing any of them here
 * changes replicates, and test_stats rebuilds them from that text. */

/* Probabilities in the tables are products of hundreds of factors; a
 * value is frac * 2^exp2. frac is renormalised (frexp) only when it
 * leaves [2^-250, 2^250]: the product of two such fractions is then
 * still far inside the normal range, where it rounds exactly as with an
 * unbounded exponent, and frexp is called once in dozens of products
 * instead of each time (it was a third of a table's cost). */
typedef struct scaled {
  double frac;
  long exp2;
} scaled;

static scaled scaled_norm(scaled a) {
  if (a.frac < 0x1p-250 || a.frac > 0x1p250) {
    int e;
    a.frac = frexp(a.frac, &e);
    a.exp2 += e;
  }
  return a;
}

/* a * b rounded once, as if the exponent range were unbounded. */
static scaled scaled_mul(scaled a, scaled b) {
  return scaled_norm((scaled){a.frac * b.frac, a.exp2 + b.exp2});
}

/* x^e (x a positive normal double or 0) by binary powering from the
 * lowest bit of e. */
static scaled scaled_pow(double x, size_t e) {
  scaled r = {1.0, 0}, b = {x, 0};
  for (; e > 0; e >>= 1) {
    if (e & 1)
      r = scaled_mul(r, b);
    if (e > 1) /* the last square is never used */
      b = scaled_mul(b, b);
  }
  return r;
}

/* a * s read as a double (gradual underflow: ldexp rounds once more
 * only below 2^-1022). */
static double scaled_times(scaled a, double s) {
  double f = a.frac * s;
  long e = a.exp2;
  if (e < INT_MIN)
    e = INT_MIN;
  return ldexp(f, (int)e);
}

/* C(n, j) as the product, left to right, of (n - j + i) / i. */
static scaled scaled_choose(size_t n, size_t j) {
  scaled c = {1.0, 0};
  for (size_t i = 1; i <= j; i++)
    c = scaled_mul(c, (scaled){(double)(n - j + i) / (double)i, 0});
  return c;
}

/* C(n, j) p^j q^(n-j) for p = k/n, q = (n-k)/n. */
static scaled binom_term(scaled choose, size_t n, size_t k, size_t j) {
  double p = (double)k / (double)n, q = (double)(n - k) / (double)n;
  return scaled_mul(scaled_mul(choose, scaled_pow(p, j)),
                    scaled_pow(q, n - j));
}

/* P(Binomial(n, k/n) >= m) for 0 < k < n, summing the tail without the
 * mode (see above): ch_m = C(n, m), ch_m1 = C(n, m - 1), and
 * step[j] = (n - j) / (j + 1) for j = 0..n (the ratio of consecutive
 * binomial coefficients, the same for every k: computed once, it takes
 * the divisions out of the loops). */
static double rank_cdf(size_t n, size_t m, size_t k, scaled ch_m, scaled ch_m1,
                       const double *step) {
  double t = 1.0, s = 1.0, rho;
  if (k < m) {
    rho = (double)k / (double)(n - k);
    for (size_t j = m; j < n; j++) {
      t = (t * step[j]) * rho;
      if (s + t == s)
        break;
      s = s + t;
    }
    return scaled_times(binom_term(ch_m, n, k, m), s);
  }
  rho = (double)(n - k) / (double)k;
  for (size_t j = m - 1; j >= 1; j--) {
    t = (t * step[n - j]) * rho; /* step[n - j] = j / (n - j + 1) */
    if (s + t == s)
      break;
    s = s + t;
  }
  return 1.0 - scaled_times(binom_term(ch_m1, n, k, m - 1), s);
}

/* 1 - G(k, j) = P(J <= j) for a gap of span = n - k, e = n - m. */
static double gap_cdf(size_t span, size_t e, size_t j) {
  double base = (double)(span - j) / (double)span;
  return 1.0 - scaled_times(scaled_pow(base, e), 1.0);
}

/* P(J <= j) for j = 1..GAP_STORED (fills a cache line with the three
 * other fields of a rank_row). */
#define GAP_STORED 5

/* Everything one draw at rank k reads, together. */
typedef struct rank_row {
  double cdf;  /* F[k] */
  double stay; /* 1 - q[k]: no gap below it */
  /* q[k], the divisor of w; 1 where q[k] = 0, so that the branch-free
   * path below never divides by 0 (v >= 1 - 0 cannot happen, so w is
   * then never used). */
  double gap_divisor;
  /* gap_cdf[j - 1] = P(J <= j) = 1 - G(k, j) for j < n - k, and +inf
   * from j = n - k on: the search then stops at n - k at the latest, as
   * the layout's "n - k if none" says. */
  double gap_cdf[GAP_STORED];
} rank_row;

/* The tables of one n (they depend on n alone, so equal-sized arms share
 * them). Built before the threads start; read-only afterwards. */
typedef struct rank_law {
  size_t n, m;
  rank_row *row; /* k = 0..n */
  /* guide[b] = smallest k with F[k] > b / n_guide: the search for K1
   * starts there (Chen and Asau's guide table) instead of a binary
   * search. With n_guide >= 4 (n + 1) the start is already right about
   * 9 times in 10, so the branch is well predicted. n_guide is a power
   * of two, so u * n_guide is exact. */
  uint32_t *guide;
  size_t n_guide;
} rank_law;

static void rank_law_free(rank_law *law) {
  if (!law)
    return;
  core_free(law->row);
  core_free(law->guide);
  core_free(law);
}

/* The tables for n values (1 <= n <= ANALYSIS_TABLE_MAX), or NULL when
 * out of memory. */
static rank_law *rank_law_new(size_t n) {
  rank_law *law = core_calloc(1, sizeof *law);
  size_t m = (n + 1) / 2, g = 1;
  scaled ch_m, ch_m1;
  rank_row *row;
  double *step;
  if (!law)
    return NULL;
  while (g < 4 * (n + 1))
    g *= 2;
  law->n = n;
  law->m = m;
  law->n_guide = g;
  law->row = row = core_calloc(n + 1, sizeof *law->row);
  law->guide = core_malloc(g * sizeof *law->guide);
  step = core_malloc((n + 1) * sizeof *step);
  if (!law->row || !law->guide || !step) {
    core_free(step);
    rank_law_free(law);
    return NULL;
  }
  for (size_t j = 0; j <= n; j++)
    step[j] = (double)(n - j) / (double)(j + 1);
  ch_m = scaled_choose(n, m);
  ch_m1 = scaled_choose(n, m - 1);
  row[0].cdf = 0.0;
  for (size_t k = 1; k < n; k++) {
    double f = rank_cdf(n, m, k, ch_m, ch_m1, step);
    /* Rounding must not make the CDF step down. */
    row[k].cdf = f < row[k - 1].cdf ? row[k - 1].cdf : f;
  }
  row[n].cdf = 1.0;
  core_free(step);

  for (size_t k = 1, b = 0; b < g; b++) {
    while (!(row[k].cdf > (double)b / (double)g))
      k++;
    law->guide[b] = (uint32_t)k;
  }

  for (size_t k = 1; n % 2 == 0 && k <= n; k++) {
    double d = row[k].cdf - row[k - 1].cdf, q = 0.0;
    if (k < n && d > 0.0) {
      double none =
          scaled_times(scaled_pow((double)(k - 1) / (double)k, m), 1.0);
      double p = scaled_times(binom_term(ch_m, n, k, m), 1.0);
      q = p * (1.0 - none) / d;
      if (q > 1.0)
        q = 1.0;
    }
    row[k].stay = 1.0 - q;
    row[k].gap_divisor = q > 0.0 ? q : 1.0;
    for (size_t j = 1; j <= GAP_STORED; j++)
      row[k].gap_cdf[j - 1] = j < n - k ? gap_cdf(n - k, n - m, j) : INFINITY;
  }
  return law;
}

/* J for a w that no stored P(J <= j) exceeds (span > GAP_STORED then):
 * the smallest j in GAP_STORED+1..span with w < P(J <= j), or span if
 * none (w can round up to 1). P(J <= j) does not decrease with j (every
 * rounding is monotone), so a binary search finds it. */
static size_t gap_rank_far(size_t span, size_t e, double w) {
  size_t lo = GAP_STORED; /* known not to satisfy */
  size_t hi = span;       /* satisfies, or is the answer anyway */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (w < gap_cdf(span, e, mid))
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

/* gsl_rng_uniform(r), without its two calls through pointers: r is
 * always one of our mt19937_batched generators (gsl_rng_uniform would
 * return this same value). */
static double uniform(const gsl_rng *r) {
  return mt_get_double(r->state);
}

/* The median of one resample of sorted x through law's tables. Draws,
 * in this order, gsl_rng_uniform(r) for K1 and, for even n only, a
 * second for K2. Whether there is a gap, and J, are chosen without
 * branches: each is close to a coin toss, and a mispredicted branch
 * costs as much as the rest of the draw. */
static double table_median(const gsl_rng *r, const rank_law *law,
                           const double *x) {
  double u = uniform(r), v, w;
  size_t k = law->guide[(size_t)(u * (double)law->n_guide)], j, k2;
  const rank_row *row;
  while (!(u < law->row[k].cdf))
    k++;
  if (law->n % 2 == 1)
    return x[k - 1];
  row = &law->row[k];
  v = uniform(r);
  w = (v - row->stay) / row->gap_divisor;
  /* The smallest j with w < gap_cdf[j - 1] is 1 + the number of stored
   * values <= w, as they do not decrease. */
  j = 1;
  for (int i = 0; i < GAP_STORED; i++)
    j += row->gap_cdf[i] <= w;
  if (j > GAP_STORED && v >= row->stay)
    j = gap_rank_far(law->n - k, law->n - law->m, w);
  k2 = v >= row->stay ? k + j : k;
  return 0.5 * (x[k - 1] + x[k2 - 1]);
}

typedef struct job {
  const double *ref, *cand; /* sorted ascending */
  size_t n_ref, n_cand;
  /* Each arm's rank tables, or NULL above ANALYSIS_TABLE_MAX (Beta
   * draws). law_cand may equal law_ref. */
  const rank_law *law_ref, *law_cand;
  size_t resamples, n_blocks;
  unsigned long seed; /* comparison seed */
  double *out;        /* resamples slots */
  double *diff;       /* NULL, or resamples slots for mc - mr */
  /* 1: a resample whose reference median is 0 is undefined (NaN in out,
   * counted), not an error. */
  int keep_undefined;
  pthread_mutex_t lock;
  size_t next_block; /* under lock */
} job;

typedef struct worker {
  job *j;
  gsl_rng *rng;     /* gsl_rng_mt19937's stream, reseeded at each block */
  int bad;          /* a non-finite replicate */
  size_t undefined; /* keep_undefined: replicates with a reference median
                       of 0 */
} worker;

/* GSL's type-7 quantile of x at f without sorting x: the two order
 * statistics gsl_stats_quantile_from_sorted_data reads (ranks
 * lhs = (int)(f * (n - 1)) and lhs + 1) are put in place by selection, and
 * GSL's function is then called on x, so the arithmetic is GSL's and the
 * result is bit-identical to sorting first (test_stats checks this). */
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

/* The arm's method is fixed by its n alone (the stream layout, 3). */
static double resample_median(const gsl_rng *r, const rank_law *law,
                              const double *x, size_t n) {
  return law ? table_median(r, law, x) : beta_median(r, x, n);
}

static void run_block(worker *w, size_t k) {
  job *j = w->j;
  size_t first = k * ANALYSIS_BLOCK_SIZE;
  size_t end = first + ANALYSIS_BLOCK_SIZE;
  if (end > j->resamples)
    end = j->resamples;
  gsl_rng_set(w->rng, analysis_block_seed(j->seed, k));
  for (size_t b = first; b < end; b++) {
    /* Reference first, then candidate: part of the documented layout. */
    double mr = resample_median(w->rng, j->law_ref, j->ref, j->n_ref);
    double mc = resample_median(w->rng, j->law_cand, j->cand, j->n_cand);
    double t = mc / mr;
    if (mr == 0.0 && j->keep_undefined) {
      t = NAN;
      w->undefined++;
    } else if (!isfinite(t) && !j->keep_undefined)
      w->bad = 1;
    j->out[b] = t;
    if (j->diff)
      j->diff[b] = mc - mr;
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

/* Number of online cores (at least 1): what threads = 0 means. */
static int threads_default(void) {
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
  /* The analysis hands over sorted values: a check costs n, a sort
   * n log n. */
  for (size_t i = 1; i < n; i++)
    if (c[i] < c[i - 1]) {
      gsl_sort(c, 1, n);
      break;
    }
  *out = c;
  return CORE_OK;
}

/* The arguments analysis_bootstrap_ratio refuses before any work. */
static core_status check_args(size_t n_ref, size_t n_cand, long resamples,
                              double confidence, unsigned long seed,
                              core_err *err) {
  if (resamples < 1)
    return core_fail(err, CORE_ESTATS,
                     "bootstrap: resamples must be at least 1 (got %ld)",
                     resamples);
  if (!(confidence > 0.0 && confidence < 1.0))
    return core_fail(err, CORE_ESTATS,
                     "bootstrap: confidence must be between 0 and 1 "
                     "(got %g)",
                     confidence);
  if (seed == ANALYSIS_SEED_NONE)
    return core_fail(err, CORE_ENOMEM,
                     "bootstrap: out of memory deriving the seed");
  if (n_ref > ANALYSIS_MAX_ARM || n_cand > ANALYSIS_MAX_ARM)
    return core_fail(err, CORE_ESTATS,
                     "bootstrap: more than %lu values in one arm",
                     (unsigned long)ANALYSIS_MAX_ARM);
  return CORE_OK;
}

/* How many workers take j's blocks when threads (0 or less: the
 * default) are asked for. */
static size_t workers_for(const job *j, int threads) {
  if (threads <= 0)
    threads = threads_default();
  if (j->resamples < 4 * ANALYSIS_BLOCK_SIZE)
    threads = 1;
  return (size_t)threads < j->n_blocks ? (size_t)threads : j->n_blocks;
}

/* The central confidence interval of the n replicates out: sorted when
 * they are the caller's (kept), else by selection. */
static void interval(double *out, size_t n, int keep, double confidence,
                     double *lo, double *hi) {
  double a = (1.0 - confidence) / 2.0;
  if (keep) {
    gsl_sort(out, 1, n);
    *lo = analysis_quantile_sorted(out, n, a);
    *hi = analysis_quantile_sorted(out, n, 1.0 - a);
  } else {
    *lo = quantile_by_selection(out, n, a);
    *hi = quantile_by_selection(out, n, 1.0 - a);
  }
}

/* The interval of replicates out of which some are undefined (NaN): each
 * end as if the undefined ones lay beyond it, below every ratio for the
 * low end and above every ratio for the high end, so that the interval
 * holds whatever values they stand for; an end that falls on them is not
 * finite. */
static void interval_undefined(double *out, size_t n, double confidence,
                               double *lo, double *hi) {
  double a = (1.0 - confidence) / 2.0;
  for (size_t i = 0; i < n; i++)
    if (isnan(out[i]))
      out[i] = -INFINITY;
  *lo = quantile_by_selection(out, n, a);
  for (size_t i = 0; i < n; i++)
    if (out[i] == -INFINITY)
      out[i] = INFINITY;
  *hi = quantile_by_selection(out, n, 1.0 - a);
}

/* The ratio's interval: interval_undefined when some replicates are
 * undefined, else interval. */
static void ratio_interval(double *out, size_t n, int keep, size_t undefined,
                           double confidence, double *lo, double *hi) {
  if (undefined)
    interval_undefined(out, n, confidence, lo, hi);
  else
    interval(out, n, keep, confidence, lo, hi);
}

/* Ties the n_workers workers ws to j, each with its generator; fails when
 * j's output, ws or tids could not be allocated. */
static core_status make_workers(job *j, worker *ws, const pthread_t *tids,
                                size_t n_workers, core_err *err) {
  if (!j->out || !ws || !tids)
    return core_fail(err, CORE_ENOMEM, "bootstrap: out of memory");
  for (size_t i = 0; i < n_workers; i++) {
    ws[i].j = j;
    /* gsl_rng_alloc uses malloc, not core_malloc: a NULL is out of
     * memory all the same. */
    ws[i].rng = gsl_rng_alloc(&mt19937_batched);
    if (!ws[i].rng)
      return core_fail(err, CORE_ENOMEM, "bootstrap: out of memory");
  }
  return CORE_OK;
}

/* Runs every block of j on the n_workers workers ws (their generators
 * allocated): in this thread for one, else on threads tids, each taking
 * blocks from the shared counter. */
static core_status run_workers(job *j, worker *ws, pthread_t *tids,
                               size_t n_workers, size_t *undefined,
                               core_err *err) {
  size_t started;
  int bad = 0;
  if (n_workers == 1) {
    for (size_t k = 0; k < j->n_blocks; k++)
      run_block(&ws[0], k);
  } else {
    if (pthread_mutex_init(&j->lock, NULL) != 0)
      return core_fail(err, CORE_ESTATS, "bootstrap: cannot create a mutex");
    for (started = 0; started < n_workers; started++)
      if (pthread_create(&tids[started], NULL, worker_main, &ws[started]) != 0)
        break;
    /* If a thread could not start, the ones that did (or this thread)
     * still take every block: the shared counter hands out all of them. */
    if (started == 0)
      worker_main(&ws[0]);
    for (size_t i = 0; i < started; i++)
      pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&j->lock);
  }
  *undefined = 0;
  for (size_t i = 0; i < n_workers; i++) {
    bad |= ws[i].bad;
    *undefined += ws[i].undefined;
  }
  if (bad)
    return core_fail(err, CORE_ESTATS,
                     "bootstrap: a resample's reference median is 0, so the "
                     "ratio is undefined");
  return CORE_OK;
}

/* j's arms (sorted), sizes, blocks and seed, and each arm's rank tables
 * (*law_ref, *law_cand: the caller frees them), built here, before any
 * thread starts (core_malloc's fault injection is not thread-safe), and
 * shared read-only by the workers. */
static core_status job_setup(job *j, const double *sref, size_t n_ref,
                             const double *scand, size_t n_cand,
                             long resamples, unsigned long seed,
                             rank_law **law_ref, rank_law **law_cand,
                             core_err *err) {
  j->ref = sref;
  j->cand = scand;
  j->n_ref = n_ref;
  j->n_cand = n_cand;
  j->resamples = (size_t)resamples;
  j->n_blocks = (j->resamples + ANALYSIS_BLOCK_SIZE - 1) / ANALYSIS_BLOCK_SIZE;
  j->seed = seed;
  if ((n_ref <= ANALYSIS_TABLE_MAX && !(*law_ref = rank_law_new(n_ref))) ||
      (n_cand <= ANALYSIS_TABLE_MAX && n_cand != n_ref &&
       !(*law_cand = rank_law_new(n_cand))))
    return core_fail(err, CORE_ENOMEM, "bootstrap: out of memory");
  j->law_ref = *law_ref;
  j->law_cand = n_cand == n_ref ? *law_ref : *law_cand;
  return CORE_OK;
}

core_status analysis_bootstrap_ratio(const double *ref, size_t n_ref,
                                     const double *cand, size_t n_cand,
                                     long resamples, double confidence,
                                     unsigned long seed, int threads,
                                     double *lo, double *hi,
                                     double *replicates, core_err *err) {
  return analysis_bootstrap_both(ref, n_ref, cand, n_cand, resamples,
                                 confidence, seed, threads, lo, hi, NULL, NULL,
                                 replicates, NULL, err);
}

core_status analysis_bootstrap_both(const double *ref, size_t n_ref,
                                    const double *cand, size_t n_cand,
                                    long resamples, double confidence,
                                    unsigned long seed, int threads,
                                    double *lo, double *hi, double *dlo,
                                    double *dhi, double *replicates,
                                    size_t *undefined, core_err *err) {
  job j;
  worker *ws = NULL;
  pthread_t *tids = NULL;
  double *sref = NULL, *scand = NULL, *out = NULL;
  rank_law *law_ref = NULL, *law_cand = NULL;
  size_t n_workers, n_undefined = 0;
  core_status st = CORE_OK;

  memset(&j, 0, sizeof j);
  *lo = *hi = NAN;
  if (dlo && dhi)
    *dlo = *dhi = NAN;
  if ((st = check_args(n_ref, n_cand, resamples, confidence, seed, err)) !=
      CORE_OK)
    return st;
  if ((st = sorted_copy(ref, n_ref, "reference", &sref, err)) != CORE_OK ||
      (st = sorted_copy(cand, n_cand, "candidate", &scand, err)) != CORE_OK)
    goto cleanup;

  if ((st = job_setup(&j, sref, n_ref, scand, n_cand, resamples, seed,
                      &law_ref, &law_cand, err)) != CORE_OK)
    goto cleanup;

  /* A replicate costs two to four table look-ups or a few Beta draws
   * (well under a microsecond) whatever the arms' sizes, so only the
   * number of replicates decides whether threads pay off: starting and
   * joining one costs tens of microseconds, about what a block of 500
   * replicates takes. The numbers are the same either way. */
  n_workers = workers_for(&j, threads);

  /* Everything is allocated here, before any thread starts: core_malloc's
   * fault injection is not thread-safe. */
  out = replicates ? replicates : core_malloc(j.resamples * sizeof *out);
  ws = core_calloc(n_workers, sizeof *ws);
  tids = core_calloc(n_workers, sizeof *tids);
  j.out = out;
  if (dlo && dhi && !(j.diff = core_malloc(j.resamples * sizeof *j.diff))) {
    st = core_fail(err, CORE_ENOMEM, "bootstrap: out of memory");
    goto cleanup;
  }
  if ((st = make_workers(&j, ws, tids, n_workers, err)) != CORE_OK)
    goto cleanup;

  j.keep_undefined = undefined != NULL;
  st = run_workers(&j, ws, tids, n_workers,
                   undefined ? undefined : &n_undefined, err);
  /* The differences stay defined where a ratio's reference median is 0. */
  if (j.diff && (st == CORE_OK || st == CORE_ESTATS))
    interval(j.diff, j.resamples, 0, confidence, dlo, dhi);
  if (st != CORE_OK)
    goto cleanup;

  ratio_interval(out, j.resamples, replicates != NULL, n_undefined, confidence,
                 lo, hi);

cleanup:
  core_free(j.diff);
  if (ws)
    for (size_t i = 0; i < n_workers; i++) {
      if (ws[i].rng)
        gsl_rng_free(ws[i].rng);
    }
  core_free(ws);
  core_free(tids);
  if (out != replicates)
    core_free(out);
  core_free(sref);
  core_free(scand);
  rank_law_free(law_ref);
  rank_law_free(law_cand);
  return st;
}

/* The exact law of a resample median, for the plan */

/* Appends one atom, growing the array; 0 when out of memory. */
static int law_push(analysis_median_atom **a, size_t *n, size_t *cap,
                    size_t k1, size_t k2, double p) {
  if (*n == *cap) {
    size_t nc = *cap ? 2 * *cap : 64;
    analysis_median_atom *g = core_realloc(*a, nc * sizeof *g);
    if (!g)
      return 0;
    *a = g;
    *cap = nc;
  }
  (*a)[(*n)++] = (analysis_median_atom){(uint32_t)k1, (uint32_t)k2, p};
  return 1;
}

/* The even-n atoms of rank k1 (probability pk of K1 = k1): K2 = k1 with
 * 1 - q[k1], else k1 + J, P(J <= j) = 1 - G(k1, j), as the draws of
 * table_median read them. */
static int law_even_row(const rank_law *law, size_t k, double pk, double floor,
                        analysis_median_atom **a, size_t *n, size_t *cap) {
  const rank_row *row = &law->row[k];
  double q = 1.0 - row->stay, below = 0.0;
  size_t span = law->n - k, e = law->n - law->m;
  if (pk * row->stay >= floor && !law_push(a, n, cap, k, k, pk * row->stay))
    return 0;
  for (size_t j = 1; q > 0.0 && j <= span; j++) {
    double c = j < span ? gap_cdf(span, e, j) : 1.0, p = pk * q * (c - below);
    below = c;
    if (p >= floor && !law_push(a, n, cap, k, k + j, p))
      return 0;
    if (pk * q * (1.0 - c) < floor)
      break; /* the rest of the row together is below the floor */
  }
  return 1;
}

core_status analysis_median_law(size_t n, double floor,
                                analysis_median_atom **out, size_t *n_out,
                                core_err *err) {
  analysis_median_atom *a = NULL;
  size_t na = 0, cap = 0;
  rank_law *law;
  *out = NULL;
  *n_out = 0;
  if (n == 0 || n > ANALYSIS_TABLE_MAX)
    return core_fail(err, CORE_ESTATS,
                     "median law: %zu values (1 to %d are tabled)", n,
                     ANALYSIS_TABLE_MAX);
  if (!(law = rank_law_new(n)))
    return core_fail(err, CORE_ENOMEM, "median law: out of memory");
  for (size_t k = 1; k <= n; k++) {
    double pk = law->row[k].cdf - law->row[k - 1].cdf;
    int ok = 1;
    if (pk < floor)
      continue;
    if (n % 2 == 1)
      ok = law_push(&a, &na, &cap, k, k, pk);
    else
      ok = law_even_row(law, k, pk, floor, &a, &na, &cap);
    if (!ok) {
      core_free(a);
      rank_law_free(law);
      return core_fail(err, CORE_ENOMEM, "median law: out of memory");
    }
  }
  rank_law_free(law);
  *out = a;
  *n_out = na;
  return CORE_OK;
}

unsigned long analysis_plan_seed(unsigned long rule_seed, const char *workload,
                                 const char *metric, const char *arm, size_t n,
                                 int null) {
  char s[32], k[32];
  const char *parts[7];
  snprintf(s, sizeof s, "%lu", rule_seed);
  snprintf(k, sizeof k, "%zu", n);
  parts[0] = "prereg-plan-v1";
  parts[1] = s;
  parts[2] = workload;
  parts[3] = metric;
  parts[4] = arm;
  parts[5] = k;
  parts[6] = null == 2 ? "truths" : null ? "reference-only" : "pilot";
  return seed_from_parts(parts, 7);
}
