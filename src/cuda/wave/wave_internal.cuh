/* The wave step's shared parts (wave_step.cu, wave_cpml.cu, wave_stream.cu,
 * wave_vd.cu, wave_tma_launch.cuh): its parameters, the point-update pieces
 * every update kernel uses (sponge, CPML, free-surface images) and the
 * launchers one file calls in another.  The phases of the step are
 * described in wave_step.cu. */
#ifndef STRATA_CUDA_WAVE_INTERNAL_CUH
#define STRATA_CUDA_WAVE_INTERNAL_CUH

#include "solver_common.cuh"
#include "core/point.h"

namespace strata_cuwave {

template <typename T> struct wave_slab {
  T *psi, *zeta;          /* interior point (0,0,0) of the slab fields */
  long long psy, psz;     /* their strides */
  int origin, lo, hi;     /* as strata__wave_slab */
};

template <typename T> struct wave_par {
  const T *u;             /* interior (0,0,0) of u^n */
  T *up;                  /* of u^{n-1} in, u^{n+1} out */
  const T *c2;            /* per point, or NULL */
  const double *c2_line;  /* per index of the last axis when c2 == NULL */
  const double *damp[3];  /* sponge e per index, or NULL */
  const double *pa[3], *pb[3];
  wave_slab<T> slab[6];   /* [axis * 2 + side]; psi == NULL: none */
  long long sy, sz;       /* strides of u, up and c2 (one layout) */
  int n[3];
  int s0[3], s1[3];       /* stencil nodes [s0, s1) per axis */
  int tiles_y, nchunks, zchunk;
  int any_damp;           /* a damp array exists on some axis */
  /* inface: every face is FREE or ZERO and the kernels that write up
   * (k_wavev, k_cpml_corr, k_sources) keep the FREE faces themselves (see
   * "Faces in the kernels"); no k_faces.  ffree[ax][side]: FREE faces. */
  int inface;
  int ffree[3][2];
  T lap[STRATA_MAX_RADIUS + 1], d1[STRATA_MAX_RADIUS + 1];
};

/* Whether CPML slab sl (a low side) and sl + 1 can share one launch of
 * k_cpml_slab: as wide and apart (no point corrected by both). */
template <typename T> inline bool slab_pairs(const wave_par<T> &P, int sl) {
  const wave_slab<T> &W = P.slab[sl], &W2 = P.slab[sl + 1];
  return W2.psi && W2.hi - W2.lo == W.hi - W.lo && W.hi <= W2.lo;
}

/* B' for slab sl (and sl + 1 with pair): k_cpml_slab on strm over the
 * planes (rows of a z slab) o < ocut and o >= ocut + oskip (wave_cpml.cu). */
template <typename T>
strata_status slab_pass(strata_context *ctx, cudaStream_t strm,
                        const wave_par<T> &P, int R, int sl, int pair,
                        int ocut, int oskip);

/* B, streamed (wave_stream.cu): k_wavev; *used = false (and nothing
 * launched) when the grid or the shared memory does not fit. */
template <typename T>
strata_status launch_stream(strata_context *ctx, strata__cuda_state *st,
                            const wave_par<T> &P, int R, bool *used);

/* B, streamed, for the variable-density 3D update and the 2D section
 * (wave_vd.cu): k_wsv, rb = b = 1/rho or NULL (2D constant density);
 * *used = false (and nothing launched) when it does not apply. */
template <typename T>
strata_status launch_sv(strata_context *ctx, strata__cuda_state *st,
                        const wave_par<T> &P, const T *rb, int D, int R,
                        bool *used);

/* B with tensor copies (wave_tma_launch.cuh): k_wavetma and its CPML tiles; see
 * launch_wavetma there for used, fused and cover. */
template <typename T>
strata_status launch_tma(strata_context *ctx, strata__cuda_state *st,
                         const wave_par<T> &P, const strata__wave_args *a,
                         int R, bool *used, int *fused, int cover[4]);

} // namespace strata_cuwave

namespace {

using strata_cuwave::wave_par;
using strata_cuwave::wave_slab;

constexpr int kWX = 32, kWY = 16; /* k_wave's block: one xy tile */


/* The update of a vector of up at plane k (core/point.h's wave and
 * wave_sponge, the CPU's): u+ = 2u - u- + c2 L, or with a sponge (P.any_damp; e = erow +
 * ex[e], erow the y then z damping, the CPU's order)
 * (2u - (1 - e) u- + c2 L) / (1 + e), divided only where e != 0 (for
 * e == 0 the two are the same: x (1 - 0) and x / (1 + 0) are exact). */
template <typename T, int V>
__device__ __forceinline__ strata__vec<T, V>
wave_update(const wave_par<T> &P, const strata__vec<T, V> &c,
            const strata__vec<T, V> &upv, const strata__vec<T, V> &c2v,
            const T (&L)[V], T erow, const T (&ex)[V]) {
  strata__vec<T, V> res;
  if (P.any_damp) {
#pragma unroll
    for (int e = 0; e < V; e++) {
      const T ee = erow + ex[e];
      if (ee == (T)0)
        res.v[e] = strata__pt_wave(c.v[e], upv.v[e], c2v.v[e], L[e]);
      else
        res.v[e] =
            strata__pt_wave_sponge(c.v[e], upv.v[e], c2v.v[e], L[e], ee);
    }
  } else {
#pragma unroll
    for (int e = 0; e < V; e++)
      res.v[e] = strata__pt_wave(c.v[e], upv.v[e], c2v.v[e], L[e]);
  }
  return res;
}

/* A thread's damping that no plane changes: of its row (y) and of its V
 * columns (x), 0 where there is none. */
template <typename T, int V>
__device__ __forceinline__ void wave_damp_rowcol(const wave_par<T> &P, int xv,
                                                 int j, T &ey, T (&ex)[V]) {
  ey = 0;
#pragma unroll
  for (int e = 0; e < V; e++) ex[e] = 0;
  if (!P.any_damp) return;
  if (P.damp[1]) ey = (T)P.damp[1][j < P.n[1] ? j : P.n[1] - 1];
  if (P.damp[0])
#pragma unroll
    for (int e = 0; e < V; e++)
      if (xv + e < P.n[0]) ex[e] = (T)P.damp[0][xv + e];
}

/* Faces in the kernels.  With FREE (and ZERO) faces only, the up values of
 * a step are final when the kernel that writes them stores them (the
 * update, then the CPML correction of the slab points, then the sources),
 * so each of those kernels also writes what k_faces would: 0 on every FREE
 * boundary node, and the odd image -v of a value v at distance q = 1..R
 * from a FREE face into the ghost at -q (or n - 1 + q), along that axis
 * only, as k_faces' lines do.  A line along another axis's boundary nodes
 * has only zeros, so its ghosts are 0 (STRATA__WF_FREE).  This saves
 * k_faces' pass over the faces (a large part of a step with six FREE
 * faces), most of it the x faces' scattered row ends. */

/* The ghosts of one value v of up at (i, j, k) (not a boundary node):
 * its odd images along each axis with a FREE face within R of it. */
template <typename T>
__device__ __forceinline__ void free_images(const wave_par<T> &P, int R, int i,
                                            int j, int k, T v) {
  T *up = P.up;
  const int c[3] = {i, j, k};
  const long long st[3] = {1, P.sy, P.sz};
  const long long o = i + (long long)j * P.sy + (long long)k * P.sz;
#pragma unroll
  for (int ax = 0; ax < 3; ax++) {
    const int n = P.n[ax];
    if (P.ffree[ax][0] && c[ax] >= 1 && c[ax] <= R)
      up[o - 2LL * c[ax] * st[ax]] = -v;
    if (P.ffree[ax][1] && c[ax] >= n - 1 - R && c[ax] <= n - 2)
      up[o + 2LL * (n - 1 - c[ax]) * st[ax]] = -v;
  }
}

/* up at (i, j, k) plus c L (c: c2 there, L: D1 psi + zeta), divided by
 * 1 + e where the sponge's damping e is on (the CPML correction kernels'
 * last step). */
template <typename T>
__device__ __forceinline__ T cpml_add(const wave_par<T> &P, int i, int j,
                                      int k, T up, T c, T L) {
  if (!P.any_damp) return up + c * L;
  T e = 0;
  if (P.damp[0]) e += (T)P.damp[0][i];
  if (P.damp[1]) e += (T)P.damp[1][j];
  if (P.damp[2]) e += (T)P.damp[2][k];
  return up + c * L / ((T)1 + e);
}

/* k_cpml_slab's correction at one point (i, j, k) with the profile's b and
 * a there (bv, av): zeta from its old value zo and the axis' terms (d2: the
 * second derivative, dpsi: D1 of the new psi) stored at *zp, then up's new
 * value from its old one w and c2 stored at *wp, with its FREE images. */
template <typename T, int R>
__device__ __forceinline__ void slab_correct(const wave_par<T> &P, T bv,
                                             T av, int i, int j, int k, T zo,
                                             T w, T c, T dpsi, T d2, T *zp,
                                             T *wp) {
  const T z = strata__pt_cpml_zeta(bv, av, zo, d2, dpsi);
  *zp = z;
  const T v = cpml_add<T>(P, i, j, k, w, c, dpsi + z);
  *wp = v;
  if (P.inface) free_images<T>(P, R, i, j, k, v);
}

/* The odd images along x of a vector's elements (nv: the vector negated;
 * row: x = 0 of its row), element by element, near a FREE x face. */
template <typename T, int V, int R>
__device__ __forceinline__ void free_images_x(const wave_par<T> &P, T *row,
                                              int xv,
                                              const strata__vec<T, V> &nv) {
  const int nx = P.n[0];
  if (P.ffree[0][0] && xv <= R) {
#pragma unroll
    for (int e = 0; e < V; e++)
      if (xv + e >= 1 && xv + e <= R) __stcs(row - (xv + e), nv.v[e]);
  }
  if (P.ffree[0][1] && xv + V >= nx - R) {
#pragma unroll
    for (int e = 0; e < V; e++) {
      const int i = xv + e;
      if (i >= nx - 1 - R && i <= nx - 2) __stcs(row + 2 * (nx - 1) - i, nv.v[e]);
    }
  }
}

/* k_wavev's stores of the vector v of row j, plane k (its boundary-node
 * elements already 0) with faces in the kernels: its elements inside
 * [0, nx), and their odd images along x (element by element), y and z
 * (the whole vector). */
template <typename T, int V, int R>
__device__ __forceinline__ void free_emit(const wave_par<T> &P, int xv, int j,
                                          int k, const strata__vec<T, V> &v) {
  const int nx = P.n[0], ny = P.n[1], nz = P.n[2];
  T *row = P.up + (long long)j * P.sy + (long long)k * P.sz;
  strata__vec<T, V> nv;
#pragma unroll
  for (int e = 0; e < V; e++) nv.v[e] = -v.v[e];
  auto put = [&](T *d, const strata__vec<T, V> &x) {
    if (xv + V <= nx) {
      stcs_v<T, V>(d, x);
    } else {
#pragma unroll
      for (int e = 0; e < V; e++)
        if (xv + e < nx) __stcs(d + e, x.v[e]);
    }
  };
  put(row + xv, v);
  free_images_x<T, V, R>(P, row, xv, nv);
  if (P.ffree[1][0] && j >= 1 && j <= R) put(row + xv - 2LL * j * P.sy, nv);
  if (P.ffree[1][1] && j >= ny - 1 - R && j <= ny - 2)
    put(row + xv + 2LL * (ny - 1 - j) * P.sy, nv);
  if (P.ffree[2][0] && k >= 1 && k <= R) put(row + xv - 2LL * k * P.sz, nv);
  if (P.ffree[2][1] && k >= nz - 1 - R && k <= nz - 2)
    put(row + xv + 2LL * (nz - 1 - k) * P.sz, nv);
}

/* free_emit out of line (P must live in parameter space: a
 * __grid_constant__ kernel parameter). */
template <typename T, int V, int R>
__device__ __noinline__ void free_emit_far(const wave_par<T> &P, int xv, int j,
                                           int k, strata__vec<T, V> v) {
  free_emit<T, V, R>(P, xv, j, k, v);
}

/* CPML correction of the point (i, j, k) along axis ax, side S: adds
 * D1 psi + zeta to L and updates zeta.  um[q-1] / upl[q-1] are u at -q / +q
 * along the axis, uc the centre.  CPU: FN(cpml_corr). */
template <typename T, int R>
__device__ __forceinline__ void cpml_at(const wave_slab<T> &S, int ax, int i,
                                        int j, int k, T uc, const T *um,
                                        const T *upl, const double *pa,
                                        const double *pb, const wave_par<T> &P,
                                        T &L) {
  const int li = ax == 0 ? i - S.origin : i, lj = ax == 1 ? j - S.origin : j,
            lk = ax == 2 ? k - S.origin : k;
  const long long off = li + (long long)lj * S.psy + (long long)lk * S.psz;
  const long long sp = ax == 0 ? 1 : ax == 1 ? S.psy : S.psz;
  const T *ps = S.psi + off;
  T dpsi = 0, d2 = P.lap[0] * uc;
#pragma unroll
  for (int q = 1; q <= R; q++) {
    dpsi += P.d1[q] * (ps[q * sp] - ps[-q * sp]);
    d2 += P.lap[q] * (upl[q - 1] + um[q - 1]);
  }
  const int c = ax == 0 ? i : ax == 1 ? j : k;
  const T ac = (T)pa[c], bc = (T)pb[c];
  T *ze = S.zeta + off;
  const T z = strata__pt_cpml_zeta(bc, ac, *ze, d2, dpsi);
  *ze = z;
  L = strata__pt_cpml_add(L, dpsi, z);
}

constexpr int kSlabMaxW = 64; /* the widest unit along the slab's axis */

/* Shared-memory elements of one warp of k_cpml_slab: u and psi of a row
 * (x slabs) or of 32 columns (y and z slabs). */
__host__ __device__ constexpr int slab_warp_elems(int ax, int Lw) {
  return ax == 0 ? 2 * Lw : 2 * 32 * Lw;
}
constexpr int kSlabWarps = 4; /* warps a block */
/* rows a warp of an x slab's unit when they are at most 32 points wide:
 * the rows' loads issued together hide their latency; more rows a warp
 * leave too few warps (docs/performance.md#acoustic-wave) */
constexpr int kSlabRows = 4;
/* the units of a slab's pass along w (see k_cpml_slab): rows of an x slab
 * (kSlabRows a unit when Lw <= 32), groups of 32 columns of a y or z slab */
__host__ __device__ inline int slab_units_w(int ax, int Lw, const int *n) {
  return ax != 0 ? (n[0] + 31) / 32
         : Lw <= 32 ? (n[1] + kSlabRows - 1) / kSlabRows
                    : n[1];
}
/* the widest fp64 y or z unit: 4 x 32 KB, inside the 227 KB a block may have */
static_assert(kSlabWarps * slab_warp_elems(1, kSlabMaxW) * sizeof(double) <=
                  227 * 1024,
              "k_cpml_slab's shared memory");

/* The x window of one vector (HV vectors left, mine, HV right, from its
 * tile row rowp) into xs, and L u into L in the CPU's order: centre, then
 * per k the x, y (the tile column colp, row pitch TW) and z pairs; plane
 * k + d of my column is q[(base + d) % NQ].  k_wavev and k_wavetma. */
template <typename T, int R, int V, int HV, int NQ>
__device__ __forceinline__ void wave_lap(const wave_par<T> &P, const T c0,
                                         const strata__vec<T, V> (&q)[NQ],
                                         int base, const T *rowp,
                                         const T *colp, int TW,
                                         T (&xs)[(2 * HV + 1) * V],
                                         T (&L)[V]) {
  strata__vec<T, V> zm[R], zp[R];
#pragma unroll
  for (int m = 1; m <= R; m++) {
    zm[m - 1] = q[(base - m) % NQ];
    zp[m - 1] = q[(base + m) % NQ];
  }
  strata__wave_lap<T, R, V, HV>(P.lap, c0, q[base % NQ], zm, zp, rowp, colp,
                                TW, xs, L);
}

} // namespace

#endif
