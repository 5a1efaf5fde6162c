/* csv.c: RFC 4180 reading (libcsv) and writing of batch rows.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/data_internal.h"

/* Writing */

/* libcsv's csv_write quotes every field; we quote only where RFC 4180
 * needs it, so the files stay readable and diffable by eye. Leading or
 * trailing blanks are quoted too: many readers trim them otherwise. */
static void csv_field_utf8(core_buf *b, const char *s);

static void csv_field(core_buf *b, const char *s) {
  size_t len;
  int quote = 0;
  if (!s)
    s = "";
  len = strlen(s);
  /* Frozen text is UTF-8: what prereg writes from elsewhere (a reason
   * quoting a command's metrics file, a message cut at a byte count)
   * has any other byte made '?'. Input is refused before it gets here. */
  if (core_utf8_invalid(s, len) < len) {
    csv_field_utf8(b, s);
    return;
  }
  if (len > 0 &&
      (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t'))
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

void data_csv_field(core_buf *b, const char *s) {
  csv_field(b, s);
}

static void csv_field_utf8(core_buf *b, const char *s) {
  size_t len = strlen(s), off = 0;
  char *copy = core_strdup(s);
  if (!copy) {
    b->oom = 1;
    return;
  }
  while ((off += core_utf8_invalid(copy + off, len - off)) < len)
    copy[off++] = '?';
  csv_field(b, copy);
  core_free(copy);
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
  csv_field(b, r->sheet_sha256);
  core_buf_puts(b, ",");
  csv_field(b, batch_id ? batch_id : r->batch);
  core_buf_puts(b, ",");
  csv_field(b, source ? source : r->source);
  core_buf_puts(b, ",");
  csv_field(b, r->workload);
  core_buf_puts(b, ",");
  csv_field(b, r->arm);
  core_buf_printf(b, ",%ld,%ld,", r->round, r->seq);
  csv_field(b, r->run_id);
  core_buf_puts(b, ",");
  csv_field(b, r->started_at);
  core_buf_puts(b, ",");
  csv_field(b, r->host);
  core_buf_puts(b, ",");
  csv_field(b, r->image_digest);
  core_buf_puts(b, ",");
  csv_field(b, r->cache_policy);
  core_buf_puts(b, ",");
  csv_field(b, r->cache_state);
  core_buf_puts(b, ",");
  csv_field(b, r->exit_code);
  core_buf_printf(b, ",%d,", r->valid ? 1 : 0);
  csv_field(b, r->reason);
  core_buf_puts(b, ",");
  csv_field(b, r->metric);
  core_buf_puts(b, ",");
  if (r->has_value)
    put_number(b, r->value);
  core_buf_printf(b, ",%d", r->quick ? 1 : 0);
  for (int f = 0; f < DATA_NFACTS; f++) {
    core_buf_puts(b, ",");
    if (r->has_fact & (1u << f))
      put_number(b, r->fact[f]);
  }
  core_buf_puts(b, ",");
  csv_field(b, r->cpus);
  core_buf_puts(b, "\n");
}

const char *data_fact_name(int f) {
  static const char *const names[DATA_NFACTS] = {
      "load1", "runnable", "ctxsw_invol", "cpu_mhz", "throttle", "swap_in"};
  return f >= 0 && f < DATA_NFACTS ? names[f] : "";
}

/* Reading:
 *
 * A scanner is fed text in pieces of any size (a whole file in memory, or
 * a file read a chunk at a time, so that loading a million rows never
 * holds the whole file), and hands complete records to a callback. */

typedef struct scanner {
  struct csv_parser p;
  const char *name;
  /* The record being built: its fields' bytes, each NUL-terminated, one
   * after the other in rec (reused from record to record, so a field
   * costs no allocation), their offsets in offs, and the pointers handed
   * to the callback in fields. */
  char *rec;
  size_t rec_len, rec_cap;
  size_t *offs;
  char **fields;
  size_t n, cap;
  int oom;
  long line;       /* physical lines started so far */
  long start_line; /* where the current record started */
  int at_line_start;
  size_t off;          /* bytes fed so far */
  size_t last_content; /* offset just past the last byte not \r or \n */
  csvscan_fn fn;
  void *ctx;
  core_err *err;
  core_status st;
  int record_done; /* set by on_record, read at each line's end */
  csvscan_result *res;
} scanner;

static int grow(void **p, size_t *cap, size_t need, size_t size) {
  size_t c = *cap ? *cap : 32;
  void *np;
  if (need <= *cap)
    return 1;
  while (c < need)
    c *= 2;
  np = core_realloc(*p, c * size);
  if (!np)
    return 0;
  *p = np;
  *cap = c;
  return 1;
}

static void on_field(void *s, size_t len, void *data) {
  scanner *sc = data;
  size_t rec_cap = sc->rec_cap, cap = sc->cap, cap2 = sc->cap;
  if (sc->oom || sc->st != CORE_OK)
    return;
  if (!grow((void **)&sc->rec, &rec_cap, sc->rec_len + len + 1, 1) ||
      !grow((void **)&sc->offs, &cap, sc->n + 1, sizeof *sc->offs) ||
      !grow((void **)&sc->fields, &cap2, sc->n + 1, sizeof *sc->fields)) {
    sc->oom = 1;
    return;
  }
  sc->rec_cap = rec_cap;
  /* offs and fields always grow together, to the same capacity. */
  sc->cap = cap;
  if (len)
    memcpy(sc->rec + sc->rec_len, s, len);
  sc->rec[sc->rec_len + len] = '\0';
  sc->offs[sc->n++] = sc->rec_len;
  sc->rec_len += len + 1;
}

static void on_record(int c, void *data) {
  scanner *sc = data;
  (void)c;
  if (!sc->oom && sc->st == CORE_OK) {
    /* Pointers only now: rec may have moved while the record grew. */
    for (size_t i = 0; i < sc->n; i++)
      sc->fields[i] = sc->rec + sc->offs[i];
    sc->st = sc->fn(sc->ctx, sc->fields, sc->n, sc->start_line, sc->err);
  }
  sc->n = 0;
  sc->rec_len = 0;
  sc->res->records++;
  sc->record_done = 1;
}

/* Our frozen files must keep every byte: libcsv trims blanks around
 * unquoted fields unless told that nothing is a space. */
static int no_space(unsigned char c) {
  (void)c;
  return 0;
}

static void *csv_realloc_hook(void *p, size_t n) {
  return core_realloc(p, n);
}

static core_status scan_begin(scanner *sc, const char *name, csvscan_fn fn,
                              void *ctx, csvscan_result *res, core_err *err) {
  memset(res, 0, sizeof *res);
  memset(sc, 0, sizeof *sc);
  sc->name = name;
  sc->fn = fn;
  sc->ctx = ctx;
  sc->err = err;
  sc->res = res;
  sc->at_line_start = 1;
  if (csv_init(&sc->p, CSV_STRICT | CSV_APPEND_NULL) != 0)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", name);
  csv_set_space_func(&sc->p, no_space);
  csv_set_realloc_func(&sc->p, csv_realloc_hook);
  csv_set_free_func(&sc->p, core_free);
  return CORE_OK;
}

/* A whole line with no quote and no carriage return: its fields are the
 * bytes between commas, exactly as libcsv would give them (our files keep
 * every byte, nothing is trimmed), so it is split here at memchr speed.
 * Rows prereg writes are almost all such lines; any other goes through
 * libcsv. */
static int plain_line(const char *t, size_t len) {
  return !memchr(t, '"', len) && !memchr(t, '\r', len);
}

static void split_line(scanner *sc, const char *t, size_t len) {
  const char *p = t, *end = t + len;
  if (len == 0)
    return; /* an empty line is no record, as for libcsv */
  for (;;) {
    const char *c = memchr(p, ',', (size_t)(end - p));
    if (!c) {
      on_field((void *)p, (size_t)(end - p), sc);
      break;
    }
    on_field((void *)p, (size_t)(c - p), sc);
    p = c + 1;
  }
  on_record('\n', sc);
}

/* Feeds the next len bytes. Each physical line is passed to libcsv on
 * its own (in one piece or, when it straddles two feeds, in two): that
 * tells us on which line each record starts and where the last complete
 * record ends, which is what error messages and crash recovery need. */
static core_status scan_feed(scanner *sc, const char *text, size_t len) {
  size_t pos = 0;
  for (size_t i = len; i > 0; i--)
    if (text[i - 1] != '\n' && text[i - 1] != '\r') {
      sc->last_content = sc->off + i;
      break;
    }
  while (pos < len && sc->st == CORE_OK && !sc->oom) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    size_t end = nl ? (size_t)(nl - text) + 1 : len;
    if (sc->at_line_start) {
      sc->line++;
      /* pstate 0 is libcsv's ROW_NOT_BEGUN: a record starts here. */
      if (sc->p.pstate == 0)
        sc->start_line = sc->line;
      sc->record_done = 0;
    }
    if (nl && sc->p.pstate == 0 && plain_line(text + pos, end - pos)) {
      split_line(sc, text + pos, end - pos - 1);
    } else if (csv_parse(&sc->p, text + pos, end - pos, on_field, on_record,
                         sc) != end - pos) {
      if (sc->st == CORE_OK)
        sc->st =
            core_fail(sc->err, CORE_EINPUT,
                      "%s:%ld: malformed CSV (%s); a quote inside a "
                      "field must be doubled and the field quoted",
                      sc->name, sc->line, csv_strerror(csv_error(&sc->p)));
      break;
    }
    sc->off += end - pos;
    pos = end;
    sc->at_line_start = nl != NULL;
    if (nl && sc->record_done && sc->p.pstate == 0) {
      sc->res->good_end = sc->off;
      sc->res->last_line = sc->start_line;
    }
  }
  if (sc->oom && sc->st == CORE_OK)
    sc->st = core_fail(sc->err, CORE_ENOMEM, "%s: out of memory", sc->name);
  return sc->st;
}

/* Ends the scan and frees the scanner's buffers; returns the first
 * error. */
static core_status scan_end(scanner *sc) {
  csvscan_result *res = sc->res;
  /* Whatever follows the last complete record (no final newline, or an
   * open quote) is a torn record: reported, never passed on. */
  if (sc->st == CORE_OK && sc->last_content > res->good_end) {
    res->torn = 1;
    res->torn_line = sc->start_line;
  }
  csv_free(&sc->p);
  core_free(sc->rec);
  core_free(sc->offs);
  core_free(sc->fields);
  return sc->st;
}

core_status data_csv_scan(const char *name, const char *text, size_t len,
                          csvscan_fn fn, void *ctx, csvscan_result *res,
                          core_err *err) {
  scanner sc;
  core_status st = scan_begin(&sc, name, fn, ctx, res, err);
  if (st != CORE_OK)
    return st;
  scan_feed(&sc, text, len);
  return scan_end(&sc);
}

core_status data_csv_scan_file(const char *path, csvscan_fn fn, void *ctx,
                               csvscan_result *res, char *sha256,
                               core_err *err) {
  /* 1 MiB: large enough that a read costs nothing per row, small enough
   * to be nothing beside the rows themselves. */
  enum { CHUNK = 1 << 20 };
  scanner sc;
  char *buf;
  int fd;
  core_sha256_ctx *h = NULL;
  core_status st = scan_begin(&sc, path, fn, ctx, res, err);
  if (st != CORE_OK)
    return st;
  buf = core_malloc(CHUNK);
  if (sha256 && buf && !(h = core_sha256_begin())) {
    core_free(buf);
    buf = NULL;
  }
  if (!buf) {
    sc.st = core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
    return scan_end(&sc);
  }
  /* A batch is a regular file: a FIFO would block, /dev/zero never end. */
  sc.st = core_open_regular(path, 0, &fd, NULL, err);
  while (fd >= 0 && sc.st == CORE_OK) {
    ssize_t n = read(fd, buf, CHUNK);
    if (n == 0)
      break;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      sc.st = core_fail(err, CORE_EIO, "%s: cannot read: %s", path,
                        strerror(errno));
      break;
    }
    if (h)
      core_sha256_update(h, buf, (size_t)n);
    scan_feed(&sc, buf, (size_t)n);
  }
  if (fd >= 0)
    close(fd);
  if (h)
    core_sha256_end(h, sha256);
  core_free(buf);
  return scan_end(&sc);
}

struct data_csvscan {
  scanner sc;
};

data_csvscan *data_csvscan_begin(const char *name, csvscan_fn fn, void *ctx,
                                 csvscan_result *res, core_err *err) {
  data_csvscan *s = core_malloc(sizeof *s);
  if (!s) {
    core_fail(err, CORE_ENOMEM, "%s: out of memory", name);
    return NULL;
  }
  if (scan_begin(&s->sc, name, fn, ctx, res, err) != CORE_OK) {
    core_free(s);
    return NULL;
  }
  return s;
}

core_status data_csvscan_feed(data_csvscan *s, const char *text, size_t len) {
  return s->sc.st == CORE_OK ? scan_feed(&s->sc, text, len) : s->sc.st;
}

core_status data_csvscan_end(data_csvscan *s) {
  core_status st;
  if (!s)
    return CORE_OK;
  st = scan_end(&s->sc);
  core_free(s);
  return st;
}

/* The string pool:
 *
 * A million loaded rows repeat a handful of strings (sheet digest, batch,
 * source, workload, arm, host, metric, ...) in fourteen columns: one
 * allocation per field cost 14 million blocks and most of 800 MB. The
 * pool keeps one copy of each distinct string in large chunks and finds
 * it again through an open-addressing hash table, so a row costs its
 * struct and, for strings seen before, nothing more. */

typedef struct pool_chunk {
  struct pool_chunk *next;
  size_t used, size;
  char data[]; /* size bytes */
} pool_chunk;

struct data_strpool {
  pool_chunk *chunks; /* newest first; strings are carved from it */
  const char **slots; /* hash table of interned strings, NULL = empty */
  uint32_t *hashes;   /* each slot's hash, to skip most strcmp calls */
  size_t cap, n;      /* cap is a power of two, n <= cap / 2 */
};

enum { POOL_CHUNK = 256 * 1024, POOL_SLOTS0 = 1024 };

data_strpool *data_strpool_new(void) {
  data_strpool *p = core_calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->slots = core_calloc(POOL_SLOTS0, sizeof *p->slots);
  p->hashes = core_calloc(POOL_SLOTS0, sizeof *p->hashes);
  if (!p->slots || !p->hashes) {
    data_strpool_free(p);
    return NULL;
  }
  p->cap = POOL_SLOTS0;
  return p;
}

void data_strpool_free(data_strpool *p) {
  if (!p)
    return;
  while (p->chunks) {
    pool_chunk *next = p->chunks->next;
    core_free(p->chunks);
    p->chunks = next;
  }
  core_free(p->slots);
  core_free(p->hashes);
  core_free(p);
}

/* FNV-1a: short strings, no need for anything stronger. */
static uint32_t hash_str(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static int pool_grow(data_strpool *p) {
  size_t cap = p->cap * 2;
  const char **slots = core_calloc(cap, sizeof *slots);
  uint32_t *hashes = core_calloc(cap, sizeof *hashes);
  if (!slots || !hashes) {
    core_free(slots);
    core_free(hashes);
    return 0;
  }
  for (size_t i = 0; i < p->cap; i++) {
    size_t j;
    if (!p->slots[i])
      continue;
    for (j = p->hashes[i] & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
      ;
    slots[j] = p->slots[i];
    hashes[j] = p->hashes[i];
  }
  core_free(p->slots);
  core_free(p->hashes);
  p->slots = slots;
  p->hashes = hashes;
  p->cap = cap;
  return 1;
}

static char *pool_store(data_strpool *p, const char *s, size_t len) {
  pool_chunk *c = p->chunks;
  char *out;
  if (!c || c->size - c->used < len + 1) {
    /* A string longer than a chunk gets a chunk of its own. */
    size_t size = len + 1 > POOL_CHUNK ? len + 1 : POOL_CHUNK;
    c = core_malloc(sizeof *c + size);
    if (!c)
      return NULL;
    c->size = size;
    c->used = 0;
    c->next = p->chunks;
    p->chunks = c;
  }
  out = c->data + c->used;
  memcpy(out, s, len);
  out[len] = '\0';
  c->used += len + 1;
  return out;
}

const char *data_strpool_intern(data_strpool *p, const char *s, size_t len) {
  uint32_t h = hash_str(s, len);
  size_t i;
  char *copy;
  for (i = h & (p->cap - 1); p->slots[i]; i = (i + 1) & (p->cap - 1))
    if (p->hashes[i] == h && strncmp(p->slots[i], s, len) == 0 &&
        p->slots[i][len] == '\0')
      return p->slots[i];
  if ((p->n + 1) * 2 > p->cap) {
    if (!pool_grow(p))
      return NULL;
    for (i = h & (p->cap - 1); p->slots[i]; i = (i + 1) & (p->cap - 1))
      ;
  }
  if (!(copy = pool_store(p, s, len)))
    return NULL;
  p->slots[i] = copy;
  p->hashes[i] = h;
  p->n++;
  return copy;
}

/* Values */

const char data_value_negative[] =
    "a time or an amount of memory cannot be negative";

const char *data_value_ok(const char *metric, double v) {
  if (!isfinite(v))
    return "not a finite number";
  if (v < 0 && proto_metric_nonnegative(metric))
    return data_value_negative;
  return NULL;
}

const char *data_value_parse(const char *metric, const char *text, double *v) {
  double x;
  const char *why = core_parse_decimal(text, &x);
  if (why)
    return why;
  if ((why = data_value_ok(metric, x)) != NULL)
    return why;
  *v = x;
  return NULL;
}

/* Rows */

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
  core_free(r->cpus);
  memset(r, 0, sizeof *r);
}

void data_rowset_free(data_rowset *rs) {
  if (!rs)
    return;
  /* Pooled rows borrow their strings: the pool goes in one piece. */
  if (rs->pool)
    data_strpool_free(rs->pool);
  else
    for (size_t i = 0; i < rs->n; i++)
      data_row_clear(&rs->rows[i]);
  core_free(rs->rows);
  rs->rows = NULL;
  rs->pool = NULL;
  rs->n = rs->cap = 0;
}

core_status data_rowset_push(data_rowset *rs, data_row *r, core_err *err) {
  data_row *nr = core_grow(rs->rows, &rs->cap, rs->n, sizeof *nr, 64);
  if (!nr) {
    if (!rs->pool)
      data_row_clear(r);
    memset(r, 0, sizeof *r);
    return core_fail(err, CORE_ENOMEM, "out of memory loading rows");
  }
  rs->rows = nr;
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

core_status data_row_parse(data_row *r, char **f, size_t n, const char *name,
                           long line, core_err *err) {
  return data_row_parse_pooled(r, f, n, name, line, NULL, err);
}

/* data_row_parse_pooled, or with r's strings pointing into f (borrow). */
static core_status parse_row(data_row *r, char **f, size_t n, const char *name,
                             long line, data_strpool *pool, int borrow,
                             core_err *err);

core_status data_row_parse_pooled(data_row *r, char **f, size_t n,
                                  const char *name, long line,
                                  data_strpool *pool, core_err *err) {
  return parse_row(r, f, n, name, line, pool, 0, err);
}

core_status data_row_parse_view(data_row *r, char **f, size_t n,
                                const char *name, long line, core_err *err) {
  return parse_row(r, f, n, name, line, NULL, 1, err);
}

/* prereg writes only UTF-8 (csv_field): other bytes in a row were put
 * there by hand, and would reach the reports and the workbook's XML. The
 * fields checked are f[col[0..n-1]], named by names. */
static core_status check_utf8(char **f, const int *col, size_t n,
                              const char *const *names, const char *name,
                              long line, core_err *err) {
  for (size_t i = 0; i < n; i++) {
    const char *field = f[col[i]];
    size_t len = strlen(field), bad = core_utf8_invalid(field, len);
    if (bad < len)
      return core_fail(err, CORE_EINPUT,
                       "%s:%ld: %s: not valid UTF-8 at byte %zu (0x%02X); "
                       "prereg writes only UTF-8, so the file was edited",
                       name, line, names[col[i]], bad + 1,
                       (unsigned)(unsigned char)field[bad]);
  }
  return CORE_OK;
}

/* The conditions' columns of a row of DATA_NCOLS fields (f[20..26]) into
 * r: a fact is empty (absent) or a finite number not negative; cpus is
 * checked as text with the other strings. */
static core_status parse_facts(data_row *r, char **f, const char *name,
                               long line, core_err *err) {
  for (int k = 0; k < DATA_NFACTS; k++) {
    const char *t = f[DATA_NCOLS_PLAIN + k], *why;
    double v;
    if (!t[0])
      continue;
    why = core_parse_decimal(t, &v);
    if (!why && (!isfinite(v) || v < 0))
      why = "not a finite number that is not negative";
    if (why)
      return core_fail(err, CORE_EINPUT,
                       "%s:%ld: %s '%.80s': %s; prereg never writes such a "
                       "value, so the file was edited",
                       name, line, data_fact_name(k), t, why);
    r->fact[k] = v;
    r->has_fact |= 1u << k;
  }
  const char *cpus = f[DATA_NCOLS - 1];
  if (core_utf8_invalid(cpus, strlen(cpus)) < strlen(cpus))
    return core_fail(err, CORE_EINPUT, "%s:%ld: cpus: not valid UTF-8", name,
                     line);
  return CORE_OK;
}

/* r->cpus from the row's last column, or "" for a row without it; out
 * of memory leaves r holding nothing to free. */
static core_status set_cpus(data_row *r, char **f, size_t n,
                            data_strpool *pool, int borrow, const char *name,
                            long line, core_err *err) {
  const char *t = n == DATA_NCOLS ? f[DATA_NCOLS - 1] : "";
  if (borrow)
    r->cpus = (char *)t;
  else
    r->cpus = pool ? (char *)data_strpool_intern(pool, t, strlen(t))
                   : core_strdup(t);
  if (r->cpus)
    return CORE_OK;
  if (pool)
    memset(r, 0, sizeof *r);
  else
    data_row_clear(r);
  return core_fail(err, CORE_ENOMEM, "%s:%ld: out of memory", name, line);
}

static core_status parse_row(data_row *r, char **f, size_t n, const char *name,
                             long line, data_strpool *pool, int borrow,
                             core_err *err) {
  static const char *const cols[DATA_NCOLS_PLAIN] = {
      "sheet_version", "sheet_sha256", "batch",     "source",
      "workload",      "arm",          "round",     "seq",
      "run_id",        "started_at",   "host",      "image_digest",
      "cache_policy",  "cache_state",  "exit_code", "valid",
      "reason",        "metric",       "value",     "quick"};
  long v;
  char **slots[] = {&r->sheet_sha256, &r->batch,       &r->source,
                    &r->workload,     &r->arm,         &r->run_id,
                    &r->started_at,   &r->host,        &r->image_digest,
                    &r->cache_policy, &r->cache_state, &r->exit_code,
                    &r->reason,       &r->metric};
  static const int slot_col[] = {1,  2,  3,  4,  5,  8,  9,
                                 10, 11, 12, 13, 14, 16, 17};
  memset(r, 0, sizeof *r);
  if (n != DATA_NCOLS && n != DATA_NCOLS_PLAIN)
    return core_fail(err, CORE_EINPUT,
                     "%s:%ld: %zu fields; a batch row has %d (or %d, written "
                     "before the conditions' columns)",
                     name, line, n, DATA_NCOLS, DATA_NCOLS_PLAIN);
  if (!parse_long(f[0], &v) || v < 0 || v > 1000000)
    return core_fail(err, CORE_EINPUT,
                     "%s:%ld: %s '%s' is not a version number", name, line,
                     cols[0], f[0]);
  r->sheet_version = (int)v;
  if (!parse_long(f[6], &r->round) || r->round < 0)
    return core_fail(err, CORE_EINPUT, "%s:%ld: %s '%s' is not a count", name,
                     line, cols[6], f[6]);
  if (!parse_long(f[7], &r->seq) || r->seq < 0)
    return core_fail(err, CORE_EINPUT, "%s:%ld: %s '%s' is not a count", name,
                     line, cols[7], f[7]);
  if (!parse_bit(f[15], &r->valid))
    return core_fail(err, CORE_EINPUT, "%s:%ld: %s '%s' is not 0 or 1", name,
                     line, cols[15], f[15]);
  if (!parse_bit(f[19], &r->quick))
    return core_fail(err, CORE_EINPUT, "%s:%ld: %s '%s' is not 0 or 1", name,
                     line, cols[19], f[19]);
  if (f[18][0] == '\0') {
    r->has_value = 0;
    r->value = NAN;
  } else {
    /* Read as an import is: what prereg wrote obeys the rule, so a value
     * that does not (-0.001 s, 0x1p-3, 1e-320, nan) was put there by
     * hand, and would be computed with. */
    const char *why = data_value_parse(f[17], f[18], &r->value);
    if (why)
      return core_fail(err, CORE_EINPUT,
                       "%s:%ld: %s '%.80s' (%s): %s; prereg never writes "
                       "such a value, so the file was edited",
                       name, line, cols[18], f[18], f[17], why);
    r->has_value = 1;
  }
  core_status st = check_utf8(f, slot_col, sizeof slots / sizeof slots[0],
                              cols, name, line, err);
  if (st != CORE_OK || (n == DATA_NCOLS &&
                        (st = parse_facts(r, f, name, line, err)) != CORE_OK))
    return st;
  for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
    const char *field = f[slot_col[i]];
    /* Pooled strings are shared and read-only; the cast only fits the
     * struct, whose fields are char * for rows that own their strings. */
    if (borrow)
      *slots[i] = f[slot_col[i]];
    else
      *slots[i] = pool
                      ? (char *)data_strpool_intern(pool, field, strlen(field))
                      : core_strdup(field);
    if (!*slots[i]) {
      if (pool)
        memset(r, 0, sizeof *r);
      else
        data_row_clear(r);
      return core_fail(err, CORE_ENOMEM, "%s:%ld: out of memory", name, line);
    }
  }
  return set_cpus(r, f, n, pool, borrow, name, line, err);
}
