/* Host side of the operator kernels fed by tensor copies (ops/star_tma.cuh,
 * seeds/kd_tma.cu): the block, ring and grid they work out before a launch,
 * the input's tensor map, the copies' L2 policy and what the device and the
 * input must offer. */
#ifndef STRATA_CUDA_TMA_LAUNCH_CUH
#define STRATA_CUDA_TMA_LAUNCH_CUH

#include "engine/cuda_tma.cuh"

namespace {

/* The tensor map of the input's whole allocation with a TW x TH x 1 box. */
strata_status tensor_map(const strata__launch *L, size_t es, int TW, int TH,
                         int promote, const char *name, CUtensorMap *tm) {
  const unsigned long long ext[3] = {L->in_ext[0], L->in_ext[1], L->in_ext[2]};
  return strata__cu_tensor_map(L->ctx, L->in_data, es, ext, TW, TH, promote,
                               name, tm);
}

/* The tensor copies' L2 policy (l2_policy's numbering): dflt, or the
 * context's tuning switch tma_hint (docs/tuning.md).  The stars' tiles are
 * copied evict-last: their halo rows are read again by the neighbouring
 * blocks, and the outputs are stored evict-first (docs/performance.md). */
int tma_hint(const strata__launch *L, int dflt) {
  return (int)strata__tuning_long(L->ctx, "tma_hint", dflt);
}

/* What both tensor-copy launchers work out before they launch: the block
 * (whole warps, at most maxthr consumers, plus the copier warp when WS)
 * and its TW x TH tile (a copy box holds at most 256 per axis), the ring's
 * shared memory (NS slots of slot elements and their barriers), occupancy,
 * the grid, the tensor map (promote: its L2 promotion) and the z chunks
 * (warmup: the extra planes a chunk reads). */
struct tma_plan {
  int threads, zchunk;
  size_t bytes;
  dim3 grid;
  CUtensorMap tm;
};

template <typename T, typename K>
strata_status tma_prepare(const strata__launch *L, K kern, const char *name,
                          int W, int maxthr, bool ws, int TW, int TH,
                          int slot, int NS, int promote, int warmup,
                          tma_plan *P) {
  constexpr int V = 16 / sizeof(T);
  const int BX = L->block[0], BY = L->block[1];
  const int nthr = BX * BY;
  if (nthr > maxthr || nthr % 32 != 0)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block %dx%dx%d has %d threads; whole warps, at "
                        "most %d with %d rows a thread", name, BX, BY, W,
                        nthr, maxthr, W);
  if (TW > 256 || TH > 256)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: block %dx%dx%d makes a %dx%d tile with its halo; "
                        "a tensor copy box holds at most 256 per axis",
                        name, BX, BY, W, TW, TH);
  P->bytes = (size_t)NS * slot * sizeof(T) + 2 * NS * sizeof(uint64_t);
  P->threads = nthr + (ws ? 32 : 0); /* the copier warp */
  strata_status s = strata__smem_opt_in(L, kern, P->bytes, name);
  if (s != STRATA_OK) return s;
  int per_sm = 0;
  s = strata__occupancy(L, kern, P->threads, P->bytes, &per_sm);
  if (s != STRATA_OK) return s;
  const long long gx = ((L->g.nx + V - 1) / V + BX - 1) / BX;
  const long long gy = (L->g.ny + BY * W - 1) / (BY * W);
  if (gy > 65535)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "%s: %d rows need %lld blocks along y (limit 65535); "
                        "use taller blocks", name, L->g.ny, gy);
  s = tensor_map(L, sizeof(T), TW, TH, promote, name, &P->tm);
  if (s != STRATA_OK) return s;
  const int chunks =
      strata__cu_chunks(L, (int)(gx * gy), per_sm, L->g.nz, warmup);
  P->zchunk = (L->g.nz + chunks - 1) / chunks;
  P->grid = dim3((unsigned)gx, (unsigned)gy,
                 (unsigned)((L->g.nz + P->zchunk - 1) / P->zchunk));
  return STRATA_OK;
}

/* What both tensor-copy families need from the device and the input. */
strata_status tma_usable(const strata__launch *L, const char *name) {
  if (L->cc_major < 9)
    return strata__fail(L->ctx, STRATA_ENOTSUP,
                        "%s: tensor copies need compute capability 9.0 or "
                        "later (this device is %d.x)", name, L->cc_major);
  if (!L->in_data)
    return strata__fail(L->ctx, STRATA_ENOTSUP,
                        "%s: no allocation to map for this input", name);
  if (L->in_ext[0] * (L->prec == 4 ? 4 : 8) % 16 != 0)
    return strata__fail(L->ctx, STRATA_ENOTSUP,
                        "%s: row pitch of %llu elements is not a multiple of "
                        "16 bytes", name, L->in_ext[0]);
  return STRATA_OK;
}

} // namespace

#endif
