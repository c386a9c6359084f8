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
 *            [--size NXxNYxNZ]... */
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
          "NXxNYxNZ]...\n");
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
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quick"))
      quick = 1;
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
