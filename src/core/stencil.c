/* Operators as data: presets, validation, and the front end of apply. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Central second-derivative weights a[0..r] for order 2r (a[0] center). */
static const double lap1d[5][5] = {
    {0},
    {-2.0, 1.0},
    {-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0},
    {-49.0 / 18.0, 3.0 / 2.0, -3.0 / 20.0, 1.0 / 90.0},
    {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0},
};
/* Central first-derivative weights for offsets +k (k = 1..r). */
static const double d1d[5][5] = {
    {0},
    {0, 1.0 / 2.0},
    {0, 2.0 / 3.0, -1.0 / 12.0},
    {0, 3.0 / 4.0, -3.0 / 20.0, 1.0 / 60.0},
    {0, 4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0},
};

static strata_status bad(const char *what) {
  (void)what;
  return STRATA_EINVAL;
}

/* A preset t built on spacing h goes to *s when every weight it sets (the
 * centre and the coefficients of the radius's offsets) is finite and
 * non-zero; else STRATA_EINVAL, *s untouched.  1/h^2 overflows for h below
 * about 1e-154 and vanishes above 1e154: an operator of infinite (or no)
 * weights is refused here, where h is the argument, not at apply. */
static strata_status weights_usable(const strata_stencil *t,
                                    strata_stencil *s) {
  int ok = t->kind != STRATA_STENCIL_STAR ||
           (isfinite(t->center) && t->center != 0);
  for (int a = 0; a < t->dims; a++)
    for (int k = 1; k <= t->radius; k++)
      if ((t->kind == STRATA_STENCIL_STAR || a == t->axis) &&
          (!isfinite(t->coef[a][k]) || t->coef[a][k] == 0))
        ok = 0;
  if (!ok) return STRATA_EINVAL;
  *s = *t;
  return STRATA_OK;
}

strata_status strata_stencil_laplacian(strata_stencil *s, int dims, int order,
                                       double h) {
  if (!s || dims < 1 || dims > 3 || order < 2 || order > 8 || order % 2 ||
      !(h > 0) || !isfinite(h))
    return bad("laplacian");
  int r = order / 2;
  strata_stencil t;
  memset(&t, 0, sizeof t);
  t.kind = STRATA_STENCIL_STAR;
  t.dims = dims;
  t.radius = r;
  double ih2 = 1.0 / (h * h);
  t.center = dims * lap1d[r][0] * ih2;
  for (int a = 0; a < dims; a++)
    for (int k = 1; k <= r; k++) t.coef[a][k] = lap1d[r][k] * ih2;
  return weights_usable(&t, s);
}

strata_status strata_stencil_star(strata_stencil *s, int dims, int radius,
                                  double center, const double *coef) {
  if (!s || !coef || dims < 1 || dims > 3 || radius < 1 ||
      radius > STRATA_MAX_RADIUS)
    return bad("star");
  memset(s, 0, sizeof *s);
  s->kind = STRATA_STENCIL_STAR;
  s->dims = dims;
  s->radius = radius;
  s->center = center;
  for (int a = 0; a < dims; a++)
    for (int k = 1; k <= radius; k++) s->coef[a][k] = coef[k - 1];
  return strata_stencil_validate(s);
}

strata_status strata_stencil_derivative(strata_stencil *s, int dims, int axis,
                                        int order, double h) {
  if (!s || dims < 1 || dims > 3 || axis < 0 || axis >= dims || order < 2 ||
      order > 8 || order % 2 || !(h > 0) || !isfinite(h))
    return bad("derivative");
  int r = order / 2;
  strata_stencil t;
  memset(&t, 0, sizeof t);
  t.kind = STRATA_STENCIL_DERIVATIVE;
  t.dims = dims;
  t.radius = r;
  t.axis = axis;
  for (int k = 1; k <= r; k++) t.coef[axis][k] = d1d[r][k] / h;
  return weights_usable(&t, s);
}

strata_status strata_stencil_box_symmetric(strata_stencil *s, double c0,
                                           double c1, double c2, double c3) {
  if (!s) return bad("box_symmetric");
  memset(s, 0, sizeof *s);
  s->kind = STRATA_STENCIL_BOX_SYMMETRIC;
  s->dims = 3;
  s->radius = 1;
  s->sym[0] = c0;
  s->sym[1] = c1;
  s->sym[2] = c2;
  s->sym[3] = c3;
  return strata_stencil_validate(s);
}

strata_status strata_stencil_box(strata_stencil *s, int dims, const double *K) {
  if (!s || !K || dims < 2 || dims > 3) return bad("box");
  memset(s, 0, sizeof *s);
  s->kind = STRATA_STENCIL_BOX;
  s->dims = dims;
  s->radius = 1;
  memcpy(s->box, K, sizeof(double) * (dims == 3 ? 27 : 9));
  return strata_stencil_validate(s);
}

strata_status strata_stencil_laplacian9(strata_stencil *s, double h) {
  if (!(h > 0) || !isfinite(h)) return bad("laplacian9");
  double w = 1.0 / (6.0 * h * h);
  if (!isfinite(20 * w) || w == 0) return bad("laplacian9");
  const double K[9] = {w, 4 * w, w, 4 * w, -20 * w, 4 * w, w, 4 * w, w};
  return strata_stencil_box(s, 2, K);
}

static int finite_all(const double *v, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

strata_status strata_stencil_validate(const strata_stencil *s) {
  if (!s || s->dims < 1 || s->dims > 3) return STRATA_EINVAL;
  switch (s->kind) {
  case STRATA_STENCIL_STAR:
    if (s->radius < 1 || s->radius > STRATA_MAX_RADIUS) return STRATA_EINVAL;
    if (!isfinite(s->center) || !finite_all(&s->coef[0][0], 15))
      return STRATA_EINVAL;
    return STRATA_OK;
  case STRATA_STENCIL_DERIVATIVE:
    if (s->radius < 1 || s->radius > STRATA_MAX_RADIUS || s->axis < 0 ||
        s->axis >= s->dims || !finite_all(&s->coef[0][0], 15))
      return STRATA_EINVAL;
    return STRATA_OK;
  case STRATA_STENCIL_BOX:
    if (s->dims < 2 || s->radius != 1 || !finite_all(s->box, 27))
      return STRATA_EINVAL;
    return STRATA_OK;
  case STRATA_STENCIL_BOX_SYMMETRIC:
    if (s->dims != 3 || s->radius != 1 || !finite_all(s->sym, 4))
      return STRATA_EINVAL;
    return STRATA_OK;
  }
  return STRATA_EINVAL;
}

int strata_stencil_points(const strata_stencil *s) {
  if (strata_stencil_validate(s) != STRATA_OK) return 0;
  switch (s->kind) {
  case STRATA_STENCIL_STAR: return 1 + 2 * s->radius * s->dims;
  case STRATA_STENCIL_DERIVATIVE: return 2 * s->radius;
  case STRATA_STENCIL_BOX: return s->dims == 3 ? 27 : 9;
  case STRATA_STENCIL_BOX_SYMMETRIC: return 27;
  }
  return 0;
}

static const char *kind_name(strata_stencil_kind k) {
  switch (k) {
  case STRATA_STENCIL_STAR: return "star";
  case STRATA_STENCIL_DERIVATIVE: return "derivative";
  case STRATA_STENCIL_BOX: return "box";
  case STRATA_STENCIL_BOX_SYMMETRIC: return "box_symmetric";
  }
  return "?";
}

strata_status strata__stencil_check(strata_context *ctx,
                                    const strata_stencil *op,
                                    const char *what) {
  if (!op)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "op", op,
                              "%s: operator is NULL", what);
  if (strata_stencil_validate(op) == STRATA_OK) return STRATA_OK;
  const char *k = kind_name(op->kind);
  if (!strcmp(k, "?"))
    return strata__fail_arg(ctx, STRATA_EINVAL, "op.kind", (int)op->kind,
                            "%s: unknown stencil kind %d", what,
                            (int)op->kind);
  if (op->dims < 1 || op->dims > 3 ||
      (op->kind == STRATA_STENCIL_BOX && op->dims < 2) ||
      (op->kind == STRATA_STENCIL_BOX_SYMMETRIC && op->dims != 3))
    return strata__fail_arg(ctx, STRATA_EINVAL, "op.dims", op->dims,
                            "%s: a %s stencil of dims %d", what, k, op->dims);
  int rmax = op->kind == STRATA_STENCIL_BOX ||
                     op->kind == STRATA_STENCIL_BOX_SYMMETRIC
                 ? 1
                 : STRATA_MAX_RADIUS;
  if (op->radius < 1 || op->radius > rmax)
    return strata__fail_arg(ctx, STRATA_EINVAL, "op.radius", op->radius,
                            "%s: a %s stencil of radius %d; it must be "
                            "1..%d", what, k, op->radius, rmax);
  if (op->kind == STRATA_STENCIL_DERIVATIVE &&
      (op->axis < 0 || op->axis >= op->dims))
    return strata__fail_arg(ctx, STRATA_EINVAL, "op.axis", op->axis,
                            "%s: a derivative along axis %d of a %dD "
                            "stencil", what, op->axis, op->dims);
  /* the first weight that is not finite, by its field's name */
  char nm[STRATA__ARGNAME_SIZE] = "op";
  double v = 0;
  int i;
  if (op->kind == STRATA_STENCIL_STAR && !isfinite(op->center)) {
    snprintf(nm, sizeof nm, "op.center");
    v = op->center;
  } else if (op->kind == STRATA_STENCIL_BOX) {
    for (i = 0; i < 27 && isfinite(op->box[i]); i++) continue;
    snprintf(nm, sizeof nm, "op.box[%d]", i);
    v = op->box[i % 27];
  } else if (op->kind == STRATA_STENCIL_BOX_SYMMETRIC) {
    for (i = 0; i < 4 && isfinite(op->sym[i]); i++) continue;
    snprintf(nm, sizeof nm, "op.sym[%d]", i);
    v = op->sym[i % 4];
  } else {
    const double *c = &op->coef[0][0];
    for (i = 0; i < 15 && isfinite(c[i]); i++) continue;
    snprintf(nm, sizeof nm, "op.coef[%d][%d]", i / 5, i % 5);
    v = c[i % 15];
  }
  return strata__fail_arg(ctx, STRATA_EINVAL, nm, v,
                          "%s: the %s stencil's weight %s is %g; weights "
                          "must be finite (a preset on a spacing h below "
                          "about 1e-154 overflows)", what, k, nm + 3, v);
}

static strata_status check_apply(const strata_stencil *op,
                                 const strata_field *in,
                                 const strata_field *out, const char *what) {
  strata_context *ctx = in->ctx;
  strata_status s = strata__stencil_check(ctx, op, what);
  if (s != STRATA_OK) return s;
  s = strata__check_pair(in, out, what, "out");
  if (s != STRATA_OK) return s;
  if (in == out || in->data == out->data)
    return strata__fail_arg_s(ctx, STRATA_EINVAL, "out", "set",
                        "%s: input and output are the same field; the "
                        "update is not in place", what);
  if (op->dims != in->d.dims)
    return strata__fail_arg(ctx, STRATA_ESHAPE, "op.dims", op->dims,
                        "%s: a %dD operator on %dD fields", what, op->dims,
                        in->d.dims);
  if (in->d.ghost < op->radius)
    return strata__fail_arg(ctx, STRATA_EGHOST, "op.radius", op->radius,
                        "%s: input ghost width %d is smaller than the "
                        "operator radius %d", what, in->d.ghost, op->radius);
  return STRATA_OK;
}

strata_status strata_apply(const strata_stencil *op, const strata_field *in,
                           strata_field *out, const strata_apply_options *opt) {
  if (!in || !out)
    return in ? strata__fail_arg_p(in->ctx, STRATA_EINVAL, "out", out,
                                   "apply: output field is NULL")
              : STRATA_EINVAL;
  strata_status s = check_apply(op, in, out, "apply");
  if (s != STRATA_OK) return s;
  return in->ctx->be->apply(op, in, out, opt);
}

strata_status strata_copy_kernel(const strata_field *in, strata_field *out,
                                 const char *variant) {
  if (!in || !out) return STRATA_EINVAL;
  strata_status s = strata__check_pair(in, out, "copy_kernel", "out");
  if (s != STRATA_OK) return s;
  if (in == out)
    return strata__fail_arg_s(in->ctx, STRATA_EINVAL, "out", "set",
                              "copy_kernel: input and output are the same "
                              "field");
  return in->ctx->be->copy_kernel(in, out, variant);
}

strata_status strata__variants_out(strata_context *ctx, const char *names,
                                   char *buf, size_t n) {
  size_t need = strlen(names) + 1;
  if (need > n)
    return strata__fail_arg(ctx, STRATA_EINVAL, "buf_size", n,
                            "variants: the names (\"%s\") need %zu bytes "
                            "with the terminating NUL; buf_size is %zu",
                            names, need, n);
  memcpy(buf, names, need);
  return STRATA_OK;
}

strata_status strata_variants(strata_context *ctx, const strata_stencil *op,
                              char *buf, size_t n) {
  if (!ctx) return STRATA_EINVAL;
  strata_status s = strata__stencil_check(ctx, op, "variants");
  if (s != STRATA_OK) return s;
  if (!buf || !n)
    return strata__fail_arg(ctx, STRATA_EINVAL, buf ? "buf_size" : "buf", n,
                            "variants: no buffer (%zu bytes) for the names",
                            buf ? n : (size_t)0);
  return ctx->be->variants(ctx, op, buf, n);
}
