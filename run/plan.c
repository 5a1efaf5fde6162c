/* run_plan.c: the order in which a round runs its arms, drawn from the
 * rule's seed so that anyone can re-derive it from the sheet.
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>

#include "run/run.h"

/* splitmix64 (Steele, Lea, Flood 2014): tiny, well mixed, and trivial to
 * re-implement in another language to check a recorded order. It is not
 * the analysis RNG on purpose: changing the number of resamples must
 * never change the run order. */
static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static uint64_t fnv1a64(const char *s) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001B3ULL;
  }
  return h;
}

void run_round_order(unsigned long seed, const char *workload, long round,
                     size_t n, size_t *order) {
  uint64_t s = (uint64_t)seed * 0x9E3779B97F4A7C15ULL ^ fnv1a64(workload) ^
               (uint64_t)round;
  for (size_t i = 0; i < n; i++)
    order[i] = i;
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)(splitmix64(&s) % (uint64_t)i);
    size_t t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
}
