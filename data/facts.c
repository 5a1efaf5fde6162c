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

/* {==== Values ==== */

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

/* }==== */

/* {==== The object ==== */

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
  return o;
}

static json_t *images_object(const data_run_facts *f, int *failed) {
  json_t *o = json_object();
  if (!o) {
    *failed = 1;
    return NULL;
  }
  for (size_t a = 0; a < f->n_images; a++) {
    const data_arm_image *im = &f->images[a];
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

static json_t *versions_object(const data_run_facts *f, int *failed) {
  json_t *o = json_object();
  if (!o) {
    *failed = 1;
    return NULL;
  }
  for (size_t a = 0; a < f->n_versions; a++) {
    const data_arm_versions *av = &f->versions[a];
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
  put(o, "images", images_object(f, &failed), &failed);
  put(o, "versions", versions_object(f, &failed), &failed);
  put(o, "warmup_failures",
      strings_array(f->warmup_failures, f->n_warmup_failures, &failed),
      &failed);
  if (failed) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* }==== */

core_status data_batch_freeze_run(data_batch *b, const data_run_facts *facts,
                                  core_err *err) {
  data_json_init();
  return data_batch_freeze_json(b, run_facts_object(b, facts), err);
}
