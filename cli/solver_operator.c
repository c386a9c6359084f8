/* [solver] kind = operator: applies one stencil step after step,
 * u <- op(u) (or u + scale op(u) with identity = true), filling the ghost
 * layers from [boundary] before each application.  The numerics are the
 * library's strata_apply; this only sets up the stencil.  Over several
 * processes the fields are the ranks' slabs (strata_dist_field_create) and
 * each step is strata_dist_apply: ghosts, exchange and operator. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "run.h"

typedef struct {
  strata_stencil op;
  strata_field *a, *b;
  strata_apply_options ao;
  char variant[128];
} op_state;

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
  return 0;
}

static int op_fields(const run_state *r) { (void)r; return 2; }

static strata_field_desc op_desc(run_state *r, int radius) {
  strata_field_desc d = {r->dims, {r->n[0], r->n[1], r->n[2]},
                         radius < 1 ? 1 : radius, r->precision};
  return d;
}

static int op_estimate(run_state *r, size_t *bytes) {
  strata_stencil s;
  if (op_build(r, &s)) return -1;
  strata_field_desc d = op_desc(r, s.radius);
  size_t one;
  strata_status e = strata_field_bytes(&d, &one);
  if (e != STRATA_OK)
    return run_case_fail(r, "grid", "n", "%s", strata_strerror(e));
  *bytes = one * (size_t)op_fields(r);
  return 0;
}

/* b = op(a) with a's ghosts filled from [boundary] (and the neighbours) */
static strata_status op_apply(run_state *r, op_state *s) {
  if (r->dist) return strata_dist_apply(&s->op, s->a, &r->bc, s->b, &s->ao);
  strata_status e = strata_field_fill_ghosts(s->a, &r->bc);
  return e == STRATA_OK ? strata_apply(&s->op, s->a, s->b, &s->ao) : e;
}

/* the fields' description as op_create makes it from the case */
static const run_optkey op_keys[] = {RUN_GRID_KEYS, {NULL, NULL, NULL, NULL}};

static int op_create(run_state *r) {
  op_state *s = calloc(1, sizeof *s);
  if (!s) return run_fail(r, "out of memory");
  r->impl = s;
  if (op_build(r, &s->op)) return -1;
  cf_file *f = &r->cf;
  int any = 0;
  for (int face = 0; face < 6; face++) {
    const char *v = run_face_value(r, face, "dirichlet");
    strata_bc_parse(v, &r->bc.kind[face]);
    r->bc.value[face] = cf_float(f, "boundary", "value", 0);
    any |= face / 2 < r->dims;
  }
  (void)any;
  for (int a = 0; a < r->dims; a++)
    if ((r->bc.kind[2 * a] == STRATA_BC_PERIODIC) !=
        (r->bc.kind[2 * a + 1] == STRATA_BC_PERIODIC))
      return run_case_fail(r, "boundary", run_face_key(2 * a), "periodic "
                           "must be set on both faces of axis %c", "xyz"[a]);
  snprintf(s->variant, sizeof s->variant, "%s",
           cf_string(f, "operator", "variant", "auto"));
  s->ao.variant = s->variant;
  strata_field_desc d = op_desc(r, s->op.radius);
  strata_status e;
  if (r->dist) {
    e = strata_dist_field_create(r->dist, &d, &s->a);
    if (e == STRATA_OK) e = strata_dist_field_create(r->dist, &d, &s->b);
    if (e == STRATA_EINVAL) /* too few planes per rank */
      return run_lib_fail(r, e, op_keys, "operator");
  } else {
    e = strata_field_create(r->ctx, &d, &s->a);
    if (e == STRATA_OK) e = strata_field_create(r->ctx, &d, &s->b);
  }
  if (e == STRATA_OK) e = strata_field_fill(s->b, 0);
  if (e == STRATA_OK)
    e = strata_field_fill_fn(s->a, run_initial_value, NULL);
  /* over several processes the trial below is collective: every rank
   * whose fields exist takes part, whatever its fills gave */
  strata_status t = s->a && s->b && (e == STRATA_OK || r->dist)
                        ? op_apply(r, s)
                        : STRATA_OK;
  if (e != STRATA_OK)
    return run_fail(r, "cannot create the fields: %s",
                    strata_context_error(r->ctx));
  /* a variant the backend does not have is the case's error: try it once */
  e = t;
  if (e == STRATA_ENOTSUP || e == STRATA_EINVAL || e == STRATA_EGHOST)
    return run_case_fail(r, "operator",
                         e == STRATA_ENOTSUP ? "variant" : "stencil", "%s",
                         strata_context_error(r->ctx));
  if (e != STRATA_OK)
    return run_fail(r, "%s", strata_context_error(r->ctx));
  return 0;
}

static int op_step(run_state *r, long n) {
  op_state *s = r->impl;
  for (long i = 0; i < n; i++) {
    strata_status e = op_apply(r, s);
    if (e != STRATA_OK)
      return run_fail(r, "%s", strata_context_error(r->ctx));
    strata_field *t = s->a;
    s->a = s->b;
    s->b = t;
  }
  return 0;
}

static strata_field *op_field(run_state *r) {
  return ((op_state *)r->impl)->a;
}

static int op_read(run_state *r, void *host) {
  op_state *s = r->impl;
  strata_status e = r->dist ? strata_dist_gather(s->a, 0, host)
                            : strata_field_read(s->a, host);
  return e == STRATA_OK ? 0 : run_fail(r, "%s", strata_context_error(r->ctx));
}

static double op_bpp(run_state *r) { return 2.0 * (double)r->precision; }

static void op_describe(run_state *r, FILE *json) {
  op_state *s = r->impl;
  fprintf(json, "  \"stencil_points\": %d,\n  \"stencil_radius\": %d,\n",
          strata_stencil_points(&s->op), s->op.radius);
}

static int op_ck_save(run_state *r, const char *path) {
  op_state *s = r->impl;
  ckpt_part pt = {r->rank, r->nranks};
  return ckpt_save(path, "operator", ckpt_case_hash(&r->cf), r->step, 1,
                   &s->a, r->dist ? &pt : NULL, r->err, sizeof r->err);
}

static int op_ck_load(run_state *r, const char *path) {
  op_state *s = r->impl;
  ckpt_part pt = {r->rank, r->nranks};
  return ckpt_load(path, "operator", ckpt_case_hash(&r->cf), &r->step, 1,
                   &s->a, r->dist ? &pt : NULL, r->err, sizeof r->err);
}

static void op_destroy(run_state *r) {
  op_state *s = r->impl;
  strata_field_destroy(&s->a);
  strata_field_destroy(&s->b);
  free(s);
  r->impl = NULL;
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
    .estimate = op_estimate,
    .create = op_create,
    .step = op_step,
    .field = op_field,
    .read = op_read,
    .bytes_per_point_step = op_bpp,
    .describe = op_describe,
    .checkpoint_save = op_ck_save,
    .checkpoint_load = op_ck_load,
    .destroy = op_destroy,
};
