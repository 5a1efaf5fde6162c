/* import_gbench.c: Google Benchmark's --benchmark_format=json (also
 * --benchmark_out_format=json), of every schema since 2016: each
 * repetition of a benchmark is a run of the arm its name maps to;
 * aggregates (mean, median, stddev, cv, and the complexity fits) are
 * statistics of those runs and are not imported. They are known by
 * run_type "aggregate" (2019 on), by aggregate_name, and in older files by
 * the suffix (_mean, _median, _stddev, _cv, _BigO, _RMS) of a name whose
 * base is also in the file.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "imports/imports_internal.h"

/* Seconds per time_unit, or 0 for a unit Google Benchmark does not use. */
static double unit_seconds(const char *u) {
  static const struct {
    const char *name;
    double s;
  } units[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (!strcmp(u, units[i].name))
      return units[i].s;
  return 0;
}

/* An entry's number field, which must be finite and not negative. OUT:
 * *v. Returns 1 when present, 0 when absent; CORE_EINPUT in *st. */
static int number(const data_import *m, data_json *b, size_t i, const char *bn,
                  const char *key, double *v, core_status *st, core_err *err) {
  data_json *x = data_json_get(b, key);
  if (!x)
    return 0;
  if (!data_json_is(x, DATA_JSON_NUMBER) ||
      !isfinite(*v = data_json_number(x)) || *v < 0) {
    *st = core_fail(err, CORE_EINPUT,
                    "%s: benchmarks[%zu] (%s): %s is not a number >= 0 "
                    "(times, rates and counts are never negative)",
                    data_import_file(m), i, bn, key);
    return 0;
  }
  return 1;
}

/* The value of metric for entry b: wall_s from real_time, cpu_s from
 * cpu_time (both in time_unit), any other metric from the field (a user
 * counter, bytes_per_second, items_per_second) of the same name. */
static core_status metric_value(const data_import *m, data_json *b, size_t i,
                                const char *bn, double per_s,
                                const char *metric, double *v, core_err *err) {
  int wall = !strcmp(metric, proto_measure_name(PROTO_MEASURE_WALL));
  int is_time = wall || !strcmp(metric, "cpu_s");
  const char *key = wall                       ? "real_time"
                    : !strcmp(metric, "cpu_s") ? "cpu_time"
                                               : metric;
  core_status st = CORE_OK;
  if (!number(m, b, i, bn, key, v, &st, err))
    return st != CORE_OK
               ? st
               : core_fail(err, CORE_EINPUT,
                           "%s: benchmarks[%zu] (%s): no %s for the metric "
                           "%s (wall_s is real_time, cpu_s is cpu_time, "
                           "any other metric a counter of its name)",
                           data_import_file(m), i, bn, key, metric);
  if (is_time)
    *v *= per_s;
  return CORE_OK;
}

/* Checks entry i, a repetition of benchmark bn, and adds its rows: one
 * per metric of w, as run "gbI" of arm in round. */
static core_status one_run(data_import *m, data_json *b, size_t i,
                           const char *bn, const proto_workload *w,
                           const char *arm, long round, core_err *err) {
  const char *file = data_import_file(m);
  data_json *u = data_json_get(b, "time_unit");
  data_json *it = data_json_get(b, "iterations");
  data_json *failed = data_json_get(b, "error_occurred");
  data_json *skipped = data_json_get(b, "skipped");
  char where[600], run_id[64];
  double per_s;
  snprintf(where, sizeof where, "%s: benchmarks[%zu] (%s)", file, i, bn);
  if (!data_json_is(u, DATA_JSON_STRING))
    return core_fail(err, CORE_EINPUT, "%s: no time_unit", where);
  if ((per_s = unit_seconds(data_json_text(u))) == 0)
    return core_fail(err, CORE_EINPUT,
                     "%s: time_unit '%s' is not one of ns, us, ms, s", where,
                     data_json_text(u));
  snprintf(run_id, sizeof run_id, "gb%zu", i + 1);
  if (data_json_is(failed, DATA_JSON_TRUE) ||
      data_json_is(skipped, DATA_JSON_TRUE)) {
    /* A skipped or failed benchmark measured nothing: its run is kept as
     * invalid, with the library's reason, never its zero times. */
    data_json *why = data_json_get(b, "error_message");
    char reason[300];
    if (!data_json_is(why, DATA_JSON_STRING))
      why = data_json_get(b, "skip_message");
    snprintf(reason, sizeof reason, "Google Benchmark: %s%s",
             data_json_is(failed, DATA_JSON_TRUE) ? "" : "skipped: ",
             data_json_is(why, DATA_JSON_STRING)    ? data_json_text(why)
             : data_json_is(failed, DATA_JSON_TRUE) ? "error"
                                                    : "no message");
    for (size_t k = 0; k < w->n_metrics; k++) {
      core_status st = data_import_row(m, where, w->name, arm, w->metrics[k],
                                       run_id, round, 0, reason, 0, 0, err);
      if (st != CORE_OK)
        return st;
    }
    return CORE_OK;
  }
  if (!data_json_is(it, DATA_JSON_INTEGER) || data_json_integer(it) < 1)
    return core_fail(err, CORE_EINPUT,
                     "%s: iterations is not a positive integer", where);
  for (size_t k = 0; k < w->n_metrics; k++) {
    double v = 0;
    core_status st = metric_value(m, b, i, bn, per_s, w->metrics[k], &v, err);
    if (st == CORE_OK)
      st = data_import_row(m, where, w->name, arm, w->metrics[k], run_id,
                           round, 1, "", v, 1, err);
    if (st != CORE_OK)
      return st;
  }
  return CORE_OK;
}

/* The round of entry b: repetition_index + 1, else the count of its arm's
 * repetitions so far. */
static long round_of(data_json *b, long *seen) {
  data_json *ri = data_json_get(b, "repetition_index");
  ++*seen;
  return data_json_is(ri, DATA_JSON_INTEGER) && data_json_integer(ri) >= 0
             ? (long)data_json_integer(ri) + 1
             : *seen;
}

/* The suffixes of an aggregate's name in files without run_type. */
static const char *const agg_suffix[] = {"_mean", "_median", "_stddev",
                                         "_cv",   "_BigO",   "_RMS"};

/* The length of name without an aggregate suffix, or 0 when it has none. */
static size_t agg_base(const char *name) {
  size_t n = strlen(name);
  for (size_t k = 0; k < sizeof agg_suffix / sizeof agg_suffix[0]; k++) {
    size_t l = strlen(agg_suffix[k]);
    if (n > l && !strcmp(name + n - l, agg_suffix[k]))
      return n - l;
  }
  return 0;
}

/* Whether name, in a file that says nothing of run types, is an
 * aggregate: it has a suffix and its base is also in the file (names: a
 * set of every name), as a repetition or as another aggregate. */
static int old_aggregate(data_json *names, const char *name) {
  size_t base = agg_base(name);
  char *key;
  int found = 0;
  if (!base || !(key = core_malloc(base + 8)))
    return 0;
  memcpy(key, name, base);
  key[base] = '\0';
  found = data_json_get(names, key) != NULL;
  for (size_t k = 0; !found && k < sizeof agg_suffix / sizeof agg_suffix[0];
       k++) {
    snprintf(key + base, 8, "%s", agg_suffix[k]);
    found = strcmp(key, name) != 0 && data_json_get(names, key);
  }
  core_free(key);
  return found;
}

/* Every entry's name, as the keys of an object (NULL when out of
 * memory). */
static data_json *name_set(data_json *list) {
  data_json *set = data_json_new_object(), *b;
  size_t i;
  for (i = 0; (b = data_json_at(list, i)) != NULL; i++) {
    data_json *nm = data_json_get(b, "name");
    if (set && data_json_is(nm, DATA_JSON_STRING))
      data_json_set(set, data_json_text(nm), data_json_new_bool(1));
  }
  return set;
}

/* Whether entry i is an aggregate; CORE_EINPUT for a run_type of
 * neither kind. */
static core_status is_aggregate(const data_import *m, data_json *names,
                                size_t i, data_json *b, const char *bn,
                                int *agg, core_err *err) {
  data_json *type = data_json_get(b, "run_type");
  *agg = 0;
  if (data_json_is(type, DATA_JSON_STRING) &&
      !strcmp(data_json_text(type), "aggregate"))
    return *agg = 1, CORE_OK;
  if (type && !(data_json_is(type, DATA_JSON_STRING) &&
                !strcmp(data_json_text(type), "iteration")))
    return core_fail(err, CORE_EINPUT,
                     "%s: benchmarks[%zu] (%s): run_type is neither "
                     "\"iteration\" nor \"aggregate\"",
                     data_import_file(m), i, bn);
  if (!type)
    *agg =
        data_json_is(data_json_get(b, "aggregate_name"), DATA_JSON_STRING) ||
        (!data_json_get(b, "aggregate_name") &&
         old_aggregate(names, data_json_text(data_json_get(b, "name"))));
  return CORE_OK;
}

core_status data_import_gbench(data_import *m, data_json *root,
                               const char *only, core_err *err) {
  const proto_sheet *s = data_import_sheet(m);
  const char *file = data_import_file(m);
  data_json *list = data_json_get(root, "benchmarks"), *b, *names;
  size_t i, runs = 0, aggregates = 0;
  long wi;
  long *seen;
  core_status st;
  if (!data_json_is(list, DATA_JSON_ARRAY))
    return core_fail(err, CORE_EINPUT, "%s: benchmarks: not an array", file);
  if ((st = data_import_workload(m, only, "Google Benchmark results", &wi,
                                 err)) != CORE_OK)
    return st;
  seen = core_calloc(s->n_arms ? s->n_arms : 1, sizeof *seen);
  if (!seen || !(names = name_set(list))) {
    core_free(seen);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  for (i = 0; (b = data_json_at(list, i)) != NULL; i++) {
    data_json *name = data_json_get(b, "run_name");
    const char *bn;
    char where[600];
    long a;
    int agg;
    if (!data_json_is(name, DATA_JSON_STRING))
      name = data_json_get(b, "name");
    if (!data_json_is(b, DATA_JSON_OBJECT) ||
        !data_json_is(name, DATA_JSON_STRING) ||
        !data_json_is(data_json_get(b, "name"), DATA_JSON_STRING)) {
      st =
          core_fail(err, CORE_EINPUT,
                    "%s: benchmarks[%zu]: not an object with a name", file, i);
      break;
    }
    bn = data_json_text(name);
    if ((st = is_aggregate(m, names, i, b, bn, &agg, err)) != CORE_OK)
      break;
    if (agg) {
      aggregates++;
      continue;
    }
    runs++;
    if ((a = data_import_arm(m, bn, NULL, -1, 0, err)) == -2) {
      st = err ? err->status : CORE_EUSAGE;
      break;
    }
    if (a == -3)
      continue;
    snprintf(where, sizeof where, "%s: benchmarks[%zu]", file, i);
    if (a < 0) {
      st = data_import_no_arm(m, where, bn, err);
      break;
    }
    if ((st = one_run(m, b, i, bn, &s->workloads[wi], s->arms[a].name,
                      round_of(b, &seen[a]), err)) != CORE_OK)
      break;
  }
  core_free(seen);
  data_json_free(names);
  if (st != CORE_OK)
    return st;
  if (runs == 0 && aggregates > 0)
    return core_fail(err, CORE_EINPUT,
                     "%s: holds only aggregates (%zu: mean, median, stddev, "
                     "...), not the repetitions they summarise; run the "
                     "benchmark with --benchmark_repetitions=N and without "
                     "--benchmark_report_aggregates_only",
                     file, aggregates);
  if (runs == 0)
    return core_fail(err, CORE_EINPUT, "%s: benchmarks: empty", file);
  return CORE_OK;
}
