/* The CUDA engine's kernels of the variable-coefficient (cell-centred
 * finite-volume) multigrid, fp64: residual with its norm, red-black
 * Gauss-Seidel, the Jacobi/Chebyshev update, restriction by the mean of
 * the children, linear or quadratic prolongation, and a dot product.  The
 * contracts are in src/core/internal.h (strata__fv_op, the fv_* entries);
 * src/cpu/cpu_mgfv.c is the oracle, ../core/point.h's fv_op, fv_relax and
 * fv_cheb the arithmetic of both.  One block per row (j, k), grid-stride
 * over the rows; threads along x.  Sums are deterministic (mg_common.cuh). */
#include "cuda_device.cuh"
#include "core/point.h"
#include "mg_common.cuh"

namespace {

constexpr int kFvThreads = 128;

/* A field's interior origin and strides. */
struct fv_ptr {
  double *p;
  long long sy, sz;
};

fv_ptr ptr_of(const strata_field *f) {
  fv_ptr v = {NULL, 0, 0};
  if (!f) return v;
  v.p = (double *)f->data + f->L.origin;
  v.sy = (long long)f->L.pitch_x;
  v.sz = v.sy * (long long)f->L.pitch_y;
  return v;
}

/* The level operator's coefficient fields (one layout). */
struct fv_coef {
  const double *bx, *by, *bz, *al, *di;
  long long sy, sz;
  double h2;
};

fv_coef coef_of(const strata__fv_op *op) {
  fv_ptr x = ptr_of(op->beta[0]), y = ptr_of(op->beta[1]);
  fv_ptr z = ptr_of(op->dims == 3 ? op->beta[2] : NULL);
  fv_ptr a = ptr_of(op->alpha), d = ptr_of(op->dinv);
  fv_coef c = {x.p, y.p, z.p, a.p, d.p, x.sy, x.sz, op->h2inv};
  return c;
}

struct fv_dims {
  int nx, ny;
  long long rows;
};

fv_dims dims_of(const strata_field *f) {
  fv_dims d = {(int)f->d.n[0], (int)f->d.n[1],
               (long long)f->d.n[1] * (long long)f->d.n[2]};
  return d;
}

unsigned grid_of(strata_context *ctx, long long rows, bool reduce) {
  long long g = rows < 65535 ? rows : 65535;
  if (reduce && g > reduce_slots(ctx)) g = reduce_slots(ctx);
  return (unsigned)(g < 1 ? 1 : g);
}

/* (A u) at cell (i, j, k): c at the coefficient offset o, u at q. */
template <bool D3>
__device__ __forceinline__ double apply_at(const fv_coef &c, long long o,
                                           const double *u, long long q,
                                           long long usy, long long usz) {
  const double uc = u[q];
  const double a = c.al ? c.al[o] : 0.0;
  if (D3)
    return strata__pt_fv_op(a, c.h2, uc, c.bx[o], u[q - 1], c.bx[o + 1],
                            u[q + 1], c.by[o], u[q - usy], c.by[o + c.sy],
                            u[q + usy], c.bz[o], u[q - usz], c.bz[o + c.sz],
                            u[q + usz]);
  return strata__pt_fv_op(a, c.h2, uc, c.bx[o], u[q - 1], c.bx[o + 1],
                          u[q + 1], c.by[o], u[q - usy], c.by[o + c.sy],
                          u[q + usy], 0.0, uc, 0.0, uc);
}

template <bool D3, bool NORM>
__global__ void __launch_bounds__(kFvThreads)
    k_fv_residual(fv_coef c, fv_ptr u, fv_ptr b, fv_ptr r, fv_dims n,
                  double *part) {
  __shared__ double red[NORM ? kFvThreads : 1];
  double acc = 0;
  for (long long row = blockIdx.x; row < n.rows; row += gridDim.x) {
    const long long j = row % n.ny, k = row / n.ny;
    const long long o = j * c.sy + k * c.sz, q = j * u.sy + k * u.sz;
    for (int i = threadIdx.x; i < n.nx; i += blockDim.x) {
      const double bv = b.p ? b.p[j * b.sy + k * b.sz + i] : 0.0;
      const double v = bv - apply_at<D3>(c, o + i, u.p, q + i, u.sy, u.sz);
      r.p[j * r.sy + k * r.sz + i] = v;
      if (NORM) acc += v * v;
    }
  }
  if (NORM) {
    const double s = block_sum(acc, red);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
  }
}

template <bool D3>
__global__ void __launch_bounds__(kFvThreads)
    k_fv_gsrb(fv_coef c, fv_ptr u, fv_ptr b, fv_dims n, int color) {
  for (long long row = blockIdx.x; row < n.rows; row += gridDim.x) {
    const long long j = row % n.ny, k = row / n.ny;
    const long long o = j * c.sy + k * c.sz, q = j * u.sy + k * u.sz;
    const int first = (int)((j + k + color) & 1);
    for (int i = first + 2 * threadIdx.x; i < n.nx; i += 2 * blockDim.x) {
      const double res = b.p[j * b.sy + k * b.sz + i] -
                         apply_at<D3>(c, o + i, u.p, q + i, u.sy, u.sz);
      u.p[q + i] = strata__pt_fv_relax(u.p[q + i], 1.0, c.di[o + i], res);
    }
  }
}

__global__ void __launch_bounds__(kFvThreads)
    k_fv_update(fv_coef c, fv_ptr u, fv_ptr r, fv_ptr d, fv_dims n, double c1,
                double c2) {
  for (long long row = blockIdx.x; row < n.rows; row += gridDim.x) {
    const long long j = row % n.ny, k = row / n.ny, o = j * c.sy + k * c.sz;
    double *ur = u.p + j * u.sy + k * u.sz;
    const double *rr = r.p + j * r.sy + k * r.sz;
    double *dr = d.p ? d.p + j * d.sy + k * d.sz : NULL;
    for (int i = threadIdx.x; i < n.nx; i += blockDim.x) {
      if (dr) {
        const double dv = strata__pt_fv_cheb(c1 != 0 ? dr[i] : 0.0, c1, c2,
                                             c.di[o + i], rr[i]);
        dr[i] = dv;
        ur[i] += dv;
      } else
        ur[i] = strata__pt_fv_relax(ur[i], c2, c.di[o + i], rr[i]);
    }
  }
}

__global__ void __launch_bounds__(kFvThreads)
    k_fv_restrict(fv_ptr f, fv_ptr c, fv_dims n, int qx, int qy, int qz,
                  double w) {
  for (long long row = blockIdx.x; row < n.rows; row += gridDim.x) {
    const long long j = row % n.ny, k = row / n.ny;
    for (int i = threadIdx.x; i < n.nx; i += blockDim.x) {
      double s = 0;
      for (int dk = 0; dk < qz; dk++)
        for (int dj = 0; dj < qy; dj++) {
          const double *fr = f.p + (qy * j + dj) * f.sy + (qz * k + dk) * f.sz;
          for (int di = 0; di < qx; di++) s += fr[(long long)qx * i + di];
        }
      c.p[j * c.sy + k * c.sz + i] = w * s;
    }
  }
}

/* The weights of ../../cpu/cpu_mgfv.c's weights(), same order. */
__device__ __forceinline__ void fv_weights(bool halves, long long i,
                                           bool quadratic, double w[3]) {
  w[0] = w[2] = 0;
  w[1] = 1;
  if (!halves) return;
  const double near = quadratic ? 5.0 / 32 : 0.25,
               far = quadratic ? -3.0 / 32 : 0;
  w[1] = quadratic ? 30.0 / 32 : 0.75;
  w[0] = (i & 1) ? far : near;
  w[2] = (i & 1) ? near : far;
}

__global__ void __launch_bounds__(kFvThreads)
    k_fv_prolong(fv_ptr c, fv_ptr f, fv_dims n, int qx, int qy, int qz,
                 double add, bool quadratic) {
  for (long long row = blockIdx.x; row < n.rows; row += gridDim.x) {
    const long long j = row % n.ny, k = row / n.ny;
    double wj[3], wk[3];
    fv_weights(qy == 2, j, quadratic, wj);
    fv_weights(qz == 2, k, quadratic, wk);
    const double *c0 =
        c.p + (qy == 2 ? j >> 1 : j) * c.sy + (qz == 2 ? k >> 1 : k) * c.sz;
    double *fr = f.p + j * f.sy + k * f.sz;
    for (int i = threadIdx.x; i < n.nx; i += blockDim.x) {
      double wi[3];
      fv_weights(qx == 2, i, quadratic, wi);
      const double *cc = c0 + (qx == 2 ? i >> 1 : i);
      double v = 0;
      for (int dk = -1; dk <= 1; dk++) {
        if (wk[dk + 1] == 0) continue;
        double y = 0;
        for (int dj = -1; dj <= 1; dj++) {
          if (wj[dj + 1] == 0) continue;
          const double *r = cc + dj * c.sy + dk * c.sz;
          y += wj[dj + 1] * (wi[0] * r[-1] + wi[1] * r[0] + wi[2] * r[1]);
        }
        v += wk[dk + 1] * y;
      }
      fr[i] = add != 0 ? add * fr[i] + v : v;
    }
  }
}

__global__ void __launch_bounds__(kFvThreads)
    k_fv_dot(fv_ptr x, fv_ptr y, fv_dims n, double *part) {
  __shared__ double red[kFvThreads];
  double acc = 0;
  for (long long row = blockIdx.x; row < n.rows; row += gridDim.x) {
    const long long j = row % n.ny, k = row / n.ny;
    const double *xr = x.p + j * x.sy + k * x.sz;
    const double *yr = y.p ? y.p + j * y.sy + k * y.sz : NULL;
    for (int i = threadIdx.x; i < n.nx; i += blockDim.x)
      acc += yr ? xr[i] * yr[i] : xr[i];
  }
  const double s = block_sum(acc, red);
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

void ratio_of(const strata_field *fine, const strata_field *coarse, int q[3]) {
  for (int a = 0; a < 3; a++) q[a] = fine->d.n[a] == coarse->d.n[a] ? 1 : 2;
}

#define FV_PRE(ctx, f)                                                         \
  do {                                                                         \
    MG_DEV(ctx);                                                               \
    strata_status s_ = check_size(ctx, f);                                     \
    if (s_ != STRATA_OK) return s_;                                            \
  } while (0)

} // namespace

strata_status strata__cuda_fv_residual(const strata__fv_op *op,
                                       const strata_field *u,
                                       const strata_field *b, strata_field *r,
                                       double *r2) {
  strata_context *ctx = u->ctx;
  FV_PRE(ctx, u);
  strata__cuda_state *st = strata__cu_state(ctx);
  const fv_dims n = dims_of(u);
  const unsigned grid = grid_of(ctx, n.rows, r2 != NULL);
  const fv_coef c = coef_of(op);
  const fv_ptr U = ptr_of(u), B = ptr_of(b), R = ptr_of(r);
  const bool d3 = op->dims == 3;
  if (r2 && d3)
    k_fv_residual<true, true><<<grid, kFvThreads, 0, st->stream>>>(
        c, U, B, R, n, st->scratch);
  else if (r2)
    k_fv_residual<false, true><<<grid, kFvThreads, 0, st->stream>>>(
        c, U, B, R, n, st->scratch);
  else if (d3)
    k_fv_residual<true, false><<<grid, kFvThreads, 0, st->stream>>>(
        c, U, B, R, n, NULL);
  else
    k_fv_residual<false, false><<<grid, kFvThreads, 0, st->stream>>>(
        c, U, B, R, n, NULL);
  STRATA__LAUNCHED(ctx, "multigrid (FV) residual kernel launch");
  return r2 ? fold_to_host(ctx, (int)grid, r2) : STRATA_OK;
}

strata_status strata__cuda_fv_gsrb(const strata__fv_op *op, strata_field *u,
                                   const strata_field *b, int color) {
  strata_context *ctx = u->ctx;
  FV_PRE(ctx, u);
  strata__cuda_state *st = strata__cu_state(ctx);
  const fv_dims n = dims_of(u);
  const unsigned grid = grid_of(ctx, n.rows, false);
  if (op->dims == 3)
    k_fv_gsrb<true><<<grid, kFvThreads, 0, st->stream>>>(
        coef_of(op), ptr_of(u), ptr_of(b), n, color);
  else
    k_fv_gsrb<false><<<grid, kFvThreads, 0, st->stream>>>(
        coef_of(op), ptr_of(u), ptr_of(b), n, color);
  STRATA__LAUNCHED(ctx, "multigrid (FV) Gauss-Seidel kernel launch");
  return STRATA_OK;
}

strata_status strata__cuda_fv_update(const strata__fv_op *op, strata_field *u,
                                     const strata_field *r, strata_field *d,
                                     double c1, double c2) {
  strata_context *ctx = u->ctx;
  FV_PRE(ctx, u);
  strata__cuda_state *st = strata__cu_state(ctx);
  const fv_dims n = dims_of(u);
  k_fv_update<<<grid_of(ctx, n.rows, false), kFvThreads, 0, st->stream>>>(
      coef_of(op), ptr_of(u), ptr_of(r), ptr_of(d), n, c1, c2);
  STRATA__LAUNCHED(ctx, "multigrid (FV) update kernel launch");
  return STRATA_OK;
}

strata_status strata__cuda_fv_restrict(const strata_field *fine,
                                       strata_field *coarse) {
  strata_context *ctx = coarse->ctx;
  FV_PRE(ctx, fine);
  strata__cuda_state *st = strata__cu_state(ctx);
  int q[3];
  ratio_of(fine, coarse, q);
  const fv_dims n = dims_of(coarse);
  k_fv_restrict<<<grid_of(ctx, n.rows, false), kFvThreads, 0, st->stream>>>(
      ptr_of(fine), ptr_of(coarse), n, q[0], q[1], q[2],
      1.0 / (q[0] * q[1] * q[2]));
  STRATA__LAUNCHED(ctx, "multigrid (FV) restriction kernel launch");
  return STRATA_OK;
}

strata_status strata__cuda_fv_prolong(const strata_field *coarse,
                                      strata_field *fine, double add,
                                      int quadratic) {
  strata_context *ctx = fine->ctx;
  FV_PRE(ctx, fine);
  strata__cuda_state *st = strata__cu_state(ctx);
  int q[3];
  ratio_of(fine, coarse, q);
  const fv_dims n = dims_of(fine);
  k_fv_prolong<<<grid_of(ctx, n.rows, false), kFvThreads, 0, st->stream>>>(
      ptr_of(coarse), ptr_of(fine), n, q[0], q[1], q[2], add,
      quadratic != 0);
  STRATA__LAUNCHED(ctx, "multigrid (FV) prolongation kernel launch");
  return STRATA_OK;
}

strata_status strata__cuda_fv_dot(const strata_field *x, const strata_field *y,
                                  double *out) {
  strata_context *ctx = x->ctx;
  FV_PRE(ctx, x);
  strata__cuda_state *st = strata__cu_state(ctx);
  const fv_dims n = dims_of(x);
  const unsigned grid = grid_of(ctx, n.rows, true);
  k_fv_dot<<<grid, kFvThreads, 0, st->stream>>>(ptr_of(x), ptr_of(y), n,
                                                st->scratch);
  STRATA__LAUNCHED(ctx, "multigrid (FV) dot kernel launch");
  return fold_to_host(ctx, (int)grid, out);
}

/* ---- recordings (CUDA graphs) ---------------------------------------------- */

strata_status strata__cuda_capture_begin(strata_context *ctx) {
  MG_DEV(ctx);
  STRATA__CU(ctx, cudaStreamBeginCapture(strata__cu_state(ctx)->stream,
                                         cudaStreamCaptureModeThreadLocal));
  return STRATA_OK;
}

strata_status strata__cuda_capture_end(strata_context *ctx, void **graph) {
  *graph = NULL;
  MG_DEV(ctx);
  cudaGraph_t g = NULL;
  STRATA__CU(ctx, cudaStreamEndCapture(strata__cu_state(ctx)->stream, &g));
  cudaGraphExec_t x = NULL;
  cudaError_t e = cudaGraphInstantiate(&x, g, 0);
  cudaGraphDestroy(g);
  if (e != cudaSuccess)
    return strata__cuda_fail(ctx, e, "cudaGraphInstantiate", __FILE__,
                             __LINE__);
  *graph = (void *)x;
  return STRATA_OK;
}

strata_status strata__cuda_graph_run(strata_context *ctx, void *graph) {
  MG_DEV(ctx);
  STRATA__CU(ctx, cudaGraphLaunch((cudaGraphExec_t)graph,
                                  strata__cu_state(ctx)->stream));
  return STRATA_OK;
}

void strata__cuda_graph_free(strata_context *ctx, void *graph) {
  if (!graph) return;
  if (use_dev(ctx) != STRATA_OK) return;
  cudaGraphExecDestroy((cudaGraphExec_t)graph);
}
