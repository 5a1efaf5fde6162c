/* cmd_sheet.c: `prereg new` (a starter sheet) and `prereg check`
 * (validate a sheet and print what it declares).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"

int cli_good_id(const char *id) {
  size_t n = strlen(id);
  if (n == 0 || n > 64)
    return 0;
  for (size_t i = 0; i < n; i++) {
    char c = id[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
             (c == '-' && i > 0);
    if (!ok)
      return 0;
  }
  return 1;
}

/* Creates path with O_EXCL, so that an existing sheet is never replaced,
 * not even by a race with another `new`. */
core_status cli_write_new(const char *path, const core_buf *b,
                          const char *instead, core_err *err) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST)
      return core_fail(err, CORE_EUSAGE, "%s already exists; %s", path,
                       instead);
    return core_fail(err, CORE_EIO, "%s: cannot create: %s", path,
                     strerror(errno));
  }
  if (core_write_all(fd, b->data, b->len, path, err) != CORE_OK) {
    close(fd);
    unlink(path);
    return CORE_EIO;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int e = errno;
    unlink(path);
    return core_fail(err, CORE_EIO, "%s: cannot write: %s", path, strerror(e));
  }
  return CORE_OK;
}

core_status cli_cmd_new(const cli_opts *opts, FILE *out, core_err *err) {
  const char *id = opts->args[0];
  char *path = NULL;
  core_buf b;
  core_status st = CORE_OK;
  proto_sheet *check;
  if (!cli_good_id(id))
    return core_fail(err, CORE_EUSAGE,
                     "new: \"%s\" is not a usable ID: "
                     "use [a-z0-9][a-z0-9-]*, at most 64 bytes (it names "
                     "the experiment's data folder)",
                     id);
  core_buf_init(&b);
  proto_starter(id, &b);
  if (b.oom) {
    core_buf_free(&b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  /* The starter must pass check itself: a user's first step should not
   * be an error message. */
  check = proto_sheet_load_text("starter sheet", b.data, b.len, err);
  if (!check) {
    core_buf_free(&b);
    return err->status ? err->status : CORE_EPROTOCOL;
  }
  proto_sheet_free(check);
  if (opts->out && strcmp(opts->out, "-") == 0) {
    fwrite(b.data, 1, b.len, out);
    core_buf_free(&b);
    return CORE_OK;
  }
  if (opts->out) {
    path = core_strdup(opts->out);
  } else {
    st = core_mkdir_p("protocols", 0755, err);
    if (st == CORE_OK)
      path = core_asprintf("protocols/%s.lua", id);
  }
  if (st == CORE_OK && !path)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK)
    st = cli_write_new(path, &b,
                       "prereg new never overwrites a sheet (choose "
                       "another ID or --out FILE)",
                       err);
  if (st == CORE_OK)
    fprintf(out, "wrote %s\nnext: edit it, then run 'prereg check %s'\n", path,
            path);
  core_free(path);
  core_buf_free(&b);
  return st;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* 1 when a ratio measured exactly (its CI of zero width) gets no verdict. */
static int undecided_at(const proto_rule *r, double x) {
  return strcmp(analysis_verdict(r, x, x, x), "inconclusive") == 0;
}

/* Warns of the rule's dead zones: ranges of the ratio between two that
 * get verdicts where even a ratio measured exactly gets none (a tie band
 * that stops short of the thresholds), tested between each two of the
 * rule's bounds. Unbounded ranges (a rule with one direction only) are
 * by design. */
static void check_dead_zones(const proto_rule *r, core_buf *b) {
  double x[4 * 64 + 2];
  size_t n = 0;
  /* Where a verdict on the difference holds depends on the medians, not
   * on the ratio alone: no ratio is dead for sure. */
  if (proto_rule_on_diff(r))
    return;
  for (size_t i = 0; i < r->n_verdicts && n + 5 < sizeof x / sizeof x[0];
       i++) {
    const proto_verdict_rule *v = &r->verdicts[i];
    if (v->ratio.has_ci_excludes)
      x[n++] = v->ratio.ci_excludes;
    if (v->ratio.has_above)
      x[n++] = v->ratio.above;
    if (v->ratio.has_below)
      x[n++] = v->ratio.below;
    if (v->ratio.has_ci_within)
      x[n++] = v->ratio.ci_within[0], x[n++] = v->ratio.ci_within[1];
  }
  qsort(x, n, sizeof x[0], cmp_double);
  for (size_t i = 0; i + 1 < n; i++) {
    size_t j = i + 1;
    /* A run of dead ranges between bounds, with a verdict on each side. */
    if (x[j] <= x[i] || !undecided_at(r, (x[i] + x[j]) / 2))
      continue;
    while (j + 1 < n &&
           (x[j + 1] <= x[j] || undecided_at(r, (x[j] + x[j + 1]) / 2)))
      j++;
    if (!undecided_at(r, x[i] - (i ? (x[i] - x[i - 1]) / 2 : x[i] / 2)) &&
        !undecided_at(r, x[j] + (j + 1 < n ? (x[j + 1] - x[j]) / 2 : x[j])))
      core_buf_printf(b,
                      "warning: the rule decides nothing for a ratio between "
                      "%.4g and %.4g, even one measured exactly (a dead zone "
                      "between its verdicts): move a verdict's bound so that "
                      "they meet\n",
                      x[i], x[j]);
    i = j - 1;
  }
}

/* Warns of a verdict with a direction (ratio_above, ratio_below,
 * diff_above, diff_below) and no condition on an interval (ci_excludes,
 * ci_within, or the same on the difference): it decides on the
 * ratio alone, whatever the interval, so "faster" can be printed with an
 * interval of [0.62, 1.50]. */
static void check_directional(const proto_rule *r, core_buf *b) {
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const proto_verdict_rule *v = &r->verdicts[i];
    if (!proto_verdict_direction(v) || v->ratio.has_ci_excludes ||
        v->ratio.has_ci_within || v->diff.has_ci_excludes ||
        v->diff.has_ci_within)
      continue;
    core_buf_printf(b,
                    "warning: verdict \"%s\" (line %d) has a direction and "
                    "no condition on the interval: it is given on the ratio "
                    "alone, however wide its CI; add ci_excludes = 1 so that "
                    "the interval must exclude no difference\n",
                    v->name, v->line);
  }
}

/* The value given to the first of flags in a run template ("--memory
 * 512m", "--memory=512m", "MemoryMax=1G"), "" when none; count: how many
 * times any of them is given. */
static size_t flag_value(const char *t, const char *const flags[], char *out,
                         size_t cap) {
  size_t count = 0;
  out[0] = 0;
  for (const char *p = t; p && *p;) {
    size_t n = strcspn(p, " \t");
    for (size_t k = 0; flags[k]; k++) {
      size_t fl = strlen(flags[k]);
      const char *v = NULL;
      size_t vl = 0;
      if (n == fl && !strncmp(p, flags[k], fl)) {
        v = p + n + strspn(p + n, " \t");
        vl = strcspn(v, " \t");
      } else if (n > fl && !strncmp(p, flags[k], fl) &&
                 (p[fl - 1] == '=' || p[fl] == '=')) {
        v = p + fl + (p[fl] == '=');
        vl = n - (size_t)(v - p);
      }
      if (v && !count++)
        snprintf(out, cap, "%.*s", (int)(vl < 64 ? vl : 64), v);
    }
    p += n;
    p += strspn(p, " \t");
  }
  return count;
}

/* One warning when arm a's value of what differs from the first arm's. */
static void differ(const proto_sheet *s, size_t a, const char *what,
                   const char *v0, const char *va, int *told, core_buf *b) {
  if (*told || !strcmp(v0, va))
    return;
  *told = 1;
  core_buf_printf(b,
                  "warning: arms %s and %s have different %s (%s and %s): "
                  "an asymmetric design, whose difference would be measured "
                  "along with what the arms compare; give every arm the "
                  "same\n",
                  s->arms[0].name, s->arms[a].name, what, v0[0] ? v0 : "none",
                  va[0] ? va : "none");
}

/* Warnings, never failures: arms that differ in CPU sets, memory limits
 * or the size of their environment. */
static void check_asymmetric(const proto_sheet *s, core_buf *b) {
  static const char *const cpu_flags[] = {"--cpuset-cpus", NULL};
  static const char *const mem_flags[] = {
      "--memory", "MemoryMax=", "--memory-limit", NULL};
  static const char *const env_flags[] = {"--env", "--env-file", NULL};
  int told[3] = {0, 0, 0};
  char v0[3][80], va[3][80];
  for (size_t a = 0; a < s->n_arms; a++) {
    const proto_arm *arm = &s->arms[a];
    char(*v)[80] = a ? va : v0;
    char set[64];
    flag_value(arm->run, cpu_flags, set, sizeof set);
    snprintf(v[0], sizeof v[0], "%s", arm->cpus ? arm->cpus : set);
    flag_value(arm->run, mem_flags, v[1], sizeof v[1]);
    size_t envs = flag_value(arm->run, env_flags, set, sizeof set);
    snprintf(v[2], sizeof v[2], "%zu variable%s set", envs,
             envs == 1 ? "" : "s");
    if (!a)
      continue;
    differ(s, a, "CPU sets", v0[0], va[0], &told[0], b);
    differ(s, a, "memory limits", v0[1], va[1], &told[1], b);
    differ(s, a, "environment sizes", v0[2], va[2], &told[2], b);
  }
}

/* Warns of a min_n the sheet writes below the values an interval at the
 * rule's level needs: the analysis gives no verdict below the level's
 * fewest anyway, so the sheet says less than it does. (The default says
 * nothing: the level's floor is the rule where the sheet is silent.) */
static void check_min_n(const proto_rule *r, core_buf *b) {
  long level = proto_level_min_n(r->confidence);
  if (!r->min_n_given || r->min_n >= level)
    return;
  core_buf_printf(b,
                  "warning: rule.min_n is %ld, below the %ld values per arm "
                  "a %.4g%% interval needs (with %ld the widest interval "
                  "covers the true ratio in %.4g%% of experiments): a "
                  "comparison with fewer gets no verdict (insufficient "
                  "data); set min_n = %ld, or give every arm at least %ld "
                  "runs\n",
                  r->min_n, level, r->confidence * 100, r->min_n,
                  proto_widest_coverage(r->min_n) * 100, level, level);
}

/* Warns when the plan block was computed for another rule than the
 * sheet's: its power is not this rule's. */
static void check_plan_rule(const proto_sheet *s, core_buf *b) {
  char now[CORE_SHA256_HEX];
  if (s->plan.declared && !s->plan.rule_sha256)
    core_buf_printf(b,
                    "warning: the plan block (line %d) does not record the "
                    "rule it was computed for (rule_sha256): run prereg "
                    "plan --write again to record it\n",
                    s->plan.line);
  else if (proto_plan_rule_changed(s, now))
    core_buf_printf(b,
                    "warning: the plan block (line %d) was computed for "
                    "another rule than this sheet's (rule_sha256 %.12s, "
                    "this rule %.12s: the rule, arms, metrics or hypotheses "
                    "changed after the plan): its power is not this rule's; "
                    "run prereg plan --write again, or the report says the "
                    "rule was changed after the plan\n",
                    s->plan.line, s->plan.rule_sha256, now);
}

core_status cli_check_looks_level(const proto_sheet *s, core_err *err) {
  core_buf why;
  core_status st = CORE_OK;
  core_buf_init(&why);
  if (proto_looks_below_level(s, &why))
    st = core_fail(err, CORE_EPROTOCOL, "%s",
                   why.data ? why.data : "out of memory");
  core_buf_free(&why);
  return st;
}

core_status cli_cmd_check(const cli_opts *opts, FILE *out, core_err *err) {
  core_buf b;
  data_inputs in;
  proto_sheet *s = proto_sheet_load_to_run(opts->args[0], err);
  if (!s)
    return err->status ? err->status : CORE_EPROTOCOL;
  /* An input that is a link, or too large, is refused here already. */
  if (data_inputs_scan(s, &in, err) != CORE_OK) {
    proto_sheet_free(s);
    return err->status;
  }
  data_inputs_free(&in);
  if (cli_check_looks_level(s, err) != CORE_OK) {
    proto_sheet_free(s);
    return err->status;
  }
  core_buf_init(&b);
  proto_summary(s, &b);
  data_inputs_unlocked(s, &b);
  check_asymmetric(s, &b);
  check_dead_zones(&s->rule, &b);
  check_directional(&s->rule, &b);
  check_min_n(&s->rule, &b);
  check_plan_rule(s, &b);
  proto_sheet_free(s);
  if (b.oom) {
    core_buf_free(&b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if (b.len)
    fwrite(b.data, 1, b.len, out);
  core_buf_free(&b);
  return CORE_OK;
}
