/* proc.c: what /proc says about a run's processes (descendants, PSS) and
 * the metrics file a command writes about itself.
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

#include "run/run.h"

/* {==== Process table ==== */

typedef struct pent {
  int pid, ppid;
} pent;

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
static core_status proc_table(pent **out, size_t *n) {
  *out = NULL;
  *n = 0;
  DIR *d = opendir("/proc");
  if (!d)
    return CORE_EIO;
  size_t cap = 256, k = 0;
  pent *t = core_malloc(cap * sizeof *t);
  if (!t) {
    closedir(d);
    return CORE_ENOMEM;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!isdigit((unsigned char)e->d_name[0]))
      continue;
    int ppid = run_proc_ppid((int)strtol(e->d_name, NULL, 10));
    if (ppid < 0)
      continue;
    pent *nt = core_grow(t, &cap, k, sizeof *nt, 256);
    if (!nt) {
      core_free(t);
      closedir(d);
      return CORE_ENOMEM;
    }
    t = nt;
    t[k].pid = (int)strtol(e->d_name, NULL, 10);
    t[k].ppid = ppid;
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
static size_t walk_below(const pent *t, size_t nt, int from, int skip,
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
  pent *t;
  size_t nt;
  *pids = NULL;
  *n = 0;
  core_status st = proc_table(&t, &nt);
  if (st != CORE_OK)
    return st;
  int *out = core_malloc((nt + 1) * sizeof *out);
  if (!out) {
    core_free(t);
    return CORE_ENOMEM;
  }
  *n = walk_below(t, nt, from, skip, out, 0);
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

/* }==== */

/* {==== PSS sample ==== */

typedef struct chosen {
  int pid;
  char reasons[256];
} chosen;

typedef struct chosen_set {
  chosen *v;
  size_t n, cap;
  int oom;
} chosen_set;

static void choose(chosen_set *s, int pid, const char *reason) {
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].pid == pid) {
      size_t l = strlen(s->v[i].reasons);
      snprintf(s->v[i].reasons + l, sizeof s->v[i].reasons - l, ",%s", reason);
      return;
    }
  chosen *nv = core_grow(s->v, &s->cap, s->n, sizeof *nv, 32);
  if (!nv) {
    s->oom = 1;
    return;
  }
  s->v = nv;
  s->v[s->n].pid = pid;
  snprintf(s->v[s->n].reasons, sizeof s->v[s->n].reasons, "%s", reason);
  s->n++;
}

/* The command line with NULs as spaces and tabs/newlines flattened, so
 * that it fits one TSV field. "" when unreadable (kernel threads). */
static void read_cmdline(int pid, char *out, size_t cap) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
  out[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  size_t r = fread(out, 1, cap - 1, f);
  fclose(f);
  while (r > 0 && out[r - 1] == 0)
    r--;
  out[r] = 0;
  for (size_t i = 0; i < r; i++)
    if (out[i] == 0 || out[i] == '\t' || out[i] == '\n' || out[i] == '\r')
      out[i] = ' ';
}

/* Pss of one process in KiB; -1 with *why filled when it could not be
 * read ("vanished" when the process is gone). */
static long read_pss(int pid, char *why, size_t cap) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/smaps_rollup", pid);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, cap, "%s",
             errno == ENOENT || errno == ESRCH ? "vanished" : strerror(errno));
    return -1;
  }
  long pss = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "Pss:", 4) == 0) {
      pss = strtol(line + 4, NULL, 10);
      break;
    }
  fclose(f);
  if (pss < 0) /* a zombie or kernel thread has an empty rollup */
    snprintf(why, cap, "no Pss line (exited or kernel thread)");
  return pss;
}

static const char *cgroup_root(void) {
  /* Pure v2 mounts /sys/fs/cgroup itself; hybrid systems mount it at
   * /sys/fs/cgroup/unified. */
  return core_exists("/sys/fs/cgroup/cgroup.controllers")
             ? "/sys/fs/cgroup"
             : "/sys/fs/cgroup/unified";
}

/* The run's process, its descendants, then the processes the adopter
 * took in: one whose parent exited (a double-forked daemon, a container
 * shim) is no longer below root but below the subreaper that adopted it,
 * and still this run's. The two sets are disjoint, so nt places do. */
static core_status choose_descendants(const pent *t, size_t nt, int root,
                                      int adopter, chosen_set *cs,
                                      core_err *err) {
  int *d = core_malloc((nt + 1) * sizeof *d);
  if (!d)
    return core_fail(err, CORE_ENOMEM, "out of memory sampling PSS");
  size_t nd = walk_below(t, nt, root, root, d, 0);
  size_t na = adopter > 0 ? walk_below(t, nt, adopter, root, d, nd) : nd;
  choose(cs, root, "run");
  for (size_t i = 0; i < na; i++)
    choose(cs, d[i], i < nd ? "descendant" : "adopted");
  core_free(d);
  return CORE_OK;
}

/* The processes of a cgroup (absolute, or relative to the v2 mount). */
static core_status choose_cgroup(const char *cgroup, chosen_set *cs,
                                 core_err *err) {
  char path[4096];
  if (cgroup[0] == '/' && core_is_dir(cgroup))
    snprintf(path, sizeof path, "%s/cgroup.procs", cgroup);
  else
    snprintf(path, sizeof path, "%s/%s/cgroup.procs", cgroup_root(),
             cgroup + (cgroup[0] == '/'));
  FILE *f = fopen(path, "r");
  if (!f)
    return core_fail(err, CORE_ERUN, "cannot read %s: %s", path,
                     strerror(errno));
  long v;
  while (fscanf(f, "%ld", &v) == 1)
    choose(cs, (int)v, "cgroup");
  fclose(f);
  return CORE_OK;
}

/* The processes whose command line holds one of the strings. */
static void choose_cmdline(const run_pss *sel, const pent *t, size_t nt,
                           chosen_set *cs, char *cmdl, size_t cap) {
  int me = (int)getpid();
  for (size_t i = 0; i < nt; i++) {
    if (t[i].pid == me)
      continue; /* our own argv may quote the string */
    read_cmdline(t[i].pid, cmdl, cap);
    for (size_t j = 0; j < sel->n_cmdline; j++)
      if (sel->cmdline[j][0] && strstr(cmdl, sel->cmdline[j])) {
        char r[200];
        snprintf(r, sizeof r, "cmdline:%s", sel->cmdline[j]);
        choose(cs, t[i].pid, r);
      }
  }
}

/* Reads the Pss of every chosen process, summed into *pss_kib, each
 * listed in list (when not NULL). */
static void count_chosen(const chosen_set *cs, FILE *list, char *cmdl,
                         size_t cap, long *pss_kib, size_t *counted,
                         size_t *unreadable) {
  for (size_t i = 0; i < cs->n; i++) {
    char why[128] = "", state = 0;
    int pid = cs->v[i].pid, ppid = -1;
    long pss = -1;
    read_stat(pid, &ppid, &state);
    read_cmdline(pid, cmdl, cap);
    if (state == 'Z') {
      /* Ended, waiting for its parent to collect it: it holds no memory
       * and nothing was lost. Listed, neither counted nor unreadable. */
      snprintf(why, sizeof why, "zombie: ended, not yet reaped");
    } else if ((pss = read_pss(pid, why, sizeof why)) >= 0) {
      *pss_kib += pss;
      (*counted)++;
    } else {
      (*unreadable)++;
    }
    if (list) {
      fprintf(list, "%d\t%d\t", pid, ppid);
      if (pss >= 0)
        fprintf(list, "%ld\tcounted", pss);
      else
        fprintf(list, "\t%s", why);
      fprintf(list, "\t%s\t%s\n", cs->v[i].reasons, cmdl);
    }
  }
}

/* The chosen processes counted and listed at sel->list_path. */
static core_status count_and_list(const run_pss *sel, const chosen_set *cs,
                                  char *cmdl, size_t cap, long *pss_kib,
                                  size_t *counted, size_t *unreadable,
                                  core_err *err) {
  FILE *list = NULL;
  if (sel->list_path) {
    /* In the batch folder, where the measured command could have left a
     * link or a FIFO by that name: never written through, never waited
     * on. */
    int fd = open(sel->list_path,
                  O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK |
                      O_CLOEXEC,
                  0644);
    struct stat sb;
    if ((fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))) ||
        (fd < 0 && lstat(sel->list_path, &sb) == 0 && !S_ISREG(sb.st_mode))) {
      if (fd >= 0)
        close(fd);
      return core_not_regular(err, sel->list_path, (unsigned)sb.st_mode);
    }
    if (fd < 0 || !(list = fdopen(fd, "w"))) {
      core_status st =
          core_fail(err, CORE_EIO, "%s: %s", sel->list_path, strerror(errno));
      if (fd >= 0)
        close(fd);
      return st;
    }
    fputs("pid\tppid\tpss_kib\tstatus\treasons\tcmdline\n", list);
  }
  count_chosen(cs, list, cmdl, cap, pss_kib, counted, unreadable);
  core_status st = CORE_OK;
  if (list && (fflush(list) != 0 || ferror(list)))
    st = core_fail(err, CORE_EIO, "%s: write failed", sel->list_path);
  if (list)
    fclose(list);
  return st;
}

core_status run_sample_pss(const run_pss *sel, int root, int adopter,
                           long *pss_kib, size_t *counted, size_t *unreadable,
                           core_err *err) {
  enum { CMDLINE_CAP = 8192 };
  chosen_set cs = {0};
  core_status st = CORE_OK;
  pent *t = NULL;
  size_t nt = 0;
  char *cmdl = core_malloc(CMDLINE_CAP);
  *pss_kib = 0;
  *counted = *unreadable = 0;
  if (!cmdl)
    return core_fail(err, CORE_ENOMEM, "out of memory sampling PSS");
  /* One snapshot of /proc serves every selection. */
  if ((sel->descendants || sel->n_cmdline > 0) &&
      (st = proc_table(&t, &nt)) != CORE_OK)
    st = core_fail(err, st, "cannot list /proc");
  if (st == CORE_OK && sel->descendants)
    st = choose_descendants(t, nt, root, adopter, &cs, err);
  if (st == CORE_OK && sel->cgroup && *sel->cgroup)
    st = choose_cgroup(sel->cgroup, &cs, err);
  if (st == CORE_OK && sel->n_cmdline > 0)
    choose_cmdline(sel, t, nt, &cs, cmdl, CMDLINE_CAP);
  if (st == CORE_OK && cs.oom)
    st = core_fail(err, CORE_ENOMEM, "out of memory sampling PSS");
  if (st == CORE_OK)
    st = count_and_list(sel, &cs, cmdl, CMDLINE_CAP, pss_kib, counted,
                        unreadable, err);
  core_free(t);
  core_free(cs.v);
  core_free(cmdl);
  return st;
}

/* }==== */

/* {==== Metrics file ==== */

/* More than any command reports about itself in name=value lines. */
#define RUN_METRICS_MAX ((size_t)1 << 20)

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
  double val = 0;
  const char *why = core_parse_decimal(eq + 1, &val);
  if (why)
    return core_fail(err, CORE_EINPUT,
                     "metrics file line %ld: '%.*s' is not a finite "
                     "number: '%.60s' (%s)",
                     lineno, (int)nl, s, eq + 1, why);
  char name[sizeof((run_metric *)0)->name];
  snprintf(name, sizeof name, "%.*s", (int)nl, s);
  if (val < 0 && proto_metric_nonnegative(name))
    return core_fail(err, CORE_EINPUT,
                     "metrics file line %ld: %s = %.60s: a time or an "
                     "amount of memory cannot be negative",
                     lineno, name, eq + 1);
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

/* }==== */
