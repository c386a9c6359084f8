/* The CPU engine's solver kernels: fused heat steps (temporal blocking),
 * the second-order wave step (acoustic and explicit FDTD) with sponge,
 * CPML, free-surface, periodic and Mur faces, the Yee TM step, and point
 * sampling for receivers.  Registered in strata__cpu_backend (cpu.c). */
#define _GNU_SOURCE
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

#define CPU_BODY "cpu_solvers.inc"
#include "cpu_precisions.h"

strata_status strata__cpu_apply_fused(const strata_stencil *op,
                                      const strata_boundary *bc, int steps,
                                      const strata_field *in,
                                      strata_field *out, long k0, long k1) {
  strata_context *ctx = in->ctx;
  if (op->kind != STRATA_STENCIL_STAR &&
      op->kind != STRATA_STENCIL_BOX_SYMMETRIC)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "apply_fused: the CPU engine fuses star and "
                        "symmetric 27-point stencils only");
  if (steps < 1 || in->d.ghost < op->radius * steps)
    return strata__fail(ctx, STRATA_EGHOST,
                        "apply_fused: %d fused steps of a radius-%d stencil "
                        "need ghost width %d, the field has %d",
                        steps, op->radius, op->radius * steps, in->d.ghost);
  const long n = (long)in->d.n[in->d.dims - 1];
  if (k0 < 0 || k1 > n || k0 >= k1)
    return strata__fail(ctx, STRATA_EINVAL,
                        "apply_fused: output planes [%ld, %ld) are not a "
                        "part of [0, %ld)", k0, k1, n);
  int failed = 0, nt = nthreads(ctx);
  if (in->d.precision == STRATA_F32)
    fused_f32(op, bc, steps, in, out, k0, k1, nt, &failed);
  else
    fused_f64(op, bc, steps, in, out, k0, k1, nt, &failed);
  if (failed)
    return strata__fail(ctx, STRATA_ENOMEM,
                        "apply_fused: cannot allocate the tile buffers");
  return STRATA_OK;
}

strata_status strata__cpu_wave_step(const strata__wave_args *a) {
  strata_context *ctx = a->u->ctx;
  int failed = 0, nt = nthreads(ctx);
  if (a->u->d.precision == STRATA_F32)
    wave_f32(a, nt, &failed);
  else
    wave_f64(a, nt, &failed);
  if (failed)
    return strata__fail(ctx, STRATA_ENOMEM,
                        "wave step: cannot allocate a row buffer");
  return STRATA_OK;
}

strata_status strata__cpu_yee_step(const strata__yee_args *a) {
  int nt = nthreads(a->ez->ctx);
  if (a->ez->d.precision == STRATA_F32)
    yee_f32(a, nt);
  else
    yee_f64(a, nt);
  return STRATA_OK;
}

strata_status strata__cpu_sample(const strata_field *f, int npts, int nw,
                                 const long *off, const double *w,
                                 double *dst) {
  if (f->d.precision == STRATA_F32)
    sample_f32(f, npts, nw, off, w, dst);
  else
    sample_f64(f, npts, nw, off, w, dst);
  return STRATA_OK;
}
