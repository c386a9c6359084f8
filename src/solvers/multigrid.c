/* Geometric multigrid for the Poisson equation: the options, the checks
 * on them, and building the level hierarchy (coarsening each axis so its
 * faces keep their position, the banded restriction and prolongation
 * tables between levels, the per-level fields) and destroying it.  The
 * cycles and the solve that run on the hierarchy are in mg_cycle.c; the
 * handle's layout they share is in mg_internal.h. */

/* Grids (docs/multigrid.md has the full story).  Along each axis a level
 * has n points and two faces.  A Dirichlet face lies at distance d (in the
 * level's spacing) from the outermost point: d = 1 on the finest level
 * (the value sits on the ghost node); on coarse levels the correction
 * vanishes there, imposed through the ghost g = alpha u(0), alpha =
 * (d - 1)/d (linear extrapolation), for any d in [1/2, 3/2].  A Neumann
 * face lies halfway (d = 1/2, mirror ghost).  Coarsening halves the
 * spacing and places the coarse points (on every other fine point, or
 * between pairs of fine points) and their count so that every face keeps
 * its position: always possible with a Dirichlet face on the axis; with
 * Neumann on both faces or periodic axes only while the length is even,
 * beyond which the coarse face is off by a quarter of a coarse spacing
 * (the level is marked inexact).  Prolongation is linear interpolation
 * through the coarse ghost rule; restriction is its transpose scaled by
 * 4/2^dims, which keeps the stencil the same on every level. */
#define _POSIX_C_SOURCE 200809L
#include "mg_fv.h"
#include "mg_internal.h"
#include "solvers_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MG_PI 3.14159265358979323846

static const char *const face_names[6] = {"x-low", "x-high", "y-low",
                                          "y-high", "z-low", "z-high"};

/* ---- options ------------------------------------------------------------ */

void strata_mg_options_seed004(strata_mg_options *o) {
  if (!o) return;
  o->disc = STRATA_MG_FE;
  o->cycle = STRATA_MG_V;
  o->fmg = 0;
  o->pre_fine = 2;
  o->pre = 1;
  o->post = 1;
  o->omega = 0;
}

void strata_mg_options_init(strata_mg_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->dims = 3;
  o->n[0] = o->n[1] = o->n[2] = 63;
  o->precision = STRATA_F64;
  o->h = 1.0 / 64;
  strata_boundary_uniform(&o->bc, STRATA_BC_DIRICHLET, 0.0);
  strata_mg_options_seed004(o);
  o->max_cycles = 30;
  o->rtol = -1;
  o->atol = 0;
  o->stall = 1;
  o->max_levels = 0;
  o->coarse_max_sweeps = 1000;
  o->coarse_rtol = 1e-3;
  o->project = 0;
  o->profile = 0;
}

/* The stencil of a discretisation and its scale sigma (S u = sigma h^2
 * (-lap u) + O(h^4): sigma = -(1/2) sum_q w_q q_x^2). */
static void stencil_of(int dims, strata_mg_discretization disc,
                       strata__mg_op *op, double *sigma) {
  memset(op, 0, sizeof *op);
  op->dims = dims;
  if (dims == 3) {
    if (disc == STRATA_MG_FD) {
      op->c[0] = 1;
      op->c[1] = -1.0 / 6;
    } else {
      op->c[0] = 8.0 / 3;
      op->c[2] = -1.0 / 6;
      op->c[3] = -1.0 / 12;
    }
    *sigma = -(op->c[1] + 4 * op->c[2] + 4 * op->c[3]);
  } else {
    if (disc == STRATA_MG_FD) {
      op->c[0] = 1;
      op->c[1] = -0.25;
    } else {
      op->c[0] = 8.0 / 3;
      op->c[1] = -1.0 / 3;
      op->c[2] = -1.0 / 3;
    }
    *sigma = -(op->c[1] + 2 * op->c[2]);
  }
}

/* The symbol's range over the high frequencies (some |theta| >= pi/2) and
 * its maximum: Jacobi's smoothing optimum is 2 C0 / (lo + hi), and it is
 * stable for omega < 2 C0 / max. */
static void symbol_range(const strata__mg_op *op, double *lo, double *hi,
                         double *mx) {
  const int m = 48;
  double l = INFINITY, h = -INFINITY, M = -INFINITY;
  int mz = op->dims == 3 ? m : 0;
  for (int a = 0; a <= m; a++)
    for (int b = 0; b <= m; b++)
      for (int c = 0; c <= mz; c++) {
        double cx = cos(MG_PI * a / m), cy = cos(MG_PI * b / m),
               cz = cos(MG_PI * c / m);
        double v;
        if (op->dims == 3)
          v = op->c[0] + 2 * op->c[1] * (cx + cy + cz) +
              4 * op->c[2] * (cx * cy + cy * cz + cz * cx) +
              8 * op->c[3] * cx * cy * cz;
        else
          v = op->c[0] + 2 * op->c[1] * (cx + cy) + 4 * op->c[2] * cx * cy;
        int high = 2 * a >= m || 2 * b >= m || (op->dims == 3 && 2 * c >= m);
        if (high) {
          if (v < l) l = v;
          if (v > h) h = v;
        }
        if (v > M) M = v;
      }
  *lo = l;
  *hi = h;
  *mx = M;
}

/* ---- coarsening ----------------------------------------------------------- */

/* How well a coarse face fits: 0 exact and cheapest, larger worse,
 * INFINITY not allowed.  Dirichlet faces are exact for d in [1/2, 3/2]
 * (d = 1 needs no extrapolation, d = 1/2 is the classic cell-centred
 * one); a Neumann face is exact only at d = 1/2. */
static double face_cost(int kind, double d) {
  if (kind == AX_N) {
    if (d < -1e-9 || d > 1 + 1e-9) return INFINITY;
    return fabs(d - 0.5) < 1e-9 ? 0 : 100 + fabs(d - 0.5);
  }
  if (d < 0.5 - 1e-9 || d > 1.5 + 1e-9) return INFINITY;
  if (fabs(d - 1) < 1e-9) return 0;
  if (fabs(d - 0.5) < 1e-9) return 1;
  return 2;
}

/* Chooses the coarse axis for a fine one: the position of coarse point 0
 * (off, in fine index units) and the count; ratio receives the coarse
 * spacing in fine spacings (2, except on the approximate axes below).
 * Returns 0 when the axis cannot be coarsened. */
static int coarsen_axis(const mg_axis *f, mg_axis *c, double *off,
                        double *ratio, int *exact) {
  *c = *f;
  *ratio = 2;
  *exact = 1;
  if (f->kind[0] == AX_P || (f->kind[0] == AX_N && f->kind[1] == AX_N)) {
    if (f->n < 2) return 0;
    c->n = (f->n + 1) / 2;
    if (f->n % 2) {
      /* an odd length: the coarse points are spread evenly over the same
       * length (spacing n/nc, slightly under 2), so the faces (or the
       * period) stay exact and the coarse stencil, which assumes 2, is
       * off by a few percent along this axis */
      *ratio = (double)f->n / (double)c->n;
      *exact = 0;
    }
    /* periodic: coarse point 0 on fine point 0; Neumann: halfway
     * between the face and the point 1 coarse spacing in */
    *off = f->kind[0] == AX_P ? 0 : *ratio / 2 - 0.5;
    return 1;
  }
  double best = INFINITY;
  for (int ci = -1; ci <= 3; ci++) {
    double cp = 0.5 * ci;
    long m = (long)floor((f->n - 1 - cp) / 2) + 1;
    for (long nc = m - 1; nc <= m + 1; nc++) {
      if (nc < 1) continue;
      /* every fine point must lie within [-1, nc] in coarse units */
      if (-cp / 2 < -1 || (f->n - 1 - cp) / 2 > nc) continue;
      double dlo = (cp + f->d[0]) / 2;
      double dhi = ((f->n - 1 - cp) - 2.0 * (nc - 1) + f->d[1]) / 2;
      double cost = face_cost(f->kind[0], dlo) + face_cost(f->kind[1], dhi);
      if (ci % 2 != 0) cost += 0.5; /* between fine points: 4 weights
                                       per axis instead of 3 */
      cost += 0.01 * fabs(dlo - dhi); /* prefer symmetric placements */
      if (cost < best) {
        best = cost;
        c->n = nc;
        c->d[0] = dlo;
        c->d[1] = dhi;
        *off = cp;
      }
    }
  }
  if (!isfinite(best)) return 0;
  for (int s = 0; s < 2; s++)
    if (c->kind[s] == AX_N) {
      if (fabs(c->d[s] - 0.5) > 1e-9) *exact = 0;
      c->d[s] = 0.5; /* the mirror rule puts it there */
    }
  return 1;
}

/* ---- transfer tables ----------------------------------------------------- */

typedef struct {
  int idx[4];
  double w[4];
  int n;
} row4;

static void row_add(row4 *r, int j, double w) {
  if (w == 0) return;
  for (int q = 0; q < r->n; q++)
    if (r->idx[q] == j) {
      r->w[q] += w;
      return;
    }
  r->idx[r->n] = j;
  r->w[r->n++] = w;
}

/* The prolongation rows of one axis (fine point i <- coarse points, the
 * coarse ghost rule folded in): *P (n rows) and *cnt (how many rows each
 * coarse point appears in), malloc'd, and the band widths *wp of the
 * prolongation and *wr of the restriction (its transpose). */
static strata_status axis_rows(strata_context *ctx, int a, const mg_axis *f,
                               const mg_axis *c, double off, double ratio,
                               const strata__mg_ghost *cg, row4 **Pout,
                               int **cntout, int *wpout, int *wrout) {
  long n = f->n, nc = c->n;
  row4 *P = calloc((size_t)n, sizeof *P);
  int *cnt = calloc((size_t)nc, sizeof *cnt);
  strata_status s = STRATA_OK;
  *Pout = NULL;
  *cntout = NULL;
  if (!P || !cnt) {
    free(P);
    free(cnt);
    return strata__fail(ctx, STRATA_ENOMEM,
                        "multigrid: out of host memory building the transfer "
                        "tables");
  }
  int wp = 1, wr = 1;
  for (long i = 0; i < n; i++) {
    double t = (i - off) / ratio;
    long J = (long)floor(t);
    double th = t - J;
    for (int e = 0; e < 2; e++) {
      long j = J + e;
      double w = e ? th : 1 - th;
      if (w == 0) continue;
      if (j < -1 || j > nc) {
        s = strata__fail(ctx, STRATA_EINVAL,
                         "multigrid: internal error: axis %c, fine point "
                         "%ld maps outside the coarse grid", "xyz"[a], i);
        goto done;
      }
      if (j == -1 || j == nc) {
        int side = j == nc, face = 2 * a + side;
        int kind = cg->kind[face];
        if (kind == STRATA__MG_PERIODIC)
          j = side ? 0 : nc - 1;
        else {
          j = side ? nc - 1 : 0;
          if (kind == STRATA__MG_LINEAR) w *= cg->alpha[face];
        }
      }
      row_add(&P[i], (int)j, w);
    }
    if (P[i].n > wp) wp = P[i].n;
    for (int q = 0; q < P[i].n; q++) cnt[P[i].idx[q]]++;
  }
  for (long j = 0; j < nc; j++)
    if (cnt[j] > wr) wr = cnt[j];
  if (wr > 8)
    s = strata__fail(ctx, STRATA_EINVAL,
                     "multigrid: internal error: restriction band of %d "
                     "along %c", wr, "xyz"[a]);
done:
  if (s != STRATA_OK) {
    free(P);
    free(cnt);
    return s;
  }
  *Pout = P;
  *cntout = cnt;
  *wpout = wp;
  *wrout = wr;
  return STRATA_OK;
}

/* The bytes of one axis's four tables (axis_tables) for band widths wp
 * and wr. */
static void table_bytes(long n, long nc, int wp, int wr, size_t bytes[4]) {
  bytes[0] = (size_t)(n * wp) * sizeof(int);
  bytes[1] = (size_t)(n * wp) * sizeof(double);
  bytes[2] = (size_t)(nc * wr) * sizeof(int);
  bytes[3] = (size_t)(nc * wr) * sizeof(double);
}

/* Builds the prolongation and restriction tables of one axis in the
 * backend's memory. */
static strata_status axis_tables(strata_mg *mg, mg_level *L, int a,
                                 const mg_axis *f, const mg_axis *c,
                                 double off, double ratio,
                                 const strata__mg_ghost *cg) {
  strata_context *ctx = mg->ctx;
  long n = f->n, nc = c->n;
  row4 *P = NULL;
  int *cnt = NULL, wp = 1, wr = 1;
  int *pidx = NULL, *ridx = NULL;
  double *pwt = NULL, *rwt = NULL;
  strata_status s = axis_rows(ctx, a, f, c, off, ratio, cg, &P, &cnt, &wp,
                              &wr);
  if (s != STRATA_OK) return s;
  pidx = calloc((size_t)(n * wp), sizeof *pidx);
  pwt = calloc((size_t)(n * wp), sizeof *pwt);
  ridx = calloc((size_t)(nc * wr), sizeof *ridx);
  rwt = calloc((size_t)(nc * wr), sizeof *rwt);
  if (!pidx || !pwt || !ridx || !rwt) goto nomem;
  memset(cnt, 0, (size_t)nc * sizeof *cnt);
  for (long i = 0; i < n; i++)
    for (int q = 0; q < P[i].n; q++) {
      int j = P[i].idx[q];
      pidx[i * wp + q] = j;
      pwt[i * wp + q] = P[i].w[q];
      ridx[j * wr + cnt[j]] = (int)i;
      rwt[j * wr + cnt[j]] = P[i].w[q];
      cnt[j]++;
    }
  /* padding: weight 0 on a valid index */
  for (long i = 0; i < n; i++)
    for (int q = P[i].n; q < wp; q++) pidx[i * wp + q] = pidx[i * wp];
  for (long j = 0; j < nc; j++)
    for (int q = cnt[j]; q < wr; q++) ridx[j * wr + q] = ridx[j * wr];
  /* to the backend */
  const void *host[4] = {pidx, pwt, ridx, rwt};
  size_t bytes[4];
  table_bytes(n, nc, wp, wr, bytes);
  void *dev[4] = {NULL, NULL, NULL, NULL};
  for (int q = 0; q < 4; q++) {
    s = ctx->be->alloc(ctx, bytes[q], &dev[q]);
    if (s != STRATA_OK) goto done;
    L->mem[L->nmem++] = dev[q];
    s = ctx->be->from_host(ctx, dev[q], host[q], bytes[q]);
    if (s != STRATA_OK) goto done;
  }
  L->pb[a] = (strata__mg_band){n, wp, dev[0], dev[1]};
  L->rb[a] = (strata__mg_band){nc, wr, dev[2], dev[3]};
  goto done;
nomem:
  s = strata__fail(ctx, STRATA_ENOMEM,
                   "multigrid: out of host memory building the transfer "
                   "tables");
done:
  free(P);
  free(cnt);
  free(pidx);
  free(pwt);
  free(ridx);
  free(rwt);
  return s;
}

/* The trivial band of an unused axis. */
static strata_status unit_band(strata_mg *mg, mg_level *L, int a) {
  strata_context *ctx = mg->ctx;
  const int one = 0;
  const double w = 1;
  void *di = NULL, *dw = NULL;
  strata_status s = ctx->be->alloc(ctx, sizeof one, &di);
  if (s != STRATA_OK) return s;
  L->mem[L->nmem++] = di;
  s = ctx->be->alloc(ctx, sizeof w, &dw);
  if (s != STRATA_OK) return s;
  L->mem[L->nmem++] = dw;
  s = ctx->be->from_host(ctx, di, &one, sizeof one);
  if (s == STRATA_OK) s = ctx->be->from_host(ctx, dw, &w, sizeof w);
  L->pb[a] = L->rb[a] = (strata__mg_band){1, 1, di, dw};
  return s;
}

/* ---- lifecycle ------------------------------------------------------------ */

void strata_mg_destroy(strata_mg **pmg) {
  if (!pmg || !*pmg) return;
  strata_mg *mg = *pmg;
  strata__mgfv_destroy(mg->ctx, mg->fv);
  for (int l = 0; l < MG_MAX_LEVELS; l++) {
    mg_level *L = &mg->lev[l];
    if (l > 0) strata_field_destroy(&L->x[0]);
    strata_field_destroy(&L->x[1]);
    strata_field_destroy(&L->b);
    for (int q = 0; q < L->nmem; q++) mg->ctx->be->release(mg->ctx, L->mem[q]);
  }
  free(mg->hist);
  free(mg);
  *pmg = NULL;
}

strata_status strata__mg_check_options(strata_context *ctx,
                                       const strata_mg_options *o) {
  if (o->dims != 2 && o->dims != 3)
    return strata__fail_arg(ctx, STRATA_EINVAL, "dims", o->dims,
                            "multigrid: dims is %d; it must be 2 or 3",
                            o->dims);
  char nm[STRATA__ARGNAME_SIZE];
  for (int a = 0; a < 3; a++) {
    strata__idx(nm, "n", a);
    if (a < o->dims && o->n[a] < 1)
      return strata__fail_arg(ctx, STRATA_EINVAL, nm, o->n[a],
                              "multigrid: n[%d] is 0; it must be at least 1",
                              a);
    if (a >= o->dims && o->n[a] != 1)
      return strata__fail_arg(ctx, STRATA_EINVAL, nm, o->n[a],
                              "multigrid: n[%d] is %zu; it must be 1 in %dD",
                              a, o->n[a], o->dims);
    if (o->n[a] > ((size_t)1 << 31))
      return strata__fail_arg(ctx, STRATA_EOVERFLOW, nm, o->n[a],
                              "multigrid: n[%d] is %zu; at most 2^31 points "
                              "per axis", a, o->n[a]);
  }
  if (o->precision != STRATA_F32 && o->precision != STRATA_F64)
    return strata__fail_arg(ctx, STRATA_EINVAL, "precision",
                            (int)o->precision,
                            "multigrid: precision is %d; it must be "
                            "STRATA_F32 or STRATA_F64", (int)o->precision);
  if (!(o->h > 0) || !isfinite(o->h))
    return strata__fail_arg(ctx, STRATA_EINVAL, "h", o->h,
                            "multigrid: spacing h is %g; it must be positive "
                            "and finite", o->h);
  if (o->disc != STRATA_MG_FD && o->disc != STRATA_MG_FE &&
      o->disc != STRATA_MG_FV)
    return strata__fail_arg(ctx, STRATA_EINVAL, "disc", (int)o->disc,
                            "multigrid: unknown discretisation %d",
                            (int)o->disc);
  if (o->disc != STRATA_MG_FV && o->smoother != STRATA_MG_SMOOTHER_DEFAULT &&
      o->smoother != STRATA_MG_JACOBI)
    return strata__fail_arg(ctx, STRATA_EINVAL, "smoother", (int)o->smoother,
                            "multigrid: the FD and FE stencils take the "
                            "Jacobi smoother only (Chebyshev and GSRB: disc "
                            "= STRATA_MG_FV)");
  if (o->disc != STRATA_MG_FV && o->graph)
    return strata__fail_arg(ctx, STRATA_EINVAL, "graph", o->graph,
                            "multigrid: graph = 1 is for disc = "
                            "STRATA_MG_FV");
  if (o->disc != STRATA_MG_FV && o->bottom != STRATA_MG_BOTTOM_DEFAULT &&
      o->bottom != STRATA_MG_BOTTOM_SMOOTH)
    return strata__fail_arg(ctx, STRATA_EINVAL, "bottom", (int)o->bottom,
                            "multigrid: the FD and FE stencils take the "
                            "smoothing bottom solve only (CG: disc = "
                            "STRATA_MG_FV)");
  if (o->cycle != STRATA_MG_V && o->cycle != STRATA_MG_F &&
      o->cycle != STRATA_MG_W)
    return strata__fail_arg(ctx, STRATA_EINVAL, "cycle", (int)o->cycle,
                            "multigrid: unknown cycle %d", (int)o->cycle);
  const char *const sweep_names[3] = {"pre_fine", "pre", "post"};
  const int sweeps[3] = {o->pre_fine, o->pre, o->post};
  for (int k = 0; k < 3; k++)
    if (sweeps[k] < 0 || sweeps[k] > 64)
      return strata__fail_arg(ctx, STRATA_EINVAL, sweep_names[k], sweeps[k],
                              "multigrid: smoothing counts (pre_fine %d, pre "
                              "%d, post %d) must be 0..64", o->pre_fine,
                              o->pre, o->post);
  if (o->pre + o->post < 1 || o->pre_fine + o->post < 1)
    /* post smooths on every level, so it is the one to raise */
    return strata__fail_arg(ctx, STRATA_EINVAL, "post", o->post,
                            "multigrid: every level needs at least one "
                            "smoothing sweep (pre_fine %d, pre %d, post %d)",
                            o->pre_fine, o->pre, o->post);
  if (o->max_cycles < 0 || o->max_cycles > 100000)
    return strata__fail_arg(ctx, STRATA_EINVAL, "max_cycles", o->max_cycles,
                            "multigrid: max_cycles is %d; it must be "
                            "0..100000", o->max_cycles);
  if (!isfinite(o->rtol) || o->rtol >= 1 || !isfinite(o->atol) ||
      o->atol < 0)
    return strata__fail_arg(ctx, STRATA_EINVAL,
                            !isfinite(o->rtol) || o->rtol >= 1 ? "rtol"
                                                               : "atol",
                            !isfinite(o->rtol) || o->rtol >= 1 ? o->rtol
                                                               : o->atol,
                            "multigrid: rtol %g must be < 1 (negative: the "
                            "default) and atol %g >= 0", o->rtol, o->atol);
  if (o->max_levels < 0 || o->max_levels > MG_MAX_LEVELS)
    return strata__fail_arg(ctx, STRATA_EINVAL, "max_levels", o->max_levels,
                            "multigrid: max_levels is %d; it must be 0..%d",
                            o->max_levels, MG_MAX_LEVELS);
  if (o->coarse_max_sweeps < 1 || o->coarse_max_sweeps > 10000000)
    return strata__fail_arg(ctx, STRATA_EINVAL, "coarse_max_sweeps",
                            o->coarse_max_sweeps,
                            "multigrid: coarse_max_sweeps is %d; it must be "
                            "1..10^7", o->coarse_max_sweeps);
  if (!(o->coarse_rtol > 0 && o->coarse_rtol < 1))
    return strata__fail_arg(ctx, STRATA_EINVAL, "coarse_rtol",
                            o->coarse_rtol,
                            "multigrid: coarse_rtol is %g; it must be in "
                            "(0, 1)", o->coarse_rtol);
  for (int a = 0; a < o->dims; a++) {
    int p0 = o->bc.kind[2 * a] == STRATA_BC_PERIODIC,
        p1 = o->bc.kind[2 * a + 1] == STRATA_BC_PERIODIC;
    for (int s = 0; s < 2; s++) {
      strata_bc_kind k = o->bc.kind[2 * a + s];
      if (k != STRATA_BC_DIRICHLET && k != STRATA_BC_NEUMANN &&
          k != STRATA_BC_PERIODIC)
        return strata__fail_arg(ctx, STRATA_EINVAL,
                                strata__idx(nm, "bc.kind", 2 * a + s), (int)k,
                                "multigrid: face %s has boundary kind %d; it "
                                "must be Dirichlet, Neumann or periodic",
                                face_names[2 * a + s], (int)k);
      if (k == STRATA_BC_DIRICHLET && !isfinite(o->bc.value[2 * a + s]))
        return strata__fail_arg(ctx, STRATA_EINVAL,
                                strata__idx(nm, "bc.value", 2 * a + s),
                                o->bc.value[2 * a + s],
                                "multigrid: Dirichlet value on face %s is not "
                                "finite", face_names[2 * a + s]);
    }
    if (p0 != p1) {
      int f = p0 ? 2 * a + 1 : 2 * a; /* the one that is not periodic */
      return strata__fail_arg(ctx, STRATA_EINVAL,
                              strata__idx(nm, "bc.kind", f),
                              (int)o->bc.kind[f],
                              "multigrid: face %s is periodic but %s is not: "
                              "both faces of an axis must be periodic",
                              face_names[p0 ? 2 * a : 2 * a + 1],
                              face_names[p0 ? 2 * a + 1 : 2 * a]);
    }
  }
  return STRATA_OK;
}

/* The options checked as create checks them, and resolved: omega and
 * rtol set, the stencil and its scale, the symbol's maximum. */
static strata_status resolve(strata_context *ctx, strata_mg_options *opt,
                             strata__mg_op *op, double *sigma, double *mx) {
  strata_status s = strata__mg_check_options(ctx, opt);
  if (s != STRATA_OK) return s;
  if (opt->dist && strata_dist_size(opt->dist) > 1)
    return strata__fail_arg(ctx, STRATA_EINVAL, "disc", (int)opt->disc,
                              "multigrid: the %s stencil runs in one process; "
                              "over several ranks use the finite-volume "
                              "discretisation (disc = STRATA_MG_FV)",
                              opt->disc == STRATA_MG_FD ? "FD" : "FE");
  const strata__backend *be = ctx->be;
  if (!be->mg_sweep || !be->mg_transfer || !be->mg_axpby || !be->mg_ghosts)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "multigrid: the %s backend has no multigrid kernels",
                        be->name);
  double lo, hi;
  stencil_of(opt->dims, opt->disc, op, sigma);
  symbol_range(op, &lo, &hi, mx);
  double wmax = 2 * op->c[0] / *mx;
  if (opt->omega == 0)
    opt->omega = 2 * op->c[0] / (lo + hi);
  else if (!(opt->omega > 0 && opt->omega < wmax))
    return strata__fail_arg(ctx, STRATA_EINVAL, "omega", opt->omega,
                            "multigrid: Jacobi weight omega %s is outside "
                            "(0, %s), where the sweep is stable for this "
                            "stencil", strata__vs(opt->omega, wmax).v,
                            strata__vs(opt->omega, wmax).lim);
  if (opt->rtol < 0) opt->rtol = opt->precision == STRATA_F32 ? 1e-5 : 1e-10;
  strata_field_desc d = {opt->dims, {opt->n[0], opt->n[1], opt->n[2]}, 1,
                         opt->precision};
  size_t bytes;
  s = strata_field_bytes(&d, &bytes);
  char v[96];
  snprintf(v, sizeof v, "%zu, %zu, %zu", opt->n[0], opt->n[1], opt->n[2]);
  if (s != STRATA_OK)
    return strata__fail_arg(ctx, s, "n", v,
                            "multigrid: the grid %zu x %zu x %zu is too "
                            "large", opt->n[0], opt->n[1], opt->n[2]);
  return STRATA_OK;
}

/* The level hierarchy of opt: lev[0 .. *nlev - 1]'s axes, offsets,
 * spacing ratios and coarse ghost rules (no fields or tables). */
static void hierarchy(const strata_mg_options *opt, mg_level *lev,
                      int *nlev) {
  mg_level *L0 = &lev[0];
  for (int a = 0; a < 3; a++) {
    mg_axis *x = &L0->ax[a];
    x->n = (long)opt->n[a];
    for (int sd = 0; sd < 2; sd++) {
      strata_bc_kind k = a < opt->dims ? opt->bc.kind[2 * a + sd]
                                       : STRATA_BC_DIRICHLET;
      x->kind[sd] = k == STRATA_BC_PERIODIC  ? AX_P
                    : k == STRATA_BC_NEUMANN ? AX_N
                                             : AX_D;
      x->d[sd] = x->kind[sd] == AX_N ? 0.5 : 1.0;
    }
  }
  L0->exact = 1;
  *nlev = 1;
  int maxl = opt->max_levels ? opt->max_levels : MG_MAX_LEVELS;
  while (*nlev < maxl) {
    mg_level *F = &lev[*nlev - 1], *C = &lev[*nlev];
    int ok = 1, exact = F->exact;
    for (int a = 0; a < opt->dims; a++)
      if (F->ax[a].n < 3) ok = 0;
    if (!ok) break;
    for (int a = 0; a < 3 && ok; a++) {
      int ex = 1;
      if (a >= opt->dims) {
        C->ax[a] = F->ax[a];
        C->offset[a] = 0;
        C->ratio[a] = 1;
        continue;
      }
      ok = coarsen_axis(&F->ax[a], &C->ax[a], &C->offset[a], &C->ratio[a],
                        &ex);
      exact = exact && ex;
    }
    if (!ok) break;
    C->exact = exact;
    for (int a = 0; a < 3; a++)
      for (int sd = 0; sd < 2; sd++) {
        int face = 2 * a + sd, k = C->ax[a].kind[sd];
        double d = C->ax[a].d[sd];
        C->ghost.kind[face] = k == AX_P   ? STRATA__MG_PERIODIC
                              : k == AX_N ? STRATA__MG_MIRROR
                                          : STRATA__MG_LINEAR;
        C->ghost.alpha[face] = k == AX_D ? (d - 1) / d : 0;
      }
    (*nlev)++;
  }
}

/* A level's field description. */
static strata_field_desc level_desc(const strata_mg_options *opt,
                                    const mg_level *L) {
  strata_field_desc d = {opt->dims,
                         {(size_t)L->ax[0].n, (size_t)L->ax[1].n,
                          (size_t)L->ax[2].n},
                         1,
                         opt->precision};
  return d;
}

/* Everything create checks, and what it will allocate, without
 * allocating: *opt resolved, the hierarchy in lev. */
static strata_status prepare(strata_context *ctx, const strata_mg_options *o,
                             strata_mg_options *opt, strata__mg_op *op,
                             double *sigma, double *mx, mg_level *lev,
                             int *nlev, strata__footprint *fp) {
  if (o)
    *opt = *o;
  else
    strata_mg_options_init(opt);
  strata_status s = resolve(ctx, opt, op, sigma, mx);
  if (s != STRATA_OK) return s;
  memset(lev, 0, MG_MAX_LEVELS * sizeof *lev);
  hierarchy(opt, lev, nlev);
  memset(fp, 0, sizeof *fp);
  strata__fp_host(fp, sizeof(strata_mg) +
                          ((size_t)opt->max_cycles + 2) * sizeof(double));
  for (int l = 0; l < *nlev && s == STRATA_OK; l++) {
    strata_field_desc d = level_desc(opt, &lev[l]);
    for (int k = l > 0 ? 3 : 1; k > 0 && s == STRATA_OK; k--)
      s = strata__fp_field(ctx, fp, &d);
    if (s != STRATA_OK || l == *nlev - 1) continue;
    const mg_level *L = &lev[l], *C = &lev[l + 1];
    for (int a = 0; a < 3 && s == STRATA_OK; a++) {
      if (a >= opt->dims) {
        strata__fp_device(fp, sizeof(int) + sizeof(double)); /* unit_band */
        continue;
      }
      row4 *P = NULL;
      int *cnt = NULL, wp = 1, wr = 1;
      s = axis_rows(ctx, a, &L->ax[a], &C->ax[a], C->offset[a], C->ratio[a],
                    &C->ghost, &P, &cnt, &wp, &wr);
      free(P);
      free(cnt);
      size_t bytes[4];
      table_bytes(L->ax[a].n, C->ax[a].n, wp, wr, bytes);
      for (int q = 0; s == STRATA_OK && q < 4; q++)
        strata__fp_device(fp, bytes[q]);
    }
  }
  return s;
}

strata_status strata__mg_footprint(strata_context *ctx,
                                   const strata_mg_options *o,
                                   strata__footprint *fp) {
  if (o && o->disc == STRATA_MG_FV) return strata__mgfv_footprint(ctx, o, fp);
  strata_mg_options opt;
  strata__mg_op op;
  double sigma, mx;
  int nlev = 0;
  mg_level *lev = calloc(MG_MAX_LEVELS, sizeof *lev);
  if (!lev)
    return strata__fail(ctx, STRATA_ENOMEM, "multigrid: out of host memory");
  strata_status s = prepare(ctx, o, &opt, &op, &sigma, &mx, lev, &nlev, fp);
  free(lev);
  return s;
}

strata_status strata_mg_create(strata_context *ctx, const strata_mg_options *o,
                               strata_mg **out) {
  if (!ctx) return STRATA_EINVAL;
  if (!out)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "out", out,
                              "multigrid: output pointer is NULL");
  *out = NULL;
  if (o && o->disc == STRATA_MG_FV) return strata__mgfv_create(ctx, o, out);
  strata_mg *mg = calloc(1, sizeof *mg);
  if (!mg)
    return strata__fail(ctx, STRATA_ENOMEM, "multigrid: out of host memory");
  strata_mg_options opt;
  strata__mg_op op;
  double sigma, mx;
  strata__footprint fp;
  strata_status s = prepare(ctx, o, &opt, &op, &sigma, &mx, mg->lev,
                            &mg->nlev, &fp);
  if (s == STRATA_OK) s = strata__fp_check(ctx, "multigrid", &fp);
  if (s != STRATA_OK) {
    free(mg);
    return s;
  }
  mg->ctx = ctx;
  mg->o = opt;
  mg->op = op;
  mg->sigma = sigma;
  mg->bscale = sigma * opt.h * opt.h;
  mg->omega = opt.omega;
  mg->jw = opt.omega / op.c[0];
  mg->lmax = mx;
  mg->hist = calloc((size_t)opt.max_cycles + 2, sizeof *mg->hist);
  if (!mg->hist) {
    free(mg);
    return strata__fail(ctx, STRATA_ENOMEM, "multigrid: out of host memory");
  }
  mg->singular = 1;
  for (int f = 0; f < 2 * opt.dims; f++)
    if (opt.bc.kind[f] == STRATA_BC_DIRICHLET) mg->singular = 0;

  /* fields and tables */
  for (int l = 0; l < mg->nlev && s == STRATA_OK; l++) {
    mg_level *L = &mg->lev[l];
    strata_field_desc d = level_desc(&opt, L);
    if (l > 0) {
      s = strata_field_create(ctx, &d, &L->x[0]);
      if (s == STRATA_OK) s = strata_field_create(ctx, &d, &L->b);
    }
    if (s == STRATA_OK) s = strata_field_create(ctx, &d, &L->x[1]);
    if (s != STRATA_OK || l == mg->nlev - 1) continue;
    mg_level *C = &mg->lev[l + 1];
    for (int a = 0; a < 3 && s == STRATA_OK; a++)
      s = a < opt.dims ? axis_tables(mg, L, a, &L->ax[a], &C->ax[a],
                                     C->offset[a], C->ratio[a], &C->ghost)
                       : unit_band(mg, L, a);
  }
  if (s != STRATA_OK) {
    strata_mg_destroy(&mg);
    return s;
  }
  *out = mg;
  return STRATA_OK;
}
