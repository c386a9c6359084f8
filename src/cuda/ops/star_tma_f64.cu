/* streamtma / streamws in fp64 (star_tma.cuh). */
#include "ops/star_tma.cuh"

strata_status strata__cu_streamtma_f64(const strata__launch *L,
                                       const strata_stencil *op, bool ws) {
  return tma_t<double>(L, op, ws);
}
