/* B'' of the wave step (see wave_step.cu): the CPML terms of one slab
 * after the streamed update, psi and the correction in one pass. */
#include "wave/wave_internal.cuh"

namespace {


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
 *    cp.async measured slower.)
 * Warps are mapped without divisions: blockIdx.y (grid-stride) is the
 * plane (x and y slabs) or the row (z slabs), blockIdx.x and the warp the
 * row (x slabs) or the group of 32 columns.
 * Phases: load; psi = b psi + a D1 u over [lo, hi) (k_psi's expression;
 * rows of y and z slabs with a == 0 keep psi, as on the CPU), in shared
 * and in global memory; then the correction at the stencil nodes in
 * [lo, hi) from the new psi and u (cpml_at and k_cpml_corr's expressions:
 * the same results to rounding).  Against k_psi + k_cpml_corr: u and psi
 * read once instead of twice, no one-point rows for the x slabs.  The
 * pass is bound by its instructions, not by memory, so its shape is chosen
 * to issue fewer: warps take units alone (a block of warps over a tile,
 * with barriers and coordinates recomputed in each phase, issued more);
 * an x row of at most 32 points (W + 3R <= 32: a 20-point layer at r = 4)
 * is one element a lane, with shuffles for the neighbours and b, a loaded
 * once; a warp takes kSlabRows x rows with every row's loads issued first
 * (more rows a warp shortened the pass alone but not the step).  Loading
 * more of a y or z unit at once (more registers, fewer warps) or capping
 * the registers made those passes slower.  The two slabs of an axis go in
 * one launch (blockIdx.z the side) when they are as wide and no point lies
 * in both: one tail of units instead of two.  The step's current figures:
 * docs/performance.md#acoustic-wave. */

/* k_cpml_slab's unit of an x slab whose rows hold at most 32 points
 * (Lw <= 32): kSlabRows rows (j = w * kSlabRows ..) of plane o, one
 * element a lane: every row's loads issued before any is used,
 * neighbours by shuffles, no shared memory, b and a loaded once (a
 * 20-point layer at r = 4: 32 points) */
template <typename T, int R>
__device__ __forceinline__ void
slab_x_rows(const wave_par<T> &P, const wave_slab<T> &S, int lo, int hi, int Lw,
            int lane, int c0, int c1, const double *pa, const double *pb, int w,
            int o) {
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
      np = strata__pt_cpml_psi(bv, av, pf[t], d);
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
}

/* k_cpml_slab's zeta, up and c2 of a y or z column at positions mb ..
 * mb + 3 below m1 (strides sq in psi's layout, su in u's; c2 from the
 * line without cr), all loaded before any is stored */
template <typename T, int R, int AX>
__device__ __forceinline__ void
slab_col_load4(const wave_par<T> &P, const T *zr, const T *wr, const T *cr,
               int mb, int m1, long long su, long long sq, int lo, int o,
               T (&zv)[4], T (&wv)[4], T (&cv)[4]) {
#pragma unroll
  for (int t = 0; t < 4; t++) {
    const int m = mb + t;
    if (m < m1) {
      zv[t] = zr[m * sq];
      wv[t] = wr[m * su];
      cv[t] = cr ? cr[m * su] : (T)P.c2_line[AX == 2 ? lo - R + m : o];
    }
  }
}

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
          slab_x_rows<T, R>(P, S, lo, hi, Lw, lane, c0, c1, pa, pb, w, o);
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
          slab_col_load4<T, R, AX>(P, zr, wr, cr, mb, m1, su, sq, lo, o, zv, wv,
                                   cv);
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

} // namespace

namespace strata_cuwave {

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

template strata_status slab_pass<float>(strata_context *, cudaStream_t,
                                        const wave_par<float> &, int, int, int,
                                        int, int);
template strata_status slab_pass<double>(strata_context *, cudaStream_t,
                                         const wave_par<double> &, int, int,
                                         int, int, int);

} // namespace strata_cuwave
