/* The work on distributed fields once they exist: the halo exchange of
 * whole planes (MPI on host memory for the CPU engine, NCCL on the device
 * for the CUDA engine) and the distributed apply that overlaps the exchange
 * with the interior (gathers, scatters and norms: dist_gather.c).  Planes along the split axis are contiguous in a field's
 * allocation (a plane holds its x/y ghosts and row padding), so the
 * exchange needs no packing: each message is one run of whole planes, sent
 * from the owner's allocation straight into the neighbour's ghost planes. */
#define _POSIX_C_SOURCE 200809L
#include "dist_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef STRATA_HAVE_MPI
/* ---- built without MPI ------------------------------------------------- */
strata_status strata__dist_exchange(strata_field *const *f, int nf,
                                    int periodic) {
  (void)f, (void)nf, (void)periodic;
  return STRATA_ENOTSUP;
}
strata_status strata_dist_fill_ghosts(strata_field *f,
                                      const strata_boundary *bc) {
  return strata_field_fill_ghosts(f, bc);
}
strata_status strata_dist_apply(const strata_stencil *op, strata_field *in,
                                const strata_boundary *bc, strata_field *out,
                                const strata_apply_options *opt) {
  strata_status s = strata_field_fill_ghosts(in, bc);
  return s != STRATA_OK ? s : strata_apply(op, in, out, opt);
}
strata_status strata__dist_apply_fused(const strata_stencil *op,
                                       strata_field *in,
                                       const strata_boundary *bc, int steps,
                                       strata_field *out) {
  strata_status s = strata_field_fill_ghosts(in, bc);
  return s != STRATA_OK ? s
                        : in->ctx->be->apply_fused(
                              op, bc, steps, in, out, 0,
                              (long)in->d.n[in->d.dims - 1]);
}
#else
/* ---- MPI ---------------------------------------------------------------- */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- windows and views --------------------------------------------------- */

/* The messages of one field: sends in side order 0, 1, receives in side
 * order 1, 0, so that with two ranks and wrap-around (both neighbours the
 * same rank) the n-th send to a peer meets the peer's n-th receive.  depth:
 * the ghost planes to fill next to the extension planes (at most the
 * ghost width; a fused sweep reads only the first r of them). */
static int field_xfers(const strata_field *f, int periodic, int depth,
                       strata__xfer *x, int *tags, int tagbase) {
  const strata__window *w = f->win;
  int nb[2];
  neighbours(w, periodic, nb);
  const int ax = w->axis;
  const int g = depth >= 0 && depth < f->g[ax] ? depth : f->g[ax];
  const long n = (long)f->d.n[ax];
  const size_t S = ax == 2 ? f->L.pitch_x * f->L.pitch_y : f->L.pitch_x;
  const long H = g + (w->e_lo > w->e_hi ? w->e_lo : w->e_hi);
  const size_t bytes = (size_t)H * S * f->esize;
  int m = 0;
  if (nb[0] >= 0) { /* my lowest owned planes go down */
    x[m] = (strata__xfer){nb[0], 1, plane_ptr(f, w->e_lo), bytes, 0, 0};
    tags[m++] = tagbase + 0;
  }
  if (nb[1] >= 0) { /* my highest owned planes go up */
    x[m] = (strata__xfer){nb[1], 1, plane_ptr(f, n - w->e_hi - H), bytes, 0,
                          0};
    tags[m++] = tagbase + 1;
  }
  if (nb[1] >= 0) { /* the planes above mine came down from above */
    x[m] = (strata__xfer){nb[1], 0, plane_ptr(f, n - w->e_hi), bytes, 0, 0};
    tags[m++] = tagbase + 0;
  }
  if (nb[0] >= 0) { /* the planes below mine came up from below */
    x[m] = (strata__xfer){nb[0], 0, plane_ptr(f, -g), bytes, 0, 0};
    tags[m++] = tagbase + 1;
  }
  return m;
}

/* The messages of one field along y of a y-z split (none for slabs):
 * the rows next to the x-z faces, in the order field_xfers uses, of every
 * plane of the local field (z ghost and extension planes included, so the
 * z exchange that follows sends planes whose rows next to the x-z faces
 * are the y neighbours' and a face of the global grid along z gets the
 * values of its filled ghost planes).  Each plane's rows are one run of
 * memory; the runs are strided by a plane. */
static int field_xfers_y(const strata_field *f, int periodic, int depth,
                         strata__xfer *x, int *tags, int tagbase) {
  const strata__window *w = f->win;
  int nb[2];
  neighbours_y(w, periodic, nb);
  if (nb[0] < 0 && nb[1] < 0) return 0;
  const int g = depth >= 0 && depth < f->g[1] ? depth : f->g[1];
  const long ny = (long)f->d.n[1];
  const long H = g + (w->ey_lo > w->ey_hi ? w->ey_lo : w->ey_hi);
  const size_t run = (size_t)H * f->L.pitch_x * f->esize;
  const size_t stride = f->L.pitch_x * f->L.pitch_y * f->esize;
  const size_t bytes = run * (f->d.n[2] + 2 * (size_t)f->g[2]);
  /* rows from their first element (the pad before the x ghosts): a run
   * of H rows then ends inside the allocation */
  char *base = (char *)f->data -
               (f->L.origin % f->L.pitch_x) * f->esize;
#define ROW(j) (base + strata__offset(f, 0, (j), -f->g[2]) * f->esize)
  int m = 0;
  if (nb[0] >= 0) {
    x[m] = (strata__xfer){nb[0], 1, ROW(w->ey_lo), bytes, run, stride};
    tags[m++] = tagbase + 2;
  }
  if (nb[1] >= 0) {
    x[m] = (strata__xfer){nb[1], 1, ROW(ny - w->ey_hi - H), bytes, run,
                          stride};
    tags[m++] = tagbase + 3;
  }
  if (nb[1] >= 0) {
    x[m] = (strata__xfer){nb[1], 0, ROW(ny - w->ey_hi), bytes, run, stride};
    tags[m++] = tagbase + 2;
  }
  if (nb[0] >= 0) {
    x[m] = (strata__xfer){nb[0], 0, ROW(-g), bytes, run, stride};
    tags[m++] = tagbase + 3;
  }
#undef ROW
  return m;
}

/* Copies the runs of a packed message between the field and buf. */
static void runs_copy(const strata__xfer *x, unsigned char *buf, int pack) {
  const size_t n = x->bytes / x->run;
  for (size_t i = 0; i < n; i++) {
    unsigned char *f = (unsigned char *)x->ptr + i * x->stride;
    if (pack)
      memcpy(buf + i * x->run, f, x->run);
    else
      memcpy(f, buf + i * x->run, x->run);
  }
}

/* Starts the messages x (tags: MPI tags) of group d. */
static strata_status post(strata_dist *d, strata__xfer *x, const int *tags,
                          int m) {
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
   * returns; packed messages go through the staging buffer */
  size_t need = 0;
  for (int i = 0; i < m; i++)
    if (x[i].run) need += x[i].bytes;
  if (need > d->stage_bytes) {
    unsigned char *b = realloc(d->stage, need);
    if (!b)
      return strata__fail(d->ctx, STRATA_ENOMEM, "dist: cannot stage %zu "
                          "bytes of packed halo rows", need);
    d->stage = b;
    d->stage_bytes = need;
  }
  d->nreq = 0;
  d->nunpack = 0;
  size_t at = 0;
  /* post receives first */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < m; i++) {
      if (x[i].send != pass) continue;
      MPI_Request *r = &d->req[d->nreq++];
      void *ptr = x[i].ptr;
      if (x[i].run) {
        ptr = d->stage + at;
        if (x[i].send) {
          runs_copy(&x[i], d->stage + at, 1);
        } else {
          d->unpack[d->nunpack] = x[i];
          d->unpack_at[d->nunpack++] = at;
        }
        at += x[i].bytes;
      }
      if (x[i].send)
        MPI_Isend(ptr, (int)x[i].bytes, MPI_BYTE, x[i].peer, tags[i],
                  d->comm, r);
      else
        MPI_Irecv(ptr, (int)x[i].bytes, MPI_BYTE, x[i].peer, tags[i],
                  d->comm, r);
    }
  return STRATA_OK;
}

#define MAX_XF 16
static strata_status check_fields(strata_dist *d, strata_field *const *f,
                                  int nf) {
  if (nf > MAX_XF / 4)
    return strata__fail(d->ctx, STRATA_EINVAL, "dist: too many fields");
  for (int i = 0; i < nf; i++)
    if (!f[i]->win || f[i]->win->dist != d)
      return strata__fail(d->ctx, STRATA_EINVAL,
                          "dist: exchange of a field that is not part of "
                          "this group");
  return STRATA_OK;
}

/* periodic: STRATA__DIST_WRAP_* flags */
static strata_status exchange_start(strata_field *const *f, int nf,
                                    int periodic, int depth) {
  strata_dist *d = f[0]->win->dist;
  if (!d->exchange || d->size == 1) return STRATA_OK;
  strata_status s = check_fields(d, f, nf);
  if (s != STRATA_OK) return s;
  strata__xfer x[MAX_XF];
  int tags[MAX_XF], m = 0;
  for (int i = 0; i < nf; i++)
    m += field_xfers(f[i], periodic & STRATA__DIST_WRAP_Z, depth, x + m,
                     tags + m, 16 * i);
  return post(d, x, tags, m);
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
  for (int i = 0; i < d->nunpack; i++)
    runs_copy(&d->unpack[i], d->stage + d->unpack_at[i], 0);
  d->nunpack = 0;
  if (rc != MPI_SUCCESS)
    return strata__fail(d->ctx, STRATA_EDEVICE, "dist: MPI exchange failed");
  return STRATA_OK;
}

/* The exchange along y of a y-z split, complete before the z exchange
 * starts (that one sends whole planes, rows from the y neighbours
 * included); nothing for slabs. */
static strata_status exchange_y(strata_field *const *f, int nf, int periodic,
                                int depth) {
  strata_dist *d = f[0]->win->dist;
  if (!d->exchange || f[0]->win->py == 1) return STRATA_OK;
  strata_status s = check_fields(d, f, nf);
  if (s != STRATA_OK) return s;
  strata__xfer x[MAX_XF];
  int tags[MAX_XF], m = 0;
  for (int i = 0; i < nf; i++)
    m += field_xfers_y(f[i], (periodic & STRATA__DIST_WRAP_Y) != 0, depth,
                       x + m, tags + m, 16 * i);
  s = post(d, x, tags, m);
  strata_status sj = exchange_join(d);
  return s != STRATA_OK ? s : sj;
}

strata_status strata__dist_exchange(strata_field *const *f, int nf,
                                    int periodic) {
  if (nf < 1 || !f[0]->win) return STRATA_OK;
  strata_status s = exchange_y(f, nf, periodic, -1);
  if (s == STRATA_OK) s = exchange_start(f, nf, periodic, -1);
  if (s != STRATA_OK) return s;
  return exchange_join(f[0]->win->dist);
}

/* The wrap-around flags of bc for a window. */
static int wrap_flags(const strata__window *w, const strata_boundary *bc) {
  return (bc->kind[2 * w->axis] == STRATA_BC_PERIODIC ? STRATA__DIST_WRAP_Z
                                                      : 0) |
         (w->axis == 2 && bc->kind[2] == STRATA_BC_PERIODIC
              ? STRATA__DIST_WRAP_Y
              : 0);
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
  return strata__dist_exchange(&f, 1, wrap_flags(f->win, bc));
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
      out->win->own_n != w->own_n || out->win->py != w->py ||
      out->win->own_lo_y != w->own_lo_y || out->win->ey_lo != w->ey_lo ||
      out->win->ey_hi != w->ey_hi)
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
  const int periodic = wrap_flags(w, bc);
  s = exchange_y(&in, 1, periodic, -1); /* x-z faces first, not overlapped */
  if (s != STRATA_OK) return s;
  int nb[2];
  neighbours(w, periodic & STRATA__DIST_WRAP_Z, nb);
  const long n = (long)in->d.n[w->axis], r = op->radius;
  const long a = nb[0] >= 0 ? r : 0, b = nb[1] >= 0 ? n - r : n;
  const int split = d->overlap && d->exchange && d->size > 1 && b - a >= 1 &&
                    (nb[0] >= 0 || nb[1] >= 0);
  if (!split) {
    s = exchange_start(&in, 1, periodic, -1);
    if (s == STRATA_OK) s = exchange_join(d);
    return s != STRATA_OK ? s : strata_apply(op, in, out, &o);
  }
  s = exchange_start(&in, 1, periodic, -1);
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

/* Fused steps between ranks.  The exchange fills, next to the e = r (s - 1)
 * extension planes, only the r ghost planes a fused sweep reads along a
 * face between ranks (it holds them there: "none"), so a sweep moves r s
 * planes a side, not ghost + e.  With overlap the parts are the output
 * planes of the sweep, not views: the planes [lo + r s, hi - r s) of the
 * owned [lo, hi), whose cones hold only owned planes, while the planes
 * travel, then [lo, lo + r s) and [hi - r s, hi).  apply_fused writes only
 * the planes asked for, each as the whole sweep would, and reads only
 * their cone, so no part overwrites another's exact planes with the
 * inexact ones a view's held ghosts would give, and the inner part never
 * reads a plane in flight.  The extension planes of out are left as they
 * were (the next exchange replaces them). */
strata_status strata__dist_apply_fused(const strata_stencil *op,
                                       strata_field *in,
                                       const strata_boundary *bc, int steps,
                                       strata_field *out) {
  const strata__backend *be = in->ctx->be;
  const long n = (long)in->d.n[in->d.dims - 1];
  if (!in->win) {
    strata_status s = strata_field_fill_ghosts(in, bc);
    return s != STRATA_OK ? s
                          : be->apply_fused(op, bc, steps, in, out, 0, n);
  }
  strata__window *w = in->win;
  strata_dist *d = w->dist;
  strata_boundary lb;
  strata__dist_local_bc(in, bc, &lb);
  strata_status s = strata__fill_ghosts_local(in, &lb);
  if (s != STRATA_OK) return s;
  const int periodic = wrap_flags(w, bc);
  s = exchange_y(&in, 1, periodic, op->radius); /* not overlapped */
  if (s != STRATA_OK) return s;
  int nb[2];
  neighbours(w, periodic & STRATA__DIST_WRAP_Z, nb);
  const long H = (long)op->radius * steps;
  const long lo = w->e_lo, hi = n - w->e_hi; /* the owned planes */
  const long a = nb[0] >= 0 ? lo + H : lo, b = nb[1] >= 0 ? hi - H : hi;
  /* the parts also without the exchange (benchmarks switch it off to
   * time the same kernels without it) */
  const int split = d->overlap && d->size > 1 && b - a >= 1 &&
                    (nb[0] >= 0 || nb[1] >= 0);
  s = exchange_start(&in, 1, periodic, op->radius);
  if (s != STRATA_OK) return s;
  if (!split) {
    s = exchange_join(d);
    return s != STRATA_OK ? s : be->apply_fused(op, &lb, steps, in, out, 0, n);
  }
  s = be->apply_fused(op, &lb, steps, in, out, a, b);
  strata_status sj = exchange_join(d); /* always complete the messages */
  if (s != STRATA_OK) return s;
  if (sj != STRATA_OK) return sj;
  if (a > lo) s = be->apply_fused(op, &lb, steps, in, out, lo, a);
  if (s == STRATA_OK && b < hi)
    s = be->apply_fused(op, &lb, steps, in, out, b, hi);
  return s;
}

#endif
