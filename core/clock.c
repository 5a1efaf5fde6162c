/* clock.c: wall-clock stamps (UTC), reading them back, and the monotonic
 * clock.
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

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil): timegm() is neither C11 nor POSIX, and mktime() would
 * bring in the local time zone. */
static long long days_from_civil(long long y, int m, int d) {
  long long era, yoe, doy, doe;
  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = y - era * 400;
  doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* The n decimal digits at s (already checked) as a number. */
static int digits(const char *s, int n) {
  int v = 0;
  for (int i = 0; i < n; i++)
    v = v * 10 + (s[i] - '0');
  return v;
}

static int days_in_month(int y, int m) {
  static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : days[m - 1];
}

core_status core_parse_utc(const char *s, long long *secs, core_err *err) {
  /* "YYYY-MM-DDTHH:MM:SSZ": the separators at fixed places, digits
   * everywhere else, nothing after the Z. */
  static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
  int y, mo, d, h, mi, se;
  size_t i;
  for (i = 0; s && s[i] && i < sizeof shape - 1; i++)
    if (shape[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != shape[i])
      break;
  if (!s || i != sizeof shape - 1 || s[i] != '\0')
    return core_fail(err, CORE_EINPUT,
                     "'%.64s' is not a UTC time like 2026-11-30T01:37:25Z",
                     s ? s : "");
  y = digits(s, 4);
  mo = digits(s + 5, 2);
  d = digits(s + 8, 2);
  h = digits(s + 11, 2);
  mi = digits(s + 14, 2);
  se = digits(s + 17, 2);
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 ||
      mi > 59 || se > 59)
    return core_fail(err, CORE_EINPUT,
                     "'%s' is not a UTC time: a field is out of range", s);
  *secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
  return CORE_OK;
}
