/* check.c: the one verifier of an experiment's files (data_internal.h,
 * "The verifier"): fed a file at a time by the folder walker (verify.c) or
 * a bundle's stream (bundle.c), it checks every file against the MANIFEST,
 * the chain of versions (each diff recomputed) and every row against the
 * chain, and counts the runs as every command does.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"

#define MAX_ROW_PROBLEMS 5 /* per file: the first few say enough */

/* State */

enum { V_LUA, V_JSON, V_DIFF };

typedef struct vfile { /* a file of versions/ as fed */
  char *rel, *text;
  size_t len;
  long k;   /* its version, -1 when the name is none */
  int kind; /* V_LUA, V_JSON, V_DIFF */
} vfile;

typedef struct facts { /* what a batch's facts say */
  char id[16];
  long at_start; /* versions when it started; -1 unknown */
} facts;

/* The run being grouped from the rows of the file streaming. */
typedef struct run_acc {
  int open;
  data_row first; /* its identity (batch, workload, arm, run_id, source,
                     host, seq, version, round); the strings in buf */
  char *buf;      /* reused from run to run */
  size_t cap;
  data_run_in in;
} run_acc;

struct data_check {
  char *where;
  core_buf *out;
  long problems;
  data_manifest m;
  unsigned char *seen; /* per manifest entry */
  vfile *vf;
  size_t n_vf, cap_vf;
  int closed; /* versions taken: the chain below is built */
  data_version *chain;
  size_t n_chain;
  long long *filed_t; /* per chain version; 0 unknown */
  proto_sheet *plan;  /* the newest version, when it loads */
  char plan_problem[300];
  data_counter *counter;
  facts *fa;
  size_t n_fa, cap_fa;
  data_batch_state *states;
  size_t n_states, cap_states;
  /* The file streaming. */
  char *rel;
  core_sha256_ctx *sha;
  data_csvscan *scan;
  csvscan_result res;
  core_err scan_err; /* the scan's, filled while it streams */
  char *scan_name;
  char stem[16];
  int is_csv, unfinished, header_seen, bad_header;
  size_t cols; /* the columns of the file's header */
  long at_start, row_problems;
  run_acc run;
  data_runvalues *values; /* the streaming file's runs and metrics */
  size_t n_files, n_batches, n_rows;
  /* The next file's mode, when writable (a folder's, data_check_mode). */
  char *writable_rel;
  unsigned writable_mode;
  size_t n_writable;
  char first_writable[600];
  int oom;
};

static void vproblem(data_check *v, const char *rel, const char *fmt,
                     va_list ap) {
  core_buf_printf(v->out, "%s%s%s", v->where, rel, rel[0] ? ": " : "");
  core_buf_vprintf(v->out, fmt, ap);
  core_buf_puts(v->out, "\n");
  v->problems++;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
problem(data_check *v, const char *rel, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vproblem(v, rel, fmt, ap);
  va_end(ap);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
note(data_check *v, const char *rel, const char *fmt, ...) {
  va_list ap;
  core_buf_printf(v->out, "note: %s%s: ", v->where, rel);
  va_start(ap, fmt);
  core_buf_vprintf(v->out, fmt, ap);
  va_end(ap);
  core_buf_puts(v->out, "\n");
}

data_check *data_check_new(const char *where, core_buf *report) {
  data_check *v = core_calloc(1, sizeof *v);
  if (!v)
    return NULL;
  v->out = report;
  if (!(v->where = core_strdup(where))) {
    core_free(v);
    return NULL;
  }
  data_json_init();
  return v;
}

static const data_manifest_line *listed(const data_check *v, const char *rel,
                                        size_t *i) {
  for (size_t k = 0; k < v->m.n; k++)
    if (strcmp(v->m.e[k].path, rel) == 0) {
      if (i)
        *i = k;
      return &v->m.e[k];
    }
  return NULL;
}

long data_check_listed(const data_check *v, const char *rel) {
  const data_manifest_line *e = listed(v, rel, NULL);
  return e ? e->line : 0;
}

static void mark_seen(data_check *v, const char *rel) {
  size_t i;
  if (listed(v, rel, &i) && v->seen)
    v->seen[i] = 1;
}

void data_check_problem(data_check *v, const char *rel, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vproblem(v, rel, fmt, ap);
  va_end(ap);
  mark_seen(v, rel);
}

/* The MANIFEST */

void data_check_manifest(data_check *v, const char *text, size_t len) {
  core_buf probs;
  core_err err;
  size_t keep = 0;
  if (!text) {
    problem(v, "MANIFEST",
            "missing; every registration writes it, so the data were "
            "damaged: restore it from a backup");
    return;
  }
  core_buf_init(&probs);
  if (data_manifest_parse("MANIFEST", text, len, &v->m, &probs, &err) !=
      CORE_OK) {
    v->oom = 1;
    core_buf_free(&probs);
    return;
  }
  /* Each malformed line, with the verifier's prefix. */
  for (const char *p = probs.data; p && *p;) {
    const char *nl = strchr(p, '\n');
    problem(v, "", "%.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
    p = nl ? nl + 1 : p + strlen(p);
  }
  core_buf_free(&probs);
  for (size_t i = 0; i < v->m.n; i++) {
    data_manifest_line *e = &v->m.e[i];
    int dup = 0;
    for (size_t j = 0; j < keep && !dup; j++)
      dup = strcmp(v->m.e[j].path, e->path) == 0;
    if (!data_safe_rel(e->path))
      problem(v, "", "MANIFEST:%ld: path '%s' leaves the experiment folder",
              e->line, e->path);
    else if (dup)
      problem(v, "", "MANIFEST:%ld: %s listed twice", e->line, e->path);
    if (!data_safe_rel(e->path) || dup) {
      core_free(e->path);
      continue;
    }
    v->m.e[keep++] = *e;
  }
  v->m.n = keep;
  if (!(v->seen = core_calloc(keep ? keep : 1, 1)))
    v->oom = 1;
}

/* Compares a file's digest with its MANIFEST entry; a file the MANIFEST
 * does not list is a problem unless it is an unfinished batch's. */
static void against_manifest(data_check *v, const char *rel, const char *hex,
                             int unfinished) {
  size_t i;
  const data_manifest_line *e = listed(v, rel, &i);
  if (!e) {
    if (!unfinished)
      problem(v, rel, "not in the MANIFEST (added after freezing?)");
    return;
  }
  int writable = v->writable_rel && strcmp(v->writable_rel, rel) == 0;
  v->seen[i] = 1;
  if (strcmp(e->sha256, hex) != 0)
    problem(v, rel,
            "content differs from the MANIFEST (sha256 %.12s..., recorded "
            "%.12s...)%s",
            hex, e->sha256, writable ? "; and it is writable" : "");
  else if (writable && v->n_writable++ == 0)
    snprintf(v->first_writable, sizeof v->first_writable,
             "%s%.400s (mode %04o)", v->where, rel, v->writable_mode & 07777);
}

void data_check_mode(data_check *v, const char *rel, unsigned mode) {
  core_free(v->writable_rel);
  v->writable_rel = NULL;
  /* The digests, not the modes, prove the data unchanged: a git checkout
   * or a plain copy loses modes, so a writable file whose content matches
   * is a note with the command that protects it again. */
  if (mode & 0222) {
    if (!(v->writable_rel = core_strdup(rel)))
      v->oom = 1;
    v->writable_mode = mode;
  }
}

/* Versions and facts */

/* "versions/v12.lua" -> 12, V_LUA; -1 when rel names no version file. */
static long version_of(const char *rel, int *kind) {
  static const char *const ext[] = {".lua", ".json", ".diff"};
  const char *p = rel + strlen("versions/v");
  char *end;
  long n;
  if (strncmp(rel, "versions/v", strlen("versions/v")) != 0 || *p < '0' ||
      *p > '9')
    return -1;
  n = strtol(p, &end, 10);
  for (int k = 0; k < 3; k++)
    if (strcmp(end, ext[k]) == 0 && n <= 1000000) {
      *kind = k;
      return n;
    }
  return -1;
}

void data_check_version(data_check *v, const char *rel, const char *text,
                        size_t len) {
  char hex[CORE_SHA256_HEX];
  vfile *nv = core_grow(v->vf, &v->cap_vf, v->n_vf, sizeof *nv, 16);
  if (!nv) {
    v->oom = 1;
    return;
  }
  v->vf = nv;
  nv = &v->vf[v->n_vf];
  memset(nv, 0, sizeof *nv);
  nv->rel = core_strdup(rel);
  nv->text = core_malloc(len + 1);
  if (!nv->rel || !nv->text) {
    core_free(nv->rel);
    core_free(nv->text);
    v->oom = 1;
    return;
  }
  memcpy(nv->text, text, len);
  nv->text[len] = '\0';
  nv->len = len;
  nv->k = version_of(rel, &nv->kind);
  v->n_vf++;
  v->n_files++;
  core_sha256_hex(text, len, hex);
  against_manifest(v, rel, hex, 0);
}

static const vfile *vfile_of(const data_check *v, long k, int kind) {
  for (size_t i = 0; i < v->n_vf; i++)
    if (v->vf[i].k == k && v->vf[i].kind == kind)
      return &v->vf[i];
  return NULL;
}

/* The chain as the versions' facts record it (v0, v1, ... up to the
 * first one missing or unreadable), and the plan of its newest version;
 * taken once, before the first row. */
static void close_versions(data_check *v) {
  core_err err;
  int upto = 0;
  if (v->closed)
    return;
  v->closed = 1;
  for (long k = 0;; k++) {
    const vfile *js = vfile_of(v, k, V_JSON);
    data_version *nc;
    if (!js)
      break;
    if (!(nc = core_realloc(v->chain, (size_t)(k + 1) * sizeof *nc)) ||
        !(v->filed_t = core_realloc(v->filed_t,
                                    (size_t)(k + 1) * sizeof *v->filed_t))) {
      if (nc)
        v->chain = nc;
      v->oom = 1;
      return;
    }
    v->chain = nc;
    if (data_version_parse(js->rel, js->text, js->len, (size_t)k, &v->chain[k],
                           &err) != CORE_OK) {
      if (err.status == CORE_ENOMEM)
        v->oom = 1;
      break; /* said again by the chain checks, with the file named */
    }
    v->filed_t[k] = 0;
    if (v->chain[k].filed_at)
      (void)core_parse_utc(v->chain[k].filed_at, &v->filed_t[k], NULL);
    v->n_chain = (size_t)k + 1;
  }
  if (v->n_chain > 0) {
    const data_version *last = &v->chain[v->n_chain - 1];
    const vfile *lua = vfile_of(v, last->number, V_LUA);
    upto = last->number;
    if (lua) {
      v->plan = proto_sheet_load_text(lua->rel, lua->text, lua->len, &err);
      if (!v->plan)
        snprintf(v->plan_problem, sizeof v->plan_problem, "%.250s", err.msg);
    }
  }
  v->counter = data_counter_new(v->plan, v->chain, v->n_chain, upto);
  if (!v->counter)
    v->oom = 1;
}

static facts *facts_of(data_check *v, const char *id) {
  for (size_t i = 0; i < v->n_fa; i++)
    if (strcmp(v->fa[i].id, id) == 0)
      return &v->fa[i];
  return NULL;
}

/* The batch id "b0001" of batches/b0001.EXT, or 0 when rel is none. */
static int batch_id(const char *rel, const char *ext, char id[16]) {
  long num;
  const char *name = rel + strlen("batches/");
  if (strncmp(rel, "batches/", strlen("batches/")) != 0 ||
      !data_batch_name(name, ext, &num) || strlen(name) >= 16 + strlen(ext))
    return 0;
  snprintf(id, 16, "%.*s", (int)(strlen(name) - strlen(ext)), name);
  return 1;
}

static void add_state(data_check *v, const char *id, int interrupted,
                      int unfinished) {
  data_batch_state *ns =
      core_grow(v->states, &v->cap_states, v->n_states, sizeof *ns, 8);
  if (!ns) {
    v->oom = 1;
    return;
  }
  v->states = ns;
  memset(&ns[v->n_states], 0, sizeof *ns);
  snprintf(ns[v->n_states].id, sizeof ns->id, "%s", id);
  ns[v->n_states].interrupted = interrupted;
  ns[v->n_states].unfinished = unfinished;
  v->n_states++;
}

void data_check_facts(data_check *v, const char *rel, const char *text,
                      size_t len) {
  char hex[CORE_SHA256_HEX], id[16];
  json_t *root, *vs;
  const char *sa;
  facts *f;
  close_versions(v);
  v->n_files++;
  core_sha256_hex(text, len, hex);
  against_manifest(v, rel, hex, 0);
  if (!batch_id(rel, ".json", id))
    return;
  if (!(root = json_loadb(text, len, 0, NULL)) || !json_is_object(root)) {
    problem(v, rel, "not valid JSON");
    json_decref(root);
    return;
  }
  if (!(f = core_grow(v->fa, &v->cap_fa, v->n_fa, sizeof *f, 8))) {
    v->oom = 1;
    json_decref(root);
    return;
  }
  v->fa = f;
  f = &v->fa[v->n_fa++];
  snprintf(f->id, sizeof f->id, "%s", id);
  vs = json_object_get(root, "sheet_versions_at_start");
  f->at_start = json_is_integer(vs) && json_integer_value(vs) >= 0
                    ? (long)json_integer_value(vs)
                    : -1;
  sa = json_string_value(json_object_get(root, "started_at"));
  if (sa && v->n_chain > 0 && v->chain[0].filed_at) {
    long long t;
    if (core_parse_utc(sa, &t, NULL) == CORE_OK && v->filed_t[0] &&
        t < v->filed_t[0])
      problem(v, rel, "batch started at %s, before the registration (%s)", sa,
              v->chain[0].filed_at);
  }
  add_state(v, id, json_is_true(json_object_get(root, "interrupted")), 0);
  json_decref(root);
  if (!v->oom &&
      !data_batch_state_read(&v->states[v->n_states - 1], text, len))
    v->oom = 1;
}

/* Rows */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
row_problem(data_check *v, long line, const char *fmt, ...) {
  va_list ap;
  char rl[600];
  if (++v->row_problems > MAX_ROW_PROBLEMS)
    return;
  snprintf(rl, sizeof rl, "%s:%ld", v->rel, line);
  va_start(ap, fmt);
  vproblem(v, rl, fmt, ap);
  va_end(ap);
}

/* The chain rules for one row. */
static void check_row(data_check *v, const data_row *r, long line) {
  long n = (long)v->n_chain, at_start = v->at_start >= 0 ? v->at_start : n;
  long k = r->sheet_version;
  if (k >= n) {
    row_problem(v, line, "sheet_version %ld is not a version in the chain", k);
  } else if (k >= at_start) {
    row_problem(v, line,
                "sheet_version %ld did not exist when the batch started (%ld "
                "version%s then)",
                k, at_start, at_start == 1 ? "" : "s");
  } else {
    if (strcmp(r->sheet_sha256, v->chain[k].sha256) != 0)
      row_problem(v, line,
                  "sheet_sha256 is not the SHA-256 of versions/v%ld.lua", k);
    /* A run is collected under a version that existed: never before its
     * filing, so never before the registration. Imported rows carry the
     * time they were measured elsewhere, which may be earlier. */
    if (strcmp(r->source, "import") != 0 && r->started_at[0]) {
      long long t;
      if (core_parse_utc(r->started_at, &t, NULL) != CORE_OK)
        row_problem(v, line, "started_at \"%s\" is not a UTC time",
                    r->started_at);
      else if (v->filed_t[k] && t < v->filed_t[k])
        row_problem(v, line,
                    "started at %s, before version %ld was filed (%s)%s",
                    r->started_at, k, v->chain[k].filed_at,
                    t < v->filed_t[0] ? ": older than the registration" : "");
    }
  }
  if (strcmp(r->batch, v->stem) != 0)
    row_problem(v, line, "batch '%s' in a row of %s", r->batch, v->stem);
}

/* The run grouped so far goes to the counting rule. */
static void flush_run(data_check *v) {
  if (!v->run.open)
    return;
  if (v->counter)
    (void)data_count_run(v->counter, &v->run.in);
  v->run.open = 0;
}

/* Keeps r's identity as the open run's: the row's strings point into the
 * scanner's record, which the next record overwrites. */
static int keep_first(data_check *v, const data_row *r) {
  run_acc *ra = &v->run;
  const char *src[6] = {r->batch,  r->workload, r->arm,
                        r->run_id, r->source,   r->host};
  char **dst[6] = {&ra->first.batch,  &ra->first.workload, &ra->first.arm,
                   &ra->first.run_id, &ra->first.source,   &ra->first.host};
  size_t len[6], total = 0;
  char *p;
  for (int i = 0; i < 6; i++)
    total += len[i] = strlen(src[i] ? src[i] : "") + 1;
  if (total > ra->cap) {
    char *nb = core_realloc(ra->buf, total);
    if (!nb)
      return 0;
    ra->buf = nb;
    ra->cap = total;
  }
  memset(&ra->first, 0, sizeof ra->first);
  p = ra->buf;
  for (int i = 0; i < 6; i++) {
    memcpy(p, src[i] ? src[i] : "", len[i]);
    *dst[i] = p;
    p += len[i];
  }
  ra->first.seq = r->seq;
  ra->first.sheet_version = r->sheet_version;
  ra->first.round = r->round;
  return 1;
}

/* Rows of one run come together (data_same_run): a row that is not the
 * open run's ends it. */
static void count_row(data_check *v, const data_row *r) {
  if (v->run.open && data_same_run(&v->run.first, r)) {
    data_run_in_add(&v->run.in, r);
    return;
  }
  flush_run(v);
  if (!keep_first(v, r)) {
    v->oom = 1;
    return;
  }
  v->run.open = 1;
  v->run.in = data_run_in_of(r);
  /* The strings from the kept copy: r's go with its record. */
  v->run.in.batch = v->run.first.batch;
  v->run.in.workload = v->run.first.workload;
  v->run.in.arm = v->run.first.arm;
  v->run.in.source = v->run.first.source;
  v->run.in.host = v->run.first.host;
}

static core_status on_row(void *ctx, char **f, size_t n, long line,
                          core_err *err) {
  data_check *v = ctx;
  data_row r;
  core_err e;
  (void)err;
  if (!v->header_seen) {
    v->header_seen = 1;
    if (!(v->cols = data_row_header_ok(f, n))) {
      v->bad_header = 1;
      if (!v->unfinished)
        row_problem(v, line, "not a batch header (expected %s)",
                    DATA_ROW_HEADER);
    }
    return CORE_OK;
  }
  if (v->bad_header)
    return CORE_OK;
  if (n != v->cols) {
    if (!v->unfinished)
      row_problem(v, line, "%zu fields; this batch's header has %zu", n,
                  v->cols);
    return CORE_OK;
  }
  /* The row's strings point into the scanner's record: nothing to copy
   * or free for a check. */
  if (data_row_parse_view(&r, f, n, v->scan_name, line, &e) != CORE_OK) {
    if (e.status == CORE_ENOMEM)
      v->oom = 1;
    else if (!v->unfinished && ++v->row_problems <= MAX_ROW_PROBLEMS) {
      core_buf_printf(v->out, "%s\n", e.msg);
      v->problems++;
    }
    return CORE_OK;
  }
  v->n_rows++;
  if (!v->unfinished)
    check_row(v, &r, line);
  if (!v->values && !(v->values = data_runvalues_new(1))) {
    v->oom = 1;
    return CORE_OK;
  }
  {
    long first = data_runvalues_add(v->values, &r, line);
    if (first < 0)
      v->oom = 1;
    else if (first > 0)
      row_problem(v, line,
                  "value: a second %s of run %s (workload %s, arm %s), the "
                  "first on line %ld; a run has one value per metric, so the "
                  "file was edited",
                  r.metric, r.run_id, r.workload, r.arm, first);
  }
  count_row(v, &r);
  return CORE_OK;
}

/* Streamed files */

void data_check_file_begin(data_check *v, const char *rel, int unfinished) {
  close_versions(v);
  v->rel = core_strdup(rel);
  v->sha = core_sha256_begin();
  v->unfinished = unfinished;
  v->is_csv = batch_id(rel, ".csv", v->stem);
  v->header_seen = v->bad_header = 0;
  v->row_problems = 0;
  if (v->values)
    data_runvalues_reset(v->values);
  if (!v->rel || !v->sha) {
    v->oom = 1;
    return;
  }
  if (!v->is_csv)
    return;
  {
    facts *f = facts_of(v, v->stem);
    v->at_start = f ? f->at_start : -1;
  }
  v->n_batches += !unfinished;
  if (unfinished)
    add_state(v, v->stem, 0, 1);
  v->scan_name = core_asprintf("%s%s", v->where, rel);
  if (!v->scan_name || !(v->scan = data_csvscan_begin(v->scan_name, on_row, v,
                                                      &v->res, &v->scan_err)))
    v->oom = 1;
}

void data_check_file_data(data_check *v, const void *p, size_t n) {
  if (v->sha)
    core_sha256_update(v->sha, p, n);
  if (v->scan)
    (void)data_csvscan_feed(v->scan, p, n);
}

/* A copy of a version's input (inputs/vK/PATH) against the digest that
 * version records: re-signing the MANIFEST does not make an edited
 * script pass for the registered one. A matched entry is marked (bytes
 * -1) for check_inputs_seen. */
static void check_input_copy(data_check *v, const char *rel, const char *hex) {
  char *end;
  long k = strtol(rel + 8, &end, 10);
  if (end == rel + 8 || *end != '/')
    return;
  for (size_t i = 0; i < v->n_chain; i++) {
    data_version *ver = &v->chain[i];
    if (ver->number != k)
      continue;
    for (size_t j = 0; j < ver->n_inputs; j++)
      if (strcmp(ver->inputs[j].path, end + 1) == 0) {
        if (strcmp(ver->inputs[j].sha256, hex) != 0)
          problem(v, rel,
                  "sha256 %.12s, but versions/v%ld.json records %.12s for "
                  "%s: the input was changed after it was registered",
                  hex, k, ver->inputs[j].sha256, end + 1);
        ver->inputs[j].bytes = -1;
        return;
      }
  }
  problem(v, rel, "not among the inputs versions/v%ld.json records", k);
}

/* Every input a version records has its copy. */
static void check_inputs_seen(data_check *v) {
  for (size_t i = 0; i < v->n_chain; i++)
    for (size_t j = 0; j < v->chain[i].n_inputs; j++)
      if (v->chain[i].inputs[j].bytes != -1 &&
          !v->chain[i].inputs[j].by_digest)
        problem(v, "", "inputs/v%d/%s: missing (versions/v%d.json records it)",
                v->chain[i].number, v->chain[i].inputs[j].path,
                v->chain[i].number);
}

void data_check_file_end(data_check *v) {
  char hex[CORE_SHA256_HEX];
  if (v->scan) {
    core_status st = data_csvscan_end(v->scan);
    v->scan = NULL;
    flush_run(v);
    if (st == CORE_ENOMEM)
      v->oom = 1;
    else if (st != CORE_OK && !v->unfinished) {
      /* The scan's message names the file already. */
      core_buf_printf(v->out, "%s\n", v->scan_err.msg);
      v->problems++;
    } else if (st == CORE_OK && v->res.torn && !v->unfinished)
      row_problem(v, v->res.torn_line, "incomplete last line");
    if (v->row_problems > MAX_ROW_PROBLEMS)
      problem(v, v->rel, "... %ld more row problems",
              v->row_problems - MAX_ROW_PROBLEMS);
  }
  if (v->sha) {
    core_sha256_end(v->sha, hex);
    v->sha = NULL;
    if (v->rel)
      against_manifest(v, v->rel, hex, v->unfinished);
    if (v->rel && strncmp(v->rel, "inputs/v", 8) == 0)
      check_input_copy(v, v->rel, hex);
  }
  v->n_files += !v->unfinished;
  core_free(v->rel);
  core_free(v->scan_name);
  v->rel = v->scan_name = NULL;
  v->is_csv = 0;
}

/* At the end */

/* The files of one version: present, consistent with its facts, and the
 * diff from the previous one what it says. */
static void check_version(data_check *v, long k) {
  const vfile *lua = vfile_of(v, k, V_LUA), *js = vfile_of(v, k, V_JSON);
  const vfile *dif = vfile_of(v, k, V_DIFF), *prev = vfile_of(v, k - 1, V_LUA);
  char rel[64], hex[CORE_SHA256_HEX];
  const data_version *ver = (size_t)k < v->n_chain ? &v->chain[k] : NULL;
  snprintf(rel, sizeof rel, "versions/v%ld.lua", k);
  if (!lua)
    problem(v, rel, "missing; the chain needs it");
  snprintf(rel, sizeof rel, "versions/v%ld.json", k);
  if (!js)
    problem(v, rel, "missing; the chain needs it");
  else if (!ver)
    problem(v, rel,
            "not the facts of version %ld (valid JSON with "
            "\"version\": %ld and a \"sha256\")",
            k, k);
  else if (!v->filed_t[k])
    problem(v, rel, "has no UTC filed_at time");
  if (lua && ver) {
    core_sha256_hex(lua->text, lua->len, hex);
    if (strcmp(hex, ver->sha256) != 0)
      problem(v, lua->rel,
              "sha256 %.12s... differs from versions/v%ld.json "
              "(%.12s...)",
              hex, k, ver->sha256);
  }
  if (k > 0 && ver && v->filed_t[k] && v->filed_t[k - 1] &&
      v->filed_t[k] < v->filed_t[k - 1])
    /* A clock stepped back (or data moved between machines) can do this:
     * worth a note, not a failure; the rows are checked against each
     * version's filing time regardless. */
    note(v, js->rel, "filed at %s, before v%ld (%s)", ver->filed_at, k - 1,
         v->chain[k - 1].filed_at);
  if (k == 0)
    return;
  snprintf(rel, sizeof rel, "versions/v%ld.diff", k);
  if (!dif) {
    problem(v, rel, "missing; the chain needs it");
  } else if (lua && prev) {
    char la[64], lb[64], *want;
    snprintf(la, sizeof la, "versions/v%ld.lua", k - 1);
    snprintf(lb, sizeof lb, "versions/v%ld.lua", k);
    want =
        core_unified_diff(prev->text, prev->len, lua->text, lua->len, la, lb);
    if (!want)
      v->oom = 1;
    else if (strlen(want) != dif->len || memcmp(want, dif->text, dif->len))
      problem(v, rel, "does not match the difference between %s and %s", la,
              lb);
    core_free(want);
  }
}

static void check_chain(data_check *v) {
  long last = -1;
  for (size_t i = 0; i < v->n_vf; i++)
    if (v->vf[i].k > last)
      last = v->vf[i].k;
  if (last < 0) {
    problem(v, "versions/v0.lua", "missing; the chain needs it");
    return;
  }
  /* The chain ends at the first version without its facts; files past it
   * mean a link is missing. */
  for (long k = 0; k < (long)v->n_chain || k == 0; k++)
    check_version(v, k);
  for (size_t i = 0; i < v->n_vf; i++)
    if (v->vf[i].k >= (long)v->n_chain && v->n_chain)
      problem(v, v->vf[i].rel,
              "outside the chain v0..v%ld (versions/v%zu.json is missing)",
              (long)v->n_chain - 1, v->n_chain);
    else if (v->vf[i].k > 0 && !v->n_chain)
      problem(v, v->vf[i].rel,
              "outside the chain, which has no registered version "
              "(versions/v0.json is missing or unreadable)");
    else if (v->vf[i].k < 0)
      problem(v, v->vf[i].rel,
              "not a file of the chain (vN.lua, vN.json, "
              "vN.diff)");
}

/* The status line every verifier prints: the counting rule's tallies and
 * status (data/count.c) under the newest version's plan. */
static core_status status_line(data_check *v, data_check_result *res,
                               core_err *err) {
  data_tally *t = NULL;
  size_t n = 0;
  data_status st;
  long counted = 0, invalid = 0, superseded = 0, beyond = 0;
  char line[256];
  core_status s;
  if (!v->counter)
    return core_fail(err, CORE_ENOMEM, "out of memory counting runs");
  if ((s = data_counter_end(v->counter, v->states, v->n_states, &t, &n, &st,
                            err)) != CORE_OK)
    return s;
  for (size_t i = 0; i < n; i++) {
    counted += t[i].counted;
    invalid += t[i].invalid;
    superseded += t[i].superseded;
    beyond += t[i].beyond;
  }
  data_tally_free(t, n);
  /* Tallies of files that failed their checks are no one's result: the
   * line says so where a reader looks first. */
  st.unverified = v->problems > 0;
  data_status_line(&st, line, sizeof line);
  if (v->plan)
    snprintf(res->status, sizeof res->status,
             "status: %s (runs: %ld counted, %ld invalid, %ld superseded, "
             "%ld beyond the plan)",
             line, counted, invalid, superseded, beyond);
  else
    snprintf(res->status, sizeof res->status,
             "status: unknown, the newest version does not load as a sheet "
             "(%s; runs: %ld valid, %ld invalid, %ld superseded)",
             v->plan_problem[0] ? v->plan_problem : "none in the chain",
             counted, invalid, superseded);
  return CORE_OK;
}

static void free_check(data_check *v) {
  for (size_t i = 0; i < v->n_vf; i++) {
    core_free(v->vf[i].rel);
    core_free(v->vf[i].text);
  }
  core_free(v->vf);
  for (size_t i = 0; i < v->n_chain; i++)
    data_version_clear(&v->chain[i]);
  core_free(v->chain);
  core_free(v->filed_t);
  proto_sheet_free(v->plan);
  data_counter_free(v->counter);
  core_free(v->fa);
  data_batch_states_free(v->states, v->n_states);
  data_manifest_free(&v->m);
  core_free(v->seen);
  if (v->sha) {
    char hex[CORE_SHA256_HEX];
    core_sha256_end(v->sha, hex);
  }
  data_csvscan_end(v->scan);
  core_free(v->run.buf);
  data_runvalues_free(v->values);
  core_free(v->rel);
  core_free(v->scan_name);
  core_free(v->writable_rel);
  core_free(v->where);
  core_free(v);
}

core_status data_check_end(data_check *v, data_check_result *res,
                           core_err *err) {
  core_status st = CORE_OK;
  memset(res, 0, sizeof *res);
  close_versions(v);
  for (size_t i = 0; i < v->m.n && v->seen; i++)
    if (!v->seen[i])
      problem(v, v->m.e[i].path, "missing (listed in MANIFEST line %ld)",
              v->m.e[i].line);
  check_chain(v);
  check_inputs_seen(v);
  if (v->n_writable)
    core_buf_printf(v->out,
                    "note: %zu frozen file%s writable, first %s; their "
                    "contents match the MANIFEST (a copy or a git checkout "
                    "loses modes); protect them again: chmod -R a-w "
                    "%sversions %sbatches\n",
                    v->n_writable, v->n_writable == 1 ? " is" : "s are",
                    v->first_writable, v->where, v->where);
  if (!v->oom)
    st = status_line(v, res, err);
  if (v->oom)
    st = core_fail(err, CORE_ENOMEM, "out of memory verifying %s", v->where);
  res->problems = v->problems;
  res->files = v->n_files;
  res->versions = v->n_chain;
  res->batches = v->n_batches;
  res->rows = v->n_rows;
  free_check(v);
  return st;
}
