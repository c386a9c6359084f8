/* The variable-coefficient multigrid (disc = STRATA_MG_FV), CPU:
 *
 *  - manufactured solutions of -div(beta grad u) + alpha u = f: the error
 *    against the exact solution falls at second order over three grids,
 *    for a smooth beta (Dirichlet with nonzero values, Neumann, periodic,
 *    the singular all-Neumann case, alpha > 0, 2D) and for a beta that
 *    jumps by 100x across a plane;
 *  - one full-multigrid solve reaches the discretisation error (within a
 *    small factor) for every smoother;
 *  - the residual factor per cycle, bounded for every smoother, cycle and
 *    bottom solver;
 *  - singular sources refused or projected; bad input refused;
 *  - CUDA against the CPU: the same solves (every smoother, cycle and
 *    bottom solver, 2D and 3D, every face kind) agree to rounding (skips
 *    without a GPU). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "runner.h"

#define PI 3.14159265358979323846

static strata_context *make_ctx_on(strata_backend b) {
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = b;
  o.tune_cache = "";
  strata_context *ctx = NULL;
  if (strata_context_create(&ctx, &o) != STRATA_OK) return NULL;
  return ctx;
}

static strata_context *make_ctx(void) {
  return make_ctx_on(STRATA_BACKEND_CPU);
}

/* ---- the problems --------------------------------------------------------- */

enum { P_SMOOTH, P_MIXED, P_JUMP, P_NEUMANN, P_ALPHA, P_2D };

typedef struct problem {
  int id, dims;
  strata_bc_kind bc[6];
  double val[6];
  double alpha;
  const char *name;
} problem;

#define D STRATA_BC_DIRICHLET
#define N STRATA_BC_NEUMANN
#define P STRATA_BC_PERIODIC
static const problem problems[] = {
    {P_SMOOTH, 3, {D, D, D, D, D, D}, {0}, 0, "smooth beta, Dirichlet 0"},
    {P_MIXED, 3, {D, D, N, N, P, P}, {0.5, 1.75}, 0,
     "smooth beta, Dirichlet 0.5|1.75 on x, Neumann y, periodic z"},
    {P_JUMP, 3, {D, D, D, D, D, D}, {0}, 0, "beta 1 | 100 across x = 1/2"},
    {P_NEUMANN, 3, {N, N, N, N, N, N}, {0}, 0, "smooth beta, all Neumann"},
    {P_ALPHA, 3, {P, P, P, P, P, P}, {0}, 2, "periodic, alpha = 2"},
    {P_2D, 2, {D, D, N, N}, {0}, 0, "2D, Dirichlet x, Neumann y"}};
#undef D
#undef N
#undef P

/* The HPGMG-type coefficient 1 + 0.25 sin sin (sin) and its gradient. */
static double beta_s(int dims, const double *x, double g[3]) {
  double s[3], c[3];
  for (int a = 0; a < 3; a++) {
    s[a] = a < dims ? sin(2 * PI * x[a]) : 1;
    c[a] = a < dims ? cos(2 * PI * x[a]) : 0;
  }
  g[0] = 0.5 * PI * c[0] * s[1] * s[2];
  g[1] = 0.5 * PI * s[0] * c[1] * s[2];
  g[2] = 0.5 * PI * s[0] * s[1] * c[2];
  return 1 + 0.25 * s[0] * s[1] * s[2];
}

/* The jump case: u = phi(x) sin(pi y) sin(pi z), beta phi' = cos(pi x) - C
 * with C making phi(1) = 0. */
#define BL 1.0
#define BR 100.0
static double jump_c(void) {
  return (2 / PI) * (1 / BL - 1 / BR) / (1 / BL + 1 / BR);
}
static double jump_phi(double x) {
  double c = jump_c();
  if (x <= 0.5) return (sin(PI * x) / PI - c * x) / BL;
  return (1 / PI - c * 0.5) / BL + ((sin(PI * x) - 1) / PI - c * (x - 0.5)) / BR;
}

/* The exact solution u, its gradient and Laplacian at x. */
static double exact(const problem *p, const double *x, double g[3],
                    double *lap) {
  const double sx = sin(PI * x[0]), sy = sin(PI * x[1]), sz = sin(PI * x[2]);
  const double cx = cos(PI * x[0]), cy = cos(PI * x[1]), cz = cos(PI * x[2]);
  switch (p->id) {
  case P_SMOOTH:
    g[0] = PI * cx * sy * sz, g[1] = PI * sx * cy * sz, g[2] = PI * sx * sy * cz;
    *lap = -3 * PI * PI * sx * sy * sz;
    return sx * sy * sz;
  case P_MIXED: {
    const double a = p->val[0], b = p->val[1];
    const double X = x[0] * (1 - x[0]), Y = cy,
                 Z = 1 + 0.5 * sin(2 * PI * x[2]);
    const double X1 = 1 - 2 * x[0], Y1 = -PI * sy,
                 Z1 = PI * cos(2 * PI * x[2]);
    g[0] = (b - a) + X1 * Y * Z, g[1] = X * Y1 * Z, g[2] = X * Y * Z1;
    *lap = -2 * Y * Z - PI * PI * X * Y * Z -
           2 * PI * PI * sin(2 * PI * x[2]) * X * Y;
    return a + (b - a) * x[0] + X * Y * Z;
  }
  case P_NEUMANN:
    g[0] = -PI * sx * cy * cz, g[1] = -PI * cx * sy * cz,
    g[2] = -PI * cx * cy * sz;
    *lap = -3 * PI * PI * cx * cy * cz;
    return cx * cy * cz;
  case P_ALPHA: {
    const double u = sin(2 * PI * x[0]) * cos(2 * PI * x[1]) +
                     0.5 * sin(2 * PI * x[2]);
    g[0] = 2 * PI * cos(2 * PI * x[0]) * cos(2 * PI * x[1]);
    g[1] = -2 * PI * sin(2 * PI * x[0]) * sin(2 * PI * x[1]);
    g[2] = PI * cos(2 * PI * x[2]);
    *lap = -8 * PI * PI * sin(2 * PI * x[0]) * cos(2 * PI * x[1]) -
           2 * PI * PI * sin(2 * PI * x[2]);
    return u;
  }
  case P_2D:
    g[0] = PI * cx * cy, g[1] = -PI * sx * sy, g[2] = 0;
    *lap = -2 * PI * PI * sx * cy;
    return sx * cy;
  default: /* P_JUMP */
    g[0] = g[1] = g[2] = 0;
    *lap = 0;
    return jump_phi(x[0]) * sy * sz;
  }
}

static double beta_at(const problem *p, const double *x) {
  double g[3];
  if (p->id == P_JUMP) return x[0] < 0.5 ? BL : BR;
  return beta_s(p->dims, x, g);
}

static double source_at(const problem *p, const double *x) {
  double gu[3], gb[3], lap;
  double u = exact(p, x, gu, &lap);
  if (p->id == P_JUMP) {
    /* -(beta phi')' S - beta phi (S'' along y and z) */
    double S = sin(PI * x[1]) * sin(PI * x[2]);
    double b = x[0] < 0.5 ? BL : BR;
    return (PI * sin(PI * x[0]) + 2 * PI * PI * b * jump_phi(x[0])) * S;
  }
  double b = beta_s(p->dims, x, gb);
  return -(b * lap + gb[0] * gu[0] + gb[1] * gu[1] + gb[2] * gu[2]) +
         p->alpha * u;
}

/* ---- solving ------------------------------------------------------------- */

static void options_for(const problem *p, long n, strata_mg_options *o) {
  strata_mg_options_init(o);
  o->disc = STRATA_MG_FV;
  o->dims = p->dims;
  for (int a = 0; a < 3; a++) o->n[a] = a < p->dims ? (size_t)n : 1;
  o->h = 1.0 / (double)n;
  for (int f = 0; f < 6; f++) {
    o->bc.kind[f] = f < 2 * p->dims ? p->bc[f] : STRATA_BC_DIRICHLET;
    o->bc.value[f] = p->val[f];
  }
  /* the cell-centre samples of a zero-mean f have a mean of O(h^2) */
  o->project = p->id == P_NEUMANN;
  o->pre_fine = o->pre = o->post = 2;
  o->max_cycles = 60;
  /* the algebraic error far below the discretisation error (>= 1e-5) */
  o->fmg = 1;
  o->rtol = 1e-9;
}

/* Creates the solver of p on n cells per axis with o's method, sets the
 * coefficients and the source; *phi = 0. */
static int setup(strata_context *ctx, const problem *p,
                 const strata_mg_options *o, strata_mg **mg,
                 strata_field **phi, strata_field **psi, double **exact_u) {
  const long n = (long)o->n[0];
  const size_t cells = o->n[0] * o->n[1] * o->n[2];
  CHECK_OK(strata_mg_create(ctx, o, mg), ctx);
  double *beta = malloc(cells * sizeof *beta), *f = malloc(cells * sizeof *f);
  double *alpha = malloc(cells * sizeof *alpha), *u = malloc(cells * sizeof *u);
  CHECK(beta && f && alpha && u);
  for (size_t q = 0; q < cells; q++) {
    long i = (long)(q % o->n[0]), j = (long)(q / o->n[0] % o->n[1]),
         k = (long)(q / (o->n[0] * o->n[1]));
    double x[3] = {(i + 0.5) / n, (j + 0.5) / n,
                   p->dims == 3 ? (k + 0.5) / n : 0.5};
    double g[3], lap;
    beta[q] = beta_at(p, x);
    alpha[q] = p->alpha;
    f[q] = source_at(p, x);
    u[q] = exact(p, x, g, &lap);
  }
  CHECK_OK(strata_mg_set_coefficients(*mg, beta, p->alpha > 0 ? alpha : NULL),
           ctx);
  strata_field_desc d = {o->dims, {o->n[0], o->n[1], o->n[2]}, 1, STRATA_F64};
  CHECK_OK(strata_field_create(ctx, &d, phi), ctx);
  CHECK_OK(strata_field_create(ctx, &d, psi), ctx);
  CHECK_OK(strata_field_write(*psi, f), ctx);
  CHECK_OK(strata_field_fill(*phi, 0), ctx);
  free(beta);
  free(f);
  free(alpha);
  *exact_u = u;
  return 0;
}

/* max |phi - u| (the singular case: both with their means removed). */
static int max_error(const problem *p, const strata_field *phi, double *u,
                     size_t cells, double *err) {
  double *v = malloc(cells * sizeof *v);
  CHECK(v);
  CHECK(strata_field_read(phi, v) == STRATA_OK);
  double mu = 0, mv = 0;
  if (p->id == P_NEUMANN) {
    for (size_t q = 0; q < cells; q++) mu += u[q], mv += v[q];
    mu /= (double)cells, mv /= (double)cells;
  }
  double e = 0;
  for (size_t q = 0; q < cells; q++)
    e = fmax(e, fabs((v[q] - mv) - (u[q] - mu)));
  free(v);
  *err = e;
  return 0;
}

/* Solves p on n cells with o's method (NULL: FMG + V(2,2) GSRB to 1e-9) and
 * returns the max error and the result. */
static int solve_error(strata_context *ctx, const problem *p, long n,
                       const strata_mg_options *method, double *err,
                       strata_mg_result *res) {
  strata_mg_options o;
  options_for(p, n, &o);
  if (method) {
    o.smoother = method->smoother;
    o.cycle = method->cycle;
    o.fmg = method->fmg;
    o.max_cycles = method->max_cycles;
    o.rtol = method->rtol;
    o.pre_fine = method->pre_fine;
    o.pre = method->pre;
    o.post = method->post;
    o.bottom = method->bottom;
  }
  strata_mg *mg = NULL;
  strata_field *phi = NULL, *psi = NULL;
  double *u = NULL;
  if (setup(ctx, p, &o, &mg, &phi, &psi, &u)) return 1;
  CHECK_OK(strata_mg_solve(mg, phi, psi, res), ctx);
  int rc = max_error(p, phi, u, o.n[0] * o.n[1] * o.n[2], err);
  free(u);
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_mg_destroy(&mg);
  return rc;
}

/* ---- second order ---------------------------------------------------------- */

TEST(second_order) {
  strata_context *ctx = make_ctx();
  CHECK(ctx != NULL);
  for (size_t c = 0; c < sizeof problems / sizeof *problems; c++) {
    const problem *p = &problems[c];
    const long n0 = p->dims == 3 ? 16 : 32;
    double e[3];
    for (int g = 0; g < 3; g++) {
      strata_mg_result r;
      if (solve_error(ctx, p, n0 << g, NULL, &e[g], &r)) return 1;
      CHECKF(r.converged, "%s, n = %ld: not converged (%d cycles, relative "
             "%.3g)", p->name, n0 << g, r.cycles, r.relative);
    }
    double o1 = log2(e[0] / e[1]), o2 = log2(e[1] / e[2]);
    printf("  %-58s errors %.3e %.3e %.3e, orders %.2f %.2f\n", p->name, e[0],
           e[1], e[2], o1, o2);
    CHECKF(o1 > 1.8 && o2 > 1.8 && o1 < 2.3 && o2 < 2.3,
           "%s: orders %.2f %.2f", p->name, o1, o2);
  }
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- full multigrid and the convergence factor ------------------------------ */

static void method(strata_mg_options *m, strata_mg_smoother sm,
                   strata_mg_cycle cyc, int fmg, int cycles, int sweeps) {
  strata_mg_options_init(m);
  m->smoother = sm;
  m->cycle = cyc;
  m->fmg = fmg;
  m->max_cycles = cycles;
  m->rtol = 0;
  m->pre_fine = m->pre = m->post = sweeps;
  m->bottom = STRATA_MG_BOTTOM_DEFAULT;
}

/* One FMG solve (one cycle of opt.cycle per level, the finest included)
 * against the error of the converged solution: within 1.5x on the smooth
 * coefficient for V and F cycles; across the 100x jump the F-cycle stays
 * within 1.5x and the V-cycle within 2.5x.  32^3 with every smoother,
 * 64^3 with GSRB. */
TEST(fmg_reaches_discretisation_error) {
  strata_context *ctx = make_ctx();
  CHECK(ctx != NULL);
  const problem *cases[] = {&problems[0], &problems[2]};
  const strata_mg_smoother sm[3] = {STRATA_MG_GSRB, STRATA_MG_CHEBYSHEV,
                                    STRATA_MG_JACOBI};
  const int sweeps[3] = {2, 4, 4};
  const char *names[3] = {"GSRB (2,2)", "Chebyshev (4,4)", "Jacobi (4,4)"};
  for (int c = 0; c < 2; c++)
    for (long n = 32; n <= 64; n *= 2) {
      double exact_err;
      strata_mg_result r;
      if (solve_error(ctx, cases[c], n, NULL, &exact_err, &r)) return 1;
      for (int s = 0; s < (n == 32 ? 3 : 1); s++) /* 64^3: GSRB only */
        for (int cyc = 0; cyc < 2; cyc++) {
          strata_mg_options m;
          method(&m, sm[s], cyc ? STRATA_MG_F : STRATA_MG_V, 1, 1, sweeps[s]);
          double e;
          if (solve_error(ctx, cases[c], n, &m, &e, &r)) return 1;
          printf("  %-28s %3ld^3 %-15s %c-cycles: one FMG: error %.3e = "
                 "%.2f x the discretisation error\n", cases[c]->name, n,
                 names[s], cyc ? 'F' : 'V', e, e / exact_err);
          CHECKF(r.cycles == 1, "%d cycles", r.cycles);
          double bound = c == 1 && !cyc ? 2.5 : 1.5;
          CHECKF(e < bound * exact_err, "%s %s %ld: FMG error %.3e vs %.3e",
                 cases[c]->name, names[s], n, e, exact_err);
        }
    }
  strata_context_destroy(&ctx);
  return 0;
}

/* Random source (mean removed where singular), from phi = 0: the mean
 * factor over cycles 2..k and the largest single one. */
static int factor_case(strata_context *ctx, const problem *p, long n,
                       const strata_mg_options *m, double *mean, double *worst) {
  strata_mg_options o;
  options_for(p, n, &o);
  o.smoother = m->smoother;
  o.cycle = m->cycle;
  o.pre_fine = o.pre = o.post = m->pre;
  o.bottom = m->bottom;
  o.fmg = 0;
  o.max_cycles = 8;
  o.rtol = 0;
  o.stall = 0;
  strata_mg *mg = NULL;
  strata_field *phi = NULL, *psi = NULL;
  double *u = NULL;
  if (setup(ctx, p, &o, &mg, &phi, &psi, &u)) return 1;
  free(u);
  CHECK_OK(strata_field_fill_random(psi, 7, -1, 1), ctx);
  if (p->id == P_NEUMANN) {
    double s;
    CHECK_OK(strata_field_norm(psi, STRATA_NORM_SUM, &s), ctx);
    CHECK_OK(ctx->be->mg_axpby(psi, NULL, 0, 1,
                               -s / (double)(o.n[0] * o.n[1] * o.n[2]), NULL),
             ctx);
  }
  strata_mg_result r;
  CHECK_OK(strata_mg_solve(mg, phi, psi, &r), ctx);
  CHECK(r.cycles == 8);
  *worst = 0;
  for (int k = 2; k <= r.cycles; k++)
    *worst = fmax(*worst, r.history[k] / r.history[k - 1]);
  *mean = pow(r.history[r.cycles] / r.history[1], 1.0 / (r.cycles - 1));
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_mg_destroy(&mg);
  return 0;
}

TEST(convergence_factor) {
  strata_context *ctx = make_ctx();
  CHECK(ctx != NULL);
  struct {
    strata_mg_smoother sm;
    strata_mg_cycle cyc;
    int sweeps;
    strata_mg_bottom bottom;
    double bound;
    const char *name;
  } ms[] = {
      {STRATA_MG_GSRB, STRATA_MG_V, 2, STRATA_MG_BOTTOM_CG, 0.15, "GSRB V(2,2)"},
      {STRATA_MG_GSRB, STRATA_MG_F, 2, STRATA_MG_BOTTOM_CG, 0.15, "GSRB F(2,2)"},
      {STRATA_MG_GSRB, STRATA_MG_W, 1, STRATA_MG_BOTTOM_SMOOTH, 0.3,
       "GSRB W(1,1), smoothing bottom"},
      {STRATA_MG_CHEBYSHEV, STRATA_MG_V, 4, STRATA_MG_BOTTOM_CG, 0.2,
       "Chebyshev V(4,4)"},
      {STRATA_MG_JACOBI, STRATA_MG_V, 2, STRATA_MG_BOTTOM_CG, 0.45,
       "Jacobi V(2,2)"}};
  const int pc[] = {0, 1, 2, 3, 4, 5};
  for (size_t m = 0; m < sizeof ms / sizeof *ms; m++)
    for (size_t c = 0; c < sizeof pc / sizeof *pc; c++) {
      const problem *p = &problems[pc[c]];
      strata_mg_options mo;
      method(&mo, ms[m].sm, ms[m].cyc, 0, 8, ms[m].sweeps);
      mo.bottom = ms[m].bottom;
      double mean, worst;
      long n = p->dims == 3 ? 32 : 64;
      if (factor_case(ctx, p, n, &mo, &mean, &worst)) return 1;
      printf("  %-30s %-58s factor %.3f (worst %.3f)\n", ms[m].name, p->name,
             mean, worst);
      CHECKF(worst < ms[m].bound, "%s, %s: factor %.3f >= %.2f", ms[m].name,
             p->name, worst, ms[m].bound);
    }
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- singular problems and bad input ---------------------------------------- */

TEST(singular_sources) {
  strata_context *ctx = make_ctx();
  CHECK(ctx != NULL);
  strata_mg_options o;
  options_for(&problems[3], 16, &o);
  o.project = 0;
  strata_mg *mg = NULL;
  strata_field *phi = NULL, *psi = NULL;
  double *u = NULL;
  if (setup(ctx, &problems[3], &o, &mg, &phi, &psi, &u)) return 1;
  free(u);
  CHECK_OK(strata_field_fill(psi, 0.25), ctx);
  CHECK_OK(strata_field_fill(phi, 3), ctx);
  strata_mg_result r;
  CHECK_STATUS(strata_mg_solve(mg, phi, psi, &r), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "mean") != NULL);
  double v;
  CHECK_OK(strata_field_norm(phi, STRATA_NORM_MAX, &v), ctx);
  CHECK(v == 3); /* untouched */
  strata_mg_destroy(&mg);
  o.project = 1;
  CHECK_OK(strata_mg_create(ctx, &o, &mg), ctx);
  CHECK_OK(strata_mg_solve(mg, phi, psi, &r), ctx);
  CHECK(fabs(r.source_mean - 0.25) < 1e-14);
  CHECK(r.converged);
  double sum;
  CHECK_OK(strata_field_norm(phi, STRATA_NORM_SUM, &sum), ctx);
  CHECK(fabs(sum) < 1e-9);
  strata_mg_destroy(&mg);
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(bad_input) {
  strata_context *ctx = make_ctx();
  CHECK(ctx != NULL);
  strata_mg_options o;
  options_for(&problems[0], 8, &o);
  strata_mg *mg = NULL;
  o.precision = STRATA_F32;
  CHECK_STATUS(strata_mg_create(ctx, &o, &mg), STRATA_EINVAL, ctx);
  CHECK(strcmp(strata_context_error_arg(ctx), "precision") == 0);
  CHECK(mg == NULL);
  o.precision = STRATA_F64;
  o.smoother = (strata_mg_smoother)9;
  CHECK_STATUS(strata_mg_create(ctx, &o, &mg), STRATA_EINVAL, ctx);
  CHECK(strcmp(strata_context_error_arg(ctx), "smoother") == 0);
  o.smoother = STRATA_MG_GSRB;
  o.omega = 1.5;
  CHECK_STATUS(strata_mg_create(ctx, &o, &mg), STRATA_EINVAL, ctx);
  o.omega = 0;
  o.face_mean = (strata_mg_face_mean)5;
  CHECK_STATUS(strata_mg_create(ctx, &o, &mg), STRATA_EINVAL, ctx);
  o.face_mean = STRATA_MG_HARMONIC;
  /* recordings need a bottom solve that reads nothing back */
  o.graph = 1;
  CHECK_STATUS(strata_mg_create(ctx, &o, &mg), STRATA_EINVAL, ctx);
  CHECK(strcmp(strata_context_error_arg(ctx), "bottom") == 0);
  o.bottom = STRATA_MG_BOTTOM_SMOOTH;
  o.profile = 1;
  CHECK_STATUS(strata_mg_create(ctx, &o, &mg), STRATA_EINVAL, ctx);
  o.profile = 0;
  o.graph = 2;
  CHECK_STATUS(strata_mg_create(ctx, &o, &mg), STRATA_EINVAL, ctx);
  o.graph = 0;
  o.bottom = STRATA_MG_BOTTOM_DEFAULT;
  /* Chebyshev and GSRB need the FV discretisation */
  strata_mg_options fd;
  strata_mg_options_init(&fd);
  fd.disc = STRATA_MG_FD;
  fd.smoother = STRATA_MG_GSRB;
  CHECK_STATUS(strata_mg_create(ctx, &fd, &mg), STRATA_EINVAL, ctx);
  fd.smoother = STRATA_MG_JACOBI;
  fd.graph = 1;
  CHECK_STATUS(strata_mg_create(ctx, &fd, &mg), STRATA_EINVAL, ctx);
  fd.graph = 0;
  fd.smoother = STRATA_MG_JACOBI;
  fd.n[0] = fd.n[1] = fd.n[2] = 7;
  CHECK_OK(strata_mg_create(ctx, &fd, &mg), ctx);
  CHECK_STATUS(strata_mg_set_coefficients(mg, NULL, NULL), STRATA_EINVAL, ctx);
  strata_mg_destroy(&mg);
  /* coefficients out of range name the cell */
  CHECK_OK(strata_mg_create(ctx, &o, &mg), ctx);
  double beta[512], alpha[512];
  for (int q = 0; q < 512; q++) beta[q] = 1, alpha[q] = 0;
  beta[3 + 8 * (2 + 8 * 1)] = 0;
  CHECK_STATUS(strata_mg_set_coefficients(mg, beta, NULL), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "(3, 2, 1)") != NULL);
  beta[3 + 8 * (2 + 8 * 1)] = 1;
  alpha[5] = -1;
  CHECK_STATUS(strata_mg_set_coefficients(mg, beta, alpha), STRATA_EINVAL, ctx);
  alpha[5] = NAN;
  CHECK_STATUS(strata_mg_set_coefficients(mg, beta, alpha), STRATA_EINVAL, ctx);
  CHECK(strcmp(strata_context_error_arg(ctx), "alpha") == 0);
  /* a NaN source: the first bad point named */
  strata_field_desc d = {3, {8, 8, 8}, 1, STRATA_F64};
  strata_field *phi = NULL, *psi = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &phi), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &psi), ctx);
  CHECK_OK(strata_field_fill(psi, NAN), ctx);
  CHECK_STATUS(strata_mg_solve(mg, phi, psi, NULL), STRATA_ENONFINITE, ctx);
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_mg_destroy(&mg);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- CUDA against the CPU ---------------------------------------------------- */

/* One solve of p with method m on ctx: the solution and the history. */
static int solve_on(strata_context *ctx, const problem *p, long n,
                    const strata_mg_options *m, double *sol,
                    strata_mg_result *res, double *hist) {
  strata_mg_options o;
  options_for(p, n, &o);
  o.smoother = m->smoother;
  o.cycle = m->cycle;
  o.fmg = m->fmg;
  o.max_cycles = m->max_cycles;
  o.rtol = 0;
  o.stall = 0;
  o.pre_fine = o.pre = o.post = m->pre;
  o.bottom = m->bottom;
  o.graph = m->graph;
  o.coarse_max_sweeps = m->coarse_max_sweeps;
  strata_mg *mg = NULL;
  strata_field *phi = NULL, *psi = NULL;
  double *u = NULL;
  if (setup(ctx, p, &o, &mg, &phi, &psi, &u)) return 1;
  free(u);
  CHECK_OK(strata_mg_solve(mg, phi, psi, res), ctx);
  if (o.graph) {
    /* again into the same phi (a replay where the backend records), then
       into another field (recorded anew): the same result each time */
    strata_field_desc d;
    strata_field *phi2 = NULL;
    CHECK_OK(strata_field_get_desc(phi, &d), ctx);
    d.ghost = 2;
    CHECK_OK(strata_field_create(ctx, &d, &phi2), ctx);
    for (int q = 0; q < 2; q++) {
      strata_field *f = q ? phi2 : phi;
      double *first = malloc((size_t)o.n[0] * o.n[1] * o.n[2] * sizeof *first);
      double *again = malloc((size_t)o.n[0] * o.n[1] * o.n[2] * sizeof *again);
      CHECK(first && again);
      CHECK_OK(strata_field_read(phi, first), ctx);
      CHECK_OK(strata_field_fill(f, 0), ctx);
      strata_mg_result r2;
      CHECK_OK(strata_mg_solve(mg, f, psi, &r2), ctx);
      CHECK_OK(strata_field_read(f, again), ctx);
      CHECK(r2.cycles == res->cycles);
      CHECK(memcmp(first, again, (size_t)o.n[0] * o.n[1] * o.n[2] *
                                     sizeof *first) == 0);
      free(first);
      free(again);
    }
    strata_field_destroy(&phi2);
  }
  for (int k = 0; k <= res->cycles; k++) hist[k] = res->history[k];
  CHECK_OK(strata_field_read(phi, sol), ctx);
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_mg_destroy(&mg);
  return 0;
}

TEST(cpu_vs_cuda) {
  char why[256];
  if (!strata_backend_available(STRATA_BACKEND_CUDA, why, sizeof why)) {
    SKIP("no CUDA: %s", why);
  }
  strata_context *cpu = make_ctx(), *gpu = make_ctx_on(STRATA_BACKEND_CUDA);
  CHECK(cpu && gpu);
  struct {
    strata_mg_smoother sm;
    strata_mg_cycle cyc;
    int fmg, sweeps;
    strata_mg_bottom bottom;
    int graph;
  } ms[] = {{STRATA_MG_GSRB, STRATA_MG_V, 1, 2, STRATA_MG_BOTTOM_CG, 0},
            {STRATA_MG_GSRB, STRATA_MG_F, 0, 2, STRATA_MG_BOTTOM_SMOOTH, 0},
            {STRATA_MG_CHEBYSHEV, STRATA_MG_W, 1, 3, STRATA_MG_BOTTOM_CG, 0},
            {STRATA_MG_JACOBI, STRATA_MG_V, 0, 2, STRATA_MG_BOTTOM_CG, 0},
            /* recorded: the cycle and the FMG pass as CUDA graphs */
            {STRATA_MG_GSRB, STRATA_MG_V, 1, 2, STRATA_MG_BOTTOM_SMOOTH, 1},
            {STRATA_MG_CHEBYSHEV, STRATA_MG_F, 1, 3, STRATA_MG_BOTTOM_SMOOTH,
             1}};
  /* besides the problems (3D at 24^3): alpha with Dirichlet and Neumann
   * faces at 40^3, several tiles and z chunks of the one-pass kernels */
  const problem alpha_faces = {
      P_ALPHA, 3,
      {STRATA_BC_DIRICHLET, STRATA_BC_NEUMANN, STRATA_BC_DIRICHLET,
       STRATA_BC_DIRICHLET, STRATA_BC_NEUMANN, STRATA_BC_DIRICHLET},
      {0}, 2, "alpha = 2, Dirichlet and Neumann faces, 40^3"};
  const size_t np = sizeof problems / sizeof *problems;
  for (size_t c = 0; c <= np; c++)
    for (size_t m = 0; m < sizeof ms / sizeof *ms; m++) {
      const problem *p = c < np ? &problems[c] : &alpha_faces;
      const long n = p->dims == 3 && c < np ? 24 : 40;
      const size_t cells = (size_t)n * (size_t)n * (p->dims == 3 ? n : 1);
      strata_mg_options mo;
      method(&mo, ms[m].sm, ms[m].cyc, ms[m].fmg, 4, ms[m].sweeps);
      mo.bottom = ms[m].bottom;
      mo.graph = ms[m].graph;
      if (mo.graph) mo.coarse_max_sweeps = 8;
      double *a = malloc(cells * sizeof *a), *b = malloc(cells * sizeof *b);
      double ha[8], hb[8];
      strata_mg_result ra, rb;
      CHECK(a && b);
      if (solve_on(cpu, p, n, &mo, a, &ra, ha)) return 1;
      if (solve_on(gpu, p, n, &mo, b, &rb, hb)) return 1;
      CHECK(ra.cycles == rb.cycles);
      double scale = 0, diff = 0;
      for (size_t q = 0; q < cells; q++) {
        scale = fmax(scale, fabs(a[q]));
        diff = fmax(diff, fabs(a[q] - b[q]));
      }
      double hd = 0;
      for (int k = 0; k <= ra.cycles; k++)
        hd = fmax(hd, fabs(ha[k] - hb[k]) / ha[0]);
      printf("  %-58s method %zu: max |gpu - cpu| %.2e of %.2e, history "
             "%.2e\n", p->name, m, diff, scale, hd);
      CHECKF(diff <= 1e-9 * scale && hd <= 1e-9, "%s, method %zu", p->name,
             m);
      free(a);
      free(b);
    }
  strata_context_destroy(&cpu);
  strata_context_destroy(&gpu);
  return 0;
}

/* graph = 1 on the CPU (which runs the work directly): the fixed bottom
 * count, one FMG solve at the discretisation error, repeat solves (same
 * and another phi) equal. */
TEST(graph_option_cpu) {
  strata_context *ctx = make_ctx();
  CHECK(ctx != NULL);
  strata_mg_options m;
  method(&m, STRATA_MG_GSRB, STRATA_MG_V, 1, 1, 2);
  m.bottom = STRATA_MG_BOTTOM_SMOOTH;
  m.graph = 1;
  m.coarse_max_sweeps = 8;
  const problem *p = &problems[0];
  double *sol = malloc(32 * 32 * 32 * sizeof *sol), hist[4];
  strata_mg_result r;
  CHECK(sol);
  if (solve_on(ctx, p, 32, &m, sol, &r, hist)) return 1;
  double e = 0, exact_err;
  for (long k = 0; k < 32; k++)
    for (long j = 0; j < 32; j++)
      for (long i = 0; i < 32; i++) {
        double x[3] = {(i + 0.5) / 32, (j + 0.5) / 32, (k + 0.5) / 32}, g[3],
               lap;
        e = fmax(e, fabs(sol[i + 32 * (j + 32 * k)] - exact(p, x, g, &lap)));
      }
  strata_mg_result rc;
  if (solve_error(ctx, p, 32, NULL, &exact_err, &rc)) return 1;
  printf("  graph = 1, CPU, 32^3: one FMG error %.3e = %.2f x the "
         "discretisation error\n", e, e / exact_err);
  CHECK(e < 1.5 * exact_err);
  free(sol);
  strata_context_destroy(&ctx);
  return 0;
}

RUN_TESTS(second_order, fmg_reaches_discretisation_error, convergence_factor,
          singular_sources, bad_input, graph_option_cpu, cpu_vs_cuda)
