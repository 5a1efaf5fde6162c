/* cmd_host.c: `prereg host`: what adds noise on this host and how to
 * change it; nothing is changed (as pyperf system show).
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "cli/cli_internal.h"
#include "run/run.h"

core_status cli_cmd_host(const cli_opts *opts, FILE *out, core_err *err) {
  data_host_facts h;
  (void)opts;
  (void)err;
  memset(&h, 0, sizeof h);
  run_host_conditions(&h);
  fprintf(out, "What adds noise on this host (nothing is changed; each "
               "batch records the same facts):\n\n");
  for (size_t i = 0; i < h.n_cond; i++) {
    const data_host_cond *c = &h.cond[i];
    fprintf(out, "  %-12s %s\n", c->name,
            c->value[0] ? c->value : "unknown (no source on this host)");
    fprintf(out, "  %-12s to change: %s\n", "", run_host_advice(c->name));
  }
  return CORE_OK;
}
