/* The device side of the halo exchange (src/cuda/dist/dist_nccl.cu, NCCL),
 * called from src/dist/dist.c.  Not installed. */
#ifndef STRATA_DIST_INTERNAL_H
#define STRATA_DIST_INTERNAL_H

#include "../core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One message of an exchange: send (or receive into) bytes at ptr
 * (device memory) to (from) rank peer. */
typedef struct strata__xfer {
  int peer;
  int send; /* 1 send, 0 receive */
  void *ptr;
  size_t bytes;
} strata__xfer;

#define STRATA__NCCL_ID_BYTES 128

#ifdef STRATA_HAVE_CUDA
/* GPUs this process sees (0 when none or on error). */
int strata__cuda_device_count(void);
#endif

#if defined(STRATA_HAVE_CUDA) && defined(STRATA_HAVE_NCCL)
/* Writes a new NCCL unique id (STRATA__NCCL_ID_BYTES bytes) to id. */
strata_status strata__nccl_unique_id(strata_context *ctx, void *id);
/* Joins the NCCL communicator of nranks ranks named by id on ctx's GPU. */
strata_status strata__nccl_create(strata_context *ctx, int nranks, int rank,
                                  const void *id, void **out);
void strata__nccl_destroy(void *p);
/* Starts the messages on the exchange stream once the work queued so far
 * on ctx's stream is done; returns at once. */
strata_status strata__nccl_start(strata_context *ctx, void *p,
                                 const strata__xfer *x, int nx);
/* Makes ctx's stream wait for the started messages (no host wait). */
strata_status strata__nccl_join(strata_context *ctx, void *p);
#endif

#ifdef __cplusplus
}
#endif
#endif
