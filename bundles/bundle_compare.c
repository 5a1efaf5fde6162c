/* bundle_compare.c: the files of a verified bundle's folder (its report)
 * against a folder rendered afresh, by the digests its BUNDLE-MANIFEST
 * records (each checked against its member when the bundle was read), so
 * that no member is extracted, whatever its size, to be compared.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "bundles/bundles_internal.h"
#include "core/limits.h"

static int cmp_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One listed member under prefix: its fresh counterpart's digest. */
static core_status one_listed(const char *line, size_t len, data_compare *c,
                              char **names, size_t n_names, char *seen,
                              core_err *err) {
  const char *rel = memchr(line + 65, ' ', len - 65);
  const char *name, *key;
  char **hit, *path, got[CORE_SHA256_HEX];
  core_status st;
  if (!rel || (size_t)(line + len - rel - 1) <= strlen(c->prefix) ||
      strncmp(rel + 1, c->prefix, strlen(c->prefix)) != 0)
    return CORE_OK;
  name = rel + 1 + strlen(c->prefix);
  if ((*c->listed)++, !c->fresh)
    return CORE_OK;
  if (!(path = core_strndup(name, (size_t)(line + len - name))))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  key = path;
  hit =
      n_names ? bsearch(&key, names, n_names, sizeof *names, cmp_name) : NULL;
  if (!hit) {
    core_buf_printf(c->out,
                    "%s: %s/%s%s: not part of what its data give (a file "
                    "added to the report)\n",
                    c->who, c->id, c->prefix, path);
    (*c->problems)++;
    c->added++;
    core_free(path);
    return CORE_OK;
  }
  seen[hit - names] = 1;
  core_free(path);
  if (!(path = core_path_join(c->fresh, *hit)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = core_sha256_file(path, got, err);
  core_free(path);
  if (st == CORE_OK && memcmp(got, line, 64) != 0) {
    core_buf_printf(c->out,
                    "%s: %s/%s%s: differs from what its data give "
                    "(sha256 %.12s..., rendered afresh %.12s...)\n",
                    c->who, c->id, c->prefix, *hit, line, got);
    (*c->problems)++;
  }
  return st;
}

core_status data_bundle_compare(data_compare *c, core_err *err) {
  char *mpath =
      core_asprintf("%s/%s/" DATA_BUNDLE_MANIFEST, c->data_dir, c->id);
  char *text = NULL, **names = NULL, *seen = NULL;
  size_t len = 0, n_names = 0;
  core_status st;
  *c->listed = 0;
  if (!mpath)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = core_read_file_max(mpath, BUNDLE_MANIFEST_MAX, 0, &text, &len, err);
  core_free(mpath);
  if (st == CORE_OK && c->fresh)
    st = core_list_dir(c->fresh, &names, &n_names, err);
  if (st == CORE_OK && !(seen = core_calloc(n_names + 1, 1)))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  for (const char *p = text; st == CORE_OK && p && p < text + len;) {
    const char *nl = memchr(p, '\n', (size_t)(text + len - p));
    size_t l = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
    if (l > 66 && p[64] == ' ') /* the header line is not one */
      st = one_listed(p, l, c, names, n_names, seen, err);
    p += l + 1;
  }
  for (size_t i = 0; st == CORE_OK && *c->listed && i < n_names; i++)
    if (!seen[i]) {
      core_buf_printf(c->out,
                      "%s: %s/%s%s: missing, though its data give it\n",
                      c->who, c->id, c->prefix, names[i]);
      (*c->problems)++;
    }
  core_free(seen);
  core_names_free(names, n_names);
  core_free(text);
  return st;
}
