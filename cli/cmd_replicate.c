/* cmd_replicate.c: `prereg replicate BUNDLE [--id ID]`: a replication's
 * sheet from a published bundle (the original's newest sheet version with
 * `replicates` and the ratios it measured as `published`), the original's
 * inputs beside it and its raw data under DATA/ID/original/. It runs
 * nothing: a bundle is someone else's, so it lists the commands the sheet
 * will run for the replicator to read first.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "bundles/bundles.h"
#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"

/* What replicate works from: the verified, extracted copy of the bundle
 * and the analysis of its data. */
typedef struct original {
  const char *bundle;
  char *data_dir, *sheet_path;
  char sha256[CORE_SHA256_HEX];
  proto_sheet *sheet;
  data_experiment *exp;
  analysis_summary *sum;
  data_report_inputs *facts;
  char published_at[32];
} original;

void cli_lua_quote(core_buf *b, const char *s) {
  core_buf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      core_buf_printf(b, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      core_buf_printf(b, "\\%03u", (unsigned)*p);
    else
      core_buf_printf(b, "%c", *p);
  }
  core_buf_puts(b, "\"");
}

/* The newest time the original's data record (a version filed, a batch
 * frozen): when it was published, as the bundle's own times say. */
static void published_at(original *o) {
  const char *best = "";
  for (size_t i = 0; i < o->exp->n_versions; i++)
    if (o->exp->versions[i].filed_at &&
        strcmp(o->exp->versions[i].filed_at, best) > 0)
      best = o->exp->versions[i].filed_at;
  for (size_t i = 0; o->facts && i < o->facts->n_batches; i++) {
    const char *f = data_fact_get(&o->facts->batches[i], "frozen_at");
    if (f && strcmp(f, best) > 0)
      best = f;
  }
  snprintf(o->published_at, sizeof o->published_at, "%s",
           *best ? best : "unknown");
}

static core_status open_original(original *o, core_err *err) {
  core_status st;
  if (!data_is_bundle(o->bundle))
    return core_fail(err, CORE_EUSAGE,
                     "replicate: %s is not a bundle (a .tar.gz that prereg "
                     "publish wrote)",
                     o->bundle);
  if ((st = data_bundle_extract(o->bundle, &o->data_dir, &o->sheet_path,
                                err)) != CORE_OK)
    return st;
  if ((st = core_sha256_file(o->bundle, o->sha256, err)) != CORE_OK)
    return st;
  if (!(o->sheet = proto_sheet_load(o->sheet_path, err)))
    return err->status ? err->status : CORE_EPROTOCOL;
  if ((st = data_experiment_open(o->data_dir, o->sheet, &o->exp, err)) !=
          CORE_OK ||
      (st = data_report_inputs_load(o->exp, &o->facts, err)) != CORE_OK)
    return st;
  if (o->exp->n_versions == 0)
    return core_fail(err, CORE_EINPUT, "%s: the bundle holds no sheet version",
                     o->bundle);
  if ((st = analysis_experiment(o->sheet, o->exp, 0, &o->sum, err)) != CORE_OK)
    return st;
  published_at(o);
  return CORE_OK;
}

static void original_free(original *o) {
  analysis_summary_free(o->sum);
  data_report_inputs_free(o->facts);
  data_experiment_free(o->exp);
  proto_sheet_free(o->sheet);
  core_free(o->data_dir);
  core_free(o->sheet_path);
}

/* One entry of `published`: a comparison of the original as its analysis
 * gives it. */
static void published_entry(core_buf *b, const original *o,
                            const analysis_result *r) {
  const char *base = strrchr(o->bundle, '/');
  core_buf src;
  /* The bundle's name, quoted: a sheet's text holds no control byte. */
  core_buf_init(&src);
  core_buf_puts(&src, "bundle ");
  base = base ? base + 1 : o->bundle;
  core_buf_quote(&src, base, strlen(base), 0);
  core_buf_printf(&src, " (sha256 %.12s), v%zu", o->sha256,
                  o->exp->n_versions - 1);
  core_buf_puts(b, "    { workload = ");
  cli_lua_quote(b, r->workload);
  core_buf_puts(b, ", metric = ");
  cli_lua_quote(b, r->metric);
  core_buf_puts(b, ", arm = ");
  cli_lua_quote(b, r->arm);
  if (r->reference && strcmp(r->reference, o->sum->reference) != 0) {
    core_buf_puts(b, ", reference = ");
    cli_lua_quote(b, r->reference);
  }
  core_buf_printf(b, ",\n      ratio = %.17g", r->ratio);
  if (!isnan(r->ci_low) && !isnan(r->ci_high) && r->ci_low > 0)
    core_buf_printf(b, ", ci_low = %.17g, ci_high = %.17g", r->ci_low,
                    r->ci_high);
  core_buf_puts(b, ", verdict = ");
  cli_lua_quote(b, r->verdict);
  core_buf_puts(b, ",\n      source = ");
  cli_lua_quote(b, src.data ? src.data : "");
  core_buf_puts(b, " },\n");
  b->oom |= src.oom;
  core_buf_free(&src);
}

/* The replication's sheet: a preamble that sets id, replicates and
 * published on the table the original's text hands to protocol{}, then
 * that text unchanged, so that what differs is what the replicator
 * edits. */
static void sheet_text(core_buf *b, const original *o, const char *id) {
  const analysis_summary *a = o->sum;
  size_t v = o->exp->n_versions - 1;
  /* The bundle's name is anyone's: quoted, a newline in it cannot end
   * the comment and start code. */
  core_buf_printf(b,
                  "-- %s.lua: a replication of %s (its sheet version v%zu), "
                  "written by\n-- prereg replicate from ",
                  id, o->sheet->id, v);
  core_buf_quote(b, o->bundle, strlen(o->bundle), 0);
  core_buf_printf(b,
                  ". The original's sheet follows as it was\n-- registered; "
                  "edit what this host needs, then prereg register it. "
                  "Its\n-- raw data are under DATA/%s/original/%s/.\n",
                  id, o->sheet->id);
  core_buf_puts(b, "local replication = {\n  id = ");
  cli_lua_quote(b, id);
  core_buf_puts(b, ",\n  replicates = { experiment = ");
  cli_lua_quote(b, o->sheet->id);
  core_buf_printf(b, ", version = %zu,\n    bundle_sha256 = \"%s\",\n", v,
                  o->sha256);
  core_buf_puts(b, "    published_at = ");
  cli_lua_quote(b, o->published_at);
  core_buf_puts(b, " },\n  published = {\n");
  for (size_t i = 0; i < a->n_results; i++)
    if (!isnan(a->results[i].ratio) && a->results[i].ratio > 0 &&
        !a->results[i].host)
      published_entry(b, o, &a->results[i]);
  core_buf_puts(b, "  },\n}\nlocal original_protocol = protocol\n"
                   "local function protocol(t)\n"
                   "  for k, v in pairs(replication) do t[k] = v end\n"
                   "  return original_protocol(t)\nend\n"
                   "-- The original's sheet:\n");
  core_buf_append(b, o->sheet->text, o->sheet->text_len);
}

/* A path the bundle reader accepted, checked again before anything is
 * written from it: relative, no empty component and none starting with a
 * dot (".", "..", and what tools act on when they enter a folder: .git,
 * .envrc, .vscode, .hg; no sheet's inputs or data folder holds one). */
static int safe_rel(const char *rel) {
  const char *p = rel;
  if (!*rel || *rel == '/')
    return 0;
  while (*p) {
    size_t n = strcspn(p, "/");
    if (n == 0 || p[0] == '.')
      return 0;
    p += n;
    if (*p == '/')
      p++;
  }
  return 1;
}

/* Creates path anew (never replacing a file, never through a link) with
 * len bytes of data; its folders first. */
static core_status write_new(const char *path, const char *data, size_t len,
                             unsigned mode, core_err *err) {
  char *dir = core_strdup(path), *slash;
  core_status st;
  int fd;
  if (!dir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((slash = strrchr(dir, '/')))
    *slash = '\0';
  st = slash ? core_mkdir_p(dir, 0755, err) : CORE_OK;
  core_free(dir);
  if (st != CORE_OK)
    return st;
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    return core_fail(err, errno == EEXIST ? CORE_EUSAGE : CORE_EIO,
                     "%s: %s; prereg replicate never overwrites a file "
                     "(choose another --id, or another folder)",
                     path,
                     errno == EEXIST ? "already exists" : strerror(errno));
  if (core_write_all(fd, data, len, path, err) != CORE_OK) {
    close(fd);
    return CORE_EIO;
  }
  if (close(fd) != 0)
    return core_fail(err, CORE_EIO, "%s: cannot write: %s", path,
                     strerror(errno));
  return CORE_OK;
}

/* A file of the verified copy (src), written anew at path. */
static core_status copy_new(const char *src, const char *path, unsigned mode,
                            core_err *err) {
  char *data = NULL;
  size_t len = 0;
  core_status st = core_read_file(src, &data, &len, err);
  if (st == CORE_OK)
    st = write_new(path, data, len, mode, err);
  core_free(data);
  return st;
}

/* The files of the MANIFEST under prefix (all when ""), copied from the
 * verified copy to dest/REST (REST: the path after prefix). check_only:
 * only refuse, before anything is written, a destination that exists. */
static core_status copy_listed(const original *o, const char *prefix,
                               const char *dest, unsigned mode, int check_only,
                               size_t *count, core_err *err) {
  size_t pl = strlen(prefix);
  core_status st = CORE_OK;
  for (size_t i = 0; st == CORE_OK && i < o->facts->n_manifest; i++) {
    const char *rel = o->facts->manifest[i].path;
    char *src, *to;
    if (strncmp(rel, prefix, pl) != 0)
      continue;
    if (!safe_rel(rel) || !safe_rel(rel + pl))
      return core_fail(err, CORE_EINPUT,
                       "%s: MANIFEST names \"%s\": not a path inside the "
                       "bundle's folder, or a name starting with '.' (a "
                       "replication copies no dot-file or dot-folder: tools "
                       "act on them)",
                       o->bundle, rel);
    src = core_path_join(o->exp->dir, rel);
    to = core_path_join(dest, rel + pl);
    if (!src || !to)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    else if (check_only && core_exists(to))
      st = core_fail(err, CORE_EUSAGE,
                     "%s already exists; prereg replicate never overwrites "
                     "a file (choose another --id, or another folder)",
                     to);
    else if (!check_only && (st = copy_new(src, to, mode, err)) == CORE_OK)
      (*count)++;
    core_free(src);
    core_free(to);
  }
  return st;
}

/* The original's raw data, MANIFEST and all, at orig_dir (DATA/ID/
 * original/ORIGINAL): a data folder verify checks like any other. */
static core_status copy_original(const original *o, const char *orig_dir,
                                 size_t *count, core_err *err) {
  char *src, *to;
  core_status st = copy_listed(o, "", orig_dir, 0444, 0, count, err);
  if (st != CORE_OK)
    return st;
  src = core_path_join(o->exp->dir, "MANIFEST");
  to = core_path_join(orig_dir, "MANIFEST");
  st = src && to ? copy_new(src, to, 0444, err)
                 : core_fail(err, CORE_ENOMEM, "out of memory");
  core_free(src);
  core_free(to);
  return st;
}

static void list_cmd(FILE *out, const char *what, const char *cmd) {
  if (cmd)
    fprintf(out, "  %-24s %s\n", what, cmd);
}

/* Every command the sheet runs, as templates ({name} filled by run). */
static void list_commands(const proto_sheet *s, FILE *out) {
  char what[160];
  fprintf(out, "commands the sheet will run (read them before prereg run; "
               "prereg run SHEET --dry-run shows them expanded):\n");
  for (size_t i = 0; i < s->n_vars; i++) {
    snprintf(what, sizeof what, "var {%s}", s->vars[i].name);
    list_cmd(out, what, s->vars[i].value);
  }
  list_cmd(out, "image digest", s->image.digest_cmd);
  for (size_t i = 0; i < s->n_arms; i++) {
    const proto_arm *a = &s->arms[i];
    snprintf(what, sizeof what, "arm %s run", a->name);
    list_cmd(out, what, a->run);
    for (size_t k = 0; k < a->n_requires; k++) {
      snprintf(what, sizeof what, "arm %s requires", a->name);
      list_cmd(out, what, a->requires[k]);
    }
    for (size_t k = 0; k < a->n_versions; k++) {
      snprintf(what, sizeof what, "arm %s versions", a->name);
      list_cmd(out, what, a->versions[k]);
    }
    snprintf(what, sizeof what, "arm %s image digest", a->name);
    list_cmd(out, what, a->image.digest_cmd);
  }
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *w = &s->workloads[i];
    snprintf(what, sizeof what, "workload %s prepare", w->name);
    list_cmd(out, what, w->prepare);
    snprintf(what, sizeof what, "workload %s cmd", w->name);
    list_cmd(out, what, w->cmd);
    for (size_t k = 0; k < w->n_steps; k++) {
      snprintf(what, sizeof what, "workload %s step %zu", w->name, k + 1);
      list_cmd(out, what, w->steps[k]);
    }
    snprintf(what, sizeof what, "workload %s cleanup", w->name);
    list_cmd(out, what, w->cleanup);
  }
}

/* Refuses, before writing anything, a sheet, input or data folder that
 * exists already. */
static core_status nothing_there(const original *o, const char *sheet_path,
                                 const char *exp_dir, const char *inputs,
                                 core_err *err) {
  size_t none = 0;
  if (core_exists(sheet_path))
    return core_fail(err, CORE_EUSAGE,
                     "%s already exists; prereg replicate never overwrites "
                     "a sheet (choose another --id)",
                     sheet_path);
  if (core_exists(exp_dir))
    return core_fail(err, CORE_EUSAGE,
                     "%s already exists; a replication starts with a data "
                     "folder of its own (choose another --id or --data)",
                     exp_dir);
  return copy_listed(o, inputs, "protocols", 0644, 1, &none, err);
}

/* The inputs the bundle does not carry (locked by digest only): each
 * named with the digest a replicator must supply, and checked when a
 * file is already there. */
static void by_digest_inputs(const original *o, FILE *out) {
  const data_version *v = &o->exp->versions[o->exp->n_versions - 1];
  for (size_t i = 0; i < v->n_inputs; i++) {
    const data_input *in = &v->inputs[i];
    char *to = core_path_join("protocols", in->path);
    char hex[CORE_SHA256_HEX] = "";
    core_err e = {0};
    /* A name that could not be a copy is one a replicator never needs. */
    if (!in->by_digest || !to || !safe_rel(in->path) ||
        core_control_at(in->path, strlen(in->path)) < strlen(in->path)) {
      core_free(to);
      continue;
    }
    if (core_exists(to) && core_sha256_file(to, hex, &e) != CORE_OK)
      hex[0] = '\0';
    fprintf(out,
            "supply %s: sha256 %s, %lld bytes; locked by its digest only, "
            "not in the bundle%s\n",
            to, in->sha256, in->bytes,
            !hex[0]                        ? " (not there yet)"
            : strcmp(hex, in->sha256) == 0 ? " (there, the same digest)"
                                           : " (there, but ANOTHER digest: "
                                             "replace it)");
    core_free(to);
  }
}

/* Writes the sheet, the inputs and the original's data, in that order of
 * checks: nothing is written unless the sheet loads. */
static core_status write_replication(const original *o, const char *id,
                                     const cli_opts *opts, FILE *out,
                                     core_err *err) {
  core_buf b;
  char *sheet_path = core_asprintf("protocols/%s.lua", id);
  char *exp_dir = core_path_join(opts->data_dir, id);
  char *orig =
      core_asprintf("%s/%s/original/%s", opts->data_dir, id, o->sheet->id);
  char *inputs = core_asprintf("inputs/v%zu/", o->exp->n_versions - 1);
  proto_sheet *check = NULL;
  size_t n_in = 0, n_orig = 0;
  core_status st = CORE_OK;
  core_buf_init(&b);
  if (!sheet_path || !exp_dir || !orig || !inputs)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK)
    sheet_text(&b, o, id);
  if (st == CORE_OK && b.oom)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK &&
      !(check = proto_sheet_load_text(sheet_path, b.data, b.len, err)))
    st = err->status ? err->status : CORE_EPROTOCOL;
  if (st == CORE_OK &&
      (st = nothing_there(o, sheet_path, exp_dir, inputs, err)) == CORE_OK &&
      (st = core_mkdir_p("protocols", 0755, err)) == CORE_OK)
    st = write_new(sheet_path, b.data, b.len, 0644, err);
  if (st == CORE_OK && (st = copy_listed(o, inputs, "protocols", 0644, 0,
                                         &n_in, err)) == CORE_OK)
    st = copy_original(o, orig, &n_orig, err);
  if (st == CORE_OK) {
    fprintf(out,
            "verified %s (sha256 %s)\nwrote %s: %s v%zu with replicates "
            "and %zu published ratios\n",
            o->bundle, o->sha256, sheet_path, o->sheet->id,
            o->exp->n_versions - 1, check->n_published);
    fprintf(out, "inputs: %zu files beside it, as the original ran with\n",
            n_in);
    by_digest_inputs(o, out);
    fprintf(out,
            "original data: %s (%zu files and its MANIFEST; verify "
            "checks them)\n",
            orig, n_orig);
    list_commands(check, out);
    fprintf(out,
            "nothing was run. next: edit %s for this host, then "
            "prereg register %s --data %s\n",
            sheet_path, sheet_path, opts->data_dir);
  }
  proto_sheet_free(check);
  core_buf_free(&b);
  core_free(sheet_path);
  core_free(exp_dir);
  core_free(orig);
  core_free(inputs);
  return st;
}

core_status cli_cmd_replicate(const cli_opts *opts, FILE *out, core_err *err) {
  original o;
  char *id = NULL;
  core_status st;
  memset(&o, 0, sizeof o);
  o.bundle = opts->args[0];
  if ((st = open_original(&o, err)) == CORE_OK) {
    id = opts->id ? core_strdup(opts->id)
                  : core_asprintf("%s-replication", o.sheet->id);
    st = id ? write_replication(&o, id, opts, out, err)
            : core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_free(id);
  original_free(&o);
  return st;
}

core_status cli_verify_original(const proto_sheet *s, const char *data_dir,
                                FILE *out, core_err *err) {
  char *dir, *sheet_path;
  proto_sheet *orig = NULL;
  data_experiment *exp = NULL;
  core_buf report;
  core_status st;
  if (!s->replicates)
    return CORE_OK;
  dir = core_asprintf("%s/%s/original", data_dir, s->id);
  sheet_path =
      core_asprintf("%s/%s/versions/v%ld.lua", dir ? dir : "",
                    s->replicates->experiment, s->replicates->version);
  core_buf_init(&report);
  if (!dir || !sheet_path)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else if (!core_is_real_dir(dir))
    st = core_fail(err, CORE_EVERIFY,
                   "%s: missing: the original's data (prereg replicate "
                   "puts them there) are not in this folder",
                   dir);
  else if (!(orig = proto_sheet_load(sheet_path, err)))
    st = core_fail(err, CORE_EVERIFY, "original: %s", err->msg);
  else if ((st = data_experiment_open(dir, orig, &exp, err)) == CORE_OK)
    st = data_verify(exp, &report, err);
  for (const char *p = report.data; p && *p;) {
    size_t n = strcspn(p, "\n");
    fprintf(out, "original %s: %.*s\n", s->replicates->experiment, (int)n, p);
    p += n + (p[n] == '\n');
  }
  core_buf_free(&report);
  data_experiment_free(exp);
  proto_sheet_free(orig);
  core_free(dir);
  core_free(sheet_path);
  return st;
}
