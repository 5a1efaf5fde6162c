/* proto.h: protocol sheets: a Lua 5.4 file, run in a sandbox, turned into
 * plain C structs. No Lua type leaves protocols/.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_PROTO_H
#define PREREG_PROTO_H

#include <stddef.h>

#include "core/core.h"

/* The sheet */

/* A loaded sheet owns every string and array it points to (one
 * proto_sheet_free frees them all); callers read them and never free or
 * keep one past the sheet. Templates are unexpanded (proto_expand). */

typedef enum { PROTO_ORDER_INTERLEAVED, PROTO_ORDER_BLOCKED } proto_order;
typedef enum { PROTO_CACHE_WARM, PROTO_CACHE_COLD } proto_cache;
typedef enum {
  PROTO_EXPECT_CODE,     /* exit code must equal expect_code (default 0) */
  PROTO_EXPECT_ANY,      /* "any" */
  PROTO_EXPECT_REFERENCE /* "reference": same as the reference arm, step by
                            step, in the same round */
} proto_expect;
/* Where a workload's data come from (sheet key `source`). */
typedef enum {
  PROTO_SOURCE_RUN,    /* "run": prereg runs it; imports are refused */
  PROTO_SOURCE_IMPORT, /* "import": only `prereg import`; run skips it */
  PROTO_SOURCE_BOTH    /* "both": prereg runs it, and imported runs are
                          pooled with its own under the plan's `runs` */
} proto_source;

/* Where an image digest comes from: a file or tree hashed once per batch
 * (core_sha256_tree), or a command whose trimmed stdout is the digest.
 * Both NULL: no image declared. Strings are unexpanded templates. */
typedef struct proto_image {
  char *tree;
  char *digest_cmd;
  /* Optional: files whose page-cache residency is observed per run. */
  char *resident;
} proto_image;

typedef struct proto_var {
  char *name;
  char *value;
} proto_var;

typedef struct proto_arm {
  char *name;
  int reference;   /* exactly one arm has it */
  char *run;       /* template; "{cmd}" by default */
  int whole;       /* 1: run has no {cmd}, it is the whole command of a
                      run (then so is every arm's: see proto_sheet) */
  char **requires; /* preflight commands; all must exit 0 */
  size_t n_requires;
  proto_image image; /* overrides the sheet's image when set */
  char **versions;   /* commands whose output is recorded in host facts */
  size_t n_versions;
  char *cpus; /* CPU list every process of its runs is pinned to ("1-2"),
                 else the sheet's cpus, else NULL (not pinned) */
  int null;   /* an A/A arm: it runs the reference's command again (its
                 run is a copy of the reference's); no hypothesis names it,
                 and its ratio is the host's noise floor */
  int line;
} proto_arm;

/* The machine's conditions a sheet registers (`conditions`): bounds on
 * the noise of each run, and facts the host must have. A bound of -1 is
 * none. */
typedef struct proto_conditions {
  int declared;
  double max_load;     /* 1-minute load average before a run */
  double wait_s;       /* how long `run` waits for max_load each round */
  double max_swap_in;  /* pages swapped in during a run */
  double max_throttle; /* thermal throttle events during a run */
  char *governor;      /* the cpufreq governor every CPU must have, or NULL */
  int aslr;            /* -1: any; 0: must be off; 1: must be on */
  int boost;           /* -1: any; 0: must be off; 1: must be on */
  int smt;             /* -1: any; 0: must be off; 1: must be on */
  int line;
} proto_conditions;

/** The CPUs of a CPU list ("0", "1-2", "0,2-3"; each at most
 * CORE_MAX_CPU): sets bit c of bits (cap bytes, zeroed by the caller; may
 * be NULL) for each CPU c. Returns how many CPUs it names, or -1 when it is
 * no such list. */
long proto_cpus_parse(const char *list, unsigned char *bits, size_t cap);

/* Which processes pss_mib sums (sheet key `processes`). */
typedef struct proto_procsel {
  int descendants; /* descendants of the run's process (default 1) */
  char *cgroup;    /* template: members of this cgroup, or NULL */
  char **cmdline;  /* templates: processes whose command line contains
                      one of these */
  size_t n_cmdline;
} proto_procsel;

typedef struct proto_workload {
  char *name;
  long runs;    /* rounds; 0 for an import-only workload */
  long warmup;  /* warm-up runs per arm, not recorded */
  char *cmd;    /* template, or NULL */
  char **steps; /* templates run in order in a fresh folder, or NULL */
  size_t n_steps;
  int by_arms; /* 1: no cmd or steps; every arm is a whole command, and a
                  run is the arm's command (proto_arm.whole) */
  char *prepare, *cleanup; /* templates or NULL */
  char **metrics;          /* at least one; default { "wall_s" } */
  size_t n_metrics;
  double sample_after_s; /* for pss_mib; default 5 */
  double timeout_s;      /* per step; default 120 */
  proto_order order;
  proto_cache cache;
  proto_expect expect;
  int expect_code;
  proto_procsel procs;
  int cgroup;          /* 1: run each run in its own cgroup (cg_* metrics) */
  proto_source source; /* default: "run" with a cmd or steps, else
                          "import" */
  /* Preregistered looks (`looks`): the rounds after which `run` analyses
   * the workload and stops it when every comparison is decided;
   * increasing, each at least rule.min_n, the last equal to runs. NULL
   * and 0: one look, at runs (a fixed design). */
  long *looks;
  size_t n_looks;
  int line;
} proto_workload;

/* What a metric measures, for the words of its verdicts. A built-in
 * metric's kind is its row's (proto_builtin_metric); any other name
 * ending in _s is a time, in _mib or _kib a size, anything else "other".
 * The sheet's `metrics` table may say otherwise. */
typedef enum {
  PROTO_KIND_TIME,
  PROTO_KIND_MEMORY,
  PROTO_KIND_SIZE,
  PROTO_KIND_OTHER
} proto_metric_kind;
#define PROTO_N_KINDS 4

/* Built-in metrics: the names a sheet may list without the command
 * reporting them, one row each in protocols/metrics.c. Validation, the
 * starter sheet, the run's measurement and rows, and the imports read
 * their names, kinds, units and rules there. A new one is a row there, a
 * proto_measure if prereg measures it in a new way, and the code that
 * measures it (run/measure.c maps each proto_measure to the measurement
 * once). */

/* Where a built-in metric's value comes from. */
typedef enum {
  PROTO_MEASURE_WALL,    /* the wall clock around each step's command */
  PROTO_MEASURE_USER,    /* the user CPU of the run's processes */
  PROTO_MEASURE_SYS,     /* the system CPU of the run's processes */
  PROTO_MEASURE_MAXRSS,  /* the largest resident set wait4 reports */
  PROTO_MEASURE_PSS,     /* the sample of the run's processes' PSS */
  PROTO_MEASURE_CG_MEM,  /* the run's own cgroup: its memory peak */
  PROTO_MEASURE_CG_CPU,  /* the run's own cgroup: its CPU time */
  PROTO_MEASURE_COMMAND, /* the command writes it to $PREREG_METRICS */
  PROTO_N_MEASURES
} proto_measure;

/* How the steps of a run (proto_workload.steps) make its one value. */
typedef enum {
  PROTO_STEPS_SUM,   /* added; 0 when no step ran */
  PROTO_STEPS_MAX,   /* the largest a step has; none when no step has one */
  PROTO_STEPS_FIRST, /* the first a step has (a sample taken once a run) */
  PROTO_STEPS_WHOLE  /* one value for the whole run, not per step */
} proto_steps_rule;

/* One built-in metric. Its kind, unit and direction (lower is better)
 * are fixed: a sheet's `metrics` table may restate them, not change
 * them. */
typedef struct proto_builtin_metric {
  const char *name;
  proto_metric_kind kind;
  const char *unit; /* what its values are in: the name's suffix says it */
  proto_steps_rule steps;
  proto_measure from;
} proto_builtin_metric;

/* One entry of the sheet's `metrics` table: { kind = "size", better =
 * "higher", unit = "ops/s" }, every key optional. */
typedef struct proto_metric_decl {
  char *name;
  int has_kind;
  proto_metric_kind kind;
  int higher_better; /* better = "higher"; the default is lower */
  char *unit;        /* NULL: from the name's suffix */
  int line;
} proto_metric_decl;

/* A verdict rule's conditions on one quantity (the ratio, or the
 * difference) and its CI. A condition is active when its has_ flag is
 * set; the value of an inactive one is 0. */
typedef struct proto_bounds {
  int has_ci_excludes, has_above, has_below, has_ci_within;
  double ci_excludes, above, below, ci_within[2];
} proto_bounds;

/* One entry of rule.verdicts: its conditions on the ratio (ratio) and on
 * the difference (diff). All active conditions must hold. Boundaries:
 * ci_excludes = x holds when ci_low > x or ci_high < x; ratio_above = x
 * when ratio > x;
 * ratio_below = x when ratio < x; ci_within = {lo, hi} when
 * lo <= ci_low and ci_high <= hi. The diff_ conditions are the same on
 * the difference (arm minus reference, in the metric's unit) and its CI:
 * diff_ci_excludes = x when dci_low > x or dci_high < x; diff_above = x
 * when difference > x; diff_below = x when difference < x; diff_ci_within
 * = {lo, hi} when lo <= dci_low and dci_high <= hi. A verdict with a
 * ratio condition needs a ratio and its CI, one with a difference
 * condition the difference and its CI. The verdict reads `name` on a time and
 * names[kind] on other kinds when the sheet gives it (proto_verdict_word
 * has the defaults). */
typedef struct proto_verdict_rule {
  char *name;
  char *names[PROTO_N_KINDS]; /* `names = { memory = "more memory" }`;
                                 NULL: the default word */
  proto_bounds ratio; /* ci_excludes, ratio_above, ratio_below, ci_within */
  proto_bounds diff;  /* diff_ci_excludes, diff_above, diff_below,
                         diff_ci_within */
  int line;
} proto_verdict_rule;

/* The fewest values an arm (and the reference) must have for a verdict
 * when the rule does not say (rule.min_n). */
#define PROTO_MIN_N_DEFAULT 3

typedef struct proto_rule {
  char *estimator; /* "median" */
  double confidence;
  long resamples;
  unsigned long seed; /* < 2^32 */
  long min_n;         /* fewest values per arm for a verdict (1 to 1000000) */
  int min_n_given;    /* 1: the sheet writes min_n (else the default) */
  proto_verdict_rule *verdicts;
  size_t n_verdicts;
  int pairs;    /* a proto_pairs: which comparisons besides the reference's */
  int spending; /* a proto_spending: how looks share the error */
  int family;   /* a proto_family: the correction for many comparisons */
} proto_rule;

/* How the error 1 - confidence is spent over a workload's K looks (rule
 * key `spending`): "bonferroni", each look's interval at confidence
 * 1 - (1 - confidence) / K, the only one (and the default). */
typedef enum proto_spending { PROTO_SPENDING_BONFERRONI } proto_spending;

/* The correction for a workload's many comparisons (rule key `family`):
 * none (each at the look's confidence; the default of a sheet that does
 * not say), Holm's step-down, or Bonferroni (each at 1 - alpha / m). */
typedef enum proto_family {
  PROTO_FAMILY_NONE,
  PROTO_FAMILY_HOLM,
  PROTO_FAMILY_BONFERRONI
} proto_family;

/* The comparisons the rule makes: each arm against the reference, and
 * with pairs = "all" (registered) or `analyze --pairs` (exploratory, set
 * by the command, never by a sheet) every pair of the other arms too:
 * each later arm in sheet order against each earlier one. */
typedef enum proto_pairs {
  PROTO_PAIRS_NONE,
  PROTO_PAIRS_ALL,
  PROTO_PAIRS_EXPLORATORY
} proto_pairs;

typedef enum {
  PROTO_CLAIM_AT_LEAST,
  PROTO_CLAIM_BELOW,
  PROTO_CLAIM_VERDICT_IS,
  PROTO_CLAIM_FUNCTION,
  PROTO_CLAIM_DIFF_BELOW,   /* on the difference's interval, metric unit */
  PROTO_CLAIM_DIFF_AT_LEAST /* likewise */
} proto_claim_kind;

typedef struct proto_hypothesis {
  char *id, *says;
  char *workload, *metric; /* NULL allowed only for a function claim */
  char **arms;             /* arms other than `against`; all must hold */
  size_t n_arms;
  char *against; /* the arm compared with: NULL for the reference */
  proto_claim_kind kind;
  double x;      /* at_least / below / diff_below / diff_at_least */
  char *verdict; /* verdict_is */
  int fn_ref;    /* function claims: private handle into the sheet's Lua */
  int line;
  char *fn_source; /* function claims: the lines of the sheet that define
                      the function, so that versions can be compared */
} proto_hypothesis;

typedef struct proto_amendment {
  char *date; /* YYYY-MM-DD */
  char *why;
  char **supersedes; /* workloads whose earlier rows no longer count */
  size_t n_supersedes;
  int line;
} proto_amendment;

/* The hosts block: the whole registered plan is run on every node of a
 * cluster, the host a declared factor (interface.md, "Hosts"). A sheet
 * without one runs where prereg runs (declared == 0, all else zero). */
typedef struct proto_hosts {
  int declared;
  char *backend;  /* "slurm" */
  char **nodes;   /* the nodes by name, in the declared order ... */
  size_t n_nodes; /* ... or none, and then count of them ... */
  long count;     /* ... that the scheduler picks (named at the first
                     allocation; the later batches ask for those) */
  char *partition, *constraint; /* NULL when not given */
  double min_completed; /* share (0, 1] of its planned rounds a host must
                           complete to count */
  long min_hosts;       /* counted hosts a cross-host estimate needs */
  /* The cross-host rule: "carries over" when every counted host gives
   * the same verdict (same_verdict) and the largest host ratio is at
   * most max_spread times the smallest. */
  int same_verdict;
  double max_spread;
  /* On paper only (run --dry-run --backend kubernetes): the container
   * image, and the runtimeClassName of each arm (its name when not
   * listed). */
  char *k8s_image;
  char **k8s_arms, **k8s_classes;
  size_t n_k8s;
  int line;
} proto_hosts;

/* A ratio a publication reports (sheet key `published`), to be set
 * beside the one measured here: arm against the reference arm on the
 * workload's metric. */
typedef struct proto_published {
  char *workload, *metric, *arm;
  double ratio;  /* > 0 */
  char *verdict; /* the publication's own verdict ("tie"), or NULL */
  char *source;  /* where it was published */
  char *note;    /* what differs there (versions, host), or NULL */
  /* The interval the publication gives (both NaN when it gives none). */
  double ci_low, ci_high;
  char *reference; /* the arm it is against, or NULL: the sheet's */
  /* A replication's entry whose workload, metric or arm the sheet no
   * longer has (dropped): why, or NULL. */
  char *missing;
  int line;
} proto_published;

/* The sheet's `plan` block: how its runs were chosen (prereg plan
 * --write writes it; register freezes it with the rest). */
typedef struct proto_plan {
  int declared;
  double power;
  long *sizes; /* the candidate sizes tried, increasing */
  size_t n_sizes;
  long sims;          /* simulated experiments per comparison and size */
  char *pilot_sha256; /* the digest of the values planned from */
  /* proto_plan_rule_sha256 of the sheet planned for, or NULL (a plan
   * written before it was stored) */
  char *rule_sha256;
  long pilot_runs;    /* the fewest values of a cell in them */
  char *pilot_source; /* "pilot", "experiment" or "bundle" */
  double expected;    /* comparisons the plan expected to decide at the
                         runs chosen (-1: not given) */
  long comparisons;   /* of how many (-1: not given) */
  /* Optional (-1: not given): expected's simulation error, the share of
   * the pilot's plausible truths the power was asked in, and the lowest
   * power_low of the comparisons at the runs chosen. */
  double expected_se, assurance, power_low;
  /* Which comparisons the runs were chosen for: 1 those the hypotheses
   * test ("hypotheses"), 0 all of them ("all", also when not given). */
  int sized_for_hypotheses;
  double achieved; /* the smallest P(decided) of those at the runs
                      chosen (-1: not given) */
  long runs;       /* the runs the author gave (plan --runs), else 0 */
  long *looks;     /* the sequential design planned, or NULL */
  size_t n_looks;
  int line;
} proto_plan;

/* The published experiment a replication's sheet repeats (sheet key
 * `replicates`, written by prereg replicate). */
typedef struct proto_replicates {
  char *experiment;    /* the original's id */
  long version;        /* its sheet version the replication starts from */
  char *bundle_sha256; /* the bundle's own SHA-256 */
  char *published_at;  /* when it was published, as the bundle says */
  int line;
} proto_replicates;

typedef struct proto_sheet {
  char *path; /* as given */
  char *id, *title, *question, *author;
  proto_var *vars;
  size_t n_vars;
  proto_arm *arms;
  size_t n_arms;
  size_t reference; /* index into arms */
  proto_image image;
  proto_workload *workloads;
  size_t n_workloads;
  proto_rule rule;
  proto_hypothesis *hypotheses;
  size_t n_hypotheses;
  char **threats;
  size_t n_threats;
  proto_metric_decl *metrics; /* the `metrics` table, by name */
  size_t n_metrics;
  proto_amendment *amendments;
  size_t n_amendments;
  proto_hosts hosts;
  proto_published *published;
  size_t n_published;
  proto_replicates *replicates; /* NULL: not a replication's sheet */
  /* Files and folders the commands use, relative to the sheet's folder
   * (`inputs`): locked with the sheet (data_inputs_scan). */
  char **inputs;
  size_t n_inputs;
  /* {sheet_dir}: the sheet's folder, absolute (NULL for a sheet given as
   * text); {origin}: the folder prereg was started from. */
  char *sheet_dir, *origin;
  proto_plan plan;             /* declared 0 without a plan block */
  proto_conditions conditions; /* declared 0 without a conditions block */
  char *cpus; /* CPU list every run is pinned to, or NULL (arms may set
                 their own) */
  char *text; /* the exact bytes of the file */
  size_t text_len;
  char sha256[CORE_SHA256_HEX]; /* of text */
  struct proto_lua *lua;        /* private: kept for function claims */
} proto_sheet;

/** The comparisons the rule makes per workload and metric: each arm but
 * the reference against it, and with pairs every pair of those arms
 * (n - 1 + (n - 1)(n - 2) / 2 for n arms): what a cap on comparisons
 * counts. */
size_t proto_comparisons_per_metric(const proto_sheet *s);

/** "none", "holm" or "bonferroni" (a static string). */
const char *proto_family_word(int family);

/** The confidence of each look of workload w under the rule's spending:
 * 1 - (1 - confidence) / K for its K looks, the rule's confidence for a
 * workload without looks. */
double proto_look_confidence(const proto_sheet *s, const proto_workload *w);

/** The fewest values per arm at which a percentile interval of a ratio
 * of medians can be labelled with its confidence: the smallest n whose
 * widest possible interval, [x(1)/y(n), x(n)/y(1)], misses the true
 * ratio of a pure scale model (any continuous law) at most half as often
 * as the level allows, 2 / C(2n, n) <= (1 - confidence) / 2 (the
 * percentile interval is narrower than that one, so it needs room). 3 at
 * 80%, 4 at 90%, 5 at 95% to 98.4%, 6 at 99%. */
long proto_level_min_n(double confidence);

/** How often the widest interval of n values per arm covers the true
 * ratio of a pure scale model: 1 - 2 / C(2n, n) (0.90 at n = 3). */
double proto_widest_coverage(long n);

/** The SHA-256 of what a plan's sample size rests on besides the pilot:
 * the rule (estimator, confidence, resamples, seed, min_n, pairs,
 * spending, family, every verdict's bounds), the arms and the reference,
 * each workload's metrics and the hypotheses (what they test). Not the
 * runs nor the looks, which the plan chooses. prereg plan --write stores
 * it as plan.rule_sha256; report and check compare. Returns 0, or -1
 * when out of memory. */
int proto_plan_rule_sha256(const proto_sheet *s, char out[CORE_SHA256_HEX]);

/** Whether the sheet's plan block was computed for another rule than the
 * sheet's (its rule_sha256 is not proto_plan_rule_sha256 of the sheet),
 * with the sheet's digest in now; 0 also when the block records none. */
int proto_plan_rule_changed(const proto_sheet *s, char now[CORE_SHA256_HEX]);

/** The first of n looks (a workload's, or plan's --looks) below the
 * fewest values per arm an interval at a look's share of the error
 * needs (proto_effective_min_n at 1 - (1 - confidence) / n, the least
 * strict level a comparison is made at there): its index, or -1 when
 * every look reaches it; that fewest in *need either way. The one rule
 * check, register, amend and plan apply to looks. */
long proto_looks_short(const proto_rule *r, const long *looks, size_t n,
                       long *need);

/** Appends why a look of look runs per arm, one of n, is too few: "L
 * runs per arm is below the N an interval at this look's C% (its share
 * of the error over n looks) needs: no comparison could be decided
 * there" (the caller adds where and the fix). */
void proto_look_short_words(const proto_rule *r, long look, size_t n,
                            core_buf *out);

/** Whether a workload places a look below the values an interval at that
 * look's confidence needs (proto_looks_short on its looks): 1 with
 * "FILE: workloads[I].looks[J]: ..." and the fix appended to why, else
 * 0. check, register and amend refuse such a sheet (exit 2); the
 * loader does not, so that readers of a sheet registered before still
 * analyse it. */
int proto_looks_below_level(const proto_sheet *s, core_buf *why);

/** The fewest values for a distribution-free interval of one median at
 * confidence: the widest, [min, max], misses the true median in 2 / 2^n
 * of samples, so it takes 1 - 2 / 2^n >= confidence: 6 at 95%, 8 at
 * 99%. */
long proto_median_min_n(double confidence);

/** The fewest values per arm for a verdict with an interval at
 * confidence: the larger of the rule's min_n and proto_level_min_n. */
long proto_effective_min_n(const proto_rule *r, double confidence);

/** The rounds of workload w under `run --quick` (the demo): as few as
 * still give its comparisons an interval at their level, the larger of 3
 * and proto_effective_min_n at the strictest confidence one of them is
 * made at (the rule's, or with a family its Bonferroni share over the
 * workload's comparisons; looks are off), and never more than its runs. */
long proto_quick_rounds(const proto_sheet *s, const proto_workload *w);

/** Loads and validates the sheet at path. Returns a newly allocated sheet
 * (free with proto_sheet_free), or NULL with err filled: CORE_EPROTOCOL
 * and a message "FILE:LINE: what" or "FILE: field.path: what" (an
 * unreadable file too: it is bad input). */
proto_sheet *proto_sheet_load(const char *path, core_err *err);

/** Same, for a sheet a command checks or runs: its process selections
 * must also name only the run (docs/interface.md, "Which processes are
 * the run's"). A registered sheet's history may predate that rule, so
 * the commands that only read or record a sheet use proto_sheet_load. */
proto_sheet *proto_sheet_load_to_run(const char *path, core_err *err);

/** Same, from len bytes of text (copied; the sheet keeps its own) and a
 * name used in messages and as the sheet's path (a frozen version, a
 * bundle member), read as it was written, as proto_sheet_load does. */
proto_sheet *proto_sheet_load_text(const char *name, const char *text,
                                   size_t len, core_err *err);

/** Frees everything the sheet owns; NULL is a no-op. */
void proto_sheet_free(proto_sheet *s);

/** Index of the arm/workload named name, or -1 (also for NULL). */
long proto_arm_index(const proto_sheet *s, const char *name);
long proto_workload_index(const proto_sheet *s, const char *name);
/** The runtimeClassName of arm a under the kubernetes backend (on
 * paper): hosts.kubernetes.runtime_classes[arm], else the arm's name.
 * Borrowed from the sheet. */
const char *proto_k8s_class(const proto_sheet *s, size_t a);
/** 1 when the workload declares metric. */
int proto_workload_has_metric(const proto_workload *w, const char *metric);
/** 1 when prereg runs w itself: it plans runs (runs > 0), has a cmd,
 * steps or arms that are whole commands, and its source is not "import";
 * 0 when its data come only by `prereg import`. */
int proto_workload_runs_itself(const proto_workload *w);
/** 1 when `prereg import` may add rows to w: its source is "import" or
 * "both". */
int proto_workload_takes_imports(const proto_workload *w);
/** The built-in metrics, in the order the starter sheet lists them.
 * OUT: *n, their number. */
const proto_builtin_metric *proto_builtin_metrics(size_t *n);
/** The built-in metric named name, or NULL when it is not one. */
const proto_builtin_metric *proto_builtin_by_name(const char *name);
/** The name of the first built-in metric whose value comes from m (a
 * static string; the only one, but for PROTO_MEASURE_COMMAND). */
const char *proto_measure_name(proto_measure m);
/** The built-in metric's name nearest to name when close enough to be a
 * typo (core_nearest), else NULL. */
const char *proto_builtin_metric_nearest(const char *name);
/** Unit of a metric: a built-in's, else from its suffix: "s", "MiB",
 * "KiB" or "" (a static string). */
const char *proto_metric_unit(const char *metric);
/** 1 when metric is a time or an amount of memory, which cannot be
 * negative: it has a unit (proto_metric_unit) or its name begins with
 * pss, rss, maxrss, wall, user or sys. */
int proto_metric_nonnegative(const char *metric);

/* What a metric measures, and the words of a verdict */

/** The metric's kind: the sheet's `metrics` entry, else from its name
 * (proto_metric_kind). A metric declared better = "higher" without a kind
 * is "other": a time or a memory is never better higher. */
proto_metric_kind proto_metric_kind_of(const proto_sheet *s,
                                       const char *metric);
/** 1 when a higher value is better (declared better = "higher"), else 0. */
int proto_metric_higher_better(const proto_sheet *s, const char *metric);
/** The unit the sheet declares for metric, else proto_metric_unit's;
 * borrowed from the sheet or static. */
const char *proto_metric_unit_of(const proto_sheet *s, const char *metric);
/** "time", "memory", "size" or "other" (static). */
const char *proto_kind_word(proto_metric_kind k);

/** The direction a verdict rule asks of the ratio or the difference: 1
 * when it needs one above a bound (ratio_above, diff_above), -1 below one
 * (ratio_below, diff_below), 0 when neither or both. */
int proto_verdict_direction(const proto_verdict_rule *v);

/** 1 when b has a condition (on the ratio or the difference, or its
 * CI). */
int proto_bounds_any(const proto_bounds *b);

/** 1 when x and y have the same conditions (the same active ones, with
 * the same values). */
int proto_same_bounds(const proto_bounds *x, const proto_bounds *y);

/** b's conditions in words, on the ratio ("the CI excludes 1 and the
 * ratio is above 1.1") or, diff set, on the difference ("the difference's
 * CI excludes 0 and the difference is above 0.005", in the metric's
 * unit); the first after sep, the others after " and "; appended to out. */
void proto_bounds_words(const proto_bounds *b, int diff, const char *sep,
                        core_buf *out);

/** 1 when some verdict rule of r has a condition on the difference. */
int proto_rule_on_diff(const proto_rule *r);

/** What verdict rule v of s reads on metric: names[kind] when the sheet
 * gives it; on a time, the rule's name; on another kind "higher" or
 * "lower" for a rule with a direction (proto_verdict_direction), when no
 * other rule would read the same there, else the rule's name. NULL v or
 * metric: "inconclusive". Borrowed from the sheet or static. */
const char *proto_verdict_word(const proto_sheet *s,
                               const proto_verdict_rule *v,
                               const char *metric);
/** proto_verdict_word on any metric of kind k. */
const char *proto_verdict_word_on(const proto_sheet *s,
                                  const proto_verdict_rule *v,
                                  proto_metric_kind k);

/** Whether verdict name `name` is one of v's names on any kind (its
 * name, a names[] entry, or a default word): for verdict_is claims. */
int proto_verdict_answers_to(const proto_sheet *s, const proto_verdict_rule *v,
                             const char *name);

/* Command templates */

/* Values for the built-in placeholders of a template, borrowed for the
 * call. Any may be NULL. */
typedef struct proto_expand_ctx {
  const char *cmd, *arm, *workload, *run_id;
  long round;
  const char *batch_id; /* the batch's id ("b0003") */
  const char *cidfile;  /* the run's container ID file (a path) */
  const char *cid;      /* the container ID read from it */
  /* {experiment}: the sheet's id when NULL (and a sheet is given) */
  const char *experiment;
} proto_expand_ctx;

/** Expands {name} placeholders (sheet vars, then built-ins) in tmpl.
 * Returns a newly allocated string (core_free), or NULL with err filled
 * naming the unknown placeholder. "{{" stands for a literal "{".
 * {sheet_dir} and {origin} are paths the sheet's author does not choose:
 * each is one word for sh (core_buf_sh_quote). */
char *proto_expand(const proto_sheet *s, const char *tmpl,
                   const proto_expand_ctx *ctx, core_err *err);

/** 1 when template t holds the placeholder {name} ("{{name}" is
 * literal text, not the placeholder). */
int proto_uses_placeholder(const char *t, const char *name);

/** Expands tmpl like proto_expand, but cut at every placeholder {cut},
 * which is left without a value: the text is parts[0] VALUE parts[1] ...
 * VALUE parts[n-1] (n == 1 when tmpl does not use it). For a value known
 * only later ({cid}). OUT: *parts newly allocated, each string too
 * (free with core_names_free(*parts, *n)), *n >= 1. */
core_status proto_expand_split(const proto_sheet *s, const char *tmpl,
                               const proto_expand_ctx *ctx, const char *cut,
                               char ***parts, size_t *n, core_err *err);

/* The sheet in words */

/* Each appends to out, a growing buffer the caller owns (check its oom
 * at the end). */

/** A readable summary for `prereg check`: arms, workloads and runs
 * planned, the rule in words, hypotheses, threats, amendments. */
void proto_summary(const proto_sheet *s, core_buf *out);

/** The rule in words, one sentence, for reports ("median per arm and
 * ratio to bare, 95% percentile bootstrap CI ..."). */
void proto_rule_words(const proto_sheet *s, core_buf *out);

/** The commented starter sheet for `prereg new ID`. */
void proto_starter(const char *id, core_buf *out);
/** The starter's rule, as the starter writes it (indented two spaces,
 * with its comment, ending in "},\n"): the one text of the default rule,
 * which `prereg compare` decides under and writes into its sheets. */
void proto_starter_rule(core_buf *out);

/** 1 when s is a usable name of an arm, workload or host: 1 to 64 bytes
 * of letters, digits and _ . + -, starting with a letter or digit. */
int proto_good_name(const char *s);

/* Evaluating hypotheses */

/* The results a claim sees, one per workload, metric and non-reference
 * arm (filled by analysis/; the strings are the caller's, borrowed for
 * the call). */
typedef struct proto_result_view {
  const char *workload, *metric, *arm, *verdict;
  double ratio, ci_low, ci_high, median, median_reference;
  size_t n, n_reference;
  const char *rule_verdict; /* the rule's own name (NULL: verdict) */
  const char *reference;    /* the arm compared with (NULL: the sheet's) */
  /* median - median_reference and its CI (NaN: none) */
  double difference, difference_ci_low, difference_ci_high;
} proto_result_view;

typedef enum { PROTO_HELD, PROTO_NOT_HELD, PROTO_INCONCLUSIVE } proto_outcome;

/** The outcome as the contract writes it: "held", "not held" or
 * "inconclusive" (a static string). */
const char *proto_outcome_word(proto_outcome o);

/** Evaluates hypothesis h of s over results, whatever its kind of claim.
 * at_least, below and verdict_is look up the result of each of h->arms
 * for h->workload and h->metric (a missing result or a NaN CI is
 * inconclusive for that arm) and combine them: not held if any arm is
 * not held, else inconclusive if any is, else held; the reason lists
 * each arm's ratio and CI. A function claim is called in the sheet's
 * sandbox (instruction budget and memory cap apply) with a list of
 * result tables and returns "held", "not held" or "inconclusive" (or
 * true/false/nil) and an optional reason string. OUT: *outcome; *reason
 * newly allocated (core_free), never NULL on CORE_OK, NULL on error. */
core_status proto_eval_claim(const proto_sheet *s, const proto_hypothesis *h,
                             const proto_result_view *results, size_t n,
                             proto_outcome *outcome, char **reason,
                             core_err *err);
/** 1 once a budget (instructions, CPU time, allocation) stopped one of
 * the sheet's evaluations, else 0. Which of them fires first depends on
 * the machine, so what a reader is shown of it must not name one. */
int proto_budget_spent(const proto_sheet *s);

/** proto_eval_claim with a function claim's second argument too: the
 * comparisons between two arms besides the reference (pairs, each later
 * arm in sheet order against an earlier one, as analysis/ makes them). */
core_status proto_eval_claim_pairs(const proto_sheet *s,
                                   const proto_hypothesis *h,
                                   const proto_result_view *results, size_t n,
                                   const proto_result_view *pairs,
                                   size_t n_pairs, proto_outcome *outcome,
                                   char **reason, core_err *err);

/* Comparing versions of a sheet */

/* Whether an amendment changed a part of the protocol: analysis/ uses it
 * to decide when the original rule's verdicts are also due, reports/ to
 * name the workloads an amendment touched. Strings compare by content
 * (NULL equals NULL); a verdict condition's value counts only when the
 * condition is set; function claims compare by their source lines. */

/** 1 when the two rules decide alike (estimator, confidence, resamples,
 * seed and every verdict rule's conditions in order), else 0. The words
 * are apart: proto_same_rule_words. */
int proto_same_rule(const proto_rule *a, const proto_rule *b);
/** 1 when the verdict rules of a and b have the same names and per-kind
 * names, and the sheets declare their metrics alike (what the verdicts
 * read), else 0. */
int proto_same_rule_words(const proto_sheet *a, const proto_sheet *b);
/** 1 when two hypotheses state the same claim (id, cell, kind, bound,
 * arms; a function claim by its source lines). */
int proto_same_hypothesis(const proto_hypothesis *x,
                          const proto_hypothesis *y);
/** 1 when the two sheets state the same hypotheses in the same order. */
int proto_same_hypotheses(const proto_sheet *a, const proto_sheet *b);
/** 1 when the two workloads would be run and measured alike. */
int proto_same_workload(const proto_workload *a, const proto_workload *b);

/** The Lua release prereg was built with ("Lua 5.4.4"): a static string. */
const char *proto_lua_version(void);

#endif
