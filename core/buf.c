/* buf.c: a growable byte buffer that remembers an allocation failure, so
 * that long report writers check once instead of after every append, and
 * the formatted strings built in one (core_asprintf).
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

void core_buf_init(core_buf *b) {
  memset(b, 0, sizeof *b);
}

void core_buf_free(core_buf *b) {
  core_free(b->data);
  core_buf_init(b);
}

static int reserve(core_buf *b, size_t extra) {
  size_t need, cap;
  char *p;
  if (b->oom)
    return 0;
  need = b->len + extra + 1;
  if (need <= b->cap)
    return 1;
  cap = b->cap ? b->cap : 64;
  while (cap < need)
    cap *= 2;
  p = core_realloc(b->data, cap);
  if (!p) {
    b->oom = 1;
    return 0;
  }
  b->data = p;
  b->cap = cap;
  return 1;
}

void core_buf_append(core_buf *b, const void *p, size_t n) {
  if (!reserve(b, n))
    return;
  if (n)
    memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void core_buf_puts(core_buf *b, const char *s) {
  core_buf_append(b, s, strlen(s));
}

void core_buf_vprintf(core_buf *b, const char *fmt, va_list ap) {
  va_list copy;
  int n;
  va_copy(copy, ap);
  n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n < 0 || !reserve(b, (size_t)n))
    return;
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void core_buf_printf(core_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  core_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

char *core_buf_steal(core_buf *b) {
  char *d = b->data;
  core_buf_init(b);
  return d;
}

char *core_asprintf(const char *fmt, ...) {
  core_buf b;
  va_list ap;
  core_buf_init(&b);
  va_start(ap, fmt);
  core_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  if (!b.data)
    return core_strdup("");
  return core_buf_steal(&b);
}
