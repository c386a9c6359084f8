/* apply_fused in 3D for the symmetric 27-point box: k_fused3d_box,
 * register tiles with partial sums (launched by heat_fused3d_tune.cu).
 * Included once per precision (heat_fused3d_box_f32.cu, _f64.cu), so the
 * two halves of the instances compile side by side. */
#ifndef STRATA_CUDA_HEAT_FUSED3D_BOX_CUH
#define STRATA_CUDA_HEAT_FUSED3D_BOX_CUH
#include "heat/heat_internal.cuh"

namespace {

/* ---- 3D symmetric 27-point box: register tiles with partial sums --------
 *
 * k_fused3d_reg's tiles and barrier, with per-plane partial sums inside a
 * level: a plane r of level k - 1 (its 3 x 3 in-plane neighbourhood from
 * the rows above and below in shared memory and the lanes beside by
 * shuffle) is consumed once, adding "same" (C0 c + C1 f + C2 k4) to level
 * k's plane r and "nb" (C1 c + C2 f + C3 k4) to planes r - 1 and r + 1,
 * which completes plane r - 1.  f and k4 share the row sums h(y) = c(x-1, y)
 * + c(x+1, y): f = h(y) + c(y-1) + c(y+1), k4 = h(y-1) + h(y+1); the h
 * of the rows above and below come from their vectors and the lanes
 * beside (shuffles: publishing h as well took twice the shared-memory
 * traffic, the pipe that bounds these kernels).  A level
 * publishes its newest complete plane at the start of an iteration and the
 * next level consumes it after the one barrier, so level k completes plane
 * p - 2k + 1 when input plane p arrives (a lag of two planes a level).
 * Pinned points of a completed plane take the input's value (which the
 * level below holds there too), read again from global memory: pinned
 * points only occur in trips next to a Dirichlet ring.
 *
 * W = 2 rows a thread, as in k_fused3d_reg: between a thread's rows the
 * neighbour's plane and row sums are its own registers, so a row reads
 * one neighbour row a level from shared memory and forms one neighbour's
 * sums by shuffles, not two: fewer shared-memory reads, which bound the
 * kernel (docs/performance.md#heat). */


/* The in-plane sums of level l's row w: f (the 4 faces: h of the row and
 * the rows above and below) and k4 (the 4 corners: h of the rows above
 * and below).  The rows above and below come from shared memory (up, dn)
 * at the ends of my rows, their sums from the lanes beside (the same
 * operands and order as their own threads' h); between my rows, mine. */
template <typename T, int V, int S, int LR, int W>
__device__ __forceinline__ void box_sums(const T (&cur)[W][S][V],
                                         const T (&hs)[W][S][V], int w, int l,
                                         const T *up, const T *dn, T (&f)[V],
                                         T (&k4)[V]) {
  T upv[V], dnv[V], hu[V], hd[V];
  if (w == 0) {
    const strata__vec<T, V> u = lds_v<T, V>(up);
#pragma unroll
    for (int i = 0; i < V; i++) upv[i] = u.v[i];
    row_sums<T, V, LR>(upv, hu);
  } else {
#pragma unroll
    for (int i = 0; i < V; i++) {
      upv[i] = cur[w > 0 ? w - 1 : 0][l][i];
      hu[i] = hs[w > 0 ? w - 1 : 0][l][i];
    }
  }
  if (w == W - 1) {
    const strata__vec<T, V> d = lds_v<T, V>(dn);
#pragma unroll
    for (int i = 0; i < V; i++) dnv[i] = d.v[i];
    row_sums<T, V, LR>(dnv, hd);
  } else {
#pragma unroll
    for (int i = 0; i < V; i++) {
      dnv[i] = cur[w < W - 1 ? w + 1 : 0][l][i];
      hd[i] = hs[w < W - 1 ? w + 1 : 0][l][i];
    }
  }
#pragma unroll
  for (int i = 0; i < V; i++) {
    f[i] = hs[w][l][i] + upv[i] + dnv[i];
    k4[i] = hu[i] + hd[i];
  }
}

/* Level 0 of the plane each level consumes is the input (its slot in the
 * ring), level k the plane level k published (pub). */
template <typename T, int V, int S, int W>
__device__ __forceinline__ void box_consumed(const T *ring,
                                             const rows2w<T, V, S> (&pub)[W],
                                             int rw, T (&cur)[W][S][V]) {
#pragma unroll
  for (int w = 0; w < W; w++) {
    const strata__vec<T, V> x = lds_v<T, V>(ring + w * rw);
#pragma unroll
    for (int i = 0; i < V; i++) cur[w][0][i] = x.v[i];
  }
#pragma unroll
  for (int w = 0; w < W; w++)
#pragma unroll
    for (int k = 1; k < S; k++)
#pragma unroll
      for (int i = 0; i < V; i++) cur[w][k][i] = pub[w].v[k - 1][i];
}

/* The partial sums and the published planes of every level, 0 before
 * the walk. */
template <typename T, int V, int S, int W>
__device__ __forceinline__ void
box_rows_zero(rows2w<T, V, S> (&X)[W], rows2w<T, V, S> (&Y)[W],
              rows2w<T, V, S> (&Z)[W], rows2w<T, V, S> (&pub)[W]) {
#pragma unroll
  for (int w = 0; w < W; w++)
#pragma unroll
    for (int k = 0; k < S; k++)
#pragma unroll
      for (int i = 0; i < V; i++)
        X[w].v[k][i] = Y[w].v[k][i] = Z[w].v[k][i] = pub[w].v[k][i] = T(0);
}

/* The pinned points of my row w (y + w) in plane q: the input's values
 * instead of the level's (v), where the row, the plane (ypin, q outside
 * [clo, chi)) or the column (xpin, bit i) is pinned and the point lies
 * inside the allocation (outside, it is out of the cone). */
template <typename T, int V>
__device__ __forceinline__ void box_pinned(const fused_par<T> &P,
                                           const T *irow, int w, int y, int q,
                                           int c0, bool ypin, unsigned xpin,
                                           T (&v)[V]) {
  const unsigned pm = (ypin || q < P.clo[2] || q >= P.chi[2]) ? ~0u : xpin;
  const bool rd = y + w < P.yread && q >= -P.h[2] && q < P.zread;
#pragma unroll
  for (int i = 0; i < V; i++)
    if (((pm >> i) & 1u) && rd && c0 + i < P.xsafe)
      v[i] = __ldg(irow + (long long)w * P.isy + i + (long long)q * P.isz);
}

template <typename T, int V, int S, int NW, int LR, int W = 1>
__global__ void __launch_bounds__(NW * 32, 1) k_fused3d_box(const fused_par<T> P) {
  constexpr int HP = (S + V - 1) / V * V;
  constexpr int NR = NW * 32 / LR * W, RW = LR * V; /* rows; a row's values */
  constexpr int LSZ = NR * RW;                      /* a level's buffer */
  extern __shared__ __align__(16) unsigned char fb_smem[];
  const int row = (int)(threadIdx.x / LR) * W, lx = (int)(threadIdx.x % LR);
  T *exb = reinterpret_cast<T *>(fb_smem); /* [2][S][NR][RW] */
  /* my slots (rows row .. row + W - 1, lane lx): my row w at + w RW */
  T *ring = exb + (size_t)2 * S * LSZ +
            (W == 1 ? (size_t)threadIdx.x * V : (size_t)row * RW + lx * V);
  /* the tile setup below repeats k_fused3d_reg's on purpose: moved into
   * one shared function it changed ptxas's register allocation: both the
   * star and the box kernels spilled more */
  unsigned b = blockIdx.x;
  const int tx = (int)(b % (unsigned)P.ntl[0]);
  b /= (unsigned)P.ntl[0];
  const int ty = (int)(b % (unsigned)P.ntl[1]);
  const int tz = (int)(b / (unsigned)P.ntl[1]);
  int ycs, yo0, yo1;
  ytile(P, ty, NR, S, ycs, yo0, yo1);
  const int xo0 = tx * P.tile[0], xo1 = min(xo0 + P.tile[0], P.n[0]);
  const int z0 = tz * P.tile[2], z1 = min(z0 + P.tile[2], P.n[2]);
  const int c0 = xo0 - HP + lx * V;
  const int y = ycs + row; /* this thread's first row */
  unsigned xpin = 0;
#pragma unroll
  for (int i = 0; i < V; i++)
    if (c0 + i < P.clo[0] || c0 + i >= P.chi[0]) xpin |= 1u << i;
  bool ypin[W], slane[W], ldok[W];
#pragma unroll
  for (int w = 0; w < W; w++) ypin[w] = y + w < P.clo[1] || y + w >= P.chi[1];
  const bool tpin = xo0 - HP < P.clo[0] || xo0 - HP + RW > P.chi[0] ||
                    ycs < P.clo[1] || ycs + NR > P.chi[1];
#pragma unroll
  for (int w = 0; w < W; w++)
    slane[w] = c0 >= xo0 && c0 < xo1 && y + w >= yo0 && y + w < yo1;
  const int nvalid = xo1 - c0;
  T *orow = P.out + c0 + (long long)y * P.osy;
  const T *irow = P.in + c0 + (long long)y * P.isy;
#pragma unroll
  for (int w = 0; w < W; w++) ldok[w] = c0 + V <= P.xsafe && y + w < P.yread;
  /* my first row's slot and the rows above my first and below my last, in
   * a level's buffer */
  const int om = row * RW + lx * V,
            ou = (row > 0 ? row - 1 : 0) * RW + lx * V,
            od = (row + W < NR ? row + W : NR - 1) * RW + lx * V;

  const int pfirst = z0 - S, NI = (z1 - z0) + 3 * S - 1;
  auto fetch = [&](int p, int slot) {
#pragma unroll
    for (int w = 0; w < W; w++)
      if (ldok[w] && p < P.zread)
        cp_lane<T, V>(ring + (size_t)slot * LSZ + w * RW,
                      irow + (long long)w * P.isy + (long long)p * P.isz);
    cp_async_commit();
  };
#pragma unroll
  for (int j = 0; j < PD3W; j++) fetch(pfirst + j, j);

  /* per level k = 1..S (index k - 1): partial sums of planes r - 1, r,
   * r + 1 rotate through X, Y, Z; pub: the newest complete plane of
   * levels 1..S-1 (index k - 1), published next iteration; one of each a
   * row */
  rows2w<T, V, S> X[W], Y[W], Z[W], pub[W];
  box_rows_zero<T, V, S, W>(X, Y, Z, pub);

  int par = 0;
  auto one = [&](auto pin, rows2w<T, V, S>(&A0)[W], rows2w<T, V, S>(&A1)[W],
                 rows2w<T, V, S>(&A2)[W], int p, int slot) {
    constexpr bool PIN = decltype(pin)::value;
    T *ex = exb + (size_t)par * S * LSZ;
    cp_async_wait<PD3W - 1>();
    T cur[W][S][V]; /* the plane each level consumes: input, then pub */
    box_consumed<T, V, S, W>(ring + (size_t)slot * LSZ, pub, RW, cur);
    /* each level's plane to shared memory, and its row sums h = c(x - 1)
     * + c(x + 1) here */
    T hs[W][S][V];
#pragma unroll
    for (int w = 0; w < W; w++)
#pragma unroll
      for (int k = 0; k < S; k++) {
        strata__vec<T, V> x;
#pragma unroll
        for (int i = 0; i < V; i++) x.v[i] = cur[w][k][i];
        sts_v<T, V>(ex + (size_t)k * LSZ + om + w * RW, x);
        row_sums<T, V, LR>(cur[w][k], hs[w][k]);
      }
    __syncthreads();
#pragma unroll
    for (int k = 1; k <= S; k++) {
      const T *lv = ex + (size_t)(k - 1) * LSZ;
#pragma unroll
      for (int w = 0; w < W; w++) {
        const T *c = cur[w][k - 1];
        T f[V], k4[V];
        box_sums<T, V, S, LR, W>(cur, hs, w, k - 1, lv + ou, lv + od, f, k4);
        const int rr = p - 2 * (k - 1); /* the plane consumed */
        T v[V];
#pragma unroll
        for (int i = 0; i < V; i++) {
          const T same = strata__pt_sym27_plane(P.C, c[i], f[i], k4[i]);
          const T nb = strata__pt_sym27_plane(P.C + 1, c[i], f[i], k4[i]);
          v[i] = A0[w].v[k - 1][i] + nb; /* plane rr - 1 complete */
          A1[w].v[k - 1][i] += same;
          A2[w].v[k - 1][i] = nb;
        }
        const int q = rr - 1;
        if (k < S) {
          if (PIN)
            box_pinned<T, V>(P, irow, w, y, q, c0, ypin[w], xpin, v);
#pragma unroll
          for (int i = 0; i < V; i++) pub[w].v[k - 1][i] = v[i];
        } else if (slane[w] && q >= z0 && q < z1) {
          store_lane<T, V>(orow, w, q, v, nvalid, P);
        }
      }
    }
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
    /* the trip completes planes p - 2S + 1 .. p + 1 at levels 1 .. S */
    if (tpin || p - 2 * S + 1 < P.clo[2] || p + 1 >= P.chi[2])
      trip(std::true_type{}, p);
    else
      trip(std::false_type{}, p);
  }
  cp_async_wait<0>();
}

} // namespace

namespace strata_cuheat {

template <typename T> fz_kern<T> fz3_kernel_box(int s, const tile3 &c) {
  constexpr int VV = 16 / (int)sizeof(T);
  const int code = c.V * 10000 + c.NW * 100 + c.LR;
  if (c.W == 2) {
    switch (s * 1000000 + code) {
#define FB3W(q, nw)                                                            \
  case q * 1000000 + VV * 10000 + nw * 100 + 32:                               \
    return k_fused3d_box<T, VV, q, nw, 32, 2>;
      FB3W(1, 16) FB3W(2, 16) FB3W(1, 12) FB3W(2, 12)
#undef FB3W
    }
    return nullptr;
  }
  if (c.W != 1) return nullptr;
  switch (s * 1000000 + code) {
#define FB3(q, v, nw, lr)                                                      \
  case q * 1000000 + v * 10000 + nw * 100 + lr:                                \
    return k_fused3d_box<T, v, q, nw, lr>;
    FB3(1, VV, 16, 32) FB3(1, VV, 16, 16) FB3(1, VV / 2, 32, 32)
    FB3(1, VV, 24, 16)
    FB3(2, VV, 16, 32) FB3(2, VV, 16, 16) FB3(2, VV / 2, 32, 32)
    FB3(2, VV, 24, 16)
#undef FB3
  }
  return nullptr;
}

} // namespace strata_cuheat

#endif
