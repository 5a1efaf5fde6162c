/* fuzz_main.c: the libFuzzer entry of one target, chosen at build time by
 * FUZZ_TARGET_NAME (tests/fuzz/CMakeLists.txt builds one per target).
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const fuzz_target *t;
  if (!t && !(t = fuzz_target_find(FUZZ_TARGET_NAME))) {
    fprintf(stderr, "no fuzz target '%s'\n", FUZZ_TARGET_NAME);
    abort();
  }
  return t->run(data, size);
}
