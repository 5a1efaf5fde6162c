/* slurm.c: a batch across hosts on Slurm: one allocation for the batch,
 * the node runner's preflight on every node before any data, then one
 * step per (host, workload, round), the hosts side by side and the
 * rounds of a host one after another; rows come back as lines and a
 * round counts only once its end marker came.
 * SPDX-License-Identifier: MIT
 *
 * What Slurm does that this must live with (tests/slurm/NOTES.md): srun
 * exits 0 when the node under its step dies, so only the end marker says
 * a round ended; a node lost and back before slurmctld noticed leaves
 * its step holding the CPUs, so every step runs with --overlap and each
 * round has a deadline of ours (and the runner's heartbeat a silence
 * limit), after which the step is cancelled; a node marked down leaves
 * the allocation, so its rounds left wait for run --resume and a new
 * allocation, and are never moved to another host.
 *
 * This is the engine's Slurm runner (run/engine.c holds the batch): the
 * files slurm*.c hold only what talks to Slurm and its nodes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet/fleet_internal.h"

/* Scheduler commands */

/* Runs a scheduler command; its stdout in out (may be NULL). A command
 * that fails is CORE_ERUN naming it and what it said. */
core_status slurm_tool(const char *const argv[], core_buf *out,
                       core_err *err) {
  core_buf e;
  core_buf_init(&e);
  int code;
  core_status st = run_child_tool(argv, out, &e, &code, SLURM_TOOL_S, err);
  if (st == CORE_OK && code != 0) {
    for (size_t i = 0; i < e.len; i++)
      if (e.data[i] == '\n')
        e.data[i] = ' ';
    st = core_fail(err, CORE_ERUN, "%s failed (%s): %.600s", argv[0],
                   code < 0 ? "no answer in time" : "exit code not 0",
                   e.data ? e.data : "");
  }
  core_buf_free(&e);
  return st;
}

/* A job of ours that a coordinator killed before it could release it
 * would hold the nodes (the allocation is exclusive): the experiment's
 * lock says no other coordinator of this experiment runs, so every job
 * of its name is such a leftover. */
static core_status cancel_leftovers(coord *c, core_err *err) {
  core_buf out;
  core_buf_init(&out);
  const char *q[] = {"squeue", "-h", "-n", c->name, "-o", "%i", NULL};
  core_status st = slurm_tool(q, &out, err);
  for (char *p = out.data; st == CORE_OK && p && *p;) {
    size_t len = strcspn(p, "\n");
    char id[32];
    snprintf(id, sizeof id, "%.*s", (int)(len < 31 ? len : 31), p);
    if (id[0]) {
      const char *k[] = {"scancel", id, NULL};
      st = slurm_tool(k, NULL, err);
    }
    p += len + (p[len] == '\n');
  }
  core_buf_free(&out);
  return st;
}

/* The job id in salloc's "Granted job allocation N". */
static int granted(const char *text, char *job, size_t cap) {
  const char *g = text ? strstr(text, "Granted job allocation ") : NULL;
  if (!g)
    return 0;
  g += strlen("Granted job allocation ");
  size_t n = strspn(g, "0123456789");
  if (!n || n >= cap)
    return 0;
  snprintf(job, cap, "%.*s", (int)n, g);
  return 1;
}

/* One exclusive allocation for the batch, not killed when a node dies.
 * want: the nodes by name ("a,b"; NULL: any), n: how many. */
static core_status allocate(coord *c, const char *want, long n,
                            core_err *err) {
  const proto_hosts *h = &c->e->s->hosts;
  char nodes[32], imm[48];
  snprintf(nodes, sizeof nodes, "%ld", n);
  const char *w = getenv("PREREG_SLURM_WAIT_S");
  snprintf(imm, sizeof imm, "--immediate=%s", w && *w ? w : "300");
  const char *argv[24];
  size_t k = 0;
  const char *fixed[] = {"salloc",    "--no-shell", "--exclusive",
                         "--no-kill", "-J",         c->name,
                         "-N",        nodes,        imm};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    argv[k++] = fixed[i];
  if (want)
    argv[k++] = "-w", argv[k++] = want;
  if (h->partition)
    argv[k++] = "-p", argv[k++] = h->partition;
  if (h->constraint)
    argv[k++] = "-C", argv[k++] = h->constraint;
  argv[k] = NULL;
  core_buf out, e;
  core_buf_init(&out);
  core_buf_init(&e);
  int code;
  core_status st = run_child_tool(argv, &out, &e, &code, 3600, err);
  if (st == CORE_OK && (code != 0 || !granted(e.data, c->job, sizeof c->job)))
    st =
        core_fail(err, CORE_ERUN,
                  "salloc could not allocate %s%s (%s); nothing was run. Is a "
                  "node down (sinfo)? run --resume once it is back",
                  want ? "the nodes " : "nodes", want ? want : "",
                  e.data ? e.data : "no answer");
  core_buf_free(&out);
  core_buf_free(&e);
  return st;
}

/* The nodes the allocation holds, one name a line (count mode). */
static core_status allocated_nodes(coord *c, core_buf *names, core_err *err) {
  core_buf list;
  core_buf_init(&list);
  const char *q[] = {"squeue", "-h", "-j", c->job, "-o", "%N", NULL};
  core_status st = slurm_tool(q, &list, err);
  if (st == CORE_OK && list.data) {
    list.data[strcspn(list.data, "\n")] = 0;
    const char *h[] = {"scontrol", "show", "hostnames", list.data, NULL};
    st = slurm_tool(h, names, err);
  }
  core_buf_free(&list);
  return st;
}

static void release(coord *c) {
  if (!c->job[0] || c->released)
    return;
  core_err e = {0};
  const char *k[] = {"scancel", c->job, NULL};
  slurm_tool(k, NULL, &e);
  c->released = 1;
}

/* Names */

/* The job's name: the experiment's id and a digest of its folder's real
 * path, so that it names this experiment and no other. */
static core_status names(coord *c, core_err *err) {
  char real[PATH_MAX], hex[CORE_SHA256_HEX];
  if (!realpath(c->e->exp->dir, real))
    return core_fail(err, CORE_EIO, "%s: %s", c->e->exp->dir, strerror(errno));
  core_sha256_hex(real, strlen(real), hex);
  snprintf(c->name, sizeof c->name, "prereg-%.48s-%.8s", c->e->s->id, hex);
  const char *self = getenv("PREREG_NODE_PROGRAM");
  ssize_t n = -1;
  if (self && *self)
    snprintf(c->prereg, sizeof c->prereg, "%s", self);
  else if ((n = readlink("/proc/self/exe", c->prereg, sizeof c->prereg - 1)) <
           0)
    return core_fail(err, CORE_EIO, "/proc/self/exe: %s", strerror(errno));
  if (n >= 0)
    c->prereg[n] = 0;
  /* The nodes read the frozen text, never the caller's copy. */
  int v = c->e->version;
  char *rel = core_asprintf("%s/versions/v%d.lua", c->e->exp->dir, v);
  if (!rel)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  char *ok = realpath(rel, c->sheet);
  core_free(rel);
  if (!ok)
    return core_fail(err, CORE_EIO, "the frozen sheet v%d: %s", v,
                     strerror(errno));
  return CORE_OK;
}

/* The batch */

/* The hosts with something left to run, then the allocation: by name,
 * or (hosts by count, first batch) what the scheduler gives, which names
 * the plan's hosts. */
static core_status take_nodes(coord *c, core_err *err) {
  core_status st;
  if (c->p->hosts_pending) {
    core_buf list;
    core_buf_init(&list);
    if ((st = allocate(c, NULL, c->e->s->hosts.count, err)) != CORE_OK ||
        (st = allocated_nodes(c, &list, err)) != CORE_OK ||
        (st = slurm_plan_named(c, list.data ? list.data : "", err)) !=
            CORE_OK) {
      core_buf_free(&list);
      return st;
    }
    core_buf_free(&list);
  }
  if ((st = slurm_hosts_init(c, err)) != CORE_OK || c->job[0])
    return st;
  core_buf want;
  core_buf_init(&want);
  long n = 0;
  for (size_t i = 0; i < c->n_h; i++)
    if (c->h[i].n_steps)
      core_buf_printf(&want, "%s%s", n++ ? "," : "", c->h[i].name);
  st = want.oom ? core_fail(err, CORE_ENOMEM, "out of memory")
                : allocate(c, want.data, n, err);
  core_buf_free(&want);
  return st;
}

/* The node's own view and the scheduler's of every host, and what they
 * say together: hosts that are one machine. */
static core_status host_views(coord *c, core_err *err) {
  for (size_t i = 0; i < c->n_h; i++) {
    host_run *h = &c->h[i];
    if (!h->n_steps)
      continue;
    core_buf out;
    core_buf_init(&out);
    const char *q[] = {"scontrol", "show",       "node",
                       h->name,    "--oneliner", NULL};
    core_err e = {0};
    if (slurm_tool(q, &out, &e) == CORE_OK && out.data) {
      out.data[strcspn(out.data, "\n")] = 0;
      h->scheduler = core_buf_steal(&out);
    }
    core_buf_free(&out);
  }
  return slurm_same_machine(c, err);
}

/* The runner */

/* Before the batch: the job's name, leftovers cancelled, the nodes
 * allocated, every node's preflight and the scheduler's view of it. */
static core_status prepare(void *self, run_engine *e, core_err *err) {
  coord *c = self;
  core_status st;
  (void)e;
  if ((st = names(c, err)) == CORE_OK &&
      (st = cancel_leftovers(c, err)) == CORE_OK &&
      (st = take_nodes(c, err)) == CORE_OK &&
      (st = slurm_preflight(c, err)) == CORE_OK)
    st = host_views(c, err);
  return st;
}

static core_status collect(void *self, run_engine *e, core_err *err) {
  coord *c = self;
  core_status st = CORE_OK;
  (void)e;
  for (size_t i = 0; i < c->n_h && st == CORE_OK; i++)
    st = slurm_journal_open(c, &c->h[i], err);
  return st == CORE_OK ? slurm_rounds(c, err) : st;
}

static void finish(void *self, run_engine *e) {
  coord *c = self;
  (void)e;
  release(c);
  slurm_journals_close(c);
}

static core_status outcome(void *self, run_engine *e, core_err *err) {
  const coord *c = self;
  (void)e;
  if (!c->n_lost)
    return CORE_OK;
  return core_fail(err, CORE_ERUN,
                   "%s; the other hosts' rounds are kept, the rounds it had "
                   "left are not moved to another host: run --resume when "
                   "the node is back",
                   c->lost[0]);
}

static const run_runner slurm_runner = {
    RUN_HOST_ORDER_TEXT, prepare, collect, finish, slurm_facts, outcome};

core_status run_slurm_batch(data_experiment *exp, const proto_sheet *s,
                            run_plan *p, const data_rowset *rows, int resume,
                            const run_progress *progress,
                            run_batch_result *res, core_err *err) {
  run_engine e = {
      .exp = exp, .s = s, .p = p, .progress = progress, .resume = resume};
  coord c = {.e = &e, .p = p, .rows = rows};
  core_status st = run_engine_batch(&e, &slurm_runner, &c, res, err);
  slurm_free(&c);
  return st;
}
