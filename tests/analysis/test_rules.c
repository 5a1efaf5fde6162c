/* test_rules.c: verdicts and claims at their boundaries, the published
 * cases, and analysis_run on hand-built sheets and rows (supersession,
 * exclusions, cells, multi-arm hypotheses, the original rule, JSON).
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "harness.h"

/* The structs hold char *; the analysis never writes through them. */
#define S(lit) ((char *)(lit))

/* The published rule: slower / faster / tie. */
static proto_verdict_rule published[3];
static proto_rule rule;

static void init_rule(void) {
  memset(published, 0, sizeof published);
  published[0].name = S("slower");
  published[0].ratio.has_ci_excludes = 1;
  published[0].ratio.ci_excludes = 1;
  published[0].ratio.has_above = 1;
  published[0].ratio.above = 1.10;
  published[1].name = S("faster");
  published[1].ratio.has_ci_excludes = 1;
  published[1].ratio.ci_excludes = 1;
  published[1].ratio.has_below = 1;
  published[1].ratio.below = 1 / 1.10;
  published[2].name = S("tie");
  published[2].ratio.has_ci_within = 1;
  published[2].ratio.ci_within[0] = 0.95;
  published[2].ratio.ci_within[1] = 1.05;
  memset(&rule, 0, sizeof rule);
  rule.estimator = S("median");
  rule.confidence = 0.95;
  rule.resamples = 10000;
  rule.seed = 17;
  rule.verdicts = published;
  rule.n_verdicts = 3;
}

static void test_verdicts(void) {
  proto_rule empty = rule;
  proto_verdict_rule always = {0};
  /* The published cases, as published. */
  CHECK_STR(analysis_verdict(&rule, 1.03, 0.97, 1.03), "tie");
  CHECK_STR(analysis_verdict(&rule, 0.98, 0.72, 0.99), "inconclusive");
  CHECK_STR(analysis_verdict(&rule, 1.48, 1.12, 1.80), "slower");
  /* F2 from the research notes: excludes 1 but ratio <= 1.10. */
  CHECK_STR(analysis_verdict(&rule, 111.0 / 102, 110.0 / 105, 1.3),
            "inconclusive");
  /* ci_excludes is strict on both ends. */
  CHECK_STR(analysis_verdict(&rule, 1.2, 1.0, 1.4), "inconclusive");
  CHECK_STR(analysis_verdict(&rule, 1.2, nextafter(1.0, 2), 1.4), "slower");
  CHECK_STR(analysis_verdict(&rule, 0.5, 0.4, 1.0), "inconclusive");
  CHECK_STR(analysis_verdict(&rule, 0.5, 0.4, nextafter(1.0, 0)), "faster");
  /* ratio_above and ratio_below are strict. */
  CHECK_STR(analysis_verdict(&rule, 1.10, 1.05, 1.2), "inconclusive");
  CHECK_STR(analysis_verdict(&rule, nextafter(1.10, 2), 1.05, 1.2), "slower");
  CHECK_STR(analysis_verdict(&rule, 1 / 1.10, 0.8, 0.95), "inconclusive");
  CHECK_STR(analysis_verdict(&rule, nextafter(1 / 1.10, 0), 0.8, 0.95),
            "faster");
  /* ci_within is inclusive. */
  CHECK_STR(analysis_verdict(&rule, 1.0, 0.95, 1.05), "tie");
  CHECK_STR(analysis_verdict(&rule, 1.0, nextafter(0.95, 0), 1.05),
            "inconclusive");
  CHECK_STR(analysis_verdict(&rule, 1.0, 0.95, nextafter(1.05, 2)),
            "inconclusive");
  /* First match wins: a CI inside the band that also excludes 1 with a
   * big ratio is impossible, so build one where two rules match. */
  {
    proto_verdict_rule two[2] = {{0}, {0}};
    proto_rule r2 = rule;
    two[0].name = S("first");
    two[0].ratio.has_ci_within = 1;
    two[0].ratio.ci_within[0] = 0.5;
    two[0].ratio.ci_within[1] = 2;
    two[1].name = S("second");
    two[1].ratio.has_ci_within = 1;
    two[1].ratio.ci_within[0] = 0.9;
    two[1].ratio.ci_within[1] = 1.1;
    r2.verdicts = two;
    r2.n_verdicts = 2;
    CHECK_STR(analysis_verdict(&r2, 1, 0.95, 1.05), "first");
  }
  /* NaN anywhere, or no rules: inconclusive; a rule with no condition
   * always matches. */
  CHECK_STR(analysis_verdict(&rule, NAN, 1.2, 1.4), "inconclusive");
  CHECK_STR(analysis_verdict(&rule, 1.2, NAN, 1.4), "inconclusive");
  empty.n_verdicts = 0;
  CHECK_STR(analysis_verdict(&empty, 1.5, 1.2, 1.8), "inconclusive");
  always.name = S("anything");
  empty.verdicts = &always;
  empty.n_verdicts = 1;
  CHECK_STR(analysis_verdict(&empty, 1.5, 1.2, 1.8), "anything");
}

static proto_outcome claim(proto_claim_kind kind, double x, const char *v,
                           double lo, double hi, const char *verdict,
                           const char *want_in_reason) {
  proto_hypothesis h;
  analysis_result r;
  char *reason = NULL;
  proto_outcome o;
  memset(&h, 0, sizeof h);
  memset(&r, 0, sizeof r);
  h.kind = kind;
  h.x = x;
  h.verdict = (char *)v;
  r.ratio = (lo + hi) / 2;
  r.ci_low = lo;
  r.ci_high = hi;
  r.verdict = (char *)verdict;
  o = analysis_claim_outcome(&h, &r, "w", "m", "arm", &reason);
  CHECK(reason != NULL);
  if (reason && want_in_reason && !strstr(reason, want_in_reason)) {
    fprintf(stderr, "reason \"%s\" lacks \"%s\"\n", reason, want_in_reason);
    CHECK(0);
  }
  core_free(reason);
  return o;
}

static void test_claims(void) {
  /* at_least(x): held when ci_low >= x, not held when ci_high < x. */
  CHECK(claim(PROTO_CLAIM_AT_LEAST, 3, NULL, 3, 4, "slower", "3 >= 3") ==
        PROTO_HELD);
  CHECK(claim(PROTO_CLAIM_AT_LEAST, 3, NULL, nextafter(3, 0), 4, "slower",
              "contains 3") == PROTO_INCONCLUSIVE);
  CHECK(claim(PROTO_CLAIM_AT_LEAST, 3, NULL, 2, 3, "slower", NULL) ==
        PROTO_INCONCLUSIVE);
  CHECK(claim(PROTO_CLAIM_AT_LEAST, 3, NULL, 2, nextafter(3, 0), "slower",
              "< 3") == PROTO_NOT_HELD);
  /* below(x): held when ci_high < x, not held when ci_low >= x. */
  CHECK(claim(PROTO_CLAIM_BELOW, 1.5, NULL, 1.2, nextafter(1.5, 0), "slower",
              "< 1.5") == PROTO_HELD);
  CHECK(claim(PROTO_CLAIM_BELOW, 1.5, NULL, 1.2, 1.5, "slower", NULL) ==
        PROTO_INCONCLUSIVE);
  CHECK(claim(PROTO_CLAIM_BELOW, 1.5, NULL, 1.5, 2, "slower", ">= 1.5") ==
        PROTO_NOT_HELD);
  /* verdict_is. */
  CHECK(claim(PROTO_CLAIM_VERDICT_IS, 0, "tie", 0.97, 1.03, "tie",
              "verdict tie") == PROTO_HELD);
  CHECK(claim(PROTO_CLAIM_VERDICT_IS, 0, "tie", 1.2, 1.4, "slower",
              "not tie") == PROTO_NOT_HELD);
  CHECK(claim(PROTO_CLAIM_VERDICT_IS, 0, "tie", 0.7, 0.99, "inconclusive",
              NULL) == PROTO_INCONCLUSIVE);
  /* No data. */
  {
    proto_hypothesis h;
    char *reason = NULL;
    memset(&h, 0, sizeof h);
    h.kind = PROTO_CLAIM_AT_LEAST;
    CHECK(analysis_claim_outcome(&h, NULL, "files", "wall_s", "kata",
                                 &reason) == PROTO_INCONCLUSIVE);
    CHECK_STR(reason, "no valid data for files/wall_s/kata");
    core_free(reason);
  }
}

/* analysis_run on a hand-built sheet */

static char *metrics1[] = {S("wall_s")};
static char *sup_files[] = {S("files")};
static char *arms_kata[] = {S("kata")};
static char *arms_both[] = {S("gvisor"), S("kata")};
static char *arms_ghost[] = {S("gvisor")};

static void build_sheet(proto_sheet *s, proto_arm *arms, proto_workload *wl,
                        proto_hypothesis *hy, proto_amendment *am,
                        size_t n_am) {
  memset(s, 0, sizeof *s);
  memset(arms, 0, 3 * sizeof *arms);
  memset(wl, 0, 2 * sizeof *wl);
  memset(hy, 0, 4 * sizeof *hy);
  arms[0].name = S("runc");
  arms[0].reference = 1;
  arms[1].name = S("gvisor");
  arms[2].name = S("kata");
  wl[0].name = S("files");
  wl[0].runs = 10;
  wl[0].metrics = metrics1;
  wl[0].n_metrics = 1;
  wl[1].name = S("idle");
  wl[1].runs = 5;
  wl[1].metrics = metrics1;
  wl[1].n_metrics = 1;
  hy[0].id = S("H1");
  hy[0].says = S("kata costs at least 1.2x on files");
  hy[0].workload = S("files");
  hy[0].metric = S("wall_s");
  hy[0].arms = arms_kata;
  hy[0].n_arms = 1;
  hy[0].kind = PROTO_CLAIM_AT_LEAST;
  hy[0].x = 1.2;
  hy[1].id = S("H2");
  hy[1].says = S("both tie on files");
  hy[1].workload = S("files");
  hy[1].metric = S("wall_s");
  hy[1].arms = arms_both;
  hy[1].n_arms = 2;
  hy[1].kind = PROTO_CLAIM_VERDICT_IS;
  hy[1].verdict = S("tie");
  hy[2].id = S("H3");
  hy[2].says = S("gvisor below 2x when idle");
  hy[2].workload = S("idle");
  hy[2].metric = S("wall_s");
  hy[2].arms = arms_ghost;
  hy[2].n_arms = 1;
  hy[2].kind = PROTO_CLAIM_BELOW;
  hy[2].x = 2;
  hy[3].id = S("H4");
  hy[3].says = S("every arm at least 0.5x");
  hy[3].workload = S("files");
  hy[3].metric = S("wall_s");
  hy[3].kind = PROTO_CLAIM_AT_LEAST;
  hy[3].x = 0.5;
  s->path = S("t.lua");
  s->id = S("t");
  s->arms = arms;
  s->n_arms = 3;
  s->reference = 0;
  s->workloads = wl;
  s->n_workloads = 2;
  s->rule = rule;
  s->hypotheses = hy;
  s->n_hypotheses = 4;
  s->amendments = am;
  s->n_amendments = n_am;
  memset(s->sha256, 'a', 64);
}

static void add_row(data_rowset *rs, int version, const char *arm, long seq,
                    double value, int valid, const char *reason) {
  data_row *r;
  if (rs->n == rs->cap) {
    rs->cap = rs->cap ? 2 * rs->cap : 64;
    rs->rows = realloc(rs->rows, rs->cap * sizeof *rs->rows);
  }
  r = &rs->rows[rs->n++];
  memset(r, 0, sizeof *r);
  r->sheet_version = version;
  r->batch = version ? S("b0002") : S("b0001");
  r->source = S("run");
  r->workload = S("files");
  r->arm = (char *)arm;
  r->seq = seq;
  r->run_id = S("");
  r->valid = valid;
  r->reason = (char *)reason;
  r->metric = S("wall_s");
  r->value = value;
  r->has_value = valid;
}

static void test_run(void) {
  proto_sheet s, orig;
  proto_arm arms[3], oarms[3];
  proto_workload wl[2], owl[2];
  proto_hypothesis hy[4], ohy[4];
  proto_amendment am[1];
  data_rowset rs = {0};
  data_version versions[2];
  data_experiment exp;
  analysis_summary *sum = NULL, *sum2 = NULL;
  core_err err = {0};
  long seq = 0;
  core_buf j1, j2, t;

  memset(am, 0, sizeof am);
  am[0].date = S("2026-10-22");
  am[0].why = S("the files workload could fail silently");
  am[0].supersedes = sup_files;
  am[0].n_supersedes = 1;
  build_sheet(&s, arms, wl, hy, am, 1);
  build_sheet(&orig, oarms, owl, ohy, NULL, 0);

  /* Version 0: 6 runs per arm, later superseded (kata looked fast). */
  for (int i = 0; i < 6; i++) {
    add_row(&rs, 0, "runc", ++seq, 15.0 + 0.01 * i, 1, "");
    add_row(&rs, 0, "gvisor", ++seq, 15.0 + 0.012 * i, 1, "");
    add_row(&rs, 0, "kata", ++seq, 5 + i, 1, "");
  }
  /* Version 1: 10 runs per arm; two invalid gvisor runs; one kata run from
   * run --quick, which counts (the report flags quick data). */
  for (int i = 0; i < 10; i++) {
    add_row(&rs, 1, "runc", ++seq, 15.0 + 0.01 * i, 1, "");
    add_row(&rs, 1, "gvisor", ++seq, 15.0 + 0.012 * i, 1, "");
    add_row(&rs, 1, "kata", ++seq, 24.0 + 0.1 * i, 1, "");
  }
  add_row(&rs, 1, "gvisor", ++seq, NAN, 0, "timeout after 120 s");
  add_row(&rs, 1, "gvisor", ++seq, NAN, 0, "timeout after 120 s");
  add_row(&rs, 1, "kata", ++seq, NAN, 0, "exit code 1, expected 0");
  add_row(&rs, 1, "kata", ++seq, 1, 1, "");
  rs.rows[rs.n - 1].quick = 1;

  /* The chain: amendment 1 (version 1) supersedes files; filed before
   * any data here, so no registered-sample analysis yet. Supersession is
   * the chain's to say (never the sheet's list of amendments). */
  memset(versions, 0, sizeof versions);
  versions[0].number = 0;
  versions[0].path = S("versions/v0.lua");
  versions[1].number = 1;
  versions[1].path = S("versions/v1.lua");
  versions[1].why = S("the files workload could fail silently");
  versions[1].supersedes = sup_files;
  versions[1].n_supersedes = 1;
  memset(&exp, 0, sizeof exp);
  exp.dir = S("/nonexistent/prereg-test");
  exp.id = S("t");
  exp.versions = versions;
  exp.n_versions = 2;
  CHECK(analysis_run(&s, &orig, &exp, &rs, 1, &sum, &err) == CORE_OK);
  if (!sum) {
    fprintf(stderr, "analysis_run: %s\n", err.msg);
    CHECK(0);
    return;
  }
  CHECK(sum->n_results == 2); /* idle has no data: no result */
  CHECK_STR(sum->results[0].arm, "gvisor");
  CHECK(sum->results[0].n == 10 && sum->results[0].n_reference == 10);
  CHECK(sum->results[0].median == 15.0 + 0.5 * (0.012 * 4 + 0.012 * 5));
  CHECK_STR(sum->results[0].verdict, "tie");
  CHECK_STR(sum->results[1].arm, "kata");
  CHECK_STR(sum->results[1].verdict, "slower");
  CHECK(sum->results[1].ci_low > 1.5);
  CHECK(sum->results[1].seed ==
        analysis_comparison_seed(17, "files", "wall_s", "kata"));
  /* Hypotheses. */
  CHECK(sum->n_hypotheses == 4);
  CHECK(sum->hypotheses[0].outcome == PROTO_HELD);
  CHECK(sum->hypotheses[1].outcome == PROTO_NOT_HELD); /* kata is slower */
  CHECK(strstr(sum->hypotheses[1].reason, "gvisor: verdict tie") != NULL);
  CHECK(strstr(sum->hypotheses[1].reason, "kata: verdict slower") != NULL);
  CHECK(sum->hypotheses[2].outcome == PROTO_INCONCLUSIVE);
  CHECK_STR(sum->hypotheses[2].reason, "no valid data for idle/wall_s/gvisor");
  CHECK(sum->hypotheses[3].outcome == PROTO_HELD); /* both arms, no list */
  /* Cells: files x wall_s x {runc, gvisor, kata}, then idle. */
  CHECK(sum->n_cells == 6);
  CHECK_STR(sum->cells[1].arm, "gvisor");
  CHECK(sum->cells[1].n_valid == 10 && sum->cells[1].n_invalid == 2 &&
        sum->cells[1].n_superseded == 6 && sum->cells[1].n_planned == 10);
  /* kata: 10 valid runs count; the eleventh (the quick one) is beyond the
   * plan's 10 and is not pooled. */
  CHECK(sum->cells[2].n_invalid == 1 && sum->cells[2].n_valid == 10 &&
        sum->cells[2].n_beyond == 1);
  CHECK(sum->status.beyond_plan && !sum->status.incomplete &&
        !sum->status.quick && !sum->provisional);
  CHECK(sum->cells[3].n_valid == 0 && isnan(sum->cells[3].median));
  /* Exclusions, grouped by workload, arm (sheet order), reason. */
  CHECK(sum->n_exclusions == 6);
  CHECK_STR(sum->exclusions[0].arm, "runc");
  CHECK_STR(sum->exclusions[0].reason,
            "superseded by amendment 1: the files workload could fail "
            "silently");
  CHECK(sum->exclusions[0].runs == 6);
  CHECK_STR(sum->exclusions[2].reason, "timeout after 120 s");
  CHECK(sum->exclusions[2].runs == 2);
  CHECK_STR(sum->exclusions[3].reason,
            "beyond the plan (runs = 10): valid, not analysed");
  CHECK_STR(sum->exclusions[4].reason, "exit code 1, expected 0");
  CHECK(sum->original == NULL); /* amended before any data */

  /* Stream stability: without the gvisor arm (and in another arm order),
   * kata's numbers are the same to the last bit. */
  {
    proto_arm fewer[2];
    proto_sheet s2 = s;
    analysis_summary *sum3 = NULL;
    fewer[0] = arms[2];
    fewer[1] = arms[0];
    s2.arms = fewer;
    s2.n_arms = 2;
    s2.reference = 1;
    CHECK(analysis_run(&s2, &orig, &exp, &rs, 1, &sum3, &err) == CORE_OK);
    CHECK(sum3 && sum3->n_results == 1);
    if (sum3 && sum3->n_results == 1) {
      CHECK_STR(sum3->results[0].arm, "kata");
      CHECK(sum3->results[0].ci_low == sum->results[1].ci_low);
      CHECK(sum3->results[0].ci_high == sum->results[1].ci_high);
    }
    analysis_summary_free(sum3);
  }

  /* The table shows the published shape. */
  core_buf_init(&t);
  analysis_write_table(sum, NULL, 120, &t);
  CHECK(t.data && strstr(t.data, "\nfiles · wall_s  ") != NULL);
  CHECK(t.data && strstr(t.data, "reference, n=") != NULL);
  CHECK(t.data && strstr(t.data, "× [") != NULL);
  CHECK(t.data && strstr(t.data, "H2  not held: both tie on files") != NULL);
  core_buf_free(&t);

  /* JSON: contract keys in order, the same bytes for any thread count. */
  core_buf_init(&j1);
  core_buf_init(&j2);
  CHECK(analysis_json(sum, &j1, &err) == CORE_OK);
  CHECK(analysis_run(&s, &orig, &exp, &rs, 2, &sum2, &err) == CORE_OK);
  CHECK(sum2 && analysis_json(sum2, &j2, &err) == CORE_OK);
  CHECK(j1.len > 0 && j1.len == j2.len &&
        memcmp(j1.data, j2.data, j1.len) == 0);
  {
    const char *keys[] = {"\"protocol\"",
                          "\"sheet_sha256\"",
                          "\"rule\"",
                          "\"estimator\"",
                          "\"confidence\"",
                          "\"resamples\"",
                          "\"seed\"",
                          "\"results\"",
                          "\"workload\"",
                          "\"metric\"",
                          "\"arm\"",
                          "\"reference\"",
                          "\"n\"",
                          "\"n_reference\"",
                          "\"median\"",
                          "\"median_reference\"",
                          "\"ratio\"",
                          "\"ci_low\"",
                          "\"ci_high\"",
                          "\"verdict\"",
                          "\"hypotheses\"",
                          "\"id\"",
                          "\"verdict\": \"held\""};
    const char *p = j1.data ? j1.data : "";
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
      const char *q = strstr(p, keys[k]);
      if (!q)
        fprintf(stderr, "key %s missing or out of order\n", keys[k]);
      CHECK(q != NULL);
      if (q)
        p = q;
    }
    /* Shortest exact form: the sheet's 0.95, the same double. */
    CHECK(strstr(j1.data ? j1.data : "", "\"confidence\": 0.95,") != NULL);
  }
  core_buf_free(&j1);
  core_buf_free(&j2);
  analysis_summary_free(sum2);
  analysis_summary_free(sum);
  sum = NULL;

  /* With an experiment whose amendment 1 was filed after 18 runs: the
   * registered analysis is given too, without supersession. The frozen
   * copies are not readable here, so the ends of the chain are compared. */
  versions[1].rows_when_filed = 18;
  CHECK(analysis_run(&s, &orig, &exp, &rs, 1, &sum, &err) == CORE_OK);
  CHECK(sum && sum->sheet_version == 1);
  CHECK(sum && sum->original != NULL);
  if (sum && sum->original) {
    CHECK(strstr(sum->original_why, "amendment 1, filed when 18 runs "
                                    "existed, superseded earlier rows of "
                                    "files") != NULL);
    CHECK(sum->original->n_results == 2);
    /* The registered sample: the first 10 valid kata runs in collection
     * order (6 under v0, 4 under v1); nothing superseded. */
    CHECK(sum->original->results[1].n == 10);
    CHECK(sum->original->cells[2].n_beyond == 7);
    CHECK(sum->original->cells[1].n_superseded == 0);
  }
  analysis_summary_free(sum);
  sum = NULL;

  /* Out of memory at every allocation in turn: a clean ENOMEM, nothing
   * leaked (the ASan build checks), never a half-made summary. */
  {
    long k, fails = 0, oks = 0;
    long saved = s.rule.resamples;
    s.rule.resamples = 40;
    orig.rule.resamples = 40;
    for (k = 0; k < 100000; k++) {
      core_status st;
      analysis_summary *o = NULL;
      core_mem_fail_after(k, 1);
      st = analysis_run(&s, &orig, &exp, &rs, 1, &o, &err);
      core_mem_fail_after(-1, 0);
      if (st == CORE_OK) {
        oks++;
        analysis_summary_free(o);
        if (core_mem_failures() == 0)
          break;
      } else {
        fails += st == CORE_ENOMEM && o == NULL;
      }
    }
    CHECK(oks >= 1 && fails + oks == k + 1);
    s.rule.resamples = saved;
    orig.rule.resamples = saved;
  }

  /* Filed before any data: no original. */
  versions[1].rows_when_filed = 0;
  CHECK(analysis_run(&s, &orig, &exp, &rs, 1, &sum, &err) == CORE_OK);
  CHECK(sum && sum->original == NULL);
  analysis_summary_free(sum);
  sum = NULL;

  /* A rule change after data, no supersession: original given, and the
   * reason names the rule. */
  am[0].n_supersedes = 0;
  versions[1].n_supersedes = 0;
  versions[1].rows_when_filed = 30;
  s.rule.verdicts = published;
  s.rule.n_verdicts = 2; /* the amendment dropped "tie" */
  CHECK(analysis_run(&s, &orig, &exp, &rs, 1, &sum, &err) == CORE_OK);
  CHECK(sum && sum->original && strstr(sum->original_why, "changed the rule"));
  if (sum && sum->original) {
    CHECK_STR(sum->results[0].verdict, "inconclusive");
    CHECK_STR(sum->original->results[0].verdict, "tie");
  }
  analysis_summary_free(sum);
  free(rs.rows);
}

int main(void) {
  analysis_init();
  init_rule();
  test_verdicts();
  test_claims();
  test_run();
  return HARNESS_END();
}
