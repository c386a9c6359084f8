/* The multigrid solver's handle and level hierarchy, shared by
 * multigrid.c (options, creation, the hierarchy and its transfer tables)
 * and mg_cycle.c (the cycles, the solve and the level info).  Kept out of
 * solvers_internal.h because nothing outside these two files needs the
 * layout.  Not installed. */
#ifndef STRATA_MG_INTERNAL_H
#define STRATA_MG_INTERNAL_H

#include "../core/internal.h"

#define MG_MAX_LEVELS 24

enum { AX_D = 0, AX_N = 1, AX_P = 2 };

typedef struct mg_axis {
  long n;
  int kind[2];  /* AX_* of the low and high face */
  double d[2];  /* face distances, in the level's spacing */
} mg_axis;

typedef struct mg_level {
  mg_axis ax[3];
  strata_field *x[2]; /* iterate and scratch (ping-pong); finest: x[0] is
                         the user's phi during a solve */
  strata_field *b;    /* right-hand side (NULL on the finest: psi) */
  int cur;            /* x[cur] holds the iterate */
  strata__mg_ghost ghost;
  double offset[3];   /* point 0 in the finer level's index space */
  double ratio[3];    /* spacing in the finer level's spacings (2, or
                         just under 2 on approximate axes) */
  int exact;
  int ranks;          /* ranks the level is split over */
  /* transfers between this level and the next coarser one */
  strata__mg_band rb[3], pb[3];
  void *mem[12];
  int nmem;
  long sweeps;
  double seconds;
} mg_level;

typedef struct strata__mgfv strata__mgfv; /* mg_fv.h */

struct strata_mg {
  strata_context *ctx;
  strata__mgfv *fv;                /* FV (variable coefficients), else NULL */
  strata_mg_options o;
  strata__mg_op op;
  double sigma, bscale, omega, jw; /* jw = omega / C0 */
  double lmax;                     /* largest eigenvalue of the symbol */
  int singular;                    /* no Dirichlet face */
  int nlev;
  mg_level lev[MG_MAX_LEVELS];
  double *hist;
  /* solve state */
  const strata_field *psi;
  double bshift;
  int prof_level;
  double prof_t;
};

/* The checks on the options that every discretisation shares
 * (multigrid.c). */
strata_status strata__mg_check_options(strata_context *ctx,
                                       const strata_mg_options *o);

/* Returns the status of x when it is not STRATA_OK. */
#define TRY(x)                                                                 \
  do {                                                                         \
    strata_status s_ = (x);                                                    \
    if (s_ != STRATA_OK) return s_;                                            \
  } while (0)

#endif
