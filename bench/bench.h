/* The benchmark driver shared by `strata_bench` and `strata bench`. */
#ifndef STRATA_BENCH_H
#define STRATA_BENCH_H

/* Runs the benchmark with command-line arguments (see --help).  Returns a
 * process exit code: 0 ok, 1 a failure (a wrong result included), 2 bad
 * usage.  Prints the table to stdout. */
int strata_bench_main(int argc, char **argv);

#endif
