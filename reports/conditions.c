/* conditions.c: the report's Conditions section: the machine's
 * conditions the sheet registered (bounds, required host facts, pinned
 * CPUs), the runs each bound excluded, the spread of each per-run fact per
 * arm, the host's facts per host, and the A/A arms' ratios as the host's
 * noise floor. Rows collected before prereg recorded these facts are said
 * to have none, never shown as zeros.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

#define esc report_md_esc

/* A whole number as it is (a count, a load of 2), else 3 significant
 * digits without trailing zeros (a load of 0.1). */
static void num(core_buf *b, double x) {
  char t[64];
  if (x == floor(x) && fabs(x) < 1e15)
    snprintf(t, sizeof t, "%.0f", x);
  else if (fabs(x) < 1e4)
    snprintf(t, sizeof t, "%.3g", x);
  else
    report_sig(t, sizeof t, x, 3);
  core_buf_puts(b, t);
}

/* One registered bound and how many runs it excluded. */
static void bound(core_buf *b, const char *what, double v, const char *after,
                  size_t excluded) {
  if (v < 0)
    return;
  core_buf_printf(b, "- %s at most ", what);
  num(b, v);
  core_buf_printf(b, "%s: %zu run%s excluded.\n", after, excluded,
                  excluded == 1 ? "" : "s");
}

/* A required yes/no fact of the host. */
static void required(core_buf *b, const char *what, int v, int *first) {
  if (v < 0)
    return;
  core_buf_printf(b, "%s%s %s", *first ? "" : ", ", what, v ? "on" : "off");
  *first = 0;
}

static void registered(core_buf *b, const proto_sheet *s,
                       const report_row_facts *f) {
  const proto_conditions *c = &s->conditions;
  int first = 1;
  if (!c->declared) {
    core_buf_puts(b, "The sheet registers no conditions: no run is "
                     "excluded for the machine's load, swapping or "
                     "throttling.\n\n");
  } else {
    core_buf_puts(b, "Registered with the sheet (a run beyond a bound is "
                     "kept, not counted, and run again by `run "
                     "--resume`):\n\n");
    char after[96];
    snprintf(after, sizeof after,
             " before each run (waiting up to %g s before each round)",
             c->wait_s);
    bound(b, "1-minute load average", c->max_load, after, f->excluded_load);
    bound(b, "pages swapped in", c->max_swap_in, " during a run",
          f->excluded_swap_in);
    bound(b, "thermal throttle events", c->max_throttle, " during a run",
          f->excluded_throttle);
    if (c->governor || c->aslr >= 0 || c->boost >= 0 || c->smt >= 0) {
      core_buf_puts(b, "- Required of the host before any run: ");
      if (c->governor) {
        core_buf_puts(b, "governor ");
        esc(b, c->governor);
        first = 0;
      }
      required(b, "ASLR", c->aslr, &first);
      required(b, "boost", c->boost, &first);
      required(b, "SMT", c->smt, &first);
      core_buf_puts(b, ".\n");
    }
    core_buf_puts(b, "\n");
  }
  size_t pinned = 0;
  for (size_t a = 0; a < s->n_arms; a++)
    if (s->arms[a].cpus) {
      core_buf_puts(b, pinned++ ? "; " : "Pinned (every process of a run): ");
      esc(b, s->arms[a].name);
      core_buf_puts(b, " to CPUs ");
      esc(b, s->arms[a].cpus);
    }
  if (pinned)
    core_buf_puts(b, ".\n\n");
}

/* The spread of each fact per arm. */
static void spread(core_buf *b, const proto_sheet *s,
                   const report_row_facts *f) {
  if (f->cond_runs == 0 || !f->cond) {
    core_buf_puts(b, "The rows carry no facts of the machine's conditions "
                     "(load, running tasks, involuntary context switches, "
                     "CPU frequency, throttling, swapping): they were "
                     "collected before prereg recorded them, so none is "
                     "shown, rather than zeros.\n\n");
    return;
  }
  core_buf_puts(b, "Per run (each cell: the smallest and largest value over "
                   "the arm's runs, and how many recorded it; — where the "
                   "host had no source):\n\n| Arm |");
  for (int k = 0; k < DATA_NFACTS; k++)
    core_buf_printf(b, " %s |", data_fact_name(k));
  core_buf_puts(b, "\n|---|");
  for (int k = 0; k < DATA_NFACTS; k++)
    core_buf_puts(b, "--:|");
  core_buf_puts(b, "\n");
  for (size_t a = 0; a < s->n_arms; a++) {
    core_buf_puts(b, "| ");
    esc(b, s->arms[a].name);
    core_buf_puts(b, " |");
    for (int k = 0; k < DATA_NFACTS; k++) {
      const report_cond_spread *c = &f->cond[a * DATA_NFACTS + (size_t)k];
      core_buf_puts(b, " ");
      if (c->n == 0) {
        core_buf_puts(b, "—");
      } else {
        num(b, c->min);
        if (c->max != c->min) {
          core_buf_puts(b, "–");
          num(b, c->max);
        }
        core_buf_printf(b, " (%zu)", c->n);
      }
      core_buf_puts(b, " |");
    }
    core_buf_puts(b, "\n");
  }
  core_buf_puts(b, "\n");
}

/* The host's facts as each batch recorded them, one line per host and
 * distinct set of facts. */
static void hosts(core_buf *b, const data_report_inputs *x) {
  static const char prefix[] = "host.conditions.";
  size_t shown = 0;
  for (size_t i = 0; x && i < x->n_batches; i++) {
    const data_batch_info *bi = &x->batches[i];
    size_t n = 0;
    for (size_t k = 0; k < bi->n_facts; k++)
      n += strncmp(bi->facts[k].key, prefix, sizeof prefix - 1) == 0;
    if (!n)
      continue;
    core_buf_puts(b,
                  shown++ ? "- " : "The host, as each batch found it:\n\n- ");
    const char *name = data_fact_get(bi, "host.hostname");
    esc(b, name ? name : "unknown");
    core_buf_puts(b, " (");
    esc(b, bi->id);
    core_buf_puts(b, "):");
    for (size_t k = 0, j = 0; k < bi->n_facts; k++) {
      const data_fact *fa = &bi->facts[k];
      if (strncmp(fa->key, prefix, sizeof prefix - 1) != 0)
        continue;
      core_buf_puts(b, j++ ? "; " : " ");
      esc(b, fa->key + sizeof prefix - 1);
      core_buf_puts(b, " ");
      esc(b, strcmp(fa->value, "null") ? fa->value : "unknown");
    }
    core_buf_puts(b, ".\n");
  }
  if (!shown)
    core_buf_puts(b, "No batch recorded the host's facts (governor, boost, "
                     "SMT, isolated CPUs, ASLR, swap, power, clocksource): "
                     "its batches predate them.\n");
  core_buf_puts(b, "\n");
}

/* Each A/A arm's ratios: the host's noise floor. */
static void noise_floor(core_buf *b, const report_input *in) {
  const proto_sheet *s = in->sheet;
  const analysis_summary *a = in->summary;
  for (size_t i = 0; a && i < a->n_results; i++) {
    const analysis_result *r = &a->results[i];
    long ai = proto_arm_index(s, r->arm);
    if (ai < 0 || !s->arms[ai].null || (r->host && !r->across))
      continue;
    core_buf_puts(b, "- Noise floor: A/A arm ");
    esc(b, r->arm);
    core_buf_puts(b, " (the reference's command again), ");
    esc(b, r->workload);
    core_buf_puts(b, " · ");
    esc(b, r->metric);
    core_buf_puts(b, ": ");
    if (isfinite(r->ratio)) {
      num(b, r->ratio);
      core_buf_puts(b, "×");
      if (isfinite(r->ci_low) && isfinite(r->ci_high)) {
        core_buf_puts(b, " [");
        num(b, r->ci_low);
        core_buf_puts(b, "–");
        num(b, r->ci_high);
        core_buf_puts(b, "]");
      }
    } else {
      core_buf_puts(b, "no ratio");
    }
    core_buf_puts(b, " against ");
    esc(b, r->reference);
    core_buf_puts(b, ": a comparison within this is within the host's "
                     "noise.\n");
  }
}

void report_conditions(const report_input *in, const report_row_facts *f,
                       core_buf *b) {
  core_buf_puts(b, "## Conditions\n\n");
  registered(b, in->sheet, f);
  spread(b, in->sheet, f);
  hosts(b, in->extra);
  size_t before = b->len;
  noise_floor(b, in);
  if (b->len != before)
    core_buf_puts(b, "\n");
}
