/* load_hosts.c: the hosts a sheet runs on: nodes, Kubernetes, what
 * varies across them.
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

/* Hosts */

/* hosts.kubernetes (on paper): the image and a runtimeClassName per arm,
 * keyed by the arm's name. */
static void read_k8s(walk *w, int ht) {
  static const char *const keys[] = {"image", "runtime_classes", NULL};
  lua_State *L = w->L;
  proto_sheet *s = w->s;
  proto_hosts *h = &s->hosts;
  size_t mark = proto_path_key(w, "kubernetes");
  if (proto_field(w, ht, "kubernetes") == LUA_TNIL) {
    proto_leave(w, mark);
    return;
  }
  int kt = lua_gettop(L);
  if (!lua_istable(L, kt))
    proto_fail_got(w, kt,
                   "a table { image = \"...\", runtime_classes = { ... } }");
  proto_check_keys(w, kt, keys, 0, "hosts.kubernetes");
  proto_get_string(w, kt, "image", OPT, &h->k8s_image);
  size_t m2 = proto_path_key(w, "runtime_classes");
  if (proto_field(w, kt, "runtime_classes") != LUA_TNIL) {
    int ct = lua_gettop(L);
    const char *names[65];
    size_t n = 0;
    if (!lua_istable(L, ct))
      proto_fail_got(w, ct, "a table { ARM = \"runtime class\", ... }");
    for (size_t a = 0; a < s->n_arms && n < 64; a++)
      names[n++] = s->arms[a].name;
    names[n] = NULL;
    proto_check_keys(w, ct, names, 0, "runtime_classes (the arms)");
    h->k8s_arms = proto_alloc_array(w, s->n_arms, sizeof *h->k8s_arms);
    h->k8s_classes = proto_alloc_array(w, s->n_arms, sizeof *h->k8s_classes);
    for (size_t a = 0; a < s->n_arms; a++) {
      char *cls = NULL;
      if (!proto_get_string(w, ct, s->arms[a].name, OPT, &cls))
        continue;
      h->k8s_classes[h->n_k8s] = cls;
      h->k8s_arms[h->n_k8s++] = proto_dup_str(w, s->arms[a].name);
    }
  }
  proto_leave(w, m2);
  proto_leave(w, mark);
}

/* hosts.across: the cross-host rule. */
static void read_across(walk *w, int ht) {
  static const char *const keys[] = {"same_verdict", "max_spread", NULL};
  proto_hosts *h = &w->s->hosts;
  size_t mark = proto_path_key(w, "across");
  if (proto_field(w, ht, "across") == LUA_TNIL)
    proto_fail(
        w, "is required: the cross-host rule, declared before any data, "
           "across = { same_verdict = true, max_spread = 1.15 } (\"carries "
           "over\" when every counted host gives the same verdict and the "
           "largest host ratio is at most 1.15 times the smallest)");
  int at = lua_gettop(w->L);
  if (!lua_istable(w->L, at))
    proto_fail_got(w, at,
                   "a table { same_verdict = true, max_spread = 1.15 }");
  proto_check_keys(w, at, keys, 0, "hosts.across");
  h->same_verdict = 1;
  proto_get_bool(w, at, "same_verdict", &h->same_verdict);
  proto_get_num(w, at, "max_spread", REQ, 0, 1, 0, 1e9,
                "a ratio of at least 1 (largest host ratio / smallest)",
                &h->max_spread);
  proto_leave(w, mark);
}

void proto_read_hosts(walk *w, int t) {
  static const char *const keys[] = {
      "backend",   "nodes",         "count",  "partition",  "constraint",
      "min_hosts", "min_completed", "across", "kubernetes", NULL};
  lua_State *L = w->L;
  proto_hosts *h = &w->s->hosts;
  size_t mark = proto_path_key(w, "hosts");
  double x;
  if (proto_field(w, t, "hosts") == LUA_TNIL) {
    proto_leave(w, mark);
    return;
  }
  int ht = lua_gettop(L);
  if (!lua_istable(L, ht))
    proto_fail_got(w, ht,
                   "a table { backend = \"slurm\", nodes = { ... }, ... }");
  h->declared = 1;
  h->line = w->line;
  proto_check_keys(w, ht, keys, 0, "hosts");
  proto_get_string(w, ht, "backend", REQ, &h->backend);
  if (strcmp(h->backend, "slurm") != 0) {
    proto_path_key(w, "backend");
    proto_fail(
        w,
        "must be \"slurm\" (the scheduler prereg runs on; kubernetes is "
        "written on paper by run --dry-run --backend kubernetes), got "
        "\"%s\"",
        h->backend);
  }
  int named =
      proto_get_string_list(w, ht, "nodes", OPT, LIST_UNIQUE | LIST_NONEMPTY,
                            "a list of node names", &h->nodes, &h->n_nodes);
  for (size_t i = 0; i < h->n_nodes; i++)
    if (!proto_good_name(h->nodes[i])) {
      proto_path_key(w, "nodes");
      proto_path_index(w, (lua_Integer)i + 1);
      proto_fail(w,
                 "\"%s\" is not a usable node name: use letters, digits and "
                 "_ . + -",
                 h->nodes[i]);
    }
  if (proto_get_num(w, ht, "count", OPT, 1, 1, 0, 4096,
                    "an integer from 1 to 4096 (nodes the scheduler picks)",
                    &x))
    h->count = (long)x;
  if (named == (h->count > 0))
    proto_fail(w, "%s",
               named ? "give nodes or count, not both"
                     : "needs nodes = { \"n1\", \"n2\", ... } or count = "
                       "N (with partition or constraint)");
  proto_get_string(w, ht, "partition", OPT, &h->partition);
  proto_get_string(w, ht, "constraint", OPT, &h->constraint);
  proto_get_num(w, ht, "min_completed", REQ, 0, 0, 1, 1,
                "a share in (0, 1]: a host counts only when it completed at "
                "least this share of its planned rounds",
                &h->min_completed);
  h->min_hosts = 3;
  if (proto_get_num(w, ht, "min_hosts", OPT, 1, 2, 0, 4096,
                    "an integer of at least 2 (counted hosts a cross-host "
                    "estimate needs)",
                    &x))
    h->min_hosts = (long)x;
  read_across(w, ht);
  read_k8s(w, ht);
  proto_leave(w, mark);
}
