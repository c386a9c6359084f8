/* The per-plane body of the 2.5D star walks fed through a shared-memory
 * ring (streamcp and streamrq in cuda_stream.cu, streamtma and streamws in
 * cuda_tma.cu), and its y terms, which streamv shares. */
#ifndef STRATA_CUDA_STAR_CUH
#define STRATA_CUDA_STAR_CUH

#include "cuda_device.cuh"

namespace {

/* The y terms of a star for a thread's W rows: rows -R .. W-1+R of my
 * columns, each read once and added to each of my W points; my own rows
 * (mine) are in registers, the others come from the shared tile sb (row
 * pitch TW, R halo rows above the block's rows, HV halo vectors left). */
template <typename T, int R, int W, int V, int HV>
__device__ __forceinline__ void star_y(const strata__vec<T, V> (&mine)[W],
                                       const T *sb, int TW, int tx, int ty,
                                       const strata__w<T> &w,
                                       strata__vec<T, V> (&acc)[W]) {
  typedef strata__vec<T, V> vec;
#pragma unroll
  for (int d = -R; d < W + R; d++) {
    vec v;
    if (d >= 0 && d < W)
      v = mine[d < 0 ? 0 : d >= W ? W - 1 : d];
    else
      v = lds_v<T, V>(sb + (R + ty * W + d) * TW + (HV + tx) * V);
#pragma unroll
    for (int r = 0; r < W; r++) {
      const int m = d > r ? d - r : r - d;
      if (m >= 1 && m <= R)
#pragma unroll
        for (int e = 0; e < V; e++) acc[r].v[e] += w.cy[m] * v.v[e];
    }
  }
}

/* One output plane of a radius-R star for a thread's W rows of V columns.
 * q: the register queue, plane k + d of my rows in q[(base + d) % NQ]
 * (base is a constant once the caller's loop is unrolled); sb: the shared
 * tile of plane k, row pitch TW, with R halo rows above and below the
 * block's rows and HV halo vectors each side; my rows start at tile row
 * R + ty*W, my columns at tile column (HV + tx)*V.  Every x neighbour comes
 * from 16-byte loads of the tile row (the halo vectors hold more than the
 * R values used; the rest are never read into a sum). */
template <typename T, int R, int W, int V, int HV, int NQ>
__device__ __forceinline__ void star_plane(const strata__vec<T, V> (&q)[NQ][W],
                                           int base, const T *sb, int TW,
                                           int tx, int ty,
                                           const strata__w<T> &w,
                                           strata__vec<T, V> (&acc)[W]) {
  typedef strata__vec<T, V> vec;
#define QS(d) q[(base + (d)) % NQ]
#pragma unroll
  for (int r = 0; r < W; r++) {
#pragma unroll
    for (int e = 0; e < V; e++) acc[r].v[e] = w.c0 * QS(0)[r].v[e];
#pragma unroll
    for (int m = 1; m <= R; m++)
#pragma unroll
      for (int e = 0; e < V; e++)
        acc[r].v[e] += w.cz[m] * (QS(-m)[r].v[e] + QS(m)[r].v[e]);
    /* x: HV vectors each side of mine in the tile row */
    const T *rowp = sb + (R + ty * W + r) * TW + tx * V;
    T xs[(2 * HV + 1) * V];
    strata__xwin<T, V, HV>(rowp, QS(0)[r], xs);
#pragma unroll
    for (int m = 1; m <= R; m++)
#pragma unroll
      for (int e = 0; e < V; e++)
        acc[r].v[e] += w.cx[m] * (xs[HV * V + e - m] + xs[HV * V + e + m]);
  }
  star_y<T, R, W, V, HV>(QS(0), sb, TW, tx, ty, w, acc);
#undef QS
}

} // namespace

#endif
