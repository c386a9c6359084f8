/* Scaling of the distributed solvers (docs/performance.md, "Several GPUs"):
 * the 3D acoustic wave solver (25-point, CPML faces), the 7-point heat
 * solver and the variable-coefficient multigrid solver (mg: one full-
 * multigrid solve of HPGMG-FV's problem a step, fp64 whatever --f64 says),
 * timed on however many ranks mpirun started, twice: with the halo
 * exchange, and with it switched off (strata_dist_options.exchange = 0,
 * wrong results, same kernels), so the share of the step that the exchange
 * adds and the overlap does not hide is measured, not guessed.
 *
 *   mpirun -n P bench_dist [--weak N | --strong N] [--solver wave|heat|mg|all]
 *                          [--steps S] [--backend cpu|cuda] [--f64]
 *                          [--agglomerate L]
 *
 * --weak N: N^3 points per rank (global N x N x P N); --strong N: N^3 in
 * all.  "all" runs wave and heat; mg runs when named, and with the
 * exchange switched off only the halo exchanges stop (the gather of the
 * coarse levels onto rank 0 still moves); --agglomerate L gathers mg's
 * levels from L down instead of by the cost rule.  Prints one line per solver on rank 0: time per step (the slowest
 * rank's, after a barrier), points x steps per second, and the exposed
 * exchange share. */
#define _POSIX_C_SOURCE 200809L
#include "strata.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
  const char *solver;
  size_t n[3];
  long steps;
  strata_precision prec;
  strata_backend backend;
  int agglomerate; /* mg: opt.agglomerate (0: the cost rule) */
} cfg;

#define TRY(expr, ctx)                                                         \
  do {                                                                         \
    strata_status s_ = (expr);                                                 \
    if (s_ != STRATA_OK) {                                                     \
      fprintf(stderr, "bench_dist: %s: %s: %s\n", #expr,                       \
              strata_status_name(s_), strata_context_error(ctx));              \
      return -1.0;                                                             \
    }                                                                          \
  } while (0)

/* HPGMG-FV's coefficient and a smooth source, at global cell (i, j, k) of
 * cells 1/n[0] wide. */
static double mg_beta(const cfg *c, long i, long j, long k) {
  const double h = 1.0 / (double)c->n[0], tp = 6.283185307179586;
  return 1 + 0.25 * sin(tp * (i + 0.5) * h) * sin(tp * (j + 0.5) * h) *
                 sin(tp * (k + 0.5) * h);
}
static double mg_source(long i, long j, long k, void *u) {
  const double h = *(const double *)u, p = 3.141592653589793;
  return sin(p * (i + 0.5) * h) * sin(p * (j + 0.5) * h) *
         sin(p * (k + 0.5) * h);
}

/* Halo exchanges a solve of the last run_mg (rank 0's count). */
static double mg_exchanges;

/* Seconds of one full-multigrid solve (GSRB (2,2) V-cycles, CG bottom,
 * the gather level by the cost rule), the slowest rank's, after a
 * warm-up solve; *gl: the first level gathered onto rank 0. */
static double run_mg(const cfg *c, strata_dist *d, int *gl) {
  strata_context *ctx = strata_dist_context(d);
  strata_mg_options o;
  strata_mg_options_init(&o);
  o.disc = STRATA_MG_FV;
  memcpy(o.n, c->n, sizeof o.n);
  o.h = 1.0 / (double)c->n[0];
  o.smoother = STRATA_MG_GSRB;
  o.pre_fine = o.pre = o.post = 2;
  o.fmg = 1;
  o.max_cycles = 1;
  o.rtol = 0;
  o.dist = d;
  o.agglomerate = c->agglomerate;
  strata_mg *mg = NULL;
  TRY(strata_mg_create(ctx, &o, &mg), ctx);
  const size_t cells = c->n[0] * c->n[1] * c->n[2];
  double *beta = malloc(cells * sizeof *beta);
  if (!beta) return -1.0;
  for (size_t k = 0; k < c->n[2]; k++)
    for (size_t j = 0; j < c->n[1]; j++)
      for (size_t i = 0; i < c->n[0]; i++)
        beta[i + c->n[0] * (j + c->n[1] * k)] =
            mg_beta(c, (long)i, (long)j, (long)k);
  TRY(strata_mg_set_coefficients(mg, beta, NULL), ctx);
  free(beta);
  for (*gl = 0; *gl < strata_mg_levels(mg); ++*gl) {
    strata_mg_level_info li;
    TRY(strata_mg_get_level(mg, *gl, &li), ctx);
    if (li.ranks == 1) break;
  }
  strata_field_desc fd = {3, {c->n[0], c->n[1], c->n[2]}, 1, STRATA_F64};
  strata_field *phi = NULL, *psi = NULL;
  TRY(strata_dist_field_create(d, &fd, &phi), ctx);
  TRY(strata_dist_field_create(d, &fd, &psi), ctx);
  double h = o.h;
  TRY(strata_field_fill_fn(psi, mg_source, &h), ctx);
  double t = 0;
  strata_dist_stats st0, st1;
  for (long r = 0; r <= c->steps; r++) { /* r = 0: warm-up */
    TRY(strata_field_fill(phi, 0), ctx);
    TRY(strata_dist_barrier(d), ctx);
    if (r == 1) TRY(strata_dist_get_stats(d, &st0), ctx);
    double t0 = now();
    TRY(strata_mg_solve(mg, phi, psi, NULL), ctx);
    TRY(strata_dist_barrier(d), ctx);
    if (r) t += now() - t0;
  }
  TRY(strata_dist_get_stats(d, &st1), ctx);
  mg_exchanges = (double)(st1.exchanges - st0.exchanges) / (double)c->steps;
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_mg_destroy(&mg);
  double v = t;
  strata_dist_allreduce(d, &v, 1, 1);
  return v / (double)c->steps;
}

/* Seconds per step on this group (the slowest rank's); *fuse: the heat
 * solver's steps a sweep (mg: the first gathered level). */
static double run(const cfg *c, strata_dist *d, int *fuse) {
  strata_context *ctx = strata_dist_context(d);
  const long warm = 5;
  double t = 0;
  if (strcmp(c->solver, "mg") == 0) return run_mg(c, d, fuse);
  if (strcmp(c->solver, "wave") == 0) {
    strata_wave_options o;
    strata_wave_options_init(&o);
    memcpy(o.n, c->n, sizeof o.n);
    o.precision = c->prec;
    o.dist = d;
    o.f0 = 8;
    strata_wave *w = NULL;
    TRY(strata_wave_create(ctx, &o, &w), ctx);
    TRY(strata_wave_step(w, warm), ctx);
    TRY(strata_dist_barrier(d), ctx);
    double t0 = now();
    TRY(strata_wave_step(w, c->steps), ctx);
    TRY(strata_dist_barrier(d), ctx);
    t = now() - t0;
    strata_wave_destroy(&w);
  } else {
    strata_heat_options o;
    strata_heat_options_init(&o);
    o.dims = 3;
    memcpy(o.n, c->n, sizeof o.n);
    o.precision = c->prec;
    o.D = 0.1;
    o.dist = d;
    strata_heat *h = NULL;
    TRY(strata_heat_create(ctx, &o, &h), ctx);
    /* the warm-up also takes a call of the timed run's last, shorter
     * sweep (steps mod fuse): the CUDA engine tunes each number of fused
     * steps on its first call, and that tuning must not be timed */
    strata_heat_info hi;
    TRY(strata_heat_get_info(h, &hi), ctx);
    *fuse = hi.fuse;
    TRY(strata_heat_step(h, warm), ctx);
    if (hi.fuse > 1 && c->steps % hi.fuse)
      TRY(strata_heat_step(h, c->steps % hi.fuse), ctx);
    TRY(strata_dist_barrier(d), ctx);
    double t0 = now();
    TRY(strata_heat_step(h, c->steps), ctx);
    TRY(strata_dist_barrier(d), ctx);
    t = now() - t0;
    strata_heat_destroy(&h);
  }
  double v = t;
  strata_dist_allreduce(d, &v, 1, 1);
  return v / (double)c->steps;
}

int main(int argc, char **argv) {
  long weak = 0, strong = 0, steps = 50;
  int ranks_y = 0;
  const char *which = "all";
  cfg c;
  memset(&c, 0, sizeof c);
  c.prec = STRATA_F32;
  c.backend = STRATA_BACKEND_AUTO;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--weak") && i + 1 < argc)
      weak = atol(argv[++i]);
    else if (!strcmp(argv[i], "--strong") && i + 1 < argc)
      strong = atol(argv[++i]);
    else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = atol(argv[++i]);
    else if (!strcmp(argv[i], "--solver") && i + 1 < argc)
      which = argv[++i];
    else if (!strcmp(argv[i], "--agglomerate") && i + 1 < argc)
      c.agglomerate = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--ranks-y") && i + 1 < argc)
      ranks_y = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--f64"))
      c.prec = STRATA_F64;
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
      if (strata_backend_parse(argv[++i], &c.backend) != STRATA_OK) {
        fprintf(stderr, "bench_dist: unknown backend %s\n", argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: mpirun -n P %s [--weak N | --strong N] "
              "[--solver wave|heat|mg|all] [--steps S] [--backend cpu|cuda] "
              "[--f64] [--agglomerate L] [--ranks-y PY]\n", argv[0]);
      return 2;
    }
  }
  if (!weak && !strong) weak = 128;
  if (steps < 1) steps = 1;
  c.steps = steps;
  char why[256] = "";
  if (!strata_dist_available(why, sizeof why)) {
    fprintf(stderr, "bench_dist: %s\n", why);
    return 2;
  }
  strata_dist *d[2] = {NULL, NULL};
  for (int e = 0; e < 2; e++) {
    strata_context_options co;
    strata_context_options_init(&co);
    co.backend = c.backend;
    co.errbuf = why;
    co.errbuf_size = sizeof why;
    strata_dist_options o;
    strata_dist_options_init(&o);
    o.exchange = e == 0;
    o.ranks_y = ranks_y;
    strata_status s = strata_dist_create(&co, &o, &d[e]);
    if (s != STRATA_OK) {
      fprintf(stderr, "bench_dist: %s: %s\n", strata_status_name(s), why);
      strata_dist_destroy(&d[0]);
      strata_dist_finalize();
      return 1;
    }
  }
  const int P = strata_dist_size(d[0]), rank = strata_dist_rank(d[0]);
  if (weak) {
    c.n[0] = c.n[1] = (size_t)weak;
    c.n[2] = (size_t)(weak * P);
  } else {
    c.n[0] = c.n[1] = c.n[2] = (size_t)strong;
  }
  strata_device_info info;
  memset(&info, 0, sizeof info);
  strata_context_device_info(strata_dist_context(d[0]), &info);
  if (rank == 0)
    printf("# %s, %d rank(s), %s, %s scaling, global %zux%zux%zu, %s, %ld "
           "steps, ranks_y %d\n",
           info.name, P, strata_dist_transport(d[0]), weak ? "weak" : "strong",
           c.n[0], c.n[1], c.n[2], c.prec == STRATA_F32 ? "fp32" : "fp64",
           steps, ranks_y);
  const char *solvers[3] = {"wave", "heat", "mg"};
  int rc = 0;
  for (int q = 0; q < 3; q++) {
    /* all: wave and heat; mg only by name (its host setup is heavy) */
    if (strcmp(which, solvers[q]) && (strcmp(which, "all") || q == 2))
      continue;
    c.solver = solvers[q];
    int fuse = 0, fuse0 = 0;
    double t = run(&c, d[0], &fuse);
    const double exchanges = mg_exchanges; /* with them on */
    double t0 = run(&c, d[1], &fuse0);
    if (t < 0 || t0 < 0) {
      rc = 1;
      continue;
    }
    double pts = (double)c.n[0] * (double)c.n[1] * (double)c.n[2];
    if (rank == 0)
      printf("%-5s P=%d %5zux%zux%zu  %8.3f ms/step  %8.2f Gpts/s  "
             "(%.2f per rank)  without exchange %8.3f ms  exposed exchange "
             "%5.1f%%",
             c.solver, P, c.n[0], c.n[1], c.n[2], 1e3 * t, pts / t / 1e9,
             pts / t / 1e9 / P, 1e3 * t0, 100.0 * (t - t0) / t);
    if (rank == 0 && q == 2) /* mg: a step is one FMG solve */
      printf("  %.3g DOF/s, levels [0, %d) split, %.0f exchanges a solve",
             pts / t, fuse, exchanges);
    else if (rank == 0 && fuse) /* the same depth with and without it */
      printf("  fuse %d%s", fuse, fuse0 == fuse ? "" : " (differs without)");
    if (rank == 0) printf("\n");
    fflush(stdout);
  }
  strata_dist_destroy(&d[1]);
  strata_dist_destroy(&d[0]);
  strata_dist_finalize();
  return rc;
}
