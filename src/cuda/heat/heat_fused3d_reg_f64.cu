/* apply_fused's 3D star register tiles in fp64 (heat_fused3d_reg.cuh). */
#include "heat/heat_fused3d_reg.cuh"

namespace strata_cuheat {
template fz_kern<double> fz3_kernel_reg<double>(int, const tile3 &);
} // namespace strata_cuheat
