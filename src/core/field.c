/* Fields: validation, layout, lifecycle, host transfers, fills and norms.
 * Backends provide memory and the hot operations; what is not hot goes
 * through a host image of the whole allocation (host_image/host_commit). */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mul_ovf(size_t a, size_t b, size_t *r) {
  return __builtin_mul_overflow(a, b, r);
}
static int add_ovf(size_t a, size_t b, size_t *r) {
  return __builtin_add_overflow(a, b, r);
}

/* Validates d and computes the layout; msg receives the reason on failure. */
/* Why a description is refused: the message, and the field of the
 * description it is about with its value. */
typedef struct {
  char msg[256], arg[STRATA__ARGNAME_SIZE], val[96];
} layout_why;

static strata_status layout_of(const strata_field_desc *d,
                               strata_field_layout *L, int g[3],
                               layout_why *y) {
  y->arg[0] = y->val[0] = '\0';
  if (!d) {
    snprintf(y->msg, sizeof y->msg, "field description is NULL");
    snprintf(y->arg, sizeof y->arg, "d");
    snprintf(y->val, sizeof y->val, "NULL");
    return STRATA_EINVAL;
  }
  if (d->dims < 1 || d->dims > 3) {
    snprintf(y->msg, sizeof y->msg, "dims is %d; it must be 1, 2 or 3",
             d->dims);
    snprintf(y->arg, sizeof y->arg, "dims");
    snprintf(y->val, sizeof y->val, "%d", d->dims);
    return STRATA_EINVAL;
  }
  if (d->precision != STRATA_F32 && d->precision != STRATA_F64) {
    snprintf(y->msg, sizeof y->msg, "precision is %d; it must be STRATA_F32 "
             "or STRATA_F64", (int)d->precision);
    snprintf(y->arg, sizeof y->arg, "precision");
    snprintf(y->val, sizeof y->val, "%d", (int)d->precision);
    return STRATA_EINVAL;
  }
  if (d->ghost < 1 || d->ghost > STRATA_MAX_GHOST) {
    snprintf(y->msg, sizeof y->msg, "ghost width is %d; it must be 1..%d",
             d->ghost, STRATA_MAX_GHOST);
    snprintf(y->arg, sizeof y->arg, "ghost");
    snprintf(y->val, sizeof y->val, "%d", d->ghost);
    return STRATA_EINVAL;
  }
  static const char axes[] = "xyz";
  for (int a = 0; a < 3; a++) {
    strata_status bad = STRATA_OK;
    if (a < d->dims && d->n[a] < 1) {
      snprintf(y->msg, sizeof y->msg, "size along %c is 0; it must be at "
               "least 1", axes[a]);
      bad = STRATA_EINVAL;
    } else if (a < d->dims && d->n[a] > (size_t)1 << 40) {
      snprintf(y->msg, sizeof y->msg, "size along %c is %zu; it exceeds 2^40 "
               "points (a negative size passed as size_t?)", axes[a],
               d->n[a]);
      bad = STRATA_EOVERFLOW;
    } else if (a >= d->dims && d->n[a] != 1) {
      snprintf(y->msg, sizeof y->msg, "size along unused axis %c is %zu; it "
               "must be 1 for a %dD field", axes[a], d->n[a], d->dims);
      bad = STRATA_EINVAL;
    }
    if (bad != STRATA_OK) {
      strata__idx(y->arg, "n", a);
      snprintf(y->val, sizeof y->val, "%zu", d->n[a]);
      return bad;
    }
    g[a] = a < d->dims ? d->ghost : 0;
  }
  size_t es = (size_t)d->precision;
  size_t ae = STRATA__ALIGN_BYTES / es; /* elements per alignment unit >= 16 */
  size_t px, py, pz, plane, elems, bytes, t;
  /* row: [pad of ae elements whose last g are ghosts][n0][g ghosts][pad] */
  if (add_ovf(d->n[0], ae + (size_t)g[0] + ae - 1, &t)) goto overflow;
  px = t / ae * ae;
  py = d->n[1] + 2 * (size_t)g[1];
  pz = d->n[2] + 2 * (size_t)g[2];
  if (mul_ovf(px, py, &plane) || mul_ovf(plane, pz, &elems) ||
      mul_ovf(elems, es, &bytes) || bytes > (size_t)PTRDIFF_MAX / 2)
    goto overflow;
  L->pitch_x = px;
  L->pitch_y = py;
  L->planes = pz;
  L->origin = ae + px * ((size_t)g[1] + py * (size_t)g[2]);
  L->elements = elems;
  L->bytes = bytes;
  return STRATA_OK;
overflow:
  snprintf(y->msg, sizeof y->msg, "field of %zu x %zu x %zu points (ghost "
           "%d, %zu-byte values) needs more bytes than the address space "
           "holds", d->n[0], d->n[1], d->n[2], d->ghost, es);
  snprintf(y->arg, sizeof y->arg, "n");
  snprintf(y->val, sizeof y->val, "%zu, %zu, %zu", d->n[0], d->n[1], d->n[2]);
  return STRATA_EOVERFLOW;
}

strata_status strata_field_bytes(const strata_field_desc *d, size_t *bytes) {
  strata_field_layout L;
  int g[3];
  layout_why y;
  if (!bytes) return STRATA_EINVAL;
  strata_status s = layout_of(d, &L, g, &y);
  if (s == STRATA_OK) *bytes = L.bytes;
  return s;
}

/* A field of description d on data (NULL: allocated on ctx's backend;
 * else the caller's memory of `bytes` bytes, left alone at destroy). */
static strata_status field_new(strata_context *ctx, const strata_field_desc *d,
                               void *data, size_t bytes, strata_field **out) {
  if (!ctx) return STRATA_EINVAL;
  if (!out)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "out", out,
                              "output pointer is NULL");
  *out = NULL;
  strata_field_layout L;
  int g[3];
  layout_why y;
  strata_status s = layout_of(d, &L, g, &y);
  if (s != STRATA_OK)
    return strata__fail_arg_s(ctx, s, y.arg, y.val, "%s", y.msg);
  if (data && (uintptr_t)data % STRATA__ALIGN_BYTES != 0)
    /* the kernels rely on the layout's alignment: every interior row
     * starts on a STRATA__ALIGN_BYTES boundary (vector and bulk loads) */
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "data", data,
                              "the memory to wrap starts at %p, which is "
                              "not %d-byte aligned", data,
                              STRATA__ALIGN_BYTES);
  if (data && bytes < L.bytes)
    return strata__fail_arg(ctx, STRATA_EINVAL, "bytes", bytes,
                            "the memory to wrap holds %zu bytes; the "
                            "field's layout needs %zu",
                            bytes, L.bytes);
  strata_field *f = calloc(1, sizeof *f);
  if (!f) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  f->ctx = ctx;
  f->d = *d;
  f->L = L;
  f->esize = (size_t)d->precision;
  memcpy(f->g, g, sizeof f->g);
  if (data) {
    f->data = data;
    f->foreign = 1;
  } else {
    s = ctx->be->alloc(ctx, L.bytes, &f->data);
    if (s != STRATA_OK) {
      free(f);
      return s;
    }
    ctx->live_bytes += L.bytes;
  }
  ctx->live_fields++;
  *out = f;
  return STRATA_OK;
}

strata_status strata_field_create(strata_context *ctx,
                                  const strata_field_desc *d,
                                  strata_field **out) {
  return field_new(ctx, d, NULL, 0, out);
}

strata_status strata_field_layout_for(const strata_field_desc *d,
                                      strata_field_layout *L) {
  int g[3];
  layout_why y;
  if (!L) return STRATA_EINVAL;
  strata_field_layout t;
  strata_status s = layout_of(d, &t, g, &y);
  if (s == STRATA_OK) *L = t;
  return s;
}

strata_status strata_field_wrap(strata_context *ctx,
                                const strata_field_desc *d, void *data,
                                size_t bytes, strata_field **out) {
  if (ctx && out && !data) {
    *out = NULL;
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "data", data,
                              "the memory to wrap is NULL");
  }
  return field_new(ctx, d, data, bytes, out);
}

void *strata_field_data(const strata_field *f) {
  return f ? f->data : NULL;
}

void strata_field_destroy(strata_field **pf) {
  if (!pf || !*pf) return;
  strata_field *f = *pf;
  if (!f->foreign) {
    f->ctx->be->release(f->ctx, f->data);
    f->ctx->live_bytes -= f->L.bytes;
  }
  f->ctx->live_fields--;
  free(f->win);
  free(f);
  *pf = NULL;
}

strata_status strata_field_get_desc(const strata_field *f,
                                    strata_field_desc *d) {
  if (!f || !d) return STRATA_EINVAL;
  *d = f->d;
  return STRATA_OK;
}

strata_status strata_field_get_layout(const strata_field *f,
                                      strata_field_layout *L) {
  if (!f || !L) return STRATA_EINVAL;
  *L = f->L;
  return STRATA_OK;
}

strata_context *strata_field_context(const strata_field *f) {
  return f ? f->ctx : NULL;
}

strata_status strata__check_pair(const strata_field *a, const strata_field *b,
                                 const char *what, const char *bname) {
  strata_context *ctx = a->ctx;
  if (a->ctx != b->ctx)
    return strata__fail_arg_s(ctx, STRATA_EINVAL, bname, "set",
                              "%s: the fields belong to different contexts",
                              what);
  if (a->d.precision != b->d.precision)
    return strata__fail_arg(ctx, STRATA_EPRECISION, bname,
                            (int)b->d.precision,
                            "%s: precisions differ (%d-byte vs %d-byte "
                            "values)", what, (int)a->d.precision,
                            (int)b->d.precision);
  if (a->d.dims != b->d.dims || a->d.n[0] != b->d.n[0] ||
      a->d.n[1] != b->d.n[1] || a->d.n[2] != b->d.n[2]) {
    char v[96];
    snprintf(v, sizeof v, "%zu, %zu, %zu", b->d.n[0], b->d.n[1], b->d.n[2]);
    return strata__fail_arg(ctx, STRATA_ESHAPE, bname, v,
                            "%s: shapes differ (%dD %zux%zux%zu vs %dD "
                            "%zux%zux%zu)",
                            what, a->d.dims, a->d.n[0], a->d.n[1], a->d.n[2],
                            b->d.dims, b->d.n[0], b->d.n[1], b->d.n[2]);
  }
  return STRATA_OK;
}

/* ---- host images ---------------------------------------------------- */

/* A host-addressable image of f's whole allocation: the data itself on a
 * host backend, else a staged copy (fetched when fetch != 0). */
static strata_status host_image(const strata_field *f, int fetch,
                                void **img) {
  strata_context *ctx = f->ctx;
  if (ctx->be->host_accessible) {
    *img = f->data;
    return STRATA_OK;
  }
  void *p = fetch ? malloc(f->L.bytes) : calloc(1, f->L.bytes);
  if (!p)
    return strata__fail(ctx, STRATA_ENOMEM,
                        "cannot stage %zu bytes in host memory", f->L.bytes);
  if (fetch) {
    strata_status s = ctx->be->to_host(ctx, p, f->data, f->L.bytes);
    if (s != STRATA_OK) {
      free(p);
      return s;
    }
  }
  *img = p;
  return STRATA_OK;
}

/* Ends the use of an image: uploads it when store != 0, frees staging. */
static strata_status host_done(const strata_field *f, void *img, int store) {
  strata_context *ctx = f->ctx;
  if (ctx->be->host_accessible) return STRATA_OK;
  strata_status s = STRATA_OK;
  if (store) s = ctx->be->from_host(ctx, f->data, img, f->L.bytes);
  free(img);
  return s;
}

/* Copies rows between a dense host array and an image.  to_field selects
 * the direction; ghosted selects the interior or the ghosted box. */
static void dense_rows(const strata_field *f, char *img, char *dense,
                       int ghosted, int to_field) {
  long g0 = ghosted ? f->g[0] : 0, g1 = ghosted ? f->g[1] : 0,
       g2 = ghosted ? f->g[2] : 0;
  long nx = (long)f->d.n[0] + 2 * g0, ny = (long)f->d.n[1] + 2 * g1,
       nz = (long)f->d.n[2] + 2 * g2;
  size_t row = (size_t)nx * f->esize;
  for (long k = 0; k < nz; k++)
    for (long j = 0; j < ny; j++) {
      char *fp = img + strata__offset(f, -g0, j - g1, k - g2) * f->esize;
      char *dp = dense + ((size_t)k * (size_t)ny + (size_t)j) * row;
      if (to_field)
        memcpy(fp, dp, row);
      else
        memcpy(dp, fp, row);
    }
}

/* Dense transfers: through the backend's read_dense/write_dense when it has
 * them (the CUDA engine: no image of the padded allocation, see
 * cuda/engine/transfer.cu), else rows copied out of / into a host image. */
static strata_status transfer(const strata_field *f, void *host, int ghosted,
                              int to_field) {
  if (!f) return STRATA_EINVAL;
  if (!host)
    return strata__fail_arg_p(f->ctx, STRATA_EINVAL, "host", host,
                              "host array is NULL");
  const strata__backend *be = f->ctx->be;
  if (to_field && be->write_dense)
    return be->write_dense((strata_field *)f, ghosted, host);
  if (!to_field && be->read_dense) return be->read_dense(f, ghosted, host);
  void *img = NULL;
  /* writing the interior only must keep the ghosts: fetch first */
  strata_status s = host_image(f, !to_field || !ghosted, &img);
  if (s != STRATA_OK) return s;
  dense_rows(f, img, host, ghosted, to_field);
  return host_done(f, img, to_field);
}

/* A distributed field's dense arrays cover the planes the rank owns. */
strata_status strata_field_write(strata_field *f, const void *host) {
  if (f && f->win) {
    strata_field v;
    strata__field_owned(f, &v);
    return transfer(&v, (void *)host, 0, 1);
  }
  return transfer(f, (void *)host, 0, 1);
}
strata_status strata_field_read(const strata_field *f, void *host) {
  if (f && f->win) {
    strata_field v;
    strata__field_owned(f, &v);
    return transfer(&v, host, 0, 0);
  }
  return transfer(f, host, 0, 0);
}
strata_status strata_field_read_box(const strata_field *f, const size_t lo[3],
                                   const size_t n[3], void *host) {
  if (!f || !lo || !n) return STRATA_EINVAL;
  if (f->win)
    return strata__fail(f->ctx, STRATA_ENOTSUP, "a box of a distributed "
                        "field: read the field (strata_field_read)");
  if (!f->ctx->be->host_accessible && !f->ctx->be->read_dense)
    return strata__fail(f->ctx, STRATA_ENOTSUP, "the %s backend reads "
                        "whole fields only",
                        strata_backend_name(strata_context_backend(f->ctx)));
  for (int a = 0; a < 3; a++)
    if (n[a] < 1 || lo[a] >= f->d.n[a] || n[a] > f->d.n[a] - lo[a])
      return strata__fail_arg(f->ctx, STRATA_EINVAL, "n", n[a],
                              "box %zu..%zu along %c is outside the field's "
                              "0..%zu", lo[a], lo[a] + n[a] - 1, "xyz"[a],
                              f->d.n[a] - 1);
  /* the box as a field of its own: the same allocation and pitches, its
   * origin moved to the box's first point */
  strata_field v = *f;
  memcpy(v.d.n, n, sizeof v.d.n);
  v.L.origin += lo[0] + f->L.pitch_x * (lo[1] + f->L.pitch_y * lo[2]);
  return transfer(&v, host, 0, 0);
}
strata_status strata_field_write_ghosted(strata_field *f, const void *host) {
  return transfer(f, (void *)host, 1, 1);
}
strata_status strata_field_read_ghosted(const strata_field *f, void *host) {
  return transfer(f, host, 1, 0);
}

/* ---- fills -------------------------------------------------------------- */

/* Calls body(i, j, k, element pointer) for every point of the ghosted box
 * of an image. */
#define FOR_GHOSTED(f, img, BODY)                                              \
  do {                                                                         \
    long g0_ = (f)->g[0], g1_ = (f)->g[1], g2_ = (f)->g[2];                    \
    long nx_ = (long)(f)->d.n[0], ny_ = (long)(f)->d.n[1],                     \
         nz_ = (long)(f)->d.n[2];                                              \
    _Pragma("omp parallel for collapse(2) schedule(static)")                   \
    for (long k = -g2_; k < nz_ + g2_; k++)                                    \
      for (long j = -g1_; j < ny_ + g1_; j++)                                  \
        for (long i = -g0_; i < nx_ + g0_; i++) {                              \
          size_t off_ = strata__offset((f), i, j, k);                          \
          BODY;                                                                \
        }                                                                      \
  } while (0)

static void store_value(const strata_field *f, void *img, size_t off,
                        double v) {
  if (f->d.precision == STRATA_F32)
    ((float *)img)[off] = (float)v;
  else
    ((double *)img)[off] = v;
}

strata_status strata_field_fill(strata_field *f, double value) {
  if (!f) return STRATA_EINVAL;
  if (f->ctx->be->fill_value) return f->ctx->be->fill_value(f, value);
  void *img = NULL;
  strata_status s = host_image(f, 1, &img);
  if (s != STRATA_OK) return s;
  FOR_GHOSTED(f, img, store_value(f, img, off_, value));
  return host_done(f, img, 1);
}

strata_status strata_field_fill_fn(strata_field *f, strata_point_fn fn,
                                   void *user) {
  if (!f) return STRATA_EINVAL;
  if (!fn)
    return strata__fail_arg_p(f->ctx, STRATA_EINVAL, "fn", fn,
                              "function is NULL");
  void *img = NULL;
  strata_status s = host_image(f, 1, &img);
  if (s != STRATA_OK) return s;
  /* a distributed field's points get their global indices */
  long sh[3] = {0, 0, 0};
  if (f->win) sh[f->win->axis] = f->win->offset;
  if (f->win && f->win->py > 1) sh[1] = f->win->offset_y;
  /* the user's function may not be thread-safe: call it serially */
  long g0 = f->g[0], g1 = f->g[1], g2 = f->g[2];
  long nx = (long)f->d.n[0], ny = (long)f->d.n[1], nz = (long)f->d.n[2];
  for (long k = -g2; k < nz + g2; k++)
    for (long j = -g1; j < ny + g1; j++)
      for (long i = -g0; i < nx + g0; i++)
        store_value(f, img, strata__offset(f, i, j, k),
                    fn(i + sh[0], j + sh[1], k + sh[2], user));
  return host_done(f, img, 1);
}

strata_status strata_field_fill_random(strata_field *f, uint64_t seed,
                                       double lo, double hi) {
  if (!f) return STRATA_EINVAL;
  if (!(lo <= hi) || !isfinite(lo) || !isfinite(hi))
    return strata__fail_arg(f->ctx, STRATA_EINVAL, isfinite(lo) ? "hi" : "lo",
                            isfinite(lo) ? hi : lo,
                            "random range [%g, %g) is not a finite interval",
                            lo, hi);
  if (f->win) { /* the values of the global field at this rank's points */
    void *img = NULL;
    strata_status s = host_image(f, 1, &img);
    if (s != STRATA_OK) return s;
    const strata__window *W = f->win;
    strata_field gf = *f; /* the global shape, for the global index */
    gf.d.n[W->axis] = W->gn[W->axis];
    long sh[3] = {0, 0, 0};
    sh[W->axis] = W->offset;
    if (W->py > 1) {
      gf.d.n[1] = W->gn[1];
      sh[1] = W->offset_y;
    }
    double w = hi - lo;
    FOR_GHOSTED(f, img,
                store_value(f, img, off_,
                            lo + w * strata__rand01(
                                         seed, strata__ghosted_index(
                                                   &gf, i + sh[0], j + sh[1],
                                                   k + sh[2]))));
    return host_done(f, img, 1);
  }
  if (f->ctx->be->fill_random) return f->ctx->be->fill_random(f, seed, lo, hi);
  void *img = NULL;
  strata_status s = host_image(f, 1, &img);
  if (s != STRATA_OK) return s;
  double w = hi - lo;
  FOR_GHOSTED(f, img,
              store_value(f, img, off_,
                          lo + w * strata__rand01(
                                       seed, strata__ghosted_index(f, i, j,
                                                                   k))));
  return host_done(f, img, 1);
}

strata_status strata_field_copy(strata_field *dst, const strata_field *src) {
  if (!dst || !src) return STRATA_EINVAL;
  strata_status s = strata__check_pair(dst, src, "copy", "src");
  if (s != STRATA_OK) return s;
  if (dst->d.ghost != src->d.ghost)
    return strata__fail_arg(dst->ctx, STRATA_ESHAPE, "src", src->d.ghost,
                            "copy: ghost widths differ (%d vs %d)",
                            dst->d.ghost, src->d.ghost);
  if (dst == src) return STRATA_OK;
  return dst->ctx->be->copy(dst->ctx, dst->data, src->data, dst->L.bytes);
}

/* ---- norms -------------------------------------------------------------- */

static strata_status norm_host(const strata_field *a, const strata_field *b,
                               strata_norm which, double *out) {
  void *ia = NULL, *ib = NULL;
  strata_status s = host_image(a, 1, &ia);
  if (s != STRATA_OK) return s;
  if (b) {
    s = host_image(b, 1, &ib);
    if (s != STRATA_OK) {
      host_done(a, ia, 0);
      return s;
    }
  }
  long nx = (long)a->d.n[0], ny = (long)a->d.n[1], nz = (long)a->d.n[2];
  double acc = 0.0, mx = 0.0;
  int nan = 0;
  int f32 = a->d.precision == STRATA_F32;
#pragma omp parallel for collapse(2) reduction(+ : acc, nan) \
    reduction(max : mx) schedule(static)
  for (long k = 0; k < nz; k++)
    for (long j = 0; j < ny; j++)
      for (long i = 0; i < nx; i++) {
        size_t oa = strata__offset(a, i, j, k);
        double v = f32 ? (double)((float *)ia)[oa] : ((double *)ia)[oa];
        if (b) {
          size_t ob = strata__offset(b, i, j, k);
          v -= f32 ? (double)((float *)ib)[ob] : ((double *)ib)[ob];
        }
        if (v != v) nan = 1;
        switch (which) {
        case STRATA_NORM_SUM: acc += v; break;
        case STRATA_NORM_MAX: mx = fabs(v) > mx ? fabs(v) : mx; break;
        default: acc += v * v; break;
        }
      }
  host_done(a, ia, 0);
  if (b) host_done(b, ib, 0);
  double npts = (double)nx * (double)ny * (double)nz;
  switch (which) {
  case STRATA_NORM_L2: *out = sqrt(acc); break;
  case STRATA_NORM_RMS: *out = sqrt(acc / npts); break;
  case STRATA_NORM_MAX: *out = mx; break;
  case STRATA_NORM_SUM: *out = acc; break;
  }
  if (nan) *out = NAN;
  return STRATA_OK;
}

static strata_status norm_common(const strata_field *a, const strata_field *b,
                                 strata_norm which, double *out) {
  if (!out)
    return strata__fail_arg_p(a->ctx, STRATA_EINVAL, "out", out,
                              "output pointer is NULL");
  if (which < STRATA_NORM_L2 || which > STRATA_NORM_SUM)
    return strata__fail_arg(a->ctx, STRATA_EINVAL, "which", (int)which,
                            "unknown norm %d", (int)which);
  if (a->ctx->be->norm) return a->ctx->be->norm(a, b, which, out);
  return norm_host(a, b, which, out);
}

strata_status strata_field_norm(const strata_field *f, strata_norm which,
                                double *out) {
  if (!f) return STRATA_EINVAL;
  if (f->win) {
    if (!out)
      return strata__fail_arg_p(f->ctx, STRATA_EINVAL, "out", out,
                                "norm: out is NULL");
    return strata__dist_norm(f, NULL, which, out);
  }
  return norm_common(f, NULL, which, out);
}

strata_status strata_field_diff(const strata_field *a, const strata_field *b,
                                strata_norm which, double *out) {
  if (!a || !b) return STRATA_EINVAL;
  strata_status s = strata__check_pair(a, b, "diff", "b");
  if (s != STRATA_OK) return s;
  if (a->win || b->win) {
    if (!a->win || !b->win || a->win->dist != b->win->dist ||
        a->win->own_n != b->win->own_n || a->win->own_lo != b->win->own_lo ||
        a->win->own_lo_y != b->win->own_lo_y ||
        a->win->own_n_y != b->win->own_n_y)
      return strata__fail_arg_s(a->ctx, STRATA_EINVAL, "b", "set",
                                "diff: a distributed field against a field "
                                "that is not split the same way");
    if (!out)
      return strata__fail_arg_p(a->ctx, STRATA_EINVAL, "out", out,
                                "diff: out is NULL");
    return strata__dist_norm(a, b, which, out);
  }
  return norm_common(a, b, which, out);
}

strata_status strata_field_get_window(const strata_field *f,
                                      strata_field_window *w) {
  if (!f || !w) return STRATA_EINVAL;
  memset(w, 0, sizeof *w);
  const int ax = f->d.dims - 1;
  w->axis = ax;
  memcpy(w->global_n, f->d.n, sizeof w->global_n);
  w->owned_count = f->d.n[ax];
  if (!f->win) return STRATA_OK;
  w->distributed = 1;
  memcpy(w->global_n, f->win->gn, sizeof w->global_n);
  w->offset = (size_t)f->win->offset;
  w->owned_lo = (size_t)f->win->own_lo;
  w->owned_count = (size_t)f->win->own_n;
  w->ranks_y = f->win->py;
  w->offset_y = (size_t)f->win->offset_y;
  w->owned_lo_y = (size_t)f->win->own_lo_y;
  w->owned_count_y = (size_t)f->win->own_n_y;
  return STRATA_OK;
}
