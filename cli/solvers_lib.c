/* The library's solvers as `strata run` sees them (heat, wave, fdtd). */
#include "run.h"

const run_solver *const run_solvers_extra[] = {NULL};
