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

/* One host: its name, whether its rows are of run --quick, and per
 * workload a map of (round, arm) filled. */
typedef struct host_map {
  char *name;
  int quick;
  unsigned char **seen; /* per workload: (runs + 1) * n_arms, or NULL */
} host_map;

struct data_rounds {
  const proto_sheet *s;
  host_map *h;
  size_t n, cap;
};

data_rounds *data_rounds_new(const proto_sheet *s) {
  data_rounds *c = core_calloc(1, sizeof *c);
  if (c)
    c->s = s;
  return c;
}

static int runs_here(const proto_workload *w) {
  return w->runs > 0 && proto_workload_runs_itself(w);
}

/* The host named name, made on first sight; NULL when out of memory. */
static host_map *host_of(data_rounds *c, const char *name) {
  for (size_t i = 0; i < c->n; i++)
    if (!strcmp(c->h[i].name, name))
      return &c->h[i];
  host_map *nv = core_grow(c->h, &c->cap, c->n, sizeof *nv, 8);
  if (!nv)
    return NULL;
  c->h = nv;
  host_map *h = &c->h[c->n];
  memset(h, 0, sizeof *h);
  h->name = core_strdup(name);
  h->seen =
      core_calloc(c->s->n_workloads ? c->s->n_workloads : 1, sizeof *h->seen);
  if (!h->name || !h->seen) {
    core_free(h->name);
    core_free(h->seen);
    return NULL;
  }
  c->n++;
  return h;
}

core_status data_rounds_add(data_rounds *c, const data_row *r, core_err *err) {
  const proto_sheet *s = c->s;
  if (!r->host || !r->host[0] || !data_row_fills_plan(s, r))
    return CORE_OK;
  long w = proto_workload_index(s, r->workload);
  long a = proto_arm_index(s, r->arm);
  host_map *h = host_of(c, r->host);
  if (!h)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  h->quick |= r->quick;
  if (w < 0 || a < 0 || !runs_here(&s->workloads[w]) || r->round < 1 ||
      r->round > s->workloads[w].runs)
    return CORE_OK;
  if (!h->seen[w] &&
      !(h->seen[w] = core_calloc((size_t)(s->workloads[w].runs + 1) *
                                     (s->n_arms ? s->n_arms : 1),
                                 1)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  h->seen[w][(size_t)r->round * s->n_arms + (size_t)a] = 1;
  return CORE_OK;
}

void data_rounds_of(const data_rounds *c, const char *host, long *done,
                    long *planned) {
  const proto_sheet *s = c->s;
  const host_map *h = NULL;
  for (size_t i = 0; i < c->n && !h; i++)
    if (!strcmp(c->h[i].name, host))
      h = &c->h[i];
  *done = *planned = 0;
  for (size_t w = 0; w < s->n_workloads; w++) {
    const proto_workload *wl = &s->workloads[w];
    if (!runs_here(wl))
      continue;
    long rounds = h && h->quick && wl->runs > 3 ? 3 : wl->runs;
    for (long r = 1; h && h->seen[w] && r <= rounds; r++) {
      size_t a = 0;
      while (a < s->n_arms && h->seen[w][(size_t)r * s->n_arms + a])
        a++;
      *done += a == s->n_arms;
    }
    *planned += rounds;
  }
}

const char *data_rounds_host(const data_rounds *c, size_t i) {
  return i < c->n ? c->h[i].name : NULL;
}

void data_rounds_free(data_rounds *c) {
  if (!c)
    return;
  for (size_t i = 0; i < c->n; i++) {
    for (size_t w = 0; w < c->s->n_workloads; w++)
      core_free(c->h[i].seen[w]);
    core_free(c->h[i].seen);
    core_free(c->h[i].name);
  }
  core_free(c->h);
  core_free(c);
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
