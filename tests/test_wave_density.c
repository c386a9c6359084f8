/* The acoustic wave solver's variable-density form and its 2D x-z
 * section on the CPU engine, against physics it does not share code with:
 * the normal-incidence reflection coefficient of a two-layer model, the
 * reciprocity of the scheme, the constant-density path where the density
 * is constant, the analytic 2D Green's function; and the density model's
 * refusals, layered form and checkpoints. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "runner.h"

static const double PI = 3.14159265358979323846;

/* Runs w for nsteps and returns its traces (nrec x ns, malloc'd). */
static double *run_traces(strata_context *ctx, strata_wave *w, long nsteps,
                          int nrec, size_t *ns) {
  if (strata_wave_step(w, nsteps) != STRATA_OK) {
    printf("  step failed: %s\n", strata_context_error(ctx));
    return NULL;
  }
  if (strata_wave_traces(w, NULL, 0, ns) != STRATA_OK) return NULL;
  double *tr = malloc((size_t)nrec * *ns * sizeof(double));
  if (tr && strata_wave_traces(w, tr, (size_t)nrec * *ns, ns) != STRATA_OK) {
    free(tr);
    return NULL;
  }
  return tr;
}

/* The largest |a - b| over n values, relative to the largest |b|. */
static double rel_diff(const double *a, const double *b, size_t n) {
  double d = 0, m = 0;
  for (size_t q = 0; q < n; q++) {
    d = fmax(d, fabs(a[q] - b[q]));
    m = fmax(m, fabs(b[q]));
  }
  return m > 0 ? d / m : d;
}

/* Velocity and density models on o's grid (malloc'd, x fastest): a
 * smooth velocity varying on every axis (m/s); the density constant
 * (layered = 0) or two layers with a lateral variation. */
static int models(const strata_wave_options *o, int layered, double **v,
                  double **rho) {
  const size_t cnt = o->n[0] * o->n[1] * o->n[2];
  *v = malloc(cnt * sizeof(double));
  *rho = malloc(cnt * sizeof(double));
  if (!*v || !*rho) return -1;
  for (size_t k = 0, q = 0; k < o->n[2]; k++)
    for (size_t j = 0; j < o->n[1]; j++)
      for (size_t i = 0; i < o->n[0]; i++, q++) {
        (*v)[q] = 2000 + 300 * sin(0.21 * (double)i) * cos(0.17 * (double)j) +
                  200 * (double)k / (double)o->n[2];
        (*rho)[q] = !layered ? 1850.0
                             : (k > 22 ? 2300.0 : 1600.0) +
                                   400 * cos(0.3 * (double)i + 0.2 * (double)j);
      }
  return 0;
}

/* Constant density given as a field runs the variable-density operator;
 * its result equals the constant-density path's to rounding, in 3D and in
 * 2D, with CPML, a free surface and a velocity model. */
TEST(constant_density_equals_constant_path) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  for (int c = 0; c < 4; c++) {
    const int two = c & 1, f64 = c >> 1;
    strata_wave_options o;
    strata_wave_options_init(&o);
    o.n[0] = 40;
    o.n[1] = two ? 1 : 36;
    o.n[2] = 44;
    o.h = 10;
    o.absorb_width = 8;
    o.precision = f64 ? STRATA_F64 : STRATA_F32;
    o.face[STRATA_FACE_ZLO] = STRATA_WAVE_FREE;
    o.src[2] = 60;
    o.velocity = 2400;
    double rec[6] = {150, two ? 0 : 170, 40, 300, two ? 0 : 100, 300};
    o.nreceivers = 2;
    o.receivers = rec;
    const size_t cnt = o.n[0] * o.n[1] * o.n[2];
    double *v = NULL, *rho = NULL;
    CHECK(models(&o, 0, &v, &rho) == 0);
    strata_wave *a = NULL, *b = NULL;
    CHECK_OK(strata_wave_create(ctx, &o, &a), ctx);
    CHECK_OK(strata_wave_create(ctx, &o, &b), ctx);
    CHECK_OK(strata_wave_set_velocity(a, v), ctx);
    CHECK_OK(strata_wave_set_velocity(b, v), ctx);
    CHECK_OK(strata_wave_set_density(b, rho), ctx);
    size_t ns = 0;
    double *ta = run_traces(ctx, a, 160, 2, &ns);
    double *tb = run_traces(ctx, b, 160, 2, &ns);
    CHECK(ta && tb);
    double *pa = malloc(cnt * sizeof(double)), *pb = malloc(cnt * sizeof(double));
    CHECK(pa && pb);
    CHECK_OK(strata_wave_read(a, pa), ctx);
    CHECK_OK(strata_wave_read(b, pb), ctx);
    if (!f64) { /* fp32 arrays: widen in place from the end */
      for (size_t q = cnt; q-- > 0;) {
        pa[q] = ((float *)pa)[q];
        pb[q] = ((float *)pb)[q];
      }
    }
    double dt = rel_diff(tb, ta, 2 * ns), dp = rel_diff(pb, pa, cnt);
    printf("  %s %s: traces differ by %.1e, p by %.1e (relative)\n",
           two ? "2D" : "3D", f64 ? "fp64" : "fp32", dt, dp);
    const double tol = f64 ? 1e-11 : 2e-4;
    CHECK(dt < tol && dp < tol);
    CHECK(dt > 0 || dp > 0 || f64); /* the other operator did run */
    strata_wave_info ia, ib;
    CHECK_OK(strata_wave_get_info(a, &ia), ctx);
    CHECK_OK(strata_wave_get_info(b, &ib), ctx);
    CHECK(ib.bytes_per_point_step > ia.bytes_per_point_step);
    free(ta);
    free(tb);
    free(pa);
    free(pb);
    free(v);
    free(rho);
    strata_wave_destroy(&a);
    strata_wave_destroy(&b);
  }
  strata_context_destroy(&ctx);
  return 0;
}

/* A two-layer model (velocity and density contrast, interface at depth
 * zi): a point source at depth zs and a receiver above it on the same
 * vertical.  The reflection is the two-layer trace minus the trace of the
 * homogeneous upper medium; the reference, the homogeneous trace at the
 * reflected path's length (the image point below the source), removes
 * geometric spreading and the scheme's own dispersion, so their ratio is
 * the normal-incidence reflection coefficient. */
static double reflection(strata_context *ctx, int two, double v2, double r2,
                         double *want) {
  const double h = 10, v1 = 2000, r1 = 1000;
  /* in points; the interface halfway between nodes zi - 1 and zi */
  const long zs = 24, zr = 16, zi = 40;
  const long zimg = 2 * zi - 1 - zr; /* zs + the reflected path's length */
  strata_wave_options o;
  strata_wave_options_init(&o);
  o.n[0] = two ? 120 : 56;
  o.n[1] = two ? 1 : 56;
  o.n[2] = (size_t)zimg + 24;
  o.h = h;
  o.precision = STRATA_F64;
  o.absorb_width = 16;
  o.f0 = 10;
  o.dt = 0.8 * strata_wave_cfl_limit(two ? 2 : 3, 8) * h / fmax(v1, v2);
  const double xc = (double)(o.n[0] / 2) * h,
               yc = two ? 0 : (double)(o.n[1] / 2) * h;
  o.src[0] = xc;
  o.src[1] = yc;
  o.src[2] = (double)zs * h;
  double rec[6] = {xc, yc, (double)zr * h, xc, yc, (double)zimg * h};
  o.nreceivers = 2;
  o.receivers = rec;
  const long nsteps = lround((2.0 * (double)(zi - zs) * h / v1 + 3.0 / o.f0 +
                              (double)(zs - zr) * h / v1) / o.dt);
  /* the homogeneous upper medium */
  o.velocity = v1;
  strata_wave *w = NULL;
  if (strata_wave_create(ctx, &o, &w) != STRATA_OK) return NAN;
  size_t ns = 0;
  double *th = run_traces(ctx, w, nsteps, 2, &ns);
  strata_wave_destroy(&w);
  /* the two layers */
  const double top[2] = {0, (double)zi * h - 0.5 * h}, lv[2] = {v1, v2},
               lr[2] = {r1, r2};
  o.nlayers = 2;
  o.layer_top = top;
  o.layer_velocity = lv;
  o.layer_density = lr;
  o.velocity = fmax(v1, v2);
  if (strata_wave_create(ctx, &o, &w) != STRATA_OK) return NAN;
  double *t2 = run_traces(ctx, w, nsteps, 2, &ns);
  strata_wave_destroy(&w);
  double num = 0, den = 0;
  for (size_t s = 0; th && t2 && s < ns; s++) {
    const double refl = t2[s] - th[s], ref = th[ns + s];
    num += refl * ref;
    den += ref * ref;
  }
  free(th);
  free(t2);
  *want = (r2 * v2 - r1 * v1) / (r2 * v2 + r1 * v1);
  return den > 0 ? num / den : NAN;
}

TEST(two_layer_reflection_coefficient) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  static const double cases[][3] = {
      /* 2D?, v2, rho2 */
      {0, 3000, 2400}, {0, 2000, 2500}, {1, 3000, 2400}, {1, 2400, 1800},
      {1, 2000, 500}};
  double worst = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double want = 0;
    const double got = reflection(ctx, (int)cases[c][0], cases[c][1],
                                  cases[c][2], &want);
    const double err = fabs(got - want) / fabs(want);
    printf("  %s v 2000 -> %.0f m/s, rho 1000 -> %.0f kg/m^3: R %.4f, "
           "expected %.4f (%.2f%%)\n", cases[c][0] ? "2D" : "3D",
           cases[c][1], cases[c][2], got, want, 100 * err);
    worst = fmax(worst, err);
  }
  CHECK(worst < 0.03);
  strata_context_destroy(&ctx);
  return 0;
}

/* Reciprocity: with sources and receivers on nodes, the scheme's response
 * at B to a source at A times the bulk modulus rho v^2 at A equals the
 * response at A to a source at B times the modulus at B (the operator is
 * symmetric; the source adds to p, not to the volume).  A heterogeneous
 * velocity and density model, sponge sides, a free top. */
TEST(reciprocity) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  for (int two = 0; two < 2; two++) {
    strata_wave_options o;
    strata_wave_options_init(&o);
    o.n[0] = 48;
    o.n[1] = two ? 1 : 44;
    o.n[2] = 40;
    o.h = 10;
    o.precision = STRATA_F64;
    for (int f = 0; f < 6; f++) o.face[f] = STRATA_WAVE_SPONGE;
    o.face[STRATA_FACE_ZLO] = STRATA_WAVE_FREE;
    o.absorb_width = 8;
    o.velocity = 2900;
    double *v = NULL, *rho = NULL;
    CHECK(models(&o, 1, &v, &rho) == 0);
    const long A[3] = {14, two ? 0 : 15, 12}, B[3] = {31, two ? 0 : 27, 29};
    double *tr[2];
    size_t ns = 0;
    for (int s = 0; s < 2; s++) {
      const long *src = s ? B : A, *rc = s ? A : B;
      double rec[3];
      for (int a = 0; a < 3; a++) {
        o.src[a] = (double)src[a] * o.h;
        rec[a] = (double)rc[a] * o.h;
      }
      o.nreceivers = 1;
      o.receivers = rec;
      strata_wave *w = NULL;
      CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
      CHECK_OK(strata_wave_set_velocity(w, v), ctx);
      CHECK_OK(strata_wave_set_density(w, rho), ctx);
      tr[s] = run_traces(ctx, w, 300, 1, &ns);
      CHECK(tr[s]);
      strata_wave_destroy(&w);
    }
    const size_t qa = (size_t)(A[0] + (long)o.n[0] * (A[1] + (long)o.n[1] * A[2])),
                 qb = (size_t)(B[0] + (long)o.n[0] * (B[1] + (long)o.n[1] * B[2]));
    const double ka = rho[qa] * v[qa] * v[qa], kb = rho[qb] * v[qb] * v[qb];
    double d = 0, m = 0;
    for (size_t s = 0; s < ns; s++) {
      d = fmax(d, fabs(tr[0][s] * ka - tr[1][s] * kb));
      m = fmax(m, fabs(tr[0][s] * ka));
    }
    printf("  %s: |G(B,A) K_A - G(A,B) K_B| / max = %.1e (K_B / K_A = "
           "%.3f)\n", two ? "2D" : "3D", d / m, kb / ka);
    CHECK(m > 0 && d / m < 1e-10);
    free(tr[0]);
    free(tr[1]);
    free(v);
    free(rho);
  }
  strata_context_destroy(&ctx);
  return 0;
}

/* p(r, t) of p_tt = v^2 lap p + s(t) delta(x) in 2D:
 *   (1 / (2 pi v^2)) integral_0^inf s(t - (r / v) cosh(eta)) d eta
 * (the Green's function H(t - r/v) / (2 pi v sqrt(v^2 t^2 - r^2))
 * convolved with s, substituting tau = (r / v) cosh(eta)). */
static double green2d(double r, double t, double v, double f0,
                      double delay) {
  const double tmax = t + 3.0 / f0; /* s is 0 to rounding before then */
  if (tmax * v <= r) return 0;
  const double emax = acosh(tmax * v / r);
  const int N = 4000;
  double sum = 0;
  for (int q = 0; q <= N; q++) {
    const double eta = emax * q / N;
    const double f = strata_wave_ricker(f0, t - (r / v) * cosh(eta) - delay);
    sum += (q == 0 || q == N ? 0.5 : 1.0) * f;
  }
  return sum * (emax / N) / (2 * PI * v * v);
}

TEST(section_2d_greens_function) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  for (int p = 0; p < 2; p++) {
    strata_wave_options o;
    strata_wave_options_init(&o);
    o.n[0] = 160;
    o.n[1] = 1;
    o.n[2] = 150;
    o.h = 10;
    o.velocity = 2000;
    o.f0 = 10;
    o.absorb_width = 20;
    o.precision = p ? STRATA_F64 : STRATA_F32;
    const double h = o.h, xs = 80 * h, zs = 75 * h;
    o.src[0] = xs;
    o.src[2] = zs;
    double rec[9] = {xs + 15 * h, 0, zs,         /* 15 points along x */
                     xs - 12 * h, 0, zs - 9 * h, /* 15 points diagonal */
                     xs, 0, zs + 30 * h};        /* 30 points down */
    const double dist[3] = {15 * h, 15 * h, 30 * h};
    o.nreceivers = 3;
    o.receivers = rec;
    strata_wave *w = NULL;
    CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
    strata_wave_info info;
    CHECK_OK(strata_wave_get_info(w, &info), ctx);
    CHECK(fabs(info.cfl_limit - strata_wave_cfl_limit(2, 8)) < 1e-15);
    const long N = lround(0.5 / info.dt);
    size_t ns = 0;
    double *tr = run_traces(ctx, w, N, 3, &ns);
    CHECK(tr && ns == (size_t)N + 1);
    for (int r = 0; r < 3; r++) {
      double num = 0, den = 0;
      for (size_t s = 0; s < ns; s++) {
        const double want =
            green2d(dist[r], (double)s * info.dt, o.velocity, o.f0,
                    1.5 / o.f0);
        num += (tr[r * ns + s] - want) * (tr[r * ns + s] - want);
        den += want * want;
      }
      const double e = sqrt(num / den);
      printf("  %s receiver %d at %.0f points: relative L2 error %.4f\n",
             p ? "fp64" : "fp32", r, dist[r] / h, e);
      CHECK(e < 0.02);
    }
    free(tr);
    strata_wave_destroy(&w);
  }
  strata_context_destroy(&ctx);
  return 0;
}

/* layer_density equals the same layers given as a dense array; a
 * checkpoint of a variable-density run continues bit for bit and holds
 * the density; bad densities are refused with the index and value. */
TEST(density_model_layers_checkpoints_refusals) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_wave_options o;
  strata_wave_options_init(&o);
  o.n[0] = 36;
  o.n[1] = 30;
  o.n[2] = 40;
  o.h = 10;
  o.absorb_width = 6;
  o.precision = STRATA_F64;
  const double top[2] = {0, 195}, lv[2] = {2000, 2500}, lr[2] = {1100, 2100};
  o.nlayers = 2;
  o.layer_top = top;
  o.layer_velocity = lv;
  o.layer_density = lr;
  o.velocity = 2500;
  double rec[3] = {100, 120, 250};
  o.nreceivers = 1;
  o.receivers = rec;
  const size_t cnt = o.n[0] * o.n[1] * o.n[2];
  double *rho = malloc(cnt * sizeof(double));
  CHECK(rho);
  for (size_t q = 0; q < cnt; q++)
    rho[q] = (double)(q / (o.n[0] * o.n[1])) * o.h >= 195 ? 2100 : 1100;
  strata_wave *a = NULL, *b = NULL;
  CHECK_OK(strata_wave_create(ctx, &o, &a), ctx);
  o.layer_density = NULL;
  CHECK_OK(strata_wave_create(ctx, &o, &b), ctx);
  CHECK_OK(strata_wave_set_density(b, rho), ctx);
  size_t ns = 0;
  double *ta = run_traces(ctx, a, 60, 1, &ns);
  double *tb = run_traces(ctx, b, 60, 1, &ns);
  CHECK(ta && tb && memcmp(ta, tb, ns * sizeof(double)) == 0);
  /* checkpoint after 60 steps, 40 more, then load into a fresh solver
   * (no density set) and redo: identical */
  size_t bytes = 0, b0 = 0;
  CHECK_OK(strata_wave_state_size(a, &bytes), ctx);
  strata_wave *c = NULL;
  CHECK_OK(strata_wave_create(ctx, &o, &c), ctx);
  CHECK_OK(strata_wave_state_size(c, &b0), ctx);
  CHECK(bytes > b0); /* the density is part of the state */
  unsigned char *st = malloc(bytes);
  CHECK(st);
  CHECK_OK(strata_wave_save_state(a, st, bytes), ctx);
  CHECK_STATUS(strata_wave_load_state(c, st, bytes), STRATA_EINVAL, ctx);
  CHECK_OK(strata_wave_set_density(c, rho), ctx);
  for (size_t q = 0; q < cnt; q++) rho[q] = 5000; /* overwritten by load */
  CHECK_OK(strata_wave_set_density(c, rho), ctx);
  CHECK_OK(strata_wave_load_state(c, st, bytes), ctx);
  free(ta);
  free(tb);
  ta = run_traces(ctx, a, 40, 1, &ns);
  tb = run_traces(ctx, c, 40, 1, &ns);
  CHECK(ta && tb && memcmp(ta, tb, ns * sizeof(double)) == 0);
  /* refusals */
  rho[77] = -3;
  CHECK_STATUS(strata_wave_set_density(b, rho), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "rho[77]", "-3");
  rho[77] = NAN;
  CHECK_STATUS(strata_wave_set_density(b, rho), STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_wave_set_density(b, NULL), STRATA_EINVAL, ctx);
  const double bad[2] = {1000, 0};
  o.layer_density = bad;
  strata_wave *d = NULL;
  CHECK_STATUS(strata_wave_create(ctx, &o, &d), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "layer_density[1]", "0");
  o.nlayers = 0;
  o.layer_density = lr;
  CHECK_STATUS(strata_wave_create(ctx, &o, &d), STRATA_EINVAL, ctx);
  CHECK(d == NULL);
  free(st);
  free(ta);
  free(tb);
  free(rho);
  strata_wave_destroy(&a);
  strata_wave_destroy(&b);
  strata_wave_destroy(&c);
  strata_context_destroy(&ctx);
  return 0;
}

RUN_TESTS(constant_density_equals_constant_path,
          two_layer_reflection_coefficient, reciprocity,
          section_2d_greens_function,
          density_model_layers_checkpoints_refusals)
