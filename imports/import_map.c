/* import_map.c: which arm each result of an imported file is. A result is
 * a name (a hyperfine command, a Google Benchmark, a go benchmark) under a
 * configuration (the go `key: value` lines in effect); the file is read
 * once to learn them, the mappings (--arm-from, --arm-map) are resolved
 * against them, then the file is read again for its rows. One name under
 * two configurations is two results: they never pool in one arm.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "imports/imports_internal.h"

/* A table from strings to indices (open addressing). */
typedef struct smap {
  char **keys;
  long *vals;
  size_t n, cap;
} smap;

static uint32_t fnv(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static long smap_get(const smap *t, const char *k) {
  if (!t->cap)
    return -1;
  for (size_t i = fnv(k) & (t->cap - 1); t->keys[i];
       i = (i + 1) & (t->cap - 1))
    if (!strcmp(t->keys[i], k))
      return t->vals[i];
  return -1;
}

/* Adds k (copied) with v, or replaces its value. 0 when out of memory. */
static int smap_put(smap *t, const char *k, long v) {
  size_t i;
  if ((t->n + 1) * 2 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    char **keys = core_calloc(cap, sizeof *keys);
    long *vals = core_calloc(cap, sizeof *vals);
    if (!keys || !vals) {
      core_free(keys);
      core_free(vals);
      return 0;
    }
    for (size_t j = 0; j < t->cap; j++)
      if (t->keys[j]) {
        for (i = fnv(t->keys[j]) & (cap - 1); keys[i]; i = (i + 1) & (cap - 1))
          ;
        keys[i] = t->keys[j];
        vals[i] = t->vals[j];
      }
    core_free(t->keys);
    core_free(t->vals);
    t->keys = keys;
    t->vals = vals;
    t->cap = cap;
  }
  for (i = fnv(k) & (t->cap - 1); t->keys[i]; i = (i + 1) & (t->cap - 1))
    if (!strcmp(t->keys[i], k)) {
      t->vals[i] = v;
      return 1;
    }
  if (!(t->keys[i] = core_strdup(k)))
    return 0;
  t->vals[i] = v;
  t->n++;
  return 1;
}

static void smap_free(smap *t) {
  for (size_t i = 0; i < t->cap; i++)
    core_free(t->keys[i]);
  core_free(t->keys);
  core_free(t->vals);
  memset(t, 0, sizeof *t);
}

/* Growing arrays */
static int grow(void **p, size_t *cap, size_t n, size_t size) {
  void *q;
  size_t c;
  if (n < *cap)
    return 1;
  c = *cap ? *cap * 2 : 16;
  if (!(q = core_realloc(*p, c * size)))
    return 0;
  *p = q;
  *cap = c;
  return 1;
}

/* One mapping: NAME or {KEY=VALUE,...}NAME to an arm. */
typedef struct item {
  char *name;
  char *qual; /* "key: value\n" lines the configuration must hold, or "" */
  long arm;
  long next; /* the next item of the same name, -1 */
  int used;
  char *from; /* "--arm-from 'TEXT'" or "FILE:LINE", for messages */
} item;

typedef struct name_ent {
  char *name, *alt; /* alt: the go name without "Benchmark", or NULL */
  long first;       /* its first pair */
} name_ent;

typedef struct pair {
  long name, cfg, line, arm;
  long next; /* the next pair of the same name, -1 */
} pair;

typedef struct cfg_ent {
  char *text; /* "key: value\n" lines, sorted by key */
  int where_ok;
  long (*runs)[2]; /* [FIRST, LAST]...: the file lines of its runs */
  size_t n_runs, cap_runs;
} cfg_ent;

struct data_names {
  smap names, pairs, by_item, by_cfg;
  name_ent *ents;
  size_t n_ents, cap_ents;
  pair *pairs_v;
  size_t n_pairs, cap_pairs;
  cfg_ent *cfgs;
  size_t n_cfgs, cap_cfgs, cfg_bytes;
  item *items;
  size_t n_items, cap_items;
  long last_run_cfg; /* the configuration of the last run recorded */
};

data_names *data_names_new(void) {
  return core_calloc(1, sizeof(data_names));
}

void data_names_free(data_names *n) {
  if (!n)
    return;
  smap_free(&n->names);
  smap_free(&n->pairs);
  smap_free(&n->by_item);
  smap_free(&n->by_cfg);
  for (size_t i = 0; i < n->n_ents; i++) {
    core_free(n->ents[i].name);
    core_free(n->ents[i].alt);
  }
  for (size_t i = 0; i < n->n_cfgs; i++) {
    core_free(n->cfgs[i].text);
    core_free(n->cfgs[i].runs);
  }
  for (size_t i = 0; i < n->n_items; i++) {
    core_free(n->items[i].name);
    core_free(n->items[i].qual);
    core_free(n->items[i].from);
  }
  core_free(n->ents);
  core_free(n->pairs_v);
  core_free(n->cfgs);
  core_free(n->items);
  core_free(n);
}

/* Configurations */

/* The value of key in configuration text cfg ("key: value\n" lines), or
 * NULL; OUT: *len its length. */
static const char *cfg_value(const char *cfg, const char *key, size_t *len) {
  size_t kl = strlen(key);
  for (const char *p = cfg; *p;) {
    const char *nl = strchr(p, '\n');
    size_t ll = nl ? (size_t)(nl - p) : strlen(p);
    if (ll > kl + 1 && !strncmp(p, key, kl) && p[kl] == ':' &&
        p[kl + 1] == ' ') {
      *len = ll - kl - 2;
      return p + kl + 2;
    }
    p += ll + (nl ? 1 : 0);
  }
  return NULL;
}

/* Whether configuration cfg holds every line of qual. */
static int cfg_holds(const char *cfg, const char *qual) {
  for (const char *p = qual; *p;) {
    const char *nl = strchr(p, '\n'), *colon = strchr(p, ':');
    size_t ll = nl ? (size_t)(nl - p) : strlen(p), vl;
    char key[256];
    const char *v;
    if (!colon || colon > p + ll || (size_t)(colon - p) >= sizeof key)
      return 0;
    snprintf(key, sizeof key, "%.*s", (int)(colon - p), p);
    v = cfg_value(cfg, key, &vl);
    if (!v || vl != ll - (size_t)(colon - p) - 2 ||
        strncmp(v, colon + 2, vl) != 0)
      return 0;
    p += ll + (nl ? 1 : 0);
  }
  return 1;
}

/* "KEY=VALUE" (the first '=' splits: keys hold none) as the line
 * "KEY: VALUE\n" appended to b; 0 when it is not of that form. */
static int kv_line(core_buf *b, const char *s, size_t len) {
  const char *eq = memchr(s, '=', len);
  if (!eq || eq == s)
    return 0;
  core_buf_printf(b, "%.*s: %.*s\n", (int)(eq - s), s,
                  (int)(len - (size_t)(eq - s) - 1), eq + 1);
  return 1;
}

core_status data_names_config(data_names *n, const char *text,
                              const data_import_opts *o, long *idx,
                              core_err *err) {
  core_buf w;
  int ok;
  long known = smap_get(&n->by_cfg, text);
  if (known >= 0)
    return *idx = known, CORE_OK;
  if (n->n_cfgs >= IMPORT_CONFIGS_MAX)
    return core_fail(err, CORE_EINPUT,
                     "more than %d different configurations (go key: value "
                     "lines); prereg imports at most that many from a file",
                     IMPORT_CONFIGS_MAX);
  if (!grow((void **)&n->cfgs, &n->cap_cfgs, n->n_cfgs, sizeof *n->cfgs))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  core_buf_init(&w);
  for (size_t i = 0; o && i < o->n_where; i++)
    kv_line(&w, o->where[i], strlen(o->where[i]));
  ok = !w.oom && cfg_holds(text, w.data ? w.data : "");
  core_buf_free(&w);
  if (!(n->cfgs[n->n_cfgs].text = core_strdup(text)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  n->cfgs[n->n_cfgs].where_ok = ok;
  n->cfgs[n->n_cfgs].runs = NULL;
  n->cfgs[n->n_cfgs].n_runs = n->cfgs[n->n_cfgs].cap_runs = 0;
  *idx = (long)n->n_cfgs++;
  if (!smap_put(&n->by_cfg, text, *idx))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return CORE_OK;
}

int data_names_where_ok(const data_names *n, long cfg) {
  return cfg < 0 || n->cfgs[cfg].where_ok;
}

/* Names seen */

/* The pair key: the configuration's index and the name's. */
static void pair_key(char *k, size_t cap, long name, long cfg) {
  snprintf(k, cap, "%ld/%ld", cfg, name);
}

core_status data_names_see(data_names *n, const char *name, const char *alt,
                           long cfg, long line, core_err *err) {
  long e = smap_get(&n->names, name);
  char k[48];
  if (e < 0) {
    name_ent *ne;
    if (!grow((void **)&n->ents, &n->cap_ents, n->n_ents, sizeof *n->ents))
      return core_fail(err, CORE_ENOMEM, "out of memory");
    ne = &n->ents[n->n_ents];
    ne->name = core_strdup(name);
    ne->alt = alt ? core_strdup(alt) : NULL;
    ne->first = -1;
    e = (long)n->n_ents++;
    if (!ne->name || (alt && !ne->alt) || !smap_put(&n->names, name, e) ||
        (alt && smap_get(&n->names, alt) < 0 && !smap_put(&n->names, alt, e)))
      return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  pair_key(k, sizeof k, e, cfg);
  if (smap_get(&n->pairs, k) < 0) {
    pair *p;
    if (!grow((void **)&n->pairs_v, &n->cap_pairs, n->n_pairs,
              sizeof *n->pairs_v))
      return core_fail(err, CORE_ENOMEM, "out of memory");
    p = &n->pairs_v[n->n_pairs];
    p->name = e;
    p->cfg = cfg;
    p->line = line;
    p->arm = -1;
    p->next = n->ents[e].first;
    n->ents[e].first = (long)n->n_pairs;
    if (!smap_put(&n->pairs, k, (long)n->n_pairs++))
      return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  return CORE_OK;
}

size_t data_names_count(const data_names *n) {
  return n->n_pairs;
}

long data_names_arm(const data_names *n, const char *name, long cfg) {
  long e = smap_get(&n->names, name), p;
  char k[48];
  if (e < 0)
    return -1;
  pair_key(k, sizeof k, e, cfg);
  p = smap_get(&n->pairs, k);
  return p < 0 ? -1 : n->pairs_v[p].arm;
}

/* Mappings */

/* Splits head (NAME or {KEY=VALUE,...}NAME) into the item's name and
 * qualifier. 0 when out of memory. */
static int item_head(item *it, const char *head, size_t len) {
  const char *close = len && head[0] == '{' ? memchr(head, '}', len) : NULL;
  core_buf q;
  core_buf_init(&q);
  if (close) {
    const char *p = head + 1;
    while (p < close) {
      const char *c = memchr(p, ',', (size_t)(close - p));
      const char *e = c ? c : close;
      if (!kv_line(&q, p, (size_t)(e - p))) {
        close = NULL; /* not a qualifier: a name that starts with '{' */
        break;
      }
      p = e + 1;
    }
  }
  if (!close) {
    core_buf_free(&q);
    core_buf_init(&q);
  }
  it->qual = core_strdup(q.data ? q.data : "");
  it->name = close ? core_strndup(close + 1, len - (size_t)(close + 1 - head))
                   : core_strndup(head, len);
  core_buf_free(&q);
  return it->qual && it->name && !q.oom;
}

/* Whether head names a result of the file. */
static int in_file(const data_names *n, const char *head, size_t len) {
  item it = {0};
  long e;
  int found = 0;
  if (!item_head(&it, head, len)) {
    core_free(it.name);
    core_free(it.qual);
    return 0;
  }
  if ((e = smap_get(&n->names, it.name)) >= 0)
    for (long p = n->ents[e].first; p >= 0 && !found; p = n->pairs_v[p].next)
      found = n->pairs_v[p].cfg < 0
                  ? !it.qual[0]
                  : cfg_holds(n->cfgs[n->pairs_v[p].cfg].text, it.qual);
  core_free(it.name);
  core_free(it.qual);
  return found;
}

/* The refusal of an arm the sheet does not declare. */
static core_status no_such_arm(const proto_sheet *s, const char *from,
                               const char *arm, core_err *err) {
  core_buf b;
  core_status st;
  core_buf_init(&b);
  for (size_t i = 0; i < s->n_arms && b.len < IMPORT_QUOTE_MAX; i++)
    core_buf_printf(&b, "%s%s", i ? ", " : "", s->arms[i].name);
  if (b.len >= IMPORT_QUOTE_MAX)
    core_buf_printf(&b, ", ... (%zu arms)", s->n_arms);
  st = core_fail(err, CORE_EUSAGE,
                 "%s: arm '%.*s' is not declared in %s "
                 "(declared: %s)",
                 from, IMPORT_QUOTE_MAX, arm, s->path ? s->path : "the sheet",
                 b.data ? b.data : "none");
  core_buf_free(&b);
  return st;
}

/* Adds the item head=arm (from names it in messages). */
static core_status add_item(data_names *n, const proto_sheet *s,
                            const char *head, size_t hlen, const char *arm,
                            size_t alen, const char *from, core_err *err) {
  item *it;
  char *a = core_strndup(arm, alen);
  long prev;
  if (!a ||
      !grow((void **)&n->items, &n->cap_items, n->n_items, sizeof *n->items)) {
    core_free(a);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  it = &n->items[n->n_items];
  memset(it, 0, sizeof *it);
  it->arm = proto_arm_index(s, a);
  it->from = core_strdup(from);
  n->n_items++;
  if (!item_head(it, head, hlen) || !it->from) {
    core_free(a);
    return core_fail(err, CORE_ENOMEM, "out of memory");
  }
  if (it->arm < 0) {
    core_status st = no_such_arm(s, from, a, err);
    core_free(a);
    return st;
  }
  core_free(a);
  prev = smap_get(&n->by_item, it->name);
  it->next = prev;
  if (!smap_put(&n->by_item, it->name, (long)(n->n_items - 1)))
    return core_fail(err, CORE_ENOMEM, "out of memory");
  return CORE_OK;
}

/* The items of one --arm-from split at commas outside braces. check
 * only: nothing added, the first problem returned. */
static core_status split_flag(data_names *n, const proto_sheet *s,
                              const char *f, int check, core_err *err) {
  const char *p = f;
  while (*p) {
    const char *q = p, *eq = NULL;
    int depth = 0;
    for (; *q && (depth || *q != ','); q++) {
      depth += *q == '{' ? 1 : *q == '}' && depth ? -1 : 0;
      if (*q == '=')
        eq = q;
    }
    if (!eq)
      return core_fail(err, CORE_EUSAGE,
                       "--arm-from: '%.*s' lacks '='; write NAME=ARM (or "
                       "several, NAME=ARM,NAME2=ARM2; a name that holds "
                       "commas in a flag of its own, or in --arm-map FILE)",
                       (int)((size_t)(q - p) > IMPORT_QUOTE_MAX
                                 ? IMPORT_QUOTE_MAX
                                 : (size_t)(q - p)),
                       p);
    if (check) {
      char *a = core_strndup(eq + 1, (size_t)(q - eq - 1));
      core_status st = CORE_OK;
      if (!a)
        return core_fail(err, CORE_ENOMEM, "out of memory");
      if (proto_arm_index(s, a) < 0)
        st = no_such_arm(s, "--arm-from", a, err);
      core_free(a);
      if (st != CORE_OK)
        return st;
    } else {
      char from[IMPORT_QUOTE_MAX + 16];
      core_status st;
      snprintf(from, sizeof from, "--arm-from '%.*s'",
               (int)((size_t)(q - p) > IMPORT_QUOTE_MAX ? IMPORT_QUOTE_MAX
                                                        : (size_t)(q - p)),
               p);
      st = add_item(n, s, p, (size_t)(eq - p), eq + 1, (size_t)(q - eq - 1),
                    from, err);
      if (st != CORE_OK)
        return st;
    }
    p = *q ? q + 1 : q;
  }
  return CORE_OK;
}

core_status data_names_check_flags(const proto_sheet *s,
                                   const data_import_opts *o, core_err *err) {
  for (size_t i = 0; o && i < o->n_arm_from; i++) {
    const char *f = o->arm_from[i], *eq = strrchr(f, '=');
    /* As one mapping it needs only its last part to be an arm; split at
     * commas, every item must be NAME=ARM. Which it is depends on the
     * file's names, so a flag fails here only when it can be neither. */
    if (eq && proto_arm_index(s, eq + 1) >= 0)
      continue;
    core_status st = split_flag(NULL, s, f, 1, err);
    if (st != CORE_OK)
      return st;
  }
  for (size_t i = 0; o && i < o->n_where; i++)
    if (!strchr(o->where[i], '=') || o->where[i][0] == '=')
      return core_fail(err, CORE_EUSAGE,
                       "--where '%.*s': write KEY=VALUE (a configuration "
                       "line 'KEY: VALUE' of go test output)",
                       IMPORT_QUOTE_MAX, o->where[i]);
  return CORE_OK;
}

/* The lines NAME<TAB>ARM of --arm-map FILE. */
static core_status read_arm_map(data_names *n, const proto_sheet *s,
                                const char *path, core_err *err) {
  char *text = NULL, from[600];
  size_t len = 0;
  long line = 0;
  core_status st =
      core_read_file_max(path, IMPORT_ARM_MAP_MAX, 1, &text, &len, err);
  if (st != CORE_OK) {
    if (err)
      err->status = CORE_EUSAGE;
    return CORE_EUSAGE;
  }
  for (const char *p = text; st == CORE_OK && p < text + len;) {
    const char *nl = memchr(p, '\n', (size_t)(text + len - p));
    size_t ll = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
    const char *tab = NULL;
    line++;
    if (ll && p[ll - 1] == '\r')
      ll--;
    for (const char *q = p; q < p + ll; q++)
      if (*q == '\t')
        tab = q;
    snprintf(from, sizeof from, "%.400s:%ld", path, line);
    if (memchr(p, '\0', ll) || core_utf8_invalid(p, ll) < ll)
      st = core_fail(err, CORE_EUSAGE, "%s: not UTF-8 text", from);
    else if (ll && (!tab || tab == p || tab == p + ll - 1))
      st = core_fail(err, CORE_EUSAGE,
                     "%s: write NAME, a TAB and ARM (the last TAB splits)",
                     from);
    else if (ll)
      st = add_item(n, s, p, (size_t)(tab - p), tab + 1,
                    (size_t)(p + ll - tab - 1), from, err);
    p = nl ? nl + 1 : text + len;
  }
  core_free(text);
  return st;
}

/* The arm of pair p by the items: the most specific match (a qualified
 * item over a plain one). -1 when none; -2 when two give it different
 * arms (err filled). */
static long arm_by_items(data_names *n, const pair *p, const char *file,
                         core_err *err) {
  const name_ent *e = &n->ents[p->name];
  const char *names[2] = {e->name, e->alt};
  long best = -1;
  int best_q = -1;
  for (int k = 0; k < 2; k++)
    for (long i = names[k] ? smap_get(&n->by_item, names[k]) : -1; i >= 0;
         i = n->items[i].next) {
      item *it = &n->items[i];
      int q = it->qual[0] != '\0';
      if (q && (p->cfg < 0 || !cfg_holds(n->cfgs[p->cfg].text, it->qual)))
        continue;
      it->used = 1;
      if (q > best_q) {
        best = i;
        best_q = q;
      } else if (q == best_q && n->items[best].arm != it->arm) {
        core_fail(err, CORE_EUSAGE,
                  "%s:%ld: %.*s is mapped to two arms, by %s and by %s; "
                  "keep one",
                  file, p->line, IMPORT_QUOTE_MAX, e->alt ? e->alt : e->name,
                  n->items[best].from, it->from);
        return -2;
      }
    }
  return best < 0 ? -1 : n->items[best].arm;
}

/* The first key whose value differs between configurations a and b (or
 * that one lacks), with each side's value ("" when absent). 0 when they
 * are the same. */
static int first_diff(const char *a, const char *b, char *key, size_t kcap,
                      const char **va, size_t *la, const char **vb,
                      size_t *lb) {
  for (int side = 0; side < 2; side++) {
    const char *x = side ? b : a, *y = side ? a : b;
    for (const char *p = x; *p;) {
      const char *nl = strchr(p, '\n'), *colon = strchr(p, ':');
      size_t ll = nl ? (size_t)(nl - p) : strlen(p), l1, l2;
      const char *v1, *v2;
      snprintf(key, kcap, "%.*s", (int)(colon - p), p);
      v1 = cfg_value(x, key, &l1);
      v2 = cfg_value(y, key, &l2);
      if (!v2 || l1 != l2 || strncmp(v1, v2, l1) != 0) {
        *va = side ? (v2 ? v2 : "") : v1;
        *la = side ? (v2 ? l2 : 0) : l1;
        *vb = side ? v1 : (v2 ? v2 : "");
        *lb = side ? l1 : (v2 ? l2 : 0);
        return 1;
      }
      p += ll + (nl ? 1 : 0);
    }
  }
  return 0;
}

/* Appends the text fmt makes as one word for the shell. */
__attribute__((format(printf, 2, 3))) static void
sh_word(core_buf *b, const char *fmt, ...) {
  core_buf w;
  va_list ap;
  core_buf_init(&w);
  va_start(ap, fmt);
  core_buf_vprintf(&w, fmt, ap);
  va_end(ap);
  core_buf_sh_quote(b, w.data ? w.data : "", w.len);
  core_buf_free(&w);
}

/* The message of pooled: the hints are one word each for the shell. */
static core_status pooled_fail(const pair *p, const pair *q, const char *file,
                               const char *shown, const char *key,
                               const char *va, size_t la, const char *vb,
                               size_t lb, const char *arm, core_err *err) {
  core_buf where, from;
  core_status st;
  core_buf_init(&where);
  core_buf_init(&from);
  sh_word(&where, "%s=%.*s", key, (int)la, va);
  sh_word(&from, "{%s=%.*s}%.*s=ARM", key, (int)la, va, IMPORT_QUOTE_MAX,
          shown);
  st = where.oom || from.oom
           ? core_fail(err, CORE_ENOMEM, "out of memory")
           : core_fail(err, CORE_EINPUT,
                       "%s:%ld: %.*s is measured under two configurations "
                       "that differ in %s ('%.*s' at line %ld, '%.*s' at "
                       "line %ld), and both map to arm '%s': pooled, they "
                       "would give one wrong number; select one with --where "
                       "%s, or give each its arm with --arm-from %s; nothing "
                       "was imported",
                       file, q->line, IMPORT_QUOTE_MAX, shown, key, (int)la,
                       va, p->line, (int)lb, vb, q->line, arm, where.data,
                       from.data);
  core_buf_free(&where);
  core_buf_free(&from);
  return st;
}

/* The refusal of one name under two configurations, p and q, in one arm. */
static core_status pooled(const data_names *n, const proto_sheet *s,
                          const pair *p, const pair *q, const char *file,
                          core_err *err) {
  const name_ent *e = &n->ents[p->name];
  const char *shown = e->alt ? e->alt : e->name, *va, *vb;
  char key[256];
  size_t la, lb;
  if (!first_diff(n->cfgs[p->cfg].text, n->cfgs[q->cfg].text, key, sizeof key,
                  &va, &la, &vb, &lb))
    return CORE_OK;
  if (la > IMPORT_QUOTE_MAX / 2)
    la = IMPORT_QUOTE_MAX / 2;
  if (lb > IMPORT_QUOTE_MAX / 2)
    lb = IMPORT_QUOTE_MAX / 2;
  return pooled_fail(p, q, file, shown, key, va, la, vb, lb,
                     s->arms[p->arm].name, err);
}

/* Decides each flag (one mapping when the text before its last '=' is a
 * name of the file, else items split at commas) and reads --arm-map. */
static core_status read_items(data_names *n, const proto_sheet *s,
                              const data_import_opts *o, core_err *err) {
  core_status st = CORE_OK;
  for (size_t i = 0; st == CORE_OK && i < o->n_arm_from; i++) {
    const char *f = o->arm_from[i], *eq = strrchr(f, '=');
    if (eq && in_file(n, f, (size_t)(eq - f))) {
      char from[IMPORT_QUOTE_MAX + 16];
      snprintf(from, sizeof from, "--arm-from '%.*s'", IMPORT_QUOTE_MAX, f);
      st = add_item(n, s, f, (size_t)(eq - f), eq + 1, strlen(eq + 1), from,
                    err);
    } else {
      st = split_flag(n, s, f, 0, err);
    }
  }
  if (st == CORE_OK && o->arm_map)
    st = read_arm_map(n, s, o->arm_map, err);
  return st;
}

/* With --ignore-unmapped a mapping that names nothing in the file is a
 * typo that would leave a benchmark out unseen. */
static core_status all_used(const data_names *n, const char *file,
                            core_err *err) {
  for (size_t i = 0; i < n->n_items; i++)
    if (!n->items[i].used)
      return core_fail(err, CORE_EUSAGE,
                       "%s: %s names no result of the file, and with "
                       "--ignore-unmapped a misspelt name would leave its "
                       "benchmark out; correct or remove it",
                       file, n->items[i].from);
  return CORE_OK;
}

core_status data_names_resolve(data_names *n, const proto_sheet *s,
                               const data_import_opts *o, const char *file,
                               long (*fallback)(void *, const char *),
                               void *ctx, core_err *err) {
  core_status st = read_items(n, s, o, err);
  for (size_t i = 0; st == CORE_OK && i < n->n_pairs; i++) {
    pair *p = &n->pairs_v[i];
    const name_ent *e = &n->ents[p->name];
    long a = arm_by_items(n, p, file, err);
    if (a == -2)
      return err ? err->status : CORE_EUSAGE;
    if (a < 0)
      a = fallback(ctx, e->name);
    if (a < 0 && e->alt)
      a = fallback(ctx, e->alt);
    p->arm = a < 0 && o->ignore_unmapped ? -3 : a;
  }
  if (st == CORE_OK && o->ignore_unmapped)
    st = all_used(n, file, err);
  for (size_t i = 0; st == CORE_OK && i < n->n_pairs; i++)
    for (long j = n->pairs_v[i].next; st == CORE_OK && j >= 0;
         j = n->pairs_v[j].next)
      if (n->pairs_v[i].arm >= 0 && n->pairs_v[j].arm == n->pairs_v[i].arm)
        st = n->pairs_v[i].line < n->pairs_v[j].line
                 ? pooled(n, s, &n->pairs_v[i], &n->pairs_v[j], file, err)
                 : pooled(n, s, &n->pairs_v[j], &n->pairs_v[i], file, err);
  return st;
}

core_status data_names_left_out(const data_names *n, char ***out,
                                size_t *count, core_err *err) {
  *out = NULL;
  *count = 0;
  for (size_t i = 0; i < n->n_ents; i++) {
    const name_ent *e = &n->ents[i];
    int all = 1, any = 0;
    for (long p = e->first; p >= 0; p = n->pairs_v[p].next) {
      any |= n->pairs_v[p].arm == -3;
      all &= n->pairs_v[p].arm == -3;
    }
    for (long p = e->first; any && p >= 0; p = n->pairs_v[p].next) {
      core_buf b;
      char **grown;
      if (n->pairs_v[p].arm != -3)
        continue;
      core_buf_init(&b);
      if (!all)
        core_buf_printf(&b, "%s under %s", e->alt ? e->alt : e->name,
                        n->cfgs[n->pairs_v[p].cfg].text);
      else
        core_buf_printf(&b, "%s", e->alt ? e->alt : e->name);
      while (b.len && b.data[b.len - 1] == '\n')
        b.data[--b.len] = '\0';
      grown = core_realloc(*out, (*count + 1) * sizeof *grown);
      if (!grown || b.oom) {
        core_buf_free(&b);
        return core_fail(err, CORE_ENOMEM, "out of memory");
      }
      *out = grown;
      (*out)[(*count)++] = b.data ? b.data : core_strdup("");
      if (all)
        break;
    }
  }
  return CORE_OK;
}

core_status data_names_add_run(data_names *n, long cfg, long line,
                               core_err *err) {
  cfg_ent *c;
  long(*runs)[2];
  if (cfg < 0)
    return CORE_OK;
  c = &n->cfgs[cfg];
  /* Runs in a row under one configuration are one range of lines. */
  if (c->n_runs && n->last_run_cfg == cfg &&
      c->runs[c->n_runs - 1][1] <= line) {
    c->runs[c->n_runs - 1][1] = line;
  } else {
    if (!(runs = core_grow(c->runs, &c->cap_runs, c->n_runs, sizeof *runs, 4)))
      return core_fail(err, CORE_ENOMEM, "out of memory");
    c->runs = runs;
    c->runs[c->n_runs][0] = c->runs[c->n_runs][1] = line;
    c->n_runs++;
  }
  n->last_run_cfg = cfg;
  return CORE_OK;
}

/* {KEY: VALUE...} of configuration text ("key: value\n" lines); a line
 * that is no UTF-8 is left out. NULL when out of memory. */
static data_json *config_object(const char *text) {
  data_json *kv = data_json_new_object();
  for (const char *p = text; kv && *p;) {
    const char *nl = strchr(p, '\n'), *colon = strchr(p, ':');
    size_t ll = nl ? (size_t)(nl - p) : strlen(p);
    char *k = core_strndup(p, (size_t)(colon - p));
    char *v = core_strndup(colon + 2, ll - (size_t)(colon - p) - 2);
    if (k && v)
      data_json_set(kv, k, data_json_new_text(v));
    core_free(k);
    core_free(v);
    p += ll + (nl ? 1 : 0);
  }
  return kv;
}

/* [[FIRST, LAST]...] of c's runs, or NULL when out of memory. */
static data_json *run_lines(const cfg_ent *c) {
  data_json *all = data_json_new_array();
  for (size_t i = 0; all && i < c->n_runs; i++) {
    data_json *r = data_json_new_array();
    if (data_json_append(r, data_json_new_integer(c->runs[i][0])) ||
        data_json_append(r, data_json_new_integer(c->runs[i][1])) ||
        data_json_append(all, r)) {
      data_json_free(all);
      return NULL;
    }
  }
  return all;
}

data_json *data_names_configs_json(const data_names *n) {
  data_json *all = data_json_new_array();
  for (size_t i = 0; all && i < n->n_cfgs; i++) {
    data_json *c;
    if (!n->cfgs[i].n_runs)
      continue;
    if (!(c = data_json_new_object()) ||
        data_json_set(c, "configuration", config_object(n->cfgs[i].text)) ||
        data_json_set(c, "lines", run_lines(&n->cfgs[i])) ||
        data_json_append(all, c)) {
      data_json_free(all);
      return NULL;
    }
  }
  return all;
}
