/* cmd_run.c: `prereg run`: the command around the engine (run/run.h): its
 * options, the lock check, SIGINT/SIGTERM, progress on stderr, the plan a
 * dry run shows, and the closing summary of all the data.
 * SPDX-License-Identifier: MIT
 *
 * Order: the sheet and its plan, the lock check, --resume recovery, the
 * runs already collected, then the batch (run_batch: preflight, warm-ups
 * and rounds, each run's rows on disk as it ends, the batch frozen).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_internal.h"
#include "data/data.h"
#include "fleet/fleet.h"
#include "protocols/proto.h"
#include "run/run.h"

/* Progress */

/* Progress goes to stderr while the batch runs, since a run may take
 * hours: on a terminal one line rewritten in place; otherwise (a pipe, a
 * CI log) a line per tenth of the batch's runs and at least one a
 * minute, a ticker thread saying so while a long run goes on. Each run's
 * own line is in the batch's log, which the engine keeps. Recovery notes
 * go with the command's output. */
enum { PROGRESS_FAILURES_SHOWN = 3 }; /* off a terminal, then the log */

typedef struct progress_state {
  FILE *out;
  int tty, open; /* open: the rewritten line is on the screen */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t ticker;
  int ticking, stop;                  /* the ticker runs; it is told to end */
  size_t done, total, invalid, tenth; /* tenth: the last tenth printed */
  double t_event, t_line, elapsed, eta; /* monotonic; the last event's */
  int told_log;                         /* the log's path was printed */
} progress_state;

static void fmt_dur(double s, char *out, size_t cap) {
  long t = (long)(s + 0.5);
  if (t >= 3600)
    snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(out, cap, "%ld:%02ld", t / 60, t % 60);
}

static void progress_end(progress_state *ps) {
  if (ps->tty && ps->open)
    cli_term_raw("\r\033[K");
  ps->open = 0;
}

/* One progress line off a terminal, under ps->mu: the runs done of
 * planned, the time left at the pace so far (less the time since the
 * last run ended, when the ticker speaks). */
static void progress_line(progress_state *ps, double now, const char *log) {
  char el[32], left[32];
  double since = now - ps->t_event, eta = ps->eta - since;
  fmt_dur(ps->elapsed + since, el, sizeof el);
  fmt_dur(eta > 0 ? eta : 0, left, sizeof left);
  fprintf(stderr, "prereg: [%zu/%zu] %zu%%, %zu invalid, elapsed %s, %s left",
          ps->done, ps->total, ps->total ? ps->done * 100 / ps->total : 100,
          ps->invalid, el, left);
  if (log && !ps->told_log)
    fprintf(stderr, " (each run's line: %s)", log);
  ps->told_log |= log != NULL;
  fputs("\n", stderr);
  fflush(stderr);
  ps->t_line = now;
}

/* Off a terminal, a line at least every minute while runs are slow. */
static void *ticker(void *arg) {
  progress_state *ps = arg;
  pthread_mutex_lock(&ps->mu);
  while (!ps->stop) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    pthread_cond_timedwait(&ps->cv, &ps->mu, &ts);
    double now = core_monotonic();
    if (!ps->stop && ps->done > 0 && now - ps->t_line >= 60)
      progress_line(ps, now, NULL);
  }
  pthread_mutex_unlock(&ps->mu);
  return NULL;
}

/* The ticker starts with the batch, SIGINT and SIGTERM blocked in it so
 * that they wake the engine's poll, not the ticker. */
static void ticker_start(progress_state *ps) {
  if (ps->tty)
    return;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  ps->ticking = pthread_create(&ps->ticker, NULL, ticker, ps) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void ticker_stop(progress_state *ps) {
  if (!ps->ticking)
    return;
  pthread_mutex_lock(&ps->mu);
  ps->stop = 1;
  pthread_cond_signal(&ps->cv);
  pthread_mutex_unlock(&ps->mu);
  pthread_join(ps->ticker, NULL);
  ps->ticking = 0;
}

static void run_ended(progress_state *ps, const run_event *ev) {
  char el[32], eta[32];
  const char *h = ev->host ? ev->host : "", *sp = ev->host ? " " : "";
  if (ps->tty) {
    fmt_dur(ev->elapsed_s, el, sizeof el);
    fmt_dur(ev->eta_s, eta, sizeof eta);
    if (ev->failure) {
      cli_term_raw("\r\033[K");
      fprintf(stderr, "%s%s%s %s round %ld: %s\n", h, sp, ev->workload,
              ev->arm, ev->round, ev->failure);
    }
    cli_term_raw("\r\033[K");
    fprintf(stderr, "[%zu/%zu] %s%s%s %s  elapsed %s  ETA %s", ev->done,
            ev->total, h, sp, ev->workload, ev->arm, el, eta);
    ps->open = 1;
    fflush(stderr);
    return;
  }
  pthread_mutex_lock(&ps->mu);
  /* The first invalid runs are told at once, the rest in the log. */
  if (ev->failure && ps->invalid < PROGRESS_FAILURES_SHOWN)
    fprintf(stderr, "prereg: %s%s%s %s round %ld: %s\n", h, sp, ev->workload,
            ev->arm, ev->round, ev->failure);
  else if (ev->failure && ps->invalid == PROGRESS_FAILURES_SHOWN)
    fprintf(stderr, "prereg: more invalid runs: each in %s\n", ev->log);
  double now = core_monotonic();
  size_t tenth = ev->total ? ev->done * 10 / ev->total : 10;
  int first = ps->done == 0;
  ps->done = ev->done;
  ps->total = ev->total;
  ps->invalid += ev->failure != NULL;
  ps->t_event = now;
  ps->elapsed = ev->elapsed_s;
  ps->eta = ev->eta_s;
  if (first || tenth > ps->tenth || now - ps->t_line >= 60) {
    ps->tenth = tenth;
    progress_line(ps, now, ev->log);
  }
  pthread_mutex_unlock(&ps->mu);
}

static void on_progress(void *ctx, const run_event *ev) {
  progress_state *ps = ctx;
  switch (ev->kind) {
  case RUN_EVENT_RUN:
    run_ended(ps, ev);
    break;
  case RUN_EVENT_WARMUP_FAILED:
    progress_end(ps);
    fprintf(stderr, "prereg: warning: %s\n", ev->text);
    break;
  case RUN_EVENT_NOTES:
    fprintf(ps->out, "%s", ev->text);
    break;
  case RUN_EVENT_HOST:
    progress_end(ps);
    fprintf(stderr, "prereg: warning: %s\n", ev->text);
    break;
  case RUN_EVENT_WAIT:
    progress_end(ps);
    fprintf(stderr, "prereg: %s\n", ev->text);
    break;
  }
}

/* What is left to do */

/* The runs of the plan not yet collected, per workload and arm in the
 * sheet's order (across hosts, host by host), with their first rounds:
 * what `run --resume` will do, said alike by a refused run and by a dry
 * run. */
static void describe_todo(const proto_sheet *s, const run_plan *p,
                          core_buf *b) {
  enum { MAX_PAIRS = 12, MAX_ROUNDS = 5 };
  size_t pairs = 0, more = 0;
  /* Across hosts, each host's own: a round is never moved to another. */
  for (size_t h = 0; h < (p->n_hosts ? p->n_hosts : 1); h++)
    for (size_t w = 0; w < s->n_workloads; w++)
      for (size_t a = 0; a < s->n_arms; a++) {
        size_t n = 0;
        for (size_t i = 0; i < p->n; i++) {
          const run_plan_item *it = &p->items[i];
          if (it->workload != w || it->arm != a || it->round == 0 ||
              it->done || (p->n_hosts && it->host != h))
            continue;
          if (n == 0 && pairs == MAX_PAIRS) {
            more++;
            break;
          }
          if (n == 0)
            core_buf_printf(
                b, "  %s%s%s / %s: rounds ", p->n_hosts ? p->hosts[h] : "",
                p->n_hosts ? ": " : "", s->workloads[w].name, s->arms[a].name);
          if (n < MAX_ROUNDS)
            core_buf_printf(b, "%s%ld", n ? ", " : "", it->round);
          else if (n == MAX_ROUNDS)
            core_buf_puts(b, ", ...");
          n++;
        }
        if (n > 0 && pairs < MAX_PAIRS) {
          core_buf_printf(b, " (%zu run%s)\n", n, n == 1 ? "" : "s");
          pairs++;
        }
      }
  if (more)
    core_buf_printf(b, "  and %zu more workload/arm pair%s\n", more,
                    more == 1 ? "" : "s");
}

/* The refusal of a run that would add to collected runs without --resume:
 * it names exactly what --resume will run. */
static core_status refuse_partial(const proto_sheet *s, const run_plan *p,
                                  const char *dir, core_err *err) {
  core_buf b;
  core_buf_init(&b);
  describe_todo(s, p, &b);
  /* The list ends the message, and main adds the last newline. */
  if (b.len && b.data[b.len - 1] == '\n')
    b.data[--b.len] = '\0';
  core_status st = core_fail(
      err, CORE_ERUN,
      "%s: %zu of the %zu planned runs%s%s are collected and %zu are left; "
      "'prereg run %s --resume' runs exactly these (with --dry-run, their "
      "commands):\n%s",
      dir, p->collected, p->planned, p->only ? " of " : "",
      p->only ? p->only : "", p->planned - p->collected, s->path,
      b.data ? b.data : "");
  core_buf_free(&b);
  return st;
}

/* Dry run */

/* One run of the plan with the commands it would run. */
static core_status print_item(const proto_sheet *s, const run_plan_item *it,
                              const char *run_id, FILE *out, core_err *err) {
  const char *arm = s->arms[it->arm].name;
  if (it->round == 0)
    fprintf(out, "  warm-up %ld %s:\n", it->warm, arm);
  else
    fprintf(out, "  %s round %ld %s:\n", run_id, it->round, arm);
  run_commands c;
  core_status st = run_plan_commands(s, it, run_id, &c, err);
  if (st == CORE_OK) {
    if (c.prepare)
      fprintf(out, "    prepare: %s\n", c.prepare);
    for (size_t k = 0; k < c.n_steps; k++)
      if (c.has_steps)
        fprintf(out, "    step %zu: %s\n", k + 1, c.steps[k]);
      else
        fprintf(out, "    run: %s\n", c.steps[k]);
    if (c.cleanup)
      fprintf(out, "    cleanup: %s\n", c.cleanup);
  }
  run_commands_free(&c);
  return st;
}

static void print_workload(const proto_sheet *s, const run_plan *p,
                           const run_plan_item *it, FILE *out) {
  const proto_workload *w = &s->workloads[it->workload];
  fprintf(out,
          "%sworkload %s: %ld rounds, %ld warm-up(s) per arm, %s, cache "
          "%s, timeout %g s per step\n",
          p->n_hosts ? "  " : "", w->name, run_plan_rounds(s, w, p->quick),
          run_plan_warmups(w, p->quick),
          w->order == PROTO_ORDER_BLOCKED ? "blocked" : "interleaved",
          w->cache == PROTO_CACHE_COLD ? "cold" : "warm", w->timeout_s);
}

/* A plan across hosts: where, and how a host counts. */
static void print_hosts(const proto_sheet *s, const run_plan *p, FILE *out) {
  const proto_hosts *h = &s->hosts;
  fprintf(out, "hosts (%s): ", h->backend);
  for (size_t i = 0; i < p->n_hosts; i++)
    fprintf(out, "%s%s", i ? ", " : "", p->hosts[i]);
  if (p->hosts_pending)
    fprintf(out,
            "%ld nodes%s%s%s%s, named by the first allocation; each host's "
            "arm orders are drawn from its name then (" RUN_HOST_ORDER_TEXT
            ")\n",
            h->count, h->partition ? " of partition " : "",
            h->partition ? h->partition : "",
            h->constraint ? " with constraint " : "",
            h->constraint ? h->constraint : "");
  else
    fprintf(out,
            "\nevery host runs the whole plan, one step per (host, "
            "workload, round), the hosts side by side; arm orders per host: "
            "%s\n",
            RUN_HOST_ORDER_TEXT);
}

/* The dry run's last word, with the numbers a run would give. */
static void print_todo(const proto_sheet *s, const run_plan *p, FILE *out) {
  size_t left = p->planned - p->collected;
  if (p->hosts_pending) {
    long per = 0;
    for (size_t w = 0; w < s->n_workloads; w++)
      if (run_workload_runnable(&s->workloads[w]) &&
          (!p->only || !strcmp(p->only, s->workloads[w].name)))
        per +=
            run_plan_rounds(s, &s->workloads[w], p->quick) * (long)s->n_arms;
    fprintf(out,
            "%ld runs to do on each of the %ld hosts the allocation "
            "names (%ld in all)\n",
            per, s->hosts.count, per * s->hosts.count);
    return;
  }
  if (p->planned == 0) {
    fprintf(out,
            "nothing to run: %s has no workload prereg runs itself "
            "(their data come by prereg import)\n",
            s->path);
    return;
  }
  if (left == 0) {
    fprintf(out, "nothing to do: all %zu planned runs are collected\n",
            p->planned);
    return;
  }
  if (p->collected == 0) {
    fprintf(out, "%zu runs to do\n", left);
    return;
  }
  core_buf b;
  core_buf_init(&b);
  describe_todo(s, p, &b);
  fprintf(out,
          "%zu of the %zu planned runs to do (%zu collected); 'prereg run %s "
          "--resume' runs exactly these (without --resume, run refuses):\n%s",
          left, p->planned, p->collected, s->path, b.data ? b.data : "");
  core_buf_free(&b);
}

/* The plan, every command expanded, with "bNEXT" for the batch's id (and
 * the host in a run's id across hosts). */
static core_status print_plan(const proto_sheet *s, const run_plan *p,
                              FILE *out, core_err *err) {
  fprintf(out, "plan for %s (sheet sha256 %.12s), %s\n", s->id, s->sha256,
          p->quick ? "quick (demo: the fewest rounds whose intervals reach "
                     "their level, 1 "
                     "warm-up)"
                   : "full");
  if (s->hosts.declared)
    print_hosts(s, p, out);
  size_t cur = (size_t)-1, host = (size_t)-1;
  long seq = 0, warm = 0;
  for (size_t i = 0; i < p->n; i++) {
    const run_plan_item *it = &p->items[i];
    char pre[80] = "bNEXT";
    if (p->n_hosts && it->host != host) {
      host = it->host;
      cur = (size_t)-1;
      seq = warm = 0;
      fprintf(out, "host %s:\n", p->hosts[host]);
    }
    if (p->n_hosts)
      snprintf(pre, sizeof pre, "bNEXT-%s", p->hosts[host]);
    if (it->workload != cur) {
      cur = it->workload;
      print_workload(s, p, it, out);
    }
    if (it->done) {
      if (it->round > 0)
        fprintf(out, "  %s round %ld: already collected\n",
                s->arms[it->arm].name, it->round);
      continue;
    }
    /* The ids the batch will give: only the runs it does are numbered. */
    char run_id[128];
    if (it->round == 0)
      snprintf(run_id, sizeof run_id, "%s-w%03ld", pre, ++warm);
    else
      snprintf(run_id, sizeof run_id, "%s-%04ld", pre, ++seq);
    core_status st = print_item(s, it, run_id, out, err);
    if (st != CORE_OK)
      return st;
  }
  print_todo(s, p, out);
  fprintf(out, "nothing was run or written (--dry-run)\n");
  return CORE_OK;
}

/* The command */

/* What the command holds while it runs. */
typedef struct run_cmd {
  proto_sheet *s;
  data_experiment *exp;
  run_plan plan;
  data_rowset rows; /* collected before: the plan points into them */
  progress_state ps;
  int answered; /* the command's answer is given: nothing to run */
} run_cmd;

static core_status check_only(const proto_sheet *s, const char *only,
                              core_err *err) {
  if (!only)
    return CORE_OK;
  long wi = proto_workload_index(s, only);
  if (wi < 0)
    return core_fail(err, CORE_EUSAGE,
                     "%s: --only %s: no such workload in the sheet", s->path,
                     only);
  if (!run_workload_runnable(&s->workloads[wi]))
    return core_fail(err, CORE_EUSAGE,
                     "%s: --only %s: that workload has no command (its data "
                     "comes by prereg import)",
                     s->path, only);
  return CORE_OK;
}

static core_status answer_with_plan(const cli_opts *opts, run_cmd *c,
                                    FILE *out, core_err *err) {
  c->answered = 1;
  if (!opts->backend || strcmp(opts->backend, "kubernetes") != 0)
    return print_plan(c->s, &c->plan, out, err);
  core_buf b;
  core_buf_init(&b);
  core_status st = run_kube_manifest(c->s, &c->plan, &b, err);
  if (st == CORE_OK)
    fputs(b.data ? b.data : "", out);
  core_buf_free(&b);
  return st;
}

/* --backend: only to look at the plan of a sheet with hosts. */
static core_status check_backend(const cli_opts *opts, const proto_sheet *s,
                                 core_err *err) {
  if (!opts->backend)
    return CORE_OK;
  if (strcmp(opts->backend, "slurm") != 0 &&
      strcmp(opts->backend, "kubernetes") != 0)
    return core_fail(err, CORE_EUSAGE,
                     "--backend %s: the backends are slurm (the sheet's "
                     "hosts.backend) and kubernetes (on paper)",
                     opts->backend);
  if (!opts->dry_run)
    return core_fail(err, CORE_EUSAGE,
                     "--backend goes with --dry-run: a sheet with hosts runs "
                     "on its hosts.backend (%s)",
                     s->hosts.declared ? s->hosts.backend : "none here");
  if (!s->hosts.declared)
    return core_fail(err, CORE_EUSAGE,
                     "%s: --backend %s needs a hosts block in the sheet (the "
                     "nodes the plan is crossed with)",
                     s->path, opts->backend);
  return CORE_OK;
}

/* The sheet, its plan, the lock and what is already collected; a dry run
 * (a plan can be looked at before registering, and nothing is written)
 * and a complete plan are answered here. */
/* --only W follows the to-do rule of a plain run: while an interrupted
 * batch's plan is not complete, a new batch is started only by --resume,
 * whichever workload it is for. */
static core_status refuse_interrupted(const run_cmd *c, core_err *err) {
  data_counted cnt;
  core_status st = data_count_rows(
      c->s, c->exp, c->exp->versions[c->exp->n_versions - 1].number, &c->rows,
      &cnt, err);
  if (st == CORE_OK && cnt.status.interrupted)
    st = core_fail(err, CORE_ERUN,
                   "%s: a batch was interrupted and the plan is not complete "
                   "(status INTERRUPTED); 'prereg run %s --resume --only %s' "
                   "runs what is left of %s, 'prereg run %s --resume' all "
                   "that is left",
                   c->exp->dir, c->s->path, c->plan.only, c->plan.only,
                   c->s->path);
  data_counted_free(&cnt);
  return st;
}

static core_status prepare(const cli_opts *opts, FILE *out, run_cmd *c,
                           core_err *err) {
  const char *data_dir = opts->data_dir ? opts->data_dir : "data";
  core_status st;
  if (!(c->s = proto_sheet_load_to_run(opts->args[0], err)))
    return err->status != CORE_OK ? err->status : CORE_EPROTOCOL;
  if ((st = cli_check_data_dir(opts, c->s, err)) != CORE_OK ||
      (st = check_only(c->s, opts->only, err)) != CORE_OK ||
      (st = check_backend(opts, c->s, err)) != CORE_OK ||
      (st = run_plan_build(c->s, opts->only, opts->quick, &c->plan, err)) !=
          CORE_OK)
    return st;
  char *edir = core_path_join(data_dir, c->s->id);
  int registered = edir && core_is_dir(edir);
  core_free(edir);
  if (opts->dry_run && !registered)
    return answer_with_plan(opts, c, out, err);
  if ((st = data_experiment_open(data_dir, c->s, &c->exp, err)) != CORE_OK)
    return st;
  if ((st = data_check_lock(c->exp, c->s, err)) != CORE_OK) {
    if (!opts->dry_run)
      return st;
    fprintf(out, "note: %s\n", err->msg);
    memset(err, 0, sizeof *err);
    return answer_with_plan(opts, c, out, err);
  }
  /* The lock before the rows are counted: while another run holds it,
   * its batch looks half collected, and the answer is who holds it, not
   * --resume. */
  if (!opts->dry_run && (st = data_experiment_lock(c->exp, err)) != CORE_OK)
    return st;
  if ((st = run_plan_stamp_order(&c->plan, c->s, c->exp, err)) != CORE_OK)
    return st;
  run_progress pr = {on_progress, &c->ps, NULL, NULL};
  if ((st = run_plan_collect(c->exp, c->s, opts->resume && !opts->dry_run, &pr,
                             &c->plan, &c->rows, err)) != CORE_OK)
    return st;
  if (opts->dry_run)
    return answer_with_plan(opts, c, out, err);
  if (c->plan.planned == 0 && !c->plan.hosts_pending) {
    print_todo(c->s, &c->plan, out);
    c->answered = 1;
    return CORE_OK;
  }
  if (c->plan.collected == c->plan.planned && !c->plan.hosts_pending) {
    fprintf(out, "nothing to do: all %zu planned runs%s%s are collected\n",
            c->plan.planned, opts->only ? " of " : "",
            opts->only ? opts->only : "");
    c->answered = 1;
    return CORE_OK;
  }
  if (c->plan.collected > 0 && !opts->resume)
    return refuse_partial(c->s, &c->plan, c->exp->dir, err);
  if (opts->only && !opts->resume)
    return refuse_interrupted(c, err);
  return CORE_OK;
}

static void on_signal(int sig) {
  (void)sig;
  run_cancel();
}

/* What all the data say now, as `prereg analyze` prints it, after a
 * blank line: the batch is frozen whatever happens here, so a summary
 * that cannot be made is said in a line, not as the command's failure. */
static void print_summary(run_cmd *c, FILE *out) {
  analysis_summary *sum = NULL;
  core_err err = {0};
  core_buf text;
  core_buf_init(&text);
  if (analysis_experiment(c->s, c->exp, 0, &sum, &err) == CORE_OK)
    analysis_write_brief(sum, c->s->path, cli_term_width(out), &text);
  if (sum && !text.oom && text.len) {
    fputs("\n", out);
    fwrite(text.data, 1, text.len, out);
  } else {
    fprintf(out, "no summary: %s\n",
            err.msg[0] ? err.msg : "out of memory writing it");
  }
  core_buf_free(&text);
  analysis_summary_free(sum);
}

/* A look of a workload: stop it when every comparison is decided. */
static core_status at_look(void *ctx, size_t w, size_t look, int *stop,
                           core_err *err) {
  const run_cmd *c = ctx;
  return analysis_look(c->s, c->exp, w, look, stop, err);
}

/* The batch, with SIGINT and SIGTERM cancelling it (the running command
 * is killed at once, what was collected is frozen). */
static core_status collect(const cli_opts *opts, FILE *out, run_cmd *c,
                           core_err *err) {
  struct sigaction sa, old_int, old_term, old_hup, old_pipe;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: a blocking poll must wake up */
  run_cancel_arm();
  /* Whatever ends prereg before its plan (a closed terminal, a reader of
   * its output gone: `run SHEET | head -3`) ends the batch as interrupted
   * and frozen, not prereg in the middle of a write. */
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);
  sigaction(SIGPIPE, &sa, &old_pipe);
  run_progress pr = {on_progress, &c->ps, at_look, c};
  run_batch_result res;
  ticker_start(&c->ps);
  core_status st =
      c->s->hosts.declared
          ? run_slurm_batch(c->exp, c->s, &c->plan, &c->rows, opts->resume,
                            &pr, &res, err)
          : run_batch(c->exp, c->s, &c->plan, opts->resume, &pr, &res, err);
  ticker_stop(&c->ps);
  progress_end(&c->ps);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  sigaction(SIGHUP, &old_hup, NULL);
  sigaction(SIGPIPE, &old_pipe, NULL);
  run_cancel_disarm();
  if (st == CORE_OK) {
    fprintf(out, "batch %s: %zu runs, %zu valid, %zu invalid%s\n", res.batch,
            res.recorded, res.valid, res.invalid,
            opts->quick ? " (quick: a demo, not the registered plan)" : "");
    print_summary(c, out);
  }
  return st;
}

/* --tsa and --tsa-ca, refused before anything runs when they are wrong. */
static core_status stamp_options(const cli_opts *opts, core_err *err) {
  data_stamper s;
  if (!opts->tsa && !opts->tsa_ca)
    return CORE_OK;
  if (opts->dry_run)
    return core_fail(err, CORE_EUSAGE, "--dry-run takes no --tsa");
  return cli_stamper(opts, &s, err);
}

/* The MANIFEST as the batch left it, stamped: when the TSA fails, the
 * batch stays frozen and the stamp can be taken later. */
static core_status stamp_batch(const cli_opts *opts, run_cmd *c, FILE *out,
                               core_err *err) {
  core_status st = cli_stamp_data(opts, c->exp, out, err);
  if (st != CORE_OK)
    core_err_prefix(err,
                    "the batch is frozen, its data not stamped (stamp them "
                    "later: prereg stamp %s --data-manifest --tsa URL): ",
                    opts->args[0]);
  return st;
}

core_status cli_cmd_run(const cli_opts *opts, FILE *out, core_err *err) {
  if (opts->n_args != 1)
    return core_fail(err, CORE_EUSAGE,
                     "run needs exactly one SHEET; see prereg run --help");
  /* Fork the spawn helper while we are small (see run/exec.c). */
  run_helper_start();
  run_become_subreaper();
  run_cmd c;
  memset(&c, 0, sizeof c);
  c.ps = (progress_state){.out = out,
                          .tty = isatty(2),
                          .mu = PTHREAD_MUTEX_INITIALIZER,
                          .cv = PTHREAD_COND_INITIALIZER};
  core_status st = stamp_options(opts, err);
  if (st == CORE_OK)
    st = prepare(opts, out, &c, err);
  if (st == CORE_OK && !c.answered &&
      (st = collect(opts, out, &c, err)) == CORE_OK && opts->tsa)
    st = stamp_batch(opts, &c, out, err);
  run_plan_free(&c.plan);
  data_rowset_free(&c.rows);
  data_experiment_free(c.exp);
  proto_sheet_free(c.s);
  run_kill_all_children();
  run_helper_stop();
  return st;
}
