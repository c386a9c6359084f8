/* The wave step's tensor-copy launches in fp64 (wave_tma_launch.cuh). */
#include "wave/wave_tma_launch.cuh"

namespace strata_cuwave {
template strata_status launch_tma<double>(strata_context *, strata__cuda_state *,
                                      const wave_par<double> &,
                                      const strata__wave_args *, int, bool *,
                                      int *, int *);
} // namespace strata_cuwave
