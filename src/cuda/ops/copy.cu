/* copycube: out = in over the interior with the 2.5D traversal (16-byte
 * vectors, 4 planes in flight per thread): the ceiling the operators are
 * measured against (strata_copy_kernel). */
#include "engine/cuda_device.cuh"

namespace {

/* copycube: 2.5D, a 16-byte vector per thread, 4 planes loaded before the
 * first of them is stored. */
template <typename T>
__global__ void k_copycube(const T *__restrict__ in, T *__restrict__ out,
                           strata__geom g, int zchunk) {
  constexpr int V = 16 / sizeof(T);
  typedef strata__vec<T, V> vec;
  const int xv = (blockIdx.x * blockDim.x + threadIdx.x) * V;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (xv >= g.nx || j >= g.ny) return;
  const int k0 = blockIdx.z * zchunk, k1 = min(g.nz, k0 + zchunk);
  const T *p = in + xv + (long long)j * g.sy;
  T *o = out + xv + (long long)j * g.osy;
  const int nv = g.nx - xv;
  int k = k0;
  for (; k + 4 <= k1; k += 4) {
    vec v[4];
#pragma unroll
    for (int u = 0; u < 4; u++) v[u] = ldg_v<T, V>(p + (long long)(k + u) * g.sz);
#pragma unroll
    for (int u = 0; u < 4; u++)
      store_masked<T, V>(o + (long long)(k + u) * g.osz, v[u], nv);
  }
  for (; k < k1; k++)
    store_masked<T, V>(o + (long long)k * g.osz,
                       ldg_v<T, V>(p + (long long)k * g.sz), nv);
}

template <typename T>
strata_status copy_t(const strata__launch *L) {
  constexpr int V = 16 / sizeof(T);
  const int BX = 32, BY = 8;
  auto kern = k_copycube<T>;
  int per_sm = 0;
  strata_status s = strata__occupancy(L, kern, BX * BY, 0, &per_sm);
  if (s != STRATA_OK) return s;
  const long long gx = ((L->g.nx + V - 1) / V + BX - 1) / BX;
  const long long gy = (L->g.ny + BY - 1) / BY;
  if (gy > 65535)
    return strata__fail(L->ctx, STRATA_EINVAL,
                        "copycube: %d rows need %lld blocks (limit 65535)",
                        L->g.ny, gy);
  const int chunks = strata__cu_chunks(L, (int)(gx * gy), per_sm, L->g.nz, 0);
  const int zchunk = (L->g.nz + chunks - 1) / chunks;
  dim3 grid((unsigned)gx, (unsigned)gy,
            (unsigned)((L->g.nz + zchunk - 1) / zchunk));
  kern<<<grid, dim3(BX, BY, 1), 0, L->stream>>>((const T *)L->in, (T *)L->out,
                                                L->g, zchunk);
  STRATA__LAUNCHED(L->ctx, "copycube kernel launch");
  return STRATA_OK;
}

} // namespace

strata_status strata__cu_copy(const strata__launch *L) {
  return L->prec == 4 ? copy_t<float>(L) : copy_t<double>(L);
}
