/* analysis.h: medians, ratios to the reference arm, percentile bootstrap
 * intervals, verdicts under the sheet's rule, and hypotheses. Only
 * analysis/ calls GSL.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_ANALYSIS_H
#define PREREG_ANALYSIS_H

#include <stddef.h>

#include "core/core.h"
#include "data/data.h"
#include "protocols/proto.h"

/** Turns off GSL's aborting error handler; main's commands call it once
 * before any analysis. */
void analysis_init(void);

/* {==== The summary of an analysis ==== */

/* A summary owns every string and array it points to, the original
 * analysis included; one analysis_summary_free frees them all. */

/* One comparison: workload x metric x non-reference arm. */
typedef struct analysis_result {
  char *workload, *metric, *arm, *reference;
  size_t n, n_reference; /* valid rows that count */
  double median, median_reference, ratio, ci_low, ci_high;
  char *verdict;      /* the first matching rule's name, or "inconclusive" */
  unsigned long seed; /* the comparison's (analysis_comparison_seed) */
  char *note; /* why the ratio or CI is missing (NaN) when it is, else NULL */
  /* A sheet with hosts: the host of a per-host entry (the sheet's rule on
   * that host's data), NULL for the cross-host entry, whose ratio is the
   * geometric mean of the counted hosts' ratios, its CI the two-level
   * bootstrap (analysis_bootstrap_hosts), its verdict one of the
   * ANALYSIS_ACROSS_ words and its medians those of the counted hosts'
   * values pooled. NULL too for a sheet without hosts. */
  char *host;
  int across;           /* 1: the cross-host entry */
  char *why;            /* cross-host: its verdict in words */
  size_t hosts_counted; /* cross-host: counted hosts with a ratio */
  double spread;        /* cross-host: largest host ratio / smallest */
} analysis_result;

/* The cross-host verdicts. */
#define ANALYSIS_ACROSS_CARRIES "carries over"
#define ANALYSIS_ACROSS_DEPENDS "host-dependent"
#define ANALYSIS_ACROSS_UNDECIDED "inconclusive"
#define ANALYSIS_ACROSS_FEW "too few hosts"

/* One host of a sheet with hosts: how much of its plan it completed, and
 * whether it counts (at least hosts.min_completed of its rounds). */
typedef struct analysis_host {
  char *name;
  long rounds_done, rounds_planned;
  int counted;
} analysis_host;

/* Per workload x metric x arm (reference included), for tables. */
typedef struct analysis_cell {
  char *workload, *metric, *arm;
  size_t n_valid, n_invalid, n_superseded, n_planned;
  double median; /* NaN when n_valid == 0 */
} analysis_cell;

typedef struct analysis_hypothesis {
  char *id, *says;
  proto_outcome outcome;
  char *reason; /* one line */
  char *claim;  /* the claim in words ("at_least(3) for bwrap on
                   startup/wall_s") */
  char *host;   /* a sheet with hosts: the host of a per-host outcome;
                   NULL for the outcome across hosts (held only when held
                   on every counted host) and without hosts */
} analysis_hypothesis;

/* Rows that do not count, grouped: reason (e.g. "superseded by amendment
 * 2", "timeout after 120 s", "exit code 1, expected 0") and count. */
typedef struct analysis_exclusion {
  char *workload, *arm, *reason;
  size_t runs;
} analysis_exclusion;

typedef struct analysis_summary {
  char *protocol, *sheet_sha256;
  int sheet_version;
  char *estimator;
  double confidence;
  long resamples;
  unsigned long seed;
  char *reference; /* the reference arm's name */
  analysis_result *results;
  size_t n_results;
  analysis_cell *cells;
  size_t n_cells;
  analysis_hypothesis *hypotheses;
  size_t n_hypotheses;
  analysis_exclusion *exclusions;
  size_t n_exclusions;
  /* A sheet with hosts (across = 1): its hosts; results and hypotheses
   * then hold the cross-host entries first, then each host's. Cells and
   * exclusions are of every host's rows together. */
  int across;
  analysis_host *hosts;
  size_t n_hosts;
  int same_verdict; /* the declared cross-host rule (hosts.across) */
  double max_spread, min_completed;
  long min_hosts;
  /* Verdicts under the original (registered) rule and hypotheses, when an
   * amendment filed after data existed changed the rule, the hypotheses
   * or data handling; NULL otherwise. */
  struct analysis_summary *original;
  char *original_why; /* why the original analysis is given */
} analysis_summary;

/** Analyses rows under sheet (the current version) and, where needed,
 * under the registered version orig (may be NULL, or equal to sheet).
 * exp: the experiment, whose chain decides supersession. threads: worker
 * threads for the bootstrap (0 = number of cores); numbers never depend
 * on it. All inputs are borrowed for the call; the summary copies what
 * it keeps. OUT: *out newly allocated (free with analysis_summary_free),
 * NULL on error. */
core_status analysis_run(const proto_sheet *sheet, const proto_sheet *orig,
                         const data_experiment *exp, const data_rowset *rows,
                         int threads, analysis_summary **out, core_err *err);
/** Frees a summary and everything it owns; NULL is a no-op. */
void analysis_summary_free(analysis_summary *s);

/** Appends `prereg analyze --json` output (interface.md section 4, plus
 * more keys) to out (the caller's buffer): deterministic, keys in a
 * fixed order, reals in their shortest exact form. CORE_ENOMEM when out
 * of memory. */
core_status analysis_json(const analysis_summary *s, core_buf *out,
                          core_err *err);

/** Appends the terminal table (arm, median with unit, ratio x, CI,
 * verdict) per workload and metric, then hypotheses and exclusions, to
 * out (the caller's buffer). */
void analysis_write_table(const analysis_summary *s, core_buf *out);

/* }==== */

/* {==== The bootstrap ==== */

/** Percentile bootstrap CI of median(cand)/median(ref): each arm
 * resampled independently at its own size, B = resamples resamples,
 * type-7 quantiles. seed is the comparison seed
 * (analysis_comparison_seed): replicate block k draws from an mt19937
 * seeded with analysis_block_seed(seed, k), and threads (0 = number of
 * cores) never changes a number. Exposed for tests and benchmarks.
 * OUT: *lo, *hi; replicates (may be NULL) is the caller's array of B
 * doubles that receives the sorted ratios. */
core_status analysis_bootstrap_ratio(const double *ref, size_t n_ref,
                                     const double *cand, size_t n_cand,
                                     long resamples, double confidence,
                                     unsigned long seed, int threads,
                                     double *lo, double *hi,
                                     double *replicates, core_err *err);

/** Replicates per block; each block has its own generator (see
 * analysis_rng_layout). Part of the stream layout: changing it changes
 * every number. */
#define ANALYSIS_BLOCK_SIZE 500

/** Arms of at most this many values draw their resample medians from
 * rank tables (inverse CDF, one or two uniforms), larger ones from Beta
 * order statistics (see analysis_rng_layout). A table costs O(n^1.5)
 * once per arm; at 2048 values that is about what the Beta draws of
 * 10,000 resamples (the default) cost, and each table draw is about 3
 * times cheaper than a Beta one. Part of the stream layout: changing it
 * changes the numbers of arms between the old and new value. */
#define ANALYSIS_TABLE_MAX 2048

/** Most values one arm may have in a bootstrap (2^31 - 1). */
#define ANALYSIS_MAX_ARM 2147483647UL

/** The stream layout in words, as written to the JSON ("rng"). */
extern const char analysis_rng_layout[];

/** The seed of one comparison, derived from the rule seed and the names
 * alone (documented in analysis/bootstrap.c): a 32-bit value, or
 * ANALYSIS_SEED_NONE when out of memory (possible only for names longer
 * than about 1 KB), which analysis_bootstrap_ratio refuses with
 * CORE_ENOMEM. */
#define ANALYSIS_SEED_NONE (~0UL)
unsigned long analysis_comparison_seed(unsigned long rule_seed,
                                       const char *workload,
                                       const char *metric, const char *arm);

/** The two-level bootstrap of a cross-host estimate: each of B =
 * resamples replicates draws n_hosts hosts with replacement, then for
 * each drawn host resamples its reference and candidate values (each at
 * its own size) and takes the ratio of their medians; the replicate is
 * the geometric mean of those ratios. Percentile CI, type-7 quantiles.
 * One gsl_rng_mt19937 seeded with analysis_block_seed(seed ^
 * 0x686f737473, 0) draws, in that order, the host (gsl_rng_uniform_int)
 * and each value (gsl_rng_uniform_int). OUT: *lo, *hi (NaN and
 * CORE_ESTATS when a drawn ratio is not positive and finite). */
core_status analysis_bootstrap_hosts(
    const double *const *ref, const size_t *n_ref, const double *const *cand,
    const size_t *n_cand, size_t n_hosts, long resamples, double confidence,
    unsigned long seed, double *lo, double *hi, core_err *err);

/** The seed of replicate block `block` of a comparison. */
unsigned long analysis_block_seed(unsigned long comparison_seed, size_t block);

/* }==== */

/* {==== Medians and quantiles ==== */

/** Median of x (even n: mean of the two middle values); x is not
 * modified. NaN for n == 0, and when it cannot copy more than 64 values
 * (out of memory). */
double analysis_median(const double *x, size_t n);

/** analysis_median without a copy: reorders x. Never allocates, so it
 * cannot fail. */
double analysis_median_inplace(double *x, size_t n);

/** Type-7 quantile of sorted x at f in [0, 1] (GSL). */
double analysis_quantile_sorted(const double *x, size_t n, double f);

/* }==== */

/* {==== Verdicts and claims ==== */

/** The verdict of the first rule in rule->verdicts that matches (the
 * boundaries documented at proto_verdict_rule), or "inconclusive"; also
 * "inconclusive" when any number is NaN. Returns a borrowed pointer into
 * rule (or a static string). */
const char *analysis_verdict(const proto_rule *rule, double ratio,
                             double ci_low, double ci_high);

/** One arm's outcome under an at_least / below / verdict_is claim h for
 * result r (NULL: no data); workload, metric and arm name it in the
 * reason. OUT: *reason a newly allocated one-line reason (core_free),
 * NULL when out of memory. */
proto_outcome analysis_claim_outcome(const proto_hypothesis *h,
                                     const analysis_result *r,
                                     const char *workload, const char *metric,
                                     const char *arm, char **reason);

/* }==== */

/** The GSL version prereg was built with ("2.7.1"): a static string. */
const char *analysis_gsl_version(void);

#endif
