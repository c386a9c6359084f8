/* What the CUDA multigrid files share (multigrid.cu: the constant-
 * coefficient kernels; fv.cu: the variable-coefficient ones): selecting
 * the device, the size limit, and the deterministic reduction (per-block
 * partial sums in the context's scratch buffer, folded by one block in a
 * fixed order).  Everything is in an anonymous namespace: each file gets
 * its own copy. */
#ifndef STRATA_CUDA_MG_COMMON_CUH
#define STRATA_CUDA_MG_COMMON_CUH

#include "cuda_device.cuh"

namespace {

constexpr int kRedThreads = 256;    /* final reduction block */

strata_status use_dev(strata_context *ctx) {
  STRATA__CU(ctx, cudaSetDevice(strata__cu_state(ctx)->device));
  return STRATA_OK;
}

#define MG_DEV(ctx)                                                            \
  do {                                                                         \
    strata_status s_ = use_dev(ctx);                                           \
    if (s_ != STRATA_OK) return s_;                                            \
  } while (0)

strata_status check_size(strata_context *ctx, const strata_field *f) {
  for (int a = 0; a < 3; a++)
    if (f->d.n[a] > ((size_t)1 << 30))
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "multigrid: the CUDA kernels take at most 2^30 "
                          "points per axis (axis %c has %zu)", "xyz"[a],
                          f->d.n[a]);
  return STRATA_OK;
}

/* Blocks that reduce into the scratch buffer: one slot each, the last slot
 * keeps the folded result. */
int reduce_slots(strata_context *ctx) {
  size_t n = strata__cu_state(ctx)->scratch_n;
  return n > 1 ? (int)(n - 1) : 0;
}

/* Block-wide sum of v (blockDim.x * blockDim.y * blockDim.z threads, a
 * power of two up to 1024); thread 0 gets the result. */
__device__ __forceinline__ double block_sum(double v, double *sh) {
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int n = blockDim.x * blockDim.y * blockDim.z;
  sh[t] = v;
  __syncthreads();
  for (int h = n / 2; h > 0; h /= 2) {
    if (t < h) sh[t] += sh[t + h];
    __syncthreads();
  }
  return sh[0];
}

__global__ void __launch_bounds__(kRedThreads)
    k_fold(const double *part, int nparts, double *res) {
  __shared__ double sh[kRedThreads];
  double s = 0;
  for (int p = threadIdx.x; p < nparts; p += blockDim.x) s += part[p];
  s = block_sum(s, sh);
  if (threadIdx.x == 0) *res = s;
}

/* Folds nparts partials and copies the result to the host. */
strata_status fold_to_host(strata_context *ctx, int nparts, double *out) {
  strata__cuda_state *st = strata__cu_state(ctx);
  double *part = st->scratch, *res = st->scratch + reduce_slots(ctx);
  k_fold<<<1, kRedThreads, 0, st->stream>>>(part, nparts, res);
  STRATA__LAUNCHED(ctx, "multigrid reduction (fold) launch");
  STRATA__CU(ctx, cudaMemcpyAsync(out, res, sizeof(double),
                                  cudaMemcpyDeviceToHost, st->stream));
  STRATA__CU(ctx, cudaStreamSynchronize(st->stream));
  return STRATA_OK;
}

} // namespace

#endif
