/* The CUDA engine's multigrid kernels (issue 5): the weighted-Jacobi sweep
 * fused with the residual and its norm (2.5D: an xy tile with halo in
 * shared memory, three planes rotating along z), the separable banded
 * transfer (restriction and prolongation-and-correct), axpby with a sum,
 * and the coarse ghost rules.  The contracts are in src/core/internal.h
 * (strata__mg_*); src/cpu/cpu_multigrid.c is the oracle.  Sums are
 * reduced per block into the context's scratch buffer and folded by one
 * block in a fixed order, so they are deterministic. */
#include "cuda_internal.h"

#include <string.h>

namespace {

constexpr int kBX = 32, kBY = 16;   /* sweep tile: 512 threads */
constexpr int kRedThreads = 256;    /* final reduction block */

strata_status use_dev(strata_context *ctx) {
  STRATA__CU(ctx, cudaSetDevice(strata__cu_state(ctx)->device));
  return STRATA_OK;
}

#define MG_DEV(ctx)                                                            \
  do {                                                                         \
    strata_status s_ = use_dev(ctx);                                           \
    if (s_ != STRATA_OK) return s_;                                            \
  } while (0)

strata_status check_size(strata_context *ctx, const strata_field *f) {
  for (int a = 0; a < 3; a++)
    if (f->d.n[a] > ((size_t)1 << 30))
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "multigrid: the CUDA kernels take at most 2^30 "
                          "points per axis (axis %c has %zu)", "xyz"[a],
                          f->d.n[a]);
  return STRATA_OK;
}

/* Blocks that reduce into the scratch buffer: one slot each, the last slot
 * keeps the folded result. */
int reduce_slots(strata_context *ctx) {
  size_t n = strata__cu_state(ctx)->scratch_n;
  return n > 1 ? (int)(n - 1) : 0;
}

/* Block-wide sum of v (blockDim.x * blockDim.y * blockDim.z threads, a
 * power of two up to 1024); thread 0 gets the result. */
__device__ __forceinline__ double block_sum(double v, double *sh) {
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int n = blockDim.x * blockDim.y * blockDim.z;
  sh[t] = v;
  __syncthreads();
  for (int h = n / 2; h > 0; h /= 2) {
    if (t < h) sh[t] += sh[t + h];
    __syncthreads();
  }
  return sh[0];
}

__global__ void __launch_bounds__(kRedThreads)
    k_fold(const double *part, int nparts, double *res) {
  __shared__ double sh[kRedThreads];
  double s = 0;
  for (int p = threadIdx.x; p < nparts; p += blockDim.x) s += part[p];
  s = block_sum(s, sh);
  if (threadIdx.x == 0) *res = s;
}

/* Folds nparts partials and copies the result to the host. */
strata_status fold_to_host(strata_context *ctx, int nparts, double *out) {
  strata__cuda_state *st = strata__cu_state(ctx);
  double *part = st->scratch, *res = st->scratch + reduce_slots(ctx);
  k_fold<<<1, kRedThreads, 0, st->stream>>>(part, nparts, res);
  STRATA__LAUNCHED(ctx, "multigrid reduction (fold) launch");
  STRATA__CU(ctx, cudaMemcpyAsync(out, res, sizeof(double),
                                  cudaMemcpyDeviceToHost, st->stream));
  STRATA__CU(ctx, cudaStreamSynchronize(st->stream));
  return STRATA_OK;
}

/* ---- the sweep ------------------------------------------------------------- */

template <typename T> struct sweep_c {
  T c[4];
  T bs, bsh, cu, cr;
};

/* S u at (ly, lx) of the three shared planes m (below), c, p (above);
 * SHAPE 5, 9 (2D: only c is used), 7, 26, 27 as on the CPU. */
template <typename T, int SHAPE>
__device__ __forceinline__ T stencil_at(const T (*m)[kBX + 2],
                                        const T (*c)[kBX + 2],
                                        const T (*p)[kBX + 2], int ly, int lx,
                                        const T *C) {
  if (SHAPE == 5)
    return C[0] * c[ly][lx] +
           C[1] * (c[ly][lx - 1] + c[ly][lx + 1] + c[ly - 1][lx] +
                   c[ly + 1][lx]);
  if (SHAPE == 9)
    return C[0] * c[ly][lx] +
           C[1] * (c[ly][lx - 1] + c[ly][lx + 1] + c[ly - 1][lx] +
                   c[ly + 1][lx]) +
           C[2] * (c[ly - 1][lx - 1] + c[ly - 1][lx + 1] + c[ly + 1][lx - 1] +
                   c[ly + 1][lx + 1]);
  if (SHAPE == 7)
    return C[0] * c[ly][lx] +
           C[1] * (c[ly][lx - 1] + c[ly][lx + 1] + c[ly - 1][lx] +
                   c[ly + 1][lx] + m[ly][lx] + p[ly][lx]);
  T edges = c[ly - 1][lx - 1] + c[ly - 1][lx + 1] + c[ly + 1][lx - 1] +
            c[ly + 1][lx + 1] + m[ly][lx - 1] + m[ly][lx + 1] +
            p[ly][lx - 1] + p[ly][lx + 1] + m[ly - 1][lx] + m[ly + 1][lx] +
            p[ly - 1][lx] + p[ly + 1][lx];
  T corners = m[ly - 1][lx - 1] + m[ly - 1][lx + 1] + m[ly + 1][lx - 1] +
              m[ly + 1][lx + 1] + p[ly - 1][lx - 1] + p[ly - 1][lx + 1] +
              p[ly + 1][lx - 1] + p[ly + 1][lx + 1];
  T s = C[0] * c[ly][lx] + C[2] * edges + C[3] * corners;
  if (SHAPE == 27)
    s += C[1] * (c[ly][lx - 1] + c[ly][lx + 1] + c[ly - 1][lx] +
                 c[ly + 1][lx] + m[ly][lx] + p[ly][lx]);
  return s;
}

/* Loads plane k of u (interior and first ghost layer) for tile (x0, y0)
 * into sh. */
template <typename T>
__device__ __forceinline__ void load_plane(T (*sh)[kBX + 2], const T *u,
                                           long long usy, long long usz,
                                           int x0, int y0, int nx, int ny,
                                           int k) {
  const int t = threadIdx.x + kBX * threadIdx.y;
  const T *pk = u + (long long)k * usz;
  for (int q = t; q < (kBX + 2) * (kBY + 2); q += kBX * kBY) {
    const int lx = q % (kBX + 2), ly = q / (kBX + 2);
    const int i = x0 - 1 + lx, j = y0 - 1 + ly;
    sh[ly][lx] = (i <= nx && j <= ny) ? __ldg(pk + i + (long long)j * usy)
                                      : T(0);
  }
}

/* One thread per (i, j) of a tile, walking a chunk of planes; tiles are
 * shared out grid-stride so the block count stays within the reduction
 * slots. */
template <typename T, int SHAPE, bool OUT, bool NORM>
__global__ void __launch_bounds__(kBX *kBY)
    k_sweep(const T *__restrict__ u, long long usy, long long usz,
            const T *__restrict__ b, long long bsy, long long bsz,
            T *__restrict__ o, long long osy, long long osz, int nx, int ny,
            int nz, int tiles_x, int tiles_y, int zchunk, int nchunks,
            sweep_c<T> c, double *part) {
  constexpr bool D3 = SHAPE == 7 || SHAPE == 26 || SHAPE == 27;
  __shared__ T sh[D3 ? 3 : 1][kBY + 2][kBX + 2];
  __shared__ double red[NORM ? kBX * kBY : 1];
  double acc = 0;
  const long long ntiles = (long long)tiles_x * tiles_y * nchunks;
  for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
    const int tx = (int)(t % tiles_x);
    const long long r = t / tiles_x;
    const int ty = (int)(r % tiles_y), ch = (int)(r / tiles_y);
    const int x0 = tx * kBX, y0 = ty * kBY;
    const int i = x0 + threadIdx.x, j = y0 + threadIdx.y;
    const bool act = i < nx && j < ny;
    const int k0 = D3 ? ch * zchunk : 0;
    const int k1 = D3 ? min(nz, k0 + zchunk) : 1;
    if (D3) {
      load_plane<T>(sh[0], u, usy, usz, x0, y0, nx, ny, k0 - 1);
      load_plane<T>(sh[D3 ? 1 : 0], u, usy, usz, x0, y0, nx, ny, k0);
    }
    for (int k = k0; k < k1; k++) {
      const int sm = D3 ? (k - k0) % 3 : 0, sc = D3 ? (k - k0 + 1) % 3 : 0,
                sp = D3 ? (k - k0 + 2) % 3 : 0;
      load_plane<T>(sh[sp], u, usy, usz, x0, y0, nx, ny, D3 ? k + 1 : k);
      __syncthreads();
      if (act) {
        const int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
        const T s = stencil_at<T, SHAPE>(sh[sm], sh[D3 ? sc : sp], sh[sp], ly,
                                         lx, c.c);
        const T bv = __ldg(b + i + (long long)j * bsy + (long long)k * bsz);
        const T res = c.bs * (bv + c.bsh) - s;
        if (OUT)
          o[i + (long long)j * osy + (long long)k * osz] =
              c.cu * sh[D3 ? sc : sp][ly][lx] + c.cr * res;
        if (NORM) acc += (double)res * (double)res;
      }
      __syncthreads();
    }
  }
  if (NORM) {
    const double s = block_sum(acc, red);
    if (threadIdx.x == 0 && threadIdx.y == 0) part[blockIdx.x] = s;
  }
}

template <typename T, int SHAPE, bool OUT, bool NORM>
strata_status launch_sweep(const strata__mg_sweep_args *a, double *res2) {
  const strata_field *u = a->u, *b = a->b;
  strata_field *out = a->out;
  strata_context *ctx = u->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const int nx = (int)u->d.n[0], ny = (int)u->d.n[1], nz = (int)u->d.n[2];
  const int tiles_x = (nx + kBX - 1) / kBX, tiles_y = (ny + kBY - 1) / kBY;
  const long long xy = (long long)tiles_x * tiles_y;
  /* enough tiles to fill the device four times over, planes chunked */
  const int want = 4 * st->prop.multiProcessorCount;
  int nchunks = 1;
  if (u->d.dims == 3 && xy < want) {
    nchunks = (int)((want + xy - 1) / xy);
    if (nchunks > nz) nchunks = nz;
  }
  const int zchunk = (nz + nchunks - 1) / nchunks;
  nchunks = (nz + zchunk - 1) / zchunk;
  long long ntiles = xy * nchunks;
  int slots = reduce_slots(ctx);
  long long grid = ntiles;
  if (grid > 65535) grid = 65535;
  if (NORM && grid > slots) grid = slots;
  if (NORM && grid < 1)
    return strata__fail(ctx, STRATA_EDEVICE,
                        "multigrid: no reduction scratch on the context");
  sweep_c<T> c;
  for (int q = 0; q < 4; q++) c.c[q] = (T)a->op.c[q];
  c.bs = (T)a->bscale;
  c.bsh = (T)a->bshift;
  c.cu = (T)a->cu;
  c.cr = (T)a->cr;
  const long long usy = (long long)u->L.pitch_x, usz = usy * (long long)u->L.pitch_y;
  const long long bsy = (long long)b->L.pitch_x, bsz = bsy * (long long)b->L.pitch_y;
  const long long osy = out ? (long long)out->L.pitch_x : 0,
                  osz = out ? osy * (long long)out->L.pitch_y : 0;
  k_sweep<T, SHAPE, OUT, NORM><<<(unsigned)grid, dim3(kBX, kBY), 0, st->stream>>>(
      (const T *)u->data + u->L.origin, usy, usz,
      (const T *)b->data + b->L.origin, bsy, bsz,
      out ? (T *)out->data + out->L.origin : (T *)NULL, osy, osz, nx, ny, nz,
      tiles_x, tiles_y, zchunk, nchunks, c, st->scratch);
  STRATA__LAUNCHED(ctx, "multigrid sweep kernel launch");
  if (NORM) return fold_to_host(ctx, (int)grid, res2);
  return STRATA_OK;
}

template <typename T>
strata_status sweep_typed(const strata__mg_sweep_args *a, int shape,
                          double *res2) {
  const int mode = !a->out ? 2 : a->res2 ? 1 : 0;
  switch (shape * 4 + mode) {
#define MG_CASE(S)                                                             \
  case S * 4 + 0: return launch_sweep<T, S, true, false>(a, res2);             \
  case S * 4 + 1: return launch_sweep<T, S, true, true>(a, res2);              \
  case S * 4 + 2: return launch_sweep<T, S, false, true>(a, res2);
    MG_CASE(5) MG_CASE(9) MG_CASE(7) MG_CASE(26) MG_CASE(27)
#undef MG_CASE
  }
  return strata__fail(a->u->ctx, STRATA_EINVAL,
                      "multigrid: internal error: stencil shape %d", shape);
}

int shape_of(const strata__mg_op *op) {
  if (op->dims == 2) return op->c[2] == 0 ? 5 : 9;
  if (op->c[2] == 0 && op->c[3] == 0) return 7;
  return op->c[1] == 0 ? 26 : 27;
}

/* ---- the transfer ------------------------------------------------------------ */

template <typename T>
__global__ void k_transfer(const T *__restrict__ in, long long isy,
                           long long isz, T *out, long long osy,
                           long long osz, const T *base, long long bsy,
                           long long bsz, int nx, int ny, int nz,
                           const int *__restrict__ ix,
                           const double *__restrict__ wxp, int wx,
                           const int *__restrict__ iy,
                           const double *__restrict__ wyp, int wy,
                           const int *__restrict__ iz,
                           const double *__restrict__ wzp, int wz, T beta,
                           T scale, int use_base) {
  const int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I >= nx) return;
  const long long rows = (long long)ny * nz;
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    const int J = (int)(r % ny), K = (int)(r / ny);
    T s = 0;
    for (int qz = 0; qz < wz; qz++) {
      const double wzv = __ldg(wzp + (long long)K * wz + qz);
      if (wzv == 0) continue;
      const long long kk = __ldg(iz + (long long)K * wz + qz);
      for (int qy = 0; qy < wy; qy++) {
        const double wyv = __ldg(wyp + (long long)J * wy + qy);
        if (wyv == 0) continue;
        const long long jj = __ldg(iy + (long long)J * wy + qy);
        const T *row = in + jj * isy + kk * isz;
        T t = 0;
        for (int qx = 0; qx < wx; qx++)
          t += (T)__ldg(wxp + (long long)I * wx + qx) *
               __ldg(row + __ldg(ix + (long long)I * wx + qx));
        s += (T)(wzv * wyv) * t;
      }
    }
    T *o = out + I + (long long)J * osy + (long long)K * osz;
    *o = use_base ? beta * base[I + (long long)J * bsy + (long long)K * bsz] +
                        scale * s
                  : scale * s;
  }
}

template <typename T>
strata_status transfer_typed(const strata__mg_transfer_args *a) {
  const strata_field *in = a->in, *base = a->base;
  strata_field *out = a->out;
  strata_context *ctx = out->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const int nx = (int)out->d.n[0], ny = (int)out->d.n[1], nz = (int)out->d.n[2];
  const int use_base = base && a->beta != 0;
  const long long rows = (long long)ny * nz;
  dim3 grid((unsigned)((nx + 127) / 128),
            (unsigned)(rows < 65535 ? rows : 65535));
  const strata__mg_band *bx = &a->band[0], *by = &a->band[1], *bz = &a->band[2];
  k_transfer<T><<<grid, 128, 0, st->stream>>>(
      (const T *)in->data + in->L.origin, (long long)in->L.pitch_x,
      (long long)in->L.pitch_x * (long long)in->L.pitch_y,
      (T *)out->data + out->L.origin, (long long)out->L.pitch_x,
      (long long)out->L.pitch_x * (long long)out->L.pitch_y,
      use_base ? (const T *)base->data + base->L.origin : (const T *)NULL,
      use_base ? (long long)base->L.pitch_x : 0,
      use_base ? (long long)base->L.pitch_x * (long long)base->L.pitch_y : 0,
      nx, ny, nz, bx->idx, bx->wt, bx->w, by->idx, by->wt, by->w, bz->idx,
      bz->wt, bz->w, (T)a->beta, (T)a->scale, use_base);
  STRATA__LAUNCHED(ctx, "multigrid transfer kernel launch");
  return STRATA_OK;
}

/* ---- axpby ---------------------------------------------------------------------- */

template <typename T, bool SUM>
__global__ void __launch_bounds__(256)
    k_axpby(T *y, long long ysy, long long ysz, const T *x, long long xsy,
            long long xsz, int nx, int ny, long long rows, T a, T b, T c,
            double *part) {
  __shared__ double red[SUM ? 256 : 1];
  double acc = 0;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const int j = (int)(r % ny);
    const long long k = r / ny;
    T *yr = y + j * ysy + k * ysz;
    const T *xr = x ? x + j * xsy + k * xsz : NULL;
    for (int i = threadIdx.x; i < nx; i += blockDim.x) {
      T v = c;
      if (xr) v += a * xr[i];
      if (b != T(0)) v += b * yr[i];
      yr[i] = v;
      if (SUM) acc += (double)v;
    }
  }
  if (SUM) {
    const double s = block_sum(acc, red);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
  }
}

template <typename T>
strata_status axpby_typed(strata_field *y, const strata_field *x, double a,
                          double b, double c, double *sum) {
  strata_context *ctx = y->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const int nx = (int)y->d.n[0], ny = (int)y->d.n[1];
  const long long rows = (long long)y->d.n[1] * (long long)y->d.n[2];
  long long grid = rows < 65535 ? rows : 65535;
  if (sum && grid > reduce_slots(ctx)) grid = reduce_slots(ctx);
  const long long ysy = (long long)y->L.pitch_x,
                  ysz = ysy * (long long)y->L.pitch_y;
  const long long xsy = x ? (long long)x->L.pitch_x : 0,
                  xsz = x ? xsy * (long long)x->L.pitch_y : 0;
  T *yp = (T *)y->data + y->L.origin;
  const T *xp = x ? (const T *)x->data + x->L.origin : (const T *)NULL;
  if (sum)
    k_axpby<T, true><<<(unsigned)grid, 256, 0, st->stream>>>(
        yp, ysy, ysz, xp, xsy, xsz, nx, ny, rows, (T)a, (T)b, (T)c,
        st->scratch);
  else
    k_axpby<T, false><<<(unsigned)grid, 256, 0, st->stream>>>(
        yp, ysy, ysz, xp, xsy, xsz, nx, ny, rows, (T)a, (T)b, (T)c, NULL);
  STRATA__LAUNCHED(ctx, "multigrid axpby kernel launch");
  if (sum) return fold_to_host(ctx, (int)grid, sum);
  return STRATA_OK;
}

/* ---- coarse ghost rules ------------------------------------------------------- */

struct mg_ghost_line {
  long long stride[3];
  long long n[3];
  int a, b, c;
  long long blo, bn, clo, cn;
  int klo, khi;
  double alo, ahi;
};

template <typename T>
__global__ void k_mg_ghosts(T *origin, mg_ghost_line A) {
  const long long total = A.bn * A.cn;
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       t < total; t += (long long)gridDim.x * blockDim.x) {
    const long long ib = A.blo + t % A.bn, ic = A.clo + t / A.bn;
    T *line = origin + ib * A.stride[A.b] + ic * A.stride[A.c];
    const long long s = A.stride[A.a], last = (A.n[A.a] - 1) * s;
    const T lo = A.klo == STRATA__MG_PERIODIC ? line[last]
                 : A.klo == STRATA__MG_MIRROR ? line[0]
                                              : (T)A.alo * line[0];
    const T hi = A.khi == STRATA__MG_PERIODIC ? line[0]
                 : A.khi == STRATA__MG_MIRROR ? line[last]
                                              : (T)A.ahi * line[last];
    line[-s] = lo;
    line[last + s] = hi;
  }
}

} // namespace

strata_status strata__cuda_mg_sweep(const strata__mg_sweep_args *a) {
  strata_context *ctx = a->u->ctx;
  MG_DEV(ctx);
  strata_status s = check_size(ctx, a->u);
  if (s != STRATA_OK) return s;
  double r2 = 0;
  const int shape = shape_of(&a->op);
  s = a->u->d.precision == STRATA_F32 ? sweep_typed<float>(a, shape, &r2)
                                      : sweep_typed<double>(a, shape, &r2);
  if (s == STRATA_OK && a->res2) *a->res2 = r2;
  return s;
}

strata_status strata__cuda_mg_transfer(const strata__mg_transfer_args *a) {
  strata_context *ctx = a->out->ctx;
  MG_DEV(ctx);
  strata_status s = check_size(ctx, a->out);
  if (s == STRATA_OK) s = check_size(ctx, a->in);
  if (s != STRATA_OK) return s;
  return a->out->d.precision == STRATA_F32 ? transfer_typed<float>(a)
                                           : transfer_typed<double>(a);
}

strata_status strata__cuda_mg_axpby(strata_field *y, const strata_field *x,
                                    double a, double b, double c,
                                    double *sum) {
  strata_context *ctx = y->ctx;
  MG_DEV(ctx);
  strata_status s = check_size(ctx, y);
  if (s != STRATA_OK) return s;
  return y->d.precision == STRATA_F32 ? axpby_typed<float>(y, x, a, b, c, sum)
                                      : axpby_typed<double>(y, x, a, b, c, sum);
}

strata_status strata__cuda_mg_ghosts(strata_field *f,
                                     const strata__mg_ghost *g) {
  strata_context *ctx = f->ctx;
  MG_DEV(ctx);
  strata_status s = check_size(ctx, f);
  if (s != STRATA_OK) return s;
  strata__cuda_state *st = strata__cu_state(ctx);
  const long long px = (long long)f->L.pitch_x, py = (long long)f->L.pitch_y;
  mg_ghost_line A;
  memset(&A, 0, sizeof A);
  A.stride[0] = 1;
  A.stride[1] = px;
  A.stride[2] = px * py;
  for (int q = 0; q < 3; q++) A.n[q] = (long long)f->d.n[q];
  const long long e[3] = {f->g[0] ? 1 : 0, f->g[1] ? 1 : 0, f->g[2] ? 1 : 0};
  for (int ax = 0; ax < f->d.dims; ax++) {
    A.a = ax;
    A.b = (ax + 1) % 3;
    A.c = (ax + 2) % 3;
    A.blo = A.b < ax ? -e[A.b] : 0;
    A.bn = A.n[A.b] + (A.b < ax ? 2 * e[A.b] : 0);
    A.clo = A.c < ax ? -e[A.c] : 0;
    A.cn = A.n[A.c] + (A.c < ax ? 2 * e[A.c] : 0);
    A.klo = g->kind[2 * ax];
    A.khi = g->kind[2 * ax + 1];
    A.alo = g->alpha[2 * ax];
    A.ahi = g->alpha[2 * ax + 1];
    long long total = A.bn * A.cn;
    unsigned grid = (unsigned)((total + 255) / 256);
    if (grid > 65535) grid = 65535;
    if (grid < 1) grid = 1;
    if (f->d.precision == STRATA_F32)
      k_mg_ghosts<float><<<grid, 256, 0, st->stream>>>(
          (float *)f->data + f->L.origin, A);
    else
      k_mg_ghosts<double><<<grid, 256, 0, st->stream>>>(
          (double *)f->data + f->L.origin, A);
    STRATA__LAUNCHED(ctx, "multigrid ghost kernel launch");
  }
  return STRATA_OK;
}
