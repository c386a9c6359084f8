/* Moving whole distributed fields between their ranks and one root:
 * gathers and scatters (host arrays, or the planes of an ordinary field of
 * the global grid, device to device through NCCL on GPUs), the variable-
 * size gather of host bytes, and collective norms. */
#define _POSIX_C_SOURCE 200809L
#include "dist_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef STRATA_HAVE_MPI
/* ---- built without MPI ------------------------------------------------- */
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
strata_status strata__dist_planes(strata_field *f, strata_field *whole,
                                 int root, int gather) {
  (void)f, (void)whole, (void)root, (void)gather;
  return STRATA_ENOTSUP;
}
#else
/* ---- MPI ---------------------------------------------------------------- */

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

/* ---- gathers ------------------------------------------------------------- */

/* The values of the box this rank owns. */
static size_t owned_values(const strata_field *f) {
  const strata__window *w = f->win;
  return f->d.n[0] * (size_t)w->own_n * (w->axis == 2 ? (size_t)w->own_n_y : 1);
}

/* Copies the boxes of every rank between a buffer of them in rank order
 * (box) and the dense global array (glob), row by row. */
static void boxes_copy(const strata_field *f, unsigned char *box,
                       unsigned char *glob, int to_glob) {
  const strata__window *w = f->win;
  const size_t row = f->d.n[0] * f->esize;
  const size_t gy = w->axis == 2 ? w->gn[1] : 1;
  for (int r = 0; r < w->dist->size; r++) {
    size_t lo[2], cnt[2];
    rank_box(w, r, lo, cnt);
    for (size_t k = 0; k < cnt[1]; k++)
      for (size_t j = 0; j < cnt[0]; j++) {
        unsigned char *g = glob + ((lo[1] + k) * gy + lo[0] + j) * row;
        if (to_glob)
          memcpy(g, box, row);
        else
          memcpy(box, g, row);
        box += row;
      }
  }
}

/* Whole planes between a distributed field and an ordinary field of the
 * global grid on root, in place on the device (NCCL) or host (MPI): each
 * rank's owned planes are one run of its allocation, and the same run of
 * the whole field's allocation when both have the same plane layout. */
strata_status strata__dist_planes(strata_field *f, strata_field *whole,
                                  int root, int gather) {
  const strata__window *w = f->win;
  strata_dist *d = w->dist;
  const int ax = w->axis;
  const size_t S = ax == 2 ? f->L.pitch_x * f->L.pitch_y : f->L.pitch_x;
  int ok = 1;
  if (d->rank == root)
    ok = whole && whole->d.n[ax] == w->gn[ax] && whole->esize == f->esize &&
         whole->L.pitch_x == f->L.pitch_x &&
         (ax != 2 || whole->L.pitch_y == f->L.pitch_y) &&
         whole->g[ax] == f->g[ax];
  if (!all_ok(d->comm, ok))
    return strata__fail(d->ctx, STRATA_EINVAL,
                        "dist: planes moved between fields of different "
                        "layouts");
  const int m = d->rank == root ? d->size + 1 : 1;
  strata__xfer *x = malloc(sizeof *x * (size_t)m);
  MPI_Request *rq = malloc(sizeof *rq * (size_t)m);
  if (!all_ok(d->comm, x && rq)) {
    free(x);
    free(rq);
    return strata__fail(d->ctx, STRATA_ENOMEM, "out of host memory");
  }
  /* my planes to (from) root; on root every rank's planes from (to) it */
  int k = 0;
  x[k++] = (strata__xfer){root, gather, plane_ptr(f, w->e_lo),
                          (size_t)w->own_n * S * f->esize, 0, 0};
  for (int r = 0; d->rank == root && r < d->size; r++) {
    size_t lo, cnt;
    strata_dist_split(d, w->gn[ax], r, &lo, &cnt);
    x[k++] = (strata__xfer){r, !gather, plane_ptr(whole, (long)lo),
                            cnt * S * f->esize, 0, 0};
  }
  strata_status s = STRATA_OK;
  for (int i = 0; i < k; i++)
    if (x[i].bytes > (size_t)1 << 30)
      s = strata__fail(d->ctx, STRATA_EINVAL,
                       "dist: a message of %zu bytes exceeds 1 GiB",
                       x[i].bytes);
  if (s == STRATA_OK && d->transport == T_NCCL) {
#if defined(STRATA_HAVE_CUDA) && defined(STRATA_HAVE_NCCL)
    s = strata__nccl_start(d->ctx, d->nccl, x, k);
    if (s == STRATA_OK) s = strata__nccl_join(d->ctx, d->nccl);
#else
    s = STRATA_ENOTSUP;
#endif
  } else if (s == STRATA_OK) {
    for (int pass = 0; pass < 2; pass++) /* receives first */
      for (int i = 0; i < k; i++) {
        if (x[i].send != pass) continue;
        if (pass)
          MPI_Isend(x[i].ptr, (int)x[i].bytes, MPI_BYTE, x[i].peer, 9,
                    d->comm, &rq[i]);
        else
          MPI_Irecv(x[i].ptr, (int)x[i].bytes, MPI_BYTE, x[i].peer, 9,
                    d->comm, &rq[i]);
      }
    if (MPI_Waitall(k, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      s = strata__fail(d->ctx, STRATA_EDEVICE, "dist: MPI gather failed");
  }
  free(x);
  free(rq);
  return s;
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
  const size_t bytes = owned_values(f) * f->esize;
  const int yz = f->win->py > 1; /* boxes: gathered, then placed */
  const size_t all = f->d.n[0] * f->win->gn[1] *
                     (f->win->axis == 2 ? f->win->gn[2] : 1) * f->esize;
  void *mine = malloc(bytes ? bytes : 1);
  void *boxes = yz && d->rank == root ? malloc(all) : NULL;
  strata_status s = mine && (boxes || !yz || d->rank != root)
                        ? STRATA_OK
                        : strata__fail(d->ctx, STRATA_ENOMEM,
                                       "out of host memory");
  if (s == STRATA_OK) s = strata_field_read(f, mine); /* the owned box */
  if (d->rank == root && !host && s == STRATA_OK)
    s = strata__fail_arg_p(d->ctx, STRATA_EINVAL, "host", host,
                           "gather: host is NULL on root");
  if (!all_ok(d->comm, s == STRATA_OK)) {
    free(mine);
    free(boxes);
    return s != STRATA_OK ? s
                          : strata__fail_elsewhere(d->ctx, STRATA_EIO,
                                         "gather: another rank failed");
  }
  s = strata__dist_gatherv(d, mine, bytes, yz ? boxes : host, root);
  if (boxes) boxes_copy(f, boxes, host, 1);
  free(mine);
  free(boxes);
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
  const strata__window *w = f->win;
  const int yz = w->py > 1;
  const size_t pv = f->d.n[0] * (w->axis == 2 ? w->gn[1] : 1) * f->esize;
  const size_t bytes = owned_values(f) * f->esize;
  const size_t all = pv * w->gn[w->axis];
  void *mine = malloc(bytes ? bytes : 1);
  unsigned char *boxes = yz && d->rank == root ? malloc(all) : NULL;
  int ok = all_ok(d->comm, mine != NULL && (!yz || d->rank != root || boxes));
  if (!ok) {
    free(mine);
    free(boxes);
    return strata__fail(d->ctx, STRATA_ENOMEM, "out of host memory");
  }
  if (d->rank == root) {
    /* the ranks' boxes in rank order: the slabs of host as they lie, or
     * the y-z split's boxes copied out row by row */
    const unsigned char *src = host;
    if (yz) {
      boxes_copy(f, boxes, (unsigned char *)host, 0);
      src = boxes;
    }
    for (int r = 0; r < d->size; r++) {
      size_t lo[2], cnt[2];
      rank_box(w, r, lo, cnt);
      const size_t n = f->d.n[0] * cnt[0] * cnt[1] * f->esize;
      if (r == root)
        memcpy(mine, src, n);
      else if (n)
        send_big(d->comm, src, n, r, 8);
      src += n;
    }
  } else if (bytes) {
    recv_big(d->comm, mine, bytes, root, 8);
  }
  free(boxes);
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
  strata__field_owned(a, &va);
  if (b && b->win)
    strata__field_owned(b, &vb);
  else if (b)
    strata__field_view(b, 0, w->own_n, &vb);
  double v = 0;
  strata_status s = b ? strata_field_diff(&va, &vb, which, &v)
                      : strata_field_norm(&va, which, &v);
  if (!all_ok(d->comm, s == STRATA_OK))
    return s != STRATA_OK ? s
                          : strata__fail_elsewhere(d->ctx, STRATA_EDEVICE,
                                         "norm: another rank failed");
  const double cnt = (double)owned_values(a);
  double total = (double)a->d.n[0] * (double)w->gn[1] *
                 (w->axis == 2 ? (double)w->gn[2] : 1.0);
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
