/* batch.c: the local runner of the engine (run/engine.c): this machine's
 * preflight, then the plan's runs in order in this process (warm-ups not
 * recorded), each run's rows handed to the engine as soon as it ends,
 * and a setup mistake told apart from a result.
 * SPDX-License-Identifier: MIT
 *
 * For expect_exit = "reference" a round's rows wait until the round ends,
 * since only then is the comparison decidable (a crash loses at most that
 * round; in blocked order, the workload in progress).
 */
#define _GNU_SOURCE
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

/* The local runner: the plan's runs in this process, one after another,
 * on this machine. */
typedef struct batch_ctx {
  run_engine *e;
  const proto_sheet *s;
  const run_plan *p;
  run_preflight pre;
  run_setting set;
  run_row_base base;
  char origin[PATH_MAX + 16], spare[PATH_MAX + 16];
  int stopped; /* a run was interrupted: no more runs */
  long seq, warm_seq;
  run_rows rows;     /* of the run just measured */
  round_buf *rb;     /* per round of the current workload (reference) */
  long rb_n;         /* entries of rb */
  size_t current;    /* the workload of the last run, or (size_t)-1 */
  setup_cell *cells; /* per workload x arm: what tells a setup mistake */
  int setup_failed;  /* the batch stopped before the plan (setup_msg) */
  char setup_msg[2800];
  size_t *looked;           /* per workload: the last look analysed here */
  unsigned char *stopped_w; /* per workload: stopped at a look here */
} batch_ctx;

/* A recorded run ended. */
static core_status report_run(const batch_ctx *c, const run_plan_item *it,
                              const run_outcome *o, core_err *err) {
  double wall = o->val[PROTO_MEASURE_WALL];
  return run_engine_ran(c->e, NULL, c->s->workloads[it->workload].name,
                        c->s->arms[it->arm].name, it->round,
                        o->valid ? NULL : o->reason, wall, err);
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
  long n = run_plan_rounds(c->s, wl, c->p->quick) + 1;
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
  if (st == CORE_OK)
    st = run_engine_rows(c->e, b->rows.v, b->rows.n, err);
  run_rows_clear(&b->rows);
  return st;
}

/* A recorded run ended: its rows, written now or when its round ends. */
static core_status record(batch_ctx *c, const run_plan_item *it,
                          const char *run_id, run_outcome *o, core_err *err) {
  const proto_workload *w = &c->s->workloads[it->workload];
  core_status st;
  c->seq++;
  if ((st = run_rows_add(&c->rows, &c->base, it, c->seq, run_id, o, err)) !=
      CORE_OK)
    return st;
  if (w->expect != PROTO_EXPECT_REFERENCE) {
    st = run_engine_rows(c->e, c->rows.v, c->rows.n, err);
    run_rows_clear(&c->rows);
    core_status lst = report_run(c, it, o, err);
    return st != CORE_OK ? st : lst;
  }
  round_buf *b = &c->rb[it->round];
  if ((st = rows_move(&b->rows, &c->rows, err)) != CORE_OK)
    return st;
  if (!(b->codes[it->arm] = core_strdup(o->exit_codes)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = report_run(c, it, o, err)) != CORE_OK)
    return st;
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
  run_warmup_words(c->s, it, o->reason, msg, sizeof msg);
  return run_engine_warmup(c->e, NULL, c->s->workloads[it->workload].name,
                           c->s->arms[it->arm].name, it->warm, o->reason, msg,
                           err);
}

/* Setup failures */

static setup_cell *cell_of(batch_ctx *c, const run_plan_item *it) {
  return c->cells ? &c->cells[it->workload * c->s->n_arms + it->arm] : NULL;
}

static core_status setup_cells(batch_ctx *c, core_err *err) {
  size_t n = c->s->n_workloads * c->s->n_arms, nw = c->s->n_workloads;
  if (!(c->cells = core_calloc(n ? n : 1, sizeof *c->cells)) ||
      !(c->looked = core_calloc(nw ? nw : 1, sizeof *c->looked)) ||
      !(c->stopped_w = core_calloc(nw ? nw : 1, 1)))
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
           rc.n_steps > 1 ? " (its first step)" : "", c->e->bdir);
  if (o->err_tail[0]) {
    size_t l = strlen(c->setup_msg);
    snprintf(c->setup_msg + l, sizeof c->setup_msg - l,
             "; the end of its stderr: %s", o->err_tail);
  }
  run_commands_free(&rc);
  c->setup_failed = 1;
  c->stopped = 1;
}

/* Looks */

/* The runs of workload w from plan item i on not yet collected: what a
 * stop there leaves out. */
static size_t runs_left(const batch_ctx *c, size_t w, size_t i) {
  size_t n = 0;
  for (; i < c->p->n; i++)
    n += c->p->items[i].workload == w && c->p->items[i].round > 0 &&
         !c->p->items[i].done;
  return n;
}

/* Before item i, the first of its round here: when the round before
 * completed a look of its workload (not the last) that this batch has
 * not analysed yet, the look, which may stop the workload. Runs in order
 * leave every run of that round collected by now; a look analysed by an
 * earlier batch is analysed again on the same rows, alike. */
static core_status at_look(batch_ctx *c, size_t i, core_err *err) {
  const run_plan_item *it = &c->p->items[i];
  const proto_workload *wl = &c->s->workloads[it->workload];
  const run_progress *pr = c->e->progress;
  int stop = 0;
  if (!wl->n_looks || c->p->quick || it->round < 2 || !pr || !pr->look)
    return CORE_OK;
  for (size_t k = 0; k + 1 < wl->n_looks; k++) {
    if (wl->looks[k] != it->round - 1 || c->looked[it->workload] > k)
      continue;
    c->looked[it->workload] = k + 1;
    core_status st = pr->look(pr->look_ctx, it->workload, k + 1, &stop, err);
    if (st != CORE_OK || !stop)
      return st;
    c->stopped_w[it->workload] = 1;
    return run_engine_stop(c->e, it->workload, k + 1,
                           runs_left(c, it->workload, i), err);
  }
  return CORE_OK;
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
    snprintf(run_id, sizeof run_id, "%s-w%03ld", c->e->bid, ++c->warm_seq);
  else
    snprintf(run_id, sizeof run_id, "%s-%04ld", c->e->bid, c->seq + 1);
  run_outcome o;
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
    st = record(c, it, run_id, &o, err);
  core_free(o.m);
  return st;
}

/* The runner */

static core_status prepare(void *self, run_engine *e, core_err *err) {
  batch_ctx *c = self;
  core_status st = run_cond_required(c->s, err);
  (void)e;
  return st != CORE_OK ? st : run_preflight_check(c->s, c->p, &c->pre, err);
}

/* The batch's folder exists: the runs' setting, then the plan's runs
 * left, in order, until one is interrupted or a setup mistake shows. */
static core_status collect(void *self, run_engine *e, core_err *err) {
  batch_ctx *c = self;
  snprintf(c->origin, sizeof c->origin, "PREREG_ORIGIN=");
  if (!getcwd(c->origin + 14, sizeof c->origin - 14))
    c->origin[14] = 0;
  snprintf(c->spare, sizeof c->spare, "%s/next.work", e->bdir);
  c->set = (run_setting){.s = c->s,
                         .pre = &c->pre,
                         .bdir = e->bdir,
                         .bid = e->bid,
                         .origin = c->origin,
                         .spare = c->spare};
  c->base =
      (run_row_base){c->s, &c->pre, e->bid, e->version, c->p->quick, NULL};
  core_status st = setup_cells(c, err);
  const run_plan_item *last = NULL;
  for (size_t i = 0; i < c->p->n && st == CORE_OK && !c->stopped; i++) {
    const run_plan_item *it = &c->p->items[i];
    if (it->done || c->stopped_w[it->workload] || run_cancelled())
      continue;
    st = at_look(c, i, err);
    if (st != CORE_OK || c->stopped_w[it->workload])
      continue;
    /* Before each round, the registered wait for a quiet host. */
    if (it->round > 0 &&
        (!last || last->workload != it->workload || last->round != it->round))
      run_cond_wait(&c->s->conditions, e->progress);
    last = it;
    st = one(c, i, err);
  }
  return st;
}

static void finish(void *self, run_engine *e) {
  batch_ctx *c = self;
  run_setting_end(&c->set);
  free_rounds(c);
  (void)e;
}

/* Each arm's image and versions as this machine's preflight found them. */
static core_status facts(void *self, const run_engine *e, data_run_facts *f,
                         data_arm_image *im, data_arm_versions *vers,
                         core_err *err) {
  const batch_ctx *c = self;
  for (size_t a = 0; a < c->s->n_arms; a++)
    im[a] = (data_arm_image){c->s->arms[a].name, c->pre.img[a].kind,
                             c->pre.img[a].source, c->pre.img[a].digest};
  f->versions = c->pre.vers;
  (void)e, (void)vers, (void)err;
  return CORE_OK;
}

static core_status outcome(void *self, run_engine *e, core_err *err) {
  const batch_ctx *c = self;
  (void)e;
  return c->setup_failed
             ? core_fail(err, CORE_ERUN, "setup failure: %s", c->setup_msg)
             : CORE_OK;
}

static const run_runner local_runner = {RUN_ORDER_TEXT, prepare, collect,
                                        finish,         facts,   outcome};

core_status run_batch(data_experiment *exp, const proto_sheet *s,
                      const run_plan *p, int resume,
                      const run_progress *progress, run_batch_result *res,
                      core_err *err) {
  run_engine e = {
      .exp = exp, .s = s, .p = p, .progress = progress, .resume = resume};
  batch_ctx c = {.e = &e, .s = s, .p = p, .current = (size_t)-1};
  core_status st = run_engine_batch(&e, &local_runner, &c, res, err);
  run_rows_free(&c.rows);
  free_rounds(&c);
  core_free(c.cells);
  core_free(c.looked);
  core_free(c.stopped_w);
  run_preflight_free(&c.pre, s->n_arms);
  return st;
}
