/* derive.c: a report as the data give it now: rendered fresh into a
 * folder (what publish bundles), and a bundle's report checked against
 * the analysis re-derived from the bundle's own data. This sits above the
 * analysis; the integrity of the files is data/'s (data_bundle_verify).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "reports/report.h"

core_status report_render_to(const char *sheet_path, const char *data_dir,
                             const char *dir, core_err *err) {
  proto_sheet *sheet = proto_sheet_load(sheet_path, err);
  report_input *in = NULL;
  report_doc doc;
  core_status st;
  if (!sheet)
    return err->status ? err->status : CORE_EPROTOCOL;
  if ((st = report_gather(sheet, sheet_path, data_dir, 0, &in, err)) !=
      CORE_OK)
    return st;
  if ((st = report_render(in, &doc, err)) == CORE_OK) {
    st = report_write_all(in, &doc, dir, err);
    report_doc_free(&doc);
  }
  report_input_free(in);
  return st;
}

/* `prereg analyze --json` of the data in data_dir, as text: the rows
 * streamed into the analysis, as analyze does. OUT: *json (core_buf the
 * caller frees). */
static core_status derive(const char *sheet_path, const char *data_dir,
                          core_buf *json, core_err *err) {
  proto_sheet *sheet = proto_sheet_load(sheet_path, err);
  data_experiment *exp = NULL;
  analysis_summary *sum = NULL;
  core_status st;
  if (!sheet)
    return err->status ? err->status : CORE_EPROTOCOL;
  if ((st = data_experiment_open(data_dir, sheet, &exp, err)) == CORE_OK &&
      (st = analysis_experiment(sheet, exp, 0, &sum, err)) == CORE_OK)
    st = analysis_json(sum, json, err);
  analysis_summary_free(sum);
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}

/* The digest report.md records on its "- Analysis: `analysis.json`,
 * SHA-256 `HEX`" line. OUT: hex ("" when there is none). */
static void recorded_digest(const char *md, char hex[CORE_SHA256_HEX]) {
  const char *tag = "- Analysis: `" REPORT_ANALYSIS_FILE "`, SHA-256 `";
  const char *p = md ? strstr(md, tag) : NULL;
  hex[0] = '\0';
  if (!p)
    return;
  p += strlen(tag);
  for (int i = 0; i < 64; i++)
    if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
      return;
  if (p[64] != '`')
    return;
  memcpy(hex, p, 64);
  hex[64] = '\0';
}

/* Reads DIR/ID/report/NAME whole; NULL (and *len 0) when absent. */
static char *read_report_file(const char *data_dir, const char *id,
                              const char *name, size_t *len) {
  char *path = core_asprintf("%s/%s/report/%s", data_dir, id, name);
  char *text = NULL;
  core_err e;
  *len = 0;
  if (path && core_exists(path) &&
      core_read_file(path, &text, len, &e) != CORE_OK)
    text = NULL;
  core_free(path);
  return text;
}

/* The report's analysis against the re-derived one, and report.md's
 * recorded digest against the analysis: one line per problem. */
static core_status compare(const char *bundle, const char *id,
                           const char *bundled, size_t blen, const char *md,
                           const core_buf *derived, core_buf *out,
                           size_t *problems, core_err *err) {
  char got[CORE_SHA256_HEX], rec[CORE_SHA256_HEX];
  core_buf diffs;
  size_t n = 0;
  core_status st;
  core_buf_init(&diffs);
  st = analysis_json_compare(bundled, blen, derived->data, derived->len,
                             &diffs, &n, err);
  if (st == CORE_EINPUT) {
    core_buf_printf(out, "%s: %s/report/%s: %s\n", bundle, id,
                    REPORT_ANALYSIS_FILE, err->msg);
    (*problems)++;
    memset(err, 0, sizeof *err);
    st = CORE_OK;
  }
  for (const char *p = diffs.data; st == CORE_OK && p && *p;) {
    const char *nl = strchr(p, '\n');
    core_buf_printf(out, "%s: %s/report/%s: %.*s\n", bundle, id,
                    REPORT_ANALYSIS_FILE, (int)(nl ? nl - p : (long)strlen(p)),
                    p);
    (*problems)++;
    p = nl ? nl + 1 : p + strlen(p);
  }
  core_buf_free(&diffs);
  core_sha256_hex(bundled, blen, got);
  recorded_digest(md, rec);
  if (!rec[0]) {
    core_buf_printf(out,
                    "%s: %s/report/report.md: records no analysis SHA-256, "
                    "so nothing ties it to the data\n",
                    bundle, id);
    (*problems)++;
  } else if (strcmp(rec, got) != 0) {
    core_buf_printf(out,
                    "%s: %s/report/report.md: records the analysis SHA-256 "
                    "%.12s..., but report/%s's is %.12s...\n",
                    bundle, id, rec, REPORT_ANALYSIS_FILE, got);
    (*problems)++;
  }
  return st;
}

core_status report_verify_bundle(const char *bundle, core_buf *out,
                                 core_err *err) {
  const char *sheet_path, *data_dir, *slash;
  char id[256];
  char *analysis, *md;
  size_t alen, mlen, problems = 0;
  core_buf derived;
  core_status st;
  if ((st = data_resolve_input(bundle, NULL, &sheet_path, &data_dir, NULL,
                               err)) != CORE_OK)
    return st;
  /* The sheet is DIR/ID/versions/vN.lua. */
  slash = sheet_path + strlen(data_dir) + 1;
  snprintf(id, sizeof id, "%.*s", (int)strcspn(slash, "/"), slash);
  analysis = read_report_file(data_dir, id, REPORT_ANALYSIS_FILE, &alen);
  md = read_report_file(data_dir, id, "report.md", &mlen);
  if (!analysis && !md) {
    core_buf_printf(out,
                    "%s: no report in the bundle: nothing to compare with "
                    "its data\n",
                    bundle);
    return CORE_OK;
  }
  if (!analysis) {
    core_buf_printf(out,
                    "%s: %s/report/%s: missing, so the report cannot show "
                    "which analysis it was rendered from\n",
                    bundle, id, REPORT_ANALYSIS_FILE);
    core_free(md);
    return core_fail(err, CORE_EVERIFY, "%s: %s/report/%s is missing", bundle,
                     id, REPORT_ANALYSIS_FILE);
  }
  core_buf_init(&derived);
  if ((st = derive(sheet_path, data_dir, &derived, err)) == CORE_OK)
    st =
        compare(bundle, id, analysis, alen, md, &derived, out, &problems, err);
  core_buf_free(&derived);
  core_free(analysis);
  core_free(md);
  if (st != CORE_OK)
    return st;
  if (problems)
    return core_fail(err, CORE_EVERIFY,
                     "%s: the report does not show what its data give (%zu "
                     "difference%s, above)",
                     bundle, problems, problems == 1 ? "" : "s");
  core_buf_printf(out,
                  "%s: report: its analysis is the one its data give, and "
                  "report.md records its digest\n",
                  bundle);
  return CORE_OK;
}
