/* load_conditions.c: the machine's conditions a sheet registers (bounds
 * on each run's noise, facts the host must have), the CPUs runs are
 * pinned to, and A/A arms.
 * SPDX-License-Identifier: MIT
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "protocols/load_internal.h"

/* One number of a CPU list at *p (advanced past it), or -1. */
static long cpu_number(const char **p) {
  long v = 0;
  if (**p < '0' || **p > '9')
    return -1;
  while (**p >= '0' && **p <= '9') {
    v = v * 10 + (**p - '0');
    if (v > CORE_MAX_CPU)
      return -1;
    (*p)++;
  }
  return v;
}

long proto_cpus_parse(const char *list, unsigned char *bits, size_t cap) {
  const char *p = list;
  long n = 0;
  if (!p || !*p)
    return -1;
  for (;;) {
    long lo = cpu_number(&p), hi = lo;
    if (lo < 0)
      return -1;
    if (*p == '-') {
      p++;
      if ((hi = cpu_number(&p)) < lo)
        return -1;
    }
    for (long c = lo; c <= hi; c++) {
      size_t byte = (size_t)c / 8;
      unsigned char bit = (unsigned char)(1u << (c % 8));
      if (bits && byte < cap && !(bits[byte] & bit)) {
        bits[byte] |= bit;
        n++;
      } else if (!bits) {
        n++;
      }
    }
    if (!*p)
      return n;
    if (*p++ != ',')
      return -1;
  }
}

/* A `cpus` key of table t (the sheet or an arm) into *dst. */
static void read_cpus(walk *w, int t, char **dst) {
  if (!proto_get_string(w, t, "cpus", OPT, dst))
    return;
  if (proto_cpus_parse(*dst, NULL, 0) < 0) {
    size_t mark = proto_path_key(w, "cpus");
    proto_fail(w,
               "\"%s\" is not a CPU list; give CPU numbers (0 to %d) and "
               "ranges joined by commas, as \"1-2\" or \"0,2-3\"",
               *dst, CORE_MAX_CPU);
    proto_path_pop(w, mark);
  }
}

/* A required yes/no fact: -1 when not given. */
static int read_required(walk *w, int t, const char *key) {
  int v = -1;
  if (!proto_get_bool(w, t, key, &v))
    return -1;
  return v;
}

void proto_read_conditions(walk *w, int t) {
  static const char *const keys[] = {"max_load",     "wait_s",   "max_swap_in",
                                     "max_throttle", "governor", "aslr",
                                     "boost",        "smt",      NULL};
  proto_conditions *c = &w->s->conditions;
  c->max_load = c->max_swap_in = c->max_throttle = -1;
  c->aslr = c->boost = c->smt = -1;
  read_cpus(w, t, &w->s->cpus);
  size_t mark = proto_path_key(w, "conditions");
  int ty = proto_field(w, t, "conditions");
  if (ty == LUA_TNIL) {
    proto_leave(w, mark);
    return;
  }
  if (ty != LUA_TTABLE)
    proto_fail_got(w, -1,
                   "a table { max_load = 1.0, wait_s = 120, max_swap_in = 0, "
                   "max_throttle = 0, governor = \"performance\", aslr = "
                   "true }");
  int at = lua_gettop(w->L);
  c->declared = 1;
  c->line = w->line;
  proto_check_keys(w, at, keys, 0, "the conditions");
  proto_get_num(w, at, "max_load", OPT, 0, 0, 0, 1e6, "a load average >= 0",
                &c->max_load);
  if (!proto_get_num(w, at, "wait_s", OPT, 0, 0, 0, 86400,
                     "seconds from 0 to 86400", &c->wait_s))
    c->wait_s = 0;
  proto_get_num(w, at, "max_swap_in", OPT, 1, 0, 0, 1e15,
                "a count of pages >= 0", &c->max_swap_in);
  proto_get_num(w, at, "max_throttle", OPT, 1, 0, 0, 1e15,
                "a count of events >= 0", &c->max_throttle);
  proto_get_string(w, at, "governor", OPT, &c->governor);
  c->aslr = read_required(w, at, "aslr");
  c->boost = read_required(w, at, "boost");
  c->smt = read_required(w, at, "smt");
  proto_leave(w, mark);
}

void proto_read_arm_conditions(walk *w, int at, proto_arm *a) {
  read_cpus(w, at, &a->cpus);
  proto_get_bool(w, at, "null", &a->null);
  if (a->null && a->reference) {
    size_t mark = proto_path_key(w, "null");
    proto_fail(w, "the reference arm cannot be an A/A arm; null = true "
                  "marks another arm that runs the reference's command "
                  "again");
    proto_path_pop(w, mark);
  }
}

/* Each A/A arm runs the reference's command: its run is a copy of the
 * reference's (one it gave itself is refused, as it would not be the
 * same command); arms with no cpus of their own take the sheet's. */
void proto_null_arms(walk *w) {
  proto_sheet *s = w->s;
  const proto_arm *ref = &s->arms[s->reference];
  for (size_t i = 0; i < s->n_arms; i++) {
    proto_arm *a = &s->arms[i];
    if (!a->cpus && s->cpus)
      a->cpus = proto_dup_str(w, s->cpus);
    if (!a->null)
      continue;
    if (strcmp(a->run, "{cmd}") != 0 && strcmp(a->run, ref->run) != 0) {
      w->line = a->line;
      size_t mark = proto_path_index(w, (lua_Integer)i + 1);
      proto_path_key(w, "run");
      (void)mark;
      proto_fail(w,
                 "an A/A arm (null = true) runs the reference's command "
                 "\"%s\"; remove its run",
                 ref->run);
    }
    core_free(a->run);
    a->run = NULL;
    a->run = proto_dup_str(w, ref->run);
    a->whole = ref->whole;
  }
}
