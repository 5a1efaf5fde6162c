/* cmd_compare.c: `prereg compare [OPTIONS] CMD...`: the quick,
 * exploratory comparison of commands, as hyperfine is used, measured and
 * analysed by the same engine and analysis as a registered experiment.
 * SPDX-License-Identifier: MIT
 *
 * The comparison is a sheet: its text is built here (the commands as
 * whole-command arms, one workload, the starter's rule or --rule FILE),
 * written into a new folder of prereg's own under $TMPDIR (or /tmp),
 * registered there and run by run_batch, then analysed as analyze does.
 * `--sheet FILE` writes exactly that text. Nothing reads that folder
 * again: a registered experiment's data are DATA/ID, so the exploratory
 * runs are never counted by a registered analysis. Every line printed
 * starts with "exploratory".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli_internal.h"
#include "core/limits.h"
#include "data/data.h"
#include "protocols/proto.h"
#include "run/run.h"

#define MARK "exploratory: "
#define WORKLOAD "compare"

/* One command as given: its text and the name -n gave it, or NULL. */
typedef struct given_cmd {
  const char *cmd, *name;
} given_cmd;

/* What the words after `compare` ask for, and the arms they make. */
typedef struct compare {
  given_cmd given[COMPARE_MAX_ARMS];
  size_t n_given;
  const char *reference, *prepare, *timeout, *rule, *markdown, *sheet;
  const char *runs_text, *warmup_text;
  const char *metrics[COMPARE_MAX_METRICS];
  size_t n_metrics;
  long runs, warmup;
  int json;
  /* -L NAME V1,V2 or --parameter-scan NAME MIN MAX [step]: */
  const char *param, *list, *scan_min, *scan_max, *scan_step;
  char *values[COMPARE_MAX_ARMS]; /* owned */
  size_t n_values;
  /* The arms: names and commands as the sheet holds them ({ doubled). */
  char *names[COMPARE_MAX_ARMS], *runs_of[COMPARE_MAX_ARMS]; /* owned */
  char *shown[COMPARE_MAX_ARMS]; /* the command as it runs (owned) */
  size_t n_arms, ref;
  char *dir, *id; /* the exploratory folder; the sheet's id (owned) */
} compare;

static void compare_free(compare *c) {
  for (size_t i = 0; i < c->n_values; i++)
    core_free(c->values[i]);
  for (size_t i = 0; i < c->n_arms; i++) {
    core_free(c->names[i]);
    core_free(c->runs_of[i]);
    core_free(c->shown[i]);
  }
  core_free(c->dir);
  core_free(c->id);
}

/* Reading the words */

static core_status usage_fail(core_err *err, const char *fmt,
                              const char *word) {
  core_fail(err, CORE_EUSAGE, fmt, word);
  size_t n = strlen(err->msg);
  snprintf(err->msg + n, sizeof err->msg - n, "\n%s", cli_compare_usage);
  return CORE_EUSAGE;
}

/* The slot of an option that takes one value, or NULL. */
static const char **value_of(compare *c, const char *name) {
  static const struct {
    const char *name;
    size_t off;
  } v[] = {
      {"--reference", offsetof(compare, reference)},
      {"--prepare", offsetof(compare, prepare)},
      {"--timeout", offsetof(compare, timeout)},
      {"--rule", offsetof(compare, rule)},
      {"--export-markdown", offsetof(compare, markdown)},
      {"--sheet", offsetof(compare, sheet)},
      {"--runs", offsetof(compare, runs_text)},
      {"--warmup", offsetof(compare, warmup_text)},
      {"--parameter-step-size", offsetof(compare, scan_step)},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (strcmp(v[i].name, name) == 0)
      return (const char **)((char *)c + v[i].off);
  return NULL;
}

/* The value of option word w (its "=VALUE", else the next word). */
static core_status take_value(char *const *w, int n, int *i, const char *eq,
                              const char **out, core_err *err) {
  if (eq)
    *out = eq + 1;
  else if (*i + 1 < n)
    *out = w[++*i];
  else
    return usage_fail(err, "compare: option '%s' needs a value", w[*i]);
  if (!**out)
    return usage_fail(err, "compare: option '%s' needs a non-empty value",
                      w[*i]);
  return CORE_OK;
}

/* -L NAME LIST and --parameter-scan NAME MIN MAX: one parameter. */
static core_status take_param(compare *c, char *const *w, int n, int *i,
                              core_err *err) {
  int scan = strcmp(w[*i], "--parameter-scan") == 0;
  int need = scan ? 3 : 2;
  if (c->param)
    return usage_fail(err,
                      "compare: '%s': one parameter (-L or "
                      "--parameter-scan) per comparison",
                      w[*i]);
  if (*i + need >= n)
    return usage_fail(err, "compare: '%s' needs NAME and its values", w[*i]);
  c->param = w[*i + 1];
  if (scan) {
    c->scan_min = w[*i + 2];
    c->scan_max = w[*i + 3];
  } else {
    c->list = w[*i + 2];
  }
  *i += need;
  return CORE_OK;
}

/* One option word w[*i]. */
static core_status take_option(compare *c, char *const *w, int n, int *i,
                               const char **name, core_err *err) {
  char opt[64];
  const char *a = w[*i], *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : 0;
  size_t len = eq ? (size_t)(eq - a) : strlen(a);
  const char **slot;
  if (len >= sizeof opt)
    return usage_fail(err, "compare: unknown option '%s'", a);
  memcpy(opt, a, len);
  opt[len] = '\0';
  if (!strcmp(opt, "-n") || !strcmp(opt, "--command-name"))
    return take_value(w, n, i, eq, name, err);
  if (!strcmp(opt, "--json") && !eq)
    return c->json = 1, CORE_OK;
  if ((!strcmp(opt, "--help") || !strcmp(opt, "-h")) && !eq)
    return CORE_OK;
  if ((!strcmp(opt, "-L") || !strcmp(opt, "--parameter-scan")) && !eq)
    return take_param(c, w, n, i, err);
  if (!strcmp(opt, "--metric")) {
    if (c->n_metrics == COMPARE_MAX_METRICS)
      return usage_fail(err,
                        "compare: more than "
                        "16"
                        " --metric at '%s'",
                        a);
    return take_value(w, n, i, eq, &c->metrics[c->n_metrics++], err);
  }
  if ((slot = value_of(c, opt)) != NULL)
    return take_value(w, n, i, eq, slot, err);
  return usage_fail(err, "compare: unknown option '%s'", a);
}

/* The words after `compare`: options anywhere, -n before the command it
 * names, "--" before commands that start with a dash. */
static core_status parse_words(compare *c, char *const *w, int n,
                               core_err *err) {
  const char *name = NULL;
  int only_cmds = 0;
  core_status st;
  for (int i = 0; i < n; i++) {
    if (!only_cmds && strcmp(w[i], "--") == 0) {
      only_cmds = 1;
    } else if (!only_cmds && w[i][0] == '-' && w[i][1]) {
      if ((st = take_option(c, w, n, &i, &name, err)) != CORE_OK)
        return st;
    } else {
      if (c->n_given == COMPARE_MAX_ARMS)
        return usage_fail(err, "compare: more than 100 commands at '%s'",
                          w[i]);
      if (!w[i][0])
        return usage_fail(err, "compare: an empty command%s", "");
      c->given[c->n_given++] = (given_cmd){w[i], name};
      name = NULL;
    }
  }
  if (name)
    return usage_fail(err, "compare: -n %s names no command after it", name);
  if (c->n_given == 0)
    return usage_fail(err, "compare: no command given%s", "");
  return CORE_OK;
}

/* A count option's value, lo..COMPARE_MAX_RUNS. */
static core_status count_of(const char *text, const char *opt, long dflt,
                            long lo, long *out, core_err *err) {
  char *end;
  *out = dflt;
  if (!text)
    return CORE_OK;
  errno = 0;
  *out = strtol(text, &end, 10);
  if (errno || *end || end == text || *out < lo || *out > COMPARE_MAX_RUNS)
    return core_fail(err, CORE_EUSAGE, "compare: %s %s: give %ld to %ld", opt,
                     text, lo, COMPARE_MAX_RUNS);
  return CORE_OK;
}

/* The values of the parameter */

static core_status add_value(compare *c, const char *v, size_t len,
                             core_err *err) {
  if (c->n_values == COMPARE_MAX_ARMS)
    return core_fail(err, CORE_EUSAGE,
                     "compare: parameter %s: more than %d values", c->param,
                     COMPARE_MAX_ARMS);
  if (len == 0)
    return core_fail(err, CORE_EUSAGE,
                     "compare: -L %s %s: an empty value; give V1,V2,...",
                     c->param, c->list);
  if (!(c->values[c->n_values] = core_strndup(v, len)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  c->n_values++;
  return CORE_OK;
}

/* Digits after the point in a number's text. */
static int decimals(const char *t) {
  const char *dot = strchr(t, '.');
  return dot ? (int)strcspn(dot + 1, "eE") : 0;
}

static core_status number(const char *t, const char *what, double *x,
                          core_err *err) {
  char *end;
  errno = 0;
  *x = strtod(t, &end);
  if (errno || *end || end == t || !isfinite(*x))
    return core_fail(err, CORE_EUSAGE,
                     "compare: --parameter-scan: %s '%s' is not a number",
                     what, t);
  return CORE_OK;
}

/* --parameter-scan NAME MIN MAX [--parameter-step-size S]: MIN, MIN+S,
 * ... up to MAX, written with as many decimals as MIN and S have. */
static core_status scan_values(compare *c, core_err *err) {
  double lo, hi, step = 1;
  core_status st;
  if ((st = number(c->scan_min, "MIN", &lo, err)) != CORE_OK ||
      (st = number(c->scan_max, "MAX", &hi, err)) != CORE_OK ||
      (c->scan_step &&
       (st = number(c->scan_step, "the step size", &step, err)) != CORE_OK))
    return st;
  if (step <= 0 || hi < lo)
    return core_fail(err, CORE_EUSAGE,
                     "compare: --parameter-scan %s %s %s: needs MIN <= MAX "
                     "and a step size above 0",
                     c->param, c->scan_min, c->scan_max);
  int d = decimals(c->scan_min);
  if (c->scan_step && decimals(c->scan_step) > d)
    d = decimals(c->scan_step);
  for (long k = 0;; k++) {
    double x = lo + (double)k * step;
    char v[64];
    if (x > hi + step * 1e-9)
      break;
    snprintf(v, sizeof v, "%.*f", d, x);
    if ((st = add_value(c, v, strlen(v), err)) != CORE_OK)
      return st;
  }
  return CORE_OK;
}

static core_status param_values(compare *c, core_err *err) {
  if (c->scan_step && !c->scan_min)
    return core_fail(err, CORE_EUSAGE,
                     "compare: --parameter-step-size goes with "
                     "--parameter-scan");
  if (!c->param)
    return CORE_OK;
  if (!proto_good_name(c->param) || strpbrk(c->param, ".+-"))
    return core_fail(err, CORE_EUSAGE,
                     "compare: parameter '%s': use letters, digits and _",
                     c->param);
  if (c->scan_min)
    return scan_values(c, err);
  for (const char *p = c->list;;) {
    size_t len = strcspn(p, ",");
    core_status st = add_value(c, p, len, err);
    if (st != CORE_OK)
      return st;
    if (!p[len])
      return CORE_OK;
    p += len + 1;
  }
}

/* The arms */

/* cmd with {param} replaced by value; sheet: every other { doubled, as
 * a sheet writes a literal brace. Newly allocated, NULL when out of
 * memory. */
static char *expand(const compare *c, const char *cmd, const char *value,
                    int sheet) {
  core_buf b;
  size_t plen = c->param ? strlen(c->param) : 0;
  core_buf_init(&b);
  for (const char *p = cmd; *p; p++) {
    if (value && p[0] == '{' && strncmp(p + 1, c->param, plen) == 0 &&
        p[plen + 1] == '}') {
      for (const char *v = value; *v; v++)
        core_buf_puts(&b, sheet && *v == '{' ? "{{" : (char[2]){*v, 0});
      p += plen + 1;
    } else {
      core_buf_puts(&b, sheet && *p == '{' ? "{{" : (char[2]){*p, 0});
    }
  }
  core_buf_puts(&b, "");
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return core_buf_steal(&b);
}

/* An arm's name from its command, as hyperfine names a command by
 * itself: runs of other bytes become one '-', at most 64 bytes. */
static char *name_from(const char *cmd) {
  char name[65];
  size_t n = 0;
  for (const char *p = cmd; *p && n < 64; p++) {
    int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
             (*p >= '0' && *p <= '9') || strchr("_.+-", *p);
    if (*p == '-' && n > 0 && name[n - 1] == '-')
      continue;
    if (ok && !(n == 0 && strchr("_.+-", *p)))
      name[n++] = *p;
    else if (n > 0 && name[n - 1] != '-')
      name[n++] = '-';
  }
  while (n > 0 && name[n - 1] == '-')
    n--;
  name[n] = '\0';
  return core_strdup(name);
}

/* A name no earlier arm has: name, else name-2, name-3, ... (*name is
 * the newest arm's, the last). */
static core_status unique_name(compare *c, char **name, core_err *err) {
  size_t earlier = c->n_arms - 1;
  for (int k = 1;; k++) {
    char *cand =
        k == 1 ? core_strdup(*name) : core_asprintf("%.*s-%d", 58, *name, k);
    size_t i = 0;
    if (!cand)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    while (i < earlier && strcmp(c->names[i], cand) != 0)
      i++;
    if (i == earlier) {
      core_free(*name);
      *name = cand;
      return CORE_OK;
    }
    core_free(cand);
  }
}

/* One arm: command g under value (or none). */
static core_status add_arm(compare *c, const given_cmd *g, const char *value,
                           core_err *err) {
  size_t a = c->n_arms;
  if (a == COMPARE_MAX_ARMS)
    return core_fail(err, CORE_EUSAGE,
                     "compare: more than %d commands once the parameter's "
                     "values are put in",
                     COMPARE_MAX_ARMS);
  char *shown = expand(c, g->cmd, value, 0),
       *run = expand(c, g->cmd, value, 1);
  char *name = g->name ? expand(c, g->name, value, 0) : NULL;
  if (shown && !g->name)
    name = name_from(shown);
  c->shown[a] = shown, c->runs_of[a] = run, c->names[a] = name;
  c->n_arms++;
  if (!shown || !run || !name)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (g->name && !proto_good_name(name))
    return core_fail(err, CORE_EUSAGE,
                     "compare: -n %s: not a usable name: 1 to 64 letters, "
                     "digits and _ . + -, starting with a letter or digit",
                     name);
  if (!name[0]) {
    core_free(name);
    if (!(c->names[a] = name = core_asprintf("command-%zu", a + 1)))
      return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if (g->name)
    for (size_t i = 0; i < a; i++)
      if (strcmp(c->names[i], name) == 0)
        return core_fail(err, CORE_EUSAGE, "compare: -n %s names two commands",
                         name);
  return unique_name(c, &c->names[a], err);
}

static core_status make_arms(compare *c, core_err *err) {
  core_status st = CORE_OK;
  for (size_t g = 0; g < c->n_given && st == CORE_OK; g++) {
    const given_cmd *gc = &c->given[g];
    if (c->param && !strstr(gc->cmd, "{"))
      return core_fail(err, CORE_EUSAGE,
                       "compare: '%s' does not use {%s}, the parameter",
                       gc->cmd, c->param);
    for (size_t v = 0; v < (c->param ? c->n_values : 1) && st == CORE_OK; v++)
      st = add_arm(c, gc, c->param ? c->values[v] : NULL, err);
  }
  if (st != CORE_OK || !c->reference)
    return st;
  for (c->ref = 0; c->ref < c->n_arms; c->ref++)
    if (strcmp(c->names[c->ref], c->reference) == 0)
      return CORE_OK;
  return core_fail(err, CORE_EUSAGE,
                   "compare: --reference %s: no command is named so (the "
                   "names are printed with each result; -n NAME gives one)",
                   c->reference);
}

/* The sheet */

/* s as a word for the shell: as it is when it needs no quotes, else in
 * single quotes; a control byte as \xNN (never raw on a terminal). */
static void shell_word(core_buf *b, const char *s) {
  int plain = *s != '\0';
  for (const char *p = s; *p; p++)
    plain &= (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
             (*p >= '0' && *p <= '9') || strchr("_./+-=:,@%", *p) != NULL;
  if (plain) {
    core_buf_puts(b, s);
    return;
  }
  core_buf_puts(b, "'");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p == '\'')
      core_buf_puts(b, "'\\''");
    else if (*p < 0x20 || *p == 0x7f)
      core_buf_printf(b, "\\x%02x", *p);
    else
      core_buf_printf(b, "%c", *p);
  core_buf_puts(b, "'");
}

/* The sheet's name in its comments: the --sheet path when printable. */
static const char *sheet_name(const compare *c, char *buf, size_t cap) {
  const char *p = c->sheet;
  for (; p && *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      break;
  if (c->sheet && !*p && strlen(c->sheet) < cap) {
    snprintf(buf, cap, "%s", c->sheet);
    return buf;
  }
  snprintf(buf, cap, "%s.lua", c->id);
  return buf;
}

static void sheet_head(const compare *c, core_buf *b) {
  char name[600];
  sheet_name(c, name, sizeof name);
  core_buf_printf(
      b,
      "-- %s: a prereg protocol sheet (Lua 5.4, run in a sandbox), written\n"
      "-- by prereg compare: the comparison it ran, as a plan.\n"
      "--\n"
      "-- Edit the title, question, author, hypotheses and threats, and set\n"
      "-- runs to the sample you plan (prereg pilot and prereg plan help),\n"
      "-- before any data exists. Then:\n"
      "--   prereg check %s      validate and summarise\n"
      "--   prereg register %s   freeze it\n"
      "-- After that, change it only by appending to `amendments` and\n"
      "-- running `prereg amend`.\n"
      "protocol {\n"
      "  id       = \"%s\",  -- [a-z0-9][a-z0-9-]*: names the data folder\n"
      "  title    = \"What do the commands cost against %s?\",\n"
      "  question = \"How does each command compare with %s?\",\n"
      "  author   = \"Your Name\",\n"
      "\n"
      "  -- The commands, each a whole command compared as it is (as\n"
      "  -- hyperfine compares commands); the reference is the one the\n"
      "  -- others are compared with.\n"
      "  arms = {\n",
      name, name, name, c->id, c->names[c->ref], c->names[c->ref]);
  for (size_t a = 0; a < c->n_arms; a++) {
    core_buf_puts(b, "    { name = ");
    cli_lua_quote(b, c->names[a]);
    core_buf_puts(b, a == c->ref ? ", reference = true, run = " : ", run = ");
    cli_lua_quote(b, c->runs_of[a]);
    core_buf_puts(b, " },\n");
  }
  core_buf_puts(b, "  },\n\n");
}

static void sheet_workload(const compare *c, double timeout, core_buf *b) {
  core_buf_printf(
      b,
      "  -- What to measure: each round runs every command once, in an "
      "order\n"
      "  -- drawn from the rule's seed, after the warm-ups. Metrics: wall_s\n"
      "  -- user_s sys_s maxrss_kib ..., or a name the command writes as\n"
      "  -- name=value lines to the file $PREREG_METRICS.\n"
      "  workloads = {\n"
      "    { name = \"" WORKLOAD "\", runs = %ld, warmup = %ld,\n"
      "      metrics = { ",
      c->runs, c->warmup);
  for (size_t m = 0; m < c->n_metrics; m++) {
    core_buf_puts(b, m ? ", " : "");
    cli_lua_quote(b, c->metrics[m]);
  }
  core_buf_puts(b, " }");
  if (c->timeout)
    core_buf_printf(b, ",\n      timeout_s = %.17g", timeout);
  if (c->prepare) {
    char *p = expand(c, c->prepare, NULL, 1);
    core_buf_puts(b, ",\n      prepare = ");
    if (p)
      cli_lua_quote(b, p);
    else
      b->oom = 1;
    core_free(p);
  }
  core_buf_puts(b, " },\n  },\n\n");
}

/* The rule: --rule FILE's table, else the starter's. */
static core_status sheet_rule(const compare *c, core_buf *b, core_err *err) {
  char *text = NULL;
  size_t len = 0;
  if (!c->rule) {
    proto_starter_rule(b);
    return CORE_OK;
  }
  core_status st =
      core_read_file_max(c->rule, COMPARE_RULE_MAX, 1, &text, &len, err);
  if (st != CORE_OK) {
    if (err->status == CORE_EIO)
      err->status = CORE_EUSAGE;
    return st;
  }
  while (len > 0 && strchr(" \t\r\n,", text[len - 1]))
    len--;
  if (len == 0 || memchr(text, '\0', len)) {
    core_free(text);
    return core_fail(err, CORE_EUSAGE,
                     "--rule %s: holds no rule table; write one as a "
                     "sheet's rule is written, { estimator = \"median\", "
                     "..., verdicts = { ... } }",
                     c->rule);
  }
  core_buf_puts(b, "  -- How you will decide, fixed before the first run.\n"
                   "  rule = ");
  core_buf_append(b, text, len);
  core_buf_puts(b, ",\n");
  core_free(text);
  return CORE_OK;
}

/* The sheet's whole text. */
static core_status sheet_text(const compare *c, double timeout, core_buf *b,
                              core_err *err) {
  sheet_head(c, b);
  sheet_workload(c, timeout, b);
  core_status st = sheet_rule(c, b, err);
  if (st != CORE_OK)
    return st;
  core_buf_puts(
      b, "\n"
         "  -- What you expect: at_least(x), below(x) on the ratio's CI,\n"
         "  -- verdict_is(\"name\"), or a function(results); see prereg new.\n"
         "  hypotheses = {},\n"
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
  if (b->oom)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return CORE_OK;
}

/* The loaded sheet is the comparison built: a --rule FILE that held more
 * than a rule table (keys after it replace the arms) is refused. */
static core_status same_arms(const compare *c, const proto_sheet *s,
                             core_err *err) {
  int same =
      s->n_arms == c->n_arms && s->n_workloads == 1 && s->reference == c->ref;
  for (size_t a = 0; same && a < c->n_arms; a++)
    same = strcmp(s->arms[a].name, c->names[a]) == 0 &&
           strcmp(s->arms[a].run, c->runs_of[a]) == 0;
  if (same)
    return CORE_OK;
  return core_fail(err, CORE_EUSAGE,
                   "--rule %s: holds more than a rule table (the sheet's "
                   "arms or workloads changed); give only { estimator = "
                   "..., verdicts = { ... } }",
                   c->rule ? c->rule : "(none)");
}

/* The exploratory folder and the runs */

/* A new folder of prereg's own, mode 0700: ${TMPDIR:-/tmp}/prereg-
 * compare-XXXXXX. */
static core_status make_dir(compare *c, core_err *err) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || tmp[0] != '/')
    tmp = "/tmp";
  char *t = core_asprintf("%s/prereg-compare-XXXXXX", tmp);
  if (!t)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (!mkdtemp(t)) {
    int e = errno;
    core_free(t);
    return core_fail(err, CORE_EIO,
                     "compare: cannot make a folder under %s: %s (set "
                     "TMPDIR to a writable folder)",
                     tmp, strerror(e));
  }
  c->dir = t;
  return CORE_OK;
}

/* A line per run on stderr. */
static void on_progress(void *ctx, const run_event *ev) {
  (void)ctx;
  if (ev->kind == RUN_EVENT_RUN)
    fprintf(stderr, MARK "[%zu/%zu] %s round %ld: %s (%.4g s)\n", ev->done,
            ev->total, ev->arm, ev->round, ev->failure ? ev->failure : "ok",
            ev->wall_s);
  else if (ev->text)
    fprintf(stderr, MARK "%s\n", ev->text);
  fflush(stderr);
}

static void on_signal(int sig) {
  (void)sig;
  run_cancel();
}

/* Registers s in the folder's data and runs its plan, SIGINT and SIGTERM
 * stopping it as they stop run. */
static core_status measure(const compare *c, const proto_sheet *s,
                           data_experiment **exp, core_err *err) {
  struct sigaction sa, old_int, old_term;
  run_progress pr = {on_progress, NULL, NULL, NULL};
  run_batch_result res;
  run_plan plan;
  data_rowset rows;
  int already;
  char *data = core_path_join(c->dir, "data");
  core_status st = data ? CORE_OK : core_fail(err, CORE_ENOMEM, "no memory");
  memset(&plan, 0, sizeof plan);
  memset(&rows, 0, sizeof rows);
  if (st == CORE_OK &&
      (st = data_experiment_open(data, s, exp, err)) == CORE_OK &&
      (st = data_experiment_lock(*exp, err)) == CORE_OK &&
      (st = data_register(*exp, s, &already, err)) == CORE_OK &&
      (st = run_plan_build(s, NULL, 0, &plan, err)) == CORE_OK &&
      (st = run_plan_collect(*exp, s, 0, &pr, &plan, &rows, err)) == CORE_OK) {
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    run_cancel_arm();
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    st = run_batch(*exp, s, &plan, 0, &pr, &res, err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    run_cancel_disarm();
  }
  run_plan_free(&plan);
  data_rowset_free(&rows);
  core_free(data);
  return st;
}

/* What is printed */

/* Each cell's median with the distribution-free interval of the median
 * at the rule's confidence (what one command alone is described by):
 * none below proto_median_min_n, where no interval reaches that level,
 * and none of no width. */
typedef struct median_ci {
  const analysis_cell *cell;
  double lo, hi;
} median_ci;

static core_status median_cis(const proto_sheet *s, const analysis_summary *m,
                              median_ci *out, core_err *err) {
  for (size_t i = 0; i < m->n_cells; i++) {
    const analysis_cell *cl = &m->cells[i];
    out[i] = (median_ci){cl, NAN, NAN};
    if (cl->n_valid == 0 || !cl->values)
      continue;
    if (analysis_median_interval(cl->values, cl->n_valid, s->rule.confidence,
                                 &out[i].lo, &out[i].hi, err) < 0)
      return err->status ? err->status : CORE_ENOMEM;
    if (out[i].lo == out[i].hi) /* of no width: none */
      out[i].lo = out[i].hi = NAN;
  }
  return CORE_OK;
}

/* Why a cell of n values has no interval of its median at confidence:
 * too few values, or (an interval of no width) none between them. */
static void no_median_ci(double confidence, size_t n, core_buf *b) {
  if ((long)n >= proto_median_min_n(confidence)) {
    core_buf_printf(b,
                    "no %g%% CI of the median: the values it would span do "
                    "not vary (no spread)",
                    confidence * 100);
    return;
  }
  core_buf_printf(b,
                  "no %g%% CI of the median: one median needs at least %ld "
                  "values for one (with %zu, [min, max] covers the true "
                  "median in %.4g%% of samples)",
                  confidence * 100, proto_median_min_n(confidence), n,
                  (1.0 - 2.0 * pow(0.5, (double)n)) * 100);
}

/* x in the metric's unit, scaled as the table scales it ("3.43 ms"). */
static void amount(const proto_sheet *s, const char *metric, double x,
                   char *out, size_t cap) {
  double f = 1;
  char num[32];
  const char *unit = core_scale_unit(proto_metric_unit_of(s, metric), x, &f);
  core_fmt_sig(num, sizeof num, x * f, 3);
  snprintf(out, cap, "%s%s%s", num, unit && *unit ? " " : "",
           unit ? unit : "");
}

/* One line per cell: median, its interval, the spread. */
static void describe(const proto_sheet *s, const median_ci *m, size_t n,
                     core_buf *b) {
  for (size_t i = 0; i < n; i++) {
    const analysis_cell *cl = m[i].cell;
    char med[48], lo[48], hi[48], q1[48], q3[48], mn[48], mx[48];
    if (cl->n_valid == 0) {
      core_buf_printf(b, "%s · %s: no valid run\n", cl->arm, cl->metric);
      continue;
    }
    amount(s, cl->metric, cl->median, med, sizeof med);
    amount(s, cl->metric, m[i].lo, lo, sizeof lo);
    amount(s, cl->metric, m[i].hi, hi, sizeof hi);
    amount(s, cl->metric, cl->q1, q1, sizeof q1);
    amount(s, cl->metric, cl->q3, q3, sizeof q3);
    amount(s, cl->metric, cl->min, mn, sizeof mn);
    amount(s, cl->metric, cl->max, mx, sizeof mx);
    core_buf_printf(b, "%s · %s: median %s, ", cl->arm, cl->metric, med);
    if (isfinite(m[i].lo))
      core_buf_printf(b, "%g%% CI of the median [%s, %s]",
                      s->rule.confidence * 100, lo, hi);
    else
      no_median_ci(s->rule.confidence, cl->n_valid, b);
    core_buf_printf(b, ", IQR %s to %s, range %s to %s, n=%zu\n", q1, q3, mn,
                    mx, cl->n_valid);
  }
}

/* text written with MARK before every line. */
static void marked(const core_buf *text, core_buf *b) {
  const char *p = text->data ? text->data : "";
  const char *end = p + text->len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    core_buf_puts(b, MARK);
    core_buf_append(b, p, len);
    core_buf_puts(b, "\n");
    p += len + (nl ? 1 : 0);
  }
}

/* Where the data are, and the step to a registered sheet. */
static void closing(const compare *c, core_buf *t) {
  core_buf_puts(t, "data kept in ");
  shell_word(t, c->dir);
  core_buf_printf(t,
                  " (its sheet %s.lua, its runs under data/%s): a folder "
                  "of its own, never counted by a registered analysis; "
                  "remove it when done\n",
                  c->id, c->id);
  if (!c->sheet) {
    core_buf_puts(t, "nothing was registered; --sheet FILE writes this "
                     "comparison as a sheet to check and register\n");
    return;
  }
  core_buf_puts(t, "wrote the sheet of this comparison to ");
  shell_word(t, c->sheet);
  core_buf_puts(t, "; to preregister it: prereg check ");
  shell_word(t, c->sheet);
  core_buf_puts(t, " && prereg register ");
  shell_word(t, c->sheet);
  core_buf_puts(t, "\n");
}

/* The terminal's answer: what ran, the table analyze prints (the ratio
 * and every number the analysis gives per comparison), each median's
 * interval, where the data are. */
static void write_text(const compare *c, const proto_sheet *s,
                       const analysis_summary *m, const median_ci *mc,
                       int width, core_buf *b) {
  core_buf t;
  core_buf_init(&t);
  core_buf_printf(&t,
                  "%zu command%s, %ld round%s (each command once per round, "
                  "in a drawn order), %ld warm-up%s each; nothing was "
                  "registered\n",
                  c->n_arms, c->n_arms == 1 ? "" : "s", c->runs,
                  c->runs == 1 ? "" : "s", c->warmup,
                  c->warmup == 1 ? "" : "s");
  for (size_t a = 0; a < c->n_arms; a++) {
    core_buf_printf(&t, "  %s%s: ", c->names[a],
                    a == c->ref && c->n_arms > 1 ? " (reference)" : "");
    shell_word(&t, c->shown[a]);
    core_buf_puts(&t, "\n");
  }
  core_buf_puts(&t, "\n");
  analysis_write_table(m, s, width - (int)strlen(MARK), &t);
  core_buf_puts(&t, "\n");
  describe(s, mc, m->n_cells, &t);
  closing(c, &t);
  marked(&t, b);
  b->oom |= t.oom;
  core_buf_free(&t);
}

/* A JSON string for s (quotes, backslashes and control bytes escaped). */
static void json_str(core_buf *b, const char *s) {
  core_buf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p == '"' || *p == '\\')
      core_buf_printf(b, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      core_buf_printf(b, "\\u%04x", *p);
    else
      core_buf_printf(b, "%c", *p);
  core_buf_puts(b, "\"");
}

static void json_num(core_buf *b, double x) {
  if (isfinite(x))
    core_buf_printf(b, "%.17g", x);
  else
    core_buf_puts(b, "null");
}

/* analyze --json's object, with "exploratory", where the data are, the
 * commands and each median's interval first. */
static core_status write_json(const compare *c, const analysis_summary *m,
                              const median_ci *mc, core_buf *b,
                              core_err *err) {
  core_buf j;
  core_buf_init(&j);
  core_status st = analysis_json(m, &j, err);
  if (st == CORE_OK && (j.len < 2 || memcmp(j.data, "{\n", 2) != 0))
    st = core_fail(err, CORE_EINPUT,
                   "compare: the analysis JSON is not "
                   "an object");
  if (st != CORE_OK) {
    core_buf_free(&j);
    return st;
  }
  core_buf_puts(b, "{\n  \"exploratory\": true,\n  \"exploratory_data\": ");
  json_str(b, c->dir);
  core_buf_puts(b, ",\n  \"commands\": [");
  for (size_t a = 0; a < c->n_arms; a++) {
    core_buf_puts(b, a ? ", " : "");
    core_buf_puts(b, "{\"arm\": ");
    json_str(b, c->names[a]);
    core_buf_puts(b, ", \"command\": ");
    json_str(b, c->shown[a]);
    core_buf_puts(b, "}");
  }
  core_buf_puts(b, "],\n  \"median_intervals\": [");
  for (size_t i = 0; i < m->n_cells; i++) {
    core_buf_puts(b, i ? ",\n    " : "\n    ");
    core_buf_puts(b, "{\"workload\": ");
    json_str(b, mc[i].cell->workload);
    core_buf_puts(b, ", \"metric\": ");
    json_str(b, mc[i].cell->metric);
    core_buf_puts(b, ", \"arm\": ");
    json_str(b, mc[i].cell->arm);
    core_buf_printf(b, ", \"n\": %zu, \"median\": ", mc[i].cell->n_valid);
    json_num(b, mc[i].cell->median);
    core_buf_puts(b, ", \"ci_low\": ");
    json_num(b, mc[i].lo);
    core_buf_puts(b, ", \"ci_high\": ");
    json_num(b, mc[i].hi);
    if (!isfinite(mc[i].lo) && mc[i].cell->n_valid) {
      core_buf note;
      core_buf_init(&note);
      no_median_ci(m->confidence, mc[i].cell->n_valid, &note);
      core_buf_puts(b, ", \"note\": ");
      json_str(b, note.data ? note.data : "");
      b->oom |= note.oom;
      core_buf_free(&note);
    }
    core_buf_puts(b, "}");
  }
  core_buf_puts(b, "\n  ],\n");
  core_buf_append(b, j.data + 2, j.len - 2);
  b->oom |= j.oom;
  core_buf_free(&j);
  return CORE_OK;
}

/* A number and its unit, for Markdown. */
static void md_amount(const proto_sheet *s, const char *metric, double x,
                      core_buf *b) {
  char t[48];
  amount(s, metric, x, t, sizeof t);
  core_buf_puts(b, isfinite(x) ? t : "–");
}

/* --export-markdown: a table to paste into a ticket, marked exploratory
 * in its heading and in every row. */
static void write_markdown(const compare *c, const proto_sheet *s,
                           const analysis_summary *m, const median_ci *mc,
                           core_buf *b) {
  core_buf_printf(b,
                  "**Exploratory** (prereg compare: %ld rounds, "
                  "interleaved; nothing registered)\n\n"
                  "| | Command | Metric | Median | %g%% CI of the median | "
                  "Ratio to reference [CI] | Verdict |\n"
                  "|---|---|---|---|---|---|---|\n",
                  c->runs, s->rule.confidence * 100);
  for (size_t i = 0; i < m->n_cells; i++) {
    const analysis_cell *cl = mc[i].cell;
    const analysis_result *r = NULL;
    for (size_t k = 0; k < m->n_results && !r; k++)
      if (!strcmp(m->results[k].arm, cl->arm) &&
          !strcmp(m->results[k].metric, cl->metric))
        r = &m->results[k];
    long a = proto_arm_index(s, cl->arm);
    core_buf_puts(b, "| exploratory | ");
    core_buf_md_escape(b, a >= 0 ? c->shown[a] : cl->arm);
    core_buf_puts(b, " | ");
    core_buf_md_escape(b, cl->metric);
    core_buf_puts(b, " | ");
    md_amount(s, cl->metric, cl->median, b);
    core_buf_puts(b, " | ");
    md_amount(s, cl->metric, mc[i].lo, b);
    core_buf_puts(b, " – ");
    md_amount(s, cl->metric, mc[i].hi, b);
    if (r)
      core_buf_printf(b, " | %.3g× [%.3g, %.3g] | %s |\n", r->ratio, r->ci_low,
                      r->ci_high, r->verdict);
    else
      core_buf_puts(b, " | reference | |\n");
  }
}

/* The command */

/* The words read into c, its arms made, and the sheet's id: the --sheet
 * file's name when it is a usable ID, else "compare". */
static core_status setup(const cli_opts *opts, compare *c, double *timeout,
                         core_err *err) {
  core_status st;
  char *end;
  if (opts->data_given)
    return core_fail(err, CORE_EUSAGE,
                     "compare does not take --data: its runs are "
                     "exploratory and kept apart, never in a data folder "
                     "a registered analysis reads");
  if ((st = parse_words(c, opts->rest, opts->n_rest, err)) != CORE_OK ||
      (st = count_of(c->runs_text, "--runs", 10, 1, &c->runs, err)) !=
          CORE_OK ||
      (st = count_of(c->warmup_text, "--warmup", 1, 0, &c->warmup, err)) !=
          CORE_OK ||
      (st = param_values(c, err)) != CORE_OK ||
      (st = make_arms(c, err)) != CORE_OK)
    return st;
  *timeout = 0;
  if (c->timeout) {
    errno = 0;
    *timeout = strtod(c->timeout, &end);
    if (errno || *end || end == c->timeout || !(*timeout > 0))
      return core_fail(err, CORE_EUSAGE,
                       "compare: --timeout %s: give seconds above 0",
                       c->timeout);
  }
  if (c->n_metrics == 0)
    c->metrics[c->n_metrics++] = proto_measure_name(PROTO_MEASURE_WALL);
  const char *base = c->sheet ? strrchr(c->sheet, '/') : NULL;
  base = base ? base + 1 : c->sheet;
  size_t n = base ? strlen(base) : 0;
  if (n > 4 && strcmp(base + n - 4, ".lua") == 0)
    n -= 4;
  c->id = base ? core_strndup(base, n) : NULL;
  if (!c->id || !cli_good_id(c->id)) {
    core_free(c->id);
    c->id = core_strdup(WORKLOAD);
  }
  return c->id ? CORE_OK : core_fail(err, CORE_ENOMEM, "out of memory");
}

/* The sheet written into the folder and loaded from there, as run loads
 * a sheet; --sheet FILE gets the same text. */
static core_status load_sheet(compare *c, double timeout, proto_sheet **s,
                              core_err *err) {
  core_buf b;
  char *path = NULL, *file = NULL;
  core_buf_init(&b);
  core_status st = sheet_text(c, timeout, &b, err);
  if (st == CORE_OK)
    st = make_dir(c, err);
  if (st == CORE_OK && (!(file = core_asprintf("%s.lua", c->id)) ||
                        !(path = core_path_join(c->dir, file))))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK)
    st = cli_write_new(path, &b, "(a new folder holds it)", err);
  if (st == CORE_OK && !(*s = proto_sheet_load_to_run(path, err)))
    st = err->status ? err->status : CORE_EPROTOCOL;
  if (st == CORE_OK)
    st = same_arms(c, *s, err);
  if (st == CORE_OK && c->sheet)
    st = cli_write_new(c->sheet, &b,
                       "prereg compare never overwrites a file (choose "
                       "another --sheet FILE)",
                       err);
  core_free(file);
  core_free(path);
  core_buf_free(&b);
  return st;
}

/* The analysis of what ran, printed (or written) as asked. */
static core_status answer(const compare *c, const proto_sheet *s,
                          const data_experiment *exp, FILE *out,
                          core_err *err) {
  analysis_summary *m = NULL;
  median_ci *mc = NULL;
  core_buf b;
  core_buf_init(&b);
  core_status st = analysis_experiment(s, exp, 0, &m, err);
  if (st == CORE_OK &&
      !(mc = core_calloc(m->n_cells ? m->n_cells : 1, sizeof *mc)))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK)
    st = median_cis(s, m, mc, err);
  if (st == CORE_OK && c->markdown) {
    write_markdown(c, s, m, mc, &b);
    st = b.oom ? core_fail(err, CORE_ENOMEM, "out of memory")
               : cli_write_new(c->markdown, &b,
                               "prereg compare never overwrites a file "
                               "(choose another --export-markdown FILE)",
                               err);
    b.len = 0;
  }
  if (st == CORE_OK && c->json)
    st = write_json(c, m, mc, &b, err);
  else if (st == CORE_OK)
    write_text(c, s, m, mc, cli_term_width(out), &b);
  if (st == CORE_OK && c->markdown && !c->json) {
    core_buf t;
    core_buf_init(&t);
    core_buf_printf(&t, "wrote the Markdown table to ");
    shell_word(&t, c->markdown);
    core_buf_puts(&t, "\n");
    marked(&t, &b);
    core_buf_free(&t);
  }
  if (st == CORE_OK && b.oom)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK && b.len && fwrite(b.data, 1, b.len, out) != b.len)
    st = core_fail(err, CORE_EIO, "compare: cannot write the output");
  core_buf_free(&b);
  core_free(mc);
  analysis_summary_free(m);
  return st;
}

core_status cli_cmd_compare(const cli_opts *opts, FILE *out, core_err *err) {
  compare c;
  proto_sheet *s = NULL;
  data_experiment *exp = NULL;
  double timeout = 0;
  memset(&c, 0, sizeof c);
  core_status st = setup(opts, &c, &timeout, err);
  if (st == CORE_OK) {
    run_helper_start();
    run_become_subreaper();
    st = load_sheet(&c, timeout, &s, err);
    if (st == CORE_OK)
      st = measure(&c, s, &exp, err);
    if (st == CORE_OK)
      st = answer(&c, s, exp, out, err);
    if (st != CORE_OK && c.dir)
      core_err_prefix(err, "exploratory (data in %s): ", c.dir);
    run_kill_all_children();
    run_helper_stop();
  }
  data_experiment_free(exp);
  proto_sheet_free(s);
  compare_free(&c);
  return st;
}
