/* import.c: `prereg import`: measurements taken elsewhere (the CSV of the
 * contract, section 3, or hyperfine --export-json) become one frozen batch
 * of kind "import". The whole file is checked before anything is written.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* {==== Shared checks ==== */

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

/* "0", or "0;1;0" for the steps of one run. */
static int exit_code_ok(const char *s) {
  while (*s) {
    char *end;
    errno = 0;
    (void)strtol(s, &end, 10);
    if (end == s || errno)
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
    char *end;
    long v = strtol(p, &end, 10);
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
  data_row r;
  memset(&r, 0, sizeof r);
  r.sheet_version = v->number;
  r.round = round;
  r.seq = ++m->seq;
  r.valid = valid;
  r.value = has_value ? value : NAN;
  r.has_value = has_value;
  r.sheet_sha256 = core_strdup(v->sha256);
  r.batch = core_strdup("");
  r.source = core_strdup("import");
  r.workload = core_strdup(workload);
  r.arm = core_strdup(arm);
  r.run_id = core_strdup(run_id);
  r.started_at = core_strdup(started_at);
  r.host = core_strdup("");
  r.image_digest = core_strdup("");
  r.cache_policy = core_strdup("");
  r.cache_state = core_strdup("");
  r.exit_code = core_strdup(exit_code);
  r.reason = core_strdup(reason);
  r.metric = core_strdup(metric);
  if (!r.sheet_sha256 || !r.batch || !r.source || !r.workload || !r.arm ||
      !r.run_id || !r.started_at || !r.host || !r.image_digest ||
      !r.cache_policy || !r.cache_state || !r.exit_code || !r.reason ||
      !r.metric) {
    data_row_clear(&r);
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", m->file);
  }
  return data_rowset_push(&m->rows, &r, err);
}

/* }==== */

/* {==== CSV ==== */

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

static core_status on_csv(void *vctx, char **f, size_t n, long line,
                          core_err *err) {
  imp *m = vctx;
  char where[600], run_id[64], why[128];
  const char *wname, *arm, *metric, *value, *run, *code, *valid_s, *note;
  const proto_workload *w;
  long wi, round = 0;
  int valid = 1, has_value = 0;
  double v = NAN;
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
  wname = field(m, f, C_WORKLOAD);
  arm = field(m, f, C_ARM);
  metric = field(m, f, C_METRIC);
  value = field(m, f, C_VALUE);
  run = field(m, f, C_RUN);
  code = field(m, f, C_EXIT);
  valid_s = field(m, f, C_VALID);
  note = field(m, f, C_NOTE);
  if ((wi = proto_workload_index(m->sheet, wname)) < 0)
    return undeclared(m, err, where, "workload", wname, 0);
  w = &m->sheet->workloads[wi];
  if (proto_arm_index(m->sheet, arm) < 0)
    return undeclared(m, err, where, "arm", arm, 1);
  if (!proto_workload_has_metric(w, metric))
    return undeclared_metric(m, err, where, w, metric);
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
    char *end;
    v = strtod(value, &end);
    if (*end || end == value || !isfinite(v))
      return core_fail(err, CORE_EINPUT,
                       "%s: value '%s' is not a finite number", where, value);
    has_value = 1;
  } else if (valid) {
    return core_fail(err, CORE_EINPUT,
                     "%s: value is empty; only an invalid row (valid=false) "
                     "may lack a value",
                     where);
  }
  {
    /* A started_at must at least look like a date: it orders runs. */
    const char *s = field(m, f, C_STARTED);
    if (s[0] && !(strlen(s) >= 10 && s[4] == '-' && s[7] == '-'))
      return core_fail(err, CORE_EINPUT,
                       "%s: started_at '%s' is not an ISO 8601 time like "
                       "2026-10-21T09:30:00Z",
                       where, s);
  }
  if (run[0]) {
    char *end;
    long r = strtol(run, &end, 10);
    if (!*end && r > 0)
      round = r;
    snprintf(run_id, sizeof run_id, "%.60s", run);
  } else {
    /* Without a run column each line is a run of its own. */
    snprintf(run_id, sizeof run_id, "line-%ld", line);
  }
  if (!valid && !note[0] && !why[0])
    snprintf(why, sizeof why, "marked invalid in %s", m->file);
  if (valid && note[0])
    json_array_append_new(m->notes, json_pack("{s:I,s:s}", "line",
                                              (json_int_t)line, "note", note));
  return make_row(m, wname, arm, metric, run_id, round, field(m, f, C_STARTED),
                  code, valid, valid ? "" : (note[0] ? note : why), v,
                  has_value, err);
}

static core_status import_csv(imp *m, const char *text, size_t len,
                              core_err *err) {
  csvscan_result res;
  core_status st;
  const char *nul = memchr(text, '\0', len);
  if (nul) {
    /* A text CSV never holds one; binary data would otherwise be cut at
     * it by every C string below. */
    long line = 1;
    for (const char *p = text; p < nul; p++)
      line += *p == '\n';
    return core_fail(err, CORE_EINPUT,
                     "%s:%ld: contains a NUL byte; is this a text CSV? "
                     "Export it from the spreadsheet as CSV (UTF-8)",
                     m->file, line);
  }
  if ((st = data_csv_scan(m->file, text, len, on_csv, m, &res, err)) !=
      CORE_OK)
    return st;
  if (res.torn) {
    /* A last line without its newline is common in hand-made files; an
     * open quote is not. */
    if (len > 0 && text[len - 1] != '\n') {
      /* memcpy, not a string function: the length is the file's. */
      char *copy = core_malloc(len + 2);
      if (!copy)
        return core_fail(err, CORE_ENOMEM, "out of memory");
      memcpy(copy, text, len);
      copy[len] = '\n';
      copy[len + 1] = '\0';
      data_rowset_free(&m->rows);
      m->header_seen = 0;
      m->seq = 0;
      json_array_clear(m->notes);
      st = data_csv_scan(m->file, copy, len + 1, on_csv, m, &res, err);
      core_free(copy);
      if (st != CORE_OK)
        return st;
    }
    if (res.torn)
      return core_fail(err, CORE_EINPUT, "%s:%ld: unterminated quoted field",
                       m->file, res.torn_line);
  }
  if (!m->header_seen)
    return core_fail(err, CORE_EINPUT,
                     "%s: empty file; the first line must "
                     "be a header (workload,arm,metric,value)",
                     m->file);
  return CORE_OK;
}

/* }==== */

/* {==== hyperfine --export-json ==== */

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
    if (!proto_workload_runs_itself(&m->sheet->workloads[i])) {
      found = (long)i;
      count++;
    }
  if (count != 1)
    return core_fail(err, CORE_EUSAGE,
                     "%s: hyperfine results name no workload and %s has %s "
                     "import-only workload (one without cmd); say which "
                     "with --only WORKLOAD",
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
        if (!json_is_integer(c))
          return core_fail(err, CORE_EINPUT,
                           "%s: results[%zu].exit_codes[%zu]: not an "
                           "integer",
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

/* }==== */

/* {==== For the readers of other formats ==== */

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
  long wi = proto_workload_index(m->sheet, workload);
  if (wi < 0)
    return undeclared(m, err, where, "workload", workload, 0);
  if (proto_arm_index(m->sheet, arm) < 0)
    return undeclared(m, err, where, "arm", arm, 1);
  if (!proto_workload_has_metric(&m->sheet->workloads[wi], metric))
    return undeclared_metric(m, err, where, &m->sheet->workloads[wi], metric);
  if (has_value && !isfinite(value))
    return core_fail(err, CORE_EINPUT, "%s: %s: not a finite number", where,
                     metric);
  if (!valid && (!reason || !reason[0]))
    reason = "marked invalid by the tool";
  return make_row(m, workload, arm, metric, run_id, round, "", "", valid,
                  valid ? "" : reason, value, has_value, err);
}

/* }==== */

core_status data_import_only(data_experiment *exp, const proto_sheet *sheet,
                             const char *file, const char *arm_map,
                             const char *only, size_t *imported,
                             core_err *err) {
  imp m;
  char *text = NULL, *facts_text = NULL;
  size_t len = 0, k = 0;
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
  if ((st = core_read_file(file, &text, &len, err)) != CORE_OK) {
    /* A file that cannot be read is bad input: exit 2, nothing written. */
    if (st == CORE_EIO) {
      st = CORE_EINPUT;
      if (err)
        err->status = st;
    }
    goto cleanup;
  }
  while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' ||
                     text[k] == '\r'))
    k++;
  if (k < len && text[k] == '{') {
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    format = "hyperfine";
    if (!root) {
      st = core_fail(err, CORE_EINPUT, "%s:%d: not valid JSON: %s", file,
                     je.line, je.text);
      goto cleanup;
    }
    if (json_is_object(root) && json_object_get(root, "benchmarks")) {
      format = "gbench";
      st = data_import_gbench(&m, root, only, arm_map, err);
    } else if (!json_is_object(root) || !json_object_get(root, "results"))
      st = core_fail(err, CORE_EINPUT,
                     "%s: a JSON object without \"results\" (hyperfine "
                     "--export-json) or \"benchmarks\" (Google Benchmark "
                     "--benchmark_format=json); prereg imports those, CSV "
                     "and go test -bench output",
                     file);
    else
      st = import_hyperfine(&m, root, only, arm_map, err);
    json_decref(root);
  } else if (data_is_go_bench(text + k, len - k)) {
    format = "go";
    st = data_import_go(&m, text, len, only, arm_map, err);
  } else {
    st = import_csv(&m, text, len, err);
  }
  if (st != CORE_OK)
    goto cleanup;
  if (m.rows.n == 0) {
    st = core_fail(err, CORE_EINPUT, "%s: no rows to import", file);
    goto cleanup;
  }
  /* Everything checked: only now does anything touch the data folder. */
  core_sha256_hex(text, len, hex);
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
  core_free(text);
  return st;
}
