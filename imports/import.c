/* import.c: `prereg import`: measurements taken elsewhere (the CSV of the
 * contract, section 3, or hyperfine --export-json) become one frozen batch
 * of kind "import". The whole file is checked before anything is written.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/limits.h"
#include "imports/imports_internal.h"

/* The formats, one row each. What a file is, is read from its content
 * (import_source): JSON whose first key names go test -json events is
 * go; other JSON is gbench when it has "benchmarks" (tried first: a
 * pyperf file has it too) and hyperfine when it has "results"; text is a
 * CSV when its first line is the contract's header, else go when a line
 * is a go test -bench result, else the CSV it would be (refused by its
 * header). */
enum { F_CSV, F_HYPERFINE, F_GBENCH, F_GO, F_COUNT };
static const data_import_format formats[F_COUNT] = {
    [F_CSV] = {"csv", "a CSV file", "the CSV file"},
    [F_HYPERFINE] = {"hyperfine", "hyperfine", NULL},
    [F_GBENCH] = {"gbench", "Google Benchmark", NULL},
    [F_GO] = {"go", "go test -bench", NULL},
};

const data_import_format *data_import_formats(size_t *n) {
  *n = F_COUNT;
  return formats;
}

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

/* A CSV without a run column: a workload and arm's runs, each named by
 * the line of its first value, and how many values of each metric went
 * into them so far. */
typedef struct csv_runs {
  char *workload, *arm; /* owned */
  long *first_line;     /* of each run, in order */
  size_t n, cap;
} csv_runs;
typedef struct csv_filled {
  char *workload, *arm, *metric; /* owned */
  size_t k;                      /* values of this metric so far */
} csv_filled;

typedef struct data_import {
  data_experiment *exp;
  const proto_sheet *sheet;
  const char *file;
  data_rowset rows;
  data_json *notes; /* notes on valid rows: kept in the batch facts */
  int col[C_COUNT]; /* field index of each column, -1 when absent */
  size_t n_cols;
  int header_seen;
  long seq;
  const data_import_opts *opts;
  data_names *names;
  int collect;   /* the first reading: names learnt, rows checked only */
  long cur_cfg;  /* the configuration of the result being read */
  long cur_line; /* and its line */
  const proto_workload *by_command; /* hyperfine: arms by their command */
  csv_runs *runs;                   /* without a run column */
  size_t n_runs, cap_runs;
  csv_filled *filled;
  size_t n_filled, cap_filled;
} imp;

/* Shared checks */

static core_status undeclared(const imp *m, core_err *err, const char *where,
                              const char *kind, const char *name, int arms) {
  core_buf b;
  size_t n = arms ? m->sheet->n_arms : m->sheet->n_workloads;
  core_status st;
  core_buf_init(&b);
  for (size_t i = 0; i < n && b.len < IMPORT_QUOTE_MAX; i++)
    core_buf_printf(&b, "%s%s", i ? ", " : "",
                    arms ? m->sheet->arms[i].name
                         : m->sheet->workloads[i].name);
  if (b.len >= IMPORT_QUOTE_MAX)
    core_buf_printf(&b, ", ... (%zu in all)", n);
  /* Quoted up to a bound: the list is the hint and must not be cut. */
  st = core_fail(
      err, CORE_EINPUT,
      "%s: %s '%.*s%s' is not declared in %s (declared: %.600s)", where, kind,
      IMPORT_QUOTE_MAX, name, strlen(name) > IMPORT_QUOTE_MAX ? "..." : "",
      m->sheet->path ? m->sheet->path : "the sheet", b.data ? b.data : "none");
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

/* started_at orders runs: read in full, as prereg writes it (s empty:
 * not given). */
static core_status check_started(const char *where, const char *s,
                                 core_err *err) {
  long long secs;
  if (s[0] && core_parse_utc(s, &secs, NULL) != CORE_OK)
    return core_fail(err, CORE_EINPUT,
                     "%s: started_at '%.80s' is not a UTC time written as "
                     "2026-10-21T09:30:00Z",
                     where, s);
  return CORE_OK;
}

/* The run a CSV line without a run column belongs to: the k-th value of
 * a workload, arm and metric goes into the k-th run of that workload and
 * arm (a run of its own when there is none yet, named after this line),
 * so that the metrics of one run, written one line each, stay one run.
 * OUT: run_id. 0 when out of memory. */
static int csv_run_of_line(imp *m, const char *w, const char *arm,
                           const char *metric, long line, char run_id[64]) {
  csv_runs *r = NULL;
  csv_filled *f = NULL;
  for (size_t i = 0; i < m->n_runs && !r; i++)
    if (!strcmp(m->runs[i].workload, w) && !strcmp(m->runs[i].arm, arm))
      r = &m->runs[i];
  for (size_t i = 0; i < m->n_filled && !f; i++)
    if (!strcmp(m->filled[i].workload, w) && !strcmp(m->filled[i].arm, arm) &&
        !strcmp(m->filled[i].metric, metric))
      f = &m->filled[i];
  if (!r) {
    csv_runs *v = core_grow(m->runs, &m->cap_runs, m->n_runs, sizeof *v, 8);
    if (!v)
      return 0;
    m->runs = v;
    r = &v[m->n_runs];
    memset(r, 0, sizeof *r);
    r->workload = core_strdup(w);
    r->arm = core_strdup(arm);
    m->n_runs++;
    if (!r->workload || !r->arm)
      return 0;
  }
  if (!f) {
    csv_filled *v =
        core_grow(m->filled, &m->cap_filled, m->n_filled, sizeof *v, 8);
    if (!v)
      return 0;
    m->filled = v;
    f = &v[m->n_filled];
    memset(f, 0, sizeof *f);
    f->workload = core_strdup(w);
    f->arm = core_strdup(arm);
    f->metric = core_strdup(metric);
    m->n_filled++;
    if (!f->workload || !f->arm || !f->metric)
      return 0;
  }
  if (f->k == r->n) {
    long *v = core_grow(r->first_line, &r->cap, r->n, sizeof *v, 16);
    if (!v)
      return 0;
    r->first_line = v;
    v[r->n++] = line;
  }
  snprintf(run_id, 64, "line-%ld", r->first_line[f->k++]);
  return 1;
}

static void csv_runs_free(imp *m) {
  for (size_t i = 0; i < m->n_runs; i++) {
    core_free(m->runs[i].workload);
    core_free(m->runs[i].arm);
    core_free(m->runs[i].first_line);
  }
  for (size_t i = 0; i < m->n_filled; i++) {
    core_free(m->filled[i].workload);
    core_free(m->filled[i].arm);
    core_free(m->filled[i].metric);
  }
  core_free(m->runs);
  core_free(m->filled);
}

/* {"line": LINE, "note": NOTE}, kept in the batch facts; NULL when out
 * of memory or the note is not UTF-8. */
static data_json *note_of(long line, const char *note) {
  data_json *o = data_json_new_object();
  if (data_json_set(o, "line", data_json_new_integer(line)) ||
      data_json_set(o, "note", data_json_new_text(note))) {
    data_json_free(o);
    return NULL;
  }
  return o;
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
  if ((st = check_started(where, field(m, f, C_STARTED), err)) != CORE_OK)
    return st;
  if (run[0]) {
    if ((st = csv_run(where, run, &round, err)) != CORE_OK)
      return st;
    snprintf(run_id, sizeof run_id, "%s", run);
  } else if (!csv_run_of_line(m, wname, arm, metric, line, run_id)) {
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", where);
  }
  if (!valid && !note[0] && !why[0])
    snprintf(why, sizeof why, "marked invalid in %s", m->file);
  if (valid && note[0] && data_json_append(m->notes, note_of(line, note)))
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

/* The refusal of a name that maps to no arm, at where. The name and the
 * list of arms are quoted up to a bound so that the hint after them is
 * never cut; a name too long to quote is mapped in --arm-map FILE. */
static core_status no_arm(const imp *m, const char *where, const char *name,
                          int hyperfine, core_err *err) {
  core_buf b;
  core_status st;
  int q = IMPORT_QUOTE_MAX;
  const char *cut = strlen(name) > IMPORT_QUOTE_MAX ? "..." : "";
  const char *long_hint = cut[0] ? " (the name is too long to quote here: "
                                   "write it in --arm-map FILE, as a line "
                                   "NAME<TAB>ARM)"
                                 : "";
  const char *more = "; or import only the mapped names with "
                     "--ignore-unmapped";
  core_buf h; /* the hint's NAME=ARM, one word for the shell */
  char *hint;
  core_buf_init(&h);
  core_buf_printf(&h, "%.*s%s=ARM", q, name, cut);
  hint = core_buf_steal(&h);
  core_buf_sh_quote(&h, hint ? hint : "", hint ? strlen(hint) : 0);
  core_free(hint);
  if (h.oom) {
    core_buf_free(&h);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if (hyperfine) {
    st = core_fail(err, CORE_EINPUT,
                   "%s: '%.*s%s' is not an arm; map it with --arm-from %s, "
                   "or name each command after its arm when running "
                   "hyperfine (-n ARM)%s%s",
                   where, q, name, cut, h.data, long_hint, more);
    core_buf_free(&h);
    return st;
  }
  core_buf_init(&b);
  for (size_t i = 0; i < m->sheet->n_arms && b.len < IMPORT_QUOTE_MAX; i++)
    core_buf_printf(&b, "%s%s", i ? ", " : "", m->sheet->arms[i].name);
  if (b.len >= IMPORT_QUOTE_MAX)
    core_buf_printf(&b, ", ... (%zu arms)", m->sheet->n_arms);
  st = core_fail(err, CORE_EINPUT,
                 "%s: '%.*s%s' is not an arm of %.*s (arms: %.600s); map it "
                 "with "
                 "--arm-from %s%s%s",
                 where, q, name, cut, q,
                 m->sheet->path ? m->sheet->path : "the sheet",
                 b.data ? b.data : "none", h.data, long_hint, more);
  core_buf_free(&b);
  core_buf_free(&h);
  return st;
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

/* A run's exit code from exit_codes (c; NULL when the file has none).
 * OUT: code its text, why the reason the run is invalid ("" when valid
 * as far as the code tells). */
static core_status hf_code(const imp *m, const proto_workload *w, data_json *c,
                           size_t j, size_t i, char code[32], char why[128],
                           core_err *err) {
  code[0] = why[0] = '\0';
  if (c && data_json_is(c, DATA_JSON_NULL)) {
    /* hyperfine writes null when the command was ended by a signal: it
     * did not finish, whatever its time says. */
    snprintf(why, 128,
             "hyperfine recorded no exit code (ended by a "
             "signal)");
    return CORE_OK;
  }
  if (c) {
    if (!data_json_is(c, DATA_JSON_INTEGER) ||
        data_json_integer(c) < INT_MIN || data_json_integer(c) > INT_MAX)
      return core_fail(err, CORE_EINPUT,
                       "%s: results[%zu].exit_codes[%zu]: not an "
                       "integer exit code",
                       m->file, j, i);
    snprintf(code, 32, "%lld", data_json_integer(c));
  }
  code_meets(w, code, why, 128);
  return CORE_OK;
}

/* The maxrss_kib row of run i from memory_usage_byte (hyperfine 1.20 and
 * later: the peak resident memory of each run, in bytes). */
static core_status hf_memory(imp *m, const proto_workload *w, const char *arm,
                             data_json *mem, size_t j, size_t i,
                             const char *run_id, const char *code, int valid,
                             const char *why, core_err *err) {
  data_json *b = data_json_at(mem, i);
  const char *metric = proto_measure_name(PROTO_MEASURE_MAXRSS);
  double v = 0;
  if (b && !data_json_is(b, DATA_JSON_NULL) &&
      (!data_json_is(b, DATA_JSON_NUMBER) ||
       !isfinite(v = data_json_number(b)) || v < 0))
    return core_fail(err, CORE_EINPUT,
                     "%s: results[%zu].memory_usage_byte[%zu]: not a "
                     "non-negative number",
                     m->file, j, i);
  if (!b || data_json_is(b, DATA_JSON_NULL))
    return make_row(m, w->name, arm, metric, run_id, (long)i + 1, "", code, 0,
                    valid ? "hyperfine recorded no memory usage" : why, NAN, 0,
                    err);
  return make_row(m, w->name, arm, metric, run_id, (long)i + 1, "", code,
                  valid, valid ? "" : why, v / 1024, 1, err);
}

/* The runs of results[j], arm a. */
static core_status hf_runs(imp *m, const proto_workload *w, long a,
                           data_json *res, size_t j, core_err *err) {
  data_json *times = data_json_get(res, "times");
  data_json *codes = data_json_get(res, "exit_codes");
  data_json *mem = data_json_get(res, "memory_usage_byte"), *t;
  int want_mem =
      proto_workload_has_metric(w, proto_measure_name(PROTO_MEASURE_MAXRSS));
  const char *arm = m->sheet->arms[a].name;
  size_t i;
  if (codes && !data_json_is(codes, DATA_JSON_NULL) &&
      (!data_json_is(codes, DATA_JSON_ARRAY) ||
       data_json_size(codes) != data_json_size(times)))
    return core_fail(err, CORE_EINPUT,
                     "%s: results[%zu].exit_codes: not an array as long "
                     "as times",
                     m->file, j);
  if (want_mem && mem &&
      (!data_json_is(mem, DATA_JSON_ARRAY) ||
       data_json_size(mem) != data_json_size(times)))
    return core_fail(err, CORE_EINPUT,
                     "%s: results[%zu].memory_usage_byte: not an array as "
                     "long as times",
                     m->file, j);
  for (i = 0; (t = data_json_at(times, i)) != NULL; i++) {
    data_json *c =
        data_json_is(codes, DATA_JSON_ARRAY) ? data_json_at(codes, i) : NULL;
    char code[32], run_id[64], why[128];
    double v;
    core_status st;
    if (!data_json_is(t, DATA_JSON_NUMBER) ||
        !isfinite(v = data_json_number(t)) || v < 0)
      return core_fail(err, CORE_EINPUT,
                       "%s: results[%zu].times[%zu]: not a non-negative "
                       "number",
                       m->file, j, i);
    if ((st = hf_code(m, w, c, j, i, code, why, err)) != CORE_OK)
      return st;
    if (m->collect)
      continue;
    snprintf(run_id, sizeof run_id, "h%zu-%zu", j + 1, i + 1);
    if ((st = make_row(m, w->name, arm, proto_measure_name(PROTO_MEASURE_WALL),
                       run_id, (long)i + 1, "", code, !why[0], why, v, 1,
                       err)) != CORE_OK)
      return st;
    if (want_mem && mem &&
        (st = hf_memory(m, w, arm, mem, j, i, run_id, code, !why[0], why,
                        err)) != CORE_OK)
      return st;
  }
  return CORE_OK;
}

static core_status import_hyperfine(imp *m, data_json *root, const char *only,
                                    core_err *err) {
  data_json *results = data_json_get(root, "results"), *res;
  const proto_workload *w;
  size_t j;
  long wi = -1;
  core_status st;
  if (!data_json_is(results, DATA_JSON_ARRAY))
    return core_fail(err, CORE_EINPUT, "%s: results: not an array", m->file);
  if ((st = pick_workload(m, only, &wi, err)) != CORE_OK)
    return st;
  w = &m->sheet->workloads[wi];
  if (!proto_workload_takes_imports(w))
    return runs_itself(m, err, only ? "--only" : m->file, w);
  if (!proto_workload_has_metric(w, proto_measure_name(PROTO_MEASURE_WALL)))
    return undeclared_metric(m, err, m->file, w,
                             proto_measure_name(PROTO_MEASURE_WALL));
  m->by_command = w;
  for (j = 0; (res = data_json_at(results, j)) != NULL; j++) {
    data_json *cmd = data_json_get(res, "command");
    data_json *times = data_json_get(res, "times");
    const char *name;
    long a;
    if (!data_json_is(cmd, DATA_JSON_STRING))
      return core_fail(err, CORE_EINPUT,
                       "%s: results[%zu].command: not a "
                       "string",
                       m->file, j);
    name = data_json_text(cmd);
    if ((a = data_import_arm(m, name, NULL, -1, 0, err)) == -2)
      return err ? err->status : CORE_EUSAGE;
    if (a == -3)
      continue;
    if (a < 0) {
      char where[600];
      snprintf(where, sizeof where, "%s: results[%zu].command", m->file, j);
      return no_arm(m, where, name, 1, err);
    }
    if (!data_json_is(times, DATA_JSON_ARRAY) || data_json_size(times) == 0)
      return core_fail(err, CORE_EINPUT,
                       "%s: results[%zu].times: missing or empty (export "
                       "with hyperfine --export-json)",
                       m->file, j);
    if ((st = hf_runs(m, w, a, res, j, err)) != CORE_OK)
      return st;
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
    data_json *root;
    if (!data_batch_name(names[i], ".json", &num) || strlen(names[i]) > 15)
      continue;
    if (!(path = core_path_join(bdir, names[i]))) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      break;
    }
    root = NULL;
    /* Read as every frozen file is: regular, not through a link. */
    if (core_read_file(path, &text, &len, &rerr) == CORE_OK)
      root = data_json_parse(text, len, 0, NULL);
    core_free(text);
    text = NULL;
    if (data_json_is(data_json_get(root, "source_sha256"), DATA_JSON_STRING) &&
        strcmp(data_json_text(data_json_get(root, "source_sha256")), hex) ==
            0) {
      const char *t = data_json_text(data_json_get(root, "imported_at"));
      *found = 1;
      snprintf(id, 16, "%.*s", (int)(strlen(names[i]) - 5), names[i]);
      snprintf(at, 40, "%s", t ? t : "?");
    }
    data_json_free(root);
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

/* The arm a name has without a mapping: the arm of that name, else (for
 * hyperfine) the arm whose whole command it is. */
static long arm_fallback(void *ctx, const char *name) {
  imp *m = ctx;
  long a = proto_arm_index(m->sheet, name);
  if (a < 0 && m->by_command)
    a = arm_by_command(m, m->by_command, name);
  return a;
}

long data_import_arm(data_import *m, const char *name, const char *alt,
                     long cfg, long line, core_err *err) {
  long a;
  if (!data_names_where_ok(m->names, cfg))
    return -3;
  m->cur_cfg = cfg;
  m->cur_line = line;
  if (m->collect)
    return data_names_see(m->names, name, alt, cfg, line, err) == CORE_OK ? 0
                                                                          : -2;
  a = data_names_arm(m->names, name, cfg);
  return a == -1 && alt ? data_names_arm(m->names, alt, cfg) : a;
}

core_status data_import_config(data_import *m, const char *text, long *cfg,
                               core_err *err) {
  core_status st = data_names_config(m->names, text, m->opts, cfg, err);
  if (st != CORE_OK && err && err->status == CORE_EINPUT) {
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    core_fail(err, CORE_EINPUT, "%s: %s", m->file, msg);
  }
  return st;
}

core_status data_import_no_arm(const data_import *m, const char *where,
                               const char *name, core_err *err) {
  return no_arm(m, where, name, 0, err);
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
  if (m->collect)
    return CORE_OK;
  if ((st = data_names_add_run(m->names, m->cur_cfg, m->cur_line, err)) !=
      CORE_OK)
    return st;
  return make_row(m, workload, arm, metric, run_id, round, "", "", valid,
                  valid ? "" : reason, value, has_value, err);
}

/* The file: CSV, JSON (hyperfine, Google Benchmark) or go test */

/* The parser (data_json_parse, jansson's) reads a number too small for
 * a double as 0 without a word; a measurement that underflows is
 * refused, like one in a CSV. Numbers are looked at where they stand in
 * the text, outside strings. */
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
      /* Only the range: a malformed number is the parser's to report. */
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

/* The file read twice: first to learn its names and configurations (and
 * check every row), then, the mappings resolved against them, for its
 * rows. configs: the format has configurations (--where applies). */
typedef core_status (*reader_fn)(imp *m, void *ctx, core_err *err);

static core_status read_twice(imp *m, reader_fn fn, void *ctx, int configs,
                              core_err *err) {
  core_status st;
  if (m->opts->n_where && !configs)
    return core_fail(err, CORE_EUSAGE,
                     "%s: --where selects among the configurations (`key: "
                     "value` lines) of go test output; this file has none",
                     m->file);
  m->collect = 1;
  if ((st = fn(m, ctx, err)) != CORE_OK)
    return st;
  if (m->opts->n_where && data_names_count(m->names) == 0)
    return core_fail(err, CORE_EINPUT,
                     "%s: no result under --where %.*s%s (every --where "
                     "must hold: KEY=VALUE as the line 'KEY: VALUE')",
                     m->file, IMPORT_QUOTE_MAX, m->opts->where[0],
                     m->opts->n_where > 1 ? " and the others" : "");
  if ((st = data_names_resolve(m->names, m->sheet, m->opts, m->file,
                               arm_fallback, m, err)) != CORE_OK)
    return st;
  m->collect = 0;
  return fn(m, ctx, err);
}

static core_status read_gbench(imp *m, void *root, core_err *err) {
  return data_import_gbench(m, root, m->opts->only, err);
}

static core_status read_hyperfine(imp *m, void *root, core_err *err) {
  return import_hyperfine(m, root, m->opts->only, err);
}

static core_status import_json(imp *m, source *s, const char **format,
                               core_err *err) {
  core_buf all;
  data_json_error je;
  data_json *root;
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
  /* Two values for one key: the parser would keep the last without a
   * word. */
  root = data_json_parse(text, len, DATA_JSON_NO_DUPLICATES, &je);
  core_buf_free(&all);
  if (!root)
    return core_fail(err, CORE_EINPUT, "%s:%d: not valid JSON: %s", m->file,
                     je.line, je.text);
  if (data_json_is(root, DATA_JSON_OBJECT) &&
      data_json_get(root, "benchmarks")) {
    *format = formats[F_GBENCH].name;
    st = read_twice(m, read_gbench, root, 0, err);
  } else if (!data_json_is(root, DATA_JSON_OBJECT) ||
             !data_json_get(root, "results"))
    st = core_fail(err, CORE_EINPUT,
                   "%s: a JSON object without \"results\" (hyperfine "
                   "--export-json) or \"benchmarks\" (Google Benchmark "
                   "--benchmark_format=json); prereg imports those, CSV "
                   "and go test -bench output (also with -json)",
                   m->file);
  else
    st = read_twice(m, read_hyperfine, root, 0, err);
  data_json_free(root);
  return st;
}

/* go test -bench output as text, with the line of the file each of its
 * lines came from (NULL: the same). */
typedef struct go_text {
  const char *text;
  size_t len;
  const long *line_of;
} go_text;

static core_status read_go(imp *m, void *ctx, core_err *err) {
  go_text *g = ctx;
  return data_import_go(m, g->text, g->len, g->line_of, m->opts->only, err);
}

/* go test -bench output, read whole (it is line-oriented but small: one
 * line per run), within the same limit as JSON. */
static core_status import_go_text(imp *m, const char *text, size_t len,
                                  core_err *err) {
  go_text g = {text, len, NULL};
  if (memchr(text, '\0', len))
    return core_fail(err, CORE_EINPUT,
                     "%s: contains a NUL byte; go test -bench output is text",
                     m->file);
  return read_twice(m, read_go, &g, 1, err);
}

/* go test -json: one event a line; the Output of each package's events,
 * in order, is the text go test -bench prints. */
typedef struct go_pkg {
  char *name;
  core_buf text;
  long *line_of; /* the JSON line of each line of text */
  size_t n_lines, cap_lines;
  int open; /* its last line has no newline yet */
} go_pkg;

/* Appends out (from JSON line) to p. 0 when out of memory. */
static int pkg_append(go_pkg *p, const char *out, long line) {
  for (const char *q = out; *q; q++) {
    if (!p->open) {
      if (p->n_lines == p->cap_lines) {
        size_t c = p->cap_lines ? p->cap_lines * 2 : 64;
        long *l = core_realloc(p->line_of, c * sizeof *l);
        if (!l)
          return 0;
        p->line_of = l;
        p->cap_lines = c;
      }
      p->line_of[p->n_lines++] = line;
      p->open = 1;
    }
    if (*q == '\n')
      p->open = 0;
  }
  core_buf_append(&p->text, out, strlen(out));
  return !p->text.oom;
}

/* The package of an event, found or added to pk. NULL when out of
 * memory. */
static go_pkg *pkg_of(go_pkg **pk, size_t *n, const char *name) {
  go_pkg *g;
  for (size_t i = 0; i < *n; i++)
    if (!strcmp((*pk)[i].name, name))
      return &(*pk)[i];
  if (!(g = core_realloc(*pk, (*n + 1) * sizeof *g)))
    return NULL;
  *pk = g;
  g = &g[(*n)++];
  memset(g, 0, sizeof *g);
  core_buf_init(&g->text);
  if (!(g->name = core_strdup(name)))
    return NULL;
  return g;
}

/* The packages' Output joined, each package's text after the other's,
 * each ending in a newline. OUT: *all, *line_of (newly allocated). */
static int pkgs_join(go_pkg *pk, size_t n, core_buf *all, long **line_of) {
  size_t lines = 0, k = 0;
  for (size_t i = 0; i < n; i++)
    lines += pk[i].n_lines;
  if (!(*line_of = core_calloc(lines + 1, sizeof **line_of)))
    return 0;
  for (size_t i = 0; i < n; i++) {
    core_buf_append(all, pk[i].text.data ? pk[i].text.data : "",
                    pk[i].text.len);
    if (pk[i].open)
      core_buf_append(all, "\n", 1);
    memcpy(*line_of + k, pk[i].line_of, pk[i].n_lines * sizeof **line_of);
    k += pk[i].n_lines;
  }
  return !all->oom;
}

/* One line of go test -json output: an event whose Output goes to its
 * package. Lines that are not JSON objects (go prints a few of its own,
 * such as a build failure) are skipped, as test2json's readers do. */
static int go_event(go_pkg **pk, size_t *n, const char *l, size_t len,
                    long line) {
  data_json *ev = data_json_parse(l, len, 0, NULL);
  data_json *out = data_json_get(ev, "Output");
  data_json *pkg = data_json_get(ev, "Package");
  go_pkg *g;
  int ok = 1;
  if (data_json_is(out, DATA_JSON_STRING)) {
    g = pkg_of(pk, n,
               data_json_is(pkg, DATA_JSON_STRING) ? data_json_text(pkg) : "");
    ok = g && pkg_append(g, data_json_text(out), line);
  }
  data_json_free(ev);
  return ok;
}

static core_status import_go_json(imp *m, source *s, core_err *err) {
  core_buf all, text;
  go_pkg *pk = NULL;
  size_t n = 0;
  long *line_of = NULL, line = 0;
  core_status st;
  core_buf_init(&all);
  core_buf_init(&text);
  st = read_rest(s, &all, err);
  for (const char *p = all.data, *end = all.data + all.len;
       st == CORE_OK && p && p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    line++;
    if (!go_event(&pk, &n, p, len, line))
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    p = nl ? nl + 1 : end;
  }
  core_buf_free(&all);
  if (st == CORE_OK && !pkgs_join(pk, n, &text, &line_of))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK && memchr(text.data ? text.data : "", '\0', text.len))
    st = core_fail(err, CORE_EINPUT,
                   "%s: an Output holds a NUL byte; go test output is text",
                   m->file);
  if (st == CORE_OK) {
    go_text g = {text.data ? text.data : "", text.len, line_of};
    st = read_twice(m, read_go, &g, 1, err);
  }
  for (size_t i = 0; i < n; i++) {
    core_free(pk[i].name);
    core_buf_free(&pk[i].text);
    core_free(pk[i].line_of);
  }
  core_free(pk);
  core_free(line_of);
  core_buf_free(&text);
  return st;
}

/* Whether the first line of buf is an event of go test -json (an object
 * with "Action"). */
static int is_go_json(const char *buf, size_t n) {
  const char *nl = memchr(buf, '\n', n);
  data_json *ev = data_json_parse(buf, nl ? (size_t)(nl - buf) : n, 0, NULL);
  int yes = data_json_is(data_json_get(ev, "Action"), DATA_JSON_STRING);
  data_json_free(ev);
  return yes;
}

/* Whether the first line of buf is a header of the import CSV: every
 * field (blanks and quotes around it aside) a column name. */
static int is_csv_header(const char *buf, size_t n) {
  const char *end = memchr(buf, '\n', n), *p = buf;
  if (!end)
    end = buf + n;
  if (end - p >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
    p += 3;
  while (p < end) {
    const char *c = memchr(p, ',', (size_t)(end - p)), *e = c ? c : end;
    int known = 0;
    while (p < e && strchr(" \t\"", *p))
      p++;
    while (e > p && strchr(" \t\r\"", e[-1]))
      e--;
    for (int k = 0; k < C_COUNT && !known; k++)
      known = strlen(col_names[k]) == (size_t)(e - p) &&
              !strncmp(p, col_names[k], (size_t)(e - p));
    if (!known)
      return 0;
    p = c ? c + 1 : end;
  }
  return 1;
}

/* A file that is neither JSON nor a CSV by its header: go test output
 * when any of its lines is a result or a configuration line, else the
 * CSV it would be (whose header the CSV reader then refuses). */
static core_status import_text(imp *m, source *s, size_t size,
                               const char **format, core_err *err) {
  core_buf all;
  core_status st;
  csvscan_result res;
  data_csvscan *sc;
  if (size > IMPORT_WHOLE_MAX) {
    if (!data_is_go_bench(s->buf, s->n))
      return import_csv(m, s, err);
    return core_fail(err, CORE_EINPUT,
                     "%s: is %zu bytes; prereg imports JSON files and go "
                     "test output of at most %zu MiB",
                     m->file, size, IMPORT_WHOLE_MAX >> 20);
  }
  core_buf_init(&all);
  if ((st = read_rest(s, &all, err)) == CORE_OK &&
      data_is_go_bench(all.data ? all.data : "", all.len)) {
    *format = formats[F_GO].name;
    st = import_go_text(m, all.data, all.len, err);
  } else if (st == CORE_OK) {
    sc = data_csvscan_begin(m->file, on_csv, m, &res, err);
    st = sc ? data_csvscan_feed(sc, all.data ? all.data : "", all.len)
            : CORE_ENOMEM;
    if (sc && data_csvscan_end(sc) != CORE_OK && st == CORE_OK)
      st = err ? err->status : CORE_EINPUT;
    if (st == CORE_OK)
      st = core_fail(err, CORE_EINPUT,
                     "%s: neither a CSV with a header (workload,arm,metric,"
                     "value), JSON, nor go test -bench output",
                     m->file);
  }
  core_buf_free(&all);
  return st;
}

/* Opens the file the user named: a regular file (a FIFO would block, a
 * device never end; both are refused at once), of a size prereg imports.
 * Then by its content: JSON (hyperfine, Google Benchmark) or go test
 * -json events by the first character after a byte order mark and
 * blanks, a CSV by its header, else go test output. OUT: *format, hex
 * the file's SHA-256. */
static core_status import_source(imp *m, const char **format,
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
    int gojson = json && is_go_json(s.buf + k, s.n - k);
    *format = formats[gojson ? F_GO : json ? F_HYPERFINE : F_CSV].name;
    if (json && size > IMPORT_WHOLE_MAX)
      st = core_fail(err, CORE_EINPUT,
                     "%s: is %zu bytes; prereg imports JSON files and go "
                     "test output of at most %zu MiB",
                     m->file, size, IMPORT_WHOLE_MAX >> 20);
    else if (gojson)
      st = import_go_json(m, &s, err);
    else if (json)
      st = import_json(m, &s, format, err);
    else if (is_csv_header(s.buf, s.n)) {
      if (m->opts->n_where || m->opts->arm_map || m->opts->ignore_unmapped)
        st = core_fail(err, CORE_EUSAGE,
                       "%s: a CSV names each row's arm in its arm column; "
                       "--where, --arm-map and --ignore-unmapped are for "
                       "the files of other tools",
                       m->file);
      else
        st = import_csv(m, &s, err);
    } else
      st = import_text(m, &s, size, format, err);
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

/* A run's rows together: every reader of the frozen rows takes a run as
 * rows written one after the other (data_same_run), so a file that gives
 * one metric for every run and then the next would otherwise be read as
 * twice the runs, each missing a metric. The rows are regrouped by run
 * (workload, arm, run_id), runs in the order each first appears and a
 * run's rows in the file's order, values unchanged; seq follows. */
static size_t run_hash(const data_row *r) {
  const char *p[3] = {r->workload, r->arm, r->run_id};
  size_t h = 14695981039346656037u;
  for (int k = 0; k < 3; k++) {
    for (const unsigned char *c = (const unsigned char *)p[k]; *c; c++)
      h = (h ^ *c) * 1099511628211u;
    h = (h ^ 0xff) * 1099511628211u; /* between the fields */
  }
  return h;
}

static int same_run_key(const data_row *a, const data_row *b) {
  return !strcmp(a->workload, b->workload) && !strcmp(a->arm, b->arm) &&
         !strcmp(a->run_id, b->run_id);
}

/* Each row's run (0, 1, ... in order of first appearance) into group;
 * *n_groups the number of runs. */
static int number_runs(const data_rowset *rs, size_t *group,
                       size_t *n_groups) {
  size_t cap = 1, *slot;
  while (cap < 2 * rs->n)
    cap <<= 1;
  if (!(slot = core_calloc(cap, sizeof *slot))) /* a run's first row + 1 */
    return -1;
  *n_groups = 0;
  for (size_t i = 0; i < rs->n; i++) {
    size_t h = run_hash(&rs->rows[i]) & (cap - 1);
    while (slot[h] && !same_run_key(&rs->rows[slot[h] - 1], &rs->rows[i]))
      h = (h + 1) & (cap - 1);
    if (!slot[h]) {
      slot[h] = i + 1;
      group[i] = (*n_groups)++;
    } else {
      group[i] = group[slot[h] - 1];
    }
  }
  core_free(slot);
  return 0;
}

static core_status group_runs(imp *m, core_err *err) {
  data_rowset *rs = &m->rows;
  size_t n = rs->n, n_groups = 0;
  size_t *group = core_malloc(n * sizeof *group);
  size_t *start = core_calloc(n + 1, sizeof *start);
  data_row *out = core_malloc(n * sizeof *out);
  core_status st = CORE_OK;
  if (!group || !start || !out || number_runs(rs, group, &n_groups) != 0) {
    st = core_fail(err, CORE_ENOMEM, "%s: out of memory", m->file);
  } else {
    for (size_t i = 0; i < n; i++)
      start[group[i] + 1]++;
    for (size_t g = 0; g < n_groups; g++)
      start[g + 1] += start[g];
    for (size_t i = 0; i < n; i++)
      out[start[group[i]]++] = rs->rows[i];
    for (size_t i = 0; i < n; i++) {
      rs->rows[i] = out[i];
      rs->rows[i].seq = (long)i + 1;
    }
  }
  core_free(group);
  core_free(start);
  core_free(out);
  return st;
}

/* The batch facts: the file, and for go test output the configuration
 * of every run; the names --ignore-unmapped left out. The notes go into
 * them (m->notes is then NULL). */
static data_json *import_facts(imp *m, const char *format, const char *hex,
                               char **left, size_t n_left) {
  char now[32];
  data_json *facts = data_json_new_object(), *l;
  data_json *cfgs = data_names_configs_json(m->names);
  int bad = 0;
  core_utc_now(now);
  bad |= data_json_set(facts, "kind", data_json_new_text("import"));
  bad |= data_json_set(facts, "format", data_json_new_text(format));
  bad |= data_json_set(facts, "source", data_json_new_text(m->file));
  bad |= data_json_set(facts, "source_sha256", data_json_new_text(hex));
  bad |= data_json_set(facts, "imported_at", data_json_new_text(now));
  bad |= data_json_set(facts, "rows_imported",
                       data_json_new_integer((long long)m->rows.n));
  bad |= data_json_set(facts, "notes", m->notes);
  m->notes = NULL;
  if (bad || !cfgs) {
    data_json_free(facts);
    data_json_free(cfgs);
    return NULL;
  }
  if (data_json_size(cfgs))
    data_json_set(facts, "configurations", cfgs);
  else
    data_json_free(cfgs);
  if (m->opts->ignore_unmapped) {
    if (!(l = data_json_new_array()) || data_json_set(facts, "left_out", l)) {
      data_json_free(facts);
      return NULL;
    }
    for (size_t i = 0; i < n_left; i++)
      data_json_append(l, data_json_new_text(left[i]));
  }
  return facts;
}

void data_import_result_free(data_import_result *res) {
  if (!res)
    return;
  for (size_t i = 0; i < res->n_left_out; i++)
    core_free(res->left_out[i]);
  core_free(res->left_out);
  memset(res, 0, sizeof *res);
}

/* The rows checked: frozen as one batch, under the lock. */
static core_status import_freeze(imp *m, const char *format, const char *hex,
                                 data_import_result *res, core_err *err) {
  char *facts_text = NULL;
  data_json *facts;
  data_batch *b = NULL;
  core_status st;
  if ((st = data_names_left_out(m->names, &res->left_out, &res->n_left_out,
                                err)) != CORE_OK)
    return st;
  if (m->rows.n == 0)
    return core_fail(err, CORE_EINPUT, "%s: no rows to import%s", m->file,
                     res->n_left_out ? " (--ignore-unmapped left out every "
                                       "result)"
                                     : "");
  if ((st = one_value_each(m, err)) != CORE_OK ||
      (st = group_runs(m, err)) != CORE_OK ||
      (st = not_imported_before(m->exp, m->file, hex, err)) != CORE_OK)
    return st;
  /* Everything checked: only now does anything touch the data folder. */
  facts = import_facts(m, format, hex, res->left_out, res->n_left_out);
  if (!facts || !(facts_text = data_json_dump(facts, 0, DATA_FACTS_DIGITS))) {
    data_json_free(facts);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  data_json_free(facts);
  if ((st = data_batch_begin(m->exp, "import", &b, err)) == CORE_OK) {
    if ((st = data_batch_append(b, m->rows.rows, m->rows.n, err)) != CORE_OK)
      data_batch_abandon(b);
    else if ((st = data_batch_freeze(b, facts_text, err)) == CORE_OK)
      res->imported = m->rows.n;
  }
  core_free(facts_text);
  return st;
}

core_status data_import_with(data_experiment *exp, const proto_sheet *sheet,
                             const char *file, const data_import_opts *opts,
                             data_import_result *res, core_err *err) {
  imp m;
  char hex[CORE_SHA256_HEX];
  const char *format = formats[F_CSV].name;
  core_status st;
  memset(&m, 0, sizeof m);
  memset(res, 0, sizeof *res);
  m.exp = exp;
  m.sheet = sheet;
  m.file = file;
  m.opts = opts;
  m.cur_cfg = -1;
  /* The lock first: no data goes in under an unrecorded sheet. */
  if ((st = data_check_lock(exp, sheet, err)) != CORE_OK)
    return st;
  if ((st = data_names_check_flags(sheet, opts, err)) != CORE_OK)
    return st;
  if (!(m.notes = data_json_new_array()) || !(m.names = data_names_new()) ||
      !(m.rows.pool = data_strpool_new()))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK)
    st = import_source(&m, &format, hex, err);
  if (st == CORE_OK)
    st = import_freeze(&m, format, hex, res, err);
  data_json_free(m.notes);
  data_names_free(m.names);
  data_rowset_free(&m.rows);
  csv_runs_free(&m);
  return st;
}

core_status data_import_only(data_experiment *exp, const proto_sheet *sheet,
                             const char *file, const char *arm_map,
                             const char *only, size_t *imported,
                             core_err *err) {
  data_import_opts o = {
      .only = only, .arm_from = &arm_map, .n_arm_from = arm_map ? 1 : 0};
  data_import_result res;
  core_status st = data_import_with(exp, sheet, file, &o, &res, err);
  *imported = res.imported;
  data_import_result_free(&res);
  return st;
}
