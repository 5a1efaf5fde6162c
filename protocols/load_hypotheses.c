/* load_hypotheses.c: the hypotheses of a sheet and their claims.
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

/* Did-you-mean over the names of a sheet's workloads or arms. */
void proto_fail_unknown(walk *w, const char *what, const char *name,
                        const char *const cand[], size_t n) {
  const char *near = proto_nearest(name, cand, n);
  char list[1024];
  if (near)
    proto_fail(w, "no %s is named \"%s\"; did you mean \"%s\"?", what, name,
               near);
  proto_join_list(list, sizeof list, cand, n, "\"", "\"");
  proto_fail(w, "no %s is named \"%s\"; the %ss are: %s", what, name, what,
             list);
}

void proto_check_workload_ref(walk *w, const char *name, long *index) {
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
  proto_fail_unknown(w, "workload", name, cand, n);
}

/* The start of hypothesis h, entry i (the table at ht): its line, keys,
 * id (usable, unique) and says. Returns the line of its claim's
 * constructor, or 0. */
static int read_hypothesis_head(walk *w, int ht, lua_Integer i,
                                proto_hypothesis *h, int base_line) {
  static const char *const keys[] = {"id",   "says",  "workload", "metric",
                                     "arms", "claim", NULL};
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  int claim_line = 0, id_line;
  h->fn_ref = LUA_NOREF;
  /* The claim's constructor knows its line: the best anchor when the
   * id is not unique in the text. */
  if (proto_field(w, ht, "claim") == LUA_TUSERDATA) {
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
  id_line = proto_entry_line(w, ht, "id", 0);
  w->line = h->line = id_line ? id_line : claim_line ? claim_line : base_line;
  proto_check_keys(w, ht, keys, 0, "a hypothesis");
  proto_get_string(w, ht, "id", REQ, &h->id);
  {
    int ok = strlen(h->id) <= 32;
    for (const char *p = h->id; *p && ok; p++)
      ok = proto_is_ident((unsigned char)*p) || *p == '.' || *p == '-';
    if (!ok) {
      proto_path_key(w, "id");
      proto_fail(w,
                 "\"%s\" is not a usable id: use up to 32 letters, digits "
                 "and _ . -",
                 h->id);
    }
  }
  for (lua_Integer j = 1; j < i; j++)
    if (strcmp(s->hypotheses[j - 1].id, h->id) == 0) {
      proto_path_key(w, "id");
      proto_fail(w,
                 "\"%s\" is already the id of hypotheses[%lld]; ids must "
                 "be unique",
                 h->id, (long long)j);
    }
  proto_get_string(w, ht, "says", REQ, &h->says);
  return claim_line;
}

/* Hypothesis h's claim: a claim constructor's userdata or a function. */
static void read_claim(walk *w, int ht, proto_hypothesis *h) {
  lua_State *L = w->L;
  size_t m3 = proto_path_key(w, "claim");
  int ty = proto_field(w, ht, "claim");
  proto_claim_ud *c = NULL;
  if (ty == LUA_TNIL)
    proto_fail(w, "is required: at_least(x), below(x), verdict_is(\"name\") "
                  "or a function(results)");
  if (ty == LUA_TUSERDATA)
    c = luaL_testudata(L, -1, PROTO_CLAIM_META);
  if (c) {
    h->kind = c->kind;
    h->x = c->x;
    if (c->kind == PROTO_CLAIM_VERDICT_IS) {
      lua_getiuservalue(L, -1, 1);
      h->verdict = proto_dup_value(w, -1);
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
      h->fn_source = proto_lines_of(w, w->s->text, w->s->text_len,
                                    ar.linedefined, ar.lastlinedefined);
    h->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  } else {
    proto_fail_got(w, -1,
                   "at_least(x), below(x), verdict_is(\"name\") or a "
                   "function(results)");
  }
  proto_path_pop(w, m3);
}

/* The workload and metric hypothesis h is about. */
static void read_claim_target(walk *w, int ht, proto_hypothesis *h) {
  proto_sheet *s = w->s;
  long wi = -1;
  int fn = h->kind == PROTO_CLAIM_FUNCTION;
  const char *need = fn ? NULL : "is required for this claim";
  if (proto_get_string(w, ht, "workload", OPT, &h->workload)) {
    size_t m3 = proto_path_key(w, "workload");
    proto_check_workload_ref(w, h->workload, &wi);
    proto_path_pop(w, m3);
  } else if (need) {
    proto_path_key(w, "workload");
    proto_fail(w, "%s: the workload the claim is about", need);
  }
  if (proto_get_string(w, ht, "metric", OPT, &h->metric)) {
    size_t m3 = proto_path_key(w, "metric");
    int found = 0;
    if (wi >= 0)
      found = proto_workload_has_metric(&s->workloads[wi], h->metric);
    else
      for (size_t k = 0; k < s->n_workloads && !found; k++)
        found = proto_workload_has_metric(&s->workloads[k], h->metric);
    if (!found && wi >= 0) {
      const proto_workload *wl = &s->workloads[wi];
      char list[1024];
      proto_join_list(list, sizeof list, (const char *const *)wl->metrics,
                      wl->n_metrics, "\"", "\"");
      proto_fail(w,
                 "workload \"%s\" does not measure \"%s\"; it measures "
                 "%s",
                 wl->name, h->metric, list);
    }
    if (!found)
      proto_fail(w, "no workload measures \"%s\"", h->metric);
    proto_path_pop(w, m3);
  } else if (need) {
    proto_path_key(w, "metric");
    proto_fail(w, "%s: one of the workload's metrics", need);
  }
}

/* The arms hypothesis h is about: those it names, none the reference,
 * else every arm but the reference. */
static void read_claim_arms(walk *w, int ht, proto_hypothesis *h) {
  proto_sheet *s = w->s;
  if (proto_get_string_list(w, ht, "arms", OPT, LIST_UNIQUE | LIST_NONEMPTY,
                            "a list of arm names", &h->arms, &h->n_arms)) {
    for (size_t k = 0; k < h->n_arms; k++) {
      size_t m3 = proto_path_key(w, "arms");
      long ai = proto_arm_index(s, h->arms[k]);
      proto_path_index(w, (lua_Integer)k + 1);
      if (ai < 0) {
        const char *cand[256];
        size_t nc = 0;
        for (size_t a = 0; a < s->n_arms && nc < 255; a++)
          cand[nc++] = s->arms[a].name;
        cand[nc] = NULL;
        proto_fail_unknown(w, "arm", h->arms[k], cand, nc);
      }
      if ((size_t)ai == s->reference)
        proto_fail(w,
                   "\"%s\" is the reference arm; a claim is about the "
                   "other arms, each compared with it",
                   h->arms[k]);
      if (s->arms[ai].null)
        proto_fail(w,
                   "\"%s\" is an A/A arm (null = true): it runs the "
                   "reference's command again, and its ratio is the host's "
                   "noise floor, not a result a hypothesis may claim",
                   h->arms[k]);
      proto_path_pop(w, m3);
    }
  } else if (h->kind != PROTO_CLAIM_FUNCTION) {
    /* By default a claim is about every arm but the reference (and the
     * A/A arms). */
    h->arms = proto_alloc_array(w, s->n_arms - 1, sizeof *h->arms);
    for (size_t a = 0; a < s->n_arms; a++)
      if (a != s->reference && !s->arms[a].null)
        h->arms[h->n_arms++] = proto_dup_str(w, s->arms[a].name);
  }
}

/* The verdict a verdict_is claim names is one the rule gives. */
static void check_claim_verdict(walk *w, const proto_hypothesis *h,
                                int claim_line) {
  proto_sheet *s = w->s;
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
      proto_path_key(w, "claim");
      proto_fail_unknown(w, "verdict", h->verdict, cand, nc);
    }
  }
}

void proto_read_hypotheses(walk *w, int t) {
  proto_sheet *s = w->s;
  int base_line = w->line;
  size_t mark;
  s->hypotheses =
      proto_get_list(w, t, "hypotheses", NULL,
                     "a list of hypotheses { { id = \"H1\", ... }, ... }", 0,
                     NULL, sizeof *s->hypotheses, &s->n_hypotheses, &mark);
  if (!s->hypotheses)
    return;
  if (s->n_hypotheses > CORE_MAX_HYPOTHESES)
    proto_fail(
        w,
        "has %zu hypotheses; a sheet may state at most %d (each is "
        "evaluated by every command that analyses): keep the claims the "
        "study is about",
        s->n_hypotheses, CORE_MAX_HYPOTHESES);
  for (lua_Integer i = 1; i <= (lua_Integer)s->n_hypotheses; i++) {
    proto_hypothesis *h = &s->hypotheses[i - 1];
    size_t m2;
    int ht = proto_get_entry(
        w, i, "a table { id = \"H1\", says = \"...\", ... }", &m2);
    int claim_line = read_hypothesis_head(w, ht, i, h, base_line);
    read_claim(w, ht, h);
    read_claim_target(w, ht, h);
    read_claim_arms(w, ht, h);
    check_claim_verdict(w, h, claim_line);
    proto_leave(w, m2);
  }
  w->line = base_line;
  proto_leave(w, mark);
}
