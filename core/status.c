/* status.c: the status table, error messages and exit codes.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

static const char *const status_text[] = {
#define X(code, text) text,
    CORE_STATUS_LIST(X)
#undef X
};
_Static_assert(sizeof status_text / sizeof status_text[0] == CORE_STATUS_COUNT,
               "status_text out of sync with CORE_STATUS_LIST");

const char *core_strerror(core_status st) {
  if ((unsigned)st >= CORE_STATUS_COUNT)
    return "unknown status";
  return status_text[st];
}

core_status core_fail(core_err *err, core_status st, const char *fmt, ...) {
  if (err) {
    va_list ap;
    err->status = st;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return st;
}

void core_err_prefix(core_err *err, const char *fmt, ...) {
  char head[1024];
  char old[sizeof err->msg];
  va_list ap;
  if (!err)
    return;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  /* Truncating the tail is fine: the head names where it happened. */
  {
    size_t hl = strlen(head);
    if (hl >= sizeof err->msg)
      hl = sizeof err->msg - 1;
    memcpy(err->msg, head, hl);
    memcpy(err->msg + hl, old, sizeof err->msg - hl - 1);
    err->msg[sizeof err->msg - 1] = '\0';
  }
}

int core_exit_code(core_status st) {
  switch (st) {
  case CORE_OK:
    return 0;
  case CORE_EUSAGE:
  case CORE_EPROTOCOL:
  case CORE_EINPUT:
    return 2;
  default:
    return 1;
  }
}
