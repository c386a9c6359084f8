/* The CUDA engine's solver entries (issue 4): the second-order wave step
 * (acoustic wave and the explicit FDTD scheme), the Yee TM step, and
 * receiver sampling.  The contracts are in src/core/internal.h
 * (strata__wave_args, strata__yee_args, the sample entry); the oracle is
 * the CPU engine (src/cpu/cpu_solvers.inc), whose phases, ranges and
 * operation order these kernels follow:
 *
 * wave_step, launched on the context's stream with no host wait:
 *   A. (2D, and 3D grids the streaming kernels do not take) k_psi, one
 *      launch per CPML slab: psi = b psi + a D1 u over the slab's [lo, hi)
 *      along its axis (rows of y/z slabs with a == 0 are skipped, as on
 *      the CPU); the streamed 3D path does this after B, in B';
 *   B. k_wavetma (3D, sm_90): the update of up over the stencil nodes,
 *      fed by bulk tensor copies as streamws (see its comment), the rows
 *      of y CPML slabs and the planes of z CPML slabs (wave_yz) in
 *      launches of their own beside it on a side stream (wt_cpmly); k_wavev
 *      (3D elsewhere) the same streamed as streamcp (16-byte vectors,
 *      cp.async ring of u tiles, up and c2 copied ahead, one barrier per
 *      plane; see its comment).  k_wave (2D, or
 *      grids k_wavev does not take): the scalar 2.5D update: a 32 x 16
 *      block owns an xy tile and walks a chunk of z planes, the current
 *      plane's tile and halo in shared memory, the 2R + 1 z values of its
 *      column in registers; CPML corrections (zeta updated in place) where
 *      the point lies in a slab, sponge damping where a damp array exists;
 *   B'. (streamed) per CPML slab, after B: k_cpml_slab (psi and the
 *      correction c2 (D1 psi + zeta) / (1 + e) in one pass; both sides of
 *      an axis in one launch when they do not overlap), or k_psi then
 *      k_cpml_corr for slabs wider than its tile; an x or y slab that
 *      k_wavetma took in (wt_cpml, wt_cpmly) only gets k_psi on the planes
 *      B skips, a y slab its pass on the planes the y tiles leave (the z
 *      tiles', beside B), a z slab nothing;
 *   C. k_wave_sources: one thread adds the point sources in order;
 *   D. k_faces, one launch per axis (x, then y, then z: a later axis reads
 *      boundary nodes an earlier one wrote): one thread per line along the
 *      axis does side 0 then side 1 (FREE, PERIODIC, MUR) as the CPU does.
 *      In 3D with FREE and ZERO faces only, B, B', C and k_free_rows keep
 *      the FREE faces instead and D is skipped ("Faces in the kernels").
 * yee_step: H half step, ghost copies (periodic H, Ez^n next to Mur
 *   faces), E step with CPML, sources, Mur boundary nodes, periodic Ez
 *   ghosts: six kernels in that order, the last four only when needed.
 * sample: one thread per receiver, the weighted sum accumulated in double
 *   without contraction (__dmul_rn/__dadd_rn), in the CPU's order, so the
 *   samples of equal fields are equal bit for bit.
 *
 * Every point update uses the CPU's expression term for term; nvcc may
 * contract a multiply and an add into one FMA, so wave and Yee steps agree
 * with the CPU engine to rounding (tests/test_cuda_solvers.c gives the
 * tolerances). */
#include "cuda_device.cuh"
#include "cuda_tma.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>
#include <utility>

namespace {

strata_status sv_device(strata_context *ctx) {
  STRATA__CU(ctx, cudaSetDevice(strata__cu_state(ctx)->device));
  return STRATA_OK;
}

#define SV_DEVICE(ctx)                                                         \
  do {                                                                         \
    strata_status s_ = sv_device(ctx);                                         \
    if (s_ != STRATA_OK) return s_;                                            \
  } while (0)

unsigned sv_blocks(long long n, int threads) {
  long long b = (n + threads - 1) / threads;
  if (b > 65535) b = 65535;
  return (unsigned)(b < 1 ? 1 : b);
}

strata_status sv_check_axis(strata_context *ctx, const strata_field *f,
                            const char *who) {
  for (int a = 0; a < 3; a++)
    if (f->d.n[a] > ((size_t)1 << 30))
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "%s: the CUDA kernels take at most 2^30 points per "
                          "axis (axis %c has %zu)", who, "xyz"[a], f->d.n[a]);
  return STRATA_OK;
}

/* ======================================================================== */
/* Wave step                                                                 */
/* ======================================================================== */

constexpr int kWX = 32, kWY = 16; /* k_wave's block: one xy tile */

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

/* The sponge's division by 1 + e (>= 1): in fp32 the fast reciprocal
 * form (at most 2 ulp; the engines agree to rounding, not bit for bit, in
 * the update anyway), in fp64 the correctly rounded one. */
__device__ __forceinline__ double wave_div(double a, double b) { return a / b; }
__device__ __forceinline__ float wave_div(float a, float b) {
  return __fdividef(a, b);
}

/* The update of a vector of up at plane k (the CPU's expression term for
 * term): u+ = 2u - u- + c2 L, or with a sponge (P.any_damp; e = erow +
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
        res.v[e] = (T)2 * c.v[e] - upv.v[e] + c2v.v[e] * L[e];
      else
        res.v[e] = wave_div(
            (T)2 * c.v[e] - ((T)1 - ee) * upv.v[e] + c2v.v[e] * L[e],
            (T)1 + ee);
    }
  } else {
#pragma unroll
    for (int e = 0; e < V; e++)
      res.v[e] = (T)2 * c.v[e] - upv.v[e] + c2v.v[e] * L[e];
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
 * k_faces' pass over the faces (0.27 of a 0.99 ms step on 512^3 with six
 * FREE faces, H100), most of it the x faces' scattered row ends. */

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
  const T z = bv * zo + av * (d2 + dpsi);
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

/* With faces in the kernels: the rows of FREE boundary nodes that k_wavev
 * does not walk (y: rows 0 / ny - 1 of every plane; z: every row of planes
 * 0 / nz - 1) get 0, with their images (0: the lines along them are
 * boundary-node lines).  Thread = a 16-byte vector of a row; rows
 * grid-stride over blockIdx.y: first the y faces' rows (plane by plane),
 * then the z faces' (row by row). */
template <typename T, int R>
__global__ void __launch_bounds__(128) k_free_rows(const wave_par<T> P) {
  constexpr int V = 16 / (int)sizeof(T);
  const int xv = (int)(blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (xv >= P.n[0]) return;
  const int ny = P.n[1], nz = P.n[2];
  const long long ry = 2LL * nz, rows = ry + 2LL * ny;
  const strata__vec<T, V> zero = zero_v<T, V>();
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    int side, j, k;
    if (r < ry) {
      side = (int)(r / nz);
      k = (int)(r % nz);
      j = side ? ny - 1 : 0;
      if (!P.ffree[1][side]) continue;
    } else {
      side = (int)((r - ry) / ny);
      j = (int)((r - ry) % ny);
      k = side ? nz - 1 : 0;
      if (!P.ffree[2][side]) continue;
    }
    free_emit<T, V, R>(P, xv, j, k, zero);
  }
}

/* A. psi = b psi + a D1 u on one slab.  One thread per point of the slab's
 * range: x over blockIdx.x / threadIdx.x, rows (j, k) grid-stride over y. */
template <typename T, int R>
__global__ void __launch_bounds__(128)
    k_psi(const T *__restrict__ u, long long sy, long long sz, T *psi,
          long long psy, long long psz, int ax, int origin, int r0x, int r1x,
          int r0y, int r1y, int r0z, int r1z, const double *__restrict__ pa,
          const double *__restrict__ pb, wave_par<T> P) {
  const int i = r0x + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= r1x) return;
  const int ny = r1y - r0y;
  const long long rows = (long long)ny * (r1z - r0z);
  const long long su = ax == 0 ? 1 : ax == 1 ? sy : sz;
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    const int j = r0y + (int)(r % ny), k = r0z + (int)(r / ny);
    const int c = ax == 0 ? i : ax == 1 ? j : k;
    if (ax != 0 && pa[c] == 0.0) continue;
    const T *uu = u + i + (long long)j * sy + (long long)k * sz;
    T d = 0;
#pragma unroll
    for (int q = 1; q <= R; q++) d += P.d1[q] * (uu[q * su] - uu[-q * su]);
    const int li = ax == 0 ? i - origin : i, lj = ax == 1 ? j - origin : j,
              lk = ax == 2 ? k - origin : k;
    T *ps = psi + li + (long long)lj * psy + (long long)lk * psz;
    *ps = (T)pb[c] * *ps + (T)pa[c] * d;
  }
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
  const T z = bc * *ze + ac * (d2 + dpsi);
  *ze = z;
  L += dpsi + z;
}

/* B'. The CPML terms of one slab, after the streaming update (which then
 * leaves them out):  up += c2 (D1 psi + zeta) / (1 + e),  zeta updated as
 * in cpml_at.  The same sum as the fused form, rounded differently (the
 * engines agree to rounding).  One thread per point of the slab's stencil
 * nodes, mapped as in k_psi. */
template <typename T, int R>
__global__ void __launch_bounds__(128)
    k_cpml_corr(wave_par<T> P, int slab, int r0x, int r1x, int r0y, int r1y,
                int r0z, int r1z) {
  const int i = r0x + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= r1x) return;
  const int ax = slab / 2;
  const wave_slab<T> &S = P.slab[slab];
  const int ny = r1y - r0y;
  const long long rows = (long long)ny * (r1z - r0z);
  const long long su = ax == 0 ? 1 : ax == 1 ? P.sy : P.sz;
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    const int j = r0y + (int)(r % ny), k = r0z + (int)(r / ny);
    const long long o = i + (long long)j * P.sy + (long long)k * P.sz;
    const T *uu = P.u + o;
    T um[R], upl[R];
#pragma unroll
    for (int q = 1; q <= R; q++) {
      um[q - 1] = uu[-q * su];
      upl[q - 1] = uu[q * su];
    }
    T L = 0;
    cpml_at<T, R>(S, ax, i, j, k, uu[0], um, upl, P.pa[ax], P.pb[ax], P, L);
    const T c2 = P.c2 ? P.c2[o] : (T)P.c2_line[k];
    P.up[o] = cpml_add<T>(P, i, j, k, P.up[o], c2, L);
    if (P.inface) free_images<T>(P, R, i, j, k, P.up[o]);
  }
}

/* B'' (the streamed 3D path): A and B' of one slab in one pass, after the
 * update.  Each warp takes units of the slab on its own (no block
 * barriers): the whole of the slab's [lo - R, hi + R) along its axis
 * (Lw <= kSlabMaxW positions) for
 *  - an x slab: one row (j, k); lane f holds positions f and f + 32; the
 *    row's u and psi go to the warp's shared memory, so that each lane
 *    reads its neighbours' along x;
 *  - a y or z slab: 32 columns x (one plane k, or one row j); lane f walks
 *    column f along the axis alone.  It copies its column's u and psi into
 *    its own column of the warp's shared memory (rows of 32: coalesced, no
 *    bank conflicts) and reads zeta, up (and c2) into registers, four
 *    positions at a time, where it corrects.  (Copying all five with
 *    cp.async was slower: 120-126 us a y or z pass against 86-88.)
 * Warps are mapped without divisions: blockIdx.y (grid-stride) is the
 * plane (x and y slabs) or the row (z slabs), blockIdx.x and the warp the
 * row (x slabs) or the group of 32 columns.
 * Phases: load; psi = b psi + a D1 u over [lo, hi) (k_psi's expression;
 * rows of y and z slabs with a == 0 keep psi, as on the CPU), in shared
 * and in global memory; then the correction at the stencil nodes in
 * [lo, hi) from the new psi and u (cpml_at and k_cpml_corr's expressions:
 * the same results to rounding).  Against k_psi + k_cpml_corr: u and psi
 * read once instead of twice, no one-point rows for the x slabs.  The
 * first version (a block of 8 warps over a tile of 32 lines, three block
 * barriers, every point's coordinates recomputed in each phase from a
 * 64-bit unit index) ran ~290 warp instructions for 32 points (ncu):
 * bound by its instructions, not by memory.  This one (H100, 512^3 fp32,
 * CPML 20 on all faces): a y or z pass 86-88 us (the block version
 * ~100), an x pass ~141 us (~158), still issue-bound (74% of the SM's
 * issue slots); the step 102.5 -> 108 Gpts.steps/s.  An x row of at most
 * 32 points (W + 3R <= 32: a 20-point layer at r = 4) then went to one
 * element a lane with shuffles for the neighbours and b, a loaded once:
 * 89 -> 76 M instructions, x pass 141 -> 124 us, the step 108.5 -> 111.1
 * (same call).  Eight rows a warp (fewer warps, the prologue shared) cut
 * the x pass to 106 us under ncu but the step to 108-109: not kept.  Four
 * rows a warp with every row's loads issued first (kSlabRows) did keep:
 * x pass 124 -> 108 us, the step +2% (2026-11-25, session 15).  Loading
 * more of a y or z unit at once (its whole column in two batches, zeta /
 * up / c2 ten positions at a time, the first batch in flight with u and
 * psi: 118-128 registers, 16 warps a multiprocessor) made those passes
 * slower (87 -> 115 us), as did capping them at 72 registers (28 warps:
 * 88-93 us).  The two slabs of an axis go in one launch (blockIdx.z the
 * side) when they are as wide and no point lies in both: one tail of
 * units instead of two, the step +3% (112.1 -> 115.4, same call). */
constexpr int kSlabMaxW = 64; /* the widest unit along the slab's axis */

/* Shared-memory elements of one warp of k_cpml_slab: u and psi of a row
 * (x slabs) or of 32 columns (y and z slabs). */
__host__ __device__ constexpr int slab_warp_elems(int ax, int Lw) {
  return ax == 0 ? 2 * Lw : 2 * 32 * Lw;
}
constexpr int kSlabWarps = 4; /* warps a block */
/* rows a warp of an x slab's unit when they are at most 32 points wide:
 * H100, 512^3 fp32, CPML 20 on every face: x pass 124 -> 108 us (ncu) with
 * 4 rows, the step 108.0-110.4 -> 111.5-112.2 Gpts.steps/s (two runs in
 * one call; 8 rows: 111.4-111.5, its x pass 115 us) */
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

template <typename T, int R, int AX>
__global__ void __launch_bounds__(256)
    k_cpml_slab(const __grid_constant__ wave_par<T> P, const int slab,
                const int ocut, const int oskip) {
  extern __shared__ __align__(16) unsigned char cs_raw[];
  const wave_slab<T> &S = P.slab[slab + blockIdx.z]; /* a pair: both sides */
  const int lo = S.lo, hi = S.hi, Lw = hi - lo + 2 * R;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nw = blockDim.x >> 5;
  T *wu = reinterpret_cast<T *>(cs_raw) +
          (size_t)warp * slab_warp_elems(AX, Lw);
  const int c0 = max(lo, P.s0[AX]), c1 = min(hi, P.s1[AX]);
  const double *pa = P.pa[AX], *pb = P.pb[AX];
  /* units: w (rows, or groups of 32 columns) by o (planes, or rows) */
  const int nW = slab_units_w(AX, Lw, P.n);
  const int nO = AX == 2 ? P.n[1] : P.n[2];
  /* the planes (rows) o < ocut and o >= ocut + oskip: all of them, or
   * those of a y slab that the update's walk left out (wave_typed) */
  for (int oc = blockIdx.y; oc < nO - oskip; oc += gridDim.y)
    for (int w = blockIdx.x * nw + warp; w < nW; w += gridDim.x * nw) {
      const int o = oc < ocut ? oc : oc + oskip;
      if constexpr (AX == 0) {
        if (Lw <= 32) {
          /* kSlabRows rows (j = w * kSlabRows ..) of at most 32 points (a
           * 20-point layer at r = 4: 32), one element a lane: every row's
           * loads issued before any is used, neighbours by shuffles, no
           * shared memory, b and a loaded once */
          constexpr int NB = kSlabRows;
          const int k = o, f = lane, a = lo - R + f;
          const bool in = f < Lw, ps = a >= lo && a < hi;
          const bool acor = k >= P.s0[2] && k < P.s1[2] && a >= c0 && a < c1;
          T bv = 0, av = 0;
          if (ps) {
            bv = (T)pb[a];
            av = (T)pa[a];
          }
          const long long ro0 = (long long)(w * NB) * P.sy +
                                (long long)k * P.sz + lo - R + f;
          const long long po0 = (long long)(w * NB) * S.psy +
                                (long long)k * S.psz + lo - R - S.origin + f;
          T uf[NB], pf[NB], zo[NB], wo[NB], cc[NB];
          bool jv[NB], cor[NB]; /* row j exists; (j, k, a) is corrected */
#pragma unroll
          for (int t = 0; t < NB; t++) {
            const int j = w * NB + t;
            jv[t] = j < P.n[1];
            cor[t] = jv[t] && acor && j >= P.s0[1] && j < P.s1[1];
            uf[t] = pf[t] = zo[t] = wo[t] = cc[t] = 0;
            if (jv[t] && in) {
              uf[t] = P.u[ro0 + t * P.sy];
              pf[t] = S.psi[po0 + t * S.psy];
            }
            if (cor[t]) {
              zo[t] = S.zeta[po0 + t * S.psy];
              wo[t] = P.up[ro0 + t * P.sy];
              cc[t] = P.c2 ? P.c2[ro0 + t * P.sy] : (T)P.c2_line[k];
            }
          }
#pragma unroll
          for (int t = 0; t < NB; t++) {
            T um[R], up_[R];
#pragma unroll
            for (int q = 1; q <= R; q++) {
              um[q - 1] = __shfl_up_sync(0xffffffffu, uf[t], q);
              up_[q - 1] = __shfl_down_sync(0xffffffffu, uf[t], q);
            }
            T np = pf[t];
            if (ps) {
              T d = 0;
#pragma unroll
              for (int q = 1; q <= R; q++)
                d += P.d1[q] * (up_[q - 1] - um[q - 1]);
              np = bv * pf[t] + av * d;
              if (jv[t]) S.psi[po0 + t * S.psy] = np;
            }
            T dpsi = 0, d2 = P.lap[0] * uf[t];
#pragma unroll
            for (int q = 1; q <= R; q++) {
              const T pm = __shfl_up_sync(0xffffffffu, np, q);
              const T pp = __shfl_down_sync(0xffffffffu, np, q);
              dpsi += P.d1[q] * (pp - pm);
              d2 += P.lap[q] * (up_[q - 1] + um[q - 1]);
            }
            if (cor[t])
              slab_correct<T, R>(P, bv, av, a, w * NB + t, k, zo[t], wo[t],
                                 cc[t], dpsi, d2, &S.zeta[po0 + t * S.psy],
                                 &P.up[ro0 + t * P.sy]);
          }
          continue;
        }
        const int j = w, k = o;
        T *wp = wu + Lw;
        const bool node =
            j >= P.s0[1] && j < P.s1[1] && k >= P.s0[2] && k < P.s1[2];
        const long long ro =
            (long long)j * P.sy + (long long)k * P.sz + lo - R;
        const long long po =
            (long long)j * S.psy + (long long)k * S.psz + lo - R - S.origin;
        T zv[2], wv[2], cv[2];
#pragma unroll
        for (int m = 0; m < 2; m++) {
          const int f = lane + 32 * m, a = lo - R + f;
          if (f < Lw) {
            wu[f] = P.u[ro + f];
            wp[f] = S.psi[po + f];
          }
          if (node && a >= c0 && a < c1) {
            zv[m] = S.zeta[po + f];
            wv[m] = P.up[ro + f];
            cv[m] = P.c2 ? P.c2[ro + f] : (T)P.c2_line[k];
          }
        }
        __syncwarp();
#pragma unroll
        for (int m = 0; m < 2; m++) {
          const int f = lane + 32 * m, a = lo - R + f;
          if (a < lo || a >= hi) continue;
          T d = 0;
#pragma unroll
          for (int q = 1; q <= R; q++) d += P.d1[q] * (wu[f + q] - wu[f - q]);
          const T np = (T)pb[a] * wp[f] + (T)pa[a] * d;
          S.psi[po + f] = np;
          wp[f] = np; /* read by the neighbours only after the barrier */
        }
        __syncwarp();
#pragma unroll
        for (int m = 0; m < 2; m++) {
          const int f = lane + 32 * m, a = lo - R + f;
          if (!node || a < c0 || a >= c1) continue;
          T dpsi = 0, d2 = P.lap[0] * wu[f];
#pragma unroll
          for (int q = 1; q <= R; q++) {
            dpsi += P.d1[q] * (wp[f + q] - wp[f - q]);
            d2 += P.lap[q] * (wu[f + q] + wu[f - q]);
          }
          slab_correct<T, R>(P, (T)pb[a], (T)pa[a], a, j, k, zv[m], wv[m],
                             cv[m], dpsi, d2, &S.zeta[po + f], &P.up[ro + f]);
        }
        __syncwarp(); /* the row is reused by the next unit */
      } else {
        const int i = w * 32 + lane;
        if (i >= P.n[0]) continue; /* nothing in this lane's column */
        constexpr int OA = AX == 1 ? 2 : 1; /* the other axis */
        const long long su = AX == 1 ? P.sy : P.sz,
                        sq = AX == 1 ? S.psy : S.psz;
        const long long ro = i + (long long)o * (AX == 1 ? P.sz : P.sy) +
                             (long long)(lo - R) * su;
        const long long po = i + (long long)o * (AX == 1 ? S.psz : S.psy) +
                             (long long)(lo - R - S.origin) * sq;
        const bool node =
            i >= P.s0[0] && i < P.s1[0] && o >= P.s0[OA] && o < P.s1[OA];
        const int m0 = c0 - (lo - R), m1 = c1 - (lo - R);
        const T *ur = P.u + ro;
        T *pr = S.psi + po;
        T *tu = wu + lane, *tp = tu + 32 * Lw; /* this lane's column */
#pragma unroll 8
        for (int m = 0; m < Lw; m++) {
          tu[m * 32] = ur[m * su];
          tp[m * 32] = pr[m * sq];
        }
        for (int m = R; m < Lw - R; m++) { /* a = lo .. hi - 1 */
          const int a = lo - R + m;
          const double av = pa[a];
          if (av == 0.0) continue;
          const T *uu = tu + m * 32;
          T d = 0;
#pragma unroll
          for (int q = 1; q <= R; q++)
            d += P.d1[q] * (uu[q * 32] - uu[-q * 32]);
          const T np = (T)pb[a] * tp[m * 32] + (T)av * d;
          pr[m * sq] = np;
          tp[m * 32] = np;
        }
        if (!node) continue;
        T *zr = S.zeta + po, *wr = P.up + ro;
        const T *cr = P.c2 ? P.c2 + ro : nullptr;
        /* zeta, up and c2 four positions at a time, loaded before any of
         * them is stored */
        for (int mb = m0; mb < m1; mb += 4) {
          T zv[4], wv[4], cv[4];
#pragma unroll
          for (int t = 0; t < 4; t++) {
            const int m = mb + t;
            if (m < m1) {
              zv[t] = zr[m * sq];
              wv[t] = wr[m * su];
              cv[t] = cr ? cr[m * su]
                         : (T)P.c2_line[AX == 2 ? lo - R + m : o];
            }
          }
#pragma unroll
          for (int t = 0; t < 4; t++) {
            const int m = mb + t;
            if (m >= m1) break;
            const int a = lo - R + m;
            const T *uu = tu + m * 32, *ps = tp + m * 32;
            T dpsi = 0, d2 = P.lap[0] * uu[0];
#pragma unroll
            for (int q = 1; q <= R; q++) {
              dpsi += P.d1[q] * (ps[q * 32] - ps[-q * 32]);
              d2 += P.lap[q] * (uu[q * 32] + uu[-q * 32]);
            }
            const int j = AX == 1 ? a : o, k = AX == 1 ? o : a;
            slab_correct<T, R>(P, (T)pb[a], (T)pa[a], i, j, k, zv[t], wv[t],
                               cv[t], dpsi, d2, &zr[m * sq], &wr[m * su]);
          }
        }
      }
    }
}

/* B. The update of up over the stencil nodes.  Block (kWX, kWY) owns the
 * xy tile at blockIdx.x and, grid-stride over blockIdx.y, pairs (tile row,
 * z chunk).  The tile covers [0, n) in x and y; threads outside the
 * stencil nodes only help load. */
template <typename T, int R, int D>
__global__ void __launch_bounds__(kWX *kWY) k_wave(const wave_par<T> P) {
  constexpr int TW = kWX + 2 * R, TH = kWY + 2 * R;
  __shared__ T tile[TH][TW];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + kWX * ty;
  const int x0 = blockIdx.x * kWX, i = x0 + tx;
  const long long sy = P.sy, sz = P.sz;
  const long long pairs = (long long)P.tiles_y * P.nchunks;
  for (long long pr = blockIdx.y; pr < pairs; pr += gridDim.y) {
    const int y0 = (int)(pr % P.tiles_y) * kWY, j = y0 + ty;
    const int ch = (int)(pr / P.tiles_y);
    int k0 = 0, k1 = 1;
    if (D == 3) {
      k0 = P.s0[2] + ch * P.zchunk;
      k1 = min(k0 + P.zchunk, P.s1[2]);
    }
    /* my column lies inside the allocation (i, j >= 0 always) */
    const bool col = i < P.n[0] + R && j < P.n[1] + R;
    const bool act = i >= P.s0[0] && i < P.s1[0] && j >= P.s0[1] &&
                     j < P.s1[1];
    const T *ucol = P.u + i + (long long)j * sy;
    T q[2 * R + 1];
#pragma unroll
    for (int d = 0; d <= 2 * R; d++) q[d] = T(0);
    if (D == 3 && col) {
#pragma unroll
      for (int d = 0; d < 2 * R; d++) q[d] = ucol[(long long)(k0 - R + d) * sz];
    }
    for (int k = k0; k < k1; k++) {
      T uc;
      if (D == 3) {
        if (col) q[2 * R] = ucol[(long long)(k + R) * sz];
        uc = q[R];
      } else {
        uc = col ? ucol[0] : T(0);
      }
      __syncthreads(); /* the previous plane's readers are done */
      tile[ty + R][tx + R] = uc;
      const T *plane = P.u + (long long)k * sz;
      for (int t = tid; t < TW * TH; t += kWX * kWY) {
        const int lx = t % TW, ly = t / TW;
        if (lx >= R && lx < R + kWX && ly >= R && ly < R + kWY) continue;
        const int gi = x0 - R + lx, gj = y0 - R + ly;
        if (gi < P.n[0] + R && gj < P.n[1] + R)
          tile[ly][lx] = plane[gi + (long long)gj * sy];
      }
      __syncthreads();
      if (act) {
        const T *c = &tile[ty + R][tx + R];
        /* L u, CPU order: centre, then per k the x, y, z pairs */
        T acc = P.lap[0] * (T)D * c[0];
#pragma unroll
        for (int r = 1; r <= R; r++) {
          acc += P.lap[r] * (c[-r] + c[r]);
          acc += P.lap[r] * (c[-r * TW] + c[r * TW]);
          if (D == 3) acc += P.lap[r] * (q[R - r] + q[R + r]);
        }
        T L = acc;
        /* CPML: x sides, then y, then z, where the point is in [lo, hi) */
#pragma unroll
        for (int ax = 0; ax < D; ax++) {
          const int cc = ax == 0 ? i : ax == 1 ? j : k;
#pragma unroll
          for (int side = 0; side < 2; side++) {
            const wave_slab<T> &S = P.slab[2 * ax + side];
            if (!S.psi || cc < S.lo || cc >= S.hi) continue;
            T um[R], upl[R];
#pragma unroll
            for (int r = 1; r <= R; r++) {
              if (ax == 0) {
                um[r - 1] = c[-r];
                upl[r - 1] = c[r];
              } else if (ax == 1) {
                um[r - 1] = c[-r * TW];
                upl[r - 1] = c[r * TW];
              } else {
                um[r - 1] = q[R - r];
                upl[r - 1] = q[R + r];
              }
            }
            cpml_at<T, R>(S, ax, i, j, k, c[0], um, upl, P.pa[ax], P.pb[ax],
                          P, L);
          }
        }
        const long long o = i + (long long)j * sy + (long long)k * sz;
        const T c2v = P.c2 ? P.c2[o] : (T)P.c2_line[D == 3 ? k : j];
        T *upp = P.up + o;
        if (P.any_damp) {
          T erow = 0;
          if (D >= 2 && P.damp[1]) erow += (T)P.damp[1][j];
          if (D >= 3 && P.damp[2]) erow += (T)P.damp[2][k];
          const T e = erow + (P.damp[0] ? (T)P.damp[0][i] : (T)0);
          *upp = ((T)2 * c[0] - ((T)1 - e) * *upp + c2v * L) / ((T)1 + e);
        } else {
          *upp = (T)2 * c[0] - *upp + c2v * L;
        }
      }
      if (D == 3) {
#pragma unroll
        for (int d = 0; d < 2 * R; d++) q[d] = q[d + 1];
      }
    }
    __syncthreads(); /* the tile is reused by the next pair */
  }
}

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

/* B (3D). The update of up over the stencil nodes, streamed in the style of
 * streamcp (src/cuda/cuda_stream.cu).  A kVX x kVY block owns an xy tile of
 * kVX*V x kVY points (V = 16 bytes / sizeof(T) along x per thread) and walks
 * a chunk [kz0, kz1) of the stencil nodes' z range.  Every plane's u tile
 * (centre vectors and the x/y halo) is copied global -> shared by cp.async
 * kWaveAhead planes ahead of the queue's front into a ring of NS = R+2+A
 * tiles; the z column lives in a register queue fed from the ring.  The up
 * and c2 (field) vectors of a thread are copied by cp.async A planes ahead
 * into the thread's own slots (a ring of A + 2).  One barrier per plane:
 * at step k the copies overwrite the tile and the slots of plane k - 2,
 * whose last readers finished before the barrier of step k - 1.
 *
 * The point update is the CPU's expression term for term: L = centre, then
 * per k the x, y and z pairs; the CPML corrections x sides, y sides, z
 * sides (cpml_at); the sponge form when a damp array exists. */
constexpr int kVX = 32, kVY = 16; /* k_wavev's block */
constexpr int kWaveAhead = 2;     /* planes copied ahead of the queue */
constexpr int kWaveSlots = 2;     /* halo vectors a thread copies per plane */

template <typename T, int R> struct wavev_geo {
  static constexpr int V = 16 / (int)sizeof(T);
  static constexpr int HV = (R + V - 1) / V;
  static constexpr int A = kWaveAhead;
  static constexpr int NS = R + 2 + A; /* u tiles */
  static constexpr int NP = A + 2;     /* up / c2 slots per thread */
  static constexpr int NT = kVX * kVY;
  static constexpr int TW = (kVX + 2 * HV) * V, TH = kVY + 2 * R;
  static constexpr int TSZ = TW * TH;
  static size_t bytes(bool c2field) {
    return ((size_t)NS * TSZ + (size_t)(c2field ? 2 : 1) * NP * NT * V) *
           sizeof(T);
  }
};

template <typename T, int R, bool CP, bool FF>
__global__ void __launch_bounds__(kVX *kVY)
    k_wavev(const wave_par<T> P, const T c0, const int zchunk) {
  typedef wavev_geo<T, R> G;
  constexpr int V = G::V, HV = G::HV, A = G::A, NS = G::NS, NP = G::NP;
  constexpr int NT = G::NT, TW = G::TW, TSZ = G::TSZ;
  constexpr int BX = kVX, BY = kVY;
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(16) unsigned char sraw[];
  T *sm = reinterpret_cast<T *>(sraw); /* NS u tiles */
  T *spu = sm + NS * TSZ;              /* NP x NT vectors of up */
  T *spc = spu + NP * NT * V;          /* NP x NT vectors of c2 (field) */

  const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + BX * ty;
  const int x0 = blockIdx.x * BX * V, y0 = blockIdx.y * BY;
  const int xv = x0 + tx * V, j = y0 + ty;
  const int kz0 = P.s0[2] + (int)blockIdx.z * zchunk;
  const int kz1 = min(P.s1[2], kz0 + zchunk);
  if (kz0 >= kz1) return; /* block-uniform */
  const int nx = P.n[0], ny = P.n[1];
  const long long sy = P.sy, sz = P.sz;
  const T *__restrict__ in = P.u;

  /* centre copy: my column lies inside the allocation */
  const bool cok = xv < nx + R && j < ny + R;
  const long long coff = xv + (long long)j * sy;
  const int csm = (R + ty) * TW + (HV + tx) * V;
  /* my points: row j a stencil row, elements xv + e in [s0x, s1x) */
  const bool rowact = j >= P.s0[1] && j < P.s1[1];
  /* with faces in the kernel, the vectors of FREE boundary nodes too (they
   * store 0 there) */
  const bool uok = rowact && (FF ? xv < nx
                                 : xv < P.s1[0] && xv + V > P.s0[0]);
  const bool c2f = P.c2 != NULL;
  const int pslot = tid * V;

  /* halo slots: y halo rows (2R x BX vectors), then x halo (2HV x BY) */
  constexpr int HN = 2 * R * BX + 2 * HV * BY;
  static_assert(HN <= kWaveSlots * NT, "halo exceeds the copy slots");
  long long hoff[kWaveSlots];
  int hsm[kWaveSlots];
  bool hok[kWaveSlots], hact[kWaveSlots];
#pragma unroll
  for (int s = 0; s < kWaveSlots; s++) {
    strata__halo_slot<R, V, HV>(tid + s * NT, BX, BY, TW, x0, y0, nx, ny,
                                sy, &hoff[s], &hsm[s], &hok[s],
                                &hact[s]);
  }

  /* issue(p): the u tile of plane p and my up / c2 vectors of plane p - R;
   * exactly one commit group per call */
  const int last = kz1 - 1 + R;
  auto issue = [&](int p) {
    if (p <= last) {
      T *sb = sm + ((p - kz0) % NS) * TSZ;
      const T *pb = in + (long long)p * sz;
      cp_async16(sb + csm, cok ? pb + coff : in, cok ? 16 : 0);
#pragma unroll
      for (int s = 0; s < kWaveSlots; s++)
        if (hact[s])
          cp_async16(sb + hsm[s], hok[s] ? pb + hoff[s] : in, hok[s] ? 16 : 0);
    }
    const int pu = p - R;
    if (uok && pu >= kz0 && pu < kz1) {
      const long long o = coff + (long long)pu * sz;
      const int sl = ((pu - kz0) % NP) * NT * V + pslot;
      cp_async16(spu + sl, P.up + o, 16);
      if (c2f) cp_async16(spc + sl, P.c2 + o, 16);
    }
    cp_async_commit();
  };

  /* the register queue: planes kz0-R .. kz0+R-1 straight from global */
  vec q[2 * R + 1];
#pragma unroll
  for (int d = 1; d <= 2 * R; d++)
    q[d] = cok ? ldg_v<T, V>(in + coff + (long long)(kz0 - R - 1 + d) * sz)
               : zero_v<T, V>();
  for (int p = kz0; p < kz0 + R + A; p++) issue(p);

  /* the damping of my row and columns, once (see k_wavetma) */
  T ey, ex[V];
  wave_damp_rowcol<T, V>(P, xv, j, ey, ex);
  for (int k = kz0; k < kz1; k++) {
    issue(k + R + A);
    cp_async_wait<A>();
    __syncthreads();
    const T *sb = sm + ((k - kz0) % NS) * TSZ;
    const T *sq = sm + ((k + R - kz0) % NS) * TSZ;
#pragma unroll
    for (int d = 0; d < 2 * R; d++) q[d] = q[d + 1];
    q[2 * R] = lds_v<T, V>(sq + csm);
    if (!uok) continue; /* no barrier below: safe */

    /* x window and L u (CPU order); the queue holds k-R .. k+R in order */
    const T *rowp = sb + (R + ty) * TW + tx * V;
    const T *colp = sb + csm; /* my vector in the tile: y neighbours */
    T xs[(2 * HV + 1) * V], L[V];
    wave_lap<T, R, V, HV, 2 * R + 1>(P, c0, q, R, rowp, colp, TW, xs, L);

    /* CPML: x sides, then y, then z, where the point is in [lo, hi) (CP;
     * else k_cpml_corr adds it afterwards) */
#pragma unroll
    for (int ax = 0; ax < (CP ? 3 : 0); ax++) {
#pragma unroll
      for (int side = 0; side < 2; side++) {
        const wave_slab<T> &S = P.slab[2 * ax + side];
        if (!S.psi) continue;
        if (ax == 1 && (j < S.lo || j >= S.hi)) continue;
        if (ax == 2 && (k < S.lo || k >= S.hi)) continue;
        if (ax == 0 && (xv + V <= S.lo || xv >= S.hi)) continue;
#pragma unroll
        for (int e = 0; e < V; e++) {
          const int i = xv + e;
          if (i < P.s0[0] || i >= P.s1[0]) continue;
          if (ax == 0 && (i < S.lo || i >= S.hi)) continue;
          T um[R], upl[R];
#pragma unroll
          for (int r = 1; r <= R; r++) {
            if (ax == 0) {
              um[r - 1] = xs[HV * V + e - r];
              upl[r - 1] = xs[HV * V + e + r];
            } else if (ax == 1) {
              um[r - 1] = colp[e - r * TW];
              upl[r - 1] = colp[e + r * TW];
            } else {
              um[r - 1] = q[R - r].v[e];
              upl[r - 1] = q[R + r].v[e];
            }
          }
          cpml_at<T, R>(S, ax, i, j, k, q[R].v[e], um, upl, P.pa[ax],
                        P.pb[ax], P, L[e]);
        }
      }
    }

    /* the update */
    const int sl = ((k - kz0) % NP) * NT * V + pslot;
    const vec upv = lds_v<T, V>(spu + sl);
    vec c2v;
    if (c2f) {
      c2v = lds_v<T, V>(spc + sl);
    } else {
      const T cl = (T)P.c2_line[k];
#pragma unroll
      for (int e = 0; e < V; e++) c2v.v[e] = cl;
    }
    T erow = ey;
    if (P.any_damp && P.damp[2]) erow += (T)P.damp[2][k];
    vec res = wave_update<T, V>(P, q[R], upv, c2v, L, erow, ex);
    if constexpr (FF) {
#pragma unroll
      for (int e = 0; e < V; e++)
        if (xv + e < P.s0[0] || xv + e >= P.s1[0]) res.v[e] = T(0);
      free_emit<T, V, R>(P, xv, j, k, res); /* rows and planes of FREE
                                               boundary nodes: k_free_rows */
      continue;
    }
    T *dst = P.up + coff + (long long)k * sz;
    if (xv >= P.s0[0] && xv + V <= P.s1[0]) {
      stcs_v<T, V>(dst, res);
    } else {
#pragma unroll
      for (int e = 0; e < V; e++)
        if (xv + e >= P.s0[0] && xv + e < P.s1[0]) __stcs(dst + e, res.v[e]);
    }
  }
  cp_async_wait<0>();
}

/* Launches k_wavev; *used = false (and nothing launched) when the grid or
 * the shared memory does not fit: the caller then runs k_wave. */
template <typename T, int R>
strata_status launch_wavev(strata_context *ctx, strata__cuda_state *st,
                           const wave_par<T> &P, bool *used) {
  typedef wavev_geo<T, R> G;
  *used = false;
  const size_t bytes = G::bytes(P.c2 != NULL);
  if (bytes > st->prop.sharedMemPerBlockOptin) return STRATA_OK;
  const long long gx = ((P.n[0] + G::V - 1) / G::V + kVX - 1) / kVX;
  const long long gy = (P.n[1] + kVY - 1) / kVY;
  if (gy > 65535 || gx > 0x7fffffffLL) return STRATA_OK;
  const int nzs = P.s1[2] - P.s0[2];
  *used = true;
  if (nzs <= 0 || P.s1[0] <= P.s0[0] || P.s1[1] <= P.s0[1]) return STRATA_OK;
  /* the CPML terms in the streaming kernel cost registers and divergence
   * everywhere for the few planes that need them: they are added by
   * k_cpml_corr afterwards (CP = false; the slabs are then ignored here) */
  auto kern = P.inface ? k_wavev<T, R, false, true> : k_wavev<T, R, false, false>;
  STRATA__CU(ctx, cudaFuncSetAttribute(
                      kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                      (int)bytes));
  int per_sm = 0;
  STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                      &per_sm, kern, kVX * kVY, bytes));
  if (per_sm < 1) {
    *used = false;
    return STRATA_OK;
  }
  const int chunks = strata__cu_zchunks((int)(gx * gy), per_sm,
                                        st->prop.multiProcessorCount, nzs,
                                        2 * R);
  const int zchunk = (nzs + chunks - 1) / chunks;
  const T c0 = P.lap[0] * (T)3;
  dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)((nzs + zchunk - 1) / zchunk));
  kern<<<grid, dim3(kVX, kVY, 1), bytes, st->stream>>>(P, c0, zchunk);
  STRATA__LAUNCHED(ctx, "wave step: streaming update kernel launch");
  return STRATA_OK;
}

/* B (3D, sm_90): k_wavev fed by tensor copies, in the manner of streamws
 * (cuda_tma.cu; its header states the ring's full / empty protocol).  A
 * block is BX x BY consumer threads (one 16-byte vector of one row each)
 * and a copying warpgroup (below).  Ring slot s holds, for plane p: the u tile with its
 * halo ((BX + 2 HV) V x BY + 2R, one box), and for p inside the chunk the
 * up tile and (a velocity field) the c2 tile of the block's own points
 * (BX V x BY, one box each), all completing on full[s].  At plane k the
 * consumers read the u tile of k (x and y neighbours), the front of the
 * queue from the tile of k + R, and up / c2 of k from k's slot; each warp
 * then arrives on empty[k's slot] and stores.  The z queue rotates between
 * named registers (the walk is unrolled 2R + 1 planes a trip), the point
 * update is k_wavev's (the CPU's order), and the CPML terms stay in
 * k_cpml_slab (added here, out of line for the vectors in a slab, the CPML
 * case measured 2x slower: the calls' register saves), but for x slabs of
 * at most 32 points with their margins, whose terms the tiles that hold
 * them add in line (CX instances, radius 4: wt_cpml).  up is read
 * (u^{n-1}) by the copies and written (u^{n+1}) by the block at different
 * planes of its own columns, and no other block writes them (the odd
 * images go to ghosts, which are never stencil nodes), so the copy engine
 * never reads a value this kernel has changed.
 *
 * The copier is a whole warpgroup (one thread of it copies, the other
 * three warps leave), so that its registers can go back to the block's
 * pool (setmaxnreg, sm_90a): 640 threads launch with 96 registers, the
 * copying warpgroup drops to 24 and the 16 consumer warps rise to 112
 * (4 x 128 x 112 + 128 x 24 <= 640 x 96).  Before (H100, 512^3 fp32,
 * same run): 15 consumer warps and one copier warp (128 registers; 16
 * rows with a 17th warp are capped at 96 and measured 15% slower), 35
 * tiles over 512 rows in place of 32: free surfaces 192.3 against 194.2
 * Gpts.steps/s, sponge 163.3 against 171.7. */
constexpr int kWtX = 32; /* vectors along x a block */
constexpr int kWtConsumers = 512, kWtRegs = 112, kWtCopyRegs = 24;
/* the y CPML tiles (CY, below): at most 24 rows (a 20-point layer and
 * its R: 24 consumer warps and the copying warpgroup, 896 threads launch
 * with 72 registers, the consumers rise to 80) */
constexpr int kWtYRowsMax = 24, kWtYRegs = 80;

template <typename T, bool C2F, bool CY = false> struct wavetma_geo {
  /* CY tiles are 64 columns of 2-float vectors (their slots carry psi and
   * zeta of the tile's rows, and no up: each thread loads its up vector a
   * plane ahead) */
  static constexpr int V = CY ? 2 : 16 / (int)sizeof(T);
  /* 3 planes ahead; 2 with a velocity field (its tiles make the slots
   * larger: 7 of them fill 206 KB of shared memory in fp32) or in a CY
   * tile */
  static constexpr int A = C2F || CY ? 2 : 3;
  static constexpr int threads =
      CY ? 32 * kWtYRowsMax + 128 : kWtConsumers + 128;
  static constexpr int regs = CY ? kWtYRegs : kWtRegs;
};

/* The x CPML slabs inside k_wavetma (CX instances, R = 4).  An x slab's
 * psi and its correction lie in one row of one plane: psi = b psi + a D1 u
 * needs u at x +- R (the tile row the update has in shared memory already)
 * and D1 psi needs the new psi at x +- R.  When a slab's [lo - R, hi + R)
 * is at most 32 points and [lo, hi) lies inside one x tile (one side a
 * tile), that tile's copier also copies, with each plane it owns, psi and
 * zeta over [lo, hi) of the block's rows into the plane's ring slot (psi
 * is 0 outside the layer, strata__wave_slab, so its R points each side are
 * not read), and each warp (one row of the tile) works its row's
 * slab one point a lane (lane l: x = lo - R + l; wt_lane, wt_cpml_x),
 * hands each point's D1 psi + zeta to the lane whose vector holds it, and
 * that lane adds it to L after the Laplacian, as the CPU does, before the
 * update.  This replaces the x slabs' pass (k_cpml_slab), which re-read u,
 * up and c2 of the slab and moved psi over 64-byte DRAM granules.  psi of
 * the planes the walk skips (FREE or Mur z faces) is left to k_psi
 * (wave_typed). */
struct wt_cpml {
  CUtensorMap mp[2], mz[2]; /* psi and zeta of side s, box pw x BY, zw x BY */
  int tile[2];              /* blockIdx.x of side s's tile; -1: its pass */
  int pw[2], zw[2];         /* box widths (elements) */
  int bxp[2], bxz[2];       /* the boxes' first x (lo - R, lo) in the maps */
  int oy, oz;               /* map coordinates of interior (0, 0) */
  int apsz, azsz;           /* a slot's psi and zeta areas (elements) */
};

/* The y CPML slabs inside k_wavetma (CY instances: fp32, R = 4).  A y
 * slab's psi = b psi + a D1 u needs u at y +- R and D1 psi the new psi at
 * y +- R: both lie in one plane.  When a tile's rows are the slab's rows
 * (the low side's tile starts at row 0, the high side's ends at n[1];
 * BY = the slab's width rounded up to whole warpgroups, at most
 * kWtYRowsMax), the u tile with its R halo rows holds every u the new psi
 * needs, so the tile that owns those rows does the whole y CPML: its
 * copier copies, with each plane it owns, psi and zeta over the tile's
 * rows (psi's R rows each side, outside the layer, are 0 in every slot
 * from the start); each warp (a row) works its
 * row's new psi from the u tile into the slot (and global memory), the
 * consumers meet at a named barrier, and each warp then reads D1 psi
 * along y from the slot, updates zeta and adds D1 psi + zeta to L after
 * the x terms (the CPU's order).  Such a slot would not fit beside seven
 * others with 128 columns, so these tiles are 64 columns of 2-float
 * vectors and load their up (and c2) vectors a plane ahead themselves;
 * they run as a launch of their own on the context's side stream, beside
 * the launch of the rows between them (u is only read; the two write
 * apart), and the y slabs' pass (k_cpml_slab) is left out.  psi of the
 * planes the walk skips (FREE or Mur z faces) goes to k_psi (wave_typed).
 * H100, 512^3 fp32, CPML 20 on every face (2026-11-25, session 18): 122.5
 * -> 130.5 Gpts.steps/s (74 -> 79% of the ceiling); ncu with the two
 * launches one after the other: the y tiles 189 us (the y pair they
 * replace: 170), the other rows 682 us (the whole update was 751).  With a free top and a velocity field (the
 * FREE-face instances spill 660-920 bytes at 80 registers, on the planes
 * near the face): 100.7 -> 102.6 in one call.  The z slabs the same way
 * (CY == 2, session 19): the same tiles on wave_yz's view, rows = the
 * slab's planes, walking along y over every row (no FREE y face), the
 * other launches walking the planes between; the y slabs' planes there
 * (the corners) get their pass, on the side stream after the tiles.
 * H100, same case: 129.4-129.8 -> 133.7-134.0 (78 -> 80%); ncu, launches
 * in series: z tiles 190 us, y tiles 182, the other rows 618, the corners'
 * pass 24 (the z pass of 166 us gone). */
struct wt_cpmly {
  CUtensorMap mp[2], mz[2]; /* psi and zeta of tile row b: boxes of 64 x
                               BY + 2R and 64 x BY */
  int y0[2];                /* tile row b's first row */
  int sl[2];                /* its slab (2: low y, 3: high y) */
  int bxp, bxz;             /* map x of interior x = 0 (psi, zeta) */
  int byp[2], byz[2];       /* map y of the boxes' first rows */
  int oz;                   /* map z of interior z = 0 */
  int apsz, azsz;           /* a slot's psi and zeta areas (elements) */
};

/* A lane's part of its row's x slab, fixed for the walk: f bit 0 its point
 * is in [lo, hi) (new psi, stored; lanes R .. 31 - R), bit 1 it is a
 * stencil node too (zeta and the correction); uo the point's offset in a u
 * tile row, src the lane whose point is my vector's first element; a, b
 * the profile there; o the point's offset in psi and zeta at plane k. */
template <typename T> struct wt_lane {
  int f, uo, src;
  T a, b;
  long long o;
};

/* One plane of the x slab in my row (the whole warp): pb / zb the row's
 * psi / zeta in the slot, urow the u tile's row, xc my vector's D1 psi +
 * zeta (0 outside the slab).  The CPU's expressions: FN(psi_row),
 * FN(cpml_corr). */
template <typename T, int R, int V>
__device__ __forceinline__ void wt_cpml_x(const wave_par<T> &P,
                                          const wave_slab<T> &S,
                                          const wt_lane<T> &c, const T *pb,
                                          const T *zb, const T *urow,
                                          int lane, T (&xc)[V]) {
  const T *u = urow + c.uo;
  T d = 0, d2 = P.lap[0] * u[0];
#pragma unroll
  for (int q = 1; q <= R; q++) {
    d += P.d1[q] * (u[q] - u[-q]);
    d2 += P.lap[q] * (u[q] + u[-q]);
  }
  /* psi is 0 outside the layer; the slot holds the layer's only */
  T psi = T(0);
  if (c.f & 1) psi = c.b * pb[lane - R] + c.a * d;
  T dpsi = 0;
#pragma unroll
  for (int q = 1; q <= R; q++) {
    const T r = __shfl_down_sync(0xffffffffu, psi, q);
    const T l = __shfl_up_sync(0xffffffffu, psi, q);
    dpsi += P.d1[q] * (r - l);
  }
  T corr = 0;
  if (c.f & 1) S.psi[c.o] = psi;
  if (c.f & 2) {
    const T z = c.b * zb[lane - R] + c.a * (d2 + dpsi);
    S.zeta[c.o] = z;
    corr = dpsi + z;
  }
#pragma unroll
  for (int e = 0; e < V; e++) {
    const T v = __shfl_sync(0xffffffffu, corr, (c.src + e) & 31);
    xc[e] = (unsigned)(c.src + e) < 32u ? v : T(0);
  }
}

/* k_wavetma's instances: FF 0 the faces left to k_faces, 1 the FREE faces
 * kept here (zeros on the nodes that are not stencil nodes, and the odd
 * images), 2 as 1 without the images (a launch whose rows and walk stay
 * more than R from every FREE face: the CY tiles' walks, see
 * launch_wavetma); C2F a velocity field; CX the x CPML slabs (wt_cpml); CY
 * 0 the update, 1 the y CPML tiles, 2 the z CPML tiles (wt_cpmly). */
template <typename T, int R, int FF, bool C2F, bool CX, int CY>
__global__ void __launch_bounds__(wavetma_geo<T, C2F, CY != 0>::threads, 1)
    k_wavetma(const __grid_constant__ CUtensorMap tu,
              const __grid_constant__ CUtensorMap tue,
              const __grid_constant__ CUtensorMap tp,
              const __grid_constant__ CUtensorMap tc,
              const __grid_constant__ wave_par<T> P,
              const __grid_constant__ wt_cpml cx,
              const __grid_constant__ wt_cpmly cy,
              const T c0, const int zchunk, const int BY, const int ya,
              const int yb, const int3 ou, const int3 op, const int3 oc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  typedef wavetma_geo<T, C2F, CY != 0> G;
  static_assert(!CY || (sizeof(T) == 4 && R == 4), "CY: fp32, radius 4");
  constexpr int V = G::V, HV = (R + V - 1) / V, A = G::A;
  constexpr int NS = R + 1 + A, NQ = 2 * R + 1, BX = kWtX;
  constexpr int TW = (BX + 2 * HV) * V;
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(128) unsigned char wt_raw[];
  T *sm = reinterpret_cast<T *>(wt_raw);

  const int tid = threadIdx.x, nthr = BX * BY;
  const int TH = BY + 2 * R;
  const int USZ = tma_slot_elems<T>(TW, TH), PSZ = tma_slot_elems<T>(BX * V, BY);
  /* one slot: u, up (c2), and the x CPML areas (wt_cpml) */
  const int SA = USZ + (CY ? 0 : (C2F ? 2 : 1) * PSZ);
  const int SY = SA + (CX ? cx.apsz + cx.azsz : 0); /* the CY areas */
  const int SS = SY + (CY ? cy.apsz + cy.azsz : 0);
  static_assert(BX == 32, "a warp is one row of the tile (wt_cpml_x)");
  uint64_t *full = reinterpret_cast<uint64_t *>(sm + NS * SS);
  uint64_t *empty = full + NS;
  /* rows: a CY tile's are its slab's; the others start at ya and store
   * below yb where CY tiles may run beside them (YW; elsewhere the window
   * is the whole grid, and left out: the FREE-face instances at the edge
   * of their registers spill otherwise) */
  constexpr bool YW = sizeof(T) == 4 && R == 4;
  const int x0 = blockIdx.x * BX * V;
  const int y0 = CY   ? cy.y0[blockIdx.y]
                 : YW ? ya + (int)blockIdx.y * BY
                      : (int)blockIdx.y * BY;
  const int yend = CY ? y0 + BY : YW ? yb : P.n[1];
  const int kz0 = P.s0[2] + (int)blockIdx.z * zchunk;
  const int kz1 = min(P.s1[2], kz0 + zchunk);
  if (kz0 >= kz1) return; /* block-uniform */
  const int last = kz1 - 1 + R; /* the last u tile needed */
  /* the x CPML side whose slab lies in this tile (bit s: side s; at most
   * one) */
  const int cxs = CX ? (cx.tile[0] == (int)blockIdx.x ? 1 : 0) |
                          (cx.tile[1] == (int)blockIdx.x ? 2 : 0)
                     : 0;
  if (tid == 0) tma_bars_init<NS>(full, empty, nthr / 32);
  if constexpr (CY) {
    /* psi's R rows each side of the tile, in every slot: 0, as psi is
     * outside the layer (the copies fill the tile's rows only) */
    constexpr int PW = BX * V;
    for (int t = tid; t < NS * 2 * R * PW; t += blockDim.x) {
      const int sl = t / (2 * R * PW), r = t % (2 * R * PW) / PW;
      sm[sl * SS + SY + (r < R ? r : BY + r) * PW + t % PW] = T(0);
    }
  }
  __syncthreads();
  if (tid >= nthr) { /* the copying warpgroup: one thread copies every plane */
    wg_regs_dec<kWtCopyRegs>(); /* the whole copying warpgroup */
    if (tid != nthr) return;
    const unsigned ub = (unsigned)(TW * TH * sizeof(T));
    const unsigned pb = (unsigned)(BX * V * BY * sizeof(T));
    const CUtensorMap *um =
        blockIdx.x == 0 || blockIdx.x == gridDim.x - 1 ? &tue : &tu;
    tma_copier<NS>(empty, kz0, last, [&](int p, int slot) {
      T *b = sm + slot * SS;
      const bool own = p < kz1; /* a plane of the chunk: up (and c2) too */
      unsigned xb = 0; /* the x and y CPML boxes' bytes */
      if (CX && own && cxs)
        xb = (unsigned)((cx.pw[cxs - 1] + cx.zw[cxs - 1]) * BY * sizeof(T));
      if (CY && own)
        xb += (unsigned)(BX * V * 2 * BY * sizeof(T));
      mbar_expect_tx(&full[slot],
                     ub + (own && !CY ? (C2F ? 2 : 1) * pb : 0) + xb);
      tma_load3(b, um, ou.x + x0 - HV * V, ou.y + y0 - R, ou.z + p,
                &full[slot]);
      if (own) {
        if (!CY)
          tma_load3(b + USZ, &tp, op.x + x0, op.y + y0, op.z + p, &full[slot]);
        if (C2F && !CY)
          tma_load3(b + USZ + PSZ, &tc, oc.x + x0, oc.y + y0, oc.z + p,
                    &full[slot]);
        /* unrolled: the maps' addresses must be the parameter's own */
#pragma unroll
        for (int sd = 0; CX && sd < 2; sd++)
          if (cxs >> sd & 1) {
            T *ab = b + SA;
            tma_load3(ab, &cx.mp[sd], cx.bxp[sd], cx.oy + y0, cx.oz + p,
                      &full[slot]);
            tma_load3(ab + cx.apsz, &cx.mz[sd], cx.bxz[sd], cx.oy + y0,
                      cx.oz + p, &full[slot]);
          }
        /* the y slab's psi and zeta (the maps named, not indexed: see
         * above) */
        if constexpr (CY) {
          T *yb_ = b + SY;
          const int t = blockIdx.y;
          tma_load3(yb_ + R * BX * V, t ? &cy.mp[1] : &cy.mp[0], cy.bxp + x0,
                    cy.byp[t], cy.oz + p, &full[slot]);
          tma_load3(yb_ + cy.apsz, t ? &cy.mz[1] : &cy.mz[0], cy.bxz + x0,
                    cy.byz[t], cy.oz + p, &full[slot]);
        }
      }
    });
    return;
  }

  wg_regs_inc<G::regs>(); /* every consumer warpgroup */
  const int tx = tid % BX, ty = tid / BX, lane = tid & 31;
  const int nx = P.n[0], ny = P.n[1];
  const long long sy = P.sy, sz = P.sz;
  const int xv = x0 + tx * V, j = y0 + ty;
  const bool cok = xv < nx + R && j < ny + R;
  const long long coff = xv + (long long)j * sy;
  const int csm = (R + ty) * TW + (HV + tx) * V; /* my vector in a u tile */
  const int psm = USZ + (ty * BX + tx) * V;      /* in the up tile */
  const bool jin = j < yend; /* a row of this launch's */
  const bool rowact = j >= P.s0[1] && j < P.s1[1] && jin;
  const bool uok =
      rowact && (FF ? xv < nx : xv < P.s1[0] && xv + V > P.s0[0]);
  /* what does not change from plane to plane, once: FF, which of my V
   * columns are stencil nodes (the others store 0) and whether my vector
   * or row lies within R of a FREE x / y face; the store pointer walks */
  unsigned xin = 0;
  bool nearx = false, neary = false;
  if constexpr (FF) {
#pragma unroll
    for (int e = 0; e < V; e++)
      if (xv + e >= P.s0[0] && xv + e < P.s1[0]) xin |= 1u << e;
    nearx = (P.ffree[0][0] && xv <= R) || (P.ffree[0][1] && xv + V >= nx - R);
    neary = (P.ffree[1][0] && j <= R) || (P.ffree[1][1] && j >= ny - 1 - R);
  }
  const int zfl = P.ffree[2][0] ? R : -1; /* k <= zfl: near the low face */
  const int zfh = P.ffree[2][1] ? P.n[2] - 1 - R : 0x7fffffff;
  T *upk = P.up + coff + (long long)kz0 * sz; /* up at plane k */
  /* the damping of my row (y) and columns (x), which no plane changes
   * (the sum keeps the CPU's order: y, then z, then x) */
  T ey, ex[V];
  wave_damp_rowcol<T, V>(P, xv, j, ey, ex);
  /* my lane's part of the x CPML slab in my row (wt_lane) */
  wt_lane<T> cxl;
  cxl.f = cxl.uo = cxl.src = 0;
  cxl.a = cxl.b = T(0);
  cxl.o = 0;
  if (CX && cxs) {
    const wave_slab<T> &S = P.slab[cxs - 1];
    const int x = S.lo - R + lane;
    const bool in = x >= S.lo && x < S.hi;
    cxl.f = (in ? 1 : 0) |
            (in && rowact && x >= P.s0[0] && x < P.s1[0] ? 2 : 0);
    /* outside the slab the window still reads inside the tile row */
    cxl.uo = (in ? x : S.lo) - x0 + HV * V;
    cxl.src = xv - (S.lo - R);
    if (in) {
      cxl.a = (T)P.pa[0][x];
      cxl.b = (T)P.pb[0][x];
    }
    cxl.o = (long long)j * S.psy + (long long)kz0 * S.psz + x - S.origin;
  }
  /* my row's part of the y CPML slab (CY): cyf bit 0 my row is in the
   * slab, bit 1 its psi changes (a != 0, as the CPU skips rows with
   * a == 0), bit 2 it is a stencil-node row (zeta and the correction);
   * cyx / cym: which of my V columns exist (psi) / are stencil nodes
   * (zeta); cyo: my vector's offset in psi and zeta at plane k */
  int cyf = 0;
  unsigned cyx = 0, cym = 0;
  T cya = T(0), cyb = T(0);
  long long cyo = 0;
  if constexpr (CY) {
    const wave_slab<T> &S = P.slab[cy.sl[blockIdx.y]];
    if (j >= S.lo && j < S.hi) {
      cyf = 1 | (P.pa[1][j] != 0.0 ? 2 : 0) | (rowact ? 4 : 0);
      cya = (T)P.pa[1][j];
      cyb = (T)P.pb[1][j];
    }
#pragma unroll
    for (int e = 0; e < V; e++) {
      if (xv + e < nx) cyx |= 1u << e;
      if (xv + e >= P.s0[0] && xv + e < P.s1[0]) cym |= 1u << e;
    }
    cyo = xv + (long long)(j - S.origin) * S.psy + (long long)kz0 * S.psz;
  }
  /* the queue: at phase ph of a trip (k = trip start + ph) plane k + d sits
   * in q[(ph + R + d) % NQ]; planes kz0-R .. kz0+R-1 from global first */
  vec q[NQ];
#pragma unroll
  for (int d = 0; d < 2 * R; d++)
    q[d] = cok ? ldg_v<T, V>(P.u + coff + (long long)(kz0 - R + d) * sz)
               : zero_v<T, V>();
  /* the tiles of planes kz0 .. kz0+R-1 are never a queue front */
#pragma unroll
  for (int p = 0; p < R; p++) mbar_wait(&full[p], 0u);

  /* CY: my up (and c2) vector of the next plane, loaded a plane ahead */
  vec upn = zero_v<T, V>(), c2n = zero_v<T, V>();
  const T *c2k = C2F ? P.c2 + coff + (long long)kz0 * sz : nullptr;
  if (CY && uok) {
    upn = *reinterpret_cast<const vec *>(upk);
    if (C2F) c2n = *reinterpret_cast<const vec *>(c2k);
  }

  tma_cursor<NS> cur(R);
  auto plane = [&](int k, int ph) {
    const T *sb = sm + cur.cs * SS;
    vec upv, c2v;
    if constexpr (CY) {
      upv = upn;
      if constexpr (C2F) c2v = c2n;
      if (uok && k + 1 < kz1) {
        upn = *reinterpret_cast<const vec *>(upk + sz);
        if constexpr (C2F) {
          c2k += sz;
          c2n = *reinterpret_cast<const vec *>(c2k);
        }
      }
    }
    /* the x CPML terms of the slabs in this tile (D1 psi + zeta, added to
     * L after the Laplacian as on the CPU), first: fewer registers are
     * live before the queue's front and the x window come in */
    T xc[CX ? V : 1];
    if constexpr (CX) {
#pragma unroll
      for (int e = 0; e < V; e++) xc[e] = T(0);
      if (cxs && jin) {
        const int sd = cxs - 1;
        wt_cpml_x<T, R, V>(P, P.slab[sd], cxl, sb + SA + ty * cx.pw[sd],
                           sb + SA + cx.apsz + ty * cx.zw[sd],
                           sb + (R + ty) * TW, lane, xc);
        cxl.o += P.slab[sd].psz;
      }
    }
    /* the y CPML terms of my row (CY): the new psi of every slab row into
     * the slot, the block's consumers meet, then D1 psi along y and zeta;
     * yc (added to L after the x terms) is 0 outside the slab */
    T yc[CY ? V : 1];
    if constexpr (CY) {
      const wave_slab<T> &S = P.slab[cy.sl[blockIdx.y]];
      constexpr int PW = BX * V; /* the psi and zeta areas' row pitch */
      T *pr = sm + cur.cs * SS + SY + (R + ty) * PW + tx * V;
      const T *zr = sm + cur.cs * SS + SY + cy.apsz + ty * PW + tx * V;
      const T *uc = sb + csm;
      const vec cu = q[(ph + R) % NQ];
      T d2[V];
#pragma unroll
      for (int e = 0; e < V; e++) {
        d2[e] = P.lap[0] * cu.v[e];
        yc[e] = T(0);
      }
      if (cyf & 1) {
        T d[V];
#pragma unroll
        for (int e = 0; e < V; e++) d[e] = T(0);
#pragma unroll
        for (int m = 1; m <= R; m++) {
          const vec um = lds_v<T, V>(uc - m * TW), upp = lds_v<T, V>(uc + m * TW);
#pragma unroll
          for (int e = 0; e < V; e++) {
            d[e] += P.d1[m] * (upp.v[e] - um.v[e]);
            d2[e] += P.lap[m] * (upp.v[e] + um.v[e]);
          }
        }
        if (cyf & 2) {
          vec ps = lds_v<T, V>(pr);
#pragma unroll
          for (int e = 0; e < V; e++) ps.v[e] = cyb * ps.v[e] + cya * d[e];
          sts_v<T, V>(pr, ps);
          if (cyx == (1u << V) - 1) {
            *reinterpret_cast<vec *>(S.psi + cyo) = ps;
          } else {
#pragma unroll
            for (int e = 0; e < V; e++)
              if (cyx >> e & 1u) S.psi[cyo + e] = ps.v[e];
          }
        }
      }
      /* every row's new psi is in the slot (the consumers only) */
      asm volatile("bar.sync 1, %0;\n" ::"r"(nthr) : "memory");
      if (cyf & 4) {
        T dp[V];
#pragma unroll
        for (int e = 0; e < V; e++) dp[e] = T(0);
#pragma unroll
        for (int m = 1; m <= R; m++) {
          const vec pm = lds_v<T, V>(pr - m * PW), pp = lds_v<T, V>(pr + m * PW);
#pragma unroll
          for (int e = 0; e < V; e++) dp[e] += P.d1[m] * (pp.v[e] - pm.v[e]);
        }
        const vec zo = lds_v<T, V>(zr);
#pragma unroll
        for (int e = 0; e < V; e++)
          if (cym >> e & 1u) {
            const T z = cyb * zo.v[e] + cya * (d2[e] + dp[e]);
            S.zeta[cyo + e] = z;
            yc[e] = dp[e] + z;
          }
      }
      cyo += S.psz;
    }
    mbar_wait(&full[cur.fs], cur.fph);
    q[(ph + 2 * R) % NQ] = lds_v<T, V>(sm + cur.fs * SS + csm);
    const vec c = q[(ph + R) % NQ];
    /* x window and L u (CPU order) */
    const T *rowp = sb + (R + ty) * TW + tx * V;
    const T *colp = sb + csm;
    T xs[(2 * HV + 1) * V], L[V];
    wave_lap<T, R, V, HV, NQ>(P, c0, q, ph + R, rowp, colp, TW, xs, L);
    if constexpr (CX)
#pragma unroll
      for (int e = 0; e < V; e++) L[e] += xc[e];
    if constexpr (CY)
#pragma unroll
      for (int e = 0; e < V; e++) L[e] += yc[e];
    if constexpr (!CY) upv = lds_v<T, V>(sb + psm);
    if constexpr (C2F) {
      if constexpr (!CY) c2v = lds_v<T, V>(sb + psm + PSZ);
    } else {
      /* (the tile's row in the z CPML tiles, wave_yz) */
      const T cl = (T)P.c2_line[CY == 2 ? j : k];
#pragma unroll
      for (int e = 0; e < V; e++) c2v.v[e] = cl;
    }
    /* this warp is done with the slot of k */
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[cur.cs]);
    T erow = ey;
    if (P.any_damp && P.damp[2]) erow += (T)P.damp[2][k];
    vec res = wave_update<T, V>(P, c, upv, c2v, L, erow, ex);
    if (uok) {
      if constexpr (FF) {
#pragma unroll
        for (int e = 0; e < V; e++)
          if (!(xin >> e & 1u)) res.v[e] = T(0);
        /* the images within R of a FREE y or z face (whole warps or
         * blocks) out of line, so the unrolled walk does not carry their
         * registers; those of an x face (a lane or two of every warp in
         * the first and last tiles, which would take the whole warp
         * through the call) in line */
        if (FF == 1 && (neary || k <= zfl || k >= zfh)) {
          free_emit_far<T, V, R>(P, xv, j, k, res);
        } else {
          store_masked<T, V>(upk, res, nx - xv);
          /* (CY tiles run without FREE x faces: the code left out) */
          if (!CY && nearx) {
            vec nv;
#pragma unroll
            for (int e = 0; e < V; e++) nv.v[e] = -res.v[e];
            free_images_x<T, V, R>(P, upk - xv, xv, nv);
          }
        }
      } else {
        T *dst = upk;
        if (xv >= P.s0[0] && xv + V <= P.s1[0]) {
          stcs_v<T, V>(dst, res);
        } else {
#pragma unroll
          for (int e = 0; e < V; e++)
            if (xv + e >= P.s0[0] && xv + e < P.s1[0])
              __stcs(dst + e, res.v[e]);
        }
      }
    }
    upk += sz;
    cur.next();
  };
  strata__trips<NQ>(kz0, kz1, plane);
#endif
}

/* The tensor map of field f's whole allocation with a TW x TH x 1 box, and
 * the allocation coordinates of its interior point (0, 0, 0); yz: y and z
 * swapped in both (the z CPML tiles' view, wave_yz). */
strata_status wt_map(strata_context *ctx, const strata_field *f, size_t es,
                     int TW, int TH, int promote, CUtensorMap *tm,
                     int3 *org, bool yz = false) {
  unsigned long long ext[3];
  int o[3];
  strata__cu_alloc_geom(f, ext, o);
  *org = yz ? make_int3(o[0], o[2], o[1]) : make_int3(o[0], o[1], o[2]);
  return strata__cu_tensor_map(ctx, f->data, es, ext, TW, TH, promote,
                               "wave step (tensor copies)", tm, yz);
}

/* The wave step's parameters with y and z swapped: a kernel that walks
 * "z" then walks y, and its tiles' rows are planes.  Every address the
 * update computes comes from these strides and sizes, so k_wavetma runs
 * on it unchanged but for the c2 line (indexed by the last axis: the
 * tile's row then, CY == 2).  The sums keep their terms, the Laplacian's
 * y and z pairs and the sponge's y and z damping change places (the same
 * results to rounding; the damping's y + z is the same sum). */
template <typename T> wave_par<T> wave_yz(const wave_par<T> &P) {
  using std::swap;
  wave_par<T> Q = P;
  swap(Q.sy, Q.sz);
  swap(Q.n[1], Q.n[2]);
  swap(Q.s0[1], Q.s0[2]);
  swap(Q.s1[1], Q.s1[2]);
  swap(Q.damp[1], Q.damp[2]);
  swap(Q.pa[1], Q.pa[2]);
  swap(Q.pb[1], Q.pb[2]);
  swap(Q.ffree[1], Q.ffree[2]);
  swap(Q.slab[2], Q.slab[4]);
  swap(Q.slab[3], Q.slab[5]);
  for (int sl = 0; sl < 6; sl++) swap(Q.slab[sl].psy, Q.slab[sl].psz);
  return Q;
}

/* Whether CPML slab sl (a low side) and sl + 1 can share one launch of
 * k_cpml_slab: as wide and apart (no point corrected by both). */
template <typename T> bool slab_pairs(const wave_par<T> &P, int sl) {
  const wave_slab<T> &W = P.slab[sl], &W2 = P.slab[sl + 1];
  return W2.psi && W2.hi - W2.lo == W.hi - W.lo && W.hi <= W2.lo;
}

/* B' for slab sl (and sl + 1 with pair): k_cpml_slab on strm over the
 * planes (rows of a z slab) o < ocut and o >= ocut + oskip. */
template <typename T>
strata_status slab_pass(strata_context *ctx, cudaStream_t strm,
                        const wave_par<T> &P, int R, int sl, int pair,
                        int ocut, int oskip) {
  const wave_slab<T> &W = P.slab[sl];
  const int ax = sl / 2, Lw = W.hi - W.lo + 2 * R;
  const int nw = kSlabWarps;
  const size_t smem = (size_t)nw * slab_warp_elems(ax, Lw) * sizeof(T);
  const int nW = slab_units_w(ax, Lw, P.n);
  const int nO = (ax == 2 ? P.n[1] : P.n[2]) - oskip;
  if (nO <= 0) return STRATA_OK;
  const dim3 grid((unsigned)((nW + nw - 1) / nw),
                  (unsigned)(nO < 65535 ? nO : 65535), pair ? 2u : 1u);
  auto slab_launch = [&](auto kern) -> strata_status {
    /* above 48 KB the kernel must be allowed more */
    if (smem > 48 * 1024)
      STRATA__CU(ctx, cudaFuncSetAttribute(
                          kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          (int)smem));
    kern<<<grid, nw * 32, smem, strm>>>(P, sl, ocut, oskip);
    return STRATA_OK;
  };
  strata_status sk = STRATA_OK;
#define SV_SLAB(r)                                                             \
  sk = ax == 0   ? slab_launch(k_cpml_slab<T, r, 0>)                           \
       : ax == 1 ? slab_launch(k_cpml_slab<T, r, 1>)                           \
                 : slab_launch(k_cpml_slab<T, r, 2>)
  switch (R) {
  case 1: SV_SLAB(1); break;
  case 2: SV_SLAB(2); break;
  case 3: SV_SLAB(3); break;
  default: SV_SLAB(4); break;
  }
#undef SV_SLAB
  if (sk != STRATA_OK) return sk;
  STRATA__LAUNCHED(ctx, "wave step: CPML slab kernel launch");
  return STRATA_OK;
}

/* Launches k_wavetma; *used = false (nothing launched) when this device or
 * these fields cannot take it (compute capability below 9.0, a row pitch
 * that is not a multiple of 16 bytes, not enough shared memory, a grid too
 * tall, no tensor map): the caller then runs k_wavev.
 * STRATA_WAVE_KERNEL=wavev forces that; STRATA_WAVE_BY = 4, 8 or 12 sets the
 * block's rows (experiments).  *fused: bit sl set when CPML slab sl
 * (axis * 2 + side) is done inside the update: x slabs (wt_cpml; R = 4,
 * the slab inside one x tile, its maps and shared memory possible;
 * STRATA_WAVE_CPMLX=pass leaves both to k_cpml_slab, for comparisons) and
 * y slabs (wt_cpmly; STRATA_WAVE_CPMLY=pass leaves them to their pass,
 * =serial runs their tiles on the main stream before the other rows;
 * STRATA_WAVE_YCHUNKS sets their z chunks) and z slabs (the same tiles
 * on wave_yz's view, walking along y; STRATA_WAVE_CPMLZ=pass leaves them
 * to their pass, STRATA_WAVE_ZTCHUNKS sets their y chunks).
 * cover[0..1]: the planes [cover[0], cover[1]) the x and y CPML terms
 * inside the update got, cover[2..3]: the z tiles' planes [0, cover[2])
 * and [cover[3], n[2]) (where those terms, but y's, were done as well).
 * STRATA_WAVE_TRACE prints what each launch took in to stderr
 * (diagnostics). */
template <typename T, int R>
strata_status launch_wavetma(strata_context *ctx, strata__cuda_state *st,
                             const wave_par<T> &P, const strata__wave_args *a,
                             bool *used, int *fused, int cover[4]) {
  constexpr int V = 16 / (int)sizeof(T), HV = (R + V - 1) / V;
  *used = false;
  *fused = 0;
  cover[0] = P.s0[2];
  cover[1] = P.s1[2];
  cover[2] = 0;
  cover[3] = P.n[2];
  if (const char *e = getenv("STRATA_WAVE_KERNEL"))
    if (strcmp(e, "wavev") == 0) return STRATA_OK;
  if (st->prop.major < 9) return STRATA_OK;
  const strata_field *fs[3] = {a->u, a->up, a->c2};
  for (int f = 0; f < 3; f++)
    if (fs[f] && fs[f]->L.pitch_x * sizeof(T) % 16 != 0) return STRATA_OK;
  int BY = kWtConsumers / kWtX; /* 16 rows */
  if (const char *e = getenv("STRATA_WAVE_BY")) {
    const int b = atoi(e);
    if (b >= 4 && b <= BY && b % 4 == 0) BY = b; /* whole warpgroups */
  }
  const bool c2f = P.c2 != NULL;
  const int A = c2f ? wavetma_geo<T, true>::A : wavetma_geo<T, false>::A;
  const int NS = R + 1 + A;
  const int TW = (kWtX + 2 * HV) * V, TH = BY + 2 * R;
  const size_t slot = (size_t)tma_slot_elems<T>(TW, TH) +
                      (size_t)(c2f ? 2 : 1) * tma_slot_elems<T>(kWtX * V, BY);
  const size_t bytes = NS * slot * sizeof(T) + 2 * NS * sizeof(uint64_t);
  if (bytes > st->prop.sharedMemPerBlockOptin) return STRATA_OK;
  const long long gx = ((P.n[0] + V - 1) / V + kWtX - 1) / kWtX;
  if ((P.n[1] + BY - 1) / BY > 65535 || gx > 0x7fffffffLL) return STRATA_OK;
  const int nzs = P.s1[2] - P.s0[2];
  if (nzs <= 0 || P.s1[0] <= P.s0[0] || P.s1[1] <= P.s0[1]) {
    *used = true; /* no stencil nodes */
    return STRATA_OK;
  }
  /* a driver without the encoder (or a map it refuses) leaves k_wavev to
   * do the step (or a CPML slab to its pass): no error, and the context's
   * message as it was */
  char msg[sizeof ctx->error];
  memcpy(msg, ctx->error, sizeof msg);
  /* a refused map: its message to stderr with STRATA_WAVE_TRACE, and the
   * context's message as it was */
  auto unrefuse = [&]() {
    if (getenv("STRATA_WAVE_TRACE"))
      fprintf(stderr, "wave step: %s (not taken)\n", ctx->error);
    memcpy(ctx->error, msg, sizeof msg);
  };
  /* The maps of one tile shape (TWm x THm u tiles, PWm x BYm up and c2
   * tiles).  u with 128-byte L2 promotion, except in the first and last
   * tiles of a row (tue: their outer halo's line holds only ghosts and
   * padding): 512^3 fp32 free surfaces 194-196 -> 196-197, sponge 211-212
   * -> 214-215 Gpts.steps/s (H100, two runs each) */
  struct wt_maps {
    CUtensorMap tu, tue, tp, tc;
    int3 ou, op, oc;
  };
  auto make_maps = [&](int TWm, int THm, int PWm, int BYm, wt_maps &m,
                       bool yz = false) -> bool {
    strata_status s =
        wt_map(ctx, a->u, sizeof(T), TWm, THm, 128, &m.tu, &m.ou, yz);
    if (s == STRATA_OK)
      s = wt_map(ctx, a->u, sizeof(T), TWm, THm, 0, &m.tue, &m.ou, yz);
    if (s == STRATA_OK)
      s = wt_map(ctx, a->up, sizeof(T), PWm, BYm, 0, &m.tp, &m.op, yz);
    if (s == STRATA_OK && c2f)
      s = wt_map(ctx, a->c2, sizeof(T), PWm, BYm, 0, &m.tc, &m.oc, yz);
    if (s != STRATA_OK) {
      unrefuse();
      return false;
    }
    if (!c2f) {
      m.tc = m.tp;
      m.oc = m.op;
    }
    return true;
  };
  wt_maps mm;
  if (!make_maps(TW, TH, kWtX * V, BY, mm)) return STRATA_OK;
  /* the x CPML slabs that go inside the update (see wt_cpml) for tiles of
   * XT columns, BYm rows and Vm-element vectors: one side a tile (the lo
   * side when both share one), a slab of at most 32 points with its
   * margins, and its maps (yz: wave_yz's view); the sides done come back
   * as bits */
  bool cxon = R == 4 && (P.slab[0].psi != NULL || P.slab[1].psi != NULL);
  if (const char *e = getenv("STRATA_WAVE_CPMLX"))
    if (strcmp(e, "pass") == 0) cxon = false;
  auto make_cx = [&](int XT, int BYm, int Vm, wt_cpml &cx,
                     bool yz = false) -> int {
    memset(&cx, 0, sizeof cx);
    cx.tile[0] = cx.tile[1] = -1;
    int xf = 0;
    for (int sd = 0; cxon && sd < 2; sd++) {
      const wave_slab<T> &W = P.slab[sd];
      const strata__wave_slab *S = &a->slab[0][sd];
      if (!W.psi || W.hi <= W.lo || W.lo < 0 || W.hi > P.n[0]) continue;
      const int t = W.lo / XT, wl = W.hi - W.lo;
      if ((W.hi - 1) / XT != t || wl + 2 * R > 32 || t == cx.tile[0]) continue;
      if (S->psi->L.pitch_x * sizeof(T) % 16 != 0) continue;
      /* whole vectors, and boxes whose rows are whole 16-byte units (the
       * encoder refuses others: 2-float vectors of the y and z tiles) */
      const int VA = Vm * (int)sizeof(T) < 16 ? 16 / (int)sizeof(T) : Vm;
      /* psi over the layer only: outside it psi is 0 (strata__wave_slab) */
      const int pw = (wl + VA - 1) / VA * VA, zw = pw;
      CUtensorMap mp, mz;
      int3 po, zo;
      strata_status s =
          wt_map(ctx, S->psi, sizeof(T), pw, BYm, 0, &mp, &po, yz);
      if (s == STRATA_OK)
        s = wt_map(ctx, S->zeta, sizeof(T), zw, BYm, 0, &mz, &zo, yz);
      if (s != STRATA_OK) { /* its pass then */
        unrefuse();
        continue;
      }
      cx.mp[sd] = mp;
      cx.mz[sd] = mz;
      cx.tile[sd] = t;
      cx.pw[sd] = pw;
      cx.zw[sd] = zw;
      cx.bxp[sd] = po.x + W.lo - W.origin;
      cx.bxz[sd] = zo.x + W.lo - W.origin;
      cx.oy = po.y;
      cx.oz = po.z;
      const int pe = tma_slot_elems<T>(pw, BYm), ze = tma_slot_elems<T>(zw, BYm);
      if (pe > cx.apsz) cx.apsz = pe;
      if (ze > cx.azsz) cx.azsz = ze;
      xf |= 1 << sd;
    }
    return xf;
  };
  wt_cpml cx;
  int xf = make_cx(kWtX * V, BY, V, cx);
  size_t cbytes = bytes + (size_t)NS * (cx.apsz + cx.azsz) * sizeof(T);
  if (!xf || cbytes > st->prop.sharedMemPerBlockOptin) {
    xf = 0;
    cx.tile[0] = cx.tile[1] = -1;
    cx.apsz = cx.azsz = 0;
    cbytes = bytes;
  }

  /* the y and z CPML slabs that go inside the update (see wt_cpmly):
   * fp32, radius 4, no FREE x face kept in the kernel (the CY instances
   * leave out its images); a side whose slab starts at 0 (ends at n) and
   * is at most kWtYRowsMax wide; both sides of an axis in one launch of
   * tiles of BY rows (the wider slab's in whole warpgroups), whose x CPML
   * sides must be the other tiles'.  The z slabs' tiles are the same
   * kernel on wave_yz's view (CY == 2): their rows are planes and they
   * walk along y, so they need every row walked (no FREE y face). */
  struct wt_side {
    wt_cpmly cy;
    wt_cpml cx;
    wt_maps m;
    int f, nt, BY;
    size_t bytes;
  };
  auto make_side = [&](const wave_par<T> &Pp, int ax, bool on,
                       wt_side &o) {
    memset(&o, 0, sizeof o);
    if constexpr (R == 4 && sizeof(T) == 4) {
      const bool yz = ax == 2;
      constexpr int VY = wavetma_geo<T, false, true>::V;
      constexpr int NSY = R + 1 + wavetma_geo<T, false, true>::A;
      int want = 0, BYc = 0;
      for (int sd = 0; on && sd < 2; sd++) {
        const wave_slab<T> &W = Pp.slab[2 + sd];
        const strata__wave_slab *S = &a->slab[ax][sd];
        if (!W.psi || W.hi <= W.lo) continue;
        if (sd == 0 ? W.lo != 0 : W.hi != Pp.n[1]) continue;
        const int wl = (W.hi - W.lo + 3) / 4 * 4;
        if (wl > kWtYRowsMax) continue;
        /* 8-byte vector stores of psi; 16-byte rows for the maps */
        if (S->psi->L.pitch_x * sizeof(T) % 16 != 0 ||
            (uintptr_t)W.psi % 8 != 0 || W.psy % 2 != 0 || W.psz % 2 != 0)
          continue;
        if (wl > BYc) BYc = wl;
        want |= 1 << sd;
      }
      /* the two tile rows must not meet */
      if (want && (want & 1 ? BYc : 0) >= (want & 2 ? Pp.n[1] - BYc : Pp.n[1]))
        want = 0;
      const int TWc = (kWtX + 2 * ((R + VY - 1) / VY)) * VY;
      if (!want || !make_maps(TWc, BYc + 2 * R, kWtX * VY, BYc, o.m, yz))
        return;
      for (int sd = 0; sd < 2; sd++) {
        if (!(want >> sd & 1)) continue;
        const wave_slab<T> &W = Pp.slab[2 + sd];
        const strata__wave_slab *S = &a->slab[ax][sd];
        CUtensorMap mp, mz;
        int3 po, zo;
        strata_status s = wt_map(ctx, S->psi, sizeof(T), kWtX * VY, BYc, 0,
                                 &mp, &po, yz);
        if (s == STRATA_OK)
          s = wt_map(ctx, S->zeta, sizeof(T), kWtX * VY, BYc, 0, &mz, &zo,
                     yz);
        if (s != STRATA_OK) {
          unrefuse();
          o.f = 0;
          return;
        }
        const int y0 = sd == 0 ? 0 : Pp.n[1] - BYc;
        o.cy.mp[o.nt] = mp;
        o.cy.mz[o.nt] = mz;
        o.cy.y0[o.nt] = y0;
        o.cy.sl[o.nt] = 2 + sd;
        o.cy.bxp = po.x;
        o.cy.bxz = zo.x;
        o.cy.byp[o.nt] = po.y + y0 - W.origin;
        o.cy.byz[o.nt] = zo.y + y0 - W.origin;
        o.cy.oz = po.z;
        o.nt++;
        o.f |= 1 << sd;
      }
      o.BY = BYc;
      o.cy.apsz = tma_slot_elems<T>(kWtX * VY, BYc + 2 * R);
      o.cy.azsz = tma_slot_elems<T>(kWtX * VY, BYc);
      /* the corners: these tiles must do the x sides the others do */
      const int xfy = make_cx(kWtX * VY, BYc, VY, o.cx, yz);
      const size_t sloty = (size_t)tma_slot_elems<T>(TWc, BYc + 2 * R) +
                           o.cx.apsz + o.cx.azsz + o.cy.apsz + o.cy.azsz;
      o.bytes = NSY * sloty * sizeof(T) + 2 * NSY * sizeof(uint64_t);
      if ((xfy & xf) != xf || o.bytes > st->prop.sharedMemPerBlockOptin)
        o.f = 0;
      else
        for (int sd = 0; sd < 2; sd++) /* a side the others leave to its pass */
          if (!(xf >> sd & 1)) o.cx.tile[sd] = -1;
      if (!o.f) o.nt = 0;
    }
  };
  const bool noxfree = !(P.inface && (P.ffree[0][0] || P.ffree[0][1]));
  bool cyon = noxfree, czon = noxfree && P.s0[1] == 0 && P.s1[1] == P.n[1];
  if (const char *e = getenv("STRATA_WAVE_CPMLY"))
    if (strcmp(e, "pass") == 0) cyon = false;
  if (const char *e = getenv("STRATA_WAVE_CPMLZ"))
    if (strcmp(e, "pass") == 0) czon = false;
  const wave_par<T> Q = wave_yz(P);
  wt_side ys, zs;
  make_side(P, 1, cyon, ys);
  make_side(Q, 2, czon, zs);
  /* the planes the other launches walk: those the z tiles leave */
  int wz0 = P.s0[2], wz1 = P.s1[2];
  if (zs.f) {
    if (zs.f & 1 && zs.BY > wz0) wz0 = zs.BY;
    if (zs.f & 2 && P.n[2] - zs.BY < wz1) wz1 = P.n[2] - zs.BY;
    if (wz0 >= wz1) {
      zs.f = zs.nt = 0;
      wz0 = P.s0[2];
      wz1 = P.s1[2];
    }
  }
  wave_par<T> Pm = P;
  Pm.s0[2] = wz0;
  Pm.s1[2] = wz1;
  const int ya = ys.f & 1 ? ys.BY : 0, yb = ys.f & 2 ? P.n[1] - ys.BY : P.n[1];
  const long long gy = (yb - ya + BY - 1) / BY;
  cover[0] = wz0;
  cover[1] = wz1;
  cover[2] = zs.f & 1 ? zs.BY : 0;
  cover[3] = zs.f & 2 ? P.n[2] - zs.BY : P.n[2];

  /* kind: 0 the main launch, 1 the y tiles, 2 the z tiles (their walk
   * along y) */
  auto launch = [&](auto kern, const wave_par<T> &Pl, const wt_maps &m,
                    const wt_cpml &cxl, const wt_cpmly &cyl,
                    long long tiles_x, long long tiles_y, int threads,
                    size_t nbytes, int BYl, cudaStream_t strm, int kind,
                    bool *ran) -> strata_status {
    *ran = false;
    const int nzl = Pl.s1[2] - Pl.s0[2];
    STRATA__CU(ctx, cudaFuncSetAttribute(
                        kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                        (int)nbytes));
    int per_sm = 0;
    STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                        &per_sm, kern, threads, nbytes));
    if (per_sm < 1) return STRATA_OK; /* cannot be resident: not launched */
    int chunks = strata__cu_zchunks((int)(tiles_x * tiles_y), per_sm,
                                    st->prop.multiProcessorCount, nzl, 2 * R);
    /* and chunks of at most 36 planes: on 512^3 with free surfaces (H100)
     * 1, 2, 4, 7 (the model's) and 12 chunks ran 112, 145, 170, 183 and
     * 187 Gpts/s: short chunks balance the multiprocessors' loads better
     * than the model's wave count says.  The cap was 43 planes until
     * session 23: with the CPML tiles beside it, 13 chunks of the main
     * launch (36 planes) against 11 (43) ran every wave case of
     * bench_solvers as fast or faster (H100, 512^3 fp32, two alternations:
     * free surfaces 198.3-198.6 -> 199.7-199.8, CPML 142.5-142.6 ->
     * 143.1-143.3, velocity field 121.5-121.8 -> 122.7-123.3 Gpts.steps/s,
     * sponge unchanged).  STRATA_WAVE_ZCAP: the cap (experiments). */
    int zcap = 36;
    if (const char *e = getenv("STRATA_WAVE_ZCAP"))
      if (atoi(e) >= 1) zcap = atoi(e);
    if (chunks < (nzl + zcap - 1) / zcap) chunks = (nzl + zcap - 1) / zcap;
    /* the y CPML tiles (16 a plane of 512^2, beside the other launch): at
     * most 32 planes a chunk; the z tiles the same (their walk along y).
     * H100, 512^3 fp32, CPML, two runs each in one call (session 21, the
     * walk's trip in one copy): 12 / 16 / 22-24 (the rule before: at most
     * 22 planes) / 28 chunks of each ran 133.0-133.5 / 138.0-138.1 /
     * 136.3 / 133.6 Gpts.steps/s.  (Session 18, with the trip's tail in a
     * second copy, 16 / 24 / 32 / 48 chunks: 129.5 / 130.8 / 127.4 /
     * 130.2.) */
    if (kind && chunks < (nzl + 31) / 32) chunks = (nzl + 31) / 32;
    static const char *const env[3] = {"STRATA_ZCHUNKS", "STRATA_WAVE_YCHUNKS",
                                       "STRATA_WAVE_ZTCHUNKS"};
    if (const char *e = getenv(env[kind])) /* experiments */
      if (atoi(e) >= 1) chunks = atoi(e) < nzl ? atoi(e) : nzl;
    const int zchunk = (nzl + chunks - 1) / chunks;
    dim3 grid((unsigned)tiles_x, (unsigned)tiles_y,
              (unsigned)((nzl + zchunk - 1) / zchunk));
    kern<<<grid, threads, nbytes, strm>>>(
        m.tu, m.tue, m.tp, m.tc, Pl, cxl, cyl, P.lap[0] * (T)3, zchunk, BYl,
        ya, yb, m.ou, m.op, m.oc);
    STRATA__LAUNCHED(ctx, "wave step: tensor-copy update kernel launch");
    *ran = true;
    return STRATA_OK;
  };
  /* the z and y CPML tiles first, launches of their own (64-column tiles)
   * on the side stream, forked from the main stream and joined to it after
   * the rows between them: the launches share the multiprocessors (their
   * points are apart; all only read u).  STRATA_WAVE_CPMLY=serial puts
   * them on the main stream before the others (comparisons). */
  bool forked = false, sideran = false;
  /* the side stream joins the main one after the main launch, or on the
   * way out after an error: nothing later on the main stream may run
   * beside the y tiles */
  auto join = [&](strata_status sr) -> strata_status {
    if (!forked) return sr;
    forked = false;
    cudaError_t e = cudaEventRecord(st->side_join, st->side);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(st->stream, st->side_join, 0);
    if (e != cudaSuccess && sr == STRATA_OK)
      sr = strata__cuda_fail(ctx, e, "wave step: joining the side stream",
                             __FILE__, __LINE__);
    return sr;
  };
  const char *cant = "wave step: the tensor-copy update cannot be resident "
                     "after its CPML tiles ran";
  if constexpr (R == 4 && sizeof(T) == 4) {
    if (ys.f || zs.f) {
      bool serial = false;
      if (const char *e = getenv("STRATA_WAVE_CPMLY"))
        serial = strcmp(e, "serial") == 0;
      if (!serial && !st->side) {
        /* default priority: the highest or the lowest for the side stream
         * measured 127.3 and 129.8 against 130.8 Gpts.steps/s (H100,
         * 512^3 fp32 CPML, one call) */
        STRATA__CU(ctx, cudaStreamCreateWithFlags(&st->side,
                                                  cudaStreamNonBlocking));
        STRATA__CU(ctx, cudaEventCreateWithFlags(&st->side_fork,
                                                 cudaEventDisableTiming));
        STRATA__CU(ctx, cudaEventCreateWithFlags(&st->side_join,
                                                 cudaEventDisableTiming));
      }
      if (!serial) {
        STRATA__CU(ctx, cudaEventRecord(st->side_fork, st->stream));
        STRATA__CU(ctx, cudaStreamWaitEvent(st->side, st->side_fork, 0));
        forked = true;
      }
      const long long gxy = ((P.n[0] + 1) / 2 + kWtX - 1) / kWtX;
      for (int ax = 2; ax >= 1; ax--) {
        const wt_side &o = ax == 2 ? zs : ys;
        if (!o.f) continue;
        const wave_par<T> &Pv = ax == 2 ? Q : Pm;
        /* With FREE faces kept in the kernel (inface) the tiles write
         * images only on the walk's planes within R of a FREE face of the
         * walk's axis, or on every plane when their rows come within R of
         * a FREE face of the rows' axis (no FREE x face here).  The walk is
         * cut into planes [cut[0], cut[1]) and [cut[2], cut[3]) with the
         * images (FF == 1) and [cut[1], cut[2]) without (FF == 2): in the
         * images' instances their out-of-line call costs 600-900 bytes of
         * spills, which held CPML + free top + velocity field 12% lower
         * (H200, 512^3).  Without inface, one walk (FF == 0). */
        int cut[4] = {Pv.s0[2], Pv.s0[2], Pv.s1[2], Pv.s1[2]};
        if (P.inface) {
          bool rows = false;
          for (int t = 0; t < o.nt; t++) {
            const int r0 = o.cy.y0[t], r1 = r0 + o.BY - 1;
            if ((Pv.ffree[1][0] && r0 <= R) ||
                (Pv.ffree[1][1] && r1 >= Pv.n[1] - 1 - R))
              rows = true;
          }
          /* STRATA_WAVE_TILEIMAGES=all: the images' instances on every
           * plane (comparisons) */
          if (const char *e = getenv("STRATA_WAVE_TILEIMAGES"))
            if (strcmp(e, "all") == 0) rows = true;
          if (rows) {
            cut[1] = cut[2] = cut[3];
          } else {
            if (Pv.ffree[2][0] && cut[1] < R + 1)
              cut[1] = R + 1 < cut[3] ? R + 1 : cut[3];
            if (Pv.ffree[2][1] && cut[2] > Pv.n[2] - 1 - R)
              cut[2] = Pv.n[2] - 1 - R > cut[1] ? Pv.n[2] - 1 - R : cut[1];
          }
        }
        for (int part = 0; part < 3; part++) {
          if (cut[part] >= cut[part + 1]) continue;
          wave_par<T> Pl = Pv;
          Pl.s0[2] = cut[part];
          Pl.s1[2] = cut[part + 1];
          bool ran = false;
          auto tl = [&](auto ffc, auto cyc) -> strata_status {
            constexpr int FFv = decltype(ffc)::value,
                          CYv = decltype(cyc)::value;
            auto go = [&](auto kern) -> strata_status {
              return launch(kern, Pl, o.m, o.cx, o.cy, gxy, o.nt,
                            kWtX * o.BY + 128, o.bytes, o.BY,
                            forked ? st->side : st->stream, ax, &ran);
            };
            return c2f ? go(k_wavetma<T, R, FFv, true, true, CYv>)
                       : go(k_wavetma<T, R, FFv, false, true, CYv>);
          };
          const int ffv = !P.inface ? 0 : part == 1 ? 2 : 1;
          if (P.inface && getenv("STRATA_WAVE_TRACE"))
            fprintf(stderr, "wave step: %c tiles, walk [%d, %d) %s images\n",
                    ax == 2 ? 'z' : 'y', cut[part], cut[part + 1],
                    ffv == 1 ? "with" : "without");
          typedef std::integral_constant<int, 0> I0;
          typedef std::integral_constant<int, 1> I1;
          typedef std::integral_constant<int, 2> I2;
          strata_status sy;
          if (ax == 2)
            sy = ffv == 0 ? tl(I0(), I2()) : ffv == 1 ? tl(I1(), I2())
                                                      : tl(I2(), I2());
          else
            sy = ffv == 0 ? tl(I0(), I1()) : ffv == 1 ? tl(I1(), I1())
                                                      : tl(I2(), I1());
          if (sy != STRATA_OK) return join(sy);
          if (!ran) /* k_wavev then, if nothing ran yet */
            return join(sideran ? strata__fail(ctx, STRATA_EDEVICE, "%s", cant)
                                : STRATA_OK);
          sideran = true;
        }
      }
      /* the y slabs' planes the y tiles did not walk (the z tiles', and
       * those of FREE z faces): their pass over those planes, psi and the
       * correction where they are stencil nodes, after the z tiles (which
       * wrote up there) and beside the main launch, apart from its points */
      for (int sd = 0; ys.f && sd < 2; sd++) {
        if (!(ys.f >> sd & 1) || wz1 - wz0 >= P.n[2]) continue;
        const int pair = sd == 0 && ys.f == 3 && slab_pairs(P, 2);
        const strata_status sp =
            slab_pass<T>(ctx, forked ? st->side : st->stream, P, R, 2 + sd,
                         pair, wz0, wz1 - wz0);
        if (sp != STRATA_OK) return join(sp);
        sd += pair;
      }
    }
  }
  const int threads = kWtX * BY + 128; /* and the copying warpgroup */
  auto launch_main = [&](auto kern) -> strata_status {
    bool ran = false;
    const strata_status sm_ =
        launch(kern, Pm, mm, cx, ys.cy, gx, gy, threads, cbytes, BY,
               st->stream, 0, &ran);
    if (sm_ != STRATA_OK) return sm_;
    if (!ran) {
      if (sideran) /* the step cannot fall back now */
        return strata__fail(ctx, STRATA_EDEVICE, "%s", cant);
      return STRATA_OK;
    }
    *used = true;
    *fused = xf | ys.f << 2 | zs.f << 4;
    if (getenv("STRATA_WAVE_TRACE")) /* diagnostics: which terms went in */
      fprintf(stderr,
              "wave step: tensor-copy update, x CPML sides inside %d, y "
              "sides inside %d (tiles of %d rows), z sides inside %d (tiles "
              "of %d planes), rows %d..%d planes %d..%d in the main "
              "launch\n",
              xf, ys.f, ys.BY, zs.f, zs.BY, ya, yb, wz0, wz1);
    return STRATA_OK;
  };
  strata_status sr;
  if constexpr (R == 4) /* the x CPML instances (only radius 4 has them) */
    if (xf) {
      if (P.inface)
        sr = c2f ? launch_main(k_wavetma<T, R, true, true, true, 0>)
                 : launch_main(k_wavetma<T, R, true, false, true, 0>);
      else
        sr = c2f ? launch_main(k_wavetma<T, R, false, true, true, 0>)
                 : launch_main(k_wavetma<T, R, false, false, true, 0>);
      return join(sr);
    }
  if (P.inface) {
    sr = c2f ? launch_main(k_wavetma<T, R, true, true, false, 0>)
             : launch_main(k_wavetma<T, R, true, false, false, 0>);
  } else {
    sr = c2f ? launch_main(k_wavetma<T, R, false, true, false, 0>)
             : launch_main(k_wavetma<T, R, false, false, false, 0>);
  }
  return join(sr);
}

/* C. Point sources, in order, by one thread (sources may share a node). */
template <typename T> struct src_list {
  int n;
  long long off[8];
  int at[8][3];
  T val[8];
};

template <typename T> __global__ void k_sources(T *up, src_list<T> s) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (int q = 0; q < s.n; q++) up[s.off[q]] += s.val[q];
}

/* The wave step's sources.  With faces in the kernels, the nodes the
 * sources changed are then made what k_faces would make them: 0 on a FREE
 * boundary node, and their odd images (after every source is added; a
 * node met twice is harmless). */
template <typename T>
__global__ void k_wave_sources(wave_par<T> P, src_list<T> s, int R) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  T *up = P.up;
  for (int q = 0; q < s.n; q++) up[s.off[q]] += s.val[q];
  if (!P.inface) return;
  for (int q = 0; q < s.n; q++) {
    bool bnode = false;
    for (int ax = 0; ax < 3; ax++)
      bnode |= (P.ffree[ax][0] && s.at[q][ax] == 0) ||
               (P.ffree[ax][1] && s.at[q][ax] == P.n[ax] - 1);
    if (bnode) up[s.off[q]] = T(0);
    free_images<T>(P, R, s.at[q][0], s.at[q][1], s.at[q][2], up[s.off[q]]);
  }
}

/* D. Faces of one axis ax: a thread per line (ib, ic) over the other two
 * axes' interior; side 0 then side 1, as FN(wave)'s Phase D. */
struct face_par {
  int ax, nax, R;
  long long sa, sb, sc;
  int nb, nc;
  int kind[2];
  int s0b, s1b, s0c, s1c; /* MUR: only rows the stencil updated */
  int fb[2], fc[2];       /* FREE faces of axes b and c: their boundary
                             nodes' lines give 0 ghosts (STRATA__WF_FREE) */
};

template <typename T>
__global__ void k_faces(T *up, const T *u, face_par F, T mur) {
  const long long lines = (long long)F.nb * F.nc;
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       t < lines; t += (long long)gridDim.x * blockDim.x) {
    const int ib = (int)(t % F.nb), ic = (int)(t / F.nb);
    T *line = up + ib * F.sb + ic * F.sc;
    const T *uline = u + ib * F.sb + ic * F.sc;
    const long long sa = F.sa;
    const int nax = F.nax;
    const bool dead = (F.fb[0] && ib == 0) || (F.fb[1] && ib == F.nb - 1) ||
                      (F.fc[0] && ic == 0) || (F.fc[1] && ic == F.nc - 1);
    for (int side = 0; side < 2; side++) {
      const int kind = F.kind[side];
      if (kind == STRATA__WF_ZERO) continue;
      if (kind == STRATA__WF_FREE) {
        const long long bnode = side ? nax - 1 : 0;
        line[bnode * sa] = 0;
        for (int qq = 1; qq <= F.R; qq++) {
          const long long g = side ? nax - 1 + qq : -qq,
                          m = side ? nax - 1 - qq : qq;
          line[g * sa] = dead ? T(0) : -line[m * sa];
        }
      } else if (kind == STRATA__WF_PERIODIC) {
        for (int qq = 1; qq <= F.R; qq++) {
          if (side)
            line[(long long)(nax - 1 + qq) * sa] =
                dead ? T(0) : line[(long long)(qq - 1) * sa];
          else
            line[(long long)(-qq) * sa] =
                dead ? T(0) : line[(long long)(nax - qq) * sa];
        }
      } else if (kind == STRATA__WF_MUR) {
        if (ib < F.s0b || ib >= F.s1b || ic < F.s0c || ic >= F.s1c) continue;
        const long long bnode = side ? nax - 1 : 0,
                        inner = side ? nax - 2 : 1;
        line[bnode * sa] = uline[inner * sa] +
                           mur * (line[inner * sa] - uline[bnode * sa]);
      }
    }
  }
}

template <typename T>
strata_status wave_typed(const strata__wave_args *a) {
  const strata_field *UF = a->u;
  strata_field *PF = a->up;
  strata_context *ctx = UF->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const int D = a->dims, R = a->radius;
  wave_par<T> P;
  memset(&P, 0, sizeof P);
  P.u = (const T *)UF->data + UF->L.origin;
  P.up = (T *)PF->data + PF->L.origin;
  P.c2 = a->c2 ? (const T *)a->c2->data + a->c2->L.origin : (const T *)NULL;
  P.c2_line = a->c2_line;
  P.sy = (long long)UF->L.pitch_x;
  P.sz = P.sy * (long long)UF->L.pitch_y;
  for (int k = 0; k <= STRATA_MAX_RADIUS; k++) {
    P.lap[k] = k <= R ? (T)a->lap[k] : T(0);
    P.d1[k] = k <= R ? (T)a->d1[k] : T(0);
  }
  for (int ax = 0; ax < 3; ax++) {
    P.n[ax] = (int)UF->d.n[ax];
    P.s0[ax] = 0;
    P.s1[ax] = 1;
  }
  for (int ax = 0; ax < D; ax++) {
    const int fl = a->face[2 * ax], fh = a->face[2 * ax + 1];
    P.s0[ax] = (fl == STRATA__WF_FREE || fl == STRATA__WF_MUR) ? 1 : 0;
    P.s1[ax] = P.n[ax] -
               ((fh == STRATA__WF_FREE || fh == STRATA__WF_MUR) ? 1 : 0);
  }
  for (int ax = 0; ax < 3; ax++) {
    P.damp[ax] = ax < D ? a->damp[ax] : NULL;
    P.pa[ax] = ax < D ? a->pml_a[ax] : NULL;
    P.pb[ax] = ax < D ? a->pml_b[ax] : NULL;
    if (P.damp[ax]) P.any_damp = 1;
  }
  for (int ax = 0; ax < D; ax++)
    for (int side = 0; side < 2; side++) {
      const strata__wave_slab *S = &a->slab[ax][side];
      wave_slab<T> &W = P.slab[2 * ax + side];
      if (!S->psi) continue;
      if (!S->zeta || !a->pml_a[ax] || !a->pml_b[ax])
        return strata__fail(ctx, STRATA_EINVAL,
                            "wave step: a CPML slab on axis %c without zeta "
                            "or profiles", "xyz"[ax]);
      if (S->zeta->L.pitch_x != S->psi->L.pitch_x ||
          S->zeta->L.pitch_y != S->psi->L.pitch_y ||
          S->zeta->L.origin != S->psi->L.origin)
        return strata__fail(ctx, STRATA_EINVAL,
                            "wave step: psi and zeta of a slab differ in "
                            "layout");
      W.psi = (T *)S->psi->data + S->psi->L.origin;
      W.zeta = (T *)S->zeta->data + S->zeta->L.origin;
      W.psy = (long long)S->psi->L.pitch_x;
      W.psz = W.psy * (long long)S->psi->L.pitch_y;
      W.origin = (int)S->origin;
      W.lo = (int)S->lo;
      W.hi = (int)S->hi;
    }

  /* A: psi on one slab (the slabs are independent); an x or y slab's
   * planes [z0, z1) only when z1 >= 0 */
  auto run_psi = [&](int sl, int z0 = 0, int z1 = -1) -> strata_status {
    const wave_slab<T> &W = P.slab[sl];
    const int ax = sl / 2;
    int r0[3] = {0, 0, 0}, r1[3] = {P.n[0], P.n[1], P.n[2]};
    if (ax != 2 && z1 >= 0) {
      r0[2] = z0;
      r1[2] = z1;
    }
    r0[ax] = W.lo;
    r1[ax] = W.hi;
    const int nxr = r1[0] - r0[0];
    const long long rows = (long long)(r1[1] - r0[1]) * (r1[2] - r0[2]);
    if (nxr <= 0 || rows <= 0) return STRATA_OK;
    /* x slabs are narrow (width + r points): a block of the range's
     * size, not 128 threads with most of them idle (a linear index over
     * rows and x, tried for full lanes, measured 3% slower overall) */
    const int pth = nxr <= 32 ? 32 : nxr <= 64 ? 64 : 128;
    dim3 grid((unsigned)((nxr + pth - 1) / pth),
              (unsigned)(rows < 65535 ? rows : 65535));
#define SV_PSI(r)                                                              \
  k_psi<T, r><<<grid, pth, 0, st->stream>>>(                                   \
      P.u, P.sy, P.sz, W.psi, W.psy, W.psz, ax, W.origin, r0[0], r1[0], r0[1], \
      r1[1], r0[2], r1[2], P.pa[ax], P.pb[ax], P)
    switch (R) {
    case 1: SV_PSI(1); break;
    case 2: SV_PSI(2); break;
    case 3: SV_PSI(3); break;
    default: SV_PSI(4); break;
    }
#undef SV_PSI
    STRATA__LAUNCHED(ctx, "wave step: CPML psi kernel launch");
    return STRATA_OK;
  };

  /* faces in the kernels (see above): 3D, FREE and ZERO faces only (at
   * least one FREE), every axis at least 2R + 2 nodes (FREE rows and images
   * never overlap), and only when k_wavev runs (set below).  k_wavev has
   * an instance for it (FF), so the other cases run the kernel as before. */
  P.inface = 0;
  for (int f = 0; f < 2 * D; f++)
    if (a->face[f] == STRATA__WF_FREE) P.inface = D == 3;
  for (int f = 0; f < 6; f++)
    if (a->face[f] != STRATA__WF_ZERO && a->face[f] != STRATA__WF_FREE)
      P.inface = 0;
  if (const char *e = getenv("STRATA_WAVE_FACES")) /* experiments: "pass" */
    if (strcmp(e, "pass") == 0) P.inface = 0;
  for (int ax = 0; ax < 3; ax++) {
    if (P.n[ax] < 2 * R + 2) P.inface = 0;
    for (int side = 0; side < 2; side++)
      P.ffree[ax][side] = ax < D && a->face[2 * ax + side] == STRATA__WF_FREE;
  }

  /* B: the update over the stencil nodes: streamed in 3D (k_wavev), else
   * (2D, or a grid k_wavev does not take) k_wave */
  bool streamed = false;
  int fused = 0; /* CPML slabs done inside k_wavetma (bit: slab index) */
  int cover[4] = {P.s0[2], P.s1[2], 0, P.n[2]}; /* its planes (see there) */
  if (D == 3) {
    strata_status sb = STRATA_OK;
    switch (R) {
    case 1:
      sb = launch_wavetma<T, 1>(ctx, st, P, a, &streamed, &fused, cover);
      break;
    case 2:
      sb = launch_wavetma<T, 2>(ctx, st, P, a, &streamed, &fused, cover);
      break;
    case 3:
      sb = launch_wavetma<T, 3>(ctx, st, P, a, &streamed, &fused, cover);
      break;
    case 4:
      sb = launch_wavetma<T, 4>(ctx, st, P, a, &streamed, &fused, cover);
      break;
    default: break;
    }
    if (sb != STRATA_OK) return sb;
    if (!streamed) {
      switch (R) {
      case 1: sb = launch_wavev<T, 1>(ctx, st, P, &streamed); break;
      case 2: sb = launch_wavev<T, 2>(ctx, st, P, &streamed); break;
      case 3: sb = launch_wavev<T, 3>(ctx, st, P, &streamed); break;
      case 4: sb = launch_wavev<T, 4>(ctx, st, P, &streamed); break;
      default: break;
      }
      if (sb != STRATA_OK) return sb;
    }
  }
  if (!streamed) P.inface = 0;
  if (P.inface && (P.ffree[1][0] || P.ffree[1][1] || P.ffree[2][0] ||
                   P.ffree[2][1])) {
    const int V = 16 / (int)sizeof(T);
    const long long rows = 2LL * P.n[2] + 2LL * P.n[1];
    dim3 grid((unsigned)((P.n[0] / V + 1 + 127) / 128),
              (unsigned)(rows < 4096 ? rows : 4096));
    switch (R) {
    case 1: k_free_rows<T, 1><<<grid, 128, 0, st->stream>>>(P); break;
    case 2: k_free_rows<T, 2><<<grid, 128, 0, st->stream>>>(P); break;
    case 3: k_free_rows<T, 3><<<grid, 128, 0, st->stream>>>(P); break;
    default: k_free_rows<T, 4><<<grid, 128, 0, st->stream>>>(P); break;
    }
    STRATA__LAUNCHED(ctx, "wave step: free-surface rows kernel launch");
  }
  const int tiles_x = (P.n[0] + kWX - 1) / kWX;
  P.tiles_y = (P.n[1] + kWY - 1) / kWY;
  P.nchunks = 1;
  P.zchunk = 1;
  if (D == 3) {
    const int nzs = P.s1[2] - P.s0[2];
    /* enough blocks for about four waves; chunks of at least 16 planes
     * (the 2R planes of warm-up stay a small part) */
    const long long xy = (long long)tiles_x * P.tiles_y;
    const long long want = 4LL * st->prop.multiProcessorCount;
    long long ch = (want + xy - 1) / xy;
    long long maxc = nzs / 16;
    if (maxc < 1) maxc = 1;
    if (ch > maxc) ch = maxc;
    if (ch < 1) ch = 1;
    P.zchunk = (int)((nzs + ch - 1) / ch);
    if (P.zchunk < 1) P.zchunk = 1;
    P.nchunks = (nzs + P.zchunk - 1) / P.zchunk;
    if (P.nchunks < 1) P.nchunks = 1;
  }
  /* B' (streamed): the CPML terms the streaming kernel left out, slab by
   * slab: psi and the correction in one pass (k_cpml_slab), or, for a slab
   * wider than its tile (or STRATA_WAVE_CPML=split, for comparisons),
   * k_psi and then k_cpml_corr.  psi reads u only, so it may follow the
   * update; a slab's correction follows its own psi. */
  bool split = false;
  if (const char *e = getenv("STRATA_WAVE_CPML"))
    split = strcmp(e, "split") == 0;
  for (int sl = 0; streamed && sl < 2 * D; sl++) {
    const wave_slab<T> &W = P.slab[sl];
    if (!W.psi || W.hi <= W.lo) continue;
    const int ax = sl / 2;
    if (fused >> sl & 1) {
      /* done in the update and its tiles (the y slabs' planes the y tiles
       * did not walk too, see launch_wavetma), but for an x slab's psi on
       * the planes no walk took (FREE or Mur z faces; cover): k_psi there */
      if (ax == 0) {
        strata_status sp = run_psi(sl, cover[2], cover[0]);
        if (sp == STRATA_OK) sp = run_psi(sl, cover[1], cover[3]);
        if (sp != STRATA_OK) return sp;
      }
      continue;
    }
    const int Lw = W.hi - W.lo + 2 * R;
    if (!split && Lw <= kSlabMaxW) {
      /* both sides of an axis in one launch when they are as wide and
       * apart (no point corrected by both): one tail of units, not two */
      const int pair = sl % 2 == 0 && !(fused >> (sl + 1) & 1) &&
                       slab_pairs(P, sl);
      const strata_status sk =
          slab_pass<T>(ctx, st->stream, P, R, sl, pair, 0, 0); /* all */
      if (sk != STRATA_OK) return sk;
      sl += pair;
      continue;
    }
    strata_status sp = run_psi(sl);
    if (sp != STRATA_OK) return sp;
    int r0[3], r1[3];
    for (int q = 0; q < 3; q++) {
      r0[q] = P.s0[q];
      r1[q] = P.s1[q];
    }
    if (W.lo > r0[ax]) r0[ax] = W.lo;
    if (W.hi < r1[ax]) r1[ax] = W.hi;
    const int nxr = r1[0] - r0[0];
    const long long rows = (long long)(r1[1] - r0[1]) * (r1[2] - r0[2]);
    if (nxr <= 0 || rows <= 0 || r1[1] <= r0[1]) continue;
    const int pth = nxr <= 32 ? 32 : nxr <= 64 ? 64 : 128;
    dim3 grid((unsigned)((nxr + pth - 1) / pth),
              (unsigned)(rows < 65535 ? rows : 65535));
#define SV_CORR(r)                                                             \
  k_cpml_corr<T, r><<<grid, pth, 0, st->stream>>>(P, sl, r0[0], r1[0], r0[1], \
                                                  r1[1], r0[2], r1[2])
    switch (R) {
    case 1: SV_CORR(1); break;
    case 2: SV_CORR(2); break;
    case 3: SV_CORR(3); break;
    default: SV_CORR(4); break;
    }
#undef SV_CORR
    STRATA__LAUNCHED(ctx, "wave step: CPML correction kernel launch");
  }
  if (!streamed) { /* A, before the update that reads psi */
    for (int sl = 0; sl < 2 * D; sl++) {
      if (!P.slab[sl].psi) continue;
      strata_status sp = run_psi(sl);
      if (sp != STRATA_OK) return sp;
    }
  }
  if (!streamed) {
    const long long pairs = (long long)P.tiles_y * P.nchunks;
    dim3 grid((unsigned)tiles_x, (unsigned)(pairs < 65535 ? pairs : 65535));
    dim3 block(kWX, kWY);
    switch ((D == 3 ? 10 : 0) + R) {
#define SV_WAVE(d, r)                                                          \
  case (d == 3 ? 10 : 0) + r:                                                  \
    k_wave<T, r, d><<<grid, block, 0, st->stream>>>(P);                        \
    break;
      SV_WAVE(2, 1) SV_WAVE(2, 2) SV_WAVE(2, 3) SV_WAVE(2, 4)
      SV_WAVE(3, 1) SV_WAVE(3, 2) SV_WAVE(3, 3) SV_WAVE(3, 4)
#undef SV_WAVE
    default:
      return strata__fail(ctx, STRATA_EINVAL,
                          "wave step: radius %d in %dD is not supported", R,
                          D);
    }
    STRATA__LAUNCHED(ctx, "wave step: update kernel launch");
  }

  /* C: point sources */
  if (a->nsrc > 0) {
    src_list<T> sl;
    memset(&sl, 0, sizeof sl);
    sl.n = a->nsrc > 8 ? 8 : a->nsrc;
    for (int q = 0; q < sl.n; q++) {
      for (int ax = 0; ax < 3; ax++) {
        const long c = a->src[q][ax];
        const long n = ax < D ? (long)P.n[ax] : 1;
        if (c < 0 || c >= n)
          return strata__fail(ctx, STRATA_EINVAL,
                              "wave step: source %d lies outside the grid", q);
      }
      sl.off[q] = a->src[q][0] + (long long)a->src[q][1] * P.sy +
                  (long long)a->src[q][2] * P.sz;
      for (int ax = 0; ax < 3; ax++) sl.at[q][ax] = (int)a->src[q][ax];
      sl.val[q] = (T)a->src_val[q];
    }
    k_wave_sources<T><<<1, 32, 0, st->stream>>>(P, sl, R);
    STRATA__LAUNCHED(ctx, "wave step: source kernel launch");
  }

  /* D: faces, axis by axis (none left with faces in the kernels) */
  const long long st3[3] = {1, P.sy, P.sz};
  for (int ax = 0; ax < (P.inface ? 0 : D); ax++) {
    const int kl = a->face[2 * ax], kh = a->face[2 * ax + 1];
    if (kl == STRATA__WF_ZERO && kh == STRATA__WF_ZERO) continue;
    if ((kl == STRATA__WF_MUR || kh == STRATA__WF_MUR) && R != 1)
      return strata__fail(ctx, STRATA_EINVAL,
                          "wave step: Mur faces need radius 1 (radius %d)",
                          R);
    face_par F;
    const int b = (ax + 1) % 3, c = (ax + 2) % 3;
    F.ax = ax;
    F.nax = P.n[ax];
    F.R = R;
    F.sa = st3[ax];
    F.sb = st3[b];
    F.sc = st3[c];
    F.nb = P.n[b];
    F.nc = P.n[c];
    F.kind[0] = kl;
    F.kind[1] = kh;
    F.s0b = P.s0[b];
    F.s1b = P.s1[b];
    F.s0c = P.s0[c];
    F.s1c = P.s1[c];
    for (int side = 0; side < 2; side++) {
      F.fb[side] = b < D && a->face[2 * b + side] == STRATA__WF_FREE;
      F.fc[side] = c < D && a->face[2 * c + side] == STRATA__WF_FREE;
    }
    const long long lines = (long long)F.nb * F.nc;
    k_faces<T><<<sv_blocks(lines, 256), 256, 0, st->stream>>>(
        P.up, P.u, F, (T)a->mur);
    STRATA__LAUNCHED(ctx, "wave step: face kernel launch");
  }
  return STRATA_OK;
}

/* ======================================================================== */
/* Yee TM step                                                               */
/* ======================================================================== */

template <typename T> struct yee_par {
  T *ez, *hx, *hy;          /* interior (0,0) of each (one layout) */
  T *pezx, *pezy, *phxy, *phyx;
  const double *pa[2], *pb[2], *pah[2], *pbh[2];
  long long sy;
  int n0, n1;
  int hr0, hr1;             /* H ranges: n (periodic) or n - 1 */
  int e0x, e1x, e0y, e1y;   /* E ranges */
  int lo[2][2], hi[2][2];   /* PML index ranges [axis][side] */
  int face[4];
  int perx, pery;
  T ce, ch, mur;
};

/* H half step: one thread per (i, j) of [0, n0) x [0, n1). */
template <typename T>
__global__ void __launch_bounds__(256) k_yee_h(const yee_par<T> P) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= P.n0) return;
  for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < P.n1;
       j += gridDim.y * blockDim.y) {
    const long long o = i + (long long)j * P.sy;
    const T *e = P.ez + o;
    if (j < P.hr1) {
      const T dy = e[P.sy] - e[0];
      T h = P.hx[o];
      h -= P.ch * dy;
      if (P.phxy && P.pah[1][j] != 0.0) {
        const T ac = (T)P.pah[1][j], bc = (T)P.pbh[1][j];
        T ps = bc * P.phxy[o] + ac * dy;
        P.phxy[o] = ps;
        h -= P.ch * ps;
      }
      P.hx[o] = h;
    }
    if (i < P.hr0) {
      const T dx = e[1] - e[0];
      T h = P.hy[o];
      h += P.ch * dx;
      if (P.phyx)
        for (int side = 0; side < 2; side++) {
          const int hi = P.hi[0][side] < P.hr0 ? P.hi[0][side] : P.hr0;
          if (i >= P.lo[0][side] && i < hi) {
            T ps = (T)P.pbh[0][i] * P.phyx[o] + (T)P.pah[0][i] * dx;
            P.phyx[o] = ps;
            h += P.ch * ps;
          }
        }
      P.hy[o] = h;
    }
  }
}

/* Ghost copies between the half steps: periodic H ghosts the E step reads,
 * and Ez^n of the node next to each Mur face, kept in Ez's ghost layer. */
template <typename T>
__global__ void k_yee_fix(const yee_par<T> P) {
  const long long sy = P.sy;
  const int m = P.n0 > P.n1 ? P.n0 : P.n1;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < m;
       t += gridDim.x * blockDim.x) {
    if (P.perx && t < P.n1)
      P.hy[-1 + t * sy] = P.hy[P.n0 - 1 + t * sy];
    if (P.pery && t < P.n0)
      P.hx[t - sy] = P.hx[t + (long long)(P.n1 - 1) * sy];
    if (P.face[0] == STRATA__YF_MUR && t < P.n1)
      P.ez[-1 + t * sy] = P.ez[1 + t * sy];
    if (P.face[1] == STRATA__YF_MUR && t < P.n1)
      P.ez[P.n0 + t * sy] = P.ez[P.n0 - 2 + t * sy];
    if (P.face[2] == STRATA__YF_MUR && t < P.n0)
      P.ez[t - sy] = P.ez[t + sy];
    if (P.face[3] == STRATA__YF_MUR && t < P.n0)
      P.ez[t + (long long)P.n1 * sy] = P.ez[t + (long long)(P.n1 - 2) * sy];
  }
}

/* E step over [e0x, e1x) x [e0y, e1y). */
template <typename T>
__global__ void __launch_bounds__(256) k_yee_e(const yee_par<T> P) {
  const int i = P.e0x + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= P.e1x) return;
  for (int j = P.e0y + (int)(blockIdx.y * blockDim.y + threadIdx.y);
       j < P.e1y; j += gridDim.y * blockDim.y) {
    const long long o = i + (long long)j * P.sy;
    const T dhy = P.hy[o] - P.hy[o - 1];
    const T dhx = P.hx[o] - P.hx[o - P.sy];
    T e = P.ez[o];
    e += P.ce * (dhy - dhx);
    if (P.pezx)
      for (int side = 0; side < 2; side++)
        if (i >= P.lo[0][side] && i < P.hi[0][side]) {
          T ps = (T)P.pb[0][i] * P.pezx[o] + (T)P.pa[0][i] * dhy;
          P.pezx[o] = ps;
          e += P.ce * ps;
        }
    if (P.pezy && P.pa[1][j] != 0.0) {
      const T ac = (T)P.pa[1][j], bc = (T)P.pb[1][j];
      T ps = bc * P.pezy[o] + ac * dhx;
      P.pezy[o] = ps;
      e -= P.ce * ps;
    }
    P.ez[o] = e;
  }
}

/* First-order Mur on the boundary nodes of the rows the E step updated
 * (the four faces touch disjoint nodes and read none another writes). */
template <typename T>
__global__ void k_yee_mur(const yee_par<T> P) {
  const long long sy = P.sy;
  const int m = P.n0 > P.n1 ? P.n0 : P.n1;
  T *ez = P.ez;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < m;
       t += gridDim.x * blockDim.x) {
    if (t >= P.e0y && t < P.e1y) {
      const long long r = t * sy;
      if (P.face[0] == STRATA__YF_MUR)
        ez[r] = ez[-1 + r] + P.mur * (ez[1 + r] - ez[r]);
      if (P.face[1] == STRATA__YF_MUR)
        ez[P.n0 - 1 + r] =
            ez[P.n0 + r] + P.mur * (ez[P.n0 - 2 + r] - ez[P.n0 - 1 + r]);
    }
    if (t >= P.e0x && t < P.e1x) {
      if (P.face[2] == STRATA__YF_MUR)
        ez[t] = ez[t - sy] + P.mur * (ez[t + sy] - ez[t]);
      if (P.face[3] == STRATA__YF_MUR) {
        const long long l = t + (long long)(P.n1 - 1) * sy;
        ez[l] = ez[l + sy] + P.mur * (ez[l - sy] - ez[l]);
      }
    }
  }
}

/* Periodic ghosts of Ez (read by the next H half step). */
template <typename T>
__global__ void k_yee_per(const yee_par<T> P) {
  const long long sy = P.sy;
  const int m = P.n0 > P.n1 ? P.n0 : P.n1;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < m;
       t += gridDim.x * blockDim.x) {
    if (P.perx && t < P.n1) P.ez[P.n0 + t * sy] = P.ez[t * sy];
    if (P.pery && t < P.n0) P.ez[t + (long long)P.n1 * sy] = P.ez[t];
  }
}

template <typename T>
strata_status yee_typed(const strata__yee_args *a) {
  strata_context *ctx = a->ez->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const strata_field *EF = a->ez;
  const strata_field *all[6] = {a->hx,      a->hy,      a->psi_ezx,
                                a->psi_ezy, a->psi_hxy, a->psi_hyx};
  for (int q = 0; q < 6; q++)
    if (all[q] && (all[q]->L.pitch_x != EF->L.pitch_x ||
                   all[q]->L.origin != EF->L.origin ||
                   all[q]->d.precision != EF->d.precision))
      return strata__fail(ctx, STRATA_EINVAL,
                          "yee step: the fields differ in layout");
  yee_par<T> P;
  memset(&P, 0, sizeof P);
  const size_t org = EF->L.origin;
  P.ez = (T *)a->ez->data + org;
  P.hx = (T *)a->hx->data + org;
  P.hy = (T *)a->hy->data + org;
  P.pezx = a->psi_ezx ? (T *)a->psi_ezx->data + org : (T *)NULL;
  P.pezy = a->psi_ezy ? (T *)a->psi_ezy->data + org : (T *)NULL;
  P.phxy = a->psi_hxy ? (T *)a->psi_hxy->data + org : (T *)NULL;
  P.phyx = a->psi_hyx ? (T *)a->psi_hyx->data + org : (T *)NULL;
  if ((P.pezx && (!a->pml_a[0] || !a->pml_b[0])) ||
      (P.pezy && (!a->pml_a[1] || !a->pml_b[1])) ||
      (P.phxy && (!a->pml_ah[1] || !a->pml_bh[1])) ||
      (P.phyx && (!a->pml_ah[0] || !a->pml_bh[0])))
    return strata__fail(ctx, STRATA_EINVAL,
                        "yee step: a PML psi field without its profiles");
  for (int ax = 0; ax < 2; ax++) {
    P.pa[ax] = a->pml_a[ax];
    P.pb[ax] = a->pml_b[ax];
    P.pah[ax] = a->pml_ah[ax];
    P.pbh[ax] = a->pml_bh[ax];
    for (int side = 0; side < 2; side++) {
      P.lo[ax][side] = (int)a->pml_lo[ax][side];
      P.hi[ax][side] = (int)a->pml_hi[ax][side];
    }
  }
  P.sy = (long long)EF->L.pitch_x;
  P.n0 = (int)EF->d.n[0];
  P.n1 = (int)EF->d.n[1];
  for (int f = 0; f < 4; f++) P.face[f] = a->face[f];
  P.perx = a->face[0] == STRATA__YF_PERIODIC;
  P.pery = a->face[2] == STRATA__YF_PERIODIC;
  P.hr0 = P.perx ? P.n0 : P.n0 - 1;
  P.hr1 = P.pery ? P.n1 : P.n1 - 1;
  P.e0x = P.perx ? 0 : 1;
  P.e1x = P.perx ? P.n0 : P.n0 - 1;
  P.e0y = P.pery ? 0 : 1;
  P.e1y = P.pery ? P.n1 : P.n1 - 1;
  P.ce = (T)a->ce;
  P.ch = (T)a->ch;
  P.mur = (T)a->mur;
  int any_mur = 0;
  for (int f = 0; f < 4; f++) any_mur |= a->face[f] == STRATA__YF_MUR;
  const int m = P.n0 > P.n1 ? P.n0 : P.n1;

  /* H */
  {
    dim3 block(128, 2);
    dim3 grid((unsigned)((P.n0 + 127) / 128), sv_blocks(P.n1, 2));
    k_yee_h<T><<<grid, block, 0, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "yee step: H kernel launch");
  }
  if (P.perx || P.pery || any_mur) {
    k_yee_fix<T><<<sv_blocks(m, 256), 256, 0, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "yee step: ghost kernel launch");
  }
  /* E */
  if (P.e1x > P.e0x && P.e1y > P.e0y) {
    dim3 block(128, 2);
    dim3 grid((unsigned)((P.e1x - P.e0x + 127) / 128),
              sv_blocks(P.e1y - P.e0y, 2));
    k_yee_e<T><<<grid, block, 0, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "yee step: E kernel launch");
  }
  if (a->nsrc > 0) {
    src_list<T> sl;
    memset(&sl, 0, sizeof sl);
    sl.n = a->nsrc > 4 ? 4 : a->nsrc;
    for (int q = 0; q < sl.n; q++) {
      const long i = a->src[q][0], j = a->src[q][1];
      if (i < 0 || i >= P.n0 || j < 0 || j >= P.n1)
        return strata__fail(ctx, STRATA_EINVAL,
                            "yee step: source %d lies outside the grid", q);
      sl.off[q] = i + (long long)j * P.sy;
      sl.val[q] = (T)a->src_val[q];
    }
    k_sources<T><<<1, 32, 0, st->stream>>>(P.ez, sl);
    STRATA__LAUNCHED(ctx, "yee step: source kernel launch");
  }
  if (any_mur) {
    k_yee_mur<T><<<sv_blocks(m, 256), 256, 0, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "yee step: Mur kernel launch");
  }
  if (P.perx || P.pery) {
    k_yee_per<T><<<sv_blocks(m, 256), 256, 0, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "yee step: periodic ghost kernel launch");
  }
  return STRATA_OK;
}

/* ======================================================================== */
/* Receivers                                                                 */
/* ======================================================================== */

template <typename T>
__global__ void k_sample(const T *__restrict__ d, int npts, int nw,
                         const long *__restrict__ off,
                         const double *__restrict__ w, double *dst) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= npts) return;
  double acc = 0;
  for (int q = 0; q < nw; q++) {
    const long long e = (long long)p * nw + q;
    acc = __dadd_rn(acc, __dmul_rn(w[e], (double)d[off[e]]));
  }
  dst[p] = acc;
}

} // namespace

strata_status strata__cuda_wave_step(const strata__wave_args *a) {
  strata_context *ctx = a->u->ctx;
  if (a->dims != 2 && a->dims != 3)
    return strata__fail(ctx, STRATA_EINVAL,
                        "wave step: dims is %d; it must be 2 or 3", a->dims);
  if (a->radius < 1 || a->radius > STRATA_MAX_RADIUS ||
      a->u->d.ghost < a->radius || a->up->d.ghost < a->radius)
    return strata__fail(ctx, STRATA_EINVAL,
                        "wave step: radius %d with ghost widths %d and %d",
                        a->radius, a->u->d.ghost, a->up->d.ghost);
  if (a->up->L.pitch_x != a->u->L.pitch_x ||
      a->up->L.pitch_y != a->u->L.pitch_y ||
      a->up->L.origin != a->u->L.origin ||
      (a->c2 && (a->c2->L.pitch_x != a->u->L.pitch_x ||
                 a->c2->L.pitch_y != a->u->L.pitch_y ||
                 a->c2->L.origin != a->u->L.origin)))
    return strata__fail(ctx, STRATA_EINVAL,
                        "wave step: u, up and c2 differ in layout");
  if (!a->c2 && !a->c2_line)
    return strata__fail(ctx, STRATA_EINVAL,
                        "wave step: neither c2 nor c2_line is set");
  strata_status s = sv_check_axis(ctx, a->u, "wave step");
  if (s != STRATA_OK) return s;
  SV_DEVICE(ctx);
  if (a->u->d.precision == STRATA_F32) return wave_typed<float>(a);
  return wave_typed<double>(a);
}

strata_status strata__cuda_yee_step(const strata__yee_args *a) {
  strata_context *ctx = a->ez->ctx;
  if (a->ez->d.dims != 2 || a->ez->d.ghost < 1)
    return strata__fail(ctx, STRATA_EINVAL,
                        "yee step: Ez must be 2D with ghost width >= 1");
  strata_status s = sv_check_axis(ctx, a->ez, "yee step");
  if (s != STRATA_OK) return s;
  SV_DEVICE(ctx);
  if (a->ez->d.precision == STRATA_F32) return yee_typed<float>(a);
  return yee_typed<double>(a);
}

strata_status strata__cuda_sample(const strata_field *f, int npts, int nw,
                                  const long *off, const double *w,
                                  double *dst) {
  strata_context *ctx = f->ctx;
  if (npts <= 0) return STRATA_OK;
  if (nw < 1)
    return strata__fail(ctx, STRATA_EINVAL, "sample: %d weights per point",
                        nw);
  SV_DEVICE(ctx);
  cudaStream_t stream = strata__cu_state(ctx)->stream;
  const int threads = 128;
  const unsigned blocks = (unsigned)((npts + threads - 1) / threads);
  if (f->d.precision == STRATA_F32)
    k_sample<float><<<blocks, threads, 0, stream>>>((const float *)f->data,
                                                     npts, nw, off, w, dst);
  else
    k_sample<double><<<blocks, threads, 0, stream>>>((const double *)f->data,
                                                      npts, nw, off, w, dst);
  STRATA__LAUNCHED(ctx, "sample kernel launch");
  return STRATA_OK;
}
