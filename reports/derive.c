/* derive.c: a report as the data give it now: rendered fresh into a
 * folder (what publish bundles), and a bundle's report checked against
 * the analysis re-derived from the bundle's own data. This sits above the
 * analysis; the integrity of the files is bundles/' (data_bundle_verify),
 * which also extracts them: reports read the copy, never the archive.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bundles/bundles.h"
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

/* The report rendered afresh from the copy's data, into DIR/report-afresh
 * (removed with the copy). OUT: *fresh (core_free). */
static core_status render_afresh(const char *sheet_path, const char *data_dir,
                                 char **fresh, core_err *err) {
  core_status st;
  if (!(*fresh = core_path_join(data_dir, "report-afresh")))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (mkdir(*fresh, 0700) != 0)
    return core_fail(err, CORE_EIO, "%s: cannot create: %s", *fresh,
                     strerror(errno));
  st = report_render_to(sheet_path, data_dir, *fresh, err);
  if (st != CORE_OK)
    core_err_prefix(err, "the report cannot be rendered afresh from the "
                         "bundle's data: ");
  return st;
}

/* The bundle's analysis, when it was extracted, against the fresh one:
 * what differs, value by value, and report.md's recorded digest. */
static core_status compare_analysis(const char *bundle, const char *data_dir,
                                    const char *id, const char *fresh,
                                    core_buf *out, size_t *problems,
                                    core_err *err) {
  size_t alen = 0, mlen = 0;
  char *analysis = read_report_file(data_dir, id, REPORT_ANALYSIS_FILE, &alen);
  char *md = read_report_file(data_dir, id, "report.md", &mlen);
  char *p = core_path_join(fresh, REPORT_ANALYSIS_FILE);
  core_buf derived;
  core_status st = CORE_OK;
  core_buf_init(&derived);
  if (!p)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  else if (analysis && (st = core_read_file(p, &derived.data, &derived.len,
                                            err)) == CORE_OK)
    st = compare(bundle, id, analysis, alen, md, &derived, out, problems, err);
  core_free(p);
  core_buf_free(&derived);
  core_free(analysis);
  core_free(md);
  return st;
}

/* Whether the bundle's report is of this renderer's edition. */
static int same_edition(const char *data_dir, const char *id) {
  size_t len = 0;
  char *text = read_report_file(data_dir, id, REPORT_FORMAT_FILE, &len);
  int same = text && len == sizeof REPORT_FORMAT_TEXT - 1 &&
             memcmp(text, REPORT_FORMAT_TEXT, len) == 0;
  core_free(text);
  return same;
}

/* Every file of the report against the one rendered afresh (*fresh):
 * byte for byte for a report of this edition, each difference a
 * problem; a report of another edition is named as not compared, its
 * analysis being checked value by value after. OUT: *same, whether the
 * files were compared byte for byte. */
static core_status compare_files(const char *bundle, const char *sheet_path,
                                 const char *data_dir, const char *id,
                                 char **fresh, core_buf *out, size_t *problems,
                                 size_t *listed, int *same, core_err *err) {
  size_t differ = 0;
  core_buf lines;
  data_compare c = {data_dir, id,      "report/", NULL, bundle,
                    &lines,   &differ, listed,    0};
  core_status st;
  core_buf_init(&lines);
  /* Counted first: a bundle without a report is not rendered. */
  st = data_bundle_compare(&c, err);
  if (st == CORE_OK && *listed &&
      (st = render_afresh(sheet_path, data_dir, fresh, err)) == CORE_OK) {
    c.fresh = *fresh;
    st = data_bundle_compare(&c, err);
  }
  /* A file that no edition renders is an addition, whatever the
   * edition says. */
  *same = same_edition(data_dir, id) || c.added;
  if (st == CORE_OK && *same && differ) {
    core_buf_append(out, lines.data, lines.len);
    *problems += differ;
  } else if (st == CORE_OK && differ) {
    core_buf_printf(out,
                    "%s: report: NOT COMPARED: rendered by another edition "
                    "of prereg (its %s is not \"%.*s\"), so %zu of its "
                    "files differ from what this prereg renders from its "
                    "data; only its analysis is checked (below); `prereg "
                    "report ",
                    bundle, REPORT_FORMAT_FILE,
                    (int)sizeof REPORT_FORMAT_TEXT - 2, REPORT_FORMAT_TEXT,
                    differ);
    core_buf_sh_quote(out, bundle, strlen(bundle));
    core_buf_puts(out, "` renders it afresh\n");
  }
  core_buf_free(&lines);
  return st;
}

core_status report_verify_bundle(const char *bundle, const char *sheet_path,
                                 const char *data_dir, core_buf *out,
                                 int *whole, core_err *err) {
  const char *slash;
  char id[256];
  char *fresh = NULL;
  size_t problems = 0, listed = 0;
  int same = 0;
  core_status st;
  *whole = 1;
  /* The sheet is DIR/ID/versions/vN.lua. */
  slash = sheet_path + strlen(data_dir) + 1;
  snprintf(id, sizeof id, "%.*s", (int)strcspn(slash, "/"), slash);
  st = compare_files(bundle, sheet_path, data_dir, id, &fresh, out, &problems,
                     &listed, &same, err);
  if (st == CORE_OK && listed)
    st = compare_analysis(bundle, data_dir, id, fresh, out, &problems, err);
  core_free(fresh);
  if (st != CORE_OK)
    return st;
  if (!listed) {
    core_buf_printf(out,
                    "%s: no report in the bundle: nothing to compare with "
                    "its data\n",
                    bundle);
    return CORE_OK;
  }
  *whole = same;
  if (problems)
    return core_fail(err, CORE_EVERIFY,
                     "%s: the report does not show what its data give (%zu "
                     "difference%s, above)",
                     bundle, problems, problems == 1 ? "" : "s");
  if (!same)
    core_buf_printf(out,
                    "%s: report: its analysis is the one its data give; its "
                    "other files were not compared (another edition of "
                    "prereg rendered them)\n",
                    bundle);
  else
    core_buf_printf(out,
                    "%s: report: every file of it is what its data give, "
                    "rendered afresh and compared byte for byte\n",
                    bundle);
  return CORE_OK;
}
