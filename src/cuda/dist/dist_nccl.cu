/* The GPU halo exchange: NCCL send/receive of whole planes on a stream of
 * its own, ordered against the compute stream by events only, so the host
 * never waits and the interior kernels run while the planes move. */
#include "cuda_internal.h"
#include "dist/dist_internal.h"

extern "C" int strata__cuda_device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

#ifdef STRATA_HAVE_NCCL
#include <nccl.h>

#include <stdlib.h>
#include <string.h>

namespace {
struct nccl_state {
  ncclComm_t comm;
  cudaStream_t stream;
  cudaEvent_t ready, done;
  int device;
};
static_assert(sizeof(ncclUniqueId) <= STRATA__NCCL_ID_BYTES,
              "NCCL unique id larger than expected");
} // namespace

#define STRATA__NCCL(ctx, call)                                                \
  do {                                                                         \
    ncclResult_t r_ = (call);                                                  \
    if (r_ != ncclSuccess)                                                     \
      return strata__fail((ctx), STRATA_EDEVICE, "NCCL: %s failed: %s (%s)",   \
                          #call, ncclGetErrorString(r_),                       \
                          ncclGetLastError(NULL));                             \
  } while (0)

extern "C" strata_status strata__nccl_unique_id(strata_context *ctx,
                                                void *id) {
  ncclUniqueId u;
  STRATA__NCCL(ctx, ncclGetUniqueId(&u));
  memset(id, 0, STRATA__NCCL_ID_BYTES);
  memcpy(id, &u, sizeof u);
  return STRATA_OK;
}

extern "C" void strata__nccl_destroy(void *v);

extern "C" strata_status strata__nccl_create(strata_context *ctx, int nranks,
                                             int rank, const void *id,
                                             void **out) {
  strata__cuda_state *st = strata__cu_state(ctx);
  *out = NULL;
  STRATA__CU(ctx, cudaSetDevice(st->device));
  nccl_state *p = (nccl_state *)calloc(1, sizeof *p);
  if (!p) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  p->device = st->device;
  ncclUniqueId u;
  memcpy(&u, id, sizeof u);
  ncclResult_t r = ncclCommInitRank(&p->comm, nranks, u, rank);
  if (r != ncclSuccess) {
    free(p);
    return strata__fail(ctx, STRATA_EDEVICE,
                        "NCCL: cannot join the communicator of %d ranks as "
                        "rank %d on GPU %d: %s (%s)",
                        nranks, rank, st->device, ncclGetErrorString(r),
                        ncclGetLastError(NULL));
  }
  /* the highest priority: the exchange kernel's blocks are scheduled ahead
   * of the interior kernel's waiting blocks, so the planes move while the
   * interior is computed instead of after it */
  int lo = 0, hi = 0;
  cudaError_t e = cudaDeviceGetStreamPriorityRange(&lo, &hi);
  if (e == cudaSuccess)
    e = cudaStreamCreateWithPriority(&p->stream, cudaStreamNonBlocking, hi);
  if (e == cudaSuccess)
    e = cudaEventCreateWithFlags(&p->ready, cudaEventDisableTiming);
  if (e == cudaSuccess)
    e = cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming);
  if (e != cudaSuccess) {
    ncclCommDestroy(p->comm);
    free(p);
    return strata__fail(ctx, STRATA_EDEVICE, "CUDA: exchange stream: %s",
                        cudaGetErrorString(e));
  }
  /* NCCL connects peers on first use, which takes a good part of a second:
   * pay it here, with both neighbours of the slab order, so the first
   * steps of a run (and its timing) do not */
  if (nranks > 1) {
    const size_t wb = (size_t)1 << 20;
    void *buf = NULL;
    e = cudaMalloc(&buf, 2 * wb);
    if (e == cudaSuccess) {
      const int up = (rank + 1) % nranks, dn = (rank + nranks - 1) % nranks;
      ncclGroupStart();
      ncclSend(buf, wb, ncclUint8, up, p->comm, p->stream);
      ncclRecv((char *)buf + wb, wb, ncclUint8, dn, p->comm, p->stream);
      ncclSend(buf, wb, ncclUint8, dn, p->comm, p->stream);
      ncclRecv((char *)buf + wb, wb, ncclUint8, up, p->comm, p->stream);
      r = ncclGroupEnd();
      e = cudaStreamSynchronize(p->stream);
      cudaFree(buf);
    }
    if (e != cudaSuccess || r != ncclSuccess) {
      strata__nccl_destroy(p);
      return strata__fail(ctx, STRATA_EDEVICE,
                          "NCCL: the first exchange with the neighbours "
                          "failed: %s",
                          e != cudaSuccess ? cudaGetErrorString(e)
                                           : ncclGetErrorString(r));
    }
  }
  *out = p;
  return STRATA_OK;
}

extern "C" void strata__nccl_destroy(void *v) {
  nccl_state *p = (nccl_state *)v;
  if (!p) return;
  cudaSetDevice(p->device);
  cudaStreamSynchronize(p->stream);
  ncclCommDestroy(p->comm);
  cudaEventDestroy(p->ready);
  cudaEventDestroy(p->done);
  cudaStreamDestroy(p->stream);
  free(p);
}

extern "C" strata_status strata__nccl_start(strata_context *ctx, void *v,
                                            const strata__xfer *x, int nx) {
  nccl_state *p = (nccl_state *)v;
  strata__cuda_state *st = strata__cu_state(ctx);
  STRATA__CU(ctx, cudaSetDevice(st->device));
  STRATA__CU(ctx, cudaEventRecord(p->ready, st->stream));
  STRATA__CU(ctx, cudaStreamWaitEvent(p->stream, p->ready, 0));
  STRATA__NCCL(ctx, ncclGroupStart());
  for (int i = 0; i < nx; i++) {
    ncclResult_t r = x[i].send ? ncclSend(x[i].ptr, x[i].bytes, ncclUint8,
                                          x[i].peer, p->comm, p->stream)
                               : ncclRecv(x[i].ptr, x[i].bytes, ncclUint8,
                                          x[i].peer, p->comm, p->stream);
    if (r != ncclSuccess) {
      ncclGroupEnd();
      return strata__fail(ctx, STRATA_EDEVICE,
                          "NCCL: %s of %zu bytes with rank %d failed: %s",
                          x[i].send ? "send" : "receive", x[i].bytes,
                          x[i].peer, ncclGetErrorString(r));
    }
  }
  STRATA__NCCL(ctx, ncclGroupEnd());
  STRATA__CU(ctx, cudaEventRecord(p->done, p->stream));
  return STRATA_OK;
}

extern "C" strata_status strata__nccl_join(strata_context *ctx, void *v) {
  nccl_state *p = (nccl_state *)v;
  strata__cuda_state *st = strata__cu_state(ctx);
  STRATA__CU(ctx, cudaStreamWaitEvent(st->stream, p->done, 0));
  ncclResult_t async = ncclSuccess;
  STRATA__NCCL(ctx, ncclCommGetAsyncError(p->comm, &async));
  if (async != ncclSuccess)
    return strata__fail(ctx, STRATA_EDEVICE, "NCCL: the exchange failed: %s",
                        ncclGetErrorString(async));
  return STRATA_OK;
}
#endif
