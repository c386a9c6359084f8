/* The acoustic wave solver on the CPU engine: a standing mode in a
 * free-surface box against the exact discrete and continuous solutions
 * (measured orders in time and space), the conserved discrete energy, the
 * sponge and CPML absorbing a pulse, a Ricker point source against the 3D
 * Green's function (and the free surface against the image source), and
 * the CFL, dispersion and geometry refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "reference.h"
#include "runner.h"

static const double PI = 3.14159265358979323846;
/* the 8th-order second-derivative weights, written out independently */
static const double C8[5] = {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315,
                             -1.0 / 560};

/* A closed box in grid units (h = 1, v = 1) with free surfaces: options. */
static void box_options(strata_wave_options *o, size_t n, double cfl,
                        strata_precision p) {
  strata_wave_options_init(o);
  o->n[0] = o->n[1] = o->n[2] = n;
  o->h = 1.0;
  o->velocity = 1.0;
  o->dt = cfl;
  o->precision = p;
  o->amplitude = 0; /* initial-value problems: no source */
  for (int f = 0; f < 6; f++) o->face[f] = STRATA_WAVE_FREE;
}

typedef struct {
  double th;
  double scale;
} smode;

static double mode_fn(long i, long j, long k, void *p) {
  const smode *m = p;
  return m->scale * sin(m->th * (double)i) * sin(m->th * (double)j) *
         sin(m->th * (double)k);
}

/* <u, mode> / <mode, mode> over the interior of f */
static double project(const strata_field *f, double th) {
  strata_field_desc d;
  strata_field_get_desc(f, &d);
  double *v = ref_read(f, 0);
  double num = 0, den = 0;
  smode m = {th, 1.0};
  for (size_t k = 0; k < d.n[2]; k++)
    for (size_t j = 0; j < d.n[1]; j++)
      for (size_t i = 0; i < d.n[0]; i++) {
        double w = mode_fn((long)i, (long)j, (long)k, &m);
        num += w * v[i + d.n[0] * (j + d.n[1] * k)];
        den += w * w;
      }
  free(v);
  return num / den;
}

/* max |f - a * mode| */
static double mode_dev(const strata_field *f, double th, double a) {
  strata_field_desc d;
  strata_field_get_desc(f, &d);
  double *v = ref_read(f, 0);
  double e = 0;
  smode m = {th, a};
  for (size_t k = 0; k < d.n[2]; k++)
    for (size_t j = 0; j < d.n[1]; j++)
      for (size_t i = 0; i < d.n[0]; i++) {
        double x = fabs(v[i + d.n[0] * (j + d.n[1] * k)] -
                        mode_fn((long)i, (long)j, (long)k, &m));
        if (!(x <= e)) e = x;
      }
  free(v);
  return e;
}

/* 8th-order 1D symbol W(th) = -(c0 + 2 sum c_k cos(k th)) */
static double symbol8(double th) {
  double w = C8[0];
  for (int k = 1; k <= 4; k++) w += 2 * C8[k] * cos(k * th);
  return -w;
}

TEST(standing_mode_exact) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  const size_t n = 24;
  const double th = PI / (double)(n - 1);
  const double omega = sqrt(3.0) * th; /* v = h = 1 */
  for (int p = 0; p < 2; p++) {
    strata_precision prec = p ? STRATA_F64 : STRATA_F32;
    strata_wave_options o;
    box_options(&o, n, 0.4, prec);
    strata_wave *w = NULL;
    CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
    smode m0 = {th, 1.0}, m1 = {th, cos(omega * o.dt)};
    strata_field *u = strata_wave_field(w, 0), *um = strata_wave_field(w, 1);
    CHECK_OK(strata_field_fill_fn(u, mode_fn, &m0), ctx);
    CHECK_OK(strata_field_fill_fn(um, mode_fn, &m1), ctx);
    const long N = 300;
    CHECK_OK(strata_wave_step(w, N), ctx);
    /* the exact discrete solution: the mode is an eigenvector of the
     * stencil with odd images, eigenvalue 3 W(th) */
    double c2 = o.dt * o.dt, lam = 3 * symbol8(th);
    double am1 = cos(omega * o.dt), a0 = 1;
    for (long q = 0; q < N; q++) {
      double a1 = (2 - c2 * lam) * a0 - am1;
      am1 = a0;
      a0 = a1;
    }
    double ed = mode_dev(strata_wave_field(w, 0), th, a0);
    double ec = mode_dev(strata_wave_field(w, 0), th, cos(omega * N * o.dt));
    double tol = p ? 1e-11 : 2e-4;
    printf("  %s, %ld steps: vs exact discrete %.2e (bound %.0e), vs "
           "continuous %.2e\n", p ? "fp64" : "fp32", N, ed, tol, ec);
    CHECK(ed <= tol);
    strata_wave_destroy(&w);
  }
  strata_context_destroy(&ctx);
  return 0;
}

TEST(standing_mode_orders) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  /* time: fixed grid, dt halved, error at a fixed time against the
   * continuous solution (the 8th-order space error is ~1e-11 here) */
  {
    const size_t n = 24;
    const double th = PI / (double)(n - 1), omega = sqrt(3.0) * th;
    const double T = 40.0;
    double e[3];
    for (int q = 0; q < 3; q++) {
      strata_wave_options o;
      box_options(&o, n, 0.4 / (1 << q), STRATA_F64);
      strata_wave *w = NULL;
      CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
      smode m0 = {th, 1.0}, m1 = {th, cos(omega * o.dt)};
      CHECK_OK(strata_field_fill_fn(strata_wave_field(w, 0), mode_fn, &m0),
               ctx);
      CHECK_OK(strata_field_fill_fn(strata_wave_field(w, 1), mode_fn, &m1),
               ctx);
      long N = lround(T / o.dt);
      CHECK_OK(strata_wave_step(w, N), ctx);
      e[q] = mode_dev(strata_wave_field(w, 0), th, cos(omega * N * o.dt));
      strata_wave_destroy(&w);
    }
    double p1 = log2(e[0] / e[1]), p2 = log2(e[1] / e[2]);
    printf("  time: errors %.3e %.3e %.3e, measured orders %.2f %.2f\n",
           e[0], e[1], e[2], p1, p2);
    CHECK(p1 > 1.9 && p1 < 2.1);
    CHECK(p2 > 1.9 && p2 < 2.1);
  }
  /* space: the mode's eigenvalue measured from the run (three consecutive
   * projections give cos(Omega) = (a[N+1] + a[N-1]) / (2 a[N]), and
   * leapfrog's exact dispersion relation turns it into the spatial
   * operator's eigenvalue, free of time error), against 3 (k h)^2 */
  {
    const size_t ns[3] = {8, 12, 16};
    double e[3], hh[3];
    for (int q = 0; q < 3; q++) {
      const double th = PI / (double)(ns[q] - 1);
      strata_wave_options o;
      box_options(&o, ns[q], 0.4, STRATA_F64);
      strata_wave *w = NULL;
      CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
      smode m0 = {th, 1.0};
      CHECK_OK(strata_wave_set_state(w, mode_fn, NULL, &m0), ctx);
      CHECK_OK(strata_wave_step(w, 7), ctx);
      double am = project(strata_wave_field(w, 1), th);
      double a0 = project(strata_wave_field(w, 0), th);
      CHECK_OK(strata_wave_step(w, 1), ctx);
      double ap = project(strata_wave_field(w, 0), th);
      double cosO = (ap + am) / (2 * a0);
      double lam = (2 - 2 * cosO) / (o.dt * o.dt);
      e[q] = fabs(lam - 3 * th * th) / (3 * th * th);
      hh[q] = th;
      strata_wave_destroy(&w);
    }
    double p1 = log(e[0] / e[1]) / log(hh[0] / hh[1]);
    double p2 = log(e[1] / e[2]) / log(hh[1] / hh[2]);
    printf("  space (order-8 stencil), k h = %.3f %.3f %.3f: eigenvalue "
           "errors %.3e %.3e %.3e, measured orders %.2f %.2f\n", hh[0],
           hh[1], hh[2], e[0], e[1], e[2], p1, p2);
    CHECK(p1 > 7.5 && p1 < 8.5);
    CHECK(p2 > 7.5 && p2 < 8.5);
  }
  strata_context_destroy(&ctx);
  return 0;
}

/* The discrete energy of leapfrog, conserved exactly without damping for
 * a symmetric L:  E = sum (u1 - u0)^2 / c2 - u1 (L u0), over the nodes that
 * are not held by free surfaces; c2 = (v dt / h)^2 per node; inner > 0
 * restricts the sum to nodes at least inner points from every face. */
static double energy(strata_wave *w, const double *c2, long inner) {
  strata_field *f1 = strata_wave_field(w, 0), *f0 = strata_wave_field(w, 1);
  strata_field_desc d;
  strata_field_get_desc(f1, &d);
  double *u1 = ref_read(f1, 1), *u0 = ref_read(f0, 1);
  long g = d.ghost, n[3] = {(long)d.n[0], (long)d.n[1], (long)d.n[2]};
  long gx = n[0] + 2 * g, gy = n[1] + 2 * g;
  long lo = inner > 0 ? inner : 1;
  double E = 0;
  for (long k = lo; k < n[2] - lo; k++)
    for (long j = lo; j < n[1] - lo; j++)
      for (long i = lo; i < n[0] - lo; i++) {
        long p = (i + g) + gx * ((j + g) + gy * (k + g));
        double L = 3 * C8[0] * u0[p];
        for (int q = 1; q <= 4; q++)
          L += C8[q] * (u0[p - q] + u0[p + q] + u0[p - q * gx] +
                        u0[p + q * gx] + u0[p - q * gx * gy] +
                        u0[p + q * gx * gy]);
        double dv = u1[p] - u0[p];
        E += dv * dv / c2[i + n[0] * (j + n[1] * k)] - u1[p] * L;
      }
  free(u1);
  free(u0);
  return E;
}

static double bump(long i, long j, long k, void *p) {
  const double *c = p; /* centre x, y, z, width, scale */
  double r2 = (i - c[0]) * (i - c[0]) + (j - c[1]) * (j - c[1]) +
              (k - c[2]) * (k - c[2]);
  return c[4] * exp(-r2 / (c[3] * c[3]));
}

TEST(energy_conserved) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  const size_t n = 26;
  for (int variant = 0; variant < 3; variant++) {
    strata_precision prec = variant == 2 ? STRATA_F32 : STRATA_F64;
    strata_wave_options o;
    box_options(&o, n, 0.3, prec);
    double tops[2] = {0.0, 11.5}, vel[2] = {1.0, 1.4};
    if (variant == 0) { /* layered model */
      o.nlayers = 2;
      o.layer_top = tops;
      o.layer_velocity = vel;
    } else {
      o.velocity = 1.4; /* the field model's maximum */
    }
    strata_wave *w = NULL;
    CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
    double *c2 = malloc(n * n * n * sizeof(double));
    double *v = malloc(n * n * n * sizeof(double));
    CHECK(c2 && v);
    for (size_t q = 0; q < n * n * n; q++) {
      size_t k = q / (n * n);
      double vv = variant == 0 ? (k * 1.0 >= 11.5 ? 1.4 : 1.0)
                               : 1.0 + 0.4 * (double)((q * 2654435761u) %
                                                      1000) / 1000.0;
      v[q] = vv;
      c2[q] = vv * vv * o.dt * o.dt;
    }
    if (variant) CHECK_OK(strata_wave_set_velocity(w, v), ctx);
    double c0[5] = {9.3, 12.1, 10.7, 3.0, 1.0}, c1[5] = {9.3, 12.1, 10.7,
                                                         3.0, 0.97};
    CHECK_OK(strata_wave_set_state(w, bump, NULL, c0), ctx);
    /* a different previous state: nonzero initial velocity */
    CHECK_OK(strata_field_fill_fn(strata_wave_field(w, 1), bump, c1), ctx);
    CHECK_OK(strata_wave_step(w, 1), ctx);
    double E0 = energy(w, c2, 0), drift = 0;
    for (int q = 0; q < 8; q++) {
      CHECK_OK(strata_wave_step(w, 50), ctx);
      double E = energy(w, c2, 0);
      drift = fmax(drift, fabs(E - E0) / E0);
    }
    double tol = prec == STRATA_F64 ? 1e-11 : 1e-4;
    printf("  %s, %s: E0 = %.6e, largest relative drift over 400 steps "
           "%.2e (bound %.0e)\n", variant == 0 ? "layered model" :
           "random velocity field", prec == STRATA_F64 ? "fp64" : "fp32", E0,
           drift, tol);
    CHECK(E0 > 0);
    CHECK(drift <= tol);
    free(c2);
    free(v);
    strata_wave_destroy(&w);
  }
  strata_context_destroy(&ctx);
  return 0;
}

/* A Gaussian pulse in the middle of a box of absorbing faces of kind k:
 * returns the energy in the inner region after the pulse has left, over
 * the initial energy; *refl receives the same at t = 40, when the direct
 * pulse (a thin shell in 3D) has left the inner cube and only what the
 * layers reflected is inside. */
static double absorbed(strata_context *ctx, strata_wave_face k, int width,
                       double *refl) {
  const size_t n = 64;
  strata_wave_options o;
  box_options(&o, n, 0.4, STRATA_F64);
  for (int f = 0; f < 6; f++) o.face[f] = k;
  o.absorb_width = width;
  /* the pulse's dominant frequency (v = 1, width 2.5 points): the CPML's
   * frequency shift alpha_max = pi f0 is scaled by it */
  o.f0 = 0.06;
  strata_wave *w = NULL;
  if (strata_wave_create(ctx, &o, &w) != STRATA_OK) return NAN;
  double c[5] = {31.5, 31.5, 31.5, 2.5, 1.0};
  strata_wave_set_state(w, bump, NULL, c);
  double *c2 = malloc(n * n * n * sizeof(double));
  for (size_t q = 0; q < n * n * n; q++) c2[q] = o.dt * o.dt;
  strata_wave_step(w, 1);
  long inner = k == STRATA_WAVE_FREE ? 0 : width;
  double E0 = energy(w, c2, inner);
  strata_wave_step(w, 99); /* t = 40 */
  *refl = energy(w, c2, inner) / E0;
  /* t = 80: the pulse crossed the layer and what came back has passed
   * the inner region too */
  strata_wave_step(w, 100);
  double E = energy(w, c2, inner);
  free(c2);
  strata_wave_destroy(&w);
  return E / E0;
}

TEST(absorbing_boundaries) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  double rf, rs, rc;
  double free_ = absorbed(ctx, STRATA_WAVE_FREE, 16, &rf);
  double sponge = absorbed(ctx, STRATA_WAVE_SPONGE, 16, &rs);
  double cpml = absorbed(ctx, STRATA_WAVE_CPML, 16, &rc);
  printf("  energy in the inner 32^3 / initial (16-point layers): at t = 40 "
         "(reflected): free surfaces %.3f, sponge %.2e, CPML %.2e; at t = 80 "
         "(left over): %.3f, %.2e, %.2e\n", rf, rs, rc, free_, sponge, cpml);
  CHECK(free_ > 0.9 && rf > 0.9); /* the control: a closed box keeps it */
  CHECK(rs < 1e-3 && sponge < 1e-3);
  CHECK(rc < 1e-4 && cpml < 1e-6);
  CHECK(rc < rs && cpml < sponge);
  strata_context_destroy(&ctx);
  return 0;
}

/* Trace r of a run against A ricker(t - delay - r/v) / (4 pi v^2 r) summed
 * over sources (sign, distance); relative L2 error over the trace. */
static double green_error(const double *tr, size_t ns, double dt, double f0,
                          double delay, double v, int nimg,
                          const double *sign, const double *dist,
                          double *peak) {
  double num = 0, den = 0;
  *peak = 0;
  for (size_t s = 0; s < ns; s++) {
    double t = (double)s * dt, want = 0;
    for (int q = 0; q < nimg; q++)
      want += sign[q] * strata_wave_ricker(f0, t - delay - dist[q] / v) /
              (4 * PI * v * v * dist[q]);
    num += (tr[s] - want) * (tr[s] - want);
    den += want * want;
    if (fabs(want) > *peak) *peak = fabs(want);
  }
  return sqrt(num / den);
}

TEST(ricker_source_greens_function) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  for (int p = 0; p < 2; p++) {
    strata_wave_options o;
    strata_wave_options_init(&o);
    o.n[0] = o.n[1] = o.n[2] = 72;
    o.h = 16;
    o.velocity = 2000;
    o.f0 = 10;
    o.absorb_width = 16;
    o.precision = p ? STRATA_F64 : STRATA_F32;
    const double h = o.h, sc = 36 * h;
    double rec[9] = {sc + 12 * h, sc, sc,          /* 12 points along x */
                     sc + 7 * h, sc + 7 * h, sc,   /* 9.9 points diagonal */
                     sc, sc, sc - 16 * h};         /* 16 points up in z */
    o.nreceivers = 3;
    o.receivers = rec;
    o.src[0] = o.src[1] = o.src[2] = sc;
    strata_wave *w = NULL;
    CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
    strata_wave_info info;
    CHECK_OK(strata_wave_get_info(w, &info), ctx);
    long N = lround(0.42 / info.dt);
    CHECK_OK(strata_wave_step(w, N), ctx);
    size_t ns = 0;
    CHECK_OK(strata_wave_traces(w, NULL, 0, &ns), ctx);
    CHECK(ns == (size_t)N + 1);
    double *tr = malloc(3 * ns * sizeof(double));
    CHECK_STATUS(strata_wave_traces(w, tr, 3 * ns - 1, &ns), STRATA_EINVAL,
                 ctx);
    CHECK_OK(strata_wave_traces(w, tr, 3 * ns, &ns), ctx);
    const double dist[3] = {12 * h, sqrt(98.0) * h, 16 * h}, one = 1;
    for (int r = 0; r < 3; r++) {
      double peak, e = green_error(tr + r * ns, ns, info.dt, o.f0,
                                   1.5 / o.f0, o.velocity, 1, &one, &dist[r],
                                   &peak);
      printf("  %s receiver %d at %.1f points: relative L2 error %.3f "
             "(peak %.3e)\n", p ? "fp64" : "fp32", r, dist[r] / h, e, peak);
      CHECK(e < 0.03);
    }
    printf("  (%ld steps, dt %.3e s, CFL %.3f of %.4f, %.1f points per "
           "wavelength at 2.5 f0)\n", N, info.dt, info.cfl, info.cfl_limit,
           info.ppw);
    free(tr);
    strata_wave_destroy(&w);
  }
  strata_context_destroy(&ctx);
  return 0;
}

TEST(free_surface_image_source) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_wave_options o;
  strata_wave_options_init(&o);
  o.n[0] = o.n[1] = 72;
  o.n[2] = 44;
  o.h = 16;
  o.velocity = 2000;
  o.f0 = 10;
  o.absorb_width = 16;
  o.precision = STRATA_F64;
  o.face[STRATA_FACE_ZLO] = STRATA_WAVE_FREE;
  const double h = o.h, sc = 36 * h, zs = 6 * h;
  double rec[6] = {sc + 10 * h, sc, 3 * h, /* near the surface */
                   sc + 5 * h, sc, 0.0};   /* on it */
  o.nreceivers = 2;
  o.receivers = rec;
  o.src[0] = o.src[1] = sc;
  o.src[2] = zs;
  strata_wave *w = NULL;
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  strata_wave_info info;
  CHECK_OK(strata_wave_get_info(w, &info), ctx);
  long N = lround(0.42 / info.dt);
  CHECK_OK(strata_wave_step(w, N), ctx);
  size_t ns = 0;
  CHECK_OK(strata_wave_traces(w, NULL, 0, &ns), ctx);
  double *tr = malloc(2 * ns * sizeof(double));
  CHECK_OK(strata_wave_traces(w, tr, 2 * ns, &ns), ctx);
  double dist[2] = {sqrt(100.0 + 9.0) * h, sqrt(100.0 + 81.0) * h};
  double sign[2] = {1, -1}, peak;
  double e = green_error(tr, ns, info.dt, o.f0, 1.5 / o.f0, o.velocity, 2,
                         sign, dist, &peak);
  double on = 0;
  for (size_t s = 0; s < ns; s++) on = fmax(on, fabs(tr[ns + s]));
  printf("  source 6 points deep, receiver 3 deep: error against source "
         "minus image %.3f (peak %.3e); largest |p| on the surface %.1e\n",
         e, peak, on);
  CHECK(e < 0.05);
  CHECK(on == 0.0);
  free(tr);
  strata_wave_destroy(&w);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(refusals) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_wave_options o;
  strata_wave *w = (strata_wave *)&o;
  double lim = strata_wave_cfl_limit(3, 8);
  /* independently: 2 / sqrt(3 W(pi)) */
  double want = 2 / sqrt(3 * symbol8(PI));
  printf("  CFL limit, order 8, 3D: %.6f (independent %.6f); order 2: %.6f\n",
         lim, want, strata_wave_cfl_limit(3, 2));
  CHECK(fabs(lim - want) < 1e-12);
  CHECK(fabs(strata_wave_cfl_limit(3, 2) - 1 / sqrt(3.0)) < 1e-12);
  CHECK(strata_wave_cfl_limit(3, 5) == 0);

  strata_wave_options_init(&o);
  o.n[0] = o.n[1] = o.n[2] = 48;
  o.absorb_width = 10;
  o.dt = 1.01 * lim * o.h / o.velocity;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EUNSTABLE, ctx);
  CHECK(w == NULL);
  CHECK(strstr(strata_context_error(ctx), "exceeds the limit 0.452856 ") != NULL);
  printf("  refused: %s\n", strata_context_error(ctx));
  /* a dt a hair above the limit: the message shows the two apart */
  o.dt = (1 + 1e-9) * lim * o.h / o.velocity;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EUNSTABLE, ctx);
  CHECK(strstr(strata_context_error(ctx),
               "= 0.452855524 exceeds the limit 0.452855523 ") != NULL);
  CHECK(strstr(strata_context_error(ctx), "reduce dt below 0.002264277617 s"));
  o.dt = 0.99 * lim * o.h / o.velocity;
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  strata_wave_destroy(&w);
  o.dt = 0;

  o.src[0] = 470.0000001; /* a hair beyond the grid's 47 * 10 m */
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "source x = 470.0000001 m is "
                                          "outside the grid [0, 470] m"));
  o.src[0] = -1;

  o.f0 = 20.0000001; /* 3.99999998 points per wavelength */
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EUNSTABLE, ctx);
  CHECK(strstr(strata_context_error(ctx), "3.99999998 points per wavelength"));
  CHECK(strstr(strata_context_error(ctx), "below the minimum 4; use h <= "
                                          "9.99999995 m or f0 <= 20 Hz"));

  o.f0 = 25; /* 2000 / (62.5 * 10) = 3.2 points per wavelength */
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EUNSTABLE, ctx);
  CHECK(strstr(strata_context_error(ctx), "3.2 points") != NULL);
  printf("  refused: %s\n", strata_context_error(ctx));
  o.amplitude = 0; /* no source: nothing to resolve */
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  strata_wave_destroy(&w);
  strata_wave_options_init(&o);
  o.n[0] = o.n[1] = o.n[2] = 48;
  o.absorb_width = 10;

  /* geometry and models */
  o.absorb_width = 20; /* 2 * (20 + 4) + 1 > 48 */
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EINVAL, ctx);
  o.absorb_width = 10;
  o.face[0] = STRATA_WAVE_PERIODIC;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EINVAL, ctx);
  o.face[0] = STRATA_WAVE_CPML;
  o.order = 10;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EINVAL, ctx);
  o.order = 8;
  double rec[3] = {10, 10, 480};
  o.nreceivers = 1;
  o.receivers = rec;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EINVAL, ctx);
  o.nreceivers = 0;
  o.src[2] = 1000;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EINVAL, ctx);
  o.src[2] = -1;
  double tops[2] = {0, 200}, bad[2] = {200, 100}, vel[2] = {1500, 4000};
  o.nlayers = 2;
  o.layer_top = bad;
  o.layer_velocity = vel;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EINVAL, ctx);
  o.layer_top = tops;
  /* layered: v_max 4000 sets the CFL, v_min 1500 the dispersion */
  o.dt = 0.0012;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EUNSTABLE, ctx);
  o.dt = 0.001;
  o.f0 = 15; /* 1500 / (37.5 * 10) = 4.0: just enough */
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  strata_wave_info info;
  CHECK_OK(strata_wave_get_info(w, &info), ctx);
  CHECK(info.vmin == 1500 && info.vmax == 4000);
  /* a field model that violates the CFL is refused and the old model
   * stays */
  size_t cnt = 48 * 48 * 48;
  double *v = malloc(cnt * sizeof(double));
  for (size_t q = 0; q < cnt; q++) v[q] = 4600;
  CHECK_STATUS(strata_wave_set_velocity(w, v), STRATA_EUNSTABLE, ctx);
  CHECK_OK(strata_wave_get_info(w, &info), ctx);
  CHECK(info.vmax == 4000);
  v[7] = -1;
  CHECK_STATUS(strata_wave_set_velocity(w, v), STRATA_EINVAL, ctx);
  for (size_t q = 0; q < cnt; q++) v[q] = 3000;
  CHECK_OK(strata_wave_set_velocity(w, v), ctx);
  CHECK_OK(strata_wave_get_info(w, &info), ctx);
  CHECK(info.vmax == 3000 && info.vmin == 3000);
  CHECK_OK(strata_wave_step(w, 3), ctx);
  CHECK_STATUS(strata_wave_step(w, -2), STRATA_EINVAL, ctx);
  free(v);
  strata_wave_destroy(&w);
  strata_wave_destroy(&w);
  strata_context_destroy(&ctx);
  return 0;
}

/* One bad option at a time: create refuses it and names it, with its
 * value, beside the message (what a program uses to point at its input). */
static const struct {
  const char *arg, *value;
  strata_status status;
} wave_bad[] = {
    {"min_ppw", "0", STRATA_EINVAL},
    {"dt", "-1", STRATA_EINVAL},
    {"dt", "0.01", STRATA_EUNSTABLE},
    {"f0", "25", STRATA_EUNSTABLE},
    {"order", "10", STRATA_EINVAL},
    {"h", "0", STRATA_EINVAL},
    {"n[0]", "48", STRATA_EINVAL},
    {"absorb_width", "0", STRATA_EINVAL},
    {"absorb_reflection", "2", STRATA_EINVAL},
    {"face[2]", "0", STRATA_EINVAL},
    {"velocity", "-5", STRATA_EINVAL},
    {"src[1]", "1000", STRATA_EINVAL},
    {"receivers[2]", "480", STRATA_EINVAL},
    {"record_every", "0", STRATA_EINVAL},
    {"delay", "-1", STRATA_EINVAL},
    {"layer_top[1]", "-5", STRATA_EINVAL},
    {"layer_velocity[1]", "0", STRATA_EINVAL},
    {"amplitude", "inf", STRATA_EINVAL},
    {"precision", "3", STRATA_EINVAL},
    {"n[2]", "0", STRATA_EINVAL},
    {"nreceivers", "-1", STRATA_EINVAL},
    {"dt", "0.0012", STRATA_EUNSTABLE}, /* layered: v_max 4000 */
};

static void wave_make_bad(strata_wave_options *o, int k) {
  static const double rec[3] = {10, 10, 480}, tops[2] = {0, -5},
                      tops_ok[2] = {0, 200}, vel_bad[2] = {1500, 0},
                      vel[2] = {1500, 4000};
  strata_wave_options_init(o);
  o->n[0] = o->n[1] = o->n[2] = 48;
  o->absorb_width = 10;
  switch (k) {
  case 0: o->min_ppw = 0; break;
  case 1: o->dt = -1; break;
  case 2: o->dt = 0.01; break;
  case 3: o->f0 = 25; break;
  case 4: o->order = 10; break;
  case 5: o->h = 0; break;
  case 6: o->absorb_width = 20; break;
  case 7: o->absorb_width = 0; break;
  case 8: o->absorb_reflection = 2; break;
  case 9: o->face[3] = STRATA_WAVE_PERIODIC; break;
  case 10: o->velocity = -5; break;
  case 11: o->src[1] = 1000; break;
  case 12: o->nreceivers = 1; o->receivers = rec; break;
  case 13: o->record_every = 0; break;
  case 14: o->delay = -1; break;
  case 15:
    o->nlayers = 2, o->layer_top = tops, o->layer_velocity = vel;
    break;
  case 16:
    o->nlayers = 2, o->layer_top = tops_ok, o->layer_velocity = vel_bad;
    break;
  case 17: o->amplitude = INFINITY; break;
  case 18: o->precision = (strata_precision)3; break;
  case 19: o->n[2] = 0; break;
  case 20: o->nreceivers = -1; break;
  case 21:
    o->nlayers = 2, o->layer_top = tops_ok, o->layer_velocity = vel;
    o->dt = 0.0012;
    break;
  }
}

TEST(refusals_name_the_option) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  CHECK_ARG(ctx, "", "");
  strata_wave_options o;
  strata_wave *w = NULL;
  for (int k = 0; k < (int)(sizeof wave_bad / sizeof wave_bad[0]); k++) {
    wave_make_bad(&o, k);
    strata_status s = strata_wave_create(ctx, &o, &w);
    CHECKF(s == wave_bad[k].status && w == NULL, "case %d: %s (%s)", k,
           strata_status_name(s), strata_context_error(ctx));
    CHECK_ARG(ctx, wave_bad[k].arg, wave_bad[k].value);
  }
  /* the functions after create name their arguments too */
  wave_make_bad(&o, -1);
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  CHECK_STATUS(strata_wave_step(w, -2), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "nsteps", "-2");
  size_t cnt = 48 * 48 * 48;
  double *v = malloc(cnt * sizeof(double));
  CHECK(v);
  for (size_t q = 0; q < cnt; q++) v[q] = 2000;
  v[7] = -1;
  CHECK_STATUS(strata_wave_set_velocity(w, v), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "v[7]", "-1");
  for (size_t q = 0; q < cnt; q++) v[q] = 4600;
  CHECK_STATUS(strata_wave_set_velocity(w, v), STRATA_EUNSTABLE, ctx);
  CHECK_ARG(ctx, "v", "4600");
  free(v);
  /* a failure about no one argument clears the name: a state that is not
   * a wave state */
  size_t bytes = 0;
  CHECK_OK(strata_wave_state_size(w, &bytes), ctx);
  unsigned char *junk = calloc(1, bytes);
  CHECK(junk);
  CHECK_STATUS(strata_wave_load_state(w, junk, bytes), STRATA_EFORMAT, ctx);
  CHECK(strata_context_error(ctx)[0] != '\0');
  CHECK_ARG(ctx, "", "");
  free(junk);
  strata_wave_destroy(&w);
  strata_context_destroy(&ctx);
  return 0;
}

/* a wave_pair entry that takes no case */
static strata_status fake_pair(const strata__wave_args *a, const double *v2,
                               strata_field *o1, strata_field *o2, int *used) {
  (void)a;
  (void)v2;
  (void)o1;
  (void)o2;
  *used = 0;
  return STRATA_OK;
}

TEST(backend_without_wave_kernel) {
  /* the solver refuses, with the reason, on a backend that lacks the
   * kernels (the CUDA engine until its kernels land) */
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata__backend fake = *ctx->be;
  const strata__backend *orig = ctx->be;
  fake.name = "test";
  fake.wave_step = NULL;
  ctx->be = &fake;
  strata_wave_options o;
  strata_wave_options_init(&o);
  o.n[0] = o.n[1] = o.n[2] = 48;
  o.absorb_width = 10;
  strata_wave *w = NULL;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_ENOTSUP, ctx);
  printf("  refused: %s\n", strata_context_error(ctx));
  CHECK(strstr(strata_context_error(ctx), "no wave kernel") != NULL);
  fake.wave_step = orig->wave_step;
  fake.sample = NULL;
  double rec[3] = {100, 100, 100};
  o.nreceivers = 1;
  o.receivers = rec;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_ENOTSUP, ctx);
  CHECK(w == NULL);
  ctx->be = orig;

  /* two steps in one sweep (the tuning switch wave_pair=1, set here on the
   * context as strata_context_options.tuning would) where they cannot run:
   * a clear refusal, nothing stepped; without the switch, single steps */
  static char pair_on[] = "wave_pair=1";
  o.nreceivers = 0;
  for (int f = 0; f < 6; f++) o.face[f] = STRATA_WAVE_SPONGE;
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  ctx->tuning = pair_on;
  CHECK_STATUS(strata_wave_step(w, 2), STRATA_ENOTSUP, ctx);
  printf("  refused: %s\n", strata_context_error(ctx));
  CHECK(strstr(strata_context_error(ctx), "no fused wave kernel") != NULL);
  strata_wave_info info;
  CHECK_OK(strata_wave_get_info(w, &info), ctx);
  CHECK(info.steps == 0);
  ctx->tuning = NULL;
  CHECK_OK(strata_wave_step(w, 2), ctx);
  strata_wave_destroy(&w);
  /* a backend whose fused kernel does not take the case */
  fake = *orig;
  fake.wave_pair = fake_pair;
  ctx->be = &fake;
  o.face[STRATA_FACE_ZLO] = STRATA_WAVE_FREE;
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  ctx->tuning = pair_on;
  CHECK_STATUS(strata_wave_step(w, 4), STRATA_ENOTSUP, ctx);
  ctx->tuning = NULL;
  printf("  refused: %s\n", strata_context_error(ctx));
  CHECK(strstr(strata_context_error(ctx), "no CPML, free") != NULL);
  strata_wave_destroy(&w);
  ctx->be = orig;
  strata_context_destroy(&ctx);
  return 0;
}

/* Checkpoints: save the state at step 13, run on to 31 steps; a fresh
 * solver loading the state and running the 18 steps ends bit for bit
 * equal, traces included; a mismatched or damaged state is refused. */
static strata_status ck_wave(strata_context *ctx, strata_wave **w) {
  strata_wave_options o;
  strata_wave_options_init(&o);
  o.n[0] = 26;
  o.n[1] = 22;
  o.n[2] = 20;
  o.absorb_width = 6;
  o.face[STRATA_FACE_ZLO] = STRATA_WAVE_FREE;
  o.face[STRATA_FACE_XHI] = STRATA_WAVE_SPONGE;
  o.src[0] = 120;
  o.src[1] = 100;
  o.src[2] = 60;
  o.f0 = 12;
  double rec[9] = {40, 100, 30, 120, 100, 30, 200, 100, 30};
  o.nreceivers = 3;
  o.receivers = rec;
  o.record_every = 2;
  return strata_wave_create(ctx, &o, w);
}

TEST(checkpoint_bit_for_bit) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_wave *a = NULL, *b = NULL;
  CHECK_OK(ck_wave(ctx, &a), ctx);
  CHECK_OK(strata_wave_step(a, 13), ctx);
  size_t bytes = 0;
  CHECK_OK(strata_wave_state_size(a, &bytes), ctx);
  unsigned char *st = malloc(bytes);
  CHECK(st);
  CHECK(strata_wave_save_state(a, st, bytes - 1) == STRATA_EINVAL);
  CHECK_OK(strata_wave_save_state(a, st, bytes), ctx);
  CHECK_OK(strata_wave_step(a, 18), ctx);
  CHECK_OK(ck_wave(ctx, &b), ctx);
  CHECK_OK(strata_wave_step(b, 3), ctx); /* overwritten by the load */
  CHECK(strata_wave_load_state(b, st, bytes - 8) == STRATA_EFORMAT);
  st[0] ^= 1;
  CHECK(strata_wave_load_state(b, st, bytes) == STRATA_EFORMAT);
  st[0] ^= 1;
  /* a state of the first format (its high CPML slabs at another origin) is
   * refused by name */
  st[7] = '1';
  CHECK(strata_wave_load_state(b, st, bytes) == STRATA_EFORMAT);
  printf("  refused: %s\n", strata_context_error(ctx));
  CHECK(strstr(strata_context_error(ctx), "format 01; this build reads "
                                          "format 02") != NULL);
  st[7] = '2';
  /* psi of the x low CPML slab (the first after u and up: ghosted images
   * of 34 x 30 x 28 floats) at x = -4, a ghost outside its layer [0, 10),
   * must be 0 (its field: 14 + 8 points along x, 30, 28) */
  {
    const size_t at = 64 + 2 * (size_t)34 * 30 * 28 * 4 +
                      ((size_t)(4 * 30 + 4) * 22) * 4;
    float one = 1, was;
    CHECK(at + 4 <= bytes);
    memcpy(&was, st + at, 4);
    CHECK(was == 0);
    memcpy(st + at, &one, 4);
    CHECK(strata_wave_load_state(b, st, bytes) == STRATA_EFORMAT);
    printf("  refused: %s\n", strata_context_error(ctx));
    CHECK(strstr(strata_context_error(ctx), "psi of the x low face is 1 at "
                                            "index -4") != NULL);
    memcpy(st + at, &was, 4);
  }
  CHECK_OK(strata_wave_load_state(b, st, bytes), ctx);
  strata_wave_info ia, ib;
  CHECK_OK(strata_wave_get_info(b, &ib), ctx);
  CHECK(ib.steps == 13);
  CHECK_OK(strata_wave_step(b, 18), ctx);
  CHECK_OK(strata_wave_get_info(a, &ia), ctx);
  CHECK_OK(strata_wave_get_info(b, &ib), ctx);
  CHECK(ia.steps == 31 && ib.steps == 31 && ia.nsamples == ib.nsamples &&
        ia.nsamples == 16);
  size_t np = 26 * 22 * 20;
  float *ua = malloc(np * 4), *ub = malloc(np * 4);
  CHECK(ua && ub);
  for (int prev = 0; prev < 2; prev++) {
    CHECK_OK(strata_field_read(strata_wave_field(a, prev), ua), ctx);
    CHECK_OK(strata_field_read(strata_wave_field(b, prev), ub), ctx);
    CHECK(memcmp(ua, ub, np * 4) == 0);
  }
  double ta[48], tb[48];
  size_t ns;
  CHECK_OK(strata_wave_traces(a, ta, 48, &ns), ctx);
  CHECK_OK(strata_wave_traces(b, tb, 48, &ns), ctx);
  CHECK(memcmp(ta, tb, sizeof ta) == 0);
  double peak = 0;
  for (int i = 0; i < 48; i++) peak = fabs(ta[i]) > peak ? fabs(ta[i]) : peak;
  CHECK(peak > 0);
  /* a solver of another precision refuses the state, unchanged */
  strata_wave_options o;
  strata_wave_options_init(&o);
  o.n[0] = 26;
  o.n[1] = 22;
  o.n[2] = 20;
  o.absorb_width = 6;
  o.face[STRATA_FACE_ZLO] = STRATA_WAVE_FREE;
  o.precision = STRATA_F64;
  strata_wave *c = NULL;
  CHECK_OK(strata_wave_create(ctx, &o, &c), ctx);
  CHECK(strata_wave_load_state(c, st, bytes) == STRATA_EINVAL);
  CHECK(strstr(strata_context_error(ctx), "another solver setup"));
  CHECK_OK(strata_wave_get_info(c, &ib), ctx);
  CHECK(ib.steps == 0);
  strata_wave_destroy(&c);
  free(ua);
  free(ub);
  free(st);
  strata_wave_destroy(&a);
  strata_wave_destroy(&b);
  strata_context_destroy(&ctx);
  return 0;
}

/* A NaN in p (as a blow-up makes): the step call stops at the first check
 * after it, naming p, the step and the first bad point; without the
 * check (check_every = 0) the run goes on, NaN everywhere it reached. */
TEST(blowup_stops_the_run) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_wave_options o;
  strata_wave_options_init(&o);
  CHECK(o.check_every == STRATA_CHECK_EVERY);
  o.n[0] = o.n[1] = o.n[2] = 48;
  o.absorb_width = 8;
  o.check_every = 5;
  strata_wave *w = NULL;
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  const size_t np = 48 * 48 * 48;
  float *p = calloc(np, sizeof *p);
  CHECK(p);
  p[24 + 48 * (24 + 48 * 24)] = NAN;
  CHECK_OK(strata_field_write(strata_wave_field(w, 0), p), ctx);
  CHECK_OK(strata_wave_step(w, 4), ctx);
  CHECK_STATUS(strata_wave_step(w, 10), STRATA_ENONFINITE, ctx);
  CHECKF(strstr(strata_context_error(ctx),
                "wave: p is not finite after step 5: p(") &&
             strstr(strata_context_error(ctx), ") = nan is the first of "),
         "%s", strata_context_error(ctx));
  strata_wave_info wi;
  CHECK_OK(strata_wave_get_info(w, &wi), ctx);
  CHECK(wi.steps == 5);
  strata_wave_destroy(&w);
  o.check_every = 0;
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  CHECK_OK(strata_field_write(strata_wave_field(w, 0), p), ctx);
  CHECK_OK(strata_wave_step(w, 10), ctx);
  CHECK_OK(strata_wave_read(w, p), ctx);
  CHECK(isnan(p[24 + 48 * (24 + 48 * 20)]));
  strata_wave_destroy(&w);
  o.check_every = -2;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "check_every", "-2");
  free(p);
  strata_context_destroy(&ctx);
  return 0;
}

RUN_TESTS(standing_mode_exact, standing_mode_orders, energy_conserved,
          absorbing_boundaries, ricker_source_greens_function,
          free_surface_image_source, refusals, refusals_name_the_option,
          backend_without_wave_kernel, checkpoint_bit_for_bit,
          blowup_stops_the_run)
