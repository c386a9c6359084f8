/* Every operator of the CPU engine against the plain long-double reference,
 * on random data at odd sizes, in fp32 and fp64, with every boundary
 * condition.  Tolerance: the per-point bound of ref_error_ratio,
 * (points + 2) * eps * sum |w_q u_q|, which holds for any summation order
 * with or without FMA; we require every point within it. */
#include <math.h>
#include <stdlib.h>

#include "reference.h"
#include "runner.h"

typedef struct {
  char name[64];
  strata_stencil op;
} named_op;

/* Fills ops with every operator of the given dimension; returns the count. */
static int operators(int dims, named_op *ops) {
  int n = 0;
  unsigned seed = 12345u + (unsigned)dims;
  for (int order = 2; order <= 8; order += 2) {
    snprintf(ops[n].name, 64, "laplacian%d", order);
    strata_stencil_laplacian(&ops[n++].op, dims, order, 0.7);
  }
  for (int a = 0; a < dims; a++) {
    snprintf(ops[n].name, 64, "d/d%c order 8", "xyz"[a]);
    strata_stencil_derivative(&ops[n++].op, dims, a, 8, 0.3);
    snprintf(ops[n].name, 64, "d/d%c order 2", "xyz"[a]);
    strata_stencil_derivative(&ops[n++].op, dims, a, 2, 0.3);
  }
  double c[4];
  for (int r = 1; r <= 4; r++) {
    for (int k = 0; k < r; k++) c[k] = rand_r(&seed) / (double)RAND_MAX - 0.5;
    snprintf(ops[n].name, 64, "star r=%d random coefficients", r);
    strata_stencil_star(&ops[n++].op, dims, r, 0.9, c);
  }
  /* an anisotropic star, filled by hand */
  {
    strata_stencil *s = &ops[n].op;
    snprintf(ops[n++].name, 64, "anisotropic star r=3");
    strata_stencil_laplacian(s, dims, 6, 1.0);
    for (int a = 0; a < dims; a++)
      for (int k = 1; k <= 3; k++) s->coef[a][k] *= (a + 1) * 0.5;
  }
  if (dims >= 2) {
    double K[27];
    for (int q = 0; q < 27; q++) K[q] = rand_r(&seed) / (double)RAND_MAX - 0.5;
    snprintf(ops[n].name, 64, "general box %d", dims == 3 ? 27 : 9);
    strata_stencil_box(&ops[n++].op, dims, K);
  }
  if (dims == 2) {
    snprintf(ops[n].name, 64, "9-point laplacian");
    strata_stencil_laplacian9(&ops[n++].op, 0.5);
  }
  if (dims == 3) {
    snprintf(ops[n].name, 64, "symmetric 27 (FD 7-point preset)");
    strata_stencil_box_symmetric(&ops[n++].op, 1.0, -1.0 / 6, 0, 0);
    snprintf(ops[n].name, 64, "symmetric 27 (FE preset)");
    strata_stencil_box_symmetric(&ops[n++].op, 8.0 / 3, 0, -1.0 / 6, -1.0 / 12);
    snprintf(ops[n].name, 64, "symmetric 27 (random)");
    strata_stencil_box_symmetric(&ops[n++].op, 0.3, -0.7, 0.11, 0.05);
  }
  return n;
}

static int boundaries(int dims, strata_boundary *bc, const char **names) {
  int n = 0;
  strata_boundary_uniform(&bc[n], STRATA_BC_DIRICHLET, 0.37);
  bc[n].value[1] = -1.25;
  names[n++] = "dirichlet";
  strata_boundary_uniform(&bc[n], STRATA_BC_NEUMANN, 0);
  names[n++] = "neumann";
  strata_boundary_uniform(&bc[n], STRATA_BC_PERIODIC, 0);
  names[n++] = "periodic";
  /* mixed: periodic x, Dirichlet/Neumann y, Neumann/Dirichlet z */
  strata_boundary_uniform(&bc[n], STRATA_BC_PERIODIC, 0);
  if (dims >= 2) {
    bc[n].kind[2] = STRATA_BC_DIRICHLET;
    bc[n].value[2] = 2.5;
    bc[n].kind[3] = STRATA_BC_NEUMANN;
  }
  if (dims >= 3) {
    bc[n].kind[4] = STRATA_BC_NEUMANN;
    bc[n].kind[5] = STRATA_BC_DIRICHLET;
    bc[n].value[5] = -0.5;
  }
  names[n++] = "mixed";
  strata_boundary_uniform(&bc[n], STRATA_BC_NONE, 0);
  names[n++] = "none";
  return n;
}

static int run_dims(int dims, const size_t n[3]) {
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  strata_context *ctx = NULL;
  CHECK_OK(strata_context_create(&ctx, &o), ctx);
  named_op ops[40];
  int nops = operators(dims, ops);
  strata_boundary bc[8];
  const char *bcn[8];
  int nbc = boundaries(dims, bc, bcn);
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

RUN_TESTS(operators_1d, operators_2d, operators_3d, operators_3d_large)
