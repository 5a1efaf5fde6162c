/* file.c: reading and durably writing files; folders, their listings and
 * their removal.
 * SPDX-License-Identifier: MIT
 */
/* O_PATH */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

/* Reading */

/* What a non-regular file is, for messages. */
static const char *kind_of(unsigned mode) {
  if (S_ISLNK(mode))
    return "a symbolic link";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISDIR(mode))
    return "a folder";
  return "not a regular file";
}

core_status core_not_regular(core_err *err, const char *path, unsigned mode) {
  return core_fail(err, CORE_EIO,
                   "%s: is %s, not a regular file; prereg leaves it as it "
                   "is",
                   path, kind_of(mode));
}

core_status core_check_sole(int fd, const char *path, core_err *err) {
  struct stat sb;
  if (fstat(fd, &sb) != 0)
    return core_fail(err, CORE_EIO, "%s: cannot stat: %s", path,
                     strerror(errno));
  if (!S_ISREG(sb.st_mode))
    return core_not_regular(err, path, (unsigned)sb.st_mode);
  if (sb.st_nlink != 1)
    return core_fail(err, CORE_EIO,
                     "%s: has %lu hard links; another name shares its "
                     "content, so prereg does not change it and leaves it as "
                     "it is (replace it with a copy of its own: cp F F.new && "
                     "mv F.new F)",
                     path, (unsigned long)sb.st_nlink);
  return CORE_OK;
}

core_status core_open_regular_write(const char *path, int flags, int *fd,
                                    core_err *err) {
  struct stat sb;
  core_status st;
  /* Truncated only once checked: O_TRUNC would cut a hard link's
   * target before the check could see it. */
  int trunc = (flags & O_TRUNC) != 0;
  *fd = open(
      path, (flags & ~O_TRUNC) | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
      0644);
  if (*fd < 0) {
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
      return core_not_regular(err, path, (unsigned)sb.st_mode);
    return core_fail(err, CORE_EIO, "%s: cannot open: %s", path,
                     strerror(errno));
  }
  if ((st = core_check_sole(*fd, path, err)) != CORE_OK) {
    close(*fd);
    *fd = -1;
    return st;
  }
  if (trunc && ftruncate(*fd, 0) != 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot truncate: %s", path,
                   strerror(errno));
    close(*fd);
    *fd = -1;
    return st;
  }
  /* O_NONBLOCK only kept the open from waiting on a FIFO. */
  fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK);
  return CORE_OK;
}

core_status core_open_regular(const char *path, int follow, int *fd,
                              size_t *size, core_err *err) {
  struct stat before, sb;
  int f;
  *fd = -1;
  if (size)
    *size = 0;
  /* Looked at before it is opened: opening a device can do something
   * (a tape rewinds), opening a FIFO waits for a writer. */
  if ((follow ? stat(path, &before) : lstat(path, &before)) != 0)
    return core_fail(err, CORE_EIO, "%s: cannot open: %s", path,
                     strerror(errno));
  if (!S_ISREG(before.st_mode))
    return core_not_regular(err, path, (unsigned)before.st_mode);
  f = open(path,
           O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
  if (f < 0)
    return core_fail(err, CORE_EIO, "%s: cannot open: %s", path,
                     errno == ELOOP ? "a symbolic link" : strerror(errno));
  /* And again once open: it may have been swapped in between. */
  if (fstat(f, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      sb.st_ino != before.st_ino || sb.st_dev != before.st_dev) {
    close(f);
    return core_fail(err, CORE_EIO,
                     "%s: changed while it was opened; prereg leaves it as "
                     "it is",
                     path);
  }
  /* O_NONBLOCK only kept the open from waiting; reads of a regular file
   * never do. */
  fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
  *fd = f;
  if (size)
    *size = sb.st_size > 0 ? (size_t)sb.st_size : 0;
  return CORE_OK;
}

static core_status too_big(core_err *err, const char *path, size_t max) {
  return core_fail(err, CORE_EIO,
                   "%s: larger than the %zu bytes prereg reads from such a "
                   "file",
                   path, max);
}

core_status core_read_fd(int fd, const char *path, size_t max, char **data,
                         size_t *len, core_err *err) {
  struct stat sb;
  size_t cap, n = 0;
  char *buf;
  *data = NULL;
  *len = 0;
  if (fstat(fd, &sb) != 0)
    return core_fail(err, CORE_EIO, "%s: cannot read: %s", path,
                     strerror(errno));
  if (!S_ISREG(sb.st_mode))
    return core_not_regular(err, path, (unsigned)sb.st_mode);
  if (sb.st_size > 0 && (unsigned long long)sb.st_size > max)
    return too_big(err, path, max);
  /* The size is a hint (a file may grow, /proc files say 0): room for
   * one byte more than it, so that the end is seen without a second
   * allocation, and never more than max + 1. */
  cap = (sb.st_size > 0 ? (size_t)sb.st_size : 4096) + 1;
  if (cap > max + 1)
    cap = max + 1;
  if (!(buf = core_malloc(cap + 1)))
    return core_fail(err, CORE_ENOMEM, "%s: out of memory reading it", path);
  for (;;) {
    ssize_t r;
    if (n == cap) {
      size_t ncap = cap > (max + 1) / 2 ? max + 1 : cap * 2;
      char *nb;
      if (n > max) {
        core_free(buf);
        return too_big(err, path, max);
      }
      if (!(nb = core_realloc(buf, ncap + 1))) {
        core_free(buf);
        return core_fail(err, CORE_ENOMEM, "%s: out of memory reading it",
                         path);
      }
      buf = nb;
      cap = ncap;
    }
    r = read(fd, buf + n, cap - n);
    if (r == 0)
      break;
    if (r < 0) {
      int e = errno;
      if (e == EINTR)
        continue;
      core_free(buf);
      return core_fail(err, CORE_EIO, "%s: cannot read: %s", path,
                       strerror(e));
    }
    n += (size_t)r;
  }
  if (n > max) {
    core_free(buf);
    return too_big(err, path, max);
  }
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return CORE_OK;
}

core_status core_read_file_max(const char *path, size_t max, int follow,
                               char **data, size_t *len, core_err *err) {
  int fd;
  core_status st;
  *data = NULL;
  *len = 0;
  if ((st = core_open_regular(path, follow, &fd, NULL, err)) != CORE_OK)
    return st;
  st = core_read_fd(fd, path, max, data, len, err);
  close(fd);
  return st;
}

core_status core_read_file(const char *path, char **data, size_t *len,
                           core_err *err) {
  return core_read_file_max(path, CORE_READ_MAX, 0, data, len, err);
}

core_status core_chmod_regular(const char *path, unsigned mode,
                               core_err *err) {
  int fd;
  core_status st = core_open_regular(path, 0, &fd, NULL, err);
  if (st != CORE_OK)
    return st;
  if ((st = core_check_sole(fd, path, err)) != CORE_OK) {
    close(fd);
    return st;
  }
  if (fchmod(fd, (mode_t)mode) != 0)
    st = core_fail(err, CORE_EIO, "%s: cannot set mode: %s", path,
                   strerror(errno));
  close(fd);
  return st;
}

static char *parent_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return core_strdup(".");
  if (slash == path)
    return core_strdup("/");
  return core_strndup(path, (size_t)(slash - path));
}

core_status core_fsync_dir(const char *path, core_err *err) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return core_fail(err, CORE_EIO, "%s: cannot open folder: %s", path,
                     strerror(errno));
  if (fsync(fd) != 0 && errno != EINVAL) {
    int e = errno;
    close(fd);
    return core_fail(err, CORE_EIO, "%s: cannot sync folder: %s", path,
                     strerror(e));
  }
  close(fd);
  return CORE_OK;
}

/* The last component of path (after its last slash). */
static const char *base_of(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

core_status core_open_dir(const char *path, int *dfd, core_err *err) {
  *dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*dfd >= 0)
    return CORE_OK;
  if (errno == ELOOP || errno == ENOTDIR) {
    struct stat sb;
    if (lstat(path, &sb) == 0)
      return core_fail(err, CORE_EIO,
                       "%s: is %s, not a folder; prereg writes only into "
                       "real folders and leaves it as it is",
                       path, kind_of((unsigned)sb.st_mode));
  }
  return core_fail(err, CORE_EIO, "%s: cannot open folder: %s", path,
                   strerror(errno));
}

core_status core_check_dir(const char *path, core_err *err) {
  int dfd;
  core_status st = core_open_dir(path, &dfd, err);
  if (st == CORE_OK)
    close(dfd);
  return st;
}

/* Creates name in the folder open at dfd, anew: never through a link or
 * into a file that is there already. A regular file of that name is the
 * debris of an earlier prereg that had our pid (kill -9): it goes. */
static int create_new(int dfd, const char *name, const char *path,
                      core_err *err) {
  for (int tries = 0; tries < 2; tries++) {
    struct stat sb;
    int fd = openat(
        dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
      return fd;
    if (errno != EEXIST || fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
      break;
    if (!S_ISREG(sb.st_mode)) {
      core_not_regular(err, path, (unsigned)sb.st_mode);
      return -1;
    }
    if (unlinkat(dfd, name, 0) != 0)
      break;
  }
  core_fail(err, CORE_EIO, "%s: cannot create: %s", path, strerror(errno));
  return -1;
}

core_status core_write_all(int fd, const void *data, size_t len,
                           const char *path, core_err *err) {
  const char *p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return core_fail(err, CORE_EIO, "%s: cannot write: %s", path,
                       n < 0 ? strerror(errno) : "no progress");
    p += n;
    len -= (size_t)n;
  }
  return CORE_OK;
}

/* CORE_OK when the file name in the folder open at dfd is still a
 * regular file with one name whose SHA-256 is expect (read through no
 * link, at most CORE_READ_MAX bytes). */
static core_status still_same(int dfd, const char *name, const char *path,
                              const char *expect, core_err *err) {
  char buf[65536], hex[CORE_SHA256_HEX];
  struct stat sb;
  ssize_t got;
  size_t total = 0;
  core_sha256_ctx *c;
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
      sb.st_nlink != 1) {
    if (fd >= 0)
      close(fd);
    return core_fail(err, CORE_ELOCK,
                     "%s: no longer the regular file with one name it was "
                     "when read; left as it is",
                     path);
  }
  if (!(c = core_sha256_begin())) {
    close(fd);
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
  }
  while ((got = read(fd, buf, sizeof buf)) > 0 && total <= CORE_READ_MAX) {
    core_sha256_update(c, buf, (size_t)got);
    total += (size_t)got;
  }
  core_sha256_end(c, hex);
  close(fd);
  if (got < 0 || total > CORE_READ_MAX || strcmp(hex, expect) != 0)
    return core_fail(err, CORE_ELOCK,
                     "%s: changed since prereg read it (sha256 %.12s, now "
                     "%.12s); left as it is: run the command again on the "
                     "new text",
                     path, expect, got < 0 ? "unreadable" : hex);
  return CORE_OK;
}

core_status core_write_file_atomic(const char *path, const void *data,
                                   size_t len, unsigned mode, core_err *err) {
  return core_replace_file_atomic(path, data, len, mode, NULL, err);
}

core_status core_replace_file_atomic(const char *path, const void *data,
                                     size_t len, unsigned mode,
                                     const char *expect, core_err *err) {
  const char *base = base_of(path);
  char *tmp = core_asprintf("%s.tmp.%ld", path, (long)getpid());
  char *dir = parent_of(path);
  core_status st = CORE_OK;
  int fd = -1, dfd = -1, made = 0;
  struct stat sb;
  if (!tmp || !dir) {
    st = core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
    goto cleanup;
  }
  /* Everything by name under the folder's descriptor: the folder cannot
   * be swapped for a link between the checks and the rename. */
  if ((st = core_open_dir(dir, &dfd, err)) != CORE_OK)
    goto cleanup;
  /* A link, a FIFO or a device where the file goes is not replaced:
   * whoever put it there should see it. */
  if (fstatat(dfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
      !S_ISREG(sb.st_mode)) {
    st = core_not_regular(err, path, (unsigned)sb.st_mode);
    goto cleanup;
  }
  if ((fd = create_new(dfd, base_of(tmp), tmp, err)) < 0) {
    st = err ? err->status : CORE_EIO;
    goto cleanup;
  }
  made = 1;
  if ((st = core_write_all(fd, data, len, path, err)) != CORE_OK)
    goto cleanup;
  if (fsync(fd) != 0) {
    st =
        core_fail(err, CORE_EIO, "%s: cannot sync: %s", path, strerror(errno));
    goto cleanup;
  }
  if (fchmod(fd, (mode_t)mode) != 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot set mode: %s", path,
                   strerror(errno));
    goto cleanup;
  }
  close(fd);
  fd = -1;
  if (expect && (st = still_same(dfd, base, path, expect, err)) != CORE_OK)
    goto cleanup;
  if (renameat(dfd, base_of(tmp), dfd, base) != 0) {
    st = core_fail(err, CORE_EIO, "%s: cannot rename into place: %s", path,
                   strerror(errno));
    goto cleanup;
  }
  made = 0;
  if (fsync(dfd) != 0 && errno != EINVAL)
    st = core_fail(err, CORE_EIO, "%s: cannot sync folder: %s", dir,
                   strerror(errno));
cleanup:
  if (fd >= 0)
    close(fd);
  if (made)
    unlinkat(dfd, base_of(tmp), 0);
  if (dfd >= 0)
    close(dfd);
  core_free(tmp);
  core_free(dir);
  return st;
}

core_status core_mkdir_p(const char *path, unsigned mode, core_err *err) {
  char *copy = core_strdup(path);
  char *p;
  if (!copy)
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
  for (p = copy + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char saved = *p;
      *p = '\0';
      if (mkdir(copy, (mode_t)mode) != 0 && errno != EEXIST) {
        core_fail(err, CORE_EIO, "%s: cannot create folder: %s", copy,
                  strerror(errno));
        core_free(copy);
        return CORE_EIO;
      }
      *p = saved;
      if (saved == '\0')
        break;
    }
  }
  core_free(copy);
  if (!core_is_dir(path))
    return core_fail(err, CORE_EIO, "%s: exists and is not a folder", path);
  return CORE_OK;
}

int core_exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

int core_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int core_is_real_dir(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *core_path_join(const char *a, const char *b) {
  size_t la = strlen(a);
  if (la == 0)
    return core_strdup(b);
  if (*b == '\0')
    return core_strdup(a);
  return core_asprintf("%s%s%s", a, a[la - 1] == '/' ? "" : "/", b);
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void core_names_free(char **names, size_t n) {
  for (size_t i = 0; i < n; i++)
    core_free(names[i]);
  core_free(names);
}

/* Reads the names of the folder d (closed here) into a sorted list. */
static core_status list_open_dir(DIR *d, const char *dir, char ***names,
                                 size_t *n, core_err *err) {
  struct dirent *de;
  char **v = NULL;
  size_t len = 0, cap = 0;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    char **nv = core_grow(v, &cap, len, sizeof *nv, 16);
    if (!nv)
      goto oom;
    v = nv;
    if (!(v[len] = core_strdup(de->d_name)))
      goto oom;
    len++;
  }
  closedir(d);
  if (len > 1)
    qsort(v, len, sizeof *v, cmp_names);
  *names = v;
  *n = len;
  return CORE_OK;
oom:
  closedir(d);
  core_names_free(v, len);
  return core_fail(err, CORE_ENOMEM, "%s: out of memory", dir);
}

core_status core_list_dir(const char *dir, char ***names, size_t *n,
                          core_err *err) {
  DIR *d = opendir(dir);
  *names = NULL;
  *n = 0;
  if (!d) {
    if (errno == ENOENT)
      return CORE_OK;
    return core_fail(err, CORE_EIO, "%s: cannot open folder: %s", dir,
                     strerror(errno));
  }
  return list_open_dir(d, dir, names, n, err);
}

core_status core_list_dir_at(int dfd, const char *dir, char ***names,
                             size_t *n, core_err *err) {
  int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  *names = NULL;
  *n = 0;
  if (!d) {
    if (fd >= 0)
      close(fd);
    return core_fail(err, CORE_EIO, "%s: cannot open folder: %s", dir,
                     strerror(errno));
  }
  return list_open_dir(d, dir, names, n, err);
}

/* Removing a tree */

/* The first failure of a removal, kept while it goes on. */
static void remove_failed(core_status *st, core_err *err, const char *where,
                          const char *name) {
  if (*st == CORE_OK)
    *st = core_fail(err, CORE_EIO, "%s/%s: cannot remove: %s", where, name,
                    strerror(errno));
}

/* Makes the folder open (O_PATH) at pfd readable and searchable for its
 * owner, through the descriptor: /proc/self/fd/N names the very inode
 * that was opened, never a link that took its place. */
static int own_dir_open(int pfd, unsigned mode) {
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
  if (chmod(self, (mode_t)((mode & 07777) | 0700)) != 0)
    return -1;
  return open(self, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

core_status core_open_subdir(int dfd, const char *name, const char *path,
                             int *sub, core_err *err) {
  struct stat sb;
  int pfd;
  *sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*sub >= 0) {
    /* Its entries go only if it is writable: for root it always is; a
     * folder of ours a command made read-only is made writable through
     * the descriptor just opened. */
    if (geteuid() != 0 && fstat(*sub, &sb) == 0 && sb.st_uid == geteuid() &&
        (sb.st_mode & 0700) != 0700)
      (void)fchmod(*sub, (sb.st_mode & 07777) | 0700);
    return CORE_OK;
  }
  if (errno != EACCES)
    return core_fail(err, CORE_EIO, "%s: cannot open folder: %s", path,
                     errno == ELOOP ? "a symbolic link" : strerror(errno));
  /* Unreadable to us: a folder of ours a command made so is opened after
   * a chmod through its own descriptor; anyone else's is left alone. */
  pfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (pfd < 0 || fstat(pfd, &sb) != 0 || sb.st_uid != geteuid()) {
    if (pfd >= 0)
      close(pfd);
    return core_fail(err, CORE_EIO,
                     "%s: cannot open folder, and it is not prereg's user's "
                     "to make readable; prereg leaves it as it is",
                     path);
  }
  *sub = own_dir_open(pfd, (unsigned)sb.st_mode);
  close(pfd);
  if (*sub < 0)
    return core_fail(err, CORE_EIO, "%s: cannot open folder: %s", path,
                     strerror(errno));
  return CORE_OK;
}

/* Empties the folder open at dfd (path is for messages). Works on
 * descriptors (openat, fstatat, unlinkat, O_NOFOLLOW): no path is
 * resolved twice, so no entry can be swapped for a link between the look
 * and the removal, no mode is changed through a name, and the depth is
 * not bounded by PATH_MAX. */
static void empty_folder(int dfd, const char *path, core_status *st,
                         core_err *err) {
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    remove_failed(st, err, path, ".");
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    const char *name = e->d_name;
    struct stat sb;
    if (!strcmp(name, ".") || !strcmp(name, ".."))
      continue;
    if (fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
      continue; /* gone meanwhile */
    if (S_ISDIR(sb.st_mode)) {
      char *subpath = core_path_join(path, name);
      int sub;
      core_err e2;
      if (core_open_subdir(dirfd(d), name, subpath ? subpath : path, &sub,
                           &e2) != CORE_OK) {
        if (*st == CORE_OK) {
          *st = e2.status;
          if (err)
            *err = e2;
        }
        core_free(subpath);
        continue;
      }
      empty_folder(sub, subpath ? subpath : path, st, err);
      core_free(subpath);
    }
    if (unlinkat(dirfd(d), name, S_ISDIR(sb.st_mode) ? AT_REMOVEDIR : 0) !=
            0 &&
        errno != ENOENT)
      remove_failed(st, err, path, name);
  }
  closedir(d);
}

/* Removes name in the folder open at pfd (path for messages); own: a
 * folder must belong to prereg's user, else it is left and refused. */
static core_status remove_at(int pfd, const char *name, const char *path,
                             int own, core_err *err) {
  struct stat sb;
  core_status st = CORE_OK;
  int dfd;
  if (fstatat(pfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT
               ? CORE_OK
               : core_fail(err, CORE_EIO, "%s: %s", path, strerror(errno));
  if (!S_ISDIR(sb.st_mode)) {
    if (own)
      return core_fail(err, CORE_EIO,
                       "%s: is %s, not a folder prereg made; prereg leaves "
                       "it as it is",
                       path, kind_of((unsigned)sb.st_mode));
    if (unlinkat(pfd, name, 0) != 0 && errno != ENOENT)
      return core_fail(err, CORE_EIO, "%s: cannot remove: %s", path,
                       strerror(errno));
    return CORE_OK;
  }
  if ((st = core_open_subdir(pfd, name, path, &dfd, err)) != CORE_OK)
    return st;
  /* What is emptied is what was opened: its owner is checked there. */
  if (own && (fstat(dfd, &sb) != 0 || sb.st_uid != geteuid())) {
    close(dfd);
    return core_fail(err, CORE_EIO,
                     "%s: a folder prereg would remove, but owned by uid "
                     "%ld, not by prereg's user: prereg did not make it and "
                     "leaves it as it is (remove it yourself)",
                     path, (long)sb.st_uid);
  }
  empty_folder(dfd, path, &st, err);
  if (unlinkat(pfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT &&
      st == CORE_OK)
    st = core_fail(err, CORE_EIO, "%s: cannot remove: %s", path,
                   strerror(errno));
  return st;
}

static core_status remove_path(const char *path, int own, core_err *err) {
  size_t n = strlen(path);
  char *p, *dir;
  core_status st = CORE_OK;
  int pfd;
  while (n > 1 && path[n - 1] == '/')
    n--;
  p = core_strndup(path, n);
  dir = p ? parent_of(p) : NULL;
  if (!p || !dir) {
    core_free(p);
    return core_fail(err, CORE_ENOMEM, "%s: out of memory", path);
  }
  pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0 && errno != ENOENT)
    st = core_fail(err, CORE_EIO, "%s: %s", path, strerror(errno));
  else if (pfd >= 0)
    st = remove_at(pfd, base_of(p), p, own, err);
  if (pfd >= 0)
    close(pfd);
  core_free(dir);
  core_free(p);
  return st;
}

core_status core_remove_tree(const char *path, core_err *err) {
  return remove_path(path, 0, err);
}

core_status core_remove_own_tree(const char *path, core_err *err) {
  return remove_path(path, 1, err);
}
