/* The wave solver's source and receivers: their placement on the grid
 * (create's and the shots'), and the calls between shots of a survey: the
 * source moved, another wavelet, the receivers moved, and the state set
 * back to zero, all on the fields and buffers the solver already holds, so
 * that a process runs shot after shot without allocating the grid again. */
#include "wave_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Corner c (bit a: the upper node along a) of the trilinear cell at i0
 * with fractions fr: its node in idx, its weight returned. */
static double corner(int c, const long i0[3], const double fr[3],
                     long idx[3]) {
  double wt = 1;
  for (int a = 0; a < 3; a++) {
    int up = (c >> a) & 1;
    wt *= up ? fr[a] : 1 - fr[a];
    idx[a] = i0[a] + up;
  }
  return wt;
}

void strata__wave_box_of(const strata_wave_options *o, int dims,
                         const strata__window *win, strata__wave_box *b) {
  for (int a = 0; a < 3; a++) {
    b->off[a] = b->lo[a] = 0;
    b->hi[a] = (long)o->n[a];
  }
  if (!win) return;
  b->off[2] = win->offset; /* the split axis: a section's engine y */
  b->lo[2] = win->own_lo;
  b->hi[2] = win->own_lo + win->own_n;
  if (dims == 3 && win->py > 1) { /* a y-z split */
    b->off[1] = win->offset_y;
    b->lo[1] = win->own_lo_y;
    b->hi[1] = win->own_lo_y + win->own_n_y;
  }
}

/* Node idx (global) lies in box b along y and z. */
static int in_box(const strata__wave_box *b, const long idx[3]) {
  for (int a = 1; a < 3; a++)
    if (idx[a] < b->lo[a] || idx[a] >= b->hi[a]) return 0;
  return 1;
}

/* The source's trilinear weights on up to 8 nodes, the ones this rank
 * owns (its box b). */
void strata__wave_place_source(strata_wave *w, const strata_wave_options *o,
                               const strata__wave_box *b) {
  w->nsrc = 0;
  long i0[3];
  double fr[3];
  for (int a = 0; a < 3; a++)
    strata__wave_lin(o->src[a] / o->h, (long)o->n[a], &i0[a], &fr[a]);
  for (int c = 0; c < 8; c++) {
    long idx[3];
    const double wt = corner(c, i0, fr, idx);
    if (wt == 0 || !in_box(b, idx)) continue;
    for (int a = 1; a < 3; a++) idx[a] -= b->off[a];
    if (w->dims == 2) { /* the engine's axes: x, z */
      idx[1] = idx[2];
      idx[2] = 0;
    }
    memcpy(w->src[w->nsrc], idx, sizeof idx);
    w->src_w[w->nsrc++] = wt;
  }
}

/* The receivers' offsets and weights (8 per receiver) into the backend's
 * memory, made anew only when it holds too few. */
static strata_status upload_receivers(strata_context *ctx, strata_wave *w,
                                      const long *off, const double *wt) {
  const size_t cnt = (size_t)w->nrec * 8;
  strata_status s = STRATA_OK;
  if (w->nrec > w->rec_cap) {
    if (w->rec_off) ctx->be->release(ctx, w->rec_off);
    if (w->rec_w) ctx->be->release(ctx, w->rec_w);
    w->rec_off = NULL;
    w->rec_w = NULL;
    w->rec_cap = 0;
    void *p = NULL, *q = NULL;
    s = ctx->be->alloc(ctx, cnt * sizeof(long), &p);
    if (s == STRATA_OK) w->rec_off = p;
    if (s == STRATA_OK) s = ctx->be->alloc(ctx, cnt * sizeof(double), &q);
    if (s == STRATA_OK) {
      w->rec_w = q;
      w->rec_cap = w->nrec;
    }
  }
  if (s == STRATA_OK)
    s = ctx->be->from_host(ctx, w->rec_off, off, cnt * sizeof(long));
  if (s == STRATA_OK)
    s = ctx->be->from_host(ctx, w->rec_w, wt, cnt * sizeof(double));
  return s;
}

int strata__wave_receiver_here(const strata_wave_options *o, int r,
                               const strata__wave_box *b) {
  long i0[3] = {0, 0, 0};
  double fr;
  for (int a = 1; a < 3; a++)
    strata__wave_lin(o->receivers[3 * r + a] / o->h, (long)o->n[a], &i0[a],
                     &fr);
  return in_box(b, i0);
}

/* The receivers this rank samples (those whose lower y and z nodes it
 * owns) and their trilinear offsets and weights in the backend's memory. */
strata_status strata__wave_place_receivers(strata_context *ctx, strata_wave *w,
                                           const strata_wave_options *o,
                                           const strata__wave_box *b) {
  strata_status s = STRATA_OK;
  long i0[3];
  double fr[3];
  const int had = w->nrec;
  w->nrec = w->nrec_all;
  if (w->nrec_all > 0) {
    double *pos = realloc(w->rec_pos, 3 * sizeof(double) * (size_t)w->nrec_all);
    if (!pos) {
      w->nrec = 0;
      return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
    }
    w->rec_pos = pos;
    memcpy(pos, o->receivers, 3 * sizeof(double) * (size_t)w->nrec_all);
    int *id = realloc(w->rec_id, sizeof(int) * (size_t)w->nrec_all);
    if (id) w->rec_id = id;
    else s = strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
    w->nrec = 0;
    for (int r = 0; id && r < w->nrec_all; r++)
      if (strata__wave_receiver_here(o, r, b)) w->rec_id[w->nrec++] = r;
  }
  if (w->nrec > 0) {
    size_t cnt = (size_t)w->nrec * 8;
    long *off = malloc(cnt * sizeof(long));
    double *wt = malloc(cnt * sizeof(double));
    if (!off || !wt) {
      s = strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
    } else {
      for (int rr = 0; rr < w->nrec; rr++) {
        const int r = w->rec_id[rr];
        for (int a = 0; a < 3; a++)
          strata__wave_lin(o->receivers[3 * r + a] / o->h, (long)o->n[a], &i0[a], &fr[a]);
        for (int c = 0; c < 8; c++) {
          long idx[3];
          const double ww = corner(c, i0, fr, idx);
          for (int a = 0; a < 3; a++) {
            if (idx[a] >= (long)o->n[a]) idx[a] = (long)o->n[a] - 1;
            idx[a] -= b->off[a];
          }
          if (w->dims == 2) { /* the engine's axes: x, z */
            idx[1] = idx[2];
            idx[2] = 0;
          }
          off[8 * rr + c] =
              (long)strata__offset(w->e->u, idx[0], idx[1], idx[2]);
          wt[8 * rr + c] = ww;
        }
      }
      s = upload_receivers(ctx, w, off, wt);
    }
    free(off);
    free(wt);
  }
  if (s == STRATA_OK && w->nrec != had && w->trace) {
    /* the samples' rows change length: the trace memory is made anew */
    ctx->be->release(ctx, w->trace);
    w->trace = NULL;
    w->cap = 0;
  }
  return s;
}

strata_status strata_wave_set_source(strata_wave *w, const double src[3]) {
  if (!w) return STRATA_EINVAL;
  if (!src)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "src", src,
                              "wave: source position is NULL");
  strata_wave_options o = w->o;
  for (int a = 0; a < 3; a++)
    o.src[a] = src[a] < 0 ? 0.5 * (double)(o.n[a] - 1) * o.h : src[a];
  o.nreceivers = 0;
  strata_status s = strata__wave_check_source(w->ctx, &o);
  if (s != STRATA_OK) return s;
  strata__wave_box b;
  strata__wave_box_of(&w->o, w->dims, w->e->u->win, &b);
  strata__wave_place_source(w, &o, &b);
  memcpy(w->o.src, o.src, sizeof o.src);
  return STRATA_OK;
}

strata_status strata_wave_set_receivers(strata_wave *w, int n,
                                        const double *pos) {
  if (!w) return STRATA_EINVAL;
  if (w->nsamples > 0)
    return strata__fail(w->ctx, STRATA_EINVAL, "wave: the receivers move "
                        "only before the first step (%zu samples are "
                        "recorded): call strata_wave_reset first",
                        w->nsamples);
  strata_wave_options o = w->o;
  o.nreceivers = n;
  o.receivers = pos;
  strata_status s = strata__wave_check_source(w->ctx, &o);
  if (s != STRATA_OK) return s;
  strata__wave_box b;
  strata__wave_box_of(&w->o, w->dims, w->e->u->win, &b);
  w->nrec_all = n;
  s = strata__wave_place_receivers(w->ctx, w, &o, &b);
  w->o.nreceivers = s == STRATA_OK ? n : 0;
  if (s != STRATA_OK) w->nrec = w->nrec_all = 0;
  if (w->o.dist) s = strata__dist_agree(w->o.dist, s);
  return s;
}

strata_status strata_wave_set_wavelet(strata_wave *w, const double *samples,
                                      size_t n, double dt) {
  if (!w) return STRATA_EINVAL;
  if (!samples) {
    free(w->wavelet);
    w->wavelet = NULL;
    w->wavelet_n = 0;
    return STRATA_OK;
  }
  if (n < 1)
    return strata__fail_arg(w->ctx, STRATA_EINVAL, "n", n,
                            "wave: the wavelet has no samples");
  if (!(dt > 0) || !isfinite(dt))
    return strata__fail_arg(w->ctx, STRATA_EINVAL, "dt", dt, "wave: the "
                            "wavelet's sample interval is %g s; it must be "
                            "finite and > 0", dt);
  for (size_t k = 0; k < n; k++)
    if (!isfinite(samples[k])) {
      char nm[STRATA__ARGNAME_SIZE];
      return strata__fail_arg(w->ctx, STRATA_EINVAL,
                              strata__idx(nm, "samples", (long)k),
                              samples[k], "wave: wavelet sample %zu is %g; "
                              "it must be finite", k, samples[k]);
    }
  double *c = malloc(n * sizeof *c);
  if (!c) return strata__fail(w->ctx, STRATA_ENOMEM, "out of host memory");
  memcpy(c, samples, n * sizeof *c);
  free(w->wavelet);
  w->wavelet = c;
  w->wavelet_n = n;
  w->wavelet_dt = dt;
  return STRATA_OK;
}

double strata__wave_source_value(const strata_wave *w, double t) {
  if (!w->wavelet)
    return w->o.amplitude * strata_wave_ricker(w->o.f0, t - w->delay);
  /* linear between the samples; 0 before the first and after the last */
  const double x = t / w->wavelet_dt;
  if (!(x >= 0) || x > (double)(w->wavelet_n - 1)) return 0;
  size_t k = (size_t)x;
  if (k >= w->wavelet_n - 1) return w->o.amplitude * w->wavelet[w->wavelet_n - 1];
  const double f = x - (double)k;
  return w->o.amplitude * ((1 - f) * w->wavelet[k] + f * w->wavelet[k + 1]);
}

strata_status strata_wave_reset(strata_wave *w) {
  if (!w) return STRATA_EINVAL;
  strata_field *f[14];
  const int nf = strata__we_state_fields(w->e, f);
  strata_status s = STRATA_OK;
  for (int q = 0; q < nf && s == STRATA_OK; q++) s = strata_field_fill(f[q], 0);
  if (s != STRATA_OK) return s;
  w->steps = 0;
  w->nsamples = 0;
  /* zero is consistent with every face: no ghost refresh needed */
  w->e->dirty = 0;
  return STRATA_OK;
}

const double *strata__wave_receivers(const strata_wave *w, int *n) {
  *n = w ? w->nrec_all : 0;
  return w && w->nrec_all > 0 ? w->rec_pos : NULL;
}

void strata__wave_source(const strata_wave *w, double src[3]) {
  for (int a = 0; a < 3; a++)
    src[a] = w->o.src[a] >= 0 ? w->o.src[a]
                              : 0.5 * (double)(w->o.n[a] - 1) * w->o.h;
}
