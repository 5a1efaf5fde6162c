/* verify.c: `prereg verify`: every frozen file against the MANIFEST, no
 * file slipped in beside them, and the chain of sheet versions and the
 * batches' rows consistent with it. Each problem names its file.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

#include "data/data_internal.h"

#define MAX_ROW_PROBLEMS 5 /* per batch: the first few say enough */

typedef struct vstate {
  const data_experiment *exp;
  core_buf *out;
  manifest m;
  long problems;
  char **unfinished; /* "bNNNN" */
  size_t n_unfinished;
  /* Frozen files whose content matches but whose write bits are set: a
   * git checkout or a plain copy loses modes, and the digests, not the
   * modes, are what prove the data unchanged; so this is a note with the
   * command that restores the protection, not a failure. */
  size_t writable;
  char first_writable[512];
} vstate;

static void problem(vstate *v, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void problem(vstate *v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  core_buf_vprintf(v->out, fmt, ap);
  va_end(ap);
  core_buf_puts(v->out, "\n");
  v->problems++;
}

/* {==== Manifest entries ==== */

static void check_entries(vstate *v) {
  const char *dir = v->exp->dir;
  for (size_t i = 0; i < v->m.n; i++) {
    const manifest_entry *e = &v->m.e[i];
    char *full = core_path_join(dir, e->path);
    char hex[CORE_SHA256_HEX];
    struct stat sb;
    core_err err;
    for (size_t j = 0; j < i; j++)
      if (strcmp(v->m.e[j].path, e->path) == 0)
        problem(v, "%s/MANIFEST:%ld: %s listed twice", dir, e->line, e->path);
    if (!full) {
      problem(v, "%s: out of memory", e->path);
      continue;
    }
    if (strstr(e->path, "..") || e->path[0] == '/') {
      problem(v, "%s/MANIFEST:%ld: path '%s' leaves the experiment folder",
              dir, e->line, e->path);
    } else if (lstat(full, &sb) != 0) {
      problem(v, "%s: missing (listed in MANIFEST line %ld)", full, e->line);
    } else if (!S_ISREG(sb.st_mode)) {
      problem(v, "%s: not a regular file (listed in MANIFEST line %ld)", full,
              e->line);
    } else if (core_sha256_file(full, hex, &err) != CORE_OK) {
      problem(v, "%s", err.msg);
    } else {
      if (strcmp(hex, e->sha256) != 0)
        problem(v,
                "%s: content differs from the MANIFEST (sha256 %.12s..., "
                "recorded %.12s...)%s",
                full, hex, e->sha256,
                sb.st_mode & 0222 ? "; and it is writable" : "");
      else if (sb.st_mode & 0222 && v->writable++ == 0)
        snprintf(v->first_writable, sizeof v->first_writable, "%s (mode %04o)",
                 full, (unsigned)(sb.st_mode & 07777));
    }
    core_free(full);
  }
}

/* }==== */

/* {==== Files not in the manifest ==== */

static int in_unfinished(const vstate *v, const char *rel) {
  for (size_t i = 0; i < v->n_unfinished; i++) {
    size_t l = strlen(v->unfinished[i]);
    if (strncmp(rel, "batches/", 8) == 0 &&
        strncmp(rel + 8, v->unfinished[i], l) == 0 &&
        (rel[8 + l] == '/' || strcmp(rel + 8 + l, ".csv") == 0 ||
         strcmp(rel + 8 + l, ".json") == 0))
      return 1;
  }
  return 0;
}

/* A file the MANIFEST does not list. The temporary file of an atomic
 * write cut short by kill -9 is debris, not tampering: a note that says
 * how it goes away (recovery removes it under the lock). */
static void not_listed(vstate *v, const char *full, const char *name) {
  long pid = data_tmp_file_pid(name);
  if (pid > 0 && data_pid_gone(pid))
    core_buf_printf(v->out,
                    "note: %s: leftover temporary file of a prereg that was "
                    "killed (pid %ld); run prereg run --resume (it removes "
                    "it)\n",
                    full, pid);
  else if (pid > 0)
    core_buf_printf(v->out,
                    "note: %s: temporary file of a prereg still running "
                    "(pid %ld)\n",
                    full, pid);
  else
    problem(v, "%s: not in the MANIFEST (added after freezing?)", full);
}

static void walk(vstate *v, const char *rel) {
  char *full = core_path_join(v->exp->dir, rel);
  char **names = NULL;
  size_t n = 0;
  core_err err;
  if (!full)
    return;
  if (core_list_dir(full, &names, &n, &err) != CORE_OK) {
    problem(v, "%s", err.msg);
    core_free(full);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    char *r = core_path_join(rel, names[i]);
    char *f = core_path_join(full, names[i]);
    struct stat sb;
    if (r && f && lstat(f, &sb) == 0) {
      if (S_ISDIR(sb.st_mode))
        walk(v, r);
      else if (!data_manifest_find(&v->m, r) && !in_unfinished(v, r))
        not_listed(v, f, names[i]);
    }
    core_free(r);
    core_free(f);
  }
  core_names_free(names, n);
  core_free(full);
}

/* A batch folder (or facts) whose CSV is gone and was never frozen: the
 * CSV of the batch being written was deleted. Nothing else lists it (the
 * MANIFEST never had it, and without a CSV it is not unfinished either),
 * so it is named here, or verify would pass over lost rows. */
static void check_orphans(vstate *v) {
  char *bdir = core_path_join(v->exp->dir, "batches");
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
    if (data_manifest_find(&v->m, rel)) /* missing: said by check_entries */
      continue;
    if (!(full = core_path_join(bdir, csv)))
      break;
    if (!core_exists(full))
      problem(v,
              "%s/%s%s: %s without its CSV (%s is missing and was never "
              "frozen): the rows of this batch were deleted while it was "
              "written; restore %s from a backup, or remove %s/%s to accept "
              "the loss (prereg run --resume then runs them again)",
              bdir, names[i], is_dir ? "/" : "",
              is_dir ? "batch folder" : "batch facts", full, csv, bdir,
              names[i]);
    core_free(full);
  }
  core_names_free(names, n);
  core_free(bdir);
}

/* }==== */

/* {==== The chain ==== */

static char *read_rel(const vstate *v, const char *rel, size_t *len) {
  char *full = core_path_join(v->exp->dir, rel), *text = NULL;
  core_err err;
  if (full && core_read_file(full, &text, len, &err) != CORE_OK)
    text = NULL;
  core_free(full);
  return text;
}

static void check_chain(vstate *v) {
  const data_experiment *exp = v->exp;
  char **names = NULL;
  size_t n = 0;
  char *vdir = core_path_join(exp->dir, "versions");
  core_err err;
  if (!vdir)
    return;
  /* Files of versions past the loaded chain mean a link is missing. */
  if (core_list_dir(vdir, &names, &n, &err) == CORE_OK) {
    for (size_t i = 0; i < n; i++) {
      unsigned long k;
      char ext[8];
      if (sscanf(names[i], "v%lu.%7s", &k, ext) == 2 && k >= exp->n_versions)
        problem(v,
                "%s/%s: outside the chain v0..v%zu (versions/v%zu.json "
                "is missing)",
                vdir, names[i], exp->n_versions - 1, exp->n_versions);
    }
  }
  core_names_free(names, n);
  for (size_t k = 0; k < exp->n_versions; k++) {
    const data_version *ver = &exp->versions[k];
    size_t len = 0, plen = 0;
    char *text = read_rel(v, ver->path, &len);
    char hex[CORE_SHA256_HEX];
    if (!text) {
      problem(v, "%s/%s: missing; the chain needs it", exp->dir, ver->path);
      continue;
    }
    core_sha256_hex(text, len, hex);
    if (strcmp(hex, ver->sha256) != 0)
      problem(v,
              "%s/%s: sha256 %.12s... differs from versions/v%zu.json "
              "(%.12s...)",
              exp->dir, ver->path, hex, k, ver->sha256);
    if (k > 0) {
      char rel[64], la[64], lb[64];
      char *prev = read_rel(v, exp->versions[k - 1].path, &plen);
      char *stored, *want;
      size_t slen = 0;
      snprintf(rel, sizeof rel, "versions/v%zu.diff", k);
      snprintf(la, sizeof la, "versions/v%zu.lua", k - 1);
      snprintf(lb, sizeof lb, "versions/v%zu.lua", k);
      stored = read_rel(v, rel, &slen);
      want = prev ? data_unified_diff(prev, plen, text, len, la, lb) : NULL;
      if (!stored)
        problem(v, "%s/%s: missing; the chain needs it", exp->dir, rel);
      else if (want && (strlen(want) != slen || memcmp(want, stored, slen)))
        problem(v, "%s/%s: does not match the difference between %s and %s",
                exp->dir, rel, la, lb);
      if (ver->filed_at && exp->versions[k - 1].filed_at &&
          strcmp(ver->filed_at, exp->versions[k - 1].filed_at) < 0)
        /* A clock stepped back (or data moved between machines) can do
         * this: worth a note, not a failure. */
        core_buf_printf(v->out,
                        "note: %s/versions/v%zu.json: filed at %s, before "
                        "v%zu (%s)\n",
                        exp->dir, k, ver->filed_at, k - 1,
                        exp->versions[k - 1].filed_at);
      core_free(prev);
      core_free(stored);
      core_free(want);
    }
    core_free(text);
  }
  core_free(vdir);
}

/* }==== */

/* {==== Batches against the chain ==== */

typedef struct bctx {
  vstate *v;
  const char *path, *id;
  size_t versions_at_start;
  int header;
  long reported;
} bctx;

static void row_problem(bctx *c, long line, const char *what, long a) {
  if (++c->reported <= MAX_ROW_PROBLEMS)
    problem(c->v, "%s:%ld: %s%ld", c->path, line, what, a);
}

static core_status on_vrow(void *vctx, char **f, size_t n, long line,
                           core_err *err) {
  bctx *c = vctx;
  const data_experiment *exp = c->v->exp;
  data_row r;
  core_err e;
  (void)err;
  if (!c->header) {
    c->header = 1;
    return CORE_OK;
  }
  /* The row's strings point into the scanner's record: nothing to copy
   * or free for a check. */
  if (data_row_parse_view(&r, f, n, c->path, line, &e) != CORE_OK) {
    if (++c->reported <= MAX_ROW_PROBLEMS)
      problem(c->v, "%s", e.msg);
    return CORE_OK;
  }
  if ((size_t)r.sheet_version >= c->versions_at_start)
    row_problem(c, line,
                "sheet_version did not exist when the batch "
                "started: v",
                r.sheet_version);
  else if (strcmp(r.sheet_sha256, exp->versions[r.sheet_version].sha256))
    row_problem(c, line, "sheet_sha256 does not match version v",
                r.sheet_version);
  if (strcmp(r.batch, c->id) != 0 && ++c->reported <= MAX_ROW_PROBLEMS)
    problem(c->v, "%s:%ld: batch '%s' in a row of %s", c->path, line, r.batch,
            c->id);
  return CORE_OK;
}

static void check_batch(vstate *v, const char *id) {
  const data_experiment *exp = v->exp;
  char *csv = core_asprintf("%s/batches/%s.csv", exp->dir, id);
  char *js = core_asprintf("%s/batches/%s.json", exp->dir, id);
  json_t *facts = NULL;
  bctx c = {v, csv, id, exp->n_versions, 0, 0};
  csvscan_result res;
  core_err err;
  if (!csv || !js)
    goto cleanup;
  if (core_exists(js) && (facts = json_load_file(js, 0, NULL)) != NULL) {
    json_t *vs = json_object_get(facts, "sheet_versions_at_start");
    const char *sa = json_string_value(json_object_get(facts, "started_at"));
    if (json_is_integer(vs) && json_integer_value(vs) >= 0 &&
        (size_t)json_integer_value(vs) < c.versions_at_start)
      c.versions_at_start = (size_t)json_integer_value(vs);
    if (sa && exp->n_versions > 0 && exp->versions[0].filed_at &&
        strcmp(sa, exp->versions[0].filed_at) < 0)
      problem(v, "%s: batch started at %s, before the registration (%s)", js,
              sa, exp->versions[0].filed_at);
  } else if (core_exists(js)) {
    problem(v, "%s: not valid JSON", js);
  }
  if (!core_exists(csv))
    goto cleanup; /* reported as missing by the manifest check */
  /* A chunk at a time: a batch of a million rows is 160 MB of text that
   * need never be in memory at once. */
  if (data_csv_scan_file(csv, on_vrow, &c, &res, &err) != CORE_OK)
    problem(v, "%s", err.msg);
  else if (res.torn)
    problem(v, "%s:%ld: incomplete last line", csv, res.torn_line);
  if (c.reported > MAX_ROW_PROBLEMS)
    problem(v, "%s: ... %ld more row problems", csv,
            c.reported - MAX_ROW_PROBLEMS);
cleanup:
  json_decref(facts);
  core_free(csv);
  core_free(js);
}

/* }==== */

core_status data_verify(const data_experiment *exp, core_buf *report,
                        core_err *err) {
  vstate v;
  core_status st;
  char *mpath;
  struct stat sb;
  memset(&v, 0, sizeof v);
  v.exp = exp;
  v.out = report;
  data_json_init();
  if (exp->n_versions == 0)
    return core_fail(err, CORE_ELOCK,
                     "%s: not registered: nothing to "
                     "verify",
                     exp->dir);
  {
    size_t before = report->len;
    if ((st = data_manifest_load(exp->dir, &v.m, report, err)) != CORE_OK)
      return st;
    /* Lines that manifest_load reported count as problems too. */
    for (size_t i = before; i < report->len; i++)
      if (report->data[i] == '\n')
        v.problems++;
  }
  if (!(mpath = core_path_join(exp->dir, "MANIFEST")))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  int no_manifest = lstat(mpath, &sb) != 0;
  if (no_manifest)
    problem(&v,
            "%s: missing; the experiment folder was damaged (every "
            "registration writes it): restore it from a backup",
            mpath);
  else if (sb.st_mode & 0222)
    core_buf_printf(report,
                    "note: %s: writable (mode %04o); prereg "
                    "replaces it atomically and never edits it: chmod a-w "
                    "it\n",
                    mpath, (unsigned)(sb.st_mode & 07777));
  core_free(mpath);
  /* Without a MANIFEST every batch would pass for unfinished, and
   * --resume (which refuses then) for the cure: each is named instead. */
  if (!no_manifest &&
      (st = data_unfinished_batches(exp, &v.unfinished, &v.n_unfinished,
                                    err)) != CORE_OK)
    goto cleanup;
  check_entries(&v);
  walk(&v, "versions");
  walk(&v, "batches");
  check_orphans(&v);
  check_chain(&v);
  for (size_t i = 0; i < v.m.n; i++) {
    long num;
    const char *p = v.m.e[i].path;
    if (strncmp(p, "batches/", 8) == 0 &&
        data_batch_name(p + 8, ".csv", &num)) {
      char id[64];
      snprintf(id, sizeof id, "%.*s", (int)(strlen(p + 8) - 4), p + 8);
      check_batch(&v, id);
    }
  }
  for (size_t i = 0; i < v.n_unfinished; i++)
    core_buf_printf(report,
                    "note: %s/batches/%s.csv: unfinished batch (not in the "
                    "MANIFEST); run prereg run SHEET --resume to recover "
                    "and freeze it\n",
                    exp->dir, v.unfinished[i]);
  if (v.writable)
    core_buf_printf(report,
                    "note: %zu frozen file%s writable, first %s; their "
                    "contents match the MANIFEST (a copy or a git checkout "
                    "loses modes); protect them again: chmod -R a-w "
                    "%s/versions %s/batches\n",
                    v.writable, v.writable == 1 ? " is" : "s are",
                    v.first_writable, exp->dir, exp->dir);
  if (v.problems == 0)
    core_buf_printf(report, "ok: %zu files, chain of %zu version%s\n", v.m.n,
                    exp->n_versions, exp->n_versions == 1 ? "" : "s");
  st = v.problems ? core_fail(err, CORE_EVERIFY,
                              "%s: verification failed: %ld problem%s",
                              exp->dir, v.problems, v.problems == 1 ? "" : "s")
                  : CORE_OK;
cleanup:
  core_names_free(v.unfinished, v.n_unfinished);
  data_manifest_free(&v.m);
  return st;
}
