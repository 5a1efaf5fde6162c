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

/* One record as the scanner hands it over: fields are NUL-terminated and
 * borrowed until the callback returns. */
typedef core_status (*csvscan_fn)(void *ctx, char **fields, size_t n,
                                  long line, core_err *err);

typedef struct csvscan_result {
  size_t records;  /* complete records seen (header included) */
  size_t good_end; /* byte offset just past the last complete record */
  long last_line;  /* physical line where the last complete record
                      started */
  int torn;        /* the text ends inside a record (no final newline
                      or an open quote) */
  long torn_line;  /* where that incomplete record starts */
} csvscan_result;

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

/* The same scan fed in pieces of any size by the caller (a tar stream):
 * data_csvscan_begin (NULL when out of memory, err filled), any number of
 * data_csvscan_feed (each returns the scan's first error so far), then
 * data_csvscan_end, which frees it and returns the first error. */
typedef struct data_csvscan data_csvscan;
data_csvscan *data_csvscan_begin(const char *name, csvscan_fn fn, void *ctx,
                                 csvscan_result *res, core_err *err);
core_status data_csvscan_feed(data_csvscan *s, const char *text, size_t len);
core_status data_csvscan_end(data_csvscan *s);

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
/** Appends a copy of r to rs, which takes r's strings; r is zeroed, on
 * failure too (its strings then freed, unless rs is pooled). */
core_status data_rowset_push(data_rowset *rs, data_row *r, core_err *err);

/* Interned strings */

/* Interned, read-only strings in large chunks: the rows data_load_rows
 * fills share them (see data_rowset), since most columns repeat a few
 * values. */
typedef struct data_strpool data_strpool;

/** A new, empty pool; NULL when out of memory. Free with
 * data_strpool_free (NULL is a no-op), which frees every string in it. */
data_strpool *data_strpool_new(void);
void data_strpool_free(data_strpool *p);

/** The pool's copy of the len bytes at s (NUL-terminated), made on first
 * sight: equal strings give the same pointer. Borrowed, valid until
 * data_strpool_free; NULL when out of memory. */
const char *data_strpool_intern(data_strpool *p, const char *s, size_t len);

/** data_row_parse, with r's strings interned in pool (borrowed, not to be
 * freed) when pool is not NULL, copied as data_row_parse does when it is.
 * On error r holds nothing to free. */
core_status data_row_parse_pooled(data_row *r, char **f, size_t n,
                                  const char *name, long line,
                                  data_strpool *pool, core_err *err);

/* The value rule (data_value_parse, in data.h), for a number already
 * read (a JSON number): NULL, or why not ("not a finite number",
 * data_value_negative). */
const char *data_value_ok(const char *metric, double v);

/* One value per run and metric (values.c): the rows of one batch file
 * are fed in turn; a second row of the same run and metric is found.
 * per_run: a run is the rows of one batch, workload, arm and run id one
 * after the other (the counting rule's run), and only the current run's
 * metrics are kept (bounded memory, for readers of frozen rows); else
 * every row's key is kept (an import, read whole anyway): 24 bytes a row
 * at most twice over. */
typedef struct data_runvalues data_runvalues;

/** A new, empty set; NULL when out of memory. Free with
 * data_runvalues_free (NULL-safe). */
data_runvalues *data_runvalues_new(int per_run);
void data_runvalues_free(data_runvalues *rv);
/** Empties the set for the next file. */
void data_runvalues_reset(data_runvalues *rv);
/** Adds r (found on line): 0 when its run and metric are new, the line
 * of the earlier row of the same run and metric when not, -1 when out of
 * memory. */
long data_runvalues_add(data_runvalues *rv, const data_row *r, long line);

/** data_row_parse with r's strings pointing into f itself: valid as long
 * as f's strings are, and never to be freed. */
core_status data_row_parse_view(data_row *r, char **f, size_t n,
                                const char *name, long line, core_err *err);

/* Manifest */

typedef struct manifest_entry {
  char *path; /* relative to the experiment folder */
  char sha256[CORE_SHA256_HEX];
  long line;
} manifest_entry;

/* The entries of DIR/MANIFEST; owns their paths (data_manifest_free). */
typedef struct manifest {
  manifest_entry *e;
  size_t n, cap;
} manifest;

/** Loads DIR/MANIFEST (missing: empty) into *m, filled from scratch.
 * Malformed lines are CORE_EINPUT naming MANIFEST:LINE unless problems
 * (the caller's buffer) is given, in which case each is appended there
 * and skipped. Free *m with data_manifest_free; on error it is empty. */
core_status data_manifest_load(const char *dir, manifest *m,
                               core_buf *problems, core_err *err);
void data_manifest_free(manifest *m);
/** The same from the MANIFEST's text, name naming it in messages. */
core_status data_manifest_parse(const char *name, const char *text, size_t len,
                                manifest *m, core_buf *problems,
                                core_err *err);
/** The entry for path, or NULL: borrowed from m, valid until m changes. */
const manifest_entry *data_manifest_find(const manifest *m, const char *path);
/** Hashes each path (relative to dir) and appends it to the MANIFEST,
 * which is replaced atomically (mode 0444). */
core_status data_manifest_add(const char *dir, char *const *paths, size_t n,
                              core_err *err);

/* Batches */

struct json_t; /* jansson's, for the files of data/ that include it */

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
core_status data_batch_freeze_json(data_batch *b, struct json_t *facts,
                                   core_err *err);

/** 1 when name is "bNNNN" followed by suffix exactly (e.g. ".csv");
 * OUT: *num the number. */
int data_batch_name(const char *name, const char *suffix, long *num);

/* Leftover temporary files */

/** The pid in the name of a temporary file of core_write_file_atomic
 * ("NAME.tmp.PID"), or 0 when name is not one. */
long data_tmp_file_pid(const char *name);
/** 1 when no process pid exists (and it is not ours): a temporary file
 * it named is a leftover. EPERM (someone else's process) counts as alive. */
int data_pid_gone(long pid);

/* The verifier:
 *
 * One verifier of an experiment's files, for a data folder (verify.c
 * walks it) and for a bundle (bundle.c streams its members): the same
 * MANIFEST parser, CSV scan, chain rules, counting and messages. Every
 * message is "WHERE" + the file's path relative to the experiment folder
 * + ": what" (WHERE is "DATA/ID/" or "BUNDLE: ID/"). It is fed in this
 * order: the MANIFEST, the files of versions/, the batches' facts, then
 * any other file (a batch's CSV is parsed as it streams, so no file is
 * ever held whole), and checks what needs everything at the end. A
 * bundle's members come sorted, versions/ after batches/: its reader
 * takes the small members first (a first pass it makes anyway), so that
 * rows are checked against the chain as they stream, with memory that
 * does not grow with the data. */

typedef struct data_check data_check;

/** A verifier whose messages start with where; report is the caller's
 * buffer (one line per problem or note). NULL when out of memory. */
data_check *data_check_new(const char *where, core_buf *report);
/** The MANIFEST's text; NULL text: there is none. */
void data_check_manifest(data_check *v, const char *text, size_t len);
/** A file of versions/ (whole: sheets, their facts and diffs are small). */
void data_check_version(data_check *v, const char *rel, const char *text,
                        size_t len);
/** batches/BATCH.json (whole). */
void data_check_facts(data_check *v, const char *rel, const char *text,
                      size_t len);
/** Any other file, streamed: begin, data (any number of pieces), end. A
 * batch's CSV (batches/BATCH.csv) is parsed as it streams. unfinished: a
 * batch still being written (a folder's, not in the MANIFEST): its rows
 * are counted, not checked. */
void data_check_file_begin(data_check *v, const char *rel, int unfinished);
void data_check_file_data(data_check *v, const void *p, size_t n);
void data_check_file_end(data_check *v);
/** A file the feeder found wrong itself (it is then taken as seen). */
void data_check_problem(data_check *v, const char *rel, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/** The mode of the file fed next (a folder's): a writable frozen file is
 * noted, or named with its digest's mismatch. */
void data_check_mode(data_check *v, const char *rel, unsigned mode);
/** The MANIFEST line listing rel, or 0. */
long data_check_listed(const data_check *v, const char *rel);

/* What the verifier found, for the summary lines. */
typedef struct data_check_result {
  long problems;
  size_t files, versions, batches, rows;
  char status[512]; /* "status: ..." line, without the newline */
} data_check_result;

/** Checks what needs everything (files the MANIFEST lists that never
 * came, the chain), appends the status line, frees v. OUT: *res.
 * CORE_ENOMEM when out of memory, else CORE_OK (problems are counted in
 * res, not returned). */
core_status data_check_end(data_check *v, data_check_result *res,
                           core_err *err);

/** 1 when rel is a path a bundle or manifest may hold: relative,
 * '/'-separated, no empty, "." or ".." component, no control character
 * or backslash. */
int data_safe_rel(const char *rel);

/** The number of columns when the record is DATA_ROW_HEADER or
 * DATA_ROW_HEADER_PLAIN exactly, else 0. */
size_t data_row_header_ok(char **f, size_t n);

/* Time-stamps */

/** Writes tsr as stamps/vK.tsr (frozen, mode 0444; not listed: the
 * caller adds it to the MANIFEST) and removes a pending stamps/vK.tsq. */
core_status data_stamp_write(const data_experiment *exp, int k,
                             const void *tsr, size_t len, core_err *err);
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

/* JSON */

/* Batch facts are informational (load averages, sizes): 15 significant
 * digits print 3.2 rather than jansson's default 3.2000000000000002. The
 * measurements themselves are in the CSV, written exactly. */
#define FACTS_PRECISION JSON_REAL_PRECISION(15)

/** Points jansson's allocator at core_malloc/core_free (idempotent). */
void data_json_init(void);

/** Fills b's stops from the text of its facts (a JSON object; anything
 * that is not a well-formed stop is left out: the counter checks each
 * against the sheet). 0 when out of memory. */
int data_batch_state_stops(data_batch_state *b, const char *facts, size_t len);
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
