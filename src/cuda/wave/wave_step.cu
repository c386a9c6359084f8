/* The CUDA engine's second-order wave step (acoustic wave and the explicit
 * FDTD scheme).  The contract is in src/core/internal.h
 * (strata__wave_args); the oracle is
 * the CPU engine (src/cpu/cpu_solvers.inc), whose phases, ranges and
 * operation order these kernels follow:
 *
 * wave_step, launched on the context's stream with no host wait:
 *   A. (2D, and 3D grids the streaming kernels do not take) k_psi, one
 *      launch per CPML slab: psi = b psi + a D1 u over the slab's [lo, hi)
 *      along its axis (rows of y/z slabs with a == 0 are skipped, as on
 *      the CPU); the streamed 3D paths do this after B, in B';
 *   B. k_wavetma (3D, sm_90): the update of up over the stencil nodes,
 *      fed by bulk tensor copies as streamws (see its comment), the rows
 *      of y CPML slabs and the planes of z CPML slabs (wave_yz) in
 *      launches of their own beside it on a side stream (wt_cpmly); k_wavev
 *      (3D elsewhere) the same streamed as streamcp (16-byte vectors,
 *      cp.async ring of u tiles, up and c2 copied ahead, one barrier per
 *      plane; see its comment).  k_wsv (wave_vd.cu: variable density in
 *      3D, and 2D) the same walk with a ring of b = 1/rho tiles beside u's
 *      (2D: row segments walked along y).  k_wave (the fallback: grids the
 *      others do not take): the scalar 2.5D update: a 32 x 16
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
 * Every point update uses the CPU's expression term for term; nvcc may
 * contract a multiply and an add into one FMA, so wave and Yee steps agree
 * with the CPU engine to rounding (tests/test_cuda_solvers.c gives the
 * tolerances). */
#include "solver_common.cuh"
#include "wave/wave_internal.cuh"

#include <string.h>

namespace {

using namespace strata_cuwave;

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

/* rho div(b grad u) at a tile point (k_wave's VD instance): c and cb its
 * u and b in the tiles (row pitch TW), q and qb the z columns (3D), the
 * CPU's order: per k the x, y, z pairs, the -k neighbour first. */
template <typename T, int R, int D, int TW>
__device__ __forceinline__ T vd_star(const T *c, const T *cb, const T *q,
                                     const T *qb, const T *lap) {
  const T ui = c[0], bi = cb[0];
  T acc = T(0);
#pragma unroll
  for (int r = 1; r <= R; r++) {
    acc = strata__pt_vd_term(acc, lap[r], bi, cb[-r], ui, c[-r]);
    acc = strata__pt_vd_term(acc, lap[r], bi, cb[r], ui, c[r]);
    acc = strata__pt_vd_term(acc, lap[r], bi, cb[-r * TW], ui, c[-r * TW]);
    acc = strata__pt_vd_term(acc, lap[r], bi, cb[r * TW], ui, c[r * TW]);
    if (D == 3) {
      acc = strata__pt_vd_term(acc, lap[r], bi, qb[R - r], ui, q[R - r]);
      acc = strata__pt_vd_term(acc, lap[r], bi, qb[R + r], ui, q[R + r]);
    }
  }
  return strata__pt_vd_total(acc, bi);
}

/* B. The update of up over the stencil nodes.  Block (kWX, kWY) owns the
 * xy tile at blockIdx.x and, grid-stride over blockIdx.y, pairs (tile row,
 * z chunk).  The tile covers [0, n) in x and y; threads outside the
 * stencil nodes only help load.  VD: variable density, L the operator of
 * point.h's vd_term / vd_total, b = 1/rho (rb: interior (0,0,0), u's
 * layout, ghosts set) tiled and kept in a column of registers beside u
 * (the instance without VD does not read rb; rb is a parameter of its
 * own so that wave_par, which every wave kernel takes, keeps its
 * layout). */
template <typename T, int R, int D, bool VD = false>
__global__ void __launch_bounds__(kWX *kWY)
    k_wave(const wave_par<T> P, const T *rb) {
  constexpr int TW = kWX + 2 * R, TH = kWY + 2 * R;
  __shared__ T tile[TH][TW];
  __shared__ T btile[VD ? TH : 1][VD ? TW : 1];
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
    const T *bcol = VD ? rb + i + (long long)j * sy : nullptr;
    T q[2 * R + 1];
    T qb[VD && D == 3 ? 2 * R + 1 : 1];
#pragma unroll
    for (int d = 0; d <= 2 * R; d++) q[d] = T(0);
    if (VD && D == 3) {
#pragma unroll
      for (int d = 0; d <= 2 * R; d++) qb[d] = T(1);
    }
    if (D == 3 && col) {
#pragma unroll
      for (int d = 0; d < 2 * R; d++) q[d] = ucol[(long long)(k0 - R + d) * sz];
      if (VD) {
#pragma unroll
        for (int d = 0; d < 2 * R; d++)
          qb[d] = bcol[(long long)(k0 - R + d) * sz];
      }
    }
    for (int k = k0; k < k1; k++) {
      T uc, bc = T(1);
      if (D == 3) {
        if (col) q[2 * R] = ucol[(long long)(k + R) * sz];
        uc = q[R];
        if (VD) {
          if (col) qb[2 * R] = bcol[(long long)(k + R) * sz];
          bc = qb[R];
        }
      } else {
        uc = col ? ucol[0] : T(0);
        if (VD) bc = col ? bcol[0] : T(1);
      }
      __syncthreads(); /* the previous plane's readers are done */
      tile[ty + R][tx + R] = uc;
      if (VD) btile[ty + R][tx + R] = bc;
      const T *plane = P.u + (long long)k * sz;
      for (int t = tid; t < TW * TH; t += kWX * kWY) {
        const int lx = t % TW, ly = t / TW;
        if (lx >= R && lx < R + kWX && ly >= R && ly < R + kWY) continue;
        const int gi = x0 - R + lx, gj = y0 - R + ly;
        if (gi < P.n[0] + R && gj < P.n[1] + R)
          tile[ly][lx] = plane[gi + (long long)gj * sy];
      }
      for (int t = tid; VD && t < TW * TH; t += kWX * kWY) {
        const int lx = t % TW, ly = t / TW;
        if (lx >= R && lx < R + kWX && ly >= R && ly < R + kWY) continue;
        const int gi = x0 - R + lx, gj = y0 - R + ly;
        if (gi < P.n[0] + R && gj < P.n[1] + R)
          btile[ly][lx] = rb[(long long)k * sz + gi + (long long)gj * sy];
      }
      __syncthreads();
      if (act) {
        const T *c = &tile[ty + R][tx + R];
        T L;
        if (VD) {
          L = vd_star<T, R, D, TW>(c, &btile[ty + R][tx + R], q, qb, P.lap);
        } else {
          /* L u, CPU order: centre, then per k the x, y, z pairs */
          T acc = P.lap[0] * (T)D * c[0];
#pragma unroll
          for (int r = 1; r <= R; r++) {
            acc += P.lap[r] * (c[-r] + c[r]);
            acc += P.lap[r] * (c[-r * TW] + c[r * TW]);
            if (D == 3) acc += P.lap[r] * (q[R - r] + q[R + r]);
          }
          L = acc;
        }
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
        if (VD) {
#pragma unroll
          for (int d = 0; d < 2 * R; d++) qb[d] = qb[d + 1];
        }
      }
    }
    __syncthreads(); /* the tile is reused by the next pair */
  }
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
        line[bnode * sa] = strata__pt_mur(uline[inner * sa], line[inner * sa],
                                          uline[bnode * sa], mur);
      }
    }
  }
}

/* A: psi on slab sl (the slabs are independent); an x or y slab's
 * planes [z0, z1) only when z1 >= 0 */
template <typename T>
strata_status wave_psi(strata_context *ctx, strata__cuda_state *st,
                       const wave_par<T> &P, int R, int sl, int z0 = 0,
                       int z1 = -1) {
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
   * rows and x, tried for full lanes, measured slower overall) */
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
}

/* B' (the streamed 3D path): the CPML terms the update left out, slab by
 * slab: psi and the correction in one pass (k_cpml_slab), or, for a slab
 * wider than its tile (or the tuning switch wave_cpml=split), k_psi and
 * then k_cpml_corr.  psi reads u only, so it may follow the update; a
 * slab's correction follows its own psi.  fused and cover: as
 * launch_wavetma gives them. */
template <typename T>
strata_status wave_cpml_pass(strata_context *ctx, strata__cuda_state *st,
                             const wave_par<T> &P, int D, int R, int fused,
                             const int cover[4]) {
  const bool split = sv_tuning_is(ctx, "wave_cpml", "split");
  for (int sl = 0; sl < 2 * D; sl++) {
    const wave_slab<T> &W = P.slab[sl];
    if (!W.psi || W.hi <= W.lo) continue;
    const int ax = sl / 2;
    if (fused >> sl & 1) {
      /* done in the update and its tiles (the y slabs' planes the y tiles
       * did not walk too, see launch_wavetma), but for an x slab's psi on
       * the planes no walk took (FREE or Mur z faces; cover): k_psi there */
      if (ax == 0) {
        strata_status sp =
            wave_psi<T>(ctx, st, P, R, sl, cover[2], cover[0]);
        if (sp == STRATA_OK)
          sp = wave_psi<T>(ctx, st, P, R, sl, cover[1], cover[3]);
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
    strata_status sp = wave_psi<T>(ctx, st, P, R, sl);
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
  return STRATA_OK;
}

/* C: the point sources a names (at most 8), in order. */
template <typename T>
strata_status wave_sources(strata_context *ctx, strata__cuda_state *st,
                           const wave_par<T> &P, const strata__wave_args *a) {
  const int D = a->dims, R = a->radius;
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
  return STRATA_OK;
}

/* D: faces, axis by axis (none left with faces in the kernels) */
template <typename T>
strata_status wave_faces(strata_context *ctx, strata__cuda_state *st,
                         const wave_par<T> &P, const strata__wave_args *a) {
  const int D = a->dims, R = a->radius;
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
    k_faces<T><<<strata__cu_grid1d(lines, 256), 256, 0, st->stream>>>(
        P.up, P.u, F, (T)a->mur);
    STRATA__LAUNCHED(ctx, "wave step: face kernel launch");
  }
  return STRATA_OK;
}

/* The step's parameters from a (all but the faces in the kernels and the
 * 2.5D kernel's tiles, set by wave_typed). */
template <typename T>
strata_status wave_fill(strata_context *ctx, const strata__wave_args *a,
                        wave_par<T> &P) {
  const strata_field *UF = a->u;
  strata_field *PF = a->up;
  const int D = a->dims, R = a->radius;
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
  return STRATA_OK;
}

template <typename T>
strata_status wave_typed(const strata__wave_args *a) {
  strata_context *ctx = a->u->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const int D = a->dims, R = a->radius;
  wave_par<T> P;
  const strata_status sf = wave_fill<T>(ctx, a, P);
  if (sf != STRATA_OK) return sf;
  /* variable density: b = 1/rho (k_wsv's and k_wave's VD instances) */
  const T *rb =
      a->rb ? (const T *)a->rb->data + a->rb->L.origin : (const T *)NULL;

  /* faces in the kernels (see above): 3D, FREE and ZERO faces only (at
   * least one FREE), every axis at least 2R + 2 nodes (FREE rows and images
   * never overlap), and only when k_wavev runs (set below).  k_wavev has
   * an instance for it (FF), so the other cases run the kernel without it. */
  P.inface = 0;
  for (int f = 0; f < 2 * D; f++)
    if (a->face[f] == STRATA__WF_FREE) P.inface = D == 3;
  for (int f = 0; f < 6; f++)
    if (a->face[f] != STRATA__WF_ZERO && a->face[f] != STRATA__WF_FREE)
      P.inface = 0;
  if (sv_tuning_is(ctx, "wave_faces", "pass")) P.inface = 0;
  for (int ax = 0; ax < 3; ax++) {
    if (P.n[ax] < 2 * R + 2) P.inface = 0;
    for (int side = 0; side < 2; side++)
      P.ffree[ax][side] = ax < D && a->face[2 * ax + side] == STRATA__WF_FREE;
  }

  /* B: the update over the stencil nodes: constant density in 3D by
   * k_wavetma or k_wavev, variable density and 2D by k_wsv; k_wave where
   * none of them takes the grid */
  bool streamed = false;
  int fused = 0; /* CPML slabs done inside k_wavetma (bit: slab index) */
  int cover[4] = {P.s0[2], P.s1[2], 0, P.n[2]}; /* its planes (see there) */
  if (D == 3 && !rb) { /* constant density (variable: k_wsv below) */
    strata_status sb =
        launch_tma<T>(ctx, st, P, a, R, &streamed, &fused, cover);
    if (sb != STRATA_OK) return sb;
    if (!streamed) {
      sb = launch_stream<T>(ctx, st, P, R, &streamed);
      if (sb != STRATA_OK) return sb;
    }
  }
  /* 2D: A first (k_wsv and k_wave both read psi), then B */
  for (int sl = 0; D == 2 && sl < 2 * D; sl++) {
    if (!P.slab[sl].psi) continue;
    const strata_status sp = wave_psi<T>(ctx, st, P, R, sl);
    if (sp != STRATA_OK) return sp;
  }
  bool sv = false; /* k_wsv ran */
  if (!streamed && (D == 2 || rb)) {
    /* variable density in 3D, and 2D: k_wsv (faces by k_faces), else
     * k_wave */
    P.inface = 0;
    const strata_status sb = launch_sv<T>(ctx, st, P, rb, D, R, &sv);
    if (sb != STRATA_OK) return sb;
    streamed = sv && D == 3; /* B' follows in 3D */
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
  if (streamed) {
    const strata_status sb = wave_cpml_pass<T>(ctx, st, P, D, R, fused, cover);
    if (sb != STRATA_OK) return sb;
  }
  if (!streamed && D == 3) { /* A, before the update that reads psi */
    for (int sl = 0; sl < 2 * D; sl++) {
      if (!P.slab[sl].psi) continue;
      strata_status sp = wave_psi<T>(ctx, st, P, R, sl);
      if (sp != STRATA_OK) return sp;
    }
  }
  if (!streamed && !sv) {
    const long long pairs = (long long)P.tiles_y * P.nchunks;
    dim3 grid((unsigned)tiles_x, (unsigned)(pairs < 65535 ? pairs : 65535));
    dim3 block(kWX, kWY);
    switch ((rb ? 100 : 0) + (D == 3 ? 10 : 0) + R) {
#define SV_WAVE(d, r, vd)                                                      \
  case (vd ? 100 : 0) + (d == 3 ? 10 : 0) + r:                                 \
    k_wave<T, r, d, vd><<<grid, block, 0, st->stream>>>(P, rb);                \
    break;
      SV_WAVE(2, 1, false) SV_WAVE(2, 2, false) SV_WAVE(2, 3, false)
      SV_WAVE(2, 4, false) SV_WAVE(3, 1, false) SV_WAVE(3, 2, false)
      SV_WAVE(3, 3, false) SV_WAVE(3, 4, false)
      SV_WAVE(2, 1, true) SV_WAVE(2, 2, true) SV_WAVE(2, 3, true)
      SV_WAVE(2, 4, true) SV_WAVE(3, 1, true) SV_WAVE(3, 2, true)
      SV_WAVE(3, 3, true) SV_WAVE(3, 4, true)
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
    const strata_status sc = wave_sources<T>(ctx, st, P, a);
    if (sc != STRATA_OK) return sc;
  }
  /* D: faces, axis by axis (none left with faces in the kernels) */
  return wave_faces<T>(ctx, st, P, a);
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
                 a->c2->L.origin != a->u->L.origin)) ||
      (a->rb && (a->rb->L.pitch_x != a->u->L.pitch_x ||
                 a->rb->L.pitch_y != a->u->L.pitch_y ||
                 a->rb->L.origin != a->u->L.origin ||
                 a->rb->d.ghost < a->radius)))
    return strata__fail(ctx, STRATA_EINVAL,
                        "wave step: u, up, c2 and b differ in layout");
  if (!a->c2 && !a->c2_line)
    return strata__fail(ctx, STRATA_EINVAL,
                        "wave step: neither c2 nor c2_line is set");
  strata_status s = sv_check_axis(ctx, a->u, "wave step");
  if (s != STRATA_OK) return s;
  STRATA__USE_DEVICE(ctx);
  if (a->u->d.precision == STRATA_F32) return wave_typed<float>(a);
  return wave_typed<double>(a);
}
