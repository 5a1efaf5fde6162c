/* cmd_plan.c: `prereg plan SHEET --pilot PATH`: how often the sheet's rule
 * decides at each candidate number of runs, simulated from a pilot's
 * values (analysis_plan_run), the smallest size that reaches the power
 * per workload, and with --write that choice in the sheet.
 * SPDX-License-Identifier: MIT
 *
 * PATH is a pilot folder (DATA/ID/pilot: its valid rows, every one), an
 * experiment's folder (DATA/ID: the rows its counting rule counts, under
 * its newest version) or a bundle (the same, of the bundled data).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bundles/bundles.h"
#include "cli/cli_internal.h"
#include "cli/plan_internal.h"
#include "core/limits.h"
#include "data/data.h"
#include "protocols/proto.h"

/* Options */

/* A comma-separated list of up to max sizes from 1 to PLAN_MAX_SIZE
 * (--sizes, --looks). */
static core_status parse_list(const char *flag, const char *text, size_t *out,
                              size_t *n, size_t max, core_err *err) {
  const char *p = text;
  *n = 0;
  while (*p) {
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (errno || end == p || (*end && *end != ',') || v < 1 ||
        v > PLAN_MAX_SIZE || *n == max)
      return core_fail(err, CORE_EUSAGE,
                       "%s %s: a comma-separated list of up to %zu "
                       "increasing sizes from 1 to %ld",
                       flag, text, max, PLAN_MAX_SIZE);
    out[(*n)++] = (size_t)v;
    p = *end ? end + 1 : end;
  }
  if (*n == 0)
    return core_fail(err, CORE_EUSAGE, "%s: no size given", flag);
  return CORE_OK;
}

core_status cli_plan_args(const cli_opts *opts, plan_args *a, core_err *err) {
  char *end;
  core_status st;
  memset(a, 0, sizeof *a);
  a->power = 0.8;
  a->assurance = PLAN_ASSURANCE;
  a->sims = 1000;
  if (!opts->pilot)
    return core_fail(err, CORE_EUSAGE,
                     "plan needs --pilot PATH: a pilot folder "
                     "(DATA/ID/pilot, from prereg pilot), an experiment's "
                     "folder or a bundle");
  if ((st = parse_list("--sizes",
                       opts->sizes ? opts->sizes : PLAN_SIZES_DEFAULT,
                       a->sizes, &a->n_sizes, PLAN_MAX_SIZES, err)) != CORE_OK)
    return st;
  if (opts->looks &&
      (st = parse_list("--looks", opts->looks, a->looks, &a->n_looks,
                       CORE_MAX_LOOKS, err)) != CORE_OK)
    return st;
  if (opts->power) {
    errno = 0;
    a->power = strtod(opts->power, &end);
    if (errno || *end || end == opts->power || !(a->power > 0.0) ||
        !(a->power < 1.0))
      return core_fail(err, CORE_EUSAGE,
                       "--power %s: a probability between 0 and 1",
                       opts->power);
  }
  if (opts->assurance) {
    errno = 0;
    a->assurance = strtod(opts->assurance, &end);
    if (errno || *end || end == opts->assurance || !(a->assurance > 0.0) ||
        !(a->assurance < 1.0))
      return core_fail(err, CORE_EUSAGE,
                       "--assurance %s: a share between 0 and 1",
                       opts->assurance);
  }
  if (opts->runs) {
    errno = 0;
    a->runs = strtol(opts->runs, &end, 10);
    if (errno || *end || end == opts->runs || a->runs < 1 ||
        a->runs > PLAN_MAX_SIZE)
      return core_fail(err, CORE_EUSAGE,
                       "--runs %s: the runs per arm to give the power at, "
                       "1 to %ld",
                       opts->runs, PLAN_MAX_SIZE);
  }
  if (opts->sims) {
    errno = 0;
    a->sims = strtol(opts->sims, &end, 10);
    if (errno || *end || end == opts->sims || a->sims < 1 ||
        a->sims > PLAN_MAX_SIMS)
      return core_fail(err, CORE_EUSAGE, "--sims %s: 1 to %ld", opts->sims,
                       PLAN_MAX_SIMS);
  }
  return CORE_OK;
}

/* The pilot's values */

void cli_plan_values_free(plan_values *pv) {
  for (size_t i = 0; i < pv->n; i++) {
    core_free(pv->c[i].workload);
    core_free(pv->c[i].arm);
    core_free(pv->c[i].metric);
    core_free(pv->c[i].v);
  }
  core_free(pv->c);
  core_free(pv->path);
  memset(pv, 0, sizeof *pv);
}

static plan_vcell *vcell_find(plan_values *pv, const char *w, const char *a,
                              const char *m) {
  for (size_t i = 0; i < pv->n; i++)
    if (!strcmp(pv->c[i].workload, w) && !strcmp(pv->c[i].arm, a) &&
        !strcmp(pv->c[i].metric, m))
      return &pv->c[i];
  return NULL;
}

static core_status vcell_add(plan_values *pv, const char *w, const char *a,
                             const char *m, double x, core_err *err) {
  plan_vcell *c = vcell_find(pv, w, a, m);
  if (!c) {
    plan_vcell *g = core_realloc(pv->c, (pv->n + 1) * sizeof *g);
    if (!g)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    pv->c = g;
    c = &pv->c[pv->n++];
    memset(c, 0, sizeof *c);
    c->workload = core_strdup(w);
    c->arm = core_strdup(a);
    c->metric = core_strdup(m);
    if (!c->workload || !c->arm || !c->metric)
      return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if (c->n == (size_t)PLAN_MAX_PILOT)
    return core_fail(err, CORE_EINPUT, "%s: more than %ld values of %s/%s/%s",
                     pv->path, PLAN_MAX_PILOT, w, a, m);
  if (c->n == c->cap) {
    size_t nc = c->cap ? 2 * c->cap : 16;
    double *g = core_realloc(c->v, nc * sizeof *g);
    if (!g)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    c->v = g;
    c->cap = nc;
  }
  c->v[c->n++] = x;
  return CORE_OK;
}

/* A pilot's rows: every valid one with a value. */
static core_status on_row(void *ctx, const data_row *r, core_err *err) {
  if (!r->valid || !r->has_value)
    return CORE_OK;
  return vcell_add(ctx, r->workload, r->arm, r->metric, r->value, err);
}

static core_status from_pilot(const char *path, const proto_sheet *s,
                              plan_values *pv, core_err *err) {
  data_experiment *exp = NULL;
  core_status st = data_experiment_open_dir(path, s->id, &exp, err);
  if (st == CORE_OK && exp->n_versions == 0)
    st = core_fail(err, CORE_EINPUT,
                   "%s: not a pilot folder (no versions/v0.json); prereg "
                   "pilot %s writes one",
                   path, s->path);
  if (st == CORE_OK)
    st = data_scan_rows(exp, on_row, pv, err);
  data_experiment_free(exp);
  return st;
}

/* An experiment's counted values, under its newest version. */
static core_status from_experiment(const char *data_dir, const char *id,
                                   plan_values *pv, core_err *err) {
  char *dir = core_path_join(data_dir, id);
  data_experiment *exp = NULL;
  proto_sheet *vs = NULL;
  analysis_summary *sum = NULL;
  core_status st = dir ? data_experiment_open_dir(dir, id, &exp, err)
                       : core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK && exp->n_versions == 0)
    st = core_fail(err, CORE_EINPUT,
                   "%s: not an experiment's folder (no versions/v0.json)",
                   pv->path);
  if (st == CORE_OK &&
      !(vs = data_load_version(exp, (int)exp->n_versions - 1, err)))
    st = err->status != CORE_OK ? err->status : CORE_EINPUT;
  if (st == CORE_OK)
    st = analysis_experiment(vs, exp, 0, &sum, err);
  for (size_t i = 0; st == CORE_OK && i < sum->n_cells; i++) {
    const analysis_cell *c = &sum->cells[i];
    for (size_t k = 0; st == CORE_OK && c->values && k < c->n_valid; k++)
      st = vcell_add(pv, c->workload, c->arm, c->metric, c->values[k], err);
  }
  analysis_summary_free(sum);
  proto_sheet_free(vs);
  data_experiment_free(exp);
  core_free(dir);
  return st;
}

static core_status split_dir(const char *path, char **parent, char **base,
                             core_err *err) {
  size_t len = strlen(path);
  while (len > 1 && path[len - 1] == '/')
    len--;
  size_t cut = len;
  while (cut > 0 && path[cut - 1] != '/')
    cut--;
  *base = core_strndup(path + cut, len - cut);
  *parent = cut > 0 ? core_strndup(path, cut) : core_strdup(".");
  if (!*base || !*parent)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return CORE_OK;
}

core_status cli_plan_values(const char *path, const proto_sheet *s,
                            plan_values *pv, core_err *err) {
  char *parent = NULL, *base = NULL;
  core_status st;
  memset(pv, 0, sizeof *pv);
  if (!(pv->path = core_strdup(path)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (data_is_bundle(path)) {
    const char *sheet_path, *data_dir;
    proto_sheet *bs;
    pv->kind = "bundle";
    if ((st = data_resolve_input(path, NULL, &sheet_path, &data_dir, NULL,
                                 err)) != CORE_OK)
      return st;
    if (!(bs = proto_sheet_load(sheet_path, err)))
      return err->status != CORE_OK ? err->status : CORE_EINPUT;
    st = from_experiment(data_dir, bs->id, pv, err);
    proto_sheet_free(bs);
    return st;
  }
  if (!core_is_dir(path))
    return core_fail(err, CORE_EUSAGE,
                     "--pilot %s: neither a folder nor a bundle (.tar.gz)",
                     path);
  if ((st = split_dir(path, &parent, &base, err)) == CORE_OK) {
    if (strcmp(base, DATA_PILOT_DIR) == 0) {
      pv->kind = "pilot";
      st = from_pilot(path, s, pv, err);
    } else {
      pv->kind = "experiment";
      st = from_experiment(parent, base, pv, err);
    }
  }
  core_free(parent);
  core_free(base);
  return st;
}

/* The pairs after the comparisons with the reference (which have checked
 * that the pilot covers every cell): each later arm against each earlier
 * one, the reference aside, drawing from both arms' values; all of them
 * under the rule's pairs = "all", else those a hypothesis compares (as
 * analyze makes them). */
static core_status plan_pairs(const proto_sheet *s, plan_values *pv,
                              analysis_plan_cell *out, size_t *n,
                              core_err *err) {
  (void)err;
  for (size_t w = 0; w < s->n_workloads; w++) {
    const proto_workload *wl = &s->workloads[w];
    for (size_t m = 0; m < wl->n_metrics; m++)
      for (size_t a = 0; a < s->n_arms; a++)
        for (size_t b = 0; b < a; b++) {
          if (a == s->reference || b == s->reference ||
              (s->rule.pairs != PROTO_PAIRS_ALL &&
               !cli_plan_tested(s, wl->name, wl->metrics[m], s->arms[a].name,
                                s->arms[b].name)))
            continue;
          plan_vcell *ce = vcell_find(pv, wl->name, s->arms[b].name,
                                      wl->metrics[m]),
                     *ca = vcell_find(pv, wl->name, s->arms[a].name,
                                      wl->metrics[m]);
          if (!ce || !ca)
            continue; /* refused above */
          out[(*n)++] = (analysis_plan_cell){
              wl->name, wl->metrics[m], s->arms[a].name, ce->v, ca->v,
              ce->n,    ca->n,          s->arms[b].name, 0};
        }
  }
  return CORE_OK;
}

/* The comparisons of the sheet, each with its pilot values; a cell the
 * pilot does not cover is refused by name. With the rule's pairs, each
 * pair follows (its reference the pair's earlier arm). */
core_status cli_plan_cells(const proto_sheet *s, plan_values *pv,
                           analysis_plan_cell **out, size_t *n,
                           core_err *err) {
  size_t cap = 0;
  const char *ref = s->arms[s->reference].name;
  *n = 0;
  for (size_t w = 0; w < s->n_workloads; w++)
    cap += s->workloads[w].n_metrics * s->n_arms * s->n_arms;
  if (!(*out = core_calloc(cap + 1, sizeof **out)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t w = 0; w < s->n_workloads; w++) {
    const proto_workload *wl = &s->workloads[w];
    for (size_t m = 0; m < wl->n_metrics; m++)
      for (size_t a = 0; a < s->n_arms; a++) {
        if (a == s->reference)
          continue;
        const char *names[2] = {ref, s->arms[a].name};
        plan_vcell *c[2];
        for (int k = 0; k < 2; k++)
          if (!(c[k] = vcell_find(pv, wl->name, names[k], wl->metrics[m])))
            return core_fail(
                err, CORE_EINPUT,
                "%s: the %s has no valid values of workload %s, arm %s, "
                "metric %s: it does not cover that cell of %s; pilot it "
                "(prereg pilot %s) or plan from data that do",
                pv->path, pv->kind, wl->name, names[k], wl->metrics[m],
                s->path, s->path);
        (*out)[(*n)++] =
            (analysis_plan_cell){wl->name, wl->metrics[m], s->arms[a].name,
                                 c[0]->v,  c[1]->v,        c[0]->n,
                                 c[1]->n,  NULL,           0};
      }
  }
  return plan_pairs(s, pv, *out, n, err);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The pilot's digest: SHA-256 of its values, cell by cell in the sheet's
 * order, as "workload<TAB>arm<TAB>metric<TAB>v,v,...\n" (%.17g, sorted
 * ascending), a pair's values being its arms', already there; and the
 * fewest values any cell had. */
core_status cli_plan_digest(const analysis_plan_cell *cells, size_t n,
                            char hex[CORE_SHA256_HEX], long *fewest,
                            core_err *err) {
  core_buf b;
  core_buf_init(&b);
  *fewest = -1;
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 2 && !cells[i].reference; k++) {
      size_t nv = k ? cells[i].n_cand : cells[i].n_ref;
      const double *v = k ? cells[i].cand : cells[i].ref;
      double *sorted = core_malloc((nv ? nv : 1) * sizeof *sorted);
      if (!sorted) {
        core_buf_free(&b);
        return core_fail(err, CORE_ENOMEM, "out of memory");
      }
      memcpy(sorted, v, nv * sizeof *v);
      qsort(sorted, nv, sizeof *sorted, cmp_double);
      core_buf_printf(&b, "%s\t%s\t%s\t", cells[i].workload,
                      k ? cells[i].arm : "reference", cells[i].metric);
      for (size_t j = 0; j < nv; j++)
        core_buf_printf(&b, "%s%.17g", j ? "," : "", sorted[j]);
      core_buf_puts(&b, "\n");
      core_free(sorted);
      if (*fewest < 0 || (long)nv < *fewest)
        *fewest = (long)nv;
    }
  if (b.oom) {
    core_buf_free(&b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_sha256_hex(b.data ? b.data : "", b.len, hex);
  core_buf_free(&b);
  return CORE_OK;
}
