/* The benchmark's PNG chart (bench_chart.c). */
#ifndef STRATA_BENCH_CHART_H
#define STRATA_BENCH_CHART_H

#include "strata.h"

typedef struct {
  const char *op, *variant;
  int f64;     /* 1 for fp64 rows */
  int is_copy; /* the copy ceilings themselves */
  double pct;  /* percent of the copy ceiling */
} bench_chart_row;

/* Draws one bar per row (percent of copy, 0-125%, lines at 90% and 100%)
 * under title and writes it as PNG to path through ctx.  Returns 0, or -1
 * with the reason on ctx. */
int strata_bench_chart(strata_context *ctx, const char *path,
                       const char *title, const bench_chart_row *rows, int n);

#endif
