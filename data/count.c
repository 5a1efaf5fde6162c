/* count.c: the one rule that decides which runs count (data.h, "Which
 * runs count"): for every command, under the plan of one version of the
 * sheet, each run's fate, the tallies per workload and arm, and the
 * status line.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/limits.h"
#include "data/data_internal.h"

/* A run's input */

int data_row_node_lost(const data_row *r) {
  return !r->valid && r->reason &&
         strncmp(r->reason, DATA_NODE_LOST, strlen(DATA_NODE_LOST)) == 0;
}

int data_row_setup_failure(const data_row *r) {
  return !r->valid && r->reason &&
         (strncmp(r->reason, DATA_SETUP_FAILURE, strlen(DATA_SETUP_FAILURE)) ==
              0 ||
          strncmp(r->reason, DATA_CONDITIONS, strlen(DATA_CONDITIONS)) == 0);
}

data_run_in data_run_in_of(const data_row *r) {
  data_run_in in = {r->batch,
                    r->workload,
                    r->arm,
                    r->source,
                    r->host,
                    r->sheet_version,
                    r->round,
                    r->valid != 0,
                    r->quick != 0,
                    0,
                    0};
  in.node_lost = data_row_node_lost(r);
  in.setup_failure = data_row_setup_failure(r);
  return in;
}

void data_run_in_add(data_run_in *in, const data_row *r) {
  in->valid &= r->valid != 0;
  in->quick |= r->quick != 0;
  in->node_lost |= data_row_node_lost(r);
  in->setup_failure |= data_row_setup_failure(r);
}

/* The counter */

typedef struct pair {
  data_tally t;          /* strings owned */
  unsigned char *rounds; /* bit r: round r of the plan filled */
  size_t rounds_len;     /* bytes */
} pair;

/* One host of a plan with hosts: its runs of the plan's pairs. */
typedef struct host {
  char *name;
  pair *p;   /* n_known pairs, as the counter's; NULL until its first run */
  int quick; /* a run of it that counts or fills was of run --quick */
} host;

struct data_counter {
  const proto_sheet *plan;
  const data_version *chain;
  size_t n_chain;
  int upto;
  pair *p;
  size_t n, cap, n_known; /* the plan's pairs first, in sheet order */
  /* Pairs the plan does not know: a hash of their names (index + 1). */
  size_t *slots;
  size_t n_slots;
  /* Batches that hold runs that count or fill a round. */
  char **batches;
  size_t n_batches, cap_batches;
  /* A plan with hosts: how many it has (its nodes, or its count), and
   * those known (the nodes, or the count's as runs name them). */
  size_t max_hosts;
  host *hosts;
  size_t n_hosts, last_host;
  data_status status; /* as data_counter_end gave it */
  int quick, oom;
  /* Per workload of the plan: the look it stopped at (0: none), and the
   * stop's record. */
  long *stop_look;
  data_stop *stops;
};

static int same(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") == 0;
}

static char *dup(data_counter *c, const char *s) {
  char *d = core_strdup(s ? s : "");
  if (!d)
    c->oom = 1;
  return d;
}

data_counter *data_counter_new(const proto_sheet *plan,
                               const data_version *chain, size_t n_chain,
                               int upto) {
  data_counter *c = core_calloc(1, sizeof *c);
  size_t nw = plan ? plan->n_workloads : 0, na = plan ? plan->n_arms : 0;
  if (!c)
    return NULL;
  c->plan = plan;
  c->chain = chain;
  c->n_chain = n_chain;
  c->upto = upto;
  if (nw * na > 0 && !(c->p = core_calloc(nw * na, sizeof *c->p))) {
    core_free(c);
    return NULL;
  }
  c->cap = nw * na;
  if (nw && (!(c->stop_look = core_calloc(nw, sizeof *c->stop_look)) ||
             !(c->stops = core_calloc(nw, sizeof *c->stops))))
    c->oom = 1;
  if (plan && plan->hosts.declared)
    c->max_hosts =
        plan->hosts.n_nodes ? plan->hosts.n_nodes : (size_t)plan->hosts.count;
  if (c->max_hosts &&
      !(c->hosts = core_calloc(c->max_hosts, sizeof *c->hosts)))
    c->oom = 1;
  for (size_t w = 0; w < nw; w++)
    for (size_t a = 0; a < na; a++) {
      data_tally *t = &c->p[c->n++].t;
      t->workload = dup(c, plan->workloads[w].name);
      t->arm = dup(c, plan->arms[a].name);
      t->in_sheet = 1;
      /* Every host runs the whole plan. */
      t->planned =
          plan->workloads[w].runs * (long)(c->max_hosts ? c->max_hosts : 1);
    }
  c->n_known = c->n;
  for (size_t h = 0; c->hosts && h < plan->hosts.n_nodes; h++)
    if ((c->hosts[c->n_hosts++].name = dup(c, plan->hosts.nodes[h])) == NULL)
      break;
  if (c->oom) {
    data_counter_free(c);
    return NULL;
  }
  return c;
}

void data_counter_free(data_counter *c) {
  if (!c)
    return;
  for (size_t i = 0; i < c->n; i++) {
    core_free(c->p[i].t.workload);
    core_free(c->p[i].t.arm);
    core_free(c->p[i].rounds);
  }
  core_free(c->p);
  core_free(c->stop_look);
  core_free(c->stops);
  core_free(c->slots);
  core_names_free(c->batches, c->n_batches);
  for (size_t h = 0; h < c->n_hosts; h++) {
    for (size_t i = 0; c->hosts[h].p && i < c->n_known; i++) {
      core_free(c->hosts[h].p[i].t.workload);
      core_free(c->hosts[h].p[i].t.arm);
      core_free(c->hosts[h].p[i].rounds);
    }
    core_free(c->hosts[h].p);
    core_free(c->hosts[h].name);
  }
  core_free(c->hosts);
  core_free(c);
}

static uint32_t pair_hash(const char *w, const char *a) {
  uint32_t h = 2166136261u;
  for (const char *s = w ? w : ""; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  h = (h ^ 0x1f) * 16777619u;
  for (const char *s = a ? a : ""; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* Rebuilds the hash of the pairs past the plan's with room for more. */
static int rehash(data_counter *c) {
  size_t n = c->n_slots ? c->n_slots * 2 : 64;
  size_t *slots = core_calloc(n, sizeof *slots);
  if (!slots)
    return 0;
  for (size_t i = c->n_known; i < c->n; i++) {
    size_t j = pair_hash(c->p[i].t.workload, c->p[i].t.arm) & (n - 1);
    while (slots[j])
      j = (j + 1) & (n - 1);
    slots[j] = i + 1;
  }
  core_free(c->slots);
  c->slots = slots;
  c->n_slots = n;
  return 1;
}

/* The tally of a pair the plan does not know, made on first sight; NULL
 * when out of memory. */
static pair *other_pair(data_counter *c, const char *w, const char *a) {
  size_t others = c->n - c->n_known, j;
  if (others >= COUNT_MAX_OTHER_PAIRS) /* the last one takes the rest */
    return &c->p[c->n - 1];
  if ((others + 1) * 2 > c->n_slots && !rehash(c))
    return NULL;
  for (j = pair_hash(w, a) & (c->n_slots - 1); c->slots[j];
       j = (j + 1) & (c->n_slots - 1)) {
    pair *p = &c->p[c->slots[j] - 1];
    if (same(p->t.workload, w) && same(p->t.arm, a))
      return p;
  }
  pair *np = core_grow(c->p, &c->cap, c->n, sizeof *np, 16);
  if (!np)
    return NULL;
  c->p = np;
  memset(&c->p[c->n], 0, sizeof c->p[c->n]);
  c->p[c->n].t.workload = core_strdup(others + 1 == COUNT_MAX_OTHER_PAIRS
                                          ? "(other workloads and arms)"
                                          : (w ? w : ""));
  c->p[c->n].t.arm = core_strdup(others + 1 == COUNT_MAX_OTHER_PAIRS ? "" : a);
  if (!c->p[c->n].t.workload || !c->p[c->n].t.arm) {
    core_free(c->p[c->n].t.workload);
    core_free(c->p[c->n].t.arm);
    return NULL;
  }
  c->slots[j] = ++c->n;
  return &c->p[c->n - 1];
}

/* The version (its number) that supersedes run r, with its why: filed
 * after r's own version, at most the plan's, listing r's workload. */
static int superseding(const data_counter *c, const data_run_in *r,
                       const char **why) {
  for (size_t k = 0; k < c->n_chain; k++) {
    const data_version *v = &c->chain[k];
    if (v->number <= r->sheet_version || v->number > c->upto)
      continue;
    for (size_t j = 0; j < v->n_supersedes; j++)
      if (same(v->supersedes[j], r->workload)) {
        *why = v->why;
        return v->number;
      }
  }
  return 0;
}

/* Remembers that batch holds runs that count or fill the plan. */
static void holds(data_counter *c, const char *batch) {
  if (c->n_batches && same(c->batches[c->n_batches - 1], batch))
    return;
  for (size_t i = 0; i < c->n_batches; i++)
    if (same(c->batches[i], batch))
      return;
  char **nb =
      core_grow(c->batches, &c->cap_batches, c->n_batches, sizeof *nb, 8);
  if (!nb || !(nb[c->n_batches] = core_strdup(batch ? batch : ""))) {
    if (nb)
      c->batches = nb;
    c->oom = 1;
    return;
  }
  c->batches = nb;
  c->n_batches++;
}

/* Marks round r of a planned pair as run; 1 when it was not before. */
static int fill_round(data_counter *c, pair *p, long r) {
  size_t byte = (size_t)r / 8;
  if (byte >= p->rounds_len) {
    size_t len = (size_t)p->t.planned / 8 + 1;
    unsigned char *nr = core_calloc(len, 1);
    if (!nr) {
      c->oom = 1;
      return 0;
    }
    core_free(p->rounds);
    p->rounds = nr;
    p->rounds_len = len;
  }
  if (p->rounds[byte] & (1u << (r % 8)))
    return 0;
  p->rounds[byte] |= (unsigned char)(1u << (r % 8));
  return 1;
}

static int round_filled(const pair *p, long r) {
  size_t byte = (size_t)r / 8;
  return byte < p->rounds_len && (p->rounds[byte] & (1u << (r % 8)));
}

/* Hosts */

/* The host of run r in a plan with hosts: a declared node, or for a
 * count a host named by prereg's own runs (own: r is one), the first
 * max_hosts of them; -1 when none. */
static int host_of(data_counter *c, const data_run_in *r, int own) {
  const char *name = r->host ? r->host : "";
  if (!*name)
    return -1;
  if (c->last_host < c->n_hosts && same(c->hosts[c->last_host].name, name))
    return (int)c->last_host;
  for (size_t h = 0; h < c->n_hosts; h++)
    if (same(c->hosts[h].name, name))
      return (int)(c->last_host = h);
  if (!own || c->plan->hosts.n_nodes || c->n_hosts >= c->max_hosts)
    return -1;
  if (!(c->hosts[c->n_hosts].name = core_strdup(name))) {
    c->oom = 1;
    return -1;
  }
  return (int)(c->last_host = c->n_hosts++);
}

/* Host h's tally of the plan's pair k, made on first need (NULL when out
 * of memory). */
static pair *host_pair(data_counter *c, int h, size_t k) {
  host *x = &c->hosts[h];
  if (!x->p) {
    if (!(x->p = core_calloc(c->n_known, sizeof *x->p))) {
      c->oom = 1;
      return NULL;
    }
    for (size_t i = 0; i < c->n_known; i++) {
      x->p[i].t.in_sheet = 1;
      x->p[i].t.planned =
          c->plan->workloads[i / c->plan->n_arms].runs; /* one host's */
    }
  }
  return &x->p[k];
}

/* Early stops */

/* The rounds the plan holds for workload w: its runs, or the n of the
 * look it stopped at. */
static long plan_rounds(const data_counter *c, size_t w) {
  const proto_workload *wl = &c->plan->workloads[w];
  long k = c->stop_look ? c->stop_look[w] : 0;
  return k > 0 ? wl->looks[k - 1] : wl->runs;
}

/* Whether stop x is one the plan of workload wl has: at a look before
 * the last, with that look's n. */
static int stop_holds(const proto_workload *wl, const data_stop *x) {
  return wl->n_looks > 1 && x->look >= 1 && x->look < (long)wl->n_looks &&
         x->looks == (long)wl->n_looks && wl->looks[x->look - 1] == x->n;
}

void data_counter_stops(data_counter *c, const data_batch_state *b,
                        size_t nb) {
  if (!c->plan || !c->stop_look)
    return;
  for (size_t i = 0; i < nb; i++)
    for (size_t k = 0; k < b[i].n_stops; k++) {
      const data_stop *x = &b[i].stops[k];
      long w = proto_workload_index(c->plan, x->workload);
      if (w < 0 || !stop_holds(&c->plan->workloads[w], x) ||
          (c->stop_look[w] && c->stop_look[w] <= x->look))
        continue;
      c->stop_look[w] = x->look;
      c->stops[w] = *x;
      for (size_t a = 0; a < c->plan->n_arms; a++)
        c->p[(size_t)w * c->plan->n_arms + a].t.planned = x->n;
    }
}

long data_counter_stopped(const data_counter *c, size_t w) {
  return c->plan && c->stop_look && w < c->plan->n_workloads ? c->stop_look[w]
                                                             : 0;
}

/* The stopped workloads in words, into st. */
static void stops_words(const data_counter *c, data_status *st) {
  size_t used = 0, cap = sizeof st->stops;
  for (size_t w = 0; c->plan && c->stop_look && w < c->plan->n_workloads;
       w++) {
    const data_stop *x = &c->stops[w];
    int k;
    if (!c->stop_look[w])
      continue;
    st->stopped++;
    if (used >= cap - 1)
      continue;
    k = snprintf(st->stops + used, cap - used,
                 "%s%s: stopped at look %ld of %ld (n=%ld)", used ? "; " : "",
                 x->workload, x->look, x->looks, x->n);
    used = k < 0 ? cap - 1 : used + (size_t)k;
    if (used >= cap)
      used = cap - 1;
  }
}

/* The fate of a run counted under pair p and, with hosts, its host's
 * pair hp (the cap then is the host's). */
static void count_valid(data_run_fate *f, pair *p, pair *hp, int imported) {
  const pair *cap = hp ? hp : p;
  if (cap->t.planned > 0 && cap->t.counted >= cap->t.planned) {
    f->fate = DATA_BEYOND_PLAN;
    p->t.beyond++;
    if (hp)
      hp->t.beyond++;
    return;
  }
  p->t.counted++;
  p->t.imported += imported;
  if (hp) {
    hp->t.counted++;
    hp->t.imported += imported;
  }
}

/* Whether run r counts, and why not: THE rule (data.h, "Which runs
 * count"). Every command's count goes through here. */
data_run_fate data_count_run(data_counter *c, const data_run_in *r) {
  data_run_fate f = {NULL, 0, -1, -1, -1, DATA_COUNTED, 0, 0};
  int own = same(r->source, "run"), imported = same(r->source, "import");
  const proto_workload *w = NULL;
  pair *p, *hp = NULL;
  if (c->plan) {
    f.workload = (int)proto_workload_index(c->plan, r->workload);
    f.arm = (int)proto_arm_index(c->plan, r->arm);
  }
  if (f.workload >= 0 && f.arm >= 0) {
    size_t k = (size_t)f.workload * c->plan->n_arms + (size_t)f.arm;
    w = &c->plan->workloads[f.workload];
    p = &c->p[k];
    if (c->max_hosts && (f.host = host_of(c, r, own)) >= 0 &&
        !(hp = host_pair(c, f.host, k)))
      f.host = -1;
  } else if (!(p = other_pair(c, r->workload, r->arm))) {
    c->oom = 1;
    f.fate = DATA_NOT_IN_SHEET;
    return f;
  } else if (c->max_hosts) {
    f.host = host_of(c, r, own);
  }
  if ((f.by_version = superseding(c, r, &f.by_why)) > 0) {
    f.fate = DATA_SUPERSEDED;
    p->t.superseded++;
    if (hp)
      hp->t.superseded++;
    return f;
  }
  if ((c->plan && (!w || (!own && !imported))) ||
      (!c->plan && !own && !imported) || (c->max_hosts && own && !hp)) {
    f.fate = DATA_NOT_IN_SHEET;
    f.what = !c->plan            ? 's'
             : f.workload < 0    ? 'w'
             : f.arm < 0         ? 'a'
             : !own && !imported ? 's'
                                 : 'h';
    p->t.not_in_sheet++;
    return f;
  }
  /* Prereg's own run of a planned round fills it (its host's, with
   * hosts), valid or not: an invalid run is a result, not a gap to run
   * again. A round a lost node left is a gap, and so is one a setup
   * mistake stopped at. */
  if (own && w && proto_workload_runs_itself(w) && r->round >= 1 &&
      r->round <= plan_rounds(c, (size_t)f.workload) && !r->node_lost &&
      !r->setup_failure) {
    f.fills = 1;
    if (fill_round(c, hp ? hp : p, r->round)) {
      p->t.collected++;
      if (hp)
        hp->t.collected++;
    }
  }
  if (!r->valid) {
    f.fate = DATA_INVALID;
    p->t.invalid++;
    if (hp)
      hp->t.invalid++;
  } else {
    count_valid(&f, p, hp, imported);
  }
  if (f.fate == DATA_COUNTED || f.fills) {
    holds(c, r->batch);
    c->quick |= r->quick != 0;
    if (hp)
      c->hosts[f.host].quick |= r->quick != 0;
  }
  return f;
}

/* The runs planned per host (of workloads prereg runs: runs x arms), and
 * those host h (NULL: none yet) collected. */
static long host_planned(const data_counter *c) {
  long planned = 0;
  for (size_t w = 0; c->plan && w < c->plan->n_workloads; w++)
    if (proto_workload_runs_itself(&c->plan->workloads[w]))
      planned += plan_rounds(c, w) * (long)c->plan->n_arms;
  return planned;
}

static long host_collected(const data_counter *c, const host *h) {
  long collected = 0;
  for (size_t i = 0; h && h->p && i < c->n_known; i++)
    if (proto_workload_runs_itself(&c->plan->workloads[i / c->plan->n_arms]))
      collected += h->p[i].t.collected;
  return collected;
}

/* The hosts short of their plan, in words, into st. */
static void hosts_short(const data_counter *c, data_status *st) {
  long planned = host_planned(c);
  size_t used = 0, cap = sizeof st->short_hosts;
  st->hosts = (long)c->max_hosts;
  for (size_t h = 0; h < c->max_hosts; h++) {
    const host *x = h < c->n_hosts ? &c->hosts[h] : NULL;
    long got = host_collected(c, x);
    int k;
    if (got >= planned)
      continue;
    st->hosts_short++;
    if (!x) /* the count's hosts not named yet: said once, below */
      continue;
    k = snprintf(st->short_hosts + used, cap - used, "%s%s %ld/%ld",
                 used ? ", " : "", x->name, got, planned);
    if (k < 0 || (size_t)k >= cap - used) {
      /* Cut at a whole host, with a mark that more follow. */
      st->short_hosts[used] = '\0';
      if (used + 6 < cap)
        snprintf(st->short_hosts + used, cap - used, ", ...");
      used = cap - 1;
      continue;
    }
    used += (size_t)k;
  }
  if (c->n_hosts < c->max_hosts && used < cap - 1)
    snprintf(st->short_hosts + used, cap - used, "%s%zu host%s not named yet",
             used ? ", " : "", c->max_hosts - c->n_hosts,
             c->max_hosts - c->n_hosts == 1 ? "" : "s");
}

/* Whether cell t has fewer valid runs than the rule asks while nothing
 * more is to come for it: its planned runs were all made (valid or not),
 * or it is a workload only imports fill and it holds imported rows. */
static int too_few(const data_counter *c, const data_tally *t) {
  long wi = c->plan ? proto_workload_index(c->plan, t->workload) : -1;
  if (!t->in_sheet || wi < 0 || t->counted >= c->plan->rule.min_n)
    return 0;
  if (proto_workload_runs_itself(&c->plan->workloads[wi]))
    return t->planned > 0 && t->collected >= t->planned;
  return t->counted + t->invalid > 0;
}

/* The cells with too few valid runs, in words, into st. */
static void too_few_cells(const data_counter *c, const data_tally *t, size_t n,
                          data_status *st) {
  size_t used = 0, cap = sizeof st->too_few_cells;
  for (size_t i = 0; i < n; i++) {
    int k;
    if (!too_few(c, &t[i]))
      continue;
    st->too_few++;
    if (used >= cap - 1)
      continue;
    k = snprintf(st->too_few_cells + used, cap - used, "%s%s/%s %ld of %ld",
                 used ? ", " : "", t[i].workload, t[i].arm, t[i].counted,
                 c->plan->rule.min_n);
    if (k < 0 || (size_t)k >= cap - used) {
      st->too_few_cells[used] = '\0';
      if (used + 6 < cap)
        snprintf(st->too_few_cells + used, cap - used, ", ...");
      used = cap - 1;
      continue;
    }
    used += (size_t)k;
  }
}

static void status_of(const data_counter *c, const data_tally *t, size_t n,
                      const data_batch_state *b, size_t nb, data_status *st) {
  memset(st, 0, sizeof *st);
  st->planned = host_planned(c) * (long)(c->max_hosts ? c->max_hosts : 1);
  for (size_t i = 0; i < n; i++) {
    long wi = c->plan ? proto_workload_index(c->plan, t[i].workload) : -1;
    if (t[i].in_sheet && wi >= 0 &&
        proto_workload_runs_itself(&c->plan->workloads[wi]))
      st->collected += t[i].collected;
    st->beyond_plan |= t[i].beyond > 0;
    st->imported |= t[i].imported > 0;
  }
  if (c->max_hosts)
    hosts_short(c, st);
  too_few_cells(c, t, n, st);
  stops_words(c, st);
  st->incomplete =
      st->planned > 0 && (st->collected < st->planned || st->hosts_short > 0);
  st->quick = c->quick;
  /* INTERRUPTED while a batch holding runs that count is unfinished, or
   * was interrupted and the plan is not complete yet: once --resume has
   * completed it, the report keeps the interruption on the record. */
  for (size_t i = 0; i < nb; i++) {
    int counts = 0;
    for (size_t k = 0; k < c->n_batches; k++)
      counts |= strcmp(c->batches[k], b[i].id) == 0;
    st->inputs_changed |= counts && b[i].inputs_changed;
    if (b[i].unfinished || (b[i].interrupted && st->incomplete))
      st->interrupted |= counts;
  }
  for (size_t k = 0; k < c->n_chain; k++)
    st->amended_after_data |=
        c->chain[k].number >= 1 && c->chain[k].rows_when_filed > 0;
}

core_status data_counter_end(data_counter *c, const data_batch_state *batches,
                             size_t n_batches, data_tally **tallies, size_t *n,
                             data_status *st, core_err *err) {
  data_tally *t;
  *tallies = NULL;
  *n = 0;
  memset(st, 0, sizeof *st);
  if (c->oom)
    return core_fail(err, CORE_ENOMEM, "out of memory counting runs");
  if (!(t = core_calloc(c->n ? c->n : 1, sizeof *t)))
    return core_fail(err, CORE_ENOMEM, "out of memory counting runs");
  data_counter_stops(c, batches, n_batches);
  for (size_t i = 0; i < c->n; i++) {
    t[i] = c->p[i].t;
    c->p[i].t.workload = c->p[i].t.arm = NULL; /* now t's */
  }
  status_of(c, t, c->n, batches, n_batches, st);
  c->status = *st;
  *tallies = t;
  *n = c->n;
  return CORE_OK;
}

/* Host x's rounds: those of workloads prereg runs (proto_quick_rounds
 * each when its runs are quick) whose every arm it filled. */
static void host_rounds(const data_counter *c, const host *x,
                        data_host_tally *out) {
  const proto_sheet *s = c->plan;
  for (size_t w = 0; w < s->n_workloads; w++) {
    const proto_workload *wl = &s->workloads[w];
    long rounds;
    if (!proto_workload_runs_itself(wl))
      continue;
    rounds = x && x->quick ? proto_quick_rounds(s, wl) : wl->runs;
    for (long r = 1; x && x->p && r <= rounds; r++) {
      size_t a = 0;
      while (a < s->n_arms && round_filled(&x->p[w * s->n_arms + a], r))
        a++;
      out->rounds_done += a == s->n_arms;
    }
    out->rounds_planned += rounds;
  }
}

/* One host's tallies and status; CORE_ENOMEM only. */
static core_status one_host(const data_counter *c, const host *x,
                            data_host_tally *out, core_err *err) {
  const proto_sheet *s = c->plan;
  data_status *st = &out->status;
  if (!(out->name = core_strdup(x->name)) ||
      !(out->tallies =
            core_calloc(c->n_known ? c->n_known : 1, sizeof *out->tallies)))
    return core_fail(err, CORE_ENOMEM, "out of memory counting runs");
  for (size_t i = 0; i < c->n_known; i++) {
    data_tally *t = &out->tallies[i];
    out->n_tallies = i + 1;
    if (x->p)
      *t = x->p[i].t;
    t->in_sheet = 1;
    t->planned = s->workloads[i / s->n_arms].runs;
    t->workload = core_strdup(s->workloads[i / s->n_arms].name);
    t->arm = core_strdup(s->arms[i % s->n_arms].name);
    if (!t->workload || !t->arm)
      return core_fail(err, CORE_ENOMEM, "out of memory counting runs");
    st->beyond_plan |= t->beyond > 0;
    st->imported |= t->imported > 0;
  }
  st->planned = host_planned(c);
  st->collected = host_collected(c, x);
  st->incomplete = st->planned > 0 && st->collected < st->planned;
  st->quick = x->quick;
  st->interrupted = c->status.interrupted;
  st->amended_after_data = c->status.amended_after_data;
  st->inputs_changed = c->status.inputs_changed;
  host_rounds(c, x, out);
  return CORE_OK;
}

core_status data_counter_hosts(const data_counter *c, data_host_tally **hosts,
                               size_t *n, core_err *err) {
  data_host_tally *v;
  *hosts = NULL;
  *n = 0;
  if (!c->n_hosts)
    return CORE_OK;
  if (!(v = core_calloc(c->n_hosts, sizeof *v)))
    return core_fail(err, CORE_ENOMEM, "out of memory counting runs");
  for (size_t h = 0; h < c->n_hosts; h++) {
    core_status st = one_host(c, &c->hosts[h], &v[h], err);
    if (st != CORE_OK) {
      data_host_tallies_free(v, h + 1);
      return st;
    }
  }
  *hosts = v;
  *n = c->n_hosts;
  return CORE_OK;
}

void data_host_tallies_free(data_host_tally *h, size_t n) {
  for (size_t i = 0; h && i < n; i++) {
    core_free(h[i].name);
    data_tally_free(h[i].tallies, h[i].n_tallies);
  }
  core_free(h);
}

void data_tally_free(data_tally *t, size_t n) {
  for (size_t i = 0; t && i < n; i++) {
    core_free(t[i].workload);
    core_free(t[i].arm);
  }
  core_free(t);
}

/* The status line */

size_t data_status_flags(const data_status *st,
                         const char *words[DATA_STATUS_WORDS]) {
  size_t n = 0;
  if (st->incomplete)
    words[n++] = "INCOMPLETE";
  if (st->quick)
    words[n++] = "QUICK";
  if (st->interrupted)
    words[n++] = "INTERRUPTED";
  if (st->beyond_plan)
    words[n++] = "BEYOND PLAN";
  if (st->imported)
    words[n++] = "IMPORTED";
  if (st->amended_after_data)
    words[n++] = "AMENDED AFTER DATA";
  if (st->inputs_changed)
    words[n++] = "INPUTS CHANGED";
  if (st->unverified)
    words[n++] = "UNVERIFIED";
  if (st->too_few)
    words[n++] = "TOO FEW VALID";
  return n;
}

void data_status_line(const data_status *st, char *out, size_t cap) {
  const char *words[DATA_STATUS_WORDS];
  size_t n = data_status_flags(st, words), used = 0;
  if (cap == 0)
    return;
  out[0] = '\0';
  if (n == 0) {
    snprintf(out, cap, "COMPLETE");
    return;
  }
  for (size_t i = 0; i < n && used < cap; i++) {
    int k = strcmp(words[i], "TOO FEW VALID") == 0
                ? snprintf(out + used, cap - used, "%sTOO FEW VALID (%s)",
                           i ? " · " : "", st->too_few_cells)
            : strcmp(words[i], "INCOMPLETE") != 0
                ? snprintf(out + used, cap - used, "%s%s", i ? " · " : "",
                           words[i])
            : st->hosts_short > 0
                ? snprintf(out + used, cap - used,
                           "%sINCOMPLETE (%ld/%ld; %s)", i ? " · " : "",
                           st->collected, st->planned, st->short_hosts)
                : snprintf(out + used, cap - used, "%sINCOMPLETE (%ld/%ld)",
                           i ? " · " : "", st->collected, st->planned);
    if (k < 0)
      return;
    used += (size_t)k;
  }
}

int data_status_provisional(const data_status *st) {
  return st->incomplete || st->quick || st->inputs_changed;
}

/* Batch states */

/* The state of batch id from its facts file (absent: neither). */
static core_status batch_state(const data_experiment *exp,
                               const data_manifest *m, const char *id,
                               data_batch_state *b, core_err *err) {
  char csv[64], js[64], hex[CORE_SHA256_HEX];
  char *path, *text = NULL;
  size_t len = 0;
  const data_manifest_line *e;
  core_status st = CORE_OK;
  memset(b, 0, sizeof *b);
  snprintf(b->id, sizeof b->id, "%s", id);
  snprintf(csv, sizeof csv, "batches/%s.csv", id);
  snprintf(js, sizeof js, "batches/%s.json", id);
  b->unfinished = data_manifest_find(m, csv) == NULL;
  if (!(path = core_path_join(exp->dir, js)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (!core_exists(path)) {
    core_free(path);
    return CORE_OK;
  }
  if ((st = core_read_file(path, &text, &len, err)) == CORE_OK) {
    json_t *root = json_loadb(text, len, 0, NULL);
    core_sha256_hex(text, len, hex);
    /* The facts decide what the status says: a file changed since it was
     * frozen is refused like a changed batch. */
    if ((e = data_manifest_find(m, js)) != NULL && strcmp(e->sha256, hex) &&
        !exp->trust_changed)
      st = core_fail(err, CORE_EVERIFY,
                     "%s: content differs from the MANIFEST (sha256 "
                     "%.12s..., recorded %.12s...); the data were changed "
                     "after freezing: run prereg verify",
                     path, hex, e->sha256);
    else
      b->interrupted =
          json_is_true(json_object_get(root, "interrupted")) ? 1 : 0;
    json_decref(root);
    if (st == CORE_OK && !data_batch_state_read(b, text, len))
      st = core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_free(text);
  core_free(path);
  return st;
}

int data_batch_state_read(data_batch_state *b, const char *facts, size_t len) {
  json_t *root = json_loadb(facts, len, 0, NULL);
  json_t *a = json_object_get(root, "stops");
  json_t *ch = json_object_get(root, "inputs_changed");
  size_t n = json_is_array(a) ? json_array_size(a) : 0;
  b->inputs_changed = json_is_array(ch) && json_array_size(ch) > 0;
  if (n > CORE_MAX_CELLS)
    n = CORE_MAX_CELLS;
  if (n && !(b->stops = core_calloc(n, sizeof *b->stops))) {
    json_decref(root);
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    json_t *e = json_array_get(a, i);
    const char *w = json_string_value(json_object_get(e, "workload"));
    const char *at = json_string_value(json_object_get(e, "at"));
    json_t *look = json_object_get(e, "look"),
           *k = json_object_get(e, "looks"), *nn = json_object_get(e, "n");
    data_stop *x = &b->stops[b->n_stops];
    if (!w || strlen(w) >= sizeof x->workload || !json_is_integer(look) ||
        !json_is_integer(k) || !json_is_integer(nn))
      continue;
    snprintf(x->workload, sizeof x->workload, "%s", w);
    snprintf(x->at, sizeof x->at, "%s", at ? at : "");
    x->look = (long)json_integer_value(look);
    x->looks = (long)json_integer_value(k);
    x->n = (long)json_integer_value(nn);
    b->n_stops++;
  }
  json_decref(root);
  return 1;
}

void data_batch_states_free(data_batch_state *b, size_t n) {
  for (size_t i = 0; b && i < n; i++)
    core_free(b[i].stops);
  core_free(b);
}

core_status data_batch_states(const data_experiment *exp,
                              data_batch_state **out, size_t *n_out,
                              core_err *err) {
  char *bdir = core_path_join(exp->dir, "batches");
  char **names = NULL;
  size_t n = 0, k = 0;
  data_batch_state *v = NULL;
  data_manifest m;
  long num;
  core_status st;
  *out = NULL;
  *n_out = 0;
  data_json_init();
  if (!bdir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = data_manifest_load(exp->dir, &m, NULL, err)) != CORE_OK) {
    core_free(bdir);
    return st;
  }
  st = core_list_dir(bdir, &names, &n, err);
  if (st == CORE_OK && n && !(v = core_calloc(n, sizeof *v)))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    char id[16];
    if (!data_batch_name(names[i], ".csv", &num) || strlen(names[i]) > 14)
      continue;
    snprintf(id, sizeof id, "%.*s", (int)(strlen(names[i]) - 4), names[i]);
    if ((st = batch_state(exp, &m, id, &v[k], err)) == CORE_OK)
      k++;
  }
  core_names_free(names, n);
  data_manifest_free(&m);
  core_free(bdir);
  if (st != CORE_OK || k == 0) {
    data_batch_states_free(v, n);
    return st;
  }
  *out = v;
  *n_out = k;
  return CORE_OK;
}

/* Over a rowset */

void data_counted_free(data_counted *c) {
  if (!c)
    return;
  core_free(c->runs);
  core_free(c->run_first);
  core_free(c->run_rows);
  core_free(c->row_run);
  core_free(c->counts);
  data_tally_free(c->tallies, c->n_tallies);
  data_host_tallies_free(c->hosts, c->n_hosts);
  core_free(c->stopped);
  memset(c, 0, sizeof *c);
}

/* Groups the rows into runs (see data_same_run) and gives each to the
 * rule in turn. */
static core_status count_runs(data_counter *k, const data_rowset *rows,
                              data_counted *c, core_err *err) {
  size_t cap = 0;
  for (size_t i = 0; i < rows->n;) {
    const data_row *r = &rows->rows[i];
    data_run_in in = data_run_in_of(r);
    size_t j = i;
    while (j < rows->n && data_same_run(&rows->rows[j], r)) {
      data_run_in_add(&in, &rows->rows[j]);
      c->row_run[j++] = c->n_runs;
    }
    if (c->n_runs == cap) {
      size_t nc = cap ? cap * 2 : 64;
      data_run_fate *nf = core_realloc(c->runs, nc * sizeof *nf);
      size_t *n1, *n2;
      if (nf)
        c->runs = nf;
      n1 = nf ? core_realloc(c->run_first, nc * sizeof *n1) : NULL;
      if (n1)
        c->run_first = n1;
      n2 = n1 ? core_realloc(c->run_rows, nc * sizeof *n2) : NULL;
      if (!n2)
        return core_fail(err, CORE_ENOMEM, "out of memory counting runs");
      c->run_rows = n2;
      cap = nc;
    }
    c->runs[c->n_runs] = data_count_run(k, &in);
    c->run_first[c->n_runs] = i;
    c->run_rows[c->n_runs] = j - i;
    c->n_runs++;
    i = j;
  }
  return CORE_OK;
}

core_status data_count_rows(const proto_sheet *plan,
                            const data_experiment *exp, int upto,
                            const data_rowset *rows, data_counted *c,
                            core_err *err) {
  data_counter *k;
  data_batch_state *b = NULL;
  size_t nb = 0;
  core_status st = CORE_OK;
  memset(c, 0, sizeof *c);
  if (exp && exp->dir && core_is_dir(exp->dir) &&
      (st = data_batch_states(exp, &b, &nb, err)) != CORE_OK)
    return st;
  k = data_counter_new(plan, exp ? exp->versions : NULL,
                       exp ? exp->n_versions : 0, upto);
  if (k)
    data_counter_stops(k, b, nb);
  c->row_run = core_calloc(rows->n ? rows->n : 1, sizeof *c->row_run);
  c->counts = core_calloc(rows->n ? rows->n : 1, 1);
  if (!k || !c->row_run || !c->counts)
    st = core_fail(err, CORE_ENOMEM, "out of memory counting runs");
  if (st == CORE_OK)
    st = count_runs(k, rows, c, err);
  if (st == CORE_OK)
    st = data_counter_end(k, b, nb, &c->tallies, &c->n_tallies, &c->status,
                          err);
  if (st == CORE_OK)
    st = data_counter_hosts(k, &c->hosts, &c->n_hosts, err);
  if (st == CORE_OK && plan && plan->n_workloads &&
      !(c->stopped = core_calloc(plan->n_workloads, sizeof *c->stopped)))
    st = core_fail(err, CORE_ENOMEM, "out of memory counting runs");
  for (size_t w = 0; st == CORE_OK && c->stopped && w < plan->n_workloads; w++)
    c->stopped[w] = data_counter_stopped(k, w);
  for (size_t i = 0; st == CORE_OK && i < rows->n; i++)
    c->counts[i] = (unsigned char)data_row_analysed(&c->runs[c->row_run[i]],
                                                    plan, &rows->rows[i]);
  data_counter_free(k);
  data_batch_states_free(b, nb);
  if (st != CORE_OK)
    data_counted_free(c);
  return st;
}

const data_tally *data_counted_tally(const data_counted *c,
                                     const char *workload, const char *arm) {
  for (size_t i = 0; i < c->n_tallies; i++)
    if (same(c->tallies[i].workload, workload) && same(c->tallies[i].arm, arm))
      return &c->tallies[i];
  return NULL;
}

int data_row_analysed(const data_run_fate *f, const proto_sheet *plan,
                      const data_row *r) {
  return f->fate == DATA_COUNTED && r->has_value &&
         (!plan ||
          proto_workload_has_metric(&plan->workloads[f->workload], r->metric));
}

char *data_fate_why(const data_run_fate *f, const proto_sheet *plan,
                    const data_row *r, const char *invalid_reason, int *oom) {
  char *why = NULL;
  *oom = 0;
  switch (f->fate) {
  case DATA_SUPERSEDED:
    why = core_asprintf("superseded by amendment %d: %s", f->by_version,
                        f->by_why ? f->by_why : "");
    break;
  case DATA_NOT_IN_SHEET:
    why =
        f->what == 'w' ? core_asprintf("workload %s is not in this version "
                                       "of the sheet",
                                       r->workload ? r->workload : "")
        : f->what == 'a'
            ? core_asprintf("arm %s is not in this version of the sheet",
                            r->arm ? r->arm : "")
        : f->what == 'h'
            ? core_asprintf("host '%s' is not one of the %s",
                            r->host ? r->host : "",
                            plan && plan->hosts.n_nodes
                                ? "sheet's nodes"
                                : "hosts the sheet's count named first")
            : core_asprintf("unknown source '%s'", r->source ? r->source : "");
    break;
  case DATA_INVALID:
    why = core_strdup(invalid_reason && *invalid_reason ? invalid_reason
                                                        : "invalid");
    break;
  case DATA_BEYOND_PLAN:
    why = core_asprintf("beyond the plan (runs = %ld): valid, not analysed",
                        plan ? plan->workloads[f->workload].runs : 0L);
    break;
  case DATA_COUNTED:
    if (data_row_analysed(f, plan, r))
      return NULL;
    why = r->has_value ? core_asprintf("metric %s is not declared for %s",
                                       r->metric ? r->metric : "",
                                       r->workload ? r->workload : "")
                       : core_strdup("no value recorded");
    break;
  }
  *oom = why == NULL;
  return why;
}

char *data_row_why(const data_counted *c, const proto_sheet *plan,
                   const data_rowset *rows, size_t i, int *oom) {
  size_t run = c->row_run[i];
  const char *reason = NULL;
  /* The run's first invalid row says why, for every row of the run. */
  if (c->runs[run].fate == DATA_INVALID)
    for (size_t j = c->run_first[run];
         j < c->run_first[run] + c->run_rows[run] && !reason; j++)
      if (!rows->rows[j].valid)
        reason = rows->rows[j].reason;
  return data_fate_why(&c->runs[run], plan, &rows->rows[i], reason, oom);
}
