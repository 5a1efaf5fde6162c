/* cli_cmd_run.c: `prereg run`: executes a registered sheet's plan and freezes
 * what it measured, row by row, with provenance.
 * SPDX-License-Identifier: MIT
 *
 * Order of a batch: lock check, --resume recovery, the runs already
 * collected, preflight (cgroups, cold caches, image digests, `requires`,
 * `versions`), then per workload: warm-ups (per arm, not recorded) and
 * the rounds. Each run's rows go to disk (fsync) as soon as it ends; for
 * expect_exit = "reference" a round's rows wait until the round ends,
 * since only then is the comparison decidable (a crash loses at most that
 * round; in blocked order, the workload in progress).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"
#include "run/run.h"

#define OUTPUT_LIMIT ((size_t)1 << 20) /* per stream and run */
#define GRACE_S 2.0

/* {==== The plan ==== */

typedef struct plan_run {
  size_t w, a;
  long round; /* 1-based; 0 for a warm-up */
  long warm;  /* warm-up number when round == 0 */
  int done;   /* already collected (counted, never run again) */
} plan_run;

typedef struct plan {
  plan_run *v;
  size_t n, cap;
} plan;

static int plan_push(plan *p, size_t w, size_t a, long round, long warm) {
  plan_run *nv = core_grow(p->v, &p->cap, p->n, sizeof *nv, 64);
  if (!nv)
    return 0;
  p->v = nv;
  p->v[p->n++] = (plan_run){w, a, round, warm, 0};
  return 1;
}

static int runnable(const proto_workload *w) {
  return w->runs > 0 && (w->cmd || w->n_steps > 0);
}

static long eff_runs(const proto_workload *w, int quick) {
  return quick && w->runs > 3 ? 3 : w->runs;
}

static long eff_warmup(const proto_workload *w, int quick) {
  return quick && w->warmup > 1 ? 1 : w->warmup;
}

/* Warm-ups first (round-robin over the arms), then the rounds: every arm
 * once per round in the order run_round_order draws (interleaved), or
 * each arm's rounds in a row (blocked). */
static core_status build_plan(const proto_sheet *s, const char *only,
                              int quick, plan *p, core_err *err) {
  size_t *order = core_calloc(s->n_arms ? s->n_arms : 1, sizeof *order);
  if (!order)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t w = 0; w < s->n_workloads; w++) {
    const proto_workload *wl = &s->workloads[w];
    if (!runnable(wl) || (only && strcmp(only, wl->name) != 0))
      continue;
    long runs = eff_runs(wl, quick), warm = eff_warmup(wl, quick);
    int ok = 1;
    for (long k = 1; k <= warm; k++)
      for (size_t a = 0; a < s->n_arms; a++)
        ok &= plan_push(p, w, a, 0, k);
    if (wl->order == PROTO_ORDER_BLOCKED) {
      for (size_t a = 0; a < s->n_arms; a++)
        for (long r = 1; r <= runs; r++)
          ok &= plan_push(p, w, a, r, 0);
    } else {
      for (long r = 1; r <= runs; r++) {
        run_round_order(s->rule.seed, wl->name, r, s->n_arms, order);
        for (size_t i = 0; i < s->n_arms; i++)
          ok &= plan_push(p, w, order[i], r, 0);
      }
    }
    if (!ok) {
      core_free(order);
      return core_fail(err, CORE_ENOMEM, "out of memory");
    }
  }
  core_free(order);
  return CORE_OK;
}

/* A row counts towards the plan unless a later amendment supersedes its
 * workload: amendment i (0-based) is sheet version i + 1. */
static int row_counts(const proto_sheet *s, const data_row *r) {
  if (!r->source || strcmp(r->source, "run") != 0)
    return 0;
  for (size_t i = 0; i < s->n_amendments; i++)
    for (size_t k = 0; k < s->amendments[i].n_supersedes; k++)
      if (!strcmp(s->amendments[i].supersedes[k], r->workload) &&
          r->sheet_version < (int)i + 1)
        return 0;
  return 1;
}

static void mark_done(const proto_sheet *s, plan *p, const data_rowset *rs) {
  for (size_t i = 0; i < rs->n; i++) {
    const data_row *r = &rs->rows[i];
    if (!row_counts(s, r) || !r->workload || !r->arm)
      continue;
    for (size_t k = 0; k < p->n; k++) {
      plan_run *pr = &p->v[k];
      if (pr->round == r->round && pr->round > 0 &&
          !strcmp(s->workloads[pr->w].name, r->workload) &&
          !strcmp(s->arms[pr->a].name, r->arm))
        pr->done = 1;
    }
  }
  /* Warm-ups only where something is left to run. */
  for (size_t k = 0; k < p->n; k++) {
    if (p->v[k].round != 0)
      continue;
    int left = 0;
    for (size_t j = 0; j < p->n && !left; j++)
      left = p->v[j].w == p->v[k].w && p->v[j].round > 0 && !p->v[j].done;
    p->v[k].done = !left;
  }
}

/* }==== */

/* {==== Run context ==== */

typedef struct arm_image {
  char *digest;   /* "" when none */
  char *kind;     /* "tree", "digest" or "none" */
  char *source;   /* expanded path or command */
  char *resident; /* expanded image.resident or NULL */
} arm_image;

/* Rows of one round of a "reference" workload, waiting for the round to
 * end. */
typedef struct round_buf {
  data_row *rows;
  size_t n, cap;
  char **codes; /* per arm: exit codes of this round's run, or NULL */
  long pending; /* runs of the round still to come */
} round_buf;

typedef struct runctx {
  const cli_opts *opts;
  proto_sheet *s;
  data_experiment *exp;
  data_batch *batch;
  const char *bid, *bdir;
  int version;
  arm_image *img;
  char *cgparent;
  const data_rowset *old; /* rows already collected (resume) */
  long seq, warm_seq;
  size_t valid, invalid, total, done;
  double t_start, run_time;
  int tty, progress_open;
  char **warn; /* warm-up failures, in words */
  size_t n_warn, cap_warn;
  data_arm_versions *vers; /* per arm: what its `versions` commands said */
  double load_start[3];
  int has_load_start;
  round_buf *rb; /* per round of the current workload (reference) */
  long rb_n;
} runctx;

static volatile sig_atomic_t interrupted;
static int cancel_pipe[2] = {-1, -1};

static void on_signal(int sig) {
  (void)sig;
  int e = errno;
  interrupted = 1;
  if (cancel_pipe[1] >= 0 && write(cancel_pipe[1], "x", 1) < 0) {
    /* the flag alone still stops us between runs */
  }
  errno = e;
}

/* }==== */

/* {==== Progress ==== */

/* Progress goes to stderr while the batch runs: the one place outside
 * main that prints, because a run may take hours and its messages cannot
 * wait for the end. */
static void fmt_dur(double s, char *out, size_t cap) {
  long t = (long)(s + 0.5);
  if (t >= 3600)
    snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(out, cap, "%ld:%02ld", t / 60, t % 60);
}

static void progress(runctx *c, const plan_run *pr, const char *failure,
                     double wall) {
  const char *wn = c->s->workloads[pr->w].name, *an = c->s->arms[pr->a].name;
  double el = core_monotonic() - c->t_start;
  char e1[32], e2[32];
  fmt_dur(el, e1, sizeof e1);
  double eta =
      c->done ? c->run_time / (double)c->done * (double)(c->total - c->done)
              : 0;
  fmt_dur(eta, e2, sizeof e2);
  if (c->tty) {
    if (failure)
      fprintf(stderr, "\r\033[K%s %s round %ld: %s\n", wn, an, pr->round,
              failure);
    fprintf(stderr, "\r\033[K[%zu/%zu] %s %s  elapsed %s  ETA %s", c->done,
            c->total, wn, an, e1, e2);
    c->progress_open = 1;
  } else {
    fprintf(stderr, "prereg: [%zu/%zu] %s %s round %ld: %s (%.4g s)\n",
            c->done, c->total, wn, an, pr->round, failure ? failure : "ok",
            wall);
  }
  fflush(stderr);
}

static void progress_end(runctx *c) {
  if (c->tty && c->progress_open)
    fputs("\r\033[K", stderr);
  c->progress_open = 0;
}

/* }==== */

/* {==== Helpers ==== */

static char *expand(const proto_sheet *s, const char *tmpl,
                    const proto_expand_ctx *x, core_err *err) {
  char *r = proto_expand(s, tmpl, x, err);
  if (!r && err->status == CORE_OK)
    core_fail(err, CORE_ENOMEM, "out of memory");
  return r;
}

/* The command of step k (or of the workload's cmd when k < 0) wrapped in
 * the arm's run template. */
static char *full_command(const proto_sheet *s, const proto_workload *w,
                          const proto_arm *a, const char *step,
                          proto_expand_ctx x, core_err *err) {
  x.cmd = NULL;
  char *inner = expand(s, step, &x, err);
  if (!inner)
    return NULL;
  x.cmd = inner;
  char *full = expand(s, a->run ? a->run : "{cmd}", &x, err);
  core_free(inner);
  (void)w;
  return full;
}

/* A failed run's folder is kept as evidence, but a frozen batch holds
 * regular files only: symlinks, sockets and fifos are removed (their
 * names go to the run's stderr file). */
static void prune_special(const char *path, int errfd) {
  DIR *d = opendir(path);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    char *p = core_path_join(path, e->d_name);
    struct stat sb;
    if (p && lstat(p, &sb) == 0) {
      if (S_ISDIR(sb.st_mode)) {
        chmod(p, sb.st_mode | 0700);
        prune_special(p, errfd);
        /* A kept git repository (the replay's) would make the data folder
         * a nest of repositories that git cannot commit: keep its files
         * under another name. Seeing the renamed entry again in this
         * readdir is harmless: it is pruned twice. */
        if (strcmp(e->d_name, ".git") == 0) {
          char *kept = core_path_join(path, "dot-git");
          if (kept && rename(p, kept) == 0 && errfd >= 0)
            dprintf(errfd,
                    "prereg: renamed %s to dot-git in the kept "
                    "working folder\n",
                    p);
          core_free(kept);
        }
      } else if (!S_ISREG(sb.st_mode)) {
        unlink(p);
        if (errfd >= 0)
          dprintf(errfd,
                  "prereg: removed non-regular file %s from the "
                  "kept working folder\n",
                  p);
      }
    }
    core_free(p);
  }
  closedir(d);
}

static int open_out(const char *path) {
  return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

/* Runs a helper command (preflight, digest, versions) capturing stdout.
 * OUT: *code (-1 when it did not exit normally); out may be NULL. */
static void trim(char *s) {
  size_t l = strlen(s);
  while (l > 0 && (s[l - 1] == '\n' || s[l - 1] == ' ' || s[l - 1] == '\t' ||
                   s[l - 1] == '\r'))
    s[--l] = 0;
  size_t k = strspn(s, " \t\r\n");
  memmove(s, s + k, strlen(s + k) + 1);
}

/* Runs a preflight or version command; *code is its exit code (-1 when it
 * did not exit). why, when not NULL, gets the failure in words followed
 * by what the command wrote to stderr, on one line. */
static core_status run_capture(const char *cmd, core_buf *out, int *code,
                               char *why, size_t whycap, core_err *err) {
  core_buf errout;
  core_buf_init(&errout);
  run_sink so = {.fd = -1, .buf = out, .limit = 64 * 1024};
  run_sink se = {.fd = -1, .buf = &errout, .limit = 4096};
  run_req q = {0};
  run_res r;
  q.cmd = cmd;
  q.timeout_s = 120;
  q.grace_s = GRACE_S;
  q.out = out ? &so : NULL;
  q.err = why ? &se : NULL;
  core_status st = run_exec(&q, &r, err);
  if (st != CORE_OK) {
    core_buf_free(&errout);
    return st;
  }
  *code = r.exited ? r.exit_code : -1;
  if (why) {
    int n;
    if (r.why[0])
      n = snprintf(why, whycap, "%s", r.why);
    else if (r.timed_out)
      n = snprintf(why, whycap, "timed out after 120 s");
    else if (!r.exited)
      n = snprintf(why, whycap, "killed by signal %d", r.signo);
    else
      n = snprintf(why, whycap, "exit code %d", r.exit_code);
    /* What the command said about it is often the real reason ("Cannot
     * connect to the Docker daemon"), usually at its end: the last 300
     * bytes, not starting inside a UTF-8 character. */
    if (errout.data && *code != 0 && n > 0 && (size_t)n < whycap) {
      for (char *p = errout.data; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
          *p = ' ';
      trim(errout.data);
      const char *said = errout.data;
      size_t len = strlen(said);
      if (len > 300) {
        said += len - 300;
        while ((*said & 0xC0) == 0x80)
          said++;
      }
      if (*said)
        snprintf(why + n, whycap - (size_t)n, ", saying: %s%s",
                 said == errout.data ? "" : "...", said);
    }
  }
  core_buf_free(&errout);
  if (r.interrupted)
    return core_fail(err, CORE_EINTERRUPT, "interrupted");
  return CORE_OK;
}

/* }==== */

/* {==== Preflight ==== */

static core_status compute_images(runctx *c, core_err *err) {
  const proto_sheet *s = c->s;
  c->img = core_calloc(s->n_arms, sizeof *c->img);
  if (!c->img)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t a = 0; a < s->n_arms; a++) {
    const proto_arm *arm = &s->arms[a];
    const proto_image *im =
        (arm->image.tree || arm->image.digest_cmd) ? &arm->image : &s->image;
    const char *resident =
        arm->image.resident ? arm->image.resident : s->image.resident;
    arm_image *ai = &c->img[a];
    proto_expand_ctx x = {.arm = arm->name};
    /* Two arms with the same image share the digest: computed once. */
    if (resident && !(ai->resident = expand(s, resident, &x, err)))
      return err->status;
    if (im->tree) {
      if (!(ai->source = expand(s, im->tree, &x, err)))
        return err->status;
      ai->kind = core_strdup("tree");
      for (size_t b = 0; b < a; b++)
        if (c->img[b].source && !strcmp(c->img[b].kind, "tree") &&
            !strcmp(c->img[b].source, ai->source))
          ai->digest = core_strdup(c->img[b].digest);
      if (!ai->digest) {
        char hex[CORE_SHA256_HEX];
        core_status st = core_sha256_tree(ai->source, hex, err);
        if (st != CORE_OK) {
          core_err_prefix(err, "arm %s: image tree %s: ", arm->name,
                          ai->source);
          return err->status = CORE_ERUN;
        }
        ai->digest = core_strdup(hex);
      }
    } else if (im->digest_cmd) {
      if (!(ai->source = expand(s, im->digest_cmd, &x, err)))
        return err->status;
      ai->kind = core_strdup("digest");
      core_buf out;
      core_buf_init(&out);
      int code;
      char why[1024];
      core_status st =
          run_capture(ai->source, &out, &code, why, sizeof why, err);
      if (st != CORE_OK) {
        core_buf_free(&out);
        return st;
      }
      char *d = core_buf_steal(&out);
      if (d)
        trim(d);
      if (code != 0 || !d || !d[0]) {
        core_free(d);
        return core_fail(err, CORE_ERUN,
                         "arm %s: the image digest command '%s' failed "
                         "(%s); no run was started",
                         arm->name, ai->source,
                         code != 0 ? why : "it printed nothing");
      }
      ai->digest = d;
    } else {
      ai->kind = core_strdup("none");
      ai->digest = core_strdup("");
    }
    if (!ai->kind || !ai->digest)
      return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  return CORE_OK;
}

/* Every arm's `requires`, once; the first failure refuses the run. A
 * missing runtime is never replaced by another arm. */
static core_status preflight_requires(runctx *c, core_err *err) {
  for (size_t a = 0; a < c->s->n_arms; a++) {
    const proto_arm *arm = &c->s->arms[a];
    for (size_t k = 0; k < arm->n_requires; k++) {
      proto_expand_ctx x = {.arm = arm->name};
      char *cmd = expand(c->s, arm->requires[k], &x, err);
      if (!cmd)
        return err->status;
      int code;
      char why[1024];
      core_status st = run_capture(cmd, NULL, &code, why, sizeof why, err);
      if (st == CORE_OK && code != 0)
        st = core_fail(err, CORE_ERUN,
                       "preflight: arm %s requires '%s', which failed (%s); "
                       "nothing was run. Install what it checks, or amend "
                       "the sheet",
                       arm->name, cmd, why);
      core_free(cmd);
      if (st != CORE_OK)
        return st;
    }
  }
  return CORE_OK;
}

/* Every arm's `versions` commands, run once; a failing one is recorded
 * with its exit code, never fatal. */
static core_status collect_versions(runctx *c, core_err *err) {
  c->vers = core_calloc(c->s->n_arms ? c->s->n_arms : 1, sizeof *c->vers);
  if (!c->vers)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t a = 0; a < c->s->n_arms; a++) {
    const proto_arm *arm = &c->s->arms[a];
    data_version_probe *v =
        core_calloc(arm->n_versions ? arm->n_versions : 1, sizeof *v);
    c->vers[a].arm = arm->name;
    c->vers[a].probes = v;
    if (!v)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    for (size_t k = 0; k < arm->n_versions; k++) {
      proto_expand_ctx x = {.arm = arm->name};
      core_err e2 = {0};
      char *cmd = expand(c->s, arm->versions[k], &x, &e2);
      core_buf out;
      core_buf_init(&out);
      int code = -1;
      if (cmd)
        run_capture(cmd, &out, &code, NULL, 0, &e2);
      if (out.data)
        trim(out.data);
      v[k].command = cmd ? cmd : core_strdup(arm->versions[k]);
      v[k].exit_code = code;
      v[k].output = out.data ? core_buf_steal(&out) : core_strdup("");
      core_buf_free(&out);
      c->vers[a].n_probes = k + 1;
      if (!v[k].command || !v[k].output)
        return core_fail(err, CORE_ENOMEM, "out of memory");
    }
  }
  return CORE_OK;
}

static void free_versions(runctx *c) {
  for (size_t a = 0; c->vers && a < c->s->n_arms; a++) {
    data_version_probe *v = (data_version_probe *)c->vers[a].probes;
    for (size_t k = 0; k < c->vers[a].n_probes; k++) {
      core_free((char *)v[k].command);
      core_free((char *)v[k].output);
    }
    core_free(v);
  }
  core_free(c->vers);
  c->vers = NULL;
}

/* }==== */

/* {==== One run ==== */

typedef struct run_out {
  char exit_codes[512];
  char reason[1024];
  int valid;
  int interrupted;
  double wall, user, sys;
  long maxrss;
  int pss_ok;
  double pss_mib;
  int cg_ok;
  double cg_mem, cg_cpu;
  run_metric *m;
  size_t n_m;
  char started[32];
  char cache_state[128];
} run_out;

static void add_reason(run_out *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void add_reason(run_out *o, const char *fmt, ...) {
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

static int only_pss(const proto_workload *w) {
  for (size_t i = 0; i < w->n_metrics; i++)
    if (strcmp(w->metrics[i], "pss_mib") != 0)
      return 0;
  return w->n_metrics > 0;
}

/* An exit status as recorded: "0", "sig9", "-" for a step not run. */
static void code_str(const run_res *r, char *out, size_t cap) {
  if (r->exited)
    snprintf(out, cap, "%d", r->exit_code);
  else
    snprintf(out, cap, "sig%d", r->signo);
}

/* Runs a helper phase (prepare/cleanup); its failure makes the row
 * invalid. Returns an error only when the engine itself failed. */
static core_status phase(runctx *c, const char *name, const char *tmpl,
                         proto_expand_ctx x, const char *cwd, run_sink *so,
                         run_sink *se, const char *const *env, double timeout,
                         run_out *o, core_err *err) {
  if (!tmpl)
    return CORE_OK;
  x.cmd = NULL;
  core_err e2 = {0};
  char *cmd = expand(c->s, tmpl, &x, &e2);
  if (!cmd) {
    add_reason(o, "%s: %s", name, e2.msg);
    return e2.status == CORE_ENOMEM ? core_fail(err, CORE_ENOMEM, "%s", e2.msg)
                                    : CORE_OK;
  }
  run_req q = {.cmd = cmd,
               .cwd = cwd,
               .env = env,
               .timeout_s = timeout,
               .grace_s = GRACE_S,
               .out = so,
               .err = se};
  run_res r;
  core_status st = run_exec(&q, &r, err);
  core_free(cmd);
  if (st != CORE_OK)
    return st;
  if (r.interrupted)
    o->interrupted = 1;
  else if (r.timed_out)
    add_reason(o, "%s: timeout after %g s", name, timeout);
  else if (!r.spawned)
    add_reason(o, "%s: %s", name, r.why);
  else if (!r.exited)
    add_reason(o, "%s: killed by signal %d", name, r.signo);
  else if (r.exit_code != 0)
    add_reason(o, "%s: exit code %d, expected 0", name, r.exit_code);
  return CORE_OK;
}

/* The error that stops a run when one of its kept output files cannot be
 * created or written. */
static core_status output_failed(const char *path, int e, core_err *err) {
  return core_fail(err, CORE_EIO,
                   "%s: %s; the rows already written are kept; free space "
                   "and run prereg run --resume",
                   path, strerror(e));
}

/* Executes run pr (a recorded run when pr->round > 0, else a warm-up).
 * Fills o; CORE_OK unless the engine itself failed or a cold run could
 * not drop the caches (the batch then stops). */
static core_status execute(runctx *c, const plan_run *pr, const char *run_id,
                           run_out *o, core_err *err) {
  const proto_sheet *s = c->s;
  const proto_workload *w = &s->workloads[pr->w];
  const proto_arm *arm = &s->arms[pr->a];
  int warm = pr->round == 0;
  core_status st = CORE_OK;
  char *p_out = NULL, *p_err = NULL, *p_met = NULL, *p_procs = NULL;
  char *work = NULL, *cgdir = NULL, *env_met = NULL;
  int fo = -1, fe = -1;
  memset(o, 0, sizeof *o);
  o->valid = 1;
  o->maxrss = -1;

  p_out = core_asprintf("%s/%s.stdout", c->bdir, run_id);
  p_err = core_asprintf("%s/%s.stderr", c->bdir, run_id);
  p_met = core_asprintf("%s/%s.metrics", c->bdir, run_id);
  p_procs = core_asprintf("%s/%s.procs.tsv", c->bdir, run_id);
  /* Every run (cmd or steps, prepare and cleanup too) works in a fresh
   * folder of its own, so that no run sees another's files; sheets name
   * their inputs by absolute paths (vars), and PREREG_ORIGIN says where
   * prereg was started. */
  work = core_asprintf("%s/%s.work", c->bdir, run_id);
  env_met = core_asprintf("PREREG_METRICS=%s", p_met ? p_met : "");
  char env_run[160], env_arm[300], env_wl[300];
  snprintf(env_run, sizeof env_run, "PREREG_RUN_ID=%s", run_id);
  snprintf(env_arm, sizeof env_arm, "PREREG_ARM=%s", arm->name);
  snprintf(env_wl, sizeof env_wl, "PREREG_WORKLOAD=%s", w->name);
  char env_org[4200] = "PREREG_ORIGIN=";
  if (!getcwd(env_org + 14, sizeof env_org - 14))
    env_org[14] = 0;
  const char *env[] = {env_met, env_run, env_arm, env_wl, env_org, NULL};
  if (!p_out || !p_err || !p_met || !p_procs || !env_met || !work) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto cleanup;
  }
  if (!warm) {
    const char *bad = (fo = open_out(p_out)) < 0   ? p_out
                      : (fe = open_out(p_err)) < 0 ? p_err
                                                   : NULL;
    if (bad) {
      st = output_failed(bad, errno, err);
      o->interrupted = 1; /* not recorded: its files go (see cleanup) */
      goto cleanup;
    }
  }
  run_sink so = {.fd = fo, .limit = OUTPUT_LIMIT};
  run_sink se = {.fd = fe, .limit = OUTPUT_LIMIT};
  if (mkdir(work, 0755) != 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot create the working folder: %s",
                   work, strerror(errno));
    goto cleanup;
  }
  proto_expand_ctx x = {.arm = arm->name,
                        .workload = w->name,
                        .run_id = run_id,
                        .round = pr->round};
  const char *cwd = work;

  /* prepare: not timed, and outside the cold-cache window. */
  if ((st = phase(c, "prepare", w->prepare, x, cwd, &so, &se, env,
                  w->timeout_s, o, err)) != CORE_OK ||
      o->interrupted)
    goto cleanup;
  if (so.error || se.error)
    goto output_lost;

  if (w->cache == PROTO_CACHE_COLD && (st = run_drop_caches(err)) != CORE_OK) {
    core_err_prefix(err, "%s %s round %ld: ", w->name, arm->name, pr->round);
    goto cleanup;
  }
  long cached = run_cached_mib();
  snprintf(o->cache_state, sizeof o->cache_state, "cached_mib=%ld", cached);
  if (c->img[pr->a].resident) {
    double frac = 0;
    core_err e2 = {0};
    size_t l = strlen(o->cache_state);
    if (run_resident_fraction(c->img[pr->a].resident, &frac, &e2) == CORE_OK)
      snprintf(o->cache_state + l, sizeof o->cache_state - l, ";resident=%.3f",
               frac);
    else
      snprintf(o->cache_state + l, sizeof o->cache_state - l,
               ";resident=unreadable");
  }

  if (w->cgroup && c->cgparent) {
    cgdir =
        core_asprintf("%s/prereg-%d-%s", c->cgparent, (int)getpid(), run_id);
    if (!cgdir || mkdir(cgdir, 0755) != 0) {
      st = core_fail(err, CORE_ERUN, "cannot create the run's cgroup %s: %s",
                     cgdir ? cgdir : "", strerror(errno));
      goto cleanup;
    }
  }

  /* The processes pss_mib counts. */
  char *sel_cg = NULL;
  char **sel_cl = NULL;
  run_pss pss = {.after_s = -1};
  int want_pss = proto_workload_has_metric(w, "pss_mib");
  if (want_pss) {
    pss.after_s = w->sample_after_s;
    pss.descendants = w->procs.descendants;
    if (w->procs.cgroup)
      sel_cg = expand(s, w->procs.cgroup, &x, err);
    sel_cl = core_calloc(w->procs.n_cmdline + 1, sizeof *sel_cl);
    for (size_t i = 0; sel_cl && i < w->procs.n_cmdline; i++)
      sel_cl[i] = expand(s, w->procs.cmdline[i], &x, err);
    pss.cgroup = sel_cg;
    pss.cmdline = (const char *const *)sel_cl;
    pss.n_cmdline = w->procs.n_cmdline;
    pss.list_path = warm ? NULL : p_procs;
    pss.stop_after = only_pss(w);
  }

  size_t nsteps = w->n_steps > 0 ? w->n_steps : 1;
  core_utc_now(o->started);
  double elapsed = 0;
  int sampled_done = 0;
  for (size_t k = 0; k < nsteps && st == CORE_OK; k++) {
    char step_name[32];
    snprintf(step_name, sizeof step_name, "step %zu", k + 1);
    const char *where = w->n_steps > 0 ? step_name : NULL;
    core_err e2 = {0};
    char *cmd =
        full_command(s, w, arm, w->n_steps ? w->steps[k] : w->cmd, x, &e2);
    if (!cmd) {
      add_reason(o, "%s%s%s", where ? where : "", where ? ": " : "", e2.msg);
      break;
    }
    if (want_pss && !sampled_done) {
      pss.after_s = w->sample_after_s - elapsed;
      if (pss.after_s < 0)
        pss.after_s = 0;
    }
    run_req q = {.cmd = cmd,
                 .cwd = cwd,
                 .env = env,
                 .timeout_s = w->timeout_s,
                 .grace_s = GRACE_S,
                 .out = &so,
                 .err = &se,
                 .pss = want_pss && !sampled_done ? &pss : NULL,
                 .cgroup_dir = cgdir};
    run_res r;
    st = run_exec(&q, &r, err);
    core_free(cmd);
    if (st != CORE_OK)
      break;
    if (r.interrupted) {
      o->interrupted = 1;
      break;
    }
    if (so.error || se.error)
      break; /* the run stops here: see after the loop */
    elapsed += r.wall_s;
    o->wall += r.wall_s;
    o->user += r.user_s;
    o->sys += r.sys_s;
    if (r.maxrss_kib > o->maxrss)
      o->maxrss = r.maxrss_kib;
    if (r.pss_sampled && !sampled_done) {
      sampled_done = 1;
      o->pss_ok = 1;
      o->pss_mib = (double)r.pss_kib / 1024.0;
      if (r.pss_unreadable && !warm)
        dprintf(fe,
                "prereg: %zu selected process(es) could not be read "
                "at the PSS sample; see %s\n",
                r.pss_unreadable, p_procs);
    }
    char code[32];
    code_str(&r, code, sizeof code);
    size_t l = strlen(o->exit_codes);
    snprintf(o->exit_codes + l, sizeof o->exit_codes - l, "%s%s", k ? ";" : "",
             r.stopped ? "stopped" : code);
    char pre[40] = "";
    if (where)
      snprintf(pre, sizeof pre, "%s: ", where);
    if (r.timed_out) {
      add_reason(o, "timeout after %g s%s%s", w->timeout_s,
                 where ? " in " : "", where ? where : "");
      for (size_t j = k + 1; j < nsteps; j++)
        strncat(o->exit_codes, ";-",
                sizeof o->exit_codes - strlen(o->exit_codes) - 1);
      break;
    }
    if (r.stopped)
      continue; /* ended by us after the PSS sample: as planned */
    if (!r.spawned) {
      add_reason(o, "%s%s", pre, r.why);
    } else if (!r.exited) {
      add_reason(o, "%skilled by signal %d (%s)", pre, r.signo,
                 strsignal(r.signo));
    } else if (w->expect == PROTO_EXPECT_CODE &&
               r.exit_code != w->expect_code) {
      add_reason(o, "%sexit code %d, expected %d", pre, r.exit_code,
                 w->expect_code);
    }
    if (want_pss && !r.pss_sampled && !sampled_done && r.why[0] &&
        k + 1 == nsteps)
      add_reason(o, "pss_mib: %s", r.why);
  }
  for (size_t i = 0; sel_cl && i < w->procs.n_cmdline; i++)
    core_free(sel_cl[i]);
  core_free(sel_cl);
  core_free(sel_cg);
  if (st == CORE_OK && !o->interrupted && (so.error || se.error))
    goto output_lost;
  if (st != CORE_OK || o->interrupted)
    goto cleanup;
  if (cgdir) {
    core_err e2 = {0};
    if (run_cgroup_read(cgdir, &o->cg_mem, &o->cg_cpu, &e2) == CORE_OK)
      o->cg_ok = 1;
    else
      add_reason(o, "cgroup: %s", e2.msg);
  }

  if ((st = phase(c, "cleanup", w->cleanup, x, cwd, &so, &se, env,
                  w->timeout_s, o, err)) != CORE_OK ||
      o->interrupted)
    goto cleanup;
  if (so.error || se.error)
    goto output_lost;

  if (so.truncated)
    dprintf(fe, "\nprereg: stdout truncated at %zu bytes\n", so.limit);
  if (se.truncated && fe >= 0)
    dprintf(fe, "\nprereg: stderr truncated at %zu bytes\n", se.limit);

  /* Self-reported metrics. */
  core_err me = {0};
  if (run_parse_metrics(p_met, &o->m, &o->n_m, &me) != CORE_OK)
    add_reason(o, "%s: %s", p_met, me.msg);
  if (warm)
    unlink(p_met);
  goto cleanup;

output_lost:
  /* A kept output that could not be written (a full disk) stops the whole
   * run: recording this run would hide its missing output, and the next
   * ones would fail alike. It is dropped like an interrupted one (its
   * files removed, which also gives back some room), and --resume runs it
   * again. */
  st = output_failed(so.error ? p_out : p_err, so.error ? so.error : se.error,
                     err);
  o->interrupted = 1;

cleanup:
  if (work) {
    if (o->valid || warm || o->interrupted)
      core_remove_tree(work, NULL);
    else
      prune_special(work, fe);
  }
  if (cgdir) {
    run_kill_all_children();
    rmdir(cgdir);
  }
  if (warm || o->interrupted) {
    unlink(p_out ? p_out : "");
    unlink(p_err ? p_err : "");
    unlink(p_met ? p_met : "");
    unlink(p_procs ? p_procs : "");
  }
  if (fo >= 0)
    close(fo);
  if (fe >= 0)
    close(fe);
  /* An empty output file says nothing its absence does not. */
  struct stat sb;
  if (p_out && stat(p_out, &sb) == 0 && sb.st_size == 0)
    unlink(p_out);
  if (p_err && stat(p_err, &sb) == 0 && sb.st_size == 0)
    unlink(p_err);
  core_free(p_out);
  core_free(p_err);
  core_free(p_met);
  core_free(p_procs);
  core_free(work);
  core_free(cgdir);
  core_free(env_met);
  return st;
}

/* }==== */

/* {==== Rows ==== */

static int metric_value(const run_out *o, const char *m, double *v) {
  if (!strcmp(m, "wall_s"))
    return *v = o->wall, 1;
  if (!strcmp(m, "user_s"))
    return *v = o->user, 1;
  if (!strcmp(m, "sys_s"))
    return *v = o->sys, 1;
  if (!strcmp(m, "maxrss_kib"))
    return o->maxrss >= 0 ? (*v = (double)o->maxrss, 1) : 0;
  if (!strcmp(m, "pss_mib"))
    return o->pss_ok ? (*v = o->pss_mib, 1) : 0;
  if (!strcmp(m, "cg_mem_peak_mib"))
    return o->cg_ok ? (*v = o->cg_mem, 1) : 0;
  if (!strcmp(m, "cg_cpu_s"))
    return o->cg_ok ? (*v = o->cg_cpu, 1) : 0;
  for (size_t i = 0; i < o->n_m; i++)
    if (!strcmp(o->m[i].name, m))
      return *v = o->m[i].value, 1;
  return 0;
}

/* The rows of one run (one per declared metric), appended to rows. The
 * strings point into c, o and the sheet: valid until the rows are
 * written. */
static int make_rows(runctx *c, const plan_run *pr, const char *run_id,
                     run_out *o, data_row **rows, size_t *n, size_t *cap) {
  const proto_workload *w = &c->s->workloads[pr->w];
  for (size_t i = 0; i < w->n_metrics; i++) {
    double v;
    if (!metric_value(o, w->metrics[i], &v))
      add_reason(o, "metric %s not reported", w->metrics[i]);
  }
  for (size_t i = 0; i < w->n_metrics; i++) {
    data_row *nv = core_grow(*rows, cap, *n, sizeof *nv, 16);
    if (!nv)
      return 0;
    *rows = nv;
    data_row *r = &(*rows)[(*n)++];
    memset(r, 0, sizeof *r);
    r->sheet_version = c->version;
    r->sheet_sha256 = c->s->sha256;
    r->batch = (char *)c->bid;
    r->source = (char *)"run";
    r->workload = w->name;
    r->arm = c->s->arms[pr->a].name;
    r->round = pr->round;
    r->seq = c->seq;
    r->run_id = core_strdup(run_id);
    r->started_at = core_strdup(o->started);
    r->host = (char *)run_host_name();
    r->image_digest = c->img[pr->a].digest;
    r->cache_policy = (char *)(w->cache == PROTO_CACHE_COLD ? "cold" : "warm");
    r->cache_state = core_strdup(o->cache_state);
    r->exit_code = core_strdup(o->exit_codes);
    r->valid = o->valid;
    r->reason = core_strdup(o->reason);
    r->metric = w->metrics[i];
    r->has_value = metric_value(o, w->metrics[i], &r->value);
    if (!r->has_value)
      r->value = NAN;
    r->quick = c->opts->quick;
    if (!r->run_id || !r->started_at || !r->cache_state || !r->exit_code ||
        !r->reason)
      return 0;
  }
  return 1;
}

/* Frees what make_rows allocated. */
static void free_rows(data_row *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    core_free(rows[i].run_id);
    core_free(rows[i].started_at);
    core_free(rows[i].cache_state);
    core_free(rows[i].exit_code);
    core_free(rows[i].reason);
  }
}

/* Marks rows invalid (with reason) and fixes their reason string. */
static int invalidate(data_row *r, const char *why) {
  char *nr = r->reason && r->reason[0]
                 ? core_asprintf("%s; %s", r->reason, why)
                 : core_strdup(why);
  if (!nr)
    return 0;
  core_free(r->reason);
  r->reason = nr;
  r->valid = 0;
  return 1;
}

/* Reference parity of one finished round: every arm's exit codes equal
 * the reference arm's, step by step. */
static core_status flush_round(runctx *c, const proto_workload *w, long round,
                               core_err *err) {
  round_buf *b = &c->rb[round];
  size_t ref = c->s->reference;
  const char *refc = b->codes[ref];
  /* On --resume the reference run may be in an earlier batch. */
  for (size_t i = 0; !refc && c->old && i < c->old->n; i++) {
    const data_row *r = &c->old->rows[i];
    if (row_counts(c->s, r) && r->round == round &&
        !strcmp(r->workload, w->name) && !strcmp(r->arm, c->s->arms[ref].name))
      refc = r->exit_code;
  }
  for (size_t i = 0; i < b->n; i++) {
    data_row *r = &b->rows[i];
    if (!strcmp(r->arm, c->s->arms[ref].name))
      continue;
    char why[300] = "";
    if (!refc) {
      snprintf(why, sizeof why, "no reference arm run in round %ld", round);
    } else if (strcmp(refc, r->exit_code) != 0) {
      /* Name the first step that differs. */
      const char *p = r->exit_code, *q = refc;
      size_t step = 1;
      for (;;) {
        size_t lp = strcspn(p, ";"), lq = strcspn(q, ";");
        if (lp != lq || strncmp(p, q, lp) != 0) {
          if (strchr(r->exit_code, ';') || strchr(refc, ';'))
            snprintf(why, sizeof why,
                     "step %zu: exit %.*s, reference arm "
                     "exit %.*s",
                     step, (int)lp, p, (int)lq, q);
          else
            snprintf(why, sizeof why, "exit %.*s, reference arm exit %.*s",
                     (int)lp, p, (int)lq, q);
          break;
        }
        if (!p[lp] || !q[lq])
          break;
        p += lp + 1;
        q += lq + 1;
        step++;
      }
    }
    if (why[0] && !invalidate(r, why))
      return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  /* Counted when written. */
  for (size_t i = 0; i < b->n; i++)
    if (i == 0 || strcmp(b->rows[i].run_id, b->rows[i - 1].run_id) != 0)
      b->rows[i].valid ? c->valid++ : c->invalid++;
  core_status st = data_batch_append(c->batch, b->rows, b->n, err);
  free_rows(b->rows, b->n);
  b->n = 0;
  return st;
}

static void free_round_bufs(runctx *c) {
  for (long r = 0; r < c->rb_n; r++) {
    free_rows(c->rb[r].rows, c->rb[r].n);
    core_free(c->rb[r].rows);
    for (size_t a = 0; c->rb[r].codes && a < c->s->n_arms; a++)
      core_free(c->rb[r].codes[a]);
    core_free(c->rb[r].codes);
  }
  core_free(c->rb);
  c->rb = NULL;
  c->rb_n = 0;
}

/* }==== */

/* {==== Facts ==== */

/* Freezes the batch with its facts (see data_run_facts); the batch is
 * gone afterwards, whatever happened. */
static core_status freeze(runctx *c, const char *started, size_t planned,
                          core_err *err) {
  const proto_sheet *s = c->s;
  data_arm_image *im = core_calloc(s->n_arms ? s->n_arms : 1, sizeof *im);
  data_run_facts f = {.protocol = s->id,
                      .sheet_version = c->version,
                      .sheet_sha256 = s->sha256,
                      .started_at = started,
                      .quick = c->opts->quick,
                      .resume = c->opts->resume,
                      .only = c->opts->only,
                      .interrupted = interrupted != 0,
                      .runs_planned = planned,
                      .runs_recorded = c->valid + c->invalid,
                      .runs_valid = c->valid,
                      .runs_invalid = c->invalid,
                      .order = RUN_ORDER_TEXT,
                      .images = im,
                      .n_images = s->n_arms,
                      .versions = c->vers,
                      .n_versions = s->n_arms,
                      .warmup_failures = (const char *const *)c->warn,
                      .n_warmup_failures = c->n_warn};
  char now[32];
  core_utc_now(now);
  f.ended_at = now;
  run_host_facts(&f.host);
  memcpy(f.host.load_avg_start, c->load_start, sizeof c->load_start);
  f.host.has_load_start = c->has_load_start;
  f.host.has_load_end = run_load_avg(f.host.load_avg_end);
  for (size_t a = 0; im && a < s->n_arms; a++)
    im[a] = (data_arm_image){s->arms[a].name, c->img[a].kind, c->img[a].source,
                             c->img[a].digest};
  data_batch *b = c->batch;
  c->batch = NULL;
  if (!im) {
    data_batch_abandon(b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  core_status st = data_batch_freeze_run(b, &f, err);
  core_free(im);
  return st;
}

/* }==== */

/* {==== Dry run ==== */

static core_status dry_run(const proto_sheet *s, const plan *p, FILE *out,
                           int quick, core_err *err) {
  fprintf(out, "plan for %s (sheet sha256 %.12s), %s\n", s->id, s->sha256,
          quick ? "quick (demo: at most 3 rounds, 1 warm-up)" : "full");
  size_t cur = (size_t)-1, runs = 0;
  long seq = 0;
  for (size_t i = 0; i < p->n; i++) {
    const plan_run *pr = &p->v[i];
    const proto_workload *w = &s->workloads[pr->w];
    const proto_arm *a = &s->arms[pr->a];
    if (pr->w != cur) {
      cur = pr->w;
      fprintf(out,
              "workload %s: %ld rounds, %ld warm-up(s) per arm, %s, cache "
              "%s, timeout %g s per step\n",
              w->name, eff_runs(w, quick), eff_warmup(w, quick),
              w->order == PROTO_ORDER_BLOCKED ? "blocked" : "interleaved",
              w->cache == PROTO_CACHE_COLD ? "cold" : "warm", w->timeout_s);
    }
    char run_id[64];
    if (pr->round == 0)
      snprintf(run_id, sizeof run_id, "bNEXT-w%03ld", pr->warm);
    else
      snprintf(run_id, sizeof run_id, "bNEXT-%04ld", ++seq);
    if (pr->done) {
      fprintf(out, "  %s %s round %ld: already collected\n", run_id, a->name,
              pr->round);
      continue;
    }
    runs += pr->round > 0;
    if (pr->round == 0)
      fprintf(out, "  warm-up %ld %s:\n", pr->warm, a->name);
    else
      fprintf(out, "  %s round %ld %s:\n", run_id, pr->round, a->name);
    proto_expand_ctx x = {.arm = a->name,
                          .workload = w->name,
                          .run_id = run_id,
                          .round = pr->round};
    if (w->prepare) {
      char *e = expand(s, w->prepare, &x, err);
      if (!e)
        return err->status;
      fprintf(out, "    prepare: %s\n", e);
      core_free(e);
    }
    size_t ns = w->n_steps ? w->n_steps : 1;
    for (size_t k = 0; k < ns; k++) {
      char *e =
          full_command(s, w, a, w->n_steps ? w->steps[k] : w->cmd, x, err);
      if (!e)
        return err->status;
      if (w->n_steps)
        fprintf(out, "    step %zu: %s\n", k + 1, e);
      else
        fprintf(out, "    run: %s\n", e);
      core_free(e);
    }
    if (w->cleanup) {
      char *e = expand(s, w->cleanup, &x, err);
      if (!e)
        return err->status;
      fprintf(out, "    cleanup: %s\n", e);
      core_free(e);
    }
  }
  fprintf(out, "%zu runs to do; nothing was run or written (--dry-run)\n",
          runs);
  return CORE_OK;
}

/* }==== */

/* {==== The command ==== */

static void install_signals(struct sigaction *old_int,
                            struct sigaction *old_term) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: a blocking poll must wake up */
  sigaction(SIGINT, &sa, old_int);
  sigaction(SIGTERM, &sa, old_term);
}

core_status cli_cmd_run(const cli_opts *opts, FILE *out, core_err *err) {
  core_status st = CORE_OK;
  proto_sheet *s = NULL;
  data_experiment *exp = NULL;
  data_rowset rows = {0};
  plan p = {0};
  runctx c;
  core_buf notes;
  char started[32], bid[64], bdir[PATH_MAX];
  struct sigaction old_int, old_term;
  int signals_set = 0;
  memset(&c, 0, sizeof c);
  core_buf_init(&notes);

  if (opts->n_args != 1)
    return core_fail(err, CORE_EUSAGE,
                     "run needs exactly one SHEET; see prereg run --help");
  /* Fork the spawn helper while we are small (see exec.c). */
  run_helper_start();
  run_become_subreaper();
  interrupted = 0;

  if (!(s = proto_sheet_load(opts->args[0], err))) {
    st = err->status != CORE_OK ? err->status : CORE_EPROTOCOL;
    goto cleanup;
  }
  if (opts->only) {
    long wi = proto_workload_index(s, opts->only);
    if (wi < 0) {
      st = core_fail(err, CORE_EUSAGE,
                     "%s: --only %s: no such workload in the sheet", s->path,
                     opts->only);
      goto cleanup;
    }
    if (!runnable(&s->workloads[wi])) {
      st = core_fail(err, CORE_EUSAGE,
                     "%s: --only %s: that workload has no command (its data "
                     "comes by prereg import)",
                     s->path, opts->only);
      goto cleanup;
    }
  }
  c.opts = opts;
  c.s = s;
  if ((st = build_plan(s, opts->only, opts->quick, &p, err)) != CORE_OK)
    goto cleanup;

  char *edir = core_path_join(opts->data_dir ? opts->data_dir : "data", s->id);
  int registered = edir && core_is_dir(edir);
  core_free(edir);
  if (opts->dry_run && !registered) {
    /* A plan can be looked at before registering; nothing is written. */
    st = dry_run(s, &p, out, opts->quick, err);
    goto cleanup;
  }
  if ((st = data_experiment_open(opts->data_dir ? opts->data_dir : "data", s,
                                 &exp, err)) != CORE_OK)
    goto cleanup;
  if ((st = data_check_lock(exp, s, err)) != CORE_OK) {
    if (opts->dry_run) {
      fprintf(out, "note: %s\n", err->msg);
      memset(err, 0, sizeof *err);
      st = dry_run(s, &p, out, opts->quick, err);
    }
    goto cleanup;
  }
  c.exp = exp;
  c.version = exp->n_versions ? exp->versions[exp->n_versions - 1].number : 0;
  if (opts->resume && !opts->dry_run) {
    if ((st = data_recover(exp, &notes, err)) != CORE_OK)
      goto cleanup;
    if (notes.len)
      fprintf(out, "%s", notes.data);
  }
  if ((st = data_load_rows(exp, &rows, err)) != CORE_OK)
    goto cleanup;
  c.old = &rows;
  mark_done(s, &p, &rows);
  size_t planned = 0, have = 0;
  for (size_t i = 0; i < p.n; i++)
    if (p.v[i].round > 0) {
      planned++;
      have += p.v[i].done;
    }
  if (opts->dry_run) {
    st = dry_run(s, &p, out, opts->quick, err);
    goto cleanup;
  }
  if (have > 0 && !opts->resume) {
    st = core_fail(err, CORE_ERUN,
                   "%s: %zu of the %zu planned runs%s%s are already "
                   "collected; use --resume to run only the missing ones",
                   exp->dir, have, planned, opts->only ? " of " : "",
                   opts->only ? opts->only : "");
    goto cleanup;
  }
  if (have == planned) {
    fprintf(out, "nothing to do: all %zu planned runs are collected\n",
            planned);
    goto cleanup;
  }

  /* Preflight: refuse before any run rather than half-way. */
  int need_cold = 0, need_cg = 0;
  for (size_t i = 0; i < p.n; i++)
    if (!p.v[i].done) {
      need_cold |= s->workloads[p.v[i].w].cache == PROTO_CACHE_COLD;
      need_cg |= s->workloads[p.v[i].w].cgroup;
    }
  if (need_cg && !(c.cgparent = run_cgroup_parent(err))) {
    st = err->status;
    goto cleanup;
  }
  if (need_cold && (st = run_can_drop_caches(err)) != CORE_OK)
    goto cleanup;
  if ((st = preflight_requires(&c, err)) != CORE_OK ||
      (st = compute_images(&c, err)) != CORE_OK)
    goto cleanup;
  if ((st = collect_versions(&c, err)) != CORE_OK)
    goto cleanup;
  core_utc_now(started);
  c.has_load_start = run_load_avg(c.load_start);

  if ((st = data_batch_begin(exp, "run", &c.batch, err)) != CORE_OK)
    goto cleanup;
  /* Copies: the batch frees its strings when frozen. The folder is made
   * absolute because commands run in folders of their own. */
  snprintf(bid, sizeof bid, "%s", data_batch_id(c.batch));
  c.bid = bid;
  if (!realpath(data_batch_dir(c.batch), bdir)) {
    st = core_fail(err, CORE_EIO, "%s: %s", data_batch_dir(c.batch),
                   strerror(errno));
    data_batch_abandon(c.batch);
    c.batch = NULL;
    goto cleanup;
  }
  c.bdir = bdir;
  c.tty = isatty(2);
  c.t_start = core_monotonic();
  for (size_t i = 0; i < p.n; i++)
    c.total += p.v[i].round > 0 && !p.v[i].done;

  if (pipe2(cancel_pipe, O_CLOEXEC | O_NONBLOCK) == 0)
    run_cancel_fd = cancel_pipe[0];
  install_signals(&old_int, &old_term);
  signals_set = 1;

  data_row *rbuf = NULL;
  size_t rn = 0, rcap = 0;
  size_t cur_w = (size_t)-1;
  for (size_t i = 0; i < p.n && st == CORE_OK && !interrupted; i++) {
    plan_run *pr = &p.v[i];
    const proto_workload *w = &s->workloads[pr->w];
    if (pr->done)
      continue;
    int refmode = w->expect == PROTO_EXPECT_REFERENCE;
    if (pr->w != cur_w) {
      free_round_bufs(&c);
      cur_w = pr->w;
      if (refmode) {
        c.rb_n = eff_runs(w, opts->quick) + 1;
        c.rb = core_calloc((size_t)c.rb_n, sizeof *c.rb);
        if (!c.rb) {
          st = core_fail(err, CORE_ENOMEM, "out of memory");
          break;
        }
        for (long r = 0; r < c.rb_n; r++) {
          c.rb[r].codes = core_calloc(s->n_arms, sizeof(char *));
          if (!c.rb[r].codes) {
            st = core_fail(err, CORE_ENOMEM, "out of memory");
            break;
          }
        }
        for (size_t k = 0; k < p.n; k++)
          if (p.v[k].w == pr->w && p.v[k].round > 0 && !p.v[k].done)
            c.rb[p.v[k].round].pending++;
        if (st != CORE_OK)
          break;
      }
    }
    char run_id[64];
    if (pr->round == 0)
      snprintf(run_id, sizeof run_id, "%s-w%03ld", c.bid, ++c.warm_seq);
    else
      snprintf(run_id, sizeof run_id, "%s-%04ld", c.bid, c.seq + 1);
    run_out o;
    double t0 = core_monotonic();
    st = execute(&c, pr, run_id, &o, err);
    if (st != CORE_OK || o.interrupted) {
      core_free(o.m);
      break;
    }
    if (pr->round == 0) {
      if (!o.valid) {
        char msg[1400];
        snprintf(msg, sizeof msg, "%s %s warm-up %ld: %s", w->name,
                 s->arms[pr->a].name, pr->warm, o.reason);
        char **nw = core_grow(c.warn, &c.cap_warn, c.n_warn, sizeof *nw, 8);
        if (nw)
          c.warn = nw;
        if (!nw || !(c.warn[c.n_warn] = core_strdup(msg))) {
          core_free(o.m);
          st = core_fail(err, CORE_ENOMEM, "out of memory");
          break;
        }
        c.n_warn++;
        if (c.tty)
          progress_end(&c);
        fprintf(stderr, "prereg: warning: %s\n", msg);
      }
      core_free(o.m);
      continue;
    }
    c.seq++;
    rn = 0;
    int ok = make_rows(&c, pr, run_id, &o, &rbuf, &rn, &rcap);
    core_free(o.m);
    if (!ok) {
      free_rows(rbuf, rn);
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      break;
    }
    c.done++;
    c.run_time += core_monotonic() - t0;
    if (refmode) {
      round_buf *b = &c.rb[pr->round];
      int fail = 0;
      for (size_t k = 0; k < rn && !fail; k++) {
        data_row *nv = core_grow(b->rows, &b->cap, b->n, sizeof *nv, 16);
        if (!nv) {
          fail = 1;
          break;
        }
        b->rows = nv;
        b->rows[b->n++] = rbuf[k];
      }
      if (fail || !(b->codes[pr->a] = core_strdup(o.exit_codes))) {
        st = core_fail(err, CORE_ENOMEM, "out of memory");
        break;
      }
      progress(&c, pr, o.valid ? NULL : o.reason, o.wall);
      if (--b->pending == 0)
        st = flush_round(&c, w, pr->round, err);
    } else {
      o.valid ? c.valid++ : c.invalid++;
      st = data_batch_append(c.batch, rbuf, rn, err);
      free_rows(rbuf, rn);
      progress(&c, pr, o.valid ? NULL : o.reason, o.wall);
    }
  }
  core_free(rbuf);
  free_round_bufs(&c);
  progress_end(&c);
  if (signals_set) {
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
  }
  run_cancel_fd = -1;

  /* Freeze whatever was collected, also after an interruption or an
   * error: the rows on disk are sound, and --resume continues from
   * them. */
  {
    core_err ferr = {0};
    core_status fst = freeze(&c, started, planned, &ferr);
    if (st == CORE_OK && fst != CORE_OK) {
      *err = ferr;
      st = fst;
    }
  }
  if (st == CORE_OK && interrupted) {
    st = core_fail(err, CORE_EINTERRUPT,
                   "interrupted; %zu runs kept, resume with --resume",
                   c.valid + c.invalid);
  }
  if (st == CORE_OK)
    fprintf(out, "batch %s: %zu runs, %zu valid, %zu invalid%s\n", c.bid,
            c.valid + c.invalid, c.valid, c.invalid,
            opts->quick ? " (quick: a demo, not the registered plan)" : "");

cleanup:
  if (cancel_pipe[0] >= 0) {
    close(cancel_pipe[0]);
    close(cancel_pipe[1]);
    cancel_pipe[0] = cancel_pipe[1] = -1;
  }
  if (c.batch)
    data_batch_abandon(c.batch);
  for (size_t a = 0; c.img && a < s->n_arms; a++) {
    core_free(c.img[a].digest);
    core_free(c.img[a].kind);
    core_free(c.img[a].source);
    core_free(c.img[a].resident);
  }
  core_free(c.img);
  core_free(c.cgparent);
  core_free(p.v);
  core_buf_free(&notes);
  free_versions(&c);
  core_names_free(c.warn, c.n_warn);
  data_rowset_free(&rows);
  data_experiment_free(exp);
  proto_sheet_free(s);
  run_kill_all_children();
  run_helper_stop();
  return st;
}

/* }==== */
