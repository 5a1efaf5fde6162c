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

/* 1 when rel is one of s's inputs or lies under one. */
static int listed(const proto_sheet *s, const char *rel) {
  for (size_t i = 0; i < s->n_inputs; i++) {
    size_t n = strlen(s->inputs[i]);
    while (n > 1 && s->inputs[i][n - 1] == '/')
      n--;
    if (strncmp(rel, s->inputs[i], n) == 0 && (!rel[n] || rel[n] == '/'))
      return 1;
  }
  return 0;
}

/* A word of a command that is an absolute path: an existing file that
 * is not a program is data the command reads from outside the inputs,
 * which the lock does not cover. */
static void check_absolute(const char *w, size_t len, const char *tmpl,
                           core_buf *b) {
  char path[4096];
  struct stat sb;
  if (len >= sizeof path)
    return;
  memcpy(path, w, len);
  path[len] = '\0';
  if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      (sb.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
    return;
  core_buf_printf(b,
                  "warning: \"%s\" reads %s, a file outside the sheet's "
                  "inputs: the lock does not record it, and a replication "
                  "reads whatever is at that path on its host (copy it into "
                  "the sheet's folder and list it in inputs)\n",
                  tmpl, path);
}

/* One word of a command: a file of the sheet's folder (named relative to
 * where run starts, or as {sheet_dir}/...) that the lock does not cover,
 * or a file named by an absolute path (check_absolute). */
static void check_word(const proto_sheet *s, const char *w, size_t len,
                       const char *tmpl, core_buf *b) {
  char rel[512];
  struct stat sb;
  char *full;
  if (len >= 2 && (w[0] == '\'' || w[0] == '"') && w[len - 1] == w[0])
    w++, len -= 2;
  if (len > 1 && w[0] == '/' && !memchr(w, '{', len)) {
    check_absolute(w, len, tmpl, b);
    return;
  }
  if (len > 12 && strncmp(w, "{sheet_dir}/", 12) == 0)
    w += 12, len -= 12;
  while (len > 2 && strncmp(w, "./", 2) == 0)
    w += 2, len -= 2;
  if (len == 0 || len >= sizeof rel || memchr(w, '{', len) || w[0] == '/')
    return;
  memcpy(rel, w, len);
  rel[len] = '\0';
  if (listed(s, rel) || !(full = core_path_join(s->sheet_dir, rel)))
    return;
  if (lstat(full, &sb) == 0 && S_ISREG(sb.st_mode))
    core_buf_printf(b,
                    "warning: \"%s\" runs %s, a file of the sheet's folder "
                    "that `inputs` does not list: the lock does not cover "
                    "it (add \"%s\" to inputs and use {sheet_dir}/%s)\n",
                    tmpl, rel, rel, rel);
  core_free(full);
}

/* The words of t (shown as label, NULL: as t). */
static void check_template_words(const proto_sheet *s, const char *t,
                                 const char *label, core_buf *b) {
  const char *p = t;
  while (t && *p) {
    size_t n;
    while (*p == ' ' || *p == '\t' || *p == ';' || *p == '&' || *p == '|')
      p++;
    n = strcspn(p, " \t;&|");
    if (n)
      check_word(s, p, n, label ? label : t, b);
    p += n;
  }
}

/* Warnings, never failures: the commands' words that are files of the
 * sheet's folder the lock does not cover. */
static void check_unlisted(const proto_sheet *s, core_buf *b) {
  if (!s->sheet_dir)
    return;
  for (size_t i = 0; i < s->n_arms; i++)
    check_template_words(s, s->arms[i].run, NULL, b);
  /* A var's value goes into the commands as it is. */
  for (size_t i = 0; i < s->n_vars; i++) {
    char label[300];
    snprintf(label, sizeof label, "vars.%s", s->vars[i].name);
    check_template_words(s, s->vars[i].value, label, b);
  }
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *w = &s->workloads[i];
    check_template_words(s, w->cmd, NULL, b);
    check_template_words(s, w->prepare, NULL, b);
    check_template_words(s, w->cleanup, NULL, b);
    for (size_t j = 0; j < w->n_steps; j++)
      check_template_words(s, w->steps[j], NULL, b);
  }
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
    if (v->has_ci_excludes)
      x[n++] = v->ci_excludes;
    if (v->has_ratio_above)
      x[n++] = v->ratio_above;
    if (v->has_ratio_below)
      x[n++] = v->ratio_below;
    if (v->has_ci_within)
      x[n++] = v->ci_within[0], x[n++] = v->ci_within[1];
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
  core_buf_init(&b);
  proto_summary(s, &b);
  check_unlisted(s, &b);
  check_asymmetric(s, &b);
  check_dead_zones(&s->rule, &b);
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
