/* cmd.h: the commands app_run dispatches to (private to core/).
 * SPDX-License-Identifier: MIT
 *
 * Each takes the parsed options, writes results to out and fills err on
 * failure; none prints to stderr (main does).
 */
#ifndef PREREG_CMD_H
#define PREREG_CMD_H

#include "core/core.h"

typedef core_status (*cmd_fn)(const cli_opts *opts, FILE *out, core_err *err);

core_status cmd_new(const cli_opts *opts, FILE *out, core_err *err);
core_status cmd_check(const cli_opts *opts, FILE *out, core_err *err);
core_status cmd_register(const cli_opts *opts, FILE *out, core_err *err);
core_status cmd_amend(const cli_opts *opts, FILE *out, core_err *err);
core_status cmd_status(const cli_opts *opts, FILE *out, core_err *err);
core_status cmd_verify(const cli_opts *opts, FILE *out, core_err *err);
core_status cmd_run(const cli_opts *opts, FILE *out, core_err *err);
core_status cmd_import(const cli_opts *opts, FILE *out, core_err *err);
core_status cmd_analyze(const cli_opts *opts, FILE *out, core_err *err);
core_status cmd_report(const cli_opts *opts, FILE *out, core_err *err);
core_status cmd_publish(const cli_opts *opts, FILE *out, core_err *err);

#endif
