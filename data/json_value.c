/* json_value.c: JSON values (data.h) for the floors above, each the
 * jansson call it names, and data/'s own JSON helpers.
 * SPDX-License-Identifier: MIT
 */
#include <jansson.h>
#include <stdio.h>

#include "data/data_internal.h"

_Static_assert(sizeof(json_int_t) == sizeof(long long),
               "data_json_integer gives jansson's integers as long long");

void data_json_init(void) {
  /* Route jansson through core_malloc so fault injection reaches it. */
  json_set_alloc_funcs(core_malloc, core_free);
}

char *data_json_member_text(const char *text, size_t len, const char *key) {
  json_error_t jerr;
  json_t *root = json_loadb(text, len, 0, &jerr), *v;
  char *out = NULL;
  if (!root)
    return NULL;
  v = json_object_get(root, key);
  if (json_is_string(v))
    out = core_strdup(json_string_value(v));
  else if (json_is_integer(v))
    out = core_asprintf("%lld", (long long)json_integer_value(v));
  json_decref(root);
  return out;
}

data_json *data_json_parse(const char *text, size_t len, unsigned flags,
                           data_json_error *e) {
  json_error_t je;
  json_t *v;
  data_json_init();
  v = json_loadb(text, len,
                 flags & DATA_JSON_NO_DUPLICATES ? JSON_REJECT_DUPLICATES : 0,
                 &je);
  if (!v && e) {
    e->line = je.line;
    e->column = je.column;
    snprintf(e->text, sizeof e->text, "%s", je.text);
  }
  return v;
}

void data_json_free(data_json *v) {
  json_decref(v);
}

int data_json_is(const data_json *v, unsigned kinds) {
  static const unsigned kind[] = {
      [JSON_OBJECT] = DATA_JSON_OBJECT, [JSON_ARRAY] = DATA_JSON_ARRAY,
      [JSON_STRING] = DATA_JSON_STRING, [JSON_INTEGER] = DATA_JSON_INTEGER,
      [JSON_REAL] = DATA_JSON_REAL,     [JSON_TRUE] = DATA_JSON_TRUE,
      [JSON_FALSE] = DATA_JSON_FALSE,   [JSON_NULL] = DATA_JSON_NULL};
  return v && (kind[json_typeof(v)] & kinds) != 0;
}

data_json *data_json_get(const data_json *o, const char *key) {
  return json_object_get(o, key);
}

data_json *data_json_at(const data_json *a, size_t i) {
  return json_array_get(a, i);
}

size_t data_json_size(const data_json *a) {
  return json_array_size(a);
}

const char *data_json_text(const data_json *v) {
  return json_string_value(v);
}

long long data_json_integer(const data_json *v) {
  return json_integer_value(v);
}

double data_json_number(const data_json *v) {
  return json_number_value(v);
}

data_json *data_json_new_object(void) {
  data_json_init();
  return json_object();
}

data_json *data_json_new_array(void) {
  data_json_init();
  return json_array();
}

data_json *data_json_new_text(const char *s) {
  data_json_init();
  return json_string(s);
}

data_json *data_json_new_integer(long long n) {
  data_json_init();
  return json_integer(n);
}

data_json *data_json_new_real(double x) {
  data_json_init();
  return json_real(x);
}

data_json *data_json_new_bool(int b) {
  return json_boolean(b);
}

data_json *data_json_new_null(void) {
  return json_null();
}

int data_json_set(data_json *o, const char *key, data_json *v) {
  return json_object_set_new(o, key, v);
}

int data_json_append(data_json *a, data_json *v) {
  return json_array_append_new(a, v);
}

/* json_dump_callback's sink: the text into a core_buf, whose oom stays
 * set once a piece could not be added. */
static int to_buf(const char *p, size_t n, void *b) {
  core_buf_append(b, p, n);
  return ((core_buf *)b)->oom ? -1 : 0;
}

char *data_json_dump_flags(const data_json *v, size_t flags) {
  core_buf b;
  data_json_init();
  core_buf_init(&b);
  /* Not json_dumps: out of memory while it writes an object's key, it
   * leaves the key out and goes on (it does not look at that write's
   * result), so a text it returns may lack keys. Here any piece that
   * could not be written fails the whole text. */
  if (json_dump_callback(v, to_buf, &b, flags) != 0 || b.oom) {
    core_buf_free(&b);
    return NULL;
  }
  return core_buf_steal(&b);
}

char *data_json_dump(const data_json *v, int indent, int digits) {
  return data_json_dump_flags(v, JSON_PRESERVE_ORDER | JSON_INDENT(indent) |
                                     JSON_REAL_PRECISION(digits));
}
