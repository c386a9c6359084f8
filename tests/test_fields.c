/* Fields: layout and alignment, transfers, fills, norms, and the refusal of
 * bad input with a clear status and message, touching nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "runner.h"

static strata_context *cpu(void) {
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  strata_context *ctx = NULL;
  return strata_context_create(&ctx, &o) == STRATA_OK ? ctx : NULL;
}

TEST(status_table) {
  CHECK(strcmp(strata_strerror(STRATA_OK), "success") == 0);
  CHECK(strcmp(strata_status_name(STRATA_EGHOST), "STRATA_EGHOST") == 0);
  CHECK(strcmp(strata_strerror((strata_status)999), "unknown status") == 0);
  for (int s = 0; s < STRATA__STATUS_COUNT; s++)
    CHECK(strlen(strata_strerror((strata_status)s)) > 0);
  strata_backend b;
  CHECK(strata_backend_parse("cpu", &b) == STRATA_OK && b == STRATA_BACKEND_CPU);
  CHECK(strata_backend_parse("gpu", &b) == STRATA_EINVAL);
  strata_bc_kind k;
  CHECK(strata_bc_parse("periodic", &k) == STRATA_OK && k == STRATA_BC_PERIODIC);
  CHECK(strata_bc_parse("mirror", &k) == STRATA_EINVAL);
  return 0;
}

TEST(context_lifecycle) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  CHECK(strata_context_backend(ctx) == STRATA_BACKEND_CPU);
  strata_device_info info;
  CHECK_OK(strata_context_device_info(ctx, &info), ctx);
  CHECK(info.multiprocessors >= 1 && info.memory_bytes > 0);
  strata_context_destroy(&ctx);
  CHECK(ctx == NULL);
  strata_context_destroy(&ctx); /* NULL is harmless */
  strata_context_destroy(NULL);
  /* bad options, with the reason in errbuf */
  char why[256] = "";
  strata_context_options o;
  strata_context_options_init(&o);
  o.threads = -3;
  o.errbuf = why;
  o.errbuf_size = sizeof why;
  CHECK(strata_context_create(&ctx, &o) == STRATA_EINVAL && ctx == NULL);
  CHECK(strstr(why, "threads") != NULL);
  /* auto always gives a usable backend */
  strata_context_options_init(&o);
  CHECK(strata_context_create(&ctx, &o) == STRATA_OK);
  CHECK(strata_context_backend(ctx) != STRATA_BACKEND_AUTO);
  strata_context_destroy(&ctx);
  /* CUDA asked for without a device (or without CUDA) fails cleanly */
  char reason[256];
  if (!strata_backend_available(STRATA_BACKEND_CUDA, reason, sizeof reason)) {
    strata_context_options_init(&o);
    o.backend = STRATA_BACKEND_CUDA;
    o.errbuf = why;
    o.errbuf_size = sizeof why;
    CHECK(strata_context_create(&ctx, &o) == STRATA_ENOBACKEND);
    CHECK(ctx == NULL && strlen(why) > 0);
    printf("  cuda unavailable: %s\n", why);
  }
  return 0;
}

TEST(layout_alignment) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  for (int p = 0; p < 2; p++)
    for (int dims = 1; dims <= 3; dims++)
      for (int g = 1; g <= STRATA_MAX_GHOST; g++) {
        strata_precision prec = p ? STRATA_F64 : STRATA_F32;
        strata_field_desc d = {dims, {37, dims > 1 ? 5 : 1, dims > 2 ? 3 : 1},
                               g, prec};
        strata_field *f = NULL;
        CHECK_OK(strata_field_create(ctx, &d, &f), ctx);
        strata_field_layout L;
        CHECK_OK(strata_field_get_layout(f, &L), ctx);
        size_t es = (size_t)prec;
        CHECK((L.pitch_x * es) % 128 == 0);
        CHECK((L.origin * es) % 128 == 0);
        CHECK(L.pitch_x >= d.n[0] + 2 * (size_t)g);
        CHECK(L.origin >= (size_t)g);
        CHECK(L.elements * es == L.bytes);
        size_t bytes = 0;
        CHECK(strata_field_bytes(&d, &bytes) == STRATA_OK && bytes == L.bytes);
        strata_field_destroy(&f);
        CHECK(f == NULL);
      }
  strata_context_destroy(&ctx);
  return 0;
}

TEST(write_read_roundtrip) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_field_desc d = {3, {19, 7, 5}, 3, STRATA_F64};
  strata_field *f = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &f), ctx);
  size_t n = 19 * 7 * 5, ng = 25 * 13 * 11;
  double *a = malloc(ng * sizeof(double)), *b = malloc(ng * sizeof(double));
  CHECK(a && b);
  for (size_t i = 0; i < ng; i++) a[i] = (double)i * 0.5 - 3;
  CHECK_OK(strata_field_write_ghosted(f, a), ctx);
  CHECK_OK(strata_field_read_ghosted(f, b), ctx);
  CHECK(memcmp(a, b, ng * sizeof(double)) == 0);
  /* writing the interior keeps the ghosts */
  for (size_t i = 0; i < n; i++) a[i] = -(double)i;
  CHECK_OK(strata_field_write(f, a), ctx);
  CHECK_OK(strata_field_read(f, b), ctx);
  CHECK(memcmp(a, b, n * sizeof(double)) == 0);
  CHECK_OK(strata_field_read_ghosted(f, b), ctx);
  CHECK(b[0] == -3.0); /* ghost corner from the ghosted write */
  CHECK(b[3 + 25 * (3 + 13 * 3)] == 0.0); /* interior (0,0,0) = -0 */
  free(a);
  free(b);
  strata_field_destroy(&f);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(fills_and_norms) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_field *a = ref_random_field(ctx, 3, 21, 11, 9, 2, STRATA_F32, 7);
  strata_field *b = ref_random_field(ctx, 3, 21, 11, 9, 2, STRATA_F32, 7);
  strata_field *c = ref_random_field(ctx, 3, 21, 11, 9, 2, STRATA_F32, 8);
  CHECK(a && b && c);
  double v;
  CHECK_OK(strata_field_diff(a, b, STRATA_NORM_MAX, &v), ctx);
  CHECK(v == 0.0); /* same seed, same field */
  CHECK_OK(strata_field_diff(a, c, STRATA_NORM_MAX, &v), ctx);
  CHECK(v > 0.5 && v < 2.0); /* other seed: different, within [-1,1) */
  /* random values fill [-1, 1) and look uniform */
  CHECK_OK(strata_field_norm(a, STRATA_NORM_MAX, &v), ctx);
  CHECK(v <= 1.0 && v > 0.99);
  CHECK_OK(strata_field_norm(a, STRATA_NORM_RMS, &v), ctx);
  CHECK(fabs(v - sqrt(1.0 / 3.0)) < 0.03);
  CHECK_OK(strata_field_norm(a, STRATA_NORM_SUM, &v), ctx);
  CHECK(fabs(v) < 0.05 * 21 * 11 * 9);
  /* constant fill: exact norms */
  CHECK_OK(strata_field_fill(a, 2.0), ctx);
  CHECK_OK(strata_field_norm(a, STRATA_NORM_L2, &v), ctx);
  CHECK(fabs(v - 2.0 * sqrt(21.0 * 11 * 9)) < 1e-9);
  CHECK_OK(strata_field_norm(a, STRATA_NORM_SUM, &v), ctx);
  CHECK(v == 2.0 * 21 * 11 * 9);
  /* copy includes ghosts */
  CHECK_OK(strata_field_copy(a, c), ctx);
  double *ga = ref_read(a, 1), *gc = ref_read(c, 1);
  CHECK(ga && gc);
  CHECK(memcmp(ga, gc, 25 * 15 * 13 * sizeof(double)) == 0);
  free(ga);
  free(gc);
  /* NaN shows in every norm */
  CHECK_OK(strata_field_fill(b, NAN), ctx);
  CHECK_OK(strata_field_norm(b, STRATA_NORM_MAX, &v), ctx);
  CHECK(isnan(v));
  CHECK_OK(strata_field_norm(b, STRATA_NORM_L2, &v), ctx);
  CHECK(isnan(v));
  strata_field_destroy(&a);
  strata_field_destroy(&b);
  strata_field_destroy(&c);
  strata_context_destroy(&ctx);
  return 0;
}

static double fn_index(long i, long j, long k, void *u) {
  (void)u;
  return (double)(i + 100 * j + 10000 * k);
}

TEST(fill_function_covers_ghosts) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_field_desc d = {2, {6, 4, 1}, 2, STRATA_F64};
  strata_field *f = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &f), ctx);
  CHECK_OK(strata_field_fill_fn(f, fn_index, NULL), ctx);
  double g[10 * 8];
  CHECK_OK(strata_field_read_ghosted(f, g), ctx);
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 10; i++)
      CHECK(g[i + 10 * j] == (double)((i - 2) + 100 * (j - 2)));
  strata_field_destroy(&f);
  strata_context_destroy(&ctx);
  return 0;
}

/* Bad input: a clear status and message, and nothing touched. */
TEST(bad_input) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_field *f = NULL;
  strata_field_desc d = {3, {0, 4, 4}, 1, STRATA_F32};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EINVAL, ctx);
  CHECK(f == NULL && strstr(strata_context_error(ctx), "size along x is 0"));
  d = (strata_field_desc){3, {(size_t)-5, 4, 4}, 1, STRATA_F32}; /* negative */
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EOVERFLOW, ctx);
  CHECK(strstr(strata_context_error(ctx), "negative") != NULL);
  d = (strata_field_desc){3, {1u << 30, 1u << 30, 1u << 30}, 1, STRATA_F64};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EOVERFLOW, ctx);
  d = (strata_field_desc){3, {4, 4, 4}, 0, STRATA_F32};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "ghost width is 0"));
  d = (strata_field_desc){3, {4, 4, 4}, 9, STRATA_F32};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EINVAL, ctx);
  d = (strata_field_desc){4, {4, 4, 4}, 1, STRATA_F32};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EINVAL, ctx);
  d = (strata_field_desc){2, {4, 4, 4}, 1, STRATA_F32}; /* nz must be 1 */
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EINVAL, ctx);
  d = (strata_field_desc){3, {4, 4, 4}, 1, (strata_precision)2};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EINVAL, ctx);
  /* larger than the machine's memory: refused before allocating, with both
   * numbers in the message */
  d = (strata_field_desc){3, {1u << 14, 1u << 14, 1u << 12}, 1, STRATA_F64};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_ENOMEM, ctx);
  CHECK(strstr(strata_context_error(ctx), "bytes") != NULL);
  printf("  %s\n", strata_context_error(ctx));
  CHECK(f == NULL);
  CHECK(strata_field_create(NULL, &d, &f) == STRATA_EINVAL);
  CHECK_STATUS(strata_field_create(ctx, NULL, &f), STRATA_EINVAL, ctx);

  /* operator misuse */
  strata_field *a = ref_random_field(ctx, 3, 9, 8, 7, 1, STRATA_F32, 1);
  strata_field *b = ref_random_field(ctx, 3, 9, 8, 7, 1, STRATA_F32, 2);
  strata_field *c64 = ref_random_field(ctx, 3, 9, 8, 7, 4, STRATA_F64, 3);
  strata_field *small = ref_random_field(ctx, 3, 9, 8, 6, 4, STRATA_F32, 4);
  strata_field *two = ref_random_field(ctx, 2, 9, 8, 1, 4, STRATA_F32, 5);
  CHECK(a && b && c64 && small && two);
  double *before = ref_read(b, 1);
  CHECK(before);
  strata_stencil lap8, lap2, lap2d;
  CHECK(strata_stencil_laplacian(&lap8, 3, 8, 1.0) == STRATA_OK);
  CHECK(strata_stencil_laplacian(&lap2, 3, 2, 1.0) == STRATA_OK);
  CHECK(strata_stencil_laplacian(&lap2d, 2, 2, 1.0) == STRATA_OK);
  CHECK_STATUS(strata_apply(&lap8, a, b, NULL), STRATA_EGHOST, ctx);
  CHECK(strstr(strata_context_error(ctx), "radius 4"));
  CHECK_STATUS(strata_apply(&lap2, a, c64, NULL), STRATA_EPRECISION, ctx);
  CHECK_STATUS(strata_apply(&lap2, small, b, NULL), STRATA_ESHAPE, ctx);
  CHECK_STATUS(strata_apply(&lap2d, a, b, NULL), STRATA_ESHAPE, ctx);
  CHECK_STATUS(strata_apply(&lap2, a, a, NULL), STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_apply(NULL, a, b, NULL), STRATA_EINVAL, ctx);
  CHECK(strata_apply(&lap2, NULL, b, NULL) == STRATA_EINVAL);
  CHECK_STATUS(strata_apply(&lap2, a, NULL, NULL), STRATA_EINVAL, ctx);
  strata_apply_options opt = {"warp-speed", {0, 0, 0}};
  CHECK_STATUS(strata_apply(&lap2, a, b, &opt), STRATA_ENOTSUP, ctx);
  CHECK(strstr(strata_context_error(ctx), "known"));
  strata_stencil bad = lap2;
  bad.radius = 7;
  CHECK_STATUS(strata_apply(&bad, a, b, NULL), STRATA_EINVAL, ctx);
  bad = lap2;
  bad.center = NAN;
  CHECK_STATUS(strata_apply(&bad, a, b, NULL), STRATA_EINVAL, ctx);
  CHECK(strata_stencil_laplacian(&bad, 3, 3, 1.0) == STRATA_EINVAL);
  CHECK(strata_stencil_laplacian(&bad, 3, 2, 0.0) == STRATA_EINVAL);
  CHECK(strata_stencil_derivative(&bad, 2, 2, 8, 1.0) == STRATA_EINVAL);
  /* boundary misuse */
  strata_boundary bc;
  strata_boundary_uniform(&bc, STRATA_BC_NEUMANN, 0);
  bc.kind[STRATA_FACE_YLO] = STRATA_BC_PERIODIC;
  CHECK_STATUS(strata_field_fill_ghosts(b, &bc), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "both faces"));
  strata_boundary_uniform(&bc, STRATA_BC_DIRICHLET, INFINITY);
  CHECK_STATUS(strata_field_fill_ghosts(b, &bc), STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_field_fill_ghosts(b, NULL), STRATA_EINVAL, ctx);
  /* mismatched copies and diffs */
  CHECK_STATUS(strata_field_copy(a, small), STRATA_ESHAPE, ctx);
  CHECK_STATUS(strata_field_copy(a, c64), STRATA_EPRECISION, ctx);
  double v;
  CHECK_STATUS(strata_field_diff(a, two, STRATA_NORM_MAX, &v), STRATA_ESHAPE, ctx);
  CHECK_STATUS(strata_field_norm(a, (strata_norm)9, &v), STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_field_fill_random(a, 1, 1.0, 0.0), STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_field_fill_fn(a, NULL, NULL), STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_field_write(a, NULL), STRATA_EINVAL, ctx);
  /* nothing touched: b is as it was */
  double *after = ref_read(b, 1);
  CHECK(after);
  CHECK(memcmp(before, after, 11 * 10 * 9 * sizeof(double)) == 0);
  free(before);
  free(after);
  strata_field_destroy(&a);
  strata_field_destroy(&b);
  strata_field_destroy(&c64);
  strata_field_destroy(&small);
  strata_field_destroy(&two);
  strata_field_destroy(NULL);
  strata_context_destroy(&ctx);
  return 0;
}

/* Tuning switches are checked when the context is made: a misspelt key is
 * refused with its name, a known one accepted. */
TEST(tuning_switches) {
  char why[256] = "";
  strata_context *ctx = NULL;
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  o.errbuf = why;
  o.errbuf_size = sizeof why;
  o.tuning = "zchunks=2, wave_kernel_typo=1";
  CHECK(strata_context_create(&ctx, &o) == STRATA_EINVAL && ctx == NULL);
  CHECK(strstr(why, "wave_kernel_typo") != NULL);
  o.tuning = "zchunks";
  CHECK(strata_context_create(&ctx, &o) == STRATA_EINVAL && ctx == NULL);
  CHECK(strstr(why, "KEY=VALUE") != NULL);
  o.tuning = " zchunks=2;tma_hint=1 ";
  CHECK(strata_context_create(&ctx, &o) == STRATA_OK && ctx != NULL);
  strata_context_destroy(&ctx);
  /* a known key with a value its switch does not take: refused, naming
   * the key, the value and what it takes */
  const struct {
    const char *tuning, *want;
  } bad[] = {{"wave_pair=yes", "an integer from 0 to 1"},
             {"tma_hint=off", "an integer from 0 to 5"},
             {"wave_zcap=0", "an integer from 1 to"},
             {"wave_cpmly=paralel", "one of pass|serial"},
             {"tma_l2=100", "one of 0|64|128|256"},
             {"dist_link_gbs=-1", "a number >= 0"},
             {"dist_mem_gbs=nan", "a number >= 0"},
             {"fused3d_shape=4/8", "V/NW/LR"},
             {"fused3d_shape=4/8/0", "V/NW/LR"},
             {"tune_break=vec++smem", "names joined by '+'"},
             {"zchunks=", "a value of at most"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o.tuning = bad[i].tuning;
    why[0] = 0;
    CHECKF(strata_context_create(&ctx, &o) == STRATA_EINVAL && ctx == NULL,
           "%s accepted", bad[i].tuning);
    CHECKF(strstr(why, bad[i].want) &&
               !strncmp(why, "tuning key '", 12) &&
               strstr(why, strchr(bad[i].tuning, '=') + 1),
           "%s: %s", bad[i].tuning, why);
  }
  o.tuning = "wave_pair=1,wave_cpmly=serial,tma_l2=256,dist_link_us=0,"
             "fused3d_shape=4/8/4/2,tune_break=vec+smem,wave_faces=pass";
  CHECK(strata_context_create(&ctx, &o) == STRATA_OK && ctx != NULL);
  strata_context_destroy(&ctx);
  return 0;
}

/* A refusal about one argument names it (the description's field, the
 * boundary's face, the second operand) with its value. */
TEST(refusals_name_the_argument) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_field *f = NULL, *g = NULL, *h = NULL;
  CHECK_ARG(ctx, "", "");
  strata_field_desc d = {3, {4, 4, 4}, 9, STRATA_F32};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "ghost", "9");
  d = (strata_field_desc){3, {4, 0, 4}, 1, STRATA_F32};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "n[1]", "0");
  d = (strata_field_desc){2, {4, 4, 3}, 1, STRATA_F32};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "n[2]", "3");
  d = (strata_field_desc){0, {4, 4, 4}, 1, STRATA_F32};
  CHECK_STATUS(strata_field_create(ctx, &d, &f), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "dims", "0");
  d = (strata_field_desc){2, {8, 6, 1}, 1, STRATA_F64};
  CHECK_OK(strata_field_create(ctx, &d, &f), ctx);
  d.precision = STRATA_F32;
  CHECK_OK(strata_field_create(ctx, &d, &g), ctx);
  d = (strata_field_desc){2, {8, 5, 1}, 1, STRATA_F64};
  CHECK_OK(strata_field_create(ctx, &d, &h), ctx);
  CHECK_STATUS(strata_field_copy(f, g), STRATA_EPRECISION, ctx);
  CHECK_ARG(ctx, "src", "4");
  strata_stencil op;
  CHECK_OK(strata_stencil_laplacian(&op, 2, 2, 1.0), ctx);
  CHECK_STATUS(strata_apply(&op, f, h, NULL), STRATA_ESHAPE, ctx);
  CHECK_ARG(ctx, "out", "8, 5, 1");
  strata_boundary bc;
  strata_boundary_uniform(&bc, STRATA_BC_DIRICHLET, 0);
  bc.kind[2] = STRATA_BC_PERIODIC;
  CHECK_STATUS(strata_field_fill_ghosts(f, &bc), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "bc.kind[3]", "0");
  bc.kind[2] = STRATA_BC_DIRICHLET;
  bc.value[1] = INFINITY;
  CHECK_STATUS(strata_field_fill_ghosts(f, &bc), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "bc.value[1]", "inf");
  CHECK_STATUS(strata_field_norm(f, (strata_norm)9, &(double){0}),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "which", "9");
  CHECK_STATUS(strata_field_fill_random(f, 1, 2.5, 1), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "hi", "1");
  strata_device_info info;
  CHECK_STATUS(strata_context_device_info(ctx, NULL), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "info", "NULL");
  d = (strata_field_desc){3, {1u << 30, 1u << 30, 1u << 30}, 1, STRATA_F64};
  strata_field *huge = NULL; /* f stays f, to be destroyed */
  CHECK_STATUS(strata_field_create(ctx, &d, &huge), STRATA_EOVERFLOW, ctx);
  CHECK_ARG(ctx, "n", "1073741824, 1073741824, 1073741824");
  CHECK_OK(strata_context_device_info(ctx, &info), ctx);
  strata_field_destroy(&f);
  strata_field_destroy(&g);
  strata_field_destroy(&h);
  strata_context_destroy(&ctx);
  return 0;
}

/* A preset whose spacing leaves a weight infinite (or zero) is refused
 * when it is built, *s untouched; a hand-filled stencil's non-finite
 * weight is named at apply and at the operator solver's create. */
TEST(preset_weights_finite) {
  strata_stencil op, keep;
  memset(&keep, 0x5a, sizeof keep);
  op = keep;
  CHECK(strata_stencil_laplacian(&op, 2, 2, 1e-300) == STRATA_EINVAL);
  CHECK(memcmp(&op, &keep, sizeof op) == 0);
  CHECK(strata_stencil_laplacian(&op, 3, 8, 1e-154) == STRATA_EINVAL);
  CHECK(strata_stencil_laplacian(&op, 2, 2, 1e200) == STRATA_EINVAL);
  CHECK(strata_stencil_derivative(&op, 2, 0, 8, 1e-310) == STRATA_EINVAL);
  CHECK(strata_stencil_laplacian9(&op, 1e-300) == STRATA_EINVAL);
  CHECK(memcmp(&op, &keep, sizeof op) == 0);
  CHECK(strata_stencil_laplacian(&op, 3, 8, 1e-150) == STRATA_OK);
  CHECK(isfinite(op.center) && isfinite(op.coef[2][4]));
  CHECK(strata_stencil_derivative(&op, 2, 1, 8, 1e300) == STRATA_OK);

  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_field_desc d = {2, {8, 8, 1}, 1, STRATA_F64};
  strata_field *a = NULL, *b = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &a), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &b), ctx);
  CHECK_OK(strata_stencil_laplacian(&op, 2, 2, 1.0), ctx);
  op.coef[1][1] = INFINITY;
  CHECK_STATUS(strata_apply(&op, a, b, NULL), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "op.coef[1][1]", "inf");
  CHECK(strstr(strata_context_error(ctx), "weight coef[1][1] is inf"));
  op.coef[1][1] = 1;
  op.center = NAN;
  CHECK_STATUS(strata_apply(&op, a, b, NULL), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "op.center", "nan");
  op.center = -4;
  op.radius = 7;
  CHECK_STATUS(strata_apply(&op, a, b, NULL), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "op.radius", "7");
  strata_stencil_box_symmetric(&op, 1, 0, 0, 0);
  op.sym[2] = -INFINITY;
  char names[64];
  CHECK_STATUS(strata_variants(ctx, &op, names, sizeof names), STRATA_EINVAL,
               ctx);
  CHECK_ARG(ctx, "op.sym[2]", "-inf");
  /* the operator solver's create names it too */
  strata_operator_options oo;
  strata_operator_options_init(&oo);
  oo.n[0] = oo.n[1] = 8;
  oo.op.coef[0][1] = INFINITY;
  strata_solver_options so;
  strata_solver_options_init(&so, STRATA_SOLVER_OPERATOR);
  so.op = &oo;
  strata_solver *sv = NULL;
  CHECK_STATUS(strata_solver_create(ctx, &so, &sv), STRATA_EINVAL, ctx);
  CHECK(sv == NULL);
  CHECK_ARG(ctx, "op.coef[0][1]", "inf");
  strata_field_destroy(&a);
  strata_field_destroy(&b);
  strata_context_destroy(&ctx);
  return 0;
}

/* A context destroyed while fields (or a snapshot writer) made on it live
 * stays, with a message, so destroying them afterwards is no use after
 * free (run under ASan: -DCMAKE_C_FLAGS=-fsanitize=address,undefined);
 * once they are gone it is released. */
TEST(context_outlives_its_fields) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_context *keep = ctx;
  strata_field_desc d = {2, {8, 8, 1}, 1, STRATA_F32};
  strata_field *a = NULL, *b = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &a), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &b), ctx);
  strata_context_destroy(&ctx);
  CHECK(ctx == keep);
  CHECKF(strstr(strata_context_error(ctx), "not destroyed: 2 fields"), "%s",
         strata_context_error(ctx));
  strata_field_destroy(&a);
  CHECK_OK(strata_field_fill(b, 1.0), ctx); /* still a working context */
  strata_context_destroy(&ctx);
  CHECK(ctx == keep && strstr(strata_context_error(ctx), "1 field "));
  strata_field_destroy(&b);
  /* a snapshot writer's messages go to its context */
  strata_snapshot_options so;
  strata_snapshot_options_init(&so);
  so.dir = "/tmp";
  so.async = 0;
  strata_snapshot_writer *w = NULL;
  CHECK_OK(strata_snapshot_writer_create(ctx, &d, &so, &w), ctx);
  strata_context_destroy(&ctx);
  CHECK(ctx == keep && strstr(strata_context_error(ctx), "1 snapshot writer"));
  CHECK(strata_snapshot_status(w) == STRATA_OK);
  strata_snapshot_writer_destroy(&w);
  strata_context_destroy(&ctx);
  CHECK(ctx == NULL);
  return 0;
}

/* A message longer than the context's room for it ends at a word, with
 * "...", rather than mid-word; so does a create's errbuf. */
TEST(long_messages_end_at_a_word) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  char path[3000] = "/no/such/folder/";
  size_t k = strlen(path);
  while (k + 6 < sizeof path) k += (size_t)snprintf(path + k, 6, "word ");
  size_t shape[1] = {1};
  double one = 1;
  CHECK_STATUS(strata_npy_write(ctx, path, STRATA_F64, 1, shape, &one),
               STRATA_EIO, ctx);
  const char *m = strata_context_error(ctx);
  size_t L = strlen(m);
  CHECKF(L > 900 && L < 1024 && !strcmp(m + L - 7, "word..."), "%zu: %s", L,
         m);
  char why[23]; /* "unknown tuning key 'n" + NUL: the word stays whole */
  strata_context_options o;
  strata_context_options_init(&o);
  o.tuning = "no_such_switch_with_a_long_name=1";
  o.errbuf = why;
  o.errbuf_size = sizeof why;
  strata_context *bad = NULL;
  CHECK(strata_context_create(&bad, &o) == STRATA_EINVAL && !bad);
  CHECKF(!strcmp(why, "unknown tuning key..."), "%s", why);
  strata_context_destroy(&ctx);
  return 0;
}

/* Functions writing into a caller's buffer refuse one that is too small
 * (saying the size needed) rather than fill it with a cut list or name. */
TEST(caller_buffers_too_small) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_stencil op;
  CHECK_OK(strata_stencil_laplacian(&op, 2, 2, 1.0), ctx);
  char buf[64];
  CHECK_OK(strata_variants(ctx, &op, buf, sizeof buf), ctx);
  size_t need = strlen(buf) + 1;
  CHECK(need >= 2);
  memcpy(buf, "untouched", 10);
  CHECK_STATUS(strata_variants(ctx, &op, buf, need - 1), STRATA_EINVAL, ctx);
  CHECK(strcmp(buf, "untouched") == 0);
  char want[64];
  snprintf(want, sizeof want, "need %zu bytes", need);
  CHECKF(strstr(strata_context_error(ctx), want), "%s",
         strata_context_error(ctx));
  snprintf(want, sizeof want, "%zu", need - 1);
  CHECK_ARG(ctx, "buf_size", want);
  CHECK_OK(strata_variants(ctx, &op, buf, need), ctx);
  CHECK(strlen(buf) == need - 1);
  /* a checkpoint part's name that does not fit is no name */
  char part[16];
  CHECK(strata_checkpoint_part_path("run.ck", 3, part, sizeof part) == part);
  CHECK(strcmp(part, "run.ck.rank3") == 0);
  CHECK(strata_checkpoint_part_path("run.ck", 3, part, 12) == NULL);
  CHECK(part[0] == '\0');
  CHECK(strata_checkpoint_part_path("checkpoint-file", 0, part, 15) == NULL);
  CHECK(strata_checkpoint_part_path("checkpoint-fil", 0, part, 15) == part);
  strata_context_destroy(&ctx);
  return 0;
}

/* A field on the caller's memory: the library's layout, used in place,
 * written through by the library, left alone at destroy; bad memory is
 * refused naming the argument. */
TEST(wrap_caller_memory) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_field_desc d = {3, {5, 4, 3}, 2, STRATA_F64};
  strata_field_layout L, M;
  CHECK(strata_field_layout_for(&d, &L) == STRATA_OK);
  strata_field *own = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &own), ctx);
  CHECK_OK(strata_field_get_layout(own, &M), ctx);
  CHECK(memcmp(&L, &M, sizeof L) == 0);
  CHECK(strata_field_data(own) != NULL && strata_field_data(NULL) == NULL);
  double *mem = aligned_alloc(128, (L.bytes + 127) / 128 * 128);
  CHECK(mem);
  for (size_t e = 0; e < L.elements; e++) mem[e] = -1.0;
  strata_field *f = NULL;
  CHECK_OK(strata_field_wrap(ctx, &d, mem, L.bytes, &f), ctx);
  CHECK(strata_field_data(f) == mem);
  /* contents are the caller's as they were */
  double v[60];
  CHECK_OK(strata_field_read(f, v), ctx);
  CHECK(v[0] == -1.0 && v[59] == -1.0);
  /* the library writes into the caller's memory */
  CHECK_OK(strata_field_fill_random(f, 7, 0.0, 1.0), ctx);
  CHECK_OK(strata_field_fill_random(own, 7, 0.0, 1.0), ctx);
  double diff = 1.0;
  CHECK_OK(strata_field_diff(f, own, STRATA_NORM_MAX, &diff), ctx);
  CHECK(diff == 0.0);
  size_t at = L.origin + 1 + 2 * L.pitch_x + 1 * L.pitch_x * L.pitch_y;
  CHECK_OK(strata_field_read(own, v), ctx);
  CHECK(mem[at] == v[1 + 2 * 5 + 1 * 20]);
  /* an operator reads and writes wrapped fields like its own */
  strata_stencil op;
  CHECK(strata_stencil_laplacian(&op, 3, 4, 1.0) == STRATA_OK);
  strata_field *out = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &out), ctx);
  CHECK_OK(strata_apply(&op, f, out, NULL), ctx);
  strata_field_destroy(&f);
  CHECK(f == NULL && mem[at] == v[1 + 2 * 5 + 1 * 20]); /* not freed */
  /* refusals */
  CHECK_STATUS(strata_field_wrap(ctx, &d, NULL, L.bytes, &f), STRATA_EINVAL,
               ctx);
  CHECK_ARG(ctx, "data", "NULL");
  CHECK_STATUS(strata_field_wrap(ctx, &d, mem + 1, L.bytes, &f),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "data", "set");
  CHECK(strstr(strata_context_error(ctx), "128-byte aligned") != NULL);
  CHECK_STATUS(strata_field_wrap(ctx, &d, mem, L.bytes - 8, &f),
               STRATA_EINVAL, ctx);
  CHECK(strcmp(strata_context_error_arg(ctx), "bytes") == 0);
  strata_field_desc bad = d;
  bad.ghost = 0;
  CHECK_STATUS(strata_field_wrap(ctx, &bad, mem, L.bytes, &f), STRATA_EINVAL,
               ctx);
  CHECK_ARG(ctx, "ghost", "0");
  CHECK(f == NULL);
  CHECK(strata_field_layout_for(&bad, &M) == STRATA_EINVAL);
  /* the mirrors of the public structs can check their sizes */
  CHECK(strata_abi_sizeof("strata_wave_options") ==
        sizeof(strata_wave_options));
  CHECK(strata_abi_sizeof("strata_field_desc") == sizeof(strata_field_desc));
  CHECK(strata_abi_sizeof("no_such_struct") == 0 &&
        strata_abi_sizeof(NULL) == 0);
  strata_field_destroy(&out);
  strata_field_destroy(&own);
  strata_context_destroy(&ctx);
  CHECK(ctx == NULL);
  free(mem);
  return 0;
}

TEST(read_box_is_part_of_read) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  CHECK(ref_check_boxes(ctx, STRATA_F64) == 0);
  CHECK(ref_check_boxes(ctx, STRATA_F32) == 0);
  strata_context_destroy(&ctx);
  return 0;
}

RUN_TESTS(status_table, context_lifecycle, tuning_switches, layout_alignment,
          write_read_roundtrip, fills_and_norms, fill_function_covers_ghosts,
          bad_input, refusals_name_the_argument, preset_weights_finite,
          caller_buffers_too_small, context_outlives_its_fields,
          long_messages_end_at_a_word, wrap_caller_memory,
          read_box_is_part_of_read)
