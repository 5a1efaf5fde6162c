/* boot_ci.c: test-only driver of prereg's bootstrap, so that scripts can
 * compare it with R boot and SciPy on the same data (not installed).
 * SPDX-License-Identifier: MIT
 *
 * Usage: boot_ci [--resamples B] [--confidence C] [--seed S]
 *                [--threads T] [--dump FILE] [--time FILE]
 *                [--rule-seed R W M A]
 * stdin: pairs of lines, reference values then candidate values
 * (whitespace-separated). For each pair prints
 * "ratio ci_low ci_high" with %.17g; --dump writes the sorted replicates
 * of the last pair, one per line; --time writes the seconds spent inside
 * analysis_bootstrap_ratio (in-process, as SciPy is timed). --rule-seed prints
 * the comparison seed of rule seed R, workload W, metric M, arm A and the
 * seeds of its first three blocks, and exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"

static int parse_line(char *line, double **v, size_t *n) {
  size_t cap = 16;
  char *p = line, *end;
  *n = 0;
  *v = core_malloc(cap * sizeof **v);
  if (!*v)
    return -1;
  for (;;) {
    double x;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
      p++;
    if (!*p)
      break;
    errno = 0;
    x = strtod(p, &end);
    if (end == p || errno)
      return -1;
    if (*n == cap) {
      double *g = core_realloc(*v, 2 * cap * sizeof **v);
      if (!g)
        return -1;
      *v = g;
      cap *= 2;
    }
    (*v)[(*n)++] = x;
    p = end;
  }
  return 0;
}

/* Reads one whole line of any length. NULL at EOF. */
static char *read_line(FILE *f) {
  core_buf b;
  int ch;
  core_buf_init(&b);
  while ((ch = fgetc(f)) != EOF && ch != '\n') {
    char c = (char)ch;
    core_buf_append(&b, &c, 1);
  }
  if (ch == EOF && b.len == 0) {
    core_buf_free(&b);
    return NULL;
  }
  core_buf_append(&b, "", 1);
  return core_buf_steal(&b);
}

int main(int argc, char **argv) {
  long resamples = 10000;
  double conf = 0.95;
  unsigned long seed = 17;
  int threads = 1;
  const char *dump = NULL;
  const char *time_file = NULL;
  double *reps = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    char *end = NULL;
    if (strcmp(a, "--rule-seed") == 0 && i + 4 < argc) {
      unsigned long r = strtoul(argv[i + 1], NULL, 10);
      unsigned long c =
          analysis_comparison_seed(r, argv[i + 2], argv[i + 3], argv[i + 4]);
      printf("%lu %lu %lu %lu\n", c, analysis_block_seed(c, 0),
             analysis_block_seed(c, 1), analysis_block_seed(c, 2));
      return 0;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "boot_ci: %s needs a value\n", a);
      return 2;
    }
    if (strcmp(a, "--resamples") == 0)
      resamples = strtol(argv[++i], &end, 10);
    else if (strcmp(a, "--confidence") == 0)
      conf = strtod(argv[++i], &end);
    else if (strcmp(a, "--seed") == 0)
      seed = strtoul(argv[++i], &end, 10);
    else if (strcmp(a, "--threads") == 0)
      threads = (int)strtol(argv[++i], &end, 10);
    else if (strcmp(a, "--dump") == 0)
      dump = argv[++i];
    else if (strcmp(a, "--time") == 0)
      time_file = argv[++i];
    else {
      fprintf(stderr, "boot_ci: unknown option %s\n", a);
      return 2;
    }
    if (end && *end) {
      fprintf(stderr, "boot_ci: bad value for %s\n", a);
      return 2;
    }
  }
  analysis_init();
  double boot_seconds = 0;
  for (;;) {
    char *l1 = read_line(stdin), *l2;
    double *ref = NULL, *cand = NULL, lo, hi;
    size_t nr, nc;
    core_err err = {0};
    if (!l1)
      break;
    if (!(l2 = read_line(stdin)) || parse_line(l1, &ref, &nr) != 0 ||
        parse_line(l2, &cand, &nc) != 0) {
      fprintf(stderr, "boot_ci: bad input pair\n");
      return 2;
    }
    core_free(reps);
    reps = dump ? core_malloc((size_t)resamples * sizeof *reps) : NULL;
    double t0 = core_monotonic();
    core_status bst =
        analysis_bootstrap_ratio(ref, nr, cand, nc, resamples, conf, seed,
                                 threads, &lo, &hi, reps, &err);
    boot_seconds += core_monotonic() - t0;
    if (bst != CORE_OK) {
      fprintf(stderr, "boot_ci: %s\n", err.msg);
      return 1;
    }
    printf("%.17g %.17g %.17g\n",
           analysis_median(cand, nc) / analysis_median(ref, nr), lo, hi);
    core_free(l1);
    core_free(l2);
    core_free(ref);
    core_free(cand);
  }
  if (dump && reps) {
    FILE *f = fopen(dump, "w");
    if (!f) {
      fprintf(stderr, "boot_ci: cannot write %s\n", dump);
      return 1;
    }
    for (long i = 0; i < resamples; i++)
      fprintf(f, "%.17g\n", reps[i]);
    fclose(f);
  }
  core_free(reps);
  if (time_file) {
    FILE *t = fopen(time_file, "w");
    if (!t || fprintf(t, "%.6f\n", boot_seconds) < 0 || fclose(t) != 0) {
      fprintf(stderr, "boot_ci: cannot write %s\n", time_file);
      return 1;
    }
  }
  return 0;
}
