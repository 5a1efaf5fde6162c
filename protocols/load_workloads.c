/* load_workloads.c: the workloads of a sheet: commands, sources,
 * metrics, runs.
 * SPDX-License-Identifier: MIT
 */
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "protocols/load_internal.h"

/* A built-in metric (protocols/metrics.c); any other [a-z][a-z0-9_]*
 * name is one the command reports itself. */
int proto_is_builtin_metric(const char *m) {
  return proto_builtin_by_name(m) != NULL;
}

static void check_metric_name(walk *w, const char *m) {
  const char *near;
  int ok = proto_is_lower((unsigned char)m[0]) && strlen(m) <= 64;
  if (proto_is_builtin_metric(m))
    return;
  for (const char *p = m; *p && ok; p++)
    ok = proto_is_lower((unsigned char)*p) ||
         proto_is_digit((unsigned char)*p) || *p == '_';
  if (!ok)
    proto_fail(
        w,
        "\"%s\" is neither a built-in metric nor a name [a-z][a-z0-9_]* "
        "that the command reports itself",
        m);
  /* A name one edit away from a built-in is far likelier a typo than a
   * metric the command writes itself, and would only fail at run time. */
  near = proto_builtin_metric_nearest(m);
  if (near && core_edit_distance(m, near) <= 1)
    proto_fail(w,
               "\"%s\" is not a built-in metric; did you mean \"%s\"? (a "
               "metric the command reports itself must differ from the "
               "built-ins by more than one letter)",
               m, near);
}

/* Whether prereg runs workload wl itself: its cmd or steps inside each
 * arm's {cmd}, or, when every arm is a whole command, the arms' commands
 * (then a cmd or steps would run nowhere, and are refused). */
static int check_by_arms(walk *w, proto_workload *wl) {
  if (w->s->arms[0].whole && (wl->cmd || wl->steps)) {
    proto_path_key(w, wl->cmd ? "cmd" : "steps");
    proto_fail(w,
               "no arm would run it: every arm's run is a whole command (none "
               "has {cmd}), and a run of this workload is the arm's command; "
               "remove %s (vary the arms' commands with {workload} if the "
               "workloads differ), or put {cmd} in every arm's run",
               wl->cmd ? "cmd" : "steps");
  }
  wl->by_arms = w->s->arms[0].whole;
  return wl->cmd || wl->steps || wl->by_arms;
}

/* A workload's `source`: where its data may come from. Said apart from
 * the other choices because a wrong value here decides what imports are
 * refused, so the message names every value and the likely one. */
static void read_source(walk *w, int at, proto_workload *wl, int has_cmd) {
  static const char *const names[] = {"run", "import", "both", NULL};
  size_t mark = proto_path_key(w, "source");
  int ty = proto_field(w, at, "source");
  wl->source = has_cmd ? PROTO_SOURCE_RUN : PROTO_SOURCE_IMPORT;
  if (ty == LUA_TNIL) {
    proto_leave(w, mark);
    return;
  }
  if (ty != LUA_TSTRING)
    proto_fail_got(w, -1, "\"run\", \"import\" or \"both\"");
  {
    const char *v = lua_tostring(w->L, -1), *near;
    int k;
    for (k = 0; names[k] && strcmp(v, names[k]) != 0; k++)
      ;
    if (!names[k]) {
      near = proto_nearest(v, names, proto_count_list(names));
      if (near)
        proto_fail(w,
                   "\"%s\" is not a source; did you mean \"%s\"? (\"run\": "
                   "prereg runs it, \"import\": only prereg import, \"both\": "
                   "imports pooled with its runs)",
                   v, near);
      proto_fail(w,
                 "\"%s\" is not a source: write \"run\" (prereg runs it), "
                 "\"import\" (only prereg import) or \"both\" (imports pooled "
                 "with its runs)",
                 v);
    }
    wl->source = k == 0   ? PROTO_SOURCE_RUN
                 : k == 1 ? PROTO_SOURCE_IMPORT
                          : PROTO_SOURCE_BOTH;
  }
  if (!has_cmd && wl->source != PROTO_SOURCE_IMPORT)
    proto_fail(
        w,
        "\"%s\" needs a cmd or steps for prereg to run; without one the "
        "data come only from prereg import: write source = \"import\" or "
        "add a cmd",
        proto_source_word(wl->source));
  proto_leave(w, mark);
}

/* The start of workload wl, the table at index at (entry i): its keys,
 * defaults, name (unique, in seen), commands and source, and what a
 * workload that runs nothing may not set. Returns whether it runs. */
static int read_workload_head(walk *w, int at, proto_workload *wl,
                              name_set *seen, lua_Integer i, int base_line) {
  static const char *const keys[] = {
      "name",           "runs",      "warmup",  "cmd",
      "steps",          "prepare",   "cleanup", "metrics",
      "sample_after_s", "timeout_s", "order",   "cache",
      "expect_exit",    "processes", "cgroup",  "source",
      "looks",          NULL};
  /* What an import-only workload (no cmd, no steps) may not set: it
   * runs nothing, so these could only mislead. */
  static const char *const run_only[] = {
      "warmup",    "prepare", "cleanup", "sample_after_s",
      "timeout_s", "order",   "cache",   "expect_exit",
      "processes", "cgroup",  "looks",   NULL};
  lua_State *L = w->L;
  int runs;
  w->line = wl->line = proto_entry_line(w, at, "name", base_line);
  proto_check_keys(w, at, keys, 0, "a workload");
  /* Defaults (proto.h). */
  wl->sample_after_s = 5;
  wl->timeout_s = 120;
  wl->procs.descendants = 1;
  proto_get_string(w, at, "name", REQ, &wl->name);
  proto_check_name(w, wl->name, "workload");
  size_t j = proto_set_put(seen, wl->name, (size_t)i);
  if (j) {
    proto_path_key(w, "name");
    proto_fail(w,
               "\"%s\" is already the name of workloads[%zu]; workload "
               "names must be unique",
               wl->name, j);
  }
  proto_get_template(w, at, "cmd", OPT, T_RUN, &wl->cmd);
  proto_get_string_list(w, at, "steps", OPT, LIST_RUN_TEMPLATE | LIST_NONEMPTY,
                        "a list of commands", &wl->steps, &wl->n_steps);
  if (wl->cmd && wl->steps)
    proto_fail(w, "has both cmd and steps; give one: cmd is one command, "
                  "steps a list run in order in a fresh folder");
  runs = check_by_arms(w, wl);
  read_source(w, at, wl, runs);
  if (!runs)
    for (int k = 0; run_only[k]; k++) {
      if (proto_field(w, at, run_only[k]) != LUA_TNIL) {
        proto_path_key(w, run_only[k]);
        proto_fail(w,
                   "this workload has no cmd or steps, so it runs nothing "
                   "(its data come from 'prereg import'); remove %s or add a "
                   "cmd",
                   run_only[k]);
      }
      lua_pop(L, 1);
    }
  return runs;
}

/* 1 when metric m is a built-in read from the run's own cgroup. */
static int from_cgroup(const char *m) {
  const proto_builtin_metric *b = proto_builtin_by_name(m);
  return b &&
         (b->from == PROTO_MEASURE_CG_MEM || b->from == PROTO_MEASURE_CG_CPU);
}

/* How workload wl runs and what it measures: runs, warm-ups, prepare
 * and cleanup, metrics, cgroup, sampling, timeout, order and cache. */
static void read_workload_runs(walk *w, int at, proto_workload *wl, int runs) {
  static const char *const orders[] = {"interleaved", "blocked", NULL};
  static const char *const caches[] = {"warm", "cold", NULL};
  const char *pss = proto_measure_name(PROTO_MEASURE_PSS);
  double x;
  if (proto_get_num(w, at, "runs",
                    runs && wl->source != PROTO_SOURCE_IMPORT ? REQ : OPT, 1,
                    1, 0, 1e6, "a positive integer", &x))
    wl->runs = (long)x;
  if (proto_get_num(w, at, "warmup", OPT, 1, 0, 0, 1e6, "an integer >= 0", &x))
    wl->warmup = (long)x;
  proto_get_template(w, at, "prepare", OPT, T_RUN, &wl->prepare);
  proto_get_template(w, at, "cleanup", OPT, T_RUN, &wl->cleanup);
  if (!proto_get_string_list(w, at, "metrics", OPT,
                             LIST_UNIQUE | LIST_NONEMPTY,
                             "a list of metric names { \"wall_s\", ... }",
                             &wl->metrics, &wl->n_metrics)) {
    wl->metrics = proto_alloc_array(w, 1, sizeof *wl->metrics);
    wl->n_metrics = 1;
    wl->metrics[0] = proto_dup_str(w, proto_measure_name(PROTO_MEASURE_WALL));
  }
  for (size_t k = 0; k < wl->n_metrics; k++) {
    size_t m3 = proto_path_key(w, "metrics");
    proto_path_index(w, (lua_Integer)k + 1);
    check_metric_name(w, wl->metrics[k]);
    proto_path_pop(w, m3);
  }
  proto_get_bool(w, at, "cgroup", &wl->cgroup);
  if (runs && !wl->cgroup)
    for (size_t k = 0; k < wl->n_metrics; k++)
      if (from_cgroup(wl->metrics[k])) {
        proto_path_key(w, "metrics");
        proto_path_index(w, (lua_Integer)k + 1);
        proto_fail(w,
                   "%s is read from the run's own cgroup; add cgroup = "
                   "true to this workload",
                   wl->metrics[k]);
      }
  if (proto_get_num(w, at, "sample_after_s", OPT, 0, 0, 0, 86400,
                    "a number of seconds >= 0", &x)) {
    wl->sample_after_s = x;
    if (!proto_workload_has_metric(wl, pss)) {
      proto_path_key(w, "sample_after_s");
      proto_fail(w,
                 "only %s is sampled; add \"%s\" to metrics or remove "
                 "sample_after_s",
                 pss, pss);
    }
  }
  if (proto_get_num(w, at, "timeout_s", OPT, 0, 0, 1, 1e6,
                    "a number of seconds > 0", &x))
    wl->timeout_s = x;
  if (runs && proto_workload_has_metric(wl, pss) &&
      wl->sample_after_s >= wl->timeout_s) {
    proto_path_key(w, "sample_after_s");
    proto_fail(w,
               "%g must be less than timeout_s (%g), or the run is killed "
               "before it is sampled",
               wl->sample_after_s, wl->timeout_s);
  }
  {
    int v;
    if (proto_get_enum(w, at, "order", orders, &v))
      wl->order = v ? PROTO_ORDER_BLOCKED : PROTO_ORDER_INTERLEAVED;
    if (proto_get_enum(w, at, "cache", caches, &v))
      wl->cache = v ? PROTO_CACHE_COLD : PROTO_CACHE_WARM;
  }
}

/* The workload's looks: increasing run counts, the last its runs (the
 * rule's min_n and the order are checked once the rule is read:
 * proto_check_looks). */
static void read_looks(walk *w, int at, proto_workload *wl) {
  const char *want = "a list of increasing run counts { 5, 10, 30 }, the "
                     "last equal to runs";
  size_t mark = proto_path_key(w, "looks");
  int ty = proto_field(w, at, "looks");
  if (ty == LUA_TNIL) {
    proto_leave(w, mark);
    return;
  }
  if (ty != LUA_TTABLE)
    proto_fail_got(w, -1, want);
  lua_Integer n = proto_list_len(w, -1, want);
  if (n < 1 || n > CORE_MAX_LOOKS)
    proto_fail(w, "must hold 1 to %d looks", CORE_MAX_LOOKS);
  wl->looks = proto_alloc_array(w, (size_t)n, sizeof *wl->looks);
  wl->n_looks = (size_t)n;
  for (lua_Integer i = 1; i <= n; i++) {
    size_t m2 = proto_path_index(w, i);
    lua_rawgeti(w->L, -1, i);
    if (!lua_isinteger(w->L, -1) || lua_tointeger(w->L, -1) < 1)
      proto_fail_got(w, -1, "a positive integer number of runs per arm");
    wl->looks[i - 1] = (long)lua_tointeger(w->L, -1);
    if (i > 1 && wl->looks[i - 1] <= wl->looks[i - 2])
      proto_fail(w,
                 "%ld does not come after the look before it (%ld): looks "
                 "must increase, each more runs per arm than the one before",
                 wl->looks[i - 1], wl->looks[i - 2]);
    proto_leave(w, m2);
  }
  if (wl->looks[n - 1] != wl->runs)
    proto_fail(w,
               "the last look is %ld but runs is %ld: the last look must be "
               "the registered maximum; end the list with %ld (or set runs "
               "= %ld)",
               wl->looks[n - 1], wl->runs, wl->runs, wl->looks[n - 1]);
  proto_leave(w, mark);
}

/* The exit code workload wl expects: a code, "any" or "reference". */
static void read_expect_exit(walk *w, int at, proto_workload *wl) {
  lua_State *L = w->L;
  size_t m3 = proto_path_key(w, "expect_exit");
  int ty = proto_field(w, at, "expect_exit");
  const char *want = "an exit code 0..255, \"any\" or \"reference\"";
  wl->expect = PROTO_EXPECT_CODE;
  if (ty == LUA_TNUMBER) {
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0 ||
        lua_tointeger(L, -1) > 255)
      proto_fail_got(w, -1, want);
    wl->expect_code = (int)lua_tointeger(L, -1);
  } else if (ty == LUA_TSTRING && strcmp(lua_tostring(L, -1), "any") == 0) {
    wl->expect = PROTO_EXPECT_ANY;
  } else if (ty == LUA_TSTRING &&
             strcmp(lua_tostring(L, -1), "reference") == 0) {
    wl->expect = PROTO_EXPECT_REFERENCE;
  } else if (ty != LUA_TNIL) {
    proto_fail_got(w, -1, want);
  }
  proto_leave(w, m3);
}

/* Which processes workload wl measures: processes = { ... }. */
static void read_processes(walk *w, int at, proto_workload *wl) {
  static const char *const proc_keys[] = {"descendants", "cgroup", "cmdline",
                                          NULL};
  lua_State *L = w->L;
  size_t m3 = proto_path_key(w, "processes");
  int ty = proto_field(w, at, "processes");
  if (ty != LUA_TNIL) {
    int pt = lua_gettop(L);
    if (ty != LUA_TTABLE)
      proto_fail_got(w, pt,
                     "a table { descendants = true, cgroup = "
                     "\"...\", cmdline = { \"...\" } }");
    proto_check_keys(w, pt, proc_keys, 0, "processes");
    proto_get_bool(w, pt, "descendants", &wl->procs.descendants);
    if (proto_get_template(w, pt, "cgroup", OPT, T_RUN | T_SEL,
                           &wl->procs.cgroup)) {
      proto_check_cgroup_path(w, wl->procs.cgroup);
      proto_require_run_name(w, "cgroup", 0, wl->procs.cgroup);
    }
    proto_get_string_list(
        w, pt, "cmdline", OPT, LIST_SEL_TEMPLATE | LIST_NONEMPTY,
        "a list of strings", &wl->procs.cmdline, &wl->procs.n_cmdline);
    for (size_t k = 0; k < wl->procs.n_cmdline; k++)
      proto_require_run_name(w, "cmdline", (lua_Integer)k + 1,
                             wl->procs.cmdline[k]);
  }
  proto_leave(w, m3);
}

void proto_read_workloads(walk *w, int t) {
  proto_sheet *s = w->s;
  int base_line = w->line;
  size_t mark;
  s->workloads = proto_get_list(
      w, t, "workloads",
      "what to measure, { { name = \"...\", runs = 30, cmd = \"...\" }, "
      "... }",
      "a list of workloads { { name = ... }, ... }", 1,
      "needs at least one workload", sizeof *s->workloads, &s->n_workloads,
      &mark);
  name_set seen;
  proto_set_open(w, &seen, s->n_workloads);
  for (lua_Integer i = 1; i <= (lua_Integer)s->n_workloads; i++) {
    proto_workload *wl = &s->workloads[i - 1];
    size_t m2;
    int at = proto_get_entry(w, i, "a table { name = \"...\", ... }", &m2);
    int runs = read_workload_head(w, at, wl, &seen, i, base_line);
    read_workload_runs(w, at, wl, runs);
    read_expect_exit(w, at, wl);
    read_processes(w, at, wl);
    read_looks(w, at, wl);
    proto_leave(w, m2);
  }
  proto_set_close(w, &seen);
  w->line = base_line;
  proto_leave(w, mark);
}

void proto_check_looks(walk *w) {
  const proto_sheet *s = w->s;
  int base_line = w->line;
  if (s->rule.family && s->hosts.declared) {
    proto_path_key(w, "rule");
    proto_path_key(w, "family");
    proto_fail(w, "is not made across hosts yet; remove family or hosts");
  }
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *wl = &s->workloads[i];
    if (!wl->n_looks)
      continue;
    w->line = wl->line;
    size_t mark = proto_path_key(w, "workloads");
    proto_path_index(w, (lua_Integer)i + 1);
    proto_path_key(w, "looks");
    if (wl->order == PROTO_ORDER_BLOCKED)
      proto_fail(w, "need interleaved rounds: in blocked order no look sees "
                    "every arm; remove order = \"blocked\" or the looks");
    if (s->hosts.declared)
      proto_fail(w, "are not made across hosts yet: remove looks or hosts");
    for (size_t k = 0; k < wl->n_looks; k++)
      if (wl->looks[k] < s->rule.min_n) {
        proto_path_index(w, (lua_Integer)k + 1);
        proto_fail(w,
                   "%ld runs per arm is below the rule's min_n (%ld): no "
                   "verdict could be reached there; make every look at "
                   "least %ld, or lower min_n",
                   wl->looks[k], s->rule.min_n, s->rule.min_n);
      }
    proto_path_pop(w, mark);
  }
  w->line = base_line;
}
