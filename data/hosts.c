/* hosts.c: rows across hosts: the rows a lost node left (kept, never
 * counted), and a row as one line between the node runner and the
 * coordinator.
 * SPDX-License-Identifier: MIT
 */
#include <jansson.h>
#include <string.h>

#include "data/data_internal.h"

int data_row_node_lost(const data_row *r) {
  return !r->valid && r->reason &&
         strncmp(r->reason, DATA_NODE_LOST, strlen(DATA_NODE_LOST)) == 0;
}

/* {==== What a host completed ==== */

int data_row_fills_plan(const proto_sheet *s, const data_row *r) {
  if (!r->source || strcmp(r->source, "run") != 0 || data_row_node_lost(r))
    return 0;
  for (size_t i = 0; i < s->n_amendments; i++)
    for (size_t k = 0; k < s->amendments[i].n_supersedes; k++)
      if (r->workload &&
          !strcmp(s->amendments[i].supersedes[k], r->workload) &&
          r->sheet_version < (int)i + 1)
        return 0;
  return 1;
}

core_status data_host_rounds(const proto_sheet *s, const data_rowset *rows,
                             const char *host, long *done, long *planned,
                             core_err *err) {
  int quick = 0;
  *done = *planned = 0;
  for (size_t i = 0; i < rows->n && !quick; i++)
    quick = rows->rows[i].quick && rows->rows[i].host &&
            !strcmp(rows->rows[i].host, host);
  for (size_t w = 0; w < s->n_workloads; w++) {
    const proto_workload *wl = &s->workloads[w];
    if (wl->runs <= 0 || !proto_workload_runs_itself(wl))
      continue;
    long rounds = quick && wl->runs > 3 ? 3 : wl->runs;
    /* seen[r * arms + a]: arm a has a run of round r (1-based). */
    unsigned char *seen =
        core_calloc((size_t)(rounds + 1) * (s->n_arms ? s->n_arms : 1), 1);
    if (!seen)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    for (size_t i = 0; i < rows->n; i++) {
      const data_row *r = &rows->rows[i];
      long a = proto_arm_index(s, r->arm);
      if (a >= 0 && r->host && !strcmp(r->host, host) && r->workload &&
          !strcmp(r->workload, wl->name) && r->round >= 1 &&
          r->round <= rounds && data_row_fills_plan(s, r))
        seen[(size_t)r->round * s->n_arms + (size_t)a] = 1;
    }
    for (long r = 1; r <= rounds; r++) {
      size_t a = 0;
      while (a < s->n_arms && seen[(size_t)r * s->n_arms + a])
        a++;
      *done += a == s->n_arms;
    }
    *planned += rounds;
    core_free(seen);
  }
  return CORE_OK;
}

/* }==== */

/* {==== A row on a line ==== */

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
  char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
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

/* }==== */
