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
} plan_args;

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

/** Sorts x ascending. */
void cli_plan_sort(double *x, size_t n);

/** plan --write: the recommended runs and the plan block into the sheet's
 * file (plan_write.c). */
core_status cli_plan_write(const cli_opts *opts, const struct proto_sheet *s,
                           const analysis_plan *p, const plan_values *pv,
                           const char *digest, long fewest, FILE *out,
                           core_err *err);

#endif
