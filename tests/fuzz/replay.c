/* replay.c: runs every file of the given folders through the fuzz target
 * the folder is named after (tests/fuzz/regressions/sheet/ -> "sheet"),
 * so that the gcc and ASan suites keep checking each crash fuzzing found
 * and the seed corpus. A crash or sanitizer report fails the test; the
 * last "replay:" line names the input.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "tests/fuzz/targets.h"

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays one folder; returns the number of inputs, -1 on a bad folder. */
static long replay_dir(const char *dir) {
  const char *slash = strrchr(dir, '/');
  const char *name = slash ? slash + 1 : dir;
  const fuzz_target *t = fuzz_target_find(name);
  DIR *d;
  struct dirent *de;
  char *files[4096];
  size_t n = 0;
  if (!t) {
    fprintf(stderr, "replay: %s: no fuzz target '%s'\n", dir, name);
    return -1;
  }
  if (!(d = opendir(dir))) {
    fprintf(stderr, "replay: %s: cannot open folder\n", dir);
    return -1;
  }
  while ((de = readdir(d)) != NULL && n < 4096)
    if (de->d_name[0] != '.')
      files[n++] = core_asprintf("%s/%s", dir, de->d_name);
  closedir(d);
  qsort(files, n, sizeof *files, cmp);
  for (size_t i = 0; i < n; i++) {
    char *data = NULL;
    size_t len = 0;
    core_err err = {0};
    if (!files[i] || core_read_file(files[i], &data, &len, &err) != CORE_OK) {
      fprintf(stderr, "replay: %s\n", files[i] ? err.msg : "out of memory");
      exit(1);
    }
    /* Flushed before the call: a crash leaves the input's name last. */
    printf("replay: %s %s (%zu bytes)\n", name, files[i], len);
    fflush(stdout);
    t->run((const uint8_t *)data, len);
    core_free(data);
    core_free(files[i]);
  }
  return (long)n;
}

int main(int argc, char **argv) {
  long total = 0, failed = 0;
  if (argc < 2) {
    fprintf(stderr,
            "usage: fuzz_replay FOLDER...  (folders named after "
            "a target: sheet, batch, import_csv, import_json, import_go, "
            "manifest, sheet_cost, bundle)\n");
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    long n = replay_dir(argv[i]);
    if (n < 0)
      failed++;
    else
      total += n;
  }
  fuzz_cleanup();
  /* Reaching here means no input crashed. */
  printf("%ld passed, %ld failed\n", total, failed);
  return failed ? 1 : 0;
}
