/* data_dir.c: which data folder a command means. --data DIR, else `data`
 * in the current folder; when that does not hold the sheet's experiment
 * but the data folder of the sheet's project does, the command says so
 * and names the --data to use, rather than "not registered".
 * SPDX-License-Identifier: MIT
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_internal.h"
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
