/* text.c: how numbers and text are written for people: a number to a few
 * significant digits in a readable unit, and text made literal for
 * Markdown.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

void core_fmt_sig(char *out, size_t size, double x, int digits) {
  char e[64];
  const char *p;
  long ex;
  if (digits < 1)
    digits = 1;
  if (digits > 17)
    digits = 17;
  if (x == 0.0) {
    snprintf(out, size, "0");
    return;
  }
  if (!isfinite(x)) {
    snprintf(out, size, "%g", x);
    return;
  }
  /* The rounding to `digits` is done once, by %e, and its exponent
   * decides the decimals: 9.996 rounds to 1.00e+01 and prints as "10.0",
   * never "10.00", and a value printf rounds down is never shown as the
   * next power of ten. */
  snprintf(e, sizeof e, "%.*e", digits - 1, x);
  p = strchr(e, 'e');
  ex = p ? strtol(p + 1, NULL, 10) : 0;
  if (ex < -3 || ex > 15)
    snprintf(out, size, "%.*g", digits, x);
  else
    snprintf(out, size, "%.*f", ex >= digits - 1 ? 0 : (int)(digits - 1 - ex),
             x);
}

const char *core_scale_unit(const char *unit, double x, double *factor) {
  *factor = 1;
  if (!unit || strcmp(unit, "s") != 0 || !isfinite(x) || x == 0 ||
      fabs(x) >= 1)
    return unit ? unit : "";
  if (fabs(x) >= 1e-3) {
    *factor = 1e3;
    return "ms";
  }
  *factor = 1e6;
  return "µs";
}

void core_buf_md_escape(core_buf *b, const char *s) {
  int start = 1;
  if (!s)
    return;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\n' || c == '\r' || c == '\t') {
      core_buf_puts(b, " ");
      continue;
    }
    /* Every ASCII punctuation character may be backslash-escaped in
     * CommonMark, and an escaped one is always literal. Escaping all of
     * them keeps any sheet text from becoming a link, an image, raw HTML,
     * emphasis, a table cell break or a list marker. */
    if (strchr("\\`*_{}[]()<>#+-.!|~&\"'=:$%^;", c)) {
      /* ... except the common, harmless ones inside a word (neither first
       * nor after a space), for a readable report.md: there a '.', '-' or
       * ':' cannot start any construct (autolinks are not enabled). */
      int mid = !start && (c == '.' || c == '-' || c == ':' || c == '\'' ||
                           c == '%' || c == '=' || c == ';');
      if (!mid)
        core_buf_puts(b, "\\");
    }
    core_buf_append(b, s, 1);
    start = (c == ' ');
  }
}
