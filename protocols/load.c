/* load.c: from the table a sheet hands to protocol{} to a validated
 * proto_sheet: every key's type and range, names, cross references.
 * SPDX-License-Identifier: MIT
 *
 * Message format (protocols/README.md): "FILE:LINE: PATH: what" where PATH is
 * the field (workloads[2].runs, 1-based like Lua) and LINE the best line
 * we can find cheaply: the line of the entry (its unique `name = "x"`,
 * `id = "H1"`, `date = "..."`, `{ "verdict"`), of the claim's
 * constructor, of a unique `key =` for a top-level or unknown key, else
 * the line of the protocol{ call. Runs under lua_pcall: the first
 * problem raises, and every allocation is attached to the sheet at once
 * so proto_sheet_free cleans up after a raise.
 */
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "protocols/proto_internal.h"

typedef struct walk {
  lua_State *L;
  proto_sheet *s;
  int line; /* for messages; 0: none */
  size_t plen;
  char path[512];
} walk;

static const char *const builtin_vars[] = {
    "cmd",        "arm",     "workload", "round",     "run_id", "batch_id",
    "experiment", "cidfile", "cid",      "sheet_dir", "origin", NULL};

/* The built-in metric names (interface.md §1); any other
 * [a-z][a-z0-9_]* name is one the command reports itself. */
static const char *const builtin_metrics[] = {
    "wall_s",  "user_s",          "sys_s",    "maxrss_kib", "pss_mib",
    "inner_s", "cg_mem_peak_mib", "cg_cpu_s", NULL};

/* Small helpers */

static int is_lower(int c) {
  return c >= 'a' && c <= 'z';
}
static int is_digit(int c) {
  return c >= '0' && c <= '9';
}
static int is_ident(int c) {
  return is_lower(c) || is_digit(c) || c == '_' || (c >= 'A' && c <= 'Z');
}

static int in_list(const char *name, const char *const list[]) {
  for (int i = 0; list[i]; i++)
    if (strcmp(list[i], name) == 0)
      return 1;
  return 0;
}

/* Edit distance between a and b, for did-you-mean. */
static size_t edit_distance(const char *a, const char *b) {
  /* Optimal string alignment: a swap of neighbours counts once, the
   * commonest typo in a key. Long inputs are cut; keys are short. */
  size_t d[33][33];
  size_t la = strlen(a), lb = strlen(b);
  if (la > 32)
    la = 32;
  if (lb > 32)
    lb = 32;
  for (size_t i = 0; i <= la; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v)
        v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v)
        v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[la][lb];
}

/* The closest of candidates to name when close enough to be a typo. */
static const char *nearest(const char *name, const char *const cand[],
                           size_t n) {
  const char *best = NULL;
  size_t bd = (size_t)-1, len = strlen(name);
  for (size_t i = 0; i < n && cand[i]; i++) {
    size_t d = edit_distance(name, cand[i]);
    if (d < bd) {
      bd = d;
      best = cand[i];
    }
  }
  return best && bd <= 1 + len / 3 && bd < len ? best : NULL;
}

const char *proto_nearest(const char *name, const char *const cand[],
                          size_t n) {
  return nearest(name, cand, n);
}

static size_t count_list(const char *const list[]) {
  size_t n = 0;
  while (list[n])
    n++;
  return n;
}

static void join_list(char *out, size_t size, const char *const list[],
                      size_t n, const char *open, const char *close) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n && list[i]; i++) {
    int k = snprintf(out + used, size - used, "%s%s%s%s", i ? ", " : "", open,
                     list[i], close);
    if (k < 0 || (size_t)k >= size - used)
      return;
    used += (size_t)k;
  }
}

/* Does `key = "value"` (or `{ "value"` when key is NULL, `key =` when
 * value is NULL) start at text[i]? */
static int match_at(const char *t, size_t len, size_t i, const char *key,
                    const char *value) {
  size_t p = i;
  if (key) {
    size_t kl = strlen(key);
    if (i > 0 && is_ident((unsigned char)t[i - 1]))
      return 0;
    if (len - i < kl || memcmp(t + i, key, kl) != 0)
      return 0;
    p += kl;
    if (p < len && is_ident((unsigned char)t[p]))
      return 0;
    while (p < len && (t[p] == ' ' || t[p] == '\t'))
      p++;
    if (p >= len || t[p] != '=' || (p + 1 < len && t[p + 1] == '='))
      return 0;
    p++;
    if (!value)
      return 1;
  } else {
    if (t[i] != '{')
      return 0;
    p++;
  }
  while (p < len && (t[p] == ' ' || t[p] == '\t'))
    p++;
  if (p < len && (t[p] == '"' || t[p] == '\'')) {
    char q = t[p++];
    size_t vl = strlen(value);
    return len - p > vl && memcmp(t + p, value, vl) == 0 && t[p + vl] == q;
  }
  return 0;
}

/* Line of the first line of text that matches `key = "value"` (or
 * `{ "value"` when key is NULL), when exactly one line does; else 0. */
static int find_line(const char *text, size_t len, const char *key,
                     const char *value) {
  int line = 1, found = 0, count = 0;
  if (!text || (!key && !value))
    return 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\n') {
      line++;
      continue;
    }
    if (match_at(text, len, i, key, value) && found != line) {
      count++;
      found = line;
    }
  }
  return count == 1 ? found : 0;
}

/* Messages */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
fail(walk *w, const char *fmt, ...) {
  char msg[2048], full[3072];
  const char *file = w->s->path;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (w->line > 0 && w->plen)
    snprintf(full, sizeof full, "%s:%d: %s: %s", file, w->line, w->path, msg);
  else if (w->line > 0)
    snprintf(full, sizeof full, "%s:%d: %s", file, w->line, msg);
  else if (w->plen)
    snprintf(full, sizeof full, "%s: %s: %s", file, w->path, msg);
  else
    snprintf(full, sizeof full, "%s: %s", file, msg);
  lua_pushstring(w->L, full);
  return lua_error(w->L);
}

static int oom(walk *w) {
  w->s->lua->c_oom = 1;
  lua_pushliteral(w->L, "out of memory");
  return lua_error(w->L);
}

/* Appends to the field path (truncating at its size); returns the mark
 * that path_pop restores. */
static size_t path_append(walk *w, const char *fmt, ...) {
  size_t mark = w->plen;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(w->path + w->plen, sizeof w->path - w->plen, fmt, ap);
  va_end(ap);
  if (n > 0)
    w->plen += (size_t)n < sizeof w->path - w->plen
                   ? (size_t)n
                   : sizeof w->path - w->plen - 1;
  return mark;
}

static size_t path_key(walk *w, const char *key) {
  return path_append(w, "%s%s", w->plen ? "." : "", key);
}

static size_t path_index(walk *w, lua_Integer i) {
  return path_append(w, "[%lld]", (long long)i);
}

static void path_pop(walk *w, size_t mark) {
  w->plen = mark;
  w->path[mark] = '\0';
}

/* Done with the value on top of the stack, pushed for the path element
 * that mark ends before: pops both. */
static void leave(walk *w, size_t mark) {
  lua_pop(w->L, 1);
  path_pop(w, mark);
}

/* A short, exact description of a value for "got ..." */
static const char *describe(walk *w, int idx, char *buf, size_t size) {
  lua_State *L = w->L;
  switch (lua_type(L, idx)) {
  case LUA_TNIL:
    return "nil";
  case LUA_TBOOLEAN:
    return lua_toboolean(L, idx) ? "true" : "false";
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx))
      snprintf(buf, size, "%lld", (long long)lua_tointeger(L, idx));
    else
      snprintf(buf, size, "%.14g", (double)lua_tonumber(L, idx));
    return buf;
  case LUA_TSTRING: {
    size_t len, o = 0;
    const char *v = lua_tolstring(L, idx, &len);
    buf[o++] = '"';
    for (size_t i = 0; i < len && o + 5 < size; i++) {
      if (i == 40) {
        memcpy(buf + o, "...", 3);
        o += 3;
        break;
      }
      buf[o++] = (v[i] >= 32 && v[i] < 127) ? v[i] : '?';
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
  }
  case LUA_TTABLE:
    return "a table";
  case LUA_TFUNCTION:
    return "a function";
  case LUA_TUSERDATA:
    return luaL_testudata(L, idx, PROTO_CLAIM_META) ? "a claim" : "a userdata";
  default:
    return luaL_typename(L, idx);
  }
}

static int fail_got(walk *w, int idx, const char *want) {
  char buf[64];
  return fail(w, "must be %s, got %s", want,
              describe(w, idx, buf, sizeof buf));
}

/* Reading fields */

/* Pushes t[key] without metamethods; returns its type. */
static int field(walk *w, int t, const char *key) {
  lua_pushstring(w->L, key);
  return lua_rawget(w->L, t);
}

/* Rejects keys that are not in known (with a did-you-mean) and integer
 * keys beyond npos. what names the table for the list of keys. Keys are
 * examined in sorted order so that messages do not depend on Lua's hash
 * order, which changes from run to run. */
static void check_keys(walk *w, int t, const char *const known[],
                       lua_Integer npos, const char *what) {
  lua_State *L = w->L;
  char bad[128] = "";
  int have_bad = 0;
  lua_Integer bad_pos = 0;
  const char *bad_type = NULL;
  t = lua_absindex(L, t);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -1);
      if (!in_list(k, known) && (!have_bad || strcmp(k, bad) < 0)) {
        snprintf(bad, sizeof bad, "%s", k);
        have_bad = 1;
      }
    } else if (lua_isinteger(L, -1)) {
      lua_Integer k = lua_tointeger(L, -1);
      if ((k < 1 || k > npos) && (bad_pos == 0 || k < bad_pos))
        bad_pos = k;
    } else if (!bad_type) {
      bad_type = luaL_typename(L, -1);
    }
  }
  if (have_bad) {
    const char *near = nearest(bad, known, count_list(known));
    int line = find_line(w->s->text, w->s->text_len, bad, NULL);
    char keys[1024];
    if (line > 0)
      w->line = line;
    path_key(w, bad);
    if (near)
      fail(w, "unknown key; did you mean '%s'?", near);
    join_list(keys, sizeof keys, known, count_list(known), "", "");
    fail(w, "unknown key; the keys of %s are: %s", what, keys);
  }
  if (bad_pos) {
    path_index(w, bad_pos);
    if (npos)
      fail(w, "unexpected entry; %s has %lld positional value%s", what,
           (long long)npos, npos == 1 ? "" : "s");
    fail(w,
         "unexpected entry without a key; the entries of %s are "
         "written key = value",
         what);
  }
  if (bad_type)
    fail(w, "has a key of type %s; keys of %s are names", bad_type, what);
}

/* Checks that the value at idx is a list and returns its length. */
static lua_Integer list_len(walk *w, int idx, const char *what) {
  lua_State *L = w->L;
  lua_Integer n = 0, max = 0;
  char key[128] = "";
  int have_key = 0;
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx))
    fail_got(w, idx, what);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1) {
      n++;
      if (lua_tointeger(L, -1) > max)
        max = lua_tointeger(L, -1);
    } else if (lua_type(L, -1) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -1);
      if (!have_key || strcmp(k, key) < 0) {
        snprintf(key, sizeof key, "%s", k);
        have_key = 1;
      }
    } else if (!have_key) {
      snprintf(key, sizeof key, "of type %s", luaL_typename(L, -1));
      have_key = 1;
    }
  }
  if (have_key)
    fail(w,
         "must be %s; found the key '%s' (a list holds only entries "
         "[1], [2], ...; wrap each entry in its own { })",
         what, key);
  if (max != n)
    for (lua_Integer i = 1; i <= max; i++) {
      int ty = lua_rawgeti(L, idx, i);
      lua_pop(L, 1);
      if (ty == LUA_TNIL)
        fail(w, "must be %s without holes; [%lld] is nil", what, (long long)i);
    }
  return n;
}

static char *dup_value(walk *w, int idx) {
  size_t len;
  const char *v = lua_tolstring(w->L, idx, &len);
  char *d;
  size_t bad;
  if (memchr(v, '\0', len))
    fail(w, "must not contain a NUL byte");
  /* Text is frozen, analysed and reported: a byte that is not UTF-8
   * would break the JSON and the workbook later, far from its cause. */
  if ((bad = core_utf8_invalid(v, len)) < len)
    fail(w,
         "is not valid UTF-8 (at byte %zu of the string, 0x%02X); text in a "
         "sheet must be UTF-8",
         bad + 1, (unsigned)(unsigned char)v[bad]);
  d = core_strndup(v, len);
  if (!d)
    oom(w);
  return d;
}

/* Lines first..last (1-based, inclusive) of text, as a new string. */
static char *lines_of(walk *w, const char *text, size_t len, int first,
                      int last) {
  size_t start = 0, end;
  int line = 1;
  char *d;
  while (start < len && line < first)
    if (text[start++] == '\n')
      line++;
  end = start;
  while (end < len && (line < last || text[end] != '\n'))
    if (text[end++] == '\n')
      line++;
  if (!(d = core_strndup(text + start, end - start)))
    oom(w);
  return d;
}

static char *dup_str(walk *w, const char *v) {
  char *d = core_strdup(v);
  if (!d)
    oom(w);
  return d;
}

static void *alloc_array(walk *w, size_t n, size_t size) {
  void *p = core_calloc(n ? n : 1, size);
  if (!p)
    oom(w);
  return p;
}

/* Pushes t[key], a list, and appends key to the path (the mark to pop
 * is *mark). Absent: fails with "is required: " + missing, or when missing
 * is NULL (an optional list) pops it, restores the path and returns NULL
 * with *n = 0. Fewer than min entries fails with too_few. Otherwise
 * returns *n zeroed elements of size bytes, attached to nothing yet: the
 * caller stores them in the sheet at once. shape describes the list for
 * "got ..." messages. */
static void *get_list(walk *w, int t, const char *key, const char *missing,
                      const char *shape, lua_Integer min, const char *too_few,
                      size_t size, size_t *n, size_t *mark) {
  *mark = path_key(w, key);
  *n = 0;
  if (field(w, t, key) == LUA_TNIL) {
    if (missing)
      fail(w, "is required: %s", missing);
    lua_pop(w->L, 1);
    path_pop(w, *mark);
    return NULL;
  }
  lua_Integer len = list_len(w, -1, shape);
  if (len < min)
    fail(w, "%s", too_few);
  *n = (size_t)len;
  return alloc_array(w, (size_t)len, size);
}

/* Pushes entry i of the list on top of the stack and appends [i] to the
 * path (the mark to pop is *mark); fails with "got ..." unless it is a
 * table of the given shape. Returns its stack index. */
static int get_entry(walk *w, lua_Integer i, const char *shape, size_t *mark) {
  *mark = path_index(w, i);
  lua_rawgeti(w->L, -1, i);
  int at = lua_gettop(w->L);
  if (!lua_istable(w->L, at))
    fail_got(w, at, shape);
  return at;
}

/* Names seen so far, to refuse a repeated one in time linear in the
 * list (a comparison with every earlier entry made a 40,000-entry list
 * take seconds). Open addressing over memory Lua owns (a userdata held in
 * the registry), so that a raise in the middle frees it with the state. */
typedef struct name_set {
  const char **name;
  size_t *at; /* 1-based index of the entry that has the name */
  size_t mask;
  int ref;
} name_set;

static void set_open(walk *w, name_set *h, size_t n) {
  size_t cap = 16;
  while (cap < 2 * n + 1)
    cap *= 2;
  void *mem =
      lua_newuserdatauv(w->L, cap * (sizeof(char *) + sizeof(size_t)), 0);
  memset(mem, 0, cap * (sizeof(char *) + sizeof(size_t)));
  h->ref = luaL_ref(w->L, LUA_REGISTRYINDEX);
  h->name = mem;
  h->at = (size_t *)(void *)((char *)mem + cap * sizeof(char *));
  h->mask = cap - 1;
}

/* Adds name as entry at (1-based); returns the entry that had it
 * already, or 0. The set holds at most the n entries it was opened for. */
static size_t set_put(name_set *h, const char *name, size_t at) {
  size_t x = 2166136261u;
  for (const char *p = name; *p; p++)
    x = (x ^ (unsigned char)*p) * 16777619u;
  for (size_t i = x & h->mask;; i = (i + 1) & h->mask) {
    if (!h->name[i]) {
      h->name[i] = name;
      h->at[i] = at;
      return 0;
    }
    if (strcmp(h->name[i], name) == 0)
      return h->at[i];
  }
}

static void set_close(walk *w, name_set *h) {
  luaL_unref(w->L, LUA_REGISTRYINDEX, h->ref);
  memset(h, 0, sizeof *h);
}

/* Which built-in placeholders a template may use: {arm}, {experiment}
 * and vars always; T_RUN adds those with a value per run; T_CMD adds
 * {cmd}; T_SEL adds {cid}, the container ID read from {cidfile} while the
 * run goes on (only a process selection is evaluated then). */
enum { T_ARM = 0, T_RUN = 1, T_CMD = 2, T_SEL = 4 };

/* Validates the {name} placeholders of a template. */
static void check_template(walk *w, const char *t, int allow) {
  proto_piece pc;
  const char *p = t;
  while ((p = proto_next_piece(p, &pc)) != NULL) {
    const char *name = pc.name;
    if (!pc.placeholder)
      continue;
    if (strcmp(name, "cmd") == 0 && !(allow & T_CMD))
      fail(w, "{cmd} stands for the workload's command and may appear "
              "only in an arm's run");
    if (strcmp(name, "cid") == 0 && !(allow & T_SEL))
      fail(w, "{cid} is the container ID the run's command writes to "
              "{cidfile}, known only while the run goes on; it may appear "
              "only in processes.cgroup and processes.cmdline");
    if ((strcmp(name, "workload") == 0 || strcmp(name, "round") == 0 ||
         strcmp(name, "run_id") == 0 || strcmp(name, "batch_id") == 0 ||
         strcmp(name, "cidfile") == 0) &&
        !(allow & T_RUN))
      fail(w,
           "{%s} has no value here: this command runs once per arm, "
           "not per run (use {%s} in run, cmd, steps, prepare or cleanup)",
           name, name);
    if (in_list(name, builtin_vars))
      continue;
    {
      const char *cand[64];
      size_t nc = 0, i;
      const char *near;
      for (i = 0; i < w->s->n_vars; i++) {
        if (strcmp(w->s->vars[i].name, name) == 0)
          break;
        if (nc < 58)
          cand[nc++] = w->s->vars[i].name;
      }
      if (i < w->s->n_vars)
        continue;
      for (i = 0; builtin_vars[i]; i++)
        cand[nc++] = builtin_vars[i];
      cand[nc] = NULL;
      near = nearest(name, cand, nc);
      if (near)
        fail(w, "unknown placeholder {%s}; did you mean {%s}?", name, near);
      fail(w,
           "unknown placeholder {%s}; declare it in vars, or use one "
           "of {cmd} {arm} {workload} {round} {run_id} {batch_id} "
           "{experiment} {cidfile} {cid} {sheet_dir} {origin} (write {{ for a "
           "literal {)",
           name);
    }
  }
}

static int uses_placeholder(const char *t, const char *name) {
  proto_piece pc;
  const char *p = t;
  while ((p = proto_next_piece(p, &pc)) != NULL)
    if (pc.placeholder && strcmp(pc.name, name) == 0)
      return 1;
  return 0;
}

/* A selection (processes.cgroup, or one of processes.cmdline) makes the
 * processes it matches the run's: they are stopped when the run ends and
 * their memory is counted. Run ids repeat across experiments and data
 * folders (every experiment has a b0001-0001), so a string names this
 * run only with both {experiment} and {run_id}, or with {cid}, a
 * container ID, which is unique by itself. at: the list index, 0 for a
 * single string. */
static void require_run_name(walk *w, const char *key, lua_Integer at,
                             const char *t) {
  if (uses_placeholder(t, "cid") ||
      (uses_placeholder(t, "experiment") && uses_placeholder(t, "run_id")))
    return;
  /* A sheet read or recorded, not run: its history may predate the rule,
   * when a selection had to name the run only by {run_id}. */
  if (!w->s->lua->strict &&
      (uses_placeholder(t, "run_id") || uses_placeholder(t, "cidfile")))
    return;
  size_t mark = path_key(w, key);
  if (at > 0)
    path_index(w, at);
  fail(w,
       "\"%s\" could name processes that are not this run's: the processes "
       "a selection names are stopped when the run ends and their memory "
       "is counted, and run ids repeat across experiments and data "
       "folders (every experiment has a b0001-0001). Hold both "
       "{experiment} and {run_id} (name the container or process "
       "prereg-{experiment}-{run_id}, cgroup /prereg/{experiment}/{run_id}),"
       " or {cid}, the container ID the run's command writes to {cidfile}",
       t);
  path_pop(w, mark);
}

/* A cgroup path is looked up under the cgroup root: a "." or ".."
 * component could lead out of it (to a file that is not a cgroup's list)
 * or up to a hierarchy's root, which holds every process. */
static void check_cgroup_path(walk *w, const char *t) {
  for (const char *p = t; *p;) {
    size_t n = strcspn(p, "/");
    if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
      size_t mark = path_key(w, "cgroup");
      fail(w,
           "\"%s\" has a \"%.*s\" component; a cgroup path goes down from "
           "the cgroup root only (write it without . and .., such as "
           "/prereg/{experiment}/{run_id})",
           t, (int)n, p);
      path_pop(w, mark);
    }
    p += n;
    while (*p == '/')
      p++;
  }
}

enum { OPT = 0, REQ = 1 };

/* Reads string field key of table t into *dst (which the sheet owns).
 * Returns 1 when present. */
static int get_string(walk *w, int t, const char *key, int req, char **dst) {
  size_t mark = path_key(w, key);
  int ty = field(w, t, key);
  if (ty == LUA_TNIL) {
    if (req)
      fail(w, "is required (a string)");
    leave(w, mark);
    return 0;
  }
  if (ty != LUA_TSTRING)
    fail_got(w, -1, "a string");
  if (lua_rawlen(w->L, -1) == 0)
    fail(w, "must not be empty");
  *dst = dup_value(w, -1);
  leave(w, mark);
  return 1;
}

static int get_template(walk *w, int t, const char *key, int req, int allow,
                        char **dst) {
  size_t mark = path_key(w, key);
  int have;
  path_pop(w, mark);
  have = get_string(w, t, key, req, dst);
  if (have) {
    path_key(w, key);
    check_template(w, *dst, allow);
    path_pop(w, mark);
  }
  return have;
}

/* Reads a number; integer demands an integral value. The range is
 * [lo, hi], with an open end where lo_open / hi_open. */
static int get_num(walk *w, int t, const char *key, int req, int integer,
                   double lo, int lo_open, double hi, const char *want,
                   double *out) {
  size_t mark = path_key(w, key);
  int ty = field(w, t, key);
  double x;
  if (ty == LUA_TNIL) {
    if (req)
      fail(w, "is required (%s)", want);
    leave(w, mark);
    return 0;
  }
  if (ty != LUA_TNUMBER)
    fail_got(w, -1, want);
  x = lua_isinteger(w->L, -1) ? (double)lua_tointeger(w->L, -1)
                              : (double)lua_tonumber(w->L, -1);
  if (!isfinite(x) || (integer && x != floor(x)) || x < lo ||
      (lo_open && x == lo) || x > hi)
    fail_got(w, -1, want);
  *out = x;
  leave(w, mark);
  return 1;
}

static int get_bool(walk *w, int t, const char *key, int *out) {
  size_t mark = path_key(w, key);
  int ty = field(w, t, key);
  if (ty == LUA_TNIL) {
    leave(w, mark);
    return 0;
  }
  if (ty != LUA_TBOOLEAN)
    fail_got(w, -1, "true or false");
  *out = lua_toboolean(w->L, -1);
  leave(w, mark);
  return 1;
}

static int get_enum(walk *w, int t, const char *key, const char *const names[],
                    int *out) {
  size_t mark = path_key(w, key);
  int ty = field(w, t, key);
  char want[256];
  if (ty == LUA_TNIL) {
    leave(w, mark);
    return 0;
  }
  if (ty == LUA_TSTRING)
    for (int i = 0; names[i]; i++)
      if (strcmp(lua_tostring(w->L, -1), names[i]) == 0) {
        *out = i;
        leave(w, mark);
        return 1;
      }
  snprintf(want, sizeof want, "\"%s\" or \"%s\"", names[0], names[1]);
  return fail_got(w, -1, want);
}

enum {
  LIST_TEMPLATE = 1, /* per-arm commands: vars and {arm} */
  LIST_UNIQUE = 2,
  LIST_NONEMPTY = 4,
  LIST_RUN_TEMPLATE = 8, /* per-run commands: all but {cmd} */
  LIST_SEL_TEMPLATE = 16 /* process selections: also {cid} */
};

/* Reads a list of non-empty strings into *dst / *n (owned by the
 * sheet). Returns 1 when present. */
static int get_string_list(walk *w, int t, const char *key, int req, int flags,
                           const char *what, char ***dst, size_t *n) {
  lua_State *L = w->L;
  size_t mark = path_key(w, key);
  int ty = field(w, t, key);
  lua_Integer len;
  if (ty == LUA_TNIL) {
    if (req)
      fail(w, "is required (%s)", what);
    leave(w, mark);
    return 0;
  }
  len = list_len(w, -1, what);
  if (len == 0 && (flags & LIST_NONEMPTY))
    fail(w, "must not be empty");
  *dst = alloc_array(w, (size_t)len, sizeof **dst);
  *n = (size_t)len;
  name_set seen = {0};
  if (flags & LIST_UNIQUE)
    set_open(w, &seen, (size_t)len);
  for (lua_Integer i = 1; i <= len; i++) {
    size_t m2 = path_index(w, i);
    if (lua_rawgeti(L, -1, i) != LUA_TSTRING)
      fail_got(w, -1, "a string");
    if (lua_rawlen(L, -1) == 0)
      fail(w, "must not be empty");
    (*dst)[i - 1] = dup_value(w, -1);
    lua_pop(L, 1);
    if (flags & (LIST_TEMPLATE | LIST_RUN_TEMPLATE | LIST_SEL_TEMPLATE))
      check_template(w, (*dst)[i - 1],
                     flags & LIST_SEL_TEMPLATE   ? T_RUN | T_SEL
                     : flags & LIST_RUN_TEMPLATE ? T_RUN
                                                 : T_ARM);
    if (flags & LIST_UNIQUE) {
      size_t j = set_put(&seen, (*dst)[i - 1], (size_t)i);
      if (j)
        fail(w, "\"%s\" is listed twice (also at [%zu])", (*dst)[i - 1], j);
    }
    path_pop(w, m2);
  }
  if (flags & LIST_UNIQUE)
    set_close(w, &seen);
  leave(w, mark);
  return 1;
}

/* Is name of the form [A-Za-z0-9][A-Za-z0-9_.+-]* (at most 64 bytes)? */
static int good_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 64 || !(is_ident((unsigned char)s[0]) && s[0] != '_'))
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!is_ident((unsigned char)s[i]) && !strchr(".+-", s[i]))
      return 0;
  return 1;
}

static void check_name(walk *w, const char *name, const char *what) {
  if (!good_name(name)) {
    size_t mark = path_key(w, "name");
    (void)mark;
    fail(w,
         "\"%s\" is not a usable %s name: use letters, digits and "
         "_ . + - (it appears in file names, CSV and commands)",
         name, what);
  }
}

/* Line of an entry from a unique `key = "value"`, else the fallback. */
static int entry_line(walk *w, int t, const char *key, int fallback) {
  int line = 0;
  if (field(w, t, key) == LUA_TSTRING)
    line = find_line(w->s->text, w->s->text_len, key, lua_tostring(w->L, -1));
  lua_pop(w->L, 1);
  return line > 0 ? line : fallback;
}

/* The parts of a sheet */

static void read_vars(walk *w, int t) {
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  size_t n = 0, i = 0;
  if (field(w, t, "vars") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  path_key(w, "vars");
  if (!lua_istable(L, -1))
    fail_got(w, -1, "a table of names and strings { name = \"value\" }");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
      char buf[64];
      fail(w,
           "has the key %s; vars maps names to strings: "
           "{ name = \"value\" }",
           describe(w, -1, buf, sizeof buf));
    }
    n++;
  }
  if (n > CORE_MAX_VARS)
    fail(w, "has %zu vars; a sheet may declare at most %d", n, CORE_MAX_VARS);
  s->vars = alloc_array(w, n, sizeof *s->vars);
  s->n_vars = n;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    s->vars[i++].name = dup_value(w, -1);
  }
  /* Sorted, so that messages and summaries do not follow hash order. */
  for (i = 1; i < n; i++)
    for (size_t j = i;
         j > 0 && strcmp(s->vars[j - 1].name, s->vars[j].name) > 0; j--) {
      proto_var tmp = s->vars[j];
      s->vars[j] = s->vars[j - 1];
      s->vars[j - 1] = tmp;
    }
  for (i = 0; i < n; i++) {
    const char *name = s->vars[i].name;
    size_t mark = path_key(w, name);
    int ok = is_lower((unsigned char)name[0]) || name[0] == '_';
    for (const char *p = name; *p && ok; p++)
      ok = is_lower((unsigned char)*p) || is_digit((unsigned char)*p) ||
           *p == '_';
    if (!ok || strlen(name) > 64)
      fail(w, "a var name must match [a-z_][a-z0-9_]*");
    if (in_list(name, builtin_vars))
      fail(w, "{%s} is built in; choose another name", name);
    if (field(w, lua_absindex(L, -1), name) != LUA_TSTRING)
      fail_got(w, -1, "a string");
    s->vars[i].value = dup_value(w, -1);
    leave(w, mark);
  }
  leave(w, 0);
}

static void read_image(walk *w, int t, proto_image *img) {
  static const char *const keys[] = {"tree", "digest", "resident", NULL};
  size_t mark = path_key(w, "image");
  int ty = field(w, t, "image");
  int it;
  if (ty == LUA_TNIL) {
    leave(w, mark);
    return;
  }
  if (ty != LUA_TTABLE)
    fail_got(w, -1,
             "a table { tree = \"path\" } or { digest = "
             "\"command\" }");
  it = lua_gettop(w->L);
  check_keys(w, it, keys, 0, "an image");
  get_template(w, it, "tree", OPT, T_ARM, &img->tree);
  get_template(w, it, "digest", OPT, T_ARM, &img->digest_cmd);
  get_template(w, it, "resident", OPT, T_ARM, &img->resident);
  if (img->tree && img->digest_cmd)
    fail(w, "give either tree = \"path\" or digest = \"command\", not "
            "both");
  if (!img->tree && !img->digest_cmd)
    fail(w, "needs tree = \"path\" (a file or folder to hash) or digest = "
            "\"command\" (prints the digest)");
  leave(w, mark);
}

/* Either every arm wraps the workloads' commands ({cmd} in its run) or
 * every arm is a whole command: a mix would run a workload's cmd in some
 * arms and silently ignore it in the others. */
static void check_same_kind(walk *w, const proto_arm *a,
                            const proto_arm *first) {
  if (a->whole == first->whole)
    return;
  path_key(w, "run");
  if (a->whole)
    fail(w,
         "has no {cmd}, so it is a whole command, but arms[1] \"%s\" "
         "wraps the workload's command (its run is \"%s\"); either every "
         "arm's run contains {cmd}, where each workload's cmd goes, or none "
         "does (whole commands, compared as they are, with no cmd in the "
         "workloads)",
         first->name, first->run);
  fail(w,
       "contains {cmd}, but arms[1] \"%s\" is a whole command (its run "
       "has no {cmd}); either every arm's run contains {cmd}, where each "
       "workload's cmd goes, or none does (whole commands, compared as "
       "they are, with no cmd in the workloads)",
       first->name);
}

static void read_arms(walk *w, int t) {
  static const char *const keys[] = {
      "name", "reference", "run", "requires", "versions", "image", NULL};
  proto_sheet *s = w->s;
  int base_line = w->line, have_ref = 0;
  size_t mark;
  s->arms = get_list(
      w, t, "arms",
      "the arms to compare, { { name = \"...\", reference = true }, "
      "{ name = \"...\", run = \"... {cmd}\" } }",
      "a list of arms { { name = ... }, ... }", 2,
      "needs at least two arms: the reference and one to compare with it",
      sizeof *s->arms, &s->n_arms, &mark);
  name_set seen;
  set_open(w, &seen, s->n_arms);
  for (lua_Integer i = 1; i <= (lua_Integer)s->n_arms; i++) {
    proto_arm *a = &s->arms[i - 1];
    size_t m2;
    int at = get_entry(w, i, "a table { name = \"...\", ... }", &m2);
    w->line = a->line = entry_line(w, at, "name", base_line);
    check_keys(w, at, keys, 0, "an arm");
    get_string(w, at, "name", REQ, &a->name);
    check_name(w, a->name, "arm");
    size_t j = set_put(&seen, a->name, (size_t)i);
    if (j) {
      path_key(w, "name");
      fail(w,
           "\"%s\" is already the name of arms[%zu]; arm names "
           "must be unique",
           a->name, j);
    }
    get_bool(w, at, "reference", &a->reference);
    if (a->reference) {
      if (have_ref) {
        path_key(w, "reference");
        fail(w,
             "a second reference arm (arms[%zu] \"%s\" is one "
             "already); exactly one arm is the reference",
             s->reference + 1, s->arms[s->reference].name);
      }
      have_ref = 1;
      s->reference = (size_t)(i - 1);
    }
    if (!get_template(w, at, "run", OPT, T_RUN | T_CMD, &a->run))
      a->run = dup_str(w, "{cmd}");
    a->whole = !uses_placeholder(a->run, "cmd");
    if (i > 1)
      check_same_kind(w, a, &s->arms[0]);
    get_string_list(w, at, "requires", OPT, LIST_TEMPLATE | LIST_NONEMPTY,
                    "a list of commands", &a->requires, &a->n_requires);
    get_string_list(w, at, "versions", OPT, LIST_TEMPLATE | LIST_NONEMPTY,
                    "a list of commands", &a->versions, &a->n_versions);
    read_image(w, at, &a->image);
    leave(w, m2);
  }
  set_close(w, &seen);
  w->line = base_line;
  if (!have_ref)
    fail(w, "no arm has reference = true; mark exactly one, the arm the "
            "others are compared with");
  leave(w, mark);
}

static int is_builtin_metric(const char *m) {
  return in_list(m, builtin_metrics);
}

static void check_metric_name(walk *w, const char *m) {
  const char *near;
  int ok = is_lower((unsigned char)m[0]) && strlen(m) <= 64;
  if (is_builtin_metric(m))
    return;
  for (const char *p = m; *p && ok; p++)
    ok = is_lower((unsigned char)*p) || is_digit((unsigned char)*p) ||
         *p == '_';
  if (!ok)
    fail(w,
         "\"%s\" is neither a built-in metric nor a name [a-z][a-z0-9_]* "
         "that the command reports itself",
         m);
  /* A name one edit away from a built-in is far likelier a typo than a
   * metric the command writes itself, and would only fail at run time. */
  near = nearest(m, builtin_metrics, count_list(builtin_metrics));
  if (near && edit_distance(m, near) <= 1)
    fail(w,
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
    path_key(w, wl->cmd ? "cmd" : "steps");
    fail(w,
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
  size_t mark = path_key(w, "source");
  int ty = field(w, at, "source");
  wl->source = has_cmd ? PROTO_SOURCE_RUN : PROTO_SOURCE_IMPORT;
  if (ty == LUA_TNIL) {
    leave(w, mark);
    return;
  }
  if (ty != LUA_TSTRING)
    fail_got(w, -1, "\"run\", \"import\" or \"both\"");
  {
    const char *v = lua_tostring(w->L, -1), *near;
    int k;
    for (k = 0; names[k] && strcmp(v, names[k]) != 0; k++)
      ;
    if (!names[k]) {
      near = nearest(v, names, count_list(names));
      if (near)
        fail(w,
             "\"%s\" is not a source; did you mean \"%s\"? (\"run\": "
             "prereg runs it, \"import\": only prereg import, \"both\": "
             "imports pooled with its runs)",
             v, near);
      fail(w,
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
    fail(w,
         "\"%s\" needs a cmd or steps for prereg to run; without one the "
         "data come only from prereg import: write source = \"import\" or "
         "add a cmd",
         proto_source_word(wl->source));
  leave(w, mark);
}

static void read_workloads(walk *w, int t) {
  static const char *const keys[] = {
      "name",        "runs",      "warmup",
      "cmd",         "steps",     "prepare",
      "cleanup",     "metrics",   "sample_after_s",
      "timeout_s",   "order",     "cache",
      "expect_exit", "processes", "cgroup",
      "source",      NULL};
  /* What an import-only workload (no cmd, no steps) may not set: it
   * runs nothing, so these could only mislead. */
  static const char *const run_only[] = {
      "warmup",    "prepare", "cleanup", "sample_after_s",
      "timeout_s", "order",   "cache",   "expect_exit",
      "processes", "cgroup",  NULL};
  static const char *const orders[] = {"interleaved", "blocked", NULL};
  static const char *const caches[] = {"warm", "cold", NULL};
  static const char *const proc_keys[] = {"descendants", "cgroup", "cmdline",
                                          NULL};
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  int base_line = w->line;
  size_t mark;
  s->workloads = get_list(
      w, t, "workloads",
      "what to measure, { { name = \"...\", runs = 30, cmd = \"...\" }, "
      "... }",
      "a list of workloads { { name = ... }, ... }", 1,
      "needs at least one workload", sizeof *s->workloads, &s->n_workloads,
      &mark);
  name_set seen;
  set_open(w, &seen, s->n_workloads);
  for (lua_Integer i = 1; i <= (lua_Integer)s->n_workloads; i++) {
    proto_workload *wl = &s->workloads[i - 1];
    size_t m2;
    int at = get_entry(w, i, "a table { name = \"...\", ... }", &m2), runs;
    double x;
    w->line = wl->line = entry_line(w, at, "name", base_line);
    check_keys(w, at, keys, 0, "a workload");
    /* Defaults (proto.h). */
    wl->sample_after_s = 5;
    wl->timeout_s = 120;
    wl->procs.descendants = 1;
    get_string(w, at, "name", REQ, &wl->name);
    check_name(w, wl->name, "workload");
    size_t j = set_put(&seen, wl->name, (size_t)i);
    if (j) {
      path_key(w, "name");
      fail(w,
           "\"%s\" is already the name of workloads[%zu]; workload "
           "names must be unique",
           wl->name, j);
    }
    get_template(w, at, "cmd", OPT, T_RUN, &wl->cmd);
    get_string_list(w, at, "steps", OPT, LIST_RUN_TEMPLATE | LIST_NONEMPTY,
                    "a list of commands", &wl->steps, &wl->n_steps);
    if (wl->cmd && wl->steps)
      fail(w, "has both cmd and steps; give one: cmd is one command, "
              "steps a list run in order in a fresh folder");
    runs = check_by_arms(w, wl);
    read_source(w, at, wl, runs);
    if (!runs)
      for (int k = 0; run_only[k]; k++) {
        if (field(w, at, run_only[k]) != LUA_TNIL) {
          path_key(w, run_only[k]);
          fail(w,
               "this workload has no cmd or steps, so it runs nothing "
               "(its data come from 'prereg import'); remove %s or add a "
               "cmd",
               run_only[k]);
        }
        lua_pop(L, 1);
      }
    if (get_num(w, at, "runs",
                runs && wl->source != PROTO_SOURCE_IMPORT ? REQ : OPT, 1, 1, 0,
                1e6, "a positive integer", &x))
      wl->runs = (long)x;
    if (get_num(w, at, "warmup", OPT, 1, 0, 0, 1e6, "an integer >= 0", &x))
      wl->warmup = (long)x;
    get_template(w, at, "prepare", OPT, T_RUN, &wl->prepare);
    get_template(w, at, "cleanup", OPT, T_RUN, &wl->cleanup);
    if (!get_string_list(w, at, "metrics", OPT, LIST_UNIQUE | LIST_NONEMPTY,
                         "a list of metric names { \"wall_s\", ... }",
                         &wl->metrics, &wl->n_metrics)) {
      wl->metrics = alloc_array(w, 1, sizeof *wl->metrics);
      wl->n_metrics = 1;
      wl->metrics[0] = dup_str(w, "wall_s");
    }
    for (size_t k = 0; k < wl->n_metrics; k++) {
      size_t m3 = path_key(w, "metrics");
      path_index(w, (lua_Integer)k + 1);
      check_metric_name(w, wl->metrics[k]);
      path_pop(w, m3);
    }
    get_bool(w, at, "cgroup", &wl->cgroup);
    if (runs && !wl->cgroup)
      for (size_t k = 0; k < wl->n_metrics; k++)
        if (strncmp(wl->metrics[k], "cg_", 3) == 0 &&
            is_builtin_metric(wl->metrics[k])) {
          path_key(w, "metrics");
          path_index(w, (lua_Integer)k + 1);
          fail(w,
               "%s is read from the run's own cgroup; add cgroup = "
               "true to this workload",
               wl->metrics[k]);
        }
    if (get_num(w, at, "sample_after_s", OPT, 0, 0, 0, 86400,
                "a number of seconds >= 0", &x)) {
      wl->sample_after_s = x;
      if (!proto_workload_has_metric(wl, "pss_mib")) {
        path_key(w, "sample_after_s");
        fail(w, "only pss_mib is sampled; add \"pss_mib\" to metrics or "
                "remove sample_after_s");
      }
    }
    if (get_num(w, at, "timeout_s", OPT, 0, 0, 1, 1e6,
                "a number of seconds > 0", &x))
      wl->timeout_s = x;
    if (runs && proto_workload_has_metric(wl, "pss_mib") &&
        wl->sample_after_s >= wl->timeout_s) {
      path_key(w, "sample_after_s");
      fail(w,
           "%g must be less than timeout_s (%g), or the run is killed "
           "before it is sampled",
           wl->sample_after_s, wl->timeout_s);
    }
    {
      int v;
      if (get_enum(w, at, "order", orders, &v))
        wl->order = v ? PROTO_ORDER_BLOCKED : PROTO_ORDER_INTERLEAVED;
      if (get_enum(w, at, "cache", caches, &v))
        wl->cache = v ? PROTO_CACHE_COLD : PROTO_CACHE_WARM;
    }
    {
      size_t m3 = path_key(w, "expect_exit");
      int ty = field(w, at, "expect_exit");
      const char *want = "an exit code 0..255, \"any\" or \"reference\"";
      wl->expect = PROTO_EXPECT_CODE;
      if (ty == LUA_TNUMBER) {
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0 ||
            lua_tointeger(L, -1) > 255)
          fail_got(w, -1, want);
        wl->expect_code = (int)lua_tointeger(L, -1);
      } else if (ty == LUA_TSTRING &&
                 strcmp(lua_tostring(L, -1), "any") == 0) {
        wl->expect = PROTO_EXPECT_ANY;
      } else if (ty == LUA_TSTRING &&
                 strcmp(lua_tostring(L, -1), "reference") == 0) {
        wl->expect = PROTO_EXPECT_REFERENCE;
      } else if (ty != LUA_TNIL) {
        fail_got(w, -1, want);
      }
      leave(w, m3);
    }
    {
      size_t m3 = path_key(w, "processes");
      int ty = field(w, at, "processes");
      if (ty != LUA_TNIL) {
        int pt = lua_gettop(L);
        if (ty != LUA_TTABLE)
          fail_got(w, pt,
                   "a table { descendants = true, cgroup = "
                   "\"...\", cmdline = { \"...\" } }");
        check_keys(w, pt, proc_keys, 0, "processes");
        get_bool(w, pt, "descendants", &wl->procs.descendants);
        if (get_template(w, pt, "cgroup", OPT, T_RUN | T_SEL,
                         &wl->procs.cgroup)) {
          check_cgroup_path(w, wl->procs.cgroup);
          require_run_name(w, "cgroup", 0, wl->procs.cgroup);
        }
        get_string_list(w, pt, "cmdline", OPT,
                        LIST_SEL_TEMPLATE | LIST_NONEMPTY, "a list of strings",
                        &wl->procs.cmdline, &wl->procs.n_cmdline);
        for (size_t k = 0; k < wl->procs.n_cmdline; k++)
          require_run_name(w, "cmdline", (lua_Integer)k + 1,
                           wl->procs.cmdline[k]);
      }
      leave(w, m3);
    }
    leave(w, m2);
  }
  set_close(w, &seen);
  w->line = base_line;
  leave(w, mark);
}

/* prereg measures a built-in metric itself, in its own unit: a sheet may
 * restate what it is, never change it (seconds printed as "ms", memory
 * read as a time). */
static void check_builtin_decl(walk *w, const proto_metric_decl *d) {
  proto_metric_kind k = proto_metric_kind_of(NULL, d->name);
  const char *unit = proto_metric_unit(d->name);
  const char *what = NULL;
  if (d->has_kind && d->kind != k)
    what = "kind";
  else if (d->higher_better)
    what = "better";
  else if (d->unit && strcmp(d->unit, unit) != 0)
    what = "unit";
  if (!what)
    return;
  path_key(w, what);
  fail(w,
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
  d->line = find_line(s->text, s->text_len, d->name, NULL);
  if (d->line > 0)
    w->line = d->line;
  if (!found)
    fail(w,
         "no workload measures \"%s\"; declare only metrics that a "
         "workload lists",
         d->name);
  if (field(w, t, d->name) != LUA_TTABLE)
    fail_got(w, -1,
             "a table { kind = \"size\", better = \"higher\", unit = "
             "\"ops/s\" }");
  mt = lua_gettop(L);
  check_keys(w, mt, keys, 0, "a metric");
  {
    size_t m2 = path_key(w, "kind");
    int ty = field(w, mt, "kind");
    if (ty != LUA_TNIL) {
      for (k = 0; kinds[k]; k++)
        if (ty == LUA_TSTRING && strcmp(lua_tostring(L, -1), kinds[k]) == 0)
          break;
      if (!kinds[k])
        fail_got(w, -1, "\"time\", \"memory\", \"size\" or \"other\"");
      d->has_kind = 1;
      d->kind = (proto_metric_kind)k;
    }
    leave(w, m2);
  }
  if (get_enum(w, mt, "better", betters, &k))
    d->higher_better = k == 1;
  if (d->higher_better && d->has_kind &&
      (d->kind == PROTO_KIND_TIME || d->kind == PROTO_KIND_MEMORY)) {
    path_key(w, "better");
    fail(w,
         "a %s is better lower; a metric better higher (a throughput) is "
         "kind = \"other\"",
         proto_kind_word(d->kind));
  }
  if (get_string(w, mt, "unit", OPT, &d->unit) &&
      (strlen(d->unit) == 0 || strlen(d->unit) > 16)) {
    path_key(w, "unit");
    fail(w, "must be 1 to 16 bytes, such as \"ops/s\"");
  }
  if (is_builtin_metric(d->name))
    check_builtin_decl(w, d);
}

/* The `metrics` table: what a metric measures, where its name does not
 * say it. Keys are metric names some workload measures. */
static void read_metrics(walk *w, int t) {
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  size_t n = 0, i = 0;
  if (field(w, t, "metrics") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  path_key(w, "metrics");
  if (!lua_istable(L, -1))
    fail_got(w, -1,
             "a table of metric names { out_mib = { kind = \"size\" } }");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
      char buf[64];
      fail(w,
           "has the key %s; metrics maps metric names to tables: "
           "{ out_mib = { kind = \"size\" } }",
           describe(w, -1, buf, sizeof buf));
    }
    n++;
  }
  if (n > CORE_MAX_METRIC_DECLS)
    fail(w,
         "declares %zu metrics; a sheet may declare at most %d (only those "
         "whose name does not say what they measure need an entry)",
         n, CORE_MAX_METRIC_DECLS);
  s->metrics = alloc_array(w, n, sizeof *s->metrics);
  s->n_metrics = n;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    s->metrics[i++].name = dup_value(w, -1);
  }
  /* Sorted, so that messages do not follow hash order. */
  for (i = 1; i < n; i++)
    for (size_t j = i;
         j > 0 && strcmp(s->metrics[j - 1].name, s->metrics[j].name) > 0;
         j--) {
      proto_metric_decl tmp = s->metrics[j];
      s->metrics[j] = s->metrics[j - 1];
      s->metrics[j - 1] = tmp;
    }
  for (i = 0; i < n; i++) {
    size_t mark = path_key(w, s->metrics[i].name);
    read_metric_entry(w, lua_absindex(L, -1), &s->metrics[i]);
    leave(w, mark);
  }
  leave(w, 0);
}

/* A verdict's `names = { memory = "more memory", ... }`: what it reads on
 * each kind of metric. The table is at the top of the stack. */
static void read_verdict_names(walk *w, proto_verdict_rule *v) {
  static const char *const kinds[] = {"time", "memory", "size", "other", NULL};
  lua_State *L = w->L;
  int nt = lua_gettop(L);
  if (!lua_istable(L, nt))
    fail_got(w, nt, "a table { memory = \"more memory\", ... }");
  check_keys(w, nt, kinds, 0, "a verdict's names (the kinds of metric)");
  for (int k = 0; kinds[k]; k++) {
    size_t m = path_key(w, kinds[k]);
    int ty = field(w, nt, kinds[k]);
    if (ty != LUA_TNIL) {
      if (ty != LUA_TSTRING || lua_rawlen(L, -1) == 0 ||
          lua_rawlen(L, -1) > 64)
        fail_got(w, -1, "a word for this verdict (a string of 1 to 64 bytes)");
      v->names[k] = dup_value(w, -1);
      if (strcmp(v->names[k], "inconclusive") == 0)
        fail(w, "\"inconclusive\" is what no match gives; name the verdict "
                "otherwise");
      if (strcmp(v->names[k], "insufficient data") == 0)
        fail(w, "\"insufficient data\" is what an arm with fewer than "
                "min_n values gives; name the verdict otherwise");
    }
    leave(w, m);
  }
}

/* Two verdicts that read the same on one kind of metric could not be
 * told apart there. */
static void check_verdict_words(walk *w) {
  const proto_sheet *s = w->s;
  for (int k = 0; k < PROTO_N_KINDS; k++)
    for (size_t i = 0; i < s->rule.n_verdicts; i++)
      for (size_t j = 0; j < i; j++) {
        const proto_verdict_rule *a = &s->rule.verdicts[j],
                                 *b = &s->rule.verdicts[i];
        const char *wa = proto_verdict_word_on(s, a, (proto_metric_kind)k);
        if (strcmp(wa, proto_verdict_word_on(s, b, (proto_metric_kind)k)) ==
            0) {
          w->line = b->line;
          fail(w,
               "[%zu] and [%zu] both read \"%s\" on a %s metric; give "
               "each its own word in names",
               j + 1, i + 1, wa, proto_kind_word((proto_metric_kind)k));
        }
      }
}

static void read_rule(walk *w, int t) {
  static const char *const keys[] = {"estimator", "confidence", "resamples",
                                     "seed",      "min_n",      "verdicts",
                                     "pairs",     NULL};
  static const char *const vkeys[] = {
      "ci_excludes", "ratio_above", "ratio_below", "ci_within", "names", NULL};
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  proto_rule *r = &s->rule;
  int base_line = w->line, rt;
  double x;
  size_t mark = path_key(w, "rule");
  if (field(w, t, "rule") == LUA_TNIL)
    fail(w, "is required: rule = { estimator = \"median\", confidence = "
            "0.95, resamples = 10000, seed = 17, verdicts = { ... } }");
  rt = lua_gettop(L);
  if (!lua_istable(L, rt))
    fail_got(w, rt, "a table { estimator = \"median\", ... }");
  check_keys(w, rt, keys, 0, "the rule");
  if (!get_string(w, rt, "estimator", OPT, &r->estimator))
    r->estimator = dup_str(w, "median");
  if (strcmp(r->estimator, "median") != 0) {
    path_key(w, "estimator");
    fail(w,
         "must be \"median\" (the estimator prereg implements), got "
         "\"%s\"",
         r->estimator);
  }
  r->confidence = 0.95;
  if (get_num(w, rt, "confidence", OPT, 0, 0, 1, 1,
              "a number between 0 and 1, such as 0.95", &x)) {
    if (x >= 1) {
      path_key(w, "confidence");
      fail(w, "must be a number between 0 and 1, such as 0.95, got %g", x);
    }
    r->confidence = x;
  }
  r->resamples = 10000;
  if (get_num(w, rt, "resamples", OPT, 1, 100, 0, 1e7,
              "an integer from 100 to 10000000", &x))
    r->resamples = (long)x;
  get_num(w, rt, "seed", REQ, 1, 0, 0, 4294967295.0,
          "an integer from 0 to 4294967295", &x);
  r->seed = (unsigned long)x;
  r->min_n = PROTO_MIN_N_DEFAULT;
  if (get_num(w, rt, "min_n", OPT, 1, 1, 0, 1e6,
              "an integer from 1 to 1000000 (the fewest values per arm for "
              "a verdict)",
              &x))
    r->min_n = (long)x;
  size_t pmark = path_key(w, "pairs");
  if (field(w, rt, "pairs") != LUA_TNIL) {
    if (!lua_isstring(L, -1) || lua_type(L, -1) != LUA_TSTRING ||
        strcmp(lua_tostring(L, -1), "all") != 0)
      fail(w, "must be \"all\": every pair of arms, each later one in the "
              "sheet against each earlier one, under this rule");
    r->pairs = PROTO_PAIRS_ALL;
  }
  leave(w, pmark);

  size_t vmark;
  r->verdicts = get_list(
      w, rt, "verdicts",
      "verdicts = { { \"slower\", ci_excludes = 1, ratio_above = 1.1 }, "
      "... } (first match wins)",
      "a list of verdict rules { { \"name\", ... }, ... }", 1,
      "needs at least one verdict rule", sizeof *r->verdicts, &r->n_verdicts,
      &vmark);
  if (r->n_verdicts > CORE_MAX_VERDICTS)
    fail(w, "has %zu verdict rules; a rule may have at most %d", r->n_verdicts,
         CORE_MAX_VERDICTS);
  for (lua_Integer i = 1; i <= (lua_Integer)r->n_verdicts; i++) {
    proto_verdict_rule *v = &r->verdicts[i - 1];
    size_t m2;
    int vt =
        get_entry(w, i, "a table { \"name\", condition = value, ... }", &m2);
    int line = 0;
    if (lua_rawgeti(L, vt, 1) == LUA_TSTRING)
      line = find_line(s->text, s->text_len, NULL, lua_tostring(L, -1));
    lua_pop(L, 1);
    w->line = v->line = line > 0 ? line : base_line;
    check_keys(w, vt, vkeys, 1, "a verdict rule");
    {
      size_t m3 = path_index(w, 1);
      int ty = lua_rawgeti(L, vt, 1);
      if (ty == LUA_TNIL)
        fail(w, "is required: the verdict's name comes first, "
                "{ \"slower\", ... }");
      if (ty != LUA_TSTRING || lua_rawlen(L, -1) == 0 ||
          lua_rawlen(L, -1) > 64)
        fail_got(w, -1, "the verdict's name (a string of 1 to 64 bytes)");
      v->name = dup_value(w, -1);
      lua_pop(L, 1);
      if (strcmp(v->name, "inconclusive") == 0)
        fail(w, "\"inconclusive\" is what no match gives; name the rule "
                "otherwise");
      if (strcmp(v->name, "insufficient data") == 0)
        fail(w, "\"insufficient data\" is what an arm with fewer than "
                "min_n values gives; name the rule otherwise");
      for (lua_Integer j = 1; j < i; j++)
        if (strcmp(r->verdicts[j - 1].name, v->name) == 0)
          fail(w,
               "\"%s\" is already the name of rule.verdicts[%lld]; "
               "verdict names must be unique",
               v->name, (long long)j);
      path_pop(w, m3);
    }
    v->has_ci_excludes = get_num(w, vt, "ci_excludes", OPT, 0, 0, 1, 1e9,
                                 "a positive ratio", &v->ci_excludes);
    v->has_ratio_above = get_num(w, vt, "ratio_above", OPT, 0, 0, 1, 1e9,
                                 "a positive ratio", &v->ratio_above);
    v->has_ratio_below = get_num(w, vt, "ratio_below", OPT, 0, 0, 1, 1e9,
                                 "a positive ratio", &v->ratio_below);
    {
      size_t m3 = path_key(w, "ci_within");
      if (field(w, vt, "ci_within") != LUA_TNIL) {
        const char *want = "a pair of positive ratios { low, high }";
        if (list_len(w, -1, want) != 2)
          fail(w, "must be %s", want);
        for (int k = 0; k < 2; k++) {
          size_t m4 = path_index(w, k + 1);
          if (lua_rawgeti(L, -1, k + 1) != LUA_TNUMBER ||
              !isfinite(lua_tonumber(L, -1)) || lua_tonumber(L, -1) <= 0)
            fail_got(w, -1, "a positive ratio");
          v->ci_within[k] = lua_tonumber(L, -1);
          leave(w, m4);
        }
        if (!(v->ci_within[0] < v->ci_within[1]))
          fail(w, "the low end %g must be below the high end %g",
               v->ci_within[0], v->ci_within[1]);
        v->has_ci_within = 1;
      }
      leave(w, m3);
    }
    if (!v->has_ci_excludes && !v->has_ratio_above && !v->has_ratio_below &&
        !v->has_ci_within)
      fail(w, "has no condition; give at least one of ci_excludes, "
              "ratio_above, ratio_below, ci_within");
    if (v->has_ratio_above && v->has_ratio_below &&
        v->ratio_above >= v->ratio_below)
      fail(w, "ratio_above = %g and ratio_below = %g can never both hold",
           v->ratio_above, v->ratio_below);
    {
      size_t m3 = path_key(w, "names");
      if (field(w, vt, "names") != LUA_TNIL)
        read_verdict_names(w, v);
      leave(w, m3);
    }
    leave(w, m2);
  }
  check_verdict_words(w);
  w->line = base_line;
  lua_pop(L, 2);
  path_pop(w, mark);
}

/* Did-you-mean over the names of a sheet's workloads or arms. */
static void fail_unknown(walk *w, const char *what, const char *name,
                         const char *const cand[], size_t n) {
  const char *near = nearest(name, cand, n);
  char list[1024];
  if (near)
    fail(w, "no %s is named \"%s\"; did you mean \"%s\"?", what, name, near);
  join_list(list, sizeof list, cand, n, "\"", "\"");
  fail(w, "no %s is named \"%s\"; the %ss are: %s", what, name, what, list);
}

static void check_workload_ref(walk *w, const char *name, long *index) {
  const char *cand[256];
  size_t n = 0;
  long i = proto_workload_index(w->s, name);
  if (i >= 0) {
    *index = i;
    return;
  }
  for (size_t k = 0; k < w->s->n_workloads && n < 255; k++)
    cand[n++] = w->s->workloads[k].name;
  cand[n] = NULL;
  fail_unknown(w, "workload", name, cand, n);
}

static void read_hypotheses(walk *w, int t) {
  static const char *const keys[] = {"id",   "says",  "workload", "metric",
                                     "arms", "claim", NULL};
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  int base_line = w->line;
  size_t mark;
  s->hypotheses =
      get_list(w, t, "hypotheses", NULL,
               "a list of hypotheses { { id = \"H1\", ... }, ... }", 0, NULL,
               sizeof *s->hypotheses, &s->n_hypotheses, &mark);
  if (!s->hypotheses)
    return;
  if (s->n_hypotheses > CORE_MAX_HYPOTHESES)
    fail(w,
         "has %zu hypotheses; a sheet may state at most %d (each is "
         "evaluated by every command that analyses): keep the claims the "
         "study is about",
         s->n_hypotheses, CORE_MAX_HYPOTHESES);
  for (lua_Integer i = 1; i <= (lua_Integer)s->n_hypotheses; i++) {
    proto_hypothesis *h = &s->hypotheses[i - 1];
    size_t m2;
    int ht =
        get_entry(w, i, "a table { id = \"H1\", says = \"...\", ... }", &m2);
    int claim_line = 0, id_line;
    long wi = -1;
    h->fn_ref = LUA_NOREF;
    /* The claim's constructor knows its line: the best anchor when the
     * id is not unique in the text. */
    if (field(w, ht, "claim") == LUA_TUSERDATA) {
      proto_claim_ud *c = luaL_testudata(L, -1, PROTO_CLAIM_META);
      if (c)
        claim_line = c->line;
    } else if (lua_isfunction(L, -1)) {
      lua_Debug ar;
      lua_pushvalue(L, -1);
      if (lua_getinfo(L, ">S", &ar))
        claim_line = ar.linedefined;
    }
    lua_pop(L, 1);
    id_line = entry_line(w, ht, "id", 0);
    w->line = h->line = id_line      ? id_line
                        : claim_line ? claim_line
                                     : base_line;
    check_keys(w, ht, keys, 0, "a hypothesis");
    get_string(w, ht, "id", REQ, &h->id);
    {
      int ok = strlen(h->id) <= 32;
      for (const char *p = h->id; *p && ok; p++)
        ok = is_ident((unsigned char)*p) || *p == '.' || *p == '-';
      if (!ok) {
        path_key(w, "id");
        fail(w,
             "\"%s\" is not a usable id: use up to 32 letters, digits "
             "and _ . -",
             h->id);
      }
    }
    for (lua_Integer j = 1; j < i; j++)
      if (strcmp(s->hypotheses[j - 1].id, h->id) == 0) {
        path_key(w, "id");
        fail(w,
             "\"%s\" is already the id of hypotheses[%lld]; ids must "
             "be unique",
             h->id, (long long)j);
      }
    get_string(w, ht, "says", REQ, &h->says);

    /* The claim. */
    {
      size_t m3 = path_key(w, "claim");
      int ty = field(w, ht, "claim");
      proto_claim_ud *c = NULL;
      if (ty == LUA_TNIL)
        fail(w, "is required: at_least(x), below(x), verdict_is(\"name\") "
                "or a function(results)");
      if (ty == LUA_TUSERDATA)
        c = luaL_testudata(L, -1, PROTO_CLAIM_META);
      if (c) {
        h->kind = c->kind;
        h->x = c->x;
        if (c->kind == PROTO_CLAIM_VERDICT_IS) {
          lua_getiuservalue(L, -1, 1);
          h->verdict = dup_value(w, -1);
          lua_pop(L, 1);
        }
        lua_pop(L, 1);
      } else if (ty == LUA_TFUNCTION) {
        lua_Debug ar;
        h->kind = PROTO_CLAIM_FUNCTION;
        /* Its source lines, so that an amendment that rewrites the
         * function is seen as a change of the hypotheses. */
        lua_pushvalue(L, -1);
        if (lua_getinfo(L, ">S", &ar) && ar.linedefined > 0)
          h->fn_source = lines_of(w, w->s->text, w->s->text_len,
                                  ar.linedefined, ar.lastlinedefined);
        h->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
      } else {
        fail_got(w, -1,
                 "at_least(x), below(x), verdict_is(\"name\") or a "
                 "function(results)");
      }
      path_pop(w, m3);
    }
    {
      int fn = h->kind == PROTO_CLAIM_FUNCTION;
      const char *need = fn ? NULL : "is required for this claim";
      if (get_string(w, ht, "workload", OPT, &h->workload)) {
        size_t m3 = path_key(w, "workload");
        check_workload_ref(w, h->workload, &wi);
        path_pop(w, m3);
      } else if (need) {
        path_key(w, "workload");
        fail(w, "%s: the workload the claim is about", need);
      }
      if (get_string(w, ht, "metric", OPT, &h->metric)) {
        size_t m3 = path_key(w, "metric");
        int found = 0;
        if (wi >= 0)
          found = proto_workload_has_metric(&s->workloads[wi], h->metric);
        else
          for (size_t k = 0; k < s->n_workloads && !found; k++)
            found = proto_workload_has_metric(&s->workloads[k], h->metric);
        if (!found && wi >= 0) {
          const proto_workload *wl = &s->workloads[wi];
          char list[1024];
          join_list(list, sizeof list, (const char *const *)wl->metrics,
                    wl->n_metrics, "\"", "\"");
          fail(w,
               "workload \"%s\" does not measure \"%s\"; it measures "
               "%s",
               wl->name, h->metric, list);
        }
        if (!found)
          fail(w, "no workload measures \"%s\"", h->metric);
        path_pop(w, m3);
      } else if (need) {
        path_key(w, "metric");
        fail(w, "%s: one of the workload's metrics", need);
      }
    }
    if (get_string_list(w, ht, "arms", OPT, LIST_UNIQUE | LIST_NONEMPTY,
                        "a list of arm names", &h->arms, &h->n_arms)) {
      for (size_t k = 0; k < h->n_arms; k++) {
        size_t m3 = path_key(w, "arms");
        long ai = proto_arm_index(s, h->arms[k]);
        path_index(w, (lua_Integer)k + 1);
        if (ai < 0) {
          const char *cand[256];
          size_t nc = 0;
          for (size_t a = 0; a < s->n_arms && nc < 255; a++)
            cand[nc++] = s->arms[a].name;
          cand[nc] = NULL;
          fail_unknown(w, "arm", h->arms[k], cand, nc);
        }
        if ((size_t)ai == s->reference)
          fail(w,
               "\"%s\" is the reference arm; a claim is about the "
               "other arms, each compared with it",
               h->arms[k]);
        path_pop(w, m3);
      }
    } else if (h->kind != PROTO_CLAIM_FUNCTION) {
      /* By default a claim is about every arm but the reference. */
      h->arms = alloc_array(w, s->n_arms - 1, sizeof *h->arms);
      for (size_t a = 0; a < s->n_arms; a++)
        if (a != s->reference)
          h->arms[h->n_arms++] = dup_str(w, s->arms[a].name);
    }
    if (h->kind == PROTO_CLAIM_VERDICT_IS &&
        strcmp(h->verdict, "inconclusive") != 0) {
      size_t k;
      for (k = 0; k < s->rule.n_verdicts; k++)
        if (proto_verdict_answers_to(s, &s->rule.verdicts[k], h->verdict))
          break;
      if (k == s->rule.n_verdicts) {
        const char *cand[256];
        size_t nc = 0;
        for (size_t a = 0; a < s->rule.n_verdicts && nc < 254; a++)
          cand[nc++] = s->rule.verdicts[a].name;
        cand[nc++] = "inconclusive";
        cand[nc] = NULL;
        if (claim_line)
          w->line = claim_line;
        path_key(w, "claim");
        fail_unknown(w, "verdict", h->verdict, cand, nc);
      }
    }
    leave(w, m2);
  }
  w->line = base_line;
  leave(w, mark);
}

/* YYYY-MM-DD naming a real day. */
static int good_date(const char *d) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int y, m, day, max;
  if (strlen(d) != 10 || d[4] != '-' || d[7] != '-')
    return 0;
  for (int i = 0; i < 10; i++)
    if (i != 4 && i != 7 && !is_digit((unsigned char)d[i]))
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

static void read_amendments(walk *w, int t) {
  static const char *const keys[] = {"date", "why", "supersedes", NULL};
  proto_sheet *s = w->s;
  int base_line = w->line;
  size_t mark;
  s->amendments = get_list(
      w, t, "amendments", NULL,
      "a list of amendments { { date = \"YYYY-MM-DD\", why = \"...\" }, "
      "... }",
      0, NULL, sizeof *s->amendments, &s->n_amendments, &mark);
  if (!s->amendments)
    return;
  for (lua_Integer i = 1; i <= (lua_Integer)s->n_amendments; i++) {
    proto_amendment *a = &s->amendments[i - 1];
    size_t m2;
    int at = get_entry(
        w, i, "a table { date = \"YYYY-MM-DD\", why = \"...\" }", &m2);
    int line;
    line = entry_line(w, at, "date", 0);
    if (!line)
      line = entry_line(w, at, "why", base_line);
    w->line = a->line = line;
    check_keys(w, at, keys, 0, "an amendment");
    get_string(w, at, "date", REQ, &a->date);
    if (!good_date(a->date)) {
      path_key(w, "date");
      fail(w, "must be a real date written YYYY-MM-DD, got \"%s\"", a->date);
    }
    if (i > 1 && strcmp(a->date, s->amendments[i - 2].date) < 0) {
      path_key(w, "date");
      fail(w,
           "%s is earlier than the date of amendments[%lld] (%s); "
           "amendments are appended in order",
           a->date, (long long)i - 1, s->amendments[i - 2].date);
    }
    get_string(w, at, "why", REQ, &a->why);
    if (get_string_list(w, at, "supersedes", OPT, LIST_UNIQUE | LIST_NONEMPTY,
                        "a list of workload names", &a->supersedes,
                        &a->n_supersedes))
      for (size_t k = 0; k < a->n_supersedes; k++) {
        size_t m3 = path_key(w, "supersedes");
        long wi;
        path_index(w, (lua_Integer)k + 1);
        check_workload_ref(w, a->supersedes[k], &wi);
        path_pop(w, m3);
      }
    leave(w, m2);
  }
  w->line = base_line;
  leave(w, mark);
}

/* The published experiment a replication's sheet repeats, as prereg
 * replicate writes it: read before `published`, whose entries may then
 * name what the replication dropped. */
static void read_replicates(walk *w, int t) {
  static const char *const keys[] = {"experiment", "version", "bundle_sha256",
                                     "published_at", NULL};
  proto_replicates *r;
  size_t mark = path_key(w, "replicates");
  int ty = field(w, t, "replicates"), it;
  double x;
  if (ty == LUA_TNIL) {
    leave(w, mark);
    return;
  }
  if (ty != LUA_TTABLE)
    fail_got(w, -1,
             "a table { experiment = \"...\", version = N, bundle_sha256 = "
             "\"...\", published_at = \"...\" }");
  it = lua_gettop(w->L);
  check_keys(w, it, keys, 0, "replicates");
  r = w->s->replicates = alloc_array(w, 1, sizeof *r);
  r->line = w->line;
  get_string(w, it, "experiment", REQ, &r->experiment);
  if (get_num(w, it, "version", REQ, 1, 0, 0, 1e9, "a version number >= 0",
              &x))
    r->version = (long)x;
  get_string(w, it, "bundle_sha256", REQ, &r->bundle_sha256);
  {
    size_t n = strlen(r->bundle_sha256), k = 0;
    while (k < n &&
           ((r->bundle_sha256[k] >= '0' && r->bundle_sha256[k] <= '9') ||
            (r->bundle_sha256[k] >= 'a' && r->bundle_sha256[k] <= 'f')))
      k++;
    if (n != 64 || k != n) {
      path_key(w, "bundle_sha256");
      fail(w, "must be a SHA-256 in 64 lowercase hex digits, got \"%s\"",
           r->bundle_sha256);
    }
  }
  get_string(w, it, "published_at", REQ, &r->published_at);
  leave(w, mark);
}

/* An arm a published ratio names, which must be the sheet's. */
static void published_arm(walk *w, const char *key, const char *name,
                          long *index) {
  size_t m3 = path_key(w, key);
  if ((*index = proto_arm_index(w->s, name)) < 0) {
    const char *cand[256];
    size_t nc = 0;
    for (size_t a = 0; a < w->s->n_arms && nc < 255; a++)
      cand[nc++] = w->s->arms[a].name;
    cand[nc] = NULL;
    fail_unknown(w, "arm", name, cand, nc);
  }
  path_pop(w, m3);
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
        oom(w);
      pb->missing = why;
      return;
    }
  }
  m3 = path_key(w, "workload");
  check_workload_ref(w, pb->workload, &wi);
  path_pop(w, m3);
  if (!proto_workload_has_metric(&s->workloads[wi], pb->metric)) {
    path_key(w, "metric");
    fail(w, "workload \"%s\" does not measure \"%s\"", pb->workload,
         pb->metric);
  }
  published_arm(w, "arm", pb->arm, &ai);
  if (pb->reference)
    published_arm(w, "reference", pb->reference, &ri);
  if (ai == ri) {
    path_key(w, "arm");
    fail(w,
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
static void read_published(walk *w, int t) {
  static const char *const keys[] = {"workload", "metric",    "arm",  "ratio",
                                     "verdict",  "source",    "note", "ci_low",
                                     "ci_high",  "reference", NULL};
  proto_sheet *s = w->s;
  int base_line = w->line;
  size_t mark;
  s->published = get_list(
      w, t, "published", NULL,
      "a list { { workload = \"...\", metric = \"...\", arm = \"...\", "
      "ratio = 1.48, source = \"...\" }, ... }",
      0, NULL, sizeof *s->published, &s->n_published, &mark);
  if (!s->published)
    return;
  for (lua_Integer i = 1; i <= (lua_Integer)s->n_published; i++) {
    proto_published *pb = &s->published[i - 1];
    size_t m2;
    int at = get_entry(w, i, "a table { workload = \"...\", ... }", &m2);
    double x;
    pb->ci_low = pb->ci_high = NAN;
    w->line = pb->line = entry_line(w, at, "workload", base_line);
    check_keys(w, at, keys, 0, "a published ratio");
    get_string(w, at, "workload", REQ, &pb->workload);
    get_string(w, at, "metric", REQ, &pb->metric);
    get_string(w, at, "arm", REQ, &pb->arm);
    get_string(w, at, "reference", OPT, &pb->reference);
    published_refs(w, pb);
    if (get_num(w, at, "ratio", REQ, 0, 0, 1, 1e12, "a number > 0", &x))
      pb->ratio = x;
    if (get_num(w, at, "ci_low", OPT, 0, 0, 1, 1e12, "a number > 0", &x))
      pb->ci_low = x;
    if (get_num(w, at, "ci_high", OPT, 0, 0, 1, 1e12, "a number > 0", &x))
      pb->ci_high = x;
    if (isnan(pb->ci_low) != isnan(pb->ci_high) ||
        (!isnan(pb->ci_low) && pb->ci_low > pb->ci_high))
      fail(w, "ci_low and ci_high go together, ci_low <= ci_high");
    get_string(w, at, "verdict", OPT, &pb->verdict);
    get_string(w, at, "source", REQ, &pb->source);
    get_string(w, at, "note", OPT, &pb->note);
    leave(w, m2);
  }
  w->line = base_line;
  leave(w, mark);
}

/* Hosts */

/* hosts.kubernetes (on paper): the image and a runtimeClassName per arm,
 * keyed by the arm's name. */
static void read_k8s(walk *w, int ht) {
  static const char *const keys[] = {"image", "runtime_classes", NULL};
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  proto_hosts *h = &s->hosts;
  size_t mark = path_key(w, "kubernetes");
  if (field(w, ht, "kubernetes") == LUA_TNIL) {
    leave(w, mark);
    return;
  }
  int kt = lua_gettop(L);
  if (!lua_istable(L, kt))
    fail_got(w, kt, "a table { image = \"...\", runtime_classes = { ... } }");
  check_keys(w, kt, keys, 0, "hosts.kubernetes");
  get_string(w, kt, "image", OPT, &h->k8s_image);
  size_t m2 = path_key(w, "runtime_classes");
  if (field(w, kt, "runtime_classes") != LUA_TNIL) {
    int ct = lua_gettop(L);
    const char *names[65];
    size_t n = 0;
    if (!lua_istable(L, ct))
      fail_got(w, ct, "a table { ARM = \"runtime class\", ... }");
    for (size_t a = 0; a < s->n_arms && n < 64; a++)
      names[n++] = s->arms[a].name;
    names[n] = NULL;
    check_keys(w, ct, names, 0, "runtime_classes (the arms)");
    h->k8s_arms = alloc_array(w, s->n_arms, sizeof *h->k8s_arms);
    h->k8s_classes = alloc_array(w, s->n_arms, sizeof *h->k8s_classes);
    for (size_t a = 0; a < s->n_arms; a++) {
      char *cls = NULL;
      if (!get_string(w, ct, s->arms[a].name, OPT, &cls))
        continue;
      h->k8s_classes[h->n_k8s] = cls;
      h->k8s_arms[h->n_k8s++] = dup_str(w, s->arms[a].name);
    }
  }
  leave(w, m2);
  leave(w, mark);
}

/* hosts.across: the cross-host rule. */
static void read_across(walk *w, int ht) {
  static const char *const keys[] = {"same_verdict", "max_spread", NULL};
  proto_hosts *h = &w->s->hosts;
  size_t mark = path_key(w, "across");
  if (field(w, ht, "across") == LUA_TNIL)
    fail(w, "is required: the cross-host rule, declared before any data, "
            "across = { same_verdict = true, max_spread = 1.15 } (\"carries "
            "over\" when every counted host gives the same verdict and the "
            "largest host ratio is at most 1.15 times the smallest)");
  int at = lua_gettop(w->L);
  if (!lua_istable(w->L, at))
    fail_got(w, at, "a table { same_verdict = true, max_spread = 1.15 }");
  check_keys(w, at, keys, 0, "hosts.across");
  h->same_verdict = 1;
  get_bool(w, at, "same_verdict", &h->same_verdict);
  get_num(w, at, "max_spread", REQ, 0, 1, 0, 1e9,
          "a ratio of at least 1 (largest host ratio / smallest)",
          &h->max_spread);
  leave(w, mark);
}

static void read_hosts(walk *w, int t) {
  static const char *const keys[] = {
      "backend",   "nodes",         "count",  "partition",  "constraint",
      "min_hosts", "min_completed", "across", "kubernetes", NULL};
  lua_State *L = w->L;
  proto_hosts *h = &w->s->hosts;
  size_t mark = path_key(w, "hosts");
  double x;
  if (field(w, t, "hosts") == LUA_TNIL) {
    leave(w, mark);
    return;
  }
  int ht = lua_gettop(L);
  if (!lua_istable(L, ht))
    fail_got(w, ht, "a table { backend = \"slurm\", nodes = { ... }, ... }");
  h->declared = 1;
  h->line = w->line;
  check_keys(w, ht, keys, 0, "hosts");
  get_string(w, ht, "backend", REQ, &h->backend);
  if (strcmp(h->backend, "slurm") != 0) {
    path_key(w, "backend");
    fail(w,
         "must be \"slurm\" (the scheduler prereg runs on; kubernetes is "
         "written on paper by run --dry-run --backend kubernetes), got "
         "\"%s\"",
         h->backend);
  }
  int named = get_string_list(w, ht, "nodes", OPT, LIST_UNIQUE | LIST_NONEMPTY,
                              "a list of node names", &h->nodes, &h->n_nodes);
  for (size_t i = 0; i < h->n_nodes; i++)
    if (!good_name(h->nodes[i])) {
      path_key(w, "nodes");
      path_index(w, (lua_Integer)i + 1);
      fail(w,
           "\"%s\" is not a usable node name: use letters, digits and "
           "_ . + -",
           h->nodes[i]);
    }
  if (get_num(w, ht, "count", OPT, 1, 1, 0, 4096,
              "an integer from 1 to 4096 (nodes the scheduler picks)", &x))
    h->count = (long)x;
  if (named == (h->count > 0))
    fail(w, "%s",
         named ? "give nodes or count, not both"
               : "needs nodes = { \"n1\", \"n2\", ... } or count = "
                 "N (with partition or constraint)");
  get_string(w, ht, "partition", OPT, &h->partition);
  get_string(w, ht, "constraint", OPT, &h->constraint);
  get_num(w, ht, "min_completed", REQ, 0, 0, 1, 1,
          "a share in (0, 1]: a host counts only when it completed at "
          "least this share of its planned rounds",
          &h->min_completed);
  h->min_hosts = 3;
  if (get_num(w, ht, "min_hosts", OPT, 1, 2, 0, 4096,
              "an integer of at least 2 (counted hosts a cross-host "
              "estimate needs)",
              &x))
    h->min_hosts = (long)x;
  read_across(w, ht);
  read_k8s(w, ht);
  leave(w, mark);
}

/* inputs: paths relative to the sheet's folder that stay inside it, so
 * that the lock names the same files wherever the sheet is. */
static void read_inputs(walk *w, int t) {
  proto_sheet *s = w->s;
  get_string_list(w, t, "inputs", OPT, LIST_UNIQUE, "a list of paths",
                  &s->inputs, &s->n_inputs);
  for (size_t i = 0; i < s->n_inputs; i++) {
    const char *p = s->inputs[i];
    int up = 0;
    for (const char *q = p; *q; q = strchr(q, '/') ? strchr(q, '/') + 1 : "")
      up |= strncmp(q, "..", 2) == 0 && (q[2] == '/' || q[2] == '\0');
    if (p[0] == '/' || up) {
      size_t mark = path_key(w, "inputs");
      path_index(w, (lua_Integer)i + 1);
      fail(w,
           "\"%s\" leaves the sheet's folder; an input is a file or folder "
           "in it, named relative to it (\"work.sh\", \"conf/\")",
           p);
      path_pop(w, mark);
    }
  }
}

/* The plan block */

/* plan.sizes: increasing integers from 1 to PLAN_MAX_SIZE. */
static void read_plan_sizes(walk *w, int t, proto_plan *p) {
  const char *want = "a list of increasing sizes { 5, 10, 20, ... }";
  size_t mark = path_key(w, "sizes");
  if (field(w, t, "sizes") != LUA_TTABLE)
    fail_got(w, -1, want);
  lua_Integer n = list_len(w, -1, want);
  if (n < 1 || n > PLAN_MAX_SIZES)
    fail(w, "must hold 1 to %d sizes", PLAN_MAX_SIZES);
  p->sizes = alloc_array(w, (size_t)n, sizeof *p->sizes);
  p->n_sizes = (size_t)n;
  for (lua_Integer i = 1; i <= n; i++) {
    size_t m2 = path_index(w, i);
    lua_rawgeti(w->L, -1, i);
    if (!lua_isinteger(w->L, -1) || lua_tointeger(w->L, -1) < 1 ||
        lua_tointeger(w->L, -1) > PLAN_MAX_SIZE ||
        (i > 1 && lua_tointeger(w->L, -1) <= p->sizes[i - 2]))
      fail_got(w, -1, "an integer size above the one before it");
    p->sizes[i - 1] = (long)lua_tointeger(w->L, -1);
    leave(w, m2);
  }
  leave(w, mark);
}

/* plan.pilot: what the plan was simulated from. */
static void read_plan_pilot(walk *w, int t, proto_plan *p) {
  static const char *const keys[] = {"sha256", "runs", "source", NULL};
  static const char *const sources[] = {"pilot", "experiment", "bundle", NULL};
  size_t mark = path_key(w, "pilot");
  double x;
  int src = 0;
  if (field(w, t, "pilot") != LUA_TTABLE)
    fail_got(w, -1,
             "a table { sha256 = \"...\", runs = 5, source = "
             "\"pilot\" }");
  int at = lua_gettop(w->L);
  check_keys(w, at, keys, 0, "the plan's pilot");
  get_string(w, at, "sha256", REQ, &p->pilot_sha256);
  for (size_t i = 0; i < 64; i++)
    if (strlen(p->pilot_sha256) != 64 ||
        !strchr("0123456789abcdef", p->pilot_sha256[i])) {
      path_key(w, "sha256");
      fail(w, "must be 64 lowercase hex digits (a SHA-256), got \"%s\"",
           p->pilot_sha256);
    }
  if (get_num(w, at, "runs", REQ, 1, 1, 0, 1e9, "an integer >= 1", &x))
    p->pilot_runs = (long)x;
  if (get_enum(w, at, "source", sources, &src))
    p->pilot_source = dup_str(w, sources[src]);
  else
    fail(w, "source is required (\"pilot\", \"experiment\" or "
            "\"bundle\")");
  leave(w, mark);
}

static void read_plan(walk *w, int t) {
  static const char *const keys[] = {
      "power", "sizes", "sims", "pilot", "expected", "comparisons", NULL};
  proto_plan *p = &w->s->plan;
  size_t mark = path_key(w, "plan");
  double x;
  int ty = field(w, t, "plan");
  if (ty == LUA_TNIL) {
    leave(w, mark);
    return;
  }
  if (ty != LUA_TTABLE)
    fail_got(w, -1,
             "a table { power = 0.8, sizes = { ... }, sims = 1000, "
             "pilot = { ... } } (prereg plan --write writes it)");
  int at = lua_gettop(w->L);
  p->line = w->line;
  p->declared = 1;
  p->expected = p->comparisons = -1;
  check_keys(w, at, keys, 0, "the plan");
  if (get_num(w, at, "power", REQ, 0, 0, 1, 1, "a probability in (0, 1)",
              &x)) {
    if (x >= 1.0) {
      path_key(w, "power");
      fail(w, "must be below 1, got %g", x);
    }
    p->power = x;
  }
  if (get_num(w, at, "sims", REQ, 1, 1, 0, PLAN_MAX_SIMS,
              "an integer from 1 to the plan's budget", &x))
    p->sims = (long)x;
  read_plan_sizes(w, at, p);
  read_plan_pilot(w, at, p);
  if (get_num(w, at, "comparisons", OPT, 1, 0, 0, 1e9, "an integer >= 0", &x))
    p->comparisons = (long)x;
  if (get_num(w, at, "expected", OPT, 0, 0, 0, 1e9, "a number >= 0", &x))
    p->expected = x;
  leave(w, mark);
}

/* The whole sheet */

static void set_top_line(walk *w, const char *key, int protocol_line) {
  int line = find_line(w->s->text, w->s->text_len, key, NULL);
  w->line = line > 0 ? line : protocol_line;
}

/* The caps on what a sheet asks of every later command (core/limits.h):
 * the cells status, analyze and report hold, the bootstrap's work, the
 * runs a batch plans. Counted in doubles: no product can wrap. */
static void check_caps(walk *w, int protocol_line) {
  const proto_sheet *s = w->s;
  double metrics = 0, runs = 0;
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *wl = &s->workloads[i];
    metrics += (double)wl->n_metrics;
    if (proto_workload_runs_itself(wl))
      runs += (double)wl->runs + (double)wl->warmup;
  }
  double cells = metrics * (double)s->n_arms;
  double work = metrics * (double)(s->n_arms - 1) * (double)s->rule.resamples;
  double hosts = s->hosts.n_nodes     ? (double)s->hosts.n_nodes
                 : s->hosts.count > 0 ? (double)s->hosts.count
                                      : 1;
  double plan = runs * (double)s->n_arms * hosts;
  path_pop(w, 0);
  if (cells > (double)CORE_MAX_CELLS) {
    set_top_line(w, "workloads", protocol_line);
    path_key(w, "workloads");
    fail(w,
         "declares %.0f cells (%zu arms x %.0f metrics, those of its %zu "
         "workloads together); "
         "a sheet may declare at most %ld: status, analyze and report "
         "keep one entry per cell, data or not",
         cells, s->n_arms, metrics, s->n_workloads, CORE_MAX_CELLS);
  }
  if (work > (double)CORE_MAX_RESAMPLE_WORK) {
    set_top_line(w, "rule", protocol_line);
    path_key(w, "rule");
    path_key(w, "resamples");
    fail(w,
         "%ld resamples x %.0f comparisons is %.3g resamples per analysis; "
         "at most %.3g are allowed: lower resamples or compare fewer cells",
         s->rule.resamples, metrics * (double)(s->n_arms - 1), work,
         (double)CORE_MAX_RESAMPLE_WORK);
  }
  if (plan > (double)CORE_MAX_PLANNED_RUNS) {
    set_top_line(w, "workloads", protocol_line);
    path_key(w, "workloads");
    fail(w,
         "plans %.0f runs and warm-ups per batch (%zu arms x (runs + warmup) "
         "summed over the workloads%s); a batch may plan at most %ld: lower "
         "runs",
         plan, s->n_arms, hosts > 1 ? ", x hosts" : "", CORE_MAX_PLANNED_RUNS);
  }
}

int proto_convert(lua_State *L) {
  static const char *const keys[] = {
      "id",         "title",   "question",   "author",  "vars",
      "arms",       "image",   "workloads",  "metrics", "rule",
      "hypotheses", "threats", "amendments", "hosts",   "published",
      "inputs",     "plan",    "replicates", NULL};
  walk w;
  proto_sheet *s = lua_touserdata(L, 1);
  int pl = s->lua->protocol_line;
  memset(&w, 0, sizeof w);
  w.L = L;
  w.s = s;
  w.line = pl;
  lua_settop(L, 0);
  lua_getfield(L, LUA_REGISTRYINDEX, PROTO_TABLE_KEY);
  check_keys(&w, 1, keys, 0, "the protocol");

  set_top_line(&w, "id", pl);
  get_string(&w, 1, "id", REQ, &s->id);
  {
    int ok = strlen(s->id) <= 64 && (is_lower((unsigned char)s->id[0]) ||
                                     is_digit((unsigned char)s->id[0]));
    for (const char *p = s->id; *p && ok; p++)
      ok = is_lower((unsigned char)*p) || is_digit((unsigned char)*p) ||
           *p == '-';
    if (!ok) {
      path_key(&w, "id");
      fail(&w,
           "must match [a-z0-9][a-z0-9-]* (at most 64 bytes: it names "
           "the experiment's data folder), got \"%s\"",
           s->id);
    }
  }
  set_top_line(&w, "title", pl);
  get_string(&w, 1, "title", REQ, &s->title);
  set_top_line(&w, "question", pl);
  get_string(&w, 1, "question", OPT, &s->question);
  set_top_line(&w, "author", pl);
  get_string(&w, 1, "author", OPT, &s->author);
  set_top_line(&w, "vars", pl);
  read_vars(&w, 1);
  set_top_line(&w, "arms", pl);
  read_arms(&w, 1);
  set_top_line(&w, "image", pl);
  read_image(&w, 1, &s->image);
  set_top_line(&w, "workloads", pl);
  read_workloads(&w, 1);
  set_top_line(&w, "metrics", pl);
  read_metrics(&w, 1);
  set_top_line(&w, "rule", pl);
  read_rule(&w, 1);
  set_top_line(&w, "hypotheses", pl);
  read_hypotheses(&w, 1);
  set_top_line(&w, "threats", pl);
  get_string_list(&w, 1, "threats", OPT, 0, "a list of strings", &s->threats,
                  &s->n_threats);
  set_top_line(&w, "amendments", pl);
  read_amendments(&w, 1);
  set_top_line(&w, "hosts", pl);
  read_hosts(&w, 1);
  if (s->rule.pairs && s->hosts.declared) {
    set_top_line(&w, "rule", pl);
    path_key(&w, "rule");
    path_key(&w, "pairs");
    fail(&w, "is not made across hosts yet: the cross-host estimate is "
             "of each arm against the reference; remove pairs or hosts");
  }
  set_top_line(&w, "replicates", pl);
  read_replicates(&w, 1);
  set_top_line(&w, "published", pl);
  read_published(&w, 1);
  set_top_line(&w, "inputs", pl);
  read_inputs(&w, 1);
  check_caps(&w, pl);
  set_top_line(&w, "plan", pl);
  read_plan(&w, 1);
  return 0;
}
