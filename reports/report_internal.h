/* report_internal.h: what the files of reports/ share (private).
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_REPORT_INTERNAL_H
#define PREREG_REPORT_INTERNAL_H

#include "reports/report.h"

/* Distinct (group, value) pairs with counts; entries borrow the rows'
 * strings (or static ones). At most 64 pairs; the rest are counted in
 * other. */
typedef struct report_tally_entry {
  const char *group, *value;
  size_t count;
} report_tally_entry;

typedef struct report_tally {
  report_tally_entry *v;
  size_t n, other;
} report_tally;

/* What the rows say about the setup (one pass over the rows). It owns
 * no memory: the tallies count into its own arrays, and the strings are
 * borrowed from the input's rows. */
typedef struct report_row_facts {
  report_tally digests; /* group: arm */
  report_tally caches;  /* group: workload */
  report_tally hosts;   /* group: "" */
  report_tally_entry digests_v[64], caches_v[64], hosts_v[64]; /* storage */
  size_t runs, quick_runs;
  size_t leaked_runs; /* runs that left processes running ("left running:"
                         in their reason), stopped by prereg */
  const char *newest; /* latest started_at, or NULL */
  /* Page cache before the runs (cached_mib=N in cache_state). */
  int has_cached;
  long cached_min, cached_max;
} report_row_facts;

/** Reads in->rows once. OUT: *f filled from scratch; valid while in's
 * rows are, and while f itself stays where it is (its tallies point
 * into it). */
void report_facts_of_rows(const report_input *in, report_row_facts *f);

/** Appends report.md for in to b (the caller's buffer); doc->plots must
 * be filled already. */
void report_markdown(const report_input *in, const report_doc *doc,
                     core_buf *b);

#endif
