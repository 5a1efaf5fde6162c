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

#include "core/limits.h"
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

/* The unfinished batch's files */

/* Says, after the error, what recovery refused and what to do. */
static void refused(core_err *err) {
  size_t n;
  if (!err)
    return;
  n = strlen(err->msg);
  snprintf(err->msg + n, sizeof err->msg - n,
           " (an unfinished batch is recovered only from files prereg "
           "wrote; remove it or put the file back, then run prereg run "
           "--resume)");
}

/* Opens the csv of an unfinished batch and reads it. It must be a
 * regular file and not a link: recovery makes it writable and cuts it,
 * which would reach whatever a link points to. OUT: *fd open on it (the
 * caller closes it), *text, *len. */
static core_status open_unfinished(const char *csv, int *fd, char **text,
                                   size_t *len, core_err *err) {
  core_status st = core_open_regular(csv, 0, fd, NULL, err);
  if (st != CORE_OK) {
    refused(err);
    return st;
  }
  if ((st = core_check_sole(*fd, csv, err)) != CORE_OK) {
    refused(err);
    return st;
  }
  /* A crash between chmod and the manifest leaves it read-only. */
  if (fchmod(*fd, 0644) != 0)
    return core_fail(err, CORE_EIO, "%s: cannot make writable: %s", csv,
                     strerror(errno));
  return core_read_fd(*fd, csv, RECOVER_READ_MAX, text, len, err);
}

/* Cuts the csv open at rfd to keep bytes (the header written again when
 * nothing of it is kept), through a descriptor of the same file. */
static core_status cut_tail(const char *csv, int rfd, size_t keep,
                            core_err *err) {
  const char *hdr = DATA_ROW_HEADER "\n";
  struct stat a, b;
  int fd = open(csv, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  int same = fd >= 0 && fstat(fd, &a) == 0 && fstat(rfd, &b) == 0 &&
             a.st_ino == b.st_ino && a.st_dev == b.st_dev && a.st_nlink == 1;
  if (!same || ftruncate(fd, (off_t)keep) != 0 ||
      (keep == 0 && write(fd, hdr, strlen(hdr)) != (ssize_t)strlen(hdr)) ||
      fsync(fd) != 0) {
    core_status st =
        core_fail(err, CORE_EIO, "%s: cannot cut the torn tail: %s", csv,
                  same ? strerror(errno) : "it was replaced while being read");
    if (fd >= 0)
      close(fd);
    return st;
  }
  close(fd);
  return CORE_OK;
}

/* The facts a freeze cut short wrote; anything but a JSON object is
 * dropped (made anew), a link or FIFO in their place refused. */
static core_status load_facts(const char *js, json_t **facts, core_err *err) {
  char *text = NULL;
  size_t len = 0;
  core_status st = core_read_file(js, &text, &len, err);
  *facts = NULL;
  if (st != CORE_OK) {
    refused(err);
    return st;
  }
  *facts = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
  core_free(text);
  if (*facts && !json_is_object(*facts)) {
    json_decref(*facts);
    *facts = NULL;
  }
  return CORE_OK;
}

/* Removes what no batch may hold from the folder open at dfd: links,
 * FIFOs, sockets and devices a command left when its run was cut short
 * (a $PREREG_METRICS made a FIFO, a socket in its working folder). Only
 * the names go; what a link points to is not touched. Each is noted. */
static core_status prune_at(int dfd, const char *full, core_buf *notes,
                            int depth, core_err *err) {
  char **names;
  size_t n;
  core_status st = core_list_dir_at(dfd, full, &names, &n, err);
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    struct stat sb;
    char *f = core_path_join(full, names[i]);
    if (!f)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    else if (fstatat(dfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) != 0)
      ; /* gone meanwhile */
    else if (S_ISDIR(sb.st_mode) && depth < 64) {
      int sub;
      if (core_open_subdir(dfd, names[i], f, &sub, NULL) == CORE_OK) {
        st = prune_at(sub, f, notes, depth + 1, err);
        close(sub);
      }
    } else if (!S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
      if (unlinkat(dfd, names[i], 0) != 0)
        st = core_fail(err, CORE_EIO, "%s: cannot remove: %s", f,
                       strerror(errno));
      else
        core_buf_printf(notes,
                        "%s: not a regular file (left by a run cut short); "
                        "removed, so that the batch can be frozen\n",
                        f);
    }
    core_free(f);
  }
  core_names_free(names, n);
  return st;
}

static core_status prune_leftovers(data_experiment *exp, const char *id,
                                   core_buf *notes, core_err *err) {
  char *dir = core_asprintf("%s/batches/%s", exp->dir, id);
  struct stat sb;
  int dfd;
  core_status st = CORE_OK;
  if (!dir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (lstat(dir, &sb) == 0 || errno != ENOENT) {
    /* The folder itself a link: refused, it is not ours to freeze. */
    if ((st = core_open_dir(dir, &dfd, err)) == CORE_OK) {
      st = prune_at(dfd, dir, notes, 0, err);
      close(dfd);
    } else {
      refused(err);
    }
  }
  core_free(dir);
  return st;
}

/* A run batch whose start facts stand (prereg ended before its freeze):
 * the runs it kept and when the last of them started, which is when it
 * was interrupted as near as its rows tell. */
static void interrupted_at(json_t *facts, const data_rowset *rows, size_t n) {
  size_t runs = 0;
  for (size_t i = 0; i < n; i++)
    runs += i == 0 || !data_same_run(&rows->rows[i - 1], &rows->rows[i]);
  json_object_set_new(facts, "runs_recorded", json_integer((json_int_t)runs));
  if (n > 0 && rows->rows[n - 1].started_at && rows->rows[n - 1].started_at[0])
    json_object_set_new(facts, "interrupted_at",
                        json_string(rows->rows[n - 1].started_at));
}

/* What recovery drops from the end of the CSV text scanned into c and
 * res: a torn or unparsable last line, and the last run of c's rows when
 * it has fewer rows than its workload's metrics (its one write was cut
 * short). *keep is set to the offset in text where the dropped tail
 * starts, *dropped to the rows dropped; each gets a note in notes and
 * notes_json. */
static core_status tail_to_drop(data_experiment *exp, proto_sheet **cache,
                                const rec_ctx *c, const csvscan_result *res,
                                const char *csv, const char *text, size_t len,
                                core_buf *notes, json_t *notes_json,
                                size_t *keep, long *dropped, core_err *err) {
  core_status st;
  if (res->torn || c->bad_line) {
    long line = c->bad_line ? c->bad_line : res->torn_line;
    *keep = line_offset(text, len, line);
    core_buf_printf(notes, "%s:%ld: %s last line dropped\n", csv, line,
                    c->bad_line ? "unparsable" : "torn (no final newline)");
    json_array_append_new(
        notes_json, json_sprintf("line %ld: torn last line dropped", line));
  }
  /* The rows of one run are appended in one write; fewer than the
   * workload's metrics means the write was cut short. Imported rows
   * carry whatever metrics the source had, so only runs are checked. */
  if (c->rows.n > 0) {
    size_t last = c->rows.n - 1, first = last;
    const data_row *r = &c->rows.rows[last];
    long want = 0;
    while (first > 0 && data_same_run(&c->rows.rows[first - 1], r))
      first--;
    if (strcmp(r->source, "import") != 0) {
      if ((st = metric_count(exp, cache, r->sheet_version, r->workload, &want,
                             err)) != CORE_OK)
        return st;
      if (want > 0 && (long)(last - first + 1) < want) {
        *keep = line_offset(text, len, c->lines[first]);
        *dropped = (long)(last - first + 1);
        core_buf_printf(notes,
                        "%s:%ld: run %s of %s/%s cut short (%ld of %ld "
                        "metrics); its rows dropped, --resume runs it "
                        "again\n",
                        csv, c->lines[first], r->run_id, r->workload, r->arm,
                        *dropped, want);
        json_array_append_new(
            notes_json,
            json_sprintf("line %ld: run %s of %s/%s cut short (%ld of %ld "
                         "metrics); dropped",
                         c->lines[first], r->run_id, r->workload, r->arm,
                         *dropped, want));
      }
    }
  }
  return CORE_OK;
}

/* b's start time and the versions there were then, from the facts a
 * freeze wrote before the crash, else the first row's start. */
static void start_from_facts(data_batch *b, json_t *facts,
                             const data_rowset *rows) {
  const char *sa = json_string_value(json_object_get(facts, "started_at"));
  json_t *v = json_object_get(facts, "sheet_versions_at_start");
  if (sa)
    snprintf(b->started_at, sizeof b->started_at, "%s", sa);
  else if (rows->n > 0 && rows->rows[0].started_at[0])
    snprintf(b->started_at, sizeof b->started_at, "%s",
             rows->rows[0].started_at);
  if (json_is_integer(v))
    b->versions_at_start = (size_t)json_integer_value(v);
}

/* The facts of a recovered batch (taking facts and notes_json): those a
 * freeze wrote before the crash, else its kind from its rows, marked
 * recovered with the notes. */
static json_t *recovered_facts(json_t *facts, const data_rowset *rows,
                               json_t *notes_json) {
  if (!facts) {
    facts = json_object();
    json_object_set_new(
        facts, "kind",
        json_string(rows->n > 0 && strcmp(rows->rows[0].source, "import") == 0
                        ? "import"
                        : "run"));
  }
  json_object_set_new(facts, "recovered", json_true());
  json_object_set_new(facts, "recovery_notes", notes_json);
  return facts;
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
  int fd = -1;
  memset(&c, 0, sizeof c);
  c.name = csv;
  if (!csv || !js || !notes_json) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  data_batch_name(id, "", &num);
  if ((st = open_unfinished(csv, &fd, &text, &len, err)) != CORE_OK)
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
    if ((st = tail_to_drop(exp, cache, &c, &res, csv, text, len, notes,
                           notes_json, &keep, &dropped, err)) != CORE_OK)
      goto cleanup;
  }
  if ((keep < len || fix_header) &&
      (st = cut_tail(csv, fd, keep, err)) != CORE_OK)
    goto cleanup;
  /* Facts written before the crash (freeze got that far) are kept. */
  if (core_exists(js) && (st = load_facts(js, &facts, err)) != CORE_OK)
    goto cleanup;
  if ((st = prune_leftovers(exp, id, notes, err)) != CORE_OK)
    goto cleanup;
  facts = recovered_facts(facts, &c.rows, notes_json);
  if (json_is_true(json_object_get(facts, "interrupted")))
    interrupted_at(facts, &c.rows, c.rows.n - (size_t)dropped);
  notes_json = NULL;
  if (!(facts_text = data_json_dump_flags(facts, JSON_PRESERVE_ORDER |
                                                     FACTS_PRECISION)) ||
      !(b = data_batch_make(
            exp, num, json_string_value(json_object_get(facts, "kind"))))) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  start_from_facts(b, facts, &c.rows);
  b->rows = (long)c.rows.n - dropped;
  st = data_batch_freeze(b, facts_text, err);
  b = NULL;
  if (st == CORE_OK)
    core_buf_printf(notes, "%s: recovered and frozen (%ld rows)\n", csv,
                    (long)c.rows.n - dropped);
cleanup:
  if (fd >= 0)
    close(fd);
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

/* Stale temporary files */

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
    } else if (!S_ISREG(sb.st_mode) && pid > 0) {
      /* prereg makes only regular temporary files: this one was put
       * here, and whoever did should see it. */
      st = core_fail(err, CORE_EVERIFY,
                     "%s: is named like a temporary file of prereg but is "
                     "%s; prereg made no such thing and leaves it as it is: "
                     "look at it, remove it, then retry",
                     full,
                     S_ISLNK(sb.st_mode) ? "a symbolic link"
                                         : "not a regular file");
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
  /* Recovery makes files writable, cuts and freezes them: through a
   * link in place of a folder it would do so outside the experiment. */
  static const char *const own[] = {"versions", "batches"};
  for (size_t i = 0; i < 2; i++) {
    char *d = core_path_join(exp->dir, own[i]);
    struct stat sb;
    if (!d)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    if (lstat(d, &sb) == 0 || errno != ENOENT)
      st = core_check_dir(d, err);
    core_free(d);
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
