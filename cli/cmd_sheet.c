/* cmd_sheet.c: `prereg new` (a starter sheet) and `prereg check`
 * (validate a sheet and print what it declares).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_internal.h"
#include "protocols/proto.h"

static int good_id(const char *id) {
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
static core_status write_new(const char *path, const core_buf *b,
                             core_err *err) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  size_t off = 0;
  if (fd < 0) {
    if (errno == EEXIST)
      return core_fail(err, CORE_EUSAGE,
                       "%s already exists; prereg new "
                       "never overwrites a sheet (choose another ID or "
                       "--out FILE)",
                       path);
    return core_fail(err, CORE_EIO, "%s: cannot create: %s", path,
                     strerror(errno));
  }
  while (off < b->len) {
    ssize_t n = write(fd, b->data + off, b->len - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int e = errno;
      close(fd);
      unlink(path);
      return core_fail(err, CORE_EIO, "%s: cannot write: %s", path,
                       strerror(e));
    }
    off += (size_t)n;
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
  if (!good_id(id))
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
    st = write_new(path, &b, err);
  if (st == CORE_OK)
    fprintf(out, "wrote %s\nnext: edit it, then run 'prereg check %s'\n", path,
            path);
  core_free(path);
  core_buf_free(&b);
  return st;
}

core_status cli_cmd_check(const cli_opts *opts, FILE *out, core_err *err) {
  core_buf b;
  proto_sheet *s = proto_sheet_load_to_run(opts->args[0], err);
  if (!s)
    return err->status ? err->status : CORE_EPROTOCOL;
  core_buf_init(&b);
  proto_summary(s, &b);
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
