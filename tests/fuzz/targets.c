/* targets.c: prereg's readers of untrusted input, driven by fuzz data.
 * The same functions run under libFuzzer (clang) and in the gcc replay
 * test, so a crash once found stays checked by the ordinary suite.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include "tests/fuzz/targets.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundles/bundles.h"
#include "core/core.h"
#include "data/data.h"
#include "data/data_internal.h"
#include "imports/imports_internal.h"
#include "protocols/proto.h"
#include "reports/report.h"

#ifndef FUZZ_SHEET_PATH
#error "FUZZ_SHEET_PATH (tests/fuzz/fuzz.lua) must be defined by the build"
#endif

/* Scratch experiment */

/* Data readers take folders, not buffers, so every target works in one
 * registered experiment under a private scratch folder (on /dev/shm when
 * there is one: the files are rewritten for every input). After each
 * input the experiment is put back as it was registered, so inputs do not
 * influence one another and a crash replays from its file alone. */
static char scratch[256];
static proto_sheet *sheet;
static data_experiment *xp;
static char *manifest_path, *batches_dir, *registered_manifest;
static size_t registered_manifest_len;

static void die(const char *what, const char *msg) {
  /* Set-up failures are the harness's, not the code under test's: stop
   * loudly instead of reporting them as a finding. */
  fprintf(stderr, "fuzz set-up: %s: %s\n", what, msg);
  exit(3);
}

static int rm_one(const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void rm_tree(const char *path) {
  nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void fuzz_cleanup(void) {
  if (scratch[0])
    rm_tree(scratch);
  scratch[0] = '\0';
  data_experiment_free(xp);
  proto_sheet_free(sheet);
  xp = NULL;
  sheet = NULL;
  core_free(manifest_path);
  core_free(batches_dir);
  core_free(registered_manifest);
  manifest_path = batches_dir = registered_manifest = NULL;
}

/* Writes data to path, replacing it (frozen files are 0444: unlink). */
static void put_file(const char *path, const void *data, size_t n) {
  int fd;
  unlink(path);
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    die(path, strerror(errno));
  if (n && write(fd, data, n) != (ssize_t)n)
    die(path, strerror(errno));
  close(fd);
}

static void setup(void) {
  const char *base = getenv("TMPDIR");
  core_err err = {0};
  char *text = NULL, *data_dir;
  size_t len = 0;
  int already = 0;
  if (sheet)
    return;
  if (!base || !*base)
    base = core_is_dir("/dev/shm") ? "/dev/shm" : "/tmp";
  snprintf(scratch, sizeof scratch, "%s/prereg-fuzz-XXXXXX", base);
  if (!mkdtemp(scratch))
    die(scratch, strerror(errno));
  atexit(fuzz_cleanup);
  if (core_read_file(FUZZ_SHEET_PATH, &text, &len, &err) != CORE_OK)
    die("sheet", err.msg);
  sheet = proto_sheet_load_text(FUZZ_SHEET_PATH, text, len, &err);
  core_free(text);
  if (!sheet)
    die("sheet", err.msg);
  if (!(data_dir = core_path_join(scratch, "data")))
    die("set-up", "out of memory");
  if (data_experiment_open(data_dir, sheet, &xp, &err) != CORE_OK ||
      data_register(xp, sheet, &already, &err) != CORE_OK ||
      data_experiment_lock(xp, &err) != CORE_OK)
    die("register", err.msg);
  core_free(data_dir);
  manifest_path = core_path_join(xp->dir, "MANIFEST");
  batches_dir = core_path_join(xp->dir, "batches");
  if (!manifest_path || !batches_dir)
    die("set-up", "out of memory");
  if (core_read_file(manifest_path, &registered_manifest,
                     &registered_manifest_len, &err) != CORE_OK)
    die("manifest", err.msg);
}

/* Back to the state right after registration. */
static void reset(void) {
  rm_tree(batches_dir);
  put_file(manifest_path, registered_manifest, registered_manifest_len);
  chmod(manifest_path, 0444);
}

/* Targets */

static int run_sheet(const uint8_t *data, size_t size) {
  core_err err = {0};
  proto_sheet *s =
      proto_sheet_load_text("fuzz.lua", (const char *)data, size, &err);
  if (s) {
    /* A sheet that loads is used: summary, rule in words, expansion of
     * every command template, claims evaluated on no results. */
    core_buf b;
    core_buf_init(&b);
    proto_summary(s, &b);
    proto_rule_words(s, &b);
    for (size_t i = 0; i < s->n_arms; i++) {
      proto_expand_ctx ctx = {.cmd = "true",
                              .arm = s->arms[i].name,
                              .workload = "w",
                              .run_id = "r1",
                              .round = 1};
      char *x = proto_expand(s, s->arms[i].run ? s->arms[i].run : "{cmd}",
                             &ctx, &err);
      core_free(x);
    }
    for (size_t i = 0; i < s->n_hypotheses; i++) {
      proto_outcome o;
      char *reason = NULL;
      if (proto_eval_claim(s, &s->hypotheses[i], NULL, 0, &o, &reason, &err) ==
          CORE_OK)
        core_free(reason);
    }
    core_buf_free(&b);
    proto_sheet_free(s);
  }
  return 0;
}

/* Sheets that make the interpreter work */

/* The input is Lua run twice, as the main chunk of a sheet and as the
 * body of its function claim, after a prelude that gives it long strings
 * to work on (L and M differ in their last byte, D is digits, T holds
 * references to L and M): sorts, comparisons, conversions and string
 * functions on them must be charged by their length, so that no input
 * runs past the sandbox's 0.2 s CPU limit by more than a small factor. */
static const char cost_prelude[] =
    "local L = string.rep('x', 1 << 20)\n"
    "local M = string.rep('x', (1 << 20) - 1) .. 'y'\n"
    "local D = string.rep('7', 1 << 20)\n"
    "local T = {}\n"
    "for i = 1, 64 do T[i] = i % 2 == 0 and L or M end\n";
static const char cost_claim[] =
    "\nprotocol { id = 'c', title = 'c', question = 'c?', author = 'c',\n"
    "  arms = { { name = 'a', reference = true }, { name = 'b' } },\n"
    "  workloads = { { name = 'w', metrics = { 'wall_s' } } },\n"
    "  rule = { estimator = 'median', seed = 1,\n"
    "           verdicts = { { 'slower', ci_excludes = 1 } } },\n"
    "  hypotheses = { { id = 'H', says = 'c', claim = function(results)\n";
static const char cost_end[] = "\nend } } }\n";

/* Past this much CPU for one evaluation, the budget let work through: 5
 * times the sandbox's limit; 10 times under AddressSanitizer, whose checks
 * of every byte written (and a loaded machine's page faults) cost as much
 * again as the work the budget allows. */
#if defined(__SANITIZE_ADDRESS__)
#define COST_BOUND_S 2.0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COST_BOUND_S 2.0
#endif
#endif
#ifndef COST_BOUND_S
#define COST_BOUND_S 1.0
#endif

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void within_bound(double t0, const char *what) {
  double used = cpu_s() - t0;
  if (used > COST_BOUND_S) {
    fprintf(stderr,
            "fuzz: the %s ran %.2f s of CPU, past the sandbox's "
            "limit by more than a small factor\n",
            what, used);
    abort();
  }
}

static int run_sheet_cost(const uint8_t *data, size_t size) {
  core_buf text;
  core_err err = {0};
  proto_sheet *s;
  double t0;
  core_buf_init(&text);
  core_buf_puts(&text, cost_prelude);
  core_buf_append(&text, data, size);
  core_buf_puts(&text, cost_claim);
  core_buf_append(&text, data, size);
  core_buf_puts(&text, cost_end);
  if (text.oom)
    die("set-up", "out of memory");
  t0 = cpu_s();
  s = proto_sheet_load_text("cost.lua", text.data, text.len, &err);
  within_bound(t0, "sheet");
  if (s && s->n_hypotheses == 1) {
    proto_result_view r = {.workload = "w",
                           .metric = "wall_s",
                           .arm = "b",
                           .verdict = "slower",
                           .ratio = 1.5,
                           .ci_low = 1.2,
                           .ci_high = 1.8,
                           .median = 2.0,
                           .median_reference = 1.0,
                           .n = 10,
                           .n_reference = 10};
    proto_outcome o;
    char *reason = NULL;
    t0 = cpu_s();
    if (proto_eval_claim(s, &s->hypotheses[0], &r, 1, &o, &reason, &err) ==
        CORE_OK)
      core_free(reason);
    within_bound(t0, "claim");
  }
  proto_sheet_free(s);
  core_buf_free(&text);
  return 0;
}

static void load_and_verify(void) {
  data_rowset rows;
  core_buf report;
  core_err err = {0};
  data_counted c;
  if (data_load_rows(xp, &rows, &err) == CORE_OK) {
    if (data_count_rows(NULL, xp, 0, &rows, &c, &err) == CORE_OK)
      data_counted_free(&c);
    data_rowset_free(&rows);
  }
  core_buf_init(&report);
  (void)data_verify(xp, &report, &err);
  core_buf_free(&report);
}

/* A batch csv as a crash or a hand edit may leave it: read while
 * unfinished, recovered by --resume, read again frozen, verified. */
static int run_batch(const uint8_t *data, size_t size) {
  char *csv;
  core_buf notes;
  core_err err = {0};
  setup();
  if (core_mkdir_p(batches_dir, 0755, &err) != CORE_OK)
    die("batches", err.msg);
  if (!(csv = core_path_join(batches_dir, "b0001.csv")))
    die("set-up", "out of memory");
  put_file(csv, data, size);
  load_and_verify();
  core_buf_init(&notes);
  if (data_recover(xp, &notes, &err) != CORE_OK) {
    /* Not recoverable: freeze it by hand to reach the frozen-batch
     * reader with the same bytes. */
    char hex[CORE_SHA256_HEX];
    core_buf m;
    core_sha256_hex(data, size, hex);
    core_buf_init(&m);
    core_buf_append(&m, registered_manifest, registered_manifest_len);
    core_buf_printf(&m, "%s  batches/b0001.csv\n", hex);
    if (m.oom)
      die("set-up", "out of memory");
    put_file(manifest_path, m.data, m.len);
    core_buf_free(&m);
  }
  core_buf_free(&notes);
  load_and_verify();
  core_free(csv);
  reset();
  return 0;
}

static int run_import(const uint8_t *data, size_t size, const char *name,
                      const char *arm_map) {
  char *file;
  core_err err = {0};
  size_t imported = 0;
  setup();
  if (!(file = core_path_join(scratch, name)))
    die("set-up", "out of memory");
  put_file(file, data, size);
  if (data_import_only(xp, sheet, file, arm_map, NULL, &imported, &err) ==
      CORE_OK)
    load_and_verify(); /* what was imported must read back and verify */
  reset();
  core_free(file);
  return 0;
}

static int run_import_csv(const uint8_t *data, size_t size) {
  return run_import(data, size, "import.csv", NULL);
}

static int run_import_json(const uint8_t *data, size_t size) {
  size_t k = 0;
  /* Only what the importer takes for JSON (first non-blank byte '{'):
   * the rest is the CSV path, which import_csv fuzzes. */
  while (k < size && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' ||
                      data[k] == '\r'))
    k++;
  if (k == size || data[k] != '{')
    return 0;
  return run_import(data, size, "hyperfine.json",
                    "/bin/true=bare,sleep 0.001=box");
}

/* go test -bench output: inputs the importer reads as such (a first line
 * that is a configuration or Benchmark line); the rest is the CSV path. */
static int run_import_go(const uint8_t *data, size_t size) {
  if (!data_is_go_bench((const char *)data, size))
    return 0;
  return run_import(data, size, "go-bench.txt", "Bare=bare,Box=box");
}

static int run_manifest(const uint8_t *data, size_t size) {
  data_manifest m;
  core_buf problems;
  core_err err = {0};
  data_report_inputs *ri = NULL;
  setup();
  put_file(manifest_path, data, size);
  if (data_manifest_load(xp->dir, &m, NULL, &err) == CORE_OK)
    data_manifest_free(&m);
  core_buf_init(&problems);
  if (data_manifest_load(xp->dir, &m, &problems, &err) == CORE_OK)
    data_manifest_free(&m);
  core_buf_free(&problems);
  load_and_verify();
  if (data_report_inputs_load(xp, &ri, &err) == CORE_OK)
    data_report_inputs_free(ri);
  reset();
  return 0;
}

/* Bundles */

/* CRC-32 of gzip's trailer (ISO 3309). */
static uint32_t crc32_of(const uint8_t *p, size_t n) {
  uint32_t crc = 0xffffffffu;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
  }
  return ~crc;
}

/* data as one gzip member of stored (uncompressed) deflate blocks, with
 * a correct trailer: a mutation of the tar inside reaches the tar and
 * BUNDLE-MANIFEST readers instead of failing the gzip check first. */
static void put_gzip(const char *path, const uint8_t *data, size_t size) {
  static const uint8_t header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  uint32_t crc = crc32_of(data, size), len = (uint32_t)size;
  core_buf b;
  size_t off = 0;
  core_buf_init(&b);
  core_buf_append(&b, header, sizeof header);
  do {
    size_t n = size - off > 65535 ? 65535 : size - off;
    uint8_t block[5] = {off + n == size, (uint8_t)n, (uint8_t)(n >> 8),
                        (uint8_t)~n, (uint8_t)(~n >> 8)};
    core_buf_append(&b, block, sizeof block);
    core_buf_append(&b, data + off, n);
    off += n;
  } while (off < size);
  for (int i = 0; i < 4; i++)
    core_buf_append(&b, &(uint8_t){(uint8_t)(crc >> (8 * i))}, 1);
  for (int i = 0; i < 4; i++)
    core_buf_append(&b, &(uint8_t){(uint8_t)(len >> (8 * i))}, 1);
  if (b.oom)
    die("set-up", "out of memory");
  put_file(path, b.data, b.len);
  core_buf_free(&b);
}

/* What `prereg verify BUNDLE` does with the file: the members against
 * BUNDLE-MANIFEST and the chain (data_bundle_verify), then, for a bundle
 * that passes, its report against the analysis of its extracted data
 * (report_verify_bundle). An input starting with gzip's magic is the
 * bundle file itself; any other is the tar stream inside one. */
static int run_bundle(const uint8_t *data, size_t size) {
  const char *sheet_path, *data_dir;
  char *path;
  core_buf report;
  int whole;
  core_err err = {0};
  setup();
  if (!(path = core_path_join(scratch, "in.tar.gz")))
    die("set-up", "out of memory");
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)
    put_file(path, data, size);
  else
    put_gzip(path, data, size);
  core_buf_init(&report);
  if (data_bundle_verify(path, &report, &err) == CORE_OK &&
      data_resolve_input(path, NULL, &sheet_path, &data_dir, NULL, &err) ==
          CORE_OK)
    (void)report_verify_bundle(path, sheet_path, data_dir, &report, &whole,
                               &err);
  core_buf_free(&report);
  /* The extracted copy goes now, not at exit: a process holds few. */
  data_bundle_copies_remove();
  unlink(path);
  core_free(path);
  return 0;
}

/* A line a node runner sends the Slurm coordinator (data_row_unline: a
 * JSON string holding one batch row, read under the frozen rows' rules),
 * and each of its rows written back and read again, as the coordinator
 * journals and freezes it; then the input's first line as a value of
 * wall_s and of a metric that may be negative (data_value_parse). */
static int run_node_line(const uint8_t *data, size_t size) {
  char *text = core_malloc(size + 1);
  data_row r;
  core_err err = {0};
  double v;
  if (!text)
    die("set-up", "out of memory");
  memcpy(text, data, size);
  text[size] = '\0';
  if (data_row_unline(text, &r, &err) == CORE_OK) {
    core_buf line;
    data_row again;
    core_buf_init(&line);
    data_row_line(&r, &line);
    if (!line.oom && data_row_unline(line.data, &again, &err) != CORE_OK)
      abort(); /* what the coordinator writes, it must read back */
    if (!line.oom)
      data_row_free_strings(&again);
    core_buf_free(&line);
    data_row_free_strings(&r);
  }
  text[strcspn(text, "\n")] = '\0';
  (void)data_value_parse("wall_s", text, &v);
  (void)data_value_parse("score", text, &v);
  core_free(text);
  return 0;
}

/* A time-stamp reply (core_stamp_check: DER, status, TSTInfo, imprint,
 * nonce, the signature against the certificates it carries, and with a
 * CA file that does not exist), a time-stamp request read back
 * (core_stamp_request_read), each as a reply and as a request. */
static int run_stamp(const uint8_t *data, size_t size) {
  static const char want[] =
      "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881";
  char hex[CORE_SHA256_HEX], nonce[CORE_NONCE_HEX];
  core_stamp s;
  core_err err = {0};
  (void)core_stamp_check("fuzz.tsr", data, size, NULL, NULL, NULL, &s, &err);
  (void)core_stamp_check("fuzz.tsr", data, size, want, "1234", NULL, &s, &err);
  (void)core_stamp_check("fuzz.tsr", data, size, want, NULL,
                         "/nonexistent/ca.pem", &s, &err);
  (void)core_stamp_request_read("fuzz.tsq", data, size, hex, nonce, &err);
  return 0;
}

/* An SSH signature's armour and blob (core_sshsig_read), as the verifier
 * reads one before ssh-keygen is asked. */
static int run_sshsig(const uint8_t *data, size_t size) {
  char ns[64], fp[CORE_SSH_FP];
  core_err err = {0};
  (void)core_sshsig_read("fuzz.sig", (const char *)data, size, ns, fp, &err);
  return 0;
}

/* Reads back what core_buf_quote wrote (an independent reader of its
 * escapes: \\, \a \b \t \n \v \f \r, \ and three octal digits); aborts
 * on anything else after a backslash. */
static void unquote(const char *q, size_t n, core_buf *out) {
  static const char letter[] = "abtnvfr", named[] = "\a\b\t\n\v\f\r";
  for (size_t i = 0; i < n; i++) {
    const char *k;
    if (q[i] != '\\') {
      core_buf_append(out, q + i, 1);
      continue;
    }
    if (++i >= n)
      abort();
    if (q[i] == '\\') {
      core_buf_append(out, "\\", 1);
    } else if (q[i] && (k = strchr(letter, q[i])) != NULL) {
      core_buf_append(out, named + (k - letter), 1);
    } else if (i + 2 < n && q[i] >= '0' && q[i] <= '3' && q[i + 1] >= '0' &&
               q[i + 1] <= '7' && q[i + 2] >= '0' && q[i + 2] <= '7') {
      char c =
          (char)((q[i] - '0') * 64 + (q[i + 1] - '0') * 8 + q[i + 2] - '0');
      core_buf_append(out, &c, 1);
      i += 2;
    } else {
      abort();
    }
  }
}

/* core_buf_quote of the input, in each of its modes: what it writes holds
 * no control byte (newline and tab aside where kept) and, unless
 * backslashes stay as they are, reads back to exactly the input. */
static int run_quote(const uint8_t *data, size_t size) {
  static const unsigned modes[] = {0, CORE_QUOTE_LINES, CORE_QUOTE_BACKSLASH,
                                   CORE_QUOTE_LINES | CORE_QUOTE_BACKSLASH};
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    core_buf q = {0}, back = {0};
    core_buf_quote(&q, (const char *)data, size, modes[m]);
    if (q.oom)
      die("quote", "out of memory");
    if (core_control_at(q.data ? q.data : "", q.len) != q.len)
      abort(); /* a control byte other than newline and tab */
    if (!(modes[m] & CORE_QUOTE_LINES) && q.len && memchr(q.data, '\n', q.len))
      abort();
    if (!(modes[m] & CORE_QUOTE_LINES) && q.len && memchr(q.data, '\t', q.len))
      abort();
    if (!(modes[m] & CORE_QUOTE_BACKSLASH)) {
      unquote(q.data ? q.data : "", q.len, &back);
      if (back.len != size || (size && memcmp(back.data, data, size) != 0))
        abort(); /* it must read back to the input */
    }
    core_buf_free(&q);
    core_buf_free(&back);
  }
  return 0;
}

const fuzz_target fuzz_targets[] = {
    {"sheet", run_sheet},
    {"batch", run_batch},
    {"import_csv", run_import_csv},
    {"import_json", run_import_json},
    {"import_go", run_import_go},
    {"manifest", run_manifest},
    {"sheet_cost", run_sheet_cost},
    {"bundle", run_bundle},
    {"node_line", run_node_line},
    {"stamp", run_stamp},
    {"sshsig", run_sshsig},
    {"quote", run_quote},
    {NULL, NULL},
};

const fuzz_target *fuzz_target_find(const char *name) {
  for (const fuzz_target *t = fuzz_targets; t->name; t++)
    if (strcmp(t->name, name) == 0)
      return t;
  return NULL;
}
