/* harness.h: the few macros every unit test uses.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_HARNESS_H
#define PREREG_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int harness_failures;
static int harness_checks;

#define CHECK(cond)                                                           \
  do {                                                                        \
    harness_checks++;                                                         \
    if (!(cond)) {                                                            \
      harness_failures++;                                                     \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,        \
              #cond);                                                         \
    }                                                                         \
  } while (0)

#define CHECK_STR(a, b)                                                       \
  do {                                                                        \
    const char *check_a_ = (a), *check_b_ = (b);                              \
    harness_checks++;                                                         \
    if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {          \
      harness_failures++;                                                     \
      fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__,        \
              check_a_ ? check_a_ : "(null)",                                 \
              check_b_ ? check_b_ : "(null)");                                \
    }                                                                         \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                 \
  do {                                                                        \
    double check_a_ = (a), check_b_ = (b);                                    \
    harness_checks++;                                                         \
    if (!(fabs(check_a_ - check_b_) <= (tol))) {                              \
      harness_failures++;                                                     \
      fprintf(stderr, "%s:%d: %.17g != %.17g (tol %g)\n", __FILE__, __LINE__, \
              check_a_, check_b_, (double)(tol));                             \
    }                                                                         \
  } while (0)

/* Ends main: prints a closing line and returns the exit code. */
#define HARNESS_END()                                                         \
  (printf("%d passed, %d failed\n", harness_checks - harness_failures,        \
          harness_failures),                                                  \
   harness_failures ? 1 : 0)

#endif
