/* Status table, context lifecycle and backend selection. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static const char *const status_msg[] = {
#define X(name, msg) msg,
    STRATA_STATUS_MAP(X)
#undef X
};
static const char *const status_names[] = {
#define X(name, msg) "STRATA_" #name,
    STRATA_STATUS_MAP(X)
#undef X
};

const char *strata_strerror(strata_status s) {
  if ((int)s < 0 || s >= STRATA__STATUS_COUNT) return "unknown status";
  return status_msg[s];
}

const char *strata_status_name(strata_status s) {
  if ((int)s < 0 || s >= STRATA__STATUS_COUNT) return "STRATA_UNKNOWN";
  return status_names[s];
}

#define STRATA__STR2(x) #x
#define STRATA__STR(x) STRATA__STR2(x)

const char *strata_version(void) {
  return STRATA__STR(STRATA_VERSION_MAJOR) "." STRATA__STR(
      STRATA_VERSION_MINOR) "." STRATA__STR(STRATA_VERSION_PATCH);
}

const char *strata_build_info(void) {
  return "cuda="
#ifdef STRATA_HAVE_CUDA
         "yes"
#else
         "no"
#endif
         " openmp="
#ifdef _OPENMP
         "yes"
#else
         "no"
#endif
         " compiler="
#if defined(__clang__)
         "clang-" __clang_version__
#elif defined(__GNUC__)
         "gcc-" __VERSION__
#else
         "unknown"
#endif
      ;
}

static void record(strata_context *ctx, const char *name, const char *value,
                   const char *fmt, va_list ap) {
  strata__fit(ctx->error, sizeof ctx->error,
              vsnprintf(ctx->error, sizeof ctx->error, fmt, ap));
  snprintf(ctx->error_arg, sizeof ctx->error_arg, "%s", name);
  snprintf(ctx->error_value, sizeof ctx->error_value, "%s", value);
  ctx->error_elsewhere = 0;
}

int strata__interrupted(const strata_context *ctx) {
  return ctx && ctx->interrupt && ctx->interrupt(ctx->interrupt_arg) != 0;
}

strata_status strata__fail(strata_context *ctx, strata_status s,
                           const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (ctx) record(ctx, "", "", fmt, ap);
  va_end(ap);
  return s;
}

strata_status strata__fail_elsewhere(strata_context *ctx, strata_status s,
                                     const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (ctx) {
    record(ctx, "", "", fmt, ap);
    ctx->error_elsewhere = 1;
  }
  va_end(ap);
  return s;
}

void strata__error_keep(const strata_context *ctx, strata__kept_error *k) {
  k->elsewhere = ctx->error_elsewhere;
  memcpy(k->msg, ctx->error, sizeof k->msg);
  memcpy(k->arg, ctx->error_arg, sizeof k->arg);
  memcpy(k->value, ctx->error_value, sizeof k->value);
}

void strata__error_restore(strata_context *ctx, const strata__kept_error *k) {
  ctx->error_elsewhere = k->elsewhere;
  memcpy(ctx->error, k->msg, sizeof k->msg);
  memcpy(ctx->error_arg, k->arg, sizeof k->arg);
  memcpy(ctx->error_value, k->value, sizeof k->value);
}

void strata__error_clear(strata_context *ctx) {
  ctx->error[0] = ctx->error_arg[0] = ctx->error_value[0] = '\0';
  ctx->error_elsewhere = 0;
}

strata_status strata__fail_arg_s(strata_context *ctx, strata_status s,
                                 const char *name, const char *value,
                                 const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (ctx) record(ctx, name ? name : "", value ? value : "NULL", fmt, ap);
  va_end(ap);
  return s;
}

strata__argval strata__argval_d(double v) {
  /* the shortest %g that reads back as v: 0.3 shows as 0.3, and a value
   * one bit away from it with every digit */
  strata__argval a;
  for (int p = 6; p <= 17; p++) {
    snprintf(a.s, sizeof a.s, "%.*g", p, v);
    if (!isfinite(v) || strtod(a.s, NULL) == v) break;
  }
  return a;
}

strata__versus strata__vs(double v, double limit) {
  strata__versus t;
  for (int p = 6; p <= 17; p++) {
    snprintf(t.v, sizeof t.v, "%.*g", p, v);
    snprintf(t.lim, sizeof t.lim, "%.*g", p, limit);
    if (strcmp(t.v, t.lim) != 0) break; /* told apart */
    if ((!isfinite(v) || strtod(t.v, NULL) == v) &&
        (!isfinite(limit) || strtod(t.lim, NULL) == limit))
      break; /* equal, and both exact */
  }
  return t;
}

strata__argval strata__argval_i(long long v) {
  strata__argval a;
  snprintf(a.s, sizeof a.s, "%lld", v);
  return a;
}

strata__argval strata__argval_u(unsigned long long v) {
  strata__argval a;
  snprintf(a.s, sizeof a.s, "%llu", v);
  return a;
}

strata__argval strata__argval_s(const char *v) {
  strata__argval a;
  snprintf(a.s, sizeof a.s, "%s", v ? v : "NULL");
  return a;
}

const char *strata__idx(char *buf, const char *base, long i) {
  snprintf(buf, STRATA__ARGNAME_SIZE, "%s[%ld]", base, i);
  return buf;
}


double strata__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *strata_backend_name(strata_backend b) {
  switch (b) {
  case STRATA_BACKEND_AUTO: return "auto";
  case STRATA_BACKEND_CPU: return "cpu";
  case STRATA_BACKEND_CUDA: return "cuda";
  }
  return "?";
}

strata_status strata_backend_parse(const char *name, strata_backend *b) {
  if (!name || !b) return STRATA_EINVAL;
  static const strata_backend all[] = {STRATA_BACKEND_AUTO, STRATA_BACKEND_CPU,
                                       STRATA_BACKEND_CUDA};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (strcmp(name, strata_backend_name(all[i])) == 0) {
      *b = all[i];
      return STRATA_OK;
    }
  return STRATA_EINVAL;
}

int strata_backend_available(strata_backend b, char *why, size_t n) {
  if (why && n) why[0] = '\0';
  switch (b) {
  case STRATA_BACKEND_CPU:
  case STRATA_BACKEND_AUTO:
    return 1;
  case STRATA_BACKEND_CUDA:
#ifdef STRATA_HAVE_CUDA
    return strata__cuda_probe(why, n);
#else
    if (why && n)
      snprintf(why, n, "this build of strata has no CUDA support "
                       "(configure with nvcc installed and STRATA_CUDA=ON)");
    return 0;
#endif
  }
  if (why && n) snprintf(why, n, "unknown backend %d", (int)b);
  return 0;
}

void strata_context_options_init(strata_context_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->backend = STRATA_BACKEND_AUTO;
  o->autotune = 1;
}

static void set_errbuf(const strata_context_options *o, const char *fmt,
                       const char *arg) {
  if (o && o->errbuf && o->errbuf_size)
    strata__fit(o->errbuf, o->errbuf_size,
                snprintf(o->errbuf, o->errbuf_size, fmt, arg));
}

/* ---- tuning switches ------------------------------------------------------
 * Every switch the engines read, with the values it takes; docs/tuning.md
 * says what each does.  A key missing here, or a value its switch does not
 * take, is refused at context creation, so a typo never goes unnoticed
 * (an engine reading "yes" where it expects 1 would take it as unset). */
typedef enum {
  TV_INT,   /* an integer in [lo, hi] */
  TV_WORD,  /* one of words, separated by '|' */
  TV_REAL,  /* a finite number >= lo */
  TV_SHAPE, /* 3 or 4 positive integers joined by '/' */
  TV_NAMES  /* names joined by '+' */
} tuning_value;

typedef struct {
  const char *key;
  tuning_value kind;
  long lo, hi;
  const char *words;
} tuning_key;

static const tuning_key tuning_keys[] = {
    /* solvers: src/cuda/wave, src/cuda/heat, src/solvers/wave_engine.c */
    {"wave_pair", TV_INT, 0, 1, NULL},
    {"wave_pair_chunks", TV_INT, 1, 1L << 30, NULL},
    {"wave_kernel", TV_WORD, 0, 0, "wavev|scalar"},
    {"wave_svb", TV_WORD, 0, 0, "alt|tall|narrow"},
    {"wave_cpml", TV_WORD, 0, 0, "split"},
    {"wave_cpmlx", TV_WORD, 0, 0, "pass"},
    {"wave_cpmly", TV_WORD, 0, 0, "pass|serial"},
    {"wave_cpmlz", TV_WORD, 0, 0, "pass"},
    {"wave_zcap", TV_INT, 1, 1L << 30, NULL},
    {"wave_faces", TV_WORD, 0, 0, "pass"},
    {"fused3d_shape", TV_SHAPE, 0, 0, NULL},
    {"fused3d_planes", TV_INT, 1, 1L << 30, NULL},
    {"fused2d_rows", TV_INT, 1, 1L << 30, NULL},
    /* the FV multigrid's one-pass kernels: src/cuda/mg/fv.cu */
    {"mg_onepass", TV_INT, 0, 1, NULL},
    /* the heat solver's depth over several ranks: src/solvers/heat.c */
    {"dist_mem_gbs", TV_REAL, 0, 0, NULL},
    {"dist_link_gbs", TV_REAL, 0, 0, NULL},
    {"dist_link_us", TV_REAL, 0, 0, NULL},
    /* operators */
    {"tma_hint", TV_INT, 0, 5, NULL},
    {"tma_l2", TV_WORD, 0, 0, "0|64|128|256"},
    {"tune_break", TV_NAMES, 0, 0, NULL},
    {"zchunks", TV_INT, 0, 1L << 30, NULL},
    {NULL, TV_INT, 0, 0, NULL}};

/* Whether [v, v + n) is a value of the key's kind; what it takes into
 * want otherwise. */
static int tuning_value_ok(const tuning_key *t, const char *v, size_t n,
                           char *want, size_t wn) {
  char buf[64];
  if (t->kind == TV_NAMES) {
    snprintf(want, wn, "names joined by '+'");
    for (size_t i = 0; i < n; i++)
      if (!(isalnum((unsigned char)v[i]) || v[i] == '_' ||
            (v[i] == '+' && i > 0 && i + 1 < n && v[i + 1] != '+')))
        return 0;
    return n > 0;
  }
  if (n == 0 || n >= sizeof buf) {
    snprintf(want, wn, "a value of at most %zu characters", sizeof buf - 1);
    return 0;
  }
  memcpy(buf, v, n);
  buf[n] = '\0';
  char *end = NULL;
  switch (t->kind) {
  case TV_INT: {
    snprintf(want, wn, "an integer from %ld to %ld", t->lo, t->hi);
    errno = 0;
    long x = strtol(buf, &end, 10);
    return end != buf && !*end && errno == 0 && x >= t->lo && x <= t->hi;
  }
  case TV_REAL: {
    snprintf(want, wn, "a number >= %ld", t->lo);
    double x = strtod(buf, &end);
    return end != buf && !*end && isfinite(x) && x >= (double)t->lo;
  }
  case TV_WORD: {
    snprintf(want, wn, "one of %s", t->words);
    for (const char *w = t->words; *w;) {
      size_t wl = strcspn(w, "|");
      if (wl == n && !memcmp(w, buf, n)) return 1;
      w += wl + (w[wl] == '|');
    }
    return 0;
  }
  case TV_SHAPE: {
    snprintf(want, wn, "V/NW/LR or V/NW/LR/W (positive integers)");
    int parts = 0;
    for (char *p = buf;; p = end + 1) {
      errno = 0;
      long x = strtol(p, &end, 10);
      if (end == p || x < 1 || errno) return 0;
      parts++;
      if (!*end) break;
      if (*end != '/') return 0;
    }
    return parts == 3 || parts == 4;
  }
  case TV_NAMES:
    break;
  }
  return 0;
}

static int is_sep(char c) {
  return c == ',' || c == ';' || c == ' ' || c == '\t' || c == '\n';
}

/* Walks the entries of s: for each, the key [k, k + kn) and the value
 * [v, v + vn); returns the entry count, or -1 when one has no '='. */
static int tuning_next(const char **s, const char **k, size_t *kn,
                       const char **v, size_t *vn) {
  const char *p = *s;
  while (*p && is_sep(*p)) p++;
  if (!*p) return 0;
  const char *e = p;
  while (*e && !is_sep(*e)) e++;
  const char *eq = memchr(p, '=', (size_t)(e - p));
  *s = e;
  if (!eq || eq == p) {
    *k = p;
    *kn = (size_t)(e - p);
    return -1;
  }
  *k = p;
  *kn = (size_t)(eq - p);
  *v = eq + 1;
  *vn = (size_t)(e - eq - 1);
  return 1;
}

static int tuning_check(const char *s, char *why, size_t n) {
  const char *k, *v;
  size_t kn, vn;
  int r;
  while ((r = tuning_next(&s, &k, &kn, &v, &vn)) != 0) {
    if (r < 0) {
      snprintf(why, n, "tuning entry '%.*s' is not KEY=VALUE", (int)kn, k);
      return 0;
    }
    const tuning_key *t = NULL;
    for (int i = 0; tuning_keys[i].key; i++)
      if (strlen(tuning_keys[i].key) == kn &&
          !memcmp(tuning_keys[i].key, k, kn))
        t = &tuning_keys[i];
    if (!t) {
      snprintf(why, n, "unknown tuning key '%.*s' (docs/tuning.md lists them)",
               (int)kn, k);
      return 0;
    }
    char want[96];
    if (!tuning_value_ok(t, v, vn, want, sizeof want)) {
      snprintf(why, n, "tuning key '%s': '%.*s' is not %s (docs/tuning.md)",
               t->key, (int)vn, v, want);
      return 0;
    }
  }
  return 1;
}

const char *strata__tuning(const strata_context *ctx, const char *key,
                           char *buf, size_t n) {
  if (!ctx || !ctx->tuning || !buf || !n) return NULL;
  const char *s = ctx->tuning, *k, *v, *found = NULL;
  size_t kn, vn, fn = 0, len = strlen(key);
  int r;
  while ((r = tuning_next(&s, &k, &kn, &v, &vn)) != 0)
    if (r > 0 && kn == len && !memcmp(k, key, kn)) { /* the last one wins */
      found = v;
      fn = vn;
    }
  if (!found) return NULL;
  if (fn >= n) fn = n - 1;
  memcpy(buf, found, fn);
  buf[fn] = '\0';
  return buf;
}

long strata__tuning_long(const strata_context *ctx, const char *key, long def) {
  char buf[64], *end;
  if (!strata__tuning(ctx, key, buf, sizeof buf)) return def;
  long v = strtol(buf, &end, 10);
  return end != buf && !*end ? v : def;
}

double strata__tuning_double(const strata_context *ctx, const char *key,
                             double def) {
  char buf[64], *end;
  if (!strata__tuning(ctx, key, buf, sizeof buf)) return def;
  double v = strtod(buf, &end);
  return end != buf && isfinite(v) && v >= 0 ? v : def;
}

/* The default autotune cache: the one place the library reads the
 * environment (the user's cache directory, as the XDG convention says). */
static char *default_tune_cache(void) {
  const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
  char path[4096] = "";
  if (x && *x)
    snprintf(path, sizeof path, "%s/strata/tune-v1.txt", x);
  else if (h && *h)
    snprintf(path, sizeof path, "%s/.cache/strata/tune-v1.txt", h);
  return strdup(path);
}

strata_status strata_context_create(strata_context **out,
                                    const strata_context_options *opt) {
  if (!out) return STRATA_EINVAL;
  *out = NULL;
  strata_context_options o;
  if (opt)
    o = *opt;
  else
    strata_context_options_init(&o);
  if (o.threads < 0) {
    set_errbuf(opt, "threads must be >= 0%s", "");
    return STRATA_EINVAL;
  }
  if (o.device < 0) {
    set_errbuf(opt, "device ordinal must be >= 0%s", "");
    return STRATA_EINVAL;
  }
  char why[512] = "";
  if (o.tuning && !tuning_check(o.tuning, why, sizeof why)) {
    set_errbuf(opt, "%s", why);
    return STRATA_EINVAL;
  }
  strata_backend kind = o.backend;
  if (kind == STRATA_BACKEND_AUTO)
    kind = strata_backend_available(STRATA_BACKEND_CUDA, why, sizeof why)
               ? STRATA_BACKEND_CUDA
               : STRATA_BACKEND_CPU;
  else if (kind == STRATA_BACKEND_CUDA &&
           !strata_backend_available(kind, why, sizeof why)) {
    set_errbuf(opt, "CUDA backend not available: %s", why);
    return STRATA_ENOBACKEND;
  } else if (kind != STRATA_BACKEND_CPU && kind != STRATA_BACKEND_CUDA) {
    set_errbuf(opt, "unknown backend%s", "");
    return STRATA_EINVAL;
  }

  strata_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return STRATA_ENOMEM;
  ctx->kind = kind;
  ctx->threads = o.threads;
  ctx->autotune = o.autotune;
  ctx->interrupt = o.interrupt;
  ctx->interrupt_arg = o.interrupt_arg;
  ctx->tune_cache = o.tune_cache ? strdup(o.tune_cache) : default_tune_cache();
  ctx->tuning = o.tuning ? strdup(o.tuning) : NULL;
  if (!ctx->tune_cache || (o.tuning && !ctx->tuning)) {
    free(ctx->tune_cache);
    free(ctx->tuning);
    free(ctx);
    return STRATA_ENOMEM;
  }
#ifdef STRATA_HAVE_CUDA
  ctx->be = kind == STRATA_BACKEND_CUDA ? &strata__cuda_backend
                                        : &strata__cpu_backend;
#else
  ctx->be = &strata__cpu_backend;
#endif
  strata_status s = ctx->be->init ? ctx->be->init(ctx, &o) : STRATA_OK;
  if (s != STRATA_OK) {
    set_errbuf(opt, "%s", ctx->error);
    free(ctx->tune_cache);
    free(ctx->tuning);
    free(ctx);
    return s;
  }
  *out = ctx;
  return STRATA_OK;
}

void strata_context_destroy(strata_context **pctx) {
  if (!pctx || !*pctx) return;
  strata_context *ctx = *pctx;
  /* what was made on it still points at it: releasing it now would turn
   * their destroy into a use after free, so it stays, and says why */
  if (ctx->live_fields > 0 || ctx->live_writers > 0) {
    strata__fail(ctx, STRATA_EINVAL,
                 "context: not destroyed: %ld field%s (%zu bytes) and %ld "
                 "snapshot writer%s made on it still exist; destroy them "
                 "(and the solvers holding them) first, then the context",
                 ctx->live_fields, ctx->live_fields == 1 ? "" : "s",
                 ctx->live_bytes, ctx->live_writers,
                 ctx->live_writers == 1 ? "" : "s");
    return;
  }
  if (ctx->be && ctx->be->fini) ctx->be->fini(ctx);
  free(ctx->tune_cache);
  free(ctx->tuning);
  free(ctx);
  *pctx = NULL;
}

strata_backend strata_context_backend(const strata_context *ctx) {
  return ctx ? ctx->kind : STRATA_BACKEND_AUTO;
}

const char *strata_context_error(const strata_context *ctx) {
  return ctx ? ctx->error : "no context";
}

int strata_context_error_elsewhere(const strata_context *ctx) {
  return ctx ? ctx->error_elsewhere : 0;
}

const char *strata_context_error_arg(const strata_context *ctx) {
  return ctx ? ctx->error_arg : "";
}

const char *strata_context_error_value(const strata_context *ctx) {
  return ctx ? ctx->error_value : "";
}

strata_status strata_context_sync(strata_context *ctx) {
  if (!ctx) return STRATA_EINVAL;
  return ctx->be->sync ? ctx->be->sync(ctx) : STRATA_OK;
}

strata_status strata_context_device_info(strata_context *ctx,
                                         strata_device_info *info) {
  if (!ctx) return STRATA_EINVAL;
  if (!info)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "info", info,
                              "info is NULL");
  memset(info, 0, sizeof *info);
  return ctx->be->info(ctx, info);
}
