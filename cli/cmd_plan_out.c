/* cmd_plan_out.c: the `prereg plan` command and what it prints: a table
 * per comparison (the probability of each verdict per size), the
 * recommended runs per workload, or the same as JSON (--json).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_internal.h"
#include "cli/plan_internal.h"
#include "data/data.h"
#include "protocols/proto.h"

/* Text */

static void row(core_buf *b, const char *label, const double *p, size_t n,
                size_t stride) {
  core_buf_printf(b, "  %-20s", label);
  for (size_t s = 0; s < n; s++)
    if (isnan(p[s * stride]))
      core_buf_printf(b, " %7s", "-");
    else
      core_buf_printf(b, " %6.1f%%", 100.0 * p[s * stride]);
  core_buf_puts(b, "\n");
}

static void text_result(core_buf *b, const analysis_plan *p,
                        const analysis_plan_result *r) {
  core_buf_printf(
      b,
      "\n%s / %s / %s%s%s: pilot ratio %.4g, interval [%.4g, "
      "%.4g] (%zu and %zu values)\n",
      r->workload, r->metric, r->arm, r->reference ? " against " : "",
      r->reference ? r->reference : "", r->pilot_ratio, r->pilot_ci_low,
      r->pilot_ci_high, r->pilot_n_ref, r->pilot_n_cand);
  if (r->secondary)
    core_buf_puts(b, "  (secondary: no hypothesis tests it; its power is "
                     "reported, the size is not chosen for it)\n");
  core_buf_printf(b, "  %-20s", "runs per arm");
  for (size_t s = 0; s < p->n_sizes; s++)
    core_buf_printf(b, " %7zu", p->sizes[s]);
  core_buf_puts(b, p->n_looks ? "   looks\n" : "\n");
  row(b, "decided", r->p_decided, p->n_cols, 1);
  row(b, "  +- (sim. error)", r->p_decided_se, p->n_cols, 1);
  if (r->p_decided_family)
    row(b, "decided in family", r->p_decided_family, p->n_cols, 1);
  for (size_t o = 0; o < p->n_outcomes; o++)
    row(b, p->outcomes[o], r->p_verdicts + o, p->n_cols, p->n_outcomes);
  row(b, "power, truths", r->power, p->n_cols, 1);
  row(b, "  +- (sim. error)", r->power_se, p->n_cols, 1);
  char label[64];
  snprintf(label, sizeof label, "power in %.0f%%", 100.0 * p->assurance);
  row(b, label, r->power_low, p->n_cols, 1);
  row(b, "false (no difference)", r->p_false, p->n_cols, 1);
  row(b, "  +- (sim. error)", r->p_false_se, p->n_cols, 1);
  if (p->n_looks) {
    core_buf_printf(b, "  %-20s", "expected runs");
    for (size_t s = 0; s < p->n_cols; s++)
      core_buf_printf(b, " %7.1f", r->expected_runs[s]);
    core_buf_puts(b, "\n");
  }
}

/* The sequential design's line: its looks and their confidence. */
static void text_looks(core_buf *b, const analysis_plan *p) {
  if (!p->n_looks)
    return;
  core_buf_puts(b, "\"looks\": the sequential design with looks at ");
  for (size_t k = 0; k < p->n_looks; k++)
    core_buf_printf(b, "%s%zu", k ? ", " : "", p->looks[k]);
  core_buf_printf(b,
                  " runs per arm, each look's interval at confidence %.6g "
                  "(the error shared equally among the looks), stopping at "
                  "the first look that decides; \"expected runs\": the "
                  "mean runs per arm it takes\n",
                  p->look_confidence);
}

/* One workload's choice: its runs, the power its sized comparisons
 * reach there and the others' beside it. */
static void text_pick(core_buf *b, const analysis_plan *p,
                      const plan_choice *c, size_t i) {
  const plan_pick *k = &c->w[i];
  if (k->runs <= 0 && k->sequential) {
    core_buf_printf(b,
                    "  %s: none: the looks reach %.1f%% for its weakest "
                    "comparison, under the power\n",
                    k->workload, 100.0 * k->achieved);
    return;
  }
  if (k->runs <= 0) {
    core_buf_printf(b, "  %s: none of %zu..%zu: %s\n", k->workload,
                    p->sizes[0], p->sizes[p->n_sizes - 1], p->picks[i].why);
    return;
  }
  core_buf_printf(b, "  %s: %ld%s", k->workload, k->runs,
                  c->given ? " (given by --runs)" : "");
  if (k->sequential)
    core_buf_puts(b, " with the looks");
  core_buf_printf(b,
                  ": its %zu sized comparison%s decide%s there with "
                  "probability %s%.1f%%",
                  k->n_sized, k->n_sized == 1 ? "" : "s",
                  k->n_sized == 1 ? "s" : "",
                  k->n_sized == 1 ? "" : "at least ", 100.0 * k->achieved);
  if (k->n_other == 1)
    core_buf_printf(b, "; the other %.1f%%", 100.0 * k->other_lo);
  else if (k->n_other)
    core_buf_printf(b, "; the %zu others %.1f%% to %.1f%%", k->n_other,
                    100.0 * k->other_lo, 100.0 * k->other_hi);
  core_buf_puts(b, "\n");
}

static void text_choice(core_buf *b, const analysis_plan *p,
                        const plan_choice *c) {
  core_buf_printf(b, "\n%s runs per arm, sized for %s:\n",
                  c->given ? "given" : "recommended",
                  c->for_hypotheses
                      ? "the comparisons the hypotheses test (a workload "
                        "they do not test: all of its comparisons)"
                      : "every comparison (the sheet has no hypotheses)");
  for (size_t i = 0; i < c->n; i++)
    text_pick(b, p, c, i);
}

static void text_plan(core_buf *b, const proto_sheet *s,
                      const analysis_plan *p, const plan_choice *c,
                      const plan_values *pv, const char *digest, long fewest) {
  core_buf_printf(b,
                  "plan for %s from the %s %s (at least %ld values per "
                  "cell; sha256 %.12s)\n",
                  s->id, pv->kind, pv->path, fewest, digest);
  core_buf_printf(
      b,
      "%ld simulated experiments per comparison and size, power %.0f%% "
      "at an assurance of %.0f%%, the sheet's rule (confidence %g, min_n "
      "%ld); the verdicts and \"decided\": drawn from the pilot's values as "
      "if they were the truth; \"power, truths\": the mean over %zu "
      "plausible truths (the pilot resampled per arm, smoothed); \"power in "
      "%.0f%%\": the power that %.0f%% of them reach, what the "
      "recommendation reads; \"false\": both arms drawn from the "
      "reference's values smoothed, a verdict with a direction; \"+-\": "
      "one standard error of the simulation\n",
      p->sims, 100.0 * p->power, 100.0 * p->assurance, s->rule.confidence,
      s->rule.min_n, p->truths, 100.0 * p->assurance, 100.0 * p->assurance);
  text_looks(b, p);
  if (s->rule.family != PROTO_FAMILY_NONE)
    core_buf_printf(b,
                    "\"decided in family\": every arm of the workload drawn "
                    "from its own values in one experiment, each comparison "
                    "at the error the family's correction (%s) gives it; "
                    "the size is chosen by it\n",
                    proto_family_word(s->rule.family));
  for (size_t i = 0; i < p->n_results; i++)
    text_result(b, p, &p->results[i]);
  for (size_t f = 0; f < p->n_families; f++) {
    char label[64];
    snprintf(label, sizeof label, "family of %zu (%s)", p->family_size[f],
             proto_family_word(s->rule.family));
    core_buf_printf(b,
                    "\n%s: a false verdict with a direction anywhere in its "
                    "family, every arm drawn from the reference's values\n",
                    p->family_workloads[f]);
    row(b, label, p->p_false_family + f * p->n_cols, p->n_cols, 1);
  }
  text_choice(b, p, c);
}

/* JSON */

static void json_str(core_buf *b, const char *s) {
  core_buf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      core_buf_printf(b, "\\%c", *p);
    else if (*p < 0x20)
      core_buf_printf(b, "\\u%04x", *p);
    else
      core_buf_printf(b, "%c", *p);
  }
  core_buf_puts(b, "\"");
}

static void json_reals(core_buf *b, const double *p, size_t n, size_t stride) {
  core_buf_puts(b, "[");
  for (size_t s = 0; s < n; s++)
    if (isnan(p[s * stride]))
      core_buf_printf(b, "%snull", s ? ", " : "");
    else
      core_buf_printf(b, "%s%.10g", s ? ", " : "", p[s * stride]);
  core_buf_puts(b, "]");
}

static void json_outcomes(core_buf *b, const analysis_plan *p,
                          const double *v) {
  core_buf_puts(b, "{");
  for (size_t o = 0; o < p->n_outcomes; o++) {
    core_buf_puts(b, o ? ", " : "");
    json_str(b, p->outcomes[o]);
    core_buf_puts(b, ": ");
    json_reals(b, v + o, p->n_cols, p->n_outcomes);
  }
  core_buf_puts(b, "}");
}

/* A comparison's plan; ref names the sheet's reference (a pair names its
 * own). */
static void json_result(core_buf *b, const analysis_plan *p,
                        const analysis_plan_result *r, const char *ref) {
  core_buf_puts(b, "    {\"workload\": ");
  json_str(b, r->workload);
  core_buf_puts(b, ", \"metric\": ");
  json_str(b, r->metric);
  core_buf_puts(b, ", \"arm\": ");
  json_str(b, r->arm);
  core_buf_puts(b, ", \"reference\": ");
  json_str(b, r->reference ? r->reference : ref);
  core_buf_printf(b, ", \"sized\": %s", r->secondary ? "false" : "true");
  core_buf_puts(b, ",\n     \"sizes\": [");
  for (size_t s = 0; s < p->n_sizes; s++)
    core_buf_printf(b, "%s%zu", s ? ", " : "", p->sizes[s]);
  core_buf_puts(b, "],\n     \"p_decided\": ");
  json_reals(b, r->p_decided, p->n_cols, 1);
  core_buf_puts(b, ", \"p_decided_se\": ");
  json_reals(b, r->p_decided_se, p->n_cols, 1);
  core_buf_puts(b, ",\n     \"power\": ");
  json_reals(b, r->power, p->n_cols, 1);
  core_buf_puts(b, ", \"power_se\": ");
  json_reals(b, r->power_se, p->n_cols, 1);
  core_buf_puts(b, ", \"power_low\": ");
  json_reals(b, r->power_low, p->n_cols, 1);
  core_buf_puts(b, ", \"p_decided_family\": ");
  if (r->p_decided_family)
    json_reals(b, r->p_decided_family, p->n_cols, 1);
  else
    core_buf_puts(b, "null");
  core_buf_puts(b, ",\n     \"expected_runs\": ");
  json_reals(b, r->expected_runs, p->n_cols, 1);
  core_buf_puts(b, ",\n     \"p_verdicts\": ");
  json_outcomes(b, p, r->p_verdicts);
  core_buf_puts(b, ",\n     \"p_false\": ");
  json_reals(b, r->p_false, p->n_cols, 1);
  core_buf_puts(b, ", \"p_false_se\": ");
  json_reals(b, r->p_false_se, p->n_cols, 1);
  core_buf_puts(b, ", \"p_false_up\": ");
  json_reals(b, r->p_false_up, p->n_cols, 1);
  core_buf_puts(b, ", \"p_false_down\": ");
  json_reals(b, r->p_false_down, p->n_cols, 1);
  core_buf_puts(b, ",\n     \"p_verdicts_no_difference\": ");
  json_outcomes(b, p, r->p_null);
  core_buf_printf(b,
                  ",\n     \"pilot_n_reference\": %zu, \"pilot_n\": %zu, "
                  "\"pilot_ratio\": %.17g, \"pilot_ci\": [%.17g, %.17g]}",
                  r->pilot_n_ref, r->pilot_n_cand, r->pilot_ratio,
                  r->pilot_ci_low, r->pilot_ci_high);
}

/* The largest false directional rate of a family at column col. */
static double worst_family(const analysis_plan *p, size_t col) {
  double m = 0;
  for (size_t f = 0; f < p->n_families; f++)
    if (p->p_false_family[f * p->n_cols + col] > m)
      m = p->p_false_family[f * p->n_cols + col];
  return m;
}

static void json_families(core_buf *b, const analysis_plan *p) {
  core_buf_puts(b, "  \"p_false_family\": [");
  for (size_t s = 0; s < p->n_cols; s++)
    core_buf_printf(b, "%s%.10g", s ? ", " : "", worst_family(p, s));
  core_buf_puts(b, "],\n  \"families\": [");
  for (size_t f = 0; f < p->n_families; f++) {
    core_buf_puts(b, f ? ", " : "");
    core_buf_puts(b, "{\"workload\": ");
    json_str(b, p->family_workloads[f]);
    core_buf_printf(
        b, ", \"size\": %zu, \"p_false_family\": ", p->family_size[f]);
    json_reals(b, p->p_false_family + f * p->n_cols, p->n_cols, 1);
    core_buf_puts(b, "}");
  }
  core_buf_puts(b, "],\n");
}

/* The choice: per workload its runs (or null) and the power there. */
static void json_choice(core_buf *b, const plan_choice *c) {
  core_buf_printf(b, "  \"sized_for\": \"%s\", \"runs\": ",
                  c->for_hypotheses ? "hypotheses" : "all");
  if (c->given)
    core_buf_printf(b, "%ld", c->given);
  else
    core_buf_puts(b, "null");
  for (int pass = 0; pass < 3; pass++) {
    static const char *const key[] = {"recommended", "achieved",
                                      "others_p_decided"};
    core_buf_printf(b, ",\n  \"%s\": {", key[pass]);
    for (size_t i = 0; i < c->n; i++) {
      const plan_pick *k = &c->w[i];
      core_buf_puts(b, i ? ", " : "");
      json_str(b, k->workload);
      if (k->runs <= 0 && pass < 2)
        core_buf_puts(b, ": null");
      else if (pass == 0)
        core_buf_printf(b, ": %ld", k->runs);
      else if (pass == 1)
        core_buf_printf(b, ": %.10g", k->achieved);
      else if (k->n_other)
        core_buf_printf(b, ": [%.10g, %.10g]", k->other_lo, k->other_hi);
      else
        core_buf_puts(b, ": null");
    }
    core_buf_puts(b, "}");
  }
  core_buf_puts(b, ",\n");
}

static void json_plan(core_buf *b, const proto_sheet *s,
                      const analysis_plan *p, const plan_choice *c,
                      const plan_values *pv, const char *digest, long fewest) {
  core_buf_puts(b, "{\n  \"protocol\": ");
  json_str(b, s->id);
  core_buf_puts(b, ",\n  \"pilot\": {\"path\": ");
  json_str(b, pv->path);
  core_buf_printf(b,
                  ", \"kind\": \"%s\", \"sha256\": \"%s\", \"runs\": %ld},\n"
                  "  \"power\": %.10g, \"assurance\": %.10g, \"truths\": %zu, "
                  "\"sims\": %ld, \"seed\": %lu,\n",
                  pv->kind, digest, fewest, p->power, p->assurance, p->truths,
                  p->sims, s->rule.seed);
  core_buf_puts(b, "  \"looks\": [");
  for (size_t k = 0; k < p->n_looks; k++)
    core_buf_printf(b, "%s%zu", k ? ", " : "", p->looks[k]);
  core_buf_printf(b, "], \"look_confidence\": %.10g,\n  \"comparisons\": [\n",
                  p->look_confidence);
  for (size_t i = 0; i < p->n_results; i++) {
    json_result(b, p, &p->results[i], s->arms[s->reference].name);
    core_buf_puts(b, i + 1 < p->n_results ? ",\n" : "\n");
  }
  core_buf_puts(b, "  ],\n");
  json_families(b, p);
  json_choice(b, c);
  core_buf_puts(b, "  \"why\": {");
  for (size_t i = 0, k = 0; i < p->n_picks; i++) {
    if (!p->picks[i].why)
      continue;
    core_buf_puts(b, k++ ? ", " : "");
    json_str(b, p->picks[i].workload);
    core_buf_puts(b, ": ");
    json_str(b, p->picks[i].why);
  }
  core_buf_puts(b, "}\n}\n");
}

/* The command */

static core_status plan_print(const cli_opts *opts, const proto_sheet *s,
                              const analysis_plan *p, const plan_choice *c,
                              const plan_values *pv, const char *digest,
                              long fewest, FILE *out, core_err *err) {
  core_buf b;
  core_status st = CORE_OK;
  core_buf_init(&b);
  if (opts->json)
    json_plan(&b, s, p, c, pv, digest, fewest);
  else
    text_plan(&b, s, p, c, pv, digest, fewest);
  if (b.oom)
    st = core_fail(err, CORE_ENOMEM, "plan: out of memory");
  else if (b.len && fwrite(b.data, 1, b.len, out) != b.len)
    st = core_fail(err, CORE_EIO, "plan: cannot write the output");
  core_buf_free(&b);
  return st;
}

static int plan_threads(void) {
  const char *v = getenv("PREREG_THREADS");
  char *end;
  long n = v && *v ? strtol(v, &end, 10) : 0;
  return v && *v && !*end && n >= 1 && n <= 256 ? (int)n : 0;
}

core_status cli_cmd_plan(const cli_opts *opts, FILE *out, core_err *err) {
  plan_args a;
  plan_choice c;
  plan_values pv;
  proto_sheet *s = NULL;
  analysis_plan_cell *cells = NULL;
  analysis_plan *p = NULL;
  size_t n = 0;
  char digest[CORE_SHA256_HEX];
  long fewest = 0;
  core_status st;
  memset(&pv, 0, sizeof pv);
  memset(&c, 0, sizeof c);
  if ((st = cli_plan_args(opts, &a, err)) != CORE_OK)
    return st;
  if (!(s = proto_sheet_load(opts->args[0], err)))
    return err->status != CORE_OK ? err->status : CORE_EPROTOCOL;
  if ((st = cli_plan_looks(s, &a, err)) == CORE_OK &&
      (st = cli_plan_values(opts->pilot, s, &pv, err)) == CORE_OK &&
      (st = cli_plan_cells(s, &pv, &cells, &n, err)) == CORE_OK &&
      (st = cli_plan_digest(cells, n, digest, &fewest, err)) == CORE_OK) {
    cli_plan_mark(s, cells, n);
    st = analysis_plan_run(s, cells, n, a.sizes, a.n_sizes, a.looks, a.n_looks,
                           a.sims, a.power, a.assurance, plan_threads(), &p,
                           err);
  }
  if (st == CORE_OK && (st = cli_plan_choose(s, &a, p, &c, err)) == CORE_OK)
    st = plan_print(opts, s, p, &c, &pv, digest, fewest, out, err);
  if (st == CORE_OK && opts->write)
    st = cli_plan_write(opts, s, p, &c, &pv, digest, fewest,
                        opts->json ? stderr : out, err);
  cli_plan_choice_free(&c);
  analysis_plan_free(p);
  core_free(cells);
  cli_plan_values_free(&pv);
  proto_sheet_free(s);
  return st;
}
