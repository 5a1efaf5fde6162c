/* bundles_internal.h: what the files of bundles/ share and nobody else
 * sees.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_BUNDLES_INTERNAL_H
#define PREREG_BUNDLES_INTERNAL_H

#include "bundles/bundles.h"
#include "data/data.h"

/* Bundles (bundle.c writes them, bundle_read.c reads them) */

#define DATA_BUNDLE_HEADER "# prereg bundle 1"
#define DATA_BUNDLE_MANIFEST "BUNDLE-MANIFEST"
/* What a bundle's report holds for the commands that read a bundle: the
 * analysis it was rendered from and the Markdown that records its
 * digest (reports/ writes them as analysis.json and report.md). */
#define DATA_BUNDLE_REPORT_ANALYSIS "report/analysis.json"
#define DATA_BUNDLE_REPORT_MD "report/report.md"
/* The report's edition (reports/report.h, REPORT_FORMAT_FILE). */
#define DATA_BUNDLE_REPORT_FORMAT "report/FORMAT"

/** The contract's id pattern: [a-z0-9][a-z0-9-]* (n bytes of s). */
int data_valid_id(const char *s, size_t n);

#endif
