/* hosts.c: rows across hosts: a row as one line between the node runner
 * and the coordinator, read back exactly as a batch file holds it.
 * SPDX-License-Identifier: MIT
 */
#include <jansson.h>
#include <string.h>

#include "data/data_internal.h"

/* A row on a line */

/* The line holds the CSV record, so that the coordinator reads back
 * exactly what a batch file would hold (same quoting, numbers in their
 * shortest exact form, same checks when parsed); JSON only makes it one
 * line, since a reason may hold a newline. */
void data_row_line(const data_row *r, core_buf *out) {
  core_buf rec;
  core_buf_init(&rec);
  data_csv_row(&rec, r, NULL, NULL);
  data_json_init();
  json_t *j = rec.oom ? NULL : json_stringn(rec.data, rec.len);
  char *text = j ? data_json_dump_flags(j, JSON_ENCODE_ANY) : NULL;
  if (text)
    core_buf_puts(out, text);
  else
    out->oom = 1;
  core_free(text);
  json_decref(j);
  core_buf_free(&rec);
}

typedef struct unline_ctx {
  data_row *r;
  int rows;
} unline_ctx;

static core_status on_record(void *vctx, char **f, size_t n, long line,
                             core_err *err) {
  unline_ctx *c = vctx;
  if (c->rows++)
    return core_fail(err, CORE_EINPUT, "a row line holds more than one row");
  return data_row_parse(c->r, f, n, "row line", line, err);
}

core_status data_row_unline(const char *text, data_row *r, core_err *err) {
  memset(r, 0, sizeof *r);
  data_json_init();
  json_error_t je;
  json_t *j = json_loads(text, JSON_DECODE_ANY, &je);
  if (!j || !json_is_string(j)) {
    json_decref(j);
    return core_fail(err, CORE_EINPUT, "not a row line: %s",
                     j ? "not a JSON string" : je.text);
  }
  unline_ctx c = {r, 0};
  csvscan_result res;
  core_status st =
      data_csv_scan("row line", json_string_value(j), json_string_length(j),
                    on_record, &c, &res, err);
  json_decref(j);
  if (st == CORE_OK && (res.torn || c.rows != 1))
    st = core_fail(err, CORE_EINPUT, "a row line holds no whole row");
  if (st != CORE_OK)
    data_row_free_strings(r);
  return st;
}

void data_row_free_strings(data_row *r) {
  data_row_clear(r);
}
