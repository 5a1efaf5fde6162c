/* bundles.h: a bundle, one .tar.gz holding an experiment's data folder
 * for readers: written, verified, extracted and compared.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_BUNDLES_H
#define PREREG_BUNDLES_H

#include <stddef.h>

#include "core/core.h"
#include "data/data.h"
#include "protocols/proto.h"

/* Bundles:
 *
 * A bundle is one .tar.gz holding an experiment folder for readers:
 *   ID/BUNDLE-MANIFEST  first file: "# prereg bundle 1", then one
 *                       "SHA256 SIZE PATH" line (PATH relative to ID/,
 *                       sorted) for every other file, README and report
 *                       included, so any file added, removed, changed or
 *                       grown is caught while streaming
 *   ID/MANIFEST         the data folder's manifest, byte for byte
 *   ID/README.md        what each file is and how to check it
 *   ID/versions/, ID/batches/...   every file the MANIFEST lists
 *   ID/report/...       the rendered report when DATA/ID/report/ existed
 * Deterministic: members sorted (BUNDLE-MANIFEST first), owner 0:0 with no
 * names, modes 0444/0555, mtime the newest time recorded in versions/ and
 * batch facts, gzip header without time or name.
 * Exit codes: a file that is no prereg bundle at all (not a tar.gz, no
 * BUNDLE-MANIFEST first) is bad input, CORE_EINPUT (2); any damage or
 * mismatch in a bundle is CORE_EVERIFY (1). Only bundles/ includes
 * libarchive.
 */

/** Writes the bundle of the experiment folder exp_dir (DATA/ID) to
 * out_path (atomically, mode 0644; parent folders created), with the
 * files under report_dir (NULL: none) as its report/. sheet is optional
 * (title, author and question for the README). Refuses with CORE_EVERIFY
 * when a file differs from the MANIFEST, and CORE_EINPUT when the report
 * holds a link or special file. OUT: sha256 (may be NULL) the bundle's own
 * digest. Call data_verify first: this checks digests only. */
core_status data_bundle_write(const char *exp_dir, const proto_sheet *sheet,
                              const char *report_dir, const char *out_path,
                              char sha256[CORE_SHA256_HEX], core_err *err);

/* A bundle's MANIFEST signed with an SSH key (publish --sign): the
 * member ID/manifest.sig, outside the MANIFEST it signs. */
#define DATA_BUNDLE_MANIFEST_SIG "manifest.sig"

/** data_bundle_write with the MANIFEST's signature (sig[0..sig_len), an
 * armoured SSH signature) as the member manifest.sig; sig NULL: none. */
core_status
data_bundle_write_signed(const char *exp_dir, const proto_sheet *sheet,
                         const char *report_dir, const char *out_path,
                         const char *sig, size_t sig_len,
                         char sha256[CORE_SHA256_HEX], core_err *err);

/** Checks the bundle at path without unpacking it: every member against
 * BUNDLE-MANIFEST and MANIFEST, missing, added and duplicate members,
 * sizes, paths (absolute, "..", links refused), and the chain: versions
 * v0..vN each with .lua/.json (sha256 and filed_at), .diff for N >= 1,
 * filing times in order, every batch row under a version in the bundle
 * with that version's sha256, and no run started before its version was
 * filed (so none before the registration). Appends one line per problem
 * to report ("PATH: ID/member: what"), or an "ok" summary with the
 * bundle's own SHA-256; report may be NULL. Returns CORE_OK,
 * CORE_EVERIFY, CORE_EINPUT (not a bundle) or CORE_EIO. */
core_status data_bundle_verify(const char *path, core_buf *report,
                               core_err *err);

/** Verifies, then extracts the bundle with libarchive's secure flags into
 * a new temporary folder ($TMPDIR or /tmp, prereg-bundle-XXXXXX) laid out
 * as a data folder (TMP/ID/...). The folder is removed when the process
 * exits. OUT: *data_dir the TMP folder, *sheet_path its newest sheet
 * version TMP/ID/versions/vN.lua; both newly allocated (core_free), NULL
 * on error. */
core_status data_bundle_extract(const char *path, char **data_dir,
                                char **sheet_path, core_err *err);

/** Removes now every temporary copy this process extracted (what exit
 * and SIGINT, SIGTERM and SIGHUP do), and frees the paths
 * data_resolve_input handed out: none of them may be used afterwards.
 * For a process that reads many bundles, such as a fuzzer: the copies of
 * one process are limited to a few. */
void data_bundle_copies_remove(void);

/** What data_bundle_compare compares: the members under prefix (such as
 * "report/") of the verified copy data_dir/id/ that data_bundle_extract
 * made, against the files of the folder fresh. */
typedef struct data_compare {
  const char *data_dir, *id, *prefix, *fresh;
  const char *who;           /* the bundle, for messages */
  core_buf *out;             /* one line per difference */
  size_t *problems, *listed; /* OUT: differences; members under prefix */
  size_t added;              /* OUT: of the differences, members fresh lacks */
} data_compare;

/** Compares, by the digests the bundle's BUNDLE-MANIFEST records (each
 * checked against its member when the bundle was read, so nothing needs
 * extracting), every member under prefix with the file of the same name
 * in fresh: one that differs, one fresh lacks (a file added) and, when
 * the bundle has any member under prefix, one fresh has and the bundle
 * lacks, are each a line in out and a problem. With fresh NULL it only
 * counts the members under prefix. */
core_status data_bundle_compare(data_compare *c, core_err *err);

/** 1 when arg names a bundle (ends in .tar.gz or .tgz), else 0. */
int data_is_bundle(const char *arg);

/** What analyze, report and verify use for their SHEET argument: for a
 * sheet, *sheet_path = arg and *data_dir_out = data_dir; for a bundle,
 * it is verified and extracted (data_bundle_extract) and both point into
 * the extracted copy. OUT: both borrowed, valid until the process exits
 * (arg's and data_dir's for a sheet: as long as those are); *is_bundle
 * (may be NULL) 1 for a bundle. Errors as data_bundle_extract. */
core_status data_resolve_input(const char *arg, const char *data_dir,
                               const char **sheet_path,
                               const char **data_dir_out, int *is_bundle,
                               core_err *err);

#endif
