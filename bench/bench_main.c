#include "bench.h"

int main(int argc, char **argv) { return strata_bench_main(argc, argv); }
