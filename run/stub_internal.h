/* stub_internal.h: what prereg-exec (run/exec_stub.c) tells the spawn
 * helper (run/exec.c) on descriptor 3.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_STUB_INTERNAL_H
#define PREREG_STUB_INTERNAL_H

#include <sys/resource.h>

/* The program's name beside the prereg executable. */
#define RUN_STUB_NAME "prereg-exec"

/* kind 1, once the command is spawned (err: the errno of its execve, 0
 * when it runs; t: CLOCK_MONOTONIC just before that execve); kind 2,
 * once it is reaped (status and ru from wait4; t: just after). */
typedef struct run_stub_record {
  int kind;
  int err;
  int status;
  double t;
  struct rusage ru;
} run_stub_record;

#endif
