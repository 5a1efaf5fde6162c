/* compare.c: whether two versions of a sheet differ in their rule, their
 * hypotheses or a workload, and the words for an outcome (shared by the
 * analysis, the JSON and the reports).
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "protocols/proto.h"

static int same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_list(char *const *a, size_t na, char *const *b, size_t nb) {
  if (na != nb)
    return 0;
  for (size_t i = 0; i < na; i++)
    if (!same_str(a[i], b[i]))
      return 0;
  return 1;
}

int proto_same_rule(const proto_rule *a, const proto_rule *b) {
  if (!same_str(a->estimator, b->estimator) ||
      a->confidence != b->confidence || a->resamples != b->resamples ||
      a->seed != b->seed || a->min_n != b->min_n ||
      a->n_verdicts != b->n_verdicts || a->pairs != b->pairs ||
      a->spending != b->spending || a->family != b->family)
    return 0;
  for (size_t i = 0; i < a->n_verdicts; i++) {
    const proto_verdict_rule *x = &a->verdicts[i], *y = &b->verdicts[i];
    if (!proto_same_bounds(&x->ratio, &y->ratio) ||
        !proto_same_bounds(&x->diff, &y->diff))
      return 0;
  }
  return 1;
}

int proto_same_rule_words(const proto_sheet *a, const proto_sheet *b) {
  if (a->rule.n_verdicts != b->rule.n_verdicts || a->n_metrics != b->n_metrics)
    return 0;
  for (size_t i = 0; i < a->rule.n_verdicts; i++) {
    const proto_verdict_rule *x = &a->rule.verdicts[i],
                             *y = &b->rule.verdicts[i];
    if (!same_str(x->name, y->name))
      return 0;
    for (int k = 0; k < PROTO_N_KINDS; k++)
      if (!same_str(x->names[k], y->names[k]))
        return 0;
  }
  /* Both sorted by name (protocols/load.c). */
  for (size_t i = 0; i < a->n_metrics; i++) {
    const proto_metric_decl *x = &a->metrics[i], *y = &b->metrics[i];
    if (!same_str(x->name, y->name) || x->has_kind != y->has_kind ||
        (x->has_kind && x->kind != y->kind) ||
        x->higher_better != y->higher_better || !same_str(x->unit, y->unit))
      return 0;
  }
  return 1;
}

int proto_same_hypothesis(const proto_hypothesis *x,
                          const proto_hypothesis *y) {
  if (!same_str(x->id, y->id) || !same_str(x->workload, y->workload) ||
      !same_str(x->metric, y->metric) || x->kind != y->kind ||
      !same_str(x->against, y->against) ||
      !same_list(x->arms, x->n_arms, y->arms, y->n_arms))
    return 0;
  if ((x->kind == PROTO_CLAIM_AT_LEAST || x->kind == PROTO_CLAIM_BELOW ||
       x->kind == PROTO_CLAIM_DIFF_BELOW ||
       x->kind == PROTO_CLAIM_DIFF_AT_LEAST) &&
      x->x != y->x)
    return 0;
  if (x->kind == PROTO_CLAIM_VERDICT_IS && !same_str(x->verdict, y->verdict))
    return 0;
  if (x->kind == PROTO_CLAIM_FUNCTION && !same_str(x->fn_source, y->fn_source))
    return 0;
  return 1;
}

int proto_same_hypotheses(const proto_sheet *a, const proto_sheet *b) {
  if (a->n_hypotheses != b->n_hypotheses)
    return 0;
  for (size_t i = 0; i < a->n_hypotheses; i++)
    if (!proto_same_hypothesis(&a->hypotheses[i], &b->hypotheses[i]))
      return 0;
  return 1;
}

int proto_same_workload(const proto_workload *a, const proto_workload *b) {
  return a->runs == b->runs && a->warmup == b->warmup &&
         same_str(a->cmd, b->cmd) &&
         same_list(a->steps, a->n_steps, b->steps, b->n_steps) &&
         same_str(a->prepare, b->prepare) &&
         same_str(a->cleanup, b->cleanup) &&
         same_list(a->metrics, a->n_metrics, b->metrics, b->n_metrics) &&
         a->sample_after_s == b->sample_after_s &&
         a->timeout_s == b->timeout_s && a->order == b->order &&
         a->cache == b->cache && a->expect == b->expect &&
         a->expect_code == b->expect_code && a->source == b->source &&
         a->cgroup == b->cgroup &&
         a->procs.descendants == b->procs.descendants &&
         same_str(a->procs.cgroup, b->procs.cgroup) &&
         same_list(a->procs.cmdline, a->procs.n_cmdline, b->procs.cmdline,
                   b->procs.n_cmdline) &&
         a->n_looks == b->n_looks &&
         (!a->n_looks ||
          memcmp(a->looks, b->looks, a->n_looks * sizeof *a->looks) == 0);
}

const char *proto_outcome_word(proto_outcome o) {
  switch (o) {
  case PROTO_HELD:
    return "held";
  case PROTO_NOT_HELD:
    return "not held";
  default:
    return "inconclusive";
  }
}
