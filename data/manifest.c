/* manifest.c: DATA/ID/MANIFEST ("SHA256  PATH" lines, sha256sum -c
 * format) and small helpers shared by data/.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "data/data_internal.h"

int data_batch_name(const char *name, const char *suffix, long *num) {
  size_t i = 1;
  long v = 0;
  if (name[0] != 'b')
    return 0;
  while (name[i] >= '0' && name[i] <= '9' && i < 10)
    v = v * 10 + (name[i++] - '0');
  if (i < 5) /* at least four digits: b0001 */
    return 0;
  if (strcmp(name + i, suffix) != 0)
    return 0;
  *num = v;
  return 1;
}

int data_safe_rel(const char *rel) {
  const char *p = rel, *start = rel;
  if (!rel || !*rel || *rel == '/')
    return 0;
  for (;; p++) {
    if (*p == '/' || *p == '\0') {
      size_t n = (size_t)(p - start);
      if (n == 0 || (n == 1 && start[0] == '.') ||
          (n == 2 && start[0] == '.' && start[1] == '.'))
        return 0;
      if (*p == '\0')
        return 1;
      start = p + 1;
    } else if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\') {
      return 0;
    }
  }
}

/* Manifest */

void data_manifest_free(data_manifest *m) {
  for (size_t i = 0; i < m->n; i++)
    core_free(m->e[i].path);
  core_free(m->e);
  memset(m, 0, sizeof *m);
}

const data_manifest_line *data_manifest_find(const data_manifest *m,
                                             const char *path) {
  for (size_t i = 0; i < m->n; i++)
    if (strcmp(m->e[i].path, path) == 0)
      return &m->e[i];
  return NULL;
}

static int is_hex64(const char *s) {
  for (int i = 0; i < 64; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return 0;
  return 1;
}

core_status data_manifest_parse(const char *name, const char *text, size_t len,
                                data_manifest *m, core_buf *problems,
                                core_err *err) {
  core_status st = CORE_OK;
  long line = 0;
  memset(m, 0, sizeof *m);
  for (const char *p = text; p < text + len;) {
    const char *nl = memchr(p, '\n', (size_t)(text + len - p));
    const char *end = nl ? nl : text + len;
    size_t ll = (size_t)(end - p);
    line++;
    if (ll < 67 || !is_hex64(p) || p[64] != ' ' || p[65] != ' ' ||
        memchr(p, '\0', ll)) {
      if (problems) {
        core_buf_printf(problems,
                        "%s:%ld: malformed line (expected \"SHA256  "
                        "PATH\")\n",
                        name, line);
      } else {
        st = core_fail(err, CORE_EINPUT,
                       "%s:%ld: malformed line (expected \"SHA256  PATH\"); "
                       "run prereg verify",
                       name, line);
        goto cleanup;
      }
    } else {
      data_manifest_line *e;
      data_manifest_line *ne = core_grow(m->e, &m->cap, m->n, sizeof *ne, 32);
      if (!ne) {
        st = core_fail(err, CORE_ENOMEM, "%s: out of memory", name);
        goto cleanup;
      }
      m->e = ne;
      e = &m->e[m->n];
      memcpy(e->sha256, p, 64);
      e->sha256[64] = '\0';
      e->line = line;
      if (!(e->path = core_strndup(p + 66, ll - 66))) {
        st = core_fail(err, CORE_ENOMEM, "%s: out of memory", name);
        goto cleanup;
      }
      m->n++;
    }
    p = nl ? nl + 1 : text + len;
  }
cleanup:
  if (st != CORE_OK)
    data_manifest_free(m);
  return st;
}

core_status data_manifest_load(const char *dir, data_manifest *m,
                               core_buf *problems, core_err *err) {
  char *path = core_path_join(dir, "MANIFEST");
  char *text = NULL;
  size_t len = 0;
  core_status st = CORE_OK;
  memset(m, 0, sizeof *m);
  if (!path)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (core_exists(path) &&
      (st = core_read_file(path, &text, &len, err)) == CORE_OK)
    st = data_manifest_parse(path, text, len, m, problems, err);
  core_free(text);
  core_free(path);
  return st;
}

/* The MANIFEST is missing: fine when every file of versions/ is among
 * the paths being added (the first registration), damage otherwise. */
static core_status check_first_manifest(const char *dir, const char *path,
                                        char *const *paths, size_t n,
                                        core_err *err) {
  char *vdir = core_path_join(dir, "versions");
  char **names = NULL;
  size_t nn = 0;
  core_status st;
  if (!vdir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = core_list_dir(vdir, &names, &nn, err);
  for (size_t i = 0; i < nn && st == CORE_OK; i++) {
    int adding = 0;
    if (data_tmp_file_pid(names[i]) > 0) /* an atomic write's debris */
      continue;
    for (size_t k = 0; k < n && !adding; k++)
      adding = strncmp(paths[k], "versions/", 9) == 0 &&
               strcmp(paths[k] + 9, names[i]) == 0;
    if (!adding)
      st = core_fail(err, CORE_EVERIFY,
                     "%s is missing; the experiment folder was damaged; "
                     "run prereg verify",
                     path);
  }
  core_names_free(names, nn);
  core_free(vdir);
  return st;
}

core_status data_manifest_add(const char *dir, char *const *paths, size_t n,
                              core_err *err) {
  char *path = core_path_join(dir, "MANIFEST");
  char *old = NULL;
  size_t old_len = 0;
  core_buf b;
  core_status st = CORE_OK;
  core_buf_init(&b);
  if (!path)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (!core_exists(path)) {
    /* Only the first registration starts a MANIFEST. Appending to a
     * missing one would write a list of just the new files, which then
     * reads as if the older ones were never frozen. */
    if ((st = check_first_manifest(dir, path, paths, n, err)) != CORE_OK)
      goto cleanup;
  } else {
    if ((st = core_read_file(path, &old, &old_len, err)) != CORE_OK)
      goto cleanup;
    core_buf_append(&b, old, old_len);
    if (old_len > 0 && old[old_len - 1] != '\n')
      core_buf_puts(&b, "\n");
  }
  for (size_t i = 0; i < n; i++) {
    char hex[CORE_SHA256_HEX];
    char *full = core_path_join(dir, paths[i]);
    if (!full) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto cleanup;
    }
    st = core_sha256_file(full, hex, err);
    core_free(full);
    if (st != CORE_OK)
      goto cleanup;
    core_buf_printf(&b, "%s  %s\n", hex, paths[i]);
  }
  if (b.oom) {
    st = core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
    goto cleanup;
  }
  /* The manifest only ever grows; replacing it atomically means a crash
   * leaves either the old list or the new one, never half a line. */
  st = core_write_file_atomic(path, b.data ? b.data : "", b.len, 0444, err);
cleanup:
  core_buf_free(&b);
  core_free(old);
  core_free(path);
  return st;
}

/* Temporary files of atomic writes */

long data_tmp_file_pid(const char *name) {
  const char *t = strstr(name, ".tmp.");
  const char *d;
  long pid = 0;
  if (!t || t == name)
    return 0;
  /* The last ".tmp." counts: NAME itself may hold one. */
  for (const char *u; (u = strstr(t + 1, ".tmp.")) != NULL;)
    t = u;
  d = t + 5;
  if (*d == '\0')
    return 0;
  for (; *d; d++) {
    if (*d < '0' || *d > '9' || pid > 99999999)
      return 0;
    pid = pid * 10 + (*d - '0');
  }
  return pid;
}

int data_pid_gone(long pid) {
  return pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}
