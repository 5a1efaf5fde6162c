/* preflight.c: what a batch checks and records before its first run:
 * cgroups and cold caches where the plan needs them, every arm's
 * `requires`, the image digests and the `versions` commands. A failure
 * refuses the batch before anything runs, never half-way.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <string.h>

#include "run/run_internal.h"

#define CHECK_TIMEOUT_S 120.0

/* Helper commands */

static void trim(char *s) {
  size_t l = strlen(s);
  while (l > 0 && (s[l - 1] == '\n' || s[l - 1] == ' ' || s[l - 1] == '\t' ||
                   s[l - 1] == '\r'))
    s[--l] = 0;
  size_t k = strspn(s, " \t\r\n");
  memmove(s, s + k, strlen(s + k) + 1);
}

/* The failure of a check in words, then what it wrote to stderr: often
 * the real reason ("Cannot connect to the Docker daemon"), usually at its
 * end, so the last 300 bytes, on one line, not starting inside a UTF-8
 * character. */
static void say_why(const run_res *r, char *errout, char *why, size_t cap) {
  int n;
  if (r->why[0])
    n = snprintf(why, cap, "%s", r->why);
  else if (r->timed_out)
    n = snprintf(why, cap, "timed out after %g s", CHECK_TIMEOUT_S);
  else if (!r->exited)
    n = snprintf(why, cap, "killed by signal %d", r->signo);
  else
    n = snprintf(why, cap, "exit code %d", r->exit_code);
  if (!errout || n <= 0 || (size_t)n >= cap)
    return;
  for (char *p = errout; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '\t')
      *p = ' ';
  trim(errout);
  const char *said = errout;
  size_t len = strlen(said);
  if (len > 300) {
    said += len - 300;
    while ((*said & 0xC0) == 0x80)
      said++;
  }
  if (*said)
    snprintf(why + n, cap - (size_t)n, ", saying: %s%s",
             said == errout ? "" : "...", said);
}

/* Runs a preflight, digest or version command; *code is its exit code
 * (-1 when it did not exit); its stdout goes to out when not NULL. why,
 * when not NULL, gets the failure in words (see say_why) when the code
 * is not 0. An error only when the engine failed or the batch was
 * cancelled. */
static core_status run_capture(const char *cmd, core_buf *out, int *code,
                               char *why, size_t whycap, core_err *err) {
  core_buf errout;
  core_buf_init(&errout);
  run_sink so = {.fd = -1, .buf = out, .limit = 64 * 1024};
  run_sink se = {.fd = -1, .buf = &errout, .limit = 4096};
  run_req q = {.cmd = cmd,
               .timeout_s = CHECK_TIMEOUT_S,
               .grace_s = RUN_GRACE_S,
               .out = out ? &so : NULL,
               .err = why ? &se : NULL};
  run_res r;
  core_status st = run_exec(&q, &r, err);
  if (st == CORE_OK) {
    *code = r.exited ? r.exit_code : -1;
    if (why && *code != 0)
      say_why(&r, errout.data, why, whycap);
    if (r.interrupted)
      st = core_fail(err, CORE_EINTERRUPT, "interrupted");
  }
  core_buf_free(&errout);
  return st;
}

/* Images */

/* The digest an image.digest command prints, trimmed. */
static core_status digest_of(const proto_arm *arm, run_image *ai,
                             core_err *err) {
  core_buf out;
  core_buf_init(&out);
  int code;
  char why[1024] = "";
  core_status st = run_capture(ai->source, &out, &code, why, sizeof why, err);
  if (st != CORE_OK) {
    core_buf_free(&out);
    return st;
  }
  if (out.oom) {
    core_buf_free(&out);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  char *d = core_buf_steal(&out);
  if (d)
    trim(d);
  if (code != 0 || !d || !d[0]) {
    core_free(d);
    return core_fail(err, CORE_ERUN,
                     "arm %s: the image digest command '%s' failed (%s); "
                     "no run was started",
                     arm->name, ai->source,
                     code != 0 ? why : "it printed nothing");
  }
  ai->digest = d;
  return CORE_OK;
}

/* The digest of an image tree; two arms with the same tree share it,
 * computed once. */
static core_status tree_digest(const run_image *img, size_t a,
                               const proto_arm *arm, run_image *ai,
                               core_err *err) {
  for (size_t b = 0; b < a; b++)
    if (img[b].source && !strcmp(img[b].kind, "tree") &&
        !strcmp(img[b].source, ai->source))
      return (ai->digest = core_strdup(img[b].digest))
                 ? CORE_OK
                 : core_fail(err, CORE_ENOMEM, "out of memory");
  char hex[CORE_SHA256_HEX];
  if (core_sha256_tree(ai->source, hex, err) != CORE_OK) {
    core_err_prefix(err, "arm %s: image tree %s: ", arm->name, ai->source);
    return err->status = CORE_ERUN;
  }
  return (ai->digest = core_strdup(hex))
             ? CORE_OK
             : core_fail(err, CORE_ENOMEM, "out of memory");
}

/* The image of arm a; its digest computed, or given (the node runner's
 * steps after the preflight of their batch) when given is not NULL. */
static core_status image_of(const proto_sheet *s, run_image *img, size_t a,
                            const char *given, core_err *err) {
  const proto_arm *arm = &s->arms[a];
  const proto_image *im =
      (arm->image.tree || arm->image.digest_cmd) ? &arm->image : &s->image;
  const char *resident =
      arm->image.resident ? arm->image.resident : s->image.resident;
  run_image *ai = &img[a];
  proto_expand_ctx x = {.arm = arm->name};
  if (resident && !(ai->resident = run_expand(s, resident, &x, err)))
    return err->status;
  const char *tmpl = im->tree ? im->tree : im->digest_cmd;
  ai->kind = core_strdup(im->tree ? "tree" : tmpl ? "digest" : "none");
  if (!ai->kind)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (!tmpl)
    return (ai->digest = core_strdup(""))
               ? CORE_OK
               : core_fail(err, CORE_ENOMEM, "out of memory");
  if (!(ai->source = run_expand(s, tmpl, &x, err)))
    return err->status;
  if (given)
    return (ai->digest = core_strdup(given))
               ? CORE_OK
               : core_fail(err, CORE_ENOMEM, "out of memory");
  return im->tree ? tree_digest(img, a, arm, ai, err)
                  : digest_of(arm, ai, err);
}

/* Requires and versions */

/* Every arm's `requires`, once; the first failure refuses the run. A
 * missing runtime is never replaced by another arm. */
static core_status requires_ok(const proto_sheet *s, core_err *err) {
  for (size_t a = 0; a < s->n_arms; a++) {
    const proto_arm *arm = &s->arms[a];
    for (size_t k = 0; k < arm->n_requires; k++) {
      proto_expand_ctx x = {.arm = arm->name};
      char *cmd = run_expand(s, arm->requires[k], &x, err);
      if (!cmd)
        return err->status;
      int code;
      char why[1024] = "";
      core_status st = run_capture(cmd, NULL, &code, why, sizeof why, err);
      if (st == CORE_OK && code != 0)
        st = core_fail(err, CORE_ERUN,
                       "preflight: arm %s requires '%s', which failed (%s); "
                       "nothing was run. Install what it checks, or amend "
                       "the sheet",
                       arm->name, cmd, why);
      core_free(cmd);
      if (st != CORE_OK)
        return st;
    }
  }
  return CORE_OK;
}

/* Every arm's `versions` commands, run once; a failing one is recorded
 * with its exit code, never fatal. */
static core_status versions_of(const proto_sheet *s, data_arm_versions *av,
                               size_t a, core_err *err) {
  const proto_arm *arm = &s->arms[a];
  data_version_probe *v =
      core_calloc(arm->n_versions ? arm->n_versions : 1, sizeof *v);
  av->arm = arm->name;
  av->probes = v;
  if (!v)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t k = 0; k < arm->n_versions; k++) {
    proto_expand_ctx x = {.arm = arm->name};
    core_err e2 = {0};
    char *cmd = run_expand(s, arm->versions[k], &x, &e2);
    core_buf out;
    core_buf_init(&out);
    int code = -1;
    if (cmd && run_capture(cmd, &out, &code, NULL, 0, &e2) != CORE_OK)
      code = -1;
    if (e2.status == CORE_ENOMEM || out.oom) {
      core_free(cmd);
      core_buf_free(&out);
      return core_fail(err, CORE_ENOMEM, "out of memory");
    }
    if (out.data)
      trim(out.data);
    v[k].command = cmd ? cmd : core_strdup(arm->versions[k]);
    v[k].exit_code = code;
    v[k].output = out.data ? core_buf_steal(&out) : core_strdup("");
    core_buf_free(&out);
    av->n_probes = k + 1;
    if (!v[k].command || !v[k].output)
      return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  return CORE_OK;
}

/* What the runs left need of this machine: the cgroup parent, dropping
 * the caches. */
static core_status machine_ok(const proto_sheet *s, const run_plan *p,
                              run_preflight *pre, core_err *err) {
  int need_cold = 0, need_cg = 0;
  for (size_t i = 0; i < p->n; i++)
    if (!p->items[i].done) {
      const proto_workload *w = &s->workloads[p->items[i].workload];
      need_cold |= w->cache == PROTO_CACHE_COLD;
      need_cg |= w->cgroup;
    }
  if (need_cg && !(pre->cgparent = run_cgroup_parent(err)))
    return err->status;
  return need_cold ? run_can_drop_caches(err) : CORE_OK;
}

static core_status preflight(const proto_sheet *s, const run_plan *p,
                             char *const *given, run_preflight *pre,
                             core_err *err) {
  core_status st;
  memset(pre, 0, sizeof *pre);
  if ((st = machine_ok(s, p, pre, err)) != CORE_OK ||
      (!given && (st = requires_ok(s, err)) != CORE_OK))
    return st;
  size_t n = s->n_arms ? s->n_arms : 1;
  if (!(pre->img = core_calloc(n, sizeof *pre->img)) ||
      !(pre->vers = core_calloc(n, sizeof *pre->vers)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  for (size_t a = 0; a < s->n_arms; a++)
    if ((st = image_of(s, pre->img, a, given ? given[a] : NULL, err)) !=
        CORE_OK)
      return st;
  for (size_t a = 0; a < s->n_arms; a++) {
    if (given) {
      pre->vers[a].arm = s->arms[a].name;
      continue;
    }
    if ((st = versions_of(s, &pre->vers[a], a, err)) != CORE_OK)
      return st;
  }
  return CORE_OK;
}

core_status run_preflight_check(const proto_sheet *s, const run_plan *p,
                                run_preflight *pre, core_err *err) {
  return preflight(s, p, NULL, pre, err);
}

core_status run_preflight_given(const proto_sheet *s, const run_plan *p,
                                char *const *digests, run_preflight *pre,
                                core_err *err) {
  return preflight(s, p, digests, pre, err);
}

void run_preflight_free(run_preflight *pre, size_t n_arms) {
  for (size_t a = 0; pre->img && a < n_arms; a++) {
    core_free(pre->img[a].digest);
    core_free(pre->img[a].kind);
    core_free(pre->img[a].source);
    core_free(pre->img[a].resident);
  }
  for (size_t a = 0; pre->vers && a < n_arms; a++) {
    data_version_probe *v = (data_version_probe *)pre->vers[a].probes;
    for (size_t k = 0; k < pre->vers[a].n_probes; k++) {
      core_free((char *)v[k].command);
      core_free((char *)v[k].output);
    }
    core_free(v);
  }
  core_free(pre->img);
  core_free(pre->vers);
  core_free(pre->cgparent);
  memset(pre, 0, sizeof *pre);
}
