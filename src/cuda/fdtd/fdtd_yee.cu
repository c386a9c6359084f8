/* The Yee TM step (the FDTD solver): H half step, ghost copies (periodic
 * H, Ez^n next to Mur faces), E step with CPML, sources, Mur boundary
 * nodes, periodic Ez ghosts: six kernels in that order, the last four only
 * when needed.  The contract is strata__yee_args (src/core/internal.h);
 * the oracle is the CPU engine (src/cpu/cpu_solvers.inc), whose
 * expressions these kernels follow term for term (nvcc may contract a
 * multiply and an add into one FMA: the engines agree to rounding). */
#include "solver_common.cuh"
#include "core/point.h"

#include <string.h>

namespace {

template <typename T> __global__ void k_sources(T *up, src_list<T> s) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (int q = 0; q < s.n; q++) up[s.off[q]] += s.val[q];
}

template <typename T> struct yee_par {
  T *ez, *hx, *hy;          /* interior (0,0) of each (one layout) */
  T *pezx, *pezy, *phxy, *phyx;
  const double *pa[2], *pb[2], *pah[2], *pbh[2];
  long long sy;
  int n0, n1;
  int hr0, hr1;             /* H ranges: n (periodic) or n - 1 */
  int e0x, e1x, e0y, e1y;   /* E ranges */
  int lo[2][2], hi[2][2];   /* PML index ranges [axis][side] */
  int face[4];
  int perx, pery;
  T ce, ch, mur;
};

/* H half step: one thread per (i, j) of [0, n0) x [0, n1). */
template <typename T>
__global__ void __launch_bounds__(256) k_yee_h(const yee_par<T> P) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= P.n0) return;
  for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < P.n1;
       j += gridDim.y * blockDim.y) {
    const long long o = i + (long long)j * P.sy;
    const T *e = P.ez + o;
    if (j < P.hr1) {
      const T dy = e[P.sy] - e[0];
      T h = P.hx[o];
      h = strata__pt_yee_hx(h, P.ch, dy);
      if (P.phxy && P.pah[1][j] != 0.0) {
        const T ac = (T)P.pah[1][j], bc = (T)P.pbh[1][j];
        T ps = strata__pt_cpml_psi(bc, ac, P.phxy[o], dy);
        P.phxy[o] = ps;
        h = strata__pt_yee_hx(h, P.ch, ps);
      }
      P.hx[o] = h;
    }
    if (i < P.hr0) {
      const T dx = e[1] - e[0];
      T h = P.hy[o];
      h = strata__pt_yee_hy(h, P.ch, dx);
      if (P.phyx)
        for (int side = 0; side < 2; side++) {
          const int hi = P.hi[0][side] < P.hr0 ? P.hi[0][side] : P.hr0;
          if (i >= P.lo[0][side] && i < hi) {
            /* point.h's cpml_psi, written out: through the call nvcc
             * orders this loop's loads differently (other machine code) */
            T ps = (T)P.pbh[0][i] * P.phyx[o] + (T)P.pah[0][i] * dx;
            P.phyx[o] = ps;
            h = strata__pt_yee_hy(h, P.ch, ps);
          }
        }
      P.hy[o] = h;
    }
  }
}

/* Ghost copies between the half steps: periodic H ghosts the E step reads,
 * and Ez^n of the node next to each Mur face, kept in Ez's ghost layer. */
template <typename T>
__global__ void k_yee_fix(const yee_par<T> P) {
  const long long sy = P.sy;
  const int m = P.n0 > P.n1 ? P.n0 : P.n1;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < m;
       t += gridDim.x * blockDim.x) {
    if (P.perx && t < P.n1)
      P.hy[-1 + t * sy] = P.hy[P.n0 - 1 + t * sy];
    if (P.pery && t < P.n0)
      P.hx[t - sy] = P.hx[t + (long long)(P.n1 - 1) * sy];
    if (P.face[0] == STRATA__YF_MUR && t < P.n1)
      P.ez[-1 + t * sy] = P.ez[1 + t * sy];
    if (P.face[1] == STRATA__YF_MUR && t < P.n1)
      P.ez[P.n0 + t * sy] = P.ez[P.n0 - 2 + t * sy];
    if (P.face[2] == STRATA__YF_MUR && t < P.n0)
      P.ez[t - sy] = P.ez[t + sy];
    if (P.face[3] == STRATA__YF_MUR && t < P.n0)
      P.ez[t + (long long)P.n1 * sy] = P.ez[t + (long long)(P.n1 - 2) * sy];
  }
}

/* E step over [e0x, e1x) x [e0y, e1y). */
template <typename T>
__global__ void __launch_bounds__(256) k_yee_e(const yee_par<T> P) {
  const int i = P.e0x + (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= P.e1x) return;
  for (int j = P.e0y + (int)(blockIdx.y * blockDim.y + threadIdx.y);
       j < P.e1y; j += gridDim.y * blockDim.y) {
    const long long o = i + (long long)j * P.sy;
    const T dhy = P.hy[o] - P.hy[o - 1];
    const T dhx = P.hx[o] - P.hx[o - P.sy];
    T e = P.ez[o];
    e = strata__pt_yee_ez(e, P.ce, dhy, dhx);
    if (P.pezx)
      for (int side = 0; side < 2; side++)
        if (i >= P.lo[0][side] && i < P.hi[0][side]) {
          const T bc = (T)P.pb[0][i], po = P.pezx[o];
          T ps = strata__pt_cpml_psi(bc, (T)P.pa[0][i], po, dhy);
          P.pezx[o] = ps;
          e = strata__pt_yee_ez_psix(e, P.ce, ps);
        }
    if (P.pezy && P.pa[1][j] != 0.0) {
      const T ac = (T)P.pa[1][j], bc = (T)P.pb[1][j];
      T ps = strata__pt_cpml_psi(bc, ac, P.pezy[o], dhx);
      P.pezy[o] = ps;
      e = strata__pt_yee_ez_psiy(e, P.ce, ps);
    }
    P.ez[o] = e;
  }
}

/* First-order Mur on the boundary nodes of the rows the E step updated
 * (the four faces touch disjoint nodes and read none another writes). */
template <typename T>
__global__ void k_yee_mur(const yee_par<T> P) {
  const long long sy = P.sy;
  const int m = P.n0 > P.n1 ? P.n0 : P.n1;
  T *ez = P.ez;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < m;
       t += gridDim.x * blockDim.x) {
    if (t >= P.e0y && t < P.e1y) {
      const long long r = t * sy;
      if (P.face[0] == STRATA__YF_MUR)
        ez[r] = strata__pt_mur(ez[-1 + r], ez[1 + r], ez[r], P.mur);
      if (P.face[1] == STRATA__YF_MUR)
        ez[P.n0 - 1 + r] = strata__pt_mur(ez[P.n0 + r], ez[P.n0 - 2 + r],
                                          ez[P.n0 - 1 + r], P.mur);
    }
    if (t >= P.e0x && t < P.e1x) {
      if (P.face[2] == STRATA__YF_MUR)
        ez[t] = strata__pt_mur(ez[t - sy], ez[t + sy], ez[t], P.mur);
      if (P.face[3] == STRATA__YF_MUR) {
        const long long l = t + (long long)(P.n1 - 1) * sy;
        ez[l] = strata__pt_mur(ez[l + sy], ez[l - sy], ez[l], P.mur);
      }
    }
  }
}

/* Periodic ghosts of Ez (read by the next H half step). */
template <typename T>
__global__ void k_yee_per(const yee_par<T> P) {
  const long long sy = P.sy;
  const int m = P.n0 > P.n1 ? P.n0 : P.n1;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < m;
       t += gridDim.x * blockDim.x) {
    if (P.perx && t < P.n1) P.ez[P.n0 + t * sy] = P.ez[t * sy];
    if (P.pery && t < P.n0) P.ez[t + (long long)P.n1 * sy] = P.ez[t];
  }
}

template <typename T>
strata_status yee_typed(const strata__yee_args *a) {
  strata_context *ctx = a->ez->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const strata_field *EF = a->ez;
  const strata_field *all[6] = {a->hx,      a->hy,      a->psi_ezx,
                                a->psi_ezy, a->psi_hxy, a->psi_hyx};
  for (int q = 0; q < 6; q++)
    if (all[q] && (all[q]->L.pitch_x != EF->L.pitch_x ||
                   all[q]->L.origin != EF->L.origin ||
                   all[q]->d.precision != EF->d.precision))
      return strata__fail(ctx, STRATA_EINVAL,
                          "yee step: the fields differ in layout");
  yee_par<T> P;
  memset(&P, 0, sizeof P);
  const size_t org = EF->L.origin;
  P.ez = (T *)a->ez->data + org;
  P.hx = (T *)a->hx->data + org;
  P.hy = (T *)a->hy->data + org;
  P.pezx = a->psi_ezx ? (T *)a->psi_ezx->data + org : (T *)NULL;
  P.pezy = a->psi_ezy ? (T *)a->psi_ezy->data + org : (T *)NULL;
  P.phxy = a->psi_hxy ? (T *)a->psi_hxy->data + org : (T *)NULL;
  P.phyx = a->psi_hyx ? (T *)a->psi_hyx->data + org : (T *)NULL;
  if ((P.pezx && (!a->pml_a[0] || !a->pml_b[0])) ||
      (P.pezy && (!a->pml_a[1] || !a->pml_b[1])) ||
      (P.phxy && (!a->pml_ah[1] || !a->pml_bh[1])) ||
      (P.phyx && (!a->pml_ah[0] || !a->pml_bh[0])))
    return strata__fail(ctx, STRATA_EINVAL,
                        "yee step: a PML psi field without its profiles");
  for (int ax = 0; ax < 2; ax++) {
    P.pa[ax] = a->pml_a[ax];
    P.pb[ax] = a->pml_b[ax];
    P.pah[ax] = a->pml_ah[ax];
    P.pbh[ax] = a->pml_bh[ax];
    for (int side = 0; side < 2; side++) {
      P.lo[ax][side] = (int)a->pml_lo[ax][side];
      P.hi[ax][side] = (int)a->pml_hi[ax][side];
    }
  }
  P.sy = (long long)EF->L.pitch_x;
  P.n0 = (int)EF->d.n[0];
  P.n1 = (int)EF->d.n[1];
  for (int f = 0; f < 4; f++) P.face[f] = a->face[f];
  P.perx = a->face[0] == STRATA__YF_PERIODIC;
  P.pery = a->face[2] == STRATA__YF_PERIODIC;
  P.hr0 = P.perx ? P.n0 : P.n0 - 1;
  P.hr1 = P.pery ? P.n1 : P.n1 - 1;
  P.e0x = P.perx ? 0 : 1;
  P.e1x = P.perx ? P.n0 : P.n0 - 1;
  P.e0y = P.pery ? 0 : 1;
  P.e1y = P.pery ? P.n1 : P.n1 - 1;
  P.ce = (T)a->ce;
  P.ch = (T)a->ch;
  P.mur = (T)a->mur;
  int any_mur = 0;
  for (int f = 0; f < 4; f++) any_mur |= a->face[f] == STRATA__YF_MUR;
  const int m = P.n0 > P.n1 ? P.n0 : P.n1;

  /* H */
  {
    dim3 block(128, 2);
    dim3 grid((unsigned)((P.n0 + 127) / 128), strata__cu_grid1d(P.n1, 2));
    k_yee_h<T><<<grid, block, 0, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "yee step: H kernel launch");
  }
  if (P.perx || P.pery || any_mur) {
    k_yee_fix<T><<<strata__cu_grid1d(m, 256), 256, 0, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "yee step: ghost kernel launch");
  }
  /* E */
  if (P.e1x > P.e0x && P.e1y > P.e0y) {
    dim3 block(128, 2);
    dim3 grid((unsigned)((P.e1x - P.e0x + 127) / 128),
              strata__cu_grid1d(P.e1y - P.e0y, 2));
    k_yee_e<T><<<grid, block, 0, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "yee step: E kernel launch");
  }
  if (a->nsrc > 0) {
    src_list<T> sl;
    memset(&sl, 0, sizeof sl);
    sl.n = a->nsrc > 4 ? 4 : a->nsrc;
    for (int q = 0; q < sl.n; q++) {
      const long i = a->src[q][0], j = a->src[q][1];
      if (i < 0 || i >= P.n0 || j < 0 || j >= P.n1)
        return strata__fail(ctx, STRATA_EINVAL,
                            "yee step: source %d lies outside the grid", q);
      sl.off[q] = i + (long long)j * P.sy;
      sl.val[q] = (T)a->src_val[q];
    }
    k_sources<T><<<1, 32, 0, st->stream>>>(P.ez, sl);
    STRATA__LAUNCHED(ctx, "yee step: source kernel launch");
  }
  if (any_mur) {
    k_yee_mur<T><<<strata__cu_grid1d(m, 256), 256, 0, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "yee step: Mur kernel launch");
  }
  if (P.perx || P.pery) {
    k_yee_per<T><<<strata__cu_grid1d(m, 256), 256, 0, st->stream>>>(P);
    STRATA__LAUNCHED(ctx, "yee step: periodic ghost kernel launch");
  }
  return STRATA_OK;
}

} // namespace

strata_status strata__cuda_yee_step(const strata__yee_args *a) {
  strata_context *ctx = a->ez->ctx;
  if (a->ez->d.dims != 2 || a->ez->d.ghost < 1)
    return strata__fail(ctx, STRATA_EINVAL,
                        "yee step: Ez must be 2D with ghost width >= 1");
  strata_status s = sv_check_axis(ctx, a->ez, "yee step");
  if (s != STRATA_OK) return s;
  STRATA__USE_DEVICE(ctx);
  if (a->ez->d.precision == STRATA_F32) return yee_typed<float>(a);
  return yee_typed<double>(a);
}
