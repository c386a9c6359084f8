/* apply_fused in 3D for the radius-1 star: k_fused3d_reg, register tiles
 * streamed along z (launched by heat_fused3d_tune.cu).
 * Included once per precision (heat_fused3d_reg_f32.cu, _f64.cu), so the
 * two halves of the instances compile side by side. */
#ifndef STRATA_CUDA_HEAT_FUSED3D_REG_CUH
#define STRATA_CUDA_HEAT_FUSED3D_REG_CUH
#include "heat/heat_internal.cuh"

namespace {

/* ---- 3D radius-1 star: a block streams an xy tile along z, registers ----
 *
 * The 3D version of k_fused2d_warp (planes for rows).  A block of NW warps
 * owns a tile of LR V columns x NR = 32 NW W / LR rows (a lane V columns
 * of W rows, LR lanes a row group: a warp is one group of 32 lanes or two
 * of 16) and a chunk of planes; it walks the input planes p = z0 - S ..
 * z1 + S - 1 once, level k computing plane p - k, two planes a level in
 * registers (rotated between X, Y, Z by three planes a trip).  z
 * neighbours are in the thread, x neighbours come by shuffle (width LR),
 * y neighbours through shared memory (but those between a thread's own
 * rows).  The point of the design: every in-plane neighbour a level needs
 * (of plane p - k at level k - 1) was computed in the previous iteration,
 * so each iteration writes the middle planes of all S levels to shared
 * memory at once and needs one barrier, not one per level (two buffers by
 * parity, so a buffer is rewritten only after the next barrier).  Inputs
 * arrive by cp.async into a ring of PD3W planes (each lane its own V
 * values).  Outputs: columns [HP, LR V - HP) of the tile and the rows
 * ytile gives.  Pinned points keep the level below's value, as in 2D.
 *
 * W = 2 rows a thread (512 threads at up to 128 registers in place of
 * 1024 at 64, the same tile): the y neighbour between a thread's rows is
 * in its registers, so a row reads one neighbour row a level from shared
 * memory, not two.  The shared-memory pipe bounds the W = 1 kernel (ncu:
 * MIO throttle and short scoreboard stalls); W = 2 cuts its wavefronts
 * and runs faster in both precisions (docs/performance.md#heat). */


/* W: rows a thread (1, or 2: the y neighbour between a thread's two rows
 * is in its registers, so a plane reads 3 / 2 rows a row from shared
 * memory in place of 2, for half the threads over the same tile) */
template <typename T, int V, int S, int NW, int LR, int W = 1>
__global__ void __launch_bounds__(NW * 32, NW <= 16 && W == 1 ? 2 : 1)
    k_fused3d_reg(const fused_par<T> P) {
  constexpr int HP = (S + V - 1) / V * V;
  constexpr int NR = NW * 32 / LR * W, RW = LR * V; /* rows; a row's values */
  constexpr int LSZ = NR * RW;                      /* a level's buffer */
  extern __shared__ __align__(16) unsigned char f3_smem[];
  const int row = (int)(threadIdx.x / LR) * W, lx = (int)(threadIdx.x % LR);
  T *exb = reinterpret_cast<T *>(f3_smem); /* [2][S][NR][RW] */
  /* my slots (rows row .. row + W - 1, lane lx): my row w at + w RW
   * (threadIdx.x V when W = 1, the same offset: written so, ptxas spills
   * less in the one-row instances) */
  T *ring = exb + (size_t)2 * S * LSZ +
            (W == 1 ? (size_t)threadIdx.x * V : (size_t)row * RW + lx * V);
  T *mine =
      exb + (W == 1 ? (size_t)threadIdx.x * V : (size_t)row * RW + lx * V);
  /* the slots of the rows above and below: kept in registers for fp64,
   * recomputed every plane for fp32 (ptxas, s = 3 at 64 registers: fp32
   * spills 48 / 112 bytes when they are kept and 4 / 8 when recomputed,
   * fp64 0 / 0 kept and 8 / 28 recomputed) */
  constexpr bool KEEP = sizeof(T) == 8;
  const int ouk = (row > 0 ? row - 1 : 0) * RW + lx * V,
            odk = (row + W < NR ? row + W : NR - 1) * RW + lx * V;
  unsigned b = blockIdx.x;
  const int tx = (int)(b % (unsigned)P.ntl[0]);
  b /= (unsigned)P.ntl[0];
  const int ty = (int)(b % (unsigned)P.ntl[1]);
  const int tz = (int)(b / (unsigned)P.ntl[1]);
  int ycs, yo0, yo1;
  ytile(P, ty, NR, S, ycs, yo0, yo1);
  const int xo0 = tx * P.tile[0], xo1 = min(xo0 + P.tile[0], P.n[0]);
  const int z0 = tz * P.tile[2], z1 = min(z0 + P.tile[2], P.n[2]);
  const int c = xo0 - HP + lx * V; /* this lane's first column */
  const int y = ycs + row;         /* this thread's first row */
  unsigned xpin = 0;
#pragma unroll
  for (int i = 0; i < V; i++)
    if (c + i < P.clo[0] || c + i >= P.chi[0]) xpin |= 1u << i;
  bool ypin[W], slane[W], ldok[W];
#pragma unroll
  for (int w = 0; w < W; w++) ypin[w] = y + w < P.clo[1] || y + w >= P.chi[1];
  /* block-uniform: does the tile hold pinned columns or rows? */
  const bool tpin = xo0 - HP < P.clo[0] || xo0 - HP + RW > P.chi[0] ||
                    ycs < P.clo[1] || ycs + NR > P.chi[1];
#pragma unroll
  for (int w = 0; w < W; w++)
    slane[w] = c >= xo0 && c < xo1 && y + w >= yo0 && y + w < yo1;
  const int nvalid = xo1 - c;
  T *orow = P.out + c + (long long)y * P.osy;
  const T *irow = P.in + c + (long long)y * P.isy;
#pragma unroll
  for (int w = 0; w < W; w++) ldok[w] = c + V <= P.xsafe && y + w < P.yread;
  const long long isz = P.isz;
  const int zread = P.zread;

  const int pfirst = z0 - S, NI = (z1 - z0) + 2 * S;
  auto fetch = [&](int p, int slot) {
#pragma unroll
    for (int w = 0; w < W; w++)
      if (ldok[w] && p < zread)
        cp_lane<T, V>(ring + (size_t)slot * LSZ + w * RW,
                      irow + (long long)w * P.isy + (long long)p * isz);
    cp_async_commit();
  };
#pragma unroll
  for (int j = 0; j < PD3W; j++) fetch(pfirst + j, j);

  rows2w<T, V, S> X[W], Y[W], Z[W];
#pragma unroll
  for (int w = 0; w < W; w++)
#pragma unroll
    for (int k = 0; k < S; k++)
#pragma unroll
      for (int i = 0; i < V; i++)
        X[w].v[k][i] = Y[w].v[k][i] = Z[w].v[k][i] = T(0);

  int par = 0;
  /* one plane: publish the middle planes, barrier, compute all levels */
  auto one = [&](auto pin, rows2w<T, V, S>(&o)[W], rows2w<T, V, S>(&m)[W],
                 rows2w<T, V, S>(&n)[W], int p, int slot) {
    constexpr bool PIN = decltype(pin)::value;
    T *ex = exb + (size_t)par * S * LSZ;
#pragma unroll
    for (int w = 0; w < W; w++)
#pragma unroll
      for (int k = 0; k < S; k++) {
        strata__vec<T, V> x;
#pragma unroll
        for (int i = 0; i < V; i++) x.v[i] = m[w].v[k][i];
        sts_v<T, V>(mine + (size_t)par * S * LSZ + (size_t)k * LSZ + w * RW,
                    x);
      }
    cp_async_wait<PD3W - 1>();
    T in[W][V];
#pragma unroll
    for (int w = 0; w < W; w++) {
      const strata__vec<T, V> x =
          lds_v<T, V>(ring + (size_t)slot * LSZ + w * RW);
#pragma unroll
      for (int i = 0; i < V; i++) in[w][i] = x.v[i];
    }
    __syncthreads();
    int ou = ouk, od = odk;
    if constexpr (!KEEP) {
      const int r3 = (int)(threadIdx.x / LR) * W, l3 = (int)(threadIdx.x % LR);
      ou = (r3 > 0 ? r3 - 1 : 0) * RW + l3 * V;
      od = (r3 + W < NR ? r3 + W : NR - 1) * RW + l3 * V;
    }
    bool st[W];
#pragma unroll
    for (int w = 0; w < W; w++) st[w] = slane[w] && p - S >= z0 && p - S < z1;
    plane3w<T, V, S, PIN, LR, W>(o, m, n, ex, LSZ, ou, od, in, p, xpin, ypin,
                                 st, orow, nvalid, P);
    fetch(p + PD3W, slot);
    par ^= 1;
  };
  auto trip = [&](auto pin, int p) {
    one(pin, X, Y, Z, p, 0);
    one(pin, Y, Z, X, p + 1, 1);
    one(pin, Z, X, Y, p + 2, 2);
  };
#pragma unroll 1
  for (int it = 0; it < NI; it += 3) {
    const int p = pfirst + it;
    /* levels 1 .. S - 1 of planes p .. p + 2 compute planes p - S + 1 ..
     * p + 1 (uniform over the block) */
    if (tpin || p - S + 1 < P.clo[2] || p + 1 >= P.chi[2])
      trip(std::true_type{}, p);
    else
      trip(std::false_type{}, p);
  }
  cp_async_wait<0>();
}

} // namespace

namespace strata_cuheat {

template <typename T> fz_kern<T> fz3_kernel_reg(int s, const tile3 &c) {
  constexpr int VV = 16 / (int)sizeof(T);
  const int code = c.V * 10000 + c.NW * 100 + c.LR;
  if (c.W == 2) {
    switch (s * 1000000 + code) {
#define FR3W(q)                                                                \
  case q * 1000000 + VV * 10000 + 1632:                                        \
    return k_fused3d_reg<T, VV, q, 16, 32, 2>;                                 \
  case q * 1000000 + VV * 10000 + 1616:                                        \
    return k_fused3d_reg<T, VV, q, 16, 16, 2>;
      FR3W(1) FR3W(2) FR3W(3) FR3W(4)
#undef FR3W
    }
    return nullptr;
  }
  if (c.W != 1) return nullptr;
  switch (s * 1000000 + code) {
#define FR3(q)                                                                 \
  case q * 1000000 + VV * 10000 + 3232: return k_fused3d_reg<T, VV, q, 32, 32>; \
  case q * 1000000 + VV * 10000 + 3216: return k_fused3d_reg<T, VV, q, 32, 16>; \
  case q * 1000000 + VV * 10000 + 1632: return k_fused3d_reg<T, VV, q, 16, 32>; \
  case q * 1000000 + VV * 10000 + 1616: return k_fused3d_reg<T, VV, q, 16, 16>; \
  case q * 1000000 + VV * 10000 + 2416: return k_fused3d_reg<T, VV, q, 24, 16>;
    FR3(1) FR3(2) FR3(3) FR3(4)
#undef FR3
  }
  return nullptr;
}

} // namespace strata_cuheat

#endif
