/* plan_same.c: after `prereg plan --write` has edited the sheet's text,
 * the sheet loaded from it (by the real loader) against the one read:
 * what changed must be exactly the runs and looks chosen and the plan
 * block written; anything else (a number edited inside a string the
 * scanner misread, a field it did not reach) refuses the write.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>

#include "cli/cli_internal.h"
#include "cli/plan_internal.h"
#include "protocols/proto.h"

static int same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && !strcmp(a, b));
}

static int same_list(char *const *a, size_t na, char *const *b, size_t nb) {
  if (na != nb)
    return 0;
  for (size_t i = 0; i < na; i++)
    if (!same_str(a[i], b[i]))
      return 0;
  return 1;
}

static int same_image(const proto_image *a, const proto_image *b) {
  return same_str(a->tree, b->tree) &&
         same_str(a->digest_cmd, b->digest_cmd) &&
         same_str(a->resident, b->resident);
}

static int same_arms(const proto_sheet *s, const proto_sheet *ns) {
  if (s->n_arms != ns->n_arms || s->reference != ns->reference)
    return 0;
  for (size_t a = 0; a < s->n_arms; a++) {
    const proto_arm *x = &s->arms[a], *y = &ns->arms[a];
    if (!same_str(x->name, y->name) || !same_str(x->run, y->run) ||
        x->whole != y->whole || x->null != y->null ||
        !same_str(x->cpus, y->cpus) || !same_image(&x->image, &y->image) ||
        !same_list(x->requires, x->n_requires, y->requires, y->n_requires) ||
        !same_list(x->versions, x->n_versions, y->versions, y->n_versions))
      return 0;
  }
  return 1;
}

static int same_vars(const proto_sheet *s, const proto_sheet *ns) {
  if (s->n_vars != ns->n_vars)
    return 0;
  for (size_t i = 0; i < s->n_vars; i++)
    if (!same_str(s->vars[i].name, ns->vars[i].name) ||
        !same_str(s->vars[i].value, ns->vars[i].value))
      return 0;
  return 1;
}

static int same_rest(const proto_sheet *s, const proto_sheet *ns) {
  if (s->n_amendments != ns->n_amendments || s->n_metrics != ns->n_metrics ||
      s->n_published != ns->n_published || !s->replicates != !ns->replicates ||
      s->hosts.declared != ns->hosts.declared ||
      s->conditions.declared != ns->conditions.declared)
    return 0;
  for (size_t i = 0; i < s->n_amendments; i++)
    if (!same_str(s->amendments[i].date, ns->amendments[i].date) ||
        !same_str(s->amendments[i].why, ns->amendments[i].why))
      return 0;
  for (size_t i = 0; i < s->n_metrics; i++)
    if (!same_str(s->metrics[i].name, ns->metrics[i].name) ||
        !same_str(s->metrics[i].unit, ns->metrics[i].unit))
      return 0;
  return same_list(s->threats, s->n_threats, ns->threats, ns->n_threats) &&
         same_list(s->inputs, s->n_inputs, ns->inputs, ns->n_inputs);
}

static int same_longs(const long *a, size_t na, const size_t *b, size_t nb) {
  if (na != nb)
    return 0;
  for (size_t i = 0; i < na; i++)
    if (a[i] != (long)b[i])
      return 0;
  return 1;
}

/* Workload w of ns: what c chose for it (its runs, its looks), and the
 * rest as in s. */
static const char *workload_changed(const proto_sheet *s,
                                    const proto_sheet *ns, size_t w,
                                    const plan_choice *c) {
  const proto_workload *x = &s->workloads[w];
  proto_workload y = ns->workloads[w];
  const plan_pick *k = NULL;
  for (size_t i = 0; i < c->n; i++)
    if (same_str(c->w[i].workload, x->name))
      k = &c->w[i];
  if (!same_str(x->name, y.name))
    return "names its workloads otherwise";
  if (y.runs != (k ? k->runs : x->runs))
    return "has another number of runs than the one chosen";
  if (k && k->sequential) {
    if (!same_longs(y.looks, y.n_looks, c->looks, c->n_looks))
      return "has other looks than the ones chosen";
  } else if (y.n_looks != x->n_looks ||
             (x->n_looks &&
              memcmp(y.looks, x->looks, x->n_looks * sizeof *x->looks))) {
    return "has other looks than the ones chosen";
  }
  y.runs = x->runs;
  y.looks = x->looks;
  y.n_looks = x->n_looks;
  return proto_same_workload(x, &y) ? NULL
                                    : "changes a workload beyond its runs";
}

static int plan_as_written(const proto_plan *q, const analysis_plan *p,
                           const plan_choice *c, const char *digest) {
  /* power and achieved are written to 6 and 4 significant digits. */
  return q->declared && fabs(q->power - p->power) <= 1e-5 * p->power &&
         q->sims == p->sims &&
         same_longs(q->sizes, q->n_sizes, p->sizes, p->n_sizes) &&
         same_str(q->pilot_sha256, digest) &&
         q->sized_for_hypotheses == c->for_hypotheses && q->runs == c->given &&
         q->comparisons == (long)c->comparisons &&
         fabs(q->achieved - c->achieved) <= 5e-4 &&
         (c->n_looks ? same_longs(q->looks, q->n_looks, c->looks, c->n_looks)
                     : q->n_looks == 0);
}

const char *cli_plan_changed(const proto_sheet *s, const proto_sheet *ns,
                             const analysis_plan *p, const plan_choice *c,
                             const char *digest) {
  if (!same_str(s->id, ns->id) || !same_str(s->title, ns->title) ||
      !same_str(s->question, ns->question) ||
      !same_str(s->author, ns->author) || !same_str(s->cpus, ns->cpus) ||
      !same_image(&s->image, &ns->image) || !same_vars(s, ns))
    return "changes the sheet's identity, image or vars";
  if (!same_arms(s, ns))
    return "changes an arm";
  if (s->n_workloads != ns->n_workloads)
    return "has another number of workloads";
  for (size_t w = 0; w < s->n_workloads; w++) {
    const char *why = workload_changed(s, ns, w, c);
    if (why)
      return why;
  }
  if (!proto_same_rule(&s->rule, &ns->rule) || !proto_same_hypotheses(s, ns))
    return "changes the rule or the hypotheses";
  if (!same_rest(s, ns))
    return "changes the threats, inputs, metrics, amendments or hosts";
  char rule[CORE_SHA256_HEX];
  if (!plan_as_written(&ns->plan, p, c, digest) ||
      proto_plan_rule_sha256(s, rule) != 0 ||
      !same_str(ns->plan.rule_sha256, rule))
    return "has another plan block than the one written";
  return NULL;
}
