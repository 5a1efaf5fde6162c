/* summary.c: a sheet in words: the summary `prereg check` prints, the
 * rule as one sentence for reports, and the starter sheet of `new`.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "protocols/proto_internal.h"

/* Pieces */

static void verdict_words(const proto_verdict_rule *v, core_buf *out) {
  proto_bounds_words(&v->ratio, 0, "", out);
  proto_bounds_words(&v->diff, 1, proto_bounds_any(&v->ratio) ? " and " : "",
                     out);
}

static void claim_words(const proto_sheet *s, const proto_hypothesis *h,
                        core_buf *out) {
  const char *ref = h->against ? h->against : s->arms[s->reference].name;
  if (h->kind == PROTO_CLAIM_FUNCTION) {
    core_buf_puts(out, "a function of all results (decides held, not held "
                       "or inconclusive itself)");
    if (h->workload)
      core_buf_printf(out, "; about %s%s%s", h->workload, h->metric ? " " : "",
                      h->metric ? h->metric : "");
    return;
  }
  core_buf_printf(out, "%s %s, ", h->workload, h->metric);
  for (size_t i = 0; i < h->n_arms; i++)
    core_buf_printf(out, "%s%s",
                    i ? (i + 1 == h->n_arms ? " and " : ", ") : "",
                    h->arms[i]);
  core_buf_printf(out, " vs %s: ", ref);
  switch (h->kind) {
  case PROTO_CLAIM_AT_LEAST:
    core_buf_printf(out,
                    "at_least(%g): held if the CI's low end is >= %g, "
                    "not held if its high end is < %g",
                    h->x, h->x, h->x);
    break;
  case PROTO_CLAIM_BELOW:
    core_buf_printf(out,
                    "below(%g): held if the CI's high end is < %g, "
                    "not held if its low end is >= %g",
                    h->x, h->x, h->x);
    break;
  case PROTO_CLAIM_DIFF_AT_LEAST:
    core_buf_printf(out,
                    "diff_at_least(%g): held if the difference's CI low end "
                    "is >= %g, not held if its high end is < %g",
                    h->x, h->x, h->x);
    break;
  case PROTO_CLAIM_DIFF_BELOW:
    core_buf_printf(out,
                    "diff_below(%g): held if the difference's CI high end "
                    "is < %g, not held if its low end is >= %g",
                    h->x, h->x, h->x);
    break;
  default:
    core_buf_printf(out,
                    "verdict_is(\"%s\"): held if the verdict is "
                    "\"%s\"",
                    h->verdict, h->verdict);
    break;
  }
  core_buf_puts(out, h->n_arms > 1 ? ", for each arm; else inconclusive"
                                   : "; else inconclusive");
}

static int runs_anything(const proto_workload *w) {
  return proto_workload_runs_itself(w);
}

static size_t wider(size_t wd, const char *name) {
  size_t n = strlen(name);
  return n > wd ? n : wd;
}

/* Whether some workload measures a metric of kind k. */
static int kind_used(const proto_sheet *s, proto_metric_kind k) {
  for (size_t w = 0; w < s->n_workloads; w++)
    for (size_t m = 0; m < s->workloads[w].n_metrics; m++)
      if (proto_metric_kind_of(s, s->workloads[w].metrics[m]) == k)
        return 1;
  return 0;
}

const char *proto_family_word(int family) {
  return family == PROTO_FAMILY_HOLM         ? "holm"
         : family == PROTO_FAMILY_BONFERRONI ? "bonferroni"
                                             : "none";
}

double proto_look_confidence(const proto_sheet *s, const proto_workload *w) {
  double c = s->rule.confidence;
  return w->n_looks ? 1.0 - (1.0 - c) / (double)w->n_looks : c;
}

/* Whether some workload has looks. */
static int any_looks(const proto_sheet *s) {
  for (size_t w = 0; w < s->n_workloads; w++)
    if (s->workloads[w].n_looks)
      return 1;
  return 0;
}

/* The error spent over looks and comparisons, in words (empty for a
 * fixed design without a correction). */
static void correction_words(const proto_sheet *s, core_buf *out) {
  const proto_rule *r = &s->rule;
  if (any_looks(s))
    core_buf_puts(out, " Early stopping: a workload with looks is analysed "
                       "after each; it stops when every comparison is "
                       "decided, and each look's interval is at confidence "
                       "1 - (1 - confidence) / K for its K looks (spending = "
                       "\"bonferroni\").");
  if (r->family == PROTO_FAMILY_HOLM)
    core_buf_puts(out, " Many comparisons: Holm's step-down over each "
                       "workload's comparisons (family = \"holm\").");
  else if (r->family == PROTO_FAMILY_BONFERRONI)
    core_buf_puts(out, " Many comparisons: each of a workload's m "
                       "comparisons at 1 - alpha / m (family = "
                       "\"bonferroni\").");
}

double proto_widest_coverage(long n) {
  double choose = 1; /* C(2n, n), built as C(n + k, k) for k = 1..n */
  for (long k = 1; k <= n; k++)
    choose = choose * (double)(n + k) / (double)k;
  return 1.0 - 2.0 / choose;
}

long proto_level_min_n(double confidence) {
  /* A hair over the half, so that 2 / C(6, 3) = 0.1 meets 80% exactly. */
  double allowed = (1.0 - confidence) / 2.0 * (1.0 + 1e-9);
  long n = 1;
  /* C(2n, n) grows as 4^n: any confidence below 1 ends by n = 540,
   * where C(2n, n) leaves the doubles; the bound only stops a loop on a
   * confidence of 1, which no rule has. */
  while (n < 1000 && 1.0 - proto_widest_coverage(n) > allowed)
    n++;
  return n;
}

/* A verdict's conditions on the ratio, or diff set on the difference,
 * every bound at full precision, under the sheet's keys. */
static void bounds_text(const proto_bounds *b, int diff, core_buf *out) {
  const char *ci = diff ? "diff_" : "", *side = diff ? "diff_" : "ratio_";
  core_buf_printf(out,
                  "%sci_excludes %d %.17g %sabove %d %.17g %sbelow %d %.17g "
                  "%sci_within %d %.17g %.17g",
                  ci, b->has_ci_excludes, b->ci_excludes, side, b->has_above,
                  b->above, side, b->has_below, b->below, ci, b->has_ci_within,
                  b->ci_within[0], b->ci_within[1]);
}

/* One verdict of the rule, every bound at full precision. */
static void verdict_text(const proto_verdict_rule *v, core_buf *out) {
  core_buf_printf(out, "verdict %s: ", v->name);
  bounds_text(&v->ratio, 0, out);
  core_buf_puts(out, " ");
  bounds_text(&v->diff, 1, out);
  core_buf_puts(out, "\n");
}

/* What a hypothesis tests, for proto_plan_rule_sha256. */
static void hypothesis_text(const proto_hypothesis *h, core_buf *out) {
  core_buf_printf(out, "hypothesis %s: %s %s against %s kind %d x %.17g %s",
                  h->id, h->workload ? h->workload : "",
                  h->metric ? h->metric : "", h->against ? h->against : "",
                  (int)h->kind, h->x, h->verdict ? h->verdict : "");
  for (size_t i = 0; i < h->n_arms; i++)
    core_buf_printf(out, " %s", h->arms[i]);
  core_buf_puts(out, "\n");
}

int proto_plan_rule_sha256(const proto_sheet *s, char out[CORE_SHA256_HEX]) {
  const proto_rule *r = &s->rule;
  core_buf t;
  core_buf_init(&t);
  core_buf_printf(&t,
                  "estimator %s confidence %.17g resamples %ld seed %lu "
                  "min_n %ld pairs %d spending %d family %d\n",
                  r->estimator, r->confidence, r->resamples, r->seed, r->min_n,
                  r->pairs, r->spending, r->family);
  for (size_t i = 0; i < r->n_verdicts; i++)
    verdict_text(&r->verdicts[i], &t);
  for (size_t a = 0; a < s->n_arms; a++)
    core_buf_printf(&t, "arm %s%s\n", s->arms[a].name,
                    a == s->reference ? " reference" : "");
  for (size_t w = 0; w < s->n_workloads; w++) {
    core_buf_printf(&t, "workload %s:", s->workloads[w].name);
    for (size_t m = 0; m < s->workloads[w].n_metrics; m++)
      core_buf_printf(&t, " %s", s->workloads[w].metrics[m]);
    core_buf_puts(&t, "\n");
  }
  for (size_t i = 0; i < s->n_hypotheses; i++)
    hypothesis_text(&s->hypotheses[i], &t);
  if (t.oom) {
    core_buf_free(&t);
    return -1;
  }
  core_sha256_hex(t.data ? t.data : "", t.len, out);
  core_buf_free(&t);
  return 0;
}

int proto_plan_rule_changed(const proto_sheet *s, char now[CORE_SHA256_HEX]) {
  const proto_plan *p = &s->plan;
  if (!p->declared || !p->rule_sha256 || proto_plan_rule_sha256(s, now) != 0)
    return 0;
  return strcmp(p->rule_sha256, now) != 0;
}

/* The fewest values per arm at each of n looks, and their confidence:
 * the level of a look's share of the error. */
static long look_need(const proto_rule *r, size_t n, double *confidence) {
  double k = n > 0 ? (double)n : 1.0;
  *confidence = 1.0 - (1.0 - r->confidence) / k;
  return proto_effective_min_n(r, *confidence);
}

long proto_looks_short(const proto_rule *r, const long *looks, size_t n,
                       long *need) {
  double c;
  *need = look_need(r, n, &c);
  for (size_t j = 0; j < n; j++)
    if (looks[j] < *need)
      return (long)j;
  return -1;
}

void proto_look_short_words(const proto_rule *r, long look, size_t n,
                            core_buf *out) {
  double c;
  long need = look_need(r, n, &c);
  core_buf_printf(out,
                  "%ld runs per arm is below the %ld an interval at this "
                  "look's %.4g%% (its share of the error over %zu looks) "
                  "needs: no comparison could be decided there",
                  look, need, c * 100, n);
}

int proto_looks_below_level(const proto_sheet *s, core_buf *why) {
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *wl = &s->workloads[i];
    long need, j = proto_looks_short(&s->rule, wl->looks, wl->n_looks, &need);
    if (j < 0)
      continue;
    core_buf_printf(why, "%s: workloads[%zu].looks[%ld]: ", s->path, i + 1,
                    j + 1);
    proto_look_short_words(&s->rule, wl->looks[j], wl->n_looks, why);
    core_buf_printf(why, "; make every look at least %ld, or drop this one",
                    need);
    return 1;
  }
  return 0;
}

long proto_median_min_n(double confidence) {
  long n = 1;
  double miss = 1.0; /* 2 / 2^n */
  /* Any confidence below 1 is reached long before n = 1000. */
  while (n < 1000 && 1.0 - miss < confidence * (1 - 1e-12)) {
    n++;
    miss /= 2;
  }
  return n;
}

long proto_effective_min_n(const proto_rule *r, double confidence) {
  long level = proto_level_min_n(confidence);
  return r->min_n > level ? r->min_n : level;
}

long proto_quick_rounds(const proto_sheet *s, const proto_workload *w) {
  double c = s->rule.confidence;
  size_t m = w->n_metrics * proto_comparisons_per_metric(s);
  long n;
  if (s->rule.family != PROTO_FAMILY_NONE && m > 1)
    c = 1.0 - (1.0 - c) / (double)m;
  n = proto_effective_min_n(&s->rule, c);
  if (n < 3)
    n = 3;
  return n < w->runs ? n : w->runs;
}

size_t proto_comparisons_per_metric(const proto_sheet *s) {
  size_t k = s->n_arms ? s->n_arms - 1 : 0;
  return k + (s->rule.pairs && k > 1 ? k * (k - 1) / 2 : 0);
}

void proto_rule_words(const proto_sheet *s, core_buf *out) {
  const proto_rule *r = &s->rule;
  core_buf_printf(out,
                  "%s per arm and its ratio to the reference arm %s, with "
                  "a %g%% percentile bootstrap confidence interval (%ld "
                  "resamples, seed %lu); the verdict is that of the first "
                  "matching rule: ",
                  r->estimator, s->arms[s->reference].name,
                  r->confidence * 100, r->resamples, r->seed);
  if (r->pairs)
    core_buf_puts(out, "(and, pairs = \"all\", the ratio of every pair of "
                       "the other arms, each later one in the sheet to each "
                       "earlier one, decided alike) ");
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const proto_verdict_rule *v = &r->verdicts[i];
    int shown = 0;
    core_buf_puts(out, v->name);
    /* What it reads on metrics that are not times, where that differs. */
    for (int k = PROTO_KIND_MEMORY; k < PROTO_N_KINDS; k++) {
      const char *word = proto_verdict_word_on(s, v, (proto_metric_kind)k);
      if (strcmp(word, v->name) != 0 && kind_used(s, (proto_metric_kind)k))
        core_buf_printf(out, "%s%s on %s", shown++ ? ", " : " (", word,
                        proto_kind_word((proto_metric_kind)k));
    }
    core_buf_puts(out, shown ? ") if " : " if ");
    verdict_words(v, out);
    core_buf_puts(out, "; ");
  }
  core_buf_puts(out, "otherwise inconclusive.");
  /* The default is said nowhere, so that a sheet that does not set it
   * reads as before; one that does sees it. */
  if (r->min_n == 1)
    core_buf_puts(out, " One value per arm is enough for a verdict.");
  else if (r->min_n != PROTO_MIN_N_DEFAULT)
    core_buf_printf(out,
                    " An arm with fewer than %ld values (or a reference "
                    "with fewer) has insufficient data, and no verdict.",
                    r->min_n);
  correction_words(s, out);
}

/* The hosts block: where the plan runs, when a host counts, the
 * cross-host rule. */
static void hosts_words(const proto_sheet *s, core_buf *out) {
  const proto_hosts *h = &s->hosts;
  core_buf_printf(out, "\nHosts      %s: ", h->backend);
  if (h->n_nodes) {
    for (size_t i = 0; i < h->n_nodes; i++)
      core_buf_printf(out, "%s%s", i ? ", " : "", h->nodes[i]);
  } else {
    core_buf_printf(out,
                    "%ld node%s the scheduler picks (named by the "
                    "first allocation)",
                    h->count, h->count == 1 ? "" : "s");
  }
  if (h->partition)
    core_buf_printf(out, "; partition %s", h->partition);
  if (h->constraint)
    core_buf_printf(out, "; constraint %s", h->constraint);
  core_buf_puts(out, "\n           every host runs the whole plan; a round "
                     "never spans hosts\n");
  core_buf_printf(out,
                  "           a host counts with at least %g%% of its "
                  "rounds completed; a cross-host estimate needs %ld "
                  "counted hosts\n",
                  h->min_completed * 100, h->min_hosts);
  core_buf_printf(out,
                  "           carries over when %sthe largest host ratio "
                  "is at most %g x the smallest\n",
                  h->same_verdict ? "every counted host gives the same "
                                    "verdict and "
                                  : "",
                  h->max_spread);
}

/* The summary's first lines: the sheet, its vars and its image. */
static void summary_head(const proto_sheet *s, core_buf *out) {
  core_buf_printf(out, "Sheet      %s\n", s->path);
  core_buf_printf(out, "Title      %s\n", s->title);
  core_buf_printf(out, "ID         %s\n", s->id);
  if (s->question)
    core_buf_printf(out, "Question   %s\n", s->question);
  if (s->author)
    core_buf_printf(out, "Author     %s\n", s->author);
  core_buf_printf(out, "SHA-256    %s\n", s->sha256);

  if (s->n_vars) {
    core_buf_puts(out, "\nVars\n");
    for (size_t i = 0; i < s->n_vars; i++)
      core_buf_printf(out, "  {%s} = %s\n", s->vars[i].name, s->vars[i].value);
  }
  if (s->image.tree)
    core_buf_printf(out, "\nImage      digest of the tree %s\n",
                    s->image.tree);
  else if (s->image.digest_cmd)
    core_buf_printf(out, "\nImage      digest printed by: %s\n",
                    s->image.digest_cmd);
}

/* The summary's arms, in report order. */
static void summary_arms(const proto_sheet *s, core_buf *out) {
  size_t na = s->n_arms, wd;
  core_buf_printf(out, "\nArms (%zu, in report order)\n", na);
  wd = 0;
  for (size_t i = 0; i < na; i++)
    wd = wider(wd, s->arms[i].name);
  for (size_t i = 0; i < na; i++) {
    const proto_arm *a = &s->arms[i];
    core_buf_printf(out, "  %-*s  %-9s  %s\n", (int)wd, a->name,
                    a->reference ? "reference"
                    : a->null    ? "A/A"
                                 : "",
                    a->run);
    if (a->cpus)
      core_buf_printf(out, "  %-*s  pinned to CPUs %s\n", (int)wd + 11, "",
                      a->cpus);
    for (size_t k = 0; k < a->n_requires; k++)
      core_buf_printf(out, "  %-*s  requires: %s\n", (int)wd + 11, "",
                      a->requires[k]);
    for (size_t k = 0; k < a->n_versions; k++)
      core_buf_printf(out, "  %-*s  version: %s\n", (int)wd + 11, "",
                      a->versions[k]);
    if (a->image.tree)
      core_buf_printf(out, "  %-*s  image: tree %s\n", (int)wd + 11, "",
                      a->image.tree);
    else if (a->image.digest_cmd)
      core_buf_printf(out, "  %-*s  image: digest printed by %s\n",
                      (int)wd + 11, "", a->image.digest_cmd);
  }
}

/* The lines under a workload's first: its metrics, commands and what
 * counts, indented past names wd wide. */
static void workload_details(const proto_workload *w, int wd, core_buf *out) {
  const char *pss = proto_measure_name(PROTO_MEASURE_PSS);
  core_buf_printf(out, "  %-*s  metrics: ", wd, "");
  for (size_t k = 0; k < w->n_metrics; k++)
    core_buf_printf(out, "%s%s", k ? ", " : "", w->metrics[k]);
  if (proto_workload_has_metric(w, pss) && runs_anything(w))
    core_buf_printf(out, " (%s sampled %gs after start)", pss,
                    w->sample_after_s);
  core_buf_puts(out, "\n");
  if (w->source == PROTO_SOURCE_BOTH)
    core_buf_printf(out,
                    "  %-*s  imports pooled with its runs (source = "
                    "\"both\")\n",
                    wd, "");
  if (w->cmd)
    core_buf_printf(out, "  %-*s  cmd: %s\n", wd, "", w->cmd);
  if (w->by_arms)
    core_buf_printf(out, "  %-*s  runs each arm's own command\n", wd, "");
  for (size_t k = 0; k < w->n_steps; k++)
    core_buf_printf(out, "  %-*s  step %zu: %s\n", wd, "", k + 1, w->steps[k]);
  if (w->prepare)
    core_buf_printf(out, "  %-*s  prepare: %s\n", wd, "", w->prepare);
  if (w->cleanup)
    core_buf_printf(out, "  %-*s  cleanup: %s\n", wd, "", w->cleanup);
  if (runs_anything(w)) {
    if (w->expect == PROTO_EXPECT_ANY)
      core_buf_printf(out, "  %-*s  any exit code counts\n", wd, "");
    else if (w->expect == PROTO_EXPECT_REFERENCE)
      core_buf_printf(out,
                      "  %-*s  exit codes must match the "
                      "reference arm's, step by step\n",
                      wd, "");
    else if (w->expect_code != 0)
      core_buf_printf(out, "  %-*s  expected exit code %d\n", wd, "",
                      w->expect_code);
    if (w->cgroup)
      core_buf_printf(out, "  %-*s  each run in its own cgroup\n", wd, "");
  }
}

/* The summary's workloads and the runs they plan. */
static void summary_workloads(const proto_sheet *s, core_buf *out) {
  size_t wd, total = 0, warm = 0, nrun = 0, nimport = 0;
  size_t na = s->n_arms;
  core_buf_printf(out, "\nWorkloads (%zu)\n", s->n_workloads);
  wd = 0;
  for (size_t i = 0; i < s->n_workloads; i++)
    wd = wider(wd, s->workloads[i].name);
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *w = &s->workloads[i];
    core_buf_printf(out, "  %-*s  ", (int)wd, w->name);
    if (runs_anything(w)) {
      nrun++;
      total += (size_t)w->runs * na;
      warm += (size_t)w->warmup * na;
      core_buf_printf(out, "%ld run%s x %zu arms", w->runs,
                      w->runs == 1 ? "" : "s", na);
      if (w->warmup)
        core_buf_printf(out, ", %ld warm-up%s per arm", w->warmup,
                        w->warmup == 1 ? "" : "s");
      core_buf_printf(
          out, "; %s, %s cache; timeout %gs\n",
          w->order == PROTO_ORDER_BLOCKED ? "blocked" : "interleaved",
          w->cache == PROTO_CACHE_COLD ? "cold" : "warm", w->timeout_s);
    } else {
      nimport++;
      if (w->runs)
        core_buf_printf(out, "import only (%ld runs per arm planned)\n",
                        w->runs);
      else
        core_buf_puts(out, "import only\n");
    }
    workload_details(w, (int)wd, out);
    for (size_t k = 0; k < w->n_looks; k++)
      core_buf_printf(out,
                      "  %-*s  look %zu of %zu after %ld runs per arm, "
                      "at %.6g%% confidence\n",
                      (int)wd, "", k + 1, w->n_looks, w->looks[k],
                      proto_look_confidence(s, w) * 100);
  }
  core_buf_printf(out, "\nPlanned    %zu runs", total);
  if (warm)
    core_buf_printf(out, " and %zu warm-ups", warm);
  core_buf_printf(out, " (%zu workload%s x %zu arms)", nrun,
                  nrun == 1 ? "" : "s", na);
  if (nimport)
    core_buf_printf(out, "; %zu workload%s by import only", nimport,
                    nimport == 1 ? "" : "s");
  core_buf_puts(out, "\n");
}

/* The summary's rule and its verdicts. */
static void summary_rule(const proto_sheet *s, core_buf *out) {
  size_t wd;
  core_buf_printf(out,
                  "\nRule       %s per arm and its ratio to %s, %g%% "
                  "percentile bootstrap CI (%ld resamples, seed %lu)\n",
                  s->rule.estimator, s->arms[s->reference].name,
                  s->rule.confidence * 100, s->rule.resamples, s->rule.seed);
  if (s->rule.pairs)
    core_buf_puts(out, "Pairs      all: each later arm against each earlier "
                       "one, under the same rule\n");
  if (any_looks(s))
    core_buf_puts(out, "Spending   bonferroni: each of K looks at 1 - (1 - "
                       "confidence) / K\n");
  if (s->rule.family != PROTO_FAMILY_NONE)
    core_buf_printf(out,
                    "Family     %s: over each workload's comparisons "
                    "(every metric%s)\n",
                    proto_family_word(s->rule.family),
                    s->rule.pairs ? ", pairs included" : "");
  if (s->rule.min_n > 1)
    core_buf_printf(out,
                    "Verdicts (first match wins; no match: inconclusive; "
                    "fewer than %ld values in an arm: insufficient data)\n",
                    s->rule.min_n);
  else
    core_buf_puts(out, "Verdicts (first match wins; no match: inconclusive; "
                       "one value per arm is enough)\n");
  wd = 0;
  for (size_t i = 0; i < s->rule.n_verdicts; i++)
    wd = wider(wd, s->rule.verdicts[i].name);
  for (size_t i = 0; i < s->rule.n_verdicts; i++) {
    core_buf_printf(out, "  %-*s  ", (int)wd, s->rule.verdicts[i].name);
    verdict_words(&s->rule.verdicts[i], out);
    core_buf_puts(out, "\n");
  }
}

void proto_summary(const proto_sheet *s, core_buf *out) {
  summary_head(s, out);
  summary_arms(s, out);
  summary_workloads(s, out);
  summary_rule(s, out);
  core_buf_printf(out, "\nHypotheses (%zu)\n", s->n_hypotheses);
  for (size_t i = 0; i < s->n_hypotheses; i++) {
    const proto_hypothesis *h = &s->hypotheses[i];
    core_buf_printf(out, "  %s  %s\n", h->id, h->says);
    core_buf_printf(out, "  %-*s  ", (int)strlen(h->id), "");
    claim_words(s, h, out);
    core_buf_puts(out, "\n");
  }

  if (s->hosts.declared)
    hosts_words(s, out);

  core_buf_printf(out, "\nThreats (%zu)\n", s->n_threats);
  for (size_t i = 0; i < s->n_threats; i++)
    core_buf_printf(out, "  - %s\n", s->threats[i]);

  core_buf_printf(out, "\nAmendments (%zu)\n", s->n_amendments);
  for (size_t i = 0; i < s->n_amendments; i++) {
    const proto_amendment *a = &s->amendments[i];
    core_buf_printf(out, "  %zu. %s  %s\n", i + 1, a->date, a->why);
    if (a->n_supersedes) {
      core_buf_puts(out, "     supersedes the earlier rows of: ");
      for (size_t k = 0; k < a->n_supersedes; k++)
        core_buf_printf(out, "%s%s", k ? ", " : "", a->supersedes[k]);
      core_buf_puts(out, "\n");
    }
  }

  if (s->n_published)
    core_buf_printf(out, "\nPublished ratios to compare with (%zu)\n",
                    s->n_published);
  for (size_t i = 0; i < s->n_published; i++) {
    const proto_published *p = &s->published[i];
    core_buf_printf(out, "  - %s %s %s: %.4gx%s%s (%s)\n", p->workload,
                    p->metric, p->arm, p->ratio, p->verdict ? ", " : "",
                    p->verdict ? p->verdict : "", p->source);
  }
}

void proto_starter_rule(core_buf *out) {
  core_buf_puts(
      out,
      "  -- How you will decide, fixed before the first run.\n"
      "  rule = {\n"
      "    estimator = \"median\", confidence = 0.95, resamples = 10000,\n"
      "    seed = 1,\n"
      "    -- Many comparisons: Holm's step-down keeps the chance of any\n"
      "    -- false verdict among a workload's comparisons at 1 - "
      "confidence.\n"
      "    family = \"holm\",\n"
      "    verdicts = {  -- first match wins; no match: \"inconclusive\"\n"
      "      -- the tie band meets the thresholds: every ratio measured\n"
      "      -- closely enough gets a verdict (check warns of a gap)\n"
      "      { \"slower\", ci_excludes = 1, ratio_above = 1.05 },\n"
      "      { \"faster\", ci_excludes = 1, ratio_below = 1 / 1.05 },\n"
      "      { \"tie\",    ci_within = { 0.95, 1.05 } },\n"
      "    },\n"
      "  },\n");
}

/* Adds text's words to a "  --" comment written up to column *col,
 * starting a line where a word would pass column 72. */
static void comment_words(core_buf *out, size_t *col, const char *text) {
  for (const char *p = text; *p; p += strspn(p, " ")) {
    size_t len = strcspn(p, " ");
    if (*col && *col + 1 + len > 72) {
      core_buf_puts(out, "\n");
      *col = 0;
    }
    if (!*col) {
      core_buf_puts(out, "  --");
      *col = 4;
    }
    core_buf_printf(out, " %.*s", (int)len, p);
    *col += 1 + len;
    p += len;
  }
}

/* The starter's comment on what to measure: the built-in metrics, then
 * the others. */
static void starter_metrics(core_buf *out) {
  size_t n, col = 0;
  const proto_builtin_metric *b = proto_builtin_metrics(&n);
  comment_words(out, &col, "What to measure. Metrics:");
  for (size_t i = 0; i < n; i++) {
    char word[80];
    snprintf(word, sizeof word, "%s%s", b[i].name, i + 1 < n ? "" : ",");
    comment_words(out, &col, word);
  }
  comment_words(out, &col,
                "or a name the command writes itself as name=value lines "
                "to the file $PREREG_METRICS.");
  core_buf_puts(out, "\n");
}

/* The starter sheet after its header: an example of every part. */
static void starter_body(core_buf *out) {
  core_buf_puts(
      out,
      "  -- {name} in any command is replaced by vars.name; built in:\n"
      "  -- {cmd} {arm} {workload} {round} {run_id}. {{ is a literal {.\n"
      "  vars = { bin = \"/bin\" },\n"
      "\n"
      "  -- The arms to compare, in report order. Exactly one is the\n"
      "  -- reference; `run` wraps each workload's command ({cmd}), or is\n"
      "  -- a whole command of its own (no {cmd}, as hyperfine compares\n"
      "  -- commands: then the workloads have no cmd). `requires`: commands\n"
      "  -- that must succeed before any run; `versions`: commands whose\n"
      "  -- output (the tools' versions) each batch records and the report\n"
      "  -- shows.\n"
      "  arms = {\n"
      "    { name = \"bare\", reference = true, run = \"{cmd}\",\n"
      "      versions = { \"uname -sr\" } },\n"
      "    { name = \"nice\", run = \"nice -n 10 {cmd}\",\n"
      "      requires = { \"nice --version\" },\n"
      "      versions = { \"nice --version | head -n 1\" } },\n"
      "  },\n"
      "\n");
  starter_metrics(out);
  core_buf_puts(out,
                "  -- A workload without cmd or steps takes data by `prereg "
                "import`.\n"
                "  workloads = {\n"
                "    { name = \"startup\", runs = 30, warmup = 1, "
                "cmd = \"{bin}/true\",\n"
                "      metrics = { \"wall_s\", \"maxrss_kib\" } },\n"
                "  },\n"
                "\n");
  proto_starter_rule(out);
  core_buf_puts(
      out,
      "\n"
      "  -- What you expect. Claims: at_least(x), below(x) on the ratio's\n"
      "  -- CI, diff_below(x), diff_at_least(x) on the difference's (in the\n"
      "  -- metric's unit), verdict_is(\"name\"), or a function(results,\n"
      "  -- pairs); against = \"ARM\" compares with an arm besides the\n"
      "  -- reference.\n"
      "  hypotheses = {\n"
      "    { id = \"H1\", says = \"nice costs less than 1.5x bare to "
      "start true\",\n"
      "      workload = \"startup\", metric = \"wall_s\", "
      "arms = { \"nice\" },\n"
      "      claim = below(1.5) },\n"
      "  },\n"
      "\n"
      "  threats = {\n"
      "    \"One machine: the ratios may carry over, the absolute times do "
      "not.\",\n"
      "  },\n"
      "\n"
      "  -- Append only, one at a time, each recorded by `prereg amend`:\n"
      "  -- { date = \"YYYY-MM-DD\", why = \"what changed and why\" },\n"
      "  amendments = {},\n"
      "}\n");
}

void proto_starter(const char *id, core_buf *out) {
  core_buf_printf(
      out,
      "-- %s.lua: a prereg protocol sheet (Lua 5.4, run in a sandbox).\n"
      "--\n"
      "-- Write it before any data exists: what you will measure, what you\n"
      "-- expect and how you will decide. Then:\n"
      "--   prereg check protocols/%s.lua      validate and summarise\n"
      "--   prereg register protocols/%s.lua   freeze it\n"
      "-- After that, change it only by appending to `amendments` and\n"
      "-- running `prereg amend`.\n"
      "protocol {\n"
      "  id       = \"%s\",  -- [a-z0-9][a-z0-9-]*: names the data folder\n"
      "  title    = \"What does running a command under nice cost?\",\n"
      "  question = \"Does nice -n 10 slow down starting a short "
      "command?\",\n"
      "  author   = \"Your Name\",\n"
      "\n",
      id, id, id, id);
  starter_body(out);
}
