/* test_oom.c: allocation failures injected through core_mem_fail_after at
 * every allocation of the sheet loader, the analysis and the report
 * writers, one after the other (k = 0, 1, 2, ... until the operation
 * succeeds). Each failure must come back as an error status with a
 * message; an operation that reports success must have produced exactly
 * what it produces without faults. Run under the ASan build, the same
 * sweeps also prove that no failure path leaks.
 *
 * Covered: every allocation prereg makes itself, and Lua's (protocols/
 * routes lua_newstate through core_realloc) and jansson's (data/ sets its
 * allocator to core_malloc). Not covered: allocations inside GSL, cmark-gfm
 * and libxlsxwriter, which use malloc directly.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "core/core.h"
#include "data/data.h"
#include "harness.h"
#include "protocols/proto.h"
#include "reports/report.h"

/* A sheet that reaches most of the loader: vars, arms with requires and
 * versions, an image, every kind of workload, verdicts, all four kinds of
 * claim and an amendment. */
static const char sheet_text[] =
    "protocol {\n"
    "  id = \"oom\", title = \"Allocation failures\",\n"
    "  question = \"Does every failure come back?\", author = \"t\",\n"
    "  vars = { root = \"/tmp\", flags = \"-q\" },\n"
    "  arms = {\n"
    "    { name = \"bare\", reference = true },\n"
    "    { name = \"env\", run = \"env {flags} {cmd}\",\n"
    "      requires = { \"true\" }, versions = { \"env --version\" } },\n"
    "    { name = \"nice\", run = \"nice {cmd}\" },\n"
    "  },\n"
    "  image = { tree = \"{root}\" },\n"
    "  workloads = {\n"
    "    { name = \"startup\", runs = 20, warmup = 1, cmd = \"true\",\n"
    "      metrics = { \"wall_s\", \"maxrss_kib\" } },\n"
    "    { name = \"steps\", runs = 5, steps = { \"true\", \"ls\" },\n"
    "      expect_exit = \"reference\", order = \"blocked\" },\n"
    "    { name = \"imported\", metrics = { \"wall_s\" } },\n"
    "  },\n"
    "  rule = { estimator = \"median\", confidence = 0.9, resamples = 300,\n"
    "    seed = 11, verdicts = {\n"
    "      { \"slower\", ci_excludes = 1, ratio_above = 1.1 },\n"
    "      { \"faster\", ci_excludes = 1, ratio_below = 0.9 },\n"
    "      { \"tie\", ci_within = { 0.9, 1.1 } } } },\n"
    "  hypotheses = {\n"
    "    { id = \"H1\", says = \"env is slower\", workload = \"startup\",\n"
    "      metric = \"wall_s\", arms = { \"env\" }, claim = at_least(1.2) },\n"
    "    { id = \"H2\", says = \"nice costs little\", workload = "
    "\"startup\",\n"
    "      metric = \"wall_s\", arms = { \"nice\" }, claim = below(2) },\n"
    "    { id = \"H3\", says = \"ties\", workload = \"startup\",\n"
    "      metric = \"maxrss_kib\", arms = { \"env\", \"nice\" },\n"
    "      claim = verdict_is(\"tie\") },\n"
    "    { id = \"H4\", says = \"env is the slowest\",\n"
    "      claim = function(results)\n"
    "        local top, r0\n"
    "        for _, r in ipairs(results) do\n"
    "          if r.metric == \"wall_s\" and (not r0 or r.ratio > r0) then\n"
    "            top, r0 = r.arm, r.ratio end end\n"
    "        if top == \"env\" then return \"held\", \"env first\" end\n"
    "        return \"not held\", string.format(\"%s first\", top)\n"
    "      end },\n"
    "  },\n"
    "  threats = { \"One machine.\", \"Small samples.\" },\n"
    "  amendments = { { date = \"2026-10-21\", why = \"Add nice.\" } },\n"
    "}\n";

/* A sheet with hosts, for the counting rule per host and the analysis
 * and report across hosts. */
static const char hosts_text[] =
    "protocol {\n"
    "  id = \"oomhosts\", title = \"Across hosts\",\n"
    "  question = \"Does every failure come back, per host?\",\n"
    "  arms = { { name = \"bare\", reference = true },\n"
    "           { name = \"env\", run = \"env {cmd}\" } },\n"
    "  workloads = { { name = \"startup\", runs = 6, cmd = \"true\" } },\n"
    "  rule = { resamples = 200, seed = 3, verdicts = {\n"
    "      { \"slower\", ci_excludes = 1, ratio_above = 1.1 } } },\n"
    "  hypotheses = {\n"
    "    { id = \"H1\", says = \"env is slower\", workload = \"startup\",\n"
    "      metric = \"wall_s\", arms = { \"env\" }, claim = at_least(1.2) } "
    "},\n"
    "  hosts = { backend = \"slurm\", nodes = { \"n1\", \"n2\", \"n3\" },\n"
    "    min_completed = 0.8, min_hosts = 2,\n"
    "    across = { same_verdict = true, max_spread = 1.5 } },\n"
    "}\n";

/* Prints the first line where two texts differ (for diagnosis). */
static void show_diff(const char *a, const char *b) {
  size_t line = 1, i = 0;
  if (!a || !b) {
    fprintf(stderr, "  (%s missing)\n", a ? "result" : "baseline");
    return;
  }
  while (a[i] && a[i] == b[i]) {
    if (a[i] == '\n')
      line++;
    i++;
  }
  {
    const char *la = a + i, *lb = b + i;
    while (la > a && la[-1] != '\n')
      la--;
    lb = b + (la - a);
    fprintf(stderr, "  line %zu: want: %.*s\n", line, (int)strcspn(la, "\n"),
            la);
    fprintf(stderr, "  line %zu: got:  %.*s\n", line, (int)strcspn(lb, "\n"),
            lb);
  }
}

/* Sweeps stop here at the latest: no operation allocates this often. */
#define MAX_POINTS 200000L

typedef struct sweep {
  const char *name;
  long points;     /* failure points: k values that failed */
  long unreported; /* failed allocation, yet OK and a different result */
  long silent;     /* error status without a message */
} sweep;

static void sweep_report(const sweep *sw, int sticky) {
  printf("%-22s %s: %5ld failure points, each an error%s\n", sw->name,
         sticky ? "all after k" : "only the k-th", sw->points,
         sw->unreported ? " (SOME NOT)" : "");
}

/* Checks one failed attempt. */
static void check_failure(sweep *sw, long k, core_status st,
                          const core_err *err) {
  sw->points++;
  CHECK(st != CORE_OK);
  if (!err->msg[0]) {
    sw->silent++;
    fprintf(stderr, "%s: k=%ld: error %d without a message\n", sw->name, k,
            (int)st);
    CHECK(err->msg[0] != '\0');
  }
}

/* Sheet loader */

static char *sheet_fingerprint(const proto_sheet *s) {
  core_buf b;
  core_buf_init(&b);
  proto_summary(s, &b);
  proto_rule_words(s, &b);
  return b.oom ? NULL : core_buf_steal(&b);
}

static void sweep_sheet(int sticky, const char *want) {
  sweep sw = {"sheet loader", 0, 0, 0};
  for (long k = 0; k < MAX_POINTS; k++) {
    long injected;
    core_err err = {0};
    proto_sheet *s;
    core_mem_fail_after(k, sticky);
    s = proto_sheet_load_text("oom.lua", sheet_text, strlen(sheet_text), &err);
    injected = core_mem_failures();
    core_mem_fail_after(-1, 0);
    if (!s) {
      check_failure(&sw, k, err.status ? err.status : CORE_EPROTOCOL, &err);
      CHECK(err.status != CORE_OK);
      if (!injected)
        break;
      continue;
    }
    {
      char *got = sheet_fingerprint(s);
      if (!got || strcmp(got, want) != 0) {
        sw.unreported++;
        fprintf(stderr,
                "sheet loader: k=%ld: loaded, but not the same "
                "sheet\n",
                k);
      }
      CHECK(got && strcmp(got, want) == 0);
      core_free(got);
    }
    proto_sheet_free(s);
    if (!injected)
      break;
  }
  CHECK(sw.points > 0 && sw.points < MAX_POINTS);
  sweep_report(&sw, sticky);
}

/* Analysis */

static void add_row(data_rowset *rs, const char *w, const char *arm,
                    const char *metric, long round, double v, int valid) {
  data_row *r;
  char id[32];
  if (rs->n == rs->cap) {
    rs->cap = rs->cap ? 2 * rs->cap : 64;
    rs->rows = core_realloc(rs->rows, rs->cap * sizeof *rs->rows);
    if (!rs->rows)
      abort();
  }
  r = &rs->rows[rs->n++];
  memset(r, 0, sizeof *r);
  snprintf(id, sizeof id, "b0001-%04zu", rs->n);
  r->sheet_sha256 = core_strdup("");
  r->batch = core_strdup("b0001");
  r->source = core_strdup("run");
  r->workload = core_strdup(w);
  r->arm = core_strdup(arm);
  r->round = round;
  r->seq = (long)rs->n;
  r->run_id = core_strdup(id);
  r->started_at = core_strdup("2026-10-21T09:30:00Z");
  r->host = core_strdup("h");
  r->image_digest = core_strdup("");
  r->cache_policy = core_strdup("warm");
  r->cache_state = core_strdup("");
  r->exit_code = core_strdup(valid ? "0" : "1");
  r->valid = valid;
  r->reason = core_strdup(valid ? "" : "exit code 1, expected 0");
  r->metric = core_strdup(metric);
  r->value = valid ? v : NAN;
  r->has_value = valid;
}

/* Rows of the hosts sheet: n1 whole, n2 short of its last round and with
 * a row from a host not the sheet's, n3 with its first round twice
 * (beyond its plan) and a lost node's run. */
static void make_host_rows(data_rowset *rs) {
  static const char *const arms[] = {"bare", "env"};
  static const char *const hosts[] = {"n1", "n2", "n3"};
  memset(rs, 0, sizeof *rs);
  for (int h = 0; h < 3; h++)
    for (long i = 1; i <= 6 + (h == 2); i++)
      for (int a = 0; a < 2; a++) {
        if (h == 1 && i == 6)
          continue;
        add_row(rs, "startup", arms[a], "wall_s", h == 2 && i == 7 ? 1 : i,
                0.001 * (1 + a * 0.5) * (1 + 0.01 * (double)(i + h)), 1);
        core_free(rs->rows[rs->n - 1].host);
        rs->rows[rs->n - 1].host = core_strdup(hosts[h]);
      }
  add_row(rs, "startup", "bare", "wall_s", 2, 0.001, 1);
  core_free(rs->rows[rs->n - 1].host);
  rs->rows[rs->n - 1].host = core_strdup("n9");
  add_row(rs, "startup", "env", "wall_s", 6, 0.001, 0);
  core_free(rs->rows[rs->n - 1].host);
  core_free(rs->rows[rs->n - 1].reason);
  rs->rows[rs->n - 1].host = core_strdup("n2");
  rs->rows[rs->n - 1].reason = core_strdup("node lost: no end of the round");
}

static void make_rows(data_rowset *rs) {
  static const char *const arms[] = {"bare", "env", "nice"};
  memset(rs, 0, sizeof *rs);
  for (long i = 1; i <= 20; i++)
    for (int a = 0; a < 3; a++) {
      double base = 0.001 * (1 + a * 0.4) * (1 + 0.01 * (double)(i % 7));
      add_row(rs, "startup", arms[a], "wall_s", i, base, 1);
      add_row(rs, "startup", arms[a], "maxrss_kib", i,
              1000 + 3 * (double)(i % 5), 1);
    }
  for (long i = 1; i <= 5; i++)
    for (int a = 0; a < 3; a++)
      add_row(rs, "steps", arms[a], "wall_s", i, 0.01 + 0.001 * a,
              i != 3 || a != 1);
}

static char *summary_json(const analysis_summary *s) {
  core_buf b;
  core_err err = {0};
  core_buf_init(&b);
  if (analysis_json(s, &b, &err) != CORE_OK || b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  analysis_write_table(s, NULL, 100, &b);
  return b.oom ? NULL : core_buf_steal(&b);
}

static void sweep_analysis(const proto_sheet *s, const data_rowset *rows,
                           int sticky, const char *want) {
  sweep sw = {"analysis_run", 0, 0, 0};
  for (long k = 0; k < MAX_POINTS; k++) {
    long injected;
    core_err err = {0};
    analysis_summary *sum = NULL;
    core_status st;
    core_mem_fail_after(k, sticky);
    st = analysis_run(s, s, NULL, rows, 1, &sum, &err);
    injected = core_mem_failures();
    core_mem_fail_after(-1, 0);
    if (st != CORE_OK) {
      check_failure(&sw, k, st, &err);
      CHECK(sum == NULL);
      analysis_summary_free(sum);
      if (!injected)
        break;
      continue;
    }
    {
      char *got = summary_json(sum);
      if (!got || strcmp(got, want) != 0) {
        sw.unreported++;
        fprintf(stderr,
                "analysis_run: k=%ld: OK, but a different "
                "summary:\n",
                k);
        show_diff(want, got);
      }
      CHECK(got && strcmp(got, want) == 0);
      core_free(got);
    }
    analysis_summary_free(sum);
    if (!injected)
      break;
  }
  CHECK(sw.points > 0 && sw.points < MAX_POINTS);
  sweep_report(&sw, sticky);
}

/* Reports */

static int same_doc(const report_doc *a, const report_doc *b) {
  if (a->md_len != b->md_len || memcmp(a->md, b->md, a->md_len) ||
      a->html_len != b->html_len || memcmp(a->html, b->html, a->html_len) ||
      a->n_plots != b->n_plots)
    return 0;
  for (size_t i = 0; i < a->n_plots; i++)
    if (a->plots[i].svg_len != b->plots[i].svg_len ||
        memcmp(a->plots[i].svg, b->plots[i].svg, a->plots[i].svg_len) ||
        strcmp(a->plots[i].file, b->plots[i].file))
      return 0;
  return 1;
}

static void sweep_render(const report_input *in, const report_doc *want,
                         int sticky) {
  sweep sw = {"report_render", 0, 0, 0};
  for (long k = 0; k < MAX_POINTS; k++) {
    long injected;
    core_err err = {0};
    report_doc doc;
    core_status st;
    memset(&doc, 0, sizeof doc);
    core_mem_fail_after(k, sticky);
    st = report_render(in, &doc, &err);
    injected = core_mem_failures();
    core_mem_fail_after(-1, 0);
    if (st != CORE_OK) {
      check_failure(&sw, k, st, &err);
      if (!injected) /* a failure of its own: the sweep cannot go on */
        break;
      continue;
    }
    if (!same_doc(&doc, want)) {
      sw.unreported++;
      fprintf(stderr, "report_render: k=%ld: OK, but a different report:\n",
              k);
      if (doc.md_len != want->md_len || memcmp(doc.md, want->md, doc.md_len))
        show_diff(want->md, doc.md);
      else if (doc.html_len != want->html_len ||
               memcmp(doc.html, want->html, doc.html_len))
        fprintf(stderr, "  report.html differs (%zu bytes, want %zu)\n",
                doc.html_len, want->html_len);
      else
        fprintf(stderr, "  the plots differ (%zu, want %zu)\n", doc.n_plots,
                want->n_plots);
    }
    CHECK(same_doc(&doc, want));
    report_doc_free(&doc);
    if (!injected)
      break;
  }
  CHECK(sw.points > 0 && sw.points < MAX_POINTS);
  sweep_report(&sw, sticky);
}

static long file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* report_write_xlsx and report_write_all write files: each attempt goes
 * to a fresh name, and success must leave a complete file. */
static void sweep_write(const report_input *in, const report_doc *doc,
                        const char *dir, int xlsx, int sticky) {
  sweep sw = {xlsx ? "report_write_xlsx" : "report_write_all", 0, 0, 0};
  long want = -1;
  char path[600];
  {
    core_err err = {0};
    snprintf(path, sizeof path, "%s/base-%d", dir, xlsx);
    mkdir(path, 0755);
    if (xlsx)
      strncat(path, "/r.xlsx", sizeof path - strlen(path) - 1);
    CHECK((xlsx ? report_write_xlsx(in, path, &err)
                : report_write_all(in, doc, path, &err)) == CORE_OK);
    if (!xlsx)
      strncat(path, "/report.html", sizeof path - strlen(path) - 1);
    want = file_size(path);
    CHECK(want > 0);
  }
  for (long k = 0; k < MAX_POINTS; k++) {
    long injected;
    core_err err = {0};
    core_status st;
    snprintf(path, sizeof path, "%s/try-%d-%d-%ld", dir, xlsx, sticky, k);
    mkdir(path, 0755);
    if (xlsx)
      strncat(path, "/r.xlsx", sizeof path - strlen(path) - 1);
    core_mem_fail_after(k, sticky);
    st = xlsx ? report_write_xlsx(in, path, &err)
              : report_write_all(in, doc, path, &err);
    injected = core_mem_failures();
    core_mem_fail_after(-1, 0);
    if (st != CORE_OK) {
      check_failure(&sw, k, st, &err);
      if (!injected) /* a failure of its own: the sweep cannot go on */
        break;
      continue;
    }
    if (!xlsx)
      strncat(path, "/report.html", sizeof path - strlen(path) - 1);
    /* xlsx files hold no clock (constant-memory mode aside), so a
     * complete file has the size of the fault-free one. */
    CHECK(file_size(path) == want);
    if (file_size(path) != want)
      sw.unreported++;
    if (!injected)
      break;
  }
  CHECK(sw.points > 0 && sw.points < MAX_POINTS);
  sweep_report(&sw, sticky);
}

int main(void) {
  core_err err = {0};
  proto_sheet *s;
  data_rowset rows;
  analysis_summary *sum = NULL;
  report_input in;
  report_doc doc;
  char dir[] = "/tmp/prereg-oom-XXXXXX";
  char *want_sheet, *want_summary, *cmd;

  analysis_init();
  s = proto_sheet_load_text("oom.lua", sheet_text, strlen(sheet_text), &err);
  if (!s) {
    fprintf(stderr, "the test sheet does not load: %s\n", err.msg);
    CHECK(0);
    return HARNESS_END();
  }
  want_sheet = sheet_fingerprint(s);
  make_rows(&rows);
  CHECK(analysis_run(s, s, NULL, &rows, 1, &sum, &err) == CORE_OK);
  if (!sum) {
    fprintf(stderr, "analysis_run: %s\n", err.msg);
    return HARNESS_END();
  }
  want_summary = summary_json(sum);
  CHECK(want_sheet && want_summary);
  memset(&in, 0, sizeof in);
  in.sheet = s;
  in.summary = sum;
  in.rows = &rows;
  CHECK(report_render(&in, &doc, &err) == CORE_OK);
  CHECK(mkdtemp(dir) != NULL);

  /* Across hosts: the rule per host, each host's analysis, the entries
   * across hosts and the report's section of them. */
  proto_sheet *hs =
      proto_sheet_load_text("hosts.lua", hosts_text, strlen(hosts_text), &err);
  data_rowset hrows;
  analysis_summary *hsum = NULL;
  report_input hin;
  report_doc hdoc;
  char *want_hosts = NULL;
  CHECK(hs != NULL);
  make_host_rows(&hrows);
  if (hs && analysis_run(hs, hs, NULL, &hrows, 1, &hsum, &err) == CORE_OK)
    want_hosts = summary_json(hsum);
  CHECK(want_hosts != NULL);
  /* The rule per host: n2 short of its plan, named; n3 beyond its own. */
  CHECK(want_hosts && strstr(want_hosts, "INCOMPLETE (34/36; n2 10/12)"));
  CHECK(want_hosts && strstr(want_hosts, "BEYOND PLAN"));
  CHECK(want_hosts && strstr(want_hosts, "host 'n9' is not one of the"));
  memset(&hin, 0, sizeof hin);
  hin.sheet = hs;
  hin.summary = hsum;
  hin.rows = &hrows;
  CHECK(hsum && report_render(&hin, &hdoc, &err) == CORE_OK);

  for (int sticky = 1; sticky >= 0; sticky--) {
    sweep_sheet(sticky, want_sheet);
    sweep_analysis(s, &rows, sticky, want_summary);
    sweep_render(&in, &doc, sticky);
    sweep_write(&in, &doc, dir, 1, sticky);
    sweep_write(&in, &doc, dir, 0, sticky);
    if (want_hosts) {
      sweep_analysis(hs, &hrows, sticky, want_hosts);
      sweep_render(&hin, &hdoc, sticky);
    }
  }
  if (hsum)
    report_doc_free(&hdoc);
  analysis_summary_free(hsum);
  data_rowset_free(&hrows);
  proto_sheet_free(hs);
  core_free(want_hosts);

  report_doc_free(&doc);
  analysis_summary_free(sum);
  data_rowset_free(&rows);
  proto_sheet_free(s);
  core_free(want_sheet);
  core_free(want_summary);
  if ((cmd = core_asprintf("rm -rf '%s'", dir)) != NULL) {
    if (system(cmd) != 0)
      fprintf(stderr, "could not remove %s\n", dir);
    core_free(cmd);
  }
  return HARNESS_END();
}
