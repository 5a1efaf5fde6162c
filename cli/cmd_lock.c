/* cmd_lock.c: the lock's commands: register, amend, status, verify.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"

/* Loads the sheet and opens its experiment folder; on failure both are
 * NULL and err is filled. */
static core_status open_both(const cli_opts *opts, proto_sheet **sheet,
                             data_experiment **exp, core_err *err) {
  core_status st;
  *exp = NULL;
  if (!(*sheet = proto_sheet_load(opts->args[0], err)))
    return err->status ? err->status : CORE_EPROTOCOL;
  st = cli_check_data_dir(opts, *sheet, err);
  if (st == CORE_OK)
    st = data_experiment_open(opts->data_dir, *sheet, exp, err);
  if (st != CORE_OK) {
    proto_sheet_free(*sheet);
    *sheet = NULL;
  }
  return st;
}

core_status cli_cmd_register(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet;
  data_experiment *exp;
  int already = 0;
  core_status st = open_both(opts, &sheet, &exp, err);
  if (st != CORE_OK)
    return st;
  st = data_register(exp, sheet, &already, err);
  if (st == CORE_OK) {
    const data_version *v = &exp->versions[exp->n_versions - 1];
    if (already)
      fprintf(out, "%s: already registered as v%d (filed %s)\n", exp->id,
              v->number, v->filed_at);
    else
      fprintf(out, "registered %s\n", exp->id);
    fprintf(out, "  sha256  %s\n  frozen  %s/%s\n", v->sha256, exp->dir,
            v->path);
  }
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}

core_status cli_cmd_amend(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet;
  data_experiment *exp;
  core_status st = open_both(opts, &sheet, &exp, err);
  if (st != CORE_OK)
    return st;
  st = data_amend(exp, sheet, err);
  if (st == CORE_OK) {
    const data_version *v = &exp->versions[exp->n_versions - 1];
    char *path = core_asprintf("%s/versions/v%d.diff", exp->dir, v->number);
    char *diff = NULL;
    size_t len = 0;
    fprintf(out, "amended %s: v%d (%s: %s)\n", exp->id, v->number,
            v->date ? v->date : "", v->why ? v->why : "");
    fprintf(out, "  sha256  %s\n  frozen  %s/%s\n", v->sha256, exp->dir,
            v->path);
    if (path && core_read_file(path, &diff, &len, err) == CORE_OK)
      fwrite(diff, 1, len, out);
    core_free(diff);
    core_free(path);
  }
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}

/* {==== status ==== */

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

static const data_tally *find_tally(const data_tally *t, size_t n,
                                    const char *w, const char *a) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(t[i].workload, w) == 0 && strcmp(t[i].arm, a) == 0)
      return &t[i];
  return NULL;
}

static void print_runs(const proto_sheet *s, const data_tally *t, size_t n,
                       FILE *out) {
  int ww = 8, aw = 3;
  for (size_t i = 0; i < s->n_workloads; i++)
    if ((int)strlen(s->workloads[i].name) > ww)
      ww = (int)strlen(s->workloads[i].name);
  for (size_t i = 0; i < s->n_arms; i++)
    if ((int)strlen(s->arms[i].name) > aw)
      aw = (int)strlen(s->arms[i].name);
  fprintf(out, "runs:\n  %-*s  %-*s  %7s  %5s  %7s  %10s\n", ww, "workload",
          aw, "arm", "planned", "valid", "invalid", "superseded");
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *w = &s->workloads[i];
    for (size_t j = 0; j < s->n_arms; j++) {
      const data_tally *c = find_tally(t, n, w->name, s->arms[j].name);
      char planned[32];
      /* Across hosts every host runs the whole plan. */
      long hosts = !s->hosts.declared ? 1
                   : s->hosts.n_nodes ? (long)s->hosts.n_nodes
                                      : s->hosts.count;
      if (w->runs > 0)
        snprintf(planned, sizeof planned, "%ld", w->runs * hosts);
      else
        snprintf(planned, sizeof planned, "import");
      fprintf(out, "  %-*s  %-*s  %7s  %5ld  %7ld  %10ld\n", ww, w->name, aw,
              s->arms[j].name, planned, c ? c->valid : 0, c ? c->invalid : 0,
              c ? c->superseded : 0);
    }
  }
  /* Rows of workloads or arms the current sheet no longer declares. */
  for (size_t i = 0; i < n; i++)
    if (proto_workload_index(s, t[i].workload) < 0 ||
        proto_arm_index(s, t[i].arm) < 0)
      fprintf(out, "  %-*s  %-*s  %7s  %5ld  %7ld  %10ld\n", ww, t[i].workload,
              aw, t[i].arm, "-", t[i].valid, t[i].invalid, t[i].superseded);
}

core_status cli_cmd_status(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet;
  data_experiment *exp;
  data_tally *t = NULL;
  size_t n = 0, n_open = 0;
  char **open_batches = NULL;
  core_err lock;
  core_status st = open_both(opts, &sheet, &exp, err);
  if (st != CORE_OK)
    return st;
  fprintf(out, "%s: %s\n", exp->id, sheet->title ? sheet->title : "");
  if (exp->n_versions == 0) {
    fprintf(out, "not registered (%s); run prereg register %s\n", exp->dir,
            sheet->path);
    goto cleanup;
  }
  print_chain(exp, out);
  memset(&lock, 0, sizeof lock);
  if (data_check_lock(exp, sheet, &lock) == CORE_OK)
    fprintf(out, "sheet: %s matches v%zu\n", sheet->path, exp->n_versions - 1);
  else
    fprintf(out,
            "sheet: %s differs from v%zu; append an amendment and run "
            "prereg amend %s\n",
            sheet->path, exp->n_versions - 1, sheet->path);
  if ((st = data_tally_runs(exp, &t, &n, err)) != CORE_OK)
    goto cleanup;
  print_runs(sheet, t, n, out);
  if ((st = data_unfinished_batches(exp, &open_batches, &n_open, err)) !=
      CORE_OK)
    goto cleanup;
  for (size_t i = 0; i < n_open; i++)
    fprintf(out, "unfinished batch %s: run prereg run %s --resume\n",
            open_batches[i], sheet->path);
cleanup:
  for (size_t i = 0; i < n_open; i++)
    core_free(open_batches[i]);
  core_free(open_batches);
  data_tally_free(t, n);
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}

/* }==== */

/* A published bundle (.tar.gz) is checked as it is, without a sheet or
 * a data folder (data/bundle.c). */
static core_status verify_bundle(const char *path, FILE *out, core_err *err) {
  core_buf report;
  core_status st;
  core_buf_init(&report);
  st = data_bundle_verify(path, &report, err);
  if (report.data)
    fputs(report.data, out);
  core_buf_free(&report);
  return st;
}

core_status cli_cmd_verify(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet;
  data_experiment *exp;
  core_buf report;
  core_err lock;
  core_status st;
  if (data_is_bundle(opts->args[0]))
    return verify_bundle(opts->args[0], out, err);
  if ((st = cli_refuse_folder(opts, err)) != CORE_OK)
    return st;
  st = open_both(opts, &sheet, &exp, err);
  if (st == CORE_EINPUT) { /* a damaged chain is what verify reports */
    err->status = CORE_EVERIFY;
    return CORE_EVERIFY;
  }
  if (st != CORE_OK)
    return st;
  core_buf_init(&report);
  st = data_verify(exp, &report, err);
  if (report.data)
    fputs(report.data, out);
  memset(&lock, 0, sizeof lock);
  if (st == CORE_OK && data_check_lock(exp, sheet, &lock) != CORE_OK)
    fprintf(out, "note: %s differs from v%zu (not yet amended)\n", sheet->path,
            exp->n_versions - 1);
  core_buf_free(&report);
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}
