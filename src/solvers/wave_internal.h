/* The acoustic wave solver's handle and constants, shared by wave.c (option
 * checking, creation, the velocity model) and wave_step.c (time stepping,
 * seismograms, info and saved states), so that the two halves of one solver
 * see the same layout.  Not installed. */
#ifndef STRATA_WAVE_INTERNAL_H
#define STRATA_WAVE_INTERNAL_H

#include "solvers_internal.h"

#define STRATA__RICKER_FMAX 2.5 /* highest significant frequency / f0 */

struct strata_wave {
  strata_context *ctx;
  strata_wave_options o; /* pointers cleared: the arrays are copied */
  strata__wengine *e;
  int radius;
  int dims;        /* 3, or 2 for an x-z section (n[1] == 1): the engine's
                    axes are then x and z */
  double dt, cfl_limit, vmin, vmax, delay;
  int nsrc;
  long src[8][3];
  double src_w[8];
  int nrec;        /* receivers sampled here (with dist: this rank's) */
  int nrec_all;    /* receivers of the whole grid */
  int *rec_id;     /* host: global number of each receiver sampled here */
  long *rec_off;   /* backend memory: 8 element offsets per receiver */
  double *rec_w;   /* backend memory: 8 weights per receiver */
  double *trace;   /* backend memory: [sample][receiver] */
  size_t cap, nsamples;
  long steps;
};

#endif
