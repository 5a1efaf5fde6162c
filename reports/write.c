/* write.c: a report's files reach their folder all together or not at
 * all: they are written into a staging folder of their own, and renamed
 * into the report folder one by one only once every one is written.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/report.h"
#include "reports/report_internal.h"

/* The staging folder */

/* dir without trailing slashes (newly allocated). */
static char *trimmed(const char *dir) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  return core_strndup(dir, n);
}

/* Where the files are written first: ".NAME.tmp.PID" beside the report
 * folder NAME, so that a disk that fills up leaves no trace in the
 * report folder; inside it when it is the root, "." or "..", or a mount
 * of its own (a rename cannot cross file systems). Newly allocated. */
static char *staging_path(const char *dir) {
  char *d = trimmed(dir), *out;
  const char *slash, *base;
  struct stat a, b;
  if (!d)
    return NULL;
  slash = strrchr(d, '/');
  base = slash ? slash + 1 : d;
  if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
    out = core_asprintf("%s/.prereg-report.tmp.%ld", d, (long)getpid());
  } else {
    char *parent = slash == d      ? core_strdup("/")
                   : slash != NULL ? core_strndup(d, (size_t)(slash - d))
                                   : core_strdup(".");
    if (parent && stat(parent, &a) == 0 && stat(d, &b) == 0 &&
        a.st_dev == b.st_dev)
      out = core_asprintf("%s/.%s.tmp.%ld", parent, base, (long)getpid());
    else
      out = core_asprintf("%s/.prereg-report.tmp.%ld", d, (long)getpid());
    core_free(parent);
  }
  core_free(d);
  return out;
}

/* Removes the staging folders of reports that were killed (kill -9
 * between the first file and the renames): named like ours with another
 * pid, of a process that is gone. Only a folder prereg's user owns goes,
 * checked on the descriptor it is emptied through; anything else by such
 * a name is refused and left. The folder is read with readdir alone: a
 * listing's allocations would grow with what else the folder holds. */
static core_status drop_stale(const char *stage, core_err *err) {
  const char *slash = strrchr(stage, '/');
  const char *base = slash ? slash + 1 : stage;
  const char *tail = strstr(base, ".tmp.");
  size_t keep = tail ? (size_t)(tail - base) + 5 : 0;
  char dir[PATH_MAX], path[PATH_MAX];
  struct dirent *e;
  core_status st = CORE_OK;
  DIR *d;
  if (!slash || !tail || (size_t)(slash - stage) >= sizeof dir)
    return CORE_OK;
  snprintf(dir, sizeof dir, "%.*s", (int)(slash - stage), stage);
  if (!(d = opendir(dir)))
    return CORE_OK;
  while (st == CORE_OK && (e = readdir(d)) != NULL) {
    const char *digits = e->d_name + keep;
    long pid;
    if (strncmp(e->d_name, base, keep) != 0 || !*digits ||
        strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 9)
      continue;
    pid = strtol(digits, NULL, 10);
    if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 ||
        errno != ESRCH)
      continue;
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) <
        (int)sizeof path)
      st = core_remove_own_tree(path, err);
  }
  closedir(d);
  return st;
}

/* Makes the staging folder anew (mkdir never follows a link), removing
 * one left by a report of ours that was killed (same pid, reused). */
static core_status staging_make(const char *stage, core_err *err) {
  if (mkdir(stage, 0755) == 0)
    return CORE_OK;
  core_err why;
  if (errno == EEXIST && core_remove_own_tree(stage, &why) != CORE_OK)
    return core_fail(err, CORE_EIO,
                     "%s: cannot create the report's staging folder: %s "
                     "(choose another folder with --out)",
                     stage, why.msg);
  if (mkdir(stage, 0755) == 0)
    return CORE_OK;
  return core_fail(err, CORE_EIO,
                   "%s: cannot create the report's staging folder: %s "
                   "(choose another folder with --out)",
                   stage, strerror(errno));
}

core_status report_check_dir(const char *dir, core_err *err) {
  char *stage;
  core_status st = core_mkdir_p(dir, 0755, err);
  if (st != CORE_OK || (st = core_check_dir(dir, err)) != CORE_OK)
    return st;
  /* Renaming into dir needs write access to it; nothing is made there. */
  if (access(dir, W_OK | X_OK) != 0)
    return core_fail(err, CORE_EIO,
                     "%s: cannot write the report there: %s (choose "
                     "another folder with --out)",
                     dir, strerror(errno));
  if (!(stage = staging_path(dir)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = staging_make(stage, err);
  if (st == CORE_OK)
    rmdir(stage);
  core_free(stage);
  return st;
}

/* Writing */

/* One file of a report: its name and bytes; no bytes for the workbook,
 * which libxlsxwriter writes to a path itself. */
typedef struct item {
  const char *name, *data;
  size_t len;
} item;

/* The files a report writes, in the order they are renamed into place:
 * the plots and the analysis that report.md links and records the digest
 * of before report.md, the workbook last. OUT: *n. Newly allocated. */
static item *report_items(const report_doc *doc, size_t *n) {
  item *v = core_calloc(doc->n_plots + 6, sizeof *v);
  size_t k = 0;
  if (!v)
    return NULL;
  for (size_t i = 0; i < doc->n_plots; i++)
    v[k++] =
        (item){doc->plots[i].file, doc->plots[i].svg, doc->plots[i].svg_len};
  if (doc->analysis)
    v[k++] = (item){REPORT_ANALYSIS_FILE, doc->analysis, doc->analysis_len};
  if (doc->provenance)
    v[k++] = (item){"provenance.md", doc->provenance, doc->provenance_len};
  v[k++] = (item){REPORT_FORMAT_FILE, REPORT_FORMAT_TEXT,
                  sizeof REPORT_FORMAT_TEXT - 1};
  v[k++] = (item){"report.html", doc->html, doc->html_len};
  v[k++] = (item){"report.md", doc->md, doc->md_len};
  v[k++] = (item){"report.xlsx", NULL, 0};
  *n = k;
  return v;
}

/* Every file of the report, written into the staging folder. */
static core_status write_staged(const report_input *in, const item *items,
                                size_t n, const char *stage, core_err *err) {
  core_status st = CORE_OK;
  for (size_t i = 0; st == CORE_OK && i < n; i++) {
    char *p = core_path_join(stage, items[i].name);
    if (!p)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    st = items[i].data ? core_write_file_atomic(p, items[i].data, items[i].len,
                                                0644, err)
                       : report_write_xlsx(in, p, err);
    core_free(p);
  }
  return st;
}

/* Refuses, before anything is moved, a name in dir that holds anything
 * but a regular file: a link there would be replaced, a folder would
 * stop the renames half-way. */
static core_status check_targets(const char *dir, const item *items, size_t n,
                                 core_err *err) {
  core_status st = CORE_OK;
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    char *p = core_path_join(dir, items[i].name);
    struct stat sb;
    if (!p)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    if (lstat(p, &sb) == 0 && !S_ISREG(sb.st_mode))
      st = core_not_regular(err, p, (unsigned)sb.st_mode);
    core_free(p);
  }
  return st;
}

static core_status move_all(const char *stage, const char *dir,
                            const item *items, size_t n, core_err *err) {
  core_status st = CORE_OK;
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    char *from = core_path_join(stage, items[i].name);
    char *to = core_path_join(dir, items[i].name);
    if (!from || !to)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    else if (rename(from, to) != 0)
      st = core_fail(err, CORE_EIO, "%s: cannot move into place: %s", to,
                     strerror(errno));
    core_free(from);
    core_free(to);
  }
  return st == CORE_OK ? core_fsync_dir(dir, err) : st;
}

core_status report_write_all(const report_input *in, const report_doc *doc,
                             const char *dir, core_err *err) {
  char *stage = staging_path(dir);
  size_t n = 0;
  item *items = report_items(doc, &n);
  core_status st = CORE_OK;
  if (!stage || !items)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK && (st = core_check_dir(dir, err)) == CORE_OK &&
      (st = check_targets(dir, items, n, err)) == CORE_OK) {
    if ((st = drop_stale(stage, err)) == CORE_OK)
      st = staging_make(stage, err);
    if (st == CORE_OK) {
      if ((st = write_staged(in, items, n, stage, err)) == CORE_OK)
        st = move_all(stage, dir, items, n, err);
      core_remove_tree(stage, NULL);
    }
  }
  core_free(items);
  core_free(stage);
  return st;
}
