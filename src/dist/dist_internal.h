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
 * (device memory) to (from) rank peer.  run = 0: one contiguous run of
 * bytes; otherwise bytes / run runs of run bytes, stride bytes apart (the
 * rows of an x-z face: one run of whole rows a plane), packed into a
 * staging buffer before a send and unpacked from it after a receive. */
typedef struct strata__xfer {
  int peer;
  int send; /* 1 send, 0 receive */
  void *ptr;
  size_t bytes;
  size_t run, stride;
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
  int ranks_y; /* strata_dist_options.ranks_y */
  strata_dist_stats stats;
  void *nccl;
  vchoice vc[16];
  int nvc;
  /* MPI: the host staging of packed messages, and the packed receives
   * to unpack once the messages are in */
  unsigned char *stage;
  size_t stage_bytes;
  strata__xfer unpack[16];
  size_t unpack_at[16];
  int nunpack;
#ifdef STRATA_HAVE_MPI
  MPI_Comm comm;
  MPI_Request req[64];
  int nreq;
#endif
};

/* The planes [*lo, *lo + *cnt) of n that part r of P owns. */
static inline void split_n(size_t n, int P, int r, size_t *lo, size_t *cnt) {
  size_t base = n / (size_t)P, rem = n % (size_t)P, q = (size_t)r;
  *lo = q * base + (q < rem ? q : rem);
  *cnt = base + (q < rem ? 1 : 0);
}

/* The points of the box rank r owns in a window's decomposition: x whole,
 * rows [lo[0], lo[0] + cnt[0]) along y (3D; 2D: lo[0] = 0, cnt[0] = 1)
 * and planes [lo[1], lo[1] + cnt[1]) along the last axis. */
static inline void rank_box(const strata__window *w, int r, size_t lo[2],
                            size_t cnt[2]) {
  lo[0] = 0;
  cnt[0] = w->axis == 2 ? w->gn[1] : 1;
  if (w->py > 1) split_n(w->gn[1], w->py, r % w->py, &lo[0], &cnt[0]);
  split_n(w->gn[w->axis], w->pz, r / w->py, &lo[1], &cnt[1]);
}

/* Plane k of a field along its split (last) axis, k = 0 its first owned
 * plane (negative: ghost planes): planes are contiguous in its allocation. */
static inline char *plane_ptr(const strata_field *f, long k) {
  const int ax = f->d.dims - 1;
  const size_t S = ax == 2 ? f->L.pitch_x * f->L.pitch_y : f->L.pitch_x;
  return (char *)f->data +
         (ptrdiff_t)(k + f->g[ax]) * (ptrdiff_t)(S * f->esize);
}

/* The neighbours of a window along the last axis for an exchange with or
 * without wrap-around. */
static inline void neighbours(const strata__window *w, int periodic,
                              int nb[2]) {
  nb[0] = w->nb[0];
  nb[1] = w->nb[1];
  if (periodic && w->pz > 1) {
    if (nb[0] < 0) nb[0] = (w->pz - 1) * w->py + w->cy;
    if (nb[1] < 0) nb[1] = w->cy;
  }
}

/* The same along y of a y-z split (none for slabs). */
static inline void neighbours_y(const strata__window *w, int periodic,
                                int nb[2]) {
  nb[0] = w->nby[0];
  nb[1] = w->nby[1];
  if (periodic && w->py > 1) {
    if (nb[0] < 0) nb[0] = w->cz * w->py + w->py - 1;
    if (nb[1] < 0) nb[1] = w->cz * w->py;
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
