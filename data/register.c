/* register.c: a sheet's version filed in its experiment's folder (register,
 * amend) under the experiment's lock, with the files of its stamp and
 * signature, and the check that data are collected only under the
 * registered sheet (data_check_lock).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data_internal.h"

/* How much of a diff the lock's message shows: the message must stay
 * readable, and core_err holds 4096 bytes. */
#define LOCK_DIFF_LINES 40
#define LOCK_DIFF_BYTES 2800
#define LOCK_LINE_BYTES 110

/* Writing versions */

static json_t *amendments_json(const proto_sheet *s) {
  json_t *arr = json_array();
  for (size_t i = 0; arr && i < s->n_amendments; i++) {
    json_t *o = json_object(), *sup = json_array();
    const proto_amendment *a = &s->amendments[i];
    for (size_t j = 0; sup && j < a->n_supersedes; j++)
      json_array_append_new(sup, json_string(a->supersedes[j]));
    json_object_set_new(o, "date", json_string(a->date ? a->date : ""));
    json_object_set_new(o, "why", json_string(a->why ? a->why : ""));
    json_object_set_new(o, "supersedes", sup);
    json_array_append_new(arr, o);
  }
  return arr;
}

/* The data state when a version is filed: runs per workload and arm,
 * counted without a plan (every valid run not superseded counts): what
 * existed, whatever the sheet then planned. */
static core_status data_state_json(const data_experiment *exp, json_t **out,
                                   core_err *err) {
  data_rowset rows;
  data_counted c;
  long valid = 0, invalid = 0;
  json_t *runs, *o;
  core_status st = data_load_rows(exp, &rows, err);
  if (st != CORE_OK)
    return st;
  st = data_count_rows(
      NULL, exp,
      exp->n_versions ? exp->versions[exp->n_versions - 1].number : 0, &rows,
      &c, err);
  data_rowset_free(&rows);
  if (st != CORE_OK)
    return st;
  runs = json_array();
  for (size_t i = 0; i < c.n_tallies; i++) {
    const data_tally *t = &c.tallies[i];
    json_t *r = json_object();
    json_object_set_new(r, "workload", json_string(t->workload));
    json_object_set_new(r, "arm", json_string(t->arm));
    json_object_set_new(r, "valid", json_integer(t->counted));
    json_object_set_new(r, "invalid", json_integer(t->invalid));
    json_object_set_new(r, "superseded", json_integer(t->superseded));
    json_array_append_new(runs, r);
    valid += t->counted;
    invalid += t->invalid;
  }
  data_counted_free(&c);
  o = json_object();
  json_object_set_new(o, "runs_valid", json_integer(valid));
  json_object_set_new(o, "runs_invalid", json_integer(invalid));
  json_object_set_new(o, "runs_total", json_integer(valid + invalid));
  json_object_set_new(o, "runs", runs);
  *out = o;
  return CORE_OK;
}

/* The text versions/vK.json holds (what a stamp covers). OUT: *text
 * newly allocated (core_free), *len. */
static core_status json_text(const char *path, json_t *root, char **text,
                             size_t *len, core_err *err) {
  char *t = data_json_dump_flags(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  *text = t ? core_asprintf("%s\n", t) : NULL;
  core_free(t);
  if (!*text)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
  *len = strlen(*text);
  return CORE_OK;
}

/* Inputs */

/* The inputs of sheet for a version to record: every listed path must
 * be there. OUT: *in (data_inputs_free). */
static core_status inputs_to_record(const proto_sheet *sheet, data_inputs *in,
                                    core_err *err) {
  core_status st = data_inputs_scan(sheet, in, err);
  for (size_t i = 0; st == CORE_OK && i < in->n; i++)
    if (!in->v[i].sha256[0])
      st = core_fail(err, CORE_EPROTOCOL,
                     "%s: inputs: %s is not in the sheet's folder %s; "
                     "inputs are named relative to it",
                     sheet->path, in->v[i].path, sheet->sheet_dir);
  if (st != CORE_OK)
    data_inputs_free(in);
  else
    data_inputs_mark_copies(in);
  return st;
}

/* The files the sheet's commands read by absolute path, which the lock
 * does not cover, recorded for the report to name; 0 when out of
 * memory. */
static int put_unlocked(json_t *root, const proto_sheet *sheet) {
  core_buf warn = {0};
  data_paths abs = {0};
  json_t *arr;
  int ok;
  data_unlocked_scan(sheet, &warn, &abs);
  ok = !warn.oom;
  core_buf_free(&warn);
  if (ok && abs.n && (arr = json_array())) {
    for (size_t i = 0; i < abs.n; i++)
      json_array_append_new(arr, json_string(abs.v[i]));
    json_object_set_new(root, "unlocked", arr);
  }
  if (ok && abs.more)
    json_object_set_new(root, "unlocked_more",
                        json_integer((json_int_t)abs.more));
  data_paths_free(&abs);
  return ok;
}

static json_t *inputs_json(const data_inputs *in) {
  json_t *arr = json_array();
  for (size_t i = 0; arr && i < in->n; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(in->v[i].path));
    json_object_set_new(o, "sha256", json_string(in->v[i].sha256));
    json_object_set_new(o, "bytes", json_integer(in->v[i].bytes));
    if (in->v[i].by_digest)
      json_object_set_new(o, "copied", json_false());
    json_array_append_new(arr, o);
  }
  return arr;
}

/* One input copied to inputs/vK/PATH of the data folder, checked against
 * the digest the version records; *rel: its MANIFEST path. */
static core_status copy_input(data_experiment *exp, const proto_sheet *sheet,
                              size_t k, const data_input *in, char **rel,
                              core_err *err) {
  char *src = core_path_join(sheet->sheet_dir, in->path), *text = NULL;
  char *dst = core_asprintf("%s/inputs/v%zu/%s", exp->dir, k, in->path);
  char hex[CORE_SHA256_HEX], *slash;
  size_t len = 0;
  core_status st;
  *rel = core_asprintf("inputs/v%zu/%s", k, in->path);
  if (!src || !dst || !*rel) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto done;
  }
  if ((st = core_read_file_max(src, (size_t)in->bytes, 0, &text, &len, err)) !=
      CORE_OK)
    goto done;
  core_sha256_hex(text, len, hex);
  if (strcmp(hex, in->sha256) != 0) {
    st = core_fail(err, CORE_EPROTOCOL,
                   "%s: inputs: %s changed while it was being recorded; "
                   "run the command again",
                   sheet->path, in->path);
    goto done;
  }
  slash = strrchr(dst, '/');
  *slash = '\0';
  st = core_mkdir_p(dst, 0755, err);
  *slash = '/';
  if (st == CORE_OK)
    st = core_write_file_atomic(dst, text, len, 0444, err);
done:
  core_free(text);
  core_free(src);
  core_free(dst);
  return st;
}

/* The copies of a version's inputs, so that the data folder and its
 * bundle carry the procedure as registered. OUT: *rel their MANIFEST
 * paths after the n_rel given (grown; the caller frees them). */
static core_status copy_inputs(data_experiment *exp, const proto_sheet *sheet,
                               size_t k, const data_inputs *in, char ***rel,
                               size_t *n_rel, core_err *err) {
  char **nv;
  core_status st = CORE_OK;
  if (!in || in->n == 0)
    return CORE_OK;
  if (!(nv = core_realloc(*rel, (*n_rel + in->n) * sizeof *nv)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  *rel = nv;
  for (size_t i = 0; i < in->n && st == CORE_OK; i++) {
    if (in->v[i].by_digest)
      continue;
    nv[*n_rel] = NULL;
    st = copy_input(exp, sheet, k, &in->v[i], &nv[*n_rel], err);
    (*n_rel)++;
  }
  return st;
}

/* A version's stamp and signature, as files */

/* DIR/vK.EXT of exp, read-only, DIR made when missing. */
static core_status version_file_write(const data_experiment *exp,
                                      const char *dir_name, int k,
                                      const char *ext, const void *bytes,
                                      size_t len, core_err *err) {
  char *dir = core_path_join(exp->dir, dir_name);
  char *path = core_asprintf("%s/v%d.%s", dir ? dir : "", k, ext);
  core_status st;
  if (!dir || !path)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else if ((st = core_mkdir_p(dir, 0755, err)) == CORE_OK)
    st = core_write_file_atomic(path, bytes, len, 0444, err);
  core_free(dir);
  core_free(path);
  return st;
}

core_status data_stamp_write(const data_experiment *exp, int k,
                             const void *tsr, size_t len, core_err *err) {
  core_status st =
      version_file_write(exp, DATA_STAMPS_DIR, k, "tsr", tsr, len, err);
  char *tsq = core_asprintf("%s/" DATA_STAMPS_DIR "/v%d.tsq", exp->dir, k);
  if (st == CORE_OK && !tsq)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else if (st == CORE_OK && unlink(tsq) != 0 && errno != ENOENT)
    st = core_fail(err, CORE_EIO, "%s: cannot remove: %s", tsq,
                   strerror(errno));
  core_free(tsq);
  return st;
}

core_status data_sign_write(const data_experiment *exp, int k, const void *sig,
                            size_t len, core_err *err) {
  return version_file_write(exp, DATA_SIGNATURES_DIR, k, "sig", sig, len, err);
}

/* A stamp of the version's record before anything is written: a TSA
 * that cannot be reached or refuses leaves nothing registered. OUT:
 * *tsr (core_free; NULL without a stamper), *len; rel gets its path. */
static core_status take_stamp(const data_stamper *stamper, size_t k,
                              const char *text, size_t text_len, char **tsr,
                              size_t *len, char **rel, size_t *n_rel,
                              core_err *err) {
  char hex[CORE_SHA256_HEX];
  *tsr = NULL;
  *len = 0;
  if (!stamper || !stamper->fn)
    return CORE_OK;
  core_sha256_hex(text, text_len, hex);
  if (!(rel[(*n_rel)++] = core_asprintf(DATA_STAMPS_DIR "/v%zu.tsr", k)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return stamper->fn(stamper->ctx, (int)k, hex, tsr, len, err);
}

/* The record signed, before anything is written. OUT: as take_stamp. */
static core_status take_signature(const data_stamper *stamper, size_t k,
                                  const char *text, size_t text_len,
                                  char **sig, size_t *len, char **rel,
                                  size_t *n_rel, core_err *err) {
  *sig = NULL;
  *len = 0;
  if (!stamper || !stamper->sign)
    return CORE_OK;
  if (!(rel[(*n_rel)++] = core_asprintf(DATA_SIGNATURES_DIR "/v%zu.sig", k)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return stamper->sign(stamper->ctx, text, text_len, sig, len, err);
}

/* Writes versions/vK.lua (+ .diff) + .json (and its stamp) and lists
 * them in the MANIFEST. The .json goes last: a version exists once its
 * .json does, so a crash before that leaves the chain as it was. */
static core_status file_version(data_experiment *exp, const proto_sheet *sheet,
                                size_t k, const char *diff,
                                const data_inputs *in, json_t *root,
                                const data_stamper *stamper, core_err *err) {
  char *vdir = core_path_join(exp->dir, "versions");
  char *lua = core_asprintf("%s/versions/v%zu.lua", exp->dir, k);
  char *dif = core_asprintf("%s/versions/v%zu.diff", exp->dir, k);
  char *js = core_asprintf("%s/versions/v%zu.json", exp->dir, k);
  char **rel = core_calloc(5, sizeof *rel);
  char *text = NULL, *tsr = NULL, *sig = NULL;
  size_t n_rel = 0, text_len = 0, tsr_len = 0, sig_len = 0;
  core_status st = CORE_OK;
  if (rel) {
    rel[n_rel++] = core_asprintf("versions/v%zu.lua", k);
    if (diff)
      rel[n_rel++] = core_asprintf("versions/v%zu.diff", k);
    rel[n_rel++] = core_asprintf("versions/v%zu.json", k);
  }
  if (!vdir || !lua || !dif || !js || !rel || !rel[0] || !rel[1] ||
      (diff && !rel[2])) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  if ((st = json_text(js, root, &text, &text_len, err)) != CORE_OK ||
      (st = take_stamp(stamper, k, text, text_len, &tsr, &tsr_len, rel, &n_rel,
                       err)) != CORE_OK ||
      (st = take_signature(stamper, k, text, text_len, &sig, &sig_len, rel,
                           &n_rel, err)) != CORE_OK)
    goto cleanup;
  if ((st = core_mkdir_p(vdir, 0755, err)) != CORE_OK)
    goto cleanup;
  if ((st = core_write_file_atomic(lua, sheet->text, sheet->text_len, 0444,
                                   err)) != CORE_OK)
    goto cleanup;
  if (diff && (st = core_write_file_atomic(dif, diff, strlen(diff), 0444,
                                           err)) != CORE_OK)
    goto cleanup;
  if ((tsr &&
       (st = data_stamp_write(exp, (int)k, tsr, tsr_len, err)) != CORE_OK) ||
      (sig &&
       (st = data_sign_write(exp, (int)k, sig, sig_len, err)) != CORE_OK))
    goto cleanup;
  if ((st = copy_inputs(exp, sheet, k, in, &rel, &n_rel, err)) != CORE_OK)
    goto cleanup;
  if ((st = core_write_file_atomic(js, text, text_len, 0444, err)) != CORE_OK)
    goto cleanup;
  st = data_manifest_add(exp->dir, rel, n_rel, err);
  if (st == CORE_OK)
    st = data_load_chain(exp, err);
cleanup:
  core_free(text);
  core_free(tsr);
  core_free(sig);
  core_free(vdir);
  core_free(lua);
  core_free(dif);
  core_free(js);
  core_names_free(rel, n_rel);
  return st;
}

static const char *sheet_name(const proto_sheet *s) {
  return s->path ? s->path : "sheet";
}

core_status data_register(data_experiment *exp, const proto_sheet *sheet,
                          int *already, core_err *err) {
  return data_register_stamped(exp, sheet, NULL, already, err);
}

core_status data_register_stamped(data_experiment *exp,
                                  const proto_sheet *sheet,
                                  const data_stamper *stamper, int *already,
                                  core_err *err) {
  json_t *root, *state = NULL;
  data_inputs in;
  char now[32];
  core_status st;
  *already = 0;
  /* Bad inputs are refused before anything is written. */
  if ((st = inputs_to_record(sheet, &in, err)) != CORE_OK)
    return st;
  if ((st = data_experiment_lock(exp, err)) != CORE_OK) {
    data_inputs_free(&in);
    return st;
  }
  if (exp->n_versions > 0) {
    const data_version *last = &exp->versions[exp->n_versions - 1];
    data_inputs_free(&in);
    if (strcmp(last->sha256, sheet->sha256) == 0) {
      *already = 1;
      return CORE_OK;
    }
    return core_fail(
        err, CORE_ELOCK,
        "%s: a different sheet is already registered under id '%s' (v%d, "
        "sha256 %.12s, filed %s); to change it, append an entry to "
        "`amendments` saying why, then run: prereg amend %s; to start a "
        "new experiment, give the sheet a new id",
        sheet_name(sheet), exp->id, last->number, last->sha256, last->filed_at,
        sheet_name(sheet));
  }
  if ((st = data_state_json(exp, &state, err)) != CORE_OK) {
    data_inputs_free(&in);
    return st;
  }
  core_utc_now(now);
  root = json_object();
  json_object_set_new(root, "version", json_integer(0));
  json_object_set_new(root, "id", json_string(exp->id));
  json_object_set_new(root, "sheet", json_string("versions/v0.lua"));
  json_object_set_new(root, "sha256", json_string(sheet->sha256));
  json_object_set_new(root, "filed_at", json_string(now));
  json_object_set_new(root, "prereg_version", json_string(PREREG_VERSION));
  json_object_set_new(root, "source", json_string(sheet_name(sheet)));
  json_object_set_new(root, "amendments", amendments_json(sheet));
  if (in.n)
    json_object_set_new(root, "inputs", inputs_json(&in));
  put_unlocked(root, sheet);
  json_object_set_new(root, "data", state);
  st = file_version(exp, sheet, 0, NULL, &in, root, stamper, err);
  json_decref(root);
  data_inputs_free(&in);
  return st;
}

static int same_str(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") == 0;
}

static int same_amendment(const data_amendment *r, const proto_amendment *a) {
  if (!same_str(r->date, a->date) || !same_str(r->why, a->why) ||
      r->n_supersedes != a->n_supersedes)
    return 0;
  for (size_t j = 0; j < r->n_supersedes; j++)
    if (!same_str(r->supersedes[j], a->supersedes[j]))
      return 0;
  return 1;
}

/* The first version whose list holds amendment i (for messages). */
static int recorded_in(const data_experiment *exp, size_t i) {
  for (size_t k = 0; k < exp->n_versions; k++)
    if (exp->versions[k].n_amendments > i)
      return exp->versions[k].number;
  return (int)exp->n_versions - 1;
}

/* Reads the newest frozen text and diffs it against the sheet. */
static char *diff_against(const data_experiment *exp, const data_version *v,
                          const char *text, size_t len, const char *label_b,
                          core_err *err) {
  char *path = core_path_join(exp->dir, v->path);
  char *old = NULL, *diff = NULL;
  size_t old_len = 0;
  char label_a[64];
  if (!path) {
    core_fail(err, CORE_ENOMEM, "out of memory");
    return NULL;
  }
  if (core_read_file(path, &old, &old_len, err) == CORE_OK) {
    snprintf(label_a, sizeof label_a, "versions/v%d.lua", v->number);
    diff = core_unified_diff(old, old_len, text, len, label_a, label_b);
    if (!diff)
      core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_free(old);
  core_free(path);
  return diff;
}

/* Appends at most LOCK_DIFF_LINES lines of diff, each cut to a readable
 * width, to b. */
static void put_capped_diff(core_buf *b, const char *diff) {
  size_t shown = 0, total = 0;
  const char *p = diff;
  for (const char *q = diff; *q; q++)
    if (*q == '\n')
      total++;
  while (*p && shown < LOCK_DIFF_LINES && b->len < LOCK_DIFF_BYTES) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    core_buf_puts(b, "  ");
    if (len > LOCK_LINE_BYTES) {
      core_buf_append(b, p, LOCK_LINE_BYTES);
      core_buf_puts(b, "...");
    } else {
      core_buf_append(b, p, len);
    }
    core_buf_puts(b, "\n");
    shown++;
    p = nl ? nl + 1 : p + len;
  }
  if (shown < total)
    core_buf_printf(b, "  ... (%zu more diff lines)\n", total - shown);
}

/* The sheet's inputs against those its version recorded: a file changed,
 * missing or added is refused like a changed sheet, naming each. A sheet
 * read from text (a frozen version) has no folder and nothing to compare:
 * its inputs are the copies the data folder keeps. */
/* 1 when the sheet is one of exp's own frozen versions (DIR/ID/versions/
 * vN.lua: a bundle's sheet, read from its extracted copy), whose inputs
 * are the copies under DIR/ID/inputs/ that verify checks, not files
 * beside it. */
static int frozen_version(const data_experiment *exp,
                          const proto_sheet *sheet) {
  char *versions = core_asprintf("%s/versions", exp->dir);
  struct stat a, b;
  int same = versions && sheet->sheet_dir && stat(versions, &a) == 0 &&
             stat(sheet->sheet_dir, &b) == 0 && a.st_dev == b.st_dev &&
             a.st_ino == b.st_ino;
  core_free(versions);
  return same;
}

static core_status inputs_lock(const data_experiment *exp,
                               const data_version *last,
                               const proto_sheet *sheet, core_err *err) {
  data_inputs cur;
  core_buf b;
  core_status st;
  if (!sheet->sheet_dir || (!sheet->n_inputs && !last->n_inputs) ||
      frozen_version(exp, sheet))
    return CORE_OK;
  if ((st = data_inputs_scan(sheet, &cur, err)) != CORE_OK)
    return st;
  core_buf_init(&b);
  core_buf_printf(&b, "%s: its inputs differ from those of version v%d:\n",
                  sheet_name(sheet), last->number);
  if (data_inputs_diff(last->inputs, last->n_inputs, &cur, &b) > 0)
    st = core_fail(err, CORE_ELOCK,
                   "%sthe lock covers the inputs like the sheet: append an "
                   "entry to `amendments` saying why, then run: prereg "
                   "amend %s",
                   b.data ? b.data : "", sheet_name(sheet));
  core_buf_free(&b);
  data_inputs_free(&cur);
  return st;
}

core_status data_check_lock(const data_experiment *exp,
                            const proto_sheet *sheet, core_err *err) {
  const data_version *last;
  char *diff;
  core_buf b;
  core_status st;
  if (exp->n_versions == 0)
    return core_fail(err, CORE_ELOCK,
                     "%s: not registered; run prereg register %s",
                     sheet_name(sheet), sheet_name(sheet));
  last = &exp->versions[exp->n_versions - 1];
  if (strcmp(last->sha256, sheet->sha256) == 0)
    return inputs_lock(exp, last, sheet, err);
  if (!(diff = diff_against(exp, last, sheet->text, sheet->text_len,
                            sheet_name(sheet), err)))
    return err ? err->status : CORE_EIO;
  core_buf_init(&b);
  core_buf_printf(&b, "%s: differs from registered version v%d:\n",
                  sheet_name(sheet), last->number);
  put_capped_diff(&b, diff);
  core_buf_printf(&b,
                  "append an entry to `amendments` saying why, then run: "
                  "prereg amend %s",
                  sheet_name(sheet));
  st = core_fail(err, CORE_ELOCK, "%s", b.data ? b.data : "");
  core_buf_free(&b);
  core_free(diff);
  return st;
}

/* The sheet's amendments are last's, unchanged, plus exactly one new
 * one; otherwise the message names what is wrong (now: the date to
 * suggest). */
static core_status check_new_amendment(const data_experiment *exp,
                                       const data_version *last,
                                       const proto_sheet *sheet,
                                       const char *now, core_err *err) {
  const char *name = sheet_name(sheet);
  char *diff;
  size_t common;
  core_status st;
  /* Amendments are appended, never edited: compare the recorded list
   * entry by entry before anything else, so the message names the one
   * that changed. */
  common = last->n_amendments < sheet->n_amendments ? last->n_amendments
                                                    : sheet->n_amendments;
  for (size_t i = 0; i < common; i++)
    if (!same_amendment(&last->amendments[i], &sheet->amendments[i]))
      return core_fail(
          err, CORE_EINPUT,
          "%s:%d: amendments[%zu] (dated %s) differs from the one recorded "
          "in v%d (dated %s: \"%s\"); amendments are appended, never edited "
          "or reordered: restore it and add a new entry at the end",
          name, sheet->amendments[i].line, i + 1,
          sheet->amendments[i].date ? sheet->amendments[i].date : "?",
          recorded_in(exp, i), last->amendments[i].date,
          last->amendments[i].why);
  if (sheet->n_amendments < last->n_amendments)
    return core_fail(err, CORE_EINPUT,
                     "%s: amendments[%zu] (dated %s: \"%s\"), recorded in "
                     "v%d, was removed; amendments are never removed: "
                     "restore it",
                     name, common + 1, last->amendments[common].date,
                     last->amendments[common].why, recorded_in(exp, common));
  if (sheet->n_amendments == last->n_amendments) {
    core_buf b;
    if (!(diff = diff_against(exp, last, sheet->text, sheet->text_len, name,
                              err)))
      return err ? err->status : CORE_EIO;
    core_buf_init(&b);
    core_buf_printf(&b,
                    "%s: the text differs from v%d but no amendment was "
                    "added:\n",
                    name, last->number);
    put_capped_diff(&b, diff);
    core_buf_printf(&b,
                    "append to `amendments` an entry saying why, { date = "
                    "\"%.10s\", why = \"what changed and why\" }, then run "
                    "prereg amend again",
                    now);
    st = core_fail(err, CORE_EINPUT, "%s", b.data ? b.data : "");
    core_buf_free(&b);
    core_free(diff);
    return st;
  }
  if (sheet->n_amendments > last->n_amendments + 1)
    return core_fail(err, CORE_EINPUT,
                     "%s:%d: %zu new amendments; prereg amend records "
                     "exactly one at a time: keep only the first new one, "
                     "amend, then add the next",
                     name, sheet->amendments[last->n_amendments].line,
                     sheet->n_amendments - last->n_amendments);
  return CORE_OK;
}

core_status data_amend(data_experiment *exp, const proto_sheet *sheet,
                       core_err *err) {
  return data_amend_stamped(exp, sheet, NULL, err);
}

core_status data_amend_stamped(data_experiment *exp, const proto_sheet *sheet,
                               const data_stamper *stamper, core_err *err) {
  const data_version *last;
  const char *name = sheet_name(sheet);
  const proto_amendment *na;
  char *diff = NULL, *shown = NULL;
  char label_b[64], now[32];
  json_t *root, *state = NULL, *sup;
  data_inputs in;
  size_t k;
  core_status st;
  if (exp->n_versions == 0)
    return core_fail(err, CORE_ELOCK,
                     "%s: not registered; run prereg register %s", name, name);
  if ((st = data_experiment_lock(exp, err)) != CORE_OK)
    return st;
  last = &exp->versions[exp->n_versions - 1];
  /* What is wrong below is the sheet given (bad input, exit 2): an
   * amendment missing, edited, removed or more than one. */
  core_utc_now(now);
  if (strcmp(last->sha256, sheet->sha256) == 0)
    return core_fail(err, CORE_EINPUT,
                     "%s: identical to version v%d; nothing to amend. To "
                     "change the protocol, edit the sheet and append to "
                     "`amendments` an entry { date = \"%.10s\", why = \"what "
                     "changed and why\" } (with supersedes = { \"WORKLOAD\" } "
                     "when earlier rows stop counting), then run prereg "
                     "amend %s",
                     name, last->number, now, name);
  if ((st = check_new_amendment(exp, last, sheet, now, err)) != CORE_OK)
    return st;
  k = exp->n_versions;
  na = &sheet->amendments[sheet->n_amendments - 1];
  snprintf(label_b, sizeof label_b, "versions/v%zu.lua", k);
  if (!(diff = diff_against(exp, last, sheet->text, sheet->text_len, label_b,
                            err)))
    return err ? err->status : CORE_EIO;
  if ((st = inputs_to_record(sheet, &in, err)) != CORE_OK) {
    core_free(diff);
    return st;
  }
  if ((st = data_state_json(exp, &state, err)) != CORE_OK) {
    data_inputs_free(&in);
    core_free(diff);
    return st;
  }
  core_utc_now(now);
  sup = json_array();
  for (size_t j = 0; j < na->n_supersedes; j++)
    json_array_append_new(sup, json_string(na->supersedes[j]));
  root = json_object();
  json_object_set_new(root, "version", json_integer((json_int_t)k));
  json_object_set_new(root, "id", json_string(exp->id));
  json_object_set_new(root, "sheet", json_string(label_b));
  json_object_set_new(root, "sha256", json_string(sheet->sha256));
  json_object_set_new(root, "previous_sha256", json_string(last->sha256));
  json_object_set_new(root, "filed_at", json_string(now));
  json_object_set_new(root, "prereg_version", json_string(PREREG_VERSION));
  json_object_set_new(root, "source", json_string(name));
  json_object_set_new(root, "date", json_string(na->date ? na->date : ""));
  json_object_set_new(root, "why", json_string(na->why ? na->why : ""));
  json_object_set_new(root, "supersedes", sup);
  shown = core_asprintf("versions/v%zu.diff", k);
  json_object_set_new(root, "diff", json_string(shown ? shown : ""));
  json_object_set_new(root, "amendments", amendments_json(sheet));
  if (in.n)
    json_object_set_new(root, "inputs", inputs_json(&in));
  put_unlocked(root, sheet);
  json_object_set_new(root, "data", state);
  st = file_version(exp, sheet, k, diff, &in, root, stamper, err);
  json_decref(root);
  data_inputs_free(&in);
  core_free(shown);
  core_free(diff);
  return st;
}
