/* apply_fused in 1D and 2D: k_fused2d (the whole tile region in shared
 * memory, two buffers) and k_fused2d_warp (2D radius 1, warp strips).  See
 * heat_fused3d.cu for the scheme. */
#include "heat/heat_internal.cuh"

namespace {

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
 * The 5-point star is what the 2D heat solver fuses, and the tile kernel above
 * spends its time in shared memory and barriers
 * (docs/performance.md#heat).  Here a warp owns a strip of 32 V columns (V
 * values, 16 bytes, a lane) and a chunk of rows [y0, y1); it walks the input
 * rows p = y0 - S .. y1 + S - 1 once.  Time level k (1..S) computes row p - k
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

} // namespace

namespace strata_cuheat {

template <typename T>
strata_status fused2d(strata_context *ctx, fused_par<T> &P, int D, int R,
                      bool sym, int s, const strata_field *in) {
  strata__cuda_state *st = strata__cu_state(ctx);
  const int H = R * s;
  const size_t smax = st->prop.sharedMemPerBlockOptin;
  if (D == 2 && R == 1 && !sym && s <= 8) {
    /* warp strips (k_fused2d_warp): 16 bytes a lane (32 bytes a lane,
     * V = 8 fp32 / 4 fp64, was no faster: fewer warps fit) */
    constexpr int V = 16 / (int)sizeof(T);
    const int HP = (s + V - 1) / V * V;
    const int ae = STRATA__ALIGN_BYTES / (int)sizeof(T);
    P.tile[0] = 32 * V - 2 * HP;
    P.ntl[0] = (P.n[0] + P.tile[0] - 1) / P.tile[0];
    P.xsafe = (int)in->L.pitch_x - ae; /* a row holds columns [-ae, xsafe) */
    P.yread = P.lread;
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
     * 16 s rows (at most 1/8 extra reads); otherwise as many chunks as fill
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
    const long fr = strata__tuning_long(ctx, "fused2d_rows", 0);
    if (fr > 0) rows = fr < P.n[1] ? (int)fr : P.n[1];
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

  return strata__fail(ctx, STRATA_EINVAL,
                      "apply_fused: %dD is not supported", D);
}

template strata_status fused2d<float>(strata_context *, fused_par<float> &,
                                      int, int, bool, int,
                                      const strata_field *);
template strata_status fused2d<double>(strata_context *, fused_par<double> &,
                                       int, int, bool, int,
                                       const strata_field *);

} // namespace strata_cuheat
