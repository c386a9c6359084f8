/* FDTD in 2D, in grid units h = 1, c = 1, dt = S (Courant):
 *  - the explicit E-field update (Ez alone, second order in time),
 *      E+ = 2 (1 - 2 dt^2) E - E- + dt^2 (4 neighbours) + dt (J - J-),
 *    i.e. the 5-point wave equation, run on the wave engine (radius 1):
 *    PEC = odd image about the boundary node, Mur and CPML faces;
 *  - Yee's TM scheme (Ez, Hx, Hy) through the backend's yee_step, with
 *    PEC, first-order Mur, CPML (Roden & Gedney) and periodic faces.
 * The source current J enters with the same sign in both schemes. */
#include "solvers_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define STRATA__FDTD_PML_R 1e-6 /* design reflection of the CPML profile */
/* The CPML frequency shift alpha at the layer's inner edge, in c/h units
 * (falling to 0 at the wall).  Small: a large alpha (e.g. pi / period of a
 * short pulse) stops the layer absorbing the low-frequency wake of 2D
 * waves, which then bounces between the layers (with alpha = 0.8 orders of
 * magnitude more energy stays in the grid than with 0.05: tests/test_fdtd.c
 * checks the reflection). */
#define STRATA__FDTD_PML_ALPHA 0.05

struct strata_fdtd {
  strata_context *ctx;
  strata_fdtd_options o;
  double dt;
  long steps;
  long src[1][3];   /* local indices */
  int has_src;      /* this rank injects the source */
  /* explicit scheme */
  strata__wengine *e;
  /* Yee */
  strata__yee_args y;
  strata_field *ez, *hx, *hy, *psi[4];
  double *prof;
  int dirty;
};

void strata_fdtd_options_init(strata_fdtd_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->n[0] = o->n[1] = 256;
  o->precision = STRATA_F32;
  o->scheme = STRATA_FDTD_EXPLICIT;
  o->courant = 0.5;
  for (int f = 0; f < 4; f++) o->face[f] = STRATA_FDTD_PEC;
  o->pml_width = 16;
  o->waveform = STRATA_FDTD_SINE;
  o->src[0] = o->src[1] = -1;
  o->amplitude = 1.0;
  o->period = 20.0;
  o->delay = 0.0;
  o->check_every = STRATA_CHECK_EVERY;
}

double strata_fdtd_courant_limit(void) { return 1.0 / sqrt(2.0); }

static const char *const faces[] = {"x-low", "x-high", "y-low", "y-high"};

static double current(const strata_fdtd_options *o, double t) {
  switch (o->waveform) {
  case STRATA_FDTD_SINE: return o->amplitude * sin(2 * M_PI * t / o->period);
  case STRATA_FDTD_GAUSSIAN: {
    double x = (t - o->delay) / o->period;
    return o->amplitude * exp(-x * x);
  }
  case STRATA_FDTD_RICKER:
    return o->amplitude * strata_wave_ricker(1.0 / o->period, t - o->delay);
  default: return 0.0;
  }
}

static strata_status validate(strata_context *ctx, strata_fdtd_options *o) {
  if (o->precision != STRATA_F32 && o->precision != STRATA_F64)
    return strata__fail_arg(ctx, STRATA_EINVAL, "precision",
                            (int)o->precision, "fdtd: precision must be "
                            "STRATA_F32 or STRATA_F64");
  if (o->scheme != STRATA_FDTD_EXPLICIT && o->scheme != STRATA_FDTD_YEE_TM)
    return strata__fail_arg(ctx, STRATA_EINVAL, "scheme", (int)o->scheme,
                            "fdtd: unknown scheme %d", (int)o->scheme);
  if (!(o->courant > 0) || !isfinite(o->courant))
    return strata__fail_arg(ctx, STRATA_EINVAL, "courant", o->courant,
                            "fdtd: courant = %g must be > 0", o->courant);
  double lim = strata_fdtd_courant_limit();
  if (o->courant > lim * (1 + 1e-12))
    return strata__fail_arg(ctx, STRATA_EUNSTABLE, "courant", o->courant,
                        "fdtd: Courant number c dt / h = %s exceeds the 2D "
                        "limit 1/sqrt(2) = %s", strata__vs(o->courant, lim).v,
                        strata__vs(o->courant, lim).lim);
  int npml = 0;
  char nm[STRATA__ARGNAME_SIZE];
  for (int f = 0; f < 4; f++) {
    if ((int)o->face[f] < 0 || o->face[f] > STRATA_FDTD_PERIODIC)
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "face", f),
                              (int)o->face[f],
                              "fdtd: face %s has unknown kind %d", faces[f],
                              (int)o->face[f]);
    npml += o->face[f] == STRATA_FDTD_PML;
  }
  if (o->check_every < 0)
    return strata__fail_arg(ctx, STRATA_EINVAL, "check_every",
                            o->check_every, "fdtd: check_every is %d; it "
                            "must be >= 0 (0 = never)", o->check_every);
  if (npml && (o->pml_width < 1 || o->pml_width > 1000))
    return strata__fail_arg(ctx, STRATA_EINVAL, "pml_width", o->pml_width,
                            "fdtd: pml_width is %d; it must be 1..1000",
                            o->pml_width);
  for (int a = 0; a < 2; a++) {
    int p0 = o->face[2 * a] == STRATA_FDTD_PERIODIC,
        p1 = o->face[2 * a + 1] == STRATA_FDTD_PERIODIC;
    if (p0 != p1) {
      int f = p0 ? 2 * a + 1 : 2 * a; /* the one that is not periodic */
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "face", f),
                              (int)o->face[f],
                              "fdtd: periodic on one face of axis %c only; "
                              "both faces of an axis must be periodic",
                              "xy"[a]);
    }
    int m = (o->face[2 * a] == STRATA_FDTD_PML) +
            (o->face[2 * a + 1] == STRATA_FDTD_PML);
    long need = 3 + m * (long)(o->pml_width + 1);
    if (o->n[a] > ((size_t)1 << 30) || (long)o->n[a] < need)
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "n", a),
                          o->n[a],
                          "fdtd: %zu nodes along %c; at least %ld needed%s",
                          o->n[a], "xy"[a], need,
                          m ? " with the PML layers" : "");
  }
  if ((int)o->waveform < 0 || o->waveform > STRATA_FDTD_RICKER)
    return strata__fail_arg(ctx, STRATA_EINVAL, "waveform",
                            (int)o->waveform, "fdtd: unknown waveform %d",
                            (int)o->waveform);
  if (!isfinite(o->amplitude))
    return strata__fail_arg(ctx, STRATA_EINVAL, "amplitude", o->amplitude,
                            "fdtd: the source's amplitude is %g; it must be "
                            "finite", o->amplitude);
  if (!(o->period > 0) || !isfinite(o->period))
    return strata__fail_arg(ctx, STRATA_EINVAL, "period", o->period,
                            "fdtd: the source's period is %g; it must be "
                            "finite and > 0", o->period);
  if (!(o->delay >= 0) || !isfinite(o->delay))
    return strata__fail_arg(ctx, STRATA_EINVAL, "delay", o->delay,
                            "fdtd: the source's delay is %g; it must be "
                            "finite and >= 0", o->delay);
  for (int a = 0; a < 2; a++) {
    if (o->src[a] < 0) o->src[a] = floor(0.5 * (double)o->n[a]);
    if (!isfinite(o->src[a]) || o->src[a] > (double)(o->n[a] - 1))
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "src", a),
                          o->src[a],
                          "fdtd: source %c = %s is outside the nodes 0..%s",
                          "xy"[a], strata__vs(o->src[a], o->n[a] - 1.0).v,
                          strata__vs(o->src[a], o->n[a] - 1.0).lim);
  }
  return STRATA_OK;
}

/* CPML coefficients at position pos (points) along an axis of n nodes:
 * grading m, design reflection R, alpha_max amax, in grid units. */
static void cpml_at(const strata_fdtd_options *o, int a, double pos, int m,
                    double amax, double dt, double *ca, double *cb) {
  long n = (long)o->n[a];
  int W = o->pml_width;
  double smax = (m + 1) * log(1.0 / STRATA__FDTD_PML_R) / (2.0 * W);
  *ca = 0;
  *cb = 1;
  for (int side = 0; side < 2; side++) {
    if (o->face[2 * a + side] != STRATA_FDTD_PML) continue;
    double x = strata__layer_depth(pos, n, W, side) / W;
    if (x <= 0) continue;
    if (x > 1) x = 1;
    double sg = smax * pow(x, m), al = amax * (1 - x);
    double b = exp(-(sg + al) * dt);
    *cb = b;
    *ca = sg > 0 ? sg / (sg + al) * (b - 1) : 0;
  }
}

/* The explicit scheme's engine: faces and sizes; with host set, the CPML
 * profiles and the c2 line computed into host arrays (host[a][0..1] and
 * *line, freed by the caller; 0, or -1 when out of memory), else the
 * profiles' pointers only mark which there are (a footprint). */
static int explicit_desc(const strata_fdtd_options *o, double dt,
                         strata__we_desc *d, double *(*host)[2],
                         double **line) {
  static const double present = 0;
  memset(d, 0, sizeof *d);
  d->dims = 2;
  d->radius = 1;
  d->n[0] = o->n[0];
  d->n[1] = o->n[1];
  d->n[2] = 1;
  d->precision = o->precision;
  d->lap[0] = -2;
  d->lap[1] = 1;
  d->d1[1] = 0.5;
  d->width = o->pml_width;
  d->width_arg = "pml_width";
  d->mur = (o->courant - 1) / (o->courant + 1);
  d->dist = o->dist;
  d->split_periodic = o->face[2] == STRATA_FDTD_PERIODIC;
  for (int q = 0; q < 4; q++) {
    strata_fdtd_face k = o->face[q];
    d->face[q] = k == STRATA_FDTD_PEC        ? STRATA__WF_FREE
                 : k == STRATA_FDTD_MUR      ? STRATA__WF_MUR
                 : k == STRATA_FDTD_PERIODIC ? STRATA__WF_PERIODIC
                                             : STRATA__WF_ZERO;
    d->absorb[q] = k == STRATA_FDTD_PML ? STRATA__ABS_CPML : STRATA__ABS_NONE;
  }
  int oom = 0;
  if (host) oom = !(*line = malloc(o->n[1] * sizeof(double)));
  for (int a = 0; a < 2 && !oom; a++) {
    if (o->face[2 * a] != STRATA_FDTD_PML &&
        o->face[2 * a + 1] != STRATA_FDTD_PML)
      continue;
    if (!host) {
      d->pml_a[a] = d->pml_b[a] = &present;
      continue;
    }
    oom |= !(host[a][0] = malloc(o->n[a] * sizeof(double)));
    oom |= !(host[a][1] = malloc(o->n[a] * sizeof(double)));
    for (size_t i = 0; !oom && i < o->n[a]; i++)
      cpml_at(o, a, (double)i, 2, STRATA__FDTD_PML_ALPHA, dt,
              &host[a][0][i], &host[a][1][i]);
    d->pml_a[a] = host[a][0];
    d->pml_b[a] = host[a][1];
  }
  if (!host || oom) return oom ? -1 : 0;
  for (size_t j = 0; j < o->n[1]; j++) (*line)[j] = o->courant * o->courant;
  d->c2_line = *line;
  return 0;
}

static strata_status create_explicit(strata_fdtd *f) {
  strata__we_desc d;
  double *host[2][2] = {{NULL}};
  double *line = NULL;
  strata_status s;
  if (explicit_desc(&f->o, f->dt, &d, host, &line) == 0)
    s = strata__we_create(f->ctx, &d, &f->e);
  else
    s = strata__fail(f->ctx, STRATA_ENOMEM, "out of host memory");
  free(line);
  for (int a = 0; a < 2; a++) {
    free(host[a][0]);
    free(host[a][1]);
  }
  return s;
}

/* Over several ranks, every rank also steps YEE_EXT rows of each
 * neighbour, whose faces it treats as PEC walls: the wall zeroes Ez on
 * the outermost row, which reaches Hx one row in and Ez two rows in
 * within a step; the owned rows stay exact and the next exchange
 * replaces the neighbours' rows. */
enum { YEE_EXT = 2 };

/* What create_yee allocates, checked as it checks, without allocating. */
static strata_status yee_footprint(strata_context *ctx,
                                   const strata_fdtd_options *o,
                                   strata__footprint *fp) {
  if (!ctx->be->yee_step)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "fdtd: the %s engine has no Yee kernel yet; use "
                        "backend=cpu", ctx->be->name);
  strata_field_desc d = {2, {o->n[0], o->n[1], 1}, 1, o->precision}, ld = d;
  if (o->dist) {
    strata_status s = strata__dist_local_desc(
        o->dist, &d, YEE_EXT, o->face[2] == STRATA_FDTD_PERIODIC, &ld);
    if (s != STRATA_OK) return s;
  }
  for (int q = 0; q < 3; q++) {
    strata_status s = strata__fp_field(ctx, fp, &ld);
    if (s != STRATA_OK) return s;
  }
  int has[2] = {o->face[0] == STRATA_FDTD_PML || o->face[1] == STRATA_FDTD_PML,
                o->face[2] == STRATA_FDTD_PML || o->face[3] == STRATA_FDTD_PML};
  size_t total = (has[0] ? 4 * o->n[0] : 0) + (has[1] ? 4 * o->n[1] : 0);
  if (total) strata__fp_device(fp, total * sizeof(double));
  for (int q = 0; q < 4; q++)
    if (total && has[q == 0 || q == 3 ? 0 : 1]) strata__fp_field(ctx, fp, &ld);
  /* the first step sets Ez's ghosts through the host (yee_refresh) */
  strata__fp_host_peak(fp, (ld.n[0] + 2) * (ld.n[1] + 2) *
                               (size_t)o->precision);
  return STRATA_OK;
}

static strata_status create_yee(strata_fdtd *f) {
  const strata_fdtd_options *o = &f->o;
  strata_context *ctx = f->ctx;
  strata__yee_args *y = &f->y;
  strata_field_desc d = {2, {o->n[0], o->n[1], 1}, 1, o->precision};
  const int per = o->face[2] == STRATA_FDTD_PERIODIC;
  strata_field **mk[3] = {&f->ez, &f->hx, &f->hy};
  strata_status s = STRATA_OK;
  for (int q = 0; q < 3 && s == STRATA_OK; q++)
    s = o->dist ? strata__dist_field_create_ext(o->dist, &d, YEE_EXT, per,
                                                mk[q])
                : strata_field_create(ctx, &d, mk[q]);
  if (s != STRATA_OK) return s;
  /* this rank's rows: local sizes and the global row of local row 0 */
  long yoff = f->ez->win ? f->ez->win->offset : 0;
  long nly = (long)f->ez->d.n[1];
  y->ez = f->ez;
  y->hx = f->hx;
  y->hy = f->hy;
  y->ce = y->ch = o->courant;
  y->mur = (o->courant - 1) / (o->courant + 1);
  for (int q = 0; q < 4; q++)
    y->face[q] = o->face[q] == STRATA_FDTD_MUR        ? STRATA__YF_MUR
                 : o->face[q] == STRATA_FDTD_PERIODIC ? STRATA__YF_PERIODIC
                                                      : STRATA__YF_PEC;
  if (f->ez->win) { /* faces shared with a neighbour: PEC walls (above) */
    strata_boundary bc, lb;
    strata_boundary_uniform(&bc, per ? STRATA_BC_PERIODIC
                                     : STRATA_BC_DIRICHLET, 0);
    strata__dist_local_bc(f->ez, &bc, &lb);
    for (int side = 0; side < 2; side++)
      if (lb.kind[2 + side] == STRATA_BC_NONE)
        y->face[2 + side] = STRATA__YF_PEC;
  }
  int has[2] = {o->face[0] == STRATA_FDTD_PML || o->face[1] == STRATA_FDTD_PML,
                o->face[2] == STRATA_FDTD_PML || o->face[3] == STRATA_FDTD_PML};
  size_t total = (has[0] ? 4 * o->n[0] : 0) + (has[1] ? 4 * o->n[1] : 0);
  if (!total) return STRATA_OK;
  double *host = malloc(total * sizeof(double));
  if (!host) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  size_t at = 0, offs[2] = {0, 0};
  double amax = STRATA__FDTD_PML_ALPHA;
  for (int a = 0; a < 2; a++) {
    if (!has[a]) continue;
    long n = (long)o->n[a];
    offs[a] = at;
    for (long i = 0; i < n; i++) {
      cpml_at(o, a, (double)i, 3, amax, f->dt, &host[at + i],
              &host[at + n + i]);
      cpml_at(o, a, (double)i + 0.5, 3, amax, f->dt, &host[at + 2 * n + i],
              &host[at + 3 * n + i]);
    }
    at += 4 * (size_t)n;
    int W = o->pml_width;
    for (int side = 0; side < 2; side++) {
      if (o->face[2 * a + side] != STRATA_FDTD_PML) continue;
      y->pml_lo[a][side] = side ? n - 1 - W : 0;
      y->pml_hi[a][side] = side ? n : W;
      if (a == 1) { /* to local rows, clipped to this rank's */
        long lo = y->pml_lo[1][side] - yoff, hi = y->pml_hi[1][side] - yoff;
        y->pml_lo[1][side] = lo < 0 ? 0 : lo > nly ? nly : lo;
        y->pml_hi[1][side] = hi < 0 ? 0 : hi > nly ? nly : hi;
      }
    }
  }
  if (has[1] && f->ez->win) { /* the profiles along y: this rank's rows
                               * (no PML on a periodic axis: yoff >= 0) */
    double *loc = malloc(4 * (size_t)nly * sizeof(double));
    if (!loc) {
      free(host);
      return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
    }
    for (int m = 0; m < 4; m++)
      memcpy(loc + m * nly, host + offs[1] + (size_t)m * o->n[1] + yoff,
             (size_t)nly * sizeof(double));
    memcpy(host + offs[1], loc, 4 * (size_t)nly * sizeof(double));
    free(loc);
  }
  s = strata__dev_doubles(ctx, host, total, &f->prof);
  free(host);
  if (s != STRATA_OK) return s;
  for (int a = 0; a < 2; a++) {
    if (!has[a]) continue;
    long n = a == 1 ? nly : (long)o->n[a];
    y->pml_a[a] = f->prof + offs[a];
    y->pml_b[a] = f->prof + offs[a] + n;
    y->pml_ah[a] = f->prof + offs[a] + 2 * n;
    y->pml_bh[a] = f->prof + offs[a] + 3 * n;
  }
  d.n[1] = (size_t)nly;
  for (int q = 0; q < 4 && s == STRATA_OK; q++)
    if (has[q == 0 || q == 3 ? 0 : 1]) /* ezx, ezy, hxy, hyx (local) */
      s = strata_field_create(ctx, &d, &f->psi[q]);
  y->psi_ezx = f->psi[0];
  y->psi_ezy = f->psi[1];
  y->psi_hxy = f->psi[2];
  y->psi_hyx = f->psi[3];
  return s;
}

void strata_fdtd_destroy(strata_fdtd **pf) {
  if (!pf || !*pf) return;
  strata_fdtd *f = *pf;
  strata__we_destroy(&f->e);
  strata_field_destroy(&f->ez);
  strata_field_destroy(&f->hx);
  strata_field_destroy(&f->hy);
  for (int q = 0; q < 4; q++) strata_field_destroy(&f->psi[q]);
  if (f->prof) f->ctx->be->release(f->ctx, f->prof);
  free(f);
  *pf = NULL;
}

/* Everything create checks, and what it will allocate, without
 * allocating: *o receives the options with the source placed. */
static strata_status prepare(strata_context *ctx,
                             const strata_fdtd_options *opt,
                             strata_fdtd_options *o, strata__footprint *fp) {
  if (opt->dist && strata__dist_ctx(opt->dist) != ctx)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "dist", opt->dist,
                              "fdtd: with dist set, ctx must be "
                              "strata_dist_context(dist)");
  *o = *opt;
  strata_status s = validate(ctx, o);
  if (s != STRATA_OK) return s;
  if (o->scheme == STRATA_FDTD_EXPLICIT && !ctx->be->wave_step)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "fdtd: the %s engine has no wave kernel yet; use "
                        "backend=cpu", ctx->be->name);
  memset(fp, 0, sizeof *fp);
  strata__fp_host(fp, sizeof(strata_fdtd));
  if (o->scheme != STRATA_FDTD_EXPLICIT) return yee_footprint(ctx, o, fp);
  strata__we_desc d;
  explicit_desc(o, o->courant, &d, NULL, NULL);
  return strata__we_footprint(ctx, &d, fp);
}

strata_status strata__fdtd_footprint(strata_context *ctx,
                                     const strata_fdtd_options *opt,
                                     strata__footprint *fp) {
  strata_fdtd_options o;
  return prepare(ctx, opt, &o, fp);
}

strata_status strata_fdtd_create(strata_context *ctx,
                                 const strata_fdtd_options *opt,
                                 strata_fdtd **out) {
  if (!ctx) return STRATA_EINVAL;
  if (!out || !opt)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, out ? "o" : "out", NULL,
                              "fdtd: NULL argument");
  *out = NULL;
  strata_fdtd_options o;
  strata__footprint fp;
  strata_status s = prepare(ctx, opt, &o, &fp);
  if (s == STRATA_OK) s = strata__fp_check(ctx, "fdtd", &fp);
  if (opt->dist) s = strata__dist_agree(opt->dist, s);
  if (s != STRATA_OK) return s;
  strata_fdtd *f = calloc(1, sizeof *f);
  if (!f) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  f->ctx = ctx;
  f->o = o;
  f->dt = o.courant;
  f->src[0][0] = lround(o.src[0]);
  f->src[0][1] = lround(o.src[1]);
  f->src[0][2] = 0;
  s = o.scheme == STRATA_FDTD_EXPLICIT ? create_explicit(f) : create_yee(f);
  if (o.dist) s = strata__dist_agree(o.dist, s);
  if (s != STRATA_OK) {
    strata_fdtd_destroy(&f);
    return s;
  }
  f->has_src = o.waveform != STRATA_FDTD_NO_SOURCE;
  const strata_field *u = f->e ? f->e->u : f->ez;
  if (u->win) { /* the source belongs to the rank owning its row */
    const strata__window *w = u->win;
    long j = f->src[0][1];
    if (j < w->own_lo || j >= w->own_lo + w->own_n) f->has_src = 0;
    f->src[0][1] = j - w->offset;
  }
  f->dirty = 1;
  *out = f;
  return STRATA_OK;
}

/* Yee: PEC boundary nodes to 0, periodic ghosts of Ez (host pass, once
 * after the state is written). */
static strata_status yee_refresh(strata_fdtd *f) {
  strata_field *ez = f->ez;
  size_t gx = ez->d.n[0] + 2, gy = ez->d.n[1] + 2, cnt = gx * gy;
  void *raw = malloc(cnt * ez->esize);
  if (!raw) return strata__fail(f->ctx, STRATA_ENOMEM, "out of host memory");
  strata_status s = strata_field_read_ghosted(ez, raw);
  long n0 = (long)ez->d.n[0], n1 = (long)ez->d.n[1];
  for (long j = -1; s == STRATA_OK && j <= n1; j++)
    for (long i = -1; i <= n0; i++) {
      long si = i, sj = j;
      int zero = 0;
      if (f->y.face[0] == STRATA__YF_PERIODIC) {
        if (i == n0) si = 0;
        if (i == -1) si = n0 - 1;
      } else if ((i <= 0 && f->y.face[0] == STRATA__YF_PEC) ||
                 (i >= n0 - 1 && f->y.face[1] == STRATA__YF_PEC) || i < 0 ||
                 i >= n0) {
        zero = 1;
      }
      if (f->y.face[2] == STRATA__YF_PERIODIC) {
        if (j == n1) sj = 0;
        if (j == -1) sj = n1 - 1;
      } else if ((j <= 0 && f->y.face[2] == STRATA__YF_PEC) ||
                 (j >= n1 - 1 && f->y.face[3] == STRATA__YF_PEC) || j < 0 ||
                 j >= n1) {
        zero = 1;
      }
      size_t dst = (size_t)(i + 1) + gx * (size_t)(j + 1);
      size_t src = (size_t)(si + 1) + gx * (size_t)(sj + 1);
      if (ez->esize == 4)
        ((float *)raw)[dst] = zero ? 0.0f : ((float *)raw)[src];
      else
        ((double *)raw)[dst] = zero ? 0.0 : ((double *)raw)[src];
    }
  if (s == STRATA_OK) s = strata_field_write_ghosted(ez, raw);
  free(raw);
  return s;
}

strata_status strata_fdtd_step(strata_fdtd *f, long nsteps) {
  if (!f) return STRATA_EINVAL;
  if (nsteps < 0)
    return strata__fail_arg(f->ctx, STRATA_EINVAL, "nsteps", nsteps,
                            "fdtd: nsteps is %ld; it must be >= 0", nsteps);
  strata_status s = STRATA_OK;
  const int has_src = f->has_src;
  if (f->o.scheme == STRATA_FDTD_EXPLICIT) {
    for (long q = 0; q < nsteps && s == STRATA_OK; q++) {
      double t = (double)f->steps * f->dt;
      double val = f->dt * (current(&f->o, t) - current(&f->o, t - f->dt));
      s = strata__we_step(f->e, has_src, (const long(*)[3])f->src, &val);
      if (s == STRATA_OK) f->steps++;
      if (s == STRATA_OK &&
          strata__check_due(f->steps - 1, f->steps, f->o.check_every))
        s = strata__check_finite(f->e->u, "fdtd", "Ez", "step", f->steps);
    }
    return s;
  }
  if (f->dirty) {
    s = yee_refresh(f);
    if (s == STRATA_OK && f->ez->win) {
      strata_field *x[3] = {f->ez, f->hx, f->hy};
      s = strata__dist_exchange(x, 3, f->o.face[2] == STRATA_FDTD_PERIODIC);
    }
    if (s != STRATA_OK) return s;
    f->dirty = 0;
  }
  for (long q = 0; q < nsteps && s == STRATA_OK; q++) {
    double t = ((double)f->steps + 0.5) * f->dt;
    f->y.nsrc = has_src;
    f->y.src[0][0] = f->src[0][0];
    f->y.src[0][1] = f->src[0][1];
    f->y.src_val[0] = f->dt * current(&f->o, t);
    s = f->ctx->be->yee_step(&f->y);
    if (s == STRATA_OK && f->ez->win) {
      strata_field *x[3] = {f->ez, f->hx, f->hy};
      s = strata__dist_exchange(x, 3, f->o.face[2] == STRATA_FDTD_PERIODIC);
    }
    if (s == STRATA_OK) f->steps++;
    if (s == STRATA_OK &&
        strata__check_due(f->steps - 1, f->steps, f->o.check_every))
      s = strata__check_finite(f->ez, "fdtd", "Ez", "step", f->steps);
  }
  return s;
}

const strata_field *strata__fdtd_peek(const strata_fdtd *f,
                                      strata_fdtd_component c) {
  if (!f) return NULL;
  if (f->o.scheme == STRATA_FDTD_EXPLICIT)
    return c == STRATA_FDTD_EZ        ? f->e->u
           : c == STRATA_FDTD_EZ_PREV ? f->e->up
                                      : NULL;
  return c == STRATA_FDTD_EZ   ? f->ez
         : c == STRATA_FDTD_HX ? f->hx
         : c == STRATA_FDTD_HY ? f->hy
                               : NULL;
}

strata_field *strata_fdtd_field(strata_fdtd *f, strata_fdtd_component c) {
  strata_field *fl = (strata_field *)strata__fdtd_peek(f, c);
  if (!fl) return NULL;
  /* the caller may write the state: re-derive what depends on it */
  if (f->o.scheme == STRATA_FDTD_EXPLICIT)
    f->e->dirty = 1;
  else
    f->dirty = 1;
  return fl;
}

strata_status strata_fdtd_read(const strata_fdtd *f, strata_fdtd_component c,
                               void *host) {
  if (!f) return STRATA_EINVAL;
  const strata_field *fl = strata__fdtd_peek(f, c);
  if (!fl)
    return strata__fail_arg(f->ctx, STRATA_EINVAL, "c", (int)c,
                        "fdtd: the %s scheme has no component %d",
                        f->o.scheme == STRATA_FDTD_EXPLICIT ? "explicit"
                                                            : "Yee TM",
                        (int)c);
  if (f->o.dist) return strata_dist_gather(fl, 0, host);
  return strata_field_read(fl, host);
}

long strata_fdtd_steps(const strata_fdtd *f) { return f ? f->steps : 0; }

/* ---- state (checkpoints) -------------------------------------------------- */

#define FDTD_STATE_TAG 0x3130445444465453ull /* "STFDTD01" */

static int fdtd_state_fields(strata_fdtd *f, strata_field **out, int *dirty) {
  if (f->o.scheme == STRATA_FDTD_EXPLICIT) {
    *dirty = f->e->dirty;
    return strata__we_state_fields(f->e, out);
  }
  int n = 0;
  out[n++] = f->ez;
  out[n++] = f->hx;
  out[n++] = f->hy;
  for (int q = 0; q < 4; q++)
    if (f->psi[q]) out[n++] = f->psi[q];
  *dirty = f->dirty;
  return n;
}

/* the field whose window describes this rank's part */
static const strata_field *fdtd_u(const strata_fdtd *f) {
  return f->o.scheme == STRATA_FDTD_EXPLICIT ? f->e->u : f->ez;
}

#define FDTD_STATE_TAG_PART 0x3130505044465453ull /* "STFDPP01" */

static size_t fdtd_head_bytes(const strata_fdtd *f) {
  return STRATA__STATE_HEAD * 8 + (f->o.dist ? STRATA__STATE_PART * 8 : 0);
}

strata_status strata_fdtd_state_size(const strata_fdtd *f, size_t *bytes) {
  if (!f) return STRATA_EINVAL;
  if (!bytes)
    return strata__fail_arg_p(f->ctx, STRATA_EINVAL, "bytes", bytes,
                              "fdtd: bytes is NULL");
  strata_field *fl[14];
  int dirty, nf = fdtd_state_fields((strata_fdtd *)f, fl, &dirty);
  *bytes = fdtd_head_bytes(f) + strata__state_fields_bytes(fl, nf);
  return STRATA_OK;
}

static strata_status fdtd_save(strata_fdtd *f, void *buf, size_t size) {
  strata_field *fl[14];
  int dirty, nf = fdtd_state_fields(f, fl, &dirty);
  size_t fb = strata__state_fields_bytes(fl, nf), hb = fdtd_head_bytes(f);
  if (!buf || size < hb + fb)
    return strata__fail_arg(f->ctx, STRATA_EINVAL, buf ? "size" : "buf",
                        buf ? size : 0, "fdtd: the state needs %zu "
                        "bytes, the buffer has %zu%s", hb + fb, size,
                        buf ? "" : " (NULL)");
  uint64_t h[STRATA__STATE_HEAD] = {
      f->o.dist ? FDTD_STATE_TAG_PART : FDTD_STATE_TAG,
      (uint64_t)f->o.precision, (uint64_t)nf, (uint64_t)fb,
      (uint64_t)f->steps, (uint64_t)f->o.scheme, 0, (uint64_t)dirty};
  memcpy(buf, h, sizeof h);
  if (f->o.dist) {
    uint64_t part[STRATA__STATE_PART];
    strata__state_part(fdtd_u(f), part);
    memcpy((unsigned char *)buf + sizeof h, part, sizeof part);
  }
  return strata__state_fields_save(fl, nf, (unsigned char *)buf + hb);
}

strata_status strata_fdtd_save_state(const strata_fdtd *cf, void *buf,
                                     size_t size) {
  if (!cf) return STRATA_EINVAL;
  strata_fdtd *f = (strata_fdtd *)cf;
  return strata__state_agree(fdtd_u(f), fdtd_save(f, buf, size), "fdtd",
                             "save");
}

static strata_status fdtd_check(strata_fdtd *f, const void *buf, size_t size,
                                uint64_t *h) {
  strata_field *fl[14];
  int dirty, nf = fdtd_state_fields(f, fl, &dirty);
  size_t fb = strata__state_fields_bytes(fl, nf);
  size_t hb = 0;
  strata_status s =
      strata__state_head(f->ctx, "fdtd", "an FDTD solver", fdtd_u(f), buf,
                         size, FDTD_STATE_TAG, FDTD_STATE_TAG_PART, h, &hb);
  if (s != STRATA_OK) return s;
  if (h[1] != (uint64_t)f->o.precision || h[2] != (uint64_t)nf ||
      h[3] != fb || h[5] != (uint64_t)f->o.scheme)
    return strata__fail(f->ctx, STRATA_EINVAL, "fdtd: the state is of "
                        "another solver setup (precision %u, scheme %u, %u "
                        "fields of %zu bytes; this solver: %u, %u, %d, %zu)",
                        (unsigned)h[1], (unsigned)h[5], (unsigned)h[2],
                        (size_t)h[3], (unsigned)f->o.precision,
                        (unsigned)f->o.scheme, nf, fb);
  if (size != hb + fb || h[7] > 1 || h[4] > (uint64_t)LONG_MAX)
    return strata__fail(f->ctx, STRATA_EFORMAT, "fdtd: the state is "
                        "inconsistent (%zu bytes, %zu expected)", size,
                        hb + fb);
  return STRATA_OK;
}

strata_status strata_fdtd_load_state(strata_fdtd *f, const void *buf,
                                     size_t size) {
  if (!f) return STRATA_EINVAL;
  uint64_t h[STRATA__STATE_HEAD + STRATA__STATE_PART];
  /* with dist: every rank checks its part, then all load or none does */
  strata_status s = strata__state_agree(
      fdtd_u(f), fdtd_check(f, buf, size, h), "fdtd", "load");
  if (s != STRATA_OK) return s;
  strata_field *fl[14];
  int dirty, nf = fdtd_state_fields(f, fl, &dirty);
  s = strata__state_fields_load(
      fl, nf,
      (const unsigned char *)buf + STRATA__STATE_HEAD * 8 +
          (h[0] == FDTD_STATE_TAG_PART ? STRATA__STATE_PART * 8 : 0));
  if (s == STRATA_OK) {
    f->steps = (long)h[4];
    if (f->o.scheme == STRATA_FDTD_EXPLICIT)
      f->e->dirty = (int)h[7];
    else
      f->dirty = (int)h[7];
  }
  return strata__state_agree(fdtd_u(f), s, "fdtd", "load");
}
