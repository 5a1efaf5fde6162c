/* setup.c: the setup a person reads: one table of the hosts, the load of
 * each batch on one line, each arm's tool versions as command and the
 * first line of its output, the images and the cache states. Every batch
 * fact in full is in provenance.md.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

#define esc report_md_esc

static const char *fact(const data_batch_info *b, const char *key) {
  const char *v = data_fact_get(b, key);
  return v && strcmp(v, "null") != 0 ? v : NULL;
}

/* Hosts */

static const char *const host_keys[] = {
    "host.hostname", "host.kernel",        "host.cpu_model",
    "host.cores",    "host.mem_total_mib", "host.cpu_governor"};
#define N_HOST_KEYS 6

static int same_fact(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_host(const data_batch_info *a, const data_batch_info *b) {
  for (int k = 0; k < N_HOST_KEYS; k++)
    if (!same_fact(fact(a, host_keys[k]), fact(b, host_keys[k])))
      return 0;
  return 1;
}

static int has_host(const data_batch_info *b) {
  for (int k = 0; k < N_HOST_KEYS; k++)
    if (fact(b, host_keys[k]))
      return 1;
  return 0;
}

/* One row per distinct host, with the batches that ran on it. */
static void hosts(core_buf *b, const data_report_inputs *x,
                  const report_row_facts *f) {
  size_t shown = 0;
  for (size_t i = 0; x && i < x->n_batches; i++) {
    const data_batch_info *bi = &x->batches[i];
    int seen = 0;
    if (!has_host(bi))
      continue;
    for (size_t j = 0; j < i && !seen; j++)
      seen = has_host(&x->batches[j]) && same_host(&x->batches[j], bi);
    if (seen)
      continue;
    if (!shown++)
      core_buf_puts(b, "| Host | Kernel | CPU | Cores | Memory | Governor | "
                       "Batches |\n|---|---|---|--:|--:|---|---|\n");
    for (int k = 0; k < N_HOST_KEYS; k++) {
      const char *v = fact(bi, host_keys[k]);
      core_buf_puts(b, "| ");
      esc(b, v);
      if (k == 4 && v)
        core_buf_puts(b, " MiB");
      core_buf_puts(b, " ");
    }
    core_buf_puts(b, "| ");
    for (size_t j = i, k = 0; j < x->n_batches; j++)
      if (has_host(&x->batches[j]) && same_host(&x->batches[j], bi)) {
        core_buf_puts(b, k++ ? ", " : "");
        esc(b, x->batches[j].id);
      }
    core_buf_puts(b, " |\n");
  }
  if (shown) {
    core_buf_puts(b, "\n");
    return;
  }
  /* Imported data: only the rows' host names. */
  if (f->hosts.n == 0) {
    core_buf_puts(b, "No batch recorded its host, and no row names one.\n\n");
    return;
  }
  core_buf_puts(b, "No batch recorded its host's facts; the rows name ");
  for (size_t i = 0; i < f->hosts.n; i++) {
    core_buf_puts(b, i ? ", " : "");
    esc(b, f->hosts.v[i].value);
    core_buf_printf(b, " (%zu runs)", f->hosts.v[i].count);
  }
  core_buf_puts(b, ".\n\n");
}

/* Batches and load */

static void three(core_buf *b, const data_batch_info *bi, const char *key) {
  char k[64];
  for (int i = 0; i < 3; i++) {
    const char *v;
    snprintf(k, sizeof k, "%s[%d]", key, i);
    v = fact(bi, k);
    core_buf_puts(b, i ? " " : "");
    esc(b, v ? v : "?");
  }
}

static void batch_line(core_buf *b, const data_batch_info *bi) {
  const char *kind = fact(bi, "kind"), *start = fact(bi, "started_at"),
             *end = fact(bi, "ended_at"), *runs = fact(bi, "runs_recorded"),
             *rows = fact(bi, "rows"), *only = fact(bi, "only");
  core_buf_puts(b, "- ");
  esc(b, bi->id);
  core_buf_puts(b, ": ");
  esc(b, kind ? kind : "batch");
  if (start) {
    core_buf_puts(b, " from ");
    esc(b, start);
    if (end) {
      core_buf_puts(b, " to ");
      esc(b, end);
    }
  }
  if (runs) {
    core_buf_puts(b, ", ");
    esc(b, runs);
    core_buf_puts(b, " runs");
  } else if (rows) {
    core_buf_puts(b, ", ");
    esc(b, rows);
    core_buf_puts(b, " rows");
  }
  if (only) {
    core_buf_puts(b, " (only ");
    esc(b, only);
    core_buf_puts(b, ")");
  }
  if (fact(bi, "host.load_avg_start[0]") || fact(bi, "host.load_avg_end[0]")) {
    core_buf_puts(b, "; load ");
    three(b, bi, "host.load_avg_start");
    core_buf_puts(b, " at the start");
    /* A batch prereg did not end has no load at its end. */
    if (fact(bi, "host.load_avg_end[0]") || !fact(bi, "recovered")) {
      core_buf_puts(b, ", ");
      three(b, bi, "host.load_avg_end");
      core_buf_puts(b, " at the end");
    }
  }
  if (fact(bi, "interrupted") && strcmp(fact(bi, "interrupted"), "true") == 0)
    core_buf_puts(b, "; interrupted");
  if (fact(bi, "quick") && strcmp(fact(bi, "quick"), "true") == 0)
    core_buf_puts(b, "; quick");
  core_buf_puts(b, ".\n");
}

/* Tool versions */

/* The first line of a probe's output. */
static void first_line(core_buf *b, const char *v) {
  const char *nl = v ? strchr(v, '\n') : NULL;
  char *line = nl ? core_strndup(v, (size_t)(nl - v)) : NULL;
  if (nl && !line) {
    b->oom = 1;
    return;
  }
  esc(b, line ? line : v);
  core_free(line);
}

/* Probe k of arm a in batch bi: NULL when the batch has none. */
static const char *probe(const data_batch_info *bi, const char *arm, size_t k,
                         const char *part, char *key, size_t cap) {
  snprintf(key, cap, "versions.%s[%zu].%s", arm, k, part);
  return data_fact_get(bi, key);
}

/* One arm's probes that batch bi recorded and no earlier batch did alike
 * (same commands, same outputs): "`cmd` → first line; ..." */
static int probes_line(core_buf *b, const data_report_inputs *x, size_t i,
                       const char *arm) {
  const data_batch_info *bi = &x->batches[i];
  char key[256], key2[256];
  size_t k;
  int seen = 0;
  if (!probe(bi, arm, 0, "command", key, sizeof key))
    return 0;
  for (size_t j = 0; j < i && !seen; j++) {
    int all = 1;
    for (k = 0; k < 64 && all; k++) {
      const char *c1 = probe(bi, arm, k, "command", key, sizeof key),
                 *c2 = probe(&x->batches[j], arm, k, "command", key2,
                             sizeof key2);
      const char *o1 = probe(bi, arm, k, "output", key, sizeof key),
                 *o2 = probe(&x->batches[j], arm, k, "output", key2,
                             sizeof key2);
      all = same_fact(c1, c2) && same_fact(o1, o2);
      if (!c1 && !c2)
        break;
    }
    seen = all;
  }
  if (seen)
    return 0;
  core_buf_puts(b, "- ");
  esc(b, arm);
  if (i > 0) {
    core_buf_puts(b, " (from ");
    esc(b, bi->id);
    core_buf_puts(b, ")");
  }
  core_buf_puts(b, ": ");
  for (k = 0; k < 64; k++) {
    const char *cmd = probe(bi, arm, k, "command", key, sizeof key);
    const char *out = probe(bi, arm, k, "output", key2, sizeof key2);
    const char *code;
    if (!cmd)
      break;
    core_buf_puts(b, k ? "; " : "");
    report_code_span(b, cmd);
    core_buf_puts(b, " → ");
    code = probe(bi, arm, k, "exit_code", key, sizeof key);
    if (code && strcmp(code, "0") != 0) {
      core_buf_puts(b, "(exit ");
      esc(b, code);
      core_buf_puts(b, ") ");
    }
    first_line(b, out && *out ? out : "(no output)");
  }
  core_buf_puts(b, "\n");
  return 1;
}

static void versions(core_buf *b, const report_input *in) {
  const data_report_inputs *x = in->extra;
  size_t mark = b->len;
  int shown = 0;
  core_buf_puts(b, "Tool versions, per arm (command → the first line of its "
                   "output):\n\n");
  for (size_t a = 0; a < in->sheet->n_arms; a++)
    for (size_t i = 0; x && i < x->n_batches; i++)
      shown |= probes_line(b, x, i, in->sheet->arms[a].name);
  if (shown) {
    core_buf_puts(b, "\n");
    return;
  }
  /* Nothing to show: the heading goes again. */
  if (!b->oom && b->data) {
    b->len = mark;
    b->data[mark] = '\0';
  }
  core_buf_puts(b, "No tool versions were recorded.\n\n");
}

/* Images and caches */

static void images(core_buf *b, const report_input *in,
                   const report_row_facts *f) {
  int one = f->digests.n > 0;
  size_t runs = 0;
  for (size_t i = 0; i < f->digests.n; i++) {
    one &= strcmp(f->digests.v[i].value, f->digests.v[0].value) == 0;
    runs += f->digests.v[i].count;
  }
  if (f->digests.n == 0) {
    core_buf_puts(b, "- Image: no digest was recorded.\n");
    return;
  }
  if (one) {
    core_buf_printf(b,
                    "- Image: digest `%s` in all %zu runs that record one (",
                    f->digests.v[0].value, runs);
    for (size_t i = 0; i < f->digests.n; i++) {
      core_buf_puts(b, i ? ", " : "");
      esc(b, f->digests.v[i].group);
      core_buf_printf(b, " %zu", f->digests.v[i].count);
    }
    core_buf_puts(b, ").\n");
    (void)in;
    return;
  }
  for (size_t i = 0; i < f->digests.n; i++) {
    core_buf_puts(b, "- Image of ");
    esc(b, f->digests.v[i].group);
    core_buf_printf(b, ": digest `%s`, %zu runs.\n", f->digests.v[i].value,
                    f->digests.v[i].count);
  }
}

static void caches(core_buf *b, const report_row_facts *f) {
  int one = f->caches.n > 0;
  for (size_t i = 0; i < f->caches.n; i++)
    one &= strcmp(f->caches.v[i].value, f->caches.v[0].value) == 0;
  if (f->caches.n == 0)
    core_buf_puts(b, "- Cache: no cache state was recorded");
  else if (one) {
    core_buf_puts(b, "- Cache: ");
    esc(b, f->caches.v[0].value);
    core_buf_puts(b, " in every run");
  } else {
    core_buf_puts(b, "- Cache: ");
    for (size_t i = 0; i < f->caches.n; i++) {
      core_buf_puts(b, i ? "; " : "");
      esc(b, f->caches.v[i].group);
      core_buf_puts(b, " ");
      esc(b, f->caches.v[i].value);
      core_buf_printf(b, " %zu runs", f->caches.v[i].count);
    }
    if (f->caches.other)
      core_buf_printf(b, "; %zu runs in more distinct states",
                      f->caches.other);
  }
  if (f->has_cached)
    core_buf_printf(b, "; the page cache held %ld to %ld MiB before a run",
                    f->cached_min, f->cached_max);
  core_buf_puts(b, ".\n\n");
}

/* The inputs the newest version locks by digest only (not in the data
 * folder or the bundle, so a replicator supplies them), and the files its
 * commands read by absolute path, which nothing locks. */
static void locks(core_buf *b, const report_input *in) {
  const data_version *v = in->exp && in->exp->n_versions
                              ? &in->exp->versions[in->exp->n_versions - 1]
                              : NULL;
  size_t n = 0;
  for (size_t i = 0; v && i < v->n_inputs; i++) {
    if (!v->inputs[i].by_digest)
      continue;
    core_buf_puts(b, n++ ? "; "
                         : "- Inputs locked by their digest only (no "
                           "copy in the data folder or the bundle: "
                           "a replicator supplies them): ");
    esc(b, v->inputs[i].path);
    core_buf_puts(b, " (sha256 ");
    esc(b, v->inputs[i].sha256);
    core_buf_printf(b, ", %lld bytes)", v->inputs[i].bytes);
  }
  if (n)
    core_buf_puts(b, ".\n");
  for (size_t i = 0; v && i < v->n_unlocked; i++) {
    core_buf_puts(b, i ? ", "
                       : "- Files the commands read by absolute path, "
                         "not locked (neither hashed nor bundled: a "
                         "replication reads whatever is at that path "
                         "on its host): ");
    esc(b, v->unlocked[i]);
  }
  if (v && v->n_unlocked && v->unlocked_more > 0)
    core_buf_printf(b, " and %ld more", v->unlocked_more);
  if (v && v->n_unlocked)
    core_buf_puts(b, ".\n");
}

void report_setup(const report_input *in, const report_row_facts *f,
                  core_buf *b) {
  const data_report_inputs *x = in->extra;
  core_buf_puts(b, "## Setup\n\n");
  hosts(b, x, f);
  if (x && x->n_batches) {
    core_buf_puts(b, "Batches:\n\n");
    for (size_t i = 0; i < x->n_batches; i++)
      batch_line(b, &x->batches[i]);
    core_buf_puts(b, "\n");
  }
  versions(b, in);
  locks(b, in);
  images(b, in, f);
  caches(b, f);
}
