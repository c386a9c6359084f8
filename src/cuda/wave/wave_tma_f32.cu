/* The wave step's tensor-copy launches in fp32 (wave_tma_launch.cuh). */
#include "wave/wave_tma_launch.cuh"

namespace strata_cuwave {
template strata_status launch_tma<float>(strata_context *, strata__cuda_state *,
                                      const wave_par<float> &,
                                      const strata__wave_args *, int, bool *,
                                      int *, int *);
} // namespace strata_cuwave
