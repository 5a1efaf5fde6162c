/* stream.c: an analysis fed one row at a time. Each row is classified
 * (counts, or why not) under the current sheet and, when due, the
 * registered one; what counts keeps only its value, position and batch,
 * what does not keeps its reason and run, so the rows themselves need
 * never be in memory together.
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <string.h>

#include "analysis/analysis_internal.h"

#define OOM(err) core_fail(err, CORE_ENOMEM, "analysis: out of memory")

/* {==== Interned strings ==== */

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

static void strings_free(acc_strings *set) {
  for (size_t i = 0; i < set->cap; i++)
    core_free(set->slot[i]);
  core_free(set->slot);
  memset(set, 0, sizeof *set);
}

/* }==== */

/* {==== One analysis's state ==== */

core_status acc_init(acc *c, const proto_sheet *sheet,
                     const proto_sheet *amended, size_t amend_base,
                     const data_experiment *exp, core_err *err) {
  size_t n = 0;
  memset(c, 0, sizeof *c);
  c->sheet = sheet;
  c->amended = amended;
  c->amend_base = amend_base;
  c->exp = exp;
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
  memset(c, 0, sizeof *c);
}

static int vals_push(acc_vals *v, double x, size_t order, size_t batch) {
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
  v->order[v->n] = (unsigned)order;
  v->batch[v->n] = (unsigned)batch;
  v->n++;
  return 1;
}

/* }==== */

/* {==== Classifying a row ==== */

/* The version (>= 1) of the first amendment after the row's version that
 * supersedes the row's workload, or 0; *why is its reason. The chain of
 * the experiment says it directly; without one (tests), version N records
 * amendment amend_base + N - 1 of the sheet (prereg amend adds exactly
 * one). */
static int superseding_version(const acc *c, const data_row *r,
                               const char **why) {
  const proto_sheet *s = c->amended;
  if (!s)
    return 0;
  if (c->exp && c->exp->n_versions > 0) {
    for (size_t i = 0; i < c->exp->n_versions; i++) {
      const data_version *v = &c->exp->versions[i];
      if (v->number <= r->sheet_version)
        continue;
      for (size_t k = 0; k < v->n_supersedes; k++)
        if (strcmp(v->supersedes[k], r->workload) == 0) {
          *why = v->why;
          return v->number;
        }
    }
    return 0;
  }
  for (size_t i = c->amend_base; i < s->n_amendments; i++) {
    int version = (int)(i - c->amend_base + 1);
    if (version <= r->sheet_version)
      continue;
    for (size_t k = 0; k < s->amendments[i].n_supersedes; k++)
      if (strcmp(s->amendments[i].supersedes[k], r->workload) == 0) {
        *why = s->amendments[i].why;
        return version;
      }
  }
  return 0;
}

static long metric_index(const proto_workload *wl, const char *m) {
  for (size_t i = 0; m && i < wl->n_metrics; i++)
    if (strcmp(wl->metrics[i], m) == 0)
      return (long)i;
  return -1;
}

/* Why r does not count under c's sheet (newly allocated), or NULL when it
 * counts; *oom when that could not be said. */
static char *why_not(const acc *c, const data_row *r, long w, long a,
                     int *superseded, int *oom) {
  const char *why = NULL;
  char *reason;
  int version;
  *superseded = 0;
  if (w < 0)
    reason = core_asprintf("workload %s is not in this version of the sheet",
                           r->workload);
  else if (a < 0)
    reason =
        core_asprintf("arm %s is not in this version of the sheet", r->arm);
  else if (r->metric && r->metric[0] &&
           metric_index(&c->sheet->workloads[w], r->metric) < 0)
    reason = core_asprintf("metric %s is not declared for %s", r->metric,
                           r->workload);
  else if ((version = superseding_version(c, r, &why)) > 0) {
    *superseded = 1;
    reason = core_asprintf("superseded by amendment %d: %s", version,
                           why ? why : "");
  } else if (!r->valid)
    reason = core_strdup(r->reason && r->reason[0] ? r->reason : "invalid");
  else if (!r->has_value)
    reason = core_strdup("no value recorded");
  else if (!r->source ||
           (strcmp(r->source, "run") != 0 && strcmp(r->source, "import") != 0))
    reason = core_asprintf("unknown source '%s'", r->source ? r->source : "");
  else
    return NULL;
  *oom = reason == NULL;
  return reason;
}

/* A run's identity, for counting runs rather than rows (a run has one row
 * per metric). */
static char *run_key(const data_row *r) {
  if (r->run_id && r->run_id[0])
    return core_asprintf("%s\x1f%s", r->batch ? r->batch : "", r->run_id);
  return core_asprintf("%s\x1f#%ld", r->batch ? r->batch : "", r->seq);
}

static core_status add_drop(acc *c, acc_strings *strs, const data_row *r,
                            long w, long a, char *reason, int superseded,
                            core_err *err) {
  acc_drop *d;
  char *key = run_key(r);
  if (c->n_drops == c->cap_drops) {
    size_t cap = c->cap_drops ? c->cap_drops * 2 : 16;
    acc_drop *nd = core_realloc(c->drops, cap * sizeof *nd);
    if (!nd) {
      core_free(key);
      return OOM(err);
    }
    c->drops = nd;
    c->cap_drops = cap;
  }
  d = &c->drops[c->n_drops];
  d->w = w < 0 ? c->sheet->n_workloads : (size_t)w;
  d->a = a < 0 ? c->sheet->n_arms : (size_t)a;
  d->m = w >= 0 && r->metric && r->metric[0]
             ? metric_index(&c->sheet->workloads[w], r->metric)
             : -1;
  d->superseded = superseded;
  d->wname = acc_intern(strs, r->workload ? r->workload : "");
  d->aname = acc_intern(strs, r->arm ? r->arm : "");
  d->reason = acc_intern(strs, reason);
  d->key = key ? acc_intern(strs, key) : NULL;
  core_free(key);
  if (!d->wname || !d->aname || !d->reason || !d->key)
    return OOM(err);
  c->n_drops++;
  return CORE_OK;
}

core_status acc_classify(acc *c, acc_strings *strs, const data_row *r,
                         size_t order, size_t batch, core_err *err) {
  long w = proto_workload_index(c->sheet, r->workload);
  long a = proto_arm_index(c->sheet, r->arm);
  int superseded, oom = 0;
  char *reason = why_not(c, r, w, a, &superseded, &oom);
  core_status st;
  long m;
  if (oom)
    return OOM(err);
  if (reason) {
    st = add_drop(c, strs, r, w, a, reason, superseded, err);
    core_free(reason);
    return st;
  }
  /* A row that counts but names no metric belongs to no cell. */
  m = metric_index(&c->sheet->workloads[w], r->metric);
  if (m < 0)
    return CORE_OK;
  if (!vals_push(
          &c->vals[c->cell_base[w] + (size_t)m * c->sheet->n_arms + (size_t)a],
          r->value, order, batch))
    return OOM(err);
  return CORE_OK;
}

/* }==== */

/* {==== The stream ==== */

core_status analysis_stream_begin(const proto_sheet *sheet,
                                  const proto_sheet *orig,
                                  const data_experiment *exp,
                                  analysis_stream **out, core_err *err) {
  analysis_stream *st;
  size_t amend_base = 0;
  core_status rc;
  *out = NULL;
  for (int k = 0; k < 2; k++) {
    const proto_sheet *s = k ? orig : sheet;
    if (s && (s->n_arms == 0 || s->reference >= s->n_arms))
      return core_fail(err, CORE_EPROTOCOL, "%s: no reference arm",
                       s->path ? s->path : "sheet");
  }
  if (!(st = core_calloc(1, sizeof *st)))
    return OOM(err);
  /* Version N records amendment base + N - 1: base is what the registered
   * sheet already listed (normally none). orig may be the sheet itself
   * (callers without a registered copy), which says nothing. */
  if (exp && exp->n_versions > 0) {
    st->version = exp->versions[exp->n_versions - 1].number;
    if ((size_t)st->version <= sheet->n_amendments)
      amend_base = sheet->n_amendments - (size_t)st->version;
  } else {
    amend_base = orig && orig != sheet ? orig->n_amendments : 0;
    if (amend_base > sheet->n_amendments)
      amend_base = sheet->n_amendments;
    st->version = (int)(sheet->n_amendments - amend_base);
  }
  if ((rc = acc_init(&st->cur, sheet, sheet, amend_base, exp, err)) !=
          CORE_OK ||
      (sheet->hosts.declared &&
       (rc = analysis_across_begin(st, sheet, amend_base, exp, err)) !=
           CORE_OK) ||
      (rc = analysis_original_reason(sheet, orig, exp, amend_base,
                                     &st->orig_why, err)) != CORE_OK)
    goto fail;
  if (st->orig_why) {
    /* The registered plan knew of no supersession. */
    if ((rc = acc_init(&st->orig, orig ? orig : sheet, NULL, amend_base, exp,
                       err)) != CORE_OK)
      goto fail;
    st->has_orig = 1;
  }
  *out = st;
  return CORE_OK;
fail:
  analysis_stream_free(st);
  return rc;
}

/* The index of r's batch among those seen, adding it when new. */
static core_status batch_of(analysis_stream *st, const char *name, size_t *out,
                            core_err *err) {
  char **nb;
  if (!name)
    name = "";
  if (st->n_batches && strcmp(st->batches[st->last_batch], name) == 0) {
    *out = st->last_batch;
    return CORE_OK;
  }
  for (size_t i = 0; i < st->n_batches; i++)
    if (strcmp(st->batches[i], name) == 0) {
      *out = st->last_batch = i;
      return CORE_OK;
    }
  nb = core_grow(st->batches, &st->cap_batches, st->n_batches, sizeof *nb, 8);
  if (!nb)
    return OOM(err);
  st->batches = nb;
  if (!(st->batches[st->n_batches] = core_strdup(name)))
    return OOM(err);
  *out = st->last_batch = st->n_batches++;
  return CORE_OK;
}

core_status analysis_stream_add(analysis_stream *st, const data_row *r,
                                core_err *err) {
  size_t batch = 0, order = st->n_rows;
  core_status rc;
  if (order >= 0xFFFFFFFFu)
    return core_fail(err, CORE_EINPUT,
                     "analysis: more than 4294967294 rows in one analysis");
  if ((rc = batch_of(st, r->batch, &batch, err)) != CORE_OK ||
      (rc = acc_classify(&st->cur, &st->strings, r, order, batch, err)) !=
          CORE_OK ||
      (st->has_orig && (rc = acc_classify(&st->orig, &st->strings, r, order,
                                          batch, err)) != CORE_OK) ||
      (st->across &&
       (rc = analysis_across_add(st, r, order, batch, err)) != CORE_OK))
    return rc;
  st->n_rows++;
  return CORE_OK;
}

core_status analysis_stream_end(analysis_stream *st, int threads,
                                analysis_summary **out, core_err *err) {
  analysis_summary *s = NULL;
  core_status rc;
  *out = NULL;
  rc = acc_summary(&st->cur, st, st->cur.sheet->sha256, st->version, threads,
                   1, &s, err);
  if (rc == CORE_OK && st->across)
    rc = analysis_across_end(st, threads, s, err);
  if (rc == CORE_OK && st->has_orig) {
    rc = acc_summary(&st->orig, st, st->orig.sheet->sha256, 0, threads, 0,
                     &s->original, err);
    if (rc == CORE_OK) {
      s->original_why = st->orig_why;
      st->orig_why = NULL;
    }
  }
  analysis_stream_free(st);
  if (rc != CORE_OK) {
    analysis_summary_free(s);
    return rc;
  }
  *out = s;
  return CORE_OK;
}

void analysis_stream_free(analysis_stream *st) {
  if (!st)
    return;
  acc_free(&st->cur);
  acc_free(&st->orig);
  analysis_across_free(st);
  core_free(st->orig_why);
  strings_free(&st->strings);
  for (size_t i = 0; i < st->n_batches; i++)
    core_free(st->batches[i]);
  core_free(st->batches);
  core_free(st);
}

core_status analysis_run(const proto_sheet *sheet, const proto_sheet *orig,
                         const data_experiment *exp, const data_rowset *rows,
                         int threads, analysis_summary **out, core_err *err) {
  analysis_stream *st;
  core_status rc;
  *out = NULL;
  if ((rc = analysis_stream_begin(sheet, orig, exp, &st, err)) != CORE_OK)
    return rc;
  for (size_t i = 0; rows && i < rows->n; i++)
    if ((rc = analysis_stream_add(st, &rows->rows[i], err)) != CORE_OK) {
      analysis_stream_free(st);
      return rc;
    }
  return analysis_stream_end(st, threads, out, err);
}

/* }==== */
