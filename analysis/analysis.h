/* analysis.h: medians, ratios to the reference arm, percentile bootstrap
 * intervals, verdicts under the sheet's rule, and hypotheses. Only
 * analysis/ calls GSL.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_ANALYSIS_H
#define PREREG_ANALYSIS_H

#include <stddef.h>

#include "core/core.h"
#include "core/limits.h"
#include "data/data.h"
#include "protocols/proto.h"
#include "stamps/stamps.h"

/** Turns off GSL's aborting error handler; main's commands call it once
 * before any analysis. */
void analysis_init(void);

/* The summary of an analysis */

/* A summary owns every string and array it points to, the original
 * analysis included; one analysis_summary_free frees them all. */

/* One comparison: workload x metric x non-reference arm. */
typedef struct analysis_result {
  char *workload, *metric, *arm, *reference;
  size_t n, n_reference; /* valid rows that count */
  double median, median_reference, ratio, ci_low, ci_high;
  /* median - median_reference in the metric's unit, and its percentile
   * CI from the same resamples as the ratio's (the differences of the
   * resampled medians); the CI is NaN where the ratio's is for want of
   * values, and for a cross-host entry. */
  double difference, difference_ci_low, difference_ci_high;
  /* The word the first matching rule reads on this metric
   * (proto_verdict_word: "slower" on a time, "more memory" where the
   * sheet names it so), "inconclusive", or ANALYSIS_INSUFFICIENT when an
   * arm has fewer values than the rule's min_n; rule_verdict is that
   * rule's own name (or the same "inconclusive" / ANALYSIS_INSUFFICIENT),
   * the same across metrics and across amendments that change the words
   * only. */
  char *verdict, *rule_verdict;
  int worse;              /* 1: the arm fares worse than the reference (by the
                             metric's direction), -1 better, 0 neither */
  proto_metric_kind kind; /* what the metric measures */
  int higher_better;      /* the metric is better higher */
  unsigned long seed;     /* the comparison's (analysis_comparison_seed) */
  int exploratory;        /* a pair of analyze --pairs no hypothesis tests */
  char *note; /* why the ratio or CI is missing (NaN) when it is, else NULL */
  /* A sheet with hosts: the host of a per-host entry (the sheet's rule on
   * that host's data), NULL for the cross-host entry, whose ratio is the
   * geometric mean of the counted hosts' ratios, its CI the two-level
   * bootstrap (analysis_bootstrap_hosts), its verdict one of the
   * ANALYSIS_ACROSS_ words and its medians those of the counted hosts'
   * values pooled. NULL too for a sheet without hosts. */
  char *host;
  int across; /* 1: the cross-host entry */
  char *why;  /* cross-host: its verdict in words; else, when no verdict
                 rule matched a ratio with a CI, why (each rule's first
                 condition that fails), else NULL */
  size_t hosts_counted; /* cross-host: counted hosts with a ratio */
  double spread;        /* cross-host: largest host ratio / smallest */
  /* The error as registered: the workload's looks (none: a fixed
   * design), the look the verdict is at (1-based; the look it stopped
   * at, else the last; 0 without looks), the confidence its interval
   * was made at (the look's share of the error, then the family's
   * correction), and the comparisons of its family (1 without one). */
  long looks[CORE_MAX_LOOKS];
  size_t n_looks;
  long look;
  double confidence_used;
  size_t family_size;
} analysis_result;

/* The cross-host verdicts. */
#define ANALYSIS_ACROSS_CARRIES "carries over"
#define ANALYSIS_ACROSS_DEPENDS "host-dependent"
#define ANALYSIS_ACROSS_UNDECIDED "inconclusive"
#define ANALYSIS_ACROSS_FEW "too few hosts"

/* One host of a sheet with hosts: how much of its plan it completed, and
 * whether it counts (at least hosts.min_completed of its rounds); its
 * runs against its own plan (data_counter_hosts), which make its own
 * entries provisional when it is incomplete or quick. */
typedef struct analysis_host {
  char *name;
  long rounds_done, rounds_planned;
  int counted;
  data_status status;
} analysis_host;

/* Whether an arm's runs moved over the collection (analysis/spread.c):
 * its later runs against its earlier ones, between consecutive batches
 * when its runs span batches (the pair with the smallest p), else the
 * second half of its runs in collection order against the first. */
typedef struct analysis_drift {
  int tested;   /* 0: too few runs (fewer than 3 on a side) */
  int by_batch; /* 1: between batches, 0: halves in collection order */
  size_t earlier, later; /* batch indexes (by_batch), else the runs on
                            each side */
  double shift;          /* median(later) / median(earlier) */
  double p;              /* two-sided p of the Mann-Whitney rank test */
  int flagged;           /* p < ANALYSIS_DRIFT_P and shift outside the noise
                            band (analysis_summary.noise_low/high) */
} analysis_drift;

/* Per workload x metric x arm (reference included), for tables. */
typedef struct analysis_cell {
  char *workload, *metric, *arm;
  size_t n_valid;                           /* values analysed */
  size_t n_invalid, n_superseded, n_beyond; /* runs not analysed */
  size_t n_planned;
  double median; /* NaN when n_valid == 0 */
  /* The spread of the valid values (NaN when there are none): type-7
   * quartiles, median absolute deviation (not scaled), the extremes, and
   * how many lie beyond Tukey's fences (1.5 IQR outside the quartiles):
   * counted, never removed. */
  double q1, q3, mad, min, max;
  size_t n_outliers;
  analysis_drift drift;
  /* The valid values in collection order, each with its position among
   * all rows read (0-based) and its batch (an index into the summary's
   * batches): what a run-order plot shows. NULL (n_valid values
   * otherwise) in the original analysis and in hand-built summaries. */
  double *values;
  unsigned *order, *batch;
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
  /* Each version's time-stamp and signature (analysis_experiment fills
   * it; owned, core_free), written as `registration`. */
  struct data_registration *registration;
  size_t n_registration;
  char *estimator;
  double confidence;
  long resamples;
  unsigned long seed;
  long min_n;      /* the fewest values per arm for a verdict */
  int family;      /* the rule's proto_family */
  int looks;       /* 1: a workload has looks (the rule's spending) */
  char *reference; /* the reference arm's name */
  analysis_result *results;
  size_t n_results;
  /* The rule's pairs (proto_pairs): every pair of the arms besides the
   * reference, each later arm in sheet order as `arm` against each
   * earlier one as `reference`, in workload, metric, arm, reference
   * order; none unless the rule's pairs = "all" (registered) or analyze
   * --pairs (exploratory: pairs_exploratory). Kept apart from results,
   * whose entries are keyed by (workload, metric, arm) against the
   * sheet's reference; a pair is keyed by (workload, metric, arm,
   * reference). */
  analysis_result *pairs;
  size_t n_pairs;
  int pairs_exploratory;
  analysis_cell *cells;
  size_t n_cells;
  analysis_hypothesis *hypotheses;
  size_t n_hypotheses;
  analysis_exclusion *exclusions;
  size_t n_exclusions;
  /* A sheet with hosts (across = 1): results and hypotheses hold the
   * entries across hosts (host NULL), one per comparison and hypothesis
   * as for a sheet without hosts; host_results and host_hypotheses each
   * host's (host set), host after host. Cells and exclusions are of every
   * host's rows together. */
  int across;
  analysis_host *hosts;
  size_t n_hosts;
  analysis_result *host_results;
  size_t n_host_results;
  analysis_hypothesis *host_hypotheses;
  size_t n_host_hypotheses;
  int same_verdict; /* the declared cross-host rule (hosts.across) */
  double max_spread, min_completed;
  long min_hosts;

  /* The batches rows came from, in the order first seen. */
  char **batches;
  size_t n_batches;
  size_t n_rows; /* rows read */
  /* What the rule counts as noise, for drift: its tie band (a verdict
   * with ci_within), else 1/x to x for its smallest ratio_above x > 1,
   * else 0.95 to 1.05. */
  double noise_low, noise_high;
  /* The collection against the plan (data/count.c); the caller sets
   * status.unverified when the data did not verify. */
  data_status status;
  int provisional; /* incomplete or quick data: every verdict and outcome
                      is provisional */
  /* The registered sample: the analysis under version 0 (its plan's runs,
   * its rule and hypotheses, nothing superseded), when an amendment filed
   * after data existed changed the runs planned, the rule, the hypotheses
   * or what counts; NULL otherwise. */
  struct analysis_summary *original;
  char *original_why; /* what changed, in words */
  /* A sheet with `published`: one entry per published ratio, in the
   * sheet's order (analysis_replication); NULL and 0 otherwise. */
  struct analysis_replication *replication;
  size_t n_replication;
  /* The outcomes counted (a replication's sheet only). */
  size_t n_replicated, n_not_replicated, n_rep_inconclusive;
  /* A replication's sheet with the original's data: per hypothesis (as
   * s->hypotheses), the original's outcome word ("held"; NULL when the
   * original has no hypothesis by that id) and the outcome word of the
   * replication; NULL otherwise. */
  const char **hyp_original, **hyp_outcome;
} analysis_summary;

/* The outcome words of a replication. */
#define ANALYSIS_REPLICATED "replicated"
#define ANALYSIS_NOT_REPLICATED "not replicated"
#define ANALYSIS_REP_INCONCLUSIVE "inconclusive"

/* One published ratio against the one measured here. ratio_of_ratios is
 * the replication's ratio over the published one; its interval is the
 * percentile bootstrap of that quotient, each experiment's runs
 * resampled within its arms (both raw data sets: a replication's sheet
 * whose original data are under DATA/ID/original/), else NaN. outcome
 * (a replication's sheet only, else NULL): replicated (both decided,
 * the same decision), not replicated (both decided differently, or the
 * comparison is not here: why says so), inconclusive (either
 * undecided). */
typedef struct analysis_replication {
  const proto_published *published; /* the sheet's entry */
  const analysis_result *result;    /* here, or NULL */
  double ratio_of_ratios, ci_low, ci_high;
  const char *outcome;
  /* not replicated for want of the comparison, or why the ratio of
   * ratios has no interval (an arm of either below the level's fewest
   * values, proto_effective_min_n), else NULL */
  char *why;
  /* The original's own decision (its rule's verdict name), or NULL. */
  char *original_rule_verdict;
} analysis_replication;

/** Analyses rows under sheet (the current version) and, where needed,
 * under the registered version orig (may be NULL, or equal to sheet):
 * which runs count is data_count_run's, the rule every command shares
 * (under sheet's plan with the chain up to the newest version; under
 * orig's with nothing superseded), given each run in collection order.
 * exp: the experiment, whose chain decides supersession (NULL: none) and
 * whose batches' facts say which were interrupted. threads: worker
 * threads for the bootstrap (0 = number of cores); numbers never depend
 * on it. All inputs are borrowed for the call; the summary copies what
 * it keeps. OUT: *out newly allocated (free with analysis_summary_free),
 * NULL on error. */
core_status analysis_run(const proto_sheet *sheet, const proto_sheet *orig,
                         const data_experiment *exp, const data_rowset *rows,
                         int threads, analysis_summary **out, core_err *err);
/** Frees a summary and everything it owns; NULL is a no-op. */
void analysis_summary_free(analysis_summary *s);

/** 1 when the verdicts and outcomes of s's entries of host (NULL: those
 * across hosts, or of a sheet without hosts) are provisional: on data
 * that do not complete that host's plan (the whole plan, for NULL) or
 * that are quick. */
int analysis_provisional(const analysis_summary *s, const char *host);

/* The same analysis, fed one row at a time: the rows never need to be in
 * memory together (a report over a million rows keeps only the values).
 * analysis_run is begin, one add per row, end. */
typedef struct analysis_stream analysis_stream;

/** Starts an analysis (inputs as analysis_run's, borrowed until end).
 * OUT: *out newly allocated (end or free it), NULL on error. */
core_status analysis_stream_begin(const proto_sheet *sheet,
                                  const proto_sheet *orig,
                                  const data_experiment *exp,
                                  analysis_stream **out, core_err *err);
/** Adds one row, in collection order; r is borrowed for the call (its
 * strings may be reused afterwards). The rows of a run come one after
 * the other (data_same_run): a run goes to the counting rule when the
 * next run's first row (or the end) shows it whole. */
core_status analysis_stream_add(analysis_stream *st, const data_row *r,
                                core_err *err);
/** Computes the summary and frees st (also on error). OUT: *out as
 * analysis_run's. */
core_status analysis_stream_end(analysis_stream *st, int threads,
                                analysis_summary **out, core_err *err);
/** Frees an unfinished stream; NULL is a no-op. */
void analysis_stream_free(analysis_stream *st);

/** The analysis of an experiment's data as they are on disk, under sheet
 * (the newest version) and its registered version 0: every row streamed
 * once (data_scan_rows) into the analysis, never all in memory. What
 * `prereg analyze` shows and `verify BUNDLE` re-derives. OUT: *out as
 * analysis_run's. */
core_status analysis_experiment(const proto_sheet *sheet,
                                const data_experiment *exp, int threads,
                                analysis_summary **out, core_err *err);

/** Look `look` (1-based) of workload w of sheet: the workload's
 * comparisons on exp's rows of the rounds up to that look, each at the
 * look's confidence and the family's correction. OUT: *decided 1 when the
 * rule makes every one of them and each has a verdict (not inconclusive,
 * not insufficient data): the workload may stop there. */
core_status analysis_look(const proto_sheet *sheet, const data_experiment *exp,
                          size_t w, size_t look, int *decided, core_err *err);

/** 1 when two results decide alike: the same verdict of the rule
 * (rule_verdict), whatever word each reads on its metric (an amendment
 * that changes the words only changes no decision). */
int analysis_same_decision(const analysis_result *a, const analysis_result *b);

/** The pair of s->original for the same comparison as pair r (workload,
 * metric, arm and reference), or NULL: a pair is registered when the
 * registered rule made it. */
const analysis_result *analysis_registered_pair(const analysis_summary *s,
                                                const analysis_result *r);
/** 1 when the registered sheet (version 0) had this workload, metric and
 * arm, or when there is no registered sample to hold it against; 0 for a
 * comparison a later amendment added (an arm, a workload, a metric): it
 * has no registered verdict that could have changed, and is said to be
 * beyond the registered plan instead. */
int analysis_registered_has(const analysis_summary *s, const char *workload,
                            const char *metric, const char *arm);

/** Appends `prereg analyze --json` output (interface.md section 4, plus
 * more keys) to out (the caller's buffer): deterministic, keys in a
 * fixed order, reals in their shortest exact form. CORE_ENOMEM when out
 * of memory. */
core_status analysis_json(const analysis_summary *s, core_buf *out,
                          core_err *err);

/** Compares the numbers and verdicts of two `analyze --json` texts, a
 * (bundled) against b (re-derived): the sheet digest, the status line,
 * each result (by workload, metric and arm: n, medians, ratio, CI,
 * verdict, the registered verdict) and each hypothesis (by id: verdict),
 * never the bytes. Appends one line per difference to diffs (the caller's
 * buffer). OUT: *n the differences. CORE_EINPUT when a is not such JSON. */
core_status analysis_json_compare(const char *a, size_t alen, const char *b,
                                  size_t blen, core_buf *diffs, size_t *n,
                                  core_err *err);

/** Appends the summary `prereg run` ends with, which fits a screen, to
 * out: the status line (where "provisional" is said once), a line per
 * comparison as hyperfine writes it (the factor above or below the
 * reference, its CI, the verdict), each hypothesis's outcome, each reason
 * a row did not count once, and the command that prints the whole table
 * (sheet_path: the sheet as the user named it, may be NULL). */
void analysis_write_brief(const analysis_summary *s, const char *sheet_path,
                          int width, core_buf *out);

/** Appends the terminal summary to out (the caller's buffer): the matrix
 * of workloads and metrics down, arms across (median, IQR, ratio, CI,
 * verdict), cut into blocks of as many arms as fit in width columns, then
 * the hypotheses and what did not count. sheet (may be NULL) gives the
 * metrics' units. */
void analysis_write_table(const analysis_summary *s, const proto_sheet *sheet,
                          int width, core_buf *out);

/* The bootstrap */

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

/** The distribution-free interval of median(x) alone (one command
 * described, with no reference) at confidence: the order statistics
 * [x_(j), x_(n+1-j)] with the largest j whose interval misses the true
 * median in at most 1 - confidence of samples (2 P(B <= j - 1), B ~
 * Bin(n, 1/2)): it holds its level at every n, where the percentile
 * bootstrap of one median falls to 75% at n = 3 and 87% at n = 7.
 * Returns 1 with *lo, *hi; 0 with NaN when n is below
 * proto_median_min_n(confidence) and no such interval exists; -1 with
 * err on a failed allocation. */
int analysis_median_interval(const double *x, size_t n, double confidence,
                             double *lo, double *hi, core_err *err);

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
 * changes the numbers of arms between the old and new value, so it is
 * not a cap and stays here, not in core/limits.h. */
#define ANALYSIS_TABLE_MAX 2048

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

/* Medians and quantiles */

/** Median of x (even n: mean of the two middle values); x is not
 * modified. NaN for n == 0, and when it cannot copy more than 64 values
 * (out of memory). */
double analysis_median(const double *x, size_t n);

/** Type-7 quantile of sorted x at f in [0, 1] (GSL). */
double analysis_quantile_sorted(const double *x, size_t n, double f);

/* Verdicts and claims */

/** p below which a shift counts as drift (two-sided). */
#define ANALYSIS_DRIFT_P 0.01

/* The verdict of a comparison where an arm or the reference has fewer
 * values than the rule's min_n. No verdict rule may have this name. */
#define ANALYSIS_INSUFFICIENT "insufficient data"

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

/** r's difference and its CI in words, in unit (NULL: the metric
 * name's, proto_metric_unit) scaled to the difference's size
 * (core_scale_unit): "+24.8 ms [23.1, 26.5]", "-3.2 s (no CI)", or
 * "no difference" when there is none. */
void analysis_difference_words(const analysis_result *r, const char *unit,
                               char *out, size_t cap);

/** The GSL version prereg was built with ("2.7.1"): a static string. */
const char *analysis_gsl_version(void);

/* The plan: how many runs the rule needs, simulated from a pilot */

/* One comparison to plan: the pilot's values of the reference and of the
 * arm (borrowed for the call; any order, all positive and finite). */
typedef struct analysis_plan_cell {
  const char *workload, *metric, *arm;
  const double *ref, *cand;
  size_t n_ref, n_cand;
  /* A pair of the rule's pairs: its earlier arm, whose values are ref;
   * NULL for a comparison with the sheet's reference. */
  const char *reference;
  /* 1: simulated and reported, but not among the comparisons its
   * workload's recommended size is chosen for. */
  int secondary;
} analysis_plan_cell;

/* What the simulation found for one comparison. Outcome o of size s is
 * at [s * n_outcomes + o] (the plan's outcomes). */
typedef struct analysis_plan_result {
  char *workload, *metric, *arm;
  char *reference; /* a pair's earlier arm, or NULL (the sheet's) */
  int secondary;   /* the cell's: the size is not chosen for it */
  size_t pilot_n_ref, pilot_n_cand;
  /* The pilot's own ratio of medians and its percentile bootstrap CI
   * under the rule (analysis_bootstrap_ratio): what "why" reads. */
  double pilot_ratio, pilot_ci_low, pilot_ci_high;
  double *p_verdicts; /* arms drawn from the pilot's two cells */
  double *p_null;     /* both arms drawn from the reference's cell */
  double *p_decided;  /* per size: any outcome but inconclusive and
                         insufficient data */
  double *p_false;    /* per size, null: a verdict with a direction */
  double *p_false_up, *p_false_down; /* ... split by that direction */
  double *expected_runs; /* per column: the mean runs per arm taken */
  /* The simulation's standard errors (binomial) of p_decided, p_false. */
  double *p_decided_se, *p_false_se;
  /* Per fixed size, over the plausible truths (the pilot resampled per
   * arm, smoothed): the mean probability of a decision, its standard
   * error, and power_low, the power that a share `assurance` of the
   * truths reach; NaN in the sequential design's column. */
  double *power, *power_se, *power_low;
  /* Under the rule's family correction (NULL without one): per column,
   * P(decided) with every arm of its workload drawn from its own pilot
   * values in one experiment, each comparison at the error the
   * correction gives it. */
  double *p_decided_family;
} analysis_plan_result;

/** The power of r at column col that plan chooses by: P(decided) under
 * the family correction when the rule has one, else p_decided. */
double analysis_plan_power(const analysis_plan_result *r, size_t col);

/* Per workload: the smallest candidate size at which every comparison
 * of it that is not secondary reaches the power, both as the pilot
 * takes it (analysis_plan_power) and at the plan's assurance
 * (power_low), or 0 and why not. */
typedef struct analysis_plan_pick {
  char *workload;
  long runs; /* 0: none of the sizes */
  char *why; /* runs 0: the comparison that does not and why; else NULL */
} analysis_plan_pick;

typedef struct analysis_plan {
  size_t *sizes;
  size_t n_sizes;
  /* The sequential design (n_looks 0: none): the results' columns are
   * the fixed sizes, then it (n_cols = n_sizes + 1); each look's
   * interval at look_confidence, the error's Bonferroni share. */
  size_t *looks;
  size_t n_looks, n_cols;
  double look_confidence;
  /* Per workload, its family (every comparison of it in one simulated
   * experiment, every arm drawn from the reference's values, the rule's
   * family correction): its size and, per column, the probability of a
   * verdict with a direction anywhere in it (at [f * n_cols + s]). */
  char **family_workloads;
  size_t *family_size;
  size_t n_families;
  double *p_false_family;
  long sims;
  double power;
  double assurance; /* the share of plausible truths power_low holds for */
  size_t truths;    /* plausible truths per comparison */
  /* The rule's verdict names in order, then "inconclusive", then
   * ANALYSIS_INSUFFICIENT. */
  char **outcomes;
  size_t n_outcomes;
  analysis_plan_result *results;
  size_t n_results;
  analysis_plan_pick *picks;
  size_t n_picks;
} analysis_plan;

/** Simulates, for each cell and size n, sims experiments of n values per
 * arm drawn with replacement from the pilot's values (and as many with
 * both arms drawn from the reference's), each decided by sheet's rule
 * as analysis_run decides (analysis_verdict_rule, min_n), its interval
 * the percentile interval of the exact law of the resampled ratio of
 * medians (docs/interface.md, "prereg plan", gives every step). With
 * looks (n_looks >= 2, increasing), also the sequential design: each
 * experiment stops at the first look whose interval, at the look's share
 * of the error, decides. threads
 * as analysis_run's; numbers never depend on it. Cells must cover every
 * comparison of a workload for its pick. OUT: *out newly allocated (free
 * with analysis_plan_free). */
core_status analysis_plan_run(const proto_sheet *sheet,
                              const analysis_plan_cell *cells, size_t n_cells,
                              const size_t *sizes, size_t n_sizes,
                              const size_t *looks, size_t n_looks, long sims,
                              double power, double assurance, int threads,
                              analysis_plan **out, core_err *err);
/** Frees a plan; NULL is a no-op. */
void analysis_plan_free(analysis_plan *p);

#endif
