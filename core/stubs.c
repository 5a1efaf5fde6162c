/* stubs.c: commands not built yet say so plainly (temporary).
 * SPDX-License-Identifier: MIT
 */
#include "core/cmd.h"

#define NOT_YET(fn, name)                                                     \
  core_status fn(const cli_opts *opts, FILE *out, core_err *err) {            \
    (void)opts;                                                               \
    (void)out;                                                                \
    return core_fail(err, CORE_ERUN, "'%s' is not implemented yet", name);    \
  }
