/* metrics.c: the built-in metrics, one row each: what a sheet may list
 * without the command reporting it (docs/interface.md §1 says what each
 * measures).
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "protocols/proto.h"

/* The starter sheet lists them in this order. */
static const proto_builtin_metric builtins[] = {
    {"wall_s", PROTO_KIND_TIME, "s", PROTO_STEPS_SUM, PROTO_MEASURE_WALL},
    {"user_s", PROTO_KIND_TIME, "s", PROTO_STEPS_SUM, PROTO_MEASURE_USER},
    {"sys_s", PROTO_KIND_TIME, "s", PROTO_STEPS_SUM, PROTO_MEASURE_SYS},
    {"maxrss_kib", PROTO_KIND_MEMORY, "KiB", PROTO_STEPS_MAX,
     PROTO_MEASURE_MAXRSS},
    {"pss_mib", PROTO_KIND_MEMORY, "MiB", PROTO_STEPS_FIRST,
     PROTO_MEASURE_PSS},
    {"inner_s", PROTO_KIND_TIME, "s", PROTO_STEPS_WHOLE,
     PROTO_MEASURE_COMMAND},
    {"cg_mem_peak_mib", PROTO_KIND_MEMORY, "MiB", PROTO_STEPS_WHOLE,
     PROTO_MEASURE_CG_MEM},
    {"cg_cpu_s", PROTO_KIND_TIME, "s", PROTO_STEPS_WHOLE,
     PROTO_MEASURE_CG_CPU},
};
#define N_BUILTINS (sizeof builtins / sizeof *builtins)

const proto_builtin_metric *proto_builtin_metrics(size_t *n) {
  *n = N_BUILTINS;
  return builtins;
}

const proto_builtin_metric *proto_builtin_by_name(const char *name) {
  for (size_t i = 0; name && i < N_BUILTINS; i++)
    if (strcmp(builtins[i].name, name) == 0)
      return &builtins[i];
  return NULL;
}

const char *proto_measure_name(proto_measure m) {
  for (size_t i = 0; i < N_BUILTINS; i++)
    if (builtins[i].from == m)
      return builtins[i].name;
  return "";
}

const char *proto_builtin_metric_nearest(const char *name) {
  const char *names[N_BUILTINS];
  for (size_t i = 0; i < N_BUILTINS; i++)
    names[i] = builtins[i].name;
  return core_nearest(name, names, N_BUILTINS);
}
