/* The variable-coefficient (cell-centred finite-volume) multigrid inside
 * strata_mg (opt.disc = STRATA_MG_FV): its level hierarchy, shared by
 * mg_fv_setup.c (hierarchy, coefficients, create, destroy, footprint) and
 * mg_fv.c (smoothers, bottom solver, cycles, full multigrid, the solve).
 * Not installed. */
#ifndef STRATA_MG_FV_H
#define STRATA_MG_FV_H

#include "mg_internal.h"

typedef struct fv_level {
  long n[3];
  strata__fv_op op;   /* h2inv, the coefficient fields, dinv */
  strata_field *u;    /* iterate (level 0: the user's phi in a solve) */
  strata_field *b;    /* right-hand side (level 0: psi plus the Dirichlet
                         values' terms, mean removed when singular) */
  strata_field *r;    /* residual scratch */
  strata_field *d;    /* Chebyshev's step (that smoother only) */
  strata_field *dinv, *alpha, *beta[3];
  strata_field *p, *q, *z; /* CG's vectors (coarsest level, CG bottom) */
  double lmax;        /* Gershgorin bound of D^-1 A's spectrum */
} fv_level;

struct strata__mgfv {
  int nlev;
  fv_level lev[MG_MAX_LEVELS];
  strata__mg_ghost ghost; /* the cell-centred rules, every level */
  strata_mg_smoother smoother;
  strata_mg_bottom bottom;
  int dirichlet;          /* some face is Dirichlet */
  int has_alpha;          /* some alpha > 0 */
  int singular;           /* neither: defined up to a constant */
  double bshift;          /* the mean removed from the source (singular) */
  int prof_level;
  double prof_t;
  /* opt.graph: the recordings of the finest level's cycle (0) and of the
   * full-multigrid pass (1), with the sweeps per level each one does;
   * valid for the phi memory they were recorded with and until the
   * coefficients change */
  struct {
    void *graph;
    long sweeps[MG_MAX_LEVELS];
  } rec[2];
  const void *rec_phi;
  size_t rec_layout[3];
  /* several ranks (opt.dist): levels [0, gl) are split over the ranks in
   * slabs along the last axis; levels [gl, nlev) are whole on rank 0 and
   * absent (NULL fields) elsewhere; gb and gu are level gl's right-hand
   * side and iterate split over the ranks, the two ends of the gather.
   * One process (or one rank): dist NULL, gl = nlev. */
  strata_dist *dist;
  int root; /* this rank holds the gathered levels */
  int gl;
  strata_field *gb, *gu;
};

/* Create for opt.disc == STRATA_MG_FV (options already checked by
 * strata__mg_check_options): sets up *mg's FV part, beta = 1, alpha = 0. */
strata_status strata__mgfv_create(strata_context *ctx,
                                  const strata_mg_options *o, strata_mg **out);
void strata__mgfv_destroy(strata_context *ctx, strata__mgfv *fv);
/* Drops the recordings (opt.graph). */
void strata__mgfv_forget(strata_context *ctx, strata__mgfv *fv);
strata_status strata__mgfv_footprint(strata_context *ctx,
                                     const strata_mg_options *o,
                                     strata__footprint *fp);
/* The solve, phi and psi already checked against the solver. */
strata_status strata__mgfv_solve(strata_mg *mg, strata_field *phi,
                                 const strata_field *psi,
                                 strata_mg_result *res);

#endif
