/* The benchmark driver shared by `strata_bench` and `strata bench`, and the
 * check of a measured copy ceiling that the other benchmarks and `strata
 * run` share with it. */
#ifndef STRATA_BENCH_H
#define STRATA_BENCH_H

#include <stdio.h>

/* Runs the benchmark with command-line arguments (see --help).  Returns a
 * process exit code: 0 ok, 1 a failure (a wrong result included), 2 bad
 * usage.  Prints the table to stdout. */
int strata_bench_main(int argc, char **argv);

/* A copy ceiling slower than this (GB/s, one read and one write per point)
 * is no machine's memory: the copy was slowed by something else. */
#define STRATA_BENCH_MIN_COPY_GBS 1.0
/* How much faster than the copy a kernel may run at its minimum traffic
 * before the copy is taken for no ceiling: caches, prefetchers and timing
 * noise let a kernel beat the copy by a little, never by this much. */
#define STRATA_BENCH_MAX_RATIO 1.25

/* Whether a copy ceiling measured in the same run can be believed, for the
 * benchmarks and `strata run`.  copy_gbs: the copy kernel's bandwidth;
 * ratio: what ran fastest against it (what, e.g. an operator's name) over
 * the copy, both counted at their minimum traffic, min_bpp bytes per point
 * for what (0 = no ratio).  Returns 0 when nothing is wrong; else 1, with
 * the reason in buf (n bytes, one line without a newline): a copy under
 * STRATA_BENCH_MIN_COPY_GBS, or what faster than the copy by more than
 * STRATA_BENCH_MAX_RATIO (fewer effective bytes per point than its minimum
 * allows).  Either way the percentages of the copy mean nothing, and the
 * likely cause is a busy machine: other processes, or more threads than
 * free cores (cpu != 0 says so and names OMP_NUM_THREADS and [run]
 * threads). */
static inline int strata_bench_ceiling_suspect(double copy_gbs, double ratio,
                                               const char *what,
                                               double min_bpp, int cpu,
                                               char *buf, size_t n) {
  const char *hint =
      cpu ? "is the machine busy, or are there more OpenMP threads than free "
            "cores (OMP_NUM_THREADS, or [run] threads in a case)?"
          : "is the device shared with other processes?";
  if (copy_gbs > 0 && copy_gbs < STRATA_BENCH_MIN_COPY_GBS) {
    snprintf(buf, n, "the copy ceiling measured only %.3g GB/s, under %g "
             "GB/s: it is not this machine's memory bandwidth and the %% of "
             "copy means nothing; %s", copy_gbs, STRATA_BENCH_MIN_COPY_GBS,
             hint);
    return 1;
  }
  if (copy_gbs > 0 && min_bpp > 0 && ratio > STRATA_BENCH_MAX_RATIO) {
    snprintf(buf, n, "%s ran at %.0f%% of the copy ceiling (%.2f B/pt, "
             "under its minimum of %g): the copy measured (%.3g GB/s) is not "
             "this machine's ceiling and the %% of copy means nothing; %s",
             what, 100 * ratio, min_bpp / ratio, min_bpp, copy_gbs, hint);
    return 1;
  }
  return 0;
}

#endif
