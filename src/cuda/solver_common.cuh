/* Helpers of the solver entries (wave, FDTD, receivers): tuning switches
 * and the axis limit of the CUDA kernels. */
#ifndef STRATA_CUDA_SOLVER_COMMON_CUH
#define STRATA_CUDA_SOLVER_COMMON_CUH

#include "cuda_device.cuh"

#include <string.h>

namespace {

/* Whether the context's tuning switch key (docs/tuning.md) is val. */
inline bool sv_tuning_is(const strata_context *ctx, const char *key,
                         const char *val) {
  char buf[32];
  const char *v = strata__tuning(ctx, key, buf, sizeof buf);
  return v && strcmp(v, val) == 0;
}

inline strata_status sv_check_axis(strata_context *ctx,
                                   const strata_field *f, const char *who) {
  for (int a = 0; a < 3; a++)
    if (f->d.n[a] > ((size_t)1 << 30))
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "%s: the CUDA kernels take at most 2^30 points per "
                          "axis (axis %c has %zu)", who, "xyz"[a], f->d.n[a]);
  return STRATA_OK;
}

/* Point sources (at most 8), added in order by one thread (sources may
 * share a node). */
template <typename T> struct src_list {
  int n;
  long long off[8];
  int at[8][3];
  T val[8];
};

} // namespace

#endif
