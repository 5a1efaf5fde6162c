/* replication.c: what differs between a replication and the original it
 * replicates, computed from both protocols and both data folders: the
 * arms, commands, workloads, runs, rule, inputs' and images' digests, and
 * the host and tool facts side by side.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "reports/report_internal.h"

#define esc report_md_esc
#define code_span report_code_span

/* The original's sheet version and data, from DATA/ID/original/. */
typedef struct orig_side {
  proto_sheet *sheet;
  data_experiment *exp;
  data_report_inputs *facts;
} orig_side;

static int same(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_list(char **a, size_t na, char **b, size_t nb) {
  if (na != nb)
    return 0;
  for (size_t i = 0; i < na; i++)
    if (!same(a[i], b[i]))
      return 0;
  return 1;
}

/* One row of the differences table. */
static void row(core_buf *b, size_t *n, const char *what, const char *was,
                const char *now) {
  if (*n == 0)
    core_buf_puts(b, "| What | Original | Here |\n|---|---|---|\n");
  (*n)++;
  core_buf_puts(b, "| ");
  esc(b, what);
  core_buf_puts(b, " | ");
  if (was)
    code_span(b, was);
  else
    core_buf_puts(b, "–");
  core_buf_puts(b, " | ");
  if (now)
    code_span(b, now);
  else
    core_buf_puts(b, "–");
  core_buf_puts(b, " |\n");
}

static void differ(core_buf *b, size_t *n, const char *what, const char *was,
                   const char *now) {
  if (!same(was, now))
    row(b, n, what, was, now);
}

static void differ_list(core_buf *b, size_t *n, const char *what, char **a,
                        size_t na, char **c, size_t nc) {
  char k[160];
  for (size_t i = 0; i < (na > nc ? na : nc); i++) {
    snprintf(k, sizeof k, "%s %zu", what, i + 1);
    differ(b, n, k, i < na ? a[i] : NULL, i < nc ? c[i] : NULL);
  }
}

static void differ_num(core_buf *b, size_t *n, const char *what, double was,
                       double now) {
  char x[64], y[64];
  if (was == now)
    return;
  snprintf(x, sizeof x, "%.17g", was);
  snprintf(y, sizeof y, "%.17g", now);
  row(b, n, what, x, y);
}

static void arms(core_buf *b, size_t *n, const proto_sheet *o,
                 const proto_sheet *s) {
  char k[160];
  for (size_t i = 0; i < o->n_arms; i++) {
    const proto_arm *a = &o->arms[i];
    long j = proto_arm_index(s, a->name);
    snprintf(k, sizeof k, "arm %s", a->name);
    if (j < 0) {
      row(b, n, k, a->run, "dropped");
      continue;
    }
    const proto_arm *c = &s->arms[j];
    snprintf(k, sizeof k, "arm %s run", a->name);
    differ(b, n, k, a->run, c->run);
    snprintf(k, sizeof k, "arm %s requires", a->name);
    if (!same_list(a->requires, a->n_requires, c->requires, c->n_requires))
      differ_list(b, n, k, a->requires, a->n_requires, c->requires,
                  c->n_requires);
    snprintf(k, sizeof k, "arm %s versions", a->name);
    if (!same_list(a->versions, a->n_versions, c->versions, c->n_versions))
      differ_list(b, n, k, a->versions, a->n_versions, c->versions,
                  c->n_versions);
    snprintf(k, sizeof k, "arm %s image digest", a->name);
    differ(b, n, k, a->image.digest_cmd, c->image.digest_cmd);
  }
  for (size_t j = 0; j < s->n_arms; j++)
    if (proto_arm_index(o, s->arms[j].name) < 0) {
      snprintf(k, sizeof k, "arm %s", s->arms[j].name);
      row(b, n, k, "not in the original", s->arms[j].run);
    }
  differ(b, n, "reference arm", o->arms[o->reference].name,
         s->arms[s->reference].name);
  differ(b, n, "image digest", o->image.digest_cmd, s->image.digest_cmd);
  differ(b, n, "image tree", o->image.tree, s->image.tree);
}

static void workloads(core_buf *b, size_t *n, const proto_sheet *o,
                      const proto_sheet *s) {
  char k[160];
  for (size_t i = 0; i < o->n_workloads; i++) {
    const proto_workload *w = &o->workloads[i];
    long j = proto_workload_index(s, w->name);
    if (j < 0) {
      snprintf(k, sizeof k, "workload %s", w->name);
      row(b, n, k, w->cmd ? w->cmd : w->name, "dropped");
      continue;
    }
    const proto_workload *c = &s->workloads[j];
    snprintf(k, sizeof k, "workload %s cmd", w->name);
    differ(b, n, k, w->cmd, c->cmd);
    snprintf(k, sizeof k, "workload %s step", w->name);
    if (!same_list(w->steps, w->n_steps, c->steps, c->n_steps))
      differ_list(b, n, k, w->steps, w->n_steps, c->steps, c->n_steps);
    snprintf(k, sizeof k, "workload %s prepare", w->name);
    differ(b, n, k, w->prepare, c->prepare);
    snprintf(k, sizeof k, "workload %s cleanup", w->name);
    differ(b, n, k, w->cleanup, c->cleanup);
    snprintf(k, sizeof k, "workload %s runs", w->name);
    differ_num(b, n, k, (double)w->runs, (double)c->runs);
    snprintf(k, sizeof k, "workload %s warm-up", w->name);
    differ_num(b, n, k, (double)w->warmup, (double)c->warmup);
    snprintf(k, sizeof k, "workload %s metric", w->name);
    if (!same_list(w->metrics, w->n_metrics, c->metrics, c->n_metrics))
      differ_list(b, n, k, w->metrics, w->n_metrics, c->metrics, c->n_metrics);
  }
  for (size_t j = 0; j < s->n_workloads; j++)
    if (proto_workload_index(o, s->workloads[j].name) < 0) {
      snprintf(k, sizeof k, "workload %s", s->workloads[j].name);
      row(b, n, k, "not in the original",
          s->workloads[j].cmd ? s->workloads[j].cmd : s->workloads[j].name);
    }
}

static void rule(core_buf *b, size_t *n, const proto_sheet *o,
                 const proto_sheet *s) {
  const proto_rule *a = &o->rule, *c = &s->rule;
  char k[160];
  differ(b, n, "rule estimator", a->estimator, c->estimator);
  differ_num(b, n, "rule confidence", a->confidence, c->confidence);
  differ_num(b, n, "rule resamples", (double)a->resamples,
             (double)c->resamples);
  differ_num(b, n, "rule seed", (double)a->seed, (double)c->seed);
  differ_num(b, n, "rule min_n", (double)a->min_n, (double)c->min_n);
  for (size_t i = 0;
       i < (a->n_verdicts > c->n_verdicts ? a->n_verdicts : c->n_verdicts);
       i++) {
    const proto_verdict_rule *x = i < a->n_verdicts ? &a->verdicts[i] : NULL;
    const proto_verdict_rule *y = i < c->n_verdicts ? &c->verdicts[i] : NULL;
    snprintf(k, sizeof k, "rule verdict %zu", i + 1);
    if (!x || !y || !same(x->name, y->name) ||
        !proto_same_bounds(&x->ratio, &y->ratio) ||
        !proto_same_bounds(&x->diff, &y->diff))
      row(b, n, k, x ? x->name : NULL, y ? y->name : NULL);
  }
}

/* The inputs' digests each side's version recorded. */
static void inputs(core_buf *b, size_t *n, const data_version *o,
                   const data_version *s) {
  char k[300];
  for (size_t i = 0; i < o->n_inputs; i++) {
    const char *now = NULL;
    for (size_t j = 0; j < s->n_inputs && !now; j++)
      if (strcmp(o->inputs[i].path, s->inputs[j].path) == 0)
        now = s->inputs[j].sha256;
    snprintf(k, sizeof k, "input %s sha256", o->inputs[i].path);
    differ(b, n, k, o->inputs[i].sha256, now);
  }
  for (size_t j = 0; j < s->n_inputs; j++) {
    int had = 0;
    for (size_t i = 0; i < o->n_inputs && !had; i++)
      had = strcmp(o->inputs[i].path, s->inputs[j].path) == 0;
    snprintf(k, sizeof k, "input %s sha256", s->inputs[j].path);
    if (!had)
      row(b, n, k, NULL, s->inputs[j].sha256);
  }
}

/* Each arm's image digests in one experiment's rows: the first seen,
 * and "several" when its rows hold more than one. */
typedef struct arm_digests {
  const proto_sheet *sheet;
  char **first;
  int *several;
} arm_digests;

static core_status digest_row(void *ctx, const data_row *r, core_err *err) {
  arm_digests *d = ctx;
  long a = proto_arm_index(d->sheet, r->arm);
  if (a < 0 || !r->image_digest || !*r->image_digest)
    return CORE_OK;
  if (!d->first[a]) {
    if (!(d->first[a] = core_strdup(r->image_digest)))
      return core_fail(err, CORE_ENOMEM, "out of memory");
  } else if (strcmp(d->first[a], r->image_digest) != 0)
    d->several[a] = 1;
  return CORE_OK;
}

/* The image digests the rows of both record, arm by arm (the
 * replication's arms), where they differ. */
static void image_digests(core_buf *b, size_t *n, const orig_side *o,
                          const report_input *in) {
  size_t na = in->sheet->n_arms;
  char *f1[256] = {0}, *f2[256] = {0}, k[160];
  int s1[256] = {0}, s2[256] = {0};
  arm_digests d1 = {in->sheet, f1, s1}, d2 = {in->sheet, f2, s2};
  core_err err;
  memset(&err, 0, sizeof err);
  if (na <= 256 && data_scan_rows(o->exp, digest_row, &d1, &err) == CORE_OK &&
      data_scan_rows(in->exp, digest_row, &d2, &err) == CORE_OK)
    for (size_t a = 0; a < na; a++) {
      snprintf(k, sizeof k, "arm %s image digest recorded",
               in->sheet->arms[a].name);
      differ(b, n, k, s1[a] ? "several" : f1[a], s2[a] ? "several" : f2[a]);
    }
  for (size_t a = 0; a < na && a < 256; a++) {
    core_free(f1[a]);
    core_free(f2[a]);
  }
}

/* The last batch's fact key, or NULL. */
static const char *last_fact(const data_report_inputs *x, const char *key) {
  return x && x->n_batches ? data_fact_get(&x->batches[x->n_batches - 1], key)
                           : NULL;
}

/* The host and tool facts of both, side by side (the last batch of
 * each): the CPU, cores, memory, kernel, image digests and each arm's
 * versions output. */
static void facts(core_buf *b, const orig_side *o, const report_input *in) {
  static const char *const keys[][2] = {{"host.cpu_model", "CPU"},
                                        {"host.cores", "cores"},
                                        {"host.mem_total_mib", "memory (MiB)"},
                                        {"host.kernel", "kernel"},
                                        {"host.os", "system"},
                                        {"image_digest", "image digest"}};
  char key[256];
  core_buf_puts(b, "| Fact | Original | Here |\n|---|---|---|\n");
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    const char *x = last_fact(o->facts, keys[i][0]);
    const char *y = last_fact(in->extra, keys[i][0]);
    if (!x && !y)
      continue;
    core_buf_puts(b, "| ");
    esc(b, keys[i][1]);
    core_buf_puts(b, " | ");
    esc(b, x ? x : "not recorded");
    core_buf_puts(b, " | ");
    esc(b, y ? y : "not recorded");
    core_buf_puts(b, " |\n");
  }
  for (size_t a = 0; a < in->sheet->n_arms; a++)
    for (size_t k = 0; k < in->sheet->arms[a].n_versions; k++) {
      const char *x, *y;
      snprintf(key, sizeof key, "versions.%s[%zu].output",
               in->sheet->arms[a].name, k);
      x = last_fact(o->facts, key);
      y = last_fact(in->extra, key);
      core_buf_puts(b, "| ");
      esc(b, in->sheet->arms[a].name);
      core_buf_puts(b, ": ");
      code_span(b, in->sheet->arms[a].versions[k]);
      core_buf_puts(b, " | ");
      esc(b, x ? x : "not recorded");
      core_buf_puts(b, " | ");
      esc(b, y ? y : "not recorded");
      core_buf_puts(b, " |\n");
    }
  core_buf_puts(b, "\n");
}

static core_status open_side(const report_input *in, orig_side *o,
                             core_err *err) {
  const proto_replicates *rp = in->sheet->replicates;
  char *dir = core_asprintf("%s/original", in->exp->dir);
  char *path = core_asprintf("%s/original/%s/versions/v%ld.lua", in->exp->dir,
                             rp->experiment, rp->version);
  core_status st = CORE_OK;
  if (!dir || !path)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else if (!(o->sheet = proto_sheet_load(path, err)))
    st = err->status ? err->status : CORE_EPROTOCOL;
  else if ((st = data_experiment_open(dir, o->sheet, &o->exp, err)) == CORE_OK)
    st = data_report_inputs_load(o->exp, &o->facts, err);
  if (st == CORE_OK && (long)o->exp->n_versions <= rp->version)
    st = core_fail(err, CORE_EVERIFY, "%s: no version v%ld", dir, rp->version);
  core_free(dir);
  core_free(path);
  return st;
}

void report_replication_differences(core_buf *b, const report_input *in) {
  orig_side o = {NULL, NULL, NULL};
  core_err err;
  size_t n = 0;
  const proto_replicates *rp = in->sheet->replicates;
  if (!rp || !in->exp)
    return;
  memset(&err, 0, sizeof err);
  core_buf_puts(b, "## What differs from the original\n\n");
  if (open_side(in, &o, &err) != CORE_OK) {
    core_buf_puts(b, "The original's data are not here to compare with: ");
    esc(b, err.msg);
    core_buf_puts(b, "\n\n");
  } else {
    arms(b, &n, o.sheet, in->sheet);
    workloads(b, &n, o.sheet, in->sheet);
    rule(b, &n, o.sheet, in->sheet);
    if (in->exp->n_versions)
      inputs(b, &n, &o.exp->versions[rp->version],
             &in->exp->versions[in->exp->n_versions - 1]);
    image_digests(b, &n, &o, in);
    if (n)
      core_buf_puts(b, "\n");
    core_buf_printf(b,
                    "%zu difference%s between the original's protocol (%s "
                    "v%ld) and this one's (v%zu)%s.\n\n",
                    n, n == 1 ? "" : "s", rp->experiment, rp->version,
                    in->exp->n_versions ? in->exp->n_versions - 1 : 0,
                    n ? ", computed from both sheets and their records"
                      : ": the same arms, commands, workloads, runs, rule "
                        "and inputs");
    facts(b, &o, in);
  }
  data_report_inputs_free(o.facts);
  data_experiment_free(o.exp);
  proto_sheet_free(o.sheet);
}
