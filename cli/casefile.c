/* The case-file parser and its schema checks.  Written to be fuzzed: every
 * input either parses or yields a message, never a crash or a leak. */
#define _POSIX_C_SOURCE 200809L
#include "casefile.h"
#include "../src/core/text.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define CF_MAX_BYTES (16u << 20)
#define CF_MAX_LIST 64

static int failf(cf_file *f, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* f->err = the formatted text, cut cleanly (strata__fit) when too long. */
static void set_err(cf_file *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void set_err(cf_file *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  strata__fit(f->err, sizeof f->err, vsnprintf(f->err, sizeof f->err, fmt, ap));
  va_end(ap);
}

/* f->err = "path:line: " (line > 0), "--set: " (line < 0) or "path: "
 * (line 0), then the message msg. */
static void set_err_at(cf_file *f, int line, const char *msg) {
  if (line > 0)
    set_err(f, "%s:%d: %s", f->path, line, msg);
  else if (line < 0)
    set_err(f, "--set: %s", msg);
  else
    set_err(f, "%s: %s", f->path, msg);
}

static int failf(cf_file *f, int line, const char *fmt, ...) {
  char msg[sizeof f->err];
  va_list ap;
  va_start(ap, fmt);
  strata__fit(msg, sizeof msg, vsnprintf(msg, sizeof msg, fmt, ap));
  va_end(ap);
  set_err_at(f, line, msg);
  return -1;
}

static char *dup_n(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

void cf_free(cf_file *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->e[i].key);
    free(f->e[i].value);
  }
  for (int i = 0; i < f->ns; i++) free(f->s[i].name);
  free(f->e);
  free(f->s);
  free(f->path);
  memset(f, 0, sizeof *f);
}

static int name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static int is_ws(char c) { return c == ' ' || c == '\t'; }

/* Shows at most 40 characters of s (one line) in a message. */
static const char *shown(const char *s, size_t n, char *buf, size_t bn) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 4 < bn && i < 40; i++)
    buf[k++] = (s[i] >= ' ' && s[i] < 127) ? s[i] : '?';
  if (n > 40 && k + 4 < bn) {
    memcpy(buf + k, "...", 3);
    k += 3;
  }
  buf[k] = 0;
  return buf;
}

static int add_section(cf_file *f, const char *name, size_t n, int line) {
  for (int i = 0; i < f->ns; i++)
    if (strlen(f->s[i].name) == n && !memcmp(f->s[i].name, name, n))
      return failf(f, line, "section [%s] appears twice (first at line %d)",
                   f->s[i].name, f->s[i].line);
  if (f->ns == f->scap) {
    int cap = f->scap ? 2 * f->scap : 8;
    cf_section *p = realloc(f->s, (size_t)cap * sizeof *p);
    if (!p) return failf(f, line, "out of memory");
    f->s = p;
    f->scap = cap;
  }
  f->s[f->ns].name = dup_n(name, n);
  if (!f->s[f->ns].name) return failf(f, line, "out of memory");
  f->s[f->ns++].line = line;
  return 0;
}

static int add_entry(cf_file *f, const char *key, size_t kn, char *value,
                     int line) {
  const char *sec = f->s[f->ns - 1].name;
  for (int i = 0; i < f->n; i++)
    if (f->e[i].section == sec && strlen(f->e[i].key) == kn &&
        !memcmp(f->e[i].key, key, kn)) {
      free(value);
      return failf(f, line, "key '%s' appears twice in section [%s] (first "
                   "at line %d)", f->e[i].key, sec, f->e[i].line);
    }
  if (f->n == f->cap) {
    int cap = f->cap ? 2 * f->cap : 16;
    cf_entry *p = realloc(f->e, (size_t)cap * sizeof *p);
    if (!p) {
      free(value);
      return failf(f, line, "out of memory");
    }
    f->e = p;
    f->cap = cap;
  }
  cf_entry *e = &f->e[f->n];
  e->key = dup_n(key, kn);
  if (!e->key) {
    free(value);
    return failf(f, line, "out of memory");
  }
  e->section = (char *)sec;
  e->value = value;
  e->line = line;
  f->n++;
  return 0;
}

/* The value after '=': a "quoted string" or the text up to a '#'. */
static int parse_value(cf_file *f, const char *key, size_t kn, const char *p,
                       const char *e, int line, char **out) {
  char b[64];
  while (p < e && is_ws(*p)) p++;
  if (p < e && *p == '"') {
    char *v = malloc((size_t)(e - p) + 1);
    if (!v) return failf(f, line, "out of memory");
    size_t k = 0;
    p++;
    for (;;) {
      if (p >= e) {
        free(v);
        return failf(f, line, "key '%s': the string has no closing '\"'",
                     shown(key, kn, b, sizeof b));
      }
      if (*p == '"') break;
      if (*p == '\\' && p + 1 < e && (p[1] == '"' || p[1] == '\\')) p++;
      v[k++] = *p++;
    }
    v[k] = 0;
    p++;
    while (p < e && is_ws(*p)) p++;
    if (p < e && *p != '#') {
      free(v);
      return failf(f, line, "key '%s': unexpected text after the closing "
                   "'\"'", shown(key, kn, b, sizeof b));
    }
    *out = v;
    return 0;
  }
  const char *q = p;
  while (q < e && *q != '#') q++;
  while (q > p && is_ws(q[-1])) q--;
  if (q == p)
    return failf(f, line, "key '%s' has no value", shown(key, kn, b,
                                                          sizeof b));
  *out = dup_n(p, (size_t)(q - p));
  if (!*out) return failf(f, line, "out of memory");
  return 0;
}

int cf_parse(cf_file *f, const char *path, const char *text, size_t len) {
  memset(f, 0, sizeof *f);
  f->path = dup_n(path ? path : "<case>", strlen(path ? path : "<case>"));
  if (!f->path) return -1;
  if (memchr(text, 0, len)) {
    size_t off = (size_t)((const char *)memchr(text, 0, len) - text);
    int line = 1;
    for (size_t i = 0; i < off; i++) line += text[i] == '\n';
    return failf(f, line, "NUL byte in the file (is it a text file?)");
  }
  const char *p = text, *end = text + len;
  char b[64];
  for (int line = 1; p < end; line++) {
    const char *e = memchr(p, '\n', (size_t)(end - p));
    const char *next = e ? e + 1 : end;
    if (!e) e = end;
    if (e > p && e[-1] == '\r') e--;
    if (line == 1 && e - p >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3)) p += 3;
    while (p < e && is_ws(*p)) p++;
    if (p == e || *p == '#') {
      p = next;
      continue;
    }
    if (*p == '[') {
      const char *q = p + 1, *n0, *n1;
      while (q < e && is_ws(*q)) q++;
      n0 = q;
      while (q < e && name_char(*q)) q++;
      n1 = q;
      while (q < e && is_ws(*q)) q++;
      if (q >= e || *q != ']')
        return failf(f, line, "bad section header '%s': expected [name] "
                     "with letters, digits, '_' and '-'",
                     shown(p, (size_t)(e - p), b, sizeof b));
      if (n1 == n0) return failf(f, line, "empty section name");
      q++;
      while (q < e && is_ws(*q)) q++;
      if (q < e && *q != '#')
        return failf(f, line, "unexpected text after the section header");
      if (add_section(f, n0, (size_t)(n1 - n0), line)) return -1;
      p = next;
      continue;
    }
    const char *k0 = p;
    while (p < e && name_char(*p)) p++;
    const char *k1 = p;
    while (p < e && is_ws(*p)) p++;
    if (k1 == k0 || p >= e || *p != '=') {
      if (k1 > k0 && (p >= e || *p == '#'))
        return failf(f, line, "key '%s' has no '=' and no value",
                     shown(k0, (size_t)(k1 - k0), b, sizeof b));
      return failf(f, line, "expected 'key = value', a [section] or a "
                   "# comment, got '%s' (keys use letters, digits, '_' and "
                   "'-')", shown(k0, (size_t)(e - k0), b, sizeof b));
    }
    if (f->ns == 0)
      return failf(f, line, "key '%s' comes before any [section]",
                   shown(k0, (size_t)(k1 - k0), b, sizeof b));
    char *v = NULL;
    if (parse_value(f, k0, (size_t)(k1 - k0), p + 1, e, line, &v)) {
      char msg[sizeof f->err];
      memcpy(msg, f->err, sizeof msg);
      const char *sec = f->s[f->ns - 1].name;
      set_err(f, "%s (in [%s])", msg, shown(sec, strlen(sec), b, sizeof b));
      return -1;
    }
    if (add_entry(f, k0, (size_t)(k1 - k0), v, line)) return -1;
    p = next;
  }
  return 0;
}

int cf_load(cf_file *f, const char *path) {
  memset(f, 0, sizeof *f);
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    int e = errno;
    f->path = dup_n(path, strlen(path));
    set_err(f, "%s: cannot open: %s", path, strerror(e));
    return -1;
  }
  char *buf = malloc(CF_MAX_BYTES + 1);
  size_t n = buf ? fread(buf, 1, CF_MAX_BYTES + 1, fp) : 0;
  int bad = ferror(fp);
  fclose(fp);
  if (!buf || bad || n > CF_MAX_BYTES) {
    free(buf);
    f->path = dup_n(path, strlen(path));
    set_err(f, "%s: %s", path,
            !buf ? "out of memory" : bad ? "read error (is it a directory?)"
                                         : "larger than 16 MiB");
    return -1;
  }
  int r = cf_parse(f, path, buf, n);
  free(buf);
  return r;
}

/* ---- schema ------------------------------------------------------------- */

static const cf_key *find_key(const cf_key *s, int n, const char *sec,
                              const char *key) {
  for (int i = 0; i < n; i++)
    if (!strcmp(s[i].section, sec) && !strcmp(s[i].key, key)) return &s[i];
  return NULL;
}

static const cf_entry *find_entry(const cf_file *f, const char *sec,
                                  const char *key) {
  for (int i = 0; i < f->n; i++)
    if (!strcmp(f->e[i].section, sec) && !strcmp(f->e[i].key, key))
      return &f->e[i];
  return NULL;
}

static int parse_int(const char *s, long *v) {
  char *end;
  errno = 0;
  *v = strtol(s, &end, 10);
  return s[0] && !errno && !*end && !is_ws(s[0]);
}

static int parse_float(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return s[0] && !*end && !is_ws(s[0]) && isfinite(*v) &&
         !(errno == ERANGE && *v != 0);
}

static int parse_bool(const char *s, int *v) {
  static const char *t[] = {"true", "yes", "on"}, *fa[] = {"false", "no",
                                                            "off"};
  for (int i = 0; i < 3; i++) {
    if (!strcmp(s, t[i])) return *v = 1, 1;
    if (!strcmp(s, fa[i])) return *v = 0, 1;
  }
  return 0;
}

int cf_in_choices(const char *choices, const char *s) {
  size_t n = strlen(s);
  const char *c = choices;
  while (*c) {
    const char *bar = strchr(c, '|');
    size_t L = bar ? (size_t)(bar - c) : strlen(c);
    if (L == n && !memcmp(c, s, n)) return 1;
    if (!bar) break;
    c = bar + 1;
  }
  return 0;
}

void cf_choices_text(const char *choices, char *buf, size_t n) {
  size_t k = 0;
  for (const char *c = choices; *c && k + 3 < n; c++) {
    if (*c == '|') {
      buf[k++] = ',';
      buf[k++] = ' ';
    } else {
      buf[k++] = *c;
    }
  }
  buf[k] = 0;
}

static int range_ok(const cf_key *k, double v) {
  return k->min > k->max || (v >= k->min && v <= k->max);
}

static int range_fail(cf_file *f, const cf_entry *e, const cf_key *k,
                      const char *what) {
  if (k->type == CF_INT || k->type == CF_INTS)
    return failf(f, e->line, "key '%s' in [%s]: %s is out of range %.0f..%.0f",
                 e->key, e->section, what, k->min, k->max);
  return failf(f, e->line, "key '%s' in [%s]: %s is out of range %g..%g",
               e->key, e->section, what, k->min, k->max);
}

/* Splits a list value into at most CF_MAX_LIST trimmed items in buf. */
static int split(char *v, char **items) {
  size_t L = strlen(v);
  if (L >= 2 && v[0] == '[' && v[L - 1] == ']') {
    v[L - 1] = 0;
    v++;
  }
  int n = 0;
  char *p = v;
  for (;;) {
    char *c = strchr(p, ',');
    if (c) *c = 0;
    while (is_ws(*p)) p++;
    char *q = p + strlen(p);
    while (q > p && is_ws(q[-1])) *--q = 0;
    if (n == CF_MAX_LIST) return -1;
    items[n++] = p;
    if (!c) break;
    p = c + 1;
  }
  return n;
}

/* Checks one entry against its key; fills the parsed values when asked. */
static int check_value(cf_file *f, const cf_entry *e, const cf_key *k,
                       long *iv, double *fv, int *count) {
  char shown_v[64], ch[512];
  shown(e->value, strlen(e->value), shown_v, sizeof shown_v);
  switch (k->type) {
  case CF_INT: {
    long v;
    if (!parse_int(e->value, &v))
      return failf(f, e->line, "key '%s' in [%s] must be an integer, got "
                   "'%s'", e->key, e->section, shown_v);
    if (!range_ok(k, (double)v)) return range_fail(f, e, k, shown_v);
    if (iv) *iv = v;
    return 0;
  }
  case CF_FLOAT: {
    double v;
    if (!parse_float(e->value, &v))
      return failf(f, e->line, "key '%s' in [%s] must be a finite number, "
                   "got '%s'", e->key, e->section, shown_v);
    if (!range_ok(k, v)) return range_fail(f, e, k, shown_v);
    if (fv) *fv = v;
    return 0;
  }
  case CF_BOOL: {
    int v;
    if (!parse_bool(e->value, &v))
      return failf(f, e->line, "key '%s' in [%s] must be true or false, got "
                   "'%s'", e->key, e->section, shown_v);
    if (iv) *iv = v;
    return 0;
  }
  case CF_STRING: {
    /* text goes on into summary.json and messages: UTF-8 only, so a file
     * saved in another encoding is refused here, not shown garbled */
    const unsigned char *u = (const unsigned char *)e->value;
    for (size_t i = 0; u[i];) {
      int n = text_utf8_len(u + i);
      if (n == 0)
        return failf(f, e->line, "key '%s' in [%s]: byte %zu of the value "
                     "(0x%02x) is not UTF-8; save the case file as UTF-8",
                     e->key, e->section, i + 1, u[i]);
      i += (size_t)n;
    }
    return 0;
  }
  case CF_ENUM:
    if (!cf_in_choices(k->choices, e->value)) {
      cf_choices_text(k->choices, ch, sizeof ch);
      return failf(f, e->line, "key '%s' in [%s]: '%s' is not one of: %s",
                   e->key, e->section, shown_v, ch);
    }
    return 0;
  case CF_INTS:
  case CF_FLOATS:
  case CF_ENUMS: {
    char *copy = dup_n(e->value, strlen(e->value)), *items[CF_MAX_LIST];
    if (!copy) return failf(f, e->line, "out of memory");
    int n = split(copy, items), r = 0;
    if (n < 0 || n < k->nmin || n > k->nmax) {
      r = k->nmin == k->nmax
              ? failf(f, e->line, "key '%s' in [%s] needs %d value%s, got "
                      "%s", e->key, e->section, k->nmin,
                      k->nmin == 1 ? "" : "s",
                      n < 0 ? "too many" : (snprintf(ch, sizeof ch, "%d", n), ch))
              : failf(f, e->line, "key '%s' in [%s] needs %d to %d values, "
                      "got %s", e->key, e->section, k->nmin, k->nmax,
                      n < 0 ? "too many" : (snprintf(ch, sizeof ch, "%d", n), ch));
      free(copy);
      return r;
    }
    for (int i = 0; i < n && !r; i++) {
      char sv[64];
      shown(items[i], strlen(items[i]), sv, sizeof sv);
      if (!items[i][0]) {
        r = failf(f, e->line, "key '%s' in [%s]: value %d of the list is "
                  "empty", e->key, e->section, i + 1);
      } else if (k->type == CF_INTS) {
        long v;
        if (!parse_int(items[i], &v))
          r = failf(f, e->line, "key '%s' in [%s]: value %d must be an "
                    "integer, got '%s'", e->key, e->section, i + 1, sv);
        else if (!range_ok(k, (double)v))
          r = range_fail(f, e, k, sv);
        else if (iv)
          iv[i] = v;
      } else if (k->type == CF_FLOATS) {
        double v;
        if (!parse_float(items[i], &v))
          r = failf(f, e->line, "key '%s' in [%s]: value %d must be a finite "
                    "number, got '%s'", e->key, e->section, i + 1, sv);
        else if (!range_ok(k, v))
          r = range_fail(f, e, k, sv);
        else if (fv)
          fv[i] = v;
      } else if (!cf_in_choices(k->choices, items[i])) {
        cf_choices_text(k->choices, ch, sizeof ch);
        r = failf(f, e->line, "key '%s' in [%s]: '%s' is not one of: %s",
                  e->key, e->section, sv, ch);
      }
    }
    if (count) *count = n;
    free(copy);
    return r;
  }
  }
  return failf(f, e->line, "internal: bad key type");
}

int cf_validate(cf_file *f, const cf_key *schema, int nschema,
                const char *mandatory,
                int (*allowed)(const char *section, void *user, char *why,
                               size_t n),
                void *user) {
  f->schema = schema;
  f->nschema = nschema;
  char known[1024], why[512];
  for (int i = 0; i < f->ns; i++) {
    const char *sec = f->s[i].name;
    int found = 0;
    for (int k = 0; k < nschema && !found; k++)
      found = !strcmp(schema[k].section, sec);
    if (!found) {
      size_t L = 0;
      known[0] = 0;
      for (int k = 0; k < nschema; k++) {
        int seen = 0;
        for (int j = 0; j < k && !seen; j++)
          seen = !strcmp(schema[j].section, schema[k].section);
        if (!seen && L + strlen(schema[k].section) + 4 < sizeof known)
          L += (size_t)snprintf(known + L, sizeof known - L, "%s[%s]",
                                L ? ", " : "", schema[k].section);
      }
      char b[64];
      return failf(f, f->s[i].line, "unknown section [%s] (known: %s)",
                   shown(sec, strlen(sec), b, sizeof b), known);
    }
    if (allowed && !allowed(sec, user, why, sizeof why))
      return failf(f, f->s[i].line, "section [%s] %s", sec, why);
  }
  for (int i = 0; i < f->n; i++) {
    const cf_entry *e = &f->e[i];
    const cf_key *k = find_key(schema, nschema, e->section, e->key);
    if (!k) {
      size_t L = 0;
      known[0] = 0;
      for (int j = 0; j < nschema; j++)
        if (!strcmp(schema[j].section, e->section) &&
            L + strlen(schema[j].key) + 4 < sizeof known)
          L += (size_t)snprintf(known + L, sizeof known - L, "%s%s",
                                L ? ", " : "", schema[j].key);
      char b[64];
      return failf(f, e->line, "unknown key '%s' in [%s] (known: %s)",
                   shown(e->key, strlen(e->key), b, sizeof b), e->section,
                   known);
    }
    if (check_value(f, e, k, NULL, NULL, NULL)) return -1;
  }
  for (int k = 0; k < nschema; k++) {
    if (schema[k].def) continue;
    int sl = cf_section_line(f, schema[k].section);
    if (sl == 0) {
      if (!mandatory || !cf_in_choices(mandatory, schema[k].section))
        continue; /* an optional section that is absent needs nothing */
      return failf(f, 0, "section [%s] is missing (it needs key '%s')",
                   schema[k].section, schema[k].key);
    }
    if (!find_entry(f, schema[k].section, schema[k].key))
      return failf(f, sl, "key '%s' in [%s] is required: %s", schema[k].key,
                   schema[k].section, schema[k].doc);
  }
  return 0;
}

int cf_fail(cf_file *f, const char *section, const char *key,
            const char *fmt, ...) {
  int line = key ? cf_line(f, section, key) : cf_section_line(f, section);
  if (line == 0) line = cf_section_line(f, section);
  char msg[sizeof f->err];
  int k = key ? snprintf(msg, sizeof msg, "key '%s' in [%s]: ", key, section)
              : snprintf(msg, sizeof msg, "section [%s]: ", section);
  if (k < 0 || (size_t)k >= sizeof msg) k = 0;
  va_list ap;
  va_start(ap, fmt);
  strata__fit(msg, sizeof msg,
           k + vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap));
  va_end(ap);
  set_err_at(f, line, msg);
  return -1;
}

int cf_set(cf_file *f, const char *section, const char *key,
           const char *value) {
  char b[64];
  for (const char *p = section; *p; p++)
    if (!name_char(*p))
      return failf(f, -1, "bad section name '%s'",
                   shown(section, strlen(section), b, sizeof b));
  for (const char *p = key; *p; p++)
    if (!name_char(*p))
      return failf(f, -1, "bad key name '%s'", shown(key, strlen(key), b,
                                                     sizeof b));
  if (!*section || !*key) return failf(f, -1, "empty section or key name");
  if (!*value) return failf(f, -1, "key '%s' in [%s] has no value", key,
                            section);
  int si = -1;
  for (int i = 0; i < f->ns && si < 0; i++)
    if (!strcmp(f->s[i].name, section)) si = i;
  if (si < 0) {
    if (add_section(f, section, strlen(section), -1)) return -1;
    si = f->ns - 1;
  }
  for (int i = 0; i < f->n; i++)
    if (f->e[i].section == f->s[si].name && !strcmp(f->e[i].key, key)) {
      char *v = dup_n(value, strlen(value));
      if (!v) return failf(f, -1, "out of memory");
      free(f->e[i].value);
      f->e[i].value = v;
      f->e[i].line = -1;
      return 0;
    }
  /* add_entry appends to the last section: put it there for the call */
  cf_section last = f->s[f->ns - 1];
  f->s[f->ns - 1] = f->s[si];
  f->s[si] = last;
  char *v = dup_n(value, strlen(value));
  int r = v ? add_entry(f, key, strlen(key), v, -1)
            : failf(f, -1, "out of memory");
  last = f->s[f->ns - 1];
  f->s[f->ns - 1] = f->s[si];
  f->s[si] = last;
  return r;
}

/* ---- getters ------------------------------------------------------------ */

int cf_has(const cf_file *f, const char *section, const char *key) {
  return find_entry(f, section, key) != NULL;
}

int cf_line(const cf_file *f, const char *section, const char *key) {
  const cf_entry *e = find_entry(f, section, key);
  return e ? e->line : 0;
}

int cf_section_line(const cf_file *f, const char *section) {
  for (int i = 0; i < f->ns; i++)
    if (!strcmp(f->s[i].name, section)) return f->s[i].line;
  return 0;
}

/* The entry and key, checked; NULL when absent (or, defensively, bad). */
static const cf_entry *get(const cf_file *f, const char *sec, const char *key,
                           const cf_key **k) {
  const cf_entry *e = find_entry(f, sec, key);
  *k = find_key(f->schema, f->nschema, sec, key);
  return e && *k ? e : NULL;
}

long cf_int(const cf_file *f, const char *section, const char *key,
            long def) {
  const cf_key *k;
  const cf_entry *e = get(f, section, key, &k);
  long v = def;
  if (e && check_value((cf_file *)f, e, k, &v, NULL, NULL)) return def;
  if (e && k->type == CF_ENUM && !parse_int(e->value, &v)) return def;
  return v;
}

double cf_float(const cf_file *f, const char *section, const char *key,
                double def) {
  const cf_key *k;
  const cf_entry *e = get(f, section, key, &k);
  double v = def;
  if (e && check_value((cf_file *)f, e, k, NULL, &v, NULL)) return def;
  return v;
}

int cf_bool(const cf_file *f, const char *section, const char *key, int def) {
  const cf_key *k;
  const cf_entry *e = get(f, section, key, &k);
  long v = def;
  if (e && check_value((cf_file *)f, e, k, &v, NULL, NULL)) return def;
  return (int)v;
}

const char *cf_string(const cf_file *f, const char *section, const char *key,
                      const char *def) {
  const cf_entry *e = find_entry(f, section, key);
  return e ? e->value : def;
}

int cf_ints(const cf_file *f, const char *section, const char *key,
            long *out, int max) {
  const cf_key *k;
  const cf_entry *e = get(f, section, key, &k);
  long tmp[CF_MAX_LIST];
  int n = 0;
  if (!e || check_value((cf_file *)f, e, k, tmp, NULL, &n)) return 0;
  for (int i = 0; i < n && i < max; i++) out[i] = tmp[i];
  return n;
}

int cf_floats(const cf_file *f, const char *section, const char *key,
              double *out, int max) {
  const cf_key *k;
  const cf_entry *e = get(f, section, key, &k);
  double tmp[CF_MAX_LIST];
  int n = 0;
  if (!e || check_value((cf_file *)f, e, k, NULL, tmp, &n)) return 0;
  for (int i = 0; i < n && i < max; i++) out[i] = tmp[i];
  return n;
}

int cf_enums_has(const cf_file *f, const char *section, const char *key,
                 const char *def, const char *choice) {
  const char *v = cf_string(f, section, key, def);
  if (!v) return 0;
  char *copy = dup_n(v, strlen(v)), *items[CF_MAX_LIST];
  if (!copy) return 0;
  int n = split(copy, items), hit = 0;
  for (int i = 0; i < n && !hit; i++) hit = !strcmp(items[i], choice);
  free(copy);
  return hit;
}

/* ---- docs --------------------------------------------------------------- */

static const char *type_name(const cf_key *k, char *buf, size_t n) {
  char ch[512];
  switch (k->type) {
  case CF_INT: return "integer";
  case CF_FLOAT: return "number";
  case CF_BOOL: return "true/false";
  case CF_STRING: return "string";
  case CF_ENUM:
    cf_choices_text(k->choices, ch, sizeof ch);
    snprintf(buf, n, "one of: %s", ch);
    return buf;
  case CF_INTS:
  case CF_FLOATS:
  case CF_ENUMS: {
    const char *what = k->type == CF_INTS ? "integers"
                       : k->type == CF_FLOATS ? "numbers"
                                              : "names";
    if (k->type == CF_ENUMS) {
      cf_choices_text(k->choices, ch, sizeof ch);
      snprintf(buf, n, "list of %d..%d of: %s", k->nmin, k->nmax, ch);
    } else if (k->nmin == k->nmax)
      snprintf(buf, n, "list of %d %s", k->nmin, what);
    else
      snprintf(buf, n, "list of %d..%d %s", k->nmin, k->nmax, what);
    return buf;
  }
  }
  return "?";
}

void cf_write_docs(const cf_key *schema, int n, FILE *out) {
  for (int i = 0; i < n; i++) {
    if (i == 0 || strcmp(schema[i].section, schema[i - 1].section)) {
      fprintf(out, "%s### [%s]\n\n| key | type | range | default | meaning "
              "|\n|---|---|---|---|---|\n", i ? "\n" : "", schema[i].section);
    }
    const cf_key *k = &schema[i];
    char tb[600], rb[64] = "";
    if (k->min <= k->max &&
        (k->type == CF_INT || k->type == CF_INTS))
      snprintf(rb, sizeof rb, "%.0f..%.0f", k->min, k->max);
    else if (k->min <= k->max)
      snprintf(rb, sizeof rb, "%g..%g", k->min, k->max);
    fprintf(out, "| `%s` | %s | %s | %s | %s |\n", k->key,
            type_name(k, tb, sizeof tb), rb,
            k->def ? (k->def[0] ? k->def : "(none)") : "**required**",
            k->doc);
  }
}
