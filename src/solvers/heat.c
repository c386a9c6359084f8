/* The heat (diffusion) solver, u' = u + D lap(u), 2D and 3D,
 * with temporal blocking through the backend's apply_fused entry.  The time
 * loop is written once: fill ghosts, then one fused sweep of s steps (or a
 * plain strata_apply when s = 1). */
#include "solvers_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Steps fused per sweep when the caller leaves the choice to us and the
 * backend can fuse, the fastest measured (bench/bench_solvers.c,
 * docs/performance.md#heat).  2D: s = 8, the largest ghost width, on both
 * engines.  3D on the CPU: no fusion, the redundant halo work of the tiles
 * costs more than the traffic saved.  3D on the CUDA engine: the register
 * tiles take s <= 2 for the 27-point box and s <= 4 for the 7-point star,
 * and each runs fastest at its largest s.  The temporal-blocking model
 * (docs/performance.md#temporal-blocking-fs) predicts the same trend. */
static int default_fuse(const strata_context *ctx,
                        const strata_heat_options *o) {
  if (o->dims == 2) return 8;
  if (strata_context_backend(ctx) != STRATA_BACKEND_CUDA) return 1;
  return o->op == STRATA_HEAT_FD ? 4 : 2;
}

/* ---- the depth of fusion over several ranks -----------------------------
 * docs/distributed.md#fused-steps-over-ranks.  The temporal-blocking
 * model's gain of s fused steps in tiles of p points a side, f(s) = s (p - 2s)^D / (p^D +
 * (p - 2s)^D), normalised to s = 1: p = 32 describes the 3D register tiles,
 * p = 64 the 2D warp strips (docs/performance.md#temporal-blocking-fs). */
static double fuse_gain(int dims, int s) {
  const double p = dims == 2 ? 64 : 32;
  const double q1 = pow(p - 2, dims), qs = pow(p - 2.0 * s, dims);
  const double pd = pow(p, dims);
  return (s * qs / (pd + qs)) / (q1 / (pd + q1));
}

/* The machine numbers of the model: mem, the rate in bytes/s at which an
 * unfused sweep moves its 2 values a point; link, bytes/s of one halo
 * message; lat, seconds an exchange costs besides its bytes.  The CUDA
 * engine's defaults are calibrated in docs/distributed.md (single sweeps
 * on the H100; exchanges between H200s over NVLink through NCCL); the CPU
 * engine has no calibrated link, so its exchange costs nothing unless the
 * tuning switches dist_mem_gbs, dist_link_gbs, dist_link_us say. */
typedef struct {
  double mem, link, lat;
} fuse_machine;

static double tuning_double(const strata_context *ctx, const char *key,
                            double def) {
  return strata__tuning_double(ctx, key, def);
}

static fuse_machine fuse_machine_of(const strata_context *ctx) {
  const int cuda = strata_context_backend(ctx) == STRATA_BACKEND_CUDA;
  fuse_machine m = {cuda ? 2.32e12 : 1e10, cuda ? 159e9 : INFINITY,
                    cuda ? 42e-6 : 0};
  m.mem = tuning_double(ctx, "dist_mem_gbs", m.mem / 1e9) * 1e9;
  m.link = tuning_double(ctx, "dist_link_gbs", m.link / 1e9) * 1e9;
  m.lat = tuning_double(ctx, "dist_link_us", m.lat * 1e6) * 1e-6;
  if (!(m.mem > 0)) m.mem = 1e10;
  if (!(m.link > 0)) m.link = 1e-3;
  return m;
}

/* Predicted seconds a step of s fused steps takes on the thinnest slab
 * (N planes of A points, values of e bytes, radius r = 1, sides faces
 * shared with a neighbour), the exchange overlapped with the inner planes
 * (overlap) or not.  Plane-steps computed: the inner part's outputs K = N
 * - 2 s with the cones' growth s (s - 1), each part at a shared face s^2
 * + s (s - 1); the whole slab without overlap (N + sides (s - 1)) s. */
static double fuse_step_time(const fuse_machine *m, int dims, int s,
                             double A, double N, double e, int sides,
                             int overlap) {
  const double tpt = 2.0 * e / (m->mem * fuse_gain(dims, s));
  const double tx = m->lat + (double)s * A * e / m->link;
  const double K = N - 2.0 * s;
  if (overlap && K >= 1) {
    const double tin = (K * s + (double)s * (s - 1)) * A * tpt;
    const double tb = sides * ((double)s * s + (double)s * (s - 1)) * A * tpt;
    return ((tin > tx ? tin : tx) + tb) / s;
  }
  const double tall = (N + (double)sides * (s - 1)) * s * A * tpt;
  return (tx + tall) / s;
}

/* The fastest s in 1..smax by the model (the larger on a tie). */
static int dist_fuse(const strata_context *ctx, const strata_heat_options *o,
                     int smax) {
  const strata_dist *d = o->dist;
  const int P = strata_dist_size(d), ax = o->dims - 1;
  const int periodic = o->bc.kind[2 * ax] == STRATA_BC_PERIODIC;
  const int sides = P > 2 || periodic ? 2 : 1;
  const fuse_machine m = fuse_machine_of(ctx);
  const double A = o->dims == 3 ? (double)o->n[0] * (double)o->n[1]
                                : (double)o->n[0];
  const double N = (double)(o->n[ax] / (size_t)P);
  const int overlap = strata__dist_overlap(d);
  int best = smax;
  double tbest = INFINITY;
  for (int s = smax; s >= 1; s--) {
    double t = fuse_step_time(&m, o->dims, s, A, N, (double)o->precision,
                              sides, overlap);
    if (t < tbest) {
      tbest = t;
      best = s;
    }
  }
  return best;
}

struct strata_heat {
  strata_context *ctx;
  strata_heat_options o;
  strata_stencil op;
  strata_field *u, *v;
  int fuse;
  long steps;
  double limit;
};

void strata_heat_options_init(strata_heat_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->dims = 2;
  o->n[0] = 256;
  o->n[1] = 256;
  o->n[2] = 1;
  o->precision = STRATA_F64;
  o->op = STRATA_HEAT_FD;
  o->D = 0.1;
  strata_boundary_uniform(&o->bc, STRATA_BC_DIRICHLET, 0.0);
  o->fuse = 0;
  o->check_every = STRATA_CHECK_EVERY;
}

double strata_heat_stability_limit(int dims, strata_heat_operator op) {
  if (op == STRATA_HEAT_FD && (dims == 2 || dims == 3)) return 0.5 / dims;
  if (op == STRATA_HEAT_FE27 && dims == 3) return 0.5;
  return 0.0;
}

static const char *const faces[] = {"x-low", "x-high", "y-low",
                                    "y-high", "z-low", "z-high"};

static strata_status check(strata_context *ctx, const strata_heat_options *o,
                           int *fuse) {
  if (o->dims != 2 && o->dims != 3)
    return strata__fail_arg(ctx, STRATA_EINVAL, "dims", o->dims,
                            "heat: dims is %d; it must be 2 or 3", o->dims);
  if (o->op != STRATA_HEAT_FD && o->op != STRATA_HEAT_FE27)
    return strata__fail_arg(ctx, STRATA_EINVAL, "op", (int)o->op,
                            "heat: unknown operator %d", (int)o->op);
  if (o->op == STRATA_HEAT_FE27 && o->dims != 3)
    return strata__fail_arg(ctx, STRATA_EINVAL, "op", (int)o->op,
                            "heat: the 27-point finite-element operator is "
                            "3D only");
  if (o->precision != STRATA_F32 && o->precision != STRATA_F64)
    return strata__fail_arg(ctx, STRATA_EINVAL, "precision",
                            (int)o->precision, "heat: precision must be "
                            "STRATA_F32 or STRATA_F64");
  char nm[STRATA__ARGNAME_SIZE];
  for (int a = 0; a < 3; a++) {
    if (a < o->dims && o->n[a] < 1)
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "n", a),
                              o->n[a], "heat: size along %c is 0", "xyz"[a]);
    if (a >= o->dims && o->n[a] != 1)
      return strata__fail_arg(ctx, STRATA_EINVAL, strata__idx(nm, "n", a),
                              o->n[a], "heat: size along unused axis %c is "
                              "%zu; it must be 1 in %dD", "xyz"[a], o->n[a],
                              o->dims);
  }
  double lim = strata_heat_stability_limit(o->dims, o->op);
  if (!isfinite(o->D) || o->D < 0)
    return strata__fail_arg(ctx, STRATA_EINVAL, "D", o->D,
                            "heat: D = %g; it must be finite and >= 0", o->D);
  if (o->D > lim * (1 + 1e-12))
    return strata__fail_arg(ctx, STRATA_EUNSTABLE, "D", o->D,
                        "heat: D = kappa dt / h^2 = %s exceeds the stability "
                        "limit %s of the %s operator in %dD (%s); reduce dt",
                        strata__vs(o->D, lim).v, strata__vs(o->D, lim).lim,
                        o->op == STRATA_HEAT_FD
                            ? (o->dims == 2 ? "5-point" : "7-point")
                            : "27-point finite-element",
                        o->dims,
                        o->op == STRATA_HEAT_FD ? "D <= 1/(2 dims)"
                                                : "D <= 1/2");
  for (int f = 0; f < 2 * o->dims; f++) {
    strata_bc_kind k = o->bc.kind[f];
    if (k != STRATA_BC_DIRICHLET && k != STRATA_BC_NEUMANN &&
        k != STRATA_BC_PERIODIC)
      return strata__fail_arg(ctx, STRATA_EINVAL,
                              strata__idx(nm, "bc.kind", f), (int)k,
                              "heat: boundary on face %s must be dirichlet, "
                              "neumann or periodic", faces[f]);
    if (k == STRATA_BC_DIRICHLET && !isfinite(o->bc.value[f]))
      return strata__fail_arg(ctx, STRATA_EINVAL,
                              strata__idx(nm, "bc.value", f), o->bc.value[f],
                              "heat: Dirichlet value on face %s is not finite",
                              faces[f]);
  }
  for (int a = 0; a < o->dims; a++)
    if ((o->bc.kind[2 * a] == STRATA_BC_PERIODIC) !=
        (o->bc.kind[2 * a + 1] == STRATA_BC_PERIODIC)) {
      /* the face that is not periodic is the one to change */
      int f = o->bc.kind[2 * a] == STRATA_BC_PERIODIC ? 2 * a + 1 : 2 * a;
      return strata__fail_arg(ctx, STRATA_EINVAL,
                              strata__idx(nm, "bc.kind", f),
                              (int)o->bc.kind[f],
                              "heat: periodic on one face of axis %c only; "
                              "both faces of an axis must be periodic",
                              "xyz"[a]);
    }
  if (o->check_every < 0)
    return strata__fail_arg(ctx, STRATA_EINVAL, "check_every",
                            o->check_every, "heat: check_every is %d; it "
                            "must be >= 0 (0 = never)", o->check_every);
  int s = o->fuse;
  if (s < 0 || s > STRATA_MAX_GHOST)
    return strata__fail_arg(ctx, STRATA_EINVAL, "fuse", o->fuse,
                            "heat: fuse is %d; it must be 0 (auto) or 1..%d",
                            o->fuse, STRATA_MAX_GHOST);
  if (s > 1 && !ctx->be->apply_fused)
    return strata__fail_arg(ctx, STRATA_ENOTSUP, "fuse", o->fuse,
                            "heat: the %s engine has no fused-step kernel "
                            "yet; use fuse = 1 (or 0) or backend=cpu",
                            ctx->be->name);
  if (s == 0)
    s = ctx->be->apply_fused ? default_fuse(ctx, o) : 1;
  /* mirrored and wrapped ghost rings need as many interior points */
  for (int a = 0; a < o->dims; a++) {
    int mirror = o->bc.kind[2 * a] != STRATA_BC_DIRICHLET ||
                 o->bc.kind[2 * a + 1] != STRATA_BC_DIRICHLET;
    if (mirror && (long)o->n[a] < s) {
      if (o->fuse) /* asked for explicitly */
        return strata__fail_arg(ctx, STRATA_EINVAL, "fuse", o->fuse,
                                "heat: fuse = %d needs at least %d points "
                                "along the Neumann/periodic axis %c (it has "
                                "%zu)", s, s, "xyz"[a], o->n[a]);
      s = (int)o->n[a];
    }
  }
  /* over several ranks each must own the s ghost planes of a fused sweep
   * and the s - 1 it recomputes (radius 1): the automatic choice fits the
   * thinnest slab rather than be refused by it */
  if (o->fuse == 0 && o->dist && strata_dist_size(o->dist) > 1) {
    const long minc =
        (long)(o->n[o->dims - 1] / (size_t)strata_dist_size(o->dist));
    while (s > 1 && 2L * s - 1 > minc) s--;
    /* and a deeper fusion must not expose more exchange than it saves */
    s = dist_fuse(ctx, o, s);
  }
  *fuse = s;
  return STRATA_OK;
}

/* The update operator: the 5/7-point star or the 27-point box, radius 1. */
static strata_status heat_operator(const strata_heat_options *o,
                                   strata_stencil *op) {
  if (o->op == STRATA_HEAT_FD) {
    double c = o->D;
    return strata_stencil_star(op, o->dims, 1, 1.0 - 2.0 * o->dims * o->D,
                               &c);
  }
  return strata_stencil_box_symmetric(op, 1.0 - 8.0 / 3.0 * o->D, 0.0,
                                      o->D / 6.0, o->D / 12.0);
}

/* Everything create checks, and what it will allocate, without
 * allocating: the steps fused, the global description of u and v, and
 * the footprint (both fields as this rank holds them). */
static strata_status prepare(strata_context *ctx, const strata_heat_options *o,
                             int *fuse, strata_field_desc *d,
                             strata__footprint *fp) {
  if (o->dist && strata__dist_ctx(o->dist) != ctx)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "dist", o->dist,
                              "heat: with dist set, ctx must be "
                              "strata_dist_context(dist)");
  strata_status s = check(ctx, o, fuse);
  if (s != STRATA_OK) return s;
  /* the update operator's radius is 1: s fused steps need s ghosts */
  *d = (strata_field_desc){o->dims, {o->n[0], o->n[1], o->n[2]}, *fuse,
                           o->precision};
  strata_field_desc ld = *d;
  if (o->dist) {
    /* s fused steps hold the ghosts at the exchanged values, so the last
     * r (s - 1) planes before a neighbour's go wrong: recompute that many
     * of the neighbour's planes (the next exchange overwrites them) */
    const int per = o->bc.kind[2 * (o->dims - 1)] == STRATA_BC_PERIODIC;
    s = strata__dist_local_desc(o->dist, d, *fuse - 1, per, &ld);
    if (s != STRATA_OK) return s;
  }
  memset(fp, 0, sizeof *fp);
  s = strata__fp_field(ctx, fp, &ld);
  if (s == STRATA_OK) s = strata__fp_field(ctx, fp, &ld);
  strata__fp_host(fp, sizeof(strata_heat));
  strata__fp_staging(ctx, fp, &ld); /* the initial state, when set */
  return s;
}

strata_status strata__heat_footprint(strata_context *ctx,
                                     const strata_heat_options *o,
                                     strata__footprint *fp) {
  int fuse = 1;
  strata_field_desc d;
  return prepare(ctx, o, &fuse, &d, fp);
}

strata_status strata_heat_create(strata_context *ctx,
                                 const strata_heat_options *o,
                                 strata_heat **out) {
  if (!ctx) return STRATA_EINVAL;
  if (!out || !o)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, out ? "o" : "out", NULL,
                              "heat: NULL argument");
  *out = NULL;
  int fuse = 1;
  strata_field_desc d;
  strata__footprint fp;
  strata_status s = prepare(ctx, o, &fuse, &d, &fp);
  if (s == STRATA_OK) s = strata__fp_check(ctx, "heat", &fp);
  if (o->dist) s = strata__dist_agree(o->dist, s);
  if (s != STRATA_OK) return s;
  strata_heat *h = calloc(1, sizeof *h);
  if (!h) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  h->ctx = ctx;
  h->o = *o;
  h->fuse = fuse;
  h->limit = strata_heat_stability_limit(o->dims, o->op);
  s = heat_operator(o, &h->op);
  if (s != STRATA_OK) {
    free(h);
    return strata__fail(ctx, s, "heat: cannot build the update operator");
  }
  if (o->dist) {
    const int ext = h->op.radius * (fuse - 1);
    const int per = o->bc.kind[2 * (o->dims - 1)] == STRATA_BC_PERIODIC;
    s = strata__dist_field_create_ext(o->dist, &d, ext, per, &h->u);
    if (s == STRATA_OK)
      s = strata__dist_field_create_ext(o->dist, &d, ext, per, &h->v);
  } else {
    s = strata_field_create(ctx, &d, &h->u);
    if (s == STRATA_OK) s = strata_field_create(ctx, &d, &h->v);
  }
  if (s != STRATA_OK) {
    strata_heat_destroy(&h);
    return s;
  }
  *out = h;
  return STRATA_OK;
}

void strata_heat_destroy(strata_heat **ph) {
  if (!ph || !*ph) return;
  strata_heat *h = *ph;
  strata_field_destroy(&h->u);
  strata_field_destroy(&h->v);
  free(h);
  *ph = NULL;
}

strata_status strata_heat_set_initial(strata_heat *h, strata_point_fn fn,
                                      void *user) {
  if (!h) return STRATA_EINVAL;
  if (!fn)
    return strata__fail_arg_p(h->ctx, STRATA_EINVAL, "fn", fn,
                              "heat: function is NULL");
  strata__interior_fn c = {fn, user, {(long)h->o.n[0], (long)h->o.n[1],
                              (long)h->o.n[2]}};
  return strata_field_fill_fn(h->u, strata__call_interior, &c);
}

strata_status strata_heat_write(strata_heat *h, const void *host) {
  if (!h) return STRATA_EINVAL;
  /* refused here, where the index still means something to the caller,
   * rather than found check_every steps later (over several processes
   * rank 0's array is the one scattered, and every rank refuses) */
  long long bad = -1;
  if (host && (!h->o.dist || strata__dist_rank(h->o.dist) == 0))
    bad = strata__host_nonfinite(host, h->o.n[0] * h->o.n[1] * h->o.n[2],
                                 h->o.precision);
  if (h->o.dist) {
    double v = (double)bad;
    strata_status st = strata_dist_allreduce(h->o.dist, &v, 1, 1);
    if (st != STRATA_OK) return st;
    bad = (long long)v;
  }
  if (bad >= 0) {
    const size_t nx = h->o.n[0], ny = h->o.n[1], b = (size_t)bad;
    char at[96];
    if (h->o.dims == 2)
      snprintf(at, sizeof at, "(%zu, %zu)", b % nx, b / nx);
    else
      snprintf(at, sizeof at, "(%zu, %zu, %zu)", b % nx, b / nx % ny,
               b / nx / ny);
    return strata__fail_arg(h->ctx, STRATA_EINVAL, "host", bad,
                            "heat: host[%lld] (point %s) is not finite; u "
                            "is left as it was", bad, at);
  }
  if (h->o.dist) return strata_dist_scatter(h->u, 0, host);
  return strata_field_write(h->u, host);
}

strata_status strata_heat_read(const strata_heat *h, void *host) {
  if (!h) return STRATA_EINVAL;
  if (h->o.dist) return strata_dist_gather(h->u, 0, host);
  return strata_field_read(h->u, host);
}

strata_field *strata_heat_field(strata_heat *h) { return h ? h->u : NULL; }

strata_status strata_heat_step(strata_heat *h, long nsteps) {
  if (!h) return STRATA_EINVAL;
  if (nsteps < 0)
    return strata__fail_arg(h->ctx, STRATA_EINVAL, "nsteps", nsteps,
                            "heat: nsteps is %ld; it must be >= 0", nsteps);
  const strata__backend *be = h->ctx->be;
  while (nsteps > 0) {
    int s = nsteps < h->fuse ? (int)nsteps : h->fuse;
    strata_status st;
    if (h->o.dist && h->fuse == 1) {
      /* the exchange overlaps the interior */
      st = strata_dist_apply(&h->op, h->u, &h->o.bc, h->v, NULL);
    } else if (h->o.dist) {
      /* the exchange overlaps the sweep of the inner planes */
      st = strata__dist_apply_fused(&h->op, h->u, &h->o.bc, s, h->v);
    } else {
      st = strata_field_fill_ghosts(h->u, &h->o.bc);
      if (st != STRATA_OK) return st;
      if (h->fuse == 1)
        st = strata_apply(&h->op, h->u, h->v, NULL);
      else
        st = be->apply_fused(&h->op, &h->o.bc, s, h->u, h->v, 0,
                             (long)h->o.n[h->o.dims - 1]);
    }
    if (st != STRATA_OK) return st;
    strata_field *t = h->u;
    h->u = h->v;
    h->v = t;
    h->steps += s;
    nsteps -= s;
    if (strata__check_due(h->steps - s, h->steps, h->o.check_every) &&
        (st = strata__check_finite(h->u, "heat", "u", "step", h->steps)) !=
            STRATA_OK)
      return st;
  }
  return STRATA_OK;
}

void strata__heat_set_steps(strata_heat *h, long steps) {
  if (h) h->steps = steps;
}

strata_status strata_heat_get_info(const strata_heat *h,
                                   strata_heat_info *info) {
  if (!h) return STRATA_EINVAL;
  if (!info)
    return strata__fail_arg_p(h->ctx, STRATA_EINVAL, "info", info,
                              "heat: info is NULL");
  memset(info, 0, sizeof *info);
  info->steps = h->steps;
  info->fuse = h->fuse;
  info->D = h->o.D;
  info->D_limit = h->limit;
  info->bytes_per_point_step = 2.0 * (double)h->o.precision / h->fuse;
  return STRATA_OK;
}
