/* The variable-coefficient multigrid (opt.disc = STRATA_MG_FV): its
 * options, the level hierarchy (cells merged 2 by 2 along every axis), the
 * coefficients of every level (face values from the cells' beta, coarse
 * faces and alpha by averaging, the diagonal and its Gershgorin bound),
 * create, destroy and the footprint.  The coefficients are built on the
 * host once per strata_mg_set_coefficients and uploaded; the cycles that
 * use them are in mg_fv.c. */
#define _POSIX_C_SOURCE 200809L
#include "mg_fv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- options and hierarchy ----------------------------------------------- */

static strata_status check_fv(strata_context *ctx, const strata_mg_options *o) {
  if (o->precision != STRATA_F64)
    return strata__fail_arg(ctx, STRATA_EINVAL, "precision",
                            (int)o->precision,
                            "multigrid: the finite-volume discretisation "
                            "(variable coefficients) runs in fp64 only; "
                            "precision is %d", (int)o->precision);
  if (o->smoother < STRATA_MG_SMOOTHER_DEFAULT || o->smoother > STRATA_MG_GSRB)
    return strata__fail_arg(ctx, STRATA_EINVAL, "smoother", (int)o->smoother,
                            "multigrid: unknown smoother %d",
                            (int)o->smoother);
  if (o->bottom < STRATA_MG_BOTTOM_DEFAULT || o->bottom > STRATA_MG_BOTTOM_SMOOTH)
    return strata__fail_arg(ctx, STRATA_EINVAL, "bottom", (int)o->bottom,
                            "multigrid: unknown bottom solver %d",
                            (int)o->bottom);
  if (o->face_mean != STRATA_MG_HARMONIC && o->face_mean != STRATA_MG_ARITHMETIC)
    return strata__fail_arg(ctx, STRATA_EINVAL, "face_mean",
                            (int)o->face_mean,
                            "multigrid: unknown face mean %d",
                            (int)o->face_mean);
  if (o->omega != 0 && !(o->omega > 0 && o->omega <= 1))
    return strata__fail_arg(ctx, STRATA_EINVAL, "omega", o->omega,
                            "multigrid: Jacobi weight omega %g is outside (0, "
                            "1], where the variable-coefficient sweep is "
                            "stable", o->omega);
  if (o->graph != 0 && o->graph != 1)
    return strata__fail_arg(ctx, STRATA_EINVAL, "graph", o->graph,
                            "multigrid: graph is %d; it must be 0 or 1",
                            o->graph);
  if (o->graph && o->bottom != STRATA_MG_BOTTOM_SMOOTH)
    return strata__fail_arg(ctx, STRATA_EINVAL, "bottom", (int)o->bottom,
                            "multigrid: graph = 1 needs bottom = "
                            "STRATA_MG_BOTTOM_SMOOTH (CG reads a dot product "
                            "back every iteration, which a recording cannot "
                            "do)");
  if (o->dist && strata__dist_ctx(o->dist) != ctx)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "dist", o->dist,
                              "multigrid: with dist set, ctx must be "
                              "strata_dist_context(dist)");
  if (o->agglomerate < 0)
    return strata__fail_arg(ctx, STRATA_EINVAL, "agglomerate",
                            o->agglomerate,
                            "multigrid: agglomerate is %d; it must be 0 "
                            "(automatic) or a level >= 1", o->agglomerate);
  if (o->graph && o->profile)
    return strata__fail_arg(ctx, STRATA_EINVAL, "profile", o->profile,
                            "multigrid: graph = 1 and profile = 1 exclude "
                            "each other (profiling waits for the device at "
                            "every level)");
  const strata__backend *be = ctx->be;
  if (!be->fv_residual || !be->fv_gsrb || !be->fv_update || !be->fv_restrict ||
      !be->fv_prolong || !be->fv_dot || !be->mg_axpby || !be->mg_ghosts)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "multigrid: the %s backend has no variable-"
                        "coefficient (finite-volume) multigrid kernels",
                        be->name);
  return STRATA_OK;
}

/* Resolves the defaults; the caller has checked *opt. */
static void resolve_fv(strata_mg_options *opt) {
  if (opt->smoother == STRATA_MG_SMOOTHER_DEFAULT) opt->smoother = STRATA_MG_GSRB;
  if (opt->bottom == STRATA_MG_BOTTOM_DEFAULT) opt->bottom = STRATA_MG_BOTTOM_CG;
  /* the 7-point (5-point) constant-coefficient smoothing optimum */
  if (opt->omega == 0) opt->omega = opt->dims == 3 ? 6.0 / 7 : 4.0 / 5;
  if (opt->rtol < 0) opt->rtol = 1e-10;
}

/* Cells per axis of every level: all axes coarsen together while each is
 * even and at least 4 (the coarsest has at least 2 cells per axis). */
static int levels_of(const strata_mg_options *o, long n[][3]) {
  int nl = 1;
  for (int a = 0; a < 3; a++) n[0][a] = (long)o->n[a];
  while (nl < MG_MAX_LEVELS && (o->max_levels == 0 || nl < o->max_levels)) {
    int ok = 1;
    for (int a = 0; a < o->dims; a++)
      if (n[nl - 1][a] < 4 || n[nl - 1][a] % 2) ok = 0;
    if (!ok) break;
    for (int a = 0; a < 3; a++)
      n[nl][a] = a < o->dims ? n[nl - 1][a] / 2 : 1;
    nl++;
  }
  return nl;
}

/* Over P > 1 ranks: the gather level gl (levels [0, gl) split, [gl, nlev)
 * whole on rank 0), or 0 when the split cannot carry the hierarchy (why
 * says so).  Level l is split only while every rank's slab halves exactly
 * down to it (its planes n_z / (P 2^l) a whole number: the
 * children of a coarse cell on one rank, every slab starting on an even
 * plane, so red-black colours agree) and, by the cost rule, while a pass
 * over it saves more by the split than an exchange costs: cells_l (1 -
 * 1/P) w / M > lat + A_l 8 / B, w = 64 bytes a cell (a red-black step's
 * u, b, dinv, faces), A_l the cells of a plane, M, B, lat the machine
 * numbers of the distributed layer (tuning switches dist_mem_gbs,
 * dist_link_gbs, dist_link_us).  The coarsest level is always gathered. */
static int gather_level(const strata_context *ctx, const strata_mg_options *o,
                        int nlev, long n[][3], int P, char *why,
                        size_t wn) {
  const int ax = o->dims - 1;
  const long nz = (long)o->n[ax];
  if (nz % (2L * P)) {
    snprintf(why, wn, "every rank must hold an even number of planes (a "
             "multiple of %d in all)", 2 * P);
    return 0;
  }
  if (nlev < 2) {
    snprintf(why, wn, "the grid has one level (an axis is odd or below 4 "
             "cells), so there is no coarse level to gather");
    return 0;
  }
  int deep = 1; /* the deepest level every slab halves to */
  while (deep < nlev - 1 && (nz / P) % (2L << deep) == 0) deep++;
  if (o->agglomerate > 0) return o->agglomerate < deep ? o->agglomerate : deep;
  const int cuda = strata_context_backend(ctx) == STRATA_BACKEND_CUDA;
  const double mem = strata__tuning_double(ctx, "dist_mem_gbs",
                                           cuda ? 2320 : 10) * 1e9,
               link = strata__tuning_double(ctx, "dist_link_gbs",
                                            cuda ? 159 : INFINITY) * 1e9,
               lat = strata__tuning_double(ctx, "dist_link_us",
                                           cuda ? 42 : 0) * 1e-6;
  int gl = 1;
  while (gl < deep) {
    const double A = (double)n[gl][0] * (double)(o->dims == 3 ? n[gl][1] : 1),
                 cells = A * (double)n[gl][ax];
    const double saved = cells * (1 - 1.0 / P) * 64 / (mem > 0 ? mem : 1e10),
                 cost = lat + A * 8 / (link > 0 ? link : 1e-3);
    if (!(saved > cost)) break;
    gl++;
  }
  return gl;
}

/* The fields of level l: u (coarse levels), b, r, dinv, beta per axis,
 * Chebyshev's d, CG's p, q, z on the coarsest. */
static int fields_of(const strata_mg_options *o, int l, int nlev) {
  int k = 3 + o->dims + (l > 0);
  if (o->smoother == STRATA_MG_CHEBYSHEV) k++;
  if (l == nlev - 1 && o->bottom == STRATA_MG_BOTTOM_CG) k += 3;
  return k;
}

static strata_field_desc desc_of(const strata_mg_options *o, const long *n) {
  strata_field_desc d = {o->dims, {(size_t)n[0], (size_t)n[1], (size_t)n[2]},
                         1, STRATA_F64};
  return d;
}

/* Values in a ghosted dense array (the layout of
 * strata_field_write_ghosted: one ghost each side of the axes below
 * dims). */
static size_t gsize(int dims, const long *n) {
  return (size_t)(n[0] + 2) * (size_t)(n[1] + 2) *
         (size_t)(dims == 3 ? n[2] + 2 : 1);
}
static size_t gi(int dims, const long *n, long i, long j, long k) {
  return (size_t)(i + 1) +
         (size_t)(n[0] + 2) * ((size_t)(j + 1) +
                               (size_t)(n[1] + 2) * (size_t)(dims == 3 ? k + 1 : 0));
}

strata_status strata__mgfv_footprint(strata_context *ctx,
                                     const strata_mg_options *o,
                                     strata__footprint *fp) {
  strata_status s = strata__mg_check_options(ctx, o);
  if (s == STRATA_OK) s = check_fv(ctx, o);
  if (s != STRATA_OK) return s;
  strata_mg_options opt = *o;
  resolve_fv(&opt);
  long n[MG_MAX_LEVELS][3];
  int nlev = levels_of(&opt, n), gl = nlev, P = 1;
  const int ax = opt.dims - 1;
  if (opt.dist && (P = strata_dist_size(opt.dist)) > 1) {
    char why[160], nm[STRATA__ARGNAME_SIZE];
    gl = gather_level(ctx, &opt, nlev, n, P, why, sizeof why);
    if (!gl)
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "n", ax),
                              opt.n[ax],
                              "multigrid: %zu cells along %c cannot be split "
                              "over %d ranks: %s", opt.n[ax], "xyz"[ax], P,
                              why);
  }
  memset(fp, 0, sizeof *fp);
  strata__fp_host(fp, sizeof(strata_mg) + sizeof(strata__mgfv) +
                          ((size_t)opt.max_cycles + 2) * sizeof(double));
  /* split levels hold a slab (n_z / P planes: P divides it there); the
   * gathered ones whole (counted on every rank: rank 0's footprint) */
  for (int l = 0; l < nlev && s == STRATA_OK; l++) {
    long nl[3] = {n[l][0], n[l][1], n[l][2]};
    if (l < gl) nl[ax] /= P;
    strata_field_desc d = desc_of(&opt, nl);
    for (int k = fields_of(&opt, l, nlev) + 2 * (l == gl && P > 1);
         k > 0 && s == STRATA_OK; k--)
      s = strata__fp_field(ctx, fp, &d);
  }
  /* set_coefficients: the faces, alpha and dinv of two levels at once */
  strata__fp_host_peak(fp, (size_t)(2 * opt.dims + 5) * gsize(opt.dims, n[0]) *
                               sizeof(double));
  return s;
}

/* ---- coefficients ------------------------------------------------------- */

static double face_mean(int how, double a, double b) {
  return how == STRATA_MG_ARITHMETIC ? 0.5 * (a + b) : 2 * a * b / (a + b);
}

/* Level 0's faces along axis ax from the cells' beta (NULL = 1). */
static void faces0(const strata_mg *mg, int ax, const double *beta,
                   double *bf) {
  const strata_mg_options *o = &mg->o;
  const long *n = mg->fv->lev[0].n;
  const int per = o->bc.kind[2 * ax] == STRATA_BC_PERIODIC;
  /* the face at index m along ax lies between cells m - 1 and m */
  long lim[3] = {n[0], n[1], n[2]};
  lim[ax] = n[ax] + 1;
  for (long k = 0; k < lim[2]; k++)
    for (long j = 0; j < lim[1]; j++)
      for (long i = 0; i < lim[0]; i++) {
        long c[3] = {i, j, k}, m = c[ax];
        long lo[3] = {i, j, k}, hi[3] = {i, j, k};
        lo[ax] = m - 1;
        if (m == 0 && per) lo[ax] = n[ax] - 1;
        if (m == n[ax]) hi[ax] = per ? 0 : m - 1;
        if (m == 0 && !per) lo[ax] = 0;
        double bl = 1, bh = 1;
        if (beta) {
          bl = beta[lo[0] + n[0] * (lo[1] + n[1] * lo[2])];
          bh = beta[hi[0] + n[0] * (hi[1] + n[1] * hi[2])];
        }
        bf[gi(o->dims, n, i, j, k)] = face_mean(o->face_mean, bl, bh);
      }
}

/* Coarse faces along ax: the mean of the fine faces covering each. */
static void faces_coarse(int dims, int ax, const long *nf, const double *ff,
                         const long *nc, double *cf) {
  long lim[3] = {nc[0], nc[1], nc[2]};
  lim[ax] = nc[ax] + 1;
  int q[3] = {1, 1, 1};
  for (int a = 0; a < dims; a++)
    if (a != ax) q[a] = 2;
  const double w = 1.0 / (q[0] * q[1] * q[2]);
  for (long k = 0; k < lim[2]; k++)
    for (long j = 0; j < lim[1]; j++)
      for (long i = 0; i < lim[0]; i++) {
        long c[3] = {i, j, k};
        double s = 0;
        for (int dk = 0; dk < q[2]; dk++)
          for (int dj = 0; dj < q[1]; dj++)
            for (int di = 0; di < q[0]; di++) {
              long f[3] = {q[0] == 2 ? 2 * c[0] + di : 2 * c[0],
                           q[1] == 2 ? 2 * c[1] + dj : 2 * c[1],
                           q[2] == 2 ? 2 * c[2] + dk : 2 * c[2]};
              for (int a = dims; a < 3; a++) f[a] = 0;
              s += ff[gi(dims, nf, f[0], f[1], f[2])];
            }
        cf[gi(dims, nc, i, j, k)] = w * s;
      }
}

static void alpha_coarse(int dims, const long *nf, const double *fa,
                         const long *nc, double *ca) {
  const int qz = dims == 3 ? 2 : 1;
  const double w = 1.0 / (4 * qz);
  for (long k = 0; k < nc[2]; k++)
    for (long j = 0; j < nc[1]; j++)
      for (long i = 0; i < nc[0]; i++) {
        double s = 0;
        for (int dk = 0; dk < qz; dk++)
          for (int dj = 0; dj < 2; dj++)
            for (int di = 0; di < 2; di++)
              s += fa[gi(dims, nf, 2 * i + di, 2 * j + dj, qz * k + dk)];
        ca[gi(dims, nc, i, j, k)] = w * s;
      }
}

/* 1/D per cell and the Gershgorin bound of D^-1 A on one level.  A face
 * on the boundary weighs 2 (Dirichlet: ghost -u), 0 (Neumann) or couples
 * to the wrapped cell (periodic, unless the axis has one cell). */
static double diagonal(const strata_mg *mg, const long *n, double h2,
                       double *const bf[3], const double *al, double *di) {
  const strata_mg_options *o = &mg->o;
  double lmax = 1;
  for (long k = 0; k < n[2]; k++)
    for (long j = 0; j < n[1]; j++)
      for (long i = 0; i < n[0]; i++) {
        long c[3] = {i, j, k};
        size_t p = gi(o->dims, n, i, j, k);
        double diag = al ? al[p] : 0, off = 0;
        for (int a = 0; a < o->dims; a++)
          for (int s = 0; s < 2; s++) {
            long f[3] = {i, j, k};
            if (s) f[a]++;
            double beta = h2 * bf[a][gi(o->dims, n, f[0], f[1], f[2])];
            int edge = s ? c[a] == n[a] - 1 : c[a] == 0;
            strata_bc_kind kind = o->bc.kind[2 * a + s];
            if (!edge || (kind == STRATA_BC_PERIODIC && n[a] > 1)) {
              diag += beta;
              off += beta;
            } else if (kind == STRATA_BC_DIRICHLET)
              diag += 2 * beta;
          }
        di[p] = diag > 0 ? 1 / diag : 0;
        if (diag > 0 && 1 + off / diag > lmax) lmax = 1 + off / diag;
      }
  return lmax;
}

/* The first cell (x fastest) where v is not finite or below lo (or at lo
 * when strict); -1 when none. */
static long bad_cell(const double *v, size_t count, double lo, int strict) {
  for (size_t p = 0; p < count; p++)
    if (!isfinite(v[p]) || v[p] < lo || (strict && v[p] == lo)) return (long)p;
  return -1;
}

static strata_status bad_value(strata_mg *mg, const char *name, long p,
                               double v, const char *rule) {
  const long *n = mg->fv->lev[0].n;
  long i = p % n[0], j = p / n[0] % n[1], k = p / (n[0] * n[1]);
  return strata__fail_arg(mg->ctx, STRATA_EINVAL, name, v,
                          "multigrid: %s at cell (%ld, %ld, %ld) is %g; it "
                          "must be %s and finite", name, i, j, k, v, rule);
}

/* A field of level l's shape: split over the ranks (l < gl, or split),
 * whole on rank 0 (l >= gl), none (NULL) on the other ranks there.  The
 * split fields are collective (every rank fails or none). */
static strata_status level_field(strata_mg *mg, int l, int split,
                                 strata_field **f) {
  strata__mgfv *fv = mg->fv;
  strata_field_desc d = desc_of(&mg->o, fv->lev[l].n);
  if (fv->dist && (split || l < fv->gl))
    return strata_dist_field_create(fv->dist, &d, f);
  if (fv->dist && !fv->root) return STRATA_OK;
  return strata_field_create(mg->ctx, &d, f);
}

/* Writes a level's ghosted host array (the whole grid's) into f: all of
 * it, or on a split field the slab's planes with one ghost plane each
 * side; nothing where this rank does not hold the level (f NULL). */
static strata_status put(strata_field *f, const double *a) {
  if (!f) return STRATA_OK;
  if (!f->win) return strata_field_write_ghosted(f, a);
  const size_t plane = (f->d.n[0] + 2) * (f->d.dims == 3 ? f->d.n[1] + 2 : 1);
  return strata_field_write_ghosted(f, a + (size_t)f->win->own_lo * plane);
}

/* Builds level l's coefficients from level l - 1's host arrays (or from
 * the cells on level 0) into bf/al/di and uploads them. */
static strata_status upload(strata_mg *mg, int l, double *const bf[3],
                            const double *al, double *di) {
  strata__mgfv *fv = mg->fv;
  fv_level *L = &fv->lev[l];
  double h = ldexp(mg->o.h, l);
  L->op.h2inv = 1 / (h * h);
  L->lmax = diagonal(mg, L->n, L->op.h2inv, bf, fv->has_alpha ? al : NULL, di);
  strata_status s = STRATA_OK;
  for (int a = 0; a < mg->o.dims && s == STRATA_OK; a++)
    s = put(L->beta[a], bf[a]);
  if (s == STRATA_OK) s = put(L->dinv, di);
  if (s == STRATA_OK && fv->has_alpha) {
    if (!L->alpha) s = level_field(mg, l, 0, &L->alpha);
    if (s == STRATA_OK) s = put(L->alpha, al);
  } else if (!fv->has_alpha)
    strata_field_destroy(&L->alpha);
  L->op.alpha = L->alpha;
  return s;
}

strata_status strata_mg_set_coefficients(strata_mg *mg, const double *beta,
                                         const double *alpha) {
  if (!mg) return STRATA_EINVAL;
  strata__mgfv *fv = mg->fv;
  if (!fv)
    return strata__fail_arg_s(mg->ctx, STRATA_EINVAL, "disc", "set",
                              "multigrid: coefficients need the finite-volume "
                              "discretisation (disc = STRATA_MG_FV)");
  const int dims = mg->o.dims;
  const long *n0 = fv->lev[0].n;
  strata__mgfv_forget(mg->ctx, fv); /* they hold the old coefficients */
  const size_t cells = (size_t)n0[0] * (size_t)n0[1] * (size_t)n0[2];
  long p;
  if (beta && (p = bad_cell(beta, cells, 0, 1)) >= 0)
    return bad_value(mg, "beta", p, beta[p], "positive");
  if (alpha && (p = bad_cell(alpha, cells, 0, 0)) >= 0)
    return bad_value(mg, "alpha", p, alpha[p], "non-negative");
  int has_alpha = 0;
  for (size_t q = 0; alpha && q < cells && !has_alpha; q++)
    has_alpha = alpha[q] > 0;
  fv->has_alpha = has_alpha;
  fv->singular = !fv->dirichlet && !has_alpha;

  const size_t g0 = gsize(dims, n0);
  double *buf = calloc((size_t)(2 * dims + 5) * g0, sizeof(double));
  if (!buf)
    return strata__fail(mg->ctx, STRATA_ENOMEM,
                        "multigrid: out of host memory building the "
                        "coefficients (%zu bytes)",
                        (size_t)(2 * dims + 5) * g0 * sizeof(double));
  /* two sets (fine, coarse) of dims faces + alpha, and one dinv */
  double *set[2][4], *di = buf + (size_t)(2 * dims + 4) * g0;
  for (int h = 0; h < 2; h++)
    for (int a = 0; a < 4; a++)
      set[h][a] = a < dims ? buf + (size_t)(h * (dims + 1) + a) * g0
                  : a == 3 ? buf + (size_t)(h * (dims + 1) + dims) * g0
                           : NULL;
  double *bf[3] = {set[0][0], set[0][1], set[0][2]}, *al = set[0][3];
  for (int a = 0; a < dims; a++) faces0(mg, a, beta, bf[a]);
  for (long k = 0; k < n0[2] && has_alpha; k++)
    for (long j = 0; j < n0[1]; j++)
      for (long i = 0; i < n0[0]; i++)
        al[gi(dims, n0, i, j, k)] = alpha[i + n0[0] * (j + n0[1] * k)];
  strata_status s = upload(mg, 0, bf, al, di);
  for (int l = 1; l < fv->nlev && s == STRATA_OK; l++) {
    const long *nf = fv->lev[l - 1].n, *nc = fv->lev[l].n;
    double *cf[3] = {set[l & 1][0], set[l & 1][1], set[l & 1][2]};
    double *ca = set[l & 1][3];
    double *ff[3] = {set[(l - 1) & 1][0], set[(l - 1) & 1][1],
                     set[(l - 1) & 1][2]};
    for (int a = 0; a < dims; a++) {
      memset(cf[a], 0, gsize(dims, nc) * sizeof(double));
      faces_coarse(dims, a, nf, ff[a], nc, cf[a]);
    }
    if (has_alpha) alpha_coarse(dims, nf, set[(l - 1) & 1][3], nc, ca);
    memset(di, 0, gsize(dims, nc) * sizeof(double));
    s = upload(mg, l, cf, ca, di);
  }
  free(buf);
  return fv->dist ? strata__dist_agree(fv->dist, s) : s;
}

/* ---- create and destroy ------------------------------------------------- */

void strata__mgfv_forget(strata_context *ctx, strata__mgfv *fv) {
  for (int q = 0; q < 2; q++) {
    if (fv->rec[q].graph && ctx->be->graph_free)
      ctx->be->graph_free(ctx, fv->rec[q].graph);
    fv->rec[q].graph = NULL;
  }
  fv->rec_phi = NULL;
}

void strata__mgfv_destroy(strata_context *ctx, strata__mgfv *fv) {
  if (!fv) return;
  strata__mgfv_forget(ctx, fv);
  for (int l = 0; l < MG_MAX_LEVELS; l++) {
    fv_level *L = &fv->lev[l];
    strata_field **f[] = {&L->b, &L->r, &L->d, &L->dinv, &L->alpha,
                          &L->beta[0], &L->beta[1], &L->beta[2],
                          &L->p, &L->q, &L->z};
    if (l > 0) strata_field_destroy(&L->u);
    for (size_t q = 0; q < sizeof f / sizeof *f; q++)
      strata_field_destroy(f[q]);
  }
  strata_field_destroy(&fv->gb);
  strata_field_destroy(&fv->gu);
  free(fv);
}

/* Level l's fields and operator. */
static strata_status level_fields(strata_mg *mg, int l) {
  fv_level *L = &mg->fv->lev[l];
  const strata_mg_options *o = &mg->o;
  strata_field **want[11] = {&L->b, &L->r, &L->dinv};
  int k = 3;
  for (int a = 0; a < o->dims; a++) want[k++] = &L->beta[a];
  if (l > 0) want[k++] = &L->u;
  if (o->smoother == STRATA_MG_CHEBYSHEV) want[k++] = &L->d;
  if (l == mg->fv->nlev - 1 && o->bottom == STRATA_MG_BOTTOM_CG) {
    want[k++] = &L->p;
    want[k++] = &L->q;
    want[k++] = &L->z;
  }
  for (int q = 0; q < k; q++) {
    strata_status s = level_field(mg, l, 0, want[q]);
    if (s != STRATA_OK) return s;
  }
  L->op.dims = o->dims;
  for (int a = 0; a < 3; a++) L->op.beta[a] = L->beta[a];
  L->op.dinv = L->dinv;
  return STRATA_OK;
}

/* The per-level info of strata_mg_get_level. */
static void level_info(strata_mg *mg, int l) {
  mg_level *I = &mg->lev[l];
  for (int a = 0; a < 3; a++) {
    I->ax[a].n = mg->fv->lev[l].n[a];
    I->ax[a].d[0] = I->ax[a].d[1] = a < mg->o.dims ? 0.5 : 0;
    I->offset[a] = l > 0 && a < mg->o.dims ? 0.5 : 0;
    I->ratio[a] = a < mg->o.dims ? 2 : 1;
  }
  I->exact = 1;
  I->ranks = mg->fv->dist && l < mg->fv->gl ? strata_dist_size(mg->fv->dist)
                                            : 1;
}

strata_status strata__mgfv_create(strata_context *ctx,
                                  const strata_mg_options *o, strata_mg **out) {
  strata__footprint fp;
  strata_status s = strata__mgfv_footprint(ctx, o, &fp);
  if (s == STRATA_OK) s = strata__fp_check(ctx, "multigrid", &fp);
  if (s != STRATA_OK) return s;
  strata_mg *mg = calloc(1, sizeof *mg);
  strata__mgfv *fv = calloc(1, sizeof *fv);
  double *hist = calloc((size_t)o->max_cycles + 2, sizeof *hist);
  if (!mg || !fv || !hist) {
    free(mg);
    free(fv);
    free(hist);
    return strata__fail(ctx, STRATA_ENOMEM, "multigrid: out of host memory");
  }
  mg->ctx = ctx;
  mg->o = *o;
  resolve_fv(&mg->o);
  mg->fv = fv;
  mg->hist = hist;
  mg->omega = mg->o.omega;
  long n[MG_MAX_LEVELS][3];
  fv->nlev = mg->nlev = levels_of(&mg->o, n);
  fv->smoother = mg->o.smoother;
  fv->bottom = mg->o.bottom;
  for (int f = 0; f < 6; f++) {
    strata_bc_kind k = mg->o.bc.kind[f];
    fv->ghost.kind[f] = k == STRATA_BC_PERIODIC  ? STRATA__MG_PERIODIC
                        : k == STRATA_BC_NEUMANN ? STRATA__MG_MIRROR
                                                 : STRATA__MG_LINEAR;
    fv->ghost.alpha[f] = -1; /* the face halfway to the ghost: ghost = -u */
    if (f < 2 * mg->o.dims && k == STRATA_BC_DIRICHLET) fv->dirichlet = 1;
  }
  fv->gl = fv->nlev;
  if (o->dist && strata_dist_size(o->dist) > 1) {
    char why[160];
    fv->dist = o->dist;
    fv->root = strata_dist_rank(o->dist) == 0;
    fv->gl = gather_level(ctx, &mg->o, fv->nlev, n, strata_dist_size(o->dist),
                          why, sizeof why);
  }
  for (int l = 0; l < fv->nlev; l++) {
    memcpy(fv->lev[l].n, n[l], sizeof n[l]);
    level_info(mg, l);
  }
  /* the collective (split) fields first, so that a failure on rank 0's
   * whole levels leaves no rank waiting in a creation */
  if (fv->dist) s = level_field(mg, fv->gl, 1, &fv->gb);
  if (fv->dist && s == STRATA_OK) s = level_field(mg, fv->gl, 1, &fv->gu);
  for (int l = 0; l < fv->nlev && s == STRATA_OK; l++) s = level_fields(mg, l);
  if (fv->dist) s = strata__dist_agree(fv->dist, s);
  /* one gather and one scatter now: NCCL connects rank 0 with the ranks
   * that are not its neighbours on first use, which costs a good part of
   * a second, here rather than in the first solve */
  if (fv->dist && s == STRATA_OK)
    s = strata__dist_planes(fv->gb, fv->lev[fv->gl].b, 0, 1);
  if (fv->dist && s == STRATA_OK)
    s = strata__dist_planes(fv->gu, fv->lev[fv->gl].u, 0, 0);
  if (s == STRATA_OK) s = strata_mg_set_coefficients(mg, NULL, NULL);
  if (s != STRATA_OK) {
    strata_mg_destroy(&mg);
    return s;
  }
  *out = mg;
  return STRATA_OK;
}
