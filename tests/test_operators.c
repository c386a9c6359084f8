/* Every operator of the CPU engine against the plain long-double reference,
 * on random data at odd sizes, in fp32 and fp64, with every boundary
 * condition.  Tolerance: the per-point bound of ref_error_ratio,
 * (points + 2) * eps * sum |w_q u_q|, which holds for any summation order
 * with or without FMA; we require every point within it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "runner.h"

static int run_dims(int dims, const size_t n[3]) {
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  strata_context *ctx = NULL;
  CHECK_OK(strata_context_create(&ctx, &o), ctx);
  ref_named_op ops[40];
  int nops = ref_operator_set(dims, ops);
  strata_boundary bc[8];
  const char *bcn[8];
  int nbc = ref_boundary_set(dims, bc, bcn);
  int fails = 0, checks = 0;
  double worst = 0;
  for (int q = 0; q < nops; q++)
    for (int p = 0; p < 2; p++)
      for (int b = 0; b < nbc; b++) {
        strata_precision prec = p ? STRATA_F64 : STRATA_F32;
        int ghost = ops[q].op.radius + (q + b) % 2; /* also wider ghosts */
        double ratio = 0;
        checks++;
        if (ref_check_apply(ctx, &ops[q].op, n, ghost, prec, &bc[b], NULL,
                            1000u + (unsigned)(q * 16 + b), &ratio, NULL)) {
          fprintf(stderr, "  FAILED: %s, %s, %s boundaries, ghost %d\n",
                  ops[q].name, p ? "fp64" : "fp32", bcn[b], ghost);
          fails++;
        }
        if (ratio > worst) worst = ratio;
      }
  printf("  %dD %zux%zux%zu: %d checks, %d failed, worst error %.3f of the "
         "bound\n", dims, n[0], n[1], n[2], checks, fails, worst);
  strata_context_destroy(&ctx);
  CHECK(fails == 0);
  return 0;
}

TEST(operators_1d) { return run_dims(1, (size_t[3]){101, 1, 1}); }
TEST(operators_2d) { return run_dims(2, (size_t[3]){37, 29, 1}); }
TEST(operators_3d) { return run_dims(3, (size_t[3]){23, 17, 13}); }
TEST(operators_3d_large) { return run_dims(3, (size_t[3]){67, 45, 38}); }

/* The copy kernel, the benchmarks' ceiling: out = in bit for bit, signed
 * zeros, infinities and NaNs included, in both precisions. */
TEST(copy_kernel_exact) {
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  strata_context *ctx = NULL;
  CHECK_OK(strata_context_create(&ctx, &o), ctx);
  const size_t n = 37 * 29 * 13;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  CHECK(a && b);
  for (int p = 0; p < 2; p++) {
    strata_precision prec = p ? STRATA_F64 : STRATA_F32;
    strata_field_desc d = {3, {37, 29, 13}, 2, prec};
    strata_field *in = NULL, *out = NULL;
    CHECK_OK(strata_field_create(ctx, &d, &in), ctx);
    CHECK_OK(strata_field_create(ctx, &d, &out), ctx);
    for (size_t i = 0; i < n; i++) {
      double v = (double)(i * 2654435761u % 1000003u) / 1000003.0 - 0.5;
      if (i % 97 == 3) v = -0.0;
      if (i % 101 == 5) v = i % 2 ? INFINITY : -INFINITY;
      if (i % 103 == 7) v = NAN;
      if (prec == STRATA_F32)
        ((float *)a)[i] = (float)v;
      else
        a[i] = v;
    }
    CHECK_OK(strata_field_write(in, a), ctx);
    CHECK_OK(strata_field_fill(out, 7), ctx);
    CHECK_OK(strata_copy_kernel(in, out, NULL), ctx);
    CHECK_OK(strata_field_read(out, b), ctx);
    CHECKF(memcmp(a, b, n * (size_t)prec) == 0, "%s copy differs",
           p ? "fp64" : "fp32");
    strata_field_destroy(&in);
    strata_field_destroy(&out);
  }
  free(a);
  free(b);
  strata_context_destroy(&ctx);
  return 0;
}

RUN_TESTS(operators_1d, operators_2d, operators_3d, operators_3d_large,
          copy_kernel_exact)
