/* cmd_pilot.c: `prereg pilot SHEET [--runs N]`: a few rounds of every arm
 * and workload, measured by the run engine as `run` measures them, into
 * DATA/ID/pilot: frozen and listed in DATA/ID's MANIFEST, never counted.
 * SPDX-License-Identifier: MIT
 *
 * The pilot folder is an experiment folder of its own (data.h,
 * DATA_PILOT_DIR): its v0 is the sheet piloted, its batches the pilot's.
 * Nothing that reads DATA/ID/batches (the counting rule, run's to-do,
 * analyze, report) reads it; `prereg plan --pilot DATA/ID/pilot` does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_internal.h"
#include "core/limits.h"
#include "data/data.h"
#include "protocols/proto.h"
#include "run/run.h"

/* A line per run on stderr. */
static void on_progress(void *ctx, const run_event *ev) {
  FILE *out = ctx;
  if (ev->kind == RUN_EVENT_RUN)
    fprintf(stderr, "prereg: pilot [%zu/%zu] %s %s round %ld: %s (%.4g s)\n",
            ev->done, ev->total, ev->workload, ev->arm, ev->round,
            ev->failure ? ev->failure : "ok", ev->wall_s);
  else if (ev->kind == RUN_EVENT_NOTES)
    fprintf(out, "%s", ev->text);
  else if (ev->text)
    fprintf(stderr, "prereg: warning: %s\n", ev->text);
  fflush(stderr);
}

static void on_signal(int sig) {
  (void)sig;
  run_cancel();
}

static core_status parse_runs(const cli_opts *opts, long *runs,
                              core_err *err) {
  char *end;
  *runs = 5;
  if (!opts->runs)
    return CORE_OK;
  errno = 0;
  *runs = strtol(opts->runs, &end, 10);
  if (errno || *end || end == opts->runs || *runs < 1 ||
      *runs > PILOT_MAX_RUNS)
    return core_fail(err, CORE_EUSAGE,
                     "--runs %s: a pilot runs 1 to %ld rounds per arm",
                     opts->runs, PILOT_MAX_RUNS);
  return CORE_OK;
}

/* The pilot's folder, its v0 the sheet as piloted. */
static core_status open_pilot(data_experiment *exp, const proto_sheet *s,
                              data_experiment **pilot, core_err *err) {
  int already = 0;
  core_status st = data_pilot_open(exp, pilot, err);
  if (st != CORE_OK)
    return st;
  if ((*pilot)->n_versions == 0)
    return data_register(*pilot, s, &already, err);
  const data_version *v = &(*pilot)->versions[(*pilot)->n_versions - 1];
  if (strcmp(v->sha256, s->sha256) != 0)
    return core_fail(err, CORE_ELOCK,
                     "%s: the pilot there ran another text of the sheet "
                     "(sha256 %.12s, now %.12s): plan from it as it is "
                     "(prereg plan %s --pilot %s), or move that folder away "
                     "to pilot this text",
                     (*pilot)->dir, v->sha256, s->sha256, s->path,
                     (*pilot)->dir);
  return CORE_OK;
}

/* The batch, with SIGINT and SIGTERM stopping it as they stop run. */
static core_status pilot_batch(data_experiment *pilot, const proto_sheet *s,
                               run_plan *plan, FILE *out, core_err *err) {
  struct sigaction sa, old_int, old_term;
  run_progress pr = {on_progress, out, NULL, NULL};
  run_batch_result res;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  run_cancel_arm();
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  core_status st = run_batch(pilot, s, plan, 1, &pr, &res, err);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  run_cancel_disarm();
  if (st == CORE_OK)
    fprintf(out,
            "pilot batch %s: %zu runs, %zu valid, %zu invalid, in %s (a "
            "pilot: it informs prereg plan and never counts for the plan's "
            "runs, the analysis or the verdicts)\n",
            res.batch, res.recorded, res.valid, res.invalid, pilot->dir);
  return st;
}

/* The rounds, once the folders are open and locked. */
static core_status pilot_rounds(data_experiment *exp, data_experiment *pilot,
                                proto_sheet *s, long runs, FILE *out,
                                core_err *err) {
  run_plan plan;
  data_rowset rows;
  run_progress pr = {on_progress, out, NULL, NULL};
  core_status st;
  memset(&plan, 0, sizeof plan);
  memset(&rows, 0, sizeof rows);
  /* The pilot's plan: every runnable workload at `runs` rounds (in memory
   * only: the sheet's text and digest are the sheet's). */
  for (size_t w = 0; w < s->n_workloads; w++)
    if (run_workload_runnable(&s->workloads[w]))
      s->workloads[w].runs = runs;
  if ((st = run_plan_build(s, NULL, 0, &plan, err)) == CORE_OK &&
      (st = run_plan_collect(pilot, s, 1, &pr, &plan, &rows, err)) ==
          CORE_OK) {
    if (plan.planned == 0)
      st = core_fail(err, CORE_EUSAGE,
                     "%s: no workload prereg runs itself: a pilot of "
                     "imported data is a CSV (prereg plan --pilot takes "
                     "an experiment's folder or a bundle)",
                     s->path);
    else if (plan.collected == plan.planned)
      fprintf(out,
              "nothing to do: the pilot in %s has its %ld rounds per arm "
              "(--runs N for more)\n",
              pilot->dir, runs);
    else
      st = pilot_batch(pilot, s, &plan, out, err);
  }
  /* Frozen batches are listed in DATA/ID's MANIFEST, also after an
   * interruption (what was collected is frozen). */
  core_err cerr = {0};
  core_status cst = data_pilot_cover(exp, pilot, &cerr);
  if (st == CORE_OK && cst != CORE_OK) {
    *err = cerr;
    st = cst;
  }
  run_plan_free(&plan);
  data_rowset_free(&rows);
  return st;
}

core_status cli_cmd_pilot(const cli_opts *opts, FILE *out, core_err *err) {
  const char *data_dir = opts->data_dir ? opts->data_dir : "data";
  data_experiment *exp = NULL, *pilot = NULL;
  proto_sheet *s = NULL;
  long runs;
  core_status st;
  if ((st = parse_runs(opts, &runs, err)) != CORE_OK)
    return st;
  run_helper_start();
  run_become_subreaper();
  if (!(s = proto_sheet_load(opts->args[0], err))) {
    st = err->status != CORE_OK ? err->status : CORE_EPROTOCOL;
  } else if (s->hosts.declared) {
    st = core_fail(err, CORE_EUSAGE,
                   "%s: a sheet with hosts runs on its hosts; a pilot runs "
                   "here only: pilot a copy of the sheet without hosts",
                   s->path);
  } else if ((st = cli_check_data_dir(opts, s, err)) == CORE_OK &&
             (st = data_experiment_open(data_dir, s, &exp, err)) == CORE_OK &&
             (exp->n_versions == 0 ||
              (st = data_check_lock(exp, s, err)) == CORE_OK) &&
             (st = data_experiment_lock(exp, err)) == CORE_OK &&
             (st = open_pilot(exp, s, &pilot, err)) == CORE_OK) {
    st = pilot_rounds(exp, pilot, s, runs, out, err);
  }
  data_experiment_free(pilot);
  data_experiment_free(exp);
  proto_sheet_free(s);
  run_kill_all_children();
  run_helper_stop();
  return st;
}

void cli_pilot_status(const data_experiment *exp, FILE *out) {
  long runs, valid;
  core_err err = {0};
  if (data_pilot_count(exp, &runs, &valid, &err) != CORE_OK)
    fprintf(out, "pilot: %s\n", err.msg);
  else if (runs >= 0)
    fprintf(out,
            "pilot: %ld runs (%ld valid) in %s/" DATA_PILOT_DIR
            ", a pilot: never counted for the plan's runs, the analysis "
            "or the verdicts\n",
            runs, valid, exp->dir);
}
