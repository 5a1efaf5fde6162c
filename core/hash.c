/* hash.c: SHA-256 of buffers (libcrypto, which only core/ includes).
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

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
