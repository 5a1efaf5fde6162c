/* stubs.c: commands not built yet say so plainly (temporary).
 * SPDX-License-Identifier: MIT
 */
#include "core/cmd.h"

#define NOT_YET(fn, name)                                                  \
  core_status fn(const cli_opts *opts, FILE *out, core_err *err) {         \
    (void)opts;                                                            \
    (void)out;                                                             \
    return core_fail(err, CORE_ERUN, "'%s' is not implemented yet", name); \
  }
NOT_YET(cmd_new, "new")
NOT_YET(cmd_check, "check")
NOT_YET(cmd_register, "register")
NOT_YET(cmd_amend, "amend")
NOT_YET(cmd_status, "status")
NOT_YET(cmd_verify, "verify")
NOT_YET(cmd_run, "run")
NOT_YET(cmd_import, "import")
NOT_YET(cmd_analyze, "analyze")
NOT_YET(cmd_report, "report")
NOT_YET(cmd_publish, "publish")
