/* json.c: `prereg analyze --json`, the machine-readable contract
 * of interface.md section 4, written with data.h's JSON values.
 * SPDX-License-Identifier: MIT
 *
 * Same summary, same bytes: keys in a fixed order (the order they are
 * set in), reals with 17 significant digits so that they read back to
 * the same double, no timestamps. NaN (a ratio or CI that does not exist) is
 * null.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

/* JSON has no NaN or infinities (data_json_new_real refuses them). */
static data_json *num(double x) {
  return isfinite(x) ? data_json_new_real(x) : data_json_new_null();
}

/* Sets key to v, taking v's reference; a NULL v marks failure in *ok. */
static void put(data_json *o, const char *key, data_json *v, int *ok) {
  if (!v || data_json_set(o, key, v) != 0)
    *ok = 0;
}

static data_json *str(const char *s) {
  return data_json_new_text(s ? s : "");
}

static void append(data_json *a, data_json *v, int *ok) {
  if (!v || data_json_append(a, v) != 0)
    *ok = 0;
}

static int same_host(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

/* The entry of s for the same comparison on the same host (NULL: the
 * entry across hosts, or a sheet without hosts), or NULL. */
static const analysis_result *find_result(const analysis_summary *s,
                                          const analysis_result *like) {
  for (size_t i = 0; s && i < s->n_results + s->n_host_results; i++) {
    const analysis_result *r =
        i < s->n_results ? &s->results[i] : &s->host_results[i - s->n_results];
    if (strcmp(r->workload, like->workload) == 0 &&
        strcmp(r->metric, like->metric) == 0 &&
        strcmp(r->arm, like->arm) == 0 && same_host(r->host, like->host))
      return r;
  }
  return NULL;
}

static const analysis_hypothesis *
find_hypothesis(const analysis_summary *s, const analysis_hypothesis *like) {
  for (size_t i = 0; s && i < s->n_hypotheses + s->n_host_hypotheses; i++) {
    const analysis_hypothesis *h =
        i < s->n_hypotheses ? &s->hypotheses[i]
                            : &s->host_hypotheses[i - s->n_hypotheses];
    if (strcmp(h->id, like->id) == 0 && same_host(h->host, like->host))
      return h;
  }
  return NULL;
}

/* The same comparison at the registered sample and rule, or null. */
static data_json *registered_result(const analysis_result *r, int provisional,
                                    int *ok) {
  data_json *o;
  if (!r)
    return data_json_new_null();
  if (!(o = data_json_new_object())) {
    *ok = 0;
    return NULL;
  }
  put(o, "n", data_json_new_integer((long long)r->n), ok);
  put(o, "n_reference", data_json_new_integer((long long)r->n_reference), ok);
  put(o, "ratio", num(r->ratio), ok);
  put(o, "ci_low", num(r->ci_low), ok);
  put(o, "ci_high", num(r->ci_high), ok);
  put(o, "verdict", str(r->verdict), ok);
  put(o, "rule_verdict", str(r->rule_verdict), ok);
  put(o, "provisional", data_json_new_bool(provisional), ok);
  return o;
}

/* The published ratio a result is set beside, or NULL. */
static const analysis_replication *replication_of(const analysis_summary *s,
                                                  const analysis_result *r) {
  for (size_t i = 0; i < s->n_replication; i++)
    if (s->replication[i].result == r)
      return &s->replication[i];
  return NULL;
}

static data_json *published_json(const proto_published *p, int *ok) {
  data_json *o = data_json_new_object();
  if (!o) {
    *ok = 0;
    return NULL;
  }
  put(o, "workload", str(p->workload), ok);
  put(o, "metric", str(p->metric), ok);
  put(o, "arm", str(p->arm), ok);
  put(o, "ratio", num(p->ratio), ok);
  put(o, "ci_low", num(p->ci_low), ok);
  put(o, "ci_high", num(p->ci_high), ok);
  put(o, "verdict", p->verdict ? str(p->verdict) : data_json_new_null(), ok);
  put(o, "source", str(p->source), ok);
  return o;
}

static data_json *replication_entry(const analysis_replication *e, int *ok) {
  data_json *o = data_json_new_object();
  if (!o) {
    *ok = 0;
    return NULL;
  }
  put(o, "ratio_of_ratios", num(e->ratio_of_ratios), ok);
  put(o, "ci_low", num(e->ci_low), ok);
  put(o, "ci_high", num(e->ci_high), ok);
  put(o, "outcome", str(e->outcome), ok);
  put(o, "original_verdict",
      e->original_rule_verdict ? str(e->original_rule_verdict)
                               : data_json_new_null(),
      ok);
  if (e->why)
    put(o, "why", str(e->why), ok);
  return o;
}

/* The error as registered, on a result of a sheet with looks or a
 * family: its look and the looks, the confidence its interval is at,
 * and the family's size. */
static void error_json(const analysis_summary *s, const analysis_result *r,
                       data_json *o, int *ok) {
  if (!r->n_looks && !s->family)
    return;
  if (r->n_looks) {
    data_json *a = data_json_new_array();
    for (size_t k = 0; a && k < r->n_looks; k++)
      append(a, data_json_new_integer((long long)r->looks[k]), ok);
    put(o, "look", data_json_new_integer((long long)r->look), ok);
    put(o, "looks", a, ok);
  }
  put(o, "confidence_used", num(r->confidence_used), ok);
  put(o, "family_size", data_json_new_integer((long long)r->family_size), ok);
}

/* One comparison's entry; pair: one of the rule's pairs (its registered
 * counterpart is the registered rule's same pair). */
static data_json *result_json(const analysis_summary *s,
                              const analysis_summary *reg, int top,
                              const analysis_result *r, int pair, int *ok) {
  data_json *o = data_json_new_object();
  if (!o) {
    *ok = 0;
    return NULL;
  }
  put(o, "workload", str(r->workload), ok);
  put(o, "metric", str(r->metric), ok);
  put(o, "arm", str(r->arm), ok);
  put(o, "reference", str(r->reference), ok);
  put(o, "n", data_json_new_integer((long long)r->n), ok);
  put(o, "n_reference", data_json_new_integer((long long)r->n_reference), ok);
  put(o, "median", num(r->median), ok);
  put(o, "median_reference", num(r->median_reference), ok);
  put(o, "ratio", num(r->ratio), ok);
  put(o, "ci_low", num(r->ci_low), ok);
  put(o, "ci_high", num(r->ci_high), ok);
  put(o, "verdict", str(r->verdict), ok);
  put(o, "difference", num(r->difference), ok);
  put(o, "difference_ci_low", num(r->difference_ci_low), ok);
  put(o, "difference_ci_high", num(r->difference_ci_high), ok);
  put(o, "seed", data_json_new_integer((long long)r->seed), ok);
  put(o, "rule_verdict", str(r->rule_verdict), ok);
  put(o, "metric_kind", data_json_new_text(proto_kind_word(r->kind)), ok);
  put(o, "better", data_json_new_text(r->higher_better ? "higher" : "lower"),
      ok);
  if (r->note)
    put(o, "note", str(r->note), ok);
  error_json(s, r, o, ok);
  {
    const analysis_replication *e = replication_of(s, r);
    /* A replication's sheet (the outcome): the hand-written one's
     * published ratios are in the report only. */
    if (e && e->outcome) {
      put(o, "published", published_json(e->published, ok), ok);
      put(o, "replication", replication_entry(e, ok), ok);
    }
  }
  if (pair) {
    put(o, "pair", data_json_new_bool(1), ok);
    put(o, "exploratory", data_json_new_bool(r->exploratory), ok);
  }
  if (r->why && !r->across)
    put(o, "why", str(r->why), ok);
  if (s->across) {
    put(o, "host", r->host ? str(r->host) : data_json_new_null(), ok);
    if (r->across) {
      put(o, "hosts_counted",
          data_json_new_integer((long long)r->hosts_counted), ok);
      put(o, "host_spread", num(r->spread), ok);
      put(o, "why", str(r->why), ok);
    }
  }
  if (top) {
    const analysis_result *g = !reg   ? NULL
                               : pair ? analysis_registered_pair(s, r)
                                      : find_result(reg, r);
    put(o, "provisional", data_json_new_bool(analysis_provisional(s, r->host)),
        ok);
    put(o, "registered",
        registered_result(g, g && analysis_provisional(reg, g->host), ok), ok);
  }
  return o;
}

/* A replication's sheet: the outcomes counted, and the published
 * comparisons it does not have, each with why. */
static data_json *replication_json(const analysis_summary *s, int *ok) {
  data_json *o = data_json_new_object(), *gone = data_json_new_array();
  char line[160];
  if (!o || !gone) {
    data_json_free(o);
    data_json_free(gone);
    *ok = 0;
    return NULL;
  }
  snprintf(line, sizeof line,
           "%zu of %zu comparisons replicated, %zu did not, %zu "
           "inconclusive",
           s->n_replicated, s->n_replication, s->n_not_replicated,
           s->n_rep_inconclusive);
  put(o, "summary", data_json_new_text(line), ok);
  put(o, "comparisons", data_json_new_integer((long long)s->n_replication),
      ok);
  put(o, "replicated", data_json_new_integer((long long)s->n_replicated), ok);
  put(o, "not_replicated",
      data_json_new_integer((long long)s->n_not_replicated), ok);
  put(o, "inconclusive",
      data_json_new_integer((long long)s->n_rep_inconclusive), ok);
  for (size_t i = 0; i < s->n_replication; i++) {
    const analysis_replication *e = &s->replication[i];
    data_json *g;
    if (e->result)
      continue;
    if (!(g = data_json_new_object())) {
      *ok = 0;
      break;
    }
    put(g, "published", published_json(e->published, ok), ok);
    put(g, "replication", replication_entry(e, ok), ok);
    append(gone, g, ok);
  }
  put(o, "not_here", gone, ok);
  return o;
}

/* reg: the registered-sample analysis (the top level's only), or NULL;
 * top: whether the entries carry the fields of the top level. */
static data_json *results_json(const analysis_summary *s,
                               const analysis_summary *reg, int top, int *ok) {
  data_json *a = data_json_new_array();
  if (!a) {
    *ok = 0;
    return NULL;
  }
  /* Across hosts: the entries across hosts, then each host's; then the
   * rule's pairs. */
  for (size_t i = 0; i < s->n_results + s->n_host_results + s->n_pairs; i++) {
    const analysis_result *r =
        i < s->n_results ? &s->results[i]
        : i < s->n_results + s->n_host_results
            ? &s->host_results[i - s->n_results]
            : &s->pairs[i - s->n_results - s->n_host_results];
    int pair = i >= s->n_results + s->n_host_results;
    data_json *o = result_json(s, reg, top, r, pair, ok);
    if (!o)
      break;
    append(a, o, ok);
  }
  return a;
}

static data_json *hypotheses_json(const analysis_summary *s,
                                  const analysis_summary *reg, int top,
                                  int *ok) {
  data_json *a = data_json_new_array();
  if (!a) {
    *ok = 0;
    return NULL;
  }
  for (size_t i = 0; i < s->n_hypotheses + s->n_host_hypotheses; i++) {
    const analysis_hypothesis *h =
        i < s->n_hypotheses ? &s->hypotheses[i]
                            : &s->host_hypotheses[i - s->n_hypotheses];
    data_json *o = data_json_new_object();
    if (!o) {
      *ok = 0;
      break;
    }
    put(o, "id", str(h->id), ok);
    put(o, "verdict", data_json_new_text(proto_outcome_word(h->outcome)), ok);
    put(o, "says", str(h->says), ok);
    put(o, "claim", str(h->claim), ok);
    put(o, "reason", str(h->reason), ok);
    if (s->across)
      put(o, "host", h->host ? str(h->host) : data_json_new_null(), ok);
    if (s->hyp_outcome && i < s->n_hypotheses) {
      data_json *ro = data_json_new_object();
      if (ro) {
        put(ro, "outcome", data_json_new_text(s->hyp_outcome[i]), ok);
        put(ro, "original",
            s->hyp_original[i] ? data_json_new_text(s->hyp_original[i])
                               : data_json_new_null(),
            ok);
      }
      put(o, "replication", ro, ok);
    }
    if (top) {
      const analysis_hypothesis *rh = reg ? find_hypothesis(reg, h) : NULL;
      data_json *ro = rh ? data_json_new_object() : data_json_new_null();
      if (rh && ro) {
        put(ro, "verdict", data_json_new_text(proto_outcome_word(rh->outcome)),
            ok);
        put(ro, "provisional",
            data_json_new_bool(analysis_provisional(reg, rh->host)), ok);
      }
      put(o, "provisional",
          data_json_new_bool(analysis_provisional(s, h->host)), ok);
      put(o, "registered", ro, ok);
    }
    append(a, o, ok);
  }
  return a;
}

/* How an arm's later runs compare with its earlier ones; null when too
 * few runs were there to test. */
static data_json *drift_json(const analysis_summary *s,
                             const analysis_drift *d, int *ok) {
  data_json *o;
  if (!d->tested)
    return data_json_new_null();
  if (!(o = data_json_new_object()))
    return NULL;
  put(o, "between", data_json_new_text(d->by_batch ? "batches" : "halves"),
      ok);
  if (d->by_batch) {
    put(o, "earlier",
        str(d->earlier < s->n_batches ? s->batches[d->earlier] : ""), ok);
    put(o, "later", str(d->later < s->n_batches ? s->batches[d->later] : ""),
        ok);
  } else {
    put(o, "earlier", data_json_new_integer((long long)d->earlier), ok);
    put(o, "later", data_json_new_integer((long long)d->later), ok);
  }
  put(o, "shift", num(d->shift), ok);
  put(o, "p", num(d->p), ok);
  put(o, "flagged", data_json_new_bool(d->flagged), ok);
  return o;
}

static data_json *cells_json(const analysis_summary *s, int *ok) {
  data_json *a = data_json_new_array();
  if (!a) {
    *ok = 0;
    return NULL;
  }
  for (size_t i = 0; i < s->n_cells; i++) {
    const analysis_cell *c = &s->cells[i];
    data_json *o = data_json_new_object();
    if (!o) {
      *ok = 0;
      break;
    }
    put(o, "workload", str(c->workload), ok);
    put(o, "metric", str(c->metric), ok);
    put(o, "arm", str(c->arm), ok);
    put(o, "valid", data_json_new_integer((long long)c->n_valid), ok);
    put(o, "invalid", data_json_new_integer((long long)c->n_invalid), ok);
    put(o, "superseded", data_json_new_integer((long long)c->n_superseded),
        ok);
    put(o, "beyond", data_json_new_integer((long long)c->n_beyond), ok);
    put(o, "planned", data_json_new_integer((long long)c->n_planned), ok);
    put(o, "median", num(c->median), ok);
    put(o, "q1", num(c->q1), ok);
    put(o, "q3", num(c->q3), ok);
    put(o, "mad", num(c->mad), ok);
    put(o, "min", num(c->min), ok);
    put(o, "max", num(c->max), ok);
    put(o, "outliers", data_json_new_integer((long long)c->n_outliers), ok);
    put(o, "drift", drift_json(s, &c->drift, ok), ok);
    append(a, o, ok);
  }
  return a;
}

static data_json *exclusions_json(const analysis_summary *s, int *ok) {
  data_json *a = data_json_new_array();
  if (!a) {
    *ok = 0;
    return NULL;
  }
  for (size_t i = 0; i < s->n_exclusions; i++) {
    const analysis_exclusion *e = &s->exclusions[i];
    data_json *o = data_json_new_object();
    if (!o) {
      *ok = 0;
      break;
    }
    put(o, "workload", str(e->workload), ok);
    put(o, "arm", str(e->arm), ok);
    put(o, "reason", str(e->reason), ok);
    put(o, "runs", data_json_new_integer((long long)e->runs), ok);
    append(a, o, ok);
  }
  return a;
}

/* The status line and its parts (data/count.c). */
static data_json *status_json(const data_status *st, int *ok) {
  data_json *o = data_json_new_object(), *flags = data_json_new_array();
  const char *words[DATA_STATUS_WORDS];
  char line[256];
  size_t n = data_status_flags(st, words);
  if (!o || !flags) {
    data_json_free(o);
    data_json_free(flags);
    *ok = 0;
    return NULL;
  }
  data_status_line(st, line, sizeof line);
  for (size_t i = 0; i < n; i++)
    append(flags, data_json_new_text(words[i]), ok);
  put(o, "line", data_json_new_text(line), ok);
  put(o, "complete", data_json_new_bool(n == 0), ok);
  put(o, "flags", flags, ok);
  put(o, "collected", data_json_new_integer((long long)st->collected), ok);
  put(o, "planned", data_json_new_integer((long long)st->planned), ok);
  return o;
}

/* A comparison the registered sheet did not have (a later amendment
 * added its arm, workload or metric). */
static data_json *beyond_entry(const analysis_summary *s,
                               const analysis_result *r, int *ok) {
  data_json *c = data_json_new_object();
  if (!c)
    return NULL;
  put(c, "workload", str(r->workload), ok);
  put(c, "metric", str(r->metric), ok);
  put(c, "arm", str(r->arm), ok);
  if (s->across)
    put(c, "host", r->host ? str(r->host) : data_json_new_null(), ok);
  return c;
}

/* What the registered sample changes: why it is given and every verdict
 * and hypothesis outcome that differs from it; null when not given. */
/* The comparisons (arm against the reference) whose decision at the
 * registered sample differs, into vc, and those the registered version
 * did not have, into nr. */
static void registered_results(const analysis_summary *s, data_json *vc,
                               data_json *nr, int *ok) {
  for (size_t i = 0; i < s->n_results + s->n_host_results; i++) {
    const analysis_result *r =
        i < s->n_results ? &s->results[i] : &s->host_results[i - s->n_results];
    const analysis_result *g = find_result(s->original, r);
    data_json *c;
    if (g && analysis_same_decision(g, r))
      continue;
    if (!analysis_registered_has(s, r->workload, r->metric, r->arm)) {
      append(nr, beyond_entry(s, r, ok), ok);
      continue;
    }
    if (!(c = data_json_new_object())) {
      *ok = 0;
      return;
    }
    put(c, "workload", str(r->workload), ok);
    put(c, "metric", str(r->metric), ok);
    put(c, "arm", str(r->arm), ok);
    if (s->across)
      put(c, "host", r->host ? str(r->host) : data_json_new_null(), ok);
    put(c, "verdict", str(r->verdict), ok);
    put(c, "registered", g ? str(g->verdict) : data_json_new_null(), ok);
    append(vc, c, ok);
  }
}

/* The rule's pairs, each keyed by its reference too: one the registered
 * rule did not make is not registered (nr), one decided otherwise there
 * changed (vc). */
static void registered_pairs(const analysis_summary *s, data_json *vc,
                             data_json *nr, int *ok) {
  for (size_t i = 0; i < s->n_pairs; i++) {
    const analysis_result *r = &s->pairs[i];
    const analysis_result *g = analysis_registered_pair(s, r);
    data_json *c =
        g && analysis_same_decision(g, r) ? NULL : data_json_new_object();
    if (g && !c)
      continue;
    if (!c) {
      *ok = 0;
      return;
    }
    put(c, "workload", str(r->workload), ok);
    put(c, "metric", str(r->metric), ok);
    put(c, "arm", str(r->arm), ok);
    put(c, "reference", str(r->reference), ok);
    if (g) {
      put(c, "verdict", str(r->verdict), ok);
      put(c, "registered", str(g->verdict), ok);
    }
    append(g ? vc : nr, c, ok);
  }
}

/* The hypotheses whose outcome differs at the registered sample (hc), and
 * those the registered version did not state (nr). */
static void registered_hypotheses(const analysis_summary *s, data_json *hc,
                                  data_json *nr, int *ok) {
  for (size_t i = 0; i < s->n_hypotheses + s->n_host_hypotheses; i++) {
    const analysis_hypothesis *h =
        i < s->n_hypotheses ? &s->hypotheses[i]
                            : &s->host_hypotheses[i - s->n_hypotheses];
    const analysis_hypothesis *g = find_hypothesis(s->original, h);
    data_json *c;
    if (g && g->outcome == h->outcome)
      continue;
    if (!(c = data_json_new_object())) {
      *ok = 0;
      return;
    }
    if (!g) { /* beyond the registered plan: no outcome to change */
      put(c, "hypothesis", str(h->id), ok);
      if (s->across)
        put(c, "host", h->host ? str(h->host) : data_json_new_null(), ok);
      put(c, "outcome", data_json_new_text(proto_outcome_word(h->outcome)),
          ok);
      append(nr, c, ok);
      continue;
    }
    put(c, "id", str(h->id), ok);
    if (s->across)
      put(c, "host", h->host ? str(h->host) : data_json_new_null(), ok);
    put(c, "verdict", data_json_new_text(proto_outcome_word(h->outcome)), ok);
    put(c, "registered", data_json_new_text(proto_outcome_word(g->outcome)),
        ok);
    append(hc, c, ok);
  }
}

static data_json *registered_json(const analysis_summary *s, int *ok) {
  data_json *o, *vc, *hc, *nr;
  if (!s->original)
    return data_json_new_null();
  o = data_json_new_object();
  vc = data_json_new_array();
  hc = data_json_new_array();
  nr = data_json_new_array();
  if (!o || !vc || !hc || !nr) {
    data_json_free(o);
    data_json_free(vc);
    data_json_free(hc);
    data_json_free(nr);
    *ok = 0;
    return NULL;
  }
  registered_results(s, vc, nr, ok);
  if (*ok)
    registered_pairs(s, vc, nr, ok);
  if (*ok)
    registered_hypotheses(s, hc, nr, ok);
  put(o, "why", str(s->original_why), ok);
  put(o, "verdicts_changed", vc, ok);
  put(o, "hypotheses_changed", hc, ok);
  put(o, "not_registered", nr, ok);
  return o;
}

/* A sheet with hosts: the declared rule and each host's share. */
static data_json *hosts_json(const analysis_summary *s, int *ok) {
  data_json *o = data_json_new_object(), *a = data_json_new_array();
  if (!o || !a) {
    data_json_free(o);
    data_json_free(a);
    *ok = 0;
    return NULL;
  }
  put(o, "min_completed", num(s->min_completed), ok);
  put(o, "min_hosts", data_json_new_integer((long long)s->min_hosts), ok);
  put(o, "same_verdict", data_json_new_bool(s->same_verdict), ok);
  put(o, "max_spread", num(s->max_spread), ok);
  for (size_t i = 0; i < s->n_hosts; i++) {
    const analysis_host *h = &s->hosts[i];
    data_json *one = data_json_new_object();
    if (!one) {
      *ok = 0;
      break;
    }
    put(one, "host", str(h->name), ok);
    put(one, "rounds_completed",
        data_json_new_integer((long long)h->rounds_done), ok);
    put(one, "rounds_planned",
        data_json_new_integer((long long)h->rounds_planned), ok);
    put(one, "counted", data_json_new_bool(h->counted), ok);
    {
      char line[256];
      data_status_line(&h->status, line, sizeof line);
      put(one, "status", data_json_new_text(line), ok);
    }
    put(one, "provisional",
        data_json_new_bool(data_status_provisional(&h->status)), ok);
    append(a, one, ok);
  }
  put(o, "hosts", a, ok);
  return o;
}

/* Per version: version, sha256, stamp {time, tsa} or null, signature
 * {key} or null. */
static data_json *registration_json(const analysis_summary *s, int *ok) {
  data_json *a = data_json_new_array();
  for (size_t i = 0; a && i < s->n_registration; i++) {
    const data_registration *r = &s->registration[i];
    data_json *o = data_json_new_object(), *st = data_json_new_null(),
              *sg = data_json_new_null();
    if (r->stamped) {
      st = data_json_new_object();
      put(st, "time", str(r->stamp_time), ok);
      put(st, "tsa", str(r->tsa), ok);
    }
    if (r->key[0]) {
      sg = data_json_new_object();
      put(sg, "key", str(r->key), ok);
    }
    put(o, "version", data_json_new_integer(r->version), ok);
    put(o, "sha256", str(r->sha256), ok);
    put(o, "stamp", st, ok);
    put(o, "signature", sg, ok);
    append(a, o, ok);
  }
  if (!a)
    *ok = 0;
  return a;
}

static data_json *summary_json(const analysis_summary *s, int top, int *ok) {
  data_json *o = data_json_new_object(), *rule = data_json_new_object();
  if (!o || !rule) {
    data_json_free(o);
    data_json_free(rule);
    *ok = 0;
    return NULL;
  }
  /* The contract's keys first, in the contract's order. */
  put(o, "protocol", str(s->protocol), ok);
  put(o, "sheet_sha256", str(s->sheet_sha256), ok);
  put(rule, "estimator", str(s->estimator), ok);
  put(rule, "confidence", num(s->confidence), ok);
  put(rule, "resamples", data_json_new_integer((long long)s->resamples), ok);
  put(rule, "seed", data_json_new_integer((long long)s->seed), ok);
  put(rule, "min_n", data_json_new_integer((long long)s->min_n), ok);
  if (s->family)
    put(rule, "family", data_json_new_text(proto_family_word(s->family)), ok);
  if (s->looks)
    put(rule, "spending", data_json_new_text("bonferroni"), ok);
  put(o, "rule", rule, ok);
  put(o, "results", results_json(s, s->original, top, ok), ok);
  if (s->n_pairs)
    put(o, "pairs",
        data_json_new_text(s->pairs_exploratory ? "exploratory"
                                                : "registered"),
        ok);
  put(o, "hypotheses", hypotheses_json(s, s->original, top, ok), ok);
  /* Then ours. */
  if (top) {
    put(o, "status", status_json(&s->status, ok), ok);
    put(o, "provisional", data_json_new_bool(s->provisional), ok);
    put(o, "registered_sample", registered_json(s, ok), ok);
    if (s->registration)
      put(o, "registration", registration_json(s, ok), ok);
  }
  put(o, "sheet_version", data_json_new_integer(s->sheet_version), ok);
  put(o, "reference", str(s->reference), ok);
  put(o, "cells", cells_json(s, ok), ok);
  put(o, "exclusions", exclusions_json(s, ok), ok);
  {
    data_json *band = data_json_new_array(), *batches = data_json_new_array();
    if (band) {
      append(band, num(s->noise_low), ok);
      append(band, num(s->noise_high), ok);
    }
    for (size_t i = 0; batches && i < s->n_batches; i++)
      append(batches, str(s->batches[i]), ok);
    put(o, "noise_band", band, ok);
    put(o, "batches", batches, ok);
  }
  if (s->across)
    put(o, "across", hosts_json(s, ok), ok);
  if (s->n_replication && s->replication[0].outcome)
    put(o, "replication", replication_json(s, ok), ok);
  if (top) {
    data_json *rng = data_json_new_object();
    if (!rng) {
      *ok = 0;
    } else {
      put(rng, "generator", data_json_new_text("gsl_rng_mt19937"), ok);
      put(rng, "gsl_version", str(analysis_gsl_version()), ok);
      put(rng, "block_size", data_json_new_integer(ANALYSIS_BLOCK_SIZE), ok);
      put(rng, "layout", data_json_new_text(analysis_rng_layout), ok);
      put(o, "rng", rng, ok);
    }
    if (s->original) {
      put(o, "original_why", str(s->original_why), ok);
      put(o, "original", summary_json(s->original, 0, ok), ok);
    } else {
      put(o, "original", data_json_new_null(), ok);
    }
  }
  return o;
}

/* The shortest text that reads back as exactly x (as Python's repr and
 * JavaScript choose it), in fixed notation for decimal exponents -4..15,
 * always with a '.' or an exponent so that it stays a JSON real: 0.95
 * rather than %.17g's 0.94999999999999996. */
static void put_shortest_real(core_buf *b, double x) {
  char text[40];
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(text, sizeof text, "%.*e", digits - 1, x);
    if (strtod(text, NULL) != x)
      continue;
    /* %e always writes its exponent, a signed integer, last. */
    char *end;
    long exp10 = strtol(strchr(text, 'e') + 1, &end, 10);
    if (*end == '\0' && exp10 >= -4 && exp10 < 16) {
      int decimals = digits - 1 - (int)exp10;
      snprintf(text, sizeof text, "%.*f", decimals > 0 ? decimals : 0, x);
      size_t len = strlen(text);
      if (!strchr(text, '.'))
        snprintf(text + len, sizeof text - len, ".0");
    }
    break;
  }
  core_buf_puts(b, text);
}

/* Copies the dumped text, writing every real (a number with '.', 'e' or
 * 'E' outside a string) in its shortest exact form. The value is the
 * same double: 17 significant digits, which the dump writes, always read
 * back exactly. */
static void shorten_reals(const char *text, core_buf *out) {
  const char *p = text;
  while (*p) {
    if (*p == '"') {
      const char *q = p + 1;
      while (*q && *q != '"')
        q += (*q == '\\' && q[1]) ? 2 : 1;
      if (*q)
        q++;
      core_buf_append(out, p, (size_t)(q - p));
      p = q;
    } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
      size_t n = strspn(p, "-+0123456789.eE");
      if (memchr(p, '.', n) || memchr(p, 'e', n) || memchr(p, 'E', n))
        put_shortest_real(out, strtod(p, NULL));
      else
        core_buf_append(out, p, n);
      p += n;
    } else {
      core_buf_append(out, p++, 1);
    }
  }
}

core_status analysis_json(const struct analysis_summary *s, core_buf *out,
                          core_err *err) {
  int ok = 1;
  data_json *root = summary_json(s, 1, &ok);
  char *text;
  if (!root || !ok) {
    data_json_free(root);
    return core_fail(err, CORE_ENOMEM, "analysis JSON: out of memory");
  }
  text = data_json_dump(root, 2, 17);
  data_json_free(root);
  if (!text)
    return core_fail(err, CORE_ENOMEM, "analysis JSON: out of memory");
  shorten_reals(text, out);
  core_buf_puts(out, "\n");
  core_free(text);
  if (out->oom)
    return core_fail(err, CORE_ENOMEM, "analysis JSON: out of memory");
  return CORE_OK;
}

/* Comparing two analyses */

/* "12.5", "null", "\"slower\"": a value as the messages show it. */
static void show(core_buf *b, data_json *v) {
  if (data_json_is(v, DATA_JSON_INTEGER))
    core_buf_printf(b, "%lld", (long long)data_json_integer(v));
  else if (data_json_is(v, DATA_JSON_NUMBER))
    put_shortest_real(b, data_json_number(v));
  else if (data_json_is(v, DATA_JSON_STRING))
    core_buf_printf(b, "\"%s\"", data_json_text(v));
  else
    core_buf_puts(
        b, v ? (data_json_is(v, DATA_JSON_NULL) ? "null" : "(not a value)")
             : "(absent)");
}

/* 1 when a and b hold the same number or string (or are both null). */
static int same_value(data_json *a, data_json *b) {
  if (data_json_is(a, DATA_JSON_NUMBER) && data_json_is(b, DATA_JSON_NUMBER))
    return data_json_number(a) == data_json_number(b);
  if (data_json_is(a, DATA_JSON_STRING) && data_json_is(b, DATA_JSON_STRING))
    return strcmp(data_json_text(a), data_json_text(b)) == 0;
  return (data_json_is(a, DATA_JSON_NULL) &&
          data_json_is(b, DATA_JSON_NULL)) ||
         (!a && !b);
}

static void differ(core_buf *diffs, size_t *n, const char *what,
                   const char *key, data_json *x, data_json *y) {
  core_buf_printf(diffs, "%s: %s ", what, key);
  show(diffs, x);
  core_buf_puts(diffs, " bundled, ");
  show(diffs, y);
  core_buf_puts(diffs, " re-derived from the bundled data\n");
  (*n)++;
}

/* An entry's host: its name, or NULL (across hosts, or no hosts). */
static const char *host_key(data_json *e) {
  return data_json_text(data_json_get(e, "host"));
}

/* The entry of list whose k1 (and k2, k3 when given) are v1 (v2, v3) and
 * whose host is host (NULL: none, or null). */
static data_json *entry(data_json *list, const char *host, const char *k1,
                        const char *v1, const char *k2, const char *v2,
                        const char *k3, const char *v3) {
  size_t i;
  data_json *e;
  for (i = 0; (e = data_json_at(list, i)) != NULL; i++) {
    const char *a = data_json_text(data_json_get(e, k1));
    const char *b = k2 ? data_json_text(data_json_get(e, k2)) : NULL;
    const char *c = k3 ? data_json_text(data_json_get(e, k3)) : NULL;
    if (a && strcmp(a, v1) == 0 && (!k2 || (b && strcmp(b, v2) == 0)) &&
        (!k3 || (c && strcmp(c, v3) == 0)) && same_host(host_key(e), host))
      return e;
  }
  return NULL;
}

static int same_key(data_json *a, data_json *b, const char *k) {
  const char *x = data_json_text(data_json_get(a, k));
  const char *y = data_json_text(data_json_get(b, k));
  return x && y ? strcmp(x, y) == 0 : x == y;
}

/* The entry of list for the same comparison as e: workload, metric, arm
 * and reference (with pairs an arm has several), on the same host. */
static data_json *same_comparison(data_json *list, data_json *e) {
  size_t i;
  data_json *o;
  for (i = 0; (o = data_json_at(list, i)) != NULL; i++) {
    if (same_key(o, e, "workload") && same_key(o, e, "metric") &&
        same_key(o, e, "arm") && same_key(o, e, "reference") &&
        same_host(host_key(o), host_key(e)))
      return o;
  }
  return NULL;
}

/* "workload/metric/arm", and " on HOST" for a host's entry. */
static void entry_name(char *what, size_t cap, const char *w, const char *m,
                       const char *arm, const char *host) {
  snprintf(what, cap, "%s/%s/%s%s%s", w, m, arm, host ? " on " : "",
           host ? host : "");
}

static void compare_results(data_json *a, data_json *b, core_buf *diffs,
                            size_t *n) {
  static const char *const keys[] = {
      "n",     "n_reference", "median",  "median_reference",
      "ratio", "ci_low",      "ci_high", "verdict"};
  data_json *ra = data_json_get(a, "results"),
            *rb = data_json_get(b, "results");
  size_t i;
  data_json *e;
  for (i = 0; (e = data_json_at(ra, i)) != NULL; i++) {
    const char *w = data_json_text(data_json_get(e, "workload"));
    const char *m = data_json_text(data_json_get(e, "metric"));
    const char *arm = data_json_text(data_json_get(e, "arm"));
    char what[600];
    data_json *o;
    if (!w || !m || !arm)
      continue;
    entry_name(what, sizeof what, w, m, arm, host_key(e));
    if (!(o = same_comparison(rb, e))) {
      core_buf_printf(diffs,
                      "%s: bundled, but no such comparison in the "
                      "re-derived analysis\n",
                      what);
      (*n)++;
      continue;
    }
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
      if (!same_value(data_json_get(e, keys[k]), data_json_get(o, keys[k])))
        differ(diffs, n, what, keys[k], data_json_get(e, keys[k]),
               data_json_get(o, keys[k]));
    if (!same_value(data_json_get(data_json_get(e, "registered"), "verdict"),
                    data_json_get(data_json_get(o, "registered"), "verdict")))
      differ(diffs, n, what, "registered verdict",
             data_json_get(data_json_get(e, "registered"), "verdict"),
             data_json_get(data_json_get(o, "registered"), "verdict"));
  }
  for (i = 0; (e = data_json_at(rb, i)) != NULL; i++) {
    const char *w = data_json_text(data_json_get(e, "workload"));
    const char *m = data_json_text(data_json_get(e, "metric"));
    const char *arm = data_json_text(data_json_get(e, "arm"));
    char what[600];
    if (w && m && arm && !same_comparison(ra, e)) {
      entry_name(what, sizeof what, w, m, arm, host_key(e));
      core_buf_printf(
          diffs, "%s: re-derived, but not in the bundled analysis\n", what);
      (*n)++;
    }
  }
}

core_status analysis_json_compare(const char *a, size_t alen, const char *b,
                                  size_t blen, core_buf *diffs, size_t *n,
                                  core_err *err) {
  data_json_error je;
  data_json *ja = data_json_parse(a, alen, 0, &je), *jb, *ha, *hb, *e;
  size_t i;
  *n = 0;
  if (!ja || !data_json_is(ja, DATA_JSON_OBJECT) ||
      !data_json_is(data_json_get(ja, "results"), DATA_JSON_ARRAY)) {
    data_json_free(ja);
    return core_fail(err, CORE_EINPUT,
                     "not the JSON of prereg analyze --json (%s)",
                     ja ? "no \"results\"" : je.text);
  }
  if (!(jb = data_json_parse(b, blen, 0, &je))) {
    data_json_free(ja);
    return core_fail(err, CORE_ENOMEM, "analysis JSON: %s", je.text);
  }
  if (!same_value(data_json_get(ja, "sheet_sha256"),
                  data_json_get(jb, "sheet_sha256")))
    differ(diffs, n, "the analysis", "sheet_sha256",
           data_json_get(ja, "sheet_sha256"),
           data_json_get(jb, "sheet_sha256"));
  if (!same_value(data_json_get(data_json_get(ja, "status"), "line"),
                  data_json_get(data_json_get(jb, "status"), "line")))
    differ(diffs, n, "the analysis", "status",
           data_json_get(data_json_get(ja, "status"), "line"),
           data_json_get(data_json_get(jb, "status"), "line"));
  compare_results(ja, jb, diffs, n);
  ha = data_json_get(ja, "hypotheses");
  hb = data_json_get(jb, "hypotheses");
  for (i = 0; (e = data_json_at(ha, i)) != NULL; i++) {
    const char *id = data_json_text(data_json_get(e, "id"));
    data_json *o =
        id ? entry(hb, host_key(e), "id", id, NULL, NULL, NULL, NULL) : NULL;
    char what[300];
    if (!id)
      continue;
    snprintf(what, sizeof what, "hypothesis %s%s%s", id,
             host_key(e) ? " on " : "", host_key(e) ? host_key(e) : "");
    if (!same_value(data_json_get(e, "verdict"),
                    o ? data_json_get(o, "verdict") : NULL))
      differ(diffs, n, what, "verdict", data_json_get(e, "verdict"),
             o ? data_json_get(o, "verdict") : NULL);
  }
  data_json_free(ja);
  data_json_free(jb);
  return diffs->oom ? core_fail(err, CORE_ENOMEM, "out of memory") : CORE_OK;
}
