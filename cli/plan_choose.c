/* plan_choose.c: which comparisons `prereg plan` sizes the study for (the
 * ones the hypotheses test, every one without hypotheses) and the runs it
 * chooses per workload: the smallest size at which they all reach the
 * power, the sequential design's last look, or the runs the user gives
 * (--runs), with the power they reach there and the others' beside it.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>

#include "cli/cli_internal.h"
#include "cli/plan_internal.h"
#include "protocols/proto.h"

static int same(const char *a, const char *b) {
  return a && b && !strcmp(a, b);
}

/* 1 when hypothesis h names arm among its arms (a claim that names none
 * names every arm but its `against`). */
static int names_arm(const proto_hypothesis *h, const char *arm) {
  if (h->n_arms == 0)
    return 1;
  for (size_t k = 0; k < h->n_arms; k++)
    if (same(h->arms[k], arm))
      return 1;
  return 0;
}

int cli_plan_tested(const proto_sheet *s, const char *w, const char *m,
                    const char *arm, const char *vs) {
  const char *ref = s->arms[s->reference].name;
  if (!vs)
    vs = ref;
  for (size_t i = 0; i < s->n_hypotheses; i++) {
    const proto_hypothesis *h = &s->hypotheses[i];
    const char *against = h->against ? h->against : ref;
    if ((h->workload && !same(h->workload, w)) ||
        (h->metric && !same(h->metric, m)))
      continue;
    if ((same(against, vs) && names_arm(h, arm)) ||
        (same(against, arm) && names_arm(h, vs)))
      return 1;
  }
  return 0;
}

void cli_plan_mark(const proto_sheet *s, analysis_plan_cell *cells, size_t n) {
  for (size_t i = 0; i < n; i++)
    cells[i].secondary =
        s->n_hypotheses > 0 &&
        !cli_plan_tested(s, cells[i].workload, cells[i].metric, cells[i].arm,
                         cells[i].reference);
  /* A workload none of whose comparisons is tested: sized for all. */
  for (size_t i = 0; i < n; i++) {
    int any = 0;
    for (size_t j = 0; j < n; j++)
      any |= same(cells[j].workload, cells[i].workload) && !cells[j].secondary;
    if (!any)
      for (size_t j = 0; j < n; j++)
        if (same(cells[j].workload, cells[i].workload))
          cells[j].secondary = 2;
  }
  for (size_t i = 0; i < n; i++)
    if (cells[i].secondary == 2)
      cells[i].secondary = 0;
}

void cli_plan_choice_free(plan_choice *c) {
  core_free(c->w);
  memset(c, 0, sizeof *c);
}

/* The column of size n among the fixed sizes, or n_sizes when absent. */
static size_t column_of(const analysis_plan *p, long n) {
  size_t s = 0;
  while (s < p->n_sizes && (long)p->sizes[s] != n)
    s++;
  return s;
}

/* The sized comparisons' smallest P(decided) at column col, and the
 * others' range; *expected gains every comparison's. */
static void measure(const analysis_plan *p, plan_pick *k, double *expected,
                    double *var) {
  k->achieved = 1.0;
  k->power_low = -1;
  k->other_lo = 1.0;
  k->other_hi = 0.0;
  for (size_t i = 0; i < p->n_results; i++) {
    const analysis_plan_result *r = &p->results[i];
    double d = analysis_plan_power(r, k->col);
    if (strcmp(r->workload, k->workload) != 0)
      continue;
    *expected += d;
    *var += d * (1.0 - d) / (double)p->sims;
    if (!r->secondary) {
      double low = r->power_low[k->col];
      k->n_sized++;
      k->achieved = d < k->achieved ? d : k->achieved;
      if (!isnan(low) && (k->power_low < 0 || low < k->power_low))
        k->power_low = low;
    } else {
      k->n_other++;
      k->other_lo = d < k->other_lo ? d : k->other_lo;
      k->other_hi = d > k->other_hi ? d : k->other_hi;
    }
  }
}

core_status cli_plan_choose(const proto_sheet *s, const plan_args *a,
                            const analysis_plan *p, plan_choice *c,
                            core_err *err) {
  double var = 0.0;
  memset(c, 0, sizeof *c);
  c->given = a->runs;
  c->for_hypotheses = s->n_hypotheses > 0;
  c->looks = p->n_looks ? p->looks : NULL;
  c->n_looks = p->n_looks;
  c->achieved = 1.0;
  c->power_low = -1;
  if (!(c->w = core_calloc(p->n_picks + 1, sizeof *c->w)))
    return core_fail(err, CORE_ENOMEM, "plan: out of memory");
  for (size_t i = 0; i < p->n_picks; i++) {
    plan_pick *k = &c->w[c->n++];
    long w = proto_workload_index(s, p->picks[i].workload);
    k->workload = p->picks[i].workload;
    /* The sheet's looks are its workloads' that declare them. */
    k->sequential =
        p->n_looks && (!a->sheet_looks || (w >= 0 && s->workloads[w].n_looks));
    if (k->sequential) {
      k->col = p->n_sizes;
      k->runs = (long)p->looks[p->n_looks - 1];
    } else {
      k->runs = a->runs ? a->runs : p->picks[i].runs;
      k->col = column_of(p, k->runs);
    }
    if (k->col == p->n_sizes && !k->sequential) {
      k->runs = 0; /* none of the sizes */
      continue;
    }
    measure(p, k, &c->expected, &var);
    if (k->power_low >= 0 && (c->power_low < 0 || k->power_low < c->power_low))
      c->power_low = k->power_low;
    if (!a->runs && k->sequential && !(k->achieved >= p->power))
      k->runs = 0;
    for (size_t r = 0; r < p->n_results; r++)
      c->comparisons += !strcmp(p->results[r].workload, k->workload);
    if (k->achieved < c->achieved)
      c->achieved = k->achieved;
  }
  c->expected_se = sqrt(var);
  return CORE_OK;
}

/* --runs N among the fixed sizes, in order (a sequential design's runs
 * are its last look's). */
static core_status add_runs(plan_args *a, core_err *err) {
  size_t at = 0;
  if (a->n_looks) {
    if ((long)a->looks[a->n_looks - 1] != a->runs)
      return core_fail(err, CORE_EUSAGE,
                       "--runs %ld: with looks, the runs are the last "
                       "look's (%zu); give --runs %zu or other --looks",
                       a->runs, a->looks[a->n_looks - 1],
                       a->looks[a->n_looks - 1]);
    return CORE_OK;
  }
  while (at < a->n_sizes && (long)a->sizes[at] < a->runs)
    at++;
  if (at < a->n_sizes && (long)a->sizes[at] == a->runs)
    return CORE_OK;
  if (a->n_sizes == PLAN_MAX_SIZES)
    return core_fail(err, CORE_EUSAGE,
                     "--runs %ld: already %d sizes; give fewer --sizes",
                     a->runs, PLAN_MAX_SIZES);
  memmove(a->sizes + at + 1, a->sizes + at,
          (a->n_sizes - at) * sizeof *a->sizes);
  a->sizes[at] = (size_t)a->runs;
  a->n_sizes++;
  return CORE_OK;
}

/* --looks as check would take them: each at least the values an
 * interval at its share of the error needs (proto_looks_short, the rule
 * check applies to a sheet's looks). */
static core_status looks_level(const proto_sheet *s, const plan_args *a,
                               core_err *err) {
  long lk[CORE_MAX_LOOKS], need, j;
  core_buf why;
  core_status st;
  for (size_t k = 0; k < a->n_looks; k++)
    lk[k] = (long)a->looks[k];
  if ((j = proto_looks_short(&s->rule, lk, a->n_looks, &need)) < 0)
    return CORE_OK;
  core_buf_init(&why);
  core_buf_puts(&why, "--looks ");
  for (size_t k = 0; k < a->n_looks; k++)
    core_buf_printf(&why, "%s%ld", k ? "," : "", lk[k]);
  core_buf_printf(&why, ": look %ld: ", j + 1);
  proto_look_short_words(&s->rule, lk[j], a->n_looks, &why);
  core_buf_printf(&why,
                  "; give every look at least %ld (prereg check refuses "
                  "a sheet with a look below it)",
                  need);
  st = core_fail(err, CORE_EUSAGE, "%s",
                 why.oom || !why.data ? "out of memory" : why.data);
  core_buf_free(&why);
  return st;
}

/* The sheet's own looks as check takes them (its own function): plan
 * neither simulates nor writes looks check refuses. */
static core_status sheet_looks_level(const proto_sheet *s, core_err *err) {
  core_status st = cli_check_looks_level(s, err);
  size_t n = strlen(err->msg);
  if (st != CORE_OK && n < sizeof err->msg)
    snprintf(err->msg + n, sizeof err->msg - n,
             " (prereg check refuses this sheet); or plan other looks with "
             "--looks");
  return st;
}

core_status cli_plan_looks(const proto_sheet *s, plan_args *a, core_err *err) {
  const proto_workload *first = NULL;
  core_status st;
  for (size_t w = 0; w < s->n_workloads && !a->n_looks; w++) {
    const proto_workload *wl = &s->workloads[w];
    if (!wl->n_looks)
      continue;
    if (!first) {
      first = wl;
      continue;
    }
    if (wl->n_looks != first->n_looks ||
        memcmp(wl->looks, first->looks, wl->n_looks * sizeof *wl->looks))
      return core_fail(err, CORE_EUSAGE,
                       "%s: workloads %s and %s declare different looks; "
                       "plan one design at a time: give --looks",
                       s->path, first->name, wl->name);
  }
  if (first && !a->n_looks) {
    for (size_t k = 0; k < first->n_looks; k++)
      a->looks[k] = (size_t)first->looks[k];
    a->n_looks = first->n_looks;
    a->sheet_looks = 1;
  }
  st = a->sheet_looks ? sheet_looks_level(s, err) : looks_level(s, a, err);
  if (st != CORE_OK)
    return st;
  return a->runs ? add_runs(a, err) : CORE_OK;
}
