/* The CUDA engine's multigrid kernels: the weighted-Jacobi sweep
 * fused with the residual and its norm (3D: k_sweep3, the kdv
 * method: 16-byte vectors, one xy plane in shared memory, partial sums of
 * three output planes in registers, the next plane of u and of b
 * prefetched in registers; 2D and unaligned fields: k_sweep, an xy tile
 * with halo in shared memory, three planes rotating along z), the separable banded
 * transfer (restriction and prolongation-and-correct), axpby with a sum,
 * and the coarse ghost rules.  The contracts are in src/core/internal.h
 * (strata__mg_*); src/cpu/cpu_multigrid.c is the oracle.  Sums are
 * reduced per block into the context's scratch buffer and folded by one
 * block in a fixed order, so they are deterministic. */
#include "cuda_device.cuh"
#include "core/point.h"
#include "mg_common.cuh"

#include <stdint.h>
#include <string.h>

#include <atomic>

namespace {

constexpr int kBX = 32, kBY = 16;   /* sweep tile: 512 threads */

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
  const T u = c[ly][lx];
  if (SHAPE == 5 || SHAPE == 9 || SHAPE == 7) {
    const T faces =
        SHAPE == 7 ? strata__pt_faces6(c[ly][lx - 1], c[ly][lx + 1],
                                       c[ly - 1][lx], c[ly + 1][lx], m[ly][lx],
                                       p[ly][lx])
                   : strata__pt_faces4(c[ly][lx - 1], c[ly][lx + 1],
                                       c[ly - 1][lx], c[ly + 1][lx]);
    const T edges = SHAPE == 9 ? strata__pt_corners4(c[ly - 1][lx - 1],
                                                      c[ly - 1][lx + 1],
                                                      c[ly + 1][lx - 1],
                                                      c[ly + 1][lx + 1])
                               : T(0);
    return strata__pt_mg_op(SHAPE, C, u, faces, edges, T(0));
  }
  const T edges = strata__pt_edges12(
      c[ly - 1][lx - 1], c[ly - 1][lx + 1], c[ly + 1][lx - 1],
      c[ly + 1][lx + 1], m[ly][lx - 1], m[ly][lx + 1], p[ly][lx - 1],
      p[ly][lx + 1], m[ly - 1][lx], m[ly + 1][lx], p[ly - 1][lx],
      p[ly + 1][lx]);
  const T corners = strata__pt_corners8(
      m[ly - 1][lx - 1], m[ly - 1][lx + 1], m[ly + 1][lx - 1],
      m[ly + 1][lx + 1], p[ly - 1][lx - 1], p[ly - 1][lx + 1],
      p[ly + 1][lx - 1], p[ly + 1][lx + 1]);
  const T faces = SHAPE == 27 ? strata__pt_faces6(c[ly][lx - 1], c[ly][lx + 1],
                                                  c[ly - 1][lx], c[ly + 1][lx],
                                                  m[ly][lx], p[ly][lx])
                              : T(0);
  return strata__pt_mg_op(SHAPE, C, u, faces, edges, corners);
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
        const T res = strata__pt_mg_residual(c.bs, c.bsh, bv, s);
        if (OUT)
          o[i + (long long)j * osy + (long long)k * osz] =
              strata__pt_mg_jacobi(c.cu, c.cr, sh[D3 ? sc : sp][ly][lx], res);
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

/* ---- the 3D sweep, 2.5D streaming with 16-byte vectors ---------------------
 *
 * A block of kS3X x kS3Y threads owns a tile of kS3X*V x kS3Y points (V =
 * 16 bytes / sizeof(T)) and walks a chunk [k0, k1) of planes.  Input plane
 * p (k0-1 .. k1, ghosts included) is stored with its halo (one vector each
 * side in x, one row each side in y) into one of two shared buffers, then
 * each thread adds plane p's contributions to the partial sums of output
 * planes p-1 (a0), p (a1) and p+1 (a2); a0 is then complete and plane p-1 is
 * finished: res = bs (b + bsh) - a0, out = cu u + cr res, sum res^2.  Plane
 * p+1 of u and plane p of b are loaded into registers while plane p is
 * computed.  One barrier per plane: the buffer written at plane p was last
 * read at plane p-2, before the barrier of plane p-1 (the buffer index runs
 * on across tiles, so this holds from one tile to the next as well). */
constexpr int kS3X = 32, kS3Y = 8;       /* 256 threads */
constexpr int kS3T = kS3X * kS3Y;
constexpr int kS3Slots = ((kS3X + 2) * (kS3Y + 2) + kS3T - 1) / kS3T; /* 2 */

/* Plain (write-back) masked vector store: the next sweep or the transfer
 * reads this field, and on the coarser levels it fits in L2. */
template <typename T, int V>
__device__ __forceinline__ void st_masked(T *p, const strata__vec<T, V> &x,
                                          int nvalid) {
  if (nvalid >= V) {
    sts_v<T, V>(p, x);
  } else {
#pragma unroll
    for (int e = 0; e < V; e++)
      if (e < nvalid) p[e] = x.v[e];
  }
}

template <typename T, int SHAPE, bool OUT, bool NORM>
__global__ void __launch_bounds__(kS3T, 3)
    k_sweep3(const T *__restrict__ u, long long usy, long long usz,
             const T *__restrict__ b, long long bsy, long long bsz,
             T *__restrict__ o, long long osy, long long osz, int nx, int ny,
             int nz, int tiles_x, int tiles_y, int zchunk, int nchunks,
             sweep_c<T> c, double *part) {
  constexpr int V = 16 / (int)sizeof(T);
  constexpr int TWv = kS3X + 2, TW = TWv * V, TH = kS3Y + 2;
  constexpr int NT = TWv * TH;
  typedef strata__vec<T, V> vec;
  __shared__ __align__(16) T sh[2][TH * TW];
  __shared__ double red[NORM ? kS3T : 1];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = tx + kS3X * ty;
  const T C0 = c.c[0], C1 = c.c[1], C2 = c.c[2], C3 = c.c[3];
  double acc = 0;
  int buf = 0;
  const long long ntiles = (long long)tiles_x * tiles_y * nchunks;
  for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
    const int btx = (int)(t % tiles_x);
    const long long r = t / tiles_x;
    const int bty = (int)(r % tiles_y), ch = (int)(r / tiles_y);
    const int x0 = btx * kS3X * V, y0 = bty * kS3Y;
    const int k0 = ch * zchunk, k1 = min(nz, k0 + zchunk);

    /* slot s of this thread: tile vector tid + s * kS3T (row, col), the
     * vector of u at x = x0 + (col - 1) V, y = y0 - 1 + row; vectors past
     * the ghost layer (x > nx or y > ny) are not read (zero) */
    long long off[kS3Slots];
    int so[kS3Slots];
    bool ok[kS3Slots], act[kS3Slots];
#pragma unroll
    for (int s = 0; s < kS3Slots; s++) {
      const int q = tid + s * kS3T;
      act[s] = q < NT;
      const int row = q / TWv, col = q % TWv;
      const int x = x0 + (col - 1) * V, y = y0 - 1 + row;
      ok[s] = act[s] && x <= nx && y <= ny;
      off[s] = x + (long long)y * usy;
      so[s] = row * TW + col * V;
    }

    const int pfirst = k0 - 1, plast = k1;
    vec ld[kS3Slots];
#pragma unroll
    for (int s = 0; s < kS3Slots; s++)
      ld[s] = ok[s] ? ldg_v<T, V>(u + off[s] + (long long)pfirst * usz)
                    : zero_v<T, V>();

    const int i = x0 + tx * V, j = y0 + ty;
    const bool mine = i < nx && j < ny;
    const int nvalid = nx - i; /* points of my vector inside, when mine */
    T a0[V], a1[V], a2[V], uc[V];
    vec bv = zero_v<T, V>();
#pragma unroll
    for (int e = 0; e < V; e++) a0[e] = a1[e] = a2[e] = uc[e] = T(0);

    for (int p = pfirst; p <= plast; p++) {
      T *sb = sh[buf];
#pragma unroll
      for (int s = 0; s < kS3Slots; s++)
        if (act[s]) sts_v<T, V>(sb + so[s], ld[s]);
      if (p < plast) {
#pragma unroll
        for (int s = 0; s < kS3Slots; s++)
          ld[s] = ok[s] ? ldg_v<T, V>(u + off[s] + (long long)(p + 1) * usz)
                        : zero_v<T, V>();
      }
      __syncthreads();

      /* my V points' 3x3 neighbourhood in plane p: xs[row][0 .. V+1] */
      const T *base = sb + (ty + 1) * TW + (tx + 1) * V;
      T xs[3][V + 2];
#pragma unroll
      for (int rr = 0; rr < 3; rr++) {
        const T *rp = base + (rr - 1) * TW;
        if (SHAPE != 7 || rr == 1) {
          xs[rr][0] = rp[-1];
          xs[rr][V + 1] = rp[V];
        } else {
          xs[rr][0] = xs[rr][V + 1] = T(0);
        }
        const vec cv = lds_v<T, V>(rp);
#pragma unroll
        for (int e = 0; e < V; e++) xs[rr][e + 1] = cv.v[e];
      }
      /* plane p feeds output p with C0 (centre), C1 (faces), C2 (edges)
       * and outputs p -+ 1 with C1 (centre), C2 (faces), C3 (corners) */
#pragma unroll
      for (int e = 0; e < V; e++) {
        const T cc = xs[1][e + 1];
        const T f = xs[1][e] + xs[1][e + 2] + xs[0][e + 1] + xs[2][e + 1];
        T same, nb;
        if (SHAPE == 7) {
          same = C0 * cc + C1 * f;
          nb = C1 * cc;
        } else {
          const T k4 = xs[0][e] + xs[0][e + 2] + xs[2][e] + xs[2][e + 2];
          if (SHAPE == 26) {
            same = C0 * cc + C2 * k4;
            nb = C2 * f + C3 * k4;
          } else {
            same = C0 * cc + C1 * f + C2 * k4;
            nb = C1 * cc + C2 * f + C3 * k4;
          }
        }
        a0[e] += nb;
        a1[e] += same;
        a2[e] += nb;
      }

      /* plane p-1 is complete */
      if (p - 1 >= k0 && mine) {
        vec ov;
#pragma unroll
        for (int e = 0; e < V; e++) {
          const T res = strata__pt_mg_residual(c.bs, c.bsh, bv.v[e], a0[e]);
          if (OUT) ov.v[e] = strata__pt_mg_jacobi(c.cu, c.cr, uc[e], res);
          if (NORM && e < nvalid) acc += (double)res * (double)res;
        }
        if (OUT)
          st_masked<T, V>(o + i + (long long)j * osy + (long long)(p - 1) * osz,
                          ov, nvalid);
      }
#pragma unroll
      for (int e = 0; e < V; e++) {
        a0[e] = a1[e];
        a1[e] = a2[e];
        a2[e] = T(0);
        uc[e] = xs[1][e + 1];
      }
      /* b of plane p, used for output p at the next plane */
      if (mine && p >= k0 && p < k1)
        bv = ldg_v<T, V>(b + i + (long long)j * bsy + (long long)p * bsz);
      buf ^= 1;
    }
  }
  if (NORM) {
    const double s = block_sum(acc, red);
    if (tid == 0) part[blockIdx.x] = s;
  }
}

/* Blocks of k_sweep3 resident per multiprocessor, per device ordinal and
 * instantiation (only the z chunking depends on it). */
template <typename T, int SHAPE, bool OUT, bool NORM>
strata_status sweep3_per_sm(strata_context *ctx, int dev, int *per_sm) {
  static std::atomic<int> cache[64];
  if (dev >= 0 && dev < 64) {
    const int v = cache[dev].load(std::memory_order_relaxed);
    if (v > 0) {
      *per_sm = v;
      return STRATA_OK;
    }
  }
  int n = 0;
  STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                      &n, k_sweep3<T, SHAPE, OUT, NORM>, kS3T, 0));
  if (n < 1) n = 1;
  if (dev >= 0 && dev < 64) cache[dev].store(n, std::memory_order_relaxed);
  *per_sm = n;
  return STRATA_OK;
}

/* The vector path needs every row of u, b and out to start on 16 bytes
 * (docs/design.md: interior rows are 128-byte aligned). */
template <typename T> bool vec_ok(const strata_field *f) {
  if (!f) return true;
  const T *p = (const T *)f->data + f->L.origin;
  return (uintptr_t)p % 16 == 0 && (f->L.pitch_x * sizeof(T)) % 16 == 0;
}

template <typename T, int SHAPE, bool OUT, bool NORM>
strata_status launch_sweep3(const strata__mg_sweep_args *a, double *res2) {
  constexpr int V = 16 / (int)sizeof(T);
  const strata_field *u = a->u, *b = a->b;
  strata_field *out = a->out;
  strata_context *ctx = u->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const int nx = (int)u->d.n[0], ny = (int)u->d.n[1], nz = (int)u->d.n[2];
  const int tiles_x = ((nx + V - 1) / V + kS3X - 1) / kS3X;
  const int tiles_y = (ny + kS3Y - 1) / kS3Y;
  const long long xy = (long long)tiles_x * tiles_y;
  int per_sm = 1;
  strata_status s = sweep3_per_sm<T, SHAPE, OUT, NORM>(ctx, st->device, &per_sm);
  if (s != STRATA_OK) return s;
  const long long cap = NORM ? (long long)reduce_slots(ctx) : 65535;
  if (NORM && cap < 1)
    return strata__fail(ctx, STRATA_EDEVICE,
                        "multigrid: no reduction scratch on the context");
  int nchunks = strata__cu_zchunks(xy > (1 << 30) ? (1 << 30) : (int)xy,
                                   per_sm, st->prop.multiProcessorCount, nz, 2);
  /* no more tiles than blocks: lower the chunking first */
  while (nchunks > 1 && xy * nchunks > cap) nchunks--;
  const int zchunk = (nz + nchunks - 1) / nchunks;
  nchunks = (nz + zchunk - 1) / zchunk;
  const long long ntiles = xy * nchunks;
  const long long grid = ntiles < cap ? ntiles : cap;
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
  k_sweep3<T, SHAPE, OUT, NORM><<<(unsigned)grid, dim3(kS3X, kS3Y), 0, st->stream>>>(
      (const T *)u->data + u->L.origin, usy, usz,
      (const T *)b->data + b->L.origin, bsy, bsz,
      out ? (T *)out->data + out->L.origin : (T *)NULL, osy, osz, nx, ny, nz,
      tiles_x, tiles_y, zchunk, nchunks, c, st->scratch);
  STRATA__LAUNCHED(ctx, "multigrid sweep (3D) kernel launch");
  if (NORM) return fold_to_host(ctx, (int)grid, res2);
  return STRATA_OK;
}

/* 3D shapes on aligned fields take k_sweep3, the rest k_sweep. */
template <typename T, int SHAPE, bool OUT, bool NORM>
strata_status run_sweep(const strata__mg_sweep_args *a, double *res2) {
  if constexpr (SHAPE == 7 || SHAPE == 26 || SHAPE == 27) {
    if (a->u->d.dims == 3 && vec_ok<T>(a->u) && vec_ok<T>(a->b) &&
        vec_ok<T>(a->out))
      return launch_sweep3<T, SHAPE, OUT, NORM>(a, res2);
  }
  return launch_sweep<T, SHAPE, OUT, NORM>(a, res2);
}

template <typename T>
strata_status sweep_typed(const strata__mg_sweep_args *a, int shape,
                          double *res2) {
  const int mode = !a->out ? 2 : a->res2 ? 1 : 0;
  switch (shape * 4 + mode) {
#define MG_CASE(S)                                                             \
  case S * 4 + 0: return run_sweep<T, S, true, false>(a, res2);                \
  case S * 4 + 1: return run_sweep<T, S, true, true>(a, res2);                 \
  case S * 4 + 2: return run_sweep<T, S, false, true>(a, res2);
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
