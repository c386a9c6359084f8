/* The check the benchmarks (strata_bench, bench_solvers) and `strata run`
 * make of the copy ceiling they measured (bench/bench.h). */
#include <string.h>

#include "../bench/bench.h"
#include "runner.h"

/* A copy slower than any memory, or a kernel faster than the copy
 * at fewer bytes per point than its minimum, is reported with the numbers
 * and the likely cause; ordinary figures are not. */
TEST(copy_ceiling_check) {
  char w[512] = "";
  /* an fp32 operator at 6 B/pt against its minimum of 8 */
  CHECK(strata_bench_ceiling_suspect(10.0, 8.0 / 6, "7pt/omp", 8, 1, w,
                                     sizeof w) == 1);
  CHECKF(strstr(w, "7pt/omp ran at 133% of the copy ceiling") &&
         strstr(w, "6.00 B/pt") && strstr(w, "minimum of 8") &&
         strstr(w, "OMP_NUM_THREADS") && !strchr(w, '\n'), "%s", w);
  /* a copy at 0.35 GB/s, whatever ran beside it */
  CHECK(strata_bench_ceiling_suspect(0.35, 0.95, "the run", 24, 1, w,
                                     sizeof w) == 1);
  CHECKF(strstr(w, "0.35 GB/s, under 1 GB/s") && strstr(w, "[run] threads"),
         "%s", w);
  CHECK(strata_bench_ceiling_suspect(0.35, 0, "", 0, 0, w, sizeof w) == 1);
  CHECKF(strstr(w, "shared") && !strstr(w, "OMP_NUM_THREADS"), "%s", w);
  /* within noise of the copy, slower than it, or nothing measured */
  CHECK(strata_bench_ceiling_suspect(10.0, 1.2, "dx", 8, 1, w, sizeof w) == 0);
  CHECK(strata_bench_ceiling_suspect(10.0, 0.4, "27pt", 16, 1, w,
                                     sizeof w) == 0);
  CHECK(strata_bench_ceiling_suspect(0, 3.0, "run", 8, 1, w, sizeof w) == 0);
  CHECK(strata_bench_ceiling_suspect(2000.0, 0.9, "wave", 12, 0, w,
                                     sizeof w) == 0);
  return 0;
}

RUN_TESTS(copy_ceiling_check)
