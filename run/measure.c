/* measure.c: one measured run: its files and working folder, prepare,
 * the cache state, a cgroup, the steps with their PSS sample, cleanup,
 * the metrics the command reported, and what is kept of a failed run.
 * SPDX-License-Identifier: MIT
 *
 * Every run (cmd or steps, prepare and cleanup too) works in a fresh
 * folder of its own, so that no run sees another's files; sheets name
 * their inputs by absolute paths (vars), and PREREG_ORIGIN says where
 * prereg was started.
 *
 * What a short run costs besides its command is kept small (1,000 runs of
 * /bin/true should take little more than the commands themselves): output
 * files are made only when there is output, and a finished run's folder,
 * when left empty and as made, waits as BATCH/next.work and is renamed
 * for the next run rather than removed and made anew (an ext4 mkdir and
 * rmdir took longer than /bin/true runs, several times longer while a
 * sync was in flight).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/run_internal.h"

void run_add_reason(run_outcome *o, const char *fmt, ...) {
  size_t l = strlen(o->reason);
  if (l && l < sizeof o->reason - 2) {
    memcpy(o->reason + l, "; ", 3);
    l += 2;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->reason + l, sizeof o->reason - l, fmt, ap);
  va_end(ap);
  o->valid = 0;
}

/* Adds a note to o's reason (joined by "; ") that leaves o valid: what
 * a reader of the row should know, not a fault of the run. */
static void run_add_note(run_outcome *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void run_add_note(run_outcome *o, const char *fmt, ...) {
  size_t l = strlen(o->reason);
  if (l && l < sizeof o->reason - 2) {
    memcpy(o->reason + l, "; ", 3);
    l += 2;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->reason + l, sizeof o->reason - l, fmt, ap);
  va_end(ap);
}

/* The run's files */

/* One run's files, environment and output sinks (stdout and stderr are
 * kept, in files made at their first byte, for recorded runs only). */
typedef struct run_files {
  char *out, *err, *met, *procs, *work, *env_met;
  char *cid; /* {cidfile}: where the run's command writes a container ID;
               NULL when it has none (uses_cidfile) */
  char env_run[160], env_arm[300], env_wl[300];
  const char *env[6];
  run_sink so, se;
} run_files;

/* A kept output that could not be created or written (a full disk)
 * stops the whole run: recording this run would hide its missing output,
 * and the next ones would fail alike. It is dropped like an interrupted
 * one (its files removed, which also gives back some room), and --resume
 * runs it again. */
static core_status outputs_kept(const run_files *f, run_outcome *o,
                                core_err *err) {
  if (!f->so.error && !f->se.error)
    return CORE_OK;
  o->interrupted = 1;
  return core_fail(err, CORE_EIO,
                   "%s: %s; the rows already written are kept; free space "
                   "and run prereg run --resume",
                   f->so.error ? f->out : f->err,
                   strerror(f->so.error ? f->so.error : f->se.error));
}

/* The run's folder: the spare one renamed, or a new one. */
static core_status work_make(run_setting *set, const char *work,
                             core_err *err) {
  if (set->spare_ready && rename(set->spare, work) == 0) {
    set->spare_ready = 0;
    return CORE_OK;
  }
  set->spare_ready = 0;
  struct stat sb;
  if (mkdir(work, 0755) != 0 || stat(work, &sb) != 0)
    return core_fail(err, CORE_EIO, "%s: cannot create the working folder: %s",
                     work, strerror(errno));
  set->work_mode = (unsigned)(sb.st_mode & 07777);
  return CORE_OK;
}

/* 1 when the folder open at fd holds nothing but "." and "..": its
 * entries read straight (getdents64), with no stream to set up. */
static int dir_empty(int fd) {
  union {
    struct dirent64 e;
    char b[4096];
  } buf;
  ssize_t n;
  while ((n = getdents64(fd, buf.b, sizeof buf.b)) > 0)
    for (ssize_t at = 0; at < n;) {
      const struct dirent64 *e = (const struct dirent64 *)(buf.b + at);
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
        return 0;
      at += e->d_reclen;
    }
  return n == 0;
}

/* 1 when the folder at path is as work_make made it: a folder of ours,
 * with its mode, and empty. */
static int work_fresh(const run_setting *set, const char *path) {
  static uid_t euid;
  static int have_euid;
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat sb;
  if (fd < 0)
    return 0;
  if (!have_euid)
    euid = geteuid(), have_euid = 1;
  int fresh = fstat(fd, &sb) == 0 &&
              (unsigned)(sb.st_mode & 07777) == set->work_mode &&
              sb.st_uid == euid && dir_empty(fd);
  close(fd);
  return fresh;
}

/* A run's folder that is not kept: the next run's spare when it is as
 * made, else removed. */
static void work_drop(run_setting *set, const char *work) {
  if (!set->spare_ready && set->spare && work_fresh(set, work) &&
      rename(work, set->spare) == 0)
    set->spare_ready = 1;
  else
    core_remove_tree(work, NULL);
}

void run_setting_end(run_setting *set) {
  if (set->spare_ready)
    rmdir(set->spare);
  set->spare_ready = 0;
}

/* Whether a run of workload w in arm has a {cidfile}: a template of its
 * commands names it, or its selection reads the container ID from it
 * ({cid}). Without one, no file is looked for or removed in its name. */
static int uses_cidfile(const proto_workload *w, const proto_arm *arm) {
  const char *t[] = {arm->run, w->cmd, w->prepare, w->cleanup,
                     w->procs.cgroup};
  int any = 0;
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    any |= t[i] && (proto_uses_placeholder(t[i], "cidfile") ||
                    proto_uses_placeholder(t[i], "cid"));
  for (size_t i = 0; i < w->n_steps; i++)
    any |= proto_uses_placeholder(w->steps[i], "cidfile");
  for (size_t i = 0; i < w->procs.n_cmdline; i++)
    any |= proto_uses_placeholder(w->procs.cmdline[i], "cid");
  return any;
}

static core_status files_open(run_setting *set, const proto_workload *w,
                              const proto_arm *arm, const char *run_id,
                              int warm, run_files *f, core_err *err) {
  memset(f, 0, sizeof *f);
  f->so = (run_sink){.fd = -1, .limit = RUN_OUTPUT_LIMIT};
  f->se = (run_sink){.fd = -1, .limit = RUN_OUTPUT_LIMIT};
  f->out = core_asprintf("%s/%s.stdout", set->bdir, run_id);
  f->err = core_asprintf("%s/%s.stderr", set->bdir, run_id);
  f->met = core_asprintf("%s/%s.metrics", set->bdir, run_id);
  f->procs = core_asprintf("%s/%s.procs.tsv", set->bdir, run_id);
  f->work = core_asprintf("%s/%s.work", set->bdir, run_id);
  int cid = uses_cidfile(w, arm);
  f->cid = cid ? core_asprintf("%s/%s.cid", set->bdir, run_id) : NULL;
  f->env_met = core_asprintf("PREREG_METRICS=%s", f->met ? f->met : "");
  snprintf(f->env_run, sizeof f->env_run, "PREREG_RUN_ID=%s", run_id);
  snprintf(f->env_arm, sizeof f->env_arm, "PREREG_ARM=%s", arm->name);
  snprintf(f->env_wl, sizeof f->env_wl, "PREREG_WORKLOAD=%s", w->name);
  const char *env[] = {f->env_met, f->env_run,  f->env_arm,
                       f->env_wl,  set->origin, NULL};
  memcpy(f->env, env, sizeof env);
  if (!f->out || !f->err || !f->met || !f->procs || !f->env_met || !f->work ||
      (cid && !f->cid))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  /* docker run --cidfile refuses a file that exists. */
  if (f->cid)
    unlink(f->cid);
  f->so.path = warm ? NULL : f->out;
  /* A warm-up's stderr too, until it ends: a failure names its end. */
  f->se.path = f->err;
  return work_make(set, f->work, err);
}

/* A failed run's folder is kept as evidence, but a frozen batch holds
 * regular files only: symlinks, sockets and fifos are removed (their
 * names go to the run's stderr file). Walked through descriptors (the
 * command may still swap names for links): nothing is followed and no
 * mode is changed through a name. dfd is closed here. */
static void prune_at(int dfd, const char *path, run_sink *errs) {
  DIR *d = fdopendir(dfd);
  struct dirent *e;
  if (!d) {
    close(dfd);
    return;
  }
  while ((e = readdir(d)) != NULL) {
    struct stat sb;
    char *p;
    int sub;
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
        fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    p = core_path_join(path, e->d_name);
    if (p && S_ISDIR(sb.st_mode) &&
        core_open_subdir(dirfd(d), e->d_name, p, &sub, NULL) == CORE_OK) {
      prune_at(sub, p, errs);
      /* A kept git repository (the replay's) would make the data folder
       * a nest of repositories that git cannot commit: keep its files
       * under another name. Seeing the renamed entry again in this
       * readdir is harmless: it is pruned twice. */
      if (strcmp(e->d_name, ".git") == 0 &&
          renameat(dirfd(d), ".git", dirfd(d), "dot-git") == 0)
        run_sink_note(errs,
                      "prereg: renamed %s to dot-git in the kept "
                      "working folder\n",
                      p);
    } else if (p && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
      unlinkat(dirfd(d), e->d_name, 0);
      run_sink_note(errs,
                    "prereg: removed non-regular file %s from the "
                    "kept working folder\n",
                    p);
    }
    core_free(p);
  }
  closedir(d);
}

static void prune_special(const char *path, run_sink *errs) {
  int dfd;
  if (core_open_dir(path, &dfd, NULL) == CORE_OK)
    prune_at(dfd, path, errs);
}

/* What stays of the run: a valid run's working folder goes, a failed
 * one's is kept (pruned); the files of a warm-up or a dropped run go.
 * (An output file is only made for output, so none is empty.) */
/* The end of the stderr file at path into out: its last bytes on one
 * line, newlines as " / ", unprintable bytes as '?'. */
static void err_tail(const char *path, char *out, size_t cap) {
  char buf[256];
  struct stat sb;
  ssize_t n = 0;
  size_t k = 0;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  out[0] = '\0';
  if (fd < 0)
    return;
  if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
    off_t at =
        sb.st_size > (off_t)(cap / 2) ? sb.st_size - (off_t)(cap / 2) : 0;
    if (lseek(fd, at, SEEK_SET) == at)
      n = read(fd, buf, cap / 2 < sizeof buf ? cap / 2 : sizeof buf);
  }
  close(fd);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
    n--;
  for (ssize_t i = 0; i < n && k + 4 < cap; i++) {
    unsigned char ch = (unsigned char)buf[i];
    if (ch == '\n') {
      memcpy(out + k, " / ", 3);
      k += 3;
    } else {
      out[k++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
  }
  out[k] = '\0';
}

static void files_close(run_setting *set, run_files *f, int warm,
                        run_outcome *o) {
  if (!o->valid && !o->interrupted && f->err)
    err_tail(f->err, o->err_tail, sizeof o->err_tail);
  if (f->work) {
    if (o->valid || warm || o->interrupted)
      work_drop(set, f->work);
    else
      prune_special(f->work, &f->se);
  }
  if (warm || o->interrupted) {
    const char *gone[] = {f->out, f->err, f->met, f->procs};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
      if (gone[i])
        unlink(gone[i]);
  }
  if (f->so.fd >= 0)
    close(f->so.fd);
  if (f->se.fd >= 0)
    close(f->se.fd);
  if (f->cid)
    unlink(f->cid); /* its ID is in the process list's reasons */
  char *own[] = {f->out,  f->err,     f->met, f->procs,
                 f->work, f->env_met, f->cid};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    core_free(own[i]);
}

/* Phases */

/* Runs a helper phase (prepare/cleanup); its failure makes the run
 * invalid. Returns an error only when the engine itself failed. */
static core_status phase(const run_setting *set, const char *name,
                         const char *tmpl, proto_expand_ctx x, run_files *f,
                         double timeout, run_outcome *o, core_err *err) {
  if (!tmpl)
    return CORE_OK;
  x.cmd = NULL;
  core_err e2 = {0};
  char *cmd = run_expand(set->s, tmpl, &x, &e2);
  if (!cmd) {
    run_add_reason(o, "%s: %s", name, e2.msg);
    return e2.status == CORE_ENOMEM ? core_fail(err, CORE_ENOMEM, "%s", e2.msg)
                                    : CORE_OK;
  }
  /* After an interruption the cleanup still runs (a container must not
   * outlive prereg), not cancelled, and for at most a minute. */
  int after_cancel = o->interrupted;
  run_req q = {.cmd = cmd,
               .cwd = f->work,
               .env = f->env,
               .timeout_s = after_cancel && timeout > 60 ? 60 : timeout,
               .grace_s = RUN_GRACE_S,
               .out = &f->so,
               .err = &f->se,
               .uncancellable = after_cancel};
  run_res r;
  core_status st = run_exec(&q, &r, err);
  core_free(cmd);
  if (st != CORE_OK)
    return st;
  if (r.interrupted)
    o->interrupted = 1;
  else if (r.timed_out)
    o->failed = 1, run_add_reason(o, "%s: timeout after %g s", name, timeout);
  else if (!r.spawned)
    o->failed = 1, run_add_reason(o, "%s: %s", name, r.why);
  else if (!r.exited)
    o->failed = 1, run_add_reason(o, "%s: killed by signal %d", name, r.signo);
  else if (r.exit_code != 0)
    o->failed = 1,
    run_add_reason(o, "%s: exit code %d, expected 0", name, r.exit_code);
  return CORE_OK;
}

/* The page cache as the run starts (dropped first for a cold run). */
static core_status cache_state(const run_setting *set, const run_plan_item *it,
                               run_outcome *o, core_err *err) {
  const proto_workload *w = &set->s->workloads[it->workload];
  const char *resident = set->pre->img[it->arm].resident;
  if (w->cache == PROTO_CACHE_COLD && run_drop_caches(err) != CORE_OK) {
    core_err_prefix(err, "%s %s round %ld: ", w->name,
                    set->s->arms[it->arm].name, it->round);
    return err->status;
  }
  snprintf(o->cache_state, sizeof o->cache_state, "cached_mib=%ld",
           run_cached_mib());
  if (resident) {
    double frac = 0;
    core_err e2 = {0};
    size_t l = strlen(o->cache_state);
    core_status rst = run_resident_fraction(resident, &frac, &e2);
    if (rst == CORE_ENOMEM)
      return core_fail(err, CORE_ENOMEM, "%s", e2.msg);
    if (rst == CORE_OK)
      snprintf(o->cache_state + l, sizeof o->cache_state - l, ";resident=%.3f",
               frac);
    else
      snprintf(o->cache_state + l, sizeof o->cache_state - l,
               ";resident=unreadable");
  }
  return CORE_OK;
}

/* The run's own cgroup under the preflight's parent. OUT: *dir (newly
 * allocated; NULL when the workload asks for none). */
static core_status cgroup_make(const run_setting *set, const proto_workload *w,
                               const char *run_id, char **dir, core_err *err) {
  *dir = NULL;
  if (!w->cgroup || !set->pre->cgparent)
    return CORE_OK;
  *dir = core_asprintf("%s/prereg-%d-%s", set->pre->cgparent, (int)getpid(),
                       run_id);
  if (!*dir || mkdir(*dir, 0755) != 0)
    return core_fail(err, CORE_ERUN, "cannot create the run's cgroup %s: %s",
                     *dir ? *dir : "", strerror(errno));
  return CORE_OK;
}

/* Steps */

/* The run's processes (sheet key `processes`): what pss_mib counts and
 * what ending the run stops; how far the steps are with the sample; the
 * container IDs the steps wrote, for the leak check at the end. */
typedef struct own_sel {
  run_sel sel;
  run_pss pss;
  run_pattern cg, *cmdline;
  char *cids[64];
  size_t n_cids;
  run_cg_made made; /* the cgroup folders the run creates */
  int want;         /* the workload records pss_mib */
  int sampled;      /* the sample was taken (by an earlier step) */
  int failed;       /* it could not be: o's reason says why */
  double elapsed;   /* wall time of the steps so far */
} own_sel;

/* The cgroup path a selection names, as far as it is known before the
 * run: up to the folder that holds the first {cid}. */
static void own_mark(own_sel *own) {
  if (!own->sel.cgroup)
    return;
  char *known = core_strdup(own->cg.parts[0]);
  if (known && own->cg.n_parts > 1) {
    char *slash = strrchr(known, '/');
    if (slash)
      *slash = 0;
    else
      known[0] = 0;
  }
  run_cgroup_mark(known, &own->made);
  core_free(known);
}

/* One pattern of the sheet, expanded but for {cid}. */
static core_status own_pattern(const run_setting *set, const char *tmpl,
                               const proto_expand_ctx *x, run_pattern *p,
                               core_err *err) {
  char **parts;
  size_t n;
  core_status st = proto_expand_split(set->s, tmpl, x, "cid", &parts, &n, err);
  p->parts = st == CORE_OK ? parts : NULL;
  p->n_parts = st == CORE_OK ? n : 0;
  return st;
}

static core_status own_make(const run_setting *set, const proto_workload *w,
                            const proto_expand_ctx *x, const run_files *f,
                            int warm, own_sel *own, core_err *err) {
  const char *pss = proto_measure_name(PROTO_MEASURE_PSS);
  memset(own, 0, sizeof *own);
  own->pss.after_s = -1;
  own->want = proto_workload_has_metric(w, pss);
  own->sel.descendants = w->procs.descendants;
  own->sel.cidfile = f->cid;
  own->sel.cid_wait_s = 2;
  own->sel.cids = (const char *const *)own->cids;
  core_status st = CORE_OK;
  if (w->procs.cgroup &&
      (st = own_pattern(set, w->procs.cgroup, x, &own->cg, err)) == CORE_OK)
    own->sel.cgroup = &own->cg;
  if (st == CORE_OK && w->procs.n_cmdline) {
    if (!(own->cmdline =
              core_calloc(w->procs.n_cmdline, sizeof *own->cmdline)))
      return core_fail(err, CORE_ENOMEM, "out of memory");
    for (size_t i = 0; st == CORE_OK && i < w->procs.n_cmdline; i++)
      if ((st = own_pattern(set, w->procs.cmdline[i], x, &own->cmdline[i],
                            err)) == CORE_OK)
        own->sel.n_cmdline = i + 1;
    own->sel.cmdline = own->cmdline;
  }
  own->pss.after_s = own->want ? w->sample_after_s : -1;
  own->pss.sel = &own->sel;
  own->pss.list_path = warm ? NULL : f->procs;
  /* A memory-only workload (`sleep 300`) ends once sampled. */
  int only_pss = w->n_metrics > 0;
  for (size_t i = 0; i < w->n_metrics; i++)
    only_pss &= strcmp(w->metrics[i], pss) == 0;
  own->pss.stop_after = only_pss;
  own_mark(own);
  return st;
}

/* A step has ended (its own tree is gone): the container ID it wrote is
 * kept for the leak check, and what its selection still holds is ended;
 * the cidfile goes, so that the next step can write its own. */
static void own_step_end(own_sel *own, run_files *f, int warm,
                         run_outcome *o) {
  char id[129], outside[700];
  if (f->cid && run_read_cid(f->cid, id, sizeof id) == 1) {
    int known = 0;
    for (size_t i = 0; i < own->n_cids; i++)
      known |= strcmp(own->cids[i], id) == 0;
    if (!known && own->n_cids < 63 &&
        (own->cids[own->n_cids] = core_strdup(id)) != NULL)
      own->sel.n_cids = ++own->n_cids;
  }
  run_sel_end(&own->sel, RUN_GRACE_S, outside, sizeof outside);
  if (f->cid)
    unlink(f->cid);
  /* Named, not held against the run: a container's processes are the
   * run's, yet a reader should see everything prereg ended. */
  if (outside[0] && !warm) {
    run_add_note(o, "ended outside the run's tree: %s", outside);
    run_sink_note(&f->se,
                  "prereg: ended processes outside the run's own tree, "
                  "which its selection named: %s\n",
                  outside);
  }
}

/* The run and its cleanup are over: whatever the selection still holds
 * (after a moment to end by itself) is a leak, stopped and named; then
 * the cgroup folders the run made go. */
static void own_done(own_sel *own, run_files *f, int warm, run_outcome *o) {
  char leaks[700];
  size_t n = run_sel_leaks(&own->sel, RUN_GRACE_S, leaks, sizeof leaks);
  if (n) {
    run_add_reason(o, "left running: %s", leaks);
    if (!warm)
      run_sink_note(&f->se,
                    "prereg: %zu process(es) of the run were still running "
                    "after it and its cleanup ended; stopped: %s\n",
                    n, leaks);
  }
  run_cgroup_unmake(&own->made);
}

static void own_free(own_sel *own) {
  core_names_free((char **)own->cg.parts, own->cg.n_parts);
  for (size_t i = 0; own->cmdline && i < own->sel.n_cmdline; i++)
    core_names_free((char **)own->cmdline[i].parts, own->cmdline[i].n_parts);
  core_free(own->cmdline);
  for (size_t i = 0; i < own->n_cids; i++)
    core_free(own->cids[i]);
  run_cgroup_unmake(&own->made);
}

/* The value step r measured from m (the one place that maps where a
 * built-in metric's value comes from to a step's measurement, in the
 * metric's unit); 0 when the step has none, or m is not measured per
 * step. */
static int step_value(const run_res *r, proto_measure m, double *v) {
  switch (m) {
  case PROTO_MEASURE_WALL:
    return *v = r->wall_s, 1;
  case PROTO_MEASURE_USER:
    return *v = r->user_s, 1;
  case PROTO_MEASURE_SYS:
    return *v = r->sys_s, 1;
  case PROTO_MEASURE_MAXRSS:
    return *v = (double)r->maxrss_kib, r->maxrss_kib >= 0;
  case PROTO_MEASURE_PSS:
    return *v = (double)r->pss_kib / 1024.0, r->pss_sampled;
  default:
    return 0;
  }
}

/* Starts o's built-in metrics: none measured, but a sum, which is 0
 * until a step adds to it. */
static void measures_start(run_outcome *o) {
  size_t n;
  const proto_builtin_metric *b = proto_builtin_metrics(&n);
  for (size_t i = 0; i < n; i++)
    o->has[b[i].from] = b[i].steps == PROTO_STEPS_SUM;
}

/* Adds step r's values of the built-in metrics to o, each by its row's
 * rule for steps. */
static void measures_add(const run_res *r, run_outcome *o) {
  size_t n;
  const proto_builtin_metric *b = proto_builtin_metrics(&n);
  for (size_t i = 0; i < n; i++) {
    proto_measure m = b[i].from;
    double v;
    if (!step_value(r, m, &v))
      continue;
    if (b[i].steps == PROTO_STEPS_SUM)
      o->val[m] += v;
    else if (!o->has[m] || (b[i].steps == PROTO_STEPS_MAX && v > o->val[m]))
      o->val[m] = v;
    o->has[m] = 1;
  }
}

/* Adds step k's measures, exit status and PSS sample to o. */
static void step_account(const run_res *r, size_t k, int warm, run_files *f,
                         own_sel *ps, run_outcome *o) {
  ps->elapsed += r->wall_s;
  measures_add(r, o);
  o->ctxsw_invol += r->ctxsw_invol;
  o->has_ctxsw = 1;
  if (r->pss_sampled && !ps->sampled) {
    ps->sampled = 1;
    if (r->pss_unreadable && !warm)
      run_sink_note(&f->se,
                    "prereg: %zu selected process(es) could not be read "
                    "at the PSS sample; see %s\n",
                    r->pss_unreadable, f->procs);
  }
  char code[32];
  if (r->exited)
    snprintf(code, sizeof code, "%d", r->exit_code);
  else
    snprintf(code, sizeof code, "sig%d", r->signo);
  size_t l = strlen(o->exit_codes);
  snprintf(o->exit_codes + l, sizeof o->exit_codes - l, "%s%s", k ? ";" : "",
           r->stopped ? "stopped" : code);
}

/* What step k's end says about the run; returns 1 when the run stops
 * there (a timeout: the steps left are "-"). where: "step N", or NULL for
 * a workload's single cmd. */
static int step_judge(const proto_workload *w, const run_res *r, size_t k,
                      size_t nsteps, const char *where, own_sel *ps,
                      run_outcome *o) {
  char pre[40] = "";
  if (where)
    snprintf(pre, sizeof pre, "%s: ", where);
  if (r->timed_out) {
    o->failed = 1;
    run_add_reason(o, "timeout after %g s%s%s", w->timeout_s,
                   where ? " in " : "", where ? where : "");
    for (size_t j = k + 1; j < nsteps; j++)
      strncat(o->exit_codes, ";-",
              sizeof o->exit_codes - strlen(o->exit_codes) - 1);
    return 1;
  }
  if (r->pss_failed && !ps->failed) {
    /* The selection could not be read: that is why there is no pss_mib. */
    ps->failed = o->pss_failed = 1;
    run_add_reason(o, "%s: %s", proto_measure_name(PROTO_MEASURE_PSS), r->why);
  }
  if (r->stopped)
    return 0; /* ended by us after the PSS sample: as planned */
  if (!r->spawned)
    o->failed = 1, run_add_reason(o, "%s%s", pre, r->why);
  else if (!r->exited)
    o->failed = 1, run_add_reason(o, "%skilled by signal %d (%s)", pre,
                                  r->signo, strsignal(r->signo));
  else if (w->expect == PROTO_EXPECT_CODE && r->exit_code != w->expect_code)
    o->failed = 1, run_add_reason(o, "%sexit code %d, expected %d", pre,
                                  r->exit_code, w->expect_code);
  if (ps->want && !r->pss_sampled && !ps->sampled && !ps->failed &&
      r->why[0] && k + 1 == nsteps) {
    o->pss_failed = 1;
    run_add_reason(o, "%s: %s", proto_measure_name(PROTO_MEASURE_PSS), r->why);
  }
  return 0;
}

/* Runs the workload's steps (or its cmd), each inside the arm's run
 * template; stops at a timeout, a cancellation or a lost output. */
static core_status steps(const run_setting *set, const run_plan_item *it,
                         proto_expand_ctx x, run_files *f, own_sel *ps,
                         const char *cgdir, run_outcome *o, core_err *err) {
  const proto_workload *w = &set->s->workloads[it->workload];
  size_t nsteps = w->n_steps > 0 ? w->n_steps : 1;
  for (size_t k = 0; k < nsteps; k++) {
    char where[32];
    snprintf(where, sizeof where, "step %zu", k + 1);
    core_err e2 = {0};
    char *cmd = run_full_command(set->s, &set->s->arms[it->arm],
                                 w->n_steps ? w->steps[k] : w->cmd, x, &e2);
    if (!cmd && e2.status == CORE_ENOMEM)
      return core_fail(err, CORE_ENOMEM, "%s", e2.msg);
    if (!cmd) {
      run_add_reason(o, "%s%s%s", w->n_steps ? where : "",
                     w->n_steps ? ": " : "", e2.msg);
      return CORE_OK;
    }
    if (ps->want && !ps->sampled && !ps->failed)
      ps->pss.after_s = w->sample_after_s - ps->elapsed < 0
                            ? 0
                            : w->sample_after_s - ps->elapsed;
    run_req q = {.cmd = cmd,
                 .cwd = f->work,
                 .env = f->env,
                 .timeout_s = w->timeout_s,
                 .grace_s = RUN_GRACE_S,
                 .out = &f->so,
                 .err = &f->se,
                 .pss =
                     ps->want && !ps->sampled && !ps->failed ? &ps->pss : NULL,
                 .cgroup_dir = cgdir};
    run_res r;
    core_status st = run_exec(&q, &r, err);
    core_free(cmd);
    /* Its own tree is gone; what it started elsewhere (a container) goes
     * now, whatever ended the step. */
    own_step_end(ps, f, it->round == 0, o);
    if (st != CORE_OK)
      return st;
    if (r.interrupted) {
      o->interrupted = 1;
      return CORE_OK;
    }
    if (f->so.error || f->se.error)
      return CORE_OK; /* the run stops here: see outputs_kept */
    step_account(&r, k, it->round == 0, f, ps, o);
    if (step_judge(w, &r, k, nsteps, w->n_steps ? where : NULL, ps, o))
      return CORE_OK;
  }
  return CORE_OK;
}

/* The run */

/* After the steps (also when they were interrupted): the cgroup's
 * figures, cleanup, truncation notes and the metrics the command
 * reported. */
static core_status finish(const run_setting *set, const proto_workload *w,
                          proto_expand_ctx x, run_files *f, const char *cgdir,
                          int warm, run_outcome *o, core_err *err) {
  core_status st;
  if (cgdir && !o->interrupted) {
    core_err e2 = {0};
    proto_measure mem = PROTO_MEASURE_CG_MEM, cpu = PROTO_MEASURE_CG_CPU;
    if (run_cgroup_read(cgdir, &o->val[mem], &o->val[cpu], &e2) == CORE_OK)
      o->has[mem] = o->has[cpu] = 1;
    else
      run_add_reason(o, "cgroup: %s", e2.msg);
  }
  if ((st = phase(set, "cleanup", w->cleanup, x, f, w->timeout_s, o, err)) !=
          CORE_OK ||
      o->interrupted || (st = outputs_kept(f, o, err)) != CORE_OK)
    return st;
  if (f->so.truncated)
    run_sink_note(&f->se, "\nprereg: stdout truncated at %zu bytes\n",
                  f->so.limit);
  if (f->se.truncated)
    run_sink_note(&f->se, "\nprereg: stderr truncated at %zu bytes\n",
                  f->se.limit);
  core_err me = {0};
  if (run_parse_metrics(f->met, &o->m, &o->n_m, &me) != CORE_OK) {
    if (me.status == CORE_ENOMEM)
      return core_fail(err, CORE_ENOMEM, "%s", me.msg);
    run_add_reason(o, "%s: %s", f->met, me.msg);
  }
  if (warm)
    unlink(f->met);
  return CORE_OK;
}

/* prepare (not timed, and outside the cold-cache window), the cache
 * state, the cgroup, the steps, then finish. own: the run's processes
 * (made before prepare, so that the cgroup folders that exist before the
 * run are known). */
static core_status phases(run_setting *set, const run_plan_item *it,
                          const char *run_id, run_files *f, char **cgdir,
                          own_sel *own, run_outcome *o, core_err *err) {
  const proto_workload *w = &set->s->workloads[it->workload];
  int warm = it->round == 0;
  proto_expand_ctx x = {.arm = set->s->arms[it->arm].name,
                        .workload = w->name,
                        .run_id = run_id,
                        .round = it->round,
                        .batch_id = set->bid,
                        .cidfile = f->cid};
  core_status st;
  if ((st = own_make(set, w, &x, f, warm, own, err)) != CORE_OK ||
      (st = phase(set, "prepare", w->prepare, x, f, w->timeout_s, o, err)) !=
          CORE_OK ||
      o->interrupted || (st = outputs_kept(f, o, err)) != CORE_OK ||
      (st = cache_state(set, it, o, err)) != CORE_OK ||
      (st = cgroup_make(set, w, run_id, cgdir, err)) != CORE_OK)
    return st;
  run_cond_snap sn;
  const char *cpus = set->s->arms[it->arm].cpus;
  run_cond_take(&sn, cpus, 1);
  core_utc_now(o->started);
  st = steps(set, it, x, f, own, *cgdir, o, err);
  if (st != CORE_OK)
    return st;
  run_cond_take(&sn, cpus, 0);
  run_cond_facts(&sn, o);
  if (!warm && !o->interrupted)
    run_cond_judge(&set->s->conditions, o);
  return finish(set, w, x, f, *cgdir, warm, o, err);
}

core_status run_measure(run_setting *set, const run_plan_item *item,
                        const char *run_id, run_outcome *o, core_err *err) {
  const proto_workload *w = &set->s->workloads[item->workload];
  int warm = item->round == 0;
  char *cgdir = NULL;
  run_files f;
  memset(o, 0, sizeof *o);
  o->valid = 1;
  measures_start(o);
  core_status st =
      files_open(set, w, &set->s->arms[item->arm], run_id, warm, &f, err);
  own_sel own;
  memset(&own, 0, sizeof own);
  run_pin pin;
  core_err pe = {0};
  if (st == CORE_OK &&
      run_cond_pin(set->s->arms[item->arm].cpus, &pin, &pe) != CORE_OK) {
    o->failed = 1;
    run_add_reason(o, "%s", pe.msg);
  } else if (st == CORE_OK) {
    st = phases(set, item, run_id, &f, &cgdir, &own, o, err);
    run_cond_unpin(&pin);
  }
  own_done(&own, &f, warm, o);
  own_free(&own);
  files_close(set, &f, warm, o);
  if (cgdir) {
    run_kill_all_children();
    rmdir(cgdir);
  }
  core_free(cgdir);
  return st;
}
