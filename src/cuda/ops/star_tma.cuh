/* The star walks fed by Hopper bulk tensor copies (TMA, sm_90):
 *  streamtma  the 2.5D walk for the 3D stars (radius 1..4);
 *  streamws   the same, warp-specialised.
 *
 * Why: ncu showed streamcp (the best 25-point kernel before these) bound
 * by instruction issue, most of its instructions a point not arithmetic.
 * Its copy side costs a
 * thread, per plane, one cp.async for each of its rows and up to three for
 * the halo, each with a 64-bit address, a predicate, a branch and three
 * dummy issue slots, and its register queue of z-neighbours shifts by
 * 2r x W vector moves a plane.  Here one thread issues one tensor copy per
 * plane for the whole tile and its halo (the copy engine computes the
 * addresses and fills what lies outside the allocation with zeros), the
 * others only wait on the slot's mbarrier; the queue rotates between named
 * registers by unrolling the walk 2r+1 planes a trip, so it moves nothing.
 *
 * The ring (streamtma/streamws): the tile of plane p (BX*V + 2*HV*V
 * columns, BY*W + 2R rows; in fp32 at r >= 2 the block's own BX*V
 * columns, and its x halo, HV*V columns each side of its BY*W rows, by a
 * second copy into the same slot: stream_xsplit) lands in slot
 * (p - kz0) mod NS of NS = R + 1 + A slots; at plane k the ring holds
 * planes k .. k+R+A: the tile of k gives the x/y neighbours, the tile of
 * k+R feeds the queue's front.  (kdtma / kdws, seeds/kd_tma.cu: one plane
 * in use, A ahead, NS = A + 1.)  The protocol, per slot:
 *  - full[s] (arrival count 1): the copier arms it with the tile's byte
 *    count (and its halo's) and the copies complete it.  Every consumer
 *    waits on it before its first read of the tile: as the queue's front,
 *    or, for the chunk's first R planes (never a front), before the walk
 *    starts.  Each slot's
 *    fills are waited on in order, so a waiter is never more than one
 *    phase behind (the parity test cannot be fooled).
 *  - release: without WS, the block barrier that ends plane k (every
 *    thread is past its reads of the tile of k), after which thread 0
 *    refills the slot with plane k+NS.  With WS, empty[s] (arrival count =
 *    consumer warps): each warp arrives after __syncwarp once it is done
 *    with plane k; the copier waits on it before refilling.  Consumers then
 *    never meet at a block barrier and drift up to A planes apart.
 *  Every copy issued is waited on before the block exits.
 *
 * The tensor map spans the input's whole allocation (row pitch x rows x
 * planes), so ghosts are read as they are; the box may run past the
 * allocation's end (zeros) or into the row padding (never stored: only
 * interior points within r of a stored point feed it).
 *
 * Included once per precision (star_tma_f32.cu, star_tma_f64.cu, which
 * star_tma.cu calls), so the two halves of the instances compile side by
 * side. */
#ifndef STRATA_CUDA_OPS_STAR_TMA_CUH
#define STRATA_CUDA_OPS_STAR_TMA_CUH

#include "ops/tma_launch.cuh"
#include "engine/cuda_star.cuh"

namespace {

constexpr int kTmaAhead = 3; /* planes copied ahead of the queue's front */

/* The ring slot of streamtma / streamws: the TW x TH tile, then from
 * element *hoff on the x halo (HVV = 0: none, it is in the tile): HVV
 * columns left of each of rows rows, and *hsz elements further on the HVV
 * columns right of them; each box rounded up to 128 bytes (a tensor
 * copy's destination); *slot elements in all. */
template <typename T>
__host__ __device__ inline void stream_slot(int TW, int TH, int HVV, int rows,
                                            int *hoff, int *hsz, int *slot) {
  *hoff = tma_slot_elems<T>(TW, TH);
  *hsz = tma_slot_elems<T>(HVV, rows);
  *slot = *hoff + 2 * *hsz;
}

/* Whether the star walks keep the x halo apart from the tile (XS): in fp32
 * the halo is 16 bytes each side, and a tile box with it starts and ends
 * 16 bytes into its neighbours' 128-byte lines; the tile's own columns in
 * one box and the halo in two more (a column of 16 bytes each side,
 * stream_slot) brings the fp32 25-point star closer to the copy ceiling
 * (one 4D box for both columns was a little slower).  fp64 (32-byte halo
 * at r = 4) and the fp32 7-point (r = 1) lose that way: those keep the
 * halo in the tile's box.  r = 2 and 3 follow r = 4, whose halo they
 * share (docs/performance.md#operators-on-the-h100). */
template <typename T, int R>
__host__ __device__ constexpr bool stream_xsplit() {
  return sizeof(T) == 4 && R >= 2;
}

/* Consumer threads a block may have: two rows a thread double the queue,
 * so the copier's extra warp (which lowers the register cap to 96 at 17
 * warps) is only allowed 256 of them. */
template <int W, bool WS> constexpr int tma_max_threads() {
  return W == 1 || !WS ? 512 : 256;
}

/* WS false: thread 0 copies each plane right after the block barrier that
 * ends the previous one.  WS true (warp-specialised): one extra warp copies;
 * the consumers never meet at a block barrier: each warp releases a slot
 * on its "empty" mbarrier when done with the plane, and the copier waits
 * for all of them before refilling it, so warps drift up to the ring's
 * depth apart. */
template <typename T, int R, int W, int A, bool WS>
__global__ void __launch_bounds__(tma_max_threads<W, WS>() + (WS ? 32 : 0))
    k_streamtma(const __grid_constant__ CUtensorMap tm,
                const __grid_constant__ CUtensorMap tm2,
                const __grid_constant__ CUtensorMap tm3,
                const T *__restrict__ in, T *__restrict__ out, strata__geom g,
                const strata__w<T> w, int zchunk, int BX, int BY, int ox,
                int oy, int oz, int hint) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int V = 16 / sizeof(T);
  constexpr int HV = (R + V - 1) / V;
  constexpr int NS = R + 1 + A;
  constexpr int NQ = 2 * R + 1;
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(128) unsigned char sraw[];
  T *sm = reinterpret_cast<T *>(sraw);

  constexpr bool XS = stream_xsplit<T, R>();
  constexpr int XO = XS ? 0 : HV; /* halo vectors left of the tile's own */

  const int tid = threadIdx.x, nthr = BX * BY; /* consumers */
  const int TW = (BX + 2 * XO) * V;
  const int TH = BY * W + 2 * R;
  const int rows = BY * W; /* XS: the x halo, HV vectors each side of these */
  constexpr int HVV = XS ? HV * V : 0; /* the halo's columns a side, apart */
  int hoff, hsz, bufsz;
  stream_slot<T>(TW, TH, HVV, rows, &hoff, &hsz, &bufsz);
  const int x0 = blockIdx.x * BX * V, y0 = blockIdx.y * BY * W;
  const int kz0 = blockIdx.z * zchunk;
  const int kz1 = min(g.nz, kz0 + zchunk);
  const int last = kz1 - 1 + R; /* last plane whose tile is needed */
  const bool edge = blockIdx.x == 0 || blockIdx.x == gridDim.x - 1;
  /* without XS the first and last tiles of a row copy through tm2 (no L2
   * promotion): their outer halo lies in the line of ghost columns and
   * alignment pad that nothing else reads */
  tma_ring<T, NS> ring(
      sm, bufsz, XS || !edge ? &tm : &tm2,
      (unsigned)((TW * TH + 2 * HVV * rows) * sizeof(T)),
      ox + x0 - XO * V, oy + y0 - R, oz);
  if (hint) ring.pol = l2_policy(hint);
  if constexpr (XS) {
    /* the x halo: a box of tm2 each side, of tm3 (no L2 promotion) at the
     * ends of a row, where the outer halo is alone in its line (as above) */
    ring.tmh = edge ? &tm3 : &tm2;
    ring.hxl = ox + x0 - HV * V;
    ring.hxr = ox + x0 + BX * V;
    ring.hy = oy + y0;
    ring.hoff = hoff;
    ring.hsz = hsz;
  }
  uint64_t *full = ring.full, *empty = ring.empty;

  if (!ring.template start<WS>(tid, nthr, kz0, last)) return;

  const int tx = tid % BX, ty = tid / BX;
  const int lane = tid & 31;
  const int nx = g.nx, ny = g.ny;
  const long long sy = g.sy, sz = g.sz;
  const int xv = x0 + tx * V, yr = y0 + ty * W;

  /* the queue: at phase ph of a trip (k = trip start + ph) plane k + d sits
   * in q[(ph + R + d) % NQ]; planes kz0-R .. kz0+R-1 from global first */
  const bool cx_ok = xv < nx + R;
  const long long coff = xv + (long long)yr * sy;
  const int csm = (R + ty * W) * TW + (XO + tx) * V;
  const star_xnb<HV> nb(tx, ty, BX, W, R, V, hoff, hsz); /* XS */
  vec q[NQ][W];
#pragma unroll
  for (int d = 0; d < 2 * R; d++)
#pragma unroll
    for (int r = 0; r < W; r++)
      q[d][r] = cx_ok && yr + r < ny + R
                    ? ldg_v<T, V>(in + coff + r * sy +
                                  (long long)(kz0 - R + d) * sz)
                    : zero_v<T, V>();
  /* the tiles of planes kz0 .. kz0+R-1 are never a queue front: wait for
   * them here (every later tile is waited for as the front) */
#pragma unroll
  for (int p = 0; p < R; p++) mbar_wait(&full[p], 0u);

  tma_cursor<NS> cur(R);
  T *op = out + xv + (long long)yr * g.osy + (long long)kz0 * g.osz;
  const bool xmine = xv < nx;

  auto plane = [&](int k, int ph) {
    mbar_wait(&full[cur.fs], cur.fph);
    const T *sb = sm + cur.cs * bufsz;
    const T *sq = sm + cur.fs * bufsz;
#pragma unroll
    for (int r = 0; r < W; r++)
      q[(ph + 2 * R) % NQ][r] = lds_v<T, V>(sq + csm + r * TW);
    vec acc[W];
    if constexpr (XS)
      star_plane_split<T, R, W, V, HV, NQ>(q, ph + R, sb, TW, nb, tx, ty, w,
                                           acc);
    else
      star_plane<T, R, W, V, HV, NQ>(q, ph + R, sb, TW, tx, ty, w, acc);
    if constexpr (WS) {
      /* this warp is done with the tile of k (and every earlier one) */
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty[cur.cs]);
    }
    if (xmine) {
#pragma unroll
      for (int r = 0; r < W; r++)
        if (yr + r < ny)
          store_masked<T, V>(op + (long long)r * g.osy, acc[r], nx - xv);
    }
    op += g.osz;
    if constexpr (!WS) {
      __syncthreads(); /* every thread is done with the tile of k */
      if (tid == 0 && k + NS <= last) ring.copy(k + NS, cur.cs);
    }
    cur.next();
  };
  strata__trips<NQ>(kz0, kz1, plane);
#endif
}

template <typename T, int R, int W, bool WS>
strata_status launch_tma(const strata__launch *L, const strata_stencil *op) {
  constexpr int V = 16 / sizeof(T);
  constexpr int HV = (R + V - 1) / V;
  const int BX = L->block[0], BY = L->block[1];
  constexpr bool XS = stream_xsplit<T, R>();
  auto kern = k_streamtma<T, R, W, kTmaAhead, WS>;
  const char *name = WS ? "streamws" : "streamtma";
  const int TW = (BX + (XS ? 0 : 2 * HV)) * V, TH = BY * W + 2 * R;
  constexpr int HVV = XS ? HV * V : 0;
  int hoff, hsz, slot;
  stream_slot<T>(TW, TH, HVV, BY * W, &hoff, &hsz, &slot);
  tma_plan P;
  /* 128-byte L2 promotion: faster than none for the 25-point star */
  strata_status s =
      tma_prepare<T>(L, kern, name, W, tma_max_threads<W, WS>(), WS, TW, TH,
                     slot, R + 1 + kTmaAhead, 128, 2 * R, &P);
  if (s != STRATA_OK) return s;
  /* XS: the x halo's map, and the same without L2 promotion for the row's
   * end tiles.  Otherwise tm2 is the tile's map without promotion for
   * those tiles (their outer halo is alone in its line, and promoting it
   * fetched bytes nobody reads) */
  CUtensorMap tm2, tm3 = P.tm;
  if (XS) {
    s = tensor_map(L, sizeof(T), HVV, BY * W, 128, name, &tm2);
    if (s == STRATA_OK) s = tensor_map(L, sizeof(T), HVV, BY * W, 0, name, &tm3);
  } else {
    s = tensor_map(L, sizeof(T), TW, TH, 0, name, &tm2);
  }
  if (s != STRATA_OK) return s;
  kern<<<P.grid, dim3(P.threads, 1, 1), P.bytes, L->stream>>>(
      P.tm, tm2, tm3, (const T *)L->in, (T *)L->out, L->g, strata__weights<T>(op),
      P.zchunk, BX, BY, L->in_org[0], L->in_org[1], L->in_org[2],
      tma_hint(L, 1));
  STRATA__LAUNCHED(L->ctx, WS ? "streamws kernel launch"
                              : "streamtma kernel launch");
  return STRATA_OK;
}

/* Radius 1 too: on some sm_90 parts (the H200) the tuner picks the walk
 * over vec for the 7-point star (docs/performance.md#operators-on-the-h100). */
template <typename T, int W, bool WS>
strata_status tma_r(const strata__launch *L, const strata_stencil *op) {
  switch (op->radius) {
  case 1: return launch_tma<T, 1, W, WS>(L, op);
  case 2: return launch_tma<T, 2, W, WS>(L, op);
  case 3: return launch_tma<T, 3, W, WS>(L, op);
  case 4: return launch_tma<T, 4, W, WS>(L, op);
  }
  return strata__fail(L->ctx, STRATA_EINVAL, "streamtma: radius %d", op->radius);
}

template <typename T>
strata_status tma_t(const strata__launch *L, const strata_stencil *op, bool ws) {
  if (ws)
    return L->block[2] == 2 ? tma_r<T, 2, true>(L, op) : tma_r<T, 1, true>(L, op);
  return L->block[2] == 2 ? tma_r<T, 2, false>(L, op) : tma_r<T, 1, false>(L, op);
}

} // namespace

/* streamtma / streamws in one precision (ws: warp-specialised); the
 * checks are strata__cu_streamtma's */
strata_status strata__cu_streamtma_f32(const strata__launch *L,
                                       const strata_stencil *op, bool ws);
strata_status strata__cu_streamtma_f64(const strata__launch *L,
                                       const strata_stencil *op, bool ws);

#endif
