/* cli_cmd_publish.c: `prereg publish SHEET` (one verifiable bundle), and the
 * bundle side of verify, analyze and report.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "bundles/bundles.h"
#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"
#include "reports/report.h"

/* A fresh report of the data, in a new temporary folder: what the bundle
 * holds, rather than DATA/ID/report/, which may have been rendered from
 * fewer data. OUT: *dir (core_free; remove it with core_remove_tree). */
static core_status fresh_report(const cli_opts *opts, char **dir,
                                core_err *err) {
  const char *tmp = getenv("TMPDIR");
  const char *data = opts->data_dir ? opts->data_dir : "data";
  char *d =
      core_asprintf("%s/prereg-publish-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  core_status st;
  *dir = NULL;
  if (!d)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (!mkdtemp(d)) {
    st = core_fail(err, CORE_EIO, "%s: cannot create a temporary folder", d);
    core_free(d);
    return st;
  }
  *dir = d;
  return report_render_to(opts->args[0], data, d, err);
}

/* What a reader's verify does: the files, then the report against the
 * data. */
/* A replication's bundle carries the original's data: verified as a
 * folder of its own, as verify of the replication's folder does. */
static core_status verify_bundled_original(const char *path, FILE *out,
                                           core_err *err) {
  const char *sheet_path, *data_dir;
  proto_sheet *s;
  core_status st =
      data_resolve_input(path, NULL, &sheet_path, &data_dir, NULL, err);
  if (st != CORE_OK)
    return st;
  if (!(s = proto_sheet_load(sheet_path, err)))
    return err->status ? err->status : CORE_EPROTOCOL;
  if (s->replicates) {
    st = cli_verify_original(s, data_dir, out, err);
  }
  proto_sheet_free(s);
  return st;
}

/* A report that verify could not compare whole is named on the status
 * line, where a reader looks first: "status: REPORT NOT VERIFIED, ...".
 * lines is data_bundle_verify's output. */
static void mark_report_unverified(core_buf *lines, const char *path) {
  core_buf b;
  char *status = core_asprintf("%s: status: ", path);
  const char *at = status && lines->data ? strstr(lines->data, status) : NULL;
  size_t head;
  if (!at) {
    core_free(status);
    return;
  }
  head = (size_t)(at - lines->data) + strlen(status);
  core_buf_init(&b);
  core_buf_append(&b, lines->data, head);
  core_buf_puts(&b, "REPORT NOT VERIFIED (another edition of prereg "
                    "rendered it: only its analysis is checked, below), ");
  core_buf_puts(&b, lines->data + head);
  core_buf_free(lines);
  *lines = b;
  core_free(status);
}

/* The bundle's report against its data: report_verify_bundle over the
 * copy bundles/ extracted. */
static core_status verify_report(const char *path, core_buf *report,
                                 int *whole, core_err *err) {
  const char *sheet_path, *data_dir;
  core_status st;
  *whole = 1;
  st = data_resolve_input(path, NULL, &sheet_path, &data_dir, NULL, err);
  if (st == CORE_OK)
    st = report_verify_bundle(path, sheet_path, data_dir, report, whole, err);
  return st;
}

core_status cli_verify_bundle(const char *path, const char *tsa_ca,
                              const char *allowed, FILE *out, core_err *err) {
  core_buf files, report;
  core_err report_err = {0};
  core_status st, report_st = CORE_OK;
  char *proofs = NULL;
  size_t proofs_len = 0;
  int whole = 1, before_plan = 0;
  FILE *mem = NULL;
  core_buf_init(&files);
  core_buf_init(&report);
  st = data_bundle_verify(path, &files, err);
  /* The report is compared before anything is printed, so that the
   * status line can say what was not compared. */
  if (st == CORE_OK)
    report_st = verify_report(path, &report, &whole, &report_err);
  if (!whole)
    mark_report_unverified(&files, path);
  /* Before the report: a row edited with the digests made anew is named
   * by the signature of the MANIFEST it changed. The proofs are read
   * before the status line is printed: it says a data stamp earlier than
   * the plan's. */
  if (st == CORE_OK && !(mem = open_memstream(&proofs, &proofs_len)))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK)
    st = cli_verify_bundle_proofs(path, tsa_ca, allowed, mem, &before_plan,
                                  err);
  if (mem)
    fclose(mem);
  cli_print_verify_report(files.data, before_plan, out);
  if (proofs)
    fputs(proofs, out);
  free(proofs); /* open_memstream's */
  if (st == CORE_OK && report.data)
    fputs(report.data, out);
  if (st == CORE_OK && report_st != CORE_OK) {
    *err = report_err;
    st = report_st;
  }
  core_buf_free(&files);
  core_buf_free(&report);
  if (st == CORE_OK)
    st = verify_bundled_original(path, out, err);
  return st;
}

/* Writes the bundle, then reads it back as a reader would: a bundle that
 * does not verify, or whose report is not its data's, is never handed
 * out. key (--sign, or NULL): the MANIFEST's signature goes in as
 * manifest.sig. */
static core_status write_checked(const char *exp_dir, const proto_sheet *sheet,
                                 const char *report_dir, const char *path,
                                 const char *key, char sha[CORE_SHA256_HEX],
                                 core_err *err) {
  core_buf report;
  char *man = core_path_join(exp_dir, "MANIFEST"), *text = NULL, *sig = NULL;
  size_t len = 0, sig_len = 0;
  int whole = 0;
  core_status st = man ? CORE_OK : core_fail(err, CORE_ENOMEM, "oom");
  if (st == CORE_OK && key &&
      (st = core_read_file(man, &text, &len, err)) == CORE_OK)
    st = cli_ssh_sign(key, text, len, &sig, &sig_len, err);
  if (st == CORE_OK)
    st = data_bundle_write_signed(exp_dir, sheet, report_dir, path, sig,
                                  sig_len, sha, err);
  core_free(man);
  core_free(text);
  core_free(sig);
  if (st != CORE_OK)
    return st;
  core_buf_init(&report);
  if ((st = data_bundle_verify(path, NULL, err)) != CORE_OK ||
      (st = verify_report(path, &report, &whole, err)) != CORE_OK)
    core_err_prefix(err, "the bundle just written does not verify: ");
  else if (!whole)
    st = core_fail(err, CORE_EVERIFY,
                   "the bundle just written does not verify: its report "
                   "was not compared whole with what its data give");
  core_buf_free(&report);
  return st;
}

core_status cli_cmd_publish(const cli_opts *opts, FILE *out, core_err *err) {
  const char *sheet_path = opts->args[0];
  proto_sheet *sheet = NULL;
  data_experiment *exp = NULL;
  core_buf report;
  char *path = NULL, *report_dir = NULL;
  char sha[CORE_SHA256_HEX];
  core_status st;

  core_buf_init(&report);
  if (data_is_bundle(sheet_path))
    return core_fail(err, CORE_EUSAGE,
                     "%s: already a bundle; publish takes the sheet "
                     "(prereg verify checks a bundle)",
                     sheet_path);
  if (opts->out && !data_is_bundle(opts->out))
    return core_fail(err, CORE_EUSAGE,
                     "--out %s: a bundle's name must end in .tar.gz, so "
                     "that verify, analyze and report recognise it",
                     opts->out);
  if (!(sheet = proto_sheet_load(sheet_path, err)))
    return err->status ? err->status : CORE_EPROTOCOL;
  if ((st = cli_check_data_dir(opts, sheet, err)) != CORE_OK ||
      (st = data_experiment_open(opts->data_dir, sheet, &exp, err)) != CORE_OK)
    goto cleanup;
  if (exp->n_versions == 0) {
    st = core_fail(err, CORE_ELOCK,
                   "%s: not registered, so there is nothing to publish: "
                   "run prereg register %s first",
                   sheet_path, sheet_path);
    goto cleanup;
  }
  /* The bundle holds the frozen versions, not this file: a sheet edited
   * since its last version would be published without its edits. */
  if ((st = data_check_lock(exp, sheet, err)) != CORE_OK)
    goto cleanup;
  /* Only data that verify go out: a reader must get what the manifest
   * vouches for. */
  if ((st = data_verify(exp, &report, err)) != CORE_OK) {
    if (report.data)
      fputs(report.data, out);
    if (st == CORE_EVERIFY)
      core_fail(err, CORE_EVERIFY,
                "%s: the data do not verify (above), so nothing was "
                "published",
                exp->dir);
    goto cleanup;
  }
  path = opts->out ? core_strdup(opts->out)
                   : core_asprintf("%s/publish/%s.tar.gz", exp->dir, exp->id);
  if (!path) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  if ((st = fresh_report(opts, &report_dir, err)) != CORE_OK ||
      (st = write_checked(exp->dir, sheet, report_dir, path, opts->sign, sha,
                          err)) != CORE_OK)
    goto cleanup;
  fprintf(out,
          "published %s\n  bundle  %s\n  sha256  %s\n  report  rendered "
          "from the data it bundles\n",
          exp->id, path, sha);
  if (opts->sign)
    fprintf(out, "  signed  its MANIFEST, with %s (manifest.sig)\n",
            opts->sign);
  fprintf(out, "  readers check it with: prereg verify %s\n", path);

cleanup:
  if (report_dir) {
    core_remove_tree(report_dir, NULL);
    core_free(report_dir);
  }
  core_buf_free(&report);
  core_free(path);
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}

core_status cli_resolve_input(const cli_opts *opts, cli_opts *resolved,
                              core_err *err) {
  *resolved = *opts;
  if (!data_is_bundle(opts->args[0]))
    return CORE_OK;
  /* The report's default folder would be inside the temporary copy,
   * which is removed at exit. */
  if (opts->command && strcmp(opts->command, "report") == 0 && !opts->out)
    return core_fail(err, CORE_EUSAGE,
                     "%s: a bundle's report needs --out DIR (the bundle "
                     "itself is never written to)",
                     opts->args[0]);
  resolved->data_given = 1; /* the bundle's own data */
  return data_resolve_input(opts->args[0], opts->data_dir, &resolved->args[0],
                            &resolved->data_dir, NULL, err);
}
