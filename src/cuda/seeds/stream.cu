/* 2.5D streaming for 3D star stencils (built with STRATA_CUDA_SEEDS; the
 * star walks the engine selects are ops/star_tma.cuh and ops/vec.cu).
 *
 * stream   (V = 1, W = 1): the classic 2.5D kernel.  A 2D thread block tiles
 *          the xy plane; each thread walks z keeping the 2r+1 values of its
 *          column in registers (the z-neighbours), while the current plane's
 *          tile and its x/y halo sit in shared memory.
 * streamv  (V = 16 bytes / sizeof(T), W = 1 or 2 rows per thread, block z):
 *          the same traversal with 16-byte vectors, the next plane's column
 *          and halo prefetched into registers one plane ahead, the tile
 *          double-buffered (one barrier per plane), evict-first stores.
 * streamcp: streamv whose tiles are copied global -> shared by cp.async
 *          two planes ahead of the queue's front, into a ring of r+4 tiles
 *          (no register staging: the queue is fed from shared memory).
 * streamrq: streamcp with a rotating register queue and a register cap.
 *
 * Memory safety: vector loads may run up to one vector past a row's last
 * ghost; the field layout's row padding and the allocation slack (see
 * engine/backend.cu) keep them inside the allocation. */
#include "engine/cuda_device.cuh"
#include "engine/cuda_star.cuh"

namespace {

constexpr int kStreamSlots = 3; /* halo vectors a thread may carry per plane */

/* Threads per block the streaming kernels are compiled for: W = 2 doubles
 * the register queue, so those blocks are capped lower. */
template <int W> constexpr int stream_max_threads() { return W == 2 ? 256 : 512; }
/* streamrq: at most 256 threads, so that three blocks fit at 80 registers
 * for W = 1 (the unrolled rotating queue otherwise takes 128). */
constexpr int streamrq_max_threads() { return 256; }

template <typename T, int R, int V, int W>
__global__ void __launch_bounds__(stream_max_threads<W>())
    k_stream(const T *__restrict__ in, T *__restrict__ out, strata__geom g,
             const strata__w<T> w, int zchunk) {
  constexpr int HV = (R + V - 1) / V; /* halo vectors per side in x */
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(16) unsigned char sraw[];
  T *sm = reinterpret_cast<T *>(sraw);

  const int BX = blockDim.x, BY = blockDim.y;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * BX + tx, nthr = BX * BY;
  const int TW = (BX + 2 * HV) * V; /* tile row, elements */
  const int TH = BY * W + 2 * R;    /* tile rows */
  const int bufsz = TW * TH;
  const int x0 = blockIdx.x * BX * V, y0 = blockIdx.y * BY * W;
  const int kz0 = blockIdx.z * zchunk;
  const int kz1 = min(g.nz, kz0 + zchunk);
  const int nx = g.nx, ny = g.ny;
  const long long sy = g.sy, sz = g.sz;
  const int xv = x0 + tx * V, yr = y0 + ty * W;

  /* my column: needed by someone when within r of the interior */
  bool cok[W];
#pragma unroll
  for (int r = 0; r < W; r++) cok[r] = xv < nx + R && yr + r < ny + R;
  const T *cp = in + xv + (long long)yr * sy;

  /* halo slots: y halo rows (2R x BX vectors), then x halo (2HV x BY*W) */
  long long hoff[kStreamSlots];
  int hsm[kStreamSlots];
  bool hok[kStreamSlots], hact[kStreamSlots];
#pragma unroll
  for (int s = 0; s < kStreamSlots; s++) {
    strata__halo_slot<R, V, HV>(tid + s * nthr, BX, BY * W, TW, x0, y0, nx, ny,
                                sy, &hoff[s], &hsm[s], &hok[s],
                                &hact[s]);
  }

  vec q[2 * R + 1][W];
  vec pf[W];
  vec hr[kStreamSlots];
  /* warm-up: planes kz0-R .. kz0+R-1 into q[1..2R], kz0+R into pf */
#pragma unroll
  for (int d = 1; d <= 2 * R; d++)
#pragma unroll
    for (int r = 0; r < W; r++)
      q[d][r] = cok[r] ? ldg_v<T, V>(cp + (long long)(kz0 - R - 1 + d) * sz +
                                     r * sy)
                       : zero_v<T, V>();
#pragma unroll
  for (int r = 0; r < W; r++)
    pf[r] = cok[r] ? ldg_v<T, V>(cp + (long long)(kz0 + R) * sz + r * sy)
                   : zero_v<T, V>();
#pragma unroll
  for (int s = 0; s < kStreamSlots; s++)
    hr[s] = hok[s] ? ldg_v<T, V>(in + hoff[s] + (long long)kz0 * sz)
                   : zero_v<T, V>();

  int buf = 0;
  for (int k = kz0; k < kz1; k++) {
#pragma unroll
    for (int d = 0; d < 2 * R; d++)
#pragma unroll
      for (int r = 0; r < W; r++) q[d][r] = q[d + 1][r];
#pragma unroll
    for (int r = 0; r < W; r++) q[2 * R][r] = pf[r];

    T *sb = sm + buf * bufsz;
#pragma unroll
    for (int r = 0; r < W; r++)
      sts_v<T, V>(sb + (R + ty * W + r) * TW + (HV + tx) * V, q[R][r]);
#pragma unroll
    for (int s = 0; s < kStreamSlots; s++)
      if (hact[s]) sts_v<T, V>(sb + hsm[s], hr[s]);

    if (k + 1 < kz1) { /* prefetch the next plane */
#pragma unroll
      for (int r = 0; r < W; r++)
        pf[r] = cok[r] ? ldg_v<T, V>(cp + (long long)(k + R + 1) * sz + r * sy)
                       : zero_v<T, V>();
#pragma unroll
      for (int s = 0; s < kStreamSlots; s++)
        hr[s] = hok[s] ? ldg_v<T, V>(in + hoff[s] + (long long)(k + 1) * sz)
                       : zero_v<T, V>();
    }
    __syncthreads();

    vec acc[W];
#pragma unroll
    for (int r = 0; r < W; r++) {
      /* centre and z */
#pragma unroll
      for (int e = 0; e < V; e++) acc[r].v[e] = w.c0 * q[R][r].v[e];
#pragma unroll
      for (int m = 1; m <= R; m++)
#pragma unroll
        for (int e = 0; e < V; e++)
          acc[r].v[e] = strata__pt_term(acc[r].v[e], w.cz[m],
                                        q[R - m][r].v[e] + q[R + m][r].v[e]);
      /* x: the row's left halo, centre (registers) and right halo */
      const T *rowp = sb + (R + ty * W + r) * TW + tx * V;
      T xs[(2 * HV + 1) * V];
#pragma unroll
      for (int h = 0; h < HV; h++) {
        /* left vector h holds offsets (h-HV)*V + e; needed when >= -R */
        if ((h - HV) * V >= -R) {
          vec t = lds_v<T, V>(rowp + h * V);
#pragma unroll
          for (int e = 0; e < V; e++) xs[h * V + e] = t.v[e];
        } else {
#pragma unroll
          for (int e = 0; e < V; e++)
            xs[h * V + e] = (h - HV) * V + e >= -R ? rowp[h * V + e] : T(0);
        }
        /* right vector h holds offsets V + h*V + e; needed when <= V-1+R */
        const int rb = (HV + 1 + h) * V;
        if (h * V + V - 1 <= R - 1) {
          vec t = lds_v<T, V>(rowp + rb);
#pragma unroll
          for (int e = 0; e < V; e++) xs[rb + e] = t.v[e];
        } else {
#pragma unroll
          for (int e = 0; e < V; e++)
            xs[rb + e] = h * V + e <= R - 1 ? rowp[rb + e] : T(0);
        }
      }
#pragma unroll
      for (int e = 0; e < V; e++) xs[HV * V + e] = q[R][r].v[e];
#pragma unroll
      for (int m = 1; m <= R; m++)
#pragma unroll
        for (int e = 0; e < V; e++)
          acc[r].v[e] = strata__pt_term(acc[r].v[e], w.cx[m],
                                        xs[HV * V + e - m] + xs[HV * V + e + m]);
    }
    /* y: every row of the window once, added to each of my W points */
    star_y<T, R, W, V, HV>(q[R], sb, TW, tx, ty, w, acc);
    if (xv < nx) {
#pragma unroll
      for (int r = 0; r < W; r++)
        if (yr + r < ny)
          store_masked<T, V>(out + xv + (long long)(yr + r) * g.osy +
                                 (long long)k * g.osz,
                             acc[r], nx - xv);
    }
    buf ^= 1;
  }
}

/* streamrq: streamcp with a rotating register queue (the loop unrolled
 * 2r+1 times, no register moves) compiled under a register cap (at most
 * 256 threads; 80 registers for W = 1, 128 for W = 2).  Otherwise as
 * streamcp below.
 *
 * streamcp: the 2.5D traversal fed by cp.async.  Every plane's tile (centre
 * vectors and halo) is copied global -> shared without passing through
 * registers, A planes ahead of the queue's front, into a ring of R + 2 + A
 * tiles: at plane k the ring holds the tiles of planes k-1 .. k+R+A; the
 * tile of k gives the x/y neighbours, the tile of k+R feeds the register
 * queue of z-neighbours.  Overwriting the tile of k-2 needs no extra
 * barrier: the one barrier per plane separates its last use from the
 * copy. */
template <typename T, int R, int W, int A>
__global__ void __launch_bounds__(streamrq_max_threads(), W == 1 ? 3 : 2)
    k_streamrq(const T *__restrict__ in, T *__restrict__ out, strata__geom g,
              const strata__w<T> w, int zchunk) {
  constexpr int V = 16 / sizeof(T);
  constexpr int HV = (R + V - 1) / V;
  constexpr int NS = R + 2 + A;
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(16) unsigned char sraw[];
  T *sm = reinterpret_cast<T *>(sraw);

  const int BX = blockDim.x, BY = blockDim.y;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * BX + tx, nthr = BX * BY;
  const int TW = (BX + 2 * HV) * V;
  const int TH = BY * W + 2 * R;
  const int bufsz = TW * TH;
  const int x0 = blockIdx.x * BX * V, y0 = blockIdx.y * BY * W;
  const int kz0 = blockIdx.z * zchunk;
  const int kz1 = min(g.nz, kz0 + zchunk);
  const int nx = g.nx, ny = g.ny;
  const long long sy = g.sy, sz = g.sz;
  const int xv = x0 + tx * V, yr = y0 + ty * W;

  /* copy slots: my W centre vectors, then up to kStreamSlots halo vectors */
  const bool cx_ok = xv < nx + R;
  const long long coff = xv + (long long)yr * sy;
  const int csm = (R + ty * W) * TW + (HV + tx) * V;
  long long hoff[kStreamSlots];
  int hsm[kStreamSlots];
  bool hok[kStreamSlots], hact[kStreamSlots];
#pragma unroll
  for (int s = 0; s < kStreamSlots; s++) {
    strata__halo_slot<R, V, HV>(tid + s * nthr, BX, BY * W, TW, x0, y0, nx, ny,
                                sy, &hoff[s], &hsm[s], &hok[s],
                                &hact[s]);
  }
  const int last = kz1 - 1 + R; /* last plane whose tile is needed */
  auto issue = [&](int p) {
    if (p <= last) {
      T *sb = sm + ((p - kz0) % NS) * bufsz;
      const T *pb = in + (long long)p * sz;
#pragma unroll
      for (int r = 0; r < W; r++) {
        const bool ok = cx_ok && yr + r < ny + R;
        cp_async16(sb + csm + r * TW, ok ? pb + coff + r * sy : in, ok ? 16 : 0);
      }
#pragma unroll
      for (int s = 0; s < kStreamSlots; s++)
        if (hact[s])
          cp_async16(sb + hsm[s], hok[s] ? pb + hoff[s] : in, hok[s] ? 16 : 0);
    }
    cp_async_commit();
  };

  /* the register queue rotates: at step phase s (k = kz0 + j*NQ + s) the
   * plane k + d sits in slot (s + R + d) % NQ, so the loop below, unrolled
   * NQ times, moves no registers */
  constexpr int NQ = 2 * R + 1;
  vec q[NQ][W];
#pragma unroll
  for (int d = 0; d < 2 * R; d++)
#pragma unroll
    for (int r = 0; r < W; r++)
      q[d][r] = cx_ok && yr + r < ny + R
                    ? ldg_v<T, V>(in + coff + r * sy +
                                  (long long)(kz0 - R + d) * sz)
                    : zero_v<T, V>();
  for (int p = kz0; p < kz0 + R + A; p++) issue(p);

  auto plane = [&](int k, int ph) {
    issue(k + R + A);
    cp_async_wait<A>();
    __syncthreads();
    const T *sb = sm + ((k - kz0) % NS) * bufsz;
    const T *sq = sm + ((k + R - kz0) % NS) * bufsz;
#pragma unroll
    for (int r = 0; r < W; r++)
      q[(ph + 2 * R) % NQ][r] = lds_v<T, V>(sq + csm + r * TW);
    vec acc[W];
    star_plane<T, R, W, V, HV, NQ>(q, ph + R, sb, TW, tx, ty, w, acc);
    if (xv < nx) {
#pragma unroll
      for (int r = 0; r < W; r++)
        if (yr + r < ny)
          store_masked<T, V>(out + xv + (long long)(yr + r) * g.osy +
                                 (long long)k * g.osz,
                             acc[r], nx - xv);
    }
  };
  strata__trips<NQ>(kz0, kz1, plane); /* barriers in plane: safe */
  cp_async_wait<0>();
}

/* streamcp: (see above) with the queue shifted plane by plane.  Every plane's tile (centre
 * vectors and halo) is copied global -> shared without passing through
 * registers, A planes ahead of the queue's front, into a ring of R + 2 + A
 * tiles: at plane k the ring holds the tiles of planes k-1 .. k+R+A; the
 * tile of k gives the x/y neighbours, the tile of k+R feeds the register
 * queue of z-neighbours.  Overwriting the tile of k-2 needs no extra
 * barrier: the one barrier per plane separates its last use from the
 * copy. */
template <typename T, int R, int W, int A>
__global__ void __launch_bounds__(stream_max_threads<W>())
    k_streamv(const T *__restrict__ in, T *__restrict__ out, strata__geom g,
              const strata__w<T> w, int zchunk) {
  constexpr int V = 16 / sizeof(T);
  constexpr int HV = (R + V - 1) / V;
  constexpr int NS = R + 2 + A;
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(16) unsigned char sraw[];
  T *sm = reinterpret_cast<T *>(sraw);

  const int BX = blockDim.x, BY = blockDim.y;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * BX + tx, nthr = BX * BY;
  const int TW = (BX + 2 * HV) * V;
  const int TH = BY * W + 2 * R;
  const int bufsz = TW * TH;
  const int x0 = blockIdx.x * BX * V, y0 = blockIdx.y * BY * W;
  const int kz0 = blockIdx.z * zchunk;
  const int kz1 = min(g.nz, kz0 + zchunk);
  const int nx = g.nx, ny = g.ny;
  const long long sy = g.sy, sz = g.sz;
  const int xv = x0 + tx * V, yr = y0 + ty * W;

  /* copy slots: my W centre vectors, then up to kStreamSlots halo vectors */
  const bool cx_ok = xv < nx + R;
  const long long coff = xv + (long long)yr * sy;
  const int csm = (R + ty * W) * TW + (HV + tx) * V;
  long long hoff[kStreamSlots];
  int hsm[kStreamSlots];
  bool hok[kStreamSlots], hact[kStreamSlots];
#pragma unroll
  for (int s = 0; s < kStreamSlots; s++) {
    strata__halo_slot<R, V, HV>(tid + s * nthr, BX, BY * W, TW, x0, y0, nx, ny,
                                sy, &hoff[s], &hsm[s], &hok[s],
                                &hact[s]);
  }
  const int last = kz1 - 1 + R; /* last plane whose tile is needed */
  auto issue = [&](int p) {
    if (p <= last) {
      T *sb = sm + ((p - kz0) % NS) * bufsz;
      const T *pb = in + (long long)p * sz;
#pragma unroll
      for (int r = 0; r < W; r++) {
        const bool ok = cx_ok && yr + r < ny + R;
        cp_async16(sb + csm + r * TW, ok ? pb + coff + r * sy : in, ok ? 16 : 0);
      }
#pragma unroll
      for (int s = 0; s < kStreamSlots; s++)
        if (hact[s])
          cp_async16(sb + hsm[s], hok[s] ? pb + hoff[s] : in, hok[s] ? 16 : 0);
    }
    cp_async_commit();
  };

  /* the register queue: planes kz0-R .. kz0+R-1 straight from global */
  vec q[2 * R + 1][W];
#pragma unroll
  for (int d = 1; d <= 2 * R; d++)
#pragma unroll
    for (int r = 0; r < W; r++)
      q[d][r] = cx_ok && yr + r < ny + R
                    ? ldg_v<T, V>(in + coff + r * sy +
                                  (long long)(kz0 - R - 1 + d) * sz)
                    : zero_v<T, V>();
  for (int p = kz0; p < kz0 + R + A; p++) issue(p);

  for (int k = kz0; k < kz1; k++) {
    issue(k + R + A);
    cp_async_wait<A>();
    __syncthreads();
    const T *sb = sm + ((k - kz0) % NS) * bufsz;
    const T *sq = sm + ((k + R - kz0) % NS) * bufsz;
#pragma unroll
    for (int d = 0; d < 2 * R; d++)
#pragma unroll
      for (int r = 0; r < W; r++) q[d][r] = q[d + 1][r];
#pragma unroll
    for (int r = 0; r < W; r++) q[2 * R][r] = lds_v<T, V>(sq + csm + r * TW);

    vec acc[W];
    star_plane<T, R, W, V, HV, 2 * R + 1>(q, R, sb, TW, tx, ty, w, acc);
    if (xv < nx) {
#pragma unroll
      for (int r = 0; r < W; r++)
        if (yr + r < ny)
          store_masked<T, V>(out + xv + (long long)(yr + r) * g.osy +
                                 (long long)k * g.osz,
                             acc[r], nx - xv);
    }
  }
  cp_async_wait<0>();
}

template <typename T, int R, int V, int W>
strata_status launch_stream(const strata__launch *L, const strata_stencil *op,
                            const char *name) {
  constexpr int HV = (R + V - 1) / V;
  const int BX = L->block[0], BY = L->block[1];
  const int nthr = BX * BY;
  const int HN = 2 * R * BX + 2 * HV * BY * W;
  if (nthr > stream_max_threads<W>())
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block %dx%dx%d has %d threads; with %d rows per "
                        "thread at most %d", name, BX, BY, W, nthr, W,
                        stream_max_threads<W>());
  if (HN > kStreamSlots * nthr)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block %dx%dx%d is too small for radius %d: its "
                        "halo of %d vectors exceeds %d per thread",
                        name, BX, BY, W, R, HN, kStreamSlots);
  const size_t bytes = 2 * (size_t)(BX + 2 * HV) * V * (BY * W + 2 * R) * sizeof(T);
  auto kern = k_stream<T, R, V, W>;
  strata_status s = strata__smem_opt_in(L, kern, bytes, name);
  if (s != STRATA_OK) return s;
  int per_sm = 0;
  s = strata__occupancy(L, kern, nthr, bytes, &per_sm);
  if (s != STRATA_OK) return s;
  const long long gx = ((L->g.nx + V - 1) / V + BX - 1) / BX;
  const long long gy = (L->g.ny + BY * W - 1) / (BY * W);
  if (gy > 65535)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: %d rows need %lld blocks along y (limit 65535); "
                        "use taller blocks", name, L->g.ny, gy);
  const int chunks = strata__cu_chunks(L, (int)(gx * gy), per_sm, L->g.nz, 2 * R);
  const int zchunk = (L->g.nz + chunks - 1) / chunks;
  dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)((L->g.nz + zchunk - 1) / zchunk));
  kern<<<grid, dim3(BX, BY, 1), bytes, L->stream>>>(
      (const T *)L->in, (T *)L->out, L->g, strata__weights<T>(op), zchunk);
  STRATA__LAUNCHED(L->ctx, "stream kernel launch");
  return STRATA_OK;
}

constexpr int kStreamAhead = 2; /* planes copied ahead of the queue */

template <typename T, int R, int W, bool RQ>
strata_status launch_streamv(const strata__launch *L, const strata_stencil *op) {
  constexpr int V = 16 / sizeof(T);
  constexpr int HV = (R + V - 1) / V;
  constexpr int NS = R + 2 + kStreamAhead;
  const char *name = RQ ? "streamrq" : "streamcp";
  const int BX = L->block[0], BY = L->block[1];
  const int nthr = BX * BY;
  const int HN = 2 * R * BX + 2 * HV * BY * W;
  const int maxt = RQ ? streamrq_max_threads() : stream_max_threads<W>();
  if (nthr > maxt)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block %dx%dx%d has %d threads; at most %d",
                        name, BX, BY, W, nthr, maxt);
  if (HN > kStreamSlots * nthr)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block %dx%dx%d is too small for radius %d: its "
                        "halo of %d vectors exceeds %d per thread",
                        name, BX, BY, W, R, HN, kStreamSlots);
  const size_t bytes =
      (size_t)NS * (BX + 2 * HV) * V * (BY * W + 2 * R) * sizeof(T);
  auto kern = k_streamv<T, R, W, kStreamAhead>;
  if constexpr (RQ) kern = k_streamrq<T, R, W, kStreamAhead>;
  strata_status s = strata__smem_opt_in(L, kern, bytes, name);
  if (s != STRATA_OK) return s;
  int per_sm = 0;
  s = strata__occupancy(L, kern, nthr, bytes, &per_sm);
  if (s != STRATA_OK) return s;
  const long long gx = ((L->g.nx + V - 1) / V + BX - 1) / BX;
  const long long gy = (L->g.ny + BY * W - 1) / (BY * W);
  if (gy > 65535)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: %d rows need %lld blocks along y (limit 65535); "
                        "use taller blocks", name, L->g.ny, gy);
  const int chunks = strata__cu_chunks(L, (int)(gx * gy), per_sm, L->g.nz, 2 * R);
  const int zchunk = (L->g.nz + chunks - 1) / chunks;
  dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)((L->g.nz + zchunk - 1) / zchunk));
  kern<<<grid, dim3(BX, BY, 1), bytes, L->stream>>>(
      (const T *)L->in, (T *)L->out, L->g, strata__weights<T>(op), zchunk);
  STRATA__LAUNCHED(L->ctx, RQ ? "streamrq kernel launch" : "streamcp kernel launch");
  return STRATA_OK;
}

template <typename T, int W, bool RQ>
strata_status streamv_r(const strata__launch *L, const strata_stencil *op) {
  switch (op->radius) {
  case 1: return launch_streamv<T, 1, W, RQ>(L, op);
  case 2: return launch_streamv<T, 2, W, RQ>(L, op);
  case 3: return launch_streamv<T, 3, W, RQ>(L, op);
  case 4: return launch_streamv<T, 4, W, RQ>(L, op);
  }
  return strata__fail(L->ctx, STRATA_EINVAL, "streamcp: radius %d", op->radius);
}

template <typename T, int V, int W>
strata_status stream_r(const strata__launch *L, const strata_stencil *op,
                       const char *name) {
  switch (op->radius) {
  case 1: return launch_stream<T, 1, V, W>(L, op, name);
  case 2: return launch_stream<T, 2, V, W>(L, op, name);
  case 3: return launch_stream<T, 3, V, W>(L, op, name);
  case 4: return launch_stream<T, 4, V, W>(L, op, name);
  }
  return strata__fail(L->ctx, STRATA_EINVAL, "%s: radius %d", name, op->radius);
}

template <typename T>
strata_status stream_t(const strata__launch *L, const strata_stencil *op,
                       int mode) {
  constexpr int VV = 16 / sizeof(T);
  if (mode == 0) return stream_r<T, 1, 1>(L, op, "stream");
  if (mode == 1)
    return L->block[2] == 2 ? stream_r<T, VV, 2>(L, op, "streamv")
                            : stream_r<T, VV, 1>(L, op, "streamv");
  if (mode == 2)
    return L->block[2] == 2 ? streamv_r<T, 2, false>(L, op)
                            : streamv_r<T, 1, false>(L, op);
  return L->block[2] == 2 ? streamv_r<T, 2, true>(L, op)
                          : streamv_r<T, 1, true>(L, op);
}

} // namespace

strata_status strata__cu_stream(const strata__launch *L,
                                const strata_stencil *op, int mode) {
  const int *b = L->block;
  const int vector = mode > 0;
  const char *name = mode == 0   ? "stream"
                     : mode == 1 ? "streamv"
                     : mode == 2 ? "streamcp"
                                 : "streamrq";
  if (b[0] < 1 || b[1] < 1 || b[0] * b[1] > 512 ||
      (vector ? (b[2] != 1 && b[2] != 2) : b[2] != 1))
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block %dx%dx%d is not valid (x threads, y "
                        "threads, rows per thread: at most 512 threads; rows "
                        "per thread %s)",
                        name, b[0], b[1], b[2], vector ? "1 or 2" : "1");
  if (op->kind != STRATA_STENCIL_STAR || op->dims != 3)
    return strata__fail(L->ctx, STRATA_ENOTSUP,
                        "%s: only 3D star stencils", name);
  return L->prec == 4 ? stream_t<float>(L, op, mode)
                      : stream_t<double>(L, op, mode);
}

