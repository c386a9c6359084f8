/* The per-plane body of the plane-accumulation (kd) method, shared by the
 * radius-1 kernels fed by registers and cp.async (seeds/kd.cu) and by
 * tensor copies (seeds/kd_tma.cu). */
#ifndef STRATA_CUDA_KD_CUH
#define STRATA_CUDA_KD_CUH

#include "engine/cuda_device.cuh"

namespace {

enum { KD_COPY = 0, KD_STAR7 = 1, KD_SYM27 = 2, KD_BOX27 = 3 };

/* One input plane of a radius-1 operator for a thread's V columns of W
 * rows (kd, kdv, kdcp): base points at its first point in the shared tile
 * (row pitch TW; the rows above and below and one value each side are
 * there).  ao completes output plane p - 1, am gets plane p's own weights,
 * an starts plane p + 1. */
template <typename T, int MODE, int W, int V>
__device__ __forceinline__ void kd_plane(const T *base, int TW, T (&ao)[W][V],
                                         T (&am)[W][V], T (&an)[W][V],
                                         const strata__w<T> &w) {
  typedef strata__vec<T, V> vec;
  /* rows -1 .. W of my columns, with one neighbour each side */
  T xs[W + 2][V + 2];
#pragma unroll
  for (int r = 0; r < W + 2; r++) {
    const T *rp = base + (r - 1) * TW;
    const bool inner = r >= 1 && r <= W;
    if (MODE != KD_STAR7 || inner) {
      xs[r][0] = rp[-1];
      xs[r][V + 1] = rp[V];
    } else {
      xs[r][0] = xs[r][V + 1] = T(0);
    }
    vec c = lds_v<T, V>(rp);
#pragma unroll
    for (int e = 0; e < V; e++) xs[r][e + 1] = c.v[e];
  }
  if constexpr (MODE == KD_SYM27) {
    T h[W + 2][V];
#pragma unroll
    for (int r = 0; r < W + 2; r++)
#pragma unroll
      for (int e = 0; e < V; e++) h[r][e] = xs[r][e] + xs[r][e + 2];
#pragma unroll
    for (int t = 0; t < W; t++)
#pragma unroll
      for (int e = 0; e < V; e++) {
        const T c = xs[t + 1][e + 1];
        const T f = h[t + 1][e] + xs[t][e + 1] + xs[t + 2][e + 1];
        const T k4 = h[t][e] + h[t + 2][e];
        const T same = strata__pt_sym27_plane(w.K, c, f, k4);
        const T nb = strata__pt_sym27_plane(w.K + 1, c, f, k4);
        ao[t][e] += nb;
        am[t][e] += same;
        an[t][e] = nb;
      }
  } else {
#pragma unroll
    for (int t = 0; t < W; t++)
#pragma unroll
      for (int e = 0; e < V; e++) {
        const T c = xs[t + 1][e + 1];
        if constexpr (MODE == KD_STAR7) {
          const T same = strata__pt_term(
              strata__pt_term(w.c0 * c, w.cx[1], xs[t + 1][e] + xs[t + 1][e + 2]),
              w.cy[1], xs[t][e + 1] + xs[t + 2][e + 1]);
          const T nb = w.cz[1] * c;
          ao[t][e] += nb;
          am[t][e] += same;
          an[t][e] = nb;
        } else {
          /* input plane p feeds output p-dz with weight K[dz] */
          T s0 = ao[t][e], s1 = am[t][e], s2 = T(0);
#pragma unroll
          for (int dy = 0; dy < 3; dy++)
#pragma unroll
            for (int dx = 0; dx < 3; dx++) {
              const T v = xs[t + dy][e + dx];
              s0 = strata__pt_term(s0, w.K[18 + dy * 3 + dx], v);
              s1 = strata__pt_term(s1, w.K[9 + dy * 3 + dx], v);
              s2 = strata__pt_term(s2, w.K[dy * 3 + dx], v);
            }
          ao[t][e] = s0;
          am[t][e] = s1;
          an[t][e] = s2;
        }
      }
  }
}

} // namespace

#endif
