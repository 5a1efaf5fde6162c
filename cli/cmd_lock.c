/* cmd_lock.c: the lock's commands: register, amend, status, verify.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "bundles/bundles.h"
#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"
#include "stamps/stamps.h"

core_status cli_cmd_register(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet;
  data_experiment *exp;
  int already = 0;
  core_status st = cli_open_both(opts, &sheet, &exp, err);
  if (st != CORE_OK)
    return st;
  if ((st = cli_check_looks_level(sheet, err)) != CORE_OK) {
    data_experiment_free(exp);
    proto_sheet_free(sheet);
    return st;
  }
  data_stamper stamper;
  if ((st = cli_stamper(opts, &stamper, err)) == CORE_OK)
    st = data_register_stamped(exp, sheet, &stamper, &already, err);
  if (st == CORE_OK) {
    const data_version *v = &exp->versions[exp->n_versions - 1];
    if (already)
      fprintf(out, "%s: already registered as v%d (filed %s)\n", exp->id,
              v->number, v->filed_at);
    else
      fprintf(out, "registered %s\n", exp->id);
    fprintf(out, "  sha256  %s\n  frozen  %s/%s\n", v->sha256, exp->dir,
            v->path);
    if (!already)
      cli_print_stamp(&stamper, v->number, out);
    else if (stamper.fn && !data_stamp_has(exp, v->number))
      fprintf(out, "  not stamped: run prereg stamp %s --tsa %s\n",
              opts->args[0], opts->tsa);
  } else if (cli_stamper_failed(&stamper, err)) {
    core_err_prefix(err, "nothing registered: ");
  }
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}

/* The inputs the amendment records against the version before it. */
static void print_inputs_change(const data_version *was,
                                const data_version *now, FILE *out) {
  data_inputs cur = {now->inputs, now->n_inputs};
  core_buf b;
  core_buf_init(&b);
  if (data_inputs_diff(was->inputs, was->n_inputs, &cur, &b) > 0 && b.data)
    fprintf(out, "  inputs  (new digests recorded)\n%s", b.data);
  core_buf_free(&b);
}

core_status cli_cmd_amend(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet;
  data_experiment *exp;
  core_status st = cli_open_both(opts, &sheet, &exp, err);
  if (st != CORE_OK)
    return st;
  if ((st = cli_check_looks_level(sheet, err)) != CORE_OK) {
    data_experiment_free(exp);
    proto_sheet_free(sheet);
    return st;
  }
  data_stamper stamper;
  if ((st = cli_stamper(opts, &stamper, err)) == CORE_OK)
    st = data_amend_stamped(exp, sheet, &stamper, err);
  if (st != CORE_OK && cli_stamper_failed(&stamper, err))
    core_err_prefix(err, "nothing amended: ");
  if (st == CORE_OK) {
    const data_version *v = &exp->versions[exp->n_versions - 1];
    char *path = core_asprintf("%s/versions/v%d.diff", exp->dir, v->number);
    char *diff = NULL;
    size_t len = 0;
    fprintf(out, "amended %s: v%d (%s: %s)\n", exp->id, v->number,
            v->date ? v->date : "", v->why ? v->why : "");
    fprintf(out, "  sha256  %s\n  frozen  %s/%s\n", v->sha256, exp->dir,
            v->path);
    cli_print_stamp(&stamper, v->number, out);
    print_inputs_change(&exp->versions[exp->n_versions - 2], v, out);
    if (path && core_read_file(path, &diff, &len, err) == CORE_OK)
      fwrite(diff, 1, len, out);
    core_free(diff);
    core_free(path);
  }
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}

/* status */

/* 1 when the sheet's text is the newest version's (so that a lock that
 * refuses it refuses its inputs). */
static int same_text(const data_experiment *exp, const proto_sheet *sheet) {
  return exp->n_versions > 0 &&
         strcmp(exp->versions[exp->n_versions - 1].sha256, sheet->sha256) == 0;
}

static void print_chain(const data_experiment *exp, FILE *out) {
  fprintf(out, "versions:\n");
  for (size_t i = 0; i < exp->n_versions; i++) {
    const data_version *v = &exp->versions[i];
    fprintf(out, "  v%-3d %s  sha256 %.12s  ", v->number,
            v->filed_at ? v->filed_at : "?", v->sha256);
    if (v->number == 0)
      fprintf(out, "registered\n");
    else
      fprintf(out, "%s: %s\n", v->date ? v->date : "", v->why ? v->why : "");
    if (v->n_supersedes > 0) {
      fprintf(out, "       supersedes earlier rows of:");
      for (size_t j = 0; j < v->n_supersedes; j++)
        fprintf(out, " %s", v->supersedes[j]);
      fprintf(out, "\n");
    }
  }
}

static void print_tally(const data_tally *t, const char *planned, int ww,
                        int aw, FILE *out) {
  fprintf(out, "  %-*s  %-*s  %7s  %5ld  %7ld  %10ld  %6ld\n", ww, t->workload,
          aw, t->arm, planned, t->counted, t->invalid, t->superseded,
          t->beyond);
}

/* The runs per workload and arm, as the counting rule (data/count.c)
 * has them under the plan, then the status line. */
static void print_runs(const data_counted *c, FILE *out) {
  int ww = 8, aw = 3;
  char line[256];
  for (size_t i = 0; i < c->n_tallies; i++) {
    if ((int)strlen(c->tallies[i].workload) > ww)
      ww = (int)strlen(c->tallies[i].workload);
    if ((int)strlen(c->tallies[i].arm) > aw)
      aw = (int)strlen(c->tallies[i].arm);
  }
  fprintf(out, "runs:\n  %-*s  %-*s  %7s  %5s  %7s  %10s  %6s\n", ww,
          "workload", aw, "arm", "planned", "valid", "invalid", "superseded",
          "beyond");
  for (size_t i = 0; i < c->n_tallies; i++) {
    const data_tally *t = &c->tallies[i];
    char planned[32];
    if (!t->in_sheet) /* a workload or arm the plan no longer declares */
      snprintf(planned, sizeof planned, "-");
    else if (t->planned > 0)
      snprintf(planned, sizeof planned, "%ld", t->planned);
    else
      snprintf(planned, sizeof planned, "import");
    print_tally(t, planned, ww, aw, out);
  }
  /* A plan with hosts: each host's runs and rounds against its plan. */
  if (c->n_hosts)
    fprintf(out, "hosts:\n");
  for (size_t i = 0; i < c->n_hosts; i++) {
    const data_host_tally *h = &c->hosts[i];
    fprintf(out, "  %-*s  runs %ld/%ld  rounds %ld/%ld%s\n", ww, h->name,
            h->status.collected, h->status.planned, h->rounds_done,
            h->rounds_planned, h->status.incomplete ? "  incomplete" : "");
  }
  data_status_line(&c->status, line, sizeof line);
  fprintf(out, "status: %s\n", line);
  /* A workload stopped early at a look is complete: each says where. */
  for (const char *p = c->status.stops; c->status.stopped && *p;) {
    size_t k = strcspn(p, ";");
    fprintf(out, "  %.*s\n", (int)k, p);
    p += k;
    p += strspn(p, "; ");
  }
}

/* The plan the counts are made under: the sheet when it is the newest
 * version, else the newest frozen version (the sheet's edits are not a
 * plan until amended). OUT: *owned the loaded version, or NULL. */
static const proto_sheet *plan_of(const data_experiment *exp,
                                  const proto_sheet *sheet,
                                  proto_sheet **owned) {
  core_err e;
  memset(&e, 0, sizeof e);
  *owned = NULL;
  if (data_check_lock(exp, sheet, &e) == CORE_OK)
    return sheet;
  *owned = data_load_version(exp, (int)exp->n_versions - 1, &e);
  return *owned ? *owned : sheet;
}

static core_status count_experiment(const data_experiment *exp,
                                    const proto_sheet *plan, data_counted *c,
                                    core_err *err) {
  data_rowset rows;
  core_status st = data_load_rows(exp, &rows, err);
  memset(c, 0, sizeof *c);
  if (st != CORE_OK)
    return st;
  st = data_count_rows(plan, exp, exp->versions[exp->n_versions - 1].number,
                       &rows, c, err);
  data_rowset_free(&rows);
  return st;
}

core_status cli_cmd_status(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet, *owned = NULL;
  data_experiment *exp;
  data_counted c;
  size_t n_open = 0;
  char **open_batches = NULL;
  core_err lock;
  core_status st = cli_open_both(opts, &sheet, &exp, err);
  memset(&c, 0, sizeof c);
  if (st != CORE_OK)
    return st;
  fprintf(out, "%s: %s\n", exp->id, sheet->title ? sheet->title : "");
  if (exp->n_versions == 0) {
    fprintf(out, "not registered (%s); run prereg register %s\n", exp->dir,
            sheet->path);
    cli_pilot_status(exp, out);
    goto cleanup;
  }
  print_chain(exp, out);
  memset(&lock, 0, sizeof lock);
  if (data_check_lock(exp, sheet, &lock) == CORE_OK)
    fprintf(out, "sheet: %s matches v%zu\n", sheet->path, exp->n_versions - 1);
  else if (same_text(exp, sheet)) /* its inputs differ, said in full */
    fprintf(out, "sheet: %s\n", lock.msg);
  else
    fprintf(out,
            "sheet: %s differs from v%zu; append an amendment and run "
            "prereg amend %s\n",
            sheet->path, exp->n_versions - 1, sheet->path);
  {
    const proto_sheet *plan = plan_of(exp, sheet, &owned);
    char why[600];
    int bad;
    if ((st = count_experiment(exp, plan, &c, err)) != CORE_OK)
      goto cleanup;
    /* What verify rejects is never counted without saying so. */
    if ((bad = cli_unverified(exp, why, sizeof why, err)) < 0) {
      st = err->status;
      goto cleanup;
    }
    c.status.unverified = bad;
    if (bad)
      fprintf(out,
              "UNVERIFIED: the data did not verify (%s); run prereg verify "
              "%s\n",
              why, sheet->path);
    print_runs(&c, out);
  }
  cli_pilot_status(exp, out);
  if ((st = data_unfinished_batches(exp, &open_batches, &n_open, err)) !=
      CORE_OK)
    goto cleanup;
  for (size_t i = 0; i < n_open; i++)
    fprintf(out, "unfinished batch %s: run prereg run %s --resume\n",
            open_batches[i], sheet->path);
cleanup:
  core_names_free(open_batches, n_open);
  data_counted_free(&c);
  proto_sheet_free(owned);
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}

core_status cli_cmd_verify(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet;
  data_experiment *exp;
  core_buf report;
  core_err lock;
  char *proofs = NULL;
  int before_plan = 0;
  core_status st;
  if (data_is_bundle(opts->args[0]))
    return cli_verify_bundle(opts->args[0], opts->tsa_ca,
                             opts->allowed_signers, out, err);
  if ((st = cli_refuse_folder(opts, err)) != CORE_OK)
    return st;
  st = cli_open_both(opts, &sheet, &exp, err);
  if (st == CORE_EINPUT) { /* a damaged chain is what verify reports */
    err->status = CORE_EVERIFY;
    return CORE_EVERIFY;
  }
  if (st != CORE_OK)
    return st;
  core_buf_init(&report);
  st = data_verify(exp, &report, err);
  if (st == CORE_OK)
    st = cli_verify_proofs(exp, opts->tsa_ca, opts->allowed_signers, 0,
                           &proofs, &before_plan, err);
  cli_print_verify_report(report.data, before_plan, out);
  if (proofs)
    fputs(proofs, out);
  free(proofs); /* open_memstream's */
  if (st == CORE_OK)
    st = cli_verify_original(sheet, opts->data_dir, out, err);
  memset(&lock, 0, sizeof lock);
  if (st == CORE_OK && data_check_lock(exp, sheet, &lock) != CORE_OK &&
      same_text(exp, sheet))
    fprintf(out, "note: %s\n", lock.msg);
  else if (st == CORE_OK && lock.status != CORE_OK)
    fprintf(out, "note: %s differs from v%zu (not yet amended)\n", sheet->path,
            exp->n_versions - 1);
  core_buf_free(&report);
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}
