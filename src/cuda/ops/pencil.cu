/* pencil: the derivatives.  Along y or z a thread walks the axis with its
 * values in a rotating register queue (no shared memory at all: every input
 * value is read once from DRAM); along x it reads its vector and the
 * neighbouring vectors, which the warp's own loads bring into L1 (the
 * pencils of the seeds, with the tile in L1 instead of shared memory).
 *
 * Memory safety: vector loads may run up to one vector past a row's last
 * ghost; the field layout's row padding and the allocation slack (see
 * engine/backend.cu) keep them inside the allocation. */
#include "engine/cuda_device.cuh"
#include "core/point.h"

namespace {

/* Derivative along x: a vector per thread plus ceil(r/V) vectors each side,
 * read through L1 (the neighbours' own loads). */
template <typename T, int R>
__global__ void k_pencil_x(const T *__restrict__ in, T *__restrict__ out,
                           strata__geom g, const strata__w<T> w) {
  constexpr int V = 16 / sizeof(T);
  constexpr int HV = (R + V - 1) / V;
  typedef strata__vec<T, V> vec;
  const int xv = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  if (xv >= g.nx) return;
  for (int k = blockIdx.z; k < g.nz; k += gridDim.z)
    for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < g.ny;
         j += gridDim.y * blockDim.y) {
      const T *p = in + xv + (long long)j * g.sy + (long long)k * g.sz;
      T xs[(2 * HV + 1) * V];
#pragma unroll
      for (int h = 0; h < HV; h++) {
        vec l = ldg_v<T, V>(p - (HV - h) * V);
        vec r = (xv + V + h * V < g.nx + R) ? ldg_v<T, V>(p + V + h * V)
                                            : zero_v<T, V>();
#pragma unroll
        for (int e = 0; e < V; e++) {
          xs[h * V + e] = l.v[e];
          xs[(HV + 1 + h) * V + e] = r.v[e];
        }
      }
      vec c = ldg_v<T, V>(p);
#pragma unroll
      for (int e = 0; e < V; e++) xs[HV * V + e] = c.v[e];
      vec acc;
#pragma unroll
      for (int e = 0; e < V; e++) {
        T a = T(0); /* strata__pt_deriv's chain, term by term */
#pragma unroll
        for (int m = 1; m <= R; m++)
          a = strata__pt_term(a, w.cx[m],
                              xs[HV * V + e + m] - xs[HV * V + e - m]);
        acc.v[e] = a;
      }
      store_masked<T, V>(out + xv + (long long)j * g.osy +
                             (long long)k * g.osz,
                         acc, g.nx - xv);
    }
}

/* Derivative along y or z (AXIS 1 or 2): walk the axis (stride sw, nw
 * points) with the values in a register queue; the other non-x axis
 * (stride so, no points) spreads over threadIdx.y and blockIdx.y, chunks of
 * the walk over blockIdx.z.  The queue holds NQ = 2r+1+PD planes and
 * rotates instead of shifting: the loop is unrolled NQ times so every slot
 * index is a compile-time constant (no register moves), and each step loads
 * the plane PD steps ahead into the slot that just fell out of reach. */
constexpr int kWalkAhead = 2;

template <typename T, int R, int AXIS, int NQ>
__device__ __forceinline__ void walk_step(strata__vec<T, 16 / sizeof(T)> (&q)[NQ],
                                          int s, int k, int k1, const T *p,
                                          long long sw, T *op, long long osw,
                                          int nvalid, const strata__w<T> &w) {
  constexpr int V = 16 / sizeof(T);
  constexpr int PD = NQ - 2 * R - 1;
  /* The y walk at radius 4 (one plane in flight in registers) also asks L2
   * for the row after that one: a little faster in both precisions; more
   * rows ahead are slower (presumably they leave L2 before they are read),
   * and so is any prefetch in the z walk
   * (docs/performance.md#operators-on-the-h100) */
  constexpr int PF = AXIS == 1 && PD == 1 ? 1 : 0;
  /* slot of plane k + d is (s + R + d) % NQ */
  if (k + PD < k1)
    q[(s + NQ - 1) % NQ] = ldg_v<T, V>(p + (long long)(k + R + PD) * sw);
  if (PF && k + PD + PF < k1)
    prefetch_l2(p + (long long)(k + R + PD + PF) * sw);
  strata__vec<T, V> acc;
#pragma unroll
  for (int e = 0; e < V; e++) {
    T d[R + 1];
#pragma unroll
    for (int m = 1; m <= R; m++)
      d[m] = q[(s + R + m) % NQ].v[e] - q[(s + R - m) % NQ].v[e];
    acc.v[e] = strata__pt_deriv(R, AXIS == 1 ? w.cy : w.cz, d);
  }
  store_masked<T, V>(op + (long long)k * osw, acc, nvalid);
}

/* At most 256 threads and 64 registers: four blocks per multiprocessor. */
template <typename T, int R, int AXIS, int PD>
__global__ void __launch_bounds__(256, 4)
    k_pencil_walk(const T *__restrict__ in, T *__restrict__ out, int nx,
                  long long sw, long long osw, int nw, long long so,
                  long long oso, int no, int wchunk, const strata__w<T> w) {
  constexpr int V = 16 / sizeof(T);
  constexpr int NQ = 2 * R + 1 + PD;
  typedef strata__vec<T, V> vec;
  const int xv = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  const int o = blockIdx.y * blockDim.y + threadIdx.y;
  if (xv >= nx || o >= no) return;
  const int k0 = blockIdx.z * wchunk, k1 = min(nw, k0 + wchunk);
  const T *p = in + xv + (long long)o * so;
  T *op = out + xv + (long long)o * oso;
  const int nvalid = nx - xv;
  vec q[NQ];
  /* planes k0-R .. k0+R+PD-1 into slots 0 .. NQ-2 */
#pragma unroll
  for (int d = 0; d < NQ - 1; d++)
    q[d] = k0 - R + d <= k1 - 1 + R
               ? ldg_v<T, V>(p + (long long)(k0 - R + d) * sw)
               : zero_v<T, V>();
  strata__trips<NQ>(k0, k1, [&](int k, int s) {
    walk_step<T, R, AXIS, NQ>(q, s, k, k1, p, sw, op, osw, nvalid, w);
  });
}

template <typename T, int R>
strata_status launch_pencil(const strata__launch *L, const strata_stencil *op) {
  constexpr int V = 16 / sizeof(T);
  const int BX = L->block[0], BY = L->block[1];
  const strata__geom &g = L->g;
  const long long gx = ((g.nx + V - 1) / V + BX - 1) / BX;
  const strata__w<T> w = strata__weights<T>(op);
  if (op->axis == 0) {
    long long gy = (g.ny + BY - 1) / BY;
    dim3 grid((unsigned)gx, (unsigned)(gy > 65535 ? 65535 : gy),
              (unsigned)(g.nz > 65535 ? 65535 : g.nz));
    k_pencil_x<T, R><<<grid, dim3(BX, BY, 1), 0, L->stream>>>(
        (const T *)L->in, (T *)L->out, g, w);
    STRATA__LAUNCHED(L->ctx, "pencil (x) kernel launch");
    return STRATA_OK;
  }
  /* walk y (the other axis is z) or z (the other axis is y) */
  long long sw, osw, so, oso;
  int nw, no;
  if (op->axis == 1) {
    sw = g.sy; osw = g.osy; nw = g.ny;
    so = g.sz; oso = g.osz; no = g.nz;
  } else {
    sw = g.sz; osw = g.osz; nw = g.nz;
    so = g.sy; oso = g.osy; no = g.ny;
  }
  const long long gy = (no + BY - 1) / BY;
  if (gy > 65535)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "pencil: %d lines need %lld blocks (limit 65535); use "
                        "taller blocks", no, gy);
  /* radius 4 keeps one plane in flight: two would spill under the
   * 64-register cap that gives four blocks per multiprocessor */
  constexpr int PD = R == 4 ? 1 : kWalkAhead;
  auto kern = op->axis == 1 ? k_pencil_walk<T, R, 1, PD>
                            : k_pencil_walk<T, R, 2, PD>;
  int per_sm = 0;
  strata_status s = strata__occupancy(L, kern, BX * BY, 0, &per_sm);
  if (s != STRATA_OK) return s;
  const int chunks = strata__cu_chunks(L, (int)(gx * gy), per_sm, nw, 2 * R);
  const int wchunk = (nw + chunks - 1) / chunks;
  dim3 grid((unsigned)gx, (unsigned)gy, (unsigned)((nw + wchunk - 1) / wchunk));
  kern<<<grid, dim3(BX, BY, 1), 0, L->stream>>>(
      (const T *)L->in, (T *)L->out, g.nx, sw, osw, nw, so, oso, no, wchunk, w);
  STRATA__LAUNCHED(L->ctx, "pencil kernel launch");
  return STRATA_OK;
}

template <typename T>
strata_status pencil_t(const strata__launch *L, const strata_stencil *op) {
  switch (op->radius) {
  case 1: return launch_pencil<T, 1>(L, op);
  case 2: return launch_pencil<T, 2>(L, op);
  case 3: return launch_pencil<T, 3>(L, op);
  case 4: return launch_pencil<T, 4>(L, op);
  }
  return strata__fail(L->ctx, STRATA_EINVAL, "pencil: radius %d", op->radius);
}

} // namespace

strata_status strata__cu_pencil(const strata__launch *L,
                                const strata_stencil *op) {
  const int *b = L->block;
  const int maxt = op->axis == 0 ? 512 : 256;
  if (b[0] < 1 || b[1] < 1 || b[2] != 1 || b[0] * b[1] > maxt)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "pencil: block %dx%dx%d is not valid (a 2D block of "
                        "at most %d threads)", b[0], b[1], b[2], maxt);
  if (op->kind != STRATA_STENCIL_DERIVATIVE)
    return strata__fail(L->ctx, STRATA_ENOTSUP, "pencil: only derivatives");
  return L->prec == 4 ? pencil_t<float>(L, op) : pencil_t<double>(L, op);
}

