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
 *
 * This file holds the walk (field path, messages, reading fields and
 * lists) and the whole sheet's order; each part's reader is in the
 * load_*.c file named after it.
 */
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "protocols/load_internal.h"

const char *const proto_builtin_vars[] = {
    "cmd",        "arm",     "workload", "round",     "run_id", "batch_id",
    "experiment", "cidfile", "cid",      "sheet_dir", "origin", NULL};

/* Small helpers */

int proto_is_lower(int c) {
  return c >= 'a' && c <= 'z';
}
int proto_is_digit(int c) {
  return c >= '0' && c <= '9';
}
int proto_is_ident(int c) {
  return proto_is_lower(c) || proto_is_digit(c) || c == '_' ||
         (c >= 'A' && c <= 'Z');
}

int proto_in_list(const char *name, const char *const list[]) {
  for (int i = 0; list[i]; i++)
    if (strcmp(list[i], name) == 0)
      return 1;
  return 0;
}

/* The closest of candidates to name when close enough to be a typo: the
 * command line's rule, core_nearest. */
const char *proto_nearest(const char *name, const char *const cand[],
                          size_t n) {
  return core_nearest(name, cand, n);
}

size_t proto_count_list(const char *const list[]) {
  size_t n = 0;
  while (list[n])
    n++;
  return n;
}

void proto_join_list(char *out, size_t size, const char *const list[],
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
    if (i > 0 && proto_is_ident((unsigned char)t[i - 1]))
      return 0;
    if (len - i < kl || memcmp(t + i, key, kl) != 0)
      return 0;
    p += kl;
    if (p < len && proto_is_ident((unsigned char)t[p]))
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
int proto_find_line(const char *text, size_t len, const char *key,
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
int
proto_fail(walk *w, const char *fmt, ...) {
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

int proto_oom(walk *w) {
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

size_t proto_path_key(walk *w, const char *key) {
  return path_append(w, "%s%s", w->plen ? "." : "", key);
}

size_t proto_path_index(walk *w, lua_Integer i) {
  return path_append(w, "[%lld]", (long long)i);
}

void proto_path_pop(walk *w, size_t mark) {
  w->plen = mark;
  w->path[mark] = '\0';
}

/* Done with the value on top of the stack, pushed for the path element
 * that mark ends before: pops both. */
void proto_leave(walk *w, size_t mark) {
  lua_pop(w->L, 1);
  proto_path_pop(w, mark);
}

/* A short, exact description of a value for "got ..." */
const char *proto_describe(walk *w, int idx, char *buf, size_t size) {
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

int proto_fail_got(walk *w, int idx, const char *want) {
  char buf[64];
  return proto_fail(w, "must be %s, got %s", want,
                    proto_describe(w, idx, buf, sizeof buf));
}

/* Reading fields */

/* Pushes t[key] without metamethods; returns its type. */
int proto_field(walk *w, int t, const char *key) {
  lua_pushstring(w->L, key);
  return lua_rawget(w->L, t);
}

/* Rejects keys that are not in known (with a did-you-mean) and integer
 * keys beyond npos. what names the table for the list of keys. Keys are
 * examined in sorted order so that messages do not depend on Lua's hash
 * order, which changes from run to run. */
void proto_check_keys(walk *w, int t, const char *const known[],
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
      if (!proto_in_list(k, known) && (!have_bad || strcmp(k, bad) < 0)) {
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
    const char *near = proto_nearest(bad, known, proto_count_list(known));
    int line = proto_find_line(w->s->text, w->s->text_len, bad, NULL);
    char keys[1024];
    if (line > 0)
      w->line = line;
    proto_path_key(w, bad);
    if (near)
      proto_fail(w, "unknown key; did you mean '%s'?", near);
    proto_join_list(keys, sizeof keys, known, proto_count_list(known), "", "");
    proto_fail(w, "unknown key; the keys of %s are: %s", what, keys);
  }
  if (bad_pos) {
    proto_path_index(w, bad_pos);
    if (npos)
      proto_fail(w, "unexpected entry; %s has %lld positional value%s", what,
                 (long long)npos, npos == 1 ? "" : "s");
    proto_fail(w,
               "unexpected entry without a key; the entries of %s are "
               "written key = value",
               what);
  }
  if (bad_type)
    proto_fail(w, "has a key of type %s; keys of %s are names", bad_type,
               what);
}

/* Checks that the value at idx is a list and returns its length. */
lua_Integer proto_list_len(walk *w, int idx, const char *what) {
  lua_State *L = w->L;
  lua_Integer n = 0, max = 0;
  char key[128] = "";
  int have_key = 0;
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx))
    proto_fail_got(w, idx, what);
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
    proto_fail(w,
               "must be %s; found the key '%s' (a list holds only entries "
               "[1], [2], ...; wrap each entry in its own { })",
               what, key);
  if (max != n)
    for (lua_Integer i = 1; i <= max; i++) {
      int ty = lua_rawgeti(L, idx, i);
      lua_pop(L, 1);
      if (ty == LUA_TNIL)
        proto_fail(w, "must be %s without holes; [%lld] is nil", what,
                   (long long)i);
    }
  return n;
}

char *proto_dup_value(walk *w, int idx) {
  size_t len;
  const char *v = lua_tolstring(w->L, idx, &len);
  char *d;
  size_t bad;
  if (memchr(v, '\0', len))
    proto_fail(w, "must not contain a NUL byte");
  /* Text is frozen, analysed and reported: a byte that is not UTF-8
   * would break the JSON and the workbook later, far from its cause. */
  if ((bad = core_utf8_invalid(v, len)) < len)
    proto_fail(
        w,
        "is not valid UTF-8 (at byte %zu of the string, 0x%02X); text in a "
        "sheet must be UTF-8",
        bad + 1, (unsigned)(unsigned char)v[bad]);
  /* A terminal acts on a control character (ESC clears lines and moves
   * the cursor, CR writes over what came before, OSC 8 makes a link):
   * text a reader is shown must show what it holds. */
  if ((bad = core_control_at(v, len)) < len)
    proto_fail(w,
               "holds a control character (byte %zu of the string, 0x%02X); "
               "text in a sheet may hold newlines and tabs but no other "
               "control character (ESC, CR, BEL, DEL, C1)",
               bad + 1, (unsigned)(unsigned char)v[bad]);
  d = core_strndup(v, len);
  if (!d)
    proto_oom(w);
  return d;
}

/* Lines first..last (1-based, inclusive) of text, as a new string. */
char *proto_lines_of(walk *w, const char *text, size_t len, int first,
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
    proto_oom(w);
  return d;
}

char *proto_dup_str(walk *w, const char *v) {
  char *d = core_strdup(v);
  if (!d)
    proto_oom(w);
  return d;
}

void *proto_alloc_array(walk *w, size_t n, size_t size) {
  void *p = core_calloc(n ? n : 1, size);
  if (!p)
    proto_oom(w);
  return p;
}

/* Pushes t[key], a list, and appends key to the path (the mark to pop
 * is *mark). Absent: fails with "is required: " + missing, or when missing
 * is NULL (an optional list) pops it, restores the path and returns NULL
 * with *n = 0. Fewer than min entries fails with too_few. Otherwise
 * returns *n zeroed elements of size bytes, attached to nothing yet: the
 * caller stores them in the sheet at once. shape describes the list for
 * "got ..." messages. */
void *proto_get_list(walk *w, int t, const char *key, const char *missing,
                     const char *shape, lua_Integer min, const char *too_few,
                     size_t size, size_t *n, size_t *mark) {
  *mark = proto_path_key(w, key);
  *n = 0;
  if (proto_field(w, t, key) == LUA_TNIL) {
    if (missing)
      proto_fail(w, "is required: %s", missing);
    lua_pop(w->L, 1);
    proto_path_pop(w, *mark);
    return NULL;
  }
  lua_Integer len = proto_list_len(w, -1, shape);
  if (len < min)
    proto_fail(w, "%s", too_few);
  *n = (size_t)len;
  return proto_alloc_array(w, (size_t)len, size);
}

/* Pushes entry i of the list on top of the stack and appends [i] to the
 * path (the mark to pop is *mark); fails with "got ..." unless it is a
 * table of the given shape. Returns its stack index. */
int proto_get_entry(walk *w, lua_Integer i, const char *shape, size_t *mark) {
  *mark = proto_path_index(w, i);
  lua_rawgeti(w->L, -1, i);
  int at = lua_gettop(w->L);
  if (!lua_istable(w->L, at))
    proto_fail_got(w, at, shape);
  return at;
}

void proto_set_open(walk *w, name_set *h, size_t n) {
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
size_t proto_set_put(name_set *h, const char *name, size_t at) {
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

void proto_set_close(walk *w, name_set *h) {
  luaL_unref(w->L, LUA_REGISTRYINDEX, h->ref);
  memset(h, 0, sizeof *h);
}

/* Validates the {name} placeholders of a template. */
static void check_template(walk *w, const char *t, int allow) {
  proto_piece pc;
  const char *p = t;
  while ((p = proto_next_piece(p, &pc)) != NULL) {
    const char *name = pc.name;
    if (!pc.placeholder)
      continue;
    if (strcmp(name, "cmd") == 0 && !(allow & T_CMD))
      proto_fail(w, "{cmd} stands for the workload's command and may appear "
                    "only in an arm's run");
    if (strcmp(name, "cid") == 0 && !(allow & T_SEL))
      proto_fail(w,
                 "{cid} is the container ID the run's command writes to "
                 "{cidfile}, known only while the run goes on; it may appear "
                 "only in processes.cgroup and processes.cmdline");
    if ((strcmp(name, "workload") == 0 || strcmp(name, "round") == 0 ||
         strcmp(name, "run_id") == 0 || strcmp(name, "batch_id") == 0 ||
         strcmp(name, "cidfile") == 0) &&
        !(allow & T_RUN))
      proto_fail(
          w,
          "{%s} has no value here: this command runs once per arm, "
          "not per run (use {%s} in run, cmd, steps, prepare or cleanup)",
          name, name);
    if (proto_in_list(name, proto_builtin_vars))
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
      for (i = 0; proto_builtin_vars[i]; i++)
        cand[nc++] = proto_builtin_vars[i];
      cand[nc] = NULL;
      near = proto_nearest(name, cand, nc);
      if (near)
        proto_fail(w, "unknown placeholder {%s}; did you mean {%s}?", name,
                   near);
      proto_fail(
          w,
          "unknown placeholder {%s}; declare it in vars, or use one "
          "of {cmd} {arm} {workload} {round} {run_id} {batch_id} "
          "{experiment} {cidfile} {cid} {sheet_dir} {origin} (write {{ for a "
          "literal {)",
          name);
    }
  }
}

int proto_uses_placeholder(const char *t, const char *name) {
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
void proto_require_run_name(walk *w, const char *key, lua_Integer at,
                            const char *t) {
  if (proto_uses_placeholder(t, "cid") ||
      (proto_uses_placeholder(t, "experiment") &&
       proto_uses_placeholder(t, "run_id")))
    return;
  /* A sheet read or recorded, not run: its history may predate the rule,
   * when a selection had to name the run only by {run_id}. */
  if (!w->s->lua->strict && (proto_uses_placeholder(t, "run_id") ||
                             proto_uses_placeholder(t, "cidfile")))
    return;
  size_t mark = proto_path_key(w, key);
  if (at > 0)
    proto_path_index(w, at);
  proto_fail(
      w,
      "\"%s\" could name processes that are not this run's: the processes "
      "a selection names are stopped when the run ends and their memory "
      "is counted, and run ids repeat across experiments and data "
      "folders (every experiment has a b0001-0001). Hold both "
      "{experiment} and {run_id} (name the container or process "
      "prereg-{experiment}-{run_id}, cgroup /prereg/{experiment}/{run_id}),"
      " or {cid}, the container ID the run's command writes to {cidfile}",
      t);
  proto_path_pop(w, mark);
}

/* A cgroup path is looked up under the cgroup root: a "." or ".."
 * component could lead out of it (to a file that is not a cgroup's list)
 * or up to a hierarchy's root, which holds every process. */
void proto_check_cgroup_path(walk *w, const char *t) {
  for (const char *p = t; *p;) {
    size_t n = strcspn(p, "/");
    if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
      size_t mark = proto_path_key(w, "cgroup");
      proto_fail(
          w,
          "\"%s\" has a \"%.*s\" component; a cgroup path goes down from "
          "the cgroup root only (write it without . and .., such as "
          "/prereg/{experiment}/{run_id})",
          t, (int)n, p);
      proto_path_pop(w, mark);
    }
    p += n;
    while (*p == '/')
      p++;
  }
}

/* Reads string field key of table t into *dst (which the sheet owns).
 * Returns 1 when present. */
int proto_get_string(walk *w, int t, const char *key, int req, char **dst) {
  size_t mark = proto_path_key(w, key);
  int ty = proto_field(w, t, key);
  if (ty == LUA_TNIL) {
    if (req)
      proto_fail(w, "is required (a string)");
    proto_leave(w, mark);
    return 0;
  }
  if (ty != LUA_TSTRING)
    proto_fail_got(w, -1, "a string");
  if (lua_rawlen(w->L, -1) == 0)
    proto_fail(w, "must not be empty");
  *dst = proto_dup_value(w, -1);
  proto_leave(w, mark);
  return 1;
}

int proto_get_template(walk *w, int t, const char *key, int req, int allow,
                       char **dst) {
  size_t mark = proto_path_key(w, key);
  int have;
  proto_path_pop(w, mark);
  have = proto_get_string(w, t, key, req, dst);
  if (have) {
    proto_path_key(w, key);
    check_template(w, *dst, allow);
    proto_path_pop(w, mark);
  }
  return have;
}

/* Reads a number; integer demands an integral value. The range is
 * [lo, hi], with an open end where lo_open / hi_open. */
int proto_get_num(walk *w, int t, const char *key, int req, int integer,
                  double lo, int lo_open, double hi, const char *want,
                  double *out) {
  size_t mark = proto_path_key(w, key);
  int ty = proto_field(w, t, key);
  double x;
  if (ty == LUA_TNIL) {
    if (req)
      proto_fail(w, "is required (%s)", want);
    proto_leave(w, mark);
    return 0;
  }
  if (ty != LUA_TNUMBER)
    proto_fail_got(w, -1, want);
  x = lua_isinteger(w->L, -1) ? (double)lua_tointeger(w->L, -1)
                              : (double)lua_tonumber(w->L, -1);
  if (!isfinite(x) || (integer && x != floor(x)) || x < lo ||
      (lo_open && x == lo) || x > hi)
    proto_fail_got(w, -1, want);
  *out = x;
  proto_leave(w, mark);
  return 1;
}

int proto_get_bool(walk *w, int t, const char *key, int *out) {
  size_t mark = proto_path_key(w, key);
  int ty = proto_field(w, t, key);
  if (ty == LUA_TNIL) {
    proto_leave(w, mark);
    return 0;
  }
  if (ty != LUA_TBOOLEAN)
    proto_fail_got(w, -1, "true or false");
  *out = lua_toboolean(w->L, -1);
  proto_leave(w, mark);
  return 1;
}

int proto_get_enum(walk *w, int t, const char *key, const char *const names[],
                   int *out) {
  size_t mark = proto_path_key(w, key);
  int ty = proto_field(w, t, key);
  char want[256];
  if (ty == LUA_TNIL) {
    proto_leave(w, mark);
    return 0;
  }
  if (ty == LUA_TSTRING)
    for (int i = 0; names[i]; i++)
      if (strcmp(lua_tostring(w->L, -1), names[i]) == 0) {
        *out = i;
        proto_leave(w, mark);
        return 1;
      }
  snprintf(want, sizeof want, "\"%s\" or \"%s\"", names[0], names[1]);
  return proto_fail_got(w, -1, want);
}

/* Reads a list of non-empty strings into *dst / *n (owned by the
 * sheet). Returns 1 when present. */
int proto_get_string_list(walk *w, int t, const char *key, int req, int flags,
                          const char *what, char ***dst, size_t *n) {
  lua_State *L = w->L;
  size_t mark = proto_path_key(w, key);
  int ty = proto_field(w, t, key);
  lua_Integer len;
  if (ty == LUA_TNIL) {
    if (req)
      proto_fail(w, "is required (%s)", what);
    proto_leave(w, mark);
    return 0;
  }
  len = proto_list_len(w, -1, what);
  if (len == 0 && (flags & LIST_NONEMPTY))
    proto_fail(w, "must not be empty");
  *dst = proto_alloc_array(w, (size_t)len, sizeof **dst);
  *n = (size_t)len;
  name_set seen = {0};
  if (flags & LIST_UNIQUE)
    proto_set_open(w, &seen, (size_t)len);
  for (lua_Integer i = 1; i <= len; i++) {
    size_t m2 = proto_path_index(w, i);
    if (lua_rawgeti(L, -1, i) != LUA_TSTRING)
      proto_fail_got(w, -1, "a string");
    if (lua_rawlen(L, -1) == 0)
      proto_fail(w, "must not be empty");
    (*dst)[i - 1] = proto_dup_value(w, -1);
    lua_pop(L, 1);
    if (flags & (LIST_TEMPLATE | LIST_RUN_TEMPLATE | LIST_SEL_TEMPLATE))
      check_template(w, (*dst)[i - 1],
                     flags & LIST_SEL_TEMPLATE   ? T_RUN | T_SEL
                     : flags & LIST_RUN_TEMPLATE ? T_RUN
                                                 : T_ARM);
    if (flags & LIST_UNIQUE) {
      size_t j = proto_set_put(&seen, (*dst)[i - 1], (size_t)i);
      if (j)
        proto_fail(w, "\"%s\" is listed twice (also at [%zu])", (*dst)[i - 1],
                   j);
    }
    proto_path_pop(w, m2);
  }
  if (flags & LIST_UNIQUE)
    proto_set_close(w, &seen);
  proto_leave(w, mark);
  return 1;
}

/* Is name of the form [A-Za-z0-9][A-Za-z0-9_.+-]* (at most 64 bytes)? */
int proto_good_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 64 ||
      !(proto_is_ident((unsigned char)s[0]) && s[0] != '_'))
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!proto_is_ident((unsigned char)s[i]) && !strchr(".+-", s[i]))
      return 0;
  return 1;
}

void proto_check_name(walk *w, const char *name, const char *what) {
  if (!proto_good_name(name)) {
    size_t mark = proto_path_key(w, "name");
    (void)mark;
    proto_fail(w,
               "\"%s\" is not a usable %s name: use letters, digits and "
               "_ . + - (it appears in file names, CSV and commands)",
               name, what);
  }
}

/* Line of an entry from a unique `key = "value"`, else the fallback. */
int proto_entry_line(walk *w, int t, const char *key, int fallback) {
  int line = 0;
  if (proto_field(w, t, key) == LUA_TSTRING)
    line = proto_find_line(w->s->text, w->s->text_len, key,
                           lua_tostring(w->L, -1));
  lua_pop(w->L, 1);
  return line > 0 ? line : fallback;
}

/* The whole sheet */

static void set_top_line(walk *w, const char *key, int protocol_line) {
  int line = proto_find_line(w->s->text, w->s->text_len, key, NULL);
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
  proto_path_pop(w, 0);
  if (cells > (double)CORE_MAX_CELLS) {
    set_top_line(w, "workloads", protocol_line);
    proto_path_key(w, "workloads");
    proto_fail(
        w,
        "declares %.0f cells (%zu arms x %.0f metrics, those of its %zu "
        "workloads together); "
        "a sheet may declare at most %ld: status, analyze and report "
        "keep one entry per cell, data or not",
        cells, s->n_arms, metrics, s->n_workloads, CORE_MAX_CELLS);
  }
  if (work > (double)CORE_MAX_RESAMPLE_WORK) {
    set_top_line(w, "rule", protocol_line);
    proto_path_key(w, "rule");
    proto_path_key(w, "resamples");
    proto_fail(
        w,
        "%ld resamples x %.0f comparisons is %.3g resamples per analysis; "
        "at most %.3g are allowed: lower resamples or compare fewer cells",
        s->rule.resamples, metrics * (double)(s->n_arms - 1), work,
        (double)CORE_MAX_RESAMPLE_WORK);
  }
  if (plan > (double)CORE_MAX_PLANNED_RUNS) {
    set_top_line(w, "workloads", protocol_line);
    proto_path_key(w, "workloads");
    proto_fail(
        w,
        "plans %.0f runs and warm-ups per batch (%zu arms x (runs + warmup) "
        "summed over the workloads%s); a batch may plan at most %ld: lower "
        "runs",
        plan, s->n_arms, hosts > 1 ? ", x hosts" : "", CORE_MAX_PLANNED_RUNS);
  }
}

/* The sheet's id names the experiment's data folder. */
static void check_id(walk *w, const char *id) {
  int ok = strlen(id) <= 64 && (proto_is_lower((unsigned char)id[0]) ||
                                proto_is_digit((unsigned char)id[0]));
  for (const char *p = id; *p && ok; p++)
    ok = proto_is_lower((unsigned char)*p) ||
         proto_is_digit((unsigned char)*p) || *p == '-';
  if (!ok) {
    proto_path_key(w, "id");
    proto_fail(w,
               "must match [a-z0-9][a-z0-9-]* (at most 64 bytes: it names "
               "the experiment's data folder), got \"%s\"",
               id);
  }
}

int proto_convert(lua_State *L) {
  static const char *const keys[] = {
      "id",         "title",   "question",   "author",     "vars",
      "arms",       "image",   "workloads",  "metrics",    "rule",
      "hypotheses", "threats", "amendments", "hosts",      "published",
      "inputs",     "plan",    "replicates", "conditions", "cpus",
      NULL};
  walk w;
  proto_sheet *s = lua_touserdata(L, 1);
  int pl = s->lua->protocol_line;
  memset(&w, 0, sizeof w);
  w.L = L;
  w.s = s;
  w.line = pl;
  lua_settop(L, 0);
  lua_getfield(L, LUA_REGISTRYINDEX, PROTO_TABLE_KEY);
  proto_check_keys(&w, 1, keys, 0, "the protocol");

  set_top_line(&w, "id", pl);
  proto_get_string(&w, 1, "id", REQ, &s->id);
  check_id(&w, s->id);
  set_top_line(&w, "title", pl);
  proto_get_string(&w, 1, "title", REQ, &s->title);
  set_top_line(&w, "question", pl);
  proto_get_string(&w, 1, "question", OPT, &s->question);
  set_top_line(&w, "author", pl);
  proto_get_string(&w, 1, "author", OPT, &s->author);
  set_top_line(&w, "vars", pl);
  proto_read_vars(&w, 1);
  set_top_line(&w, "conditions", pl);
  proto_read_conditions(&w, 1);
  set_top_line(&w, "arms", pl);
  proto_read_arms(&w, 1);
  set_top_line(&w, "image", pl);
  proto_read_image(&w, 1, &s->image);
  set_top_line(&w, "workloads", pl);
  proto_read_workloads(&w, 1);
  set_top_line(&w, "metrics", pl);
  proto_read_metrics(&w, 1);
  set_top_line(&w, "rule", pl);
  proto_read_rule(&w, 1);
  set_top_line(&w, "hypotheses", pl);
  proto_read_hypotheses(&w, 1);
  set_top_line(&w, "threats", pl);
  proto_get_string_list(&w, 1, "threats", OPT, 0, "a list of strings",
                        &s->threats, &s->n_threats);
  set_top_line(&w, "amendments", pl);
  proto_read_amendments(&w, 1);
  set_top_line(&w, "hosts", pl);
  proto_read_hosts(&w, 1);
  if (s->rule.pairs && s->hosts.declared) {
    set_top_line(&w, "rule", pl);
    proto_path_key(&w, "rule");
    proto_path_key(&w, "pairs");
    proto_fail(&w, "is not made across hosts yet: the cross-host estimate is "
                   "of each arm against the reference; remove pairs or hosts");
  }
  set_top_line(&w, "rule", pl);
  proto_check_looks(&w);
  set_top_line(&w, "replicates", pl);
  proto_read_replicates(&w, 1);
  set_top_line(&w, "published", pl);
  proto_read_published(&w, 1);
  set_top_line(&w, "inputs", pl);
  proto_read_inputs(&w, 1);
  check_caps(&w, pl);
  set_top_line(&w, "plan", pl);
  proto_read_plan(&w, 1);
  return 0;
}
