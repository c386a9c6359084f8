/* Internal definitions shared by the core and the backends.  Not installed. */
#ifndef STRATA_INTERNAL_H
#define STRATA_INTERNAL_H

#include "strata.h"

#include <stdarg.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA__ALIGN_BYTES 128
#define STRATA__ERRMSG_SIZE 1024

typedef struct strata__backend strata__backend;

struct strata_context {
  strata_backend kind;
  const strata__backend *be;
  void *impl;   /* backend state (CUDA streams, tune cache...) */
  int threads;
  int autotune;
  char *tune_cache;
  long live_fields;
  char error[STRATA__ERRMSG_SIZE];
};

struct strata_field {
  strata_context *ctx;
  strata_field_desc d;
  strata_field_layout L;
  size_t esize;
  int g[3];     /* ghost width per axis (0 on unused axes) */
  void *data;   /* host or device pointer, STRATA__ALIGN_BYTES aligned */
};

/* What a backend provides.  Entries marked optional may be NULL: the core
 * then goes through host staging (download, compute on host, upload). */
struct strata__backend {
  const char *name;
  int host_accessible; /* field memory is plain host memory */
  strata_status (*init)(strata_context *ctx, const strata_context_options *o);
  void (*fini)(strata_context *ctx);
  strata_status (*info)(strata_context *ctx, strata_device_info *info);
  strata_status (*alloc)(strata_context *ctx, size_t bytes, void **p);
  void (*release)(strata_context *ctx, void *p);
  /* whole-allocation transfers between host memory and field memory */
  strata_status (*to_host)(strata_context *ctx, void *dst, const void *src,
                           size_t bytes);
  strata_status (*from_host)(strata_context *ctx, void *dst, const void *src,
                             size_t bytes);
  strata_status (*copy)(strata_context *ctx, void *dst, const void *src,
                        size_t bytes);
  strata_status (*sync)(strata_context *ctx);
  strata_status (*apply)(const strata_stencil *op, const strata_field *in,
                         strata_field *out, const strata_apply_options *opt);
  strata_status (*fill_ghosts)(strata_field *f, const strata_boundary *bc);
  strata_status (*copy_kernel)(const strata_field *in, strata_field *out,
                               const char *variant);
  strata_status (*variants)(strata_context *ctx, const strata_stencil *op,
                            char *buf, size_t n);
  /* optional */
  strata_status (*fill_random)(strata_field *f, uint64_t seed, double lo,
                               double hi);
  strata_status (*fill_value)(strata_field *f, double v);
  strata_status (*norm)(const strata_field *a, const strata_field *b,
                        strata_norm which, double *out);
};

extern const strata__backend strata__cpu_backend;
#ifdef STRATA_HAVE_CUDA
extern const strata__backend strata__cuda_backend;
int strata__cuda_probe(char *why, size_t n);
#endif

/* Records a detailed message on ctx and returns s. */
strata_status strata__fail(strata_context *ctx, strata_status s,
                           const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Validation shared by the front end and the backends. */
strata_status strata__check_pair(const strata_field *a, const strata_field *b,
                                 const char *what);

/* The random value of a point: a counter-based hash, identical on every
 * backend.  idx is the linear index of the point in the ghosted box. */
static inline uint64_t strata__mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
static inline double strata__rand01(uint64_t seed, uint64_t idx) {
  return (double)(strata__mix64(seed ^ strata__mix64(idx)) >> 11) *
         (1.0 / 9007199254740992.0);
}

/* Linear index of (i,j,k) in the ghosted box of f, i.e. in the dense
 * array of strata_field_read_ghosted. */
static inline uint64_t strata__ghosted_index(const strata_field *f, long i,
                                             long j, long k) {
  uint64_t gx = f->d.n[0] + 2 * (uint64_t)f->g[0];
  uint64_t gy = f->d.n[1] + 2 * (uint64_t)f->g[1];
  return (uint64_t)(i + f->g[0]) +
         gx * ((uint64_t)(j + f->g[1]) + gy * (uint64_t)(k + f->g[2]));
}

/* Element offset of interior point (i,j,k). */
static inline size_t strata__offset(const strata_field *f, long i, long j,
                                    long k) {
  return (size_t)((long)f->L.origin + i + (long)f->L.pitch_x *
                  (j + (long)f->L.pitch_y * k));
}

/* Fills the ghost layers of an image of f's allocation (host memory). */
strata_status strata__fill_ghosts_host(const strata_field *f, void *img,
                                       const strata_boundary *bc);

/* Time in seconds from a monotonic clock (benchmarks, autotuning). */
double strata__now(void);

#ifdef __cplusplus
}
#endif
#endif
