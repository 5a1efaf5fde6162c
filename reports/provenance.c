/* provenance.c: provenance.md, written beside report.md: what the report
 * gives in brief, in full: every batch fact, every amendment's text and
 * diff, and every file under the manifest with its digest.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"
#include "run/run.h"
#include "stamps/stamps.h"

#define esc report_md_esc

/* A code fence longer than any run of backticks in text. */
static void fence(core_buf *b, const char *text, const char *info) {
  size_t run = 0, max = 0;
  for (const char *p = text ? text : ""; *p; p++) {
    run = *p == '`' ? run + 1 : 0;
    if (run > max)
      max = run;
  }
  for (size_t i = 0; i < (max < 3 ? 3 : max + 1); i++)
    core_buf_puts(b, "`");
  core_buf_puts(b, info);
  core_buf_puts(b, "\n");
}

static void batch_facts(core_buf *b, const data_report_inputs *x) {
  core_buf_puts(b, "## Batch facts\n\nEach batch's facts file "
                   "(`batches/BATCH.json`), flattened.\n\n");
  if (!x || x->n_batches == 0) {
    core_buf_puts(b, "No batch.\n\n");
    return;
  }
  for (size_t i = 0; i < x->n_batches; i++) {
    const data_batch_info *bi = &x->batches[i];
    core_buf_puts(b, "### ");
    esc(b, bi->id);
    core_buf_puts(b, "\n\n");
    if (bi->n_facts == 0) {
      core_buf_puts(b, "No facts file.\n\n");
      continue;
    }
    core_buf_puts(b, "| Fact | Value |\n|---|---|\n");
    for (size_t j = 0; j < bi->n_facts; j++) {
      core_buf_puts(b, "| ");
      esc(b, bi->facts[j].key);
      core_buf_puts(b, " | ");
      esc(b, bi->facts[j].value);
      core_buf_puts(b, " |\n");
    }
    core_buf_puts(b, "\n");
  }
}

static void amendments(core_buf *b, const report_input *in) {
  core_buf_puts(b, "## Amendments\n\n");
  if (in->n_amendments == 0) {
    core_buf_puts(b, "None.\n\n");
    return;
  }
  for (size_t i = 0; i < in->n_amendments; i++) {
    const report_amendment *m = &in->amendments[i];
    core_buf_printf(b, "### Amendment %d\n\n- Dated: ", m->number);
    esc(b, m->date);
    core_buf_puts(b, "\n- Recorded: ");
    esc(b, m->filed_at);
    if (m->runs_before >= 0)
      core_buf_printf(b, "\n- Runs collected before: %ld", m->runs_before);
    core_buf_puts(b, "\n- Why: ");
    esc(b, m->why);
    core_buf_puts(b, "\n- Affects: ");
    esc(b, m->affected ? m->affected : "none");
    core_buf_puts(b, "\n\n");
    if (m->diff && *m->diff) {
      fence(b, m->diff, "diff");
      core_buf_puts(b, m->diff);
      if (m->diff[strlen(m->diff) - 1] != '\n')
        core_buf_puts(b, "\n");
      fence(b, m->diff, "");
      core_buf_puts(b, "\n");
    }
  }
}

static void files(core_buf *b, const data_report_inputs *x) {
  core_buf_puts(b, "## Files\n\nEvery file the manifest lists, with its "
                   "SHA-256 (`sha256sum -c MANIFEST` checks them).\n\n");
  if (!x || x->n_manifest == 0) {
    core_buf_puts(b, "The experiment has no manifest yet.\n");
    return;
  }
  core_buf_puts(b, "| File | SHA-256 |\n|---|---|\n");
  for (size_t i = 0; i < x->n_manifest; i++) {
    core_buf_puts(b, "| ");
    esc(b, x->manifest[i].path);
    core_buf_printf(b, " | `%s` |\n", x->manifest[i].sha256);
  }
}

/* A many-step workload's commands, one numbered line each: too long for
 * report.md, whose setup names how many there are. */
static void steps(core_buf *b, const proto_sheet *s) {
  for (size_t w = 0; w < s->n_workloads; w++) {
    const proto_workload *wl = &s->workloads[w];
    if (!wl->n_steps)
      continue;
    core_buf_puts(b, "\n## The steps of ");
    esc(b, wl->name);
    core_buf_printf(b,
                    "\n\nEach run of %s runs these %zu commands in order, "
                    "in a fresh folder, each through its arm:\n\n",
                    wl->name, wl->n_steps);
    for (size_t i = 0; i < wl->n_steps; i++) {
      core_buf_printf(b, "%zu. ", i + 1);
      report_code_span(b, wl->steps[i]);
      core_buf_puts(b, "\n");
    }
  }
}

/* The batches whose round orders were drawn from a stamp, and whether
 * their rows follow them (run_order_verify, as verify checks). */
static void order_lines(core_buf *b, const report_input *in) {
  data_order_stamp *o = NULL;
  size_t n = 0;
  long problems = 0;
  core_buf scratch;
  core_err e;
  if (!in->exp || data_order_stamps(in->exp, &o, &n, &e) != CORE_OK || !n) {
    core_free(o);
    return;
  }
  core_buf_init(&scratch);
  if (run_order_verify(in->exp, &scratch, &problems, &e) == CORE_OK)
    for (size_t i = 0; i < n; i++)
      core_buf_printf(b,
                      problems ? "- %s: rows NOT in the order the stamp "
                                 "dictates (`%s`): see prereg verify.\n"
                               : "- %s: rows collected in the order the "
                                 "stamp dictates (`%s`).\n",
                      o[i].batch, o[i].stamp);
  core_buf_free(&scratch);
  core_free(o);
}

int report_any_proof(const analysis_summary *sum) {
  for (size_t i = 0; i < sum->n_registration; i++)
    if (sum->registration[i].stamped || sum->registration[i].key[0])
      return 1;
  return 0;
}

void report_proof_words(core_buf *b, const data_registration *r,
                        const char *sep) {
  if (r->stamped) {
    core_buf_printf(b, "stamped %s by ", r->stamp_time);
    esc(b, r->tsa);
  } else {
    core_buf_puts(b, "not stamped");
  }
  core_buf_puts(b, sep);
  if (r->key[0])
    core_buf_printf(b, "signed by `%s`", r->key);
  else
    core_buf_puts(b, "not signed");
}

/* Each version's time-stamp and signature, when any version has one
 * (verify checks them against a trusted TSA and allowed signers). */
static void proofs(core_buf *b, const report_input *in) {
  const analysis_summary *sum = in->summary;
  if (!report_any_proof(sum))
    return;
  core_buf_puts(b, "## Time-stamps and signatures\n\nOf each version's "
                   "record (`versions/vN.json`); `prereg verify --tsa-ca FILE "
                   "--allowed-signers FILE` checks them against the TSA and "
                   "the keys a reader trusts.\n\n");
  for (size_t i = 0; i < sum->n_registration; i++) {
    core_buf_printf(b, "- v%d: ", sum->registration[i].version);
    report_proof_words(b, &sum->registration[i], "; ");
    core_buf_puts(b, ".\n");
  }
  order_lines(b, in);
  core_buf_puts(b, "\n");
}

void report_provenance(const report_input *in, core_buf *b) {
  const proto_sheet *s = in->sheet;
  core_buf_puts(b, "# Provenance: ");
  esc(b, s->title ? s->title : s->id);
  core_buf_puts(b, "\n\nThe full record behind report.md: every batch fact, "
                   "every amendment, every file's digest and the steps of a "
                   "many-step workload.\n\n");
  core_buf_printf(b, "- Sheet: version %d, SHA-256 `%s`.\n",
                  in->summary->sheet_version, s->sha256);
  core_buf_puts(b, "- Registered: ");
  esc(b, in->registered_at ? in->registered_at : "not registered");
  core_buf_puts(b, "\n");
  if (in->manifest_sha256)
    core_buf_printf(b, "- Manifest: SHA-256 `%s`.\n", in->manifest_sha256);
  core_buf_puts(b, in->unverified ? "- Verification: failed:\n"
                                  : "- Verification: passed.\n");
  report_md_lines(b, in->unverified, "  - ");
  core_buf_printf(b,
                  "- Software: %s %s; %s; GSL %s; libxlsxwriter %s; "
                  "cmark-gfm %s.\n\n",
                  PREREG_NAME, PREREG_VERSION, proto_lua_version(),
                  analysis_gsl_version(), report_xlsxwriter_version(),
                  report_cmark_version());
  proofs(b, in);
  batch_facts(b, in->extra);
  amendments(b, in);
  files(b, in->extra);
  steps(b, s);
}
