/* apply_fused's 3D box register tiles in fp64 (heat_fused3d_box.cuh). */
#include "heat/heat_fused3d_box.cuh"

namespace strata_cuheat {
template fz_kern<double> fz3_kernel_box<double>(int, const tile3 &);
} // namespace strata_cuheat
