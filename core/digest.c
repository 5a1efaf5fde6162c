/* digest.c: SHA-256 of files and directory trees, read through core's
 * file functions and hashed by hash.c.
 * SPDX-License-Identifier: MIT
 *
 * Tree digest encoding, so that anyone can recompute it: the SHA-256 of a
 * stream of entries, one per path, visited depth first with the names of
 * a folder sorted bytewise. Each entry is
 *   TYPE ' ' MODE(octal, permission bits) ' ' RELATIVE-PATH '\0' PAYLOAD '\n'
 * where TYPE is 'd' (folder, empty payload), 'f' (file, payload = the
 * hex SHA-256 of its contents), 'l' (symlink, payload = its target, never
 * followed) or 'o' (anything else, empty payload). The root's relative
 * path is ".". A single file hashed as a tree is the one entry 'f'.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

core_status core_sha256_file(const char *path, char out[CORE_SHA256_HEX],
                             core_err *err) {
  unsigned char chunk[65536];
  core_sha256_ctx *c;
  ssize_t n;
  int fd;
  core_status st = core_open_regular(path, 0, &fd, NULL, err);
  if (st != CORE_OK)
    return st;
  c = core_sha256_begin();
  if (!c) {
    close(fd);
    return core_fail(err, CORE_ENOMEM, "%s: cannot start SHA-256", path);
  }
  while ((n = read(fd, chunk, sizeof chunk)) != 0) {
    if (n < 0) {
      int e = errno;
      if (e == EINTR)
        continue;
      close(fd);
      core_sha256_end(c, out);
      return core_fail(err, CORE_EIO, "%s: cannot read: %s", path,
                       strerror(e));
    }
    core_sha256_update(c, chunk, (size_t)n);
  }
  close(fd);
  core_sha256_end(c, out);
  return CORE_OK;
}

static core_status hash_entry(core_sha256_ctx *c, const char *abs,
                              const char *rel, core_err *err);

static core_status hash_dir(core_sha256_ctx *c, const char *abs,
                            const char *rel, core_err *err) {
  char **names = NULL;
  size_t n = 0;
  core_status st = core_list_dir(abs, &names, &n, err);
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    char *a = core_path_join(abs, names[i]);
    char *r = strcmp(rel, ".") == 0 ? core_strdup(names[i])
                                    : core_path_join(rel, names[i]);
    if (!a || !r)
      st = core_fail(err, CORE_ENOMEM, "%s: out of memory", abs);
    else
      st = hash_entry(c, a, r, err);
    core_free(a);
    core_free(r);
  }
  core_names_free(names, n);
  return st;
}

static core_status hash_entry(core_sha256_ctx *c, const char *abs,
                              const char *rel, core_err *err) {
  struct stat sb;
  char head[64];
  char payload[4096];
  char type;
  size_t plen = 0;
  core_status st;
  if (lstat(abs, &sb) != 0)
    return core_fail(err, CORE_EIO, "%s: cannot stat: %s", abs,
                     strerror(errno));
  if (S_ISDIR(sb.st_mode))
    type = 'd';
  else if (S_ISREG(sb.st_mode))
    type = 'f';
  else if (S_ISLNK(sb.st_mode))
    type = 'l';
  else
    type = 'o';
  if (type == 'f') {
    char hex[CORE_SHA256_HEX];
    if ((st = core_sha256_file(abs, hex, err)) != CORE_OK)
      return st;
    memcpy(payload, hex, 64);
    plen = 64;
  } else if (type == 'l') {
    ssize_t n = readlink(abs, payload, sizeof payload);
    if (n < 0 || (size_t)n >= sizeof payload)
      return core_fail(err, CORE_EIO, "%s: cannot read link", abs);
    plen = (size_t)n;
  }
  snprintf(head, sizeof head, "%c %04o ", type,
           (unsigned)(sb.st_mode & 07777));
  core_sha256_update(c, head, strlen(head));
  core_sha256_update(c, rel, strlen(rel) + 1); /* with its NUL */
  core_sha256_update(c, payload, plen);
  core_sha256_update(c, "\n", 1);
  if (type == 'd')
    return hash_dir(c, abs, rel, err);
  return CORE_OK;
}

core_status core_sha256_tree(const char *path, char out[CORE_SHA256_HEX],
                             core_err *err) {
  core_sha256_ctx *c = core_sha256_begin();
  core_status st;
  out[0] = '\0';
  if (!c)
    return core_fail(err, CORE_ENOMEM, "%s: cannot start SHA-256", path);
  st = hash_entry(c, path, ".", err);
  core_sha256_end(c, out);
  if (st != CORE_OK)
    out[0] = '\0';
  return st;
}
