/* A velocity model from a file, checked against the wave solver's options
 * where it matters: the CFL number at the fastest point, the points per
 * wavelength at the slowest, each refusal naming the point. */
#include "wave_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

strata_status strata_wave_check_model(strata_context *ctx,
                                      const strata_wave_options *o,
                                      const double *v,
                                      strata_wave_model_info *info) {
  if (!o || !v)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, o ? "v" : "o", NULL,
                              "wave: NULL argument to check_model");
  /* a grid one point thick in y is a 2D x-z section (the 2D limit) */
  double limit = strata_wave_cfl_limit(o->n[1] == 1 ? 2 : 3, o->order);
  if (limit == 0)
    return strata__fail_arg(ctx, STRATA_EINVAL, "order", o->order,
                            "wave: order %d must be 2, 4, 6 or 8", o->order);
  if (!(o->h > 0) || !isfinite(o->h) || !(o->dt >= 0) || !isfinite(o->dt))
    return strata__fail_arg(ctx, STRATA_EINVAL, o->h > 0 ? "dt" : "h",
                            o->h > 0 ? o->dt : o->h,
                            "wave: h = %g must be > 0 and dt = %g >= 0",
                            o->h, o->dt);
  const size_t nx = o->n[0], ny = o->n[1], cnt = o->n[0] * o->n[1] * o->n[2];
  strata_wave_model_info in;
  memset(&in, 0, sizeof in);
  in.vmin = INFINITY;
  in.vmax = -INFINITY;
  size_t qmin = 0, qmax = 0;
  for (size_t q = 0; q < cnt; q++) {
    double x = v[q];
    if (!(x > 0) || !isfinite(x)) {
      char nm[STRATA__ARGNAME_SIZE];
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "v", (long)q),
                              x, "wave: the velocity at point (%zu, %zu, %zu),"
                              " x = %g, y = %g, z = %g m, is %g m/s; it must "
                              "be finite and > 0", q % nx, q / nx % ny,
                              q / (nx * ny), (double)(q % nx) * o->h,
                              (double)(q / nx % ny) * o->h,
                              (double)(q / (nx * ny)) * o->h, x);
    }
    if (x < in.vmin) in.vmin = x, qmin = q;
    if (x > in.vmax) in.vmax = x, qmax = q;
  }
  if (cnt == 0)
    return strata__fail_arg(ctx, STRATA_EINVAL, "n", (unsigned long)cnt,
                            "wave: an empty grid");
  size_t at[2][3] = {{qmin % nx, qmin / nx % ny, qmin / (nx * ny)},
                     {qmax % nx, qmax / nx % ny, qmax / (nx * ny)}};
  memcpy(in.at_min, at[0], sizeof at[0]);
  memcpy(in.at_max, at[1], sizeof at[1]);
  in.cfl_limit = limit;
  in.dt = o->dt > 0 ? o->dt : 0.8 * limit * o->h / in.vmax;
  in.cfl = in.vmax * in.dt / o->h;
  in.ppw = in.vmin / (STRATA__RICKER_FMAX * o->f0 * o->h);
  if (info) *info = in;
  if (in.cfl > limit * (1 + 1e-12))
    return strata__fail_arg(ctx, STRATA_EUNSTABLE, "v", in.vmax,
                            "wave: the model's fastest point (%zu, %zu, %zu) "
                            "at x = %g, y = %g, z = %g m has v = %g m/s: CFL "
                            "number v dt / h = %s exceeds the limit %s of the "
                            "order-%d Laplacian in 3D; reduce dt below %s s",
                            at[1][0], at[1][1], at[1][2], (double)at[1][0] * o->h,
                            (double)at[1][1] * o->h, (double)at[1][2] * o->h,
                            in.vmax, strata__vs(in.cfl, limit).v,
                            strata__vs(in.cfl, limit).lim, o->order,
                            strata__vs(in.dt, limit * o->h / in.vmax).lim);
  if (o->amplitude != 0.0 && in.ppw < o->min_ppw)
    return strata__fail_arg(ctx, STRATA_EUNSTABLE, "v", in.vmin,
                            "wave: the model's slowest point (%zu, %zu, %zu) "
                            "at x = %g, y = %g, z = %g m has v = %g m/s: %s "
                            "points per wavelength at the Ricker's highest "
                            "significant frequency 2.5 f0 = %g Hz, below the "
                            "minimum %s; use h <= %s m or f0 <= %s Hz",
                            at[0][0], at[0][1], at[0][2], (double)at[0][0] * o->h,
                            (double)at[0][1] * o->h, (double)at[0][2] * o->h,
                            in.vmin, strata__vs(in.ppw, o->min_ppw).v,
                            STRATA__RICKER_FMAX * o->f0,
                            strata__vs(in.ppw, o->min_ppw).lim,
                            strata__vs(o->h, in.vmin / (STRATA__RICKER_FMAX *
                                                         o->f0 * o->min_ppw))
                                .lim,
                            strata__vs(o->f0, in.vmin / (STRATA__RICKER_FMAX *
                                                          o->min_ppw * o->h))
                                .lim);
  return STRATA_OK;
}

/* The layers' interfaces: a column of the layers' values marked on its
 * own, then spread over the column's points. */
static strata_status layer_interfaces(strata_context *ctx,
                                      const strata_wave_options *o,
                                      const double *value, double threshold,
                                      unsigned char *mask) {
  const size_t nz = o->n[2], plane = o->n[0] * o->n[1];
  double *col = calloc(nz, sizeof *col);
  unsigned char *cm = calloc(nz, 1);
  if (!col || !cm) {
    free(col);
    free(cm);
    return strata__fail(ctx, STRATA_ENOMEM, "wave interfaces: out of host "
                        "memory");
  }
  for (size_t k = 0; k < nz; k++)
    col[k] = strata__wave_layer_value(o->nlayers, o->layer_top, value,
                                      (double)k * o->h, value[0]);
  const size_t cn[3] = {1, 1, nz};
  strata_status s = strata_model_interfaces(ctx, cn, col, threshold, cm, NULL);
  for (size_t k = 0; s == STRATA_OK && k < nz; k++)
    if (cm[k])
      for (size_t q = 0; q < plane; q++) mask[k * plane + q] |= cm[k];
  free(col);
  free(cm);
  return s;
}

strata_status strata_wave_interfaces(strata_context *ctx,
                                     const strata_wave_options *o,
                                     const double *v, const double *rho,
                                     double threshold, unsigned char *mask,
                                     size_t *count) {
  if (!o || !mask)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, o ? "mask" : "o", NULL,
                              "wave interfaces: NULL argument");
  if (!(threshold >= 0) || !isfinite(threshold))
    return strata__fail_arg(ctx, STRATA_EINVAL, "threshold", threshold,
                            "wave interfaces: threshold is %g; it must be "
                            "finite and >= 0", threshold);
  char nm[STRATA__ARGNAME_SIZE];
  for (int a = 0; a < 3; a++)
    if (o->n[a] < 1)
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "n", a), 0,
                              "wave interfaces: n[%d] is 0", a);
  double lo, hi;
  strata_status s = v ? STRATA_OK
                      : strata__wave_velocity_model(ctx, o, &lo, &hi);
  if (s == STRATA_OK && v)
    s = strata_model_interfaces(ctx, o->n, v, threshold, mask, NULL);
  else if (s == STRATA_OK && o->nlayers > 0)
    s = layer_interfaces(ctx, o, o->layer_velocity, threshold, mask);
  if (s == STRATA_OK && rho)
    s = strata_model_interfaces(ctx, o->n, rho, threshold, mask, NULL);
  else if (s == STRATA_OK && o->nlayers > 0 && o->layer_density)
    s = layer_interfaces(ctx, o, o->layer_density, threshold, mask);
  if (s != STRATA_OK || !count) return s;
  size_t marked = 0, total = o->n[0] * o->n[1] * o->n[2];
  for (size_t q = 0; q < total; q++) marked += mask[q] != 0;
  *count = marked;
  return STRATA_OK;
}
