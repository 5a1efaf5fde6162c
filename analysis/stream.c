/* stream.c: an analysis fed one row at a time. The rows of each run are
 * gathered until the run is whole, then the counting rule
 * (data_count_run, the one every command shares) decides the run under
 * the current sheet and, when due, the registered one; what counts keeps
 * only its value, position and batch, what does not keeps its reason and
 * run, so the rows themselves need never be in memory together.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "analysis/analysis_internal.h"

#define OOM(err) core_fail(err, CORE_ENOMEM, "analysis: out of memory")

/* One analysis's state */

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

/* The original's data kept beside a replication's (original/ORIGINAL
 * under exp's folder), analysed under its newest version: NULL (and
 * CORE_OK) when they are not there. */
static core_status open_original(const proto_sheet *sheet,
                                 const data_experiment *exp, int threads,
                                 analysis_summary **out, core_err *err) {
  const proto_replicates *rp = sheet->replicates;
  char *dir = core_asprintf("%s/original", exp->dir);
  char *path = core_asprintf("%s/original/%s/versions/v%ld.lua", exp->dir,
                             rp->experiment, rp->version);
  proto_sheet *os = NULL;
  data_experiment *oe = NULL;
  core_status st = CORE_OK;
  *out = NULL;
  if (!dir || !path)
    st = OOM(err);
  else if (core_exists(path)) {
    if (!(os = proto_sheet_load(path, err)))
      st = err->status ? err->status : CORE_EPROTOCOL;
    else if ((st = data_experiment_open(dir, os, &oe, err)) == CORE_OK)
      st = analysis_experiment(os, oe, threads, out, err);
  }
  data_experiment_free(oe);
  proto_sheet_free(os);
  core_free(dir);
  core_free(path);
  return st;
}

/* s->replication for the sheet's `published` entries, each judged
 * against the original's analysis when its data are there. */
static core_status replication(analysis_summary *s, const proto_sheet *sheet,
                               const data_experiment *exp, int threads,
                               core_err *err) {
  analysis_summary *orig = NULL;
  core_status st;
  if (sheet->n_published == 0)
    return CORE_OK;
  if (sheet->replicates && exp &&
      (st = open_original(sheet, exp, threads, &orig, err)) != CORE_OK)
    return st;
  st = analysis_replication_fill(s, sheet, orig, threads, err);
  analysis_summary_free(orig);
  return st;
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
    rc = replication(s, st->cur.sheet, st->exp, threads, err);
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
  analysis_across_free(&st->cur);
  acc_free(&st->cur);
  analysis_across_free(&st->orig);
  acc_free(&st->orig);
  core_free(st->orig_why);
  acc_strings_free(&st->strings);
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
