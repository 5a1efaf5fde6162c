/* test_lock.c: unit tests of the data layer: the unified diff (checked
 * against GNU diff and patch), the CSV round trip, the manifest, batches
 * and crash recovery.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data_internal.h"
#include "harness.h"

/* Sheets and rows hold char *; the tests fill them from literals. */
#define W(s) ((char *)(s))

static char tmp[256];

static void write_text(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(text, 1, len, f);
    fclose(f);
  }
}

static char *read_text(const char *path, size_t *len) {
  char *d = NULL;
  core_err err;
  if (core_read_file(path, &d, len, &err) != CORE_OK)
    return NULL;
  return d;
}

static int run(const char *fmt, const char *a, const char *b) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, fmt, a, b, tmp, tmp, tmp, tmp);
  return system(cmd);
}

/* Diff */

/* Our diff must be byte-identical to GNU diff -u where the alignment is
 * unambiguous (one hunk per change, context merged or not). */
static void diff_vs_gnu(const char *a, const char *b) {
  char pa[300], pb[300], po[300];
  char *mine = core_unified_diff(a, strlen(a), b, strlen(b), "old", "new");
  char *gnu;
  size_t len = 0;
  snprintf(pa, sizeof pa, "%s/a.txt", tmp);
  snprintf(pb, sizeof pb, "%s/b.txt", tmp);
  snprintf(po, sizeof po, "%s/gnu.diff", tmp);
  write_text(pa, a, strlen(a));
  write_text(pb, b, strlen(b));
  run("diff -u --label old --label new %s %s > %s/gnu.diff", pa, pb);
  gnu = read_text(po, &len);
  CHECK(mine != NULL);
  CHECK_STR(mine, gnu);
  core_free(mine);
  core_free(gnu);
}

/* Whatever alignment we choose, patch(1) must turn a into b with it. */
static void diff_applies(const char *a, size_t alen, const char *b,
                         size_t blen) {
  char pa[300], pd[300], po[300];
  char *d = core_unified_diff(a, alen, b, blen, "a.txt", "b.txt");
  char *got;
  size_t len = 0;
  snprintf(pa, sizeof pa, "%s/a.txt", tmp);
  snprintf(pd, sizeof pd, "%s/p.diff", tmp);
  snprintf(po, sizeof po, "%s/out.txt", tmp);
  CHECK(d != NULL);
  if (!d)
    return;
  write_text(pa, a, alen);
  write_text(pd, d, strlen(d));
  unlink(po);
  if (d[0])
    CHECK(run("patch -s -o %s %s < %s/p.diff", po, pa) == 0);
  else
    write_text(po, a, alen);
  got = read_text(po, &len);
  CHECK(got && len == blen && memcmp(got, b, blen) == 0);
  core_free(got);
  core_free(d);
}

static void test_diff(void) {
  char *d = core_unified_diff("x\n", 2, "x\n", 2, "a", "b");
  CHECK_STR(d, "");
  core_free(d);
  diff_vs_gnu("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
              "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n");
  diff_vs_gnu("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n",
              "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n"
              "17\n");
  diff_vs_gnu("a\nb\nc\n", "a\nb\nc\nd\n");
  diff_vs_gnu("", "new\nfile\n");
  diff_vs_gnu("gone\n", "");
  diff_vs_gnu("a\nb", "a\nb\n"); /* "\ No newline at end of file" */
  diff_vs_gnu("a\nb\nc\nd\ne\nf\ng\nh\ni\n", "a\nb\nc\nd\nE\nf\ng\nh\nI\n");
  /* Random edits of random files, applied back with patch(1). */
  srand(17);
  for (int t = 0; t < 60; t++) {
    core_buf a, b;
    int n = rand() % 30;
    core_buf_init(&a);
    core_buf_init(&b);
    for (int i = 0; i < n; i++) {
      int r = rand() % 10, line = rand() % 6;
      core_buf_printf(&a, "line %d\n", line);
      if (r == 0)
        continue; /* deleted */
      if (r == 1)
        core_buf_printf(&b, "changed %d\n", rand() % 3);
      else
        core_buf_printf(&b, "line %d\n", line);
      if (r == 2)
        core_buf_printf(&b, "inserted %d\n", rand() % 3);
    }
    if (t % 7 == 0)
      core_buf_puts(&b, "no newline");
    diff_applies(a.data ? a.data : "", a.len, b.data ? b.data : "", b.len);
    core_buf_free(&a);
    core_buf_free(&b);
  }
}

/* CSV */

typedef struct got_rows {
  data_rowset rs;
  int header;
  const char *name;
} got_rows;

static core_status collect(void *ctx, char **f, size_t n, long line,
                           core_err *err) {
  got_rows *g = ctx;
  data_row r;
  core_status st;
  if (!g->header) {
    g->header = 1;
    return CORE_OK;
  }
  if ((st = data_row_parse(&r, f, n, g->name, line, err)) != CORE_OK)
    return st;
  return data_rowset_push(&g->rs, &r, err);
}

static data_row sample_row(const char *reason, const char *run_id, double v) {
  data_row r;
  memset(&r, 0, sizeof r);
  r.sheet_version = 2;
  r.sheet_sha256 = W("abc");
  r.batch = W("b0007");
  r.source = W("run");
  r.workload = W("startup");
  r.arm = W("bwrap");
  r.round = 3;
  r.seq = 9;
  r.run_id = (char *)run_id;
  r.started_at = W("2026-10-21T09:30:00Z");
  r.host = W(" host, with \"quotes\" ");
  r.image_digest = W("");
  r.cache_policy = W("warm");
  r.cache_state = W("page_cache_mib=812");
  r.exit_code = W("0;1;0");
  r.valid = reason[0] == '\0';
  r.reason = (char *)reason;
  r.metric = W("wall_s");
  r.value = v;
  r.has_value = !isnan(v);
  r.quick = 1;
  return r;
}

/* Every record's fields joined as "f1|f2|...;" */
static core_status join_fields(void *ctx, char **f, size_t n, long line,
                               core_err *err) {
  core_buf *b = ctx;
  (void)line;
  (void)err;
  for (size_t i = 0; i < n; i++)
    core_buf_printf(b, "%s%s", i ? "|" : "", f[i]);
  core_buf_puts(b, ";");
  return CORE_OK;
}

/* Lines without quotes are split by prereg itself, the others by libcsv:
 * the fields are the same either way, whatever the mix, and the same
 * when the text comes in pieces (a line cut between two reads goes
 * through libcsv). */
static void test_csv_fast_path(void) {
  static const char text[] = "a,b,c\n"
                             "\n"
                             ",,\n"
                             "x,,y,\n"
                             "\"q,1\",plain,\"two\nlines\"\n"
                             "after,quoted\n"
                             " lead , trail \n"
                             "last\n";
  static const char want[] =
      "a|b|c;||;x||y|;q,1|plain|two\nlines;after|quoted;"
      " lead | trail ;last;";
  char path[] = "/tmp/prereg-csv-XXXXXX";
  int fd = mkstemp(path);
  core_buf b;
  csvscan_result res;
  core_err err;
  core_buf_init(&b);
  CHECK(data_csv_scan("mem", text, strlen(text), join_fields, &b, &res,
                      &err) == CORE_OK);
  CHECK_STR(b.data, want);
  CHECK(res.records == 7 && !res.torn);
  core_buf_free(&b);
  /* From a file, a chunk at a time: the same. */
  CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
  close(fd);
  core_buf_init(&b);
  CHECK(data_csv_scan_file(path, join_fields, &b, &res, NULL, &err) ==
        CORE_OK);
  CHECK_STR(b.data, want);
  core_buf_free(&b);
  unlink(path);
  /* Past the file reader's 1 MiB chunk, lines cut between two reads:
   * the same fields as from memory. */
  {
    core_buf big, one, two;
    core_buf_init(&big);
    core_buf_init(&one);
    core_buf_init(&two);
    for (int i = 0; i < 60000; i++)
      core_buf_printf(&big, i % 7 ? "r%d,%d,,x%d\n" : "\"r%d\",%d,\"\",x%d\n",
                      i, i * 3, i);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && write(fd, big.data, big.len) == (ssize_t)big.len);
    close(fd);
    CHECK(big.len > (1u << 20));
    CHECK(data_csv_scan("mem", big.data, big.len, join_fields, &one, &res,
                        &err) == CORE_OK);
    CHECK(data_csv_scan_file(path, join_fields, &two, &res, NULL, &err) ==
          CORE_OK);
    CHECK(one.len == two.len && one.data && two.data &&
          memcmp(one.data, two.data, one.len) == 0);
    CHECK(res.records == 60000);
    core_buf_free(&big);
    core_buf_free(&one);
    core_buf_free(&two);
    unlink(path);
  }
}

static void test_csv(void) {
  const char *reasons[] = {"", "timeout, then \"SIGKILL\"",
                           "line one\nline two\r\nline three", " lead"};
  double values[] = {0.1, 1e-300, NAN, 123456789.123456789};
  core_buf b;
  got_rows g;
  csvscan_result res;
  core_err err;
  core_buf_init(&b);
  core_buf_puts(&b, DATA_ROW_HEADER "\n");
  for (int i = 0; i < 4; i++) {
    data_row r = sample_row(reasons[i], i == 2 ? "r,2" : "r1", values[i]);
    data_csv_row(&b, &r, NULL, NULL);
  }
  memset(&g, 0, sizeof g);
  g.name = "mem";
  CHECK(data_csv_scan("mem", b.data, b.len, collect, &g, &res, &err) ==
        CORE_OK);
  CHECK(!res.torn);
  CHECK(res.records == 5);
  CHECK(g.rs.n == 4);
  for (size_t i = 0; i < g.rs.n && i < 4; i++) {
    const data_row *r = &g.rs.rows[i];
    CHECK_STR(r->reason, reasons[i]);
    CHECK_STR(r->host, " host, with \"quotes\" ");
    CHECK_STR(r->exit_code, "0;1;0");
    CHECK(r->sheet_version == 2 && r->round == 3 && r->seq == 9);
    CHECK(r->quick == 1);
    CHECK(r->valid == (i == 0));
    if (isnan(values[i]))
      CHECK(!r->has_value);
    else
      CHECK(r->has_value && r->value == values[i]); /* exact, %.17g */
  }
  /* Lines are physical: row 4 starts after the 3-line reason of row 3. */
  CHECK(res.last_line == 7);
  data_rowset_free(&g.rs);
  /* A torn tail is reported, not passed on. */
  memset(&g, 0, sizeof g);
  g.name = "mem";
  core_buf_puts(&b, "2,abc,b0007,run,startup");
  CHECK(data_csv_scan("mem", b.data, b.len, collect, &g, &res, &err) ==
        CORE_OK);
  CHECK(res.torn && res.torn_line == 8 && g.rs.n == 4);
  data_rowset_free(&g.rs);
  /* A bad field names its line. */
  memset(&g, 0, sizeof g);
  g.name = "f.csv";
  {
    const char *bad =
        DATA_ROW_HEADER "\n"
                        "x,abc,b1,run,w,a,1,1,r,t,h,i,warm,c,0,1,,m,1,0\n";
    CHECK(data_csv_scan("f.csv", bad, strlen(bad), collect, &g, &res, &err) ==
          CORE_EINPUT);
    CHECK(strstr(err.msg, "f.csv:2: sheet_version 'x'") != NULL);
  }
  data_rowset_free(&g.rs);
  core_buf_free(&b);
}

/* The pool alone: interning gives one copy per distinct string, also
 * across its growth (more strings than the first table and chunk hold),
 * for strings longer than a chunk, and for bytes that are not a whole
 * C string. */
static void test_pool(void) {
  data_strpool *p = data_strpool_new();
  const char *first[5000];
  char big[300000];
  const char *b1, *b2;
  CHECK(p != NULL);
  if (!p)
    return;
  for (int i = 0; i < 5000; i++) {
    char s[32];
    int n = snprintf(s, sizeof s, "run-%d", i);
    first[i] = data_strpool_intern(p, s, (size_t)n);
  }
  for (int i = 0; i < 5000; i++) {
    char s[32];
    int n = snprintf(s, sizeof s, "run-%d", i);
    const char *again = data_strpool_intern(p, s, (size_t)n);
    CHECK(again == first[i]);
    if (again != first[i] || strcmp(again, s) != 0) {
      CHECK_STR(again, s);
      break;
    }
  }
  CHECK(data_strpool_intern(p, "run-12xyz", 6) == first[12]);
  CHECK(data_strpool_intern(p, "", 0) != NULL);
  CHECK(*data_strpool_intern(p, "", 0) == '\0');
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  b1 = data_strpool_intern(p, big, sizeof big - 1);
  b2 = data_strpool_intern(p, big, sizeof big - 1);
  CHECK(b1 && b1 == b2 && strlen(b1) == sizeof big - 1);
  data_strpool_free(p);
  data_strpool_free(NULL);
}

/* Reading a batch from its file a chunk (1 MiB) at a time gives exactly
 * what scanning the whole text gives: the same rows, lines, complete end
 * and torn tail, also when a quoted field with line breaks straddles the
 * chunk boundary, and the same line in an error past it. */
static void test_csv_file(void) {
  enum { CHUNK = 1 << 20 };
  core_buf b;
  got_rows g1, g2;
  csvscan_result r1, r2;
  core_err e1, e2;
  char path[300], reason[700];
  size_t at;
  core_buf_init(&b);
  core_buf_puts(&b, DATA_ROW_HEADER "\n");
  for (long i = 0; b.len < CHUNK - 400; i++) {
    char id[32];
    data_row r;
    snprintf(id, sizeof id, "r%ld", i);
    r = sample_row(i % 7 ? "" : "exit 1", id, (double)i / 8);
    data_csv_row(&b, &r, NULL, NULL);
  }
  /* 600 bytes of reason, a line break every 50: it starts before the
   * first chunk ends and ends after. */
  for (int i = 0; i < 600; i++)
    reason[i] = i % 50 == 49 ? '\n' : (char)('a' + i % 26);
  reason[600] = '\0';
  {
    data_row r = sample_row(reason, "straddle", 7.0);
    data_csv_row(&b, &r, NULL, NULL);
  }
  at = (size_t)(strstr(b.data, "abcdefghij") - b.data);
  CHECK(at < CHUNK && at + 600 > CHUNK);
  for (int i = 0; i < 3000; i++) {
    data_row r = sample_row("", "tail", 1.0);
    data_csv_row(&b, &r, NULL, NULL);
  }
  CHECK(b.len > CHUNK + 100000);
  snprintf(path, sizeof path, "%s/big.csv", tmp);

  for (int variant = 0; variant < 3; variant++) {
    if (variant == 1) /* a torn tail */
      core_buf_puts(&b, "2,abc,b0007,run,\"open quote");
    if (variant == 2) { /* a bad value past the chunk boundary */
      b.len -= strlen("2,abc,b0007,run,\"open quote");
      core_buf_puts(&b, "2,abc,b0007,run,w,a,1,1,r,t,h,i,warm,c,0,1,,m,"
                        "not-a-number,0\n");
    }
    write_text(path, b.data, b.len);
    memset(&g1, 0, sizeof g1);
    memset(&g2, 0, sizeof g2);
    memset(&e1, 0, sizeof e1);
    memset(&e2, 0, sizeof e2);
    g1.name = g2.name = path;
    CHECK(data_csv_scan(path, b.data, b.len, collect, &g1, &r1, &e1) ==
          data_csv_scan_file(path, collect, &g2, &r2, NULL, &e2));
    CHECK(r1.records == r2.records && r1.good_end == r2.good_end &&
          r1.last_line == r2.last_line && r1.torn == r2.torn &&
          r1.torn_line == r2.torn_line);
    CHECK_STR(e1.msg, e2.msg);
    CHECK(g1.rs.n == g2.rs.n);
    for (size_t i = 0; i < g1.rs.n && i < g2.rs.n; i++) {
      const data_row *x = &g1.rs.rows[i], *y = &g2.rs.rows[i];
      if (strcmp(x->reason, y->reason) || strcmp(x->run_id, y->run_id) ||
          x->value != y->value || x->seq != y->seq) {
        CHECK(!"rows differ between text and file scans");
        break;
      }
    }
    if (variant == 0) {
      CHECK(e2.status == CORE_OK && !r2.torn && g2.rs.n > 7000);
      CHECK(r2.good_end == b.len);
      CHECK(g2.rs.n > 3000 &&
            strcmp(g2.rs.rows[g2.rs.n - 3001].reason, reason) == 0);
    } else if (variant == 1) {
      CHECK(r2.torn && r2.torn_line > r2.last_line);
    } else {
      CHECK(e2.status == CORE_EINPUT &&
            strstr(e2.msg, "value 'not-a-number' (") &&
            strstr(e2.msg, "): not a number; prereg never writes"));
    }
    data_rowset_free(&g1.rs);
    data_rowset_free(&g2.rs);
  }
  /* A missing file is named. */
  memset(&e2, 0, sizeof e2);
  CHECK(data_csv_scan_file("/nonexistent/b0001.csv", collect, &g2, &r2, NULL,
                           &e2) == CORE_EIO);
  CHECK(strstr(e2.msg, "/nonexistent/b0001.csv: cannot open") != NULL);
  core_buf_free(&b);
}

/* Manifest, batches, recovery */

/* A real sheet: recovery loads the frozen version to learn how many
 * metrics a run of a workload has. The struct filled from it by hand
 * lets amendments be varied without rewriting Lua. */
static const char sheet_text[] =
    "protocol {\n"
    "  id = \"unit\", title = \"Unit\", question = \"Does it?\",\n"
    "  author = \"T. Ester\",\n"
    "  arms = { { name = \"bare\", reference = true },\n"
    "           { name = \"bwrap\" } },\n"
    "  workloads = {\n"
    "    { name = \"startup\", runs = 3, cmd = \"true\",\n"
    "      metrics = { \"wall_s\", \"user_s\" } },\n"
    "  },\n"
    "  rule = { estimator = \"median\", confidence = 0.95,\n"
    "           resamples = 100, seed = 1,\n"
    "           verdicts = { { \"slower\", ci_excludes = 1 } } },\n"
    "  hypotheses = {\n"
    "    { id = \"H1\", says = \"bwrap is slower\", workload = \"startup\",\n"
    "      metric = \"wall_s\", arms = { \"bwrap\" }, claim = at_least(1) },\n"
    "  },\n"
    "}\n";

static void fill_sheet(proto_sheet *s, proto_amendment *am, size_t n_am) {
  memset(s, 0, sizeof *s);
  s->path = W("unit.lua");
  s->id = W("unit");
  s->text = (char *)sheet_text;
  s->text_len = sizeof sheet_text - 1;
  core_sha256_hex(s->text, s->text_len, s->sha256);
  s->amendments = am;
  s->n_amendments = n_am;
}

static void test_experiment(void) {
  char data_dir[300], path[600];
  proto_sheet s, s2;
  proto_amendment am[2];
  data_experiment *exp = NULL;
  data_batch *b = NULL;
  data_rowset rs;
  core_buf rep;
  core_err err;
  int already = 0;
  char *edited;
  snprintf(data_dir, sizeof data_dir, "%s/data", tmp);
  fill_sheet(&s, NULL, 0);
  CHECK(data_experiment_open(data_dir, &s, &exp, &err) == CORE_OK);
  CHECK(exp->n_versions == 0);
  CHECK(data_check_lock(exp, &s, &err) == CORE_ELOCK);
  CHECK(strstr(err.msg, "unit.lua: not registered; run prereg register "
                        "unit.lua") != NULL);
  CHECK(data_register(exp, &s, &already, &err) == CORE_OK && !already);
  CHECK(exp->n_versions == 1);
  CHECK_STR(exp->versions[0].sha256, s.sha256);
  CHECK(data_register(exp, &s, &already, &err) == CORE_OK && already);
  CHECK(data_check_lock(exp, &s, &err) == CORE_OK);
  snprintf(path, sizeof path, "%s/unit/versions/v0.lua", data_dir);
  {
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0444);
  }

  /* An edited sheet is refused with its changed lines. */
  edited = core_asprintf("%s-- a new line\n", sheet_text);
  fill_sheet(&s2, NULL, 0);
  s2.text = edited;
  s2.text_len = strlen(edited);
  core_sha256_hex(s2.text, s2.text_len, s2.sha256);
  CHECK(data_check_lock(exp, &s2, &err) == CORE_ELOCK);
  CHECK(strstr(err.msg, "unit.lua: differs from registered version v0:\n") !=
        NULL);
  CHECK(strstr(err.msg, "  +-- a new line\n") != NULL);
  CHECK(strstr(err.msg, "then run: prereg amend unit.lua") != NULL);
  CHECK(data_amend(exp, &s2, &err) == CORE_EINPUT);
  CHECK(strstr(err.msg, "no amendment was added") != NULL);
  memset(am, 0, sizeof am);
  am[0].date = W("2026-10-21");
  am[0].why = W("Add a line.");
  am[0].line = 2;
  s2.amendments = am;
  s2.n_amendments = 1;
  CHECK(data_amend(exp, &s2, &err) == CORE_OK);
  CHECK(exp->n_versions == 2);
  CHECK_STR(exp->versions[1].why, "Add a line.");
  CHECK(data_check_lock(exp, &s2, &err) == CORE_OK);
  /* Editing the recorded amendment is refused, naming it. */
  am[0].why = W("Something else.");
  am[1].date = W("2026-10-22");
  am[1].why = W("More.");
  s2.n_amendments = 2;
  {
    char *e2 = core_asprintf("%s-- more\n", edited);
    s2.text = e2;
    s2.text_len = strlen(e2);
    core_sha256_hex(s2.text, s2.text_len, s2.sha256);
    CHECK(data_amend(exp, &s2, &err) == CORE_EINPUT);
    CHECK(strstr(err.msg, "unit.lua:2: amendments[1] (dated 2026-10-21) "
                          "differs from the one recorded in v1") != NULL);
    core_free(e2);
  }

  /* A batch: rows in, frozen, read back; the manifest lists it. */
  CHECK(data_batch_begin(exp, "run", &b, &err) == CORE_OK);
  if (b) {
    data_row rows[2] = {sample_row("", "r1", 0.5), sample_row("", "r1", 0.25)};
    rows[0].sheet_version = rows[1].sheet_version = 1;
    rows[0].sheet_sha256 = rows[1].sheet_sha256 = exp->versions[1].sha256;
    rows[1].metric = W("user_s");
    CHECK_STR(data_batch_id(b), "b0001");
    CHECK(data_batch_append(b, rows, 2, &err) == CORE_OK);
    snprintf(path, sizeof path, "%s/r1.out", data_batch_dir(b));
    write_text(path, "out\n", 4);
    CHECK(data_batch_freeze(b, "{\"kind\":\"run\",\"host\":{\"cores\":2}}",
                            &err) == CORE_OK);
  }
  CHECK(data_load_rows(exp, &rs, &err) == CORE_OK);
  CHECK(rs.n == 2);
  if (rs.n == 2) {
    CHECK_STR(rs.rows[0].batch, "b0001");
    CHECK(rs.rows[1].value == 0.25);
    /* Loaded rows borrow interned strings from the rowset's pool: equal
     * strings are one copy, different ones stay apart. */
    CHECK(rs.pool != NULL);
    CHECK(rs.rows[0].sheet_sha256 == rs.rows[1].sheet_sha256);
    CHECK(rs.rows[0].host == rs.rows[1].host);
    CHECK(rs.rows[0].run_id == rs.rows[1].run_id);
    CHECK_STR(rs.rows[0].metric, "wall_s");
    CHECK_STR(rs.rows[1].metric, "user_s");
  }
  data_rowset_free(&rs);
  CHECK(rs.pool == NULL && rs.rows == NULL && rs.n == 0);
  data_rowset_free(&rs); /* twice is harmless */
  core_buf_init(&rep);
  CHECK(data_verify(exp, &rep, &err) == CORE_OK);
  CHECK(rep.data && strstr(rep.data, "ok: 8 files, chain of 2 versions"));
  core_buf_free(&rep);

  /* An unfinished batch with a torn line: recovered and frozen. */
  CHECK(data_batch_begin(exp, "run", &b, &err) == CORE_OK);
  if (b) {
    data_row r = sample_row("", "r2", 1.5);
    char csv[400];
    FILE *f;
    r.sheet_version = 1;
    r.sheet_sha256 = exp->versions[1].sha256;
    r.metric = W("wall_s");
    CHECK(data_batch_append(b, &r, 1, &err) == CORE_OK);
    snprintf(csv, sizeof csv, "%s/unit/batches/b0002.csv", data_dir);
    data_batch_abandon(b);
    f = fopen(csv, "a");
    if (f) {
      fputs("1,abc,b0002,run,startup,bwrap,4,10,r3,2026", f);
      fclose(f);
    }
  }
  core_buf_init(&rep);
  CHECK(data_verify(exp, &rep, &err) == CORE_OK);
  CHECK(rep.data && strstr(rep.data, "b0002.csv: unfinished batch"));
  core_buf_free(&rep);
  /* Run r2 wrote one of the workload's two metrics: cut short, so it
   * goes too, and --resume will run it again. */
  core_buf_init(&rep);
  CHECK(data_recover(exp, &rep, &err) == CORE_OK);
  CHECK(rep.data && strstr(rep.data, "b0002.csv:3: torn (no final "
                                     "newline) last line dropped"));
  CHECK(rep.data && strstr(rep.data, "b0002.csv:2: run r2 of startup/bwrap "
                                     "cut short (1 of 2 metrics)"));
  CHECK(rep.data && strstr(rep.data, "recovered and frozen (0 rows)"));
  if (!rep.data || !strstr(rep.data, "recovered"))
    fprintf(stderr, "recover: %s\n", err.msg);
  CHECK(data_load_rows(exp, &rs, &err) == CORE_OK && rs.n == 2);
  data_rowset_free(&rs);
  core_buf_free(&rep);
  core_buf_init(&rep);
  CHECK(data_verify(exp, &rep, &err) == CORE_OK);
  CHECK(rep.data && strstr(rep.data, "ok: 10 files, chain of 2 versions"));
  core_buf_free(&rep);

  /* Verify names a changed byte, a writable file, a stray file. */
  snprintf(path, sizeof path, "%s/unit/batches/b0001.csv", data_dir);
  chmod(path, 0644);
  {
    FILE *f = fopen(path, "r+");
    if (f) {
      fseek(f, -3, SEEK_END);
      fputc('9', f);
      fclose(f);
    }
  }
  snprintf(path, sizeof path, "%s/unit/versions/stray.txt", data_dir);
  write_text(path, "x", 1);
  core_buf_init(&rep);
  CHECK(data_verify(exp, &rep, &err) == CORE_EVERIFY);
  CHECK(rep.data && strstr(rep.data, "unit/batches/b0001.csv: content "
                                     "differs from the MANIFEST"));
  CHECK(rep.data && strstr(rep.data, "from the MANIFEST (sha256 ") &&
        strstr(rep.data, "; and it is writable"));
  CHECK(rep.data && strstr(rep.data, "unit/versions/stray.txt: not in the "
                                     "MANIFEST"));
  core_buf_free(&rep);
  core_free(edited);
  data_experiment_free(exp);
}

/* A second writer is refused while the first holds the lock. */
static void test_flock(void) {
  char data_dir[300];
  proto_sheet s;
  data_experiment *a = NULL, *b = NULL;
  core_err err;
  snprintf(data_dir, sizeof data_dir, "%s/data", tmp);
  fill_sheet(&s, NULL, 0);
  CHECK(data_experiment_open(data_dir, &s, &a, &err) == CORE_OK);
  CHECK(data_experiment_open(data_dir, &s, &b, &err) == CORE_OK);
  if (a && b) {
    CHECK(data_experiment_lock(a, &err) == CORE_OK);
    CHECK(data_experiment_lock(b, &err) == CORE_ERUN);
    CHECK(strstr(err.msg, "another prereg command is writing") != NULL);
  }
  data_experiment_free(a);
  if (b)
    CHECK(data_experiment_lock(b, &err) == CORE_OK);
  data_experiment_free(b);
}

int main(void) {
  char cmd[700];
  /* Registration happens "before" the rows' start times. */
  setenv("PREREG_NOW", "1792454400", 1); /* 2026-10-20T00:00:00Z */
  snprintf(tmp, sizeof tmp, "/tmp/prereg-test-lock-XXXXXX");
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    return 1;
  }
  test_diff();
  test_csv();
  test_csv_fast_path();
  test_pool();
  test_csv_file();
  test_experiment();
  test_flock();
  snprintf(cmd, sizeof cmd, "chmod -R u+w %s && rm -rf %s", tmp, tmp);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", tmp);
  return HARNESS_END();
}
