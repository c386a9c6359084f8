/* vec: the radius-1 3D star, and in 2D the stars (r = 1..4) and the general
 * 3x3 box (rows per thread in the role of planes; see "2D" below), in the
 * style of the d/dx pencil: a plain 3D launch grid, no long z walk and no
 * shared memory.  (The 3D stars of larger radius and the 3x3x3 boxes issue
 * too many L1 loads a vector this way: they run as streamtma / streamws and
 * as vecz, below.)
 *
 * A block of BX x BY threads (a multiple of 32 threads, whole warps) covers
 * BX 16-byte vectors along x, BY rows and Z consecutive planes (Z = block z
 * = 1, 2 or 4).  Each thread computes the Z points of its column for one
 * vector of x-points (4 floats / 2 doubles):
 *  - z: the column's planes k-r .. k+Z-1+r are loaded once as vectors and
 *    kept in registers;
 *  - y: the rows j +- m are vector loads from global memory (the
 *    neighbouring threads' own loads put them in L1 / L2);
 *  - x: the neighbours come from the adjacent lanes' vectors by a funnel of
 *    shuffles; lanes at the edge of a warp or of a block row load those few
 *    values as scalars (offsets +-1..r are not 16-byte aligned, so nothing
 *    here loads an unaligned vector).
 * Every thread of the block runs every shuffle (no early exit); the z loop is
 * uniform over the block.  Threads past the x end still load their own
 * vector while it lies within r of the interior (their neighbours need it);
 * only points inside the interior are stored (masked on the partial vector
 * at the end of a row), so ghosts are never written.
 *
 * Memory safety: a vector load starts at an aligned x below nx + r <=
 * nx + ghost, inside the padded row (docs/design.md); rows and planes read
 * are within r of the interior. */
#include "engine/cuda_device.cuh"
#include "core/point.h"

namespace {

enum { VEC_SYM27 = 0, VEC_BOX27 = 1 };

constexpr unsigned kFull = 0xffffffffu;

/* xs[R + o] = the row's value at x offset o from xv, o = -R .. V-1+R, from
 * my vector c and the lanes' around me.  ok: this row may be read (my
 * thread is within reach of the interior and the row/plane exists); xlim:
 * x positions at or past it are never needed (nx + R). */
template <typename T, int V, int R>
__device__ __forceinline__ void xrow(const strata__vec<T, V> &c, const T *p,
                                     bool ok, int xv, int xlim, int tx, int bx,
                                     int lane, T (&xs)[V + 2 * R]) {
#pragma unroll
  for (int e = 0; e < V; e++) xs[R + e] = c.v[e];
#pragma unroll
  for (int m = 1; m <= R; m++) {
    { /* offset -m: element dl*V - m of the lane dl to the left */
      const int dl = (m + V - 1) / V, e = dl * V - m;
      T v = __shfl_up_sync(kFull, c.v[e], dl);
      if (tx < dl || lane < dl) v = ok ? __ldg(p - m) : T(0);
      xs[R - m] = v;
    }
    { /* offset V-1+m: element (V-1+m) % V of the lane dr to the right */
      const int o = V - 1 + m, dr = o / V, e = o % V;
      T v = __shfl_down_sync(kFull, c.v[e], dr);
      if (tx + dr >= bx || lane + dr >= 32)
        v = ok && xv + o < xlim ? __ldg(p + o) : T(0);
      xs[R + o] = v;
    }
  }
}

template <typename T, int R, int Z>
__global__ void __launch_bounds__(512)
    k_vec_star(const T *__restrict__ in, T *__restrict__ out, strata__geom g,
               const strata__w<T> w) {
  constexpr int V = 16 / sizeof(T);
  constexpr int NQ = 2 * R + Z;
  typedef strata__vec<T, V> vec;
  const int tx = threadIdx.x, bx = blockDim.x;
  const int lane = (threadIdx.y * bx + tx) & 31;
  const int xv = (blockIdx.x * bx + tx) * V;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int nx = g.nx, nz = g.nz;
  const bool act = j < g.ny && xv < nx + R; /* my vector is someone's */
  const bool mine = j < g.ny && xv < nx;    /* I store */
  const T *col = in + xv + (long long)j * g.sy;
  T *ocol = out + xv + (long long)j * g.osy;
  const long long sy = g.sy, sz = g.sz;

  for (int kb = blockIdx.z * Z; kb < nz; kb += gridDim.z * Z) {
    vec q[NQ]; /* planes kb-R .. kb+Z-1+R of my column */
#pragma unroll
    for (int d = 0; d < NQ; d++)
      q[d] = act && kb - R + d < nz + R
                 ? ldg_v<T, V>(col + (long long)(kb - R + d) * sz)
                 : zero_v<T, V>();
#pragma unroll
    for (int zz = 0; zz < Z; zz++) {
      const int k = kb + zz;
      const bool kin = k < nz; /* uniform over the block */
      const T *p = col + (long long)k * sz;
      vec acc;
#pragma unroll
      for (int e = 0; e < V; e++) acc.v[e] = w.c0 * q[R + zz].v[e];
#pragma unroll
      for (int m = 1; m <= R; m++)
#pragma unroll
        for (int e = 0; e < V; e++)
          acc.v[e] = strata__pt_term(acc.v[e], w.cz[m],
                                     q[R + zz - m].v[e] + q[R + zz + m].v[e]);
      T xs[V + 2 * R];
      xrow<T, V, R>(q[R + zz], p, act && kin, xv, nx + R, tx, bx, lane, xs);
#pragma unroll
      for (int m = 1; m <= R; m++)
#pragma unroll
        for (int e = 0; e < V; e++)
          acc.v[e] = strata__pt_term(acc.v[e], w.cx[m],
                                     xs[R + e - m] + xs[R + e + m]);
#pragma unroll
      for (int m = 1; m <= R; m++) {
        const bool ok = mine && kin;
        const vec lo = ok ? ldg_v<T, V>(p - m * sy) : zero_v<T, V>();
        const vec hi = ok ? ldg_v<T, V>(p + m * sy) : zero_v<T, V>();
#pragma unroll
        for (int e = 0; e < V; e++)
          acc.v[e] = strata__pt_term(acc.v[e], w.cy[m], lo.v[e] + hi.v[e]);
      }
      if (mine && kin)
        store_masked<T, V>(ocol + (long long)k * g.osz, acc, nx - xv);
    }
  }
}

/* ---- vecz: the boxes with Y rows a thread and a walk along z -------------
 * A plain grid over the boxes would read 3 rows a plane for each output
 * row and each plane Z+2 times for Z outputs, so the L1/TEX pipe, not
 * DRAM, would hold it.  Here a thread owns one vector of x-points and Y consecutive
 * rows (Y = block z = 1, 2 or 4) and walks the planes of its z chunk:
 * each input plane's Y+2 rows are loaded once (the next plane's while this
 * one is summed) and added to the three output planes it touches through
 * two rolling partial sums (plane accumulation, kept in registers):
 *   out(p-1) = A + T(dz=+1),  A = B + T(dz=0),  B = T(dz=-1)
 * where T(dz) is plane p's in-plane sum with the weights of the output
 * plane p-dz.  The symmetric box shares the in-plane sums (centre a, the
 * 4 in-plane faces s1, the 4 in-plane corners s2):
 *   T(0) = K0 a + K1 s1 + K2 s2,  T(+-1) = K1 a + K2 s1 + K3 s2.
 * x neighbours: each warp (32 lanes of one thread row; block x is whole
 * warps) loads 32 consecutive vectors and stores the 30 inside; the two
 * lanes at its ends only lend their vectors to the shuffles.  So every
 * value a thread needs is in the vectors it prefetched (no scalar loads on
 * the critical path, no edge registers); the price is 1/15 more L1 loads.
 * The first lane's vector can start V points left of the interior, inside
 * the row's 128-byte left pad (docs/design.md).
 * The z loop is uniform over the block (it depends on blockIdx.z only), so
 * every lane runs every shuffle. */
constexpr int kVeczOut = 30; /* output vectors a warp */

template <typename T, int MODE, int Y>
__global__ void __launch_bounds__(256)
    k_vecz_box(const T *__restrict__ in, T *__restrict__ out, strata__geom g,
               const strata__w<T> w, int zchunk) {
  constexpr int V = 16 / sizeof(T);
  constexpr int NR = Y + 2; /* input rows j0-1 .. j0+Y */
  typedef strata__vec<T, V> vec;
  const int tx = threadIdx.x, lane = tx & 31;
  const int wx = (blockIdx.x * blockDim.x + tx) >> 5; /* warp along x */
  const int xv = (wx * kVeczOut + lane - 1) * V;
  const int j0 = (blockIdx.y * blockDim.y + threadIdx.y) * Y;
  const int nx = g.nx, ny = g.ny;
  const bool act = j0 < ny && xv < nx + 1; /* my vector is needed */
  const bool xmine = lane >= 1 && lane <= kVeczOut && xv < nx;
  const long long sy = g.sy, sz = g.sz;
  const int k0 = blockIdx.z * zchunk;
  const int k1 = min(g.nz, k0 + zchunk);
  const T *col = in + xv + (long long)(j0 - 1) * sy; /* row r: col + r*sy */
  T *ocol = out + xv + (long long)j0 * g.osy;
  bool rok[NR]; /* row j0-1+r exists (the ghost row ny at most) */
#pragma unroll
  for (int r = 0; r < NR; r++) rok[r] = act && j0 - 1 + r <= ny;

  vec cur[NR], nxt[NR];
#pragma unroll
  for (int r = 0; r < NR; r++)
    cur[r] = rok[r] ? ldg_v<T, V>(col + r * sy + (long long)(k0 - 1) * sz)
                    : zero_v<T, V>();
  T A[Y][V], B[Y][V];
#pragma unroll
  for (int y = 0; y < Y; y++)
#pragma unroll
    for (int e = 0; e < V; e++) A[y][e] = B[y][e] = T(0);

  /* planes k0-1 .. k1 (k1 <= nz: the ghost plane at most) */
#pragma unroll 1
  for (int p = k0 - 1; p <= k1; p++) {
    const T *pl = col + (long long)p * sz;
    if (p < k1) {
#pragma unroll
      for (int r = 0; r < NR; r++)
        nxt[r] = rok[r] ? ldg_v<T, V>(pl + r * sy + sz) : zero_v<T, V>();
    }
    T xs[NR][V + 2]; /* row r at x offsets -1 .. V */
#pragma unroll
    for (int r = 0; r < NR; r++) {
#pragma unroll
      for (int e = 0; e < V; e++) xs[r][e + 1] = cur[r].v[e];
      xs[r][0] = __shfl_up_sync(kFull, cur[r].v[V - 1], 1);
      xs[r][V + 1] = __shfl_down_sync(kFull, cur[r].v[0], 1);
    }
    const bool st = p - 1 >= k0 && xmine; /* output plane p-1 is mine */
#pragma unroll
    for (int y = 0; y < Y; y++) {
      T tp[V], t0[V], tm[V]; /* T(+1), T(0), T(-1) */
#pragma unroll
      for (int e = 0; e < V; e++) {
        if constexpr (MODE == VEC_SYM27) {
          const T a = xs[y + 1][e + 1];
          const T s1 = strata__pt_faces4(xs[y + 1][e], xs[y + 1][e + 2],
                                         xs[y][e + 1], xs[y + 2][e + 1]);
          const T s2 = strata__pt_corners4(xs[y][e], xs[y][e + 2],
                                           xs[y + 2][e], xs[y + 2][e + 2]);
          t0[e] = strata__pt_sym27_plane(w.K, a, s1, s2);
          tp[e] = strata__pt_sym27_plane(w.K + 1, a, s1, s2);
          tm[e] = tp[e];
        } else {
          T s[3] = {T(0), T(0), T(0)};
#pragma unroll
          for (int d = 0; d < 3; d++) /* dz = d - 1 */
#pragma unroll
            for (int dy = 0; dy < 3; dy++)
#pragma unroll
              for (int dx = 0; dx < 3; dx++)
                s[d] = strata__pt_term(s[d], w.K[d * 9 + dy * 3 + dx],
                                       xs[y + dy][e + dx]);
          tm[e] = s[0];
          t0[e] = s[1];
          tp[e] = s[2];
        }
      }
      if (st && j0 + y < ny) {
        vec o;
#pragma unroll
        for (int e = 0; e < V; e++) o.v[e] = A[y][e] + tp[e];
        store_masked<T, V>(ocol + (long long)y * g.osy +
                               (long long)(p - 1) * g.osz,
                           o, nx - xv);
      }
#pragma unroll
      for (int e = 0; e < V; e++) {
        A[y][e] = B[y][e] + t0[e];
        B[y][e] = tm[e];
      }
    }
#pragma unroll
    for (int r = 0; r < NR; r++) cur[r] = nxt[r];
  }
}

/* The launch grid's x and y extents: STRATA_EINVAL past the hardware
 * limits, with the variant's name. */
strata_status grid_limits(const strata__launch *L, const char *name,
                          long long gx, long long gy) {
  if (gy > 65535)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: %d rows need %lld blocks along y (limit 65535); "
                        "use taller blocks", name, L->g.ny, gy);
  if (gx > 0x7fffffffLL)
    return strata__fail(L->ctx, STRATA_EINVAL, "%s: %d points along x need "
                        "too many blocks", name, L->g.nx);
  return STRATA_OK;
}

template <typename T, int Y>
strata_status launch_vecz(const strata__launch *L, const strata_stencil *op) {
  constexpr int V = 16 / sizeof(T);
  const strata__geom &g = L->g;
  const int BX = L->block[0], BY = L->block[1];
  auto kern = op->kind == STRATA_STENCIL_BOX_SYMMETRIC
                  ? k_vecz_box<T, VEC_SYM27, Y>
                  : k_vecz_box<T, VEC_BOX27, Y>;
  const long long warps = ((g.nx + V - 1) / V + kVeczOut - 1) / kVeczOut;
  const long long gx = (warps * 32 + BX - 1) / BX;
  const long long rows = (long long)BY * Y;
  const long long gy = (g.ny + rows - 1) / rows;
  strata_status s = grid_limits(L, "vecz", gx, gy);
  if (s != STRATA_OK) return s;
  int per_sm = 0;
  s = strata__occupancy(L, kern, BX * BY, 0, &per_sm);
  if (s != STRATA_OK) return s;
  const int chunks = strata__cu_chunks(L, (int)(gx * gy), per_sm, g.nz, 2);
  const int zchunk = (g.nz + chunks - 1) / chunks;
  const long long gz = (g.nz + zchunk - 1) / zchunk;
  if (gz > 65535)
    return strata__fail(L->ctx, STRATA_EINVAL, "vecz: %lld z chunks (limit "
                        "65535)", gz);
  dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)gz);
  kern<<<grid, dim3((unsigned)BX, (unsigned)BY, 1), 0, L->stream>>>(
      (const T *)L->in, (T *)L->out, g, strata__weights<T>(op), zchunk);
  STRATA__LAUNCHED(L->ctx, "vecz kernel launch");
  return STRATA_OK;
}

template <typename T>
strata_status vecz_t(const strata__launch *L, const strata_stencil *op) {
  switch (L->block[2]) {
  case 1: return launch_vecz<T, 1>(L, op);
  case 2: return launch_vecz<T, 2>(L, op);
  default: return launch_vecz<T, 4>(L, op);
  }
}

/* ---- 2D: the same order with rows in the role of planes ------------------
 * A block of BX x BY threads covers BX vectors along x and BY * Y rows;
 * thread row ty computes rows jb + ty*Y .. jb + ty*Y + Y-1 (Y = block z =
 * 1, 2 or 4).  The row loop (over row blocks, for grids taller than 65535
 * blocks) is uniform over the block; rows past ny only mask loads and
 * stores, never a shuffle. */

/* 2D stars: the column's rows j0-R .. j0+Y-1+R in registers (y), x by
 * shuffles from each output row's own vector. */
template <typename T, int R, int Y>
__global__ void __launch_bounds__(512)
    k_vec_star2(const T *__restrict__ in, T *__restrict__ out, strata__geom g,
                const strata__w<T> w) {
  constexpr int V = 16 / sizeof(T);
  constexpr int NQ = 2 * R + Y;
  typedef strata__vec<T, V> vec;
  const int tx = threadIdx.x, bx = blockDim.x;
  const int lane = (threadIdx.y * bx + tx) & 31;
  const int xv = (blockIdx.x * bx + tx) * V;
  const int nx = g.nx, ny = g.ny;
  const bool act = xv < nx + R; /* my vector is someone's */
  const bool xmine = xv < nx;   /* I store (rows permitting) */
  const long long sy = g.sy, osy = g.osy;
  const int rows = blockDim.y * Y;

  for (int jb = blockIdx.y * rows; jb < ny; jb += gridDim.y * rows) {
    const int j0 = jb + threadIdx.y * Y;
    const T *col = in + xv + (long long)j0 * sy;
    vec q[NQ]; /* rows j0-R .. j0+Y-1+R of my column */
#pragma unroll
    for (int d = 0; d < NQ; d++)
      q[d] = act && j0 - R + d < ny + R
                 ? ldg_v<T, V>(col + (long long)(d - R) * sy)
                 : zero_v<T, V>();
#pragma unroll
    for (int yy = 0; yy < Y; yy++) {
      const int j = j0 + yy;
      const bool jin = j < ny; /* not uniform over a warp of short rows */
      vec acc;
#pragma unroll
      for (int e = 0; e < V; e++) acc.v[e] = w.c0 * q[R + yy].v[e];
#pragma unroll
      for (int m = 1; m <= R; m++)
#pragma unroll
        for (int e = 0; e < V; e++)
          acc.v[e] = strata__pt_term(acc.v[e], w.cy[m],
                                     q[R + yy - m].v[e] + q[R + yy + m].v[e]);
      T xs[V + 2 * R];
      xrow<T, V, R>(q[R + yy], col + (long long)yy * sy, act && jin, xv,
                    nx + R, tx, bx, lane, xs);
#pragma unroll
      for (int m = 1; m <= R; m++)
#pragma unroll
        for (int e = 0; e < V; e++)
          acc.v[e] = strata__pt_term(acc.v[e], w.cx[m],
                                     xs[R + e - m] + xs[R + e + m]);
      if (xmine && jin)
        store_masked<T, V>(out + xv + (long long)j * osy, acc, nx - xv);
    }
  }
}

/* The 2D 3x3 box: input rows j0-1 .. j0+Y, each read once (its x
 * neighbours by shuffles) and added to the output rows it touches. */
template <typename T, int Y>
__global__ void __launch_bounds__(512)
    k_vec_box2(const T *__restrict__ in, T *__restrict__ out, strata__geom g,
               const strata__w<T> w) {
  constexpr int V = 16 / sizeof(T);
  typedef strata__vec<T, V> vec;
  const int tx = threadIdx.x, bx = blockDim.x;
  const int lane = (threadIdx.y * bx + tx) & 31;
  const int xv = (blockIdx.x * bx + tx) * V;
  const int nx = g.nx, ny = g.ny;
  const bool act = xv < nx + 1;
  const bool xmine = xv < nx;
  const long long sy = g.sy, osy = g.osy;
  const int rows = blockDim.y * Y;

  for (int jb = blockIdx.y * rows; jb < ny; jb += gridDim.y * rows) {
    const int j0 = jb + threadIdx.y * Y;
    T acc[Y][V];
#pragma unroll
    for (int yy = 0; yy < Y; yy++)
#pragma unroll
      for (int e = 0; e < V; e++) acc[yy][e] = T(0);
#pragma unroll
    for (int pi = 0; pi < Y + 2; pi++) {
      const int pj = j0 - 1 + pi;      /* input row, >= -1 */
      const bool ok = act && pj <= ny; /* within the ghost row ny */
      const T *p = in + xv + (long long)pj * sy;
      const vec c = ok ? ldg_v<T, V>(p) : zero_v<T, V>();
      T xs[V + 2];
      xrow<T, V, 1>(c, p, ok, xv, nx + 1, tx, bx, lane, xs);
#pragma unroll
      for (int yy = 0; yy < Y; yy++) {
        const int dy = pi - 1 - yy; /* input row = output row + dy */
        if (dy < -1 || dy > 1) continue;
#pragma unroll
        for (int e = 0; e < V; e++)
#pragma unroll
          for (int dx = 0; dx < 3; dx++)
            acc[yy][e] = strata__pt_term(acc[yy][e], w.K[STRATA_PT_BOX9(dx - 1, dy)],
                                         xs[e + dx]);
      }
    }
#pragma unroll
    for (int yy = 0; yy < Y; yy++)
      if (xmine && j0 + yy < ny) {
        vec o;
#pragma unroll
        for (int e = 0; e < V; e++) o.v[e] = acc[yy][e];
        store_masked<T, V>(out + xv + (long long)(j0 + yy) * osy, o, nx - xv);
      }
  }
}

/* Instantiated: the box and r = 1 with Y = 1, 2, 4; r = 2..4 with Y = 2, 4
 * (taller columns pay for the 2r halo rows; 12 kernels per precision). */
template <typename T, int Y>
strata_status launch_vec2(const strata__launch *L, const strata_stencil *op) {
  constexpr int V = 16 / sizeof(T);
  const strata__geom &g = L->g;
  const int BX = L->block[0], BY = L->block[1];
  const long long warps = ((g.nx + V - 1) / V + kVeczOut - 1) / kVeczOut;
  const long long gx = (warps * 32 + BX - 1) / BX;
  const long long rows = (long long)BY * Y;
  const long long gy = (g.ny + rows - 1) / rows;
  if (gx > 0x7fffffffLL)
    return strata__fail(L->ctx, STRATA_EINVAL, "vec: %d points along x need "
                        "too many blocks", g.nx);
  dim3 grid((unsigned)gx, (unsigned)(gy > 65535 ? 65535 : gy), 1);
  dim3 block((unsigned)BX, (unsigned)BY, 1);
  const strata__w<T> w = strata__weights<T>(op);
  const T *in = (const T *)L->in;
  T *out = (T *)L->out;
  if (op->kind == STRATA_STENCIL_BOX) {
    k_vec_box2<T, Y><<<grid, block, 0, L->stream>>>(in, out, g, w);
  } else if (op->radius == 1) {
    k_vec_star2<T, 1, Y><<<grid, block, 0, L->stream>>>(in, out, g, w);
  } else if constexpr (Y == 1) {
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "vec: 2D stars of radius %d take 2 or 4 rows per "
                        "thread (block z), not 1", op->radius);
  } else {
    switch (op->radius) {
    case 2: k_vec_star2<T, 2, Y><<<grid, block, 0, L->stream>>>(in, out, g, w); break;
    case 3: k_vec_star2<T, 3, Y><<<grid, block, 0, L->stream>>>(in, out, g, w); break;
    case 4: k_vec_star2<T, 4, Y><<<grid, block, 0, L->stream>>>(in, out, g, w); break;
    default:
      return strata__fail(L->ctx, STRATA_EINVAL, "vec: radius %d", op->radius);
    }
  }
  STRATA__LAUNCHED(L->ctx, "vec 2D kernel launch");
  return STRATA_OK;
}

template <typename T, int Z>
strata_status launch_vec(const strata__launch *L, const strata_stencil *op) {
  constexpr int V = 16 / sizeof(T);
  const strata__geom &g = L->g;
  const int BX = L->block[0], BY = L->block[1];
  const long long gx = ((g.nx + V - 1) / V + BX - 1) / BX;
  const long long gy = (g.ny + BY - 1) / BY;
  const strata_status s = grid_limits(L, "vec", gx, gy);
  if (s != STRATA_OK) return s;
  const long long nzb = (g.nz + Z - 1) / Z;
  dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)(nzb > 65535 ? 65535 : nzb));
  dim3 block((unsigned)BX, (unsigned)BY, 1);
  const strata__w<T> w = strata__weights<T>(op);
  const T *in = (const T *)L->in;
  T *out = (T *)L->out;
  k_vec_star<T, 1, Z><<<grid, block, 0, L->stream>>>(in, out, g, w);
  STRATA__LAUNCHED(L->ctx, "vec kernel launch");
  return STRATA_OK;
}

template <typename T>
strata_status vec_t(const strata__launch *L, const strata_stencil *op) {
  if (op->dims == 2) switch (L->block[2]) {
    case 1: return launch_vec2<T, 1>(L, op);
    case 2: return launch_vec2<T, 2>(L, op);
    default: return launch_vec2<T, 4>(L, op);
    }
  switch (L->block[2]) {
  case 1: return launch_vec<T, 1>(L, op);
  case 2: return launch_vec<T, 2>(L, op);
  default: return launch_vec<T, 4>(L, op);
  }
}

} // namespace

strata_status strata__cu_vec(const strata__launch *L, const strata_stencil *op) {
  const int *b = L->block;
  if (b[0] < 1 || b[1] < 1 || b[0] * b[1] > 512 || (b[0] * b[1]) % 32 != 0 ||
      (b[2] != 1 && b[2] != 2 && b[2] != 4))
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "vec: block %dx%dx%d is not valid (x threads, y "
                        "threads, planes (3D) or rows (2D) per thread: whole "
                        "warps, at most 512 threads; 1, 2 or 4 per thread)",
                        b[0], b[1], b[2]);
  const bool star = op->kind == STRATA_STENCIL_STAR && op->radius >= 1 &&
                    op->radius <= 4;
  const bool box = op->kind == STRATA_STENCIL_BOX ||
                   op->kind == STRATA_STENCIL_BOX_SYMMETRIC;
  const bool ok3 = op->dims == 3 && star && op->radius == 1;
  const bool ok2 = op->dims == 2 && (star || op->kind == STRATA_STENCIL_BOX);
  if (!ok3 && !ok2)
    return strata__fail(L->ctx, STRATA_ENOTSUP,
                        "vec: only the 3D star of radius 1, 2D stars (radius "
                        "1..4) and 3x3 boxes%s",
                        box && op->dims == 3 ? " (3x3x3 boxes: vecz)" : "");
  return L->prec == 4 ? vec_t<float>(L, op) : vec_t<double>(L, op);
}

strata_status strata__cu_vecz(const strata__launch *L, const strata_stencil *op) {
  const int *b = L->block;
  if (b[0] < 32 || b[1] < 1 || b[0] % 32 != 0 || b[0] * b[1] > 256 ||
      (b[2] != 1 && b[2] != 2 && b[2] != 4))
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "vecz: block %dx%dx%d is not valid (x threads: whole "
                        "warps; at most 256 threads; 1, 2 or 4 rows per "
                        "thread)", b[0], b[1], b[2]);
  if (op->dims != 3 || (op->kind != STRATA_STENCIL_BOX &&
                        op->kind != STRATA_STENCIL_BOX_SYMMETRIC))
    return strata__fail(L->ctx, STRATA_ENOTSUP,
                        "vecz: only the 3x3x3 boxes (symmetric and general)");
  return L->prec == 4 ? vecz_t<float>(L, op) : vecz_t<double>(L, op);
}
