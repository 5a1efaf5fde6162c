/* targets.h: the entry functions of prereg's fuzz targets, shared by the
 * libFuzzer executables (clang) and the replay driver (any compiler).
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_FUZZ_TARGETS_H
#define PREREG_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* One target: feeds data to one reader of untrusted input. Every entry
 * returns 0; a bug shows as a crash, a sanitizer report or an abort. */
typedef struct fuzz_target {
  const char *name;
  int (*run)(const uint8_t *data, size_t size);
} fuzz_target;

/** The targets, NULL-terminated: sheet (proto_sheet_load_text), batch
 * (data_load_rows on a frozen and on an unfinished batch, then
 * data_verify), import_csv, import_json (hyperfine and Google Benchmark)
 * and import_go (data_import_only into a registered experiment),
 * manifest (data_manifest_load, data_verify, data_report_inputs_load)
 * sheet_cost (Lua given long strings to work on, as a sheet and as its
 * function claim, each bounded in CPU time) and bundle (a bundle file, or
 * the tar stream inside one, through what `prereg verify BUNDLE` calls:
 * data_bundle_verify, then report_verify_bundle) and node_line (a line a
 * Slurm node runner sends: data_row_unline, data_row_line, and the value
 * rule data_value_parse), stamp (a time-stamp reply and request:
 * core_stamp_check, core_stamp_request_read), sshsig (an SSH
 * signature's armour: core_sshsig_read) and quote (core_buf_quote: no
 * raw control byte in what it writes, which reads back to the input). */
extern const fuzz_target fuzz_targets[];

/** The target called name, or NULL. */
const fuzz_target *fuzz_target_find(const char *name);

/** Removes the scratch folder the targets work in (also done at exit). */
void fuzz_cleanup(void);

#endif
