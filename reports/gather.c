/* gather.c: collects a report's inputs from the experiment folder
 * (versions, verification, one reading of the rows into the analysis and
 * the facts, batch facts, amendments).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"
#include "stamps/stamps.h"

/* Which workloads an amendment touched */

static int same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* What each changed word reads now: ' ("slower" reads "more memory" on
 * memory, was "higher")'. */
static void changed_words(core_buf *w, const proto_sheet *a,
                          const proto_sheet *b) {
  size_t k = 0;
  for (size_t i = 0; i < b->rule.n_verdicts && i < a->rule.n_verdicts; i++)
    for (int kind = 0; kind < PROTO_N_KINDS; kind++) {
      const char *was = proto_verdict_word_on(a, &a->rule.verdicts[i],
                                              (proto_metric_kind)kind),
                 *now = proto_verdict_word_on(b, &b->rule.verdicts[i],
                                              (proto_metric_kind)kind);
      if (strcmp(was, now) == 0)
        continue;
      core_buf_printf(w, "%s\"%s\" reads \"%s\" on %s, was \"%s\"",
                      k++ ? "; " : " (", b->rule.verdicts[i].name, now,
                      proto_kind_word((proto_metric_kind)kind), was);
    }
  core_buf_puts(w, k ? ")" : "");
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
  } else if (!proto_same_rule_words(a, b)) {
    SEP();
    core_buf_puts(&w, "the verdicts' words only, every decision as before");
    changed_words(&w, a, b);
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

/* The first reading of the rows: into the analysis and the facts. */
typedef struct gather_ctx {
  analysis_stream *st;
  report_row_facts *facts;
  const proto_sheet *sheet;
} gather_ctx;

static core_status on_row(void *vctx, const data_row *r, core_err *err) {
  gather_ctx *g = vctx;
  report_facts_add(g->facts, g->sheet, r);
  if (g->facts->oom)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return analysis_stream_add(g->st, r, err);
}

/* Rows are read once here, every row to the analysis and to the facts,
 * and kept nowhere: the workbook reads them again. */
static core_status analyse(report_input *in, const proto_sheet *orig,
                           core_err *err) {
  gather_ctx g = {NULL, NULL, in->sheet};
  core_status st;
  in->facts = core_calloc(1, sizeof *in->facts);
  if (!in->facts)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = report_facts_init(in->facts, in->sheet, err)) != CORE_OK)
    return st;
  g.facts = in->facts;
  analysis_init();
  if ((st = analysis_stream_begin(in->sheet, orig ? orig : in->sheet, in->exp,
                                  &g.st, err)) != CORE_OK)
    return st;
  if ((st = data_scan_rows(in->exp, on_row, &g, err)) != CORE_OK) {
    analysis_stream_free(g.st);
    return st;
  }
  if ((st = analysis_stream_end(g.st, 0, &in->summary, err)) != CORE_OK)
    return st;
  return data_registration_load(in->exp, &in->summary->registration,
                                &in->summary->n_registration, err);
}

/* The verification, run beside the first reading of the rows: both read
 * every batch, neither depends on the other, and the machine has more
 * than one core. Its result is judged before anything is written. */
typedef struct verify_job {
  const data_experiment *exp;
  core_buf problems;
  core_err err;
  core_status st;
} verify_job;

static void *verify_main(void *arg) {
  verify_job *j = arg;
  j->st = data_verify(j->exp, &j->problems, &j->err);
  return NULL;
}

/* A report must not lend its authority to files that no longer match
 * their digests: refused, unless force, which stamps every page. */
static core_status judge(report_input *in, verify_job *j, int force,
                         core_err *err) {
  if (j->st == CORE_EVERIFY) {
    if (!force)
      return core_fail(err, CORE_EVERIFY,
                       "%s: the data do not verify, so no report was "
                       "written:\n%s(fix or restore the files, or pass "
                       "--force to write a report stamped UNVERIFIED)",
                       in->exp->dir, j->problems.data ? j->problems.data : "");
    /* A cut list of problems would stamp the report with fewer than
     * verify found. */
    if (j->problems.oom)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    in->unverified = core_buf_steal(&j->problems);
    if (!in->unverified)
      in->unverified = core_strdup("verification failed");
    if (!in->unverified)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    return CORE_OK;
  }
  if (j->st != CORE_OK)
    *err = j->err;
  return j->st;
}

/* Verifies and reads the rows, the two at once when a thread starts. */
static core_status verify_and_analyse(report_input *in,
                                      const proto_sheet *orig, int force,
                                      core_err *err) {
  verify_job j;
  pthread_t tid;
  int threaded;
  core_status st;
  memset(&j, 0, sizeof j);
  j.exp = in->exp;
  core_buf_init(&j.problems);
  threaded = pthread_create(&tid, NULL, verify_main, &j) == 0;
  if (!threaded)
    verify_main(&j);
  st = analyse(in, orig, err);
  if (threaded)
    pthread_join(tid, NULL);
  /* Verification first, in what is said: its failure is the answer. */
  if (j.st != CORE_OK || st == CORE_OK) {
    core_err verr = {0};
    core_status vst = judge(in, &j, force, &verr);
    if (vst != CORE_OK) {
      *err = verr;
      st = vst;
    }
  }
  core_buf_free(&j.problems);
  return st;
}

core_status report_gather(proto_sheet *sheet, const char *sheet_arg,
                          const char *data_arg, int force, report_input **out,
                          core_err *err) {
  report_input *in = core_calloc(1, sizeof *in);
  proto_sheet *orig = NULL;
  core_status st;
  char *mpath;
  *out = NULL;
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
  st = data_experiment_open(data_arg, sheet, &in->exp, err);
  if (st != CORE_OK)
    goto fail;
  if (in->exp->n_versions == 0) {
    st = core_fail(err, CORE_ELOCK,
                   "%s: not registered under %s: nothing to report (run "
                   "prereg register %s, then collect data)",
                   sheet_arg, in->exp->dir, sheet_arg);
    goto fail;
  }
  if ((st = data_check_lock(in->exp, sheet, err)) != CORE_OK)
    goto fail;
  in->registered_at = core_strdup(in->exp->versions[0].filed_at);
  if (in->exp->versions[0].filed_at && !in->registered_at) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto fail;
  }
  if (in->exp->n_versions > 1 &&
      !(orig = data_load_version(in->exp, 0, err))) {
    st = err->status ? err->status : CORE_EVERIFY;
    goto fail;
  }
  /* With --force the rows are read as they are, whatever verification
   * finds (which then stamps every page UNVERIFIED); without, a changed
   * batch is refused by the reading too. */
  in->exp->trust_changed = force != 0;
  if ((st = verify_and_analyse(in, orig, force, err)) == CORE_OK)
    in->summary->status.unverified = in->unverified != NULL;
  if (st != CORE_OK ||
      (st = data_report_inputs_load(in->exp, &in->extra, err)) != CORE_OK ||
      (st = amendments(in, in->exp, err)) != CORE_OK)
    goto fail;
  mpath = core_path_join(in->exp->dir, "MANIFEST");
  if (mpath && core_exists(mpath)) {
    char hex[CORE_SHA256_HEX];
    if (core_sha256_file(mpath, hex, err) == CORE_OK)
      in->manifest_sha256 = core_strdup(hex);
    else
      memset(err, 0, sizeof *err); /* verify said so already */
  }
  core_free(mpath);
  proto_sheet_free(orig);
  *out = in;
  return CORE_OK;
fail:
  proto_sheet_free(orig);
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
  data_experiment_free(in->exp);
  if (in->facts)
    report_facts_free(in->facts);
  core_free(in->facts);
  core_free(in->manifest_sha256);
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
