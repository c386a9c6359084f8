/* Receiver sampling: one thread per receiver, the weighted sum
 * accumulated in double without contraction (__dmul_rn/__dadd_rn), in the
 * CPU's order, so the samples of equal fields are equal bit for bit. */
#include "solver_common.cuh"

namespace {

template <typename T>
__global__ void k_sample(const T *__restrict__ d, int npts, int nw,
                         const long *__restrict__ off,
                         const double *__restrict__ w, double *dst) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= npts) return;
  double acc = 0;
  for (int q = 0; q < nw; q++) {
    const long long e = (long long)p * nw + q;
    acc = __dadd_rn(acc, __dmul_rn(w[e], (double)d[off[e]]));
  }
  dst[p] = acc;
}

} // namespace

strata_status strata__cuda_sample(const strata_field *f, int npts, int nw,
                                  const long *off, const double *w,
                                  double *dst) {
  strata_context *ctx = f->ctx;
  if (npts <= 0) return STRATA_OK;
  if (nw < 1)
    return strata__fail(ctx, STRATA_EINVAL, "sample: %d weights per point",
                        nw);
  STRATA__USE_DEVICE(ctx);
  cudaStream_t stream = strata__cu_state(ctx)->stream;
  const int threads = 128;
  const unsigned blocks = (unsigned)((npts + threads - 1) / threads);
  if (f->d.precision == STRATA_F32)
    k_sample<float><<<blocks, threads, 0, stream>>>((const float *)f->data,
                                                     npts, nw, off, w, dst);
  else
    k_sample<double><<<blocks, threads, 0, stream>>>((const double *)f->data,
                                                      npts, nw, off, w, dst);
  STRATA__LAUNCHED(ctx, "sample kernel launch");
  return STRATA_OK;
}
