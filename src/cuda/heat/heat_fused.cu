/* The CUDA engine's apply_fused entry (issue 4): s repetitions of
 * { fill in's ghosts with bc; out = op(in) } in one launch (temporal
 * blocking), for star stencils (radius 1..4, 1D/2D/3D) and the symmetric
 * 27-point box (3D).  The contract is in src/core/internal.h; the oracle is
 * the CPU engine's overlapped tiling (src/cpu/cpu_solvers.inc, FN(fused)),
 * whose logic this file follows point for point:
 *
 *   - a tile of outputs [t0, t1) is computed from the input region
 *     [t0 - H, t1 + H), H = R s, along every used axis; step m computes the
 *     region grown by R (s - m), so every read stays inside what step m - 1
 *     produced;
 *   - the region is clipped to [clo, chi): along a Neumann or periodic face
 *     the ghost ring evolves like the interior it mirrors or wraps (the
 *     stencils are symmetric, so the extension of a solution is a
 *     solution), so it is computed (clo = -H, chi = n + H); along a
 *     Dirichlet (or "none") face the ghost points never change between
 *     steps and keep the values of in ("pinned": clo = 0, chi = n).
 *
 * 1D/2D (k_fused2d): the whole region of a tile sits in shared memory in
 * two buffers (loaded into both, so pinned points hold the input in both);
 * each step reads one and writes the other.
 *
 * 3D (k_fused3d): 2.5D streaming.  A block owns an xy tile and a chunk of
 * planes [z0, z1); it walks the input planes p = z0 - H .. z1 + H - 1 once.
 * Time level m (0 = input, 1..s-1) keeps a ring of 2R + 1 planes of its xy
 * region in shared memory; after input plane p arrives, level m computes
 * its plane p - m R (when that plane lies in its z range [z0 - R (s - m),
 * z1 + R (s - m))) from the 2R + 1 planes of level m - 1 around it; level s
 * writes plane p - H of the tile straight to out.  Pinned points of levels
 * >= 1 (outside [clo, chi) along x, y or z) are read from in, which holds
 * them unchanged.
 *
 * Faster kernels for the heat solver's operators, described where they
 * are defined: k_fused2d_warp (2D radius 1: warp strips along y, all time
 * levels in registers), k_fused3d_reg (3D radius-1 star, s <= 4) and
 * k_fused3d_box (symmetric 27-point box, s <= 2): xy register tiles
 * streamed along z with one barrier a plane.  The rest take the two
 * kernels above.
 *
 * The arithmetic of a point is the CPU's, term for term and in the same
 * order, except in k_fused3d_box (seed 004's partial sums, the in-plane
 * sums shared between rows); nvcc may contract a multiply and an add into
 * one FMA, so the result agrees with the CPU engine to rounding
 * (tests/test_cuda_solvers.c states the tolerance), not bit for bit. */
#include "cuda_device.cuh"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>

namespace {

constexpr int kThreads2d = 512;
constexpr int kThreads3d = 256;

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
  /* k_fused3d_reg, k_fused3d_box: y tiles (ytile): tile 0 computes rows
   * from ycs0 and gives outputs [0, ye0); tiles 1 .. ntl[1] - 2 give
   * tile[1] rows each; the last one computes up to row yhin and gives the
   * rest */
  int ycs0, ye0, yhin;
  T c0;
  T w[3][STRATA_MAX_RADIUS + 1];
  T C[4];
};

/* Star stencil at c (shared memory) with row stride sy; z neighbours at
 * zm[k-1] (plane z - k) and zp[k-1] (plane z + k), same offset.  Order of
 * the CPU's FN(fstar_row): centre, then for k = 1..R the x, y, z pairs. */
template <typename T, int R, int D>
__device__ __forceinline__ T star_at(const T *c, int sy, const T *const *zm,
                                     const T *const *zp, int off,
                                     const fused_par<T> &P) {
  T acc = P.c0 * c[0];
#pragma unroll
  for (int k = 1; k <= R; k++) {
    acc += P.w[0][k] * (c[-k] + c[k]);
    if (D >= 2) acc += P.w[1][k] * (c[-k * sy] + c[k * sy]);
    if (D >= 3) acc += P.w[2][k] * (zm[k - 1][off] + zp[k - 1][off]);
  }
  return acc;
}

/* Symmetric 27-point box at offset off of planes m (z - 1), c, p (z + 1),
 * row stride sy.  Order of the CPU's FN(fsym_row). */
template <typename T>
__device__ __forceinline__ T sym_at(const T *m, const T *c, const T *p,
                                    int off, int sy, const fused_par<T> &P) {
  m += off;
  c += off;
  p += off;
  T faces = c[-1] + c[1] + c[-sy] + c[sy] + m[0] + p[0];
  T edges = c[-1 - sy] + c[1 - sy] + c[-1 + sy] + c[1 + sy] + m[-1] + m[1] +
            p[-1] + p[1] + m[-sy] + m[sy] + p[-sy] + p[sy];
  T corners = m[-1 - sy] + m[1 - sy] + m[-1 + sy] + m[1 + sy] + p[-1 - sy] +
              p[1 - sy] + p[-1 + sy] + p[1 + sy];
  return P.C[0] * c[0] + P.C[1] * faces + P.C[2] * edges + P.C[3] * corners;
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

/* ---- 1D and 2D: the whole tile region in shared memory, two buffers ---- */

template <typename T, int R, int D>
__global__ void __launch_bounds__(kThreads2d) k_fused2d(const fused_par<T> P) {
  extern __shared__ __align__(16) unsigned char fz_smem[];
  T *A = reinterpret_cast<T *>(fz_smem);
  T *B = A + (size_t)P.pw * P.ph;
  const int tid = threadIdx.x, nthr = blockDim.x;
  const int tx = (int)(blockIdx.x % (unsigned)P.ntl[0]);
  const int ty = (int)(blockIdx.x / (unsigned)P.ntl[0]);
  const int t0x = tx * P.tile[0], t0y = ty * P.tile[1];
  const int t1x = min(t0x + P.tile[0], P.n[0]);
  const int t1y = min(t0y + P.tile[1], P.n[1]);
  const int ox = t0x - P.h[0], oy = t0y - P.h[1];
  const int ex = t1x - t0x + 2 * P.h[0], ey = t1y - t0y + 2 * P.h[1];
  const int sy = P.pw;

  /* load [o, o + e) into both buffers (ox >= -ghost, ox + ex <= n + ghost) */
  for (walk k = walk_start(tid, nthr, ex); k.y < ey; walk_next(k)) {
    const int lx = k.x, ly = k.y;
    const T v = P.in[(long long)(ox + lx) + (long long)(oy + ly) * P.isy];
    A[lx + ly * sy] = v;
    B[lx + ly * sy] = v;
  }
  __syncthreads();

  for (int m = 1; m <= P.s; m++) {
    const int sh = R * (P.s - m);
    const int gy = D >= 2 ? sh : 0;
    const int r0x = max(t0x - sh, P.clo[0]), r1x = min(t1x + sh, P.chi[0]);
    const int r0y = max(t0y - gy, P.clo[1]), r1y = min(t1y + gy, P.chi[1]);
    const int wx = r1x - r0x, wy = r1y - r0y;
    for (walk k = walk_start(tid, nthr, wx); k.y < wy; walk_next(k)) {
      const int x = r0x + k.x, y = r0y + k.y;
      const int idx = (x - ox) + (y - oy) * sy;
      B[idx] = star_at<T, R, D>(A + idx, sy, nullptr, nullptr, 0, P);
    }
    __syncthreads();
    T *t = A;
    A = B;
    B = t;
  }

  const int wx = t1x - t0x, wy = t1y - t0y;
  for (walk k = walk_start(tid, nthr, wx); k.y < wy; walk_next(k)) {
    const int x = t0x + k.x, y = t0y + k.y;
    P.out[(long long)x + (long long)y * P.osy] = A[(x - ox) + (y - oy) * sy];
  }
}

/* ---- 2D radius 1: one warp streams a strip along y, all in registers ----
 *
 * The 5-point star is what the 2D heat solver fuses, and the tile kernel
 * above spends its time in shared memory and barriers (464 Gpts/s at s = 8
 * on an H100).  Here a warp owns a strip of 32 V columns (V values, 16
 * bytes, a lane) and a chunk of rows [y0, y1); it walks the input rows
 * p = y0 - S .. y1 + S - 1 once.  Time level k (1..S) computes row p - k
 * as soon as row p - k + 1 of level k - 1 exists, so a level needs only its
 * last two rows and the newest one of the level below: 2 S V registers a
 * lane, rotated between three named sets (X, Y, Z) by unrolling three rows
 * a trip, so the rotation costs no moves.  The x neighbours across lanes
 * come by shuffle; no barrier.  Input rows arrive by cp.async into a ring
 * of PD2W rows per warp in shared memory (each lane copies and reads only
 * its own 16 bytes).  The strip's outer HP = S rounded up to V columns on
 * each side are ring work (valid at level k only k columns in), so a strip
 * outputs 32 V - 2 HP columns.  Pinned points (outside [clo, chi):
 * Dirichlet ghosts) keep the value of the level below at the same point,
 * which by induction is the input's; trips that meet none take a version
 * without the selects.  Rows before the warm-up hold garbage that never
 * reaches an output (it stays outside the valid cone). */

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
  acc += P.w[0][1] * (left + right);
  acc += P.w[1][1] * (o[i] + n[i]);
  return acc;
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

template <typename T, int V, int S>
__global__ void __launch_bounds__(kWarps2dw * 32, 4) /* <= 128 registers */
    k_fused2d_warp(const fused_par<T> P) {
  constexpr int VV = 16 / (int)sizeof(T); /* values per 16-byte piece */
  constexpr int NC = V / VV;              /* pieces per lane and row */
  constexpr int HP = (S + V - 1) / V * V;
  static_assert(V % VV == 0, "a lane holds whole 16-byte pieces");
  extern __shared__ __align__(16) unsigned char fw_smem[];
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  /* ring[slot][piece][lane]: conflict-free 16-byte reads */
  T *ring = reinterpret_cast<T *>(fw_smem) +
            (size_t)wib * PD2W * NC * 32 * VV + (size_t)lane * VV;
  const long long wid = (long long)blockIdx.x * kWarps2dw + wib;
  if (wid >= (long long)P.ntl[0] * P.ntl[1]) return; /* a whole warp */
  const int strip = (int)(wid % P.ntl[0]), chunk = (int)(wid / P.ntl[0]);
  const int xo0 = strip * P.tile[0];
  const int xo1 = min(xo0 + P.tile[0], P.n[0]);
  const int c = xo0 - HP + lane * V; /* this lane's first column */
  const int y0 = chunk * P.tile[1], y1 = min(y0 + P.tile[1], P.n[1]);
  unsigned xpin = 0;
#pragma unroll
  for (int i = 0; i < V; i++)
    if (c + i < P.clo[0] || c + i >= P.chi[0]) xpin |= 1u << i;
  const bool anyx = xpin != 0; /* voted per trip below */
  const bool slane = c >= xo0 && c < xo1;
  const int nvalid = xo1 - c;
  T *orow = P.out + c;
  const T *irow = P.in + c;
  const long long isy = P.isy;
  /* pieces of this lane inside the rows' allocation (columns < xsafe) */
  int npc = (P.xsafe - c) / VV;
  npc = npc < 0 ? 0 : npc > NC ? NC : npc;
  const int yread = P.yread;

  /* input rows p = y0 - S + it, it = 0 .. NI - 1 */
  const int pfirst = y0 - S, NI = (y1 - y0) + 2 * S;
  auto fetch = [&](int p, int slot) { /* row p into slot, one group */
    if (p < yread) {
      const T *g = irow + (long long)p * isy;
      T *d = ring + (size_t)slot * NC * 32 * VV;
#pragma unroll
      for (int h = 0; h < NC; h++)
        if (h < npc) cp_async16(d + h * 32 * VV, g + h * VV, 16);
    }
    cp_async_commit();
  };
#pragma unroll
  for (int j = 0; j < PD2W; j++) fetch(pfirst + j, j);

  rows2w<T, V, S> X, Y, Z;
#pragma unroll
  for (int k = 0; k < S; k++)
#pragma unroll
    for (int i = 0; i < V; i++) X.v[k][i] = Y.v[k][i] = Z.v[k][i] = T(0);

  auto take = [&](int slot, T *v) { /* the oldest row in flight */
    cp_async_wait<PD2W - 1>();
    const T *d = ring + (size_t)slot * NC * 32 * VV;
#pragma unroll
    for (int h = 0; h < NC; h++) {
      const strata__vec<T, VV> x = lds_v<T, VV>(d + h * 32 * VV);
#pragma unroll
      for (int i = 0; i < VV; i++) v[h * VV + i] = x.v[i];
    }
  };
  /* three rows: each slot takes the row PD2W ahead once its row is used */
  auto trip = [&](auto pin, int p, int sb) {
    constexpr bool PIN = decltype(pin)::value;
    T in[V];
    take(sb, in);
    row2w<T, V, S, PIN>(X, Y, Z, in, p, xpin,
                         slane && p - S >= y0 && p - S < y1, orow, nvalid, P);
    fetch(p + PD2W, sb);
    take(sb + 1, in);
    row2w<T, V, S, PIN>(Y, Z, X, in, p + 1, xpin,
                         slane && p + 1 - S >= y0 && p + 1 - S < y1, orow,
                         nvalid, P);
    fetch(p + 1 + PD2W, sb + 1);
    take(sb + 2, in);
    row2w<T, V, S, PIN>(Z, X, Y, in, p + 2, xpin,
                         slane && p + 2 - S >= y0 && p + 2 - S < y1, orow,
                         nvalid, P);
    fetch(p + 2 + PD2W, sb + 2);
  };
  int sb = 0; /* slot of row p: it mod PD2W */
#pragma unroll 1
  for (int it = 0; it < NI; it += 3) {
    const int p = pfirst + it;
    /* levels 1 .. S - 1 of rows p .. p + 2 compute rows p - S + 1 .. p + 1;
     * the check is a vote so the compiler sees a uniform branch */
    const bool pinned = __any_sync(
        0xffffffffu, anyx || p - S + 1 < P.clo[1] || p + 1 >= P.chi[1]);
    if (pinned)
      trip(std::true_type{}, p, sb);
    else
      trip(std::false_type{}, p, sb);
    sb = sb + 3 == PD2W ? 0 : sb + 3;
  }
  cp_async_wait<0>(); /* nothing in flight when the warp leaves */
}

/* ---- 3D: 2.5D streaming, one ring of 2R + 1 planes per time level ------ */

__device__ __forceinline__ int ring_slot(int z, int np) {
  const int r = z % np;
  return r < 0 ? r + np : r;
}

/* KIND: STRATA_STENCIL_STAR or STRATA_STENCIL_BOX_SYMMETRIC (R = 1). */
template <typename T, int KIND, int R>
__global__ void __launch_bounds__(kThreads3d) k_fused3d(const fused_par<T> P) {
  constexpr int NP = 2 * R + 1;
  extern __shared__ __align__(16) unsigned char fz_smem[];
  T *ring = reinterpret_cast<T *>(fz_smem);
  const int tid = threadIdx.x, nthr = blockDim.x;
  const int ps = P.pw * P.ph, sy = P.pw, H = P.h[2];
  unsigned b = blockIdx.x;
  const int tx = (int)(b % (unsigned)P.ntl[0]);
  b /= (unsigned)P.ntl[0];
  const int ty = (int)(b % (unsigned)P.ntl[1]);
  const int tz = (int)(b / (unsigned)P.ntl[1]);
  const int t0x = tx * P.tile[0], t0y = ty * P.tile[1];
  const int t1x = min(t0x + P.tile[0], P.n[0]);
  const int t1y = min(t0y + P.tile[1], P.n[1]);
  const int z0 = tz * P.tile[2], z1 = min(z0 + P.tile[2], P.n[2]);
  const int ox = t0x - P.h[0], oy = t0y - P.h[1];

  for (int p = z0 - H; p < z1 + H; p++) {
    /* level 0: input plane p over [o, o + e) */
    {
      T *dst = ring + ring_slot(p, NP) * ps;
      const int ex = t1x - t0x + 2 * P.h[0], ey = t1y - t0y + 2 * P.h[1];
      const T *src = P.in + (long long)p * P.isz;
      for (walk k = walk_start(tid, nthr, ex); k.y < ey; walk_next(k)) {
        const int lx = k.x, ly = k.y;
        dst[lx + ly * sy] =
            src[(long long)(ox + lx) + (long long)(oy + ly) * P.isy];
      }
    }
    __syncthreads();
    for (int m = 1; m <= P.s; m++) {
      const int zc = p - m * R, sh = R * (P.s - m);
      if (zc >= z0 - sh && zc < z1 + sh) { /* uniform over the block */
        const T *lv = ring + (size_t)(m - 1) * NP * ps; /* level m - 1 */
        const T *pm[R], *pp[R];
#pragma unroll
        for (int k = 1; k <= R; k++) {
          pm[k - 1] = lv + ring_slot(zc - k, NP) * ps;
          pp[k - 1] = lv + ring_slot(zc + k, NP) * ps;
        }
        const T *pc = lv + ring_slot(zc, NP) * ps;
        if (m < P.s) {
          T *dst = ring + (size_t)m * NP * ps + ring_slot(zc, NP) * ps;
          const bool zin = zc >= P.clo[2] && zc < P.chi[2];
          const int r0x = t0x - sh, r0y = t0y - sh;
          const int wx = t1x - t0x + 2 * sh, wy = t1y - t0y + 2 * sh;
          for (walk k = walk_start(tid, nthr, wx); k.y < wy; walk_next(k)) {
            const int x = r0x + k.x, y = r0y + k.y;
            const int idx = (x - ox) + (y - oy) * sy;
            T v;
            if (zin && x >= P.clo[0] && x < P.chi[0] && y >= P.clo[1] &&
                y < P.chi[1]) {
              if constexpr (KIND == STRATA_STENCIL_STAR)
                v = star_at<T, R, 3>(pc + idx, sy, pm, pp, idx, P);
              else
                v = sym_at<T>(pm[0], pc, pp[0], idx, sy, P);
            } else { /* pinned: in holds it unchanged */
              v = P.in[(long long)x + (long long)y * P.isy +
                       (long long)zc * P.isz];
            }
            dst[idx] = v;
          }
        } else { /* level s: the tile's interior, straight to out */
          const int wx = t1x - t0x, wy = t1y - t0y;
          T *o = P.out + (long long)zc * P.osz;
          for (walk k = walk_start(tid, nthr, wx); k.y < wy; walk_next(k)) {
            const int x = t0x + k.x, y = t0y + k.y;
            const int idx = (x - ox) + (y - oy) * sy;
            T v;
            if constexpr (KIND == STRATA_STENCIL_STAR)
              v = star_at<T, R, 3>(pc + idx, sy, pm, pp, idx, P);
            else
              v = sym_at<T>(pm[0], pc, pp[0], idx, sy, P);
            o[(long long)x + (long long)y * P.osy] = v;
          }
        }
      }
      __syncthreads();
    }
  }
}

/* ---- 3D radius-1 star: a block streams an xy tile along z, registers ----
 *
 * The 3D version of k_fused2d_warp (planes for rows).  A block of NW warps
 * owns a tile of LR V columns x NR = 32 NW W / LR rows (a lane V columns
 * of W rows, LR lanes a row group: a warp is one group of 32 lanes or two
 * of 16) and a chunk of planes; it walks the input planes p = z0 - S ..
 * z1 + S - 1 once, level k computing plane p - k, two planes a level in
 * registers (rotated between X, Y, Z by three planes a trip).  z
 * neighbours are in the thread, x neighbours come by shuffle (width LR),
 * y neighbours through shared memory (but those between a thread's own
 * rows).  The point of the design: every in-plane neighbour a level needs
 * (of plane p - k at level k - 1) was computed in the previous iteration,
 * so each iteration writes the middle planes of all S levels to shared
 * memory at once and needs one barrier, not one per level (two buffers by
 * parity, so a buffer is rewritten only after the next barrier).  Inputs
 * arrive by cp.async into a ring of PD3W planes (each lane its own V
 * values).  Outputs: columns [HP, LR V - HP) of the tile and the rows
 * ytile gives.  Pinned points keep the level below's value, as in 2D.
 *
 * W = 2 rows a thread (512 threads at up to 128 registers in place of
 * 1024 at 64, the same tile): the y neighbour between a thread's rows is
 * in its registers, so a row reads one neighbour row a level from shared
 * memory, not two.  ncu (H100, 512^3 fp64, s = 3, 96-plane chunks): the
 * shared-memory pipe bounded the W = 1 kernel (4.4 cycles of MIO throttle
 * and 3.8 of short scoreboard an issue; 194 M wavefronts); W = 2 moves
 * 150 M wavefronts, MIO throttle 1.2, and takes 1.02 ms against 1.19.
 * The solver (tuned): fp64 381-382 -> 406-407 Gpts.steps/s, fp32 674-675
 * -> 699-700 (2026-11-26). */

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
        acc += P.w[0][1] * (left + right);
        acc += P.w[1][1] * (ym.v[i] + yp.v[i]);
        acc += P.w[2][1] * (a[i] + c[i]);
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

/* W: rows a thread (1, or 2: the y neighbour between a thread's two rows
 * is in its registers, so a plane reads 3 / 2 rows a row from shared
 * memory in place of 2, for half the threads over the same tile) */
template <typename T, int V, int S, int NW, int LR, int W = 1>
__global__ void __launch_bounds__(NW * 32, NW <= 16 && W == 1 ? 2 : 1)
    k_fused3d_reg(const fused_par<T> P) {
  constexpr int HP = (S + V - 1) / V * V;
  constexpr int NR = NW * 32 / LR * W, RW = LR * V; /* rows; a row's values */
  constexpr int LSZ = NR * RW;                      /* a level's buffer */
  extern __shared__ __align__(16) unsigned char f3_smem[];
  const int row = (int)(threadIdx.x / LR) * W, lx = (int)(threadIdx.x % LR);
  T *exb = reinterpret_cast<T *>(f3_smem); /* [2][S][NR][RW] */
  /* my slots (rows row .. row + W - 1, lane lx): my row w at + w RW
   * (threadIdx.x V when W = 1, the same offset: written so, ptxas spills
   * less in the one-row instances, fp32 s = 3 8 / 16 bytes against 20 /
   * 52) */
  T *ring = exb + (size_t)2 * S * LSZ +
            (W == 1 ? (size_t)threadIdx.x * V : (size_t)row * RW + lx * V);
  T *mine =
      exb + (W == 1 ? (size_t)threadIdx.x * V : (size_t)row * RW + lx * V);
  /* the slots of the rows above and below: kept in registers for fp64,
   * recomputed every plane for fp32 (ptxas, s = 3 at 64 registers: fp32
   * spills 48 / 112 bytes when they are kept and 4 / 8 when recomputed,
   * fp64 0 / 0 kept and 8 / 28 recomputed) */
  constexpr bool KEEP = sizeof(T) == 8;
  const int ouk = (row > 0 ? row - 1 : 0) * RW + lx * V,
            odk = (row + W < NR ? row + W : NR - 1) * RW + lx * V;
  unsigned b = blockIdx.x;
  const int tx = (int)(b % (unsigned)P.ntl[0]);
  b /= (unsigned)P.ntl[0];
  const int ty = (int)(b % (unsigned)P.ntl[1]);
  const int tz = (int)(b / (unsigned)P.ntl[1]);
  int ycs, yo0, yo1;
  ytile(P, ty, NR, S, ycs, yo0, yo1);
  const int xo0 = tx * P.tile[0], xo1 = min(xo0 + P.tile[0], P.n[0]);
  const int z0 = tz * P.tile[2], z1 = min(z0 + P.tile[2], P.n[2]);
  const int c = xo0 - HP + lx * V; /* this lane's first column */
  const int y = ycs + row;         /* this thread's first row */
  unsigned xpin = 0;
#pragma unroll
  for (int i = 0; i < V; i++)
    if (c + i < P.clo[0] || c + i >= P.chi[0]) xpin |= 1u << i;
  bool ypin[W], slane[W], ldok[W];
#pragma unroll
  for (int w = 0; w < W; w++) ypin[w] = y + w < P.clo[1] || y + w >= P.chi[1];
  /* block-uniform: does the tile hold pinned columns or rows? */
  const bool tpin = xo0 - HP < P.clo[0] || xo0 - HP + RW > P.chi[0] ||
                    ycs < P.clo[1] || ycs + NR > P.chi[1];
#pragma unroll
  for (int w = 0; w < W; w++)
    slane[w] = c >= xo0 && c < xo1 && y + w >= yo0 && y + w < yo1;
  const int nvalid = xo1 - c;
  T *orow = P.out + c + (long long)y * P.osy;
  const T *irow = P.in + c + (long long)y * P.isy;
#pragma unroll
  for (int w = 0; w < W; w++) ldok[w] = c + V <= P.xsafe && y + w < P.yread;
  const long long isz = P.isz;
  const int zread = P.zread;

  const int pfirst = z0 - S, NI = (z1 - z0) + 2 * S;
  auto fetch = [&](int p, int slot) {
#pragma unroll
    for (int w = 0; w < W; w++)
      if (ldok[w] && p < zread)
        cp_lane<T, V>(ring + (size_t)slot * LSZ + w * RW,
                      irow + (long long)w * P.isy + (long long)p * isz);
    cp_async_commit();
  };
#pragma unroll
  for (int j = 0; j < PD3W; j++) fetch(pfirst + j, j);

  rows2w<T, V, S> X[W], Y[W], Z[W];
#pragma unroll
  for (int w = 0; w < W; w++)
#pragma unroll
    for (int k = 0; k < S; k++)
#pragma unroll
      for (int i = 0; i < V; i++)
        X[w].v[k][i] = Y[w].v[k][i] = Z[w].v[k][i] = T(0);

  int par = 0;
  /* one plane: publish the middle planes, barrier, compute all levels */
  auto one = [&](auto pin, rows2w<T, V, S>(&o)[W], rows2w<T, V, S>(&m)[W],
                 rows2w<T, V, S>(&n)[W], int p, int slot) {
    constexpr bool PIN = decltype(pin)::value;
    T *ex = exb + (size_t)par * S * LSZ;
#pragma unroll
    for (int w = 0; w < W; w++)
#pragma unroll
      for (int k = 0; k < S; k++) {
        strata__vec<T, V> x;
#pragma unroll
        for (int i = 0; i < V; i++) x.v[i] = m[w].v[k][i];
        sts_v<T, V>(mine + (size_t)par * S * LSZ + (size_t)k * LSZ + w * RW,
                    x);
      }
    cp_async_wait<PD3W - 1>();
    T in[W][V];
#pragma unroll
    for (int w = 0; w < W; w++) {
      const strata__vec<T, V> x =
          lds_v<T, V>(ring + (size_t)slot * LSZ + w * RW);
#pragma unroll
      for (int i = 0; i < V; i++) in[w][i] = x.v[i];
    }
    __syncthreads();
    int ou = ouk, od = odk;
    if constexpr (!KEEP) {
      const int r3 = (int)(threadIdx.x / LR) * W, l3 = (int)(threadIdx.x % LR);
      ou = (r3 > 0 ? r3 - 1 : 0) * RW + l3 * V;
      od = (r3 + W < NR ? r3 + W : NR - 1) * RW + l3 * V;
    }
    bool st[W];
#pragma unroll
    for (int w = 0; w < W; w++) st[w] = slane[w] && p - S >= z0 && p - S < z1;
    plane3w<T, V, S, PIN, LR, W>(o, m, n, ex, LSZ, ou, od, in, p, xpin, ypin,
                                 st, orow, nvalid, P);
    fetch(p + PD3W, slot);
    par ^= 1;
  };
  auto trip = [&](auto pin, int p) {
    one(pin, X, Y, Z, p, 0);
    one(pin, Y, Z, X, p + 1, 1);
    one(pin, Z, X, Y, p + 2, 2);
  };
#pragma unroll 1
  for (int it = 0; it < NI; it += 3) {
    const int p = pfirst + it;
    /* levels 1 .. S - 1 of planes p .. p + 2 compute planes p - S + 1 ..
     * p + 1 (uniform over the block) */
    if (tpin || p - S + 1 < P.clo[2] || p + 1 >= P.chi[2])
      trip(std::true_type{}, p);
    else
      trip(std::false_type{}, p);
  }
  cp_async_wait<0>();
}

/* ---- 3D symmetric 27-point box: register tiles with partial sums --------
 *
 * k_fused3d_reg's tiles and barrier, with seed 004's partial sums inside a
 * level: a plane r of level k - 1 (its 3 x 3 in-plane neighbourhood from
 * the rows above and below in shared memory and the lanes beside by
 * shuffle) is consumed once, adding "same" (C0 c + C1 f + C2 k4) to level
 * k's plane r and "nb" (C1 c + C2 f + C3 k4) to planes r - 1 and r + 1,
 * which completes plane r - 1.  f and k4 share the row sums h(y) = c(x-1, y)
 * + c(x+1, y): f = h(y) + c(y-1) + c(y+1), k4 = h(y-1) + h(y+1); the h
 * of the rows above and below come from their vectors and the lanes
 * beside (shuffles: publishing h as well took twice the shared-memory
 * traffic, the pipe that bounds these kernels).  A level
 * publishes its newest complete plane at the start of an iteration and the
 * next level consumes it after the one barrier, so level k completes plane
 * p - 2k + 1 when input plane p arrives (a lag of two planes a level).
 * Pinned points of a completed plane take the input's value (which the
 * level below holds there too), read again from global memory: pinned
 * points only occur in trips next to a Dirichlet ring.
 *
 * W = 2 rows a thread, as in k_fused3d_reg: between a thread's rows the
 * neighbour's plane and row sums are its own registers, so a row reads
 * one neighbour row a level from shared memory and forms one neighbour's
 * sums by shuffles, not two.  H100, 512^3, s = 2 (bench_solvers heat3d,
 * 2026-11-26): fp32 418-420 -> 444 Gpts.steps/s (512-thread tiles of 128
 * x 32), fp64 210-211 -> 243. */

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

template <typename T, int V, int S, int NW, int LR, int W = 1>
__global__ void __launch_bounds__(NW * 32, 1) k_fused3d_box(const fused_par<T> P) {
  constexpr int HP = (S + V - 1) / V * V;
  constexpr int NR = NW * 32 / LR * W, RW = LR * V; /* rows; a row's values */
  constexpr int LSZ = NR * RW;                      /* a level's buffer */
  extern __shared__ __align__(16) unsigned char fb_smem[];
  const int row = (int)(threadIdx.x / LR) * W, lx = (int)(threadIdx.x % LR);
  T *exb = reinterpret_cast<T *>(fb_smem); /* [2][S][NR][RW] */
  /* my slots (rows row .. row + W - 1, lane lx): my row w at + w RW */
  T *ring = exb + (size_t)2 * S * LSZ +
            (W == 1 ? (size_t)threadIdx.x * V : (size_t)row * RW + lx * V);
  /* the tile setup below repeats k_fused3d_reg's on purpose: moved into
   * one shared function it changed ptxas's register allocation (fp32 s =
   * 3 star spills 4 / 8 -> 36 / 92 bytes, the 768-thread box 0 -> 16 / 16) */
  unsigned b = blockIdx.x;
  const int tx = (int)(b % (unsigned)P.ntl[0]);
  b /= (unsigned)P.ntl[0];
  const int ty = (int)(b % (unsigned)P.ntl[1]);
  const int tz = (int)(b / (unsigned)P.ntl[1]);
  int ycs, yo0, yo1;
  ytile(P, ty, NR, S, ycs, yo0, yo1);
  const int xo0 = tx * P.tile[0], xo1 = min(xo0 + P.tile[0], P.n[0]);
  const int z0 = tz * P.tile[2], z1 = min(z0 + P.tile[2], P.n[2]);
  const int c0 = xo0 - HP + lx * V;
  const int y = ycs + row; /* this thread's first row */
  unsigned xpin = 0;
#pragma unroll
  for (int i = 0; i < V; i++)
    if (c0 + i < P.clo[0] || c0 + i >= P.chi[0]) xpin |= 1u << i;
  bool ypin[W], slane[W], ldok[W];
#pragma unroll
  for (int w = 0; w < W; w++) ypin[w] = y + w < P.clo[1] || y + w >= P.chi[1];
  const bool tpin = xo0 - HP < P.clo[0] || xo0 - HP + RW > P.chi[0] ||
                    ycs < P.clo[1] || ycs + NR > P.chi[1];
#pragma unroll
  for (int w = 0; w < W; w++)
    slane[w] = c0 >= xo0 && c0 < xo1 && y + w >= yo0 && y + w < yo1;
  const int nvalid = xo1 - c0;
  T *orow = P.out + c0 + (long long)y * P.osy;
  const T *irow = P.in + c0 + (long long)y * P.isy;
#pragma unroll
  for (int w = 0; w < W; w++) ldok[w] = c0 + V <= P.xsafe && y + w < P.yread;
  /* my first row's slot and the rows above my first and below my last, in
   * a level's buffer */
  const int om = row * RW + lx * V,
            ou = (row > 0 ? row - 1 : 0) * RW + lx * V,
            od = (row + W < NR ? row + W : NR - 1) * RW + lx * V;

  const int pfirst = z0 - S, NI = (z1 - z0) + 3 * S - 1;
  auto fetch = [&](int p, int slot) {
#pragma unroll
    for (int w = 0; w < W; w++)
      if (ldok[w] && p < P.zread)
        cp_lane<T, V>(ring + (size_t)slot * LSZ + w * RW,
                      irow + (long long)w * P.isy + (long long)p * P.isz);
    cp_async_commit();
  };
#pragma unroll
  for (int j = 0; j < PD3W; j++) fetch(pfirst + j, j);

  /* per level k = 1..S (index k - 1): partial sums of planes r - 1, r,
   * r + 1 rotate through X, Y, Z; pub: the newest complete plane of
   * levels 1..S-1 (index k - 1), published next iteration; one of each a
   * row */
  rows2w<T, V, S> X[W], Y[W], Z[W], pub[W];
#pragma unroll
  for (int w = 0; w < W; w++)
#pragma unroll
    for (int k = 0; k < S; k++)
#pragma unroll
      for (int i = 0; i < V; i++)
        X[w].v[k][i] = Y[w].v[k][i] = Z[w].v[k][i] = pub[w].v[k][i] = T(0);

  int par = 0;
  auto one = [&](auto pin, rows2w<T, V, S>(&A0)[W], rows2w<T, V, S>(&A1)[W],
                 rows2w<T, V, S>(&A2)[W], int p, int slot) {
    constexpr bool PIN = decltype(pin)::value;
    T *ex = exb + (size_t)par * S * LSZ;
    cp_async_wait<PD3W - 1>();
    T cur[W][S][V]; /* the plane each level consumes: input, then pub */
#pragma unroll
    for (int w = 0; w < W; w++) {
      const strata__vec<T, V> x =
          lds_v<T, V>(ring + (size_t)slot * LSZ + w * RW);
#pragma unroll
      for (int i = 0; i < V; i++) cur[w][0][i] = x.v[i];
    }
#pragma unroll
    for (int w = 0; w < W; w++)
#pragma unroll
      for (int k = 1; k < S; k++)
#pragma unroll
        for (int i = 0; i < V; i++) cur[w][k][i] = pub[w].v[k - 1][i];
    /* each level's plane to shared memory, and its row sums h = c(x - 1)
     * + c(x + 1) here */
    T hs[W][S][V];
#pragma unroll
    for (int w = 0; w < W; w++)
#pragma unroll
      for (int k = 0; k < S; k++) {
        strata__vec<T, V> x;
#pragma unroll
        for (int i = 0; i < V; i++) x.v[i] = cur[w][k][i];
        sts_v<T, V>(ex + (size_t)k * LSZ + om + w * RW, x);
        row_sums<T, V, LR>(cur[w][k], hs[w][k]);
      }
    __syncthreads();
#pragma unroll
    for (int k = 1; k <= S; k++) {
      const T *lv = ex + (size_t)(k - 1) * LSZ;
#pragma unroll
      for (int w = 0; w < W; w++) {
        const T *c = cur[w][k - 1];
        /* the rows above and below: from shared memory at the ends of my
         * rows, their sums from the lanes beside (the same operands and
         * order as their own threads' h); between my rows, mine */
        T upv[V], dnv[V], hu[V], hd[V], f[V], k4[V];
        if (w == 0) {
          const strata__vec<T, V> up = lds_v<T, V>(lv + ou);
#pragma unroll
          for (int i = 0; i < V; i++) upv[i] = up.v[i];
          row_sums<T, V, LR>(upv, hu);
        } else {
#pragma unroll
          for (int i = 0; i < V; i++) {
            upv[i] = cur[w > 0 ? w - 1 : 0][k - 1][i];
            hu[i] = hs[w > 0 ? w - 1 : 0][k - 1][i];
          }
        }
        if (w == W - 1) {
          const strata__vec<T, V> dn = lds_v<T, V>(lv + od);
#pragma unroll
          for (int i = 0; i < V; i++) dnv[i] = dn.v[i];
          row_sums<T, V, LR>(dnv, hd);
        } else {
#pragma unroll
          for (int i = 0; i < V; i++) {
            dnv[i] = cur[w < W - 1 ? w + 1 : 0][k - 1][i];
            hd[i] = hs[w < W - 1 ? w + 1 : 0][k - 1][i];
          }
        }
#pragma unroll
        for (int i = 0; i < V; i++) {
          f[i] = hs[w][k - 1][i] + upv[i] + dnv[i];
          k4[i] = hu[i] + hd[i];
        }
        const int rr = p - 2 * (k - 1); /* the plane consumed */
        T v[V];
#pragma unroll
        for (int i = 0; i < V; i++) {
          const T same = P.C[0] * c[i] + P.C[1] * f[i] + P.C[2] * k4[i];
          const T nb = P.C[1] * c[i] + P.C[2] * f[i] + P.C[3] * k4[i];
          v[i] = A0[w].v[k - 1][i] + nb; /* plane rr - 1 complete */
          A1[w].v[k - 1][i] += same;
          A2[w].v[k - 1][i] = nb;
        }
        const int q = rr - 1;
        if (k < S) {
          if (PIN) {
            const unsigned pm =
                (ypin[w] || q < P.clo[2] || q >= P.chi[2]) ? ~0u : xpin;
            /* inside the allocation (outside, the point is out of the
             * cone) */
            const bool rd = y + w < P.yread && q >= -P.h[2] && q < P.zread;
#pragma unroll
            for (int i = 0; i < V; i++)
              if (((pm >> i) & 1u) && rd && c0 + i < P.xsafe)
                v[i] = __ldg(irow + (long long)w * P.isy + i +
                             (long long)q * P.isz);
          }
#pragma unroll
          for (int i = 0; i < V; i++) pub[w].v[k - 1][i] = v[i];
        } else if (slane[w] && q >= z0 && q < z1) {
          store_lane<T, V>(orow, w, q, v, nvalid, P);
        }
      }
    }
    fetch(p + PD3W, slot);
    par ^= 1;
  };
  auto trip = [&](auto pin, int p) {
    one(pin, X, Y, Z, p, 0);
    one(pin, Y, Z, X, p + 1, 1);
    one(pin, Z, X, Y, p + 2, 2);
  };
#pragma unroll 1
  for (int it = 0; it < NI; it += 3) {
    const int p = pfirst + it;
    /* the trip completes planes p - 2S + 1 .. p + 1 at levels 1 .. S */
    if (tpin || p - 2 * S + 1 < P.clo[2] || p + 1 >= P.chi[2])
      trip(std::true_type{}, p);
    else
      trip(std::false_type{}, p);
  }
  cp_async_wait<0>();
}

/* ---- host side ------------------------------------------------------------ */

/* A register-tile shape of the 3D kernels: V values a lane, NW warps, LR
 * lanes a row (32: a warp is a row; 16: two rows). */
struct tile3 {
  int V, NW, LR, W; /* W: rows a thread (k_fused3d_reg) */
};

/* The shapes the launcher chooses from, in order of preference.  7-point:
 * 16 bytes a lane, one 1024-thread block or two 512-thread ones a
 * multiprocessor, or one 512-thread block of two rows a thread (W = 2).
 * 27-point box (103-124 registers at 16 bytes a lane: one 512-thread
 * block): also 8 bytes a lane in a 1024-thread block, and two rows a
 * thread in blocks of 512 or 384 threads. */
template <typename T> const tile3 *fz3_shapes(bool sym, int *n) {
  constexpr int VV = 16 / (int)sizeof(T);
  static const tile3 star[] = {{VV, 32, 32, 1}, {VV, 32, 16, 1},
                               {VV, 16, 32, 1}, {VV, 16, 16, 1},
                               {VV, 24, 16, 1}, {VV, 16, 32, 2},
                               {VV, 16, 16, 2}};
  static const tile3 box[] = {{VV, 16, 32, 1}, {VV, 16, 16, 1},
                              {VV / 2, 32, 32, 1}, {VV, 24, 16, 1},
                              {VV, 16, 32, 2}, {VV, 12, 32, 2}};
  *n = sym ? 6 : 7;
  return sym ? box : star;
}

/* Tiles of shape c for s fused steps: x tiles of LR V - 2 HP outputs, y
 * tiles as ytile places them (the pinned ghost row of a Dirichlet edge is
 * all an edge tile needs below or above it). */
template <typename T>
void fz3_tiles(fused_par<T> &P, const tile3 &c, int s) {
  const int HP = (s + c.V - 1) / c.V * c.V, NR = c.NW * 32 / c.LR * c.W;
  P.tile[0] = c.LR * c.V - 2 * HP;
  P.ntl[0] = (P.n[0] + P.tile[0] - 1) / P.tile[0];
  const int n = P.n[1];
  P.ycs0 = P.clo[1] - 1 > -s ? P.clo[1] - 1 : -s;
  P.yhin = P.chi[1] < n + s - 1 ? P.chi[1] : n + s - 1;
  P.ye0 = P.ycs0 + NR - s;
  P.tile[1] = NR - 2 * s;
  const int e1 = NR - s - (P.yhin - n + 1);
  if (P.yhin - P.ycs0 + 1 <= NR) {
    P.ntl[1] = 1;
  } else {
    const int rest = n - P.ye0 - e1;
    P.ntl[1] = 2 + (rest > 0 ? (rest + P.tile[1] - 1) / P.tile[1] : 0);
  }
}

template <typename T> using fz_kern = void (*)(const fused_par<T>);

template <typename T> fz_kern<T> fz3_kernel(bool sym, int s, const tile3 &c) {
  constexpr int VV = 16 / (int)sizeof(T);
  const int code = c.V * 10000 + c.NW * 100 + c.LR;
  if (sym) {
    if (c.W == 2) {
      switch (s * 1000000 + code) {
#define FB3W(q, nw)                                                            \
  case q * 1000000 + VV * 10000 + nw * 100 + 32:                               \
    return k_fused3d_box<T, VV, q, nw, 32, 2>;
        FB3W(1, 16) FB3W(2, 16) FB3W(1, 12) FB3W(2, 12)
#undef FB3W
      }
      return nullptr;
    }
    if (c.W != 1) return nullptr;
    switch (s * 1000000 + code) {
#define FB3(q, v, nw, lr)                                                      \
  case q * 1000000 + v * 10000 + nw * 100 + lr:                                \
    return k_fused3d_box<T, v, q, nw, lr>;
      FB3(1, VV, 16, 32) FB3(1, VV, 16, 16) FB3(1, VV / 2, 32, 32)
      FB3(1, VV, 24, 16)
      FB3(2, VV, 16, 32) FB3(2, VV, 16, 16) FB3(2, VV / 2, 32, 32)
      FB3(2, VV, 24, 16)
#undef FB3
    }
    return nullptr;
  }
  if (c.W == 2) {
    switch (s * 1000000 + code) {
#define FR3W(q)                                                                \
  case q * 1000000 + VV * 10000 + 1632:                                        \
    return k_fused3d_reg<T, VV, q, 16, 32, 2>;                                 \
  case q * 1000000 + VV * 10000 + 1616:                                        \
    return k_fused3d_reg<T, VV, q, 16, 16, 2>;
      FR3W(1) FR3W(2) FR3W(3) FR3W(4)
#undef FR3W
    }
    return nullptr;
  }
  if (c.W != 1) return nullptr;
  switch (s * 1000000 + code) {
#define FR3(q)                                                                 \
  case q * 1000000 + VV * 10000 + 3232: return k_fused3d_reg<T, VV, q, 32, 32>; \
  case q * 1000000 + VV * 10000 + 3216: return k_fused3d_reg<T, VV, q, 32, 16>; \
  case q * 1000000 + VV * 10000 + 1632: return k_fused3d_reg<T, VV, q, 16, 32>; \
  case q * 1000000 + VV * 10000 + 1616: return k_fused3d_reg<T, VV, q, 16, 16>; \
  case q * 1000000 + VV * 10000 + 2416: return k_fused3d_reg<T, VV, q, 24, 16>;
    FR3(1) FR3(2) FR3(3) FR3(4)
#undef FR3
  }
  return nullptr;
}

strata_status fz_device(strata_context *ctx) {
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

/* The 3D radius-1 register-tile kernels (k_fused3d_reg, k_fused3d_box):
 * xy tiles streamed along z.  The tile shape and the z chunk length are
 * timed on first use for the sizes, steps and precision when autotuning is
 * on (and kept on the context); otherwise the shape that computes the
 * fewest points a plane and the chunks of strata__cu_zchunks.  Every
 * shape and chunk computes each point with the same operations in the same
 * order, so the choice never changes a result. */
template <typename T>
strata_status fused3d_reg(strata_context *ctx, fused_par<T> P, bool sym,
                          int s, const strata_field *in) {
  strata__cuda_state *st = strata__cu_state(ctx);
  const int ae = STRATA__ALIGN_BYTES / (int)sizeof(T);
  P.xsafe = (int)in->L.pitch_x - ae;
  P.yread = P.n[1] + in->d.ghost;
  P.zread = P.n[2] + in->d.ghost;
  int ncand = 0;
  const tile3 *cand = fz3_shapes<T>(sym, &ncand);

  /* one shape: tiles, kernel, shared memory, and the model's chunks */
  fz_kern<T> kern = nullptr;
  size_t smem = 0;
  int nthr = 0, model_planes = 0;
  long long xy = 0;
  auto prepare = [&](const tile3 &sh) -> strata_status {
    fz3_tiles(P, sh, s);
    kern = fz3_kernel<T>(sym, s, sh);
    if (!kern)
      return strata__fail(ctx, STRATA_EINVAL,
                          "apply_fused: no 3D register-tile kernel for %d "
                          "steps", s);
    nthr = sh.NW * 32;
    /* two buffers of the s levels' planes and the input ring */
    smem = (size_t)nthr * sh.V * sh.W * sizeof(T) * (2 * s + PD3W);
    strata_status e = fz_smem_attr(ctx, kern, smem);
    if (e != STRATA_OK) return e;
    int occ = 0;
    STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                        &occ, kern, nthr, smem));
    if (occ < 1)
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: a %d-thread block with %zu bytes of "
                          "shared memory does not fit on %s", nthr, smem,
                          st->prop.name);
    xy = (long long)P.ntl[0] * P.ntl[1];
    if (xy > 0x7fffffffLL)
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: %lld tiles exceed the grid limit", xy);
    /* z chunks: the number that minimises waves x (planes a chunk + the
     * warm-up planes), the 2.5D kernels' model (strata__cu_zchunks) */
    const int chunks = strata__cu_zchunks(
        (int)xy, occ, st->prop.multiProcessorCount, P.n[2],
        sym ? 3 * s - 1 : 2 * s);
    model_planes = (P.n[2] + chunks - 1) / chunks;
    return STRATA_OK;
  };
  auto launch = [&](int pl) -> strata_status {
    P.tile[2] = pl;
    P.ntl[2] = (P.n[2] + pl - 1) / pl;
    const long long blocks = xy * P.ntl[2];
    if (blocks > 0x7fffffffLL)
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: %lld tiles exceed the grid limit",
                          blocks);
    kern<<<(unsigned)blocks, nthr, smem, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "apply_fused (3D register tiles) kernel launch");
    return STRATA_OK;
  };
  /* a warm-up launch, then reps timed */
  auto timed = [&](int pl, int reps, float *ms) -> strata_status {
    strata_status e = launch(pl);
    if (e != STRATA_OK) return e;
    STRATA__CU(ctx, cudaEventRecord(st->ev0, st->stream));
    for (int r = 0; r < reps; r++)
      if ((e = launch(pl)) != STRATA_OK) return e;
    STRATA__CU(ctx, cudaEventRecord(st->ev1, st->stream));
    STRATA__CU(ctx, cudaEventSynchronize(st->ev1));
    STRATA__CU(ctx, cudaEventElapsedTime(ms, st->ev0, st->ev1));
    return STRATA_OK;
  };

  const char *env = getenv("STRATA_FUSED3D_SHAPE"); /* experiments, tests */
  int pick = -1;
  if (env) {
    int v = 0, nw = 0, lr = 0, w = 1; /* W 1 unless named */
    if (sscanf(env, "%d,%d,%d,%d", &v, &nw, &lr, &w) >= 3)
      for (int i = 0; i < ncand; i++)
        if (cand[i].V == v && cand[i].NW == nw && cand[i].LR == lr &&
            cand[i].W == w)
          pick = i;
    if (pick < 0)
      return strata__fail(ctx, STRATA_EINVAL,
                          "apply_fused: STRATA_FUSED3D_SHAPE='%s' is not one "
                          "of the 3D tile shapes (V,NW,LR[,W])", env);
  }
  const char *ez = getenv("STRATA_FUSED3D_PLANES"); /* experiments */
  const int key[7] = {P.n[0], P.n[1], P.n[2], s, (int)sizeof(T), sym ? 1 : 0,
                      pick};
  if (ctx->autotune && !(ez && atoi(ez) > 0))
    for (int i = 0; i < st->nfz3; i++)
      if (memcmp(st->fz3[i].key, key, sizeof key) == 0) {
        strata_status e = prepare(cand[st->fz3[i].shape]);
        return e != STRATA_OK ? e : launch(st->fz3[i].planes);
      }
  if (pick < 0 && (!ctx->autotune || (ez && atoi(ez) > 0))) {
    /* the fewest points computed a plane; ties keep the earlier shape */
    long long best = -1;
    for (int i = 0; i < ncand; i++) {
      fused_par<T> Q = P;
      fz3_tiles(Q, cand[i], s);
      const long long thr =
          (long long)Q.ntl[0] * Q.ntl[1] * cand[i].NW * 32 * cand[i].V *
          cand[i].W;
      if (best < 0 || thr < best) {
        best = thr;
        pick = i;
      }
    }
  }
  if (ez && atoi(ez) > 0) {
    strata_status e = prepare(cand[pick]);
    return e != STRATA_OK ? e : launch(atoi(ez));
  }
  if (!ctx->autotune) {
    strata_status e = prepare(cand[pick]);
    return e != STRATA_OK ? e : launch(model_planes);
  }
  /* Autotuning: every shape (or the one asked for) with every chunk
   * length, the fastest kept.  The thread count does not rank the shapes
   * (H100, s = 3, 512^3 fp32: 633 / 650 / 671 Gpts/s for one block of 128
   * x 32, one of 64 x 64 and two of 64 x 32 a multiprocessor, 3200 / 2880
   * / 3200 threads over the plane), and the chunk model misses that a
   * short last chunk fills the gaps of the waves before it (96-plane
   * chunks ran 575 and fp64 361 Gpts/s, the model's 103-plane ones 559
   * and 351).  Each candidate writes the same output, so the timing runs
   * are harmless. */
  /* one pass over all (three launches each), then the three fastest
   * again with eight launches each (two-launch timings alone picked
   * shapes that ran 353 to 382 Gpts/s from one H100 run to the next, fp64
   * 512^3 s = 3) */
  struct trial {
    int shape, planes;
    float ms;
  } lead[3];
  int nlead = 0;
  /* the clocks up first: ten launches of the first shape */
  for (int i = 0; i < ncand; i++) {
    if (pick >= 0 && i != pick) continue;
    strata_status e = prepare(cand[i]);
    if (e == STRATA_ENOTSUP) continue;
    if (e != STRATA_OK) return e;
    for (int r = 0; r < 10; r++)
      if ((e = launch(model_planes)) != STRATA_OK) return e;
    break;
  }
  for (int i = 0; i < ncand; i++) {
    if (pick >= 0 && i != pick) continue;
    strata_status e = prepare(cand[i]);
    if (e == STRATA_ENOTSUP) continue; /* does not fit this device */
    if (e != STRATA_OK) return e;
    int cpl[12], nc = 0;
    cpl[nc++] = model_planes;
    static const int fixed[] = {32, 48, 64, 80, 96, 128, 160, 192, 256};
    for (int q : fixed)
      if (q < P.n[2] && q != model_planes && q >= 4 * s) cpl[nc++] = q;
    for (int c = 0; c < nc; c++) {
      trial t = {i, cpl[c], 0};
      if ((e = timed(cpl[c], 3, &t.ms)) != STRATA_OK) return e;
      int at = nlead < 3 ? nlead++ : 3; /* insert sorted, keep three */
      while (at > 0 && lead[at - 1].ms > t.ms) {
        if (at < 3) lead[at] = lead[at - 1];
        at--;
      }
      if (at < 3) lead[at] = t;
    }
  }
  int best_shape = -1, best_planes = 0;
  float best_ms = 3.4e38f;
  for (int i = 0; i < nlead; i++) {
    strata_status e = prepare(cand[lead[i].shape]);
    if (e != STRATA_OK) return e;
    float ms = 0;
    if ((e = timed(lead[i].planes, 8, &ms)) != STRATA_OK) return e;
    if (ms < best_ms) {
      best_ms = ms;
      best_shape = lead[i].shape;
      best_planes = lead[i].planes;
    }
  }
  if (best_shape < 0) return prepare(cand[0]); /* the reason none fits */
  strata_status e = prepare(cand[best_shape]);
  if (e != STRATA_OK) return e;
  const int slot = st->nfz3 < 32 ? st->nfz3++ : 31;
  memcpy(st->fz3[slot].key, key, sizeof key);
  st->fz3[slot].shape = best_shape;
  st->fz3[slot].planes = best_planes;
  return launch(best_planes);
}

template <typename T>
strata_status fused_typed(const strata_stencil *op, const strata_boundary *bc,
                          int s, const strata_field *in, strata_field *out) {
  strata_context *ctx = in->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const int D = in->d.dims, R = op->radius, H = R * s;
  const bool sym = op->kind == STRATA_STENCIL_BOX_SYMMETRIC;
  fused_par<T> P;
  memset(&P, 0, sizeof P);
  P.in = (const T *)in->data + in->L.origin;
  P.out = (T *)out->data + out->L.origin;
  P.isy = (long long)in->L.pitch_x;
  P.isz = P.isy * (long long)in->L.pitch_y;
  P.osy = (long long)out->L.pitch_x;
  P.osz = P.osy * (long long)out->L.pitch_y;
  P.s = s;
  for (int a = 0; a < 3; a++) {
    P.n[a] = (int)in->d.n[a];
    if (a < D) {
      const strata_bc_kind kl = bc->kind[2 * a], kh = bc->kind[2 * a + 1];
      P.h[a] = H;
      P.clo[a] = (kl == STRATA_BC_NEUMANN || kl == STRATA_BC_PERIODIC) ? -H : 0;
      P.chi[a] = P.n[a] + ((kh == STRATA_BC_NEUMANN ||
                            kh == STRATA_BC_PERIODIC) ? H : 0);
    } else {
      P.h[a] = 0;
      P.clo[a] = 0;
      P.chi[a] = 1;
    }
  }
  P.c0 = (T)op->center;
  for (int a = 0; a < 3; a++)
    for (int k = 0; k <= STRATA_MAX_RADIUS; k++) P.w[a][k] = (T)op->coef[a][k];
  for (int q = 0; q < 4; q++) P.C[q] = (T)op->sym[q];
  const size_t smax = st->prop.sharedMemPerBlockOptin;

  if (D == 2 && R == 1 && !sym && s <= 8) {
    /* warp strips (k_fused2d_warp): 16 bytes a lane (32 bytes a lane,
     * V = 8 fp32 / 4 fp64, measured 0.8x / 1.0x: fewer warps fit) */
    constexpr int V = 16 / (int)sizeof(T);
    const int HP = (s + V - 1) / V * V;
    const int ae = STRATA__ALIGN_BYTES / (int)sizeof(T);
    P.tile[0] = 32 * V - 2 * HP;
    P.ntl[0] = (P.n[0] + P.tile[0] - 1) / P.tile[0];
    P.xsafe = (int)in->L.pitch_x - ae; /* a row holds columns [-ae, xsafe) */
    P.yread = P.n[1] + in->d.ghost;
    if (HP > ae) /* cannot happen: HP <= 8, ae >= 16 */
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: strip ring %d exceeds the row pad %d",
                          HP, ae);
    void (*kern)(const fused_par<T>) = nullptr;
    switch (s) {
#define FZW(q)                                                                 \
  case q: kern = k_fused2d_warp<T, V, q>; break;
      FZW(1) FZW(2) FZW(3) FZW(4) FZW(5) FZW(6) FZW(7) FZW(8)
#undef FZW
    }
    const size_t smem = (size_t)kWarps2dw * PD2W * 32 * V * sizeof(T);
    int occ = 0;
    STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                        &occ, kern, kWarps2dw * 32, smem));
    if (occ < 1) occ = 1;
    /* rows per chunk: each chunk reads 2 s rows of warm-up, so at least
     * 16 s rows (<= 12% extra reads); otherwise as many chunks as fill
     * whole waves of resident warps, so no wave runs a few warps alone */
    const long long cap =
        (long long)occ * kWarps2dw * st->prop.multiProcessorCount;
    const int lmin = 16 * s > 32 ? 16 * s : 32;
    long long cmax = (P.n[1] + lmin - 1) / lmin, chunks = cmax;
    if ((long long)P.ntl[0] * cmax > cap) {
      long long waves = (long long)P.ntl[0] * cmax / cap;
      chunks = waves * cap / P.ntl[0];
      if (chunks < 1) chunks = 1;
    }
    int rows = (int)((P.n[1] + chunks - 1) / chunks);
    const char *ev = getenv("STRATA_FUSED2D_ROWS"); /* tuning experiments */
    if (ev && atoi(ev) > 0) rows = atoi(ev);
    P.tile[1] = rows;
    P.ntl[1] = (P.n[1] + rows - 1) / rows;
    const long long warps = (long long)P.ntl[0] * P.ntl[1];
    const long long blocks = (warps + kWarps2dw - 1) / kWarps2dw;
    if (blocks > 0x7fffffffLL)
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: %lld strips exceed the grid limit",
                          blocks);
    kern<<<(unsigned)blocks, kWarps2dw * 32, smem, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "apply_fused (2D warp strips) kernel launch");
    return STRATA_OK;
  }

  if (D <= 2) {
    /* tiles: long rows, as many rows as fit two buffers in ~100 KB */
    static const int cand2[][2] = {{128, 32}, {64, 32}, {32, 32}, {32, 16},
                                   {16, 16}, {16, 8}, {8, 8}};
    size_t want = smax < 100 * 1024 ? smax : 100 * 1024, smem = 0;
    int TX = 0, TY = 0;
    if (D == 1) {
      TX = 4096;
      TY = 1;
      smem = 2 * (size_t)(TX + 2 * H) * sizeof(T);
      if (smem > smax) {
        TX = 512;
        smem = 2 * (size_t)(TX + 2 * H) * sizeof(T);
      }
    } else {
      for (int pass = 0; pass < 2 && !TX; pass++)
        for (const auto &c : cand2) {
          size_t b = 2 * (size_t)(c[0] + 2 * H) * (c[1] + 2 * H) * sizeof(T);
          if (b <= (pass == 0 ? want : smax)) {
            TX = c[0];
            TY = c[1];
            smem = b;
            break;
          }
        }
    }
    if (!TX || smem > smax)
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: %d fused steps of a radius-%d stencil "
                          "need more shared memory than %s gives a block (%zu "
                          "bytes)", s, R, st->prop.name, smax);
    P.tile[0] = TX;
    P.tile[1] = TY;
    P.tile[2] = 1;
    P.pw = TX + 2 * P.h[0];
    P.ph = TY + 2 * P.h[1];
    P.ntl[0] = (P.n[0] + TX - 1) / TX;
    P.ntl[1] = (P.n[1] + TY - 1) / TY;
    P.ntl[2] = 1;
    const long long blocks = (long long)P.ntl[0] * P.ntl[1];
    if (blocks > 0x7fffffffLL)
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: %lld tiles exceed the grid limit",
                          blocks);
    void (*kern)(const fused_par<T>) = nullptr;
    switch (D * 10 + R) {
#define FZ2(d, r)                                                              \
  case d * 10 + r: kern = k_fused2d<T, r, d>; break;
      FZ2(1, 1) FZ2(1, 2) FZ2(1, 3) FZ2(1, 4)
      FZ2(2, 1) FZ2(2, 2) FZ2(2, 3) FZ2(2, 4)
#undef FZ2
    }
    if (!kern)
      return strata__fail(ctx, STRATA_EINVAL,
                          "apply_fused: radius %d in %dD is not supported", R,
                          D);
    strata_status e = fz_smem_attr(ctx, kern, smem);
    if (e != STRATA_OK) return e;
    kern<<<(unsigned)blocks, kThreads2d, smem, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "apply_fused (2D tiles) kernel launch");
    return STRATA_OK;
  }

  if (D == 3 && R == 1 && (sym ? s <= 2 : s <= 4))
    return fused3d_reg<T>(ctx, P, sym, s, in);

  /* 3D: xy tiles, rings of 2R + 1 planes for levels 0..s-1 */
  const int NP = 2 * R + 1;
  static const int cand3[][2] = {{32, 16}, {32, 8}, {16, 16}, {16, 8},
                                 {8, 8},   {8, 4},  {4, 4}};
  auto bytes3 = [&](int tx, int ty) {
    return (size_t)s * NP * (size_t)(tx + 2 * H) * (ty + 2 * H) * sizeof(T);
  };
  /* prefer two blocks per multiprocessor, else whatever fits */
  const size_t per_sm = st->prop.sharedMemPerMultiprocessor;
  size_t two = per_sm / 2 > 2048 ? per_sm / 2 - 2048 : 0;
  if (two > smax) two = smax;
  int TX = 0, TY = 0;
  for (const auto &c : cand3)
    if (bytes3(c[0], c[1]) <= two) {
      TX = c[0];
      TY = c[1];
      break;
    }
  if (!TX)
    for (const auto &c : cand3)
      if (bytes3(c[0], c[1]) <= smax) {
        TX = c[0];
        TY = c[1];
        break;
      }
  if (!TX)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "apply_fused: %d fused steps of a radius-%d stencil in "
                        "3D need %zu bytes of shared memory even with 4x4 "
                        "tiles; %s gives a block %zu", s, R, bytes3(4, 4),
                        st->prop.name, smax);
  const size_t smem = bytes3(TX, TY);
  P.tile[0] = TX;
  P.tile[1] = TY;
  P.pw = TX + 2 * H;
  P.ph = TY + 2 * H;
  P.ntl[0] = (P.n[0] + TX - 1) / TX;
  P.ntl[1] = (P.n[1] + TY - 1) / TY;
  void (*kern)(const fused_par<T>) = nullptr;
  if (sym) {
    if (R == 1) kern = k_fused3d<T, STRATA_STENCIL_BOX_SYMMETRIC, 1>;
  } else {
    switch (R) {
    case 1: kern = k_fused3d<T, STRATA_STENCIL_STAR, 1>; break;
    case 2: kern = k_fused3d<T, STRATA_STENCIL_STAR, 2>; break;
    case 3: kern = k_fused3d<T, STRATA_STENCIL_STAR, 3>; break;
    case 4: kern = k_fused3d<T, STRATA_STENCIL_STAR, 4>; break;
    }
  }
  if (!kern)
    return strata__fail(ctx, STRATA_EINVAL,
                        "apply_fused: radius %d is not supported for this "
                        "stencil in 3D", R);
  strata_status e = fz_smem_attr(ctx, kern, smem);
  if (e != STRATA_OK) return e;
  /* z chunks: enough blocks for two waves, each chunk at least max(4H, 8)
   * planes so the 2H planes of warm-up stay a small part */
  int occ = 0;
  STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                      &occ, kern, kThreads3d, smem));
  if (occ < 1) occ = 1;
  const long long xy = (long long)P.ntl[0] * P.ntl[1];
  const long long target = 2LL * occ * st->prop.multiProcessorCount;
  long long chunks = (target + xy - 1) / xy;
  const int minz = 4 * H > 8 ? 4 * H : 8;
  long long maxc = P.n[2] / minz;
  if (maxc < 1) maxc = 1;
  if (chunks > maxc) chunks = maxc;
  if (chunks < 1) chunks = 1;
  P.tile[2] = (int)((P.n[2] + chunks - 1) / chunks);
  P.ntl[2] = (P.n[2] + P.tile[2] - 1) / P.tile[2];
  const long long blocks = xy * P.ntl[2];
  if (blocks > 0x7fffffffLL)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "apply_fused: %lld tiles exceed the grid limit",
                        blocks);
  kern<<<(unsigned)blocks, kThreads3d, smem, st->stream>>>(P);
  STRATA__LAUNCHED(ctx, "apply_fused (2.5D streaming) kernel launch");
  return STRATA_OK;
}

} // namespace

strata_status strata__cuda_apply_fused(const strata_stencil *op,
                                       const strata_boundary *bc, int steps,
                                       const strata_field *in,
                                       strata_field *out) {
  strata_context *ctx = in->ctx;
  if (op->kind != STRATA_STENCIL_STAR &&
      op->kind != STRATA_STENCIL_BOX_SYMMETRIC)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "apply_fused: the CUDA engine fuses star and "
                        "symmetric 27-point stencils only");
  if (op->kind == STRATA_STENCIL_BOX_SYMMETRIC &&
      (in->d.dims != 3 || op->radius != 1))
    return strata__fail(ctx, STRATA_EINVAL,
                        "apply_fused: the symmetric 27-point box is 3D, "
                        "radius 1");
  if (op->radius < 1 || op->radius > STRATA_MAX_RADIUS)
    return strata__fail(ctx, STRATA_EINVAL,
                        "apply_fused: radius %d is outside 1..%d", op->radius,
                        STRATA_MAX_RADIUS);
  if (steps < 1 || in->d.ghost < op->radius * steps)
    return strata__fail(ctx, STRATA_EGHOST,
                        "apply_fused: %d fused steps of a radius-%d stencil "
                        "need ghost width %d, the field has %d",
                        steps, op->radius, op->radius * steps, in->d.ghost);
  for (int a = 0; a < 3; a++)
    if (in->d.n[a] > ((size_t)1 << 30))
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: the CUDA kernels take at most 2^30 "
                          "points per axis (axis %c has %zu)", "xyz"[a],
                          in->d.n[a]);
  strata_status s = fz_device(ctx);
  if (s != STRATA_OK) return s;
  if (in->d.precision == STRATA_F32)
    return fused_typed<float>(op, bc, steps, in, out);
  return fused_typed<double>(op, bc, steps, in, out);
}
