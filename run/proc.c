/* proc.c: what /proc says about a run's processes (the process table,
 * descendants, orphans) and the metrics file a command writes about
 * itself.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/run_internal.h"

/* Process table */

/* The command name in /proc/PID/stat may hold spaces and ')': the state
 * and ppid follow the last ')'. */
static int read_stat(int pid, int *ppid, char *state) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  size_t r = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[r] = 0;
  char *rp = strrchr(buf, ')');
  long pp;
  char st;
  if (!rp || sscanf(rp + 1, " %c %ld", &st, &pp) != 2)
    return -1;
  *ppid = (int)pp;
  *state = st;
  return 0;
}

int run_proc_ppid(int pid) {
  int ppid;
  char state;
  return read_stat(pid, &ppid, &state) == 0 ? ppid : -1;
}

/* Every process's pid and ppid. A process can vanish between readdir and
 * fopen: it is then simply not in the table (it is not a descendant any
 * more either). */
core_status run_proc_table(run_pent **out, size_t *n) {
  *out = NULL;
  *n = 0;
  DIR *d = opendir("/proc");
  if (!d)
    return CORE_EIO;
  size_t cap = 256, k = 0;
  run_pent *t = core_malloc(cap * sizeof *t);
  if (!t) {
    closedir(d);
    return CORE_ENOMEM;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!isdigit((unsigned char)e->d_name[0]))
      continue;
    int pid = (int)strtol(e->d_name, NULL, 10), ppid;
    char state;
    if (read_stat(pid, &ppid, &state) != 0)
      continue;
    run_pent *nt = core_grow(t, &cap, k, sizeof *nt, 256);
    if (!nt) {
      core_free(t);
      closedir(d);
      return CORE_ENOMEM;
    }
    t = nt;
    t[k].pid = pid;
    t[k].ppid = ppid;
    t[k].state = state;
    k++;
  }
  closedir(d);
  *out = t;
  *n = k;
  return CORE_OK;
}

/* Appends to out (k entries so far) the processes below `from`, breadth
 * first over the ppid links, never entering `skip` or what lies below it;
 * out doubles as the queue and has room for every process in t. */
size_t run_walk_below(const run_pent *t, size_t nt, int from, int skip,
                      int *out, size_t k) {
  size_t head = k;
  int cur = from;
  for (;;) {
    for (size_t i = 0; i < nt; i++)
      if (t[i].ppid == cur && t[i].pid != skip && t[i].pid != from)
        out[k++] = t[i].pid;
    if (head >= k)
      break;
    cur = out[head++];
  }
  return k;
}

/* The processes below `from`, except `skip` and its own subtree. */
static core_status below(int from, int skip, int **pids, size_t *n) {
  run_pent *t;
  size_t nt;
  *pids = NULL;
  *n = 0;
  core_status st = run_proc_table(&t, &nt);
  if (st != CORE_OK)
    return st;
  int *out = core_malloc((nt + 1) * sizeof *out);
  if (!out) {
    core_free(t);
    return CORE_ENOMEM;
  }
  *n = run_walk_below(t, nt, from, skip, out, 0);
  *pids = out;
  core_free(t);
  return CORE_OK;
}

core_status run_descendants(int root, int **pids, size_t *n) {
  return below(root, root, pids, n);
}

core_status run_adopted(int adopter, int root, int **pids, size_t *n) {
  if (adopter <= 0) {
    *pids = NULL;
    *n = 0;
    return CORE_OK;
  }
  return below(adopter, root, pids, n);
}

/* Metrics file */

/* One NAME=VALUE line (s, trimmed at its start; line lineno). OUT:
 * *name_len (the name is s[0..name_len)), *value. */
static core_status metric_line(const char *s, long lineno, size_t *name_len,
                               double *value, core_err *err) {
  const char *eq = strchr(s, '=');
  size_t nl = eq ? (size_t)(eq - s) : 0;
  while (nl > 0 && (s[nl - 1] == ' ' || s[nl - 1] == '\t'))
    nl--;
  int name_ok = eq && nl > 0 && nl < sizeof((run_metric *)0)->name &&
                (isalpha((unsigned char)s[0]) || s[0] == '_');
  for (size_t i = 0; name_ok && i < nl; i++)
    if (!isalnum((unsigned char)s[i]) && s[i] != '_')
      name_ok = 0;
  if (!name_ok)
    return core_fail(err, CORE_EINPUT,
                     "metrics file line %ld: expected NAME=VALUE, got "
                     "'%.80s'",
                     lineno, s);
  char name[sizeof((run_metric *)0)->name];
  snprintf(name, sizeof name, "%.*s", (int)nl, s);
  double val = 0;
  const char *why = data_value_parse(name, eq + 1, &val);
  if (why == data_value_negative)
    return core_fail(err, CORE_EINPUT, "metrics file line %ld: %s = %.60s: %s",
                     lineno, name, eq + 1, why);
  if (why)
    return core_fail(err, CORE_EINPUT,
                     "metrics file line %ld: '%s' is not a finite number: "
                     "'%.60s' (%s)",
                     lineno, name, eq + 1, why);
  *name_len = nl;
  *value = val;
  return CORE_OK;
}

/* Sets metric s[0..nl) to val in *v (k of cap used), a later line for
 * the same name replacing the earlier. */
static core_status metric_set(run_metric **v, size_t *k, size_t *cap,
                              const char *s, size_t nl, double val,
                              core_err *err) {
  size_t at = *k;
  for (size_t i = 0; i < *k; i++)
    if (strlen((*v)[i].name) == nl && !strncmp((*v)[i].name, s, nl))
      at = i;
  if (at == *k) {
    run_metric *nv = core_grow(*v, cap, *k, sizeof *nv, 8);
    if (!nv)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    *v = nv;
    (*k)++;
  }
  memcpy((*v)[at].name, s, nl);
  (*v)[at].name[nl] = 0;
  (*v)[at].value = val;
  return CORE_OK;
}

core_status run_parse_metrics(const char *path, run_metric **m, size_t *n,
                              core_err *err) {
  *m = NULL;
  *n = 0;
  char *text = NULL;
  size_t len = 0;
  struct stat sb;
  if (lstat(path, &sb) != 0)
    return CORE_OK;
  /* The command makes this file: a FIFO would block the run, a link to
   * /dev/zero never end. Either is refused without being opened, and its
   * name removed (not what a link points to), so that the batch folder
   * can be frozen. */
  if (!S_ISREG(sb.st_mode)) {
    unlink(path);
    return core_fail(err, CORE_EINPUT,
                     "not a regular file (%s); prereg did not read it and "
                     "removed its name",
                     S_ISFIFO(sb.st_mode)  ? "a FIFO"
                     : S_ISLNK(sb.st_mode) ? "a symbolic link"
                                           : "a device or socket");
  }
  core_status st =
      core_read_file_max(path, RUN_METRICS_MAX, 0, &text, &len, err);
  run_metric *v = NULL;
  size_t k = 0, cap = 0;
  long lineno = 0;
  for (char *p = text; st == CORE_OK && p < text + len;) {
    char *nl = memchr(p, '\n', (size_t)(text + len - p));
    char *end = nl ? nl : text + len;
    lineno++;
    *end = 0;
    if (end > p && end[-1] == '\r')
      end[-1] = 0;
    char *s = p;
    p = end + 1;
    while (*s == ' ' || *s == '\t')
      s++;
    if (*s == 0 || *s == '#')
      continue;
    size_t name_len = 0;
    double val = 0;
    if ((st = metric_line(s, lineno, &name_len, &val, err)) == CORE_OK)
      st = metric_set(&v, &k, &cap, s, name_len, val, err);
  }
  core_free(text);
  if (st != CORE_OK) {
    core_free(v);
    return st;
  }
  *m = v;
  *n = k;
  return CORE_OK;
}
