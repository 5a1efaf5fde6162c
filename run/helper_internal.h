/* helper_internal.h: the spawn helper (run/helper.c), shared by the
 * engine (run/exec.c) and prereg-exec (run/exec_stub.c), the small static
 * program the engine runs as its helper. Nothing of prereg's libraries:
 * prereg-exec links none.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_HELPER_INTERNAL_H
#define PREREG_HELPER_INTERNAL_H

#include <sched.h>
#include <sys/resource.h>
#include <sys/types.h>

/* The program's name beside the prereg executable. */
#define RUN_STUB_NAME "prereg-exec"
/* Its first argument when it is to serve as the helper (the second: the
 * engine's process ID); the helper's socket is its descriptor 3. */
#define RUN_STUB_SERVE "--serve"

/* What the helper sends back for each request: kind 1 once the command
 * was started (pid, err: the errno when it could not be, t: the clock
 * just before its execve), kind 2 once it was reaped (status and ru from
 * wait4, t: the clock just after). */
typedef struct run_helper_reply {
  int kind;
  int err;
  pid_t pid;
  int status;
  double t;
  struct rusage ru;
} run_helper_reply;

/* Starts argv in a new process group of its own, stdin from /dev/null,
 * stdout/stderr on out_w/err_w (/dev/null when < 0), in the folder cwd
 * and the cgroup folder cgdir when not NULL, on the CPUs cpus when not
 * NULL (else on ours), with the signals we ignore
 * or catch at their default and none blocked; the file is searched in
 * envp's PATH. vfork and execve: no work of ours between the clock and
 * the execve. Returns 0, or the errno of the failure. OUT: *pid, *t0
 * (CLOCK_MONOTONIC just before the command's execve). */
int run_helper_spawn(char **argv, char **envp, const char *cwd, int out_w,
                     int err_w, const char *cgdir, const cpu_set_t *cpus,
                     pid_t *pid, double *t0);

/* Resets the calling process's peak RSS to its current one (see
 * helper.c). */
void run_helper_reset_hiwater(void);

/* The helper's life: serves the requests on sock until it is closed,
 * then exits. parent: the engine's process ID (the helper ends when it
 * is gone). */
_Noreturn void run_helper_serve(int sock, pid_t parent);

#endif
