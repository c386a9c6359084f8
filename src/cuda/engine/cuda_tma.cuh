/* The Hopper bulk tensor copy (TMA, sm_90) pieces shared by the kernels
 * that use it (the operator variants of ops/star_tma.cuh and
 * seeds/kd_tma.cu, the wave step): mbarrier helpers, the 3D box copy, the ring of tile
 * slots with its full / empty protocol (stated in ops/star_tma.cuh's header),
 * and the host's tensor-map encoder. */
#ifndef STRATA_CUDA_TMA_CUH
#define STRATA_CUDA_TMA_CUH

#include "cuda_device.cuh"

#include <cuda.h> /* CUtensorMap and its enums; the entry point comes from
                     the runtime, so there is no link against libcuda */
#include <stdint.h>

/* Host side: a tensor map over a whole allocation at base (ext[0] x ext[1] x
 * ext[2] elements of es bytes, rows contiguous) with a TW x TH x 1 box;
 * promote: the copies' L2 promotion in bytes (0 = none; the tuning switch
 * tma_l2 overrides it).  name heads the error message.  yz: the map's second and
 * third axes are the allocation's z and y (a box is then TW x TH planes of
 * one row: the wave step's z CPML tiles, which walk along y). */
strata_status strata__cu_tensor_map(strata_context *ctx, const void *base,
                                    size_t es, const unsigned long long ext[3],
                                    int TW, int TH, int promote,
                                    const char *name, CUtensorMap *tm,
                                    bool yz = false);

namespace {

__device__ __forceinline__ unsigned smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

/* Hopper's register hand-over between warpgroups (setmaxnreg, sm_90a):
 * a copying warpgroup gives its registers back to the CTA's pool (dec) and
 * the computing ones take them (inc); ptxas then allocates up to N
 * registers a thread in the code after an inc.  Every warp of the
 * warpgroup must execute the same one.  Built for plain sm_90 (or for the
 * PTX that a later device compiles) they are no-ops and the kernel keeps
 * the launch's register count everywhere. */
template <int N> __device__ __forceinline__ void wg_regs_dec() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N> __device__ __forceinline__ void wg_regs_inc() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

__device__ __forceinline__ void mbar_init(uint64_t *b, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(b)),
               "r"(count)
               : "memory");
}

/* Makes the initialised barriers visible to the copy engine (async proxy). */
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void mbar_expect_tx(uint64_t *b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   smem_u32(b)),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t *b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(b))
               : "memory");
}

/* A waiter sleeps until the phase completes (or 10 ms pass) instead of
 * polling: as fast as the plain form for the wave step and the 25-point
 * tensor-copy walks, and it leaves issue slots to the other warps. */
__device__ __forceinline__ bool mbar_try_wait(uint64_t *b, unsigned parity) {
  unsigned r;
  asm volatile("{\n"
               " .reg .pred p;\n"
               " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
               " selp.u32 %0, 1, 0, p;\n"
               "}\n"
               : "=r"(r)
               : "r"(smem_u32(b)), "r"(parity), "n"(10000000)
               : "memory");
  return r != 0;
}

__device__ __forceinline__ void mbar_wait(uint64_t *b, unsigned parity) {
  while (!mbar_try_wait(b, parity)) {
  }
}

/* One box of the 3D tensor map at element coordinates (x, y, z) into
 * shared memory (128-byte aligned), completing on mbarrier b. */
__device__ __forceinline__ void tma_load3(void *dst, const CUtensorMap *tm,
                                          int x, int y, int z, uint64_t *b) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_"
      "tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(x), "r"(y), "r"(z),
      "r"(smem_u32(b))
      : "memory");
}

/* The same with an L2 cache policy (pol from l2_policy) on the reads. */
__device__ __forceinline__ void tma_load3_pol(void *dst, const CUtensorMap *tm,
                                              int x, int y, int z, uint64_t *b,
                                              uint64_t pol) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_"
      "tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(
          smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(tm)), "r"(x), "r"(y), "r"(z),
      "r"(smem_u32(b)), "l"(pol)
      : "memory");
}

/* L2 cache policies for tensor copies: 0 none, 1 evict-last, 2
 * evict-first, 3 / 4 / 5 evict-last on 50 / 75 / 25% of the lines. */
__device__ __forceinline__ uint64_t l2_policy(int hint) {
  uint64_t p = 0;
  if (hint == 1)
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n"
                 : "=l"(p));
  else if (hint == 2)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n"
                 : "=l"(p));
  else if (hint == 3)
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 0.5;\n"
                 : "=l"(p));
  else if (hint == 4)
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 0.75;\n"
                 : "=l"(p));
  else if (hint == 5)
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 0.25;\n"
                 : "=l"(p));
  return p;
}

/* tma_load3 with the policy when there is one. */
__device__ __forceinline__ void tma_load3_hint(void *dst, const CUtensorMap *tm,
                                               int x, int y, int z,
                                               uint64_t *b, uint64_t pol) {
  if (pol)
    tma_load3_pol(dst, tm, x, y, z, b, pol);
  else
    tma_load3(dst, tm, x, y, z, b);
}

/* Elements of one ring slot: the tile rounded up to 128 bytes. */
template <typename T>
__host__ __device__ constexpr int tma_slot_elems(int TW, int TH) {
  return (TW * TH + (int)(128 / sizeof(T)) - 1) / (int)(128 / sizeof(T)) *
         (int)(128 / sizeof(T));
}

/* Thread 0, before the block's first barrier: NS full barriers (one
 * arrival: the copier's) and, when empty is not NULL (warp-specialised),
 * NS empty barriers with one arrival per consumer warp. */
template <int NS>
__device__ __forceinline__ void tma_bars_init(uint64_t *full, uint64_t *empty,
                                              int warps) {
#pragma unroll
  for (int s = 0; s < NS; s++) {
    mbar_init(&full[s], 1);
    if (empty) mbar_init(&empty[s], (unsigned)warps);
  }
  mbar_fence_init();
}

/* The copier's loop of a warp-specialised ring of NS slots: planes first ..
 * last; fill n of slot s is plane first + s + n*NS, and from the second
 * fill on it waits until every consumer warp has released the slot's
 * previous plane (empty[s]).  copy(p, s) issues plane p's copies into slot
 * s and arms full[s]. */
template <int NS, typename F>
__device__ __forceinline__ void tma_copier(uint64_t *empty, int first,
                                           int last, F &&copy) {
  int slot = 0;
  unsigned eph = 0;
  for (int p = first; p <= last; p++) {
    if (p >= first + NS) mbar_wait(&empty[slot], eph);
    copy(p, slot);
    if (++slot == NS) {
      slot = 0;
      if (p >= first + NS) eph ^= 1u;
    }
  }
}

/* The consumers' place in a ring of NS slots whose first plane is the
 * walk's first: cs the slot of plane k, fs that of plane k + R (the
 * queue's front) and fph the phase of fs's fill. */
template <int NS> struct tma_cursor {
  int cs, fs;
  unsigned fph;
  __device__ __forceinline__ explicit tma_cursor(int R) : cs(0), fs(R), fph(0) {}
  __device__ __forceinline__ void next() {
    cs = cs + 1 == NS ? 0 : cs + 1;
    if (++fs == NS) {
      fs = 0;
      fph ^= 1u;
    }
  }
};

/* The ring of NS tile slots (bufsz elements each, 128-byte aligned) and,
 * after them in shared memory, its full and empty mbarriers; plane p is
 * the box of the tensor map at (bx, by, oz + p).  The copy side of the
 * protocol above. */
template <typename T, int NS> struct tma_ring {
  T *sm;
  int bufsz;
  uint64_t *full, *empty;
  const CUtensorMap *tm;
  unsigned txbytes;
  uint64_t pol = 0; /* an L2 policy for the copies (0: none) */
  int bx, by, oz;
  /* the x halo apart from the tile (when tmh is set): boxes of tmh at
   * (hxl, hy) and (hxr, hy), into the slot from element hoff on: the left
   * columns of every row, then (hsz elements on) the right ones */
  const CUtensorMap *tmh = nullptr;
  int hxl = 0, hxr = 0, hy = 0, hoff = 0, hsz = 0;

  __device__ __forceinline__ tma_ring(T *sm_, int bufsz_, const CUtensorMap *tm_,
                                      unsigned txbytes_, int bx_, int by_,
                                      int oz_)
      : sm(sm_), bufsz(bufsz_), full(reinterpret_cast<uint64_t *>(sm_ + NS * bufsz_)),
        empty(full + NS), tm(tm_), txbytes(txbytes_), bx(bx_), by(by_), oz(oz_) {}

  /* plane p into slot s */
  __device__ __forceinline__ void copy(int p, int s) const {
    T *d = sm + s * bufsz;
    mbar_expect_tx(&full[s], txbytes); /* the tile's and the halo's bytes */
    tma_load3_hint(d, tm, bx, by, oz + p, &full[s], pol);
    if (tmh) {
      tma_load3(d + hoff, tmh, hxl, hy, oz + p, &full[s]);
      tma_load3(d + hoff + hsz, tmh, hxr, hy, oz + p, &full[s]);
    }
  }
  /* thread 0, before the block's one barrier: the full barriers, and the
   * empty ones (warps arrivals) when warp-specialised */
  __device__ __forceinline__ void init(bool ws, int warps) const {
    tma_bars_init<NS>(full, ws ? empty : nullptr, warps);
  }
  /* the copier (warp-specialised): planes first .. last; fill n of slot s
   * is plane first + s + n*NS, and from the second fill on it waits until
   * every consumer warp has released the slot's previous plane */
  __device__ __forceinline__ void copier(int first, int last) const {
    tma_copier<NS>(empty, first, last, [&](int p, int s) { copy(p, s); });
  }
  /* Every thread of the block: the barriers, the block's one barrier, then
   * the first copies, of planes first .. last: warp-specialised, the warp
   * after the nthr consumers copies them all and false comes back to it
   * (it has nothing else to do); otherwise thread 0 copies the first NS
   * planes (the rest after each plane's block barrier). */
  template <bool WS>
  __device__ __forceinline__ bool start(int tid, int nthr, int first,
                                        int last) const {
    if (tid == 0) init(WS, nthr / 32);
    __syncthreads();
    if constexpr (WS) {
      if (tid >= nthr) {
        if (tid == nthr) copier(first, last);
        return false;
      }
    } else if (tid == 0) {
      for (int p = first; p < first + NS && p <= last; p++) copy(p, p - first);
    }
    return true;
  }
};

} // namespace

#endif
