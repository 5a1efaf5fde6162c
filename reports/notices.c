/* notices.c: the notices at the top of the report, one list for every
 * format: Markdown (and so HTML) shows them above the title, XLSX under
 * the Summary's status line.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

/* Each notice, in the order they are shown: 1 with *n filled, 0 when
 * it does not apply, -1 when out of memory. */
typedef int (*notice_fn)(const report_input *in, report_notice *n);
static const notice_fn notices[] = {report_plan_rule_notice};

int report_notices(const report_input *in,
                   report_notice out[REPORT_MAX_NOTICES]) {
  int count = 0;
  _Static_assert(sizeof notices / sizeof notices[0] <= REPORT_MAX_NOTICES,
                 "every notice has a place");
  for (size_t i = 0; i < sizeof notices / sizeof notices[0]; i++) {
    memset(&out[count], 0, sizeof out[count]);
    int got = notices[i](in, &out[count]);
    if (got < 0) {
      report_notices_free(out, count);
      return -1;
    }
    count += got;
  }
  return count;
}

void report_notices_free(report_notice *n, int count) {
  for (int i = 0; i < count; i++)
    core_free(n[i].text);
}

void report_notices_markdown(core_buf *b, const report_input *in) {
  report_notice n[REPORT_MAX_NOTICES];
  int count = report_notices(in, n);
  if (count < 0)
    b->oom = 1; /* the caller checks b->oom: one check for all */
  for (int i = 0; i < count; i++) {
    core_buf_printf(b, "> **%s.** %s", n[i].heading, n[i].text);
    if (n[i].section)
      core_buf_printf(b, " (see %s)", n[i].section);
    core_buf_puts(b, ".\n\n");
  }
  report_notices_free(n, count);
}
