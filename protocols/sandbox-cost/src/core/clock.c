/* clock.c: wall-clock stamps (UTC) and the monotonic clock.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <time.h>

#include "core/core.h"

void core_utc_now(char out[32]) {
  /* PREREG_NOW pins the clock for golden tests, like SOURCE_DATE_EPOCH. */
  const char *pinned = getenv("PREREG_NOW");
  time_t t = time(NULL);
  struct tm tm;
  if (pinned && *pinned) {
    char *end;
    long long v = strtoll(pinned, &end, 10);
    if (*end == '\0')
      t = (time_t)v;
  }
  gmtime_r(&t, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double core_monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
