/* The CUDA engine's apply_fused entry: s repetitions of
 * { fill in's ghosts with bc; out = op(in) } in one launch (temporal
 * blocking), for star stencils (radius 1..4, 1D/2D/3D) and the symmetric
 * 27-point box (3D).  The contract is in src/core/internal.h; the oracle is
 * the CPU engine's overlapped tiling (src/cpu/cpu_solvers.inc, FN(fused)),
 * whose logic this file follows point for point:
 *
 *   - a tile of outputs [t0, t1) is computed from the input region
 *     [t0 - H, t1 + H), H = R s, along every used axis; step m computes the
 *     region grown by R (s - m), so every read stays inside what step m - 1
 *     produced;
 *   - the region is clipped to [clo, chi): along a Neumann or periodic face
 *     the ghost ring evolves like the interior it mirrors or wraps (the
 *     stencils are symmetric, so the extension of a solution is a
 *     solution), so it is computed (clo = -H, chi = n + H); along a
 *     Dirichlet (or "none") face the ghost points never change between
 *     steps and keep the values of in ("pinned": clo = 0, chi = n).
 *
 * 1D/2D (k_fused2d): the whole region of a tile sits in shared memory in
 * two buffers (loaded into both, so pinned points hold the input in both);
 * each step reads one and writes the other.
 *
 * 3D (k_fused3d): 2.5D streaming.  A block owns an xy tile and a chunk of
 * planes [z0, z1); it walks the input planes p = z0 - H .. z1 + H - 1 once.
 * Time level m (0 = input, 1..s-1) keeps a ring of 2R + 1 planes of its xy
 * region in shared memory; after input plane p arrives, level m computes
 * its plane p - m R (when that plane lies in its z range [z0 - R (s - m),
 * z1 + R (s - m))) from the 2R + 1 planes of level m - 1 around it; level s
 * writes plane p - H of the tile straight to out.  Pinned points of levels
 * >= 1 (outside [clo, chi) along x, y or z) are read from in, which holds
 * them unchanged.
 *
 * Faster kernels for the heat solver's operators, described where they
 * are defined: k_fused2d_warp (2D radius 1: warp strips along y, all time
 * levels in registers), k_fused3d_reg (3D radius-1 star, s <= 4) and
 * k_fused3d_box (symmetric 27-point box, s <= 2): xy register tiles
 * streamed along z with one barrier a plane.  The rest take the two
 * kernels above.
 *
 * The arithmetic of a point is the CPU's, term for term and in the same
 * order, except in k_fused3d_box (per-plane partial sums, the in-plane
 * sums shared between rows); nvcc may contract a multiply and an add into
 * one FMA, so the result agrees with the CPU engine to rounding
 * (tests/test_cuda_solvers.c states the tolerance), not bit for bit. */
#include "heat/heat_internal.cuh"

#include <string.h>

namespace {

/* ---- 3D: 2.5D streaming, one ring of 2R + 1 planes per time level ------ */

__device__ __forceinline__ int ring_slot(int z, int np) {
  const int r = z % np;
  return r < 0 ? r + np : r;
}

/* KIND: STRATA_STENCIL_STAR or STRATA_STENCIL_BOX_SYMMETRIC (R = 1). */
template <typename T, int KIND, int R>
__global__ void __launch_bounds__(kThreads3d) k_fused3d(const fused_par<T> P) {
  constexpr int NP = 2 * R + 1;
  extern __shared__ __align__(16) unsigned char fz_smem[];
  T *ring = reinterpret_cast<T *>(fz_smem);
  const int tid = threadIdx.x, nthr = blockDim.x;
  const int ps = P.pw * P.ph, sy = P.pw, H = P.h[2];
  unsigned b = blockIdx.x;
  const int tx = (int)(b % (unsigned)P.ntl[0]);
  b /= (unsigned)P.ntl[0];
  const int ty = (int)(b % (unsigned)P.ntl[1]);
  const int tz = (int)(b / (unsigned)P.ntl[1]);
  const int t0x = tx * P.tile[0], t0y = ty * P.tile[1];
  const int t1x = min(t0x + P.tile[0], P.n[0]);
  const int t1y = min(t0y + P.tile[1], P.n[1]);
  const int z0 = tz * P.tile[2], z1 = min(z0 + P.tile[2], P.n[2]);
  const int ox = t0x - P.h[0], oy = t0y - P.h[1];

  for (int p = z0 - H; p < z1 + H; p++) {
    /* level 0: input plane p over [o, o + e) */
    {
      T *dst = ring + ring_slot(p, NP) * ps;
      const int ex = t1x - t0x + 2 * P.h[0], ey = t1y - t0y + 2 * P.h[1];
      const T *src = P.in + (long long)p * P.isz;
      for (walk k = walk_start(tid, nthr, ex); k.y < ey; walk_next(k)) {
        const int lx = k.x, ly = k.y;
        dst[lx + ly * sy] =
            src[(long long)(ox + lx) + (long long)(oy + ly) * P.isy];
      }
    }
    __syncthreads();
    for (int m = 1; m <= P.s; m++) {
      const int zc = p - m * R, sh = R * (P.s - m);
      if (zc >= z0 - sh && zc < z1 + sh) { /* uniform over the block */
        const T *lv = ring + (size_t)(m - 1) * NP * ps; /* level m - 1 */
        const T *pm[R], *pp[R];
#pragma unroll
        for (int k = 1; k <= R; k++) {
          pm[k - 1] = lv + ring_slot(zc - k, NP) * ps;
          pp[k - 1] = lv + ring_slot(zc + k, NP) * ps;
        }
        const T *pc = lv + ring_slot(zc, NP) * ps;
        if (m < P.s) {
          T *dst = ring + (size_t)m * NP * ps + ring_slot(zc, NP) * ps;
          const bool zin = zc >= P.clo[2] && zc < P.chi[2];
          const int r0x = t0x - sh, r0y = t0y - sh;
          const int wx = t1x - t0x + 2 * sh, wy = t1y - t0y + 2 * sh;
          for (walk k = walk_start(tid, nthr, wx); k.y < wy; walk_next(k)) {
            const int x = r0x + k.x, y = r0y + k.y;
            const int idx = (x - ox) + (y - oy) * sy;
            T v;
            if (zin && x >= P.clo[0] && x < P.chi[0] && y >= P.clo[1] &&
                y < P.chi[1]) {
              if constexpr (KIND == STRATA_STENCIL_STAR)
                v = star_at<T, R, 3>(pc + idx, sy, pm, pp, idx, P);
              else
                v = sym_at<T>(pm[0], pc, pp[0], idx, sy, P);
            } else { /* pinned: in holds it unchanged */
              v = P.in[(long long)x + (long long)y * P.isy +
                       (long long)zc * P.isz];
            }
            dst[idx] = v;
          }
        } else { /* level s: the tile's interior, straight to out */
          const int wx = t1x - t0x, wy = t1y - t0y;
          T *o = P.out + (long long)zc * P.osz;
          for (walk k = walk_start(tid, nthr, wx); k.y < wy; walk_next(k)) {
            const int x = t0x + k.x, y = t0y + k.y;
            const int idx = (x - ox) + (y - oy) * sy;
            T v;
            if constexpr (KIND == STRATA_STENCIL_STAR)
              v = star_at<T, R, 3>(pc + idx, sy, pm, pp, idx, P);
            else
              v = sym_at<T>(pm[0], pc, pp[0], idx, sy, P);
            o[(long long)x + (long long)y * P.osy] = v;
          }
        }
      }
      __syncthreads();
    }
  }
}

/* The outputs [k0, k1) of the last axis: the kernels see the part as a
 * field of its own, in and out moved to plane k0, the computable range and
 * the readable planes moved with them (a Dirichlet or "none" face of the
 * whole field stays pinned where it was; along a face between parts
 * nothing is pinned, as the whole sweep pins nothing there), and no plane
 * read beyond the outputs' cone. */
template <typename T>
void fused_part(fused_par<T> &P, int D, int H, int ghost, long k0, long k1) {
  const int ax = D - 1;
  const long long is = ax == 2 ? P.isz : ax == 1 ? P.isy : 1;
  const long long os = ax == 2 ? P.osz : ax == 1 ? P.osy : 1;
  const int n = P.n[ax];
  P.in += k0 * is;
  P.out += k0 * os;
  P.n[ax] = (int)(k1 - k0);
  P.clo[ax] -= (int)k0;
  P.chi[ax] -= (int)k0;
  const long alloc = (long)n + ghost - k0, cone = (k1 - k0) + H;
  P.lread = (int)(alloc < cone ? alloc : cone);
}

template <typename T>
strata_status fused_typed(const strata_stencil *op, const strata_boundary *bc,
                          int s, const strata_field *in, strata_field *out,
                          long k0, long k1) {
  strata_context *ctx = in->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const int D = in->d.dims, R = op->radius, H = R * s;
  const bool sym = op->kind == STRATA_STENCIL_BOX_SYMMETRIC;
  fused_par<T> P;
  memset(&P, 0, sizeof P);
  P.in = (const T *)in->data + in->L.origin;
  P.out = (T *)out->data + out->L.origin;
  P.isy = (long long)in->L.pitch_x;
  P.isz = P.isy * (long long)in->L.pitch_y;
  P.osy = (long long)out->L.pitch_x;
  P.osz = P.osy * (long long)out->L.pitch_y;
  P.s = s;
  for (int a = 0; a < 3; a++) {
    P.n[a] = (int)in->d.n[a];
    if (a < D) {
      const strata_bc_kind kl = bc->kind[2 * a], kh = bc->kind[2 * a + 1];
      P.h[a] = H;
      P.clo[a] = (kl == STRATA_BC_NEUMANN || kl == STRATA_BC_PERIODIC) ? -H : 0;
      P.chi[a] = P.n[a] + ((kh == STRATA_BC_NEUMANN ||
                            kh == STRATA_BC_PERIODIC) ? H : 0);
    } else {
      P.h[a] = 0;
      P.clo[a] = 0;
      P.chi[a] = 1;
    }
  }
  fused_part(P, D, H, in->d.ghost, k0, k1);
  P.c0 = (T)op->center;
  for (int a = 0; a < 3; a++)
    for (int k = 0; k <= STRATA_MAX_RADIUS; k++) P.w[a][k] = (T)op->coef[a][k];
  for (int q = 0; q < 4; q++) P.C[q] = (T)op->sym[q];
  const size_t smax = st->prop.sharedMemPerBlockOptin;

  if (D <= 2) return strata_cuheat::fused2d<T>(ctx, P, D, R, sym, s, in);

  if (D == 3 && R == 1 && (sym ? s <= 2 : s <= 4))
    return strata_cuheat::fused3d_reg<T>(ctx, P, sym, s, in);

  /* 3D: xy tiles, rings of 2R + 1 planes for levels 0..s-1 */
  const int NP = 2 * R + 1;
  static const int cand3[][2] = {{32, 16}, {32, 8}, {16, 16}, {16, 8},
                                 {8, 8},   {8, 4},  {4, 4}};
  auto bytes3 = [&](int tx, int ty) {
    return (size_t)s * NP * (size_t)(tx + 2 * H) * (ty + 2 * H) * sizeof(T);
  };
  /* prefer two blocks per multiprocessor, else whatever fits */
  const size_t per_sm = st->prop.sharedMemPerMultiprocessor;
  size_t two = per_sm / 2 > 2048 ? per_sm / 2 - 2048 : 0;
  if (two > smax) two = smax;
  int TX = 0, TY = 0;
  for (const auto &c : cand3)
    if (bytes3(c[0], c[1]) <= two) {
      TX = c[0];
      TY = c[1];
      break;
    }
  if (!TX)
    for (const auto &c : cand3)
      if (bytes3(c[0], c[1]) <= smax) {
        TX = c[0];
        TY = c[1];
        break;
      }
  if (!TX)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "apply_fused: %d fused steps of a radius-%d stencil in "
                        "3D need %zu bytes of shared memory even with 4x4 "
                        "tiles; %s gives a block %zu", s, R, bytes3(4, 4),
                        st->prop.name, smax);
  const size_t smem = bytes3(TX, TY);
  P.tile[0] = TX;
  P.tile[1] = TY;
  P.pw = TX + 2 * H;
  P.ph = TY + 2 * H;
  P.ntl[0] = (P.n[0] + TX - 1) / TX;
  P.ntl[1] = (P.n[1] + TY - 1) / TY;
  void (*kern)(const fused_par<T>) = nullptr;
  if (sym) {
    if (R == 1) kern = k_fused3d<T, STRATA_STENCIL_BOX_SYMMETRIC, 1>;
  } else {
    switch (R) {
    case 1: kern = k_fused3d<T, STRATA_STENCIL_STAR, 1>; break;
    case 2: kern = k_fused3d<T, STRATA_STENCIL_STAR, 2>; break;
    case 3: kern = k_fused3d<T, STRATA_STENCIL_STAR, 3>; break;
    case 4: kern = k_fused3d<T, STRATA_STENCIL_STAR, 4>; break;
    }
  }
  if (!kern)
    return strata__fail(ctx, STRATA_EINVAL,
                        "apply_fused: radius %d is not supported for this "
                        "stencil in 3D", R);
  strata_status e = fz_smem_attr(ctx, kern, smem);
  if (e != STRATA_OK) return e;
  /* z chunks: enough blocks for two waves, each chunk at least max(4H, 8)
   * planes so the 2H planes of warm-up stay a small part */
  int occ = 0;
  STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                      &occ, kern, kThreads3d, smem));
  if (occ < 1) occ = 1;
  const long long xy = (long long)P.ntl[0] * P.ntl[1];
  const long long target = 2LL * occ * st->prop.multiProcessorCount;
  long long chunks = (target + xy - 1) / xy;
  const int minz = 4 * H > 8 ? 4 * H : 8;
  long long maxc = P.n[2] / minz;
  if (maxc < 1) maxc = 1;
  if (chunks > maxc) chunks = maxc;
  if (chunks < 1) chunks = 1;
  P.tile[2] = (int)((P.n[2] + chunks - 1) / chunks);
  P.ntl[2] = (P.n[2] + P.tile[2] - 1) / P.tile[2];
  const long long blocks = xy * P.ntl[2];
  if (blocks > 0x7fffffffLL)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "apply_fused: %lld tiles exceed the grid limit",
                        blocks);
  kern<<<(unsigned)blocks, kThreads3d, smem, st->stream>>>(P);
  STRATA__LAUNCHED(ctx, "apply_fused (2.5D streaming) kernel launch");
  return STRATA_OK;
}

} // namespace


strata_status strata__cuda_apply_fused(const strata_stencil *op,
                                       const strata_boundary *bc, int steps,
                                       const strata_field *in,
                                       strata_field *out, long k0, long k1) {
  strata_context *ctx = in->ctx;
  if (op->kind != STRATA_STENCIL_STAR &&
      op->kind != STRATA_STENCIL_BOX_SYMMETRIC)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "apply_fused: the CUDA engine fuses star and "
                        "symmetric 27-point stencils only");
  if (op->kind == STRATA_STENCIL_BOX_SYMMETRIC &&
      (in->d.dims != 3 || op->radius != 1))
    return strata__fail(ctx, STRATA_EINVAL,
                        "apply_fused: the symmetric 27-point box is 3D, "
                        "radius 1");
  if (op->radius < 1 || op->radius > STRATA_MAX_RADIUS)
    return strata__fail(ctx, STRATA_EINVAL,
                        "apply_fused: radius %d is outside 1..%d", op->radius,
                        STRATA_MAX_RADIUS);
  if (steps < 1 || in->d.ghost < op->radius * steps)
    return strata__fail(ctx, STRATA_EGHOST,
                        "apply_fused: %d fused steps of a radius-%d stencil "
                        "need ghost width %d, the field has %d",
                        steps, op->radius, op->radius * steps, in->d.ghost);
  for (int a = 0; a < 3; a++)
    if (in->d.n[a] > ((size_t)1 << 30))
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: the CUDA kernels take at most 2^30 "
                          "points per axis (axis %c has %zu)", "xyz"[a],
                          in->d.n[a]);
  const long n = (long)in->d.n[in->d.dims - 1];
  if (k0 < 0 || k1 > n || k0 >= k1)
    return strata__fail(ctx, STRATA_EINVAL,
                        "apply_fused: output planes [%ld, %ld) are not a "
                        "part of [0, %ld)", k0, k1, n);
  strata_status s = fz_device(ctx);
  if (s != STRATA_OK) return s;
  if (in->d.precision == STRATA_F32)
    return fused_typed<float>(op, bc, steps, in, out, k0, k1);
  return fused_typed<double>(op, bc, steps, in, out, k0, k1);
}
