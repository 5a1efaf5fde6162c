/* look.c: one preregistered look of a workload: its comparisons on the
 * rows of the rounds up to the look, at the look's confidence (and the
 * family's correction), and whether every one of them is decided.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "analysis/analysis_internal.h"

/* The rows a look sees: the workload's, prereg's own up to the look's
 * round (imported rows, which have no round of the plan, as they come). */
typedef struct look_feed {
  analysis_stream *st;
  const char *workload;
  long n;
} look_feed;

static core_status feed_look(void *ctx, const data_row *r, core_err *err) {
  const look_feed *f = ctx;
  if (strcmp(r->workload, f->workload) != 0 ||
      (strcmp(r->source, "run") == 0 && r->round > f->n))
    return CORE_OK;
  return analysis_stream_add(f->st, r, err);
}

/* Whether every comparison of workload w the rule makes is in s and
 * decided. */
static int all_decided(const proto_sheet *sh, const analysis_summary *s,
                       size_t w) {
  const proto_workload *wl = &sh->workloads[w];
  size_t want = wl->n_metrics * proto_comparisons_per_metric(sh), got = 0;
  for (size_t i = 0; i < s->n_results + s->n_pairs; i++) {
    const analysis_result *r =
        i < s->n_results ? &s->results[i] : &s->pairs[i - s->n_results];
    if (strcmp(r->workload, wl->name) != 0)
      continue;
    if (strcmp(r->rule_verdict, "inconclusive") == 0 ||
        strcmp(r->rule_verdict, ANALYSIS_INSUFFICIENT) == 0)
      return 0;
    got++;
  }
  return got == want;
}

core_status analysis_look(const proto_sheet *sheet, const data_experiment *exp,
                          size_t w, size_t look, int *decided, core_err *err) {
  const proto_workload *wl = &sheet->workloads[w];
  proto_workload *ws;
  proto_sheet at;
  analysis_stream *st = NULL;
  analysis_summary *s = NULL;
  core_status rc;
  *decided = 0;
  if (look < 1 || look > wl->n_looks)
    return core_fail(err, CORE_EINPUT, "%s has no look %zu", wl->name, look);
  /* The plan as it stands at the look: the workload's runs end there;
   * only the rule matters (no hypotheses, no published ratios). */
  if (!(ws = core_calloc(sheet->n_workloads, sizeof *ws)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  memcpy(ws, sheet->workloads, sheet->n_workloads * sizeof *ws);
  ws[w].runs = wl->looks[look - 1];
  at = *sheet;
  at.workloads = ws;
  at.n_hypotheses = 0;
  at.n_published = 0;
  at.replicates = NULL;
  analysis_init();
  rc = analysis_stream_begin(&at, NULL, exp, &st, err);
  if (rc == CORE_OK) {
    look_feed f = {st, wl->name, wl->looks[look - 1]};
    rc = data_scan_rows(exp, feed_look, &f, err);
  }
  if (rc == CORE_OK) {
    rc = analysis_stream_end(st, 0, &s, err);
    st = NULL;
  }
  if (rc == CORE_OK)
    *decided = all_decided(&at, s, w);
  analysis_stream_free(st);
  analysis_summary_free(s);
  core_free(ws);
  return rc;
}
