/* html.c: report.html, rendered from report.md by cmark-gfm with its
 * table extension in safe mode, wrapped in a standalone page, with the
 * forest plots embedded as data: URIs.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <cmark-gfm_version.h>

#include "reports/report.h"
#include "reports/report_internal.h"

const char *report_cmark_version(void) {
  return CMARK_GFM_VERSION_STRING;
}

/* Readable on screen, printable on paper: tables never split a row and
 * plots never split, headings stay with what follows. */
static const char stylesheet[] =
    "body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;"
    "max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;"
    "line-height:1.5}\n"
    "h1{font-size:1.9rem;border-bottom:2px solid #1f4e79;padding-bottom:"
    ".3rem}\n"
    "h2{font-size:1.4rem;margin-top:2.2rem;border-bottom:1px solid #ccc}\n"
    "h3{font-size:1.1rem;margin-top:1.6rem}\n"
    "table{border-collapse:collapse;margin:.8rem 0;font-size:.92rem}\n"
    "th,td{border:1px solid #c8c8c8;padding:.25rem .6rem;vertical-align:"
    "top}\n"
    "th{background:#eef2f7}\n"
    "tr:nth-child(even) td{background:#fafafa}\n"
    "code{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;"
    "font-size:.85em;word-break:break-all}\n"
    "pre{background:#f6f8fa;padding:.7rem;overflow-x:auto;border:1px solid "
    "#e1e4e8}\n"
    "blockquote{border-left:6px solid #b00020;background:#fdecea;margin:1rem"
    " 0;padding:.5rem 1rem}\n"
    "img{max-width:100%;height:auto}\n"
    ".unverified{background:#b00020;color:#fff;font-weight:bold;padding:"
    ".4rem 1rem;text-align:center;letter-spacing:.1em}\n"
    "@media print{body{max-width:none;margin:0;font-size:10pt}"
    "h2,h3{break-after:avoid}tr,img,pre{break-inside:avoid}"
    "a{color:inherit;text-decoration:none}"
    ".unverified{position:fixed;top:0;left:0;right:0}}\n";

static void base64(core_buf *b, const unsigned char *p, size_t n) {
  static const char tab[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char q[4];
  size_t i;
  for (i = 0; i + 2 < n; i += 3) {
    q[0] = tab[p[i] >> 2];
    q[1] = tab[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
    q[2] = tab[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)];
    q[3] = tab[p[i + 2] & 63];
    core_buf_append(b, q, 4);
  }
  if (i < n) {
    q[0] = tab[p[i] >> 2];
    if (i + 1 < n) {
      q[1] = tab[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
      q[2] = tab[(p[i + 1] & 15) << 2];
    } else {
      q[1] = tab[(p[i] & 3) << 4];
      q[2] = '=';
    }
    q[3] = '=';
    core_buf_append(b, q, 4);
  }
}

/* Renders Markdown (GFM with tables, safe mode) into a standalone HTML
 * page with an embedded stylesheet; each plot's file name in an <img
 * src="..."> is replaced by a data: URI of its SVG. title is escaped. */
static core_status md_to_html(const char *md, size_t md_len, const char *title,
                              const report_plot *plots, size_t n_plots,
                              core_buf *html, core_err *err) {
  cmark_parser *parser;
  cmark_syntax_extension *table;
  cmark_node *doc;
  char *body;
  const char *p;
  /* Safe mode: CMARK_OPT_DEFAULT never lets raw HTML or javascript: links
   * through, and everything in the report that is not ours comes from a
   * sheet or a data file. */
  const int opts = CMARK_OPT_DEFAULT | CMARK_OPT_VALIDATE_UTF8;
  cmark_gfm_core_extensions_ensure_registered();
  table = cmark_find_syntax_extension("table");
  if (!table)
    return core_fail(err, CORE_EMARKDOWN,
                     "cmark-gfm has no table extension (libcmark-gfm-"
                     "extensions %s)",
                     CMARK_GFM_VERSION_STRING);
  parser = cmark_parser_new(opts);
  if (!cmark_parser_attach_syntax_extension(parser, table)) {
    cmark_parser_free(parser);
    return core_fail(err, CORE_EMARKDOWN,
                     "cannot attach cmark-gfm's table extension");
  }
  cmark_parser_feed(parser, md, md_len);
  doc = cmark_parser_finish(parser);
  if (!doc) {
    cmark_parser_free(parser);
    return core_fail(err, CORE_EMARKDOWN,
                     "cmark-gfm could not parse the "
                     "report's Markdown");
  }
  body =
      cmark_render_html(doc, opts, cmark_parser_get_syntax_extensions(parser));
  cmark_node_free(doc);
  cmark_parser_free(parser);
  if (!body)
    return core_fail(err, CORE_EMARKDOWN, "cmark-gfm rendered nothing");

  core_buf_puts(html, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                      "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
                      "content=\"width=device-width, initial-scale=1\">\n"
                      "<meta name=\"generator\" content=\"" PREREG_NAME
                      " " PREREG_VERSION "\">\n<title>");
  report_html_escape(html, title);
  core_buf_puts(html, "</title>\n<style>\n");
  core_buf_puts(html, stylesheet);
  core_buf_puts(html, "</style>\n</head>\n<body>\n");
  if (strstr(body, "<strong>UNVERIFIED.</strong>"))
    core_buf_puts(html, "<div class=\"unverified\">UNVERIFIED</div>\n");
  /* Plots: cmark's safe mode keeps only data:image/png|gif|jpeg|webp
   * URIs, so an SVG data: URI written in the Markdown would lose its src.
   * The Markdown links each plot by file name instead (report.md works
   * next to the .svg files) and here the exact attribute src="FILE" of
   * our own files is swapped for the data: URI. cmark escapes every '"'
   * that comes from text, so the literal attribute can only be ours. */
  p = body;
  for (;;) {
    const char *hit = strstr(p, "<img src=\"");
    size_t k;
    if (!hit) {
      core_buf_puts(html, p);
      break;
    }
    hit += strlen("<img src=\"");
    core_buf_append(html, p, (size_t)(hit - p));
    p = hit;
    for (k = 0; k < n_plots; k++) {
      size_t fl = strlen(plots[k].file);
      if (strncmp(p, plots[k].file, fl) == 0 && p[fl] == '"') {
        core_buf_puts(html, "data:image/svg+xml;base64,");
        base64(html, (const unsigned char *)plots[k].svg, plots[k].svg_len);
        p += fl;
        break;
      }
    }
  }
  core_buf_puts(html, "</body>\n</html>\n");
  cmark_get_default_mem_allocator()->free(body);
  if (html->oom)
    return core_fail(err, CORE_ENOMEM, "out of memory rendering HTML");
  return CORE_OK;
}

/* {==== The whole document ==== */

static char *plot_file(size_t k, const char *w, const char *m) {
  core_buf b;
  core_buf_init(&b);
  core_buf_printf(&b, "plot-%zu-", k);
  /* File names from sheet names: only [A-Za-z0-9_-] survive. */
  for (const char *s = w; *s; s++)
    core_buf_puts(&b, (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                              (*s >= '0' && *s <= '9') || *s == '_' ||
                              *s == '-'
                          ? (char[]){*s, 0}
                          : "_");
  core_buf_puts(&b, "-");
  for (const char *s = m; *s; s++)
    core_buf_puts(&b, (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                              (*s >= '0' && *s <= '9') || *s == '_' ||
                              *s == '-'
                          ? (char[]){*s, 0}
                          : "_");
  core_buf_puts(&b, ".svg");
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return core_buf_steal(&b);
}

core_status report_render(const report_input *in, report_doc *doc,
                          core_err *err) {
  const proto_sheet *s = in->sheet;
  const analysis_summary *a = in->summary;
  core_buf md, html;
  core_status st;
  size_t cap = 0;
  memset(doc, 0, sizeof *doc);
  for (size_t w = 0; w < s->n_workloads; w++)
    cap += s->workloads[w].n_metrics;
  doc->plots = core_calloc(cap ? cap : 1, sizeof *doc->plots);
  if (!doc->plots)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  /* One plot per workload and metric that has at least one comparison. */
  for (size_t w = 0; w < s->n_workloads; w++)
    for (size_t m = 0; m < s->workloads[w].n_metrics; m++) {
      const char *wn = s->workloads[w].name, *mn = s->workloads[w].metrics[m];
      report_forest_row *rows = core_calloc(s->n_arms, sizeof *rows);
      report_plot *pl = &doc->plots[doc->n_plots];
      size_t n = 0;
      core_buf svg, title;
      if (!rows) {
        report_doc_free(doc);
        return core_fail(err, CORE_ENOMEM, "out of memory");
      }
      for (size_t i = 0; i < a->n_results; i++) {
        const analysis_result *r = &a->results[i];
        if (strcmp(r->workload, wn) || strcmp(r->metric, mn) || r->host)
          continue;
        rows[n].label = r->arm;
        rows[n].ratio = r->ratio;
        rows[n].lo = r->ci_low;
        rows[n].hi = r->ci_high;
        rows[n].verdict = r->verdict;
        n++;
      }
      if (n == 0) {
        core_free(rows);
        continue;
      }
      core_buf_init(&svg);
      core_buf_init(&title);
      core_buf_printf(&title, "%s — %s: ratio to %s", wn, mn,
                      s->arms[s->reference].name);
      /* A buffer that ran out of memory holds a cut text, not nothing:
       * without this check a plot would come out short (and title.data
       * may be NULL). */
      if (!title.oom)
        report_forest_svg(&svg, title.data, rows, n);
      core_free(rows);
      int cut = title.oom || svg.oom;
      core_buf_free(&title);
      if (cut)
        core_buf_free(&svg);
      pl->workload = core_strdup(wn);
      pl->metric = core_strdup(mn);
      pl->file = plot_file(doc->n_plots + 1, wn, mn);
      pl->svg_len = svg.len;
      pl->svg = core_buf_steal(&svg);
      doc->n_plots++;
      if (cut || !pl->workload || !pl->metric || !pl->file || !pl->svg) {
        report_doc_free(doc);
        return core_fail(err, CORE_ENOMEM, "out of memory");
      }
    }
  if ((st = report_host_plots(in, doc, err)) != CORE_OK) {
    report_doc_free(doc);
    return st;
  }
  core_buf_init(&md);
  report_markdown(in, doc, &md);
  if (md.oom) {
    core_buf_free(&md);
    report_doc_free(doc);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_buf_init(&html);
  st = md_to_html(md.data, md.len, s->title ? s->title : s->id, doc->plots,
                  doc->n_plots, &html, err);
  if (st != CORE_OK) {
    core_buf_free(&md);
    core_buf_free(&html);
    report_doc_free(doc);
    return st;
  }
  doc->md_len = md.len;
  doc->md = core_buf_steal(&md);
  doc->html_len = html.len;
  doc->html = core_buf_steal(&html);
  return CORE_OK;
}

void report_doc_free(report_doc *doc) {
  if (!doc)
    return;
  core_free(doc->md);
  core_free(doc->html);
  for (size_t i = 0; i < doc->n_plots; i++) {
    core_free(doc->plots[i].workload);
    core_free(doc->plots[i].metric);
    core_free(doc->plots[i].file);
    core_free(doc->plots[i].svg);
  }
  core_free(doc->plots);
  memset(doc, 0, sizeof *doc);
}

/* }==== */
