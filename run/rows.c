/* rows.c: the rows of a measured run (one per declared metric, with its
 * provenance) and the reference parity of a finished round.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE /* PATH_MAX */
#include <math.h>
#include <string.h>

#include "run/run_internal.h"

/* Rows of a run */

/* The value of metric m in o: built in and measured by prereg, or
 * reported by the command. */
static int metric_value(const run_outcome *o, const char *m, double *v) {
  const proto_builtin_metric *b = proto_builtin_by_name(m);
  if (b && b->from != PROTO_MEASURE_COMMAND)
    return o->has[b->from] ? (*v = o->val[b->from], 1) : 0;
  for (size_t i = 0; i < o->n_m; i++)
    if (!strcmp(o->m[i].name, m))
      return *v = o->m[i].value, 1;
  return 0;
}

/* One row of the run, its own strings allocated; 0 when out of memory. */
static int fill_row(data_row *r, const run_row_base *base,
                    const run_plan_item *item, long seq, const char *run_id,
                    const run_outcome *o, const char *metric) {
  const proto_workload *w = &base->s->workloads[item->workload];
  memset(r, 0, sizeof *r);
  r->sheet_version = base->version;
  r->sheet_sha256 = (char *)base->s->sha256;
  r->batch = (char *)base->bid;
  r->source = (char *)"run";
  r->workload = w->name;
  r->arm = base->s->arms[item->arm].name;
  r->round = item->round;
  r->seq = seq;
  r->run_id = core_strdup(run_id);
  r->started_at = core_strdup(o->started);
  r->host = (char *)(base->host ? base->host : run_host_name());
  r->image_digest = base->pre->img[item->arm].digest;
  r->cache_policy = (char *)(w->cache == PROTO_CACHE_COLD ? "cold" : "warm");
  r->cache_state = core_strdup(o->cache_state);
  r->exit_code = core_strdup(o->exit_codes);
  r->valid = o->valid;
  r->reason = core_strdup(o->reason);
  r->metric = (char *)metric;
  r->has_value = metric_value(o, metric, &r->value);
  if (!r->has_value)
    r->value = NAN;
  r->quick = base->quick;
  memcpy(r->fact, o->fact, sizeof r->fact);
  r->has_fact = o->has_fact;
  r->cpus = base->s->arms[item->arm].cpus ? base->s->arms[item->arm].cpus
                                          : (char *)"";
  return r->run_id && r->started_at && r->cache_state && r->exit_code &&
         r->reason;
}

core_status run_rows_add(run_rows *rows, const run_row_base *base,
                         const run_plan_item *item, long seq,
                         const char *run_id, run_outcome *o, core_err *err) {
  const proto_workload *w = &base->s->workloads[item->workload];
  for (size_t i = 0; i < w->n_metrics; i++) {
    double v;
    /* Not for the PSS when the reason already says why it is missing. */
    if (!metric_value(o, w->metrics[i], &v) &&
        !(o->pss_failed &&
          !strcmp(w->metrics[i], proto_measure_name(PROTO_MEASURE_PSS))))
      run_add_reason(o, "metric %s not reported", w->metrics[i]);
  }
  for (size_t i = 0; i < w->n_metrics; i++) {
    data_row *nv = core_grow(rows->v, &rows->cap, rows->n, sizeof *nv, 16);
    if (!nv)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    rows->v = nv;
    if (!fill_row(&rows->v[rows->n++], base, item, seq, run_id, o,
                  w->metrics[i]))
      return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  return CORE_OK;
}

void run_rows_clear(run_rows *rows) {
  for (size_t i = 0; i < rows->n; i++) {
    data_row *r = &rows->v[i];
    core_free(r->run_id);
    core_free(r->started_at);
    core_free(r->cache_state);
    core_free(r->exit_code);
    core_free(r->reason);
  }
  rows->n = 0;
}

void run_rows_free(run_rows *rows) {
  run_rows_clear(rows);
  core_free(rows->v);
  memset(rows, 0, sizeof *rows);
}

/* Reference parity */

/* Marks r invalid, adding why to its reason; 0 when out of memory. */
static int invalidate(data_row *r, const char *why) {
  char *nr = r->reason && r->reason[0]
                 ? core_asprintf("%s; %s", r->reason, why)
                 : core_strdup(why);
  if (!nr)
    return 0;
  core_free(r->reason);
  r->reason = nr;
  r->valid = 0;
  return 1;
}

/* Why the exit codes got differ from the reference's ref, naming the
 * first step that differs; "" when they are equal. */
static void difference(const char *got, const char *ref, char *why,
                       size_t cap) {
  const char *p = got, *q = ref;
  int steps = strchr(got, ';') || strchr(ref, ';');
  why[0] = 0;
  if (strcmp(ref, got) == 0)
    return;
  for (size_t step = 1;; step++) {
    size_t lp = strcspn(p, ";"), lq = strcspn(q, ";");
    if (lp != lq || strncmp(p, q, lp) != 0) {
      if (steps)
        snprintf(why, cap, "step %zu: exit %.*s, reference arm exit %.*s",
                 step, (int)lp, p, (int)lq, q);
      else
        snprintf(why, cap, "exit %.*s, reference arm exit %.*s", (int)lp, p,
                 (int)lq, q);
      return;
    }
    if (!p[lp] || !q[lq])
      return;
    p += lp + 1;
    q += lq + 1;
  }
}

core_status run_rows_parity(run_rows *round, const proto_sheet *s,
                            long round_no, const char *ref_codes,
                            core_err *err) {
  const char *ref_arm = s->arms[s->reference].name;
  for (size_t i = 0; i < round->n; i++) {
    data_row *r = &round->v[i];
    if (!strcmp(r->arm, ref_arm))
      continue;
    char why[300];
    if (!ref_codes)
      snprintf(why, sizeof why, "no reference arm run in round %ld", round_no);
    else
      difference(r->exit_code, ref_codes, why, sizeof why);
    if (why[0] && !invalidate(r, why))
      return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  return CORE_OK;
}
