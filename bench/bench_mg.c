/* Multigrid benchmark: V-cycles per second and unknowns per
 * second of the Poisson solver on the reference paper's grids (129^3, 257^3
 * and 513x513x257 points with the Dirichlet boundary, i.e. 127^3, 255^3
 * and 511x511x255 unknowns), fp32 and fp64, with
 *   - the copy ceiling of the same run (strata_copy_kernel(in, out, NULL))
 *     and the finest level's Jacobi sweep as a percentage of it (3 streams:
 *     u and b read, the new u written);
 *   - the time per level and the finest level's share (a second, profiled
 *     solve: it waits for the device at every level change);
 *   - the convergence factor of the timed cycles (from phi = 0, random psi).
 * Prints markdown tables, and a warning on stderr when the copy ceiling
 * cannot be right (strata_bench_ceiling_suspect).
 *
 *   bench_mg [--quick] [--backend cpu|cuda] [--prec f32|f64|both]
 *            [--disc fe|fd] [--cycle v|f|w] [--cycles N] [--reps R]
 *            [--size NXxNYxNZ]...
 *
 * With --hpgmg [--smoother gsrb|cheb|jacobi] [--graph]: HPGMG-FV's comparison
 * problem instead (variable coefficients, disc = STRATA_MG_FV, fp64):
 * -div(beta grad u) = f on the unit cube, homogeneous Dirichlet faces,
 * beta = 1 + 0.25 sin(2 pi x) sin(2 pi y) sin(2 pi z), f from the exact
 * solution u = sin(pi x) sin(pi y) sin(pi z), on n^3 cells (default 64,
 * 128, 256; --quick 32, 64; --size NxNxN); per grid the time of one FMG
 * solve (median of R; one cycle per level, pre = post = 2), unknowns per
 * second, the max error against u, its ratio to the error of the
 * converged discrete solution, and the order against the previous grid.
 * --graph: recorded cycles (opt.graph, 8 smoothing steps at the bottom);
 * --tuning: the context's tuning switches (docs/tuning.md; mg_onepass=0
 * for the two-pass kernels).
 * After the table, per grid: the copy ceiling, the finest level's
 * smoothing step alone against it, and a profiled solve's time per level
 * (hp_where). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "core/internal.h"
#include "runner.h"
#include "strata.h"

#define DIE(ctx, expr)                                                         \
  do {                                                                         \
    strata_status s_ = (expr);                                                 \
    if (s_ != STRATA_OK) {                                                     \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #expr,        \
              strata_status_name(s_), strata_context_error(ctx));              \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
  strata_backend backend;
  size_t sizes[8][3];
  int nsizes;
  strata_precision prec[2];
  int nprec;
  strata_mg_discretization disc;
  strata_mg_cycle cycle;
  int cycles, reps;
  const char *tuning; /* --hpgmg: the context's tuning switches */
} cfg;

/* The reference paper's V-cycles/s on a Tesla C2050 (fp32, FE, V(2,1)),
 * printed as its comparison column. */
static const char *seed_ref(const size_t n[3]) {
  if (n[0] == 127 && n[1] == 127 && n[2] == 127) return "233";
  if (n[0] == 255 && n[1] == 255 && n[2] == 255) return "53";
  if (n[0] == 511 && n[1] == 511 && n[2] == 255) return "15";
  return "-";
}

static void usage(void) {
  fprintf(stderr,
          "usage: bench_mg [--quick] [--backend cpu|cuda] [--prec "
          "f32|f64|both] [--disc fe|fd]\n"
          "                [--cycle v|f|w] [--cycles N] [--reps R] [--size "
          "NXxNYxNZ]...\n"
          "       bench_mg --hpgmg [--smoother gsrb|cheb|jacobi] [--graph] "
          "[--quick] [--backend cpu|cuda]\n"
          "                [--reps R] [--size NxNxN]... [--tuning "
          "KEY=VALUE,...]\n");
}

/* ---- HPGMG-FV's comparison problem ------------------------------------- */

#define HP_PI 3.14159265358979323846

/* beta, f and u at a cell centre from sin and cos of pi x (s, c) and of
 * 2 pi x (S, C) per axis. */
static void hp_point(const double *s, const double *c, const double *S,
                     const double *C, double *beta, double *f, double *u) {
  const double b = 1 + 0.25 * S[0] * S[1] * S[2];
  const double gb[3] = {0.5 * HP_PI * C[0] * S[1] * S[2],
                        0.5 * HP_PI * S[0] * C[1] * S[2],
                        0.5 * HP_PI * S[0] * S[1] * C[2]};
  const double gu[3] = {HP_PI * c[0] * s[1] * s[2], HP_PI * s[0] * c[1] * s[2],
                        HP_PI * s[0] * s[1] * c[2]};
  *u = s[0] * s[1] * s[2];
  *beta = b;
  *f = 3 * HP_PI * HP_PI * b * *u -
       (gb[0] * gu[0] + gb[1] * gu[1] + gb[2] * gu[2]);
}

/* The problem on n^3 cells (x fastest): beta, f, the exact u, and w, a
 * buffer of the same size. */
typedef struct {
  long n;
  double *beta, *f, *u, *w;
} hp_problem;

static void hp_arrays(long n, hp_problem *P) {
  const size_t cells = (size_t)n * (size_t)n * (size_t)n;
  P->n = n;
  P->beta = malloc(cells * sizeof *P->beta);
  P->f = malloc(cells * sizeof *P->f);
  P->u = malloc(cells * sizeof *P->u);
  P->w = malloc(cells * sizeof *P->w);
  double *tab = malloc(4 * (size_t)n * sizeof *tab);
  if (!P->beta || !P->f || !P->u || !P->w || !tab) {
    fprintf(stderr, "bench_mg: out of host memory for %ld^3\n", n);
    exit(1);
  }
  /* the cube's axes share one table of sin/cos at the centres */
  for (long i = 0; i < n; i++) {
    const double x = (i + 0.5) / n;
    tab[4 * i] = sin(HP_PI * x);
    tab[4 * i + 1] = cos(HP_PI * x);
    tab[4 * i + 2] = sin(2 * HP_PI * x);
    tab[4 * i + 3] = cos(2 * HP_PI * x);
  }
  for (long k = 0; k < n; k++)
    for (long j = 0; j < n; j++)
      for (long i = 0; i < n; i++) {
        const long ix[3] = {i, j, k};
        double sv[3], cv[3], Sv[3], Cv[3];
        for (int a = 0; a < 3; a++) {
          sv[a] = tab[4 * ix[a]];
          cv[a] = tab[4 * ix[a] + 1];
          Sv[a] = tab[4 * ix[a] + 2];
          Cv[a] = tab[4 * ix[a] + 3];
        }
        const size_t q = (size_t)(i + n * (j + n * k));
        hp_point(sv, cv, Sv, Cv, &P->beta[q], &P->f[q], &P->u[q]);
      }
  free(tab);
}

static void hp_free(hp_problem *P) {
  free(P->beta);
  free(P->f);
  free(P->u);
  free(P->w);
}

/* The options of one FMG solve of the problem on n^3 cells (one V-cycle
 * per level, pre = post = 2 for GSRB, 4 for the others). */
static void hp_options(strata_mg_options *o, long n, strata_mg_smoother sm) {
  strata_mg_options_init(o);
  o->disc = STRATA_MG_FV;
  o->n[0] = o->n[1] = o->n[2] = (size_t)n;
  o->h = 1.0 / (double)n;
  o->smoother = sm;
  o->pre_fine = o->pre = o->post = sm == STRATA_MG_GSRB ? 2 : 4;
  o->fmg = 1;
  o->max_cycles = 1;
  o->rtol = 0;
}

/* Median seconds of reps solves (after a warm-up) from phi = 0; *res (may
 * be NULL) the last one's result. */
static double hp_time(strata_context *ctx, strata_mg *mg, strata_field *phi,
                      const strata_field *psi, int reps,
                      strata_mg_result *res) {
  double t[64];
  for (int r = 0; r <= reps; r++) {
    DIE(ctx, strata_field_fill(phi, 0));
    DIE(ctx, strata_context_sync(ctx));
    double t0 = strata_test_clock();
    DIE(ctx, strata_mg_solve(mg, phi, psi, res));
    DIE(ctx, strata_context_sync(ctx));
    if (r) t[r - 1] = strata_test_clock() - t0;
  }
  return median(t, reps);
}

/* Where an FMG solve's time goes, as one line: the copy ceiling (GB/s,
 * strata_copy_kernel, read + write), the finest level's smoothing step
 * alone (one level, graph = 1 so the bottom solve is exactly
 * coarse_max_sweeps steps: (t(24 steps) - t(4 steps)) / 20; its GB/s
 * count 56 bytes a cell: u, b, the three face coefficients and 1/diag
 * read, u written) and its share of the copy ceiling, and a profiled FMG
 * solve's time per level (launched, CG bottom; it waits for the device at
 * every level change, so it is slower than the timed solve). */
static void hp_where(strata_context *ctx, const hp_problem *P,
                     strata_mg_smoother sm, int reps) {
  const long n = P->n;
  const size_t cells = (size_t)n * (size_t)n * (size_t)n;
  const double *beta = P->beta;
  strata_field_desc d = {3, {(size_t)n, (size_t)n, (size_t)n}, 1, STRATA_F64};
  strata_field *phi = NULL, *psi = NULL;
  DIE(ctx, strata_field_create(ctx, &d, &phi));
  DIE(ctx, strata_field_create(ctx, &d, &psi));
  DIE(ctx, strata_field_write(psi, P->f));
  double t[64];
  for (int r = 0; r <= reps; r++) {
    DIE(ctx, strata_context_sync(ctx));
    double t0 = strata_test_clock();
    DIE(ctx, strata_copy_kernel(psi, phi, NULL));
    DIE(ctx, strata_context_sync(ctx));
    if (r) t[r - 1] = strata_test_clock() - t0;
  }
  const double copy_gbs = 16.0 * (double)cells / median(t, reps) / 1e9;
  double ts[2];
  for (int q = 0; q < 2; q++) {
    strata_mg_options o;
    hp_options(&o, n, sm);
    o.max_levels = 1;
    o.stall = 0;
    o.graph = 1;
    o.bottom = STRATA_MG_BOTTOM_SMOOTH;
    o.coarse_max_sweeps = q ? 24 : 4;
    strata_mg *mg = NULL;
    DIE(ctx, strata_mg_create(ctx, &o, &mg));
    DIE(ctx, strata_mg_set_coefficients(mg, beta, NULL));
    ts[q] = hp_time(ctx, mg, phi, psi, reps, NULL);
    strata_mg_destroy(&mg);
  }
  const double step = (ts[1] - ts[0]) / 20;
  const double step_gbs = 56.0 * (double)cells / step / 1e9;
  printf("- %ld^3: copy %.0f GB/s; finest smoothing step %.3f ms, %.0f GB/s "
         "at 56 B/cell (%.0f%% of copy);", n, copy_gbs, 1e3 * step, step_gbs,
         100 * step_gbs / copy_gbs);
  strata_mg_options o;
  hp_options(&o, n, sm);
  o.profile = 1;
  strata_mg *mg = NULL;
  DIE(ctx, strata_mg_create(ctx, &o, &mg));
  DIE(ctx, strata_mg_set_coefficients(mg, beta, NULL));
  hp_time(ctx, mg, phi, psi, 1, NULL);
  const int nl = strata_mg_levels(mg);
  double total = 0;
  for (int l = 0; l < nl; l++) {
    strata_mg_level_info li;
    DIE(ctx, strata_mg_get_level(mg, l, &li));
    total += li.seconds;
  }
  printf(" profiled FMG %.2f ms:", 1e3 * total);
  for (int l = 0; l < nl; l++) {
    strata_mg_level_info li;
    DIE(ctx, strata_mg_get_level(mg, l, &li));
    printf(" L%d %zu^3 %.3f ms (%.0f%%, %ld steps)%s", l, li.n[0],
           1e3 * li.seconds, total > 0 ? 100 * li.seconds / total : 0,
           li.sweeps, l + 1 < nl ? ";" : "\n");
  }
  strata_mg_destroy(&mg);
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
}

/* One FMG solve (or, converge = 1, a solve to rtol 1e-10) of n^3 cells
 * from phi = 0: the max error, the seconds of the solves (median of reps)
 * and the result. */
static double hp_solve(strata_context *ctx, const hp_problem *P,
                       strata_mg_smoother sm,
                       int graph, int converge, int reps, double *sec,
                       strata_mg_result *res) {
  const long n = P->n;
  strata_mg_options o;
  hp_options(&o, n, sm);
  o.max_cycles = converge ? 50 : 1;
  o.rtol = converge ? 1e-10 : 0;
  if (graph) {
    /* recorded cycles: a fixed-count smoothing bottom solve */
    o.graph = 1;
    o.bottom = STRATA_MG_BOTTOM_SMOOTH;
    o.coarse_max_sweeps = 8;
  }
  strata_mg *mg = NULL;
  DIE(ctx, strata_mg_create(ctx, &o, &mg));
  const size_t cells = (size_t)n * (size_t)n * (size_t)n;
  DIE(ctx, strata_mg_set_coefficients(mg, P->beta, NULL));
  strata_field_desc d = {3, {(size_t)n, (size_t)n, (size_t)n}, 1, STRATA_F64};
  strata_field *phi = NULL, *psi = NULL;
  DIE(ctx, strata_field_create(ctx, &d, &phi));
  DIE(ctx, strata_field_create(ctx, &d, &psi));
  DIE(ctx, strata_field_write(psi, P->f));
  *sec = hp_time(ctx, mg, phi, psi, reps, res);
  DIE(ctx, strata_field_read(phi, P->w));
  double err = 0;
  for (size_t q = 0; q < cells; q++) err = fmax(err, fabs(P->w[q] - P->u[q]));
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_mg_destroy(&mg);
  return err;
}

static int hpgmg(const cfg *c, strata_mg_smoother sm, int graph, int quick) {
  strata_context *ctx = NULL;
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = c->backend;
  co.tuning = c->tuning;
  char err[512] = "";
  co.errbuf = err;
  co.errbuf_size = sizeof err;
  if (strata_context_create(&ctx, &co) != STRATA_OK) {
    fprintf(stderr, "no context for backend %s: %s\n",
            strata_backend_name(c->backend), err);
    return 1;
  }
  strata_device_info info;
  strata_context_device_info(ctx, &info);
  const char *smn = sm == STRATA_MG_GSRB        ? "GSRB (2,2)"
                    : sm == STRATA_MG_CHEBYSHEV ? "Chebyshev (4,4)"
                                                : "Jacobi (4,4)";
  printf("# strata multigrid benchmark, HPGMG-FV's problem: %s, %s backend, "
         "%d threads; FV 7-point, beta = 1 + 0.25 sin sin sin, Dirichlet 0, "
         "fp64, one FMG solve (V-cycles, %s, %s) from phi = 0, median "
         "of %d; tuning %s; %s\n\n",
         info.name, strata_backend_name(strata_context_backend(ctx)),
         info.threads, smn,
         graph ? "recorded (graph = 1), 8 smoothing steps at the bottom"
               : "CG bottom",
         c->reps, c->tuning ? c->tuning : "none", strata_build_info());
  printf("| grid | FMG solve ms | DOF/s | max error | error / converged "
         "error | order | relative residual |\n|---|---|---|---|---|---|---|\n");
  long sizes[8];
  int ns = 0;
  for (int s = 0; s < c->nsizes; s++) sizes[ns++] = (long)c->sizes[s][0];
  if (!ns) {
    const long full[3] = {64, 128, 256}, small[2] = {32, 64};
    ns = quick ? 2 : 3;
    memcpy(sizes, quick ? small : full, (size_t)ns * sizeof *sizes);
  }
  double prev = 0;
  long prevn = 0;
  for (int s = 0; s < ns; s++) {
    const long n = sizes[s];
    strata_mg_result r, rc;
    double sec, sec_c;
    hp_problem P;
    hp_arrays(n, &P);
    double e = hp_solve(ctx, &P, sm, graph, 0, c->reps, &sec, &r);
    double ec = hp_solve(ctx, &P, sm, graph, 1, 1, &sec_c, &rc);
    hp_free(&P);
    char order[32] = "-";
    if (prev > 0 && n == 2 * prevn)
      snprintf(order, sizeof order, "%.2f", log2(prev / e));
    printf("| %ld^3 | %.3f | %.3g | %.3e | %.2f | %s | %.2e |\n", n,
           1e3 * sec, (double)n * n * n / sec, e, e / ec, order, r.relative);
    fflush(stdout);
    prev = e;
    prevn = n;
  }
  printf("\nWhere the time goes:\n\n");
  for (int s = 0; s < ns; s++) {
    hp_problem P;
    hp_arrays(sizes[s], &P);
    hp_where(ctx, &P, sm, c->reps);
    hp_free(&P);
  }
  strata_context_destroy(&ctx);
  return 0;
}

/* Per-level lines, printed after the table. */
static char g_lines[16][4096];
static int g_nlines;

static void run_one(const cfg *c, const size_t n[3], strata_precision p) {
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = c->backend;
  strata_context *ctx = NULL;
  char err[512] = "";
  co.errbuf = err;
  co.errbuf_size = sizeof err;
  if (strata_context_create(&ctx, &co) != STRATA_OK) {
    fprintf(stderr, "context: %s\n", err);
    exit(1);
  }
  const double pts = (double)n[0] * (double)n[1] * (double)n[2];
  const double es = (double)p;
  strata_field_desc d = {3, {n[0], n[1], n[2]}, 1, p};
  strata_field *phi = NULL, *psi = NULL, *w = NULL;
  DIE(ctx, strata_field_create(ctx, &d, &phi));
  DIE(ctx, strata_field_create(ctx, &d, &psi));
  DIE(ctx, strata_field_create(ctx, &d, &w));
  DIE(ctx, strata_field_fill_random(psi, 1, -1, 1));

  double t[64];
  int reps = c->reps;
  /* the copy ceiling */
  DIE(ctx, strata_copy_kernel(psi, w, NULL));
  DIE(ctx, strata_context_sync(ctx));
  for (int r = 0; r < reps; r++) {
    double t0 = strata_test_clock();
    DIE(ctx, strata_copy_kernel(psi, w, NULL));
    DIE(ctx, strata_context_sync(ctx));
    t[r] = strata_test_clock() - t0;
  }
  double t_copy = median(t, reps);
  double copy_gbs = 2 * es * pts / t_copy / 1e9;

  strata_mg_options o;
  strata_mg_options_init(&o);
  o.dims = 3;
  memcpy(o.n, n, sizeof o.n);
  o.precision = p;
  o.h = 1.0 / (double)(n[0] + 1);
  o.disc = c->disc;
  o.cycle = c->cycle;
  o.rtol = 0;
  o.stall = 0;
  o.max_cycles = c->cycles;
  strata_mg *mg = NULL;
  DIE(ctx, strata_mg_create(ctx, &o, &mg));
  DIE(ctx, strata_mg_get_options(mg, &o));

  /* the finest level's Jacobi sweep (the solver's own entry) */
  strata__mg_op op = {3, {0}};
  if (c->disc == STRATA_MG_FD) {
    op.c[0] = 1;
    op.c[1] = -1.0 / 6;
  } else {
    op.c[0] = 8.0 / 3;
    op.c[2] = -1.0 / 6;
    op.c[3] = -1.0 / 12;
  }
  DIE(ctx, strata_field_fill_random(phi, 2, -1, 1));
  strata__mg_sweep_args sa = {op, phi, psi, w, 1e-4, 0, 1, o.omega / op.c[0],
                              NULL};
  DIE(ctx, ctx->be->mg_sweep(&sa));
  DIE(ctx, strata_context_sync(ctx));
  for (int r = 0; r < reps; r++) {
    double t0 = strata_test_clock();
    DIE(ctx, ctx->be->mg_sweep(&sa));
    DIE(ctx, strata_context_sync(ctx));
    t[r] = strata_test_clock() - t0;
  }
  double t_sweep = median(t, reps);
  double sweep_gbs = 3 * es * pts / t_sweep / 1e9;

  /* timed solves: cycles from phi = 0 (the warm-up is the first) */
  strata_mg_result res;
  for (int r = 0; r <= reps; r++) {
    DIE(ctx, strata_field_fill(phi, 0));
    DIE(ctx, strata_context_sync(ctx));
    double t0 = strata_test_clock();
    DIE(ctx, strata_mg_solve(mg, phi, psi, &res));
    DIE(ctx, strata_context_sync(ctx));
    if (r > 0) t[r - 1] = strata_test_clock() - t0;
  }
  double t_solve = median(t, reps);
  double t_cycle = t_solve / c->cycles;

  printf("| %zux%zux%zu | fp%d | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f "
         "(%.0f%%) | %.3f | %.1e | %s |\n",
         n[0], n[1], n[2], p == STRATA_F32 ? 32 : 64, 1 / t_cycle,
         pts / t_cycle / 1e6, t_cycle * 1e3, t_cycle / t_sweep, copy_gbs,
         sweep_gbs, 100 * sweep_gbs / copy_gbs, res.factor, res.relative,
         p == STRATA_F32 ? seed_ref(n) : "-");
  fflush(stdout);
  char warn[512];
  if (strata_bench_ceiling_suspect(copy_gbs, 0, "", 0,
                                   strata_context_backend(ctx) ==
                                       STRATA_BACKEND_CPU,
                                   warn, sizeof warn) ||
      strata_bench_ceiling_suspect(copy_gbs, sweep_gbs / copy_gbs,
                                   "the finest sweep", 3.0 * es,
                                   strata_context_backend(ctx) ==
                                       STRATA_BACKEND_CPU,
                                   warn, sizeof warn))
    fprintf(stderr, "bench_mg: warning: %s\n", warn);

  /* the profiled solve: time per level */
  strata_mg_destroy(&mg);
  o.profile = 1;
  DIE(ctx, strata_mg_create(ctx, &o, &mg));
  DIE(ctx, strata_field_fill(phi, 0));
  DIE(ctx, strata_mg_solve(mg, phi, psi, &res));
  int nl = strata_mg_levels(mg);
  double total = 0;
  strata_mg_level_info li[32];
  for (int l = 0; l < nl; l++) {
    DIE(ctx, strata_mg_get_level(mg, l, &li[l]));
    total += li[l].seconds;
  }
  if (g_nlines < 16) {
    char *b = g_lines[g_nlines++];
    int off = snprintf(b, 4096, "- %zux%zux%zu fp%d, %.2f ms per cycle "
                       "profiled; per cycle and level (share, sweeps):",
                       n[0], n[1], n[2], p == STRATA_F32 ? 32 : 64,
                       total / res.cycles * 1e3);
    for (int l = 0; l < nl && off < 3900; l++)
      off += snprintf(b + off, (size_t)(4096 - off),
                      " L%d %zux%zux%zu %.3f ms (%.1f%%, %.0f)%s", l,
                      li[l].n[0], li[l].n[1], li[l].n[2],
                      li[l].seconds / res.cycles * 1e3,
                      100 * li[l].seconds / total,
                      (double)li[l].sweeps / res.cycles,
                      l + 1 < nl ? ";" : "");
  }
  strata_mg_destroy(&mg);
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_field_destroy(&w);
  strata_context_destroy(&ctx);
}

int main(int argc, char **argv) {
  cfg c;
  memset(&c, 0, sizeof c);
  c.backend = STRATA_BACKEND_AUTO;
  c.prec[0] = STRATA_F32;
  c.prec[1] = STRATA_F64;
  c.nprec = 2;
  c.disc = STRATA_MG_FE;
  c.cycle = STRATA_MG_V;
  c.cycles = 8;
  c.reps = 5;
  int quick = 0, hp = 0, graph = 0;
  strata_mg_smoother sm = STRATA_MG_GSRB;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quick"))
      quick = 1;
    else if (!strcmp(a, "--hpgmg"))
      hp = 1;
    else if (!strcmp(a, "--graph"))
      graph = 1;
    else if (!strcmp(a, "--tuning") && v)
      c.tuning = argv[++i];
    else if (!strcmp(a, "--smoother") && v) {
      if (strcmp(v, "gsrb") && strcmp(v, "cheb") && strcmp(v, "jacobi"))
        return usage(), 2;
      sm = v[0] == 'g' ? STRATA_MG_GSRB
           : v[0] == 'c' ? STRATA_MG_CHEBYSHEV
                         : STRATA_MG_JACOBI;
      i++;
    }
    else if (!strcmp(a, "--backend") && v) {
      if (strata_backend_parse(v, &c.backend) != STRATA_OK) return usage(), 2;
      i++;
    } else if (!strcmp(a, "--prec") && v) {
      c.nprec = !strcmp(v, "both") ? 2 : 1;
      if (strcmp(v, "both")) {
        if (strcmp(v, "f32") && strcmp(v, "f64")) return usage(), 2;
        c.prec[0] = !strcmp(v, "f32") ? STRATA_F32 : STRATA_F64;
      }
      i++;
    } else if (!strcmp(a, "--disc") && v) {
      c.disc = !strcmp(v, "fd") ? STRATA_MG_FD : STRATA_MG_FE;
      i++;
    } else if (!strcmp(a, "--cycle") && v) {
      c.cycle = v[0] == 'f' ? STRATA_MG_F
                : v[0] == 'w' ? STRATA_MG_W
                              : STRATA_MG_V;
      i++;
    } else if (!strcmp(a, "--cycles") && v) {
      c.cycles = atoi(v);
      i++;
    } else if (!strcmp(a, "--reps") && v) {
      c.reps = atoi(v);
      i++;
    } else if (!strcmp(a, "--size") && v && c.nsizes < 8) {
      size_t *s = c.sizes[c.nsizes];
      if (sscanf(v, "%zux%zux%zu", &s[0], &s[1], &s[2]) != 3)
        return usage(), 2;
      c.nsizes++;
      i++;
    } else
      return usage(), 2;
  }
  if (c.cycles < 1 || c.cycles > 1000 || c.reps < 1 || c.reps > 64)
    return usage(), 2;
  if (hp) return hpgmg(&c, sm, graph, quick);
  if (!c.nsizes) {
    static const size_t full[3][3] = {
        {127, 127, 127}, {255, 255, 255}, {511, 511, 255}};
    static const size_t small[2][3] = {{63, 63, 63}, {127, 127, 127}};
    c.nsizes = quick ? 2 : 3;
    memcpy(c.sizes, quick ? (const void *)small : (const void *)full,
           (size_t)c.nsizes * sizeof c.sizes[0]);
  }
  strata_context *ctx = NULL;
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = c.backend;
  if (strata_context_create(&ctx, &co) != STRATA_OK) {
    fprintf(stderr, "no context for backend %s\n",
            strata_backend_name(c.backend));
    return 1;
  }
  strata_device_info info;
  strata_context_device_info(ctx, &info);
  printf("# strata multigrid benchmark: %s, %s backend, %d threads; %s "
         "stencil, %s-cycles V(2,1)/(1,1) (seed 004), %d cycles from phi = "
         "0, median of %d; %s\n\n",
         info.name, strata_backend_name(strata_context_backend(ctx)),
         info.threads, c.disc == STRATA_MG_FE ? "FE 27-point" : "FD 7-point",
         c.cycle == STRATA_MG_V ? "V" : c.cycle == STRATA_MG_F ? "F" : "W",
         c.cycles, c.reps, strata_build_info());
  strata_context_destroy(&ctx);
  printf("| unknowns | prec | cycles/s | Munknowns/s | ms/cycle | cycle in "
         "fine sweeps | copy GB/s | fine sweep GB/s (%% of copy) | factor | "
         "relative residual | C2050 cycles/s |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int s = 0; s < c.nsizes; s++)
    for (int q = 0; q < c.nprec; q++) run_one(&c, c.sizes[s], c.prec[q]);
  printf("\nTime per level (a profiled solve that waits for the device at "
         "each level change; restriction and prolongation count for the "
         "finer level; the coarsest level's sweeps are its Jacobi solve):\n\n");
  for (int q = 0; q < g_nlines; q++) printf("%s\n", g_lines[q]);
  return 0;
}
