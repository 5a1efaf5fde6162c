/* plan_internal.h: what the files of `prereg plan` share (private to
 * cli/): its options, the pilot's values and the sheet's comparisons.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_CLI_PLAN_INTERNAL_H
#define PREREG_CLI_PLAN_INTERNAL_H

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "core/limits.h"

/* The candidate sizes without --sizes: seven, from the fewest values a
 * verdict needs by default to more than most sheets run. */
#define PLAN_SIZES_DEFAULT "5,10,20,30,50,100,200"
/* The share of the pilot's plausible truths the recommended size must
 * reach the power in, without --assurance. */
#define PLAN_ASSURANCE 0.8
#define PLAN_ASSURANCE_TEXT "0.8"

typedef struct plan_args {
  size_t sizes[PLAN_MAX_SIZES];
  size_t n_sizes;
  size_t looks[CORE_MAX_LOOKS]; /* --looks: the sequential design */
  size_t n_looks;
  long sims;
  double power, assurance;
  long runs;       /* --runs N: the power at N (added to the sizes), 0: none */
  int sheet_looks; /* the looks are the sheet's own (no --looks) */
} plan_args;

/** Without --looks, the looks the sheet's workloads declare (refused when
 * they differ); then --runs among the sizes (with looks, it must be the
 * last look). */
core_status cli_plan_looks(const struct proto_sheet *s, plan_args *a,
                           core_err *err);

/** --sizes, --sims, --power, --assurance (defaults 7 sizes, 1000, 0.8,
 * PLAN_ASSURANCE) and --pilot. */
core_status cli_plan_args(const cli_opts *opts, plan_args *a, core_err *err);

/* The values of one workload x arm x metric. */
typedef struct plan_vcell {
  char *workload, *arm, *metric;
  double *v;
  size_t n, cap;
} plan_vcell;

typedef struct plan_values {
  plan_vcell *c;
  size_t n;
  char *path;
  const char *kind; /* "pilot", "experiment" or "bundle" */
} plan_values;

/** The values at PATH (see cmd_plan.c). OUT: *pv (cli_plan_values_free,
 * also on error). */
core_status cli_plan_values(const char *path, const struct proto_sheet *s,
                            plan_values *pv, core_err *err);
void cli_plan_values_free(plan_values *pv);

/** The sheet's comparisons with pv's values (borrowed from pv); CORE_EINPUT
 * naming the first cell pv lacks. OUT: *out newly allocated (core_free). */
core_status cli_plan_cells(const struct proto_sheet *s, plan_values *pv,
                           analysis_plan_cell **out, size_t *n, core_err *err);

/** The pilot's digest and the fewest values of a cell (cmd_plan.c). */
core_status cli_plan_digest(const analysis_plan_cell *cells, size_t n,
                            char hex[CORE_SHA256_HEX], long *fewest,
                            core_err *err);

/** 1 when a hypothesis of s tests the comparison of arm against vs
 * (either way round) on workload w, metric m: its workload, metric and
 * arms name them (a function claim without a workload or metric tests
 * every one), vs being its `against` (NULL: the reference). */
int cli_plan_tested(const struct proto_sheet *s, const char *w, const char *m,
                    const char *arm, const char *vs);

/** Marks each cell the size is not chosen for as secondary: with
 * hypotheses, a comparison none tests, in a workload where one tests
 * some comparison (a workload no hypothesis tests is sized for all of
 * its comparisons, as a sheet without hypotheses). (plan_choose.c) */
void cli_plan_mark(const struct proto_sheet *s, analysis_plan_cell *cells,
                   size_t n);

/* What plan chose per workload, and what --write writes. */
typedef struct plan_pick {
  const char *workload; /* borrowed from the plan */
  long runs;            /* 0: none reaches the power (why in the plan) */
  size_t col;           /* the plan's column of runs */
  int sequential;       /* runs are the looks' last (col n_sizes) */
  double achieved;      /* the smallest P(decided) of its sized
                           comparisons at runs */
  double power_low;     /* the smallest power_low of them, -1: none */
  size_t n_sized, n_other;
  double other_lo, other_hi; /* the others' P(decided) at runs */
} plan_pick;

typedef struct plan_choice {
  plan_pick *w;
  size_t n;
  long given;          /* --runs N, else 0 */
  int for_hypotheses;  /* the sheet has hypotheses */
  const size_t *looks; /* the sequential design chosen, or NULL */
  size_t n_looks;
  double expected; /* comparisons expected to decide at the runs */
  size_t comparisons;
  double achieved;    /* the smallest over the workloads */
  double expected_se; /* expected's simulation error (binomial) */
  /* The smallest power_low of the sized comparisons at the runs (the
   * power a share `assurance` of the pilot's plausible truths reach);
   * -1 when none has one (the sequential design). */
  double power_low;
} plan_choice;

/** The runs per workload: the smallest size whose sized comparisons all
 * reach the power (with looks, the sequential design, its last look), or
 * a's --runs; and the power of the others there. OUT: *c (free with
 * cli_plan_choice_free). */
core_status cli_plan_choose(const struct proto_sheet *s, const plan_args *a,
                            const analysis_plan *p, plan_choice *c,
                            core_err *err);
void cli_plan_choice_free(plan_choice *c);

/** What differs between sheet s and ns, ns loaded from the text --write
 * made, beyond what c chose (each workload's runs and looks) and the plan
 * block it wrote; NULL when nothing does (plan_same.c). */
const char *cli_plan_changed(const struct proto_sheet *s,
                             const struct proto_sheet *ns,
                             const analysis_plan *p, const plan_choice *c,
                             const char *digest);

/** plan --write: the chosen runs (and looks) and the plan block into the
 * sheet's file (plan_write.c). */
core_status cli_plan_write(const cli_opts *opts, const struct proto_sheet *s,
                           const analysis_plan *p, const plan_choice *c,
                           const plan_values *pv, const char *digest,
                           long fewest, FILE *out, core_err *err);

#endif
