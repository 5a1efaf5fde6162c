/* mem.c: allocation through one door, with failure injection for tests.
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* Injection state. A plain static is enough: injection is for tests,
 * which allocate from one thread (the analysis workers allocate before
 * they start; the verification a report runs beside its first reading of
 * the rows is not under injection). */
static long fail_countdown = -1;
static int fail_sticky;
static long fail_count;

void core_mem_fail_after(long countdown, int sticky) {
  fail_countdown = countdown;
  fail_sticky = sticky;
  fail_count = 0;
}

long core_mem_failures(void) {
  return fail_count;
}

static int should_fail(void) {
  if (fail_countdown < 0)
    return 0;
  if (fail_countdown == 0) {
    fail_count++;
    if (!fail_sticky)
      fail_countdown = -1;
    return 1;
  }
  fail_countdown--;
  return 0;
}

void *core_malloc(size_t n) {
  if (should_fail())
    return NULL;
  return malloc(n ? n : 1);
}

void *core_calloc(size_t count, size_t size) {
  if (should_fail())
    return NULL;
  return calloc(count ? count : 1, size ? size : 1);
}

void *core_realloc(void *p, size_t n) {
  if (should_fail())
    return NULL;
  return realloc(p, n ? n : 1);
}

void core_free(void *p) {
  free(p);
}

void *core_grow(void *v, size_t *cap, size_t n, size_t elem,
                size_t first_cap) {
  if (n < *cap)
    return v;
  size_t nc = *cap ? *cap * 2 : first_cap;
  if (nc <= n || elem == 0 || nc > SIZE_MAX / elem)
    return NULL;
  void *nv = core_realloc(v, nc * elem);
  if (nv)
    *cap = nc;
  return nv;
}

char *core_strndup(const char *s, size_t n) {
  char *d;
  if (!s)
    return NULL;
  d = core_malloc(n + 1);
  if (!d)
    return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *core_strdup(const char *s) {
  return s ? core_strndup(s, strlen(s)) : NULL;
}
