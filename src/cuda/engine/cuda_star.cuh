/* The per-plane body of the 2.5D star walks fed through a shared-memory
 * ring (streamcp and streamrq in seeds/stream.cu, streamtma and streamws in
 * ops/star_tma.cuh), and its y terms, which streamv shares. */
#ifndef STRATA_CUDA_STAR_CUH
#define STRATA_CUDA_STAR_CUH

#include "cuda_device.cuh"
#include "core/point.h"

namespace {

/* The y terms of a star for a thread's W rows: rows -R .. W-1+R of my
 * columns, each read once and added to each of my W points; my own rows
 * (mine) are in registers, the others come from the shared tile sb (row
 * pitch TW, R halo rows above the block's rows, XO vectors left of the
 * block's first column: its x halo, or 0 when the halo is kept apart). */
template <typename T, int R, int W, int V, int XO>
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
      v = lds_v<T, V>(sb + (R + ty * W + d) * TW + (XO + tx) * V);
#pragma unroll
    for (int r = 0; r < W; r++) {
      const int m = d > r ? d - r : r - d;
      if (m >= 1 && m <= R)
#pragma unroll
        for (int e = 0; e < V; e++)
          acc[r].v[e] = strata__pt_term(acc[r].v[e], w.cy[m], v.v[e]);
    }
  }
}

/* One output plane of a radius-R star for a thread's W rows of V columns.
 * q: the register queue, plane k + d of my rows in q[(base + d) % NQ]
 * (base is a constant once the caller's loop is unrolled); sb: the shared
 * tile of plane k, row pitch TW, with R halo rows above and below the
 * block's rows, XO vectors left of the block's first column; my rows start
 * at tile row R + ty*W, my columns at tile column (XO + tx)*V.  xwin(r, c,
 * xs) fills xs with the x window of my row r: HV vectors each side of mine
 * (c, in the middle). */
template <typename T, int R, int W, int V, int HV, int XO, int NQ, typename X>
__device__ __forceinline__ void
star_plane_x(const strata__vec<T, V> (&q)[NQ][W], int base, const T *sb,
             int TW, int tx, int ty, const strata__w<T> &w,
             strata__vec<T, V> (&acc)[W], X &&xwin) {
#define QS(d) q[(base + (d)) % NQ]
#pragma unroll
  for (int r = 0; r < W; r++) {
#pragma unroll
    for (int e = 0; e < V; e++) acc[r].v[e] = w.c0 * QS(0)[r].v[e];
#pragma unroll
    for (int m = 1; m <= R; m++)
#pragma unroll
      for (int e = 0; e < V; e++)
        acc[r].v[e] = strata__pt_term(acc[r].v[e], w.cz[m],
                                      QS(-m)[r].v[e] + QS(m)[r].v[e]);
    T xs[(2 * HV + 1) * V];
    xwin(r, QS(0)[r], xs);
#pragma unroll
    for (int m = 1; m <= R; m++)
#pragma unroll
      for (int e = 0; e < V; e++)
        acc[r].v[e] = strata__pt_term(acc[r].v[e], w.cx[m],
                                      xs[HV * V + e - m] + xs[HV * V + e + m]);
  }
  star_y<T, R, W, V, XO>(QS(0), sb, TW, tx, ty, w, acc);
#undef QS
}

/* The tile with its x halo in every row (HV vectors each side): every x
 * neighbour comes from 16-byte loads of the tile row (the halo vectors
 * hold more than the R values used; the rest are never read into a sum). */
template <typename T, int R, int W, int V, int HV, int NQ>
__device__ __forceinline__ void star_plane(const strata__vec<T, V> (&q)[NQ][W],
                                           int base, const T *sb, int TW,
                                           int tx, int ty,
                                           const strata__w<T> &w,
                                           strata__vec<T, V> (&acc)[W]) {
  star_plane_x<T, R, W, V, HV, HV, NQ>(
      q, base, sb, TW, tx, ty, w, acc,
      [&](int r, const strata__vec<T, V> &c, T (&xs)[(2 * HV + 1) * V]) {
        strata__xwin<T, V, HV>(sb + (R + ty * W + r) * TW + tx * V, c, xs);
      });
}

/* Where a thread finds its x neighbours when the tile holds only the
 * block's own BX vectors of columns (row pitch BX*V) and the HV halo
 * vectors each side of its rows sit apart (star_plane_split): from element
 * hoff on, the left HV vectors of each of the block's rows, then (hsz
 * elements on) the right ones.  Neighbour h (vectors tx - HV .. tx - 1,
 * then tx + 1 .. tx + HV) of my row r is at off[h] + r*step[h]. */
template <int HV> struct star_xnb {
  int off[2 * HV], step[2 * HV];
  __device__ __forceinline__ star_xnb(int tx, int ty, int BX, int W, int R,
                                      int V, int hoff, int hsz) {
    const int TW = BX * V, hrow = ty * W * HV * V;
#pragma unroll
    for (int h = 0; h < 2 * HV; h++) {
      const int j = tx + (h < HV ? h - HV : h - HV + 1); /* its vector */
      if (j < 0) {
        off[h] = hoff + hrow + (j + HV) * V;
        step[h] = HV * V;
      } else if (j >= BX) {
        off[h] = hoff + hsz + hrow + (j - BX) * V;
        step[h] = HV * V;
      } else {
        off[h] = (R + ty * W) * TW + j * V;
        step[h] = TW;
      }
    }
  }
};

/* The tile whose x halo is kept apart (star_xnb; TW = BX*V): the same
 * sums from the same values. */
template <typename T, int R, int W, int V, int HV, int NQ>
__device__ __forceinline__ void
star_plane_split(const strata__vec<T, V> (&q)[NQ][W], int base, const T *sb,
                 int TW, const star_xnb<HV> &nb, int tx, int ty,
                 const strata__w<T> &w, strata__vec<T, V> (&acc)[W]) {
  star_plane_x<T, R, W, V, HV, 0, NQ>(
      q, base, sb, TW, tx, ty, w, acc,
      [&](int r, const strata__vec<T, V> &c, T (&xs)[(2 * HV + 1) * V]) {
#pragma unroll
        for (int h = 0; h < 2 * HV; h++) {
          const strata__vec<T, V> v =
              lds_v<T, V>(sb + nb.off[h] + r * nb.step[h]);
          const int at = h < HV ? h : h + 1;
#pragma unroll
          for (int e = 0; e < V; e++) xs[at * V + e] = v.v[e];
        }
#pragma unroll
        for (int e = 0; e < V; e++) xs[HV * V + e] = c.v[e];
      });
}

} // namespace

#endif
