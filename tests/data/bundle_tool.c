/* bundle_tool.c: drives bundles/ directly, for the bundle tests on
 * data folders laid out by hand (no sheet loader or data layer needed).
 * SPDX-License-Identifier: MIT
 *
 *   bundle_tool write EXPDIR OUT     publish EXPDIR (with EXPDIR/report as
 *                                    its report) as OUT, print its sha256
 *   bundle_tool verify BUNDLE        print the report; exit as prereg would
 *   bundle_tool extract BUNDLE       print the sheet path, then "SHA256  PATH"
 *                                    (mode) of every extracted file, sorted
 *   bundle_tool run BUNDLE CMD...    extract, then run CMD with the words
 *                                    @SHEET and @DATA replaced by the
 *                                    extracted sheet and data folder (what
 *                                    cli_cmd_resolve_input hands a command)
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bundles/bundles.h"
#include "data/data.h"

static char **files;
static size_t n_files;
static size_t root_len;

static int collect(const char *p, const struct stat *sb, int flag,
                   struct FTW *ftw) {
  (void)ftw;
  if (flag == FTW_F || flag == FTW_SL) {
    char *line = core_asprintf("%s %o", p + root_len + 1,
                               (unsigned)(sb->st_mode & 07777));
    char **v = core_realloc(files, (n_files + 1) * sizeof *v);
    if (!line || !v)
      return 1;
    files = v;
    files[n_files++] = line;
  }
  return 0;
}

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  core_err err = {0};
  core_status st = CORE_EUSAGE;
  core_buf report;
  core_buf_init(&report);
  if (argc == 4 && strcmp(argv[1], "write") == 0) {
    char sha[CORE_SHA256_HEX];
    char *report_dir = core_path_join(argv[2], "report");
    st = data_bundle_write(argv[2], NULL, report_dir, argv[3], sha, &err);
    core_free(report_dir);
    if (st == CORE_OK)
      printf("%s\n", sha);
  } else if (argc == 3 && strcmp(argv[1], "verify") == 0) {
    st = data_bundle_verify(argv[2], &report, &err);
    if (report.data)
      fputs(report.data, stdout);
  } else if (argc == 3 && strcmp(argv[1], "extract") == 0) {
    char *dir = NULL, *sheet = NULL;
    st = data_bundle_extract(argv[2], &dir, &sheet, &err);
    if (st == CORE_OK) {
      printf("sheet %s\n", sheet + strlen(dir) + 1);
      root_len = strlen(dir);
      nftw(dir, collect, 16, FTW_PHYS);
      qsort(files, n_files, sizeof *files, cmp);
      for (size_t i = 0; i < n_files; i++) {
        char sha[CORE_SHA256_HEX], *path, *sp;
        sp = strchr(files[i], ' ');
        *sp = '\0';
        path = core_path_join(dir, files[i]);
        core_sha256_file(path, sha, &err);
        printf("%s  %s %s\n", sha, files[i], sp + 1);
        core_free(path);
        core_free(files[i]);
      }
      core_free(files);
    }
    core_free(dir);
    core_free(sheet);
  } else if (argc >= 4 && strcmp(argv[1], "run") == 0) {
    const char *dir = NULL, *sheet = NULL;
    st = data_resolve_input(argv[2], "unused", &sheet, &dir, NULL, &err);
    if (st == CORE_OK) {
      int status = 0;
      pid_t pid;
      fflush(stdout);
      pid = fork();
      if (pid == 0) {
        for (int i = 3; i < argc; i++) {
          if (strcmp(argv[i], "@SHEET") == 0)
            argv[i] = (char *)(size_t)sheet;
          else if (strcmp(argv[i], "@DATA") == 0)
            argv[i] = (char *)(size_t)dir;
        }
        execvp(argv[3], argv + 3);
        _exit(127);
      }
      if (pid < 0 || waitpid(pid, &status, 0) != pid)
        st = core_fail(&err, CORE_ERUN, "cannot run %s", argv[3]);
      else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
  } else {
    core_fail(&err, CORE_EUSAGE,
              "usage: bundle_tool write|verify|extract|run");
  }
  core_buf_free(&report);
  if (st != CORE_OK)
    fprintf(stderr, "bundle_tool: %s\n", err.msg);
  return core_exit_code(st);
}
