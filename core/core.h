/* core.h: prereg's foundation: status codes, errors, memory, buffers,
 * files, hashing and the clock. It uses no other folder of prereg.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_CORE_H
#define PREREG_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define PREREG_NAME "prereg"
#define PREREG_VERSION "0.1.0"

/* {==== Status ==== */

/* Every fallible function returns one of these. The exit code a status
 * maps to is core_exit_code(): input errors (2) leave nothing written. */
#define CORE_STATUS_LIST(X)                                                   \
  X(CORE_OK, "no error")                                                      \
  X(CORE_ENOMEM, "out of memory")                                             \
  X(CORE_EIO, "input/output error")                                           \
  X(CORE_EUSAGE, "invalid command-line usage")                                \
  X(CORE_EPROTOCOL, "protocol sheet error")                                   \
  X(CORE_EINPUT, "malformed input file")                                      \
  X(CORE_ELOCK, "sheet differs from its registration")                        \
  X(CORE_EVERIFY, "verification failed")                                      \
  X(CORE_ERUN, "run failed")                                                  \
  X(CORE_ESTATS, "statistics error")                                          \
  X(CORE_EXLSX, "spreadsheet output error")                                   \
  X(CORE_EMARKDOWN, "markdown rendering error")                               \
  X(CORE_EINTERRUPT, "interrupted")

typedef enum {
#define X(code, text) code,
  CORE_STATUS_LIST(X)
#undef X
      CORE_STATUS_COUNT
} core_status;

/* The detail of a failure. msg is printed by main as "prereg: MSG"; it
 * should start with "FILE:LINE: " or "FILE: " where the input has them. */
typedef struct core_err {
  core_status status;
  char msg[4096];
} core_err;

/** Returns the fixed text of st ("no error" ...); never NULL. */
const char *core_strerror(core_status st);

/** Fills err (when not NULL) with st and the formatted message; returns st
 * so that callers can write `return core_fail(err, CORE_EIO, ...)`. */
core_status core_fail(core_err *err, core_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Prepends "prefix" to err->msg (for adding context on the way up). */
void core_err_prefix(core_err *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** The process exit code for st: 0 ok, 2 bad input, 1 anything else. */
int core_exit_code(core_status st);

/* }==== */

/* {==== Memory ==== */

/* Every allocation of prereg's own goes through these so that tests can
 * inject failures (SQLite's faultsim). core_free(NULL) is a no-op. */
void *core_malloc(size_t n);
void *core_calloc(size_t count, size_t size);
void *core_realloc(void *p, size_t n);
void core_free(void *p);
/** Room for one more element in the array v of *cap elements of elem
 * bytes, n of them used: v itself while n < *cap, else v reallocated to
 * twice the capacity (first_cap the first time) with *cap updated. NULL
 * when out of memory (or on size overflow): then v is still valid and
 * *cap unchanged. Usage: `T *nv = core_grow(a->v, &a->cap, a->n,
 * sizeof *nv, 16); if (!nv) ...; a->v = nv;`. */
void *core_grow(void *v, size_t *cap, size_t n, size_t elem, size_t first_cap);
/** Returns a newly allocated copy of s (NULL for NULL or on failure). */
char *core_strdup(const char *s);
char *core_strndup(const char *s, size_t n);
/** Returns a newly allocated formatted string, or NULL on failure. */
char *core_asprintf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/** Fault injection for tests: the countdown-th allocation from now on and
 * (when sticky) all that follow fail. countdown < 0 disables injection. */
void core_mem_fail_after(long countdown, int sticky);
/** Number of allocations that failed since the last core_mem_fail_after. */
long core_mem_failures(void);

/* }==== */

/* {==== Growable byte buffer ==== */

/* data is NUL-terminated whenever len > 0 or after any append. A buffer
 * that failed to grow keeps its old contents and sets oom; later appends
 * are ignored, so callers check oom once at the end. */
typedef struct core_buf {
  char *data;
  size_t len;
  size_t cap;
  int oom;
} core_buf;

void core_buf_init(core_buf *b);
void core_buf_free(core_buf *b);
void core_buf_append(core_buf *b, const void *p, size_t n);
void core_buf_puts(core_buf *b, const char *s);
void core_buf_printf(core_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void core_buf_vprintf(core_buf *b, const char *fmt, va_list ap);
/** Hands over data (caller frees with core_free) and resets b. */
char *core_buf_steal(core_buf *b);

/* }==== */

/* {==== Files ==== */

/** Reads a whole file. OUT: *data newly allocated (NUL-terminated; caller
 * frees with core_free), *len its length. CORE_EIO names the path. */
core_status core_read_file(const char *path, char **data, size_t *len,
                           core_err *err);
/** Writes data to path atomically (temporary file, fsync, rename, fsync of
 * the folder). mode is applied before the rename (0444 freezes it). */
core_status core_write_file_atomic(const char *path, const void *data,
                                   size_t len, unsigned mode, core_err *err);
/** mkdir -p. */
core_status core_mkdir_p(const char *path, unsigned mode, core_err *err);
/** 1 when path exists (any type), else 0. */
int core_exists(const char *path);
/** 1 when path is a directory. */
int core_is_dir(const char *path);
/** Returns a newly allocated "a/b" (either may be empty). */
char *core_path_join(const char *a, const char *b);
/** fsync of a directory, so that a rename or a new file in it survives a
 * crash. */
core_status core_fsync_dir(const char *path, core_err *err);
/** Names in folder dir (without "." and ".."), sorted bytewise; a missing
 * folder has zero names. OUT: *names newly allocated (core_names_free). */
core_status core_list_dir(const char *dir, char ***names, size_t *n,
                          core_err *err);
/** Frees n names and the array; NULL-safe. */
void core_names_free(char **names, size_t n);
/** rm -rf that never follows a symbolic link: path itself when it is not
 * a folder (a link is removed, not its target), else everything under it
 * and then the folder. A folder it must descend into or empty is made
 * accessible first (a command may leave a read-only one). A missing path
 * is CORE_OK. It goes on past a failure and reports the first (CORE_EIO,
 * naming the entry); a tree deeper than the descriptors we may hold open
 * is such a failure. */
core_status core_remove_tree(const char *path, core_err *err);

/* }==== */

/* {==== Hashing (libcrypto: only core/hash.c includes it) ==== */

#define CORE_SHA256_HEX 65 /* 64 hex digits and a NUL */

void core_sha256_hex(const void *data, size_t len, char out[CORE_SHA256_HEX]);
core_status core_sha256_file(const char *path, char out[CORE_SHA256_HEX],
                             core_err *err);
/** Digest of a file or a directory tree: names (sorted bytewise), types,
 * modes, symlink targets and contents, recursively; symlinks are not
 * followed. The exact encoding is documented in core/hash.c. */
core_status core_sha256_tree(const char *path, char out[CORE_SHA256_HEX],
                             core_err *err);

/** Incremental SHA-256 for streams. */
typedef struct core_sha256_ctx core_sha256_ctx;
core_sha256_ctx *core_sha256_begin(void);
void core_sha256_update(core_sha256_ctx *c, const void *p, size_t n);
/** Finishes and frees c. */
void core_sha256_end(core_sha256_ctx *c, char out[CORE_SHA256_HEX]);

/* }==== */

/* {==== Time ==== */

/** UTC time as "2026-11-30T01:37:25Z" (out needs 21 bytes). Honours
 * SOURCE_DATE_EPOCH-style pinning through PREREG_NOW (seconds since the
 * epoch) so that tests are reproducible. */
void core_utc_now(char out[32]);
/** Monotonic clock in seconds. */
double core_monotonic(void);

/* }==== */

#endif
