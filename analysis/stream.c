/* stream.c: an analysis fed one row at a time. The rows of each run are
 * gathered until the run is whole, then the counting rule
 * (data_count_run, the one every command shares) decides the run under
 * the current sheet and, when due, the registered one; what counts keeps
 * only its value, position and batch, what does not keeps its reason and
 * run, so the rows themselves need never be in memory together.
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

static void strings_free(acc_strings *set) {
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

/* An analysis under sheet with the counting rule of its plan, and with
 * hosts an analysis per host. */
static core_status acc_init(acc *c, const proto_sheet *sheet,
                            const data_experiment *exp, int upto,
                            core_err *err) {
  core_status st = acc_init_cells(c, sheet, err);
  if (st != CORE_OK)
    return st;
  c->counter = data_counter_new(sheet, exp ? exp->versions : NULL,
                                exp ? exp->n_versions : 0, upto);
  if (!c->counter)
    return OOM(err);
  /* A workload stopped early at a look: its plan ends there before any
   * run is counted (rows beyond it are beyond the plan). */
  if (exp && exp->dir && core_is_dir(exp->dir)) {
    data_batch_state *b = NULL;
    size_t nb = 0;
    if ((st = data_batch_states(exp, &b, &nb, err)) != CORE_OK)
      return st;
    data_counter_stops(c->counter, b, nb);
    data_batch_states_free(b, nb);
  }
  return sheet->hosts.declared ? analysis_across_begin(c, err) : CORE_OK;
}

void acc_free(acc *c) {
  analysis_across_free(c);
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

/* The rule decides the whole run under c's plan (and, with hosts, its
 * host); its rows go to c's cells and to its host's. */
static core_status place_run(acc *c, acc_strings *strs, const acc_run *run,
                             core_err *err) {
  data_run_fate f = data_count_run(c->counter, &run->in);
  core_status st = acc_place(c, strs, run, &f, err);
  if (st == CORE_OK && c->across)
    st = analysis_across_place(c, strs, run, &f, err);
  return st;
}

/* Gathering a run */

/* s interned, reusing *prev when it is the same text (most rows repeat
 * the previous row's batch, workload, arm and source). */
static const char *keep(acc_strings *strs, const char *prev, const char *s) {
  if (!s)
    s = "";
  if (prev && strcmp(prev, s) == 0)
    return prev;
  return acc_intern(strs, s);
}

/* Gives the open run to the rule of each analysis. */
static core_status flush_run(analysis_stream *st, core_err *err) {
  acc_run *run = &st->run;
  core_status rc;
  if (!run->open)
    return CORE_OK;
  run->open = 0;
  if ((rc = place_run(&st->cur, &st->strings, run, err)) != CORE_OK ||
      (st->has_orig &&
       (rc = place_run(&st->orig, &st->strings, run, err)) != CORE_OK))
    return rc;
  run->index++;
  return CORE_OK;
}

/* Opens a run at r, its first row. */
static core_status open_run(analysis_stream *st, const data_row *r,
                            core_err *err) {
  acc_run *run = &st->run;
  data_row *id = &run->id;
  size_t len = strlen(r->run_id ? r->run_id : "") + 1;
  if (len > run->run_id_cap) {
    char *nb = core_realloc(run->run_id_buf, len);
    if (!nb)
      return OOM(err);
    run->run_id_buf = nb;
    run->run_id_cap = len;
  }
  memcpy(run->run_id_buf, r->run_id ? r->run_id : "", len);
  id->run_id = run->run_id_buf;
  id->seq = r->seq;
  id->sheet_version = r->sheet_version;
  id->round = r->round;
  if (!(id->batch = (char *)keep(&st->strings, id->batch, r->batch)) ||
      !(id->workload =
            (char *)keep(&st->strings, id->workload, r->workload)) ||
      !(id->arm = (char *)keep(&st->strings, id->arm, r->arm)) ||
      !(id->source = (char *)keep(&st->strings, id->source, r->source)) ||
      !(id->host = (char *)keep(&st->strings, id->host, r->host)))
    return OOM(err);
  /* The strings are the interned ones; validity and the rest come from
   * the rows as run_row adds them. */
  run->in = data_run_in_of(id);
  run->in.valid = 1;
  run->in.quick = run->in.node_lost = run->in.setup_failure = 0;
  run->invalid_reason = NULL;
  run->n = 0;
  run->open = 1;
  return CORE_OK;
}

/* Adds r (at position order, from batch batch) to the open run. */
static core_status run_row(analysis_stream *st, const data_row *r,
                           size_t order, size_t batch, core_err *err) {
  acc_run *run = &st->run;
  acc_row *x;
  const char *metric = NULL;
  if (run->n == run->cap) {
    acc_row *nr = core_grow(run->rows, &run->cap, run->n, sizeof *nr, 8);
    if (!nr)
      return OOM(err);
    run->rows = nr;
  }
  if (run->n && run->rows[run->n - 1].metric)
    metric = run->rows[run->n - 1].metric;
  x = &run->rows[run->n];
  if (!(x->metric = keep(&st->strings, metric, r->metric)))
    return OOM(err);
  x->value = r->value;
  x->has_value = r->has_value;
  x->order = (unsigned)order;
  x->batch = (unsigned)batch;
  run->n++;
  data_run_in_add(&run->in, r);
  if (!r->valid && !run->invalid_reason &&
      !(run->invalid_reason =
            acc_intern(&st->strings, r->reason ? r->reason : "")))
    return OOM(err);
  return CORE_OK;
}

/* The stream */

core_status analysis_stream_begin(const proto_sheet *sheet,
                                  const proto_sheet *orig,
                                  const data_experiment *exp,
                                  analysis_stream **out, core_err *err) {
  analysis_stream *st;
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
  st->exp = exp;
  if (exp && exp->n_versions > 0) {
    st->version = exp->versions[exp->n_versions - 1].number;
  } else {
    /* Without a chain (tests): as many versions as amendments past the
     * registered sheet's. orig may be the sheet itself (callers without
     * a registered copy), which says nothing. */
    size_t base = orig && orig != sheet ? orig->n_amendments : 0;
    st->version =
        base < sheet->n_amendments ? (int)(sheet->n_amendments - base) : 0;
  }
  if ((rc = acc_init(&st->cur, sheet, exp, st->version, err)) != CORE_OK ||
      (rc = analysis_original_reason(sheet, orig, exp, &st->orig_why, err)) !=
          CORE_OK)
    goto fail;
  if (st->orig_why) {
    /* The registered plan: its caps, rule and hypotheses; it knew of no
     * amendment, so nothing is superseded. */
    if ((rc = acc_init(&st->orig, orig ? orig : sheet, exp, 0, err)) !=
        CORE_OK)
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
  if ((rc = batch_of(st, r->batch, &batch, err)) != CORE_OK)
    return rc;
  if (!st->run.open || !data_same_run(&st->run.id, r)) {
    if ((rc = flush_run(st, err)) != CORE_OK ||
        (rc = open_run(st, r, err)) != CORE_OK)
      return rc;
  }
  if ((rc = run_row(st, r, order, batch, err)) != CORE_OK)
    return rc;
  st->n_rows++;
  return CORE_OK;
}

/* The last run to the rule, then each analysis's tallies and status. */
static core_status end_counts(analysis_stream *st, core_err *err) {
  data_batch_state *b = NULL;
  size_t nb = 0;
  core_status rc = flush_run(st, err);
  const data_experiment *exp = st->exp;
  if (rc == CORE_OK && exp && exp->dir && core_is_dir(exp->dir))
    rc = data_batch_states(exp, &b, &nb, err);
  for (int k = 0; k < 1 + st->has_orig && rc == CORE_OK; k++) {
    acc *c = k ? &st->orig : &st->cur;
    rc = data_counter_end(c->counter, b, nb, &c->tallies, &c->n_tallies,
                          &c->status, err);
  }
  data_batch_states_free(b, nb);
  return rc;
}

core_status analysis_stream_end(analysis_stream *st, int threads,
                                analysis_summary **out, core_err *err) {
  analysis_summary *s = NULL;
  core_status rc;
  *out = NULL;
  rc = end_counts(st, err);
  if (rc == CORE_OK)
    rc = acc_summary(&st->cur, st, st->cur.sheet->sha256, st->version, threads,
                     1, &s, err);
  if (rc == CORE_OK && st->cur.across)
    rc = analysis_across_end(&st->cur, st, threads, s, err);
  if (rc == CORE_OK && st->has_orig) {
    rc = acc_summary(&st->orig, st, st->orig.sheet->sha256, 0, threads, 0,
                     &s->original, err);
    if (rc == CORE_OK && st->orig.across)
      rc = analysis_across_end(&st->orig, st, threads, s->original, err);
    if (rc == CORE_OK) {
      s->original_why = st->orig_why;
      st->orig_why = NULL;
    }
  }
  if (rc == CORE_OK)
    rc = analysis_replication_fill(s, st->cur.sheet, st->exp, threads, err);
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
  core_free(st->orig_why);
  strings_free(&st->strings);
  for (size_t i = 0; i < st->n_batches; i++)
    core_free(st->batches[i]);
  core_free(st->batches);
  core_free(st->run.rows);
  core_free(st->run.run_id_buf);
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

static core_status feed(void *ctx, const data_row *r, core_err *err) {
  return analysis_stream_add(ctx, r, err);
}

core_status analysis_experiment(const proto_sheet *sheet,
                                const data_experiment *exp, int threads,
                                analysis_summary **out, core_err *err) {
  proto_sheet *orig;
  analysis_stream *st;
  core_status rc;
  *out = NULL;
  if (!(orig = data_load_version(exp, 0, err)))
    return err->status ? err->status : CORE_EIO;
  analysis_init();
  if ((rc = analysis_stream_begin(sheet, orig, exp, &st, err)) == CORE_OK) {
    rc = data_scan_rows(exp, feed, st, err);
    if (rc == CORE_OK)
      rc = analysis_stream_end(st, threads, out, err);
    else
      analysis_stream_free(st);
  }
  if (rc == CORE_OK)
    rc = data_registration_load(exp, &(*out)->registration,
                                &(*out)->n_registration, err);
  proto_sheet_free(orig);
  return rc;
}
