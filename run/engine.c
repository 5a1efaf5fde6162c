/* engine.c: what every batch does, whichever runner measures it: the
 * batch's folder and its facts at the start, the rows handed in and
 * counted, progress, warm-up failures, and the batch frozen with its
 * facts whatever happened.
 * SPDX-License-Identifier: MIT
 *
 * The facts at the start are on disk until the freeze replaces them
 * (marked interrupted), so that kill -9 leaves the batch's host facts
 * for recovery to freeze.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/run_internal.h"

void run_engine_emit(const run_engine *e, const run_event *ev) {
  if (e->progress && e->progress->fn)
    e->progress->fn(e->progress->ctx, ev);
}

core_status run_note(char ***v, size_t *n, size_t *cap, const char *text,
                     core_err *err) {
  char **nv = core_grow(*v, cap, *n, sizeof *nv, 8);
  if (nv)
    *v = nv;
  if (!nv || !(nv[*n] = core_strdup(text)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  (*n)++;
  return CORE_OK;
}

void run_warmup_words(const proto_sheet *s, const run_plan_item *it,
                      const char *why, char *out, size_t cap) {
  snprintf(out, cap, "%s %s warm-up %ld: %s", s->workloads[it->workload].name,
           s->arms[it->arm].name, it->warm, why);
}

/* Runs and rows */

core_status run_engine_ran(run_engine *e, const char *host,
                           const char *workload, const char *arm, long round,
                           const char *failure, double wall_s, core_err *err) {
  char log[PATH_MAX + 32];
  snprintf(log, sizeof log, "%s/%s.log", e->bdir, e->bid);
  e->done++;
  double el = core_monotonic() - e->t_start;
  run_event ev = {.kind = RUN_EVENT_RUN,
                  .host = host,
                  .workload = workload,
                  .arm = arm,
                  .round = round,
                  .done = e->done,
                  .total = e->total,
                  .failure = failure,
                  .wall_s = wall_s,
                  .elapsed_s = el,
                  .eta_s =
                      el / (double)e->done *
                      (double)(e->total > e->done ? e->total - e->done : 0),
                  .log = log};
  core_status st = run_log_run(e->bdir, e->bid, &e->log_fd, &ev, err);
  run_engine_emit(e, &ev);
  return st;
}

core_status run_engine_rows(run_engine *e, const data_row *rows, size_t n,
                            core_err *err) {
  core_status st = data_batch_append(e->batch, rows, n, err);
  for (size_t i = 0; st == CORE_OK && i < n; i++)
    if (i == 0 || strcmp(rows[i].run_id, rows[i - 1].run_id) != 0)
      rows[i].valid ? e->valid++ : e->invalid++;
  return st;
}

core_status run_engine_warmup(run_engine *e, const char *host,
                              const char *workload, const char *arm, long warm,
                              const char *why, const char *text,
                              core_err *err) {
  core_status st = run_note(&e->warn, &e->n_warn, &e->cap_warn, text, err);
  run_event ev = {.kind = RUN_EVENT_WARMUP_FAILED,
                  .host = host,
                  .workload = workload,
                  .arm = arm,
                  .round = warm,
                  .failure = why,
                  .text = text};
  run_engine_emit(e, &ev);
  return st;
}

/* Facts */

/* The batch's facts as they stand (see data_run_facts), the runner's
 * added; now: the time for ended_at, NULL at the start. */
static core_status facts(run_engine *e, const run_runner *r, void *self,
                         const char *now, data_run_facts *f,
                         data_arm_image *im, data_arm_versions *vers,
                         core_err *err) {
  const char *stamp = e->p->order_stamp[0] ? e->p->order_stamp : NULL;
  *f = (data_run_facts){.protocol = e->s->id,
                        .sheet_version = e->version,
                        .sheet_sha256 = e->s->sha256,
                        .started_at = e->started,
                        .ended_at = now,
                        .quick = e->p->quick,
                        .resume = e->resume,
                        .only = e->p->only,
                        .interrupted = now ? e->interrupted : 1,
                        .runs_planned = e->p->planned,
                        .runs_recorded = e->valid + e->invalid,
                        .runs_valid = e->valid,
                        .runs_invalid = e->invalid,
                        .order = stamp ? RUN_STAMP_ORDER_TEXT : r->order,
                        .order_stamp = stamp,
                        .images = im,
                        .n_images = e->s->n_arms,
                        .versions = vers,
                        .n_versions = e->s->n_arms,
                        .warmup_failures = (const char *const *)e->warn,
                        .n_warmup_failures = e->n_warn,
                        .inputs = &e->inputs,
                        .inputs_changed = (const char *const *)e->changed,
                        .n_inputs_changed = e->n_changed,
                        .stops = e->stops,
                        .n_stops = e->n_stops};
  run_host_facts(&f->host);
  memcpy(f->host.load_avg_start, e->load_start, sizeof e->load_start);
  f->host.has_load_start = e->has_load_start;
  f->host.has_load_end = now ? run_load_avg(f->host.load_avg_end) : 0;
  return r->facts(self, e, f, im, vers, err);
}

/* Writes the facts: at the start (final 0) as the batch's facts until
 * the freeze, or the freeze itself (final 1: e->batch is NULL after). */
static core_status write_facts(run_engine *e, const run_runner *r, void *self,
                               int final, core_err *err) {
  size_t na = e->s->n_arms ? e->s->n_arms : 1;
  data_arm_image *im = core_calloc(na, sizeof *im);
  data_arm_versions *vers = core_calloc(na, sizeof *vers);
  char now[32];
  core_utc_now(now);
  data_run_facts f;
  core_status st =
      im && vers ? facts(e, r, self, final ? now : NULL, &f, im, vers, err)
                 : core_fail(err, CORE_ENOMEM, "out of memory");
  if (final) {
    data_batch *b = e->batch;
    e->batch = NULL;
    if (st == CORE_OK)
      st = data_batch_freeze_run(b, &f, err);
    else
      data_batch_abandon(b);
  } else if (st == CORE_OK) {
    st = data_batch_start_run(e->batch, &f, err);
  }
  core_free(im);
  core_free(vers);
  return st;
}

core_status run_engine_stop(run_engine *e, size_t w, size_t look, size_t items,
                            core_err *err) {
  const proto_workload *wl = &e->s->workloads[w];
  char text[200];
  data_stop *x;
  if (!e->stops &&
      !(e->stops = core_calloc(e->s->n_workloads, sizeof *e->stops)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (e->n_stops >= e->s->n_workloads)
    return core_fail(err, CORE_EINPUT, "%s stopped twice", wl->name);
  x = &e->stops[e->n_stops++];
  snprintf(x->workload, sizeof x->workload, "%s", wl->name);
  x->look = (long)look;
  x->looks = (long)wl->n_looks;
  x->n = wl->looks[look - 1];
  core_utc_now(x->at);
  e->total -= items < e->total ? items : e->total;
  snprintf(text, sizeof text,
           "%.80s: stopped at look %zu of %zu (n=%ld): every comparison is "
           "decided\n",
           wl->name, look, wl->n_looks, x->n);
  run_event ev = {.kind = RUN_EVENT_NOTES, .text = text};
  run_engine_emit(e, &ev);
  return write_facts(e, e->runner, e->self, 0, err);
}

/* Begin and end */

static core_status begin(run_engine *e, const run_runner *r, void *self,
                         core_err *err) {
  core_status st;
  core_utc_now(e->started);
  e->has_load_start = run_load_avg(e->load_start);
  if ((st = data_inputs_scan(e->s, &e->inputs, err)) != CORE_OK ||
      (st = data_batch_begin(e->exp, "run", &e->batch, err)) != CORE_OK)
    return st;
  snprintf(e->bid, sizeof e->bid, "%s", data_batch_id(e->batch));
  /* Absolute, because commands run in folders of their own. */
  if (!realpath(data_batch_dir(e->batch), e->bdir))
    return core_fail(err, CORE_EIO, "%s: %s", data_batch_dir(e->batch),
                     strerror(errno));
  e->t_start = core_monotonic();
  e->total = 0;
  for (size_t i = 0; i < e->p->n; i++)
    e->total += e->p->items[i].round > 0 && !e->p->items[i].done;
  return write_facts(e, r, self, 0, err);
}

/* The inputs hashed again at the end: what differs from the start (an
 * edit put back too) goes into the facts, one line each. CORE_ENOMEM
 * only. */
static core_status recheck_inputs(run_engine *e, core_err *err) {
  core_buf b = {0};
  core_status st = CORE_OK;
  if (!e->s->n_inputs || data_inputs_recheck(e->s, &e->inputs, &b) == 0)
    return CORE_OK;
  if (b.oom || !b.data) {
    core_buf_free(&b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  for (char *p = b.data, *nl; st == CORE_OK && *p; p = nl + 1) {
    if (!(nl = strchr(p, '\n')))
      nl = p + strlen(p) - 1;
    else
      *nl = '\0';
    p += strspn(p, " ");
    st = run_note(&e->changed, &e->n_changed, &e->cap_changed, p, err);
  }
  core_buf_free(&b);
  return st;
}

/* A batch whose inputs changed is frozen with them named, and refused. */
static core_status changed_inputs(const run_engine *e, core_err *err) {
  core_buf b = {0};
  core_status st;
  for (size_t i = 0; i < e->n_changed; i++)
    core_buf_printf(&b, "  %s\n", e->changed[i]);
  st = core_fail(err, CORE_ERUN,
                 "%s: its inputs changed during batch %s:\n%sits runs did "
                 "not all use the registered inputs: the batch is kept, "
                 "flagged INPUTS CHANGED, and its verdicts are provisional; "
                 "put the inputs back as registered (see `prereg status`) "
                 "and run again, and keep commands from writing to their "
                 "inputs",
                 e->s->path, e->bid, b.data ? b.data : "");
  core_buf_free(&b);
  return st;
}

/* After collect: frozen whatever happened; the first error stands. */
static core_status end(run_engine *e, const run_runner *r, void *self,
                       core_status st, core_err *err) {
  core_err ferr = {0};
  core_status fst = recheck_inputs(e, &ferr);
  /* Not frozen unflagged: left unfinished, as if interrupted. */
  if (fst != CORE_OK) {
    data_batch_abandon(e->batch);
    e->batch = NULL;
  } else {
    fst = write_facts(e, r, self, 1, &ferr);
  }
  if (st == CORE_OK && fst != CORE_OK) {
    *err = ferr;
    st = fst;
  }
  if (st == CORE_OK && e->n_changed)
    st = changed_inputs(e, err);
  else if (st == CORE_OK && e->interrupted)
    st = core_fail(err, CORE_EINTERRUPT,
                   "interrupted; %zu runs kept, resume with --resume",
                   e->valid + e->invalid);
  else if (st == CORE_OK)
    st = r->outcome(self, e, err);
  return st;
}

core_status run_engine_batch(run_engine *e, const run_runner *r, void *self,
                             run_batch_result *res, core_err *err) {
  memset(res, 0, sizeof *res);
  int begun = 0;
  e->log_fd = -1;
  e->runner = r;
  e->self = self;
  e->version =
      e->exp->n_versions ? e->exp->versions[e->exp->n_versions - 1].number : 0;
  core_status st = r->prepare(self, e, err);
  if ((st == CORE_OK || st == CORE_EINTERRUPT) && run_cancelled())
    st = core_fail(err, CORE_EINTERRUPT,
                   "interrupted before the first run; nothing was written");
  else if (st == CORE_OK && (st = begin(e, r, self, err)) == CORE_OK) {
    begun = 1;
    st = r->collect(self, e, err);
  }
  /* A cancellation from here on no longer stops anything. */
  e->interrupted = begun && run_cancelled();
  r->finish(self, e);
  if (e->log_fd >= 0)
    close(e->log_fd);
  e->log_fd = -1;
  if (begun)
    st = end(e, r, self, st, err);
  snprintf(res->batch, sizeof res->batch, "%s", e->bid);
  res->valid = e->valid;
  res->invalid = e->invalid;
  res->recorded = e->valid + e->invalid;
  res->interrupted = e->interrupted || st == CORE_EINTERRUPT;
  if (e->batch)
    data_batch_abandon(e->batch);
  e->batch = NULL;
  core_names_free(e->warn, e->n_warn);
  e->warn = NULL;
  e->n_warn = 0;
  data_inputs_free(&e->inputs);
  core_names_free(e->changed, e->n_changed);
  e->changed = NULL;
  e->n_changed = e->cap_changed = 0;
  core_free(e->stops);
  e->stops = NULL;
  e->n_stops = 0;
  return st;
}
