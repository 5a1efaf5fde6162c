/* verify.c: `prereg verify` of a data folder: walks DATA/ID and feeds
 * every file to the one verifier (check.c), which a bundle's stream feeds
 * too; what only a folder can have (modes, files a killed prereg left,
 * batches still being written) is said here. Each problem names its file.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data_internal.h"

typedef struct walker {
  const data_experiment *exp;
  data_check *v;
  core_buf *out;
  char **unfinished; /* "bNNNN" */
  size_t n_unfinished;
} walker;

/* Files that are no frozen file */

/* 1 when rel belongs to a batch still being written. */
static int in_unfinished(const walker *w, const char *rel) {
  for (size_t i = 0; i < w->n_unfinished; i++) {
    size_t l = strlen(w->unfinished[i]);
    if (strncmp(rel, "batches/", 8) == 0 &&
        strncmp(rel + 8, w->unfinished[i], l) == 0 &&
        (rel[8 + l] == '/' || strcmp(rel + 8 + l, ".csv") == 0 ||
         strcmp(rel + 8 + l, ".json") == 0))
      return 1;
  }
  return 0;
}

/* The temporary file of an atomic write cut short by kill -9 is debris,
 * not tampering: a note that says how it goes away (recovery removes it
 * under the lock). 1 when rel is one. */
static int debris(const walker *w, const char *full, const char *name) {
  long pid = data_tmp_file_pid(name);
  if (pid <= 0 || data_check_listed(w->v, name))
    return 0;
  if (data_pid_gone(pid))
    core_buf_printf(w->out,
                    "note: %s: leftover temporary file of a prereg that was "
                    "killed (pid %ld); run prereg run --resume (it removes "
                    "it)\n",
                    full, pid);
  else
    core_buf_printf(w->out,
                    "note: %s: temporary file of a prereg still running "
                    "(pid %ld)\n",
                    full, pid);
  return 1;
}

/* A batch folder (or facts) whose CSV is gone and was never frozen: the
 * CSV of the batch being written was deleted. Nothing else lists it (the
 * MANIFEST never had it, and without a CSV it is not unfinished either),
 * so it is named here, or verify would pass over lost rows. */
static void check_orphans(walker *w) {
  char *bdir = core_path_join(w->exp->dir, "batches");
  char **names = NULL;
  size_t n = 0;
  core_err err;
  if (!bdir || core_list_dir(bdir, &names, &n, &err) != CORE_OK) {
    core_free(bdir);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    long num;
    char csv[80], rel[96];
    char *full;
    int is_dir = data_batch_name(names[i], "", &num);
    if (!is_dir && !data_batch_name(names[i], ".json", &num))
      continue;
    snprintf(csv, sizeof csv, "%.*s.csv",
             (int)(strlen(names[i]) - (is_dir ? 0 : 5)), names[i]);
    snprintf(rel, sizeof rel, "batches/%s", csv);
    if (data_check_listed(w->v, rel)) /* missing: said at the end */
      continue;
    if (!(full = core_path_join(bdir, csv)))
      break;
    if (!core_exists(full)) {
      char *dir = core_path_join(bdir, names[i]);
      char orel[120];
      snprintf(orel, sizeof orel, "batches/%s%s", names[i], is_dir ? "/" : "");
      data_check_problem(
          w->v, orel,
          "%s without its CSV (%s is missing and was never frozen): the "
          "rows of this batch were deleted while it was written; restore "
          "it from a backup, or remove %s to accept the loss (prereg run "
          "--resume then runs them again)",
          is_dir ? "batch folder" : "batch facts", full, dir ? dir : "it");
      core_free(dir);
    }
    core_free(full);
  }
  core_names_free(names, n);
  core_free(bdir);
}

/* A time-stamp request written to be sent by other means is not frozen:
 * a note that says how it goes away. 1 when rel is one. */
static int pending_request(const walker *w, const char *full,
                           const char *rel) {
  size_t n = strlen(rel);
  if (strncmp(rel, DATA_STAMPS_DIR "/", sizeof DATA_STAMPS_DIR) != 0 ||
      n < 4 || strcmp(rel + n - 4, ".tsq") != 0 ||
      data_check_listed(w->v, rel))
    return 0;
  core_buf_printf(w->out,
                  "note: %s: a time-stamp request not yet answered; send it "
                  "to a TSA and freeze the reply with prereg stamp SHEET "
                  "--attach FILE.tsr\n",
                  full);
  return 1;
}

/* Feeding the verifier */

/* The whole of a small file (versions, facts) to feed. */
static void feed_whole(walker *w, const char *full, const char *rel,
                       int facts) {
  char *text = NULL;
  size_t len = 0;
  core_err err;
  if (core_read_file(full, &text, &len, &err) != CORE_OK) {
    data_check_problem(w->v, rel, "cannot read: %s", err.msg);
    return;
  }
  if (facts)
    data_check_facts(w->v, rel, text, len);
  else
    data_check_version(w->v, rel, text, len);
  core_free(text);
}

/* A file streamed to the verifier a chunk at a time: a batch's CSV of a
 * million rows is never in memory. */
static void feed_stream(walker *w, const char *full, const char *rel,
                        int unfinished) {
  enum { CHUNK = 1 << 20 };
  char *buf = core_malloc(CHUNK);
  int fd = open(full, O_RDONLY | O_CLOEXEC);
  ssize_t n = 0;
  if (!buf || fd < 0) {
    data_check_problem(w->v, rel, "cannot read: %s",
                       buf ? strerror(errno) : "out of memory");
    core_free(buf);
    if (fd >= 0)
      close(fd);
    return;
  }
  data_check_file_begin(w->v, rel, unfinished);
  while ((n = read(fd, buf, CHUNK)) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      data_check_problem(w->v, rel, "cannot read: %s", strerror(errno));
      break;
    }
    data_check_file_data(w->v, buf, (size_t)n);
  }
  data_check_file_end(w->v);
  close(fd);
  core_free(buf);
}

/* One entry found under versions/ or batches/; pass: 0 versions, 1 batch
 * facts, 2 the rest (the verifier wants them in that order). */
static void feed_entry(walker *w, const char *full, const char *rel,
                       const char *name, int pass) {
  struct stat sb;
  int is_version = strncmp(rel, "versions/", 9) == 0;
  int is_facts = !is_version && strncmp(rel, "batches/", 8) == 0 &&
                 !strchr(rel + 8, '/') && strlen(name) > 5 &&
                 strcmp(name + strlen(name) - 5, ".json") == 0;
  int want = is_version ? 0 : is_facts ? 1 : 2;
  if (want != pass || lstat(full, &sb) != 0)
    return;
  /* The pilot's folder has files of its own (its MANIFEST, its lock):
   * what DATA/ID's MANIFEST vouches for is what it lists there. */
  if (strncmp(rel, DATA_PILOT_DIR "/", sizeof DATA_PILOT_DIR) == 0 &&
      !data_check_listed(w->v, rel))
    return;
  if (debris(w, full, name) || pending_request(w, full, rel))
    return;
  if (!S_ISREG(sb.st_mode)) {
    if (data_check_listed(w->v, rel))
      data_check_problem(w->v, rel,
                         "not a regular file (listed in MANIFEST "
                         "line %ld)",
                         data_check_listed(w->v, rel));
    else
      data_check_problem(w->v, rel,
                         "not a regular file, and not in the "
                         "MANIFEST");
    return;
  }
  if (in_unfinished(w, rel)) {
    /* Its rows count for the status; its bytes are not frozen yet. */
    if (strlen(rel) > 4 && strcmp(rel + strlen(rel) - 4, ".csv") == 0)
      feed_stream(w, full, rel, 1);
    return;
  }
  data_check_mode(w->v, rel, (unsigned)sb.st_mode);
  if (pass < 2)
    feed_whole(w, full, rel, is_facts);
  else
    feed_stream(w, full, rel, 0);
}

static void walk(walker *w, const char *rel, int pass) {
  char *full = core_path_join(w->exp->dir, rel);
  char **names = NULL;
  size_t n = 0;
  core_err err;
  if (!full)
    return;
  if (core_list_dir(full, &names, &n, &err) != CORE_OK) {
    data_check_problem(w->v, rel, "cannot list: %s", err.msg);
    core_free(full);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    char *r = core_path_join(rel, names[i]);
    char *f = core_path_join(full, names[i]);
    struct stat sb;
    if (r && f && lstat(f, &sb) == 0 && S_ISDIR(sb.st_mode))
      walk(w, r, pass);
    else if (r && f)
      feed_entry(w, f, r, names[i], pass);
    core_free(r);
    core_free(f);
  }
  core_names_free(names, n);
  core_free(full);
}

/* The pilot's files DATA/ID's MANIFEST lists, when it has a pilot. */
static void walk_pilot(walker *w) {
  char *full = core_path_join(w->exp->dir, DATA_PILOT_DIR);
  if (full && core_is_dir(full))
    walk(w, DATA_PILOT_DIR, 2);
  core_free(full);
}

/* The MANIFEST, first: everything is checked against it. Without one
 * every batch would pass for unfinished, and --resume (which refuses
 * then) for the cure: each is named instead. */
static core_status feed_manifest(walker *w, core_err *err) {
  char *mpath = core_path_join(w->exp->dir, "MANIFEST"), *text = NULL;
  size_t len = 0;
  struct stat sb;
  core_status st = CORE_OK;
  if (!mpath)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (lstat(mpath, &sb) != 0) {
    data_check_manifest(w->v, NULL, 0);
  } else if ((st = core_read_file(mpath, &text, &len, err)) == CORE_OK) {
    if (sb.st_mode & 0222)
      core_buf_printf(w->out,
                      "note: %s: writable (mode %04o); prereg "
                      "replaces it atomically and never edits it: chmod a-w "
                      "it\n",
                      mpath, (unsigned)(sb.st_mode & 07777));
    data_check_manifest(w->v, text, len);
    st =
        data_unfinished_batches(w->exp, &w->unfinished, &w->n_unfinished, err);
  }
  core_free(text);
  core_free(mpath);
  return st;
}

core_status data_verify(const data_experiment *exp, core_buf *report,
                        core_err *err) {
  walker w = {exp, NULL, report, NULL, 0};
  data_check_result res;
  char *where;
  core_status st;
  if (exp->n_versions == 0)
    return core_fail(err, CORE_ELOCK,
                     "%s: not registered: nothing to "
                     "verify",
                     exp->dir);
  if (!(where = core_asprintf("%s/", exp->dir)) ||
      !(w.v = data_check_new(where, report))) {
    core_free(where);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_free(where);
  if ((st = feed_manifest(&w, err)) != CORE_OK) {
    (void)data_check_end(w.v, &res, NULL);
    core_names_free(w.unfinished, w.n_unfinished);
    return st;
  }
  for (int pass = 0; pass < 3; pass++) {
    walk(&w, "versions", pass);
    walk(&w, "batches", pass);
    walk(&w, "inputs", pass);
    walk(&w, DATA_STAMPS_DIR, pass);
    walk(&w, DATA_SIGNATURES_DIR, pass);
  }
  walk_pilot(&w);
  check_orphans(&w);
  for (size_t i = 0; i < w.n_unfinished; i++)
    core_buf_printf(report,
                    "note: %s/batches/%s.csv: unfinished batch (not in the "
                    "MANIFEST); run prereg run SHEET --resume to recover "
                    "and freeze it\n",
                    exp->dir, w.unfinished[i]);
  core_names_free(w.unfinished, w.n_unfinished);
  if ((st = data_check_end(w.v, &res, err)) != CORE_OK)
    return st;
  if (res.problems == 0)
    core_buf_printf(report, "ok: %zu files, chain of %zu version%s\n",
                    res.files, res.versions, res.versions == 1 ? "" : "s");
  core_buf_printf(report, "%s\n", res.status);
  return res.problems
             ? core_fail(err, CORE_EVERIFY,
                         "%s: verification failed: %ld problem%s", exp->dir,
                         res.problems, res.problems == 1 ? "" : "s")
             : CORE_OK;
}
