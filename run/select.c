/* select.c: the processes that are a run's (sheet key `processes`): its
 * tree, a cgroup and everything below it, the command lines that name it
 * (a container ID known only once the run wrote it, too); sampled for
 * PSS, ended with the run, checked for leaks once it is over, and the
 * cgroup folders the run made removed.
 * SPDX-License-Identifier: MIT
 *
 * Why more than the run's own tree: a daemon-run container is not a
 * descendant of the command that asked for it (`docker run` only talks to
 * dockerd); its processes are in the cgroup given as --cgroup-parent, and
 * its runtime helpers (the shim, gVisor's sandbox and gofer) name its ID
 * on their command lines. tests/docker/NOTES.md has the measured facts.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "run/run_internal.h"

enum { CMDLINE_CAP = 8192, CG_PATH = 1024, CG_MAX = 32, RUN_CID_MIN = 12 };

static void pause_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* Cgroup hierarchies */

static const char *cg_root(void) {
  const char *r = getenv("PREREG_CGROUP_ROOT");
  return r && *r ? r : "/sys/fs/cgroup";
}

typedef struct cg_set {
  char dir[CG_MAX][CG_PATH];
  size_t n;
} cg_set;

static void cg_add(cg_set *h, const char *root, const char *name) {
  if (h->n < CG_MAX)
    snprintf(h->dir[h->n++], CG_PATH, "%s%s%s", root, name ? "/" : "",
             name ? name : "");
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The hierarchies in the order a selection looks in them: a v2-only
 * host's one tree; with v1, the memory controller's first (memory is what
 * a sample is about, and runsc leaves its processes at the root of v2),
 * the other v1 hierarchies in name order, v2 ("unified") last. Links
 * (cpu -> cpu,cpuacct) are the same hierarchy again and are skipped. */
static void cg_hierarchies(cg_set *h) {
  const char *root = cg_root();
  char probe[CG_PATH + 32];
  h->n = 0;
  snprintf(probe, sizeof probe, "%s/cgroup.controllers", root);
  if (core_exists(probe)) {
    cg_add(h, root, NULL);
    return;
  }
  DIR *d = opendir(root);
  char *names[CG_MAX];
  size_t n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL && n < CG_MAX) {
    struct stat sb;
    snprintf(probe, sizeof probe, "%s/%s", root, e->d_name);
    if (e->d_name[0] == '.' || lstat(probe, &sb) != 0 || !S_ISDIR(sb.st_mode))
      continue;
    if ((names[n] = core_strdup(e->d_name)) != NULL)
      n++;
  }
  if (d)
    closedir(d);
  qsort(names, n, sizeof *names, by_name);
  for (int pass = 0; pass < 3; pass++)
    for (size_t i = 0; i < n; i++) {
      int mem = !strcmp(names[i], "memory"), v2 = !strcmp(names[i], "unified");
      if ((pass == 0 && mem) || (pass == 1 && !mem && !v2) ||
          (pass == 2 && v2))
        cg_add(h, root, names[i]);
    }
  for (size_t i = 0; i < n; i++)
    core_free(names[i]);
}

/* 1 when path names a folder under the cgroup root itself (rather than a
 * cgroup path to look for in each hierarchy). */
static int under_root(const char *path) {
  const char *root = cg_root();
  size_t l = strlen(root);
  return strncmp(path, root, l) == 0 && path[l] == '/';
}

/* The folder of the cgroup path in the first hierarchy that has it.
 * Returns 1, or 0 (and the hierarchies looked in, in tried) when none
 * does. */
static int cg_find(const char *path, char *dir, size_t cap, char *tried,
                   size_t tcap) {
  if (under_root(path)) {
    snprintf(dir, cap, "%s", path);
    snprintf(tried, tcap, "%s", path);
    return core_is_dir(path);
  }
  cg_set *h = core_malloc(sizeof *h);
  int found = 0;
  size_t tl = 0;
  tried[0] = 0;
  if (!h)
    return 0;
  cg_hierarchies(h);
  for (size_t i = 0; i < h->n && !found; i++) {
    snprintf(dir, cap, "%s/%s", h->dir[i], path + (path[0] == '/'));
    found = core_is_dir(dir);
    if (tl < tcap)
      tl += (size_t)snprintf(tried + tl, tcap - tl, "%s%s", i ? ", " : "",
                             h->dir[i]);
  }
  if (h->n == 0)
    snprintf(tried, tcap, "%s (no hierarchy there)", cg_root());
  core_free(h);
  return found;
}

/* What a selection holds */

void run_chosen_free(run_chosen_set *cs) {
  core_free(cs->v);
  memset(cs, 0, sizeof *cs);
}

/* A selection being made: the set, and who may never be in it. */
typedef struct picker {
  run_chosen_set *cs;
  const run_pent *t;
  size_t nt;
  int *never; /* prereg, its ancestors, the spawn helper */
  size_t n_never;
  int oom;
} picker;

static run_chosen *find_chosen(const run_chosen_set *cs, int pid) {
  for (size_t i = 0; i < cs->n; i++)
    if (cs->v[i].pid == pid)
      return &cs->v[i];
  return NULL;
}

static void choose(picker *pk, int pid, const char *reason, int kind) {
  for (size_t i = 0; i < pk->n_never; i++)
    if (pk->never[i] == pid)
      return;
  run_chosen *c = find_chosen(pk->cs, pid);
  if (c) {
    size_t l = strlen(c->reasons);
    if (!strstr(c->reasons, reason))
      snprintf(c->reasons + l, sizeof c->reasons - l, ",%s", reason);
    c->kind |= kind;
    return;
  }
  run_chosen *nv =
      core_grow(pk->cs->v, &pk->cs->cap, pk->cs->n, sizeof *nv, 32);
  if (!nv) {
    pk->oom = 1;
    return;
  }
  pk->cs->v = nv;
  c = &nv[pk->cs->n++];
  memset(c, 0, sizeof *c);
  c->pid = pid;
  c->kind = kind;
  snprintf(c->reasons, sizeof c->reasons, "%s", reason);
}

/* prereg itself and every ancestor (a shell whose command line happens to
 * hold a pattern must not be stopped with the run), and the helper. */
static int never_list(picker *pk) {
  size_t cap = 16;
  if (!(pk->never = core_malloc(cap * sizeof *pk->never)))
    return 0;
  int p = (int)getpid();
  while (p > 0 && pk->n_never + 2 < cap) {
    pk->never[pk->n_never++] = p;
    int next = 0;
    for (size_t i = 0; i < pk->nt; i++)
      if (pk->t[i].pid == p)
        next = pk->t[i].ppid;
    p = next;
  }
  if (run_helper_pid() > 0)
    pk->never[pk->n_never++] = run_helper_pid();
  return 1;
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

/* The run's process, its descendants, then the processes the adopter
 * took in: one whose parent exited (a double-forked daemon) is no longer
 * below root but below the subreaper that adopted it, and still this
 * run's. */
static void pick_tree(picker *pk, int root, int adopter) {
  int *d = core_malloc((pk->nt + 1) * sizeof *d);
  if (!d) {
    pk->oom = 1;
    return;
  }
  size_t nd = run_walk_below(pk->t, pk->nt, root, root, d, 0);
  size_t na =
      adopter > 0 ? run_walk_below(pk->t, pk->nt, adopter, root, d, nd) : nd;
  choose(pk, root, "run", RUN_SEL_TREE);
  for (size_t i = 0; i < na; i++)
    choose(pk, d[i], i < nd ? "descendant" : "adopted", RUN_SEL_TREE);
  core_free(d);
}

/* The members of the cgroup folder dir and of every folder below it.
 * Only dir's own list must be readable: a folder below can vanish while
 * it is walked (a container's, removed as it ends). */
static core_status pick_cgroup_dir(picker *pk, const char *dir, int depth,
                                   core_err *err) {
  char path[CG_PATH + 32], reason[CG_PATH + 16];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  FILE *f = fopen(path, "r");
  if (!f)
    return depth ? CORE_OK
                 : core_fail(err, CORE_ERUN, "cannot read %s: %s", path,
                             strerror(errno));
  snprintf(reason, sizeof reason, "cgroup:%s", dir);
  long v;
  while (fscanf(f, "%ld", &v) == 1)
    choose(pk, (int)v, reason, RUN_SEL_CGROUP);
  fclose(f);
  DIR *d = depth < 64 ? opendir(dir) : NULL;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (e->d_name[0] != '.' && lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
      pick_cgroup_dir(pk, path, depth + 1, err);
  }
  if (d)
    closedir(d);
  return CORE_OK;
}

/* Patterns and container IDs */

int run_read_cid(const char *path, char *id, size_t cap) {
  char buf[256];
  id[0] = 0;
  FILE *f = path ? fopen(path, "r") : NULL;
  if (!f)
    return 0;
  size_t r = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[r] = 0;
  char *s = buf;
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strcspn(s, "\r\n");
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
    n--;
  if (n == 0)
    return 0;
  /* What it holds, shown in the reason when it is no ID. */
  snprintf(id, cap, "%.*s", (int)(n < 40 ? n : 40), s);
  /* A container ID, as docker and podman write it: hex digits, 64 of
   * them (12 when shortened). Anything shorter or other ("e", "..", a
   * word) would match any command line or cgroup path that holds it. */
  if (n < RUN_CID_MIN || n > 128 || n >= cap)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (!strchr("0123456789abcdefABCDEF", s[i]))
      return -1;
  memcpy(id, s, n);
  id[n] = 0;
  return 1;
}

static int uses_cid(const run_sel *sel) {
  int any = sel->cgroup && sel->cgroup->n_parts > 1;
  for (size_t i = 0; i < sel->n_cmdline; i++)
    any |= sel->cmdline[i].n_parts > 1;
  return any;
}

/* The container IDs {cid} stands for now: the known ones and the
 * cidfile's. need: wait up to cid_wait_s for the cidfile when none is
 * known. OUT: ids (borrowed or in file_id), *n. */
static core_status current_cids(const run_sel *sel, int need, const char **ids,
                                size_t max, size_t *n, char *file_id,
                                core_err *err) {
  *n = 0;
  for (size_t i = 0; i < sel->n_cids && *n + 1 < max; i++)
    ids[(*n)++] = sel->cids[i];
  if (!uses_cid(sel))
    return CORE_OK;
  double until = core_monotonic() + (need ? sel->cid_wait_s : 0);
  int got = run_read_cid(sel->cidfile, file_id, 129);
  while (got != 1 && *n == 0 && sel->cidfile && core_monotonic() < until) {
    pause_ms(10);
    got = run_read_cid(sel->cidfile, file_id, 129);
  }
  int known = 0;
  for (size_t i = 0; got == 1 && i < *n; i++)
    known |= strcmp(ids[i], file_id) == 0;
  if (got == 1 && !known)
    ids[(*n)++] = file_id;
  if (*n == 0 && need && got < 0)
    return core_fail(err, CORE_ERUN,
                     "{cid}: %s holds \"%s\", which is not a container ID "
                     "(at least %d hex digits, as docker run --cidfile "
                     "writes); nothing was selected by it",
                     sel->cidfile, file_id, RUN_CID_MIN);
  if (*n == 0 && need)
    return sel->cidfile
               ? core_fail(err, CORE_ERUN,
                           "{cid}: %s held no container ID %g s after the "
                           "sample was due (the run's command writes it, "
                           "as docker run --cidfile {cidfile} does)",
                           sel->cidfile, sel->cid_wait_s)
               : core_fail(err, CORE_ERUN, "{cid}: the run has no cidfile");
  return CORE_OK;
}

/* Pattern p with id in place of {cid}. Returns a newly allocated
 * string, or NULL when out of memory. */
static char *pattern_text(const run_pattern *p, const char *id) {
  core_buf b;
  core_buf_init(&b);
  for (size_t i = 0; i < p->n_parts; i++) {
    if (i)
      core_buf_puts(&b, id);
    core_buf_puts(&b, p->parts[i]);
  }
  if (b.oom || !b.data) {
    core_buf_free(&b);
    return b.oom ? NULL : core_strdup("");
  }
  return core_buf_steal(&b);
}

/* Calls fn for each text pattern p stands for: itself, or one per
 * container ID (none when there is none). Returns 0 when out of memory. */
static int each_text(const run_pattern *p, const char *const *ids, size_t n,
                     void (*fn)(void *ctx, const char *text), void *ctx) {
  size_t times = p->n_parts > 1 ? n : 1;
  for (size_t i = 0; i < times; i++) {
    char *text = pattern_text(p, p->n_parts > 1 ? ids[i] : "");
    if (!text)
      return 0;
    fn(ctx, text);
    core_free(text);
  }
  return 1;
}

/* Making a selection */

typedef struct cg_pick {
  picker *pk;
  int need;
  core_err *err;
  core_status st;
} cg_pick;

/* 1 when path has a "." or ".." component: a value put in the path (a
 * var) could lead it out of the cgroup root or up to a hierarchy's root,
 * which holds every process. */
static int has_dot_part(const char *path) {
  for (const char *p = path; *p;) {
    size_t n = strcspn(p, "/");
    if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
      return 1;
    p += n;
    while (*p == '/')
      p++;
  }
  return 0;
}

/* 1 when the folder dir, links resolved, is below the cgroup root (links
 * resolved too). */
static int stays_under_root(const char *dir) {
  char *rd = realpath(dir, NULL), *rr = realpath(cg_root(), NULL);
  size_t l = rr ? strlen(rr) : 0;
  int ok = rd && rr && strncmp(rd, rr, l) == 0 && rd[l] == '/';
  free(rd); /* realpath's, from malloc */
  free(rr);
  return ok;
}

static void pick_cgroup_text(void *ctx, const char *text) {
  cg_pick *c = ctx;
  char dir[CG_PATH], tried[2048];
  if (c->st != CORE_OK)
    return;
  if (has_dot_part(text)) {
    if (c->need)
      c->st = core_fail(c->err, CORE_ERUN,
                        "cgroup %s: has a . or .. component; a cgroup path "
                        "goes down from the cgroup root only, nothing was "
                        "selected by it",
                        text);
    return;
  }
  int found = cg_find(text, dir, sizeof dir, tried, sizeof tried);
  if (found && !stays_under_root(dir)) {
    if (c->need)
      c->st = core_fail(c->err, CORE_ERUN,
                        "cgroup %s: %s leads out of the cgroup root %s; "
                        "nothing was selected by it",
                        text, dir, cg_root());
    return;
  }
  if (found)
    c->st = pick_cgroup_dir(c->pk, dir, 0, c->err);
  else if (c->need)
    c->st = core_fail(c->err, CORE_ERUN, "cgroup %s: not found in %s", text,
                      tried);
  if (!c->need && c->st != CORE_OK) {
    c->st = CORE_OK; /* gone while it was read: nothing is left there */
    memset(c->err, 0, sizeof *c->err);
  }
}

typedef struct cmd_pick {
  picker *pk;
  char *cmdl;
  char **texts;
  size_t n, cap;
  int oom;
} cmd_pick;

static void keep_text(void *ctx, const char *text) {
  cmd_pick *c = ctx;
  char **nv = core_grow(c->texts, &c->cap, c->n, sizeof *nv, 4);
  if (!nv || !(nv[c->n] = core_strdup(text))) {
    c->oom = 1;
    if (nv)
      c->texts = nv;
    return;
  }
  c->texts = nv;
  c->n++;
}

/* The processes whose command line holds one of the texts (never an
 * empty one, which every command line holds). */
static void pick_cmdlines(picker *pk, const run_sel *sel, const char **ids,
                          size_t n_ids) {
  cmd_pick c = {.pk = pk};
  for (size_t i = 0; i < sel->n_cmdline; i++)
    if (!each_text(&sel->cmdline[i], ids, n_ids, keep_text, &c))
      c.oom = 1;
  if (c.n > 0 && !(c.cmdl = core_malloc(CMDLINE_CAP)))
    c.oom = 1;
  for (size_t i = 0; c.cmdl && i < pk->nt; i++) {
    if (pk->t[i].state == 'Z')
      continue; /* its command line is gone */
    read_cmdline(pk->t[i].pid, c.cmdl, CMDLINE_CAP);
    for (size_t j = 0; j < c.n; j++)
      if (c.texts[j][0] && strstr(c.cmdl, c.texts[j])) {
        char r[300];
        snprintf(r, sizeof r, "cmdline:%.280s", c.texts[j]);
        choose(pk, pk->t[i].pid, r, RUN_SEL_CMDLINE);
      }
  }
  pk->oom |= c.oom;
  core_names_free(c.texts, c.n);
  core_free(c.cmdl);
}

/* What lies below the processes the cgroup or a command line selected
 * (runsc's ptrace stubs below its sandbox have empty command lines), and
 * which selected processes have a selected parent. */
static void pick_below(picker *pk) {
  int *d = core_malloc((pk->nt + 1) * sizeof *d);
  if (!d) {
    pk->oom = 1;
    return;
  }
  size_t n0 = pk->cs->n;
  for (size_t i = 0; i < n0; i++) {
    run_chosen c = pk->cs->v[i]; /* a copy: choose may move the array */
    if (!(c.kind & (RUN_SEL_CGROUP | RUN_SEL_CMDLINE)))
      continue;
    char r[32];
    snprintf(r, sizeof r, "below:%d", c.pid);
    size_t nd = run_walk_below(pk->t, pk->nt, c.pid, c.pid, d, 0);
    for (size_t k = 0; k < nd; k++)
      choose(pk, d[k], r, c.kind & (RUN_SEL_CGROUP | RUN_SEL_CMDLINE));
  }
  core_free(d);
  for (size_t i = 0; i < pk->cs->n; i++) {
    run_chosen *c = &pk->cs->v[i];
    for (size_t k = 0; k < pk->nt; k++)
      if (pk->t[k].pid == c->pid) {
        c->zombie = pk->t[k].state == 'Z';
        if (find_chosen(pk->cs, pk->t[k].ppid))
          c->kind |= RUN_SEL_CHILD;
      }
  }
}

core_status run_select(const run_sel *sel, int root, int adopter, int need,
                       run_chosen_set *out, core_err *err) {
  memset(out, 0, sizeof *out);
  const char *ids[64];
  char file_id[129];
  size_t n_ids = 0;
  run_pent *t = NULL;
  size_t nt = 0;
  core_status st = current_cids(sel, need, ids, 64, &n_ids, file_id, err);
  if (st != CORE_OK)
    return st;
  if ((st = run_proc_table(&t, &nt)) != CORE_OK)
    return core_fail(err, st, "cannot list /proc");
  picker pk = {.cs = out, .t = t, .nt = nt};
  if (!never_list(&pk))
    pk.oom = 1;
  if (sel->descendants && root > 0)
    pick_tree(&pk, root, adopter);
  if (sel->cgroup) {
    cg_pick c = {.pk = &pk, .need = need, .err = err, .st = CORE_OK};
    if (!each_text(sel->cgroup, ids, n_ids, pick_cgroup_text, &c))
      pk.oom = 1;
    st = c.st;
  }
  if (st == CORE_OK && sel->n_cmdline)
    pick_cmdlines(&pk, sel, ids, n_ids);
  if (st == CORE_OK)
    pick_below(&pk);
  if (st == CORE_OK && pk.oom)
    st = core_fail(err, CORE_ENOMEM, "out of memory selecting processes");
  core_free(pk.never);
  core_free(t);
  return st;
}

/* PSS sample */

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

/* Reads the Pss of every chosen process, summed into *pss_kib, each
 * listed in list (when not NULL). */
static void count_chosen(const run_chosen_set *cs, FILE *list, char *cmdl,
                         size_t cap, long *pss_kib, size_t *counted,
                         size_t *unreadable) {
  for (size_t i = 0; i < cs->n; i++) {
    char why[128] = "";
    int pid = cs->v[i].pid, ppid = run_proc_ppid(pid);
    long pss = -1;
    read_cmdline(pid, cmdl, cap);
    if (cs->v[i].zombie) {
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

core_status run_sample_pss(const run_pss *p, int root, int adopter,
                           long *pss_kib, size_t *counted, size_t *unreadable,
                           core_err *err) {
  run_chosen_set cs;
  FILE *list = NULL;
  char *cmdl = core_malloc(CMDLINE_CAP);
  *pss_kib = 0;
  *counted = *unreadable = 0;
  if (!cmdl)
    return core_fail(err, CORE_ENOMEM, "out of memory sampling PSS");
  core_status st = run_select(p->sel, root, adopter, 1, &cs, err);
  if (st == CORE_OK && p->list_path) {
    /* In the batch folder, where the measured command could have left a
     * link or a FIFO by that name. */
    int fd = -1;
    st = core_open_regular_write(p->list_path, O_WRONLY | O_TRUNC, &fd, err);
    if (st == CORE_OK && !(list = fdopen(fd, "w"))) {
      st = core_fail(err, CORE_EIO, "%s: %s", p->list_path, strerror(errno));
      close(fd);
    }
  }
  if (st == CORE_OK) {
    if (list)
      fputs("pid\tppid\tpss_kib\tstatus\treasons\tcmdline\n", list);
    count_chosen(&cs, list, cmdl, CMDLINE_CAP, pss_kib, counted, unreadable);
    if (list && (fflush(list) != 0 || ferror(list)))
      st = core_fail(err, CORE_EIO, "%s: write failed", p->list_path);
  }
  if (list)
    fclose(list);
  run_chosen_free(&cs);
  core_free(cmdl);
  return st;
}

/* Ending a run, and leaks */

static int selects_more(const run_sel *sel) {
  return sel && (sel->cgroup || sel->n_cmdline > 0);
}

/* 1 when pid is a process now, and not a zombie. */
static int is_live(int pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t r = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[r] = 0;
  char *rp = strrchr(buf, ')');
  return rp && rp[1] == ' ' && rp[2] && rp[2] != 'Z' && rp[2] != 'X';
}

/* The live processes sel selects now, besides the tree (a cgroup's list
 * can name one that has just ended: it is not live, and marked a zombie
 * here); 0 on error (nothing can be done about what cannot be listed). */
static size_t live(const run_sel *sel, run_chosen_set *cs) {
  core_err e = {0};
  if (run_select(sel, 0, 0, 0, cs, &e) != CORE_OK)
    return 0;
  size_t n = 0;
  for (size_t i = 0; i < cs->n; i++) {
    if (!cs->v[i].zombie && !is_live(cs->v[i].pid))
      cs->v[i].zombie = 1;
    n += !cs->v[i].zombie;
  }
  return n;
}

/* 1 when pid descends from prereg: the run's own tree (prereg runs one
 * run at a time and adopts its orphans). */
static int below_prereg(int pid) {
  int me = (int)getpid();
  for (int i = 0; i < 256 && pid > 1; i++)
    if ((pid = run_proc_ppid(pid)) == me)
      return 1;
  return 0;
}

/* A process ended that is not in the run's tree, added to out as
 * "PID COMMAND (REASONS)" (joined by "; ", cut at cap). */
static void name_outside(const run_chosen *c, char *out, size_t cap) {
  char cmdl[160];
  size_t l = cap ? strlen(out) : 0;
  if (!cap || l + 1 >= cap || below_prereg(c->pid))
    return;
  read_cmdline(c->pid, cmdl, sizeof cmdl);
  snprintf(out + l, cap - l, "%s%d %s (%s)", l ? "; " : "", c->pid,
           cmdl[0] ? cmdl : "(no command line)", c->reasons);
}

/* SIGKILL to the live processes of cs that match mask (0: all); those
 * outside the run's tree named in out (cap 0: not named). */
static size_t kill_chosen(const run_chosen_set *cs, int mask, char *out,
                          size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < cs->n; i++)
    if (!cs->v[i].zombie && (!mask || (cs->v[i].kind & mask))) {
      name_outside(&cs->v[i], out, cap);
      n += kill(cs->v[i].pid, SIGKILL) == 0;
    }
  return n;
}

/* Waits up to s seconds for sel to select nothing alive; 1 when it does. */
static int wait_gone(const run_sel *sel, double s) {
  double until = core_monotonic() + s;
  for (;;) {
    run_chosen_set cs;
    size_t n = live(sel, &cs);
    run_chosen_free(&cs);
    if (n == 0)
      return 1;
    if (core_monotonic() >= until)
      return 0;
    pause_ms(20);
  }
}

size_t run_sel_end(const run_sel *sel, double grace_s, char *outside,
                   size_t cap) {
  if (cap)
    outside[0] = 0;
  if (!selects_more(sel))
    return 0;
  run_chosen_set cs;
  size_t killed = 0;
  if (live(sel, &cs) == 0) {
    run_chosen_free(&cs);
    return 0;
  }
  /* The container itself first: its supervisors then end on their own,
   * cleanly (a shim killed before its container leaves the runtime's
   * state behind). */
  killed += kill_chosen(&cs, RUN_SEL_CGROUP | RUN_SEL_CHILD, outside, cap);
  run_chosen_free(&cs);
  if (wait_gone(sel, grace_s))
    return killed;
  if (live(sel, &cs) > 0)
    killed += kill_chosen(&cs, 0, outside, cap);
  run_chosen_free(&cs);
  wait_gone(sel, 2.0);
  return killed;
}

size_t run_sel_leaks(const run_sel *sel, double settle_s, char *leaks,
                     size_t cap) {
  if (cap)
    leaks[0] = 0;
  if (!selects_more(sel) || wait_gone(sel, settle_s))
    return 0;
  run_chosen_set cs;
  size_t n = 0, l = 0;
  char cmdl[160];
  live(sel, &cs);
  for (size_t i = 0; i < cs.n; i++) {
    if (cs.v[i].zombie)
      continue;
    read_cmdline(cs.v[i].pid, cmdl, sizeof cmdl);
    if (l < cap)
      l += (size_t)snprintf(leaks + l, cap - l, "%s%d %s", n ? "; " : "",
                            cs.v[i].pid, cmdl[0] ? cmdl : "(no command line)");
    n++;
  }
  kill_chosen(&cs, 0, NULL, 0);
  run_chosen_free(&cs);
  wait_gone(sel, 2.0);
  return n;
}

/* Cgroup folders a run made */

/* Notes in m the shallowest folder of rel under hierarchy h that is
 * missing. */
static void mark_one(const char *h, const char *rel, run_cg_made *m) {
  char dir[CG_PATH];
  size_t l = (size_t)snprintf(dir, sizeof dir, "%s", h);
  const char *p = rel;
  while (*p && l < sizeof dir) {
    while (*p == '/')
      p++;
    size_t k = strcspn(p, "/");
    if (k == 0)
      break;
    l += (size_t)snprintf(dir + l, sizeof dir - l, "/%.*s", (int)k, p);
    p += k;
    if (l < sizeof dir && !core_is_dir(dir)) {
      char **nv = core_realloc(m->dirs, (m->n + 1) * sizeof *nv);
      if (nv && (nv[m->n] = core_strdup(dir)) != NULL)
        m->n++;
      if (nv)
        m->dirs = nv;
      return;
    }
  }
}

void run_cgroup_mark(const char *path, run_cg_made *m) {
  memset(m, 0, sizeof *m);
  if (!path || !*path)
    return;
  if (under_root(path)) {
    mark_one(cg_root(), path + strlen(cg_root()), m);
    return;
  }
  cg_set *h = core_malloc(sizeof *h);
  if (!h)
    return;
  cg_hierarchies(h);
  for (size_t i = 0; i < h->n; i++)
    mark_one(h->dir[i], path, m);
  core_free(h);
}

/* rmdir of dir after everything below it; a cgroup folder's own files
 * (cgroup.procs, ...) do not stop it, a member process or a real file
 * does. */
static void remove_empty(const char *dir, int depth) {
  DIR *d = depth < 64 ? opendir(dir) : NULL;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    char path[CG_PATH + 256];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (e->d_name[0] != '.' && lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
      remove_empty(path, depth + 1);
  }
  if (d)
    closedir(d);
  rmdir(dir);
}

void run_cgroup_unmake(run_cg_made *m) {
  for (size_t i = 0; i < m->n; i++) {
    struct stat sb;
    /* A runtime removes the container's own cgroup below ours a moment
     * after its container ended: up to 2 s for the folder to empty
     * (rmdir removes a cgroup only once it holds nothing). */
    for (int tries = 0; tries < 40; tries++) {
      remove_empty(m->dirs[i], 0);
      if (lstat(m->dirs[i], &sb) != 0)
        break;
      pause_ms(50);
    }
    core_free(m->dirs[i]);
  }
  core_free(m->dirs);
  memset(m, 0, sizeof *m);
}
