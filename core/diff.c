/* diff.c: line-based unified diff (GNU format, 3 lines of context), for
 * the amendments' diffs and the lock's message (data/). Sheets are small, so
 * an LCS table over the lines between the common prefix and suffix is plenty;
 * a pathological size falls back to "all replaced". SPDX-License-Identifier:
 * MIT
 */
#include <stdint.h>
#include <string.h>

#include "core/core.h"
#include "core/limits.h"

#define CONTEXT 3

typedef struct line {
  const char *p;
  size_t len; /* without the newline */
  int nl;     /* ends with '\n' */
} line;

typedef struct lines {
  line *v;
  size_t n;
} lines;

static int split(const char *s, size_t len, lines *out) {
  size_t n = 0, i = 0;
  for (size_t k = 0; k < len; k++)
    if (s[k] == '\n')
      n++;
  if (len > 0 && s[len - 1] != '\n')
    n++;
  out->n = n;
  out->v = core_calloc(n ? n : 1, sizeof *out->v);
  if (!out->v)
    return 0;
  for (size_t start = 0; start < len;) {
    const char *nl = memchr(s + start, '\n', len - start);
    size_t end = nl ? (size_t)(nl - s) : len;
    out->v[i].p = s + start;
    out->v[i].len = end - start;
    out->v[i].nl = nl != NULL;
    i++;
    start = nl ? end + 1 : len;
  }
  return 1;
}

static int same(const line *a, const line *b) {
  return a->len == b->len && a->nl == b->nl && memcmp(a->p, b->p, a->len) == 0;
}

/* An edit script: ' ' keep, '-' delete from a, '+' insert from b. */
typedef struct op {
  char kind;
  size_t ai, bi; /* line indexes (the one that applies) */
} op;

static op *script(const lines *a, const lines *b, size_t *nops) {
  size_t pre = 0, suf = 0, n, m, k = 0;
  op *ops = core_calloc(a->n + b->n + 1, sizeof *ops);
  if (!ops)
    return NULL;
  while (pre < a->n && pre < b->n && same(&a->v[pre], &b->v[pre]))
    pre++;
  while (suf < a->n - pre && suf < b->n - pre &&
         same(&a->v[a->n - 1 - suf], &b->v[b->n - 1 - suf]))
    suf++;
  n = a->n - pre - suf;
  m = b->n - pre - suf;
  for (size_t i = 0; i < pre; i++)
    ops[k++] = (op){' ', i, i};
  if ((n + 1) * (m + 1) <= DIFF_MAX_CELLS && n > 0 && m > 0) {
    /* t[i][j] = LCS length of a[pre+i..] and b[pre+j..]. */
    uint32_t *t = core_calloc((n + 1) * (m + 1), sizeof *t);
    size_t i = 0, j = 0;
    if (!t) {
      core_free(ops);
      return NULL;
    }
#define T(i, j) t[(i) * (m + 1) + (j)]
    for (size_t ii = n; ii-- > 0;)
      for (size_t jj = m; jj-- > 0;)
        T(ii, jj) = same(&a->v[pre + ii], &b->v[pre + jj])
                        ? T(ii + 1, jj + 1) + 1
                        : (T(ii + 1, jj) >= T(ii, jj + 1) ? T(ii + 1, jj)
                                                          : T(ii, jj + 1));
    while (i < n || j < m) {
      if (i < n && j < m && same(&a->v[pre + i], &b->v[pre + j])) {
        ops[k++] = (op){' ', pre + i, pre + j};
        i++;
        j++;
      } else if (j < m && (i == n || T(i, j + 1) > T(i + 1, j))) {
        ops[k++] = (op){'+', pre + i, pre + j};
        j++;
      } else {
        ops[k++] = (op){'-', pre + i, pre + j};
        i++;
      }
    }
#undef T
    core_free(t);
  } else {
    for (size_t i = 0; i < n; i++)
      ops[k++] = (op){'-', pre + i, pre};
    for (size_t j = 0; j < m; j++)
      ops[k++] = (op){'+', pre + n, pre + j};
  }
  for (size_t i = 0; i < suf; i++)
    ops[k++] = (op){' ', a->n - suf + i, b->n - suf + i};
  *nops = k;
  return ops;
}

static void put_line(core_buf *out, char kind, const line *l) {
  core_buf_append(out, &kind, 1);
  core_buf_append(out, l->p, l->len);
  core_buf_puts(out, "\n");
  if (!l->nl)
    core_buf_puts(out, "\\ No newline at end of file\n");
}

/* GNU's range: "start,count", count omitted when 1; an empty range names
 * the line before it. */
static void put_range(core_buf *out, size_t start0, size_t count) {
  if (count == 1)
    core_buf_printf(out, "%zu", start0 + 1);
  else
    core_buf_printf(out, "%zu,%zu", count ? start0 + 1 : start0, count);
}

char *core_unified_diff(const char *a, size_t alen, const char *b, size_t blen,
                        const char *label_a, const char *label_b) {
  lines la = {0}, lb = {0};
  op *ops = NULL;
  size_t nops = 0;
  core_buf out;
  char *res = NULL;
  core_buf_init(&out);
  if (!split(a, alen, &la) || !split(b, blen, &lb))
    goto cleanup;
  if (!(ops = script(&la, &lb, &nops)))
    goto cleanup;
  for (size_t k = 0; k < nops;) {
    size_t first, last, start, end, ca = 0, cb = 0;
    while (k < nops && ops[k].kind == ' ')
      k++;
    if (k == nops)
      break;
    if (out.len == 0)
      core_buf_printf(&out, "--- %s\n+++ %s\n", label_a, label_b);
    first = last = k;
    /* Extend the hunk while the next change is within 2 * CONTEXT. */
    for (size_t j = k + 1; j < nops; j++) {
      if (ops[j].kind != ' ') {
        if (j - last - 1 > 2 * CONTEXT)
          break;
        last = j;
      }
    }
    start = first > CONTEXT ? first - CONTEXT : 0;
    end = last + CONTEXT + 1 < nops ? last + CONTEXT + 1 : nops;
    for (size_t j = start; j < end; j++) {
      if (ops[j].kind != '+')
        ca++;
      if (ops[j].kind != '-')
        cb++;
    }
    core_buf_puts(&out, "@@ -");
    put_range(&out, ops[start].ai, ca);
    core_buf_puts(&out, " +");
    put_range(&out, ops[start].bi, cb);
    core_buf_puts(&out, " @@\n");
    for (size_t j = start; j < end; j++)
      put_line(&out, ops[j].kind,
               ops[j].kind == '+' ? &lb.v[ops[j].bi] : &la.v[ops[j].ai]);
    k = end;
  }
  if (!out.oom)
    res = out.data ? core_buf_steal(&out) : core_strdup("");
cleanup:
  core_buf_free(&out);
  core_free(ops);
  core_free(la.v);
  core_free(lb.v);
  return res;
}
