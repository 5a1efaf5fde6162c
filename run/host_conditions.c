/* host_conditions.c: what adds noise on this host (`prereg host`, and
 * host.conditions in every batch's facts): governor, boost, SMT, isolated
 * CPUs, nohz_full, ASLR, swap, power, clocksource and other load, with
 * how to change each; prereg changes none of them. A sheet's conditions
 * may require some, and a batch on a host that does not meet them is
 * refused before any run. Files are read under PREREG_HOST_ROOT when set
 * (run_host_open).
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "run/run_internal.h"

/* The first line of a file, trimmed, with any control byte made '?' (it
 * is shown on a terminal); 0 when unreadable. */
static int line_of(const char *path, char *out, size_t cap) {
  FILE *f = run_host_open(path);
  int ok = 0;
  out[0] = 0;
  if (!f)
    return 0;
  if (fgets(out, (int)cap, f)) {
    size_t l = strlen(out);
    while (l > 0 && (out[l - 1] == '\n' || out[l - 1] == ' '))
      out[--l] = 0;
    for (char *p = out; *p; p++)
      if ((unsigned char)*p < 0x20 || *p == 0x7f)
        *p = '?';
    ok = 1;
  } else {
    ok = 1; /* an empty file says "none" */
  }
  fclose(f);
  return ok;
}

/* The governor of the CPUs this process may use: one word when they
 * agree, else the first two that differ. */
static void governor(char *out, size_t cap) {
  cpu_set_t set;
  char first[64] = "", g[64], path[96];
  int first_cpu = -1;
  out[0] = 0;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return;
  for (int c = 0, seen = 0; c < CPU_SETSIZE && seen < RUN_COND_CPUS; c++) {
    if (!CPU_ISSET(c, &set))
      continue;
    seen++;
    snprintf(path, sizeof path,
             "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", c);
    if (!line_of(path, g, sizeof g) || !g[0])
      continue;
    if (first_cpu < 0) {
      snprintf(first, sizeof first, "%s", g);
      first_cpu = c;
    } else if (strcmp(g, first) != 0) {
      snprintf(out, cap, "mixed (cpu%d %s, cpu%d %s)", first_cpu, first, c, g);
      return;
    }
  }
  snprintf(out, cap, "%s", first);
}

static void boost(char *out, size_t cap) {
  char v[16];
  if (line_of("/sys/devices/system/cpu/cpufreq/boost", v, sizeof v) && v[0])
    snprintf(out, cap, "%s", strcmp(v, "0") ? "on" : "off");
  else if (line_of("/sys/devices/system/cpu/intel_pstate/no_turbo", v,
                   sizeof v) &&
           v[0])
    snprintf(out, cap, "%s", strcmp(v, "0") ? "off" : "on");
}

static void listed(const char *path, char *out, size_t cap) {
  if (line_of(path, out, cap) && (!out[0] || !strcmp(out, "(null)")))
    snprintf(out, cap, "none");
}

static void isolated(char *out, size_t cap) {
  listed("/sys/devices/system/cpu/isolated", out, cap);
}

static void nohz_full(char *out, size_t cap) {
  listed("/sys/devices/system/cpu/nohz_full", out, cap);
}

static void aslr(char *out, size_t cap) {
  char v[16];
  if (line_of("/proc/sys/kernel/randomize_va_space", v, sizeof v) && v[0])
    snprintf(out, cap, "%s (%s)", strcmp(v, "0") ? "on" : "off", v);
}

/* SwapTotal and SwapFree of /proc/meminfo, in MiB. */
static void swap(char *out, size_t cap) {
  FILE *f = run_host_open("/proc/meminfo");
  char line[128];
  long total = -1, free_kib = -1;
  if (!f)
    return;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "SwapTotal:", 10))
      total = strtol(line + 10, NULL, 10);
    else if (!strncmp(line, "SwapFree:", 9))
      free_kib = strtol(line + 9, NULL, 10);
  }
  fclose(f);
  if (total == 0)
    snprintf(out, cap, "none");
  else if (total > 0 && free_kib >= 0)
    snprintf(out, cap, "%ld MiB, %ld MiB used", total / 1024,
             (total - free_kib) / 1024);
}

/* "AC", "battery" (a battery discharging) or "" when the host has no
 * power supply class (a server, a VM). */
static void power(char *out, size_t cap) {
  const char *root = getenv("PREREG_HOST_ROOT");
  char dir[4096], path[4400], v[32];
  snprintf(dir, sizeof dir, "%s/sys/class/power_supply",
           root && *root ? root : "");
  DIR *d = opendir(dir);
  int ac = 0, discharging = 0, any = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || strlen(e->d_name) > 64)
      continue;
    any = 1;
    snprintf(path, sizeof path, "/sys/class/power_supply/%s/online",
             e->d_name);
    ac |= line_of(path, v, sizeof v) && !strcmp(v, "1");
    snprintf(path, sizeof path, "/sys/class/power_supply/%s/status",
             e->d_name);
    discharging |= line_of(path, v, sizeof v) && !strcmp(v, "Discharging");
  }
  if (d)
    closedir(d);
  if (any)
    snprintf(out, cap, "%s", discharging || !ac ? "battery" : "AC");
}

static void load(char *out, size_t cap) {
  double l1, r;
  if (run_cond_load(&l1, &r))
    snprintf(out, cap, "%g (1-minute load average), %g running", l1,
             r < 0 ? 0 : r);
}

/* The facts in the order `prereg host` prints them. */
static const struct {
  const char *name;
  void (*read)(char *out, size_t cap);
  const char *path; /* for those read as one line */
  const char *how;
} facts[] = {
    {"governor", governor, NULL,
     "cpupower frequency-set -g performance (or write performance to "
     "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor); register "
     "conditions.governor to require it"},
    {"boost", boost, NULL,
     "echo 0 > /sys/devices/system/cpu/cpufreq/boost (Intel: echo 1 > "
     "/sys/devices/system/cpu/intel_pstate/no_turbo): a boosted clock "
     "follows temperature"},
    {"smt", NULL, "/sys/devices/system/cpu/smt/control",
     "echo off > /sys/devices/system/cpu/smt/control, or pin the arms to "
     "one thread per core with cpus"},
    {"isolated", isolated, NULL,
     "boot with isolcpus=LIST and pin the runs there with cpus = \"LIST\""},
    {"nohz_full", nohz_full, NULL,
     "boot with nohz_full=LIST (the isolated CPUs): no timer tick there"},
    {"aslr", aslr, NULL,
     "sysctl -w kernel.randomize_va_space=0 (off) or 2 (on); register "
     "conditions.aslr to require one"},
    {"swap", swap, NULL, "swapoff -a, or register conditions.max_swap_in = 0"},
    {"power", power, NULL, "run on AC power: on battery the clocks drop"},
    {"clocksource", NULL,
     "/sys/devices/system/clocksource/clocksource0/current_clocksource",
     "tsc is the cheapest to read: echo tsc > "
     "/sys/devices/system/clocksource/clocksource0/current_clocksource"},
    {"load", load, NULL,
     "wait for other jobs, or register conditions.max_load and wait_s"},
};

void run_host_conditions(data_host_facts *h) {
  size_t n = sizeof facts / sizeof facts[0];
  h->n_cond = 0;
  for (size_t i = 0; i < n && i < DATA_HOST_CONDS; i++) {
    data_host_cond *c = &h->cond[h->n_cond++];
    snprintf(c->name, sizeof c->name, "%s", facts[i].name);
    c->value[0] = 0;
    if (facts[i].read)
      facts[i].read(c->value, sizeof c->value);
    else
      line_of(facts[i].path, c->value, sizeof c->value);
  }
}

const char *run_host_advice(const char *name) {
  for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
    if (!strcmp(facts[i].name, name))
      return facts[i].how;
  return "";
}

static const char *value_of(const data_host_facts *h, const char *name) {
  for (size_t i = 0; i < h->n_cond; i++)
    if (!strcmp(h->cond[i].name, name))
      return h->cond[i].value;
  return "";
}

/* Whether a yes/no fact's value v means on (1), off (0) or unknown
 * (-1). */
static int on_off(const char *v) {
  if (!strncmp(v, "on", 2) || !strcmp(v, "forceon"))
    return 1;
  if (!strncmp(v, "off", 3) || !strcmp(v, "forceoff") ||
      !strcmp(v, "notsupported") || !strcmp(v, "notimplemented"))
    return 0;
  return -1;
}

/* A yes/no fact the sheet requires (want >= 0) that the host does not
 * meet: the refusal. */
static core_status need(const data_host_facts *h, const char *name, int want,
                        core_err *err) {
  const char *v = value_of(h, name);
  if (want < 0 || on_off(v) == want)
    return CORE_OK;
  return core_fail(err, CORE_ERUN,
                   "this host does not meet the sheet's conditions: %s is "
                   "%s, the sheet requires %s = %s; nothing was run. To "
                   "change it: %s",
                   name, v[0] ? v : "unknown (no source here)", name,
                   want ? "true" : "false", run_host_advice(name));
}

core_status run_cond_required(const proto_sheet *s, core_err *err) {
  const proto_conditions *c = &s->conditions;
  data_host_facts h;
  core_status st;
  if (!c->declared)
    return CORE_OK;
  memset(&h, 0, sizeof h);
  run_host_conditions(&h);
  const char *g = value_of(&h, "governor");
  if (c->governor && strcmp(g, c->governor) != 0)
    return core_fail(err, CORE_ERUN,
                     "this host does not meet the sheet's conditions: "
                     "governor is %s, the sheet requires governor = \"%s\"; "
                     "nothing was run. To change it: %s",
                     g[0] ? g : "unknown (no cpufreq here)", c->governor,
                     run_host_advice("governor"));
  if ((st = need(&h, "aslr", c->aslr, err)) != CORE_OK ||
      (st = need(&h, "boost", c->boost, err)) != CORE_OK ||
      (st = need(&h, "smt", c->smt, err)) != CORE_OK)
    return st;
  return CORE_OK;
}
