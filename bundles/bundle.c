/* bundle.c: publish an experiment as one deterministic .tar.gz (reading
 * one back, verifying and extracting it: bundle_read.c).
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundles/bundles_internal.h"

#define BUNDLE_HEADER DATA_BUNDLE_HEADER
#define BUNDLE_MANIFEST DATA_BUNDLE_MANIFEST

/* Paths */

int data_valid_id(const char *s, size_t n) {
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

/* Writing a bundle */

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

/* Adds every regular file under abs_dir (recursively) as a member named
 * rel_dir/....
 * Links and other special files are refused: a reader's copy must not
 * depend on where a link pointed on the publisher's machine. */
static core_status add_tree(item_list *l, const char *abs_dir,
                            const char *rel_dir, core_err *err) {
  char *abs = core_strdup(abs_dir);
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
    path = core_path_join(abs_dir, de->d_name);
    if (!rel || !path) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    } else if (!data_safe_rel(rel)) {
      st = core_fail(err, CORE_EINPUT,
                     "%s: a file name a bundle cannot hold (control "
                     "characters or a backslash); rename it",
                     path);
    } else if (lstat(path, &sb) != 0) {
      st = core_fail(err, CORE_EIO, "%s: %s", path, strerror(errno));
    } else if (S_ISDIR(sb.st_mode)) {
      st = add_tree(l, path, rel, err);
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

/* The README's title, question, what a bundle is and how to check it. */
static void readme_head(core_buf *b, const char *id,
                        const proto_sheet *sheet) {
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
}

/* The README's row of sheet version v (the file it): when it was filed,
 * and why for an amendment, from its versions/vN.json in l. */
static void version_row(core_buf *b, const item_list *l, const item *it,
                        long v) {
  const item *js;
  char *jrel = core_asprintf("versions/v%ld.json", v);
  char *filed = NULL, *why = NULL;
  js = jrel ? items_find(l, jrel) : NULL;
  if (js) {
    filed = data_json_member_text(js->data, js->len, "filed_at");
    why = data_json_member_text(js->data, js->len, "why");
  }
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
}

/* Per-run files can be many: one README row per batch folder, not per
 * file. l is sorted, so each folder's files are contiguous. */
static void batch_folder_rows(core_buf *b, const item_list *l) {
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
}

static void readme(core_buf *b, const char *id, const proto_sheet *sheet,
                   const item_list *l, int has_report) {
  long max_version = -1;
  size_t n_batches = 0;
  readme_head(b, id, sheet);
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
      if (v > max_version)
        max_version = v;
      version_row(b, l, it, v);
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
      char *kind = data_json_member_text(it->data, it->len, "kind");
      core_buf_printf(b,
                      "| `%s` | facts of that batch%s%s%s: host, image "
                      "digests, versions |\n",
                      it->rel, kind ? " (" : "", kind ? kind : "",
                      kind ? ")" : "");
      core_free(kind);
    }
  }
  batch_folder_rows(b, l);
  if (has_report) {
    for (size_t i = 0; i < l->n; i++)
      if (!l->v[i].is_dir && has_prefix(l->v[i].rel, "report/"))
        core_buf_printf(b,
                        "| `%s` | the report, rendered from these data "
                        "when they were published |\n",
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
      char *s = data_json_member_text(it->data, it->len, keys[k]);
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

/* Every file the MANIFEST lists, checked once more as it is read: what
 * goes into the bundle is exactly what the MANIFEST vouches for. The same
 * parser as the verifier's (data_manifest_parse). */
static core_status add_frozen(item_list *l, const char *dir, const char *mpath,
                              const char *text, size_t mlen,
                              const char *prefix, core_err *err) {
  data_manifest m;
  core_status st = data_manifest_parse(mpath, text, mlen, &m, NULL, err);
  if (st == CORE_EINPUT)
    err->status = st = CORE_EVERIFY; /* a damaged folder, not bad input */
  for (size_t i = 0; i < m.n && st == CORE_OK; i++) {
    const char *rel = m.e[i].path;
    char *path, *data, *name = core_asprintf("%s%s", prefix, rel);
    size_t len;
    if (!name) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      break;
    }
    if (!data_safe_rel(rel) || items_find(l, name)) {
      st = core_fail(err, CORE_EVERIFY, "%s:%ld: %s is %s; run prereg verify",
                     mpath, m.e[i].line, rel,
                     items_find(l, name) ? "listed twice" : "no safe path");
      core_free(name);
      break;
    }
    if (strcmp(rel, "MANIFEST") == 0 || strcmp(rel, "README.md") == 0 ||
        strcmp(rel, DATA_BUNDLE_MANIFEST_SIG) == 0 ||
        strcmp(rel, BUNDLE_MANIFEST) == 0 || has_prefix(rel, "report/") ||
        has_prefix(rel, "publish/") || has_prefix(rel, "original/")) {
      st = core_fail(err, CORE_EVERIFY,
                     "%s: lists %s, a name the bundle keeps for itself", mpath,
                     rel);
      core_free(name);
      break;
    }
    if (!(path = core_path_join(dir, rel))) {
      core_free(name);
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      break;
    }
    st = core_read_file(path, &data, &len, err);
    core_free(path);
    if (st == CORE_OK && !items_add(l, name, 0, data, len)) {
      core_free(data);
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    }
    core_free(name);
    if (st == CORE_OK && strcmp(l->v[l->n - 1].sha, m.e[i].sha256) != 0)
      st = core_fail(err, CORE_EVERIFY,
                     "%s/%s: its SHA-256 differs from the MANIFEST's; run "
                     "prereg verify",
                     dir, rel);
  }
  data_manifest_free(&m);
  return st;
}

/* Adds the README and then BUNDLE-MANIFEST, the digest and size of every
 * other member, to l; leaves l sorted, the top folder id first. */
static core_status add_readme_and_manifest(item_list *l, const char *id,
                                           const proto_sheet *sheet,
                                           int has_report, core_err *err) {
  core_buf bm, rd;
  core_status st = CORE_OK;
  core_buf_init(&bm);
  core_buf_init(&rd);
  qsort(l->v, l->n, sizeof *l->v, cmp_item);
  readme(&rd, id, sheet, l, has_report);
  {
    size_t rlen = rd.len;
    char *text = rd.oom ? NULL : core_buf_steal(&rd);
    if (!text || !items_add(l, "README.md", 0, text, rlen)) {
      core_free(text);
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto done;
    }
  }

  qsort(l->v, l->n, sizeof *l->v, cmp_item);
  core_buf_puts(&bm, BUNDLE_HEADER "\n");
  for (size_t i = 0; i < l->n; i++)
    if (!l->v[i].is_dir)
      core_buf_printf(&bm, "%s %zu %s\n", l->v[i].sha, l->v[i].len,
                      l->v[i].rel);
  if (bm.oom || !items_add(l, BUNDLE_MANIFEST, 0, NULL, 0)) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto done;
  }
  l->v[l->n - 1].len = bm.len;
  l->v[l->n - 1].data = core_buf_steal(&bm);
  core_sha256_hex(l->v[l->n - 1].data, l->v[l->n - 1].len, l->v[l->n - 1].sha);
  if (!add_parents(l) || !items_add(l, id, 1, NULL, 0)) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto done;
  }
  /* The top folder is named like a member; give it a key sorting first. */
  l->v[l->n - 1].key[0] = '\0';
  qsort(l->v, l->n, sizeof *l->v, cmp_item);

done:
  core_buf_free(&bm);
  core_buf_free(&rd);
  return st;
}

/* A replication's folder keeps the original's data under
 * original/ORIGINAL/, each with its own MANIFEST: the bundle carries
 * them, each file under the BUNDLE-MANIFEST's digest. */
static core_status add_originals(item_list *l, const char *dir,
                                 core_err *err) {
  char *odir = core_path_join(dir, "original"), **names = NULL;
  size_t n = 0;
  core_status st = odir ? CORE_OK : core_fail(err, CORE_ENOMEM, "oom");
  if (st == CORE_OK && core_exists(odir) &&
      (st = core_check_dir(odir, err)) == CORE_OK)
    st = core_list_dir(odir, &names, &n, err);
  for (size_t i = 0; st == CORE_OK && i < n; i++) {
    char *sub = core_path_join(odir, names[i]);
    char *mpath = sub ? core_path_join(sub, "MANIFEST") : NULL;
    char *prefix = core_asprintf("original/%s/", names[i]);
    char *text = NULL;
    size_t len = 0;
    if (!sub || !mpath || !prefix)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    else if (!data_valid_id(names[i], strlen(names[i])))
      st = core_fail(err, CORE_EVERIFY,
                     "%s: not an experiment folder of an original", sub);
    else if ((st = core_check_dir(sub, err)) == CORE_OK &&
             (st = core_read_file(mpath, &text, &len, err)) == CORE_OK &&
             (st = add_frozen(l, sub, mpath, text, len, prefix, err)) ==
                 CORE_OK) {
      char *name = core_asprintf("%sMANIFEST", prefix);
      if (!name || !items_add(l, name, 0, text, len))
        st = core_fail(err, CORE_ENOMEM, "out of memory");
      else
        text = NULL;
      core_free(name);
    }
    core_free(text);
    core_free(sub);
    core_free(mpath);
    core_free(prefix);
  }
  core_names_free(names, n);
  core_free(odir);
  return st;
}

core_status data_bundle_write(const char *exp_dir, const proto_sheet *sheet,
                              const char *report_dir, const char *out_path,
                              char sha256[CORE_SHA256_HEX], core_err *err) {
  return data_bundle_write_signed(exp_dir, sheet, report_dir, out_path, NULL,
                                  0, sha256, err);
}

/* The MANIFEST's signature as a member of its own. */
static core_status add_signature(item_list *l, const char *sig, size_t len,
                                 core_err *err) {
  char *copy;
  if (!sig)
    return CORE_OK;
  if (!(copy = core_malloc(len + 1)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  memcpy(copy, sig, len);
  copy[len] = '\0';
  if (!items_add(l, DATA_BUNDLE_MANIFEST_SIG, 0, copy, len)) {
    core_free(copy);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  return CORE_OK;
}

core_status
data_bundle_write_signed(const char *exp_dir, const proto_sheet *sheet,
                         const char *report_dir, const char *out_path,
                         const char *sig, size_t sig_len,
                         char sha256[CORE_SHA256_HEX], core_err *err) {
  item_list l = {0};
  core_buf tgz;
  char *mtext = NULL, *mpath = NULL, *dir = NULL;
  size_t mlen = 0;
  const char *id;
  int has_report;
  core_status st;
  core_buf_init(&tgz);
  dir = core_strdup(exp_dir);
  if (!dir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
    dir[strlen(dir) - 1] = '\0';
  id = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
  if (!data_valid_id(id, strlen(id))) {
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
  if ((st = core_read_file(mpath, &mtext, &mlen, err)) != CORE_OK ||
      (st = add_frozen(&l, dir, mpath, mtext, mlen, "", err)) != CORE_OK ||
      (st = add_originals(&l, dir, err)) != CORE_OK ||
      (st = add_signature(&l, sig, sig_len, err)) != CORE_OK)
    goto cleanup;
  if (!items_add(&l, "MANIFEST", 0, mtext, mlen)) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  mtext = NULL;

  has_report = report_dir && core_is_dir(report_dir);
  if (has_report && (st = add_tree(&l, report_dir, "report", err)) != CORE_OK)
    goto cleanup;

  if ((st = add_readme_and_manifest(&l, id, sheet, has_report, err)) !=
      CORE_OK)
    goto cleanup;
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
  core_buf_free(&tgz);
  core_free(mtext);
  core_free(mpath);
  core_free(dir);
  return st;
}
