/* streamtma / streamws (star_tma.cuh): what they take, then the precision's
 * instances. */
#include "ops/star_tma.cuh"

strata_status strata__cu_streamtma(const strata__launch *L,
                                   const strata_stencil *op, int ws) {
  if (op->dims != 3 || op->kind != STRATA_STENCIL_STAR || op->radius < 1 ||
      op->radius > 4)
    return strata__fail(L->ctx, STRATA_ENOTSUP,
                        "streamtma: only 3D star stencils of radius 1..4");
  strata_status s = tma_usable(L, ws ? "streamws" : "streamtma");
  if (s != STRATA_OK) return s;
  if (L->block[2] != 1 && L->block[2] != 2)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "streamtma: block z is the rows per thread, 1 or 2 "
                        "(got %d)", L->block[2]);
  return L->prec == 4 ? strata__cu_streamtma_f32(L, op, ws != 0)
                       : strata__cu_streamtma_f64(L, op, ws != 0);
}
