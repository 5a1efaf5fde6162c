/* plan.c: the report's "Sample size" section: how the sheet's runs were
 * chosen (its plan block, frozen with it), what the plan expected to
 * decide against what was decided, and the pilot, which never counts.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

/* Comparisons of the analysis with a verdict of the rule. */
static size_t decided(const analysis_summary *a, size_t *of) {
  size_t n = 0;
  *of = a->n_results;
  for (size_t i = 0; i < a->n_results; i++) {
    const char *v = a->results[i].rule_verdict;
    n += v && strcmp(v, "inconclusive") && strcmp(v, ANALYSIS_INSUFFICIENT);
  }
  return n;
}

static void planned(core_buf *b, const report_input *in) {
  const proto_plan *p = &in->sheet->plan;
  size_t of, n = decided(in->summary, &of);
  core_buf_printf(b,
                  "The runs per arm were chosen by `prereg plan` before "
                  "registering, from the values of a %s (at least %ld "
                  "values per cell, SHA-256 `%.12s`): for each comparison "
                  "and each size tried (",
                  p->pilot_source, p->pilot_runs, p->pilot_sha256);
  for (size_t i = 0; i < p->n_sizes; i++)
    core_buf_printf(b, "%s%ld", i ? ", " : "", p->sizes[i]);
  core_buf_printf(b,
                  " runs per arm), %ld simulated experiments drew that many "
                  "values per arm from them and applied this rule; each "
                  "workload's runs are the smallest size at which every "
                  "comparison of it decided (any verdict but inconclusive) "
                  "with a probability of at least %g%%.",
                  p->sims, 100.0 * p->power);
  if (p->expected >= 0 && p->comparisons >= 0)
    core_buf_printf(b,
                    " The plan expected %.3g of its %ld comparisons to "
                    "decide; %s%zu of %zu did.",
                    p->expected, p->comparisons,
                    in->summary->provisional ? "so far (the data are not "
                                               "complete) "
                                             : "",
                    n, of);
  core_buf_puts(b, "\n\n");
}

void report_plan_section(core_buf *b, const report_input *in) {
  long runs = -1, valid = -1;
  core_err err = {0};
  if (in->exp)
    (void)data_pilot_count(in->exp, &runs, &valid, &err);
  if (!in->sheet->plan.declared && runs < 0)
    return;
  core_buf_puts(b, "## Sample size\n\n");
  if (in->sheet->plan.declared)
    planned(b, in);
  else
    core_buf_puts(b, "The runs per arm are the sheet's own: it has no plan "
                     "block saying how they were chosen.\n\n");
  if (runs >= 0)
    core_buf_printf(b,
                    "A pilot of %ld runs (%ld valid) is kept in `pilot/` "
                    "beside the data, listed in the MANIFEST and bundled. "
                    "It is a pilot: none of its runs counts for the plan's "
                    "runs, the analysis or any verdict in this report.\n\n",
                    runs, valid);
}
