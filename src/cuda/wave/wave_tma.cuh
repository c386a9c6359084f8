/* k_wavetma's geometry and the CPML tiles' parameters, shared by the kernel
 * (wave_tma_kernel.cuh) and its launcher (wave_tma_launch.cuh). */
#ifndef STRATA_CUDA_WAVE_TMA_CUH
#define STRATA_CUDA_WAVE_TMA_CUH

#include "cuda_tma.cuh"
#include "wave/wave_internal.cuh"

namespace {

/* B (3D, sm_90): k_wavev fed by tensor copies, in the manner of streamws
 * (ops/star_tma.cuh; its header states the ring's full / empty protocol).  A
 * block is BX x BY consumer threads (one 16-byte vector of one row each)
 * and a copying warpgroup (below).  Ring slot s holds, for plane p: the u tile with its
 * halo ((BX + 2 HV) V x BY + 2R, one box), and for p inside the chunk the
 * up tile and (a velocity field) the c2 tile of the block's own points
 * (BX V x BY, one box each), all completing on full[s].  At plane k the
 * consumers read the u tile of k (x and y neighbours), the front of the
 * queue from the tile of k + R, and up / c2 of k from k's slot; each warp
 * then arrives on empty[k's slot] and stores.  The z queue rotates between
 * named registers (the walk is unrolled 2R + 1 planes a trip), the point
 * update is k_wavev's (the CPU's order), and the CPML terms stay in
 * k_cpml_slab (added here, out of line for the vectors in a slab, the CPML
 * case was much slower: the calls' register saves), but for x slabs of
 * at most 32 points with their margins, whose terms the tiles that hold
 * them add in line (CX instances, radius 4: wt_cpml).  up is read
 * (u^{n-1}) by the copies and written (u^{n+1}) by the block at different
 * planes of its own columns, and no other block writes them (the odd
 * images go to ghosts, which are never stencil nodes), so the copy engine
 * never reads a value this kernel has changed.
 *
 * The copier is a whole warpgroup (one thread of it copies, the other
 * three warps leave), so that its registers can go back to the block's
 * pool (setmaxnreg, sm_90a): 640 threads launch with 96 registers, the
 * copying warpgroup drops to 24 and the 16 consumer warps rise to 112
 * (4 x 128 x 112 + 128 x 24 <= 640 x 96).  A single copier warp beside
 * 15 consumer warps kept 128 registers each but needed 35 tiles over 512
 * rows in place of 32, and a 17th warp beside 16 consumer warps would cap
 * them at 96 registers: both ran slower (docs/performance.md#acoustic-wave). */
constexpr int kWtX = 32; /* vectors along x a block */
constexpr int kWtConsumers = 512, kWtRegs = 112, kWtCopyRegs = 24;
/* the y CPML tiles (CY, below): at most 24 rows (a 20-point layer and
 * its R: 24 consumer warps and the copying warpgroup, 896 threads launch
 * with 72 registers, the consumers rise to 80) */
constexpr int kWtYRowsMax = 24, kWtYRegs = 80;

template <typename T, bool C2F, bool CY = false> struct wavetma_geo {
  /* CY tiles are 64 columns of 2-float vectors (their slots carry psi and
   * zeta of the tile's rows, and no up: each thread loads its up vector a
   * plane ahead) */
  static constexpr int V = CY ? 2 : 16 / (int)sizeof(T);
  /* 3 planes ahead; 2 with a velocity field (its tiles make the slots
   * larger: 7 of them fill 206 KB of shared memory in fp32) or in a CY
   * tile */
  static constexpr int A = C2F || CY ? 2 : 3;
  static constexpr int threads =
      CY ? 32 * kWtYRowsMax + 128 : kWtConsumers + 128;
  static constexpr int regs = CY ? kWtYRegs : kWtRegs;
};

/* The x CPML slabs inside k_wavetma (CX instances, R = 4).  An x slab's
 * psi and its correction lie in one row of one plane: psi = b psi + a D1 u
 * needs u at x +- R (the tile row the update has in shared memory already)
 * and D1 psi needs the new psi at x +- R.  When a slab's [lo - R, hi + R)
 * is at most 32 points and [lo, hi) lies inside one x tile (one side a
 * tile), that tile's copier also copies, with each plane it owns, psi and
 * zeta over [lo, hi) of the block's rows into the plane's ring slot (psi
 * is 0 outside the layer, strata__wave_slab, so its R points each side are
 * not read), and each warp (one row of the tile) works its row's
 * slab one point a lane (lane l: x = lo - R + l; wt_lane, wt_cpml_x),
 * hands each point's D1 psi + zeta to the lane whose vector holds it, and
 * that lane adds it to L after the Laplacian, as the CPU does, before the
 * update.  This replaces the x slabs' pass (k_cpml_slab), which re-read u,
 * up and c2 of the slab and moved psi over 64-byte DRAM granules.  psi of
 * the planes the walk skips (FREE or Mur z faces) is left to k_psi
 * (wave_typed). */
struct wt_cpml {
  CUtensorMap mp[2], mz[2]; /* psi and zeta of side s, box pw x BY, zw x BY */
  int tile[2];              /* blockIdx.x of side s's tile; -1: its pass */
  int pw[2], zw[2];         /* box widths (elements) */
  int bxp[2], bxz[2];       /* the boxes' first x (lo - R, lo) in the maps */
  int oy, oz;               /* map coordinates of interior (0, 0) */
  int apsz, azsz;           /* a slot's psi and zeta areas (elements) */
};

/* The y CPML slabs inside k_wavetma (CY instances: fp32, R = 4).  A y
 * slab's psi = b psi + a D1 u needs u at y +- R and D1 psi the new psi at
 * y +- R: both lie in one plane.  When a tile's rows are the slab's rows
 * (the low side's tile starts at row 0, the high side's ends at n[1];
 * BY = the slab's width rounded up to whole warpgroups, at most
 * kWtYRowsMax), the u tile with its R halo rows holds every u the new psi
 * needs, so the tile that owns those rows does the whole y CPML: its
 * copier copies, with each plane it owns, psi and zeta over the tile's
 * rows (psi's R rows each side, outside the layer, are 0 in every slot
 * from the start); each warp (a row) works its
 * row's new psi from the u tile into the slot (and global memory), the
 * consumers meet at a named barrier, and each warp then reads D1 psi
 * along y from the slot, updates zeta and adds D1 psi + zeta to L after
 * the x terms (the CPU's order).  Such a slot would not fit beside seven
 * others with 128 columns, so these tiles are 64 columns of 2-float
 * vectors and load their up (and c2) vectors a plane ahead themselves;
 * they run as a launch of their own on the context's side stream, beside
 * the launch of the rows between them (u is only read; the two write
 * apart), and the y slabs' pass (k_cpml_slab) is left out.  psi of the
 * planes the walk skips (FREE or Mur z faces) goes to k_psi (wave_typed).
 * The y tiles replace the y slabs' pass and shorten the launch of the
 * rows between them by more than they take.  (The FREE-face instances
 * spill at 80 registers, on the planes near the face, and still gain.)
 * The z slabs the same way (CY == 2): the same tiles on wave_yz's view,
 * rows = the slab's planes, walking along y over every row (no FREE y
 * face), the other launches walking the planes between; the y slabs'
 * planes there (the corners) get their pass, on the side stream after the
 * tiles, and the z slabs' pass is gone (docs/performance.md#acoustic-wave). */
struct wt_cpmly {
  CUtensorMap mp[2], mz[2]; /* psi and zeta of tile row b: boxes of 64 x
                               BY + 2R and 64 x BY */
  int y0[2];                /* tile row b's first row */
  int sl[2];                /* its slab (2: low y, 3: high y) */
  int bxp, bxz;             /* map x of interior x = 0 (psi, zeta) */
  int byp[2], byz[2];       /* map y of the boxes' first rows */
  int oz;                   /* map z of interior z = 0 */
  int apsz, azsz;           /* a slot's psi and zeta areas (elements) */
};

} // namespace

#endif
