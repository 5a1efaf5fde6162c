/* load_misc.c: the small top-level parts of a sheet: vars, metrics,
 * amendments, published, inputs, plan.
 * SPDX-License-Identifier: MIT
 */
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "protocols/load_internal.h"

/* The name of element i of an array of elements of size bytes whose
 * name is a char * at offset off. */
static const char *name_at(const char *a, size_t i, size_t size, size_t off) {
  const char *name;
  memcpy(&name, a + i * size + off, sizeof name);
  return name;
}

/* Names the n elements of arr (size bytes each, the name a char * at
 * offset off) after the n string keys of the table on top of the stack,
 * then sorts them by name, so that messages and summaries do not follow
 * hash order. */
static void sorted_names(walk *w, void *arr, size_t n, size_t size,
                         size_t off) {
  lua_State *L = w->L;
  char *a = arr;
  size_t i = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    char *name = proto_dup_value(w, -1);
    memcpy(a + i++ * size + off, &name, sizeof name);
  }
  for (i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(name_at(a, j - 1, size, off),
                                       name_at(a, j, size, off)) > 0;
         j--)
      for (size_t k = 0; k < size; k++) {
        char c = a[(j - 1) * size + k];
        a[(j - 1) * size + k] = a[j * size + k];
        a[j * size + k] = c;
      }
}

/* The number of keys of the table on top of the stack, which must all be
 * strings: another key fails as "has the key K; " and maps, what the
 * table maps to what. */
static size_t string_keys(walk *w, const char *maps) {
  lua_State *L = w->L;
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
      char buf[64];
      proto_fail(w, "has the key %s; %s",
                 proto_describe(w, -1, buf, sizeof buf), maps);
    }
    n++;
  }
  return n;
}

void proto_read_vars(walk *w, int t) {
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  size_t n = 0, i = 0;
  if (proto_field(w, t, "vars") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  proto_path_key(w, "vars");
  if (!lua_istable(L, -1))
    proto_fail_got(w, -1, "a table of names and strings { name = \"value\" }");
  n = string_keys(w, "vars maps names to strings: { name = \"value\" }");
  if (n > CORE_MAX_VARS)
    proto_fail(w, "has %zu vars; a sheet may declare at most %d", n,
               CORE_MAX_VARS);
  s->vars = proto_alloc_array(w, n, sizeof *s->vars);
  s->n_vars = n;
  sorted_names(w, s->vars, n, sizeof *s->vars, offsetof(proto_var, name));
  for (i = 0; i < n; i++) {
    const char *name = s->vars[i].name;
    size_t mark = proto_path_key(w, name);
    int ok = proto_is_lower((unsigned char)name[0]) || name[0] == '_';
    for (const char *p = name; *p && ok; p++)
      ok = proto_is_lower((unsigned char)*p) ||
           proto_is_digit((unsigned char)*p) || *p == '_';
    if (!ok || strlen(name) > 64)
      proto_fail(w, "a var name must match [a-z_][a-z0-9_]*");
    if (proto_in_list(name, proto_builtin_vars))
      proto_fail(w, "{%s} is built in; choose another name", name);
    if (proto_field(w, lua_absindex(L, -1), name) != LUA_TSTRING)
      proto_fail_got(w, -1, "a string");
    s->vars[i].value = proto_dup_value(w, -1);
    proto_leave(w, mark);
  }
  proto_leave(w, 0);
}

/* prereg measures a built-in metric itself, in its own unit: a sheet may
 * restate what it is, never change it (seconds printed as "ms", memory
 * read as a time). */
static void check_builtin_decl(walk *w, const proto_metric_decl *d,
                               const proto_builtin_metric *b) {
  proto_metric_kind k = b->kind;
  const char *unit = b->unit;
  const char *what = NULL;
  if (d->has_kind && d->kind != k)
    what = "kind";
  else if (d->higher_better)
    what = "better";
  else if (d->unit && strcmp(d->unit, unit) != 0)
    what = "unit";
  if (!what)
    return;
  proto_path_key(w, what);
  proto_fail(w,
             "%s is a built-in metric, which prereg measures itself: kind = "
             "\"%s\", better = \"lower\", unit = \"%s\"; a sheet may restate "
             "that, not change it (remove %s; a value the command reports "
             "itself goes under a name of its own)",
             d->name, proto_kind_word(k), unit, what);
}

/* One entry of `metrics`: d->name is set, its path pushed; the table's
 * value for it is read from the table at t. */
static void read_metric_entry(walk *w, int t, proto_metric_decl *d) {
  static const char *const keys[] = {"kind", "better", "unit", NULL};
  static const char *const kinds[] = {"time", "memory", "size", "other", NULL};
  static const char *const betters[] = {"lower", "higher", NULL};
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  int found = 0, mt, k;
  for (size_t j = 0; j < s->n_workloads && !found; j++)
    found = proto_workload_has_metric(&s->workloads[j], d->name);
  d->line = proto_find_line(s->text, s->text_len, d->name, NULL);
  if (d->line > 0)
    w->line = d->line;
  if (!found)
    proto_fail(w,
               "no workload measures \"%s\"; declare only metrics that a "
               "workload lists",
               d->name);
  if (proto_field(w, t, d->name) != LUA_TTABLE)
    proto_fail_got(w, -1,
                   "a table { kind = \"size\", better = \"higher\", unit = "
                   "\"ops/s\" }");
  mt = lua_gettop(L);
  proto_check_keys(w, mt, keys, 0, "a metric");
  {
    size_t m2 = proto_path_key(w, "kind");
    int ty = proto_field(w, mt, "kind");
    if (ty != LUA_TNIL) {
      for (k = 0; kinds[k]; k++)
        if (ty == LUA_TSTRING && strcmp(lua_tostring(L, -1), kinds[k]) == 0)
          break;
      if (!kinds[k])
        proto_fail_got(w, -1, "\"time\", \"memory\", \"size\" or \"other\"");
      d->has_kind = 1;
      d->kind = (proto_metric_kind)k;
    }
    proto_leave(w, m2);
  }
  if (proto_get_enum(w, mt, "better", betters, &k))
    d->higher_better = k == 1;
  if (d->higher_better && d->has_kind &&
      (d->kind == PROTO_KIND_TIME || d->kind == PROTO_KIND_MEMORY)) {
    proto_path_key(w, "better");
    proto_fail(
        w,
        "a %s is better lower; a metric better higher (a throughput) is "
        "kind = \"other\"",
        proto_kind_word(d->kind));
  }
  if (proto_get_string(w, mt, "unit", OPT, &d->unit) &&
      (strlen(d->unit) == 0 || strlen(d->unit) > 16)) {
    proto_path_key(w, "unit");
    proto_fail(w, "must be 1 to 16 bytes, such as \"ops/s\"");
  }
  const proto_builtin_metric *b = proto_builtin_by_name(d->name);
  if (b)
    check_builtin_decl(w, d, b);
}

/* The `metrics` table: what a metric measures, where its name does not
 * say it. Keys are metric names some workload measures. */
void proto_read_metrics(walk *w, int t) {
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  size_t n = 0, i = 0;
  if (proto_field(w, t, "metrics") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  proto_path_key(w, "metrics");
  if (!lua_istable(L, -1))
    proto_fail_got(
        w, -1, "a table of metric names { out_mib = { kind = \"size\" } }");
  n = string_keys(w, "metrics maps metric names to tables: "
                     "{ out_mib = { kind = \"size\" } }");
  if (n > CORE_MAX_METRIC_DECLS)
    proto_fail(
        w,
        "declares %zu metrics; a sheet may declare at most %d (only those "
        "whose name does not say what they measure need an entry)",
        n, CORE_MAX_METRIC_DECLS);
  s->metrics = proto_alloc_array(w, n, sizeof *s->metrics);
  s->n_metrics = n;
  sorted_names(w, s->metrics, n, sizeof *s->metrics,
               offsetof(proto_metric_decl, name));
  for (i = 0; i < n; i++) {
    size_t mark = proto_path_key(w, s->metrics[i].name);
    read_metric_entry(w, lua_absindex(L, -1), &s->metrics[i]);
    proto_leave(w, mark);
  }
  proto_leave(w, 0);
}

/* YYYY-MM-DD naming a real day. */
static int good_date(const char *d) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int y, m, day, max;
  if (strlen(d) != 10 || d[4] != '-' || d[7] != '-')
    return 0;
  for (int i = 0; i < 10; i++)
    if (i != 4 && i != 7 && !proto_is_digit((unsigned char)d[i]))
      return 0;
  y = (d[0] - '0') * 1000 + (d[1] - '0') * 100 + (d[2] - '0') * 10 +
      (d[3] - '0');
  m = (d[5] - '0') * 10 + (d[6] - '0');
  day = (d[8] - '0') * 10 + (d[9] - '0');
  if (y < 1900 || m < 1 || m > 12 || day < 1)
    return 0;
  max = days[m - 1];
  if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
    max = 29;
  return day <= max;
}

void proto_read_amendments(walk *w, int t) {
  static const char *const keys[] = {"date", "why", "supersedes", NULL};
  proto_sheet *s = w->s;
  int base_line = w->line;
  size_t mark;
  s->amendments = proto_get_list(
      w, t, "amendments", NULL,
      "a list of amendments { { date = \"YYYY-MM-DD\", why = \"...\" }, "
      "... }",
      0, NULL, sizeof *s->amendments, &s->n_amendments, &mark);
  if (!s->amendments)
    return;
  for (lua_Integer i = 1; i <= (lua_Integer)s->n_amendments; i++) {
    proto_amendment *a = &s->amendments[i - 1];
    size_t m2;
    int at = proto_get_entry(
        w, i, "a table { date = \"YYYY-MM-DD\", why = \"...\" }", &m2);
    int line;
    line = proto_entry_line(w, at, "date", 0);
    if (!line)
      line = proto_entry_line(w, at, "why", base_line);
    w->line = a->line = line;
    proto_check_keys(w, at, keys, 0, "an amendment");
    proto_get_string(w, at, "date", REQ, &a->date);
    if (!good_date(a->date)) {
      proto_path_key(w, "date");
      proto_fail(w, "must be a real date written YYYY-MM-DD, got \"%s\"",
                 a->date);
    }
    if (i > 1 && strcmp(a->date, s->amendments[i - 2].date) < 0) {
      proto_path_key(w, "date");
      proto_fail(w,
                 "%s is earlier than the date of amendments[%lld] (%s); "
                 "amendments are appended in order",
                 a->date, (long long)i - 1, s->amendments[i - 2].date);
    }
    proto_get_string(w, at, "why", REQ, &a->why);
    if (proto_get_string_list(
            w, at, "supersedes", OPT, LIST_UNIQUE | LIST_NONEMPTY,
            "a list of workload names", &a->supersedes, &a->n_supersedes))
      for (size_t k = 0; k < a->n_supersedes; k++) {
        size_t m3 = proto_path_key(w, "supersedes");
        long wi;
        proto_path_index(w, (lua_Integer)k + 1);
        proto_check_workload_ref(w, a->supersedes[k], &wi);
        proto_path_pop(w, m3);
      }
    proto_leave(w, m2);
  }
  w->line = base_line;
  proto_leave(w, mark);
}

/* The published experiment a replication's sheet repeats, as prereg
 * replicate writes it: read before `published`, whose entries may then
 * name what the replication dropped. */
void proto_read_replicates(walk *w, int t) {
  static const char *const keys[] = {"experiment", "version", "bundle_sha256",
                                     "published_at", NULL};
  proto_replicates *r;
  size_t mark = proto_path_key(w, "replicates");
  int ty = proto_field(w, t, "replicates"), it;
  double x;
  if (ty == LUA_TNIL) {
    proto_leave(w, mark);
    return;
  }
  if (ty != LUA_TTABLE)
    proto_fail_got(
        w, -1,
        "a table { experiment = \"...\", version = N, bundle_sha256 = "
        "\"...\", published_at = \"...\" }");
  it = lua_gettop(w->L);
  proto_check_keys(w, it, keys, 0, "replicates");
  r = w->s->replicates = proto_alloc_array(w, 1, sizeof *r);
  r->line = w->line;
  proto_get_string(w, it, "experiment", REQ, &r->experiment);
  if (proto_get_num(w, it, "version", REQ, 1, 0, 0, 1e9,
                    "a version number >= 0", &x))
    r->version = (long)x;
  proto_get_string(w, it, "bundle_sha256", REQ, &r->bundle_sha256);
  {
    size_t n = strlen(r->bundle_sha256), k = 0;
    while (k < n &&
           ((r->bundle_sha256[k] >= '0' && r->bundle_sha256[k] <= '9') ||
            (r->bundle_sha256[k] >= 'a' && r->bundle_sha256[k] <= 'f')))
      k++;
    if (n != 64 || k != n) {
      proto_path_key(w, "bundle_sha256");
      proto_fail(w, "must be a SHA-256 in 64 lowercase hex digits, got \"%s\"",
                 r->bundle_sha256);
    }
  }
  proto_get_string(w, it, "published_at", REQ, &r->published_at);
  proto_leave(w, mark);
}

/* An arm a published ratio names, which must be the sheet's. */
static void published_arm(walk *w, const char *key, const char *name,
                          long *index) {
  size_t m3 = proto_path_key(w, key);
  if ((*index = proto_arm_index(w->s, name)) < 0) {
    const char *cand[256];
    size_t nc = 0;
    for (size_t a = 0; a < w->s->n_arms && nc < 255; a++)
      cand[nc++] = w->s->arms[a].name;
    cand[nc] = NULL;
    proto_fail_unknown(w, "arm", name, cand, nc);
  }
  proto_path_pop(w, m3);
}

/* The workload, metric and arms a published ratio names must be the
 * sheet's; a replication's sheet may have dropped them, and the entry then
 * says so in pb->missing. */
static void published_refs(walk *w, proto_published *pb) {
  proto_sheet *s = w->s;
  long wi = proto_workload_index(s, pb->workload);
  long ai = proto_arm_index(s, pb->arm);
  long ri =
      pb->reference ? proto_arm_index(s, pb->reference) : (long)s->reference;
  size_t m3;
  if (s->replicates) {
    char *why = NULL;
    if (wi < 0)
      why =
          core_asprintf("workload \"%s\" is not in this sheet", pb->workload);
    else if (!proto_workload_has_metric(&s->workloads[wi], pb->metric))
      why = core_asprintf("workload \"%s\" does not measure \"%s\" here",
                          pb->workload, pb->metric);
    else if (ai < 0 || ri < 0)
      why = core_asprintf("arm \"%s\" is not in this sheet",
                          ai < 0 ? pb->arm : pb->reference);
    if (why || wi < 0 || ai < 0 || ri < 0) {
      if (!why)
        proto_oom(w);
      pb->missing = why;
      return;
    }
  }
  m3 = proto_path_key(w, "workload");
  proto_check_workload_ref(w, pb->workload, &wi);
  proto_path_pop(w, m3);
  if (!proto_workload_has_metric(&s->workloads[wi], pb->metric)) {
    proto_path_key(w, "metric");
    proto_fail(w, "workload \"%s\" does not measure \"%s\"", pb->workload,
               pb->metric);
  }
  published_arm(w, "arm", pb->arm, &ai);
  if (pb->reference)
    published_arm(w, "reference", pb->reference, &ri);
  if (ai == ri) {
    proto_path_key(w, "arm");
    proto_fail(w,
               "\"%s\" is the reference arm; a published ratio is another "
               "arm's, against it",
               pb->arm);
  }
}

/* The ratios a publication reports, for the report to set beside the
 * measured ones: each names a workload, one of its metrics and a compared
 * arm, as a hypothesis does. In a replication's sheet (`replicates`) an
 * entry may name what the replication dropped: it is kept with why, so
 * that the report lists it as not replicated. */
void proto_read_published(walk *w, int t) {
  static const char *const keys[] = {"workload", "metric",    "arm",  "ratio",
                                     "verdict",  "source",    "note", "ci_low",
                                     "ci_high",  "reference", NULL};
  proto_sheet *s = w->s;
  int base_line = w->line;
  size_t mark;
  s->published = proto_get_list(
      w, t, "published", NULL,
      "a list { { workload = \"...\", metric = \"...\", arm = \"...\", "
      "ratio = 1.48, source = \"...\" }, ... }",
      0, NULL, sizeof *s->published, &s->n_published, &mark);
  if (!s->published)
    return;
  for (lua_Integer i = 1; i <= (lua_Integer)s->n_published; i++) {
    proto_published *pb = &s->published[i - 1];
    size_t m2;
    int at = proto_get_entry(w, i, "a table { workload = \"...\", ... }", &m2);
    double x;
    pb->ci_low = pb->ci_high = NAN;
    w->line = pb->line = proto_entry_line(w, at, "workload", base_line);
    proto_check_keys(w, at, keys, 0, "a published ratio");
    proto_get_string(w, at, "workload", REQ, &pb->workload);
    proto_get_string(w, at, "metric", REQ, &pb->metric);
    proto_get_string(w, at, "arm", REQ, &pb->arm);
    proto_get_string(w, at, "reference", OPT, &pb->reference);
    published_refs(w, pb);
    if (proto_get_num(w, at, "ratio", REQ, 0, 0, 1, 1e12, "a number > 0", &x))
      pb->ratio = x;
    if (proto_get_num(w, at, "ci_low", OPT, 0, 0, 1, 1e12, "a number > 0", &x))
      pb->ci_low = x;
    if (proto_get_num(w, at, "ci_high", OPT, 0, 0, 1, 1e12, "a number > 0",
                      &x))
      pb->ci_high = x;
    if (isnan(pb->ci_low) != isnan(pb->ci_high) ||
        (!isnan(pb->ci_low) && pb->ci_low > pb->ci_high))
      proto_fail(w, "ci_low and ci_high go together, ci_low <= ci_high");
    proto_get_string(w, at, "verdict", OPT, &pb->verdict);
    proto_get_string(w, at, "source", REQ, &pb->source);
    proto_get_string(w, at, "note", OPT, &pb->note);
    proto_leave(w, m2);
  }
  w->line = base_line;
  proto_leave(w, mark);
}

/* inputs: paths relative to the sheet's folder that stay inside it, so
 * that the lock names the same files wherever the sheet is; no name on
 * the way starts with a dot: a copy of the inputs (replicate writes one
 * beside the sheet) must not hold what tools act on when they enter the
 * folder (.git, .envrc, .vscode, .hg). */
void proto_read_inputs(walk *w, int t) {
  proto_sheet *s = w->s;
  proto_get_string_list(w, t, "inputs", OPT, LIST_UNIQUE, "a list of paths",
                        &s->inputs, &s->n_inputs);
  for (size_t i = 0; i < s->n_inputs; i++) {
    const char *p = s->inputs[i];
    int up = 0, dot = 0;
    for (const char *q = p; *q; q = strchr(q, '/') ? strchr(q, '/') + 1 : "") {
      up |= strncmp(q, "..", 2) == 0 && (q[2] == '/' || q[2] == '\0');
      dot |= q[0] == '.';
    }
    if (p[0] == '/' || up || dot) {
      size_t mark = proto_path_key(w, "inputs");
      proto_path_index(w, (lua_Integer)i + 1);
      if (dot && !up)
        proto_fail(w,
                   "\"%s\" has a name starting with '.'; inputs hold no "
                   "dot-files or dot-folders (.git, .envrc, .vscode: tools "
                   "act on them in the folder a replication copies them "
                   "to): rename it, and name inputs without \"./\"",
                   p);
      proto_fail(
          w,
          "\"%s\" leaves the sheet's folder; an input is a file or folder "
          "in it, named relative to it (\"work.sh\", \"conf/\")",
          p);
      proto_path_pop(w, mark);
    }
  }
}

/* plan.sizes (required) and plan.looks (optional): increasing integers
 * from 1 to PLAN_MAX_SIZE, at most max of them. */
static void read_plan_sizes(walk *w, int t, const char *key, size_t max,
                            long **out, size_t *n_out) {
  const char *want = "a list of increasing sizes { 5, 10, 20, ... }";
  size_t mark = proto_path_key(w, key);
  int ty = proto_field(w, t, key);
  if (ty == LUA_TNIL && !strcmp(key, "looks")) {
    proto_leave(w, mark);
    return;
  }
  if (ty != LUA_TTABLE)
    proto_fail_got(w, -1, want);
  lua_Integer n = proto_list_len(w, -1, want);
  if (n < 1 || (size_t)n > max)
    proto_fail(w, "must hold 1 to %zu sizes", max);
  long *v = proto_alloc_array(w, (size_t)n, sizeof *v);
  *out = v;
  *n_out = (size_t)n;
  for (lua_Integer i = 1; i <= n; i++) {
    size_t m2 = proto_path_index(w, i);
    lua_rawgeti(w->L, -1, i);
    if (!lua_isinteger(w->L, -1) || lua_tointeger(w->L, -1) < 1 ||
        lua_tointeger(w->L, -1) > PLAN_MAX_SIZE ||
        (i > 1 && lua_tointeger(w->L, -1) <= v[i - 2]))
      proto_fail_got(w, -1, "an integer size above the one before it");
    v[i - 1] = (long)lua_tointeger(w->L, -1);
    proto_leave(w, m2);
  }
  proto_leave(w, mark);
}

/* A SHA-256 field of the plan: 64 lowercase hex digits. */
static void read_sha256(walk *w, int at, const char *key, int req,
                        char **out) {
  proto_get_string(w, at, key, req, out);
  for (size_t i = 0; *out && i < 64; i++)
    if (strlen(*out) != 64 || !strchr("0123456789abcdef", (*out)[i])) {
      proto_path_key(w, key);
      proto_fail(w, "must be 64 lowercase hex digits (a SHA-256), got \"%s\"",
                 *out);
    }
}

/* plan.pilot: what the plan was simulated from. */
static void read_plan_pilot(walk *w, int t, proto_plan *p) {
  static const char *const keys[] = {"sha256", "runs", "source", NULL};
  static const char *const sources[] = {"pilot", "experiment", "bundle", NULL};
  size_t mark = proto_path_key(w, "pilot");
  double x;
  int src = 0;
  if (proto_field(w, t, "pilot") != LUA_TTABLE)
    proto_fail_got(w, -1,
                   "a table { sha256 = \"...\", runs = 5, source = "
                   "\"pilot\" }");
  int at = lua_gettop(w->L);
  proto_check_keys(w, at, keys, 0, "the plan's pilot");
  read_sha256(w, at, "sha256", REQ, &p->pilot_sha256);
  if (proto_get_num(w, at, "runs", REQ, 1, 1, 0, 1e9, "an integer >= 1", &x))
    p->pilot_runs = (long)x;
  if (proto_get_enum(w, at, "source", sources, &src))
    p->pilot_source = proto_dup_str(w, sources[src]);
  else
    proto_fail(w, "source is required (\"pilot\", \"experiment\" or "
                  "\"bundle\")");
  proto_leave(w, mark);
}

void proto_read_plan(walk *w, int t) {
  static const char *const keys[] = {
      "power",       "sizes",     "sims",      "pilot",       "expected",
      "comparisons", "sized_for", "achieved",  "runs",        "looks",
      "expected_se", "assurance", "power_low", "rule_sha256", NULL};
  static const char *const sized[] = {"all", "hypotheses", NULL};
  int which = 0;
  proto_plan *p = &w->s->plan;
  size_t mark = proto_path_key(w, "plan");
  double x;
  int ty = proto_field(w, t, "plan");
  if (ty == LUA_TNIL) {
    proto_leave(w, mark);
    return;
  }
  if (ty != LUA_TTABLE)
    proto_fail_got(w, -1,
                   "a table { power = 0.8, sizes = { ... }, sims = 1000, "
                   "pilot = { ... } } (prereg plan --write writes it)");
  int at = lua_gettop(w->L);
  p->line = w->line;
  p->declared = 1;
  p->expected = p->comparisons = p->achieved = -1;
  p->expected_se = p->assurance = p->power_low = -1;
  proto_check_keys(w, at, keys, 0, "the plan");
  if (proto_get_num(w, at, "power", REQ, 0, 0, 1, 1, "a probability in (0, 1)",
                    &x)) {
    if (x >= 1.0) {
      proto_path_key(w, "power");
      proto_fail(w, "must be below 1, got %g", x);
    }
    p->power = x;
  }
  if (proto_get_num(w, at, "sims", REQ, 1, 1, 0, PLAN_MAX_SIMS,
                    "an integer from 1 to the plan's budget", &x))
    p->sims = (long)x;
  read_plan_sizes(w, at, "sizes", PLAN_MAX_SIZES, &p->sizes, &p->n_sizes);
  read_plan_sizes(w, at, "looks", CORE_MAX_LOOKS, &p->looks, &p->n_looks);
  read_plan_pilot(w, at, p);
  read_sha256(w, at, "rule_sha256", OPT, &p->rule_sha256);
  if (proto_get_enum(w, at, "sized_for", sized, &which))
    p->sized_for_hypotheses = which == 1;
  if (proto_get_num(w, at, "achieved", OPT, 0, 0, 0, 1, "a probability", &x))
    p->achieved = x;
  if (proto_get_num(w, at, "runs", OPT, 1, 1, 0, PLAN_MAX_SIZE,
                    "an integer from 1 to the largest size", &x))
    p->runs = (long)x;
  if (proto_get_num(w, at, "comparisons", OPT, 1, 0, 0, 1e9, "an integer >= 0",
                    &x))
    p->comparisons = (long)x;
  if (proto_get_num(w, at, "expected", OPT, 0, 0, 0, 1e9, "a number >= 0", &x))
    p->expected = x;
  if (proto_get_num(w, at, "expected_se", OPT, 0, 0, 0, 1e9, "a number >= 0",
                    &x))
    p->expected_se = x;
  if (proto_get_num(w, at, "assurance", OPT, 0, 0, 1, 1, "a share in (0, 1)",
                    &x)) {
    if (x >= 1.0) {
      proto_path_key(w, "assurance");
      proto_fail(w, "must be below 1, got %g", x);
    }
    p->assurance = x;
  }
  if (proto_get_num(w, at, "power_low", OPT, 0, 0, 0, 1,
                    "a probability in [0, 1]", &x))
    p->power_low = x;
  proto_leave(w, mark);
}
