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

/* {==== Bundles (core/cmd_publish.c, issue 8) ==== */

/** `prereg verify BUNDLE`: cmd_verify calls it when data_is_bundle(
 * opts->args[0]). Writes the report (problems or the ok summary) to out. */
core_status cmd_verify_bundle(const cli_opts *opts, FILE *out, core_err *err);

/** For commands taking SHEET|BUNDLE: copies opts into *resolved and, when
 * args[0] is a bundle, verifies and extracts it, pointing args[0] at its
 * newest sheet version and data_dir at the extracted data folder (both
 * valid until exit, when the copy is removed). `report` on a bundle needs
 * --out (CORE_EUSAGE). Use as: cli_opts r; if ((st = cmd_resolve_input(
 * opts, &r, err)) != CORE_OK) return st; opts = &r; */
core_status cmd_resolve_input(const cli_opts *opts, cli_opts *resolved,
                              core_err *err);

/* }==== */

#endif
