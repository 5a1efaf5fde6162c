/* data_dir.c: which data folder a command means. --data DIR, else `data`
 * in the current folder; when that does not hold the sheet's experiment
 * but the data folder of the sheet's project does, the command says so
 * and names the --data to use, rather than "not registered"; and the
 * sheet and experiment folder that the commands taking SHEET open.
 * SPDX-License-Identifier: MIT
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"

/* A data folder holds the experiment once it is registered. */
static int holds(const char *data_dir, const char *id) {
  char *p = core_asprintf("%s/%s/versions/v0.json", data_dir, id);
  int yes = p && core_exists(p);
  core_free(p);
  return yes;
}

static int same_dir(const char *a, const char *b) {
  char ra[PATH_MAX], rb[PATH_MAX];
  return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

/* The folder holding path ("." for a bare name), newly allocated. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return core_strdup(".");
  if (slash == path)
    return core_strdup("/");
  return core_strndup(path, (size_t)(slash - path));
}

/* The folder above dir, newly allocated: its path shortened by one name
 * where that is plain, else dir/.. */
static char *parent_of(const char *dir) {
  const char *slash = strrchr(dir, '/');
  const char *last = slash ? slash + 1 : dir;
  if (!strcmp(dir, "."))
    return core_strdup("..");
  if (!strcmp(last, ".") || !strcmp(last, "..") || !strcmp(dir, "/"))
    return core_path_join(dir, "..");
  if (!slash)
    return core_strdup(".");
  return slash == dir ? core_strdup("/")
                      : core_strndup(dir, (size_t)(slash - dir));
}

/* The data folder of the sheet's project, newly allocated: the project
 * is the folder holding the sheet or, when that folder is `protocols/`
 * (the layout of prereg new), the one above it: exp/data for
 * exp/protocols/x.lua, side/data for side/x.lua. */
static char *project_data(const char *sheet_path) {
  char real[PATH_MAX], *dir = dir_of(sheet_path), *home = NULL, *r = NULL;
  if (!dir)
    return NULL;
  const char *base = realpath(dir, real) ? strrchr(real, '/') : NULL;
  if (base && !strcmp(base + 1, "protocols"))
    home = parent_of(dir);
  r = core_path_join(home ? home : dir, "data");
  core_free(home);
  core_free(dir);
  return r;
}

/* The command's arguments, each after a space, for the command to give. */
static const char *args_text(const cli_opts *opts, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (int i = 0; i < opts->n_args && used < cap; i++) {
    int k = snprintf(out + used, cap - used, " %s", opts->args[i]);
    used += k > 0 ? (size_t)k : 0;
  }
  return out;
}

core_status cli_check_data_dir(const cli_opts *opts, const proto_sheet *s,
                               core_err *err) {
  const char *data_dir = opts->data_dir ? opts->data_dir : "data";
  char words[1024];
  core_status st = CORE_OK;
  if (opts->data_given || holds(data_dir, s->id))
    return CORE_OK;
  char *cand = project_data(s->path);
  if (!cand || same_dir(cand, data_dir) || !holds(cand, s->id)) {
    core_free(cand);
    return CORE_OK;
  }
  if (opts->command && !strcmp(opts->command, "register"))
    st = core_fail(err, CORE_EUSAGE,
                   "%s: %s is already registered in %s/%s, the data folder "
                   "of the sheet's project; use it with --data %s (prereg "
                   "status %s --data %s), or give --data %s explicitly to "
                   "register a second, separate copy in %s",
                   s->path, s->id, cand, s->id, cand, s->path, cand, data_dir,
                   data_dir);
  else
    st = core_fail(err, CORE_EUSAGE,
                   "%s: %s is not registered in %s (the default, in the "
                   "current folder), but %s/%s holds it, the data folder of "
                   "the sheet's project: add --data %s (prereg %s%s --data "
                   "%s)",
                   s->path, s->id, data_dir, cand, s->id, cand,
                   opts->command ? opts->command : "COMMAND",
                   args_text(opts, words, sizeof words), cand);
  core_free(cand);
  return st;
}

/* A folder given for SHEET */

/* The newest frozen version in an experiment folder: its number, or -1. */
static int newest_version(const char *exp_dir) {
  int n = -1;
  for (int k = 0; k < 100000; k++) {
    char *p = core_asprintf("%s/versions/v%d.lua", exp_dir, k);
    int there = p && core_exists(p);
    core_free(p);
    if (!there)
      break;
    n = k;
  }
  return n;
}

/* The one child of dir that holds name (a bundle's or an experiment's
 * mark), newly allocated, or NULL when none or several do. */
static char *only_child_with(const char *dir, const char *name) {
  char **names = NULL, *found = NULL;
  size_t n = 0, hits = 0;
  core_err e = {0};
  if (core_list_dir(dir, &names, &n, &e) != CORE_OK)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    char *p = core_asprintf("%s/%s/%s", dir, names[i], name);
    if (p && core_exists(p) && hits++ == 0)
      found = core_path_join(dir, names[i]);
    core_free(p);
  }
  core_names_free(names, n);
  if (hits != 1) {
    core_free(found);
    return NULL;
  }
  return found;
}

/* What to say of exp, a folder that is an unpacked bundle (bundle = 1) or
 * an experiment's data folder, given as arg. */
static core_status explain(const char *arg, const char *command,
                           const char *exp, int bundle, core_err *err) {
  char *trimmed = core_strdup(exp), *parent = NULL;
  const char *id, *out = strcmp(command, "report") ? "" : " --out DIR";
  core_status st;
  if (!trimmed)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t n = strlen(trimmed); n > 1 && trimmed[n - 1] == '/'; n--)
    trimmed[n - 1] = '\0';
  id = strrchr(trimmed, '/') ? strrchr(trimmed, '/') + 1 : trimmed;
  parent = dir_of(trimmed);
  int v = newest_version(trimmed);
  if (bundle)
    st = core_fail(err, CORE_EUSAGE,
                   "%s: a folder, not a sheet or a bundle: %s is an unpacked "
                   "prereg bundle of the experiment %s (it holds "
                   "BUNDLE-MANIFEST). %s the .tar.gz it came from (prereg "
                   "%s %s.tar.gz%s), or this copy through its newest frozen "
                   "sheet: prereg %s %s/versions/v%d.lua --data %s%s",
                   arg, trimmed, id,
                   strcmp(command, "verify") ? "Use" : "Verify", command, id,
                   out, command, trimmed, v, parent ? parent : ".", out);
  else
    st = core_fail(err, CORE_EUSAGE,
                   "%s: a folder, not a sheet or a bundle: %s is the data "
                   "folder of the experiment %s. Give its sheet with --data "
                   "%s (prereg %s SHEET --data %s), or its newest frozen "
                   "version: prereg %s %s/versions/v%d.lua --data %s",
                   arg, trimmed, id, parent ? parent : ".", command,
                   parent ? parent : ".", command, trimmed, v,
                   parent ? parent : ".");
  core_free(parent);
  core_free(trimmed);
  return st;
}

core_status cli_refuse_folder(const cli_opts *opts, core_err *err) {
  const char *arg = opts->args[0], *cmd = opts->command;
  char *p, *child;
  core_status st;
  if (!arg || !core_is_dir(arg))
    return CORE_OK;
  cmd = cmd ? cmd : "verify";
  for (int bundle = 1; bundle >= 0; bundle--) {
    const char *mark = bundle ? "BUNDLE-MANIFEST" : "versions/v0.json";
    p = core_path_join(arg, mark);
    int here = p && core_exists(p);
    core_free(p);
    if (here)
      return explain(arg, cmd, arg, bundle, err);
    if ((child = only_child_with(arg, mark)) != NULL) {
      st = explain(arg, cmd, child, bundle, err);
      core_free(child);
      return st;
    }
  }
  return core_fail(err, CORE_EUSAGE,
                   "%s: a folder; %s takes a sheet (a .lua file) or a "
                   "published bundle (a .tar.gz)",
                   arg, cmd);
}

int cli_unverified(const data_experiment *exp, char *why, size_t size,
                   core_err *err) {
  core_buf report;
  core_err ve = {0};
  core_status st;
  const char *p;
  core_buf_init(&report);
  st = data_verify(exp, &report, &ve);
  if (st == CORE_ENOMEM || report.oom) {
    core_buf_free(&report);
    core_fail(err, CORE_ENOMEM, "out of memory verifying %s", exp->dir);
    return -1;
  }
  /* The first line that is a problem: not a note, not the status. */
  snprintf(why, size, "%s", st != CORE_OK ? ve.msg : "");
  for (p = report.data; st != CORE_OK && p && *p;) {
    const char *nl = strchr(p, '\n');
    int len = (int)(nl ? nl - p : (long)strlen(p));
    if (strncmp(p, "note: ", 6) != 0 && strncmp(p, "status: ", 8) != 0 &&
        strncmp(p, "ok: ", 4) != 0) {
      snprintf(why, size, "%.*s", len, p);
      break;
    }
    p = nl ? nl + 1 : p + len;
  }
  core_buf_free(&report);
  return st != CORE_OK;
}

core_status cli_open_both(const cli_opts *opts, proto_sheet **sheet,
                          data_experiment **exp, core_err *err) {
  core_status st;
  *exp = NULL;
  if (!(*sheet = proto_sheet_load(opts->args[0], err)))
    return err->status ? err->status : CORE_EPROTOCOL;
  st = cli_check_data_dir(opts, *sheet, err);
  if (st == CORE_OK)
    st = data_experiment_open(opts->data_dir, *sheet, exp, err);
  if (st != CORE_OK) {
    proto_sheet_free(*sheet);
    *sheet = NULL;
  }
  return st;
}
