/* test_core.c: status, memory injection, buffers, SHA-256, tree removal,
 * option parser.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/core.h"
#include "harness.h"

static void test_status(void) {
  core_err err = {0};
  CHECK(core_fail(&err, CORE_EIO, "x: %d", 3) == CORE_EIO);
  CHECK_STR(err.msg, "x: 3");
  core_err_prefix(&err, "ctx: ");
  CHECK_STR(err.msg, "ctx: x: 3");
  CHECK_STR(core_strerror(CORE_OK), "no error");
  CHECK_STR(core_strerror((core_status)999), "unknown status");
  CHECK(core_exit_code(CORE_OK) == 0);
  CHECK(core_exit_code(CORE_EPROTOCOL) == 2);
  CHECK(core_exit_code(CORE_EINPUT) == 2);
  CHECK(core_exit_code(CORE_EVERIFY) == 1);
}

static void test_mem(void) {
  char *p;
  core_buf b;
  core_mem_fail_after(1, 0);
  p = core_strdup("a");
  CHECK(p != NULL);
  CHECK(core_strdup("b") == NULL);
  CHECK(core_mem_failures() == 1);
  core_free(p);
  core_buf_init(&b);
  core_mem_fail_after(0, 1);
  core_buf_printf(&b, "%d", 42);
  CHECK(b.oom);
  core_mem_fail_after(-1, 0);
  core_buf_free(&b);
  core_buf_printf(&b, "%s-%d", "x", 7);
  core_buf_puts(&b, "!");
  CHECK_STR(b.data, "x-7!");
  core_buf_free(&b);
  p = core_asprintf("%05.1f", 2.25);
  CHECK_STR(p, "002.2");
  core_free(p);

  /* core_grow: room for one more, doubling; a failure keeps the array. */
  int *v = NULL, *nv;
  size_t cap = 0, n = 0;
  for (int i = 0; i < 100; i++) {
    nv = core_grow(v, &cap, n, sizeof *v, 4);
    CHECK(nv != NULL);
    if (!nv)
      break;
    v = nv;
    v[n++] = i;
  }
  CHECK(n == 100 && cap == 128 && v[99] == 99);
  CHECK(core_grow(v, &cap, 50, sizeof *v, 4) == v && cap == 128);
  core_mem_fail_after(0, 0);
  CHECK(core_grow(v, &cap, 128, sizeof *v, 4) == NULL);
  core_mem_fail_after(-1, 0);
  CHECK(cap == 128 && v[127 - 28] == 99);
  size_t huge = (size_t)-1 / 2 + 1;
  CHECK(core_grow(v, &huge, huge, sizeof *v, 4) == NULL);
  CHECK(huge == (size_t)-1 / 2 + 1);
  core_free(v);
}

static void test_sha(void) {
  char hex[CORE_SHA256_HEX];
  char tree1[CORE_SHA256_HEX], tree2[CORE_SHA256_HEX];
  char dir[] = "/tmp/prereg-test-XXXXXX";
  char *f;
  core_err err = {0};
  core_sha256_hex("abc", 3, hex);
  CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223"
                 "b00361a396177a9cb410ff61f20015ad");
  CHECK(mkdtemp(dir) != NULL);
  f = core_path_join(dir, "a.txt");
  CHECK(core_write_file_atomic(f, "hello", 5, 0644, &err) == CORE_OK);
  CHECK(core_sha256_file(f, hex, &err) == CORE_OK);
  CHECK_STR(hex, "2cf24dba5fb0a30e26e83b2ac5b9e29e"
                 "1b161e5c1fa7425e73043362938b9824");
  CHECK(core_sha256_tree(dir, tree1, &err) == CORE_OK);
  CHECK(chmod(f, 0600) == 0); /* a mode change changes the tree digest */
  CHECK(core_sha256_tree(dir, tree2, &err) == CORE_OK);
  CHECK(strcmp(tree1, tree2) != 0);
  CHECK(chmod(f, 0644) == 0);
  CHECK(core_sha256_tree(dir, tree2, &err) == CORE_OK);
  CHECK_STR(tree1, tree2);
  {
    char *text = NULL;
    size_t len = 0;
    CHECK(core_read_file(f, &text, &len, &err) == CORE_OK);
    CHECK(len == 5 && memcmp(text, "hello", 5) == 0);
    core_free(text);
  }
  unlink(f);
  rmdir(dir);
  core_free(f);
  CHECK(core_sha256_file("/nonexistent/x", hex, &err) == CORE_EIO);
  CHECK(strstr(err.msg, "/nonexistent/x: cannot open") != NULL);
}

/* A tree as a command may leave it: read-only and closed folders, links
 * to things outside that must survive. */
static void test_remove_tree(void) {
  char top[] = "/tmp/prereg-core-rm-XXXXXX";
  char p[256], q[256];
  core_err err = {0};
  CHECK(mkdtemp(top) != NULL);
  snprintf(p, sizeof p, "%s/outside", top);
  CHECK(mkdir(p, 0755) == 0);
  snprintf(p, sizeof p, "%s/outside/keep", top);
  FILE *f = fopen(p, "w");
  CHECK(f != NULL);
  if (f)
    fclose(f);
  snprintf(p, sizeof p, "%s/t", top);
  CHECK(mkdir(p, 0755) == 0);
  snprintf(p, sizeof p, "%s/t/ro", top);
  CHECK(mkdir(p, 0755) == 0);
  snprintf(p, sizeof p, "%s/t/ro/deep", top);
  CHECK(mkdir(p, 0755) == 0);
  snprintf(q, sizeof q, "%s/outside", top);
  snprintf(p, sizeof p, "%s/t/ro/deep/link", top);
  CHECK(symlink(q, p) == 0);
  snprintf(p, sizeof p, "%s/t/ro/deep", top);
  CHECK(chmod(p, 0) == 0);
  snprintf(p, sizeof p, "%s/t/ro", top);
  CHECK(chmod(p, 0500) == 0);
  snprintf(p, sizeof p, "%s/t", top);
  CHECK(core_remove_tree(p, &err) == CORE_OK);
  CHECK(!core_exists(p));
  snprintf(p, sizeof p, "%s/outside/keep", top);
  CHECK(core_exists(p));
  /* A link given as the tree is removed, not followed; missing is ok. */
  snprintf(p, sizeof p, "%s/l", top);
  CHECK(symlink(q, p) == 0);
  CHECK(core_remove_tree(p, &err) == CORE_OK);
  CHECK(!core_exists(p) && core_is_dir(q));
  CHECK(core_remove_tree(p, &err) == CORE_OK);
  CHECK(core_remove_tree(top, &err) == CORE_OK);
  CHECK(!core_exists(top));
}

static void test_cli(void) {
  cli_opts o;
  core_err err = {0};
  char a1s[][16] = {"prereg", "run", "s.lua", "--data", "d", "--resume"};
  char a2s[][16] = {"prereg", "--data=d", "run", "--only", "w", "s.lua"};
  char a3s[][16] = {"prereg", "run"};
  char a4s[][16] = {"prereg", "frob"};
  char a5s[][16] = {"prereg", "check", "x", "--nope"};
  char *a1[6], *a2[6], *a3[2], *a4[2], *a5[4];
  for (int i = 0; i < 6; i++) {
    a1[i] = a1s[i];
    a2[i] = a2s[i];
  }
  for (int i = 0; i < 2; i++) {
    a3[i] = a3s[i];
    a4[i] = a4s[i];
  }
  for (int i = 0; i < 4; i++)
    a5[i] = a5s[i];
  CHECK(cli_parse(6, a1, &o, &err) == CORE_OK);
  CHECK_STR(o.command, "run");
  CHECK_STR(o.args[0], "s.lua");
  CHECK_STR(o.data_dir, "d");
  CHECK(o.resume == 1);
  CHECK(cli_parse(6, a2, &o, &err) == CORE_OK);
  CHECK_STR(o.only, "w");
  CHECK_STR(o.args[0], "s.lua");
  CHECK_STR(o.data_dir, "d");
  CHECK(cli_parse(2, a3, &o, &err) == CORE_EUSAGE);
  CHECK(cli_parse(2, a4, &o, &err) == CORE_EUSAGE);
  CHECK(strstr(err.msg, "unknown command 'frob'") != NULL);
  CHECK(cli_parse(4, a5, &o, &err) == CORE_EUSAGE);
  CHECK(strstr(err.msg, "'--nope'") != NULL);

  /* An option of another command is refused, not ignored: before or
   * after the command, with or without a value. */
  char b1s[][16] = {"prereg", "--quick", "analyze", "s.lua"};
  char b2s[][16] = {"prereg", "report", "s.lua", "--only=w"};
  char b3s[][16] = {"prereg", "import", "s.lua", "h.json", "--only", "w"};
  char *b1[4], *b2[4], *b3[6];
  for (int i = 0; i < 4; i++) {
    b1[i] = b1s[i];
    b2[i] = b2s[i];
  }
  for (int i = 0; i < 6; i++)
    b3[i] = b3s[i];
  CHECK(cli_parse(4, b1, &o, &err) == CORE_EUSAGE);
  CHECK(strstr(err.msg, "analyze does not take '--quick'") != NULL);
  CHECK(cli_parse(4, b2, &o, &err) == CORE_EUSAGE);
  CHECK(strstr(err.msg, "report does not take '--only'") != NULL);
  CHECK(cli_parse(6, b3, &o, &err) == CORE_OK);
  CHECK_STR(o.only, "w");
}

int main(void) {
  test_status();
  test_mem();
  test_sha();
  test_remove_tree();
  test_cli();
  return HARNESS_END();
}
