/* app.c: dispatch from a parsed command line to the command.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "core/cmd.h"

static const struct {
  const char *name;
  cmd_fn fn;
} table[] = {
    {"new", cmd_new},           {"check", cmd_check},
    {"register", cmd_register}, {"amend", cmd_amend},
    {"status", cmd_status},     {"verify", cmd_verify},
    {"run", cmd_run},           {"import", cmd_import},
    {"analyze", cmd_analyze},   {"report", cmd_report},
    {"publish", cmd_publish},
};

core_status app_run(const cli_opts *opts, FILE *out, core_err *err) {
  if (opts->version) {
    fprintf(out, "%s %s\n", PREREG_NAME, PREREG_VERSION);
    return CORE_OK;
  }
  if (opts->help) {
    fputs(cli_usage(opts->command), out);
    return CORE_OK;
  }
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, opts->command) == 0)
      return table[i].fn(opts, out, err);
  return core_fail(err, CORE_EUSAGE, "unknown command '%s'", opts->command);
}
