/* The acoustic wave solver's handle and constants, shared by wave.c (option
 * checking, creation, the velocity and density models), wave_shot.c (the
 * source and receivers, the shot calls), wave_model.c (models from files)
 * and wave_step.c (time stepping, seismograms, info and saved states), so
 * that the parts of one solver see the same layout.  Not installed. */
#ifndef STRATA_WAVE_INTERNAL_H
#define STRATA_WAVE_INTERNAL_H

#include "solvers_internal.h"

#include <math.h>

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
  double *wavelet;  /* NULL: the Ricker; else wavelet_n samples (host) */
  size_t wavelet_n;
  double wavelet_dt;
  int rec_cap;     /* receivers rec_off and rec_w hold room for */
  int nrec;        /* receivers sampled here (with dist: this rank's) */
  int nrec_all;    /* receivers of the whole grid */
  int *rec_id;     /* host: global number of each receiver sampled here */
  double *rec_pos; /* host: x, y, z (m) of every receiver, nrec_all of
                      them, as last placed (create or set_receivers) */
  long *rec_off;   /* backend memory: 8 element offsets per receiver */
  double *rec_w;   /* backend memory: 8 weights per receiver */
  double *trace;   /* backend memory: [sample][receiver] */
  size_t cap, nsamples;
  long steps;
};

/* Trilinear weights of grid coordinate x (in points) on an axis of n nodes:
 * nodes i0, i0 + 1 with weights 1 - f, f. */
static inline void strata__wave_lin(double x, long n, long *i0, double *f) {
  long i = (long)floor(x);
  if (i > n - 2) i = n - 2;
  if (i < 0) i = 0;
  *i0 = i;
  *f = n > 1 ? x - (double)i : 0.0;
}

/* A property of layers (nlayers tops, increasing, and values) at depth z:
 * the value of the last layer whose top is at or above z; def above the
 * first. */
static inline double strata__wave_layer_value(int nlayers, const double *top,
                                              const double *value, double z,
                                              double def) {
  double v = def;
  for (int m = 0; m < nlayers; m++)
    if (top[m] <= z) v = value[m];
  return v;
}

/* The velocity model's options checked (wave.c): *lo and *hi receive the
 * lowest and highest velocity of the layers that reach a grid node. */
strata_status strata__wave_velocity_model(strata_context *ctx,
                                          const strata_wave_options *o,
                                          double *lo, double *hi);

/* The box of the grid a rank holds, along the solver's axes x, y, z: the
 * global index of its local 0 and its owned nodes [lo, hi) (the whole
 * axis without dist, for x, and for y on slabs). */
typedef struct strata__wave_box {
  long off[3], lo[3], hi[3];
} strata__wave_box;
/* The box of the engine's window win (NULL: the whole grid) of a solver of
 * options o and dims (2: a section, whose engine axes are x, z). */
void strata__wave_box_of(const strata_wave_options *o, int dims,
                         const strata__window *win, strata__wave_box *b);

/* The source's and receivers' check (wave.c) and placement (wave_shot.c),
 * used by create and by the shot calls: b is this rank's box. */
strata_status strata__wave_check_source(strata_context *ctx,
                                        const strata_wave_options *o);
void strata__wave_place_source(strata_wave *w, const strata_wave_options *o,
                               const strata__wave_box *b);
strata_status strata__wave_place_receivers(strata_context *ctx, strata_wave *w,
                                           const strata_wave_options *o,
                                           const strata__wave_box *b);
/* Receiver r of o (its x, y, z in o->receivers) is sampled on the rank of
 * box b: that rank owns its lower node along y and z (the upper ones may
 * be ghosts, exchanged before every sample). */
int strata__wave_receiver_here(const strata_wave_options *o, int r,
                               const strata__wave_box *b);
/* The source's value at time t: amplitude times the Ricker or the
 * wavelet set by strata_wave_set_wavelet. */
double strata__wave_source_value(const strata_wave *w, double t);

#endif
