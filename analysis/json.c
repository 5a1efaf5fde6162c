/* json.c: `prereg analyze --json`, the machine-readable contract
 * of interface.md section 4, written with jansson.
 * SPDX-License-Identifier: MIT
 *
 * Same summary, same bytes: keys in a fixed order (JSON_PRESERVE_ORDER),
 * reals with 17 significant digits so that they read back to the same
 * double, no timestamps. NaN (a ratio or CI that does not exist) is null.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/analysis.h"

/* jansson refuses NaN and infinities; JSON has no such numbers. */
static json_t *num(double x) {
  return isfinite(x) ? json_real(x) : json_null();
}

/* Sets key to v, taking v's reference; a NULL v marks failure in *ok. */
static void put(json_t *o, const char *key, json_t *v, int *ok) {
  if (!v || json_object_set_new(o, key, v) != 0)
    *ok = 0;
}

static json_t *str(const char *s) {
  return json_string(s ? s : "");
}

static void append(json_t *a, json_t *v, int *ok) {
  if (!v || json_array_append_new(a, v) != 0)
    *ok = 0;
}

static json_t *results_json(const analysis_summary *s, int *ok) {
  json_t *a = json_array();
  if (!a) {
    *ok = 0;
    return NULL;
  }
  /* Across hosts: the entries across hosts, then each host's. */
  for (size_t i = 0; i < s->n_results + s->n_host_results; i++) {
    const analysis_result *r =
        i < s->n_results ? &s->results[i] : &s->host_results[i - s->n_results];
    json_t *o = json_object();
    if (!o) {
      *ok = 0;
      break;
    }
    put(o, "workload", str(r->workload), ok);
    put(o, "metric", str(r->metric), ok);
    put(o, "arm", str(r->arm), ok);
    put(o, "reference", str(r->reference), ok);
    put(o, "n", json_integer((json_int_t)r->n), ok);
    put(o, "n_reference", json_integer((json_int_t)r->n_reference), ok);
    put(o, "median", num(r->median), ok);
    put(o, "median_reference", num(r->median_reference), ok);
    put(o, "ratio", num(r->ratio), ok);
    put(o, "ci_low", num(r->ci_low), ok);
    put(o, "ci_high", num(r->ci_high), ok);
    put(o, "verdict", str(r->verdict), ok);
    put(o, "seed", json_integer((json_int_t)r->seed), ok);
    put(o, "rule_verdict", str(r->rule_verdict), ok);
    put(o, "metric_kind", json_string(proto_kind_word(r->kind)), ok);
    put(o, "better", json_string(r->higher_better ? "higher" : "lower"), ok);
    if (r->note)
      put(o, "note", str(r->note), ok);
    if (s->across) {
      put(o, "host", r->host ? str(r->host) : json_null(), ok);
      if (r->across) {
        put(o, "hosts_counted", json_integer((json_int_t)r->hosts_counted),
            ok);
        put(o, "host_spread", num(r->spread), ok);
        put(o, "why", str(r->why), ok);
      }
    }
    append(a, o, ok);
  }
  return a;
}

static json_t *hypotheses_json(const analysis_summary *s, int *ok) {
  json_t *a = json_array();
  if (!a) {
    *ok = 0;
    return NULL;
  }
  for (size_t i = 0; i < s->n_hypotheses + s->n_host_hypotheses; i++) {
    const analysis_hypothesis *h =
        i < s->n_hypotheses ? &s->hypotheses[i]
                            : &s->host_hypotheses[i - s->n_hypotheses];
    json_t *o = json_object();
    if (!o) {
      *ok = 0;
      break;
    }
    put(o, "id", str(h->id), ok);
    put(o, "verdict", json_string(proto_outcome_word(h->outcome)), ok);
    put(o, "says", str(h->says), ok);
    put(o, "claim", str(h->claim), ok);
    put(o, "reason", str(h->reason), ok);
    if (s->across)
      put(o, "host", h->host ? str(h->host) : json_null(), ok);
    append(a, o, ok);
  }
  return a;
}

/* How an arm's later runs compare with its earlier ones; null when too
 * few runs were there to test. */
static json_t *drift_json(const analysis_summary *s, const analysis_drift *d,
                          int *ok) {
  json_t *o;
  if (!d->tested)
    return json_null();
  if (!(o = json_object()))
    return NULL;
  put(o, "between", json_string(d->by_batch ? "batches" : "halves"), ok);
  if (d->by_batch) {
    put(o, "earlier",
        str(d->earlier < s->n_batches ? s->batches[d->earlier] : ""), ok);
    put(o, "later", str(d->later < s->n_batches ? s->batches[d->later] : ""),
        ok);
  } else {
    put(o, "earlier", json_integer((json_int_t)d->earlier), ok);
    put(o, "later", json_integer((json_int_t)d->later), ok);
  }
  put(o, "shift", num(d->shift), ok);
  put(o, "p", num(d->p), ok);
  put(o, "flagged", json_boolean(d->flagged), ok);
  return o;
}

static json_t *cells_json(const analysis_summary *s, int *ok) {
  json_t *a = json_array();
  if (!a) {
    *ok = 0;
    return NULL;
  }
  for (size_t i = 0; i < s->n_cells; i++) {
    const analysis_cell *c = &s->cells[i];
    json_t *o = json_object();
    if (!o) {
      *ok = 0;
      break;
    }
    put(o, "workload", str(c->workload), ok);
    put(o, "metric", str(c->metric), ok);
    put(o, "arm", str(c->arm), ok);
    put(o, "valid", json_integer((json_int_t)c->n_valid), ok);
    put(o, "invalid", json_integer((json_int_t)c->n_invalid), ok);
    put(o, "superseded", json_integer((json_int_t)c->n_superseded), ok);
    put(o, "planned", json_integer((json_int_t)c->n_planned), ok);
    put(o, "median", num(c->median), ok);
    put(o, "q1", num(c->q1), ok);
    put(o, "q3", num(c->q3), ok);
    put(o, "mad", num(c->mad), ok);
    put(o, "min", num(c->min), ok);
    put(o, "max", num(c->max), ok);
    put(o, "outliers", json_integer((json_int_t)c->n_outliers), ok);
    put(o, "drift", drift_json(s, &c->drift, ok), ok);
    append(a, o, ok);
  }
  return a;
}

static json_t *exclusions_json(const analysis_summary *s, int *ok) {
  json_t *a = json_array();
  if (!a) {
    *ok = 0;
    return NULL;
  }
  for (size_t i = 0; i < s->n_exclusions; i++) {
    const analysis_exclusion *e = &s->exclusions[i];
    json_t *o = json_object();
    if (!o) {
      *ok = 0;
      break;
    }
    put(o, "workload", str(e->workload), ok);
    put(o, "arm", str(e->arm), ok);
    put(o, "reason", str(e->reason), ok);
    put(o, "runs", json_integer((json_int_t)e->runs), ok);
    append(a, o, ok);
  }
  return a;
}

/* A sheet with hosts: the declared rule and each host's share. */
static json_t *hosts_json(const analysis_summary *s, int *ok) {
  json_t *o = json_object(), *a = json_array();
  if (!o || !a) {
    json_decref(o);
    json_decref(a);
    *ok = 0;
    return NULL;
  }
  put(o, "min_completed", num(s->min_completed), ok);
  put(o, "min_hosts", json_integer((json_int_t)s->min_hosts), ok);
  put(o, "same_verdict", json_boolean(s->same_verdict), ok);
  put(o, "max_spread", num(s->max_spread), ok);
  for (size_t i = 0; i < s->n_hosts; i++) {
    const analysis_host *h = &s->hosts[i];
    json_t *one = json_object();
    if (!one) {
      *ok = 0;
      break;
    }
    put(one, "host", str(h->name), ok);
    put(one, "rounds_completed", json_integer((json_int_t)h->rounds_done), ok);
    put(one, "rounds_planned", json_integer((json_int_t)h->rounds_planned),
        ok);
    put(one, "counted", json_boolean(h->counted), ok);
    append(a, one, ok);
  }
  put(o, "hosts", a, ok);
  return o;
}

static json_t *summary_json(const analysis_summary *s, int top, int *ok) {
  json_t *o = json_object(), *rule = json_object();
  if (!o || !rule) {
    json_decref(o);
    json_decref(rule);
    *ok = 0;
    return NULL;
  }
  /* The contract's keys first, in the contract's order. */
  put(o, "protocol", str(s->protocol), ok);
  put(o, "sheet_sha256", str(s->sheet_sha256), ok);
  put(rule, "estimator", str(s->estimator), ok);
  put(rule, "confidence", num(s->confidence), ok);
  put(rule, "resamples", json_integer((json_int_t)s->resamples), ok);
  put(rule, "seed", json_integer((json_int_t)s->seed), ok);
  put(o, "rule", rule, ok);
  put(o, "results", results_json(s, ok), ok);
  put(o, "hypotheses", hypotheses_json(s, ok), ok);
  /* Then ours. */
  put(o, "sheet_version", json_integer(s->sheet_version), ok);
  put(o, "reference", str(s->reference), ok);
  put(o, "cells", cells_json(s, ok), ok);
  put(o, "exclusions", exclusions_json(s, ok), ok);
  {
    json_t *band = json_array(), *batches = json_array();
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
  if (top) {
    json_t *rng = json_object();
    if (!rng) {
      *ok = 0;
    } else {
      put(rng, "generator", json_string("gsl_rng_mt19937"), ok);
      put(rng, "gsl_version", str(analysis_gsl_version()), ok);
      put(rng, "block_size", json_integer(ANALYSIS_BLOCK_SIZE), ok);
      put(rng, "layout", json_string(analysis_rng_layout), ok);
      put(o, "rng", rng, ok);
    }
    if (s->original) {
      put(o, "original_why", str(s->original_why), ok);
      put(o, "original", summary_json(s->original, 0, ok), ok);
    } else {
      put(o, "original", json_null(), ok);
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
    int exp10 = atoi(strchr(text, 'e') + 1);
    if (exp10 >= -4 && exp10 < 16) {
      int decimals = digits - 1 - exp10;
      snprintf(text, sizeof text, "%.*f", decimals > 0 ? decimals : 0, x);
      if (!strchr(text, '.'))
        strcat(text, ".0");
    }
    break;
  }
  core_buf_puts(b, text);
}

/* Copies jansson's text, writing every real (a number with '.', 'e' or
 * 'E' outside a string) in its shortest exact form. The value is the
 * same double: 17 significant digits, which jansson writes, always read
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
  json_t *root = summary_json(s, 1, &ok);
  char *text;
  if (!root || !ok) {
    json_decref(root);
    return core_fail(err, CORE_ENOMEM, "analysis JSON: out of memory");
  }
  text = json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(2) |
                              JSON_REAL_PRECISION(17));
  json_decref(root);
  if (!text)
    return core_fail(err, CORE_ENOMEM, "analysis JSON: out of memory");
  shorten_reals(text, out);
  core_buf_puts(out, "\n");
  free(text); /* jansson's allocator */
  if (out->oom)
    return core_fail(err, CORE_ENOMEM, "analysis JSON: out of memory");
  return CORE_OK;
}
