/* batch.c: a batch of measured runs: preflight, then the plan's runs in
 * order (warm-ups not recorded), each run's rows written as soon as it
 * ends, progress through the caller's callback, and the batch frozen
 * with its facts whatever happened.
 * SPDX-License-Identifier: MIT
 *
 * For expect_exit = "reference" a round's rows wait until the round ends,
 * since only then is the comparison decidable (a crash loses at most that
 * round; in blocked order, the workload in progress).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/run_internal.h"

/* The batch in progress */

/* The rows of one round of a "reference" workload, waiting for the round
 * to end. */
typedef struct round_buf {
  run_rows rows;
  char **codes; /* per arm: the exit codes of this round's run, or NULL */
  long pending; /* runs of the round still to come */
} round_buf;

/* What tells a setup mistake from a result, per workload and arm: its
 * warm-ups in this batch and how many failed, whether any of its planned
 * runs was collected before, and whether its first run here ended. */
typedef struct setup_cell {
  long warm_planned, warm_done, warm_failed;
  int collected_before, first_ended;
} setup_cell;

typedef struct batch_ctx {
  const proto_sheet *s;
  const run_plan *p;
  const run_progress *progress;
  data_batch *batch;
  run_preflight pre;
  run_setting set;
  run_row_base base;
  char bid[16], bdir[PATH_MAX], origin[PATH_MAX + 16], started[32];
  char spare[PATH_MAX + 16];
  double load_start[3];
  int has_load_start;
  int stopped;     /* a run was interrupted: no more runs */
  int interrupted; /* cancelled before the last run (run_cancel) */
  long seq, warm_seq;
  size_t valid, invalid, total, done;
  double t_start, run_time; /* run_time: of the recorded runs */
  char **warn;              /* warm-up failures, in words */
  size_t n_warn, cap_warn;
  run_rows rows;      /* of the run just measured */
  round_buf *rb;      /* per round of the current workload (reference) */
  long rb_n;          /* entries of rb */
  size_t current;     /* the workload of the last run, or (size_t)-1 */
  data_inputs inputs; /* the sheet's inputs the batch runs with */
  setup_cell *cells;  /* per workload x arm: what tells a setup mistake */
  int setup_failed;   /* the batch stopped before the plan (setup_msg) */
  char setup_msg[2800];
} batch_ctx;

static void emit(const batch_ctx *c, const run_event *ev) {
  if (c->progress && c->progress->fn)
    c->progress->fn(c->progress->ctx, ev);
}

/* A recorded run ended: done of total, and how long the rest will take
 * at the pace of the runs so far. */
static void report_run(const batch_ctx *c, const run_plan_item *it,
                       const run_outcome *o) {
  run_event ev = {.kind = RUN_EVENT_RUN,
                  .workload = c->s->workloads[it->workload].name,
                  .arm = c->s->arms[it->arm].name,
                  .round = it->round,
                  .done = c->done,
                  .total = c->total,
                  .failure = o->valid ? NULL : o->reason,
                  .wall_s = o->wall,
                  .elapsed_s = core_monotonic() - c->t_start};
  if (c->done)
    ev.eta_s = c->run_time / (double)c->done * (double)(c->total - c->done);
  emit(c, &ev);
}

static void free_rounds(batch_ctx *c) {
  for (long r = 0; r < c->rb_n; r++) {
    run_rows_free(&c->rb[r].rows);
    for (size_t a = 0; c->rb[r].codes && a < c->s->n_arms; a++)
      core_free(c->rb[r].codes[a]);
    core_free(c->rb[r].codes);
  }
  core_free(c->rb);
  c->rb = NULL;
  c->rb_n = 0;
}

/* The first run of workload w: for a "reference" workload, a buffer per
 * round, counting the runs each waits for. */
static core_status enter_workload(batch_ctx *c, size_t w, core_err *err) {
  const proto_workload *wl = &c->s->workloads[w];
  free_rounds(c);
  c->current = w;
  if (wl->expect != PROTO_EXPECT_REFERENCE)
    return CORE_OK;
  long n = run_plan_rounds(wl, c->p->quick) + 1;
  if (!(c->rb = core_calloc((size_t)n, sizeof *c->rb)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  c->rb_n = n;
  for (long r = 0; r < n; r++)
    if (!(c->rb[r].codes = core_calloc(c->s->n_arms, sizeof(char *))))
      return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t k = 0; k < c->p->n; k++) {
    const run_plan_item *it = &c->p->items[k];
    if (it->workload == w && it->round > 0 && !it->done)
      c->rb[it->round].pending++;
  }
  return CORE_OK;
}

/* Rows and rounds */

/* Moves the rows of from to the end of to (their strings with them). */
static core_status rows_move(run_rows *to, run_rows *from, core_err *err) {
  for (size_t i = 0; i < from->n; i++) {
    data_row *nv = core_grow(to->v, &to->cap, to->n, sizeof *nv, 16);
    if (!nv)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    to->v = nv;
    to->v[to->n++] = from->v[i];
    from->v[i] = (data_row){0};
  }
  from->n = 0;
  return CORE_OK;
}

/* The exit codes of the reference arm's run of round r of workload w: of
 * this batch, or collected before (--resume); NULL when there is none. */
static const char *reference_codes(const batch_ctx *c, const round_buf *b,
                                   size_t w, long r) {
  if (b->codes[c->s->reference])
    return b->codes[c->s->reference];
  for (size_t k = 0; k < c->p->n; k++) {
    const run_plan_item *it = &c->p->items[k];
    if (it->workload == w && it->round == r && it->arm == c->s->reference &&
        it->done)
      return it->collected_exit_code;
  }
  return NULL;
}

/* A round of a "reference" workload ended: parity, then its rows go to
 * disk, each run counted as valid or not. */
static core_status flush_round(batch_ctx *c, size_t w, long r, core_err *err) {
  round_buf *b = &c->rb[r];
  core_status st =
      run_rows_parity(&b->rows, c->s, r, reference_codes(c, b, w, r), err);
  for (size_t i = 0; i < b->rows.n; i++)
    if (i == 0 || strcmp(b->rows.v[i].run_id, b->rows.v[i - 1].run_id) != 0)
      b->rows.v[i].valid ? c->valid++ : c->invalid++;
  if (st == CORE_OK)
    st = data_batch_append(c->batch, b->rows.v, b->rows.n, err);
  run_rows_clear(&b->rows);
  return st;
}

/* A recorded run ended: its rows, written now or when its round ends. */
static core_status record(batch_ctx *c, const run_plan_item *it,
                          const char *run_id, run_outcome *o, double t0,
                          core_err *err) {
  const proto_workload *w = &c->s->workloads[it->workload];
  core_status st;
  c->seq++;
  if ((st = run_rows_add(&c->rows, &c->base, it, c->seq, run_id, o, err)) !=
      CORE_OK)
    return st;
  c->done++;
  c->run_time += core_monotonic() - t0;
  if (w->expect != PROTO_EXPECT_REFERENCE) {
    o->valid ? c->valid++ : c->invalid++;
    st = data_batch_append(c->batch, c->rows.v, c->rows.n, err);
    run_rows_clear(&c->rows);
    report_run(c, it, o);
    return st;
  }
  round_buf *b = &c->rb[it->round];
  if ((st = rows_move(&b->rows, &c->rows, err)) != CORE_OK)
    return st;
  if (!(b->codes[it->arm] = core_strdup(o->exit_codes)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  report_run(c, it, o);
  return --b->pending == 0 ? flush_round(c, it->workload, it->round, err)
                           : CORE_OK;
}

/* A warm-up ended: not recorded, but a failure is told and kept in the
 * facts. */
static core_status warmup_ended(batch_ctx *c, const run_plan_item *it,
                                const run_outcome *o, core_err *err) {
  if (o->valid)
    return CORE_OK;
  char msg[1400];
  const char *wn = c->s->workloads[it->workload].name;
  const char *an = c->s->arms[it->arm].name;
  snprintf(msg, sizeof msg, "%s %s warm-up %ld: %s", wn, an, it->warm,
           o->reason);
  char **nw = core_grow(c->warn, &c->cap_warn, c->n_warn, sizeof *nw, 8);
  if (nw)
    c->warn = nw;
  if (!nw || !(c->warn[c->n_warn] = core_strdup(msg)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  c->n_warn++;
  run_event ev = {.kind = RUN_EVENT_WARMUP_FAILED,
                  .workload = wn,
                  .arm = an,
                  .round = it->warm,
                  .failure = o->reason,
                  .text = msg};
  emit(c, &ev);
  return CORE_OK;
}

/* Setup failures */

static setup_cell *cell_of(batch_ctx *c, const run_plan_item *it) {
  return c->cells ? &c->cells[it->workload * c->s->n_arms + it->arm] : NULL;
}

static core_status setup_cells(batch_ctx *c, core_err *err) {
  size_t n = c->s->n_workloads * c->s->n_arms;
  if (!(c->cells = core_calloc(n ? n : 1, sizeof *c->cells)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t k = 0; k < c->p->n; k++) {
    const run_plan_item *it = &c->p->items[k];
    setup_cell *x = cell_of(c, it);
    if (it->round == 0 && !it->done)
      x->warm_planned++;
    else if (it->round > 0 && it->done)
      x->collected_before = 1;
  }
  return CORE_OK;
}

/* Whether the run of item it that just ended tells a setup mistake (the
 * rule is in docs/interface.md): every warm-up of its arm in this batch
 * failed, or its first run here failed while none of its planned runs
 * was collected before and no warm-up of it here succeeded. */
static int setup_mistake(batch_ctx *c, const run_plan_item *it,
                         const run_outcome *o) {
  setup_cell *x = cell_of(c, it);
  if (!x)
    return 0;
  if (it->round == 0) {
    x->warm_done++;
    x->warm_failed += o->failed;
    return x->warm_done == x->warm_planned &&
           x->warm_failed == x->warm_planned;
  }
  if (x->first_ended)
    return 0;
  x->first_ended = 1;
  return o->failed && !x->collected_before && x->warm_failed == x->warm_done;
}

/* Stops the batch before the plan, saying what failed; a recorded run's
 * rows are kept, their reason marked, and fill no round of the plan. */
static void setup_stop(batch_ctx *c, const run_plan_item *it,
                       const char *run_id, run_outcome *o) {
  char what[160];
  const setup_cell *x = cell_of(c, it);
  run_commands rc;
  core_err e = {0};
  const char *cmd =
      run_plan_commands(c->s, it, run_id, &rc, &e) == CORE_OK && rc.n_steps
          ? rc.steps[0]
          : NULL;
  if (it->round == 0)
    snprintf(what, sizeof what, "its %ld warm-up%s failed", x->warm_planned,
             x->warm_planned == 1 ? "" : "s all");
  else
    snprintf(what, sizeof what, "its first run failed before any of its");
  snprintf(c->setup_msg, sizeof c->setup_msg,
           "%.100s / %.100s: %s%s: %.400s%s%.400s%s; `run` stopped before the "
           "plan, and nothing it measured fills a planned run. Fix what the "
           "command needs and run again: the plan is intact, no amendment "
           "needed (commands run in a fresh folder of their own, "
           "%.600s/RUN.work: files beside the sheet are {sheet_dir}/FILE)",
           c->s->workloads[it->workload].name, c->s->arms[it->arm].name, what,
           it->round == 0 ? "" : " planned runs was collected", o->reason,
           cmd ? "; command: " : "", cmd ? cmd : "",
           rc.n_steps > 1 ? " (its first step)" : "", c->bdir);
  if (o->err_tail[0]) {
    size_t l = strlen(c->setup_msg);
    snprintf(c->setup_msg + l, sizeof c->setup_msg - l,
             "; the end of its stderr: %s", o->err_tail);
  }
  run_commands_free(&rc);
  c->setup_failed = 1;
  c->stopped = 1;
}

/* Runs plan item i (not yet collected). */
static core_status one(batch_ctx *c, size_t i, core_err *err) {
  const run_plan_item *it = &c->p->items[i];
  core_status st;
  if (it->workload != c->current &&
      (st = enter_workload(c, it->workload, err)) != CORE_OK)
    return st;
  char run_id[64];
  if (it->round == 0)
    snprintf(run_id, sizeof run_id, "%s-w%03ld", c->bid, ++c->warm_seq);
  else
    snprintf(run_id, sizeof run_id, "%s-%04ld", c->bid, c->seq + 1);
  run_outcome o;
  double t0 = core_monotonic();
  st = run_measure(&c->set, it, run_id, &o, err);
  int mistake = st == CORE_OK && !o.interrupted && setup_mistake(c, it, &o);
  if (mistake)
    setup_stop(c, it, run_id, &o);
  if (mistake && it->round > 0) {
    char why[sizeof o.reason];
    snprintf(why, sizeof why, "%s", o.reason);
    snprintf(o.reason, sizeof o.reason, "%s: %.1000s", DATA_SETUP_FAILURE,
             why);
  }
  if (st == CORE_OK && o.interrupted)
    c->stopped = 1;
  else if (st == CORE_OK && it->round == 0)
    st = warmup_ended(c, it, &o, err);
  else if (st == CORE_OK)
    st = record(c, it, run_id, &o, t0, err);
  core_free(o.m);
  return st;
}

/* Begin and end */

static core_status note_start(batch_ctx *c, int resume, core_err *err);

static core_status begin(batch_ctx *c, data_experiment *exp, int resume,
                         core_err *err) {
  core_status st;
  core_utc_now(c->started);
  c->has_load_start = run_load_avg(c->load_start);
  if ((st = data_inputs_scan(c->s, &c->inputs, err)) != CORE_OK)
    return st;
  if ((st = data_batch_begin(exp, "run", &c->batch, err)) != CORE_OK)
    return st;
  snprintf(c->bid, sizeof c->bid, "%s", data_batch_id(c->batch));
  /* Absolute, because commands run in folders of their own. */
  if (!realpath(data_batch_dir(c->batch), c->bdir))
    return core_fail(err, CORE_EIO, "%s: %s", data_batch_dir(c->batch),
                     strerror(errno));
  snprintf(c->origin, sizeof c->origin, "PREREG_ORIGIN=");
  if (!getcwd(c->origin + 14, sizeof c->origin - 14))
    c->origin[14] = 0;
  snprintf(c->spare, sizeof c->spare, "%s/next.work", c->bdir);
  c->set = (run_setting){.s = c->s,
                         .pre = &c->pre,
                         .bdir = c->bdir,
                         .bid = c->bid,
                         .origin = c->origin,
                         .spare = c->spare};
  c->base = (run_row_base){
      c->s,
      &c->pre,
      c->bid,
      exp->n_versions ? exp->versions[exp->n_versions - 1].number : 0,
      c->p->quick,
      NULL};
  c->t_start = core_monotonic();
  for (size_t i = 0; i < c->p->n; i++)
    c->total += c->p->items[i].round > 0 && !c->p->items[i].done;
  if ((st = setup_cells(c, err)) != CORE_OK)
    return st;
  return note_start(c, resume, err);
}

/* The batch's facts as they stand (see data_run_facts): im one per arm,
 * now the time for ended_at. */
static data_run_facts facts_now(batch_ctx *c, int resume, data_arm_image *im,
                                const char *now) {
  const proto_sheet *s = c->s;
  data_run_facts f = {.protocol = s->id,
                      .sheet_version = c->base.version,
                      .sheet_sha256 = s->sha256,
                      .started_at = c->started,
                      .ended_at = now,
                      .quick = c->p->quick,
                      .resume = resume,
                      .only = c->p->only,
                      .interrupted = c->interrupted,
                      .runs_planned = c->p->planned,
                      .runs_recorded = c->valid + c->invalid,
                      .runs_valid = c->valid,
                      .runs_invalid = c->invalid,
                      .order = RUN_ORDER_TEXT,
                      .images = im,
                      .n_images = s->n_arms,
                      .versions = c->pre.vers,
                      .n_versions = s->n_arms,
                      .warmup_failures = (const char *const *)c->warn,
                      .n_warmup_failures = c->n_warn,
                      .inputs = &c->inputs};
  run_host_facts(&f.host);
  memcpy(f.host.load_avg_start, c->load_start, sizeof c->load_start);
  f.host.has_load_start = c->has_load_start;
  f.host.has_load_end = now ? run_load_avg(f.host.load_avg_end) : 0;
  for (size_t a = 0; im && a < s->n_arms; a++)
    im[a] = (data_arm_image){s->arms[a].name, c->pre.img[a].kind,
                             c->pre.img[a].source, c->pre.img[a].digest};
  return f;
}

/* The facts at the start, on disk until the freeze replaces them: an
 * interrupted batch, until it ends otherwise, so that kill -9 leaves its
 * host facts for recovery to freeze. */
static core_status note_start(batch_ctx *c, int resume, core_err *err) {
  data_arm_image *im =
      core_calloc(c->s->n_arms ? c->s->n_arms : 1, sizeof *im);
  core_status st;
  if (!im)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  c->interrupted = 1;
  data_run_facts f = facts_now(c, resume, im, NULL);
  c->interrupted = 0;
  st = data_batch_start_run(c->batch, &f, err);
  core_free(im);
  return st;
}

/* Freezes the batch with its facts (see data_run_facts). */
static core_status freeze(batch_ctx *c, int resume, core_err *err) {
  data_arm_image *im =
      core_calloc(c->s->n_arms ? c->s->n_arms : 1, sizeof *im);
  char now[32];
  core_utc_now(now);
  data_run_facts f = facts_now(c, resume, im, now);
  data_batch *b = c->batch;
  c->batch = NULL;
  if (!im) {
    data_batch_abandon(b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_status st = data_batch_freeze_run(b, &f, err);
  core_free(im);
  return st;
}

/* Runs the plan's runs left, then freezes whatever was collected, also
 * after a cancellation or an error: the rows on disk are sound, and
 * --resume continues from them. */
static core_status collect(batch_ctx *c, data_experiment *exp, int resume,
                           core_err *err) {
  core_status st = begin(c, exp, resume, err);
  if (st != CORE_OK)
    return st;
  for (size_t i = 0; i < c->p->n && st == CORE_OK && !c->stopped; i++)
    if (!c->p->items[i].done && !run_cancelled())
      st = one(c, i, err);
  /* A cancellation from here on no longer stops anything. */
  c->interrupted = run_cancelled();
  run_setting_end(&c->set);
  free_rounds(c);
  core_err ferr = {0};
  core_status fst = freeze(c, resume, &ferr);
  if (st == CORE_OK && fst != CORE_OK) {
    *err = ferr;
    st = fst;
  }
  if (st == CORE_OK && c->interrupted)
    st = core_fail(err, CORE_EINTERRUPT,
                   "interrupted; %zu runs kept, resume with --resume",
                   c->valid + c->invalid);
  else if (st == CORE_OK && c->setup_failed)
    st = core_fail(err, CORE_ERUN, "setup failure: %s", c->setup_msg);
  return st;
}

core_status run_batch(data_experiment *exp, const proto_sheet *s,
                      const run_plan *p, int resume,
                      const run_progress *progress, run_batch_result *res,
                      core_err *err) {
  batch_ctx c = {.s = s, .p = p, .progress = progress, .current = (size_t)-1};
  core_status st;
  memset(res, 0, sizeof *res);
  st = run_preflight_check(s, p, &c.pre, err);
  if ((st == CORE_OK || st == CORE_EINTERRUPT) && run_cancelled())
    st = core_fail(err, CORE_EINTERRUPT,
                   "interrupted before the first run; nothing was written");
  else if (st == CORE_OK)
    st = collect(&c, exp, resume, err);
  snprintf(res->batch, sizeof res->batch, "%s", c.bid);
  res->valid = c.valid;
  res->invalid = c.invalid;
  res->recorded = c.valid + c.invalid;
  res->interrupted = c.interrupted || st == CORE_EINTERRUPT;
  if (c.batch)
    data_batch_abandon(c.batch);
  run_rows_free(&c.rows);
  free_rounds(&c);
  core_names_free(c.warn, c.n_warn);
  data_inputs_free(&c.inputs);
  core_free(c.cells);
  run_preflight_free(&c.pre, s->n_arms);
  return st;
}
