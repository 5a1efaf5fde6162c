/* test_exec.c: the execution engine with real processes: exit codes,
 * timeouts, stdin, daemons, SIGTERM-proof commands, bounded output,
 * metrics files, maxrss and PSS lists.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "marked.h"
#include "run/run.h"

static char tmp[256];
static char marker[64]; /* unique per test process, for pgrep -f */

static run_res run(const char *cmd, double timeout, double grace) {
  run_req q = {0};
  run_res r;
  core_err e = {0};
  q.cmd = cmd;
  q.timeout_s = timeout;
  q.grace_s = grace;
  CHECK(run_exec(&q, &r, &e) == CORE_OK);
  return r;
}

static void test_split(void) {
  CHECK(!run_needs_shell("/bin/true"));
  CHECK(!run_needs_shell("sleep 1 --x=3"));
  CHECK(run_needs_shell("echo $HOME"));
  CHECK(run_needs_shell("a | b"));
  CHECK(run_needs_shell("sh -c 'x'"));
  CHECK(run_needs_shell("FOO=1 env"));
  CHECK(run_needs_shell("exit 3")); /* a builtin: no such file */
  CHECK(run_needs_shell("cd /tmp"));
  CHECK(!run_needs_shell("exitcode 3"));
  char **v = run_argv("  ls   -l  /tmp ");
  CHECK(v && v[0] && v[1] && v[2] && !v[3]);
  if (v && v[2]) {
    CHECK_STR(v[0], "ls");
    CHECK_STR(v[1], "-l");
    CHECK_STR(v[2], "/tmp");
  }
  run_argv_free(v);
  v = run_argv("echo a; echo b");
  CHECK(v && !strcmp(v[0], "/bin/sh") && !strcmp(v[2], "echo a; echo b"));
  run_argv_free(v);
  CHECK(run_argv("   ") == NULL);
}

static void test_exit_codes(void) {
  run_res r = run("/bin/true", 10, 0);
  CHECK(r.spawned && r.exited && r.exit_code == 0 && !r.timed_out);
  CHECK(r.wall_s > 0 && r.wall_s < 30);
  r = run("false", 10, 0);
  CHECK(r.exited && r.exit_code == 1);
  r = run("exit 3", 10, 0);
  CHECK(r.exited && r.exit_code == 3);
  r = run("kill -9 $$", 10, 0);
  CHECK(!r.exited && r.signo == SIGKILL);
  r = run("no-such-command-prereg-test", 10, 0);
  CHECK(!r.spawned && r.exit_code == 127 &&
        strstr(r.why, "no-such-command-prereg-test"));
}

/* Upper bounds on elapsed time below only tell "the runner acted" from
 * "the runner waited for the command" (which sleeps 100 s): they are
 * generous because the machines running the tests are shared and loaded. */
static void test_timeout(void) {
  char cmd[512], ready[300];
  snprintf(cmd, sizeof cmd, "sleep 100.%s", marker);
  double t0 = core_monotonic();
  run_res r = run(cmd, 0.5, 1.0);
  double el = core_monotonic() - t0;
  CHECK(r.timed_out && r.signo == SIGTERM);
  CHECK(el >= 0.45 && el < 20);
  CHECK(count_marked(marker) == 0);

  /* Ignores SIGTERM (the ignored disposition survives exec into sleep):
   * only SIGKILL after the grace period ends it. The shell writes READY
   * after its trap is set; a shell that had not got that far when the
   * timeout fired dies of SIGTERM instead, which says nothing about the
   * runner, so the attempt is repeated with a longer timeout. */
  snprintf(ready, sizeof ready, "%s/ready", tmp);
  snprintf(cmd, sizeof cmd, "trap '' TERM; : > '%s'; sleep 100.%s; echo no",
           ready, marker);
  int trapped = 0;
  for (double timeout = 0.3; timeout < 20 && !trapped; timeout *= 3) {
    unlink(ready);
    t0 = core_monotonic();
    r = run(cmd, timeout, 0.5);
    el = core_monotonic() - t0;
    trapped = access(ready, F_OK) == 0;
  }
  CHECK(trapped);
  CHECK(r.timed_out && r.signo == SIGKILL);
  CHECK(el >= 0.75 && el < 40);
  CHECK(count_marked(marker) == 0);
}

static void test_stdin(void) {
  double t0 = core_monotonic();
  run_res r = run("cat", 60, 0);
  CHECK(r.exited && r.exit_code == 0 && !r.timed_out);
  CHECK(core_monotonic() - t0 < 30);
  r = run("read x", 60, 0); /* EOF: read fails at once */
  CHECK(r.exited && r.exit_code == 1 && !r.timed_out);
}

static void test_daemons(void) {
  char cmd[256];
  core_buf out;
  core_buf_init(&out);
  run_sink so = {.fd = -1, .buf = &out, .limit = 1 << 20};
  run_req q = {0};
  run_res r;
  core_err e = {0};
  snprintf(cmd, sizeof cmd,
           "sleep 300.%s & setsid sleep 301.%s & "
           "(sleep 302.%s &) ; echo started",
           marker, marker, marker);
  q.cmd = cmd;
  q.timeout_s = 60;
  q.out = &so;
  double t0 = core_monotonic();
  CHECK(run_exec(&q, &r, &e) == CORE_OK);
  CHECK(r.exited && r.exit_code == 0 && !r.timed_out);
  CHECK(core_monotonic() - t0 < 30);
  CHECK(out.data && !strcmp(out.data, "started\n"));
  CHECK(count_marked(marker) == 0);
  core_buf_free(&out);
}

static void test_bounded_output(void) {
  char path[300];
  snprintf(path, sizeof path, "%s/out.txt", tmp);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  CHECK(fd >= 0);
  run_sink so = {.fd = fd, .limit = 1 << 20};
  run_req q = {0};
  run_res r;
  core_err e = {0};
  q.cmd = "head -c 50000000 /dev/zero";
  q.timeout_s = 30;
  q.out = &so;
  CHECK(run_exec(&q, &r, &e) == CORE_OK);
  close(fd);
  CHECK(r.exited && r.exit_code == 0);
  CHECK(so.truncated && so.written == (size_t)1 << 20);
  struct stat sb;
  CHECK(stat(path, &sb) == 0 && sb.st_size == 1 << 20);
}

static void test_metrics(void) {
  char path[300], env[400];
  snprintf(path, sizeof path, "%s/metrics", tmp);
  snprintf(env, sizeof env, "PREREG_METRICS=%s", path);
  const char *envv[] = {env, NULL};
  run_req q = {0};
  run_res r;
  core_err e = {0};
  q.cmd = "echo inner_s=1.5 >> \"$PREREG_METRICS\"; "
          "printf '# c\\n\\nfiles = 12\\ninner_s=2.25\\n' "
          ">> \"$PREREG_METRICS\"";
  q.env = envv;
  q.timeout_s = 10;
  CHECK(run_exec(&q, &r, &e) == CORE_OK && r.exit_code == 0);
  run_metric *m = NULL;
  size_t n = 0;
  CHECK(run_parse_metrics(path, &m, &n, &e) == CORE_OK);
  CHECK(n == 2);
  if (n == 2) {
    CHECK_STR(m[0].name, "inner_s");
    CHECK_NEAR(m[0].value, 2.25, 0);
    CHECK_STR(m[1].name, "files");
    CHECK_NEAR(m[1].value, 12, 0);
  }
  core_free(m);
  FILE *f = fopen(path, "w");
  fputs("a=1\nb=2\nthis is not a metric\n", f);
  fclose(f);
  CHECK(run_parse_metrics(path, &m, &n, &e) == CORE_EINPUT);
  CHECK(strstr(e.msg, "line 3") != NULL);
  f = fopen(path, "w");
  fputs("a=1.5x\n", f);
  fclose(f);
  CHECK(run_parse_metrics(path, &m, &n, &e) == CORE_EINPUT);
  CHECK(strstr(e.msg, "line 1") && strstr(e.msg, "'a'"));
  f = fopen(path, "w");
  fputs("a=nan\n", f);
  fclose(f);
  CHECK(run_parse_metrics(path, &m, &n, &e) == CORE_EINPUT);
  snprintf(path, sizeof path, "%s/absent", tmp);
  CHECK(run_parse_metrics(path, &m, &n, &e) == CORE_OK && n == 0);
}

static void test_maxrss(void) {
  run_res r = run("/bin/true", 10, 0);
  long small = r.maxrss_kib;
  CHECK(small > 0 && small < 16 * 1024);
  /* Touch 256 MiB and keep it: the child's figure must not include it. */
  size_t big = (size_t)256 << 20;
  char *m = malloc(big);
  CHECK(m != NULL);
  if (m) {
    memset(m, 1, big);
    r = run("/bin/true", 10, 0);
    CHECK(r.maxrss_kib > 0 && r.maxrss_kib < 16 * 1024);
    free(m);
  }
  /* ... nor our peak after it is freed. */
  r = run("/bin/true", 10, 0);
  CHECK(r.maxrss_kib > 0 && r.maxrss_kib < 16 * 1024);
  /* A child that does use memory is seen. */
  r = run("python3 -c 'x = bytearray(60 << 20)'", 30, 0);
  CHECK(r.exit_code == 0 && r.maxrss_kib > 40 * 1024);
}

static void test_pss(void) {
  char list[300], cmd[256], other[128];
  snprintf(list, sizeof list, "%s/procs.tsv", tmp);
  /* An unrelated process found only by its command line. */
  snprintf(other, sizeof other, "77.%s", marker);
  pid_t o = fork();
  if (o == 0) {
    execlp("sleep", "sleep", other, (char *)NULL);
    _exit(127);
  }
  /* Found by its command line: wait until it shows it (the only process
   * with the marker now; the checks fail if it never does). */
  for (int i = 0; o > 0 && i < 3000 && count_marked(marker) != 1; i++)
    usleep(10000);
  /* sleep 62 is orphaned at once (its subshell exits): adopted by the
   * helper, a subreaper, it is still the run's. The sample is due 3 s
   * after the start, by when a shell has started three commands on any
   * machine, however loaded. */
  snprintf(cmd, sizeof cmd,
           "sleep 60.%s & (sleep 62.%s &) ; sleep 61.%s; true", marker, marker,
           marker);
  char *cl[] = {other};
  run_pattern pat = {cl, 1};
  run_sel tree_and_other = {.descendants = 1, .cmdline = &pat, .n_cmdline = 1};
  run_pss sel = {.after_s = 3,
                 .sel = &tree_and_other,
                 .list_path = list,
                 .stop_after = 1};
  run_req q = {0};
  run_res r;
  core_err e = {0};
  q.cmd = cmd;
  q.timeout_s = 20;
  q.pss = &sel;
  double t0 = core_monotonic();
  CHECK(run_exec(&q, &r, &e) == CORE_OK);
  CHECK(core_monotonic() - t0 < 15);
  CHECK(r.stopped && r.pss_sampled && !r.timed_out);
  CHECK(r.pss_counted == 5 && r.pss_unreadable == 0);
  CHECK(r.pss_kib > 0);
  char *text = NULL;
  size_t len = 0;
  CHECK(core_read_file(list, &text, &len, &e) == CORE_OK);
  if (text) {
    CHECK(strncmp(text, "pid\tppid\tpss_kib\tstatus\treasons\tcmdline\n",
                  40) == 0);
    CHECK(strstr(text, "\tcounted\trun\t") != NULL);
    CHECK(strstr(text, "\tcounted\tdescendant\tsleep 60.") != NULL);
    CHECK(strstr(text, "\tcounted\tdescendant\tsleep 61.") != NULL);
    CHECK(strstr(text, "\tcounted\tcmdline:77.") != NULL);
    CHECK(strstr(text, "\tcounted\tadopted\tsleep 62.") != NULL);
  }
  core_free(text);
  kill(o, SIGKILL);
  waitpid(o, NULL, 0);
  CHECK(count_marked(marker) == 0);

  /* Orphans that end before the sample (at 3 s, long after their 0.05 s
   * on any machine): reaped by the helper as they end, so no zombie of
   * the run is listed, let alone unreadable. */
  run_sel tree = {.descendants = 1};
  run_pss brief = {
      .after_s = 3, .sel = &tree, .list_path = list, .stop_after = 1};
  q.cmd = "(sleep 0.05 &); (sleep 0.05 &); sleep 30";
  q.pss = &brief;
  CHECK(run_exec(&q, &r, &e) == CORE_OK);
  CHECK(r.pss_sampled && r.pss_unreadable == 0 && r.pss_counted == 2);

  /* A command that ends before the sample is due: no sample, a reason. */
  run_pss late = {.after_s = 5, .sel = &tree, .list_path = list};
  q.cmd = "/bin/true";
  q.pss = &late;
  CHECK(run_exec(&q, &r, &e) == CORE_OK);
  CHECK(!r.pss_sampled && strstr(r.why, "before the PSS sample"));
}

static void test_cancel_and_cwd(void) {
  int p[2];
  CHECK(pipe(p) == 0);
  CHECK(write(p[1], "x", 1) == 1);
  run_cancel_fd = p[0];
  double t0 = core_monotonic();
  run_res r = run("sleep 100", 50, 0);
  CHECK(r.interrupted && core_monotonic() - t0 < 20);
  run_cancel_fd = -1;
  close(p[0]);
  close(p[1]);

  core_buf out;
  core_buf_init(&out);
  run_sink so = {.fd = -1, .buf = &out, .limit = 100};
  run_req q = {0};
  core_err e = {0};
  q.cmd = "pwd";
  q.cwd = tmp;
  q.out = &so;
  CHECK(run_exec(&q, &r, &e) == CORE_OK && r.exit_code == 0);
  char want[300];
  snprintf(want, sizeof want, "%s\n", tmp);
  CHECK_STR(out.data, want);
  core_buf_free(&out);
}

int main(void) {
  snprintf(tmp, sizeof tmp, "/tmp/prereg-test-exec-XXXXXX");
  if (!mkdtemp(tmp))
    return 1;
  snprintf(marker, sizeof marker, "%d4242", (int)getpid());
  test_split();
  test_exit_codes();
  test_timeout();
  test_stdin();
  test_daemons();
  test_bounded_output();
  test_metrics();
  test_maxrss();
  test_pss();
  test_cancel_and_cwd();
  char rm[300];
  snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
  if (system(rm) != 0)
    fprintf(stderr, "could not remove %s\n", tmp);
  return HARNESS_END();
}
