/* analysis_internal.h: what the files of analysis/ share (private): the
 * state an analysis gathers row by row, the pieces that build the summary
 * from it, and the analysis across hosts built on them.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_ANALYSIS_INTERNAL_H
#define PREREG_ANALYSIS_INTERNAL_H

#include "analysis/analysis.h"

/* The values of one cell (workload x metric x arm) that count, in the
 * order they came, with each one's row position and batch. */
typedef struct acc_vals {
  double *v;
  unsigned *order, *batch;
  size_t n, cap;
} acc_vals;

/* A row that does not count: where it belongs, why, and its run (rows
 * are per run and metric; runs are what is counted). Strings are
 * interned in the stream. */
typedef struct acc_drop {
  size_t w, a; /* sheet indexes; n_workloads / n_arms when unknown */
  long m;      /* metric index in its workload; -1: the row names no
                  metric (it belongs to every metric of its workload) */
  const char *wname, *aname, *reason, *key;
  int superseded;
} acc_drop;

/* Distinct strings, each copied once. */
typedef struct acc_strings {
  char **slot;
  size_t n, cap; /* cap: a power of two, or 0 */
} acc_strings;

/* One analysis being gathered: under the current sheet, or the
 * registered one. */
typedef struct acc {
  const proto_sheet *sheet;   /* structure, rule and hypotheses */
  const proto_sheet *amended; /* whose amendments supersede; NULL: none */
  size_t amend_base;          /* amendments already in version 0 */
  const data_experiment *exp; /* the chain, or NULL */
  size_t *cell_base;          /* per workload: its first cell */
  size_t n_cells;             /* cells in order workload, metric, arm */
  acc_vals *vals;             /* n_cells */
  acc_drop *drops;
  size_t n_drops, cap_drops;
} acc;

struct analysis_across; /* hosts.c: one analysis per host */

struct analysis_stream {
  acc cur, orig;
  struct analysis_across *across; /* a sheet with hosts, else NULL */
  int has_orig;
  char *orig_why; /* why the registered rule's verdicts are given */
  int version;    /* the sheet's version number */
  acc_strings strings;
  char **batches; /* distinct batch names, in the order first seen */
  size_t n_batches, cap_batches;
  size_t last_batch; /* index of the previous row's batch */
  size_t n_rows;
};

/** An analysis's state under sheet (stream.c): acc_init makes it, acc_free
 * frees it, acc_classify counts one row (order: its place among the rows
 * read, batch: its batch's index). */
core_status acc_init(acc *c, const proto_sheet *sheet,
                     const proto_sheet *amended, size_t amend_base,
                     const data_experiment *exp, core_err *err);
void acc_free(acc *c);
core_status acc_classify(acc *c, acc_strings *strs, const data_row *r,
                         size_t order, size_t batch, core_err *err);

/* {==== Across hosts (hosts.c) ==== */

/** A sheet with hosts: st->across, an analysis per host (the named
 * hosts, or, for a count, each host as its rows appear) and the rounds
 * each completed. */
core_status analysis_across_begin(analysis_stream *st,
                                  const proto_sheet *sheet, size_t amend_base,
                                  const data_experiment *exp, core_err *err);
/** Row r into its host's analysis and rounds. */
core_status analysis_across_add(analysis_stream *st, const data_row *r,
                                size_t order, size_t batch, core_err *err);
/** Each host's summary, then the entries across hosts: s->results and
 * s->hypotheses become those (analysis.h), each host's go to
 * s->host_results and s->host_hypotheses. */
core_status analysis_across_end(analysis_stream *st, int threads,
                                analysis_summary *s, core_err *err);
void analysis_across_free(analysis_stream *st);

/* }==== */

/** Interns len bytes of s; NULL when out of memory. */
const char *acc_intern(acc_strings *set, const char *s);

/** Builds the summary of one gathered analysis (analyze.c). The batch
 * names are copied. OUT: *out newly allocated, NULL on error. */
core_status acc_summary(acc *c, const analysis_stream *st, const char *sha256,
                        int version, int threads, int keep_values,
                        analysis_summary **out, core_err *err);

/** Why the registered rule's verdicts are due as well, or NULL (*why)
 * when they are not (analyze.c). */
core_status analysis_original_reason(const proto_sheet *sheet,
                                     const proto_sheet *orig,
                                     const data_experiment *exp,
                                     size_t amend_base, char **why,
                                     core_err *err);

/** Fills c->drift from c's values (analysis_drift), with the noise band
 * low to high. */
core_status analysis_drift_of(analysis_cell *c, size_t n_batches, double low,
                              double high, core_err *err);

#endif
