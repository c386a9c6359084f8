/* The plane accumulation of the radius-1 3D operators (the 7-point star,
 * the symmetric 27-point stencil with C0..C3, the general 3x3x3 box), built
 * with STRATA_CUDA_SEEDS, and the ceiling of its halo reads.
 *
 * kd  (V = 1): a block of BX x BY threads reads one XY tile of the input
 *     with its halo into shared memory, remapped onto a wider block so the
 *     whole tile is M+1 coalesced loads (32x6 threads read a 48x8 tile as two
 *     48x4 loads in fp32: the x halo is one 32-byte sector each side, 8
 *     floats; in fp64 16x6 threads read 24x8 as two loads).  Each input plane
 *     is used for three output planes: partial sums for planes k-1, k, k+1
 *     stay in registers, so only one plane lives in shared memory.  The
 *     symmetric stencil is computed with common-subexpression elimination
 *     (18 flops instead of 30).  The next plane is prefetched into registers
 *     while the current one is computed (software prefetching), and the tile
 *     is double-buffered, so one barrier per plane.
 * kdv (V = 16 bytes / sizeof(T)): the same with 16-byte vectors: a thread
 *     owns V consecutive points, the x halo is one vector each side; block
 *     z = 2 selects the build capped at 64 registers.
 * kdcp: kdv whose tiles are copied by cp.async three planes ahead into a
 *     ring of five (no register staging); block z = W rows per thread.
 *
 * copycube_halo:  the kd kernel's reads (tile and halo, fp32 32x6 remapped to
 *                 48x4), writing the tile's interior: the cost of the halo
 *                 reads alone. */
#include "engine/cuda_device.cuh"
#include "seeds/cuda_kd.cuh"

namespace {

constexpr int kKdSlots = 4;

/* CAP: compiled for at most 64 registers (two 512-thread blocks, or eight
 * of 128, per multiprocessor); uncapped, the symmetric mode takes 76 and
 * loses a quarter of the resident warps, at the price of a few spills. */
template <typename T, int MODE, int V>
__device__ __forceinline__ void kd_body(const T *__restrict__ in,
                                        T *__restrict__ out, strata__geom g,
                                        const strata__w<T> &w, int zchunk) {
  constexpr int HX = V == 1 ? (int)(32 / sizeof(T)) : V; /* halo elements */
  constexpr int HV = HX / V;                             /* halo vectors */
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(16) unsigned char sraw[];
  T *sm = reinterpret_cast<T *>(sraw);

  const int BX = blockDim.x, BY = blockDim.y;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * BX + tx, nthr = BX * BY;
  const int TWv = BX + 2 * HV, TW = TWv * V, TH = BY + 2;
  const int bufsz = TW * TH, NT = TWv * TH;
  const int x0 = blockIdx.x * BX * V, y0 = blockIdx.y * BY;
  const int kz0 = blockIdx.z * zchunk;
  const int kz1 = min(g.nz, kz0 + zchunk);
  const int nx = g.nx, ny = g.ny;
  const long long sz = g.sz;

  /* the remapped tile: slot s of thread tid is tile vector tid + s*nthr */
  long long off[kKdSlots];
  int so[kKdSlots];
  bool ok[kKdSlots], act[kKdSlots];
#pragma unroll
  for (int s = 0; s < kKdSlots; s++) {
    const int q = tid + s * nthr;
    act[s] = q < NT;
    const int row = q / TWv, col = q % TWv;
    const int x = x0 + (col - HV) * V, y = y0 - 1 + row;
    ok[s] = act[s] && x <= nx && y <= ny;
    off[s] = x + (long long)y * g.sy;
    so[s] = row * TW + col * V;
  }

  const int pfirst = MODE == KD_COPY ? kz0 : kz0 - 1;
  const int plast = MODE == KD_COPY ? kz1 - 1 : kz1;
  vec ld[kKdSlots];
#pragma unroll
  for (int s = 0; s < kKdSlots; s++)
    ld[s] = ok[s] ? ldg_v<T, V>(in + off[s] + (long long)pfirst * sz)
                  : zero_v<T, V>();

  const int i = x0 + tx * V, j = y0 + ty;
  const bool mine = i < nx && j < ny;
  T a0[1][V], a1[1][V], a2[1][V]; /* partial sums of planes p-1, p, p+1 */
#pragma unroll
  for (int e = 0; e < V; e++) a0[0][e] = a1[0][e] = a2[0][e] = T(0);

  int buf = 0;
  for (int p = pfirst; p <= plast; p++) {
    T *sb = sm + buf * bufsz;
#pragma unroll
    for (int s = 0; s < kKdSlots; s++)
      if (act[s]) sts_v<T, V>(sb + so[s], ld[s]);
    if (p < plast) {
#pragma unroll
      for (int s = 0; s < kKdSlots; s++)
        ld[s] = ok[s] ? ldg_v<T, V>(in + off[s] + (long long)(p + 1) * sz)
                      : zero_v<T, V>();
    }
    __syncthreads();

    const T *base = sb + (ty + 1) * TW + (HV + tx) * V;
    if constexpr (MODE == KD_COPY) {
      if (mine)
        store_masked<T, V>(out + i + (long long)j * g.osy + (long long)p * g.osz,
                           lds_v<T, V>(base), nx - i);
    } else {
      kd_plane<T, MODE, 1, V>(base, TW, a0, a1, a2, w);
      if (p - 1 >= kz0 && mine) {
        vec o;
#pragma unroll
        for (int e = 0; e < V; e++) o.v[e] = a0[0][e];
        store_masked<T, V>(out + i + (long long)j * g.osy +
                               (long long)(p - 1) * g.osz,
                           o, nx - i);
      }
#pragma unroll
      for (int e = 0; e < V; e++) {
        a0[0][e] = a1[0][e];
        a1[0][e] = a2[0][e];
      }
    }
    buf ^= 1;
  }
}

template <typename T, int MODE, int V>
__global__ void __launch_bounds__(512)
    k_kd(const T *__restrict__ in, T *__restrict__ out, strata__geom g,
         const strata__w<T> w, int zchunk) {
  kd_body<T, MODE, V>(in, out, g, w, zchunk);
}
template <typename T, int MODE, int V>
__global__ void __launch_bounds__(512, 2)
    k_kd_cap(const T *__restrict__ in, T *__restrict__ out, strata__geom g,
             const strata__w<T> w, int zchunk) {
  kd_body<T, MODE, V>(in, out, g, w, zchunk);
}

/* kdcp: kd with 16-byte vectors, its tiles copied global -> shared with
 * cp.async A planes ahead into a ring of A + 2 tiles (no register staging,
 * one barrier per plane: the tile overwritten, plane p-2, was last read
 * before the previous barrier).  A thread owns V columns of W rows (block
 * z = W): the per-plane work of a thread (copies, barrier, addresses) is
 * shared by 4 W points, and the rows between a thread's outputs are read
 * once for all of them.  The symmetric box shares its in-plane sums between
 * rows: h(y) = c(x-1, y) + c(x+1, y), then f = h(y) + c(y-1) + c(y+1) and
 * k4 = h(y-1) + h(y+1), 4 adds a point instead of 6.  The partial sums of
 * the three output planes rotate between three named sets by unrolling
 * three planes a trip, so the rotation costs no moves. */
template <int W> __host__ __device__ constexpr int kdcp_slots() { return W + 3; }

template <typename T, int MODE, int A, int W>
__global__ void __launch_bounds__(512)
    k_kdv(const T *__restrict__ in, T *__restrict__ out, strata__geom g,
          const strata__w<T> w, int zchunk) {
  constexpr int V = 16 / sizeof(T);
  constexpr int NS = A + 2;
  constexpr int KS = kdcp_slots<W>();
  typedef strata__vec<T, V> vec;
  extern __shared__ __align__(16) unsigned char sraw[];
  T *sm = reinterpret_cast<T *>(sraw);

  const int BX = blockDim.x, BY = blockDim.y;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * BX + tx, nthr = BX * BY;
  const int TWv = BX + 2, TW = TWv * V, TH = BY * W + 2;
  const int bufsz = TW * TH, NT = TWv * TH;
  const int x0 = blockIdx.x * BX * V, y0 = blockIdx.y * BY * W;
  const int kz0 = blockIdx.z * zchunk;
  const int kz1 = min(g.nz, kz0 + zchunk);
  const int nx = g.nx, ny = g.ny;
  const long long sz = g.sz;

  long long off[KS];
  int so[KS];
  bool ok[KS], act[KS];
#pragma unroll
  for (int s = 0; s < KS; s++) {
    const int q = tid + s * nthr;
    act[s] = q < NT;
    const int row = q / TWv, col = q % TWv;
    const int x = x0 + (col - 1) * V, y = y0 - 1 + row;
    ok[s] = act[s] && x <= nx && y <= ny;
    off[s] = x + (long long)y * g.sy;
    so[s] = row * TW + col * V;
  }
  const int pfirst = kz0 - 1, plast = kz1;
  auto issue = [&](int p, int slot) {
    if (p <= plast) {
      T *sb = sm + slot * bufsz;
      const T *pb = in + (long long)p * sz;
#pragma unroll
      for (int s = 0; s < KS; s++)
        if (act[s]) cp_async16(sb + so[s], ok[s] ? pb + off[s] : in, ok[s] ? 16 : 0);
    }
    cp_async_commit();
  };
  for (int p = pfirst; p < pfirst + A; p++) issue(p, p - pfirst);

  const int i = x0 + tx * V, j0 = y0 + ty * W;
  const bool mine = i < nx;
  T *obase = out + i + (long long)j0 * g.osy;
  T X[W][V], Y[W][V], Z[W][V]; /* partial sums of three output planes */
#pragma unroll
  for (int t = 0; t < W; t++)
#pragma unroll
    for (int e = 0; e < V; e++) X[t][e] = Y[t][e] = Z[t][e] = T(0);
  int rslot = 0; /* ring slot of plane p: (p - pfirst) mod NS */
  /* plane p: ao completes output plane p - 1 (stored), am gets plane p's
   * own weights, an starts plane p + 1 */
  auto plane = [&](int p, T (&ao)[W][V], T (&am)[W][V], T (&an)[W][V]) {
    int ws = rslot + A;
    if (ws >= NS) ws -= NS;
    issue(p + A, ws);
    cp_async_wait<A>();
    __syncthreads();
    const T *base = sm + rslot * bufsz + (ty * W + 1) * TW + (1 + tx) * V;
    kd_plane<T, MODE, W, V>(base, TW, ao, am, an, w);
    if (p - 1 >= kz0 && mine) {
#pragma unroll
      for (int t = 0; t < W; t++)
        if (j0 + t < ny) {
          vec o;
#pragma unroll
          for (int e = 0; e < V; e++) o.v[e] = ao[t][e];
          store_masked<T, V>(obase + (long long)t * g.osy +
                                 (long long)(p - 1) * g.osz,
                             o, nx - i);
        }
    }
    rslot = rslot + 1 == NS ? 0 : rslot + 1;
  };
  for (int p = pfirst; p <= plast; p += 3) { /* block-uniform bounds */
    plane(p, X, Y, Z);
    if (p + 1 <= plast) plane(p + 1, Y, Z, X);
    if (p + 2 <= plast) plane(p + 2, Z, X, Y);
  }
  cp_async_wait<0>();
}

template <typename T> constexpr int kd_default_bx() { return sizeof(T) == 4 ? 32 : 16; }

template <typename T, int MODE, int V, bool CAP = false>
strata_status launch_kd(const strata__launch *L, const strata__w<T> &w,
                        const int block[2], const char *name) {
  constexpr int HX = V == 1 ? (int)(32 / sizeof(T)) : V;
  constexpr int HV = HX / V;
  const int BX = block[0], BY = block[1], nthr = BX * BY;
  const int NT = (BX + 2 * HV) * (BY + 2);
  if (NT > kKdSlots * nthr)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block %dx%d is too small: its tile of %d vectors "
                        "exceeds %d per thread",
                        name, BX, BY, NT, kKdSlots);
  const size_t bytes = 2 * (size_t)(BX + 2 * HV) * V * (BY + 2) * sizeof(T);
  auto kern = k_kd<T, MODE, V>;
  if constexpr (CAP) kern = k_kd_cap<T, MODE, V>;
  strata_status s = strata__smem_opt_in(L, kern, bytes, name);
  if (s != STRATA_OK) return s;
  int per_sm = 0;
  s = strata__occupancy(L, kern, nthr, bytes, &per_sm);
  if (s != STRATA_OK) return s;
  const long long gx = ((L->g.nx + V - 1) / V + BX - 1) / BX;
  const long long gy = (L->g.ny + BY - 1) / BY;
  if (gy > 65535)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: %d rows need %lld blocks along y (limit 65535)",
                        name, L->g.ny, gy);
  const int chunks = strata__cu_chunks(L, (int)(gx * gy), per_sm, L->g.nz,
                                      MODE == KD_COPY ? 0 : 2);
  const int zchunk = (L->g.nz + chunks - 1) / chunks;
  dim3 grid((unsigned)gx, (unsigned)gy,
            (unsigned)((L->g.nz + zchunk - 1) / zchunk));
  kern<<<grid, dim3(BX, BY, 1), bytes, L->stream>>>(
      (const T *)L->in, (T *)L->out, L->g, w, zchunk);
  STRATA__LAUNCHED(L->ctx, "kd kernel launch");
  return STRATA_OK;
}

constexpr int kKdAhead = 3;

template <typename T, int MODE, int W>
strata_status launch_kdv(const strata__launch *L, const strata__w<T> &w,
                         const char *name) {
  constexpr int V = 16 / sizeof(T);
  constexpr int NS = kKdAhead + 2;
  const int BX = L->block[0], BY = L->block[1], nthr = BX * BY;
  const int NT = (BX + 2) * (BY * W + 2);
  if (NT > kdcp_slots<W>() * nthr)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block %dx%dx%d is too small: its tile of %d "
                        "vectors exceeds %d per thread", name, BX, BY, W, NT,
                        kdcp_slots<W>());
  const size_t bytes = (size_t)NS * (BX + 2) * V * (BY * W + 2) * sizeof(T);
  auto kern = k_kdv<T, MODE, kKdAhead, W>;
  strata_status s = strata__smem_opt_in(L, kern, bytes, name);
  if (s != STRATA_OK) return s;
  int per_sm = 0;
  s = strata__occupancy(L, kern, nthr, bytes, &per_sm);
  if (s != STRATA_OK) return s;
  const long long gx = ((L->g.nx + V - 1) / V + BX - 1) / BX;
  const long long gy = (L->g.ny + BY * W - 1) / (BY * W);
  if (gy > 65535)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: %d rows need %lld blocks along y (limit 65535)",
                        name, L->g.ny, gy);
  const int chunks = strata__cu_chunks(L, (int)(gx * gy), per_sm, L->g.nz, 2);
  const int zchunk = (L->g.nz + chunks - 1) / chunks;
  dim3 grid((unsigned)gx, (unsigned)gy,
            (unsigned)((L->g.nz + zchunk - 1) / zchunk));
  kern<<<grid, dim3(BX, BY, 1), bytes, L->stream>>>(
      (const T *)L->in, (T *)L->out, L->g, w, zchunk);
  STRATA__LAUNCHED(L->ctx, "kdcp kernel launch");
  return STRATA_OK;
}

template <typename T, int MODE>
strata_status launch_kdv_w(const strata__launch *L, const strata__w<T> &w,
                           const char *name) {
  switch (L->block[2]) {
  case 2: return launch_kdv<T, MODE, 2>(L, w, name);
  case 4: return launch_kdv<T, MODE, 4>(L, w, name);
  default: return launch_kdv<T, MODE, 1>(L, w, name);
  }
}

template <typename T, int V, bool CP>
strata_status kd_mode(const strata__launch *L, const strata_stencil *op,
                      const char *name) {
  const strata__w<T> w = strata__weights<T>(op);
  if constexpr (CP) {
    switch (op->kind) {
    case STRATA_STENCIL_STAR: return launch_kdv_w<T, KD_STAR7>(L, w, name);
    case STRATA_STENCIL_BOX_SYMMETRIC:
      return launch_kdv_w<T, KD_SYM27>(L, w, name);
    case STRATA_STENCIL_BOX: return launch_kdv_w<T, KD_BOX27>(L, w, name);
    default: break;
    }
  } else if (V > 1 && L->block[2] == 2) { /* kdv, the 64-register build */
    switch (op->kind) {
    case STRATA_STENCIL_STAR:
      return launch_kd<T, KD_STAR7, V, true>(L, w, L->block, name);
    case STRATA_STENCIL_BOX_SYMMETRIC:
      return launch_kd<T, KD_SYM27, V, true>(L, w, L->block, name);
    case STRATA_STENCIL_BOX:
      return launch_kd<T, KD_BOX27, V, true>(L, w, L->block, name);
    default: break;
    }
  } else {
    switch (op->kind) {
    case STRATA_STENCIL_STAR: return launch_kd<T, KD_STAR7, V>(L, w, L->block, name);
    case STRATA_STENCIL_BOX_SYMMETRIC:
      return launch_kd<T, KD_SYM27, V>(L, w, L->block, name);
    case STRATA_STENCIL_BOX: return launch_kd<T, KD_BOX27, V>(L, w, L->block, name);
    default: break;
    }
  }
  return strata__fail(L->ctx, STRATA_ENOTSUP, "%s: operator not supported", name);
}

/* copycube_halo: the kd kernel's reads (tile and halo) writing the tile's
 * interior, at kd's default shape. */
template <typename T>
strata_status copy_halo_t(const strata__launch *L) {
  strata__w<T> w;
  memset(&w, 0, sizeof w);
  const int block[2] = {kd_default_bx<T>(), 6};
  return launch_kd<T, KD_COPY, 1>(L, w, block, "copycube_halo");
}

} // namespace


strata_status strata__cu_kd(const strata__launch *L, const strata_stencil *op,
                            int mode) {
  const int *b = L->block;
  const char *name = mode == 0 ? "kd" : mode == 1 ? "kdv" : "kdcp";
  if (b[0] < 1 || b[1] < 1 || b[0] * b[1] > 512 ||
      (mode == 1   ? (b[2] != 1 && b[2] != 2)
       : mode == 2 ? (b[2] != 1 && b[2] != 2 && b[2] != 4)
                   : b[2] != 1))
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block %dx%dx%d is not valid (a 2D block of at "
                        "most 512 threads%s)", name, b[0], b[1], b[2],
                        mode == 1   ? "; z 1, or 2 for the 64-register build"
                        : mode == 2 ? "; z = rows per thread, 1, 2 or 4"
                                    : "");
  if (op->dims != 3 || op->radius != 1)
    return strata__fail(L->ctx, STRATA_ENOTSUP,
                        "%s: only radius-1 3D operators", name);
  if (L->prec == 4)
    return mode == 0   ? kd_mode<float, 1, false>(L, op, name)
           : mode == 1 ? kd_mode<float, 4, false>(L, op, name)
                       : kd_mode<float, 4, true>(L, op, name);
  return mode == 0   ? kd_mode<double, 1, false>(L, op, name)
         : mode == 1 ? kd_mode<double, 2, false>(L, op, name)
                     : kd_mode<double, 2, true>(L, op, name);
}

strata_status strata__cu_copy_halo(const strata__launch *L) {
  return L->prec == 4 ? copy_halo_t<float>(L) : copy_halo_t<double>(L);
}
