/* export.c: the rows of an experiment as the analysis counts them, one
 * per run and metric, each with its status under the one counting rule
 * (count.c), as CSV or JSON, for readers who want the figures in pandas
 * or R without writing the rule again.
 * SPDX-License-Identifier: MIT
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"

/* A row's status: counted (or imported, an imported row that counts),
 * else the fate of its run, and "not analysed" for a row of a counted
 * run that holds no value or a metric its workload does not declare. */
static const char *status_of(const data_run_fate *f, const proto_sheet *s,
                             const data_row *r) {
  if (data_row_analysed(f, s, r))
    return strcmp(r->source ? r->source : "", "import") == 0 ? "imported"
                                                             : "counted";
  switch ((data_fate)f->fate) {
  case DATA_SUPERSEDED:
    return "superseded";
  case DATA_INVALID:
    return "invalid";
  case DATA_BEYOND_PLAN:
    return "beyond the plan";
  case DATA_NOT_IN_SHEET:
    return "not in the sheet";
  case DATA_COUNTED:
    break;
  }
  return "not analysed";
}

static void csv_row(core_buf *b, const data_row *r, const char *unit,
                    const char *status, const char *why) {
  const char *f[] = {r->workload, r->arm, r->metric};
  char v[40] = "";
  for (size_t i = 0; i < 3; i++) {
    data_csv_field(b, f[i]);
    core_buf_puts(b, ",");
  }
  /* The shortest text that reads back as the same double. */
  for (int d = 15; r->has_value && d <= 17; d++) {
    snprintf(v, sizeof v, "%.*g", d, r->value);
    if (strtod(v, NULL) == r->value)
      break;
  }
  core_buf_printf(b, "%s,", v);
  const char *g[] = {unit, r->run_id, r->batch, r->host, status, why};
  for (size_t i = 0; i < 6; i++) {
    data_csv_field(b, g[i] ? g[i] : "");
    core_buf_puts(b, i < 5 ? "," : "\n");
  }
}

static json_t *json_row(const data_row *r, const char *unit,
                        const char *status, const char *why) {
  json_t *o = json_object();
  if (!o)
    return NULL;
  json_object_set_new(o, "workload", json_string(r->workload));
  json_object_set_new(o, "arm", json_string(r->arm));
  json_object_set_new(o, "metric", json_string(r->metric));
  json_object_set_new(o, "value",
                      r->has_value ? json_real(r->value) : json_null());
  json_object_set_new(o, "unit", json_string(unit ? unit : ""));
  json_object_set_new(o, "run_id", json_string(r->run_id ? r->run_id : ""));
  json_object_set_new(o, "batch", json_string(r->batch ? r->batch : ""));
  json_object_set_new(o, "host", json_string(r->host ? r->host : ""));
  json_object_set_new(o, "status", json_string(status));
  json_object_set_new(o, "reason", why ? json_string(why) : json_null());
  return o;
}

/* One row to the output: CSV text, or an object of the JSON array. */
static core_status put_row(const data_counted *c, const proto_sheet *s,
                           const data_rowset *rows, size_t i, int all,
                           json_t *arr, core_buf *out, core_err *err) {
  const data_row *r = &rows->rows[i];
  const data_run_fate *f = &c->runs[c->row_run[i]];
  const char *status = status_of(f, s, r);
  int counts = !strcmp(status, "counted") || !strcmp(status, "imported");
  if (!all && !counts)
    return CORE_OK;
  int oom = 0;
  char *why = counts ? NULL : data_row_why(c, s, rows, i, &oom);
  if (oom)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  const char *unit = proto_metric_unit_of(s, r->metric ? r->metric : "");
  core_status st = CORE_OK;
  if (arr) {
    json_t *o = json_row(r, unit, status, why);
    if (!o || json_array_append_new(arr, o) != 0)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
  } else {
    csv_row(out, r, unit, status, why);
  }
  core_free(why);
  return st;
}

core_status data_export(const data_experiment *exp, const proto_sheet *s,
                        int json, int all, core_buf *out, core_err *err) {
  data_rowset rows = {0};
  data_counted c;
  json_t *arr = NULL;
  int upto = exp->n_versions ? exp->versions[exp->n_versions - 1].number : 0;
  memset(&c, 0, sizeof c);
  core_status st = data_load_rows(exp, &rows, err);
  if (st == CORE_OK)
    st = data_count_rows(s, exp, upto, &rows, &c, err);
  data_json_init();
  if (st == CORE_OK && json && !(arr = json_array()))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK && !json)
    core_buf_puts(out, DATA_EXPORT_HEADER "\n");
  for (size_t i = 0; st == CORE_OK && i < rows.n; i++)
    st = put_row(&c, s, &rows, i, all, arr, out, err);
  if (st == CORE_OK && arr) {
    char *text = data_json_dump_flags(
        arr, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    if (!text)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    else
      core_buf_printf(out, "%s\n", text);
    core_free(text);
  }
  if (st == CORE_OK && out->oom)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  json_decref(arr);
  data_counted_free(&c);
  data_rowset_free(&rows);
  return st;
}
