/* strata bench: the benchmark driver of bench/, shared with strata_bench. */
#include "bench.h"
#include "cli.h"

int cli_bench(int argc, char **argv) { return strata_bench_main(argc, argv); }
