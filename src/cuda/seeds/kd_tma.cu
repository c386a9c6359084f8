/* kdtma / kdws: the plane accumulation of the radius-1 3D operators
 * (kd_plane, seeds/cuda_kd.cuh) fed by Hopper bulk tensor copies, built
 * with STRATA_CUDA_SEEDS.  The ring's protocol is stated in
 * ops/star_tma.cuh. */
#include "ops/tma_launch.cuh"
#include "seeds/cuda_kd.cuh"

namespace {

/* kdtma / kdws: the plane-accumulation method for radius 1 (kd_plane: each
 * input plane consumed once, its in-plane sums added to the partial sums of
 * three output planes, W rows a thread) fed by one tensor copy a plane into a
 * ring of A+1 slots.  The tile of plane p is (BX+2)V columns (one vector of
 * halo each side) by BY*W+2 rows.  WS as in k_streamtma. */
/* WS: at most 256 consumers (8 warps and the copier: 9 warps keep the
 * register cap above 128; 17 would cut it to 96 and spill). */
template <bool WS> constexpr int kdtma_max_threads() { return WS ? 256 : 512; }

template <typename T, int MODE, int W, int A, bool WS>
__global__ void __launch_bounds__(kdtma_max_threads<WS>() + (WS ? 32 : 0))
    k_kdtma(const __grid_constant__ CUtensorMap tm, T *__restrict__ out,
            strata__geom g, const strata__w<T> w, int zchunk, int BX, int BY,
            int ox, int oy, int oz, int hint) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int V = 16 / sizeof(T);
  constexpr int NS = A + 1;
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(128) unsigned char sraw[];
  T *sm = reinterpret_cast<T *>(sraw);

  const int tid = threadIdx.x, nthr = BX * BY; /* consumers */
  const int TW = (BX + 2) * V, TH = BY * W + 2;
  const int bufsz = tma_slot_elems<T>(TW, TH);
  const int x0 = blockIdx.x * BX * V, y0 = blockIdx.y * BY * W;
  const int kz0 = blockIdx.z * zchunk;
  const int kz1 = min(g.nz, kz0 + zchunk);
  const int pfirst = kz0 - 1, plast = kz1; /* input planes */
  tma_ring<T, NS> ring(sm, bufsz, &tm, (unsigned)(TW * TH * sizeof(T)),
                       ox + x0 - V, oy + y0 - 1, oz);
  if (hint) ring.pol = l2_policy(hint);
  uint64_t *full = ring.full, *empty = ring.empty;

  if (!ring.template start<WS>(tid, nthr, pfirst, plast)) return;

  const int tx = tid % BX, ty = tid / BX;
  const int lane = tid & 31;
  const int nx = g.nx, ny = g.ny;
  const int i = x0 + tx * V, j0 = y0 + ty * W;
  const bool mine = i < nx;
  T *obase = out + i + (long long)j0 * g.osy + (long long)kz0 * g.osz;
  const int boff = (ty * W + 1) * TW + (1 + tx) * V;
  T X[W][V], Y[W][V], Z[W][V]; /* partial sums of three output planes */
#pragma unroll
  for (int t = 0; t < W; t++)
#pragma unroll
    for (int e = 0; e < V; e++) X[t][e] = Y[t][e] = Z[t][e] = T(0);
  int rs = 0;      /* ring slot of plane p */
  unsigned ph = 0; /* its fill's phase */
  /* plane p: ao completes output plane p - 1 (stored), am gets plane p's
   * own weights, an starts plane p + 1 */
  auto plane = [&](int p, T (&ao)[W][V], T (&am)[W][V], T (&an)[W][V]) {
    mbar_wait(&full[rs], ph);
    kd_plane<T, MODE, W, V>(sm + rs * bufsz + boff, TW, ao, am, an, w);
    if constexpr (WS) {
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty[rs]);
    }
    if (p > kz0) { /* obase: output plane p - 1 */
      if (mine) {
#pragma unroll
        for (int t = 0; t < W; t++)
          if (j0 + t < ny) {
            vec o;
#pragma unroll
            for (int e = 0; e < V; e++) o.v[e] = ao[t][e];
            store_masked<T, V>(obase + (long long)t * g.osy, o, nx - i);
          }
      }
      obase += g.osz;
    }
    if constexpr (!WS) {
      __syncthreads(); /* every thread is done with the tile of p */
      if (tid == 0 && p + NS <= plast) ring.copy(p + NS, rs);
    }
    if (++rs == NS) {
      rs = 0;
      ph ^= 1u;
    }
  };
  for (int p = pfirst; p <= plast; p += 3) { /* block-uniform bounds */
    plane(p, X, Y, Z);
    if (p + 1 <= plast) plane(p + 1, Y, Z, X);
    if (p + 2 <= plast) plane(p + 2, Z, X, Y);
  }
#endif
}

constexpr int kKdTmaAhead = 4; /* planes in flight ahead of the one in use */

template <typename T, int MODE, int W, bool WS>
strata_status launch_kdtma(const strata__launch *L, const strata_stencil *op) {
  constexpr int V = 16 / sizeof(T);
  const int BX = L->block[0], BY = L->block[1];
  auto kern = k_kdtma<T, MODE, W, kKdTmaAhead, WS>;
  tma_plan P;
  /* no L2 promotion: faster for the symmetric box than 128-byte promotion
   * (docs/performance.md#the-seeds-strategies--dstrata_cuda_seedson) */
  const int TW = (BX + 2) * V, TH = BY * W + 2;
  strata_status s = tma_prepare<T>(L, kern, WS ? "kdws" : "kdtma", W,
                                   kdtma_max_threads<WS>(), WS, TW, TH,
                                   tma_slot_elems<T>(TW, TH), kKdTmaAhead + 1,
                                   0, 2, &P);
  if (s != STRATA_OK) return s;
  kern<<<P.grid, dim3(P.threads, 1, 1), P.bytes, L->stream>>>(
      P.tm, (T *)L->out, L->g, strata__weights<T>(op), P.zchunk, BX, BY,
      L->in_org[0], L->in_org[1], L->in_org[2], tma_hint(L, 0));
  STRATA__LAUNCHED(L->ctx, WS ? "kdws kernel launch" : "kdtma kernel launch");
  return STRATA_OK;
}

template <typename T, int MODE, bool WS>
strata_status kdtma_w(const strata__launch *L, const strata_stencil *op) {
  switch (L->block[2]) {
  case 2: return launch_kdtma<T, MODE, 2, WS>(L, op);
  case 4: return launch_kdtma<T, MODE, 4, WS>(L, op);
  default: return launch_kdtma<T, MODE, 1, WS>(L, op);
  }
}

template <typename T, bool WS>
strata_status kdtma_t(const strata__launch *L, const strata_stencil *op) {
  switch (op->kind) {
  case STRATA_STENCIL_STAR: return kdtma_w<T, KD_STAR7, WS>(L, op);
  case STRATA_STENCIL_BOX_SYMMETRIC: return kdtma_w<T, KD_SYM27, WS>(L, op);
  default: return kdtma_w<T, KD_BOX27, WS>(L, op);
  }
}

} // namespace

strata_status strata__cu_kdtma(const strata__launch *L, const strata_stencil *op,
                               int ws) {
  const char *name = ws ? "kdws" : "kdtma";
  if (op->dims != 3 || op->radius != 1 ||
      (op->kind != STRATA_STENCIL_STAR && op->kind != STRATA_STENCIL_BOX &&
       op->kind != STRATA_STENCIL_BOX_SYMMETRIC))
    return strata__fail(L->ctx, STRATA_ENOTSUP,
                        "%s: only radius-1 3D stars and 3x3x3 boxes", name);
  strata_status s = tma_usable(L, name);
  if (s != STRATA_OK) return s;
  const int *b = L->block;
  if (b[2] != 1 && b[2] != 2 && b[2] != 4)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block z is the rows per thread, 1, 2 or 4 (got "
                        "%d)", name, b[2]);
  if (L->prec == 4)
    return ws ? kdtma_t<float, true>(L, op) : kdtma_t<float, false>(L, op);
  return ws ? kdtma_t<double, true>(L, op) : kdtma_t<double, false>(L, op);
}
