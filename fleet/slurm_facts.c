/* slurm_facts.c: what a batch across hosts records besides its rows:
 * each node's report, the scheduler's view of it, the host threats
 * found (declared hosts that are one machine, a reboot) and the rounds
 * lost, which the engine freezes with the batch.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "fleet/fleet_internal.h"

core_status slurm_same_machine(coord *c, core_err *err) {
  for (size_t i = 0; i < c->n_h; i++) {
    const char *id = c->h[i].facts.machine_id;
    if (!c->h[i].report || !id[0])
      continue;
    int first = 1, more = 0;
    core_buf names;
    core_buf_init(&names);
    for (size_t j = 0; j < c->n_h; j++) {
      if (!c->h[j].report || strcmp(c->h[j].facts.machine_id, id) != 0)
        continue;
      if (j < i)
        first = 0;
      more += j != i;
      core_buf_printf(&names, "%s%s", names.len ? ", " : "", c->h[j].name);
    }
    core_status st = CORE_OK;
    if (first && more) {
      char *t = core_asprintf(
          "Declared hosts %s are one machine (machine-id %s): their "
          "ratios are not evidence that the result carries over to other "
          "machines",
          names.data, id);
      st = t ? run_note(&c->threats, &c->n_threats, &c->cap_threats, t, err)
             : core_fail(err, CORE_ENOMEM, "out of memory");
      run_event ev = {.kind = RUN_EVENT_HOST, .text = t};
      if (t)
        run_engine_emit(c->e, &ev);
      core_free(t);
    }
    if (names.oom)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    core_buf_free(&names);
    if (st != CORE_OK)
      return st;
  }
  return CORE_OK;
}

/* The nodes as the facts list them, in the plan's order. */
static data_node_run *node_runs(const coord *c) {
  data_node_run *n = core_calloc(c->n_h ? c->n_h : 1, sizeof *n);
  for (size_t i = 0; n && i < c->n_h; i++) {
    const host_run *h = &c->h[i];
    n[i] = (data_node_run){.name = h->name,
                           .report = h->report,
                           .scheduler = h->scheduler,
                           .boot_id_end = h->boot_end[0] ? h->boot_end : NULL,
                           .rounds_done = h->rounds_done,
                           .rounds_lost = h->rounds_lost};
  }
  return n;
}

core_status slurm_facts(void *self, const run_engine *e, data_run_facts *f,
                        data_arm_image *im, data_arm_versions *vers,
                        core_err *err) {
  coord *c = self;
  const proto_sheet *s = e->s;
  for (size_t a = 0; a < s->n_arms; a++) {
    const proto_arm *arm = &s->arms[a];
    const proto_image *pi =
        (arm->image.tree || arm->image.digest_cmd) ? &arm->image : &s->image;
    im[a] = (data_arm_image){arm->name,
                             pi->tree         ? "tree"
                             : pi->digest_cmd ? "digest"
                                              : "none",
                             pi->tree ? pi->tree : pi->digest_cmd,
                             c->digests ? c->digests[a] : ""};
    vers[a].arm = arm->name; /* each node's are in its report */
  }
  core_free(c->nodes);
  if (!(c->nodes = node_runs(c)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  f->backend = "slurm";
  f->job = c->job[0] ? c->job : NULL;
  f->nodes = c->nodes;
  f->n_nodes = c->n_h;
  f->host_threats = (const char *const *)c->threats;
  f->n_host_threats = c->n_threats;
  f->lost_rounds = (const char *const *)c->lost;
  f->n_lost_rounds = c->n_lost;
  return CORE_OK;
}

void slurm_journals_close(coord *c) {
  for (size_t i = 0; i < c->n_h; i++)
    if (c->h[i].journal >= 0) {
      fsync(c->h[i].journal);
      close(c->h[i].journal);
      c->h[i].journal = -1;
    }
}

void slurm_free(coord *c) {
  for (size_t i = 0; i < c->n_h; i++) {
    host_run *h = &c->h[i];
    if (h->busy) {
      run_child_kill(&h->c);
      run_child_reap(&h->c, 1);
    }
    run_child_close(&h->c);
    for (size_t k = 0; k < h->n_steps; k++)
      core_free(h->steps[k].arms);
    core_free(h->steps);
    core_buf_free(&h->in);
    core_buf_free(&h->tail);
    core_buf_free(&h->early);
    for (size_t k = 0; k < h->n_got; k++)
      data_row_free_strings(&h->got[k]);
    core_free(h->got);
    core_free(h->report);
    core_free(h->refused);
    core_names_free(h->digests, h->digests ? c->e->s->n_arms : 0);
    core_free(h->scheduler);
    if (h->journal >= 0)
      close(h->journal);
  }
  core_free(c->h);
  core_names_free(c->digests, c->digests ? c->e->s->n_arms : 0);
  core_names_free(c->threats, c->n_threats);
  core_names_free(c->lost, c->n_lost);
  core_free(c->nodes);
  memset(c, 0, sizeof *c);
}
