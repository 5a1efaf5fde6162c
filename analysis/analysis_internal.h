/* analysis_internal.h: what the files of analysis/ share (private): one
 * analysis of a set of rows, the values that count in it, and the
 * analysis across hosts built on it.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_ANALYSIS_INTERNAL_H
#define PREREG_ANALYSIS_INTERNAL_H

#include "analysis/analysis.h"

/** The sheet's rule on rows alone (no original analysis, no hosts): what
 * analysis_run gives for a sheet without hosts. OUT: *out newly allocated
 * (analysis_summary_free). */
core_status analysis_plain(const proto_sheet *sheet,
                           const data_experiment *exp, const data_rowset *rows,
                           int threads, analysis_summary **out, core_err *err);

/** The values of workload/metric/arm among rows that enter the analysis
 * (the same rule as analysis_run's). OUT: *vals newly allocated (NULL
 * when none), *n. */
core_status analysis_counted_values(const proto_sheet *sheet,
                                    const data_experiment *exp,
                                    const data_rowset *rows, const char *w,
                                    const char *m, const char *a,
                                    double **vals, size_t *n, core_err *err);

/** For a sheet with hosts: replaces the results and hypotheses of s (an
 * analysis of every host's rows together) with the cross-host entries
 * and each host's (analysis.h), and lists the hosts. */
core_status analysis_across(const proto_sheet *sheet,
                            const data_experiment *exp,
                            const data_rowset *rows, int threads,
                            analysis_summary *s, core_err *err);

#endif
