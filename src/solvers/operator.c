/* The operator "solver" of the solver interface: u <- op(u) step after
 * step, with u's ghosts filled from the boundary conditions (over several
 * processes, strata_dist_apply: ghosts, exchange and operator). */
#include "solvers_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct strata__op {
  strata_context *ctx;
  strata_stencil op;
  strata_boundary bc;
  strata_dist *dist;
  strata_field *u, *v;
  strata_apply_options ao;
  char variant[128];
  long steps;
};

void strata_operator_options_init(strata_operator_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->dims = 2;
  o->n[0] = 256;
  o->n[1] = 256;
  o->n[2] = 1;
  o->precision = STRATA_F32;
  strata_stencil_laplacian(&o->op, 2, 2, 1.0);
  strata_boundary_uniform(&o->bc, STRATA_BC_DIRICHLET, 0.0);
}

/* v = op(u) with u's ghosts filled. */
static strata_status apply_once(strata__op *p) {
  if (p->dist) return strata_dist_apply(&p->op, p->u, &p->bc, p->v, &p->ao);
  strata_status s = strata_field_fill_ghosts(p->u, &p->bc);
  return s == STRATA_OK ? strata_apply(&p->op, p->u, p->v, &p->ao) : s;
}

strata_status strata__op_create(strata_context *ctx,
                                const strata_operator_options *o,
                                strata__op **out) {
  *out = NULL;
  if (o->op.dims != o->dims)
    return strata__fail_arg(ctx, STRATA_EINVAL, "op.dims", o->op.dims,
                            "operator: the stencil is %dD, "
                        "the grid %dD", o->op.dims, o->dims);
  strata_status s = strata__stencil_check(ctx, &o->op, "operator");
  if (s != STRATA_OK) return s;
  strata__op *p = calloc(1, sizeof *p);
  if (!p) return strata__fail(ctx, STRATA_ENOMEM, "operator: out of memory");
  p->ctx = ctx;
  p->op = o->op;
  p->bc = o->bc;
  p->dist = o->dist;
  snprintf(p->variant, sizeof p->variant, "%s",
           o->variant ? o->variant : "auto");
  p->ao.variant = p->variant;
  strata_field_desc d = {o->dims, {o->n[0], o->n[1], o->n[2]},
                         o->op.radius < 1 ? 1 : o->op.radius, o->precision};
  if (o->dist) {
    s = strata_dist_field_create(o->dist, &d, &p->u);
    if (s == STRATA_OK) s = strata_dist_field_create(o->dist, &d, &p->v);
  } else {
    s = strata_field_create(ctx, &d, &p->u);
    if (s == STRATA_OK) s = strata_field_create(ctx, &d, &p->v);
  }
  if (s == STRATA_OK) s = strata_field_fill(p->v, 0);
  if (s == STRATA_OK)
    s = o->init ? strata_field_fill_fn(p->u, o->init, o->init_user)
                : strata_field_fill(p->u, 0);
  /* over several processes the trial is collective: every rank whose
   * fields exist takes part, whatever its fills gave */
  strata_status t = p->u && p->v && (s == STRATA_OK || p->dist)
                        ? apply_once(p)
                        : STRATA_OK;
  if (s == STRATA_OK) s = t;
  if (s != STRATA_OK) {
    strata__op_destroy(&p);
    return s;
  }
  *out = p;
  return STRATA_OK;
}

void strata__op_destroy(strata__op **pp) {
  if (!pp || !*pp) return;
  strata_field_destroy(&(*pp)->u);
  strata_field_destroy(&(*pp)->v);
  free(*pp);
  *pp = NULL;
}

strata_status strata__op_step(strata__op *p, long n) {
  for (long i = 0; i < n; i++) {
    strata_status s = apply_once(p);
    if (s != STRATA_OK) return s;
    strata_field *t = p->u;
    p->u = p->v;
    p->v = t;
    p->steps++;
  }
  return STRATA_OK;
}

strata_field *strata__op_field(strata__op *p) { return p ? p->u : NULL; }
long strata__op_steps(const strata__op *p) { return p ? p->steps : 0; }
void strata__op_set_steps(strata__op *p, long steps) {
  if (p) p->steps = steps;
}
