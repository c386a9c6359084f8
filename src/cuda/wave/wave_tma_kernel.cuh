/* k_wavetma, the wave step's update fed by tensor copies (see wave_tma.cuh
 * and wave_step.cu).  Included by wave_tma_launch.cuh only: a kernel must be in the
 * translation unit that launches it. */
#ifndef STRATA_CUDA_WAVE_TMA_KERNEL_CUH
#define STRATA_CUDA_WAVE_TMA_KERNEL_CUH

#include "wave/wave_tma.cuh"

namespace {

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
  if (c.f & 1) psi = strata__pt_cpml_psi(c.b, c.a, pb[lane - R], d);
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
    const T z = strata__pt_cpml_zeta(c.b, c.a, zb[lane - R], d2, dpsi);
    S.zeta[c.o] = z;
    corr = dpsi + z;
  }
#pragma unroll
  for (int e = 0; e < V; e++) {
    const T v = __shfl_sync(0xffffffffu, corr, (c.src + e) & 31);
    xc[e] = (unsigned)(c.src + e) < 32u ? v : T(0);
  }
}

/* k_wavetma's copying thread: every plane's u tile into the ring, and for
 * the chunk's own planes up (and c2) and the CPML boxes of the tile (x
 * slabs: wt_cpml, y slabs: wt_cpmly). */
template <typename T, int R, bool C2F, bool CX, int CY, int NS, int V, int HV>
__device__ __forceinline__ void
wt_copy(const CUtensorMap &tu, const CUtensorMap &tue, const CUtensorMap &tp,
        const CUtensorMap &tc, const wt_cpml &cx, const wt_cpmly &cy, T *sm,
        int SS, int SA, int SY, int USZ, int PSZ, uint64_t *full,
        uint64_t *empty, int kz0, int kz1, int x0, int y0, int BY, int TW,
        int TH, int cxs, int3 ou, int3 op, int3 oc) {
  constexpr int BX = kWtX;
  const int last = kz1 - 1 + R; /* the last u tile needed */
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
}

/* A lane's part of the x CPML slab in its row (wt_lane), for the tile's
 * side cxs (0: none). */
template <typename T, int R, int V, int HV, bool CX>
__device__ __forceinline__ wt_lane<T>
wt_lane_init(const wave_par<T> &P, int cxs, int lane, int x0, int xv, int j,
             int kz0, bool rowact) {
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
  return cxl;
}

/* My row's part of the y CPML slab (CY): f bit 0 my row is in the slab,
 * bit 1 its psi changes (a != 0, as the CPU skips rows with a == 0), bit 2
 * it is a stencil-node row (zeta and the correction); x / m: which of my V
 * columns exist (psi) / are stencil nodes (zeta); a, b the profile; o my
 * vector's offset in psi and zeta at plane k. */
template <typename T> struct wt_rowy {
  int f;
  unsigned x, m;
  T a, b;
  long long o;
};

template <typename T, int V, int CY>
__device__ __forceinline__ wt_rowy<T>
wt_rowy_init(const wave_par<T> &P, const wt_cpmly &cy, int xv, int j, int nx,
             int kz0, bool rowact) {
  wt_rowy<T> r;
  r.f = 0;
  r.x = r.m = 0;
  r.a = r.b = T(0);
  r.o = 0;
  if constexpr (CY) {
    const wave_slab<T> &S = P.slab[cy.sl[blockIdx.y]];
    if (j >= S.lo && j < S.hi) {
      r.f = 1 | (P.pa[1][j] != 0.0 ? 2 : 0) | (rowact ? 4 : 0);
      r.a = (T)P.pa[1][j];
      r.b = (T)P.pb[1][j];
    }
#pragma unroll
    for (int e = 0; e < V; e++) {
      if (xv + e < nx) r.x |= 1u << e;
      if (xv + e >= P.s0[0] && xv + e < P.s1[0]) r.m |= 1u << e;
    }
    r.o = xv + (long long)(j - S.origin) * S.psy + (long long)kz0 * S.psz;
  }
  return r;
}

/* One plane of the y CPML slab in my row (CY, the block's consumers): the
 * new psi of every slab row into the slot sb, the consumers meet, then D1
 * psi along y and zeta; yc (added to L after the x terms) is 0 outside the
 * slab.  uc: my vector in the u tile, cu its value. */
template <typename T, int R, int V>
__device__ __forceinline__ void
wt_cpml_y(const wave_par<T> &P, const wt_cpmly &cy, wt_rowy<T> &r, T *sb,
          int SY, const T *uc, const strata__vec<T, V> cu, int TW, int tx,
          int ty, int nthr, T (&yc)[V]) {
  typedef strata__vec<T, V> vec;
  constexpr int BX = kWtX;
  const wave_slab<T> &S = P.slab[cy.sl[blockIdx.y]];
  constexpr int PW = BX * V; /* the psi and zeta areas' row pitch */
  T *pr = sb + SY + (R + ty) * PW + tx * V;
  const T *zr = sb + SY + cy.apsz + ty * PW + tx * V;
  T d2[V];
#pragma unroll
  for (int e = 0; e < V; e++) {
    d2[e] = P.lap[0] * cu.v[e];
    yc[e] = T(0);
  }
  if (r.f & 1) {
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
    if (r.f & 2) {
      vec ps = lds_v<T, V>(pr);
#pragma unroll
      for (int e = 0; e < V; e++)
        ps.v[e] = strata__pt_cpml_psi(r.b, r.a, ps.v[e], d[e]);
      sts_v<T, V>(pr, ps);
      if (r.x == (1u << V) - 1) {
        *reinterpret_cast<vec *>(S.psi + r.o) = ps;
      } else {
#pragma unroll
        for (int e = 0; e < V; e++)
          if (r.x >> e & 1u) S.psi[r.o + e] = ps.v[e];
      }
    }
  }
  /* every row's new psi is in the slot (the consumers only) */
  asm volatile("bar.sync 1, %0;\n" ::"r"(nthr) : "memory");
  if (r.f & 4) {
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
      if (r.m >> e & 1u) {
        const T z =
            strata__pt_cpml_zeta(r.b, r.a, zo.v[e], d2[e], dp[e]);
        S.zeta[r.o + e] = z;
        yc[e] = dp[e] + z;
      }
  }
  r.o += S.psz;
}

/* Stores my vector res of plane k at upk: FF, zeros on the columns that
 * are not stencil nodes (xin) and the odd images near FREE faces (nearx,
 * neary; planes up to zfl and from zfh); otherwise the stencil nodes'
 * columns only. */
template <typename T, int R, int V, int FF, int CY>
__device__ __forceinline__ void
wt_store(const wave_par<T> &P, T *upk, strata__vec<T, V> res, int xv, int j,
         int k, unsigned xin, bool nearx, bool neary, int zfl, int zfh) {
  typedef strata__vec<T, V> vec;
  const int nx = P.n[0];
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

/* c2 of my vector from the flat model's line: the value of plane k (of
 * row j in the z CPML tiles, whose rows are planes: wave_yz). */
template <typename T, int V, int CY>
__device__ __forceinline__ strata__vec<T, V> wt_c2_line(const wave_par<T> &P,
                                                       int j, int k) {
  strata__vec<T, V> c2v;
  const T cl = (T)P.c2_line[CY == 2 ? j : k];
#pragma unroll
  for (int e = 0; e < V; e++) c2v.v[e] = cl;
  return c2v;
}

/* CY: my up (and c2) vector of the next plane, loaded a plane ahead (the
 * CY tiles' slots carry no up tile). */
template <typename T, int V, bool C2F> struct wt_ahead {
  typedef strata__vec<T, V> vec;
  vec upn, c2n;
  const T *c2k;
  /* upk: up at the chunk's first plane, off: its offset (c2's too) */
  __device__ __forceinline__ wt_ahead(const wave_par<T> &P, const T *upk,
                                      long long off, bool load) {
    upn = zero_v<T, V>();
    c2n = zero_v<T, V>();
    c2k = C2F ? P.c2 + off : nullptr;
    if (load) {
      upn = *reinterpret_cast<const vec *>(upk);
      if (C2F) c2n = *reinterpret_cast<const vec *>(c2k);
    }
  }
  /* this plane's vectors, and the next plane's loaded when more */
  __device__ __forceinline__ void take(vec &upv, vec &c2v, const T *upk,
                                       long long sz, bool more) {
    upv = upn;
    if constexpr (C2F) c2v = c2n;
    if (more) {
      upn = *reinterpret_cast<const vec *>(upk + sz);
      if constexpr (C2F) {
        c2k += sz;
        c2n = *reinterpret_cast<const vec *>(c2k);
      }
    }
  }
};

/* A ring slot of k_wavetma (elements): the u tile (usz), up and c2 (psz
 * each; not in CY tiles), the x CPML areas from sa (wt_cpml), the CY areas
 * from sy (wt_cpmly); ss in all. */
struct wt_slot {
  int usz, psz, sa, sy, ss;
};

template <typename T, bool C2F, bool CX, int CY>
__device__ __forceinline__ wt_slot wt_slot_of(int TW, int TH, int PW, int BY,
                                              const wt_cpml &cx,
                                              const wt_cpmly &cy) {
  wt_slot o;
  o.usz = tma_slot_elems<T>(TW, TH);
  o.psz = tma_slot_elems<T>(PW, BY);
  o.sa = o.usz + (CY ? 0 : (C2F ? 2 : 1) * o.psz);
  o.sy = o.sa + (CX ? cx.apsz + cx.azsz : 0);
  o.ss = o.sy + (CY ? cy.apsz + cy.azsz : 0);
  return o;
}

/* The block's rows [y0, yend): a CY tile's are its slab's; the others
 * start at ya and store below yb where CY tiles may run beside them (YW;
 * elsewhere the window is the whole grid, and left out: the FREE-face
 * instances at the edge of their registers spill otherwise). */
template <typename T, int R, int CY>
__device__ __forceinline__ void wt_rows(const wave_par<T> &P,
                                        const wt_cpmly &cy, int BY, int ya,
                                        int yb, int &y0, int &yend) {
  constexpr bool YW = sizeof(T) == 4 && R == 4;
  y0 = CY   ? cy.y0[blockIdx.y]
       : YW ? ya + (int)blockIdx.y * BY
            : (int)blockIdx.y * BY;
  yend = CY ? y0 + BY : YW ? yb : P.n[1];
}

/* The queue's first 2R planes (kz0 - R .. kz0 + R - 1) from global
 * memory at u (my vector's column; zeros when !ok), and the wait for the
 * tiles of planes kz0 .. kz0 + R - 1, which are never a queue front. */
template <typename T, int R, int V, int NQ>
__device__ __forceinline__ void
wt_queue_start(const T *u, long long sz, int kz0, bool ok,
               strata__vec<T, V> (&q)[NQ], uint64_t *full) {
#pragma unroll
  for (int d = 0; d < 2 * R; d++)
    q[d] = ok ? ldg_v<T, V>(u + (long long)(kz0 - R + d) * sz)
              : zero_v<T, V>();
#pragma unroll
  for (int p = 0; p < R; p++) mbar_wait(&full[p], 0u);
}

/* L += t, element by element (the CPML terms after the Laplacian, in the
 * CPU's order) */
template <typename T, int V>
__device__ __forceinline__ void wt_add(T (&L)[V], const T (&t)[V]) {
#pragma unroll
  for (int e = 0; e < V; e++) L[e] += t[e];
}

/* psi's R rows each side of a CY tile (rows PW points wide, at SY in
 * each of the NS slots of SS): 0, as psi is outside the layer (the copies
 * fill the tile's rows only); the block's threads from tid on */
template <typename T, int R, int NS, int PW>
__device__ __forceinline__ void wt_psi_rows_zero(T *sm, int SS, int SY,
                                                 int BY, int tid) {
  for (int t = tid; t < NS * 2 * R * PW; t += blockDim.x) {
    const int sl = t / (2 * R * PW), r = t % (2 * R * PW) / PW;
    sm[sl * SS + SY + (r < R ? r : BY + r) * PW + t % PW] = T(0);
  }
}

/* With FREE faces in the kernel: which of my V columns from xv are
 * stencil nodes (xin, bit e; the others store 0) and whether my vector or
 * my row j lies within R of a FREE x / y face */
template <typename T, int R, int V>
__device__ __forceinline__ void wt_free_near(const wave_par<T> &P, int xv,
                                             int j, int nx, int ny,
                                             unsigned &xin, bool &nearx,
                                             bool &neary) {
#pragma unroll
  for (int e = 0; e < V; e++)
    if (xv + e >= P.s0[0] && xv + e < P.s1[0]) xin |= 1u << e;
  nearx = (P.ffree[0][0] && xv <= R) || (P.ffree[0][1] && xv + V >= nx - R);
  neary = (P.ffree[1][0] && j <= R) || (P.ffree[1][1] && j >= ny - 1 - R);
}

/* The x CPML side whose slab lies in this block's tile (bit s: side s; at
 * most one) */
template <bool CX>
__device__ __forceinline__ int wt_cx_sides(const wt_cpml &cx) {
  return CX ? (cx.tile[0] == (int)blockIdx.x ? 1 : 0) |
                  (cx.tile[1] == (int)blockIdx.x ? 2 : 0)
            : 0;
}

/* up and c2 of my vector at plane k: from the slot's up tile (at ps; c2
 * PSZ further) without CY (CY took them ahead: wt_ahead), c2 from the
 * line without a velocity field */
template <typename T, int V, bool C2F, int CY>
__device__ __forceinline__ void wt_up_c2(const wave_par<T> &P, const T *ps,
                                         int PSZ, int j, int k,
                                         strata__vec<T, V> &upv,
                                         strata__vec<T, V> &c2v) {
  if constexpr (!CY) upv = lds_v<T, V>(ps);
  if constexpr (C2F) {
    if constexpr (!CY) c2v = lds_v<T, V>(ps + PSZ);
  } else {
    c2v = wt_c2_line<T, V, CY>(P, j, k);
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
  const wt_slot sl = wt_slot_of<T, C2F, CX, CY>(TW, TH, BX * V, BY, cx, cy);
  const int USZ = sl.usz, PSZ = sl.psz, SA = sl.sa, SY = sl.sy, SS = sl.ss;
  static_assert(BX == 32, "a warp is one row of the tile (wt_cpml_x)");
  uint64_t *full = reinterpret_cast<uint64_t *>(sm + NS * SS);
  uint64_t *empty = full + NS;
  const int x0 = blockIdx.x * BX * V;
  int y0, yend;
  wt_rows<T, R, CY>(P, cy, BY, ya, yb, y0, yend);
  const int kz0 = P.s0[2] + (int)blockIdx.z * zchunk;
  const int kz1 = min(P.s1[2], kz0 + zchunk);
  if (kz0 >= kz1) return; /* block-uniform */
  const int cxs = wt_cx_sides<CX>(cx);
  if (tid == 0) tma_bars_init<NS>(full, empty, nthr / 32);
  if constexpr (CY) wt_psi_rows_zero<T, R, NS, BX * V>(sm, SS, SY, BY, tid);
  __syncthreads();
  if (tid >= nthr) { /* the copying warpgroup: one thread copies every plane */
    wg_regs_dec<kWtCopyRegs>(); /* the whole copying warpgroup */
    if (tid == nthr)
      wt_copy<T, R, C2F, CX, CY, NS, V, HV>(tu, tue, tp, tc, cx, cy, sm, SS, SA,
                                            SY, USZ, PSZ, full, empty, kz0,
                                            kz1, x0, y0, BY, TW, TH, cxs, ou,
                                            op, oc);
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
  if constexpr (FF) wt_free_near<T, R, V>(P, xv, j, nx, ny, xin, nearx, neary);
  const int zfl = P.ffree[2][0] ? R : -1; /* k <= zfl: near the low face */
  const int zfh = P.ffree[2][1] ? P.n[2] - 1 - R : 0x7fffffff;
  T *upk = P.up + coff + (long long)kz0 * sz; /* up at plane k */
  /* the damping of my row (y) and columns (x), which no plane changes
   * (the sum keeps the CPU's order: y, then z, then x) */
  T ey, ex[V];
  wave_damp_rowcol<T, V>(P, xv, j, ey, ex);
  /* my lane's part of the x CPML slab in my row (wt_lane) */
  wt_lane<T> cxl =
      wt_lane_init<T, R, V, HV, CX>(P, cxs, lane, x0, xv, j, kz0, rowact);
  /* my row's part of the y CPML slab (CY) */
  wt_rowy<T> cyr = wt_rowy_init<T, V, CY>(P, cy, xv, j, nx, kz0, rowact);
  /* the queue: at phase ph of a trip (k = trip start + ph) plane k + d sits
   * in q[(ph + R + d) % NQ]; planes kz0-R .. kz0+R-1 from global first */
  vec q[NQ];
  wt_queue_start<T, R, V, NQ>(P.u + coff, sz, kz0, cok, q, full);

  wt_ahead<T, V, C2F> ahead(P, upk, coff + (long long)kz0 * sz, CY && uok);

  tma_cursor<NS> cur(R);
  auto plane = [&](int k, int ph) {
    const T *sb = sm + cur.cs * SS;
    vec upv, c2v;
    if constexpr (CY) ahead.take(upv, c2v, upk, sz, uok && k + 1 < kz1);
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
    /* the y CPML terms of my row (CY), added to L after the x terms */
    T yc[CY ? V : 1];
    if constexpr (CY)
      wt_cpml_y<T, R, V>(P, cy, cyr, sm + cur.cs * SS, SY, sb + csm,
                         q[(ph + R) % NQ], TW, tx, ty, nthr, yc);
    mbar_wait(&full[cur.fs], cur.fph);
    q[(ph + 2 * R) % NQ] = lds_v<T, V>(sm + cur.fs * SS + csm);
    const vec c = q[(ph + R) % NQ];
    /* x window and L u (CPU order) */
    const T *rowp = sb + (R + ty) * TW + tx * V;
    const T *colp = sb + csm;
    T xs[(2 * HV + 1) * V], L[V];
    wave_lap<T, R, V, HV, NQ>(P, c0, q, ph + R, rowp, colp, TW, xs, L);
    if constexpr (CX) wt_add<T, V>(L, xc);
    if constexpr (CY) wt_add<T, V>(L, yc);
    wt_up_c2<T, V, C2F, CY>(P, sb + psm, PSZ, j, k, upv, c2v);
    /* this warp is done with the slot of k */
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[cur.cs]);
    T erow = ey;
    if (P.any_damp && P.damp[2]) erow += (T)P.damp[2][k];
    vec res = wave_update<T, V>(P, c, upv, c2v, L, erow, ex);
    if (uok)
      wt_store<T, R, V, FF, CY>(P, upk, res, xv, j, k, xin, nearx, neary,
                                zfl, zfh);
    upk += sz;
    cur.next();
  };
  strata__trips<NQ>(kz0, kz1, plane);
#endif
}

} // namespace

#endif
