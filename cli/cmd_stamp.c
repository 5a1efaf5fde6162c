/* cmd_stamp.c: `prereg stamp` (trusted time-stamps of the chain's
 * versions: from a TSA over HTTP, or a request and a reply carried by
 * other means), the stamper register and amend take with --tsa, and
 * verify's check of the stamps of a folder or a bundle.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "bundles/bundles.h"
#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"
#include "run/run.h"
#include "stamps/stamps.h"

/* The TSA */

/* A URL curl is given: http or https only. */
static core_status check_url(const char *url, core_err *err) {
  if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
    return core_fail(err, CORE_EUSAGE,
                     "--tsa '%.200s': not an http:// or https:// URL (e.g. "
                     "http://timestamp.digicert.com)",
                     url);
  return CORE_OK;
}

/* POSTs the request to the TSA with curl. OUT: *reply (core_free). */
static core_status post(const char *url, const char *tsq, size_t len,
                        char **reply, size_t *reply_len, core_err *err) {
  char max_time[16], max_size[32], why[400];
  const char *argv[] = {"curl",
                        "--silent",
                        "--show-error",
                        "--fail",
                        "--proto",
                        "=http,https",
                        "--max-time",
                        max_time,
                        "--max-filesize",
                        max_size,
                        "--header",
                        "Content-Type: application/timestamp-query",
                        "--data-binary",
                        "@-",
                        "--url",
                        url,
                        NULL};
  run_tool_result res;
  core_status st;
  snprintf(max_time, sizeof max_time, "%d", STAMP_TIMEOUT_S);
  snprintf(max_size, sizeof max_size, "%zu", (size_t)STAMP_REPLY_MAX);
  *reply = NULL;
  *reply_len = 0;
  st = run_tool(argv, tsq, len, STAMP_REPLY_MAX, STAMP_TIMEOUT_S + 5, &res,
                err);
  if (st == CORE_OK && !(res.exited && res.exit_code == 0)) {
    run_tool_why(&res, why, sizeof why);
    st = core_fail(err, CORE_ERUN, "the TSA %.300s did not answer: %s", url,
                   why);
  } else if (st == CORE_OK) {
    *reply_len = res.out.len;
    *reply = core_buf_steal(&res.out);
    if (!*reply)
      st =
          core_fail(err, CORE_ERUN, "the TSA %.300s sent an empty reply", url);
  } else {
    core_err_prefix(err, "the TSA %.300s cannot be asked: ", url);
  }
  run_tool_result_free(&res);
  return st;
}

typedef struct tsa_ctx {
  const char *url, *ca, *key;
  core_stamp got; /* the last stamp taken */
} tsa_ctx;

/* A stamp of hex from the TSA, checked in full (status, imprint, nonce,
 * signature and, with a CA, the chain). */
static core_status ask_tsa(void *ctx, int version, const char *hex, char **tsr,
                           size_t *len, core_err *err) {
  tsa_ctx *c = ctx;
  char nonce[CORE_NONCE_HEX], *tsq = NULL, name[64];
  size_t tsq_len = 0;
  core_status st = core_stamp_request(hex, &tsq, &tsq_len, nonce, err);
  *tsr = NULL;
  if (st == CORE_OK)
    st = post(c->url, tsq, tsq_len, tsr, len, err);
  core_free(tsq);
  if (version < 0)
    snprintf(name, sizeof name, "the reply for the MANIFEST");
  else
    snprintf(name, sizeof name, "the reply for v%d", version);
  if (st == CORE_OK &&
      (st = core_stamp_check(name, *tsr, *len, hex, nonce, c->ca, &c->got,
                             err)) != CORE_OK) {
    core_err_prefix(err, "the TSA %.300s: ", c->url);
    if (st == CORE_EINPUT) /* --tsa-ca unreadable: the user's to fix */
      err->status = st = CORE_EUSAGE;
  }
  if (st != CORE_OK) {
    core_free(*tsr);
    *tsr = NULL;
  }
  return st;
}

/* The record signed with --sign's key. */
static core_status sign_record(void *ctx, const char *text, size_t len,
                               char **sig, size_t *sig_len, core_err *err) {
  const tsa_ctx *c = ctx;
  return cli_ssh_sign(c->key, text, len, sig, sig_len, err);
}

core_status cli_stamper(const cli_opts *opts, data_stamper *stamper,
                        core_err *err) {
  static tsa_ctx ctx;
  core_status st;
  memset(stamper, 0, sizeof *stamper);
  memset(&ctx, 0, sizeof ctx);
  if (opts->tsa_ca && !opts->tsa)
    return core_fail(err, CORE_EUSAGE, "--tsa-ca needs --tsa URL");
  if (opts->tsa && (st = check_url(opts->tsa, err)) != CORE_OK)
    return st;
  if (opts->sign && !core_exists(opts->sign))
    return core_fail(err, CORE_EUSAGE, "--sign %s: no such key file",
                     opts->sign);
  ctx.url = opts->tsa;
  ctx.ca = opts->tsa_ca;
  ctx.key = opts->sign;
  stamper->fn = opts->tsa ? ask_tsa : NULL;
  stamper->sign = opts->sign ? sign_record : NULL;
  stamper->ctx = &ctx;
  return CORE_OK;
}

void cli_print_stamp(const data_stamper *stamper, int version, FILE *out) {
  const tsa_ctx *c = stamper->ctx;
  if (stamper->fn && c)
    fprintf(out, "  stamped v%d %s by %s%s\n", version, c->got.time,
            c->got.tsa,
            c->got.chain_checked ? "" : " (chain not checked: no --tsa-ca)");
  if (stamper->sign && c)
    fprintf(out, "  signed  v%d with %s\n", version, c->key);
}

int cli_stamper_failed(const data_stamper *stamper, const core_err *err) {
  return (stamper->fn && strncmp(err->msg, "the TSA ", 8) == 0) ||
         (stamper->sign && strncmp(err->msg, "ssh-keygen ", 11) == 0);
}

/* prereg stamp */

/* Stamps every version not stamped yet from the TSA. */
static core_status stamp_online(const cli_opts *opts, data_experiment *exp,
                                FILE *out, core_err *err) {
  data_stamper s;
  core_status st = cli_stamper(opts, &s, err);
  size_t done = 0;
  for (size_t k = 0; k < exp->n_versions && st == CORE_OK; k++) {
    char hex[CORE_SHA256_HEX], *tsr = NULL;
    size_t len = 0;
    if (data_stamp_has(exp, (int)k))
      continue;
    if ((st = data_stamp_digest(exp, (int)k, hex, err)) == CORE_OK &&
        (st = s.fn(s.ctx, (int)k, hex, &tsr, &len, err)) == CORE_OK &&
        (st = data_stamp_freeze(exp, (int)k, tsr, len, err)) == CORE_OK) {
      cli_print_stamp(&s, (int)k, out);
      done++;
    }
    core_free(tsr);
  }
  if (st == CORE_OK && done == 0)
    fprintf(out, "%s: every version is stamped already\n", exp->id);
  return st;
}

core_status cli_stamp_data(const cli_opts *opts, data_experiment *exp,
                           FILE *out, core_err *err) {
  data_stamper s;
  char batch[16], hex[CORE_SHA256_HEX], *text = NULL, *tsr = NULL;
  size_t len = 0, tsr_len = 0;
  int stamped = 0;
  const tsa_ctx *c;
  core_status st = cli_stamper(opts, &s, err);
  if (st == CORE_OK && !s.fn)
    st = core_fail(err, CORE_EUSAGE, "--data-manifest needs --tsa URL");
  if (st == CORE_OK)
    st = data_manifest_snapshot(exp, batch, &text, &len, hex, &stamped, err);
  if (st == CORE_OK && !batch[0])
    st = core_fail(err, CORE_ELOCK,
                   "%s: no batch is frozen yet: there are no rows to stamp",
                   exp->dir);
  else if (st == CORE_OK && stamped)
    fprintf(out, "%s: the MANIFEST after batch %s is stamped already\n",
            exp->id, batch);
  else if (st == CORE_OK &&
           (st = s.fn(s.ctx, -1, hex, &tsr, &tsr_len, err)) == CORE_OK &&
           (st = data_manifest_stamp_freeze(exp, batch, text, len, tsr,
                                            tsr_len, err)) == CORE_OK) {
    c = s.ctx;
    fprintf(out, "  stamped the MANIFEST after %s %s by %s%s\n", batch,
            c->got.time, c->got.tsa,
            c->got.chain_checked ? "" : " (chain not checked: no --tsa-ca)");
  }
  core_free(text);
  core_free(tsr);
  return st;
}

/* Writes a request for every version not stamped yet. */
static core_status stamp_request(const cli_opts *opts, data_experiment *exp,
                                 FILE *out, core_err *err) {
  core_status st = CORE_OK;
  size_t done = 0;
  for (size_t k = 0; k < exp->n_versions && st == CORE_OK; k++) {
    char hex[CORE_SHA256_HEX], nonce[CORE_NONCE_HEX], *tsq = NULL,
                                                      *path = NULL;
    size_t len = 0;
    if (data_stamp_has(exp, (int)k))
      continue;
    if ((st = data_stamp_digest(exp, (int)k, hex, err)) == CORE_OK &&
        (st = core_stamp_request(hex, &tsq, &len, nonce, err)) == CORE_OK &&
        (st = data_stamp_request_write(exp, (int)k, tsq, len, &path, err)) ==
            CORE_OK) {
      fprintf(out,
              "v%zu: request written to %s\n"
              "  send it:  curl --fail -H 'Content-Type: "
              "application/timestamp-query' --data-binary @%s -o v%zu.tsr "
              "URL\n"
              "  then:     prereg stamp %s --attach v%zu.tsr\n",
              k, path, path, k, opts->args[0], k);
      done++;
    }
    core_free(tsq);
    core_free(path);
  }
  if (st == CORE_OK && done == 0)
    fprintf(out, "%s: every version is stamped already\n", exp->id);
  return st;
}

/* The version whose record a reply covers, among those not stamped. */
static int version_of_reply(data_experiment *exp, const char *imprint,
                            core_err *err) {
  for (size_t k = 0; k < exp->n_versions; k++) {
    char hex[CORE_SHA256_HEX];
    if (!data_stamp_has(exp, (int)k) &&
        data_stamp_digest(exp, (int)k, hex, err) == CORE_OK &&
        strcmp(hex, imprint) == 0)
      return (int)k;
  }
  return -1;
}

/* Freezes a reply brought from elsewhere, after the checks a TSA's reply
 * gets (the nonce too, when the request it answers is still here). */
static core_status stamp_attach(const cli_opts *opts, data_experiment *exp,
                                FILE *out, core_err *err) {
  char *tsr = NULL, *tsq = NULL;
  char hex[CORE_SHA256_HEX], nonce[CORE_NONCE_HEX] = "";
  size_t len = 0, tsq_len = 0;
  core_stamp s;
  int k = -1;
  core_status st =
      core_read_file_max(opts->attach, STAMP_REPLY_MAX, 1, &tsr, &len, err);
  if (st == CORE_OK &&
      (st = core_stamp_check(opts->attach, tsr, len, NULL, NULL, opts->tsa_ca,
                             &s, err)) == CORE_OK &&
      (k = version_of_reply(exp, s.imprint, err)) < 0)
    st = core_fail(err, CORE_EVERIFY,
                   "%s: covers sha256 %.12s..., the record of no version of "
                   "%s that is not stamped yet",
                   opts->attach, s.imprint, exp->id);
  if (st == CORE_OK &&
      (st = data_stamp_request_read(exp, k, &tsq, &tsq_len, err)) == CORE_OK &&
      tsq &&
      (st = core_stamp_request_read("the pending request", tsq, tsq_len, hex,
                                    nonce, err)) == CORE_OK)
    st = core_stamp_check(opts->attach, tsr, len, s.imprint, nonce,
                          opts->tsa_ca, &s, err);
  if (st == CORE_OK &&
      (st = data_stamp_freeze(exp, k, tsr, len, err)) == CORE_OK)
    fprintf(out, "  stamped v%d %s by %s%s\n", k, s.time, s.tsa,
            s.chain_checked ? "" : " (chain not checked: no --tsa-ca)");
  if (st == CORE_EVERIFY) /* a reply that is not one is bad input */
    err->status = st = CORE_EINPUT;
  core_free(tsq);
  core_free(tsr);
  return st;
}

core_status cli_cmd_stamp(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet;
  data_experiment *exp;
  int modes = !!opts->tsa + !!opts->attach + !!opts->request;
  core_status st;
  if (opts->data_manifest && !opts->tsa)
    return core_fail(err, CORE_EUSAGE,
                     "--data-manifest takes --tsa URL; see prereg stamp "
                     "--help");
  if (modes != 1)
    return core_fail(err, CORE_EUSAGE,
                     "stamp takes one of --tsa URL, --request, --attach "
                     "FILE.tsr; see prereg stamp --help");
  if (opts->tsa_ca && opts->request)
    return core_fail(err, CORE_EUSAGE, "--request takes no --tsa-ca");
  if ((st = cli_open_both(opts, &sheet, &exp, err)) != CORE_OK)
    return st;
  if (exp->n_versions == 0)
    st = core_fail(err, CORE_ELOCK,
                   "%s: not registered; run prereg register "
                   "%s first",
                   exp->dir, opts->args[0]);
  else if (opts->data_manifest)
    st = cli_stamp_data(opts, exp, out, err);
  else if (opts->tsa)
    st = stamp_online(opts, exp, out, err);
  else if (opts->request)
    st = stamp_request(opts, exp, out, err);
  else
    st = stamp_attach(opts, exp, out, err);
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}

/* verify */

core_status cli_verify_stamps(const data_experiment *exp, const char *ca,
                              FILE *out, int *before_plan, core_err *err) {
  core_buf b;
  long problems = 0;
  core_status st;
  core_buf_init(&b);
  st = data_stamps_verify(exp, ca, &b, &problems, before_plan, err);
  if (b.data)
    fputs(b.data, out);
  core_buf_free(&b);
  if (st == CORE_OK && problems)
    st = core_fail(err, CORE_EVERIFY, "%s: %ld time-stamp%s did not verify",
                   exp->dir, problems, problems == 1 ? "" : "s");
  if (st == CORE_EINPUT)
    err->status = st = CORE_EUSAGE;
  return st;
}

void cli_print_verify_report(const char *report, int before_plan, FILE *out) {
  char *marked =
      before_plan && report ? data_status_mark_before_plan(report) : NULL;
  if (marked || report)
    fputs(marked ? marked : report, out);
  core_free(marked);
}

/* Prints text with every "DIR/" said as "BUNDLE: " (the extracted copy's
 * folder is the reader's temporary one: messages name the bundle). */
static void print_as_bundle(const char *text, const char *dir,
                            const char *bundle, FILE *out) {
  size_t dl = strlen(dir);
  for (const char *p = text; *p;) {
    const char *hit = strstr(p, dir);
    if (!hit || hit[dl] != '/') {
      fputs(p, out);
      return;
    }
    fwrite(p, 1, (size_t)(hit - p), out);
    fprintf(out, "%s: %s", bundle,
            strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir);
    p = hit + dl;
  }
}

/* The round orders drawn from stamps (run_order_verify), after the
 * stamps' lines; st: how the stamps went. */
static core_status verify_order(const data_experiment *exp, FILE *out,
                                core_status st, core_err *err) {
  core_buf b;
  long problems = 0;
  core_err e;
  core_status got;
  core_buf_init(&b);
  got = run_order_verify(exp, &b, &problems, &e);
  if (b.data)
    fputs(b.data, out);
  core_buf_free(&b);
  if (got == CORE_OK && problems)
    core_fail(&e, got = CORE_EVERIFY,
              "%s: %ld run%s not in the order %s stamp dictates", exp->dir,
              problems, problems == 1 ? "" : "s",
              problems == 1 ? "its" : "their");
  if (got != CORE_OK && (st == CORE_OK || got != CORE_EVERIFY)) {
    *err = e;
    return got;
  }
  return st;
}

core_status cli_verify_proofs(const data_experiment *exp, const char *ca,
                              const char *allowed, int bundle, char **text,
                              int *before_plan, core_err *err) {
  size_t len = 0;
  FILE *mem = open_memstream(text, &len);
  core_status st;
  *before_plan = 0;
  if (!mem)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = cli_verify_stamps(exp, ca, mem, before_plan, err);
  if (st == CORE_OK || st == CORE_EVERIFY)
    st = verify_order(exp, mem, st, err);
  if (st == CORE_OK || st == CORE_EVERIFY) {
    core_err e2;
    core_status s2 = cli_verify_signatures(exp, allowed, bundle, mem, &e2);
    if (st == CORE_OK && s2 != CORE_OK) {
      st = s2;
      *err = e2;
    }
  }
  fclose(mem);
  return st;
}

core_status cli_verify_bundle_proofs(const char *path, const char *ca,
                                     const char *allowed, FILE *out,
                                     int *before_plan, core_err *err) {
  const char *sheet_path, *data_dir;
  proto_sheet *s;
  data_experiment *exp = NULL;
  char *text = NULL;
  core_status st =
      data_resolve_input(path, NULL, &sheet_path, &data_dir, NULL, err);
  if (st != CORE_OK)
    return st;
  if (!(s = proto_sheet_load(sheet_path, err)))
    return err->status ? err->status : CORE_EPROTOCOL;
  if ((st = data_experiment_open(data_dir, s, &exp, err)) == CORE_OK) {
    st = cli_verify_proofs(exp, ca, allowed, 1, &text, before_plan, err);
    if (text)
      print_as_bundle(text, exp->dir, path, out);
    if (st == CORE_EVERIFY)
      core_fail(err, st,
                "%s: its time-stamps or signatures did not verify "
                "(above)",
                path);
  }
  free(text); /* open_memstream's, not ours */
  data_experiment_free(exp);
  proto_sheet_free(s);
  return st;
}
