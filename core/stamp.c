/* stamp.c: RFC 3161 time-stamp requests and replies (libcrypto's TS
 * API): what proves that a digest existed at a time a third party's
 * clock gives, checked by anyone with libcrypto or `openssl ts -verify`.
 * SPDX-License-Identifier: MIT
 *
 * A reply is checked in full, never in part: DER with nothing after it,
 * status granted, a TSTInfo of version 1 over a SHA-256 imprint that is
 * the one wanted (and the nonce sent, when one was), and a signature that
 * verifies (ESS signing-certificate binding included) with a signer
 * certificate valid at the token's own time and marked for time-stamping
 * only (extendedKeyUsage critical timeStamping). With a CA file the signer
 * must chain to it; without one, to the certificates the token carries
 * (the signature is proven, who signed it is not).
 */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pkcs7.h>
#include <openssl/rand.h>
#include <openssl/ts.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "core/core.h"

/* Text from a certificate or a TSA: control bytes never reach a
 * terminal. */
static void clean(char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      *s = '?';
}

static void to_hex(const unsigned char *d, size_t n, char *out, size_t cap) {
  static const char hex[] = "0123456789abcdef";
  size_t i = 0;
  for (; i < n && 2 * i + 2 < cap; i++) {
    out[2 * i] = hex[d[i] >> 4];
    out[2 * i + 1] = hex[d[i] & 15];
  }
  out[2 * i] = '\0';
}

static int from_hex64(const char *hex, unsigned char d[32]) {
  for (int i = 0; i < 32; i++) {
    unsigned v = 0;
    for (int k = 0; k < 2; k++) {
      char c = hex[2 * i + k];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= (unsigned)(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= (unsigned)(c - 'a' + 10);
      else
        return 0;
    }
    d[i] = (unsigned char)v;
  }
  return hex[64] == '\0';
}

/* A nonce as lower-case hex ("" when it does not fit). */
static void nonce_hex(const ASN1_INTEGER *n, char out[CORE_NONCE_HEX]) {
  BIGNUM *bn = n ? ASN1_INTEGER_to_BN(n, NULL) : NULL;
  char *h = bn && BN_num_bytes(bn) <= 16 ? BN_bn2hex(bn) : NULL;
  out[0] = '\0';
  if (h) {
    snprintf(out, CORE_NONCE_HEX, "%s", h);
    for (char *p = out; *p; p++)
      if (*p >= 'A' && *p <= 'F')
        *p = (char)(*p - 'A' + 'a');
  }
  OPENSSL_free(h);
  BN_free(bn);
}

/* The imprint of a request or token: SHA-256 only. 0 when it is not. */
static int imprint_hex(TS_MSG_IMPRINT *mi, char out[CORE_SHA256_HEX]) {
  const ASN1_OBJECT *obj = NULL;
  ASN1_OCTET_STRING *d = mi ? TS_MSG_IMPRINT_get_msg(mi) : NULL;
  X509_ALGOR *alg = mi ? TS_MSG_IMPRINT_get_algo(mi) : NULL;
  out[0] = '\0';
  if (!alg || !d)
    return 0;
  X509_ALGOR_get0(&obj, NULL, NULL, alg);
  if (OBJ_obj2nid(obj) != NID_sha256 || ASN1_STRING_length(d) != 32)
    return 0;
  to_hex(ASN1_STRING_get0_data(d), 32, out, CORE_SHA256_HEX);
  return 1;
}

/* Requests */

static TS_MSG_IMPRINT *make_imprint(const unsigned char d[32]) {
  TS_MSG_IMPRINT *mi = TS_MSG_IMPRINT_new();
  X509_ALGOR *alg = X509_ALGOR_new();
  int ok = mi && alg &&
           X509_ALGOR_set0(alg, OBJ_nid2obj(NID_sha256), V_ASN1_NULL, NULL) &&
           TS_MSG_IMPRINT_set_algo(mi, alg) &&
           TS_MSG_IMPRINT_set_msg(mi, (unsigned char *)d, 32);
  X509_ALGOR_free(alg);
  if (!ok) {
    TS_MSG_IMPRINT_free(mi);
    return NULL;
  }
  return mi;
}

/* A fresh positive 64-bit nonce. */
static ASN1_INTEGER *make_nonce(void) {
  unsigned char r[8];
  BIGNUM *bn;
  ASN1_INTEGER *n = NULL;
  if (RAND_bytes(r, sizeof r) != 1)
    return NULL;
  r[0] |= 0x40; /* never zero, always eight bytes */
  r[0] &= 0x7f;
  if ((bn = BN_bin2bn(r, sizeof r, NULL)) != NULL)
    n = BN_to_ASN1_INTEGER(bn, NULL);
  BN_free(bn);
  return n;
}

core_status core_stamp_request(const char *hex, char **der, size_t *len,
                               char nonce[CORE_NONCE_HEX], core_err *err) {
  unsigned char d[32], *out = NULL;
  TS_REQ *req = TS_REQ_new();
  TS_MSG_IMPRINT *mi = NULL;
  ASN1_INTEGER *n = make_nonce();
  int dl = -1;
  *der = NULL;
  *len = 0;
  nonce[0] = '\0';
  if (!from_hex64(hex, d)) {
    TS_REQ_free(req);
    ASN1_INTEGER_free(n);
    return core_fail(err, CORE_EINPUT, "not a SHA-256: '%.70s'", hex);
  }
  if (req && n && (mi = make_imprint(d)) && TS_REQ_set_version(req, 1) &&
      TS_REQ_set_msg_imprint(req, mi) && TS_REQ_set_nonce(req, n) &&
      TS_REQ_set_cert_req(req, 1))
    dl = i2d_TS_REQ(req, &out);
  if (dl > 0 && (*der = core_malloc((size_t)dl)) != NULL) {
    memcpy(*der, out, (size_t)dl);
    *len = (size_t)dl;
    nonce_hex(n, nonce);
  }
  OPENSSL_free(out);
  TS_MSG_IMPRINT_free(mi);
  ASN1_INTEGER_free(n);
  TS_REQ_free(req);
  if (!*der)
    return core_fail(err, CORE_ENOMEM, "cannot build a time-stamp request");
  return CORE_OK;
}

core_status core_stamp_request_read(const char *name, const void *der,
                                    size_t len, char hex[CORE_SHA256_HEX],
                                    char nonce[CORE_NONCE_HEX],
                                    core_err *err) {
  const unsigned char *p = der;
  TS_REQ *req = len < STAMP_REPLY_MAX ? d2i_TS_REQ(NULL, &p, (long)len) : NULL;
  int ok = req && p == (const unsigned char *)der + len &&
           imprint_hex(TS_REQ_get_msg_imprint(req), hex);
  if (ok)
    nonce_hex(TS_REQ_get_nonce(req), nonce);
  TS_REQ_free(req);
  ERR_clear_error();
  if (!ok)
    return core_fail(err, CORE_EINPUT,
                     "%s: not a time-stamp request over a SHA-256 (RFC "
                     "3161 TimeStampReq, DER)",
                     name);
  return CORE_OK;
}

/* Replies */

/* The last libcrypto error in words, cleaned, or what. */
static void crypto_reason(char *out, size_t cap, const char *what) {
  unsigned long e = ERR_peek_last_error();
  const char *r = e ? ERR_reason_error_string(e) : NULL;
  snprintf(out, cap, "%s", r ? r : what);
  clean(out);
  ERR_clear_error();
}

/* The status of a reply: CORE_OK when granted. */
static core_status check_status(const char *name, TS_RESP *resp,
                                core_err *err) {
  TS_STATUS_INFO *si = TS_RESP_get_status_info(resp);
  const ASN1_INTEGER *s = si ? TS_STATUS_INFO_get0_status(si) : NULL;
  const STACK_OF(ASN1_UTF8STRING) *t =
      si ? TS_STATUS_INFO_get0_text(si) : NULL;
  long v = s ? ASN1_INTEGER_get(s) : -1;
  char text[200] = "";
  if (v == 0 || v == 1) /* granted, granted with modifications */
    return CORE_OK;
  if (t && sk_ASN1_UTF8STRING_num(t) > 0) {
    const ASN1_UTF8STRING *u = sk_ASN1_UTF8STRING_value(t, 0);
    snprintf(text, sizeof text, ": %.*s",
             ASN1_STRING_length(u) < 150 ? ASN1_STRING_length(u) : 150,
             (const char *)ASN1_STRING_get0_data(u));
    clean(text);
  }
  return core_fail(err, CORE_EVERIFY,
                   "%s: the TSA refused the request (status %ld%s)", name, v,
                   text);
}

/* The token's time, into out. */
static core_status token_time(const char *name, TS_TST_INFO *tst,
                              core_stamp *out, core_err *err) {
  const ASN1_GENERALIZEDTIME *gt = TS_TST_INFO_get_time(tst);
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  if (!gt || ASN1_TIME_to_tm(gt, &tm) != 1 ||
      strftime(out->time, sizeof out->time, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 ||
      core_parse_utc(out->time, &out->secs, NULL) != CORE_OK)
    return core_fail(err, CORE_EVERIFY, "%s: the token has no valid time",
                     name);
  return CORE_OK;
}

/* The store the signer must chain to: the CA file, or (no CA) the
 * certificates the token carries, each taken as trusted. */
static X509_STORE *make_store(const char *name, PKCS7 *token, const char *ca,
                              long long at, core_err *err) {
  X509_STORE *store = X509_STORE_new();
  if (!store) {
    core_fail(err, CORE_ENOMEM, "out of memory");
    return NULL;
  }
  if (ca) {
    if (X509_STORE_load_file(store, ca) != 1) {
      X509_STORE_free(store);
      ERR_clear_error();
      core_fail(err, CORE_EINPUT,
                "%s: cannot read certificates (PEM) from it; --tsa-ca takes "
                "the TSA's CA certificate",
                ca);
      return NULL;
    }
  } else {
    STACK_OF(X509) *certs = PKCS7_type_is_signed(token) && token->d.sign
                                ? token->d.sign->cert
                                : NULL;
    if (!certs || sk_X509_num(certs) == 0) {
      X509_STORE_free(store);
      core_fail(err, CORE_EVERIFY,
                "%s: the token carries no certificate to check its "
                "signature against (request one: certReq); give --tsa-ca",
                name);
      return NULL;
    }
    for (int i = 0; i < sk_X509_num(certs); i++)
      X509_STORE_add_cert(store, sk_X509_value(certs, i));
    X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN);
  }
  /* A certificate valid when the token was made: a TSA's certificate
   * expires long before the proof stops mattering. */
  X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(store), (time_t)at);
  return store;
}

static core_status check_signature(const char *name, PKCS7 *token,
                                   const char *ca, core_stamp *out,
                                   core_err *err) {
  X509 *signer = NULL;
  X509_STORE *store = make_store(name, token, ca, out->secs, err);
  char why[200];
  BIO *b;
  if (!store)
    return err->status;
  ERR_clear_error();
  if (TS_RESP_verify_signature(token, NULL, store, &signer) != 1) {
    X509_STORE_free(store);
    crypto_reason(why, sizeof why, "signature check failed");
    return core_fail(err, CORE_EVERIFY,
                     "%s: the signature does not verify%s (%s)", name,
                     ca ? " against --tsa-ca" : "", why);
  }
  X509_STORE_free(store);
  out->tsa[0] = '\0';
  if ((b = BIO_new(BIO_s_mem())) != NULL) {
    int n;
    X509_NAME_print_ex(b, X509_get_subject_name(signer), 0, XN_FLAG_RFC2253);
    n = BIO_read(b, out->tsa, (int)sizeof out->tsa - 1);
    out->tsa[n > 0 ? n : 0] = '\0';
    BIO_free(b);
  }
  clean(out->tsa);
  X509_free(signer);
  out->chain_checked = ca != NULL;
  return CORE_OK;
}

/* The TSTInfo against what was asked. */
static core_status check_tst(const char *name, TS_TST_INFO *tst,
                             const char *want, const char *nonce,
                             core_stamp *out, core_err *err) {
  char got[CORE_NONCE_HEX];
  if (TS_TST_INFO_get_version(tst) != 1)
    return core_fail(err, CORE_EVERIFY, "%s: TSTInfo version %ld, not 1", name,
                     TS_TST_INFO_get_version(tst));
  if (!imprint_hex(TS_TST_INFO_get_msg_imprint(tst), out->imprint))
    return core_fail(err, CORE_EVERIFY,
                     "%s: the token covers no SHA-256 (another hash)", name);
  if (want && strcmp(out->imprint, want) != 0)
    return core_fail(err, CORE_EVERIFY,
                     "%s: the token covers sha256 %.12s..., not %.12s...: it "
                     "is another file's",
                     name, out->imprint, want);
  nonce_hex(TS_TST_INFO_get_nonce(tst), got);
  if (nonce && nonce[0] && strcmp(got, nonce) != 0)
    return core_fail(err, CORE_EVERIFY,
                     "%s: the reply's nonce is %s, not the request's (%s): "
                     "a reply to another request",
                     name, got[0] ? got : "missing", nonce);
  return token_time(name, tst, out, err);
}

core_status core_stamp_check(const char *name, const void *der, size_t len,
                             const char *want, const char *nonce,
                             const char *ca, core_stamp *out, core_err *err) {
  const unsigned char *p = der;
  TS_RESP *resp;
  core_status st;
  memset(out, 0, sizeof *out);
  ERR_clear_error();
  if (len == 0 || len > STAMP_REPLY_MAX)
    return core_fail(err, CORE_EVERIFY,
                     "%s: %zu bytes: not a time-stamp reply (RFC 3161 "
                     "TimeStampResp, DER, at most %zu bytes)",
                     name, len, (size_t)STAMP_REPLY_MAX);
  resp = d2i_TS_RESP(NULL, &p, (long)len);
  if (!resp || p != (const unsigned char *)der + len) {
    TS_RESP_free(resp);
    ERR_clear_error();
    return core_fail(err, CORE_EVERIFY,
                     "%s: not a time-stamp reply (RFC 3161 TimeStampResp, "
                     "DER)%s",
                     name, resp ? ", or bytes after it" : "");
  }
  if ((st = check_status(name, resp, err)) == CORE_OK) {
    PKCS7 *token = TS_RESP_get_token(resp);
    TS_TST_INFO *tst = TS_RESP_get_tst_info(resp);
    if (!token || !tst)
      st = core_fail(err, CORE_EVERIFY, "%s: granted, but holds no token",
                     name);
    else if ((st = check_tst(name, tst, want, nonce, out, err)) == CORE_OK)
      st = check_signature(name, token, ca, out, err);
  }
  TS_RESP_free(resp);
  ERR_clear_error();
  return st;
}
