/* [solver] kind = operator: applies one stencil step after step,
 * u <- op(u) (or u + scale op(u) with identity = true), filling the ghost
 * layers from [boundary] before each application: the library's
 * STRATA_SOLVER_OPERATOR.  This only reads the stencil from the case. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

static int op_build(run_state *r, strata_stencil *s) {
  cf_file *f = &r->cf;
  const char *st = cf_string(f, "operator", "stencil", "laplacian");
  int order = (int)cf_int(f, "operator", "order", 2);
  const char *ax = cf_string(f, "operator", "axis", "x");
  double c[4];
  int nc = cf_floats(f, "operator", "coefficients", c, 4);
  strata_status e = STRATA_OK;
  memset(s, 0, sizeof *s);
  if (!strcmp(st, "laplacian")) {
    e = strata_stencil_laplacian(s, r->dims, order, r->h);
  } else if (!strcmp(st, "derivative")) {
    int axis = ax[0] - 'x';
    if (axis >= r->dims)
      return run_case_fail(r, "operator", "axis", "a %dD grid has no %c axis",
                           r->dims, ax[0]);
    e = strata_stencil_derivative(s, r->dims, axis, order, r->h);
  } else if (!strcmp(st, "star")) {
    if (nc < 1)
      return run_case_fail(r, "operator", "stencil", "star needs [operator] "
                           "coefficients (weights of offsets 1..r)");
    e = strata_stencil_star(s, r->dims, nc,
                            cf_float(f, "operator", "center", 0), c);
  } else if (!strcmp(st, "box27")) {
    if (r->dims != 3)
      return run_case_fail(r, "operator", "stencil", "box27 needs a 3D grid");
    if (nc != 4)
      return run_case_fail(r, "operator", "coefficients", "box27 needs 4 "
                           "values C0, C1, C2, C3, got %d", nc);
    e = strata_stencil_box_symmetric(s, c[0], c[1], c[2], c[3]);
  } else { /* laplacian9 */
    if (r->dims != 2)
      return run_case_fail(r, "operator", "stencil", "laplacian9 needs a 2D "
                           "grid");
    e = strata_stencil_laplacian9(s, r->h);
  }
  strata_stencil unit;
  if (e != STRATA_OK && cf_has(f, "grid", "spacing") &&
      (!strcmp(st, "laplacian") || !strcmp(st, "derivative") ||
       !strcmp(st, "laplacian9")) &&
      strata_stencil_laplacian(&unit, r->dims, order, 1.0) == STRATA_OK)
    return run_case_fail(r, "grid", "spacing", "the %s's weights on spacing "
                         "%g are not finite or are 0 (1/h^2 overflows for h "
                         "below about 1e-154)", st, r->h);
  if (e != STRATA_OK)
    return run_case_fail(r, "operator", "stencil", "the library refused it: "
                         "%s", strata_strerror(e));
  double scale = cf_float(f, "operator", "scale", 1);
  s->center *= scale;
  for (int a = 0; a < 3; a++)
    for (int k = 0; k <= STRATA_MAX_RADIUS; k++) s->coef[a][k] *= scale;
  for (int k = 0; k < 4; k++) s->sym[k] *= scale;
  for (int k = 0; k < 27; k++) s->box[k] *= scale;
  if (cf_bool(f, "operator", "identity", 0)) {
    switch (s->kind) {
    case STRATA_STENCIL_STAR: s->center += 1; break;
    case STRATA_STENCIL_BOX_SYMMETRIC: s->sym[0] += 1; break;
    case STRATA_STENCIL_BOX: s->box[s->dims == 3 ? 13 : 4] += 1; break;
    default:
      return run_case_fail(r, "operator", "identity", "a derivative has no "
                           "centre weight to add the identity to");
    }
  }
  if (strata_stencil_validate(s) != STRATA_OK)
    return run_case_fail(r, "operator", "scale", "scale = %g times the "
                         "stencil's weights overflows: the operator's "
                         "weights are not finite", scale);
  return 0;
}

/* the fields' description as op_create makes it from the case */
static const run_optkey op_keys[] = {
    RUN_GRID_KEYS, {"check_every", "run", "check_every", NULL},
    {NULL, NULL, NULL, NULL}};

static int op_create(run_state *r) {
  strata_operator_options o;
  strata_operator_options_init(&o);
  if (op_build(r, &o.op)) return -1;
  cf_file *f = &r->cf;
  for (int face = 0; face < 6; face++) {
    const char *v = run_face_value(r, face, "dirichlet");
    strata_bc_parse(v, &r->bc.kind[face]);
    r->bc.value[face] = cf_float(f, "boundary", "value", 0);
  }
  for (int a = 0; a < r->dims; a++)
    if ((r->bc.kind[2 * a] == STRATA_BC_PERIODIC) !=
        (r->bc.kind[2 * a + 1] == STRATA_BC_PERIODIC))
      return run_case_fail(r, "boundary", run_face_key(2 * a), "periodic "
                           "must be set on both faces of axis %c", "xyz"[a]);
  o.dims = r->dims;
  for (int a = 0; a < 3; a++) o.n[a] = r->n[a];
  o.precision = r->precision;
  o.bc = r->bc;
  o.variant = cf_string(f, "operator", "variant", "auto");
  o.init = run_initial_value;
  o.dist = r->dist;
  o.check_every = (int)cf_int(f, "run", "check_every", STRATA_CHECK_EVERY);
  strata_solver_options so;
  strata_solver_options_init(&so, STRATA_SOLVER_OPERATOR);
  so.op = &o;
  strata_status e = run_solver_create(r, &so);
  if (e == STRATA_OK) return 0;
  /* the grid's options (too few planes per rank) are blamed by name */
  if (e == STRATA_EINVAL && run_lib_names(r, op_keys))
    return run_lib_fail(r, e, op_keys, "operator");
  /* create applies the operator once: a variant the backend does not have
   * or a stencil it cannot take is the case's error */
  const char *msg = strata_context_error(r->ctx);
  if (e == STRATA_ENOTSUP || e == STRATA_EINVAL || e == STRATA_EGHOST)
    return run_case_fail(r, "operator",
                         e == STRATA_ENOTSUP ? "variant" : "stencil", "%s",
                         msg);
  return run_fail(r, "cannot create the fields: %s", msg);
}

static void op_describe(run_state *r, FILE *json) {
  strata_stencil s;
  if (op_build(r, &s)) return;
  fprintf(json, "  \"stencil_points\": %d,\n  \"stencil_radius\": %d,\n",
          strata_stencil_points(&s), s.radius);
}

const run_solver run_solver_operator = {
    .kind = "operator",
    .sections = "operator|initial",
    .bcs = "dirichlet|neumann|periodic|none",
    .dims_min = 1,
    .dims_max = 3,
    .precision = STRATA_F32,
    .cmap = "viridis",
    .field_name = "u",
    .distributed = 1,
    .checkpoints = 1,
    .create = op_create,
    .describe = op_describe,
};
