/* The C side of the Python binding's benchmark (bench/bench_python.py,
 * docs/performance.md "Python"): one solver stepped by a C loop of
 * strata_solver_step(s, 1) and by one strata_solver_step(s, n), and the
 * cost of a call that does no work (step(0)).  Prints one JSON object.
 *
 *   bench_step_loop wave|heat N STEPS [REPS] [cpu|cuda|auto]
 *
 * wave: the 3D acoustic solver on N^3 (fp32, order 8, CPML); heat: the 3D
 * heat solver on N^3 (fp32).  Each figure is the best and the median of
 * REPS (default 5) timings after a warm-up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "strata.h"

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void stats(double *t, int n, double *best, double *median) {
  qsort(t, (size_t)n, sizeof *t, cmp);
  *best = t[0];
  *median = t[n / 2];
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: bench_step_loop wave|heat N STEPS [REPS] "
                    "[cpu|cuda|auto]\n");
    return 2;
  }
  const char *kind = argv[1];
  size_t n = (size_t)atol(argv[2]);
  long steps = atol(argv[3]);
  int reps = argc > 4 ? atoi(argv[4]) : 5;
  if (reps < 1 || reps > 100) reps = 5;
  strata_context_options co;
  strata_context_options_init(&co);
  if (argc > 5 && strata_backend_parse(argv[5], &co.backend) != STRATA_OK) {
    fprintf(stderr, "bench_step_loop: unknown backend %s\n", argv[5]);
    return 2;
  }
  strata_context *ctx = NULL;
  if (strata_context_create(&ctx, &co) != STRATA_OK) {
    fprintf(stderr, "bench_step_loop: no context\n");
    return 1;
  }
  strata_solver_options so;
  strata_wave_options wo;
  strata_heat_options ho;
  if (!strcmp(kind, "wave")) {
    strata_solver_options_init(&so, STRATA_SOLVER_WAVE);
    strata_wave_options_init(&wo);
    wo.n[0] = wo.n[1] = wo.n[2] = n;
    wo.absorb_width = n >= 128 ? 20 : 8;
    so.wave = &wo;
  } else {
    strata_solver_options_init(&so, STRATA_SOLVER_HEAT);
    strata_heat_options_init(&ho);
    ho.dims = 3;
    ho.n[0] = ho.n[1] = ho.n[2] = n;
    ho.precision = STRATA_F32;
    so.heat = &ho;
  }
  strata_solver *s = NULL;
  if (strata_solver_create(ctx, &so, &s) != STRATA_OK) {
    fprintf(stderr, "bench_step_loop: %s\n", strata_context_error(ctx));
    strata_context_destroy(&ctx);
    return 1;
  }
  double *loop = calloc((size_t)reps, sizeof *loop);
  double *one = calloc((size_t)reps, sizeof *one);
  double *call = calloc((size_t)reps, sizeof *call);
  const long calls = 20000;
  strata_status st = strata_solver_step(s, steps); /* warm-up */
  for (int r = 0; r < reps && st == STRATA_OK; r++) {
    double t0 = strata_test_clock();
    for (long i = 0; i < steps && st == STRATA_OK; i++)
      st = strata_solver_step(s, 1);
    double t1 = strata_test_clock();
    if (st == STRATA_OK) st = strata_solver_step(s, steps);
    double t2 = strata_test_clock();
    for (long i = 0; i < calls && st == STRATA_OK; i++)
      st = strata_solver_step(s, 0);
    double t3 = strata_test_clock();
    loop[r] = t1 - t0;
    one[r] = t2 - t1;
    call[r] = (t3 - t2) / (double)calls;
  }
  int rc = 0;
  if (st != STRATA_OK) {
    fprintf(stderr, "bench_step_loop: %s\n", strata_context_error(ctx));
    rc = 1;
  } else {
    double lb, lm, ob, om, cb, cm;
    stats(loop, reps, &lb, &lm);
    stats(one, reps, &ob, &om);
    stats(call, reps, &cb, &cm);
    printf("{\"kind\": \"%s\", \"n\": %zu, \"steps\": %ld, \"backend\": "
           "\"%s\", \"c_loop_s\": [%.6g, %.6g], \"c_stepn_s\": [%.6g, "
           "%.6g], \"c_call_s\": [%.6g, %.6g]}\n",
           kind, n, steps, strata_backend_name(strata_context_backend(ctx)),
           lb, lm, ob, om, cb, cm);
  }
  free(loop);
  free(one);
  free(call);
  strata_solver_destroy(&s);
  strata_context_destroy(&ctx);
  return rc;
}
