/* slurm_steps.c: the steps of a batch across hosts: what each host has
 * left, one srun step at a time per host with every host's step running
 * beside the others', the lines each sends, and what a step that ended
 * leaves: a round kept (its end marker came) or lost with its node.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/limits.h"
#include "fleet/fleet_internal.h"

/* The hosts and their steps */

core_status slurm_plan_named(coord *c, const char *list, core_err *err) {
  const char *v[4096];
  size_t n = 0;
  char *copy = core_strdup(list);
  if (!copy)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  core_status st = CORE_OK;
  for (char *t = strtok(copy, "\n"); t && n < 4096; t = strtok(NULL, "\n")) {
    /* Names go into file names and commands: plain ones only. */
    if (*t && (t[0] == '.' || t[strspn(t, "abcdefghijklmnopqrstuvwxyz"
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_.+-")]))
      st = core_fail(err, CORE_ERUN,
                     "the allocation %s names a node '%.100s' that prereg "
                     "cannot use as a host name",
                     c->job, t);
    if (*t)
      v[n++] = t;
  }
  if (st == CORE_OK)
    st = n == 0 ? core_fail(err, CORE_ERUN,
                            "the allocation %s names no node (squeue)", c->job)
                : run_plan_set_hosts(c->p, c->e->s, v, n, err);
  core_free(copy);
  if (st == CORE_OK)
    st = run_plan_mark(c->p, c->e->exp, c->e->s, c->rows, err);
  return st;
}

/* The key of an item's step: its round, 0 for warm-ups, -1 for the
 * rounds of a blocked workload (one step: the order is the design). */
static long step_round(const proto_sheet *s, const run_plan_item *it) {
  if (it->round > 0 && s->workloads[it->workload].order == PROTO_ORDER_BLOCKED)
    return -1;
  return it->round;
}

/* Adds item it to step st: its run, and its arm to the list of arms. */
static void step_add(coord *c, slurm_step *st, const run_plan_item *it,
                     core_buf *arms) {
  st->runs += it->round > 0;
  const char *an = c->e->s->arms[it->arm].name;
  size_t len = strlen(an);
  int seen = 0;
  for (const char *p = arms->data; p && *p && !seen;
       p += strcspn(p, ","), p += *p == ',')
    seen = !strncmp(p, an, len) && (p[len] == ',' || !p[len]);
  if (!seen)
    core_buf_printf(arms, "%s%s", arms->len ? "," : "", an);
}

/* The rounds step st owes an end marker for: one, or for a blocked
 * workload each round it runs. */
static long step_rounds(const coord *c, size_t host, const slurm_step *st) {
  if (st->round >= 0)
    return st->round > 0;
  long n = 0;
  for (long r = 1;
       r <= run_plan_rounds(c->e->s, &c->e->s->workloads[st->workload],
                            c->p->quick);
       r++)
    for (size_t k = 0; k < c->p->n; k++) {
      const run_plan_item *it = &c->p->items[k];
      if (it->host == host && it->workload == st->workload && it->round == r &&
          !it->done) {
        n++;
        break;
      }
    }
  return n;
}

/* Closes step st: the arms listed only when some arm is not run again;
 * the reference's exit codes when it is done and others are not. */
static core_status step_close(coord *c, size_t host, slurm_step *st,
                              core_buf *arms, core_err *err) {
  size_t n = arms->len ? 1 : 0;
  for (size_t i = 0; i < arms->len; i++)
    n += arms->data[i] == ',';
  if (arms->oom)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st->rounds = step_rounds(c, host, st);
  if (n < c->e->s->n_arms && st->round != 0) {
    st->arms = core_buf_steal(arms);
    for (size_t k = 0; k < c->p->n; k++) {
      const run_plan_item *it = &c->p->items[k];
      if (it->host == host && it->workload == st->workload &&
          it->round == st->round && it->arm == c->e->s->reference && it->done)
        st->ref_exit = it->collected_exit_code;
    }
  }
  core_buf_free(arms);
  return CORE_OK;
}

/* The steps left on host h, in the plan's order. */
static core_status host_steps(coord *c, size_t h, core_err *err) {
  host_run *hr = &c->h[h];
  core_buf arms;
  core_buf_init(&arms);
  core_status st = CORE_OK;
  for (size_t k = 0; k < c->p->n && st == CORE_OK; k++) {
    const run_plan_item *it = &c->p->items[k];
    if (it->host != h || it->done)
      continue;
    long r = step_round(c->e->s, it);
    slurm_step *cur = hr->n_steps ? &hr->steps[hr->n_steps - 1] : NULL;
    if (!cur || cur->workload != it->workload || cur->round != r) {
      if (cur && (st = step_close(c, h, cur, &arms, err)) != CORE_OK)
        break;
      slurm_step *nv = core_realloc(hr->steps, (hr->n_steps + 1) * sizeof *nv);
      if (!nv) {
        st = core_fail(err, CORE_ENOMEM, "out of memory");
        break;
      }
      hr->steps = nv;
      cur = &hr->steps[hr->n_steps++];
      *cur = (slurm_step){.workload = it->workload, .round = r};
    }
    step_add(c, cur, it, &arms);
  }
  if (st == CORE_OK && hr->n_steps)
    st = step_close(c, h, &hr->steps[hr->n_steps - 1], &arms, err);
  core_buf_free(&arms);
  return st;
}

core_status slurm_hosts_init(coord *c, core_err *err) {
  if (c->h)
    return CORE_OK;
  if (!(c->h = core_calloc(c->p->n_hosts ? c->p->n_hosts : 1, sizeof *c->h)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  c->n_h = c->p->n_hosts;
  for (size_t i = 0; i < c->n_h; i++) {
    host_run *h = &c->h[i];
    h->name = c->p->hosts[i];
    h->journal = -1;
    h->c.pid = -1;
    h->c.out = h->c.err = -1;
    h->seq = 1;
    core_status st = host_steps(c, i, err);
    if (st != CORE_OK)
      return st;
  }
  return CORE_OK;
}

/* Starting a step */

/* --digests: the agreed digests, "," and "%" escaped, "-" for none. */
static void digest_arg(const coord *c, core_buf *b) {
  for (size_t a = 0; a < c->e->s->n_arms; a++) {
    const char *d = c->digests[a];
    if (a)
      core_buf_puts(b, ",");
    if (!d[0])
      core_buf_puts(b, "-");
    for (; *d; d++)
      core_buf_puts(b, *d == ','   ? "%2C"
                       : *d == '%' ? "%25"
                                   : (char[2]){*d, 0});
  }
}

/* How long a step may take: every run it makes at its workload's
 * timeouts (prepare, each step, cleanup; and the grace), and slack. */
static double step_budget(const coord *c, const slurm_step *st) {
  const proto_workload *w = &c->e->s->workloads[st->workload];
  double one = ((double)(w->n_steps ? w->n_steps : 1) + 2) *
                   (w->timeout_s + RUN_GRACE_S) +
               w->sample_after_s;
  long runs = st->round == 0
                  ? run_plan_warmups(w, c->p->quick) * (long)c->e->s->n_arms
                  : st->runs;
  return (double)runs * one + SLURM_SLACK_S;
}

static core_status start(coord *c, host_run *h, const slurm_step *st,
                         core_err *err) {
  char round[32], seq[32], ver[32];
  core_buf dig;
  core_buf_init(&dig);
  const char *argv[48];
  size_t k = 0;
  char jobarg[64];
  snprintf(jobarg, sizeof jobarg, "--jobid=%s", c->job);
  const char *head[] = {"srun",    jobarg,     "-w",           h->name,
                        "-N1",     "-n1",      "--overlap",    "--quiet",
                        c->prereg, "node-run", c->sheet,       "--host",
                        h->name,   "--sha256", c->e->s->sha256};
  for (size_t i = 0; i < sizeof head / sizeof *head; i++)
    argv[k++] = head[i];
  if (c->p->quick)
    argv[k++] = "--quick";
  if (!st) {
    argv[k++] = "--preflight";
  } else {
    snprintf(round, sizeof round, "%ld", st->round);
    snprintf(seq, sizeof seq, "%ld", h->seq);
    snprintf(ver, sizeof ver, "%d", c->e->version);
    digest_arg(c, &dig);
    const char *more[] = {
        "--batch",         c->e->bid,
        "--work",          c->e->bdir,
        "--only",          c->e->s->workloads[st->workload].name,
        "--round",         round,
        "--seq",           seq,
        "--sheet-version", ver,
        "--digests",       dig.data ? dig.data : ""};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
      argv[k++] = more[i];
    if (st->arms)
      argv[k++] = "--arms", argv[k++] = st->arms;
    if (st->ref_exit)
      argv[k++] = "--ref-exit", argv[k++] = st->ref_exit;
  }
  argv[k] = NULL;
  core_status s = dig.oom ? core_fail(err, CORE_ENOMEM, "out of memory")
                          : run_child_spawn(argv, &h->c, err);
  core_buf_free(&dig);
  if (s != CORE_OK)
    return s;
  double now = core_monotonic();
  h->busy = 1;
  h->cur = st;
  h->preflight = !st;
  h->deadline = now + (st ? step_budget(c, st) : SLURM_PREFLIGHT_S);
  h->heard = now;
  h->why[0] = h->jobstep[0] = 0;
  h->ends = 0;
  h->in.len = h->tail.len = 0;
  h->skip_line = 0;
  return CORE_OK;
}

/* Lines */

core_status slurm_journal_open(coord *c, host_run *h, core_err *err) {
  char *path = core_asprintf("%s/%s.lines", c->e->bdir, h->name);
  if (!path)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  /* Like every file prereg writes into a folder a command may touch:
   * never through a link, a FIFO or a hard link. */
  core_status st =
      core_open_regular_write(path, O_WRONLY | O_APPEND, &h->journal, err);
  core_free(path);
  if (st == CORE_OK && h->early.len &&
      write(h->journal, h->early.data, h->early.len) < 0) {
    /* A record beside the rows: the batch goes on without it. */
  }
  core_buf_free(&h->early);
  return st;
}

/* Every line a step sent, as it came: what a round that was lost or
 * did not count sent stays on record. Synced in groups, as the rows. */
static void journal(host_run *h, const char *text, size_t len) {
  if (h->journal < 0) {
    core_buf_append(&h->early, text, len);
    core_buf_puts(&h->early, "\n");
    return;
  }
  char *b = core_malloc(len + 1);
  if (!b)
    return;
  memcpy(b, text, len);
  b[len] = '\n';
  if (write(h->journal, b, len + 1) < 0) {
    /* The journal is a record beside the rows; the rows still go on. */
  }
  core_free(b);
  if (core_monotonic() - h->synced >= DATA_SYNC_S) {
    fdatasync(h->journal);
    h->synced = core_monotonic();
  }
}

static core_status on_hello(coord *c, host_run *h, const char *rest,
                            core_err *err) {
  char host[80] = "", js[64] = "", boot[65] = "";
  sscanf(rest, "%79s %63s %64s", host, js, boot);
  snprintf(h->jobstep, sizeof h->jobstep, "%s", js);
  if (strcmp(host, h->name) != 0)
    snprintf(h->why, sizeof h->why, "the step answered as %s", host);
  if (h->preflight) {
    snprintf(h->boot0, sizeof h->boot0, "%s", boot);
    return CORE_OK;
  }
  snprintf(h->boot_end, sizeof h->boot_end, "%s", boot);
  if (!h->boot0[0] || !strcmp(h->boot0, boot))
    return CORE_OK;
  char *t = core_asprintf("%s rebooted during collection: boot_id %s at the "
                          "preflight, %s at round %ld of %s",
                          h->name, h->boot0, boot, h->cur->round,
                          c->e->s->workloads[h->cur->workload].name);
  if (!t)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  snprintf(h->boot0, sizeof h->boot0, "%s", boot); /* said once */
  core_status st =
      run_note(&c->threats, &c->n_threats, &c->cap_threats, t, err);
  run_event ev = {.kind = RUN_EVENT_HOST, .host = h->name, .text = t};
  run_engine_emit(c->e, &ev);
  core_free(t);
  return st;
}

static core_status on_row(host_run *h, const char *rest, core_err *err) {
  data_row r;
  core_err e = {0};
  if (data_row_unline(rest, &r, &e) != CORE_OK) {
    if (e.status == CORE_ENOMEM)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    snprintf(h->why, sizeof h->why, "a row line did not parse (%.300s)",
             e.msg);
    return CORE_OK;
  }
  data_row *nv = core_grow(h->got, &h->cap_got, h->n_got, sizeof *nv, 16);
  if (!nv) {
    data_row_free_strings(&r);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  h->got = nv;
  h->got[h->n_got++] = r;
  return CORE_OK;
}

static core_status on_line(coord *c, host_run *h, const char *line,
                           core_err *err) {
  const char *sp = strchr(line, ' ');
  size_t wl = sp ? (size_t)(sp - line) : strlen(line);
  const char *rest = sp ? sp + 1 : "";
  h->heard = core_monotonic();
  journal(h, line, strlen(line));
  if (!strncmp(line, RUN_NODE_HELLO " ", strlen(RUN_NODE_HELLO) + 1))
    return on_hello(c, h, line + strlen(RUN_NODE_HELLO) + 1, err);
  if (wl == 5 && !strncmp(line, "facts", 5) && h->preflight) {
    core_err e = {0};
    core_free(h->report);
    if (!(h->report = core_strdup(rest)))
      return core_fail(err, CORE_ENOMEM, "out of memory");
    core_names_free(h->digests, h->digests ? c->e->s->n_arms : 0);
    h->digests = NULL;
    if (data_node_report_read(rest, c->e->s, &h->facts, &h->digests, &e) !=
        CORE_OK)
      snprintf(h->why, sizeof h->why, "its report did not parse (%.300s)",
               e.msg);
    return e.status == CORE_ENOMEM ? core_fail(err, CORE_ENOMEM, "oom")
                                   : CORE_OK;
  }
  if (wl == 7 && !strncmp(line, "refused", 7) && h->preflight)
    return (h->refused = core_strdup(rest))
               ? CORE_OK
               : core_fail(err, CORE_ENOMEM, "out of memory");
  if (wl == 3 && !strncmp(line, "row", 3) && !h->preflight)
    return on_row(h, rest, err);
  if (wl == 6 && !strncmp(line, "warmup", 6) && !h->preflight)
    return run_engine_warmup(c->e, h->name, NULL, NULL, 0, rest, rest, err);
  if (wl == 3 && !strncmp(line, "end", 3) && !h->preflight) {
    char w[128] = "";
    long r = -9;
    if (sscanf(rest, "%127s %ld", w, &r) == 2 && h->cur &&
        !strcmp(w, c->e->s->workloads[h->cur->workload].name) &&
        (r == h->cur->round || (h->cur->round < 0 && r > 0)))
      h->ends++;
    else
      snprintf(h->why, sizeof h->why, "an end marker of another round: %s",
               rest);
  }
  return CORE_OK; /* "alive", and anything else: kept in the journal */
}

/* The whole lines in h->in, then what is left moved to its start. */
static core_status lines(coord *c, host_run *h, core_err *err) {
  size_t start = 0;
  core_status st = CORE_OK;
  for (size_t i = 0; i < h->in.len && st == CORE_OK; i++)
    if (h->in.data[i] == '\n') {
      h->in.data[i] = 0;
      if (h->skip_line)
        h->skip_line = 0; /* the end of a line past the cap: dropped */
      else
        st = on_line(c, h, h->in.data + start, err);
      start = i + 1;
    }
  if (h->skip_line)
    start = h->in.len;
  memmove(h->in.data, h->in.data + start, h->in.len - start);
  h->in.len -= start;
  return st;
}

/* A step that ended */

static void clear_got(host_run *h) {
  for (size_t i = 0; i < h->n_got; i++)
    data_row_free_strings(&h->got[i]);
  h->n_got = 0;
}

/* Whether r is a run of this host and batch, of a declared arm, with
 * one of the workload's metrics, the run id the node runner gives
 * (BATCH-HOST-NNNN), and no metric of its run twice (prev: the row
 * before it, or NULL); why not. The values obey the frozen rows' rule
 * already: data_row_unline reads them as a batch file's. */
static int own_run_id(const char *bid, const char *host, const char *id) {
  size_t bl = strlen(bid), hl = strlen(host);
  if (strncmp(id, bid, bl) || id[bl] != '-' ||
      strncmp(id + bl + 1, host, hl) || id[bl + 1 + hl] != '-')
    return 0;
  id += bl + hl + 2;
  return strlen(id) >= 4 && strspn(id, "0123456789") == strlen(id);
}

static int row_is_ours(const coord *c, const host_run *h,
                       const proto_workload *w, const data_row *r,
                       const data_row *run, size_t n_run, char *why,
                       size_t cap) {
  size_t a, m;
  for (a = 0; a < c->e->s->n_arms && strcmp(c->e->s->arms[a].name, r->arm);
       a++)
    ;
  for (m = 0; m < w->n_metrics && strcmp(w->metrics[m], r->metric); m++)
    ;
  if (!own_run_id(c->e->bid, h->name, r->run_id))
    snprintf(why, cap, "it sent a run id that is not its own (%.80s)",
             r->run_id);
  else if (a == c->e->s->n_arms)
    snprintf(why, cap,
             "it sent a row of an arm the sheet does not declare "
             "(%.80s)",
             r->arm);
  else if (m == w->n_metrics)
    snprintf(why, cap, "it sent a metric %s does not measure (%.80s)", w->name,
             r->metric);
  else
    for (const data_row *p = run; p < run + n_run; p++)
      if (!strcmp(p->run_id, r->run_id) && !strcmp(p->metric, r->metric)) {
        snprintf(why, cap, "it sent two values of %s for run %.80s", r->metric,
                 r->run_id);
        break;
      }
  return !why[0];
}

/* Whether r, after the n_run rows of its run before it (run), is one the
 * step was to send; why not. */
static int row_fits(const coord *c, const host_run *h, const data_row *r,
                    const data_row *run, size_t n_run, char *why, size_t cap) {
  const slurm_step *st = h->cur;
  const proto_workload *w = &c->e->s->workloads[st->workload];
  if (!row_is_ours(c, h, w, r, run, n_run, why, cap))
    return 0;
  if (strcmp(r->host, h->name) || strcmp(r->batch, c->e->bid) ||
      strcmp(r->workload, w->name) || strcmp(r->source, "run") ||
      strcmp(r->sheet_sha256, c->e->s->sha256) ||
      r->sheet_version != c->e->version || !r->quick != !c->p->quick ||
      (st->round > 0 && r->round != st->round) || r->round <= 0) {
    snprintf(why, cap, "it sent a row of another round (%s %s round %ld)",
             r->host, r->workload, r->round);
    return 0;
  }
  return 1;
}

/* Whether the rows of the step are those it was to send; why not. */
static int rows_fit(const coord *c, const host_run *h, char *why, size_t cap) {
  const slurm_step *st = h->cur;
  const proto_workload *w = &c->e->s->workloads[st->workload];
  size_t first = 0;
  long runs = 0;
  why[0] = '\0';
  for (size_t i = 0; i < h->n_got; i++) {
    const data_row *r = &h->got[i];
    if (i && strcmp(r->run_id, h->got[i - 1].run_id) != 0)
      first = i;
    if (!row_fits(c, h, r, &h->got[first], i - first, why, cap))
      return 0;
    runs += i == 0 || strcmp(r->run_id, h->got[i - 1].run_id) != 0;
  }
  if (runs != st->runs || h->n_got != (size_t)runs * w->n_metrics) {
    snprintf(why, cap, "it sent %zu rows of %ld runs, not %ld runs", h->n_got,
             runs, st->runs);
    return 0;
  }
  return 1;
}

/* Of a lost step's rows, only those that are the step's own are kept (as
 * invalid): a row with another host's run id, an undeclared arm or a
 * second value would be frozen as that host's or that run's. What is
 * dropped stays in the journal. */
static void keep_own(const coord *c, host_run *h) {
  size_t k = 0, first = 0;
  char why[400];
  for (size_t i = 0; i < h->n_got; i++) {
    data_row r = h->got[i];
    if (k && strcmp(r.run_id, h->got[k - 1].run_id) != 0)
      first = k;
    why[0] = '\0';
    if (row_fits(c, h, &r, &h->got[first], k - first, why, sizeof why))
      h->got[k++] = r;
    else
      data_row_free_strings(&r);
  }
  h->n_got = k;
}

/* The rows of the step go to the batch in one write; each run counted
 * and told. */
static core_status keep(coord *c, host_run *h, core_err *err) {
  core_status st = run_engine_rows(c->e, h->got, h->n_got, err);
  for (size_t i = 0; i < h->n_got && st == CORE_OK; i++) {
    const data_row *r = &h->got[i];
    if (i && !strcmp(r->run_id, h->got[i - 1].run_id))
      continue;
    st = run_engine_ran(c->e, h->name, r->workload, r->arm, r->round,
                        r->valid ? NULL : r->reason,
                        r->has_value ? r->value : 0, err);
  }
  return st;
}

/* The step's round was lost with its node: what came of it is kept,
 * invalid, and the host runs nothing more in this batch. */
static core_status lose(coord *c, host_run *h, const char *why,
                        core_err *err) {
  const slurm_step *cur = h->cur;
  keep_own(c, h);
  for (size_t i = 0; i < h->n_got; i++) {
    data_row *r = &h->got[i];
    char *nr =
        r->reason && r->reason[0]
            ? core_asprintf("%s: %s; %s", DATA_NODE_LOST, why, r->reason)
            : core_asprintf("%s: %s", DATA_NODE_LOST, why);
    if (!nr)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    core_free(r->reason);
    r->reason = nr;
    r->valid = 0;
  }
  core_status st = keep(c, h, err);
  h->lost = 1;
  for (size_t i = h->next - 1; i < h->n_steps; i++)
    h->rounds_lost += (size_t)h->steps[i].rounds;
  char r[64];
  if (cur->round == 0)
    snprintf(r, sizeof r, "the warm-ups");
  else if (cur->round < 0)
    snprintf(r, sizeof r, "the rounds (blocked)");
  else
    snprintf(r, sizeof r, "round %ld", cur->round);
  char *t = core_asprintf("%s was lost during %s of %s (%s); %zu rounds left "
                          "there",
                          h->name, r, c->e->s->workloads[cur->workload].name,
                          why, h->rounds_lost);
  if (!t)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK)
    st = run_note(&c->lost, &c->n_lost, &c->cap_lost, t, err);
  run_event ev = {.kind = RUN_EVENT_HOST, .host = h->name, .text = t};
  run_engine_emit(c->e, &ev);
  core_free(t);
  return st;
}

/* What srun wrote last, on one line, for a reason. */
static const char *srun_said(host_run *h) {
  for (size_t i = 0; i < h->tail.len; i++)
    if (h->tail.data[i] == '\n')
      h->tail.data[i] = ' ';
  core_buf_puts(&h->tail, "");
  return h->tail.data && h->tail.data[0] ? h->tail.data : "nothing";
}

static core_status step_ended(coord *c, host_run *h, int stopping,
                              core_err *err) {
  core_status st = CORE_OK;
  char why[600];
  h->busy = 0;
  if (h->preflight) {
    if (!h->report && !h->refused) {
      snprintf(why, sizeof why,
               "no answer to the preflight (%s; srun said: %s)",
               h->why[0] ? h->why : "no report", srun_said(h));
      h->refused = core_strdup(why);
    }
    return h->refused || h->report ? CORE_OK
                                   : core_fail(err, CORE_ENOMEM, "oom");
  }
  if (stopping) {
    clear_got(h); /* interrupted: not recorded (the journal has it) */
    return CORE_OK;
  }
  long owed = h->cur->rounds ? h->cur->rounds : 1; /* warm-ups: one */
  if (!h->why[0] && h->ends == owed && rows_fit(c, h, why, sizeof why)) {
    st = keep(c, h, err);
    h->rounds_done += (size_t)h->cur->rounds;
  } else {
    if (h->why[0])
      snprintf(why, sizeof why, "%s", h->why);
    else if (h->ends != owed)
      snprintf(why, sizeof why,
               "its step ended without the end of the "
               "round (srun exit %d, said: %s)",
               h->c.status, srun_said(h));
    st = lose(c, h, why, err);
  }
  h->seq += h->cur->runs;
  clear_got(h);
  return st;
}

/* Side by side */

static void cancel_step(coord *c, host_run *h, const char *why) {
  if (!h->why[0])
    snprintf(h->why, sizeof h->why, "%s", why);
  if (h->jobstep[0] && strncmp(h->jobstep, "-.", 2) != 0) {
    core_err e = {0};
    const char *k[] = {"scancel", h->jobstep, NULL};
    slurm_tool(k, NULL, &e);
  }
  (void)c;
  run_child_kill(&h->c);
}

/* One wait for whatever comes first: lines, a step's end, a deadline,
 * a cancellation. Returns when something was handled. */
static core_status pump(coord *c, int *stopping, core_err *err) {
  struct pollfd pf[2 * 256 + 1];
  host_run *who[2 * 256 + 1];
  size_t n = 0;
  double now = core_monotonic(), wake = now + 1.0;
  for (size_t i = 0; i < c->n_h && n < 2 * 256; i++) {
    host_run *h = &c->h[i];
    if (!h->busy)
      continue;
    double due = h->deadline < h->heard + SLURM_SILENCE_S
                     ? h->deadline
                     : h->heard + SLURM_SILENCE_S;
    if (due <= now && !h->why[0])
      cancel_step(c, h,
                  h->deadline <= now
                      ? "no end of the round by its deadline"
                      : "no word from the node runner for a minute");
    wake = due < wake && due > now ? due : wake;
    if (h->c.out >= 0)
      pf[n] = (struct pollfd){h->c.out, POLLIN, 0}, who[n++] = h;
    if (h->c.err >= 0)
      pf[n] = (struct pollfd){h->c.err, POLLIN, 0}, who[n++] = h;
    if (h->c.out < 0 && h->c.err < 0 && run_child_reap(&h->c, 1))
      return step_ended(c, h, *stopping, err);
  }
  if (run_cancel_fd >= 0)
    pf[n] = (struct pollfd){run_cancel_fd, POLLIN, 0}, who[n++] = NULL;
  if (poll(pf, (nfds_t)n, (int)((wake - now) * 1000) + 1) < 0 &&
      errno != EINTR)
    return core_fail(err, CORE_ERUN, "poll: %s", strerror(errno));
  if ((run_cancelled() || (n && !who[n - 1] && pf[n - 1].revents)) &&
      !*stopping) {
    *stopping = 1;
    for (size_t i = 0; i < c->n_h; i++)
      if (c->h[i].busy)
        cancel_step(c, &c->h[i], "interrupted");
  }
  for (size_t i = 0; i < n; i++) {
    host_run *h = who[i];
    if (!h || !pf[i].revents)
      continue;
    int out = pf[i].fd == h->c.out;
    char buf[8192];
    ssize_t got = read(pf[i].fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      close(pf[i].fd);
      *(out ? &h->c.out : &h->c.err) = -1;
      continue;
    }
    core_buf *b = out ? &h->in : &h->tail;
    if (!out && b->len > 4096)
      b->len = 0; /* the end of it is what tells */
    core_buf_append(b, buf, (size_t)got);
    if (b->oom)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    core_status st = out ? lines(c, h, err) : CORE_OK;
    if (st != CORE_OK)
      return st;
    /* What is left is a line not yet whole: past the cap it is no line
     * prereg's node runner writes, and is not kept growing. */
    if (out && h->in.len > CORE_NODE_LINE_MAX) {
      char w[160];
      snprintf(w, sizeof w,
               "it sent a line longer than %zu bytes (no node runner's "
               "line is)",
               (size_t)CORE_NODE_LINE_MAX);
      h->in.len = 0;
      h->skip_line = 1;
      cancel_step(c, h, w);
    }
  }
  return CORE_OK;
}

static int any_busy(const coord *c) {
  for (size_t i = 0; i < c->n_h; i++)
    if (c->h[i].busy)
      return 1;
  return 0;
}

core_status slurm_rounds(coord *c, core_err *err) {
  int stopping = 0;
  core_status st = CORE_OK;
  while (st == CORE_OK) {
    for (size_t i = 0; i < c->n_h && st == CORE_OK && !stopping; i++) {
      host_run *h = &c->h[i];
      if (!h->busy && !h->lost && h->next < h->n_steps)
        st = start(c, h, &h->steps[h->next++], err);
    }
    if (st != CORE_OK || !any_busy(c))
      break;
    st = pump(c, &stopping, err);
  }
  /* After an engine error, the steps still running are stopped. */
  for (size_t i = 0; i < c->n_h; i++)
    if (c->h[i].busy) {
      cancel_step(c, &c->h[i], "the coordinator stopped");
      run_child_reap(&c->h[i].c, 1);
      run_child_close(&c->h[i].c);
      c->h[i].busy = 0;
    }
  return st;
}

/* Preflight */

/* The digest of arm a the rows collected before were measured with, or
 * NULL when none was. */
static const char *earlier_digest(const coord *c, size_t a) {
  for (size_t i = c->rows ? c->rows->n : 0; i-- > 0;) {
    const data_row *r = &c->rows->rows[i];
    if (r->source && !strcmp(r->source, "run") && r->arm &&
        !strcmp(r->arm, c->e->s->arms[a].name) && r->image_digest)
      return r->image_digest;
  }
  return NULL;
}

/* The digest every node must have for arm a: the earlier rows', else
 * the one most nodes have (the first host's on a tie). */
static const char *agreed_digest(const coord *c, size_t a) {
  const char *best = earlier_digest(c, a);
  size_t best_n = 0;
  for (size_t i = 0; !earlier_digest(c, a) && i < c->n_h; i++) {
    if (!c->h[i].digests)
      continue;
    size_t n = 0;
    for (size_t j = 0; j < c->n_h; j++)
      n += c->h[j].digests && !strcmp(c->h[j].digests[a], c->h[i].digests[a]);
    if (n > best_n) {
      best_n = n;
      best = c->h[i].digests[a];
    }
  }
  return best ? best : "";
}

/* A node whose image differs is refused before the first run. */
static core_status same_images(coord *c, core_err *err) {
  if (!(c->digests = core_calloc(c->e->s->n_arms ? c->e->s->n_arms : 1,
                                 sizeof *c->digests)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t a = 0; a < c->e->s->n_arms; a++) {
    const char *want = agreed_digest(c, a);
    if (!(c->digests[a] = core_strdup(want)))
      return core_fail(err, CORE_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->n_h; i++) {
      const host_run *h = &c->h[i];
      if (h->digests && strcmp(h->digests[a], want) != 0)
        return core_fail(
            err, CORE_ERUN,
            "preflight: node %s has the image of arm %s with digest '%s', "
            "not '%s' (%s); it is refused and nothing was run",
            h->name, c->e->s->arms[a].name, h->digests[a], want,
            earlier_digest(c, a) ? "the digest of the rows collected before"
                                 : "what the other nodes have");
    }
  }
  return CORE_OK;
}

core_status slurm_preflight(coord *c, core_err *err) {
  int stopping = 0;
  core_status st = CORE_OK;
  for (size_t i = 0; i < c->n_h && st == CORE_OK; i++)
    if (c->h[i].n_steps)
      st = start(c, &c->h[i], NULL, err);
  while (st == CORE_OK && any_busy(c))
    st = pump(c, &stopping, err);
  if (st == CORE_OK && stopping)
    st = core_fail(err, CORE_EINTERRUPT,
                   "interrupted before the first run; nothing was written");
  core_buf why;
  core_buf_init(&why);
  for (size_t i = 0; i < c->n_h && st == CORE_OK; i++)
    if (c->h[i].refused)
      core_buf_printf(&why, "%s%s: %s", why.len ? "; " : "", c->h[i].name,
                      c->h[i].refused);
  if (st == CORE_OK && why.len)
    st = core_fail(err, CORE_ERUN,
                   "preflight refused the batch before the first run: %s",
                   why.data);
  core_buf_free(&why);
  return st == CORE_OK ? same_images(c, err) : st;
}
