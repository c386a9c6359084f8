/* B of the wave step (3D, devices without tensor copies, or fields they
 * do not take): the streamed update k_wavev.  See wave_step.cu. */
#include "wave/wave_internal.cuh"

namespace {

/* B (3D). The update of up over the stencil nodes, streamed in the style of
 * streamcp (src/cuda/seeds/stream.cu).  A kVX x kVY block owns an xy tile of
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

/* k_wavev's CPML terms of my vector at (xv, j, k), added to L: x sides,
 * then y, then z, where the point is in [lo, hi); the x neighbours from
 * the window xs, the y ones from the tile (colp, rows TW apart), the z
 * ones from the queue q (planes k - R .. k + R) */
template <typename T, int R, int V, int HV, int TW>
__device__ __forceinline__ void
wavev_cpml(const wave_par<T> &P, const T (&xs)[(2 * HV + 1) * V],
           const T *colp, const strata__vec<T, V> (&q)[2 * R + 1], int xv,
           int j, int k, T (&L)[V]) {
#pragma unroll
  for (int ax = 0; ax < 3; ax++) {
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
}

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

    /* CPML (CP; else k_cpml_corr adds it afterwards) */
    if constexpr (CP)
      wavev_cpml<T, R, V, HV, TW>(P, xs, colp, q, xv, j, k, L);

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

} // namespace

namespace strata_cuwave {

template <typename T>
strata_status launch_stream(strata_context *ctx, strata__cuda_state *st,
                            const wave_par<T> &P, int R, bool *used) {
  switch (R) {
  case 1: return launch_wavev<T, 1>(ctx, st, P, used);
  case 2: return launch_wavev<T, 2>(ctx, st, P, used);
  case 3: return launch_wavev<T, 3>(ctx, st, P, used);
  case 4: return launch_wavev<T, 4>(ctx, st, P, used);
  default: *used = false; return STRATA_OK;
  }
}

template strata_status launch_stream<float>(strata_context *,
                                            strata__cuda_state *,
                                            const wave_par<float> &, int,
                                            bool *);
template strata_status launch_stream<double>(strata_context *,
                                             strata__cuda_state *,
                                             const wave_par<double> &, int,
                                             bool *);

} // namespace strata_cuwave
