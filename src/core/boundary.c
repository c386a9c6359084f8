/* Boundary conditions: names, validation, and the host ghost filler that
 * the CPU engine uses (and any backend may use on a host image). */
#include "internal.h"

#include <math.h>
#include <string.h>

void strata_boundary_uniform(strata_boundary *bc, strata_bc_kind kind,
                             double value) {
  if (!bc) return;
  for (int f = 0; f < 6; f++) {
    bc->kind[f] = kind;
    bc->value[f] = value;
  }
}

static const char *const bc_names[] = {"dirichlet", "neumann", "periodic",
                                       "none"};

const char *strata_bc_name(strata_bc_kind k) {
  if ((int)k < 0 || (int)k > STRATA_BC_NONE) return "?";
  return bc_names[k];
}

strata_status strata_bc_parse(const char *name, strata_bc_kind *k) {
  if (!name || !k) return STRATA_EINVAL;
  for (int i = 0; i <= STRATA_BC_NONE; i++)
    if (strcmp(name, bc_names[i]) == 0) {
      *k = (strata_bc_kind)i;
      return STRATA_OK;
    }
  return STRATA_EINVAL;
}

/* Validates bc for f; on failure records the message on f's context. */
static strata_status check_bc(const strata_field *f, const strata_boundary *bc) {
  static const char *const faces[] = {"x-low", "x-high", "y-low",
                                      "y-high", "z-low", "z-high"};
  if (!bc)
    return strata__fail_arg_p(f->ctx, STRATA_EINVAL, "bc", bc,
                              "boundary conditions are NULL");
  char nm[STRATA__ARGNAME_SIZE];
  for (int face = 0; face < 2 * f->d.dims; face++) {
    strata_bc_kind k = bc->kind[face];
    if ((int)k < 0 || k > STRATA_BC_NONE)
      return strata__fail_arg(f->ctx, STRATA_EINVAL,
                              strata__idx(nm, "bc.kind", face), (int)k,
                              "boundary kind %d on face %s is unknown",
                              (int)k, faces[face]);
    if (k == STRATA_BC_DIRICHLET && !isfinite(bc->value[face]))
      return strata__fail_arg(f->ctx, STRATA_EINVAL,
                              strata__idx(nm, "bc.value", face),
                              bc->value[face],
                              "Dirichlet value on face %s is not finite",
                              faces[face]);
  }
  for (int a = 0; a < f->d.dims; a++) {
    int p0 = bc->kind[2 * a] == STRATA_BC_PERIODIC;
    int p1 = bc->kind[2 * a + 1] == STRATA_BC_PERIODIC;
    if (p0 != p1)
      return strata__fail_arg(f->ctx, STRATA_EINVAL,
                          strata__idx(nm, "bc.kind", p0 ? 2 * a + 1 : 2 * a),
                          (int)bc->kind[p0 ? 2 * a + 1 : 2 * a],
                          "periodic boundary on face %s but not on face %s: "
                          "both faces of an axis must be periodic",
                          faces[p0 ? 2 * a : 2 * a + 1],
                          faces[p0 ? 2 * a + 1 : 2 * a]);
    if (p0 && (long)f->d.n[a] < f->d.ghost)
      return strata__fail_arg(f->ctx, STRATA_EINVAL,
                          strata__idx(nm, "bc.kind", 2 * a),
                          (int)bc->kind[2 * a],
                          "periodic axis %c has %zu points, fewer than the "
                          "ghost width %d", "xyz"[a], f->d.n[a], f->d.ghost);
    if (bc->kind[2 * a] == STRATA_BC_NEUMANN && (long)f->d.n[a] < f->d.ghost)
      return strata__fail_arg(f->ctx, STRATA_EINVAL,
                          strata__idx(nm, "bc.kind", 2 * a),
                          (int)bc->kind[2 * a],
                          "Neumann axis %c has %zu points, fewer than the "
                          "ghost width %d", "xyz"[a], f->d.n[a], f->d.ghost);
    if (bc->kind[2 * a + 1] == STRATA_BC_NEUMANN &&
        (long)f->d.n[a] < f->d.ghost)
      return strata__fail_arg(f->ctx, STRATA_EINVAL,
                          strata__idx(nm, "bc.kind", 2 * a + 1),
                          (int)bc->kind[2 * a + 1],
                          "Neumann axis %c has %zu points, fewer than the "
                          "ghost width %d", "xyz"[a], f->d.n[a], f->d.ghost);
  }
  return STRATA_OK;
}

/* Source index along an axis of n points for ghost index t (t < 0 or
 * t >= n) under kind; returns -1 for Dirichlet (use the value). */
static inline long ghost_src(strata_bc_kind kind, long t, long n) {
  if (kind == STRATA_BC_PERIODIC) return t < 0 ? t + n : t - n;
  if (kind == STRATA_BC_NEUMANN) return t < 0 ? -t - 1 : 2 * n - 1 - t;
  return -1;
}

#define DEFINE_FILL(T, NAME)                                                   \
  static void NAME(const strata_field *f, T *p, const strata_boundary *bc) {   \
    const long n[3] = {(long)f->d.n[0], (long)f->d.n[1], (long)f->d.n[2]};    \
    const long g[3] = {f->g[0], f->g[1], f->g[2]};                             \
    const long px = (long)f->L.pitch_x, py = (long)f->L.pitch_y;               \
    const long stride[3] = {1, px, px * py};                                   \
    for (int a = 0; a < f->d.dims; a++) {                                      \
      /* the other two axes: extended over already-filled ghost ranges */      \
      int b = (a + 1) % 3, c = (a + 2) % 3;                                    \
      long blo = b < a ? -g[b] : 0, bhi = b < a ? n[b] + g[b] : n[b];          \
      long clo = c < a ? -g[c] : 0, chi = c < a ? n[c] + g[c] : n[c];          \
      _Pragma("omp parallel for collapse(2) schedule(static)")                 \
      for (long ic = clo; ic < chi; ic++)                                      \
        for (long ib = blo; ib < bhi; ib++) {                                  \
          T *line = p + f->L.origin + ib * stride[b] + ic * stride[c];         \
          for (int side = 0; side < 2; side++) {                               \
            strata_bc_kind k = bc->kind[2 * a + side];                         \
            if (k == STRATA_BC_NONE) continue;                                 \
            T v = (T)bc->value[2 * a + side];                                  \
            for (long q = 1; q <= g[a]; q++) {                                 \
              long t = side ? n[a] - 1 + q : -q;                               \
              long s = ghost_src(k, t, n[a]);                                  \
              line[t * stride[a]] = s < 0 ? v : line[s * stride[a]];           \
            }                                                                  \
          }                                                                    \
        }                                                                      \
    }                                                                          \
  }

DEFINE_FILL(float, fill_f32)
DEFINE_FILL(double, fill_f64)

strata_status strata__fill_ghosts_host(const strata_field *f, void *img,
                                       const strata_boundary *bc) {
  if (f->d.precision == STRATA_F32)
    fill_f32(f, (float *)img, bc);
  else
    fill_f64(f, (double *)img, bc);
  return STRATA_OK;
}

strata_status strata__fill_ghosts_local(strata_field *f,
                                        const strata_boundary *bc) {
  if (!f) return STRATA_EINVAL;
  strata_status s = check_bc(f, bc);
  if (s != STRATA_OK) return s;
  return f->ctx->be->fill_ghosts(f, bc);
}

strata_status strata_field_fill_ghosts(strata_field *f,
                                       const strata_boundary *bc) {
  if (f && f->win) return strata_dist_fill_ghosts(f, bc); /* + exchange */
  return strata__fill_ghosts_local(f, bc);
}
