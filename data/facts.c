/* facts.c: the facts of a batch that `prereg run` collected, from the C
 * data the engine hands over (data_run_facts, data.h) to the JSON object
 * that data_batch_freeze_json writes as batches/BATCH.json.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_internal.h"

/* Values */

/* Length of a valid UTF-8 sequence at p (1..4), or 0 when invalid:
 * overlong forms, surrogates and code points above U+10FFFF are
 * invalid. */
static size_t utf8_len(const unsigned char *p) {
  if (p[0] < 0x80)
    return 1;
  size_t n = (p[0] & 0xE0) == 0xC0   ? 2
             : (p[0] & 0xF0) == 0xE0 ? 3
             : (p[0] & 0xF8) == 0xF0 ? 4
                                     : 0;
  if (n == 0 || (n == 2 && p[0] < 0xC2))
    return 0;
  for (size_t i = 1; i < n; i++)
    if ((p[i] & 0xC0) != 0x80)
      return 0;
  if (n == 3 && p[0] == 0xE0 && p[1] < 0xA0)
    return 0;
  if (n == 3 && p[0] == 0xED && p[1] >= 0xA0)
    return 0;
  if (n == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || p[0] > 0xF4 ||
                 (p[0] == 0xF4 && p[1] >= 0x90)))
    return 0;
  return n;
}

/* A JSON string of s, NULL giving null. What commands print need not be
 * UTF-8, which JSON text must be: each byte that does not start a valid
 * sequence becomes U+FFFD, so the fact is kept rather than refused. NULL
 * when out of memory. */
static json_t *text(const char *s) {
  if (!s)
    return json_null();
  const unsigned char *p = (const unsigned char *)s;
  size_t len = 0, bad = 0;
  for (size_t i = 0, n; p[i]; i += n ? n : 1) {
    n = utf8_len(p + i);
    bad += n == 0;
    len += n ? n : 3;
  }
  if (bad == 0)
    return json_string(s);
  char *fixed = core_malloc(len + 1), *o = fixed;
  if (!fixed)
    return NULL;
  for (size_t i = 0, n; p[i]; i += n ? n : 1) {
    n = utf8_len(p + i);
    if (n) {
      memcpy(o, p + i, n);
      o += n;
    } else {
      memcpy(o, "\xEF\xBF\xBD", 3);
      o += 3;
    }
  }
  *o = 0;
  json_t *j = json_string(fixed);
  core_free(fixed);
  return j;
}

/* "" as null: a fact that could not be read. */
static json_t *text_or_null(const char *s) {
  return text(s && s[0] ? s : NULL);
}

static json_t *load_avg(int ok, const double v[3]) {
  return ok ? json_pack("[f,f,f]", v[0], v[1], v[2]) : json_null();
}

/* Sets o[key] = v, counting a NULL v (out of memory) in *failed. */
static void put(json_t *o, const char *key, json_t *v, int *failed) {
  if (!v || json_object_set_new(o, key, v) != 0)
    *failed = 1;
}

/* The object */

static json_t *host_object(const data_host_facts *h, int *failed) {
  json_t *o = json_object();
  if (!o) {
    *failed = 1;
    return NULL;
  }
  put(o, "hostname", text(h->hostname), failed);
  put(o, "kernel", text(h->kernel), failed);
  put(o, "cpu_model", text_or_null(h->cpu_model), failed);
  put(o, "cores", json_integer((json_int_t)h->cores), failed);
  put(o, "mem_total_mib", json_integer((json_int_t)h->mem_total_mib), failed);
  put(o, "cpu_governor", text_or_null(h->cpu_governor), failed);
  put(o, "prereg_version", text(PREREG_VERSION), failed);
  put(o, "load_avg_start", load_avg(h->has_load_start, h->load_avg_start),
      failed);
  put(o, "load_avg_end", load_avg(h->has_load_end, h->load_avg_end), failed);
  if (h->n_cond) {
    json_t *c = json_object();
    for (size_t i = 0; c && i < h->n_cond && i < DATA_HOST_CONDS; i++)
      put(c, h->cond[i].name, text_or_null(h->cond[i].value), failed);
    put(o, "conditions", c, failed);
  }
  return o;
}

static json_t *images_object(const data_arm_image *images, size_t n,
                             int *failed) {
  json_t *o = json_object();
  if (!o) {
    *failed = 1;
    return NULL;
  }
  for (size_t a = 0; a < n; a++) {
    const data_arm_image *im = &images[a];
    json_t *one = json_object();
    if (!one) {
      *failed = 1;
      break;
    }
    put(one, "kind", text(im->kind), failed);
    put(one, "source", text(im->source), failed);
    put(one, "digest", text(im->digest), failed);
    put(o, im->arm, one, failed);
  }
  return o;
}

static json_t *versions_object(const data_arm_versions *versions, size_t n,
                               int *failed) {
  json_t *o = json_object();
  if (!o) {
    *failed = 1;
    return NULL;
  }
  for (size_t a = 0; a < n; a++) {
    const data_arm_versions *av = &versions[a];
    json_t *list = json_array();
    for (size_t k = 0; list && k < av->n_probes; k++) {
      const data_version_probe *vp = &av->probes[k];
      json_t *one = json_object();
      if (!one || json_array_append_new(list, one) != 0) {
        *failed = 1;
        break;
      }
      put(one, "command", text(vp->command), failed);
      put(one, "exit_code", json_integer(vp->exit_code), failed);
      put(one, "output", text(vp->output ? vp->output : ""), failed);
    }
    put(o, av->arm, list, failed);
  }
  return o;
}

static json_t *strings_array(const char *const *v, size_t n, int *failed) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++) {
    json_t *s = text(v[i]);
    if (!s || json_array_append_new(a, s) != 0)
      *failed = 1;
  }
  if (!a)
    *failed = 1;
  return a;
}

/* Hosts */

static json_t *node_object(const data_node_facts *f, int *failed) {
  json_t *o = json_object();
  if (!o) {
    *failed = 1;
    return NULL;
  }
  put(o, "node", text(f->node), failed);
  put(o, "host", host_object(&f->host, failed), failed);
  put(o, "machine_id", text_or_null(f->machine_id), failed);
  put(o, "boot_id", text_or_null(f->boot_id), failed);
  put(o, "smt", text_or_null(f->smt), failed);
  put(o, "threads_per_core",
      f->threads_per_core > 0 ? json_integer(f->threads_per_core)
                              : json_null(),
      failed);
  put(o, "cpus_allowed", text_or_null(f->cpus_allowed), failed);
  return o;
}

void data_node_report(const data_node_facts *f, const data_arm_image *images,
                      size_t n_images, const data_arm_versions *versions,
                      size_t n_versions, core_buf *out) {
  int failed = 0;
  data_json_init();
  json_t *o = node_object(f, &failed);
  if (o) {
    put(o, "images", images_object(images, n_images, &failed), &failed);
    put(o, "versions", versions_object(versions, n_versions, &failed),
        &failed);
  }
  char *js = o && !failed
                 ? data_json_dump_flags(o, JSON_PRESERVE_ORDER | JSON_COMPACT |
                                               FACTS_PRECISION)
                 : NULL;
  if (js)
    core_buf_puts(out, js);
  else
    out->oom = 1;
  core_free(js);
  json_decref(o);
}

/* Copies the string o[key] into out (cap bytes), "" when absent. */
static void get_text(json_t *o, const char *key, char *out, size_t cap) {
  const char *v = json_string_value(json_object_get(o, key));
  snprintf(out, cap, "%s", v ? v : "");
}

core_status data_node_report_read(const char *text, const proto_sheet *s,
                                  data_node_facts *f, char ***digests,
                                  core_err *err) {
  memset(f, 0, sizeof *f);
  *digests = NULL;
  data_json_init();
  json_error_t je;
  json_t *o = json_loads(text, 0, &je);
  if (!o || !json_is_object(o) ||
      !json_is_string(json_object_get(o, "node"))) {
    json_decref(o);
    return core_fail(err, CORE_EINPUT, "not a node report: %s",
                     o ? "no node named" : je.text);
  }
  get_text(o, "node", f->node, sizeof f->node);
  get_text(o, "machine_id", f->machine_id, sizeof f->machine_id);
  get_text(o, "boot_id", f->boot_id, sizeof f->boot_id);
  get_text(o, "smt", f->smt, sizeof f->smt);
  get_text(o, "cpus_allowed", f->cpus_allowed, sizeof f->cpus_allowed);
  json_t *h = json_object_get(o, "host");
  get_text(h, "hostname", f->host.hostname, sizeof f->host.hostname);
  get_text(h, "kernel", f->host.kernel, sizeof f->host.kernel);
  get_text(h, "cpu_model", f->host.cpu_model, sizeof f->host.cpu_model);
  get_text(h, "cpu_governor", f->host.cpu_governor,
           sizeof f->host.cpu_governor);
  f->host.cores = (long)json_integer_value(json_object_get(h, "cores"));
  f->threads_per_core =
      (long)json_integer_value(json_object_get(o, "threads_per_core"));
  char **d = core_calloc(s->n_arms ? s->n_arms : 1, sizeof *d);
  json_t *im = json_object_get(o, "images");
  for (size_t a = 0; d && a < s->n_arms; a++) {
    const char *v = json_string_value(
        json_object_get(json_object_get(im, s->arms[a].name), "digest"));
    if (!(d[a] = core_strdup(v ? v : ""))) {
      core_names_free(d, a);
      d = NULL;
    }
  }
  json_decref(o);
  if (!d)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  *digests = d;
  return CORE_OK;
}

/* nodes {NAME: {the node's report, scheduler, boot_id_end, rounds_done,
 * rounds_lost}}, then job, host_threats, lost_rounds. A report that does
 * not parse is kept as the string it was. */
static void put_hosts(json_t *o, const data_run_facts *f, int *failed) {
  json_t *nodes = json_object();
  if (!nodes) {
    *failed = 1;
    return;
  }
  for (size_t i = 0; i < f->n_nodes; i++) {
    const data_node_run *n = &f->nodes[i];
    json_t *one = n->report ? json_loads(n->report, 0, NULL) : NULL;
    if (one && !json_is_object(one)) {
      json_decref(one);
      one = NULL;
    }
    if (!one) {
      one = json_object();
      put(one, "report", text(n->report), failed);
    }
    put(one, "scheduler", text(n->scheduler), failed);
    put(one, "boot_id_end", text(n->boot_id_end), failed);
    put(one, "rounds_done", json_integer((json_int_t)n->rounds_done), failed);
    put(one, "rounds_lost", json_integer((json_int_t)n->rounds_lost), failed);
    put(nodes, n->name, one, failed);
  }
  put(o, "backend", text(f->backend), failed);
  put(o, "job", text(f->job), failed);
  put(o, "nodes", nodes, failed);
  put(o, "host_threats",
      strings_array(f->host_threats, f->n_host_threats, failed), failed);
  put(o, "lost_rounds",
      strings_array(f->lost_rounds, f->n_lost_rounds, failed), failed);
}

/* The facts in the documented order; NULL when out of memory. */
static json_t *run_facts_object(const data_batch *b, const data_run_facts *f) {
  int failed = 0;
  json_t *o = json_object();
  if (!o)
    return NULL;
  put(o, "kind", json_string("run"), &failed);
  put(o, "protocol", text(f->protocol), &failed);
  put(o, "sheet_version", json_integer(f->sheet_version), &failed);
  put(o, "sheet_sha256", text(f->sheet_sha256), &failed);
  put(o, "batch", json_string(b->id), &failed);
  put(o, "started_at", text(f->started_at), &failed);
  put(o, "ended_at", text(f->ended_at), &failed);
  put(o, "host", host_object(&f->host, &failed), &failed);
  put(o, "quick", json_boolean(f->quick), &failed);
  put(o, "resume", json_boolean(f->resume), &failed);
  put(o, "only", text(f->only), &failed);
  put(o, "interrupted", json_boolean(f->interrupted), &failed);
  put(o, "runs_planned", json_integer((json_int_t)f->runs_planned), &failed);
  put(o, "runs_recorded", json_integer((json_int_t)f->runs_recorded), &failed);
  put(o, "runs_valid", json_integer((json_int_t)f->runs_valid), &failed);
  put(o, "runs_invalid", json_integer((json_int_t)f->runs_invalid), &failed);
  put(o, "order", text(f->order), &failed);
  if (f->order_stamp)
    put(o, "order_stamp", json_string(f->order_stamp), &failed);
  put(o, "images", images_object(f->images, f->n_images, &failed), &failed);
  put(o, "versions", versions_object(f->versions, f->n_versions, &failed),
      &failed);
  put(o, "warmup_failures",
      strings_array(f->warmup_failures, f->n_warmup_failures, &failed),
      &failed);
  if (f->backend)
    put_hosts(o, f, &failed);
  if (f->inputs && f->inputs->n) {
    json_t *in = json_object();
    for (size_t i = 0; in && i < f->inputs->n; i++)
      put(in, f->inputs->v[i].path, json_string(f->inputs->v[i].sha256),
          &failed);
    put(o, "inputs", in, &failed);
  }
  if (f->n_inputs_changed)
    put(o, "inputs_changed",
        strings_array(f->inputs_changed, f->n_inputs_changed, &failed),
        &failed);
  if (f->n_stops) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < f->n_stops; i++) {
      const data_stop *x = &f->stops[i];
      json_t *e = json_object();
      put(e, "workload", text(x->workload), &failed);
      put(e, "look", json_integer(x->look), &failed);
      put(e, "looks", json_integer(x->looks), &failed);
      put(e, "n", json_integer(x->n), &failed);
      put(e, "at", text(x->at), &failed);
      if (!e || json_array_append_new(a, e) != 0)
        failed = 1;
    }
    put(o, "stops", a, &failed);
  }
  if (failed) {
    json_decref(o);
    return NULL;
  }
  return o;
}

core_status data_batch_start_run(data_batch *b, const data_run_facts *facts,
                                 core_err *err) {
  json_t *o;
  char *text, *path;
  core_status st;
  data_json_init();
  if (!(o = run_facts_object(b, facts)) ||
      json_object_set_new(o, "sheet_versions_at_start",
                          json_integer((json_int_t)b->versions_at_start))) {
    json_decref(o);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  text = data_json_dump_flags(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                     FACTS_PRECISION);
  json_decref(o);
  path = core_asprintf("%s/batches/%s.json", b->exp->dir, b->id);
  st = text && path
           ? core_write_file_atomic(path, text, strlen(text), 0644, err)
           : core_fail(err, CORE_ENOMEM, "out of memory");
  core_free(text);
  core_free(path);
  return st;
}

core_status data_batch_freeze_run(data_batch *b, const data_run_facts *facts,
                                  core_err *err) {
  data_json_init();
  return data_batch_freeze_json(b, run_facts_object(b, facts), err);
}

/* What stamps/ reads back */

void data_stamp_facts_read(const data_experiment *exp, const char *rel,
                           data_stamp_facts *f) {
  char *path = core_path_join(exp->dir, rel), *text = NULL;
  size_t len = 0;
  core_err e;
  json_t *root = NULL, *v;
  const char *stamp;
  memset(f, 0, sizeof *f);
  f->version = -1;
  if (path &&
      core_read_file_max(path, BUNDLE_KEEP_MAX, 0, &text, &len, &e) ==
          CORE_OK &&
      (root = json_loadb(text, len, 0, NULL))) {
    if (json_is_integer(v = json_object_get(root, "sheet_versions_at_start")))
      f->at_start = (long long)json_integer_value(v);
    if (json_is_integer(v = json_object_get(root, "sheet_version")))
      f->version = (long)json_integer_value(v);
    if ((stamp = json_string_value(json_object_get(root, "order_stamp")))) {
      f->has_order_stamp = 1;
      snprintf(f->order_stamp, sizeof f->order_stamp, "%s", stamp);
    }
  }
  json_decref(root);
  core_free(text);
  core_free(path);
}
