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

/* The residual of the fine cells and its restriction in one pass: a
 * thread per coarse cell sums its children's residuals in k_fv_restrict's
 * order, so the result equals the two kernels'. */
template <bool D3, bool NORM>
__global__ void __launch_bounds__(kFvThreads)
    k_fv_residual_restrict(fv_coef c, fv_ptr u, fv_ptr b, fv_ptr cr,
                           fv_dims n, int qx, int qy, int qz, double w,
                           double *part) {
  __shared__ double red[NORM ? kFvThreads : 1];
  double acc = 0;
  for (long long row = blockIdx.x; row < n.rows; row += gridDim.x) {
    const long long J = row % n.ny, K = row / n.ny;
    for (int I = threadIdx.x; I < n.nx; I += blockDim.x) {
      double s = 0;
      for (int dk = 0; dk < qz; dk++)
        for (int dj = 0; dj < qy; dj++) {
          const long long j = qy * J + dj, k = qz * K + dk;
          const long long o = j * c.sy + k * c.sz, q = j * u.sy + k * u.sz;
          for (int di = 0; di < qx; di++) {
            const long long i = (long long)qx * I + di;
            const double bv = b.p ? b.p[j * b.sy + k * b.sz + i] : 0.0;
            const double v =
                bv - apply_at<D3>(c, o + i, u.p, q + i, u.sy, u.sz);
            s += v;
            if (NORM) acc += v * v;
          }
        }
      cr.p[J * cr.sy + K * cr.sz + I] = w * s;
    }
  }
  if (NORM) {
    const double t = block_sum(acc, red);
    if (threadIdx.x == 0) part[blockIdx.x] = t;
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

/* ---- the Gauss-Seidel step in one pass ---------------------------------------
 *
 * Both colours of a red-black step from u into out: a block owns an xy
 * tile of kGX x kGY cells and walks a chunk [k0, k1) of planes.  Colour 0
 * needs the old values of its neighbours, colour 1 the colour-0 results
 * of its own; so plane p of the old iterate (tile and two cells of halo)
 * is staged in shared memory, the colour-0 pass of plane p ("red plane":
 * colour-0 cells updated, colour-1 cells as they were) computed on the
 * tile and one cell of halo, and plane p - 1 finished from the red planes
 * p - 2 .. p.  Halo cells are computed redundantly, so blocks never read
 * each other's results, and u is only read: out must be another field.
 * Values beyond a face come from the ghost rule ghost(-1) = f * u(0)
 * (Dirichlet: f = -1, Neumann: 1) applied to the value being read, old
 * or red, as the two-pass step's ghost fills do.  Rings: three old
 * planes, four red planes (the top face's ghost plane is written one
 * plane early). */
constexpr int kGX = 32, kGY = 8;                /* 256 threads, the tile */
constexpr int kOW = kGX + 4, kOH = kGY + 4;     /* old planes: halo 2 */
constexpr int kRW = kGX + 2, kRH = kGY + 2;     /* red planes: halo 1 */
/* blocks resident per multiprocessor, as the launch bounds promise (the
 * z chunking's model; no occupancy query, which a graph capture of the
 * first step would have to wait for) */
constexpr int kGSBlocks = 3;

struct gs_faces {
  double f[6]; /* ghost(-1) = f * u(0): x lo, x hi, y lo, y hi, z lo, z hi */
};

/* Folds index i (-1 .. n) of an axis into 0 .. n-1, multiplying *s by the
 * face's factor where it was a ghost. */
__device__ __forceinline__ int gs_fold(int i, int n, double lo, double hi,
                                       double *s) {
  if (i < 0) {
    *s *= lo;
    return 0;
  }
  if (i >= n) {
    *s *= hi;
    return n - 1;
  }
  return i;
}

__device__ __forceinline__ int ring(int p, int m) { return ((p % m) + m) % m; }

/* The colour-0 pass's value at interior cell (i, j, p), whose old
 * neighbourhood is centred at (oy, ox) of the old ring (planes om, oc,
 * op = p - 1, p, p + 1). */
__device__ __forceinline__ double gs_red(const fv_coef &c, const fv_ptr &b,
                                         const double (*om)[kOW],
                                         const double (*oc)[kOW],
                                         const double (*opl)[kOW], int i,
                                         int j, int p, int oy, int ox) {
  const double uc = oc[oy][ox];
  if ((i + j + p) & 1) return uc;
  const long long o = i + j * c.sy + p * c.sz;
  const double a = c.al ? c.al[o] : 0.0;
  const double Au = strata__pt_fv_op(
      a, c.h2, uc, c.bx[o], oc[oy][ox - 1], c.bx[o + 1], oc[oy][ox + 1],
      c.by[o], oc[oy - 1][ox], c.by[o + c.sy], oc[oy + 1][ox], c.bz[o],
      om[oy][ox], c.bz[o + c.sz], opl[oy][ox]);
  const double res = b.p[i + j * b.sy + p * b.sz] - Au;
  return strata__pt_fv_relax(uc, 1.0, c.di[o], res);
}

__global__ void __launch_bounds__(kGX *kGY, kGSBlocks)
    k_fv_gsrb2(fv_coef c, fv_ptr u, fv_ptr b, fv_ptr out, int nx, int ny,
               int nz, int tiles_x, int tiles_y, int zchunk, gs_faces g) {
  __shared__ double old[3][kOH][kOW];
  __shared__ double red[4][kRH][kRW];
  const int tid = threadIdx.x + kGX * threadIdx.y;
  const int t = blockIdx.x;
  const int x0 = (t % tiles_x) * kGX, y0 = ((t / tiles_x) % tiles_y) * kGY;
  const int k0 = (t / tiles_x / tiles_y) * zchunk;
  const int k1 = min(nz, k0 + zchunk);
  const int pa = k0 == 0 ? 0 : k0 - 1, pb = k1 == nz ? nz - 1 : k1;

  /* old plane q (-1 .. nz) of the tile with two cells of halo; cells
   * more than one cell outside the grid are never used (0) */
  auto load = [&](int q) {
    double(*sh)[kOW] = old[ring(q, 3)];
    double sz = 1;
    const int kq = gs_fold(q, nz, g.f[4], g.f[5], &sz);
    for (int e = tid; e < kOH * kOW; e += kGX * kGY) {
      const int ly = e / kOW, lx = e % kOW;
      const int i = x0 - 2 + lx, j = y0 - 2 + ly;
      double v = 0;
      if (i >= -1 && i <= nx && j >= -1 && j <= ny) {
        double s = sz;
        const int fi = gs_fold(i, nx, g.f[0], g.f[1], &s);
        const int fj = gs_fold(j, ny, g.f[2], g.f[3], &s);
        v = s * u.p[fi + fj * u.sy + kq * u.sz];
      }
      sh[ly][lx] = v;
    }
  };

  load(pa - 1);
  load(pa);
  for (int p = pa; p <= pb; p++) {
    load(p + 1);
    __syncthreads();
    /* red plane p on the tile and one cell of halo; a ghost cell takes
     * the rule's multiple of its interior neighbour's red value */
    {
      const double(*om)[kOW] = old[ring(p - 1, 3)];
      const double(*oc)[kOW] = old[ring(p, 3)];
      const double(*opl)[kOW] = old[ring(p + 1, 3)];
      double(*rp)[kRW] = red[ring(p, 4)];
      double(*rlo)[kRW] = red[ring(p - 1, 4)];
      double(*rhi)[kRW] = red[ring(p + 1, 4)];
      const bool zlo = p == 0, zhi = p == nz - 1;
      for (int e = tid; e < kRH * kRW; e += kGX * kGY) {
        const int ly = e / kRW, lx = e % kRW;
        const int i = x0 - 1 + lx, j = y0 - 1 + ly;
        double v = 0;
        if (i >= -1 && i <= nx && j >= -1 && j <= ny) {
          double s = 1;
          const int fi = gs_fold(i, nx, g.f[0], g.f[1], &s);
          const int fj = gs_fold(j, ny, g.f[2], g.f[3], &s);
          v = s * gs_red(c, b, om, oc, opl, fi, fj, p, fj - y0 + 2,
                         fi - x0 + 2);
        }
        rp[ly][lx] = v;
        if (zlo) rlo[ly][lx] = g.f[4] * v;
        if (zhi) rhi[ly][lx] = g.f[5] * v;
      }
    }
    __syncthreads();
    /* plane p - 1 is complete (and plane p at the top face) */
    for (int q = p - 1; q <= p; q++) {
      if (q < k0 || q >= k1 || (q == p && p != nz - 1)) continue;
      const int i = x0 + threadIdx.x, j = y0 + threadIdx.y;
      if (i >= nx || j >= ny) continue;
      const double(*rc)[kRW] = red[ring(q, 4)];
      const int ry = threadIdx.y + 1, rx = threadIdx.x + 1;
      double v = rc[ry][rx];
      if ((i + j + q) & 1) {
        const long long o = i + j * c.sy + q * c.sz;
        const double a = c.al ? c.al[o] : 0.0;
        const double Au = strata__pt_fv_op(
            a, c.h2, v, c.bx[o], rc[ry][rx - 1], c.bx[o + 1], rc[ry][rx + 1],
            c.by[o], rc[ry - 1][rx], c.by[o + c.sy], rc[ry + 1][rx], c.bz[o],
            red[ring(q - 1, 4)][ry][rx], c.bz[o + c.sz],
            red[ring(q + 1, 4)][ry][rx]);
        const double res = b.p[i + j * b.sy + q * b.sz] - Au;
        v = strata__pt_fv_relax(v, 1.0, c.di[o], res);
      }
      out.p[i + j * out.sy + q * out.sz] = v;
    }
  }
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

/* Whether a level takes the one-pass kernels: by the tuning switch
 * mg_onepass when set (0 never, 1 always), else on levels of at most
 * kOnePassCells cells.  One pass saves launches and a ghost fill a step,
 * which is what small levels' time is made of; on the largest the two
 * half-sweeps stream faster than the one-pass tile (docs/performance.md,
 * the variable-coefficient multigrid). */
constexpr size_t kOnePassCells = (size_t)1 << 25;

static bool onepass(const strata_field *u) {
  const long t = strata__tuning_long(u->ctx, "mg_onepass", -1);
  if (t >= 0) return t != 0;
  return u->d.n[0] * u->d.n[1] * u->d.n[2] <= kOnePassCells;
}

strata_status strata__cuda_fv_residual_restrict(const strata__fv_op *op,
                                                const strata_field *u,
                                                const strata_field *b,
                                                strata_field *coarse,
                                                double *r2, int *used) {
  *used = 0;
  if (!onepass(u)) return STRATA_OK;
  int q[3];
  ratio_of(u, coarse, q);
  for (int a = 0; a < 3; a++)
    if (u->d.n[a] != (size_t)q[a] * coarse->d.n[a]) return STRATA_OK;
  strata_context *ctx = u->ctx;
  FV_PRE(ctx, u);
  strata__cuda_state *st = strata__cu_state(ctx);
  const fv_dims n = dims_of(coarse);
  const unsigned grid = grid_of(ctx, n.rows, r2 != NULL);
  const fv_coef c = coef_of(op);
  const fv_ptr U = ptr_of(u), B = ptr_of(b), C = ptr_of(coarse);
  const double w = 1.0 / (q[0] * q[1] * q[2]);
  const bool d3 = op->dims == 3;
#define FV_RR(D3, NORM)                                                        \
  k_fv_residual_restrict<D3, NORM><<<grid, kFvThreads, 0, st->stream>>>(       \
      c, U, B, C, n, q[0], q[1], q[2], w, NORM ? st->scratch : NULL)
  if (r2 && d3)
    FV_RR(true, true);
  else if (r2)
    FV_RR(false, true);
  else if (d3)
    FV_RR(true, false);
  else
    FV_RR(false, false);
#undef FV_RR
  STRATA__LAUNCHED(ctx, "multigrid (FV) residual-restriction kernel launch");
  *used = 1;
  return r2 ? fold_to_host(ctx, (int)grid, r2) : STRATA_OK;
}

strata_status strata__cuda_fv_gsrb2(const strata__fv_op *op,
                                    const strata_field *u,
                                    const strata_field *b, strata_field *out,
                                    const strata__mg_ghost *g, int *used) {
  *used = 0;
  /* a part of a level split over ranks: its z-end planes belong to the
   * neighbours, whose red half-sweep must arrive (an exchange) before the
   * black one reads it; the two half-sweeps take that route */
  if (op->dims != 3 || u->win || !onepass(u)) return STRATA_OK;
  gs_faces fc;
  for (int f = 0; f < 6; f++) {
    if (g->kind[f] == STRATA__MG_PERIODIC) return STRATA_OK;
    fc.f[f] = g->kind[f] == STRATA__MG_MIRROR ? 1.0 : g->alpha[f];
  }
  strata_context *ctx = u->ctx;
  FV_PRE(ctx, u);
  strata__cuda_state *st = strata__cu_state(ctx);
  const int nx = (int)u->d.n[0], ny = (int)u->d.n[1], nz = (int)u->d.n[2];
  const int tiles_x = (nx + kGX - 1) / kGX, tiles_y = (ny + kGY - 1) / kGY;
  const long long xy = (long long)tiles_x * tiles_y;
  /* z chunks for whole waves of blocks (a chunk re-reads three old planes
   * and recomputes two red ones), at most 64 planes each */
  int chunks = strata__cu_zchunks(xy > (1 << 24) ? (1 << 24) : (int)xy,
                                  kGSBlocks, st->prop.multiProcessorCount,
                                  nz, 3);
  if (chunks < (nz + 63) / 64) chunks = (nz + 63) / 64;
  const int zchunk = (nz + chunks - 1) / chunks;
  const long long blocks = xy * ((nz + zchunk - 1) / zchunk);
  if (blocks > 0x7fffffffLL) return STRATA_OK; /* past one launch: 2 passes */
  k_fv_gsrb2<<<(unsigned)blocks, dim3(kGX, kGY), 0, st->stream>>>(
      coef_of(op), ptr_of(u), ptr_of(b), ptr_of(out), nx, ny, nz, tiles_x,
      tiles_y, zchunk, fc);
  STRATA__LAUNCHED(ctx, "multigrid (FV) Gauss-Seidel step kernel launch");
  *used = 1;
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
