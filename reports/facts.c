/* facts.c: what the rows say about the setup (image digests, cache
 * states, hosts, when each arm ran, the columns with one value), gathered
 * row by row, and the helpers every page of a report shares.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

/* Counting distinct values */

static int tally_add(report_tally *t, const char *group, const char *value) {
  report_tally_entry *e;
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->v[i].group, group) == 0 &&
        strcmp(t->v[i].value, value) == 0) {
      t->v[i].count++;
      return 1;
    }
  if (t->n >= REPORT_TALLY_MAX) {
    t->other++;
    return 1;
  }
  e = &t->v[t->n];
  e->group = core_strdup(group);
  e->value = core_strdup(value);
  if (!e->group || !e->value) {
    core_free(e->group);
    core_free(e->value);
    return 0;
  }
  e->count = 1;
  t->n++;
  return 1;
}

static void tally_free(report_tally *t) {
  for (size_t i = 0; i < t->n; i++) {
    core_free(t->v[i].group);
    core_free(t->v[i].value);
  }
  memset(t, 0, sizeof *t);
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

/* When each arm ran */

/* A batch id's number ("b0012" -> 12; ids pass 9999 as "b10000"). */
static long batch_number(const char *id) {
  return id && id[0] == 'b' ? strtol(id + 1, NULL, 10) : 0;
}

/* Whether x was collected before y: by start time (UTC ISO 8601, so text
 * order is time order), then, within a second, by batch and execution
 * order. */
static int before(const report_when *x, const report_when *y) {
  int c = strcmp(x->at, y->at);
  if (c != 0)
    return c < 0;
  return x->batch < y->batch || (x->batch == y->batch && x->seq < y->seq);
}

static void note_span(report_row_facts *f, const proto_sheet *s,
                      const data_row *r) {
  long w = proto_workload_index(s, r->workload),
       a = proto_arm_index(s, r->arm);
  report_when t;
  report_span *sp;
  /* Imported rows without a start time have no known collection order
   * (a CSV may list them by arm): they cannot tell. */
  if (w < 0 || a < 0 || !r->started_at || !*r->started_at || !f->spans)
    return;
  snprintf(t.at, sizeof t.at, "%s", r->started_at);
  t.batch = batch_number(r->batch);
  t.seq = r->seq;
  sp = &f->spans[(size_t)w * f->n_arms + (size_t)a];
  if (sp->runs == 0 || before(&t, &sp->first))
    sp->first = t;
  if (sp->runs == 0 || before(&sp->last, &t))
    sp->last = t;
  sp->runs++;
}

/* The raw columns */

const char *report_raw_name(int col) {
  static const char *const names[REPORT_RAW_COLS] = {
      "sheet_version", "sheet_sha256", "batch",     "source",
      "workload",      "arm",          "round",     "seq",
      "run_id",        "started_at",   "host",      "image_digest",
      "cache_policy",  "cache_state",  "exit_code", "valid",
      "reason",        "metric",       "value",     "quick"};
  return col >= 0 && col < REPORT_RAW_COLS ? names[col] : "";
}

/* The text column col of r, or NULL for a number column. */
static const char *raw_text(const data_row *r, int col) {
  switch (col) {
  case 1:
    return r->sheet_sha256;
  case 2:
    return r->batch;
  case 3:
    return r->source;
  case 4:
    return r->workload;
  case 5:
    return r->arm;
  case 8:
    return r->run_id;
  case 9:
    return r->started_at;
  case 10:
    return r->host;
  case 11:
    return r->image_digest;
  case 12:
    return r->cache_policy;
  case 13:
    return r->cache_state;
  case 14:
    return r->exit_code;
  case 16:
    return r->reason;
  case 17:
    return r->metric;
  default:
    return NULL;
  }
}

const char *report_raw_field(const data_row *r, int col, char *buf,
                             size_t cap) {
  const char *t = raw_text(r, col);
  buf[0] = '\0';
  switch (col) {
  case 0:
    snprintf(buf, cap, "%d", r->sheet_version);
    return buf;
  case 6:
    snprintf(buf, cap, "%ld", r->round);
    return buf;
  case 7:
    snprintf(buf, cap, "%ld", r->seq);
    return buf;
  case 15:
    return r->valid ? "1" : "0";
  case 18:
    if (r->has_value)
      snprintf(buf, cap, "%.17g", r->value);
    return buf;
  case 19:
    return r->quick ? "1" : "0";
  default:
    return t ? t : "";
  }
}

/* The raw columns that are numbers in a row, by column (others: -1). */
static double raw_number(const data_row *r, int col) {
  switch (col) {
  case 0:
    return r->sheet_version;
  case 6:
    return (double)r->round;
  case 7:
    return (double)r->seq;
  case 15:
    return r->valid;
  case 18:
    return r->has_value ? r->value : NAN;
  case 19:
    return r->quick;
  default:
    return -1;
  }
}

static int raw_is_number(int col) {
  return col == 0 || col == 6 || col == 7 || col == 15 || col == 18 ||
         col == 19;
}

/* Which raw columns stay the same: the first row's values are kept (as
 * text, and the numbers as numbers), and a column stops being the same at
 * its first difference; each later row costs a comparison per column
 * still the same, never a formatting. */
static void note_raw(report_row_facts *f, const data_row *r) {
  char buf[64];
  for (int c = 0; c < REPORT_RAW_COLS; c++) {
    if (f->rows == 0) {
      f->raw_same[c] = 1;
      f->raw_num[c] = raw_number(r, c);
      if (!(f->raw_first[c] =
                core_strdup(report_raw_field(r, c, buf, sizeof buf))))
        f->oom = 1;
    } else if (!f->raw_same[c]) {
      continue;
    } else if (raw_is_number(c)) {
      double v = raw_number(r, c);
      /* NaN (no value) equals NaN here: both empty. */
      if (!(v == f->raw_num[c] || (isnan(v) && isnan(f->raw_num[c]))))
        f->raw_same[c] = 0;
    } else if (!f->raw_first[c] ||
               strcmp(report_raw_field(r, c, buf, sizeof buf),
                      f->raw_first[c]) != 0)
      f->raw_same[c] = 0;
  }
}

core_status report_facts_init(report_row_facts *f, const proto_sheet *s,
                              core_err *err) {
  memset(f, 0, sizeof *f);
  f->n_arms = s->n_arms;
  f->n_spans = s->n_workloads * s->n_arms;
  f->spans = core_calloc(f->n_spans ? f->n_spans : 1, sizeof *f->spans);
  f->cond =
      core_calloc(s->n_arms ? s->n_arms * DATA_NFACTS : 1, sizeof *f->cond);
  if (!f->spans || !f->cond) {
    core_free(f->spans);
    core_free(f->cond);
    f->spans = NULL;
    f->cond = NULL;
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  return CORE_OK;
}

/* The conditions of run r: each fact it recorded into its arm's spread,
 * and the bounds its reason says it broke. */
static void note_conditions(report_row_facts *f, const proto_sheet *s,
                            const data_row *r) {
  long a = proto_arm_index(s, r->arm);
  size_t pl = strlen(DATA_CONDITIONS);
  if (r->has_fact)
    f->cond_runs++;
  for (int k = 0; a >= 0 && f->cond && k < DATA_NFACTS; k++) {
    report_cond_spread *c = &f->cond[(size_t)a * DATA_NFACTS + (size_t)k];
    double v = r->fact[k];
    if (!(r->has_fact & (1u << k)))
      continue;
    if (c->n == 0 || v < c->min)
      c->min = v;
    if (c->n == 0 || v > c->max)
      c->max = v;
    c->sum += v;
    c->n++;
  }
  if (r->valid || !r->reason || strncmp(r->reason, DATA_CONDITIONS, pl) != 0)
    return;
  /* "...: load 3.2 above the registered 1.0, swap_in 4 above ...; ..." */
  const char *end = strchr(r->reason + pl, ';');
  size_t len = end ? (size_t)(end - r->reason) : strlen(r->reason);
  char why[512];
  snprintf(why, sizeof why, "%.*s", (int)(len < 511 ? len : 511), r->reason);
  f->excluded_load += strstr(why, ": load ") || strstr(why, ", load ");
  f->excluded_swap_in += strstr(why, "swap_in ") != NULL;
  f->excluded_throttle += strstr(why, "throttle ") != NULL;
}

void report_facts_add(report_row_facts *f, const proto_sheet *s,
                      const data_row *r) {
  note_raw(f, r);
  f->rows++;
  if (!row_is_run(s, r))
    return;
  f->runs++;
  note_conditions(f, s, r);
  if (r->quick)
    f->quick_runs++;
  if (r->reason && strstr(r->reason, "left running: "))
    f->leaked_runs++;
  if (r->image_digest && *r->image_digest &&
      !tally_add(&f->digests, r->arm, r->image_digest))
    f->oom = 1;
  if (((r->cache_state && *r->cache_state) ||
       (r->cache_policy && *r->cache_policy)) &&
      !tally_add(&f->caches, r->workload, cache_class(r)))
    f->oom = 1;
  note_cached(f, r->cache_state);
  if (r->host && *r->host && !tally_add(&f->hosts, "", r->host))
    f->oom = 1;
  if (r->started_at && *r->started_at && strcmp(r->started_at, f->newest) > 0)
    snprintf(f->newest, sizeof f->newest, "%s", r->started_at);
  note_span(f, s, r);
}

void report_facts_free(report_row_facts *f) {
  tally_free(&f->digests);
  tally_free(&f->caches);
  tally_free(&f->hosts);
  core_free(f->spans);
  core_free(f->cond);
  for (int c = 0; c < REPORT_RAW_COLS; c++)
    core_free(f->raw_first[c]);
  memset(f, 0, sizeof *f);
}

const report_row_facts *report_facts_of(const report_input *in,
                                        report_row_facts *local, int *used) {
  core_err err = {0};
  *used = 0;
  if (in->facts)
    return in->facts;
  if (report_facts_init(local, in->sheet, &err) != CORE_OK)
    return NULL;
  *used = 1;
  for (size_t i = 0; in->rows && i < in->rows->n; i++)
    report_facts_add(local, in->sheet, &in->rows->rows[i]);
  return local->oom ? NULL : local;
}

core_status report_each_row(const report_input *in, data_row_fn fn, void *ctx,
                            core_err *err) {
  if (in->rows) {
    for (size_t i = 0; i < in->rows->n; i++) {
      core_status st = fn(ctx, &in->rows->rows[i], err);
      if (st != CORE_OK)
        return st;
    }
    return CORE_OK;
  }
  return in->exp ? data_scan_rows(in->exp, fn, ctx, err) : CORE_OK;
}

/* Helpers of every page */

void report_sig(char *out, size_t cap, double x, int digits) {
  if (isfinite(x))
    core_fmt_sig(out, cap, x, digits);
  else
    snprintf(out, cap, "n/a");
}

const char *report_row_unit(const report_input *in, const char *w,
                            const char *m, double *factor) {
  const analysis_summary *a = in->summary;
  double top = NAN;
  for (size_t i = 0; i < a->n_cells; i++) {
    const analysis_cell *c = &a->cells[i];
    if (c->n_valid && strcmp(c->workload, w) == 0 &&
        strcmp(c->metric, m) == 0 && (isnan(top) || c->median > top))
      top = c->median;
  }
  return core_scale_unit(proto_metric_unit_of(in->sheet, m), top, factor);
}

const analysis_result *report_find_result(const analysis_summary *a,
                                          const char *w, const char *m,
                                          const char *arm) {
  for (size_t i = 0; a && i < a->n_results; i++)
    if (strcmp(a->results[i].workload, w) == 0 &&
        strcmp(a->results[i].metric, m) == 0 &&
        strcmp(a->results[i].arm, arm) == 0)
      return &a->results[i];
  return NULL;
}

const analysis_cell *report_find_cell(const analysis_summary *a, const char *w,
                                      const char *m, const char *arm) {
  for (size_t i = 0; a && i < a->n_cells; i++)
    if (strcmp(a->cells[i].workload, w) == 0 &&
        strcmp(a->cells[i].metric, m) == 0 &&
        strcmp(a->cells[i].arm, arm) == 0)
      return &a->cells[i];
  return NULL;
}

data_status report_status(const report_input *in) {
  data_status st = in->summary->status;
  st.unverified |= in->unverified != NULL;
  return st;
}

const char *report_short_reason(const char *reason, char *buf, size_t cap) {
  static const char sup[] = "superseded by amendment ";
  const char *colon;
  if (reason && strncmp(reason, sup, sizeof sup - 1) == 0 &&
      (colon = strchr(reason, ':')) != NULL) {
    snprintf(buf, cap, "%.*s", (int)(colon - reason), reason);
    return buf;
  }
  return reason ? reason : "";
}

double report_text_width(const char *text, double size) {
  double em = 0;
  for (const unsigned char *p = (const unsigned char *)text; p && *p; p++) {
    if ((*p & 0xC0) == 0x80)
      continue; /* a continuation byte: counted with its lead */
    if (*p >= 0x80)
      em += 0.9; /* ×, –, µ, ·: none wider than this */
    else if (strchr("iljtfI.,:;'!|()[] ", *p))
      em += 0.42;
    else if (strchr("mwMW%@", *p))
      em += 1.0;
    else if (*p >= 'A' && *p <= 'Z')
      em += 0.8;
    else
      em += 0.66;
  }
  return em * size;
}

void report_md_esc(core_buf *b, const char *s) {
  if (!s || !*s)
    core_buf_puts(b, "–");
  else
    core_buf_md_escape(b, s);
}

void report_md_lines(core_buf *b, const char *text, const char *prefix) {
  for (const char *p = text; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    char *line = core_strndup(p, len);
    if (!line) {
      b->oom = 1; /* the caller checks b->oom: one check for all */
      break;
    }
    if (len) {
      core_buf_puts(b, prefix);
      report_md_esc(b, line);
      core_buf_puts(b, "\n");
    }
    core_free(line);
    p += len + (nl ? 1 : 0);
  }
}

void report_code_span(core_buf *b, const char *text) {
  size_t run = 0, max = 0, n;
  int pad;
  for (const char *p = text; *p; p++) {
    run = *p == '`' ? run + 1 : 0;
    if (run > max)
      max = run;
  }
  n = strlen(text);
  pad = n && (text[0] == '`' || text[n - 1] == '`');
  for (size_t i = 0; i <= max; i++)
    core_buf_puts(b, "`");
  core_buf_puts(b, pad ? " " : "");
  for (const char *p = text; *p; p++)
    core_buf_append(b, *p == '\n' ? " " : p, 1);
  core_buf_puts(b, pad ? " " : "");
  for (size_t i = 0; i <= max; i++)
    core_buf_puts(b, "`");
}
