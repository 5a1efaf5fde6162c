/* values.c: one value per run and metric. A run (the rows sharing batch,
 * workload, arm and run id, one after the other: the counting rule's
 * run) has one row per metric: a second would be a second measurement of
 * one run, and every reader (verify, status, analyze, report) must refuse
 * it the same way. Readers of frozen rows look at one run at a time, so
 * that a batch of millions of rows is still streamed in bounded memory;
 * an import looks at its whole file.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "data/data_internal.h"

/* A key is two independent 64-bit hashes of the row's identity: 128
 * bits, so that two different identities never meet in practice, at 24
 * bytes a row whatever the strings' lengths. */
typedef struct slot {
  uint64_t a, b; /* a == 0 && b == 0: empty */
  long line;
} slot;

struct data_runvalues {
  slot *t;
  size_t cap, n;         /* cap a power of two, n <= cap / 2 */
  int per_run;           /* forget the keys when the run changes */
  uint64_t run_a, run_b; /* the current run's identity */
  int in_run;
};

data_runvalues *data_runvalues_new(int per_run) {
  data_runvalues *rv = core_calloc(1, sizeof(data_runvalues));
  if (rv)
    rv->per_run = per_run;
  return rv;
}

void data_runvalues_free(data_runvalues *rv) {
  if (!rv)
    return;
  core_free(rv->t);
  core_free(rv);
}

void data_runvalues_reset(data_runvalues *rv) {
  /* A table a long run grew goes: clearing it for every short run after
   * it would cost its size each time. */
  if (rv->cap > 1024) {
    core_free(rv->t);
    rv->t = NULL;
    rv->cap = 0;
  } else if (rv->t) {
    memset(rv->t, 0, rv->cap * sizeof *rv->t);
  }
  rv->n = 0;
  rv->in_run = 0;
}

static void mix(uint64_t *a, uint64_t *b, const char *s) {
  /* FNV-1a and a second FNV-1a from another basis and prime; each field
   * ends with a byte no UTF-8 text holds, so "ab"+"c" is not "a"+"bc". */
  for (const unsigned char *p = (const unsigned char *)(s ? s : "");; p++) {
    unsigned c = *p ? *p : 0xff;
    *a = (*a ^ c) * 1099511628211ull;
    *b = (*b ^ c) * 0x100000001b3ull * 31u + 0x9e3779b97f4a7c15ull;
    if (!*p)
      break;
  }
}

static int grow(data_runvalues *rv) {
  size_t cap = rv->cap ? rv->cap * 2 : 16;
  slot *t = core_calloc(cap, sizeof *t);
  if (!t)
    return 0;
  for (size_t i = 0; i < rv->cap; i++) {
    size_t j;
    if (!rv->t[i].a && !rv->t[i].b)
      continue;
    for (j = rv->t[i].a & (cap - 1); t[j].a || t[j].b; j = (j + 1) & (cap - 1))
      ;
    t[j] = rv->t[i];
  }
  core_free(rv->t);
  rv->t = t;
  rv->cap = cap;
  return 1;
}

long data_runvalues_add(data_runvalues *rv, const data_row *r, long line) {
  uint64_t a = 14695981039346656037ull, b = 0x6a09e667f3bcc909ull;
  char seq[32] = "";
  size_t i;
  if (!r->run_id || !r->run_id[0])
    snprintf(seq, sizeof seq, "#%ld", r->seq);
  mix(&a, &b, r->batch);
  mix(&a, &b, r->workload);
  mix(&a, &b, r->arm);
  mix(&a, &b, r->run_id);
  mix(&a, &b, seq);
  if (rv->per_run && (!rv->in_run || a != rv->run_a || b != rv->run_b)) {
    data_runvalues_reset(rv);
    rv->in_run = 1;
    rv->run_a = a;
    rv->run_b = b;
  }
  mix(&a, &b, r->metric);
  if (!a && !b)
    b = 1;
  if ((rv->n + 1) * 2 > rv->cap && !grow(rv))
    return -1;
  for (i = a & (rv->cap - 1); rv->t[i].a || rv->t[i].b;
       i = (i + 1) & (rv->cap - 1))
    if (rv->t[i].a == a && rv->t[i].b == b)
      return rv->t[i].line;
  rv->t[i] = (slot){a, b, line};
  rv->n++;
  return 0;
}
