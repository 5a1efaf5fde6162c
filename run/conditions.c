/* conditions.c: the machine's conditions around each run (load, running
 * tasks, involuntary context switches, CPU frequency, thermal throttling,
 * swapping), the bounds a sheet registers on them, pinning a run to its
 * CPUs, and what adds noise on this host (`prereg host`).
 *
 * Every /proc and /sys file read here is read under PREREG_HOST_ROOT
 * when it is set (a test hook: a test fabricates a busy or a quiet host
 * in a folder of its own, never depending on the machine's real load).
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run/run.h"
#include "run/run_internal.h"

/* Files */

FILE *run_host_open(const char *path) {
  const char *root = getenv("PREREG_HOST_ROOT");
  char full[4096];
  if (!root || !*root)
    return fopen(path, "re");
  if ((size_t)snprintf(full, sizeof full, "%s%s", root, path) >= sizeof full)
    return NULL;
  return fopen(full, "re");
}

ssize_t run_host_kept_read(const char *path, int *kept, char *buf,
                           size_t cap) {
  const char *root = getenv("PREREG_HOST_ROOT");
  ssize_t n;
  if (root && *root) {
    FILE *f = run_host_open(path);
    if (!f)
      return -1;
    n = (ssize_t)fread(buf, 1, cap - 1, f);
    fclose(f);
  } else {
    if (*kept < 0 && (*kept = open(path, O_RDONLY | O_CLOEXEC)) < 0)
      return -1;
    n = pread(*kept, buf, cap - 1, 0);
  }
  if (n < 0)
    return -1;
  buf[n] = '\0';
  return n;
}

/* The first line of a file under the root, trimmed; 0 when unreadable. */
static int first_line(const char *path, char *out, size_t cap) {
  FILE *f = run_host_open(path);
  int ok = 0;
  out[0] = 0;
  if (!f)
    return 0;
  if (fgets(out, (int)cap, f)) {
    size_t l = strlen(out);
    while (l > 0 && (out[l - 1] == '\n' || out[l - 1] == ' '))
      out[--l] = 0;
    ok = 1;
  }
  fclose(f);
  return ok;
}

/* A whole number from the first line of a file; 0 when unreadable. */
static int file_number(const char *path, double *v) {
  char line[64], *end;
  if (!first_line(path, line, sizeof line))
    return 0;
  *v = strtod(line, &end);
  return end != line && isfinite(*v);
}

/* The CPUs whose cpufreq and throttle files were missing at their first
 * read: sysfs does not grow them during a run, so they are not looked for
 * again before and after each run (a failed open each, per CPU). */
static unsigned char absent_mhz[(CORE_MAX_CPU + 1) / 8];
static unsigned char absent_throttle[2][(CORE_MAX_CPU + 1) / 8];

/* file_number of a per-CPU file, remembering in absent (bit cpu) that it
 * is not there. */
static int counter_number(const char *path, unsigned char *absent, int cpu,
                          double *v) {
  if (cpu < 0 || cpu > CORE_MAX_CPU)
    return file_number(path, v);
  if (absent[cpu / 8] & (1u << (cpu % 8)))
    return 0;
  errno = 0;
  int ok = file_number(path, v);
  if (!ok && errno == ENOENT)
    absent[cpu / 8] |= (unsigned char)(1u << (cpu % 8));
  return ok;
}

int run_cond_load(double *load1, double *runnable) {
  static int kept = -1;
  char buf[256];
  double a, b, c;
  long r = 0, t = 0;
  int n = run_host_kept_read("/proc/loadavg", &kept, buf, sizeof buf) > 0
              ? sscanf(buf, "%lf %lf %lf %ld/%ld", &a, &b, &c, &r, &t)
              : 0;
  if (n < 1 || !isfinite(a) || a < 0)
    return 0;
  *load1 = a;
  *runnable = n == 5 && r >= 0 ? (double)r : -1;
  return 1;
}

/* The run's CPUs */

/* The CPUs of list (a CPU list), or those this process may use when list
 * is NULL: up to cap of them in cpu[]. Returns their count. */
static size_t run_cpus(const char *list, int *cpu, size_t cap) {
  size_t n = 0;
  if (list) {
    unsigned char bits[(CORE_MAX_CPU + 1) / 8] = {0};
    if (proto_cpus_parse(list, bits, sizeof bits) < 0)
      return 0;
    for (int c = 0; c <= CORE_MAX_CPU && n < cap; c++)
      if (bits[c / 8] & (1u << (c % 8)))
        cpu[n++] = c;
    return n;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return 0;
  for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
    if (CPU_ISSET(c, &set))
      cpu[n++] = c;
  return n;
}

/* The mean current frequency (MHz) of the CPUs; 0 when cpufreq is not
 * there for any of them. */
static int cpu_mhz(const int *cpu, size_t n, double *mhz) {
  double sum = 0;
  size_t got = 0;
  for (size_t i = 0; i < n; i++) {
    char path[96];
    double khz;
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu[i]);
    if (counter_number(path, absent_mhz, cpu[i], &khz)) {
      sum += khz / 1000.0;
      got++;
    }
  }
  if (!got)
    return 0;
  *mhz = sum / (double)got;
  return 1;
}

/* The thermal throttle events so far of the CPUs (core and package
 * counters); 0 when no counter is there. */
static int throttle_count(const int *cpu, size_t n, double *count) {
  static const char *const kinds[] = {"core", "package"};
  double sum = 0;
  int got = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < 2; k++) {
      char path[128];
      double v;
      snprintf(path, sizeof path,
               "/sys/devices/system/cpu/cpu%d/thermal_throttle/"
               "%s_throttle_count",
               cpu[i], kinds[k]);
      if (counter_number(path, absent_throttle[k], cpu[i], &v)) {
        sum += v;
        got = 1;
      }
    }
  *count = sum;
  return got;
}

/* pswpin of /proc/vmstat: pages swapped in since boot. */
static int swapped_in(double *pages) {
  static int kept = -1;
  char buf[8192];
  if (run_host_kept_read("/proc/vmstat", &kept, buf, sizeof buf) <= 0)
    return 0;
  const char *p =
      strncmp(buf, "pswpin ", 7) == 0 ? buf : strstr(buf, "\npswpin ");
  if (!p)
    return 0;
  *pages = strtod(p + (*p == '\n') + 7, NULL);
  return isfinite(*pages);
}

/* Before and after a run */

void run_cond_take(run_cond_snap *sn, const char *cpus, int before) {
  int cpu[RUN_COND_CPUS];
  size_t n = run_cpus(cpus, cpu, RUN_COND_CPUS);
  if (before) {
    memset(sn, 0, sizeof *sn);
    sn->has_load = run_cond_load(&sn->load1, &sn->runnable);
    sn->has_mhz = cpu_mhz(cpu, n, &sn->mhz);
  }
  sn->has_throttle[!before] = throttle_count(cpu, n, &sn->throttle[!before]);
  sn->has_swap[!before] = swapped_in(&sn->swap[!before]);
}

static void set_fact(run_outcome *o, int f, double v) {
  o->fact[f] = v;
  o->has_fact |= 1u << f;
}

void run_cond_facts(const run_cond_snap *sn, run_outcome *o) {
  if (sn->has_load) {
    set_fact(o, DATA_FACT_LOAD1, sn->load1);
    if (sn->runnable >= 0)
      set_fact(o, DATA_FACT_RUNNABLE, sn->runnable);
  }
  if (o->has_ctxsw)
    set_fact(o, DATA_FACT_CTXSW_INVOL, (double)o->ctxsw_invol);
  if (sn->has_mhz)
    set_fact(o, DATA_FACT_CPU_MHZ, round(sn->mhz));
  if (sn->has_throttle[0] && sn->has_throttle[1])
    set_fact(o, DATA_FACT_THROTTLE,
             fmax(0, sn->throttle[1] - sn->throttle[0]));
  if (sn->has_swap[0] && sn->has_swap[1])
    set_fact(o, DATA_FACT_SWAP_IN, fmax(0, sn->swap[1] - sn->swap[0]));
}

/* A bound as the sheet reads: 1.0, 0.5, 12. */
static void bound_text(char *out, size_t cap, double v) {
  if (v == floor(v) && fabs(v) < 1e15)
    snprintf(out, cap, "%.1f", v);
  else
    snprintf(out, cap, "%g", v);
}

/* Appends "NAME V above the registered B" to why when fact f is known and
 * above the bound b (b < 0: none). */
static void over(const run_outcome *o, int f, const char *name, double b,
                 char *why, size_t cap) {
  char bt[48];
  size_t l = strlen(why);
  if (b < 0 || !(o->has_fact & (1u << f)) || o->fact[f] <= b)
    return;
  bound_text(bt, sizeof bt, b);
  snprintf(why + l, cap - l, "%s%s %g above the registered %s", l ? ", " : "",
           name, o->fact[f], bt);
}

int run_cond_judge(const proto_conditions *c, run_outcome *o) {
  char why[512] = "", old[sizeof o->reason];
  if (!c->declared)
    return 0;
  over(o, DATA_FACT_LOAD1, "load", c->max_load, why, sizeof why);
  over(o, DATA_FACT_SWAP_IN, "swap_in", c->max_swap_in, why, sizeof why);
  over(o, DATA_FACT_THROTTLE, "throttle", c->max_throttle, why, sizeof why);
  if (!why[0])
    return 0;
  /* First in the reason: what the counting rule reads. */
  snprintf(old, sizeof old, "%s", o->reason);
  snprintf(o->reason, sizeof o->reason, "%s: %s%s%.700s", DATA_CONDITIONS, why,
           old[0] ? "; " : "", old);
  o->valid = 0;
  return 1;
}

/* Waiting for a quiet host */

int run_cond_wait(const proto_conditions *c, const run_progress *progress) {
  double load1, runnable, t0 = core_monotonic();
  int told = 0;
  if (!c->declared || c->max_load < 0)
    return 1;
  while (run_cond_load(&load1, &runnable) && load1 > c->max_load) {
    double left = c->wait_s - (core_monotonic() - t0);
    if (left <= 0 || run_cancelled())
      return 0;
    if (!told++ && progress && progress->fn) {
      char text[200], bt[48];
      bound_text(bt, sizeof bt, c->max_load);
      snprintf(text, sizeof text,
               "waiting up to %g s: load %g above the registered %s",
               c->wait_s, load1, bt);
      run_event ev = {.kind = RUN_EVENT_WAIT, .text = text};
      progress->fn(progress->ctx, &ev);
    }
    struct timespec ts = {0, left < 0.5 ? (long)(left * 1e9) : 500000000L};
    nanosleep(&ts, NULL);
  }
  return 1;
}

/* Pinning */

core_status run_cond_pin(const char *cpus, run_pin *p, core_err *err) {
  unsigned char bits[(CORE_MAX_CPU + 1) / 8] = {0};
  cpu_set_t set, ours;
  memset(p, 0, sizeof *p);
  if (!cpus)
    return CORE_OK;
  if (proto_cpus_parse(cpus, bits, sizeof bits) <= 0)
    return core_fail(err, CORE_ERUN, "cpus \"%s\" is not a CPU list", cpus);
  CPU_ZERO(&set);
  for (int c = 0; c <= CORE_MAX_CPU && c < CPU_SETSIZE; c++)
    if (bits[c / 8] & (1u << (c % 8)))
      CPU_SET(c, &set);
  /* Every process of the run is started on them (affinity is inherited
   * across fork and exec); the kernel would refuse a set without any CPU
   * we may use, as this refuses it first. */
  CPU_ZERO(&ours);
  if (sched_getaffinity(0, sizeof ours, &ours) == 0)
    CPU_AND(&ours, &ours, &set);
  if (CPU_COUNT(&ours) == 0)
    return core_fail(err, CORE_ERUN,
                     "cpus \"%s\": cannot pin the run there (%s); name CPUs "
                     "this host has and prereg may use",
                     cpus, strerror(EINVAL));
  run_exec_pin(&set);
  p->on = 1;
  return CORE_OK;
}

void run_cond_unpin(run_pin *p) {
  if (p->on)
    run_exec_pin(NULL);
  p->on = 0;
}
