/* markdown.c: report.md, the source every other page is rendered from:
 * verdicts in words, setup, rule, hypotheses, tables, deviations, what
 * fell, threats, provenance and the commands that reproduce it.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

/* {==== Formatting ==== */

/* Escaped text, or a dash when empty. */
static void esc(core_buf *b, const char *s) {
  if (!s || !*s)
    core_buf_puts(b, "–");
  else
    core_buf_md_escape(b, s);
}

/* x with 3 significant digits; "n/a" when not finite. */
static void sig(core_buf *b, double x) {
  char t[64];
  if (isfinite(x))
    core_fmt_sig(t, sizeof t, x, 3);
  else
    snprintf(t, sizeof t, "n/a");
  core_buf_puts(b, t);
}

/* "3.42×, CI 3.10–3.80" */
static void ratio_ci(core_buf *b, const analysis_result *r) {
  sig(b, r->ratio);
  core_buf_puts(b, "×, CI ");
  sig(b, r->ci_low);
  core_buf_puts(b, "–");
  sig(b, r->ci_high);
}

/* A code fence longer than any run of backticks in text. */
static void fence(core_buf *b, const char *text, const char *info) {
  size_t run = 0, max = 0;
  for (const char *p = text ? text : ""; *p; p++) {
    run = *p == '`' ? run + 1 : 0;
    if (run > max)
      max = run;
  }
  for (size_t i = 0; i < (max < 3 ? 3 : max + 1); i++)
    core_buf_puts(b, "`");
  core_buf_puts(b, info);
  core_buf_puts(b, "\n");
}

/* Shell word, quoted when it holds anything but safe characters. */
/* }==== */

/* {==== Counting distinct values in the rows ==== */

/* Distinct values are few in practice (hosts, digests, cache states);
 * past MAX_DISTINCT the rest are counted together so that a free-text
 * column cannot make the report quadratic in the number of rows. */
#define MAX_DISTINCT 64

/* Counts one (group, value) pair. */
static void tally_add(report_tally *t, const char *group, const char *value) {
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->v[i].group, group) == 0 &&
        strcmp(t->v[i].value, value) == 0) {
      t->v[i].count++;
      return;
    }
  if (t->n >= MAX_DISTINCT) {
    t->other++;
    return;
  }
  t->v[t->n].group = group;
  t->v[t->n].value = value;
  t->v[t->n].count = 1;
  t->n++;
}

/* How many distinct values group has. */
static size_t tally_groups(const report_tally *t, const char *group) {
  size_t k = 0;
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->v[i].group, group) == 0)
      k++;
  return k;
}

/* A row counts as one run when its metric is its workload's first: the
 * rows are one per run and metric. */
static int row_is_run(const proto_sheet *s, const data_row *r) {
  long w = proto_workload_index(s, r->workload);
  if (w < 0 || s->workloads[w].n_metrics == 0)
    return 1;
  return strcmp(r->metric, s->workloads[w].metrics[0]) == 0;
}

/* The class of a run's cache state, for counting: the policy and, where
 * the image's residency was observed, a bucket of it. The raw page-cache
 * size moves by a few MiB between any two runs, so counting raw states
 * would call every workload "mixed"; the raw range is shown apart. */
static const char *cache_class(const data_row *r) {
  static const char *const names[3][5] = {
      {"warm", "warm; image >= 90% resident", "warm; image partly resident",
       "warm; image <= 10% resident", "warm; image residency unreadable"},
      {"cold", "cold; image >= 90% resident", "cold; image partly resident",
       "cold; image <= 10% resident", "cold; image residency unreadable"},
      {"unknown policy", "unknown policy; image >= 90% resident",
       "unknown policy; image partly resident",
       "unknown policy; image <= 10% resident",
       "unknown policy; image residency unreadable"}};
  int p = 2, k = 0;
  const char *res =
      r->cache_state ? strstr(r->cache_state, "resident=") : NULL;
  if (r->cache_policy && strcmp(r->cache_policy, "warm") == 0)
    p = 0;
  else if (r->cache_policy && strcmp(r->cache_policy, "cold") == 0)
    p = 1;
  if (res) {
    char *end;
    double x = strtod(res + 9, &end);
    if (end == res + 9)
      k = 4;
    else
      k = x >= 0.9 ? 1 : x <= 0.1 ? 3 : 2;
  }
  return names[p][k];
}

static void note_cached(report_row_facts *f, const char *state) {
  const char *c = state ? strstr(state, "cached_mib=") : NULL;
  char *end;
  long v;
  if (!c)
    return;
  v = strtol(c + 11, &end, 10);
  if (end == c + 11)
    return;
  if (!f->has_cached || v < f->cached_min)
    f->cached_min = v;
  if (!f->has_cached || v > f->cached_max)
    f->cached_max = v;
  f->has_cached = 1;
}

void report_facts_of_rows(const report_input *in, report_row_facts *f) {
  const data_rowset *rs = in->rows;
  memset(f, 0, sizeof *f);
  f->digests.v = f->digests_v;
  f->caches.v = f->caches_v;
  f->hosts.v = f->hosts_v;
  for (size_t i = 0; rs && i < rs->n; i++) {
    const data_row *r = &rs->rows[i];
    if (!row_is_run(in->sheet, r))
      continue;
    f->runs++;
    if (r->quick)
      f->quick_runs++;
    if (r->reason && strstr(r->reason, "left running: "))
      f->leaked_runs++;
    if (r->image_digest && *r->image_digest)
      tally_add(&f->digests, r->arm, r->image_digest);
    if ((r->cache_state && *r->cache_state) ||
        (r->cache_policy && *r->cache_policy))
      tally_add(&f->caches, r->workload, cache_class(r));
    note_cached(f, r->cache_state);
    if (r->host && *r->host)
      tally_add(&f->hosts, "", r->host);
    if (r->started_at && *r->started_at &&
        (!f->newest || strcmp(r->started_at, f->newest) > 0))
      f->newest = r->started_at;
  }
}

/* }==== */

/* {==== Threats prereg detects ==== */

/* The first number in a fact value ("0.52", "[0.52, 0.4, 0.3]"). */
static int fact_number(const char *v, double *x) {
  char *end;
  while (v && *v && !(*v >= '0' && *v <= '9'))
    v++;
  if (!v || !*v)
    return 0;
  *x = strtod(v, &end);
  return end != v;
}

static const char *last_part(const char *key) {
  const char *d = strrchr(key, '.');
  return d ? d + 1 : key;
}

/* Load average and core count from a batch's facts, whatever the exact
 * key names ("host.loadavg[0]", "load1", "host.cores", "nproc"). */
static void load_and_cores(const data_batch_info *b, double *load,
                           double *cores) {
  *load = -1;
  *cores = -1;
  for (size_t i = 0; i < b->n_facts; i++) {
    const char *k = last_part(b->facts[i].key);
    double x;
    if (!fact_number(b->facts[i].value, &x))
      continue;
    /* Several load keys (start, end; 1, 5, 15 minutes): the highest
     * counts. */
    if (strstr(k, "load"))
      *load = x > *load ? x : *load;
    else if ((strstr(k, "cores") || strstr(k, "nproc") ||
              strcmp(k, "cpus") == 0 || strstr(k, "ncpu")) &&
             *cores < 0)
      *cores = x;
  }
}

/* A batch id's number ("b0012" -> 12; ids pass 9999 as "b10000"). */
static long batch_number(const char *id) {
  return id && id[0] == 'b' ? strtol(id + 1, NULL, 10) : 0;
}

/* Whether row x was collected before y: by start time (UTC ISO 8601, so
 * text order is time order), then, within a second, by batch and
 * execution order. */
static int collected_before(const data_row *x, const data_row *y) {
  int c = strcmp(x->started_at, y->started_at);
  if (c != 0)
    return c < 0;
  long bx = batch_number(x->batch), by = batch_number(y->batch);
  return bx < by || (bx == by && x->seq < y->seq);
}

/* The first and last run row of an arm on a workload, and how many. */
typedef struct arm_span {
  const data_row *first, *last;
  size_t runs;
} arm_span;

static arm_span span_of(const report_input *in, const char *workload,
                        const char *arm) {
  arm_span sp = {0};
  for (size_t i = 0; in->rows && i < in->rows->n; i++) {
    const data_row *r = &in->rows->rows[i];
    /* Imported rows without a start time have no known collection
     * order (a CSV may list them by arm): they cannot tell. */
    if (strcmp(r->workload, workload) != 0 || strcmp(r->arm, arm) != 0 ||
        !row_is_run(in->sheet, r) || !r->started_at || !*r->started_at)
      continue;
    sp.runs++;
    if (!sp.first || collected_before(r, sp.first))
      sp.first = r;
    if (!sp.last || collected_before(sp.last, r))
      sp.last = r;
  }
  return sp;
}

/* An arm whose runs of an interleaved workload all came before or after
 * the reference's (an arm added later, a workload rerun for one arm
 * with --only, data imported apart): the sheet says interleaved, the data
 * says otherwise, and a drift of the machine falls on that arm alone. */
static void not_interleaved(const report_input *in, core_buf *b,
                            size_t *count) {
  const proto_sheet *s = in->sheet;
  const char *ref = s->arms[s->reference].name;
  for (size_t w = 0; w < s->n_workloads; w++) {
    if (s->workloads[w].order == PROTO_ORDER_BLOCKED)
      continue; /* declared, and said above */
    arm_span r = span_of(in, s->workloads[w].name, ref);
    for (size_t a = 0; a < s->n_arms && r.runs >= 2; a++) {
      if (a == s->reference)
        continue;
      arm_span x = span_of(in, s->workloads[w].name, s->arms[a].name);
      int after = x.runs >= 2 && collected_before(r.last, x.first);
      int before = x.runs >= 2 && collected_before(x.last, r.first);
      if (!after && !before)
        continue;
      core_buf_puts(b, "- Not interleaved: all runs of arm ");
      esc(b, s->arms[a].name);
      core_buf_puts(b, " on workload ");
      esc(b, s->workloads[w].name);
      core_buf_printf(b, " were collected %s those of the reference arm ",
                      after ? "after" : "before");
      esc(b, ref);
      core_buf_puts(b, ", so a drift in the machine over time falls on "
                       "one arm.\n");
      (*count)++;
    }
  }
}

/* Appends one "- ..." line per threat prereg detects; OUT: *count. */
/* Runs that left processes running after they and their cleanup ended
 * (prereg stopped them, and the runs are invalid). */
static void leaked(core_buf *b, const report_row_facts *f, size_t *count) {
  if (!f->leaked_runs)
    return;
  core_buf_puts(b, "- ");
  (*count)++;
  core_buf_printf(b,
                  "Processes left running: %zu run%s left processes "
                  "running after %s and %s cleanup had ended (prereg "
                  "stopped them; those runs are invalid, and their "
                  "reasons name each process).\n",
                  f->leaked_runs, f->leaked_runs == 1 ? "" : "s",
                  f->leaked_runs == 1 ? "it" : "they",
                  f->leaked_runs == 1 ? "its" : "their");
}

static void detected_threats(const report_input *in, core_buf *b,
                             size_t *count) {
  const proto_sheet *s = in->sheet;
  const analysis_summary *a = in->summary;
  report_row_facts f;
  *count = 0;
  report_facts_of_rows(in, &f);
#define THREAT() (core_buf_puts(b, "- "), (*count)++)
  for (size_t i = 0; i < s->n_workloads; i++)
    if (s->workloads[i].order == PROTO_ORDER_BLOCKED) {
      THREAT();
      core_buf_puts(b, "Blocked order: workload ");
      esc(b, s->workloads[i].name);
      core_buf_puts(b, " ran each arm's runs together, not interleaved, so "
                       "a drift in the machine over time falls on one arm."
                       "\n");
    }
  not_interleaved(in, b, count);
  for (size_t i = 0; i < s->n_arms; i++) {
    size_t k = tally_groups(&f.digests, s->arms[i].name);
    if (k > 1) {
      THREAT();
      core_buf_printf(b, "Image changed during collection: arm ");
      esc(b, s->arms[i].name);
      core_buf_printf(b, " ran on %zu different image digests.\n", k);
    }
  }
  for (size_t i = 0; i < s->n_workloads; i++) {
    size_t k = tally_groups(&f.caches, s->workloads[i].name);
    if (k > 1) {
      THREAT();
      core_buf_puts(b, "Mixed cache states: workload ");
      esc(b, s->workloads[i].name);
      core_buf_printf(b, " saw %zu different cache states (see Setup).\n", k);
    }
  }
  leaked(b, &f, count);
  if (f.hosts.n > 1) {
    THREAT();
    core_buf_printf(b, "The host changed between batches: %zu hosts (",
                    f.hosts.n);
    for (size_t i = 0; i < f.hosts.n; i++) {
      if (i)
        core_buf_puts(b, ", ");
      esc(b, f.hosts.v[i].value);
    }
    core_buf_puts(b, ").\n");
  }
  for (size_t i = 0; i < a->n_cells; i++) {
    const analysis_cell *c = &a->cells[i];
    long w = proto_workload_index(s, c->workload);
    /* One line per workload and arm: its first metric stands for the
     * runs. */
    if (w >= 0 && s->workloads[w].n_metrics &&
        strcmp(c->metric, s->workloads[w].metrics[0]) != 0)
      continue;
    if (c->n_valid < 6) {
      THREAT();
      core_buf_printf(b, "Few valid runs: %zu for arm ", c->n_valid);
      esc(b, c->arm);
      core_buf_puts(b, " on ");
      esc(b, c->workload);
      core_buf_puts(b, " (fewer than 6: the bootstrap interval of a "
                       "median is coarse).\n");
    }
  }
  for (size_t i = 0; in->extra && i < in->extra->n_batches; i++) {
    double load, cores;
    load_and_cores(&in->extra->batches[i], &load, &cores);
    if (load >= 0 && cores > 0 && load > cores) {
      char l[32], c[32];
      core_fmt_sig(l, sizeof l, load, 3);
      snprintf(c, sizeof c, "%.0f", cores);
      THREAT();
      core_buf_puts(b, "High load: batch ");
      esc(b, in->extra->batches[i].id);
      core_buf_printf(b, " ran with a load average of %s on %s cores.\n", l,
                      c);
    }
  }
  if (f.quick_runs) {
    THREAT();
    core_buf_printf(b,
                    "Quick mode: %zu of %zu runs were collected with "
                    "`run --quick` and do not follow the plan.\n",
                    f.quick_runs, f.runs);
  }
#undef THREAT
}

/* }==== */

/* {==== Sections ==== */

static const analysis_result *find_result(const analysis_summary *a,
                                          const char *w, const char *m,
                                          const char *arm) {
  for (size_t i = 0; a && i < a->n_results; i++)
    if (strcmp(a->results[i].workload, w) == 0 &&
        strcmp(a->results[i].metric, m) == 0 &&
        strcmp(a->results[i].arm, arm) == 0)
      return &a->results[i];
  return NULL;
}

static const analysis_cell *find_cell(const analysis_summary *a, const char *w,
                                      const char *m, const char *arm) {
  for (size_t i = 0; i < a->n_cells; i++)
    if (strcmp(a->cells[i].workload, w) == 0 &&
        strcmp(a->cells[i].metric, m) == 0 &&
        strcmp(a->cells[i].arm, arm) == 0)
      return &a->cells[i];
  return NULL;
}

static void verdicts_in_words(core_buf *b, const report_input *in) {
  const analysis_summary *a = in->summary;
  core_buf_puts(b, "## Verdict\n\n");
  if (a->n_results == 0)
    core_buf_puts(b, "No comparison yet: no arm has valid data beside the "
                     "reference.\n");
  for (size_t i = 0; i < a->n_results; i++) {
    const analysis_result *r = &a->results[i];
    core_buf_puts(b, "- ");
    esc(b, r->arm);
    core_buf_puts(b, ": **");
    esc(b, r->verdict);
    core_buf_puts(b, "** on ");
    esc(b, r->workload);
    core_buf_puts(b, " ");
    esc(b, r->metric);
    core_buf_puts(b, " (");
    ratio_ci(b, r);
    core_buf_puts(b, " against ");
    esc(b, r->reference);
    core_buf_puts(b, ")\n");
  }
  for (size_t i = 0; i < a->n_hypotheses; i++) {
    core_buf_puts(b, i ? "" : "\n");
    core_buf_puts(b, "- Hypothesis ");
    esc(b, a->hypotheses[i].id);
    core_buf_printf(b, ": **%s**",
                    proto_outcome_word(a->hypotheses[i].outcome));
    if (a->hypotheses[i].says && *a->hypotheses[i].says) {
      core_buf_puts(b, " (");
      esc(b, a->hypotheses[i].says);
      core_buf_puts(b, ")");
    }
    core_buf_puts(b, "\n");
  }
  core_buf_puts(b, "\n");
}

static void collection_status(core_buf *b, const report_input *in) {
  const proto_sheet *s = in->sheet;
  core_buf_puts(b, "## Collection status\n\n"
                   "| Workload | Arm | Planned | Valid | Invalid | "
                   "Superseded |\n|---|---|--:|--:|--:|--:|\n");
  for (size_t w = 0; w < s->n_workloads; w++) {
    const proto_workload *wl = &s->workloads[w];
    for (size_t i = 0; i < s->n_arms; i++) {
      const analysis_cell *c = wl->n_metrics
                                   ? find_cell(in->summary, wl->name,
                                               wl->metrics[0], s->arms[i].name)
                                   : NULL;
      core_buf_puts(b, "| ");
      esc(b, wl->name);
      core_buf_puts(b, " | ");
      esc(b, s->arms[i].name);
      if (wl->runs > 0)
        core_buf_printf(b, " | %ld", wl->runs);
      else
        core_buf_puts(b, " | import");
      core_buf_printf(b, " | %zu | %zu | %zu |\n", c ? c->n_valid : 0,
                      c ? c->n_invalid : 0, c ? c->n_superseded : 0);
    }
  }
  core_buf_puts(b, "\nRuns are counted on each workload's first metric.\n\n");
}

static void setup(core_buf *b, const report_input *in) {
  report_row_facts f;
  const data_report_inputs *x = in->extra;
  int any_host = 0, any_ver = 0;
  report_facts_of_rows(in, &f);
  core_buf_puts(b, "## Setup\n\n");
  /* Facts identical across batches are shown once, with the batches
   * that recorded them. */
  for (int pass = 0; pass < 2; pass++) {
    int *any = pass ? &any_ver : &any_host;
    for (size_t i = 0; x && i < x->n_batches; i++)
      for (size_t j = 0; j < x->batches[i].n_facts; j++) {
        const data_fact *fa = &x->batches[i].facts[j];
        int is_ver =
            strstr(fa->key, "version") && !strstr(fa->key, "sheet_version");
        int seen = 0;
        if (is_ver != pass)
          continue;
        for (size_t i2 = 0; i2 < i && !seen; i2++)
          seen =
              data_fact_get(&x->batches[i2], fa->key) &&
              strcmp(data_fact_get(&x->batches[i2], fa->key), fa->value) == 0;
        if (seen)
          continue;
        if (!*any) {
          core_buf_puts(b, pass ? "### Tool versions\n\n"
                                : "### Host and batch facts\n\n");
          core_buf_puts(b, "| Fact | Value | Batches |\n|---|---|---|\n");
          *any = 1;
        }
        core_buf_puts(b, "| ");
        esc(b, fa->key);
        core_buf_puts(b, " | ");
        esc(b, fa->value);
        core_buf_puts(b, " | ");
        for (size_t i2 = i, k = 0; i2 < x->n_batches; i2++) {
          const char *v = data_fact_get(&x->batches[i2], fa->key);
          if (v && strcmp(v, fa->value) == 0) {
            core_buf_puts(b, k++ ? ", " : "");
            esc(b, x->batches[i2].id);
          }
        }
        core_buf_puts(b, " |\n");
      }
    if (*any)
      core_buf_puts(b, "\n");
  }
  if (!any_host && !any_ver)
    core_buf_puts(b, "No batch recorded host facts.\n\n");
  core_buf_puts(b, "### Image digests seen\n\n");
  if (f.digests.n == 0)
    core_buf_puts(b, "No image digest was recorded.\n\n");
  else {
    core_buf_puts(b, "| Arm | Image digest | Runs |\n|---|---|--:|\n");
    for (size_t i = 0; i < f.digests.n; i++) {
      core_buf_puts(b, "| ");
      esc(b, f.digests.v[i].group);
      core_buf_puts(b, " | ");
      esc(b, f.digests.v[i].value);
      core_buf_printf(b, " | %zu |\n", f.digests.v[i].count);
    }
    core_buf_puts(b, "\n");
  }
  core_buf_puts(b, "### Cache states seen\n\n");
  if (f.caches.n == 0)
    core_buf_puts(b, "No cache state was recorded.\n\n");
  else {
    core_buf_puts(b, "| Workload | Cache state | Runs |\n|---|---|--:|\n");
    for (size_t i = 0; i < f.caches.n; i++) {
      core_buf_puts(b, "| ");
      esc(b, f.caches.v[i].group);
      core_buf_puts(b, " | ");
      esc(b, f.caches.v[i].value);
      core_buf_printf(b, " | %zu |\n", f.caches.v[i].count);
    }
    if (f.caches.other)
      core_buf_printf(b, "| (others) | (more distinct states) | %zu |\n",
                      f.caches.other);
    core_buf_puts(b, "\n");
    if (f.has_cached)
      core_buf_printf(b, "Page cache before each run: %ld to %ld MiB.\n\n",
                      f.cached_min, f.cached_max);
  }
}

static void join_list(core_buf *b, char **v, size_t n) {
  if (n == 0)
    core_buf_puts(b, "–");
  for (size_t i = 0; i < n; i++) {
    core_buf_puts(b, i ? "; " : "");
    esc(b, v[i]);
  }
}

static void arms_and_workloads(core_buf *b, const proto_sheet *s) {
  core_buf_puts(b, "## Arms\n\n| Arm | Role | Runs as | Requires | Image "
                   "|\n|---|---|---|---|---|\n");
  for (size_t i = 0; i < s->n_arms; i++) {
    const proto_arm *a = &s->arms[i];
    const proto_image *im =
        a->image.tree || a->image.digest_cmd ? &a->image : &s->image;
    core_buf_puts(b, "| ");
    esc(b, a->name);
    core_buf_puts(b, a->reference ? " | reference | " : " | compared | ");
    esc(b, a->run ? a->run : "{cmd}");
    core_buf_puts(b, " | ");
    join_list(b, a->requires, a->n_requires);
    core_buf_puts(b, " | ");
    if (im->tree) {
      core_buf_puts(b, "tree ");
      esc(b, im->tree);
    } else if (im->digest_cmd) {
      core_buf_puts(b, "digest from ");
      esc(b, im->digest_cmd);
    } else
      core_buf_puts(b, "–");
    core_buf_puts(b, " |\n");
  }
  core_buf_puts(b, "\n## Workloads\n\n| Workload | Runs | Warm-up | Command "
                   "| Metrics | Order | Cache |\n|---|--:|--:|---|---|---|"
                   "---|\n");
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *w = &s->workloads[i];
    core_buf_puts(b, "| ");
    esc(b, w->name);
    if (w->runs > 0)
      core_buf_printf(b, " | %ld | %ld | ", w->runs, w->warmup);
    else
      core_buf_puts(b, " | import only | – | ");
    if (w->cmd)
      esc(b, w->cmd);
    else if (w->n_steps)
      join_list(b, w->steps, w->n_steps);
    else
      core_buf_puts(b, "(imported)");
    core_buf_puts(b, " | ");
    join_list(b, w->metrics, w->n_metrics);
    core_buf_puts(b, w->order == PROTO_ORDER_BLOCKED ? " | blocked"
                                                     : " | interleaved");
    core_buf_puts(b, w->cache == PROTO_CACHE_COLD ? " | cold |\n"
                                                  : " | warm |\n");
  }
  core_buf_puts(b, "\n");
}

static void rule(core_buf *b, const proto_sheet *s) {
  core_buf words;
  core_buf_init(&words);
  proto_rule_words(s, &words);
  core_buf_puts(b, "## Decision rule\n\n");
  /* words ran out of memory: b fails with it, rather than the report
   * going out with the rule cut short or shown as a dash. */
  if (words.oom)
    b->oom = 1;
  esc(b, words.data);
  core_buf_free(&words);
  core_buf_printf(b,
                  "\n\nEstimator: %s; confidence %.6g%%; %ld resamples; "
                  "seed %lu.\n\n",
                  s->rule.estimator ? s->rule.estimator : "median",
                  s->rule.confidence * 100, s->rule.resamples, s->rule.seed);
  for (size_t i = 0; i < s->rule.n_verdicts; i++) {
    const proto_verdict_rule *v = &s->rule.verdicts[i];
    int k = 0;
    core_buf_printf(b, "%zu. **", i + 1);
    esc(b, v->name);
    core_buf_puts(b, "** when ");
    if (v->has_ci_excludes)
      core_buf_printf(b, "%sthe CI excludes %.6g", k++ ? "and " : "",
                      v->ci_excludes);
    if (v->has_ratio_above)
      core_buf_printf(b, "%sthe ratio is above %.6g", k++ ? " and " : "",
                      v->ratio_above);
    if (v->has_ratio_below)
      core_buf_printf(b, "%sthe ratio is below %.6g", k++ ? " and " : "",
                      v->ratio_below);
    if (v->has_ci_within)
      core_buf_printf(b, "%sthe whole CI lies within %.6g–%.6g",
                      k++ ? " and " : "", v->ci_within[0], v->ci_within[1]);
    if (!k)
      core_buf_puts(b, "always");
    core_buf_puts(b, "\n");
  }
  if (s->rule.n_verdicts)
    core_buf_puts(b, "\nThe first matching verdict wins; none: "
                     "inconclusive.\n\n");
}

static const analysis_hypothesis *orig_hyp(const analysis_summary *o,
                                           const char *id) {
  for (size_t i = 0; o && i < o->n_hypotheses; i++)
    if (strcmp(o->hypotheses[i].id, id) == 0)
      return &o->hypotheses[i];
  return NULL;
}

static void hypotheses(core_buf *b, const report_input *in) {
  const analysis_summary *a = in->summary, *o = a->original;
  core_buf_puts(b, "## Hypotheses\n\n");
  if (a->n_hypotheses == 0) {
    core_buf_puts(b, "The sheet states no hypothesis.\n\n");
    return;
  }
  core_buf_puts(b,
                o ? "| ID | Says | Verdict | Reason | Under the original "
                    "rule |\n|---|---|---|---|---|\n"
                  : "| ID | Says | Verdict | Reason |\n|---|---|---|---|\n");
  for (size_t i = 0; i < a->n_hypotheses; i++) {
    const analysis_hypothesis *h = &a->hypotheses[i];
    core_buf_puts(b, "| ");
    esc(b, h->id);
    core_buf_puts(b, " | ");
    esc(b, h->says);
    core_buf_printf(b, " | **%s** | ", proto_outcome_word(h->outcome));
    esc(b, h->reason);
    if (o) {
      const analysis_hypothesis *oh = orig_hyp(o, h->id);
      core_buf_puts(b, " | ");
      core_buf_puts(b, oh ? proto_outcome_word(oh->outcome)
                          : "(not in the "
                            "original)");
    }
    core_buf_puts(b, " |\n");
  }
  core_buf_puts(b, "\n");
}

static void results(core_buf *b, const report_input *in,
                    const report_doc *doc) {
  const proto_sheet *s = in->sheet;
  const analysis_summary *a = in->summary, *o = a->original;
  const char *ref = s->arms[s->reference].name;
  size_t plot = 0;
  core_buf_puts(b, "## Results\n\n");
  for (size_t w = 0; w < s->n_workloads; w++)
    for (size_t m = 0; m < s->workloads[w].n_metrics; m++) {
      const char *wn = s->workloads[w].name, *mn = s->workloads[w].metrics[m];
      const char *unit = proto_metric_unit(mn);
      char conf[32];
      snprintf(conf, sizeof conf, "%.6g%%", a->confidence * 100);
      core_buf_puts(b, "### ");
      esc(b, wn);
      core_buf_puts(b, " — ");
      esc(b, mn);
      core_buf_printf(b,
                      "\n\n| Arm | n | Median | Ratio | %s CI | Verdict "
                      "|%s\n|---|--:|--:|--:|---|---|%s\n",
                      conf, o ? " Original rule |" : "", o ? "---|" : "");
      for (size_t i = 0; i < s->n_arms; i++) {
        const char *an = s->arms[i].name;
        const analysis_cell *c = find_cell(a, wn, mn, an);
        const analysis_result *r = find_result(a, wn, mn, an);
        core_buf_puts(b, "| ");
        esc(b, an);
        core_buf_printf(b, " | %zu | ", c ? c->n_valid : 0);
        if (c && c->n_valid) {
          sig(b, c->median);
          if (*unit)
            core_buf_printf(b, " %s", unit);
        } else
          core_buf_puts(b, "–");
        if (strcmp(an, ref) == 0)
          core_buf_puts(b, " | reference | | |");
        else if (r) {
          core_buf_puts(b, " | ");
          sig(b, r->ratio);
          core_buf_puts(b, "× | ");
          sig(b, r->ci_low);
          core_buf_puts(b, "–");
          sig(b, r->ci_high);
          core_buf_puts(b, " | **");
          esc(b, r->verdict);
          core_buf_puts(b, "** |");
        } else
          core_buf_puts(b, " | – | – | no data |");
        if (o) {
          const analysis_result * or = find_result(o, wn, mn, an);
          core_buf_puts(b, " ");
          if (or)
            esc(b, or->verdict);
          else
            core_buf_puts(b, strcmp(an, ref) == 0 ? "" : "–");
          core_buf_puts(b, " |");
        }
        core_buf_puts(b, "\n");
      }
      core_buf_puts(b, "\n");
      if (plot < doc->n_plots && strcmp(doc->plots[plot].workload, wn) == 0 &&
          strcmp(doc->plots[plot].metric, mn) == 0) {
        core_buf_puts(b, "![Forest plot of the ratios to ");
        esc(b, ref);
        core_buf_puts(b, " on ");
        esc(b, wn);
        core_buf_puts(b, ", ");
        esc(b, mn);
        core_buf_printf(b, "](%s)\n\n", doc->plots[plot].file);
        plot++;
      }
    }
}

static void deviations(core_buf *b, const report_input *in) {
  const analysis_summary *a = in->summary;
  core_buf_puts(b, "## Deviations\n\n");
  if (in->n_amendments == 0) {
    core_buf_puts(b, "None. The data were collected and analysed under the "
                     "registered sheet.\n\n");
    return;
  }
  for (size_t i = 0; i < in->n_amendments; i++) {
    const report_amendment *m = &in->amendments[i];
    core_buf_printf(b, "### Amendment %d\n\n- Dated: ", m->number);
    esc(b, m->date);
    core_buf_puts(b, "\n- Recorded: ");
    esc(b, m->filed_at);
    core_buf_puts(b, "\n- Timing: ");
    if (m->runs_before < 0)
      core_buf_puts(b, "unknown");
    else if (m->runs_before == 0)
      core_buf_puts(b, "before any data");
    else
      core_buf_printf(b, "after %ld run%s had been collected", m->runs_before,
                      m->runs_before == 1 ? "" : "s");
    core_buf_puts(b, "\n- Why: ");
    esc(b, m->why);
    core_buf_puts(b, "\n- Workloads affected: ");
    esc(b, m->affected ? m->affected : "none");
    core_buf_puts(b, "\n\n");
    if (m->diff && *m->diff) {
      fence(b, m->diff, "diff");
      core_buf_puts(b, m->diff);
      if (m->diff[strlen(m->diff) - 1] != '\n')
        core_buf_puts(b, "\n");
      fence(b, m->diff, "");
      core_buf_puts(b, "\n");
    }
  }
  if (a->original) {
    core_buf_puts(b, "### Verdicts under the original rule\n\n");
    esc(b, a->original_why);
    core_buf_puts(b, "\n\n| Workload | Metric | Arm | Amended | Original "
                     "|\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < a->n_results; i++) {
      const analysis_result *r = &a->results[i];
      const analysis_result * or
          = find_result(a->original, r->workload, r->metric, r->arm);
      core_buf_puts(b, "| ");
      esc(b, r->workload);
      core_buf_puts(b, " | ");
      esc(b, r->metric);
      core_buf_puts(b, " | ");
      esc(b, r->arm);
      core_buf_puts(b, " | ");
      esc(b, r->verdict);
      core_buf_puts(b, " | ");
      esc(b, or ? or->verdict : "(not analysed)");
      core_buf_puts(b, " |\n");
    }
    core_buf_puts(b, "\n");
  } else
    core_buf_puts(b, "No amendment changed the analysis after data existed, "
                     "so there are no original-rule verdicts to compare.\n\n");
}

/* The host the data were measured on, from the last batch's facts. */
static void measured_where(core_buf *b, const report_input *in) {
  const data_report_inputs *x = in->extra;
  const data_batch_info *last =
      x && x->n_batches ? &x->batches[x->n_batches - 1] : NULL;
  if (!last)
    return;
  const char *cpu = data_fact_get(last, "host.cpu_model");
  const char *cores = data_fact_get(last, "host.cores");
  const char *mem = data_fact_get(last, "host.mem_total_mib");
  const char *kernel = data_fact_get(last, "host.kernel");
  if (!cpu && !kernel) {
    core_buf_puts(b, "The batches do not record the host they were measured "
                     "on (imported data).\n\n");
    return;
  }
  core_buf_puts(b, "Measured here on: ");
  esc(b, cpu ? cpu : "an unrecorded CPU");
  core_buf_puts(b, ", ");
  esc(b, cores ? cores : "?");
  core_buf_puts(b, " cores, ");
  esc(b, mem ? mem : "?");
  core_buf_puts(b, " MiB of memory, ");
  esc(b, kernel ? kernel : "an unrecorded kernel");
  core_buf_puts(b, " (batch ");
  esc(b, last->id);
  core_buf_puts(b, "; the tool versions are under Setup).\n\n");
}

/* The ratios a publication reports (the sheet's `published`) beside the
 * ones measured here, with what differs. */
static void published(core_buf *b, const report_input *in) {
  const proto_sheet *s = in->sheet;
  const analysis_summary *a = in->summary;
  if (s->n_published == 0)
    return;
  char conf[32];
  snprintf(conf, sizeof conf, "%.6g%%", a->confidence * 100);
  core_buf_puts(b, "## Published and measured\n\n");
  core_buf_printf(b,
                  "Each ratio is the arm's median against %s's, on the same "
                  "workload and metric: as published, and as measured "
                  "here under this sheet's rule.\n\n",
                  s->arms[s->reference].name);
  core_buf_printf(b,
                  "| Workload | Metric | Arm | Published | Measured | %s CI "
                  "| Verdict here | Source | What differs |\n"
                  "|---|---|---|--:|--:|---|---|---|---|\n",
                  conf);
  for (size_t i = 0; i < s->n_published; i++) {
    const proto_published *p = &s->published[i];
    const analysis_result *r = find_result(a, p->workload, p->metric, p->arm);
    core_buf_puts(b, "| ");
    esc(b, p->workload);
    core_buf_puts(b, " | ");
    esc(b, p->metric);
    core_buf_puts(b, " | ");
    esc(b, p->arm);
    core_buf_puts(b, " | ");
    sig(b, p->ratio);
    core_buf_puts(b, "×");
    if (p->verdict) {
      core_buf_puts(b, " (");
      esc(b, p->verdict);
      core_buf_puts(b, ")");
    }
    if (r && !isnan(r->ratio)) {
      core_buf_puts(b, " | ");
      sig(b, r->ratio);
      core_buf_puts(b, "× | ");
      sig(b, r->ci_low);
      core_buf_puts(b, "–");
      sig(b, r->ci_high);
      core_buf_puts(b, " | **");
      esc(b, r->verdict);
      core_buf_puts(b, "** | ");
    } else
      core_buf_puts(b, " | – | – | no data | ");
    esc(b, p->source);
    core_buf_puts(b, " | ");
    esc(b, p->note ? p->note : "");
    core_buf_puts(b, " |\n");
  }
  core_buf_puts(b, "\n");
  measured_where(b, in);
}

static void fell(core_buf *b, const report_input *in) {
  const analysis_summary *a = in->summary;
  size_t total = 0;
  core_buf_puts(b, "## What fell along the way\n\n");
  if (a->n_exclusions == 0) {
    core_buf_puts(b, "Nothing: every run collected counts.\n\n");
    return;
  }
  core_buf_puts(b, "| Workload | Arm | Reason | Runs |\n|---|---|---|--:|\n");
  for (size_t i = 0; i < a->n_exclusions; i++) {
    const analysis_exclusion *e = &a->exclusions[i];
    core_buf_puts(b, "| ");
    esc(b, e->workload);
    core_buf_puts(b, " | ");
    esc(b, e->arm);
    core_buf_puts(b, " | ");
    esc(b, e->reason);
    core_buf_printf(b, " | %zu |\n", e->runs);
    total += e->runs;
  }
  core_buf_printf(b, "\n%zu run%s in all did not count.\n\n", total,
                  total == 1 ? "" : "s");
}

static void threats(core_buf *b, const report_input *in) {
  size_t n = 0;
  core_buf_puts(b, "## Threats to validity\n\n### Declared in the sheet"
                   "\n\n");
  if (in->sheet->n_threats == 0)
    core_buf_puts(b, "None declared.\n");
  for (size_t i = 0; i < in->sheet->n_threats; i++) {
    core_buf_puts(b, "- ");
    esc(b, in->sheet->threats[i]);
    core_buf_puts(b, "\n");
  }
  core_buf_puts(b, "\n### Detected by prereg\n\n");
  detected_threats(in, b, &n);
  core_buf_puts(b, n ? "\n" : "None detected.\n\n");
}

static void provenance(core_buf *b, const report_input *in) {
  const data_report_inputs *x = in->extra;
  core_buf_puts(b, "## Provenance\n\n");
  core_buf_puts(b, "Sheet SHA-256 (the version analysed): `");
  core_buf_puts(b, in->sheet->sha256);
  core_buf_printf(b, "`, version %d.\n\n", in->summary->sheet_version);
  if (x && x->n_manifest) {
    core_buf_puts(b, "| File | SHA-256 |\n|---|---|\n");
    for (size_t i = 0; i < x->n_manifest; i++) {
      core_buf_puts(b, "| ");
      esc(b, x->manifest[i].path);
      core_buf_printf(b, " | `%s` |\n", x->manifest[i].sha256);
    }
    core_buf_puts(b, "\n");
  } else
    core_buf_puts(b, "The experiment has no manifest yet.\n\n");
  core_buf_printf(b,
                  "Software: %s %s; %s; GSL %s; libxlsxwriter %s; "
                  "cmark-gfm %s.\n\n",
                  PREREG_NAME, PREREG_VERSION, proto_lua_version(),
                  analysis_gsl_version(), report_xlsxwriter_version(),
                  report_cmark_version());
}

/* The commands are written from the data alone (never from how this
 * report was invoked), so that the same data give the same report from a
 * checkout or from a published bundle. The newest frozen version is the
 * sheet to name: its text is the sheet's, byte for byte. */
static void reproduce(core_buf *b, const report_input *in) {
  static const char *const cmds[] = {"verify", "analyze", "report"};
  const char *id = in->sheet->id;
  int version =
      in->summary ? in->summary->sheet_version : (int)in->n_amendments;
  core_buf_puts(b, "## Reproduce\n\n");
  core_buf_puts(b, "From the folder that holds the data folder `data/` "
                   "(prereg's default; name another with `--data DIR`), "
                   "with the newest frozen version of the sheet:\n\n"
                   "```sh\n");
  for (size_t i = 0; i < 3; i++) {
    /* ids match [a-z0-9][a-z0-9-]*: no quoting needed */
    core_buf_printf(b, "prereg %s data/%s/versions/v%d.lua", cmds[i], id,
                    version);
    core_buf_puts(b, i == 1   ? " --json\n"
                     : i == 2 ? " --out report-again\n"
                              : "\n");
  }
  core_buf_puts(b, "```\n\nFrom a bundle made by `prereg publish`:\n\n"
                   "```sh\n");
  for (size_t i = 0; i < 3; i++) {
    core_buf_printf(b, "prereg %s %s.tar.gz", cmds[i], id);
    core_buf_puts(b, i == 1   ? " --json\n"
                     : i == 2 ? " --out report-again\n"
                              : "\n");
  }
  core_buf_puts(b, "```\n");
}

/* }==== */

void report_markdown(const report_input *in, const report_doc *doc,
                     core_buf *b) {
  const proto_sheet *s = in->sheet;
  core_buf_puts(b, "# ");
  esc(b, s->title ? s->title : s->id);
  core_buf_puts(b, "\n\n");
  if (in->unverified) {
    core_buf_puts(b, "> **UNVERIFIED.** `prereg verify` found problems with "
                     "the data behind this report; it was written with "
                     "`--force`:\n");
    for (const char *p = in->unverified; *p;) {
      const char *nl = strchr(p, '\n');
      size_t len = nl ? (size_t)(nl - p) : strlen(p);
      char *line = core_strndup(p, len);
      if (!line) {
        b->oom = 1; /* the caller checks b->oom: one check for all */
        break;
      }
      if (len) {
        core_buf_puts(b, ">\n> - ");
        esc(b, line);
        core_buf_puts(b, "\n");
      }
      core_free(line);
      p += len + (nl ? 1 : 0);
    }
    core_buf_puts(b, "\n");
  }
  core_buf_puts(b, "- Question: ");
  esc(b, s->question);
  core_buf_puts(b, "\n- Author: ");
  esc(b, s->author);
  core_buf_puts(b, "\n- Experiment: ");
  esc(b, s->id);
  core_buf_puts(b, "\n- Registered: ");
  esc(b, in->registered_at ? in->registered_at : "not registered");
  core_buf_printf(b,
                  "\n- Sheet SHA-256: `%s` (version %d, %zu "
                  "amendment%s)\n\n",
                  s->sha256, in->summary->sheet_version, in->n_amendments,
                  in->n_amendments == 1 ? "" : "s");
  verdicts_in_words(b, in);
  collection_status(b, in);
  setup(b, in);
  arms_and_workloads(b, s);
  rule(b, s);
  hypotheses(b, in);
  results(b, in, doc);
  published(b, in);
  deviations(b, in);
  fell(b, in);
  threats(b, in);
  provenance(b, in);
  reproduce(b, in);
}
