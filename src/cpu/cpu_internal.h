/* Shared by the CPU engine's files. */
#ifndef STRATA_CPU_INTERNAL_H
#define STRATA_CPU_INTERNAL_H

#include "../core/internal.h"
#include "../core/point.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* OpenMP threads for ctx: its own setting, else the OpenMP default. */
static inline int nthreads(const strata_context *ctx) {
#ifdef _OPENMP
  return ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
#else
  (void)ctx;
  return 1;
#endif
}

#endif
