/* cli_cmd_analyze.c: `prereg analyze SHEET [--json]`: medians, ratios, CIs,
 * verdicts and hypotheses over the frozen rows.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "bundles/bundles.h"
#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"

/* PREREG_THREADS pins the bootstrap's worker count (tests show the
 * numbers do not depend on it); unset or empty means every core. */
static core_status threads_from_env(int *threads, core_err *err) {
  const char *v = getenv("PREREG_THREADS");
  char *end;
  long n;
  *threads = 0;
  if (!v || !*v)
    return CORE_OK;
  errno = 0;
  n = strtol(v, &end, 10);
  if (errno || *end || n < 1 || n > 256)
    return core_fail(err, CORE_EUSAGE,
                     "PREREG_THREADS: '%s' is not a thread count from 1 to "
                     "256; unset it to use every core",
                     v);
  *threads = (int)n;
  return CORE_OK;
}

/* Numbers from data verify rejects are not the plan's: the status says
 * UNVERIFIED, and the terminal says so first. */
static core_status mark_unverified(const cli_opts *opts,
                                   const data_experiment *exp,
                                   analysis_summary *sum, FILE *out,
                                   core_err *err) {
  char why[600];
  int bad = cli_unverified(exp, why, sizeof why, err);
  if (bad < 0)
    return err->status;
  sum->status.unverified = bad;
  if (bad && !opts->json)
    fprintf(out,
            "UNVERIFIED: the data did not verify (%s); run prereg verify "
            "%s\n",
            why, opts->args[0]);
  return CORE_OK;
}

core_status cli_cmd_analyze(const cli_opts *opts, FILE *out, core_err *err) {
  proto_sheet *sheet = NULL;
  data_experiment *exp = NULL;
  analysis_summary *sum = NULL;
  core_buf text;
  const char *sheet_path, *data_dir;
  int threads, bundle = 0;
  core_status st;

  core_buf_init(&text);
  if ((st = threads_from_env(&threads, err)) != CORE_OK ||
      (st = cli_refuse_folder(opts, err)) != CORE_OK)
    return st;
  /* SHEET may also be a published bundle: analysed from a verified,
   * extracted copy, giving the same bytes as the original folder. */
  if ((st = data_resolve_input(opts->args[0], opts->data_dir, &sheet_path,
                               &data_dir, &bundle, err)) != CORE_OK)
    return st;
  if (!(sheet = proto_sheet_load(sheet_path, err)))
    return err->status ? err->status : CORE_EPROTOCOL;
  if ((!bundle && (st = cli_check_data_dir(opts, sheet, err)) != CORE_OK) ||
      (st = data_experiment_open(data_dir, sheet, &exp, err)) != CORE_OK)
    goto done;
  if (exp->n_versions == 0) {
    st = core_fail(err, CORE_ELOCK,
                   "%s: not registered, so there is nothing to analyse; "
                   "run prereg register %s, then prereg run or import",
                   opts->args[0], opts->args[0]);
    goto done;
  }
  /* An analysis under a rule nobody registered is not the preregistered
   * analysis: the text must be the newest version, as for run. */
  if ((st = data_check_lock(exp, sheet, err)) != CORE_OK)
    goto done;
  /* --pairs: every pair of arms under the same rule, exploratory (the
   * output says so) unless the rule registered them. */
  if (opts->pairs && sheet->hosts.declared) {
    st = core_fail(err, CORE_EUSAGE,
                   "%s: --pairs is not made across hosts yet: the "
                   "cross-host estimate is of each arm against the reference",
                   opts->args[0]);
    goto done;
  }
  if (opts->pairs && sheet->rule.pairs == PROTO_PAIRS_NONE)
    sheet->rule.pairs = PROTO_PAIRS_EXPLORATORY;
  if ((st = analysis_experiment(sheet, exp, threads, &sum, err)) != CORE_OK)
    goto done;
  /* A bundle was verified as it was opened. */
  if (!bundle && (st = mark_unverified(opts, exp, sum, out, err)) != CORE_OK)
    goto done;
  if (opts->json) {
    if ((st = analysis_json(sum, &text, err)) != CORE_OK)
      goto done;
  } else {
    analysis_write_table(sum, sheet, cli_term_width(out), &text);
  }
  if (text.oom) {
    st = core_fail(err, CORE_ENOMEM, "analyze: out of memory");
    goto done;
  }
  if (text.len && fwrite(text.data, 1, text.len, out) != text.len)
    st = core_fail(err, CORE_EIO, "analyze: cannot write the output");
done:
  core_buf_free(&text);
  analysis_summary_free(sum);
  data_experiment_free(exp);
  proto_sheet_free(sheet);
  return st;
}
