/* cmd_sign.c: SSH signatures of what prereg freezes (a version's record,
 * a bundle's MANIFEST), made and checked with ssh-keygen -Y in the
 * namespace "prereg", the way git signs commits: --sign KEYFILE on
 * register, amend and publish; verify --allowed-signers FILE.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "bundles/bundles.h"
#include "cli/cli_internal.h"
#include "data/data.h"
#include "run/run.h"

#define NAMESPACE "prereg"

core_status cli_ssh_sign(const char *key, const char *text, size_t len,
                         char **sig, size_t *sig_len, core_err *err) {
  const char *argv[] = {"ssh-keygen", "-Y", "sign", "-n",
                        NAMESPACE,    "-f", key,    NULL};
  run_tool_result res;
  char why[400], ns[64], fp[CORE_SSH_FP];
  core_status st;
  *sig = NULL;
  *sig_len = 0;
  if (!core_exists(key))
    return core_fail(err, CORE_EUSAGE, "--sign %s: no such key file", key);
  st =
      run_tool(argv, text, len, SIGNATURE_MAX, SIGNATURE_TIMEOUT_S, &res, err);
  if (st == CORE_OK && !(res.exited && res.exit_code == 0)) {
    run_tool_why(&res, why, sizeof why);
    st = core_fail(err, CORE_ERUN, "ssh-keygen -Y sign -f %s failed: %s", key,
                   why);
  } else if (st == CORE_OK &&
             (st = core_sshsig_read("ssh-keygen's signature", res.out.data,
                                    res.out.len, ns, fp, err)) == CORE_OK) {
    *sig_len = res.out.len;
    *sig = core_buf_steal(&res.out);
  }
  run_tool_result_free(&res);
  return st;
}

/* The key's fingerprint in ssh-keygen's "Good ... with TYPE key FP". */
static void fingerprint(const char *line, char *fp, size_t cap) {
  const char *k = line ? strstr(line, " key ") : NULL;
  size_t n;
  snprintf(fp, cap, "an unknown key");
  if (!k)
    return;
  k += 5;
  n = strcspn(k, " \r\n");
  snprintf(fp, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), k);
  for (char *p = fp; *p; p++)
    if ((unsigned char)*p < 0x21 || *p == 0x7f)
      *p = '?';
}

/* ssh-keygen -Y with the message on its standard input: CORE_OK when it
 * says yes; else CORE_EVERIFY with its reason in why. */
static core_status ask(const char *const argv[], const char *msg, size_t len,
                       run_tool_result *res, char *why, size_t cap,
                       core_err *err) {
  core_status st =
      run_tool(argv, msg, len, 64 << 10, SIGNATURE_TIMEOUT_S, res, err);
  if (st != CORE_OK)
    return st;
  if (res->exited && res->exit_code == 0)
    return CORE_OK;
  run_tool_why(res, why, cap);
  return CORE_EVERIFY;
}

/* The first principal allowed signers give the signature, into who. */
static core_status principal(const char *sig, const char *allowed, char *who,
                             size_t cap, char *why, size_t wcap,
                             core_err *err) {
  const char *argv[] = {"ssh-keygen", "-Y", "find-principals", "-s",
                        sig,          "-f", allowed,           NULL};
  run_tool_result res;
  core_status st = ask(argv, NULL, 0, &res, why, wcap, err);
  if (st == CORE_OK) {
    const char *o = res.out.data ? res.out.data : "";
    size_t n = strcspn(o, "\r\n");
    snprintf(who, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), o);
    for (char *p = who; *p; p++)
      if ((unsigned char)*p < 0x20 || *p == 0x7f)
        *p = '?';
    if (!who[0])
      st = CORE_EVERIFY;
  }
  run_tool_result_free(&res);
  return st;
}

/* Checks the signature file sig over msg: its armour, the namespace, the
 * signature, and with allowed the key's principal there. OUT: line
 * ("signed by FP (PRINCIPAL)"). CORE_EVERIFY naming sig. */
static core_status sig_check(const char *sig, const char *msg, size_t len,
                             const char *allowed, char *line, size_t cap,
                             core_err *err) {
  const char *nv[] = {"ssh-keygen", "-Y",      "check-novalidate",
                      "-n",         NAMESPACE, "-s",
                      sig,          NULL};
  char *text = NULL, ns[64], fp[128], who[256], why[400], kfp[CORE_SSH_FP];
  size_t tlen = 0;
  run_tool_result res;
  core_status st =
      core_read_file_max(sig, SIGNATURE_MAX, 0, &text, &tlen, err);
  if (st == CORE_OK)
    st = core_sshsig_read(sig, text, tlen, ns, kfp, err);
  core_free(text);
  if (st == CORE_OK && strcmp(ns, NAMESPACE) != 0)
    return core_fail(err, CORE_EVERIFY,
                     "%s: signed in namespace '%s', not '" NAMESPACE "'", sig,
                     ns);
  if (st != CORE_OK)
    return st == CORE_EIO ? core_fail(err, CORE_EVERIFY, "%s", err->msg) : st;
  if ((st = ask(nv, msg, len, &res, why, sizeof why, err)) == CORE_EVERIFY)
    st = core_fail(err, CORE_EVERIFY,
                   "%s: the signature does not verify (%s): what it signs "
                   "was changed",
                   sig, why);
  fingerprint(res.out.data, fp, sizeof fp);
  run_tool_result_free(&res);
  if (st != CORE_OK)
    return st;
  if (!allowed) {
    snprintf(line, cap, "signed by %s", fp);
    return CORE_OK;
  }
  if ((st = principal(sig, allowed, who, sizeof who, why, sizeof why, err)) ==
      CORE_EVERIFY)
    return core_fail(err, CORE_EVERIFY,
                     "%s: signed by %s, a key %s does not allow", sig, fp,
                     allowed);
  if (st == CORE_OK) {
    const char *v[] = {"ssh-keygen", "-Y", "verify",  "-f", allowed, "-I",
                       who,          "-n", NAMESPACE, "-s", sig,     NULL};
    if ((st = ask(v, msg, len, &res, why, sizeof why, err)) == CORE_EVERIFY)
      st = core_fail(err, CORE_EVERIFY,
                     "%s: signed by %s, which %s does not allow for %s (%s)",
                     sig, fp, allowed, who, why);
    run_tool_result_free(&res);
  }
  if (st == CORE_OK)
    snprintf(line, cap, "signed by %s (%s)", fp, who);
  return st;
}

/* One version's signature: a line, or a problem (counted). */
static core_status check_version(const data_experiment *exp, size_t k,
                                 const char *allowed, FILE *out,
                                 long *problems, core_err *err) {
  char *sig =
      core_asprintf("%s/" DATA_SIGNATURES_DIR "/v%zu.sig", exp->dir, k);
  char *rec = core_asprintf("%s/versions/v%zu.json", exp->dir, k);
  char *text = NULL, line[512];
  size_t len = 0;
  core_err e;
  core_status st = CORE_OK;
  if (!sig || !rec)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else if (!core_exists(sig))
    fprintf(out, "v%zu: not signed\n", k);
  else if (core_read_file(rec, &text, &len, &e) != CORE_OK ||
           sig_check(sig, text, len, allowed, line, sizeof line, &e) !=
               CORE_OK) {
    if (e.status == CORE_ENOMEM || e.status == CORE_ERUN)
      st = core_fail(err, e.status, "%s", e.msg);
    fprintf(out, "%s\n", e.msg);
    (*problems)++;
  } else {
    fprintf(out, "v%zu: %s\n", k, line);
  }
  core_free(text);
  core_free(sig);
  core_free(rec);
  return st;
}

/* A bundle's MANIFEST, signed by publish --sign as manifest.sig. */
static core_status check_manifest(const data_experiment *exp,
                                  const char *allowed, FILE *out,
                                  long *problems, core_err *err) {
  char *sig = core_path_join(exp->dir, DATA_BUNDLE_MANIFEST_SIG);
  char *man = core_path_join(exp->dir, "MANIFEST");
  char *text = NULL, line[512];
  size_t len = 0;
  core_err e;
  core_status st = CORE_OK;
  if (!sig || !man) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  } else if (!core_exists(sig)) {
    fprintf(out, "MANIFEST: not signed\n");
    if (allowed) {
      fprintf(out,
              "%s: missing: the bundle's MANIFEST is not signed by a "
              "key %s allows\n",
              sig, allowed);
      (*problems)++;
    }
  } else if (core_read_file(man, &text, &len, &e) != CORE_OK ||
             sig_check(sig, text, len, allowed, line, sizeof line, &e) !=
                 CORE_OK) {
    if (e.status == CORE_ENOMEM || e.status == CORE_ERUN)
      st = core_fail(err, e.status, "%s", e.msg);
    fprintf(out, "%s\n", e.msg);
    (*problems)++;
  } else {
    fprintf(out, "MANIFEST: %s\n", line);
  }
  core_free(text);
  core_free(sig);
  core_free(man);
  return st;
}

core_status cli_verify_signatures(const data_experiment *exp,
                                  const char *allowed, int bundle, FILE *out,
                                  core_err *err) {
  long problems = 0;
  core_status st = CORE_OK;
  if (allowed && !core_exists(allowed))
    return core_fail(err, CORE_EUSAGE, "--allowed-signers %s: no such file",
                     allowed);
  for (size_t k = 0; k < exp->n_versions && st == CORE_OK; k++)
    st = check_version(exp, k, allowed, out, &problems, err);
  if (st == CORE_OK && bundle)
    st = check_manifest(exp, allowed, out, &problems, err);
  if (st == CORE_OK && problems)
    st = core_fail(err, CORE_EVERIFY, "%s: %ld signature%s did not verify",
                   exp->dir, problems, problems == 1 ? "" : "s");
  return st;
}
