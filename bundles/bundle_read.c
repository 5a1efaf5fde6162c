/* bundle_read.c: reading a bundle: verify it without unpacking it, and
 * extract a verified bundle safely, with bounded memory and disk.
 * SPDX-License-Identifier: MIT
 *
 * Verifying takes three passes over the file, none holding a member whole
 * unless it is small:
 *   1. the gzip stream to its end: its trailer (CRC-32, length) and that
 *      nothing follows it;
 *   2. the tar stream: every member's path, type and size against
 *      BUNDLE-MANIFEST (always first, so a member larger than declared is
 *      refused without reading it) and its SHA-256; the small members the
 *      chain needs (MANIFEST, versions/, the batches' facts, each at most
 *      BUNDLE_KEEP_MAX) are kept;
 *   3. the data members streamed into the one verifier (check.c) that a
 *      data folder goes through too, after the kept ones: rows are checked
 *      against the chain and counted as they stream.
 * A second pass is what lets rows be checked as they stream: members come
 * sorted, and versions/ sorts after batches/.
 */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bundles/bundles_internal.h"
#include "core/limits.h"

/* Problems listed before the rest are only counted. */
#define PROBLEMS_SHOWN 40

/* Helpers */

static int has_prefix(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t ls = strlen(s), lx = strlen(suffix);
  return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

static int is_hex64(const char *s) {
  for (int i = 0; i < 64; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return 0;
  return 1;
}

/* What the verifier takes whole: small, and needed before the rows. */
static int kept_whole(const char *rel) {
  return strcmp(rel, "MANIFEST") == 0 || has_prefix(rel, "versions/") ||
         (has_prefix(rel, "batches/") && !strchr(rel + 8, '/') &&
          has_suffix(rel, ".json"));
}

/* A member of the bundle that is not data (the verifier is not fed it). */
static int not_data(const char *rel) {
  return strcmp(rel, "README.md") == 0 ||
         strcmp(rel, DATA_BUNDLE_MANIFEST_SIG) == 0 ||
         has_prefix(rel, "report/") || has_prefix(rel, "original/");
}

/* What an extraction writes: the data, and of the report only what is
 * read from a bundle (verify compares the analysis with the data, and
 * reads the report's edition). */
static int extracted(const char *rel, long long size) {
  if (strcmp(rel, DATA_BUNDLE_REPORT_ANALYSIS) == 0 ||
      strcmp(rel, DATA_BUNDLE_REPORT_MD) == 0 ||
      strcmp(rel, DATA_BUNDLE_REPORT_FORMAT) == 0)
    return size <= (long long)BUNDLE_REPORT_EXTRACT_MAX;
  return !has_prefix(rel, "report/");
}

/* State */

typedef struct mf_entry {
  char *rel;
  char sha[CORE_SHA256_HEX];
  long long size;
} mf_entry;

/* One BUNDLE-MANIFEST entry and what the archive held for it. */
typedef struct member {
  int seen, bad, fed;
  char got[CORE_SHA256_HEX];
  char *data; /* kept_whole members */
  size_t len;
} member;

typedef struct reader {
  const char *path;
  core_buf *report; /* NULL: problems counted, not listed */
  size_t count;     /* problems of the bundle itself */
  char first[1024];
  int not_bundle; /* CORE_EINPUT rather than CORE_EVERIFY */
  char *id;
  mf_entry *declared; /* sorted by rel, strictly */
  size_t n_declared, cap_declared;
  member *m;    /* parallel to declared */
  char **names; /* every member's path, for duplicates */
  size_t n_names, cap_names;
  size_t n_files, kept_total, names_bytes;
  unsigned long long stream_len;  /* the tar stream's bytes, decompressed */
  unsigned long long stream_used; /* up to its last byte that is not 0 */
  int has_report;
  char bundle_sha[CORE_SHA256_HEX];
  char bm_sha[CORE_SHA256_HEX]; /* of BUNDLE-MANIFEST, second pass */
  data_check_result res;        /* the verifier's */
} reader;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
problem(reader *r, const char *who, const char *fmt, ...) {
  va_list ap;
  char msg[900];
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (r->count == 0)
    snprintf(r->first, sizeof r->first, "%s%s%s", who ? who : "",
             who ? ": " : "", msg);
  if (r->report && r->count < PROBLEMS_SHOWN)
    core_buf_printf(r->report, "%s: %s%s%s\n", r->path, who ? who : "",
                    who ? ": " : "", msg);
  r->count++;
}

static void reader_free(reader *r) {
  for (size_t i = 0; i < r->n_declared; i++) {
    core_free(r->declared[i].rel);
    if (r->m)
      core_free(r->m[i].data);
  }
  core_free(r->declared);
  core_free(r->m);
  core_names_free(r->names, r->n_names);
  core_free(r->id);
}

static int add_name(reader *r, const char *name) {
  char **v;
  r->names_bytes += strlen(name) + 1 + sizeof *v;
  if (r->names_bytes > BUNDLE_NAMES_TOTAL_MAX) {
    problem(r, NULL,
            "its members' names take more than %u MiB: no bundle prereg "
            "writes, so it is not read further",
            BUNDLE_NAMES_TOTAL_MAX >> 20);
    return 0;
  }
  v = core_grow(r->names, &r->cap_names, r->n_names, sizeof *v, 256);
  if (!v) {
    problem(r, NULL, "out of memory");
    return 0;
  }
  r->names = v;
  if (!(r->names[r->n_names] = core_strdup(name))) {
    problem(r, NULL, "out of memory");
    return 0;
  }
  r->n_names++;
  return 1;
}

static int cmp_rel(const void *a, const void *b) {
  return strcmp(((const mf_entry *)a)->rel, ((const mf_entry *)b)->rel);
}

static member *member_of(const reader *r, const char *rel, mf_entry **d) {
  mf_entry key, *e;
  key.rel = (char *)(uintptr_t)rel;
  e = r->n_declared ? bsearch(&key, r->declared, r->n_declared,
                              sizeof *r->declared, cmp_rel)
                    : NULL;
  if (d)
    *d = e;
  return e ? &r->m[e - r->declared] : NULL;
}

/* BUNDLE-MANIFEST */

static int push_declared(reader *r, const char *rel, size_t n, const char *sha,
                         long long size) {
  mf_entry *v =
      core_grow(r->declared, &r->cap_declared, r->n_declared, sizeof *v, 64);
  if (!v)
    return 0;
  r->declared = v;
  if (!(v[r->n_declared].rel = core_strndup(rel, n)))
    return 0;
  memcpy(v[r->n_declared].sha, sha, 64);
  v[r->n_declared].sha[64] = '\0';
  v[r->n_declared].size = size;
  r->n_declared++;
  return 1;
}

/* One "SHA256 SIZE PATH" line; 0 when it is not one, in order. */
static int declared_line(reader *r, const char *p, const char *eol, int *oom) {
  char *endn, *rel;
  const char *sp;
  long long size;
  int ok;
  if (eol - p < 68 || !is_hex64(p) || p[64] != ' ' || p[65] < '0' ||
      p[65] > '9')
    return 0;
  errno = 0;
  size = strtoll(p + 65, &endn, 10);
  if (errno || endn >= eol || *endn != ' ' || size < 0)
    return 0;
  sp = endn + 1;
  if (!(rel = core_strndup(sp, (size_t)(eol - sp)))) {
    *oom = 1;
    return 0;
  }
  /* Strictly sorted: no duplicates, and bsearch works. */
  ok = data_safe_rel(rel) && strcmp(rel, DATA_BUNDLE_MANIFEST) != 0 &&
       (!r->n_declared || strcmp(r->declared[r->n_declared - 1].rel, rel) < 0);
  core_free(rel);
  if (ok && !push_declared(r, sp, (size_t)(eol - sp), p, size))
    *oom = 1;
  return ok && !*oom;
}

/* The declared sizes, summed before any member is read: every byte of
 * every member is in the tar stream (sparse members are refused), so a
 * list declaring more than the stream holds is false, and nothing is
 * digested on its word. */
static int declared_fit(reader *r, const char *name) {
  unsigned long long total = 0;
  for (size_t i = 0; i < r->n_declared; i++) {
    unsigned long long size = (unsigned long long)r->declared[i].size;
    total = size > ULLONG_MAX - total ? ULLONG_MAX : total + size;
  }
  if (total <= r->stream_len)
    return 1;
  problem(r, name,
          "declares %llu bytes of members, more than the whole archive "
          "holds (%llu): the archive is truncated, or the bundle altered",
          total, r->stream_len);
  return 0;
}

/* Parses BUNDLE-MANIFEST. Returns 0 when the bundle cannot be checked
 * further (the problem is recorded). */
static int parse_bundle_manifest(reader *r, const char *name, const char *text,
                                 size_t len) {
  const char *p = text, *end = text + len;
  size_t line = 1, hl = strlen(DATA_BUNDLE_HEADER);
  int oom = 0;
  if (len < hl + 1 || memcmp(text, DATA_BUNDLE_HEADER "\n", hl + 1) != 0) {
    r->not_bundle = 1;
    problem(r, name,
            "does not start with \"" DATA_BUNDLE_HEADER "\": not a prereg "
            "bundle");
    return 0;
  }
  for (p += hl + 1; p < end; line++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl || !declared_line(r, p, nl, &oom)) {
      if (oom)
        problem(r, name, "out of memory");
      else
        problem(r, name,
                "line %zu is not \"SHA256 SIZE PATH\" in sorted order: the "
                "bundle was altered",
                line + 1);
      return 0;
    }
    p = nl + 1;
  }
  if (!declared_fit(r, name))
    return 0;
  if (!(r->m = core_calloc(r->n_declared ? r->n_declared : 1, sizeof *r->m))) {
    problem(r, name, "out of memory");
    return 0;
  }
  return 1;
}

/* Reading the archive */

typedef struct fd_src {
  int fd;
  char block[65536];
  core_sha256_ctx *sha; /* of the bundle's bytes, as read */
} fd_src;

static la_ssize_t fd_read_cb(struct archive *a, void *ud, const void **buf) {
  fd_src *src = ud;
  ssize_t n;
  do
    n = read(src->fd, src->block, sizeof src->block);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    archive_set_error(a, errno, "%s", strerror(errno));
    return -1;
  }
  if (src->sha)
    core_sha256_update(src->sha, src->block, (size_t)n);
  *buf = src->block;
  return n;
}

/* How a pass reads a member's data: into a digest, a kept copy (exactly
 * its declared size, allocated once), the verifier, the disk. */
typedef struct sink {
  char *keep; /* NULL: not kept */
  data_check *chk;
  struct archive *disk;
} sink;

/* Reads the current member's data, at most size bytes (its declared
 * size: checked against the header before), into the sinks. Returns 0 on
 * a read error (the problem recorded). OUT: got its SHA-256. */
static int read_member(struct archive *a, reader *r, const char *name,
                       long long size, sink *k, char got[CORE_SHA256_HEX]) {
  char chunk[65536];
  core_sha256_ctx *c = core_sha256_begin();
  long long total = 0;
  la_ssize_t n;
  if (!c) {
    problem(r, name, "out of memory");
    return 0;
  }
  while ((n = archive_read_data(a, chunk, sizeof chunk)) > 0) {
    if (total + n > size) /* cannot happen past the header check; belt */
      break;
    core_sha256_update(c, chunk, (size_t)n);
    if (k->keep)
      memcpy(k->keep + total, chunk, (size_t)n);
    if (k->chk)
      data_check_file_data(k->chk, chunk, (size_t)n);
    total += n;
    if (k->disk && archive_write_data(k->disk, chunk, (size_t)n) != n) {
      const char *msg = archive_error_string(k->disk);
      problem(r, name, "cannot extract: %s", msg ? msg : "write error");
      core_sha256_end(c, got);
      return 0;
    }
  }
  core_sha256_end(c, got);
  if (n < 0 || total != size) {
    const char *msg = archive_error_string(a);
    problem(r, name,
            "truncated or damaged archive (%lld of %lld bytes read%s%s)",
            total, size, msg ? ": " : "", msg ? msg : "");
    return 0;
  }
  return 1;
}

/* Creates member name on disk with mode perm; 0 (a problem named) when it
 * cannot. */
static int extract_header(struct archive *disk, struct archive_entry *e,
                          unsigned perm, reader *r, const char *name) {
  const char *msg;
  archive_entry_set_perm(e, perm);
  if (archive_write_header(disk, e) == ARCHIVE_OK)
    return 1;
  msg = archive_error_string(disk);
  problem(r, name, "cannot extract: %s", msg ? msg : "?");
  return 0;
}

enum pass { PASS_MEMBERS, PASS_DATA, PASS_EXTRACT };

typedef struct scanning {
  reader *r;
  enum pass pass;
  data_check *chk;      /* PASS_DATA */
  struct archive *disk; /* PASS_EXTRACT */
  int saw_bm;
} scanning;

/* The checks of a member's name and type every pass makes (the first
 * records the problems). OUT: *rel the path inside the bundle's folder
 * (borrowed from name), or NULL when the member is no file to read.
 * Returns 0 when the pass must stop. */
static int entry_name(scanning *sc, struct archive_entry *e, char *name,
                      const char **rel) {
  reader *r = sc->r;
  int first = sc->pass == PASS_MEMBERS;
  mode_t type = archive_entry_filetype(e);
  size_t idlen;
  *rel = NULL;
  if (type == AE_IFDIR && strlen(name) > 1 && name[strlen(name) - 1] == '/')
    name[strlen(name) - 1] = '\0'; /* folders may come with a slash */
  if (name[0] == '/' || !data_safe_rel(name)) {
    if (first)
      problem(r, name,
              name[0] == '/' ? "absolute path: a bundle holds only paths "
                               "inside its folder"
                             : "path escapes the bundle's folder or has a "
                               "\"..\", \".\", empty or control-character "
                               "component");
    return 1;
  }
  idlen = strcspn(name, "/");
  if (!r->id) {
    if (!data_valid_id(name, idlen)) {
      r->not_bundle = 1;
      problem(r, name,
              "not a prereg bundle: the first member must be the "
              "experiment's folder ID/");
      return 0;
    }
    if (!(r->id = core_strndup(name, idlen)))
      return 0;
  } else if (strlen(r->id) != idlen || strncmp(name, r->id, idlen) != 0) {
    if (first)
      problem(r, name, "outside the bundle's folder %s/", r->id);
    return 1;
  }
  if (first && !add_name(r, name))
    return 0;
  if (archive_entry_hardlink(e) || type == AE_IFLNK) {
    if (first && archive_entry_hardlink(e))
      problem(r, name, "a hard link to %s: a bundle holds regular files only",
              archive_entry_hardlink(e));
    else if (first) {
      const char *t = archive_entry_symlink(e);
      problem(r, name,
              "a symbolic link to %s: a bundle holds regular files only",
              t ? t : "?");
    }
    return 1;
  }
  if (type == AE_IFDIR) {
    /* Extracted folders stay writable by their owner so the temporary
     * copy can be removed; the files stay 0444. */
    return sc->pass != PASS_EXTRACT ||
           extract_header(sc->disk, e, 0755, r, name);
  }
  if (type == AE_IFREG && archive_entry_sparse_count(e) > 0) {
    /* Its holes would be read as zeros that the archive never held. */
    if (first)
      problem(r, name,
              "a sparse file: a bundle holds regular files only, every "
              "byte stored");
    return 1;
  }
  if (type != AE_IFREG || name[idlen] != '/') {
    if (first)
      problem(r, name,
              type != AE_IFREG ? "not a regular file or folder"
                               : "a file where the bundle's folder should be");
    return 1;
  }
  *rel = name + idlen + 1;
  return 1;
}

/* BUNDLE-MANIFEST, the first file: read whole (it is bounded) and, in the
 * first pass, parsed. Returns 0 when the pass must stop. */
static int bundle_manifest(scanning *sc, struct archive *a,
                           struct archive_entry *e, const char *name,
                           const char *rel) {
  reader *r = sc->r;
  long long size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
  char got[CORE_SHA256_HEX];
  sink k = {NULL, NULL, NULL};
  int ok;
  if (strcmp(rel, DATA_BUNDLE_MANIFEST) != 0) {
    r->not_bundle = 1;
    problem(
        r, name,
        "not a prereg bundle: the first file must be %s/" DATA_BUNDLE_MANIFEST,
        r->id);
    return 0;
  }
  if (size < 0 || size > (long long)BUNDLE_MANIFEST_MAX) {
    problem(r, name, "implausible size %lld", size);
    return 0;
  }
  if (sc->pass == PASS_EXTRACT && !extract_header(sc->disk, e, 0444, r, name))
    return 0;
  k.disk = sc->pass == PASS_EXTRACT ? sc->disk : NULL;
  if (!(k.keep = core_malloc((size_t)size + 1))) {
    problem(r, name, "out of memory");
    return 0;
  }
  ok = read_member(a, r, name, size, &k, got);
  if (ok && sc->pass == PASS_MEMBERS) {
    memcpy(r->bm_sha, got, sizeof got);
    ok = parse_bundle_manifest(r, name, k.keep, (size_t)size);
  } else if (ok && strcmp(got, r->bm_sha) != 0) {
    problem(r, name, "changed between two readings");
    ok = 0;
  }
  core_free(k.keep);
  sc->saw_bm = 1;
  return ok;
}

/* A member other than BUNDLE-MANIFEST in the first pass: declared, of its
 * declared size and digest; the small ones the chain needs are kept. */
static int member_first(scanning *sc, struct archive *a,
                        struct archive_entry *e, const char *name,
                        const char *rel) {
  reader *r = sc->r;
  mf_entry *d;
  member *m = member_of(r, rel, &d);
  long long size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
  sink k = {NULL, NULL, NULL};
  if (!m) {
    problem(r, name,
            "not listed in %s/" DATA_BUNDLE_MANIFEST
            " (a file added, or that list altered)",
            r->id);
    return 1;
  }
  if (m->seen) {
    problem(r, name, "appears twice in the bundle");
    return 1;
  }
  m->seen = 1;
  if (size != d->size) {
    m->bad = 1;
    problem(r, name,
            "%s than %s/" DATA_BUNDLE_MANIFEST " says (%lld bytes, declared "
            "%lld)%s",
            size > d->size ? "larger" : "smaller", r->id, size, d->size,
            size > d->size ? "; not read past the declared size" : "");
    return 1;
  }
  if (kept_whole(rel)) {
    if (size > (long long)BUNDLE_KEEP_MAX ||
        r->kept_total + (size_t)size > BUNDLE_KEEP_TOTAL_MAX) {
      m->bad = 1;
      problem(r, name,
              "%lld bytes: far larger than any %s prereg writes, so it is not "
              "read",
              size,
              has_prefix(rel, "versions/") ? "version file" : "such file");
      return 1;
    }
    if (!(k.keep = m->data = core_malloc((size_t)size + 1))) {
      problem(r, name, "out of memory");
      return 0;
    }
    m->len = (size_t)size;
    r->kept_total += (size_t)size;
  }
  if (!read_member(a, r, name, size, &k, m->got))
    return 0;
  r->n_files++;
  r->has_report |= has_prefix(rel, "report/");
  if (strcmp(m->got, d->sha) != 0) {
    m->bad = 1;
    problem(r, name,
            "content differs from its entry in %s/" DATA_BUNDLE_MANIFEST
            " (sha256 %s, declared %s)",
            r->id, m->got, d->sha);
  }
  return 1;
}

/* A member in the later passes: streamed to the verifier, or to disk,
 * digest checked again so that a file changed between passes is caught. */
static int member_later(scanning *sc, struct archive *a,
                        struct archive_entry *e, const char *name,
                        const char *rel) {
  reader *r = sc->r;
  mf_entry *d;
  member *m = member_of(r, rel, &d);
  char got[CORE_SHA256_HEX];
  sink k = {NULL, NULL, NULL};
  int ok;
  (void)e;
  if (!m || !m->seen || m->bad || m->fed)
    return 1;
  if (sc->pass == PASS_DATA) {
    if (m->data || not_data(rel))
      return 1;
    k.chk = sc->chk;
    data_check_file_begin(sc->chk, rel, 0);
  } else {
    if (!extracted(rel, d->size))
      return 1;
    if (!extract_header(sc->disk, e, 0444, r, name))
      return 0;
    k.disk = sc->disk;
  }
  m->fed = 1;
  ok = read_member(a, r, name, d->size, &k, got);
  if (k.chk)
    data_check_file_end(sc->chk);
  if (ok && strcmp(got, d->sha) != 0)
    problem(r, name, "changed between two readings");
  return ok;
}

/* The caps on a member's name and on the number of members (folders
 * count): 0 (the first pass says why) when the pass must stop. */
static int within_caps(scanning *sc, const char *raw, size_t entries) {
  size_t len = strlen(raw), depth = 0;
  const char *why = NULL;
  for (size_t i = 0; i + 1 < len; i++)
    depth += raw[i] == '/';
  if (entries > BUNDLE_MEMBERS_MAX)
    why = "more members than any bundle prereg writes";
  else if (len > BUNDLE_NAME_MAX)
    why = "a member's name longer than any prereg writes";
  else if (depth >= BUNDLE_DEPTH_MAX)
    why = "a member more folders deep than any prereg writes";
  if (why && sc->pass == PASS_MEMBERS)
    problem(sc->r, NULL,
            "%s (at most %u members, names of %u bytes, %d "
            "levels): it is not read further",
            why, BUNDLE_MEMBERS_MAX, BUNDLE_NAME_MAX, BUNDLE_DEPTH_MAX);
  return !why;
}

/* One member of the current pass; 0 when the pass must stop. */
static int one_member(scanning *sc, struct archive *a, struct archive_entry *e,
                      size_t entries) {
  const char *raw = archive_entry_pathname(e), *rel;
  char *name;
  int go;
  if (!raw || !*raw) {
    if (sc->pass == PASS_MEMBERS)
      problem(sc->r, NULL, "a member has no usable name");
    return 1;
  }
  if (!within_caps(sc, raw, entries))
    return 0;
  if (!(name = core_strdup(raw))) {
    problem(sc->r, NULL, "out of memory");
    return 0;
  }
  go = entry_name(sc, e, name, &rel);
  if (go && rel && !sc->saw_bm)
    go = bundle_manifest(sc, a, e, name, rel);
  else if (go && rel && sc->pass == PASS_MEMBERS)
    go = member_first(sc, a, e, name, rel);
  else if (go && rel)
    go = member_later(sc, a, e, name, rel);
  core_free(name);
  return go;
}

/* One pass over the archive. */
static void scan(reader *r, int fd, enum pass pass, data_check *chk,
                 struct archive *disk) {
  struct archive *a = archive_read_new();
  struct archive_entry *e;
  fd_src *src = core_malloc(sizeof *src);
  scanning sc = {r, pass, chk, disk, 0};
  size_t entries = 0;
  int st;
  if (!a || !src || lseek(fd, 0, SEEK_SET) != 0) {
    problem(r, NULL, "cannot read the bundle: %s",
            a && src ? strerror(errno) : "out of memory");
    goto done;
  }
  src->fd = fd;
  src->sha = pass == PASS_MEMBERS ? core_sha256_begin() : NULL;
  archive_read_support_filter_gzip(a);
  archive_read_support_format_tar(a);
  if (archive_read_open(a, src, NULL, fd_read_cb, NULL) != ARCHIVE_OK) {
    r->not_bundle = 1;
    problem(r, NULL,
            "not a prereg bundle (not a gzip-compressed tar "
            "archive)");
    goto done;
  }
  while ((st = archive_read_next_header(a, &e)) != ARCHIVE_EOF) {
    if (st != ARCHIVE_OK && st != ARCHIVE_WARN) {
      const char *msg = archive_error_string(a);
      if (entries == 0 && archive_format(a) == 0)
        r->not_bundle = 1;
      problem(r, NULL,
              entries == 0 && archive_format(a) == 0
                  ? "not a prereg bundle (not a gzip-compressed tar "
                    "archive%s%s)"
                  : "truncated or damaged archive%s%s",
              msg ? ": " : "", msg ? msg : "");
      goto done;
    }
    if (!one_member(&sc, a, e, ++entries))
      goto done;
  }
  if (pass == PASS_MEMBERS &&
      (unsigned long long)archive_filter_bytes(a, 0) < r->stream_used)
    /* A second archive, or anything else, after the end-of-archive
     * blocks: what a reader's tar might extract, never verified here. */
    problem(r, NULL,
            "bytes follow the end of the archive inside the compressed "
            "stream: the bundle was altered");
  if (!sc.saw_bm) {
    r->not_bundle = 1;
    problem(r, NULL, "not a prereg bundle: no " DATA_BUNDLE_MANIFEST);
  }
  if (src->sha) {
    /* Drain what libarchive left unread (end-of-archive padding) so the
     * digest is the whole file's. */
    char tail[65536];
    ssize_t n;
    while ((n = read(fd, tail, sizeof tail)) > 0)
      core_sha256_update(src->sha, tail, (size_t)n);
  }
done:
  if (src && src->sha)
    core_sha256_end(src->sha, r->bundle_sha);
  if (a)
    archive_read_free(a);
  core_free(src);
}

/* Checks of the whole */

/* CRC-32 as gzip's trailer has it (ISO 3309), for the check below:
 * libarchive does not compare the trailer with the data. */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n) {
  static uint32_t table[256];
  static int ready;
  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = 1;
  }
  crc = ~crc;
  while (n--)
    crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

/* Counts n more bytes of the tar stream, and where its last byte that is
 * not 0 ends; 0 when the stream is now longer than cap. */
static int stream_grows(reader *s, const char *chunk, la_ssize_t n,
                        unsigned long long cap) {
  la_ssize_t last = n;
  while (last > 0 && chunk[last - 1] == 0)
    last--;
  if (last > 0)
    s->stream_used = s->stream_len + (unsigned long long)last;
  s->stream_len += (unsigned long long)n;
  return s->stream_len <= cap;
}

/* One gzip member whose trailer ends the file: anything appended, or a
 * trailer changed, makes a different file than the one published. */
static int trailer_matches(int fd, uint32_t crc, uint32_t isize) {
  unsigned char t[8];
  struct stat sb;
  return fstat(fd, &sb) == 0 && sb.st_size >= 18 &&
         pread(fd, t, 8, sb.st_size - 8) == 8 &&
         ((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 |
          (uint32_t)t[3] << 24) == crc &&
         ((uint32_t)t[4] | (uint32_t)t[5] << 8 | (uint32_t)t[6] << 16 |
          (uint32_t)t[7] << 24) == isize;
}

/* The whole compressed stream, decompressed once to its end: libarchive's
 * tar reader stops at the end-of-archive blocks and would never notice a
 * gzip trailer (CRC, length) cut off or damaged after them. Also tells a
 * damaged bundle (gzip, exit 1) from a file that is none (exit 2). */
static int stream_intact(reader *s, int fd) {
  struct archive *a = archive_read_new();
  struct archive_entry *e;
  fd_src *src = core_malloc(sizeof *src);
  char *chunk = core_malloc(65536);
  la_ssize_t n = 0;
  int ok = 0, r = ARCHIVE_FATAL;
  uint32_t crc = 0, isize = 0;
  struct stat sb;
  unsigned long long cap = 0;
  if (fstat(fd, &sb) == 0 && sb.st_size > 0)
    cap = (unsigned long long)sb.st_size * BUNDLE_GZIP_RATIO_MAX;
  if (!a || !src || !chunk) {
    problem(s, NULL, "out of memory");
    goto done;
  }
  src->fd = fd;
  src->sha = NULL;
  archive_read_support_filter_gzip(a);
  archive_read_support_format_raw(a);
  if (archive_read_open(a, src, NULL, fd_read_cb, NULL) == ARCHIVE_OK)
    r = archive_read_next_header(a, &e);
  if (archive_filter_count(a) < 2 ||
      archive_filter_code(a, 0) != ARCHIVE_FILTER_GZIP) {
    unsigned char magic[2] = {0, 0};
    /* A gzip stream too short for libarchive to accept is damaged, not
     * something else. */
    if (pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
      problem(s, NULL,
              "truncated or damaged archive (gzip stream "
              "cut short)");
    else {
      s->not_bundle = 1;
      problem(s, NULL,
              "not a prereg bundle (not a gzip-compressed "
              "tar archive)");
    }
    goto done;
  }
  if (r == ARCHIVE_OK || r == ARCHIVE_WARN)
    while ((n = archive_read_data(a, chunk, 65536)) > 0 &&
           stream_grows(s, chunk, n, cap)) {
      crc = crc32_update(crc, (const unsigned char *)chunk, (size_t)n);
      isize += (uint32_t)n;
    }
  if (n > 0) {
    problem(s, NULL,
            "its compressed stream grows more than %llu times its size: no "
            "bundle prereg writes, so it is not read further",
            BUNDLE_GZIP_RATIO_MAX);
    goto done;
  }
  if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
    n = -1;
  if (n < 0) {
    const char *msg = archive_error_string(a);
    problem(s, NULL, "truncated or damaged archive (gzip%s%s)",
            msg ? ": " : "", msg ? msg : "");
    goto done;
  }
  if (!trailer_matches(fd, crc, isize)) {
    problem(s, NULL,
            "damaged archive: the gzip trailer (CRC-32 and "
            "length) does not match the data, or bytes "
            "follow it");
    goto done;
  }
  ok = 1;
done:
  if (a)
    archive_read_free(a);
  core_free(src);
  core_free(chunk);
  if (lseek(fd, 0, SEEK_SET) != 0 && ok) {
    problem(s, NULL, "cannot read it again: %s", strerror(errno));
    ok = 0;
  }
  return ok;
}

/* The chain: versions, then batches */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What the first pass can only tell at its end: duplicate names, and
 * declared members that never came. */
static void after_members(reader *r) {
  char name[PATH_MAX];
  qsort(r->names, r->n_names, sizeof *r->names, cmp_str);
  for (size_t i = 1; i < r->n_names; i++)
    if (strcmp(r->names[i - 1], r->names[i]) == 0 &&
        (i < 2 || strcmp(r->names[i - 2], r->names[i]) != 0))
      problem(r, r->names[i], "appears more than once in the bundle");
  for (size_t i = 0; i < r->n_declared; i++) {
    snprintf(name, sizeof name, "%s/%s", r->id, r->declared[i].rel);
    if (!r->m[i].seen)
      problem(r, name,
              "listed in %s/" DATA_BUNDLE_MANIFEST " but missing from the "
              "bundle (a file removed, or that list altered)",
              r->id);
  }
}

/* The kept members go to the verifier first (MANIFEST, versions, facts),
 * then the third pass streams the data. */
static void feed_kept(reader *r, data_check *chk) {
  member *man = member_of(r, "MANIFEST", NULL);
  if (man && man->data && !man->bad)
    data_check_manifest(chk, man->data, man->len);
  else if (!man)
    data_check_manifest(chk, NULL, 0);
  else
    data_check_problem(chk, "MANIFEST", "damaged in the bundle (above)");
  for (int facts = 0; facts < 2; facts++)
    for (size_t i = 0; i < r->n_declared; i++) {
      const char *rel = r->declared[i].rel;
      member *m = &r->m[i];
      if (!kept_whole(rel) || strcmp(rel, "MANIFEST") == 0 ||
          has_prefix(rel, "versions/") == facts)
        continue;
      if (!m->seen)
        continue; /* said missing, by both */
      if (!m->data || m->bad) {
        data_check_problem(chk, rel, "damaged in the bundle (above)");
        continue;
      }
      if (facts)
        data_check_facts(chk, rel, m->data, m->len);
      else
        data_check_version(chk, rel, m->data, m->len);
    }
  /* Data members found bad above are not read again: the verifier is told
   * so, rather than that they are missing. */
  for (size_t i = 0; i < r->n_declared; i++)
    if (r->m[i].seen && r->m[i].bad && !kept_whole(r->declared[i].rel) &&
        !not_data(r->declared[i].rel))
      data_check_problem(chk, r->declared[i].rel,
                         "damaged in the bundle (above)");
}

static core_status verify_fd(const char *path, int fd, reader *r,
                             core_buf *report, core_err *err) {
  core_buf chk_out;
  core_status st = CORE_OK;
  memset(r, 0, sizeof *r);
  r->path = path;
  r->report = report;
  core_buf_init(&chk_out);
  if (stream_intact(r, fd))
    scan(r, fd, PASS_MEMBERS, NULL, NULL);
  if (!r->not_bundle && r->m) {
    char *where = core_asprintf("%s: %s/", path, r->id);
    data_check *chk = where ? data_check_new(where, &chk_out) : NULL;
    core_free(where);
    after_members(r);
    if (!chk)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    feed_kept(r, chk);
    scan(r, fd, PASS_DATA, chk, NULL);
    if ((st = data_check_end(chk, &r->res, err)) != CORE_OK) {
      core_buf_free(&chk_out);
      return st;
    }
    if (report && chk_out.len)
      core_buf_append(report, chk_out.data, chk_out.len);
    if (r->count == 0 && r->res.problems && chk_out.data) {
      /* The first problem the verifier found, for the message. */
      const char *p = chk_out.data;
      while (strncmp(p, "note: ", 6) == 0 && strchr(p, '\n'))
        p = strchr(p, '\n') + 1;
      snprintf(r->first, sizeof r->first, "%.*s",
               (int)strcspn(p + strlen(path) + 2, "\n"), p + strlen(path) + 2);
    }
  }
  core_buf_free(&chk_out);
  if (r->count == 0 && r->res.problems == 0)
    return CORE_OK;
  {
    size_t total = r->count + (size_t)r->res.problems;
    return core_fail(err, r->not_bundle ? CORE_EINPUT : CORE_EVERIFY,
                     "%s: %s%s", path, r->first,
                     total > 1 ? " (and more problems: see the report)" : "");
  }
}

/* Opened like every other input (core_open_regular): looked at before
 * it is opened and again once open, never waited on. A FIFO, a device
 * or a folder is no bundle: bad input, refused at once. */
static int open_bundle(const char *path, core_err *err) {
  struct stat sb;
  int fd;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    core_not_regular(err, path, (unsigned)sb.st_mode);
    if (err)
      err->status = CORE_EINPUT;
    return -1;
  }
  if (core_open_regular(path, 1, &fd, NULL, err) != CORE_OK)
    return -1;
  return fd;
}

core_status data_bundle_verify(const char *path, core_buf *report,
                               core_err *err) {
  reader r;
  core_status st;
  int fd = open_bundle(path, err);
  if (fd < 0)
    return err ? err->status : CORE_EIO;
  st = verify_fd(path, fd, &r, report, err);
  close(fd);
  if (st == CORE_OK && report)
    core_buf_printf(report,
                    "%s: ok: experiment %s, %zu files, versions v0..v%zu, "
                    "%zu batch%s (%zu rows), %s\n",
                    path, r.id, r.n_files + 1,
                    r.res.versions ? r.res.versions - 1 : 0, r.res.batches,
                    r.res.batches == 1 ? "" : "es", r.res.rows,
                    r.has_report ? "report included" : "no report");
  /* The status line, as a folder's verify prints it, whatever the
   * verdict. */
  if (report && r.res.status[0])
    core_buf_printf(report, "%s: %s\n", path, r.res.status);
  if (st == CORE_OK && report)
    core_buf_printf(report,
                    "%s: sha256 %s (compare with the one the author "
                    "published)\n",
                    path, r.bundle_sha);
  reader_free(&r);
  return st;
}

/* Temporary copies */

/* Temporary copies made for this process, removed at exit and on SIGINT,
 * SIGTERM and SIGHUP: a reader's `prereg analyze BUNDLE` leaves nothing
 * behind, also when it is killed. The signal handler cannot allocate, so
 * the folders' names are also kept in fixed storage. */
/* Folders kept in fixed storage for the signal handler (a process opens
 * one or two bundles): an array size, not a cap on input. */
#define MAX_TEMP_DIRS 8
static char **temp_dirs;
static size_t n_temp_dirs;
static char **owned_strings;
static size_t n_owned_strings;
static char sig_dirs[MAX_TEMP_DIRS][PATH_MAX];
static volatile sig_atomic_t n_sig_dirs;

static void cleanup_at_exit(void) {
  for (size_t i = 0; i < n_temp_dirs; i++) {
    core_remove_tree(temp_dirs[i], NULL);
    core_free(temp_dirs[i]);
  }
  core_free(temp_dirs);
  temp_dirs = NULL;
  n_temp_dirs = 0;
  n_sig_dirs = 0;
  for (size_t i = 0; i < n_owned_strings; i++)
    core_free(owned_strings[i]);
  core_free(owned_strings);
  owned_strings = NULL;
  n_owned_strings = 0;
}

/* Removes name under the folder dirfd and all it holds, with system calls
 * only (async-signal-safe: no allocation, no stdio). The copy is at most
 * ID/batches/BATCH/FILE deep. */
static void remove_at(int dirfd, const char *name, int depth) {
  int fd =
      openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && depth < 16) {
    char buf[4096];
    long n;
    int removed = 1;
    while (removed) {
      removed = 0;
      lseek(fd, 0, SEEK_SET);
      while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long off = 0; off < n;) {
          /* struct linux_dirent64: ino, off, reclen, type, name */
          unsigned short reclen;
          const char *dn = buf + off + 19;
          memcpy(&reclen, buf + off + 16, sizeof reclen);
          off += reclen;
          if (dn[0] == '.' && (!dn[1] || (dn[1] == '.' && !dn[2])))
            continue;
          if (unlinkat(fd, dn, 0) != 0)
            remove_at(fd, dn, depth + 1);
          removed = 1;
        }
    }
  }
  if (fd >= 0)
    close(fd);
  unlinkat(dirfd, name, AT_REMOVEDIR);
}

static void on_fatal_signal(int sig) {
  for (sig_atomic_t i = 0; i < n_sig_dirs; i++)
    remove_at(AT_FDCWD, sig_dirs[i], 0);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Catches the signals that end a reader's command (unless the program
 * handles them itself) so that the copy goes with it. */
static void cleanup_on_signals(void) {
  static int done;
  const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  if (done)
    return;
  done = 1;
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old, sa;
    if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
        (old.sa_flags & SA_SIGINFO))
      continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigfillset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
}

void data_bundle_copies_remove(void) {
  cleanup_at_exit();
}

static int remember(char ***list, size_t *n, char *s) {
  static int registered;
  char **v = core_realloc(*list, (*n + 1) * sizeof *v);
  if (!v)
    return 0;
  *list = v;
  v[(*n)++] = s;
  if (!registered && atexit(cleanup_at_exit) == 0)
    registered = 1;
  return 1;
}

/* A new temporary folder, removed at exit and on a fatal signal. OUT:
 * *dir (owned by the list). */
static core_status temp_copy(char **dir, core_err *err) {
  const char *tmp = getenv("TMPDIR");
  char *d =
      core_asprintf("%s/prereg-bundle-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  *dir = NULL;
  if (!d)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (strlen(d) >= PATH_MAX || n_sig_dirs >= MAX_TEMP_DIRS) {
    core_free(d);
    return core_fail(err, CORE_EIO,
                     "too many bundles, or a temporary folder name too long "
                     "(TMPDIR)");
  }
  cleanup_on_signals();
  if (!mkdtemp(d)) {
    core_status st =
        core_fail(err, CORE_EIO, "%s: cannot create a temporary folder: %s", d,
                  strerror(errno));
    core_free(d);
    return st;
  }
  if (!remember(&temp_dirs, &n_temp_dirs, d)) {
    rmdir(d);
    core_free(d);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  memcpy(sig_dirs[n_sig_dirs], d, strlen(d) + 1);
  n_sig_dirs++;
  *dir = d;
  return CORE_OK;
}

/* Extracting */

/* The bytes an extraction writes, against what it may (the default, or
 * PREREG_BUNDLE_MAX_MIB). */
static core_status extraction_fits(const reader *r, const char *path,
                                   core_err *err) {
  const char *env = getenv("PREREG_BUNDLE_MAX_MIB");
  unsigned long long max = BUNDLE_EXTRACT_MAX_MIB, total = 0;
  if (env && *env) {
    char *end;
    errno = 0;
    max = strtoull(env, &end, 10);
    if (errno || *end || max == 0)
      return core_fail(err, CORE_EUSAGE,
                       "PREREG_BUNDLE_MAX_MIB: '%s' is not a number of MiB; "
                       "unset it for the default (%llu)",
                       env, (unsigned long long)BUNDLE_EXTRACT_MAX_MIB);
  }
  for (size_t i = 0; i < r->n_declared; i++)
    if (extracted(r->declared[i].rel, r->declared[i].size))
      total += (unsigned long long)r->declared[i].size;
  if (total > max * 1024ull * 1024ull)
    return core_fail(err, CORE_ERUN,
                     "%s: its data would take %llu MiB once extracted, more "
                     "than the %llu MiB allowed; set PREREG_BUNDLE_MAX_MIB to "
                     "allow more",
                     path, total / (1024ull * 1024ull), max);
  return CORE_OK;
}

/* The fourth pass: writes what extracted() keeps under dir, relative to
 * the working folder (libarchive's protections against absolute paths and
 * "..", so we move into the new folder and back; single-threaded here). */
static core_status write_copy(reader *r, int fd, const char *path,
                              const char *dir, core_err *err) {
  struct archive *disk = archive_write_disk_new();
  int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  size_t before = r->count;
  core_status st = CORE_OK;
  if (!disk || cwd < 0 || chdir(dir) != 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot extract into %s: %s", path, dir,
                   disk ? strerror(errno) : "out of memory");
    goto done;
  }
  archive_write_disk_set_options(
      disk, ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
  r->report = NULL;
  for (size_t i = 0; i < r->n_declared; i++)
    r->m[i].fed = 0;
  scan(r, fd, PASS_EXTRACT, NULL, disk);
  if (archive_write_close(disk) != ARCHIVE_OK && r->count == before) {
    const char *msg = archive_error_string(disk);
    problem(r, NULL, "cannot extract: %s", msg ? msg : "?");
  }
  if (fchdir(cwd) != 0)
    st = core_fail(err, CORE_EIO, "cannot return to the working folder: %s",
                   strerror(errno));
  else if (r->count != before)
    st = core_fail(err, CORE_EVERIFY, "%s: %s", path, r->first);
done:
  if (disk)
    archive_write_free(disk);
  if (cwd >= 0)
    close(cwd);
  return st;
}

core_status data_bundle_extract(const char *path, char **data_dir,
                                char **sheet_path, core_err *err) {
  reader r;
  core_status st;
  char *dir = NULL;
  int fd;
  *data_dir = NULL;
  *sheet_path = NULL;
  if ((fd = open_bundle(path, err)) < 0)
    return err ? err->status : CORE_EIO;
  if ((st = verify_fd(path, fd, &r, NULL, err)) != CORE_OK ||
      (st = extraction_fits(&r, path, err)) != CORE_OK ||
      (st = temp_copy(&dir, err)) != CORE_OK ||
      (st = write_copy(&r, fd, path, dir, err)) != CORE_OK)
    goto cleanup;
  *data_dir = core_strdup(dir);
  *sheet_path = core_asprintf("%s/%s/versions/v%zu.lua", dir, r.id,
                              r.res.versions ? r.res.versions - 1 : 0);
  if (!*data_dir || !*sheet_path) {
    core_free(*data_dir);
    core_free(*sheet_path);
    *data_dir = *sheet_path = NULL;
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  }
cleanup:
  close(fd);
  reader_free(&r);
  if (st != CORE_OK && dir)
    core_remove_tree(dir, NULL); /* the list frees the name at exit */
  return st;
}

int data_is_bundle(const char *arg) {
  return arg && (has_suffix(arg, ".tar.gz") || has_suffix(arg, ".tgz"));
}

core_status data_resolve_input(const char *arg, const char *data_dir,
                               const char **sheet_path,
                               const char **data_dir_out, int *is_bundle,
                               core_err *err) {
  char *dd = NULL, *sp = NULL;
  core_status st;
  if (is_bundle)
    *is_bundle = 0;
  if (!data_is_bundle(arg)) {
    *sheet_path = arg;
    *data_dir_out = data_dir;
    return CORE_OK;
  }
  st = data_bundle_extract(arg, &dd, &sp, err);
  if (st != CORE_OK)
    return st;
  if (!remember(&owned_strings, &n_owned_strings, dd)) {
    core_free(dd);
    core_free(sp);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if (!remember(&owned_strings, &n_owned_strings, sp)) {
    core_free(sp);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  *sheet_path = sp;
  *data_dir_out = dd;
  if (is_bundle)
    *is_bundle = 1;
  return CORE_OK;
}
