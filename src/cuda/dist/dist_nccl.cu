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

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

namespace {
struct nccl_state {
  ncclComm_t comm;
  cudaStream_t stream;
  cudaEvent_t ready, done;
  int device;
  char *stage; /* packed messages (the rows of x-z faces) */
  size_t stage_bytes;
};

/* Copies nruns runs of run_w words from src (runs sstride bytes apart) to
 * dst (dstride apart): packs the rows of an x-z face into a message, or
 * unpacks one. */
template <typename W>
__global__ void k_runs(char *dst, const char *src, size_t run_w,
                       size_t nruns, size_t sstride, size_t dstride) {
  const size_t total = run_w * nruns;
  for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total;
       t += (size_t)gridDim.x * blockDim.x) {
    const size_t r = t / run_w, i = t - r * run_w;
    reinterpret_cast<W *>(dst + r * dstride)[i] =
        reinterpret_cast<const W *>(src + r * sstride)[i];
  }
}

/* Launches k_runs on stream s: pack (field to stage) or unpack. */
static cudaError_t runs_copy(const strata__xfer *x, char *stage, int pack,
                             cudaStream_t s) {
  const size_t n = x->bytes / x->run;
  char *f = (char *)x->ptr;
  char *dst = pack ? stage : f;
  const char *src = pack ? f : stage;
  const size_t ds = pack ? x->run : x->stride, ss = pack ? x->stride : x->run;
  const int wide = ((x->run | x->stride | (uintptr_t)f | (uintptr_t)stage) &
                    15) == 0;
  const size_t w = wide ? 16 : 4, run_w = x->run / w;
  size_t blocks = (run_w * n + 255) / 256;
  if (blocks > 4096) blocks = 4096;
  if (blocks < 1) blocks = 1;
  if (wide)
    k_runs<uint4><<<(unsigned)blocks, 256, 0, s>>>(dst, src, run_w, n, ss, ds);
  else
    k_runs<unsigned><<<(unsigned)blocks, 256, 0, s>>>(dst, src, run_w, n, ss,
                                                     ds);
  return cudaGetLastError();
}
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
  cudaFree(p->stage);
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
  /* packed messages (x-z faces) go through the staging buffer, packed
   * and unpacked on the exchange stream */
  size_t need = 0;
  for (int i = 0; i < nx; i++)
    if (x[i].run) need += (x[i].bytes + 255) / 256 * 256;
  if (need > p->stage_bytes) {
    STRATA__CU(ctx, cudaStreamSynchronize(p->stream));
    cudaFree(p->stage);
    p->stage = NULL;
    p->stage_bytes = 0;
    STRATA__CU(ctx, cudaMalloc((void **)&p->stage, need));
    p->stage_bytes = need;
  }
  STRATA__CU(ctx, cudaEventRecord(p->ready, st->stream));
  STRATA__CU(ctx, cudaStreamWaitEvent(p->stream, p->ready, 0));
  void *ptr[64];
  size_t at = 0;
  for (int i = 0; i < nx && i < 64; i++) {
    ptr[i] = x[i].ptr;
    if (!x[i].run) continue;
    ptr[i] = p->stage + at;
    if (x[i].send)
      STRATA__CU(ctx, runs_copy(&x[i], p->stage + at, 1, p->stream));
    at += (x[i].bytes + 255) / 256 * 256;
  }
  STRATA__NCCL(ctx, ncclGroupStart());
  for (int i = 0; i < nx; i++) {
    ncclResult_t r = x[i].send ? ncclSend(ptr[i], x[i].bytes, ncclUint8,
                                          x[i].peer, p->comm, p->stream)
                               : ncclRecv(ptr[i], x[i].bytes, ncclUint8,
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
  for (int i = 0; i < nx; i++)
    if (x[i].run && !x[i].send)
      STRATA__CU(ctx, runs_copy(&x[i], (char *)ptr[i], 0, p->stream));
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
