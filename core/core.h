/* core.h: prereg's foundation: status codes, errors, memory, buffers,
 * text, files, hashing and the clock; it uses no other folder of prereg.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_CORE_H
#define PREREG_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "core/limits.h"

#define PREREG_NAME "prereg"
#define PREREG_VERSION "0.1.0"

/* Status and errors */

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

/* The detail of a failure, owned by the caller (usually on its stack).
 * msg is printed by main as "prereg: MSG"; it should start with
 * "FILE:LINE: " or "FILE: " where the input has them. */
typedef struct core_err {
  core_status status;
  char msg[4096];
} core_err;

/** Returns the fixed text of st ("no error" ...): a static string, never
 * NULL ("unknown status" for a value outside the list). */
const char *core_strerror(core_status st);

/** Fills err (when not NULL) with st and the formatted message (cut to
 * fit msg); returns st so that callers can write
 * `return core_fail(err, CORE_EIO, ...)`. */
core_status core_fail(core_err *err, core_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Prepends the formatted text to err->msg, for adding context on the
 * way up; the old message's tail is cut when both do not fit. err NULL:
 * nothing. */
void core_err_prefix(core_err *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** The process exit code for st: 0 ok, 2 bad input, 1 anything else. */
int core_exit_code(core_status st);

/* Memory */

/* Every allocation of prereg's own goes through these so that tests can
 * inject failures (SQLite's faultsim). Each returns NULL when out of
 * memory; what they return is the caller's, freed with core_free.
 * core_free(NULL) is a no-op. */
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

/** Return a newly allocated copy (core_free) of s, or of its first n
 * bytes with a NUL added; NULL for NULL s or when out of memory. */
char *core_strdup(const char *s);
char *core_strndup(const char *s, size_t n);

/** Returns a newly allocated formatted string (core_free), or NULL when
 * out of memory. */
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

/* Growable byte buffer */

/* A buffer owns data (freed by core_buf_free). data is NUL-terminated
 * whenever len > 0 or after any append, and may move on every append: do
 * not keep pointers into it. A buffer that failed to grow keeps its old
 * contents and sets oom; later appends are ignored, so callers check oom
 * once at the end. */
typedef struct core_buf {
  char *data;
  size_t len;
  size_t cap;
  int oom;
} core_buf;

/** Makes b empty (no allocation) without freeing anything. */
void core_buf_init(core_buf *b);
/** Frees data and makes b empty again. */
void core_buf_free(core_buf *b);
/** Append copies of n bytes, of a string, or of formatted text. */
void core_buf_append(core_buf *b, const void *p, size_t n);
void core_buf_puts(core_buf *b, const char *s);
void core_buf_printf(core_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void core_buf_vprintf(core_buf *b, const char *fmt, va_list ap);
/** Hands data over to the caller (core_free; NULL when nothing was ever
 * appended) and makes b empty. */
char *core_buf_steal(core_buf *b);

/* Text for people */

/** Writes x to out (size bytes, truncated as snprintf does) with `digits`
 * significant digits (1-17), rounded once by printf: in fixed notation
 * while the rounded value lies between 0.001 and 10^16 ("0.224", "7.09",
 * "10.0", "302", "1235" for 3 digits), otherwise as %g writes it
 * ("1.23e-05"). Zero of either sign is "0"; NaN and infinities are written
 * as %g writes them ("nan", "inf", "-inf"), for callers to replace with a
 * word of their own. */
void core_fmt_sig(char *out, size_t size, double x, int digits);

/** Optimal string alignment distance between a and b (a swap of
 * neighbours counts once, the commonest typo), for did-you-mean; inputs
 * are cut at 32 bytes. */
size_t core_edit_distance(const char *a, const char *b);

/** The closest of the n names in cand to name when close enough to be a
 * typo (a few edits, a swap of neighbours counting once), for
 * did-you-mean; else NULL. Borrowed from cand. */
const char *core_nearest(const char *name, const char *const cand[], size_t n);

/** Unified diff of a -> b (3 lines of context, GNU format, "\ No newline
 * at end of file" markers); the labels name the two sides. Returns a
 * newly allocated string (core_free), "" when the texts are equal, NULL
 * when out of memory. */
char *core_unified_diff(const char *a, size_t alen, const char *b, size_t blen,
                        const char *label_a, const char *label_b);

/** The unit to show values of about x in when they are measured in unit:
 * seconds below 1 as ms, below 1 ms as µs and below 1 µs as ns (so that
 * 0.00343 s reads "3.43 ms" and 2.83e-08 s "28.3 ns"); any other unit as
 * it is. OUT: *factor what a value is
 * multiplied by to be in the returned unit (a static string, or unit
 * itself). */
const char *core_scale_unit(const char *unit, double x, double *factor);

/** Appends s (NULL: nothing) to b so that Markdown (CommonMark with GFM
 * tables and strikethrough) shows it literally, on one line, escaping
 * only what it would read as markup: newlines and tabs become spaces; a
 * backslash, `, *, [, ], | and ~ always; _ at a word's edge; < before a
 * letter, /, ! or ? (raw HTML, autolinks); & before a letter, digit or #
 * (entities); at the start (which may start a line) what would begin a
 * quote, a heading, a list item or a rule (>, "# ", "- ", "+ ", a line
 * of - or =, the . or ) after leading digits). "gzip -6 (level 6)" and
 * "--cpus 2" stay as they are. */
void core_buf_md_escape(core_buf *b, const char *s);

/* How core_buf_quote shows text; flags may be or-ed. */
enum {
  CORE_QUOTE_LINES = 1,    /* a newline and a tab stay as they are */
  CORE_QUOTE_BACKSLASH = 2 /* a backslash stays as it is (the guard of a
                            * stream that also carries JSON and quoted
                            * commands: it shows control bytes, no longer
                            * round-trips) */
};

/** Appends s[0..len) to b so that a terminal shows every byte for what it
 * is, as git quotes a path: a backslash as \\, the C0 controls with a
 * letter of their own as \a \b \t \n \v \f \r, every other C0
 * control, DEL, a C1 control written in UTF-8 (U+0080 to U+009F) and a
 * byte that is not part of valid UTF-8 as \ and three octal digits (ESC
 * is \033). What it appends holds no raw control byte (but newline and
 * tab with CORE_QUOTE_LINES) and reads back to exactly s: the backslash
 * escapes above are the only ones. A NUL inside s is \000. */
void core_buf_quote(core_buf *b, const char *s, size_t len, unsigned flags);

/** Appends s[0..len) to b as one word for sh: as it is when it is not
 * empty and holds only letters, digits and / . , _ : @ % + = -; else
 * between single quotes, a quote inside as '\'' ("My Studies" is
 * 'My Studies', "a;b" 'a;b'). What prereg suggests the user paste, and
 * the paths it puts in a command, go through it. */
void core_buf_sh_quote(core_buf *b, const char *s, size_t len);

/** Offset of the first control character in s[0..len) (a C0 byte other
 * than newline and tab, DEL, or a C1 control written in UTF-8), or len:
 * what text read from a sheet may not hold, since a terminal acts on it
 * (clears lines, moves the cursor, makes links). */
size_t core_control_at(const char *s, size_t len);

/** Reads the decimal number s as prereg accepts one from a file: blanks
 * (spaces, tabs) around it, an optional sign, digits with an optional
 * point and exponent. Not hexadecimal ("0x1p3"), "inf" or "nan", and not
 * a value out of range: an overflow, or one so small that it would be
 * stored as 0 or a subnormal number ("1e-400"). Returns NULL with *out
 * set, or why s is not one (a static string; *out untouched). */
const char *core_parse_decimal(const char *s, double *out);

/** Offset of the first byte of s[0..len) where it stops being valid
 * UTF-8 (RFC 3629: an ill-formed or overlong sequence, a surrogate, a
 * code point past U+10FFFF, a sequence cut short by the end), or len
 * when all of it is. Text prereg freezes or writes must be UTF-8. */
size_t core_utf8_invalid(const char *s, size_t len);

/* Files and folders */

/* Paths are borrowed for the call only. Failures are CORE_EIO naming the
 * path and the system's reason, or CORE_ENOMEM. */

/* Reading: regular files only. A link, a FIFO, a device or a socket is
 * refused (CORE_EIO naming the path and what it is) without being opened
 * where that could block or do something; the size is known from fstat
 * before anything is read, and nothing is read past a limit. */

/** Opens path for reading when it is a regular file; follow: a final
 * symbolic link is followed (a file the user named), else it is refused
 * (a file inside a folder prereg keeps). OUT: *fd (the caller closes it;
 * -1 on error), *size (may be NULL) from fstat. */
core_status core_open_regular(const char *path, int follow, int *fd,
                              size_t *size, core_err *err);
/** Opens path for writing in place, created when missing (mode 0644),
 * inside a folder prereg keeps where a command may have left something
 * by that name: a link is never written through, a FIFO or device never
 * waited on, a file with other hard links never changed (nor truncated:
 * O_TRUNC is applied only after the checks), each refused by name.
 * flags: O_WRONLY or O_RDWR, with O_TRUNC or O_APPEND as wanted. OUT: *fd
 * (the caller closes it; -1 on error). */
core_status core_open_regular_write(const char *path, int flags, int *fd,
                                    core_err *err);
/** CORE_OK when fd is open on a regular file that no other name shares
 * (st_nlink 1), else CORE_EIO naming path (for messages): what prereg
 * changes in place (its mode, size or content) must be its own, not
 * another file reached through a hard link. */
core_status core_check_sole(int fd, const char *path, core_err *err);
/** Reads the regular file open at fd (path for messages): at most max
 * bytes, a longer file is an error found without reading past max + 1.
 * OUT: *data newly allocated (NUL-terminated; core_free), *len. */
core_status core_read_fd(int fd, const char *path, size_t max, char **data,
                         size_t *len, core_err *err);
/** core_open_regular and core_read_fd: a whole file of at most max
 * bytes. OUT: *data newly allocated (NUL-terminated; caller frees with
 * core_free), *len its length; NULL and 0 on error. */
core_status core_read_file_max(const char *path, size_t max, int follow,
                               char **data, size_t *len, core_err *err);
/** A whole file inside a folder prereg keeps: no link followed, at most
 * CORE_READ_MAX bytes. OUT as core_read_file_max. */
core_status core_read_file(const char *path, char **data, size_t *len,
                           core_err *err);
/** Sets the mode of path, which must be a regular file, not a link and
 * with no other hard link (fchmod on the descriptor: what is checked is
 * what changes). */
core_status core_chmod_regular(const char *path, unsigned mode, core_err *err);
/** Fills err with "PATH: is a FIFO, not a regular file; ..." (mode is
 * an lstat st_mode) and returns CORE_EIO. */
core_status core_not_regular(core_err *err, const char *path, unsigned mode);

/* Writing: files are created anew (O_EXCL|O_NOFOLLOW) under a descriptor
 * of their folder (opened O_NOFOLLOW|O_DIRECTORY) and renamed into place;
 * a folder that is a link, or a link, FIFO or device where the file goes,
 * is refused with its path and left as it is. */

/** Writes all len bytes of data to fd, again after a signal or a short
 * write; an error (or a write that makes no progress) names path. */
core_status core_write_all(int fd, const void *data, size_t len,
                           const char *path, core_err *err);

/** Writes len bytes of data to path atomically: a temporary file
 * "PATH.tmp.PID" beside it, fsync, mode (0444 freezes it), rename, fsync
 * of the folder. An error before the rename leaves path as it was and
 * removes the temporary. */
core_status core_write_file_atomic(const char *path, const void *data,
                                   size_t len, unsigned mode, core_err *err);
/** core_write_file_atomic, and when expect is not NULL, replaces path
 * only when it is still a regular file with one name whose SHA-256 is
 * expect (hashed again just before the rename): a file changed since it
 * was read is left as it is (CORE_ELOCK, naming both digests). */
core_status core_replace_file_atomic(const char *path, const void *data,
                                     size_t len, unsigned mode,
                                     const char *expect, core_err *err);
/** Opens folder path (O_NOFOLLOW|O_DIRECTORY). OUT: *dfd (the caller
 * closes it; -1 on error). A link or a file there is refused by name. */
core_status core_open_dir(const char *path, int *dfd, core_err *err);
/** CORE_OK when path is a folder itself (not a link to one); else the
 * error core_open_dir gives. */
core_status core_check_dir(const char *path, core_err *err);
/** mkdir -p, with mode for each folder it creates; an existing folder is
 * fine, an existing file is an error. */
core_status core_mkdir_p(const char *path, unsigned mode, core_err *err);
/** 1 when path exists (any type; a link is not followed), else 0. */
int core_exists(const char *path);
/** 1 when path is a directory (or a link to one), else 0. */
int core_is_dir(const char *path);
/** 1 when path is a directory itself (lstat: a link to one is not),
 * else 0. */
int core_is_real_dir(const char *path);
/** Returns a newly allocated "a/b" (core_free; one slash between them,
 * either may be empty), or NULL when out of memory. */
char *core_path_join(const char *a, const char *b);
/** fsync of a directory, so that a rename or a new file in it survives a
 * crash. */
core_status core_fsync_dir(const char *path, core_err *err);
/** Names in folder dir (without "." and ".."), sorted bytewise; a missing
 * folder has zero names. OUT: *names newly allocated, the names and the
 * array (free with core_names_free), *n their count; NULL and 0 on
 * error. */
core_status core_list_dir(const char *dir, char ***names, size_t *n,
                          core_err *err);
/** The same for the folder open at dfd (path for messages; dfd stays
 * open and is not moved). */
core_status core_list_dir_at(int dfd, const char *dir, char ***names,
                             size_t *n, core_err *err);
/** Frees n names and the array; NULL-safe. */
void core_names_free(char **names, size_t n);
/** rm -rf that never follows a symbolic link: path itself when it is not
 * a folder (a link is removed, not its target), else everything under it
 * and then the folder. A folder it must descend into is opened by
 * core_open_subdir (a command may leave an unreadable one); no mode is
 * ever changed through a name. A missing path
 * is CORE_OK. It goes on past a failure and reports the first (CORE_EIO,
 * naming the entry); a tree deeper than the descriptors we may hold open
 * is such a failure. */
core_status core_remove_tree(const char *path, core_err *err);
/** core_remove_tree of a folder prereg made itself: it must be a folder
 * (not a link) owned by prereg's effective user, checked on the
 * descriptor it is emptied through; anything else is left as it is and
 * refused by name (CORE_EIO). */
core_status core_remove_own_tree(const char *path, core_err *err);
/** Opens the folder name inside the folder open at dfd (path for
 * messages), never through a link. One that prereg's user owns but
 * cannot read (a command made it so) is made readable first, through a
 * descriptor of it (never by name); anyone else's is refused. OUT: *sub
 * (the caller closes it; -1 on error). */
core_status core_open_subdir(int dfd, const char *name, const char *path,
                             int *sub, core_err *err);

/* SHA-256 */

/* Only core/ includes libcrypto (hash.c, stamp.c). A digest is written into
 * the caller's out as 64 lower-case hex digits and a NUL. */
#define CORE_SHA256_HEX 65

void core_sha256_hex(const void *data, size_t len, char out[CORE_SHA256_HEX]);
/** Digest of a regular file (a link, FIFO or device is refused, as by
 * core_open_regular without following). */
core_status core_sha256_file(const char *path, char out[CORE_SHA256_HEX],
                             core_err *err);
/** Digest of a file or a directory tree: names (sorted bytewise), types,
 * modes, symlink targets and contents, recursively; symlinks are not
 * followed. The exact encoding is documented in core/hash.c. */
core_status core_sha256_tree(const char *path, char out[CORE_SHA256_HEX],
                             core_err *err);

/* Incremental SHA-256 for streams. */
typedef struct core_sha256_ctx core_sha256_ctx;
/** Returns a new context, the caller's until core_sha256_end frees it, or
 * NULL when out of memory. */
core_sha256_ctx *core_sha256_begin(void);
void core_sha256_update(core_sha256_ctx *c, const void *p, size_t n);
/** Writes the digest and frees c; with c NULL (or when libcrypto fails)
 * out is "". */
void core_sha256_end(core_sha256_ctx *c, char out[CORE_SHA256_HEX]);

/* Time-stamp tokens (RFC 3161; core/stamp.c, with libcrypto) */

/* A nonce as lower-case hex: at most 128 bits, and a NUL. */
#define CORE_NONCE_HEX 33

/* What a checked time-stamp reply says. */
typedef struct core_stamp {
  char time[32];  /* the TSA's time (genTime, seconds), as core_utc_now */
  long long secs; /* the same, seconds since 1970 */
  char tsa[512];  /* the signer's subject (RFC 2253; no control byte) */
  char imprint[CORE_SHA256_HEX]; /* the SHA-256 the token covers */
  int chain_checked; /* 1: the signer chains to the CA file given */
} core_stamp;

/** A time-stamp request (DER TimeStampReq, version 1) over the SHA-256
 * hex (64 lower-case digits), with a fresh random 64-bit nonce and
 * certReq set (the reply must carry the TSA's certificate). OUT: *der
 * newly allocated (core_free), *len, nonce (hex). CORE_EINPUT for a hex
 * that is no SHA-256. */
core_status core_stamp_request(const char *hex, char **der, size_t *len,
                               char nonce[CORE_NONCE_HEX], core_err *err);
/** Reads a request back (name for messages). OUT: hex, the SHA-256 it
 * asks for; nonce ("" when it has none). CORE_EINPUT when it is none. */
core_status core_stamp_request_read(const char *name, const void *der,
                                    size_t len, char hex[CORE_SHA256_HEX],
                                    char nonce[CORE_NONCE_HEX], core_err *err);
/** Checks a time-stamp reply (DER TimeStampResp, as a TSA answers and as
 * `openssl ts -reply` writes) in full: nothing after it, status granted,
 * TSTInfo version 1 over a SHA-256 imprint equal to want (when not NULL),
 * the nonce (when nonce is not NULL or ""), and a signature that verifies
 * with a signer valid at the token's time and marked for time-stamping
 * (extendedKeyUsage critical timeStamping). ca: a PEM file the signer
 * must chain to; NULL: the certificates the token carries are trusted,
 * which proves the signature and not who made it (out->chain_checked 0).
 * name is for messages. OUT: *out. CORE_EVERIFY naming name and what is
 * wrong; CORE_EINPUT when ca cannot be read. */
core_status core_stamp_check(const char *name, const void *der, size_t len,
                             const char *want, const char *nonce,
                             const char *ca, core_stamp *out, core_err *err);

/* SSH signatures (core/sshsig.c) */

/* A key's fingerprint as ssh-keygen -l shows it: "SHA256:" and 43
 * base64 digits, and a NUL. */
#define CORE_SSH_FP 52

/** Reads text (name for messages) as an armoured SSH signature (ssh-keygen
 * -Y sign; at most SIGNATURE_MAX bytes) far enough to know it is one:
 * the armour, its base64, the magic SSHSIG, version 1, a public key and a
 * namespace. OUT: ns, the namespace (no control byte); fp, the
 * fingerprint of the key it names. CORE_EVERIFY naming name when it is
 * none; it proves nothing of the signature itself, which ssh-keygen -Y
 * verify checks. */
core_status core_sshsig_read(const char *name, const char *text, size_t len,
                             char ns[64], char fp[CORE_SSH_FP], core_err *err);

/* Time */

/** Writes the UTC time as "2026-11-30T01:37:25Z" into out. Honours
 * SOURCE_DATE_EPOCH-style pinning through PREREG_NOW (seconds since the
 * epoch) so that tests are reproducible. */
void core_utc_now(char out[32]);
/** Reads back a UTC time as core_utc_now writes it: exactly
 * "YYYY-MM-DDTHH:MM:SSZ", nothing before or after, every field in range
 * (month 1-12, the day within its month, 29 February in Gregorian leap
 * years only, hour < 24, minute and second < 60). OUT: *secs seconds
 * since 1970-01-01T00:00:00Z (negative before it), untouched on error.
 * Returns CORE_OK, or CORE_EINPUT with err (may be NULL) quoting s. */
core_status core_parse_utc(const char *s, long long *secs, core_err *err);
/** Monotonic clock in seconds. */
double core_monotonic(void);

#endif
