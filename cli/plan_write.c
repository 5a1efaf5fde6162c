/* plan_write.c: `prereg plan --write`: the recommended runs and a plan
 * block into the sheet's own text, changing nothing else: each
 * workload's `runs = N` (added after its name when absent) and the
 * top-level `plan = { ... }` (replaced, or added after `workloads`). The
 * text is read as Lua tokens (strings, long strings and comments
 * skipped), the result loaded again before it replaces the file.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli_internal.h"
#include "cli/plan_internal.h"
#include "data/data.h"
#include "protocols/proto.h"

/* Lua tokens */

typedef struct tok {
  size_t at, end; /* [at, end) in the text */
  char kind;      /* 'n' name, '1' number, 's' string, else the char */
} tok;

/* The level of a long bracket at t[i] ("[[" 0, "[=[" 1, ...), or -1. */
static long long_level(const char *t, size_t len, size_t i) {
  size_t j = i + 1;
  if (i >= len || t[i] != '[')
    return -1;
  while (j < len && t[j] == '=')
    j++;
  return j < len && t[j] == '[' ? (long)(j - i - 1) : -1;
}

/* The end of the long bracket of the given level opened at i. */
static size_t long_end(const char *t, size_t len, size_t i, long lvl) {
  for (size_t j = i + (size_t)lvl + 2; j < len; j++)
    if (t[j] == ']') {
      size_t k = j + 1;
      while (k < len && t[k] == '=')
        k++;
      if (k < len && t[k] == ']' && (long)(k - j - 1) == lvl)
        return k + 1;
    }
  return len;
}

/* The next token at or after *i, skipping space and comments; kind 0 at
 * the end. */
static tok next_tok(const char *t, size_t len, size_t *i) {
  size_t p = *i;
  tok k = {0, 0, 0};
  for (;;) {
    while (p < len && isspace((unsigned char)t[p]))
      p++;
    if (p + 1 < len && t[p] == '-' && t[p + 1] == '-') {
      long lvl = long_level(t, len, p + 2);
      if (lvl >= 0)
        p = long_end(t, len, p + 2, lvl);
      else
        while (p < len && t[p] != '\n')
          p++;
      continue;
    }
    break;
  }
  k.at = p;
  if (p >= len) {
    *i = k.end = len;
    return k;
  }
  char c = t[p];
  long lvl = long_level(t, len, p);
  if (lvl >= 0) {
    k.kind = 's';
    p = long_end(t, len, p, lvl);
  } else if (c == '"' || c == '\'') {
    k.kind = 's';
    for (p++; p < len && t[p] != c && t[p] != '\n'; p++)
      if (t[p] == '\\')
        p++;
    p = p < len ? p + 1 : len;
  } else if (isalpha((unsigned char)c) || c == '_') {
    k.kind = 'n';
    while (p < len && (isalnum((unsigned char)t[p]) || t[p] == '_'))
      p++;
  } else if (isdigit((unsigned char)c) ||
             (c == '.' && p + 1 < len && isdigit((unsigned char)t[p + 1]))) {
    k.kind = '1';
    while (p < len && (isalnum((unsigned char)t[p]) || t[p] == '.' ||
                       ((t[p] == '-' || t[p] == '+') &&
                        (t[p - 1] == 'e' || t[p - 1] == 'E'))))
      p++;
  } else {
    k.kind = c;
    p++;
  }
  *i = k.end = p;
  return k;
}

static int tok_is(const char *t, tok k, const char *name) {
  size_t n = strlen(name);
  return k.kind == 'n' && k.end - k.at == n && !memcmp(t + k.at, name, n);
}

/* The end of the table whose '{' ends at *i (just past its '}'). */
static size_t table_end(const char *t, size_t len, size_t i) {
  int depth = 1;
  while (depth > 0) {
    tok k = next_tok(t, len, &i);
    if (!k.kind)
      return len;
    depth += k.kind == '{' ? 1 : k.kind == '}' ? -1 : 0;
  }
  return i;
}

/* Finds key = at depth 1 inside the table [from, to) (from just past its
 * '{'): *key the key's token, *value the first token of its value. */
static int find_field(const char *t, size_t from, size_t to, const char *key,
                      tok *kt, tok *value) {
  size_t i = from;
  int depth = 0;
  for (;;) {
    tok k = next_tok(t, to, &i);
    if (!k.kind)
      return 0;
    if (k.kind == '{' || k.kind == '(' || k.kind == '[')
      depth++;
    else if (k.kind == '}' || k.kind == ')' || k.kind == ']')
      depth--;
    else if (depth == 0 && tok_is(t, k, key)) {
      size_t j = i;
      tok eq = next_tok(t, to, &j);
      if (eq.kind == '=' && (j >= to || t[j] != '=')) {
        *kt = k;
        *value = next_tok(t, to, &j);
        return 1;
      }
    }
  }
}

/* Edits */

typedef struct edit {
  size_t at, end;
  char *with;
} edit;

typedef struct edits {
  edit e[64];
  size_t n;
  int oom;
} edits;

static void add_edit(edits *es, size_t at, size_t end, char *with) {
  if (!with || es->n == sizeof es->e / sizeof es->e[0]) {
    core_free(with);
    es->oom = 1;
    return;
  }
  es->e[es->n++] = (edit){at, end, with};
}

/* The string token k's text without its quotes, when it is a plain
 * quoted string with no escapes. */
static int plain_string_is(const char *t, tok k, const char *want) {
  size_t n = strlen(want);
  return k.kind == 's' && (t[k.at] == '"' || t[k.at] == '\'') &&
         k.end - k.at == n + 2 && !memcmp(t + k.at + 1, want, n);
}

/* runs = N in the workload table [from, to). */
static void edit_runs(const char *t, size_t from, size_t to, long runs,
                      edits *es) {
  tok key, val, name, nval;
  if (find_field(t, from, to, "runs", &key, &val)) {
    add_edit(es, val.at, val.end, core_asprintf("%ld", runs));
    return;
  }
  if (!find_field(t, from, to, "name", &name, &nval))
    return;
  size_t j = nval.end;
  tok after = next_tok(t, to, &j);
  if (after.kind == ',' || after.kind == ';')
    add_edit(es, after.end, after.end, core_asprintf(" runs = %ld,", runs));
  else
    add_edit(es, nval.end, nval.end, core_asprintf(", runs = %ld", runs));
}

/* Every workload with a recommendation, in the workloads table. */
static int edit_workloads(const char *t, size_t from, size_t to,
                          const analysis_plan *p, edits *es) {
  size_t i = from, done = 0;
  int depth = 0;
  for (;;) {
    tok k = next_tok(t, to, &i);
    if (!k.kind)
      break;
    if (k.kind == '{' && depth == 0) {
      size_t end = table_end(t, to, k.end);
      tok key, val;
      if (find_field(t, k.end, end, "name", &key, &val))
        for (size_t w = 0; w < p->n_picks; w++)
          if (plain_string_is(t, val, p->picks[w].workload)) {
            edit_runs(t, k.end, end, p->picks[w].runs, es);
            done++;
          }
      i = end;
    } else if (k.kind == '{' || k.kind == '(') {
      depth++;
    } else if (k.kind == '}' || k.kind == ')') {
      depth--;
    }
  }
  return done == p->n_picks;
}

static char *plan_block(const analysis_plan *p, const plan_values *pv,
                        const char *digest, long fewest) {
  core_buf b;
  double expected = 0.0, var = 0.0, low = 1.0;
  core_buf_init(&b);
  /* Over the plausible truths: the comparisons expected to decide (their
   * powers summed), its simulation error, the lowest power_low. */
  for (size_t i = 0; i < p->n_results; i++)
    for (size_t k = 0; k < p->n_picks; k++)
      if (!strcmp(p->picks[k].workload, p->results[i].workload))
        for (size_t s = 0; s < p->n_sizes; s++)
          if ((long)p->sizes[s] == p->picks[k].runs) {
            const analysis_plan_result *r = &p->results[i];
            expected += r->power[s];
            var +=
                isnan(r->power_se[s]) ? 0.0 : r->power_se[s] * r->power_se[s];
            low = r->power_low[s] < low ? r->power_low[s] : low;
          }
  core_buf_printf(&b,
                  "plan = {\n"
                  "    -- How the runs were chosen: prereg plan --write, %ld "
                  "simulated\n"
                  "    -- experiments per comparison and size drawn from "
                  "the %s's values\n"
                  "    -- (docs/interface.md, \"prereg plan\").\n"
                  "    power = %g, sims = %ld,\n    sizes = { ",
                  p->sims, pv->kind, p->power, p->sims);
  for (size_t s = 0; s < p->n_sizes; s++)
    core_buf_printf(&b, "%s%zu", s ? ", " : "", p->sizes[s]);
  core_buf_printf(
      &b,
      " },\n"
      "    pilot = {\n"
      "      sha256 = \"%s\",\n"
      "      runs = %ld, source = \"%s\",\n"
      "    },\n"
      "    comparisons = %zu, expected = %.4g, expected_se = %.2g,\n"
      "    assurance = %g, power_low = %.4g,\n"
      "  }",
      digest, fewest, pv->kind, p->n_results, expected, sqrt(var),
      p->assurance, low);
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return b.data;
}

/* The edits of the sheet's text: the workloads' runs and the plan. */
static core_status plan_edits(const proto_sheet *s, const analysis_plan *p,
                              char *block, edits *es, core_err *err) {
  const char *t = s->text;
  size_t len = s->text_len, i = 0, pfrom = 0, pto = 0;
  tok k, key, val;
  while ((k = next_tok(t, len, &i)).kind)
    if (tok_is(t, k, "protocol")) {
      size_t j = i;
      tok open = next_tok(t, len, &j);
      if (open.kind == '(')
        open = next_tok(t, len, &j);
      if (open.kind == '{') {
        pfrom = open.end;
        pto = table_end(t, len, open.end);
        break;
      }
    }
  if (!pto || !find_field(t, pfrom, pto, "workloads", &key, &val) ||
      val.kind != '{') {
    core_free(block);
    return core_fail(err, CORE_EPROTOCOL,
                     "%s: --write: cannot find protocol { workloads = { ... "
                     "} } in the text; nothing written",
                     s->path);
  }
  size_t wl_end = table_end(t, len, val.end);
  if (!edit_workloads(t, val.end, wl_end, p, es)) {
    core_free(block);
    return core_fail(err, CORE_EPROTOCOL,
                     "%s: --write: a workload's name is not a plain string "
                     "in the text; write its runs by hand; nothing written",
                     s->path);
  }
  if (find_field(t, pfrom, pto, "plan", &key, &val) && val.kind == '{') {
    add_edit(es, key.at, table_end(t, len, val.end), block);
  } else {
    size_t j = wl_end;
    tok after = next_tok(t, len, &j);
    char *ins = core_asprintf("%s\n\n  %s%s", after.kind == ',' ? "" : ",",
                              block, after.kind == ',' ? "," : "");
    core_free(block);
    add_edit(es, after.kind == ',' ? after.end : wl_end,
             after.kind == ',' ? after.end : wl_end, ins);
  }
  return es->oom ? core_fail(err, CORE_ENOMEM, "out of memory") : CORE_OK;
}

static int cmp_edit(const void *a, const void *b) {
  const edit *x = a, *y = b;
  return (x->at > y->at) - (x->at < y->at);
}

static char *apply(const proto_sheet *s, edits *es, size_t *n) {
  core_buf b;
  size_t at = 0;
  core_buf_init(&b);
  qsort(es->e, es->n, sizeof es->e[0], cmp_edit);
  for (size_t i = 0; i < es->n; i++) {
    core_buf_append(&b, s->text + at, es->e[i].at - at);
    core_buf_puts(&b, es->e[i].with);
    at = es->e[i].end;
  }
  core_buf_append(&b, s->text + at, s->text_len - at);
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  *n = b.len;
  return b.data;
}

/* A registered sheet may change only by an amendment. */
static core_status check_unregistered(const cli_opts *opts,
                                      const proto_sheet *s,
                                      const proto_sheet *ns, core_err *err) {
  data_experiment *exp = NULL;
  const char *dir = opts->data_dir ? opts->data_dir : "data";
  core_status st = data_experiment_open(dir, s, &exp, err);
  if (st == CORE_OK && exp->n_versions > 0 &&
      strcmp(exp->versions[exp->n_versions - 1].sha256, ns->sha256) != 0)
    st = core_fail(
        err, CORE_ELOCK,
        "%s: registered (v%d in %s): the plan would change its runs after "
        "registration, which only an amendment may do; nothing written. "
        "To change them anyway, edit runs and the plan block by hand, "
        "append an entry to `amendments` saying why, and run prereg amend "
        "%s (after data exist, the report reads it as AMENDED AFTER DATA)",
        s->path, exp->versions[exp->n_versions - 1].number, exp->dir, s->path);
  data_experiment_free(exp);
  return st;
}

static core_status check_picks(const proto_sheet *s, const analysis_plan *p,
                               core_err *err) {
  for (size_t k = 0; k < p->n_picks; k++)
    if (p->picks[k].runs <= 0)
      return core_fail(err, CORE_ESTATS,
                       "%s: --write: workload %s reaches the power at none "
                       "of the sizes; nothing written: %s",
                       s->path, p->picks[k].workload, p->picks[k].why);
  return CORE_OK;
}

core_status cli_plan_write(const cli_opts *opts, const proto_sheet *s,
                           const analysis_plan *p, const plan_values *pv,
                           const char *digest, long fewest, FILE *out,
                           core_err *err) {
  edits es;
  struct stat sb;
  proto_sheet *ns = NULL;
  char *text = NULL, *block;
  size_t n = 0;
  core_status st;
  memset(&es, 0, sizeof es);
  if ((st = check_picks(s, p, err)) != CORE_OK)
    return st;
  if (lstat(s->path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_nlink != 1)
    return core_fail(err, CORE_EUSAGE,
                     "%s: --write writes a regular file with one name only "
                     "(not a link); nothing written",
                     s->path);
  if (!(block = plan_block(p, pv, digest, fewest)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = plan_edits(s, p, block, &es, err)) == CORE_OK &&
      !(text = apply(s, &es, &n)))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK && !(ns = proto_sheet_load_text(s->path, text, n, err)))
    st = err->status != CORE_OK ? err->status : CORE_EPROTOCOL;
  if (st == CORE_OK)
    st = check_unregistered(opts, s, ns, err);
  if (st == CORE_OK && strcmp(ns->sha256, s->sha256) != 0)
    st = core_write_file_atomic(s->path, text, n, sb.st_mode & 07777, err);
  if (st == CORE_OK)
    fprintf(out,
            "%s: %s (sha256 %.12s): runs per arm and the plan block "
            "written; prereg register %s freezes them\n",
            s->path, strcmp(ns->sha256, s->sha256) ? "written" : "unchanged",
            ns->sha256, s->path);
  for (size_t i = 0; i < es.n; i++)
    core_free(es.e[i].with);
  core_free(text);
  proto_sheet_free(ns);
  return st;
}
