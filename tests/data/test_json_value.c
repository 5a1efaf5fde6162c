/* test_json_value.c: the JSON values of data.h, which imports/ reads
 * other tools' files with and analysis/ writes `analyze --json` with:
 * parsing and where it fails, lookups that chain through what is
 * missing, the kinds and their values, and the text a built value dumps
 * to, byte for byte.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <string.h>

#include "core/core.h"
#include "data/data.h"
#include "harness.h"

static void test_parse(void) {
  const char *ok = "{\"a\": [1, 2.5, \"x\", true, false, null], \"b\": {}}";
  const char *bad = "{\n  \"a\": 1,\n  \"b\": ]\n}";
  const char *twice = "{\"k\": 1, \"k\": 2}";
  data_json_error e = {0};
  data_json *v = data_json_parse(ok, strlen(ok), 0, &e);
  CHECK(v && data_json_is(v, DATA_JSON_OBJECT));
  data_json_free(v);
  /* Only the bytes given are read: the text need not end there. */
  CHECK_NAMED("a prefix of len bytes is one value",
              (v = data_json_parse("[1]xyz", 3, 0, NULL)) != NULL);
  data_json_free(v);
  CHECK(!data_json_parse(bad, strlen(bad), 0, &e));
  CHECK(e.line == 3 && e.column == 8);
  CHECK(strstr(e.text, "unexpected token") != NULL);
  CHECK(!data_json_parse(bad, strlen(bad), 0, NULL));
  v = data_json_parse(twice, strlen(twice), 0, &e);
  CHECK_NAMED("a key twice: the last kept without the flag",
              v && data_json_integer(data_json_get(v, "k")) == 2);
  data_json_free(v);
  CHECK_NAMED(
      "a key twice: refused with the flag",
      !data_json_parse(twice, strlen(twice), DATA_JSON_NO_DUPLICATES, &e) &&
          strstr(e.text, "duplicate") != NULL);
  data_json_free(NULL);
}

static void test_read(void) {
  const char *t = "{\"a\": [1, 2.5, \"x\", true, false, null], \"b\": {}}";
  data_json *v = data_json_parse(t, strlen(t), 0, NULL);
  data_json *a = data_json_get(v, "a"), *x;
  size_t i, n = 0;
  CHECK(data_json_size(a) == 6 && data_json_size(v) == 0);
  CHECK(data_json_is(data_json_at(a, 0), DATA_JSON_INTEGER));
  CHECK(data_json_is(data_json_at(a, 0), DATA_JSON_NUMBER));
  CHECK(!data_json_is(data_json_at(a, 0), DATA_JSON_REAL));
  CHECK(data_json_is(data_json_at(a, 1), DATA_JSON_REAL | DATA_JSON_STRING));
  CHECK(data_json_is(data_json_at(a, 2), DATA_JSON_STRING));
  CHECK(data_json_is(data_json_at(a, 3), DATA_JSON_TRUE));
  CHECK(data_json_is(data_json_at(a, 4), DATA_JSON_FALSE));
  CHECK(data_json_is(data_json_at(a, 5), DATA_JSON_NULL));
  CHECK(data_json_is(data_json_get(v, "b"), DATA_JSON_OBJECT));
  CHECK(data_json_is(a, DATA_JSON_ARRAY) && !data_json_is(a, ~0u ^ 2u));
  CHECK(data_json_integer(data_json_at(a, 0)) == 1);
  CHECK(data_json_number(data_json_at(a, 0)) == 1.0);
  CHECK(data_json_number(data_json_at(a, 1)) == 2.5);
  CHECK(data_json_integer(data_json_at(a, 1)) == 0);
  CHECK_STR(data_json_text(data_json_at(a, 2)), "x");
  CHECK(data_json_text(data_json_at(a, 0)) == NULL);
  /* What is missing chains to NULL, 0 and "no kind". */
  CHECK(!data_json_at(a, 6) && !data_json_get(a, "a"));
  CHECK(!data_json_get(data_json_get(v, "none"), "deeper"));
  CHECK(!data_json_is(NULL, ~0u) && data_json_size(NULL) == 0);
  CHECK(!data_json_text(NULL) && data_json_number(NULL) == 0);
  for (i = 0; (x = data_json_at(a, i)) != NULL; i++)
    n++;
  CHECK_NAMED("the items walked by index", n == 6);
  data_json_free(v);
}

/* The object the tests below dump. NULL when a piece failed. */
static data_json *built(void) {
  data_json *o = data_json_new_object(), *a = data_json_new_array();
  int bad = !o || !a;
  bad |= data_json_append(a, data_json_new_integer(-3));
  bad |= data_json_append(a, data_json_new_real(0.1));
  bad |= data_json_append(a, data_json_new_null());
  bad |= data_json_set(o, "z", data_json_new_text("last key first"));
  bad |= data_json_set(o, "list", a);
  bad |= data_json_set(o, "yes", data_json_new_bool(1));
  bad |= data_json_set(o, "no", data_json_new_bool(0));
  bad |= data_json_set(o, "big", data_json_new_integer(9007199254740993LL));
  if (bad) {
    data_json_free(o);
    return NULL;
  }
  return o;
}

static void test_build(void) {
  data_json *o = built();
  char *one, *two;
  CHECK(o != NULL);
  one = data_json_dump(o, 0, 17);
  CHECK_STR(one, "{\"z\": \"last key first\", \"list\": [-3, "
                 "0.10000000000000001, null], \"yes\": true, \"no\": false, "
                 "\"big\": 9007199254740993}");
  core_free(one);
  one = data_json_dump(o, 0, DATA_FACTS_DIGITS);
  CHECK(one && strstr(one, "[-3, 0.1, null]") != NULL);
  core_free(one);
  two = data_json_dump(data_json_get(o, "list"), 2, 17);
  CHECK_STR(two, "[\n  -3,\n  0.10000000000000001,\n  null\n]");
  core_free(two);
  /* A failed piece fails where it is given, and is taken over there. */
  CHECK(!data_json_new_real(NAN) && !data_json_new_real(INFINITY));
  CHECK(!data_json_new_text("\xff") && !data_json_new_text(NULL));
  CHECK(data_json_set(o, "nan", data_json_new_real(NAN)) == -1);
  CHECK(data_json_append(o, data_json_new_integer(1)) == -1);
  CHECK(data_json_set(data_json_get(o, "list"), "k", data_json_new_null()) ==
        -1);
  CHECK(data_json_set(o, "\xff", data_json_new_integer(1)) == -1);
  CHECK_NAMED("nothing failed was set", !data_json_get(o, "nan"));
  data_json_free(o);
}

/* One allocation of a dump failing, each in turn: the whole text or
 * none, never a text that lacks a piece (jansson's json_dumps leaves out
 * an object's key it could not write and goes on). */
static void test_dump_oom(void) {
  data_json *o = built();
  char *want = data_json_dump(o, 2, 17), *got;
  long k, partial = 0, none = 0;
  for (k = 0; k < 10000; k++) {
    long injected;
    core_mem_fail_after(k, 0);
    got = data_json_dump(o, 2, 17);
    injected = core_mem_failures();
    core_mem_fail_after(-1, 0);
    if (!got)
      none++;
    else if (strcmp(got, want) != 0)
      partial++;
    core_free(got);
    if (!injected)
      break;
  }
  CHECK(want != NULL && k > 0 && k < 10000);
  CHECK_NAMED("a failed allocation fails the dump", none > 0);
  CHECK_NAMED("no dump is a partial text", partial == 0);
  core_free(want);
  data_json_free(o);
}

int main(void) {
  test_parse();
  test_read();
  test_build();
  test_dump_oom();
  return HARNESS_END();
}
