/* experiment.c: DATA/ID, its chain of sheet versions and the lock that
 * keeps data from being collected under an unrecorded sheet.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data_internal.h"

/* Versions chain */

static void amendments_free(data_amendment *a, size_t n) {
  for (size_t i = 0; i < n; i++) {
    core_free(a[i].date);
    core_free(a[i].why);
    for (size_t j = 0; j < a[i].n_supersedes; j++)
      core_free(a[i].supersedes[j]);
    core_free(a[i].supersedes);
  }
  core_free(a);
}

static void version_clear(data_version *v) {
  core_free(v->filed_at);
  core_free(v->path);
  core_free(v->date);
  core_free(v->why);
  for (size_t j = 0; j < v->n_supersedes; j++)
    core_free(v->supersedes[j]);
  core_free(v->supersedes);
  amendments_free(v->amendments, v->n_amendments);
  for (size_t j = 0; j < v->n_inputs; j++)
    core_free(v->inputs[j].path);
  core_free(v->inputs);
  core_names_free(v->unlocked, v->n_unlocked);
  memset(v, 0, sizeof *v);
}

static void chain_free(data_experiment *exp) {
  for (size_t i = 0; i < exp->n_versions; i++)
    version_clear(&exp->versions[i]);
  core_free(exp->versions);
  exp->versions = NULL;
  exp->n_versions = 0;
}

/* Takes the holder line out of the lock file (held at fd) and puts its
 * modification time back: the lock leaves no trace once released. */
static void clear_holder(const data_experiment *exp, int fd) {
  struct timespec t[2] = {{0, UTIME_OMIT},
                          {(time_t)exp->lock_mtime_sec, exp->lock_mtime_nsec}};
  if (ftruncate(fd, 0) == 0 && futimens(fd, t) != 0) {
    /* best effort: the lock is released all the same */
  }
}

void data_experiment_free(data_experiment *exp) {
  if (!exp)
    return;
  chain_free(exp);
  if (exp->lock_fd >= 0) {
    clear_holder(exp, exp->lock_fd);
    close(exp->lock_fd); /* releases the flock */
  }
  core_free(exp->dir);
  core_free(exp->id);
  core_free(exp);
}

static char *json_str_dup(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return core_strdup(json_is_string(v) ? json_string_value(v) : "");
}

/* Copies a JSON array of strings; NULL entries are out of memory. */
static int str_list(json_t *arr, char ***out, size_t *n) {
  size_t i;
  json_t *v;
  *out = NULL;
  *n = 0;
  if (!json_is_array(arr) || json_array_size(arr) == 0)
    return 1;
  if (!(*out = core_calloc(json_array_size(arr), sizeof **out)))
    return 0;
  json_array_foreach(arr, i, v) {
    if (!((*out)[i] =
              core_strdup(json_is_string(v) ? json_string_value(v) : "")))
      return 0;
    *n = i + 1;
  }
  return 1;
}

/* v's inputs from the version's "inputs" list ({path, sha256, bytes});
 * 0 when out of memory. */
static int inputs_from_json(json_t *arr, data_version *v) {
  size_t i;
  json_t *item;
  if (!json_is_array(arr) || json_array_size(arr) == 0)
    return 1;
  if (!(v->inputs = core_calloc(json_array_size(arr), sizeof *v->inputs)))
    return 0;
  json_array_foreach(arr, i, item) {
    const char *hex = json_string_value(json_object_get(item, "sha256"));
    data_input *in = &v->inputs[i];
    v->n_inputs = i + 1;
    if (!(in->path = json_str_dup(item, "path")))
      return 0;
    snprintf(in->sha256, sizeof in->sha256, "%s", hex ? hex : "");
    in->bytes = (long long)json_integer_value(json_object_get(item, "bytes"));
    in->by_digest = json_is_false(json_object_get(item, "copied"));
  }
  return 1;
}

/* Fills v from root, the JSON of versions/vK.json named name. */
static core_status version_from_json(json_t *root, const char *name, size_t k,
                                     data_version *v, core_err *err) {
  json_t *arr, *item;
  size_t i;
  if (!json_is_object(root) ||
      json_integer_value(json_object_get(root, "version")) != (json_int_t)k ||
      !json_is_string(json_object_get(root, "sha256")) ||
      strlen(json_string_value(json_object_get(root, "sha256"))) != 64)
    return core_fail(err, CORE_EINPUT,
                     "%s: lacks \"version\": %zu or a \"sha256\"; the frozen "
                     "chain is damaged: run prereg verify",
                     name, k);
  v->number = (int)k;
  memcpy(v->sha256, json_string_value(json_object_get(root, "sha256")), 64);
  v->sha256[64] = '\0';
  v->filed_at = json_str_dup(root, "filed_at");
  v->path = core_asprintf("versions/v%zu.lua", k);
  v->rows_when_filed = (long)json_integer_value(
      json_object_get(json_object_get(root, "data"), "runs_total"));
  if (k > 0) {
    v->date = json_str_dup(root, "date");
    v->why = json_str_dup(root, "why");
    if (!v->date || !v->why)
      goto oom;
  }
  if (!v->filed_at || !v->path ||
      !str_list(json_object_get(root, "supersedes"), &v->supersedes,
                &v->n_supersedes))
    goto oom;
  if (!inputs_from_json(json_object_get(root, "inputs"), v) ||
      !str_list(json_object_get(root, "unlocked"), &v->unlocked,
                &v->n_unlocked))
    goto oom;
  v->unlocked_more =
      (long)json_integer_value(json_object_get(root, "unlocked_more"));
  arr = json_object_get(root, "amendments");
  if (json_is_array(arr) && json_array_size(arr) > 0) {
    v->amendments = core_calloc(json_array_size(arr), sizeof *v->amendments);
    if (!v->amendments)
      goto oom;
    json_array_foreach(arr, i, item) {
      data_amendment *a = &v->amendments[i];
      v->n_amendments = i + 1;
      a->date = json_str_dup(item, "date");
      a->why = json_str_dup(item, "why");
      if (!a->date || !a->why ||
          !str_list(json_object_get(item, "supersedes"), &a->supersedes,
                    &a->n_supersedes))
        goto oom;
    }
  }
  return CORE_OK;
oom:
  version_clear(v);
  return core_fail(err, CORE_ENOMEM, "%s: out of memory", name);
}

core_status data_version_parse(const char *name, const char *text, size_t len,
                               size_t k, data_version *v, core_err *err) {
  json_error_t je;
  json_t *root;
  core_status st;
  memset(v, 0, sizeof *v);
  data_json_init();
  if (!(root = json_loadb(text, len, 0, &je)))
    return core_fail(err, CORE_EINPUT,
                     "%s:%d: not valid JSON (%s); the frozen chain is "
                     "damaged: run prereg verify",
                     name, je.line, je.text);
  st = version_from_json(root, name, k, v, err);
  json_decref(root);
  return st;
}

void data_version_clear(data_version *v) {
  version_clear(v);
}

static core_status load_version_json(const char *path, size_t k,
                                     data_version *v, core_err *err) {
  char *text = NULL;
  size_t len = 0;
  core_status st;
  memset(v, 0, sizeof *v);
  if ((st = core_read_file(path, &text, &len, err)) != CORE_OK)
    return st;
  st = data_version_parse(path, text, len, k, v, err);
  core_free(text);
  return st;
}

/* Loads versions/v0.json, v1.json, ... up to the first one missing. */
core_status data_load_chain(data_experiment *exp, core_err *err) {
  chain_free(exp);
  for (size_t k = 0;; k++) {
    char *path = core_asprintf("%s/versions/v%zu.json", exp->dir, k);
    data_version *nv;
    core_status st;
    if (!path)
      return core_fail(err, CORE_ENOMEM, "out of memory");
    if (!core_exists(path)) {
      core_free(path);
      return CORE_OK;
    }
    nv = core_realloc(exp->versions, (k + 1) * sizeof *nv);
    if (!nv) {
      core_free(path);
      return core_fail(err, CORE_ENOMEM, "out of memory");
    }
    exp->versions = nv;
    st = load_version_json(path, k, &exp->versions[k], err);
    core_free(path);
    if (st != CORE_OK)
      return st;
    exp->n_versions = k + 1;
  }
}

core_status data_experiment_open(const char *data_dir,
                                 const proto_sheet *sheet,
                                 data_experiment **out, core_err *err) {
  data_experiment *exp;
  core_status st;
  *out = NULL;
  data_json_init();
  if (!sheet->id || !sheet->id[0] || strchr(sheet->id, '/') ||
      sheet->id[0] == '.')
    return core_fail(err, CORE_EPROTOCOL,
                     "%s: id: '%s' cannot name a data "
                     "folder",
                     sheet->path ? sheet->path : "sheet",
                     sheet->id ? sheet->id : "");
  if (!(exp = core_calloc(1, sizeof *exp)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  exp->lock_fd = -1;
  exp->id = core_strdup(sheet->id);
  exp->dir = core_path_join(data_dir, sheet->id);
  if (!exp->id || !exp->dir) {
    data_experiment_free(exp);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if ((st = data_load_chain(exp, err)) != CORE_OK) {
    data_experiment_free(exp);
    return st;
  }
  *out = exp;
  return CORE_OK;
}

/* The lock and who holds it */

/* The lock file says who holds it (written when the flock is taken, taken
 * out again when it is released), so that a second command can name the
 * first instead of only refusing:
 * "pid 4242 since 2026-11-30T01:37:25Z: prereg run s.lua". */
#define HOLDER_MAX 512 /* the holder line's buffer (longer is cut) */

/* Our own command line, its arguments joined by spaces and anything
 * unprintable made '?', cut to fit out. */
static void own_command(char *out, size_t size) {
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, out, size - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n <= 0) {
    snprintf(out, size, "prereg");
    return;
  }
  while (n > 0 && out[n - 1] == '\0')
    n--;
  for (ssize_t i = 0; i < n; i++)
    if (out[i] == '\0')
      out[i] = ' ';
    else if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
      out[i] = '?';
  out[n] = '\0';
}

static void write_holder(int fd) {
  char cmd[HOLDER_MAX - 96], now[32], line[HOLDER_MAX];
  int n;
  own_command(cmd, sizeof cmd);
  core_utc_now(now);
  n = snprintf(line, sizeof line, "pid %ld since %s: %s\n", (long)getpid(),
               now, cmd);
  /* Best effort: the flock is the lock, this only names its holder. */
  if (n > 0 && ftruncate(fd, 0) == 0 &&
      pwrite(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1,
             0) < 0) {
    /* an unnamed holder is still a holder */
  }
}

/* What the lock file open at fd says about its holder, on one line of
 * printable text (empty when it says nothing). */
static void read_holder(int fd, char *out, size_t size) {
  ssize_t n = pread(fd, out, size - 1, 0);
  out[n > 0 ? n : 0] = '\0';
  for (char *p = out; *p; p++)
    if (*p == '\n') {
      *p = '\0';
      break;
    } else if ((unsigned char)*p < 0x20 || *p == 0x7f) {
      *p = '?';
    }
}

static core_status lock_busy(const char *path, int fd, core_err *err) {
  char who[HOLDER_MAX];
  read_holder(fd, who, sizeof who);
  return core_fail(err, CORE_ERUN,
                   "%s: another prereg command is writing to this "
                   "experiment (%s); wait for it to finish, then retry",
                   path, who[0] ? who : "it has not said who it is yet");
}

core_status data_experiment_lock(data_experiment *exp, core_err *err) {
  char *path;
  core_status st;
  int fd;
  if (exp->lock_fd >= 0)
    return CORE_OK;
  if ((st = core_mkdir_p(exp->dir, 0755, err)) != CORE_OK ||
      (st = core_check_dir(exp->dir, err)) != CORE_OK)
    return st;
  if (!(path = core_path_join(exp->dir, ".lock")))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if ((st = core_open_regular_write(path, O_RDWR, &fd, err)) != CORE_OK) {
    core_free(path);
    return st;
  }
  /* Not blocking: a second `run` waiting silently behind a long first one
   * would look hung; saying so lets the user decide. */
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    st = e == EWOULDBLOCK ? lock_busy(path, fd, err)
                          : core_fail(err, CORE_ERUN, "%s: cannot lock: %s",
                                      path, strerror(e));
    close(fd);
    core_free(path);
    return st;
  }
  core_free(path);
  {
    struct stat sb;
    if (fstat(fd, &sb) == 0) {
      exp->lock_mtime_sec = (long long)sb.st_mtim.tv_sec;
      exp->lock_mtime_nsec = sb.st_mtim.tv_nsec;
    }
  }
  write_holder(fd);
  exp->lock_fd = fd;
  /* The chain may have grown between open and lock. */
  return data_load_chain(exp, err);
}

proto_sheet *data_load_version(const data_experiment *exp, int n,
                               core_err *err) {
  char *path, *text = NULL;
  size_t len = 0;
  proto_sheet *s = NULL;
  if (n < 0 || (size_t)n >= exp->n_versions) {
    core_fail(err, CORE_EINPUT, "%s: no version v%d (the chain has %zu)",
              exp->dir, n, exp->n_versions);
    return NULL;
  }
  if (!(path = core_path_join(exp->dir, exp->versions[n].path))) {
    core_fail(err, CORE_ENOMEM, "out of memory");
    return NULL;
  }
  if (core_read_file_max(path, PROTO_MAX_TEXT, 0, &text, &len, err) == CORE_OK)
    s = proto_sheet_load_text(path, text, len, err);
  core_free(text);
  core_free(path);
  return s;
}

/* The pilot */

core_status data_experiment_open_dir(const char *dir, const char *id,
                                     data_experiment **out, core_err *err) {
  data_experiment *exp;
  core_status st;
  *out = NULL;
  data_json_init();
  if (!(exp = core_calloc(1, sizeof *exp)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  exp->lock_fd = -1;
  exp->id = core_strdup(id);
  exp->dir = core_strdup(dir);
  if (!exp->id || !exp->dir) {
    data_experiment_free(exp);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if ((st = data_load_chain(exp, err)) != CORE_OK) {
    data_experiment_free(exp);
    return st;
  }
  *out = exp;
  return CORE_OK;
}

core_status data_pilot_open(const data_experiment *exp, data_experiment **out,
                            core_err *err) {
  char *dir = core_path_join(exp->dir, DATA_PILOT_DIR);
  core_status st;
  if (!dir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = data_experiment_open_dir(dir, exp->id, out, err);
  core_free(dir);
  return st;
}

core_status data_pilot_cover(const data_experiment *exp,
                             const data_experiment *pilot, core_err *err) {
  data_manifest have, pm;
  char **add = NULL;
  size_t n = 0;
  core_status st = data_manifest_load(exp->dir, &have, NULL, err);
  if (st != CORE_OK)
    return st;
  if ((st = data_manifest_load(pilot->dir, &pm, NULL, err)) != CORE_OK) {
    data_manifest_free(&have);
    return st;
  }
  if (!(add = core_calloc(pm.n + 1, sizeof *add)))
    st = core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t i = 0; st == CORE_OK && i < pm.n; i++) {
    char *rel = core_path_join(DATA_PILOT_DIR, pm.e[i].path);
    if (!rel) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    } else if (data_manifest_find(&have, rel)) {
      core_free(rel);
    } else {
      add[n++] = rel;
    }
  }
  if (st == CORE_OK && n > 0)
    st = data_manifest_add(exp->dir, add, n, err);
  core_names_free(add, n);
  data_manifest_free(&have);
  data_manifest_free(&pm);
  return st;
}
