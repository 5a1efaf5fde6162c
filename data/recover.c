/* recover.c: `run --resume` starts here: batches a crash left unfinished
 * (a csv not in the MANIFEST) lose their torn tail and any run cut short,
 * each drop reported, and are frozen like any other batch.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "data/data_internal.h"

typedef struct rec_ctx {
  const char *name;
  data_rowset rows;
  long *lines; /* start line of each row */
  size_t cap_lines;
  int header_seen;
  long bad_line; /* an unparsable record; fatal unless it is the last */
  core_err bad_err;
} rec_ctx;

static core_status on_rec(void *vctx, char **f, size_t n, long line,
                          core_err *err) {
  rec_ctx *c = vctx;
  data_row r;
  core_status st;
  if (c->bad_line) /* a bad record followed by more: real damage */
    return core_fail(err, CORE_EINPUT, "%s", c->bad_err.msg);
  if (!c->header_seen) {
    c->header_seen = 1;
    return CORE_OK; /* checked by data_load_rows later; we only repair */
  }
  if (data_row_parse(&r, f, n, c->name, line, &c->bad_err) != CORE_OK) {
    c->bad_line = line;
    return CORE_OK;
  }
  long *nl = core_grow(c->lines, &c->cap_lines, c->rows.n, sizeof *nl, 64);
  if (!nl) {
    data_row_clear(&r);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  c->lines = nl;
  c->lines[c->rows.n] = line;
  if ((st = data_rowset_push(&c->rows, &r, err)) != CORE_OK)
    return st;
  return CORE_OK;
}

/* Byte offset where physical line `line` (1-based) starts. */
static size_t line_offset(const char *text, size_t len, long line) {
  size_t off = 0;
  for (long l = 1; l < line && off < len; off++)
    if (text[off] == '\n')
      l++;
  return off;
}

/* Metric count of workload in sheet version v (cached per version). */
static core_status metric_count(data_experiment *exp, proto_sheet **cache,
                                int v, const char *workload, long *count,
                                core_err *err) {
  long w;
  if (v < 0 || (size_t)v >= exp->n_versions)
    return core_fail(err, CORE_EINPUT,
                     "%s: rows name sheet version v%d, "
                     "which does not exist",
                     exp->dir, v);
  if (!cache[v] && !(cache[v] = data_load_version(exp, v, err)))
    return err ? err->status : CORE_EPROTOCOL;
  w = proto_workload_index(cache[v], workload);
  *count = w < 0 ? -1 : (long)cache[v]->workloads[w].n_metrics;
  return CORE_OK;
}

static core_status recover_one(data_experiment *exp, const char *id,
                               proto_sheet **cache, core_buf *notes,
                               core_err *err) {
  char *csv = core_asprintf("%s/batches/%s.csv", exp->dir, id);
  char *js = core_asprintf("%s/batches/%s.json", exp->dir, id);
  char *text = NULL, *facts_text = NULL;
  size_t len = 0, keep;
  long num = 0, dropped = 0;
  int fix_header = 0;
  rec_ctx c;
  csvscan_result res;
  json_t *facts = NULL, *notes_json = json_array();
  data_batch *b = NULL;
  core_status st;
  memset(&c, 0, sizeof c);
  c.name = csv;
  if (!csv || !js || !notes_json) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  data_batch_name(id, "", &num);
  /* A crash between chmod and the manifest leaves it read-only. */
  chmod(csv, 0644);
  if ((st = core_read_file(csv, &text, &len, err)) != CORE_OK)
    goto cleanup;
  keep = len;
  if (len < sizeof DATA_ROW_HEADER &&
      memcmp(text, DATA_ROW_HEADER "\n", len) == 0) {
    /* Torn inside the header itself: write it whole again. */
    keep = 0;
    fix_header = 1;
    core_buf_printf(notes, "%s:1: torn header rewritten\n", csv);
  } else {
    if ((st = data_csv_scan(csv, text, len, on_rec, &c, &res, err)) != CORE_OK)
      goto cleanup;
    if (res.torn || c.bad_line) {
      long line = c.bad_line ? c.bad_line : res.torn_line;
      keep = line_offset(text, len, line);
      core_buf_printf(notes, "%s:%ld: %s last line dropped\n", csv, line,
                      c.bad_line ? "unparsable" : "torn (no final newline)");
      json_array_append_new(
          notes_json, json_sprintf("line %ld: torn last line dropped", line));
    }
    /* The rows of one run are appended in one write; fewer than the
     * workload's metrics means the write was cut short. Imported rows
     * carry whatever metrics the source had, so only runs are checked. */
    if (c.rows.n > 0) {
      size_t last = c.rows.n - 1, first = last;
      const data_row *r = &c.rows.rows[last];
      long want = 0;
      while (first > 0 && data_same_run(&c.rows.rows[first - 1], r))
        first--;
      if (strcmp(r->source, "import") != 0) {
        if ((st = metric_count(exp, cache, r->sheet_version, r->workload,
                               &want, err)) != CORE_OK)
          goto cleanup;
        if (want > 0 && (long)(last - first + 1) < want) {
          keep = line_offset(text, len, c.lines[first]);
          dropped = (long)(last - first + 1);
          core_buf_printf(notes,
                          "%s:%ld: run %s of %s/%s cut short (%ld of %ld "
                          "metrics); its rows dropped, --resume runs it "
                          "again\n",
                          csv, c.lines[first], r->run_id, r->workload, r->arm,
                          dropped, want);
          json_array_append_new(
              notes_json,
              json_sprintf("line %ld: run %s of %s/%s cut short (%ld of %ld "
                           "metrics); dropped",
                           c.lines[first], r->run_id, r->workload, r->arm,
                           dropped, want));
        }
      }
    }
  }
  if (keep < len || fix_header) {
    int fd = open(csv, O_WRONLY | O_CLOEXEC);
    const char *hdr = DATA_ROW_HEADER "\n";
    if (fd < 0 || ftruncate(fd, (off_t)keep) != 0 ||
        (keep == 0 && write(fd, hdr, strlen(hdr)) != (ssize_t)strlen(hdr)) ||
        fsync(fd) != 0) {
      st = core_fail(err, CORE_EIO, "%s: cannot cut the torn tail: %s", csv,
                     strerror(errno));
      if (fd >= 0)
        close(fd);
      goto cleanup;
    }
    close(fd);
  }
  /* Facts written before the crash (freeze got that far) are kept. */
  if (core_exists(js)) {
    facts = json_load_file(js, 0, NULL);
    if (facts && !json_is_object(facts)) {
      json_decref(facts);
      facts = NULL;
    }
  }
  if (!facts) {
    facts = json_object();
    json_object_set_new(
        facts, "kind",
        json_string(c.rows.n > 0 &&
                            strcmp(c.rows.rows[0].source, "import") == 0
                        ? "import"
                        : "run"));
  }
  json_object_set_new(facts, "recovered", json_true());
  json_object_set_new(facts, "recovery_notes", notes_json);
  notes_json = NULL;
  if (!(facts_text =
            json_dumps(facts, JSON_PRESERVE_ORDER | FACTS_PRECISION)) ||
      !(b = data_batch_make(
            exp, num, json_string_value(json_object_get(facts, "kind"))))) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  {
    const char *sa = json_string_value(json_object_get(facts, "started_at"));
    if (sa)
      snprintf(b->started_at, sizeof b->started_at, "%s", sa);
    else if (c.rows.n > 0 && c.rows.rows[0].started_at[0])
      snprintf(b->started_at, sizeof b->started_at, "%s",
               c.rows.rows[0].started_at);
  }
  {
    json_t *v = json_object_get(facts, "sheet_versions_at_start");
    if (json_is_integer(v))
      b->versions_at_start = (size_t)json_integer_value(v);
  }
  b->rows = (long)c.rows.n - dropped;
  st = data_batch_freeze(b, facts_text, err);
  b = NULL;
  if (st == CORE_OK)
    core_buf_printf(notes, "%s: recovered and frozen (%ld rows)\n", csv,
                    (long)c.rows.n - dropped);
cleanup:
  data_batch_release(b);
  json_decref(facts);
  json_decref(notes_json);
  core_free(facts_text);
  data_rowset_free(&c.rows);
  core_free(c.lines);
  core_free(text);
  core_free(csv);
  core_free(js);
  return st;
}

/* {==== Stale temporary files ==== */

long data_tmp_file_pid(const char *name) {
  const char *t = strstr(name, ".tmp.");
  const char *d;
  long pid = 0;
  if (!t || t == name)
    return 0;
  /* The last ".tmp." counts: NAME itself may hold one. */
  for (const char *u; (u = strstr(t + 1, ".tmp.")) != NULL;)
    t = u;
  d = t + 5;
  if (*d == '\0')
    return 0;
  for (; *d; d++) {
    if (*d < '0' || *d > '9' || pid > 99999999)
      return 0;
    pid = pid * 10 + (*d - '0');
  }
  return pid;
}

int data_pid_gone(long pid) {
  return pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes, from folder rel of the experiment, the temporary files of
 * atomic writes whose writer died (kill -9 between create and rename):
 * they hold nothing the MANIFEST needs, and verify would count them as
 * files slipped in. Of the subfolders only batches/bNNNN/ is searched:
 * deeper ones hold what commands wrote, which is not ours to judge. */
static core_status remove_stale_tmp(data_experiment *exp, const char *rel,
                                    core_buf *notes, core_err *err) {
  char *dir = core_path_join(exp->dir, rel);
  char **names = NULL;
  size_t n = 0;
  core_status st;
  if (!dir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = core_list_dir(dir, &names, &n, err)) != CORE_OK) {
    core_free(dir);
    return st;
  }
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    char *full = core_path_join(dir, names[i]);
    char *sub = core_path_join(rel, names[i]);
    struct stat sb;
    long pid = data_tmp_file_pid(names[i]);
    if (!full || !sub) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    } else if (lstat(full, &sb) != 0) {
      /* gone meanwhile: nothing to do */
    } else if (S_ISDIR(sb.st_mode)) {
      if (strcmp(rel, "batches") == 0) /* a batch's own folder */
        st = remove_stale_tmp(exp, sub, notes, err);
    } else if (S_ISREG(sb.st_mode) && pid > 0 && data_pid_gone(pid)) {
      if (unlink(full) != 0 && errno != ENOENT)
        st = core_fail(err, CORE_EIO,
                       "%s: cannot remove this leftover "
                       "temporary file: %s; remove it by hand",
                       full, strerror(errno));
      else
        core_buf_printf(notes,
                        "%s: leftover temporary file of a prereg "
                        "that was killed (pid %ld) removed\n",
                        full, pid);
    }
    core_free(full);
    core_free(sub);
  }
  core_names_free(names, n);
  core_free(dir);
  return st;
}

/* }==== */

core_status data_recover(data_experiment *exp, core_buf *notes,
                         core_err *err) {
  char **ids = NULL;
  size_t n = 0;
  proto_sheet **cache = NULL;
  core_status st;
  data_json_init();
  if ((st = data_experiment_lock(exp, err)) != CORE_OK)
    return st;
  {
    /* Every batch would look unfinished without the MANIFEST, and
     * "recovering" frozen ones would touch them: stop before. */
    char *mpath = core_path_join(exp->dir, "MANIFEST");
    int missing = mpath && !core_exists(mpath);
    if (!mpath)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    if (missing && exp->n_versions > 0)
      st = core_fail(err, CORE_EVERIFY,
                     "%s is missing; the experiment "
                     "folder was damaged; run prereg verify",
                     mpath);
    core_free(mpath);
    if (st != CORE_OK)
      return st;
  }
  /* Under the lock no other prereg writes here: a temporary file whose
   * writer is gone is debris. The MANIFEST's own sits at the top. */
  if ((st = remove_stale_tmp(exp, "", notes, err)) != CORE_OK ||
      (st = remove_stale_tmp(exp, "versions", notes, err)) != CORE_OK ||
      (st = remove_stale_tmp(exp, "batches", notes, err)) != CORE_OK)
    return st;
  if ((st = data_unfinished_batches(exp, &ids, &n, err)) != CORE_OK)
    return st;
  if (n > 0 && !(cache = core_calloc(exp->n_versions + 1, sizeof *cache)))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t i = 0; i < n && st == CORE_OK; i++)
    st = recover_one(exp, ids[i], cache, notes, err);
  for (size_t v = 0; cache && v <= exp->n_versions; v++)
    proto_sheet_free(cache[v]);
  core_free(cache);
  core_names_free(ids, n);
  return st;
}
