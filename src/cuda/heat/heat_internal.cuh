/* The fused heat kernels' shared parts (heat_fused2d.cu, heat_fused3d.cu,
 * heat_fused3d_reg.cuh, heat_fused3d_box.cuh, heat_fused3d_tune.cu): their
 * parameters, the point updates and row helpers the kernels share, and the
 * launchers one file calls in another.  The scheme is described in
 * heat_fused3d.cu. */
#ifndef STRATA_CUDA_HEAT_INTERNAL_CUH
#define STRATA_CUDA_HEAT_INTERNAL_CUH

#include "solver_common.cuh"
#include "core/point.h"

namespace strata_cuheat {

template <typename T> struct fused_par {
  const T *in; /* interior point (0,0,0) of in */
  T *out;      /* interior point (0,0,0) of out */
  long long isy, isz, osy, osz;
  int n[3];
  int clo[3], chi[3]; /* computable range per axis */
  int h[3];           /* halo per axis: H on used axes, 0 else */
  int tile[3];        /* outputs per tile along x, y (z: the chunk) */
  int ntl[3];         /* tiles along x, y; chunks along z */
  int s;              /* fused steps */
  int pw, ph;         /* shared plane: row length and rows */
  int xsafe, yread;   /* k_fused2d_warp, k_fused3d_reg: columns < xsafe,
                         rows < yread and planes < zread lie inside the
                         input's allocation */
  int zread;
  int lread;          /* along the last axis: planes (rows in 2D) < lread
                         lie inside the input's allocation and the cone of
                         the outputs asked for */
  /* k_fused3d_reg, k_fused3d_box: y tiles (ytile): tile 0 computes rows
   * from ycs0 and gives outputs [0, ye0); tiles 1 .. ntl[1] - 2 give
   * tile[1] rows each; the last one computes up to row yhin and gives the
   * rest */
  int ycs0, ye0, yhin;
  T c0;
  T w[3][STRATA_MAX_RADIUS + 1];
  T C[4];
};

/* A register-tile shape of the 3D kernels: V values a lane, NW warps, LR
 * lanes a row (32: a warp is a row; 16: two rows). */
struct tile3 {
  int V, NW, LR, W; /* W: rows a thread (k_fused3d_reg) */
};

template <typename T> using fz_kern = void (*)(const fused_par<T>);

/* The 3D register-tile kernel of shape c for s fused steps, or nullptr
 * (heat_fused3d_reg.cuh: the 7-point star; heat_fused3d_box.cuh: the
 * symmetric 27-point box). */
template <typename T> fz_kern<T> fz3_kernel_reg(int s, const tile3 &c);
template <typename T> fz_kern<T> fz3_kernel_box(int s, const tile3 &c);

/* The 1D and 2D launches (heat_fused2d.cu). */
template <typename T>
strata_status fused2d(strata_context *ctx, fused_par<T> &P, int D, int R,
                      bool sym, int s, const strata_field *in);

/* The 3D radius-1 register-tile launches (heat_fused3d_tune.cu). */
template <typename T>
strata_status fused3d_reg(strata_context *ctx, fused_par<T> P, bool sym,
                          int s, const strata_field *in);

} // namespace strata_cuheat

namespace {

using strata_cuheat::fused_par;
using strata_cuheat::tile3;
using strata_cuheat::fz_kern;

constexpr int kThreads2d = 512;
constexpr int kThreads3d = 256;

/* Star stencil at c (shared memory) with row stride sy; z neighbours at
 * zm[k-1] (plane z - k) and zp[k-1] (plane z + k), same offset: the
 * chain of core/point.h's star (its terms k by k, x then y then z; the
 * terms one by one, so each pair is loaded where it is added). */
template <typename T, int R, int D>
__device__ __forceinline__ T star_at(const T *c, int sy, const T *const *zm,
                                     const T *const *zp, int off,
                                     const fused_par<T> &P) {
  T acc = P.c0 * c[0];
#pragma unroll
  for (int k = 1; k <= R; k++) {
    acc = strata__pt_term(acc, P.w[0][k], c[-k] + c[k]);
    if (D >= 2) acc = strata__pt_term(acc, P.w[1][k], c[-k * sy] + c[k * sy]);
    if (D >= 3)
      acc = strata__pt_term(acc, P.w[2][k], zm[k - 1][off] + zp[k - 1][off]);
  }
  return acc;
}

/* Symmetric 27-point box at offset off of planes m (z - 1), c, p (z + 1),
 * row stride sy: core/point.h's sym27 and its neighbour sums. */
template <typename T>
__device__ __forceinline__ T sym_at(const T *m, const T *c, const T *p,
                                    int off, int sy, const fused_par<T> &P) {
  m += off;
  c += off;
  p += off;
  const T faces = strata__pt_faces6(c[-1], c[1], c[-sy], c[sy], m[0], p[0]);
  const T edges = strata__pt_edges12(c[-1 - sy], c[1 - sy], c[-1 + sy],
                                     c[1 + sy], m[-1], m[1], p[-1], p[1],
                                     m[-sy], m[sy], p[-sy], p[sy]);
  const T corners = strata__pt_corners8(m[-1 - sy], m[1 - sy], m[-1 + sy],
                                        m[1 + sy], p[-1 - sy], p[1 - sy],
                                        p[-1 + sy], p[1 + sy]);
  return strata__pt_sym27(P.C, c[0], faces, edges, corners);
}

/* A block's threads share out the w x h points of a region, point q =
 * x + y w going to thread q mod nthr; the walk steps (x, y) by nthr points
 * without a division per point.  The loop runs while y < h. */
struct walk {
  int x, y, dx, dy, w;
};
__device__ __forceinline__ walk walk_start(int tid, int nthr, int w) {
  walk k;
  k.w = w > 0 ? w : 1;
  k.x = tid % k.w;
  k.y = w > 0 ? tid / k.w : 0x7fffffff; /* empty region: no iteration */
  k.dx = nthr % k.w;
  k.dy = nthr / k.w;
  return k;
}
__device__ __forceinline__ void walk_next(walk &k) {
  k.x += k.dx;
  k.y += k.dy;
  if (k.x >= k.w) {
    k.x -= k.w;
    k.y++;
  }
}


constexpr int kWarps2dw = 4;

template <typename T, int V, int S> struct rows2w {
  T v[S][V];
};

/* Level k's point i of the middle row m, with o the row below and n the
 * row above; l and r the x neighbours of points 0 and V - 1.  The order of
 * the terms is star_at's (the CPU engine's). */
template <typename T, int V>
__device__ __forceinline__ T pt2w(const T *o, const T *m, const T *n, T l,
                                  T r, int i, const fused_par<T> &P) {
  const T left = i == 0 ? l : m[i > 0 ? i - 1 : 0];
  const T right = i == V - 1 ? r : m[i < V - 1 ? i + 1 : V - 1];
  T acc = P.c0 * m[i];
  acc = strata__pt_term(acc, P.w[0][1], left + right);
  return strata__pt_term(acc, P.w[1][1], o[i] + n[i]);
}

/* One input row p through every level.  For level j (0 = the input),
 * o.v[j], m.v[j], nw.v[j] hold its rows p - j - 2, p - j - 1 and p - j;
 * nw is written here, level by level: level k computes row p - k from the
 * three rows of level k - 1 around it. */
template <typename T, int V, int S, bool PIN>
__device__ __forceinline__ void row2w(rows2w<T, V, S> &o, rows2w<T, V, S> &m,
                                      rows2w<T, V, S> &nw, const T *in, int p,
                                      unsigned xpin, bool store, T *orow,
                                      int nvalid, const fused_par<T> &P) {
  constexpr unsigned full = 0xffffffffu;
#pragma unroll
  for (int i = 0; i < V; i++) nw.v[0][i] = in[i];
#pragma unroll
  for (int k = 1; k <= S; k++) {
    const T *a = o.v[k - 1], *b = m.v[k - 1], *c = nw.v[k - 1];
    const T l = __shfl_up_sync(full, b[V - 1], 1);
    const T r = __shfl_down_sync(full, b[0], 1);
    const int q = p - k;
    if (k < S) {
      /* pinned points by selects, not branches: a branch here would make
       * the register rotation of X, Y, Z cost moves at every join */
      const unsigned pin =
          PIN ? ((q < P.clo[1] || q >= P.chi[1]) ? ~0u : xpin) : 0u;
#pragma unroll
      for (int i = 0; i < V; i++) {
        T v = pt2w<T, V>(a, b, c, l, r, i, P);
        if (PIN && ((pin >> i) & 1u)) v = b[i];
        nw.v[k][i] = v;
      }
    } else if (store) { /* level S: rows [y0, y1) only, never pinned */
      constexpr int VV = 16 / (int)sizeof(T); /* values a 16-byte store */
#pragma unroll
      for (int h = 0; h < V / VV; h++) {
        strata__vec<T, VV> x;
#pragma unroll
        for (int i = 0; i < VV; i++)
          x.v[i] = pt2w<T, V>(a, b, c, l, r, h * VV + i, P);
        if (nvalid > h * VV)
          store_masked<T, VV>(orow + (long long)q * P.osy + h * VV, x,
                              nvalid - h * VV);
      }
    }
  }
}

/* Rows in flight per warp: each lane copies its own 16-byte pieces of row
 * p + PD2W into shared memory by cp.async while rows p .. p + PD2W - 1 wait
 * there, so no register holds a row before it is used (a multiple of 3: the
 * loop takes three rows a trip). */
constexpr int PD2W = 9;

constexpr int PD3W = 3;

/* Tile ty's rows: the first row it computes (cs; it computes NR rows) and
 * the outputs [a, b) it writes.  A tile inside the grid loses S rows on
 * each side to the cone; one at an edge whose ghost row is pinned
 * (Dirichlet) needs only that row, so it starts at -1 (or ends at n) and
 * gives S - 1 rows more. */
template <typename T>
__device__ __forceinline__ void ytile(const fused_par<T> &P, int ty, int NR,
                                      int S, int &cs, int &a, int &b) {
  if (ty == 0) {
    cs = P.ycs0;
    a = 0;
    b = P.ntl[1] == 1 ? P.n[1] : P.ye0;
  } else {
    a = P.ye0 + (ty - 1) * P.tile[1];
    if (ty == P.ntl[1] - 1) {
      cs = P.yhin + 1 - NR;
      b = P.n[1];
    } else {
      cs = a - S;
      b = a + P.tile[1];
    }
  }
}

/* One cp.async of a lane's V values (8 or 16 bytes). */
template <typename T, int V>
__device__ __forceinline__ void cp_lane(T *d, const T *g) {
  if constexpr (V * sizeof(T) == 8) {
    cp_async8(d, g, 8);
  } else {
#pragma unroll
    for (int h = 0; h < V * (int)sizeof(T) / 16; h++)
      cp_async16(d + h * (16 / (int)sizeof(T)), g + h * (16 / (int)sizeof(T)),
                 16);
  }
}

/* A lane's V outputs of its row w (from orow, the first row's) at plane
 * q, in 16-byte stores, the columns from nvalid on left out. */
template <typename T, int V>
__device__ __forceinline__ void store_lane(T *orow, int w, int q,
                                           const T (&v)[V], int nvalid,
                                           const fused_par<T> &P) {
  constexpr int VV = 16 / (int)sizeof(T);
  constexpr int VS = V < VV ? V : VV; /* values a store */
  T *ow = orow + (long long)q * P.osz;
  if (w > 0) ow += (long long)w * P.osy;
#pragma unroll
  for (int h = 0; h < V / VS; h++) {
    strata__vec<T, VS> x;
#pragma unroll
    for (int i = 0; i < VS; i++) x.v[i] = v[h * VS + i];
    if (nvalid > h * VS) store_masked<T, VS>(ow + h * VS, x, nvalid - h * VS);
  }
}

template <typename T, int V>
__device__ __forceinline__ strata__vec<T, V> vec_of(const T (&a)[V]) {
  strata__vec<T, V> x;
#pragma unroll
  for (int i = 0; i < V; i++) x.v[i] = a[i];
  return x;
}

template <typename T, int V, int S, bool PIN, int LR, int W>
__device__ __forceinline__ void plane3w(rows2w<T, V, S> (&o)[W],
                                        rows2w<T, V, S> (&m)[W],
                                        rows2w<T, V, S> (&nw)[W], const T *ex,
                                        int lsz, int ou, int od,
                                        const T (&in)[W][V], int p,
                                        unsigned xpin, const bool (&ypin)[W],
                                        const bool (&store)[W], T *orow,
                                        int nvalid, const fused_par<T> &P) {
  constexpr unsigned full = 0xffffffffu;
  /* ex: this parity's buffer, [level][row][LR V]; lsz a level's size; ou,
   * od: the slots of the row above my first row and below my last; my
   * rows' y neighbours among themselves are in my registers */
#pragma unroll
  for (int w = 0; w < W; w++)
#pragma unroll
    for (int i = 0; i < V; i++) nw[w].v[0][i] = in[w][i];
#pragma unroll
  for (int k = 1; k <= S; k++) {
#pragma unroll
    for (int w = 0; w < W; w++) {
      const T *a = o[w].v[k - 1], *b = m[w].v[k - 1], *c = nw[w].v[k - 1];
      const T l = __shfl_up_sync(full, b[V - 1], 1, LR);
      const T r = __shfl_down_sync(full, b[0], 1, LR);
      const T *lv = ex + (size_t)(k - 1) * lsz;
      const strata__vec<T, V> ym =
          w == 0 ? lds_v<T, V>(lv + ou)
                 : vec_of<T, V>(m[w > 0 ? w - 1 : 0].v[k - 1]);
      const strata__vec<T, V> yp =
          w == W - 1 ? lds_v<T, V>(lv + od)
                     : vec_of<T, V>(m[w < W - 1 ? w + 1 : 0].v[k - 1]);
      const int q = p - k;
      T v[V];
#pragma unroll
      for (int i = 0; i < V; i++) {
        const T left = i == 0 ? l : b[i > 0 ? i - 1 : 0];
        const T right = i == V - 1 ? r : b[i < V - 1 ? i + 1 : V - 1];
        T acc = P.c0 * b[i];
        acc = strata__pt_term(acc, P.w[0][1], left + right);
        acc = strata__pt_term(acc, P.w[1][1], ym.v[i] + yp.v[i]);
        acc = strata__pt_term(acc, P.w[2][1], a[i] + c[i]);
        v[i] = acc;
      }
      if (k < S) {
        const unsigned pin =
            PIN ? ((ypin[w] || q < P.clo[2] || q >= P.chi[2]) ? ~0u : xpin)
                : 0u;
#pragma unroll
        for (int i = 0; i < V; i++)
          nw[w].v[k][i] = (PIN && ((pin >> i) & 1u)) ? b[i] : v[i];
      } else if (store[w]) {
        store_lane<T, V>(orow, w, q, v, nvalid, P);
      }
    }
  }
}

/* h[i] = c[i - 1] + c[i + 1] over a row of LR lanes of V values */
template <typename T, int V, int LR>
__device__ __forceinline__ void row_sums(const T *c, T *h) {
  constexpr unsigned full = 0xffffffffu;
  const T l = __shfl_up_sync(full, c[V - 1], 1, LR);
  const T r = __shfl_down_sync(full, c[0], 1, LR);
#pragma unroll
  for (int i = 0; i < V; i++)
    h[i] = (i == 0 ? l : c[i > 0 ? i - 1 : 0]) +
           (i == V - 1 ? r : c[i < V - 1 ? i + 1 : V - 1]);
}

inline strata_status fz_device(strata_context *ctx) {
  STRATA__CU(ctx, cudaSetDevice(strata__cu_state(ctx)->device));
  return STRATA_OK;
}

/* Raises the kernel's dynamic shared-memory limit when it needs more than
 * the default 48 KB. */
template <typename K>
strata_status fz_smem_attr(strata_context *ctx, K kernel, size_t smem) {
  if (smem > 48 * 1024)
    STRATA__CU(ctx, cudaFuncSetAttribute(
                        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                        (int)smem));
  return STRATA_OK;
}

} // namespace

#endif
