/* test_hosts_floor.c: the interval across hosts keeps the floor each
 * host's own interval keeps. Two counted hosts of fabricated values: with
 * 5 per arm on each the entry across hosts has its interval; with 3 on
 * one (too few for a 95% interval, proto_effective_min_n) it has none,
 * and its note names the host, its values and the level's fewest.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "data/data.h"
#include "harness.h"

static const char sheet_text[] =
    "protocol {\n"
    "  id = \"floor\", title = \"Floor\", question = \"Is b slower?\",\n"
    "  arms = { { name = \"a\", reference = true },\n"
    "           { name = \"b\", run = \"env {cmd}\" } },\n"
    "  workloads = { { name = \"w\", runs = 5, cmd = \"true\" } },\n"
    "  rule = { resamples = 400, seed = 3, verdicts = {\n"
    "      { \"slower\", ci_excludes = 1, ratio_above = 1.1 } } },\n"
    "  hosts = { backend = \"slurm\", nodes = { \"n1\", \"n2\" },\n"
    "    min_completed = 0.6, min_hosts = 2,\n"
    "    across = { same_verdict = false, max_spread = 1.5 } },\n"
    "}\n";

static void add_row(data_rowset *rs, const char *host, const char *arm,
                    long round, double v) {
  data_row *r;
  char id[32];
  if (rs->n == rs->cap) {
    rs->cap = rs->cap ? 2 * rs->cap : 64;
    if (!(rs->rows = realloc(rs->rows, rs->cap * sizeof *rs->rows)))
      abort();
  }
  r = &rs->rows[rs->n++];
  memset(r, 0, sizeof *r);
  snprintf(id, sizeof id, "b0001-%04zu", rs->n);
  r->sheet_sha256 = core_strdup("");
  r->batch = core_strdup("b0001");
  r->source = core_strdup("run");
  r->workload = core_strdup("w");
  r->arm = core_strdup(arm);
  r->round = round;
  r->seq = (long)rs->n;
  r->run_id = core_strdup(id);
  r->started_at = core_strdup("2026-10-21T09:30:00Z");
  r->host = core_strdup(host);
  r->image_digest = core_strdup("");
  r->cache_policy = core_strdup("warm");
  r->cache_state = core_strdup("");
  r->exit_code = core_strdup("0");
  r->valid = 1;
  r->reason = core_strdup("");
  r->metric = core_strdup("wall_s");
  r->value = v;
  r->has_value = 1;
}

/* The entry across hosts of b against a, with n2 given n2_runs rounds. */
static void across(const proto_sheet *s, long n2_runs) {
  data_rowset rs;
  analysis_summary *sum = NULL;
  core_err err = {0};
  memset(&rs, 0, sizeof rs);
  for (int h = 0; h < 2; h++)
    for (long i = 1; i <= (h ? n2_runs : 5); i++) {
      double x = 1.0 + 0.01 * (double)((i * 3 + h) % 5);
      add_row(&rs, h ? "n2" : "n1", "a", i, x);
      add_row(&rs, h ? "n2" : "n1", "b", i, 2.0 * x + 0.001 * (double)i);
    }
  CHECK(analysis_run(s, s, NULL, &rs, 1, &sum, &err) == CORE_OK);
  const analysis_result *x = NULL;
  for (size_t i = 0; sum && i < sum->n_results; i++)
    if (sum->results[i].across)
      x = &sum->results[i];
  CHECK(x != NULL);
  if (x && n2_runs >= 5) {
    CHECK(x->hosts_counted == 2);
    CHECK(isfinite(x->ci_low) && isfinite(x->ci_high));
    CHECK(x->ci_low < x->ratio && x->ratio < x->ci_high);
  } else if (x) {
    CHECK(x->hosts_counted == 2);
    CHECK(isnan(x->ci_low) && isnan(x->ci_high));
    CHECK_STR(x->note, "no CI across hosts: n2 has 3 values for b and 3 for "
                       "a; a 95% interval needs at least 5 per arm on every "
                       "counted host");
  }
  analysis_summary_free(sum);
  data_rowset_free(&rs);
}

int main(void) {
  core_err err = {0};
  analysis_init();
  proto_sheet *s =
      proto_sheet_load_text("floor.lua", sheet_text, strlen(sheet_text), &err);
  CHECK(s != NULL);
  if (!s) {
    fprintf(stderr, "%s\n", err.msg);
    return HARNESS_END();
  }
  across(s, 5);
  across(s, 3);
  proto_sheet_free(s);
  return HARNESS_END();
}
