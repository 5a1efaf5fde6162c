/* test_cli.c: the option parser, a pure function of argv: commands,
 * options before and after the positional arguments, and the words it
 * refuses, naming them.
 * SPDX-License-Identifier: MIT
 */
#include "cli/cli.h"
#include "core/core.h"
#include "harness.h"

static void test_parse(void) {
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
  test_parse();
  return HARNESS_END();
}
