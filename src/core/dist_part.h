/* Distributed fields: the window of a rank's part of a split grid and the
 * calls the solvers and engines make on it (src/dist).  The library's
 * internal interface, included through internal.h. */
#ifndef STRATA_CORE_DIST_PART_H
#define STRATA_CORE_DIST_PART_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Distributed fields (src/dist/dist.c, dist_exchange.c) --------------
 * The local interior along the split axis is [e_lo planes of the low
 * neighbour][owned planes][e_hi planes of the high neighbour]: solvers
 * whose step reaches further than the ghost width (fused heat steps, the
 * Yee scheme) recompute e planes of each neighbour, whose results are
 * overwritten by the next exchange.  An exchange fills, on each side with
 * a neighbour, the e + ghost planes next to the owned ones from the
 * neighbour's owned planes (whole planes, x/y ghosts included). */
typedef struct strata__window {
  strata_dist *dist;
  int axis;          /* dims - 1 */
  size_t gn[3];      /* global interior */
  long offset;       /* global index along axis of local interior 0 */
  long own_lo, own_n;/* owned planes, global */
  int e_lo, e_hi;    /* extension planes below / above the owned ones */
  int nb[2];         /* neighbour ranks below / above, -1 = a global face */
  /* A y-z split of a 3D grid over py x pz ranks (rank = cz py + cy) adds
   * the same along y: rows [ey_lo][own_n_y owned][ey_hi] of the local
   * interior, neighbours nby.  Slabs: py = 1, and the y members describe
   * the whole y extent with no neighbours. */
  int py, pz, cy, cz;
  long offset_y, own_lo_y, own_n_y;
  int ey_lo, ey_hi;
  int nby[2];
} strata__window;

/* Flags of the periodic argument below: the split axes that wrap, and
 * whether the caller computes on a y-z split (without it: slabs). */
enum {
  STRATA__DIST_WRAP_Z = 1, /* the last axis (z in 3D, y in 2D) is periodic */
  STRATA__DIST_WRAP_Y = 2, /* y is periodic (3D) */
  STRATA__DIST_YZ = 4      /* the solver works on a y-z split of 3D grids */
};

/* The group's ranks_y option: 0 when the split is the exchange model's
 * choice (1 without a group). */
int strata__dist_ranks_y(const strata_dist *d);
/* The ranks along y and z (p[0] x p[1]) a 3D grid gd is split over: the
 * group's ranks_y when set, else the one the exchange model predicts
 * fastest (docs/distributed.md); 1 x P for 2D grids and without yz. */
void strata__dist_grid(const strata_dist *d, const strata_field_desc *gd,
                       int yz, int p[2]);

/* The machine numbers of the exchange model (docs/distributed.md): mem,
 * the rate in bytes/s at which an unfused sweep moves its 2 values a
 * point; link, bytes/s of one halo message; lat, seconds an exchange
 * costs besides its bytes.  The CUDA engine's defaults are calibrated (an
 * H100's sweep, NCCL between H200s over NVLink); the CPU engine has no
 * calibrated link, so its exchange costs nothing unless the tuning
 * switches dist_mem_gbs, dist_link_gbs, dist_link_us say. */
typedef struct strata__dist_machine {
  double mem, link, lat;
} strata__dist_machine;
strata__dist_machine strata__dist_machine_of(const strata_context *ctx);
/* The temporal-blocking model's gain of s fused steps in tiles of p points
 * a side, f(s) = s (p - 2s)^D / (p^D + (p - 2s)^D), normalised to s = 1:
 * p = 32 describes the 3D register tiles, p = 64 the 2D warp strips
 * (docs/performance.md#temporal-blocking-fs). */
double strata__fuse_gain(int dims, int s);
/* Predicted seconds a step of a 3D sweep fused s deep on the largest part
 * of grid n over py x pz ranks (src/dist/dist_model.c). */
double strata__dist_split_time(const strata__dist_machine *m,
                               const size_t n[3], double e, int py, int pz,
                               int s);
/* The ranks along y of the fastest predicted split of P ranks for a
 * sweep fused s deep, parts of at least need planes and rows. */
int strata__dist_choose_py(const strata__dist_machine *m, const size_t n[3],
                           double e, int P, int s, long need);

/* The view of the box a distributed field's rank owns (its owned planes,
 * and along y its owned rows), as strata__field_view makes views. */
void strata__field_owned(const strata_field *f, strata_field *v);

/* The part of a global field this rank holds, with ext extension planes
 * on each side that has a neighbour (periodic: flags above). */
strata_status strata__dist_field_create_ext(strata_dist *d,
                                            const strata_field_desc *global,
                                            int ext, int periodic,
                                            strata_field **out);
/* The description of this rank's part of a global field (its owned planes
 * and ext extension planes on each side that may have a neighbour), checked
 * as strata__dist_field_create_ext checks it; nothing is allocated. */
strata_status strata__dist_local_desc(strata_dist *d,
                                      const strata_field_desc *global,
                                      int ext, int periodic,
                                      strata_field_desc *local);
/* The window of this rank's part of a global field (its planes and, on a
 * y-z split, rows, with their neighbours), as
 * strata__dist_field_create_ext would make it; nothing is allocated. */
strata_status strata__dist_local_window(strata_dist *d,
                                        const strata_field_desc *global,
                                        int ext, int periodic,
                                        strata__window *w);
/* bc with the faces between ranks set to STRATA_BC_NONE. */
void strata__dist_local_bc(const strata_field *f, const strata_boundary *bc,
                           strata_boundary *local);
/* Exchanges the ghost (and extension) planes of nf fields of the same
 * window (periodic: the split axis wraps around); done (in stream order on
 * a GPU) when it returns. */
strata_status strata__dist_exchange(strata_field *const *f, int nf,
                                    int periodic);
/* steps fused steps of op (be->apply_fused) on a distributed field: the
 * local faces filled by bc, the exchange, the sweep; with the group's
 * overlap on, the planes that need no neighbour's plane are computed
 * while the exchange travels.  out's owned planes are exact; its
 * extension planes are not written. */
strata_status strata__dist_apply_fused(const strata_stencil *op,
                                       strata_field *in,
                                       const strata_boundary *bc, int steps,
                                       strata_field *out);
/* A field struct aliasing planes [k0, k0 + count) of f's interior along
 * axis dims-1 (k0 may be negative down to -ghost + ghost of the view: the
 * view's ghosts are f's neighbouring planes).  Owns nothing. */
void strata__field_view(const strata_field *f, long k0, long count,
                        strata_field *view);
/* Communication helpers for solvers: broadcast bytes from rank 0; gather
 * nbytes per rank (may differ: counts[] in bytes, on root) to root. */
strata_status strata__dist_bcast(strata_dist *d, void *buf, size_t bytes);
strata_status strata__dist_gatherv(strata_dist *d, const void *send,
                                   size_t bytes, void *recv, int root);
/* Moves the owned planes of every rank's part of the distributed field f
 * into the same planes of whole (gather = 1), an ordinary field of the
 * global grid with f's plane layout on rank root (ignored elsewhere), or
 * back (gather = 0): whole planes, ghosts and padding included, device to
 * device on GPUs (NCCL), host to host on the CPU (MPI).  Collective; done
 * (in stream order on a GPU) when it returns. */
strata_status strata__dist_planes(strata_field *f, strata_field *whole,
                                  int root, int gather);
/* strata_field_norm / strata_field_diff of distributed fields. */
strata_status strata__dist_norm(const strata_field *a, const strata_field *b,
                                strata_norm which, double *out);
/* s if every rank has STRATA_OK or this rank failed; else a failure
 * saying another rank failed (strata__fail_elsewhere): collective calls
 * fail everywhere or nowhere, so no rank waits in a later exchange for one
 * that gave up.  strata__dist_agree_as names what the other rank failed to
 * do ("save or load its part of the checkpoint") and the code to return;
 * strata__dist_agree says "failed in the same call", STRATA_EINVAL. */
strata_status strata__dist_agree(strata_dist *d, strata_status s);
strata_status strata__dist_agree_as(strata_dist *d, strata_status s,
                                    strata_status code, const char *what);
int strata__dist_rank(const strata_dist *d);
/* Whether the group overlaps exchanges with computation (its options'
 * overlap). */
int strata__dist_overlap(const strata_dist *d);
int strata__dist_size(const strata_dist *d);
strata_context *strata__dist_ctx(const strata_dist *d);

#ifdef __cplusplus
}
#endif
#endif
