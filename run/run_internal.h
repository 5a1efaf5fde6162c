/* run_internal.h: what the files of run/ share about a batch in progress
 * (private to run/): the preflight's findings, one run's outcome, its rows.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_RUN_INTERNAL_H
#define PREREG_RUN_INTERNAL_H

#include <limits.h>

#include "run/run.h"

#define RUN_OUTPUT_LIMIT ((size_t)1 << 20) /* per stream and run */
#define RUN_GRACE_S 2.0                    /* SIGTERM -> SIGKILL */

/* The plan */

/** Marks the runs of p that rows of exp already fill, as the counting
 * rule says (run_plan_collect does once it has loaded them); hosts by
 * count not yet named are named by the rows. rows must outlive p's
 * use. */
core_status run_plan_mark(run_plan *p, const data_experiment *exp,
                          const proto_sheet *s, const data_rowset *rows,
                          core_err *err);

/* Commands */

/** proto_expand, with out of memory as an error too. Returns a newly
 * allocated string (core_free), or NULL with err filled. */
char *run_expand(const proto_sheet *s, const char *tmpl,
                 const proto_expand_ctx *x, core_err *err);
/** step (a workload's cmd or one of its steps) expanded and wrapped in
 * arm's run template; for an arm that is a whole command (step NULL), its
 * run expanded. Returns a newly allocated string, or NULL. */
char *run_full_command(const proto_sheet *s, const proto_arm *arm,
                       const char *step, proto_expand_ctx x, core_err *err);

/* The process table (run/proc.c) */

/* One process: its ID, its parent's, its state letter ('Z': a zombie). */
typedef struct run_pent {
  int pid, ppid;
  char state;
} run_pent;

/** Every process of /proc (one that vanishes while it is read is not in
 * it). OUT: *out newly allocated (core_free), *n. CORE_EIO when /proc
 * cannot be listed, CORE_ENOMEM. */
core_status run_proc_table(run_pent **out, size_t *n);

/** Appends to out (k entries so far) the processes of t below `from`,
 * breadth first over the ppid links, never entering `skip` or what lies
 * below it; out doubles as the queue and must have room for every process
 * in t. Returns the new count. */
size_t run_walk_below(const run_pent *t, size_t nt, int from, int skip,
                      int *out, size_t k);

/* Preflight (run/preflight.c) */

/* The image an arm's runs are recorded with. */
typedef struct run_image {
  char *digest;   /* "" when none */
  char *kind;     /* "tree", "digest" or "none" */
  char *source;   /* expanded path or command; NULL for none */
  char *resident; /* expanded image.resident, or NULL */
} run_image;

typedef struct run_preflight {
  run_image *img;          /* per arm */
  data_arm_versions *vers; /* per arm: what its `versions` commands said */
  char *cgparent;          /* where per-run cgroups go, or NULL */
} run_preflight;

/** Everything the runs left in plan p need, checked before the first:
 * the cgroup parent, cold caches, every arm's `requires`, the image
 * digests and `versions`. OUT: *pre (free with run_preflight_free, also
 * on error). */
core_status run_preflight_check(const proto_sheet *s, const run_plan *p,
                                run_preflight *pre, core_err *err);
/** The preflight of a step of a batch across hosts, after the node's
 * preflight of that batch (run_preflight_check) said what it found: the
 * machine is checked again (cgroups, cold caches), the image digests
 * are taken as given (one per arm, "" for none), nothing else is run.
 * OUT: *pre as run_preflight_check. */
core_status run_preflight_given(const proto_sheet *s, const run_plan *p,
                                char *const *digests, run_preflight *pre,
                                core_err *err);
void run_preflight_free(run_preflight *pre, size_t n_arms);

/* One run (run/measure.c) */

/* What the runs of a batch share. */
typedef struct run_setting {
  const proto_sheet *s;
  const run_preflight *pre;
  const char *bdir;   /* the batch's folder, absolute */
  const char *bid;    /* the batch's id, for {batch_id} */
  const char *origin; /* "PREREG_ORIGIN=<where prereg was started>" */
  /* An empty working folder a finished run left, renamed for the next
   * run rather than made anew (see measure.c); NULL: none is kept. */
  const char *spare;  /* its path, in bdir */
  int spare_ready;    /* 1: it is there, empty */
  unsigned work_mode; /* the mode of the folders we make */
} run_setting;

/** Removes the spare working folder: call before the batch is frozen. */
void run_setting_end(run_setting *set);

/* What one run measured and how it ended. */
typedef struct run_outcome {
  char exit_codes[512]; /* "0", per step "0;1;-", "stopped" */
  char reason[1024];    /* why invalid, "" when valid */
  int valid;
  int failed;      /* its command (or prepare) exited non-zero or not as
                      expected, was not found, was killed or timed out */
  int interrupted; /* not recorded: cancelled, or its output was lost */
  double wall, user, sys;
  long maxrss;
  int pss_ok;
  int pss_failed; /* pss_mib was not sampled; reason says why */
  double pss_mib;
  int cg_ok;
  double cg_mem, cg_cpu;
  run_metric *m; /* reported by the command (core_free) */
  size_t n_m;
  char started[32];
  char cache_state[128];
  char err_tail[240]; /* a failed run (warm-up too): the end of its
                         stderr, one line, unprintable bytes as '?' */
} run_outcome;

/** Adds a reason (joined to earlier ones by "; ") and makes o invalid. */
void run_add_reason(run_outcome *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** Runs item (a recorded run when round > 0, else a warm-up) as run_id.
 * Fills o (free o->m with core_free); CORE_OK unless the engine itself
 * failed, an output could not be kept, or a cold run could not drop the
 * caches (the batch then stops). */
core_status run_measure(run_setting *set, const run_plan_item *item,
                        const char *run_id, run_outcome *o, core_err *err);

/* The scheduler's commands (run/child.c) */

/* A child process started from an argv, in a process group of its own,
 * stdin /dev/null, stdout and stderr on pipes (out, err: our ends, -1
 * once closed), killed by SIGTERM if we die. */
typedef struct run_child {
  int pid; /* -1 once reaped */
  int out, err;
  int status; /* once reaped: exit code, 128 + signal, -1 unknown */
} run_child;

/** Starts argv[0] (looked up in PATH). OUT: *c. */
core_status run_child_spawn(const char *const argv[], run_child *c,
                            core_err *err);
/** SIGKILLs the child's group. */
void run_child_kill(run_child *c);
/** Reaps the child (waiting when wait); 1 once reaped (status set). */
int run_child_reap(run_child *c, int wait);
/** Closes our ends of its pipes. */
void run_child_close(run_child *c);
/** Runs argv to its end, within timeout_s (then killed: *code -1): its
 * stdout into out and stderr into errout (either may be NULL: dropped).
 * OUT: *code its exit code (128 + signal when killed by one). */
core_status run_child_tool(const char *const argv[], core_buf *out,
                           core_buf *errout, int *code, double timeout_s,
                           core_err *err);

/* Rows (run/rows.c) */

/* What every row of a batch shares. */
typedef struct run_row_base {
  const proto_sheet *s;
  const run_preflight *pre;
  const char *bid;
  int version; /* the sheet version the rows are collected under */
  int quick;
  const char *host; /* the rows' host: the plan's name for the node in a
                       batch across hosts; NULL: this machine's name */
} run_row_base;

/* A growing list of rows whose own strings (run_id, started_at,
 * cache_state, exit_code, reason) are allocated; the others are borrowed
 * from the sheet, the preflight and the batch. */
typedef struct run_rows {
  data_row *v;
  size_t n, cap;
} run_rows;

/** Appends the rows of one run (one per declared metric; a metric not
 * reported makes the run invalid, with the reason). seq is the run's
 * place in the batch. CORE_ENOMEM only. */
core_status run_rows_add(run_rows *rows, const run_row_base *base,
                         const run_plan_item *item, long seq,
                         const char *run_id, run_outcome *o, core_err *err);
/** Frees the rows' own strings and empties the list (keeping its array);
 * _free also frees the array. */
void run_rows_clear(run_rows *rows);
void run_rows_free(run_rows *rows);

/** Reference parity of one finished round of workload w: a run of
 * another arm whose exit codes differ from the reference arm's (step by
 * step; the first difference is named) becomes invalid. ref_codes: the
 * reference run's exit codes, NULL when there is none (then every other
 * run is invalid). CORE_ENOMEM only. */
core_status run_rows_parity(run_rows *round, const proto_sheet *s,
                            long round_no, const char *ref_codes,
                            core_err *err);

#endif
