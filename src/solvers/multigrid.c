/* Geometric multigrid for the Poisson equation.
 *
 * Written once against the backend: the per-level work is the backend's
 * mg_sweep (weighted Jacobi, the residual and its norm in one pass),
 * mg_transfer (restriction and prolongation-and-correct as separable
 * banded stencils), mg_axpby and mg_ghosts, plus fill_ghosts on the finest
 * level.  Nothing is staged through the host per cycle: the only host
 * traffic is one residual norm (a double) per cycle and a few per
 * coarsest solve.
 *
 * Grids (docs/multigrid.md has the full story).  Along each axis a level
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
#include "../core/internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MG_MAX_LEVELS 24
#define MG_PI 3.14159265358979323846

enum { AX_D = 0, AX_N = 1, AX_P = 2 };

typedef struct mg_axis {
  long n;
  int kind[2];  /* AX_* of the low and high face */
  double d[2];  /* face distances, in the level's spacing */
} mg_axis;

typedef struct mg_level {
  mg_axis ax[3];
  strata_field *x[2]; /* iterate and scratch (ping-pong); finest: x[0] is
                         the user's phi during a solve */
  strata_field *b;    /* right-hand side (NULL on the finest: psi) */
  int cur;            /* x[cur] holds the iterate */
  strata__mg_ghost ghost;
  double offset[3];   /* point 0 in the finer level's index space */
  double ratio[3];    /* spacing in the finer level's spacings (2, or
                         just under 2 on approximate axes) */
  int exact;
  /* transfers between this level and the next coarser one */
  strata__mg_band rb[3], pb[3];
  void *mem[12];
  int nmem;
  long sweeps;
  double seconds;
} mg_level;

struct strata_mg {
  strata_context *ctx;
  strata_mg_options o;
  strata__mg_op op;
  double sigma, bscale, omega, jw; /* jw = omega / C0 */
  double lmax;                     /* largest eigenvalue of the symbol */
  int singular;                    /* no Dirichlet face */
  int nlev;
  mg_level lev[MG_MAX_LEVELS];
  double *hist;
  /* solve state */
  const strata_field *psi;
  double bshift;
  int prof_level;
  double prof_t;
};

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

/* Builds the prolongation rows of one axis (fine point i <- coarse
 * points, the coarse ghost rule folded in) and their transpose. */
static strata_status axis_tables(strata_mg *mg, mg_level *L, int a,
                                 const mg_axis *f, const mg_axis *c,
                                 double off, double ratio,
                                 const strata__mg_ghost *cg) {
  strata_context *ctx = mg->ctx;
  long n = f->n, nc = c->n;
  row4 *P = calloc((size_t)n, sizeof *P);
  int *cnt = calloc((size_t)nc, sizeof *cnt);
  strata_status s = STRATA_OK;
  int *pidx = NULL, *ridx = NULL;
  double *pwt = NULL, *rwt = NULL;
  if (!P || !cnt) goto nomem;
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
  if (wr > 8) {
    s = strata__fail(ctx, STRATA_EINVAL,
                     "multigrid: internal error: restriction band of %d "
                     "along %c", wr, "xyz"[a]);
    goto done;
  }
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
  size_t bytes[4] = {(size_t)(n * wp) * sizeof(int),
                     (size_t)(n * wp) * sizeof(double),
                     (size_t)(nc * wr) * sizeof(int),
                     (size_t)(nc * wr) * sizeof(double)};
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

static strata_status check_options(strata_context *ctx,
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
  if (o->disc != STRATA_MG_FD && o->disc != STRATA_MG_FE)
    return strata__fail_arg(ctx, STRATA_EINVAL, "disc", (int)o->disc,
                            "multigrid: unknown discretisation %d",
                            (int)o->disc);
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

static strata_status make_field(strata_mg *mg, const long n[3], int ghost,
                                strata_field **f) {
  strata_field_desc d = {mg->o.dims,
                         {(size_t)n[0], (size_t)n[1], (size_t)n[2]},
                         ghost,
                         mg->o.precision};
  return strata_field_create(mg->ctx, &d, f);
}

strata_status strata_mg_create(strata_context *ctx, const strata_mg_options *o,
                               strata_mg **out) {
  if (!ctx) return STRATA_EINVAL;
  if (!out)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "out", out,
                              "multigrid: output pointer is NULL");
  *out = NULL;
  strata_mg_options opt;
  if (o)
    opt = *o;
  else
    strata_mg_options_init(&opt);
  strata_status s = check_options(ctx, &opt);
  if (s != STRATA_OK) return s;
  const strata__backend *be = ctx->be;
  if (!be->mg_sweep || !be->mg_transfer || !be->mg_axpby || !be->mg_ghosts)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "multigrid: the %s backend has no multigrid kernels",
                        be->name);
  strata__mg_op op;
  double sigma, lo, hi, mx;
  stencil_of(opt.dims, opt.disc, &op, &sigma);
  symbol_range(&op, &lo, &hi, &mx);
  double wmax = 2 * op.c[0] / mx;
  if (opt.omega == 0)
    opt.omega = 2 * op.c[0] / (lo + hi);
  else if (!(opt.omega > 0 && opt.omega < wmax))
    return strata__fail_arg(ctx, STRATA_EINVAL, "omega", opt.omega,
                            "multigrid: Jacobi weight omega %g is outside "
                            "(0, %g), where the sweep is stable for this "
                            "stencil", opt.omega, wmax);
  if (opt.rtol < 0) opt.rtol = opt.precision == STRATA_F32 ? 1e-5 : 1e-10;
  {
    strata_field_desc d = {opt.dims, {opt.n[0], opt.n[1], opt.n[2]}, 1,
                           opt.precision};
    size_t bytes;
    s = strata_field_bytes(&d, &bytes);
    char v[96];
    snprintf(v, sizeof v, "%zu, %zu, %zu", opt.n[0], opt.n[1], opt.n[2]);
    if (s != STRATA_OK)
      return strata__fail_arg(ctx, s, "n", v,
                              "multigrid: the grid %zu x %zu x %zu is too "
                              "large", opt.n[0], opt.n[1], opt.n[2]);
  }

  strata_mg *mg = calloc(1, sizeof *mg);
  if (!mg)
    return strata__fail(ctx, STRATA_ENOMEM, "multigrid: out of host memory");
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

  /* the finest level */
  mg_level *L0 = &mg->lev[0];
  for (int a = 0; a < 3; a++) {
    mg_axis *x = &L0->ax[a];
    x->n = (long)opt.n[a];
    for (int sd = 0; sd < 2; sd++) {
      strata_bc_kind k = a < opt.dims ? opt.bc.kind[2 * a + sd]
                                      : STRATA_BC_DIRICHLET;
      x->kind[sd] = k == STRATA_BC_PERIODIC  ? AX_P
                    : k == STRATA_BC_NEUMANN ? AX_N
                                             : AX_D;
      x->d[sd] = x->kind[sd] == AX_N ? 0.5 : 1.0;
    }
  }
  L0->exact = 1;
  mg->nlev = 1;
  int maxl = opt.max_levels ? opt.max_levels : MG_MAX_LEVELS;
  while (mg->nlev < maxl) {
    mg_level *F = &mg->lev[mg->nlev - 1], *C = &mg->lev[mg->nlev];
    int ok = 1, exact = F->exact;
    for (int a = 0; a < opt.dims; a++)
      if (F->ax[a].n < 3) ok = 0;
    if (!ok) break;
    for (int a = 0; a < 3 && ok; a++) {
      int ex = 1;
      if (a >= opt.dims) {
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
    mg->nlev++;
  }

  /* fields and tables */
  for (int l = 0; l < mg->nlev && s == STRATA_OK; l++) {
    mg_level *L = &mg->lev[l];
    long n[3] = {L->ax[0].n, L->ax[1].n, L->ax[2].n};
    if (l > 0) {
      s = make_field(mg, n, 1, &L->x[0]);
      if (s == STRATA_OK) s = make_field(mg, n, 1, &L->b);
    }
    if (s == STRATA_OK) s = make_field(mg, n, 1, &L->x[1]);
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

int strata_mg_levels(const strata_mg *mg) { return mg ? mg->nlev : 0; }

strata_status strata_mg_get_level(const strata_mg *mg, int level,
                                  strata_mg_level_info *info) {
  if (!mg) return STRATA_EINVAL;
  if (!info)
    return strata__fail_arg_p(mg->ctx, STRATA_EINVAL, "info", info,
                              "multigrid: info is NULL");
  if (level < 0 || level >= mg->nlev)
    return strata__fail_arg(mg->ctx, STRATA_EINVAL, "level", level,
                            "multigrid: level %d does not exist (0..%d)",
                            level, mg->nlev - 1);
  const mg_level *L = &mg->lev[level];
  memset(info, 0, sizeof *info);
  for (int a = 0; a < 3; a++) {
    info->n[a] = (size_t)L->ax[a].n;
    info->offset[a] = L->offset[a];
    info->face[2 * a] = L->ax[a].d[0];
    info->face[2 * a + 1] = L->ax[a].d[1];
  }
  info->h = ldexp(mg->o.h, level);
  info->exact = L->exact;
  info->sweeps = L->sweeps;
  info->seconds = L->seconds;
  return STRATA_OK;
}

strata_status strata_mg_get_options(const strata_mg *mg,
                                    strata_mg_options *o) {
  if (!mg) return STRATA_EINVAL;
  if (!o)
    return strata__fail_arg_p(mg->ctx, STRATA_EINVAL, "o", o,
                              "multigrid: options pointer is NULL");
  *o = mg->o;
  return STRATA_OK;
}

/* ---- the cycle ------------------------------------------------------------ */

#define TRY(x)                                                                 \
  do {                                                                         \
    strata_status s_ = (x);                                                    \
    if (s_ != STRATA_OK) return s_;                                            \
  } while (0)

/* Profiling: attributes the time since the last mark to the level that
 * was working, then switches to level l. */
static strata_status mark(strata_mg *mg, int l) {
  if (!mg->o.profile) return STRATA_OK;
  TRY(strata_context_sync(mg->ctx));
  double t = strata__now();
  mg->lev[mg->prof_level].seconds += t - mg->prof_t;
  mg->prof_t = t;
  mg->prof_level = l;
  return STRATA_OK;
}

static const strata_field *rhs(const strata_mg *mg, int l) {
  return l == 0 ? mg->psi : mg->lev[l].b;
}

static strata_status fill(strata_mg *mg, int l, strata_field *f) {
  if (l == 0) return mg->ctx->be->fill_ghosts(f, &mg->o.bc);
  return mg->ctx->be->mg_ghosts(f, &mg->lev[l].ghost);
}

/* res = bscale (b + bshift) - S src;  dst = cu src + cr res. */
static strata_status sweep(strata_mg *mg, int l, const strata_field *src,
                           strata_field *dst, double cu, double cr,
                           double *res2) {
  strata__mg_sweep_args a = {mg->op, src, rhs(mg, l), dst,
                             l == 0 ? mg->bscale : 1.0,
                             l == 0 ? mg->bshift : 0.0, cu, cr, res2};
  return mg->ctx->be->mg_sweep(&a);
}

/* count Jacobi sweeps on level l; zero: the iterate is 0 (not stored). */
static strata_status smooth(strata_mg *mg, int l, int count, int zero) {
  mg_level *L = &mg->lev[l];
  if (zero && count == 0)
    return mg->ctx->be->mg_axpby(L->x[L->cur], NULL, 0, 0, 0, NULL);
  for (int q = 0; q < count; q++) {
    strata_field *src = L->x[L->cur], *dst = L->x[1 - L->cur];
    if (zero && q == 0)
      /* from 0 the sweep is jw * b (coarse levels: bshift 0) */
      TRY(mg->ctx->be->mg_axpby(dst, rhs(mg, l),
                                mg->jw * (l == 0 ? mg->bscale : 1.0), 0, 0,
                                NULL));
    else {
      TRY(fill(mg, l, src));
      TRY(sweep(mg, l, src, dst, 1.0, mg->jw, NULL));
    }
    L->cur ^= 1;
    L->sweeps++;
  }
  return STRATA_OK;
}

/* The coarsest level: Jacobi until the residual fell by coarse_rtol,
 * checking after 1, 2, 4, 8, 8, ... sweeps. */
static strata_status coarse_solve(strata_mg *mg, int l, int zero) {
  mg_level *L = &mg->lev[l];
  if (zero) TRY(mg->ctx->be->mg_axpby(L->x[L->cur], NULL, 0, 0, 0, NULL));
  double r0 = -1;
  int done = 0, gap = 1;
  while (done < mg->o.coarse_max_sweeps) {
    double r2 = 0;
    for (int q = 0; q < gap && done < mg->o.coarse_max_sweeps; q++) {
      strata_field *src = L->x[L->cur], *dst = L->x[1 - L->cur];
      TRY(fill(mg, l, src));
      TRY(sweep(mg, l, src, dst, 1.0, mg->jw, q == 0 ? &r2 : NULL));
      L->cur ^= 1;
      L->sweeps++;
      done++;
    }
    double r = sqrt(r2);
    if (r0 < 0) r0 = r;
    if (!(r > mg->o.coarse_rtol * r0)) break; /* NaN stops too */
    if (gap < 8) gap *= 2;
  }
  return STRATA_OK;
}

static strata_status cycle(strata_mg *mg, int l, strata_mg_cycle type,
                           int zero);

/* The coarse-grid correction of level l: residual, restriction, the
 * coarse cycle(s), prolongation-and-correct. */
static strata_status descend(strata_mg *mg, int l, strata_mg_cycle type) {
  mg_level *L = &mg->lev[l], *C = &mg->lev[l + 1];
  strata_field *u = L->x[L->cur], *r = L->x[1 - L->cur];
  TRY(fill(mg, l, u));
  TRY(sweep(mg, l, u, r, 0.0, 1.0, NULL));
  strata__mg_transfer_args t = {r, C->b, NULL, 0.0,
                                4.0 / (1 << mg->o.dims),
                                {L->rb[0], L->rb[1], L->rb[2]}};
  TRY(mg->ctx->be->mg_transfer(&t));
  TRY(mark(mg, l + 1));
  if (l + 1 == mg->nlev - 1)
    TRY(coarse_solve(mg, l + 1, 1));
  else {
    TRY(cycle(mg, l + 1, type, 1));
    if (type == STRATA_MG_W) TRY(cycle(mg, l + 1, STRATA_MG_W, 0));
    if (type == STRATA_MG_F) TRY(cycle(mg, l + 1, STRATA_MG_V, 0));
  }
  TRY(mark(mg, l));
  strata__mg_transfer_args p = {C->x[C->cur], u, u, 1.0, 1.0,
                                {L->pb[0], L->pb[1], L->pb[2]}};
  return mg->ctx->be->mg_transfer(&p);
}

/* One cycle on a coarse level l >= 1 from the iterate (or 0). */
static strata_status cycle(strata_mg *mg, int l, strata_mg_cycle type,
                           int zero) {
  if (l == mg->nlev - 1) return coarse_solve(mg, l, zero);
  TRY(smooth(mg, l, mg->o.pre, zero));
  TRY(descend(mg, l, type));
  return smooth(mg, l, mg->o.post, 0);
}

/* Full multigrid for the correction of the initial guess: the residual r
 * (in the finest scratch) is restricted to every level, the coarsest
 * correction solved, and each level's correction interpolated from the
 * coarser one and improved by one V-cycle; then phi += P e. */
static strata_status fmg(strata_mg *mg) {
  int top = mg->nlev - 1;
  double scale = 4.0 / (1 << mg->o.dims);
  for (int l = 0; l < top; l++) {
    mg_level *L = &mg->lev[l];
    const strata_field *in = l == 0 ? L->x[1 - L->cur] : L->b;
    strata__mg_transfer_args t = {in, mg->lev[l + 1].b, NULL, 0.0, scale,
                                  {L->rb[0], L->rb[1], L->rb[2]}};
    TRY(mg->ctx->be->mg_transfer(&t));
  }
  TRY(mark(mg, top));
  TRY(coarse_solve(mg, top, 1));
  for (int l = top - 1; l >= 0; l--) {
    mg_level *L = &mg->lev[l], *C = &mg->lev[l + 1];
    TRY(mark(mg, l));
    strata_field *u = L->x[L->cur];
    strata__mg_transfer_args p = {C->x[C->cur], u, u, l == 0 ? 1.0 : 0.0,
                                  1.0, {L->pb[0], L->pb[1], L->pb[2]}};
    TRY(mg->ctx->be->mg_transfer(&p));
    if (l > 0) TRY(cycle(mg, l, STRATA_MG_V, 0));
  }
  return STRATA_OK;
}

/* ---- solve ------------------------------------------------------------------ */

static strata_status check_field(strata_mg *mg, const strata_field *f,
                                 const char *name) {
  strata_context *ctx = mg->ctx;
  if (!f)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, name, f,
                              "multigrid: %s is NULL", name);
  if (f->ctx != ctx)
    return strata__fail_arg_s(ctx, STRATA_EINVAL, name, "set",
                              "multigrid: %s belongs to another context",
                              name);
  if (f->d.precision != mg->o.precision)
    return strata__fail_arg(ctx, STRATA_EPRECISION, name,
                        (int)f->d.precision,
                        "multigrid: %s has %d-byte values, the solver %d-byte",
                        name, (int)f->d.precision, (int)mg->o.precision);
  if (f->d.dims != mg->o.dims || f->d.n[0] != mg->o.n[0] ||
      f->d.n[1] != mg->o.n[1] || f->d.n[2] != mg->o.n[2])
    return strata__fail_arg_s(ctx, STRATA_ESHAPE, name, "set",
                        "multigrid: %s is %dD %zu x %zu x %zu, the solver "
                        "%dD %zu x %zu x %zu", name, f->d.dims, f->d.n[0],
                        f->d.n[1], f->d.n[2], mg->o.dims, mg->o.n[0],
                        mg->o.n[1], mg->o.n[2]);
  return STRATA_OK;
}

static double eps_of(strata_precision p) {
  return p == STRATA_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
}

strata_status strata_mg_solve(strata_mg *mg, strata_field *phi,
                              const strata_field *psi, strata_mg_result *res) {
  if (!mg) return STRATA_EINVAL;
  strata_context *ctx = mg->ctx;
  TRY(check_field(mg, phi, "phi"));
  TRY(check_field(mg, psi, "psi"));
  if (phi == psi)
    return strata__fail_arg_s(ctx, STRATA_EINVAL, "psi", "set",
                              "multigrid: phi and psi are the same field");
  const double npts =
      (double)mg->o.n[0] * (double)mg->o.n[1] * (double)mg->o.n[2];
  double t0 = strata__now();

  /* a problem without Dirichlet faces needs a source of zero mean */
  mg->bshift = 0;
  if (mg->singular) {
    double sum, rms;
    TRY(strata_field_norm(psi, STRATA_NORM_SUM, &sum));
    TRY(strata_field_norm(psi, STRATA_NORM_RMS, &rms));
    double mean = sum / npts;
    if (!isfinite(mean))
      return strata__fail_arg(ctx, STRATA_EINVAL, "psi", mean,
                              "multigrid: psi is not finite");
    if (fabs(mean) > 32 * eps_of(mg->o.precision) * rms && !mg->o.project)
      return strata__fail_arg(ctx, STRATA_EINVAL, "psi", mean,
                          "multigrid: the problem has no Dirichlet face, so "
                          "a solution exists only for a source of zero mean, "
                          "but psi's mean is %.6g (rms %.6g); subtract it or "
                          "set the option project = 1", mean, rms);
    mg->bshift = -mean;
  }

  mg->psi = psi;
  mg_level *L0 = &mg->lev[0];
  L0->x[0] = phi;
  L0->cur = 0;
  for (int l = 0; l < mg->nlev; l++) {
    mg->lev[l].sweeps = 0;
    mg->lev[l].seconds = 0;
  }
  mg->prof_level = 0;
  mg->prof_t = strata__now();

  const strata_mg_options *o = &mg->o;
  const double rscale = 1.0 / (mg->bscale * sqrt(npts));
  strata_status s = STRATA_OK;
  int k = 0, converged = 0, stalled = 0;
  double r0 = 0;
  if (o->fmg && mg->nlev > 1 && o->max_cycles > 0) {
    double r2;
    s = fill(mg, 0, phi);
    if (s == STRATA_OK) s = sweep(mg, 0, phi, L0->x[1], 0.0, 1.0, &r2);
    if (s != STRATA_OK) goto out;
    r0 = mg->hist[0] = sqrt(r2) * rscale;
    if (r0 > o->atol && r0 > 0) {
      s = fmg(mg);
      if (s != STRATA_OK) goto out;
      k = 1;
    }
  }
  for (;;) {
    strata_field *src = L0->x[L0->cur], *dst = L0->x[1 - L0->cur];
    double r2;
    s = fill(mg, 0, src);
    if (s == STRATA_OK)
      s = o->pre_fine >= 1 ? sweep(mg, 0, src, dst, 1.0, mg->jw, &r2)
                           : sweep(mg, 0, src, NULL, 0.0, 0.0, &r2);
    if (s != STRATA_OK) goto out;
    double r = sqrt(r2) * rscale;
    mg->hist[k] = r;
    if (k == 0) r0 = r;
    if (!isfinite(r)) {
      s = strata__fail(ctx, STRATA_EUNSTABLE,
                       "multigrid: the residual is %g after %d cycles (are "
                       "phi and psi finite?)", r, k);
      goto out;
    }
    if (r <= o->atol || r0 == 0 || (o->rtol > 0 && r <= o->rtol * r0)) {
      converged = 1;
      break;
    }
    if (o->stall && k >= 2 && r > 0.9 * mg->hist[k - 1] &&
        mg->hist[k - 1] > 0.9 * mg->hist[k - 2]) {
      stalled = 1;
      break;
    }
    if (k >= o->max_cycles) break;
    /* the sweep that measured r was the first pre-smoothing sweep: keep
     * it (when the loop stops above it is dropped, x[cur] unchanged) */
    if (o->pre_fine >= 1) {
      L0->cur ^= 1;
      L0->sweeps++;
    }
    s = smooth(mg, 0, o->pre_fine - 1 > 0 ? o->pre_fine - 1 : 0, 0);
    if (s == STRATA_OK && mg->nlev > 1) s = descend(mg, 0, o->cycle);
    if (s == STRATA_OK) s = smooth(mg, 0, o->post, 0);
    if (s != STRATA_OK) goto out;
    k++;
  }
  if (L0->x[L0->cur] != phi) {
    s = ctx->be->mg_axpby(phi, L0->x[L0->cur], 1, 0, 0, NULL);
    if (s != STRATA_OK) goto out;
  }
  if (mg->singular) {
    double sum;
    s = ctx->be->mg_axpby(phi, NULL, 0, 1, 0, &sum);
    if (s == STRATA_OK) s = ctx->be->mg_axpby(phi, NULL, 0, 1, -sum / npts, NULL);
    if (s != STRATA_OK) goto out;
  }
  s = ctx->be->fill_ghosts(phi, &o->bc);
  if (s == STRATA_OK) s = mark(mg, 0);
out:
  L0->x[0] = NULL;
  L0->cur = 0;
  mg->psi = NULL;
  if (s != STRATA_OK) return s;
  if (res) {
    memset(res, 0, sizeof *res);
    res->cycles = k;
    res->converged = converged;
    res->stalled = stalled;
    res->residual0 = r0;
    res->residual = mg->hist[k];
    res->relative = r0 > 0 ? mg->hist[k] / r0 : 0;
    res->factor = k > 0 && r0 > 0 ? pow(res->relative, 1.0 / k) : 0;
    res->last_factor =
        k > 0 && mg->hist[k - 1] > 0 ? mg->hist[k] / mg->hist[k - 1] : 0;
    res->source_mean = -mg->bshift;
    res->seconds = strata__now() - t0;
    res->history = mg->hist;
  }
  return STRATA_OK;
}

strata_status strata__mg_cycles(strata_mg *mg, strata_field *phi,
                                const strata_field *psi, int cycles,
                                strata_mg_result *res) {
  if (!mg) return STRATA_EINVAL;
  if (cycles < 1 || cycles > mg->o.max_cycles)
    return strata__fail(mg->ctx, STRATA_EINVAL,
                        "multigrid: %d cycles asked for; 1..%d (max_cycles)",
                        cycles, mg->o.max_cycles);
  const strata_mg_options keep = mg->o;
  mg->o.max_cycles = cycles;
  mg->o.rtol = 0;
  mg->o.atol = 0;
  mg->o.stall = 0;
  mg->o.fmg = 0;
  strata_status s = strata_mg_solve(mg, phi, psi, res);
  mg->o = keep;
  return s;
}
