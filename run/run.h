/* run.h: private to core/: the execution engine behind `prereg run`
 * (spawning, timeouts, process clean-up, metrics, PSS sampling, host facts
 * and the run plan).
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_RUN_H
#define PREREG_RUN_H

#include <stddef.h>

#include "core/core.h"
#include "data/data.h"

/* {==== Command strings ==== */

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

/* }==== */

/* {==== Running one command ==== */

/* Where one output stream goes. fd >= 0: appended to that file, at most
 * limit bytes in total over all commands that share the sink (the rest is
 * read and dropped, never fatal). buf != NULL: captured in memory, also
 * bounded by limit. Both unset: /dev/null. */
typedef struct run_sink {
  int fd;
  struct core_buf *buf;
  size_t limit;
  size_t written; /* bytes kept so far (updated by run_exec) */
  int truncated;  /* 1 once output was dropped */
  /* Added for issue 7: the errno of the first write to fd that failed
   * (ENOSPC, EFBIG, EIO), 0 when none. From then on nothing more is
   * written (the pipe is still drained); the caller must not record the
   * run as if its output were kept. */
  int error;
} run_sink;

/* Which processes a PSS sample counts, and where the list goes. */
typedef struct run_pss {
  double after_s;             /* sample this long after the spawn; < 0: none */
  int descendants;            /* count the spawned process and descendants */
  const char *cgroup;         /* a cgroup path (absolute or relative to the
                                 cgroup v2 mount), or NULL */
  const char *const *cmdline; /* substrings of command lines, or NULL */
  size_t n_cmdline;
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
  int pss_sampled; /* 1: pss_kib holds the sum */
  long pss_kib;
  size_t pss_counted, pss_unreadable;
  char why[512]; /* the failure in words, "" when none */
} run_res;

/** When >= 0, a descriptor that becomes readable on SIGINT/SIGTERM (a
 * self-pipe written by cli_cmd_run's handler): the running command's group is
 * killed at once and the result has interrupted = 1. */
extern int run_cancel_fd;

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

/* }==== */

/* {==== Processes (core/proc.c) ==== */

/** PSS sample: sums the Pss: of /proc/PID/smaps_rollup of the processes
 * sel selects and writes one TSV line per process to sel->list_path: pid,
 * ppid, pss_kib (or "vanished"/"unreadable: why"/"zombie: ...", a zombie
 * counting neither as counted nor unreadable), the reasons it was
 * counted ("run", "descendant", "adopted", "cgroup", "cmdline:S"), command
 * line. root: the run's process; adopter: the subreaper that adopts the
 * run's orphaned descendants (see run_adopted), 0 for none. OUT:
 * *pss_kib, *counted, *unreadable. */
core_status run_sample_pss(const run_pss *sel, int root, int adopter,
                           long *pss_kib, size_t *counted, size_t *unreadable,
                           core_err *err);

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

/* }==== */

/* {==== Host (core/host.c) ==== */

/** The facts of this machine (all of *h but the load averages). */
void run_host_facts(data_host_facts *h);
/** The 1, 5 and 15 minute load averages from /proc/loadavg (two decimals,
 * as the kernel prints them). Returns 1, or 0 (and zeros) when they
 * cannot be read. OUT: avg. */
int run_load_avg(double avg[3]);
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
 */
core_status run_resident_fraction(const char *path, double *fraction,
                                  core_err *err);

/** The cgroup v2 folder under which per-run cgroups can be made, with
 * memory and cpu controllers: returns a newly allocated path, or NULL with
 * the reason in err (CORE_ERUN). */
char *run_cgroup_parent(core_err *err);
/** Reads memory.peak (MiB) and cpu.stat usage_usec (s) of a cgroup. */
core_status run_cgroup_read(const char *dir, double *mem_peak_mib,
                            double *cpu_s, core_err *err);

/* }==== */

/* {==== Plan (core/run_plan.c) ==== */

/** The arm order of one round: a Fisher-Yates shuffle of 0..n-1 driven by
 * splitmix64, seeded with
 *   seed * 0x9E3779B97F4A7C15 ^ fnv1a64(workload) ^ round
 * (fnv1a64: 64-bit FNV-1a of the name's bytes; j = next() % (i + 1) for
 * i = n-1 down to 1). The same seed, workload and round always give the
 * same order, on every machine. OUT: order[0..n-1]. */
void run_round_order(unsigned long seed, const char *workload, long round,
                     size_t n, size_t *order);

/** How the order is drawn, in words, for the batch facts. */
#define RUN_ORDER_TEXT                                                        \
  "interleaved rounds: Fisher-Yates with splitmix64 seeded by seed * "        \
  "0x9E3779B97F4A7C15 ^ fnv1a64(workload) ^ round (run/plan.c)"

/* }==== */

#endif
