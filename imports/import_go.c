/* import_go.c: the output of `go test -bench`, the text format benchstat
 * reads (golang.org/x/perf/benchfmt): "key: value" configuration lines,
 * then one line per run, "BenchmarkName-P  N  VALUE UNIT  VALUE UNIT ...".
 * Each Benchmark line is a run of the arm its name maps to (-count=K gives
 * K runs); other lines (PASS, ok, a test's output) are skipped, as
 * benchstat skips them.
 * SPDX-License-Identifier: MIT
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "imports/imports_internal.h"

/* Fields of one benchmark line, the size of the arrays that split it
 * (a longer line is refused naming this number): not a cap kept in
 * core/limits.h, since the parser's storage is sized by it. */
#define MAX_FIELDS 64

/* Lines */

/* Go's rule: "Benchmark" then the end or a character that is not a
 * lower-case letter (Benchmarks, Benchmarking are not benchmarks). */
static int bench_line(const char *l) {
  return !strncmp(l, "Benchmark", 9) && !islower((unsigned char)l[9]);
}

/* benchfmt's configuration line: "key:" then blanks and a value (or
 * nothing), the key starting with a lower-case letter and holding no
 * blank or upper-case letter (goos, goarch, pkg, cpu, note, or the
 * user's own). OUT: *klen the key's length, *value its value. */
static int config_kv(const char *l, size_t *klen, const char **value) {
  const char *p = l;
  if (!islower((unsigned char)*p))
    return 0;
  while (*p && *p != ':' && !isspace((unsigned char)*p) &&
         !isupper((unsigned char)*p))
    p++;
  if (p[0] != ':' || (p[1] && p[1] != ' ' && p[1] != '\t'))
    return 0;
  *klen = (size_t)(p - l);
  for (p++; *p == ' ' || *p == '\t';)
    p++;
  *value = p;
  return 1;
}

static int config_line(const char *l) {
  size_t k;
  const char *v;
  return config_kv(l, &k, &v);
}

/* A result line: a Benchmark name, an iteration count, a value. */
static int result_line(const char *l) {
  const char *p = l;
  if (!bench_line(l))
    return 0;
  while (*p && !isspace((unsigned char)*p))
    p++;
  while (*p == ' ' || *p == '\t')
    p++;
  if (!isdigit((unsigned char)*p))
    return 0;
  while (isdigit((unsigned char)*p))
    p++;
  return *p == ' ' || *p == '\t';
}

int data_is_go_bench(const char *text, size_t len) {
  char l[512];
  for (const char *p = text, *end = text + len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    snprintf(l, sizeof l, "%.*s", (int)(n < sizeof l - 1 ? n : sizeof l - 1),
             p);
    if (result_line(l) || config_line(l))
      return 1;
    p = nl ? nl + 1 : end;
  }
  return 0;
}

/* Splits l in place on blanks. Returns the number of fields (at most
 * MAX_FIELDS; more give MAX_FIELDS + 1). */
static size_t split(char *l, char *f[MAX_FIELDS]) {
  size_t n = 0;
  for (char *p = l; *p;) {
    while (*p == ' ' || *p == '\t')
      *p++ = '\0';
    if (!*p)
      break;
    if (n == MAX_FIELDS)
      return n + 1;
    f[n++] = p;
    while (*p && *p != ' ' && *p != '\t')
      p++;
  }
  return n;
}

/* Units and metrics */

/* The metric a unit gives and the factor to it: time per operation is
 * wall_s (seconds per operation: a NULL metric below); B/op, allocs/op
 * and MB/s are bytes_per_op, allocs_per_op and mb_per_s; any other unit
 * is named from its text (lower case, "/" read "_per_", other characters
 * "_"). */
static void unit_metric(const char *unit, char *metric, size_t cap,
                        double *factor) {
  static const struct {
    const char *unit, *metric;
    double factor;
  } known[] = {{"ns/op", NULL, 1e-9},
               {"us/op", NULL, 1e-6},
               {"\xC2\xB5s/op", NULL, 1e-6},
               {"ms/op", NULL, 1e-3},
               {"s/op", NULL, 1},
               {"sec/op", NULL, 1},
               {"B/op", "bytes_per_op", 1},
               {"allocs/op", "allocs_per_op", 1},
               {"MB/s", "mb_per_s", 1}};
  size_t n = 0;
  *factor = 1;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(unit, known[i].unit)) {
      snprintf(metric, cap, "%s",
               known[i].metric ? known[i].metric
                               : proto_measure_name(PROTO_MEASURE_WALL));
      *factor = known[i].factor;
      return;
    }
  if (!islower((unsigned char)tolower((unsigned char)unit[0])))
    n += (size_t)snprintf(metric, cap, "m_");
  for (const char *p = unit; *p && n + 6 < cap; p++) {
    int c = tolower((unsigned char)*p);
    if (c == '/')
      n += (size_t)snprintf(metric + n, cap - n, "_per_");
    else
      metric[n++] = (char)(islower(c) || isdigit(c) ? c : '_');
  }
  metric[n] = '\0';
}

/* The metrics and values of one Benchmark line. */
typedef struct go_run {
  char metric[MAX_FIELDS / 2][80];
  const char *unit[MAX_FIELDS / 2];
  double value[MAX_FIELDS / 2];
  size_t n;
} go_run;

/* Reads the VALUE UNIT pairs f[0..n-1] of a line into r. */
static core_status read_pairs(const char *where, char **f, size_t n, go_run *r,
                              core_err *err) {
  if (n == 0)
    return core_fail(err, CORE_EINPUT,
                     "%s: no value after the iteration count", where);
  if (n % 2)
    return core_fail(err, CORE_EINPUT,
                     "%s: '%s' has no unit (values come in pairs, VALUE "
                     "UNIT)",
                     where, f[n - 1]);
  r->n = 0;
  for (size_t k = 0; k < n; k += 2) {
    double factor, v;
    /* Read as a metrics file's value is: decimal, in range (no hex
     * float, nothing that would be stored as 0). */
    const char *why = core_parse_decimal(f[k], &v);
    if (why)
      return core_fail(err, CORE_EINPUT,
                       "%s: '%s %s': '%s' is not a finite number (%s)", where,
                       f[k], f[k + 1], f[k], why);
    if (v < 0)
      return core_fail(err, CORE_EINPUT,
                       "%s: '%s %s' is negative (times, sizes and rates "
                       "never are)",
                       where, f[k], f[k + 1]);
    unit_metric(f[k + 1], r->metric[r->n], sizeof r->metric[0], &factor);
    for (size_t j = 0; j < r->n; j++)
      if (!strcmp(r->metric[j], r->metric[r->n]))
        return core_fail(err, CORE_EINPUT, "%s: two values for %s (%s and %s)",
                         where, r->metric[j], r->unit[j], f[k + 1]);
    r->unit[r->n] = f[k + 1];
    r->value[r->n++] = v * factor;
  }
  return CORE_OK;
}

/* Configurations */

/* The `key: value` lines in effect, sorted by key, and the text of the
 * configuration they make (built again after a change). */
typedef struct go_config {
  char *key[IMPORT_CONFIG_KEYS_MAX], *value[IMPORT_CONFIG_KEYS_MAX];
  size_t n;
  int dirty;
  long cfg;       /* its index (data_import_config), -1 before one */
  char procs[24]; /* the -P suffix of the last result, "" when none */
  size_t built;   /* bytes of configuration text built so far */
} go_config;

static void config_free(go_config *c) {
  for (size_t i = 0; i < c->n; i++) {
    core_free(c->key[i]);
    core_free(c->value[i]);
  }
  c->n = 0;
}

/* strcmp of key and the klen bytes at k. */
static int keycmp(const char *key, const char *k, size_t klen) {
  int c = strncmp(key, k, klen);
  return c ? c : key[klen] ? 1 : 0;
}

/* Sets key (klen bytes) to value, or deletes it when value is empty (as
 * benchfmt does). */
static core_status config_set(go_config *c, const char *where, const char *k,
                              size_t klen, const char *value, core_err *err) {
  size_t i = 0;
  int cmp = 1;
  while (i < c->n && (cmp = keycmp(c->key[i], k, klen)) < 0)
    i++;
  if (cmp == 0) {
    if (!value[0] || strcmp(c->value[i], value) != 0)
      c->dirty = 1;
    core_free(c->value[i]);
    if (!value[0]) {
      core_free(c->key[i]);
      memmove(c->key + i, c->key + i + 1, (c->n - i - 1) * sizeof *c->key);
      memmove(c->value + i, c->value + i + 1,
              (c->n - i - 1) * sizeof *c->value);
      c->n--;
      return CORE_OK;
    }
    return (c->value[i] = core_strdup(value))
               ? CORE_OK
               : core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if (!value[0])
    return CORE_OK;
  if (c->n == IMPORT_CONFIG_KEYS_MAX)
    return core_fail(err, CORE_EINPUT,
                     "%s: more than %d configuration keys in effect at once",
                     where, IMPORT_CONFIG_KEYS_MAX);
  memmove(c->key + i + 1, c->key + i, (c->n - i) * sizeof *c->key);
  memmove(c->value + i + 1, c->value + i, (c->n - i) * sizeof *c->value);
  c->n++;
  c->key[i] = core_strndup(k, klen);
  c->value[i] = core_strdup(value);
  c->dirty = 1;
  if (!c->key[i] || !c->value[i])
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return CORE_OK;
}

/* The configuration of a result with -P suffix procs: the lines in
 * effect, and gomaxprocs from the suffix (results at two -cpu values are
 * two results). */
static core_status config_now(data_import *m, go_config *c, const char *where,
                              const char *procs, core_err *err) {
  core_buf b;
  core_status st;
  int gm = 0;
  if (!c->dirty && c->cfg >= 0 && !strcmp(c->procs, procs))
    return CORE_OK;
  snprintf(c->procs, sizeof c->procs, "%s", procs);
  core_buf_init(&b);
  for (size_t i = 0; i <= c->n; i++) {
    /* gomaxprocs in its sorted place, unless a line sets it */
    if (!gm && procs[0] &&
        (i == c->n || strcmp(c->key[i], "gomaxprocs") >= 0)) {
      gm = 1;
      if (i == c->n || strcmp(c->key[i], "gomaxprocs") != 0)
        core_buf_printf(&b, "gomaxprocs: %s\n", procs);
    }
    if (i < c->n)
      core_buf_printf(&b, "%s: %s\n", c->key[i], c->value[i]);
  }
  c->built += b.len;
  if (b.oom)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else if (c->built > IMPORT_CONFIG_BYTES_MAX)
    st = core_fail(err, CORE_EINPUT,
                   "%s: the configuration changes more often than prereg "
                   "follows (%zu MiB of configuration text)",
                   where, IMPORT_CONFIG_BYTES_MAX >> 20);
  else
    st = data_import_config(m, b.data ? b.data : "", &c->cfg, err);
  c->dirty = 0;
  core_buf_free(&b);
  return st;
}

/* Benchmark lines */

/* The benchmark's name without its -GOMAXPROCS suffix, in place; OUT:
 * *short_name, the name without "Benchmark" (as benchstat shows it),
 * procs the suffix's digits ("" when none). */
static void bench_name(char *name, const char **short_name, char procs[24]) {
  char *dash = strrchr(name, '-');
  procs[0] = '\0';
  if (dash && dash[1]) {
    char *p = dash + 1;
    while (isdigit((unsigned char)*p))
      p++;
    if (!*p && p - dash - 1 < 20) {
      snprintf(procs, 24, "%s", dash + 1);
      *dash = '\0';
    }
  }
  *short_name = name[9] ? name + 9 : name;
}

/* The rows of one result line r of arm a. */
static core_status line_rows(data_import *m, const char *where,
                             const char *bench, const go_run *r,
                             const proto_workload *w, const char *arm,
                             const char *run_id, long round, core_err *err) {
  for (size_t k = 0; k < w->n_metrics; k++) {
    size_t j = 0;
    core_status st;
    while (j < r->n && strcmp(r->metric[j], w->metrics[k]) != 0)
      j++;
    if (j == r->n)
      return core_fail(err, CORE_EINPUT,
                       "%s: %s reports no value for the metric %s (wall_s "
                       "is ns/op or another time per op, bytes_per_op B/op, "
                       "allocs_per_op allocs/op, mb_per_s MB/s)",
                       where, bench, w->metrics[k]);
    if ((st = data_import_row(m, where, w->name, arm, w->metrics[k], run_id,
                              round, 1, "", r->value[j], 1, err)) != CORE_OK)
      return st;
  }
  return CORE_OK;
}

/* One Benchmark line (l, a copy the function may cut up) at line (the
 * file's line file_line): a run of the arm its name maps to, round the
 * arm's count so far. A name alone on its line (what -v prints before
 * the result) is skipped, as benchstat skips it. */
static core_status one_line(data_import *m, char *l, long line, long file_line,
                            const proto_workload *w, go_config *c, long *seen,
                            core_err *err) {
  const proto_sheet *s = data_import_sheet(m);
  char where[600], run_id[64], *f[MAX_FIELDS], *end, procs[24];
  const char *short_name;
  size_t n = split(l, f);
  go_run r;
  long a, iters;
  core_status st;
  snprintf(where, sizeof where, "%s:%ld", data_import_file(m), file_line);
  if (n == 1)
    return CORE_OK;
  if (n > MAX_FIELDS)
    return core_fail(err, CORE_EINPUT, "%s: more than %d fields", where,
                     MAX_FIELDS);
  errno = 0;
  iters = n > 1 ? strtol(f[1], &end, 10) : 0;
  if (n < 2 || end == f[1] || *end || errno || iters < 1)
    return core_fail(err, CORE_EINPUT,
                     "%s: %s: '%s' is not an iteration count (a positive "
                     "integer after the benchmark's name)",
                     where, f[0], n > 1 ? f[1] : "");
  if ((st = read_pairs(where, f + 2, n - 2, &r, err)) != CORE_OK)
    return st;
  bench_name(f[0], &short_name, procs);
  if ((st = config_now(m, c, where, procs, err)) != CORE_OK)
    return st;
  a = data_import_arm(m, f[0], short_name, c->cfg, file_line, err);
  if (a == -2)
    return err ? err->status : CORE_EUSAGE;
  if (a == -3)
    return CORE_OK;
  if (a < 0)
    return data_import_no_arm(m, where, short_name, err);
  snprintf(run_id, sizeof run_id, "go%ld", file_line);
  seen[a]++;
  (void)line;
  return line_rows(m, where, f[0], &r, w, s->arms[a].name, run_id, seen[a],
                   err);
}

/* One line of the output at line (file_line in the file): a result, a
 * configuration line, a failure, or anything else (skipped). */
static core_status go_line(data_import *m, char *l, long line, long file_line,
                           const proto_workload *w, go_config *c, long *seen,
                           size_t *results, core_err *err) {
  const char *file = data_import_file(m), *v;
  size_t klen;
  char where[600];
  snprintf(where, sizeof where, "%s:%ld", file, file_line);
  if (core_utf8_invalid(l, strlen(l)) < strlen(l))
    return core_fail(err, CORE_EINPUT,
                     "%s: not UTF-8; go test output is UTF-8 text", where);
  if (!strncmp(l, "--- FAIL: Benchmark", 19))
    return core_fail(err, CORE_EINPUT,
                     "%s: a benchmark failed (%.300s); its numbers are not "
                     "measurements to import",
                     where, l);
  if (config_kv(l, &klen, &v))
    return config_set(c, where, l, klen, v, err);
  if (!bench_line(l))
    return CORE_OK;
  *results += result_line(l) || strchr(l, '\t') || strchr(l, ' ');
  return one_line(m, l, line, file_line, w, c, seen, err);
}

core_status data_import_go(data_import *m, const char *text, size_t len,
                           const long *line_of, const char *only,
                           core_err *err) {
  const proto_sheet *s = data_import_sheet(m);
  const char *file = data_import_file(m), *p = text, *end = text + len;
  long wi, line = 0, *seen;
  size_t runs = 0;
  go_config *c;
  core_status st;
  if ((st = data_import_workload(m, only, "go test -bench results", &wi,
                                 err)) != CORE_OK)
    return st;
  seen = core_calloc(s->n_arms ? s->n_arms : 1, sizeof *seen);
  c = core_calloc(1, sizeof *c);
  if (!seen || !c) {
    core_free(seen);
    core_free(c);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  c->cfg = -1;
  while (p < end && st == CORE_OK) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    long fl;
    char *l;
    line++;
    fl = line_of ? line_of[line - 1] : line;
    if (memchr(p, '\0', n)) {
      st = core_fail(err, CORE_EINPUT,
                     "%s:%ld: contains a NUL byte; is this go test -bench "
                     "output?",
                     file, fl);
      break;
    }
    if (n && p[n - 1] == '\r')
      n--;
    if (!(l = core_strndup(p, n))) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      break;
    }
    p = nl ? nl + 1 : end;
    st = go_line(m, l, line, fl, &s->workloads[wi], c, seen, &runs, err);
    core_free(l);
  }
  config_free(c);
  core_free(c);
  core_free(seen);
  if (st == CORE_OK && runs == 0)
    st = core_fail(err, CORE_EINPUT,
                   "%s: no Benchmark lines (go test -run '^$' -bench . "
                   "-count 10 prints them)",
                   file);
  return st;
}
