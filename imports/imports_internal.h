/* imports_internal.h: what the files of imports/ share and nobody else
 * sees: one import in progress, the readers of other tools' formats, the
 * names and configurations of one import.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_IMPORTS_INTERNAL_H
#define PREREG_IMPORTS_INTERNAL_H

#include "data/data.h"
#include "imports/imports.h"

/* Importers of other tools' files */

/* One import in progress (import.c owns it: the sheet, the file's name,
 * the rows checked so far). The readers of other tools' formats (imports/
 * import_gbench.c, imports/import_go.c) add rows through data_import_row,
 * which makes the checks the CSV importer makes; nothing is written to
 * the data folder until the whole file has been read. */
typedef struct data_import data_import;

/** The import's sheet and file name (borrowed). */
const proto_sheet *data_import_sheet(const data_import *m);
const char *data_import_file(const data_import *m);

/** The workload the rows of a file that names none go to: --only
 * WORKLOAD, else the sheet's one import-only workload; format ("Google
 * Benchmark results") names the file's kind in the refusal. OUT: *wi. */
core_status data_import_workload(data_import *m, const char *only,
                                 const char *format, long *wi, core_err *err);

/** The arm of a result the file gives (a benchmark's name; alt: the go
 * name without "Benchmark", or NULL) under configuration cfg (from
 * data_import_config; -1 for formats without). The file is read twice:
 * on the first reading this learns the names and returns 0 (rows are
 * checked, not kept); on the second it gives the arm --arm-from,
 * --arm-map or the arm's own name maps it to. Returns the arm's index;
 * -1 when there is none (err untouched); -2 on error (err filled); -3
 * when the result is left out (--where selects another configuration,
 * or --ignore-unmapped and no mapping): skip it. */
long data_import_arm(data_import *m, const char *name, const char *alt,
                     long cfg, long line, core_err *err);

/** The index of configuration text ("key: value\n" lines sorted by key)
 * for data_import_arm. OUT: *cfg. */
core_status data_import_config(data_import *m, const char *text, long *cfg,
                               core_err *err);

/** The refusal (CORE_EINPUT) of a name that is no arm, at where ("FILE:LINE"
 * or "FILE: path"), naming the sheet's arms and the --arm-from item that
 * would map it. */
core_status data_import_no_arm(const data_import *m, const char *where,
                               const char *name, core_err *err);

/** The refusal (CORE_EINPUT) of a metric w does not declare, listing its
 * metrics. */
core_status data_import_undeclared_metric(const data_import *m,
                                          const char *where,
                                          const proto_workload *w,
                                          const char *metric, core_err *err);

/** Adds one row of a run: workload, arm and metric must be declared and a
 * value (has_value) finite, as for a CSV line, else CORE_EINPUT at where.
 * valid 0 needs a reason. No start time or exit code (the tools give
 * none per run). */
core_status data_import_row(data_import *m, const char *where,
                            const char *workload, const char *arm,
                            const char *metric, const char *run_id, long round,
                            int valid, const char *reason, double value,
                            int has_value, core_err *err);

/** Google Benchmark's --benchmark_format=json (root: the parsed file, an
 * object with "benchmarks"): each repetition a run of its benchmark's
 * arm (see docs/interface.md §3). */
core_status data_import_gbench(data_import *m, data_json *root,
                               const char *only, core_err *err);

/** 1 when text looks like the output of go test -bench: one of its lines
 * is a Benchmark result ("BenchmarkName N VALUE UNIT") or a benchfmt
 * configuration line ("key: value"). */
int data_is_go_bench(const char *text, size_t len);
/** go test -bench output, the format benchstat reads: each Benchmark line
 * a run of its benchmark's arm. line_of: NULL, or the line of the file
 * each line of text came from (go test -json output). */
core_status data_import_go(data_import *m, const char *text, size_t len,
                           const long *line_of, const char *only,
                           core_err *err);

/* Names and configurations of one import (imports/import_map.c) */
typedef struct data_names data_names;
data_names *data_names_new(void);
void data_names_free(data_names *n);
/** Interns configuration text; *idx its index. --where (o) decides
 * whether it is selected. */
core_status data_names_config(data_names *n, const char *text,
                              const data_import_opts *o, long *idx,
                              core_err *err);
int data_names_where_ok(const data_names *n, long cfg);
/** Records that the file gives name (alt) under cfg, first at line. */
core_status data_names_see(data_names *n, const char *name, const char *alt,
                           long cfg, long line, core_err *err);
size_t data_names_count(const data_names *n);
/** Before the file is read: each --arm-from can be read as one mapping
 * or as items, each --where is KEY=VALUE (CORE_EUSAGE). */
core_status data_names_check_flags(const proto_sheet *s,
                                   const data_import_opts *o, core_err *err);
/** After the first reading: every result's arm, by the mappings, else
 * by fallback(ctx, name) (-1 none); one name under two configurations in
 * one arm is refused (CORE_EINPUT). */
core_status data_names_resolve(data_names *n, const proto_sheet *s,
                               const data_import_opts *o, const char *file,
                               long (*fallback)(void *, const char *),
                               void *ctx, core_err *err);
/** The resolved arm of name under cfg: index, -1 none, -3 left out. */
long data_names_arm(const data_names *n, const char *name, long cfg);
/** The names left out by --ignore-unmapped. OUT: *out newly allocated
 * (each string and the array core_free'd), *count. */
core_status data_names_left_out(const data_names *n, char ***out,
                                size_t *count, core_err *err);
/** Records that the run at line (of the file) was imported under cfg;
 * the rows of one run may record it again. */
core_status data_names_add_run(data_names *n, long cfg, long line,
                               core_err *err);
/** [{"configuration": {KEY: VALUE...}, "lines": [[FIRST, LAST]...]}...]
 * for the batch facts (the lines of the runs imported under each); NULL
 * when out of memory. */
data_json *data_names_configs_json(const data_names *n);

#endif
