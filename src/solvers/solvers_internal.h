/* Shared by the solvers: the second-order wave engine (the acoustic solver
 * and the explicit FDTD scheme run on it), backend-memory profile arrays,
 * and the absorbing-layer profiles.  Not installed. */
#ifndef STRATA_SOLVERS_INTERNAL_H
#define STRATA_SOLVERS_INTERNAL_H

#include "../core/internal.h"

/* Absorbing layer kinds of the engine's faces. */
enum { STRATA__ABS_NONE = 0, STRATA__ABS_SPONGE = 1, STRATA__ABS_CPML = 2 };

typedef struct strata__we_desc {
  int dims, radius;             /* 2 or 3; 1..4 */
  size_t n[3];
  strata_precision precision;
  double lap[STRATA_MAX_RADIUS + 1], d1[STRATA_MAX_RADIUS + 1];
  int face[6];                  /* STRATA__WF_* */
  int absorb[6];                /* STRATA__ABS_*; the face is then ZERO */
  int width;                    /* absorbing layer thickness in points */
  const char *width_arg;        /* the solver option that set width, named
                                   by a failure about it */
  double mur;                   /* (S - 1) / (S + 1) for MUR faces */
  /* host profiles, copied at create: n[a] values each, NULL = none */
  const double *damp[3], *pml_a[3], *pml_b[3];
  const double *c2_line;        /* n[dims-1] values */
  strata_dist *dist;            /* NULL, or n is the global grid split over
                                   dist's ranks along the last axis (and
                                   along y on a y-z split); the profiles
                                   above stay global */
  int split_periodic;           /* STRATA__DIST_* flags: the split axes
                                   that wrap around, and STRATA__DIST_YZ
                                   where a 3D grid may be split along y */
  int density;                  /* a b = 1/rho field will be set
                                   (strata__we_set_b): counted in the
                                   footprint */
} strata__we_desc;

typedef struct strata__wengine {
  strata_context *ctx;
  strata__wave_args a;
  strata_field *u, *up, *c2;
  strata_field *rb;   /* b = 1/rho with ghosts, or NULL (constant rho) */
  size_t gn[3];       /* the global grid */
  int gface[6];       /* the global faces (STRATA__WF_*, absorbing ones
                         ZERO): how rb's ghosts extend the model */
  /* two steps in one sweep (strata__we_step2): the spare pair of fields
   * the sweep writes, made on first use; pair_off: why it is not taken
   * (not asked for, backend, case, memory), single steps from then on;
   * NULL: not known yet */
  strata_field *u2, *up2;
  const char *pair_off;
  double *prof;     /* backend memory holding every profile */
  int dirty;        /* the state was written: refresh ghosts first */
  int split_periodic; /* distributed: strata__we_desc's flags */
} strata__wengine;

/* Creates the engine: fields zeroed, profiles uploaded, CPML slabs for the
 * faces that have them.  Errors: STRATA_ENOTSUP (no wave kernel on the
 * backend), STRATA_ENOMEM and the field errors. */
strata_status strata__we_create(strata_context *ctx, const strata__we_desc *d,
                                strata__wengine **out);
void strata__we_destroy(strata__wengine **e);
/* Adds what strata__we_create(ctx, d) allocates to fp, checking d as it
 * does, without allocating (the profiles' pointers only say whether a
 * profile is there). */
strata_status strata__we_footprint(strata_context *ctx,
                                   const strata__we_desc *d,
                                   strata__footprint *fp);
/* Replaces c2 by a per-point model (dense host array, x fastest; with
 * dist, this rank's owned planes). */
strata_status strata__we_set_c2(strata__wengine *e, const double *c2);
/* Sets b = 1/rho from bfn(i, j, k, user) at global engine indices
 * (inside the grid; ghosts take the value the faces give: wrapped on
 * PERIODIC, the even image on FREE, the nearest node elsewhere), creating
 * the field on first use; the step then uses the variable-density
 * operator. */
strata_status strata__we_set_b(strata__wengine *e,
                               double (*bfn)(long, long, long, void *),
                               void *user);
/* Replaces c2 by a line along the last axis (n[dims-1] values, global). */
strata_status strata__we_set_c2_line(strata__wengine *e, const double *line);
/* One step: sources added to u^{n+1}; then u and up swap.  Refreshes the
 * ghost layers first when the state was written. */
strata_status strata__we_step(strata__wengine *e, int nsrc,
                              const long (*src)[3], const double *val);
/* Two steps in one sweep (temporal blocking), only with the tuning switch
 * wave_pair=1: the fused kernel is slower than the single steps
 * (docs/performance.md), so it is an experiment, not the default.  Where
 * the backend takes the case (*did = 1): val at step n+1 and val2 at n+2,
 * as two strata__we_step calls would add them; afterwards u is u^{n+2} and
 * up u^{n+1}.  *did = 0 and nothing done without wave_pair=1; with
 * it, a case the fused sweep cannot take (distributed, a backend or faces
 * without the kernel, no memory for the two more fields) is an error
 * (STRATA_ENOTSUP naming the reason). */
strata_status strata__we_step2(strata__wengine *e, int nsrc,
                               const long (*src)[3], const double *val,
                               const double *val2, int *did);
/* The context's tuning switch wave_pair=1: the caller should try
 * strata__we_step2. */
int strata__we_pair_wanted(const strata_context *ctx);
/* Makes ghost layers and held boundary nodes of u and up consistent with
 * the faces (host pass; used once after the user writes a state). */
strata_status strata__we_refresh(strata__wengine *e);

/* Solver state blobs (strata_X_save_state): a header of STRATA__STATE_HEAD
 * uint64 values (tag, precision, fields, field bytes, steps, then the
 * solver's own), then every field's ghosted contents in order, then the
 * solver's extra data.  The engine's fields: u, up and the CPML slabs'
 * psi and zeta (at most 14). */
#define STRATA__STATE_HEAD 8
size_t strata__state_fields_bytes(strata_field *const *f, int n);
strata_status strata__state_fields_save(strata_field *const *f, int n,
                                        unsigned char *p);
strata_status strata__state_fields_load(strata_field *const *f, int n,
                                        const unsigned char *p);
int strata__we_state_fields(strata__wengine *e, strata_field **out);
/* The most fields strata__we_state_fields lists: u, up, psi and zeta of 6
 * slabs, b. */
#define STRATA__WE_STATE_MAX 15
/* With dist, a blob's header (tagged as a part) is followed by a part
 * record of STRATA__STATE_PART uint64 values: the rank, the number of
 * ranks, the global grid n[3], the first owned plane and the owned plane
 * count of u's window, then the ranks along y of a y-z split (0 on
 * slabs), so that a part is loaded only on the same decomposition. */
#define STRATA__STATE_PART 8
void strata__state_part(const strata_field *u,
                        uint64_t p[STRATA__STATE_PART]);
/* STRATA_OK when a state saved with (saved_dist, saved: its part record,
 * unread when saved_dist is 0) belongs to the solver whose u is given;
 * else STRATA_EINVAL with a message naming both. */
strata_status strata__state_part_check(const strata_field *u, const char *who,
                                       int saved_dist, const uint64_t *saved);
/* Reads the header of a state blob of solver `who` (tag: one process;
 * tag_part: a rank's part) into h (STRATA__STATE_HEAD values, then the
 * part record) and checks the part against u's window; *hb receives the
 * header's bytes.  ctx gets the message. */
strata_status strata__state_head(strata_context *ctx, const char *who,
                                 const char *what, const strata_field *u,
                                 const void *buf, size_t size, uint64_t tag,
                                 uint64_t tag_part, uint64_t *h, size_t *hb);
/* Collective on a distributed u (every rank calls it once; nothing without
 * a window): s if this rank failed, else the worst failure of another rank
 * with "another rank failed to <what> its state", else STRATA_OK. */
strata_status strata__state_agree(const strata_field *u, strata_status s,
                                  const char *who, const char *what);

/* The solvers' footprints (strata_solver_estimate): the options checked
 * exactly as the kind's create checks them (the same failures and
 * messages), and what it would allocate, set in *fp; nothing is
 * allocated.  Each create calls the same function before allocating and
 * refuses a footprint that does not fit (strata__fp_check). */
strata_status strata__heat_footprint(strata_context *ctx,
                                     const strata_heat_options *o,
                                     strata__footprint *fp);
strata_status strata__wave_footprint(strata_context *ctx,
                                     const strata_wave_options *o,
                                     strata__footprint *fp);
strata_status strata__fdtd_footprint(strata_context *ctx,
                                     const strata_fdtd_options *o,
                                     strata__footprint *fp);
strata_status strata__mg_footprint(strata_context *ctx,
                                   const strata_mg_options *o,
                                   strata__footprint *fp);
strata_status strata__op_footprint(strata_context *ctx,
                                   const strata_operator_options *o,
                                   strata__footprint *fp);

/* The solver interface's hooks (src/solvers/solver.c).  The heat
 * solver's step count, restored with its state. */
void strata__heat_set_steps(strata_heat *h, long steps);
/* A wave's or FDTD solver's field for reading: unlike strata_wave_field
 * and strata_fdtd_field it does not mark the state as written, so reading
 * a snapshot costs no refresh before the next step. */
const strata_field *strata__wave_peek(const strata_wave *w, int previous);
const strata_field *strata__fdtd_peek(const strata_fdtd *f,
                                      strata_fdtd_component c);
/* Exactly `cycles` cycles of the options' cycle type on phi (1 ..
 * max_cycles), with no tolerance or stall test: strata_mg_solve with those
 * options overridden for the call.  fmg = 1 makes the first of them the
 * full-multigrid pass when the options ask for one (opt.fmg); fmg = 0
 * runs cycles only (the pass belongs to a solve's start, not to cycles
 * that continue one). */
strata_status strata__mg_cycles(strata_mg *mg, strata_field *phi,
                                const strata_field *psi, int cycles, int fmg,
                                strata_mg_result *res);

/* The operator kind of the solver interface (operator.c). */
typedef struct strata__op strata__op;
strata_status strata__op_create(strata_context *ctx,
                                const strata_operator_options *o,
                                strata__op **out);
void strata__op_destroy(strata__op **p);
strata_status strata__op_step(strata__op *p, long n);
strata_field *strata__op_field(strata__op *p);
long strata__op_steps(const strata__op *p);
void strata__op_set_steps(strata__op *p, long steps);

/* Backend memory holding n doubles copied from host (NULL host: zeros). */
strata_status strata__dev_doubles(strata_context *ctx, const double *host,
                                  size_t n, double **out);

/* How far (in points) coordinate pos lies inside the absorbing layer of
 * width W on side (0 low, 1 high) of an axis of n nodes; 0 outside.  The
 * outermost node is W deep. */
static inline double strata__layer_depth(double pos, long n, int W,
                                         int side) {
  double d = side ? pos - (double)(n - 1 - W) : (double)W - pos;
  return d > 0 ? d : 0;
}

/* Host-side ghost refresh of a field for the engine's faces (works on a
 * dense ghosted double array of ghost width g). */
void strata__we_fix_host(double *img, const size_t n[3], int dims, int g,
                         const int face[6]);

/* A user's point function seen through strata_field_fill_fn: called at
 * interior points (global indices on a distributed field) only; ghosts and
 * points outside the n[] grid get 0. */
typedef struct {
  strata_point_fn fn;
  void *user;
  long n[3];
} strata__interior_fn;
static inline double strata__call_interior(long i, long j, long k, void *p) {
  const strata__interior_fn *c = (const strata__interior_fn *)p;
  if (i < 0 || j < 0 || k < 0 || i >= c->n[0] || j >= c->n[1] || k >= c->n[2])
    return 0.0;
  return c->fn(i, j, k, c->user);
}

/* The receivers' positions as last placed (*n of them), and the source's:
 * what strata_solver_traces reports, after shots moved them too. */
const double *strata__wave_receivers(const strata_wave *w, int *n);
void strata__wave_source(const strata_wave *w, double src[3]);
/* The samples of the receivers this rank samples (*n of them, over
 * several processes this rank's part; *ids: their numbers among all the
 * receivers, increasing, borrowed like strata__wave_receivers): receiver
 * ids[r]'s samples go to out[r * nsamples + s] (room for *n * nsamples
 * doubles; out NULL: only *n and *ids).  Errors: STRATA_ENOMEM, the
 * backend's. */
strata_status strata__wave_own_traces(const strata_wave *w, double *out,
                                     const int **ids, int *n);
/* Over the ranks of the solver's dist, collectively: its traces as the
 * HDF5 file path, t describing them (t->data unused), each rank writing
 * the rows of the receivers it samples (strata__h5_write_traces_dist). */
strata_status strata__wave_save_traces_h5_dist(const strata_wave *w,
                                              const char *path,
                                              const strata_traces *t);

#endif
