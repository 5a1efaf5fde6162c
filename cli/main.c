/* main.c: the prereg program: parse, run, report, exit.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/cli_internal.h"

int main(int argc, char **argv) {
  core_err err = {0};
  cli_opts opts;
  core_status st;
  cli_term_guard();
  st = cli_parse(argc, argv, &opts, &err);
  if (st == CORE_OK)
    st = cli_run(&opts, stdout, &err);
  if (fflush(stdout) != 0 && st == CORE_OK)
    st = core_fail(&err, CORE_EIO, "standard output: write failed");
  if (st != CORE_OK)
    fprintf(stderr, "%s: %s\n", PREREG_NAME,
            err.msg[0] ? err.msg : core_strerror(st));
  return core_exit_code(st);
}
