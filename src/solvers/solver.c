/* One handle for every solver (strata_solver_*): each call dispatches to
 * the kind's own API, so the interface adds no numerics of its own.  What
 * it adds is what every program otherwise writes per solver: fields by
 * name, traces, info, and saved states in one checkpoint format
 * (solver_state.c). */
#define _POSIX_C_SOURCE 200809L
#include "solver_internal.h"
#include "../io/io_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const strata__solver_kinds[6] = {
    NULL, "heat", "wave", "fdtd", "poisson", "operator"};

const char *strata_solver_kind_name(strata_solver_kind k) {
  return k >= STRATA_SOLVER_HEAT && k <= STRATA_SOLVER_OPERATOR
             ? strata__solver_kinds[k]
             : "?";
}

strata_status strata_solver_kind_parse(const char *name,
                                       strata_solver_kind *k) {
  if (!name || !k) return STRATA_EINVAL;
  for (int i = STRATA_SOLVER_HEAT; i <= STRATA_SOLVER_OPERATOR; i++)
    if (!strcmp(name, strata__solver_kinds[i])) {
      *k = (strata_solver_kind)i;
      return STRATA_OK;
    }
  return STRATA_EINVAL;
}

void strata_solver_options_init(strata_solver_options *o,
                                strata_solver_kind kind) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->kind = kind;
}

/* ---- create ------------------------------------------------------------- */

/* The options of o->kind are the only ones set. */
static strata_status check_options(strata_context *ctx,
                                   const strata_solver_options *o) {
  if (o->kind < STRATA_SOLVER_HEAT || o->kind > STRATA_SOLVER_OPERATOR)
    return strata__fail_arg(ctx, STRATA_EINVAL, "kind", (int)o->kind,
                            "solver: kind %d is not one of "
                        "STRATA_SOLVER_HEAT (1), _WAVE (2), _FDTD (3), "
                        "_POISSON (4), _OPERATOR (5)", (int)o->kind);
  const void *set[6] = {NULL, o->heat, o->wave, o->fdtd, o->poisson, o->op};
  static const char *const member[6] = {NULL,   "heat",    "wave",
                                        "fdtd", "poisson", "op"};
  for (int k = 1; k <= 5; k++)
    if (set[k] && k != (int)o->kind)
      return strata__fail_arg_s(ctx, STRATA_EINVAL, member[k], "set",
                                "solver: the kind is %s, but "
                          "options.%s is set (only options.%s is read)",
                          strata__solver_kinds[o->kind], member[k],
                          member[o->kind]);
  return STRATA_OK;
}

/* What the interface keeps of a kind's options: its grid, spacing and
 * time step, and the fields' names. */
static void keep(strata_solver *s, strata_dist *dist, int dims,
                 const size_t *n, strata_precision p, double h, double dt,
                 int nfields, const char *const *names) {
  s->dist = dist;
  s->dims = dims;
  for (int a = 0; a < 3; a++) s->n[a] = a < dims ? n[a] : 1;
  s->precision = p;
  s->h = h;
  s->dt = dt;
  s->nfields = nfields;
  for (int i = 0; i < nfields; i++) s->names[i] = names[i];
}

static const char *const u_names[1] = {"u"};

static strata_status create_heat(strata_solver *s,
                                 const strata_heat_options *po) {
  strata_heat_options o;
  if (po)
    o = *po;
  else
    strata_heat_options_init(&o);
  strata_status st = strata_heat_create(s->ctx, &o, &s->heat);
  if (st == STRATA_OK)
    keep(s, o.dist, o.dims, o.n, o.precision, 1, 1, 1, u_names);
  return st;
}

static strata_status create_wave(strata_solver *s,
                                 const strata_wave_options *po) {
  strata_wave_options o;
  if (po)
    o = *po;
  else
    strata_wave_options_init(&o);
  strata_status st = strata_wave_create(s->ctx, &o, &s->wave);
  if (st != STRATA_OK) return st;
  static const char *const names[2] = {"p", "p_prev"};
  strata_wave_info wi;
  strata_wave_get_info(s->wave, &wi);
  keep(s, o.dist, 3, o.n, o.precision, o.h, wi.dt, 2, names);
  s->every = o.record_every > 0 ? o.record_every : 1;
  return STRATA_OK;
}

static strata_status create_fdtd(strata_solver *s,
                                 const strata_fdtd_options *po) {
  strata_fdtd_options o;
  if (po)
    o = *po;
  else
    strata_fdtd_options_init(&o);
  strata_status st = strata_fdtd_create(s->ctx, &o, &s->fdtd);
  if (st != STRATA_OK) return st;
  static const char *const yee[3] = {"Ez", "Hx", "Hy"};
  static const char *const expl[2] = {"Ez", "Ez_prev"};
  s->yee = o.scheme == STRATA_FDTD_YEE_TM;
  keep(s, o.dist, 2, o.n, o.precision, 1, o.courant, s->yee ? 3 : 2,
       s->yee ? yee : expl);
  s->comp[0] = STRATA_FDTD_EZ;
  s->comp[1] = s->yee ? STRATA_FDTD_HX : STRATA_FDTD_EZ_PREV;
  s->comp[2] = STRATA_FDTD_HY;
  return STRATA_OK;
}

static strata_status create_poisson(strata_solver *s,
                                    const strata_mg_options *po) {
  strata_mg_options o;
  if (po)
    o = *po;
  else
    strata_mg_options_init(&o);
  strata_status st = strata_mg_create(s->ctx, &o, &s->mg);
  if (st != STRATA_OK) return st;
  strata_mg_get_options(s->mg, &o);
  static const char *const names[2] = {"phi", "psi"};
  strata_dist *dist = o.dist && strata_dist_size(o.dist) > 1 ? o.dist : NULL;
  keep(s, dist, o.dims, o.n, o.precision, o.h, 0, 2, names);
  strata_field_desc d = {o.dims, {s->n[0], s->n[1], s->n[2]}, 1,
                         o.precision};
  if (dist) { /* this rank's parts (collective) */
    st = strata_dist_field_create(dist, &d, &s->phi);
    if (st == STRATA_OK) st = strata_dist_field_create(dist, &d, &s->psi);
  } else {
    st = strata_field_create(s->ctx, &d, &s->phi);
    if (st == STRATA_OK) st = strata_field_create(s->ctx, &d, &s->psi);
  }
  if (st == STRATA_OK) st = strata_field_fill(s->phi, 0);
  if (st == STRATA_OK) st = strata_field_fill_ghosts(s->phi, &o.bc);
  if (st == STRATA_OK) st = strata_field_fill(s->psi, 0);
  return st;
}

static strata_status create_operator(strata_solver *s,
                                     const strata_operator_options *po) {
  strata_operator_options o;
  if (po)
    o = *po;
  else
    strata_operator_options_init(&o);
  strata_status st = strata__op_create(s->ctx, &o, &s->op);
  if (st == STRATA_OK)
    keep(s, o.dist, o.dims, o.n, o.precision, 1, 1, 1, u_names);
  return st;
}

/* The kind's options, its defaults when they are NULL. */
typedef union {
  strata_heat_options heat;
  strata_wave_options wave;
  strata_fdtd_options fdtd;
  strata_mg_options mg;
  strata_operator_options op;
} kind_options;

static void options_of(const strata_solver_options *o, kind_options *k) {
  switch (o->kind) {
  case STRATA_SOLVER_HEAT:
    if (o->heat) k->heat = *o->heat; else strata_heat_options_init(&k->heat);
    break;
  case STRATA_SOLVER_WAVE:
    if (o->wave) k->wave = *o->wave; else strata_wave_options_init(&k->wave);
    break;
  case STRATA_SOLVER_FDTD:
    if (o->fdtd) k->fdtd = *o->fdtd; else strata_fdtd_options_init(&k->fdtd);
    break;
  case STRATA_SOLVER_POISSON:
    if (o->poisson) k->mg = *o->poisson; else strata_mg_options_init(&k->mg);
    break;
  default:
    if (o->op) k->op = *o->op; else strata_operator_options_init(&k->op);
    break;
  }
}

static strata_dist *dist_of(const strata_solver_options *o,
                            const kind_options *k) {
  switch (o->kind) {
  case STRATA_SOLVER_HEAT: return k->heat.dist;
  case STRATA_SOLVER_WAVE: return k->wave.dist;
  case STRATA_SOLVER_FDTD: return k->fdtd.dist;
  case STRATA_SOLVER_OPERATOR: return k->op.dist;
  case STRATA_SOLVER_POISSON: return k->mg.dist;
  default: return NULL;
  }
}

/* What strata_solver_create(ctx, o) will allocate, o checked as it checks
 * it: the kind's own footprint and what the interface adds (Poisson's phi
 * and psi), and the wave solver's copy of the receivers' positions. */
static strata_status footprint(strata_context *ctx,
                               const strata_solver_options *o,
                               strata__footprint *fp) {
  strata_status st = check_options(ctx, o);
  if (st != STRATA_OK) return st;
  kind_options k;
  options_of(o, &k);
  switch (o->kind) {
  case STRATA_SOLVER_HEAT: st = strata__heat_footprint(ctx, &k.heat, fp); break;
  case STRATA_SOLVER_WAVE:
    st = strata__wave_footprint(ctx, &k.wave, fp);
    if (st == STRATA_OK && k.wave.nreceivers > 0 && k.wave.receivers)
      strata__fp_host(fp, 3 * (size_t)k.wave.nreceivers * sizeof(double));
    break;
  case STRATA_SOLVER_FDTD: st = strata__fdtd_footprint(ctx, &k.fdtd, fp); break;
  case STRATA_SOLVER_POISSON:
    st = strata__mg_footprint(ctx, &k.mg, fp);
    if (st == STRATA_OK) {
      strata_field_desc d = {k.mg.dims, {k.mg.n[0], k.mg.n[1], k.mg.n[2]}, 1,
                             k.mg.precision};
      for (int a = k.mg.dims; a < 3; a++) d.n[a] = 1;
      st = strata__fp_field(ctx, fp, &d); /* phi */
      if (st == STRATA_OK) st = strata__fp_field(ctx, fp, &d); /* psi */
      strata__fp_staging(ctx, fp, &d); /* a source set through the host */
    }
    break;
  default: st = strata__op_footprint(ctx, &k.op, fp); break;
  }
  strata__fp_host(fp, sizeof(strata_solver));
  return st;
}

/* o checked as create checks it, and its footprint (in *fp) against the
 * memory available: STRATA_ENOMEM, with *fp set, when it does not fit. */
static strata_status checked_footprint(strata_context *ctx,
                                       const strata_solver_options *o,
                                       strata__footprint *fp) {
  memset(fp, 0, sizeof *fp);
  if (!o)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "o", o,
                              "solver: options are NULL (a "
                        "kind is needed: strata_solver_options_init)");
  strata_status st = footprint(ctx, o, fp);
  return st == STRATA_OK
             ? strata__fp_check(ctx, strata__solver_kinds[o->kind], fp)
             : st;
}

strata_status strata_solver_estimate(strata_context *ctx,
                                     const strata_solver_options *o,
                                     size_t *host_bytes,
                                     size_t *device_bytes) {
  if (host_bytes) *host_bytes = 0;
  if (device_bytes) *device_bytes = 0;
  if (!ctx) return STRATA_EINVAL;
  strata__footprint fp;
  strata_status st = checked_footprint(ctx, o, &fp);
  if (st == STRATA_OK || st == STRATA_ENOMEM)
    strata__fp_result(ctx, &fp, host_bytes, device_bytes);
  return st;
}

strata_status strata_solver_create(strata_context *ctx,
                                   const strata_solver_options *o,
                                   strata_solver **out) {
  if (!ctx) return STRATA_EINVAL;
  if (!out)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "out", out,
                              "solver: output pointer is NULL");
  *out = NULL;
  /* the whole footprint is refused before anything is allocated */
  strata__footprint fp;
  strata_status st = checked_footprint(ctx, o, &fp);
  kind_options k;
  if (o && o->kind >= STRATA_SOLVER_HEAT &&
      o->kind <= STRATA_SOLVER_OPERATOR) {
    options_of(o, &k);
    strata_dist *dist = dist_of(o, &k);
    if (dist && strata__dist_ctx(dist) == ctx)
      st = strata__dist_agree(dist, st);
  }
  if (st != STRATA_OK) return st;
  strata_solver *s = calloc(1, sizeof *s);
  if (!s) return strata__fail(ctx, STRATA_ENOMEM, "solver: out of memory");
  s->ctx = ctx;
  s->kind = o->kind;
  s->tag = o->tag;
  const size_t before = ctx->live_bytes;
  switch (o->kind) {
  case STRATA_SOLVER_HEAT: st = create_heat(s, o->heat); break;
  case STRATA_SOLVER_WAVE: st = create_wave(s, o->wave); break;
  case STRATA_SOLVER_FDTD: st = create_fdtd(s, o->fdtd); break;
  case STRATA_SOLVER_POISSON: st = create_poisson(s, o->poisson); break;
  default: st = create_operator(s, o->op); break;
  }
  if (st != STRATA_OK) {
    strata_solver_destroy(&s);
    return st;
  }
  s->dev_bytes = ctx->live_bytes - before;
  *out = s;
  return STRATA_OK;
}

void strata_solver_destroy(strata_solver **ps) {
  if (!ps || !*ps) return;
  strata_solver *s = *ps;
  strata_heat_destroy(&s->heat);
  strata_wave_destroy(&s->wave);
  strata_fdtd_destroy(&s->fdtd);
  strata_mg_destroy(&s->mg);
  strata__op_destroy(&s->op);
  strata_field_destroy(&s->phi);
  strata_field_destroy(&s->psi);
  free(s->tbuf);
  free(s->hist);
  free(s);
  *ps = NULL;
}

/* ---- stepping ----------------------------------------------------------- */

strata_status strata__solver_hist_room(strata_solver *s, size_t n) {
  if (s->nhist + n <= s->hcap) return STRATA_OK;
  size_t cap = 2 * (s->nhist + n) + 16;
  double *h = realloc(s->hist, cap * sizeof *h);
  if (!h)
    return strata__fail(s->ctx, STRATA_ENOMEM, "solver: out of memory for "
                        "the residual history");
  s->hist = h;
  s->hcap = cap;
  return STRATA_OK;
}

/* Appends a solve's result to the history: its initial residual when the
 * history is empty, then its k cycles' residuals. */
static strata_status record(strata_solver *s, const strata_mg_result *res) {
  strata_status st = strata__solver_hist_room(s, (size_t)res->cycles + 1);
  if (st != STRATA_OK) return st;
  if (s->nhist == 0) s->hist[s->nhist++] = res->residual0;
  for (int k = 1; k <= res->cycles; k++) s->hist[s->nhist++] = res->history[k];
  s->cycles += res->cycles;
  s->source_mean = res->source_mean;
  return STRATA_OK;
}

/* One cycle; the first of a run is the full-multigrid pass when the
 * options ask for one (a restart from a checkpoint continues with cycles). */
static strata_status poisson_cycle(strata_solver *s) {
  strata_mg_result res;
  strata_status st =
      strata__mg_cycles(s->mg, s->phi, s->psi, 1, s->cycles == 0, &res);
  return st == STRATA_OK ? record(s, &res) : st;
}

strata_status strata_solver_step(strata_solver *s, long n) {
  if (!s) return STRATA_EINVAL;
  if (n < 0)
    return strata__fail_arg(s->ctx, STRATA_EINVAL, "n", n,
                            "solver: %ld steps asked "
                        "for; it must be >= 0", n);
  double t0 = strata__now();
  strata_status st = STRATA_OK;
  switch (s->kind) {
  case STRATA_SOLVER_HEAT: st = strata_heat_step(s->heat, n); break;
  case STRATA_SOLVER_WAVE: st = strata_wave_step(s->wave, n); break;
  case STRATA_SOLVER_FDTD: st = strata_fdtd_step(s->fdtd, n); break;
  case STRATA_SOLVER_OPERATOR: st = strata__op_step(s->op, n); break;
  default:
    for (long c = 0; c < n && st == STRATA_OK; c++) st = poisson_cycle(s);
    break;
  }
  if (st == STRATA_OK) st = strata_context_sync(s->ctx);
  if (st != STRATA_OK) return st;
  s->last_n = n;
  s->last_s = strata__now() - t0;
  return STRATA_OK;
}

strata_status strata_solver_solve(strata_solver *s, strata_mg_result *res) {
  if (!s) return STRATA_EINVAL;
  if (s->kind != STRATA_SOLVER_POISSON)
    return strata__fail(s->ctx, STRATA_EINVAL, "solver: solve is for the "
                        "Poisson solver; a %s solver steps "
                        "(strata_solver_step)", strata__solver_kinds[s->kind]);
  strata_mg_result r;
  double t0 = strata__now();
  strata_status st = strata_mg_solve(s->mg, s->phi, s->psi, &r);
  if (st == STRATA_OK) st = record(s, &r);
  if (st != STRATA_OK) return st;
  s->last_n = r.cycles;
  s->last_s = strata__now() - t0;
  if (res) *res = r;
  return STRATA_OK;
}

/* ---- fields and traces -------------------------------------------------- */

int strata_solver_field_count(const strata_solver *s) {
  return s ? s->nfields : 0;
}

const char *strata_solver_field_name(const strata_solver *s, int index) {
  if (!s || index < 0 || index >= s->nfields) return NULL;
  return s->names[index];
}

const char *strata_solver_field_unit(const strata_solver *s, int index) {
  if (!s || index < 0 || index >= s->nfields) return NULL;
  /* the other solvers work in grid units or in the initial state's */
  return s->kind == STRATA_SOLVER_WAVE ? "Pa" : "";
}

int strata_solver_field_index(const strata_solver *s, const char *name) {
  if (!s || !name) return -1;
  for (int i = 0; i < s->nfields; i++)
    if (!strcmp(name, s->names[i])) return i;
  return -1;
}

strata_field *strata_solver_field(strata_solver *s, int index) {
  if (!s || index < 0 || index >= s->nfields) return NULL;
  switch (s->kind) {
  case STRATA_SOLVER_HEAT: return strata_heat_field(s->heat);
  case STRATA_SOLVER_WAVE: return strata_wave_field(s->wave, index);
  case STRATA_SOLVER_FDTD: return strata_fdtd_field(s->fdtd, s->comp[index]);
  case STRATA_SOLVER_OPERATOR: return strata__op_field(s->op);
  default: return index == 0 ? s->phi : s->psi;
  }
}

/* The field for reading only: the wave and FDTD solvers are not told that
 * their state may have been written (which would cost a refresh). */
static const strata_field *peek(const strata_solver *s, int index) {
  if (index < 0 || index >= s->nfields) return NULL;
  switch (s->kind) {
  case STRATA_SOLVER_WAVE: return strata__wave_peek(s->wave, index);
  case STRATA_SOLVER_FDTD: return strata__fdtd_peek(s->fdtd, s->comp[index]);
  default: return strata_solver_field((strata_solver *)s, index);
  }
}

/* peek, or NULL after recording a bad index. */
static const strata_field *peek_index(const strata_solver *s, int index) {
  const strata_field *f = peek(s, index);
  if (!f)
    strata__fail_arg(s->ctx, STRATA_EINVAL, "index", index,
                     "solver: field %d; the %s solver has fields 0..%d",
                     index, strata__solver_kinds[s->kind], s->nfields - 1);
  return f;
}

strata_status strata_solver_read(strata_solver *s, int index, void *host) {
  if (!s) return STRATA_EINVAL;
  const strata_field *f = peek_index(s, index);
  if (!f) return STRATA_EINVAL;
  if (s->dist) return strata_dist_gather(f, 0, host);
  if (!host)
    return strata__fail_arg_p(s->ctx, STRATA_EINVAL, "host", host,
                              "solver: host array is NULL");
  return strata_field_read(f, host);
}

static strata_status no_h5(const strata_solver *s, const char *path) {
  return strata__fail_arg_s(s->ctx, STRATA_ENOTSUP, "path", path ? path : "",
                            "cannot write '%s': this strata was built "
                            "without HDF5 (install libhdf5-dev and build "
                            "again)", path ? path : "");
}

strata_status strata_solver_save_h5(strata_solver *s, int index,
                                    const char *path, const char *name,
                                    double spacing) {
  if (!s) return STRATA_EINVAL;
  if (!strata_h5_available()) return no_h5(s, path);
  const strata_field *f = peek_index(s, index);
  if (!f) return STRATA_EINVAL;
  if (!name) name = s->names[index];
  /* the solver's grid (a wave section's x, 1, z), split along its last
   * axis as the field is */
  const int dims = s->dims;
  const strata_precision p = f->d.precision;
  const strata__window *w = f->win;
  const size_t *n = s->n, pts = n[0] * n[1] * n[2];
  /* this rank's owned planes with parallel HDF5 (slabs: a y-z split's
   * boxes are gathered), else the whole grid (on rank 0, gathered) */
  const int slab = w && w->py <= 1 && strata_h5_parallel();
  const size_t mine = slab ? pts / n[dims - 1] * (size_t)w->own_n : pts;
  const int holds = slab || !s->dist || strata_dist_rank(s->dist) == 0;
  void *host = holds ? malloc(mine * (size_t)p + 1) : NULL;
  strata_status st = holds && !host ? strata__fail(s->ctx, STRATA_ENOMEM,
                                                   "out of host memory for "
                                                   "'%s'", path)
                                    : STRATA_OK;
  if (s->dist) st = strata__dist_agree(s->dist, st);
  if (st == STRATA_OK)
    st = slab ? strata_field_read(f, host) : strata_solver_read(s, index, host);
  if (s->dist) st = strata__dist_agree(s->dist, st);
  if (st == STRATA_OK && slab)
    st = strata__h5_write_grid_dist(s->ctx, s->dist, path, dims, n,
                                    (size_t)w->own_lo, (size_t)w->own_n, p,
                                    host, name, spacing);
  else if (st == STRATA_OK && holds)
    st = strata__h5_write_grid(s->ctx, path, dims, n, p, host, name,
                               spacing);
  if (s->dist && !slab) st = strata__dist_agree(s->dist, st);
  free(host);
  return st;
}

strata_status strata_solver_read_box(strata_solver *s, int index,
                                    const size_t lo[3], const size_t n[3],
                                    void *host) {
  if (!s) return STRATA_EINVAL;
  const strata_field *f = peek_index(s, index);
  if (!f) return STRATA_EINVAL;
  if (s->dist)
    return strata__fail(s->ctx, STRATA_ENOTSUP, "solver: a box of a field "
                        "over several processes: read the whole field "
                        "(strata_solver_read)");
  if (!host)
    return strata__fail_arg_p(s->ctx, STRATA_EINVAL, "host", host,
                              "solver: host array is NULL");
  return strata_field_read_box(f, lo, n, host);
}

strata_status strata_solver_check(strata_solver *s) {
  if (!s) return STRATA_EINVAL;
  const long n = strata__solver_steps(s);
  const char *unit = s->kind == STRATA_SOLVER_POISSON ? "cycle" : "step";
  for (int i = 0; i < s->nfields; i++) {
    strata_status st = strata__check_finite(peek(s, i),
                                            strata__solver_kinds[s->kind],
                                            s->names[i], unit, n);
    if (st != STRATA_OK) return st;
  }
  return STRATA_OK;
}

/* The traces' description (all but the samples) for ns samples of the
 * wave solver stepping by dt. */
static void trace_header(const strata_solver *s, strata_traces *t, size_t ns,
                         double dt) {
  int nrec;
  t->receivers = strata__wave_receivers(s->wave, &nrec);
  t->ntraces = (size_t)nrec;
  t->nsamples = ns;
  t->dt = dt * s->every;
  strata__wave_source(s->wave, t->source);
}

strata_status strata_solver_traces(strata_solver *s, strata_traces *t) {
  if (!s) return STRATA_EINVAL;
  if (!t)
    return strata__fail_arg_p(s->ctx, STRATA_EINVAL, "t", t,
                              "solver: traces is NULL");
  memset(t, 0, sizeof *t);
  t->precision = STRATA_F64;
  int nrec = strata__solver_nrec(s);
  if (nrec == 0) return STRATA_OK;
  strata_wave_info wi;
  strata_status st = strata_wave_get_info(s->wave, &wi);
  if (st != STRATA_OK) return st;
  size_t ns = wi.nsamples, need = (size_t)nrec * ns;
  const int root = !s->dist || strata_dist_rank(s->dist) == 0;
  if (root && need > s->tcap) {
    double *b = realloc(s->tbuf, need * sizeof *b);
    if (b) {
      s->tbuf = b;
      s->tcap = need;
    }
  }
  /* over several processes every rank calls the gather, rank 0 even
   * without room, so that no rank is left waiting */
  int room = root && s->tcap >= need;
  st = strata_wave_traces(s->wave, room ? s->tbuf : NULL, room ? s->tcap : 0,
                          &ns);
  if (root && !room)
    return strata__fail(s->ctx, STRATA_ENOMEM, "solver: out of memory for "
                        "%zu trace samples", need);
  if (st != STRATA_OK || !root) return st;
  trace_header(s, t, ns, wi.dt);
  t->data = s->tbuf;
  return STRATA_OK;
}

strata_status strata_solver_save_traces_h5(strata_solver *s,
                                           const char *path) {
  if (!s) return STRATA_EINVAL;
  if (!path)
    return strata__fail_arg_p(s->ctx, STRATA_EINVAL, "path", path,
                              "solver: path is NULL");
  if (!strata_h5_available()) return no_h5(s, path);
  if (strata__solver_nrec(s) == 0)
    return strata__fail_arg_s(s->ctx, STRATA_EINVAL, "path", path,
                              "cannot write '%s': the %s solver has no "
                              "receivers, so no traces", path,
                              strata__solver_kinds[s->kind]);
  strata_traces t;
  strata_status st;
  if (!s->dist || !strata_h5_parallel()) { /* one writer: rank 0 */
    st = strata_solver_traces(s, &t);
    if (st == STRATA_OK && t.ntraces > 0)
      st = strata_traces_save_h5(s->ctx, path, &t);
    return s->dist ? strata__dist_agree(s->dist, st) : st;
  }
  strata_wave_info wi;
  if ((st = strata_wave_get_info(s->wave, &wi)) != STRATA_OK) return st;
  memset(&t, 0, sizeof t);
  t.precision = STRATA_F64;
  trace_header(s, &t, wi.nsamples, wi.dt);
  /* every rank writes the rows of the receivers it samples */
  return strata__wave_save_traces_h5_dist(s->wave, path, &t);
}

int strata__solver_nrec(const strata_solver *s) {
  int n = 0;
  if (s && s->kind == STRATA_SOLVER_WAVE) strata__wave_receivers(s->wave, &n);
  return n;
}

strata_heat *strata_solver_heat(strata_solver *s) { return s ? s->heat : NULL; }
strata_wave *strata_solver_wave(strata_solver *s) { return s ? s->wave : NULL; }
strata_fdtd *strata_solver_fdtd(strata_solver *s) { return s ? s->fdtd : NULL; }
strata_mg *strata_solver_mg(strata_solver *s) { return s ? s->mg : NULL; }

/* ---- info --------------------------------------------------------------- */

long strata__solver_steps(const strata_solver *s) {
  switch (s->kind) {
  case STRATA_SOLVER_HEAT: {
    strata_heat_info i;
    return strata_heat_get_info(s->heat, &i) == STRATA_OK ? i.steps : 0;
  }
  case STRATA_SOLVER_WAVE: {
    strata_wave_info i;
    return strata_wave_get_info(s->wave, &i) == STRATA_OK ? i.steps : 0;
  }
  case STRATA_SOLVER_FDTD: return strata_fdtd_steps(s->fdtd);
  case STRATA_SOLVER_OPERATOR: return strata__op_steps(s->op);
  default: return s->cycles;
  }
}

/* The least traffic of a step per point. */
static double bytes_per_point_step(const strata_solver *s) {
  const double p = (double)s->precision;
  switch (s->kind) {
  case STRATA_SOLVER_HEAT: {
    strata_heat_info i;
    return strata_heat_get_info(s->heat, &i) == STRATA_OK
               ? i.bytes_per_point_step
               : 0;
  }
  case STRATA_SOLVER_WAVE: {
    strata_wave_info i;
    return strata_wave_get_info(s->wave, &i) == STRATA_OK
               ? i.bytes_per_point_step
               : 0;
  }
  case STRATA_SOLVER_FDTD:
    /* explicit: read E and E-, write E+; Yee: read and write Ez, Hx, Hy */
    return (s->yee ? 6.0 : 3.0) * p;
  case STRATA_SOLVER_OPERATOR: return 2.0 * p; /* read u, write op(u) */
  default: {
    /* a cycle on the finest level: pre_fine + post sweeps and the
     * residual, each reading phi and psi and writing one field, plus the
     * coarser levels (1/7 of it in 3D, 1/3 in 2D) */
    strata_mg_options o;
    if (strata_mg_get_options(s->mg, &o) != STRATA_OK) return 0;
    double fine = (o.pre_fine + o.post + 1) * 3.0 * p;
    return fine * (s->dims == 3 ? 8.0 / 7 : 4.0 / 3);
  }
  }
}

/* Points this rank steps. */
static double local_points(const strata_solver *s) {
  double pts = (double)s->n[0] * (double)s->n[1] * (double)s->n[2];
  strata_field_window w;
  const strata_field *f = peek(s, 0);
  if (s->dist && f && strata_field_get_window(f, &w) == STRATA_OK &&
      w.distributed)
    pts = pts / (double)s->n[w.axis] * (double)w.owned_count;
  if (s->dist && f && w.distributed && w.ranks_y > 1) /* a y-z split */
    pts = pts / (double)s->n[1] * (double)w.owned_count_y;
  return pts;
}

strata_status strata_solver_get_info(const strata_solver *s,
                                     strata_solver_info *info) {
  if (!s) return STRATA_EINVAL;
  if (!info)
    return strata__fail_arg_p(s->ctx, STRATA_EINVAL, "info", info,
                              "solver: info is NULL");
  memset(info, 0, sizeof *info);
  info->kind = s->kind;
  info->dims = s->dims;
  for (int a = 0; a < 3; a++) info->n[a] = s->n[a];
  info->precision = s->precision;
  info->h = s->h;
  info->dt = s->dt;
  info->steps = strata__solver_steps(s);
  info->time = (double)info->steps * s->dt;
  info->device_bytes = s->dev_bytes;
  info->host_bytes = sizeof *s + (s->tcap + s->hcap) * sizeof(double) +
                     3 * (size_t)strata__solver_nrec(s) * sizeof(double);
  info->bytes_per_point_step = bytes_per_point_step(s);
  info->last_steps = s->last_n;
  info->last_seconds = s->last_s;
  info->points_per_s =
      s->last_s > 0 ? local_points(s) * (double)s->last_n / s->last_s : 0;
  info->residual0 = s->nhist ? s->hist[0] : 0;
  info->residual = s->nhist ? s->hist[s->nhist - 1] : 0;
  info->history = s->nhist ? s->hist : NULL;
  info->source_mean = s->source_mean;
  return STRATA_OK;
}
