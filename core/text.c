/* text.c: how numbers and text are written for people: a number to a few
 * significant digits in a readable unit, text made literal for
 * Markdown, and text shown on a terminal with every control byte quoted.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
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
  if (fabs(x) >= 1e-6) {
    *factor = 1e6;
    return "µs";
  }
  *factor = 1e9;
  return "ns";
}

static int is_alnum(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || c >= 0x80;
}

/* Whether c at s[i] (text t) must be escaped to stay literal: only what
 * CommonMark and the GFM tables and strikethrough read as markup. */
static int md_needs(const char *t, size_t i) {
  unsigned char c = (unsigned char)t[i], next = (unsigned char)t[i + 1];
  unsigned char prev = i ? (unsigned char)t[i - 1] : ' ';
  switch (c) {
  case '\\': /* an escape */
  case '`':  /* code */
  case '*':  /* emphasis, also inside a word */
  case '[':  /* links and images ('!' and '(' are inert without it) */
  case ']':
  case '|': /* a table cell break */
  case '~': /* strikethrough */
    return 1;
  case '_': /* emphasis only at a word's edge (wall_s is a word) */
    return !is_alnum(prev) || !is_alnum(next);
  case '<': /* raw HTML and autolinks begin with a letter, /, ! or ? */
    return is_alnum(next) || next == '/' || next == '!' || next == '?';
  case '&': /* an entity: &amp; &#38; */
    return is_alnum(next) || next == '#';
  default:
    break;
  }
  /* At the start, where the text may begin a line: a quote; a heading
   * ("# " to "###### "), a list item ("- ", "+ "); a thematic break or
   * setext underline (only -, =, * or spaces). */
  if (i == 0 && c == '>')
    return 1;
  if (i == 0 && c == '#') {
    size_t k = 0;
    while (t[k] == '#')
      k++;
    return k <= 6 && (t[k] == ' ' || t[k] == '\0');
  }
  if (i == 0 && (c == '-' || c == '+') && (next == ' ' || next == '\0'))
    return 1;
  if (i == 0 && (c == '-' || c == '=') && t[strspn(t, "-= ")] == '\0')
    return 1;
  if ((c == '.' || c == ')') && i > 0) {
    size_t k = 0;
    while (k < i && t[k] >= '0' && t[k] <= '9')
      k++;
    return k == i; /* "1." or "1)" at the start: an ordered list */
  }
  return 0;
}

void core_buf_md_escape(core_buf *b, const char *s) {
  if (!s)
    return;
  for (size_t i = 0; s[i]; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\n' || c == '\r' || c == '\t') {
      core_buf_puts(b, " ");
      continue;
    }
    if (md_needs(s, i))
      core_buf_puts(b, "\\");
    core_buf_append(b, s + i, 1);
  }
}

/* Showing text on a terminal */

/* Length of the valid UTF-8 sequence at s[i] (of len), or 0 when the
 * byte there does not start one. */
static size_t utf8_seq(const char *s, size_t i, size_t len) {
  unsigned char c = (unsigned char)s[i];
  size_t n = c < 0x80                 ? 1
             : c >= 0xC2 && c <= 0xDF ? 2
             : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4
                                      : 0;
  if (n == 0 || n > len - i || core_utf8_invalid(s + i, n) != n)
    return 0;
  return n;
}

/* Whether the valid sequence of n bytes at s is a C1 control (U+0080 to
 * U+009F, which a terminal may act on as it does on ESC [). */
static int is_c1(const char *s, size_t n) {
  return n == 2 && (unsigned char)s[0] == 0xC2 && (unsigned char)s[1] < 0xA0;
}

void core_buf_sh_quote(core_buf *b, const char *s, size_t len) {
  static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                             "WXYZ0123456789/.,_:@%+=-";
  size_t plain = 0;
  while (plain < len && s[plain] && strchr(safe, s[plain]))
    plain++;
  if (len > 0 && plain == len) {
    core_buf_append(b, s, len);
    return;
  }
  core_buf_puts(b, "'");
  for (size_t i = 0; i < len; i++)
    if (s[i] == '\'')
      core_buf_puts(b, "'\\''");
    else
      core_buf_append(b, s + i, 1);
  core_buf_puts(b, "'");
}

size_t core_control_at(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F ||
        (c == 0xC2 && i + 1 < len && is_c1(s + i, 2)))
      return i;
  }
  return len;
}

static void put_octal(core_buf *b, unsigned char c) {
  char o[5] = {'\\', (char)('0' + (c >> 6)), (char)('0' + ((c >> 3) & 7)),
               (char)('0' + (c & 7)), '\0'};
  core_buf_puts(b, o);
}

void core_buf_quote(core_buf *b, const char *s, size_t len, unsigned flags) {
  static const char named[] = "\a\b\t\n\v\f\r", letter[] = "abtnvfr";
  size_t i = 0;
  while (i < len) {
    unsigned char c = (unsigned char)s[i];
    size_t n = utf8_seq(s, i, len);
    const char *k = c ? memchr(named, c, sizeof named - 1) : NULL;
    if ((c == '\n' || c == '\t') && (flags & CORE_QUOTE_LINES)) {
      core_buf_append(b, s + i, 1);
    } else if (k) {
      char e[3] = {'\\', letter[k - named], '\0'};
      core_buf_puts(b, e);
    } else if (c == '\\') {
      core_buf_puts(b, flags & CORE_QUOTE_BACKSLASH ? "\\" : "\\\\");
    } else if (n == 0 || c < 0x20 || c == 0x7F || is_c1(s + i, n)) {
      /* A control, or a byte that starts no valid sequence: each byte
       * in octal (a C1 control as its two bytes). */
      size_t m = n ? n : 1;
      for (size_t j = 0; j < m; j++)
        put_octal(b, (unsigned char)s[i + j]);
      i += m;
      continue;
    } else {
      core_buf_append(b, s + i, n);
      i += n;
      continue;
    }
    i++;
  }
}

/* Reading numbers */

static int is_blank(char c) {
  return c == ' ' || c == '\t';
}

const char *core_parse_decimal(const char *s, double *out) {
  const char *p = s, *start, *end;
  char *stop;
  int digits = 0;
  double v;
  while (is_blank(*p))
    p++;
  start = p;
  /* The shape is checked by hand: strtod also takes hexadecimal
   * ("0x1p3"), "inf", "nan" and "infinity", which no file of ours
   * means. */
  if (*p == '+' || *p == '-')
    p++;
  for (; *p >= '0' && *p <= '9'; p++)
    digits++;
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9'; p++)
      digits++;
  if (digits == 0)
    return (start[0] == '0' && (start[1] == 'x' || start[1] == 'X')) ||
                   ((start[0] == '+' || start[0] == '-') && start[1] == '0' &&
                    (start[2] == 'x' || start[2] == 'X'))
               ? "a hexadecimal number; write it in decimal"
               : "not a number";
  if (*p == 'x' || *p == 'X')
    return "a hexadecimal number; write it in decimal";
  if (*p == 'e' || *p == 'E') {
    const char *e = p + 1;
    if (*e == '+' || *e == '-')
      e++;
    if (!(*e >= '0' && *e <= '9'))
      return "not a number";
    while (*e >= '0' && *e <= '9')
      e++;
    p = e;
  }
  end = p;
  while (is_blank(*p))
    p++;
  if (*p)
    return "not a number";
  errno = 0;
  v = strtod(start, &stop);
  if (stop != end)
    return "not a number";
  /* ERANGE: an overflow, or an underflow to 0 or to a subnormal value
   * that keeps few of the digits written. */
  if (errno == ERANGE || !isfinite(v))
    return fabs(v) < 1 ? "too small: it would be stored as 0 or with fewer "
                         "digits than it has"
                       : "too large for a double";
  *out = v;
  return NULL;
}

/* UTF-8 */

size_t core_utf8_invalid(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len) {
    unsigned c = p[i];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c < 0x80) {
      i++;
      continue;
    }
    /* RFC 3629's table: no overlong forms (C0, C1, E0 80-9F, F0 80-8F),
     * no surrogates (ED A0-BF), nothing past U+10FFFF (F4 90-, F5-). */
    if (c >= 0xC2 && c <= 0xDF)
      n = 1;
    else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0)
        lo = 0xA0;
      else if (c == 0xED)
        hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0)
        lo = 0x90;
      else if (c == 0xF4)
        hi = 0x8F;
    } else
      return i;
    if (len - i <= n)
      return i;
    if (p[i + 1] < lo || p[i + 1] > hi)
      return i;
    for (size_t k = 2; k <= n; k++)
      if (p[i + k] < 0x80 || p[i + k] > 0xBF)
        return i;
    i += n + 1;
  }
  return len;
}

/* Optimal string alignment distance: a swap of neighbours counts once,
 * the commonest typo. Inputs are cut at 32 bytes; names are short. */
size_t core_edit_distance(const char *a, const char *b) {
  size_t d[33][33];
  size_t la = strlen(a), lb = strlen(b);
  la = la > 32 ? 32 : la;
  lb = lb > 32 ? 32 : lb;
  for (size_t i = 0; i <= la; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < v)
        v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v)
        v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[la][lb];
}

const char *core_nearest(const char *name, const char *const cand[],
                         size_t n) {
  const char *best = NULL;
  size_t bd = (size_t)-1, len = strlen(name);
  for (size_t i = 0; i < n && cand[i]; i++) {
    size_t d = core_edit_distance(name, cand[i]);
    if (d < bd) {
      bd = d;
      best = cand[i];
    }
  }
  /* One edit in four letters, and one more: 'anaylze' is analyze, while
   * 'frobnicate' (four edits from replicate) is no command at all. */
  return best && bd <= 1 + len / 4 && bd < len ? best : NULL;
}
