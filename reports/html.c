/* html.c: the whole report in memory (plots, report.md, provenance.md)
 * and report.html, rendered from report.md by cmark-gfm with its table
 * extension in safe mode, wrapped in a standalone page, with the plots
 * inline.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <string.h>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <cmark-gfm_version.h>

#include "reports/report.h"
#include "reports/report_internal.h"

/* Readable on screen, printable on paper: tables never split a row and
 * plots never split, headings stay with what follows. */
static const char stylesheet[] =
    "body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;"
    "max-width:72rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;"
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
    "img,svg{max-width:100%;height:auto}\n"
    ".plot{display:block;margin:.6rem 0}\n"
    ".unverified{background:#b00020;color:#fff;font-weight:bold;padding:"
    ".4rem 1rem;text-align:center;letter-spacing:.1em}\n"
    "@media print{body{max-width:none;margin:0;font-size:10pt}"
    "h2,h3{break-after:avoid}tr,img,svg,pre{break-inside:avoid}"
    "a{color:inherit;text-decoration:none}"
    ".unverified{position:fixed;top:0;left:0;right:0}}\n";

/* Plots: cmark's safe mode drops raw HTML, so the Markdown links each
 * plot by file name (report.md works next to the .svg files) and here
 * the image element of each of our own files, <img src="FILE" ... />, is
 * replaced by the SVG itself, inline: its text is searchable and its
 * labels are in the page's DOM. cmark escapes every '"' that comes from
 * text, so the literal attribute can only be ours, and our SVG escapes
 * every text it holds. */
static void inline_plots(core_buf *html, const char *body,
                         const report_plot *plots, size_t n_plots) {
  const char *p = body;
  for (;;) {
    const char *hit = strstr(p, "<img src=\""), *src, *end;
    size_t k;
    if (!hit) {
      core_buf_puts(html, p);
      break;
    }
    src = hit + strlen("<img src=\"");
    end = strstr(src, "/>");
    for (k = 0; end && k < n_plots; k++) {
      size_t fl = strlen(plots[k].file);
      if (strncmp(src, plots[k].file, fl) == 0 && src[fl] == '"')
        break;
    }
    if (!end || k == n_plots) {
      core_buf_append(html, p, (size_t)(src - p));
      p = src;
      continue;
    }
    core_buf_append(html, p, (size_t)(hit - p));
    core_buf_puts(html, "<span class=\"plot\">");
    core_buf_append(html, plots[k].svg, plots[k].svg_len);
    core_buf_puts(html, "</span>");
    p = end + 2;
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
  inline_plots(html, body, plots, n_plots);
  core_buf_puts(html, "</body>\n</html>\n");
  cmark_get_default_mem_allocator()->free(body);
  if (html->oom)
    return core_fail(err, CORE_ENOMEM, "out of memory rendering HTML");
  return CORE_OK;
}

/* The whole document */

/* "plot-K-W-M.svg": only [A-Za-z0-9_-] of the names survive. */
static char *plot_file(size_t k, const char *w, const char *m) {
  core_buf b;
  core_buf_init(&b);
  core_buf_printf(&b, "plot-%zu-", k);
  for (int part = 0; part < 2; part++) {
    for (const char *s = part ? m : w; *s; s++)
      core_buf_puts(&b, (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                                (*s >= '0' && *s <= '9') || *s == '_' ||
                                *s == '-'
                            ? (char[]){*s, 0}
                            : "_");
    core_buf_puts(&b, part ? ".svg" : "-");
  }
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return core_buf_steal(&b);
}

/* Takes over svg (freed on failure) as doc's next plot. */
static int add_plot(report_doc *doc, const char *w, const char *m, char *file,
                    core_buf *svg) {
  report_plot *pl = &doc->plots[doc->n_plots++];
  pl->workload = w ? core_strdup(w) : NULL;
  pl->metric = m ? core_strdup(m) : NULL;
  pl->file = file;
  if (svg->oom)
    core_buf_free(svg);
  pl->svg_len = svg->len;
  pl->svg = core_buf_steal(svg);
  return pl->file && pl->svg && (!w || pl->workload) && (!m || pl->metric);
}

/* The rule's thresholds, as lines and bands across the overview. */
static size_t rule_marks(const proto_rule *r, report_forest_mark *marks,
                         char labels[][96], size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_verdicts && n < max; i++) {
    const proto_verdict_rule *v = &r->verdicts[i];
    if (v->ratio.has_ci_within) {
      snprintf(labels[n], 96, "%s", v->name);
      marks[n] = (report_forest_mark){v->ratio.ci_within[0],
                                      v->ratio.ci_within[1], labels[n]};
      n++;
    }
    if (v->ratio.has_above && n < max) {
      snprintf(labels[n], 96, "%s above %g", v->name, v->ratio.above);
      marks[n] = (report_forest_mark){v->ratio.above, 0, labels[n]};
      n++;
    }
    if (v->ratio.has_below && n < max) {
      snprintf(labels[n], 96, "%s below %.3g", v->name, v->ratio.below);
      marks[n] = (report_forest_mark){v->ratio.below, 0, labels[n]};
      n++;
    }
  }
  return n;
}

/* The overview: every comparison, grouped by workload and metric. */
static int overview(const report_input *in, report_doc *doc,
                    const report_plot_notes *pn) {
  const analysis_summary *a = in->summary;
  report_forest_row *rows =
      core_calloc(a->n_results ? a->n_results : 1, sizeof *rows);
  char(*groups)[160] =
      core_calloc(a->n_results ? a->n_results : 1, sizeof *groups);
  report_forest_mark marks[16];
  char labels[16][96];
  size_t nm = rule_marks(&in->sheet->rule, marks, labels, 16);
  core_buf svg, title;
  int ok;
  if (!rows || !groups) {
    core_free(rows);
    core_free(groups);
    return 0;
  }
  for (size_t i = 0; i < a->n_results; i++) {
    const analysis_result *r = &a->results[i];
    snprintf(groups[i], sizeof groups[i], "%s · %s", r->workload, r->metric);
    rows[i] = (report_forest_row){r->arm,     r->ratio,  r->ci_low, r->ci_high,
                                  r->verdict, groups[i], r->worse};
  }
  core_buf_init(&svg);
  core_buf_init(&title);
  core_buf_printf(&title, "Every ratio to %s, with its %.6g%% CI",
                  in->sheet->arms[in->sheet->reference].name,
                  a->confidence * 100);
  /* A buffer that ran out of memory holds a cut text, not nothing. */
  if (!title.oom)
    report_forest_svg(&svg, title.data, rows, a->n_results, marks, nm, pn->v,
                      pn->n);
  else
    svg.oom = 1;
  core_buf_free(&title);
  core_free(rows);
  core_free(groups);
  ok = add_plot(doc, NULL, NULL, core_strdup("overview.svg"), &svg);
  return ok;
}

/* One workload and metric: its runs per arm and in collection order. */
static int runs_plot(const report_input *in, report_doc *doc, const char *w,
                     const char *m, size_t k, const report_plot_notes *pn) {
  const proto_sheet *s = in->sheet;
  const analysis_summary *a = in->summary;
  report_series *arms = core_calloc(s->n_arms ? s->n_arms : 1, sizeof *arms);
  core_buf svg, title;
  if (!arms)
    return 0;
  for (size_t i = 0; i < s->n_arms; i++) {
    const analysis_cell *c = report_find_cell(a, w, m, s->arms[i].name);
    arms[i].arm = s->arms[i].name;
    arms[i].q1 = arms[i].median = arms[i].q3 = arms[i].min = arms[i].max = NAN;
    if (c && c->values) {
      arms[i].values = c->values;
      arms[i].order = c->order;
      arms[i].batch = c->batch;
      arms[i].n = c->n_valid;
      arms[i].q1 = c->q1;
      arms[i].median = c->median;
      arms[i].q3 = c->q3;
      arms[i].min = c->min;
      arms[i].max = c->max;
    }
  }
  core_buf_init(&svg);
  core_buf_init(&title);
  core_buf_printf(&title, "%s · %s", w, m);
  if (!title.oom)
    report_runs_svg(&svg, title.data, proto_metric_unit_of(s, m), arms,
                    s->n_arms, (const char *const *)a->batches, a->n_batches,
                    pn->v, pn->n);
  else
    svg.oom = 1;
  core_buf_free(&title);
  core_free(arms);
  return add_plot(doc, w, m, plot_file(k, w, m), &svg);
}

/* Every plot shows the report's notices under its title: a plot shared
 * on its own still says what the data are that the plan is not. */
static int make_plots(const report_input *in, report_doc *doc) {
  const proto_sheet *s = in->sheet;
  size_t cap = 1;
  report_plot_notes pn;
  int ok;
  for (size_t w = 0; w < s->n_workloads; w++)
    cap += s->workloads[w].n_metrics;
  if (report_plot_notes_get(in, &pn) < 0)
    return 0;
  doc->plots = core_calloc(cap, sizeof *doc->plots);
  ok = doc->plots && overview(in, doc, &pn);
  for (size_t w = 0; ok && w < s->n_workloads; w++)
    for (size_t m = 0; ok && m < s->workloads[w].n_metrics; m++)
      ok = runs_plot(in, doc, s->workloads[w].name, s->workloads[w].metrics[m],
                     doc->n_plots, &pn);
  /* Across hosts: the host ratios, after the plots above (it grows
   * doc->plots). */
  core_err e = {0};
  ok = ok && report_host_plots(in, doc, &pn, &e) == CORE_OK;
  report_plot_notes_free(&pn);
  return ok;
}

core_status report_render(const report_input *in, report_doc *doc,
                          core_err *err) {
  const proto_sheet *s = in->sheet;
  core_buf md, html, prov;
  core_status st;
  memset(doc, 0, sizeof *doc);
  if (!make_plots(in, doc)) {
    report_doc_free(doc);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  {
    /* The analysis first: report.md records its digest. */
    core_buf js;
    core_buf_init(&js);
    if ((st = analysis_json(in->summary, &js, err)) != CORE_OK) {
      core_buf_free(&js);
      report_doc_free(doc);
      return st;
    }
    doc->analysis_len = js.len;
    doc->analysis = core_buf_steal(&js);
    core_sha256_hex(doc->analysis, doc->analysis_len, doc->analysis_sha256);
  }
  core_buf_init(&md);
  core_buf_init(&prov);
  report_markdown(in, doc, &md);
  report_provenance(in, &prov);
  if (md.oom || prov.oom) {
    core_buf_free(&md);
    core_buf_free(&prov);
    report_doc_free(doc);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_buf_init(&html);
  st = md_to_html(md.data, md.len, s->title ? s->title : s->id, doc->plots,
                  doc->n_plots, &html, err);
  if (st != CORE_OK) {
    core_buf_free(&md);
    core_buf_free(&prov);
    core_buf_free(&html);
    report_doc_free(doc);
    return st;
  }
  doc->md_len = md.len;
  doc->md = core_buf_steal(&md);
  doc->provenance_len = prov.len;
  doc->provenance = core_buf_steal(&prov);
  doc->html_len = html.len;
  doc->html = core_buf_steal(&html);
  return CORE_OK;
}

void report_doc_free(report_doc *doc) {
  if (!doc)
    return;
  core_free(doc->analysis);
  core_free(doc->md);
  core_free(doc->html);
  core_free(doc->provenance);
  for (size_t i = 0; i < doc->n_plots; i++) {
    core_free(doc->plots[i].workload);
    core_free(doc->plots[i].metric);
    core_free(doc->plots[i].file);
    core_free(doc->plots[i].svg);
  }
  core_free(doc->plots);
  memset(doc, 0, sizeof *doc);
}
