/* sshsig.c: reading an SSH signature (the armoured SSHSIG format of
 * ssh-keygen -Y sign, PROTOCOL.sshsig) far enough to know it is one, of
 * the namespace prereg signs in, before ssh-keygen is asked to check it:
 * a file that is not one is named as such rather than passed on.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

#define BEGIN "-----BEGIN SSH SIGNATURE-----"
#define END "-----END SSH SIGNATURE-----"

static int b64(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

/* Decodes the base64 of text[0..len) (line breaks skipped, '=' padding
 * at the end) into out (cap bytes). Returns the bytes, or -1. */
static long decode(const char *text, size_t len, unsigned char *out,
                   size_t cap) {
  unsigned long acc = 0;
  int bits = 0, pad = 0;
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    int v;
    if (c == '\n' || c == '\r')
      continue;
    if (c == '=') {
      pad++;
      continue;
    }
    if (pad || (v = b64(c)) < 0)
      return -1;
    acc = (acc << 6) | (unsigned long)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n == cap)
        return -1;
      out[n++] = (unsigned char)(acc >> bits);
    }
  }
  return pad > 2 ? -1 : (long)n;
}

/* An SSH string (a 32-bit big-endian length, then the bytes) at *p of
 * blob[0..n). OUT: *s, *slen. 0 when it runs past the end. */
static int ssh_string(const unsigned char *blob, size_t n, size_t *p,
                      const unsigned char **s, size_t *slen) {
  size_t l;
  if (n - *p < 4)
    return 0;
  l = (size_t)blob[*p] << 24 | (size_t)blob[*p + 1] << 16 |
      (size_t)blob[*p + 2] << 8 | blob[*p + 3];
  *p += 4;
  if (l > n - *p)
    return 0;
  *s = blob + *p;
  *slen = l;
  *p += l;
  return 1;
}

/* "SHA256:" and the unpadded base64 of the SHA-256 of the public key
 * blob key[0..len), as ssh-keygen -l shows a key. */
static void key_fingerprint(const unsigned char *key, size_t len,
                            char fp[CORE_SSH_FP]) {
  static const char b64c[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char hex[CORE_SHA256_HEX];
  unsigned char d[32];
  size_t o = (size_t)snprintf(fp, CORE_SSH_FP, "SHA256:");
  unsigned long acc = 0;
  int bits = 0;
  core_sha256_hex(key, len, hex);
  for (int i = 0; i < 32; i++) {
    unsigned v = 0;
    sscanf(hex + 2 * i, "%2x", &v);
    d[i] = (unsigned char)v;
  }
  for (int i = 0; i < 32; i++) {
    acc = (acc << 8) | d[i];
    bits += 8;
    while (bits >= 6 && o + 1 < CORE_SSH_FP) {
      bits -= 6;
      fp[o++] = b64c[(acc >> bits) & 63];
    }
  }
  if (bits > 0 && o + 1 < CORE_SSH_FP)
    fp[o++] = b64c[(acc << (6 - bits)) & 63];
  fp[o] = '\0';
}

/* The namespace of the decoded blob[0..n) into ns, the key's fingerprint
 * into fp. */
static core_status blob_namespace(const char *name, const unsigned char *blob,
                                  size_t n, char ns[64], char fp[CORE_SSH_FP],
                                  core_err *err) {
  const unsigned char *s;
  size_t slen, p = 10;
  if (n < 10 || memcmp(blob, "SSHSIG", 6) != 0 || blob[6] || blob[7] ||
      blob[8] || blob[9] != 1)
    return core_fail(err, CORE_EVERIFY,
                     "%s: not an SSH signature of version 1 (SSHSIG)", name);
  if (!ssh_string(blob, n, &p, &s, &slen)) /* the public key */
    return core_fail(err, CORE_EVERIFY, "%s: an SSH signature cut short",
                     name);
  key_fingerprint(s, slen, fp);
  if (!ssh_string(blob, n, &p, &s, &slen)) /* the namespace */
    return core_fail(err, CORE_EVERIFY, "%s: an SSH signature cut short",
                     name);
  if (slen >= 64 || memchr(s, '\0', slen))
    return core_fail(err, CORE_EVERIFY,
                     "%s: an SSH signature with a namespace that is no name",
                     name);
  memcpy(ns, s, slen);
  ns[slen] = '\0';
  for (char *c = ns; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      *c = '?';
  return CORE_OK;
}

core_status core_sshsig_read(const char *name, const char *text, size_t len,
                             char ns[64], char fp[CORE_SSH_FP],
                             core_err *err) {
  unsigned char *blob;
  const char *body, *end;
  core_status st;
  long n;
  ns[0] = '\0';
  fp[0] = '\0';
  if (len > SIGNATURE_MAX || len < strlen(BEGIN) ||
      memcmp(text, BEGIN, strlen(BEGIN)) != 0)
    return core_fail(err, CORE_EVERIFY,
                     "%s: not an SSH signature (" BEGIN " ...)", name);
  body = text + strlen(BEGIN);
  end = NULL;
  for (const char *q = body; q + strlen(END) <= text + len; q++)
    if (memcmp(q, END, strlen(END)) == 0) {
      end = q;
      break;
    }
  if (!end)
    return core_fail(err, CORE_EVERIFY,
                     "%s: not an SSH signature (no " END ")", name);
  if (!(blob = core_malloc(len)))
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", name);
  if ((n = decode(body, (size_t)(end - body), blob, len)) < 0)
    st = core_fail(err, CORE_EVERIFY,
                   "%s: not an SSH signature (its base64 is broken)", name);
  else
    st = blob_namespace(name, blob, (size_t)n, ns, fp, err);
  core_free(blob);
  return st;
}
