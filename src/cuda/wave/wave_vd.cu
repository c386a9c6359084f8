/* B of the wave step for the variable-density 3D update and for the 2D
 * section (constant or variable density): the streamed update k_wsv.  See
 * wave_step.cu for the phases: in 3D the CPML terms are added after it
 * (B'), in 2D inside it from the psi of A. */
#include "wave/wave_internal.cuh"

namespace {

using namespace strata_cuwave;

/* k_wsv's tile.  3D: a BX x BY block owns an xy tile of BX*V x BY points
 * (V = VB bytes / sizeof(T) along x per thread) with R halo rows above and
 * below; 2D: a BX x 1 block owns a row segment of BX*V points (the y
 * neighbours come from the register queue, as z's do in 3D).  Both walk a
 * chunk of the last axis.  A ring of NS tiles of u (and of b = 1/rho, VD)
 * is filled by cp.async A planes ahead; up and c2 (field) vectors of a
 * thread go into its own slots, a ring of NP. */
constexpr int kSvAhead = 2;

template <typename T, int R, int D, int BX, int BY, int VB> struct wsv_geo {
  static constexpr int V = VB / (int)sizeof(T);
  static constexpr int HV = (R + V - 1) / V;
  static constexpr int RY = D == 3 ? R : 0; /* halo rows of the tile */
  static constexpr int A = kSvAhead;
  static constexpr int NS = R + 2 + A;
  static constexpr int NP = A + 2;
  static constexpr int NT = BX * BY;
  static constexpr int TW = (BX + 2 * HV) * V, TH = BY + 2 * RY;
  static constexpr int TSZ = TW * TH;
  static constexpr int HN = 2 * RY * BX + 2 * HV * BY; /* halo vectors */
  static constexpr int SL = (HN + NT - 1) / NT;        /* slots a thread */
  static size_t bytes(bool c2field, bool vd) {
    return ((size_t)(vd ? 2 : 1) * NS * TSZ +
            (size_t)(c2field ? 2 : 1) * NP * NT * V) *
           sizeof(T);
  }
};

/* The operator at the V points of my vector, the CPU's order.  xs / xb: the
 * x windows of u and b (HV vectors each side of mine); col / colb (3D): my
 * vector in the u and b tiles, the rows m below / above at -+ m TW; q / qb:
 * the queues of the walked axis, planes k-R .. k+R.  VD: point.h's vd_term /
 * vd_total with the pairs per distance in x, y, z order; else (2D) the
 * Laplacian: centre, then per distance the x and y pairs. */
template <typename T, int R, int D, bool VD, int V, int HV, int TW>
__device__ __forceinline__ void
wsv_op(const wave_par<T> &P, T c0, const T (&xs)[(2 * HV + 1) * V],
       const T (&xb)[(2 * HV + 1) * V], const T *col, const T *colb,
       const strata__vec<T, V> (&q)[2 * R + 1],
       const strata__vec<T, V> (&qb)[2 * R + 1], T (&L)[V]) {
  typedef strata__vec<T, V> vec;
  constexpr int C = HV * V;
  if constexpr (VD) {
    T acc[V];
#pragma unroll
    for (int e = 0; e < V; e++) acc[e] = T(0);
#pragma unroll
    for (int m = 1; m <= R; m++) {
      const T w = P.lap[m];
      vec um, upv, bm, bp;
      if constexpr (D == 3) {
        um = lds_v<T, V>(col - m * TW);
        upv = lds_v<T, V>(col + m * TW);
        bm = lds_v<T, V>(colb - m * TW);
        bp = lds_v<T, V>(colb + m * TW);
      }
#pragma unroll
      for (int e = 0; e < V; e++) {
        const T ui = xs[C + e], bi = xb[C + e];
        T a = acc[e];
        a = strata__pt_vd_term(a, w, bi, xb[C + e - m], ui, xs[C + e - m]);
        a = strata__pt_vd_term(a, w, bi, xb[C + e + m], ui, xs[C + e + m]);
        if constexpr (D == 3) {
          a = strata__pt_vd_term(a, w, bi, bm.v[e], ui, um.v[e]);
          a = strata__pt_vd_term(a, w, bi, bp.v[e], ui, upv.v[e]);
        }
        a = strata__pt_vd_term(a, w, bi, qb[R - m].v[e], ui, q[R - m].v[e]);
        a = strata__pt_vd_term(a, w, bi, qb[R + m].v[e], ui, q[R + m].v[e]);
        acc[e] = a;
      }
    }
#pragma unroll
    for (int e = 0; e < V; e++) L[e] = strata__pt_vd_total(acc[e], xb[C + e]);
  } else {
    static_assert(D == 2, "the constant-density 3D update is k_wavetma's");
#pragma unroll
    for (int e = 0; e < V; e++) L[e] = c0 * xs[C + e];
#pragma unroll
    for (int m = 1; m <= R; m++) {
      const T w = P.lap[m];
#pragma unroll
      for (int e = 0; e < V; e++) {
        L[e] = strata__pt_term(L[e], w, xs[C + e - m] + xs[C + e + m]);
        L[e] = strata__pt_term(L[e], w, q[R - m].v[e] + q[R + m].v[e]);
      }
    }
  }
}

/* 2D: the CPML corrections of my V points in row j (psi of this step
 * already made by k_psi), added to L in the CPU's order: x sides, then y
 * sides, where the point lies in the slab (cpml_at; u's neighbours read
 * from global memory, as k_cpml_corr does), point by point: called only
 * for vectors that touch a slab, and small, so that the walk keeps its
 * registers; in the kernel rather than after it, so that the 2D step's
 * launches stay few. */
template <typename T, int R, int V>
__device__ __forceinline__ void wsv_cpml2(const wave_par<T> &P, int xv, int j,
                                          T (&L)[V]) {
#pragma unroll 1
  for (int ee = 0; ee < V; ee++) {
    const int i = xv + ee;
    if (i < P.s0[0] || i >= P.s1[0]) continue;
    T Le = L[0];
#pragma unroll
    for (int e = 1; e < V; e++)
      if (e == ee) Le = L[e];
    const T *uu = P.u + i + (long long)j * P.sy;
#pragma unroll 1
    for (int sl = 0; sl < 4; sl++) {
      const int ax = sl / 2;
      const wave_slab<T> &S = P.slab[sl];
      const int c = ax == 0 ? i : j;
      if (!S.psi || c < S.lo || c >= S.hi) continue;
      const long long su = ax == 0 ? 1 : P.sy;
      T um[R], upl[R];
#pragma unroll
      for (int r = 1; r <= R; r++) {
        um[r - 1] = uu[-r * su];
        upl[r - 1] = uu[r * su];
      }
      cpml_at<T, R>(S, ax, i, j, 0, uu[0], um, upl, P.pa[ax], P.pb[ax], P,
                    Le);
    }
#pragma unroll
    for (int e = 0; e < V; e++)
      if (e == ee) L[e] = Le;
  }
}

/* Whether the V points from xv (x) or row j (y) lie in some 2D CPML slab. */
template <typename T, int V>
__device__ __forceinline__ bool wsv_inslab(const wave_par<T> &P, int ax,
                                           int xv, int j) {
  bool in = false;
#pragma unroll
  for (int side = 0; side < 2; side++) {
    const wave_slab<T> &S = P.slab[2 * ax + side];
    if (ax == 0)
      in |= S.psi && xv + V > S.lo && xv < S.hi;
    else
      in |= S.psi && j >= S.lo && j < S.hi;
  }
  return in;
}

/* A copy of one vector (VB bytes: 16 or 8), zero-filled when !ok (g must
 * still be a valid address). */
template <int VB>
__device__ __forceinline__ void wsv_copy(void *s, const void *g, bool ok) {
  if constexpr (VB == 16)
    cp_async16(s, g, ok ? 16 : 0);
  else
    cp_async8(s, g, ok ? 8 : 0);
}

/* The halo vector of copy slot q: 3D as the streaming kernels'
 * (strata__halo_slot), 2D the HV vectors left and right of the row
 * segment. */
template <int R, int D, int V, int HV, int BX, int BY, int TW>
__device__ __forceinline__ void wsv_halo(int q, int x0, int y0, int nx,
                                         int ny, long long sy, long long *off,
                                         int *smo, bool *ok, bool *act) {
  if constexpr (D == 3) {
    strata__halo_slot<R, V, HV>(q, BX, BY, TW, x0, y0, nx, ny, sy, off, smo,
                                ok, act);
  } else {
    const int col = q < HV ? q : BX + q;
    const int x = x0 + (col - HV) * V;
    *act = q < 2 * HV;
    *ok = *act && x < nx + R;
    *off = x;
    *smo = col * V;
  }
}

/* B. The update of up over the stencil nodes.  3D: without the CPML terms,
 * which k_cpml_slab or k_cpml_corr add afterwards (B'); 2D: with them
 * (wsv_cpml2), psi made before by k_psi (A).  The walk of k_wavev
 * (wave_stream.cu): one barrier per plane; at step k the copies overwrite
 * the tiles and slots of plane k - 2, whose last readers finished before
 * the barrier of step k - 1.  rb: b = 1/rho (u's layout, ghosts set), read
 * only by the VD instances. */
template <typename T, int R, int D, bool VD, int BX, int BY, int VB>
__global__ void __launch_bounds__(BX *BY)
    k_wsv(const __grid_constant__ wave_par<T> P, const T *__restrict__ rb,
          const T c0, const int zchunk) {
  typedef wsv_geo<T, R, D, BX, BY, VB> G;
  constexpr int V = G::V, HV = G::HV, A = G::A, NS = G::NS, NP = G::NP;
  constexpr int NT = G::NT, TW = G::TW, TSZ = G::TSZ, RY = G::RY;
  constexpr int SL = G::SL;
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(16) unsigned char sraw[];
  T *sm = reinterpret_cast<T *>(sraw); /* NS u tiles */
  T *smb = sm + NS * TSZ;              /* NS b tiles (VD) */
  T *spu = smb + (VD ? NS * TSZ : 0);  /* NP x NT vectors of up */
  T *spc = spu + NP * NT * V;          /* NP x NT vectors of c2 (field) */

  const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + BX * ty;
  const int x0 = blockIdx.x * BX * V, y0 = D == 3 ? blockIdx.y * BY : 0;
  const int xv = x0 + tx * V, j = D == 3 ? y0 + ty : 0;
  const int W = D - 1; /* the walked axis */
  const int kz0 = P.s0[W] + (int)blockIdx.z * zchunk;
  const int kz1 = min(P.s1[W], kz0 + zchunk);
  if (kz0 >= kz1) return; /* block-uniform */
  const int nx = P.n[0], ny = D == 3 ? P.n[1] : 1;
  const long long sy = P.sy, ss = D == 3 ? P.sz : P.sy;
  const T *__restrict__ in = P.u;

  const bool cok = xv < nx + R && (D == 2 || j < ny + R);
  const long long coff = xv + (D == 3 ? (long long)j * sy : 0LL);
  const int csm = (RY + ty) * TW + (HV + tx) * V;
  const bool rowact = D == 2 || (j >= P.s0[1] && j < P.s1[1]);
  const bool uok = rowact && xv < P.s1[0] && xv + V > P.s0[0];
  const bool c2f = P.c2 != NULL;
  const int pslot = tid * V;

  long long hoff[SL];
  int hsm[SL];
  bool hok[SL], hact[SL];
#pragma unroll
  for (int s = 0; s < SL; s++)
    wsv_halo<R, D, V, HV, BX, BY, TW>(tid + s * NT, x0, y0, nx, ny, sy,
                                      &hoff[s], &hsm[s], &hok[s], &hact[s]);

  /* issue(p): the u (and b) tiles of plane p and my up / c2 vectors of
   * plane p - R; exactly one commit group per call */
  const int last = kz1 - 1 + R;
  auto issue = [&](int p) {
    if (p <= last) {
      const int t = ((p - kz0) % NS) * TSZ;
      const long long po = (long long)p * ss;
      wsv_copy<VB>(sm + t + csm, cok ? in + po + coff : in, cok);
      if (VD) wsv_copy<VB>(smb + t + csm, cok ? rb + po + coff : rb, cok);
#pragma unroll
      for (int s = 0; s < SL; s++)
        if (hact[s]) {
          wsv_copy<VB>(sm + t + hsm[s], hok[s] ? in + po + hoff[s] : in,
                       hok[s]);
          if (VD)
            wsv_copy<VB>(smb + t + hsm[s], hok[s] ? rb + po + hoff[s] : rb,
                         hok[s]);
        }
    }
    const int pu = p - R;
    if (uok && pu >= kz0 && pu < kz1) {
      const long long o = coff + (long long)pu * ss;
      const int sl = ((pu - kz0) % NP) * NT * V + pslot;
      wsv_copy<VB>(spu + sl, P.up + o, true);
      if (c2f) wsv_copy<VB>(spc + sl, P.c2 + o, true);
    }
    cp_async_commit();
  };

  /* the register queues: planes kz0-R .. kz0+R-1 straight from global */
  vec q[2 * R + 1], qb[2 * R + 1];
#pragma unroll
  for (int d = 0; d <= 2 * R; d++) {
    q[d] = zero_v<T, V>();
    qb[d] = zero_v<T, V>();
  }
#pragma unroll
  for (int d = 1; d <= 2 * R; d++) {
    const long long o = coff + (long long)(kz0 - R - 1 + d) * ss;
    if (cok) q[d] = ldg_v<T, V>(in + o);
    if (VD && cok) qb[d] = ldg_v<T, V>(rb + o);
  }
  for (int p = kz0; p < kz0 + R + A; p++) issue(p);

  /* the damping of my row (3D) and columns: the CPU's order, e = (y, then
   * z damping) + x damping, y being the walked axis in 2D */
  T ey = 0, ex[V];
#pragma unroll
  for (int e = 0; e < V; e++)
    ex[e] = P.any_damp && P.damp[0] && xv + e < nx ? (T)P.damp[0][xv + e]
                                                   : T(0);
  if (D == 3 && P.any_damp && P.damp[1]) ey = (T)P.damp[1][j < ny ? j : ny - 1];
  const bool xslab = D == 2 && wsv_inslab<T, V>(P, 0, xv, 0);

  for (int k = kz0; k < kz1; k++) {
    issue(k + R + A);
    cp_async_wait<A>();
    __syncthreads();
    const int tk = ((k - kz0) % NS) * TSZ, tq = ((k + R - kz0) % NS) * TSZ;
#pragma unroll
    for (int d = 0; d < 2 * R; d++) {
      q[d] = q[d + 1];
      if (VD) qb[d] = qb[d + 1];
    }
    q[2 * R] = lds_v<T, V>(sm + tq + csm);
    if (VD) qb[2 * R] = lds_v<T, V>(smb + tq + csm);
    if (!uok) continue; /* no barrier below: safe */

    T xs[(2 * HV + 1) * V], xb[(2 * HV + 1) * V], L[V];
    const int rowp = tk + (RY + ty) * TW + tx * V;
    strata__xwin<T, V, HV>(sm + rowp, q[R], xs);
    if (VD) strata__xwin<T, V, HV>(smb + rowp, qb[R], xb);
    wsv_op<T, R, D, VD, V, HV, TW>(P, c0, xs, xb, sm + tk + csm,
                                   smb + tk + csm, q, qb, L);

    if constexpr (D == 2) {
      if (xslab || wsv_inslab<T, V>(P, 1, xv, k))
        wsv_cpml2<T, R, V>(P, xv, k, L);
    }

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
    if (P.any_damp && P.damp[W]) erow += (T)P.damp[W][k];
    const vec res = wave_update<T, V>(P, q[R], upv, c2v, L, erow, ex);
    T *dst = P.up + coff + (long long)k * ss;
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

/* Launches k_wsv with a BX x BY block; *used = false (and nothing
 * launched) when the grid or the shared memory does not fit. */
template <typename T, int R, int D, bool VD, int BX, int BY, int VB>
strata_status launch_wsv_shape(strata_context *ctx, strata__cuda_state *st,
                               const wave_par<T> &P, const T *rb,
                               bool *used) {
  typedef wsv_geo<T, R, D, BX, BY, VB> G;
  *used = false;
  const size_t bytes = G::bytes(P.c2 != NULL, VD);
  if (bytes > st->prop.sharedMemPerBlockOptin) return STRATA_OK;
  const long long gx = ((P.n[0] + G::V - 1) / G::V + BX - 1) / BX;
  const long long gy = D == 3 ? (P.n[1] + BY - 1) / BY : 1;
  if (gy > 65535 || gx > 0x7fffffffLL) return STRATA_OK;
  const int W = D - 1;
  const int nzs = P.s1[W] - P.s0[W];
  auto kern = k_wsv<T, R, D, VD, BX, BY, VB>;
  STRATA__CU(ctx, cudaFuncSetAttribute(
                      kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                      (int)bytes));
  int per_sm = 0;
  STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                      &per_sm, kern, BX * BY, bytes));
  if (per_sm < 1) return STRATA_OK;
  *used = true;
  if (nzs <= 0 || P.s1[0] <= P.s0[0] || P.s1[1] <= P.s0[1]) return STRATA_OK;
  const int chunks = strata__cu_zchunks((int)(gx * gy), per_sm,
                                        st->prop.multiProcessorCount, nzs,
                                        2 * R);
  const int zchunk = (nzs + chunks - 1) / chunks;
  const T c0 = strata__pt_lap_centre(D, P.lap[0]);
  dim3 grid((unsigned)gx, (unsigned)gy,
            (unsigned)((nzs + zchunk - 1) / zchunk));
  kern<<<grid, dim3(BX, BY, 1), bytes, st->stream>>>(P, rb, c0, zchunk);
  STRATA__LAUNCHED(ctx, "wave step: streamed density / 2D update launch");
  return STRATA_OK;
}

/* The block shape per case.  Two register queues (u and b) and two rings
 * of tiles cost a variable-density walk twice the registers and shared
 * memory: its vectors are 8 bytes, so that 3D blocks of 32 x 8 threads fit
 * two on a multiprocessor (one with 16-byte vectors) and 2D blocks keep
 * about 80 registers.  2D: 128 threads, 16-byte vectors with constant
 * density (the measured best of 64 and 128: docs/performance.md).  For
 * measurements, radius 4 also has the shapes of the tuning switch wave_svb
 * (docs/tuning.md): alt (the other vector width), tall (3D: 32 x 16
 * threads) and narrow (2D: 64 threads). */
template <typename T, int R, int D, bool VD>
strata_status launch_wsv_r(strata_context *ctx, strata__cuda_state *st,
                           const wave_par<T> &P, const T *rb, bool *used) {
  constexpr int VB = D == 3 || VD ? 8 : 16, VO = 24 - VB;
  if constexpr (R == 4) {
    char buf[16];
    const char *v = strata__tuning(ctx, "wave_svb", buf, sizeof buf);
    const int alt = v && !strcmp(v, "alt"), narrow = v && !strcmp(v, "narrow"),
              tall = v && !strcmp(v, "tall");
    if constexpr (D == 3) {
      if (alt)
        return launch_wsv_shape<T, R, D, VD, 32, 8, VO>(ctx, st, P, rb, used);
      if (tall)
        return launch_wsv_shape<T, R, D, VD, 32, 16, VB>(ctx, st, P, rb, used);
    } else {
      if (alt)
        return launch_wsv_shape<T, R, D, VD, 128, 1, VO>(ctx, st, P, rb, used);
      if (narrow)
        return launch_wsv_shape<T, R, D, VD, 64, 1, VB>(ctx, st, P, rb, used);
    }
  }
  if constexpr (D == 3)
    return launch_wsv_shape<T, R, D, VD, 32, 8, VB>(ctx, st, P, rb, used);
  else
    return launch_wsv_shape<T, R, D, VD, 128, 1, VB>(ctx, st, P, rb, used);
}

template <typename T, int D, bool VD>
strata_status launch_wsv_d(strata_context *ctx, strata__cuda_state *st,
                           const wave_par<T> &P, const T *rb, int R,
                           bool *used) {
  switch (R) {
  case 1: return launch_wsv_r<T, 1, D, VD>(ctx, st, P, rb, used);
  case 2: return launch_wsv_r<T, 2, D, VD>(ctx, st, P, rb, used);
  case 3: return launch_wsv_r<T, 3, D, VD>(ctx, st, P, rb, used);
  case 4: return launch_wsv_r<T, 4, D, VD>(ctx, st, P, rb, used);
  default: *used = false; return STRATA_OK;
  }
}

} // namespace

namespace strata_cuwave {

template <typename T>
strata_status launch_sv(strata_context *ctx, strata__cuda_state *st,
                        const wave_par<T> &P, const T *rb, int D, int R,
                        bool *used) {
  *used = false;
  if (sv_tuning_is(ctx, "wave_kernel", "scalar")) return STRATA_OK;
  if (D == 3)
    return rb ? launch_wsv_d<T, 3, true>(ctx, st, P, rb, R, used)
              : STRATA_OK;
  if (rb) return launch_wsv_d<T, 2, true>(ctx, st, P, rb, R, used);
  return launch_wsv_d<T, 2, false>(ctx, st, P, rb, R, used);
}

template strata_status launch_sv<float>(strata_context *, strata__cuda_state *,
                                        const wave_par<float> &,
                                        const float *, int, int, bool *);
template strata_status launch_sv<double>(strata_context *,
                                         strata__cuda_state *,
                                         const wave_par<double> &,
                                         const double *, int, int, bool *);

} // namespace strata_cuwave
