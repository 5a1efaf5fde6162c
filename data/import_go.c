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

#include "data/data_internal.h"

#define MAX_FIELDS 64

/* Lines */

/* Go's rule: "Benchmark" then the end or a character that is not a
 * lower-case letter (Benchmarks, Benchmarking are not benchmarks). */
static int bench_line(const char *l) {
  return !strncmp(l, "Benchmark", 9) && !islower((unsigned char)l[9]);
}

/* "key: value" with a key of non-blank characters that starts with a
 * lower-case letter (goos, goarch, pkg, cpu, or the user's own). */
static int config_line(const char *l) {
  const char *p = l;
  if (!islower((unsigned char)*p))
    return 0;
  while (*p && *p != ':' && *p != ' ' && *p != '\t')
    p++;
  return p[0] == ':' && (p[1] == ' ' || p[1] == '\0');
}

int data_is_go_bench(const char *text, size_t len) {
  char first[256];
  size_t n = 0;
  while (n < len && n < sizeof first - 1 && text[n] != '\n' && text[n] != '\r')
    n++;
  memcpy(first, text, n);
  first[n] = '\0';
  return bench_line(first) || config_line(first);
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
 * wall_s (seconds per operation); B/op, allocs/op and MB/s are
 * bytes_per_op, allocs_per_op and mb_per_s; any other unit is named from
 * its text (lower case, "/" read "_per_", other characters "_"). */
static void unit_metric(const char *unit, char *metric, size_t cap,
                        double *factor) {
  static const struct {
    const char *unit, *metric;
    double factor;
  } known[] = {{"ns/op", "wall_s", 1e-9},
               {"us/op", "wall_s", 1e-6},
               {"\xC2\xB5s/op", "wall_s", 1e-6},
               {"ms/op", "wall_s", 1e-3},
               {"s/op", "wall_s", 1},
               {"sec/op", "wall_s", 1},
               {"B/op", "bytes_per_op", 1},
               {"allocs/op", "allocs_per_op", 1},
               {"MB/s", "mb_per_s", 1}};
  size_t n = 0;
  *factor = 1;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(unit, known[i].unit)) {
      snprintf(metric, cap, "%s", known[i].metric);
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

/* Benchmark lines */

/* The benchmark's name without its -GOMAXPROCS suffix, in place; OUT:
 * *short_name, the name without "Benchmark" (as benchstat shows it). */
static void bench_name(char *name, const char **short_name) {
  char *dash = strrchr(name, '-');
  if (dash && dash[1]) {
    char *p = dash + 1;
    while (isdigit((unsigned char)*p))
      p++;
    if (!*p)
      *dash = '\0';
  }
  *short_name = name[9] ? name + 9 : name;
}

/* One Benchmark line (l, a copy the function may cut up) at line: a run
 * of the arm its name maps to, round the arm's count so far. */
static core_status one_line(data_import *m, char *l, long line,
                            const proto_workload *w, const char *arm_map,
                            long *seen, core_err *err) {
  const proto_sheet *s = data_import_sheet(m);
  char where[600], run_id[64], *f[MAX_FIELDS], *end;
  const char *short_name;
  size_t n = split(l, f);
  go_run r;
  long a, iters;
  core_status st;
  snprintf(where, sizeof where, "%s:%ld", data_import_file(m), line);
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
  bench_name(f[0], &short_name);
  if ((a = data_import_arm(m, arm_map, f[0], err)) == -1)
    a = data_import_arm(m, arm_map, short_name, err);
  if (a == -2)
    return err ? err->status : CORE_EUSAGE;
  if (a < 0)
    return data_import_no_arm(m, where, short_name, err);
  snprintf(run_id, sizeof run_id, "go%ld", line);
  seen[a]++;
  for (size_t k = 0; k < w->n_metrics; k++) {
    size_t j = 0;
    while (j < r.n && strcmp(r.metric[j], w->metrics[k]) != 0)
      j++;
    if (j == r.n)
      return core_fail(err, CORE_EINPUT,
                       "%s: %s reports no value for the metric %s (wall_s "
                       "is ns/op or another time per op, bytes_per_op B/op, "
                       "allocs_per_op allocs/op, mb_per_s MB/s)",
                       where, f[0], w->metrics[k]);
    if ((st = data_import_row(m, where, w->name, s->arms[a].name,
                              w->metrics[k], run_id, seen[a], 1, "",
                              r.value[j], 1, err)) != CORE_OK)
      return st;
  }
  return CORE_OK;
}

core_status data_import_go(data_import *m, const char *text, size_t len,
                           const char *only, const char *arm_map,
                           core_err *err) {
  const proto_sheet *s = data_import_sheet(m);
  const char *file = data_import_file(m), *p = text, *end = text + len;
  long wi, line = 0, *seen;
  size_t runs = 0;
  core_status st;
  if ((st = data_import_workload(m, only, "go test -bench results", &wi,
                                 err)) != CORE_OK)
    return st;
  if (!(seen = core_calloc(s->n_arms ? s->n_arms : 1, sizeof *seen)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  while (p < end && st == CORE_OK) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    char *l;
    line++;
    if (memchr(p, '\0', n)) {
      st = core_fail(err, CORE_EINPUT,
                     "%s:%ld: contains a NUL byte; is this go test -bench "
                     "output?",
                     file, line);
      break;
    }
    if (n && p[n - 1] == '\r')
      n--;
    if (!(l = core_strndup(p, n))) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      break;
    }
    p = nl ? nl + 1 : end;
    if (!strncmp(l, "--- FAIL: Benchmark", 19))
      st = core_fail(err, CORE_EINPUT,
                     "%s:%ld: a benchmark failed (%s); its numbers are not "
                     "measurements to import",
                     file, line, l);
    else if (bench_line(l) && (st = one_line(m, l, line, &s->workloads[wi],
                                             arm_map, seen, err)) == CORE_OK)
      runs++;
    core_free(l);
  }
  core_free(seen);
  if (st == CORE_OK && runs == 0)
    st = core_fail(err, CORE_EINPUT,
                   "%s: no Benchmark lines (go test -run '^$' -bench . "
                   "-count 10 prints them)",
                   file);
  return st;
}
