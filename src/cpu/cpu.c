/* The CPU engine: OpenMP, vectorised inner loops.  It is the fallback
 * without a GPU and the oracle every GPU kernel is checked against. */
#define _GNU_SOURCE
#include "cpu_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CPU_BODY "cpu_kernels.inc"
#include "cpu_precisions.h"

static strata_status cpu_apply(const strata_stencil *op, const strata_field *in,
                               strata_field *out,
                               const strata_apply_options *opt) {
  if (opt && opt->variant && strcmp(opt->variant, "auto") != 0 &&
      strcmp(opt->variant, "omp") != 0)
    return strata__fail(in->ctx, STRATA_ENOTSUP,
                        "apply: the CPU backend has no variant '%s' (known: "
                        "auto, omp)", opt->variant);
  int nt = nthreads(in->ctx);
  if (in->d.precision == STRATA_F32)
    apply_f32(op, in, out, 0, nt);
  else
    apply_f64(op, in, out, 0, nt);
  return STRATA_OK;
}

static strata_status cpu_copy_kernel(const strata_field *in, strata_field *out,
                                     const char *variant) {
  if (variant && strcmp(variant, "copy") != 0)
    return strata__fail(in->ctx, STRATA_ENOTSUP,
                        "copy_kernel: the CPU backend has no copy variant "
                        "'%s' (known: copy)", variant);
  int nt = nthreads(in->ctx);
  if (in->d.precision == STRATA_F32)
    apply_f32(NULL, in, out, 1, nt);
  else
    apply_f64(NULL, in, out, 1, nt);
  return STRATA_OK;
}

static strata_status cpu_variants(strata_context *ctx, const strata_stencil *op,
                                  char *buf, size_t n) {
  (void)op;
  return strata__variants_out(ctx, "omp", buf, n);
}

/* The blow-up check: a row whose sum of v * 0 is 0 holds only finite
 * values (the sum is NaN when one is NaN or infinite), so the common case
 * is one vectorised pass; only a bad row is looked at point by point. */
#define CPU_NONFINITE(T)                                                      \
  static void nonfinite_##T(const strata_field *f, int nt, uint64_t *count,  \
                            uint64_t *first, double *value) {                 \
    const long nx = (long)f->d.n[0], ny = (long)f->d.n[1];                    \
    const long rows = ny * (long)f->d.n[2];                                   \
    uint64_t cnt = 0, fst = UINT64_MAX;                                       \
    _Pragma("omp parallel for num_threads(nt) schedule(static) \
             reduction(+ : cnt) reduction(min : fst)")                        \
    for (long r = 0; r < rows; r++) {                                         \
      const T *p = (const T *)f->data + strata__offset(f, 0, r % ny, r / ny); \
      T acc = 0;                                                              \
      _Pragma("omp simd reduction(+ : acc)")                                  \
      for (long i = 0; i < nx; i++) acc += p[i] * (T)0;                       \
      if (acc == 0) continue;                                                 \
      for (long i = 0; i < nx; i++)                                           \
        if (!isfinite(p[i])) {                                                \
          cnt++;                                                              \
          if ((uint64_t)(r * nx + i) < fst) fst = (uint64_t)(r * nx + i);     \
        }                                                                     \
    }                                                                         \
    *count = cnt;                                                             \
    *first = fst;                                                             \
    if (fst != UINT64_MAX)                                                    \
      *value = (double)((const T *)f->data)[strata__offset(                   \
          f, (long)(fst % (uint64_t)nx), (long)(fst / (uint64_t)nx % ny),     \
          (long)(fst / (uint64_t)nx / (uint64_t)ny))];                        \
  }
CPU_NONFINITE(float)
CPU_NONFINITE(double)

static strata_status cpu_nonfinite(const strata_field *f, uint64_t *count,
                                   uint64_t *first, double *value) {
  const int nt = nthreads(f->ctx);
  if (f->d.precision == STRATA_F32)
    nonfinite_float(f, nt, count, first, value);
  else
    nonfinite_double(f, nt, count, first, value);
  return STRATA_OK;
}

static strata_status cpu_alloc(strata_context *ctx, size_t bytes, void **p) {
  size_t total = strata__host_total();
  if (total && bytes > total)
    return strata__fail(ctx, STRATA_ENOMEM,
                        "field needs %zu bytes (%.2f GiB) but this machine "
                        "has %zu bytes (%.2f GiB) of memory",
                        bytes, bytes / 1073741824.0, total,
                        total / 1073741824.0);
  size_t rounded = (bytes + STRATA__ALIGN_BYTES - 1) / STRATA__ALIGN_BYTES *
                   STRATA__ALIGN_BYTES;
  void *q = aligned_alloc(STRATA__ALIGN_BYTES, rounded);
  if (!q)
    return strata__fail(ctx, STRATA_ENOMEM,
                        "cannot allocate %zu bytes (%.2f GiB) of host memory "
                        "(%zu bytes available)",
                        bytes, bytes / 1073741824.0,
                        strata__host_available());
  /* zero in parallel: defined contents, and pages first touched by the
   * threads that will use them */
  char *c = q;
  long chunks = (long)((rounded + 65535) / 65536);
#pragma omp parallel for schedule(static) num_threads(nthreads(ctx))
  for (long i = 0; i < chunks; i++) {
    size_t lo = (size_t)i * 65536, len = rounded - lo < 65536 ? rounded - lo
                                                               : 65536;
    memset(c + lo, 0, len);
  }
  ctx->alloc_total += bytes;
  *p = q;
  return STRATA_OK;
}

static void cpu_release(strata_context *ctx, void *p) {
  (void)ctx;
  free(p);
}

static strata_status cpu_memcpy(strata_context *ctx, void *dst, const void *src,
                                size_t bytes) {
  const char *s = src;
  char *d = dst;
  long chunks = (long)((bytes + 65535) / 65536);
#pragma omp parallel for schedule(static) num_threads(nthreads(ctx))
  for (long i = 0; i < chunks; i++) {
    size_t lo = (size_t)i * 65536, len = bytes - lo < 65536 ? bytes - lo
                                                             : 65536;
    memcpy(d + lo, s + lo, len);
  }
  return STRATA_OK;
}

static strata_status cpu_fill_ghosts(strata_field *f, const strata_boundary *bc) {
  return strata__fill_ghosts_host(f, f->data, bc);
}

static strata_status cpu_info(strata_context *ctx, strata_device_info *info) {
  snprintf(info->name, sizeof info->name, "CPU");
  FILE *fp = fopen("/proc/cpuinfo", "r");
  if (fp) {
    char line[512];
    while (fgets(line, sizeof line, fp))
      if (strncmp(line, "model name", 10) == 0) {
        char *c = strchr(line, ':');
        if (c) {
          c++;
          while (*c == ' ') c++;
          c[strcspn(c, "\n")] = '\0';
          snprintf(info->name, sizeof info->name, "%s", c);
        }
        break;
      }
    fclose(fp);
  }
  info->memory_bytes = strata__host_total();
  info->memory_free = strata__host_available();
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  info->multiprocessors = ncpu > 0 ? (int)ncpu : 1;
  long l3 = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 <= 0) l3 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  info->l2_bytes = l3 > 0 ? (size_t)l3 : 0;
  info->threads = nthreads(ctx);
  return STRATA_OK;
}

const strata__backend strata__cpu_backend = {
    .name = "cpu",
    .host_accessible = 1,
    .init = NULL,
    .fini = NULL,
    .info = cpu_info,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .to_host = cpu_memcpy,
    .from_host = cpu_memcpy,
    .copy = cpu_memcpy,
    .sync = NULL,
    .apply = cpu_apply,
    .fill_ghosts = cpu_fill_ghosts,
    .copy_kernel = cpu_copy_kernel,
    .variants = cpu_variants,
    .apply_fused = strata__cpu_apply_fused,
    .wave_step = strata__cpu_wave_step,
    .yee_step = strata__cpu_yee_step,
    .sample = strata__cpu_sample,
    .mg_ghosts = strata__cpu_mg_ghosts,
    .mg_sweep = strata__cpu_mg_sweep,
    .mg_transfer = strata__cpu_mg_transfer,
    .mg_axpby = strata__cpu_mg_axpby,
    .nonfinite = cpu_nonfinite,
    .fv_residual = strata__cpu_fv_residual,
    .fv_gsrb = strata__cpu_fv_gsrb,
    .fv_update = strata__cpu_fv_update,
    .fv_restrict = strata__cpu_fv_restrict,
    .fv_prolong = strata__cpu_fv_prolong,
    .fv_dot = strata__cpu_fv_dot,
};
