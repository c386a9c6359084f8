/* The two teaching variants, for every operator in 1D, 2D and 3D:
 *   naive: one thread per point, every read from global memory (the
 *          textbook first kernel: the 25-point star reads each input
 *          point 25 times, through the caches);
 *   smem:  one thread per point of a 2D block; the block's tile of input
 *          with its halo (and, in 3D, the 2r+1 planes the operator reaches)
 *          is loaded into shared memory with a strided loop, then every
 *          thread reads its neighbours from there (the classic tiled form).
 * Radius, dimension and axis are run-time values here (a small predicated
 * unrolled loop): these variants are the baselines, not the fast path, and
 * keeping them generic keeps the number of instantiations low. */
#include "engine/cuda_device.cuh"
#include "core/point.h"

namespace {

/* The operator at the point p (pointer into global or shared memory) with
 * strides sy, sz: the point updates of core/point.h, in the CPU engine's
 * order. */
template <typename T, int KIND, typename S>
__device__ __forceinline__ T eval_point(const T *p, S sy, S sz,
                                        const strata__w<T> &w) {
  if constexpr (KIND == STRATA_STENCIL_STAR) {
    T acc = w.c0 * p[0];
#pragma unroll
    for (int k = 1; k <= STRATA_MAX_RADIUS; k++) {
      if (k > w.R) break;
      /* the star's terms (point.h's order), under the dimension tests
       * so that the loads of the axes a field lacks are not issued */
      acc = strata__pt_term(acc, w.cx[k], p[-k] + p[k]);
      if (w.dims >= 2)
        acc = strata__pt_term(acc, w.cy[k], p[-k * sy] + p[k * sy]);
      if (w.dims >= 3)
        acc = strata__pt_term(acc, w.cz[k], p[-k * sz] + p[k * sz]);
    }
    return acc;
  } else if constexpr (KIND == STRATA_STENCIL_DERIVATIVE) {
    const S s = w.axis == 0 ? S(1) : w.axis == 1 ? sy : sz;
    T acc = T(0);
#pragma unroll
    for (int k = 1; k <= STRATA_MAX_RADIUS; k++) {
      if (k > w.R) break;
      const T c = w.axis == 0 ? w.cx[k] : w.axis == 1 ? w.cy[k] : w.cz[k];
      acc = strata__pt_term(acc, c, p[k * s] - p[-k * s]);
    }
    return acc;
  } else if constexpr (KIND == STRATA_STENCIL_BOX) {
    T acc = T(0);
    if (w.dims == 3) {
#pragma unroll
      for (int dz = -1; dz <= 1; dz++)
#pragma unroll
        for (int dy = -1; dy <= 1; dy++)
#pragma unroll
          for (int dx = -1; dx <= 1; dx++)
            acc = strata__pt_term(acc, w.K[STRATA_PT_BOX27(dx, dy, dz)],
                                  p[dx + dy * sy + dz * sz]);
    } else {
#pragma unroll
      for (int dy = -1; dy <= 1; dy++)
#pragma unroll
        for (int dx = -1; dx <= 1; dx++)
          acc = strata__pt_term(acc, w.K[STRATA_PT_BOX9(dx, dy)],
                                p[dx + dy * sy]);
    }
    return acc;
  } else { /* symmetric 27 */
    const T faces =
        strata__pt_faces6(p[-1], p[1], p[-sy], p[sy], p[-sz], p[sz]);
    const T edges = strata__pt_edges12(
        p[-1 - sy], p[1 - sy], p[-1 + sy], p[1 + sy], p[-1 - sz], p[1 - sz],
        p[-1 + sz], p[1 + sz], p[-sy - sz], p[sy - sz], p[-sy + sz],
        p[sy + sz]);
    const T corners = strata__pt_corners8(
        p[-1 - sy - sz], p[1 - sy - sz], p[-1 + sy - sz], p[1 + sy - sz],
        p[-1 - sy + sz], p[1 - sy + sz], p[-1 + sy + sz], p[1 + sy + sz]);
    return strata__pt_sym27(w.K, p[0], faces, edges, corners);
  }
}

template <typename T, int KIND>
__global__ void k_naive(const T *in, T *out, strata__geom g,
                        const strata__w<T> w) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.nx) return;
  for (int k = blockIdx.z * blockDim.z + threadIdx.z; k < g.nz;
       k += gridDim.z * blockDim.z)
    for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < g.ny;
         j += gridDim.y * blockDim.y) {
      const T *p = in + i + (long long)j * g.sy + (long long)k * g.sz;
      out[i + (long long)j * g.osy + (long long)k * g.osz] =
          eval_point<T, KIND, long long>(p, g.sy, g.sz, w);
    }
}

/* rx, ry, rz: how far the operator reaches along each axis. */
template <typename T, int KIND>
__global__ void k_smem(const T *in, T *out, strata__geom g,
                       const strata__w<T> w, int rx, int ry, int rz) {
  extern __shared__ __align__(16) unsigned char sraw[];
  T *t = reinterpret_cast<T *>(sraw);
  const int bx = blockDim.x, by = blockDim.y;
  const int twx = bx + 2 * rx, twy = by + 2 * ry, twz = 2 * rz + 1;
  const int n = twx * twy * twz;
  const int tid = threadIdx.y * bx + threadIdx.x, nt = bx * by;
  const int x0 = blockIdx.x * bx, y0 = blockIdx.y * by;
  const int i = x0 + threadIdx.x, j = y0 + threadIdx.y;
  for (int k = blockIdx.z; k < g.nz; k += gridDim.z) {
    for (int q = tid; q < n; q += nt) {
      const int tx = q % twx, r = q / twx, ty = r % twy, tz = r / twy;
      const int x = x0 - rx + tx, y = y0 - ry + ty, z = k - rz + tz;
      T v = T(0);
      if (x < g.nx + rx && y < g.ny + ry)
        v = in[x + (long long)y * g.sy + (long long)z * g.sz];
      t[q] = v;
    }
    __syncthreads();
    if (i < g.nx && j < g.ny) {
      const T *p = t + (threadIdx.x + rx) + (threadIdx.y + ry) * twx +
                   rz * twx * twy;
      out[i + (long long)j * g.osy + (long long)k * g.osz] =
          eval_point<T, KIND, int>(p, twx, twx * twy, w);
    }
    __syncthreads();
  }
}

static unsigned cap(long long v, unsigned limit) {
  return v > (long long)limit ? limit : (unsigned)(v < 1 ? 1 : v);
}

template <typename T, int KIND>
strata_status launch_naive(const strata__launch *L, const strata_stencil *op) {
  const int bx = L->block[0], by = L->block[1], bz = L->block[2];
  dim3 block(bx, by, bz);
  dim3 grid((unsigned)((L->g.nx + bx - 1) / bx),
            cap((L->g.ny + by - 1) / by, 65535),
            cap((L->g.nz + bz - 1) / bz, 65535));
  k_naive<T, KIND><<<grid, block, 0, L->stream>>>(
      (const T *)L->in, (T *)L->out, L->g, strata__weights<T>(op));
  STRATA__LAUNCHED(L->ctx, "naive kernel launch");
  return STRATA_OK;
}

template <typename T, int KIND>
strata_status launch_smem(const strata__launch *L, const strata_stencil *op) {
  const int bx = L->block[0], by = L->block[1];
  const int R = op->radius, D = op->dims;
  int rx, ry, rz;
  if (op->kind == STRATA_STENCIL_DERIVATIVE) {
    rx = op->axis == 0 ? R : 0;
    ry = op->axis == 1 ? R : 0;
    rz = op->axis == 2 ? R : 0;
  } else {
    rx = R;
    ry = D >= 2 ? R : 0;
    rz = D >= 3 ? R : 0;
  }
  size_t bytes = (size_t)(bx + 2 * rx) * (by + 2 * ry) * (2 * rz + 1) * sizeof(T);
  strata_status s = strata__smem_opt_in(L, k_smem<T, KIND>, bytes, "smem");
  if (s != STRATA_OK) return s;
  dim3 grid((unsigned)((L->g.nx + bx - 1) / bx),
            cap((L->g.ny + by - 1) / by, 65535), cap(L->g.nz, 65535));
  k_smem<T, KIND><<<grid, dim3(bx, by, 1), bytes, L->stream>>>(
      (const T *)L->in, (T *)L->out, L->g, strata__weights<T>(op), rx, ry, rz);
  STRATA__LAUNCHED(L->ctx, "smem kernel launch");
  return STRATA_OK;
}

template <typename T>
strata_status naive_t(const strata__launch *L, const strata_stencil *op) {
  switch (op->kind) {
  case STRATA_STENCIL_STAR: return launch_naive<T, STRATA_STENCIL_STAR>(L, op);
  case STRATA_STENCIL_DERIVATIVE:
    return launch_naive<T, STRATA_STENCIL_DERIVATIVE>(L, op);
  case STRATA_STENCIL_BOX: return launch_naive<T, STRATA_STENCIL_BOX>(L, op);
  case STRATA_STENCIL_BOX_SYMMETRIC:
    return launch_naive<T, STRATA_STENCIL_BOX_SYMMETRIC>(L, op);
  }
  return strata__fail(L->ctx, STRATA_EINVAL, "naive: unknown operator kind");
}

template <typename T>
strata_status smem_t(const strata__launch *L, const strata_stencil *op) {
  switch (op->kind) {
  case STRATA_STENCIL_STAR: return launch_smem<T, STRATA_STENCIL_STAR>(L, op);
  case STRATA_STENCIL_DERIVATIVE:
    return launch_smem<T, STRATA_STENCIL_DERIVATIVE>(L, op);
  case STRATA_STENCIL_BOX: return launch_smem<T, STRATA_STENCIL_BOX>(L, op);
  case STRATA_STENCIL_BOX_SYMMETRIC:
    return launch_smem<T, STRATA_STENCIL_BOX_SYMMETRIC>(L, op);
  }
  return strata__fail(L->ctx, STRATA_EINVAL, "smem: unknown operator kind");
}

} // namespace

strata_status strata__cu_naive(const strata__launch *L,
                               const strata_stencil *op) {
  const int *b = L->block;
  if (b[0] < 1 || b[1] < 1 || b[2] < 1 || b[0] * b[1] * b[2] > 1024)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "naive: block %dx%dx%d is not a valid thread block "
                        "(each side >= 1, at most 1024 threads)",
                        b[0], b[1], b[2]);
  return L->prec == 4 ? naive_t<float>(L, op) : naive_t<double>(L, op);
}

strata_status strata__cu_smem(const strata__launch *L,
                              const strata_stencil *op) {
  const int *b = L->block;
  if (b[0] < 1 || b[1] < 1 || b[2] != 1 || b[0] * b[1] > 1024)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "smem: block %dx%dx%d is not valid (a 2D block: "
                        "z side 1, at most 1024 threads)",
                        b[0], b[1], b[2]);
  return L->prec == 4 ? smem_t<float>(L, op) : smem_t<double>(L, op);
}
