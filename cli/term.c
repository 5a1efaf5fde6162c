/* term.c: the one way text reaches the terminal. Standard output and
 * standard error are streams whose every write goes through
 * core_buf_quote, so that no control byte from a sheet, a bundle, a
 * foreign file or a command's output reaches them raw, whichever print
 * path it takes: a newline and a tab pass, anything else a terminal acts
 * on (ESC, CR, BEL, OSC 8, C1) is shown as \033, \r, \a, ... The
 * messages that must be read back exactly quote with core_buf_quote
 * themselves; this is the floor under them. Only the progress line of
 * `prereg run` on a terminal writes its own control bytes
 * (cli_term_raw).
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_internal.h"

typedef struct guard {
  int fd;
  unsigned char carry[4]; /* the start of a UTF-8 sequence cut short */
  size_t ncarry;
} guard;

static guard guards[2] = {{STDOUT_FILENO, {0}, 0}, {STDERR_FILENO, {0}, 0}};

/* Writes all of p to fd (0), or -1. */
static int write_all(int fd, const char *p, size_t n) {
  core_err e = {0};
  return core_write_all(fd, p, n, "terminal", &e) == CORE_OK ? 0 : -1;
}

/* Bytes at the end of p[0..n) that begin a UTF-8 sequence the next write
 * may complete (a stream cuts its buffer anywhere). */
static size_t cut_short(const unsigned char *p, size_t n) {
  for (size_t k = 1; k <= 3 && k <= n; k++) {
    unsigned char c = p[n - k];
    if (c < 0x80)
      return 0;
    if (c >= 0xC0) {
      size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      return want > k ? k : 0;
    }
  }
  return 0;
}

static ssize_t guard_write(void *cookie, const char *buf, size_t n) {
  guard *g = cookie;
  core_buf in = {0}, out = {0};
  size_t keep;
  int rc;
  core_buf_append(&in, g->carry, g->ncarry);
  core_buf_append(&in, buf, n);
  if (in.oom) {
    core_buf_free(&in);
    return -1;
  }
  keep = cut_short((const unsigned char *)in.data, in.len);
  memcpy(g->carry, in.data + in.len - keep, keep);
  g->ncarry = keep;
  core_buf_quote(&out, in.data, in.len - keep,
                 CORE_QUOTE_LINES | CORE_QUOTE_BACKSLASH);
  rc = out.oom ? -1 : write_all(g->fd, out.data ? out.data : "", out.len);
  core_buf_free(&in);
  core_buf_free(&out);
  return rc < 0 ? -1 : (ssize_t)n;
}

void cli_term_guard(void) {
  cookie_io_functions_t io = {.write = guard_write};
  FILE *o = fopencookie(&guards[0], "w", io);
  FILE *e = fopencookie(&guards[1], "w", io);
  if (!o || !e) {
    if (o)
      fclose(o);
    if (e)
      fclose(e);
    return;
  }
  setvbuf(o, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
  setvbuf(e, NULL, _IONBF, 0);
  stdout = o;
  stderr = e;
}

int cli_term_fd(FILE *f) {
  if (f == stdout && fileno(f) < 0)
    return STDOUT_FILENO;
  if (f == stderr && fileno(f) < 0)
    return STDERR_FILENO;
  return fileno(f);
}

void cli_term_raw(const char *ctl) {
  fflush(stderr);
  (void)write_all(STDERR_FILENO, ctl, strlen(ctl));
}
