/* batch.c: raw data batches: appending rows durably, freezing them into
 * the manifest, recovering the ones a crash left open, loading rows back.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data_internal.h"

/* Begin, append */

static core_status next_batch_number(const char *bdir, long *next,
                                     core_err *err) {
  char **names;
  size_t n;
  long max = 0, v;
  core_status st = core_list_dir(bdir, &names, &n, err);
  if (st != CORE_OK)
    return st;
  for (size_t i = 0; i < n; i++)
    if ((data_batch_name(names[i], ".csv", &v) ||
         data_batch_name(names[i], ".json", &v) ||
         data_batch_name(names[i], "", &v)) &&
        v > max)
      max = v;
  core_names_free(names, n);
  *next = max + 1;
  return CORE_OK;
}

void data_batch_release(data_batch *b) {
  if (!b)
    return;
  if (b->fd >= 0)
    close(b->fd);
  if (b->written) {
    char unused[CORE_SHA256_HEX];
    core_sha256_end(b->written, unused);
  }
  core_free(b->kind);
  core_free(b->csv);
  core_free(b->dir);
  core_free(b);
}

/* Rows reach the disk here; once written (below) they already survive
 * our death (kill -9). */
static core_status sync_rows(data_batch *b, core_err *err) {
  b->synced_at = core_monotonic();
  if (fsync(b->fd) != 0)
    return core_fail(err, CORE_EIO, "%s: cannot sync: %s", b->csv,
                     strerror(errno));
  return CORE_OK;
}

data_batch *data_batch_make(data_experiment *exp, long num, const char *kind) {
  data_batch *b = core_calloc(1, sizeof *b);
  if (!b)
    return NULL;
  b->fd = -1;
  b->exp = exp;
  snprintf(b->id, sizeof b->id, "b%04ld", num);
  b->kind = core_strdup(kind ? kind : "run");
  b->csv = core_asprintf("%s/batches/%s.csv", exp->dir, b->id);
  b->dir = core_asprintf("%s/batches/%s", exp->dir, b->id);
  b->versions_at_start = exp->n_versions;
  core_utc_now(b->started_at);
  if (!b->kind || !b->csv || !b->dir) {
    data_batch_release(b);
    return NULL;
  }
  return b;
}

core_status data_batch_begin(data_experiment *exp, const char *kind,
                             data_batch **out, core_err *err) {
  char *bdir = NULL;
  data_batch *b = NULL;
  long num;
  core_status st;
  *out = NULL;
  if ((st = data_experiment_lock(exp, err)) != CORE_OK)
    return st;
  if (exp->n_versions == 0)
    return core_fail(err, CORE_ELOCK,
                     "%s: not registered; register the "
                     "sheet before collecting data",
                     exp->dir);
  if (!(bdir = core_path_join(exp->dir, "batches")))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = core_mkdir_p(bdir, 0755, err)) != CORE_OK ||
      (st = next_batch_number(bdir, &num, err)) != CORE_OK)
    goto cleanup;
  if (!(b = data_batch_make(exp, num, kind))) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  if ((st = core_check_dir(bdir, err)) != CORE_OK)
    goto cleanup;
  b->fd = open(b->csv,
               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC,
               0644);
  if (b->fd < 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot create: %s", b->csv,
                   strerror(errno));
    goto cleanup;
  }
  if (!(b->written = core_sha256_begin())) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  core_sha256_update(b->written, DATA_ROW_HEADER "\n", sizeof DATA_ROW_HEADER);
  if ((st = core_write_all(b->fd, DATA_ROW_HEADER "\n", sizeof DATA_ROW_HEADER,
                           b->csv, err)) != CORE_OK ||
      (st = sync_rows(b, err)) != CORE_OK ||
      (st = core_fsync_dir(bdir, err)) != CORE_OK)
    goto cleanup;
  *out = b;
  b = NULL;
cleanup:
  data_batch_release(b);
  core_free(bdir);
  return st;
}

const char *data_batch_id(const data_batch *b) {
  return b->id;
}

const char *data_batch_dir(const data_batch *b) {
  /* Created on demand: most batches keep per-run files, imports do not. */
  mkdir(b->dir, 0755);
  return b->dir;
}

core_status data_batch_append(data_batch *b, const data_row *rows, size_t n,
                              core_err *err) {
  core_buf buf;
  core_status st;
  if (n == 0)
    return CORE_OK;
  core_buf_init(&buf);
  for (size_t i = 0; i < n; i++)
    data_csv_row(&buf, &rows[i], b->id, rows[i].source ? NULL : b->kind);
  if (buf.oom) {
    core_buf_free(&buf);
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", b->csv);
  }
  /* One write() for the whole buffer (core_write_all covers a short
   * write: a signal, a full disk), after which a torn tail is what
   * recovery finds. */
  st = core_write_all(b->fd, buf.data, buf.len, b->csv, err);
  core_sha256_update(b->written, buf.data, buf.len);
  core_buf_free(&buf);
  if (st == CORE_OK)
    b->rows += (long)n;
  /* In groups: a sync per run would cost short runs more than they
   * take (see DATA_SYNC_S). */
  if (st == CORE_OK && core_monotonic() - b->synced_at >= DATA_SYNC_S)
    st = sync_rows(b, err);
  return st;
}

void data_batch_abandon(data_batch *b) {
  if (b && b->fd >= 0)
    fsync(b->fd); /* the rows written stay, for --resume */
  data_batch_release(b);
}

/* Freeze */

/* Adds rel to the list of paths (which takes it over). */
static core_status add_path(char ***paths, size_t *n, char *rel,
                            core_err *err) {
  char **np = core_realloc(*paths, (*n + 1) * sizeof *np);
  if (!np) {
    core_free(rel);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  *paths = np;
  (*paths)[(*n)++] = rel;
  return CORE_OK;
}

/* Replaces entry name of the folder open at dfd (open at fd) with a copy
 * of its own, read-only: a file a command hard-linked into its working
 * folder shares its inode with a file outside, whose mode a chmod would
 * change. OUT: *fd the copy's descriptor. */
static core_status own_copy(int dfd, const char *name, const char *f, int *fd,
                            core_err *err) {
  char tmp[64], buf[65536];
  ssize_t n = 0;
  int out;
  snprintf(tmp, sizeof tmp, ".prereg-copy.tmp.%ld", (long)getpid());
  unlinkat(dfd, tmp, 0);
  out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
               0444);
  if (out < 0)
    return core_fail(err, CORE_EIO, "%s: cannot copy: %s", f, strerror(errno));
  while ((n = read(*fd, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n)
      break;
  if (n != 0 || fsync(out) != 0 || renameat(dfd, tmp, dfd, name) != 0) {
    core_status st =
        core_fail(err, CORE_EIO, "%s: cannot copy: %s", f, strerror(errno));
    close(out);
    unlinkat(dfd, tmp, 0);
    return st;
  }
  close(*fd);
  *fd = out;
  return CORE_OK;
}

/* Makes entry name of the folder open at dfd read-only when it is a
 * regular file (O_NOFOLLOW, fchmod on what was opened: a link is never
 * followed, whatever is swapped in; a file with other hard links is
 * replaced by a copy of its own first). */
static core_status freeze_file(int dfd, const char *name, const char *f,
                               core_err *err) {
  struct stat sb;
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  core_status st = CORE_OK;
  if (fd < 0)
    return core_fail(err, CORE_EIO, "%s: cannot open: %s", f, strerror(errno));
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
    st = core_fail(err, CORE_EIO,
                   "%s: not a regular file; a batch folder holds files only",
                   f);
  else if (sb.st_nlink != 1 &&
           (st = own_copy(dfd, name, f, &fd, err)) != CORE_OK)
    ; /* said by own_copy */
  else if (fchmod(fd, 0444) != 0)
    st = core_fail(err, CORE_EIO, "%s: cannot make read-only: %s", f,
                   strerror(errno));
  close(fd);
  return st;
}

/* Collects the files under the folder open at dfd (full for messages,
 * rel for names "batches/BATCH/...") and makes them read-only: files
 * 0444 first, then folders 0555, so nothing can be added later without
 * verify noticing the mode. Only descriptors are followed down: a link
 * in the tree is refused by name and left as it is. */
static core_status freeze_at(int dfd, const char *full, const char *rel,
                             char ***paths, size_t *n, core_err *err) {
  char **names;
  size_t nn;
  core_status st = core_list_dir_at(dfd, full, &names, &nn, err);
  if (st != CORE_OK)
    return st;
  for (size_t i = 0; i < nn && st == CORE_OK; i++) {
    char *f = core_path_join(full, names[i]);
    char *r = core_path_join(rel, names[i]);
    struct stat sb;
    int sub;
    if (!f || !r) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    } else if (fstatat(dfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) != 0) {
      st = core_fail(err, CORE_EIO, "%s: %s", f, strerror(errno));
    } else if (S_ISDIR(sb.st_mode)) {
      sub = openat(dfd, names[i],
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) {
        st = core_fail(err, CORE_EIO, "%s: cannot open folder: %s", f,
                       strerror(errno));
      } else {
        st = freeze_at(sub, f, r, paths, n, err);
        close(sub);
      }
    } else if (S_ISREG(sb.st_mode)) {
      if ((st = add_path(paths, n, r, err)) == CORE_OK)
        st = freeze_file(dfd, names[i], f, err);
      r = NULL;
    } else {
      st = core_fail(
          err, CORE_EIO,
          "%s: is %s; a batch folder holds files only, and "
          "prereg leaves this one as it is",
          f, S_ISLNK(sb.st_mode) ? "a symbolic link" : "not a regular file");
    }
    core_free(f);
    core_free(r);
  }
  core_names_free(names, nn);
  if (st == CORE_OK && fchmod(dfd, 0555) != 0)
    st = core_fail(err, CORE_EIO, "%s: cannot make read-only: %s", full,
                   strerror(errno));
  return st;
}

/* The batch's folder, when it has one (made at its first run's files),
 * frozen. A link in its place is refused, not followed. */
static core_status freeze_dir(const data_batch *b, const char *rel_dir,
                              char ***paths, size_t *n, core_err *err) {
  struct stat sb;
  int dfd;
  core_status st;
  if (lstat(b->dir, &sb) != 0 && errno == ENOENT)
    return CORE_OK;
  if ((st = core_open_dir(b->dir, &dfd, err)) != CORE_OK)
    return st;
  st = freeze_at(dfd, b->dir, rel_dir, paths, n, err);
  close(dfd);
  return st;
}

core_status data_batch_freeze(data_batch *b, const char *facts_json,
                              core_err *err) {
  json_error_t je;
  json_t *facts;
  data_json_init();
  facts = json_loads(facts_json ? facts_json : "{}", 0, &je);
  if (!facts || !json_is_object(facts)) {
    core_status st = core_fail(err, CORE_EINPUT,
                               "%s: batch facts are not a JSON object (%s)",
                               b->csv, facts ? "not an object" : je.text);
    json_decref(facts);
    data_batch_release(b);
    return st;
  }
  return data_batch_freeze_json(b, facts, err);
}

/* Closes b's CSV (synced) and fills hex with its SHA-256, which must be
 * that of the rows b appended. */
static core_status close_csv(data_batch *b, char hex[CORE_SHA256_HEX],
                             core_err *err) {
  core_status st;
  if (b->fd >= 0) {
    if (fsync(b->fd) != 0 || close(b->fd) != 0) {
      b->fd = -1;
      return core_fail(err, CORE_EIO, "%s: cannot close: %s", b->csv,
                       strerror(errno));
    }
    b->fd = -1;
  }
  if ((st = core_sha256_file(b->csv, hex, err)) != CORE_OK)
    return st;
  if (b->written) {
    char ours[CORE_SHA256_HEX];
    core_sha256_end(b->written, ours);
    b->written = NULL;
    if (strcmp(ours, hex) != 0)
      return core_fail(err, CORE_EVERIFY,
                       "%s: changed by something other than prereg while "
                       "the run wrote it (its SHA-256 is not that of the "
                       "rows appended); it is left unfrozen: restore it "
                       "from a backup or remove it, then run prereg run "
                       "--resume",
                       b->csv);
  }
  return CORE_OK;
}

core_status data_batch_freeze_json(data_batch *b, json_t *facts,
                                   core_err *err) {
  char *js = NULL, *text = NULL, *rel_dir = NULL, **paths = NULL;
  size_t n_paths = 0;
  char now[32], hex[CORE_SHA256_HEX];
  core_status st = CORE_OK;
  if (!facts) {
    data_batch_release(b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if ((st = close_csv(b, hex, err)) != CORE_OK)
    goto cleanup;
  core_utc_now(now);
  /* Our bookkeeping keys go last and win over the caller's: verify relies
   * on them, so a key that could not be set (out of memory) stops here. */
  int unset = 0;
  if (!json_object_get(facts, "kind"))
    unset |= json_object_set_new(facts, "kind", json_string(b->kind));
  unset |= json_object_set_new(facts, "batch", json_string(b->id));
  unset |=
      json_object_set_new(facts, "started_at", json_string(b->started_at));
  unset |= json_object_set_new(facts, "frozen_at", json_string(now));
  unset |= json_object_set_new(facts, "sheet_versions_at_start",
                               json_integer((json_int_t)b->versions_at_start));
  unset |= json_object_set_new(facts, "rows", json_integer(b->rows));
  unset |= json_object_set_new(facts, "csv_sha256", json_string(hex));
  if (!unset)
    text = data_json_dump_flags(facts, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                           FACTS_PRECISION);
  js = core_asprintf("%s/batches/%s.json", b->exp->dir, b->id);
  rel_dir = core_asprintf("batches/%s", b->id);
  paths = core_calloc(2, sizeof *paths);
  if (!text || !js || !rel_dir || !paths) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  paths[0] = core_asprintf("batches/%s.csv", b->id);
  paths[1] = core_asprintf("batches/%s.json", b->id);
  n_paths = 2;
  if (!paths[0] || !paths[1]) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  {
    size_t len = strlen(text);
    char *withnl = core_asprintf("%s\n", text);
    if (!withnl) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto cleanup;
    }
    st = core_write_file_atomic(js, withnl, len + 1, 0444, err);
    core_free(withnl);
    if (st != CORE_OK)
      goto cleanup;
  }
  if ((st = core_chmod_regular(b->csv, 0444, err)) != CORE_OK ||
      (st = freeze_dir(b, rel_dir, &paths, &n_paths, err)) != CORE_OK)
    goto cleanup;
  /* Last: a batch counts as frozen once its files are in the manifest. */
  st = data_manifest_add(b->exp->dir, paths, n_paths, err);
cleanup:
  json_decref(facts);
  core_free(text); /* jansson allocates through core_malloc */
  core_free(js);
  core_free(rel_dir);
  if (paths)
    core_names_free(paths, n_paths);
  data_batch_release(b);
  return st;
}

/* Loading rows */

typedef struct load_ctx {
  const char *name;
  data_rowset *rows; /* NULL: each row goes to fn instead */
  int header_seen;
  data_row_fn fn;
  void *fn_ctx;
  data_runvalues *values; /* the file's runs and metrics so far */
  size_t cols;            /* the header's columns */
} load_ctx;

size_t data_row_header_ok(char **f, size_t n) {
  core_buf b;
  size_t ok = 0;
  core_buf_init(&b);
  for (size_t i = 0; i < n; i++) {
    if (i)
      core_buf_puts(&b, ",");
    core_buf_puts(&b, f[i]);
  }
  if (!b.oom && b.data && strcmp(b.data, DATA_ROW_HEADER) == 0)
    ok = DATA_NCOLS;
  else if (!b.oom && b.data && strcmp(b.data, DATA_ROW_HEADER_PLAIN) == 0)
    ok = DATA_NCOLS_PLAIN;
  core_buf_free(&b);
  return ok;
}

static core_status header_ok(char **f, size_t n, const char *name, long line,
                             size_t *cols, core_err *err) {
  if (!(*cols = data_row_header_ok(f, n)))
    return core_fail(err, CORE_EINPUT,
                     "%s:%ld: not a batch header (expected %s)", name, line,
                     DATA_ROW_HEADER);
  return CORE_OK;
}

/* A second value of one run and metric is refused as verify names it. */
static core_status one_value(load_ctx *c, const data_row *r, long line,
                             core_err *err) {
  long first = data_runvalues_add(c->values, r, line);
  if (first < 0)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", c->name);
  if (first > 0)
    return core_fail(err, CORE_EINPUT,
                     "%s:%ld: value: a second %s of run %s (workload %s, arm "
                     "%s), the first on line %ld; a run has one value per "
                     "metric, so the file was edited; run prereg verify",
                     c->name, line, r->metric, r->run_id, r->workload, r->arm,
                     first);
  return CORE_OK;
}

static core_status on_load(void *vctx, char **f, size_t n, long line,
                           core_err *err) {
  load_ctx *c = vctx;
  data_row r;
  core_status st;
  if (!c->header_seen) {
    c->header_seen = 1;
    return header_ok(f, n, c->name, line, &c->cols, err);
  }
  if (n != c->cols)
    return core_fail(err, CORE_EINPUT,
                     "%s:%ld: %zu fields; this batch's header has %zu, so "
                     "the file was edited",
                     c->name, line, n, c->cols);
  if (!c->rows) {
    if ((st = data_row_parse_view(&r, f, n, c->name, line, err)) != CORE_OK ||
        (st = one_value(c, &r, line, err)) != CORE_OK)
      return st;
    return c->fn(c->fn_ctx, &r, err);
  }
  if ((st = data_row_parse_pooled(&r, f, n, c->name, line, c->rows->pool,
                                  err)) != CORE_OK ||
      (st = one_value(c, &r, line, err)) != CORE_OK)
    return st;
  return data_rowset_push(c->rows, &r, err);
}

/* Loads one batch csv. A torn tail is an error in a frozen file and
 * ignored in an unfinished one (recovery reports it). A frozen file is
 * hashed as it is read: rows whose bytes are not the ones the MANIFEST
 * vouches for are refused (every command that uses rows reads them
 * here), unless the experiment trusts changed files (report --force). */
static core_status load_csv(const data_experiment *exp, const char *path,
                            const data_manifest_line *frozen, load_ctx c,
                            csvscan_result *res, core_err *err) {
  char hex[CORE_SHA256_HEX];
  core_status st;
  c.name = path;
  c.header_seen = 0;
  if (!(c.values = data_runvalues_new(1)))
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
  /* Read a chunk at a time: a batch of a million rows is 160 MB of text
   * that need never be in memory at once. */
  st = data_csv_scan_file(path, on_load, &c, res, frozen ? hex : NULL, err);
  data_runvalues_free(c.values);
  if (st == CORE_OK && frozen && !exp->trust_changed &&
      strcmp(hex, frozen->sha256) != 0)
    st = core_fail(err, CORE_EVERIFY,
                   "%s: content differs from the MANIFEST (sha256 %.12s..., "
                   "recorded %.12s...): the frozen rows were changed, so "
                   "nothing is computed from them; run prereg verify",
                   path, hex, frozen->sha256);
  if (st == CORE_OK && frozen && res->torn)
    st = core_fail(err, CORE_EINPUT,
                   "%s:%ld: incomplete last line in a frozen batch; run "
                   "prereg verify",
                   path, res->torn_line);
  if (st == CORE_OK && !c.header_seen && frozen)
    st = core_fail(err, CORE_EINPUT, "%s:1: empty batch file (no header)",
                   path);
  return st;
}

/* Every batch csv of exp, in batch order, through c. */
static core_status scan_batches(const data_experiment *exp, load_ctx c,
                                core_err *err) {
  char *bdir = core_path_join(exp->dir, "batches");
  char **names = NULL;
  size_t n = 0;
  data_manifest m;
  core_status st;
  long num;
  if (!bdir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = data_manifest_load(exp->dir, &m, NULL, err)) != CORE_OK) {
    core_free(bdir);
    return st;
  }
  st = core_list_dir(bdir, &names, &n, err);
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    char *full, *rel;
    csvscan_result res;
    if (!data_batch_name(names[i], ".csv", &num))
      continue;
    full = core_path_join(bdir, names[i]);
    rel = core_asprintf("batches/%s", names[i]);
    if (!full || !rel)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    else
      st = load_csv(exp, full, data_manifest_find(&m, rel), c, &res, err);
    core_free(full);
    core_free(rel);
  }
  core_names_free(names, n);
  data_manifest_free(&m);
  core_free(bdir);
  return st;
}

core_status data_load_rows(const data_experiment *exp, data_rowset *rows,
                           core_err *err) {
  load_ctx c = {NULL, rows, 0, NULL, NULL, NULL, 0};
  core_status st;
  memset(rows, 0, sizeof *rows);
  /* The rows' strings are interned: most columns repeat a few values. */
  rows->pool = data_strpool_new();
  if (!rows->pool)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = scan_batches(exp, c, err);
  if (st != CORE_OK)
    data_rowset_free(rows);
  return st;
}

core_status data_scan_rows(const data_experiment *exp, data_row_fn fn,
                           void *ctx, core_err *err) {
  load_ctx c = {NULL, NULL, 0, fn, ctx, NULL, 0};
  return scan_batches(exp, c, err);
}

core_status data_unfinished_batches(const data_experiment *exp, char ***out,
                                    size_t *n_out, core_err *err) {
  char *bdir = core_path_join(exp->dir, "batches");
  char **names = NULL, **res = NULL;
  size_t n = 0, k = 0;
  data_manifest m;
  long num;
  core_status st;
  *out = NULL;
  *n_out = 0;
  if (!bdir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = data_manifest_load(exp->dir, &m, NULL, err)) != CORE_OK) {
    core_free(bdir);
    return st;
  }
  st = core_list_dir(bdir, &names, &n, err);
  if (st == CORE_OK && n > 0 && !(res = core_calloc(n, sizeof *res)))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    char rel[300];
    if (!data_batch_name(names[i], ".csv", &num))
      continue;
    snprintf(rel, sizeof rel, "batches/%s", names[i]);
    if (data_manifest_find(&m, rel))
      continue;
    if (!(res[k] = core_strndup(names[i], strlen(names[i]) - 4)))
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    else
      k++;
  }
  core_names_free(names, n);
  data_manifest_free(&m);
  core_free(bdir);
  if (st != CORE_OK) {
    core_names_free(res, k);
    return st;
  }
  *out = res;
  *n_out = k;
  return CORE_OK;
}

/* Runs */

static int same_str(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") == 0;
}

int data_same_run(const data_row *a, const data_row *b) {
  return same_str(a->batch, b->batch) && same_str(a->workload, b->workload) &&
         same_str(a->arm, b->arm) && same_str(a->run_id, b->run_id) &&
         ((a->run_id && a->run_id[0] != '\0') || a->seq == b->seq);
}

/* The pilot's runs */

typedef struct pilot_tally {
  long runs, valid;
  char last[128];
} pilot_tally;

/* Rows of one run come one after the other: a run is a change of id. */
static core_status tally_row(void *ctx, const data_row *r, core_err *err) {
  pilot_tally *t = ctx;
  (void)err;
  if (r->run_id && strncmp(t->last, r->run_id, sizeof t->last) == 0)
    return CORE_OK;
  snprintf(t->last, sizeof t->last, "%s", r->run_id ? r->run_id : "");
  t->runs++;
  t->valid += r->valid != 0;
  return CORE_OK;
}

core_status data_pilot_count(const data_experiment *exp, long *runs,
                             long *valid, core_err *err) {
  data_experiment *pilot = NULL;
  pilot_tally t;
  core_status st = data_pilot_open(exp, &pilot, err);
  memset(&t, 0, sizeof t);
  *runs = *valid = -1;
  if (st == CORE_OK && pilot->n_versions > 0 &&
      (st = data_scan_rows(pilot, tally_row, &t, err)) == CORE_OK) {
    *runs = t.runs;
    *valid = t.valid;
  }
  data_experiment_free(pilot);
  return st;
}
