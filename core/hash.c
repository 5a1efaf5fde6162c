/* hash.c: SHA-256 of buffers, files and directory trees (libcrypto, which
 * only core/ includes).
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
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/core.h"

struct core_sha256_ctx {
  EVP_MD_CTX *md;
};

static void to_hex(const unsigned char *d, unsigned n,
                   char out[CORE_SHA256_HEX]) {
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < n && i < 32; i++) {
    out[2 * i] = hex[d[i] >> 4];
    out[2 * i + 1] = hex[d[i] & 15];
  }
  out[64] = '\0';
}

core_sha256_ctx *core_sha256_begin(void) {
  core_sha256_ctx *c = core_malloc(sizeof *c);
  if (!c)
    return NULL;
  c->md = EVP_MD_CTX_new();
  if (!c->md || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
    EVP_MD_CTX_free(c->md);
    core_free(c);
    return NULL;
  }
  return c;
}

void core_sha256_update(core_sha256_ctx *c, const void *p, size_t n) {
  if (c && n)
    EVP_DigestUpdate(c->md, p, n);
}

void core_sha256_end(core_sha256_ctx *c, char out[CORE_SHA256_HEX]) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  out[0] = '\0';
  if (!c)
    return;
  int done = EVP_DigestFinal_ex(c->md, d, &n) == 1;
  EVP_MD_CTX_free(c->md);
  core_free(c);
  if (done)
    to_hex(d, n, out);
}

void core_sha256_hex(const void *data, size_t len, char out[CORE_SHA256_HEX]) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  out[0] = '\0';
  if (EVP_Digest(data, len, d, &n, EVP_sha256(), NULL) == 1)
    to_hex(d, n, out);
}

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
