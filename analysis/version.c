/* version.c: the GSL version prereg was built with, for report
 * provenance (only analysis/ may include GSL's headers).
 * SPDX-License-Identifier: MIT
 */
#include <gsl/gsl_version.h>

#include "analysis/analysis.h"

const char *analysis_gsl_version(void) {
  return GSL_VERSION;
}
