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
  int check_every;
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
  o->check_every = STRATA_CHECK_EVERY;
}

/* v = op(u) with u's ghosts filled. */
static strata_status apply_once(strata__op *p) {
  if (p->dist) return strata_dist_apply(&p->op, p->u, &p->bc, p->v, &p->ao);
  strata_status s = strata_field_fill_ghosts(p->u, &p->bc);
  return s == STRATA_OK ? strata_apply(&p->op, p->u, p->v, &p->ao) : s;
}

/* The variant asked for is one the backend has for the operator (create
 * then tries it once, which refuses anything else the backend cannot
 * take). */
static strata_status check_variant(strata_context *ctx,
                                   const strata_operator_options *o) {
  const char *v = o->variant ? o->variant : "auto";
  if (!strcmp(v, "auto")) return STRATA_OK;
  char known[512] = "";
  ctx->be->variants(ctx, &o->op, known, sizeof known);
  const size_t n = strlen(v);
  for (const char *k = known; *k;) {
    while (*k == ',' || *k == ' ') k++;
    const size_t len = strcspn(k, ", ");
    if (len == n && !strncmp(k, v, n)) return STRATA_OK;
    k += len;
  }
  return strata__fail_arg(ctx, STRATA_ENOTSUP, "variant", v,
                          "operator: the %s engine has no variant '%s' for "
                          "this %dD %d-point operator (known: auto, %s)",
                          ctx->be->name, v, o->op.dims,
                          strata_stencil_points(&o->op), known);
}

/* Everything create checks, and what it will allocate, without
 * allocating: the fields' global description in *d and the footprint. */
static strata_status prepare(strata_context *ctx,
                             const strata_operator_options *o,
                             strata_field_desc *d, strata__footprint *fp) {
  if (o->op.dims != o->dims)
    return strata__fail_arg(ctx, STRATA_EINVAL, "op.dims", o->op.dims,
                            "operator: the stencil is %dD, "
                        "the grid %dD", o->op.dims, o->dims);
  if (o->check_every < 0)
    return strata__fail_arg(ctx, STRATA_EINVAL, "check_every",
                            o->check_every, "operator: check_every is %d; "
                            "it must be >= 0 (0 = never)", o->check_every);
  strata_status s = strata__stencil_check(ctx, &o->op, "operator");
  if (s != STRATA_OK) return s;
  s = check_variant(ctx, o);
  if (s != STRATA_OK) return s;
  *d = (strata_field_desc){o->dims, {o->n[0], o->n[1], o->n[2]},
                           o->op.radius < 1 ? 1 : o->op.radius,
                           o->precision};
  strata_field_desc ld = *d;
  if (o->dist) {
    s = strata__dist_local_desc(o->dist, d, 0, STRATA__DIST_YZ, &ld);
    if (s != STRATA_OK) return s;
  }
  memset(fp, 0, sizeof *fp);
  strata__fp_host(fp, sizeof(strata__op));
  s = strata__fp_field(ctx, fp, &ld);
  if (s == STRATA_OK) s = strata__fp_field(ctx, fp, &ld);
  strata__fp_staging(ctx, fp, &ld); /* the initial state (o->init) */
  return s;
}

strata_status strata__op_footprint(strata_context *ctx,
                                   const strata_operator_options *o,
                                   strata__footprint *fp) {
  strata_field_desc d;
  return prepare(ctx, o, &d, fp);
}

strata_status strata__op_create(strata_context *ctx,
                                const strata_operator_options *o,
                                strata__op **out) {
  *out = NULL;
  strata_field_desc d;
  strata__footprint fp;
  strata_status s = prepare(ctx, o, &d, &fp);
  if (s == STRATA_OK) s = strata__fp_check(ctx, "operator", &fp);
  if (o->dist) s = strata__dist_agree(o->dist, s);
  if (s != STRATA_OK) return s;
  strata__op *p = calloc(1, sizeof *p);
  if (!p) return strata__fail(ctx, STRATA_ENOMEM, "operator: out of memory");
  p->ctx = ctx;
  p->op = o->op;
  p->bc = o->bc;
  p->dist = o->dist;
  p->check_every = o->check_every;
  snprintf(p->variant, sizeof p->variant, "%s",
           o->variant ? o->variant : "auto");
  p->ao.variant = p->variant;
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
    if (strata__check_due(p->steps - 1, p->steps, p->check_every) &&
        (s = strata__check_finite(p->u, "operator", "u", "step",
                                  p->steps)) != STRATA_OK)
      return s;
  }
  return STRATA_OK;
}

strata_field *strata__op_field(strata__op *p) { return p ? p->u : NULL; }
long strata__op_steps(const strata__op *p) { return p ? p->steps : 0; }
void strata__op_set_steps(strata__op *p, long steps) {
  if (p) p->steps = steps;
}
