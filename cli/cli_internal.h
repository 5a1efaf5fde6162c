/* cli_internal.h: the commands cli_run dispatches to (private to cli/).
 * SPDX-License-Identifier: MIT
 *
 * Each takes the parsed options, writes results to out and fills err on
 * failure; none prints a failure (main does).
 */
#ifndef PREREG_CLI_INTERNAL_H
#define PREREG_CLI_INTERNAL_H

#include "analysis/analysis.h"
#include "cli/cli.h"

typedef core_status (*cli_cmd_fn)(const cli_opts *opts, FILE *out,
                                  core_err *err);

core_status cli_cmd_new(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_replicate(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_check(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_register(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_amend(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_status(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_verify(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_run(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_import(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_analyze(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_report(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_publish(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_node_run(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_export(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_pilot(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_plan(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_host(const cli_opts *opts, FILE *out, core_err *err);
core_status cli_cmd_compare(const cli_opts *opts, FILE *out, core_err *err);

/** The usage text of `prereg compare` (options.c). */
extern const char cli_compare_usage[];

/** 1 when id is a usable experiment ID: [a-z0-9][a-z0-9-]*, at most 64
 * bytes (cmd_sheet.c). */
int cli_good_id(const char *id);
/** Writes b to a new file at path (O_EXCL: an existing file is never
 * replaced; CORE_EUSAGE naming it, with what to do in `instead`), synced,
 * removed again when the write fails (cmd_sheet.c). */
core_status cli_write_new(const char *path, const core_buf *b,
                          const char *instead, core_err *err);
/** Appends a Lua string literal for s to b: quotes, backslashes and
 * control bytes escaped, so that any text reads back as itself
 * (cmd_replicate.c). */
void cli_lua_quote(core_buf *b, const char *s);
core_status cli_cmd_stamp(const cli_opts *opts, FILE *out, core_err *err);

struct data_experiment;
/** The status line of exp's pilot, when it has one (cmd_pilot.c). */
void cli_pilot_status(const struct data_experiment *exp, FILE *out);

/** The width to fit a table to: $COLUMNS, else out's terminal, else 80. */
int cli_term_width(FILE *out);

/** Makes stdout and stderr streams whose every write is quoted by
 * core_buf_quote (newlines and tabs kept, backslashes as they are): no
 * raw control byte reaches either, whatever prints it (term.c). Called
 * once, first thing in main; when the streams cannot be made, the plain
 * ones stay. */
void cli_term_guard(void);
/** The file descriptor under f, also for the guarded stdout and stderr
 * (whose fileno is -1). */
int cli_term_fd(FILE *f);
/** Writes the control sequence ctl to the terminal on stderr as it is
 * (the progress line of run, only when stderr is a terminal), after
 * what stderr holds. */
void cli_term_raw(const char *ctl);

/** For commands taking SHEET|BUNDLE: copies opts into *resolved and, when
 * args[0] is a bundle, verifies and extracts it, pointing args[0] at its
 * newest sheet version and data_dir at the extracted data folder (both
 * valid until exit, when the copy is removed). `report` on a bundle needs
 * --out (CORE_EUSAGE). Use as: cli_opts r; if ((st =
 * cli_resolve_input(opts, &r, err)) != CORE_OK) return st; opts = &r; */
core_status cli_resolve_input(const cli_opts *opts, cli_opts *resolved,
                              core_err *err);

/** For commands taking SHEET, once it is loaded: CORE_OK when --data was
 * given or the data folder holds s's experiment (or nothing else does);
 * CORE_EUSAGE, naming the --data to use, when the default folder does not
 * hold it but the data folder of the sheet's project does (beside the
 * sheet, or beside its folder: exp/data for exp/protocols/x.lua). For
 * register, that refusal keeps a second copy from being registered by
 * mistake; an explicit --data allows it. */
/** For commands taking SHEET|BUNDLE: CORE_OK unless args[0] is a folder;
 * then CORE_EUSAGE saying what the folder is (an unpacked bundle, an
 * experiment's data folder, or one holding such) and what to run. */
core_status cli_refuse_folder(const cli_opts *opts, core_err *err);
/** Verifies exp quietly, as prereg verify would: 1 when it fails (then
 * the first problem, on one line, is in why, for the UNVERIFIED line every
 * status shows), 0 when it passes; -1 with err filled when it cannot
 * tell (out of memory). */
int cli_unverified(const data_experiment *exp, char *why, size_t size,
                   core_err *err);

struct proto_sheet;
core_status cli_check_data_dir(const cli_opts *opts,
                               const struct proto_sheet *s, core_err *err);
/** Loads the sheet opts->args[0] and opens its experiment folder; on
 * failure both are NULL and err is filled. */
core_status cli_open_both(const cli_opts *opts, struct proto_sheet **sheet,
                          struct data_experiment **exp, core_err *err);
/** check, register and amend (cmd_sheet.c): CORE_EPROTOCOL with the field and
 * the fix when a workload places a look below the values an interval at
 * that look's level needs (proto_looks_below_level). */
core_status cli_check_looks_level(const struct proto_sheet *s, core_err *err);
/** For a replication's sheet (`replicates`): verifies the original's data
 * kept under DATA/ID/original/ORIGINAL, printing what data_verify says of
 * them; CORE_EVERIFY when they are missing or damaged. CORE_OK for any
 * other sheet. */
core_status cli_verify_original(const struct proto_sheet *s,
                                const char *data_dir, FILE *out,
                                core_err *err);
/** verify of a bundle: its files (data_bundle_verify), then its report
 * against its data (report_verify_bundle); the report goes to out. */
core_status cli_verify_bundle(const char *path, const char *tsa_ca,
                              const char *allowed, FILE *out, core_err *err);

/* Time-stamps (cmd_stamp.c) */

struct data_stamper;
/** The stamper of --tsa URL [--tsa-ca FILE] (stamper->fn NULL without
 * --tsa): each stamp is asked of the TSA with curl and checked in full.
 * CORE_EUSAGE for a URL that is not http(s) or --tsa-ca alone. */
core_status cli_stamper(const cli_opts *opts, struct data_stamper *stamper,
                        core_err *err);
/** 1 when err is the stamper's failure (the TSA's or ssh-keygen's):
 * then nothing was filed, which the message should say. */
int cli_stamper_failed(const struct data_stamper *stamper,
                       const core_err *err);
/** "  stamped vN TIME by TSA" for the stamp stamper took last (nothing
 * without one). */
void cli_print_stamp(const struct data_stamper *stamper, int version,
                     FILE *out);
/** Stamps exp's MANIFEST as it stands with the TSA of opts (--tsa,
 * --tsa-ca) and freezes the text and the token (stamp --data-manifest,
 * run --tsa); a line on out. CORE_ELOCK when no batch is frozen yet. */
core_status cli_stamp_data(const cli_opts *opts, struct data_experiment *exp,
                           FILE *out, core_err *err);
/* Signatures (cmd_sign.c) */

/** text signed with ssh-keygen -Y sign -n prereg -f key. OUT: *sig
 * newly allocated (core_free), *sig_len. CORE_EUSAGE for a key file that
 * is not there, CORE_ERUN when ssh-keygen fails. */
core_status cli_ssh_sign(const char *key, const char *text, size_t len,
                         char **sig, size_t *sig_len, core_err *err);
/** verify's lines on exp's signatures: per version "vN: signed by FP"
 * (with "(PRINCIPAL)" when allowed names the key) or "vN: not signed";
 * for a bundle (its extracted copy) the MANIFEST's too, which allowed
 * requires. CORE_EVERIFY when one does not verify. */
core_status cli_verify_signatures(const struct data_experiment *exp,
                                  const char *allowed, int bundle, FILE *out,
                                  core_err *err);

/** verify of a bundle's stamps and signatures, in its extracted copy
 * (lines naming the bundle, not the copy). OUT: *before_plan as
 * data_stamps_verify says it. */
core_status cli_verify_bundle_proofs(const char *path, const char *ca,
                                     const char *allowed, FILE *out,
                                     int *before_plan, core_err *err);
/** verify's lines on exp's stamps (data_stamps_verify); CORE_EVERIFY
 * when one does not verify, CORE_EUSAGE when ca cannot be read. OUT:
 * *before_plan. */
core_status cli_verify_stamps(const struct data_experiment *exp,
                              const char *ca, FILE *out, int *before_plan,
                              core_err *err);
/** verify's lines on exp's stamps, then its signatures (bundle: the
 * MANIFEST's too), into *text (free()). OUT: *before_plan. */
core_status cli_verify_proofs(const struct data_experiment *exp,
                              const char *ca, const char *allowed, int bundle,
                              char **text, int *before_plan, core_err *err);
/** Prints verify's report, its status line saying DATA STAMPED BEFORE
 * PLAN when before_plan. */
void cli_print_verify_report(const char *report, int before_plan, FILE *out);

#endif
