/* The tensor maps of the Hopper bulk tensor copies (TMA), for the operator
 * kernels and the solvers alike. */
#include "cuda_tma.cuh"

/* cuTensorMapEncodeTiled through the runtime's driver entry point, looked up
 * once (NULL when the driver has none). */
typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t,
                              void *, const cuuint64_t *, const cuuint64_t *,
                              const cuuint32_t *, const cuuint32_t *,
                              CUtensorMapInterleave, CUtensorMapSwizzle,
                              CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static encode_fn encoder() {
  static const encode_fn fn = [] {
    void *p = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                         cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      p = NULL;
    return (encode_fn)p;
  }();
  return fn;
}

strata_status strata__cu_tensor_map(strata_context *ctx, const void *base,
                                    size_t es, const unsigned long long ext[3],
                                    int TW, int TH, int promote,
                                    const char *name, CUtensorMap *tm,
                                    bool yz) {
  encode_fn enc = encoder();
  if (!enc)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "%s: the CUDA driver has no cuTensorMapEncodeTiled",
                        name);
  const cuuint64_t dim[3] = {ext[0], yz ? ext[2] : ext[1],
                             yz ? ext[1] : ext[2]};
  const cuuint64_t row = ext[0] * es, plane = ext[0] * ext[1] * es;
  const cuuint64_t stride[2] = {yz ? plane : row, yz ? row : plane};
  const cuuint32_t box[3] = {(cuuint32_t)TW, (cuuint32_t)TH, 1};
  const cuuint32_t estr[3] = {1, 1, 1};
  /* the tuning switch tma_l2 = 0, 64, 128 or 256 overrides it
   * (docs/tuning.md) */
  promote = (int)strata__tuning_long(ctx, "tma_l2", promote);
  const CUtensorMapL2promotion l2 =
      promote == 0    ? CU_TENSOR_MAP_L2_PROMOTION_NONE
      : promote == 64  ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
      : promote == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                       : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  CUresult cr = enc(tm,
                    es == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                            : CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
                    3, const_cast<void *>(base), dim, stride, box, estr,
                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                    l2, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  /* a map the driver refuses is a variant that cannot take this
   * allocation (ENOTSUP: the tuner skips it), not a failed device */
  if (cr != CUDA_SUCCESS)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "%s: cuTensorMapEncodeTiled failed (CUresult %d) for a "
                        "%llux%llux%llu allocation and a %dx%d box",
                        name, (int)cr, ext[0], ext[1], ext[2], TW, TH);
  return STRATA_OK;
}
