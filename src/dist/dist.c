/* Several processes and GPUs: slab decomposition along the last axis, halo
 * exchange of whole planes (MPI on host memory for the CPU engine, NCCL on
 * the device for the CUDA engine), overlap of the exchange with the
 * interior, gathers and collective norms.  See docs/distributed.md.
 *
 * Planes along the split axis are contiguous in a field's allocation (a
 * plane holds its x/y ghosts and row padding), so the exchange needs no
 * packing: each message is one run of whole planes, sent from the owner's
 * allocation straight into the neighbour's ghost planes. */
#define _POSIX_C_SOURCE 200809L
#include "dist_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

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
    snprintf(copt->errbuf, copt->errbuf_size, "%s", msg);
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

/* The neighbours of a window for an exchange with or without wrap-around. */
static void neighbours(const strata__window *w, int periodic, int nb[2]) {
  const strata_dist *d = w->dist;
  nb[0] = w->nb[0];
  nb[1] = w->nb[1];
  if (periodic && d->size > 1) {
    if (nb[0] < 0) nb[0] = d->size - 1;
    if (nb[1] < 0) nb[1] = 0;
  }
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
strata_status strata__dist_exchange(strata_field *const *f, int nf,
                                    int periodic) {
  (void)f, (void)nf, (void)periodic;
  return STRATA_ENOTSUP;
}
strata_status strata_dist_gather(const strata_field *f, int root, void *host) {
  if (!f || !host) return STRATA_EINVAL;
  (void)root;
  return strata_field_read(f, host);
}
strata_status strata_dist_scatter(strata_field *f, int root, const void *host) {
  if (!f || !host) return STRATA_EINVAL;
  (void)root;
  return strata_field_write(f, host);
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
strata_status strata__dist_gatherv(strata_dist *d, const void *send,
                                   size_t bytes, void *recv, int root) {
  (void)d, (void)send, (void)bytes, (void)recv, (void)root;
  return STRATA_ENOTSUP;
}
strata_status strata__dist_norm(const strata_field *a, const strata_field *b,
                                strata_norm which, double *out) {
  (void)a, (void)b, (void)which, (void)out;
  return STRATA_ENOTSUP;
}
strata_status strata_dist_fill_ghosts(strata_field *f,
                                      const strata_boundary *bc) {
  return strata_field_fill_ghosts(f, bc);
}
strata_status strata__dist_agree(strata_dist *d, strata_status s) {
  (void)d;
  return s;
}
strata_status strata_dist_apply(const strata_stencil *op, strata_field *in,
                                const strata_boundary *bc, strata_field *out,
                                const strata_apply_options *opt) {
  strata_status s = strata_field_fill_ghosts(in, bc);
  return s != STRATA_OK ? s : strata_apply(op, in, out, opt);
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

/* 1 on every rank when ok is 1 on every rank. */
static int all_ok(MPI_Comm c, int ok) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c);
  return all;
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
  free(d);
  *pd = NULL;
}

strata_status strata__dist_agree(strata_dist *d, strata_status s) {
  int ok = all_ok(d->comm, s == STRATA_OK);
  if (ok || s != STRATA_OK) return s;
  return strata__fail(d->ctx, STRATA_EINVAL,
                      "dist: another rank failed to create its part (its "
                      "message says why)");
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

/* Point-to-point in chunks of at most 1 GiB (MPI counts are ints). */
static void send_big(MPI_Comm c, const void *buf, size_t bytes, int to,
                     int tag) {
  const unsigned char *p = buf;
  do {
    int n = bytes > (1u << 30) ? (1 << 30) : (int)bytes;
    MPI_Send(p, n, MPI_BYTE, to, tag, c);
    p += n;
    bytes -= (size_t)n;
  } while (bytes);
}
static void recv_big(MPI_Comm c, void *buf, size_t bytes, int from, int tag) {
  unsigned char *p = buf;
  do {
    int n = bytes > (1u << 30) ? (1 << 30) : (int)bytes;
    MPI_Recv(p, n, MPI_BYTE, from, tag, c, MPI_STATUS_IGNORE);
    p += n;
    bytes -= (size_t)n;
  } while (bytes);
}

strata_status strata__dist_gatherv(strata_dist *d, const void *send,
                                   size_t bytes, void *recv, int root) {
  unsigned long long b = bytes, *all = NULL;
  if (d->rank == root) {
    all = malloc(sizeof *all * (size_t)d->size);
    if (!all) return strata__fail(d->ctx, STRATA_ENOMEM, "out of host memory");
  }
  MPI_Gather(&b, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG,
             root, d->comm);
  if (d->rank == root) {
    unsigned char *p = recv;
    for (int r = 0; r < d->size; r++) {
      if (r == root)
        memcpy(p, send, bytes);
      else if (all[r])
        recv_big(d->comm, p, (size_t)all[r], r, 7);
      p += all[r];
    }
    free(all);
  } else if (bytes) {
    send_big(d->comm, send, bytes, root, 7);
  }
  return STRATA_OK;
}

/* ---- windows and views --------------------------------------------------- */

strata_status strata__dist_field_create_ext(strata_dist *d,
                                            const strata_field_desc *gd,
                                            int ext, int periodic,
                                            strata_field **out) {
  if (!d) return STRATA_EINVAL;
  strata_context *ctx = d->ctx;
  if (!out || !gd)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, out ? "global" : "out",
                              NULL, "dist: NULL argument");
  *out = NULL;
  if (gd->dims != 2 && gd->dims != 3)
    return strata__fail_arg(ctx, STRATA_EINVAL, "dims", gd->dims,
                        "dist: a %dD field cannot be split; distributed "
                        "fields are 2D (split along y) or 3D (along z)",
                        gd->dims);
  const int ax = gd->dims - 1;
  size_t lo, cnt;
  strata_dist_split(d, gd->n[ax], d->rank, &lo, &cnt);
  const long need = (long)gd->ghost + ext;
  size_t minc = gd->n[ax] / (size_t)d->size;
  char nm[STRATA__ARGNAME_SIZE];
  if (d->size > 1 && (long)minc < need)
    return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "n", ax),
                        gd->n[ax],
                        "dist: %zu planes along %c over %d ranks leave %zu "
                        "planes on some ranks, fewer than the %ld that each "
                        "must own (ghost width %d%s); use fewer ranks or a "
                        "larger grid",
                        gd->n[ax], "xyz"[ax], d->size, minc, need, gd->ghost,
                        ext ? " plus the solver's extension planes" : "");
  strata__window *w = calloc(1, sizeof *w);
  if (!w) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  w->dist = d;
  w->axis = ax;
  memcpy(w->gn, gd->n, sizeof w->gn);
  w->own_lo = (long)lo;
  w->own_n = (long)cnt;
  /* extension planes on every side that may have a neighbour (periodic
   * wrap-around included) */
  w->nb[0] = d->rank > 0 ? d->rank - 1 : -1;
  w->nb[1] = d->rank < d->size - 1 ? d->rank + 1 : -1;
  int nb[2];
  neighbours(w, periodic, nb);
  w->e_lo = nb[0] >= 0 ? ext : 0;
  w->e_hi = nb[1] >= 0 ? ext : 0;
  w->offset = w->own_lo - w->e_lo;
  strata_field_desc ld = *gd;
  ld.n[ax] = cnt + (size_t)w->e_lo + (size_t)w->e_hi;
  strata_status s = strata__dist_agree(d, strata_field_create(ctx, &ld, out));
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
  return strata__dist_field_create_ext(d, gd, 0, 0, out);
}

static char *plane_ptr(const strata_field *f, long k) {
  const int ax = f->d.dims - 1;
  const size_t S = ax == 2 ? f->L.pitch_x * f->L.pitch_y : f->L.pitch_x;
  return (char *)f->data + (ptrdiff_t)(k + f->g[ax]) * (ptrdiff_t)(S * f->esize);
}

/* The messages of one field: sends in side order 0, 1, receives in side
 * order 1, 0, so that with two ranks and wrap-around (both neighbours the
 * same rank) the n-th send to a peer meets the peer's n-th receive. */
static int field_xfers(const strata_field *f, int periodic, strata__xfer *x,
                       int *tags, int tagbase) {
  const strata__window *w = f->win;
  int nb[2];
  neighbours(w, periodic, nb);
  const int ax = w->axis, g = f->g[ax];
  const long n = (long)f->d.n[ax];
  const size_t S = ax == 2 ? f->L.pitch_x * f->L.pitch_y : f->L.pitch_x;
  const long H = g + (w->e_lo > w->e_hi ? w->e_lo : w->e_hi);
  const size_t bytes = (size_t)H * S * f->esize;
  int m = 0;
  if (nb[0] >= 0) { /* my lowest owned planes go down */
    x[m] = (strata__xfer){nb[0], 1, plane_ptr(f, w->e_lo), bytes};
    tags[m++] = tagbase + 0;
  }
  if (nb[1] >= 0) { /* my highest owned planes go up */
    x[m] = (strata__xfer){nb[1], 1, plane_ptr(f, n - w->e_hi - H), bytes};
    tags[m++] = tagbase + 1;
  }
  if (nb[1] >= 0) { /* the planes above mine came down from above */
    x[m] = (strata__xfer){nb[1], 0, plane_ptr(f, n - w->e_hi), bytes};
    tags[m++] = tagbase + 0;
  }
  if (nb[0] >= 0) { /* the planes below mine came up from below */
    x[m] = (strata__xfer){nb[0], 0, plane_ptr(f, -g), bytes};
    tags[m++] = tagbase + 1;
  }
  return m;
}

#define MAX_XF 16
static strata_status exchange_start(strata_field *const *f, int nf,
                                    int periodic) {
  strata_dist *d = f[0]->win->dist;
  if (!d->exchange || d->size == 1) return STRATA_OK;
  if (nf > MAX_XF / 4)
    return strata__fail(d->ctx, STRATA_EINVAL, "dist: too many fields");
  strata__xfer x[MAX_XF];
  int tags[MAX_XF], m = 0;
  for (int i = 0; i < nf; i++) {
    if (!f[i]->win || f[i]->win->dist != d)
      return strata__fail(d->ctx, STRATA_EINVAL,
                          "dist: exchange of a field that is not part of "
                          "this group");
    m += field_xfers(f[i], periodic, x + m, tags + m, 16 * i);
  }
  for (int i = 0; i < m; i++) {
    if (x[i].send) {
      d->stats.bytes_sent += (double)x[i].bytes;
    }
    if (x[i].bytes > (size_t)1 << 30)
      return strata__fail(d->ctx, STRATA_EINVAL,
                          "dist: a halo message of %zu bytes exceeds 1 GiB",
                          x[i].bytes);
  }
  d->stats.exchanges++;
  if (d->transport == T_NCCL) {
#if defined(STRATA_HAVE_CUDA) && defined(STRATA_HAVE_NCCL)
    return strata__nccl_start(d->ctx, d->nccl, x, m);
#else
    return STRATA_ENOTSUP;
#endif
  }
  /* MPI on host memory: the fields' work is done when the CPU engine
   * returns; post receives first */
  d->nreq = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < m; i++) {
      if (x[i].send != pass) continue;
      MPI_Request *r = &d->req[d->nreq++];
      if (x[i].send)
        MPI_Isend(x[i].ptr, (int)x[i].bytes, MPI_BYTE, x[i].peer, tags[i],
                  d->comm, r);
      else
        MPI_Irecv(x[i].ptr, (int)x[i].bytes, MPI_BYTE, x[i].peer, tags[i],
                  d->comm, r);
    }
  return STRATA_OK;
}

static strata_status exchange_join(strata_dist *d) {
  if (!d->exchange || d->size == 1) return STRATA_OK;
  if (d->transport == T_NCCL) {
#if defined(STRATA_HAVE_CUDA) && defined(STRATA_HAVE_NCCL)
    return strata__nccl_join(d->ctx, d->nccl);
#else
    return STRATA_ENOTSUP;
#endif
  }
  double t0 = now_s();
  int rc = MPI_Waitall(d->nreq, d->req, MPI_STATUSES_IGNORE);
  d->nreq = 0;
  d->stats.wait_seconds += now_s() - t0;
  if (rc != MPI_SUCCESS)
    return strata__fail(d->ctx, STRATA_EDEVICE, "dist: MPI exchange failed");
  return STRATA_OK;
}

strata_status strata__dist_exchange(strata_field *const *f, int nf,
                                    int periodic) {
  if (nf < 1 || !f[0]->win) return STRATA_OK;
  strata_status s = exchange_start(f, nf, periodic);
  if (s != STRATA_OK) return s;
  return exchange_join(f[0]->win->dist);
}

strata_status strata_dist_fill_ghosts(strata_field *f,
                                      const strata_boundary *bc) {
  if (!f) return STRATA_EINVAL;
  if (!bc)
    return strata__fail_arg_p(f->ctx, STRATA_EINVAL, "bc", bc,
                              "boundary conditions are NULL");
  if (!f->win) return strata_field_fill_ghosts(f, bc);
  strata_boundary lb;
  strata__dist_local_bc(f, bc, &lb);
  strata_status s = strata__fill_ghosts_local(f, &lb);
  if (s != STRATA_OK) return s;
  return strata__dist_exchange(&f, 1,
                               bc->kind[2 * f->win->axis] ==
                                   STRATA_BC_PERIODIC);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
  return h;
}

/* The variant every rank uses for op when the caller leaves the choice:
 * the CUDA engine's fixed table, never the autotuner, whose choice depends
 * on the slab's size.  Variants round differently; one kernel on every
 * rank and every part of a slab keeps the results equal to one rank's bit
 * for bit.  (The CPU engine has one kernel per operator.) */
static strata_status resolve(strata_dist *d, const strata_stencil *op,
                             strata_field *in, strata_field *out,
                             strata_apply_options *o) {
  if (strata_context_backend(d->ctx) != STRATA_BACKEND_CUDA) return STRATA_OK;
  uint64_t key = fnv(0xcbf29ce484222325ull, op, sizeof *op);
  key = fnv(key, &in->d.precision, sizeof in->d.precision);
  for (int i = 0; i < d->nvc; i++)
    if (d->vc[i].key == key) {
      o->variant = d->vc[i].name;
      memcpy(o->block, d->vc[i].block, sizeof o->block);
      return STRATA_OK;
    }
  vchoice c;
  memset(&c, 0, sizeof c);
  c.key = key;
  strata_status s = STRATA_OK;
#ifdef STRATA_HAVE_CUDA
  s = strata__cuda_resolve_variant(op, in, out, c.name, sizeof c.name,
                                   c.block);
#endif
  if (s != STRATA_OK) return s;
  if (d->nvc == (int)(sizeof d->vc / sizeof d->vc[0])) d->nvc = 0;
  d->vc[d->nvc++] = c;
  o->variant = d->vc[d->nvc - 1].name;
  memcpy(o->block, c.block, sizeof o->block);
  return STRATA_OK;
}

strata_status strata_dist_apply(const strata_stencil *op, strata_field *in,
                                const strata_boundary *bc, strata_field *out,
                                const strata_apply_options *opt) {
  if (!op || !in || !out || !bc) {
    strata_context *c = in ? in->ctx : out ? out->ctx : NULL;
    return c ? strata__fail_arg_p(c, STRATA_EINVAL,
                                  !op ? "op" : !in ? "in" : !out ? "out"
                                                             : "bc",
                                  NULL, "dist_apply: NULL argument")
             : STRATA_EINVAL;
  }
  if (!in->win) {
    strata_status s = strata_field_fill_ghosts(in, bc);
    return s != STRATA_OK ? s : strata_apply(op, in, out, opt);
  }
  strata__window *w = in->win;
  strata_dist *d = w->dist;
  if (!out->win || out->win->dist != d || out->win->e_lo != w->e_lo ||
      out->win->e_hi != w->e_hi || out->win->own_lo != w->own_lo ||
      out->win->own_n != w->own_n)
    return strata__fail_arg_s(d->ctx, STRATA_EINVAL, "out", "set",
                        "dist_apply: in and out must be distributed fields "
                        "of the same group and grid");
  strata_apply_options o;
  memset(&o, 0, sizeof o);
  if (opt) o = *opt;
  strata_status s = STRATA_OK;
  if (!o.variant || strcmp(o.variant, "auto") == 0) {
    s = resolve(d, op, in, out, &o);
    if (s != STRATA_OK) return s;
  }
  strata_boundary lb;
  strata__dist_local_bc(in, bc, &lb);
  s = strata__fill_ghosts_local(in, &lb);
  if (s != STRATA_OK) return s;
  const int periodic = bc->kind[2 * w->axis] == STRATA_BC_PERIODIC;
  int nb[2];
  neighbours(w, periodic, nb);
  const long n = (long)in->d.n[w->axis], r = op->radius;
  const long a = nb[0] >= 0 ? r : 0, b = nb[1] >= 0 ? n - r : n;
  const int split = d->overlap && d->exchange && d->size > 1 && b - a >= 1 &&
                    (nb[0] >= 0 || nb[1] >= 0);
  if (!split) {
    s = strata__dist_exchange(&in, 1, periodic);
    return s != STRATA_OK ? s : strata_apply(op, in, out, &o);
  }
  s = exchange_start(&in, 1, periodic);
  if (s != STRATA_OK) return s;
  strata_field vi, vo;
  strata__field_view(in, a, b - a, &vi);
  strata__field_view(out, a, b - a, &vo);
  s = strata_apply(op, &vi, &vo, &o);
  strata_status sj = exchange_join(d); /* always complete the messages */
  if (s != STRATA_OK) return s;
  if (sj != STRATA_OK) return sj;
  if (a > 0) {
    strata__field_view(in, 0, a, &vi);
    strata__field_view(out, 0, a, &vo);
    s = strata_apply(op, &vi, &vo, &o);
    if (s != STRATA_OK) return s;
  }
  if (b < n) {
    strata__field_view(in, b, n - b, &vi);
    strata__field_view(out, b, n - b, &vo);
    s = strata_apply(op, &vi, &vo, &o);
  }
  return s;
}

/* ---- gathers ------------------------------------------------------------- */

static size_t plane_values(const strata_field *f) {
  return f->d.dims == 3 ? f->d.n[0] * f->d.n[1] : f->d.n[0];
}

strata_status strata_dist_gather(const strata_field *f, int root, void *host) {
  if (!f) return STRATA_EINVAL;
  if (!f->win) {
    if (!host)
      return strata__fail_arg_p(f->ctx, STRATA_EINVAL, "host", host,
                                "gather: host is NULL");
    return strata_field_read(f, host);
  }
  strata_dist *d = f->win->dist;
  if (root < 0 || root >= d->size)
    return strata__fail_arg(d->ctx, STRATA_EINVAL, "root", root,
                            "gather: root %d of %d ranks", root, d->size);
  const size_t bytes = plane_values(f) * (size_t)f->win->own_n * f->esize;
  void *mine = malloc(bytes ? bytes : 1);
  strata_status s = mine ? STRATA_OK
                         : strata__fail(d->ctx, STRATA_ENOMEM,
                                        "out of host memory");
  if (s == STRATA_OK) s = strata_field_read(f, mine); /* the owned planes */
  if (d->rank == root && !host && s == STRATA_OK)
    s = strata__fail_arg_p(d->ctx, STRATA_EINVAL, "host", host,
                           "gather: host is NULL on root");
  if (!all_ok(d->comm, s == STRATA_OK)) {
    free(mine);
    return s != STRATA_OK ? s
                          : strata__fail(d->ctx, STRATA_EIO,
                                         "gather: another rank failed");
  }
  s = strata__dist_gatherv(d, mine, bytes, host, root);
  free(mine);
  return s;
}

strata_status strata_dist_scatter(strata_field *f, int root,
                                  const void *host) {
  if (!f) return STRATA_EINVAL;
  if (!f->win) {
    if (!host)
      return strata__fail_arg_p(f->ctx, STRATA_EINVAL, "host", host,
                                "scatter: host is NULL");
    return strata_field_write(f, host);
  }
  strata_dist *d = f->win->dist;
  if (root < 0 || root >= d->size)
    return strata__fail_arg(d->ctx, STRATA_EINVAL, "root", root,
                            "scatter: root %d of %d ranks", root, d->size);
  int okh = d->rank != root || host;
  if (!all_ok(d->comm, okh))
    return strata__fail(d->ctx, STRATA_EINVAL, "scatter: host is NULL on "
                        "root");
  const size_t pv = plane_values(f) * f->esize;
  const size_t bytes = pv * (size_t)f->win->own_n;
  void *mine = malloc(bytes ? bytes : 1);
  int ok = all_ok(d->comm, mine != NULL);
  if (!ok) {
    free(mine);
    return strata__fail(d->ctx, STRATA_ENOMEM, "out of host memory");
  }
  if (d->rank == root) {
    for (int r = 0; r < d->size; r++) {
      size_t lo, cnt;
      strata_dist_split(d, f->win->gn[f->win->axis], r, &lo, &cnt);
      const unsigned char *p = (const unsigned char *)host + lo * pv;
      if (r == root)
        memcpy(mine, p, cnt * pv);
      else if (cnt)
        send_big(d->comm, p, cnt * pv, r, 8);
    }
  } else if (bytes) {
    recv_big(d->comm, mine, bytes, root, 8);
  }
  strata_status s = strata_field_write(f, mine);
  free(mine);
  return s;
}

/* Collective norms of distributed fields (strata_field_norm/diff): the
 * local norm of the owned planes, combined. */
strata_status strata__dist_norm(const strata_field *a, const strata_field *b,
                                strata_norm which, double *out) {
  const strata__window *w = a->win;
  strata_dist *d = w->dist;
  strata_field va, vb;
  strata__field_view(a, w->e_lo, w->own_n, &va);
  if (b) strata__field_view(b, b->win ? b->win->e_lo : 0, w->own_n, &vb);
  double v = 0;
  strata_status s = b ? strata_field_diff(&va, &vb, which, &v)
                      : strata_field_norm(&va, which, &v);
  if (!all_ok(d->comm, s == STRATA_OK))
    return s != STRATA_OK ? s
                          : strata__fail(d->ctx, STRATA_EDEVICE,
                                         "norm: another rank failed");
  const double cnt = (double)plane_values(a) * (double)w->own_n;
  double total = (double)plane_values(a) * (double)w->gn[w->axis];
  double part[2] = {0, isnan(v) ? 1.0 : 0.0};
  switch (which) {
  case STRATA_NORM_L2: part[0] = v * v; break;
  case STRATA_NORM_RMS: part[0] = v * v * cnt; break;
  default: part[0] = v; break;
  }
  if (isnan(part[0])) part[0] = 0;
  double mx[1] = {part[0]};
  MPI_Allreduce(MPI_IN_PLACE, part, 2, MPI_DOUBLE, MPI_SUM, d->comm);
  MPI_Allreduce(MPI_IN_PLACE, mx, 1, MPI_DOUBLE, MPI_MAX, d->comm);
  if (part[1] > 0) {
    *out = NAN;
    return STRATA_OK;
  }
  switch (which) {
  case STRATA_NORM_L2: *out = sqrt(part[0]); break;
  case STRATA_NORM_RMS: *out = sqrt(part[0] / total); break;
  case STRATA_NORM_MAX: *out = mx[0]; break;
  default: *out = part[0]; break;
  }
  return STRATA_OK;
}
#endif
