/* notices.c: the notices at the top of the report, one list for every
 * format: Markdown (and so HTML) shows them where each belongs (in the
 * status quote, above the title, under it), XLSX every one under the
 * Summary's status line, in the same words.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "reports/report.h"
#include "reports/report_internal.h"

/* A notice of fixed words when on: 1 with *n filled, 0 when off, -1 when
 * out of memory. */
static int fixed(report_notice *n, int on, const char *heading,
                 const char *text, const char *section) {
  if (!on)
    return 0;
  n->where = REPORT_NOTICE_STATUS;
  n->heading = heading;
  n->section = section;
  n->text = core_strdup(text);
  return n->text ? 1 : -1;
}

/* The flags of the status line, each said in words. */

static int incomplete(const report_input *in, report_notice *n) {
  data_status st = report_status(in);
  if (!st.incomplete)
    return 0;
  n->where = REPORT_NOTICE_STATUS;
  n->heading = "INCOMPLETE";
  if (st.hosts_short > 0)
    n->text = core_asprintf(
        "%ld of the %ld runs the plan calls for were collected; every host "
        "runs the whole plan, and %ld of the %ld hosts %s not (runs "
        "collected of planned: %s)",
        st.collected, st.planned, st.hosts_short, st.hosts,
        st.hosts_short == 1 ? "has" : "have", st.short_hosts);
  else
    n->text = core_asprintf("%ld of the %ld runs the plan calls for were "
                            "collected",
                            st.collected, st.planned);
  return n->text ? 1 : -1;
}

static int quick(const report_input *in, report_notice *n) {
  return fixed(n, report_status(in).quick, "QUICK",
               "runs collected with `run --quick` (a demo, not the "
               "registered plan) are counted",
               NULL);
}

static int interrupted(const report_input *in, report_notice *n) {
  return fixed(n, report_status(in).interrupted, "INTERRUPTED",
               "a batch whose runs are counted was interrupted or is "
               "unfinished",
               NULL);
}

static int beyond_plan(const report_input *in, report_notice *n) {
  return fixed(n, report_status(in).beyond_plan, "BEYOND PLAN",
               "valid runs past the plan's `runs` are not analysed",
               "What fell along the way");
}

static int imported(const report_input *in, report_notice *n) {
  return fixed(n, report_status(in).imported, "IMPORTED",
               "runs measured outside prereg are counted", NULL);
}

static int amended_after_data(const report_input *in, report_notice *n) {
  return fixed(n, report_status(in).amended_after_data, "AMENDED AFTER DATA",
               "an amendment was filed after data existed", "Deviations");
}

static int inputs_changed(const report_input *in, report_notice *n) {
  return fixed(n, report_status(in).inputs_changed, "INPUTS CHANGED",
               "a batch whose runs are counted found its inputs changed, or "
               "written and put back, when it ended: not every run used the "
               "registered inputs (its facts name them: `inputs_changed`)",
               NULL);
}

static int unverified(const report_input *in, report_notice *n) {
  return fixed(n, report_status(in).unverified, "UNVERIFIED",
               "the data did not verify (below)", NULL);
}

/* What verify found, under the title: the problems, one a line. */
static int verify_problems(const report_input *in, report_notice *n) {
  if (!in->unverified)
    return 0;
  n->where = REPORT_NOTICE_HEAD;
  n->heading = "UNVERIFIED";
  n->details = in->unverified;
  n->text = core_strdup("`prereg verify` found problems with the data "
                        "behind this report; it was written with `--force`");
  return n->text ? 1 : -1;
}

/* Each notice, in the order they are shown: 1 with *n filled, 0 when
 * it does not apply, -1 when out of memory. */
typedef int (*notice_fn)(const report_input *in, report_notice *n);
static const notice_fn notices[] = {
    incomplete,     quick,      interrupted,
    beyond_plan,    imported,   amended_after_data,
    inputs_changed, unverified, report_plan_rule_notice,
    verify_problems};

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

static void notice_markdown(core_buf *b, const report_notice *n) {
  if (n->where == REPORT_NOTICE_STATUS)
    core_buf_printf(b, "> - %s: %s", n->heading, n->text);
  else
    core_buf_printf(b, "> **%s.** %s", n->heading, n->text);
  if (n->details) { /* each line not empty an item of its quote */
    core_buf_puts(b, ":\n");
    report_md_lines(b, n->details, ">\n> - ");
    core_buf_puts(b, "\n");
    return;
  }
  if (n->section)
    core_buf_printf(b, " (see %s)", n->section);
  core_buf_puts(b, n->where == REPORT_NOTICE_STATUS ? ".\n" : ".\n\n");
}

int report_notices_markdown(core_buf *b, const report_input *in, int where) {
  report_notice n[REPORT_MAX_NOTICES];
  int count = report_notices(in, n), shown = 0;
  if (count < 0)
    b->oom = 1; /* the caller checks b->oom: one check for all */
  for (int i = 0; i < count; i++)
    if (n[i].where == where) {
      notice_markdown(b, &n[i]);
      shown++;
    }
  report_notices_free(n, count);
  return shown;
}

/* The first clause of text, up to "; ", ": " or " (", without
 * backticks, and at most REPORT_NOTE_MAX bytes (cut at a character). */
static char *first_clause(const char *text) {
  size_t len = strlen(text);
  static const char *const ends[] = {"; ", ": ", " ("};
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
    const char *e = strstr(text, ends[i]);
    if (e && (size_t)(e - text) < len)
      len = (size_t)(e - text);
  }
  if (len > REPORT_NOTE_MAX) {
    len = REPORT_NOTE_MAX;
    while (len && ((unsigned char)text[len] & 0xC0) == 0x80)
      len--;
  }
  char *out = core_malloc(len + 1), *o = out;
  if (!out)
    return NULL;
  for (size_t i = 0; i < len; i++)
    if (text[i] != '`')
      *o++ = text[i];
  *o = '\0';
  return out;
}

int report_plot_notes_get(const report_input *in, report_plot_notes *pn) {
  report_notice n[REPORT_MAX_NOTICES];
  int count = report_notices(in, n);
  memset(pn, 0, sizeof *pn);
  if (count < 0)
    return -1;
  for (int i = 0; i < count; i++) {
    /* One line a heading: UNVERIFIED's flag and verify's findings
     * would say the same first clause twice. */
    int seen = 0;
    for (size_t j = 0; j < pn->n; j++)
      seen |= strcmp(pn->v[j].heading, n[i].heading) == 0;
    if (seen)
      continue;
    if (!(pn->text[pn->n] = first_clause(n[i].text))) {
      report_notices_free(n, count);
      report_plot_notes_free(pn);
      return -1;
    }
    pn->v[pn->n].heading = n[i].heading;
    pn->v[pn->n].text = pn->text[pn->n];
    pn->n++;
  }
  report_notices_free(n, count);
  return 0;
}

void report_plot_notes_free(report_plot_notes *pn) {
  for (size_t i = 0; i < pn->n; i++)
    core_free(pn->text[i]);
  memset(pn, 0, sizeof *pn);
}
