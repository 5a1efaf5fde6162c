/* report_inputs.c: what a report shows besides the rows: batch facts,
 * per-run process lists and the manifest, read into plain C structs so
 * that reports/ never touches jansson.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "data/data.h"
#include "data/data_internal.h"

/* Small growable arrays */

static int grow(void **p, size_t *cap, size_t n, size_t size) {
  void *q = core_grow(*p, cap, n, size, 8);
  if (!q)
    return 0;
  *p = q;
  return 1;
}

/* Facts: flattened JSON */

typedef struct fact_list {
  data_fact *v;
  size_t n, cap;
} fact_list;

static char *scalar_text(json_t *j) {
  if (json_is_string(j))
    return core_strdup(json_string_value(j));
  if (json_is_null(j))
    return core_strdup("null");
  /* Numbers and booleans as their JSON text: deterministic. Facts are
   * informational (load averages, sizes): 15 significant digits show 1.57
   * where 17 would show 1.5700000000000001. */
  {
    char *t =
        data_json_dump_flags(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    char *r = t ? core_strdup(t) : NULL;
    core_free(t);
    return r;
  }
}

static int flatten(json_t *j, const char *prefix, fact_list *out) {
  if (json_is_object(j)) {
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v) {
      char *key =
          prefix[0] ? core_asprintf("%s.%s", prefix, k) : core_strdup(k);
      int ok = key && flatten(v, key, out);
      core_free(key);
      if (!ok)
        return 0;
    }
    return 1;
  }
  if (json_is_array(j)) {
    size_t i;
    json_t *v;
    json_array_foreach(j, i, v) {
      char *key = core_asprintf("%s[%zu]", prefix, i);
      int ok = key && flatten(v, key, out);
      core_free(key);
      if (!ok)
        return 0;
    }
    return 1;
  }
  if (!grow((void **)&out->v, &out->cap, out->n, sizeof *out->v))
    return 0;
  out->v[out->n].key = core_strdup(prefix[0] ? prefix : "value");
  out->v[out->n].value = scalar_text(j);
  if (!out->v[out->n].key || !out->v[out->n].value) {
    core_free(out->v[out->n].key);
    core_free(out->v[out->n].value);
    return 0;
  }
  out->n++;
  return 1;
}

static int cmp_fact(const void *a, const void *b) {
  return strcmp(((const data_fact *)a)->key, ((const data_fact *)b)->key);
}

/* Process lists */

typedef struct str_list {
  char **v;
  size_t n, cap;
} str_list;

static int push(str_list *l, char *s) {
  if (!s || !grow((void **)&l->v, &l->cap, l->n, sizeof *l->v)) {
    core_free(s);
    return 0;
  }
  l->v[l->n++] = s;
  return 1;
}

static long col_index(str_list *hdr, const char *name) {
  for (size_t i = 0; i < hdr->n; i++)
    if (strcmp(hdr->v[i], name) == 0)
      return (long)i;
  return -1;
}

/* The end of a table reader: t takes the lists (returns 1), or, on
 * failure, they are freed (returns 0). */
static int table_take(data_table *t, str_list *hdr, str_list *cells,
                      size_t rows) {
  t->header = hdr->v;
  t->n_cols = hdr->n;
  t->cells = cells->v;
  t->n_rows = rows;
  return 1;
}

static int table_drop(str_list *hdr, str_list *cells) {
  core_names_free(hdr->v, hdr->n);
  core_names_free(cells->v, cells->n);
  return 0;
}

/* A JSON process list: an array of objects, or an object holding one
 * (under "processes" or the first array member). Columns: the union of
 * keys, in order of first appearance. */
static int table_from_json(json_t *root, data_table *t) {
  json_t *arr = root, *obj;
  str_list hdr = {0}, cells = {0};
  size_t i, rows = 0;
  if (json_is_object(root)) {
    const char *k;
    json_t *v;
    arr = json_object_get(root, "processes");
    if (!json_is_array(arr)) {
      arr = NULL;
      json_object_foreach(root, k, v) if (!arr && json_is_array(v)) arr = v;
    }
  }
  if (!json_is_array(arr))
    return 1;
  json_array_foreach(arr, i, obj) {
    const char *k;
    json_t *v;
    if (!json_is_object(obj))
      continue;
    json_object_foreach(obj, k, v) if (col_index(&hdr, k) < 0 &&
                                       !push(&hdr, core_strdup(k))) goto oom;
  }
  json_array_foreach(arr, i, obj) {
    if (!json_is_object(obj))
      continue;
    for (size_t c = 0; c < hdr.n; c++) {
      json_t *v = json_object_get(obj, hdr.v[c]);
      char *s;
      if (!v)
        s = core_strdup("");
      else if (json_is_object(v) || json_is_array(v)) {
        char *d = data_json_dump_flags(v, JSON_COMPACT | JSON_SORT_KEYS);
        s = core_strdup(d ? d : "");
        core_free(d);
      } else
        s = scalar_text(v);
      if (!push(&cells, s))
        goto oom;
    }
    rows++;
  }
  return table_take(t, &hdr, &cells, rows);
oom:
  return table_drop(&hdr, &cells);
}

/* Text: a header line, then rows; fields split on tabs (or commas when
 * the header has no tab). No quoting: process lists are prereg's own. */
static int table_from_text(char *text, data_table *t) {
  str_list hdr = {0}, cells = {0};
  size_t head = strcspn(text, "\n");
  char sep = memchr(text, '\t', head) ? '\t' : ',';
  char *line = text;
  size_t rows = 0;
  int first = 1;
  while (line && *line) {
    char *nl = strchr(line, '\n');
    size_t c = 0;
    char *f = line;
    if (nl)
      *nl = '\0';
    if (*line) {
      for (;;) {
        char *e = strchr(f, sep);
        size_t len = e ? (size_t)(e - f) : strlen(f);
        if (len && f[len - 1] == '\r')
          len--;
        if (first) {
          if (!push(&hdr, core_strndup(f, len)))
            goto oom;
        } else if (c < hdr.n) {
          if (!push(&cells, core_strndup(f, len)))
            goto oom;
        }
        c++;
        if (!e)
          break;
        f = e + 1;
      }
      if (!first) {
        for (; c < hdr.n; c++)
          if (!push(&cells, core_strdup("")))
            goto oom;
        rows++;
      }
      first = 0;
    }
    line = nl ? nl + 1 : NULL;
  }
  return table_take(t, &hdr, &cells, rows);
oom:
  return table_drop(&hdr, &cells);
}

static void table_free(data_table *t) {
  core_free(t->source);
  core_names_free(t->header, t->n_cols);
  core_names_free(t->cells, t->n_cols * t->n_rows);
}

/* Walks batches/ID/ (depth-first, sorted) for process-list files. */
static core_status find_procs(const char *exp_dir, const char *rel,
                              data_batch_info *b, size_t *cap, int depth,
                              core_err *err) {
  char *dir = core_path_join(exp_dir, rel);
  size_t n = 0;
  char **names;
  core_status st = CORE_OK;
  if (!dir)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  st = core_list_dir(dir, &names, &n, err);
  for (size_t i = 0; i < n && st == CORE_OK; i++) {
    char *r = core_path_join(rel, names[i]);
    char *full = core_path_join(exp_dir, r);
    if (!r || !full)
      st = core_fail(err, CORE_ENOMEM, "out of memory");
    else if (core_is_real_dir(full)) {
      if (depth < 4)
        st = find_procs(exp_dir, r, b, cap, depth + 1, err);
    } else if (strstr(names[i], "proc")) {
      char *text = NULL;
      size_t len = 0;
      data_table t;
      memset(&t, 0, sizeof t);
      st = core_read_file(full, &text, &len, err);
      if (st == CORE_OK) {
        const char *p = text;
        int ok;
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
          p++;
        if (*p == '[' || *p == '{') {
          json_error_t je;
          json_t *root = json_loadb(text, len, 0, &je);
          if (!root) {
            st = core_fail(err, CORE_EINPUT, "%s:%d: %s", full, je.line,
                           je.text);
            ok = 1;
          } else {
            ok = table_from_json(root, &t);
            json_decref(root);
          }
        } else
          ok = table_from_text(text, &t);
        if (!ok && st == CORE_OK)
          st = core_fail(err, CORE_ENOMEM, "out of memory");
        if (st == CORE_OK && t.n_cols > 0) {
          t.source = core_strdup(r);
          if (!t.source ||
              !grow((void **)&b->procs, cap, b->n_procs, sizeof *b->procs)) {
            table_free(&t);
            st = core_fail(err, CORE_ENOMEM, "out of memory");
          } else
            b->procs[b->n_procs++] = t;
        } else
          table_free(&t);
      }
      core_free(text);
    }
    core_free(r);
    core_free(full);
  }
  core_names_free(names, n);
  core_free(dir);
  return st;
}

static int is_batch_name(const char *s, const char *ext) {
  size_t n = strlen(s), e = strlen(ext);
  if (s[0] != 'b' || n <= e + 1 || strcmp(s + n - e, ext) != 0)
    return 0;
  for (size_t i = 1; i < n - e; i++)
    if (s[i] < '0' || s[i] > '9')
      return 0;
  return 1;
}

static core_status load_batch(const data_experiment *exp, const char *id,
                              data_batch_info *b, core_err *err) {
  char *rel = core_asprintf("batches/%s.json", id);
  char *path = rel ? core_path_join(exp->dir, rel) : NULL;
  char *subdir = core_asprintf("batches/%s", id);
  core_status st = CORE_OK;
  size_t cap = 0;
  memset(b, 0, sizeof *b);
  b->id = core_strdup(id);
  if (!rel || !path || !subdir || !b->id) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto done;
  }
  if (core_exists(path)) {
    json_error_t je;
    json_t *root = NULL;
    fact_list fl = {0};
    char *text = NULL;
    size_t len = 0;
    if ((st = core_read_file(path, &text, &len, err)) != CORE_OK)
      goto done;
    root = json_loadb(text, len, 0, &je);
    core_free(text);
    if (!root) {
      st = core_fail(err, CORE_EINPUT,
                     "%s:%d: %s (the batch facts are not valid JSON; run "
                     "prereg verify)",
                     path, je.line, je.text);
      goto done;
    }
    if (!flatten(root, "", &fl)) {
      for (size_t i = 0; i < fl.n; i++) {
        core_free(fl.v[i].key);
        core_free(fl.v[i].value);
      }
      core_free(fl.v);
      json_decref(root);
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto done;
    }
    json_decref(root);
    if (fl.n)
      qsort(fl.v, fl.n, sizeof *fl.v, cmp_fact);
    b->facts = fl.v;
    b->n_facts = fl.n;
  }
  st = find_procs(exp->dir, subdir, b, &cap, 0, err);
done:
  core_free(rel);
  core_free(path);
  core_free(subdir);
  return st;
}

static core_status load_manifest(const data_experiment *exp,
                                 data_report_inputs *in, core_err *err) {
  char *path = core_path_join(exp->dir, "MANIFEST");
  char *text = NULL, *line;
  size_t len = 0, cap = 0;
  core_status st = CORE_OK;
  if (!path)
    return core_fail(err, CORE_ENOMEM, "out of memory");
  if (!core_exists(path)) {
    core_free(path);
    return CORE_OK;
  }
  st = core_read_file(path, &text, &len, err);
  for (line = text; st == CORE_OK && line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl)
      *nl = '\0';
    if (strlen(line) > 66 && line[64] == ' ') {
      const char *p = line + 65;
      while (*p == ' ' || *p == '*')
        p++;
      if (!grow((void **)&in->manifest, &cap, in->n_manifest,
                sizeof *in->manifest)) {
        st = core_fail(err, CORE_ENOMEM, "out of memory");
        break;
      }
      memcpy(in->manifest[in->n_manifest].sha256, line, 64);
      in->manifest[in->n_manifest].sha256[64] = '\0';
      in->manifest[in->n_manifest].path = core_strdup(p);
      if (!in->manifest[in->n_manifest].path) {
        st = core_fail(err, CORE_ENOMEM, "out of memory");
        break;
      }
      in->n_manifest++;
    }
    line = nl ? nl + 1 : NULL;
  }
  core_free(text);
  core_free(path);
  return st;
}

core_status data_report_inputs_load(const data_experiment *exp,
                                    data_report_inputs **out, core_err *err) {
  data_report_inputs *in = core_calloc(1, sizeof *in);
  char *dir = core_path_join(exp->dir, "batches");
  char **names = NULL, **ids = NULL;
  size_t n = 0, n_ids = 0, cap_ids = 0, cap_b = 0;
  core_status st = CORE_OK;
  *out = NULL;
  if (!in || !dir) {
    st = core_fail(err, CORE_ENOMEM, "out of memory");
    goto done;
  }
  if ((st = core_list_dir(dir, &names, &n, err)) != CORE_OK)
    goto done;
  /* A batch is known by its CSV or its facts; names are sorted, so
   * bNNNN.csv and bNNNN.json of one batch are neighbours. */
  for (size_t i = 0; i < n; i++) {
    const char *s = names[i];
    size_t l = strlen(s);
    if (!is_batch_name(s, ".csv") && !is_batch_name(s, ".json"))
      continue;
    l -= s[l - 1] == 'v' ? 4 : 5;
    if (n_ids && strlen(ids[n_ids - 1]) == l &&
        strncmp(ids[n_ids - 1], s, l) == 0)
      continue;
    if (!grow((void **)&ids, &cap_ids, n_ids, sizeof *ids) ||
        !(ids[n_ids] = core_strndup(s, l))) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto done;
    }
    n_ids++;
  }
  for (size_t i = 0; i < n_ids; i++) {
    if (!grow((void **)&in->batches, &cap_b, in->n_batches,
              sizeof *in->batches)) {
      st = core_fail(err, CORE_ENOMEM, "out of memory");
      goto done;
    }
    st = load_batch(exp, ids[i], &in->batches[in->n_batches], err);
    in->n_batches++; /* partly filled entries are freed below */
    if (st != CORE_OK)
      goto done;
  }
  st = load_manifest(exp, in, err);
done:
  core_names_free(names, n);
  core_names_free(ids, n_ids);
  core_free(dir);
  if (st != CORE_OK) {
    data_report_inputs_free(in);
    return st;
  }
  *out = in;
  return CORE_OK;
}

void data_report_inputs_free(data_report_inputs *in) {
  if (!in)
    return;
  for (size_t i = 0; i < in->n_batches; i++) {
    data_batch_info *b = &in->batches[i];
    core_free(b->id);
    for (size_t j = 0; j < b->n_facts; j++) {
      core_free(b->facts[j].key);
      core_free(b->facts[j].value);
    }
    core_free(b->facts);
    for (size_t j = 0; j < b->n_procs; j++)
      table_free(&b->procs[j]);
    core_free(b->procs);
  }
  core_free(in->batches);
  for (size_t i = 0; i < in->n_manifest; i++)
    core_free(in->manifest[i].path);
  core_free(in->manifest);
  core_free(in);
}

const char *data_fact_get(const data_batch_info *b, const char *key) {
  for (size_t i = 0; b && i < b->n_facts; i++)
    if (strcmp(b->facts[i].key, key) == 0)
      return b->facts[i].value;
  return NULL;
}
