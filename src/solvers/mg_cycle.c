/* Geometric multigrid for the Poisson equation: running the level
 * hierarchy that multigrid.c builds.  Holds the smoother, the coarsest
 * solve, the V/W/F cycles and full multigrid, strata_mg_solve with its
 * stopping rules, the fixed-count cycles used by the solver interface,
 * and the per-level info and options queries.  The handle's layout is in
 * mg_internal.h. */

/* Written once against the backend: the per-level work is the backend's
 * mg_sweep (weighted Jacobi, the residual and its norm in one pass),
 * mg_transfer (restriction and prolongation-and-correct as separable
 * banded stencils), mg_axpby and mg_ghosts, plus fill_ghosts on the finest
 * level.  Nothing is staged through the host per cycle: the only host
 * traffic is one residual norm (a double) per cycle and a few per
 * coarsest solve. */
#define _POSIX_C_SOURCE 200809L
#include "mg_fv.h"
#include "mg_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int strata_mg_levels(const strata_mg *mg) { return mg ? mg->nlev : 0; }

strata_status strata_mg_get_level(const strata_mg *mg, int level,
                                  strata_mg_level_info *info) {
  if (!mg) return STRATA_EINVAL;
  if (!info)
    return strata__fail_arg_p(mg->ctx, STRATA_EINVAL, "info", info,
                              "multigrid: info is NULL");
  if (level < 0 || level >= mg->nlev)
    return strata__fail_arg(mg->ctx, STRATA_EINVAL, "level", level,
                            "multigrid: level %d does not exist (0..%d)",
                            level, mg->nlev - 1);
  const mg_level *L = &mg->lev[level];
  memset(info, 0, sizeof *info);
  for (int a = 0; a < 3; a++) {
    info->n[a] = (size_t)L->ax[a].n;
    info->offset[a] = L->offset[a];
    info->face[2 * a] = L->ax[a].d[0];
    info->face[2 * a + 1] = L->ax[a].d[1];
  }
  info->h = ldexp(mg->o.h, level);
  info->exact = L->exact;
  info->sweeps = L->sweeps;
  info->seconds = L->seconds;
  return STRATA_OK;
}

strata_status strata_mg_get_options(const strata_mg *mg,
                                    strata_mg_options *o) {
  if (!mg) return STRATA_EINVAL;
  if (!o)
    return strata__fail_arg_p(mg->ctx, STRATA_EINVAL, "o", o,
                              "multigrid: options pointer is NULL");
  *o = mg->o;
  return STRATA_OK;
}

/* ---- the cycle ------------------------------------------------------------ */

/* Profiling: attributes the time since the last mark to the level that
 * was working, then switches to level l. */
static strata_status mark(strata_mg *mg, int l) {
  if (!mg->o.profile) return STRATA_OK;
  TRY(strata_context_sync(mg->ctx));
  double t = strata__now();
  mg->lev[mg->prof_level].seconds += t - mg->prof_t;
  mg->prof_t = t;
  mg->prof_level = l;
  return STRATA_OK;
}

static const strata_field *rhs(const strata_mg *mg, int l) {
  return l == 0 ? mg->psi : mg->lev[l].b;
}

static strata_status fill(strata_mg *mg, int l, strata_field *f) {
  if (l == 0) return mg->ctx->be->fill_ghosts(f, &mg->o.bc);
  return mg->ctx->be->mg_ghosts(f, &mg->lev[l].ghost);
}

/* res = bscale (b + bshift) - S src;  dst = cu src + cr res. */
static strata_status sweep(strata_mg *mg, int l, const strata_field *src,
                           strata_field *dst, double cu, double cr,
                           double *res2) {
  strata__mg_sweep_args a = {mg->op, src, rhs(mg, l), dst,
                             l == 0 ? mg->bscale : 1.0,
                             l == 0 ? mg->bshift : 0.0, cu, cr, res2};
  return mg->ctx->be->mg_sweep(&a);
}

/* count Jacobi sweeps on level l; zero: the iterate is 0 (not stored). */
static strata_status smooth(strata_mg *mg, int l, int count, int zero) {
  mg_level *L = &mg->lev[l];
  if (zero && count == 0)
    return mg->ctx->be->mg_axpby(L->x[L->cur], NULL, 0, 0, 0, NULL);
  for (int q = 0; q < count; q++) {
    strata_field *src = L->x[L->cur], *dst = L->x[1 - L->cur];
    if (zero && q == 0)
      /* from 0 the sweep is jw * b (coarse levels: bshift 0) */
      TRY(mg->ctx->be->mg_axpby(dst, rhs(mg, l),
                                mg->jw * (l == 0 ? mg->bscale : 1.0), 0, 0,
                                NULL));
    else {
      TRY(fill(mg, l, src));
      TRY(sweep(mg, l, src, dst, 1.0, mg->jw, NULL));
    }
    L->cur ^= 1;
    L->sweeps++;
  }
  return STRATA_OK;
}

/* The coarsest level: Jacobi until the residual fell by coarse_rtol,
 * checking after 1, 2, 4, 8, 8, ... sweeps. */
static strata_status coarse_solve(strata_mg *mg, int l, int zero) {
  mg_level *L = &mg->lev[l];
  if (zero) TRY(mg->ctx->be->mg_axpby(L->x[L->cur], NULL, 0, 0, 0, NULL));
  double r0 = -1;
  int done = 0, gap = 1;
  while (done < mg->o.coarse_max_sweeps) {
    double r2 = 0;
    for (int q = 0; q < gap && done < mg->o.coarse_max_sweeps; q++) {
      strata_field *src = L->x[L->cur], *dst = L->x[1 - L->cur];
      TRY(fill(mg, l, src));
      TRY(sweep(mg, l, src, dst, 1.0, mg->jw, q == 0 ? &r2 : NULL));
      L->cur ^= 1;
      L->sweeps++;
      done++;
    }
    double r = sqrt(r2);
    if (r0 < 0) r0 = r;
    if (!(r > mg->o.coarse_rtol * r0)) break; /* NaN stops too */
    if (gap < 8) gap *= 2;
  }
  return STRATA_OK;
}

static strata_status cycle(strata_mg *mg, int l, strata_mg_cycle type,
                           int zero);

/* The coarse-grid correction of level l: residual, restriction, the
 * coarse cycle(s), prolongation-and-correct. */
static strata_status descend(strata_mg *mg, int l, strata_mg_cycle type) {
  mg_level *L = &mg->lev[l], *C = &mg->lev[l + 1];
  strata_field *u = L->x[L->cur], *r = L->x[1 - L->cur];
  TRY(fill(mg, l, u));
  TRY(sweep(mg, l, u, r, 0.0, 1.0, NULL));
  strata__mg_transfer_args t = {r, C->b, NULL, 0.0,
                                4.0 / (1 << mg->o.dims),
                                {L->rb[0], L->rb[1], L->rb[2]}};
  TRY(mg->ctx->be->mg_transfer(&t));
  TRY(mark(mg, l + 1));
  if (l + 1 == mg->nlev - 1)
    TRY(coarse_solve(mg, l + 1, 1));
  else {
    TRY(cycle(mg, l + 1, type, 1));
    if (type == STRATA_MG_W) TRY(cycle(mg, l + 1, STRATA_MG_W, 0));
    if (type == STRATA_MG_F) TRY(cycle(mg, l + 1, STRATA_MG_V, 0));
  }
  TRY(mark(mg, l));
  strata__mg_transfer_args p = {C->x[C->cur], u, u, 1.0, 1.0,
                                {L->pb[0], L->pb[1], L->pb[2]}};
  return mg->ctx->be->mg_transfer(&p);
}

/* One cycle on a coarse level l >= 1 from the iterate (or 0). */
static strata_status cycle(strata_mg *mg, int l, strata_mg_cycle type,
                           int zero) {
  if (l == mg->nlev - 1) return coarse_solve(mg, l, zero);
  TRY(smooth(mg, l, mg->o.pre, zero));
  TRY(descend(mg, l, type));
  return smooth(mg, l, mg->o.post, 0);
}

/* Full multigrid for the correction of the initial guess: the residual r
 * (in the finest scratch) is restricted to every level, the coarsest
 * correction solved, and each level's correction interpolated from the
 * coarser one and improved by one V-cycle; then phi += P e. */
static strata_status fmg(strata_mg *mg) {
  int top = mg->nlev - 1;
  double scale = 4.0 / (1 << mg->o.dims);
  for (int l = 0; l < top; l++) {
    mg_level *L = &mg->lev[l];
    const strata_field *in = l == 0 ? L->x[1 - L->cur] : L->b;
    strata__mg_transfer_args t = {in, mg->lev[l + 1].b, NULL, 0.0, scale,
                                  {L->rb[0], L->rb[1], L->rb[2]}};
    TRY(mg->ctx->be->mg_transfer(&t));
  }
  TRY(mark(mg, top));
  TRY(coarse_solve(mg, top, 1));
  for (int l = top - 1; l >= 0; l--) {
    mg_level *L = &mg->lev[l], *C = &mg->lev[l + 1];
    TRY(mark(mg, l));
    strata_field *u = L->x[L->cur];
    strata__mg_transfer_args p = {C->x[C->cur], u, u, l == 0 ? 1.0 : 0.0,
                                  1.0, {L->pb[0], L->pb[1], L->pb[2]}};
    TRY(mg->ctx->be->mg_transfer(&p));
    if (l > 0) TRY(cycle(mg, l, STRATA_MG_V, 0));
  }
  return STRATA_OK;
}

/* ---- solve ------------------------------------------------------------------ */

static strata_status check_field(strata_mg *mg, const strata_field *f,
                                 const char *name) {
  strata_context *ctx = mg->ctx;
  if (!f)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, name, f,
                              "multigrid: %s is NULL", name);
  if (f->ctx != ctx)
    return strata__fail_arg_s(ctx, STRATA_EINVAL, name, "set",
                              "multigrid: %s belongs to another context",
                              name);
  if (f->d.precision != mg->o.precision)
    return strata__fail_arg(ctx, STRATA_EPRECISION, name,
                        (int)f->d.precision,
                        "multigrid: %s has %d-byte values, the solver %d-byte",
                        name, (int)f->d.precision, (int)mg->o.precision);
  if (f->d.dims != mg->o.dims || f->d.n[0] != mg->o.n[0] ||
      f->d.n[1] != mg->o.n[1] || f->d.n[2] != mg->o.n[2])
    return strata__fail_arg_s(ctx, STRATA_ESHAPE, name, "set",
                        "multigrid: %s is %dD %zu x %zu x %zu, the solver "
                        "%dD %zu x %zu x %zu", name, f->d.dims, f->d.n[0],
                        f->d.n[1], f->d.n[2], mg->o.dims, mg->o.n[0],
                        mg->o.n[1], mg->o.n[2]);
  return STRATA_OK;
}

static double eps_of(strata_precision p) {
  return p == STRATA_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
}

strata_status strata_mg_solve(strata_mg *mg, strata_field *phi,
                              const strata_field *psi, strata_mg_result *res) {
  if (!mg) return STRATA_EINVAL;
  strata_context *ctx = mg->ctx;
  TRY(check_field(mg, phi, "phi"));
  TRY(check_field(mg, psi, "psi"));
  if (phi == psi)
    return strata__fail_arg_s(ctx, STRATA_EINVAL, "psi", "set",
                              "multigrid: phi and psi are the same field");
  if (mg->fv) return strata__mgfv_solve(mg, phi, psi, res);
  const double npts =
      (double)mg->o.n[0] * (double)mg->o.n[1] * (double)mg->o.n[2];
  double t0 = strata__now();

  /* a problem without Dirichlet faces needs a source of zero mean */
  mg->bshift = 0;
  if (mg->singular) {
    double sum, rms;
    TRY(strata_field_norm(psi, STRATA_NORM_SUM, &sum));
    TRY(strata_field_norm(psi, STRATA_NORM_RMS, &rms));
    double mean = sum / npts;
    if (!isfinite(mean))
      return strata__fail_arg(ctx, STRATA_EINVAL, "psi", mean,
                              "multigrid: psi is not finite");
    if (fabs(mean) > 32 * eps_of(mg->o.precision) * rms && !mg->o.project)
      return strata__fail_arg(ctx, STRATA_EINVAL, "psi", mean,
                          "multigrid: the problem has no Dirichlet face, so "
                          "a solution exists only for a source of zero mean, "
                          "but psi's mean is %.6g (rms %.6g); subtract it or "
                          "set the option project = 1", mean, rms);
    mg->bshift = -mean;
  }

  mg->psi = psi;
  mg_level *L0 = &mg->lev[0];
  L0->x[0] = phi;
  L0->cur = 0;
  for (int l = 0; l < mg->nlev; l++) {
    mg->lev[l].sweeps = 0;
    mg->lev[l].seconds = 0;
  }
  mg->prof_level = 0;
  mg->prof_t = strata__now();

  const strata_mg_options *o = &mg->o;
  const double rscale = 1.0 / (mg->bscale * sqrt(npts));
  strata_status s = STRATA_OK;
  int k = 0, converged = 0, stalled = 0;
  double r0 = 0;
  if (o->fmg && mg->nlev > 1 && o->max_cycles > 0) {
    double r2;
    s = fill(mg, 0, phi);
    if (s == STRATA_OK) s = sweep(mg, 0, phi, L0->x[1], 0.0, 1.0, &r2);
    if (s != STRATA_OK) goto out;
    r0 = mg->hist[0] = sqrt(r2) * rscale;
    if (r0 > o->atol && r0 > 0) {
      s = fmg(mg);
      if (s != STRATA_OK) goto out;
      k = 1;
    }
  }
  for (;;) {
    strata_field *src = L0->x[L0->cur], *dst = L0->x[1 - L0->cur];
    double r2;
    s = fill(mg, 0, src);
    if (s == STRATA_OK)
      s = o->pre_fine >= 1 ? sweep(mg, 0, src, dst, 1.0, mg->jw, &r2)
                           : sweep(mg, 0, src, NULL, 0.0, 0.0, &r2);
    if (s != STRATA_OK) goto out;
    double r = sqrt(r2) * rscale;
    mg->hist[k] = r;
    if (k == 0) r0 = r;
    if (!isfinite(r)) {
      /* the residual norm is the check of every cycle: name the point */
      s = strata__check_finite(src, "multigrid", "phi", "cycle", k);
      if (s == STRATA_OK)
        s = strata__check_finite(psi, "multigrid", "psi", "cycle", k);
      if (s == STRATA_OK)
        s = strata__fail(ctx, STRATA_ENONFINITE,
                         "multigrid: the residual is %g after %d cycles, "
                         "with phi and psi finite (their values overflow "
                         "the precision)", r, k);
      goto out;
    }
    if (r <= o->atol || r0 == 0 || (o->rtol > 0 && r <= o->rtol * r0)) {
      converged = 1;
      break;
    }
    if (o->stall && k >= 2 && r > 0.9 * mg->hist[k - 1] &&
        mg->hist[k - 1] > 0.9 * mg->hist[k - 2]) {
      stalled = 1;
      break;
    }
    if (k >= o->max_cycles) break;
    /* the sweep that measured r was the first pre-smoothing sweep: keep
     * it (when the loop stops above it is dropped, x[cur] unchanged) */
    if (o->pre_fine >= 1) {
      L0->cur ^= 1;
      L0->sweeps++;
    }
    s = smooth(mg, 0, o->pre_fine - 1 > 0 ? o->pre_fine - 1 : 0, 0);
    if (s == STRATA_OK && mg->nlev > 1) s = descend(mg, 0, o->cycle);
    if (s == STRATA_OK) s = smooth(mg, 0, o->post, 0);
    if (s != STRATA_OK) goto out;
    k++;
  }
  if (L0->x[L0->cur] != phi) {
    s = ctx->be->mg_axpby(phi, L0->x[L0->cur], 1, 0, 0, NULL);
    if (s != STRATA_OK) goto out;
  }
  if (mg->singular) {
    double sum;
    s = ctx->be->mg_axpby(phi, NULL, 0, 1, 0, &sum);
    if (s == STRATA_OK) s = ctx->be->mg_axpby(phi, NULL, 0, 1, -sum / npts, NULL);
    if (s != STRATA_OK) goto out;
  }
  s = ctx->be->fill_ghosts(phi, &o->bc);
  if (s == STRATA_OK) s = mark(mg, 0);
out:
  L0->x[0] = NULL;
  L0->cur = 0;
  mg->psi = NULL;
  if (s != STRATA_OK) return s;
  if (res) {
    memset(res, 0, sizeof *res);
    res->cycles = k;
    res->converged = converged;
    res->stalled = stalled;
    res->residual0 = r0;
    res->residual = mg->hist[k];
    res->relative = r0 > 0 ? mg->hist[k] / r0 : 0;
    res->factor = k > 0 && r0 > 0 ? pow(res->relative, 1.0 / k) : 0;
    res->last_factor =
        k > 0 && mg->hist[k - 1] > 0 ? mg->hist[k] / mg->hist[k - 1] : 0;
    res->source_mean = -mg->bshift;
    res->seconds = strata__now() - t0;
    res->history = mg->hist;
  }
  return STRATA_OK;
}

strata_status strata__mg_cycles(strata_mg *mg, strata_field *phi,
                                const strata_field *psi, int cycles, int fmg,
                                strata_mg_result *res) {
  if (!mg) return STRATA_EINVAL;
  if (cycles < 1 || cycles > mg->o.max_cycles)
    return strata__fail(mg->ctx, STRATA_EINVAL,
                        "multigrid: %d cycles asked for; 1..%d (max_cycles)",
                        cycles, mg->o.max_cycles);
  const strata_mg_options keep = mg->o;
  mg->o.max_cycles = cycles;
  mg->o.rtol = 0;
  mg->o.atol = 0;
  mg->o.stall = 0;
  mg->o.fmg = keep.fmg && fmg;
  strata_status s = strata_mg_solve(mg, phi, psi, res);
  mg->o = keep;
  return s;
}
