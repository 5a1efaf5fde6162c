/* marked.h: how many processes a test left behind, found by a unique
 * marker in their command lines (sleep 300.MARK).
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_TEST_MARKED_H
#define PREREG_TEST_MARKED_H

#include <stdio.h>

/* Number of processes whose command line contains ".MARK"; -1 when pgrep
 * cannot tell. "[.]MARK" matches ".MARK" in a sleep's argument but not
 * the shell running pgrep, whose command line holds "[.]MARK". */
static int count_marked(const char *mark) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "pgrep -c -f '[.]%s'", mark);
  FILE *p = popen(cmd, "r");
  int n = -1;
  if (p) {
    if (fscanf(p, "%d", &n) != 1)
      n = -1;
    pclose(p);
  }
  return n;
}

#endif
