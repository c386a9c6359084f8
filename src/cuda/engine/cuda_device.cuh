/* Device-side helpers shared by the kernel files: 16-byte vectors, loads
 * through the read-only path, streaming stores, and the launch helpers. */
#ifndef STRATA_CUDA_DEVICE_CUH
#define STRATA_CUDA_DEVICE_CUH

#include <string.h>

#include "cuda_internal.h"
#include "core/point.h"

/* V values of T in one aligned unit: a 16-byte vector when V*sizeof(T)==16. */
template <typename T, int V> struct __align__(sizeof(T) * V) strata__vec {
  T v[V];
};

template <typename T, int V>
__device__ __forceinline__ strata__vec<T, V> ldg_v(const T *p) {
  strata__vec<T, V> r;
  if constexpr (V == 1) {
    r.v[0] = __ldg(p);
  } else if constexpr (sizeof(T) == 4 && V == 4) {
    float4 t = __ldg(reinterpret_cast<const float4 *>(p));
    r.v[0] = t.x; r.v[1] = t.y; r.v[2] = t.z; r.v[3] = t.w;
  } else if constexpr (sizeof(T) == 8 && V == 2) {
    double2 t = __ldg(reinterpret_cast<const double2 *>(p));
    r.v[0] = t.x; r.v[1] = t.y;
  } else {
    r = *reinterpret_cast<const strata__vec<T, V> *>(p);
  }
  return r;
}

/* Store, evict-first (the output is not read again by this kernel: keep L2
 * for the input's halos). */
template <typename T, int V>
__device__ __forceinline__ void stcs_v(T *p, const strata__vec<T, V> &x) {
  if constexpr (V == 1) {
    __stcs(p, x.v[0]);
  } else if constexpr (sizeof(T) == 4 && V == 4) {
    __stcs(reinterpret_cast<float4 *>(p),
           make_float4(x.v[0], x.v[1], x.v[2], x.v[3]));
  } else if constexpr (sizeof(T) == 8 && V == 2) {
    __stcs(reinterpret_cast<double2 *>(p), make_double2(x.v[0], x.v[1]));
  } else if constexpr (sizeof(T) == 4 && V == 2) {
    __stcs(reinterpret_cast<float2 *>(p), make_float2(x.v[0], x.v[1]));
  } else {
    *reinterpret_cast<strata__vec<T, V> *>(p) = x;
  }
}

/* Stores the first nvalid (1..V) values; a whole vector when all are valid. */
template <typename T, int V>
__device__ __forceinline__ void store_masked(T *p, const strata__vec<T, V> &x,
                                             int nvalid) {
  if (nvalid >= V) {
    stcs_v<T, V>(p, x);
  } else {
#pragma unroll
    for (int e = 0; e < V; e++)
      if (e < nvalid) __stcs(p + e, x.v[e]);
  }
}

template <typename T, int V>
__device__ __forceinline__ strata__vec<T, V> zero_v() {
  strata__vec<T, V> r;
#pragma unroll
  for (int e = 0; e < V; e++) r.v[e] = T(0);
  return r;
}

template <typename T, int V>
__device__ __forceinline__ strata__vec<T, V> lds_v(const T *p) {
  return *reinterpret_cast<const strata__vec<T, V> *>(p);
}
template <typename T, int V>
__device__ __forceinline__ void sts_v(T *p, const strata__vec<T, V> &x) {
  *reinterpret_cast<strata__vec<T, V> *>(p) = x;
}

/* cp.async (sm_80+): 16-byte global -> shared copies that bypass registers
 * and L1.  src_bytes 0 copies nothing and zero-fills the destination; the
 * source address must still be a valid one. */
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem,
                                           int src_bytes) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s),
               "l"(gmem), "r"(src_bytes)
               : "memory");
}
/* The 8-byte form (through L1: .cg takes 16 bytes only). */
__device__ __forceinline__ void cp_async8(void *smem, const void *gmem,
                                          int src_bytes) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s),
               "l"(gmem), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
/* Waits until at most N of this thread's committed groups are pending. */
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Asks L2 for the line holding p (no register, no wait). */
__device__ __forceinline__ void prefetch_l2(const void *p) {
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p));
}

/* The x window of a vector: HV vectors each side of mine, from the
 * shared-memory row rowp (the first of the left ones), with my vector c in
 * the middle. */
template <typename T, int V, int HV>
__device__ __forceinline__ void strata__xwin(const T *rowp,
                                             const strata__vec<T, V> &c,
                                             T (&xs)[(2 * HV + 1) * V]) {
  typedef strata__vec<T, V> vec;
#pragma unroll
  for (int h = 0; h < HV; h++) {
    const vec l = lds_v<T, V>(rowp + h * V);
    const vec r = lds_v<T, V>(rowp + (HV + 1 + h) * V);
#pragma unroll
    for (int e = 0; e < V; e++) {
      xs[h * V + e] = l.v[e];
      xs[(HV + 1 + h) * V + e] = r.v[e];
    }
  }
#pragma unroll
  for (int e = 0; e < V; e++) xs[HV * V + e] = c.v[e];
}

/* The wave step's Laplacian of one vector in the CPU engine's order:
 * the centre (c0 c), then per distance m the x, y and z pairs, each pair
 * summed before it is weighted by lap[m].  rowp: the first of the HV
 * vectors left of mine in its shared-memory row (the x window, returned in
 * xs with c in the middle); colp: my vector, rows TW apart (y); zm / zp:
 * the planes m below / above.  Used by the wave kernels of wave/
 * (wave_internal.cuh) and wave/wave_pair.cu. */
template <typename T, int R, int V, int HV>
__device__ __forceinline__ void
strata__wave_lap(const T (&lap)[STRATA_MAX_RADIUS + 1], T c0,
                 const strata__vec<T, V> &c,
                 const strata__vec<T, V> (&zm)[R],
                 const strata__vec<T, V> (&zp)[R], const T *rowp,
                 const T *colp, int TW, T (&xs)[(2 * HV + 1) * V],
                 T (&L)[V]) {
  typedef strata__vec<T, V> vec;
  strata__xwin<T, V, HV>(rowp, c, xs);
#pragma unroll
  for (int e = 0; e < V; e++) L[e] = c0 * c.v[e];
#pragma unroll
  for (int m = 1; m <= R; m++) {
    const vec ym = lds_v<T, V>(colp - m * TW);
    const vec yp = lds_v<T, V>(colp + m * TW);
    const T w = lap[m];
#pragma unroll
    for (int e = 0; e < V; e++) {
      L[e] = strata__pt_term(L[e], w, xs[HV * V + e - m] + xs[HV * V + e + m]);
      L[e] = strata__pt_term(L[e], w, ym.v[e] + yp.v[e]);
      L[e] = strata__pt_term(L[e], w, zm[m - 1].v[e] + zp[m - 1].v[e]);
    }
  }
}

/* Planes k0 .. k1-1 in trips of NQ: step(k, ph) with ph = (k - k0) % NQ, a
 * constant once the trip is unrolled, so the z queues of the 2.5D walks
 * rotate between named registers instead of moving.  k0 and k1 are the
 * same for the whole block, so steps with block barriers are safe.  One
 * copy of the trip, each step behind its (uniform) test, serves the last,
 * partial trip too: a separate tail copy doubled the code of the walk, and
 * for the wave step's kernels (tens of KB of code a trip) that cost time
 * (instruction cache); the stars' walks are not affected. */
template <int NQ, typename F>
__device__ __forceinline__ void strata__trips(int k0, int k1, F &&step) {
#pragma unroll 1
  for (int k = k0; k < k1; k += NQ) {
#pragma unroll
    for (int ph = 0; ph < NQ; ph++)
      if (k + ph < k1) step(k + ph, ph);
  }
}

/* Host side: converts a strata_stencil into the weights a kernel takes. */
template <typename T>
static inline strata__w<T> strata__weights(const strata_stencil *op) {
  strata__w<T> w;
  memset(&w, 0, sizeof w);
  w.c0 = (T)op->center;
  for (int k = 0; k <= STRATA_MAX_RADIUS; k++) {
    w.cx[k] = (T)op->coef[0][k];
    w.cy[k] = (T)op->coef[1][k];
    w.cz[k] = (T)op->coef[2][k];
  }
  if (op->kind == STRATA_STENCIL_BOX)
    for (int q = 0; q < 27; q++) w.K[q] = (T)op->box[q];
  if (op->kind == STRATA_STENCIL_BOX_SYMMETRIC)
    for (int q = 0; q < 4; q++) w.K[q] = (T)op->sym[q];
  w.kind = (int)op->kind;
  w.R = op->radius;
  w.axis = op->axis;
  w.dims = op->dims;
  return w;
}

/* Host side: raises a kernel's dynamic shared-memory limit when needed and
 * refuses sizes the device cannot give. */
template <typename K>
static inline strata_status strata__smem_opt_in(const strata__launch *L,
                                                K kernel, size_t bytes,
                                                const char *name) {
  if (bytes > L->smem_max)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block shape %dx%dx%d needs %zu bytes of shared "
                        "memory; the device gives at most %zu per block",
                        name, L->block[0], L->block[1], L->block[2], bytes,
                        L->smem_max);
  if (bytes > 48 * 1024)
    STRATA__CU(L->ctx, cudaFuncSetAttribute(
                           kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           (int)bytes));
  return STRATA_OK;
}

/* Host side: blocks of this kernel that fit on one multiprocessor. */
template <typename K>
static inline strata_status strata__occupancy(const strata__launch *L, K kernel,
                                              int threads, size_t smem,
                                              int *per_sm) {
  int n = 0;
  STRATA__CU(L->ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                         &n, kernel, threads, smem));
  if (n < 1)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "block shape %dx%dx%d cannot run on this device "
                        "(too many registers or too much shared memory)",
                        L->block[0], L->block[1], L->block[2]);
  *per_sm = n;
  return STRATA_OK;
}


/* The halo vector that copy slot q of a 2.5D tile stands for, shared by the
 * streaming kernels (stream, streamv, streamrq, the wave kernel).  The tile
 * has R halo rows above and below its TR interior rows of BX vectors, and
 * HV halo vectors left and right of each row; slots 0 .. 2R*BX-1 are the
 * y-halo rows, the next 2*HV*TR the x-halo, the rest inactive.  Gives the
 * slot's global element offset (*off), its offset in the shared tile of
 * row pitch TW (*smo), whether it is used (*act) and whether its vector lies
 * inside the loadable range (*ok). */
template <int R, int V, int HV>
__host__ __device__ __forceinline__ void
strata__halo_slot(int q, int BX, int TR, int TW, int x0, int y0, int nx,
                  int ny, long long sy, long long *off, int *smo, bool *ok,
                  bool *act) {
  const int HN = 2 * R * BX + 2 * HV * TR;
  *act = q < HN;
  int row = 0, col = 0;
  if (q < 2 * R * BX) {
    const int rr = q / BX;
    col = HV + q % BX;
    row = rr < R ? rr : rr + TR;
  } else if (q < HN) {
    const int h = q - 2 * R * BX, ri = h / (2 * HV), c = h % (2 * HV);
    row = R + ri;
    col = c < HV ? c : BX + c;
  }
  const int x = x0 + (col - HV) * V, y = y0 - R + row;
  *ok = *act && x < nx + R && y < ny + R;
  *off = x + (long long)y * sy;
  *smo = row * TW + col * V;
}

#endif
