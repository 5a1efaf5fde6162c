/* cli.h: the program: the command line parsed into options (a pure
 * function of argv, so that tests can call it) and the commands run.
 * SPDX-License-Identifier: MIT
 *
 * This is the top floor: it may use every folder below it, and it is the
 * only code that prints.
 */
#ifndef PREREG_CLI_H
#define PREREG_CLI_H

#include <stdio.h>

#include "core/core.h"
#include "core/limits.h"

/* What the user asked for. Strings point into argv (borrowed). */
typedef struct cli_opts {
  const char *command; /* "check", "run", ...; NULL with --help/--version */
  const char *args[4]; /* positional arguments after the command */
  int n_args;
  const char *data_dir; /* --data DIR, default "data" */
  int data_given;       /* 1: --data was given (or a bundle stands in) */
  const char *out;      /* --out DIR|FILE */
  const char *only;     /* --only WORKLOAD */
  /* import: every --arm-from and --where (they accumulate; no more than
   * the options cli_parse takes), --arm-map FILE, --ignore-unmapped */
  const char *arm_from[CLI_OPTIONS_MAX], *where[CLI_OPTIONS_MAX];
  int n_arm_from, n_where, ignore_unmapped;
  const char *arm_map;
  const char *backend; /* run --dry-run --backend slurm|kubernetes */
  /* node-run, the node runner a batch across hosts starts on each node:
   * the step the coordinator asks for (see run_node_req). */
  const char *host, *batch, *work, *round, *seq, *sha256, *arms, *ref_exit,
      *digests, *sheet_version;
  /* pilot --runs N; plan --pilot PATH --power P --sizes A,B --sims K */
  const char *runs, *pilot, *power, *sizes, *sims, *looks;
  const char *assurance; /* plan --assurance A */
  const char *id;        /* replicate --id ID */
  int resume, dry_run, json, force, help, version, quick, preflight;
  const char *format; /* export --format csv|json */
  int all;            /* export --all: every row, with its status */
  int pairs;          /* analyze --pairs: every pair of arms, exploratory */
  int write;          /* plan --write */
  /* compare: every word after the command, in order (its options name
   * the next command, as hyperfine's do, so it reads them itself) */
  char *const *rest;
  int n_rest;
  /* stamp, register, amend: --tsa URL, --tsa-ca FILE; stamp --request,
   * --attach FILE.tsr; verify --tsa-ca FILE */
  const char *tsa, *tsa_ca, *attach;
  int request;
  /* register, amend, publish --sign KEYFILE; verify --allowed-signers */
  const char *sign, *allowed_signers;
} cli_opts;

/** Parses argv into opts (options may stand before or after positional
 * arguments). Returns CORE_EUSAGE with a message naming the bad word. The
 * strings of opts are borrowed from argv. */
core_status cli_parse(int argc, char **argv, cli_opts *opts, core_err *err);

/** Runs the command opts names; results go to out (stdout in main),
 * progress to stderr. Returns the command's status, with err filled. */
core_status cli_run(const cli_opts *opts, FILE *out, core_err *err);

#endif
