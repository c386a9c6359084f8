/* The variable-coefficient multigrid (opt.disc = STRATA_MG_FV): the
 * smoothers (weighted Jacobi, Chebyshev, red-black Gauss-Seidel), the
 * bottom solver (diagonally preconditioned CG or smoothing), the V/W/F
 * cycles, full multigrid, and the solve with its stopping rules.  Written
 * once against the backend's fv_* and mg_* entries; the hierarchy and the
 * coefficients are built in mg_fv_setup.c.  Every level solves A x = b
 * with the homogeneous ghost rules: the Dirichlet values enter level 0's
 * right-hand side once per solve. */
#define _POSIX_C_SOURCE 200809L
#include "mg_fv.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Profiling (opt.profile): the time since the last mark goes to the level
 * that was working. */
static strata_status mark(strata_mg *mg, int l) {
  if (!mg->o.profile) return STRATA_OK;
  TRY(strata_context_sync(mg->ctx));
  double t = strata__now();
  mg->lev[mg->fv->prof_level].seconds += t - mg->fv->prof_t;
  mg->fv->prof_t = t;
  mg->fv->prof_level = l;
  return STRATA_OK;
}

static double cells_of(const fv_level *L) {
  return (double)L->n[0] * (double)L->n[1] * (double)L->n[2];
}

/* f's first ghost layer by the coarse rules; on a level split over the
 * ranks the planes between ranks (and a periodic wrap along the split
 * axis) then come from the neighbours, whole planes with the x/y ghosts
 * their owner filled, so edges and corners are those of one process. */
static strata_status ghosts(strata_mg *mg, strata_field *f) {
  TRY(mg->ctx->be->mg_ghosts(f, &mg->fv->ghost));
  if (!f->win) return STRATA_OK;
  const int z = 2 * (mg->o.dims - 1);
  return strata__dist_exchange(&f, 1,
                               mg->o.bc.kind[z] == STRATA_BC_PERIODIC);
}

/* The sum of local sums over the ranks when f is split over them. */
static strata_status all_sum(strata_mg *mg, const strata_field *f,
                             double *v) {
  if (!f->win || !mg->fv->dist) return STRATA_OK;
  return strata_dist_allreduce(mg->fv->dist, v, 1, 0);
}

/* sum x y (y NULL: sum x) over the whole level. */
static strata_status dot(strata_mg *mg, const strata_field *x,
                         const strata_field *y, double *out) {
  TRY(mg->ctx->be->fv_dot(x, y, out));
  return all_sum(mg, x, out);
}

/* Whether this rank works on level l: every rank on the split levels,
 * rank 0 alone on the gathered ones. */
static int here(const strata__mgfv *fv, int l) {
  return !fv->dist || l < fv->gl || fv->root;
}

/* Level l's right-hand side and iterate as the finer level restricts into
 * and prolongs from them: the split copies at the gather level. */
static strata_field *coarse_b(strata__mgfv *fv, int l) {
  return fv->dist && l == fv->gl ? fv->gb : fv->lev[l].b;
}
static strata_field *coarse_u(strata__mgfv *fv, int l) {
  return fv->dist && l == fv->gl ? fv->gu : fv->lev[l].u;
}

/* The agglomeration at the gather level: its split right-hand side onto
 * rank 0's whole level (gather), its whole iterate back (scatter).
 * Nothing at other levels or in one process.  Collective. */
static strata_status gather_b(strata_mg *mg, int l) {
  strata__mgfv *fv = mg->fv;
  if (!fv->dist || l != fv->gl) return STRATA_OK;
  return strata__dist_planes(fv->gb, fv->lev[l].b, 0, 1);
}
static strata_status scatter_u(strata_mg *mg, int l) {
  strata__mgfv *fv = mg->fv;
  if (!fv->dist || l != fv->gl) return STRATA_OK;
  return strata__dist_planes(fv->gu, fv->lev[l].u, 0, 0);
}

/* r = b - A u (u's ghosts filled here); *r2 = sum r^2 (may be NULL). */
static strata_status residual(strata_mg *mg, int l, strata_field *u,
                              const strata_field *b, strata_field *r,
                              double *r2) {
  fv_level *L = &mg->fv->lev[l];
  TRY(ghosts(mg, u));
  TRY(mg->ctx->be->fv_residual(&L->op, u, b, r, r2));
  return r2 ? all_sum(mg, u, r2) : STRATA_OK;
}

static strata_status zero(strata_mg *mg, strata_field *f) {
  return mg->ctx->be->mg_axpby(f, NULL, 0, 0, 0, NULL);
}

/* count smoothing steps on level l (zero: from x = 0). */
static strata_status smooth(strata_mg *mg, int l, int count, int from0) {
  strata__mgfv *fv = mg->fv;
  fv_level *L = &fv->lev[l];
  const strata__backend *be = mg->ctx->be;
  if (from0) TRY(zero(mg, L->u));
  if (count <= 0) return STRATA_OK;
  if (fv->smoother == STRATA_MG_GSRB) {
    int q = 0;
    /* where the backend does a step in one pass: u -> r -> u, an odd
     * count's last step copied back (r is free during smoothing) */
    for (int used = 1; be->fv_gsrb2 && used && q < count;) {
      const int two = q + 1 < count;
      TRY(be->fv_gsrb2(&L->op, L->u, L->b, L->r, &fv->ghost, &used));
      if (!used) break;
      if (two)
        TRY(be->fv_gsrb2(&L->op, L->r, L->b, L->u, &fv->ghost, &used));
      else
        TRY(be->mg_axpby(L->u, L->r, 1, 0, 0, NULL));
      q += two ? 2 : 1;
    }
    for (; q < count; q++)
      for (int color = 0; color < 2; color++) {
        TRY(ghosts(mg, L->u));
        TRY(be->fv_gsrb(&L->op, L->u, L->b, color));
      }
  } else if (fv->smoother == STRATA_MG_JACOBI) {
    for (int q = 0; q < count; q++) {
      TRY(residual(mg, l, L->u, L->b, L->r, NULL));
      TRY(be->fv_update(&L->op, L->u, L->r, NULL, 0, mg->o.omega));
    }
  } else {
    /* Chebyshev on [lmax/8, lmax]: theta, delta the interval's centre and
     * half width; the three-term recurrence in its step form */
    const double hi = L->lmax, lo = hi / 8;
    const double theta = (hi + lo) / 2, delta = (hi - lo) / 2,
                 sigma = theta / delta;
    double rho = 1 / sigma;
    for (int q = 0; q < count; q++) {
      TRY(residual(mg, l, L->u, L->b, L->r, NULL));
      if (q == 0)
        TRY(be->fv_update(&L->op, L->u, L->r, L->d, 0, 1 / theta));
      else {
        double rn = 1 / (2 * sigma - rho);
        TRY(be->fv_update(&L->op, L->u, L->r, L->d, rn * rho, 2 * rn / delta));
        rho = rn;
      }
    }
  }
  mg->lev[l].sweeps += count;
  return STRATA_OK;
}

/* Removes the mean of f's interior (singular problems). */
static strata_status demean(strata_mg *mg, int l, strata_field *f) {
  double sum;
  TRY(dot(mg, f, NULL, &sum));
  return mg->ctx->be->mg_axpby(f, NULL, 0, 1, -sum / cells_of(&mg->fv->lev[l]),
                               NULL);
}

/* The coarsest level by CG preconditioned with the diagonal, from u = 0
 * (from0) or the iterate, until the residual fell by coarse_rtol. */
static strata_status bottom_cg(strata_mg *mg, int l, int from0) {
  strata__mgfv *fv = mg->fv;
  fv_level *L = &fv->lev[l];
  const strata__backend *be = mg->ctx->be;
  if (from0) TRY(zero(mg, L->u));
  double r2, rz = 1, pq;
  TRY(residual(mg, l, L->u, L->b, L->r, &r2));
  if (fv->singular) {
    TRY(demean(mg, l, L->r));
    TRY(be->fv_dot(L->r, L->r, &r2));
  }
  const double stop = mg->o.coarse_rtol * sqrt(r2);
  for (int it = 0; it < mg->o.coarse_max_sweeps && sqrt(r2) > stop; it++) {
    /* z = D^-1 r; p = z + (rz / rz_old) p */
    TRY(zero(mg, L->z));
    TRY(be->fv_update(&L->op, L->z, L->r, NULL, 0, 1));
    if (fv->singular) TRY(demean(mg, l, L->z));
    double rz_new;
    TRY(be->fv_dot(L->r, L->z, &rz_new));
    if (!(rz_new > 0)) break; /* r = 0 to rounding, or NaN (caught later) */
    TRY(be->mg_axpby(L->p, L->z, 1, it == 0 ? 0 : rz_new / rz, 0, NULL));
    rz = rz_new;
    /* q = -A p */
    TRY(residual(mg, l, L->p, NULL, L->q, NULL));
    TRY(be->fv_dot(L->p, L->q, &pq));
    if (!(pq < 0)) break;
    double a = -rz / pq;
    TRY(be->mg_axpby(L->u, L->p, a, 1, 0, NULL));
    TRY(be->mg_axpby(L->r, L->q, a, 1, 0, NULL));
    if (fv->singular) TRY(demean(mg, l, L->r));
    TRY(be->fv_dot(L->r, L->r, &r2));
    mg->lev[l].sweeps++;
  }
  return STRATA_OK;
}

/* The coarsest level by the smoother until the residual fell by
 * coarse_rtol, checking after 1, 2, 4, 8, 8, ... steps. */
static strata_status bottom_smooth(strata_mg *mg, int l, int from0) {
  fv_level *L = &mg->fv->lev[l];
  /* recorded cycles cannot branch on the residual: a fixed count */
  if (mg->o.graph) return smooth(mg, l, mg->o.coarse_max_sweeps, from0);
  if (from0) TRY(zero(mg, L->u));
  double r0 = -1;
  int done = 0, gap = 1;
  while (done < mg->o.coarse_max_sweeps) {
    double r2;
    TRY(residual(mg, l, L->u, L->b, L->r, &r2));
    double r = sqrt(r2);
    if (r0 < 0) r0 = r;
    if (!(r > mg->o.coarse_rtol * r0)) break; /* NaN stops too */
    int step = gap < mg->o.coarse_max_sweeps - done
                   ? gap : mg->o.coarse_max_sweeps - done;
    TRY(smooth(mg, l, step, 0));
    done += step;
    if (gap < 8) gap *= 2;
  }
  return STRATA_OK;
}

static strata_status bottom(strata_mg *mg, int l, int from0) {
  return mg->fv->bottom == STRATA_MG_BOTTOM_CG ? bottom_cg(mg, l, from0)
                                               : bottom_smooth(mg, l, from0);
}

static strata_status cycle(strata_mg *mg, int l, strata_mg_cycle type,
                           int from0);

/* Level l's residual b - A u restricted into level l + 1's b (the split
 * copy at the gather level, then gathered), *r2 (may be NULL) its sum of
 * squares: in one pass where the backend has it, else through level l's
 * r. */
static strata_status residual_down(strata_mg *mg, int l, strata_field *u,
                                   double *r2) {
  strata__mgfv *fv = mg->fv;
  fv_level *L = &fv->lev[l];
  strata_field *cb = coarse_b(fv, l + 1);
  const strata__backend *be = mg->ctx->be;
  int used = 0;
  if (be->fv_residual_restrict) {
    TRY(ghosts(mg, u));
    TRY(be->fv_residual_restrict(&L->op, u, L->b, cb, r2, &used));
    if (used && r2) TRY(all_sum(mg, u, r2));
  }
  if (!used) {
    TRY(residual(mg, l, u, L->b, L->r, r2));
    TRY(be->fv_restrict(L->r, cb));
  }
  return gather_b(mg, l + 1);
}

/* Level l's coarse-grid correction: residual, restriction, the coarse
 * cycle(s) from 0, linear prolongation added to the iterate. */
static strata_status descend(strata_mg *mg, int l, strata_mg_cycle type) {
  strata__mgfv *fv = mg->fv;
  fv_level *L = &fv->lev[l];
  const strata__backend *be = mg->ctx->be;
  TRY(residual_down(mg, l, L->u, NULL));
  TRY(mark(mg, l + 1));
  if (here(fv, l + 1)) {
    TRY(cycle(mg, l + 1, type, 1));
    if (l + 1 < fv->nlev - 1) {
      if (type == STRATA_MG_W) TRY(cycle(mg, l + 1, STRATA_MG_W, 0));
      if (type == STRATA_MG_F) TRY(cycle(mg, l + 1, STRATA_MG_V, 0));
    }
  }
  TRY(scatter_u(mg, l + 1));
  TRY(mark(mg, l));
  strata_field *cu = coarse_u(fv, l + 1);
  TRY(ghosts(mg, cu));
  return be->fv_prolong(cu, L->u, 1.0, 0);
}

static strata_status cycle(strata_mg *mg, int l, strata_mg_cycle type,
                           int from0) {
  if (l == mg->fv->nlev - 1) return bottom(mg, l, from0);
  TRY(smooth(mg, l, l == 0 ? mg->o.pre_fine : mg->o.pre, from0));
  TRY(descend(mg, l, type));
  return smooth(mg, l, mg->o.post, 0);
}

/* Full multigrid for the correction of the initial guess: level 0's
 * residual restricted to every level, the coarsest solved, and every
 * finer level's correction interpolated from the coarser one
 * (quadratically: more accurate than the second-order discretisation)
 * and improved by one cycle of opt.cycle; the finest adds its
 * interpolated correction to phi and runs one cycle.  Level 1's b holds
 * phi's residual restricted (and gathered) on entry: iterate took the
 * residual for the history. */
static strata_status fmg(strata_mg *mg) {
  strata__mgfv *fv = mg->fv;
  const strata__backend *be = mg->ctx->be;
  const int top = fv->nlev - 1;
  for (int l = 1; l < top && here(fv, l); l++) {
    TRY(be->fv_restrict(fv->lev[l].b, coarse_b(fv, l + 1)));
    TRY(gather_b(mg, l + 1));
  }
  TRY(mark(mg, top));
  if (here(fv, top)) TRY(bottom(mg, top, 1));
  for (int l = top - 1; l >= 0; l--) {
    fv_level *L = &fv->lev[l];
    TRY(scatter_u(mg, l + 1));
    if (!here(fv, l)) continue;
    TRY(mark(mg, l));
    strata_field *cu = coarse_u(fv, l + 1);
    TRY(ghosts(mg, cu));
    TRY(be->fv_prolong(cu, L->u, l == 0 ? 1.0 : 0.0, 1));
    TRY(cycle(mg, l, mg->o.cycle, 0));
  }
  return STRATA_OK;
}

/* One cycle of the finest level. */
static strata_status cycle0(strata_mg *mg) {
  return mg->fv->nlev > 1 ? cycle(mg, 0, mg->o.cycle, 0) : bottom(mg, 0, 0);
}

/* Runs fn (the finest cycle: which = 0, FMG: 1), through its recording
 * when opt.graph and the backend records: recorded on first use, then
 * replayed; the recording's sweeps are counted at every replay. */
static strata_status run_rec(strata_mg *mg, int which,
                             strata_status (*fn)(strata_mg *)) {
  strata__mgfv *fv = mg->fv;
  const strata__backend *be = mg->ctx->be;
  /* over several ranks the gathers' agreement runs on the host */
  if (!mg->o.graph || !be->capture_begin || fv->dist) return fn(mg);
  if (!fv->rec[which].graph) {
    long before[MG_MAX_LEVELS];
    for (int l = 0; l < fv->nlev; l++) before[l] = mg->lev[l].sweeps;
    TRY(be->capture_begin(mg->ctx));
    strata_status s = fn(mg);
    void *g = NULL;
    strata_status e = be->capture_end(mg->ctx, &g);
    if (s == STRATA_OK) s = e;
    for (int l = 0; l < fv->nlev; l++) {
      fv->rec[which].sweeps[l] = mg->lev[l].sweeps - before[l];
      mg->lev[l].sweeps = before[l]; /* recorded, not run */
    }
    if (s != STRATA_OK) {
      be->graph_free(mg->ctx, g);
      return s;
    }
    fv->rec[which].graph = g;
  }
  for (int l = 0; l < fv->nlev; l++)
    mg->lev[l].sweeps += fv->rec[which].sweeps[l];
  return be->graph_run(mg->ctx, fv->rec[which].graph);
}

/* Level 0's right-hand side: psi plus the Dirichlet values' flux, i.e.
 * b = psi - A w for w = 0 inside with ghost 2 g on the Dirichlet faces
 * (strata_field_fill_ghosts puts g' = 2 g on the ghost).  With every face
 * value 0, A w = 0 and b = psi: a copy instead of a residual pass. */
static strata_status rhs0(strata_mg *mg, const strata_field *psi) {
  strata__mgfv *fv = mg->fv;
  fv_level *L = &fv->lev[0];
  const strata__backend *be = mg->ctx->be;
  strata_boundary bc = mg->o.bc;
  int zero_faces = 1;
  for (int f = 0; f < 2 * mg->o.dims; f++)
    zero_faces &= bc.kind[f] == STRATA_BC_PERIODIC || bc.value[f] == 0;
  if (zero_faces) return be->mg_axpby(L->b, psi, 1, 0, 0, NULL);
  for (int f = 0; f < 6; f++) bc.value[f] *= 2;
  TRY(zero(mg, L->r));
  /* split: the faces between ranks get the neighbours' zero planes */
  TRY(L->r->win ? strata_dist_fill_ghosts(L->r, &bc)
                : be->fill_ghosts(L->r, &bc));
  return be->fv_residual(&L->op, L->r, psi, L->b, NULL);
}

/* The source's mean on a singular problem: refused unless opt.project,
 * removed from b either way; fv->bshift = minus the removed mean. */
static strata_status compatible(strata_mg *mg, const strata_field *psi) {
  strata__mgfv *fv = mg->fv;
  fv_level *L = &fv->lev[0];
  double sum, sq;
  fv->bshift = 0;
  if (!fv->singular) return STRATA_OK;
  TRY(dot(mg, L->b, NULL, &sum));
  TRY(dot(mg, L->b, L->b, &sq));
  const double n = cells_of(L), mean = sum / n, rms = sqrt(sq / n);
  if (!isfinite(mean))
    return strata__fail_arg(mg->ctx, STRATA_EINVAL, "psi", mean,
                            "multigrid: psi is not finite");
  if (fabs(mean) > 32 * (DBL_EPSILON / 2) * rms && !mg->o.project)
    return strata__fail_arg(mg->ctx, STRATA_EINVAL, "psi", mean,
                            "multigrid: the problem has no Dirichlet face and "
                            "alpha = 0, so a solution exists only for a "
                            "source of zero mean, but psi's mean is %.6g (rms "
                            "%.6g); subtract it or set the option project = "
                            "1", mean, rms);
  (void)psi;
  fv->bshift = -mean;
  return mg->ctx->be->mg_axpby(L->b, NULL, 0, 1, -mean, NULL);
}

/* A non-finite residual after k cycles: names the first bad point. */
static strata_status nonfinite(strata_mg *mg, strata_field *phi,
                               const strata_field *psi, double r, int k) {
  strata_status s = strata__check_finite(phi, "multigrid", "phi", "cycle", k);
  if (s == STRATA_OK)
    s = strata__check_finite(psi, "multigrid", "psi", "cycle", k);
  if (s == STRATA_OK)
    s = strata__fail(mg->ctx, STRATA_ENONFINITE,
                     "multigrid: the residual is %g after %d cycles, with phi "
                     "and psi finite (their values overflow the precision)",
                     r, k);
  return s;
}

/* The cycles until a stopping rule; *kout cycles done, *flags bit 0
 * converged, bit 1 stalled. */
static strata_status iterate(strata_mg *mg, strata_field *phi,
                             const strata_field *psi, int *kout, int *flags) {
  const strata_mg_options *o = &mg->o;
  fv_level *L0 = &mg->fv->lev[0];
  const double rs = 1 / sqrt(cells_of(L0));
  int k = 0;
  double r0 = 0;
  if (o->fmg && mg->fv->nlev > 1 && o->max_cycles > 0) {
    double r2; /* restricted into level 1's b, where fmg() starts */
    TRY(residual_down(mg, 0, phi, &r2));
    r0 = mg->hist[0] = sqrt(r2) * rs;
    if (r0 > o->atol && r0 > 0) {
      TRY(run_rec(mg, 1, fmg));
      k = 1;
    }
  }
  for (;;) {
    double r2;
    TRY(residual(mg, 0, phi, L0->b, L0->r, &r2));
    double r = sqrt(r2) * rs;
    mg->hist[k] = r;
    if (k == 0) r0 = r;
    if (!isfinite(r)) return nonfinite(mg, phi, psi, r, k);
    *kout = k;
    if (r <= o->atol || r0 == 0 || (o->rtol > 0 && r <= o->rtol * r0)) {
      *flags = 1;
      return STRATA_OK;
    }
    if (o->stall && k >= 2 && r > 0.9 * mg->hist[k - 1] &&
        mg->hist[k - 1] > 0.9 * mg->hist[k - 2]) {
      *flags = 2;
      return STRATA_OK;
    }
    if (k >= o->max_cycles) return STRATA_OK;
    TRY(run_rec(mg, 0, cycle0));
    k++;
  }
}

strata_status strata__mgfv_solve(strata_mg *mg, strata_field *phi,
                                 const strata_field *psi,
                                 strata_mg_result *res) {
  strata__mgfv *fv = mg->fv;
  fv_level *L0 = &fv->lev[0];
  double t0 = strata__now();
  for (int l = 0; l < fv->nlev; l++) {
    mg->lev[l].sweeps = 0;
    mg->lev[l].seconds = 0;
  }
  fv->prof_level = 0;
  fv->prof_t = t0;
  TRY(rhs0(mg, psi));
  TRY(compatible(mg, psi));
  /* recordings hold phi's address and layout */
  const size_t lay[3] = {phi->L.origin, phi->L.pitch_x, phi->L.pitch_y};
  if (fv->rec_phi != phi->data || memcmp(lay, fv->rec_layout, sizeof lay)) {
    strata__mgfv_forget(mg->ctx, fv);
    fv->rec_phi = phi->data;
    memcpy(fv->rec_layout, lay, sizeof lay);
  }
  L0->u = phi;
  int k = 0, flags = 0;
  strata_status s = iterate(mg, phi, psi, &k, &flags);
  /* the last residual filled phi's ghosts; the mean's removal changes phi */
  if (s == STRATA_OK && fv->singular) s = demean(mg, 0, phi);
  if (s == STRATA_OK && fv->singular) s = ghosts(mg, phi);
  if (s == STRATA_OK) s = mark(mg, 0);
  L0->u = NULL;
  if (s != STRATA_OK) return s;
  if (res) {
    const double r0 = mg->hist[0], r = mg->hist[k];
    memset(res, 0, sizeof *res);
    res->cycles = k;
    res->converged = flags & 1;
    res->stalled = (flags & 2) != 0;
    res->residual0 = r0;
    res->residual = r;
    res->relative = r0 > 0 ? r / r0 : 0;
    res->factor = k > 0 && r0 > 0 ? pow(res->relative, 1.0 / k) : 0;
    res->last_factor = k > 0 && mg->hist[k - 1] > 0 ? r / mg->hist[k - 1] : 0;
    res->source_mean = -fv->bshift;
    res->seconds = strata__now() - t0;
    res->history = mg->hist;
  }
  return STRATA_OK;
}
