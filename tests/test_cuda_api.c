/* The CUDA backend's plumbing: identical random fields and ghost layers on
 * CPU and GPU, transfers (every chunk kind of the pinned pipeline, and its
 * fallback on a full device), fills, norms, the copy ceilings, variant
 * lists, the autotune cache, and the error paths (too large a grid, unknown or
 * inapplicable variants, bad launch shapes, a missing device ordinal).
 * Without a CUDA device every test skips, by name, but the one that checks
 * what a CUDA build says on a machine without an NVIDIA driver. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reference.h"
#include "runner.h"

static strata_context *make_ctx_tuned(strata_backend b, const char *cache,
                                      int autotune, const char *tuning,
                                      char *why, size_t n) {
  if (b == STRATA_BACKEND_CUDA &&
      !strata_backend_available(STRATA_BACKEND_CUDA, why, n))
    return NULL;
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = b;
  o.tune_cache = cache;
  o.autotune = autotune;
  o.tuning = tuning;
  o.errbuf = why;
  o.errbuf_size = n;
  strata_context *ctx = NULL;
  if (strata_context_create(&ctx, &o) != STRATA_OK) return NULL;
  return ctx;
}

static strata_context *make_ctx(strata_backend b, const char *cache,
                                int autotune, char *why, size_t n) {
  return make_ctx_tuned(b, cache, autotune, NULL, why, n);
}

/* Whether the seeds' strategies are built (-DSTRATA_CUDA_SEEDS=ON): then
 * the radius-1 star lists kd. */
static int seeds_built(strata_context *gpu) {
  strata_stencil op;
  char buf[512];
  strata_stencil_laplacian(&op, 3, 2, 1.0);
  if (strata_variants(gpu, &op, buf, sizeof buf) != STRATA_OK) return 0;
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
    if (!strcmp(t, "kd")) return 1;
  return 0;
}

#define GPU_OR_SKIP(gpu)                                                       \
  char why_[512] = "";                                                         \
  strata_context *gpu = make_ctx(STRATA_BACKEND_CUDA, "", 1, why_,             \
                                 sizeof why_);                                 \
  if (!gpu) SKIP("no CUDA device: %s", why_)

static strata_context *cpu_ctx(void) {
  char why[256];
  return make_ctx(STRATA_BACKEND_CPU, NULL, 1, why, sizeof why);
}

/* Bitwise comparison of two fields' ghosted boxes (possibly on different
 * backends). */
static int same_bits(const strata_field *a, const strata_field *b) {
  double *x = ref_read(a, 1), *y = ref_read(b, 1);
  strata_field_desc d;
  strata_field_get_desc(a, &d);
  size_t n = ref_count(&d, 1);
  int ok = x && y;
  for (size_t i = 0; ok && i < n; i++)
    if (memcmp(&x[i], &y[i], sizeof(double)) != 0) {
      fprintf(stderr, "  element %zu differs: %.17g vs %.17g\n", i, x[i], y[i]);
      ok = 0;
    }
  free(x);
  free(y);
  return ok;
}

TEST(cuda_device_info) {
  GPU_OR_SKIP(gpu);
  strata_device_info info;
  CHECK_OK(strata_context_device_info(gpu, &info), gpu);
  printf("  %s: %d SMs, cc %d.%d, %.1f GiB (%.1f free), L2 %zu KiB\n",
         info.name, info.multiprocessors, info.cc_major, info.cc_minor,
         info.memory_bytes / 1073741824.0, info.memory_free / 1073741824.0,
         info.l2_bytes / 1024);
  CHECK(info.name[0] != '\0');
  CHECK(info.multiprocessors > 0);
  CHECK(info.cc_major >= 1);
  CHECK(info.memory_bytes > 0 && info.memory_free <= info.memory_bytes);
  CHECK(strata_context_backend(gpu) == STRATA_BACKEND_CUDA);
  strata_context_destroy(&gpu);
  return 0;
}

/* fill_random and fill_ghosts give the CPU engine's fields bit for bit. */
TEST(cuda_fill_matches_cpu) {
  GPU_OR_SKIP(gpu);
  strata_context *cpu = cpu_ctx();
  CHECK(cpu != NULL);
  const size_t shapes[3][3] = {{67, 45, 38}, {129, 31, 1}, {1001, 1, 1}};
  for (int s = 0; s < 3; s++)
    for (int p = 0; p < 2; p++)
      for (int kind = 0; kind < 4; kind++) {
        int dims = 3 - s;
        strata_precision prec = p ? STRATA_F64 : STRATA_F32;
        strata_field *a = ref_random_field(gpu, dims, shapes[s][0], shapes[s][1],
                                           shapes[s][2], 3, prec, 42 + s);
        strata_field *b = ref_random_field(cpu, dims, shapes[s][0], shapes[s][1],
                                           shapes[s][2], 3, prec, 42 + s);
        CHECK(a && b);
        CHECKF(same_bits(a, b), "fill_random %dD %s", dims, p ? "fp64" : "fp32");
        strata_boundary bc;
        strata_boundary_uniform(&bc, (strata_bc_kind)kind, 0.125 + kind);
        bc.value[1] = -3.5; /* distinct faces */
        if (kind == STRATA_BC_PERIODIC) bc.value[1] = 0;
        CHECK_OK(strata_field_fill_ghosts(a, &bc), gpu);
        CHECK_OK(strata_field_fill_ghosts(b, &bc), cpu);
        CHECKF(same_bits(a, b), "ghosts %dD %s %s", dims, p ? "fp64" : "fp32",
               strata_bc_name((strata_bc_kind)kind));
        strata_field_destroy(&a);
        strata_field_destroy(&b);
      }
  strata_context_destroy(&cpu);
  strata_context_destroy(&gpu);
  return 0;
}

TEST(cuda_read_box) {
  /* boxes and slices through the transfer pipeline: the points of the
   * whole read, in both precisions */
  GPU_OR_SKIP(gpu);
  CHECK(ref_check_boxes(gpu, STRATA_F64) == 0);
  CHECK(ref_check_boxes(gpu, STRATA_F32) == 0);
  strata_context_destroy(&gpu);
  return 0;
}

TEST(cuda_transfers_and_fill) {
  GPU_OR_SKIP(gpu);
  strata_field_desc d = {3, {33, 17, 9}, 2, STRATA_F64};
  strata_field *f = NULL;
  CHECK_OK(strata_field_create(gpu, &d, &f), gpu);
  /* a new field reads back as zeros */
  size_t ng = ref_count(&d, 1), ni = ref_count(&d, 0);
  double *h = malloc(ng * sizeof(double)), *back = malloc(ng * sizeof(double));
  CHECK(h && back);
  CHECK_OK(strata_field_read_ghosted(f, back), gpu);
  for (size_t i = 0; i < ng; i++) CHECK(back[i] == 0.0);
  for (size_t i = 0; i < ng; i++) h[i] = sin((double)i) * 1e3;
  CHECK_OK(strata_field_write_ghosted(f, h), gpu);
  CHECK_OK(strata_field_read_ghosted(f, back), gpu);
  CHECK(memcmp(h, back, ng * sizeof(double)) == 0);
  /* writing the interior keeps the ghosts */
  for (size_t i = 0; i < ni; i++) h[i] = -(double)i;
  CHECK_OK(strata_field_write(f, h), gpu);
  CHECK_OK(strata_field_read(f, back), gpu);
  CHECK(memcmp(h, back, ni * sizeof(double)) == 0);
  double *g = ref_read(f, 1);
  CHECK(g != NULL);
  CHECK(g[0] == sin(0.0) * 1e3 && g[ng - 1] == sin((double)(ng - 1)) * 1e3);
  free(g);
  CHECK_OK(strata_field_fill(f, 2.5), gpu);
  CHECK_OK(strata_field_read_ghosted(f, back), gpu);
  for (size_t i = 0; i < ng; i++) CHECK(back[i] == 2.5);
  /* device-to-device copy */
  strata_field *c = NULL;
  CHECK_OK(strata_field_create(gpu, &d, &c), gpu);
  CHECK_OK(strata_field_fill_random(f, 7, -2, 2), gpu);
  CHECK_OK(strata_field_copy(c, f), gpu);
  CHECK(same_bits(c, f));
  free(h);
  free(back);
  strata_field_destroy(&f);
  strata_field_destroy(&c);
  strata_context_destroy(&gpu);
  return 0;
}

/* ---- dense transfers ----------------------------------------------------
 * The CUDA engine reads and writes fields through pinned bounce slots of
 * at most 8 MiB, packing rows on the device (src/cuda/engine/transfer.cu): chunks of
 * whole planes, of rows, or of pieces of one row.  These shapes cover each
 * kind, remainders and fields of several chunks, in both precisions and
 * with ghost widths 1 and 4; every read goes into a poisoned array with a
 * guard past its end, and is compared bit for bit with what was written. */

static int quick(void) {
  const char *q = getenv("STRATA_TEST_QUICK");
  return q && *q && strcmp(q, "0") != 0;
}

/* Known values: distinct random mantissas in [1, 2) with random signs, so
 * they are never the poison (all bits set: NaN). */
static void fill_known(unsigned char *a, size_t n, size_t es, unsigned tag) {
  for (size_t i = 0; i < n; i++) {
    uint64_t h = ((uint64_t)i << 8 | tag) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    if (es == 4) {
      uint32_t v = 0x3f800000u | (uint32_t)(h & 0x7fffffu) |
                   (uint32_t)(h >> 63) << 31;
      memcpy(a + i * 4, &v, 4);
    } else {
      uint64_t v = 0x3ff0000000000000ull | (h & 0xfffffffffffffull) |
                   (h >> 63) << 63;
      memcpy(a + i * 8, &v, 8);
    }
  }
}

#define XFER_GUARD 64
#define XFER_POISON 0xff

/* The dense interior of a dense ghosted array (to_ghosted = 0), or the
 * interior written into it (to_ghosted = 1). */
static void interior_rows(const strata_field_desc *d, unsigned char *ghosted,
                          unsigned char *interior, int to_ghosted) {
  size_t es = (size_t)d->precision, g[3] = {0, 0, 0}, G[3];
  for (int a = 0; a < 3; a++) {
    if (a < d->dims) g[a] = (size_t)d->ghost;
    G[a] = d->n[a] + 2 * g[a];
  }
  size_t row = d->n[0] * es;
  for (size_t k = 0; k < d->n[2]; k++)
    for (size_t j = 0; j < d->n[1]; j++) {
      unsigned char *gp = ghosted + (((k + g[2]) * G[1] + j + g[1]) * G[0] +
                                     g[0]) * es;
      unsigned char *ip = interior + (k * d->n[1] + j) * row;
      if (to_ghosted)
        memcpy(gp, ip, row);
      else
        memcpy(ip, gp, row);
    }
}

/* got[0..n) == want[0..n) bit for bit, and got's guard still poisoned;
 * names the first differing element. */
static int same_dense(const unsigned char *got, const unsigned char *want,
                      size_t n, size_t es, const char *what) {
  if (memcmp(got, want, n * es) != 0) {
    size_t i = 0;
    while (memcmp(got + i * es, want + i * es, es) == 0) i++;
    fprintf(stderr, "  %s: element %zu of %zu differs\n", what, i, n);
    return 0;
  }
  for (size_t b = 0; b < XFER_GUARD; b++)
    if (got[n * es + b] != XFER_POISON) {
      fprintf(stderr, "  %s: byte %zu past the end was written\n", what, b);
      return 0;
    }
  return 1;
}

typedef struct {
  size_t gx, gy;
  long g[3];
} ghosted_index;

/* fill_fn: the point's index in the dense ghosted array, plus 1 (exact in
 * fp32 below 2^24). */
static double index_fn(long i, long j, long k, void *user) {
  const ghosted_index *q = user;
  return 1.0 + (double)((size_t)(i + q->g[0]) +
                        q->gx * ((size_t)(j + q->g[1]) +
                                 q->gy * (size_t)(k + q->g[2])));
}

/* Every transfer of one field: ghosted write and read, interior read, an
 * interior write that must keep the ghosts, and fill_fn (the whole
 * allocation staged to the host and back). */
static int transfer_checks(strata_field *f) {
  strata_context *ctx = strata_field_context(f);
  strata_field_desc d;
  CHECK_OK(strata_field_get_desc(f, &d), ctx);
  const int dims = d.dims, ghost = d.ghost;
  const size_t *n = d.n;
  const size_t es = (size_t)d.precision, ng = ref_count(&d, 1),
               ni = ref_count(&d, 0);
  char what[160];
  snprintf(what, sizeof what, "%dD %zux%zux%zu ghost %d %s", dims, n[0], n[1],
           n[2], ghost, es == 4 ? "fp32" : "fp64");
  unsigned char *a = malloc(ng * es), *in = malloc(ni * es),
                *back = malloc(ng * es + XFER_GUARD);
  CHECK(a && in && back);
  fill_known(a, ng, es, 1);
  CHECK_OK(strata_field_write_ghosted(f, a), ctx);
  memset(back, XFER_POISON, ng * es + XFER_GUARD);
  CHECK_OK(strata_field_read_ghosted(f, back), ctx);
  CHECKF(same_dense(back, a, ng, es, "read_ghosted"), "%s", what);
  /* the interior alone */
  interior_rows(&d, a, in, 0);
  memset(back, XFER_POISON, ng * es + XFER_GUARD);
  CHECK_OK(strata_field_read(f, back), ctx);
  CHECKF(same_dense(back, in, ni, es, "read"), "%s", what);
  /* writing the interior keeps the ghosts */
  fill_known(in, ni, es, 2);
  CHECK_OK(strata_field_write(f, in), ctx);
  interior_rows(&d, a, in, 1);
  memset(back, XFER_POISON, ng * es + XFER_GUARD);
  CHECK_OK(strata_field_read_ghosted(f, back), ctx);
  CHECKF(same_dense(back, a, ng, es, "read_ghosted after write"), "%s", what);
  /* fill_fn goes through a host image of the whole allocation */
  ghosted_index q = {n[0] + 2 * (size_t)ghost,
                     dims > 1 ? n[1] + 2 * (size_t)ghost : 1,
                     {ghost, dims > 1 ? ghost : 0, dims > 2 ? ghost : 0}};
  CHECK_OK(strata_field_fill_fn(f, index_fn, &q), ctx);
  memset(back, XFER_POISON, ng * es + XFER_GUARD);
  CHECK_OK(strata_field_read_ghosted(f, back), ctx);
  for (size_t i = 0; i < ng; i++) {
    double v = es == 4 ? (double)((float *)back)[i] : ((double *)back)[i];
    CHECKF(v == 1.0 + (double)i, "%s: fill_fn: element %zu is %g", what, i,
           v);
  }
  free(a);
  free(in);
  free(back);
  return 0;
}

static int transfer_case(strata_context *ctx, int dims, const size_t n[3],
                         int ghost, strata_precision p) {
  strata_field_desc d = {dims, {n[0], n[1], n[2]}, ghost, p};
  strata_field *f = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &f), ctx);
  int r = transfer_checks(f);
  strata_field_destroy(&f);
  return r;
}

TEST(cuda_transfer_shapes) {
  GPU_OR_SKIP(gpu);
  static const struct {
    int dims;
    size_t n[3];
    int big; /* several 8 MiB chunks */
  } shapes[] = {
      {3, {67, 45, 38}, 0},   {3, {300, 300, 40}, 1}, {3, {5, 1, 7}, 0},
      {3, {1, 1, 1}, 0},      {2, {129, 31, 1}, 0},   {2, {1, 200, 1}, 0},
      {2, {4099, 1031, 1}, 1}, {1, {1001, 1, 1}, 0},  {1, {3000017, 1, 1}, 1},
  };
  int cases = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int p = 0; p < 2; p++)
      for (int g = 1; g <= 4; g += 3) {
        /* under the sanitizer (quick): one large field, fp64, ghost 1 */
        if (quick() && shapes[s].big && (s != 1 || !p || g != 1)) continue;
        if (transfer_case(gpu, shapes[s].dims, shapes[s].n, g,
                          p ? STRATA_F64 : STRATA_F32))
          return 1;
        cases++;
      }
  printf("  %d fields, each written and read back bit for bit\n", cases);
  strata_context_destroy(&gpu);
  return 0;
}

/* With the device full to the last MiB the pack slots cannot be had: the
 * transfers fall back to the copy engine's 3D copies and stay exact. */
TEST(cuda_transfer_device_full) {
  if (quick()) SKIP("STRATA_TEST_QUICK is set (fills the whole device)");
  /* it takes every byte of the GPU for a moment: other GPU programs that
   * CTest runs beside it would fail to allocate (seen on the H100), so it
   * runs only when asked for, alone (scripts/device.sh does) */
  if (!getenv("STRATA_TEST_DEVICE_FULL"))
    SKIP("fills the whole device; set STRATA_TEST_DEVICE_FULL=1 and run "
         "alone");
  GPU_OR_SKIP(gpu);
  strata_context *cpu = cpu_ctx();
  CHECK(cpu != NULL);
  /* a first small read makes the slots (1 MiB); the large field below
   * needs them grown, which the full device refuses */
  strata_field *small = ref_random_field(gpu, 2, 40, 30, 1, 1, STRATA_F32, 3);
  CHECK(small != NULL);
  double *sv = ref_read(small, 1);
  CHECK(sv != NULL);
  free(sv);
  strata_field *a = ref_random_field(gpu, 3, 300, 300, 40, 2, STRATA_F64, 11);
  strata_field *c = ref_random_field(cpu, 3, 300, 300, 40, 2, STRATA_F64, 11);
  strata_field *b = NULL; /* created now: no field can be, once full */
  strata_field_desc bd = {3, {300, 300, 40}, 4, STRATA_F64};
  CHECK(a && c);
  CHECK_OK(strata_field_create(gpu, &bd, &b), gpu);
  enum { MAXF = 4096 };
  static strata_field *fill[MAXF];
  int nf = 0;
  for (size_t n = (size_t)1 << 27; n >= ((size_t)1 << 17) && nf < MAXF;) {
    strata_field_desc d = {1, {n, 1, 1}, 1, STRATA_F64};
    if (strata_field_create(gpu, &d, &fill[nf]) == STRATA_OK)
      nf++;
    else
      n /= 2;
  }
  strata_device_info info;
  CHECK_OK(strata_context_device_info(gpu, &info), gpu);
  printf("  %d fields fill the device: %.1f MiB left\n", nf,
         info.memory_free / 1048576.0);
  int ok = same_bits(a, c); /* reads a through the 3D copies */
  int res = ok ? transfer_checks(b) : 1;
  /* and again with the device freed */
  for (int i = 0; i < nf; i++) strata_field_destroy(&fill[i]);
  CHECKF(ok, "read with the device full");
  CHECKF(res == 0, "transfers with the device full");
  CHECK(same_bits(a, c));
  CHECK(transfer_checks(b) == 0);
  strata_field_destroy(&b);
  strata_field_destroy(&small);
  strata_field_destroy(&a);
  strata_field_destroy(&c);
  strata_context_destroy(&cpu);
  strata_context_destroy(&gpu);
  return 0;
}

TEST(cuda_norms) {
  GPU_OR_SKIP(gpu);
  strata_context *cpu = cpu_ctx();
  CHECK(cpu != NULL);
  for (int p = 0; p < 2; p++) {
    strata_precision prec = p ? STRATA_F64 : STRATA_F32;
    strata_field *ga = ref_random_field(gpu, 3, 131, 67, 29, 2, prec, 11);
    strata_field *gb = ref_random_field(gpu, 3, 131, 67, 29, 2, prec, 12);
    strata_field *ca = ref_random_field(cpu, 3, 131, 67, 29, 2, prec, 11);
    strata_field *cb = ref_random_field(cpu, 3, 131, 67, 29, 2, prec, 12);
    CHECK(ga && gb && ca && cb);
    for (int w = 0; w <= STRATA_NORM_SUM; w++) {
      double x, y, dx, dy;
      CHECK_OK(strata_field_norm(ga, (strata_norm)w, &x), gpu);
      CHECK_OK(strata_field_norm(ca, (strata_norm)w, &y), cpu);
      CHECK_OK(strata_field_diff(ga, gb, (strata_norm)w, &dx), gpu);
      CHECK_OK(strata_field_diff(ca, cb, (strata_norm)w, &dy), cpu);
      /* both sum in double over 254K values: agree far below 1e-9 */
      double scale = w == STRATA_NORM_SUM ? 600.0 : fabs(y);
      CHECKF(fabs(x - y) <= 1e-11 * scale, "norm %d: gpu %.17g cpu %.17g", w,
             x, y);
      scale = w == STRATA_NORM_SUM ? 600.0 : fabs(dy);
      CHECKF(fabs(dx - dy) <= 1e-11 * scale, "diff %d: gpu %.17g cpu %.17g",
             w, dx, dy);
      /* deterministic */
      double x2;
      CHECK_OK(strata_field_norm(ga, (strata_norm)w, &x2), gpu);
      CHECK(memcmp(&x, &x2, sizeof x) == 0);
    }
    /* a NaN in the interior gives NaN, never a small number */
    strata_field_desc d;
    strata_field_get_desc(ga, &d);
    double *h = ref_read(ga, 0);
    CHECK(h != NULL);
    h[ref_count(&d, 0) / 2] = NAN;
    if (p) {
      CHECK_OK(strata_field_write(ga, h), gpu);
    } else {
      size_t n = ref_count(&d, 0);
      float *hf = malloc(n * sizeof(float));
      CHECK(hf != NULL);
      for (size_t i = 0; i < n; i++) hf[i] = (float)h[i];
      CHECK_OK(strata_field_write(ga, hf), gpu);
      free(hf);
    }
    free(h);
    for (int w = 0; w <= STRATA_NORM_SUM; w++) {
      double x;
      CHECK_OK(strata_field_norm(ga, (strata_norm)w, &x), gpu);
      CHECKF(isnan(x), "norm %d of a field holding NaN is %g", w, x);
    }
    strata_field_destroy(&ga);
    strata_field_destroy(&gb);
    strata_field_destroy(&ca);
    strata_field_destroy(&cb);
  }
  strata_context_destroy(&cpu);
  strata_context_destroy(&gpu);
  return 0;
}

/* copycube and copycube_halo (built with the seeds) copy the interior
 * exactly and leave ghosts. */
TEST(cuda_copy_kernels) {
  GPU_OR_SKIP(gpu);
  const char *names[] = {NULL, "copycube", "copycube_halo"};
  const int nv = seeds_built(gpu) ? 3 : 2;
  const size_t shapes[3][3] = {{67, 45, 38}, {255, 3, 2}, {31, 17, 1}};
  for (int s = 0; s < 3; s++)
    for (int p = 0; p < 2; p++)
      for (int v = 0; v < nv; v++) {
        int dims = shapes[s][2] == 1 ? 2 : 3;
        strata_precision prec = p ? STRATA_F64 : STRATA_F32;
        strata_field *in = ref_random_field(gpu, dims, shapes[s][0],
                                            shapes[s][1], shapes[s][2], 1,
                                            prec, 3 + s);
        strata_field_desc d;
        strata_field_get_desc(in, &d);
        strata_field *out = NULL;
        CHECK_OK(strata_field_create(gpu, &d, &out), gpu);
        CHECK_OK(strata_field_fill(out, NAN), gpu);
        CHECK_OK(strata_copy_kernel(in, out, names[v]), gpu);
        double *a = ref_read(in, 1), *b = ref_read(out, 1);
        CHECK(a && b);
        long g[3] = {1, 1, dims == 3 ? 1 : 0};
        long gx = (long)d.n[0] + 2 * g[0], gy = (long)d.n[1] + 2 * g[1],
             gz = (long)d.n[2] + 2 * g[2];
        for (long k = 0; k < gz; k++)
          for (long j = 0; j < gy; j++)
            for (long i = 0; i < gx; i++) {
              size_t o = (size_t)(i + gx * (j + gy * k));
              int interior = i >= g[0] && i < gx - g[0] && j >= g[1] &&
                             j < gy - g[1] && k >= g[2] && k < gz - g[2];
              if (interior)
                CHECKF(a[o] == b[o], "%s: (%ld,%ld,%ld) %g vs %g",
                       names[v] ? names[v] : "default", i, j, k, b[o], a[o]);
              else
                CHECKF(isnan(b[o]), "%s wrote ghost (%ld,%ld,%ld)",
                       names[v] ? names[v] : "default", i, j, k);
            }
        free(a);
        free(b);
        strata_field_destroy(&in);
        strata_field_destroy(&out);
      }
  /* unknown copy variant: refused, with the known ones named */
  strata_field *x = ref_random_field(gpu, 3, 8, 8, 8, 1, STRATA_F32, 1);
  strata_field *y = ref_random_field(gpu, 3, 8, 8, 8, 1, STRATA_F32, 2);
  CHECK(x && y);
  CHECK_STATUS(strata_copy_kernel(x, y, "memcpy"), STRATA_ENOTSUP, gpu);
  CHECK(strstr(strata_context_error(gpu), "copycube") != NULL);
  if (nv == 2) /* copycube_halo: refused, naming the option */
    CHECK_STATUS(strata_copy_kernel(x, y, "copycube_halo"), STRATA_ENOTSUP,
                 gpu);
  strata_field_destroy(&x);
  strata_field_destroy(&y);
  strata_context_destroy(&gpu);
  return 0;
}

TEST(cuda_variant_lists) {
  GPU_OR_SKIP(gpu);
  strata_device_info info;
  CHECK_OK(strata_context_device_info(gpu, &info), gpu);
  /* the tensor-copy variants exist from compute capability 9.0 on */
  const int tma = info.cc_major >= 9;
  strata_stencil op;
  char buf[256];
  /* the seeds' strategies are listed only when built; vec takes the
   * radius-1 star in 3D beside the tensor-copy star walks, which take every
   * radius */
  const int seeds = seeds_built(gpu);
  strata_stencil_laplacian(&op, 3, 2, 1.0);
  CHECK_OK(strata_variants(gpu, &op, buf, sizeof buf), gpu);
  if (seeds)
    CHECKF(strcmp(buf, tma ? "naive,smem,stream,streamv,streamcp,streamrq,kd,"
                             "kdv,kdcp,vec,streamtma,streamws,kdtma,kdws"
                           : "naive,smem,stream,streamv,streamcp,streamrq,kd,"
                             "kdv,kdcp,vec") == 0,
           "%s", buf);
  else
    CHECKF(strcmp(buf, tma ? "naive,smem,vec,streamtma,streamws"
                           : "naive,smem,vec") == 0, "%s", buf);
  strata_stencil_laplacian(&op, 3, 8, 1.0);
  CHECK_OK(strata_variants(gpu, &op, buf, sizeof buf), gpu);
  if (seeds)
    CHECKF(strcmp(buf, tma ? "naive,smem,stream,streamv,streamcp,streamrq,"
                             "streamtma,streamws"
                           : "naive,smem,stream,streamv,streamcp,streamrq")
               == 0, "%s", buf);
  else
    CHECKF(strcmp(buf, tma ? "naive,smem,streamtma,streamws" : "naive,smem")
               == 0, "%s", buf);
  strata_stencil_derivative(&op, 3, 1, 8, 1.0);
  CHECK_OK(strata_variants(gpu, &op, buf, sizeof buf), gpu);
  CHECKF(strcmp(buf, "naive,smem,pencil") == 0, "%s", buf);
  strata_stencil_box_symmetric(&op, 1, 2, 3, 4);
  CHECK_OK(strata_variants(gpu, &op, buf, sizeof buf), gpu);
  if (seeds)
    CHECKF(strcmp(buf, tma ? "naive,smem,kd,kdv,kdcp,kdtma,kdws,vecz"
                           : "naive,smem,kd,kdv,kdcp,vecz") == 0, "%s", buf);
  else
    CHECKF(strcmp(buf, "naive,smem,vecz") == 0, "%s", buf);
  strata_stencil_laplacian9(&op, 1.0);
  CHECK_OK(strata_variants(gpu, &op, buf, sizeof buf), gpu);
  CHECKF(strcmp(buf, "naive,smem,vec") == 0, "%s", buf);
  strata_context_destroy(&gpu);
  return 0;
}

TEST(cuda_errors) {
  GPU_OR_SKIP(gpu);
  strata_device_info info;
  CHECK_OK(strata_context_device_info(gpu, &info), gpu);
  /* a grid larger than the device: refused with the bytes needed and free */
  strata_field_desc big = {3, {8192, 8192, 4096}, 1, STRATA_F64};
  size_t need = 0;
  CHECK_OK(strata_field_bytes(&big, &need), gpu);
  CHECK(need > info.memory_bytes);
  strata_field *f = NULL;
  CHECK_STATUS(strata_field_create(gpu, &big, &f), STRATA_ENOMEM, gpu);
  CHECK(f == NULL);
  char num[64];
  snprintf(num, sizeof num, "%zu bytes", need);
  CHECKF(strstr(strata_context_error(gpu), num) != NULL, "message '%s' lacks "
         "'%s'", strata_context_error(gpu), num);
  CHECK(strstr(strata_context_error(gpu), "free") != NULL);

  strata_field *in = ref_random_field(gpu, 3, 19, 17, 13, 4, STRATA_F32, 5);
  strata_field *out = ref_random_field(gpu, 3, 19, 17, 13, 4, STRATA_F32, 6);
  CHECK(in && out);
  strata_stencil op;
  strata_stencil_laplacian(&op, 3, 8, 1.0);
  /* unknown and inapplicable variants: refused, the known ones listed */
  strata_apply_options opt = {"warp-magic", {0, 0, 0}};
  CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_ENOTSUP, gpu);
  CHECK(strstr(strata_context_error(gpu), "smem") != NULL);
  CHECK(strstr(strata_context_error(gpu), "naive") != NULL);
  const int seeds = seeds_built(gpu);
  opt.variant = "kd"; /* kd is radius 1 only */
  CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_ENOTSUP, gpu);
  opt.variant = "pencil";
  CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_ENOTSUP, gpu);
  opt.variant = "vec"; /* the radius-1 star only in 3D */
  CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_ENOTSUP, gpu);
  /* launch shapes the variant cannot take */
  opt.variant = "smem";
  opt.block[0] = 64; opt.block[1] = 32; opt.block[2] = 1; /* 2048 threads */
  CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_EINVAL, gpu);
  if (seeds) {
    opt.variant = "streamv";
    opt.block[0] = 64; opt.block[1] = 16; opt.block[2] = 1; /* 1024 threads */
    CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_EINVAL, gpu);
    opt.block[0] = 32; opt.block[1] = 8; opt.block[2] = 3; /* rows per thread */
    CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_EINVAL, gpu);
    opt.variant = "streamrq";
    opt.block[0] = 32; opt.block[1] = 16; opt.block[2] = 1; /* 512 threads */
    CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_EINVAL, gpu);
    opt.variant = "streamcp";
    opt.block[0] = 64; opt.block[1] = 8; opt.block[2] = 2; /* 512 threads, 2 rows */
    CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_EINVAL, gpu);
    opt.variant = "stream";
    opt.block[0] = 4; opt.block[1] = 1; opt.block[2] = 1; /* halo too large */
    CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_EINVAL, gpu);
  } else { /* not built: refused, naming the option */
    opt.variant = "streamcp";
    opt.block[0] = opt.block[1] = opt.block[2] = 0;
    CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_ENOTSUP, gpu);
    CHECK(strstr(strata_context_error(gpu), "STRATA_CUDA_SEEDS") != NULL);
  }
  strata_device_info di;
  CHECK_OK(strata_context_device_info(gpu, &di), gpu);
  if (di.cc_major >= 9) {
    opt.variant = "streamtma"; /* a 96*4-wide tile: past a TMA box */
    opt.block[0] = 96; opt.block[1] = 2; opt.block[2] = 1;
    CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_EINVAL, gpu);
    CHECK(strstr(strata_context_error(gpu), "256") != NULL);
    opt.variant = "streamws"; /* 2 rows a thread: at most 256 threads */
    opt.block[0] = 32; opt.block[1] = 16; opt.block[2] = 2;
    CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_EINVAL, gpu);
    opt.variant = "streamtma"; /* rows per thread: 1 or 2 */
    opt.block[0] = 32; opt.block[1] = 4; opt.block[2] = 4;
    CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_EINVAL, gpu);
    opt.variant = "kdtma"; /* radius 1 only */
    opt.block[0] = 32; opt.block[1] = 4; opt.block[2] = 4;
    CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_ENOTSUP, gpu);
  }
  opt.variant = "naive";
  opt.block[0] = 2048; opt.block[1] = 1; opt.block[2] = 1;
  CHECK_STATUS(strata_apply(&op, in, out, &opt), STRATA_EINVAL, gpu);
  /* the context still works after refusals */
  opt.variant = "smem";
  opt.block[0] = opt.block[1] = opt.block[2] = 0;
  CHECK_OK(strata_apply(&op, in, out, &opt), gpu);
  CHECK_OK(strata_context_sync(gpu), gpu);
  strata_field_destroy(&in);
  strata_field_destroy(&out);
  strata_context_destroy(&gpu);

  /* a device ordinal the machine does not have */
  char why[512] = "";
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CUDA;
  o.device = 999;
  o.errbuf = why;
  o.errbuf_size = sizeof why;
  strata_context *none = NULL;
  CHECK(strata_context_create(&none, &o) != STRATA_OK);
  CHECK(none == NULL);
  CHECK(strstr(why, "999") != NULL);
  return 0;
}

/* The cache file is written, reused, and a damaged one never fails a run. */
TEST(cuda_tune_cache) {
  char why[512] = "";
  if (!strata_backend_available(STRATA_BACKEND_CUDA, why, sizeof why))
    SKIP("no CUDA device: %s", why);
  char path[256];
  snprintf(path, sizeof path, "/tmp/strata-tune-test-%ld/sub/tune.txt",
           (long)getpid());
  strata_stencil op;
  strata_stencil_laplacian(&op, 3, 4, 1.0);
  for (int round = 0; round < 3; round++) {
    if (round == 2) { /* damage the file */
      FILE *fp = fopen(path, "w");
      CHECK(fp != NULL);
      fprintf(fp, "garbage\tline\n\x01\x02 nonsense\nstar|d3\tstreamv\t99999\t0"
                  "\t1\tNaN\n");
      fclose(fp);
    }
    strata_context *gpu = make_ctx(STRATA_BACKEND_CUDA, path, 1, why,
                                   sizeof why);
    CHECK(gpu != NULL);
    strata_field *in = ref_random_field(gpu, 3, 40, 30, 20, 2, STRATA_F32, 9);
    strata_field *out = ref_random_field(gpu, 3, 40, 30, 20, 2, STRATA_F32, 9);
    CHECK(in && out);
    CHECK_OK(strata_apply(&op, in, out, NULL), gpu);
    CHECK_OK(strata_context_sync(gpu), gpu);
    strata_field_destroy(&in);
    strata_field_destroy(&out);
    strata_context_destroy(&gpu);
    FILE *fp = fopen(path, "r");
    CHECKF(fp != NULL, "round %d: no cache file at %s", round, path);
    char line[512];
    int entries = 0, garbage = 0;
    while (fgets(line, sizeof line, fp)) {
      if (line[0] == '#') continue;
      if (strstr(line, "star|d3|r2|")) entries++;
      if (strstr(line, "garbage") || strstr(line, "99999")) garbage++;
    }
    fclose(fp);
    CHECKF(entries == 1, "round %d: %d entries", round, entries);
    CHECKF(garbage == 0, "round %d: damaged lines kept", round);
  }
  /* autotune off: the fixed table, no file needed */
  strata_context *gpu = make_ctx(STRATA_BACKEND_CUDA, "", 0, why, sizeof why);
  CHECK(gpu != NULL);
  size_t n[3] = {40, 30, 20};
  strata_boundary bc;
  strata_boundary_uniform(&bc, STRATA_BC_PERIODIC, 0);
  double ratio = 0;
  CHECK(ref_check_apply(gpu, &op, n, 2, STRATA_F32, &bc, NULL, 3, &ratio,
                        NULL) == 0);
  strata_context_destroy(&gpu);
  remove(path);
  char dir[256];
  snprintf(dir, sizeof dir, "/tmp/strata-tune-test-%ld/sub", (long)getpid());
  rmdir(dir);
  snprintf(dir, sizeof dir, "/tmp/strata-tune-test-%ld", (long)getpid());
  rmdir(dir);
  return 0;
}

/* The tuner checks every candidate's output against the naive kernel's
 * before timing it: with every other variant "broken" (tuning switch
 * tune_break:
 * their runs inside the tuner are skipped, leaving the NaN-poisoned
 * output, as a kernel that writes nothing would, and taking no time), the
 * naive kernel must win, and the result must still be right. */
TEST(cuda_tune_checks_outputs) {
  char why[512] = "";
  if (!strata_backend_available(STRATA_BACKEND_CUDA, why, sizeof why))
    SKIP("no CUDA device: %s", why);
  char path[256];
  snprintf(path, sizeof path, "/tmp/strata-tune-check-%ld.txt", (long)getpid());
  remove(path);
  static const struct {
    int order;
    strata_precision p;
    const char *key;
  } cases[] = {{8, STRATA_F32, "star|d3|r4|a0|f32|"},
               {2, STRATA_F64, "star|d3|r1|a0|f64|"}};
  for (int q = 0; q < 2; q++) {
    strata_context *lister = make_ctx(STRATA_BACKEND_CUDA, "", 0, why,
                                      sizeof why);
    CHECK(lister != NULL);
    strata_stencil op;
    CHECK_OK(strata_stencil_laplacian(&op, 3, cases[q].order, 1.0), lister);
    char list[512], brk[600] = "tune_break=";
    CHECK_OK(strata_variants(lister, &op, list, sizeof list), lister);
    strata_context_destroy(&lister);
    int others = 0;
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
      if (!strcmp(t, "naive") || !strcmp(t, "auto")) continue;
      if (others) strcat(brk, "+");
      strcat(brk, t);
      others++;
    }
    CHECKF(others >= 2, "only %d other variants: %s", others, brk);
    strata_context *gpu = make_ctx_tuned(STRATA_BACKEND_CUDA, path, 1, brk,
                                         why, sizeof why);
    CHECKF(gpu != NULL, "%s", why);
    size_t n[3] = {67, 45, 38};
    strata_boundary bc;
    strata_boundary_uniform(&bc, STRATA_BC_PERIODIC, 0);
    double ratio = 0;
    const int bad = ref_check_apply(gpu, &op, n, op.radius, cases[q].p, &bc,
                                    NULL, 11 + q, &ratio, NULL);
    strata_context_destroy(&gpu); /* writes the cache */
    CHECK(bad == 0);
    FILE *fp = fopen(path, "r");
    CHECKF(fp != NULL, "no cache file at %s", path);
    char line[512], got[64] = "";
    while (fgets(line, sizeof line, fp))
      if (strstr(line, cases[q].key)) {
        const char *t = strchr(line, '\t');
        if (t) sscanf(t + 1, "%63[^\t]", got);
      }
    fclose(fp);
    CHECKF(!strcmp(got, "naive"), "%s: the tuner chose '%s', not naive "
           "(the only variant whose output it could check)", cases[q].key,
           got);
  }
  remove(path);
  return 0;
}

/* A CUDA build on a machine without any NVIDIA driver says so, for the
 * backend probe (strata info) and for a context that asks for CUDA, rather
 * than the runtime's "driver version is insufficient", which reads as
 * "upgrade your driver". */
TEST(cuda_without_driver_says_so) {
  char why[512] = "";
  if (strata_backend_available(STRATA_BACKEND_CUDA, why, sizeof why))
    SKIP("a CUDA device is usable here");
  if (strstr(why, "no CUDA support")) SKIP("%s", why);
  void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (drv) {
    dlclose(drv);
    SKIP("an NVIDIA driver is installed (%s)", why);
  }
  CHECKF(strstr(why, "no NVIDIA driver found") &&
         !strstr(why, "insufficient"), "probe: %s", why);
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CUDA;
  char err[512] = "";
  o.errbuf = err;
  o.errbuf_size = sizeof err;
  strata_context *ctx = NULL;
  CHECK(strata_context_create(&ctx, &o) == STRATA_ENOBACKEND && !ctx);
  CHECKF(strstr(err, "no NVIDIA driver found") &&
         !strstr(err, "insufficient"), "context: %s", err);
  printf("  %s\n", why);
  return 0;
}

RUN_TESTS(cuda_without_driver_says_so, cuda_device_info, cuda_fill_matches_cpu, cuda_read_box, cuda_transfers_and_fill,
          cuda_transfer_shapes, cuda_transfer_device_full, cuda_norms,
          cuda_copy_kernels, cuda_variant_lists, cuda_errors, cuda_tune_cache,
          cuda_tune_checks_outputs)
