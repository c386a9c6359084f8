/* Earth models (velocity, density, ...) from files: .npy and raw samples
 * here, SEG-Y in segy_read.c; the physical check and the resampling onto
 * a simulation grid.  A model is held as doubles, x fastest. */
#define _POSIX_C_SOURCE 200809L
#include "model_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void strata_model_file_init(strata_model_file *f) {
  if (!f) return;
  memset(f, 0, sizeof *f);
  f->format = STRATA_MODEL_AUTO;
  f->precision = STRATA_F32;
  f->segy_geometry = STRATA_SEGY_AUTO;
  f->inline_byte = 189;
  f->crossline_byte = 193;
}

void strata_model_free(strata_model *m) {
  if (!m) return;
  free(m->data);
  memset(m, 0, sizeof *m);
}

/* ---- samples and their order --------------------------------------------- */

double strata__model_sample(const unsigned char *p, int code, int big) {
  unsigned char b[8];
  size_t es = strata__model_code_size(code);
  /* to big-endian order first, then assemble */
  for (size_t i = 0; i < es; i++) b[i] = big ? p[i] : p[es - 1 - i];
  uint64_t u = 0;
  for (size_t i = 0; i < es; i++) u = u << 8 | b[i];
  switch (code) {
  case STRATA__MS_IBM: return strata__ibm_to_double((uint32_t)u);
  case STRATA__MS_I32: return (double)(int32_t)(uint32_t)u;
  case STRATA__MS_I16: return (double)(int16_t)(uint16_t)u;
  case STRATA__MS_I8: return (double)(int8_t)(uint8_t)u;
  case STRATA__MS_F32: {
    uint32_t w = (uint32_t)u;
    float f;
    memcpy(&f, &w, 4);
    return f;
  }
  default: {
    double d;
    memcpy(&d, &u, 8);
    return d;
  }
  }
}

double strata__ibm_to_double(uint32_t w) {
  /* sign, a base-16 exponent biased by 64, a 24-bit fraction in [0, 1) */
  double frac = (double)(w & 0x00ffffffu) / 16777216.0;
  int e = (int)((w >> 24) & 0x7f) - 64;
  double v = ldexp(frac, 4 * e);
  return (w & 0x80000000u) ? -v : v;
}

size_t strata__model_code_size(int code) {
  switch (code) {
  case STRATA__MS_I16: return 2;
  case STRATA__MS_I8: return 1;
  case STRATA__MS_F64: return 8;
  default: return 4;
  }
}

/* Parses axes (the file's, slowest first) into model axes ax[0..nd-1]. */
static strata_status parse_axes(strata_context *ctx, const char *axes,
                                int nd, int ax[3]) {
  const char *def = nd == 3 ? "zyx" : "zx";
  const char *s = axes && *axes ? axes : def;
  int seen = 0, ok = (int)strlen(s) == nd;
  for (int i = 0; ok && i < nd; i++) {
    const char *c = strchr("xyz", s[i]);
    ok = s[i] && c && !(seen & 1 << (c - "xyz"));
    if (ok) {
      ax[i] = (int)(c - "xyz");
      seen |= 1 << ax[i];
    }
  }
  if (ok && nd == 2 && (seen & 2)) ok = 0; /* a 2D model is an x-z section */
  if (!ok)
    return strata__fail_arg(ctx, STRATA_EINVAL, "axes", s,
                            "model: axes '%s' must name each of %s once, "
                            "for a file of %d axes (slowest first, e.g. "
                            "'%s')", s, nd == 3 ? "x, y, z" : "x and z", nd,
                            def);
  return STRATA_OK;
}

strata_status strata__model_alloc(strata_context *ctx,
                                  const strata_model_file *f, int dims,
                                  const size_t n[3], size_t extra,
                                  strata_model *m) {
  memset(m, 0, sizeof *m);
  size_t cnt = 1, bytes;
  for (int a = 0; a < 3; a++)
    if (n[a] == 0 || __builtin_mul_overflow(cnt, n[a], &cnt))
      return strata__fail_arg(ctx, n[a] ? STRATA_EOVERFLOW : STRATA_EFORMAT,
                              "path", f->path,
                              "model '%s': %zu x %zu x %zu samples (x, y, z) "
                              "is %s", f->path, n[0], n[1], n[2],
                              n[a] ? "too many" : "empty");
  if (__builtin_mul_overflow(cnt, sizeof(double), &bytes))
    return strata__fail_arg(ctx, STRATA_EOVERFLOW, "path", f->path,
                            "model '%s': too many samples", f->path);
  strata__footprint fp = {0, 0, 0};
  strata__fp_host(&fp, bytes);
  strata__fp_host_peak(&fp, extra);
  strata_status s = strata__fp_check(ctx, "model", &fp);
  if (s != STRATA_OK) return s;
  m->data = malloc(bytes);
  if (!m->data)
    return strata__fail(ctx, STRATA_ENOMEM, "model '%s': cannot allocate "
                        "%zu bytes", f->path, bytes);
  m->dims = dims;
  for (int a = 0; a < 3; a++) {
    m->n[a] = n[a];
    m->spacing[a] = f->spacing[a] > 0 ? f->spacing[a] : 0;
    m->origin[a] = f->origin[a];
  }
  return STRATA_OK;
}

/* The model's shape (x, y, z) of a file of nd axes ax[] of sizes shape[]. */
static strata_status model_alloc(strata_context *ctx,
                                 const strata_model_file *f, int nd,
                                 const int ax[3], const size_t shape[3],
                                 size_t extra, strata_model *m) {
  size_t n[3] = {1, 1, 1};
  for (int i = 0; i < nd; i++) n[ax[i]] = shape[i];
  return strata__model_alloc(ctx, f, nd, n, extra, m);
}

void strata__scatter_init(strata__scatter *sc, strata_model *m, int nd,
                          const int ax[3]) {
  memset(sc, 0, sizeof *sc);
  sc->m = m;
  sc->nd = nd;
  size_t stride[3] = {1, m->n[0], m->n[0] * m->n[1]};
  for (int i = 0; i < nd; i++) {
    sc->size[i] = m->n[ax[i]];
    sc->stride[i] = stride[ax[i]];
  }
}

void strata__scatter_put(strata__scatter *sc, double v) {
  sc->m->data[sc->at] = v;
  /* the next file position: the fastest axis first, carrying */
  for (int i = sc->nd - 1; i >= 0; i--) {
    sc->at += sc->stride[i];
    if (++sc->idx[i] < sc->size[i]) return;
    sc->at -= sc->stride[i] * sc->size[i];
    sc->idx[i] = 0;
  }
}

/* ---- .npy ------------------------------------------------------------------ */

static strata_status read_npy(strata_context *ctx, const strata_model_file *f,
                              strata_model *m) {
  strata_precision p;
  int nd = 0;
  size_t shape[4];
  void *buf = NULL;
  int fortran = 0;
  strata_status s =
      strata__npy_read(ctx, f->path, &p, &nd, shape, &buf, &fortran);
  if (s != STRATA_OK) return s;
  int ax[3];
  if (nd != 2 && nd != 3) {
    free(buf);
    return strata__fail_arg(ctx, STRATA_EFORMAT, "path", f->path,
                            "model '%s' has %d axes; a model has 2 (x-z) or "
                            "3", f->path, nd);
  }
  if ((s = parse_axes(ctx, f->axes, nd, ax)) == STRATA_OK)
    s = model_alloc(ctx, f, nd, ax, shape, 0, m);
  if (s == STRATA_OK) {
    /* a Fortran-ordered array's data runs over its axes in reverse */
    int fax[3];
    for (int i = 0; i < nd; i++) fax[i] = fortran ? ax[nd - 1 - i] : ax[i];
    strata__scatter sc;
    strata__scatter_init(&sc, m, nd, fax);
    size_t cnt = m->n[0] * m->n[1] * m->n[2];
    for (size_t q = 0; q < cnt; q++)
      strata__scatter_put(&sc, p == STRATA_F32 ? (double)((float *)buf)[q]
                                               : ((double *)buf)[q]);
  }
  free(buf);
  return s;
}

/* ---- reading files in pieces --------------------------------------------- */

strata_status strata__model_open(strata_context *ctx, const char *path,
                                 FILE **fp, size_t *size) {
  *fp = fopen(path, "rb");
  struct stat st;
  if (!*fp || fstat(fileno(*fp), &st) != 0 || !S_ISREG(st.st_mode)) {
    int e = errno;
    if (*fp) fclose(*fp);
    *fp = NULL;
    return strata__fail_arg(ctx, STRATA_EIO, "path", path,
                            "cannot open model '%s': %s", path,
                            e ? strerror(e) : "not a regular file");
  }
  *size = (size_t)st.st_size;
  return STRATA_OK;
}

strata_status strata__model_fread(strata_context *ctx, FILE *fp,
                                  const char *path, void *buf, size_t n) {
  if (strata__interrupted(ctx))
    return strata__fail(ctx, STRATA_EINTERRUPTED, "model '%s': reading "
                        "interrupted", path);
  if (fread(buf, 1, n, fp) != n)
    return strata__fail_arg(ctx, ferror(fp) ? STRATA_EIO : STRATA_EFORMAT,
                            "path", path, "model '%s': %s", path,
                            ferror(fp) ? "read error" : "truncated");
  return STRATA_OK;
}

/* ---- raw samples ---------------------------------------------------------- */

static strata_status read_raw(strata_context *ctx, const strata_model_file *f,
                              strata_model *m) {
  int nd = f->ndim, ax[3];
  if (nd != 2 && nd != 3)
    return strata__fail_arg(ctx, STRATA_EINVAL, "ndim", nd,
                            "model: a raw model needs ndim 2 or 3, not %d",
                            nd);
  for (int i = 0; i < nd; i++)
    if (f->shape[i] == 0) {
      char nm[STRATA__ARGNAME_SIZE];
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "shape", i),
                              f->shape[i], "model: a raw model needs its "
                              "shape: shape[%d] is 0", i);
    }
  if (f->precision != STRATA_F32 && f->precision != STRATA_F64)
    return strata__fail_arg(ctx, STRATA_EINVAL, "precision", (int)f->precision,
                            "model: precision %d must be STRATA_F32 or "
                            "STRATA_F64", (int)f->precision);
  strata_status s = parse_axes(ctx, f->axes, nd, ax);
  if (s != STRATA_OK) return s;
  size_t cnt = 1, es = (size_t)f->precision, want, size;
  for (int i = 0; i < nd; i++)
    if (__builtin_mul_overflow(cnt, f->shape[i], &cnt))
      return strata__fail_arg_s(ctx, STRATA_EOVERFLOW, "shape", "set",
                                "model: the shape overflows");
  if (__builtin_mul_overflow(cnt, es, &want))
    return strata__fail_arg_s(ctx, STRATA_EOVERFLOW, "shape", "set",
                              "model: the shape overflows");
  FILE *fp;
  if ((s = strata__model_open(ctx, f->path, &fp, &size)) != STRATA_OK)
    return s;
  if (size != want) {
    fclose(fp);
    return strata__fail_arg(ctx, STRATA_EFORMAT, "path", f->path,
                            "model '%s' has %zu bytes; its stated shape "
                            "(%zu samples of %zu bytes) needs %zu", f->path,
                            size, cnt, es, want);
  }
  enum { PIECE = 1 << 20 };
  unsigned char *buf = malloc(PIECE * es);
  if (!buf) {
    fclose(fp);
    return strata__fail(ctx, STRATA_ENOMEM, "out of memory");
  }
  if ((s = model_alloc(ctx, f, nd, ax, f->shape, PIECE * es, m)) == STRATA_OK) {
    strata__scatter sc;
    strata__scatter_init(&sc, m, nd, ax);
    int code = f->precision == STRATA_F32 ? STRATA__MS_F32 : STRATA__MS_F64;
    for (size_t q = 0; q < cnt && s == STRATA_OK; q += PIECE) {
      size_t k = cnt - q < PIECE ? cnt - q : PIECE;
      s = strata__model_fread(ctx, fp, f->path, buf, k * es);
      for (size_t i = 0; s == STRATA_OK && i < k; i++)
        strata__scatter_put(&sc, strata__model_sample(buf + i * es, code,
                                                      f->big_endian));
    }
    if (s != STRATA_OK) strata_model_free(m);
  }
  free(buf);
  fclose(fp);
  return s;
}

/* ---- the entry point ------------------------------------------------------ */

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  if (a < b) return 0;
  for (size_t i = 0; i < b; i++) {
    char c = s[a - b + i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != suf[i]) return 0;
  }
  return 1;
}

strata_status strata_model_read(strata_context *ctx,
                                const strata_model_file *f, strata_model *m) {
  if (m) memset(m, 0, sizeof *m);
  if (!f || !m)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, f ? "m" : "f", NULL,
                              "model: NULL argument");
  if (!f->path || !*f->path)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "path", f->path,
                              "model: no file named");
  for (int a = 0; a < 3; a++)
    if (!isfinite(f->spacing[a]) || !isfinite(f->origin[a])) {
      char nm[STRATA__ARGNAME_SIZE];
      int sp = !isfinite(f->spacing[a]);
      return strata__fail_arg(ctx, STRATA_EINVAL,
                              strata__idx(nm, sp ? "spacing" : "origin", a),
                              sp ? f->spacing[a] : f->origin[a],
                              "model: %s along %c is not finite",
                              sp ? "spacing" : "origin", "xyz"[a]);
    }
  strata_model_format fmt = f->format;
  if (fmt == STRATA_MODEL_AUTO) {
    if (ends_with(f->path, ".npy"))
      fmt = STRATA_MODEL_NPY;
    else if (ends_with(f->path, ".sgy") || ends_with(f->path, ".segy"))
      fmt = STRATA_MODEL_SEGY;
    else
      return strata__fail_arg(ctx, STRATA_EINVAL, "format", (int)fmt,
                              "model '%s': the format cannot be told from "
                              "the name (.npy, .sgy, .segy); state it (raw "
                              "files need their shape)", f->path);
  }
  /* a key of another format is a mistake about the file, not a no-op */
  static const char *const fname[] = {"", ".npy", "SEG-Y", "raw"};
  if (fmt >= STRATA_MODEL_NPY && fmt <= STRATA_MODEL_RAW) {
    const char *what = fmt == STRATA_MODEL_SEGY && f->axes ? "axes"
                       : fmt != STRATA_MODEL_RAW && f->ndim ? "ndim"
                       : fmt != STRATA_MODEL_SEGY && f->segy_nx ? "segy_nx"
                                                              : NULL;
    if (what)
      return strata__fail_arg_s(ctx, STRATA_EINVAL, what, "set",
                                "model '%s': %s does not apply to a %s file",
                                f->path, what, fname[fmt]);
  }
  switch (fmt) {
  case STRATA_MODEL_NPY: return read_npy(ctx, f, m);
  case STRATA_MODEL_RAW: return read_raw(ctx, f, m);
  case STRATA_MODEL_SEGY: return strata__segy_read_model(ctx, f, m);
  default:
    return strata__fail_arg(ctx, STRATA_EINVAL, "format", (int)fmt,
                            "model: format %d is not a strata_model_format",
                            (int)fmt);
  }
}

/* ---- checks and resampling ---------------------------------------------- */

strata_status strata_model_check(strata_context *ctx, const strata_model *m,
                                 const char *what, double *lo, double *hi) {
  if (!m || !m->data)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "m", NULL,
                              "model: no model");
  if (!what) what = "model";
  size_t cnt = m->n[0] * m->n[1] * m->n[2];
  double l = INFINITY, u = -INFINITY;
  for (size_t q = 0; q < cnt; q++) {
    double v = m->data[q];
    if (!(v > 0) || !isfinite(v)) {
      size_t i = q % m->n[0], j = q / m->n[0] % m->n[1],
             k = q / (m->n[0] * m->n[1]);
      return strata__fail_arg(ctx, STRATA_EINVAL, what, v,
                              "%s model: sample (%zu, %zu, %zu) at x = %g, "
                              "y = %g, z = %g m is %g; it must be finite and "
                              "> 0", what, i, j, k,
                              m->origin[0] + (double)i * m->spacing[0],
                              m->origin[1] + (double)j * m->spacing[1],
                              m->origin[2] + (double)k * m->spacing[2], v);
    }
    if (v < l) l = v;
    if (v > u) u = v;
  }
  if (lo) *lo = l;
  if (hi) *hi = u;
  return STRATA_OK;
}

/* Where grid coordinate x (m) falls on model axis a: node i0 and weight
 * f of node i0 + 1 (0 on an axis of one sample). */
static void locate(const strata_model *m, int a, double x,
                   strata_resample how, size_t *i0, double *f) {
  size_t n = m->n[a];
  if (n == 1) {
    *i0 = 0;
    *f = 0;
    return;
  }
  double t = (x - m->origin[a]) / m->spacing[a];
  if (t < 0) t = 0;
  if (t > (double)(n - 1)) t = (double)(n - 1);
  size_t i = (size_t)floor(t);
  if (i > n - 2) i = n - 2;
  double w = t - (double)i;
  if (how == STRATA_RESAMPLE_NEAREST) w = w > 0.5 ? 1 : 0;
  *i0 = i;
  *f = w;
}

strata_status strata_model_resample(strata_context *ctx,
                                    const strata_model *m, const size_t n[3],
                                    double h, strata_resample how,
                                    double *out) {
  if (!m || !m->data || !n || !out)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, !m || !m->data ? "m"
                              : !n ? "n" : "out", NULL,
                              "model: NULL argument to resample");
  if (!(h > 0) || !isfinite(h))
    return strata__fail_arg(ctx, STRATA_EINVAL, "h", h,
                            "model: grid spacing %g must be > 0", h);
  if (how != STRATA_RESAMPLE_LINEAR && how != STRATA_RESAMPLE_NEAREST)
    return strata__fail_arg(ctx, STRATA_EINVAL, "how", (int)how,
                            "model: resampling %d is not a strata_resample",
                            (int)how);
  for (int a = 0; a < 3; a++) {
    char nm[STRATA__ARGNAME_SIZE];
    if (m->n[a] > 1 && (!(m->spacing[a] > 0) || !isfinite(m->spacing[a])))
      return strata__fail_arg(ctx, STRATA_EINVAL,
                              strata__idx(nm, "spacing", a), m->spacing[a],
                              "model: spacing along %c is %g; it must be > 0",
                              "xyz"[a], m->spacing[a]);
    if (m->n[a] == 1) continue; /* constant along a */
    double lo = m->origin[a], hi = lo + (double)(m->n[a] - 1) * m->spacing[a];
    double glo = 0, ghi = (double)(n[a] - 1) * h, tol = 1e-9 * m->spacing[a];
    if (glo < lo - tol || ghi > hi + tol)
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "origin", a),
                              m->origin[a],
                              "model: along %c it covers [%g, %g] m (%zu "
                              "samples %g m apart from %g m) but the grid "
                              "spans [%g, %g] m (%zu points %g m apart); "
                              "the model must cover the grid", "xyz"[a], lo,
                              hi, m->n[a], m->spacing[a], m->origin[a], glo,
                              ghi, n[a], h);
  }
  const size_t nx = m->n[0], nxy = m->n[0] * m->n[1];
  for (size_t k = 0; k < n[2]; k++) {
    size_t k0, j0, i0;
    double fk, fj, fi;
    locate(m, 2, (double)k * h, how, &k0, &fk);
    for (size_t j = 0; j < n[1]; j++) {
      locate(m, 1, (double)j * h, how, &j0, &fj);
      double *row = out + (k * n[1] + j) * n[0];
      for (size_t i = 0; i < n[0]; i++) {
        locate(m, 0, (double)i * h, how, &i0, &fi);
        double v = 0;
        for (int c = 0; c < 8; c++) {
          int di = c & 1, dj = c >> 1 & 1, dk = c >> 2;
          double w = (di ? fi : 1 - fi) * (dj ? fj : 1 - fj) *
                     (dk ? fk : 1 - fk);
          if (w == 0) continue; /* also keeps one-sample axes in range */
          v += w * m->data[(k0 + (size_t)dk) * nxy + (j0 + (size_t)dj) * nx +
                           i0 + (size_t)di];
        }
        row[i] = v;
      }
    }
  }
  return STRATA_OK;
}

/* ---- interfaces ----------------------------------------------------------- */

strata_status strata_model_interfaces(strata_context *ctx, const size_t n[3],
                                      const double *values, double threshold,
                                      unsigned char *mask, size_t *count) {
  if (!n || !values || !mask)
    return strata__fail_arg_p(ctx, STRATA_EINVAL,
                              !n ? "n" : !values ? "values" : "mask", NULL,
                              "model interfaces: NULL argument");
  char nm[STRATA__ARGNAME_SIZE];
  for (int a = 0; a < 3; a++)
    if (n[a] < 1)
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "n", a), 0,
                              "model interfaces: n[%d] is 0", a);
  if (!(threshold >= 0) || !isfinite(threshold))
    return strata__fail_arg(ctx, STRATA_EINVAL, "threshold", threshold,
                            "model interfaces: threshold is %g; it must be "
                            "finite and >= 0", threshold);
  const size_t st[3] = {1, n[0], n[0] * n[1]};
  size_t marked = 0, p = 0;
  for (size_t k = 0; k < n[2]; k++)
    for (size_t j = 0; j < n[1]; j++)
      for (size_t i = 0; i < n[0]; i++, p++) {
        const int more[3] = {i + 1 < n[0], j + 1 < n[1], k + 1 < n[2]};
        const size_t at[3] = {i, j, k};
        for (int a = 0; a < 3; a++) {
          if (!more[a]) continue;
          const double v0 = values[p], v1 = values[p + st[a]], d = v1 - v0;
          if (!(fabs(d) > threshold * fmin(fabs(v0), fabs(v1)))) continue;
          /* a jump spread over two steps (a resampled model's) is drawn
           * once, at its larger step (the first of equal ones) */
          const double dp = at[a] > 0 ? v0 - values[p - st[a]] : 0,
                       dn = at[a] + 2 < n[a] ? values[p + 2 * st[a]] - v1 : 0;
          if ((dp > 0) == (d > 0) && dp != 0 && fabs(dp) >= fabs(d)) continue;
          if ((dn > 0) == (d > 0) && dn != 0 && fabs(dn) > fabs(d)) continue;
          mask[p] |= (unsigned char)(1u << a);
        }
        marked += mask[p] != 0;
      }
  if (count) *count = marked;
  return STRATA_OK;
}
