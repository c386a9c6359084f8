/* The 3D acoustic wave solver (the seismic modelling case):
 *   p_tt = v^2 lap(p) + f(t) delta(x - x_s),  f = A ricker(f0, t - delay)
 * leapfrog in time, the order-2r star Laplacian (25 points at order 8) in
 * space, on the wave engine (wave_engine.c).  Validation (CFL, dispersion,
 * geometry) happens before anything is allocated. */
#include "solvers_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define STRATA__RICKER_FMAX 2.5 /* highest significant frequency / f0 */

struct strata_wave {
  strata_context *ctx;
  strata_wave_options o; /* pointers cleared: the arrays are copied */
  strata__wengine *e;
  int radius;
  double dt, cfl_limit, vmin, vmax, delay;
  int nsrc;
  long src[8][3];
  double src_w[8];
  int nrec;        /* receivers sampled here (with dist: this rank's) */
  int nrec_all;    /* receivers of the whole grid */
  int *rec_id;     /* host: global number of each receiver sampled here */
  long *rec_off;   /* backend memory: 8 element offsets per receiver */
  double *rec_w;   /* backend memory: 8 weights per receiver */
  double *trace;   /* backend memory: [sample][receiver] */
  size_t cap, nsamples;
  long steps;
};

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

static int is_absorbing(strata_wave_face f) {
  return f == STRATA_WAVE_CPML || f == STRATA_WAVE_SPONGE;
}

/* Trilinear weights of grid coordinate x (in points) on an axis of n nodes:
 * nodes i0, i0 + 1 with weights 1 - f, f. */
static void lin(double x, long n, long *i0, double *f) {
  long i = (long)floor(x);
  if (i > n - 2) i = n - 2;
  if (i < 0) i = 0;
  *i0 = i;
  *f = n > 1 ? x - (double)i : 0.0;
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
                        "wave: CFL number v_max dt / h = %g * %g / %g = %.4f "
                        "exceeds the limit %.4f of leapfrog with the order-%d "
                        "Laplacian in 3D; reduce dt below %g s",
                        vmax, dt, o->h, cfl, limit, o->order,
                        limit * o->h / vmax);
  if (o->amplitude != 0.0) {
    double fmax = STRATA__RICKER_FMAX * o->f0;
    double ppw = vmin / (fmax * o->h);
    if (ppw < o->min_ppw)
      return strata__fail_arg(ctx, STRATA_EUNSTABLE, model ? model : "f0",
                          model ? vmin : o->f0,
                          "wave: %.2f points per wavelength at v_min = %g m/s "
                          "and the Ricker's highest significant frequency "
                          "2.5 f0 = %g Hz, below the minimum %g; use h <= %g "
                          "m or f0 <= %g Hz",
                          ppw, vmin, fmax, o->min_ppw,
                          vmin / (fmax * o->min_ppw),
                          vmin / (STRATA__RICKER_FMAX * o->min_ppw * o->h));
  }
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
  double lo, hi;
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
    lo = INFINITY;
    hi = 0;
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
      if (o->layer_top[m] > zmax) break;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  } else {
    if (!(o->velocity > 0) || !isfinite(o->velocity))
      return strata__fail_arg(ctx, STRATA_EINVAL, "velocity", o->velocity,
                              "wave: velocity is %g; it must be > 0",
                              o->velocity);
    lo = hi = o->velocity;
  }
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
                              o->src[a], "wave: source %c = %g m is outside "
                              "the grid [0, %g] m", "xyz"[a], o->src[a], ext);
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
                                "wave: receiver %d's %c = %g m is outside "
                                "the grid [0, %g] m", r, "xyz"[a], x, ext);
    }
  if (o->record_every < 1)
    return strata__fail_arg(ctx, STRATA_EINVAL, "record_every",
                            o->record_every,
                            "wave: record_every is %d; it must be >= 1",
                            o->record_every);
  *limit = 2.0 / sqrt(3 * W);
  double dt = o->dt > 0 ? o->dt : 0.8 * *limit * o->h / hi;
  strata_status s = check_velocity_range(ctx, o, dt, lo, hi, *limit, NULL);
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

/* The receivers' samples of f (u, or u^{n-1} after a fused pair). */
static strata_status record_of(strata_wave *w, const strata_field *f) {
  if (w->nrec_all == 0) return STRATA_OK;
  strata_status s = STRATA_OK;
  if (w->nrec > 0) /* with dist, ranks without receivers count samples too */
    s = w->ctx->be->sample(f, w->nrec, 8, w->rec_off, w->rec_w,
                           w->trace + w->nsamples * w->nrec);
  if (s == STRATA_OK) w->nsamples++;
  return s;
}

static strata_status record(strata_wave *w) { return record_of(w, w->e->u); }

static strata_status grow_traces(strata_wave *w, size_t need) {
  if (w->nrec == 0 || need <= w->cap) return STRATA_OK;
  size_t cap = w->cap ? w->cap : 256;
  while (cap < need) cap *= 2;
  strata_context *ctx = w->ctx;
  void *p = NULL;
  size_t row = (size_t)w->nrec * sizeof(double);
  strata_status s = ctx->be->alloc(ctx, cap * row, &p);
  if (s != STRATA_OK) return s;
  if (w->nsamples) {
    s = ctx->be->copy(ctx, p, w->trace, w->nsamples * row);
    if (s != STRATA_OK) {
      ctx->be->release(ctx, p);
      return s;
    }
  }
  if (w->trace) ctx->be->release(ctx, w->trace);
  w->trace = p;
  w->cap = cap;
  return STRATA_OK;
}

void strata_wave_destroy(strata_wave **pw) {
  if (!pw || !*pw) return;
  strata_wave *w = *pw;
  strata__we_destroy(&w->e);
  if (w->rec_off) w->ctx->be->release(w->ctx, w->rec_off);
  if (w->rec_w) w->ctx->be->release(w->ctx, w->rec_w);
  if (w->trace) w->ctx->be->release(w->ctx, w->trace);
  free(w->rec_id);
  free(w);
  *pw = NULL;
}

strata_status strata_wave_create(strata_context *ctx,
                                 const strata_wave_options *opt,
                                 strata_wave **out) {
  if (!ctx) return STRATA_EINVAL;
  if (!out || !opt)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, out ? "o" : "out", NULL,
                              "wave: NULL argument");
  *out = NULL;
  if (opt->dist && strata__dist_ctx(opt->dist) != ctx)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "dist", opt->dist,
                              "wave: with dist set, ctx must be "
                              "strata_dist_context(dist)");
  strata_wave_options o = *opt;
  for (int a = 0; a < 3; a++)
    if (o.src[a] < 0) o.src[a] = 0.5 * (double)(o.n[a] - 1) * o.h;
  double dt = 0, vmin = 0, vmax = 0, limit = 0;
  strata_status s = validate(ctx, &o, &dt, &vmin, &vmax, &limit);
  if (s != STRATA_OK) return s;
  if (!ctx->be->wave_step)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "wave: the %s engine has no wave kernel yet; use "
                        "backend=cpu", ctx->be->name);
  if (o.nreceivers > 0 && !ctx->be->sample)
    return strata__fail_arg(ctx, STRATA_ENOTSUP, "nreceivers", o.nreceivers,
                            "wave: the %s engine cannot sample receivers "
                            "yet; use backend=cpu", ctx->be->name);

  strata_wave *w = calloc(1, sizeof *w);
  if (!w) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  w->ctx = ctx;
  w->dt = dt;
  w->vmin = vmin;
  w->vmax = vmax;
  w->cfl_limit = limit;
  w->delay = o.delay > 0 ? o.delay : 1.5 / o.f0;
  w->nrec = w->nrec_all = o.nreceivers;

  strata__we_desc d;
  memset(&d, 0, sizeof d);
  d.dims = 3;
  d.dist = o.dist;
  d.split_periodic = o.face[STRATA_FACE_ZLO] == STRATA_WAVE_PERIODIC;
  double W;
  d.radius = w->radius = lap_weights(o.order, d.lap, d.d1, &W);
  for (int a = 0; a < 3; a++) d.n[a] = o.n[a];
  d.precision = o.precision;
  d.width = o.absorb_width;
  d.width_arg = "absorb_width";
  double *host[3][3] = {{NULL}};
  double *line = malloc(o.n[2] * sizeof(double));
  int oom = !line;
  for (int f = 0; f < 6; f++) {
    d.face[f] = o.face[f] == STRATA_WAVE_FREE       ? STRATA__WF_FREE
                : o.face[f] == STRATA_WAVE_PERIODIC ? STRATA__WF_PERIODIC
                                                    : STRATA__WF_ZERO;
    d.absorb[f] = o.face[f] == STRATA_WAVE_CPML     ? STRATA__ABS_CPML
                  : o.face[f] == STRATA_WAVE_SPONGE ? STRATA__ABS_SPONGE
                                                    : STRATA__ABS_NONE;
  }
  for (int a = 0; a < 3 && !oom; a++) {
    int sp = o.face[2 * a] == STRATA_WAVE_SPONGE ||
             o.face[2 * a + 1] == STRATA_WAVE_SPONGE;
    int cp = o.face[2 * a] == STRATA_WAVE_CPML ||
             o.face[2 * a + 1] == STRATA_WAVE_CPML;
    if (sp) oom |= !(host[a][0] = malloc(o.n[a] * sizeof(double)));
    if (cp) {
      oom |= !(host[a][1] = malloc(o.n[a] * sizeof(double)));
      oom |= !(host[a][2] = malloc(o.n[a] * sizeof(double)));
    }
    if (!oom && (sp || cp))
      profiles(&o, dt, vmax, a, host[a][0], host[a][1], host[a][2]);
    d.damp[a] = host[a][0];
    d.pml_a[a] = host[a][1];
    d.pml_b[a] = host[a][2];
  }
  if (!oom) {
    for (size_t k = 0; k < o.n[2]; k++) {
      double v = o.velocity;
      if (o.nlayers > 0) {
        double z = (double)k * o.h;
        for (int m = 0; m < o.nlayers; m++)
          if (o.layer_top[m] <= z) v = o.layer_velocity[m];
      }
      line[k] = (v * dt / o.h) * (v * dt / o.h);
    }
    d.c2_line = line;
    s = strata__we_create(ctx, &d, &w->e);
  } else {
    s = strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  }
  free(line);
  for (int a = 0; a < 3; a++)
    for (int q = 0; q < 3; q++) free(host[a][q]);
  if (s != STRATA_OK) {
    strata_wave_destroy(&w);
    return s;
  }

  /* this rank's planes along z (all of them without dist) */
  long zoff = 0, zlo = 0, zhi = (long)o.n[2];
  if (w->e->u->win) {
    const strata__window *win = w->e->u->win;
    zoff = win->offset;
    zlo = win->own_lo;
    zhi = win->own_lo + win->own_n;
  }
  /* source: trilinear spread over up to 8 nodes (the owners' only) */
  long i0[3];
  double fr[3];
  for (int a = 0; a < 3; a++) lin(o.src[a] / o.h, (long)o.n[a], &i0[a], &fr[a]);
  for (int c = 0; c < 8; c++) {
    double wt = 1;
    long idx[3];
    for (int a = 0; a < 3; a++) {
      int up = (c >> a) & 1;
      wt *= up ? fr[a] : 1 - fr[a];
      idx[a] = i0[a] + up;
    }
    if (wt == 0 || idx[2] < zlo || idx[2] >= zhi) continue;
    idx[2] -= zoff;
    memcpy(w->src[w->nsrc], idx, sizeof idx);
    w->src_w[w->nsrc++] = wt;
  }
  /* receivers */
  if (w->nrec_all > 0) {
    /* a receiver belongs to the rank owning its lower z node (the upper
     * one may be a ghost plane, exchanged before every sample) */
    w->rec_id = malloc(sizeof(int) * (size_t)w->nrec_all);
    if (!w->rec_id) s = strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
    w->nrec = 0;
    for (int r = 0; w->rec_id && r < w->nrec_all; r++) {
      lin(o.receivers[3 * r + 2] / o.h, (long)o.n[2], &i0[2], &fr[2]);
      if (i0[2] >= zlo && i0[2] < zhi) w->rec_id[w->nrec++] = r;
    }
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
          lin(o.receivers[3 * r + a] / o.h, (long)o.n[a], &i0[a], &fr[a]);
        for (int c = 0; c < 8; c++) {
          double ww = 1;
          long idx[3];
          for (int a = 0; a < 3; a++) {
            int up = (c >> a) & 1;
            ww *= up ? fr[a] : 1 - fr[a];
            idx[a] = i0[a] + up;
            if (idx[a] >= (long)o.n[a]) idx[a] = (long)o.n[a] - 1;
          }
          off[8 * rr + c] = (long)strata__offset(w->e->u, idx[0], idx[1],
                                                 idx[2] - zoff);
          wt[8 * rr + c] = ww;
        }
      }
      void *p = NULL;
      s = ctx->be->alloc(ctx, cnt * sizeof(long), &p);
      if (s == STRATA_OK) {
        w->rec_off = p;
        s = ctx->be->from_host(ctx, p, off, cnt * sizeof(long));
      }
      if (s == STRATA_OK) s = strata__dev_doubles(ctx, wt, cnt, &w->rec_w);
    }
    free(off);
    free(wt);
  }
  if (o.dist) s = strata__dist_agree(o.dist, s);
  if (s != STRATA_OK) {
    strata_wave_destroy(&w);
    return s;
  }
  o.nlayers = 0;
  o.layer_top = o.layer_velocity = o.receivers = NULL;
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
  size_t cnt = w->o.n[0] * w->o.n[1] * w->o.n[2];
  const size_t plane = w->o.n[0] * w->o.n[1];
  if (w->e->u->win) { /* every rank holds the global model: take the slab */
    v += plane * (size_t)w->e->u->win->own_lo;
    cnt = plane * (size_t)w->e->u->win->own_n;
  }
  double lo = INFINITY, hi = 0;
  for (size_t q = 0; q < cnt; q++) {
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
  if (w->o.dist) { /* the global range, for the same checks everywhere */
    double r[2] = {-lo, hi};
    strata_status sr = strata_dist_allreduce(w->o.dist, r, 2, 1);
    if (sr != STRATA_OK) return sr;
    lo = -r[0];
    hi = r[1];
  }
  strata_status s =
      check_velocity_range(w->ctx, &w->o, w->dt, lo, hi, w->cfl_limit,
                           "v");
  if (s != STRATA_OK) return s;
  double *c2 = malloc(cnt * sizeof(double));
  if (!c2) return strata__fail(w->ctx, STRATA_ENOMEM, "out of host memory");
  double r = w->dt / w->o.h;
  for (size_t q = 0; q < cnt; q++) c2[q] = (v[q] * r) * (v[q] * r);
  s = strata__we_set_c2(w->e, c2);
  free(c2);
  if (s == STRATA_OK) {
    w->vmin = lo;
    w->vmax = hi;
  }
  return s;
}

strata_status strata_wave_set_state(strata_wave *w, strata_point_fn u0,
                                    strata_point_fn um1, void *user) {
  if (!w) return STRATA_EINVAL;
  if (!u0)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "u0", u0,
                              "wave: u0 is NULL");
  strata__interior_fn c = {u0, user, {(long)w->o.n[0], (long)w->o.n[1],
                              (long)w->o.n[2]}};
  strata_status s = strata_field_fill_fn(w->e->u, strata__call_interior, &c);
  if (s != STRATA_OK) return s;
  c.fn = um1 ? um1 : u0;
  s = strata_field_fill_fn(w->e->up, strata__call_interior, &c);
  w->e->dirty = 1;
  return s;
}

strata_field *strata_wave_field(strata_wave *w, int previous) {
  if (!w) return NULL;
  w->e->dirty = 1;
  return previous ? w->e->up : w->e->u;
}

strata_status strata_wave_read(const strata_wave *w, void *host) {
  if (!w) return STRATA_EINVAL;
  if (w->o.dist) return strata_dist_gather(w->e->u, 0, host);
  return strata_field_read(w->e->u, host);
}

strata_status strata_wave_step(strata_wave *w, long nsteps) {
  if (!w) return STRATA_EINVAL;
  if (nsteps < 0)
    return strata__fail_arg(w->ctx, STRATA_EINVAL, "nsteps", nsteps,
                            "wave: nsteps is %ld; it must be >= 0", nsteps);
  strata_status s;
  if (w->e->dirty && (s = strata__we_refresh(w->e)) != STRATA_OK) return s;
  long k = w->o.record_every;
  if ((s = grow_traces(w, (size_t)((w->steps + nsteps) / k) + 1)) !=
      STRATA_OK)
    return s;
  if (w->nsamples == 0 && (s = record(w)) != STRATA_OK) return s;
  const double scale = w->dt * w->dt / (w->o.h * w->o.h * w->o.h);
  const int ns = w->o.amplitude != 0 ? w->nsrc : 0;
  const int pairs = strata__we_pair_wanted(w->ctx);
  for (long q = 0; q < nsteps;) {
    /* the sources' values at this step, and the next when a pair may run */
    const int nh = pairs && nsteps - q >= 2 ? 2 : 1;
    double val[2][8];
    for (int h = 0; h < nh; h++) {
      double t = (double)(w->steps + h) * w->dt;
      double f = w->o.amplitude * strata_wave_ricker(w->o.f0, t - w->delay);
      for (int m = 0; m < w->nsrc; m++) val[h][m] = scale * f * w->src_w[m];
    }
    int did = 0;
    if (nh == 2 &&
        (s = strata__we_step2(w->e, ns, w->src, val[0], val[1], &did)) !=
            STRATA_OK)
      return s;
    if (did) { /* two steps: u^{n+1} is now up */
      w->steps++;
      if (w->steps % k == 0 && (s = record_of(w, w->e->up)) != STRATA_OK)
        return s;
      w->steps++;
      if (w->steps % k == 0 && (s = record(w)) != STRATA_OK) return s;
      q += 2;
      continue;
    }
    s = strata__we_step(w->e, ns, w->src, val[0]);
    if (s != STRATA_OK) return s;
    w->steps++;
    if (w->steps % k == 0 && (s = record(w)) != STRATA_OK) return s;
    q++;
  }
  return STRATA_OK;
}

/* The seismograms of every rank, on rank 0: each rank sends
 * [receiver id, samples...] rows for its receivers. */
static strata_status dist_traces(const strata_wave *w, double *out,
                                 size_t capacity) {
  strata_dist *d = w->o.dist;
  const size_t ns = w->nsamples, row = ns + 1;
  const size_t cnt = ns * (size_t)w->nrec_all;
  int bad = strata__dist_rank(d) == 0 && out && capacity < cnt;
  double flag = bad;
  strata_status s = strata_dist_allreduce(d, &flag, 1, 1);
  if (s != STRATA_OK) return s;
  if (flag > 0)
    return strata__fail_arg(w->ctx, STRATA_EINVAL, "capacity", capacity,
                        "wave: traces need %zu doubles (%d receivers x %zu "
                        "samples); the buffer on rank 0 holds %zu",
                        cnt, w->nrec_all, ns, capacity);
  double *mine = malloc(sizeof(double) * (row * (size_t)w->nrec + 1));
  double *tmp = malloc(sizeof(double) * (ns * (size_t)w->nrec + 1));
  double *all = strata__dist_rank(d) == 0
                    ? malloc(sizeof(double) * (row * (size_t)w->nrec_all + 1))
                    : NULL;
  int ok = mine && tmp && (strata__dist_rank(d) != 0 || all);
  s = ok ? STRATA_OK : strata__fail(w->ctx, STRATA_ENOMEM, "out of host memory");
  if (s == STRATA_OK && w->nrec && ns)
    s = w->ctx->be->to_host(w->ctx, tmp, w->trace,
                            ns * (size_t)w->nrec * sizeof(double));
  double okd = s == STRATA_OK;
  strata_status s2 = strata_dist_allreduce(d, &okd, 1, 2);
  if (s == STRATA_OK && s2 != STRATA_OK) s = s2;
  if (s == STRATA_OK && okd < 1)
    s = strata__fail(w->ctx, STRATA_EIO, "wave: traces: another rank failed");
  if (s == STRATA_OK) {
    for (int r = 0; r < w->nrec; r++) {
      mine[(size_t)r * row] = (double)w->rec_id[r];
      for (size_t t = 0; t < ns; t++)
        mine[(size_t)r * row + 1 + t] = tmp[t * (size_t)w->nrec + r];
    }
    s = strata__dist_gatherv(d, mine, sizeof(double) * row * (size_t)w->nrec,
                             all, 0);
  }
  if (s == STRATA_OK && all && out)
    for (int r = 0; r < w->nrec_all; r++) {
      const double *q = all + (size_t)r * row;
      memcpy(out + (size_t)q[0] * ns, q + 1, ns * sizeof(double));
    }
  free(mine);
  free(tmp);
  free(all);
  return s;
}

strata_status strata_wave_traces(const strata_wave *w, double *out,
                                 size_t capacity, size_t *nsamples) {
  if (!w) return STRATA_EINVAL;
  if (!nsamples)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "nsamples", nsamples,
                              "wave: nsamples is NULL");
  *nsamples = w->nsamples;
  if (w->o.dist) return dist_traces(w, out, capacity);
  if (!out || w->nrec == 0 || w->nsamples == 0) return STRATA_OK;
  size_t cnt = w->nsamples * (size_t)w->nrec;
  if (capacity < cnt)
    return strata__fail_arg(w->ctx, STRATA_EINVAL, "capacity", capacity,
                        "wave: traces need %zu doubles (%d receivers x %zu "
                        "samples); the buffer holds %zu",
                        cnt, w->nrec, w->nsamples, capacity);
  double *tmp = malloc(cnt * sizeof(double));
  if (!tmp) return strata__fail(w->ctx, STRATA_ENOMEM, "out of host memory");
  strata_status s = w->ctx->be->to_host(w->ctx, tmp, w->trace,
                                        cnt * sizeof(double));
  if (s == STRATA_OK)
    for (size_t t = 0; t < w->nsamples; t++)
      for (int r = 0; r < w->nrec; r++)
        out[(size_t)r * w->nsamples + t] = tmp[t * (size_t)w->nrec + r];
  free(tmp);
  return s;
}

strata_status strata_wave_get_info(const strata_wave *w,
                                   strata_wave_info *info) {
  if (!w) return STRATA_EINVAL;
  if (!info)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "info", info,
                              "wave: info is NULL");
  memset(info, 0, sizeof *info);
  info->steps = w->steps;
  info->dt = w->dt;
  info->h = w->o.h;
  info->time = (double)w->steps * w->dt;
  info->vmin = w->vmin;
  info->vmax = w->vmax;
  info->cfl = w->vmax * w->dt / w->o.h;
  info->cfl_limit = w->cfl_limit;
  info->fmax = STRATA__RICKER_FMAX * w->o.f0;
  info->ppw = w->vmin / (info->fmax * w->o.h);
  info->min_ppw = w->o.min_ppw;
  info->nsamples = w->nsamples;
  /* u^n, u^{n-1} (and c2) read, u^{n+1} written; in a CPML layer psi and
   * zeta read and written once more per point and axis */
  double words = w->e->c2 ? 4.0 : 3.0;
  for (int ax = 0; ax < 3; ax++)
    for (int side = 0; side < 2; side++) {
      const strata__wave_slab *S = &w->e->a.slab[ax][side];
      const double n = (double)w->e->u->d.n[ax];
      if (S->psi && n > 0) words += 4.0 * (double)(S->hi - S->lo) / n;
    }
  info->bytes_per_point_step = (double)w->o.precision * words;
  return STRATA_OK;
}

/* ---- state (checkpoints) -------------------------------------------------- */

/* 02: the high CPML slabs' fields start at the layer (01: R before it) */
#define WAVE_STATE_TAG 0x3230455441565753ull /* "SWVATE02" */
/* a rank's part of a distributed solver: the part record follows */
#define WAVE_STATE_TAG_PART 0x3230505441565753ull /* "SWVATP02" */

static size_t wave_state_size(strata_wave *w, strata_field **f, int *nf) {
  *nf = strata__we_state_fields(w->e, f);
  return STRATA__STATE_HEAD * 8 +
         (w->o.dist ? STRATA__STATE_PART * 8 : 0) +
         strata__state_fields_bytes(f, *nf) +
         w->nsamples * (size_t)w->nrec * sizeof(double);
}

strata_status strata_wave_state_size(const strata_wave *w, size_t *bytes) {
  if (!w) return STRATA_EINVAL;
  if (!bytes)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "bytes", bytes,
                              "wave: bytes is NULL");
  strata_field *f[14];
  int nf;
  *bytes = wave_state_size((strata_wave *)w, f, &nf);
  return STRATA_OK;
}

static strata_status wave_save(strata_wave *w, void *buf, size_t size) {
  strata_field *f[14];
  int nf;
  size_t need = wave_state_size(w, f, &nf);
  if (!buf || size < need)
    return strata__fail_arg(w->ctx, STRATA_EINVAL, buf ? "size" : "buf",
                        buf ? size : 0, "wave: the state needs %zu "
                        "bytes, the buffer has %zu%s", need, size,
                        buf ? "" : " (NULL)");
  uint64_t h[STRATA__STATE_HEAD] = {
      w->o.dist ? WAVE_STATE_TAG_PART : WAVE_STATE_TAG,
      (uint64_t)w->o.precision, (uint64_t)nf,
      (uint64_t)strata__state_fields_bytes(f, nf), (uint64_t)w->steps,
      (uint64_t)w->nsamples, (uint64_t)w->nrec, (uint64_t)w->e->dirty};
  unsigned char *p = buf;
  memcpy(p, h, sizeof h);
  p += sizeof h;
  if (w->o.dist) {
    uint64_t part[STRATA__STATE_PART];
    strata__state_part(w->e->u, part);
    memcpy(p, part, sizeof part);
    p += sizeof part;
  }
  strata_status s = strata__state_fields_save(f, nf, p);
  if (s != STRATA_OK) return s;
  p += h[3];
  if (w->nrec && w->nsamples)
    s = w->ctx->be->to_host(w->ctx, p, w->trace,
                            w->nsamples * (size_t)w->nrec * sizeof(double));
  return s;
}

strata_status strata_wave_save_state(const strata_wave *cw, void *buf,
                                     size_t size) {
  if (!cw) return STRATA_EINVAL;
  strata_wave *w = (strata_wave *)cw;
  return strata__state_agree(w->e->u, wave_save(w, buf, size), "wave",
                             "save");
}

/* psi of a CPML slab is zero outside its layer [lo, hi) along its axis,
 * ghosts included: neither engine writes it there, and the CUDA engine's
 * tiles take it as zero rather than read it.  A state (p: its fields f,
 * strata__we_state_fields' list, as ghosted images) whose psi is not zero
 * there was not saved by a solver: refused. */
static strata_status psi_outside_zero(strata_wave *w, strata_field *const *f,
                                      const unsigned char *p) {
  strata__wengine *e = w->e;
  int q = 2; /* u, up, then psi and zeta per slab */
  p += strata__state_fields_bytes(f, 2);
  static const char *const face[3][2] = {
      {"x low", "x high"}, {"y low", "y high"}, {"z low", "z high"}};
  for (int a = 0; a < 3; a++)
    for (int sd = 0; sd < 2; sd++) {
      const strata__wave_slab *S = &e->a.slab[a][sd];
      if (!S->psi) continue;
      strata_field_desc d;
      strata_field_get_desc(S->psi, &d);
      const long g = d.ghost;
      long ext[3] = {1, 1, 1};
      for (int t = 0; t < d.dims; t++) ext[t] = (long)d.n[t] + 2 * g;
      const size_t es = (size_t)d.precision;
      size_t at = 0;
      for (long k = 0; k < ext[2]; k++)
        for (long j = 0; j < ext[1]; j++)
          for (long i = 0; i < ext[0]; i++, at += es) {
            const long c = (a == 0 ? i : a == 1 ? j : k) - g + S->origin;
            if (c >= S->lo && c < S->hi) continue;
            double v;
            if (es == 4) {
              float x;
              memcpy(&x, p + at, 4);
              v = x;
            } else {
              memcpy(&v, p + at, 8);
            }
            if (v != 0.0)
              return strata__fail(w->ctx, STRATA_EFORMAT,
                                  "wave: the state's CPML psi of the %s face "
                                  "is %g at index %ld of its axis, outside "
                                  "the layer [%ld, %ld), where it must be 0",
                                  face[a][sd], v, c, S->lo, S->hi);
          }
      p += strata__state_fields_bytes(f + q, 2);
      q += 2;
    }
  return STRATA_OK;
}

/* Checks a state against this solver; on success *fb, *tb are its fields'
 * and traces' bytes and *hdr the header (h, then the part record). */
static strata_status wave_check(strata_wave *w, const void *buf, size_t size,
                                uint64_t *h, size_t *fb, size_t *tb) {
  strata_field *f[14];
  int nf;
  wave_state_size(w, f, &nf);
  *fb = strata__state_fields_bytes(f, nf);
  size_t hb = 0;
  strata_status s =
      strata__state_head(w->ctx, "wave", "a wave solver", w->e->u, buf, size,
                         WAVE_STATE_TAG, WAVE_STATE_TAG_PART, h, &hb);
  if (s != STRATA_OK) return s;
  if (h[1] != (uint64_t)w->o.precision || h[2] != (uint64_t)nf ||
      h[3] != *fb || h[6] != (uint64_t)w->nrec)
    return strata__fail(w->ctx, STRATA_EINVAL, "wave: the state is of "
                        "another solver setup (precision %u, %u fields of "
                        "%zu bytes, %u receivers; this solver: %u, %d, %zu, "
                        "%d)", (unsigned)h[1], (unsigned)h[2], (size_t)h[3],
                        (unsigned)h[6], (unsigned)w->o.precision, nf, *fb,
                        w->nrec);
  *tb = (size_t)h[5] * (size_t)w->nrec * sizeof(double);
  if (h[5] > ((uint64_t)h[4] / (uint64_t)w->o.record_every) + 1 ||
      size != hb + *fb + *tb || h[7] > 1)
    return strata__fail(w->ctx, STRATA_EFORMAT, "wave: the state is "
                        "inconsistent (%zu bytes for %llu steps and %llu "
                        "samples)", size, (unsigned long long)h[4],
                        (unsigned long long)h[5]);
  s = psi_outside_zero(w, f, (const unsigned char *)buf + hb);
  if (s != STRATA_OK) return s;
  return grow_traces(w, (size_t)h[5] + 1);
}

strata_status strata_wave_load_state(strata_wave *w, const void *buf,
                                     size_t size) {
  if (!w) return STRATA_EINVAL;
  uint64_t h[STRATA__STATE_HEAD + STRATA__STATE_PART];
  size_t fb = 0, tb = 0;
  /* with dist: every rank checks its part, then all load or none does */
  strata_status s = strata__state_agree(
      w->e->u, wave_check(w, buf, size, h, &fb, &tb), "wave", "load");
  if (s != STRATA_OK) return s;
  strata_field *f[14];
  int nf;
  wave_state_size(w, f, &nf);
  const unsigned char *p =
      (const unsigned char *)buf + STRATA__STATE_HEAD * 8 +
      (h[0] == WAVE_STATE_TAG_PART ? STRATA__STATE_PART * 8 : 0);
  s = strata__state_fields_load(f, nf, p);
  if (s == STRATA_OK && tb)
    s = w->ctx->be->from_host(w->ctx, w->trace, p + fb, tb);
  if (s == STRATA_OK) {
    w->steps = (long)h[4];
    w->nsamples = (size_t)h[5];
    w->e->dirty = (int)h[7];
  }
  return strata__state_agree(w->e->u, s, "wave", "load");
}
