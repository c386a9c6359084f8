/* The solver interface's handle, shared by solver.c (create, step,
 * fields, info) and solver_state.c (saved states and checkpoint files).
 * Not installed. */
#ifndef STRATA_SOLVER_INTERNAL_H
#define STRATA_SOLVER_INTERNAL_H

#include "solvers_internal.h"

#define MAX_FIELDS 3

struct strata_solver {
  strata_context *ctx;
  strata_solver_kind kind;
  strata_dist *dist;
  uint64_t tag;
  strata_heat *heat;
  strata_wave *wave;
  strata_fdtd *fdtd;
  strata_mg *mg;
  strata__op *op;
  int dims;
  size_t n[3];
  strata_precision precision;
  double h, dt;
  int nfields;
  const char *names[MAX_FIELDS];
  strata_fdtd_component comp[MAX_FIELDS];
  int yee;
  /* Poisson: the fields the solver owns, and the residuals */
  strata_field *phi, *psi;
  long cycles;
  double source_mean;
  double *hist;   /* RMS residual before the first cycle and after each */
  size_t nhist, hcap;
  /* wave: the sampling interval in steps, and the traces' last copy (the
   * receivers and the source are the wave solver's, which shots move) */
  int every;
  double *tbuf;
  size_t tcap;
  /* memory and the last step call */
  size_t dev_bytes;
  long last_n;
  double last_s;
};

/* "heat", "wave", ... by strata_solver_kind. */
extern const char *const strata__solver_kinds[6];
/* Steps (Poisson: cycles) done, counting a loaded state's. */
long strata__solver_steps(const strata_solver *s);
/* Room for n more residuals in the Poisson history. */
strata_status strata__solver_hist_room(strata_solver *s, size_t n);

/* The wave solver's receivers (every rank's count: the whole grid's); 0
 * for another kind. */
int strata__solver_nrec(const strata_solver *s);

#endif
