/* order_check.c: verify's check of the round orders drawn from a stamp.
 * A batch whose facts name order_stamp (the token of the version it ran
 * under) had each round's arm order drawn from the token's SHA-256, which
 * no one knew before the stamp existed; its rows must follow that order,
 * recomputed here as run/plan.c drew it. Rows reordered by hand, even
 * with every digest made anew, do not.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "run/run_internal.h"
#include "stamps/stamps.h"

/* Reported per batch at most, the rest counted. */
#define ORDER_PROBLEMS_SHOWN 5

typedef struct stamped_batch {
  char id[16];
  char stamp[64]; /* "stamps/vK.tsr" */
  uint64_t seed;
  proto_sheet *sheet; /* the version's */
  long problems;
} stamped_batch;

typedef struct order_check {
  const data_experiment *exp;
  stamped_batch *b;
  size_t n, cap;
  core_buf *report;
  long problems;
  /* The round being read: its batch, workload, round, last run. */
  const stamped_batch *cur;
  size_t workload;
  long round, last_seq, last_pos;
  size_t *order; /* the round's arm order */
  char last_arm[128];
} order_check;

/* A batch whose facts name the stamp its orders were drawn from; a line
 * when it is not the token of the version the batch ran under, or is not
 * there. */
static core_status add_batch(order_check *c, const data_order_stamp *o,
                             core_err *err) {
  char *tok, hex[CORE_SHA256_HEX];
  stamped_batch *nb;
  core_err e;
  if (o->version < 0) {
    core_buf_printf(c->report,
                    "%s/batches/%s.json: order_stamp is not the token of the "
                    "version the batch ran under\n",
                    c->exp->dir, o->batch);
    c->problems++;
    return CORE_OK;
  }
  if (!(tok = core_path_join(c->exp->dir, o->stamp)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (core_sha256_file(tok, hex, &e) != CORE_OK) {
    core_buf_printf(c->report,
                    "%s/batches/%s.json: its round orders were drawn from %s, "
                    "which is not there\n",
                    c->exp->dir, o->batch, tok);
    c->problems++;
    core_free(tok);
    return CORE_OK;
  }
  core_free(tok);
  if (!(nb = core_grow(c->b, &c->cap, c->n, sizeof *nb, 8)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  c->b = nb;
  nb = &c->b[c->n];
  memset(nb, 0, sizeof *nb);
  snprintf(nb->id, sizeof nb->id, "%s", o->batch);
  snprintf(nb->stamp, sizeof nb->stamp, "%s", o->stamp);
  nb->seed = run_stamp_seed(hex);
  if (!(nb->sheet = data_load_version(c->exp, (int)o->version, err)))
    return err->status ? err->status : CORE_EPROTOCOL;
  c->n++;
  return CORE_OK;
}

/* Every batch whose facts say its orders were drawn from a stamp. */
static core_status find_batches(order_check *c, core_err *err) {
  data_order_stamp *o = NULL;
  size_t n = 0;
  core_status st = data_order_stamps(c->exp, &o, &n, err);
  for (size_t i = 0; i < n && st == CORE_OK; i++)
    st = add_batch(c, &o[i], err);
  core_free(o);
  return st;
}

static const stamped_batch *batch_of(const order_check *c, const char *id) {
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->b[i].id, id) == 0)
      return &c->b[i];
  return NULL;
}

static long index_of(const proto_sheet *s, const char *arm) {
  for (size_t a = 0; a < s->n_arms; a++)
    if (strcmp(s->arms[a].name, arm) == 0)
      return (long)a;
  return -1;
}

static long workload_of(const proto_sheet *s, const char *name) {
  for (size_t w = 0; w < s->n_workloads; w++)
    if (strcmp(s->workloads[w].name, name) == 0)
      return (long)w;
  return -1;
}

/* A run out of the order its stamp dictates. */
static void out_of_order(order_check *c, stamped_batch *b, const data_row *r) {
  const proto_sheet *s = b->sheet;
  c->problems++;
  if (++b->problems > ORDER_PROBLEMS_SHOWN)
    return;
  core_buf_printf(c->report,
                  "%s/batches/%s.csv: workload %s round %ld: arm %s ran after "
                  "arm %s, not in the order %s dictates (",
                  c->exp->dir, b->id, r->workload, r->round, r->arm,
                  c->last_arm, b->stamp);
  for (size_t i = 0; i < s->n_arms; i++)
    core_buf_printf(c->report, "%s%s", i ? ", " : "",
                    s->arms[c->order[i]].name);
  core_buf_puts(c->report, ")\n");
}

static core_status each_row(void *ctx, const data_row *r, core_err *err) {
  order_check *c = ctx;
  const stamped_batch *b = r->batch ? batch_of(c, r->batch) : NULL;
  long w, a, pos = -1;
  (void)err;
  if (!b || r->round <= 0 || (w = workload_of(b->sheet, r->workload)) < 0 ||
      b->sheet->workloads[w].order == PROTO_ORDER_BLOCKED)
    return CORE_OK;
  if ((a = index_of(b->sheet, r->arm)) < 0)
    return CORE_OK; /* an arm of no version: said by verify */
  if (b != c->cur || (size_t)w != c->workload || r->round != c->round) {
    c->cur = b;
    c->workload = (size_t)w;
    c->round = r->round;
    c->last_seq = -1;
    c->last_pos = -1;
    run_round_order(b->seed, r->workload, r->round, b->sheet->n_arms,
                    c->order);
  } else if (r->seq == c->last_seq) {
    return CORE_OK; /* another metric of the same run */
  }
  for (size_t i = 0; i < b->sheet->n_arms; i++)
    if (c->order[i] == (size_t)a)
      pos = (long)i;
  if (pos <= c->last_pos)
    out_of_order(c, (stamped_batch *)b, r);
  c->last_pos = pos;
  c->last_seq = r->seq;
  snprintf(c->last_arm, sizeof c->last_arm, "%s", r->arm);
  return CORE_OK;
}

/* The arrays a round's order needs: as many as the widest sheet's arms. */
static core_status alloc_order(order_check *c, core_err *err) {
  size_t most = 1;
  for (size_t i = 0; i < c->n; i++)
    if (c->b[i].sheet->n_arms > most)
      most = c->b[i].sheet->n_arms;
  if (!(c->order = core_calloc(most, sizeof *c->order)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return CORE_OK;
}

core_status run_order_verify(const data_experiment *exp, core_buf *report,
                             long *problems, core_err *err) {
  order_check c;
  core_status st;
  memset(&c, 0, sizeof c);
  c.exp = exp;
  c.report = report;
  st = find_batches(&c, err);
  if (st == CORE_OK && c.n && (st = alloc_order(&c, err)) == CORE_OK)
    st = data_scan_rows(exp, each_row, &c, err);
  for (size_t i = 0; i < c.n; i++) {
    if (st == CORE_OK && c.b[i].problems == 0)
      core_buf_printf(report,
                      "%s: rows collected in the order the stamp dictates "
                      "(%s)\n",
                      c.b[i].id, c.b[i].stamp);
    else if (st == CORE_OK && c.b[i].problems > ORDER_PROBLEMS_SHOWN)
      core_buf_printf(report, "%s/batches/%s.csv: %ld runs out of order\n",
                      exp->dir, c.b[i].id, c.b[i].problems);
    proto_sheet_free(c.b[i].sheet);
  }
  core_free(c.b);
  core_free(c.order);
  *problems = c.problems;
  return st;
}
