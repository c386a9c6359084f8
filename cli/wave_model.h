/* The case's [model] section for the wave solver (wave_model.c). */
#ifndef STRATA_CLI_WAVE_MODEL_H
#define STRATA_CLI_WAVE_MODEL_H

#include "run.h"

/* The models on the grid (n[0] n[1] n[2] doubles, x fastest), or NULL. */
typedef struct run_wave_model {
  double *v, *rho;
} run_wave_model;

/* With [model] velocity: reads the velocity (and density) files, resamples
 * them onto the grid, checks them (values, CFL at the fastest point and
 * points per wavelength at the slowest, against o) and sets o->velocity
 * to the fastest.  Without it, leaves *wm empty.  With r->estimating the
 * models are kept aside (and *wm left empty) for the run's own call,
 * which takes them rather than reading the files again.  0, or -1 with
 * r->err naming the [model] key. */
int run_wave_model_load(run_state *r, strata_wave_options *o,
                        run_wave_model *wm);
/* Rank 0, with [output] interfaces (the default) and a model ([model]
 * files in *wm, or o's layers): r->interfaces (replaced) receives the
 * model's interfaces on the grid, for the PNG snapshots and the live
 * view's frames.  0, or -1 with r->err. */
int run_wave_interfaces(run_state *r, const strata_wave_options *o,
                        const run_wave_model *wm);
/* Hands the models to the solver r->sv and frees them.  0 or -1. */
int run_wave_model_apply(run_state *r, run_wave_model *wm);
void run_wave_model_free(run_wave_model *wm);
/* Host bytes the models take on the grid (the run's own copies), their
 * interfaces included. */
size_t run_wave_model_bytes(const run_state *r);

#endif
