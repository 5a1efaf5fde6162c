/* host.c: facts about the machine a batch ran on, the page cache, and
 * per-run cgroups.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "run/run.h"
#include "run/run_internal.h"

/* Host facts */

/* First line of a small file, trimmed; "" when unreadable. */
static void read_line(const char *path, char *out, size_t cap) {
  out[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  if (fgets(out, (int)cap, f)) {
    size_t l = strlen(out);
    while (l > 0 && (out[l - 1] == '\n' || out[l - 1] == ' '))
      out[--l] = 0;
  }
  fclose(f);
}

/* Value of "key:" in a /proc file of "key: value" lines. */
static int proc_field(const char *path, const char *key, char *out,
                      size_t cap) {
  char line[1024];
  size_t kl = strlen(key);
  int found = 0;
  out[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, kl) != 0)
      continue;
    char *p = line + kl;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p != ':')
      continue;
    p++;
    while (*p == ' ' || *p == '\t')
      p++;
    size_t l = strlen(p);
    while (l > 0 && (p[l - 1] == '\n' || p[l - 1] == ' '))
      p[--l] = 0;
    snprintf(out, cap, "%s", p);
    found = 1;
    break;
  }
  fclose(f);
  return found;
}

const char *run_host_name(void) {
  static char name[256];
  if (!name[0]) {
    if (gethostname(name, sizeof name - 1) != 0 || !name[0])
      snprintf(name, sizeof name, "unknown");
    name[sizeof name - 1] = 0;
  }
  return name;
}

long run_cached_mib(void) {
  /* Read before every run: kept open, and read whole in one pread. */
  static int kept = -1;
  char buf[8192];
  if (run_host_kept_read("/proc/meminfo", &kept, buf, sizeof buf) <= 0)
    return -1;
  const char *p = strstr(buf, "\nCached:");
  return p ? strtol(p + 8, NULL, 10) / 1024 : -1;
}

int run_load_avg(double avg[3]) {
  FILE *f = run_host_open("/proc/loadavg");
  int ok = f && fscanf(f, "%lf %lf %lf", &avg[0], &avg[1], &avg[2]) == 3;
  if (f)
    fclose(f);
  if (!ok)
    avg[0] = avg[1] = avg[2] = 0;
  return ok;
}

void run_host_facts(data_host_facts *h) {
  struct utsname u;
  char mem[64];
  memset(h, 0, sizeof *h);
  snprintf(h->hostname, sizeof h->hostname, "%s", run_host_name());
  if (uname(&u) == 0)
    snprintf(h->kernel, sizeof h->kernel, "%s %s %s %s", u.sysname, u.release,
             u.version, u.machine);
  if (!proc_field("/proc/cpuinfo", "model name", h->cpu_model,
                  sizeof h->cpu_model))
    proc_field("/proc/cpuinfo", "Model", h->cpu_model, sizeof h->cpu_model);
  read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            h->cpu_governor, sizeof h->cpu_governor);
  proc_field("/proc/meminfo", "MemTotal", mem, sizeof mem);
  h->mem_total_mib = strtol(mem, NULL, 10) / 1024;
  h->cores = sysconf(_SC_NPROCESSORS_ONLN);
  run_host_conditions(h);
}

/* threads per core from cpu 0's "siblings" and "cpu cores", 0 when
 * /proc/cpuinfo does not say. */
static long threads_per_core(void) {
  char sib[32], cores[32];
  if (!proc_field("/proc/cpuinfo", "siblings", sib, sizeof sib) ||
      !proc_field("/proc/cpuinfo", "cpu cores", cores, sizeof cores))
    return 0;
  long a = strtol(sib, NULL, 10), b = strtol(cores, NULL, 10);
  return a > 0 && b > 0 ? a / b : 0;
}

void run_node_facts(data_node_facts *f, const char *node) {
  memset(f, 0, sizeof *f);
  snprintf(f->node, sizeof f->node, "%s", node);
  run_host_facts(&f->host);
  f->host.has_load_start = run_load_avg(f->host.load_avg_start);
  read_line("/etc/machine-id", f->machine_id, sizeof f->machine_id);
  run_boot_id(f->boot_id, sizeof f->boot_id);
  read_line("/sys/devices/system/cpu/smt/control", f->smt, sizeof f->smt);
  f->threads_per_core = threads_per_core();
  proc_field("/proc/self/status", "Cpus_allowed_list", f->cpus_allowed,
             sizeof f->cpus_allowed);
}

void run_boot_id(char *out, size_t cap) {
  read_line("/proc/sys/kernel/random/boot_id", out, cap);
}

/* Page cache */

core_status run_can_drop_caches(core_err *err) {
  int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return core_fail(err, CORE_ERUN,
                     "cache = \"cold\" needs to drop the page cache, but "
                     "/proc/sys/vm/drop_caches cannot be opened for "
                     "writing (%s); run as root on a host that allows it, "
                     "or amend the sheet to cache = \"warm\"",
                     strerror(errno));
  close(fd);
  return CORE_OK;
}

core_status run_drop_caches(core_err *err) {
  sync();
  int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, "3", 1) != 1) {
    int e = errno;
    if (fd >= 0)
      close(fd);
    return core_fail(err, CORE_ERUN,
                     "dropping the page cache failed (%s): the cold run "
                     "was refused, not downgraded to warm",
                     strerror(e));
  }
  close(fd);
  return CORE_OK;
}

typedef struct resid {
  unsigned long long pages, resident;
  size_t files;
  int oom;
} resid;

static void resident_file(const char *path, resid *r) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return;
  struct stat sb;
  if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
    size_t len = (size_t)sb.st_size;
    long ps = sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (m != MAP_FAILED) {
      size_t np = (len + (size_t)ps - 1) / (size_t)ps;
      unsigned char *vec = core_malloc(np);
      r->oom |= !vec;
      if (vec && mincore(m, len, vec) == 0) {
        for (size_t i = 0; i < np; i++)
          r->resident += vec[i] & 1;
        r->pages += np;
        r->files++;
      }
      core_free(vec);
      munmap(m, len);
    }
  }
  close(fd);
}

static void resident_walk(const char *path, resid *r, int depth) {
  struct stat sb;
  if (depth > 64 || lstat(path, &sb) != 0 || r->files > 100000)
    return;
  if (S_ISREG(sb.st_mode)) {
    resident_file(path, r);
    return;
  }
  if (!S_ISDIR(sb.st_mode))
    return;
  DIR *d = opendir(path);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    char *p = core_path_join(path, e->d_name);
    if (p)
      resident_walk(p, r, depth + 1);
    r->oom |= !p;
    core_free(p);
  }
  closedir(d);
}

core_status run_resident_fraction(const char *path, double *fraction,
                                  core_err *err) {
  resid r = {0};
  *fraction = 0;
  if (!core_exists(path))
    return core_fail(err, CORE_ERUN, "image.resident: %s does not exist",
                     path);
  resident_walk(path, &r, 0);
  if (r.oom)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  *fraction = r.pages ? (double)r.resident / (double)r.pages : 0.0;
  return CORE_OK;
}

/* cgroups v2 */

char *run_cgroup_parent(core_err *err) {
  const char *root = core_exists("/sys/fs/cgroup/cgroup.controllers")
                         ? "/sys/fs/cgroup"
                     : core_exists("/sys/fs/cgroup/unified/"
                                   "cgroup.controllers")
                         ? "/sys/fs/cgroup/unified"
                         : NULL;
  if (!root) {
    core_fail(err, CORE_ERUN,
              "cgroup = true needs cgroup v2, and no cgroup2 file system "
              "is mounted at /sys/fs/cgroup");
    return NULL;
  }
  /* Our own cgroup, from the "0::" line. */
  char line[4096], own[4096] = "";
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (f) {
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "0::", 3) == 0) {
        size_t l = strlen(line);
        while (l > 0 && line[l - 1] == '\n')
          line[--l] = 0;
        snprintf(own, sizeof own, "%s", line + 3);
      }
    fclose(f);
  }
  char *dir = core_asprintf("%s%s", root, strcmp(own, "/") ? own : "");
  if (!dir) {
    core_fail(err, CORE_ENOMEM, "out of memory");
    return NULL;
  }
  char ctl_path[4200], ctl[512] = "";
  snprintf(ctl_path, sizeof ctl_path, "%s/cgroup.controllers", dir);
  read_line(ctl_path, ctl, sizeof ctl);
  char padded[520];
  snprintf(padded, sizeof padded, " %s ", ctl);
  if (!strstr(padded, " memory ") || !strstr(padded, " cpu ")) {
    core_fail(err, CORE_ERUN,
              "cgroup = true needs the memory and cpu controllers of "
              "cgroup v2, but %s offers only \"%s\"; run on a host with "
              "cgroup v2 delegated to you, or amend the sheet",
              ctl_path, ctl);
    core_free(dir);
    return NULL;
  }
  if (access(dir, W_OK) != 0) {
    core_fail(err, CORE_ERUN,
              "cgroup = true: cannot create cgroups under %s (%s)", dir,
              strerror(errno));
    core_free(dir);
    return NULL;
  }
  return dir;
}

core_status run_cgroup_read(const char *dir, double *mem_peak_mib,
                            double *cpu_s, core_err *err) {
  char path[4200], v[128];
  snprintf(path, sizeof path, "%s/memory.peak", dir);
  read_line(path, v, sizeof v);
  if (!v[0])
    return core_fail(err, CORE_ERUN, "cannot read %s", path);
  *mem_peak_mib = strtod(v, NULL) / (1024.0 * 1024.0);
  snprintf(path, sizeof path, "%s/cpu.stat", dir);
  if (!proc_field(path, "usage_usec", v, sizeof v)) {
    /* cpu.stat is "key value", not "key: value" */
    FILE *f = fopen(path, "r");
    char line[256];
    int ok = 0;
    while (f && fgets(line, sizeof line, f))
      if (strncmp(line, "usage_usec ", 11) == 0) {
        *cpu_s = strtod(line + 11, NULL) / 1e6;
        ok = 1;
      }
    if (f)
      fclose(f);
    if (!ok)
      return core_fail(err, CORE_ERUN, "cannot read %s", path);
  }
  return CORE_OK;
}
