/* fleet_internal.h: what the files of fleet/ share and nobody else sees:
 * the scheduler's commands, and for the Slurm coordinator the hosts of a
 * batch across hosts, their steps, and the coordinator's state.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_FLEET_INTERNAL_H
#define PREREG_FLEET_INTERNAL_H

#include <limits.h>

#include "fleet/fleet.h"
#include "run/run.h"

/* The scheduler's commands (scheduler.c) */

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

/* The Slurm coordinator (slurm*.c) */

#define SLURM_TOOL_S 60.0       /* squeue, scancel, scontrol */
#define SLURM_PREFLIGHT_S 900.0 /* a node's whole preflight */
#define SLURM_SLACK_S 60.0      /* added to a round's own deadline */
/* A step silent for this long (the node runner says "alive" every
 * RUN_NODE_HEARTBEAT_S) is taken as lost: a node that dies and comes back
 * before slurmctld notices leaves its step waiting for ever. */
#define SLURM_SILENCE_S 60.0

/* One step of a host: one round of one workload (round 0: its warm-ups;
 * -1: every round of a blocked workload, which is one step). */
typedef struct slurm_step {
  size_t workload;
  long round;
  char *arms;           /* "a,b" when not every arm runs, else NULL */
  const char *ref_exit; /* borrowed from the plan, or NULL */
  long runs;            /* recorded runs it makes */
  long rounds;          /* rounds it runs (it owes an end marker for each;
                           the warm-ups' step, which has none, one) */
} slurm_step;

typedef struct host_run {
  const char *name;  /* borrowed from the plan */
  slurm_step *steps; /* what is left here, in the plan's order */
  size_t n_steps, next;
  const slurm_step *cur; /* the step running, or NULL */
  int preflight;         /* the step running is the preflight */
  run_child c;
  int busy;      /* a step runs (its srun not yet reaped) */
  core_buf in;   /* a line not yet whole */
  int skip_line; /* the rest of a line past CORE_NODE_LINE_MAX: dropped */
  core_buf tail; /* the last of what srun wrote to stderr */
  double deadline, heard;
  char why[400];     /* why the step is taken as lost, "" while it is not */
  char jobstep[64];  /* JOB.STEP, from the runner's hello */
  char boot0[65];    /* boot_id at the preflight */
  char boot_end[65]; /* boot_id the last step saw */
  data_row *got;     /* rows of the step running, owning their strings */
  size_t n_got, cap_got;
  long ends; /* end markers of the step running */
  long seq;  /* the host's next run number */
  int lost;
  char *report;  /* the preflight's facts (JSON text), or NULL */
  char *refused; /* the preflight's refusal, or NULL */
  data_node_facts facts;
  char **digests; /* per arm, from the report */
  char *scheduler;
  size_t rounds_done, rounds_lost;
  int journal;    /* fd of batches/BATCH/HOST.lines, or -1 */
  core_buf early; /* the lines of the preflight, before the batch began */
  double synced;
} host_run;

/* The Slurm runner's state: the engine's (e) holds the batch. */
typedef struct coord {
  run_engine *e;
  run_plan *p; /* the engine's plan, whose hosts by count it names */
  const data_rowset *rows; /* collected before (for the digests) */
  host_run *h;             /* one per host of the plan */
  size_t n_h;
  char job[32], name[128], prereg[PATH_MAX], sheet[PATH_MAX];
  char **digests; /* per arm: what every node agreed on */
  int released;
  char **threats, **lost;
  size_t n_threats, cap_threats, n_lost, cap_lost;
  data_node_run *nodes; /* the facts' nodes, as last written */
} coord;

/* slurm.c */
core_status slurm_tool(const char *const argv[], core_buf *out, core_err *err);

/* slurm_steps.c */
/** The plan's hosts named from the allocation's list (a name a line). */
core_status slurm_plan_named(coord *c, const char *list, core_err *err);
/** One host_run per host of the plan, with the steps it has left. */
core_status slurm_hosts_init(coord *c, core_err *err);
/** The preflight on every host with steps, side by side; a refusal, a
 * node that does not answer or an image that differs refuses the batch. */
core_status slurm_preflight(coord *c, core_err *err);
/** Every host's steps, the hosts side by side. */
core_status slurm_rounds(coord *c, core_err *err);
/** batches/BATCH/HOST.lines, every line the host's steps sent. */
core_status slurm_journal_open(coord *c, host_run *h, core_err *err);

/* slurm_facts.c */
/** A host threat when declared hosts share a machine-id. */
core_status slurm_same_machine(coord *c, core_err *err);
/** The runner's facts (run_runner.facts): each node's report and the
 * scheduler's view, the images the nodes agreed on, the host threats and
 * the rounds lost. */
core_status slurm_facts(void *self, const run_engine *e, data_run_facts *f,
                        data_arm_image *im, data_arm_versions *vers,
                        core_err *err);
/** Closes the hosts' journals, synced. */
void slurm_journals_close(coord *c);
void slurm_free(coord *c);

#endif
