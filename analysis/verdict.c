/* verdict.c: a comparison's verdict under the rule (the conditions on
 * the ratio and on the difference, the interval's judgement, the
 * minimum sample) and the words that say why; a claim's outcome.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_internal.h"

#define OOM(err) core_fail(err, CORE_ENOMEM, "analysis: out of memory")

/* Verdicts and claims */

/* Whether conditions b hold (all of them; 1 when it has none) on x (the
 * ratio or the difference) and its CI [lo, hi]. Boundaries as documented
 * in proto.h: strict for excludes, above and below; inclusive for
 * within. */
static int bounds_hold(const proto_bounds *b, double x, double lo, double hi) {
  if (!proto_bounds_any(b))
    return 1;
  if (isnan(x) || isnan(lo) || isnan(hi))
    return 0;
  return !(b->has_ci_excludes &&
           !(lo > b->ci_excludes || hi < b->ci_excludes)) &&
         !(b->has_above && !(x > b->above)) &&
         !(b->has_below && !(x < b->below)) &&
         !(b->has_ci_within &&
           !(b->ci_within[0] <= lo && hi <= b->ci_within[1]));
}

const proto_verdict_rule *analysis_verdict_rule_d(const proto_rule *rule,
                                                  const analysis_estimate *e) {
  for (size_t i = 0; i < rule->n_verdicts; i++) {
    const proto_verdict_rule *v = &rule->verdicts[i];
    if (bounds_hold(&v->ratio, e->ratio, e->ci_low, e->ci_high) &&
        bounds_hold(&v->diff, e->difference, e->difference_ci_low,
                    e->difference_ci_high))
      return v;
  }
  return NULL;
}

const proto_verdict_rule *analysis_verdict_rule(const proto_rule *rule,
                                                double ratio, double ci_low,
                                                double ci_high) {
  analysis_estimate e = {ratio, ci_low, ci_high, NAN, NAN, NAN};
  if (isnan(ratio) || isnan(ci_low) || isnan(ci_high))
    return NULL;
  return analysis_verdict_rule_d(rule, &e);
}

analysis_estimate acc_estimate_of(const analysis_result *r) {
  analysis_estimate e = {r->ratio,
                         r->ci_low,
                         r->ci_high,
                         r->difference,
                         r->difference_ci_low,
                         r->difference_ci_high};
  return e;
}

/* A measured a and a given b (a threshold, written as the sheet may
 * have: 3, not 3.00) to 3 significant digits, as a sentence writes
 * numbers, with more digits where 3 would show two different numbers
 * alike (a CI end of 1.09932 against 1.1: "1.099 < 1.1"). */
static void sig_apart(double a, double b, char *ta, char *tb, size_t cap) {
  for (int d = 3; d <= 17; d++) {
    core_fmt_sig(ta, cap, a, d);
    snprintf(tb, cap, "%.*g", d, b);
    if (a == b)
      snprintf(ta, cap, "%s", tb); /* equal: written alike, "3 >= 3" */
    if (a == b || strtod(ta, NULL) != strtod(tb, NULL))
      return;
  }
}

const char *analysis_verdict(const proto_rule *rule, double ratio,
                             double ci_low, double ci_high) {
  const proto_verdict_rule *v =
      analysis_verdict_rule(rule, ratio, ci_low, ci_high);
  return v ? v->name : "inconclusive";
}

/* diff_below / diff_at_least: on the difference's interval, in the
 * metric's unit. */
static proto_outcome diff_outcome(const proto_hypothesis *h,
                                  const analysis_result *r, const char *arm,
                                  char **reason) {
  double l = r->difference_ci_low, u = r->difference_ci_high;
  int at_least = h->kind == PROTO_CLAIM_DIFF_AT_LEAST;
  char lo[40], hi[40], xl[40], xh[40];
  if (isnan(l) || isnan(u)) {
    *reason = core_asprintf("%s: no CI of the difference (%s)", arm,
                            r->note ? r->note : "it could not be computed");
    return PROTO_INCONCLUSIVE;
  }
  sig_apart(l, h->x, lo, xl, sizeof lo);
  sig_apart(u, h->x, hi, xh, sizeof hi);
  if (at_least ? l >= h->x : u < h->x) {
    *reason =
        at_least
            ? core_asprintf("%s: difference CI low end %s >= %s", arm, lo, xl)
            : core_asprintf("%s: difference CI high end %s < %s", arm, hi, xh);
    return PROTO_HELD;
  }
  if (at_least ? u < h->x : l >= h->x) {
    *reason =
        at_least
            ? core_asprintf("%s: difference CI high end %s < %s", arm, hi, xh)
            : core_asprintf("%s: difference CI low end %s >= %s", arm, lo, xl);
    return PROTO_NOT_HELD;
  }
  *reason =
      core_asprintf("%s: difference CI [%s, %s] contains %s", arm, lo, hi, xl);
  return PROTO_INCONCLUSIVE;
}

proto_outcome analysis_claim_outcome(const proto_hypothesis *h,
                                     const analysis_result *r,
                                     const char *workload, const char *metric,
                                     const char *arm, char **reason) {
  /* Too few values neither support nor refute a claim. */
  if (r && r->verdict && strcmp(r->verdict, ANALYSIS_INSUFFICIENT) == 0) {
    *reason = core_asprintf("%s: %s (%s)", arm, ANALYSIS_INSUFFICIENT,
                            r->note ? r->note : "too few values");
    return PROTO_INCONCLUSIVE;
  }
  if (!r) {
    *reason =
        core_asprintf("no valid data for %s/%s/%s", workload, metric, arm);
    return PROTO_INCONCLUSIVE;
  }
  /* A difference stays defined where a ratio is not (a median of 0). */
  if (h->kind == PROTO_CLAIM_DIFF_BELOW ||
      h->kind == PROTO_CLAIM_DIFF_AT_LEAST)
    return diff_outcome(h, r, arm, reason);
  if (isnan(r->ci_low) || isnan(r->ci_high)) {
    *reason = core_asprintf("%s: no CI (%s)", arm,
                            r->note ? r->note : "it could not be computed");
    return PROTO_INCONCLUSIVE;
  }
  char lo[40], hi[40], xl[40], xh[40];
  sig_apart(r->ci_low, h->x, lo, xl, sizeof lo);
  sig_apart(r->ci_high, h->x, hi, xh, sizeof hi);
  switch (h->kind) {
  case PROTO_CLAIM_AT_LEAST:
    if (r->ci_low >= h->x) {
      *reason = core_asprintf("%s: CI low end %s >= %s", arm, lo, xl);
      return PROTO_HELD;
    }
    if (r->ci_high < h->x) {
      *reason = core_asprintf("%s: CI high end %s < %s", arm, hi, xh);
      return PROTO_NOT_HELD;
    }
    *reason = core_asprintf("%s: CI [%s, %s] contains %s", arm, lo, hi, xl);
    return PROTO_INCONCLUSIVE;
  case PROTO_CLAIM_BELOW:
    if (r->ci_high < h->x) {
      *reason = core_asprintf("%s: CI high end %s < %s", arm, hi, xh);
      return PROTO_HELD;
    }
    if (r->ci_low >= h->x) {
      *reason = core_asprintf("%s: CI low end %s >= %s", arm, lo, xl);
      return PROTO_NOT_HELD;
    }
    *reason = core_asprintf("%s: CI [%s, %s] contains %s", arm, lo, hi, xl);
    return PROTO_INCONCLUSIVE;
  case PROTO_CLAIM_VERDICT_IS: {
    const char *want = h->verdict ? h->verdict : "";
    /* The rule's name or the word it reads on this metric: one
     * decision. */
    if (strcmp(r->verdict, want) == 0 ||
        (r->rule_verdict && strcmp(r->rule_verdict, want) == 0)) {
      *reason =
          core_asprintf("%s: verdict %s (ratio %.6g, CI [%.6g, %.6g])", arm,
                        r->verdict, r->ratio, r->ci_low, r->ci_high);
      return PROTO_HELD;
    }
    *reason =
        core_asprintf("%s: verdict %s, not %s (ratio %.6g, CI [%.6g, %.6g])",
                      arm, r->verdict, want, r->ratio, r->ci_low, r->ci_high);
    /* An undecided comparison neither supports nor refutes the claim. */
    return strcmp(r->verdict, "inconclusive") == 0 ? PROTO_INCONCLUSIVE
                                                   : PROTO_NOT_HELD;
  }
  case PROTO_CLAIM_FUNCTION:
  default:
    *reason = core_strdup("not a per-arm claim");
    return PROTO_INCONCLUSIVE;
  }
}

/* Sets r->note to the formatted text, unless a note is there. */
static void note(analysis_result *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Whether a note could not be kept for want of memory since judge began:
 * judge then fails, rather than let a later note stand in its place. */
static _Thread_local int note_lost;

static void note(analysis_result *r, const char *fmt, ...) {
  char text[512];
  va_list ap;
  if (r->note)
    return;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (!(r->note = core_strdup(text)))
    note_lost = 1;
}

/* Fewer values in either arm of r than the rule asks (its min_n) or than
 * an interval at confidence needs to reach its level
 * (proto_effective_min_n). */
static int too_few(const proto_rule *rule, double confidence,
                   const analysis_result *r) {
  size_t need = (size_t)proto_effective_min_n(rule, confidence);
  return r->n < need || r->n_reference < need;
}

/* The note of a comparison with too few values: the rule's min_n, or the
 * level the interval could not reach with so few. */
static void note_few(const proto_rule *rule, double confidence,
                     analysis_result *r) {
  long level = proto_level_min_n(confidence);
  size_t few = r->n < r->n_reference ? r->n : r->n_reference;
  if (rule->min_n >= level) {
    note(r,
         "%zu value%s for %s and %zu for %s; the rule needs at least %ld "
         "per arm (min_n)",
         r->n, r->n == 1 ? "" : "s", r->arm, r->n_reference, r->reference,
         rule->min_n);
    return;
  }
  note(r,
       "%zu value%s for %s and %zu for %s; a %.4g%% interval needs at least "
       "%ld per arm: with %zu the widest interval the values allow covers "
       "the true ratio in %.4g%% of experiments",
       r->n, r->n == 1 ? "" : "s", r->arm, r->n_reference, r->reference,
       confidence * 100, level, few, proto_widest_coverage((long)few) * 100);
}

/* Why r has no ratio though both medians are numbers, noted, or 0 when
 * it has one: a negative value (a ratio of signed values means nothing;
 * the difference stays), a reference median of 0, or one so small
 * beside the other that the ratio overflows. */
static int no_ratio(analysis_result *r, const double *ref,
                    const double *cand) {
  if (ref[0] < 0 || cand[0] < 0) {
    char v[40];
    core_fmt_sig(v, sizeof v, ref[0] < cand[0] ? ref[0] : cand[0], 3);
    note(r,
         "no ratio: %s has negative values (as low as %s), and a ratio of "
         "signed values means nothing; the difference and its interval "
         "stand",
         ref[0] < cand[0] ? r->reference : r->arm, v);
    return 1;
  }
  if (r->median_reference == 0.0) {
    note(r, "ratio not finite: reference median is 0");
    return 1;
  }
  if (!isfinite(r->ratio)) {
    char mr[40], m[40];
    sig_apart(r->median_reference, r->median, mr, m, sizeof mr);
    core_fmt_sig(m, sizeof m, r->median, 3);
    note(r, "ratio not finite: the reference median %s is too small beside %s",
         mr, m);
    return 1;
  }
  return 0;
}

/* The bootstrap's intervals in r, judged: a ratio interval of no width
 * (the resampled medians do not vary: no spread) or with undefined
 * resamples is said so; one that is not finite is left out. */
static void judge_interval(analysis_result *r, size_t undefined,
                           long resamples) {
  if (r->ci_low == r->ci_high) {
    note(r,
         "no CI: the resampled medians of %s and %s do not vary (no "
         "spread), and an interval of no width is no interval",
         r->arm, r->reference);
    r->ci_low = r->ci_high = NAN;
  }
  if (r->difference_ci_low == r->difference_ci_high) {
    note(r,
         "no CI of the difference: the resampled medians of %s and %s do "
         "not vary (no spread)",
         r->arm, r->reference);
    r->difference_ci_low = r->difference_ci_high = NAN;
  }
  if (!isnan(r->ci_low) && (!isfinite(r->ci_low) || !isfinite(r->ci_high))) {
    if (undefined)
      note(r,
           "CI not finite: %zu of %ld resamples have a reference median of "
           "0, so their ratio is undefined, and an end falls among them",
           undefined, resamples);
    else
      note(r, "CI not finite: a resample's ratio overflows (its reference "
              "median is too small)");
    r->ci_low = r->ci_high = NAN;
  } else if (undefined)
    note(r,
         "%zu of %ld resamples have a reference median of 0, so their "
         "ratio is undefined; the CI counts them beyond each of its ends",
         undefined, resamples);
}

/* The ratio of the medians of r (n and medians set) and its CI from the
 * sorted values ref (the reference's) and cand. Fewer values than the
 * rule's min_n or the interval's level needs in either arm: no CI (one
 * value per arm made a zero-width CI and a confident verdict). A ratio
 * that is not a number (no_ratio) is left out (NaN), never shown as inf,
 * and so is its CI; the difference's stays. */
static core_status judge(const proto_rule *rule, double confidence,
                         analysis_result *r, const double *ref,
                         const double *cand, int threads, core_err *err) {
  core_err berr = {0};
  core_status st;
  size_t undefined = 0;
  int ratio_none;
  note_lost = 0;
  r->ratio = r->median / r->median_reference;
  r->ci_low = r->ci_high = NAN;
  r->difference = r->median - r->median_reference;
  r->difference_ci_low = r->difference_ci_high = NAN;
  if ((ratio_none = no_ratio(r, ref, cand)) != 0)
    r->ratio = NAN;
  if (!isfinite(r->difference))
    r->difference = NAN; /* medians of opposite signs near the limits */
  if (too_few(rule, confidence, r)) {
    note_few(rule, confidence, r);
    return note_lost ? OOM(err) : CORE_OK;
  }
  st = analysis_bootstrap_both(
      ref, r->n_reference, cand, r->n, rule->resamples, confidence, r->seed,
      threads, &r->ci_low, &r->ci_high, &r->difference_ci_low,
      &r->difference_ci_high, NULL, &undefined, &berr);
  if (!isfinite(r->difference_ci_low) || !isfinite(r->difference_ci_high))
    r->difference_ci_low = r->difference_ci_high = NAN;
  if (st == CORE_ESTATS) {
    /* Undefined, not broken: the comparison stays, undecided. */
    note(r, "CI not finite: %s",
         strncmp(berr.msg, "bootstrap: ", 11) == 0 ? berr.msg + 11 : berr.msg);
    r->ci_low = r->ci_high = NAN;
    return note_lost ? OOM(err) : CORE_OK;
  }
  if (st != CORE_OK) {
    *err = berr;
    return st;
  }
  if (ratio_none)
    r->ci_low = r->ci_high = NAN;
  judge_interval(r, ratio_none ? 0 : undefined, rule->resamples);
  return note_lost ? OOM(err) : CORE_OK;
}

/* The first of conditions b that fails on x (r's ratio, or diff set its
 * difference) and its CI [l, u], in words ("the CI [0.97, 1.08] contains
 * 1"), into out. */
static void bounds_why(const proto_bounds *b, int diff, double x, double l,
                       double u, core_buf *out) {
  const char *ci = diff ? "the difference's CI" : "the CI";
  const char *what = diff ? "difference" : "ratio";
  char lo[40], hi[40], ra[40], xs[40];
  if (isnan(x) || isnan(l) || isnan(u)) {
    core_buf_printf(out, "no %s with a CI", what);
    return;
  }
  core_fmt_sig(lo, sizeof lo, l, 3);
  core_fmt_sig(hi, sizeof hi, u, 3);
  if (b->has_ci_excludes && !(l > b->ci_excludes || u < b->ci_excludes))
    core_buf_printf(out, "%s [%s, %s] contains %.6g", ci, lo, hi,
                    b->ci_excludes);
  else if (b->has_above && !(x > b->above)) {
    sig_apart(x, b->above, ra, xs, sizeof ra);
    core_buf_printf(out, "the %s %s is not above %s", what, ra, xs);
  } else if (b->has_below && !(x < b->below)) {
    sig_apart(x, b->below, ra, xs, sizeof ra);
    core_buf_printf(out, "the %s %s is not below %s", what, ra, xs);
  } else
    core_buf_printf(out, "%s [%s, %s] is not within [%.6g, %.6g]", ci, lo, hi,
                    b->ci_within[0], b->ci_within[1]);
}

/* Why no verdict rule matched r: for each rule in order, its first
 * condition that fails ("slower: the CI [0.97, 1.08] contains 1");
 * NULL when out of memory. */
static char *inconclusive_why(const proto_rule *rule,
                              const analysis_result *r) {
  core_buf b;
  core_buf_init(&b);
  for (size_t i = 0; i < rule->n_verdicts; i++) {
    const proto_verdict_rule *v = &rule->verdicts[i];
    core_buf_printf(&b, "%s%s: ", i ? "; " : "", v->name);
    if (!bounds_hold(&v->ratio, r->ratio, r->ci_low, r->ci_high))
      bounds_why(&v->ratio, 0, r->ratio, r->ci_low, r->ci_high, &b);
    else
      bounds_why(&v->diff, 1, r->difference, r->difference_ci_low,
                 r->difference_ci_high, &b);
  }
  if (!rule->n_verdicts)
    core_buf_puts(&b, "the rule has no verdicts");
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return core_buf_steal(&b);
}

/* Whether r, undecided, gets a why: its ratio and CI are numbers, or the
 * rule decides on the difference too and that and its CI are. */
static int has_why(const proto_rule *rule, const analysis_result *r) {
  if (!isnan(r->ratio) && !isnan(r->ci_low) && !isnan(r->ci_high))
    return 1;
  return proto_rule_on_diff(rule) && !isnan(r->difference) &&
         !isnan(r->difference_ci_low) && !isnan(r->difference_ci_high);
}

core_status acc_decide(const acc *c, analysis_result *r, size_t w, size_t m,
                       double confidence, const double *ref,
                       const double *cand, int threads, core_err *err) {
  const proto_sheet *sh = c->sheet;
  const proto_workload *wl = &sh->workloads[w];
  const proto_verdict_rule *v = NULL;
  core_status st;
  int dir, few;
  core_free(r->verdict);
  core_free(r->rule_verdict);
  core_free(r->note);
  core_free(r->why);
  r->verdict = r->rule_verdict = r->note = r->why = NULL;
  r->confidence_used = confidence;
  if ((st = judge(&sh->rule, confidence, r, ref, cand, threads, err)) !=
      CORE_OK)
    return st;
  few = too_few(&sh->rule, confidence, r);
  if (!few) {
    analysis_estimate e = acc_estimate_of(r);
    v = analysis_verdict_rule_d(&sh->rule, &e);
  }
  r->verdict = core_strdup(few ? ANALYSIS_INSUFFICIENT
                               : proto_verdict_word(sh, v, wl->metrics[m]));
  r->rule_verdict = core_strdup(few ? ANALYSIS_INSUFFICIENT
                                : v ? v->name
                                    : "inconclusive");
  dir = v ? proto_verdict_direction(v) : 0;
  r->worse = r->higher_better ? -dir : dir;
  if (!r->verdict || !r->rule_verdict)
    return OOM(err);
  if (!few && !v && has_why(&sh->rule, r) &&
      !(r->why = inconclusive_why(&sh->rule, r)))
    return OOM(err);
  return CORE_OK;
}
