/* cli_cmd_publish.c: `prereg publish SHEET` (one verifiable bundle), and the
 * bundle side of verify, analyze and report.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"

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
  report_dir = core_path_join(exp->dir, "report");
  if (!path || !report_dir) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  if ((st = data_bundle_write(exp->dir, sheet, path, sha, err)) != CORE_OK)
    goto cleanup;
  /* Read back what was written, as a reader would: a bundle that does not
   * verify is never handed out silently. */
  if ((st = data_bundle_verify(path, NULL, err)) != CORE_OK) {
    core_err_prefix(err, "the bundle just written does not verify: ");
    goto cleanup;
  }
  fprintf(out, "published %s\n  bundle  %s\n  sha256  %s\n", exp->id, path,
          sha);
  if (!core_is_dir(report_dir))
    fprintf(out,
            "  note: no report in %s, so the bundle has none "
            "(run prereg report %s, then publish again)\n",
            report_dir, sheet_path);
  fprintf(out, "  readers check it with: prereg verify %s\n", path);

cleanup:
  core_buf_free(&report);
  core_free(path);
  core_free(report_dir);
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
