/* cmd_node.c: `prereg node-run`, the node runner of a batch across hosts
 * (started by `prereg run` in a Slurm step on each node, not by people):
 * its options, SIGTERM (scancel) and SIGINT, and every line the engine
 * hands over written whole to standard output at once.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_internal.h"
#include "protocols/proto.h"
#include "run/run.h"

/* Lines and the heartbeat share standard output. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static core_status write_unlocked(const char *text, core_err *err);

/* One write per line: the coordinator reads the step's output as it
 * comes, and a line is all there or not at all. */
static core_status write_line(void *ctx, const char *text, core_err *err) {
  (void)ctx;
  pthread_mutex_lock(&out_lock);
  core_status st = write_unlocked(text, err);
  pthread_mutex_unlock(&out_lock);
  return st;
}

/* Heartbeat */

/* While a run takes minutes, "alive" every RUN_NODE_HEARTBEAT_S tells the
 * coordinator the node is there: a node that died and came back before
 * the scheduler noticed sends nothing, and its step is given up. */
static pthread_mutex_t beat_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t beat_wake;
static int beat_stop;

static void *beat(void *arg) {
  (void)arg;
  struct timespec at;
  clock_gettime(CLOCK_MONOTONIC, &at);
  pthread_mutex_lock(&beat_lock);
  while (!beat_stop) {
    at.tv_sec += (time_t)RUN_NODE_HEARTBEAT_S;
    while (!beat_stop &&
           pthread_cond_timedwait(&beat_wake, &beat_lock, &at) == 0)
      ; /* woken early: only a stop ends the wait */
    if (beat_stop)
      break;
    core_err e = {0};
    if (write_line(NULL, "alive", &e) != CORE_OK)
      break;
  }
  pthread_mutex_unlock(&beat_lock);
  return NULL;
}

/* Starts the heartbeat; 1 when it runs. */
static int beat_start(pthread_t *t) {
  pthread_condattr_t ca;
  beat_stop = 0;
  if (pthread_condattr_init(&ca) != 0 ||
      pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
      pthread_cond_init(&beat_wake, &ca) != 0)
    return 0;
  pthread_condattr_destroy(&ca);
  return pthread_create(t, NULL, beat, NULL) == 0;
}

/* Stops it at once, not at its next beat. */
static void beat_end(pthread_t t) {
  pthread_mutex_lock(&beat_lock);
  beat_stop = 1;
  pthread_cond_signal(&beat_wake);
  pthread_mutex_unlock(&beat_lock);
  pthread_join(t, NULL);
  pthread_cond_destroy(&beat_wake);
}

static core_status write_unlocked(const char *text, core_err *err) {
  size_t len = strlen(text);
  char *b = core_malloc(len + 1);
  if (!b)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  memcpy(b, text, len);
  b[len] = '\n';
  core_status st = core_write_all(1, b, len + 1, "standard output", err);
  core_free(b);
  return st;
}

static core_status number(const char *opt, const char *v, long min, long *out,
                          core_err *err) {
  char *end;
  if (!v)
    return core_fail(err, CORE_EUSAGE, "node-run needs --%s", opt);
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || end == v || *end || n < min)
    return core_fail(err, CORE_EUSAGE, "node-run: --%s %s: not a number", opt,
                     v);
  *out = n;
  return CORE_OK;
}

/* --digests: one per arm, comma-separated, "%2C" and "%25" for a comma
 * and a percent sign in a digest, "-" for none. OUT: *d newly allocated
 * (core_names_free(*d, n_arms)). */
static core_status digests(const char *v, size_t n_arms, char ***d,
                           core_err *err) {
  *d = core_calloc(n_arms ? n_arms : 1, sizeof **d);
  if (!*d)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  const char *p = v ? v : "";
  for (size_t a = 0; a < n_arms; a++) {
    size_t len = strcspn(p, ",");
    char *one = core_malloc(len + 1), *o = one;
    if (!one)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    for (size_t i = 0; i < len; i++) {
      /* p + i + 2 never passes the comma or the end: neither is C or 5. */
      if (!strncmp(p + i, "%2C", 3))
        *o++ = ',', i += 2;
      else if (!strncmp(p + i, "%25", 3))
        *o++ = '%', i += 2;
      else
        *o++ = p[i];
    }
    *o = 0;
    if (!strcmp(one, "-"))
      one[0] = 0;
    (*d)[a] = one;
    if (!p[len] && a + 1 < n_arms)
      return core_fail(err, CORE_EUSAGE,
                       "node-run: --digests names %zu arms, the sheet has %zu",
                       a + 1, n_arms);
    p += len + (p[len] == ',');
  }
  return CORE_OK;
}

static core_status round_step(const cli_opts *o, const proto_sheet *s,
                              const run_node_sink *sink, core_err *err) {
  run_node_req q = {.host = o->host,
                    .batch = o->batch,
                    .bdir = o->work,
                    .quick = o->quick,
                    .workload = o->only,
                    .arms = o->arms,
                    .ref_exit = o->ref_exit};
  long version = 0;
  char **d = NULL;
  core_status st;
  if (!o->batch || !o->work || !o->only)
    return core_fail(err, CORE_EUSAGE,
                     "node-run needs --batch, --work and --only WORKLOAD");
  if ((st = number("round", o->round, -1, &q.round, err)) != CORE_OK ||
      (st = number("seq", o->seq, 1, &q.seq, err)) != CORE_OK ||
      (st = number("sheet-version", o->sheet_version, 0, &version, err)) !=
          CORE_OK ||
      (st = digests(o->digests, s->n_arms, &d, err)) != CORE_OK) {
    core_names_free(d, d ? s->n_arms : 0);
    return st;
  }
  q.version = (int)version;
  q.digests = d;
  st = run_node_round(s, &q, sink, err);
  core_names_free(d, s->n_arms);
  return st;
}

static void on_signal(int sig) {
  (void)sig;
  run_cancel();
}

core_status cli_cmd_node_run(const cli_opts *opts, FILE *out, core_err *err) {
  (void)out;
  if (!opts->host)
    return core_fail(err, CORE_EUSAGE, "node-run needs --host NAME");
  run_helper_start();
  run_become_subreaper();
  proto_sheet *s = proto_sheet_load_to_run(opts->args[0], err);
  core_status st = s ? CORE_OK : err->status ? err->status : CORE_EPROTOCOL;
  if (st == CORE_OK && opts->sha256 && strcmp(opts->sha256, s->sha256) != 0)
    st = core_fail(err, CORE_EPROTOCOL,
                   "%s: its SHA-256 is %s, the coordinator registered %s",
                   s->path, s->sha256, opts->sha256);
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  run_cancel_arm();
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  run_node_sink sink = {write_line, NULL};
  pthread_t beater;
  int beating = st == CORE_OK && beat_start(&beater);
  if (st == CORE_OK && opts->preflight)
    st = run_node_preflight(s, opts->host, opts->quick, &sink, err);
  else if (st == CORE_OK)
    st = round_step(opts, s, &sink, err);
  if (beating)
    beat_end(beater);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  run_cancel_disarm();
  proto_sheet_free(s);
  run_kill_all_children();
  run_helper_stop();
  return st;
}
