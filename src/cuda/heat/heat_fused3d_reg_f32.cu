/* apply_fused's 3D star register tiles in fp32 (heat_fused3d_reg.cuh). */
#include "heat/heat_fused3d_reg.cuh"

namespace strata_cuheat {
template fz_kern<float> fz3_kernel_reg<float>(int, const tile3 &);
} // namespace strata_cuheat
