/* cells.c: one analysis's cells, a cell per workload, metric and arm:
 * the values of the rows the rule counts, each with its position and
 * batch, and the rows it drops, each with its reason; and the strings
 * those share, interned once.
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <string.h>

#include "analysis/analysis_internal.h"

#define OOM(err) core_fail(err, CORE_ENOMEM, "analysis: out of memory")

/* Interned strings */

static uint32_t hash_str(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static int strings_grow(acc_strings *set) {
  size_t cap = set->cap ? set->cap * 2 : 64;
  char **slot = core_calloc(cap, sizeof *slot);
  if (!slot)
    return 0;
  for (size_t i = 0; i < set->cap; i++)
    if (set->slot[i]) {
      size_t k = hash_str(set->slot[i]) & (cap - 1);
      while (slot[k])
        k = (k + 1) & (cap - 1);
      slot[k] = set->slot[i];
    }
  core_free(set->slot);
  set->slot = slot;
  set->cap = cap;
  return 1;
}

const char *acc_intern(acc_strings *set, const char *s) {
  size_t k;
  if ((set->n + 1) * 2 > set->cap && !strings_grow(set))
    return NULL;
  for (k = hash_str(s) & (set->cap - 1); set->slot[k];
       k = (k + 1) & (set->cap - 1))
    if (strcmp(set->slot[k], s) == 0)
      return set->slot[k];
  if (!(set->slot[k] = core_strdup(s)))
    return NULL;
  set->n++;
  return set->slot[k];
}

void acc_strings_free(acc_strings *set) {
  for (size_t i = 0; i < set->cap; i++)
    core_free(set->slot[i]);
  core_free(set->slot);
  memset(set, 0, sizeof *set);
}

/* One analysis's state */

core_status acc_init_cells(acc *c, const proto_sheet *sheet, core_err *err) {
  size_t n = 0;
  memset(c, 0, sizeof *c);
  c->sheet = sheet;
  c->cell_base = core_calloc(sheet->n_workloads + 1, sizeof *c->cell_base);
  if (!c->cell_base)
    return OOM(err);
  for (size_t w = 0; w < sheet->n_workloads; w++) {
    c->cell_base[w] = n;
    n += sheet->workloads[w].n_metrics * sheet->n_arms;
  }
  c->n_cells = n;
  c->vals = core_calloc(n ? n : 1, sizeof *c->vals);
  return c->vals ? CORE_OK : OOM(err);
}

void acc_free(acc *c) {
  for (size_t i = 0; c->vals && i < c->n_cells; i++) {
    core_free(c->vals[i].v);
    core_free(c->vals[i].order);
    core_free(c->vals[i].batch);
  }
  core_free(c->vals);
  core_free(c->cell_base);
  core_free(c->drops);
  data_counter_free(c->counter);
  data_tally_free(c->tallies, c->n_tallies);
  memset(c, 0, sizeof *c);
}

static int vals_push(acc_vals *v, double x, unsigned order, unsigned batch) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 16;
    double *nv = core_realloc(v->v, cap * sizeof *nv);
    unsigned *no, *nb;
    if (!nv)
      return 0;
    v->v = nv;
    no = core_realloc(v->order, cap * sizeof *no);
    if (!no)
      return 0;
    v->order = no;
    nb = core_realloc(v->batch, cap * sizeof *nb);
    if (!nb)
      return 0;
    v->batch = nb;
    v->cap = cap;
  }
  v->v[v->n] = x;
  v->order[v->n] = order;
  v->batch[v->n] = batch;
  v->n++;
  return 1;
}

/* Placing a run's rows */

static long metric_index(const proto_workload *wl, const char *m) {
  for (size_t i = 0; m && i < wl->n_metrics; i++)
    if (strcmp(wl->metrics[i], m) == 0)
      return (long)i;
  return -1;
}

static core_status add_drop(acc *c, acc_strings *strs, const data_run_fate *f,
                            const data_row *r, const char *reason, size_t run,
                            core_err *err) {
  acc_drop *d;
  if (c->n_drops == c->cap_drops) {
    size_t cap = c->cap_drops ? c->cap_drops * 2 : 16;
    acc_drop *nd = core_realloc(c->drops, cap * sizeof *nd);
    if (!nd)
      return OOM(err);
    c->drops = nd;
    c->cap_drops = cap;
  }
  d = &c->drops[c->n_drops];
  d->w = f->workload < 0 ? c->sheet->n_workloads : (size_t)f->workload;
  d->a = f->arm < 0 ? c->sheet->n_arms : (size_t)f->arm;
  d->wname = r->workload; /* interned already */
  d->aname = r->arm;
  d->reason = acc_intern(strs, reason);
  d->run = run;
  if (!d->reason)
    return OOM(err);
  c->n_drops++;
  return CORE_OK;
}

/* Each row of a run the rule decided gives its value to its cell, or is
 * dropped with the rule's reason. */
core_status acc_place(acc *c, acc_strings *strs, const acc_run *run,
                      const data_run_fate *fate, core_err *err) {
  data_run_fate f = *fate;
  data_row r = run->id;
  for (size_t k = 0; k < run->n; k++) {
    const acc_row *x = &run->rows[k];
    char *why;
    int oom;
    core_status st;
    r.metric = (char *)x->metric;
    r.has_value = x->has_value;
    if (data_row_analysed(&f, c->sheet, &r)) {
      long m = metric_index(&c->sheet->workloads[f.workload], x->metric);
      size_t cell = c->cell_base[f.workload] + (size_t)m * c->sheet->n_arms +
                    (size_t)f.arm;
      if (!vals_push(&c->vals[cell], x->value, x->order, x->batch))
        return OOM(err);
      continue;
    }
    if (!(why = data_fate_why(&f, c->sheet, &r, run->invalid_reason, &oom)))
      return oom ? OOM(err) : CORE_OK;
    st = add_drop(c, strs, &f, &r, why, run->index, err);
    core_free(why);
    if (st != CORE_OK)
      return st;
  }
  return CORE_OK;
}
