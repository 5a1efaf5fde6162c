/* hosts.c: what a report shows of a sheet with hosts: each host's share
 * of its rounds, the sheet's rule on each host beside the cross-host
 * estimate and verdict, a plot of the host ratios with their intervals,
 * the hypotheses per host, and the host threats the batch facts show
 * (declared hosts that are one machine, a reboot during collection).
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

static void esc(core_buf *b, const char *s) {
  core_buf_md_escape(b, s ? s : "");
}

static void sig(core_buf *b, double x) {
  char t[32];
  if (!isfinite(x))
    core_buf_puts(b, "–");
  else {
    core_fmt_sig(t, sizeof t, x, 3);
    core_buf_puts(b, t);
  }
}

/* " (provisional)" after a verdict or outcome of host's entries (NULL:
 * those across hosts) on data that do not complete that host's plan. */
static const char *prov(const analysis_summary *a, const char *host) {
  return analysis_provisional(a, host) ? " (provisional)" : "";
}

/* Plots */

/* c as a file name keeps it: [A-Za-z0-9_-] as is, anything else '_'. */
static char file_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_' || c == '-'
             ? c
             : '_';
}

/* The file of host plot k: "hosts-K-WORKLOAD-METRIC-ARM.svg" with only
 * [A-Za-z0-9_-] kept from the names. */
static char *plot_file(size_t k, const analysis_result *x) {
  core_buf b;
  core_buf_init(&b);
  core_buf_printf(&b, "hosts-%zu", k);
  const char *parts[] = {x->workload, x->metric, x->arm};
  for (size_t i = 0; i < 3; i++) {
    core_buf_puts(&b, "-");
    for (const char *s = parts[i]; *s; s++)
      core_buf_printf(&b, "%c", file_char(*s));
  }
  core_buf_puts(&b, ".svg");
  if (b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return core_buf_steal(&b);
}

/* Whether file is the name plot_file gives host plot k of x (compared
 * in place: the section that looks a plot up allocates nothing). */
static int is_plot_file(const char *file, size_t k, const analysis_result *x) {
  char head[32];
  int n = snprintf(head, sizeof head, "hosts-%zu", k);
  const char *parts[] = {x->workload, x->metric, x->arm};
  if (!file || n < 0 || strncmp(file, head, (size_t)n) != 0)
    return 0;
  file += n;
  for (size_t i = 0; i < 3; i++) {
    if (*file++ != '-')
      return 0;
    for (const char *s = parts[i]; *s; s++)
      if (*file++ != file_char(*s))
        return 0;
  }
  return strcmp(file, ".svg") == 0;
}

/* One plot: each host's ratio and interval, then the cross-host one. */
static core_status host_plot(const analysis_summary *a,
                             const analysis_result *x, size_t k,
                             const report_plot_notes *pn, report_plot *pl,
                             core_err *err) {
  report_forest_row *rows = core_calloc(a->n_host_results + 1, sizeof *rows);
  core_buf svg, title;
  size_t n = 0;
  if (!rows)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t i = 0; i < a->n_host_results; i++) {
    const analysis_result *r = &a->host_results[i];
    if (strcmp(r->workload, x->workload) || strcmp(r->metric, x->metric) ||
        strcmp(r->arm, x->arm))
      continue;
    rows[n++] = (report_forest_row){
        r->host, r->ratio, r->ci_low, r->ci_high, r->verdict, NULL, r->worse};
  }
  rows[n++] =
      (report_forest_row){"across hosts", x->ratio, x->ci_low, x->ci_high,
                          x->verdict,     NULL,     x->worse};
  core_buf_init(&svg);
  core_buf_init(&title);
  core_buf_printf(&title, "%s — %s — %s: ratio to %s per host", x->workload,
                  x->metric, x->arm, x->reference);
  if (!title.oom)
    report_forest_svg(&svg, title.data, rows, n, NULL, 0, pn->v, pn->n);
  core_free(rows);
  int cut = title.oom || svg.oom;
  core_buf_free(&title);
  /* Not a plot of one workload and metric's runs: The data skips it. */
  pl->workload = core_strdup("");
  pl->metric = core_strdup("");
  pl->file = plot_file(k, x);
  pl->svg_len = svg.len;
  pl->svg = cut ? NULL : core_buf_steal(&svg);
  core_buf_free(&svg);
  return cut || !pl->workload || !pl->metric || !pl->file || !pl->svg
             ? core_fail(err, CORE_ENOMEM, "out of memory")
             : CORE_OK;
}

core_status report_host_plots(const report_input *in, report_doc *doc,
                              const report_plot_notes *pn, core_err *err) {
  const analysis_summary *a = in->summary;
  size_t n = 0;
  for (size_t i = 0; a->across && i < a->n_results; i++)
    n += a->results[i].across;
  if (!n)
    return CORE_OK;
  report_plot *nv =
      core_realloc(doc->plots, (doc->n_plots + n) * sizeof *doc->plots);
  /* doc->plots had room for exactly the plots before these. */
  if (!nv)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  doc->plots = nv;
  for (size_t i = 0, k = 0; i < a->n_results; i++) {
    if (!a->results[i].across)
      continue;
    report_plot *pl = &doc->plots[doc->n_plots++];
    memset(pl, 0, sizeof *pl);
    core_status st = host_plot(a, &a->results[i], ++k, pn, pl, err);
    if (st != CORE_OK)
      return st;
  }
  return CORE_OK;
}

/* The section */

static const char *host_fact(const report_input *in, const char *host,
                             const char *what) {
  char key[256];
  snprintf(key, sizeof key, "nodes.%s.%s", host, what);
  const char *v = NULL;
  for (size_t i = 0; in->extra && i < in->extra->n_batches; i++) {
    const char *f = data_fact_get(&in->extra->batches[i], key);
    v = f ? f : v; /* the newest batch's */
  }
  return v;
}

static void hosts_table(core_buf *b, const report_input *in) {
  const analysis_summary *a = in->summary;
  core_buf_printf(
      b,
      "Every host ran the whole plan, its rounds in arm orders of "
      "its own. A host counts with at least %g%% of its rounds "
      "completed; a cross-host estimate needs %ld counted hosts. "
      "The rule across hosts: **carries over** when %sthe "
      "largest host ratio is at most %g× the smallest.\n\n",
      a->min_completed * 100, a->min_hosts,
      a->same_verdict ? "every counted host gives the same verdict and " : "",
      a->max_spread);
  core_buf_puts(b, "| Host | Rounds completed | Counts | Kernel | CPUs "
                   "allowed | machine-id |\n|---|--:|---|---|---|---|\n");
  for (size_t i = 0; i < a->n_hosts; i++) {
    const analysis_host *h = &a->hosts[i];
    const char *kernel = host_fact(in, h->name, "host.kernel");
    const char *cpus = host_fact(in, h->name, "cpus_allowed");
    const char *mid = host_fact(in, h->name, "machine_id");
    core_buf_puts(b, "| ");
    esc(b, h->name);
    core_buf_printf(b, " | %ld of %ld%s | %s | ", h->rounds_done,
                    h->rounds_planned,
                    h->status.incomplete ? " (incomplete)" : "",
                    h->counted ? "yes" : "**no**");
    esc(b, kernel ? kernel : "–");
    core_buf_puts(b, " | ");
    esc(b, cpus ? cpus : "–");
    core_buf_puts(b, " | ");
    esc(b, mid ? mid : "–");
    core_buf_puts(b, " |\n");
  }
  core_buf_puts(b, "\n");
}

static void comparison(core_buf *b, const analysis_summary *a,
                       const analysis_result *x, const report_plot *pl) {
  core_buf_puts(b, "### ");
  esc(b, x->workload);
  core_buf_puts(b, " — ");
  esc(b, x->metric);
  core_buf_puts(b, " — ");
  esc(b, x->arm);
  core_buf_puts(b, "\n\n| Host | n | Ratio | CI | Verdict |\n"
                   "|---|--:|--:|---|---|\n");
  for (size_t i = 0; i < a->n_host_results; i++) {
    const analysis_result *r = &a->host_results[i];
    if (strcmp(r->workload, x->workload) || strcmp(r->metric, x->metric) ||
        strcmp(r->arm, x->arm))
      continue;
    core_buf_puts(b, "| ");
    esc(b, r->host);
    core_buf_printf(b, " | %zu | ", r->n);
    sig(b, r->ratio);
    core_buf_puts(b, "× | ");
    sig(b, r->ci_low);
    core_buf_puts(b, "–");
    sig(b, r->ci_high);
    core_buf_puts(b, " | ");
    esc(b, r->verdict);
    core_buf_printf(b, "%s |\n", prov(a, r->host));
  }
  core_buf_printf(b, "| **across hosts** (%zu counted) | %zu | ",
                  x->hosts_counted, x->n);
  sig(b, x->ratio);
  core_buf_puts(b, "× | ");
  sig(b, x->ci_low);
  core_buf_puts(b, "–");
  sig(b, x->ci_high);
  core_buf_puts(b, " | **");
  esc(b, x->verdict);
  core_buf_printf(b, "**%s |\n\n", prov(a, NULL));
  esc(b, x->why);
  core_buf_puts(b, ". The estimate across hosts is the geometric mean of the "
                   "counted hosts' ratios; its interval a two-level "
                   "bootstrap (hosts, then runs within each host).");
  if (x->note) {
    core_buf_puts(b, " ");
    esc(b, x->note);
    core_buf_puts(b, ".");
  }
  core_buf_puts(b, "\n\n");
  if (pl) {
    core_buf_puts(b, "![Host ratios of ");
    esc(b, x->arm);
    core_buf_puts(b, " on ");
    esc(b, x->workload);
    core_buf_printf(b, "](%s)\n\n", pl->file);
  }
}

static void host_hypotheses(core_buf *b, const analysis_summary *a) {
  if (!a->n_hypotheses)
    return;
  core_buf_puts(b, "### Hypotheses per host\n\nA hypothesis holds across "
                   "hosts only when it holds on every counted host.\n\n"
                   "| ID | Host | Verdict | Reason |\n|---|---|---|---|\n");
  for (size_t i = 0; i < a->n_hypotheses + a->n_host_hypotheses; i++) {
    const analysis_hypothesis *h =
        i < a->n_hypotheses ? &a->hypotheses[i]
                            : &a->host_hypotheses[i - a->n_hypotheses];
    core_buf_puts(b, "| ");
    esc(b, h->id);
    core_buf_puts(b, " | ");
    esc(b, h->host ? h->host : "across hosts");
    core_buf_printf(b, " | %s%s%s%s | ", h->host ? "" : "**",
                    proto_outcome_word(h->outcome), h->host ? "" : "**",
                    prov(a, h->host));
    esc(b, h->reason);
    core_buf_puts(b, " |\n");
  }
  core_buf_puts(b, "\n");
}

void report_hosts_section(core_buf *b, const report_input *in,
                          const report_doc *doc) {
  const analysis_summary *a = in->summary;
  if (!a->across)
    return;
  core_buf_puts(b, "## Across hosts\n\n");
  hosts_table(b, in);
  size_t k = 0;
  for (size_t i = 0; i < a->n_results; i++) {
    if (!a->results[i].across)
      continue;
    /* The plot report_host_plots made for this comparison: the one whose
     * file is the name plot_file gives it. */
    const report_plot *pl = NULL;
    k++;
    for (size_t p = 0; p < doc->n_plots && !pl; p++)
      if (is_plot_file(doc->plots[p].file, k, &a->results[i]))
        pl = &doc->plots[p];
    comparison(b, a, &a->results[i], pl);
  }
  host_hypotheses(b, a);
}

/* Threats */

/* The values of nodes.*.SUFFIX in batch bi: (host, value) pairs. */
static size_t node_values(const data_batch_info *bi, const char *suffix,
                          const char **host, const char **val, size_t cap,
                          char names[][80]) {
  size_t n = 0, sl = strlen(suffix);
  for (size_t i = 0; i < bi->n_facts && n < cap; i++) {
    const char *k = bi->facts[i].key;
    size_t kl = strlen(k);
    if (strncmp(k, "nodes.", 6) != 0 || kl < 6 + sl + 2 ||
        strcmp(k + kl - sl, suffix) != 0 || k[kl - sl - 1] != '.')
      continue;
    size_t hl = kl - sl - 1 - 6;
    if (hl == 0 || hl >= 80 || memchr(k + 6, '.', hl))
      continue;
    snprintf(names[n], 80, "%.*s", (int)hl, k + 6);
    host[n] = names[n];
    val[n++] = bi->facts[i].value;
  }
  return n;
}

void report_host_threats(const report_input *in, core_buf *b, size_t *count) {
  const data_report_inputs *x = in->extra;
  if (!in->summary->across || !x)
    return;
  /* What each batch's coordinator found: hosts that are one machine, a
   * reboot within the batch. Said once per text. */
  for (size_t i = 0; i < x->n_batches; i++)
    for (size_t t = 0;; t++) {
      char key[64];
      snprintf(key, sizeof key, "host_threats[%zu]", t);
      const char *v = data_fact_get(&x->batches[i], key);
      if (!v)
        break;
      int said = 0;
      for (size_t j = 0; j < i && !said; j++)
        for (size_t u = 0; !said; u++) {
          snprintf(key, sizeof key, "host_threats[%zu]", u);
          const char *w = data_fact_get(&x->batches[j], key);
          if (!w)
            break;
          said = !strcmp(v, w);
        }
      if (said)
        continue;
      core_buf_puts(b, "- ");
      esc(b, v);
      core_buf_puts(b, ".\n");
      (*count)++;
    }
  /* A reboot between batches: a host's boot_id differs from one batch's
   * preflight to a later one's. */
  const char *first_host[64], *first_val[64];
  char first_names[64][80];
  size_t nf = 0;
  for (size_t i = 0; i < x->n_batches; i++) {
    const char *h[64], *v[64];
    char names[64][80];
    size_t n = node_values(&x->batches[i], "boot_id", h, v, 64, names);
    for (size_t k = 0; k < n; k++) {
      size_t j = 0;
      while (j < nf && strcmp(first_host[j], h[k]))
        j++;
      if (j == nf && nf < 64) {
        snprintf(first_names[nf], 80, "%s", h[k]);
        first_host[nf] = first_names[nf];
        first_val[nf++] = v[k];
      } else if (j < nf && first_val[j] && strcmp(first_val[j], v[k])) {
        core_buf_puts(b, "- Reboot during collection: host ");
        esc(b, h[k]);
        core_buf_puts(b, " had boot_id ");
        esc(b, first_val[j]);
        core_buf_puts(b, " at an earlier batch and ");
        esc(b, v[k]);
        core_buf_puts(b, " at batch ");
        esc(b, x->batches[i].id);
        core_buf_puts(b, ".\n");
        (*count)++;
        first_val[j] = NULL; /* said once */
      }
    }
  }
}
