/* exec_stub.c: prereg-exec, the spawn helper as a program of its own.
 * SPDX-License-Identifier: MIT
 *
 * A child's ru_maxrss starts from the resident size of the memory map it
 * execs from: spawned by a fork of prereg (about 3 MiB resident), every
 * command's maxrss_kib had that floor, twice what GNU time reports for
 * `dash -c true`. This program, linked statically, holds a few hundred
 * KiB. The engine starts it once, as `prereg-exec --serve PID` with the
 * helper's socket on descriptor 3, and it then starts, reaps and cleans
 * up after every command of the batch (run/helper.c), so that no process
 * and no exec of ours stand between it and each command.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/helper_internal.h"

int main(int argc, char **argv) {
  if (argc != 3 || strcmp(argv[1], RUN_STUB_SERVE) != 0)
    return 2;
  fcntl(3, F_SETFD, FD_CLOEXEC); /* not the commands' */
  run_helper_serve(3, (pid_t)strtol(argv[2], NULL, 10));
}
