/* node.c: the node runner of a batch across hosts: on the node, the
 * preflight (requires, image digests, versions, the node's facts) and
 * one round of one workload, measured by this engine exactly as a batch
 * here measures it, each line of what it found handed to the caller to
 * send back (the coordinator reads them from the step's output).
 * SPDX-License-Identifier: MIT
 *
 * Lines (each sent whole, at once, so that a lost node leaves no torn
 * one): the hello "prereg-node 1 HOST JOB.STEP BOOT_ID"; then "facts
 * JSON" (preflight), or "warmup TEXT" for a failed warm-up and, once the
 * round's last run has ended, its runs' "row JSON" lines (data_row_line)
 * and "end WORKLOAD ROUND RUNS", the only proof that it ran to its end;
 * "refused TEXT" when the preflight fails; "alive" from the heartbeat.
 * Rows wait for the round's end so that no line crosses the node while a
 * run is measured: on the loopback cluster, where the coordinator and
 * srun share the node's cores, rows sent as each run ended made /bin/true
 * 34% slower (1.173 against 0.873 ms here), sent at the round's end 4%
 * (0.939 against 0.905 ms, within the passes' spread).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/run_internal.h"

/* Lines */

static core_status send(const run_node_sink *out, core_buf *b, core_err *err) {
  if (b->oom) {
    core_buf_free(b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_status st = out->line(out->ctx, b->data ? b->data : "", err);
  core_buf_free(b);
  return st;
}

/* A line of a word and free text, the text on one line. */
static core_status send_text(const run_node_sink *out, const char *word,
                             const char *text, core_err *err) {
  core_buf b;
  core_buf_init(&b);
  core_buf_printf(&b, "%s ", word);
  for (const char *p = text; *p; p++)
    core_buf_printf(&b, "%c", *p == '\n' || *p == '\r' ? ' ' : *p);
  return send(out, &b, err);
}

/* The first line of every step: who and where, so that the coordinator
 * knows the step to cancel and sees a reboot. */
static core_status hello(const run_node_sink *out, const char *host,
                         core_err *err) {
  const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
  char boot[65];
  run_boot_id(boot, sizeof boot);
  core_buf b;
  core_buf_init(&b);
  core_buf_printf(&b, "%s %s %s.%s %s", RUN_NODE_HELLO, host, job ? job : "-",
                  step ? step : "-", boot[0] ? boot : "-");
  return send(out, &b, err);
}

static core_status send_rows(const run_node_sink *out, run_rows *rows,
                             core_err *err) {
  core_status st = CORE_OK;
  for (size_t i = 0; i < rows->n && st == CORE_OK; i++) {
    core_buf b;
    core_buf_init(&b);
    core_buf_puts(&b, "row ");
    data_row_line(&rows->v[i], &b);
    st = send(out, &b, err);
  }
  run_rows_clear(rows);
  return st;
}

/* Preflight */

/* The plan of this node alone: the orders are drawn from its name. */
static core_status host_plan(const proto_sheet *s, const char *host, int quick,
                             run_plan *p, core_err *err) {
  core_status st = run_plan_build(s, NULL, quick, p, err);
  if (st == CORE_OK)
    st = run_plan_set_hosts(p, s, &host, 1, err);
  return st;
}

static core_status report(const proto_sheet *s, const char *host,
                          const run_preflight *pre, const run_node_sink *out,
                          core_err *err) {
  data_node_facts f;
  run_node_facts(&f, host);
  data_arm_image *im = core_calloc(s->n_arms ? s->n_arms : 1, sizeof *im);
  if (!im)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t a = 0; a < s->n_arms; a++)
    im[a] = (data_arm_image){s->arms[a].name, pre->img[a].kind,
                             pre->img[a].source, pre->img[a].digest};
  core_buf b;
  core_buf_init(&b);
  core_buf_puts(&b, "facts ");
  data_node_report(&f, im, s->n_arms, pre->vers, s->n_arms, &b);
  core_free(im);
  return send(out, &b, err);
}

core_status run_node_preflight(const proto_sheet *s, const char *host,
                               int quick, const run_node_sink *out,
                               core_err *err) {
  run_plan p;
  run_preflight pre;
  memset(&p, 0, sizeof p);
  memset(&pre, 0, sizeof pre);
  core_status st = hello(out, host, err);
  if (st == CORE_OK && (st = host_plan(s, host, quick, &p, err)) == CORE_OK) {
    st = run_preflight_check(s, &p, &pre, err);
    if (st == CORE_OK)
      st = report(s, host, &pre, out, err);
    else if (st != CORE_ENOMEM && st != CORE_EINTERRUPT) {
      core_err e2 = {0};
      send_text(out, "refused", err->msg, &e2);
    }
  }
  run_plan_free(&p);
  run_preflight_free(&pre, s->n_arms);
  return st;
}

/* One round */

typedef struct node_round {
  const proto_sheet *s;
  const run_node_req *q;
  const run_node_sink *out;
  run_preflight pre;
  run_setting set;
  run_row_base base;
  run_rows rows;
  char origin[PATH_MAX + 16], spare[PATH_MAX + 80];
  char **ref;  /* per round: the reference run's exit codes, or NULL */
  long rounds; /* entries of ref, less one */
  long seq, runs;
} node_round;

static int wanted(const run_node_req *q, const proto_sheet *s,
                  const run_plan_item *it) {
  if (strcmp(s->workloads[it->workload].name, q->workload) != 0 ||
      (q->round < 0 ? it->round <= 0 : it->round != q->round))
    return 0;
  if (!q->arms)
    return 1;
  const char *name = s->arms[it->arm].name;
  size_t len = strlen(name);
  for (const char *p = q->arms; *p; p += strcspn(p, ","), p += *p == ',')
    if (strncmp(p, name, len) == 0 && (p[len] == ',' || !p[len]))
      return 1;
  return 0;
}

/* Runs one item; *stop when it was interrupted (no end marker then). */
static core_status one(node_round *c, const run_plan_item *it, int *stop,
                       core_err *err) {
  char run_id[160];
  if (it->round == 0)
    snprintf(run_id, sizeof run_id, "%s-%s-w%zu.%ld", c->q->batch, c->q->host,
             it->workload + 1, it->warm);
  else
    snprintf(run_id, sizeof run_id, "%s-%s-%04ld", c->q->batch, c->q->host,
             c->seq + 1);
  run_outcome o;
  core_status st = run_measure(&c->set, it, run_id, &o, err);
  if (st == CORE_OK && o.interrupted) {
    *stop = 1;
  } else if (st == CORE_OK && it->round == 0) {
    if (!o.valid) {
      char msg[1400];
      run_warmup_words(c->s, it, o.reason, msg, sizeof msg);
      st = send_text(c->out, "warmup", msg, err);
    }
  } else if (st == CORE_OK) {
    c->seq++;
    c->runs++;
    st = run_rows_add(&c->rows, &c->base, it, c->seq, run_id, &o, err);
    if (st == CORE_OK && it->arm == c->s->reference &&
        it->round <= c->rounds &&
        !(c->ref[it->round] = core_strdup(o.exit_codes)))
      st = core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_free(o.m);
  return st;
}

/* Each step is a new runner with a new spawn helper, where a batch here
 * keeps one for all its rounds: a first spawn costs the helper's page
 * faults (about 0.1 ms on /bin/true, measured), so one unrecorded spawn
 * of true comes before the round's first run. */
static core_status prime(core_err *err) {
  run_req q = {.cmd = "true", .timeout_s = 10, .grace_s = RUN_GRACE_S};
  run_res r;
  return run_exec(&q, &r, err);
}

static core_status round_begin(node_round *c, const run_plan *p,
                               core_err *err) {
  core_status st = run_preflight_given(c->s, p, c->q->digests, &c->pre, err);
  if (st == CORE_OK)
    st = prime(err);
  if (st != CORE_OK)
    return st;
  snprintf(c->origin, sizeof c->origin, "PREREG_ORIGIN=");
  if (!getcwd(c->origin + 14, sizeof c->origin - 14))
    c->origin[14] = 0;
  snprintf(c->spare, sizeof c->spare, "%s/next-%s.work", c->q->bdir,
           c->q->host);
  c->set = (run_setting){.s = c->s,
                         .pre = &c->pre,
                         .bdir = c->q->bdir,
                         .origin = c->origin,
                         .spare = c->spare};
  c->base = (run_row_base){c->s,          &c->pre,     c->q->batch,
                           c->q->version, c->q->quick, c->q->host};
  c->seq = c->q->seq - 1;
  return CORE_OK;
}

/* Round r's end: reference parity when the workload asks for it, its
 * rows (taken out of c->rows), then its end marker. */
static core_status one_end(node_round *c, long w, long r, core_err *err) {
  run_rows mine = {0};
  core_status st = CORE_OK;
  for (size_t i = 0; i < c->rows.n; i++) {
    if (c->rows.v[i].round != r)
      continue;
    data_row *nv = core_grow(mine.v, &mine.cap, mine.n, sizeof *nv, 16);
    if (!nv) {
      run_rows_free(&mine);
      return core_fail(err, CORE_ENOMEM, "out of memory");
    }
    mine.v = nv;
    mine.v[mine.n++] = c->rows.v[i];
    c->rows.v[i] = (data_row){.round = -1};
  }
  const char *ref = c->ref[r] ? c->ref[r] : c->q->ref_exit;
  if (c->s->workloads[w].expect == PROTO_EXPECT_REFERENCE)
    st = run_rows_parity(&mine, c->s, r, ref, err);
  if (st == CORE_OK)
    st = send_rows(c->out, &mine, err);
  run_rows_free(&mine);
  core_buf b;
  core_buf_init(&b);
  core_buf_printf(&b, "end %s %ld %ld", c->q->workload, r, c->runs);
  return st == CORE_OK ? send(c->out, &b, err) : st;
}

/* The step's end: one end marker per round it ran (every round of a
 * blocked workload, in order). */
static core_status round_end(node_round *c, long w, core_err *err) {
  if (c->q->round >= 0)
    return one_end(c, w, c->q->round, err);
  core_status st = CORE_OK;
  for (long r = 1; r <= c->rounds && st == CORE_OK; r++)
    st = one_end(c, w, r, err);
  run_rows_clear(&c->rows);
  return st;
}

core_status run_node_round(const proto_sheet *s, const run_node_req *q,
                           const run_node_sink *out, core_err *err) {
  node_round c = {.s = s, .q = q, .out = out};
  run_plan p;
  memset(&p, 0, sizeof p);
  long w = proto_workload_index(s, q->workload);
  int stop = 0;
  core_status st = hello(out, q->host, err);
  if (st == CORE_OK && w < 0)
    st = core_fail(err, CORE_EUSAGE, "no workload %s in %s", q->workload,
                   s->path);
  if (st == CORE_OK) {
    c.rounds = run_plan_rounds(s, &s->workloads[w], q->quick);
    if (q->round > c.rounds ||
        !(c.ref = core_calloc((size_t)c.rounds + 1, sizeof *c.ref)))
      st = q->round > c.rounds
               ? core_fail(err, CORE_EUSAGE, "%s has no round %ld",
                           q->workload, q->round)
               : core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if (st == CORE_OK &&
      (st = host_plan(s, q->host, q->quick, &p, err)) == CORE_OK &&
      (st = round_begin(&c, &p, err)) == CORE_OK) {
    for (size_t i = 0; i < p.n && st == CORE_OK && !stop; i++)
      if (wanted(q, s, &p.items[i]) && !run_cancelled())
        st = one(&c, &p.items[i], &stop, err);
    run_setting_end(&c.set);
    if (st == CORE_OK && (stop || run_cancelled()))
      st = core_fail(err, CORE_EINTERRUPT, "interrupted: the round is lost");
    if (st == CORE_OK)
      st = round_end(&c, w, err);
  }
  run_plan_free(&p);
  run_rows_free(&c.rows);
  core_names_free(c.ref, c.ref ? (size_t)c.rounds + 1 : 0);
  run_preflight_free(&c.pre, s->n_arms);
  return st;
}
