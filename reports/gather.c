/* gather.c: collects a report's inputs from the experiment folder
 * (versions, verification, rows, analysis, facts, amendments).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

/* {==== Which workloads an amendment touched ==== */

static int same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Words for the workloads version b changed against a: added, removed,
 * redefined, superseded; an arm or rule change touches all of them. */
static char *affected_words(const proto_sheet *a, const proto_sheet *b,
                            const proto_amendment *am) {
  core_buf w;
  size_t k = 0;
  core_buf_init(&w);
#define SEP() core_buf_puts(&w, k++ ? "; " : "")
  for (size_t i = 0; i < b->n_workloads; i++) {
    long j = proto_workload_index(a, b->workloads[i].name);
    int sup = 0;
    for (size_t s = 0; am && s < am->n_supersedes; s++)
      sup |= strcmp(am->supersedes[s], b->workloads[i].name) == 0;
    if (j < 0) {
      SEP();
      core_buf_printf(&w, "%s (added)", b->workloads[i].name);
    } else if (!proto_same_workload(&a->workloads[j], &b->workloads[i]) ||
               sup) {
      SEP();
      core_buf_printf(
          &w, "%s (%s%s%s)", b->workloads[i].name,
          proto_same_workload(&a->workloads[j], &b->workloads[i]) ? ""
                                                                  : "changed",
          sup && !proto_same_workload(&a->workloads[j], &b->workloads[i])
              ? ", "
              : "",
          sup ? "earlier rows superseded" : "");
    }
  }
  for (size_t i = 0; i < a->n_workloads; i++)
    if (proto_workload_index(b, a->workloads[i].name) < 0) {
      SEP();
      core_buf_printf(&w, "%s (removed)", a->workloads[i].name);
    }
  for (size_t i = 0; i < b->n_arms; i++) {
    long j = proto_arm_index(a, b->arms[i].name);
    if (j < 0 || !same_str(a->arms[j].run, b->arms[i].run)) {
      SEP();
      core_buf_printf(&w, "all workloads (arm %s %s)", b->arms[i].name,
                      j < 0 ? "added" : "changed");
    }
  }
  for (size_t i = 0; i < a->n_arms; i++)
    if (proto_arm_index(b, a->arms[i].name) < 0) {
      SEP();
      core_buf_printf(&w, "all workloads (arm %s removed)", a->arms[i].name);
    }
  if (!proto_same_rule(&a->rule, &b->rule)) {
    SEP();
    core_buf_puts(&w, "all workloads (decision rule changed)");
  }
  if (a->n_hypotheses != b->n_hypotheses) {
    SEP();
    core_buf_puts(&w, "hypotheses added or removed");
  }
#undef SEP
  if (k == 0)
    core_buf_puts(&w, "none");
  if (w.oom) {
    core_buf_free(&w);
    return NULL;
  }
  return core_buf_steal(&w);
}

/* }==== */

static core_status amendments(report_input *in, const data_experiment *exp,
                              core_err *err) {
  size_t n = exp->n_versions ? exp->n_versions - 1 : 0;
  proto_sheet *prev = NULL;
  core_status st = CORE_OK;
  if (n == 0)
    return CORE_OK;
  in->amendments = core_calloc(n, sizeof *in->amendments);
  if (!in->amendments)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  prev = data_load_version(exp, 0, err);
  if (!prev)
    return err->status ? err->status : CORE_EVERIFY;
  for (size_t i = 1; i <= n && st == CORE_OK; i++) {
    report_amendment *m = &in->amendments[i - 1];
    const data_version *v = &exp->versions[i];
    proto_sheet *cur = data_load_version(exp, (int)v->number, err);
    const proto_amendment *am =
        cur && i - 1 < cur->n_amendments ? &cur->amendments[i - 1] : NULL;
    char *rel = core_asprintf("versions/v%d.diff", v->number);
    char *path = rel ? core_path_join(exp->dir, rel) : NULL;
    in->n_amendments++;
    m->number = v->number;
    m->runs_before = v->rows_when_filed;
    m->filed_at = core_strdup(v->filed_at);
    if (!cur) {
      st = err->status ? err->status : CORE_EVERIFY;
    } else {
      m->date = core_strdup(am ? am->date : "");
      m->why = core_strdup(am ? am->why : "");
      m->affected = affected_words(prev, cur, am);
      if (path && core_exists(path)) {
        size_t len;
        st = core_read_file(path, &m->diff, &len, err);
      }
      if (st == CORE_OK && (!m->date || !m->why || !m->affected || !path ||
                            (v->filed_at && !m->filed_at)))
        st = core_fail(err, CORE_ENOMEM, "out of memory");
    }
    core_free(rel);
    core_free(path);
    proto_sheet_free(prev);
    prev = cur;
  }
  proto_sheet_free(prev);
  return st;
}

core_status report_gather(proto_sheet *sheet, const char *sheet_arg,
                          const char *data_arg, int force, report_input **out,
                          core_err *err) {
  report_input *in = core_calloc(1, sizeof *in);
  data_experiment *exp = NULL;
  proto_sheet *orig = NULL;
  core_buf problems;
  core_status st;
  *out = NULL;
  core_buf_init(&problems);
  if (!in) {
    proto_sheet_free(sheet);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  in->sheet = sheet;
  in->sheet_arg = core_strdup(sheet_arg);
  in->data_arg = core_strdup(data_arg);
  if (!in->sheet_arg || !in->data_arg) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto fail;
  }
  st = data_experiment_open(data_arg, sheet, &exp, err);
  if (st != CORE_OK)
    goto fail;
  if (exp->n_versions == 0) {
    st = core_fail(err, CORE_ELOCK,
                   "%s: not registered under %s: nothing to report (run "
                   "prereg register %s, then collect data)",
                   sheet_arg, exp->dir, sheet_arg);
    goto fail;
  }
  st = data_check_lock(exp, sheet, err);
  if (st != CORE_OK)
    goto fail;
  /* Verification first: a report must not lend its authority to files
   * that no longer match their digests. */
  st = data_verify(exp, &problems, err);
  if (st == CORE_EVERIFY) {
    if (!force) {
      core_fail(err, CORE_EVERIFY,
                "%s: the data do not verify, so no report was written:\n"
                "%s(fix or restore the files, or pass --force to write a "
                "report stamped UNVERIFIED)",
                exp->dir, problems.data ? problems.data : "");
      goto fail;
    }
    /* A cut list of problems would stamp the report with fewer than
     * verify found. */
    if (problems.oom) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto fail;
    }
    in->unverified = core_buf_steal(&problems);
    if (!in->unverified)
      in->unverified = core_strdup("verification failed");
    if (!in->unverified) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto fail;
    }
    memset(err, 0, sizeof *err);
  } else if (st != CORE_OK)
    goto fail;
  in->registered_at = core_strdup(exp->versions[0].filed_at);
  in->rows = core_calloc(1, sizeof *in->rows);
  if (!in->rows || (exp->versions[0].filed_at && !in->registered_at)) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto fail;
  }
  st = data_load_rows(exp, in->rows, err);
  if (st != CORE_OK)
    goto fail;
  if (exp->n_versions > 1) {
    orig = data_load_version(exp, 0, err);
    if (!orig) {
      st = err->status ? err->status : CORE_EVERIFY;
      goto fail;
    }
  }
  analysis_init();
  st = analysis_run(sheet, orig ? orig : sheet, exp, in->rows, 0, &in->summary,
                    err);
  if (st != CORE_OK)
    goto fail;
  st = data_report_inputs_load(exp, &in->extra, err);
  if (st != CORE_OK)
    goto fail;
  st = amendments(in, exp, err);
  if (st != CORE_OK)
    goto fail;
  proto_sheet_free(orig);
  data_experiment_free(exp);
  core_buf_free(&problems);
  *out = in;
  return CORE_OK;
fail:
  proto_sheet_free(orig);
  data_experiment_free(exp);
  core_buf_free(&problems);
  report_input_free(in);
  return st;
}

void report_input_free(report_input *in) {
  if (!in)
    return;
  proto_sheet_free(in->sheet);
  analysis_summary_free(in->summary);
  data_rowset_free(in->rows);
  core_free(in->rows);
  data_report_inputs_free(in->extra);
  core_free(in->registered_at);
  for (size_t i = 0; i < in->n_amendments; i++) {
    report_amendment *m = &in->amendments[i];
    core_free(m->date);
    core_free(m->filed_at);
    core_free(m->why);
    core_free(m->diff);
    core_free(m->affected);
  }
  core_free(in->amendments);
  core_free(in->sheet_arg);
  core_free(in->data_arg);
  core_free(in->unverified);
  core_free(in);
}
