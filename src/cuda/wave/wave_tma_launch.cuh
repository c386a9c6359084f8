/* B of the wave step in 3D on sm_90: the launches of k_wavetma and of its
 * y and z CPML tiles.  See wave_step.cu for the phases.  Included once per
 * precision (wave_tma_f32.cu, wave_tma_f64.cu), so the two halves of the
 * kernel's instances compile side by side. */
#ifndef STRATA_CUDA_WAVE_TMA_LAUNCH_CUH
#define STRATA_CUDA_WAVE_TMA_LAUNCH_CUH

#include "wave/wave_tma_kernel.cuh"

#include <string.h>

#include <type_traits>
#include <utility>

namespace {

using namespace strata_cuwave;

/* The tensor map of field f's whole allocation with a TW x TH x 1 box, and
 * the allocation coordinates of its interior point (0, 0, 0); yz: y and z
 * swapped in both (the z CPML tiles' view, wave_yz). */
strata_status wt_map(strata_context *ctx, const strata_field *f, size_t es,
                     int TW, int TH, int promote, CUtensorMap *tm,
                     int3 *org, bool yz = false) {
  unsigned long long ext[3];
  int o[3];
  strata__cu_alloc_geom(f, ext, o);
  *org = yz ? make_int3(o[0], o[2], o[1]) : make_int3(o[0], o[1], o[2]);
  return strata__cu_tensor_map(ctx, f->data, es, ext, TW, TH, promote,
                               "wave step (tensor copies)", tm, yz);
}

/* The wave step's parameters with y and z swapped: a kernel that walks
 * "z" then walks y, and its tiles' rows are planes.  Every address the
 * update computes comes from these strides and sizes, so k_wavetma runs
 * on it unchanged but for the c2 line (indexed by the last axis: the
 * tile's row then, CY == 2).  The sums keep their terms, the Laplacian's
 * y and z pairs and the sponge's y and z damping change places (the same
 * results to rounding; the damping's y + z is the same sum). */
template <typename T> wave_par<T> wave_yz(const wave_par<T> &P) {
  using std::swap;
  wave_par<T> Q = P;
  swap(Q.sy, Q.sz);
  swap(Q.n[1], Q.n[2]);
  swap(Q.s0[1], Q.s0[2]);
  swap(Q.s1[1], Q.s1[2]);
  swap(Q.damp[1], Q.damp[2]);
  swap(Q.pa[1], Q.pa[2]);
  swap(Q.pb[1], Q.pb[2]);
  swap(Q.ffree[1], Q.ffree[2]);
  swap(Q.slab[2], Q.slab[4]);
  swap(Q.slab[3], Q.slab[5]);
  for (int sl = 0; sl < 6; sl++) swap(Q.slab[sl].psy, Q.slab[sl].psz);
  return Q;
}

/* The maps of one tile shape (TWm x THm u tiles, PWm x BYm up and c2
 * tiles).  u with 128-byte L2 promotion, except in the first and last
 * tiles of a row (tue: their outer halo's line holds only ghosts and
 * padding; docs/performance.md, the wave step). */
struct wt_maps {
  CUtensorMap tu, tue, tp, tc;
  int3 ou, op, oc;
};

/* The y or z CPML tiles of one axis (see wt_cpmly): their parameters, x
 * CPML sides, maps, the sides taken (f, bits), tile rows (nt), rows a tile
 * (BY) and shared memory. */
struct wt_side {
  wt_cpmly cy;
  wt_cpml cx;
  wt_maps m;
  int f, nt, BY;
  size_t bytes;
};

/* One step's launches of k_wavetma (launch_wavetma below): plan() chooses
 * what goes inside the update and makes the maps, run_sides() launches the
 * y and z CPML tiles, run_main() the update of the rows and planes between
 * them. */
template <typename T, int R> struct wt_launcher {
  static constexpr int V = 16 / (int)sizeof(T), HV = (R + V - 1) / V;
  static constexpr int BY = kWtConsumers / kWtX; /* 16 rows */
  static constexpr int threads = kWtX * BY + 128; /* and the copier */
  strata_context *ctx;
  strata__cuda_state *st;
  const wave_par<T> &P;
  const strata__wave_args *a;
  const wave_par<T> Q; /* wave_yz's view: the z tiles' */
  wave_par<T> Pm;      /* the main launch's planes */
  bool c2f = false, cxon = false, forked = false, sideran = false;
  size_t bytes = 0, cbytes = 0; /* the main launch's shared memory */
  long long gx = 0, gy = 0;
  int xf = 0, wz0 = 0, wz1 = 0, ya = 0, yb = 0;
  wt_maps mm;
  wt_cpml cx;
  wt_side ys, zs;
  /* a driver without the encoder (or a map it refuses) leaves k_wavev to
   * do the step (or a CPML slab to its pass): no error, and the context's
   * message as it was */
  strata__kept_error kept;
  const char *cant = "wave step: the tensor-copy update cannot be resident "
                     "after its CPML tiles ran";

  wt_launcher(strata_context *c, strata__cuda_state *s, const wave_par<T> &p,
              const strata__wave_args *args)
      : ctx(c), st(s), P(p), a(args), Q(wave_yz(p)), Pm(p) {}

  /* a refused map: the context's message as it was */
  void unrefuse() { strata__error_restore(ctx, &kept); }

  bool make_maps(int TWm, int THm, int PWm, int BYm, wt_maps &m,
                 bool yz = false) {
    strata_status s =
        wt_map(ctx, a->u, sizeof(T), TWm, THm, 128, &m.tu, &m.ou, yz);
    if (s == STRATA_OK)
      s = wt_map(ctx, a->u, sizeof(T), TWm, THm, 0, &m.tue, &m.ou, yz);
    if (s == STRATA_OK)
      s = wt_map(ctx, a->up, sizeof(T), PWm, BYm, 0, &m.tp, &m.op, yz);
    if (s == STRATA_OK && c2f)
      s = wt_map(ctx, a->c2, sizeof(T), PWm, BYm, 0, &m.tc, &m.oc, yz);
    if (s != STRATA_OK) {
      unrefuse();
      return false;
    }
    if (!c2f) {
      m.tc = m.tp;
      m.oc = m.op;
    }
    return true;
  }

  /* the x CPML slabs that go inside the update (see wt_cpml) for tiles of
   * XT columns, BYm rows and Vm-element vectors: one side a tile (the lo
   * side when both share one), a slab of at most 32 points with its
   * margins, and its maps (yz: wave_yz's view); the sides done come back
   * as bits */
  int make_cx(int XT, int BYm, int Vm, wt_cpml &c, bool yz = false) {
    memset(&c, 0, sizeof c);
    c.tile[0] = c.tile[1] = -1;
    int f = 0;
    for (int sd = 0; cxon && sd < 2; sd++) {
      const wave_slab<T> &W = P.slab[sd];
      const strata__wave_slab *S = &a->slab[0][sd];
      if (!W.psi || W.hi <= W.lo || W.lo < 0 || W.hi > P.n[0]) continue;
      const int t = W.lo / XT, wl = W.hi - W.lo;
      if ((W.hi - 1) / XT != t || wl + 2 * R > 32 || t == c.tile[0]) continue;
      if (S->psi->L.pitch_x * sizeof(T) % 16 != 0) continue;
      /* whole vectors, and boxes whose rows are whole 16-byte units (the
       * encoder refuses others: 2-float vectors of the y and z tiles) */
      const int VA = Vm * (int)sizeof(T) < 16 ? 16 / (int)sizeof(T) : Vm;
      /* psi over the layer only: outside it psi is 0 (strata__wave_slab) */
      const int pw = (wl + VA - 1) / VA * VA, zw = pw;
      CUtensorMap mp, mz;
      int3 po, zo;
      strata_status s =
          wt_map(ctx, S->psi, sizeof(T), pw, BYm, 0, &mp, &po, yz);
      if (s == STRATA_OK)
        s = wt_map(ctx, S->zeta, sizeof(T), zw, BYm, 0, &mz, &zo, yz);
      if (s != STRATA_OK) { /* its pass then */
        unrefuse();
        continue;
      }
      c.mp[sd] = mp;
      c.mz[sd] = mz;
      c.tile[sd] = t;
      c.pw[sd] = pw;
      c.zw[sd] = zw;
      c.bxp[sd] = po.x + W.lo - W.origin;
      c.bxz[sd] = zo.x + W.lo - W.origin;
      c.oy = po.y;
      c.oz = po.z;
      const int pe = tma_slot_elems<T>(pw, BYm), ze = tma_slot_elems<T>(zw, BYm);
      if (pe > c.apsz) c.apsz = pe;
      if (ze > c.azsz) c.azsz = ze;
      f |= 1 << sd;
    }
    return f;
  }

  /* the y and z CPML slabs that go inside the update (see wt_cpmly):
   * fp32, radius 4, no FREE x face kept in the kernel (the CY instances
   * leave out its images); a side whose slab starts at 0 (ends at n) and
   * is at most kWtYRowsMax wide; both sides of an axis in one launch of
   * tiles of BY rows (the wider slab's in whole warpgroups), whose x CPML
   * sides must be the other tiles'.  The z slabs' tiles are the same
   * kernel on wave_yz's view (CY == 2): their rows are planes and they
   * walk along y, so they need every row walked (no FREE y face). */
  void make_side(const wave_par<T> &Pp, int ax, bool on, wt_side &o) {
    memset(&o, 0, sizeof o);
    if constexpr (R == 4 && sizeof(T) == 4) {
      const bool yz = ax == 2;
      constexpr int VY = wavetma_geo<T, false, true>::V;
      constexpr int NSY = R + 1 + wavetma_geo<T, false, true>::A;
      int want = 0, BYc = 0;
      for (int sd = 0; on && sd < 2; sd++) {
        const wave_slab<T> &W = Pp.slab[2 + sd];
        const strata__wave_slab *S = &a->slab[ax][sd];
        if (!W.psi || W.hi <= W.lo) continue;
        if (sd == 0 ? W.lo != 0 : W.hi != Pp.n[1]) continue;
        const int wl = (W.hi - W.lo + 3) / 4 * 4;
        if (wl > kWtYRowsMax) continue;
        /* 8-byte vector stores of psi; 16-byte rows for the maps */
        if (S->psi->L.pitch_x * sizeof(T) % 16 != 0 ||
            (uintptr_t)W.psi % 8 != 0 || W.psy % 2 != 0 || W.psz % 2 != 0)
          continue;
        if (wl > BYc) BYc = wl;
        want |= 1 << sd;
      }
      /* the two tile rows must not meet */
      if (want && (want & 1 ? BYc : 0) >= (want & 2 ? Pp.n[1] - BYc : Pp.n[1]))
        want = 0;
      const int TWc = (kWtX + 2 * ((R + VY - 1) / VY)) * VY;
      if (!want || !make_maps(TWc, BYc + 2 * R, kWtX * VY, BYc, o.m, yz))
        return;
      for (int sd = 0; sd < 2; sd++) {
        if (!(want >> sd & 1)) continue;
        const wave_slab<T> &W = Pp.slab[2 + sd];
        const strata__wave_slab *S = &a->slab[ax][sd];
        CUtensorMap mp, mz;
        int3 po, zo;
        strata_status s = wt_map(ctx, S->psi, sizeof(T), kWtX * VY, BYc, 0,
                                 &mp, &po, yz);
        if (s == STRATA_OK)
          s = wt_map(ctx, S->zeta, sizeof(T), kWtX * VY, BYc, 0, &mz, &zo,
                     yz);
        if (s != STRATA_OK) {
          unrefuse();
          o.f = 0;
          return;
        }
        const int y0 = sd == 0 ? 0 : Pp.n[1] - BYc;
        o.cy.mp[o.nt] = mp;
        o.cy.mz[o.nt] = mz;
        o.cy.y0[o.nt] = y0;
        o.cy.sl[o.nt] = 2 + sd;
        o.cy.bxp = po.x;
        o.cy.bxz = zo.x;
        o.cy.byp[o.nt] = po.y + y0 - W.origin;
        o.cy.byz[o.nt] = zo.y + y0 - W.origin;
        o.cy.oz = po.z;
        o.nt++;
        o.f |= 1 << sd;
      }
      o.BY = BYc;
      o.cy.apsz = tma_slot_elems<T>(kWtX * VY, BYc + 2 * R);
      o.cy.azsz = tma_slot_elems<T>(kWtX * VY, BYc);
      /* the corners: these tiles must do the x sides the others do */
      const int xfy = make_cx(kWtX * VY, BYc, VY, o.cx, yz);
      const size_t sloty = (size_t)tma_slot_elems<T>(TWc, BYc + 2 * R) +
                           o.cx.apsz + o.cx.azsz + o.cy.apsz + o.cy.azsz;
      o.bytes = NSY * sloty * sizeof(T) + 2 * NSY * sizeof(uint64_t);
      if ((xfy & xf) != xf || o.bytes > st->prop.sharedMemPerBlockOptin)
        o.f = 0;
      else
        for (int sd = 0; sd < 2; sd++) /* a side the others leave to its pass */
          if (!(xf >> sd & 1)) o.cx.tile[sd] = -1;
      if (!o.f) o.nt = 0;
    }
  }

  /* What the step takes in and where (cover: see launch_wavetma): 0 the
   * kernel cannot run here, 1 nothing to update, 2 ready to launch. */
  int plan(int cover[4]) {
    if (sv_tuning_is(ctx, "wave_kernel", "wavev")) return 0;
    if (st->prop.major < 9) return 0;
    const strata_field *fs[3] = {a->u, a->up, a->c2};
    for (int f = 0; f < 3; f++)
      if (fs[f] && fs[f]->L.pitch_x * sizeof(T) % 16 != 0) return 0;
    c2f = P.c2 != NULL;
    const int A = c2f ? wavetma_geo<T, true>::A : wavetma_geo<T, false>::A;
    const int NS = R + 1 + A;
    const int TW = (kWtX + 2 * HV) * V, TH = BY + 2 * R;
    const size_t slot = (size_t)tma_slot_elems<T>(TW, TH) +
                        (size_t)(c2f ? 2 : 1) * tma_slot_elems<T>(kWtX * V, BY);
    bytes = NS * slot * sizeof(T) + 2 * NS * sizeof(uint64_t);
    if (bytes > st->prop.sharedMemPerBlockOptin) return 0;
    gx = ((P.n[0] + V - 1) / V + kWtX - 1) / kWtX;
    if ((P.n[1] + BY - 1) / BY > 65535 || gx > 0x7fffffffLL) return 0;
    const int nzs = P.s1[2] - P.s0[2];
    if (nzs <= 0 || P.s1[0] <= P.s0[0] || P.s1[1] <= P.s0[1])
      return 1; /* no stencil nodes */
    strata__error_keep(ctx, &kept);
    if (!make_maps(TW, TH, kWtX * V, BY, mm)) return 0;
    cxon = R == 4 && (P.slab[0].psi != NULL || P.slab[1].psi != NULL);
    if (sv_tuning_is(ctx, "wave_cpmlx", "pass")) cxon = false;
    xf = make_cx(kWtX * V, BY, V, cx);
    cbytes = bytes + (size_t)NS * (cx.apsz + cx.azsz) * sizeof(T);
    if (!xf || cbytes > st->prop.sharedMemPerBlockOptin) {
      xf = 0;
      cx.tile[0] = cx.tile[1] = -1;
      cx.apsz = cx.azsz = 0;
      cbytes = bytes;
    }
    const bool noxfree = !(P.inface && (P.ffree[0][0] || P.ffree[0][1]));
    bool cyon = noxfree, czon = noxfree && P.s0[1] == 0 && P.s1[1] == P.n[1];
    if (sv_tuning_is(ctx, "wave_cpmly", "pass")) cyon = false;
    if (sv_tuning_is(ctx, "wave_cpmlz", "pass")) czon = false;
    make_side(P, 1, cyon, ys);
    make_side(Q, 2, czon, zs);
    /* the planes the other launches walk: those the z tiles leave */
    wz0 = P.s0[2];
    wz1 = P.s1[2];
    if (zs.f) {
      if (zs.f & 1 && zs.BY > wz0) wz0 = zs.BY;
      if (zs.f & 2 && P.n[2] - zs.BY < wz1) wz1 = P.n[2] - zs.BY;
      if (wz0 >= wz1) {
        zs.f = zs.nt = 0;
        wz0 = P.s0[2];
        wz1 = P.s1[2];
      }
    }
    Pm.s0[2] = wz0;
    Pm.s1[2] = wz1;
    ya = ys.f & 1 ? ys.BY : 0;
    yb = ys.f & 2 ? P.n[1] - ys.BY : P.n[1];
    gy = (yb - ya + BY - 1) / BY;
    cover[0] = wz0;
    cover[1] = wz1;
    cover[2] = zs.f & 1 ? zs.BY : 0;
    cover[3] = zs.f & 2 ? P.n[2] - zs.BY : P.n[2];
    return 2;
  }

  /* One launch of kern over the planes of Pl; kind: 0 the main launch, 1
   * the y tiles, 2 the z tiles (their walk along y).  *ran = false when the
   * kernel cannot be resident (nothing launched). */
  template <typename K>
  strata_status launch(K kern, const wave_par<T> &Pl, const wt_maps &m,
                       const wt_cpml &cxl, const wt_cpmly &cyl,
                       long long tiles_x, long long tiles_y, int nthreads,
                       size_t nbytes, int BYl, cudaStream_t strm, int kind,
                       bool *ran) {
    *ran = false;
    const int nzl = Pl.s1[2] - Pl.s0[2];
    STRATA__CU(ctx, cudaFuncSetAttribute(
                        kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                        (int)nbytes));
    int per_sm = 0;
    STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                        &per_sm, kern, nthreads, nbytes));
    if (per_sm < 1) return STRATA_OK; /* cannot be resident: not launched */
    int chunks = strata__cu_zchunks((int)(tiles_x * tiles_y), per_sm,
                                    st->prop.multiProcessorCount, nzl, 2 * R);
    /* and chunks of at most 36 planes (the tuning switch wave_zcap sets the
     * cap): short chunks balance the multiprocessors' loads better than the
     * model's wave count says (docs/performance.md, the wave step) */
    const long zc = strata__tuning_long(ctx, "wave_zcap", 36);
    const int zcap = zc < 1 ? 36 : zc > 65535 ? 65535 : (int)zc;
    if (chunks < (nzl + zcap - 1) / zcap) chunks = (nzl + zcap - 1) / zcap;
    /* the y and z CPML tiles (beside the other launch): at most 32 planes a
     * chunk (the z tiles' walk along y) */
    if (kind && chunks < (nzl + 31) / 32) chunks = (nzl + 31) / 32;
    const int zchunk = (nzl + chunks - 1) / chunks;
    dim3 grid((unsigned)tiles_x, (unsigned)tiles_y,
              (unsigned)((nzl + zchunk - 1) / zchunk));
    kern<<<grid, nthreads, nbytes, strm>>>(
        m.tu, m.tue, m.tp, m.tc, Pl, cxl, cyl, P.lap[0] * (T)3, zchunk, BYl,
        ya, yb, m.ou, m.op, m.oc);
    STRATA__LAUNCHED(ctx, "wave step: tensor-copy update kernel launch");
    *ran = true;
    return STRATA_OK;
  }

  /* the side stream joins the main one after the main launch, or on the
   * way out after an error: nothing later on the main stream may run
   * beside the y tiles */
  strata_status join(strata_status sr) {
    if (!forked) return sr;
    forked = false;
    cudaError_t e = cudaEventRecord(st->side_join, st->side);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(st->stream, st->side_join, 0);
    if (e != cudaSuccess && sr == STRATA_OK)
      sr = strata__cuda_fail(ctx, e, "wave step: joining the side stream",
                             __FILE__, __LINE__);
    return sr;
  }

  /* The CPML tiles of axis ax (o), their walk cut where they must write
   * the FREE faces' images; *stop: the step ends here with the status
   * returned (an error, or STRATA_OK for k_wavev when nothing ran yet). */
  strata_status run_side(const wt_side &o, int ax, bool *stop) {
    const long long gxy = ((P.n[0] + 1) / 2 + kWtX - 1) / kWtX;
    const wave_par<T> &Pv = ax == 2 ? Q : Pm;
    /* With FREE faces kept in the kernel (inface) the tiles write images
     * only on the walk's planes within R of a FREE face of the walk's
     * axis, or on every plane when their rows come within R of a FREE face
     * of the rows' axis (no FREE x face here).  The walk is cut into
     * planes [cut[0], cut[1]) and [cut[2], cut[3]) with the images
     * (FF == 1) and [cut[1], cut[2]) without (FF == 2): in the images'
     * instances their out-of-line call spills, which costs the other
     * planes much (docs/performance.md, the wave step).  Without inface,
     * one walk (FF == 0). */
    int cut[4] = {Pv.s0[2], Pv.s0[2], Pv.s1[2], Pv.s1[2]};
    if (P.inface) {
      bool rows = false;
      for (int t = 0; t < o.nt; t++) {
        const int r0 = o.cy.y0[t], r1 = r0 + o.BY - 1;
        if ((Pv.ffree[1][0] && r0 <= R) ||
            (Pv.ffree[1][1] && r1 >= Pv.n[1] - 1 - R))
          rows = true;
      }
      if (rows) {
        cut[1] = cut[2] = cut[3];
      } else {
        if (Pv.ffree[2][0] && cut[1] < R + 1)
          cut[1] = R + 1 < cut[3] ? R + 1 : cut[3];
        if (Pv.ffree[2][1] && cut[2] > Pv.n[2] - 1 - R)
          cut[2] = Pv.n[2] - 1 - R > cut[1] ? Pv.n[2] - 1 - R : cut[1];
      }
    }
    for (int part = 0; part < 3; part++) {
      if (cut[part] >= cut[part + 1]) continue;
      wave_par<T> Pl = Pv;
      Pl.s0[2] = cut[part];
      Pl.s1[2] = cut[part + 1];
      bool ran = false;
      auto tl = [&](auto ffc, auto cyc) -> strata_status {
        constexpr int FFv = decltype(ffc)::value, CYv = decltype(cyc)::value;
        auto go = [&](auto kern) -> strata_status {
          return launch(kern, Pl, o.m, o.cx, o.cy, gxy, o.nt,
                        kWtX * o.BY + 128, o.bytes, o.BY,
                        forked ? st->side : st->stream, ax, &ran);
        };
        return c2f ? go(k_wavetma<T, R, FFv, true, true, CYv>)
                   : go(k_wavetma<T, R, FFv, false, true, CYv>);
      };
      const int ffv = !P.inface ? 0 : part == 1 ? 2 : 1;
      typedef std::integral_constant<int, 0> I0;
      typedef std::integral_constant<int, 1> I1;
      typedef std::integral_constant<int, 2> I2;
      strata_status sy;
      if (ax == 2)
        sy = ffv == 0 ? tl(I0(), I2()) : ffv == 1 ? tl(I1(), I2())
                                                  : tl(I2(), I2());
      else
        sy = ffv == 0 ? tl(I0(), I1()) : ffv == 1 ? tl(I1(), I1())
                                                  : tl(I2(), I1());
      if (sy != STRATA_OK) {
        *stop = true;
        return sy;
      }
      if (!ran) { /* k_wavev then, if nothing ran yet */
        *stop = true;
        return sideran ? strata__fail(ctx, STRATA_EDEVICE, "%s", cant)
                       : STRATA_OK;
      }
      sideran = true;
    }
    return STRATA_OK;
  }

  /* The z and y CPML tiles first, launches of their own (64-column tiles)
   * on the side stream, forked from the main stream and joined to it after
   * the rows between them: the launches share the multiprocessors (their
   * points are apart; all only read u).  The tuning switch wave_cpmly=serial
   * puts them on the main stream before the others.  *stop as run_side's
   * (the side stream not joined yet). */
  strata_status run_sides(bool *stop) {
    if (!(ys.f || zs.f)) return STRATA_OK;
    const bool serial = sv_tuning_is(ctx, "wave_cpmly", "serial");
    if (!serial && !st->side) {
      /* default priority (the highest or the lowest for the side stream
       * measured slower) */
      STRATA__CU(ctx, cudaStreamCreateWithFlags(&st->side,
                                                cudaStreamNonBlocking));
      STRATA__CU(ctx, cudaEventCreateWithFlags(&st->side_fork,
                                               cudaEventDisableTiming));
      STRATA__CU(ctx, cudaEventCreateWithFlags(&st->side_join,
                                               cudaEventDisableTiming));
    }
    if (!serial) {
      STRATA__CU(ctx, cudaEventRecord(st->side_fork, st->stream));
      STRATA__CU(ctx, cudaStreamWaitEvent(st->side, st->side_fork, 0));
      forked = true;
    }
    for (int ax = 2; ax >= 1; ax--) {
      const wt_side &o = ax == 2 ? zs : ys;
      if (!o.f) continue;
      const strata_status s = run_side(o, ax, stop);
      if (*stop) return s;
    }
    /* the y slabs' planes the y tiles did not walk (the z tiles', and
     * those of FREE z faces): their pass over those planes, psi and the
     * correction where they are stencil nodes, after the z tiles (which
     * wrote up there) and beside the main launch, apart from its points */
    for (int sd = 0; ys.f && sd < 2; sd++) {
      if (!(ys.f >> sd & 1) || wz1 - wz0 >= P.n[2]) continue;
      const int pair = sd == 0 && ys.f == 3 && slab_pairs(P, 2);
      const strata_status sp =
          slab_pass<T>(ctx, forked ? st->side : st->stream, P, R, 2 + sd,
                       pair, wz0, wz1 - wz0);
      if (sp != STRATA_OK) {
        *stop = true;
        return sp;
      }
      sd += pair;
    }
    return STRATA_OK;
  }

  /* The update of the rows and planes between the CPML tiles. */
  template <typename K>
  strata_status run_main(K kern, bool *used, int *fused) {
    bool ran = false;
    const strata_status sm_ =
        launch(kern, Pm, mm, cx, ys.cy, gx, gy, threads, cbytes, BY,
               st->stream, 0, &ran);
    if (sm_ != STRATA_OK) return sm_;
    if (!ran) {
      if (sideran) /* the step cannot fall back now */
        return strata__fail(ctx, STRATA_EDEVICE, "%s", cant);
      return STRATA_OK;
    }
    *used = true;
    *fused = xf | ys.f << 2 | zs.f << 4;
    return STRATA_OK;
  }

  /* run_main with the instance of the faces, velocity field and x CPML */
  strata_status run_main_instance(bool *used, int *fused) {
    if constexpr (R == 4) /* the x CPML instances (only radius 4 has them) */
      if (xf) {
        if (P.inface)
          return c2f ? run_main(k_wavetma<T, R, true, true, true, 0>, used,
                                fused)
                     : run_main(k_wavetma<T, R, true, false, true, 0>, used,
                                fused);
        return c2f ? run_main(k_wavetma<T, R, false, true, true, 0>, used,
                              fused)
                   : run_main(k_wavetma<T, R, false, false, true, 0>, used,
                              fused);
      }
    if (P.inface)
      return c2f ? run_main(k_wavetma<T, R, true, true, false, 0>, used, fused)
                 : run_main(k_wavetma<T, R, true, false, false, 0>, used,
                            fused);
    return c2f ? run_main(k_wavetma<T, R, false, true, false, 0>, used, fused)
               : run_main(k_wavetma<T, R, false, false, false, 0>, used,
                          fused);
  }
};

/* Launches k_wavetma; *used = false (nothing launched) when this device or
 * these fields cannot take it (compute capability below 9.0, a row pitch
 * that is not a multiple of 16 bytes, not enough shared memory, a grid too
 * tall, no tensor map): the caller then runs k_wavev.  The tuning switch
 * wave_kernel=wavev forces that.  *fused: bit sl set when CPML slab sl
 * (axis * 2 + side) is done inside the update: x slabs (wt_cpml; R = 4,
 * the slab inside one x tile, its maps and shared memory possible;
 * wave_cpmlx=pass leaves both to k_cpml_slab) and y slabs (wt_cpmly;
 * wave_cpmly=pass leaves them to their pass, =serial runs their tiles on
 * the main stream before the other rows) and z slabs (the same tiles on
 * wave_yz's view, walking along y; wave_cpmlz=pass leaves them to their
 * pass).  cover[0..1]: the planes [cover[0], cover[1]) the x and y CPML
 * terms inside the update got, cover[2..3]: the z tiles' planes
 * [0, cover[2]) and [cover[3], n[2]) (where those terms, but y's, were done
 * as well). */
template <typename T, int R>
strata_status launch_wavetma(strata_context *ctx, strata__cuda_state *st,
                             const wave_par<T> &P, const strata__wave_args *a,
                             bool *used, int *fused, int cover[4]) {
  *used = false;
  *fused = 0;
  cover[0] = P.s0[2];
  cover[1] = P.s1[2];
  cover[2] = 0;
  cover[3] = P.n[2];
  wt_launcher<T, R> L(ctx, st, P, a);
  const int pl = L.plan(cover);
  if (pl != 2) {
    *used = pl == 1;
    return STRATA_OK;
  }
  bool stop = false;
  if constexpr (R == 4 && sizeof(T) == 4) {
    const strata_status s = L.run_sides(&stop);
    if (stop || s != STRATA_OK) return L.join(s);
  }
  return L.join(L.run_main_instance(used, fused));
}

} // namespace

namespace strata_cuwave {

template <typename T>
strata_status launch_tma(strata_context *ctx, strata__cuda_state *st,
                         const wave_par<T> &P, const strata__wave_args *a,
                         int R, bool *used, int *fused, int cover[4]) {
  switch (R) {
  case 1: return launch_wavetma<T, 1>(ctx, st, P, a, used, fused, cover);
  case 2: return launch_wavetma<T, 2>(ctx, st, P, a, used, fused, cover);
  case 3: return launch_wavetma<T, 3>(ctx, st, P, a, used, fused, cover);
  case 4: return launch_wavetma<T, 4>(ctx, st, P, a, used, fused, cover);
  default: return STRATA_OK;
  }
}

} // namespace strata_cuwave

#endif
