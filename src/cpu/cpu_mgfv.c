/* The CPU engine's kernels of the variable-coefficient (cell-centred
 * finite-volume) multigrid: residual with its norm, red-black
 * Gauss-Seidel, the Jacobi/Chebyshev update, restriction by the mean of
 * the children, linear or quadratic prolongation, and a dot product.  fp64 only.  The
 * point arithmetic is ../core/point.h's (fv_op, fv_relax, fv_cheb);
 * registered in strata__cpu_backend (cpu.c), used by src/solvers/mg_fv.c. */
#define _GNU_SOURCE
#include "cpu_internal.h"

/* Levels with fewer cells run on one thread. */
#define FV_PAR_MIN 32768

#define PTD(x) strata__pt_##x##_f64

typedef struct fv_view {
  double *p; /* interior cell (0,0,0) */
  long sy, sz;
} fv_view;

static fv_view view(const strata_field *f) {
  fv_view v = {NULL, 0, 0};
  if (!f) return v;
  v.p = (double *)f->data + f->L.origin;
  v.sy = (long)f->L.pitch_x;
  v.sz = v.sy * (long)f->L.pitch_y;
  return v;
}

/* The operator's coefficient rows of one (j, k). */
typedef struct fv_rows {
  const double *bx, *by, *bz, *al, *di;
  long sy, sz; /* the coefficient fields' strides (one layout) */
} fv_rows;

static fv_rows rows_of(const strata__fv_op *op, long j, long k) {
  fv_view x = view(op->beta[0]), y = view(op->beta[1]);
  fv_view z = view(op->dims == 3 ? op->beta[2] : NULL);
  fv_view a = view(op->alpha), d = view(op->dinv);
  long o = j * x.sy + k * x.sz;
  fv_rows r = {x.p + o, y.p + o, z.p ? z.p + o : NULL, a.p ? a.p + o : NULL,
               d.p + o, x.sy, x.sz};
  return r;
}

/* (A u) at interior cell i of the row u (strides of u: usy, usz). */
static inline __attribute__((always_inline)) double
fv_apply(const fv_rows *c, const double *u, long i, long usy, long usz,
         double h2, int d3) {
  const double uc = u[i];
  const double a = c->al ? c->al[i] : 0.0;
  if (d3)
    return PTD(fv_op)(a, h2, uc, c->bx[i], u[i - 1], c->bx[i + 1], u[i + 1],
                      c->by[i], u[i - usy], c->by[i + c->sy], u[i + usy],
                      c->bz[i], u[i - usz], c->bz[i + c->sz], u[i + usz]);
  return PTD(fv_op)(a, h2, uc, c->bx[i], u[i - 1], c->bx[i + 1], u[i + 1],
                    c->by[i], u[i - usy], c->by[i + c->sy], u[i + usy], 0.0,
                    uc, 0.0, uc);
}

strata_status strata__cpu_fv_residual(const strata__fv_op *op,
                                      const strata_field *u,
                                      const strata_field *b, strata_field *r,
                                      double *r2) {
  const long nx = (long)u->d.n[0], ny = (long)u->d.n[1],
             nz = (long)u->d.n[2];
  const fv_view U = view(u), B = view(b), R = view(r);
  const double h2 = op->h2inv;
  const int d3 = op->dims == 3, nt = nthreads(u->ctx);
  double total = 0;
#pragma omp parallel for collapse(2) schedule(static) num_threads(nt) \
    reduction(+ : total) if (nx * ny * nz >= FV_PAR_MIN)
  for (long k = 0; k < nz; k++)
    for (long j = 0; j < ny; j++) {
      const fv_rows c = rows_of(op, j, k);
      const double *ur = U.p + j * U.sy + k * U.sz;
      const double *br = B.p ? B.p + j * B.sy + k * B.sz : NULL;
      double *rr = R.p + j * R.sy + k * R.sz, acc = 0;
      for (long i = 0; i < nx; i++) {
        double v = (br ? br[i] : 0.0) - fv_apply(&c, ur, i, U.sy, U.sz, h2, d3);
        rr[i] = v;
        acc += v * v;
      }
      total += acc;
    }
  if (r2) *r2 = total;
  return STRATA_OK;
}

strata_status strata__cpu_fv_gsrb(const strata__fv_op *op, strata_field *u,
                                  const strata_field *b, int color) {
  const long nx = (long)u->d.n[0], ny = (long)u->d.n[1],
             nz = (long)u->d.n[2];
  const fv_view U = view(u), B = view(b);
  const double h2 = op->h2inv;
  const int d3 = op->dims == 3, nt = nthreads(u->ctx);
#pragma omp parallel for collapse(2) schedule(static) num_threads(nt) \
    if (nx * ny * nz >= FV_PAR_MIN)
  for (long k = 0; k < nz; k++)
    for (long j = 0; j < ny; j++) {
      const fv_rows c = rows_of(op, j, k);
      double *ur = U.p + j * U.sy + k * U.sz;
      const double *br = B.p + j * B.sy + k * B.sz;
      for (long i = (j + k + color) & 1; i < nx; i += 2) {
        double res = br[i] - fv_apply(&c, ur, i, U.sy, U.sz, h2, d3);
        ur[i] = PTD(fv_relax)(ur[i], 1.0, c.di[i], res);
      }
    }
  return STRATA_OK;
}

strata_status strata__cpu_fv_update(const strata__fv_op *op, strata_field *u,
                                    const strata_field *r, strata_field *d,
                                    double c1, double c2) {
  const long nx = (long)u->d.n[0], ny = (long)u->d.n[1],
             nz = (long)u->d.n[2];
  const fv_view U = view(u), R = view(r), D = view(d);
  const int nt = nthreads(u->ctx);
#pragma omp parallel for collapse(2) schedule(static) num_threads(nt) \
    if (nx * ny * nz >= FV_PAR_MIN)
  for (long k = 0; k < nz; k++)
    for (long j = 0; j < ny; j++) {
      const fv_rows c = rows_of(op, j, k);
      double *ur = U.p + j * U.sy + k * U.sz;
      const double *rr = R.p + j * R.sy + k * R.sz;
      if (D.p) {
        double *dr = D.p + j * D.sy + k * D.sz;
        for (long i = 0; i < nx; i++) {
          /* c1 = 0 starts d: its old contents may be anything */
          dr[i] = PTD(fv_cheb)(c1 != 0 ? dr[i] : 0.0, c1, c2, c.di[i], rr[i]);
          ur[i] += dr[i];
        }
      } else
        for (long i = 0; i < nx; i++)
          ur[i] = PTD(fv_relax)(ur[i], c2, c.di[i], rr[i]);
    }
  return STRATA_OK;
}

/* Children per coarse cell along each axis: 2 where the axis halves. */
static void ratio(const strata_field *f, const strata_field *c, int q[3]) {
  for (int a = 0; a < 3; a++) q[a] = f->d.n[a] == c->d.n[a] ? 1 : 2;
}

strata_status strata__cpu_fv_restrict(const strata_field *fine,
                                      strata_field *coarse) {
  const long nx = (long)coarse->d.n[0], ny = (long)coarse->d.n[1],
             nz = (long)coarse->d.n[2];
  int q[3];
  ratio(fine, coarse, q);
  const fv_view F = view(fine), C = view(coarse);
  const double w = 1.0 / (q[0] * q[1] * q[2]);
  const int nt = nthreads(coarse->ctx);
#pragma omp parallel for collapse(2) schedule(static) num_threads(nt) \
    if (nx * ny * nz * 8 >= FV_PAR_MIN)
  for (long k = 0; k < nz; k++)
    for (long j = 0; j < ny; j++) {
      double *cr = C.p + j * C.sy + k * C.sz;
      for (long i = 0; i < nx; i++) {
        double s = 0;
        for (int dk = 0; dk < q[2]; dk++)
          for (int dj = 0; dj < q[1]; dj++) {
            const double *fr =
                F.p + (q[1] * j + dj) * F.sy + (q[2] * k + dk) * F.sz;
            for (int di = 0; di < q[0]; di++) s += fr[q[0] * i + di];
          }
        cr[i] = w * s;
      }
    }
  return STRATA_OK;
}

/* Interpolation weights of a fine cell from its parent's neighbours at
 * offsets -1, 0, +1 along one axis: the fine centre lies a quarter of a
 * coarse cell from its parent's, towards -1 (even index) or +1 (odd).
 * Linear: 1/4, 3/4; quadratic (the parabola through the three): 5/32,
 * 30/32, -3/32 (mirrored for +1).  An axis that does not halve: 0, 1, 0. */
static void weights(int halves, long i, int quadratic, double w[3]) {
  w[0] = w[2] = 0;
  w[1] = 1;
  if (!halves) return;
  double near = quadratic ? 5.0 / 32 : 0.25, far = quadratic ? -3.0 / 32 : 0;
  w[1] = quadratic ? 30.0 / 32 : 0.75;
  w[0] = (i & 1) ? far : near;
  w[2] = (i & 1) ? near : far;
}

strata_status strata__cpu_fv_prolong(const strata_field *coarse,
                                     strata_field *fine, double add,
                                     int quadratic) {
  const long nx = (long)fine->d.n[0], ny = (long)fine->d.n[1],
             nz = (long)fine->d.n[2];
  int q[3];
  ratio(fine, coarse, q);
  const fv_view F = view(fine), C = view(coarse);
  const int nt = nthreads(fine->ctx);
#pragma omp parallel for collapse(2) schedule(static) num_threads(nt) \
    if (nx * ny * nz >= FV_PAR_MIN)
  for (long k = 0; k < nz; k++)
    for (long j = 0; j < ny; j++) {
      double wj[3], wk[3];
      weights(q[1] == 2, j, quadratic, wj);
      weights(q[2] == 2, k, quadratic, wk);
      const double *c0 = C.p + (q[1] == 2 ? j >> 1 : j) * C.sy +
                         (q[2] == 2 ? k >> 1 : k) * C.sz;
      double *fr = F.p + j * F.sy + k * F.sz;
      for (long i = 0; i < nx; i++) {
        double wi[3];
        weights(q[0] == 2, i, quadratic, wi);
        const double *c = c0 + (q[0] == 2 ? i >> 1 : i);
        /* along x, then y, then z, skipping the zero weights */
        double v = 0;
        for (int dk = -1; dk <= 1; dk++) {
          if (wk[dk + 1] == 0) continue;
          double y = 0;
          for (int dj = -1; dj <= 1; dj++) {
            if (wj[dj + 1] == 0) continue;
            const double *r = c + dj * C.sy + dk * C.sz;
            y += wj[dj + 1] * (wi[0] * r[-1] + wi[1] * r[0] + wi[2] * r[1]);
          }
          v += wk[dk + 1] * y;
        }
        fr[i] = add != 0 ? add * fr[i] + v : v;
      }
    }
  return STRATA_OK;
}

strata_status strata__cpu_fv_dot(const strata_field *x, const strata_field *y,
                                 double *out) {
  const long nx = (long)x->d.n[0], ny = (long)x->d.n[1],
             nz = (long)x->d.n[2];
  const fv_view X = view(x), Y = view(y);
  const int nt = nthreads(x->ctx);
  double total = 0;
#pragma omp parallel for collapse(2) schedule(static) num_threads(nt) \
    reduction(+ : total) if (nx * ny * nz >= FV_PAR_MIN)
  for (long k = 0; k < nz; k++)
    for (long j = 0; j < ny; j++) {
      const double *xr = X.p + j * X.sy + k * X.sz;
      const double *yr = Y.p ? Y.p + j * Y.sy + k * Y.sz : NULL;
      double acc = 0;
      if (yr)
        for (long i = 0; i < nx; i++) acc += xr[i] * yr[i];
      else
        for (long i = 0; i < nx; i++) acc += xr[i];
      total += acc;
    }
  *out = total;
  return STRATA_OK;
}
