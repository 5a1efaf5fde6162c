/* import.c: `prereg import`: measurements taken elsewhere (the CSV of the
 * contract, section 3, or hyperfine --export-json) become one frozen batch
 * of kind "import". The whole file is checked before anything is written.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "data/data_internal.h"

enum {
  C_WORKLOAD,
  C_ARM,
  C_METRIC,
  C_VALUE,
  C_RUN,
  C_STARTED,
  C_EXIT,
  C_VALID,
  C_NOTE,
  C_COUNT
};
static const char *const col_names[C_COUNT] = {
    "workload",   "arm",       "metric", "value", "run",
    "started_at", "exit_code", "valid",  "note"};
#define REQUIRED 4 /* the first four columns */

typedef struct data_import {
  data_experiment *exp;
  const proto_sheet *sheet;
  const char *file;
  data_rowset rows;
  json_t *notes;    /* notes on valid rows: kept in the batch facts */
  int col[C_COUNT]; /* field index of each column, -1 when absent */
  size_t n_cols;
  int header_seen;
  long seq;
} imp;

/* Shared checks */

static core_status undeclared(const imp *m, core_err *err, const char *where,
                              const char *kind, const char *name, int arms) {
  core_buf b;
  size_t n = arms ? m->sheet->n_arms : m->sheet->n_workloads;
  core_status st;
  core_buf_init(&b);
  for (size_t i = 0; i < n; i++)
    core_buf_printf(&b, "%s%s", i ? ", " : "",
                    arms ? m->sheet->arms[i].name
                         : m->sheet->workloads[i].name);
  st = core_fail(err, CORE_EINPUT,
                 "%s: %s '%s' is not declared in %s (declared: %s)", where,
                 kind, name, m->sheet->path ? m->sheet->path : "the sheet",
                 b.data ? b.data : "none");
  core_buf_free(&b);
  return st;
}

static core_status undeclared_metric(const imp *m, core_err *err,
                                     const char *where,
                                     const proto_workload *w,
                                     const char *metric) {
  core_buf b;
  core_status st;
  core_buf_init(&b);
  for (size_t i = 0; i < w->n_metrics; i++)
    core_buf_printf(&b, "%s%s", i ? ", " : "", w->metrics[i]);
  st = core_fail(err, CORE_EINPUT,
                 "%s: metric '%s' is not declared by workload '%s' in %s "
                 "(its metrics: %s)",
                 where, metric, w->name,
                 m->sheet->path ? m->sheet->path : "the sheet",
                 b.data ? b.data : "none");
  core_buf_free(&b);
  return st;
}

/* Rows for a workload prereg runs itself would be pooled with its own
 * runs under its plan, measured some other way: refused unless the sheet
 * says so with the workload's `source` (recorded by an amendment, like any
 * change of plan). The message says what to write. */
static core_status runs_itself(const imp *m, core_err *err, const char *where,
                               const proto_workload *w) {
  const char *sheet = m->sheet->path ? m->sheet->path : "the sheet";
  return core_fail(
      err, CORE_EINPUT,
      "%s: workload '%s' is run by prereg itself (it has %s), so imported "
      "rows would be pooled with its own runs; to import into it, write "
      "source = \"both\" (imported runs pooled with prereg's, up to runs = "
      "%ld per arm) or source = \"import\" (only imported data; prereg run "
      "skips it) on that workload in %s, append an amendment saying why and "
      "run prereg amend %s; nothing was imported",
      where, w->name,
      w->by_arms   ? "arms that are whole commands"
      : w->n_steps ? "steps"
                   : "a cmd",
      w->runs, sheet, sheet);
}

/* One exit code at s: blanks around it allowed (as around a value), an
 * optional sign, digits, within the range of an int. OUT: *end just past
 * it and its blanks. */
static int one_code(const char *s, const char **end, long *v) {
  char *e;
  while (*s == ' ' || *s == '\t')
    s++;
  if (!((*s >= '0' && *s <= '9') ||
        ((*s == '-' || *s == '+') && s[1] >= '0' && s[1] <= '9')))
    return 0;
  errno = 0;
  *v = strtol(s, &e, 10);
  if (errno || *v < INT_MIN || *v > INT_MAX)
    return 0;
  while (*e == ' ' || *e == '\t')
    e++;
  *end = e;
  return 1;
}

/* "0", or "0;1;0" for the steps of one run. */
static int exit_code_ok(const char *s) {
  while (*s) {
    const char *end;
    long v;
    if (!one_code(s, &end, &v))
      return 0;
    if (*end == ';' && end[1])
      end++;
    else if (*end)
      return 0;
    s = end;
  }
  return 1;
}

/* Whether exit code text meets the workload's expectation, where the
 * code alone can tell ("reference" needs the other arm's run: left to
 * the valid column). */
static int code_meets(const proto_workload *w, const char *code, char *why,
                      size_t whylen) {
  const char *p = code;
  if (!code[0] || w->expect != PROTO_EXPECT_CODE)
    return 1;
  while (*p) {
    const char *end = p + strlen(p);
    long v = 0;
    one_code(p, &end, &v); /* checked by exit_code_ok before */
    if (v != w->expect_code) {
      snprintf(why, whylen, "exit code %ld, expected %d", v, w->expect_code);
      return 0;
    }
    p = *end == ';' ? end + 1 : end;
  }
  return 1;
}

/* Fills the provenance every imported row shares and the given fields. */
static core_status make_row(imp *m, const char *workload, const char *arm,
                            const char *metric, const char *run_id, long round,
                            const char *started_at, const char *exit_code,
                            int valid, const char *reason, double value,
                            int has_value, core_err *err) {
  const data_version *v = &m->exp->versions[m->exp->n_versions - 1];
  data_strpool *pool = m->rows.pool;
  data_row r;
  memset(&r, 0, sizeof r);
  r.sheet_version = v->number;
  r.round = round;
  r.seq = ++m->seq;
  r.valid = valid;
  r.value = has_value ? value : NAN;
  r.has_value = has_value;
  /* Interned: a million imported rows repeat a few strings in most
   * columns (the pool frees them all with the rows). */
#define INTERN(s) ((char *)data_strpool_intern(pool, (s), strlen(s)))
  r.sheet_sha256 = INTERN(v->sha256);
  r.batch = INTERN("");
  r.source = INTERN("import");
  r.workload = INTERN(workload);
  r.arm = INTERN(arm);
  r.run_id = INTERN(run_id);
  r.started_at = INTERN(started_at);
  r.host = INTERN("");
  r.image_digest = INTERN("");
  r.cache_policy = INTERN("");
  r.cache_state = INTERN("");
  r.exit_code = INTERN(exit_code);
  r.reason = INTERN(reason);
  r.metric = INTERN(metric);
#undef INTERN
  if (!r.sheet_sha256 || !r.batch || !r.source || !r.workload || !r.arm ||
      !r.run_id || !r.started_at || !r.host || !r.image_digest ||
      !r.cache_policy || !r.cache_state || !r.exit_code || !r.reason ||
      !r.metric)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", m->file);
  return data_rowset_push(&m->rows, &r, err);
}

/* CSV */

static int parse_valid(const char *s, int *out) {
  static const char *const yes[] = {"1", "true", "yes", "y"};
  static const char *const no[] = {"0", "false", "no", "n"};
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(s, yes[i]) == 0)
      return *out = 1, 1;
    if (strcasecmp(s, no[i]) == 0)
      return *out = 0, 1;
  }
  return 0;
}

static core_status csv_header(imp *m, char **f, size_t n, core_err *err) {
  for (int c = 0; c < C_COUNT; c++)
    m->col[c] = -1;
  for (size_t i = 0; i < n; i++) {
    int c;
    for (c = 0; c < C_COUNT; c++)
      if (strcmp(f[i], col_names[c]) == 0)
        break;
    if (c == C_COUNT)
      return core_fail(err, CORE_EINPUT,
                       "%s:1: unknown column '%s'; the columns are "
                       "workload, arm, metric, value and optionally run, "
                       "started_at, exit_code, valid, note",
                       m->file, f[i]);
    if (m->col[c] >= 0)
      return core_fail(err, CORE_EINPUT, "%s:1: column '%s' appears twice",
                       m->file, f[i]);
    m->col[c] = (int)i;
  }
  for (int c = 0; c < REQUIRED; c++)
    if (m->col[c] < 0)
      return core_fail(err, CORE_EINPUT,
                       "%s:1: missing column '%s' (required: workload, arm, "
                       "metric, value)",
                       m->file, col_names[c]);
  m->n_cols = n;
  return CORE_OK;
}

static const char *field(const imp *m, char **f, int c) {
  return m->col[c] >= 0 ? f[m->col[c]] : "";
}

/* The row's workload (one that takes imports), arm and metric, declared
 * in the sheet. OUT: *w the workload. */
static core_status declared(const imp *m, const char *where, const char *wname,
                            const char *arm, const char *metric,
                            const proto_workload **w, core_err *err) {
  long wi = proto_workload_index(m->sheet, wname);
  if (wi < 0)
    return undeclared(m, err, where, "workload", wname, 0);
  *w = &m->sheet->workloads[wi];
  if (!proto_workload_takes_imports(*w))
    return runs_itself(m, err, where, *w);
  if (proto_arm_index(m->sheet, arm) < 0)
    return undeclared(m, err, where, "arm", arm, 1);
  if (!proto_workload_has_metric(*w, metric))
    return undeclared_metric(m, err, where, *w, metric);
  return CORE_OK;
}

/* Every field is text that is frozen and reported: UTF-8. */
static core_status fields_utf8(const imp *m, char **f, size_t n,
                               const char *where, core_err *err) {
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(f[i]), bad = core_utf8_invalid(f[i], len);
    const char *col = "";
    for (int c = 0; c < C_COUNT; c++)
      if (m->col[c] == (int)i)
        col = col_names[c];
    if (bad < len)
      return core_fail(err, CORE_EINPUT,
                       "%s: %s%snot valid UTF-8 at byte %zu of field %zu "
                       "(0x%02X); export the file as CSV (UTF-8)",
                       where, col, col[0] ? ": " : "", bad + 1, i + 1,
                       (unsigned)(unsigned char)f[i][bad]);
  }
  return CORE_OK;
}

/* A value as the run's metrics file has one (core_parse_decimal: blanks
 * around it, decimal only, in range), and not negative for a time or an
 * amount of memory. */
static core_status csv_value(const char *where, const char *metric,
                             const char *value, double *v, core_err *err) {
  const char *why = data_value_parse(metric, value, v);
  if (why && why != data_value_negative)
    return core_fail(err, CORE_EINPUT,
                     "%s: value '%.80s' is not a finite number (%s)", where,
                     value, why);
  if (why)
    return core_fail(err, CORE_EINPUT,
                     "%s: value %.80s: %s is a time or an amount of memory, "
                     "which cannot be negative",
                     where, value, metric);
  return CORE_OK;
}

/* The run column: an id of at most 60 bytes; all digits, it is also the
 * round, which must then fit a long. */
static core_status csv_run(const char *where, const char *run, long *round,
                           core_err *err) {
  size_t len = strlen(run), digits = strspn(run, "0123456789");
  if (len > 60)
    return core_fail(err, CORE_EINPUT,
                     "%s: run '%.60s...' is longer than 60 bytes", where, run);
  if (digits == len) {
    char *end;
    long r;
    errno = 0;
    r = strtol(run, &end, 10);
    if (errno == ERANGE)
      return core_fail(err, CORE_EINPUT,
                       "%s: run %s is out of range (a round number is at "
                       "most %ld)",
                       where, run, LONG_MAX);
    if (r > 0)
      *round = r;
  }
  return CORE_OK;
}

static core_status on_csv(void *vctx, char **f, size_t n, long line,
                          core_err *err) {
  imp *m = vctx;
  char where[600], run_id[64], why[128];
  const char *wname, *arm, *metric, *value, *run, *code, *valid_s, *note;
  const proto_workload *w = NULL;
  long round = 0;
  int valid = 1, has_value = 0;
  double v = NAN;
  core_status st;
  if (!m->header_seen) {
    m->header_seen = 1;
    /* A UTF-8 byte order mark is what spreadsheets put first. */
    if (n > 0 && strncmp(f[0], "\xEF\xBB\xBF", 3) == 0)
      memmove(f[0], f[0] + 3, strlen(f[0] + 3) + 1);
    return csv_header(m, f, n, err);
  }
  snprintf(where, sizeof where, "%s:%ld", m->file, line);
  if (n != m->n_cols)
    return core_fail(err, CORE_EINPUT,
                     "%s: %zu fields, but the header has %zu", where, n,
                     m->n_cols);
  if ((st = fields_utf8(m, f, n, where, err)) != CORE_OK)
    return st;
  wname = field(m, f, C_WORKLOAD);
  arm = field(m, f, C_ARM);
  metric = field(m, f, C_METRIC);
  value = field(m, f, C_VALUE);
  run = field(m, f, C_RUN);
  code = field(m, f, C_EXIT);
  valid_s = field(m, f, C_VALID);
  note = field(m, f, C_NOTE);
  if ((st = declared(m, where, wname, arm, metric, &w, err)) != CORE_OK)
    return st;
  if (code[0] && !exit_code_ok(code))
    return core_fail(err, CORE_EINPUT,
                     "%s: exit_code '%s' is not an integer (or a list "
                     "like 0;1;0 for steps)",
                     where, code);
  if (valid_s[0] && !parse_valid(valid_s, &valid))
    return core_fail(err, CORE_EINPUT,
                     "%s: valid '%s' is not true/false (or 1/0, yes/no)",
                     where, valid_s);
  why[0] = '\0';
  if (!valid_s[0] && !code_meets(w, code, why, sizeof why))
    valid = 0;
  if (value[0]) {
    if ((st = csv_value(where, metric, value, &v, err)) != CORE_OK)
      return st;
    has_value = 1;
  } else if (valid) {
    return core_fail(err, CORE_EINPUT,
                     "%s: value is empty; only an invalid row (valid=false) "
                     "may lack a value",
                     where);
  }
  {
    /* started_at orders runs: read in full, as prereg writes it. */
    const char *s = field(m, f, C_STARTED);
    long long secs;
    if (s[0] && core_parse_utc(s, &secs, NULL) != CORE_OK)
      return core_fail(err, CORE_EINPUT,
                       "%s: started_at '%.80s' is not a UTC time written as "
                       "2026-10-21T09:30:00Z",
                       where, s);
  }
  if (run[0]) {
    if ((st = csv_run(where, run, &round, err)) != CORE_OK)
      return st;
    snprintf(run_id, sizeof run_id, "%s", run);
  } else {
    /* Without a run column each line is a run of its own. */
    snprintf(run_id, sizeof run_id, "line-%ld", line);
  }
  if (!valid && !note[0] && !why[0])
    snprintf(why, sizeof why, "marked invalid in %s", m->file);
  if (valid && note[0] &&
      json_array_append_new(
          m->notes,
          json_pack("{s:I,s:s}", "line", (json_int_t)line, "note", note)) != 0)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", where);
  return make_row(m, wname, arm, metric, run_id, round, field(m, f, C_STARTED),
                  code, valid, valid ? "" : (note[0] ? note : why), v,
                  has_value, err);
}

/* Reading the file:
 *
 * The file is read once, a chunk at a time, hashed as it goes. A CSV is
 * scanned as it is read (a million rows are some 50 MB, never held
 * whole); a JSON file or go test output is parsed whole, and parsed
 * JSON takes many times its size, so their limit is lower (see
 * import_source). */

#define IMPORT_MAX ((size_t)256 << 20)
#define IMPORT_WHOLE_MAX ((size_t)64 << 20)
#define IMPORT_CHUNK ((size_t)1 << 20)

typedef struct source {
  const char *file;
  int fd;
  core_sha256_ctx *sha;
  char *buf; /* IMPORT_CHUNK bytes and a NUL */
  size_t n;  /* bytes in buf */
  size_t total;
  long lines; /* newlines before buf */
} source;

/* The next chunk into buf (n 0 at the end), hashed. */
static core_status src_next(source *s, core_err *err) {
  ssize_t r;
  s->n = 0;
  do
    r = read(s->fd, s->buf, IMPORT_CHUNK);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return core_fail(err, CORE_EINPUT, "%s: cannot read: %s", s->file,
                     strerror(errno));
  s->n = (size_t)r;
  s->buf[s->n] = '\0';
  s->total += s->n;
  if (s->total > IMPORT_MAX) /* it grew while being read */
    return core_fail(err, CORE_EINPUT,
                     "%s: larger than the %zu MiB prereg imports", s->file,
                     IMPORT_MAX >> 20);
  core_sha256_update(s->sha, s->buf, s->n);
  return CORE_OK;
}

/* A text CSV never holds a NUL; binary data would otherwise be cut at it
 * by every C string below. */
static core_status no_nul(const source *s, core_err *err) {
  const char *nul = memchr(s->buf, '\0', s->n);
  long line = s->lines + 1;
  if (!nul)
    return CORE_OK;
  for (const char *p = s->buf; p < nul; p++)
    line += *p == '\n';
  return core_fail(err, CORE_EINPUT,
                   "%s:%ld: contains a NUL byte; is this a text CSV? "
                   "Export it from the spreadsheet as CSV (UTF-8)",
                   s->file, line);
}

static long count_lines(const char *p, size_t n) {
  long k = 0;
  for (const char *q = p; (q = memchr(q, '\n', n - (size_t)(q - p))); q++)
    k++;
  return k;
}

/* Scans the CSV whose first chunk is in s->buf, then the rest. */
static core_status import_csv(imp *m, source *s, core_err *err) {
  csvscan_result res;
  char last = '\n';
  data_csvscan *sc = data_csvscan_begin(m->file, on_csv, m, &res, err);
  core_status st = sc ? CORE_OK : err ? err->status : CORE_ENOMEM;
  while (st == CORE_OK && s->n > 0) {
    if ((st = no_nul(s, err)) != CORE_OK ||
        (st = data_csvscan_feed(sc, s->buf, s->n)) != CORE_OK)
      break;
    last = s->buf[s->n - 1];
    s->lines += count_lines(s->buf, s->n);
    st = src_next(s, err);
  }
  /* A last line without its newline is common in hand-made files; an
   * open quote is not. */
  if (st == CORE_OK && last != '\n')
    st = data_csvscan_feed(sc, "\n", 1);
  if (sc && data_csvscan_end(sc) != CORE_OK && st == CORE_OK)
    st = err ? err->status : CORE_EINPUT;
  if (st != CORE_OK)
    return st;
  if (res.torn)
    return core_fail(err, CORE_EINPUT, "%s:%ld: unterminated quoted field",
                     m->file, res.torn_line);
  if (!m->header_seen)
    return core_fail(err, CORE_EINPUT,
                     "%s: empty file; the first line must "
                     "be a header (workload,arm,metric,value)",
                     m->file);
  return CORE_OK;
}

/* hyperfine --export-json */

/* Finds the arm of a hyperfine command: --arm-from "CMD=ARM,..." (the last
 * '=' of an item splits, since commands may hold '='), else an arm of the
 * same name. */
static long arm_for(const imp *m, const char *arm_map, const char *cmd,
                    core_err *err, const char **bad) {
  *bad = NULL;
  if (arm_map) {
    const char *p = arm_map;
    while (*p) {
      const char *comma = strchr(p, ',');
      size_t ilen = comma ? (size_t)(comma - p) : strlen(p);
      const char *eq = NULL;
      for (const char *q = p; q < p + ilen; q++)
        if (*q == '=')
          eq = q;
      if (!eq) {
        *bad = "item without '='";
        core_fail(err, CORE_EUSAGE,
                  "--arm-from: '%.*s' lacks '='; write CMD=ARM,CMD2=ARM2",
                  (int)ilen, p);
        return -2;
      }
      if ((size_t)(eq - p) == strlen(cmd) &&
          strncmp(p, cmd, (size_t)(eq - p)) == 0) {
        char arm[256];
        long a;
        snprintf(arm, sizeof arm, "%.*s", (int)(p + ilen - eq - 1), eq + 1);
        if ((a = proto_arm_index(m->sheet, arm)) < 0) {
          undeclared(m, err, "--arm-from", "arm", arm, 1);
          if (err)
            err->status = CORE_EUSAGE;
          return -2;
        }
        return a;
      }
      p = comma ? comma + 1 : p + ilen;
    }
  }
  return proto_arm_index(m->sheet, cmd);
}

/* The arm whose whole command is cmd, as hyperfine names a command given
 * without -n; -1 when none, or more than one, is. */
static long arm_by_command(const imp *m, const proto_workload *w,
                           const char *cmd) {
  long found = -1;
  for (size_t i = 0; i < m->sheet->n_arms; i++) {
    const proto_arm *a = &m->sheet->arms[i];
    proto_expand_ctx x = {.arm = a->name, .workload = w->name};
    core_err e = {0};
    char *full = a->whole ? proto_expand(m->sheet, a->run, &x, &e) : NULL;
    if (full && strcmp(full, cmd) == 0)
      found = found < 0 ? (long)i : -2;
    core_free(full);
  }
  return found < 0 ? -1 : found;
}

static core_status pick_workload(imp *m, const char *only, long *wi,
                                 core_err *err) {
  long found = -1;
  size_t count = 0;
  if (only) {
    if ((*wi = proto_workload_index(m->sheet, only)) < 0)
      return undeclared(m, err, "--only", "workload", only, 0);
    return CORE_OK;
  }
  for (size_t i = 0; i < m->sheet->n_workloads; i++)
    if (proto_workload_takes_imports(&m->sheet->workloads[i]) &&
        !proto_workload_runs_itself(&m->sheet->workloads[i])) {
      found = (long)i;
      count++;
    }
  if (count != 1)
    return core_fail(err, CORE_EUSAGE,
                     "%s: hyperfine results name no workload and %s has %s "
                     "import-only workload (one without cmd, or with source "
                     "= \"import\"); say which with --only WORKLOAD",
                     m->file, m->sheet->path ? m->sheet->path : "the sheet",
                     count ? "more than one" : "no");
  *wi = found;
  return CORE_OK;
}

static core_status import_hyperfine(imp *m, json_t *root, const char *only,
                                    const char *arm_map, core_err *err) {
  json_t *results = json_object_get(root, "results"), *res;
  const proto_workload *w;
  size_t j;
  long wi = -1;
  core_status st;
  if (!json_is_array(results))
    return core_fail(err, CORE_EINPUT, "%s: results: not an array", m->file);
  if ((st = pick_workload(m, only, &wi, err)) != CORE_OK)
    return st;
  w = &m->sheet->workloads[wi];
  if (!proto_workload_takes_imports(w))
    return runs_itself(m, err, only ? "--only" : m->file, w);
  if (!proto_workload_has_metric(w, "wall_s"))
    return undeclared_metric(m, err, m->file, w, "wall_s");
  json_array_foreach(results, j, res) {
    json_t *cmd = json_object_get(res, "command");
    json_t *times = json_object_get(res, "times");
    json_t *codes = json_object_get(res, "exit_codes");
    const char *bad;
    char where[600];
    long a;
    size_t i;
    json_t *t;
    if (!json_is_string(cmd))
      return core_fail(err, CORE_EINPUT,
                       "%s: results[%zu].command: not a "
                       "string",
                       m->file, j);
    a = arm_for(m, arm_map, json_string_value(cmd), err, &bad);
    if (a == -2)
      return err ? err->status : CORE_EUSAGE;
    if (a < 0)
      a = arm_by_command(m, w, json_string_value(cmd));
    if (a < 0) {
      snprintf(where, sizeof where, "%s: results[%zu].command", m->file, j);
      return core_fail(err, CORE_EINPUT,
                       "%s: '%s' is not an arm; map it with --arm-from "
                       "'%s=ARM', or name each command after its arm when "
                       "running hyperfine (-n ARM)",
                       where, json_string_value(cmd), json_string_value(cmd));
    }
    if (!json_is_array(times) || json_array_size(times) == 0)
      return core_fail(err, CORE_EINPUT,
                       "%s: results[%zu].times: missing or empty (export "
                       "with hyperfine --export-json)",
                       m->file, j);
    if (codes && !json_is_null(codes) &&
        (!json_is_array(codes) ||
         json_array_size(codes) != json_array_size(times)))
      return core_fail(err, CORE_EINPUT,
                       "%s: results[%zu].exit_codes: not an array as long "
                       "as times",
                       m->file, j);
    json_array_foreach(times, i, t) {
      json_t *c = json_is_array(codes) ? json_array_get(codes, i) : NULL;
      char code[32] = "", run_id[64], why[128] = "";
      double v;
      int valid;
      if (!json_is_number(t) || !isfinite(v = json_number_value(t)) || v < 0)
        return core_fail(err, CORE_EINPUT,
                         "%s: results[%zu].times[%zu]: not a non-negative "
                         "number",
                         m->file, j, i);
      if (c && !json_is_null(c)) {
        if (!json_is_integer(c) || json_integer_value(c) < INT_MIN ||
            json_integer_value(c) > INT_MAX)
          return core_fail(err, CORE_EINPUT,
                           "%s: results[%zu].exit_codes[%zu]: not an "
                           "integer exit code",
                           m->file, j, i);
        snprintf(code, sizeof code, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(c));
      }
      valid = code_meets(w, code, why, sizeof why);
      snprintf(run_id, sizeof run_id, "h%zu-%zu", j + 1, i + 1);
      if ((st = make_row(m, w->name, m->sheet->arms[a].name, "wall_s", run_id,
                         (long)i + 1, "", code, valid, why, v, 1, err)) !=
          CORE_OK)
        return st;
    }
  }
  return CORE_OK;
}

/* Every item of --arm-from must name a declared arm, whatever the file
 * holds: a typo should not wait for the one command it maps. */
static core_status check_arm_map(const imp *m, const char *arm_map,
                                 core_err *err) {
  const char *bad;
  const char *p = arm_map;
  while (p && *p) {
    const char *comma = strchr(p, ',');
    size_t ilen = comma ? (size_t)(comma - p) : strlen(p);
    const char *eq = NULL;
    char cmd[512];
    for (const char *q = p; q < p + ilen; q++)
      if (*q == '=')
        eq = q;
    if (eq && (size_t)(eq - p) < sizeof cmd) {
      snprintf(cmd, sizeof cmd, "%.*s", (int)(eq - p), p);
      if (arm_for(m, arm_map, cmd, err, &bad) == -2)
        return err ? err->status : CORE_EUSAGE;
    } else if (!eq) {
      return core_fail(err, CORE_EUSAGE,
                       "--arm-from: '%.*s' lacks '='; write CMD=ARM,CMD2=ARM2",
                       (int)ilen, p);
    }
    p = comma ? comma + 1 : p + ilen;
  }
  return CORE_OK;
}

/* The same source twice */

/* The batch that already imported a source of this SHA-256, if any: its
 * rows would be counted twice, and frozen rows cannot be taken back. OUT:
 * *found 1 with its id and import time. */
static core_status imported_before(const data_experiment *exp, const char *hex,
                                   int *found, char id[16], char at[40],
                                   core_err *err) {
  char *bdir = core_path_join(exp->dir, "batches");
  char **names = NULL;
  size_t n = 0;
  long num;
  core_status st;
  *found = 0;
  if (!bdir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = core_list_dir(bdir, &names, &n, err);
  for (size_t i = 0; i < n && st == CORE_OK && !*found; i++) {
    char *path, *text = NULL;
    size_t len = 0;
    core_err rerr = {0};
    json_t *root;
    if (!data_batch_name(names[i], ".json", &num) || strlen(names[i]) > 15)
      continue;
    if (!(path = core_path_join(bdir, names[i]))) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      break;
    }
    root = NULL;
    /* Read as every frozen file is: regular, not through a link. */
    if (core_read_file(path, &text, &len, &rerr) == CORE_OK)
      root = json_loadb(text, len, 0, NULL);
    core_free(text);
    text = NULL;
    if (json_is_string(json_object_get(root, "source_sha256")) &&
        strcmp(json_string_value(json_object_get(root, "source_sha256")),
               hex) == 0) {
      const char *t = json_string_value(json_object_get(root, "imported_at"));
      *found = 1;
      snprintf(id, 16, "%.*s", (int)(strlen(names[i]) - 5), names[i]);
      snprintf(at, 40, "%s", t ? t : "?");
    }
    json_decref(root);
    core_free(path);
  }
  core_names_free(names, n);
  core_free(bdir);
  return st;
}

/* Refuses a source imported before, under the lock, so that two imports
 * of one file cannot both pass. */
static core_status not_imported_before(data_experiment *exp, const char *file,
                                       const char *hex, core_err *err) {
  char id[16], at[40];
  int found;
  core_status st;
  if ((st = data_experiment_lock(exp, err)) != CORE_OK ||
      (st = imported_before(exp, hex, &found, id, at, err)) != CORE_OK)
    return st;
  if (found)
    return core_fail(err, CORE_EINPUT,
                     "%s: already imported as batch %s (on %s; the same "
                     "SHA-256, %.12s...); importing it again would count "
                     "its rows twice; nothing was imported",
                     file, id, at, hex);
  return CORE_OK;
}

/* For the readers of other formats */

const proto_sheet *data_import_sheet(const data_import *m) {
  return m->sheet;
}

const char *data_import_file(const data_import *m) {
  return m->file;
}

core_status data_import_workload(data_import *m, const char *only,
                                 const char *format, long *wi, core_err *err) {
  core_status st = pick_workload(m, only, wi, err);
  if (st == CORE_EUSAGE && !only)
    core_fail(err, CORE_EUSAGE,
              "%s: %s name no workload of the sheet and %s has not one "
              "import-only workload (one without cmd) to take them; say "
              "which with --only WORKLOAD",
              m->file, format, m->sheet->path ? m->sheet->path : "the sheet");
  return st;
}

long data_import_arm(const data_import *m, const char *arm_map,
                     const char *name, core_err *err) {
  const char *bad;
  return arm_for(m, arm_map, name, err, &bad);
}

core_status data_import_no_arm(const data_import *m, const char *where,
                               const char *name, core_err *err) {
  core_buf b;
  core_status st;
  core_buf_init(&b);
  for (size_t i = 0; i < m->sheet->n_arms; i++)
    core_buf_printf(&b, "%s%s", i ? ", " : "", m->sheet->arms[i].name);
  st = core_fail(err, CORE_EINPUT,
                 "%s: '%s' is not an arm of %s (arms: %s); map it with "
                 "--arm-from '%s=ARM'",
                 where, name, m->sheet->path ? m->sheet->path : "the sheet",
                 b.data ? b.data : "none", name);
  core_buf_free(&b);
  return st;
}

core_status data_import_undeclared_metric(const data_import *m,
                                          const char *where,
                                          const proto_workload *w,
                                          const char *metric, core_err *err) {
  return undeclared_metric(m, err, where, w, metric);
}

core_status data_import_row(data_import *m, const char *where,
                            const char *workload, const char *arm,
                            const char *metric, const char *run_id, long round,
                            int valid, const char *reason, double value,
                            int has_value, core_err *err) {
  const proto_workload *w;
  core_status st = declared(m, where, workload, arm, metric, &w, err);
  if (st != CORE_OK)
    return st;
  const char *why = has_value ? data_value_ok(metric, value) : NULL;
  if (why && why != data_value_negative)
    return core_fail(err, CORE_EINPUT, "%s: %s: not a finite number", where,
                     metric);
  if (why)
    return core_fail(err, CORE_EINPUT,
                     "%s: %s is a time or an amount of memory, which cannot "
                     "be negative",
                     where, metric);
  if (!valid && (!reason || !reason[0]))
    reason = "marked invalid by the tool";
  /* Text that is frozen and reported is UTF-8. */
  if (core_utf8_invalid(run_id, strlen(run_id)) < strlen(run_id) ||
      core_utf8_invalid(reason ? reason : "", reason ? strlen(reason) : 0) <
          (reason ? strlen(reason) : 0))
    return core_fail(err, CORE_EINPUT, "%s: a run id or reason is not UTF-8",
                     where);
  return make_row(m, workload, arm, metric, run_id, round, "", "", valid,
                  valid ? "" : reason, value, has_value, err);
}

/* The file: CSV, JSON (hyperfine, Google Benchmark) or go test */

/* jansson reads a number too small for a double as 0 without a word; a
 * measurement that underflows is refused, like one in a CSV. Numbers are
 * looked at where they stand in the text, outside strings. */
static core_status json_numbers(const char *file, const char *text, size_t len,
                                core_err *err) {
  int in_str = 0;
  long line = 1;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (c == '\n')
      line++;
    if (in_str) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_str = 0;
    } else if (c == '"') {
      in_str = 1;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i;
      char *num;
      double v;
      const char *why;
      while (j < len && text[j] && strchr("+-.eE0123456789", text[j]))
        j++;
      if (!(num = core_strndup(text + i, j - i)))
        return core_fail(err, CORE_ENOMEM, "%s: out of memory", file);
      /* Only the range: a malformed number is jansson's to report. */
      why = core_parse_decimal(num, &v);
      if (why && strncmp(why, "too ", 4) != 0)
        why = NULL;
      if (why)
        core_fail(err, CORE_EINPUT, "%s:%ld: the number %.60s is %s", file,
                  line, num, why);
      core_free(num);
      if (why)
        return CORE_EINPUT;
      i = j - 1;
    }
  }
  return CORE_OK;
}

/* The rest of the file after the first chunk, for a file parsed whole
 * (JSON, go test output). */
static core_status read_rest(source *s, core_buf *all, core_err *err) {
  core_status st = CORE_OK;
  while (st == CORE_OK && s->n > 0) {
    if (all->len + s->n > IMPORT_WHOLE_MAX)
      return core_fail(err, CORE_EINPUT,
                       "%s: larger than the %zu MiB prereg imports of a "
                       "JSON file or go test output",
                       s->file, IMPORT_WHOLE_MAX >> 20);
    core_buf_append(all, s->buf, s->n);
    st = src_next(s, err);
  }
  if (st == CORE_OK && all->oom)
    st = core_fail(err, CORE_ENOMEM, "%s: out of memory", s->file);
  return st;
}

static core_status import_json(imp *m, source *s, const char *only,
                               const char *arm_map, const char **format,
                               core_err *err) {
  core_buf all;
  json_error_t je;
  json_t *root;
  const char *text;
  size_t len;
  core_status st;
  core_buf_init(&all);
  if ((st = read_rest(s, &all, err)) != CORE_OK) {
    core_buf_free(&all);
    return st;
  }
  text = all.data ? all.data : "";
  len = all.len;
  /* A byte order mark is what some editors put first; JSON has none. */
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
    text += 3;
    len -= 3;
  }
  if ((st = json_numbers(m->file, text, len, err)) != CORE_OK) {
    core_buf_free(&all);
    return st;
  }
  /* Two values for one key: jansson would keep the last without a
   * word. */
  root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  core_buf_free(&all);
  if (!root)
    return core_fail(err, CORE_EINPUT, "%s:%d: not valid JSON: %s", m->file,
                     je.line, je.text);
  if (json_is_object(root) && json_object_get(root, "benchmarks")) {
    *format = "gbench";
    st = data_import_gbench(m, root, only, arm_map, err);
  } else if (!json_is_object(root) || !json_object_get(root, "results"))
    st = core_fail(err, CORE_EINPUT,
                   "%s: a JSON object without \"results\" (hyperfine "
                   "--export-json) or \"benchmarks\" (Google Benchmark "
                   "--benchmark_format=json); prereg imports those, CSV "
                   "and go test -bench output",
                   m->file);
  else
    st = import_hyperfine(m, root, only, arm_map, err);
  json_decref(root);
  return st;
}

/* go test -bench output, read whole (it is line-oriented but small: one
 * line per run), within the same limit as JSON. */
static core_status import_go_text(imp *m, source *s, const char *only,
                                  const char *arm_map, core_err *err) {
  core_buf all;
  core_status st;
  core_buf_init(&all);
  if ((st = read_rest(s, &all, err)) == CORE_OK) {
    const char *text = all.data ? all.data : "";
    if (memchr(text, '\0', all.len))
      st = core_fail(err, CORE_EINPUT,
                     "%s: contains a NUL byte; go test -bench output is text",
                     m->file);
    else
      st = data_import_go(m, text, all.len, only, arm_map, err);
  }
  core_buf_free(&all);
  return st;
}

/* Opens the file the user named: a regular file (a FIFO would block, a
 * device never end; both are refused at once), of a size prereg imports.
 * Then JSON by its first character after a byte order mark and blanks,
 * go test output by its first line, else CSV. OUT: *format, hex the
 * file's SHA-256. */
static core_status import_source(imp *m, const char *only, const char *arm_map,
                                 const char **format,
                                 char hex[CORE_SHA256_HEX], core_err *err) {
  source s = {.file = m->file, .fd = -1};
  size_t size, k = 0;
  core_status st = core_open_regular(m->file, 1, &s.fd, &size, err);
  hex[0] = '\0';
  if (st != CORE_OK) {
    /* A file that cannot be read is bad input: exit 2, nothing written. */
    if (err)
      err->status = CORE_EINPUT;
    return CORE_EINPUT;
  }
  if (size > IMPORT_MAX) {
    close(s.fd);
    return core_fail(err, CORE_EINPUT,
                     "%s: is %zu bytes; prereg imports files of at most %zu "
                     "MiB",
                     m->file, size, IMPORT_MAX >> 20);
  }
  s.sha = core_sha256_begin();
  s.buf = core_malloc(IMPORT_CHUNK + 1);
  if (!s.sha || !s.buf)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else
    st = src_next(&s, err);
  if (st == CORE_OK) {
    if (s.n >= 3 && memcmp(s.buf, "\xEF\xBB\xBF", 3) == 0)
      k = 3;
    while (k < s.n && strchr(" \t\r\n", s.buf[k]) && s.buf[k])
      k++;
    int json = k < s.n && s.buf[k] == '{';
    int go = !json && data_is_go_bench(s.buf + k, s.n - k);
    *format = json ? "hyperfine" : go ? "go" : "csv";
    if ((json || go) && size > IMPORT_WHOLE_MAX)
      st = core_fail(err, CORE_EINPUT,
                     "%s: is %zu bytes; prereg imports JSON files and go "
                     "test output of at most %zu MiB",
                     m->file, size, IMPORT_WHOLE_MAX >> 20);
    else if (json)
      st = import_json(m, &s, only, arm_map, format, err);
    else if (go)
      st = import_go_text(m, &s, only, arm_map, err);
    else
      st = import_csv(m, &s, err);
  }
  core_sha256_end(s.sha, hex);
  core_free(s.buf);
  close(s.fd);
  return st;
}

/* One value per run and metric, as every reader of the frozen rows
 * demands (values.c): a second value of a run is refused here, before
 * it is frozen, naming the run. */
static core_status one_value_each(const imp *m, core_err *err) {
  data_runvalues *rv = data_runvalues_new(0);
  core_status st = CORE_OK;
  if (!rv)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t i = 0; i < m->rows.n && st == CORE_OK; i++) {
    const data_row *r = &m->rows.rows[i];
    long first = data_runvalues_add(rv, r, (long)i + 1);
    if (first < 0)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    else if (first > 0)
      st = core_fail(err, CORE_EINPUT,
                     "%s: run %s (workload %s, arm %s) has a second value of "
                     "%s (rows %ld and %zu of the file's rows): a run has one "
                     "value per metric; give each measurement a run of its "
                     "own (or leave the run column out)",
                     m->file, r->run_id, r->workload, r->arm, r->metric, first,
                     i + 1);
  }
  data_runvalues_free(rv);
  return st;
}

core_status data_import_only(data_experiment *exp, const proto_sheet *sheet,
                             const char *file, const char *arm_map,
                             const char *only, size_t *imported,
                             core_err *err) {
  imp m;
  char *facts_text = NULL;
  char hex[CORE_SHA256_HEX], now[32];
  const char *format = "csv";
  json_t *facts = NULL;
  data_batch *b = NULL;
  core_status st;
  memset(&m, 0, sizeof m);
  m.exp = exp;
  m.sheet = sheet;
  m.file = file;
  *imported = 0;
  data_json_init();
  /* The lock first: no data goes in under an unrecorded sheet. */
  if ((st = data_check_lock(exp, sheet, err)) != CORE_OK)
    return st;
  if ((st = check_arm_map(&m, arm_map, err)) != CORE_OK)
    return st;
  if (!(m.notes = json_array()))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (!(m.rows.pool = data_strpool_new())) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  st = import_source(&m, only, arm_map, &format, hex, err);
  if (st != CORE_OK)
    goto cleanup;
  if (m.rows.n == 0) {
    st = core_fail(err, CORE_EINPUT, "%s: no rows to import", file);
    goto cleanup;
  }
  if ((st = one_value_each(&m, err)) != CORE_OK ||
      (st = not_imported_before(exp, file, hex, err)) != CORE_OK)
    goto cleanup;
  /* Everything checked: only now does anything touch the data folder. */
  core_utc_now(now);
  facts =
      json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:O}", "kind", "import", "format",
                format, "source", file, "source_sha256", hex, "imported_at",
                now, "rows_imported", (json_int_t)m.rows.n, "notes", m.notes);
  if (!facts || !(facts_text = json_dumps(facts, JSON_PRESERVE_ORDER |
                                                     FACTS_PRECISION))) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  if ((st = data_batch_begin(exp, "import", &b, err)) != CORE_OK)
    goto cleanup;
  if ((st = data_batch_append(b, m.rows.rows, m.rows.n, err)) != CORE_OK) {
    data_batch_abandon(b);
    goto cleanup;
  }
  st = data_batch_freeze(b, facts_text, err);
  if (st == CORE_OK)
    *imported = m.rows.n;
cleanup:
  json_decref(facts);
  json_decref(m.notes);
  core_free(facts_text);
  data_rowset_free(&m.rows);
  return st;
}
