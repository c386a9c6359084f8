/* apply_fused in 3D at radius 1: the register-tile kernels' shapes, their
 * tiles and the launcher that chooses (and on first use times) a shape. */
#include "heat/heat_internal.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

/* The shapes the launcher chooses from, in order of preference.  7-point:
 * 16 bytes a lane, one 1024-thread block or two 512-thread ones a
 * multiprocessor, or one 512-thread block of two rows a thread (W = 2).
 * 27-point box (103-124 registers at 16 bytes a lane: one 512-thread
 * block): also 8 bytes a lane in a 1024-thread block, and two rows a
 * thread in blocks of 512 or 384 threads. */
template <typename T> const tile3 *fz3_shapes(bool sym, int *n) {
  constexpr int VV = 16 / (int)sizeof(T);
  static const tile3 star[] = {{VV, 32, 32, 1}, {VV, 32, 16, 1},
                               {VV, 16, 32, 1}, {VV, 16, 16, 1},
                               {VV, 24, 16, 1}, {VV, 16, 32, 2},
                               {VV, 16, 16, 2}};
  static const tile3 box[] = {{VV, 16, 32, 1}, {VV, 16, 16, 1},
                              {VV / 2, 32, 32, 1}, {VV, 24, 16, 1},
                              {VV, 16, 32, 2}, {VV, 12, 32, 2}};
  *n = sym ? 6 : 7;
  return sym ? box : star;
}

/* Tiles of shape c for s fused steps: x tiles of LR V - 2 HP outputs, y
 * tiles as ytile places them (the pinned ghost row of a Dirichlet edge is
 * all an edge tile needs below or above it). */
template <typename T>
void fz3_tiles(fused_par<T> &P, const tile3 &c, int s) {
  const int HP = (s + c.V - 1) / c.V * c.V, NR = c.NW * 32 / c.LR * c.W;
  P.tile[0] = c.LR * c.V - 2 * HP;
  P.ntl[0] = (P.n[0] + P.tile[0] - 1) / P.tile[0];
  const int n = P.n[1];
  P.ycs0 = P.clo[1] - 1 > -s ? P.clo[1] - 1 : -s;
  P.yhin = P.chi[1] < n + s - 1 ? P.chi[1] : n + s - 1;
  P.ye0 = P.ycs0 + NR - s;
  P.tile[1] = NR - 2 * s;
  const int e1 = NR - s - (P.yhin - n + 1);
  if (P.yhin - P.ycs0 + 1 <= NR) {
    P.ntl[1] = 1;
  } else {
    const int rest = n - P.ye0 - e1;
    P.ntl[1] = 2 + (rest > 0 ? (rest + P.tile[1] - 1) / P.tile[1] : 0);
  }
}

template <typename T> fz_kern<T> fz3_kernel(bool sym, int s, const tile3 &c) {
  return sym ? strata_cuheat::fz3_kernel_box<T>(s, c)
             : strata_cuheat::fz3_kernel_reg<T>(s, c);
}

} // namespace

namespace strata_cuheat {

/* One shape of the 3D register-tile kernels on P: prepare() sets its
 * tiles, kernel, shared memory and the model's chunk length
 * (model_planes); launch() runs it with chunks of pl planes; timed() a
 * warm-up launch, then reps timed. */
template <typename T> struct fz3_run {
  strata_context *ctx;
  strata__cuda_state *st;
  fused_par<T> &P;
  bool sym;
  int s;
  fz_kern<T> kern = nullptr;
  size_t smem = 0;
  int nthr = 0, model_planes = 0;
  long long xy = 0;

  fz3_run(strata_context *c, fused_par<T> &p, bool sy, int steps)
      : ctx(c), st(strata__cu_state(c)), P(p), sym(sy), s(steps) {}

  strata_status prepare(const tile3 &sh) {
    fz3_tiles(P, sh, s);
    kern = fz3_kernel<T>(sym, s, sh);
    if (!kern)
      return strata__fail(ctx, STRATA_EINVAL,
                          "apply_fused: no 3D register-tile kernel for %d "
                          "steps", s);
    nthr = sh.NW * 32;
    /* two buffers of the s levels' planes and the input ring */
    smem = (size_t)nthr * sh.V * sh.W * sizeof(T) * (2 * s + PD3W);
    strata_status e = fz_smem_attr(ctx, kern, smem);
    if (e != STRATA_OK) return e;
    int occ = 0;
    STRATA__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                        &occ, kern, nthr, smem));
    if (occ < 1)
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: a %d-thread block with %zu bytes of "
                          "shared memory does not fit on %s", nthr, smem,
                          st->prop.name);
    xy = (long long)P.ntl[0] * P.ntl[1];
    if (xy > 0x7fffffffLL)
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: %lld tiles exceed the grid limit", xy);
    /* z chunks: the number that minimises waves x (planes a chunk + the
     * warm-up planes), the 2.5D kernels' model (strata__cu_zchunks) */
    const int chunks = strata__cu_zchunks(
        (int)xy, occ, st->prop.multiProcessorCount, P.n[2],
        sym ? 3 * s - 1 : 2 * s);
    model_planes = (P.n[2] + chunks - 1) / chunks;
    return STRATA_OK;
  }

  strata_status launch(int pl) {
    P.tile[2] = pl;
    P.ntl[2] = (P.n[2] + pl - 1) / pl;
    const long long blocks = xy * P.ntl[2];
    if (blocks > 0x7fffffffLL)
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply_fused: %lld tiles exceed the grid limit",
                          blocks);
    kern<<<(unsigned)blocks, nthr, smem, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "apply_fused (3D register tiles) kernel launch");
    return STRATA_OK;
  }

  strata_status timed(int pl, int reps, float *ms) {
    strata_status e = launch(pl);
    if (e != STRATA_OK) return e;
    STRATA__CU(ctx, cudaEventRecord(st->ev0, st->stream));
    for (int r = 0; r < reps; r++)
      if ((e = launch(pl)) != STRATA_OK) return e;
    STRATA__CU(ctx, cudaEventRecord(st->ev1, st->stream));
    STRATA__CU(ctx, cudaEventSynchronize(st->ev1));
    STRATA__CU(ctx, cudaEventElapsedTime(ms, st->ev0, st->ev1));
    return STRATA_OK;
  }
};

/* The shape (pick, or each of cand when pick < 0) and z chunk length
 * that run fastest, timed, kept on the context under key and launched. */
template <typename T>
strata_status fz3_tune(fz3_run<T> &run, const tile3 *cand, int ncand,
                       int pick, const int key[7]) {
  strata__cuda_state *st = run.st;
  const fused_par<T> &P = run.P;
  const int s = run.s;
  /* Autotuning: every shape (or the one asked for) with every chunk
   * length, the fastest kept.  Neither the thread count a multiprocessor
   * ranks the shapes nor does the chunk model see that a short last chunk
   * fills the gaps of the waves before it, so they are timed.  Each
   * candidate writes the same output, so the timing runs are harmless. */
  /* one pass over all (three launches each), then the three fastest
   * again with eight launches each (two-launch timings alone were too
   * noisy: their pick varied from one run to the next) */
  struct trial {
    int shape, planes;
    float ms;
  } lead[3];
  int nlead = 0;
  /* the clocks up first: ten launches of the first shape */
  for (int i = 0; i < ncand; i++) {
    if (pick >= 0 && i != pick) continue;
    strata_status e = run.prepare(cand[i]);
    if (e == STRATA_ENOTSUP) continue;
    if (e != STRATA_OK) return e;
    for (int r = 0; r < 10; r++)
      if ((e = run.launch(run.model_planes)) != STRATA_OK) return e;
    break;
  }
  for (int i = 0; i < ncand; i++) {
    if (pick >= 0 && i != pick) continue;
    strata_status e = run.prepare(cand[i]);
    if (e == STRATA_ENOTSUP) continue; /* does not fit this device */
    if (e != STRATA_OK) return e;
    int cpl[12], nc = 0;
    cpl[nc++] = run.model_planes;
    static const int fixed[] = {32, 48, 64, 80, 96, 128, 160, 192, 256};
    for (int q : fixed)
      if (q < P.n[2] && q != run.model_planes && q >= 4 * s) cpl[nc++] = q;
    for (int c = 0; c < nc; c++) {
      trial t = {i, cpl[c], 0};
      if ((e = run.timed(cpl[c], 3, &t.ms)) != STRATA_OK) return e;
      int at = nlead < 3 ? nlead++ : 3; /* insert sorted, keep three */
      while (at > 0 && lead[at - 1].ms > t.ms) {
        if (at < 3) lead[at] = lead[at - 1];
        at--;
      }
      if (at < 3) lead[at] = t;
    }
  }
  int best_shape = -1, best_planes = 0;
  float best_ms = 3.4e38f;
  for (int i = 0; i < nlead; i++) {
    strata_status e = run.prepare(cand[lead[i].shape]);
    if (e != STRATA_OK) return e;
    float ms = 0;
    if ((e = run.timed(lead[i].planes, 8, &ms)) != STRATA_OK) return e;
    if (ms < best_ms) {
      best_ms = ms;
      best_shape = lead[i].shape;
      best_planes = lead[i].planes;
    }
  }
  if (best_shape < 0) return run.prepare(cand[0]); /* the reason none fits */
  strata_status e = run.prepare(cand[best_shape]);
  if (e != STRATA_OK) return e;
  const int slot = st->nfz3 < 32 ? st->nfz3++ : 31;
  memcpy(st->fz3[slot].key, key, sizeof st->fz3[slot].key);
  st->fz3[slot].shape = best_shape;
  st->fz3[slot].planes = best_planes;
  return run.launch(best_planes);
}

/* The 3D radius-1 register-tile kernels (k_fused3d_reg, k_fused3d_box):
 * xy tiles streamed along z.  The tile shape and the z chunk length are
 * timed on first use for the sizes, steps and precision when autotuning is
 * on (and kept on the context); otherwise the shape that computes the
 * fewest points a plane and the chunks of strata__cu_zchunks.  Every
 * shape and chunk computes each point with the same operations in the same
 * order, so the choice never changes a result. */
template <typename T>
strata_status fused3d_reg(strata_context *ctx, fused_par<T> P, bool sym,
                          int s, const strata_field *in) {
  strata__cuda_state *st = strata__cu_state(ctx);
  const int ae = STRATA__ALIGN_BYTES / (int)sizeof(T);
  P.xsafe = (int)in->L.pitch_x - ae;
  P.yread = P.n[1] + in->d.ghost;
  P.zread = P.lread;
  int ncand = 0;
  const tile3 *cand = fz3_shapes<T>(sym, &ncand);

  fz3_run<T> run(ctx, P, sym, s);

  char shape[64];
  const char *env = strata__tuning(ctx, "fused3d_shape", shape, sizeof shape);
  int pick = -1;
  if (env) {
    int v = 0, nw = 0, lr = 0, w = 1; /* W 1 unless named */
    if (sscanf(env, "%d/%d/%d/%d", &v, &nw, &lr, &w) >= 3)
      for (int i = 0; i < ncand; i++)
        if (cand[i].V == v && cand[i].NW == nw && cand[i].LR == lr &&
            cand[i].W == w)
          pick = i;
    if (pick < 0)
      return strata__fail(ctx, STRATA_EINVAL,
                          "apply_fused: tuning fused3d_shape=%s is not one "
                          "of the 3D tile shapes (V/NW/LR[/W])", env);
  }
  const long fzp = strata__tuning_long(ctx, "fused3d_planes", 0);
  const int zpl = fzp > 0 && fzp < P.n[2] ? (int)fzp : fzp > 0 ? P.n[2] : 0;
  const int key[7] = {P.n[0], P.n[1], P.n[2], s, (int)sizeof(T), sym ? 1 : 0,
                      pick};
  if (ctx->autotune && zpl == 0)
    for (int i = 0; i < st->nfz3; i++)
      if (memcmp(st->fz3[i].key, key, sizeof key) == 0) {
        strata_status e = run.prepare(cand[st->fz3[i].shape]);
        return e != STRATA_OK ? e : run.launch(st->fz3[i].planes);
      }
  if (pick < 0 && (!ctx->autotune || zpl > 0)) {
    /* the fewest points computed a plane; ties keep the earlier shape */
    long long best = -1;
    for (int i = 0; i < ncand; i++) {
      fused_par<T> Q = P;
      fz3_tiles(Q, cand[i], s);
      const long long thr =
          (long long)Q.ntl[0] * Q.ntl[1] * cand[i].NW * 32 * cand[i].V *
          cand[i].W;
      if (best < 0 || thr < best) {
        best = thr;
        pick = i;
      }
    }
  }
  if (zpl > 0) {
    strata_status e = run.prepare(cand[pick]);
    return e != STRATA_OK ? e : run.launch(zpl);
  }
  if (!ctx->autotune) {
    strata_status e = run.prepare(cand[pick]);
    return e != STRATA_OK ? e : run.launch(run.model_planes);
  }
  return fz3_tune<T>(run, cand, ncand, pick, key);
}


template strata_status fused3d_reg<float>(strata_context *, fused_par<float>,
                                          bool, int, const strata_field *);
template strata_status fused3d_reg<double>(strata_context *,
                                           fused_par<double>, bool, int,
                                           const strata_field *);

} // namespace strata_cuheat
