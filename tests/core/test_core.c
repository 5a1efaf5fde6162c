/* test_core.c: status, memory injection, buffers, SHA-256, files, reads
 * that stop at a failed allocation, tree removal, UTC times, numbers and
 * Markdown for people.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* core_replace_file_atomic replaces a file only while its content is the
 * one read (its digest, hashed again before the rename): a file edited
 * in between is left with the edit, and no temporary is left; a link
 * where the file was is left as it is. Control: the unchanged file is
 * replaced. */
static void test_replace_if_same(void) {
  char dir[] = "/tmp/prereg-test-repl-XXXXXX", hex[CORE_SHA256_HEX];
  char *f, *g, *text = NULL;
  size_t len = 0;
  core_err err = {0};
  CHECK(mkdtemp(dir) != NULL);
  f = core_path_join(dir, "s.lua");
  g = core_path_join(dir, "t.lua");
  CHECK(core_write_file_atomic(f, "read", 4, 0644, &err) == CORE_OK);
  core_sha256_hex("read", 4, hex);
  CHECK(core_replace_file_atomic(f, "plan", 4, 0644, hex, &err) == CORE_OK);
  CHECK(core_read_file(f, &text, &len, &err) == CORE_OK);
  CHECK(len == 4 && memcmp(text, "plan", 4) == 0);
  core_free(text);
  /* Edited after "plan" was read: the write carrying the digest of
   * "plan" is refused, and the edit stays. */
  core_sha256_hex("plan", 4, hex);
  CHECK(core_write_file_atomic(f, "edited", 6, 0644, &err) == CORE_OK);
  CHECK(core_replace_file_atomic(f, "stale", 5, 0644, hex, &err) ==
        CORE_ELOCK);
  CHECK(strstr(err.msg, "changed since prereg read it") != NULL);
  CHECK(core_read_file(f, &text, &len, &err) == CORE_OK);
  CHECK(len == 6 && memcmp(text, "edited", 6) == 0);
  core_free(text);
  /* A link where the file was: refused, the link and its target kept. */
  CHECK(core_write_file_atomic(g, "other", 5, 0644, &err) == CORE_OK);
  CHECK(unlink(f) == 0 && symlink("t.lua", f) == 0);
  CHECK(core_replace_file_atomic(f, "stale", 5, 0644, hex, &err) != CORE_OK);
  CHECK(core_read_file_max(g, 100, 0, &text, &len, &err) == CORE_OK);
  CHECK(len == 5 && memcmp(text, "other", 5) == 0);
  core_free(text);
  {
    struct stat sb;
    CHECK(lstat(f, &sb) == 0 && S_ISLNK(sb.st_mode));
  }
  CHECK(unlink(f) == 0 && unlink(g) == 0);
  CHECK(rmdir(dir) == 0); /* no temporary left behind */
  core_free(f);
  core_free(g);
}

/* The bytes this process has read so far (rchar of /proc/self/io), less
 * those this very reading of it adds. */
static long long bytes_read(void) {
  char buf[1024];
  const char *p;
  int fd = open("/proc/self/io", O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  p = strstr(buf, "rchar: ");
  return p ? atoll(p + 7) : -1;
}

/* Once an allocation fails, core_read_file returns CORE_ENOMEM at once:
 * it reads nothing more (a device or a growing file would otherwise be
 * read on, into a buffer that cannot grow). What the process read is
 * counted by the kernel, so "nothing more" is measured, not assumed. */
static void test_read_after_oom(void) {
  char dir[] = "/tmp/prereg-test-oom-XXXXXX";
  char *f, *text = (char *)"unset", *big;
  size_t len = 99, big_len = 1 << 20;
  long long before, used;
  core_err err = {0};
  CHECK(mkdtemp(dir) != NULL);
  f = core_path_join(dir, "big");
  big = calloc(big_len, 1);
  CHECK(big != NULL);
  CHECK(core_write_file_atomic(f, big, big_len, 0644, &err) == CORE_OK);
  free(big);
  /* The first allocation (room for the file, from its size) fails: not
   * one byte is read. */
  for (int sticky = 0; sticky < 2; sticky++) {
    before = bytes_read();
    core_mem_fail_after(0, sticky);
    CHECK(core_read_file(f, &text, &len, &err) == CORE_ENOMEM);
    used = bytes_read() - before;
    CHECK(core_mem_failures() == 1);
    core_mem_fail_after(-1, 0);
    CHECK(text == NULL && len == 0);
    CHECK(strstr(err.msg, "/big: out of memory reading it") != NULL);
    CHECK(before >= 0);
    /* Only bytes_read's own reading of /proc/self/io, under 1 KiB. */
    CHECK(used >= 0 && used < 1024);
  }
  /* A file whose size fstat does not know (/proc says 0) is read into
   * 4 KiB + 1 and grown: the growth fails, and the read stops there. */
  if (access("/proc/self/smaps", R_OK) == 0) {
    text = NULL;
    CHECK(core_read_file("/proc/self/smaps", &text, &len, &err) == CORE_OK);
    CHECK(len > 3 * 4096); /* enough that it must grow */
    core_free(text);
    for (int sticky = 0; sticky < 2; sticky++) {
      text = (char *)"unset";
      before = bytes_read();
      core_mem_fail_after(1, sticky);
      CHECK(core_read_file("/proc/self/smaps", &text, &len, &err) ==
            CORE_ENOMEM);
      used = bytes_read() - before;
      CHECK(core_mem_failures() == 1);
      core_mem_fail_after(-1, 0);
      CHECK(text == NULL && len == 0);
      CHECK(strstr(err.msg, "out of memory reading it") != NULL);
      /* The 4097 bytes that fitted, and bytes_read's own line. */
      CHECK(used >= 4097 && used < 4097 + 1024);
    }
  }
  unlink(f);
  rmdir(dir);
  core_free(f);
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

static void test_utc(void) {
  core_err err = {0};
  long long t = 7;
  CHECK(core_parse_utc("1970-01-01T00:00:00Z", &t, NULL) == CORE_OK && t == 0);
  CHECK(core_parse_utc("2026-11-30T01:37:25Z", &t, NULL) == CORE_OK &&
        t == 1796002645LL);
  CHECK(core_parse_utc("1969-12-31T23:59:59Z", &t, NULL) == CORE_OK &&
        t == -1);
  /* Leap days: 2024 and 2000 have one, 2100 and 2023 do not. */
  CHECK(core_parse_utc("2024-02-29T12:00:00Z", &t, NULL) == CORE_OK &&
        t == 1709208000LL);
  CHECK(core_parse_utc("2000-02-29T00:00:00Z", &t, NULL) == CORE_OK &&
        t == 951782400LL);
  CHECK(core_parse_utc("2024-03-01T00:00:00Z", &t, NULL) == CORE_OK &&
        t == 1709251200LL);
  t = 7;
  CHECK(core_parse_utc("2100-02-29T00:00:00Z", &t, &err) == CORE_EINPUT);
  CHECK(strstr(err.msg, "2100-02-29T00:00:00Z") != NULL);
  CHECK(core_parse_utc("2026-11-30T01:37:25Zx", &t, &err) == CORE_EINPUT);
  CHECK(strstr(err.msg, "2026-11-30T01:37:25Zx") != NULL);
  {
    static const char *const refused[] = {
        /* no 29 February in 2100 or 2023, no 31 April */
        "2100-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
        /* every field out of range, one at a time */
        "2026-00-10T00:00:00Z", "2026-13-10T00:00:00Z", "2026-01-00T00:00:00Z",
        "2026-01-32T00:00:00Z", "2026-01-10T24:00:00Z", "2026-01-10T00:60:00Z",
        "2026-01-10T00:00:60Z",
        /* the whole string, and only that shape */
        "2026-11-30T01:37:25Zx", "2026-11-30T01:37:25Z ",
        "2026-11-30T01:37:25.5Z", "2026-11-30T01:37:25",
        "2026-11-30 01:37:25Z", "2026-11-30", " 2026-11-30T01:37:25Z",
        "2026-1a-30T01:37:25Z", ""};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
      CHECK(core_parse_utc(refused[i], &t, NULL) == CORE_EINPUT);
  }
  CHECK(core_parse_utc(NULL, &t, NULL) == CORE_EINPUT);
  CHECK(t == 7); /* untouched by every refusal */
  /* Round trips through the C library's own calendar from 1900 to 2400,
   * in steps of ten days and seven seconds (so the time of day drifts). */
  {
    int bad = 0;
    for (long long u = -2208988800LL; u < 13569465600LL; u += 864007LL) {
      time_t tt = (time_t)u;
      struct tm tm;
      char s[32];
      gmtime_r(&tt, &tm);
      strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%SZ", &tm);
      if (core_parse_utc(s, &t, NULL) != CORE_OK || t != u)
        bad++;
    }
    CHECK(bad == 0);
  }
  /* What core_utc_now writes reads back as the pinned time. */
  {
    char now[32];
    setenv("PREREG_NOW", "1792454400", 1);
    core_utc_now(now);
    unsetenv("PREREG_NOW");
    CHECK(core_parse_utc(now, &t, NULL) == CORE_OK && t == 1792454400LL);
  }
}

static void test_fmt_sig(void) {
  char t[64];
  static const struct {
    double x;
    int digits;
    const char *want;
  } cases[] = {
      /* the examples the report and the terminal table give */
      {0.2238, 3, "0.224"},
      {7.0912, 3, "7.09"},
      {302.4, 3, "302"},
      {31.66, 3, "31.7"},
      {9.996, 3, "10.0"},
      {1234.6, 3, "1235"},
      {-3.14159, 3, "-3.14"},
      /* fixed notation from 0.001 (after rounding) to 10^16 */
      {0.001, 3, "0.00100"},
      {0.0009996, 3, "0.00100"},
      {0.0001234, 3, "0.000123"},
      {1.234e-5, 3, "1.23e-05"},
      {1e-5, 3, "1e-05"},
      {9.99e15, 3, "9990000000000000"},
      {9.999e15, 3, "1e+16"},
      {2.5e16, 3, "2.5e+16"},
      /* zero of either sign, other digit counts (clamped to 1-17) */
      {0.0, 3, "0"},
      {-0.0, 3, "0"},
      {3.14159, 1, "3"},
      {3.14159, 5, "3.1416"},
      {0.5, 0, "0.5"},
      /* printf's rounding decides, next to a carry too */
      {0.99949999999999994, 3, "0.999"},
      {0.9995000000000001, 3, "1.00"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    core_fmt_sig(t, sizeof t, cases[i].x, cases[i].digits);
    CHECK_STR(t, cases[i].want);
  }
  core_fmt_sig(t, sizeof t, NAN, 3);
  CHECK_STR(t, "nan");
  core_fmt_sig(t, sizeof t, -INFINITY, 3);
  CHECK_STR(t, "-inf");
  core_fmt_sig(t, 4, 1234.6, 3); /* truncated like snprintf */
  CHECK_STR(t, "123");
}

static void test_md_escape(void) {
  core_buf b;
  core_buf_init(&b);
  core_buf_md_escape(&b, "<script>x</script> *a* [l](u) |c| 1. _u_ #h");
  CHECK_STR(b.data, "\\<script>x\\</script> \\*a\\* \\[l\\](u) "
                    "\\|c\\| 1. \\_u\\_ #h");
  core_buf_free(&b);
  core_buf_init(&b);
  core_buf_md_escape(&b, "- item\nnext & more &amp; &#38;");
  CHECK_STR(b.data, "\\- item next & more \\&amp; \\&#38;");
  core_buf_free(&b);
  /* What needs nothing stays as it is: a command, a parenthesis, a
   * comparison, a word with an underscore. */
  core_buf_init(&b);
  core_buf_md_escape(&b, "gzip -6 (Debian docs) 0.189 < 0.333 wall_s 1.5x!");
  CHECK_STR(b.data, "gzip -6 (Debian docs) 0.189 < 0.333 wall_s 1.5x!");
  core_buf_free(&b);
  core_buf_init(&b);
  core_buf_md_escape(&b, "12. first");
  CHECK_STR(b.data, "12\\. first");
  core_buf_free(&b);
  core_buf_init(&b);
  core_buf_md_escape(&b, "--cpus 2 #5 ");
  CHECK_STR(b.data, "--cpus 2 #5 ");
  core_buf_md_escape(&b, "## h");
  core_buf_md_escape(&b, "---");
  core_buf_md_escape(&b, "> q");
  CHECK_STR(b.data, "--cpus 2 #5 \\## h\\---\\> q");
  core_buf_free(&b);
  core_buf_init(&b);
  core_buf_md_escape(&b, "~~gone~~ `x` a\\b");
  CHECK_STR(b.data, "\\~\\~gone\\~\\~ \\`x\\` a\\\\b");
  core_buf_free(&b);
  /* A table cell of the bundle's README: one line, no cell break. */
  core_buf_init(&b);
  core_buf_md_escape(&b, "a|b\tc\r\nd: e-f's 5% x=1;");
  CHECK_STR(b.data, "a\\|b c  d: e-f's 5% x=1;");
  core_buf_md_escape(&b, NULL);
  CHECK_STR(b.data, "a\\|b c  d: e-f's 5% x=1;");
  core_buf_free(&b);
}

/* Text for a terminal: every control byte shown, the rest as it is. */
static void test_quote(void) {
  core_buf b = {0};
  static const char hostile[] = "run\x1b[2K\r\a\x1b]8;;http://x\x1b\\l\x7f"
                                "\xc2\x9b"
                                "b\xff\\ é\n\t";
  core_buf_quote(&b, hostile, sizeof hostile - 1, 0);
  CHECK_STR(b.data, "run\\033[2K\\r\\a\\033]8;;http://x\\033\\\\l\\177"
                    "\\302\\233b\\377\\\\ é\\n\\t");
  core_buf_free(&b);
  core_buf_quote(&b, hostile, sizeof hostile - 1, CORE_QUOTE_LINES);
  CHECK_NAMED("newline and tab kept", strstr(b.data, "é\n\t") != NULL);
  core_buf_free(&b);
  core_buf_quote(&b, "a\\b\x1b", 4, CORE_QUOTE_BACKSLASH);
  CHECK_STR(b.data, "a\\b\\033");
  core_buf_free(&b);
  core_buf_quote(&b, "nul\0x", 5, 0);
  CHECK_STR(b.data, "nul\\000x");
  core_buf_free(&b);
  CHECK(core_control_at("ok é\n\t", 7) == 7);
  CHECK(core_control_at("a\x1b", 2) == 1);
  CHECK(core_control_at("ab\xc2\x85", 4) == 2);
  CHECK(core_control_at("a\x7f", 2) == 1);
  CHECK(core_control_at("\xc2\xa0", 2) == 2); /* no-break space: text */
}

int main(void) {
  test_status();
  test_mem();
  test_sha();
  test_read_after_oom();
  test_replace_if_same();
  test_utc();
  test_fmt_sig();
  test_md_escape();
  test_quote();
  test_remove_tree();
  return HARNESS_END();
}
