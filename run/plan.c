/* plan.c: the plan of a batch: which runs, in which order (each round's
 * arm order drawn from the rule's seed so that anyone can re-derive it
 * from the sheet), which of them are already collected, and the commands
 * each will run.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE /* PATH_MAX */
#include <stdint.h>
#include <string.h>

#include "run/run_internal.h"
#include "stamps/stamps.h"

/* Round order */

/* splitmix64 (Steele, Lea, Flood 2014): tiny, well mixed, and trivial to
 * re-implement in another language to check a recorded order. It is not
 * the analysis RNG on purpose: changing the number of resamples must
 * never change the run order. */
static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static uint64_t fnv1a64(const char *s) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001B3ULL;
  }
  return h;
}

static void shuffle(uint64_t s, size_t n, size_t *order) {
  for (size_t i = 0; i < n; i++)
    order[i] = i;
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)(splitmix64(&s) % (uint64_t)i);
    size_t t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
}

void run_round_order(uint64_t seed, const char *workload, long round, size_t n,
                     size_t *order) {
  shuffle((uint64_t)seed * 0x9E3779B97F4A7C15ULL ^ fnv1a64(workload) ^
              (uint64_t)round,
          n, order);
}

/* The host's hash is rotated by 32 bits so that a host and a workload of
 * the same name do not cancel out. */
void run_host_round_order(unsigned long seed, const char *host,
                          const char *workload, long round, size_t n,
                          size_t *order) {
  uint64_t h = fnv1a64(host);
  shuffle((uint64_t)seed * 0x9E3779B97F4A7C15ULL ^ fnv1a64(workload) ^
              (uint64_t)round ^ (h << 32 | h >> 32),
          n, order);
}

/* Building */

int run_workload_runnable(const proto_workload *w) {
  return proto_workload_runs_itself(w);
}

long run_plan_rounds(const proto_sheet *s, const proto_workload *w,
                     int quick) {
  return quick ? proto_quick_rounds(s, w) : w->runs;
}

long run_plan_warmups(const proto_workload *w, int quick) {
  return quick && w->warmup > 1 ? 1 : w->warmup;
}

static int push(run_plan *p, size_t host, size_t w, size_t a, long round,
                long warm) {
  run_plan_item *nv = core_grow(p->items, &p->cap, p->n, sizeof *nv, 64);
  if (!nv)
    return 0;
  p->items = nv;
  p->items[p->n++] = (run_plan_item){w, a, round, warm, host, 0, NULL};
  p->planned += round > 0;
  return 1;
}

/* The runs of workload w on host (an index into p->hosts; 0 for a plan
 * without hosts), appended; 0 when out of memory. */
static int plan_workload(run_plan *p, const proto_sheet *s, size_t host,
                         size_t w, size_t *order) {
  const proto_workload *wl = &s->workloads[w];
  long runs = run_plan_rounds(s, wl, p->quick);
  long warm = run_plan_warmups(wl, p->quick);
  int ok = 1;
  for (long k = 1; k <= warm; k++)
    for (size_t a = 0; a < s->n_arms; a++)
      ok &= push(p, host, w, a, 0, k);
  if (wl->order == PROTO_ORDER_BLOCKED) {
    for (size_t a = 0; a < s->n_arms; a++)
      for (long r = 1; r <= runs; r++)
        ok &= push(p, host, w, a, r, 0);
  } else {
    for (long r = 1; r <= runs; r++) {
      if (p->n_hosts)
        run_host_round_order(s->rule.seed, p->hosts[host], wl->name, r,
                             s->n_arms, order);
      else
        run_round_order(p->seed, wl->name, r, s->n_arms, order);
      for (size_t i = 0; i < s->n_arms; i++)
        ok &= push(p, host, w, order[i], r, 0);
    }
  }
  return ok;
}

/* Every host runs the whole plan, host after host in the item list (the
 * backend runs the hosts side by side). */
static core_status plan_items(run_plan *p, const proto_sheet *s,
                              core_err *err) {
  size_t *order = core_calloc(s->n_arms ? s->n_arms : 1, sizeof *order);
  if (!order)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  int ok = 1;
  size_t hosts = p->n_hosts ? p->n_hosts : 1;
  for (size_t h = 0; h < hosts && ok; h++)
    for (size_t w = 0; w < s->n_workloads && ok; w++) {
      const proto_workload *wl = &s->workloads[w];
      if (run_workload_runnable(wl) &&
          (!p->only || strcmp(p->only, wl->name) == 0))
        ok = plan_workload(p, s, h, w, order);
    }
  core_free(order);
  return ok ? CORE_OK : core_fail(err, CORE_ENOMEM, "out of memory");
}

core_status run_plan_set_hosts(run_plan *p, const proto_sheet *s,
                               const char *const *hosts, size_t n,
                               core_err *err) {
  core_names_free(p->hosts, p->n_hosts);
  p->hosts = NULL;
  p->n_hosts = 0;
  p->n = p->planned = p->collected = 0;
  if (!n)
    return core_fail(err, CORE_EINPUT, "a plan across hosts needs a host");
  if (!(p->hosts = core_calloc(n, sizeof *p->hosts)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (; p->n_hosts < n; p->n_hosts++)
    if (!(p->hosts[p->n_hosts] = core_strdup(hosts[p->n_hosts])))
      return core_fail(err, CORE_ENOMEM, "out of memory");
  p->hosts_pending = 0;
  return plan_items(p, s, err);
}

core_status run_plan_build(const proto_sheet *s, const char *only, int quick,
                           run_plan *p, core_err *err) {
  memset(p, 0, sizeof *p);
  p->quick = quick;
  p->only = only;
  p->seed = (uint64_t)s->rule.seed;
  const proto_hosts *h = &s->hosts;
  if (h->declared && h->n_nodes)
    return run_plan_set_hosts(p, s, (const char *const *)h->nodes, h->n_nodes,
                              err);
  if (h->declared) {
    p->hosts_pending = 1; /* named by the allocation */
    return CORE_OK;
  }
  return plan_items(p, s, err);
}

uint64_t run_stamp_seed(const char hex[CORE_SHA256_HEX]) {
  uint64_t v = 0;
  for (int i = 0; i < 16; i++) {
    char c = hex[i];
    v = v << 4 | (uint64_t)(c >= 'a' ? c - 'a' + 10 : c - '0');
  }
  return v;
}

core_status run_plan_stamp_order(run_plan *p, const proto_sheet *s,
                                 const data_experiment *exp, core_err *err) {
  int k = (int)exp->n_versions - 1;
  char *tok, hex[CORE_SHA256_HEX];
  core_status st;
  if (k < 0 || s->hosts.declared || !data_stamp_has(exp, k))
    return CORE_OK; /* the sheet's seed, as it always was */
  if (!(tok = core_asprintf("%s/" DATA_STAMPS_DIR "/v%d.tsr", exp->dir, k)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = core_sha256_file(tok, hex, err);
  core_free(tok);
  if (st != CORE_OK)
    return st;
  p->seed = run_stamp_seed(hex);
  snprintf(p->order_stamp, sizeof p->order_stamp, DATA_STAMPS_DIR "/v%d.tsr",
           k);
  p->n = p->planned = 0;
  return plan_items(p, s, err);
}

void run_plan_free(run_plan *p) {
  core_free(p->items);
  core_names_free(p->hosts, p->n_hosts);
  memset(p, 0, sizeof *p);
}

/* What is collected */

/* Marks the recorded runs whose rounds are filled (data_count_run
 * decides, as for every command, and with hosts a run fills its own
 * host's round only; the exit codes of the run that filled it are kept,
 * for reference parity on --resume), then the warm-ups of workloads with
 * nothing left to run on their host. */
static void mark_filled(run_plan *p, const proto_sheet *s,
                        const data_counted *c, const data_rowset *rs) {
  for (size_t i = 0; i < c->n_runs; i++) {
    const data_run_fate *f = &c->runs[i];
    const data_row *r = &rs->rows[c->run_first[i]];
    const char *host = f->host >= 0 ? c->hosts[f->host].name : NULL;
    if (!f->fills || (p->n_hosts && !host))
      continue;
    for (size_t k = 0; k < p->n; k++) {
      run_plan_item *it = &p->items[k];
      if (it->round == r->round && (long)it->workload == f->workload &&
          (long)it->arm == f->arm &&
          (!p->n_hosts || strcmp(p->hosts[it->host], host) == 0)) {
        it->done = 1;
        if (!it->collected_exit_code)
          it->collected_exit_code = r->exit_code;
      }
    }
  }
  /* A workload stopped at a look runs nothing past it. */
  for (size_t k = 0; c->stopped && k < p->n; k++) {
    run_plan_item *it = &p->items[k];
    long look = c->stopped[it->workload];
    if (look > 0 && it->round > s->workloads[it->workload].looks[look - 1])
      it->done = 1;
  }
  for (size_t k = 0; k < p->n; k++) {
    if (p->items[k].round != 0)
      continue;
    int left = 0;
    for (size_t j = 0; j < p->n && !left; j++)
      left = p->items[j].workload == p->items[k].workload &&
             p->items[j].host == p->items[k].host && p->items[j].round > 0 &&
             !p->items[j].done;
    p->items[k].done = !left;
  }
  p->collected = 0;
  for (size_t k = 0; k < p->n; k++)
    p->collected += p->items[k].round > 0 && p->items[k].done;
}

core_status run_plan_mark(run_plan *p, const data_experiment *exp,
                          const proto_sheet *s, const data_rowset *rs,
                          core_err *err) {
  data_counted c;
  int upto = exp->n_versions ? exp->versions[exp->n_versions - 1].number : 0;
  core_status st = data_count_rows(s, exp, upto, rs, &c, err);
  if (st != CORE_OK)
    return st;
  /* Hosts by count were named by the first allocation: the rule knows
   * them from the runs collected since (in the order they first came). */
  if (p->hosts_pending && c.n_hosts) {
    const char **names = core_calloc(c.n_hosts, sizeof *names);
    if (!names)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    for (size_t h = 0; names && h < c.n_hosts; h++)
      names[h] = c.hosts[h].name;
    if (names)
      st = run_plan_set_hosts(p, s, names, c.n_hosts, err);
    core_free(names);
  }
  if (st == CORE_OK)
    mark_filled(p, s, &c, rs);
  data_counted_free(&c);
  return st;
}

core_status run_plan_collect(data_experiment *exp, const proto_sheet *s,
                             int recover, const run_progress *progress,
                             run_plan *p, data_rowset *rows, core_err *err) {
  core_status st;
  memset(rows, 0, sizeof *rows);
  if (recover) {
    core_buf notes;
    core_buf_init(&notes);
    st = data_recover(exp, &notes, err);
    if (st == CORE_OK && notes.len && progress && progress->fn) {
      run_event ev = {.kind = RUN_EVENT_NOTES, .text = notes.data};
      progress->fn(progress->ctx, &ev);
    }
    core_buf_free(&notes);
    if (st != CORE_OK)
      return st;
  }
  if ((st = data_load_rows(exp, rows, err)) != CORE_OK)
    return st;
  return run_plan_mark(p, exp, s, rows, err);
}

/* Commands */

char *run_expand(const proto_sheet *s, const char *tmpl,
                 const proto_expand_ctx *x, core_err *err) {
  char *r = proto_expand(s, tmpl, x, err);
  if (!r && err->status == CORE_OK)
    core_fail(err, CORE_ENOMEM, "out of memory");
  return r;
}

char *run_full_command(const proto_sheet *s, const proto_arm *arm,
                       const char *step, proto_expand_ctx x, core_err *err) {
  x.cmd = NULL;
  if (arm->whole || !step) /* the arm's command is the whole run */
    return run_expand(s, arm->run, &x, err);
  char *inner = run_expand(s, step, &x, err);
  if (!inner)
    return NULL;
  x.cmd = inner;
  char *full = run_expand(s, arm->run ? arm->run : "{cmd}", &x, err);
  core_free(inner);
  return full;
}

core_status run_plan_commands(const proto_sheet *s, const run_plan_item *item,
                              const char *run_id, run_commands *out,
                              core_err *err) {
  const proto_workload *w = &s->workloads[item->workload];
  const proto_arm *a = &s->arms[item->arm];
  /* The batch is the run id's first part; the cidfile's folder is known
   * only once the batch begins. */
  char batch[32], cidfile[128];
  snprintf(batch, sizeof batch, "%.*s", (int)strcspn(run_id, "-"), run_id);
  snprintf(cidfile, sizeof cidfile, "BATCH_FOLDER/%s.cid", run_id);
  proto_expand_ctx x = {.arm = a->name,
                        .workload = w->name,
                        .run_id = run_id,
                        .round = item->round,
                        .batch_id = batch,
                        .cidfile = cidfile};
  memset(out, 0, sizeof *out);
  out->has_steps = w->n_steps > 0;
  size_t ns = w->n_steps ? w->n_steps : 1;
  if ((w->prepare && !(out->prepare = run_expand(s, w->prepare, &x, err))) ||
      !(out->steps = core_calloc(ns, sizeof *out->steps)))
    return err->status != CORE_OK
               ? err->status
               : core_fail(err, CORE_ENOMEM, "out of memory");
  for (; out->n_steps < ns; out->n_steps++) {
    const char *step = w->n_steps ? w->steps[out->n_steps] : w->cmd;
    if (!(out->steps[out->n_steps] = run_full_command(s, a, step, x, err)))
      return err->status;
  }
  if (w->cleanup && !(out->cleanup = run_expand(s, w->cleanup, &x, err)))
    return err->status;
  return CORE_OK;
}

void run_commands_free(run_commands *c) {
  core_free(c->prepare);
  core_names_free(c->steps, c->n_steps);
  core_free(c->cleanup);
  memset(c, 0, sizeof *c);
}
