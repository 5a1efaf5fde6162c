/* libraries.c: the versions of the libraries a report is rendered with,
 * which every page that says how it was made names.
 * SPDX-License-Identifier: MIT
 */
#include <cmark-gfm_version.h>
#include <xlsxwriter.h>

#include "reports/report.h"
#include "reports/report_internal.h"

const char *report_cmark_version(void) {
  return CMARK_GFM_VERSION_STRING;
}

const char *report_xlsxwriter_version(void) {
  return LXW_VERSION;
}
