/* cli_cmd_import.c: `prereg import SHEET FILE`: measurements taken elsewhere.
 * SPDX-License-Identifier: MIT
 */
#include "cli/cli_internal.h"
#include "data/data.h"
#include "imports/imports.h"
#include "protocols/proto.h"

core_status cli_cmd_import(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet = proto_sheet_load(opts->args[0], err);
  data_experiment *exp = NULL;
  size_t n = 0;
  core_status st;
  if (!sheet)
    return err->status ? err->status : CORE_EPROTOCOL;
  st = cli_check_data_dir(opts, sheet, err);
  if (st == CORE_OK)
    st = data_experiment_open(opts->data_dir, sheet, &exp, err);
  data_import_opts io = {.only = opts->only,
                         .arm_from = opts->arm_from,
                         .n_arm_from = (size_t)opts->n_arm_from,
                         .arm_map = opts->arm_map,
                         .where = opts->where,
                         .n_where = (size_t)opts->n_where,
                         .ignore_unmapped = opts->ignore_unmapped};
  data_import_result res = {0};
  if (st == CORE_OK)
    st = data_import_with(exp, sheet, opts->args[1], &io, &res, err);
  n = res.imported;
  if (st == CORE_OK) {
    const data_version *v = &exp->versions[exp->n_versions - 1];
    fprintf(out, "imported %zu rows from %s into %s (sheet v%d)\n", n,
            opts->args[1], exp->dir, v->number);
    if (res.n_left_out)
      fprintf(out, "left out (--ignore-unmapped: no arm maps them): %zu\n",
              res.n_left_out);
    for (size_t i = 0; i < res.n_left_out; i++)
      fprintf(out, "  %s\n", res.left_out[i]);
  }
  data_import_result_free(&res);
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}
