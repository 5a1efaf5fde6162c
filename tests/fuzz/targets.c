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
#include <unistd.h>

#include "core/core.h"
#include "data/data.h"
#include "data/data_internal.h"
#include "protocols/proto.h"

#ifndef FUZZ_SHEET_PATH
#error "FUZZ_SHEET_PATH (tests/fuzz/fuzz.lua) must be defined by the build"
#endif

/* {==== Scratch experiment ==== */

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

/* }==== */

/* {==== Targets ==== */

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
  manifest m;
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

/* }==== */

const fuzz_target fuzz_targets[] = {
    {"sheet", run_sheet},
    {"batch", run_batch},
    {"import_csv", run_import_csv},
    {"import_json", run_import_json},
    {"import_go", run_import_go},
    {"manifest", run_manifest},
    {NULL, NULL},
};

const fuzz_target *fuzz_target_find(const char *name) {
  for (const fuzz_target *t = fuzz_targets; t->name; t++)
    if (strcmp(t->name, name) == 0)
      return t;
  return NULL;
}
