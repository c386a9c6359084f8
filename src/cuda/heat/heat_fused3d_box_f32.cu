/* apply_fused's 3D box register tiles in fp32 (heat_fused3d_box.cuh). */
#include "heat/heat_fused3d_box.cuh"

namespace strata_cuheat {
template fz_kern<float> fz3_kernel_box<float>(int, const tile3 &);
} // namespace strata_cuheat
