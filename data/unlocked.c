/* unlocked.c: what a sheet's commands read that its inputs do not lock:
 * files of the sheet's folder that `inputs` does not list, and files
 * named by an absolute path.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/limits.h"
#include "data/data_internal.h"

typedef struct found {
  core_buf *b;     /* the warnings */
  data_paths *abs; /* the absolute paths, each once; or NULL */
} found;

void data_paths_free(data_paths *n) {
  if (!n)
    return;
  core_names_free(n->v, n->n);
  memset(n, 0, sizeof *n);
}

static void add_abs(found *f, const char *path) {
  char **v;
  if (!f->abs)
    return;
  for (size_t i = 0; i < f->abs->n; i++)
    if (strcmp(f->abs->v[i], path) == 0)
      return;
  if (f->abs->n >= PREREG_UNLOCKED_MAX) {
    f->abs->more++;
    return;
  }
  v = core_realloc(f->abs->v, (f->abs->n + 1) * sizeof *v);
  if (!v || !(v[f->abs->n] = core_strdup(path))) {
    if (v)
      f->abs->v = v;
    f->b->oom = 1;
    return;
  }
  f->abs->v = v;
  f->abs->n++;
}

/* 1 when rel is one of s's inputs or lies under one. */
static int listed(const proto_sheet *s, const char *rel) {
  for (size_t i = 0; i < s->n_inputs; i++) {
    size_t n = strlen(s->inputs[i]);
    while (n > 1 && s->inputs[i][n - 1] == '/')
      n--;
    if (strncmp(rel, s->inputs[i], n) == 0 && (!rel[n] || rel[n] == '/'))
      return 1;
  }
  return 0;
}

/* A word of a command that is an absolute path: an existing file that
 * is not a program is data the command reads from outside the inputs,
 * which the lock does not cover. */
static void check_absolute(const char *w, size_t len, const char *tmpl,
                           found *f) {
  char path[4096];
  struct stat sb;
  if (len >= sizeof path)
    return;
  memcpy(path, w, len);
  path[len] = '\0';
  if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      (sb.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
    return;
  add_abs(f, path);
  core_buf_printf(f->b,
                  "warning: \"%s\" reads %s, a file outside the sheet's "
                  "inputs: the lock does not record it, and a replication "
                  "reads whatever is at that path on its host (copy it into "
                  "the sheet's folder and list it in inputs)\n",
                  tmpl, path);
}

/* One word of a command: a file of the sheet's folder (named relative to
 * where run starts, or as {sheet_dir}/...) that the lock does not cover,
 * or a file named by an absolute path (check_absolute). */
static void check_word(const proto_sheet *s, const char *w, size_t len,
                       const char *tmpl, found *f) {
  char rel[512];
  struct stat sb;
  char *full;
  if (len >= 2 && (w[0] == '\'' || w[0] == '"') && w[len - 1] == w[0])
    w++, len -= 2;
  if (len > 1 && w[0] == '/' && !memchr(w, '{', len)) {
    check_absolute(w, len, tmpl, f);
    return;
  }
  if (len > 12 && strncmp(w, "{sheet_dir}/", 12) == 0)
    w += 12, len -= 12;
  while (len > 2 && strncmp(w, "./", 2) == 0)
    w += 2, len -= 2;
  if (len == 0 || len >= sizeof rel || memchr(w, '{', len) || w[0] == '/')
    return;
  memcpy(rel, w, len);
  rel[len] = '\0';
  if (listed(s, rel) || !(full = core_path_join(s->sheet_dir, rel)))
    return;
  if (lstat(full, &sb) == 0 && S_ISREG(sb.st_mode))
    core_buf_printf(f->b,
                    "warning: \"%s\" runs %s, a file of the sheet's folder "
                    "that `inputs` does not list: the lock does not cover "
                    "it (add \"%s\" to inputs and use {sheet_dir}/%s)\n",
                    tmpl, rel, rel, rel);
  core_free(full);
}

/* The words of t (shown as label, NULL: as t). */
static void check_template_words(const proto_sheet *s, const char *t,
                                 const char *label, found *f) {
  const char *p = t;
  while (t && *p) {
    size_t n;
    while (*p == ' ' || *p == '\t' || *p == ';' || *p == '&' || *p == '|')
      p++;
    n = strcspn(p, " \t;&|");
    if (n)
      check_word(s, p, n, label ? label : t, f);
    p += n;
  }
}

void data_inputs_unlocked(const proto_sheet *s, core_buf *b) {
  data_unlocked_scan(s, b, NULL);
}

void data_unlocked_scan(const proto_sheet *s, core_buf *b, data_paths *abs) {
  found f = {b, abs};
  if (!s->sheet_dir)
    return;
  for (size_t i = 0; i < s->n_arms; i++)
    check_template_words(s, s->arms[i].run, NULL, &f);
  /* A var's value goes into the commands as it is. */
  for (size_t i = 0; i < s->n_vars; i++) {
    char label[300];
    snprintf(label, sizeof label, "vars.%s", s->vars[i].name);
    check_template_words(s, s->vars[i].value, label, &f);
  }
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *w = &s->workloads[i];
    check_template_words(s, w->cmd, NULL, &f);
    check_template_words(s, w->prepare, NULL, &f);
    check_template_words(s, w->cleanup, NULL, &f);
    for (size_t j = 0; j < w->n_steps; j++)
      check_template_words(s, w->steps[j], NULL, &f);
  }
}
