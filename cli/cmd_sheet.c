/* cmd_sheet.c: `prereg new` (a starter sheet) and `prereg check`
 * (validate a sheet and print what it declares).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_internal.h"
#include "data/data.h"
#include "protocols/proto.h"

int cli_good_id(const char *id) {
  size_t n = strlen(id);
  if (n == 0 || n > 64)
    return 0;
  for (size_t i = 0; i < n; i++) {
    char c = id[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
             (c == '-' && i > 0);
    if (!ok)
      return 0;
  }
  return 1;
}

/* Creates path with O_EXCL, so that an existing sheet is never replaced,
 * not even by a race with another `new`. */
core_status cli_write_new(const char *path, const core_buf *b,
                          const char *instead, core_err *err) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST)
      return core_fail(err, CORE_EUSAGE, "%s already exists; %s", path,
                       instead);
    return core_fail(err, CORE_EIO, "%s: cannot create: %s", path,
                     strerror(errno));
  }
  if (core_write_all(fd, b->data, b->len, path, err) != CORE_OK) {
    close(fd);
    unlink(path);
    return CORE_EIO;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int e = errno;
    unlink(path);
    return core_fail(err, CORE_EIO, "%s: cannot write: %s", path, strerror(e));
  }
  return CORE_OK;
}

core_status cli_cmd_new(const cli_opts *opts, FILE *out, core_err *err) {
  const char *id = opts->args[0];
  char *path = NULL;
  core_buf b;
  core_status st = CORE_OK;
  proto_sheet *check;
  if (!cli_good_id(id))
    return core_fail(err, CORE_EUSAGE,
                     "new: \"%s\" is not a usable ID: "
                     "use [a-z0-9][a-z0-9-]*, at most 64 bytes (it names "
                     "the experiment's data folder)",
                     id);
  core_buf_init(&b);
  proto_starter(id, &b);
  if (b.oom) {
    core_buf_free(&b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  /* The starter must pass check itself: a user's first step should not
   * be an error message. */
  check = proto_sheet_load_text("starter sheet", b.data, b.len, err);
  if (!check) {
    core_buf_free(&b);
    return err->status ? err->status : CORE_EPROTOCOL;
  }
  proto_sheet_free(check);
  if (opts->out && strcmp(opts->out, "-") == 0) {
    fwrite(b.data, 1, b.len, out);
    core_buf_free(&b);
    return CORE_OK;
  }
  if (opts->out) {
    path = core_strdup(opts->out);
  } else {
    st = core_mkdir_p("protocols", 0755, err);
    if (st == CORE_OK)
      path = core_asprintf("protocols/%s.lua", id);
  }
  if (st == CORE_OK && !path)
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  if (st == CORE_OK)
    st = cli_write_new(path, &b,
                       "prereg new never overwrites a sheet (choose "
                       "another ID or --out FILE)",
                       err);
  if (st == CORE_OK)
    fprintf(out, "wrote %s\nnext: edit it, then run 'prereg check %s'\n", path,
            path);
  core_free(path);
  core_buf_free(&b);
  return st;
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

/* One word of a command: a file of the sheet's folder (named relative to
 * where run starts, or as {sheet_dir}/...) that the lock does not cover. */
static void check_word(const proto_sheet *s, const char *w, size_t len,
                       const char *tmpl, core_buf *b) {
  char rel[512];
  struct stat sb;
  char *full;
  if (len >= 2 && (w[0] == '\'' || w[0] == '"') && w[len - 1] == w[0])
    w++, len -= 2;
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
    core_buf_printf(b,
                    "warning: \"%s\" runs %s, a file of the sheet's folder "
                    "that `inputs` does not list: the lock does not cover "
                    "it (add \"%s\" to inputs and use {sheet_dir}/%s)\n",
                    tmpl, rel, rel, rel);
  core_free(full);
}

static void check_template_words(const proto_sheet *s, const char *t,
                                 core_buf *b) {
  const char *p = t;
  while (t && *p) {
    size_t n;
    while (*p == ' ' || *p == '\t' || *p == ';' || *p == '&' || *p == '|')
      p++;
    n = strcspn(p, " \t;&|");
    if (n)
      check_word(s, p, n, t, b);
    p += n;
  }
}

/* Warnings, never failures: the commands' words that are files of the
 * sheet's folder the lock does not cover. */
static void check_unlisted(const proto_sheet *s, core_buf *b) {
  if (!s->sheet_dir)
    return;
  for (size_t i = 0; i < s->n_arms; i++)
    check_template_words(s, s->arms[i].run, b);
  for (size_t i = 0; i < s->n_workloads; i++) {
    const proto_workload *w = &s->workloads[i];
    check_template_words(s, w->cmd, b);
    check_template_words(s, w->prepare, b);
    check_template_words(s, w->cleanup, b);
    for (size_t j = 0; j < w->n_steps; j++)
      check_template_words(s, w->steps[j], b);
  }
}

core_status cli_cmd_check(const cli_opts *opts, FILE *out, core_err *err) {
  core_buf b;
  data_inputs in;
  proto_sheet *s = proto_sheet_load_to_run(opts->args[0], err);
  if (!s)
    return err->status ? err->status : CORE_EPROTOCOL;
  /* An input that is a link, or too large, is refused here already. */
  if (data_inputs_scan(s, &in, err) != CORE_OK) {
    proto_sheet_free(s);
    return err->status;
  }
  data_inputs_free(&in);
  core_buf_init(&b);
  proto_summary(s, &b);
  check_unlisted(s, &b);
  proto_sheet_free(s);
  if (b.oom) {
    core_buf_free(&b);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if (b.len)
    fwrite(b.data, 1, b.len, out);
  core_buf_free(&b);
  return CORE_OK;
}
