/* stamp_data.c: data stamps. The MANIFEST as it stands after a batch is
 * stamped by a time-stamping authority over the SHA-256 of its text; the
 * text is frozen as stamps/manifest-BATCH.txt beside its token (.tsr),
 * so that a reader sees from a third party's clock which rows existed
 * when, and verify that none of them changed since. A data stamp earlier
 * than the stamp of the version its rows were collected under is said
 * (DATA STAMPED BEFORE PLAN).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "stamps/stamps_internal.h"

#define SNAPSHOT_PREFIX "manifest-"

int data_manifest_stamp_name(const char *name, const char *ext,
                             char batch[16]) {
  char suffix[8];
  long num;
  size_t n;
  if (strncmp(name, SNAPSHOT_PREFIX, 9) != 0)
    return 0;
  snprintf(suffix, sizeof suffix, ".%s", ext);
  if (!data_batch_name(name + 9, suffix, &num))
    return 0;
  n = strlen(name + 9) - strlen(suffix);
  if (n >= 16)
    return 0;
  memcpy(batch, name + 9, n);
  batch[n] = '\0';
  return 1;
}

/* DATA/ID/stamps/manifest-BATCH.EXT, newly allocated. */
static char *snapshot_path(const data_experiment *exp, const char *batch,
                           const char *ext) {
  return core_asprintf("%s/" DATA_STAMPS_DIR "/" SNAPSHOT_PREFIX "%s.%s",
                       exp->dir, batch, ext);
}

/* The newest batch whose CSV the MANIFEST lists ("" when none). */
static void newest_batch(const data_manifest *m, char batch[16]) {
  long best = -1;
  batch[0] = '\0';
  for (size_t i = 0; i < m->n; i++) {
    const char *p = m->e[i].path;
    long num;
    if (strncmp(p, "batches/", 8) == 0 &&
        data_batch_name(p + 8, ".csv", &num) && num > best &&
        strlen(p + 8) - 4 < 16) {
      best = num;
      snprintf(batch, 16, "%.*s", (int)(strlen(p + 8) - 4), p + 8);
    }
  }
}

core_status data_manifest_snapshot(const data_experiment *exp, char batch[16],
                                   char **text, size_t *len,
                                   char hex[CORE_SHA256_HEX], int *stamped,
                                   core_err *err) {
  char *path = core_path_join(exp->dir, "MANIFEST"), *tsr = NULL;
  data_manifest m;
  core_status st;
  *text = NULL;
  *len = 0;
  *stamped = 0;
  batch[0] = '\0';
  hex[0] = '\0';
  if (!path)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = core_read_file(path, text, len, err);
  core_free(path);
  if (st == CORE_OK && (st = data_manifest_parse("MANIFEST", *text, *len, &m,
                                                 NULL, err)) == CORE_OK) {
    newest_batch(&m, batch);
    data_manifest_free(&m);
    core_sha256_hex(*text, *len, hex);
    if (batch[0] && !(tsr = snapshot_path(exp, batch, "tsr")))
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    *stamped = tsr && core_exists(tsr);
    core_free(tsr);
  }
  if (st != CORE_OK) {
    core_free(*text);
    *text = NULL;
    *len = 0;
  }
  return st;
}

core_status data_manifest_stamp_freeze(data_experiment *exp, const char *batch,
                                       const char *text, size_t len,
                                       const void *tsr, size_t tsr_len,
                                       core_err *err) {
  char *dir = core_path_join(exp->dir, DATA_STAMPS_DIR);
  char *txt = snapshot_path(exp, batch, "txt");
  char *tok = snapshot_path(exp, batch, "tsr");
  char *rel[2] = {
      core_asprintf(DATA_STAMPS_DIR "/" SNAPSHOT_PREFIX "%s.txt", batch),
      core_asprintf(DATA_STAMPS_DIR "/" SNAPSHOT_PREFIX "%s.tsr", batch)};
  core_status st = data_experiment_lock(exp, err);
  if (st == CORE_OK && (!dir || !txt || !tok || !rel[0] || !rel[1]))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else if (st == CORE_OK && (core_exists(tok) || core_exists(txt)))
    st = core_fail(err, CORE_EINPUT,
                   "%s: the MANIFEST after batch %s is stamped already; a "
                   "frozen stamp is never replaced",
                   tok, batch);
  if (st == CORE_OK && (st = core_mkdir_p(dir, 0755, err)) == CORE_OK &&
      (st = core_write_file_atomic(txt, text, len, 0444, err)) == CORE_OK &&
      (st = core_write_file_atomic(tok, tsr, tsr_len, 0444, err)) == CORE_OK)
    st = data_manifest_add(exp->dir, rel, 2, err);
  core_free(dir);
  core_free(txt);
  core_free(tok);
  core_free(rel[0]);
  core_free(rel[1]);
  return st;
}

/* Checking */

/* The version the batch of facts rel ran under (the newest when it
 * started), or -1 when its facts do not say. */
static long batch_version(const data_experiment *exp, const char *rel) {
  data_stamp_facts f;
  data_stamp_facts_read(exp, rel, &f);
  return f.at_start > 0 && f.at_start <= (long long)exp->n_versions
             ? (long)f.at_start - 1
             : -1;
}

/* Each file the snapshot names against the MANIFEST now: a line per file
 * changed or gone. OUT: *newest, the version the newest batch it names
 * ran under (-1: none). Returns the count of files changed. */
static long compare_snapshot(const data_experiment *exp, const char *name,
                             const data_manifest *snap,
                             const data_manifest *now, core_buf *report,
                             long *newest) {
  long changed = 0;
  *newest = -1;
  for (size_t i = 0; i < snap->n; i++) {
    const data_manifest_line *e = &snap->e[i];
    const data_manifest_line *cur = data_manifest_find(now, e->path);
    long k, num;
    const char *p = e->path;
    if (!data_safe_rel(p) || !cur || strcmp(cur->sha256, e->sha256) != 0) {
      core_buf_printf(
          report, "%s:%ld: %s had sha256 %.12s... when stamped; %s\n", name,
          e->line, data_safe_rel(p) ? p : "(unsafe path)", e->sha256,
          !cur ? "the MANIFEST no longer lists it" : "it was changed since");
      changed++;
    } else if (strncmp(p, "batches/", 8) == 0 &&
               data_batch_name(p + 8, ".json", &num) &&
               (k = batch_version(exp, p)) > *newest) {
      *newest = k;
    }
  }
  return changed;
}

typedef struct snap_check {
  const data_experiment *exp;
  const char *ca;
  const core_stamp *vstamps; /* per version; secs 0: not stamped */
  data_manifest now;
  core_buf *report;
  long problems;
  int before_plan;
} snap_check;

/* A line saying the data stamp holds, or that it came before the plan. */
static void say_stamp(snap_check *c, const char *batch, const core_stamp *s,
                      size_t files, long k) {
  const core_stamp *v = k >= 0 ? &c->vstamps[k] : NULL;
  if (v && v->secs && s->secs < v->secs) {
    core_buf_printf(c->report,
                    "%s: DATA STAMPED BEFORE PLAN: its rows were stamped %s, "
                    "v%ld (which they were collected under) %s\n",
                    batch, s->time, k, v->time);
    c->before_plan = 1;
    return;
  }
  core_buf_printf(c->report,
                  "%s: data stamped %s by %s, %zu file%s as they were%s\n",
                  batch, s->time, s->tsa, files, files == 1 ? "" : "s",
                  s->chain_checked ? "" : " (chain not checked: no --tsa-ca)");
}

/* The snapshot's text and token, the token checked over the text. OUT:
 * *text (core_free), *len, s. CORE_EINPUT only when ca cannot be read;
 * CORE_EVERIFY for the rest, said in e. */
static core_status read_snapshot(const snap_check *c, const char *txt,
                                 const char *tok, char **text, size_t *len,
                                 core_stamp *s, core_err *e) {
  char *tsr = NULL, hex[CORE_SHA256_HEX];
  size_t tsr_len = 0;
  core_status st;
  *text = NULL;
  *len = 0;
  if (core_read_file_max(txt, BUNDLE_KEEP_MAX, 0, text, len, e) != CORE_OK ||
      core_read_file_max(tok, STAMP_REPLY_MAX, 0, &tsr, &tsr_len, e) !=
          CORE_OK) {
    e->status = CORE_EVERIFY;
    return CORE_EVERIFY;
  }
  core_sha256_hex(*text, *len, hex);
  st = core_stamp_check(tok, tsr, tsr_len, hex, NULL, c->ca, s, e);
  core_free(tsr);
  return st;
}

/* One data stamp: the token over its text, and the text's files. */
static core_status check_snapshot(snap_check *c, const char *batch,
                                  core_err *err) {
  char *txt = snapshot_path(c->exp, batch, "txt");
  char *tok = snapshot_path(c->exp, batch, "tsr");
  char *text = NULL;
  size_t len = 0;
  data_manifest snap = {0};
  core_stamp s;
  core_err e;
  long changed, k;
  core_status st = CORE_OK, got;
  if (!txt || !tok)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else if ((got = read_snapshot(c, txt, tok, &text, &len, &s, &e)) ==
           CORE_EINPUT)
    st = core_fail(err, got, "%s", e.msg);
  else if (got != CORE_OK ||
           data_manifest_parse(txt, text, len, &snap, NULL, &e) != CORE_OK) {
    core_buf_printf(c->report, "%s\n", e.msg);
    c->problems++;
  } else if ((changed = compare_snapshot(c->exp, txt, &snap, &c->now,
                                         c->report, &k)) > 0) {
    core_buf_printf(c->report,
                    "%s: %ld file%s changed since the MANIFEST was stamped "
                    "%s\n",
                    txt, changed, changed == 1 ? "" : "s", s.time);
    c->problems++;
  } else {
    say_stamp(c, batch, &s, snap.n, k);
  }
  data_manifest_free(&snap);
  core_free(text);
  core_free(txt);
  core_free(tok);
  return st;
}

/* 1 when name is a data stamp's token, or its text without a token. */
static int snapshot_of(const data_experiment *exp, const char *name,
                       char batch[16]) {
  char *tok;
  int lone;
  if (data_manifest_stamp_name(name, "tsr", batch))
    return 1;
  if (!data_manifest_stamp_name(name, "txt", batch))
    return 0;
  tok = snapshot_path(exp, batch, "tsr");
  lone = tok && !core_exists(tok);
  core_free(tok);
  return lone;
}

core_status data_manifest_stamps_verify(const data_experiment *exp,
                                        const char *ca,
                                        const core_stamp *vstamps,
                                        core_buf *report, long *problems,
                                        int *before_plan, core_err *err) {
  char *dir = core_path_join(exp->dir, DATA_STAMPS_DIR);
  char **names = NULL;
  size_t n = 0;
  core_err e;
  core_status st = CORE_OK;
  snap_check c = {exp, ca, vstamps, {0}, report, 0, 0};
  *before_plan = 0;
  if (!dir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  /* A folder or a MANIFEST that cannot be read is said by verify. */
  if (core_exists(dir) && core_list_dir(dir, &names, &n, &e) == CORE_OK &&
      data_manifest_load(exp->dir, &c.now, NULL, &e) == CORE_OK)
    for (size_t i = 0; i < n && st == CORE_OK; i++) {
      char batch[16];
      if (snapshot_of(exp, names[i], batch))
        st = check_snapshot(&c, batch, err);
    }
  data_manifest_free(&c.now);
  core_names_free(names, n);
  core_free(dir);
  *problems += c.problems;
  *before_plan = c.before_plan;
  return st;
}

/* Round orders drawn from a stamp */

/* The batch facts' order_stamp, when there is one. */
static int order_stamp_of(const data_experiment *exp, const char *rel,
                          data_order_stamp *o) {
  data_stamp_facts f;
  char want[64];
  data_stamp_facts_read(exp, rel, &f);
  if (!f.has_order_stamp)
    return 0;
  o->version = f.version;
  snprintf(o->stamp, sizeof o->stamp, "%s", f.order_stamp);
  snprintf(want, sizeof want, DATA_STAMPS_DIR "/v%ld.tsr", o->version);
  if (o->version < 0 || (size_t)o->version >= exp->n_versions ||
      strcmp(f.order_stamp, want) != 0)
    o->version = -1;
  return 1;
}

core_status data_order_stamps(const data_experiment *exp,
                              data_order_stamp **out, size_t *n,
                              core_err *err) {
  char *dir = core_path_join(exp->dir, "batches"), **names = NULL;
  size_t nn = 0, cap = 0;
  core_err e;
  core_status st = CORE_OK;
  *out = NULL;
  *n = 0;
  if (!dir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (core_exists(dir) && core_list_dir(dir, &names, &nn, &e) == CORE_OK)
    for (size_t i = 0; i < nn && st == CORE_OK; i++) {
      data_order_stamp o, *grown;
      char rel[64];
      long num;
      size_t l = strlen(names[i]);
      if (!data_batch_name(names[i], ".json", &num) || l - 5 >= 16)
        continue;
      memset(&o, 0, sizeof o);
      snprintf(o.batch, sizeof o.batch, "%.*s", (int)(l - 5), names[i]);
      snprintf(rel, sizeof rel, "batches/%s", names[i]);
      if (!order_stamp_of(exp, rel, &o))
        continue;
      if (!(grown = core_grow(*out, &cap, *n, sizeof *grown, 8)))
        st = core_fail(err, CORE_ENOMEM, "out of memory");
      else
        (*out = grown)[(*n)++] = o;
    }
  core_names_free(names, nn);
  core_free(dir);
  if (st != CORE_OK) {
    core_free(*out);
    *out = NULL;
    *n = 0;
  }
  return st;
}
