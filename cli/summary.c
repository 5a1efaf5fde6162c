/* summary.c: the terminal's width, to which the matrix of `prereg analyze`
 * and of the summary `prereg run` ends with is fitted.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli_internal.h"

int cli_term_width(FILE *out) {
  const char *c = getenv("COLUMNS");
  struct winsize ws;
  if (c && *c) {
    char *end;
    long n;
    errno = 0;
    n = strtol(c, &end, 10);
    if (!errno && !*end && n > 0 && n < 10000)
      return (int)n;
  }
  if (ioctl(cli_term_fd(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  return 80;
}
