/* The acoustic wave solver (the seismic modelling case), 3D or a 2D x-z
 * section (n[1] == 1):
 *   p_tt = rho v^2 div(grad(p) / rho) + f(t) delta(x - x_s),
 *   f = A ricker(f0, t - delay)
 * leapfrog in time, the order-2r star Laplacian (25 points at order 8 in
 * 3D) in space, or with a density model its variable-density form
 * (core/point.h's vd_term), on the wave engine (wave_engine.c).  This file
 * holds the setup side: the options' defaults and validation (CFL,
 * dispersion, geometry, all before anything is allocated), creation and
 * destruction, and the velocity and density models; wave_shot.c places
 * the source and the receivers, wave_step.c holds what runs afterwards. */
#include "wave_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

void strata_wave_options_init(strata_wave_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->n[0] = o->n[1] = o->n[2] = 128;
  o->h = 10.0;
  o->dt = 0.0;
  o->precision = STRATA_F32;
  o->order = 8;
  o->velocity = 2000.0;
  for (int f = 0; f < 6; f++) o->face[f] = STRATA_WAVE_CPML;
  o->absorb_width = 20;
  o->absorb_reflection = 1e-4;
  o->src[0] = o->src[1] = o->src[2] = -1.0;
  o->f0 = 10.0;
  o->amplitude = 1.0;
  o->delay = 0.0;
  o->record_every = 1;
  o->min_ppw = 4.0;
  o->check_every = STRATA_CHECK_EVERY;
}

/* Central second-derivative weights (order 2r) and their largest
 * eigenvalue magnitude W = -(c0 + 2 sum c_k (-1)^k). */
static int lap_weights(int order, double lap[5], double d1[5], double *W) {
  strata_stencil s;
  if (strata_stencil_laplacian(&s, 1, order, 1.0) != STRATA_OK) return -1;
  memset(lap, 0, 5 * sizeof(double));
  lap[0] = s.center;
  for (int k = 1; k <= s.radius; k++) lap[k] = s.coef[0][k];
  double w = lap[0];
  for (int k = 1; k <= s.radius; k++) w += 2 * lap[k] * ((k & 1) ? -1 : 1);
  *W = -w;
  if (d1) {
    strata_stencil t;
    if (strata_stencil_derivative(&t, 1, 0, order, 1.0) != STRATA_OK)
      return -1;
    memset(d1, 0, 5 * sizeof(double));
    for (int k = 1; k <= t.radius; k++) d1[k] = t.coef[0][k];
  }
  return s.radius;
}

double strata_wave_cfl_limit(int dims, int order) {
  double lap[5], W;
  if (dims < 1 || dims > 3 || lap_weights(order, lap, NULL, &W) < 0) return 0;
  return 2.0 / sqrt(dims * W);
}

double strata_wave_ricker(double f0, double t) {
  double a = M_PI * f0 * t;
  a *= a;
  return (1.0 - 2.0 * a) * exp(-a);
}

static const char *const faces[] = {"x-low", "x-high", "y-low",
                                    "y-high", "z-low", "z-high"};

/* 2 for an x-z section (one point along y), else 3. */
static int wave_dims(const strata_wave_options *o) {
  return o->n[1] == 1 ? 2 : 3;
}

static int is_absorbing(strata_wave_face f) {
  return f == STRATA_WAVE_CPML || f == STRATA_WAVE_SPONGE;
}

/* model: NULL when checking the options (the failure names dt or f0, the
 * ones the message tells to change), else the argument holding the model
 * (the failure names it, with the velocity at fault). */
static strata_status check_velocity_range(strata_context *ctx,
                                          const strata_wave_options *o,
                                          double dt, double vmin, double vmax,
                                          double limit, const char *model) {
  double cfl = vmax * dt / o->h;
  if (cfl > limit * (1 + 1e-12))
    return strata__fail_arg(ctx, STRATA_EUNSTABLE, model ? model : "dt",
                        model ? vmax : dt,
                        "wave: CFL number v_max dt / h = %g * %s / %g = %s "
                        "exceeds the limit %s of leapfrog with the order-%d "
                        "Laplacian in %dD; reduce dt below %s s",
                        vmax, strata__vs(dt, limit * o->h / vmax).v, o->h,
                        strata__vs(cfl, limit).v, strata__vs(cfl, limit).lim,
                        o->order, wave_dims(o),
                        strata__vs(dt, limit * o->h / vmax).lim);
  if (o->amplitude != 0.0) {
    double fmax = STRATA__RICKER_FMAX * o->f0;
    double ppw = vmin / (fmax * o->h);
    if (ppw < o->min_ppw)
      return strata__fail_arg(ctx, STRATA_EUNSTABLE, model ? model : "f0",
                          model ? vmin : o->f0,
                          "wave: %s points per wavelength at v_min = %g m/s "
                          "and the Ricker's highest significant frequency "
                          "2.5 f0 = %g Hz, below the minimum %s; use h <= %s "
                          "m or f0 <= %s Hz",
                          strata__vs(ppw, o->min_ppw).v, vmin, fmax,
                          strata__vs(ppw, o->min_ppw).lim,
                          strata__vs(o->h, vmin / (fmax * o->min_ppw)).lim,
                          strata__vs(o->f0, vmin / (STRATA__RICKER_FMAX *
                                                    o->min_ppw * o->h)).lim);
  }
  return STRATA_OK;
}

strata_status strata__wave_velocity_model(strata_context *ctx,
                                          const strata_wave_options *o,
                                          double *lo, double *hi) {
  char nm[STRATA__ARGNAME_SIZE];
  if (o->nlayers > 0) {
    if (!o->layer_top || !o->layer_velocity)
      return strata__fail_arg_p(ctx, STRATA_EINVAL,
                                o->layer_top ? "layer_velocity" : "layer_top",
                                NULL, "wave: nlayers = %d but layer_top or "
                                "layer_velocity is NULL", o->nlayers);
    if (!(o->layer_top[0] <= 0))
      return strata__fail_arg(ctx, STRATA_EINVAL, "layer_top[0]",
                              o->layer_top[0],
                              "wave: the first layer's top is at %g m; it "
                              "must be <= 0 (the model must cover z = 0)",
                              o->layer_top[0]);
    *lo = INFINITY;
    *hi = 0;
    for (int m = 0; m < o->nlayers; m++) {
      double v = o->layer_velocity[m];
      if (!(v > 0) || !isfinite(v))
        return strata__fail_arg(ctx, STRATA_EINVAL,
                                strata__idx(nm, "layer_velocity", m), v,
                                "wave: layer %d has velocity %g; it must be "
                                "> 0", m, v);
      if (!isfinite(o->layer_top[m]) ||
          (m > 0 && !(o->layer_top[m] > o->layer_top[m - 1])))
        return strata__fail_arg(ctx, STRATA_EINVAL,
                                strata__idx(nm, "layer_top", m),
                                o->layer_top[m],
                                "wave: layer tops must increase; layer %d's "
                                "top is %g m", m, o->layer_top[m]);
      /* only layers that reach a grid node count */
      double zmax = (double)(o->n[2] - 1) * o->h;
      if (o->layer_density && (!(o->layer_density[m] > 0) ||
                               !isfinite(o->layer_density[m])))
        return strata__fail_arg(ctx, STRATA_EINVAL,
                                strata__idx(nm, "layer_density", m),
                                o->layer_density[m],
                                "wave: layer %d has density %g; it must be "
                                "finite and > 0", m, o->layer_density[m]);
      if (o->layer_top[m] > zmax) break;
      if (v < *lo) *lo = v;
      if (v > *hi) *hi = v;
    }
  } else if (o->layer_density) {
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "layer_density",
                              o->layer_density,
                              "wave: layer_density is set but nlayers is 0; "
                              "give the layers (or use "
                              "strata_wave_set_density)");
  } else {
    if (!(o->velocity > 0) || !isfinite(o->velocity))
      return strata__fail_arg(ctx, STRATA_EINVAL, "velocity", o->velocity,
                              "wave: velocity is %g; it must be > 0",
                              o->velocity);
    *lo = *hi = o->velocity;
  }
  return STRATA_OK;
}

/* The source's, the receivers' and the run's options. */
strata_status strata__wave_check_source(strata_context *ctx,
                                        const strata_wave_options *o) {
  char nm[STRATA__ARGNAME_SIZE];
  if (!(o->f0 > 0) || !isfinite(o->f0))
    return strata__fail_arg(ctx, STRATA_EINVAL, "f0", o->f0,
                            "wave: f0 = %g must be > 0", o->f0);
  if (!isfinite(o->amplitude))
    return strata__fail_arg(ctx, STRATA_EINVAL, "amplitude", o->amplitude,
                            "wave: amplitude is %g; it must be finite",
                            o->amplitude);
  if (!(o->delay >= 0) || !isfinite(o->delay))
    return strata__fail_arg(ctx, STRATA_EINVAL, "delay", o->delay,
                            "wave: delay is %g s; it must be finite and >= 0",
                            o->delay);
  if (!(o->min_ppw > 0) || !isfinite(o->min_ppw))
    return strata__fail_arg(ctx, STRATA_EINVAL, "min_ppw", o->min_ppw,
                            "wave: min_ppw = %g must be > 0", o->min_ppw);
  for (int a = 0; a < 3; a++) {
    double ext = (double)(o->n[a] - 1) * o->h;
    if (!isfinite(o->src[a]) || o->src[a] > ext * (1 + 1e-12))
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "src", a),
                              o->src[a], "wave: source %c = %s m is outside "
                              "the grid [0, %s] m", "xyz"[a],
                              strata__vs(o->src[a], ext).v,
                              strata__vs(o->src[a], ext).lim);
  }
  if (o->nreceivers < 0 || (o->nreceivers > 0 && !o->receivers))
    return strata__fail_arg(ctx, STRATA_EINVAL, "nreceivers", o->nreceivers,
                            "wave: nreceivers = %d with receivers %s",
                            o->nreceivers, o->receivers ? "set" : "NULL");
  for (int r = 0; r < o->nreceivers; r++)
    for (int a = 0; a < 3; a++) {
      double x = o->receivers[3 * r + a], ext = (double)(o->n[a] - 1) * o->h;
      if (!(x >= 0) || x > ext * (1 + 1e-12))
        return strata__fail_arg(ctx, STRATA_EINVAL,
                                strata__idx(nm, "receivers", 3L * r + a), x,
                                "wave: receiver %d's %c = %s m is outside "
                                "the grid [0, %s] m", r, "xyz"[a],
                                strata__vs(x, ext).v, strata__vs(x, ext).lim);
    }
  if (o->record_every < 1)
    return strata__fail_arg(ctx, STRATA_EINVAL, "record_every",
                            o->record_every,
                            "wave: record_every is %d; it must be >= 1",
                            o->record_every);
  if (o->check_every < 0)
    return strata__fail_arg(ctx, STRATA_EINVAL, "check_every",
                            o->check_every, "wave: check_every is %d; it "
                            "must be >= 0 (0 = never)", o->check_every);
  return STRATA_OK;
}

static strata_status validate(strata_context *ctx, const strata_wave_options *o,
                              double *dt_out, double *vmin, double *vmax,
                              double *limit) {
  if (o->precision != STRATA_F32 && o->precision != STRATA_F64)
    return strata__fail_arg(ctx, STRATA_EINVAL, "precision",
                            (int)o->precision, "wave: precision must be "
                            "STRATA_F32 or STRATA_F64");
  double lap[5], W;
  int R = lap_weights(o->order, lap, NULL, &W);
  if (R < 0)
    return strata__fail_arg(ctx, STRATA_EINVAL, "order", o->order,
                            "wave: order is %d; it must be 2, 4, 6 or 8",
                            o->order);
  if (!(o->h > 0) || !isfinite(o->h))
    return strata__fail_arg(ctx, STRATA_EINVAL, "h", o->h,
                            "wave: grid spacing h = %g must be > 0", o->h);
  if (!(o->dt >= 0) || !isfinite(o->dt))
    return strata__fail_arg(ctx, STRATA_EINVAL, "dt", o->dt,
                            "wave: dt = %g must be >= 0 (0 = automatic)",
                            o->dt);
  char nm[STRATA__ARGNAME_SIZE];
  for (int f = 0; f < 6; f++)
    if ((int)o->face[f] < 0 || o->face[f] > STRATA_WAVE_PERIODIC)
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "face", f),
                              (int)o->face[f],
                              "wave: face %s has unknown kind %d", faces[f],
                              (int)o->face[f]);
  int nabs = 0;
  for (int a = 0; a < 3; a++) {
    if (a == 1 && wave_dims(o) == 2) continue; /* the y faces: none */
    int p0 = o->face[2 * a] == STRATA_WAVE_PERIODIC,
        p1 = o->face[2 * a + 1] == STRATA_WAVE_PERIODIC;
    if (p0 != p1) {
      int f = p0 ? 2 * a + 1 : 2 * a; /* the one that is not periodic */
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "face", f),
                              (int)o->face[f],
                              "wave: periodic on one face of axis %c only; "
                              "both faces of an axis must be periodic",
                              "xyz"[a]);
    }
    int m = is_absorbing(o->face[2 * a]) + is_absorbing(o->face[2 * a + 1]);
    nabs += m;
    long need = R + 1; /* a free surface mirrors R points */
    if (m) need = m * (long)(o->absorb_width + R) + 1;
    if (o->n[a] > ((size_t)1 << 40) || (long)o->n[a] < need)
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "n", a),
                          o->n[a],
                          "wave: %zu points along %c; the order-%d stencil%s "
                          "needs at least %ld",
                          o->n[a], "xyz"[a], o->order,
                          m ? " with its absorbing layers" : "", need);
  }
  if (nabs) {
    if (o->absorb_width < 1 || o->absorb_width > 1000)
      return strata__fail_arg(ctx, STRATA_EINVAL, "absorb_width",
                              o->absorb_width,
                              "wave: absorb_width is %d; it must be 1..1000",
                              o->absorb_width);
    if (!(o->absorb_reflection > 0 && o->absorb_reflection < 1))
      return strata__fail_arg(ctx, STRATA_EINVAL, "absorb_reflection",
                              o->absorb_reflection,
                              "wave: absorb_reflection is %g; it must be in "
                              "(0, 1)", o->absorb_reflection);
  }
  double lo = 0, hi = 0;
  strata_status s = strata__wave_velocity_model(ctx, o, &lo, &hi);
  if (s == STRATA_OK) s = strata__wave_check_source(ctx, o);
  if (s != STRATA_OK) return s;
  *limit = 2.0 / sqrt(wave_dims(o) * W);
  double dt = o->dt > 0 ? o->dt : 0.8 * *limit * o->h / hi;
  s = check_velocity_range(ctx, o, dt, lo, hi, *limit, NULL);
  if (s != STRATA_OK) return s;
  *dt_out = dt;
  *vmin = lo;
  *vmax = hi;
  return STRATA_OK;
}

/* Absorbing profiles along axis a (host arrays of n values). */
static void profiles(const strata_wave_options *o, double dt, double vmax,
                     int a, double *damp, double *pa, double *pb) {
  long n = (long)o->n[a];
  int W = o->absorb_width;
  double L = W * o->h;
  double d0 = 3.0 * vmax * log(1.0 / o->absorb_reflection) / (2.0 * L);
  double amax = M_PI * o->f0;
  for (long i = 0; i < n; i++) {
    if (damp) damp[i] = 0;
    if (pa) pa[i] = 0;
    if (pb) pb[i] = 1;
    for (int side = 0; side < 2; side++) {
      strata_wave_face f = o->face[2 * a + side];
      double x = strata__layer_depth((double)i, n, W, side) / W;
      if (x <= 0) continue;
      double d = d0 * x * x;
      if (f == STRATA_WAVE_SPONGE && damp) damp[i] = d * dt;
      if (f == STRATA_WAVE_CPML && pa) {
        double al = amax * (1 - x);
        double b = exp(-(d + al) * dt);
        pb[i] = b;
        pa[i] = d / (d + al) * (b - 1);
      }
    }
  }
}

void strata_wave_destroy(strata_wave **pw) {
  if (!pw || !*pw) return;
  strata_wave *w = *pw;
  strata__we_destroy(&w->e);
  if (w->rec_off) w->ctx->be->release(w->ctx, w->rec_off);
  if (w->rec_w) w->ctx->be->release(w->ctx, w->rec_w);
  if (w->trace) w->ctx->be->release(w->ctx, w->trace);
  free(w->rec_id);
  free(w->rec_pos);
  free(w->wavelet);
  free(w);
  *pw = NULL;
}

/* The engine under the solver: face kinds, absorbing layers and sizes.
 * With host set, the absorbing profiles and the squared Courant numbers
 * per plane are computed into host arrays (host[a][0..2] and *line, freed
 * by the caller; 0, or -1 when out of memory); without, the profiles'
 * pointers only mark which profiles there are (a footprint). */
static int engine_desc(const strata_wave_options *o, double dt, double vmax,
                       strata__we_desc *d, double *(*host)[3],
                       double **line) {
  static const double present = 0;
  memset(d, 0, sizeof *d);
  /* the engine's axes: x, y, z, or x, z for a section */
  const int D = wave_dims(o), axis[3] = {0, D == 2 ? 2 : 1, 2};
  d->dims = D;
  d->dist = o->dist;
  /* 3D grids may be split along y and z, sections along z only */
  d->split_periodic =
      (o->face[STRATA_FACE_ZLO] == STRATA_WAVE_PERIODIC ? STRATA__DIST_WRAP_Z
                                                        : 0) |
      (D == 3 ? STRATA__DIST_YZ : 0) |
      (D == 3 && o->face[STRATA_FACE_YLO] == STRATA_WAVE_PERIODIC
           ? STRATA__DIST_WRAP_Y
           : 0);
  d->density = o->layer_density != NULL;
  double W;
  d->radius = lap_weights(o->order, d->lap, d->d1, &W);
  for (int q = 0; q < 3; q++) d->n[q] = q < D ? o->n[axis[q]] : 1;
  d->precision = o->precision;
  d->width = o->absorb_width;
  d->width_arg = "absorb_width";
  for (int f = 0; f < 2 * D; f++) {
    const strata_wave_face k = o->face[2 * axis[f / 2] + f % 2];
    d->face[f] = k == STRATA_WAVE_FREE       ? STRATA__WF_FREE
                 : k == STRATA_WAVE_PERIODIC ? STRATA__WF_PERIODIC
                                             : STRATA__WF_ZERO;
    d->absorb[f] = k == STRATA_WAVE_CPML     ? STRATA__ABS_CPML
                   : k == STRATA_WAVE_SPONGE ? STRATA__ABS_SPONGE
                                             : STRATA__ABS_NONE;
  }
  /* the exchange model's own choice of a split knows nothing of absorbing
   * layers: where its y parts cannot hold a CPML layer on a y face, the
   * grid takes slabs (a split asked for by ranks_y is refused instead,
   * with the numbers) */
  if (D == 3 && o->dist && strata__dist_ranks_y(o->dist) == 0 &&
      (d->absorb[2] == STRATA__ABS_CPML || d->absorb[3] == STRATA__ABS_CPML)) {
    const strata_field_desc fd = {3, {d->n[0], d->n[1], d->n[2]}, d->radius,
                                  d->precision};
    int p[2];
    strata__dist_grid(o->dist, &fd, 1, p);
    if (p[0] > 1 && (long)(d->n[1] / (size_t)p[0]) < d->width + 2 * d->radius)
      d->split_periodic &= ~STRATA__DIST_YZ;
  }
  int oom = 0;
  if (host) oom = !(*line = malloc(o->n[2] * sizeof(double)));
  for (int q = 0; q < D && !oom; q++) {
    const int a = axis[q];
    int sp = o->face[2 * a] == STRATA_WAVE_SPONGE ||
             o->face[2 * a + 1] == STRATA_WAVE_SPONGE;
    int cp = o->face[2 * a] == STRATA_WAVE_CPML ||
             o->face[2 * a + 1] == STRATA_WAVE_CPML;
    if (!host) {
      d->damp[q] = sp ? &present : NULL;
      d->pml_a[q] = d->pml_b[q] = cp ? &present : NULL;
      continue;
    }
    if (sp) oom |= !(host[q][0] = malloc(o->n[a] * sizeof(double)));
    if (cp) {
      oom |= !(host[q][1] = malloc(o->n[a] * sizeof(double)));
      oom |= !(host[q][2] = malloc(o->n[a] * sizeof(double)));
    }
    if (!oom && (sp || cp))
      profiles(o, dt, vmax, a, host[q][0], host[q][1], host[q][2]);
    d->damp[q] = host[q][0];
    d->pml_a[q] = host[q][1];
    d->pml_b[q] = host[q][2];
  }
  if (!host || oom) return oom ? -1 : 0;
  for (size_t k = 0; k < o->n[2]; k++) {
    double v = o->nlayers > 0
                   ? strata__wave_layer_value(o->nlayers, o->layer_top,
                                              o->layer_velocity,
                                              (double)k * o->h, o->velocity)
                   : o->velocity;
    (*line)[k] = (v * dt / o->h) * (v * dt / o->h);
  }
  d->c2_line = *line;
  return 0;
}

static strata_status make_engine(strata_context *ctx, strata_wave *w,
                                 const strata_wave_options *o, double dt,
                                 double vmax) {
  strata_status s;
  strata__we_desc d;
  double *host[3][3] = {{NULL}};
  double *line = NULL;
  if (engine_desc(o, dt, vmax, &d, host, &line) == 0)
    s = strata__we_create(ctx, &d, &w->e);
  else
    s = strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  w->radius = d.radius;
  free(line);
  for (int a = 0; a < 3; a++)
    for (int q = 0; q < 3; q++) free(host[a][q]);
  return s;
}

/* Everything create checks, and what it will allocate, without
 * allocating: *o receives the options with the source placed, *dt and the
 * velocity range those of the model. */
static strata_status prepare(strata_context *ctx,
                             const strata_wave_options *opt,
                             strata_wave_options *o, double *dt,
                             double *vmin, double *vmax, double *limit,
                             strata__footprint *fp) {
  if (opt->dist && strata__dist_ctx(opt->dist) != ctx)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "dist", opt->dist,
                              "wave: with dist set, ctx must be "
                              "strata_dist_context(dist)");
  *o = *opt;
  for (int a = 0; a < 3; a++)
    if (o->src[a] < 0) o->src[a] = 0.5 * (double)(o->n[a] - 1) * o->h;
  strata_status s = validate(ctx, o, dt, vmin, vmax, limit);
  if (s != STRATA_OK) return s;
  if (!ctx->be->wave_step)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "wave: the %s engine has no wave kernel yet; use "
                        "backend=cpu", ctx->be->name);
  if (o->nreceivers > 0 && !ctx->be->sample)
    return strata__fail_arg(ctx, STRATA_ENOTSUP, "nreceivers", o->nreceivers,
                            "wave: the %s engine cannot sample receivers "
                            "yet; use backend=cpu", ctx->be->name);
  memset(fp, 0, sizeof *fp);
  strata__we_desc d;
  engine_desc(o, *dt, *vmax, &d, NULL, NULL);
  s = strata__we_footprint(ctx, &d, fp);
  if (s != STRATA_OK) return s;
  /* the receivers this rank samples: 8 offsets and weights each */
  strata__window win;
  const strata_field_desc fd = {d.dims, {d.n[0], d.n[1], d.n[2]}, d.radius,
                                d.precision};
  if (o->dist &&
      (s = strata__dist_local_window(o->dist, &fd, 0, d.split_periodic,
                                     &win)) != STRATA_OK)
    return s;
  strata__wave_box b;
  strata__wave_box_of(o, d.dims, o->dist ? &win : NULL, &b);
  size_t mine = 0;
  for (int r = 0; r < o->nreceivers; r++)
    mine += (size_t)strata__wave_receiver_here(o, r, &b);
  if (mine) strata__fp_device(fp, mine * 8 * (sizeof(long) + sizeof(double)));
  strata__fp_host(fp, sizeof(strata_wave) +
                          sizeof(int) * (size_t)o->nreceivers);
  return STRATA_OK;
}

strata_status strata__wave_footprint(strata_context *ctx,
                                     const strata_wave_options *opt,
                                     strata__footprint *fp) {
  strata_wave_options o;
  double dt = 0, vmin = 0, vmax = 0, limit = 0;
  return prepare(ctx, opt, &o, &dt, &vmin, &vmax, &limit, fp);
}

/* b = 1/rho at the engine's global node (i, j, k) of a dense solver-order
 * array (x fastest; a section's engine axes are x, z) or of the layers. */
typedef struct {
  const strata_wave *w;
  const double *rho;          /* dense, or NULL: the layers below */
  int nlayers;
  const double *top, *lrho;
} b_source;

static double b_at(long i, long j, long k, void *p) {
  const b_source *b = p;
  const strata_wave_options *o = &b->w->o;
  const long z = b->w->dims == 2 ? j : k;
  if (b->rho) {
    const size_t y = b->w->dims == 2 ? 0 : (size_t)j;
    return 1.0 / b->rho[(size_t)i + o->n[0] * (y + o->n[1] * (size_t)z)];
  }
  return 1.0 / strata__wave_layer_value(b->nlayers, b->top, b->lrho,
                                        (double)z * o->h, b->lrho[0]);
}

static strata_status layer_density(strata_wave *w,
                                   const strata_wave_options *o) {
  b_source b = {w, NULL, o->nlayers, o->layer_top, o->layer_density};
  w->o.h = o->h; /* w->o is set at the end of create */
  w->o.n[0] = o->n[0];
  w->o.n[1] = o->n[1];
  w->o.n[2] = o->n[2];
  return strata__we_set_b(w->e, b_at, &b);
}

strata_status strata_wave_create(strata_context *ctx,
                                 const strata_wave_options *opt,
                                 strata_wave **out) {
  if (!ctx) return STRATA_EINVAL;
  if (!out || !opt)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, out ? "o" : "out", NULL,
                              "wave: NULL argument");
  *out = NULL;
  strata_wave_options o;
  double dt = 0, vmin = 0, vmax = 0, limit = 0;
  strata__footprint fp;
  strata_status s = prepare(ctx, opt, &o, &dt, &vmin, &vmax, &limit, &fp);
  if (s == STRATA_OK) s = strata__fp_check(ctx, "wave", &fp);
  if (opt->dist) s = strata__dist_agree(opt->dist, s);
  if (s != STRATA_OK) return s;

  strata_wave *w = calloc(1, sizeof *w);
  if (!w) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  w->ctx = ctx;
  w->dt = dt;
  w->vmin = vmin;
  w->vmax = vmax;
  w->cfl_limit = limit;
  w->delay = o.delay > 0 ? o.delay : 1.5 / o.f0;
  w->nrec = w->nrec_all = o.nreceivers;
  w->dims = wave_dims(&o);

  s = make_engine(ctx, w, &o, dt, vmax);
  if (s == STRATA_OK && o.layer_density) s = layer_density(w, &o);
  if (s != STRATA_OK) {
    strata_wave_destroy(&w);
    return s;
  }

  /* this rank's box (the whole grid without dist) */
  strata__wave_box b;
  strata__wave_box_of(&o, w->dims, w->e->u->win, &b);
  strata__wave_place_source(w, &o, &b);
  s = strata__wave_place_receivers(ctx, w, &o, &b);
  if (o.dist) s = strata__dist_agree(o.dist, s);
  if (s != STRATA_OK) {
    strata_wave_destroy(&w);
    return s;
  }
  o.nlayers = 0;
  o.layer_top = o.layer_velocity = o.layer_density = o.receivers = NULL;
  w->o = o;
  w->o.dt = dt;
  *out = w;
  return STRATA_OK;
}

strata_status strata_wave_set_velocity(strata_wave *w, const double *v) {
  if (!w) return STRATA_EINVAL;
  if (!v)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "v", v,
                              "wave: velocity is NULL");
  /* every rank holds the global model and checks all of it, so that a bad
   * value refuses the call on every rank alike; it takes its box */
  const size_t n0 = w->o.n[0], n1 = w->o.n[1];
  double lo = INFINITY, hi = 0;
  for (size_t q = 0; q < n0 * n1 * w->o.n[2]; q++) {
    if (!(v[q] > 0) || !isfinite(v[q])) {
      char nm[STRATA__ARGNAME_SIZE];
      return strata__fail_arg(w->ctx, STRATA_EINVAL,
                              strata__idx(nm, "v", (long)q), v[q],
                              "wave: velocity[%zu] = %g; it must be finite "
                              "and > 0", q, v[q]);
    }
    if (v[q] < lo) lo = v[q];
    if (v[q] > hi) hi = v[q];
  }
  strata__wave_box b;
  strata__wave_box_of(&w->o, w->dims, w->e->u->win, &b);
  const size_t cnt = n0 * (size_t)(b.hi[1] - b.lo[1]) *
                     (size_t)(b.hi[2] - b.lo[2]);
  double *c2 = malloc(cnt * sizeof(double));
  strata_status s = c2 ? STRATA_OK : strata__fail(w->ctx, STRATA_ENOMEM,
                                                  "out of host memory");
  if (w->o.dist) s = strata__dist_agree(w->o.dist, s);
  if (s != STRATA_OK) {
    free(c2);
    return s;
  }
  size_t at = 0;
  for (long k = b.lo[2]; k < b.hi[2]; k++)
    for (long j = b.lo[1]; j < b.hi[1]; j++)
      for (size_t i = 0; i < n0; i++)
        c2[at++] = v[i + n0 * ((size_t)j + n1 * (size_t)k)];
  s = check_velocity_range(w->ctx, &w->o, w->dt, lo, hi, w->cfl_limit,
                           "v");
  if (s != STRATA_OK) {
    free(c2);
    return s;
  }
  double r = w->dt / w->o.h;
  for (size_t q = 0; q < cnt; q++) c2[q] = (c2[q] * r) * (c2[q] * r);
  s = strata__we_set_c2(w->e, c2);
  free(c2);
  if (s == STRATA_OK) {
    w->vmin = lo;
    w->vmax = hi;
  }
  return s;
}

strata_status strata_wave_set_density(strata_wave *w, const double *rho) {
  if (!w) return STRATA_EINVAL;
  if (!rho)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "rho", rho,
                              "wave: density is NULL");
  const size_t cnt = w->o.n[0] * w->o.n[1] * w->o.n[2];
  for (size_t q = 0; q < cnt; q++)
    if (!(rho[q] > 0) || !isfinite(rho[q])) {
      char nm[STRATA__ARGNAME_SIZE];
      return strata__fail_arg(w->ctx, STRATA_EINVAL,
                              strata__idx(nm, "rho", (long)q), rho[q],
                              "wave: density[%zu] = %g; it must be finite "
                              "and > 0", q, rho[q]);
    }
  strata_status s = STRATA_OK;
  if (!w->e->rb) { /* the b field is new: refuse it when it cannot fit */
    strata__footprint fp;
    memset(&fp, 0, sizeof fp);
    s = strata__fp_field(w->ctx, &fp, &w->e->u->d);
    if (s == STRATA_OK) s = strata__fp_check(w->ctx, "wave density", &fp);
  }
  if (w->o.dist) s = strata__dist_agree(w->o.dist, s);
  if (s != STRATA_OK) return s;
  b_source b = {w, rho, 0, NULL, NULL};
  s = strata__we_set_b(w->e, b_at, &b);
  if (w->o.dist) s = strata__dist_agree(w->o.dist, s);
  return s;
}
