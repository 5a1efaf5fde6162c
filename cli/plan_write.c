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

/* Lua tokens, read as Lua 5.4's own lexer reads them (llex.c): a text
 * the scanner cannot read as Lua does is refused, never guessed at. */

typedef struct tok {
  size_t at, end; /* [at, end) in the text */
  char kind;      /* 'n' name, '1' number, 's' string, 'o' a two- or three-
                     character operator, 'E' a text it cannot read, else the
                     char; 0 at the end */
} tok;

static int lua_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

static int lua_alpha(char c) {
  return isalpha((unsigned char)c) || c == '_';
}

/* Past the line break at p: "\n", "\r", "\r\n" or "\n\r" is one. */
static size_t past_newline(const char *t, size_t len, size_t p) {
  char c = t[p++];
  if (p < len && (t[p] == '\n' || t[p] == '\r') && t[p] != c)
    p++;
  return p;
}

/* At t[i] == '[': the level of a long bracket ("[[" 0, "[=[" 1, ...),
 * -1 for a lone '[', -2 for '[' and '=' not followed by '['. */
static long long_level(const char *t, size_t len, size_t i) {
  size_t j = i + 1;
  if (i >= len || t[i] != '[')
    return -1;
  while (j < len && t[j] == '=')
    j++;
  if (j < len && t[j] == '[')
    return (long)(j - i - 1);
  return j == i + 1 ? -1 : -2;
}

/* Past the long bracket of the given level opened at i; 0: unclosed. */
static size_t long_end(const char *t, size_t len, size_t i, long lvl) {
  for (size_t j = i + (size_t)lvl + 2; j < len; j++)
    if (t[j] == ']') {
      size_t k = j + 1;
      while (k < len && t[k] == '=')
        k++;
      if (k < len && t[k] == ']' && (long)(k - j - 1) == lvl)
        return k + 1;
    }
  return 0;
}

/* Past the escape whose backslash is at p - 1; 0: not one Lua reads. */
static size_t past_escape(const char *t, size_t len, size_t p) {
  size_t d = 0;
  if (p >= len)
    return 0;
  if (t[p] == '\n' || t[p] == '\r')
    return past_newline(t, len, p);
  if (strchr("abfnrtv\\\"'", t[p]))
    return p + 1;
  if (t[p] == 'z') { /* skips the spaces after it, line breaks too */
    for (p++; p < len && lua_space(t[p]); p++)
      ;
    return p;
  }
  if (t[p] == 'x')
    return p + 2 < len && isxdigit((unsigned char)t[p + 1]) &&
                   isxdigit((unsigned char)t[p + 2])
               ? p + 3
               : 0;
  if (t[p] == 'u') {
    if (++p >= len || t[p++] != '{')
      return 0;
    while (p < len && isxdigit((unsigned char)t[p]))
      p++, d++;
    return d && p < len && t[p] == '}' ? p + 1 : 0;
  }
  while (d < 3 && p < len && isdigit((unsigned char)t[p]))
    p++, d++;
  return d ? p : 0;
}

/* Past the quoted string opened at p; 0: unclosed or broken. */
static size_t string_end(const char *t, size_t len, size_t p) {
  char q = t[p++];
  while (p < len && t[p] != q) {
    if (t[p] == '\n' || t[p] == '\r')
      return 0;
    if (t[p] == '\\') {
      if (!(p = past_escape(t, len, p + 1)))
        return 0;
    } else {
      p++;
    }
  }
  return p < len ? p + 1 : 0;
}

/* Past the numeral at p (read_numeral: hex digits, '.', and an exponent
 * with its sign); 0: a numeral touching a letter. */
static size_t number_end(const char *t, size_t len, size_t p) {
  const char *expo = "Ee";
  if (t[p] == '0' && p + 1 < len && (t[p + 1] == 'x' || t[p + 1] == 'X')) {
    expo = "Pp";
    p += 2;
  }
  while (p < len) {
    if (t[p] == expo[0] || t[p] == expo[1]) {
      p++;
      if (p < len && (t[p] == '+' || t[p] == '-'))
        p++;
    } else if (isxdigit((unsigned char)t[p]) || t[p] == '.') {
      p++;
    } else {
      break;
    }
  }
  return p < len && lua_alpha(t[p]) ? 0 : p;
}

/* Past the space and comments at p; 0 in *bad when a long comment is
 * unclosed. */
static size_t skip_blank(const char *t, size_t len, size_t p, int *bad) {
  for (;;) {
    while (p < len && lua_space(t[p]))
      p++;
    if (!(p + 1 < len && t[p] == '-' && t[p + 1] == '-'))
      return p;
    long lvl = long_level(t, len, p + 2);
    if (lvl >= 0) {
      size_t e = long_end(t, len, p + 2, lvl);
      if (!e) {
        *bad = 1;
        return p;
      }
      p = e;
    } else {
      while (p < len && t[p] != '\n' && t[p] != '\r')
        p++;
    }
  }
}

/* The operators of two or three characters. */
static size_t operator_end(const char *t, size_t len, size_t p) {
  static const char *const ops[] = {
      "...", "..", "==", "~=", "<=", ">=", "//", "::", "<<", ">>", NULL};
  for (size_t i = 0; ops[i]; i++) {
    size_t n = strlen(ops[i]);
    if (p + n <= len && !memcmp(t + p, ops[i], n))
      return p + n;
  }
  return 0;
}

/* The next token at or after *i, skipping space and comments. */
static tok next_tok(const char *t, size_t len, size_t *i) {
  int bad = 0;
  size_t p = skip_blank(t, len, *i, &bad), e;
  tok k = {p, p, 0};
  if (bad || p >= len) {
    k.kind = bad ? 'E' : 0;
    *i = k.end = len;
    return k;
  }
  char c = t[p];
  long lvl = c == '[' ? long_level(t, len, p) : -1;
  if (lvl >= 0 || lvl == -2) {
    k.kind = 's';
    e = lvl >= 0 ? long_end(t, len, p, lvl) : 0;
  } else if (c == '"' || c == '\'') {
    k.kind = 's';
    e = string_end(t, len, p);
  } else if (lua_alpha(c)) {
    k.kind = 'n';
    for (e = p; e < len && (lua_alpha(t[e]) || isdigit((unsigned char)t[e]));)
      e++;
  } else if (isdigit((unsigned char)c) ||
             (c == '.' && p + 1 < len && isdigit((unsigned char)t[p + 1]))) {
    k.kind = '1';
    e = number_end(t, len, p);
  } else if ((e = operator_end(t, len, p)) != 0) {
    k.kind = 'o';
  } else {
    k.kind = c;
    e = p + 1;
  }
  if (!e)
    k.kind = 'E';
  *i = k.end = e ? e : len;
  return k;
}

/* CORE_OK when the whole text reads as Lua tokens; else the line where
 * it does not, and nothing is written. */
static core_status lex_all(const proto_sheet *s, core_err *err) {
  size_t i = 0, line = 1;
  tok k;
  while ((k = next_tok(s->text, s->text_len, &i)).kind && k.kind != 'E')
    ;
  if (k.kind != 'E')
    return CORE_OK;
  for (size_t j = 0; j < k.at; j++)
    line += s->text[j] == '\n';
  return core_fail(err, CORE_EPROTOCOL,
                   "%s:%zu: --write cannot read the text there as Lua "
                   "tokens; nothing written: write runs and the plan "
                   "block by hand",
                   s->path, line);
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

/* "{ 5, 10, 30 }" */
static char *looks_text(const size_t *looks, size_t n) {
  core_buf b;
  core_buf_init(&b);
  core_buf_puts(&b, "{ ");
  for (size_t k = 0; k < n; k++)
    core_buf_printf(&b, "%s%zu", k ? ", " : "", looks[k]);
  core_buf_puts(&b, " }");
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return b.data;
}

/* runs = N (and the looks, when lk) in the workload table [from, to). */
static void edit_runs(const char *t, size_t from, size_t to, long runs,
                      const char *lk, edits *es) {
  tok key, val, name, nval, lkey, lval;
  int has_looks = lk && find_field(t, from, to, "looks", &lkey, &lval);
  const char *more = lk && !has_looks ? ", looks = " : "";
  if (has_looks) {
    if (lval.kind != '{') {
      es->oom = 2;
      return;
    }
    add_edit(es, lval.at, table_end(t, to, lval.end), core_strdup(lk));
  }
  if (!lk || has_looks)
    lk = "";
  if (find_field(t, from, to, "runs", &key, &val)) {
    add_edit(es, val.at, val.end, core_asprintf("%ld%s%s", runs, more, lk));
    return;
  }
  if (!find_field(t, from, to, "name", &name, &nval))
    return;
  size_t j = nval.end;
  tok after = next_tok(t, to, &j);
  if (after.kind == ',' || after.kind == ';')
    add_edit(es, after.end, after.end,
             core_asprintf(" runs = %ld%s%s,", runs, more, lk));
  else
    add_edit(es, nval.end, nval.end,
             core_asprintf(", runs = %ld%s%s", runs, more, lk));
}

/* The looks to write into workload k's table, or NULL: a sequential
 * pick's, when they are not the sheet's already. */
static char *looks_for(const proto_sheet *s, const plan_choice *c,
                       const plan_pick *k) {
  long w = proto_workload_index(s, k->workload);
  const proto_workload *wl = w >= 0 ? &s->workloads[w] : NULL;
  int same = wl && wl->n_looks == c->n_looks;
  if (!k->sequential)
    return NULL;
  for (size_t i = 0; same && i < c->n_looks; i++)
    same = wl->looks[i] == (long)c->looks[i];
  return same ? NULL : looks_text(c->looks, c->n_looks);
}

/* Every workload with a recommendation, in the workloads table. */
static int edit_workloads(const proto_sheet *s, size_t from, size_t to,
                          const plan_choice *c, edits *es) {
  const char *t = s->text;
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
        for (size_t w = 0; w < c->n; w++)
          if (plain_string_is(t, val, c->w[w].workload)) {
            char *lk = looks_for(s, c, &c->w[w]);
            edit_runs(t, k.end, end, c->w[w].runs, lk, es);
            core_free(lk);
            done++;
          }
      i = end;
    } else if (k.kind == '{' || k.kind == '(') {
      depth++;
    } else if (k.kind == '}' || k.kind == ')') {
      depth--;
    }
  }
  return done == c->n;
}

static char *plan_block(const proto_sheet *sh, const analysis_plan *p,
                        const plan_choice *c, const plan_values *pv,
                        const char *digest, long fewest) {
  char rule[CORE_SHA256_HEX];
  core_buf b;
  if (proto_plan_rule_sha256(sh, rule) != 0)
    return NULL;
  core_buf_init(&b);
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
  core_buf_printf(&b,
                  " },\n"
                  "    pilot = {\n"
                  "      sha256 = \"%s\",\n"
                  "      runs = %ld, source = \"%s\",\n"
                  "    },\n"
                  "    rule_sha256 = \"%s\",\n"
                  "    comparisons = %zu, expected = %.4g,\n"
                  "    sized_for = \"%s\", achieved = %.4g,\n",
                  digest, fewest, pv->kind, rule, c->comparisons, c->expected,
                  c->for_hypotheses ? "hypotheses" : "all", c->achieved);
  if (c->expected_se >= 0)
    core_buf_printf(&b, "    expected_se = %.2g,\n", c->expected_se);
  if (c->power_low >= 0)
    core_buf_printf(&b, "    assurance = %g, power_low = %.4g,\n",
                    p->assurance, c->power_low);
  if (c->given)
    core_buf_printf(&b, "    runs = %ld,\n", c->given);
  if (c->n_looks) {
    char *lk = looks_text(c->looks, c->n_looks);
    core_buf_printf(&b, "    looks = %s,\n", lk ? lk : "");
    b.oom |= !lk;
    core_free(lk);
  }
  core_buf_puts(&b, "  }");
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return b.data;
}

/* The edits of the sheet's text: the workloads' runs and the plan. */
static core_status plan_edits(const proto_sheet *s, const plan_choice *c,
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
  if (!edit_workloads(s, val.end, wl_end, c, es)) {
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
  if (es->oom == 2)
    return core_fail(err, CORE_EPROTOCOL,
                     "%s: --write: a workload's looks are not a table in "
                     "the text; write them by hand; nothing written",
                     s->path);
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
                               const plan_choice *c, core_err *err) {
  for (size_t k = 0; k < c->n; k++)
    if (c->w[k].runs <= 0 && c->w[k].sequential)
      return core_fail(err, CORE_ESTATS,
                       "%s: --write: workload %s: the sequential design "
                       "with its last look at %zu decides its weakest "
                       "comparison in %.1f%% of simulated experiments, "
                       "under the power %.0f%%; nothing written: plan "
                       "larger looks, or give --runs %zu to register that "
                       "power",
                       s->path, c->w[k].workload, c->looks[c->n_looks - 1],
                       100.0 * c->w[k].achieved, 100.0 * p->power,
                       c->looks[c->n_looks - 1]);
    else if (c->w[k].runs <= 0)
      return core_fail(
          err, CORE_ESTATS,
          "%s: --write: workload %s reaches the power at none "
          "of the %s; nothing written%s%s",
          s->path, c->w[k].workload, c->w[k].sequential ? "looks" : "sizes",
          p->picks[k].why ? ": " : "", p->picks[k].why ? p->picks[k].why : "");
  return CORE_OK;
}

/* The sheet loaded from the new text against the one read: every
 * workload's runs and looks as chosen, the plan block as written, and
 * nothing else changed (plan_same.c). */
static core_status check_result(const proto_sheet *s, const proto_sheet *ns,
                                const analysis_plan *p, const plan_choice *c,
                                const char *digest, core_err *err) {
  const char *what = cli_plan_changed(s, ns, p, c, digest);
  if (!what)
    return CORE_OK;
  return core_fail(err, CORE_EPROTOCOL,
                   "%s: --write: the sheet loaded from the edited text %s; "
                   "its text is not one --write can edit safely; nothing "
                   "written: write runs and the plan block by hand",
                   s->path, what);
}

core_status cli_plan_write(const cli_opts *opts, const proto_sheet *s,
                           const analysis_plan *p, const plan_choice *c,
                           const plan_values *pv, const char *digest,
                           long fewest, FILE *out, core_err *err) {
  edits es;
  struct stat sb;
  proto_sheet *ns = NULL;
  char *text = NULL, *block;
  size_t n = 0;
  core_status st;
  memset(&es, 0, sizeof es);
  if ((st = check_picks(s, p, c, err)) != CORE_OK ||
      (st = lex_all(s, err)) != CORE_OK)
    return st;
  if (lstat(s->path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_nlink != 1)
    return core_fail(err, CORE_EUSAGE,
                     "%s: --write writes a regular file with one name only "
                     "(not a link); nothing written",
                     s->path);
  if (!(block = plan_block(s, p, c, pv, digest, fewest)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = plan_edits(s, c, block, &es, err)) == CORE_OK &&
      !(text = apply(s, &es, &n)))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK && !(ns = proto_sheet_load_text(s->path, text, n, err)))
    st = err->status != CORE_OK ? err->status : CORE_EPROTOCOL;
  if (st == CORE_OK)
    st = check_result(s, ns, p, c, digest, err);
  if (st == CORE_OK)
    st = check_unregistered(opts, s, ns, err);
  if (st == CORE_OK && strcmp(ns->sha256, s->sha256) != 0)
    st = core_replace_file_atomic(s->path, text, n, sb.st_mode & 07777,
                                  s->sha256, err);
  if (st == CORE_OK)
    fprintf(out,
            "%s: %s (sha256 %.12s): runs per arm%s and the plan block "
            "written; prereg register %s freezes them\n",
            s->path, strcmp(ns->sha256, s->sha256) ? "written" : "unchanged",
            ns->sha256, c->n_looks ? ", looks" : "", s->path);
  for (size_t i = 0; i < es.n; i++)
    core_free(es.e[i].with);
  core_free(text);
  proto_sheet_free(ns);
  return st;
}
