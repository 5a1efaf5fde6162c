/* cmd_export.c: `prereg export SHEET [--format csv|json] [--all]`: the
 * rows as the analysis counts them, to standard output.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"

core_status cli_cmd_export(const cli_opts *opts, FILE *out, core_err *err) {
  const char *fmt = opts->format ? opts->format : "csv";
  proto_sheet *sheet = NULL;
  data_experiment *exp = NULL;
  core_buf text;
  core_status st;
  if (strcmp(fmt, "csv") != 0 && strcmp(fmt, "json") != 0)
    return core_fail(err, CORE_EUSAGE,
                     "--format %s: the formats are csv and json", fmt);
  if ((st = cli_refuse_folder(opts, err)) != CORE_OK)
    return st;
  if (!(sheet = proto_sheet_load(opts->args[0], err)))
    return err->status ? err->status : CORE_EPROTOCOL;
  core_buf_init(&text);
  if ((st = cli_check_data_dir(opts, sheet, err)) != CORE_OK ||
      (st = data_experiment_open(opts->data_dir, sheet, &exp, err)) != CORE_OK)
    goto done;
  if (exp->n_versions == 0) {
    st = core_fail(err, CORE_ELOCK,
                   "%s: not registered, so there is nothing to export; "
                   "run prereg register %s, then prereg run or import",
                   opts->args[0], opts->args[0]);
    goto done;
  }
  /* The rows as the registered rule counts them: the sheet must be its
   * newest version, as for analyze. */
  if ((st = data_check_lock(exp, sheet, err)) != CORE_OK ||
      (st = data_export(exp, sheet, strcmp(fmt, "json") == 0, opts->all, &text,
                        err)) != CORE_OK)
    goto done;
  if (text.len && fwrite(text.data, 1, text.len, out) != text.len)
    st = core_fail(err, CORE_EIO, "export: cannot write the output");
done:
  core_buf_free(&text);
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}
