/* stamps.h: proofs of precedence over an experiment's data folder: the
 * time-stamps (RFC 3161) of each version's record and of the MANIFEST
 * after a batch, frozen under stamps/; the round orders drawn from a
 * version's token; and what a reader is told of each version's stamp and
 * signature. libcrypto stays in core/ (core_stamp_check, core_sshsig_read):
 * this folder says what is stamped, where it is kept and what it proves.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_STAMPS_H
#define PREREG_STAMPS_H

#include <stddef.h>

#include "core/core.h"
#include "data/data.h"

/* Time-stamps of a version (stamps/stamp.c)
 *
 * A version is stamped by a time-stamping authority (RFC 3161) over the
 * SHA-256 of its record, versions/vN.json (which holds the sheet's
 * SHA-256 and the filing time): the token is frozen as stamps/vN.tsr and
 * listed in the MANIFEST, so publish carries it. A request waiting to be
 * sent by other means is stamps/vN.tsq, never frozen. */

/** The SHA-256 a stamp of version k covers: of versions/vK.json. */
core_status data_stamp_digest(const data_experiment *exp, int k,
                              char hex[CORE_SHA256_HEX], core_err *err);
/** 1 when version k has a frozen stamp. */
int data_stamp_has(const data_experiment *exp, int k);
/** Freezes tsr (a reply the caller checked) as version k's stamp and
 * lists it in the MANIFEST, under the lock; a pending request of k is
 * removed. CORE_EINPUT when k is no version or is stamped already. */
core_status data_stamp_freeze(data_experiment *exp, int k, const void *tsr,
                              size_t len, core_err *err);
/** Writes the request tsq of version k as stamps/vK.tsq (mode 0644; not
 * frozen). OUT: *path newly allocated (core_free). */
core_status data_stamp_request_write(const data_experiment *exp, int k,
                                     const void *tsq, size_t len, char **path,
                                     core_err *err);
/** The pending request of version k. OUT: *tsq newly allocated
 * (core_free), NULL when there is none; *len. */
core_status data_stamp_request_read(const data_experiment *exp, int k,
                                    char **tsq, size_t *len, core_err *err);
/** verify's check of every version's stamp: a line per version ("v0:
 * stamped TIME by TSA", with "(chain not checked: no --tsa-ca)" when ca
 * is NULL, or "v0: not stamped"), and for a token that does not verify,
 * covers another digest or (ca) does not chain to ca, a line naming the
 * file, counted in *problems; a file of stamps/ that is no version's
 * stamp too. Then every data stamp (below): its token, and each file its
 * text names against the MANIFEST; *before_plan 1 when one is earlier
 * than the stamp of the version its newest batch ran under ("DATA
 * STAMPED BEFORE PLAN", not a problem: the status line says it).
 * CORE_EINPUT when ca cannot be read, CORE_ENOMEM. */
core_status data_stamps_verify(const data_experiment *exp, const char *ca,
                               core_buf *report, long *problems,
                               int *before_plan, core_err *err);
/** The status line of a verify report, DATA STAMPED BEFORE PLAN added
 * among its flags (it replaces COMPLETE). Newly allocated (core_free);
 * NULL when out of memory. */
char *data_status_mark_before_plan(const char *report);

/* Data stamps (stamps/stamp_data.c)
 *
 * The MANIFEST as it stands after a batch, stamped over the SHA-256 of
 * its text. The text is frozen as stamps/manifest-BATCH.txt beside its
 * token stamps/manifest-BATCH.tsr (BATCH: the newest frozen batch), both
 * listed in the MANIFEST; verify checks that every file the text names
 * still has the digest it had (data_stamps_verify). */

/** The MANIFEST's text as it stands and the newest frozen batch. OUT:
 * batch ("" when no batch is frozen yet), *text (core_free), *len, hex
 * (the text's SHA-256), *stamped (1: that batch's snapshot is frozen
 * already). */
core_status data_manifest_snapshot(const data_experiment *exp, char batch[16],
                                   char **text, size_t *len,
                                   char hex[CORE_SHA256_HEX], int *stamped,
                                   core_err *err);
/** Freezes text (as data_manifest_snapshot read it) and tsr (a reply the
 * caller checked over its SHA-256) as stamps/manifest-BATCH.txt and .tsr,
 * listed in the MANIFEST, under the lock. CORE_EINPUT when BATCH's
 * snapshot is frozen already. */
core_status data_manifest_stamp_freeze(data_experiment *exp, const char *batch,
                                       const char *text, size_t len,
                                       const void *tsr, size_t tsr_len,
                                       core_err *err);

/* Round orders drawn from a stamp (stamps/stamp_data.c)
 *
 * A batch whose round orders were drawn from a stamp (facts key
 * order_stamp: the token of the version it ran under). */
typedef struct data_order_stamp {
  char batch[16];
  char stamp[64]; /* "stamps/vK.tsr", as the facts name it */
  long version;   /* the facts' sheet_version; -1 when order_stamp is not
                     that version's token */
} data_order_stamp;

/** Every batch of exp whose facts name order_stamp, in batch order. OUT:
 * *out newly allocated (core_free), *n. CORE_ENOMEM only. */
core_status data_order_stamps(const data_experiment *exp,
                              data_order_stamp **out, size_t *n,
                              core_err *err);

/* Registration, for readers (stamps/stamp.c)
 *
 * What a reader is told of each version's proofs (analyze --json
 * `registration`, the report): the time-stamp when its token verifies
 * against the version's record (the certificate it carries; verify
 * checks the chain), and the key the signature names (verify checks the
 * signature). */
typedef struct data_registration {
  int version;
  char sha256[CORE_SHA256_HEX]; /* the sheet's */
  int stamped;                  /* 0: no token, or one that fails */
  char stamp_time[32], tsa[512];
  char key[CORE_SSH_FP]; /* "" when not signed */
} data_registration;

/** One entry per version of exp's chain. OUT: *out newly allocated
 * (core_free), *n. CORE_ENOMEM only. */
core_status data_registration_load(const data_experiment *exp,
                                   data_registration **out, size_t *n,
                                   core_err *err);

#endif
