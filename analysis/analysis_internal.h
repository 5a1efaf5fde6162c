/* analysis_internal.h: what the files of analysis/ share (private): the
 * state an analysis gathers run by run, the pieces that build the summary
 * from it, and the analysis across hosts built on them.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_ANALYSIS_INTERNAL_H
#define PREREG_ANALYSIS_INTERNAL_H

#include <stdint.h>

#include "analysis/analysis.h"

/* The values of one cell (workload x metric x arm) that count, in the
 * order they came, with each one's row position and batch. */
typedef struct acc_vals {
  double *v;
  unsigned *order, *batch;
  size_t n, cap;
} acc_vals;

/* A row that does not count: where it belongs, why (the counting rule's
 * words) and its run (rows are per run and metric; runs are what is
 * counted). Strings are interned in the stream. */
typedef struct acc_drop {
  size_t w, a; /* sheet indexes; n_workloads / n_arms when unknown */
  const char *wname, *aname, *reason;
  size_t run; /* the run's position in the stream */
} acc_drop;

/* Distinct strings, each copied once. */
typedef struct acc_strings {
  char **slot;
  size_t n, cap; /* cap: a power of two, or 0 */
} acc_strings;

struct analysis_across; /* hosts.c: one analysis per host */

/* One analysis being gathered: under the current sheet, or the
 * registered one (or, across hosts, one host's). */
typedef struct acc {
  const proto_sheet *sheet; /* the plan: structure, rule and hypotheses */
  data_counter *counter;    /* the counting rule (data/count.c) under it */
  size_t *cell_base;        /* per workload: its first cell */
  size_t n_cells;           /* cells in order workload, metric, arm */
  acc_vals *vals;           /* n_cells */
  acc_drop *drops;
  size_t n_drops, cap_drops;
  /* At the end: the rule's tallies (the plan's workloads and arms first,
   * in sheet order) and the status of the collection. */
  data_tally *tallies;
  size_t n_tallies;
  data_status status;
  /* A plan with hosts: each host's analysis (hosts.c), fed the runs the
   * rule gave that host; NULL without hosts and in a host's own acc. */
  struct analysis_across *across;
} acc;

/* One row of the run being gathered: what placing it needs once the rule
 * has decided its run. Strings are interned. */
typedef struct acc_row {
  const char *metric;
  double value;
  int has_value;
  unsigned order, batch;
} acc_row;

/* The run being gathered: its rows come one after the other
 * (data_same_run), and it goes to the rule whole. */
typedef struct acc_run {
  data_row id; /* the run's identity: batch, workload, arm, run_id, seq,
                  source, host (interned; run_id in run_id_buf) */
  char *run_id_buf;
  size_t run_id_cap;
  data_run_in in;             /* what the rule reads */
  const char *invalid_reason; /* its first invalid row's (interned) */
  acc_row *rows;
  size_t n, cap;
  int open;
  size_t index; /* runs given to the rule so far */
} acc_run;

struct analysis_stream {
  acc cur, orig;
  int has_orig;
  char *orig_why; /* why the registered sample's verdicts are given */
  int version;    /* the sheet's version number */
  const data_experiment *exp;
  acc_strings strings;
  char **batches; /* distinct batch names, in the order first seen */
  size_t n_batches, cap_batches;
  size_t last_batch; /* index of the previous row's batch */
  size_t n_rows;
  acc_run run;
};

/** Decides comparison r (names, n, medians, seed, kind set) of workload
 * w and metric m at confidence: its CI from the sorted values ref and
 * cand, and its verdict, replacing any earlier one (analyze.c). */
core_status acc_decide(const acc *c, analysis_result *r, size_t w, size_t m,
                       double confidence, const double *ref,
                       const double *cand, int threads, core_err *err);
/** The rule's family correction (family.c): each workload's
 * comparisons, results and registered pairs, decided again at the
 * confidence Holm's step-down (or Bonferroni) gives each; sorted: the
 * cells' sorted values, in cell order. Nothing for family = "none". */
/** The error each of a family's n members is decided at, from p[i], the
 * smallest error that decides member i (1: none), its m comparisons and
 * the error alpha to share (family.c gives the method): alpha / m each
 * (PROTO_FAMILY_BONFERRONI), Holm's step-down (PROTO_FAMILY_HOLM), or
 * alpha (PROTO_FAMILY_NONE). OUT: out[i]; idx: n slots of scratch. */
void analysis_family_errors(int family, double alpha, size_t m,
                            const double *p, size_t n, double *out,
                            size_t *idx);
core_status acc_family(const acc *c, analysis_summary *s,
                       double *const *sorted, int threads, core_err *err);

/* Cells (cells.c) */

/** Interns s; NULL when out of memory. */
const char *acc_intern(acc_strings *set, const char *s);
/** Frees the strings of set and empties it. */
void acc_strings_free(acc_strings *set);

/** The cells of an analysis under sheet, without a counter of its own:
 * a host's, fed the runs its plan's counter decided. */
core_status acc_init_cells(acc *c, const proto_sheet *sheet, core_err *err);
/** Frees what an acc holds (its counter, cells, drops, tallies); its
 * analyses per host go first, by analysis_across_free. */
void acc_free(acc *c);
/** Places the rows of run under the fate f the counting rule gave it:
 * each value into its cell, or a drop with the rule's reason. */
core_status acc_place(acc *c, acc_strings *strs, const acc_run *run,
                      const data_run_fate *f, core_err *err);

/* Across hosts (hosts.c) */

/** A plan with hosts: c->across, an analysis per host of c's counter. */
core_status analysis_across_begin(acc *c, core_err *err);
/** The run the rule decided (fate f, host f->host) into its host's
 * analysis too. */
core_status analysis_across_place(acc *c, acc_strings *strs,
                                  const acc_run *run, const data_run_fate *f,
                                  core_err *err);
/** After c's counter ended: each host's tallies and status from it, each
 * host's summary, then the entries across hosts: s->results and
 * s->hypotheses become those (analysis.h), each host's go to
 * s->host_results and s->host_hypotheses, and s->hosts says how far each
 * host came. */
core_status analysis_across_end(acc *c, const analysis_stream *st, int threads,
                                analysis_summary *s, core_err *err);
void analysis_across_free(acc *c);

/** Builds the summary of one gathered analysis (analyze.c). The batch
 * names are copied. OUT: *out newly allocated, NULL on error. */
core_status acc_summary(acc *c, const analysis_stream *st, const char *sha256,
                        int version, int threads, int keep_values,
                        analysis_summary **out, core_err *err);

/** Free n results (or hypotheses) and their array (analyze.c). */
void acc_results_free(analysis_result *r, size_t n);
void acc_hypotheses_free(analysis_hypothesis *h, size_t n);

/** Why the registered sample's verdicts are due as well, or NULL (*why)
 * when they are not (analyze.c). */
core_status analysis_original_reason(const proto_sheet *sheet,
                                     const proto_sheet *orig,
                                     const data_experiment *exp, char **why,
                                     core_err *err);

/** Fills c->drift from c's values (analysis_drift), with the noise band
 * low to high. */
core_status analysis_drift_of(analysis_cell *c, size_t n_batches, double low,
                              double high, core_err *err);

/* The exact law of a resample median, for the plan */

/* One atom of the law of the median of n values drawn with replacement
 * from n sorted values x[0..n-1]: the median is
 * 0.5 * (x[k1 - 1] + x[k2 - 1]) (k1 == k2 for odd n and for an even n
 * without a gap) with probability p, the law table_median draws from. */
typedef struct analysis_median_atom {
  uint32_t k1, k2;
  double p;
} analysis_median_atom;

/** The atoms of that law for 1 <= n <= ANALYSIS_TABLE_MAX, in order of
 * k1 then k2, without those whose probability is below floor (what they
 * leave out is at most their count times floor). OUT: *atoms newly
 * allocated (core_free), *n_atoms. */
core_status analysis_median_law(size_t n, double floor,
                                analysis_median_atom **atoms, size_t *n_atoms,
                                core_err *err);

/** The seed of the plan's simulated experiments of one comparison at size
 * n: the first 4 bytes, big-endian, of SHA-256("prereg-plan-v1" NUL S NUL
 * W NUL M NUL A NUL n NUL T), S the rule seed and n in decimal, T
 * "reference-only" when both arms draw from the reference (null 1),
 * "truths" for the plausible truths' experiments (null 2), else "pilot".
 * ANALYSIS_SEED_NONE when out of memory. */
unsigned long analysis_plan_seed(unsigned long rule_seed, const char *workload,
                                 const char *metric, const char *arm, size_t n,
                                 int null);

/* Used by the files of analysis/ only */

/** analysis_median without a copy: reorders x. Never allocates, so it
 * cannot fail. */
double analysis_median_inplace(double *x, size_t n);

/** Two-sided p of the Mann-Whitney rank test of a against b (ties get
 * mid-ranks): exact without ties for up to 60 values in all, else the
 * normal approximation with tie and continuity corrections. 1 when
 * either side is empty. CORE_ENOMEM when its scratch fails. */
core_status analysis_rank_test(const double *a, size_t na, const double *b,
                               size_t nb, double *p, core_err *err);

/** Spread of x (n values, reordered): q1, median, q3, MAD, min, max and
 * the count beyond Tukey's fences, into c (the rest of c untouched).
 * CORE_ENOMEM when the scratch copy fails. */
core_status analysis_spread(double *x, size_t n, analysis_cell *c,
                            core_err *err);

/** analysis_bootstrap_ratio, and from the same resamples the percentile
 * CI of median(cand) - median(ref) in *dlo, *dhi (both NULL: not
 * computed). The differences' interval is set also when a resample's
 * ratio is undefined (a resample's reference median is 0): with
 * undefined NULL that is CORE_ESTATS; else *undefined counts them and
 * the ratio's interval takes each end as if they lay beyond it (an end
 * that falls on them is not finite), with replicates not sorted. */
core_status analysis_bootstrap_both(const double *ref, size_t n_ref,
                                    const double *cand, size_t n_cand,
                                    long resamples, double confidence,
                                    unsigned long seed, int threads,
                                    double *lo, double *hi, double *dlo,
                                    double *dhi, double *replicates,
                                    size_t *undefined, core_err *err);

/** What a verdict rule is read on: the ratio and its CI, the difference
 * and its CI (NaN: not there). */
typedef struct analysis_estimate {
  double ratio, ci_low, ci_high;
  double difference, difference_ci_low, difference_ci_high;
} analysis_estimate;
/** The estimate of r that its verdict is read on (verdict.c). */
analysis_estimate acc_estimate_of(const analysis_result *r);

/** The first rule in rule->verdicts that matches e, or NULL: a rule with
 * a condition on the ratio needs the ratio and its CI, one with a
 * condition on the difference the difference and its CI. */
const proto_verdict_rule *analysis_verdict_rule_d(const proto_rule *rule,
                                                  const analysis_estimate *e);

/** analysis_verdict_rule_d on the ratio alone (no difference: a rule
 * with a condition on it never matches), NULL when it is NaN (see
 * analysis_verdict). */
const proto_verdict_rule *analysis_verdict_rule(const proto_rule *rule,
                                                double ratio, double ci_low,
                                                double ci_high);

/** Fills s->replication for sheet's `published` entries: each against
 * s's results, and, for a replication's sheet (`replicates`), the
 * outcome, against orig (borrowed; NULL when the original's data are not
 * kept), the original's analysis under its own newest version. Called by
 * analysis_stream_end, which analyses the original (original/ORIGINAL
 * under the experiment's folder). */
core_status analysis_replication_fill(analysis_summary *s,
                                      const proto_sheet *sheet,
                                      const analysis_summary *orig,
                                      int threads, core_err *err);

#endif
