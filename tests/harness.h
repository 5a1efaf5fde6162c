/* harness.h: the few macros every unit test uses.
 * SPDX-License-Identifier: MIT
 *
 * Every check has a name: CHECK(cond) is named by its condition as
 * written, CHECK_NAMED(what, cond) by what; CHECK_STR and CHECK_NEAR by
 * their two expressions. A failure prints FILE:LINE: NAME and what was
 * found; with HARNESS_VERBOSE=1 in the environment every check that
 * passes is listed too. HARNESS_SKIP(why) counts a part of the test that
 * could not run here and prints why. HARNESS_END() ends main: it prints
 * the counts, and fails (exit 1) on a failed check or when no check ran
 * at all, so that a test whose checks never ran cannot pass.
 */
#ifndef PREREG_HARNESS_H
#define PREREG_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_failures;
static int harness_checks;
static int harness_skips;

/* Counts one check named name at file:line; prints it when it failed,
 * or when HARNESS_VERBOSE is set. Returns ok. */
static inline int harness_record(int ok, const char *file, int line,
                                 const char *name) {
  const char *verbose = getenv("HARNESS_VERBOSE");
  harness_checks++;
  if (!ok) {
    harness_failures++;
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, name);
  } else if (verbose && verbose[0] == '1') {
    printf("ok %s:%d: %s\n", file, line, name);
  }
  return ok;
}

#define CHECK_NAMED(what, cond)                                               \
  ((void)harness_record((cond) ? 1 : 0, __FILE__, __LINE__, (what)))

#define CHECK(cond) CHECK_NAMED(#cond, cond)

#define CHECK_STR(a, b)                                                       \
  do {                                                                        \
    const char *check_a_ = (a), *check_b_ = (b);                              \
    if (!harness_record(check_a_ && check_b_ && !strcmp(check_a_, check_b_),  \
                        __FILE__, __LINE__, #a " equals " #b))                \
      fprintf(stderr, "  \"%s\" != \"%s\"\n", check_a_ ? check_a_ : "(null)", \
              check_b_ ? check_b_ : "(null)");                                \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                 \
  do {                                                                        \
    double check_a_ = (a), check_b_ = (b);                                    \
    if (!harness_record(fabs(check_a_ - check_b_) <= (tol), __FILE__,         \
                        __LINE__, #a " is within " #tol " of " #b))           \
      fprintf(stderr, "  %.17g != %.17g (tol %g)\n", check_a_, check_b_,      \
              (double)(tol));                                                 \
  } while (0)

/* A part of the test that cannot run here (why: a string), counted and
 * printed, never silently passed over. */
#define HARNESS_SKIP(why)                                                     \
  (harness_skips++,                                                           \
   (void)printf("%s:%d: skipped: %s\n", __FILE__, __LINE__, (why)))

/* Ends main: prints a closing line and returns the exit code, 1 when a
 * check failed or none ran. */
#define HARNESS_END()                                                         \
  (printf("%d passed, %d failed, %d skipped\n",                               \
          harness_checks - harness_failures, harness_failures,                \
          harness_skips),                                                     \
   harness_checks == 0                                                        \
       ? (fprintf(stderr, "no check ran: the test proves nothing\n"), 1)      \
   : harness_failures ? 1                                                     \
                      : 0)

#endif
