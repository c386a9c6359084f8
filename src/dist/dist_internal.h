/* What the parts of the distributed layer share: the device side of the
 * halo exchange (src/cuda/dist/dist_nccl.cu, NCCL), called from
 * src/dist/dist_exchange.c and dist.c, and, for the host C files only, the
 * group's state and the small helpers both dist.c and dist_exchange.c use.
 * Not installed. */
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

#ifndef __CUDACC__
/* ---- host side, shared by dist.c and dist_exchange.c ------------------ */
#include <stdint.h>

#ifdef STRATA_HAVE_MPI
#include <mpi.h>
#endif

enum { T_NONE = 0, T_MPI = 1, T_NCCL = 2 };

typedef struct vchoice {
  uint64_t key;
  char name[32];
  int block[3];
} vchoice;

struct strata_dist {
  strata_context *ctx;
  int rank, size, local_rank;
  int transport;
  int overlap, exchange;
  strata_dist_stats stats;
  void *nccl;
  vchoice vc[16];
  int nvc;
#ifdef STRATA_HAVE_MPI
  MPI_Comm comm;
  MPI_Request req[64];
  int nreq;
#endif
};

/* The neighbours of a window for an exchange with or without wrap-around. */
static inline void neighbours(const strata__window *w, int periodic,
                              int nb[2]) {
  const strata_dist *d = w->dist;
  nb[0] = w->nb[0];
  nb[1] = w->nb[1];
  if (periodic && d->size > 1) {
    if (nb[0] < 0) nb[0] = d->size - 1;
    if (nb[1] < 0) nb[1] = 0;
  }
}

#ifdef STRATA_HAVE_MPI
/* 1 on every rank when ok is 1 on every rank. */
static inline int all_ok(MPI_Comm c, int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c);
  return all;
}
#endif
#endif /* __CUDACC__ */
#endif
