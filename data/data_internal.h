/* data_internal.h: what the files of data/ share and nobody else sees:
 * rows as CSV, interned strings, the manifest, the batch handle,
 * leftover temporary files, JSON set-up.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_DATA_INTERNAL_H
#define PREREG_DATA_INTERNAL_H

#include "data/data.h"

/* Rows as CSV */

/* Number of columns of DATA_ROW_HEADER, and of DATA_ROW_HEADER_PLAIN
 * (a batch written before the conditions' columns). */
#define DATA_NCOLS 27
#define DATA_NCOLS_PLAIN 20

/** Scans RFC 4180 text with libcsv, calling fn once per complete record
 * with its first physical line. An incomplete final record is not passed
 * to fn: it sets res->torn (OUT: *res). name is used in messages. A
 * callback error stops the scan and is returned. */
core_status data_csv_scan(const char *name, const char *text, size_t len,
                          csvscan_fn fn, void *ctx, csvscan_result *res,
                          core_err *err);

/** data_csv_scan over the file at path, read a chunk at a time so that
 * the whole file is never in memory; path is used in messages (cannot
 * open or read: CORE_EIO naming it). OUT: sha256 (may be NULL) the
 * SHA-256 of every byte read. */
core_status data_csv_scan_file(const char *path, csvscan_fn fn, void *ctx,
                               csvscan_result *res, char *sha256,
                               core_err *err);

/** Appends one row (with a final "\n"), each field quoted only where RFC
 * 4180 needs it; batch_id and source override the row's own when not
 * NULL. */
void data_csv_row(core_buf *b, const data_row *r, const char *batch_id,
                  const char *source);

/** Fills r from the DATA_NCOLS (or DATA_NCOLS_PLAIN: no facts) fields of
 * one record; name and line are
 * for messages. OUT: *r with newly allocated strings (data_row_clear
 * frees them); on error r holds nothing to free. */
core_status data_row_parse(data_row *r, char **f, size_t n, const char *name,
                           long line, core_err *err);
/** Frees the strings r owns and zeroes it (not for pooled rows). */
void data_row_clear(data_row *r);

/* Interned strings */

void data_strpool_free(data_strpool *p);

/** data_row_parse, with r's strings interned in pool (borrowed, not to be
 * freed) when pool is not NULL, copied as data_row_parse does when it is.
 * On error r holds nothing to free. */
core_status data_row_parse_pooled(data_row *r, char **f, size_t n,
                                  const char *name, long line,
                                  data_strpool *pool, core_err *err);

/** Empties the set for the next file. */
void data_runvalues_reset(data_runvalues *rv);

/** data_row_parse with r's strings pointing into f itself: valid as long
 * as f's strings are, and never to be freed. */
core_status data_row_parse_view(data_row *r, char **f, size_t n,
                                const char *name, long line, core_err *err);

/* Batches */

struct data_batch {
  data_experiment *exp; /* borrowed: the caller's, outlives the batch */
  char id[16];
  char *kind;
  char *csv; /* full path */
  char *dir; /* full path of batches/BATCH/ */
  int fd;    /* open for appending, or -1 */
  char started_at[32];
  size_t versions_at_start;
  long rows;
  double synced_at; /* core_monotonic() of the last fsync of csv */
  /* SHA-256 of every byte this handle appended (NULL for a batch picked
   * up by recovery): freezing compares it with the file, so that a batch
   * edited or replaced while prereg wrote it is never frozen as ours. */
  core_sha256_ctx *written;
};

/** A handle for batch number num (no file is touched); NULL when out of
 * memory. Freed by data_batch_release (or freeze/abandon). */
data_batch *data_batch_make(data_experiment *exp, long num, const char *kind);
/** Frees a handle (closing its file); NULL is a no-op. */
void data_batch_release(data_batch *b);
/** data_batch_freeze with the facts as a jansson object, which it takes
 * over (decrefs) whatever happens; NULL is out of memory. */
core_status data_batch_freeze_json(data_batch *b, data_json *facts,
                                   core_err *err);

/* Leftover temporary files (manifest.c) */

/** 1 when no process pid exists (and it is not ours): a temporary file
 * it named is a leftover. EPERM (someone else's process) counts as alive. */
int data_pid_gone(long pid);

/** The number of columns when the record is DATA_ROW_HEADER or
 * DATA_ROW_HEADER_PLAIN exactly, else 0. */
size_t data_row_header_ok(char **f, size_t n);

/* The verifier (data.h), what only verify.c feeds it */

/** The mode of the file fed next (a folder's): a writable frozen file is
 * noted, or named with its digest's mismatch. */
void data_check_mode(data_check *v, const char *rel, unsigned mode);
/** The MANIFEST line listing rel, or 0. */
long data_check_listed(const data_check *v, const char *rel);

/* Signatures (register.c) */

/** Writes sig as signatures/vK.sig (frozen; the caller lists it). */
core_status data_sign_write(const data_experiment *exp, int k, const void *sig,
                            size_t len, core_err *err);

/* Versions */

/** Fills *v (from scratch) from the text of versions/vK.json; name is
 * for messages. Bad JSON or a text without "version": k and a "sha256" is
 * CORE_EINPUT. Free with data_version_clear (also after an error: then v
 * holds nothing). */
core_status data_version_parse(const char *name, const char *text, size_t len,
                               size_t k, data_version *v, core_err *err);
void data_version_clear(data_version *v);
/** (Re)reads exp's chain of versions (versions/v0.json, v1.json, ... up
 * to the first one missing) into exp->versions: after open, after the
 * lock is taken and after a version is filed (register.c). */
core_status data_load_chain(data_experiment *exp, core_err *err);

/* JSON */

/* For the files of data/ that include jansson: the flag of the facts'
 * digits (DATA_FACTS_DIGITS). */
#define FACTS_PRECISION JSON_REAL_PRECISION(DATA_FACTS_DIGITS)
/** Points jansson's allocator at core_malloc/core_free (idempotent). */
void data_json_init(void);
/* v's JSON text as json_dumps(v, flags) writes it, or NULL when memory
 * ran out at any piece of it (json_dumps may then drop a key and go on);
 * freed with core_free. Every JSON text data/ writes goes through it. */
char *data_json_dump_flags(const data_json *v, size_t flags);

/* Paths, owned (data_paths_free). */
typedef struct data_paths {
  char **v;
  size_t n;
  size_t more; /* found past PREREG_UNLOCKED_MAX, not kept */
} data_paths;
void data_paths_free(data_paths *n);
/** data_inputs_unlocked, and abs (or NULL) gets each absolute path it
 * warns of once, in the order found. */
void data_unlocked_scan(const proto_sheet *s, core_buf *b, data_paths *abs);
/** Marks which of in's files a version copies (in path order while the
 * copies together stay within PREREG_INPUTS_COPY_MAX_BYTES) and which
 * it locks by digest only (by_digest). */
void data_inputs_mark_copies(data_inputs *in);
/** Fills b's stops and inputs_changed from the text of its facts (a JSON
 * object; anything that is not a well-formed stop is left out: the
 * counter checks each against the sheet). 0 when out of memory. */
int data_batch_state_read(data_batch_state *b, const char *facts, size_t len);
/** Appends s as one CSV field, quoted only where RFC 4180 needs it (the
 * batches' own writing). */
void data_csv_field(core_buf *b, const char *s);

/* The counting rule's pieces, used by data/count.c only */

/** The tally of workload and arm in c, or NULL: borrowed from c. */
const data_tally *data_counted_tally(const data_counted *c,
                                     const char *workload, const char *arm);

/** 1 when r is such a row. */
int data_row_node_lost(const data_row *r);
/** 1 when r is a row of a run stopped as a setup mistake, or one beyond
 * the registered conditions (its reason starts with DATA_SETUP_FAILURE or
 * DATA_CONDITIONS): either fills no round of the plan. */
int data_row_setup_failure(const data_row *r);

/** Why row i (of the rows given to data_count_rows) is not analysed, in
 * the words the report shows ("superseded by amendment 1: ...", "beyond
 * the plan (runs = 10)", "timeout after 120 s"), or NULL when it is.
 * Newly allocated (core_free); also NULL when out of memory, which
 * *oom says. */
char *data_row_why(const data_counted *c, const proto_sheet *plan,
                   const data_rowset *rows, size_t i, int *oom);

#endif
