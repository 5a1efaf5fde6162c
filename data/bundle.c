/* bundle.c: publish an experiment as one deterministic .tar.gz, verify a
 * bundle without unpacking it, and extract a verified bundle safely.
 * SPDX-License-Identifier: MIT
 *
 * The format (documented for readers in data.h and in each README.md):
 *   ID/                    folder entries are mode 0555
 *   ID/BUNDLE-MANIFEST     always the first file: "# prereg bundle 1", then
 *                          "SHA256 SIZE PATH" for every other file, sorted
 *   ID/MANIFEST            the data folder's manifest, byte for byte
 *   ID/README.md           generated for the reader
 *   ID/report/...          the rendered report, when there was one
 *   ID/versions/...        every file the MANIFEST lists, byte for byte
 *   ID/batches/...
 * Files are mode 0444, owner 0:0 with empty names, mtime the newest time
 * recorded in the data; members after BUNDLE-MANIFEST are in bytewise
 * order of their paths; the gzip header carries no time and no name. So
 * the same data always give the same bytes.
 *
 * Putting BUNDLE-MANIFEST first lets a reader check every member while
 * streaming: its declared size is known before its header arrives, so a
 * member larger than declared is refused without reading it, and nothing
 * ever needs unpacking to check a bundle.
 */
#define _XOPEN_SOURCE 700
#include <archive.h>
#include <archive_entry.h>
#include <csv.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data.h"

#define BUNDLE_HEADER "# prereg bundle 1"
#define BUNDLE_MANIFEST "BUNDLE-MANIFEST"
/* A BUNDLE-MANIFEST larger than this is not one we wrote. */
#define BUNDLE_MANIFEST_MAX (64u * 1024u * 1024u)
/* Problems listed per file before the rest are only counted. */
#define PROBLEMS_PER_FILE 20

/* {==== Paths ==== */

/* 1 when rel is a path we are willing to write or extract: relative,
 * '/'-separated, no empty, "." or ".." component, no control characters
 * (a newline would break the manifests' line format) and no backslash. */
static int safe_rel(const char *rel) {
  const char *p = rel, *start = rel;
  if (!rel || !*rel || *rel == '/')
    return 0;
  for (;; p++) {
    if (*p == '/' || *p == '\0') {
      size_t n = (size_t)(p - start);
      if (n == 0 || (n == 1 && start[0] == '.') ||
          (n == 2 && start[0] == '.' && start[1] == '.'))
        return 0;
      if (*p == '\0')
        return 1;
      start = p + 1;
    } else if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\') {
      return 0;
    }
  }
}

/* The contract's id pattern: [a-z0-9][a-z0-9-]*. */
static int valid_id(const char *s, size_t n) {
  if (n == 0 ||
      !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
    return 0;
  for (size_t i = 1; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
          s[i] == '-'))
      return 0;
  return 1;
}

static int has_prefix(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t ls = strlen(s), lx = strlen(suffix);
  return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/* "versions/v12.lua" -> 12 with kind ".lua"; -1 when rel is not one. */
static long version_number(const char *rel, const char *ext) {
  const char *p;
  char *end;
  long n;
  if (!has_prefix(rel, "versions/v") || !has_suffix(rel, ext))
    return -1;
  p = rel + strlen("versions/v");
  if (*p < '0' || *p > '9')
    return -1;
  errno = 0;
  n = strtol(p, &end, 10);
  if (errno || strcmp(end, ext) != 0 || n > 1000000)
    return -1;
  return n;
}

/* A top-level file of batches/ with the given extension ("b0001.csv"). */
static int is_batch_file(const char *rel, const char *ext) {
  return has_prefix(rel, "batches/") &&
         strchr(rel + strlen("batches/"), '/') == NULL && has_suffix(rel, ext);
}

/* }==== */

/* {==== Manifest lines ==== */

typedef struct mf_entry {
  char *rel;
  char sha[CORE_SHA256_HEX];
  long long size; /* BUNDLE-MANIFEST only */
} mf_entry;

typedef struct mf_list {
  mf_entry *v;
  size_t n, cap;
} mf_list;

static void mf_free(mf_list *l) {
  for (size_t i = 0; i < l->n; i++)
    core_free(l->v[i].rel);
  core_free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

static int mf_push(mf_list *l, const char *rel, size_t rel_len,
                   const char *sha, long long size) {
  mf_entry *v = core_grow(l->v, &l->cap, l->n, sizeof *v, 64);
  if (!v)
    return 0;
  l->v = v;
  l->v[l->n].rel = core_strndup(rel, rel_len);
  if (!l->v[l->n].rel)
    return 0;
  memcpy(l->v[l->n].sha, sha, 64);
  l->v[l->n].sha[64] = '\0';
  l->v[l->n].size = size;
  l->n++;
  return 1;
}

static int is_hex64(const char *s) {
  for (int i = 0; i < 64; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return 0;
  return 1;
}

static int cmp_mf(const void *a, const void *b) {
  return strcmp(((const mf_entry *)a)->rel, ((const mf_entry *)b)->rel);
}

static mf_entry *mf_find(const mf_list *l, const char *rel) {
  mf_entry key;
  key.rel = (char *)(uintptr_t)rel;
  return l->n ? bsearch(&key, l->v, l->n, sizeof *l->v, cmp_mf) : NULL;
}

/* Parses a data folder MANIFEST ("SHA256  PATH" or "SHA256 *PATH", the
 * sha256sum format) into l, sorted by path. On a bad line returns 0 and
 * puts its number in *bad_line (0 for out of memory). */
static int parse_manifest(const char *text, size_t len, mf_list *l,
                          size_t *bad_line) {
  size_t line = 0;
  const char *p = text, *end = text + len;
  *bad_line = 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *eol = nl ? nl : end;
    size_t n = (size_t)(eol - p);
    line++;
    if (n > 0) {
      char *rel;
      int ok;
      if (n < 67 || !is_hex64(p) || p[64] != ' ' ||
          (p[65] != ' ' && p[65] != '*')) {
        *bad_line = line;
        return 0;
      }
      rel = core_strndup(p + 66, n - 66);
      if (!rel)
        return 0;
      ok = safe_rel(rel);
      core_free(rel);
      if (!ok) {
        *bad_line = line;
        return 0;
      }
      if (!mf_push(l, p + 66, n - 66, p, -1))
        return 0;
    }
    p = nl ? nl + 1 : end;
  }
  qsort(l->v, l->n, sizeof *l->v, cmp_mf);
  for (size_t i = 1; i < l->n; i++)
    if (strcmp(l->v[i - 1].rel, l->v[i].rel) == 0) {
      *bad_line = (size_t)-1; /* a path listed twice */
      return 0;
    }
  return 1;
}

/* }==== */

/* {==== Problems ==== */

/* What a check found, kept in the order found. Every line names the
 * bundle (or folder) and the member. */
typedef struct problems {
  core_buf *report;
  const char *where;
  size_t count;
  char first[1024];
} problems;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
problem(problems *pr, const char *member, const char *fmt, ...) {
  va_list ap;
  char msg[900];
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (pr->count == 0)
    snprintf(pr->first, sizeof pr->first, "%s%s%s", member ? member : "",
             member ? ": " : "", msg);
  pr->count++;
  if (pr->report)
    core_buf_printf(pr->report, "%s: %s%s%s\n", pr->where,
                    member ? member : "", member ? ": " : "", msg);
}

/* }==== */

/* {==== Reading JSON facts ==== */

/* A string field of a JSON object text, newly allocated, or NULL. */
static char *json_string_field(const char *text, size_t len, const char *key) {
  json_error_t jerr;
  json_t *root = json_loadb(text, len, 0, &jerr), *v;
  char *out = NULL;
  if (!root)
    return NULL;
  v = json_object_get(root, key);
  if (json_is_string(v))
    out = core_strdup(json_string_value(v));
  else if (json_is_integer(v))
    out = core_asprintf("%lld", (long long)json_integer_value(v));
  json_decref(root);
  return out;
}

/* }==== */

/* {==== Writing a bundle ==== */

typedef struct item {
  char *rel; /* relative to the experiment folder */
  char *key; /* sort key: rel, with a trailing '/' for folders */
  int is_dir;
  char *data;
  size_t len;
  char sha[CORE_SHA256_HEX];
} item;

typedef struct item_list {
  item *v;
  size_t n, cap;
} item_list;

static void items_free(item_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    core_free(l->v[i].rel);
    core_free(l->v[i].key);
    core_free(l->v[i].data);
  }
  core_free(l->v);
}

static item *items_find(const item_list *l, const char *rel) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i].rel, rel) == 0)
      return &l->v[i];
  return NULL;
}

/* Adds a file (taking data) or a folder; 0 on out of memory. */
static int items_add(item_list *l, const char *rel, int is_dir, char *data,
                     size_t len) {
  item *it;
  item *v = core_grow(l->v, &l->cap, l->n, sizeof *v, 64);
  if (!v)
    return 0;
  l->v = v;
  it = &l->v[l->n];
  memset(it, 0, sizeof *it);
  it->rel = core_strdup(rel);
  it->key = core_asprintf("%s%s", rel, is_dir ? "/" : "");
  if (!it->rel || !it->key) {
    core_free(it->rel);
    core_free(it->key);
    return 0;
  }
  it->is_dir = is_dir;
  it->data = data;
  it->len = len;
  if (!is_dir)
    core_sha256_hex(data ? data : "", len, it->sha);
  l->n++;
  return 1;
}

static int cmp_item(const void *a, const void *b) {
  return strcmp(((const item *)a)->key, ((const item *)b)->key);
}

/* Adds every regular file under exp_dir/rel_dir (recursively) as a member.
 * Links and other special files are refused: a reader's copy must not
 * depend on where a link pointed on the publisher's machine. */
static core_status add_tree(item_list *l, const char *exp_dir,
                            const char *rel_dir, core_err *err) {
  char *abs = core_path_join(exp_dir, rel_dir);
  DIR *d;
  struct dirent *de;
  core_status st = CORE_OK;
  if (!abs)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  d = opendir(abs);
  if (!d) {
    st = core_fail(err, CORE_EIO, "%s: cannot open folder: %s", abs,
                   strerror(errno));
    core_free(abs);
    return st;
  }
  while (st == CORE_OK && (de = readdir(d)) != NULL) {
    char *rel, *path;
    struct stat sb;
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    rel = core_asprintf("%s/%s", rel_dir, de->d_name);
    path = core_path_join(exp_dir, rel ? rel : "");
    if (!rel || !path) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    } else if (!safe_rel(rel)) {
      st = core_fail(err, CORE_EINPUT,
                     "%s: a file name a bundle cannot hold (control "
                     "characters or a backslash); rename it",
                     path);
    } else if (lstat(path, &sb) != 0) {
      st = core_fail(err, CORE_EIO, "%s: %s", path, strerror(errno));
    } else if (S_ISDIR(sb.st_mode)) {
      st = add_tree(l, exp_dir, rel, err);
    } else if (S_ISREG(sb.st_mode)) {
      char *data;
      size_t len;
      st = core_read_file(path, &data, &len, err);
      if (st == CORE_OK && !items_add(l, rel, 0, data, len)) {
        core_free(data);
        st = core_fail(err, CORE_ENOMEM, "out of memory");
      }
    } else {
      st = core_fail(err, CORE_EINPUT,
                     "%s: not a regular file (a link?); a bundle holds "
                     "regular files only: replace it with a copy",
                     path);
    }
    core_free(rel);
    core_free(path);
  }
  closedir(d);
  core_free(abs);
  return st;
}

/* Adds "ID/a", "ID/a/b" ... for every member's parents. */
static int add_parents(item_list *l) {
  size_t n = l->n;
  for (size_t i = 0; i < n; i++) {
    char *copy = core_strdup(l->v[i].rel), *slash;
    if (!copy)
      return 0;
    while ((slash = strrchr(copy, '/')) != NULL) {
      *slash = '\0';
      if (!items_find(l, copy) && !items_add(l, copy, 1, NULL, 0)) {
        core_free(copy);
        return 0;
      }
    }
    core_free(copy);
  }
  return 1;
}

static void readme(core_buf *b, const char *id, const proto_sheet *sheet,
                   const item_list *l, int has_report) {
  long max_version = -1;
  size_t n_batches = 0;
  core_buf_printf(b, "# Published experiment `%s`\n\n", id);
  if (sheet && sheet->title) {
    core_buf_puts(b, "**");
    core_buf_md_escape(b, sheet->title);
    core_buf_puts(b, "**");
    if (sheet->author) {
      core_buf_puts(b, " by ");
      core_buf_md_escape(b, sheet->author);
    }
    core_buf_puts(b, "\n\n");
  }
  if (sheet && sheet->question) {
    core_buf_puts(b, "Question: ");
    core_buf_md_escape(b, sheet->question);
    core_buf_puts(b, "\n\n");
  }
  core_buf_printf(
      b,
      "This file is a bundle made by `prereg publish` (prereg %s). It holds "
      "the\nprotocol sheet as registered before any measurement, every "
      "amended version\nwith its diff, every frozen batch of raw data with "
      "its provenance, the\nmanifest of their SHA-256 digests and the "
      "report. Everything is inside the\nfolder `%s/`.\n\n",
      PREREG_VERSION, id);
  core_buf_printf(
      b,
      "## Check it and re-derive the results\n\n"
      "```\n"
      "prereg verify %s.tar.gz           # every file and the chain of "
      "versions\n"
      "prereg analyze %s.tar.gz --json   # every number, from the raw "
      "data\n"
      "prereg report %s.tar.gz --out DIR # the whole report again\n"
      "```\n\n"
      "(Use the bundle's name if it was renamed.) None of them needs the\n"
      "original sheet or data folder, and none needs the bundle unpacked. "
      "Without\nprereg, after unpacking: `cd %s && sha256sum -c MANIFEST` "
      "checks the data,\nand `BUNDLE-MANIFEST` lists the SHA-256 and size of "
      "every other file. A\nbundle cannot vouch for itself: compare its own "
      "SHA-256 with the one the\nauthor published.\n\n",
      id, id, id, id);
  core_buf_puts(b, "## What each file is\n\n| File | What it is |\n"
                   "|---|---|\n");
  core_buf_puts(b, "| `BUNDLE-MANIFEST` | SHA-256 and size of every other "
                   "file of the bundle, this README and the report "
                   "included |\n");
  core_buf_puts(b, "| `MANIFEST` | the data folder's manifest: SHA-256 of "
                   "every frozen file (`sha256sum -c` format) |\n");
  core_buf_puts(b, "| `README.md` | this file |\n");
  for (size_t i = 0; i < l->n; i++) {
    const item *it = &l->v[i];
    long v;
    if (it->is_dir)
      continue;
    if ((v = version_number(it->rel, ".lua")) >= 0) {
      const item *js;
      char *jrel = core_asprintf("versions/v%ld.json", v);
      char *filed = NULL, *why = NULL;
      js = jrel ? items_find(l, jrel) : NULL;
      if (js) {
        filed = json_string_field(js->data, js->len, "filed_at");
        why = json_string_field(js->data, js->len, "why");
      }
      if (v > max_version)
        max_version = v;
      core_buf_printf(b, "| `%s` | ", it->rel);
      if (v == 0)
        core_buf_printf(b, "the sheet as registered%s%s, before any data",
                        filed ? " on " : "", filed ? filed : "");
      else {
        core_buf_printf(b, "amended version %ld%s%s", v, filed ? " of " : "",
                        filed ? filed : "");
        if (why) {
          core_buf_puts(b, ": ");
          core_buf_md_escape(b, why);
        }
      }
      core_buf_puts(b, " |\n");
      core_free(jrel);
      core_free(filed);
      core_free(why);
    } else if (version_number(it->rel, ".json") >= 0) {
      core_buf_printf(b,
                      "| `%s` | when that version was filed, its "
                      "SHA-256, the data existing then |\n",
                      it->rel);
    } else if ((v = version_number(it->rel, ".diff")) >= 0) {
      core_buf_printf(b, "| `%s` | text diff from version %ld to %ld |\n",
                      it->rel, v - 1, v);
    } else if (is_batch_file(it->rel, ".csv")) {
      n_batches++;
      core_buf_printf(b,
                      "| `%s` | raw rows of one batch: one per run and "
                      "metric, with provenance |\n",
                      it->rel);
    } else if (is_batch_file(it->rel, ".json")) {
      char *kind = json_string_field(it->data, it->len, "kind");
      core_buf_printf(b,
                      "| `%s` | facts of that batch%s%s%s: host, image "
                      "digests, versions |\n",
                      it->rel, kind ? " (" : "", kind ? kind : "",
                      kind ? ")" : "");
      core_free(kind);
    }
  }
  /* Per-run files can be many: one line per batch folder, not per file.
   * l is sorted, so each folder's files are contiguous. */
  for (size_t i = 0; i < l->n;) {
    const char *r = l->v[i].rel, *slash;
    size_t count = 0, plen;
    if (l->v[i].is_dir || !has_prefix(r, "batches/") ||
        !(slash = strchr(r + strlen("batches/"), '/'))) {
      i++;
      continue;
    }
    plen = (size_t)(slash - r) + 1;
    while (i + count < l->n && strncmp(l->v[i + count].rel, r, plen) == 0)
      count++;
    core_buf_printf(b,
                    "| `%.*s` | %zu file%s of per-run output and "
                    "process lists (what `pss_mib` summed) |\n",
                    (int)plen, r, count, count == 1 ? "" : "s");
    i += count;
  }
  if (has_report) {
    for (size_t i = 0; i < l->n; i++)
      if (!l->v[i].is_dir && has_prefix(l->v[i].rel, "report/"))
        core_buf_printf(b,
                        "| `%s` | the report as rendered before "
                        "publishing |\n",
                        l->v[i].rel);
  }
  core_buf_printf(b, "\n%ld amended version%s, %zu batch%s.\n",
                  max_version < 0 ? 0 : max_version,
                  max_version == 1 ? "" : "s", n_batches,
                  n_batches == 1 ? "" : "es");
  if (!has_report)
    core_buf_puts(b, "\nNo report was rendered before publishing, so the "
                     "bundle has none; `prereg report` renders it from "
                     "the bundle.\n");
}

/* The newest time the data record: filing times of versions and the
 * times batch facts carry. Taking the mtime from the data, not from the
 * clock, is what makes two publications of the same data identical. */
static long long newest_time(const item_list *l) {
  static const char *const keys[] = {"filed_at", "frozen_at", "finished_at",
                                     "imported_at", "created_at"};
  long long best = 0, t;
  for (size_t i = 0; i < l->n; i++) {
    const item *it = &l->v[i];
    if (it->is_dir || !(version_number(it->rel, ".json") >= 0 ||
                        is_batch_file(it->rel, ".json")))
      continue;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
      char *s = json_string_field(it->data, it->len, keys[k]);
      if (s && core_parse_utc(s, &t, NULL) == CORE_OK && t > best)
        best = t;
      core_free(s);
    }
  }
  return best;
}

static la_ssize_t buf_write_cb(struct archive *a, void *ud, const void *p,
                               size_t n) {
  core_buf *b = ud;
  (void)a;
  core_buf_append(b, p, n);
  return b->oom ? -1 : (la_ssize_t)n;
}

static core_status archive_fail(core_err *err, struct archive *a,
                                const char *what) {
  const char *m = archive_error_string(a);
  return core_fail(err, CORE_EIO, "%s: %s", what, m ? m : "libarchive error");
}

/* Writes l (sorted; BUNDLE-MANIFEST first) as a tar.gz into out. */
static core_status write_archive(const char *id, const item_list *l,
                                 long long mtime, core_buf *out,
                                 core_err *err) {
  struct archive *a = archive_write_new();
  struct archive_entry *e = archive_entry_new();
  core_status st = CORE_OK;
  if (!a || !e) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  /* pax_restricted is ustar unless a path needs more; gzip without its
   * timestamp (libarchive's "!timestamp") and without a file name. */
  if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
      archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
      archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
      archive_write_set_filter_option(a, "gzip", "timestamp", NULL) !=
          ARCHIVE_OK ||
      archive_write_open(a, out, NULL, buf_write_cb, NULL) != ARCHIVE_OK) {
    st = archive_fail(err, a, "cannot start the bundle");
    goto cleanup;
  }
  for (int pass = 0; pass < 2 && st == CORE_OK; pass++) {
    for (size_t i = 0; i < l->n && st == CORE_OK; i++) {
      const item *it = &l->v[i];
      int is_bm = !it->is_dir && strcmp(it->rel, BUNDLE_MANIFEST) == 0;
      int is_top = it->key[0] == '\0';
      char *name;
      /* Pass 0: the top folder and BUNDLE-MANIFEST; pass 1: the rest. */
      if ((pass == 0) != (is_bm || is_top))
        continue;
      name = is_top ? core_strdup(id) : core_asprintf("%s/%s", id, it->rel);
      if (!name) {
        st = core_fail(err, CORE_ENOMEM, "out of memory");
        break;
      }
      archive_entry_clear(e);
      archive_entry_set_pathname(e, name);
      archive_entry_set_filetype(e, it->is_dir ? AE_IFDIR : AE_IFREG);
      archive_entry_set_perm(e, it->is_dir ? 0555 : 0444);
      archive_entry_set_size(e, it->is_dir ? 0 : (la_int64_t)it->len);
      archive_entry_set_uid(e, 0);
      archive_entry_set_gid(e, 0);
      archive_entry_set_mtime(e, (time_t)mtime, 0);
      if (archive_write_header(a, e) != ARCHIVE_OK)
        st = archive_fail(err, a, name);
      else if (!it->is_dir && it->len > 0 &&
               archive_write_data(a, it->data, it->len) != (la_ssize_t)it->len)
        st = archive_fail(err, a, name);
      core_free(name);
    }
  }
  if (st == CORE_OK && archive_write_close(a) != ARCHIVE_OK)
    st = archive_fail(err, a, "cannot finish the bundle");
cleanup:
  archive_entry_free(e);
  if (a)
    archive_write_free(a);
  if (st == CORE_OK && out->oom)
    st = core_fail(err, CORE_ENOMEM, "out of memory building the bundle");
  return st;
}

core_status data_bundle_write(const char *exp_dir, const proto_sheet *sheet,
                              const char *out_path,
                              char sha256[CORE_SHA256_HEX], core_err *err) {
  item_list l = {0};
  mf_list mf = {0};
  core_buf bm, rd, tgz;
  char *manifest = NULL, *mpath = NULL, *report_dir = NULL, *dir = NULL;
  size_t mlen = 0, bad_line;
  const char *id;
  int has_report;
  core_status st;

  core_buf_init(&bm);
  core_buf_init(&rd);
  core_buf_init(&tgz);
  dir = core_strdup(exp_dir);
  if (!dir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
    dir[strlen(dir) - 1] = '\0';
  id = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
  if (!valid_id(id, strlen(id))) {
    st = core_fail(err, CORE_EINPUT,
                   "%s: not an experiment folder (its name must be the "
                   "sheet's id, [a-z0-9][a-z0-9-]*)",
                   exp_dir);
    goto cleanup;
  }

  mpath = core_path_join(dir, "MANIFEST");
  if (!mpath) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  if ((st = core_read_file(mpath, &manifest, &mlen, err)) != CORE_OK)
    goto cleanup;
  if (!parse_manifest(manifest, mlen, &mf, &bad_line)) {
    if (bad_line == 0)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    else if (bad_line == (size_t)-1)
      st = core_fail(err, CORE_EVERIFY, "%s: a path is listed twice", mpath);
    else
      st = core_fail(err, CORE_EVERIFY,
                     "%s:%zu: not a \"SHA256  PATH\" line with a safe "
                     "relative path",
                     mpath, bad_line);
    goto cleanup;
  }

  /* The frozen files, checked once more as they are read: what goes into
   * the bundle is exactly what the MANIFEST vouches for. */
  for (size_t i = 0; i < mf.n; i++) {
    const char *rel = mf.v[i].rel;
    char *path, *data;
    size_t len;
    if (strcmp(rel, "MANIFEST") == 0 || strcmp(rel, "README.md") == 0 ||
        strcmp(rel, BUNDLE_MANIFEST) == 0 || has_prefix(rel, "report/") ||
        has_prefix(rel, "publish/")) {
      st = core_fail(err, CORE_EVERIFY,
                     "%s: lists %s, a name the bundle keeps for itself", mpath,
                     rel);
      goto cleanup;
    }
    path = core_path_join(dir, rel);
    if (!path) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto cleanup;
    }
    st = core_read_file(path, &data, &len, err);
    core_free(path);
    if (st != CORE_OK)
      goto cleanup;
    if (!items_add(&l, rel, 0, data, len)) {
      core_free(data);
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto cleanup;
    }
    if (strcmp(l.v[l.n - 1].sha, mf.v[i].sha) != 0) {
      st = core_fail(err, CORE_EVERIFY,
                     "%s/%s: its SHA-256 differs from the MANIFEST's; run "
                     "prereg verify",
                     dir, rel);
      goto cleanup;
    }
  }
  if (!items_add(&l, "MANIFEST", 0, manifest, mlen)) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  manifest = NULL;

  report_dir = core_path_join(dir, "report");
  has_report = report_dir && core_is_dir(report_dir);
  if (has_report && (st = add_tree(&l, dir, "report", err)) != CORE_OK)
    goto cleanup;

  qsort(l.v, l.n, sizeof *l.v, cmp_item);
  readme(&rd, id, sheet, &l, has_report);
  {
    size_t rlen = rd.len;
    char *text = rd.oom ? NULL : core_buf_steal(&rd);
    if (!text || !items_add(&l, "README.md", 0, text, rlen)) {
      core_free(text);
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto cleanup;
    }
  }

  qsort(l.v, l.n, sizeof *l.v, cmp_item);
  core_buf_puts(&bm, BUNDLE_HEADER "\n");
  for (size_t i = 0; i < l.n; i++)
    if (!l.v[i].is_dir)
      core_buf_printf(&bm, "%s %zu %s\n", l.v[i].sha, l.v[i].len, l.v[i].rel);
  if (bm.oom || !items_add(&l, BUNDLE_MANIFEST, 0, NULL, 0)) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  l.v[l.n - 1].len = bm.len;
  l.v[l.n - 1].data = core_buf_steal(&bm);
  core_sha256_hex(l.v[l.n - 1].data, l.v[l.n - 1].len, l.v[l.n - 1].sha);
  if (!add_parents(&l) || !items_add(&l, id, 1, NULL, 0)) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  /* The top folder is named like a member; give it a key sorting first. */
  l.v[l.n - 1].key[0] = '\0';
  qsort(l.v, l.n, sizeof *l.v, cmp_item);

  if ((st = write_archive(id, &l, newest_time(&l), &tgz, err)) != CORE_OK)
    goto cleanup;
  {
    char *slash = strrchr(out_path, '/');
    if (slash && slash != out_path) {
      char *parent = core_strndup(out_path, (size_t)(slash - out_path));
      if (!parent) {
        st = core_fail(err, CORE_ENOMEM, "out of memory");
        goto cleanup;
      }
      st = core_mkdir_p(parent, 0755, err);
      core_free(parent);
      if (st != CORE_OK)
        goto cleanup;
    }
  }
  if ((st = core_write_file_atomic(out_path, tgz.data, tgz.len, 0644, err)) !=
      CORE_OK)
    goto cleanup;
  if (sha256)
    core_sha256_hex(tgz.data, tgz.len, sha256);

cleanup:
  items_free(&l);
  mf_free(&mf);
  core_buf_free(&bm);
  core_buf_free(&rd);
  core_buf_free(&tgz);
  core_free(manifest);
  core_free(mpath);
  core_free(report_dir);
  core_free(dir);
  return st;
}

/* }==== */

/* {==== Reading and verifying a bundle ==== */

/* One BUNDLE-MANIFEST entry and what the archive held for it. */
typedef struct member {
  int seen;
  char got[CORE_SHA256_HEX];
  char *data; /* kept for the chain checks: versions, batches, MANIFEST */
  size_t len;
} member;

typedef struct vstate {
  problems pr;
  int not_bundle; /* CORE_EINPUT rather than CORE_EVERIFY */
  char *id;
  mf_list declared; /* sorted by rel */
  member *m;        /* parallel to declared.v */
  char **names;     /* every member's path, for duplicates */
  size_t n_names, cap_names;
  size_t n_files;
  long max_version;
  size_t n_batches, n_rows;
  int has_report;
  char bundle_sha[CORE_SHA256_HEX];
  char bm_sha[CORE_SHA256_HEX]; /* of BUNDLE-MANIFEST, first pass */
} vstate;

static void vstate_free(vstate *s) {
  for (size_t i = 0; i < s->declared.n && s->m; i++)
    core_free(s->m[i].data);
  core_free(s->m);
  mf_free(&s->declared);
  for (size_t i = 0; i < s->n_names; i++)
    core_free(s->names[i]);
  core_free(s->names);
  core_free(s->id);
}

static member *member_of(vstate *s, const char *rel) {
  mf_entry *e = mf_find(&s->declared, rel);
  return e ? &s->m[e - s->declared.v] : NULL;
}

static int keep_member(const char *rel) {
  return strcmp(rel, "MANIFEST") == 0 || has_prefix(rel, "versions/") ||
         is_batch_file(rel, ".csv") || is_batch_file(rel, ".json");
}

static int add_name(vstate *s, const char *name) {
  char **v = core_grow(s->names, &s->cap_names, s->n_names, sizeof *v, 256);
  if (!v)
    return 0;
  s->names = v;
  if (!(s->names[s->n_names] = core_strdup(name)))
    return 0;
  s->n_names++;
  return 1;
}

/* Parses BUNDLE-MANIFEST. Returns 0 when the bundle cannot be checked
 * further (the problem is recorded). */
static int parse_bundle_manifest(vstate *s, const char *member_name,
                                 const char *text, size_t len) {
  const char *p = text, *end = text + len;
  size_t line = 0, hl = strlen(BUNDLE_HEADER);
  if (len < hl + 1 || memcmp(text, BUNDLE_HEADER "\n", hl + 1) != 0) {
    s->not_bundle = 1;
    problem(&s->pr, member_name,
            "does not start with \"" BUNDLE_HEADER "\": not a prereg "
            "bundle");
    return 0;
  }
  p += hl + 1;
  line = 1;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *eol = nl ? nl : end, *sp;
    char *endn, *rel;
    long long size;
    line++;
    if (!nl || eol - p < 68 || !is_hex64(p) || p[64] != ' ' || p[65] < '0' ||
        p[65] > '9')
      goto bad;
    errno = 0;
    size = strtoll(p + 65, &endn, 10);
    if (errno || endn >= eol || *endn != ' ' || size < 0)
      goto bad;
    sp = endn + 1;
    rel = core_strndup(sp, (size_t)(eol - sp));
    if (!rel)
      goto oom;
    if (!safe_rel(rel) || strcmp(rel, BUNDLE_MANIFEST) == 0 ||
        (s->declared.n &&
         strcmp(s->declared.v[s->declared.n - 1].rel, rel) >= 0)) {
      core_free(rel);
      goto bad; /* strictly sorted: no duplicates, and bsearch works */
    }
    if (!mf_push(&s->declared, sp, (size_t)(eol - sp), p, size)) {
      core_free(rel);
      goto oom;
    }
    core_free(rel);
    p = nl + 1;
  }
  s->m = core_calloc(s->declared.n ? s->declared.n : 1, sizeof *s->m);
  if (!s->m)
    goto oom;
  return 1;
bad:
  problem(&s->pr, member_name,
          "line %zu is not \"SHA256 SIZE PATH\" in sorted order: the "
          "bundle was altered",
          line);
  return 0;
oom:
  problem(&s->pr, member_name, "out of memory");
  return 0;
}

/* Reads the data of the current member, at most its declared size, into
 * a digest (and a copy when keep). Returns 0 on a read error. */
/* Creates member name on disk with mode perm; 0 (with a problem named)
 * when it cannot. */
static int extract_header(struct archive *disk, struct archive_entry *e,
                          unsigned perm, problems *pr, const char *name) {
  const char *msg;
  archive_entry_set_perm(e, perm);
  if (archive_write_header(disk, e) == ARCHIVE_OK)
    return 1;
  msg = archive_error_string(disk);
  problem(pr, name, "cannot extract: %s", msg ? msg : "?");
  return 0;
}

static int read_member(struct archive *a, vstate *s, const char *name,
                       member *m, long long size, int keep, int copy_to_disk,
                       struct archive *disk) {
  char chunk[65536];
  core_sha256_ctx *c = core_sha256_begin();
  core_buf b;
  long long total = 0;
  la_ssize_t n;
  core_buf_init(&b);
  if (!c) {
    problem(&s->pr, name, "out of memory");
    return 0;
  }
  while ((n = archive_read_data(a, chunk, sizeof chunk)) > 0) {
    total += n;
    if (total > size) /* cannot happen past the header check; belt */
      break;
    core_sha256_update(c, chunk, (size_t)n);
    if (keep)
      core_buf_append(&b, chunk, (size_t)n);
    if (copy_to_disk && archive_write_data(disk, chunk, (size_t)n) != n) {
      const char *msg = archive_error_string(disk);
      problem(&s->pr, name, "cannot extract: %s", msg ? msg : "write error");
      core_sha256_end(c, m->got);
      core_buf_free(&b);
      return 0;
    }
  }
  core_sha256_end(c, m->got);
  if (n < 0 || total != size) {
    const char *msg = archive_error_string(a);
    problem(&s->pr, name,
            "truncated or damaged archive (%lld of %lld bytes read%s%s)",
            total, size, msg ? ": " : "", msg ? msg : "");
    core_buf_free(&b);
    return 0;
  }
  if (keep) {
    if (b.oom) {
      problem(&s->pr, name, "out of memory");
      core_buf_free(&b);
      return 0;
    }
    core_free(m->data);
    m->len = b.len;
    m->data = b.data ? core_buf_steal(&b) : core_strdup("");
  }
  core_buf_free(&b);
  return 1;
}

typedef struct fd_src {
  int fd;
  char block[65536];
  core_sha256_ctx *sha; /* of the bundle's bytes, as read */
} fd_src;

static la_ssize_t fd_read_cb(struct archive *a, void *ud, const void **buf) {
  fd_src *src = ud;
  ssize_t n;
  (void)a;
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

/* One pass over the archive. With disk != NULL, also extracts each member
 * already known good (second pass); the digests are checked again so that
 * a file changed between the passes is caught. */
static void scan(vstate *s, int fd, struct archive *disk) {
  struct archive *a = archive_read_new();
  struct archive_entry *e;
  fd_src *src = core_malloc(sizeof *src);
  size_t entries = 0;
  int r, saw_bm = 0;
  char *bm_buf = NULL;

  if (!a || !src) {
    problem(&s->pr, NULL, "out of memory");
    goto done;
  }
  src->fd = fd;
  src->sha = disk ? NULL : core_sha256_begin();
  archive_read_support_filter_gzip(a);
  archive_read_support_format_tar(a);
  if (archive_read_open(a, src, NULL, fd_read_cb, NULL) != ARCHIVE_OK) {
    const char *msg = archive_error_string(a);
    s->not_bundle = 1;
    problem(&s->pr, NULL,
            "not a prereg bundle (not a gzip-compressed tar archive%s%s)",
            msg ? ": " : "", msg ? msg : "");
    goto done;
  }
  for (;;) {
    const char *raw;
    char *name = NULL;
    const char *rel;
    size_t idlen;
    mode_t type;
    r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF)
      break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      const char *msg = archive_error_string(a);
      if (entries == 0 && archive_format(a) == 0) {
        s->not_bundle = 1;
        problem(&s->pr, NULL,
                "not a prereg bundle (not a gzip-compressed tar "
                "archive%s%s)",
                msg ? ": " : "", msg ? msg : "");
      } else {
        problem(&s->pr, NULL,
                "truncated or damaged archive after %zu "
                "members%s%s",
                entries, msg ? ": " : "", msg ? msg : "");
      }
      goto done;
    }
    entries++;
    raw = archive_entry_pathname(e);
    if (!raw || !*raw) {
      problem(&s->pr, NULL, "member %zu has no usable name", entries);
      continue;
    }
    name = core_strdup(raw);
    if (!name) {
      problem(&s->pr, NULL, "out of memory");
      goto done;
    }
    type = archive_entry_filetype(e);
    /* Folders may come with a trailing slash. */
    if (type == AE_IFDIR && strlen(name) > 1 && name[strlen(name) - 1] == '/')
      name[strlen(name) - 1] = '\0';
    if (name[0] == '/') {
      problem(&s->pr, name,
              "absolute path: a bundle holds only paths "
              "inside its folder");
      goto next;
    }
    if (!safe_rel(name)) {
      problem(&s->pr, name,
              "path escapes the bundle's folder or has a "
              "\"..\", \".\", empty or control-character "
              "component");
      goto next;
    }
    idlen = strcspn(name, "/");
    if (!s->id) {
      if (!valid_id(name, idlen)) {
        s->not_bundle = 1;
        problem(&s->pr, name,
                "not a prereg bundle: the first member must "
                "be the experiment's folder ID/");
        core_free(name);
        goto done;
      }
      s->id = core_strndup(name, idlen);
      if (!s->id) {
        core_free(name);
        goto done;
      }
    } else if (strlen(s->id) != idlen || strncmp(name, s->id, idlen) != 0) {
      problem(&s->pr, name, "outside the bundle's folder %s/", s->id);
      goto next;
    }
    if (!disk && !add_name(s, name)) {
      problem(&s->pr, NULL, "out of memory");
      core_free(name);
      goto done;
    }
    if (archive_entry_hardlink(e)) {
      problem(&s->pr, name,
              "a hard link to %s: a bundle holds regular "
              "files only",
              archive_entry_hardlink(e));
      goto next;
    }
    if (type == AE_IFLNK) {
      const char *t = archive_entry_symlink(e);
      problem(&s->pr, name,
              "a symbolic link to %s: a bundle holds "
              "regular files only",
              t ? t : "?");
      goto next;
    }
    if (type == AE_IFDIR) {
      if (disk) {
        /* Extracted folders stay writable by their owner so the
         * temporary copy can be removed; the files stay 0444. */
        if (!extract_header(disk, e, 0755, &s->pr, name)) {
          core_free(name);
          goto done;
        }
      }
      goto next;
    }
    if (type != AE_IFREG) {
      problem(&s->pr, name, "not a regular file or folder");
      goto next;
    }
    if (name[idlen] != '/') {
      problem(&s->pr, name, "a file where the bundle's folder should be");
      goto next;
    }
    rel = name + idlen + 1;
    if (!saw_bm) {
      long long size;
      member bm = {0};
      if (strcmp(rel, BUNDLE_MANIFEST) != 0) {
        s->not_bundle = 1;
        problem(&s->pr, name,
                "not a prereg bundle: the first file must be "
                "%s/" BUNDLE_MANIFEST,
                s->id);
        core_free(name);
        goto done;
      }
      size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
      if (size < 0 || size > (long long)BUNDLE_MANIFEST_MAX) {
        problem(&s->pr, name, "implausible size %lld", size);
        core_free(name);
        goto done;
      }
      if (disk) {
        if (!extract_header(disk, e, 0444, &s->pr, name)) {
          core_free(name);
          goto done;
        }
      }
      if (!read_member(a, s, name, &bm, size, 1, disk != NULL, disk)) {
        core_free(bm.data);
        core_free(name);
        goto done;
      }
      saw_bm = 1;
      bm_buf = bm.data;
      if (disk && strcmp(bm.got, s->bm_sha) != 0)
        problem(&s->pr, name, "changed while it was being extracted");
      memcpy(s->bm_sha, bm.got, sizeof s->bm_sha);
      if (!disk && !parse_bundle_manifest(s, name, bm.data, bm.len)) {
        core_free(name);
        goto done;
      }
      core_free(name);
      continue;
    }
    {
      mf_entry *d = mf_find(&s->declared, rel);
      member *m = d ? &s->m[d - s->declared.v] : NULL;
      long long size =
          archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
      if (!d) {
        problem(&s->pr, name,
                "not listed in %s/" BUNDLE_MANIFEST
                " (a file added, or that list altered)",
                s->id);
        goto next;
      }
      if (disk) {
        /* Second pass: only members that passed the first. */
        char again[CORE_SHA256_HEX];
        memcpy(again, m->got, sizeof again);
        if (!extract_header(disk, e, 0444, &s->pr, name)) {
          core_free(name);
          goto done;
        }
        if (!read_member(a, s, name, m, d->size, 0, 1, disk)) {
          core_free(name);
          goto done;
        }
        if (strcmp(m->got, d->sha) != 0 || strcmp(again, d->sha) != 0)
          problem(&s->pr, name, "changed while it was being extracted");
        goto next;
      }
      if (m->seen) {
        problem(&s->pr, name, "appears twice in the bundle");
        goto next;
      }
      m->seen = 1;
      if (size != d->size) {
        problem(&s->pr, name,
                "%s than %s/" BUNDLE_MANIFEST " says (%lld bytes, declared "
                "%lld)%s",
                size > d->size ? "larger" : "smaller", s->id, size, d->size,
                size > d->size ? "; not read past the declared size" : "");
        m->got[0] = '\0';
        goto next;
      }
      if (!read_member(a, s, name, m, size, keep_member(rel), 0, NULL)) {
        core_free(name);
        goto done;
      }
      s->n_files++;
      if (strcmp(m->got, d->sha) != 0)
        problem(&s->pr, name,
                "content differs from its entry in %s/" BUNDLE_MANIFEST
                " (sha256 %s, declared %s)",
                s->id, m->got, d->sha);
    }
  next:
    core_free(name);
  }
  if (!saw_bm) {
    s->not_bundle = 1;
    problem(&s->pr, NULL, "not a prereg bundle: no " BUNDLE_MANIFEST);
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
  core_free(bm_buf);
  if (src && src->sha) {
    core_sha256_end(src->sha, s->bundle_sha);
    src->sha = NULL;
  }
  if (a)
    archive_read_free(a);
  core_free(src);
}

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

/* The whole compressed stream, decompressed once to its end: libarchive's
 * tar reader stops at the end-of-archive blocks and would never notice a
 * gzip trailer (CRC, length) cut off or damaged after them. Also tells a
 * damaged bundle (gzip, exit 1) from a file that is none (exit 2). */
static int stream_intact(vstate *s, int fd) {
  struct archive *a = archive_read_new();
  struct archive_entry *e;
  fd_src *src = core_malloc(sizeof *src);
  char *chunk = core_malloc(65536);
  la_ssize_t n = 0;
  int ok = 0, r = ARCHIVE_FATAL;
  uint32_t crc = 0, isize = 0;
  unsigned char trailer[8];
  struct stat sb;
  if (!a || !src || !chunk) {
    problem(&s->pr, NULL, "out of memory");
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
      problem(&s->pr, NULL,
              "truncated or damaged archive (gzip stream "
              "cut short)");
    else {
      s->not_bundle = 1;
      problem(&s->pr, NULL,
              "not a prereg bundle (not a gzip-compressed "
              "tar archive)");
    }
    goto done;
  }
  if (r == ARCHIVE_OK || r == ARCHIVE_WARN)
    while ((n = archive_read_data(a, chunk, 65536)) > 0) {
      crc = crc32_update(crc, (const unsigned char *)chunk, (size_t)n);
      isize += (uint32_t)n;
    }
  if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
    n = -1;
  if (n < 0) {
    const char *msg = archive_error_string(a);
    problem(&s->pr, NULL, "truncated or damaged archive (gzip%s%s)",
            msg ? ": " : "", msg ? msg : "");
    goto done;
  }
  /* One gzip member whose trailer ends the file: anything appended, or a
   * trailer changed, makes a different file than the one published. */
  if (fstat(fd, &sb) != 0 || sb.st_size < 18 ||
      pread(fd, trailer, 8, sb.st_size - 8) != 8 ||
      ((uint32_t)trailer[0] | (uint32_t)trailer[1] << 8 |
       (uint32_t)trailer[2] << 16 | (uint32_t)trailer[3] << 24) != crc ||
      ((uint32_t)trailer[4] | (uint32_t)trailer[5] << 8 |
       (uint32_t)trailer[6] << 16 | (uint32_t)trailer[7] << 24) != isize) {
    problem(&s->pr, NULL,
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
    problem(&s->pr, NULL, "cannot read it again: %s", strerror(errno));
    ok = 0;
  }
  return ok;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* {===== The chain: versions, then batches ===== */

typedef struct version_info {
  int present;
  char sha[CORE_SHA256_HEX];
  char *filed_at;
  long long filed_t;
} version_info;

typedef struct csv_state {
  vstate *s;
  const char *member;
  const version_info *versions;
  long n_versions;
  const char *stem; /* "b0001" */
  long at_start;    /* versions existing when the batch started */
  size_t row, field, n_problems;
  int col_version, col_sha, col_started, col_source, col_batch;
  char *cells[5];
  int header_done, bad_header;
} csv_state;

static const char *const chain_cols[] = {"sheet_version", "sheet_sha256",
                                         "started_at", "source", "batch"};

static void csv_field_cb(void *p, size_t n, void *ud) {
  csv_state *c = ud;
  if (!c->header_done) {
    for (int k = 0; k < 5; k++)
      if (strlen(chain_cols[k]) == n && memcmp(p, chain_cols[k], n) == 0) {
        int *cols[5] = {&c->col_version, &c->col_sha, &c->col_started,
                        &c->col_source, &c->col_batch};
        *cols[k] = (int)c->field;
      }
  } else {
    int cols[5] = {c->col_version, c->col_sha, c->col_started, c->col_source,
                   c->col_batch};
    for (int k = 0; k < 5; k++)
      if (cols[k] == (int)c->field) {
        core_free(c->cells[k]);
        c->cells[k] = core_strndup(p ? p : "", n);
      }
  }
  c->field++;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
row_problem(csv_state *c, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  c->n_problems++;
  if (c->n_problems > PROBLEMS_PER_FILE)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  problem(&c->s->pr, c->member, "row %zu: %s", c->row, msg);
}

static void csv_row_cb(int term, void *ud) {
  csv_state *c = ud;
  (void)term;
  c->row++;
  if (!c->header_done) {
    c->header_done = 1;
    if (c->col_version < 0 || c->col_sha < 0 || c->col_started < 0) {
      c->bad_header = 1;
      problem(&c->s->pr, c->member,
              "the header lacks sheet_version, sheet_sha256 or started_at");
    }
  } else if (!c->bad_header) {
    const char *ver = c->cells[0], *sha = c->cells[1], *at = c->cells[2];
    const char *source = c->cells[3], *batch = c->cells[4];
    char *end = NULL;
    long v = -1;
    c->s->n_rows++;
    if (ver && *ver) {
      errno = 0;
      v = strtol(ver, &end, 10);
      if (errno || *end)
        v = -1;
    }
    if (v < 0 || v >= c->n_versions || !c->versions[v].present) {
      row_problem(c, "sheet_version \"%s\" is not a version in the bundle",
                  ver ? ver : "");
    } else if (v >= c->at_start) {
      row_problem(c,
                  "sheet_version %ld did not exist when the batch "
                  "started (%ld version%s then)",
                  v, c->at_start, c->at_start == 1 ? "" : "s");
    } else {
      long long t;
      if (!sha || strcmp(sha, c->versions[v].sha) != 0)
        row_problem(c, "sheet_sha256 is not the SHA-256 of versions/v%ld.lua",
                    v);
      /* A run is collected under a version that existed: never before its
       * filing, so never before the registration. Imported rows carry the
       * time they were measured elsewhere, which may be earlier. */
      if ((!source || strcmp(source, "import") != 0) && at && *at) {
        if (core_parse_utc(at, &t, NULL) != CORE_OK)
          row_problem(c, "started_at \"%s\" is not a UTC time", at);
        else if (c->versions[v].filed_at && t < c->versions[v].filed_t)
          row_problem(c, "started at %s, before version %ld was filed (%s)%s",
                      at, v, c->versions[v].filed_at,
                      t < c->versions[0].filed_t ? ": older than the "
                                                   "registration"
                                                 : "");
      }
    }
    if (batch && *batch && strcmp(batch, c->stem) != 0)
      row_problem(c, "batch \"%s\" in a file named %s.csv", batch, c->stem);
  }
  for (int k = 0; k < 5; k++) {
    core_free(c->cells[k]);
    c->cells[k] = NULL;
  }
  c->field = 0;
}

static void check_chain(vstate *s) {
  version_info *vi;
  long n = s->max_version + 1;
  char rel[64], name[PATH_MAX];

  if (s->max_version < 0) {
    problem(&s->pr, NULL,
            "no registered sheet (%s/versions/v0.lua) in the "
            "bundle",
            s->id);
    return;
  }
  vi = core_calloc((size_t)n, sizeof *vi);
  if (!vi) {
    problem(&s->pr, NULL, "out of memory");
    return;
  }
  for (long v = 0; v < n; v++) {
    member *lua, *js, *diff;
    snprintf(rel, sizeof rel, "versions/v%ld.lua", v);
    lua = member_of(s, rel);
    snprintf(rel, sizeof rel, "versions/v%ld.json", v);
    js = member_of(s, rel);
    snprintf(rel, sizeof rel, "versions/v%ld.diff", v);
    diff = member_of(s, rel);
    snprintf(name, sizeof name, "%s/versions/v%ld", s->id, v);
    if (!lua || !lua->seen || !lua->data || !js || !js->seen || !js->data) {
      problem(&s->pr, name,
              "version %ld lacks its .lua or .json: the chain "
              "of versions is broken",
              v);
      continue;
    }
    if (v > 0 && (!diff || !diff->seen))
      problem(&s->pr, name, "amended version %ld lacks its .diff", v);
    {
      char *sha = json_string_field(js->data, js->len, "sha256");
      char *ver = json_string_field(js->data, js->len, "version");
      char *filed = json_string_field(js->data, js->len, "filed_at");
      char got[CORE_SHA256_HEX];
      long long t = 0;
      core_sha256_hex(lua->data, lua->len, got);
      if (!sha || strcmp(sha, got) != 0)
        problem(&s->pr, name,
                ".json records a sha256 that is not the "
                ".lua's");
      if (ver) {
        char want[32];
        snprintf(want, sizeof want, "%ld", v);
        if (strcmp(ver, want) != 0)
          problem(&s->pr, name, ".json says version %s", ver);
      }
      if (!filed || core_parse_utc(filed, &t, NULL) != CORE_OK) {
        problem(&s->pr, name, ".json has no UTC filed_at time");
      } else {
        vi[v].filed_at = filed;
        vi[v].filed_t = t;
        filed = NULL;
        if (v > 0 && vi[v - 1].filed_at && t < vi[v - 1].filed_t)
          problem(&s->pr, name, "filed at %s, before version %ld (%s)",
                  vi[v].filed_at, v - 1, vi[v - 1].filed_at);
      }
      vi[v].present = 1;
      memcpy(vi[v].sha, got, sizeof got);
      core_free(sha);
      core_free(ver);
      core_free(filed);
    }
  }
  for (size_t i = 0; i < s->declared.n; i++) {
    const char *r = s->declared.v[i].rel;
    member *m = &s->m[i];
    struct csv_parser p;
    csv_state c;
    char *stem;
    if (!is_batch_file(r, ".csv") || !m->seen || !m->data)
      continue;
    s->n_batches++;
    snprintf(name, sizeof name, "%s/%s", s->id, r);
    stem = core_strndup(r + strlen("batches/"),
                        strlen(r) - strlen("batches/") - strlen(".csv"));
    if (!stem || csv_init(&p, CSV_APPEND_NULL) != 0) {
      core_free(stem);
      problem(&s->pr, name, "out of memory");
      continue;
    }
    memset(&c, 0, sizeof c);
    c.s = s;
    c.member = name;
    c.versions = vi;
    c.n_versions = n;
    c.stem = stem;
    c.col_version = c.col_sha = c.col_started = c.col_source = c.col_batch =
        -1;
    c.at_start = n;
    {
      /* The batch's facts: when it started, and how many versions
       * existed then (data/batch.c writes both). */
      char *jrel = core_asprintf("batches/%s.json", stem);
      member *js = jrel ? member_of(s, jrel) : NULL;
      core_free(jrel);
      if (js && js->data) {
        char *vs =
            json_string_field(js->data, js->len, "sheet_versions_at_start");
        char *sa = json_string_field(js->data, js->len, "started_at");
        long long t;
        char jname[PATH_MAX];
        snprintf(jname, sizeof jname, "%s/batches/%s.json", s->id, stem);
        if (vs) {
          char *end;
          long k = strtol(vs, &end, 10);
          if (*end == '\0' && k >= 0 && k < n)
            c.at_start = k;
        }
        if (sa && core_parse_utc(sa, &t, NULL) == CORE_OK && vi[0].filed_at &&
            t < vi[0].filed_t)
          problem(&s->pr, jname,
                  "batch started at %s, before the "
                  "registration (%s)",
                  sa, vi[0].filed_at);
        core_free(vs);
        core_free(sa);
      }
    }
    if (csv_parse(&p, m->data, m->len, csv_field_cb, csv_row_cb, &c) !=
            m->len ||
        csv_fini(&p, csv_field_cb, csv_row_cb, &c) != 0)
      problem(&s->pr, name, "not valid CSV: %s", csv_strerror(csv_error(&p)));
    if (c.n_problems > PROBLEMS_PER_FILE)
      problem(&s->pr, name, "... and %zu more rows with problems",
              c.n_problems - PROBLEMS_PER_FILE);
    for (int k = 0; k < 5; k++)
      core_free(c.cells[k]);
    csv_free(&p);
    core_free(stem);
  }
  for (long v = 0; v < n; v++)
    core_free(vi[v].filed_at);
  core_free(vi);
}

/* }===== */

/* Everything after the stream: missing members, duplicates, the MANIFEST
 * and the chain. */
static void check_after(vstate *s) {
  char name[PATH_MAX];
  member *man;
  qsort(s->names, s->n_names, sizeof *s->names, cmp_str);
  for (size_t i = 1; i < s->n_names; i++)
    if (strcmp(s->names[i - 1], s->names[i]) == 0 &&
        (i < 2 || strcmp(s->names[i - 2], s->names[i]) != 0))
      problem(&s->pr, s->names[i], "appears more than once in the bundle");
  s->max_version = -1;
  for (size_t i = 0; i < s->declared.n; i++) {
    const char *r = s->declared.v[i].rel;
    long v = version_number(r, ".lua");
    snprintf(name, sizeof name, "%s/%s", s->id, r);
    if (!s->m[i].seen)
      problem(&s->pr, name,
              "listed in %s/" BUNDLE_MANIFEST " but missing "
              "from the bundle (a file removed, or that list "
              "altered)",
              s->id);
    if (v > s->max_version)
      s->max_version = v;
    if (has_prefix(r, "report/"))
      s->has_report = 1;
  }
  snprintf(name, sizeof name, "%s/MANIFEST", s->id);
  man = member_of(s, "MANIFEST");
  if (!man) {
    problem(&s->pr, name,
            "missing: the data's manifest must be in the "
            "bundle");
  } else if (man->data) { /* else already reported as damaged */
    mf_list mf = {0};
    size_t bad_line;
    if (!parse_manifest(man->data, man->len, &mf, &bad_line)) {
      if (bad_line == (size_t)-1)
        problem(&s->pr, name, "a path is listed twice");
      else
        problem(&s->pr, name, "line %zu is not \"SHA256  PATH\"", bad_line);
    } else {
      for (size_t i = 0; i < mf.n; i++) {
        mf_entry *d = mf_find(&s->declared, mf.v[i].rel);
        snprintf(name, sizeof name, "%s/%s", s->id, mf.v[i].rel);
        if (!d)
          problem(&s->pr, name, "listed in MANIFEST but not in the bundle");
        else if (s->m[d - s->declared.v].seen &&
                 s->m[d - s->declared.v].got[0] &&
                 strcmp(s->m[d - s->declared.v].got, mf.v[i].sha) != 0)
          problem(&s->pr, name, "content differs from MANIFEST");
      }
      for (size_t i = 0; i < s->declared.n; i++) {
        const char *r = s->declared.v[i].rel;
        if (strcmp(r, "MANIFEST") == 0 || strcmp(r, "README.md") == 0 ||
            has_prefix(r, "report/"))
          continue;
        if (!mf_find(&mf, r)) {
          snprintf(name, sizeof name, "%s/%s", s->id, r);
          problem(&s->pr, name,
                  "not in MANIFEST: the data folder never "
                  "froze this file");
        }
      }
    }
    mf_free(&mf);
  }
  check_chain(s);
}

static core_status verify_fd(const char *path, int fd, vstate *s,
                             core_buf *report, core_err *err) {
  memset(s, 0, sizeof *s);
  s->pr.report = report;
  s->pr.where = path;
  s->max_version = -1;
  if (stream_intact(s, fd))
    scan(s, fd, NULL);
  if (!s->not_bundle && s->m)
    check_after(s);
  if (s->pr.count == 0)
    return CORE_OK;
  return core_fail(err, s->not_bundle ? CORE_EINPUT : CORE_EVERIFY, "%s: %s%s",
                   path, s->pr.first,
                   s->pr.count > 1 ? " (and more problems: see the report)"
                                   : "");
}

static int open_bundle(const char *path, core_err *err) {
  struct stat sb;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    core_fail(err, CORE_EIO, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    core_fail(err, CORE_EINPUT, "%s: not a regular file, so not a bundle",
              path);
    return -1;
  }
  return fd;
}

core_status data_bundle_verify(const char *path, core_buf *report,
                               core_err *err) {
  vstate s;
  core_status st;
  int fd = open_bundle(path, err);
  if (fd < 0)
    return err ? err->status : CORE_EIO;
  st = verify_fd(path, fd, &s, report, err);
  close(fd);
  if (st == CORE_OK && report)
    core_buf_printf(report,
                    "%s: ok: experiment %s, %zu files, versions v0..v%ld, "
                    "%zu batch%s (%zu rows), %s\n"
                    "%s: sha256 %s (compare with the one the author "
                    "published)\n",
                    path, s.id, s.n_files + 1, s.max_version, s.n_batches,
                    s.n_batches == 1 ? "" : "es", s.n_rows,
                    s.has_report ? "report included" : "no report", path,
                    s.bundle_sha);
  vstate_free(&s);
  return st;
}

/* }==== */

/* {==== Extracting ==== */

/* Temporary copies made for this process, removed at exit: a reader's
 * `prereg analyze BUNDLE` leaves nothing behind. */
static char **temp_dirs;
static size_t n_temp_dirs;
static char **owned_strings;
static size_t n_owned_strings;

static void cleanup_at_exit(void) {
  for (size_t i = 0; i < n_temp_dirs; i++) {
    core_remove_tree(temp_dirs[i], NULL);
    core_free(temp_dirs[i]);
  }
  core_free(temp_dirs);
  temp_dirs = NULL;
  n_temp_dirs = 0;
  for (size_t i = 0; i < n_owned_strings; i++)
    core_free(owned_strings[i]);
  core_free(owned_strings);
  owned_strings = NULL;
  n_owned_strings = 0;
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

core_status data_bundle_extract(const char *path, char **data_dir,
                                char **sheet_path, core_err *err) {
  vstate s;
  core_status st;
  struct archive *disk = NULL;
  const char *tmp = getenv("TMPDIR");
  char *dir = NULL;
  int fd, cwd = -1, owned = 0;

  *data_dir = NULL;
  *sheet_path = NULL;
  fd = open_bundle(path, err);
  if (fd < 0)
    return err ? err->status : CORE_EIO;
  st = verify_fd(path, fd, &s, NULL, err);
  if (st != CORE_OK)
    goto cleanup;
  dir = core_asprintf("%s/prereg-bundle-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!dir) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  if (!mkdtemp(dir)) {
    st = core_fail(err, CORE_EIO, "%s: cannot create a temporary folder: %s",
                   dir, strerror(errno));
    goto cleanup;
  }
  if (!remember(&temp_dirs, &n_temp_dirs, dir)) {
    rmdir(dir);
    core_free(dir);
    dir = NULL;
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  owned = 1; /* by temp_dirs, removed at exit */
  disk = archive_write_disk_new();
  if (!disk || lseek(fd, 0, SEEK_SET) != 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot read it again", path);
    goto cleanup;
  }
  archive_write_disk_set_options(
      disk, ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
  /* libarchive writes relative to the working folder, and refusing
   * absolute member paths is one of its protections, so we move into the
   * new folder for the extraction and back (single-threaded here). */
  cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cwd < 0 || chdir(dir) != 0) {
    st =
        core_fail(err, CORE_EIO, "%s: cannot enter: %s", dir, strerror(errno));
    goto cleanup;
  }
  {
    size_t before = s.pr.count;
    s.pr.report = NULL;
    scan(&s, fd, disk);
    if (archive_write_close(disk) != ARCHIVE_OK && s.pr.count == before) {
      const char *msg = archive_error_string(disk);
      problem(&s.pr, NULL, "cannot extract: %s", msg ? msg : "?");
    }
    if (fchdir(cwd) != 0) {
      st = core_fail(err, CORE_EIO, "cannot return to the working folder: %s",
                     strerror(errno));
      goto cleanup;
    }
    if (s.pr.count != before) {
      st = core_fail(err, CORE_EVERIFY, "%s: %s", path, s.pr.first);
      goto cleanup;
    }
  }
  *data_dir = core_strdup(dir);
  *sheet_path =
      core_asprintf("%s/%s/versions/v%ld.lua", dir, s.id, s.max_version);
  if (!*data_dir || !*sheet_path) {
    core_free(*data_dir);
    core_free(*sheet_path);
    *data_dir = *sheet_path = NULL;
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  }
cleanup:
  if (disk)
    archive_write_free(disk);
  if (cwd >= 0)
    close(cwd);
  close(fd);
  vstate_free(&s);
  if (st != CORE_OK && dir) {
    if (owned)
      core_remove_tree(dir, NULL); /* the list frees the name at exit */
    else
      core_free(dir);
  }
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

/* }==== */
