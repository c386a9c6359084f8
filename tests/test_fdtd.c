/* The 2D FDTD solver on the CPU engine: a 1D-like plane wave against the
 * exact solution with the measured order (Yee TM and the explicit
 * E update), the two schemes agreeing to rounding where they are the same
 * recurrence (Ez of Yee obeys the 5-point wave equation), Mur and PML
 * absorbing a pulse, the 256 x 256, 260-step demonstration, and the
 * Courant and geometry refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "reference.h"
#include "runner.h"

static const double PI = 3.14159265358979323846;

typedef struct {
  double k, shift, amp; /* amp sin(k (i + shift)) */
} wave1d;

static double sin_fn(long i, long j, long k, void *p) {
  (void)j;
  (void)k;
  const wave1d *w = p;
  return w->amp * sin(w->k * ((double)i + w->shift));
}

/* max |Ez - sin(k (i - t))| after a plane wave of wavelength n crossed the
 * periodic box once */
static double plane_wave(strata_context *ctx, strata_fdtd_scheme scheme,
                         size_t n, strata_precision p) {
  strata_fdtd_options o;
  strata_fdtd_options_init(&o);
  o.n[0] = n;
  o.n[1] = 4; /* 1D-like: uniform in y, periodic */
  o.scheme = scheme;
  o.precision = p;
  o.courant = 0.5;
  o.waveform = STRATA_FDTD_NO_SOURCE;
  for (int f = 0; f < 4; f++) o.face[f] = STRATA_FDTD_PERIODIC;
  strata_fdtd *f = NULL;
  if (strata_fdtd_create(ctx, &o, &f) != STRATA_OK) return NAN;
  double k = 2 * PI / (double)n, dt = o.courant;
  wave1d e0 = {k, 0, 1};
  strata_field_fill_fn(strata_fdtd_field(f, STRATA_FDTD_EZ), sin_fn, &e0);
  if (scheme == STRATA_FDTD_YEE_TM) {
    /* Hy at x = i + 1/2, t = -dt/2: -sin(k (x - t)) */
    wave1d h = {k, 0.5 + dt / 2, -1};
    strata_field_fill_fn(strata_fdtd_field(f, STRATA_FDTD_HY), sin_fn, &h);
  } else {
    wave1d em = {k, dt, 1}; /* E at t = -dt */
    strata_field_fill_fn(strata_fdtd_field(f, STRATA_FDTD_EZ_PREV), sin_fn,
                         &em);
  }
  long N = lround((double)n / dt);
  strata_fdtd_step(f, N);
  double *v = ref_read(strata_fdtd_field(f, STRATA_FDTD_EZ), 0);
  double err = 0;
  for (size_t j = 0; j < o.n[1]; j++)
    for (size_t i = 0; i < n; i++) {
      double want = sin(k * ((double)i - (double)N * dt));
      double e = fabs(v[i + n * j] - want);
      if (!(e <= err)) err = e;
    }
  free(v);
  strata_fdtd_destroy(&f);
  return err;
}

TEST(plane_wave_orders) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  const size_t ns[3] = {32, 64, 128};
  for (int s = 0; s < 2; s++) {
    strata_fdtd_scheme sc = s ? STRATA_FDTD_YEE_TM : STRATA_FDTD_EXPLICIT;
    double e[3];
    for (int q = 0; q < 3; q++) e[q] = plane_wave(ctx, sc, ns[q], STRATA_F64);
    double p1 = log2(e[0] / e[1]), p2 = log2(e[1] / e[2]);
    printf("  %s: one crossing at 32, 64, 128 points per wavelength, "
           "Courant 0.5: errors %.3e %.3e %.3e, measured orders %.2f %.2f\n",
           s ? "Yee TM" : "explicit E (seed 002)", e[0], e[1], e[2], p1, p2);
    CHECK(p1 > 1.9 && p1 < 2.1);
    CHECK(p2 > 1.9 && p2 < 2.1);
    /* the error is the scheme's phase error: (k h)^2 (1 - S^2) / 24 per
     * unit phase, times the 2 pi of one crossing */
    double k = 2 * PI / 32.0, want = 2 * PI * k * k * (1 - 0.25) / 24;
    CHECK(fabs(e[0] - want) < 0.1 * want);
    double ef = plane_wave(ctx, sc, 64, STRATA_F32);
    printf("    fp32 at 64 points: %.3e\n", ef);
    CHECK(fabs(ef - e[1]) < 1e-4);
  }
  strata_context_destroy(&ctx);
  return 0;
}

static double gauss_fn(long i, long j, long k, void *p) {
  (void)k;
  const double *c = p; /* cx, cy, width */
  double r2 = (i - c[0]) * (i - c[0]) + (j - c[1]) * (j - c[1]);
  return exp(-r2 / (c[2] * c[2]));
}

TEST(yee_equals_explicit) {
  /* Eliminating H from Yee's TM scheme leaves Ez^{n+1} - 2 Ez^n + Ez^{n-1} =
   * S^2 L5 Ez^n: the explicit scheme's recurrence.  With H = 0 at t = -dt/2 and
   * E^{-1} = E^0 the two runs are the same numbers up to rounding, for PEC,
   * Mur and periodic faces. */
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  const strata_fdtd_face kinds[3] = {STRATA_FDTD_PEC, STRATA_FDTD_MUR,
                                     STRATA_FDTD_PERIODIC};
  const char *names[3] = {"PEC", "Mur", "periodic"};
  for (int q = 0; q < 3; q++) {
    strata_fdtd *f[2] = {NULL, NULL};
    for (int s = 0; s < 2; s++) {
      strata_fdtd_options o;
      strata_fdtd_options_init(&o);
      o.n[0] = 61;
      o.n[1] = 47;
      o.precision = STRATA_F64;
      o.courant = 0.6;
      o.scheme = s ? STRATA_FDTD_YEE_TM : STRATA_FDTD_EXPLICIT;
      o.waveform = STRATA_FDTD_NO_SOURCE;
      for (int fc = 0; fc < 4; fc++) o.face[fc] = kinds[q];
      CHECK_OK(strata_fdtd_create(ctx, &o, &f[s]), ctx);
      double c[3] = {20.3, 25.6, 4.0};
      CHECK_OK(strata_field_fill_fn(strata_fdtd_field(f[s], STRATA_FDTD_EZ),
                                    gauss_fn, c), ctx);
      if (!s)
        CHECK_OK(strata_field_fill_fn(
                     strata_fdtd_field(f[s], STRATA_FDTD_EZ_PREV), gauss_fn,
                     c), ctx);
      CHECK_OK(strata_fdtd_step(f[s], 150), ctx);
    }
    double diff, mx;
    CHECK_OK(strata_field_diff(strata_fdtd_field(f[0], STRATA_FDTD_EZ),
                               strata_fdtd_field(f[1], STRATA_FDTD_EZ),
                               STRATA_NORM_MAX, &diff), ctx);
    CHECK_OK(strata_field_norm(strata_fdtd_field(f[1], STRATA_FDTD_EZ),
                               STRATA_NORM_MAX, &mx), ctx);
    printf("  %-8s faces, 150 steps: max |E_explicit - Ez_Yee| = %.2e "
           "(max |Ez| %.3f)\n", names[q], diff, mx);
    CHECK(mx > 1e-3);
    CHECK(diff < 1e-12);
    strata_fdtd_destroy(&f[0]);
    strata_fdtd_destroy(&f[1]);
  }
  strata_context_destroy(&ctx);
  return 0;
}

/* Reflections: a Gaussian current pulse at the centre of a 128^2 box with
 * faces of kind k, against the same run in a 320^2 box whose walls are too
 * far for anything to come back in time.  Returns the largest energy of
 * the difference in the inner 96^2 (16 nodes from the faces) over t = 40
 * .. 200, relative to the reference's largest energy there. */
static strata_fdtd *pulse_run(strata_context *ctx, strata_fdtd_scheme sc,
                              strata_fdtd_face k, size_t n) {
  strata_fdtd_options o;
  strata_fdtd_options_init(&o);
  o.n[0] = o.n[1] = n;
  o.precision = STRATA_F64;
  o.scheme = sc;
  o.courant = 0.5;
  for (int f = 0; f < 4; f++) o.face[f] = k;
  o.pml_width = 16;
  o.waveform = STRATA_FDTD_GAUSSIAN;
  o.period = 4;
  o.delay = 12;
  strata_fdtd *f = NULL;
  if (strata_fdtd_create(ctx, &o, &f) != STRATA_OK) return NULL;
  return f;
}

static double reflected(strata_context *ctx, strata_fdtd_scheme sc,
                        strata_fdtd_face k) {
  const size_t n = 128, nb = 320, off = nb / 2 - n / 2;
  strata_fdtd *f = pulse_run(ctx, sc, k, n);
  strata_fdtd *g = pulse_run(ctx, sc, STRATA_FDTD_PEC, nb);
  if (!f || !g) return NAN;
  double *a = malloc(n * n * sizeof(double)), *b = malloc(nb * nb * 8);
  double worst = 0, peak = 0;
  strata_fdtd_step(f, 60);
  strata_fdtd_step(g, 60);
  for (int q = 0; q < 18; q++) {
    strata_fdtd_step(f, 20);
    strata_fdtd_step(g, 20);
    strata_fdtd_read(f, STRATA_FDTD_EZ, a);
    strata_fdtd_read(g, STRATA_FDTD_EZ, b);
    double e = 0, r = 0;
    for (size_t j = 16; j < n - 16; j++)
      for (size_t i = 16; i < n - 16; i++) {
        double x = a[i + n * j], y = b[(i + off) + nb * (j + off)];
        e += (x - y) * (x - y);
        r += y * y;
      }
    worst = fmax(worst, e);
    peak = fmax(peak, r);
  }
  free(a);
  free(b);
  strata_fdtd_destroy(&f);
  strata_fdtd_destroy(&g);
  return worst / peak;
}

TEST(absorbing_boundaries) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  for (int s = 0; s < 2; s++) {
    strata_fdtd_scheme sc = s ? STRATA_FDTD_YEE_TM : STRATA_FDTD_EXPLICIT;
    double pec = reflected(ctx, sc, STRATA_FDTD_PEC);
    double mur = reflected(ctx, sc, STRATA_FDTD_MUR);
    double pml = reflected(ctx, sc, STRATA_FDTD_PML);
    printf("  %s: reflected energy in the inner 96^2 over t = 40..200, "
           "relative to the pulse's: PEC %.3f, Mur %.2e, PML (16 nodes) "
           "%.2e\n", s ? "Yee TM" : "explicit E", pec, mur, pml);
    CHECK(pec > 0.1); /* the control: a conductor reflects everything */
    CHECK(mur < 1e-2);
    CHECK(pml < 1e-4);
    CHECK(pml < 0.1 * mur);
  }
  strata_context_destroy(&ctx);
  return 0;
}

TEST(seed002_demonstration) {
  /* the defaults are the demonstration case: 256 x 256, explicit E update,
   * a sine current at the centre, PEC walls, 260 steps */
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  for (int p = 0; p < 2; p++) {
    strata_fdtd_options o;
    strata_fdtd_options_init(&o);
    CHECK(o.n[0] == 256 && o.n[1] == 256);
    o.precision = p ? STRATA_F64 : STRATA_F32;
    strata_fdtd *f = NULL;
    CHECK_OK(strata_fdtd_create(ctx, &o, &f), ctx);
    CHECK_OK(strata_field_fill(strata_fdtd_field(f, STRATA_FDTD_EZ), NAN),
             ctx); /* poison: the solver must not need the old ghosts */
    CHECK_OK(strata_field_fill(strata_fdtd_field(f, STRATA_FDTD_EZ), 0.0),
             ctx);
    CHECK_OK(strata_fdtd_step(f, 260), ctx);
    CHECK(strata_fdtd_steps(f) == 260);
    double mx, l2;
    CHECK_OK(strata_field_norm(strata_fdtd_field(f, STRATA_FDTD_EZ),
                               STRATA_NORM_MAX, &mx), ctx);
    CHECK_OK(strata_field_norm(strata_fdtd_field(f, STRATA_FDTD_EZ),
                               STRATA_NORM_L2, &l2), ctx);
    /* the wavefront has travelled 130 cells: it touches the walls; the
     * corners (181 cells away) are still at rest, up to the stencil's
     * numerical domain of dependence (one cell per step): < 1e-30 */
    void *v = malloc(256 * 256 * sizeof(double));
    CHECK(v);
    CHECK_OK(strata_fdtd_read(f, STRATA_FDTD_EZ, v), ctx);
    double corner = p ? ((double *)v)[5 + 256 * 5]
                      : (double)((float *)v)[5 + 256 * 5];
    printf("  %s: max |E| %.4f, L2 %.3f, E at (5,5) %.1e\n",
           p ? "fp64" : "fp32", mx, l2, corner);
    CHECK(isfinite(mx) && isfinite(l2));
    CHECK(mx > 0.01 && mx < 10);
    CHECK(fabs(corner) < 1e-30);
    CHECK_STATUS(strata_fdtd_read(f, STRATA_FDTD_HX, v), STRATA_EINVAL, ctx);
    CHECK(strata_fdtd_field(f, STRATA_FDTD_HY) == NULL);
    free(v);
    strata_fdtd_destroy(&f);
  }
  strata_context_destroy(&ctx);
  return 0;
}

TEST(refusals) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_fdtd_options o;
  strata_fdtd *f = (strata_fdtd *)&o;
  CHECK(fabs(strata_fdtd_courant_limit() - sqrt(0.5)) < 1e-15);
  strata_fdtd_options_init(&o);
  o.courant = 0.7072;
  CHECK_STATUS(strata_fdtd_create(ctx, &o, &f), STRATA_EUNSTABLE, ctx);
  CHECK(f == NULL);
  CHECK(strstr(strata_context_error(ctx), "0.707107") != NULL);
  printf("  refused: %s\n", strata_context_error(ctx));
  o.courant = 0.7071068; /* a hair above 1/sqrt(2): shown apart */
  CHECK_STATUS(strata_fdtd_create(ctx, &o, &f), STRATA_EUNSTABLE, ctx);
  CHECK(strstr(strata_context_error(ctx), "= 0.7071068 exceeds the 2D limit "
                                          "1/sqrt(2) = 0.70710678") != NULL);
  o.courant = 0.5;
  o.src[0] = (double)o.n[0] - 1 + 1e-7; /* a hair beyond the last node */
  CHECK_STATUS(strata_fdtd_create(ctx, &o, &f), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "source x = 255.0000001 is outside "
                                          "the nodes 0..255") != NULL);
  o.src[0] = -1;
  o.courant = 0.7071;
  o.scheme = STRATA_FDTD_YEE_TM;
  CHECK_OK(strata_fdtd_create(ctx, &o, &f), ctx);
  CHECK_OK(strata_fdtd_step(f, 10), ctx);
  strata_fdtd_destroy(&f);
  strata_fdtd_options_init(&o);
  o.face[1] = STRATA_FDTD_PERIODIC;
  CHECK_STATUS(strata_fdtd_create(ctx, &o, &f), STRATA_EINVAL, ctx);
  strata_fdtd_options_init(&o);
  o.n[0] = 30;
  o.face[0] = o.face[1] = STRATA_FDTD_PML; /* 3 + 2 * 17 > 30 */
  CHECK_STATUS(strata_fdtd_create(ctx, &o, &f), STRATA_EINVAL, ctx);
  strata_fdtd_options_init(&o);
  o.src[0] = 300;
  CHECK_STATUS(strata_fdtd_create(ctx, &o, &f), STRATA_EINVAL, ctx);
  strata_fdtd_options_init(&o);
  o.period = 0;
  CHECK_STATUS(strata_fdtd_create(ctx, &o, &f), STRATA_EINVAL, ctx);
  strata_fdtd_options_init(&o);
  o.scheme = (strata_fdtd_scheme)7;
  CHECK_STATUS(strata_fdtd_create(ctx, &o, &f), STRATA_EINVAL, ctx);
  CHECK(f == NULL);
  /* a backend without the kernels refuses, with the reason */
  strata__backend fake = *ctx->be;
  const strata__backend *orig = ctx->be;
  fake.yee_step = NULL;
  fake.wave_step = NULL;
  ctx->be = &fake;
  for (int s = 0; s < 2; s++) {
    strata_fdtd_options_init(&o);
    o.scheme = s ? STRATA_FDTD_YEE_TM : STRATA_FDTD_EXPLICIT;
    CHECK_STATUS(strata_fdtd_create(ctx, &o, &f), STRATA_ENOTSUP, ctx);
    CHECK(strstr(strata_context_error(ctx), "yet; use backend=cpu") != NULL);
    CHECK(f == NULL);
  }
  ctx->be = orig;
  strata_fdtd_destroy(&f);
  strata_context_destroy(&ctx);
  return 0;
}

/* One bad option at a time: create refuses it and names it, with its
 * value, beside the message. */
static const struct {
  const char *arg, *value;
  strata_status status;
} fdtd_bad[] = {
    {"courant", "0.7072", STRATA_EUNSTABLE},
    {"courant", "0", STRATA_EINVAL},
    {"face[0]", "0", STRATA_EINVAL}, /* x-high periodic, x-low PEC */
    {"n[0]", "30", STRATA_EINVAL},
    {"pml_width", "0", STRATA_EINVAL},
    {"src[0]", "300", STRATA_EINVAL},
    {"period", "0", STRATA_EINVAL},
    {"amplitude", "nan", STRATA_EINVAL},
    {"delay", "-2", STRATA_EINVAL},
    {"scheme", "7", STRATA_EINVAL},
    {"waveform", "9", STRATA_EINVAL},
    {"face[3]", "8", STRATA_EINVAL},
    {"precision", "16", STRATA_EINVAL},
};

static void fdtd_make_bad(strata_fdtd_options *o, int k) {
  strata_fdtd_options_init(o);
  switch (k) {
  case 0: o->courant = 0.7072; break;
  case 1: o->courant = 0; break;
  case 2: o->face[1] = STRATA_FDTD_PERIODIC; break;
  case 3:
    o->n[0] = 30;
    o->face[0] = o->face[1] = STRATA_FDTD_PML;
    break;
  case 4: o->face[2] = STRATA_FDTD_PML, o->pml_width = 0; break;
  case 5: o->src[0] = 300; break;
  case 6: o->period = 0; break;
  case 7: o->amplitude = NAN; break;
  case 8: o->delay = -2; break;
  case 9: o->scheme = (strata_fdtd_scheme)7; break;
  case 10: o->waveform = (strata_fdtd_waveform)9; break;
  case 11: o->face[3] = (strata_fdtd_face)8; break;
  case 12: o->precision = (strata_precision)16; break;
  }
}

TEST(refusals_name_the_option) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_fdtd_options o;
  strata_fdtd *f = NULL;
  for (int k = 0; k < (int)(sizeof fdtd_bad / sizeof fdtd_bad[0]); k++) {
    fdtd_make_bad(&o, k);
    strata_status s = strata_fdtd_create(ctx, &o, &f);
    CHECKF(s == fdtd_bad[k].status && f == NULL, "case %d: %s (%s)", k,
           strata_status_name(s), strata_context_error(ctx));
    CHECK_ARG(ctx, fdtd_bad[k].arg, fdtd_bad[k].value);
  }
  fdtd_make_bad(&o, -1);
  CHECK_OK(strata_fdtd_create(ctx, &o, &f), ctx);
  CHECK_STATUS(strata_fdtd_read(f, STRATA_FDTD_HX, NULL), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "c", "1");
  CHECK_STATUS(strata_fdtd_step(f, -1), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "nsteps", "-1");
  strata_fdtd_destroy(&f);
  strata_context_destroy(&ctx);
  return 0;
}

/* Checkpoints of both schemes with PML and Mur faces: save at step 11,
 * run to 40; a fresh solver loading the state ends bit for bit equal. */
TEST(checkpoint_bit_for_bit) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  for (int scheme = 0; scheme < 2; scheme++) {
    strata_fdtd_options o;
    strata_fdtd_options_init(&o);
    o.n[0] = 48;
    o.n[1] = 40;
    o.scheme = scheme ? STRATA_FDTD_YEE_TM : STRATA_FDTD_EXPLICIT;
    o.face[0] = o.face[2] = STRATA_FDTD_PML;
    o.face[1] = STRATA_FDTD_MUR;
    o.pml_width = 8;
    o.waveform = STRATA_FDTD_RICKER;
    o.period = 8;
    o.delay = 10;
    strata_fdtd *a = NULL, *b = NULL;
    CHECK_OK(strata_fdtd_create(ctx, &o, &a), ctx);
    CHECK_OK(strata_fdtd_step(a, 11), ctx);
    size_t bytes = 0;
    CHECK_OK(strata_fdtd_state_size(a, &bytes), ctx);
    unsigned char *st = malloc(bytes);
    CHECK(st);
    CHECK_OK(strata_fdtd_save_state(a, st, bytes), ctx);
    CHECK_OK(strata_fdtd_step(a, 29), ctx);
    CHECK_OK(strata_fdtd_create(ctx, &o, &b), ctx);
    CHECK(strata_fdtd_load_state(b, st, bytes + 1) == STRATA_EFORMAT);
    CHECK(strata_fdtd_steps(b) == 0);
    CHECK_OK(strata_fdtd_load_state(b, st, bytes), ctx);
    CHECK(strata_fdtd_steps(b) == 11);
    CHECK_OK(strata_fdtd_step(b, 29), ctx);
    float ea[48 * 40], eb[48 * 40];
    int comps[3] = {STRATA_FDTD_EZ, scheme ? STRATA_FDTD_HX : STRATA_FDTD_EZ_PREV,
                    scheme ? STRATA_FDTD_HY : STRATA_FDTD_EZ};
    for (int c = 0; c < 3; c++) {
      CHECK_OK(strata_fdtd_read(a, (strata_fdtd_component)comps[c], ea), ctx);
      CHECK_OK(strata_fdtd_read(b, (strata_fdtd_component)comps[c], eb), ctx);
      CHECKF(memcmp(ea, eb, sizeof ea) == 0, "scheme %d component %d", scheme,
             comps[c]);
    }
    float mx = 0;
    for (int i = 0; i < 48 * 40; i++) mx = fabsf(ea[i]) > mx ? fabsf(ea[i]) : mx;
    CHECK(mx > 0);
    /* the other scheme's state is refused */
    strata_fdtd *c = NULL;
    o.scheme = scheme ? STRATA_FDTD_EXPLICIT : STRATA_FDTD_YEE_TM;
    CHECK_OK(strata_fdtd_create(ctx, &o, &c), ctx);
    CHECK(strata_fdtd_load_state(c, st, bytes) == STRATA_EINVAL);
    strata_fdtd_destroy(&c);
    free(st);
    strata_fdtd_destroy(&a);
    strata_fdtd_destroy(&b);
  }
  strata_context_destroy(&ctx);
  return 0;
}

/* A NaN in H reaches Ez in one step: the check every check_every steps
 * (on Ez) stops the run there, on both schemes' paths. */
TEST(blowup_stops_the_run) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_fdtd_options o;
  strata_fdtd_options_init(&o);
  CHECK(o.check_every == STRATA_CHECK_EVERY);
  o.n[0] = 40;
  o.n[1] = 30;
  o.check_every = 3;
  o.scheme = STRATA_FDTD_YEE_TM;
  strata_fdtd *f = NULL;
  CHECK_OK(strata_fdtd_create(ctx, &o, &f), ctx);
  CHECK_OK(strata_field_fill(strata_fdtd_field(f, STRATA_FDTD_HX), NAN), ctx);
  CHECK_STATUS(strata_fdtd_step(f, 7), STRATA_ENONFINITE, ctx);
  CHECKF(strstr(strata_context_error(ctx), "fdtd: Ez is not finite after "
                "step 3: Ez("),
         "%s", strata_context_error(ctx));
  CHECK(strata_fdtd_steps(f) == 3);
  strata_fdtd_destroy(&f);
  o.scheme = STRATA_FDTD_EXPLICIT;
  CHECK_OK(strata_fdtd_create(ctx, &o, &f), ctx);
  CHECK_OK(strata_field_fill(strata_fdtd_field(f, STRATA_FDTD_EZ), INFINITY),
           ctx);
  CHECK_STATUS(strata_fdtd_step(f, 7), STRATA_ENONFINITE, ctx);
  CHECKF(strstr(strata_context_error(ctx), "fdtd: Ez is not finite after "
                "step 3: Ez("),
         "%s", strata_context_error(ctx));
  strata_fdtd_destroy(&f);
  strata_context_destroy(&ctx);
  return 0;
}

RUN_TESTS(plane_wave_orders, yee_equals_explicit, absorbing_boundaries,
          seed002_demonstration, refusals, refusals_name_the_option,
          checkpoint_bit_for_bit, blowup_stops_the_run)
