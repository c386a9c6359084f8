/* The wave solver between shots of a survey: the source moved, another
 * wavelet, the receivers moved, and the state set back to zero, all on the
 * fields and buffers the solver already holds, so that a process runs
 * shot after shot without allocating the grid again. */
#include "wave_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The slab of planes this rank holds: its offset and owned range. */
static void slab(const strata_wave *w, long *zoff, long *zlo, long *zhi) {
  *zoff = 0;
  *zlo = 0;
  *zhi = (long)w->o.n[2];
  const strata__window *win = w->e->u->win;
  if (!win) return;
  *zoff = win->offset;
  *zlo = win->own_lo;
  *zhi = win->own_lo + win->own_n;
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
  long zoff, zlo, zhi;
  slab(w, &zoff, &zlo, &zhi);
  strata__wave_place_source(w, &o, zoff, zlo, zhi);
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
  long zoff, zlo, zhi;
  slab(w, &zoff, &zlo, &zhi);
  w->nrec_all = n;
  s = strata__wave_place_receivers(w->ctx, w, &o, zoff, zlo, zhi);
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
