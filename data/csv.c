/* csv.c: RFC 4180 reading (libcsv) and writing of batch rows.
 * SPDX-License-Identifier: MIT
 */
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"

/* {==== Writing ==== */

/* libcsv's csv_write quotes every field; we quote only where RFC 4180
 * needs it, so the files stay readable and diffable by eye. Leading or
 * trailing blanks are quoted too: many readers trim them otherwise. */
void data_csv_field(core_buf *b, const char *s) {
  size_t len;
  int quote = 0;
  if (!s)
    s = "";
  len = strlen(s);
  if (len > 0 && (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' ||
                  s[len - 1] == '\t'))
    quote = 1;
  if (strpbrk(s, ",\"\r\n"))
    quote = 1;
  if (!quote) {
    core_buf_append(b, s, len);
    return;
  }
  core_buf_append(b, "\"", 1);
  for (const char *p = s; *p; p++) {
    if (*p == '"')
      core_buf_append(b, "\"", 1);
    core_buf_append(b, p, 1);
  }
  core_buf_append(b, "\"", 1);
}

/* %.17g round-trips every double through strtod, but prints 0.1 as
 * 0.10000000000000001; the shortest of %.15g..%.17g that reads back to
 * the same double is just as exact and what a person expects to see. */
static void put_number(core_buf *b, double v) {
  char num[40];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(num, sizeof num, "%.*g", prec, v);
    if (prec == 17 || strtod(num, NULL) == v)
      break;
  }
  core_buf_puts(b, num);
}

void data_csv_row(core_buf *b, const data_row *r, const char *batch_id,
                  const char *source) {
  char num[64];
  snprintf(num, sizeof num, "%d", r->sheet_version);
  core_buf_puts(b, num);
  core_buf_puts(b, ",");
  data_csv_field(b, r->sheet_sha256);
  core_buf_puts(b, ",");
  data_csv_field(b, batch_id ? batch_id : r->batch);
  core_buf_puts(b, ",");
  data_csv_field(b, source ? source : r->source);
  core_buf_puts(b, ",");
  data_csv_field(b, r->workload);
  core_buf_puts(b, ",");
  data_csv_field(b, r->arm);
  core_buf_printf(b, ",%ld,%ld,", r->round, r->seq);
  data_csv_field(b, r->run_id);
  core_buf_puts(b, ",");
  data_csv_field(b, r->started_at);
  core_buf_puts(b, ",");
  data_csv_field(b, r->host);
  core_buf_puts(b, ",");
  data_csv_field(b, r->image_digest);
  core_buf_puts(b, ",");
  data_csv_field(b, r->cache_policy);
  core_buf_puts(b, ",");
  data_csv_field(b, r->cache_state);
  core_buf_puts(b, ",");
  data_csv_field(b, r->exit_code);
  core_buf_printf(b, ",%d,", r->valid ? 1 : 0);
  data_csv_field(b, r->reason);
  core_buf_puts(b, ",");
  data_csv_field(b, r->metric);
  core_buf_puts(b, ",");
  if (r->has_value)
    put_number(b, r->value);
  core_buf_printf(b, ",%d\n", r->quick ? 1 : 0);
}

/* }==== */

/* {==== Reading ==== */

typedef struct scan_state {
  char **fields;
  size_t n, cap;
  int oom;
  long start_line;
  csvscan_fn fn;
  void *ctx;
  core_err *err;
  core_status st;
  size_t records;
  int record_done; /* set by on_record, read after each chunk */
} scan_state;

static void on_field(void *s, size_t len, void *data) {
  scan_state *st = data;
  char *copy;
  if (st->oom || st->st != CORE_OK)
    return;
  if (st->n == st->cap) {
    size_t cap = st->cap ? st->cap * 2 : 32;
    char **nf = core_realloc(st->fields, cap * sizeof *nf);
    if (!nf) {
      st->oom = 1;
      return;
    }
    st->fields = nf;
    st->cap = cap;
  }
  copy = core_strndup(s ? s : "", s ? len : 0);
  if (!copy) {
    st->oom = 1;
    return;
  }
  st->fields[st->n++] = copy;
}

static void drop_fields(scan_state *st) {
  for (size_t i = 0; i < st->n; i++)
    core_free(st->fields[i]);
  st->n = 0;
}

static void on_record(int c, void *data) {
  scan_state *st = data;
  (void)c;
  if (!st->oom && st->st == CORE_OK)
    st->st = st->fn(st->ctx, st->fields, st->n, st->start_line, st->err);
  drop_fields(st);
  st->records++;
  st->record_done = 1;
}

/* Our frozen files must keep every byte: libcsv trims blanks around
 * unquoted fields unless told that nothing is a space. */
static int no_space(unsigned char c) {
  (void)c;
  return 0;
}

static void *csv_realloc_hook(void *p, size_t n) { return core_realloc(p, n); }

core_status data_csv_scan(const char *name, const char *text, size_t len,
                          csvscan_fn fn, void *ctx, csvscan_result *res,
                          core_err *err) {
  struct csv_parser p;
  scan_state st;
  size_t off = 0;
  long line = 0;
  memset(res, 0, sizeof *res);
  memset(&st, 0, sizeof st);
  st.fn = fn;
  st.ctx = ctx;
  st.err = err;
  if (csv_init(&p, CSV_STRICT | CSV_APPEND_NULL) != 0)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", name);
  csv_set_space_func(&p, no_space);
  csv_set_realloc_func(&p, csv_realloc_hook);
  csv_set_free_func(&p, core_free);
  /* Feeding one physical line at a time tells us on which line each
   * record starts and where the last complete record ends, which is what
   * error messages and crash recovery need. */
  while (off < len && st.st == CORE_OK && !st.oom) {
    const char *nl = memchr(text + off, '\n', len - off);
    size_t end = nl ? (size_t)(nl - text) + 1 : len;
    line++;
    /* pstate 0 is libcsv's ROW_NOT_BEGUN: a record starts on this line. */
    if (p.pstate == 0)
      st.start_line = line;
    st.record_done = 0;
    if (csv_parse(&p, text + off, end - off, on_field, on_record, &st) !=
        end - off) {
      if (st.st == CORE_OK)
        st.st = core_fail(err, CORE_EINPUT,
                          "%s:%ld: malformed CSV (%s); a quote inside a "
                          "field must be doubled and the field quoted",
                          name, line, csv_strerror(csv_error(&p)));
      break;
    }
    off = end;
    if (st.record_done && p.pstate == 0 && nl) {
      res->good_end = off;
      res->last_line = st.start_line;
    }
  }
  if (st.oom && st.st == CORE_OK)
    st.st = core_fail(err, CORE_ENOMEM, "%s: out of memory", name);
  if (st.st == CORE_OK) {
    /* Whatever follows the last complete record (no final newline, or an
     * open quote) is a torn record: reported, never passed on. */
    if (res->good_end < len) {
      size_t i = res->good_end;
      while (i < len && (text[i] == '\n' || text[i] == '\r'))
        i++;
      if (i < len) {
        res->torn = 1;
        res->torn_line = st.start_line;
      }
    }
  }
  drop_fields(&st);
  csv_free(&p);
  core_free(st.fields);
  res->records = st.records;
  return st.st;
}

/* }==== */

/* {==== Rows ==== */

void data_row_clear(data_row *r) {
  core_free(r->sheet_sha256);
  core_free(r->batch);
  core_free(r->source);
  core_free(r->workload);
  core_free(r->arm);
  core_free(r->run_id);
  core_free(r->started_at);
  core_free(r->host);
  core_free(r->image_digest);
  core_free(r->cache_policy);
  core_free(r->cache_state);
  core_free(r->exit_code);
  core_free(r->reason);
  core_free(r->metric);
  memset(r, 0, sizeof *r);
}

void data_rowset_free(data_rowset *rs) {
  if (!rs)
    return;
  for (size_t i = 0; i < rs->n; i++)
    data_row_clear(&rs->rows[i]);
  core_free(rs->rows);
  rs->rows = NULL;
  rs->n = rs->cap = 0;
}

core_status data_rowset_push(data_rowset *rs, data_row *r, core_err *err) {
  if (rs->n == rs->cap) {
    size_t cap = rs->cap ? rs->cap * 2 : 64;
    data_row *nr = core_realloc(rs->rows, cap * sizeof *nr);
    if (!nr) {
      data_row_clear(r);
      return core_fail(err, CORE_ENOMEM, "out of memory loading rows");
    }
    rs->rows = nr;
    rs->cap = cap;
  }
  rs->rows[rs->n++] = *r;
  memset(r, 0, sizeof *r);
  return CORE_OK;
}

static int parse_long(const char *s, long *out) {
  char *end;
  long v;
  if (!*s)
    return 0;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || *end)
    return 0;
  *out = v;
  return 1;
}

static int parse_bit(const char *s, int *out) {
  if (strcmp(s, "0") == 0 || strcmp(s, "1") == 0) {
    *out = s[0] == '1';
    return 1;
  }
  return 0;
}

core_status data_row_parse(data_row *r, char **f, size_t n,
                           const char *name, long line, core_err *err) {
  static const char *const cols[DATA_NCOLS] = {
      "sheet_version", "sheet_sha256", "batch",       "source",
      "workload",      "arm",          "round",       "seq",
      "run_id",        "started_at",   "host",        "image_digest",
      "cache_policy",  "cache_state",  "exit_code",   "valid",
      "reason",        "metric",       "value",       "quick"};
  long v;
  char **slots[] = {&r->sheet_sha256, &r->batch,        &r->source,
                    &r->workload,     &r->arm,          &r->run_id,
                    &r->started_at,   &r->host,         &r->image_digest,
                    &r->cache_policy, &r->cache_state,  &r->exit_code,
                    &r->reason,       &r->metric};
  static const int slot_col[] = {1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 14,
                                 16, 17};
  memset(r, 0, sizeof *r);
  if (n != DATA_NCOLS)
    return core_fail(err, CORE_EINPUT,
                     "%s:%ld: %zu fields; a batch row has %d", name, line, n,
                     DATA_NCOLS);
  if (!parse_long(f[0], &v) || v < 0 || v > 1000000)
    return core_fail(err, CORE_EINPUT, "%s:%ld: %s '%s' is not a version "
                     "number", name, line, cols[0], f[0]);
  r->sheet_version = (int)v;
  if (!parse_long(f[6], &r->round) || r->round < 0)
    return core_fail(err, CORE_EINPUT, "%s:%ld: %s '%s' is not a count",
                     name, line, cols[6], f[6]);
  if (!parse_long(f[7], &r->seq) || r->seq < 0)
    return core_fail(err, CORE_EINPUT, "%s:%ld: %s '%s' is not a count",
                     name, line, cols[7], f[7]);
  if (!parse_bit(f[15], &r->valid))
    return core_fail(err, CORE_EINPUT, "%s:%ld: %s '%s' is not 0 or 1",
                     name, line, cols[15], f[15]);
  if (!parse_bit(f[19], &r->quick))
    return core_fail(err, CORE_EINPUT, "%s:%ld: %s '%s' is not 0 or 1",
                     name, line, cols[19], f[19]);
  if (f[18][0] == '\0') {
    r->has_value = 0;
    r->value = NAN;
  } else {
    char *end;
    r->value = strtod(f[18], &end);
    if (*end)
      return core_fail(err, CORE_EINPUT, "%s:%ld: %s '%s' is not a number",
                       name, line, cols[18], f[18]);
    r->has_value = 1;
  }
  for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
    *slots[i] = core_strdup(f[slot_col[i]]);
    if (!*slots[i]) {
      data_row_clear(r);
      return core_fail(err, CORE_ENOMEM, "%s:%ld: out of memory", name,
                       line);
    }
  }
  return CORE_OK;
}

/* }==== */
