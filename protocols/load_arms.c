/* load_arms.c: the arms of a sheet and the image they run in.
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

void proto_read_image(walk *w, int t, proto_image *img) {
  static const char *const keys[] = {"tree", "digest", "resident", NULL};
  size_t mark = proto_path_key(w, "image");
  int ty = proto_field(w, t, "image");
  int it;
  if (ty == LUA_TNIL) {
    proto_leave(w, mark);
    return;
  }
  if (ty != LUA_TTABLE)
    proto_fail_got(w, -1,
                   "a table { tree = \"path\" } or { digest = "
                   "\"command\" }");
  it = lua_gettop(w->L);
  proto_check_keys(w, it, keys, 0, "an image");
  proto_get_template(w, it, "tree", OPT, T_ARM, &img->tree);
  proto_get_template(w, it, "digest", OPT, T_ARM, &img->digest_cmd);
  proto_get_template(w, it, "resident", OPT, T_ARM, &img->resident);
  if (img->tree && img->digest_cmd)
    proto_fail(w, "give either tree = \"path\" or digest = \"command\", not "
                  "both");
  if (!img->tree && !img->digest_cmd)
    proto_fail(w,
               "needs tree = \"path\" (a file or folder to hash) or digest = "
               "\"command\" (prints the digest)");
  proto_leave(w, mark);
}

/* Either every arm wraps the workloads' commands ({cmd} in its run) or
 * every arm is a whole command: a mix would run a workload's cmd in some
 * arms and silently ignore it in the others. */
static void check_same_kind(walk *w, const proto_arm *a,
                            const proto_arm *first) {
  if (a->whole == first->whole)
    return;
  proto_path_key(w, "run");
  if (a->whole)
    proto_fail(
        w,
        "has no {cmd}, so it is a whole command, but arms[1] \"%s\" "
        "wraps the workload's command (its run is \"%s\"); either every "
        "arm's run contains {cmd}, where each workload's cmd goes, or none "
        "does (whole commands, compared as they are, with no cmd in the "
        "workloads)",
        first->name, first->run);
  proto_fail(
      w,
      "contains {cmd}, but arms[1] \"%s\" is a whole command (its run "
      "has no {cmd}); either every arm's run contains {cmd}, where each "
      "workload's cmd goes, or none does (whole commands, compared as "
      "they are, with no cmd in the workloads)",
      first->name);
}

void proto_read_arms(walk *w, int t) {
  static const char *const keys[] = {"name",     "reference", "run",
                                     "requires", "versions",  "image",
                                     "cpus",     "null",      NULL};
  proto_sheet *s = w->s;
  int base_line = w->line, have_ref = 0;
  size_t mark;
  s->arms = proto_get_list(
      w, t, "arms",
      "the arms to compare, { { name = \"...\", reference = true }, "
      "{ name = \"...\", run = \"... {cmd}\" } }",
      "a list of arms { { name = ... }, ... }", 2,
      "needs at least two arms: the reference and one to compare with it",
      sizeof *s->arms, &s->n_arms, &mark);
  name_set seen;
  proto_set_open(w, &seen, s->n_arms);
  for (lua_Integer i = 1; i <= (lua_Integer)s->n_arms; i++) {
    proto_arm *a = &s->arms[i - 1];
    size_t m2;
    int at = proto_get_entry(w, i, "a table { name = \"...\", ... }", &m2);
    w->line = a->line = proto_entry_line(w, at, "name", base_line);
    proto_check_keys(w, at, keys, 0, "an arm");
    proto_get_string(w, at, "name", REQ, &a->name);
    proto_check_name(w, a->name, "arm");
    size_t j = proto_set_put(&seen, a->name, (size_t)i);
    if (j) {
      proto_path_key(w, "name");
      proto_fail(w,
                 "\"%s\" is already the name of arms[%zu]; arm names "
                 "must be unique",
                 a->name, j);
    }
    proto_get_bool(w, at, "reference", &a->reference);
    if (a->reference) {
      if (have_ref) {
        proto_path_key(w, "reference");
        proto_fail(w,
                   "a second reference arm (arms[%zu] \"%s\" is one "
                   "already); exactly one arm is the reference",
                   s->reference + 1, s->arms[s->reference].name);
      }
      have_ref = 1;
      s->reference = (size_t)(i - 1);
    }
    proto_read_arm_conditions(w, at, a);
    if (!proto_get_template(w, at, "run", OPT, T_RUN | T_CMD, &a->run))
      a->run = proto_dup_str(w, "{cmd}");
    a->whole = !proto_uses_placeholder(a->run, "cmd");
    /* An A/A arm's run is the reference's, copied once all are read. */
    if (i > 1 && !a->null && !s->arms[0].null)
      check_same_kind(w, a, &s->arms[0]);
    proto_get_string_list(w, at, "requires", OPT,
                          LIST_TEMPLATE | LIST_NONEMPTY, "a list of commands",
                          &a->requires, &a->n_requires);
    proto_get_string_list(w, at, "versions", OPT,
                          LIST_TEMPLATE | LIST_NONEMPTY, "a list of commands",
                          &a->versions, &a->n_versions);
    proto_read_image(w, at, &a->image);
    proto_leave(w, m2);
  }
  proto_set_close(w, &seen);
  w->line = base_line;
  if (!have_ref)
    proto_fail(w, "no arm has reference = true; mark exactly one, the arm the "
                  "others are compared with");
  proto_null_arms(w);
  proto_leave(w, mark);
}
