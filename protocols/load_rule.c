/* load_rule.c: the decision rule of a sheet and its verdicts.
 * SPDX-License-Identifier: MIT
 */
#include <float.h>
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "protocols/load_internal.h"

/* A verdict's `names = { memory = "more memory", ... }`: what it reads on
 * each kind of metric. The table is at the top of the stack. */
static void read_verdict_names(walk *w, proto_verdict_rule *v) {
  static const char *const kinds[] = {"time", "memory", "size", "other", NULL};
  lua_State *L = w->L;
  int nt = lua_gettop(L);
  if (!lua_istable(L, nt))
    proto_fail_got(w, nt, "a table { memory = \"more memory\", ... }");
  proto_check_keys(w, nt, kinds, 0, "a verdict's names (the kinds of metric)");
  for (int k = 0; kinds[k]; k++) {
    size_t m = proto_path_key(w, kinds[k]);
    int ty = proto_field(w, nt, kinds[k]);
    if (ty != LUA_TNIL) {
      if (ty != LUA_TSTRING || lua_rawlen(L, -1) == 0 ||
          lua_rawlen(L, -1) > 64)
        proto_fail_got(w, -1,
                       "a word for this verdict (a string of 1 to 64 bytes)");
      v->names[k] = proto_dup_value(w, -1);
      if (strcmp(v->names[k], "inconclusive") == 0)
        proto_fail(w,
                   "\"inconclusive\" is what no match gives; name the verdict "
                   "otherwise");
      if (strcmp(v->names[k], "insufficient data") == 0)
        proto_fail(w, "\"insufficient data\" is what an arm with fewer than "
                      "min_n values gives; name the verdict otherwise");
    }
    proto_leave(w, m);
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
          proto_fail(w,
                     "[%zu] and [%zu] both read \"%s\" on a %s metric; give "
                     "each its own word in names",
                     j + 1, i + 1, wa, proto_kind_word((proto_metric_kind)k));
        }
      }
}

/* How the error is spent: over looks (spending) and over many
 * comparisons (family). */
static void read_corrections(walk *w, int rt, proto_rule *r) {
  static const char *const families[] = {"none", "holm", "bonferroni", NULL};
  size_t mark = proto_path_key(w, "spending");
  int ty = proto_field(w, rt, "spending");
  if (ty != LUA_TNIL &&
      (ty != LUA_TSTRING || strcmp(lua_tostring(w->L, -1), "bonferroni") != 0))
    proto_fail(w, "must be \"bonferroni\" (each of K looks at confidence "
                  "1 - (1 - confidence) / K), the spending prereg implements");
  r->spending = PROTO_SPENDING_BONFERRONI;
  proto_leave(w, mark);
  mark = proto_path_key(w, "family");
  ty = proto_field(w, rt, "family");
  r->family = PROTO_FAMILY_NONE;
  if (ty != LUA_TNIL) {
    int k = 0;
    if (ty == LUA_TSTRING)
      while (families[k] && strcmp(lua_tostring(w->L, -1), families[k]))
        k++;
    if (ty != LUA_TSTRING || !families[k])
      proto_fail(w, "must be \"holm\" (Holm's step-down over each "
                    "workload's comparisons), \"bonferroni\" or \"none\"");
    r->family = k;
  }
  proto_leave(w, mark);
}

/* The rule's numbers, of the rule table at rt: estimator, confidence,
 * resamples, seed, min_n, and pairs. */
static void read_rule_numbers(walk *w, int rt, proto_rule *r) {
  lua_State *L = w->L;
  double x;
  if (!proto_get_string(w, rt, "estimator", OPT, &r->estimator))
    r->estimator = proto_dup_str(w, "median");
  if (strcmp(r->estimator, "median") != 0) {
    proto_path_key(w, "estimator");
    proto_fail(w,
               "must be \"median\" (the estimator prereg implements), got "
               "\"%s\"",
               r->estimator);
  }
  r->confidence = 0.95;
  if (proto_get_num(w, rt, "confidence", OPT, 0, 0, 1, 1,
                    "a number between 0 and 1, such as 0.95", &x)) {
    if (x >= 1) {
      proto_path_key(w, "confidence");
      proto_fail(w, "must be a number between 0 and 1, such as 0.95, got %g",
                 x);
    }
    r->confidence = x;
  }
  r->resamples = 10000;
  if (proto_get_num(w, rt, "resamples", OPT, 1, 100, 0, 1e7,
                    "an integer from 100 to 10000000", &x))
    r->resamples = (long)x;
  proto_get_num(w, rt, "seed", REQ, 1, 0, 0, 4294967295.0,
                "an integer from 0 to 4294967295", &x);
  r->seed = (unsigned long)x;
  r->min_n = PROTO_MIN_N_DEFAULT;
  if (proto_get_num(
          w, rt, "min_n", OPT, 1, 1, 0, 1e6,
          "an integer from 1 to 1000000 (the fewest values per arm for "
          "a verdict)",
          &x)) {
    r->min_n = (long)x;
    r->min_n_given = 1;
  }
  size_t pmark = proto_path_key(w, "pairs");
  if (proto_field(w, rt, "pairs") != LUA_TNIL) {
    if (!lua_isstring(L, -1) || lua_type(L, -1) != LUA_TSTRING ||
        strcmp(lua_tostring(L, -1), "all") != 0)
      proto_fail(w,
                 "must be \"all\": every pair of arms, each later one in the "
                 "sheet against each earlier one, under this rule");
    r->pairs = PROTO_PAIRS_ALL;
  }
  proto_leave(w, pmark);
  read_corrections(w, rt, r);
}

/* Verdict rule v's name, entry i of rule.verdicts (the table at vt):
 * not a word prereg gives itself, unique among the rules before it. */
static void read_verdict_name(walk *w, int vt, const proto_rule *r,
                              lua_Integer i, proto_verdict_rule *v) {
  lua_State *L = w->L;
  size_t m3 = proto_path_index(w, 1);
  int ty = lua_rawgeti(L, vt, 1);
  if (ty == LUA_TNIL)
    proto_fail(w, "is required: the verdict's name comes first, "
                  "{ \"slower\", ... }");
  if (ty != LUA_TSTRING || lua_rawlen(L, -1) == 0 || lua_rawlen(L, -1) > 64)
    proto_fail_got(w, -1, "the verdict's name (a string of 1 to 64 bytes)");
  v->name = proto_dup_value(w, -1);
  lua_pop(L, 1);
  if (strcmp(v->name, "inconclusive") == 0)
    proto_fail(w, "\"inconclusive\" is what no match gives; name the rule "
                  "otherwise");
  if (strcmp(v->name, "insufficient data") == 0)
    proto_fail(w, "\"insufficient data\" is what an arm with fewer than "
                  "min_n values gives; name the rule otherwise");
  for (lua_Integer j = 1; j < i; j++)
    if (strcmp(r->verdicts[j - 1].name, v->name) == 0)
      proto_fail(w,
                 "\"%s\" is already the name of rule.verdicts[%lld]; "
                 "verdict names must be unique",
                 v->name, (long long)j);
  proto_path_pop(w, m3);
}

/* A verdict rule's ci_within = { low, high } (positive ratios), or
 * diff_ci_within (any finite differences, diff set), into out; 1 when
 * given. */
static int read_within(walk *w, int vt, const char *key, int diff,
                       double out[2]) {
  lua_State *L = w->L;
  int given = 0;
  size_t m3 = proto_path_key(w, key);
  if (proto_field(w, vt, key) != LUA_TNIL) {
    const char *want = diff ? "a pair of differences { low, high }"
                            : "a pair of positive ratios { low, high }";
    if (proto_list_len(w, -1, want) != 2)
      proto_fail(w, "must be %s", want);
    for (int k = 0; k < 2; k++) {
      size_t m4 = proto_path_index(w, k + 1);
      if (lua_rawgeti(L, -1, k + 1) != LUA_TNUMBER ||
          !isfinite(lua_tonumber(L, -1)) ||
          (!diff && lua_tonumber(L, -1) <= 0))
        proto_fail_got(w, -1, diff ? "a finite number" : "a positive ratio");
      out[k] = lua_tonumber(L, -1);
      proto_leave(w, m4);
    }
    if (!(out[0] < out[1]))
      proto_fail(w, "the low end %g must be below the high end %g", out[0],
                 out[1]);
    given = 1;
  }
  proto_leave(w, m3);
  return given;
}

/* A verdict rule's conditions on the ratio (positive ratios), or diff
 * set on the difference (any finite number, in the metric's unit), into
 * b. */
static void read_bounds(walk *w, int vt, int diff, proto_bounds *b) {
  const char *want =
      diff ? "a difference in the metric's unit (a finite number)"
           : "a positive ratio";
  double lo = diff ? -DBL_MAX : 0, hi = diff ? DBL_MAX : 1e9;
  int lo_open = !diff;
  b->has_ci_excludes =
      proto_get_num(w, vt, diff ? "diff_ci_excludes" : "ci_excludes", OPT, 0,
                    lo, lo_open, hi, want, &b->ci_excludes);
  b->has_above = proto_get_num(w, vt, diff ? "diff_above" : "ratio_above", OPT,
                               0, lo, lo_open, hi, want, &b->above);
  b->has_below = proto_get_num(w, vt, diff ? "diff_below" : "ratio_below", OPT,
                               0, lo, lo_open, hi, want, &b->below);
  b->has_ci_within = read_within(w, vt, diff ? "diff_ci_within" : "ci_within",
                                 diff, b->ci_within);
}

/* Fails when b's bound above is not below its bound below: no ratio
 * (difference, diff set) could ever hold both. */
static void check_above_below(walk *w, const proto_bounds *b, int diff) {
  const char *side = diff ? "diff" : "ratio";
  if (b->has_above && b->has_below && b->above >= b->below)
    proto_fail(w, "%s_above = %g and %s_below = %g can never both hold", side,
               b->above, side, b->below);
}

/* Verdict rule v, entry i of rule.verdicts, the table at vt. */
static void read_verdict(walk *w, int vt, const proto_rule *r, lua_Integer i,
                         proto_verdict_rule *v, int base_line) {
  static const char *const vkeys[] = {
      "ci_excludes", "ratio_above",      "ratio_below",
      "ci_within",   "diff_ci_excludes", "diff_above",
      "diff_below",  "diff_ci_within",   "names",
      NULL};
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  int line = 0;
  if (lua_rawgeti(L, vt, 1) == LUA_TSTRING)
    line = proto_find_line(s->text, s->text_len, NULL, lua_tostring(L, -1));
  lua_pop(L, 1);
  w->line = v->line = line > 0 ? line : base_line;
  proto_check_keys(w, vt, vkeys, 1, "a verdict rule");
  read_verdict_name(w, vt, r, i, v);
  read_bounds(w, vt, 0, &v->ratio);
  read_bounds(w, vt, 1, &v->diff);
  check_above_below(w, &v->diff, 1);
  if (!proto_bounds_any(&v->ratio) && !proto_bounds_any(&v->diff))
    proto_fail(w, "has no condition; give at least one of ci_excludes, "
                  "ratio_above, ratio_below, ci_within, diff_ci_excludes, "
                  "diff_above, diff_below, diff_ci_within");
  check_above_below(w, &v->ratio, 0);
  {
    size_t m3 = proto_path_key(w, "names");
    if (proto_field(w, vt, "names") != LUA_TNIL)
      read_verdict_names(w, v);
    proto_leave(w, m3);
  }
}

void proto_read_rule(walk *w, int t) {
  static const char *const keys[] = {
      "estimator", "confidence", "resamples", "seed",   "min_n",
      "verdicts",  "pairs",      "spending",  "family", NULL};
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  proto_rule *r = &s->rule;
  int base_line = w->line, rt;
  size_t mark = proto_path_key(w, "rule");
  if (proto_field(w, t, "rule") == LUA_TNIL)
    proto_fail(w, "is required: rule = { estimator = \"median\", confidence = "
                  "0.95, resamples = 10000, seed = 17, verdicts = { ... } }");
  rt = lua_gettop(L);
  if (!lua_istable(L, rt))
    proto_fail_got(w, rt, "a table { estimator = \"median\", ... }");
  proto_check_keys(w, rt, keys, 0, "the rule");
  read_rule_numbers(w, rt, r);

  size_t vmark;
  r->verdicts = proto_get_list(
      w, rt, "verdicts",
      "verdicts = { { \"slower\", ci_excludes = 1, ratio_above = 1.1 }, "
      "... } (first match wins)",
      "a list of verdict rules { { \"name\", ... }, ... }", 1,
      "needs at least one verdict rule", sizeof *r->verdicts, &r->n_verdicts,
      &vmark);
  if (r->n_verdicts > CORE_MAX_VERDICTS)
    proto_fail(w, "has %zu verdict rules; a rule may have at most %d",
               r->n_verdicts, CORE_MAX_VERDICTS);
  for (lua_Integer i = 1; i <= (lua_Integer)r->n_verdicts; i++) {
    proto_verdict_rule *v = &r->verdicts[i - 1];
    size_t m2;
    int vt = proto_get_entry(
        w, i, "a table { \"name\", condition = value, ... }", &m2);
    read_verdict(w, vt, r, i, v, base_line);
    proto_leave(w, m2);
  }
  check_verdict_words(w);
  w->line = base_line;
  lua_pop(L, 2);
  proto_path_pop(w, mark);
  if (r->family != PROTO_FAMILY_NONE && proto_rule_on_diff(r)) {
    proto_path_key(w, "rule");
    proto_path_key(w, "family");
    proto_fail(w, "the correction for many comparisons ranks them by their "
                  "ratio's interval and cannot yet take a verdict on the "
                  "difference (diff_ci_excludes, diff_above, diff_below, "
                  "diff_ci_within): write family = \"none\", or give the "
                  "verdicts on the ratio");
  }
}
