/* test_proto.c: the sheet loader: fields, defaults, lookups, templates,
 * claims (built-in and Lua functions), the sandbox's budgets from C, and
 * allocation failures at every point of a small load.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "protocols/proto.h"

static const char small[] =
    "protocol {\n"
    "  id = \"small\", title = \"Small\",\n"
    "  vars = { dir = \"/tmp/x\" },\n"
    "  arms = { { name = \"a\", reference = true },\n"
    "           { name = \"b\", run = \"nice {cmd} --in {dir}\" } },\n"
    "  workloads = { { name = \"w\", runs = 3, cmd = \"ls {dir}\" },\n"
    "                { name = \"imp\" } },\n"
    "  rule = { seed = 7, verdicts = { { \"slower\", ci_excludes = 1,\n"
    "           ratio_above = 1.1 } } },\n"
    "  hypotheses = { { id = \"H1\", says = \"b is slower\",\n"
    "    workload = \"w\", metric = \"wall_s\",\n"
    "    claim = verdict_is(\"slower\") } },\n"
    "}\n";

static proto_sheet *load_str(const char *name, const char *text,
                             core_err *err) {
  memset(err, 0, sizeof *err);
  return proto_sheet_load_text(name, text, strlen(text), err);
}

static void test_seed_fields(void) {
  core_err err = {0};
  proto_sheet *s = proto_sheet_load("good/seed.lua", &err);
  const proto_workload *w;
  CHECK(s != NULL);
  if (!s) {
    fprintf(stderr, "%s\n", err.msg);
    return;
  }
  CHECK_STR(s->id, "agent-isolation");
  CHECK_STR(s->path, "good/seed.lua");
  CHECK(s->n_arms == 4 && s->reference == 0);
  CHECK(s->arms[0].reference && !s->arms[1].reference);
  CHECK_STR(s->arms[1].name, "gvisor");
  CHECK(s->arms[1].n_requires == 1 && s->arms[1].n_versions == 1);
  CHECK_STR(s->arms[1].versions[0], "runsc --version");
  CHECK(s->image.digest_cmd != NULL && s->image.tree == NULL);
  CHECK(s->n_vars == 2);
  CHECK_STR(s->vars[0].name, "image"); /* sorted by name */
  CHECK_STR(s->vars[1].name, "limits");
  CHECK(s->n_workloads == 6);
  w = &s->workloads[0];
  CHECK(w->runs == 30 && w->warmup == 1);
  CHECK(w->n_metrics == 1);
  CHECK_STR(w->metrics[0], "wall_s"); /* default */
  CHECK_NEAR(w->timeout_s, 120, 0);
  CHECK_NEAR(w->sample_after_s, 5, 0);
  CHECK(w->order == PROTO_ORDER_INTERLEAVED && w->cache == PROTO_CACHE_WARM);
  CHECK(w->expect == PROTO_EXPECT_CODE && w->expect_code == 0);
  CHECK(w->procs.descendants == 1 && !w->cgroup);
  /* source: "run" for a workload with a command, by default. */
  CHECK(w->source == PROTO_SOURCE_RUN && proto_workload_runs_itself(w) &&
        !proto_workload_takes_imports(w));
  w = &s->workloads[1];
  CHECK_NEAR(w->sample_after_s, 10, 0);
  CHECK_NEAR(w->timeout_s, 60, 0);
  CHECK(w->procs.n_cmdline == 1);
  CHECK_STR(w->procs.cmdline[0], "{experiment}-{run_id}");
  w = &s->workloads[2];
  CHECK(w->n_steps == 3 && w->cmd == NULL);
  CHECK(w->expect == PROTO_EXPECT_REFERENCE);
  CHECK(s->workloads[3].timeout_s == 600);
  CHECK_STR(s->workloads[3].prepare, "make clean");
  w = &s->workloads[5];
  CHECK(w->cmd == NULL && w->steps == NULL && w->runs == 0);
  /* ... and "import" for one without. */
  CHECK(w->source == PROTO_SOURCE_IMPORT && !proto_workload_runs_itself(w) &&
        proto_workload_takes_imports(w));
  CHECK_STR(s->rule.estimator, "median");
  CHECK_NEAR(s->rule.confidence, 0.95, 0);
  CHECK(s->rule.resamples == 10000 && s->rule.seed == 17);
  CHECK(s->rule.n_verdicts == 3);
  CHECK(s->rule.verdicts[0].ratio.has_ci_excludes &&
        s->rule.verdicts[0].ratio.has_above &&
        !s->rule.verdicts[0].ratio.has_below);
  CHECK_NEAR(s->rule.verdicts[1].ratio.below, 1 / 1.10, 1e-15);
  CHECK(s->rule.verdicts[2].ratio.has_ci_within);
  CHECK_NEAR(s->rule.verdicts[2].ratio.ci_within[0], 0.95, 0);
  CHECK_NEAR(s->rule.verdicts[2].ratio.ci_within[1], 1.05, 0);
  CHECK(s->rule.verdicts[1].line == 39);
  CHECK(s->n_hypotheses == 4);
  CHECK(s->hypotheses[0].kind == PROTO_CLAIM_AT_LEAST);
  CHECK_NEAR(s->hypotheses[0].x, 3, 0);
  CHECK(s->hypotheses[0].line == 45);
  CHECK(s->hypotheses[1].n_arms == 2);
  CHECK(s->hypotheses[2].kind == PROTO_CLAIM_FUNCTION);
  CHECK(s->hypotheses[2].workload == NULL && s->hypotheses[2].n_arms == 0);
  CHECK(s->hypotheses[3].kind == PROTO_CLAIM_VERDICT_IS);
  CHECK_STR(s->hypotheses[3].verdict, "tie");
  CHECK(s->n_threats == 2 && s->n_amendments == 4);
  CHECK_STR(s->amendments[3].date, "2026-10-22");
  CHECK(s->amendments[3].n_supersedes == 3);
  CHECK_STR(s->amendments[3].supersedes[2], "idle-memory");
  CHECK(s->arms[2].line == 16);
  CHECK(s->workloads[2].line == 26);
  CHECK(strlen(s->sha256) == 64);

  CHECK(proto_arm_index(s, "kata-clh") == 3);
  CHECK(proto_arm_index(s, "nope") == -1);
  CHECK(proto_workload_index(s, "files") == 4);
  CHECK(proto_workload_index(s, "nope") == -1);
  CHECK(proto_workload_has_metric(&s->workloads[3], "inner_s"));
  CHECK(!proto_workload_has_metric(&s->workloads[3], "pss_mib"));

  /* H3 of the seed, as a function: "the many-small-files workload is the
   * one gVisor makes most expensive". */
  {
    proto_result_view r[4] = {
        {"files", "wall_s", "gvisor", "tie", 1.03, 0.97, 1.03, 15.4, 15.0, 10,
         10, NULL, NULL, NAN, NAN, NAN},
        {"replay", "wall_s", "gvisor", "slower", 1.88, 1.7, 2.0, 0.8, 0.4, 10,
         10, NULL, NULL, NAN, NAN, NAN},
        {"startup", "wall_s", "gvisor", "slower", 1.48, 1.4, 1.6, 0.33, 0.22,
         30, 30, NULL, NULL, NAN, NAN, NAN},
        {"files", "wall_s", "kata-qemu", "slower", 1.62, 1.5, 1.7, 24, 15, 10,
         10, NULL, NULL, NAN, NAN, NAN},
    };
    proto_outcome o = PROTO_HELD;
    char *why = NULL;
    CHECK(proto_eval_claim(s, &s->hypotheses[2], r, 4, &o, &why, &err) ==
          CORE_OK);
    CHECK(o == PROTO_NOT_HELD);
    CHECK_STR(why, "replay has the highest ratio (1.88)");
    core_free(why);
    r[0].ratio = 2.5; /* now files is the most expensive */
    CHECK(proto_eval_claim(s, &s->hypotheses[2], r, 4, &o, &why, &err) ==
          CORE_OK);
    CHECK(o == PROTO_HELD);
    CHECK_STR(why, "files has the highest ratio (2.50)");
    core_free(why);
    CHECK(proto_eval_claim(s, &s->hypotheses[2], r, 0, &o, &why, &err) ==
          CORE_OK);
    CHECK(o == PROTO_INCONCLUSIVE);
    CHECK_STR(why, "no gVisor results");
    core_free(why);
    /* A missing ratio (NaN) reaches Lua as nil. */
    r[0].ratio = r[1].ratio = r[2].ratio = NAN;
    CHECK(proto_eval_claim(s, &s->hypotheses[2], r, 3, &o, &why, &err) ==
          CORE_OK);
    CHECK(o == PROTO_INCONCLUSIVE);
    core_free(why);

    /* Built-in claims over several arms: H2 is below(1.5) for gvisor
     * and kata-qemu on replay. */
    {
      proto_result_view q[2] = {
          {"replay", "wall_s", "gvisor", "slower", 1.3, 1.2, 1.4, 1, 1, 10, 10,
           NULL, NULL, NAN, NAN, NAN},
          {"replay", "wall_s", "kata-qemu", "slower", 1.3, 1.2, 1.45, 1, 1, 10,
           10, NULL, NULL, NAN, NAN, NAN},
      };
      CHECK(proto_eval_claim(s, &s->hypotheses[1], q, 2, &o, &why, &err) ==
            CORE_OK);
      CHECK(o == PROTO_HELD);
      core_free(why);
      q[1].ci_high = 1.6; /* straddles 1.5 */
      CHECK(proto_eval_claim(s, &s->hypotheses[1], q, 2, &o, &why, &err) ==
            CORE_OK);
      CHECK(o == PROTO_INCONCLUSIVE);
      core_free(why);
      q[0].ci_low = 1.5; /* low end at 1.5: not below */
      q[0].ci_high = 1.7;
      CHECK(proto_eval_claim(s, &s->hypotheses[1], q, 2, &o, &why, &err) ==
            CORE_OK);
      CHECK(o == PROTO_NOT_HELD);
      core_free(why);
      CHECK(proto_eval_claim(s, &s->hypotheses[1], q, 1, &o, &why, &err) ==
            CORE_OK); /* kata-qemu has no result */
      CHECK(o == PROTO_NOT_HELD);
      core_free(why);
    }
    {
      proto_result_view q = {
          "startup", "wall_s", "kata-qemu", "slower", 31.7, 3.0, 33,  7,
          0.22,      30,       30,          NULL,     NULL, NAN, NAN, NAN};
      CHECK(proto_eval_claim(s, &s->hypotheses[0], &q, 1, &o, &why, &err) ==
            CORE_OK);
      CHECK(o == PROTO_HELD); /* at_least(3): low end 3.0 >= 3 */
      core_free(why);
      q.ci_low = 2.9;
      CHECK(proto_eval_claim(s, &s->hypotheses[0], &q, 1, &o, &why, &err) ==
            CORE_OK);
      CHECK(o == PROTO_INCONCLUSIVE);
      core_free(why);
      q.ci_high = 2.99;
      CHECK(proto_eval_claim(s, &s->hypotheses[0], &q, 1, &o, &why, &err) ==
            CORE_OK);
      CHECK(o == PROTO_NOT_HELD);
      core_free(why);
    }
    {
      proto_result_view q = {"files", "inner_s", "gvisor", "tie", 1.03, 0.97,
                             1.03,    15.4,      15.0,     10,    10,   NULL,
                             NULL,    NAN,       NAN,      NAN};
      CHECK(proto_eval_claim(s, &s->hypotheses[3], &q, 1, &o, &why, &err) ==
            CORE_OK);
      CHECK(o == PROTO_HELD);
      core_free(why);
      q.verdict = "slower";
      CHECK(proto_eval_claim(s, &s->hypotheses[3], &q, 1, &o, &why, &err) ==
            CORE_OK);
      CHECK(o == PROTO_NOT_HELD);
      core_free(why);
      q.verdict = NULL;
      CHECK(proto_eval_claim(s, &s->hypotheses[3], &q, 1, &o, &why, &err) ==
            CORE_OK);
      CHECK(o == PROTO_INCONCLUSIVE);
      core_free(why);
    }
  }
  {
    core_buf b;
    core_buf_init(&b);
    proto_rule_words(s, &b);
    CHECK(b.data && strstr(b.data, "median per arm and its ratio to the "
                                   "reference arm runc, with a 95% "
                                   "percentile bootstrap") != NULL);
    CHECK(b.data && strstr(b.data, "(10000 resamples, seed 17)") != NULL);
    CHECK(b.data && strstr(b.data, "tie if the CI lies within [0.95, "
                                   "1.05]; otherwise inconclusive.") != NULL);
    core_buf_free(&b);
  }
  proto_sheet_free(s);
}

static void test_function_claims(void) {
  static const char text[] =
      "local function f(r) return r[1].ratio > 2, 'big' end\n"
      "protocol {\n"
      "  id = \"fn\", title = \"Functions\",\n"
      "  arms = { { name = \"a\", reference = true }, { name = \"b\" } },\n"
      "  workloads = { { name = \"w\", runs = 1, cmd = \"true\" } },\n"
      "  rule = { seed = 1, verdicts = { { \"up\", ratio_above = 1 } } },\n"
      "  hypotheses = {\n"
      "    { id = \"bool\", says = \"x\", claim = f },\n"
      "    { id = \"nil\", says = \"x\", claim = function() return nil end "
      "},\n"
      "    { id = \"num\", says = \"x\", claim = function() return 42 end },\n"
      "    { id = \"word\", says = \"x\", claim = function() return 'yes' end "
      "},\n"
      "    { id = \"loop\", says = \"x\", claim = function()\n"
      "        while true do end end },\n"
      "    { id = \"boom\", says = \"x\", claim = function() error('no') end "
      "},\n"
      "    { id = \"why\", says = \"x\", claim = function()\n"
      "        return 'held', 3 end },\n"
      "    { id = \"mem\", says = \"x\", claim = function()\n"
      "        return string.rep('x', 100 << 20) end },\n"
      "  },\n"
      "}\n";
  core_err err;
  proto_sheet *s = load_str("fn.lua", text, &err);
  proto_result_view r = {"w", "wall_s", "b", "up", 3,    2.5, 3.5, 3,
                         1,   5,        5,   NULL, NULL, NAN, NAN, NAN};
  proto_outcome o;
  char *why = NULL;
  CHECK(s != NULL);
  if (!s) {
    fprintf(stderr, "%s\n", err.msg);
    return;
  }
  CHECK(proto_eval_claim(s, &s->hypotheses[0], &r, 1, &o, &why, &err) ==
        CORE_OK);
  CHECK(o == PROTO_HELD);
  CHECK_STR(why, "big");
  core_free(why);
  r.ratio = 1;
  CHECK(proto_eval_claim(s, &s->hypotheses[0], &r, 1, &o, &why, &err) ==
        CORE_OK);
  CHECK(o == PROTO_NOT_HELD);
  core_free(why);
  CHECK(proto_eval_claim(s, &s->hypotheses[1], &r, 1, &o, &why, &err) ==
        CORE_OK);
  CHECK(o == PROTO_INCONCLUSIVE);
  CHECK_STR(why, "");
  core_free(why);
  why = NULL;
  CHECK(proto_eval_claim(s, &s->hypotheses[2], &r, 1, &o, &why, &err) ==
        CORE_EPROTOCOL);
  CHECK_STR(err.msg, "fn.lua:10: hypotheses[3] (num): the claim function "
                     "returned a number; it must return \"held\", \"not "
                     "held\", \"inconclusive\", true, false or nil");
  CHECK(why == NULL);
  CHECK(proto_eval_claim(s, &s->hypotheses[3], &r, 1, &o, &why, &err) ==
        CORE_EPROTOCOL);
  CHECK(strstr(err.msg, "returned \"yes\"") != NULL);
  CHECK(proto_eval_claim(s, &s->hypotheses[5], &r, 1, &o, &why, &err) ==
        CORE_EPROTOCOL);
  CHECK_STR(err.msg, "fn.lua:14: no");
  CHECK(proto_eval_claim(s, &s->hypotheses[6], &r, 1, &o, &why, &err) ==
        CORE_EPROTOCOL);
  CHECK(strstr(err.msg, "(the reason) must be a string, got a number"));
  CHECK(proto_eval_claim(s, &s->hypotheses[7], &r, 1, &o, &why, &err) ==
        CORE_EPROTOCOL);
  CHECK_STR(err.msg, "fn.lua: memory limit of 64 MiB exceeded");
  CHECK(proto_eval_claim(s, &s->hypotheses[0], &r, 1, &o, &why, &err) ==
        CORE_OK);
  core_free(why);
  CHECK(proto_eval_claim(s, &s->hypotheses[4], &r, 1, &o, &why, &err) ==
        CORE_EPROTOCOL);
  /* Which of the two budgets ends the loop first (10 million
   * instructions, or 0.2 s of CPU) is the machine's speed: either is the
   * budget spent. */
  CHECK(strncmp(err.msg, "fn.lua:13: ", 11) == 0 &&
        (strstr(err.msg, "instruction budget exceeded (10 million "
                         "instructions); a sheet should declare") ||
         strstr(err.msg, "CPU time limit of 0.2 s exceeded; a sheet should "
                         "declare")));
  /* One budget for the sheet and all its claims: once spent, every
   * later evaluation stops at once (test_budget_spent, budget by
   * budget). */
  why = NULL;
  CHECK(proto_eval_claim(s, &s->hypotheses[0], &r, 1, &o, &why, &err) ==
        CORE_EPROTOCOL);
  {
    static const char pre[] = "fn.lua:1: hypotheses[1] (bool): not "
                              "evaluated: an earlier claim spent the "
                              "sheet's budget (";
    CHECK(strncmp(err.msg, pre, sizeof pre - 1) == 0);
  }
  CHECK(why == NULL);
  proto_sheet_free(s);
}

/* A sheet whose first claim spends one budget (SPEND, its body) and
 * whose second would hold at once. */
static proto_sheet *spender(const char *spend, core_err *err) {
  static const char fmt[] =
      "protocol {\n"
      "  id = \"sp\", title = \"Spend\",\n"
      "  arms = { { name = \"a\", reference = true }, { name = \"b\" } },\n"
      "  workloads = { { name = \"w\", runs = 1, cmd = \"true\" } },\n"
      "  rule = { seed = 1, verdicts = { { \"up\", ratio_above = 1 } } },\n"
      "  hypotheses = {\n"
      "    { id = \"ok\", says = \"x\", claim = function() return true end "
      "},\n"
      "    { id = \"spend\", says = \"x\", claim = function()\n"
      "%s\n"
      "      end },\n"
      "  },\n"
      "}\n";
  char text[2048];
  snprintf(text, sizeof text, fmt, spend);
  return load_str("sp.lua", text, err);
}

/* Each budget made to fire alone, by a claim only it can stop: a search
 * priced past the instruction budget in one call (no CPU to speak of);
 * a loop of few instructions that each compare two 4 MB strings (the
 * CPU limit at some thousand instructions); 1 MiB strings made and
 * dropped (the allocation budget after some 200 instructions and a few
 * dozen milliseconds). After each, the sheet's later claims are refused
 * before they start, the spending one too. */
static void test_budget_spent(void) {
  static const struct {
    const char *spend, *budget, *or_budget;
  } cases[] = {
      {"return string.find(string.rep('x', 1000000), "
       "string.rep('x', 500000), 1, true)",
       "instruction budget exceeded (10 million instructions)", NULL},
      {"local a, b = string.rep('x', 4000000), string.rep('x', 4000000)\n"
       "local n = 0\n"
       "while true do if a == b then n = n + 1 end end",
       "CPU time limit of 0.2 s exceeded", NULL},
      {"for i = 1, 100000 do local s = string.rep('x', 1048576) end",
       "allocation budget of 256 MiB exceeded",
       /* Writing 256 MiB may take more than 0.2 s of CPU where every
        * byte written is checked (AddressSanitizer): then the CPU limit
        * fires first, and the rule is the same. */
       "CPU time limit of 0.2 s exceeded"},
  };
  proto_result_view r = {"w", "wall_s", "b", "up", 3,    2.5, 3.5, 3,
                         1,   5,        5,   NULL, NULL, NAN, NAN, NAN};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    core_err err;
    proto_sheet *s = spender(cases[i].spend, &err);
    proto_outcome o;
    char *why = NULL, want[512];
    CHECK(s != NULL);
    if (!s) {
      fprintf(stderr, "%s\n", err.msg);
      continue;
    }
    /* Before: the short claim holds, as often as asked. */
    for (int k = 0; k < 3; k++) {
      CHECK(proto_eval_claim(s, &s->hypotheses[0], &r, 1, &o, &why, &err) ==
            CORE_OK);
      CHECK(o == PROTO_HELD);
      core_free(why);
      why = NULL;
    }
    CHECK(proto_eval_claim(s, &s->hypotheses[1], &r, 1, &o, &why, &err) ==
          CORE_EPROTOCOL);
    const char *fired = cases[i].budget;
    if (!strstr(err.msg, fired) && cases[i].or_budget &&
        strstr(err.msg, cases[i].or_budget))
      fired = cases[i].or_budget;
    CHECK(strstr(err.msg, fired) != NULL);
    if (!strstr(err.msg, fired))
      fprintf(stderr, "  case %zu stopped by: %s\n", i, err.msg);
    /* After: neither claim starts. */
    for (size_t h = 0; h < 2; h++) {
      snprintf(want, sizeof want,
               "sp.lua:%d: hypotheses[%zu] (%s): not evaluated: an earlier "
               "claim spent the sheet's budget (%s); a sheet should "
               "declare, not compute",
               h ? 8 : 7, h + 1, h ? "spend" : "ok", fired);
      CHECK(proto_eval_claim(s, &s->hypotheses[h], &r, 1, &o, &why, &err) ==
            CORE_EPROTOCOL);
      CHECK_STR(err.msg, want);
      CHECK(why == NULL);
    }
    proto_sheet_free(s);
  }
}

static void test_expand(void) {
  core_err err;
  proto_sheet *s = load_str("small.lua", small, &err);
  proto_expand_ctx ctx = {.cmd = "ls -l",
                          .arm = "b",
                          .workload = "w",
                          .run_id = "r-7",
                          .round = 7,
                          .batch_id = "b0007",
                          .cidfile = "/d/r-7.cid"};
  char *e;
  CHECK(s != NULL);
  if (!s)
    return;
  e = proto_expand(s, s->arms[1].run, &ctx, &err);
  CHECK_STR(e, "nice ls -l --in /tmp/x");
  core_free(e);
  e = proto_expand(s,
                   "{arm}/{workload}/{round}/{run_id} {{x} awk "
                   "'{print $1}' ${HOME} {Dir} {",
                   &ctx, &err);
  CHECK_STR(e, "b/w/7/r-7 {x} awk '{print $1}' ${HOME} {Dir} {");
  core_free(e);
  e = proto_expand(s, "{{{arm}} {a-b} {{{{ {x", &ctx, &err);
  CHECK_STR(e, "{b} {a-b} {{ {x");
  core_free(e);
  e = proto_expand(s, "echo {nope}", &ctx, &err);
  CHECK(e == NULL && err.status == CORE_EPROTOCOL);
  CHECK_STR(err.msg, "small.lua: placeholder {nope} in \"echo {nope}\" has "
                     "no value here");
  e = proto_expand(s, "{cmd}", NULL, &err);
  CHECK(e == NULL);
  e = proto_expand(s, "", &ctx, &err);
  CHECK_STR(e, "");
  core_free(e);
  /* The experiment is the sheet's id unless the context names another;
   * {cid} has a value only once the run's command wrote it. */
  e = proto_expand(s, "{experiment}-{batch_id} {cidfile}", &ctx, &err);
  CHECK_STR(e, "small-b0007 /d/r-7.cid");
  core_free(e);
  e = proto_expand(s, "x {cid}", &ctx, &err);
  CHECK(e == NULL && err.status == CORE_EPROTOCOL);
  {
    char **parts = NULL;
    size_t n = 0;
    CHECK(proto_expand_split(s, "/p/{run_id}/{cid}-{{cid}-{cid}{dir}", &ctx,
                             "cid", &parts, &n, &err) == CORE_OK);
    CHECK(n == 3);
    if (n == 3) {
      CHECK_STR(parts[0], "/p/r-7/");
      CHECK_STR(parts[1], "-{cid}-");
      CHECK_STR(parts[2], "/tmp/x");
    }
    core_names_free(parts, n);
    CHECK(proto_expand_split(s, "no cut", &ctx, "cid", &parts, &n, &err) ==
              CORE_OK &&
          n == 1);
    if (n == 1)
      CHECK_STR(parts[0], "no cut");
    core_names_free(parts, n);
    CHECK(proto_expand_split(s, "{cid}{nope}", &ctx, "cid", &parts, &n,
                             &err) == CORE_EPROTOCOL &&
          parts == NULL && n == 0);
  }
  CHECK(s->n_workloads == 2 && s->workloads[1].runs == 0);
  CHECK_STR(s->arms[0].run, "{cmd}");
  CHECK(s->hypotheses[0].n_arms == 1);
  CHECK_STR(s->hypotheses[0].arms[0], "b");
  CHECK_STR(proto_metric_unit("wall_s"), "s");
  CHECK_STR(proto_metric_unit("pss_mib"), "MiB");
  CHECK_STR(proto_metric_unit("maxrss_kib"), "KiB");
  CHECK_STR(proto_metric_unit("files"), "");
  CHECK_STR(proto_metric_unit(NULL), "");
  proto_sheet_free(s);
}

static void test_messages(void) {
  core_err err;
  proto_sheet *s;
  char *big;
  s = load_str("none.lua", "x = 1\n", &err);
  CHECK(s == NULL && err.status == CORE_EPROTOCOL);
  CHECK_STR(err.msg, "none.lua: the sheet never calls protocol { ... }; "
                     "see 'prereg new' for a starter sheet");
  /* Globals do not leak from one sheet into the next (read raw: reading
   * a name nobody defined is an error with a did-you-mean). */
  s = load_str("a.lua", "leak = 1\nprotocol {}\n", &err);
  CHECK(s == NULL);
  s = load_str("b.lua",
               "assert(rawget(_ENV, 'leak') == nil, 'leaked')\n"
               "assert(rawget(_G, 'leak') == nil, 'leaked')\n"
               "assert(rawget(_G, 'string') ~= nil)\n"
               "protocol {}\n",
               &err);
  CHECK(s == NULL);
  CHECK_STR(err.msg, "b.lua:4: id: is required (a string)");
  /* A sheet over 1 MiB is refused before it runs. */
  big = malloc(2u << 20);
  if (big) {
    memset(big, ' ', 2u << 20);
    memcpy(big, "protocol {}", 11);
    s = proto_sheet_load_text("big.lua", big, 2u << 20, &err);
    CHECK(s == NULL);
    CHECK_STR(err.msg, "big.lua: is 2097152 bytes; a sheet may have at "
                       "most 1024 KiB");
    free(big);
  }
  s = proto_sheet_load("does/not/exist.lua", &err);
  CHECK(s == NULL && err.status == CORE_EPROTOCOL);
  proto_sheet_free(NULL);
}

static void test_starter(void) {
  core_buf b;
  core_err err;
  proto_sheet *s;
  core_buf_init(&b);
  proto_starter("my-exp", &b);
  CHECK(!b.oom && b.data);
  s = load_str("protocols/my-exp.lua", b.data ? b.data : "", &err);
  CHECK(s != NULL);
  if (s) {
    CHECK_STR(s->id, "my-exp");
    proto_sheet_free(s);
  }
  core_buf_free(&b);
}

/* Fails every allocation from the k-th on (sticky) or only the k-th, for
 * every k up to the first load that needs no failure: each load must
 * fail cleanly with ENOMEM or, when Lua recovered, succeed; LeakSanitizer
 * (the Asan build) checks that nothing leaks. */
static void test_alloc_failures(int sticky) {
  int failed_ok = 1, succeeded = 0;
  long k;
  for (k = 0; k < 100000; k++) {
    core_err err = {0};
    proto_sheet *s;
    long failures;
    core_mem_fail_after(k, sticky);
    s = proto_sheet_load_text("small.lua", small, strlen(small), &err);
    failures = core_mem_failures();
    core_mem_fail_after(-1, 0);
    if (s) {
      if (strcmp(s->id, "small") != 0 || s->n_arms != 2)
        failed_ok = 0;
      proto_sheet_free(s);
      if (failures == 0) {
        succeeded = 1;
        break;
      }
    } else if (err.status != CORE_ENOMEM || failures == 0) {
      fprintf(stderr, "k=%ld sticky=%d: status %d: %s\n", k, sticky,
              (int)err.status, err.msg);
      failed_ok = 0;
    }
  }
  CHECK(failed_ok);
  CHECK(succeeded);
  CHECK(k > 50); /* there were many allocation points to fail */
}

/* Versions compare by content; a rewritten function claim is a changed
 * hypothesis, a reformatted rule is not a changed rule. */
static void test_compare_versions(void) {
  static const char *const texts[] = {
      /* 0: the base */
      "protocol { id = \"c\", title = \"t\", question = \"q\",\n"
      "  author = \"a\", arms = { { name = \"a\", reference = true },\n"
      "  { name = \"b\" } },\n"
      "  workloads = { { name = \"w\", runs = 3, cmd = \"true\" } },\n"
      "  rule = { seed = 7, verdicts = { { \"slower\", ratio_above = 1.1 "
      "} } },\n"
      "  hypotheses = { { id = \"H1\", says = \"s\",\n"
      "    claim = function(r) return \"held\" end } } }\n",
      /* 1: the same, laid out differently outside the function */
      "protocol { id = \"c\", title = \"t\", question = \"q\",\n"
      "  author = \"a\",\n  arms = { { name = \"a\", reference = true },\n"
      "  { name = \"b\" } },\n"
      "  workloads = { { name = \"w\", runs = 3, cmd = \"true\" } },\n"
      "  rule = { seed = 7,\n verdicts = { { \"slower\", ratio_above = 1.1 "
      "} } },\n"
      "  hypotheses = { { id = \"H1\", says = \"s\",\n"
      "    claim = function(r) return \"held\" end } } }\n",
      /* 2: the function rewritten */
      "protocol { id = \"c\", title = \"t\", question = \"q\",\n"
      "  author = \"a\", arms = { { name = \"a\", reference = true },\n"
      "  { name = \"b\" } },\n"
      "  workloads = { { name = \"w\", runs = 3, cmd = \"true\" } },\n"
      "  rule = { seed = 7, verdicts = { { \"slower\", ratio_above = 1.2 "
      "} } },\n"
      "  hypotheses = { { id = \"H1\", says = \"s\",\n"
      "    claim = function(r) return \"not held\" end } } }\n",
  };
  proto_sheet *s[3];
  core_err err;
  for (int i = 0; i < 3; i++) {
    s[i] = load_str("cmp.lua", texts[i], &err);
    CHECK(s[i] != NULL);
    if (!s[i]) {
      fprintf(stderr, "%s\n", err.msg);
      for (int k = 0; k < i; k++)
        proto_sheet_free(s[k]);
      return;
    }
  }
  CHECK_STR(s[0]->hypotheses[0].fn_source,
            "    claim = function(r) return \"held\" end } } }");
  CHECK(proto_same_hypotheses(s[0], s[1]));
  CHECK(proto_same_rule(&s[0]->rule, &s[1]->rule));
  CHECK(proto_same_workload(&s[0]->workloads[0], &s[1]->workloads[0]));
  CHECK(!proto_same_hypotheses(s[0], s[2]));
  CHECK(!proto_same_rule(&s[0]->rule, &s[2]->rule));
  for (int i = 0; i < 3; i++)
    proto_sheet_free(s[i]);
}

/* What a metric measures and the words its verdicts read: defaults by
 * name, the sheet's metrics table, per-kind names, and what a claim may
 * call a verdict. */
/* The table of built-in metrics: each name found by itself, in the unit
 * its suffix says (interface.md: a value is in the unit the name says),
 * with the kind and step rule the run and the verdicts rely on; one row
 * for each way prereg measures. */
static void test_builtin_metrics(void) {
  size_t n, seen[PROTO_N_MEASURES] = {0};
  const proto_builtin_metric *b = proto_builtin_metrics(&n);
  const proto_builtin_metric *w = proto_builtin_by_name("wall_s");
  for (size_t i = 0; i < n; i++) {
    const char *suffix = strrchr(b[i].name, '_');
    CHECK(proto_builtin_by_name(b[i].name) == &b[i]);
    CHECK(suffix && suffix > b[i].name);
    CHECK_STR(b[i].unit, !strcmp(suffix, "_s")     ? "s"
                         : !strcmp(suffix, "_mib") ? "MiB"
                         : !strcmp(suffix, "_kib") ? "KiB"
                                                   : "");
    CHECK_STR(proto_metric_unit(b[i].name), b[i].unit);
    CHECK(proto_metric_kind_of(NULL, b[i].name) == b[i].kind);
    CHECK(b[i].from < PROTO_N_MEASURES);
    seen[b[i].from]++;
  }
  for (int m = 0; m < PROTO_N_MEASURES; m++) /* the command: any number */
    CHECK(seen[m] == 1 || (m == PROTO_MEASURE_COMMAND && seen[m] > 0));
  CHECK(w && w->steps == PROTO_STEPS_SUM && w->from == PROTO_MEASURE_WALL);
  CHECK_STR(proto_measure_name(PROTO_MEASURE_WALL), "wall_s");
  CHECK(proto_builtin_by_name("maxrss_kib")->steps == PROTO_STEPS_MAX);
  CHECK(proto_builtin_by_name("pss_mib")->steps == PROTO_STEPS_FIRST);
  CHECK(proto_builtin_by_name("cg_cpu_s")->steps == PROTO_STEPS_WHOLE);
  CHECK(proto_builtin_by_name("inner_s")->from == PROTO_MEASURE_COMMAND);
  CHECK(!proto_builtin_by_name("wal_s") && !proto_builtin_by_name(NULL));
  CHECK_STR(proto_builtin_metric_nearest("wal_s"), "wall_s");
  CHECK(!proto_builtin_metric_nearest("out_bytes"));
}

static void test_metric_words(void) {
  static const char text[] =
      "protocol {\n"
      "  id = \"words\", title = \"Words\",\n"
      "  arms = { { name = \"a\", reference = true }, { name = \"b\" } },\n"
      "  workloads = { { name = \"w\", metrics = { \"wall_s\", "
      "\"pss_mib\", \"maxrss_kib\", \"out_mib\", \"ops\", "
      "\"rate_per_s\", \"files\" } } },\n"
      "  metrics = { rate_per_s = { better = \"higher\", unit = "
      "\"ops/s\" }, files = { kind = \"size\" } },\n"
      "  rule = { seed = 7, verdicts = {\n"
      "    { \"slower\", names = { memory = \"more memory\" },\n"
      "      ci_excludes = 1, ratio_above = 1.1 },\n"
      "    { \"faster\", ci_excludes = 1, ratio_below = 0.9 },\n"
      "    { \"tie\", ci_within = { 0.95, 1.05 } } } },\n"
      "  hypotheses = { { id = \"H1\", says = \"b uses more memory\",\n"
      "    workload = \"w\", metric = \"pss_mib\",\n"
      "    claim = verdict_is(\"more memory\") } },\n"
      "}\n";
  core_err err;
  proto_sheet *s = load_str("words.lua", text, &err);
  const proto_verdict_rule *v;
  CHECK(s != NULL);
  if (!s) {
    fprintf(stderr, "%s\n", err.msg);
    return;
  }
  v = s->rule.verdicts;
  CHECK(proto_metric_kind_of(s, "wall_s") == PROTO_KIND_TIME);
  CHECK(proto_metric_kind_of(s, "pss_mib") == PROTO_KIND_MEMORY);
  CHECK(proto_metric_kind_of(s, "maxrss_kib") == PROTO_KIND_MEMORY);
  CHECK(proto_metric_kind_of(s, "out_mib") == PROTO_KIND_SIZE);
  CHECK(proto_metric_kind_of(s, "ops") == PROTO_KIND_OTHER);
  /* Better higher without a kind: not a time, whatever its suffix. */
  CHECK(proto_metric_kind_of(s, "rate_per_s") == PROTO_KIND_OTHER);
  CHECK(proto_metric_higher_better(s, "rate_per_s"));
  CHECK(!proto_metric_higher_better(s, "wall_s"));
  CHECK_STR(proto_metric_unit_of(s, "rate_per_s"), "ops/s");
  CHECK_STR(proto_metric_unit_of(s, "out_mib"), "MiB");
  CHECK(proto_metric_kind_of(s, "files") == PROTO_KIND_SIZE);
  /* A time reads the rule's name; memory the sheet's word; the rest the
   * direction; a tie is a tie everywhere. */
  CHECK_STR(proto_verdict_word(s, &v[0], "wall_s"), "slower");
  CHECK_STR(proto_verdict_word(s, &v[0], "pss_mib"), "more memory");
  CHECK_STR(proto_verdict_word(s, &v[0], "out_mib"), "higher");
  CHECK_STR(proto_verdict_word(s, &v[1], "out_mib"), "lower");
  CHECK_STR(proto_verdict_word(s, &v[1], "pss_mib"), "lower");
  CHECK_STR(proto_verdict_word(s, &v[1], "wall_s"), "faster");
  CHECK_STR(proto_verdict_word(s, &v[0], "rate_per_s"), "higher");
  CHECK_STR(proto_verdict_word(s, &v[2], "pss_mib"), "tie");
  CHECK_STR(proto_verdict_word(s, NULL, "pss_mib"), "inconclusive");
  CHECK(proto_verdict_direction(&v[0]) == 1);
  CHECK(proto_verdict_direction(&v[1]) == -1);
  CHECK(proto_verdict_direction(&v[2]) == 0);
  CHECK(proto_verdict_answers_to(s, &v[0], "more memory"));
  CHECK(proto_verdict_answers_to(s, &v[0], "slower"));
  CHECK(!proto_verdict_answers_to(s, &v[0], "faster"));
  CHECK_STR(s->hypotheses[0].verdict, "more memory");
  {
    /* A claim naming the rule or the word holds on the same decision. */
    proto_result_view r = {
        "w", "pss_mib", "b", "more memory", 1.3,  1.2, 1.4, 1,
        1,   5,         5,   "slower",      NULL, NAN, NAN, NAN};
    proto_outcome o;
    char *why = NULL;
    CHECK(proto_eval_claim(s, &s->hypotheses[0], &r, 1, &o, &why, &err) ==
          CORE_OK);
    CHECK(o == PROTO_HELD);
    core_free(why);
  }
  proto_sheet_free(s);
}

/* The digest of the rule (what plan.rule_sha256 records) is the same
 * for the same sheet from one version to the next: a plan block written
 * before must still match. Every condition, on the ratio and on the
 * difference, at values %g would round. */
static void test_rule_digest(void) {
  static const char text[] =
      "protocol {\n"
      "  id = \"dr\", title = \"Differences decide\", question = \"Q?\",\n"
      "  author = \"t\",\n"
      "  arms = { { name = \"bare\", reference = true, run = \"{cmd}\" },\n"
      "           { name = \"bwrap\", run = \"bwrap {cmd}\" } },\n"
      "  workloads = { { name = \"exec\", source = \"import\", runs = 10,\n"
      "                  metrics = { \"wall_s\" } } },\n"
      "  rule = { seed = 3, resamples = 2000, verdicts = {\n"
      "    { \"slower\", diff_ci_excludes = 0.005, diff_above = 0.005,\n"
      "      ci_excludes = 1, ratio_above = 1.1 },\n"
      "    { \"faster\", diff_ci_excludes = -0.005, diff_below = -0.005,\n"
      "      ratio_below = 0.9, ratio_above = 0.1 },\n"
      "    { \"tie\", diff_ci_within = { -0.005, 0.005 },\n"
      "      ci_within = { 0.95, 1.05 } },\n"
      "    { \"odd\", diff_above = -1e-300,\n"
      "      diff_below = 1.0000000000000002 } } },\n"
      "}\n";
  core_err err;
  char hex[CORE_SHA256_HEX];
  proto_sheet *s = load_str("dr.lua", text, &err);
  CHECK(s != NULL);
  if (!s) {
    fprintf(stderr, "%s\n", err.msg);
    return;
  }
  CHECK(proto_plan_rule_sha256(s, hex) == 0);
  CHECK_STR(
      hex, "5befdebbaed8df4744f9e94c792628a619f6975dd6dd18146d21697613a1e733");
  proto_sheet_free(s);
}

/* Words alone: a rule whose decisions are the same but whose verdicts
 * read otherwise. */
static void test_words_only(void) {
  static const char a[] =
      "protocol { id = \"w\", title = \"W\",\n"
      "  arms = { { name = \"a\", reference = true }, { name = \"b\" } },\n"
      "  workloads = { { name = \"w\", metrics = { \"pss_mib\" } } },\n"
      "  rule = { seed = 7, verdicts = { { \"slower\", ci_excludes = 1,\n"
      "    ratio_above = 1.1 } } } }\n";
  static const char b[] =
      "protocol { id = \"w\", title = \"W\",\n"
      "  arms = { { name = \"a\", reference = true }, { name = \"b\" } },\n"
      "  workloads = { { name = \"w\", metrics = { \"pss_mib\" } } },\n"
      "  rule = { seed = 7, verdicts = { { \"slower\", ci_excludes = 1,\n"
      "    ratio_above = 1.1, names = { memory = \"more memory\" } } } } }\n";
  core_err err;
  proto_sheet *x = load_str("a.lua", a, &err), *y = load_str("b.lua", b, &err);
  CHECK(x && y);
  if (x && y) {
    CHECK(proto_same_rule(&x->rule, &y->rule));
    CHECK(!proto_same_rule_words(x, y));
    CHECK(proto_same_rule_words(x, x));
    CHECK_STR(proto_verdict_word(x, &x->rule.verdicts[0], "pss_mib"),
              "higher");
    CHECK_STR(proto_verdict_word(y, &y->rule.verdicts[0], "pss_mib"),
              "more memory");
  }
  proto_sheet_free(x);
  proto_sheet_free(y);
}

int main(void) {
  test_builtin_metrics();
  test_metric_words();
  test_words_only();
  test_rule_digest();
  test_seed_fields();
  test_function_claims();
  test_budget_spent();
  test_expand();
  test_messages();
  test_starter();
  test_compare_versions();
  test_alloc_failures(1);
  test_alloc_failures(0);
  return HARNESS_END();
}
