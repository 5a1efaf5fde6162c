/* inputs.c: the files a sheet's commands use (`inputs`), hashed so that
 * the lock covers them like the sheet, and copied with each version.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/limits.h"
#include "data/data_internal.h"

typedef struct scan {
  const proto_sheet *s;
  data_inputs *out;
  size_t cap;
  long long bytes;
  core_err *err;
} scan;

void data_inputs_free(data_inputs *in) {
  for (size_t i = 0; in && i < in->n; i++)
    core_free(in->v[i].path);
  if (in) {
    core_free(in->v);
    memset(in, 0, sizeof *in);
  }
}

static core_status push(scan *sc, const char *rel, const char *hex,
                        const struct stat *sb) {
  data_input *nv = core_grow(sc->out->v, &sc->cap, sc->out->n, sizeof *nv, 8);
  if (!nv)
    return core_fail(sc->err, CORE_ENOMEM, "out of memory");
  sc->out->v = nv;
  nv = &sc->out->v[sc->out->n];
  memset(nv, 0, sizeof *nv);
  if (!(nv->path = core_strdup(rel)))
    return core_fail(sc->err, CORE_ENOMEM, "out of memory");
  snprintf(nv->sha256, sizeof nv->sha256, "%s", hex);
  if (sb) {
    nv->bytes = (long long)sb->st_size;
    nv->ino = (unsigned long long)sb->st_ino;
    nv->ctime_ns = (long long)sb->st_ctim.tv_sec * 1000000000LL +
                   (long long)sb->st_ctim.tv_nsec;
  }
  sc->out->n++;
  return CORE_OK;
}

static core_status add_file(scan *sc, const char *rel, const char *abs,
                            const struct stat *sb) {
  char hex[CORE_SHA256_HEX];
  core_status st;
  if (sc->out->n >= PREREG_INPUTS_MAX_FILES)
    return core_fail(sc->err, CORE_EPROTOCOL,
                     "%s: inputs: more than %d files (at %s); inputs are "
                     "scripts, configuration and small data: declare a "
                     "larger tree as an image",
                     sc->s->path, PREREG_INPUTS_MAX_FILES, rel);
  if ((long long)sb->st_size > PREREG_INPUTS_MAX_BYTES - sc->bytes)
    return core_fail(sc->err, CORE_EPROTOCOL,
                     "%s: inputs: more than %lld GiB together (at %s, %lld "
                     "bytes), more than is hashed at every batch's start and "
                     "end: declare a larger tree as an image",
                     sc->s->path, PREREG_INPUTS_MAX_BYTES >> 30, rel,
                     (long long)sb->st_size);
  if ((st = core_sha256_file(abs, hex, sc->err)) != CORE_OK) {
    sc->err->status = CORE_EPROTOCOL;
    return st == CORE_ENOMEM ? st : CORE_EPROTOCOL;
  }
  sc->bytes += (long long)sb->st_size;
  return push(sc, rel, hex, sb);
}

static core_status walk_path(scan *sc, const char *rel, int depth);

static core_status add_folder(scan *sc, const char *rel, const char *abs,
                              int depth) {
  char **names = NULL;
  size_t n = 0;
  core_status st;
  if (depth >= PREREG_INPUTS_MAX_DEPTH)
    return core_fail(sc->err, CORE_EPROTOCOL,
                     "%s: inputs: %s is nested more than %d folders deep",
                     sc->s->path, rel, PREREG_INPUTS_MAX_DEPTH);
  if ((st = core_list_dir(abs, &names, &n, sc->err)) != CORE_OK) {
    sc->err->status = CORE_EPROTOCOL;
    return CORE_EPROTOCOL;
  }
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    char *sub = core_path_join(rel, names[i]);
    if (!sub)
      st = core_fail(sc->err, CORE_ENOMEM, "out of memory");
    else if (names[i][0] == '.')
      st = core_fail(sc->err, CORE_EPROTOCOL,
                     "%s: inputs: %s: a name starting with '.'; inputs hold "
                     "no dot-files or dot-folders (.git, .envrc, .vscode: "
                     "tools act on them in the folder a replication copies "
                     "them to): move it out of %s",
                     sc->s->path, sub, rel);
    else
      st = walk_path(sc, sub, depth + 1);
    core_free(sub);
  }
  core_names_free(names, n);
  return st;
}

/* Fails when a folder on the way to rel (below the sheet's folder, rel's
 * last name aside: walk_path looks at it) is a symbolic link: each is
 * opened from the one before it without following a link, so that
 * "cfg/id_rsa" with cfg a link to ~/.ssh is refused. A missing one is
 * left to walk_path. */
static core_status check_way(scan *sc, const char *rel) {
  char name[PATH_MAX];
  int dfd = open(sc->s->sheet_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const char *p = rel;
  core_status st = CORE_OK;
  if (dfd < 0)
    return core_fail(sc->err, CORE_EPROTOCOL, "%s: inputs: %s: %s",
                     sc->s->path, sc->s->sheet_dir, strerror(errno));
  while (st == CORE_OK && strchr(p, '/')) {
    size_t n = strcspn(p, "/");
    struct stat sb;
    int next;
    snprintf(name, sizeof name, "%.*s", (int)n, p);
    p += n + 1;
    if (n == 0)
      continue;
    next = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(sb.st_mode))
      st = core_fail(sc->err, CORE_EPROTOCOL,
                     "%s: inputs: %s: %.*s is a symbolic link; no link may "
                     "stand on an input's path (the lock covers files in "
                     "the sheet's folder): copy what it points to into it",
                     sc->s->path, rel, (int)(p - 1 - rel), rel);
    close(dfd);
    if (next < 0)
      return st;
    dfd = next;
  }
  close(dfd);
  return st;
}

static core_status walk_path(scan *sc, const char *rel, int depth) {
  char *abs = core_path_join(sc->s->sheet_dir, rel);
  struct stat sb;
  core_status st = CORE_OK;
  if (!abs)
    return core_fail(sc->err, CORE_ENOMEM, "out of memory");
  if (depth == 0 && (st = check_way(sc, rel)) != CORE_OK) {
    core_free(abs);
    return st;
  }
  if (lstat(abs, &sb) != 0)
    st = errno == ENOENT && depth == 0
             ? push(sc, rel, "", NULL)
             : core_fail(sc->err, CORE_EPROTOCOL, "%s: inputs: %s: %s",
                         sc->s->path, abs, strerror(errno));
  else if (S_ISLNK(sb.st_mode))
    st = core_fail(sc->err, CORE_EPROTOCOL,
                   "%s: inputs: %s is a symbolic link; the lock covers the "
                   "files themselves: copy what it points to into the "
                   "sheet's folder, or declare a larger tree as an image",
                   sc->s->path, rel);
  else if (S_ISREG(sb.st_mode))
    st = add_file(sc, rel, abs, &sb);
  else if (S_ISDIR(sb.st_mode))
    st = add_folder(sc, rel, abs, depth);
  else
    st = core_fail(sc->err, CORE_EPROTOCOL,
                   "%s: inputs: %s is neither a file nor a folder",
                   sc->s->path, rel);
  core_free(abs);
  return st;
}

static int by_path(const void *a, const void *b) {
  return strcmp(((const data_input *)a)->path, ((const data_input *)b)->path);
}

core_status data_inputs_scan(const proto_sheet *s, data_inputs *out,
                             core_err *err) {
  scan sc = {s, out, 0, 0, err};
  core_status st = CORE_OK;
  memset(out, 0, sizeof *out);
  for (size_t i = 0; s->sheet_dir && i < s->n_inputs && st == CORE_OK; i++) {
    char *rel = core_strdup(s->inputs[i]);
    size_t len = rel ? strlen(rel) : 0;
    while (len > 1 && rel[len - 1] == '/')
      rel[--len] = '\0';
    st = rel ? walk_path(&sc, rel, 0)
             : core_fail(err, CORE_ENOMEM, "out of memory");
    core_free(rel);
  }
  if (st != CORE_OK) {
    data_inputs_free(out);
    return st;
  }
  if (out->n > 1)
    qsort(out->v, out->n, sizeof *out->v, by_path);
  /* A file listed and also under a listed folder is one input. */
  for (size_t i = 1; i < out->n;)
    if (strcmp(out->v[i].path, out->v[i - 1].path) == 0) {
      core_free(out->v[i].path);
      memmove(&out->v[i], &out->v[i + 1], (out->n - i - 1) * sizeof *out->v);
      out->n--;
    } else {
      i++;
    }
  return CORE_OK;
}

void data_inputs_mark_copies(data_inputs *in) {
  long long copied = 0;
  for (size_t i = 0; i < in->n; i++) {
    data_input *f = &in->v[i];
    f->by_digest =
        f->sha256[0] && f->bytes > PREREG_INPUTS_COPY_MAX_BYTES - copied;
    if (!f->by_digest)
      copied += f->bytes;
  }
}

size_t data_inputs_diff(const data_input *rec, size_t n,
                        const data_inputs *cur, core_buf *b) {
  size_t i = 0, j = 0, count = 0;
  while (i < n || j < cur->n) {
    int c = i == n        ? 1
            : j == cur->n ? -1
                          : strcmp(rec[i].path, cur->v[j].path);
    if (c == 0 && strcmp(rec[i].sha256, cur->v[j].sha256) == 0) {
      i++, j++;
      continue;
    }
    count++;
    if (c < 0 || (c == 0 && !cur->v[j].sha256[0]))
      core_buf_printf(b, "  missing %s (recorded sha256 %.12s)\n", rec[i].path,
                      rec[i].sha256);
    else if (c > 0 || !rec[i].sha256[0])
      core_buf_printf(b, "  added %s (sha256 %.12s)\n", cur->v[j].path,
                      cur->v[j].sha256);
    else
      core_buf_printf(b, "  changed %s (sha256 %.12s, recorded %.12s)\n",
                      rec[i].path, cur->v[j].sha256, rec[i].sha256);
    if (c <= 0 && rec[i].by_digest && rec[i].sha256[0])
      core_buf_printf(b,
                      "    %s is locked by its digest only (%lld bytes, "
                      "too large to copy): put the file whose sha256 is "
                      "%s there\n",
                      rec[i].path, rec[i].bytes, rec[i].sha256);
    i += c <= 0;
    j += c >= 0;
  }
  return count;
}

size_t data_inputs_recheck(const proto_sheet *s, const data_inputs *was,
                           core_buf *b) {
  data_inputs cur;
  core_err err = {0};
  size_t n;
  if (data_inputs_scan(s, &cur, &err) != CORE_OK) {
    core_buf_printf(b, "  %s\n", err.msg);
    return 1;
  }
  n = data_inputs_diff(was->v, was->n, &cur, b);
  /* Same paths, same content: what was written meanwhile and put back. */
  for (size_t i = 0, j = 0; i < was->n && j < cur.n;) {
    int c = strcmp(was->v[i].path, cur.v[j].path);
    const data_input *a = &was->v[i], *z = &cur.v[j];
    if (c == 0 && a->sha256[0] && strcmp(a->sha256, z->sha256) == 0 &&
        (a->ino != z->ino || a->ctime_ns != z->ctime_ns)) {
      core_buf_printf(b,
                      "  written %s during the batch (content as at its "
                      "start)\n",
                      a->path);
      n++;
    }
    i += c <= 0;
    j += c >= 0;
  }
  data_inputs_free(&cur);
  return n;
}
