/* harness_probe.c: a unit test on harness.h that does what argv[1] says,
 * for harness_selftest.sh: "none" runs no check, "skip" skips a part and
 * passes one check, "fail" fails a CHECK and a CHECK_NAMED, "pass"
 * passes one of each kind.
 * SPDX-License-Identifier: MIT
 */
#include "harness.h"

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  int two = 2;
  if (strcmp(mode, "skip") == 0) {
    HARNESS_SKIP("no such device here");
    CHECK(two == 2);
  } else if (strcmp(mode, "fail") == 0) {
    CHECK(two == 3);
    CHECK_NAMED("two is odd", two % 2 == 1);
    CHECK_STR("a", "b");
    CHECK_NEAR(1.0, 1.5, 0.1);
  } else if (strcmp(mode, "pass") == 0) {
    CHECK(two == 2);
    CHECK_NAMED("two is even", two % 2 == 0);
    CHECK_STR("a", "a");
    CHECK_NEAR(1.0, 1.05, 0.1);
  }
  return HARNESS_END();
}
