/* Every operator x every CUDA variant x fp32/fp64 x every boundary condition,
 * on random data at odd sizes, checked twice:
 *   1. ref_check_apply: ghosts bit for bit against the plain reference, the
 *      output poisoned with NaN before the run, every interior point within
 *      (points + 2) * eps * sum |w_q u_q| of a long-double reference, the
 *      output's ghosts untouched;
 *   2. against the CPU engine on the same input (fill_random gives the same
 *      field on both): |gpu - cpu| <= 2 (points + 2) eps * sum|w| * max|u|,
 *      twice the bound each engine meets on its own.
 * Without a CUDA device every test skips, by name.  STRATA_TEST_QUICK=1 uses
 * small sizes and two boundary sets (for compute-sanitizer runs). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "runner.h"

typedef ref_named_op named_op;

static int quick(void) {
  const char *q = getenv("STRATA_TEST_QUICK");
  return q && *q && strcmp(q, "0") != 0;
}

/* A CUDA context, tuning: its tuning switches (NULL: none). */
static strata_context *cuda_ctx_tuned(const char *tuning, char *why,
                                      size_t n) {
  if (!strata_backend_available(STRATA_BACKEND_CUDA, why, n)) return NULL;
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CUDA;
  o.tune_cache = ""; /* autotune in memory only */
  o.tuning = tuning;
  o.errbuf = why;
  o.errbuf_size = n;
  strata_context *ctx = NULL;
  if (strata_context_create(&ctx, &o) != STRATA_OK) return NULL;
  return ctx;
}

static strata_context *cuda_ctx(char *why, size_t n) {
  return cuda_ctx_tuned(NULL, why, n);
}

/* Whether variant v is built and applies to op on gpu's device. */
static int variant_listed(strata_context *gpu, const strata_stencil *op,
                          const char *v) {
  char buf[512];
  if (strata_variants(gpu, op, buf, sizeof buf) != STRATA_OK) return 0;
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
    if (!strcmp(t, v)) return 1;
  return 0;
}

/* The CPU engine's output interior for the input ref_check_apply builds. */
static double *cpu_result(strata_context *cpu, const strata_stencil *op,
                          const size_t n[3], int ghost, strata_precision p,
                          const strata_boundary *bc, uint64_t seed) {
  strata_field *in = ref_random_field(cpu, op->dims, n[0], n[1], n[2], ghost,
                                      p, seed);
  strata_field_desc d = {op->dims, {n[0], n[1], n[2]}, ghost, p};
  strata_field *out = NULL;
  double *r = NULL;
  if (in && strata_field_create(cpu, &d, &out) == STRATA_OK &&
      strata_field_fill_ghosts(in, bc) == STRATA_OK &&
      strata_apply(op, in, out, NULL) == STRATA_OK)
    r = ref_read(out, 0);
  strata_field_destroy(&in);
  strata_field_destroy(&out);
  return r;
}

/* Worst |a - b| over the bound described at the top of the file. */
static double cpu_gpu_ratio(const strata_stencil *op, const strata_boundary *bc,
                            strata_precision p, const double *a,
                            const double *b, size_t cnt, size_t *worst) {
  ref_point pts[27];
  int np = ref_points(op, pts);
  double sw = 0, umax = 1;
  for (int q = 0; q < np; q++) sw += fabs(pts[q].w);
  for (int f = 0; f < 2 * op->dims; f++)
    if (bc->kind[f] == STRATA_BC_DIRICHLET && fabs(bc->value[f]) > umax)
      umax = fabs(bc->value[f]);
  double bound = 2 * (np + 2) * ref_eps(p) * sw * umax;
  double r = 0;
  for (size_t i = 0; i < cnt; i++) {
    double e = fabs(a[i] - b[i]) / bound;
    if (!(e <= r)) {
      r = e;
      if (worst) *worst = i;
      if (e != e) break;
    }
  }
  return r;
}

/* Names in a comma-separated list, plus "auto". */
static int split_variants(const char *list, char names[][16], int max) {
  int n = 0;
  const char *c = list;
  while (*c && n < max - 1) {
    size_t len = strcspn(c, ",");
    snprintf(names[n++], 16, "%.*s", (int)len, c);
    c += len;
    if (*c == ',') c++;
  }
  snprintf(names[n++], 16, "auto");
  return n;
}

/* all_bc: every boundary set for every operator, else one per operator. */
static int run_dims(int dims, const size_t n[3], int all_bc) {
  char why[512] = "";
  strata_context *gpu = cuda_ctx(why, sizeof why);
  if (!gpu) SKIP("no CUDA device: %s", why);
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  strata_context *cpu = NULL;
  CHECK_OK(strata_context_create(&cpu, &o), cpu);
  named_op ops[48];
  int nops = ref_operator_set(dims, ops);
  strata_boundary bc[8];
  const char *bcn[8];
  int nbc = ref_boundary_set(dims, bc, bcn);
  int fails = 0, checks = 0;
  double worst_ref = 0, worst_cpu = 0;
  for (int q = 0; q < nops; q++) {
    char list[256], names[16][16];
    CHECK_OK(strata_variants(gpu, &ops[q].op, list, sizeof list), gpu);
    int nv = split_variants(list, names, 16);
    for (int p = 0; p < 2; p++)
      for (int b = 0; b < nbc; b++) {
        if (quick() && b != 2 && b != 3) continue;
        if (!all_bc && b != (q + p) % nbc) continue;
        strata_precision prec = p ? STRATA_F64 : STRATA_F32;
        int ghost = ops[q].op.radius + (q + b) % 2;
        uint64_t seed = 5000u + (unsigned)(q * 64 + b * 2 + p);
        double *cres = cpu_result(cpu, &ops[q].op, n, ghost, prec, &bc[b], seed);
        CHECK(cres != NULL);
        size_t cnt = n[0] * n[1] * n[2];
        for (int v = 0; v < nv; v++) {
          double ratio = 0, *gres = NULL;
          checks++;
          int bad = ref_check_apply(gpu, &ops[q].op, n, ghost, prec, &bc[b],
                                    names[v], seed, &ratio, &gres);
          if (ratio > worst_ref) worst_ref = ratio;
          if (!bad) {
            size_t w = 0;
            double rc = cpu_gpu_ratio(&ops[q].op, &bc[b], prec, gres, cres,
                                      cnt, &w);
            if (rc > worst_cpu) worst_cpu = rc;
            if (!(rc <= 1.0)) {
              fprintf(stderr, "  point %zu: gpu %.10g, cpu %.10g (%.3g x the "
                      "bound)\n", w, gres[w], cres[w], rc);
              bad = 1;
            }
          }
          if (bad) {
            fprintf(stderr, "  FAILED: %s, variant %s, %s, %s boundaries, "
                    "ghost %d\n", ops[q].name, names[v],
                    p ? "fp64" : "fp32", bcn[b], ghost);
            fails++;
          }
          free(gres);
        }
        free(cres);
      }
  }
  printf("  %dD %zux%zux%zu: %d checks, %d failed, worst error %.3f of the "
         "reference bound, %.3f of the CPU bound\n", dims, n[0], n[1], n[2],
         checks, fails, worst_ref, worst_cpu);
  strata_context_destroy(&cpu);
  strata_context_destroy(&gpu);
  CHECK(fails == 0);
  return 0;
}

/* Non-default launch shapes: each must give the default shape's answer
 * within the CPU bound, write every interior point and no ghost.  The
 * seeds' strategies are checked when built (-DSTRATA_CUDA_SEEDS=ON). */
TEST(cuda_block_shapes) {
  char why[512] = "";
  strata_context *gpu = cuda_ctx(why, sizeof why);
  if (!gpu) SKIP("no CUDA device: %s", why);
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  strata_context *cpu = NULL;
  CHECK_OK(strata_context_create(&cpu, &o), cpu);
  const size_t n[3] = {quick() ? 37 : 67, quick() ? 21 : 45, quick() ? 13 : 38};
  struct {
    const char *variant;
    int block[3];
    int kind; /* 0 laplacian order 8, 1 laplacian order 2, 2 sym27, 3 box,
                 4 d/dx, 5 d/dy, 6 d/dz */
    int zchunks; /* tuning switch zchunks (long z walks), 0 = the model's */
  } cases[] = {
      {"stream", {32, 4, 1}, 0, 0},   {"stream", {16, 16, 1}, 0, 0},
      {"stream", {64, 2, 1}, 1, 0},   {"streamv", {32, 4, 2}, 0, 0},
      {"streamv", {16, 8, 2}, 0, 0},  {"streamv", {8, 16, 1}, 0, 0},
      {"streamv", {32, 16, 1}, 1, 0}, {"streamv", {32, 8, 2}, 1, 0},
      {"kd", {32, 8, 1}, 2, 0},       {"kd", {16, 6, 1}, 3, 0},
      {"kd", {64, 4, 1}, 1, 0},       {"kdv", {16, 8, 1}, 2, 0},
      {"kdv", {32, 4, 1}, 3, 0},      {"kdv", {8, 8, 1}, 1, 0},
      {"streamcp", {32, 4, 2}, 0, 0}, {"streamcp", {8, 16, 1}, 0, 0},
      {"streamcp", {32, 16, 1}, 1, 0}, {"streamcp", {16, 8, 2}, 1, 0},
      {"streamrq", {32, 4, 2}, 0, 0}, {"streamrq", {8, 16, 1}, 0, 0},
      {"streamrq", {32, 8, 1}, 1, 0}, {"streamrq", {16, 8, 2}, 1, 0},
      {"streamrq", {16, 4, 1}, 0, 0}, {"kdv", {32, 4, 2}, 2, 0},
      {"kdv", {16, 8, 2}, 3, 0},      {"kdv", {32, 8, 2}, 1, 0},
      {"kdcp", {16, 8, 1}, 2, 0},     {"kdcp", {32, 4, 1}, 3, 0},
      {"kdcp", {8, 8, 1}, 1, 0},      {"kdcp", {32, 16, 1}, 2, 0},
      {"kdcp", {32, 4, 2}, 2, 0},     {"kdcp", {16, 8, 4}, 2, 0},
      {"kdcp", {8, 8, 4}, 3, 0},      {"kdcp", {32, 8, 2}, 1, 0},
      {"streamtma", {32, 4, 2}, 0, 0}, {"streamtma", {8, 16, 1}, 0, 0},
      {"streamtma", {32, 16, 1}, 1, 0}, {"streamtma", {16, 8, 2}, 1, 0},
      {"streamtma", {48, 2, 1}, 0, 0},
      {"streamws", {32, 4, 2}, 0, 0},  {"streamws", {8, 16, 1}, 0, 0},
      {"streamws", {32, 16, 1}, 1, 0}, {"streamws", {16, 8, 2}, 1, 0},
      {"streamws", {16, 32, 1}, 0, 1}, {"streamws", {16, 32, 1}, 1, 0},
      {"kdtma", {32, 4, 4}, 2, 0},    {"kdtma", {16, 8, 2}, 3, 0},
      {"kdtma", {8, 8, 1}, 1, 0},     {"kdtma", {32, 16, 2}, 2, 0},
      {"kdws", {32, 4, 4}, 2, 0},     {"kdws", {16, 8, 2}, 3, 0},
      {"kdws", {8, 8, 4}, 1, 0},      {"kdws", {32, 7, 1}, 2, 0},
      {"pencil", {16, 8, 1}, 4, 0},   {"pencil", {64, 4, 1}, 5, 0},
      {"pencil", {8, 32, 1}, 6, 0},   {"smem", {16, 16, 1}, 3, 0},
      {"naive", {64, 2, 2}, 2, 0},    {"naive", {8, 8, 8}, 0, 0},
      /* vecz: rows per thread in block z; whole-depth and uneven chunks */
      {"vecz", {32, 4, 4}, 2, 0},  {"vecz", {32, 8, 2}, 3, 3},
      {"vecz", {32, 1, 1}, 2, 1},  {"vecz", {32, 2, 4}, 3, 1},
      {"vecz", {64, 4, 1}, 2, 5},  {"vecz", {32, 8, 2}, 2, 2},
      {"vecz", {64, 1, 4}, 3, 0},  {"kdcp", {32, 4, 4}, 2, 1},
      {"streamtma", {32, 8, 1}, 0, 1},
      /* vec (the 7-point): block z is the planes per thread */
      {"vec", {32, 8, 1}, 1, 0},   {"vec", {64, 4, 2}, 1, 0},
      {"vec", {32, 4, 4}, 1, 0},   {"vec", {16, 2, 4}, 1, 0},
  };
  strata_boundary bc;
  strata_boundary_uniform(&bc, STRATA_BC_PERIODIC, 0);
  bc.kind[2] = bc.kind[3] = STRATA_BC_NEUMANN;
  bc.kind[4] = STRATA_BC_DIRICHLET;
  bc.value[4] = 0.5;
  bc.kind[5] = STRATA_BC_DIRICHLET;
  bc.value[5] = -0.25;
  int fails = 0, checks = 0, unbuilt = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int p = 0; p < 2; p++) {
      strata_precision prec = p ? STRATA_F64 : STRATA_F32;
      strata_stencil op;
      const double K[27] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9,
                            1.0, 1.1, -1.2, 1.3, -1.4, 1.5, 1.6, 1.7, -1.8,
                            1.9, 2.0, 2.1, -2.2, 2.3, 2.4, 2.5, 2.6, -2.7};
      switch (cases[c].kind) {
      case 0: strata_stencil_laplacian(&op, 3, 8, 0.9); break;
      case 1: strata_stencil_laplacian(&op, 3, 2, 0.9); break;
      case 2: strata_stencil_box_symmetric(&op, 0.3, -0.7, 0.11, 0.05); break;
      case 3: strata_stencil_box(&op, 3, K); break;
      default: strata_stencil_derivative(&op, 3, cases[c].kind - 4, 8, 0.4);
      }
      if (!variant_listed(gpu, &op, cases[c].variant)) {
        unbuilt++;
        continue;
      }
      /* a context of its own for a forced z chunking */
      strata_context *zg = NULL;
      if (cases[c].zchunks) {
        char tun[32];
        snprintf(tun, sizeof tun, "zchunks=%d", cases[c].zchunks);
        zg = cuda_ctx_tuned(tun, why, sizeof why);
        CHECKF(zg != NULL, "%s", why);
      }
      strata_context *g = zg ? zg : gpu;
      const int ghost = op.radius;
      const uint64_t seed = 900u + c * 2 + (unsigned)p;
      double *cres = cpu_result(cpu, &op, n, ghost, prec, &bc, seed);
      CHECK(cres != NULL);
      strata_field *in = ref_random_field(g, 3, n[0], n[1], n[2], ghost, prec,
                                          seed);
      CHECK(in != NULL);
      strata_field_desc d = {3, {n[0], n[1], n[2]}, ghost, prec};
      strata_field *out = NULL;
      CHECK_OK(strata_field_create(g, &d, &out), g);
      CHECK_OK(strata_field_fill_ghosts(in, &bc), g);
      CHECK_OK(strata_field_fill(out, NAN), g);
      strata_apply_options opt = {cases[c].variant,
                                  {cases[c].block[0], cases[c].block[1],
                                   cases[c].block[2]}};
      checks++;
      strata_status s = strata_apply(&op, in, out, &opt);
      int bad = 0;
      if (s != STRATA_OK) {
        fprintf(stderr, "  apply: %s: %s\n", strata_status_name(s),
                strata_context_error(g));
        bad = 1;
      } else {
        double *g = ref_read(out, 1);
        CHECK(g != NULL);
        const long gx = (long)n[0] + 2 * ghost, gy = (long)n[1] + 2 * ghost;
        double *interior = malloc(n[0] * n[1] * n[2] * sizeof(double));
        CHECK(interior != NULL);
        for (long k = 0; k < (long)n[2] + 2 * ghost; k++)
          for (long j = 0; j < gy; j++)
            for (long i = 0; i < gx; i++) {
              long ii = i - ghost, jj = j - ghost, kk = k - ghost;
              double v = g[i + gx * (j + gy * k)];
              if (ii >= 0 && ii < (long)n[0] && jj >= 0 && jj < (long)n[1] &&
                  kk >= 0 && kk < (long)n[2])
                interior[ii + (long)n[0] * (jj + (long)n[1] * kk)] = v;
              else if (v == v && !bad) {
                fprintf(stderr, "  output ghost (%ld,%ld,%ld) written\n", ii,
                        jj, kk);
                bad = 1;
              }
            }
        size_t w = 0;
        double r = cpu_gpu_ratio(&op, &bc, prec, interior, cres,
                                 n[0] * n[1] * n[2], &w);
        if (!(r <= 1.0)) {
          fprintf(stderr, "  point %zu: gpu %.10g cpu %.10g (%.3g x bound)\n",
                  w, interior[w], cres[w], r);
          bad = 1;
        }
        free(g);
        free(interior);
      }
      if (bad) {
        fprintf(stderr, "  FAILED: %s block %dx%dx%d, z chunks %d, case "
                "%zu, %s\n", cases[c].variant, cases[c].block[0],
                cases[c].block[1], cases[c].block[2], cases[c].zchunks, c,
                p ? "fp64" : "fp32");
        fails++;
      }
      free(cres);
      strata_field_destroy(&in);
      strata_field_destroy(&out);
      strata_context_destroy(&zg);
    }
  printf("  %d launch shapes checked, %d failed, %d of variants not built "
         "here\n", checks, fails, unbuilt);
  strata_context_destroy(&cpu);
  strata_context_destroy(&gpu);
  CHECK(fails == 0);
  return 0;
}

TEST(cuda_ops_1d) {
  if (quick()) return run_dims(1, (size_t[3]){101, 1, 1}, 1);
  int r = run_dims(1, (size_t[3]){1001, 1, 1}, 1);
  return r ? r : run_dims(1, (size_t[3]){67, 1, 1}, 1);
}
TEST(cuda_ops_2d) {
  if (quick()) return run_dims(2, (size_t[3]){37, 29, 1}, 1);
  int r = run_dims(2, (size_t[3]){257, 129, 1}, 1);
  return r ? r : run_dims(2, (size_t[3]){67, 45, 1}, 1);
}
TEST(cuda_ops_3d) {
  if (quick()) return run_dims(3, (size_t[3]){37, 21, 13}, 1);
  return run_dims(3, (size_t[3]){67, 45, 38}, 1);
}
TEST(cuda_ops_3d_large) {
  if (quick()) SKIP("STRATA_TEST_QUICK is set");
  return run_dims(3, (size_t[3]){257, 129, 65}, 0);
}

RUN_TESTS(cuda_ops_1d, cuda_ops_2d, cuda_ops_3d, cuda_ops_3d_large,
          cuda_block_shapes)
