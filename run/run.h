/* run.h: the engine behind `prereg run`: command strings, running one
 * command (spawning, timeouts, process clean-up, cancellation), processes
 * and PSS, host facts, the plan, and a batch of measured runs.
 * SPDX-License-Identifier: MIT
 *
 * The engine never prints: what a batch has to say while it runs reaches
 * the program through a progress callback (run_progress), and the plan is
 * handed over as data for the program to show.
 */
#ifndef PREREG_RUN_H
#define PREREG_RUN_H

#include <linux/limits.h> /* PATH_MAX, whatever the includer defines */
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "data/data.h"
#include "protocols/proto.h"

/* Command strings */

/** 1 when cmd holds shell syntax and must go through /bin/sh -c: quotes,
 * $ * ? | & ; < > ( ) ` \ (the contract's list) and, because a direct exec
 * would silently mean something else, also newlines, tabs, #, ~, [ and a
 * leading NAME=VALUE assignment. */
int run_needs_shell(const char *cmd);

/** The argv a command string is executed with: either {"/bin/sh", "-c",
 * cmd} or cmd split on spaces. Returns a newly allocated NULL-terminated
 * vector (free with run_argv_free), or NULL when out of memory or when
 * cmd has no word at all. */
char **run_argv(const char *cmd);
void run_argv_free(char **argv);

/* Running one command */

#define RUN_GRACE_S 2.0 /* SIGTERM -> SIGKILL */

/* Where one output stream goes. fd >= 0, or a path (the file, appended
 * to, is then created at the first byte kept, so that a command that
 * writes nothing leaves no file, and fd holds it from then on: the caller
 * closes it): at most limit bytes in total over all commands that share
 * the sink (the rest is read and dropped, never fatal). buf != NULL:
 * captured in memory, also bounded by limit. None of these: /dev/null. */
typedef struct run_sink {
  int fd;
  const char *path;
  struct core_buf *buf;
  size_t limit;
  size_t written; /* bytes kept so far (updated by run_exec) */
  int truncated;  /* 1 once output was dropped */
  /* The errno of the first write to the file that failed (ENOSPC, EFBIG,
   * EIO; or its creation), 0 when none. From then on nothing more is
   * written (the pipe is still drained); the caller must not record the
   * run as if its output were kept. */
  int error;
} run_sink;

/* A selection pattern of a sheet, expanded but for the container ID
 * ({cid}, known only once the run's command wrote it): the text is
 * parts[0] CID parts[1] ... CID parts[n_parts-1]; n_parts == 1 when the
 * pattern does not use {cid}. */
typedef struct run_pattern {
  char *const *parts;
  size_t n_parts;
} run_pattern;

/* The processes that are a run's (sheet key `processes`): what a PSS
 * sample counts, and what ending the run stops. Besides its own tree: the
 * members of a cgroup and of every cgroup below it, the processes whose
 * command line holds a pattern, and the processes below those. */
typedef struct run_sel {
  int descendants;            /* count the spawned process, its
                                 descendants and the orphans adopted */
  const run_pattern *cgroup;  /* a cgroup (see run_select), or NULL */
  const run_pattern *cmdline; /* substrings of command lines */
  size_t n_cmdline;
  /* The container IDs {cid} stands for: those known (an earlier step's),
   * and the one in cidfile when it holds one. A pattern with {cid}
   * selects nothing while there is none. */
  const char *const *cids;
  size_t n_cids;
  const char *cidfile; /* or NULL */
  double cid_wait_s;   /* how long a sample waits for the cidfile */
} run_sel;

/* A PSS sample: when, of which processes, and where the list goes. */
typedef struct run_pss {
  double after_s;        /* sample this long after the spawn; < 0: none */
  const run_sel *sel;    /* the processes counted */
  const char *list_path; /* TSV process list to write, or NULL */
  int stop_after;        /* 1: end the run once sampled (a memory-only
                            workload such as `sleep 300`) */
} run_pss;

typedef struct run_req {
  const char *cmd;        /* command string (see run_argv) */
  const char *cwd;        /* working folder, NULL: inherit */
  const char *const *env; /* extra NAME=VALUE entries, NULL-terminated, or
                             NULL */
  double timeout_s;       /* <= 0: none */
  double grace_s;         /* SIGTERM -> SIGKILL delay; <= 0: 2 s */
  run_sink *out, *err;    /* NULL: /dev/null */
  const run_pss *pss;     /* NULL: no sample */
  const char *cgroup_dir; /* per-run cgroup (absolute path) the child is
                             moved into before exec, or NULL */
  int uncancellable;      /* 1: run_cancel_fd is not watched (the clean-up
                             of a run that was interrupted) */
} run_req;

typedef struct run_res {
  int spawned; /* 0: the command could not be started (see why) */
  int exited;  /* 1: exit_code valid */
  int exit_code;
  int signo;       /* > 0: ended by this signal */
  int timed_out;   /* ended by our timeout */
  int interrupted; /* ended because run_cancel_fd became readable */
  int stopped;     /* ended by us after the PSS sample (pss->stop_after) */
  double wall_s, user_s, sys_s;
  long maxrss_kib;
  long ctxsw_invol; /* involuntary context switches (ru_nivcsw) */
  int pss_sampled;  /* 1: pss_kib holds the sum */
  int pss_failed;   /* 1: the selection could not be read (why says why) */
  long pss_kib;
  size_t pss_counted, pss_unreadable;
  char why[512]; /* the failure in words, "" when none */
} run_res;

/** When >= 0, a descriptor whose becoming readable cancels the running
 * command: its group is killed at once and the result has interrupted =
 * 1. run_cancel_arm points it at a self-pipe that run_cancel writes. */
extern int run_cancel_fd;

/** Cancellation of a batch, for SIGINT/SIGTERM. run_cancel_arm clears an
 * earlier cancellation and opens the self-pipe behind run_cancel_fd (call
 * it before installing handlers that call run_cancel); run_cancel_disarm
 * closes it. run_cancel is async-signal-safe: from a signal handler it
 * kills the running command at once (see run_cancel_fd) and makes the
 * batch stop after that run, freezing what it has. run_cancelled says
 * whether run_cancel was called since run_cancel_arm. Without the pipe
 * (pipe2 failed) the batch still stops between runs. */
void run_cancel_arm(void);
void run_cancel_disarm(void);
void run_cancel(void);
/** Whether run_cancel was called since run_cancel_arm. */
int run_cancelled(void);

/** Runs one command: spawned with posix_spawn by a small helper process
 * (see exec.c: so that its ru_maxrss cannot include our memory; the
 * helper's own high-water mark is reset through /proc/self/clear_refs
 * before each spawn where allowed), stdin from /dev/null, in
 * a new process group, outputs through pipes into the sinks. The timeout
 * sends SIGTERM to the group, to every other descendant and to the run's
 * orphans, then SIGKILL after the grace period. Whatever happened, when
 * it returns nothing the command started is left running: the group, any
 * descendant that changed group, and any orphan (the helper, or we, are
 * child subreapers: PR_SET_CHILD_SUBREAPER) are killed and reaped; if we
 * are killed -9, the helper does the same before it exits. Returns CORE_OK
 * whenever res describes the command (even a failing one); an error only when
 * the engine itself failed. */
core_status run_exec(const run_req *req, run_res *res, core_err *err);

/** Starts the spawn helper now (run_exec starts it at its first call
 * otherwise): call it early, while the process is still small, so that no
 * command's ru_maxrss includes memory we hold. _stop ends it. */
void run_helper_start(void);
void run_helper_stop(void);

/** Makes the calling process a child subreaper (once), so that daemonising
 * descendants are reparented to us and can be killed. */
void run_become_subreaper(void);

/** Kills (SIGKILL) and reaps every child of ours and all their
 * descendants. Returns the number of processes killed. */
size_t run_kill_all_children(void);

/* A parsed metrics file: name=value lines. */
typedef struct run_metric {
  char name[64];
  double value;
} run_metric;

/** Parses the PREREG_METRICS file at path (missing file: no metrics).
 * Blank lines and lines starting with '#' are skipped; anything else must
 * be NAME=VALUE with NAME [A-Za-z_][A-Za-z0-9_]* and a finite number; a
 * later line for the same name replaces the earlier. OUT: *m newly
 * allocated (core_free), *n. On a bad line returns CORE_EINPUT with
 * "metrics file line N: ..." in err (and *m NULL). */
core_status run_parse_metrics(const char *path, run_metric **m, size_t *n,
                              core_err *err);

/* The host's conditions (run/host_conditions.c) */

/** What adds noise on this host, in h->cond (governor, boost, smt,
 * isolated, nohz_full, aslr, swap, power, clocksource, load; a value ""
 * where the host has no source), read under PREREG_HOST_ROOT when set (a
 * test hook); nothing is changed. Every batch records them. */
void run_host_conditions(data_host_facts *h);
/** How to change the fact named name, in words (static; "" when unknown). */
const char *run_host_advice(const char *name);

/* Progress */

typedef enum run_event_kind {
  RUN_EVENT_RUN,           /* a recorded run ended */
  RUN_EVENT_WARMUP_FAILED, /* a warm-up failed (the batch goes on) */
  RUN_EVENT_NOTES,         /* notes of the recovery of unfinished batches */
  RUN_EVENT_HOST,          /* a batch across hosts: a host was lost, or a
                              host threat was found (text) */
  RUN_EVENT_WAIT           /* waiting for the registered conditions before
                              a round (text: why) */
} run_event_kind;

/* What the engine reports while it works: a run finished (with the
 * figures a progress line needs), a warm-up failed, recovery notes. Every
 * pointer is borrowed for the call. */
typedef struct run_event {
  run_event_kind kind;
  const char *host;           /* a batch across hosts: the host (RUN,
                                 WARMUP_FAILED, HOST), else NULL */
  const char *workload, *arm; /* RUN, WARMUP_FAILED */
  long round;                 /* RUN: its round; WARMUP_FAILED: the
                                 warm-up's number */
  size_t done, total;         /* RUN: recorded runs of the batch so far,
                                 of the total it is to run */
  const char *failure;        /* RUN: NULL when valid, else why not;
                                 WARMUP_FAILED: why */
  const char *text;           /* WARMUP_FAILED: the sentence the facts
                                 record; NOTES: the notes, a line each */
  double wall_s;              /* RUN: the run's wall time */
  double elapsed_s, eta_s;    /* RUN: since the batch began; estimated
                                 for the runs left */
  const char *log;            /* RUN: the batch's log file, where the
                                 engine keeps a line per run */
} run_event;

/* Where events go: fn(ctx, ev), called on the engine's thread as things
 * happen (a NULL fn drops them). */
typedef struct run_progress {
  void (*fn)(void *ctx, const run_event *ev);
  void *ctx;
  /* Optional (NULL: no look stops anything): asked before the next round
   * of workload w once the round that completes its look `look` (1-based,
   * never the last) is on disk, whether every comparison of w is decided
   * there; *stop = 1 stops the workload: its rounds left are not run,
   * and the stop goes into the batch's facts. look_ctx is its own. */
  core_status (*look)(void *look_ctx, size_t w, size_t look, int *stop,
                      core_err *err);
  void *look_ctx;
} run_progress;

/* The plan (run/plan.c) */

/** How the order is drawn, in words, for the batch facts. */
#define RUN_ORDER_TEXT                                                        \
  "interleaved rounds: Fisher-Yates with splitmix64 seeded by seed * "        \
  "0x9E3779B97F4A7C15 ^ fnv1a64(workload) ^ round (run/plan.c)"

/** The same, when the version the batch runs under is stamped: its seed
 * is drawn from the token, which no one knew before the stamp existed. */
#define RUN_STAMP_ORDER_TEXT                                                  \
  "interleaved rounds: Fisher-Yates with splitmix64 seeded by s * "           \
  "0x9E3779B97F4A7C15 ^ fnv1a64(workload) ^ round, s the first 8 bytes "      \
  "(big-endian) of the SHA-256 of the token order_stamp names (run/plan.c)"

#define RUN_HOST_ORDER_TEXT                                                   \
  "interleaved rounds per host: Fisher-Yates with splitmix64 seeded by "      \
  "seed * 0x9E3779B97F4A7C15 ^ fnv1a64(workload) ^ round ^ "                  \
  "rotl64(fnv1a64(host), 32) (run/plan.c)"

/** 1 when `prereg run` has something to run for w
 * (proto_workload_runs_itself); a workload without is filled by `prereg
 * import`. */
int run_workload_runnable(const proto_workload *w);
/** The rounds and the warm-ups per arm a plan holds for w of s: the
 * sheet's, or with quick (the demo) proto_quick_rounds and at most 1. */
long run_plan_rounds(const proto_sheet *s, const proto_workload *w, int quick);
long run_plan_warmups(const proto_workload *w, int quick);

/* One run of the plan. */
typedef struct run_plan_item {
  size_t workload, arm; /* indexes into the sheet */
  long round;           /* 1-based; 0 for a warm-up */
  long warm;            /* the warm-up's number when round == 0 */
  size_t host;          /* index into the plan's hosts; 0 without */
  int done;             /* already collected (counted, never run again) */
  /* A collected recorded run: its exit codes ("0;1"), borrowed from the
   * rows given to run_plan_collect; NULL otherwise. */
  const char *collected_exit_code;
} run_plan_item;

/* Per workload: the warm-ups (round-robin over the arms), then the
 * rounds: every arm once per round in the order run_round_order draws
 * (interleaved), or each arm's rounds in a row (blocked). A sheet with
 * hosts crosses that plan with its hosts: every host runs all of it, in
 * orders of its own (run_host_round_order), the items host after host. */
typedef struct run_plan {
  run_plan_item *items;
  size_t n, cap;
  char **hosts; /* the hosts the plan crosses (owned), none: here */
  size_t n_hosts;
  int hosts_pending;    /* hosts by count, not yet named: no items until
                           run_plan_set_hosts */
  int quick;            /* proto_quick_rounds and at most 1 warm-up */
  const char *only;     /* the one workload, or NULL (borrowed) */
  size_t planned;       /* recorded runs (round > 0) */
  size_t collected;     /* of those, already collected (run_plan_collect) */
  uint64_t seed;        /* of the round orders: the sheet's, or the stamp's */
  char order_stamp[64]; /* "stamps/vN.tsr" when drawn from it, else "" */
} run_plan;

/** Builds the plan of the runnable workloads of s (only one, when only is
 * not NULL; only is kept, borrowed). OUT: *p filled from scratch; free
 * with run_plan_free, also on error. */
core_status run_plan_build(const proto_sheet *s, const char *only, int quick,
                           run_plan *p, core_err *err);
void run_plan_free(run_plan *p);
/** verify's check of the batches whose round orders were drawn from a
 * stamp (facts order_stamp): each round's runs, in seq order, follow the
 * order recomputed from the token. A line per such batch ("b0001: rows
 * collected in the order the stamp dictates (stamps/v0.tsr)"), or per
 * run out of order (the first few), counted in *problems. Nothing for a
 * folder without such a batch. CORE_ENOMEM, or a version that does not
 * load. */
core_status run_order_verify(const data_experiment *exp, core_buf *report,
                             long *problems, core_err *err);
/** When the version a batch of exp runs under (the newest) is stamped and
 * the sheet has no hosts, draws p's round orders anew from the token
 * (run_stamp_seed), names it in p->order_stamp; else leaves p as it is.
 * Call it before run_plan_collect. */
core_status run_plan_stamp_order(run_plan *p, const proto_sheet *s,
                                 const data_experiment *exp, core_err *err);

/** Marks what the experiment already holds: with recover, first freezes
 * batches a crash left unfinished (data_recover; its notes go to progress
 * as RUN_EVENT_NOTES), then loads every row and marks the plan's runs
 * already collected (and the warm-ups of workloads with nothing left to
 * run). OUT: *rows (free with data_rowset_free, also on error): the
 * collected rows, which the plan's collected_exit_code points into and
 * run_batch needs. progress may be NULL. */
core_status run_plan_collect(data_experiment *exp, const proto_sheet *s,
                             int recover, const run_progress *progress,
                             run_plan *p, data_rowset *rows, core_err *err);

/** Marks the runs of p that rows of exp already fill, as the counting
 * rule says (run_plan_collect does once it has loaded them); hosts by
 * count not yet named are named by the rows. rows must outlive p's
 * use. */
core_status run_plan_mark(run_plan *p, const data_experiment *exp,
                          const proto_sheet *s, const data_rowset *rows,
                          core_err *err);

/** (Re)builds the items of p, crossed with the n hosts named (copied):
 * for a sheet whose hosts are a count, once the allocation named them.
 * Nothing of p is collected afterwards (call run_plan_collect). */
core_status run_plan_set_hosts(run_plan *p, const proto_sheet *s,
                               const char *const *hosts, size_t n,
                               core_err *err);

/* The commands of one run of the plan, expanded as they will run. */
typedef struct run_commands {
  char *prepare; /* NULL when the workload has none */
  char **steps;  /* n_steps: each step (or the workload's cmd) inside the
                    arm's run template */
  size_t n_steps;
  int has_steps; /* 1: the workload declares steps; 0: a single cmd */
  char *cleanup; /* NULL when none */
} run_commands;

/** Expands the commands of item as run run_id. OUT: *out (free with
 * run_commands_free, also on error). */
core_status run_plan_commands(const proto_sheet *s, const run_plan_item *item,
                              const char *run_id, run_commands *out,
                              core_err *err);
void run_commands_free(run_commands *c);

/* The node runner (run/node.c) */

/* A batch across hosts measures on the nodes: each step the coordinator
 * starts there runs `prereg node-run`, which calls one of these and
 * sends each line they hand over, whole and at once, back on its output
 * (the lines are documented in run/node.c). */

/** The first word of the first line of every step. */
#define RUN_NODE_HELLO "prereg-node 1"
/** The node runner sends "alive" this often (seconds) while it works. */
#define RUN_NODE_HEARTBEAT_S 5.0

/* Where the lines go: line(ctx, text, err) sends text and a newline;
 * an error stops the runner. */
typedef struct run_node_sink {
  core_status (*line)(void *ctx, const char *text, core_err *err);
  void *ctx;
} run_node_sink;

/** The node's preflight for the plan of s on host: every arm's
 * `requires`, the image digests, `versions`, the machine checks, then a
 * "facts" line with the node's facts and what it found; a failure is
 * also sent as a "refused" line. */
core_status run_node_preflight(const proto_sheet *s, const char *host,
                               int quick, const run_node_sink *out,
                               core_err *err);

/* One step: one round of one workload on one host. */
typedef struct run_node_req {
  const char *host;     /* the node's name in the plan */
  const char *batch;    /* the batch's id */
  const char *bdir;     /* the batch's folder, absolute, shared with the
                           coordinator: per-run files go there */
  int version;          /* the sheet version the rows are collected under */
  int quick;            /* the plan of run --quick */
  const char *workload; /* the workload, and ... */
  long round;           /* ... its round; 0: its warm-ups */
  const char *arms;     /* the arms to run, "a,b" (NULL: every arm) */
  const char *ref_exit; /* the reference arm's exit codes collected
                           earlier when it is not run again, or NULL */
  long seq;             /* the first run's place in the host's order */
  char *const *digests; /* per arm: the digest the node's preflight
                           found ("" for none) */
} run_node_req;

/** Runs the round's runs in the plan's order for q->host (warm-ups are
 * not recorded; a failed one is sent as a "warmup" line), then sends the
 * round's rows (after parity for expect_exit = "reference") and its end
 * marker. CORE_EINTERRUPT, and no end marker,
 * when run_cancel stopped it. */
core_status run_node_round(const proto_sheet *s, const run_node_req *q,
                           const run_node_sink *out, core_err *err);

/* A batch (run/batch.c) */

typedef struct run_batch_result {
  char batch[16]; /* the batch's id, "" when none was begun */
  size_t recorded, valid, invalid;
  int interrupted; /* stopped by run_cancel */
} run_batch_result;

/** Runs what is left of plan p as one new batch of exp. p has been
 * through run_plan_collect, whose rows must still be alive. Preflight
 * first (cgroups, cold caches, every arm's `requires`, image digests,
 * `versions`), refusing before any run; then each run measured, its rows
 * written as it ends (for expect_exit = "reference", when its round ends),
 * and whatever was collected frozen with the batch facts, also after a
 * cancellation or an error. resume is recorded in the facts; progress may
 * be NULL. Returns CORE_EINTERRUPT after run_cancel (the rows kept are
 * frozen; nothing is written when it came before the first run). OUT:
 * *res, filled also on error. */
core_status run_batch(data_experiment *exp, const proto_sheet *s,
                      const run_plan *p, int resume,
                      const run_progress *progress, run_batch_result *res,
                      core_err *err);

/* The engine, for runners (run/engine.c)
 *
 * A batch is its plan, its hosts and a runner. The engine owns what
 * every batch has, wherever its runs are measured: the batch's folder,
 * its counts, warnings and load averages, its progress, and the one
 * freeze of its facts. A runner measures the plan's runs on its hosts:
 * the local runner (run/batch.c) in this process, on this machine; the
 * Slurm runner (fleet/slurm*.c) on nodes reached through srun, with what
 * follows, the plan's marks (run_plan_mark, run_plan_set_hosts) and
 * run_cancelled. */
typedef struct run_engine {
  data_experiment *exp;
  const proto_sheet *s;
  const run_plan *p;
  const run_progress *progress; /* may be NULL */
  int resume;                   /* recorded in the facts */
  int version; /* the sheet version collected under (set before prepare) */
  data_batch *batch; /* NULL before begin and after freeze */
  char bid[16], bdir[PATH_MAX], started[32]; /* bdir: absolute */
  double load_start[3];
  int has_load_start;
  int interrupted; /* cancelled before the last run (run_cancel) */
  size_t valid, invalid, total, done; /* total: recorded runs planned */
  double t_start;
  int log_fd;  /* the batch's log, open from its first line until the
                  freeze; -1 when not open (set by run_engine_batch) */
  char **warn; /* warm-up failures, in words */
  size_t n_warn, cap_warn;
  data_inputs inputs; /* the sheet's inputs the batch runs with */
  char **changed;     /* what differed in them at the end, in words */
  size_t n_changed, cap_changed;
  data_stop *stops; /* workloads stopped at a look (one per workload) */
  size_t n_stops;
  const struct run_runner *runner; /* the batch's, for its facts */
  void *self;
} run_engine;

/* What a runner does for the engine; self is its own state. */
typedef struct run_runner {
  const char *order; /* how runs are ordered, as the facts say it */
  /* Before anything is written: preflight (and an allocation); a
   * refusal ends the batch with nothing written. */
  core_status (*prepare)(void *self, run_engine *e, core_err *err);
  /* The batch's folder exists: measures the plan's runs left, handing
   * rows and warm-up failures to the engine. */
  core_status (*collect)(void *self, run_engine *e, core_err *err);
  /* After collect, or a failed prepare: lets go of what it holds. */
  void (*finish)(void *self, run_engine *e);
  /* Adds the runner's facts to f: images (im, one per arm, given
   * zeroed), versions (vers, the same), order, nodes. */
  core_status (*facts)(void *self, const run_engine *e, data_run_facts *f,
                       data_arm_image *im, data_arm_versions *vers,
                       core_err *err);
  /* The batch was frozen without an error: why it still did not end as
   * planned (a setup failure, a lost node), or CORE_OK. */
  core_status (*outcome)(void *self, run_engine *e, core_err *err);
} run_runner;

/** Runs a batch through runner r: prepare, the batch's folder and its
 * facts at the start, collect, then the batch frozen with its facts
 * whatever happened (a cancellation, an error, a lost host) and *res
 * filled. e holds exp, s, p, progress and resume; the rest is the
 * engine's. */
core_status run_engine_batch(run_engine *e, const run_runner *r, void *self,
                             run_batch_result *res, core_err *err);
/** Hands an event to the batch's progress. */
void run_engine_emit(const run_engine *e, const run_event *ev);
/** A recorded run ended (its rows may wait for its round's end): counted
 * as done, told in the batch's log and to progress. host NULL: this
 * machine. */
core_status run_engine_ran(run_engine *e, const char *host,
                           const char *workload, const char *arm, long round,
                           const char *failure, double wall_s, core_err *err);
/** Rows go to the batch, each run among them counted valid or not. */
core_status run_engine_rows(run_engine *e, const data_row *rows, size_t n,
                            core_err *err);
/** A warm-up failed, for the reason why: text, as run_warmup_words wrote
 * it, kept for the facts and told to progress. host NULL: this
 * machine. */
core_status run_engine_warmup(run_engine *e, const char *host,
                              const char *workload, const char *arm, long warm,
                              const char *why, const char *text,
                              core_err *err);
/** Appends a copy of text to a list of strings. */
core_status run_note(char ***v, size_t *n, size_t *cap, const char *text,
                     core_err *err);

/* Helper programs (run/tool.c) */

/* What a helper program did: its output (at most the cap) and the first
 * 4 KiB of its error output. */
typedef struct run_tool_result {
  core_buf out, err;
  int exited;    /* 1: it exited by itself (exit_code valid) */
  int exit_code; /* -1 when it did not exit */
  int timed_out; /* killed at the time-out */
  int too_long;  /* killed: its output passed the cap */
} run_tool_result;

/** Runs argv (argv[0] looked up in PATH; executed directly, never through
 * a shell) in a process group of its own, with in[0..in_len) as its
 * standard input (in NULL: /dev/null), its standard output kept up to cap
 * bytes; past the cap or timeout_s it is killed (res says which).
 * CORE_OK whenever res describes what happened (a failing program too);
 * CORE_ERUN when it could not be started (not installed: the message
 * names it). OUT: *res (run_tool_result_free, also on error). */
core_status run_tool(const char *const argv[], const void *in, size_t in_len,
                     size_t cap, double timeout_s, run_tool_result *res,
                     core_err *err);
void run_tool_result_free(run_tool_result *res);
/** Why a helper program failed, in words for a message: the time-out,
 * the cap, the first line(s) of its error output, or its exit code; no
 * control byte. */
void run_tool_why(const run_tool_result *res, char *out, size_t cap);

#endif
