/* test_report.c: reports/ from hand-built inputs: Markdown escaping,
 * number formatting, the SVG forest plot, determinism, HTML safety,
 * detected threats, the UNVERIFIED stamp and the XLSX writer's errors.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "reports/report.h"

static char *S(const char *s) {
  return core_strdup(s);
}

static char **list(const char *a, const char *b) {
  char **v = core_calloc(2, sizeof *v);
  v[0] = S(a);
  v[1] = b ? S(b) : NULL;
  return v;
}

/* A small experiment built by hand */

static proto_sheet *make_sheet(const char *title) {
  proto_sheet *s = core_calloc(1, sizeof *s);
  s->path = S("protocols/demo.lua");
  s->id = S("demo");
  s->title = S(title);
  s->question = S("How much does *isolation* cost? [link](javascript:x)");
  s->author = S("A. Person <a@b.c>");
  s->n_arms = 2;
  s->arms = core_calloc(2, sizeof *s->arms);
  s->arms[0].name = S("bare");
  s->arms[0].reference = 1;
  s->arms[0].run = S("{cmd}");
  s->arms[1].name = S("bwrap");
  s->arms[1].run = S("bwrap --ro-bind / / -- {cmd} | cat");
  s->reference = 0;
  s->n_workloads = 2;
  s->workloads = core_calloc(2, sizeof *s->workloads);
  s->workloads[0].name = S("startup");
  s->workloads[0].runs = 30;
  s->workloads[0].cmd = S("/bin/true");
  s->workloads[0].metrics = list("wall_s", NULL);
  s->workloads[0].n_metrics = 1;
  s->workloads[0].order = PROTO_ORDER_BLOCKED;
  s->workloads[1].name = S("memory");
  s->workloads[1].runs = 0;
  s->workloads[1].metrics = list("pss_mib", NULL);
  s->workloads[1].n_metrics = 1;
  s->rule.estimator = S("median");
  s->rule.confidence = 0.95;
  s->rule.resamples = 10000;
  s->rule.seed = 17;
  s->rule.n_verdicts = 1;
  s->rule.verdicts = core_calloc(1, sizeof *s->rule.verdicts);
  s->rule.verdicts[0].name = S("slower");
  s->rule.verdicts[0].ratio.has_ci_excludes = 1;
  s->rule.verdicts[0].ratio.ci_excludes = 1;
  s->rule.verdicts[0].ratio.has_above = 1;
  s->rule.verdicts[0].ratio.above = 1.1;
  s->n_threats = 1;
  s->threats = list("One machine | one <b>kernel</b>.", NULL);
  memset(s->sha256, 'a', 64);
  return s;
}

static void set_result(analysis_result *r, const char *w, const char *m,
                       double ratio, double lo, double hi, const char *v) {
  r->workload = S(w);
  r->metric = S(m);
  r->arm = S("bwrap");
  r->reference = S("bare");
  r->n = 30;
  r->n_reference = 30;
  r->median = 0.0041;
  r->median_reference = 0.0012;
  r->ratio = ratio;
  r->ci_low = lo;
  r->ci_high = hi;
  r->verdict = S(v);
}

static void set_cell(analysis_cell *c, const char *w, const char *m,
                     const char *arm, size_t n, double med) {
  c->workload = S(w);
  c->metric = S(m);
  c->arm = S(arm);
  c->n_valid = n;
  c->n_planned = 30;
  c->median = med;
}

static analysis_summary *make_summary(void) {
  analysis_summary *a = core_calloc(1, sizeof *a);
  a->protocol = S("demo");
  a->sheet_sha256 = S("aaaa");
  a->estimator = S("median");
  a->confidence = 0.95;
  a->resamples = 10000;
  a->seed = 17;
  a->sheet_version = 1;
  a->n_results = 2;
  a->results = core_calloc(2, sizeof *a->results);
  set_result(&a->results[0], "startup", "wall_s", 3.42, 3.1, 3.8, "slower");
  set_result(&a->results[1], "memory", "pss_mib", 1.02, 0.97, 1.03,
             "inconclusive");
  a->n_cells = 4;
  a->cells = core_calloc(4, sizeof *a->cells);
  set_cell(&a->cells[0], "startup", "wall_s", "bare", 30, 0.0012);
  set_cell(&a->cells[1], "startup", "wall_s", "bwrap", 30, 0.0041);
  set_cell(&a->cells[2], "memory", "pss_mib", "bare", 4, 11.5);
  set_cell(&a->cells[3], "memory", "pss_mib", "bwrap", 4, 11.7);
  a->n_hypotheses = 1;
  a->hypotheses = core_calloc(1, sizeof *a->hypotheses);
  a->hypotheses[0].id = S("H1");
  a->hypotheses[0].says = S("bwrap takes at least 3x as long");
  a->hypotheses[0].outcome = PROTO_HELD;
  a->hypotheses[0].reason = S("CI low 3.10 >= 3");
  a->n_exclusions = 1;
  a->exclusions = core_calloc(1, sizeof *a->exclusions);
  a->exclusions[0].workload = S("startup");
  a->exclusions[0].arm = S("bwrap");
  a->exclusions[0].reason = S("exit code 1, expected 0");
  a->exclusions[0].runs = 2;
  return a;
}

static void add_row(data_rowset *rs, const char *w, const char *arm,
                    const char *metric, double v, const char *host,
                    const char *digest, int quick, const char *at) {
  data_row *r;
  if (rs->n == rs->cap) {
    rs->cap = rs->cap ? rs->cap * 2 : 8;
    rs->rows = core_realloc(rs->rows, rs->cap * sizeof *rs->rows);
  }
  r = &rs->rows[rs->n++];
  memset(r, 0, sizeof *r);
  r->sheet_version = 0;
  r->sheet_sha256 = S("aaaa");
  r->batch = S("b0001");
  r->source = S("run");
  r->workload = S(w);
  r->arm = S(arm);
  r->round = (long)rs->n;
  r->seq = (long)rs->n;
  r->run_id = S("r1");
  r->started_at = S(at);
  r->host = S(host);
  r->image_digest = S(digest);
  r->cache_policy = S("warm");
  r->cache_state = S("");
  r->exit_code = S("0");
  r->valid = 1;
  r->reason = S("");
  r->metric = S(metric);
  r->value = v;
  r->has_value = 1;
  r->quick = quick;
}

static report_input *make_input(const char *title) {
  report_input *in = core_calloc(1, sizeof *in);
  data_batch_info *b;
  in->sheet = make_sheet(title);
  in->summary = make_summary();
  in->rows = core_calloc(1, sizeof *in->rows);
  add_row(in->rows, "startup", "bare", "wall_s", 0.0012, "hostA", "d1", 0,
          "2026-10-21T08:00:00Z");
  add_row(in->rows, "startup", "bwrap", "wall_s", 0.0041, "hostA", "d1", 0,
          "2026-10-21T08:00:01Z");
  add_row(in->rows, "startup", "bwrap", "wall_s", 0.0042, "hostB", "d2", 1,
          "2026-10-22T09:00:00Z");
  in->extra = core_calloc(1, sizeof *in->extra);
  in->extra->n_batches = 1;
  in->extra->batches = core_calloc(1, sizeof *in->extra->batches);
  b = &in->extra->batches[0];
  b->id = S("b0001");
  b->n_facts = 3;
  b->facts = core_calloc(3, sizeof *b->facts);
  b->facts[0].key = S("host.cores");
  b->facts[0].value = S("4");
  b->facts[1].key = S("host.loadavg[0]");
  b->facts[1].value = S("9.5");
  b->facts[2].key = S("versions.bwrap");
  b->facts[2].value = S("bubblewrap 0.8.0");
  in->extra->n_manifest = 1;
  in->extra->manifest = core_calloc(1, sizeof *in->extra->manifest);
  in->extra->manifest[0].path = S("batches/b0001.csv");
  memset(in->extra->manifest[0].sha256, 'b', 64);
  in->registered_at = S("2026-10-20T10:00:00Z");
  in->n_amendments = 1;
  in->amendments = core_calloc(1, sizeof *in->amendments);
  in->amendments[0].number = 1;
  in->amendments[0].date = S("2026-10-21");
  in->amendments[0].filed_at = S("2026-10-21T07:00:00Z");
  in->amendments[0].runs_before = 12;
  in->amendments[0].why = S("Add the memory workload.");
  in->amendments[0].diff = S("--- v0\n+++ v1\n+  { name = \"memory\" },\n"
                             "```not a fence end\n");
  in->amendments[0].affected = S("memory (added)");
  in->sheet_arg = S("protocols/demo.lua");
  in->data_arg = S("my data");
  return in;
}

static void test_svg(void) {
  report_forest_row rows[3] = {
      {"bwrap", 3.42, 3.1, 3.8, "slower", "startup · wall_s", 1},
      {"<evil>&", 0.9, 0.8, 1.05, "inconclusive", "startup · wall_s", 0},
      {"none", NAN, NAN, NAN, NULL, "memory · pss_mib", 0}};
  report_forest_mark marks[2] = {{0.95, 1.05, "tie"},
                                 {1.1, 0, "slower above 1.1"}};
  core_buf a, b;
  core_buf_init(&a);
  core_buf_init(&b);
  report_forest_svg(&a, "startup — wall_s", rows, 3, marks, 2, NULL, 0);
  report_forest_svg(&b, "startup — wall_s", rows, 3, marks, 2, NULL, 0);
  CHECK(a.len > 500 && a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
  CHECK(strncmp(a.data, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
  CHECK(strstr(a.data, "</svg>\n") != NULL);
  CHECK(strstr(a.data, "3.42× [3.10–3.80] slower") != NULL);
  CHECK(strstr(a.data, "&lt;evil&gt;&amp;") != NULL);
  CHECK(strstr(a.data, "<evil>") == NULL);
  CHECK(strstr(a.data, ">1×</text>") != NULL); /* a tick at 1 */
  CHECK(strstr(a.data, ">3×</text>") != NULL); /* 1x 3x ticks */
  CHECK(strstr(a.data, "no ratio") != NULL);
  /* Groups as headings, the worse verdict in red, the rule's marks. */
  CHECK(strstr(a.data, ">startup · wall_s</text>") != NULL);
  CHECK(strstr(a.data, ">memory · pss_mib</text>") != NULL);
  CHECK(strstr(a.data, "stroke=\"#b03a2e\" stroke-width=\"2\"") != NULL);
  CHECK(strstr(a.data, ">slower above 1.1</text>") != NULL);
  CHECK(strstr(a.data, ">tie</text>") != NULL);
  /* Log axis: the threshold at 1.1 sits between the ticks 1 and 3, in
   * proportion of the logs. */
  {
    const char *t1 = strstr(a.data, ">1×</text>"),
               *t3 = strstr(a.data, ">3×</text>");
    const char *m = strstr(a.data, "stroke=\"#b03a2e\" stroke-dasharray");
    double x1 = 0, x3 = 0, xm = 0;
    while (t1 > a.data && strncmp(t1, "<text", 5) != 0)
      t1--;
    while (t3 > a.data && strncmp(t3, "<text", 5) != 0)
      t3--;
    while (m && m > a.data && strncmp(m, "<line", 5) != 0)
      m--;
    CHECK(m && sscanf(m, "<line x1=\"%lf\"", &xm) == 1);
    CHECK(sscanf(t1, "<text x=\"%lf\"", &x1) == 1);
    CHECK(sscanf(t3, "<text x=\"%lf\"", &x3) == 1);
    CHECK(fabs((xm - x1) / (x3 - x1) - log(1.1) / log(3)) < 0.01);
  }
  core_buf_free(&a);
  core_buf_free(&b);
}

/* The runs of one workload and metric: every point below
 * REPORT_POINTS_MAX, a histogram above, and a file that stays small. */
static void test_runs_svg(void) {
  enum { BIG = 200000 };
  double small[30], *big = core_malloc(BIG * sizeof *big);
  unsigned order[30], batch[30], *bo = core_malloc(BIG * sizeof *bo),
                                 *bb = core_malloc(BIG * sizeof *bb);
  const char *names[2] = {"b0001", "b0002"};
  report_series arms[2];
  core_buf a;
  for (unsigned i = 0; i < 30; i++) {
    small[i] = 0.003 + 0.0001 * (i % 7);
    order[i] = 2 * i;
    batch[i] = i >= 15;
  }
  for (unsigned i = 0; i < BIG; i++) {
    big[i] = 0.004 + 0.0001 * (i % 11);
    bo[i] = 2 * i + 1;
    bb[i] = i >= BIG / 2;
  }
  arms[0] = (report_series){"bare", small, order, batch, 30,
                            NAN,    NAN,   NAN,   NAN,   NAN};
  arms[1] =
      (report_series){"<b>", small, order, batch, 30, NAN, NAN, NAN, NAN, NAN};
  core_buf_init(&a);
  report_runs_svg(&a, "startup · wall_s", "s", arms, 2, names, 2, NULL, 0);
  CHECK(!a.oom && strstr(a.data, "<circle") != NULL); /* points */
  CHECK(strstr(a.data, ">ms</text>") != NULL);        /* in real units */
  CHECK(strstr(a.data, ">b0002</text>") != NULL);     /* a batch boundary */
  CHECK(strstr(a.data, "stroke-dasharray=\"4 3\"") != NULL);
  CHECK(strstr(a.data, "&lt;b&gt;") != NULL && strstr(a.data, "<b>") == NULL);
  core_buf_free(&a);
  arms[1] = (report_series){"big", big, bo, bb, BIG, NAN, NAN, NAN, NAN, NAN};
  core_buf_init(&a);
  report_runs_svg(&a, "startup · wall_s", "s", arms, 2, names, 2, NULL, 0);
  CHECK(!a.oom && strstr(a.data, "fill-opacity=\"0.35\"") != NULL);
  CHECK(a.len < 100000); /* 200,000 values, a small file */
  core_buf_free(&a);
  core_free(big);
  core_free(bo);
  core_free(bb);
}

static void test_render(void) {
  report_input *in = make_input("Cost of <script>alert(1)</script> | x");
  report_doc d1, d2;
  core_err err = {0};
  CHECK(report_render(in, &d1, &err) == CORE_OK);
  CHECK(report_render(in, &d2, &err) == CORE_OK);
  /* Determinism: byte-identical twice. */
  CHECK(d1.md_len == d2.md_len && memcmp(d1.md, d2.md, d1.md_len) == 0);
  CHECK(d1.html_len == d2.html_len &&
        memcmp(d1.html, d2.html, d1.html_len) == 0);
  CHECK(d1.n_plots == 3 && d2.n_plots == 3);
  CHECK_STR(d1.plots[0].file, "overview.svg");
  CHECK_STR(d1.plots[1].file, "plot-1-startup-wall_s.svg");
  CHECK(d1.plots[1].svg_len == d2.plots[1].svg_len &&
        memcmp(d1.plots[1].svg, d2.plots[1].svg, d1.plots[1].svg_len) == 0);
  CHECK(d1.provenance_len == d2.provenance_len &&
        memcmp(d1.provenance, d2.provenance, d1.provenance_len) == 0);
  /* HTML safety: the title's script is text, never an element. */
  CHECK(strstr(d1.html, "<script") == NULL);
  CHECK(strstr(d1.html, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL);
  CHECK(strstr(d1.html, "javascript:") == NULL ||
        strstr(d1.html, "href=\"javascript:") == NULL);
  CHECK(strstr(d1.html, "<b>kernel</b>") == NULL);
  /* Tables and the plots inline, where the Markdown links them. */
  CHECK(strstr(d1.html, "<table>") != NULL);
  CHECK(strstr(d1.html, "<span class=\"plot\"><svg xmlns=") != NULL);
  CHECK(strstr(d1.html, "plot-1-startup") == NULL);
  CHECK(strstr(d1.html, "@media print") != NULL);
  /* The headline: hypotheses, then the matrix, then the overview. */
  CHECK(strstr(d1.md, "- H1 **held**: bwrap takes at least 3x as long (CI "
                      "low 3.10 >= 3).") != NULL);
  CHECK(strstr(d1.md, "| Workload · metric | n | bare (reference) | bwrap "
                      "|") != NULL);
  CHECK(strstr(d1.md, "| startup · wall_s | 30 | 1.20 ms (IQR 0) | 4.10 ms "
                      "(IQR 0) · 3.42× [3.10–3.80] **slower** |") != NULL);
  CHECK(strstr(d1.md, "](overview.svg)") != NULL &&
        strstr(d1.md, "](overview.svg)") < strstr(d1.md, "## The data"));
  CHECK(strstr(d1.md, "](plot-1-startup-wall_s.svg)") != NULL);
  CHECK(strstr(d1.md, "| startup · wall_s | bwrap | 30 of 30 | 4.10 ms "
                      "|") != NULL);
  /* Deviations in brief, the diff in provenance.md. */
  CHECK(strstr(d1.md, "## Deviations") != NULL);
  CHECK(strstr(d1.md, "**Amendment 1**, dated 2026-10-21") != NULL);
  CHECK(strstr(d1.md, "after 12 runs had been collected") != NULL);
  CHECK(strstr(d1.md, "Its diff is in provenance.md") != NULL);
  CHECK(strstr(d1.md, "--- v0") == NULL);
  CHECK(strstr(d1.provenance, "````diff\n--- v0") != NULL); /* outlasts ``` */
  CHECK(strstr(d1.md, "Blocked order: workload startup") != NULL);
  CHECK(strstr(d1.md, "Image changed during collection: arm bwrap ran on 2") !=
        NULL);
  CHECK(strstr(d1.md, "The host changed between batches: 2 hosts") != NULL);
  CHECK(strstr(d1.md, "Few valid runs (fewer than 6: the bootstrap interval "
                      "of a median is coarse): memory bare 4; memory bwrap "
                      "4.") != NULL);
  CHECK(strstr(d1.md, "load average of 9.50 on 4 cores") != NULL);
  CHECK(strstr(d1.md, "Quick mode: 1 of 3 runs") != NULL);
  CHECK(strstr(d1.md, "| startup | exit code 1, expected 0 | bwrap 2 |") !=
        NULL);
  /* Reproduce names the newest frozen version, not how we were called. */
  CHECK(strstr(d1.md, "prereg report data/demo/versions/v") != NULL);
  CHECK(strstr(d1.md, "my data") == NULL);
  /* Every batch fact and file digest: in provenance.md. */
  CHECK(strstr(d1.provenance, "| versions.bwrap | bubblewrap 0.8.0 |") !=
        NULL);
  CHECK(strstr(d1.provenance, "| batches/b0001.csv | `bbbb") != NULL);
  CHECK(strstr(d1.md, "| batches/b0001.csv |") == NULL);
  CHECK(strstr(d1.md, "UNVERIFIED") == NULL);
  CHECK(strstr(d1.md, "libxlsxwriter 1.1.4") != NULL);
  report_doc_free(&d1);
  report_doc_free(&d2);

  /* No amendments: the Deviations section says none; UNVERIFIED stamp. */
  for (size_t i = 0; i < in->n_amendments; i++) {
    core_free(in->amendments[i].date);
    core_free(in->amendments[i].filed_at);
    core_free(in->amendments[i].why);
    core_free(in->amendments[i].diff);
    core_free(in->amendments[i].affected);
  }
  in->n_amendments = 0;
  in->unverified = S("batches/b0001.csv: digest does not match");
  CHECK(report_render(in, &d1, &err) == CORE_OK);
  CHECK(strstr(d1.md, "## Deviations\n\nNone.") != NULL);
  /* The status line first, the title after it. */
  CHECK(strstr(d1.md, "> **Status: UNVERIFIED.**") == d1.md);
  CHECK(strstr(d1.md, "\n\n# Cost of") != NULL);
  CHECK(strstr(d1.md, "> **UNVERIFIED.**") != NULL);
  CHECK(strstr(d1.md, "batches/b0001.csv: digest does not match") != NULL);
  CHECK(strstr(d1.html, "<div class=\"unverified\">UNVERIFIED</div>") != NULL);
  report_doc_free(&d1);
  report_input_free(in);
}

static void test_xlsx(void) {
  report_input *in = make_input("Demo");
  core_err err = {0};
  char dir[] = "/tmp/prereg-report-XXXXXX";
  char *path, *bad;
  FILE *f;
  char magic[2] = {0, 0};
  CHECK(mkdtemp(dir) != NULL);
  path = core_path_join(dir, "r.xlsx");
  CHECK(report_write_xlsx(in, path, &err) == CORE_OK);
  f = fopen(path, "rb");
  CHECK(f != NULL);
  if (f) {
    CHECK(fread(magic, 1, 2, f) == 2);
    fclose(f);
  }
  CHECK(magic[0] == 'P' && magic[1] == 'K');
  /* An output folder that does not exist: the error names the path. */
  bad = core_path_join(dir, "missing/r.xlsx");
  CHECK(report_write_xlsx(in, bad, &err) == CORE_EXLSX);
  CHECK(strstr(err.msg, "missing/r.xlsx") != NULL);
  /* The folder check happens before any work. */
  memset(&err, 0, sizeof err);
  CHECK(report_check_dir("/proc/prereg-cannot-exist", &err) != CORE_OK);
  CHECK(err.msg[0] != '\0');
  CHECK(report_check_dir(dir, &err) == CORE_OK);
  remove(path);
  rmdir(dir);
  core_free(path);
  core_free(bad);
  report_input_free(in);
}

/* data_report_inputs_load on a hand-made experiment folder: facts
 * flattened and sorted, a TSV process list, the manifest. */
static void write_text(const char *dir, const char *rel, const char *text) {
  char *p = core_path_join(dir, rel);
  FILE *f = fopen(p, "w");
  CHECK(f != NULL);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  core_free(p);
}

static void test_inputs(void) {
  char dir[] = "/tmp/prereg-inputs-XXXXXX";
  char *sub;
  data_experiment exp;
  data_report_inputs *in = NULL;
  core_err err = {0};
  CHECK(mkdtemp(dir) != NULL);
  sub = core_path_join(dir, "batches/b0002");
  CHECK(core_mkdir_p(sub, 0755, &err) == CORE_OK);
  write_text(dir, "batches/b0001.csv", "x\n");
  write_text(dir, "batches/b0002.csv", "x\n");
  write_text(dir, "batches/b0002.json",
             "{\"kind\": \"run\", \"host\": {\"cores\": 2, "
             "\"loadavg_start\": [3.5, 1, 0.5], \"hostname\": \"h\"}}");
  write_text(dir, "batches/b0002/r0001.procs.tsv",
             "pid\tpss_kib\tcmdline\n12\t2048\tsleep 300\n13\t100\tsh\n");
  write_text(dir, "MANIFEST",
             "0123456789012345678901234567890123456789012345678901234567890123"
             "  batches/b0001.csv\n");
  memset(&exp, 0, sizeof exp);
  exp.dir = dir;
  exp.id = (char *)"x";
  CHECK(data_report_inputs_load(&exp, &in, &err) == CORE_OK);
  if (in) {
    CHECK(in->n_batches == 2);
    CHECK_STR(in->batches[0].id, "b0001");
    CHECK(in->batches[0].n_facts == 0);
    CHECK_STR(in->batches[1].id, "b0002");
    CHECK(in->batches[1].n_facts == 6);
    CHECK_STR(data_fact_get(&in->batches[1], "host.loadavg_start[0]"), "3.5");
    CHECK_STR(data_fact_get(&in->batches[1], "host.hostname"), "h");
    CHECK_STR(in->batches[1].facts[0].key, "host.cores");
    CHECK(in->batches[1].n_procs == 1);
    if (in->batches[1].n_procs == 1) {
      const data_table *t = &in->batches[1].procs[0];
      CHECK_STR(t->source, "batches/b0002/r0001.procs.tsv");
      CHECK(t->n_cols == 3 && t->n_rows == 2);
      CHECK_STR(t->cells[3 + 2], "sh");
    }
    CHECK(in->n_manifest == 1);
    CHECK_STR(in->manifest[0].path, "batches/b0001.csv");
  }
  data_report_inputs_free(in);
  /* Invalid facts JSON: the message names the file. */
  write_text(dir, "batches/b0001.json", "{oops");
  in = NULL;
  CHECK(data_report_inputs_load(&exp, &in, &err) == CORE_EINPUT);
  CHECK(strstr(err.msg, "b0001.json:1:") != NULL);
  CHECK(in == NULL);
  core_free(sub);
  {
    char *rm = core_asprintf("rm -rf '%s'", dir);
    if (system(rm) != 0)
      fprintf(stderr, "could not remove %s\n", dir);
    core_free(rm);
  }
}

int main(void) {
  test_svg();
  test_runs_svg();
  test_render();
  test_xlsx();
  test_inputs();
  return HARNESS_END();
}
