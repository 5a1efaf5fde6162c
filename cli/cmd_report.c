/* cli_cmd_report.c: `prereg report SHEET [--out DIR] [--force]`: report.md,
 * report.html, provenance.md, the plots and report.xlsx from the frozen
 * data.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "cli/cli_internal.h"
#include "protocols/proto.h"
#include "reports/report.h"

core_status cli_cmd_report(const cli_opts *opts, FILE *out, core_err *err) {
  const char *data = opts->data_dir ? opts->data_dir : "data";
  proto_sheet *sheet;
  report_input *in = NULL;
  report_doc doc;
  char *dir = NULL, *exp_dir = NULL;
  core_status st;
  cli_opts resolved;
  if (opts->n_args != 1)
    return core_fail(err, CORE_EUSAGE,
                     "report takes one sheet: prereg report SHEET [--out "
                     "DIR] [--force]");
  /* A published bundle stands in for the sheet and its data folder. */
  if ((st = cli_refuse_folder(opts, err)) != CORE_OK ||
      (st = cli_resolve_input(opts, &resolved, err)) != CORE_OK)
    return st;
  opts = &resolved;
  data = opts->data_dir ? opts->data_dir : "data";
  sheet = proto_sheet_load(opts->args[0], err);
  if (!sheet)
    return err->status ? err->status : CORE_EPROTOCOL;
  if ((st = cli_check_data_dir(opts, sheet, err)) != CORE_OK) {
    proto_sheet_free(sheet);
    return st;
  }
  exp_dir = core_path_join(data, sheet->id);
  dir = opts->out ? core_strdup(opts->out)
                  : (exp_dir ? core_path_join(exp_dir, "report") : NULL);
  if (!exp_dir || !dir) {
    proto_sheet_free(sheet);
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto done;
  }
  /* The output folder is checked before the analysis, so that a long
   * bootstrap is not lost to a folder that cannot be written; the default
   * one is only created inside an existing experiment. */
  if (opts->out || core_is_dir(exp_dir)) {
    st = report_check_dir(dir, err);
    if (st != CORE_OK) {
      proto_sheet_free(sheet);
      goto done;
    }
  }
  st = report_gather(sheet, opts->args[0], data, opts->force, &in, err);
  if (st != CORE_OK)
    goto done;
  st = report_render(in, &doc, err);
  if (st != CORE_OK)
    goto done;
  st = report_write_all(in, &doc, dir, err);
  if (st == CORE_OK) {
    fprintf(out,
            "%s/report.md\n%s/report.html\n%s/report.xlsx\n"
            "%s/provenance.md\n",
            dir, dir, dir, dir);
    for (size_t i = 0; i < doc.n_plots; i++)
      fprintf(out, "%s/%s\n", dir, doc.plots[i].file);
    if (in->unverified)
      fprintf(out, "UNVERIFIED: the data did not verify; every page says "
                   "so\n");
  }
  report_doc_free(&doc);
done:
  report_input_free(in);
  core_free(dir);
  core_free(exp_dir);
  return st;
}
