/* sheet.c: loading and freeing sheets, lookups, template expansion and
 * the evaluation of claims.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocols/proto_internal.h"

/* Loading and freeing */

/* strict: the sheet a command was given, rather than a frozen version
 * or a bundle's (proto_lua's strict). */
static proto_sheet *load_text(const char *name, const char *text, size_t len,
                              int strict, core_err *err) {
  proto_sheet *s = core_calloc(1, sizeof *s);
  core_status st;
  if (!s) {
    core_fail(err, CORE_ENOMEM, "%s: out of memory", name);
    return NULL;
  }
  s->path = core_strdup(name);
  s->text = core_strndup(text, len);
  if (!s->path || !s->text) {
    core_fail(err, CORE_ENOMEM, "%s: out of memory", name);
    proto_sheet_free(s);
    return NULL;
  }
  s->text_len = len;
  core_sha256_hex(s->text, len, s->sha256);
  st = proto_lua_open(s, err);
  if (st == CORE_OK) {
    s->lua->strict = strict;
    st = proto_lua_run(s, err);
  }
  if (st != CORE_OK) {
    proto_sheet_free(s);
    return NULL;
  }
  /* Only function claims need the interpreter after this point. */
  {
    int keep = 0;
    for (size_t i = 0; i < s->n_hypotheses; i++)
      keep |= s->hypotheses[i].kind == PROTO_CLAIM_FUNCTION;
    if (!keep)
      proto_lua_close(s);
  }
  return s;
}

proto_sheet *proto_sheet_load_text(const char *name, const char *text,
                                   size_t len, core_err *err) {
  return load_text(name, text, len, 0, err);
}

/* The sheet the user named (a link to it is followed): a regular file
 * no larger than a sheet may be, found so by its size before reading. */
static core_status read_sheet(const char *path, char **text, size_t *len,
                              core_err *err) {
  int fd;
  size_t size;
  core_status st = core_open_regular(path, 1, &fd, &size, err);
  *text = NULL;
  *len = 0;
  if (st != CORE_OK)
    return st;
  if (size > PROTO_MAX_TEXT)
    st = core_fail(err, CORE_EPROTOCOL,
                   "%s: is %zu bytes; a sheet may have at most %zu KiB", path,
                   size, PROTO_MAX_TEXT >> 10);
  else
    st = core_read_fd(fd, path, PROTO_MAX_TEXT, text, len, err);
  close(fd);
  return st;
}

/* {sheet_dir}: the absolute folder of the sheet at path, so that its
 * commands reach the sheet's inputs wherever run is started. */
static core_status set_sheet_dir(proto_sheet *s, const char *path,
                                 core_err *err) {
  char *dir = core_strdup(path), *slash;
  char abs[PATH_MAX];
  if (!dir)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
  slash = strrchr(dir, '/');
  if (slash == dir)
    slash[1] = '\0';
  else if (slash)
    *slash = '\0';
  if (!realpath(slash ? dir : ".", abs)) {
    core_free(dir);
    return core_fail(err, CORE_EPROTOCOL, "%s: its folder: %s", path,
                     strerror(errno));
  }
  core_free(dir);
  if (!(s->sheet_dir = core_strdup(abs)))
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
  if (getcwd(abs, sizeof abs) && !(s->origin = core_strdup(abs)))
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
  return CORE_OK;
}

static proto_sheet *load_path(const char *path, int strict, core_err *err) {
  char *text;
  size_t len;
  proto_sheet *s;
  core_status st = read_sheet(path, &text, &len, err);
  if (st != CORE_OK) {
    /* A sheet that cannot be read is bad input (exit 2), like one that
     * does not parse. */
    if (err && st == CORE_EIO)
      err->status = CORE_EPROTOCOL;
    return NULL;
  }
  s = load_text(path, text, len, strict, err);
  core_free(text);
  if (s && set_sheet_dir(s, path, err) != CORE_OK) {
    proto_sheet_free(s);
    return NULL;
  }
  return s;
}

proto_sheet *proto_sheet_load(const char *path, core_err *err) {
  return load_path(path, 0, err);
}

proto_sheet *proto_sheet_load_to_run(const char *path, core_err *err) {
  return load_path(path, 1, err);
}

static void free_strv(char **v, size_t n) {
  if (!v)
    return;
  for (size_t i = 0; i < n; i++)
    core_free(v[i]);
  core_free(v);
}

static void free_image(proto_image *img) {
  core_free(img->tree);
  core_free(img->digest_cmd);
  core_free(img->resident);
}

static void free_hosts(proto_hosts *h) {
  core_free(h->backend);
  free_strv(h->nodes, h->n_nodes);
  core_free(h->partition);
  core_free(h->constraint);
  core_free(h->k8s_image);
  free_strv(h->k8s_arms, h->n_k8s);
  free_strv(h->k8s_classes, h->n_k8s);
}

/* The arms (with their images) and the workloads of s. */
static void free_arms_workloads(proto_sheet *s) {
  for (size_t i = 0; s->arms && i < s->n_arms; i++) {
    proto_arm *a = &s->arms[i];
    core_free(a->name);
    core_free(a->run);
    core_free(a->cpus);
    free_strv(a->requires, a->n_requires);
    free_strv(a->versions, a->n_versions);
    free_image(&a->image);
  }
  core_free(s->arms);
  free_image(&s->image);
  for (size_t i = 0; s->workloads && i < s->n_workloads; i++) {
    proto_workload *w = &s->workloads[i];
    core_free(w->name);
    core_free(w->cmd);
    free_strv(w->steps, w->n_steps);
    core_free(w->prepare);
    core_free(w->cleanup);
    free_strv(w->metrics, w->n_metrics);
    core_free(w->looks);
    core_free(w->procs.cgroup);
    free_strv(w->procs.cmdline, w->procs.n_cmdline);
  }
  core_free(s->workloads);
}

/* The rule's verdicts and the hypotheses of s. */
static void free_rule_hypotheses(proto_sheet *s) {
  core_free(s->rule.estimator);
  for (size_t i = 0; s->rule.verdicts && i < s->rule.n_verdicts; i++) {
    core_free(s->rule.verdicts[i].name);
    for (int k = 0; k < PROTO_N_KINDS; k++)
      core_free(s->rule.verdicts[i].names[k]);
  }
  core_free(s->rule.verdicts);
  for (size_t i = 0; s->hypotheses && i < s->n_hypotheses; i++) {
    proto_hypothesis *h = &s->hypotheses[i];
    core_free(h->id);
    core_free(h->says);
    core_free(h->fn_source);
    core_free(h->workload);
    core_free(h->metric);
    free_strv(h->arms, h->n_arms);
    core_free(h->against);
    core_free(h->verdict);
  }
  core_free(s->hypotheses);
}

void proto_sheet_free(proto_sheet *s) {
  if (!s)
    return;
  proto_lua_close(s);
  free_hosts(&s->hosts);
  core_free(s->plan.sizes);
  core_free(s->plan.pilot_sha256);
  core_free(s->plan.rule_sha256);
  core_free(s->plan.looks);
  core_free(s->plan.pilot_source);
  core_free(s->conditions.governor);
  core_free(s->cpus);
  core_free(s->path);
  free_strv(s->inputs, s->n_inputs);
  core_free(s->sheet_dir);
  core_free(s->origin);
  core_free(s->id);
  core_free(s->title);
  core_free(s->question);
  core_free(s->author);
  for (size_t i = 0; s->vars && i < s->n_vars; i++) {
    core_free(s->vars[i].name);
    core_free(s->vars[i].value);
  }
  core_free(s->vars);
  free_arms_workloads(s);
  free_rule_hypotheses(s);
  free_strv(s->threats, s->n_threats);
  for (size_t i = 0; s->metrics && i < s->n_metrics; i++) {
    core_free(s->metrics[i].name);
    core_free(s->metrics[i].unit);
  }
  core_free(s->metrics);
  for (size_t i = 0; s->amendments && i < s->n_amendments; i++) {
    core_free(s->amendments[i].date);
    core_free(s->amendments[i].why);
    free_strv(s->amendments[i].supersedes, s->amendments[i].n_supersedes);
  }
  core_free(s->amendments);
  for (size_t i = 0; s->published && i < s->n_published; i++) {
    proto_published *pb = &s->published[i];
    core_free(pb->workload);
    core_free(pb->metric);
    core_free(pb->arm);
    core_free(pb->verdict);
    core_free(pb->source);
    core_free(pb->note);
    core_free(pb->reference);
    core_free(pb->missing);
  }
  core_free(s->published);
  if (s->replicates) {
    core_free(s->replicates->experiment);
    core_free(s->replicates->bundle_sha256);
    core_free(s->replicates->published_at);
    core_free(s->replicates);
  }
  core_free(s->text);
  core_free(s);
}

/* Lookups */

const char *proto_k8s_class(const proto_sheet *s, size_t a) {
  for (size_t i = 0; i < s->hosts.n_k8s; i++)
    if (strcmp(s->hosts.k8s_arms[i], s->arms[a].name) == 0)
      return s->hosts.k8s_classes[i];
  return s->arms[a].name;
}

long proto_arm_index(const proto_sheet *s, const char *name) {
  for (size_t i = 0; name && i < s->n_arms; i++)
    if (s->arms[i].name && strcmp(s->arms[i].name, name) == 0)
      return (long)i;
  return -1;
}

long proto_workload_index(const proto_sheet *s, const char *name) {
  for (size_t i = 0; name && i < s->n_workloads; i++)
    if (s->workloads[i].name && strcmp(s->workloads[i].name, name) == 0)
      return (long)i;
  return -1;
}

int proto_workload_has_metric(const proto_workload *w, const char *metric) {
  for (size_t i = 0; metric && i < w->n_metrics; i++)
    if (w->metrics[i] && strcmp(w->metrics[i], metric) == 0)
      return 1;
  return 0;
}

int proto_workload_runs_itself(const proto_workload *w) {
  return w->runs > 0 && (w->cmd || w->n_steps > 0 || w->by_arms) &&
         w->source != PROTO_SOURCE_IMPORT;
}

int proto_workload_takes_imports(const proto_workload *w) {
  return w->source == PROTO_SOURCE_IMPORT || w->source == PROTO_SOURCE_BOTH;
}

const char *proto_source_word(proto_source s) {
  return s == PROTO_SOURCE_IMPORT ? "import"
         : s == PROTO_SOURCE_BOTH ? "both"
                                  : "run";
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

const char *proto_metric_unit(const char *metric) {
  const proto_builtin_metric *b = proto_builtin_by_name(metric);
  if (!metric)
    return "";
  if (b)
    return b->unit;
  if (ends_with(metric, "_s"))
    return "s";
  if (ends_with(metric, "_mib"))
    return "MiB";
  if (ends_with(metric, "_kib"))
    return "KiB";
  return "";
}

int proto_metric_nonnegative(const char *metric) {
  static const char *const measured[] = {"pss",  "rss",  "maxrss",
                                         "wall", "user", "sys"};
  if (!metric)
    return 0;
  if (proto_metric_unit(metric)[0])
    return 1;
  for (size_t i = 0; i < sizeof measured / sizeof *measured; i++)
    if (strncmp(metric, measured[i], strlen(measured[i])) == 0)
      return 1;
  return 0;
}

/* What a metric measures */

static const proto_metric_decl *decl_of(const proto_sheet *s,
                                        const char *metric) {
  for (size_t i = 0; s && metric && i < s->n_metrics; i++)
    if (strcmp(s->metrics[i].name, metric) == 0)
      return &s->metrics[i];
  return NULL;
}

/* The kind a metric's name says, before the sheet has its say. */
static proto_metric_kind kind_by_name(const char *m) {
  const proto_builtin_metric *b = proto_builtin_by_name(m);
  if (b)
    return b->kind;
  if (ends_with(m, "_s"))
    return PROTO_KIND_TIME;
  if (ends_with(m, "_mib") || ends_with(m, "_kib"))
    return PROTO_KIND_SIZE;
  return PROTO_KIND_OTHER;
}

proto_metric_kind proto_metric_kind_of(const proto_sheet *s,
                                       const char *metric) {
  const proto_metric_decl *d = decl_of(s, metric);
  proto_metric_kind k;
  if (d && d->has_kind)
    return d->kind;
  if (!metric)
    return PROTO_KIND_OTHER;
  k = kind_by_name(metric);
  if (d && d->higher_better &&
      (k == PROTO_KIND_TIME || k == PROTO_KIND_MEMORY))
    return PROTO_KIND_OTHER;
  return k;
}

int proto_metric_higher_better(const proto_sheet *s, const char *metric) {
  const proto_metric_decl *d = decl_of(s, metric);
  return d ? d->higher_better : 0;
}

const char *proto_metric_unit_of(const proto_sheet *s, const char *metric) {
  const proto_metric_decl *d = decl_of(s, metric);
  return d && d->unit ? d->unit : proto_metric_unit(metric);
}

const char *proto_kind_word(proto_metric_kind k) {
  static const char *const w[PROTO_N_KINDS] = {"time", "memory", "size",
                                               "other"};
  return (unsigned)k < PROTO_N_KINDS ? w[k] : "other";
}

int proto_verdict_direction(const proto_verdict_rule *v) {
  int up = v->ratio.has_above || v->diff.has_above;
  int down = v->ratio.has_below || v->diff.has_below;
  if (up && !down)
    return 1;
  if (down && !up)
    return -1;
  return 0;
}

int proto_bounds_any(const proto_bounds *b) {
  return b->has_ci_excludes || b->has_above || b->has_below ||
         b->has_ci_within;
}

int proto_same_bounds(const proto_bounds *x, const proto_bounds *y) {
  return x->has_ci_excludes == y->has_ci_excludes &&
         x->has_above == y->has_above && x->has_below == y->has_below &&
         x->has_ci_within == y->has_ci_within &&
         (!x->has_ci_excludes || x->ci_excludes == y->ci_excludes) &&
         (!x->has_above || x->above == y->above) &&
         (!x->has_below || x->below == y->below) &&
         (!x->has_ci_within || (x->ci_within[0] == y->ci_within[0] &&
                                x->ci_within[1] == y->ci_within[1]));
}

void proto_bounds_words(const proto_bounds *b, int diff, const char *sep,
                        core_buf *out) {
  const char *ci = diff ? "the difference's CI" : "the CI";
  const char *what = diff ? "the difference" : "the ratio";
  if (b->has_ci_excludes) {
    core_buf_printf(out, "%s%s excludes %g", sep, ci, b->ci_excludes);
    sep = " and ";
  }
  if (b->has_above) {
    core_buf_printf(out, "%s%s is above %g", sep, what, b->above);
    sep = " and ";
  }
  if (b->has_below) {
    core_buf_printf(out, "%s%s is below %g", sep, what, b->below);
    sep = " and ";
  }
  if (b->has_ci_within)
    core_buf_printf(out, "%s%s lies within [%g, %g]", sep, ci, b->ci_within[0],
                    b->ci_within[1]);
}

int proto_rule_on_diff(const proto_rule *r) {
  for (size_t i = 0; i < r->n_verdicts; i++)
    if (proto_bounds_any(&r->verdicts[i].diff))
      return 1;
  return 0;
}

/* The word of v on kind k when nothing else decides: "higher" or "lower"
 * on a kind that is not a time, for a rule with a direction that no
 * other rule shares; else the rule's name. */
static const char *default_word(const proto_sheet *s,
                                const proto_verdict_rule *v,
                                proto_metric_kind k) {
  int dir = proto_verdict_direction(v);
  if (k == PROTO_KIND_TIME || dir == 0)
    return v->name;
  for (size_t i = 0; i < s->rule.n_verdicts; i++) {
    const proto_verdict_rule *o = &s->rule.verdicts[i];
    if (o != v && !o->names[k] && proto_verdict_direction(o) == dir)
      return v->name;
  }
  return dir > 0 ? "higher" : "lower";
}

const char *proto_verdict_word_on(const proto_sheet *s,
                                  const proto_verdict_rule *v,
                                  proto_metric_kind k) {
  if (!v)
    return "inconclusive";
  return v->names[k] ? v->names[k] : default_word(s, v, k);
}

const char *proto_verdict_word(const proto_sheet *s,
                               const proto_verdict_rule *v,
                               const char *metric) {
  if (!v || !metric)
    return "inconclusive";
  return proto_verdict_word_on(s, v, proto_metric_kind_of(s, metric));
}

int proto_verdict_answers_to(const proto_sheet *s, const proto_verdict_rule *v,
                             const char *name) {
  if (!name)
    return 0;
  if (strcmp(v->name, name) == 0)
    return 1;
  for (int k = 0; k < PROTO_N_KINDS; k++)
    if (strcmp(proto_verdict_word_on(s, v, (proto_metric_kind)k), name) == 0)
      return 1;
  return 0;
}

/* Templates */

static int is_name_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Length of the placeholder "{name}" at p, or 0 when p starts none. */
static size_t placeholder_len(const char *p) {
  if (p[0] != '{' || !((p[1] >= 'a' && p[1] <= 'z') || p[1] == '_'))
    return 0;
  const char *q = p + 1;
  while (is_name_char((unsigned char)*q))
    q++;
  return *q == '}' ? (size_t)(q - p) + 1 : 0;
}

const char *proto_next_piece(const char *p, proto_piece *out) {
  memset(out, 0, sizeof *out);
  if (!*p)
    return NULL;
  out->text = p;
  if (p[0] == '{' && p[1] == '{') {
    out->len = 1; /* the literal "{" */
    return p + 2;
  }
  size_t n = placeholder_len(p);
  if (n > 0) {
    size_t k = n - 2 < sizeof out->name ? n - 2 : sizeof out->name - 1;
    memcpy(out->name, p + 1, k);
    out->name[k] = '\0';
    out->placeholder = 1;
    out->len = n;
    return p + n;
  }
  /* Literal text up to the next brace that could start something. */
  const char *q = p + 1;
  while (*q && *q != '{')
    q++;
  out->len = (size_t)(q - p);
  return q;
}

/* The value of placeholder name: a var, then a built-in; NULL when it
 * has none here. num: room for a number's digits. */
static const char *value_of(const proto_sheet *s, const char *name,
                            const proto_expand_ctx *ctx, char num[32]) {
  for (size_t i = 0; s && i < s->n_vars; i++)
    if (strcmp(s->vars[i].name, name) == 0)
      return s->vars[i].value;
  if (strcmp(name, "experiment") == 0)
    return ctx && ctx->experiment ? ctx->experiment : s ? s->id : NULL;
  if (strcmp(name, "sheet_dir") == 0)
    return s ? s->sheet_dir : NULL;
  if (strcmp(name, "origin") == 0)
    return s ? s->origin : NULL;
  if (!ctx)
    return NULL;
  if (strcmp(name, "round") == 0) {
    snprintf(num, 32, "%ld", ctx->round);
    return num;
  }
  static const char *const names[] = {
      "cmd", "arm", "workload", "run_id", "batch_id", "cidfile", "cid", NULL};
  const char *const values[] = {ctx->cmd,    ctx->arm,      ctx->workload,
                                ctx->run_id, ctx->batch_id, ctx->cidfile,
                                ctx->cid};
  for (size_t i = 0; names[i]; i++)
    if (strcmp(name, names[i]) == 0)
      return values[i];
  return NULL;
}

/* Ends the part in b as parts[*n]; 0 when out of memory. */
static int end_part(core_buf *b, char ***parts, size_t *n, size_t *cap) {
  char *part = b->oom ? NULL : b->data ? core_buf_steal(b) : core_strdup("");
  char **nv = part ? core_grow(*parts, cap, *n, sizeof *nv, 4) : NULL;
  if (!nv) {
    core_free(part);
    return 0;
  }
  *parts = nv;
  (*parts)[(*n)++] = part;
  core_buf_init(b);
  return 1;
}

core_status proto_expand_split(const proto_sheet *s, const char *tmpl,
                               const proto_expand_ctx *ctx, const char *cut,
                               char ***parts, size_t *n, core_err *err) {
  core_buf b;
  size_t cap = 0;
  *parts = NULL;
  *n = 0;
  if (!tmpl)
    return core_fail(err, CORE_EPROTOCOL, "%s: no template to expand",
                     s && s->path ? s->path : "sheet");
  core_buf_init(&b);
  proto_piece pc;
  const char *p = tmpl;
  int ok = 1;
  while (ok && (p = proto_next_piece(p, &pc)) != NULL) {
    char num[32];
    if (!pc.placeholder) {
      core_buf_append(&b, pc.text, pc.len);
      continue;
    }
    if (cut && strcmp(pc.name, cut) == 0) {
      ok = end_part(&b, parts, n, &cap);
      continue;
    }
    const char *value = value_of(s, pc.name, ctx, num);
    if (!value) {
      core_buf_free(&b);
      core_names_free(*parts, *n);
      *parts = NULL;
      *n = 0;
      return core_fail(err, CORE_EPROTOCOL,
                       "%s: placeholder {%s} in \"%s\" has no value here",
                       s && s->path ? s->path : "sheet", pc.name, tmpl);
    }
    /* A path reaches sh -c as one word ("My Studies", or a folder named
     * "st;touch X;x", is no command): quoted for the shell. */
    if (strcmp(pc.name, "sheet_dir") == 0 || strcmp(pc.name, "origin") == 0)
      core_buf_sh_quote(&b, value, strlen(value));
    else
      core_buf_puts(&b, value);
  }
  if (!ok || !end_part(&b, parts, n, &cap)) {
    core_buf_free(&b);
    core_names_free(*parts, *n);
    *parts = NULL;
    *n = 0;
    return core_fail(err, CORE_ENOMEM, "out of memory expanding \"%s\"", tmpl);
  }
  return CORE_OK;
}

char *proto_expand(const proto_sheet *s, const char *tmpl,
                   const proto_expand_ctx *ctx, core_err *err) {
  char **parts;
  size_t n;
  if (proto_expand_split(s, tmpl, ctx, NULL, &parts, &n, err) != CORE_OK)
    return NULL;
  char *out = parts[0];
  core_free(parts);
  return out;
}

/* Claims */

/* The entry of arm against `against` (NULL: the sheet's reference, the
 * entries without a reference of their own). */
static const proto_result_view *
find_result(const proto_result_view *r, size_t n, const char *workload,
            const char *metric, const char *arm, const char *against) {
  for (size_t i = 0; i < n; i++)
    if (r[i].workload && r[i].metric && r[i].arm &&
        strcmp(r[i].workload, workload) == 0 &&
        strcmp(r[i].metric, metric) == 0 && strcmp(r[i].arm, arm) == 0 &&
        (!against || (r[i].reference && !strcmp(r[i].reference, against))))
      return &r[i];
  return NULL;
}

/* Held / not held / inconclusive of an interval [lo, hi] against bound x:
 * at_least-like (want_high) or below-like. */
static proto_outcome on_interval(double lo, double hi, double x,
                                 int want_high) {
  if (isnan(lo) || isnan(hi))
    return PROTO_INCONCLUSIVE;
  if (want_high)
    return lo >= x ? PROTO_HELD : hi < x ? PROTO_NOT_HELD : PROTO_INCONCLUSIVE;
  return hi < x ? PROTO_HELD : lo >= x ? PROTO_NOT_HELD : PROTO_INCONCLUSIVE;
}

/* One arm of a built-in claim (interface.md §1). */
static proto_outcome one_arm(const proto_hypothesis *h,
                             const proto_result_view *r) {
  if (!r)
    return PROTO_INCONCLUSIVE;
  switch (h->kind) {
  case PROTO_CLAIM_AT_LEAST:
    return on_interval(r->ci_low, r->ci_high, h->x, 1);
  case PROTO_CLAIM_BELOW:
    return on_interval(r->ci_low, r->ci_high, h->x, 0);
  case PROTO_CLAIM_DIFF_AT_LEAST:
    return on_interval(r->difference_ci_low, r->difference_ci_high, h->x, 1);
  case PROTO_CLAIM_DIFF_BELOW:
    return on_interval(r->difference_ci_low, r->difference_ci_high, h->x, 0);
  case PROTO_CLAIM_VERDICT_IS: {
    const char *v = r->verdict ? r->verdict : "inconclusive";
    /* The claim may name the rule or the word it reads on this metric
     * ("slower" or "more memory"): both are the same decision. */
    if (strcmp(v, h->verdict) == 0 ||
        (r->rule_verdict && strcmp(r->rule_verdict, h->verdict) == 0))
      return PROTO_HELD;
    /* An inconclusive result decides nothing, unless that is the claim. */
    return strcmp(v, "inconclusive") == 0 ? PROTO_INCONCLUSIVE
                                          : PROTO_NOT_HELD;
  }
  default:
    return PROTO_INCONCLUSIVE;
  }
}

core_status proto_eval_claim(const proto_sheet *s, const proto_hypothesis *h,
                             const proto_result_view *results, size_t n,
                             proto_outcome *outcome, char **reason,
                             core_err *err) {
  return proto_eval_claim_pairs(s, h, results, n, NULL, 0, outcome, reason,
                                err);
}

core_status proto_eval_claim_pairs(const proto_sheet *s,
                                   const proto_hypothesis *h,
                                   const proto_result_view *results, size_t n,
                                   const proto_result_view *pairs,
                                   size_t n_pairs, proto_outcome *outcome,
                                   char **reason, core_err *err) {
  int any_not = 0, any_inc = 0;
  core_buf b;
  *reason = NULL;
  if (h->kind == PROTO_CLAIM_FUNCTION)
    return proto_eval_function(s, h, results, n, pairs, n_pairs, outcome,
                               reason, err);
  if (h->against && strcmp(h->against, s->arms[s->reference].name) != 0)
    results = pairs, n = n_pairs;
  /* Several arms: held only if held for each; one arm that fails makes
   * it fail; otherwise it is inconclusive. */
  core_buf_init(&b);
  for (size_t i = 0; i < h->n_arms; i++) {
    const proto_result_view *r =
        find_result(results, n, h->workload, h->metric, h->arms[i],
                    results == pairs ? h->against : NULL);
    proto_outcome o = one_arm(h, r);
    any_not |= o == PROTO_NOT_HELD;
    any_inc |= o == PROTO_INCONCLUSIVE;
    if (r && !isnan(r->ci_low) && !isnan(r->ci_high))
      core_buf_printf(&b, "%s%s: ratio %.4g, CI [%.4g, %.4g]%s%s",
                      i ? "; " : "", h->arms[i], r->ratio, r->ci_low,
                      r->ci_high, r->verdict ? ", " : "",
                      r->verdict ? r->verdict : "");
    else
      core_buf_printf(&b, "%s%s: no result", i ? "; " : "", h->arms[i]);
  }
  *outcome = any_not                     ? PROTO_NOT_HELD
             : any_inc || h->n_arms == 0 ? PROTO_INCONCLUSIVE
                                         : PROTO_HELD;
  if (b.oom) {
    core_buf_free(&b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  *reason = b.data ? core_buf_steal(&b) : core_strdup("");
  if (!*reason)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return CORE_OK;
}
