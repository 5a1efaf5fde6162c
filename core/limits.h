/* limits.h: the caps on what a sheet may ask of prereg, so that every
 * command's time and memory stay bounded on untrusted input. Each is far
 * above what an honest study declares; docs/interface.md states each one
 * with the error it gives.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_CORE_LIMITS_H
#define PREREG_CORE_LIMITS_H

/* What a sheet declares. Analysis time grows with the hypotheses and with
 * comparisons x resamples (each comparison is bootstrapped resamples
 * times); memory with the declared cells (arms x the metrics of every
 * workload), which status, analyze and report keep one entry each for;
 * a batch's plan holds every run it will make. */
#define CORE_MAX_HYPOTHESES 500           /* hypotheses of a sheet */
#define CORE_MAX_RESAMPLE_WORK 100000000L /* comparisons x resamples */
#define CORE_MAX_CELLS 10000L             /* arms x workloads' metrics */
#define CORE_MAX_PLANNED_RUNS 1000000L    /* runs and warm-ups of a plan */
/* Lists that validation and every lookup walk for each use (a var per
 * placeholder, a declared metric per cell, the verdicts against each
 * other): small in any honest sheet, capped so that no pass over them
 * grows with the square of a hostile one. */
#define CORE_MAX_VARS 1000         /* entries of vars */
#define CORE_MAX_METRIC_DECLS 1000 /* entries of metrics */
#define CORE_MAX_VERDICTS 64       /* rule.verdicts */

#endif
