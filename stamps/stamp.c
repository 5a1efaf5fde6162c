/* stamp.c: the time-stamps of an experiment's chain: each version's
 * record (versions/vN.json: the sheet's SHA-256 and the filing time)
 * stamped by a time-stamping authority, the token frozen as
 * stamps/vN.tsr and listed in the MANIFEST; requests waiting to be sent
 * by other means (stamps/vN.tsq, not frozen); and verify's word on them.
 * The keys that sign the records (signatures/vN.sig, which data/
 * writes and ssh-keygen checks from cli/) are read here for readers.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "stamps/stamps_internal.h"

/* DATA/ID/stamps/vK.EXT, newly allocated. */
static char *stamp_path(const data_experiment *exp, int k, const char *ext) {
  return core_asprintf("%s/" DATA_STAMPS_DIR "/v%d.%s", exp->dir, k, ext);
}

core_status data_stamp_digest(const data_experiment *exp, int k,
                              char hex[CORE_SHA256_HEX], core_err *err) {
  char *path = core_asprintf("%s/versions/v%d.json", exp->dir, k);
  core_status st;
  if (!path)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = core_sha256_file(path, hex, err);
  core_free(path);
  return st;
}

int data_stamp_has(const data_experiment *exp, int k) {
  char *path = stamp_path(exp, k, "tsr");
  int has = path && core_exists(path);
  core_free(path);
  return has;
}

core_status data_stamp_freeze(data_experiment *exp, int k, const void *tsr,
                              size_t len, core_err *err) {
  char *rel[1];
  core_status st;
  if ((st = data_experiment_lock(exp, err)) != CORE_OK)
    return st;
  if (k < 0 || (size_t)k >= exp->n_versions)
    return core_fail(err, CORE_EINPUT, "%s: no version %d to stamp", exp->dir,
                     k);
  if (data_stamp_has(exp, k))
    return core_fail(err, CORE_EINPUT,
                     "%s/" DATA_STAMPS_DIR "/v%d.tsr: version %d is stamped "
                     "already; a frozen stamp is never replaced",
                     exp->dir, k, k);
  if (!(rel[0] = core_asprintf(DATA_STAMPS_DIR "/v%d.tsr", k)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = data_stamp_write(exp, k, tsr, len, err)) == CORE_OK)
    st = data_manifest_add(exp->dir, rel, 1, err);
  core_free(rel[0]);
  return st;
}

core_status data_stamp_request_write(const data_experiment *exp, int k,
                                     const void *tsq, size_t len, char **path,
                                     core_err *err) {
  char *dir = core_path_join(exp->dir, DATA_STAMPS_DIR);
  core_status st;
  *path = stamp_path(exp, k, "tsq");
  if (!dir || !*path)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else if ((st = core_mkdir_p(dir, 0755, err)) == CORE_OK)
    st = core_write_file_atomic(*path, tsq, len, 0644, err);
  core_free(dir);
  if (st != CORE_OK) {
    core_free(*path);
    *path = NULL;
  }
  return st;
}

core_status data_stamp_request_read(const data_experiment *exp, int k,
                                    char **tsq, size_t *len, core_err *err) {
  char *path = stamp_path(exp, k, "tsq");
  core_status st = CORE_OK;
  *tsq = NULL;
  *len = 0;
  if (!path)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (core_exists(path))
    st = core_read_file_max(path, STAMP_REPLY_MAX, 0, tsq, len, err);
  core_free(path);
  return st;
}

/* Checking */

/* "v12.tsr" -> 12; -1 when name is no stamp's. */
static long stamp_version(const char *name, const char *ext) {
  char *end;
  long k;
  if (name[0] != 'v' || name[1] < '0' || name[1] > '9')
    return -1;
  k = strtol(name + 1, &end, 10);
  return *end == '.' && strcmp(end + 1, ext) == 0 && k <= 1000000 ? k : -1;
}

/* Files of stamps/ that no version of the chain explains. */
static void stray_files(const data_experiment *exp, core_buf *report,
                        long *problems) {
  char *dir = core_path_join(exp->dir, DATA_STAMPS_DIR);
  char **names = NULL;
  size_t n = 0;
  core_err e;
  if (!dir || core_list_dir(dir, &names, &n, &e) != CORE_OK) {
    core_free(dir);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    long k = stamp_version(names[i], "tsr");
    char batch[16];
    if (k >= 0 && (size_t)k < exp->n_versions)
      continue;
    if (data_manifest_stamp_name(names[i], "tsr", batch) ||
        data_manifest_stamp_name(names[i], "txt", batch))
      continue; /* a data stamp: checked on its own */
    if (stamp_version(names[i], "tsq") >= 0 || data_tmp_file_pid(names[i]))
      continue; /* a request waiting to be sent, debris: said elsewhere */
    core_buf_printf(report, "%s/%s: not the stamp of a version of the chain\n",
                    dir, names[i]);
    (*problems)++;
  }
  core_names_free(names, n);
  core_free(dir);
}

/* One version's stamp: a line, and a problem when it does not hold. */
static core_status check_one(const data_experiment *exp, int k, const char *ca,
                             core_buf *report, long *problems, core_stamp *out,
                             core_err *err) {
  char *path = stamp_path(exp, k, "tsr"), *tsr = NULL;
  char hex[CORE_SHA256_HEX];
  size_t len = 0;
  core_err e;
  core_status st = CORE_OK;
  memset(out, 0, sizeof *out);
  if (!path)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (!core_exists(path)) {
    core_buf_printf(report, "v%d: not stamped\n", k);
  } else if (core_read_file_max(path, STAMP_REPLY_MAX, 0, &tsr, &len, &e) !=
                 CORE_OK ||
             data_stamp_digest(exp, k, hex, &e) != CORE_OK ||
             core_stamp_check(path, tsr, len, hex, NULL, ca, out, &e) !=
                 CORE_OK) {
    if (e.status == CORE_ENOMEM || e.status == CORE_EINPUT)
      st = core_fail(err, e.status, "%s", e.msg);
    core_buf_printf(report, "%s\n", e.msg);
    (*problems)++;
    memset(out, 0, sizeof *out);
  } else {
    core_buf_printf(
        report, "v%d: stamped %s by %s%s\n", k, out->time, out->tsa,
        out->chain_checked ? "" : " (chain not checked: no --tsa-ca)");
  }
  core_free(tsr);
  core_free(path);
  return st;
}

core_status data_stamps_verify(const data_experiment *exp, const char *ca,
                               core_buf *report, long *problems,
                               int *before_plan, core_err *err) {
  core_stamp *s = core_calloc(exp->n_versions + 1, sizeof *s);
  core_status st = CORE_OK;
  *problems = 0;
  *before_plan = 0;
  if (!s)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t k = 0; k < exp->n_versions && st == CORE_OK; k++)
    st = check_one(exp, (int)k, ca, report, problems, &s[k], err);
  if (st == CORE_OK)
    stray_files(exp, report, problems);
  if (st == CORE_OK)
    st = data_manifest_stamps_verify(exp, ca, s, report, problems, before_plan,
                                     err);
  core_free(s);
  return st;
}

char *data_status_mark_before_plan(const char *report) {
  static const char word[] = "DATA STAMPED BEFORE PLAN";
  const char *line = report, *at, *end, *paren;
  core_buf b;
  /* The line starts with it, or (a bundle's) with "BUNDLE: " before it. */
  while ((line = strstr(line, "status: ")) && line != report &&
         line[-1] != '\n' &&
         !(line - report >= 2 && line[-1] == ' ' && line[-2] == ':'))
    line += 8;
  if (!line)
    return core_strdup(report);
  line += 8;
  end = line + strcspn(line, "\n");
  paren = strstr(line, " (runs: ");
  at = paren && paren < end ? paren : end;
  core_buf_init(&b);
  if (at - line == 8 && strncmp(line, "COMPLETE", 8) == 0) {
    core_buf_append(&b, report, (size_t)(line - report));
    core_buf_puts(&b, word);
  } else {
    core_buf_append(&b, report, (size_t)(at - report));
    core_buf_printf(&b, " · %s", word);
  }
  core_buf_puts(&b, at);
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return core_buf_steal(&b);
}

/* Registration, for readers */

/* The key a version's signature names, or "" (none, or no signature). */
static void signature_key(const data_experiment *exp, int k,
                          char key[CORE_SSH_FP]) {
  char *path =
      core_asprintf("%s/" DATA_SIGNATURES_DIR "/v%d.sig", exp->dir, k);
  char *text = NULL, ns[64];
  size_t len = 0;
  core_err e;
  key[0] = '\0';
  if (path && core_exists(path) &&
      core_read_file_max(path, SIGNATURE_MAX, 0, &text, &len, &e) == CORE_OK &&
      core_sshsig_read(path, text, len, ns, key, &e) != CORE_OK)
    key[0] = '\0';
  core_free(text);
  core_free(path);
}

core_status data_registration_load(const data_experiment *exp,
                                   data_registration **out, size_t *n,
                                   core_err *err) {
  data_registration *r =
      core_calloc(exp->n_versions ? exp->n_versions : 1, sizeof *r);
  *out = NULL;
  *n = 0;
  if (!r)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t k = 0; k < exp->n_versions; k++) {
    char *path = stamp_path(exp, (int)k, "tsr"), *tsr = NULL, hex[65];
    size_t len = 0;
    core_stamp s;
    core_err e;
    r[k].version = exp->versions[k].number;
    snprintf(r[k].sha256, sizeof r[k].sha256, "%s", exp->versions[k].sha256);
    if (path && core_exists(path) &&
        core_read_file_max(path, STAMP_REPLY_MAX, 0, &tsr, &len, &e) ==
            CORE_OK &&
        data_stamp_digest(exp, (int)k, hex, &e) == CORE_OK &&
        core_stamp_check(path, tsr, len, hex, NULL, NULL, &s, &e) == CORE_OK) {
      r[k].stamped = 1;
      snprintf(r[k].stamp_time, sizeof r[k].stamp_time, "%s", s.time);
      snprintf(r[k].tsa, sizeof r[k].tsa, "%s", s.tsa);
    }
    core_free(tsr);
    core_free(path);
    signature_key(exp, (int)k, r[k].key);
  }
  *out = r;
  *n = exp->n_versions;
  return CORE_OK;
}
