/* The CPU engine's multigrid kernels: the weighted-Jacobi sweep (fused
 * with the residual and its norm), the separable banded transfer used for
 * restriction and prolongation, axpby with a sum, and the ghost rules of
 * coarse levels.  Registered in strata__cpu_backend (cpu.c); the cycles
 * that use them are in src/solvers/mg_cycle.c. */
#define _GNU_SOURCE
#include "cpu_internal.h"

#include <stdlib.h>


/* Levels with fewer points run on one thread. */
#define MG_PAR_MIN 32768

#define CPU_BODY "cpu_multigrid.inc"
#include "cpu_precisions.h"

/* The specialised shape of the operator (see mg_s in the .inc). */
static int shape_of(const strata__mg_op *op) {
  if (op->dims == 2) return op->c[2] == 0 ? 5 : 9;
  if (op->c[2] == 0 && op->c[3] == 0) return 7;
  return op->c[1] == 0 ? 26 : 27;
}

strata_status strata__cpu_mg_sweep(const strata__mg_sweep_args *a) {
  int nt = nthreads(a->u->ctx), shape = shape_of(&a->op);
  double r2;
  if (a->u->d.precision == STRATA_F32)
    r2 = mg_sweep_f32(a, shape, nt);
  else
    r2 = mg_sweep_f64(a, shape, nt);
  if (a->res2) *a->res2 = r2;
  return STRATA_OK;
}

strata_status strata__cpu_mg_transfer(const strata__mg_transfer_args *a) {
  strata_context *ctx = a->out->ctx;
  int nt = nthreads(ctx);
  long stride = ((long)a->in->d.n[0] + 15) / 16 * 16;
  void *scratch = malloc((size_t)nt * (size_t)stride * a->in->esize);
  if (!scratch)
    return strata__fail(ctx, STRATA_ENOMEM,
                        "multigrid transfer: cannot allocate %d row buffers "
                        "of %ld values", nt, stride);
  if (a->in->d.precision == STRATA_F32)
    mg_transfer_f32(a, scratch, stride, nt);
  else
    mg_transfer_f64(a, scratch, stride, nt);
  free(scratch);
  return STRATA_OK;
}

strata_status strata__cpu_mg_axpby(strata_field *y, const strata_field *x,
                                   double a, double b, double c,
                                   double *sum) {
  int nt = nthreads(y->ctx);
  double s;
  if (y->d.precision == STRATA_F32)
    s = mg_axpby_f32(y, x, a, b, c, sum != NULL, nt);
  else
    s = mg_axpby_f64(y, x, a, b, c, sum != NULL, nt);
  if (sum) *sum = s;
  return STRATA_OK;
}

strata_status strata__cpu_mg_ghosts(strata_field *f,
                                    const strata__mg_ghost *g) {
  int nt = nthreads(f->ctx);
  if (f->d.precision == STRATA_F32)
    mg_ghosts_f32(f, g, nt);
  else
    mg_ghosts_f64(f, g, nt);
  return STRATA_OK;
}
