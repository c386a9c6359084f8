/* Two acoustic wave steps in one sweep: temporal blocking of the
 * second-order update u+ = 2u - u- + c2 L u: fewer bytes moved per step
 * where the radius-4 stencil allows it.  The contract
 * is the backend's wave_pair entry (src/core/internal.h).
 *
 * One block owns an output tile of BXO vectors x BYO rows of an xy plane
 * and walks a chunk [kz0, kz1) of z.  Each thread owns one 16-byte vector
 * column of the level-1 region: the output tile with a ring of HV vectors
 * along x and R rows along y.  At iteration k:
 *   - level 1: u^{n+1} at plane k over the whole level-1 region, from u^n
 *     (its z column in a register queue, the plane's xy tile with a ring of
 *     2R in shared memory, copied by cp.async A planes ahead) and u^{n-1}
 *     (the thread's own vector, copied ahead too); the ring points are the
 *     neighbours' tiles, recomputed here (about 1.7x the level-1 work of
 *     the tile for R = 4 with 64 x 16 fp32 tiles).  The plane goes to a
 *     ring of 2R + 2 level-1 planes in shared memory; the tile's own points
 *     go to o1.
 *   - level 2: u^{n+2} at plane m = k - R - 1 over the tile, from the
 *     level-1 planes m - R .. m + R (shared memory: x, y and z neighbours)
 *     and u^n at m (the oldest entry of the queue), stored to o2.
 * Lagging level 2 by R + 1 planes, not R, leaves one barrier per plane:
 * every level-1 plane level 2 reads was written an iteration earlier.
 *
 * Bytes: u^n and u^{n-1} read once and o1, o2 written once per two steps
 * (16 B a point in fp32 against the single step's 12 B a step), the rings'
 * overlapping reads from L2.  The outputs are new buffers: the ring points
 * of a tile read u^n and u^{n-1} where the neighbouring tiles store, so
 * nothing is updated in place.
 *
 * Faces: ZERO only (every face a sponge or zero: the values outside the
 * grid are 0 at both levels), with the sponge's damping; point sources at
 * both levels (every block whose level-1 region holds a source adds it, so
 * the recomputed ring values are the owner's bit for bit).  Each point
 * update is the single-step kernels' expression term for term (centre,
 * then per distance the x, y and z pairs; the sponge form where e != 0),
 * so two fused steps equal two single steps to rounding. */
#include "cuda_device.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

template <typename T> struct pair_par {
  const T *u, *um;        /* u^n, u^{n-1}: interior point (0,0,0) */
  T *o1, *o2;             /* u^{n+1}, u^{n+2} */
  const T *c2;            /* per point (same layout), or NULL */
  const double *c2_line;  /* per z index when c2 == NULL */
  const double *damp[3];  /* sponge e per index, or NULL */
  long long sy, sz;       /* strides shared by every field */
  int n[3];
  int zchunk;
  int any_damp;
  int nsrc;
  int src[8][3];
  T val1[8], val2[8];     /* sources at step n+1, n+2 */
  T lap[STRATA_MAX_RADIUS + 1];
};

template <typename T, int R> struct pair_geo {
  static constexpr int V = 16 / (int)sizeof(T);
  static constexpr int HV = (R + V - 1) / V; /* x ring in vectors */
  static constexpr int BXO = 16, BYO = 16;   /* output tile: vectors, rows */
  static constexpr int BX = BXO + 2 * HV, BY = BYO + 2 * R; /* level 1 */
  static constexpr int NT = BX * BY;
  static constexpr int UWV = BXO + 4 * HV;   /* u tile: vectors per row */
  static constexpr int UW = UWV * V, UH = BYO + 4 * R, USZ = UW * UH;
  static constexpr int LW = BX * V, LSZ = LW * BY; /* a level-1 plane */
  static constexpr int A = 2;                /* planes copied ahead */
  static constexpr int NS = R + 2 + A;       /* u tiles */
  static constexpr int NL = 2 * R + 2;       /* level-1 planes */
  static constexpr int NP = A + 2;           /* u^{n-1} slots per thread */
  static constexpr int UV = USZ / V;         /* vectors per u tile */
  static constexpr int SLOTS = (UV + NT - 1) / NT;
  static constexpr int NQ = 2 * R + 2;       /* u^n queue: k-R-1 .. k+R */
  static size_t bytes() {
    return ((size_t)NS * USZ + (size_t)NL * LSZ + (size_t)NP * NT * V) *
           sizeof(T);
  }
};

/* The sponge's division as the single-step kernels do it (fast in fp32,
 * correctly rounded in fp64). */
__device__ __forceinline__ double pair_div(double a, double b) { return a / b; }
__device__ __forceinline__ float pair_div(float a, float b) {
  return __fdividef(a, b);
}

/* The update of one vector: 2c - p + c2 L, or with the sponge
 * (2c - (1 - e) p + c2 L) / (1 + e) where e != 0: the single-step
 * kernels' expression (wave_update in wave/wave_internal.cuh), kept in this form
 * here: the pair kernel built on wave_update's (one branch on the sponge,
 * then one per element) ran slower
 * (docs/performance.md#temporal-blocking-of-the-wave-step). */
template <typename T, int V>
__device__ __forceinline__ strata__vec<T, V>
pair_update(bool damp, const strata__vec<T, V> &c, const strata__vec<T, V> &p,
            const strata__vec<T, V> &c2v, const T (&L)[V], T erow,
            const T (&ex)[V]) {
  strata__vec<T, V> res;
#pragma unroll
  for (int e = 0; e < V; e++) {
    const T ee = erow + ex[e];
    if (damp && ee != (T)0)
      res.v[e] = pair_div((T)2 * c.v[e] - ((T)1 - ee) * p.v[e] +
                              c2v.v[e] * L[e],
                          (T)1 + ee);
    else
      res.v[e] = (T)2 * c.v[e] - p.v[e] + c2v.v[e] * L[e];
  }
  return res;
}

/* k_wave_pair's u tile copy slots: vector t = tid + s NT of the tile (x
 * from x0 - 2HV V, y from y0 - 2R), active when t < UV; vectors outside
 * the grid are zero-filled (!hok) */
template <typename T, int R>
__device__ __forceinline__ void
pair_slots(int tid, int x0, int y0, int nx, int ny, long long sy,
           long long (&hoff)[pair_geo<T, R>::SLOTS],
           int (&hsm)[pair_geo<T, R>::SLOTS],
           bool (&hok)[pair_geo<T, R>::SLOTS],
           bool (&hact)[pair_geo<T, R>::SLOTS]) {
  typedef pair_geo<T, R> G;
  constexpr int V = G::V, HV = G::HV, NT = G::NT, UW = G::UW, UV = G::UV;
#pragma unroll
  for (int s = 0; s < G::SLOTS; s++) {
    const int t = tid + s * NT;
    hact[s] = t < UV;
    const int lx = t % G::UWV, ly = t / G::UWV;
    const int gx = x0 - 2 * HV * V + lx * V, gy = y0 - 2 * R + ly;
    hok[s] = hact[s] && gx >= 0 && gx < nx && gy >= 0 && gy < ny;
    hoff[s] = hok[s] ? gx + (long long)gy * sy : 0;
    hsm[s] = ly * UW + lx * V;
  }
}

/* k_wave_pair's damping of my row (ey) and columns (ex) when my vector
 * (xv, j) is in the grid, and the mask of the sources in my column */
template <typename T, int V>
__device__ __forceinline__ unsigned pair_damp_src(const pair_par<T> &P,
                                                  bool in, int xv, int j,
                                                  int nx, T &ey, T (&ex)[V]) {
  ey = 0;
#pragma unroll
  for (int e = 0; e < V; e++) ex[e] = 0;
  if (P.any_damp && in) {
    if (P.damp[1]) ey = (T)P.damp[1][j];
    if (P.damp[0])
#pragma unroll
      for (int e = 0; e < V; e++)
        if (xv + e < nx) ex[e] = (T)P.damp[0][xv + e];
  }
  unsigned smask = 0;
  for (int s = 0; s < P.nsrc; s++)
    if (in && P.src[s][1] == j && P.src[s][0] >= xv && P.src[s][0] < xv + V)
      smask |= 1u << s;
  return smask;
}

/* k_wave_pair's queue before its first push: q[d] (d >= 1) the vector of
 * plane p0 + d in my column u, zeros outside the grid or when !in */
template <typename T, int V, int NQ>
__device__ __forceinline__ void pair_queue_start(const T *u, long long sz,
                                                 int p0, int nz, bool in,
                                                 strata__vec<T, V> (&q)[NQ]) {
#pragma unroll
  for (int d = 1; d < NQ; d++) {
    const int pp = p0 + d;
    q[d] = in && pp >= 0 && pp < nz ? ldg_v<T, V>(u + (long long)pp * sz)
                                    : zero_v<T, V>();
  }
}

/* k_wave_pair's level 2 at plane m: the Laplacian of the level-1 planes
 * m - R .. m + R in the ring sl, then finish with p (u at plane m, the
 * level before level 1) and the sources of level 2 */
template <typename T, int R, typename F>
__device__ __forceinline__ void
pair_level2(const pair_par<T> &P, T c0, const T *sl, int m, int kb, int lsm,
            int tx, int ty, long long coff, long long sz,
            const strata__vec<T, pair_geo<T, R>::V> &p, int nval, F &finish) {
  typedef pair_geo<T, R> G;
  constexpr int V = G::V, HV = G::HV, LW = G::LW, LSZ = G::LSZ, NL = G::NL;
  typedef strata__vec<T, V> vec;
  const T *lm = sl + ((m - kb) % NL) * LSZ;
  const vec c = lds_v<T, V>(lm + lsm);
  vec zm[R], zp[R];
#pragma unroll
  for (int r = 1; r <= R; r++) {
    zm[r - 1] = lds_v<T, V>(sl + ((m - r - kb) % NL) * LSZ + lsm);
    zp[r - 1] = lds_v<T, V>(sl + ((m + r - kb) % NL) * LSZ + lsm);
  }
  T xs[(2 * HV + 1) * V], L[V];
  strata__wave_lap<T, R, V, HV>(P.lap, c0, c, zm, zp,
                                lm + ty * LW + (tx - HV) * V, lm + lsm, LW,
                                xs, L);
  store_masked<T, V>(P.o2 + coff + (long long)m * sz,
                     finish(c, p, L, m, P.val2), nval);
}

template <typename T, int R>
__global__ void __launch_bounds__(pair_geo<T, R>::NT, 1)
    k_wave_pair(const __grid_constant__ pair_par<T> P, const T c0) {
  typedef pair_geo<T, R> G;
  constexpr int V = G::V, HV = G::HV, BX = G::BX, BXO = G::BXO,
                BYO = G::BYO, NT = G::NT, UW = G::UW, USZ = G::USZ,
                LW = G::LW, LSZ = G::LSZ, A = G::A, NS = G::NS, NL = G::NL,
                NP = G::NP, SLOTS = G::SLOTS, NQ = G::NQ;
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(16) unsigned char sraw[];
  T *su = reinterpret_cast<T *>(sraw); /* NS u tiles */
  T *sl = su + NS * USZ;               /* NL level-1 planes */
  T *sp = sl + NL * LSZ;               /* NP x NT vectors of u^{n-1} */

  const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + BX * ty;
  const int x0 = blockIdx.x * BXO * V, y0 = blockIdx.y * BYO;
  const int kz0 = (int)blockIdx.z * P.zchunk;
  const int kz1 = min(P.n[2], kz0 + P.zchunk);
  if (kz0 >= kz1) return; /* block-uniform */
  const int nx = P.n[0], ny = P.n[1], nz = P.n[2];
  const long long sy = P.sy, sz = P.sz;
  /* my level-1 vector */
  const int xv = x0 + (tx - HV) * V, j = y0 + ty - R;
  const bool in = xv >= 0 && xv < nx && j >= 0 && j < ny;
  const bool outp = in && tx >= HV && tx < HV + BXO && ty >= R &&
                    ty < R + BYO;
  const int nval = nx - xv; /* my elements inside the grid (when in) */
  const long long coff = xv + (long long)j * sy;
  const int csm = (R + ty) * UW + (HV + tx) * V; /* my vector, u tile */
  const int lsm = ty * LW + tx * V;              /* my vector, level 1 */

  /* the u tile's copy slots */
  long long hoff[SLOTS];
  int hsm[SLOTS];
  bool hok[SLOTS], hact[SLOTS];
  pair_slots<T, R>(tid, x0, y0, nx, ny, sy, hoff, hsm, hok, hact);

  const int kb = kz0 - R;     /* first level-1 plane */
  const int ke = kz1 + R;     /* one past the last level-1 plane */
  const int last = ke - 1 + R; /* last u plane */
  /* issue(p): the u tile of plane p and my u^{n-1} vector of level-1 plane
   * p - R; exactly one commit group per call */
  auto issue = [&](int p) {
    if (p <= last) {
      T *sb = su + ((p - kb) % NS) * USZ;
      const bool pz = p >= 0 && p < nz;
#pragma unroll
      for (int s = 0; s < SLOTS; s++)
        if (hact[s]) {
          const bool ok = pz && hok[s];
          cp_async16(sb + hsm[s], ok ? P.u + hoff[s] + (long long)p * sz : P.u,
                     ok ? 16 : 0);
        }
    }
    const int pu = p - R;
    if (in && pu >= kb && pu >= 0 && pu < nz && pu < ke)
      cp_async16(sp + ((pu - kb) % NP) * NT * V + tid * V,
                 P.um + coff + (long long)pu * sz, 16);
    cp_async_commit();
  };

  /* the queue: after iteration k's push, q[d] is plane k - R - 1 + d */
  vec q[NQ];
  pair_queue_start<T, V, NQ>(P.u + coff, sz, kb - R - 2, nz, in, q);
  for (int p = kb; p < kb + R + A; p++) issue(p);

  /* damping of my row and columns, and the sources in my column */
  T ey, ex[V];
  const unsigned smask = pair_damp_src<T, V>(P, in, xv, j, nx, ey, ex);
  const bool c2f = P.c2 != NULL;
  /* a level's update of my vector at plane pl from its centre c, its
   * previous value p and L, with the sources of that plane (vals) */
  auto finish = [&](const vec &c, const vec &p, const T (&L)[V], int pl,
                    const T *vals) -> vec {
    const long long o = coff + (long long)pl * sz;
    vec c2v;
    if (c2f) {
      c2v = ldg_v<T, V>(P.c2 + o);
    } else {
      const T cl = (T)P.c2_line[pl];
#pragma unroll
      for (int e = 0; e < V; e++) c2v.v[e] = cl;
    }
    T erow = ey;
    if (P.any_damp && P.damp[2]) erow += (T)P.damp[2][pl];
    vec r = pair_update<T, V>(P.any_damp, c, p, c2v, L, erow, ex);
    if (smask)
      for (int s = 0; s < P.nsrc; s++)
        if ((smask >> s & 1) && P.src[s][2] == pl)
#pragma unroll
          for (int e = 0; e < V; e++)
            if (xv + e == P.src[s][0]) r.v[e] += vals[s];
    return r;
  };

  for (int k = kb; k <= ke; k++) {
    issue(k + R + A);
    cp_async_wait<A>();
    __syncthreads();
    const T *tk = su + ((k - kb) % NS) * USZ;
#pragma unroll
    for (int d = 0; d < NQ - 1; d++) q[d] = q[d + 1];
    q[NQ - 1] = lds_v<T, V>(su + ((k + R - kb) % NS) * USZ + csm);

    /* level 1 at plane k */
    if (k < ke) {
      vec v1 = zero_v<T, V>();
      if (in && k >= 0 && k < nz) {
        vec zm[R], zp[R];
#pragma unroll
        for (int m = 1; m <= R; m++) {
          zm[m - 1] = q[R + 1 - m];
          zp[m - 1] = q[R + 1 + m];
        }
        T xs[(2 * HV + 1) * V], L[V];
        strata__wave_lap<T, R, V, HV>(P.lap, c0, q[R + 1], zm, zp,
                                      tk + (R + ty) * UW + tx * V, tk + csm,
                                      UW, xs, L);
        const vec pv = lds_v<T, V>(sp + ((k - kb) % NP) * NT * V + tid * V);
        v1 = finish(q[R + 1], pv, L, k, P.val1);
#pragma unroll
        for (int e = 0; e < V; e++)
          if (e >= nval) v1.v[e] = T(0);
        if (outp && k >= kz0 && k < kz1)
          store_masked<T, V>(P.o1 + coff + (long long)k * sz, v1, nval);
      }
      sts_v<T, V>(sl + ((k - kb) % NL) * LSZ + lsm, v1);
    }

    /* level 2 at plane m (its level-1 planes m - R .. m + R were written
     * before this iteration's barrier) */
    const int m = k - R - 1;
    if (outp && m >= kz0 && m < kz1)
      pair_level2<T, R>(P, c0, sl, m, kb, lsm, tx, ty, coff, sz, q[0], nval,
                        finish);
  }
  cp_async_wait<0>();
}

template <typename T, int R>
strata_status launch_pair(strata_context *ctx, strata__cuda_state *st,
                          const pair_par<T> &P0, T c0, int *used) {
  typedef pair_geo<T, R> G;
  const size_t bytes = G::bytes();
  if (bytes > st->prop.sharedMemPerBlockOptin) return STRATA_OK;
  STRATA__CU(ctx, cudaFuncSetAttribute(
                      k_wave_pair<T, R>,
                      cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  int occ = 0;
  STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                      &occ, k_wave_pair<T, R>, G::NT, bytes));
  if (occ < 1) return STRATA_OK;
  pair_par<T> P = P0;
  const long long gx = (P.n[0] + G::BXO * G::V - 1) / (G::BXO * G::V);
  const long long gy = (P.n[1] + G::BYO - 1) / G::BYO;
  if (gx > 0x7fffffff || gy > 65535) return STRATA_OK;
  int ch = strata__cu_zchunks((int)(gx * gy), occ,
                              st->prop.multiProcessorCount, P.n[2],
                              2 * R + 1);
  const long fc = strata__tuning_long(ctx, "wave_pair_chunks", 0);
  if (fc > 0) ch = fc < 65535 ? (int)fc : 65535;
  if (ch < 1) ch = 1;
  if (ch > P.n[2]) ch = P.n[2];
  if (ch > 65535) ch = 65535;
  P.zchunk = (P.n[2] + ch - 1) / ch;
  ch = (P.n[2] + P.zchunk - 1) / P.zchunk;
  const dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)ch);
  const dim3 block(G::BX, G::BY);
  k_wave_pair<T, R><<<grid, block, bytes, st->stream>>>(P, c0);
  STRATA__LAUNCHED(ctx, "wave pair kernel launch");
  *used = 1;
  return STRATA_OK;
}

template <typename T>
strata_status pair_typed(const strata__wave_args *a, const double *val2,
                         strata_field *o1, strata_field *o2, int *used) {
  strata_context *ctx = a->u->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  pair_par<T> P;
  memset(&P, 0, sizeof P);
  P.u = (const T *)a->u->data + a->u->L.origin;
  P.um = (const T *)a->up->data + a->up->L.origin;
  P.o1 = (T *)o1->data + o1->L.origin;
  P.o2 = (T *)o2->data + o2->L.origin;
  P.c2 = a->c2 ? (const T *)a->c2->data + a->c2->L.origin : (const T *)NULL;
  P.c2_line = a->c2_line;
  P.sy = (long long)a->u->L.pitch_x;
  P.sz = P.sy * (long long)a->u->L.pitch_y;
  for (int ax = 0; ax < 3; ax++) {
    P.n[ax] = (int)a->u->d.n[ax];
    P.damp[ax] = a->damp[ax];
    if (P.damp[ax]) P.any_damp = 1;
  }
  P.nsrc = a->nsrc;
  for (int q = 0; q < a->nsrc; q++) {
    for (int ax = 0; ax < 3; ax++) P.src[q][ax] = (int)a->src[q][ax];
    P.val1[q] = (T)a->src_val[q];
    P.val2[q] = (T)val2[q];
  }
  const int R = a->radius;
  for (int k = 0; k <= STRATA_MAX_RADIUS; k++)
    P.lap[k] = k <= R ? (T)a->lap[k] : T(0);
  const T c0 = P.lap[0] * (T)3;
  switch (R) {
  case 1: return launch_pair<T, 1>(ctx, st, P, c0, used);
  case 2: return launch_pair<T, 2>(ctx, st, P, c0, used);
  case 3: return launch_pair<T, 3>(ctx, st, P, c0, used);
  default: return launch_pair<T, 4>(ctx, st, P, c0, used);
  }
}

bool same_layout(const strata_field *a, const strata_field *b) {
  return a->L.pitch_x == b->L.pitch_x && a->L.pitch_y == b->L.pitch_y &&
         a->L.origin == b->L.origin && a->d.precision == b->d.precision;
}

} // namespace

strata_status strata__cuda_wave_pair(const strata__wave_args *a,
                                     const double *val2, strata_field *o1,
                                     strata_field *o2, int *used) {
  *used = 0;
  strata_context *ctx = a->u->ctx;
  /* the cases the kernel takes; anything else is stepped one at a time */
  if (a->dims != 3 || a->radius < 1 || a->radius > STRATA_MAX_RADIUS ||
      a->nsrc < 0 || a->nsrc > 8 || (!a->c2 && !a->c2_line))
    return STRATA_OK;
  for (int f = 0; f < 6; f++)
    if (a->face[f] != STRATA__WF_ZERO) return STRATA_OK;
  for (int ax = 0; ax < 3; ax++)
    if (a->slab[ax][0].psi || a->slab[ax][1].psi) return STRATA_OK;
  if (!same_layout(a->u, a->up) || !same_layout(a->u, o1) ||
      !same_layout(a->u, o2) || (a->c2 && !same_layout(a->u, a->c2)))
    return STRATA_OK;
  for (int ax = 0; ax < 3; ax++)
    if (a->u->d.n[ax] < 1 || a->u->d.n[ax] > ((size_t)1 << 30))
      return STRATA_OK;
  STRATA__CU(ctx, cudaSetDevice(strata__cu_state(ctx)->device));
  if (a->u->d.precision == STRATA_F32)
    return pair_typed<float>(a, val2, o1, o2, used);
  return pair_typed<double>(a, val2, o1, o2, used);
}
