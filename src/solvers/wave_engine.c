/* The second-order wave engine: u+ = 2u - u- + c2 L u with sponge, CPML,
 * free-surface, periodic and Mur faces and point sources, written once
 * against the backend's wave_step entry.  The acoustic solver (wave.c)
 * and the explicit FDTD scheme (fdtd.c) drive it. */
#include "solvers_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

strata_status strata__dev_doubles(strata_context *ctx, const double *host,
                                  size_t n, double **out) {
  *out = NULL;
  if (n == 0) n = 1;
  void *p = NULL;
  strata_status s = ctx->be->alloc(ctx, n * sizeof(double), &p);
  if (s != STRATA_OK) return s;
  double *zeros = NULL;
  if (!host) {
    zeros = calloc(n, sizeof(double));
    if (!zeros) {
      ctx->be->release(ctx, p);
      return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
    }
    host = zeros;
  }
  s = ctx->be->from_host(ctx, p, host, n * sizeof(double));
  free(zeros);
  if (s != STRATA_OK) {
    ctx->be->release(ctx, p);
    return s;
  }
  *out = p;
  return STRATA_OK;
}

void strata__we_fix_host(double *img, const size_t n[3], int dims, int g,
                         const int face[6]) {
  long gg[3], N[3], E[3];
  for (int a = 0; a < 3; a++) {
    gg[a] = a < dims ? g : 0;
    N[a] = (long)n[a];
    E[a] = N[a] + 2 * gg[a];
  }
  const long st[3] = {1, E[0], E[0] * E[1]};
#define AT(i, j, k)                                                            \
  img[((i) + gg[0]) + E[0] * (((j) + gg[1]) + E[1] * ((k) + gg[2]))]
  for (long k = -gg[2]; k < N[2] + gg[2]; k++)
    for (long j = -gg[1]; j < N[1] + gg[1]; j++)
      for (long i = -gg[0]; i < N[0] + gg[0]; i++)
        if (i < 0 || i >= N[0] || j < 0 || j >= N[1] || k < 0 || k >= N[2])
          AT(i, j, k) = 0;
  for (int ax = 0; ax < dims; ax++) {
    int b = (ax + 1) % 3, c = (ax + 2) % 3;
    for (int side = 0; side < 2; side++) {
      int kind = face[2 * ax + side];
      if (kind != STRATA__WF_FREE && kind != STRATA__WF_PERIODIC) continue;
      /* as the engines' Phase D: lines along another axis's FREE boundary
       * nodes give 0 */
      const int fbl = b < dims && face[2 * b] == STRATA__WF_FREE,
                fbh = b < dims && face[2 * b + 1] == STRATA__WF_FREE,
                fcl = c < dims && face[2 * c] == STRATA__WF_FREE,
                fch = c < dims && face[2 * c + 1] == STRATA__WF_FREE;
      for (long ic = 0; ic < N[c]; ic++)
        for (long ib = 0; ib < N[b]; ib++) {
          long p[3];
          p[ax] = 0;
          p[b] = ib;
          p[c] = ic;
          double *line = &AT(p[0], p[1], p[2]);
          long sa = st[ax], na = N[ax];
          const int dead = (fbl && ib == 0) || (fbh && ib == N[b] - 1) ||
                           (fcl && ic == 0) || (fch && ic == N[c] - 1);
          if (kind == STRATA__WF_FREE) {
            long bn = side ? na - 1 : 0;
            line[bn * sa] = 0;
            for (long q = 1; q <= g; q++) {
              long gi = side ? na - 1 + q : -q, m = side ? na - 1 - q : q;
              line[gi * sa] = dead ? 0 : -line[m * sa];
            }
          } else {
            for (long q = 1; q <= g; q++) {
              if (side)
                line[(na - 1 + q) * sa] = dead ? 0 : line[(q - 1) * sa];
              else
                line[-q * sa] = dead ? 0 : line[(na - q) * sa];
            }
          }
        }
    }
  }
#undef AT
}

/* Reads f ghosted into doubles, fixes it, writes it back. */
static strata_status fix_field(strata__wengine *e, strata_field *f) {
  size_t cnt = 1;
  for (int a = 0; a < 3; a++)
    cnt *= f->d.n[a] + (a < f->d.dims ? 2 * (size_t)f->d.ghost : 0);
  double *img = malloc(cnt * sizeof(double));
  void *raw = malloc(cnt * f->esize);
  if (!img || !raw) {
    free(img);
    free(raw);
    return strata__fail(e->ctx, STRATA_ENOMEM, "out of host memory");
  }
  strata_status s = strata_field_read_ghosted(f, raw);
  if (s == STRATA_OK) {
    for (size_t q = 0; q < cnt; q++)
      img[q] = f->esize == 4 ? (double)((float *)raw)[q] : ((double *)raw)[q];
    strata__we_fix_host(img, f->d.n, f->d.dims, f->d.ghost, e->a.face);
    for (size_t q = 0; q < cnt; q++) {
      if (f->esize == 4)
        ((float *)raw)[q] = (float)img[q];
      else
        ((double *)raw)[q] = img[q];
    }
    s = strata_field_write_ghosted(f, raw);
  }
  free(img);
  free(raw);
  return s;
}

strata_status strata__we_refresh(strata__wengine *e) {
  strata_status s = fix_field(e, e->u);
  if (s == STRATA_OK) s = fix_field(e, e->up);
  if (s == STRATA_OK && e->u->win) { /* the planes between ranks */
    strata_field *f[2] = {e->u, e->up};
    s = strata__dist_exchange(f, 2, e->split_periodic);
  }
  if (s == STRATA_OK) e->dirty = 0;
  return s;
}

void strata__we_destroy(strata__wengine **pe) {
  if (!pe || !*pe) return;
  strata__wengine *e = *pe;
  strata_field_destroy(&e->u);
  strata_field_destroy(&e->up);
  strata_field_destroy(&e->u2);
  strata_field_destroy(&e->up2);
  strata_field_destroy(&e->c2);
  strata_field_destroy(&e->rb);
  for (int a = 0; a < 3; a++)
    for (int s = 0; s < 2; s++) {
      strata_field_destroy(&e->a.slab[a][s].psi);
      strata_field_destroy(&e->a.slab[a][s].zeta);
    }
  if (e->prof) e->ctx->be->release(e->ctx, e->prof);
  if (e->a.c2_line) e->ctx->be->release(e->ctx, (void *)e->a.c2_line);
  free(e);
  *pe = NULL;
}

/* What the engine holds on this rank, worked out before anything is
 * allocated: the fields' global and local descriptions, where the local
 * part starts along each axis, the faces and absorbing layers as this
 * rank treats them, and the profile buffer's length. */
typedef struct {
  strata_field_desc fd, ld; /* u and up: global, this rank's */
  size_t nl[3];             /* local sizes */
  long off[3];              /* global index of local 0 along each axis */
  int face[6], absorb[6];
  size_t prof;              /* doubles of the profile buffer */
} we_plan;

/* Axis q has a CPML face on this rank (its slab and profiles are here). */
static int cpml_on(const we_plan *p, int q) {
  return p->absorb[2 * q] == STRATA__ABS_CPML ||
         p->absorb[2 * q + 1] == STRATA__ABS_CPML;
}

/* A CPML layer must lie inside the part of the ranks at its face along a
 * split axis a of P parts (every rank checks the end parts, so all refuse
 * together). */
static strata_status cpml_fits(strata_context *ctx, const strata__we_desc *d,
                               int a, int P) {
  const long R = d->radius, W = d->width;
  const size_t n = d->n[a], base = n / (size_t)P;
  const char axis = d->dims == 2 && a == 1 ? 'z' : "xyz"[a];
  for (int side = 0; P > 1 && side < 2; side++) {
    /* the first part holds one more when P does not divide n */
    const size_t cnt = base + (!side && n % (size_t)P ? 1 : 0);
    if (d->absorb[2 * a + side] == STRATA__ABS_CPML && (long)cnt < W + 2 * R)
      return strata__fail_arg(ctx, STRATA_EINVAL,
                       d->width_arg ? d->width_arg : "width", W,
                       "wave: the CPML layer on the %c %s face needs %ld "
                       "%s (width %ld + 2 x radius %ld) inside the part of "
                       "the ranks at that face, which have %zu; use fewer "
                       "ranks%s or a thinner layer",
                       axis, side ? "high" : "low", W + 2 * R,
                       a == d->dims - 1 ? "planes" : "rows", W, R, cnt,
                       a == d->dims - 1 ? "" : " along y");
  }
  return STRATA_OK;
}

static strata_status we_plan_of(strata_context *ctx, const strata__we_desc *d,
                                we_plan *p) {
  memset(p, 0, sizeof *p);
  if (!ctx->be->wave_step)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "the %s engine has no wave kernel yet; use "
                        "backend=cpu", ctx->be->name);
  const int ax = d->dims - 1;
  p->fd = (strata_field_desc){d->dims, {d->n[0], d->n[1], d->n[2]},
                              d->radius, d->precision};
  p->ld = p->fd;
  int inner[6] = {0}; /* faces shared with a neighbour */
  if (d->dist) {
    strata__window w;
    strata_status s = strata__dist_local_window(d->dist, &p->fd, 0,
                                                d->split_periodic, &w);
    if (s == STRATA_OK)
      s = strata__dist_local_desc(d->dist, &p->fd, 0, d->split_periodic,
                                  &p->ld);
    if (s == STRATA_OK && w.py > 1 &&
        strata_context_backend(ctx) == STRATA_BACKEND_CUDA)
      /* the CUDA wave kernels' parts of a y-z box (CPML and damping
       * offsets along y) have not run against one process on GPUs */
      s = strata__fail_arg(ctx, STRATA_ENOTSUP, "ranks_y", w.py,
                           "wave: the y-z split (%d ranks along y) runs on "
                           "the CPU engine; over GPUs the wave takes slabs "
                           "(ranks_y = 0 or 1)", w.py);
    if (s == STRATA_OK) s = cpml_fits(ctx, d, ax, w.pz);
    if (s == STRATA_OK && w.py > 1) s = cpml_fits(ctx, d, 1, w.py);
    if (s != STRATA_OK) return s;
    const int wz = (d->split_periodic & STRATA__DIST_WRAP_Z) && w.pz > 1,
              wy = (d->split_periodic & STRATA__DIST_WRAP_Y) && w.py > 1;
    p->off[ax] = w.offset;
    for (int side = 0; side < 2; side++)
      inner[2 * ax + side] = w.nb[side] >= 0 || wz;
    if (w.py > 1) { /* a y-z split */
      p->off[1] = w.offset_y;
      for (int side = 0; side < 2; side++)
        inner[2 + side] = w.nby[side] >= 0 || wy;
    }
  }
  for (int a = 0; a < 3; a++) p->nl[a] = p->ld.n[a];
  for (int f = 0; f < 6; f++) {
    p->absorb[f] = d->absorb[f];
    p->face[f] = d->absorb[f] != STRATA__ABS_NONE ? STRATA__WF_ZERO
                                                  : d->face[f];
    if (inner[f]) { /* ghosts come from the neighbour: left alone */
      p->face[f] = STRATA__WF_ZERO;
      p->absorb[f] = STRATA__ABS_NONE;
    }
  }
  for (int q = 0; q < d->dims; q++)
    p->prof += p->nl[q] * ((d->damp[q] ? 1 : 0) +
                           (d->pml_a[q] && cpml_on(p, q) ? 2 : 0));
  return STRATA_OK;
}

/* A CPML slab's description: the local grid, W + 2R points along q. */
static strata_field_desc slab_desc(const strata__we_desc *d,
                                   const we_plan *p, int q) {
  strata_field_desc sd = p->ld;
  sd.n[q] = (size_t)(d->width + 2 * d->radius);
  return sd;
}

strata_status strata__we_footprint(strata_context *ctx,
                                   const strata__we_desc *d,
                                   strata__footprint *fp) {
  we_plan p;
  strata_status s = we_plan_of(ctx, d, &p);
  if (s != STRATA_OK) return s;
  s = strata__fp_field(ctx, fp, &p.ld);
  if (s == STRATA_OK) s = strata__fp_field(ctx, fp, &p.ld);
  if (s != STRATA_OK) return s;
  if (p.prof) strata__fp_device(fp, p.prof * sizeof(double));
  if (d->density) s = strata__fp_field(ctx, fp, &p.ld); /* b = 1/rho */
  if (s != STRATA_OK) return s;
  size_t nline = p.nl[d->dims - 1] ? p.nl[d->dims - 1] : 1;
  strata__fp_device(fp, nline * sizeof(double)); /* c2 per plane */
  for (int q = 0; q < d->dims; q++)
    for (int side = 0; side < 2; side++)
      if (p.absorb[2 * q + side] == STRATA__ABS_CPML) {
        strata_field_desc sd = slab_desc(d, &p, q);
        strata__fp_field(ctx, fp, &sd);
        strata__fp_field(ctx, fp, &sd);
      }
  /* the first step sets the ghost layers through the host, a field at a
   * time as doubles beside its own precision (strata__we_refresh) */
  size_t cnt = 1;
  for (int a = 0; a < 3; a++)
    cnt *= p.ld.n[a] + (a < d->dims ? 2 * (size_t)d->radius : 0);
  strata__fp_host_peak(fp, cnt * (sizeof(double) + (size_t)d->precision));
  strata__fp_host(fp, sizeof(strata__wengine));
  return STRATA_OK;
}

strata_status strata__we_create(strata_context *ctx, const strata__we_desc *d,
                                strata__wengine **out) {
  *out = NULL;
  we_plan p;
  strata_status s = we_plan_of(ctx, d, &p);
  if (s != STRATA_OK) return s;
  strata__wengine *e = calloc(1, sizeof *e);
  if (!e) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  e->ctx = ctx;
  e->split_periodic = d->split_periodic;
  strata__wave_args *a = &e->a;
  a->dims = d->dims;
  a->radius = d->radius;
  memcpy(a->lap, d->lap, sizeof a->lap);
  memcpy(a->d1, d->d1, sizeof a->d1);
  a->mur = d->mur;
  memcpy(a->face, p.face, sizeof a->face);
  memcpy(e->gface, d->face, sizeof e->gface);
  memcpy(e->gn, d->n, sizeof e->gn);
  const int ax = d->dims - 1;
  if (d->dist) {
    s = strata__dist_field_create_ext(d->dist, &p.fd, 0, d->split_periodic,
                                      &e->u);
    if (s == STRATA_OK)
      s = strata__dist_field_create_ext(d->dist, &p.fd, 0, d->split_periodic,
                                        &e->up);
  } else {
    s = strata_field_create(ctx, &p.fd, &e->u);
    if (s == STRATA_OK) s = strata_field_create(ctx, &p.fd, &e->up);
  }
  if (s != STRATA_OK) {
    strata__we_destroy(&e);
    return s;
  }
  const size_t *nl = p.nl;
  /* profiles: one backend buffer */
  if (p.prof) {
    double *host = malloc(p.prof * sizeof(double));
    if (!host) s = strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
    size_t at = 0;
    size_t offs[3][3];
    for (int q = 0; host && q < d->dims; q++) {
      const long o = p.off[q];
      const double *src[3] = {d->damp[q], d->pml_a[q], d->pml_b[q]};
      if (!cpml_on(&p, q)) src[1] = src[2] = NULL;
      for (int m = 0; m < 3; m++) {
        offs[q][m] = (size_t)-1;
        if (!src[m]) continue;
        memcpy(host + at, src[m] + o, nl[q] * sizeof(double));
        offs[q][m] = at;
        at += nl[q];
      }
    }
    if (host) s = strata__dev_doubles(ctx, host, p.prof, &e->prof);
    if (s == STRATA_OK)
      for (int q = 0; q < d->dims; q++) {
        if (offs[q][0] != (size_t)-1) a->damp[q] = e->prof + offs[q][0];
        if (offs[q][1] != (size_t)-1) a->pml_a[q] = e->prof + offs[q][1];
        if (offs[q][2] != (size_t)-1) a->pml_b[q] = e->prof + offs[q][2];
      }
    free(host);
  }
  if (s == STRATA_OK)
    s = strata__we_set_c2_line(e, d->c2_line ? d->c2_line + p.off[ax] : NULL);
  /* CPML slabs (local fields: the layer lies inside this rank's part) */
  const long R = d->radius, W = d->width;
  for (int q = 0; s == STRATA_OK && q < d->dims; q++)
    for (int side = 0; s == STRATA_OK && side < 2; side++) {
      if (p.absorb[2 * q + side] != STRATA__ABS_CPML) continue;
      strata__wave_slab *S = &a->slab[q][side];
      strata_field_desc sd = slab_desc(d, &p, q);
      long n = (long)nl[q];
      s = strata_field_create(ctx, &sd, &S->psi);
      if (s == STRATA_OK) s = strata_field_create(ctx, &sd, &S->zeta);
      /* both sides: the layer's first index lo at the field's 0, so that
       * a row's psi and zeta along x are stored as whole 32-byte sectors
       * ([lo - R, hi + R) is [-R, W + 2R): its first R in the ghosts).
       * Placing the high sides R further out (their psi rows then
       * stored in partial sectors) measured slower. */
      S->lo = side ? n - W - R : 0;
      S->origin = S->lo;
      S->hi = side ? n : W + R;
    }
  if (d->dist) s = strata__dist_agree(d->dist, s);
  if (s != STRATA_OK) {
    strata__we_destroy(&e);
    return s;
  }
  e->dirty = 1;
  *out = e;
  return STRATA_OK;
}

strata_status strata__we_set_c2_line(strata__wengine *e, const double *line) {
  double *p = NULL;
  strata_status s = strata__dev_doubles(
      e->ctx, line, e->u->d.n[e->a.dims - 1], &p);
  if (s != STRATA_OK) return s;
  if (e->a.c2_line) e->ctx->be->release(e->ctx, (void *)e->a.c2_line);
  e->a.c2_line = p;
  strata_field_destroy(&e->c2);
  e->a.c2 = NULL;
  return STRATA_OK;
}

/* A global index c outside [0, n) of an axis with face kinds lo, hi
 * brought inside as rb's ghosts extend the model. */
static long b_index(long c, long n, int lo, int hi) {
  if (c < 0)
    return lo == STRATA__WF_PERIODIC ? c + n : lo == STRATA__WF_FREE ? -c : 0;
  if (c >= n)
    return hi == STRATA__WF_PERIODIC ? c - n
           : hi == STRATA__WF_FREE   ? 2 * (n - 1) - c
                                     : n - 1;
  return c;
}

strata_status strata__we_set_b(strata__wengine *e,
                               double (*bfn)(long, long, long, void *),
                               void *user) {
  strata_status s = STRATA_OK;
  const strata_field_desc *ld = &e->u->d;
  if (!e->rb && (s = strata_field_create(e->ctx, ld, &e->rb)) != STRATA_OK)
    return s;
  const int D = ld->dims;
  const long g = ld->ghost;
  long ext[3] = {1, 1, 1}, sh[3] = {0, 0, 0};
  for (int a = 0; a < D; a++) ext[a] = (long)ld->n[a] + 2 * g;
  if (e->u->win) {
    sh[e->u->win->axis] = e->u->win->offset;
    if (e->u->win->py > 1) sh[1] = e->u->win->offset_y; /* a y-z split */
  }
  const size_t cnt = (size_t)ext[0] * (size_t)ext[1] * (size_t)ext[2];
  void *img = malloc(cnt * (size_t)ld->precision);
  if (!img) return strata__fail(e->ctx, STRATA_ENOMEM, "out of host memory");
  size_t q = 0;
  for (long k = 0; k < ext[2]; k++)
    for (long j = 0; j < ext[1]; j++)
      for (long i = 0; i < ext[0]; i++, q++) {
        long c[3] = {i, j, k};
        for (int a = 0; a < 3; a++) {
          if (a < D) c[a] -= g;
          c[a] = b_index(c[a] + sh[a], (long)e->gn[a], e->gface[2 * a],
                         e->gface[2 * a + 1]);
        }
        const double v = bfn(c[0], c[1], c[2], user);
        if (ld->precision == STRATA_F32)
          ((float *)img)[q] = (float)v;
        else
          ((double *)img)[q] = v;
      }
  s = strata_field_write_ghosted(e->rb, img);
  free(img);
  if (s == STRATA_OK) e->a.rb = e->rb;
  return s;
}

strata_status strata__we_set_c2(strata__wengine *e, const double *c2) {
  strata_status s = STRATA_OK;
  if (!e->c2) {
    strata_field_desc fd = e->u->d;
    s = strata_field_create(e->ctx, &fd, &e->c2);
    if (s != STRATA_OK) return s;
  }
  size_t cnt = e->u->d.n[0] * e->u->d.n[1] * e->u->d.n[2];
  if (e->c2->esize == 4) {
    float *tmp = malloc(cnt * sizeof(float));
    if (!tmp) return strata__fail(e->ctx, STRATA_ENOMEM, "out of host memory");
    for (size_t q = 0; q < cnt; q++) tmp[q] = (float)c2[q];
    s = strata_field_write(e->c2, tmp);
    free(tmp);
  } else {
    s = strata_field_write(e->c2, c2);
  }
  if (s == STRATA_OK) e->a.c2 = e->c2;
  return s;
}

/* The step's arguments: the current fields and the sources (val at the
 * first step). */
static strata__wave_args *step_args(strata__wengine *e, int nsrc,
                                    const long (*src)[3], const double *val) {
  strata__wave_args *a = &e->a;
  a->u = e->u;
  a->up = e->up;
  a->nsrc = nsrc > 8 ? 8 : nsrc;
  for (int q = 0; q < a->nsrc; q++) {
    memcpy(a->src[q], src[q], sizeof a->src[q]);
    a->src_val[q] = val[q];
  }
  return a;
}

strata_status strata__we_step(strata__wengine *e, int nsrc,
                              const long (*src)[3], const double *val) {
  strata_status s;
  if (e->dirty && (s = strata__we_refresh(e)) != STRATA_OK) return s;
  s = e->ctx->be->wave_step(step_args(e, nsrc, src, val));
  if (s != STRATA_OK) return s;
  strata_field *t = e->u;
  e->u = e->up;
  e->up = t;
  if (e->u->win) /* the new u's planes next to the neighbours */
    return strata__dist_exchange(&e->u, 1, e->split_periodic);
  return STRATA_OK;
}

int strata__we_pair_wanted(const strata_context *ctx) {
  /* measured slower than single steps
   * (docs/performance.md#temporal-blocking-of-the-wave-step): only when
   * asked for */
  return strata__tuning_long(ctx, "wave_pair", 0) == 1;
}

/* The tuning switch wave_pair=1 asked for the fused sweep, and e->pair_off
 * says why it cannot run. */
static strata_status pair_not_taken(strata__wengine *e) {
  return strata__fail(e->ctx, STRATA_ENOTSUP,
                      "wave: wave_pair=1, but two steps cannot run in "
                      "one sweep here: %s", e->pair_off);
}

strata_status strata__we_step2(strata__wengine *e, int nsrc,
                               const long (*src)[3], const double *val,
                               const double *val2, int *did) {
  *did = 0;
  strata_context *ctx = e->ctx;
  if (!strata__we_pair_wanted(ctx)) return STRATA_OK;
  if (!e->pair_off) {
    if (!ctx->be->wave_pair)
      e->pair_off = "the engine has no fused wave kernel";
    else if (e->u->win)
      e->pair_off = "a distributed run steps one step at a time";
    else if (e->rb)
      e->pair_off = "variable density steps one step at a time";
  }
  strata_status s = STRATA_OK;
  if (e->pair_off) return pair_not_taken(e);
  if (!e->u2) { /* the two more fields the sweep writes */
    s = strata_field_create(ctx, &e->u->d, &e->u2);
    if (s == STRATA_OK) s = strata_field_create(ctx, &e->u->d, &e->up2);
    if (s != STRATA_OK) {
      strata_field_destroy(&e->u2);
      strata_field_destroy(&e->up2);
      char why[sizeof ctx->error];
      memcpy(why, ctx->error, sizeof why);
      return strata__fail(ctx, s,
                          "wave: wave_pair=1, but the two more fields "
                          "of the fused sweep do not fit: %s", why);
    }
  }
  if (e->dirty && (s = strata__we_refresh(e)) != STRATA_OK) return s;
  int used = 0;
  s = ctx->be->wave_pair(step_args(e, nsrc, src, val), val2, e->up2, e->u2,
                         &used);
  if (s != STRATA_OK) return s;
  if (!used) { /* the case does not change between steps */
    strata_field_destroy(&e->u2);
    strata_field_destroy(&e->up2);
    e->pair_off = "the fused kernel takes 3D grids whose faces are all "
                  "sponges or zero (no CPML, free, periodic or Mur face)";
    return pair_not_taken(e);
  }
  strata_field *ou = e->u, *oup = e->up;
  e->u = e->u2;   /* u^{n+2} */
  e->up = e->up2; /* u^{n+1} */
  e->u2 = ou;
  e->up2 = oup;
  *did = 1;
  return STRATA_OK;
}

/* ---- state blobs (checkpoints) ------------------------------------------- */

static size_t ghosted_bytes(const strata_field *f) {
  strata_field_desc d;
  if (strata_field_get_desc(f, &d) != STRATA_OK) return 0;
  size_t n = (size_t)d.precision;
  for (int a = 0; a < d.dims; a++) n *= d.n[a] + 2 * (size_t)d.ghost;
  return n;
}

size_t strata__state_fields_bytes(strata_field *const *f, int n) {
  size_t b = 0;
  for (int i = 0; i < n; i++) b += ghosted_bytes(f[i]);
  return b;
}

strata_status strata__state_fields_save(strata_field *const *f, int n,
                                        unsigned char *p) {
  for (int i = 0; i < n; i++) {
    strata_status s = strata_field_read_ghosted(f[i], p);
    if (s != STRATA_OK) return s;
    p += ghosted_bytes(f[i]);
  }
  return STRATA_OK;
}

strata_status strata__state_fields_load(strata_field *const *f, int n,
                                        const unsigned char *p) {
  for (int i = 0; i < n; i++) {
    strata_status s = strata_field_write_ghosted(f[i], p);
    if (s != STRATA_OK) return s;
    p += ghosted_bytes(f[i]);
  }
  return STRATA_OK;
}

int strata__we_state_fields(strata__wengine *e, strata_field **out) {
  int n = 0;
  out[n++] = e->u;
  out[n++] = e->up;
  for (int a = 0; a < 3; a++)
    for (int s = 0; s < 2; s++)
      if (e->a.slab[a][s].psi) {
        out[n++] = e->a.slab[a][s].psi;
        out[n++] = e->a.slab[a][s].zeta;
      }
  if (e->rb) out[n++] = e->rb; /* the density model the state ran with */
  return n;
}

/* ---- state blobs of distributed solvers ---------------------------------- */

void strata__state_part(const strata_field *u,
                        uint64_t p[STRATA__STATE_PART]) {
  memset(p, 0, STRATA__STATE_PART * sizeof *p);
  if (!u->win) return;
  const strata__window *w = u->win;
  p[0] = (uint64_t)strata__dist_rank(w->dist);
  p[1] = (uint64_t)strata__dist_size(w->dist);
  for (int a = 0; a < 3; a++) p[2 + a] = (uint64_t)w->gn[a];
  p[5] = (uint64_t)w->own_lo;
  p[6] = (uint64_t)w->own_n;
  p[7] = w->py > 1 ? (uint64_t)w->py : 0; /* with the rank: its rows */
}

static void part_words(const uint64_t p[STRATA__STATE_PART], char *s,
                       size_t n) {
  char yz[64] = "";
  if (p[7] > 1)
    snprintf(yz, sizeof yz, " of a y-z split, %llu ranks along y",
             (unsigned long long)p[7]);
  snprintf(s, n, "rank %llu of %llu%s, grid %llux%llux%llu, planes "
           "%llu..%llu", (unsigned long long)p[0], (unsigned long long)p[1],
           yz, (unsigned long long)p[2], (unsigned long long)p[3],
           (unsigned long long)p[4], (unsigned long long)p[5],
           (unsigned long long)(p[5] + p[6] - 1));
}

strata_status strata__state_part_check(const strata_field *u, const char *who,
                                       int saved_dist,
                                       const uint64_t *saved) {
  char mine[200], theirs[200];
  uint64_t p[STRATA__STATE_PART];
  strata__state_part(u, p);
  if (u->win) part_words(p, mine, sizeof mine);
  if (saved_dist) part_words(saved, theirs, sizeof theirs);
  if (!saved_dist && u->win)
    return strata__fail(u->ctx, STRATA_EINVAL,
                        "%s: the state was saved by one process; this solver "
                        "is a part of a run over several (%s)", who, mine);
  if (saved_dist && !u->win)
    return strata__fail(u->ctx, STRATA_EINVAL,
                        "%s: the state is one rank's part of a run over "
                        "several (%s); this solver runs in one process", who,
                        theirs);
  if (saved_dist && memcmp(p, saved, sizeof p) != 0)
    return strata__fail(u->ctx, STRATA_EINVAL,
                        "%s: the state was saved on another decomposition "
                        "(%s); this solver is %s", who, theirs, mine);
  return STRATA_OK;
}

strata_status strata__state_agree(const strata_field *u, strata_status s,
                                  const char *who, const char *what) {
  if (!u->win) return s;
  double v[2] = {s != STRATA_OK, (double)s};
  strata_status r = strata_dist_allreduce(u->win->dist, v, 2, 1);
  if (s != STRATA_OK) return s;
  if (r != STRATA_OK) return r;
  if (v[0] > 0)
    return strata__fail_elsewhere(u->ctx, (strata_status)(int)v[1],
                                  "%s: another rank failed to %s its state "
                                  "(its message says why)", who, what);
  return STRATA_OK;
}

strata_status strata__state_head(strata_context *ctx, const char *who,
                                 const char *what, const strata_field *u,
                                 const void *buf, size_t size, uint64_t tag,
                                 uint64_t tag_part, uint64_t *h, size_t *hb) {
  if (!buf || size < STRATA__STATE_HEAD * 8)
    return strata__fail_arg(ctx, STRATA_EINVAL, buf ? "size" : "buf",
                            buf ? size : 0, "%s: no state (%zu bytes)", who,
                            buf ? size : 0);
  memcpy(h, buf, STRATA__STATE_HEAD * 8);
  if (h[0] != tag && h[0] != tag_part) {
    /* the tags' last two bytes are the format's version ("01") */
    const uint64_t kind = 0xffffffffffffull;
    if ((h[0] & kind) == (tag & kind) || (h[0] & kind) == (tag_part & kind))
      return strata__fail(ctx, STRATA_EFORMAT,
                          "%s: %s's state of format %c%c; this build reads "
                          "format %c%c", who, what, (char)(h[0] >> 48),
                          (char)(h[0] >> 56), (char)(tag >> 48),
                          (char)(tag >> 56));
    return strata__fail(ctx, STRATA_EFORMAT, "%s: not %s's state", who, what);
  }
  const int part = h[0] == tag_part;
  *hb = STRATA__STATE_HEAD * 8 + (part ? STRATA__STATE_PART * 8 : 0);
  if (size < *hb)
    return strata__fail(ctx, STRATA_EFORMAT,
                        "%s: the state is truncated (%zu bytes)", who, size);
  uint64_t *pr = h + STRATA__STATE_HEAD;
  if (part)
    memcpy(pr, (const unsigned char *)buf + STRATA__STATE_HEAD * 8,
           STRATA__STATE_PART * 8);
  return strata__state_part_check(u, who, part, pr);
}
