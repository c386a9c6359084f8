/* A group of processes and GPUs and the fields split over it: making the
 * group (MPI, one context per rank, the NCCL communicator for the CUDA
 * engine), its collectives, the slab decomposition along the last axis and
 * the creation of distributed fields with their windows.  The halo exchange,
 * distributed apply, gathers and norms that work on those fields are in
 * dist_exchange.c.  See docs/distributed.md. */
#define _POSIX_C_SOURCE 200809L
#include "dist_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strata_dist_options_init(strata_dist_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->transport = STRATA_TRANSPORT_AUTO;
  o->overlap = 1;
  o->exchange = 1;
  o->device_by_rank = 1;
}

int strata_dist_available(char *why, size_t n) {
#ifdef STRATA_HAVE_MPI
  if (why && n)
    snprintf(why, n, "MPI%s",
#if defined(STRATA_HAVE_CUDA) && defined(STRATA_HAVE_NCCL)
             " and NCCL"
#else
             " (no NCCL: CPU ranks only)"
#endif
    );
  return 1;
#else
  if (why && n)
    snprintf(why, n, "strata was built without MPI (install an MPI, e.g. "
                     "libopenmpi-dev, and rebuild)");
  return 0;
#endif
}

strata_context *strata_dist_context(const strata_dist *d) {
  return d ? d->ctx : NULL;
}
int strata_dist_rank(const strata_dist *d) { return d ? d->rank : -1; }
int strata_dist_size(const strata_dist *d) { return d ? d->size : 0; }
int strata__dist_rank(const strata_dist *d) { return d->rank; }
int strata__dist_size(const strata_dist *d) { return d->size; }
int strata__dist_overlap(const strata_dist *d) { return d->overlap; }
strata_context *strata__dist_ctx(const strata_dist *d) { return d->ctx; }

const char *strata_dist_transport(const strata_dist *d) {
  if (!d) return "?";
  return d->transport == T_NCCL ? "nccl" : d->transport == T_MPI ? "mpi"
                                                                 : "none";
}

strata_status strata_dist_split(const strata_dist *d, size_t n, int rank,
                                size_t *lo, size_t *count) {
  if (!d || !lo || !count || rank < 0 || rank >= d->size) return STRATA_EINVAL;
  size_t P = (size_t)d->size, r = (size_t)rank;
  size_t base = n / P, rem = n % P;
  *lo = r * base + (r < rem ? r : rem);
  *count = base + (r < rem ? 1 : 0);
  return STRATA_OK;
}

strata_status strata_dist_get_stats(const strata_dist *d,
                                    strata_dist_stats *s) {
  if (!d || !s) return STRATA_EINVAL;
  *s = d->stats;
  return STRATA_OK;
}

static void set_errbuf(const strata_context_options *copt, const char *msg) {
  if (copt && copt->errbuf && copt->errbuf_size)
    strata__fit(copt->errbuf, copt->errbuf_size,
                snprintf(copt->errbuf, copt->errbuf_size, "%s", msg));
}

/* ---- windows and views --------------------------------------------------- */

void strata__field_view(const strata_field *f, long k0, long count,
                        strata_field *v) {
  *v = *f;
  v->win = NULL;
  const int ax = f->d.dims - 1;
  const size_t S = ax == 2 ? f->L.pitch_x * f->L.pitch_y : f->L.pitch_x;
  v->d.n[ax] = (size_t)count;
  if (ax == 2)
    v->L.planes = (size_t)count + 2 * (size_t)f->g[2];
  else
    v->L.pitch_y = (size_t)count + 2 * (size_t)f->g[1];
  v->L.elements = v->L.pitch_x * v->L.pitch_y * v->L.planes;
  v->L.bytes = v->L.elements * f->esize;
  v->data = (char *)f->data + (ptrdiff_t)k0 * (ptrdiff_t)(S * f->esize);
}

void strata__dist_local_bc(const strata_field *f, const strata_boundary *bc,
                           strata_boundary *local) {
  *local = *bc;
  const strata__window *w = f->win;
  if (!w) return;
  const int ax = w->axis;
  int nb[2];
  neighbours(w, bc->kind[2 * ax] == STRATA_BC_PERIODIC, nb);
  for (int side = 0; side < 2; side++)
    if (nb[side] >= 0) local->kind[2 * ax + side] = STRATA_BC_NONE;
  neighbours_y(w, bc->kind[2] == STRATA_BC_PERIODIC, nb);
  for (int side = 0; side < 2; side++)
    if (nb[side] >= 0) local->kind[2 + side] = STRATA_BC_NONE;
}

void strata__field_owned(const strata_field *f, strata_field *v) {
  const strata__window *w = f->win;
  strata__field_view(f, w->own_lo - w->offset, w->own_n, v);
  if (w->py > 1) { /* the owned rows: the same allocation, origin moved */
    v->d.n[1] = (size_t)w->own_n_y;
    v->L.origin += (size_t)(w->own_lo_y - w->offset_y) * f->L.pitch_x;
  }
}

int strata__dist_ranks_y(const strata_dist *d) { return d ? d->ranks_y : 1; }

void strata__dist_grid(const strata_dist *d, const strata_field_desc *gd,
                       int yz, int p[2]) {
  const int P = d ? d->size : 1;
  p[0] = 1;
  p[1] = P;
  if (!yz || gd->dims != 3 || P < 2) return;
  p[0] = d->ranks_y;
  if (p[0] == 0 && strata_context_backend(d->ctx) == STRATA_BACKEND_CUDA)
    p[0] = 1; /* GPUs: slabs, measured ahead of the split within a node
               * (docs/distributed.md); ranks_y asks for the split */
  if (p[0] == 0) {
    /* the model's choice for the CPU engine's 3D heat sweep (one step a
     * sweep), with parts of at least a 4-deep sweep's 7 planes */
    const strata__dist_machine m = strata__dist_machine_of(d->ctx);
    p[0] = strata__dist_choose_py(&m, gd->n, (double)gd->precision, P, 1, 7);
  }
  p[1] = P / p[0];
}

#ifndef STRATA_HAVE_MPI
/* ---- built without MPI ------------------------------------------------- */
strata_status strata_dist_create(const strata_context_options *copt,
                                 const strata_dist_options *o,
                                 strata_dist **out) {
  (void)o;
  if (out) *out = NULL;
  char why[160];
  strata_dist_available(why, sizeof why);
  set_errbuf(copt, why);
  return STRATA_ENOTSUP;
}
void strata_dist_destroy(strata_dist **d) {
  if (d) *d = NULL;
}
strata_status strata_dist_finalize(void) { return STRATA_OK; }
strata_status strata__dist_field_create_ext(strata_dist *d,
                                            const strata_field_desc *g,
                                            int ext, int periodic,
                                            strata_field **out) {
  (void)d, (void)g, (void)ext, (void)periodic, (void)out;
  return STRATA_ENOTSUP;
}
strata_status strata_dist_field_create(strata_dist *d,
                                       const strata_field_desc *g,
                                       strata_field **out) {
  return strata__dist_field_create_ext(d, g, 0, 0, out);
}
strata_status strata__dist_local_window(strata_dist *d,
                                        const strata_field_desc *g, int ext,
                                        int periodic, strata__window *w) {
  (void)d, (void)g, (void)ext, (void)periodic, (void)w;
  return STRATA_ENOTSUP;
}
strata_status strata__dist_local_desc(strata_dist *d,
                                      const strata_field_desc *g, int ext,
                                      int periodic, strata_field_desc *l) {
  (void)d, (void)g, (void)ext, (void)periodic, (void)l;
  return STRATA_ENOTSUP;
}
strata_status strata_dist_allreduce(const strata_dist *d, double *v, int n,
                                    int op) {
  (void)d, (void)v, (void)n, (void)op;
  return STRATA_ENOTSUP;
}
strata_status strata_dist_barrier(const strata_dist *d) {
  (void)d;
  return STRATA_ENOTSUP;
}
strata_status strata__dist_bcast(strata_dist *d, void *buf, size_t bytes) {
  (void)d, (void)buf, (void)bytes;
  return STRATA_ENOTSUP;
}
strata_status strata__dist_agree_as(strata_dist *d, strata_status s,
                                    strata_status code, const char *what) {
  (void)d, (void)code, (void)what;
  return s;
}
strata_status strata__dist_agree(strata_dist *d, strata_status s) {
  (void)d;
  return s;
}
#else
/* ---- MPI ---------------------------------------------------------------- */

/* Set when strata_dist_create initialised MPI: then finalising it is the
 * library's job too, done by strata_dist_finalize when the program asks
 * (never at exit behind its back, which would run after the caller's own
 * clean-up and on paths, such as a failed rank, that must not block). */
static int mpi_ours;

strata_status strata_dist_finalize(void) {
  if (!mpi_ours) return STRATA_OK;
  int fin = 0;
  MPI_Finalized(&fin);
  mpi_ours = 0;
  if (!fin && MPI_Finalize() != MPI_SUCCESS) return STRATA_EINVAL;
  return STRATA_OK;
}

strata_status strata_dist_create(const strata_context_options *copt,
                                  const strata_dist_options *o,
                                  strata_dist **out) {
  if (!out) return STRATA_EINVAL;
  *out = NULL;
  strata_dist_options def;
  if (!o) {
    strata_dist_options_init(&def);
    o = &def;
  }
  if ((int)o->transport < 0 || o->transport > STRATA_TRANSPORT_NCCL) {
    set_errbuf(copt, "dist: unknown transport");
    return STRATA_EINVAL;
  }
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int prov = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &prov) !=
        MPI_SUCCESS) {
      set_errbuf(copt, "dist: MPI_Init_thread failed");
      return STRATA_EINVAL;
    }
    mpi_ours = 1;
  }
  strata_dist *d = calloc(1, sizeof *d);
  if (!d) return STRATA_ENOMEM;
  MPI_Comm base = o->comm ? *(const MPI_Comm *)o->comm : MPI_COMM_WORLD;
  MPI_Comm_dup(base, &d->comm);
  MPI_Comm_rank(d->comm, &d->rank);
  MPI_Comm_size(d->comm, &d->size);
  MPI_Comm node;
  MPI_Comm_split_type(d->comm, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL,
                      &node);
  MPI_Comm_rank(node, &d->local_rank);
  MPI_Comm_free(&node);
  d->overlap = o->overlap != 0;
  d->exchange = o->exchange != 0;
  d->ranks_y = o->ranks_y;
  if (o->ranks_y < 0 || (o->ranks_y > 0 && d->size % o->ranks_y != 0)) {
    char m[160];
    snprintf(m, sizeof m, "dist: ranks_y = %d does not divide the %d "
             "ranks (0 = chosen by the model, 1 = slabs)", o->ranks_y,
             d->size);
    set_errbuf(copt, m);
    MPI_Comm_free(&d->comm);
    free(d);
    return STRATA_EINVAL;
  }

  strata_context_options co;
  if (copt)
    co = *copt;
  else
    strata_context_options_init(&co);
  char msg[STRATA__ERRMSG_SIZE] = "";
  co.errbuf = msg;
  co.errbuf_size = sizeof msg;
#ifdef STRATA_HAVE_CUDA
  if (o->device_by_rank && co.backend != STRATA_BACKEND_CPU) {
    int ng = strata__cuda_device_count();
    if (ng > 0) co.device = d->local_rank % ng;
  }
#endif
  strata_status s = strata_context_create(&d->ctx, &co);
  int ok = all_ok(d->comm, s == STRATA_OK);
  if (!ok) {
    if (s == STRATA_OK) {
      snprintf(msg, sizeof msg, "dist: another rank could not create its "
               "context");
      s = STRATA_ENOBACKEND;
    }
    goto fail;
  }
  int cuda = strata_context_backend(d->ctx) == STRATA_BACKEND_CUDA;
  if (d->size == 1) {
    d->transport = T_NONE;
  } else if (cuda) {
    if (o->transport == STRATA_TRANSPORT_MPI) {
      snprintf(msg, sizeof msg, "dist: transport mpi works on host memory "
               "only; a CUDA context exchanges through NCCL");
      s = STRATA_ENOTSUP;
      goto fail_all;
    }
#if defined(STRATA_HAVE_CUDA) && defined(STRATA_HAVE_NCCL)
    d->transport = T_NCCL;
    unsigned char id[STRATA__NCCL_ID_BYTES];
    memset(id, 0, sizeof id);
    s = STRATA_OK;
    if (d->rank == 0) s = strata__nccl_unique_id(d->ctx, id);
    if (!all_ok(d->comm, s == STRATA_OK)) {
      snprintf(msg, sizeof msg, "dist: %s",
               s != STRATA_OK ? strata_context_error(d->ctx)
                              : "rank 0 could not make an NCCL id");
      if (s == STRATA_OK) s = STRATA_EDEVICE;
      goto fail_all;
    }
    MPI_Bcast(id, (int)sizeof id, MPI_BYTE, 0, d->comm);
    s = strata__nccl_create(d->ctx, d->size, d->rank, id, &d->nccl);
    if (!all_ok(d->comm, s == STRATA_OK)) {
      snprintf(msg, sizeof msg, "dist: %s",
               s != STRATA_OK ? strata_context_error(d->ctx)
                              : "another rank could not join NCCL");
      if (s == STRATA_OK) s = STRATA_EDEVICE;
      goto fail_all;
    }
#else
    snprintf(msg, sizeof msg, "dist: strata was built without NCCL, which "
             "the CUDA engine needs to exchange halos between GPUs; rebuild "
             "with NCCL or use backend=cpu");
    s = STRATA_ENOTSUP;
    goto fail_all;
#endif
  } else {
    if (o->transport == STRATA_TRANSPORT_NCCL) {
      snprintf(msg, sizeof msg, "dist: transport nccl needs a CUDA context");
      s = STRATA_ENOTSUP;
      goto fail_all;
    }
    d->transport = T_MPI;
  }
  *out = d;
  return STRATA_OK;
fail_all:
  /* every rank takes these paths together: keep the collectives paired */
  all_ok(d->comm, 0);
fail:
  set_errbuf(copt, msg[0] ? msg : strata_strerror(s));
  if (d->ctx) strata_context_destroy(&d->ctx);
  MPI_Comm_free(&d->comm);
  free(d);
  return s;
}

void strata_dist_destroy(strata_dist **pd) {
  if (!pd || !*pd) return;
  strata_dist *d = *pd;
#if defined(STRATA_HAVE_CUDA) && defined(STRATA_HAVE_NCCL)
  if (d->nccl) strata__nccl_destroy(d->nccl);
#endif
  if (d->ctx) strata_context_sync(d->ctx);
  MPI_Barrier(d->comm);
  strata_context_destroy(&d->ctx);
  MPI_Comm_free(&d->comm);
  free(d->stage);
  free(d);
  *pd = NULL;
}

strata_status strata__dist_agree_as(strata_dist *d, strata_status s,
                                    strata_status code, const char *what) {
  int ok = all_ok(d->comm, s == STRATA_OK);
  if (ok || s != STRATA_OK) return s;
  return strata__fail_elsewhere(d->ctx, code, "another rank failed %s (its "
                                "message says why)", what);
}

strata_status strata__dist_agree(strata_dist *d, strata_status s) {
  return strata__dist_agree_as(d, s, STRATA_EINVAL, "in the same call");
}

strata_status strata_dist_allreduce(const strata_dist *d, double *v, int n,
                                    int op) {
  if (!d || (!v && n) || n < 0 || op < 0 || op > 2) return STRATA_EINVAL;
  MPI_Op o = op == 0 ? MPI_SUM : op == 1 ? MPI_MAX : MPI_MIN;
  MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, o, d->comm);
  return STRATA_OK;
}

strata_status strata_dist_barrier(const strata_dist *d) {
  if (!d) return STRATA_EINVAL;
  strata_status s = strata_context_sync(d->ctx);
  MPI_Barrier(d->comm);
  return s;
}

strata_status strata__dist_bcast(strata_dist *d, void *buf, size_t bytes) {
  unsigned char *p = buf;
  while (bytes) {
    int c = bytes > (1u << 30) ? (1 << 30) : (int)bytes;
    MPI_Bcast(p, c, MPI_BYTE, 0, d->comm);
    p += c;
    bytes -= (size_t)c;
  }
  return STRATA_OK;
}

/* Refuses an axis whose thinnest part holds fewer than need planes. */
static strata_status check_thin(strata_context *ctx, const strata_field_desc *gd,
                                int ax, int P, long need, int ext) {
  const size_t minc = gd->n[ax] / (size_t)P;
  char nm[STRATA__ARGNAME_SIZE];
  if (P > 1 && (long)minc < need)
    return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "n", ax),
                        gd->n[ax],
                        "dist: %zu planes along %c over %d ranks leave %zu "
                        "planes on some ranks, fewer than the %ld that each "
                        "must own (ghost width %d%s); use fewer ranks or a "
                        "larger grid",
                        gd->n[ax], "xyz"[ax], P, minc, need, gd->ghost,
                        ext ? " plus the solver's extension planes" : "");
  return STRATA_OK;
}

/* This rank's part of a global field as a window (no field yet): on py x
 * pz ranks (strata__dist_grid) the owned planes along the last axis and,
 * for a y-z split, the owned rows along y, each with ext extension planes
 * on every side that may have a neighbour (wrap-around included, flags
 * STRATA__DIST_*); refused when some rank would own too few. */
static strata_status local_part(strata_dist *d, const strata_field_desc *gd,
                                int ext, int flags, strata__window *w) {
  strata_context *ctx = d->ctx;
  if (gd->dims != 2 && gd->dims != 3)
    return strata__fail_arg(ctx, STRATA_EINVAL, "dims", gd->dims,
                        "dist: a %dD field cannot be split; distributed "
                        "fields are 2D (split along y) or 3D (along z, or "
                        "y and z)", gd->dims);
  const int ax = gd->dims - 1;
  int p[2];
  strata__dist_grid(d, gd, (flags & STRATA__DIST_YZ) != 0, p);
  memset(w, 0, sizeof *w);
  w->dist = d;
  w->axis = ax;
  memcpy(w->gn, gd->n, sizeof w->gn);
  w->py = p[0];
  w->pz = p[1];
  w->cy = d->rank % p[0];
  w->cz = d->rank / p[0];
  const long need = (long)gd->ghost + ext;
  strata_status s = check_thin(ctx, gd, ax, w->pz, need, ext);
  if (s == STRATA_OK && w->py > 1) s = check_thin(ctx, gd, 1, w->py, need, ext);
  if (s != STRATA_OK) return s;
  size_t lo, cnt;
  split_n(gd->n[ax], w->pz, w->cz, &lo, &cnt);
  w->own_lo = (long)lo;
  w->own_n = (long)cnt;
  w->nb[0] = w->cz > 0 ? d->rank - w->py : -1;
  w->nb[1] = w->cz < w->pz - 1 ? d->rank + w->py : -1;
  const int perz = (flags & STRATA__DIST_WRAP_Z) && w->pz > 1;
  w->e_lo = w->cz > 0 || perz ? ext : 0;
  w->e_hi = w->cz < w->pz - 1 || perz ? ext : 0;
  w->offset = w->own_lo - w->e_lo;
  split_n(gd->n[1], w->py, w->cy, &lo, &cnt);
  w->own_lo_y = (long)lo;
  w->own_n_y = (long)cnt;
  w->nby[0] = w->cy > 0 ? d->rank - 1 : -1;
  w->nby[1] = w->cy < w->py - 1 ? d->rank + 1 : -1;
  const int pery = (flags & STRATA__DIST_WRAP_Y) && w->py > 1;
  w->ey_lo = w->py > 1 && (w->cy > 0 || pery) ? ext : 0;
  w->ey_hi = w->py > 1 && (w->cy < w->py - 1 || pery) ? ext : 0;
  w->offset_y = w->own_lo_y - w->ey_lo;
  return STRATA_OK;
}

/* The local description of a window's field. */
static void window_desc(const strata__window *w, const strata_field_desc *gd,
                        strata_field_desc *ld) {
  *ld = *gd;
  ld->n[w->axis] = (size_t)(w->own_n + w->e_lo + w->e_hi);
  if (w->py > 1) ld->n[1] = (size_t)(w->own_n_y + w->ey_lo + w->ey_hi);
}

strata_status strata__dist_local_window(strata_dist *d,
                                        const strata_field_desc *gd, int ext,
                                        int flags, strata__window *w) {
  return local_part(d, gd, ext, flags, w);
}

strata_status strata__dist_local_desc(strata_dist *d,
                                      const strata_field_desc *gd, int ext,
                                      int flags, strata_field_desc *ld) {
  strata__window w;
  strata_status s = local_part(d, gd, ext, flags, &w);
  if (s != STRATA_OK) return s;
  window_desc(&w, gd, ld);
  return STRATA_OK;
}

strata_status strata__dist_field_create_ext(strata_dist *d,
                                            const strata_field_desc *gd,
                                            int ext, int flags,
                                            strata_field **out) {
  if (!d) return STRATA_EINVAL;
  strata_context *ctx = d->ctx;
  if (!out || !gd)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, out ? "global" : "out",
                              NULL, "dist: NULL argument");
  *out = NULL;
  strata__window *w = calloc(1, sizeof *w);
  if (!w) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  strata_status s = local_part(d, gd, ext, flags, w);
  if (s != STRATA_OK) {
    free(w);
    return s;
  }
  strata_field_desc ld;
  window_desc(w, gd, &ld);
  s = strata__dist_agree(d, strata_field_create(ctx, &ld, out));
  if (s != STRATA_OK) {
    strata_field_destroy(out);
    free(w);
    return s;
  }
  (*out)->win = w;
  return STRATA_OK;
}

strata_status strata_dist_field_create(strata_dist *d,
                                       const strata_field_desc *gd,
                                       strata_field **out) {
  return strata__dist_field_create_ext(d, gd, 0, STRATA__DIST_YZ, out);
}
#endif
