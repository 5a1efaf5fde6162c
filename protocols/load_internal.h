/* load_internal.h: what the sheet readers (protocols/load*.c) share: the
 * walk over the protocol table, its field path and messages, reading
 * fields, lists and names, and the reader of each part of a sheet.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_LOAD_INTERNAL_H
#define PREREG_LOAD_INTERNAL_H

#include <lua.h>

#include "protocols/proto_internal.h"

/* Where the conversion is: the state, the sheet being filled, the line
 * and field path of messages. */
typedef struct walk {
  lua_State *L;
  proto_sheet *s;
  int line; /* for messages; 0: none */
  size_t plen;
  char path[512];
} walk;

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

/* Which built-in placeholders a template may use: {arm}, {experiment}
 * and vars always; T_RUN adds those with a value per run; T_CMD adds
 * {cmd}; T_SEL adds {cid}, the container ID read from {cidfile} while the
 * run goes on (only a process selection is evaluated then). */
enum { T_ARM = 0, T_RUN = 1, T_CMD = 2, T_SEL = 4 };

/* The req of the get_* readers: the key may be absent, or must be there. */
enum { OPT = 0, REQ = 1 };

/* The flags of proto_get_string_list. */
enum {
  LIST_TEMPLATE = 1, /* per-arm commands: vars and {arm} */
  LIST_UNIQUE = 2,
  LIST_NONEMPTY = 4,
  LIST_RUN_TEMPLATE = 8, /* per-run commands: all but {cmd} */
  LIST_SEL_TEMPLATE = 16 /* process selections: also {cid} */
};

/* The built-in placeholders, {cmd} to {origin}. */
extern const char *const proto_builtin_vars[];

/* Raises "FILE:LINE: PATH: what" (load.c's header says which line). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int proto_fail(walk *w, const char *fmt, ...);

/* Helpers of load.c (each is documented at its definition) */

int proto_is_lower(int c);
int proto_is_digit(int c);
int proto_is_ident(int c);
int proto_in_list(const char *name, const char *const list[]);
size_t proto_count_list(const char *const list[]);
void proto_join_list(char *out, size_t size, const char *const list[],
                     size_t n, const char *open, const char *close);
int proto_find_line(const char *text, size_t len, const char *key,
                    const char *value);
size_t proto_path_key(walk *w, const char *key);
size_t proto_path_index(walk *w, lua_Integer i);
void proto_path_pop(walk *w, size_t mark);
void proto_leave(walk *w, size_t mark);
const char *proto_describe(walk *w, int idx, char *buf, size_t size);
int proto_fail_got(walk *w, int idx, const char *want);
int proto_field(walk *w, int t, const char *key);
void proto_check_keys(walk *w, int t, const char *const known[],
                      lua_Integer npos, const char *what);
lua_Integer proto_list_len(walk *w, int idx, const char *what);
char *proto_dup_value(walk *w, int idx);
char *proto_lines_of(walk *w, const char *text, size_t len, int first,
                     int last);
char *proto_dup_str(walk *w, const char *v);
void *proto_alloc_array(walk *w, size_t n, size_t size);
void *proto_get_list(walk *w, int t, const char *key, const char *missing,
                     const char *shape, lua_Integer min, const char *too_few,
                     size_t size, size_t *n, size_t *mark);
int proto_get_entry(walk *w, lua_Integer i, const char *shape, size_t *mark);
void proto_set_open(walk *w, name_set *h, size_t n);
size_t proto_set_put(name_set *h, const char *name, size_t at);
void proto_set_close(walk *w, name_set *h);
void proto_require_run_name(walk *w, const char *key, lua_Integer at,
                            const char *t);
void proto_check_cgroup_path(walk *w, const char *t);
int proto_get_string(walk *w, int t, const char *key, int req, char **dst);
int proto_get_template(walk *w, int t, const char *key, int req, int allow,
                       char **dst);
int proto_get_num(walk *w, int t, const char *key, int req, int integer,
                  double lo, int lo_open, double hi, const char *want,
                  double *out);
int proto_get_bool(walk *w, int t, const char *key, int *out);
int proto_get_enum(walk *w, int t, const char *key, const char *const names[],
                   int *out);
int proto_get_string_list(walk *w, int t, const char *key, int req, int flags,
                          const char *what, char ***dst, size_t *n);
void proto_check_name(walk *w, const char *name, const char *what);
int proto_entry_line(walk *w, int t, const char *key, int fallback);

/* The readers of the parts of a sheet, each in the load_*.c file named
 * after its part (and the checks two parts share) */

void proto_read_vars(walk *w, int t);
void proto_read_image(walk *w, int t, proto_image *img);
void proto_read_arms(walk *w, int t);
int proto_is_builtin_metric(const char *m);
void proto_read_workloads(walk *w, int t);
/* Each workload's looks against the rule (min_n), its order and the
 * hosts, and the rule's family against the hosts: after the rule and the
 * hosts are read (w->line at the rule). */
void proto_check_looks(walk *w);
void proto_read_metrics(walk *w, int t);
void proto_read_rule(walk *w, int t);
void proto_fail_unknown(walk *w, const char *what, const char *name,
                        const char *const cand[], size_t n);
void proto_check_workload_ref(walk *w, const char *name, long *index);
void proto_read_hypotheses(walk *w, int t);
void proto_read_amendments(walk *w, int t);
/** Marks the sheet out of memory and raises the Lua error. */
int proto_oom(walk *w);
/** replicates: the published experiment a replication's sheet repeats. */
void proto_read_replicates(walk *w, int t);
void proto_read_published(walk *w, int t);
void proto_read_hosts(walk *w, int t);
void proto_read_inputs(walk *w, int t);
void proto_read_plan(walk *w, int t);
/** conditions, and the sheet's cpus (load_conditions.c). */
void proto_read_conditions(walk *w, int t);
/** An arm's cpus and null (after the arms are read: a null arm copies the
 * reference's run). */
void proto_read_arm_conditions(walk *w, int at, proto_arm *a);
void proto_null_arms(walk *w);

#endif
