/* run_internal.h: what the files of run/ share about a batch in progress
 * (private to run/): the preflight's findings, one run's outcome, its rows.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_RUN_INTERNAL_H
#define PREREG_RUN_INTERNAL_H

#include <limits.h>
#include <sched.h>
#include <stdio.h>

#include "core/limits.h"
#include "run/run.h"

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
  /* The built-in metrics prereg measures, by where their value comes
   * from; has[m]: measured in this run (the steps combined by the row's
   * rule, protocols/metrics.c). */
  double val[PROTO_N_MEASURES];
  unsigned char has[PROTO_N_MEASURES];
  int pss_failed;   /* PSS was not sampled; reason says why */
  long ctxsw_invol; /* involuntary context switches of its steps */
  int has_ctxsw;
  double fact[DATA_NFACTS]; /* the conditions around it (data_row) */
  unsigned has_fact;
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

/* The engine (run/engine.c): what only run/ calls */

/** Workload w of the batch's sheet stopped early at look `look`
 * (1-based) with n runs per arm: kept for the facts, which are written
 * again at once (a batch killed after it keeps the stop), and told to
 * progress as a note. items: the runs the stop leaves out. */
core_status run_engine_stop(run_engine *e, size_t w, size_t look, size_t items,
                            core_err *err);

/** The sentence a failed warm-up is kept as: "WORKLOAD ARM warm-up N:
 * WHY". */
void run_warmup_words(const proto_sheet *s, const run_plan_item *it,
                      const char *why, char *out, size_t cap);

/* The batch's log (run/log.c) */

/** Appends the run ev tells of (RUN) to BDIR/BID.log, the batch's log:
 * done of total, host, workload, arm, round, "ok" or why not, wall
 * time. *fd: the log's descriptor, opened at the first line (when < 0)
 * and kept open for the next ones; the caller closes it. */
core_status run_log_run(const char *bdir, const char *bid, int *fd,
                        const run_event *ev, core_err *err);

/* Processes (run/proc.c) */

/* One process a selection holds, and why: "run", "descendant",
 * "adopted", "cgroup:DIR" (a member of the cgroup folder DIR),
 * "cmdline:TEXT" (its command line holds TEXT), "below:PID" (a descendant
 * of selected process PID), joined by ','. */
typedef struct run_chosen {
  int pid;
  int zombie; /* ended, not yet reaped: it holds nothing */
  int kind;   /* RUN_SEL_* bits */
  char reasons[1024];
} run_chosen;

enum {
  RUN_SEL_TREE = 1,    /* the run's own tree */
  RUN_SEL_CGROUP = 2,  /* in the cgroup (or below a member of it) */
  RUN_SEL_CMDLINE = 4, /* by its command line (or below such a process) */
  RUN_SEL_CHILD = 8    /* its parent is selected too */
};

typedef struct run_chosen_set {
  run_chosen *v;
  size_t n, cap;
} run_chosen_set;

void run_chosen_free(run_chosen_set *cs);

/** The processes sel selects now; prereg, its ancestors and the spawn
 * helper never. root: the run's process (<= 0: its tree has ended);
 * adopter: the subreaper that adopts the run's orphaned descendants (see
 * run_adopted), 0 for none. The cgroup is a cgroup path ("/prereg/x"),
 * looked for in the memory controller's v1 hierarchy, then the other v1
 * hierarchies, then v2 (or the one tree of a v2-only host), or a folder
 * under the cgroup root; PREREG_CGROUP_ROOT, when set, replaces the root
 * /sys/fs/cgroup (for tests, on fabricated trees). need = 1 (a sample):
 * a selection that cannot be read is an error (CORE_ERUN) with the cause
 * in err: the cgroup is not there, or it uses {cid} and sel->cidfile held
 * no ID within sel->cid_wait_s. need = 0 (ending a run, checking for
 * leaks): such a selection selects nothing. OUT: *out (free with
 * run_chosen_free, also on error). */
core_status run_select(const run_sel *sel, int root, int adopter, int need,
                       run_chosen_set *out, core_err *err);

/** PSS sample: sums the Pss: of /proc/PID/smaps_rollup of the processes
 * p->sel selects (run_select with need = 1) and writes one TSV line per
 * process to p->list_path: pid, ppid, pss_kib (or "vanished"/"unreadable:
 * why"/"zombie: ...", a zombie counting neither as counted nor
 * unreadable), the reasons it was counted, command line. root, adopter:
 * as for run_select. OUT: *pss_kib, *counted, *unreadable. */
core_status run_sample_pss(const run_pss *p, int root, int adopter,
                           long *pss_kib, size_t *counted, size_t *unreadable,
                           core_err *err);

/** Ends what sel selects besides the run's tree (which has ended): at
 * once SIGKILL to what a container is made of (the cgroup's members, and
 * every selected process whose parent is selected too), then up to
 * grace_s for the rest (its supervisors, such as a container's shim,
 * which end once their container is gone) to end by themselves, then
 * SIGKILL to what is left, waiting up to 2 s more for it to be gone.
 * Those not descended from prereg (outside the run's own tree: a
 * container's processes, or anything else the selection named) are
 * described in outside as "PID COMMAND (REASONS)" (joined by "; ", cut
 * at cap). Returns the number of processes signalled. */
size_t run_sel_end(const run_sel *sel, double grace_s, char *outside,
                   size_t cap);

/** What sel still selects once a run and its cleanup are over, given up
 * to settle_s to end by itself (a runtime cleaning up after the run):
 * each process is a leak, stopped (SIGKILL, waited for up to 2 s) and
 * described in leaks as "PID COMMAND" (joined by "; ", cut at cap).
 * Returns how many there were. */
size_t run_sel_leaks(const run_sel *sel, double settle_s, char *leaks,
                     size_t cap);

/** The container ID in the file at path: its first line, trimmed, when
 * it is 12 to 128 hex digits. OUT: id (cap >= 129). Returns 1; 0 when
 * there is none (yet); -1 when the line is no container ID (id then
 * holds its first 40 bytes, for a message). */
int run_read_cid(const char *path, char *id, size_t cap);

/* The cgroup folders a run's selection names that did not exist before
 * it: in each hierarchy, the shallowest missing ancestor of the path. */
typedef struct run_cg_made {
  char **dirs;
  size_t n;
} run_cg_made;

/** Notes, before a run, which folders of the cgroup path (a cgroup path
 * or a folder under the cgroup root; see run_select) do not exist yet.
 * OUT: *m (free with run_cgroup_unmake, which also removes them). */
void run_cgroup_mark(const char *path, run_cg_made *m);
/** After the run: removes (rmdir, deepest first) whatever empty cgroup
 * folders are left where m noted none, then frees m. A folder that still
 * holds a process, or existed before, stays. */
void run_cgroup_unmake(run_cg_made *m);

/** The parent of pid from /proc/PID/stat, or -1 when it cannot be read
 * (the process is gone). */
int run_proc_ppid(int pid);

/** Descendants of root (not root itself) found through /proc. OUT:
 * *pids newly allocated (core_free), *n. */
core_status run_descendants(int root, int **pids, size_t *n);

/** The run's orphans: the children of adopter (a child subreaper that
 * runs one command at a time, root) other than root, and everything below
 * them. An adopter <= 0 gives none. OUT as run_descendants. */
core_status run_adopted(int adopter, int root, int **pids, size_t *n);

/* Conditions (run/conditions.c) */

/* How many of a run's CPUs the frequency and throttle facts read at most:
 * two files each per run, outside its timing. */
#define RUN_COND_CPUS 64

/** Opens path (a /proc or /sys file) for reading, under PREREG_HOST_ROOT
 * when set (a test hook). NULL when it cannot be opened. */
FILE *run_host_open(const char *path);
/** A /proc file read before or after every run, whole (up to cap - 1
 * bytes, NUL-ended) into buf: kept open in *kept and read with one pread;
 * under PREREG_HOST_ROOT opened each time instead (a test may replace
 * the file between runs). Returns the bytes read, or -1. */
ssize_t run_host_kept_read(const char *path, int *kept, char *buf, size_t cap);
/** The 1-minute load average and the running tasks (-1 when not given)
 * from /proc/loadavg. Returns 1, or 0 when it cannot be read. */
int run_cond_load(double *load1, double *runnable);

/* What is read before a run and after it ([0] before, [1] after). */
typedef struct run_cond_snap {
  double load1, runnable, mhz;
  int has_load, has_mhz;
  double throttle[2], swap[2];
  int has_throttle[2], has_swap[2];
} run_cond_snap;

/** Reads the conditions before (before = 1: from scratch) or after a run
 * whose CPUs are cpus (a CPU list; NULL: those this process may use). */
void run_cond_take(run_cond_snap *sn, const char *cpus, int before);
/** The run's facts from sn and o's context switches into o->fact. */
void run_cond_facts(const run_cond_snap *sn, run_outcome *o);
/** Checks o's facts against the sheet's bounds: a run beyond one is made
 * invalid, its reason starting with DATA_CONDITIONS ("...: load 3.2 above
 * the registered 1.0"). Returns 1 when it was. */
int run_cond_judge(const proto_conditions *c, run_outcome *o);
/** Before a round: waits up to c->wait_s while the load is above
 * c->max_load, telling progress why (RUN_EVENT_WAIT) once. Returns 0 when
 * the wait ended with the load still above it, else 1. */
int run_cond_wait(const proto_conditions *c, const run_progress *progress);

/** The host facts the sheet's conditions require (governor, aslr,
 * boost, smt): CORE_ERUN naming the fact, its value here and how to
 * change it when one is not met. */
core_status run_cond_required(const proto_sheet *s, core_err *err);

/* The run's processes pinned to its CPUs while on. */
typedef struct run_pin {
  int on;
} run_pin;

/** Starts the run's processes on cpus from now on (NULL: nothing done).
 * CORE_ERUN when none of them may be used. OUT: *p (run_cond_unpin). */
core_status run_cond_pin(const char *cpus, run_pin *p, core_err *err);
void run_cond_unpin(run_pin *p);

/* Host (run/host.c) */

/** The facts of this machine (all of *h but the load averages). */
void run_host_facts(data_host_facts *h);
/** The 1, 5 and 15 minute load averages from /proc/loadavg (two decimals,
 * as the kernel prints them). Returns 1, or 0 (and zeros) when they
 * cannot be read. OUT: avg. */
int run_load_avg(double avg[3]);
/** The facts of this machine as a node named node of a plan across
 * hosts: the host's (load at the call), machine-id, boot_id, SMT,
 * threads per core, the CPUs this process may use. */
void run_node_facts(data_node_facts *f, const char *node);
/** This boot's /proc/sys/kernel/random/boot_id, "" when unreadable. */
void run_boot_id(char *out, size_t cap);
/** The host name (static buffer). */
const char *run_host_name(void);
/** "Cached:" of /proc/meminfo in MiB, or -1. */
long run_cached_mib(void);
/** Drops the page cache (sync, then 3 > /proc/sys/vm/drop_caches).
 * CORE_ERUN with the reason when that is not allowed. */
core_status run_drop_caches(core_err *err);
/** Checks, without dropping, that drop_caches can be written. */
core_status run_can_drop_caches(core_err *err);
/** Fraction (0..1) of the pages of path (a file, or every regular file
 * under a folder) resident in the page cache (mincore). OUT: *fraction.
 * CORE_ERUN when path does not exist, CORE_ENOMEM when out of memory. */
core_status run_resident_fraction(const char *path, double *fraction,
                                  core_err *err);

/** The cgroup v2 folder under which per-run cgroups can be made, with
 * memory and cpu controllers: returns a newly allocated path, or NULL with
 * the reason in err (CORE_ERUN). */
char *run_cgroup_parent(core_err *err);
/** Reads memory.peak (MiB) and cpu.stat usage_usec (s) of a cgroup. */
core_status run_cgroup_read(const char *dir, double *mem_peak_mib,
                            double *cpu_s, core_err *err);

/* Sinks, the spawn helper, cancellation, the plan's arm orders */

/** Appends a note of prereg's own to the sink's file (creating it when
 * need be), outside its limit; nothing for a sink without a file, or
 * once writing to it failed. */
void run_sink_note(run_sink *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** The spawn helper's process ID, or -1 when there is none. */
int run_helper_pid(void);

/** Every command run_exec starts from now on starts on cpus (NULL: on
 * the CPUs prereg may use). */
void run_exec_pin(const cpu_set_t *cpus);

/** The seed of round orders drawn from a token: the first 8 bytes of its
 * SHA-256 (hex), big-endian. */
uint64_t run_stamp_seed(const char hex[CORE_SHA256_HEX]);

/** The arm order of one round: a Fisher-Yates shuffle of 0..n-1 driven by
 * splitmix64, seeded with
 *   seed * 0x9E3779B97F4A7C15 ^ fnv1a64(workload) ^ round
 * (fnv1a64: 64-bit FNV-1a of the name's bytes; j = next() % (i + 1) for
 * i = n-1 down to 1). The same seed, workload and round always give the
 * same order, on every machine. OUT: order[0..n-1]. */
void run_round_order(uint64_t seed, const char *workload, long round, size_t n,
                     size_t *order);

/** The arm order of one round on one host of a plan across hosts: as
 * run_round_order, with the host's name mixed into the seed,
 *   seed * 0x9E3779B97F4A7C15 ^ fnv1a64(workload) ^ round ^
 *   rotl64(fnv1a64(host), 32)
 * so that each (host, workload, round) has an order of its own that
 * anyone can re-derive from the sheet and the host's name. */
void run_host_round_order(unsigned long seed, const char *host,
                          const char *workload, long round, size_t n,
                          size_t *order);

#endif
