/* The heat solver on the CPU engine: decaying Fourier modes against the
 * exact discrete decay factor (periodic, Dirichlet and Neumann modes, the
 * 7-point and the 27-point FE operators), Neumann conservation, the
 * Dirichlet steady state, fused sweeps against single steps (bit for bit,
 * NaN-poisoned outputs), the measured orders in space and time, and the
 * stability refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "reference.h"
#include "runner.h"

/* A product of 1D modes: kind 0 sin(th (i + sh)), kind 1 cos(th (i + sh)). */
typedef struct {
  double th[3], sh[3];
  int kind[3], dims;
} mode_t_;

static double mode_fn(long i, long j, long k, void *p) {
  const mode_t_ *m = p;
  long c[3] = {i, j, k};
  double v = 1;
  for (int a = 0; a < m->dims; a++) {
    double x = m->th[a] * ((double)c[a] + m->sh[a]);
    v *= m->kind[a] ? cos(x) : sin(x);
  }
  return v;
}

/* max over the interior of |u - g^N * mode| / max |mode at t = 0| */
static double mode_error(strata_heat *h, const mode_t_ *m, double gN,
                         const size_t n[3]) {
  strata_field *u = strata_heat_field(h);
  double *v = ref_read(u, 0);
  double err = 0, mx = 0;
  for (size_t k = 0; k < n[2]; k++)
    for (size_t j = 0; j < n[1]; j++)
      for (size_t i = 0; i < n[0]; i++) {
        double want = gN * mode_fn((long)i, (long)j, (long)k, (void *)m);
        double got = v[i + n[0] * (j + n[1] * k)];
        double e = fabs(got - want);
        if (!(e <= err)) err = e; /* NaN propagates */
        double m0 = fabs(mode_fn((long)i, (long)j, (long)k, (void *)m));
        if (m0 > mx) mx = m0;
      }
  free(v);
  return err / mx;
}

/* Runs a mode problem and compares with the exact discrete solution. */
static int run_mode(strata_context *ctx, int dims, const size_t n[3],
                    strata_heat_operator op, strata_bc_kind bc, double D,
                    strata_precision p, int fuse, const mode_t_ *m, double g,
                    long steps, const char *what) {
  strata_heat_options o;
  strata_heat_options_init(&o);
  o.dims = dims;
  memcpy(o.n, n, sizeof o.n);
  o.op = op;
  o.D = D;
  o.precision = p;
  o.fuse = fuse;
  strata_boundary_uniform(&o.bc, bc, 0.0);
  strata_heat *h = NULL;
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  CHECK_OK(strata_heat_set_initial(h, mode_fn, (void *)m), ctx);
  CHECK_OK(strata_heat_step(h, steps), ctx);
  strata_heat_info info;
  CHECK_OK(strata_heat_get_info(h, &info), ctx);
  double err = mode_error(h, m, pow(g, (double)steps), n);
  /* per step at most (points + 2) roundings of values <= 1: allow
   * 30 eps per step (fp32 and fp64), scaled by the steps */
  double tol = 30.0 * (double)steps * ref_eps(p);
  printf("  %-34s %s fuse %d: g^N = %.6f, error %.2e (bound %.1e)\n", what,
         p == STRATA_F32 ? "fp32" : "fp64", info.fuse, pow(g, (double)steps),
         err, tol);
  strata_heat_destroy(&h);
  CHECK(h == NULL);
  CHECKF(err <= tol, "%s: error %.3e above %.3e", what, err, tol);
  return 0;
}

TEST(fourier_modes_exact) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  const double pi = acos(-1.0);
  for (int p = 0; p < 2; p++) {
    strata_precision prec = p ? STRATA_F64 : STRATA_F32;
    for (int fuse = 1; fuse <= 4; fuse += 3) {
      /* periodic 2D: sin(2 pi m i / n) */
      {
        size_t n[3] = {48, 36, 1};
        mode_t_ m = {{2 * pi * 3 / 48, 2 * pi * 2 / 36, 0}, {0.25, 0, 0},
                     {0, 1, 0}, 2};
        double D = 0.23;
        double g = 1 - 4 * D * (pow(sin(m.th[0] / 2), 2) +
                                pow(sin(m.th[1] / 2), 2));
        if (run_mode(ctx, 2, n, STRATA_HEAT_FD, STRATA_BC_PERIODIC, D, prec,
                     fuse, &m, g, 101, "periodic 2D 5-point"))
          return 1;
      }
      /* Dirichlet 3D: sin(pi m (i + 1) / (n + 1)) */
      {
        size_t n[3] = {21, 17, 13};
        mode_t_ m = {{pi * 2 / 22, pi * 1 / 18, pi * 3 / 14}, {1, 1, 1},
                     {0, 0, 0}, 3};
        double D = 0.16;
        double g = 1 - 4 * D * (pow(sin(m.th[0] / 2), 2) +
                                pow(sin(m.th[1] / 2), 2) +
                                pow(sin(m.th[2] / 2), 2));
        if (run_mode(ctx, 3, n, STRATA_HEAT_FD, STRATA_BC_DIRICHLET, D, prec,
                     fuse, &m, g, 57, "Dirichlet 3D 7-point"))
          return 1;
      }
      /* Neumann 3D: cos(pi m (i + 1/2) / n) */
      {
        size_t n[3] = {19, 16, 11};
        mode_t_ m = {{pi * 2 / 19, pi * 3 / 16, pi * 1 / 11},
                     {0.5, 0.5, 0.5}, {1, 1, 1}, 3};
        double D = 1.0 / 6;
        double g = 1 - 4 * D * (pow(sin(m.th[0] / 2), 2) +
                                pow(sin(m.th[1] / 2), 2) +
                                pow(sin(m.th[2] / 2), 2));
        if (run_mode(ctx, 3, n, STRATA_HEAT_FD, STRATA_BC_NEUMANN, D, prec,
                     fuse, &m, g, 43, "Neumann 3D 7-point"))
          return 1;
      }
      /* periodic 3D, 27-point FE: g = 1 - D K(theta) */
      {
        size_t n[3] = {24, 20, 18};
        mode_t_ m = {{2 * pi * 1 / 24, 2 * pi * 2 / 20, 2 * pi * 1 / 18},
                     {0.1, 0.2, 0.3}, {1, 0, 1}, 3};
        double D = 0.45, cx = cos(m.th[0]), cy = cos(m.th[1]),
               cz = cos(m.th[2]);
        double K = 8.0 / 3 - 2.0 / 3 * (cx * cy + cx * cz + cy * cz) -
                   2.0 / 3 * cx * cy * cz;
        if (run_mode(ctx, 3, n, STRATA_HEAT_FE27, STRATA_BC_PERIODIC, D, prec,
                     fuse, &m, 1 - D * K, 25, "periodic 3D 27-point FE"))
          return 1;
      }
    }
  }
  strata_context_destroy(&ctx);
  return 0;
}

static double rnd_fn(long i, long j, long k, void *p) {
  (void)p;
  return strata__rand01(77, (uint64_t)(i * 73856093L ^ j * 19349663L ^
                                       k * 83492791L)) - 0.3;
}

TEST(neumann_conserves_sum) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  for (int d = 2; d <= 3; d++)
    for (int op = 0; op < (d == 3 ? 2 : 1); op++) {
      strata_heat_options o;
      strata_heat_options_init(&o);
      o.dims = d;
      o.n[0] = 37;
      o.n[1] = 29;
      o.n[2] = d == 3 ? 23 : 1;
      o.op = (strata_heat_operator)op;
      o.D = 0.9 * strata_heat_stability_limit(d, o.op);
      strata_boundary_uniform(&o.bc, STRATA_BC_NEUMANN, 0);
      strata_heat *h = NULL;
      CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
      CHECK_OK(strata_heat_set_initial(h, rnd_fn, NULL), ctx);
      double s0, s1, m0, m1;
      CHECK_OK(strata_field_norm(strata_heat_field(h), STRATA_NORM_SUM, &s0),
               ctx);
      CHECK_OK(strata_field_norm(strata_heat_field(h), STRATA_NORM_MAX, &m0),
               ctx);
      CHECK_OK(strata_heat_step(h, 400), ctx);
      CHECK_OK(strata_field_norm(strata_heat_field(h), STRATA_NORM_SUM, &s1),
               ctx);
      CHECK_OK(strata_field_norm(strata_heat_field(h), STRATA_NORM_MAX, &m1),
               ctx);
      double npts = (double)(o.n[0] * o.n[1] * o.n[2]);
      double rel = fabs(s1 - s0) / npts;
      printf("  %dD %s: sum %.12f -> %.12f (|change| / points = %.2e), max "
             "%.3f -> %.3f\n", d, op ? "FE27" : "FD", s0, s1, rel, m0, m1);
      /* the mean is conserved to rounding; the field smooths */
      CHECK(rel < 1e-12);
      CHECK(m1 < 0.5 * m0);
      strata_heat_destroy(&h);
    }
  strata_context_destroy(&ctx);
  return 0;
}

TEST(dirichlet_steady_state) {
  /* x-low held at 1, x-high at -0.5, y periodic: u -> the line through the
   * two ghost nodes, u(i) = 1 - 1.5 (i + 1) / (n + 1) */
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_heat_options o;
  strata_heat_options_init(&o);
  o.n[0] = 15;
  o.n[1] = 9;
  o.D = 0.24;
  strata_boundary_uniform(&o.bc, STRATA_BC_PERIODIC, 0);
  o.bc.kind[0] = o.bc.kind[1] = STRATA_BC_DIRICHLET;
  o.bc.value[0] = 1.0;
  o.bc.value[1] = -0.5;
  strata_heat *h = NULL;
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  CHECK_OK(strata_heat_set_initial(h, rnd_fn, NULL), ctx);
  CHECK_OK(strata_heat_step(h, 4000), ctx);
  double *v = ref_read(strata_heat_field(h), 0);
  double err = 0;
  for (size_t j = 0; j < o.n[1]; j++)
    for (size_t i = 0; i < o.n[0]; i++) {
      double want = 1.0 - 1.5 * (double)(i + 1) / (double)(o.n[0] + 1);
      err = fmax(err, fabs(v[i + o.n[0] * j] - want));
    }
  free(v);
  printf("  steady state error %.2e after 4000 steps\n", err);
  CHECK(err < 1e-10);
  strata_heat_destroy(&h);
  strata_context_destroy(&ctx);
  return 0;
}

/* The fused kernel against s rounds of fill_ghosts + strata_apply, through
 * the backend entry itself, with the output poisoned. */
static int fused_case(strata_context *ctx, const strata_stencil *op,
                      const size_t n[3], const strata_boundary *bc,
                      strata_precision p, int s, double *worst) {
  strata_field_desc d = {op->dims, {n[0], n[1], n[2]}, op->radius * s, p};
  strata_field *in = NULL, *out = NULL, *a = NULL, *b = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &in), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &out), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &a), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &b), ctx);
  CHECK_OK(strata_field_fill_random(in, 4242u + (unsigned)s, -1, 1), ctx);
  CHECK_OK(strata_field_fill_ghosts(in, bc), ctx);
  CHECK_OK(strata_field_fill(out, NAN), ctx);
  CHECK_OK(ctx->be->apply_fused(op, bc, s, in, out, 0,
                                (long)n[op->dims - 1]), ctx);
  CHECK_OK(strata_field_copy(a, in), ctx);
  for (int m = 0; m < s; m++) {
    CHECK_OK(strata_field_fill_ghosts(a, bc), ctx);
    CHECK_OK(strata_field_fill(b, NAN), ctx);
    CHECK_OK(strata_apply(op, a, b, NULL), ctx);
    strata_field *t = a;
    a = b;
    b = t;
  }
  double diff, mx;
  CHECK_OK(strata_field_diff(out, a, STRATA_NORM_MAX, &diff), ctx);
  CHECK_OK(strata_field_norm(a, STRATA_NORM_MAX, &mx), ctx);
  CHECK(isfinite(diff)); /* NaN: an interior point was not written */
  double rel = diff / mx;
  if (rel > *worst) *worst = rel;
  strata_field_destroy(&in);
  strata_field_destroy(&out);
  strata_field_destroy(&a);
  strata_field_destroy(&b);
  /* Star stencils: the same arithmetic in the same order (a Neumann
   * mirror only swaps the two terms of a commutative pair), so the fused
   * sweep is bit for bit the single steps.  The 27-point box sums its
   * edges and corners in an order that a mirror permutes, so in Neumann
   * ghost rings it agrees to rounding only: a few ulps per step. */
  if (op->kind == STRATA_STENCIL_STAR)
    CHECKF(diff == 0, "fused star s=%d differs by %.3e", s, rel);
  CHECKF(rel <= 4.0 * s * ref_eps(p), "fused s=%d differs by %.3e", s, rel);
  return 0;
}

TEST(fused_matches_single_steps) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  CHECK(ctx->be->apply_fused != NULL);
  strata_boundary bcs[4];
  const char *names[4] = {"dirichlet", "neumann", "periodic", "mixed"};
  strata_boundary_uniform(&bcs[0], STRATA_BC_DIRICHLET, 0.7);
  bcs[0].value[3] = -0.4;
  strata_boundary_uniform(&bcs[1], STRATA_BC_NEUMANN, 0);
  strata_boundary_uniform(&bcs[2], STRATA_BC_PERIODIC, 0);
  strata_boundary_uniform(&bcs[3], STRATA_BC_PERIODIC, 0);
  bcs[3].kind[2] = STRATA_BC_DIRICHLET;
  bcs[3].value[2] = 1.5;
  bcs[3].kind[3] = STRATA_BC_NEUMANN;
  bcs[3].kind[4] = STRATA_BC_NEUMANN;
  bcs[3].kind[5] = STRATA_BC_DIRICHLET;
  bcs[3].value[5] = -2.0;
  int cases = 0;
  double worst = 0;
  for (int dims = 2; dims <= 3; dims++) {
    strata_stencil ops[3];
    int nops = 0;
    double c = 0.2;
    strata_stencil_star(&ops[nops++], dims, 1, 1 - 2 * dims * 0.2 * 0.8, &c);
    double c2[2] = {0.05, -0.01};
    strata_stencil_star(&ops[nops++], dims, 2, 0.6, c2);
    if (dims == 3)
      strata_stencil_box_symmetric(&ops[nops++], 1 - 8.0 / 3 * 0.3, 0,
                                   0.3 / 6, 0.3 / 12);
    size_t n[3] = {dims == 2 ? 301 : 45, dims == 2 ? 77 : 37,
                   dims == 3 ? 23 : 1};
    for (int q = 0; q < nops; q++)
      for (int b = 0; b < 4; b++)
        for (int pr = 0; pr < 2; pr++)
          for (int s = 1; s <= 8; s++) {
            /* r = 1: s = 1, 3, 8; r = 2: s = 2, 4 */
            if (ops[q].radius == 1 && s != 1 && s != 3 && s != 8) continue;
            if (ops[q].radius == 2 && s != 2 && s != 4) continue;
            cases++;
            if (fused_case(ctx, &ops[q], n, &bcs[b],
                           pr ? STRATA_F64 : STRATA_F32, s, &worst)) {
              fprintf(stderr, "  FAILED: %dD op %d, %s, %s, s = %d\n", dims,
                      q, names[b], pr ? "fp64" : "fp32", s);
              return 1;
            }
          }
  }
  printf("  %d cases (2D/3D, star r=1,2 and FE27, 4 boundary sets, fp32/64, "
         "s = 1..8): stars bit for bit; worst relative difference %.3e "
         "(FE27, Neumann)\n", cases, worst);
  strata_context_destroy(&ctx);
  return 0;
}

/* apply_fused on parts of the last axis, [0, a), [a, b), [b, n) in that
 * order into one output, against the whole sweep: the same bits, no plane
 * outside a part written (the later parts' planes still NaN after each),
 * and nothing of in read outside a part's cone [k0 - H, k1 + H) (in is
 * NaN there while the part runs: what the distributed sweep relies on
 * while an exchange writes the rest). */
static int parts_case(strata_context *ctx, const strata_stencil *op,
                      const size_t n[3], const strata_boundary *bc,
                      strata_precision p, int s) {
  const int D = op->dims, ax = D - 1, H = op->radius * s;
  strata_field_desc d = {D, {n[0], n[1], n[2]}, H, p};
  strata_field *in = NULL, *whole = NULL, *part = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &in), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &whole), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &part), ctx);
  CHECK_OK(strata_field_fill_random(in, 99u + (unsigned)s, -1, 1), ctx);
  CHECK_OK(strata_field_fill_ghosts(in, bc), ctx);
  CHECK_OK(strata_field_fill(whole, NAN), ctx);
  CHECK_OK(strata_field_fill(part, NAN), ctx);
  const long L = (long)n[ax];
  CHECK_OK(ctx->be->apply_fused(op, bc, s, in, whole, 0, L), ctx);
  size_t gb = 1, plane = 1; /* ghosted box; a plane of it along ax */
  for (int a = 0; a < D; a++) {
    gb *= n[a] + 2 * (size_t)H;
    if (a != ax) plane *= n[a] + 2 * (size_t)H;
  }
  const size_t es = (size_t)p, cnt = n[0] * n[1] * n[2];
  unsigned char *img = malloc(gb * es), *poison = malloc(gb * es);
  unsigned char *want = malloc(cnt * es), *got = malloc(cnt * es);
  CHECK(img && poison && want && got);
  CHECK_OK(strata_field_read_ghosted(in, img), ctx);
  const long cut[4] = {0, L / 3, 2 * L / 3, L};
  for (int q = 0; q < 3; q++) {
    const long k0 = cut[q], k1 = cut[q + 1];
    for (long k = -H; k < L + H; k++) {
      unsigned char *pl = poison + (size_t)(k + H) * plane * es;
      if (k >= k0 - H && k < k1 + H) {
        memcpy(pl, img + (size_t)(k + H) * plane * es, plane * es);
      } else {
        for (size_t i = 0; i < plane; i++) {
          if (p == STRATA_F32) {
            float v = NAN;
            memcpy(pl + i * es, &v, es);
          } else {
            double v = NAN;
            memcpy(pl + i * es, &v, es);
          }
        }
      }
    }
    CHECK_OK(strata_field_write_ghosted(in, poison), ctx);
    CHECK_OK(ctx->be->apply_fused(op, bc, s, in, part, k0, k1), ctx);
    CHECK_OK(strata_field_read(part, got), ctx);
    const size_t pv = cnt / (size_t)L, from = (size_t)k1 * pv * es;
    for (size_t i = from; i < cnt * es; i += es) {
      double v = p == STRATA_F32 ? (double)*(float *)(got + i)
                                 : *(double *)(got + i);
      CHECKF(isnan(v), "part [%ld, %ld) wrote plane %zu", k0, k1,
             i / es / pv);
    }
  }
  CHECK_OK(strata_field_read(whole, want), ctx);
  size_t bad = cnt;
  for (size_t i = 0; i < cnt && bad == cnt; i++)
    if (memcmp(want + i * es, got + i * es, es)) bad = i;
  CHECKF(bad == cnt, "%s: parts differ from the whole sweep at point %zu",
         strata_backend_name(strata_context_backend(ctx)), bad);
  free(img);
  free(poison);
  free(want);
  free(got);
  strata_field_destroy(&in);
  strata_field_destroy(&whole);
  strata_field_destroy(&part);
  return 0;
}

TEST(fused_parts_equal_whole) {
  strata_context *ctx[2] = {strata_test_cpu_context(), NULL};
  CHECK(ctx[0]);
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = STRATA_BACKEND_CUDA;
  co.autotune = 0;
  if (strata_context_create(&ctx[1], &co) != STRATA_OK) ctx[1] = NULL;
  strata_boundary bcs[4];
  strata_boundary_uniform(&bcs[0], STRATA_BC_DIRICHLET, 0.7);
  strata_boundary_uniform(&bcs[1], STRATA_BC_NEUMANN, 0);
  strata_boundary_uniform(&bcs[2], STRATA_BC_PERIODIC, 0);
  bcs[3] = bcs[2]; /* the solver's faces between ranks: none, held */
  bcs[3].kind[4] = bcs[3].kind[5] = STRATA_BC_NONE;
  bcs[3].kind[2] = bcs[3].kind[3] = STRATA_BC_NEUMANN;
  int cases = 0;
  for (int e = 0; e < 2; e++) {
    if (!ctx[e]) continue;
    for (int dims = 2; dims <= 3; dims++) {
      strata_stencil ops[3];
      int nops = 0;
      double c = 0.2, c2[2] = {0.05, -0.01};
      strata_stencil_star(&ops[nops++], dims, 1, 1 - 2 * dims * 0.16, &c);
      strata_stencil_star(&ops[nops++], dims, 2, 0.6, c2);
      if (dims == 3)
        strata_stencil_box_symmetric(&ops[nops++], 1 - 8.0 / 3 * 0.3, 0,
                                     0.3 / 6, 0.3 / 12);
      size_t n[3] = {dims == 2 ? 90 : 23, dims == 2 ? 40 : 13,
                     dims == 3 ? 30 : 1};
      for (int q = 0; q < nops; q++)
        for (int b = 0; b < 4; b++)
          for (int pr = 0; pr < 2; pr++)
            for (int s = 1; s <= 4; s++) {
              strata_boundary bc = bcs[b];
              if (b == 3 && dims == 2) {
                bc.kind[2] = bc.kind[3] = STRATA_BC_NONE;
                bc.kind[4] = bc.kind[5] = STRATA_BC_DIRICHLET;
              }
              cases++;
              if (parts_case(ctx[e], &ops[q], n, &bc,
                             pr ? STRATA_F64 : STRATA_F32, s)) {
                fprintf(stderr, "  FAILED: %s %dD op %d, bc %d, %s, s = %d\n",
                        strata_backend_name(strata_context_backend(ctx[e])), dims, q, b,
                        pr ? "fp64" : "fp32", s);
                return 1;
              }
            }
    }
  }
  printf("  %d cases (%s): parts of the last axis equal the whole sweep bit "
         "for bit, reading only their cones\n", cases,
         ctx[1] ? "cpu and cuda" : "cpu; no CUDA device here");
  strata_context_destroy(&ctx[0]);
  if (ctx[1]) strata_context_destroy(&ctx[1]);
  return 0;
}

/* The heat equation u_t = u_xx + u_yy on [0,1)^2 periodic with
 * u0 = sin(2 pi x) + ... ; returns max error at T against the continuous
 * solution (semi = 0) or the exact semi-discrete one (semi = 1). */
static double order_run(strata_context *ctx, int dims,
                        strata_heat_operator op, long n, double D, double T,
                        int semi, int fuse) {
  const double pi = acos(-1.0);
  strata_heat_options o;
  strata_heat_options_init(&o);
  o.dims = dims;
  o.n[0] = o.n[1] = (size_t)n;
  o.n[2] = dims == 3 ? (size_t)n : 1;
  o.op = op;
  o.D = D;
  o.fuse = fuse;
  strata_boundary_uniform(&o.bc, STRATA_BC_PERIODIC, 0);
  strata_heat *h = NULL;
  if (strata_heat_create(ctx, &o, &h) != STRATA_OK) return NAN;
  double hh = 1.0 / (double)n, dt = D * hh * hh;
  long steps = lround(T / dt);
  mode_t_ m = {{2 * pi * hh, 2 * pi * hh, 2 * pi * hh}, {0, 0, 0},
               {0, 1, 0}, dims};
  strata_heat_set_initial(h, mode_fn, &m);
  strata_heat_step(h, steps);
  double t = (double)steps * dt, k2 = dims * 4 * pi * pi, rate = k2;
  if (semi) {
    /* exact decay rate of the semi-discrete FD operator */
    rate = dims * 4 * pow(sin(pi * hh), 2) / (hh * hh);
  }
  double err = mode_error(h, &m, exp(-rate * t), o.n);
  strata_heat_destroy(&h);
  return err;
}

TEST(orders_of_accuracy) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  /* space (with dt = D h^2 the time error is O(h^2) too): 2nd order */
  const long ns[3] = {16, 32, 64};
  for (int v = 0; v < 2; v++) {
    int dims = v ? 3 : 2;
    strata_heat_operator op = v ? STRATA_HEAT_FE27 : STRATA_HEAT_FD;
    double D = v ? 0.3 : 0.2, e[3];
    for (int q = 0; q < 3; q++)
      e[q] = order_run(ctx, dims, op, ns[q], D, 0.02, 0, 0);
    double p1 = log2(e[0] / e[1]), p2 = log2(e[1] / e[2]);
    printf("  space, %s %dD: errors %.3e %.3e %.3e, measured orders %.2f "
           "%.2f\n", v ? "27-point FE" : "5-point", dims, e[0], e[1], e[2],
           p1, p2);
    CHECK(p1 > 1.8 && p1 < 2.3);
    CHECK(p2 > 1.8 && p2 < 2.3);
  }
  /* time, against the exact semi-discrete solution: 1st order (Euler) */
  double e[3];
  const double Ds[3] = {0.2, 0.1, 0.05};
  for (int q = 0; q < 3; q++)
    e[q] = order_run(ctx, 2, STRATA_HEAT_FD, 32, Ds[q], 0.02, 1, 0);
  double p1 = log2(e[0] / e[1]), p2 = log2(e[1] / e[2]);
  printf("  time, 5-point 2D, dt halved twice: errors %.3e %.3e %.3e, "
         "measured orders %.2f %.2f\n", e[0], e[1], e[2], p1, p2);
  CHECK(p1 > 0.9 && p1 < 1.1);
  CHECK(p2 > 0.9 && p2 < 1.1);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(stability_refusals) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_heat_options o;
  strata_heat *h = (strata_heat *)&o; /* must come back NULL */
  CHECK(fabs(strata_heat_stability_limit(2, STRATA_HEAT_FD) - 0.25) < 1e-15);
  CHECK(fabs(strata_heat_stability_limit(3, STRATA_HEAT_FD) - 1.0 / 6) <
        1e-15);
  CHECK(strata_heat_stability_limit(3, STRATA_HEAT_FE27) == 0.5);
  CHECK(strata_heat_stability_limit(2, STRATA_HEAT_FE27) == 0.0);

  strata_heat_options_init(&o);
  o.D = 0.2501;
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EUNSTABLE, ctx);
  CHECK(h == NULL);
  CHECK(strstr(strata_context_error(ctx), "0.25") != NULL);
  printf("  refused: %s\n", strata_context_error(ctx));
  /* a hair above the limit: the message shows the two apart */
  o.D = 0.2500001;
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EUNSTABLE, ctx);
  CHECK(strstr(strata_context_error(ctx), "= 0.2500001 exceeds the stability "
                                          "limit 0.25 ") != NULL);
  o.D = 0.25;
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  strata_heat_destroy(&h);

  strata_heat_options_init(&o);
  o.dims = 3;
  o.n[2] = 8;
  o.D = 0.17;
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EUNSTABLE, ctx);
  CHECK(strstr(strata_context_error(ctx), "0.166667") != NULL);
  o.op = STRATA_HEAT_FE27;
  o.D = 0.5001;
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EUNSTABLE, ctx);
  printf("  refused: %s\n", strata_context_error(ctx));
  o.D = 0.5;
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  strata_heat_destroy(&h);
  /* at the limit the fastest mode (the checkerboard) keeps its size: g = -1
   * for FD; beyond it the scheme would grow, which is why it is refused */

  strata_heat_options_init(&o);
  o.op = STRATA_HEAT_FE27; /* 2D */
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EINVAL, ctx);
  strata_heat_options_init(&o);
  o.bc.kind[0] = STRATA_BC_PERIODIC;
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EINVAL, ctx);
  strata_heat_options_init(&o);
  o.bc.kind[2] = STRATA_BC_NONE;
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EINVAL, ctx);
  strata_heat_options_init(&o);
  o.fuse = 9;
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EINVAL, ctx);
  strata_heat_options_init(&o);
  o.D = NAN;
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EINVAL, ctx);
  strata_heat_options_init(&o);
  o.n[2] = 4; /* 2D with a z size */
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EINVAL, ctx);
  strata_heat_options_init(&o);
  o.n[0] = 3;
  o.fuse = 6;
  strata_boundary_uniform(&o.bc, STRATA_BC_NEUMANN, 0);
  CHECK_STATUS(strata_heat_create(ctx, &o, &h), STRATA_EINVAL, ctx);
  CHECK(h == NULL);
  o.fuse = 0; /* automatic: shrinks to fit */
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  strata_heat_info info;
  CHECK_OK(strata_heat_get_info(h, &info), ctx);
  CHECK(info.fuse == 3);
  CHECK_STATUS(strata_heat_step(h, -1), STRATA_EINVAL, ctx);
  strata_heat_destroy(&h);
  strata_heat_destroy(&h); /* NULL is harmless */
  strata_context_destroy(&ctx);
  return 0;
}

/* One bad option at a time: create refuses it and names it, with its
 * value, beside the message. */
static const struct {
  const char *arg, *value;
  strata_status status;
} heat_bad[] = {
    {"D", "0.3", STRATA_EUNSTABLE},
    {"D", "-1", STRATA_EINVAL},
    {"dims", "4", STRATA_EINVAL},
    {"op", "7", STRATA_EINVAL},
    {"op", "1", STRATA_EINVAL}, /* FE27 in 2D */
    {"n[1]", "0", STRATA_EINVAL},
    {"n[2]", "5", STRATA_EINVAL},
    {"fuse", "9", STRATA_EINVAL},
    {"fuse", "6", STRATA_EINVAL}, /* more than the Neumann axis holds */
    {"bc.kind[3]", "3", STRATA_EINVAL},
    {"bc.value[0]", "nan", STRATA_EINVAL},
    {"bc.kind[1]", "0", STRATA_EINVAL}, /* x-low periodic, x-high not */
    {"precision", "2", STRATA_EINVAL},
    {"check_every", "-1", STRATA_EINVAL},
};

static void heat_make_bad(strata_heat_options *o, int k) {
  strata_heat_options_init(o);
  switch (k) {
  case 0: o->D = 0.3; break;
  case 1: o->D = -1; break;
  case 2: o->dims = 4; break;
  case 3: o->op = (strata_heat_operator)7; break;
  case 4: o->op = STRATA_HEAT_FE27; break;
  case 5: o->n[1] = 0; break;
  case 6: o->n[2] = 5; break;
  case 7: o->fuse = 9; break;
  case 8:
    o->n[0] = 3, o->fuse = 6;
    strata_boundary_uniform(&o->bc, STRATA_BC_NEUMANN, 0);
    break;
  case 9: o->bc.kind[3] = STRATA_BC_NONE; break;
  case 10: o->bc.value[0] = NAN; break;
  case 11: o->bc.kind[0] = STRATA_BC_PERIODIC; break;
  case 12: o->precision = (strata_precision)2; break;
  case 13: o->check_every = -1; break;
  }
}

TEST(refusals_name_the_option) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_heat_options o;
  strata_heat *h = NULL;
  for (int k = 0; k < (int)(sizeof heat_bad / sizeof heat_bad[0]); k++) {
    heat_make_bad(&o, k);
    strata_status s = strata_heat_create(ctx, &o, &h);
    CHECKF(s == heat_bad[k].status && h == NULL, "case %d: %s (%s)", k,
           strata_status_name(s), strata_context_error(ctx));
    CHECK_ARG(ctx, heat_bad[k].arg, heat_bad[k].value);
  }
  heat_make_bad(&o, -1);
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  CHECK_STATUS(strata_heat_step(h, -3), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "nsteps", "-3");
  CHECK_STATUS(strata_heat_set_initial(h, NULL, NULL), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "fn", "NULL");
  strata_heat_destroy(&h);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(backend_without_fused_kernel) {
  /* A backend whose apply_fused is NULL: an explicit fuse > 1 is refused
   * with ENOTSUP; the automatic choice runs unfused through strata_apply
   * and gives the fused run's numbers (bit for bit: star stencil). */
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata__backend fake = *ctx->be;
  fake.apply_fused = NULL;
  const strata__backend *orig = ctx->be;
  strata_heat_options o;
  strata_heat_options_init(&o);
  o.n[0] = 67;
  o.n[1] = 45;
  strata_boundary_uniform(&o.bc, STRATA_BC_NEUMANN, 0);
  o.bc.kind[2] = STRATA_BC_DIRICHLET;
  o.bc.value[2] = 0.5;
  strata_heat *h[2] = {NULL, NULL};
  CHECK_OK(strata_heat_create(ctx, &o, &h[0]), ctx); /* fused (auto) */
  ctx->be = &fake;
  o.fuse = 4;
  CHECK_STATUS(strata_heat_create(ctx, &o, &h[1]), STRATA_ENOTSUP, ctx);
  CHECK(strstr(strata_context_error(ctx), "no fused-step kernel") != NULL);
  o.fuse = 0;
  CHECK_OK(strata_heat_create(ctx, &o, &h[1]), ctx);
  strata_heat_info info[2];
  CHECK_OK(strata_heat_get_info(h[1], &info[1]), ctx);
  CHECK(info[1].fuse == 1);
  ctx->be = orig;
  CHECK_OK(strata_heat_get_info(h[0], &info[0]), ctx);
  CHECK(info[0].fuse == 8);
  for (int q = 0; q < 2; q++) {
    ctx->be = q ? &fake : orig;
    CHECK_OK(strata_heat_set_initial(h[q], rnd_fn, NULL), ctx);
    CHECK_OK(strata_heat_step(h[q], 37), ctx);
  }
  ctx->be = orig;
  double diff;
  CHECK_OK(strata_field_diff(strata_heat_field(h[0]), strata_heat_field(h[1]),
                             STRATA_NORM_MAX, &diff), ctx);
  printf("  fused (s = %d) vs unfused, 37 steps: max difference %.1e\n",
         info[0].fuse, diff);
  CHECK(diff == 0);
  strata_heat_destroy(&h[0]);
  strata_heat_destroy(&h[1]);
  strata_context_destroy(&ctx);
  return 0;
}

static double huge_value(long i, long j, long k, void *u) {
  (void)u;
  return i == 3 && j == 4 && k == 0 ? 1e39 : 1.0;
}

/* A NaN or an infinity: refused by strata_heat_write (naming its index);
 * written through the field or made by the state itself, found by the
 * check every check_every steps, which names the step and the first bad
 * point; with check_every = 0 nothing looks. */
TEST(blowups_stop_the_run) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_heat_options o;
  strata_heat_options_init(&o);
  CHECK(o.check_every == STRATA_CHECK_EVERY);
  o.n[0] = o.n[1] = 32;
  o.check_every = 10;
  strata_heat *h = NULL;
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  double host[32 * 32], back[32 * 32];
  for (int p = 0; p < 32 * 32; p++) host[p] = 1.0;
  host[7 * 32 + 5] = NAN;
  CHECK_STATUS(strata_heat_write(h, host), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "host", "229");
  CHECKF(strstr(strata_context_error(ctx), "(5, 7)"), "%s",
         strata_context_error(ctx));
  CHECK_OK(strata_heat_read(h, back), ctx);
  for (int p = 0; p < 32 * 32; p++) CHECK(back[p] == 0.0);
  /* through the borrowed field: 9 steps pass no check, the 10th does; the
   * NaN spread 10 points (5-point star), to row 0 at i = 2..8 */
  CHECK_OK(strata_field_write(strata_heat_field(h), host), ctx);
  CHECK_OK(strata_heat_step(h, 9), ctx);
  CHECK_STATUS(strata_heat_step(h, 1), STRATA_ENONFINITE, ctx);
  CHECKF(strstr(strata_context_error(ctx),
                "heat: u is not finite after step 10: u(2, 0) = nan is the "
                "first of 187 non-finite points of 1024"),
         "%s", strata_context_error(ctx));
  CHECK(!strcmp(strata_status_name(STRATA_ENONFINITE), "STRATA_ENONFINITE"));
  strata_heat_info hi;
  CHECK_OK(strata_heat_get_info(h, &hi), ctx);
  CHECK(hi.steps == 10);
  strata_heat_destroy(&h);
  /* check_every = 0: no check */
  o.check_every = 0;
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  CHECK_OK(strata_field_write(strata_heat_field(h), host), ctx);
  CHECK_OK(strata_heat_step(h, 40), ctx);
  strata_heat_destroy(&h);
  /* fp32: a value beyond FLT_MAX is infinite in the field at once */
  o.precision = STRATA_F32;
  o.check_every = 16;
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  CHECK_OK(strata_heat_set_initial(h, huge_value, NULL), ctx);
  CHECK_STATUS(strata_heat_step(h, 20), STRATA_ENONFINITE, ctx);
  CHECKF(strstr(strata_context_error(ctx), "after step 16: u(") &&
             strstr(strata_context_error(ctx), ") = inf"),
         "%s", strata_context_error(ctx));
  strata_heat_destroy(&h);
  strata_context_destroy(&ctx);
  return 0;
}

RUN_TESTS(fourier_modes_exact, neumann_conserves_sum, dirichlet_steady_state,
          fused_matches_single_steps, fused_parts_equal_whole,
          orders_of_accuracy, stability_refusals,
          refusals_name_the_option, backend_without_fused_kernel,
          blowups_stop_the_run)
