/* imports.h: other tools' files (CSV per the contract, hyperfine,
 * Google Benchmark, go test -bench) imported as frozen batches of kind
 * "import" of an experiment's data folder, and the table of the formats.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_IMPORTS_H
#define PREREG_IMPORTS_H

#include <stddef.h>

#include "core/core.h"
#include "data/data.h"
#include "protocols/proto.h"

/** Imports FILE (CSV per the contract, or hyperfine --export-json) as a
 * frozen batch of kind "import". arm_map: "CMD=ARM,..." or NULL. only:
 * the workload hyperfine results go to (import --only), or NULL for the
 * sheet's only workload without a command. One bad line rejects the
 * whole file (CORE_EINPUT naming FILE:LINE). OUT: *imported the number
 * of rows imported. */
core_status data_import_only(data_experiment *exp, const proto_sheet *sheet,
                             const char *file, const char *arm_map,
                             const char *only, size_t *imported,
                             core_err *err);

/* What `prereg import` was told about the file's names and results
 * (borrowed for the call). */
typedef struct data_import_opts {
  const char *only;            /* --only WORKLOAD or NULL */
  const char *const *arm_from; /* each --arm-from, in order */
  size_t n_arm_from;           /* they accumulate */
  const char *arm_map;         /* --arm-map FILE (NAME<TAB>ARM lines) */
  const char *const *where;    /* each --where KEY=VALUE */
  size_t n_where;              /* all must hold */
  int ignore_unmapped;         /* --ignore-unmapped */
} data_import_opts;

/* What an import did. */
typedef struct data_import_result {
  size_t imported; /* rows */
  char **left_out; /* names --ignore-unmapped left out (newly allocated) */
  size_t n_left_out;
} data_import_result;

/** data_import_only with every option of `prereg import` (see
 * docs/interface.md section 3). OUT: *res, freed with
 * data_import_result_free (also on failure). */
core_status data_import_with(data_experiment *exp, const proto_sheet *sheet,
                             const char *file, const data_import_opts *opts,
                             data_import_result *res, core_err *err);
void data_import_result_free(data_import_result *res);

/* An import format: the name an imported batch's facts give as its
 * "format", the tool's words for a reader, and what the tool's files say
 * of the order their runs were collected in. */
typedef struct data_import_format {
  const char *name;      /* "csv", "hyperfine", "gbench", "go" */
  const char *tool;      /* "a CSV file", "hyperfine", ... */
  const char *unordered; /* "the CSV file" when the file does not say in
                          * what order its runs were collected; NULL
                          * when the tool ran each arm's runs in one
                          * block, not interleaved */
} data_import_format;

/** The formats prereg imports (static; *n their count, at most 32). */
const data_import_format *data_import_formats(size_t *n);

#endif
