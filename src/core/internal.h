/* Internal definitions shared by the core and the backends.  Not installed. */
#ifndef STRATA_INTERNAL_H
#define STRATA_INTERNAL_H

#include "strata.h"
#include "footprint.h" /* strata__footprint, the memory checks */
#include "fit.h" /* strata__fit: every message the library keeps is cut
                    by it (the context's, errbuf) */

#include <stdarg.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA__ALIGN_BYTES 128
#define STRATA__ERRMSG_SIZE 1024
#define STRATA__ARGNAME_SIZE 64
#define STRATA__ARGVALUE_SIZE 256

typedef struct strata__backend strata__backend;

/* The tuning switch KEY of the context's options (docs/tuning.md): its
 * value copied to buf (NUL-terminated, cut at n - 1 bytes) and buf
 * returned, or NULL when the switch is not set. */
const char *strata__tuning(const strata_context *ctx, const char *key,
                           char *buf, size_t n);
/* The switch as an integer, def when not set or not a number. */
long strata__tuning_long(const strata_context *ctx, const char *key, long def);
/* The switch as a finite number >= 0, def when not set or not one. */
double strata__tuning_double(const strata_context *ctx, const char *key,
                             double def);

struct strata_context {
  strata_backend kind;
  const strata__backend *be;
  void *impl;   /* backend state (CUDA streams, tune cache...) */
  int threads;
  int autotune;
  char *tune_cache;  /* never NULL: a path, or "" for memory only */
  char *tuning;      /* the options' tuning switches, or NULL */
  long live_fields;
  size_t live_bytes; /* bytes of the live fields (solver memory info) */
  size_t alloc_total;/* bytes ever asked of be->alloc: what a create
                        allocated, against its footprint (tests) */
  long live_writers; /* snapshot writers whose messages come here */
  char error[STRATA__ERRMSG_SIZE];
  char error_arg[STRATA__ARGNAME_SIZE]; /* the option or argument the
                                          failure is about, or "" */
  char error_value[STRATA__ARGVALUE_SIZE]; /* its value as text, or "" */
  int error_elsewhere; /* the failure is another rank's, seen here */
  int (*interrupt)(void *arg); /* the options' interrupt hook, or NULL */
  void *interrupt_arg;
};

struct strata_field {
  strata_context *ctx;
  strata_field_desc d;
  strata_field_layout L;
  size_t esize;
  int g[3];     /* ghost width per axis (0 on unused axes) */
  void *data;   /* host or device pointer, STRATA__ALIGN_BYTES aligned */
  struct strata__window *win; /* NULL, or this rank's part of a distributed
                                 field (src/dist/dist.c) */
  int foreign;  /* 1: data is the caller's (strata_field_wrap), not freed */
};

/* ---- Solver kernels ----------------------------------------------------
 * The time loops live in src/solvers/ and are written once; the hot
 * per-step work goes through the backend entries at the end of
 * struct strata__backend, which take the argument blocks below.  Profile
 * arrays (const double *) and slab fields live in the backend's memory
 * (allocated with be->alloc, filled with be->from_host), so a GPU engine
 * can use them without host traffic. */

/* Face treatments of the second-order wave engine (acoustic and the
 * explicit FDTD scheme). */
enum {
  STRATA__WF_ZERO = 0,     /* ghosts stay 0: the wall behind a sponge/CPML */
  STRATA__WF_FREE = 1,     /* the boundary node is held at 0, ghosts are its
                              odd image u(-k) = -u(k) (pressure release,
                              perfect conductor), taken after every FREE
                              boundary node is 0: along the boundary nodes
                              of another axis's FREE face the ghosts (FREE
                              or PERIODIC) are 0, whatever the axis order */
  STRATA__WF_PERIODIC = 2, /* ghosts wrap around (both faces of the axis) */
  STRATA__WF_MUR = 3       /* radius 1 only: the boundary node follows
                              first-order Mur, u+(0) = u(1) + mur*(u+(1) -
                              u(0)); ghosts unused */
};

/* CPML memory of one face along one axis: two slab fields psi and zeta of
 * the problem's dims and ghost width radius, covering along the axis the
 * global indices [origin, origin + n_slab) (n_slab = their n[axis];
 * origin = lo, so the layer's [lo - R, hi + R) is their [-R, n_slab), its
 * first R in the fields' ghosts), all
 * interior indices along the other axes.  psi is updated where the
 * profile's a != 0; the correction terms are added at the global indices
 * [lo, hi) along the axis. */
typedef struct strata__wave_slab {
  strata_field *psi, *zeta; /* NULL: no CPML on this face */
  long origin, lo, hi;
} strata__wave_slab;

/* One step of  u+ = (2u - (1 - e) u- + c2 (L u + cpml)) / (1 + e)  with
 * L the radius-r star Laplacian in grid units (per axis weights lap[]),
 * e the sponge damping (damp[a][index] summed over axes), c2 = (v dt/h)^2,
 * followed by the point sources and the face treatments.  CPML (Pasalic &
 * McGarry 2010, unsplit, in grid units) along axis a:
 *   psi_a  = b psi_a + a D1_a u                        (nodes with a != 0)
 *   t_a    = D2_a u + D1_a psi_a
 *   zeta_a = b zeta_a + a t_a
 *   L u   += D1_a psi_a + zeta_a                       (nodes in [lo, hi))
 * Order inside the entry: psi update, main update of up over the stencil
 * nodes (all interior nodes except boundary nodes of FREE and MUR faces),
 * add src_val at src, then the face treatments on up (FREE: boundary node
 * zeroed, odd ghosts; PERIODIC: wrapped ghosts; MUR: boundary nodes, x
 * faces first, then y, then z).  (The CUDA engine's 3D path adds the CPML
 * term c2 (D1 psi + zeta) / (1 + e) after the main update instead of
 * inside it: the same sum, rounded differently.) */
typedef struct strata__wave_args {
  int dims, radius;                 /* 2 or 3; 1..4 */
  double lap[STRATA_MAX_RADIUS + 1];/* D2 weights, [0] centre (one axis) */
  double d1[STRATA_MAX_RADIUS + 1]; /* D1 weights for offset +k, k >= 1 */
  strata_field *u;                  /* u^n; interior and ghosts valid */
  strata_field *up;                 /* u^{n-1} in, u^{n+1} out (in place) */
  const strata_field *c2;           /* (v dt / h)^2 per point, or NULL */
  const double *c2_line;            /* when c2 == NULL: per index of the last
                                       axis (z in 3D, y in 2D) */
  const strata_field *rb;           /* NULL: constant density; else b =
                                       1/rho per point, ghosts included
                                       (u's layout): L is then point.h's
                                       vd_term/vd_total operator */
  const double *damp[3];            /* sponge e = eta*dt per index, or NULL */
  const double *pml_a[3], *pml_b[3];/* CPML coefficients per index, or NULL */
  strata__wave_slab slab[3][2];     /* [axis][0 = low face, 1 = high face] */
  int face[6];                      /* STRATA__WF_* in STRATA_FACE_* order */
  double mur;                       /* (S - 1) / (S + 1) for MUR faces */
  int nsrc;                         /* point sources added to u^{n+1} */
  long src[8][3];
  double src_val[8];
} strata__wave_args;

/* One Yee TM step in grid units (Ez at nodes (i,j), Hx(i,j) at (i,j+1/2),
 * Hy(i,j) at (i+1/2,j); fields of ghost width 1):
 *   Hx -= ch (dEz/dy + psi_hxy),  Hy += ch (dEz/dx + psi_hyx)
 *   Ez += ce ((dHy/dx + psi_ezx) - (dHx/dy + psi_ezy)),  then sources
 * with psi = b psi + a d(.) on nodes where the profile's a != 0 (pml_a/b
 * at integer nodes for Ez, pml_ah/bh at half nodes for H).  Non-periodic
 * faces hold the boundary node of Ez: PEC keeps it 0 (PML faces are PEC
 * walls behind the layer), MUR applies first-order Mur.  PERIODIC faces
 * update every node with wrapped ghosts. */
enum { STRATA__YF_PEC = 0, STRATA__YF_MUR = 1, STRATA__YF_PERIODIC = 2 };
typedef struct strata__yee_args {
  strata_field *ez, *hx, *hy;
  double ce, ch;                    /* dt/(eps h), dt/(mu h) */
  const double *pml_a[2], *pml_b[2];   /* integer nodes, or NULL */
  const double *pml_ah[2], *pml_bh[2]; /* half nodes i + 1/2, or NULL */
  long pml_lo[2][2], pml_hi[2][2];  /* [axis][face]: index ranges with
                                       a != 0 (empty when lo >= hi) */
  strata_field *psi_ezx, *psi_ezy, *psi_hxy, *psi_hyx; /* NULL: no PML */
  int face[4];                      /* STRATA__YF_* */
  double mur;                       /* (S - 1) / (S + 1) */
  int nsrc;                         /* added to Ez after its update */
  long src[4][2];
  double src_val[4];
} strata__yee_args;

/* ---- Multigrid kernels -------------------------------------------------
 * The cycles live in src/solvers/mg_cycle.c and are written once; the
 * per-level work goes through the mg_* entries at the end of struct
 * strata__backend.  Every level uses the same dimensionless symmetric
 * stencil S (the source is scaled instead).  Band tables live in the
 * backend's memory (be->alloc, be->from_host). */

/* The level operator: 3D: c[0] centre, c[1] the 6 faces, c[2] the 12
 * edges, c[3] the 8 corners; 2D: c[0] centre, c[1] the 4 faces, c[2] the 4
 * corners, c[3] = 0.  Kernels may skip terms whose weight is 0. */
typedef struct strata__mg_op {
  int dims;    /* 2 or 3 */
  double c[4];
} strata__mg_op;

/* Ghost rules of the (homogeneous) correction equation on a coarse level,
 * per face in STRATA_FACE_* order; only the first ghost layer is used. */
enum {
  STRATA__MG_LINEAR = 0,  /* ghost(-1) = alpha * u(0): zero Dirichlet value
                             at distance d from u(0), alpha = (d - 1) / d */
  STRATA__MG_MIRROR = 1,  /* ghost(-1) = u(0): zero flux through the face
                             halfway between them (as STRATA_BC_NEUMANN) */
  STRATA__MG_PERIODIC = 2 /* ghost(-1) = u(n-1) (both faces of the axis) */
};
typedef struct strata__mg_ghost {
  int kind[6];
  double alpha[6];
} strata__mg_ghost;

/* One Jacobi sweep or a residual, and optionally its norm, over the
 * interior:  res = bscale * (b + bshift) - S u;  out = cu * u + cr * res.
 * u's first ghost layer must be filled; out (may be NULL: norm only) is a
 * field distinct from u and b; *res2 (host memory, may be NULL) receives
 * sum res^2 accumulated in double. */
typedef struct strata__mg_sweep_args {
  strata__mg_op op;
  const strata_field *u, *b;
  strata_field *out;
  double bscale, bshift, cu, cr;
  double *res2;
} strata__mg_sweep_args;

/* A separable banded transfer along one axis: output index p takes the w
 * input indices idx[p*w + q] with weights wt[p*w + q] (weight 0 pads);
 * idx and wt are backend memory, n*w entries. */
typedef struct strata__mg_band {
  long n;          /* output points along the axis */
  int w;           /* entries per output point, 1..8 */
  const int *idx;  /* input interior indices, 0..n_in-1 */
  const double *wt;
} strata__mg_band;

/* Restriction and prolongation-and-correct, one kernel:
 *   out(I,J,K) = beta * base(I,J,K) + scale * sum_{a,b,c} wx_a wy_b wz_c
 *                in(ix_a, iy_b, iz_c)
 * over out's interior, reading in's interior only (no ghosts).  base may be
 * out itself or NULL (when beta == 0); in is distinct from out. */
typedef struct strata__mg_transfer_args {
  const strata_field *in;
  strata_field *out;
  const strata_field *base;
  double beta, scale;
  strata__mg_band band[3];
} strata__mg_transfer_args;

/* The cell-centred variable-coefficient operator of one level (FV):
 *   (A u)_c = alpha_c u_c + h2inv sum_f beta_f (u_c - u_nb(f))
 * over the 2 dims faces of cell c.  beta[a] at cell c is the face between
 * c - e_a and c; the face past the last cell sits in the high ghost slot.
 * u's first ghost layer holds the coarse ghost rules (strata__mg_ghost),
 * which fold the boundary conditions in.  All fields fp64 of the level's
 * shape, ghost width 1; alpha may be NULL (0). */
typedef struct strata__fv_op {
  int dims;
  double h2inv;
  const strata_field *beta[3];
  const strata_field *alpha;
  const strata_field *dinv; /* 1 / the diagonal, boundary terms included */
} strata__fv_op;

/* What a backend provides.  Entries marked optional may be NULL: the core
 * then goes through host staging (download, compute on host, upload). */
struct strata__backend {
  const char *name;
  int host_accessible; /* field memory is plain host memory */
  strata_status (*init)(strata_context *ctx, const strata_context_options *o);
  void (*fini)(strata_context *ctx);
  strata_status (*info)(strata_context *ctx, strata_device_info *info);
  strata_status (*alloc)(strata_context *ctx, size_t bytes, void **p);
  void (*release)(strata_context *ctx, void *p);
  /* whole-allocation transfers between host memory and field memory */
  strata_status (*to_host)(strata_context *ctx, void *dst, const void *src,
                           size_t bytes);
  strata_status (*from_host)(strata_context *ctx, void *dst, const void *src,
                             size_t bytes);
  strata_status (*copy)(strata_context *ctx, void *dst, const void *src,
                        size_t bytes);
  strata_status (*sync)(strata_context *ctx);
  strata_status (*apply)(const strata_stencil *op, const strata_field *in,
                         strata_field *out, const strata_apply_options *opt);
  strata_status (*fill_ghosts)(strata_field *f, const strata_boundary *bc);
  strata_status (*copy_kernel)(const strata_field *in, strata_field *out,
                               const char *variant);
  strata_status (*variants)(strata_context *ctx, const strata_stencil *op,
                            char *buf, size_t n);
  /* optional */
  strata_status (*fill_random)(strata_field *f, uint64_t seed, double lo,
                               double hi);
  strata_status (*fill_value)(strata_field *f, double v);
  strata_status (*norm)(const strata_field *a, const strata_field *b,
                        strata_norm which, double *out);
  /* Solvers (src/solvers/).  NULL = the backend lacks the kernel; the
   * solver then refuses with STRATA_ENOTSUP (never staging per step).
   * apply_fused: steps repetitions of { fill in's ghosts with bc; out =
   *   op(in) } in one sweep (temporal blocking); op is a star or a
   *   symmetric 27-point box, in's ghosts are filled with bc on entry and
   *   its ghost width is >= op->radius * steps; only out's interior
   *   planes [k0, k1) along the last axis (dims - 1) are written, each
   *   with the value the whole sweep gives it, and in is read only on the
   *   planes [k0 - H, k1 + H), H = op->radius * steps, that those outputs
   *   depend on (so the rest of in may change meanwhile: an exchange in
   *   flight); 0 <= k0 < k1 <= n.  The result equals the repeated single
   *   steps to rounding. */
  strata_status (*apply_fused)(const strata_stencil *op,
                               const strata_boundary *bc, int steps,
                               const strata_field *in, strata_field *out,
                               long k0, long k1);
  strata_status (*wave_step)(const strata__wave_args *a);
  strata_status (*yee_step)(const strata__yee_args *a);
  /* dst[p] = sum_q w[p*nw + q] * f.data[off[p*nw + q]] for p < npts;
   * off, w and dst are backend memory (receivers, seismograms). */
  strata_status (*sample)(const strata_field *f, int npts, int nw,
                          const long *off, const double *w, double *dst);
  /* Multigrid (src/solvers/mg_cycle.c).  NULL = the backend lacks the
   * kernel; the solver then refuses with STRATA_ENOTSUP.
   * mg_ghosts: fills the first ghost layer of f by the rules g, axis by
   *   axis (x over the interior, y over x-extended rows, z over whole
   *   planes), so edges and corners are the tensor product of the rules. */
  strata_status (*mg_ghosts)(strata_field *f, const strata__mg_ghost *g);
  /* mg_sweep: Jacobi sweep / residual / residual norm (see the args). */
  strata_status (*mg_sweep)(const strata__mg_sweep_args *a);
  /* mg_transfer: restriction and prolongation (see the args). */
  strata_status (*mg_transfer)(const strata__mg_transfer_args *a);
  /* mg_axpby: y = a*x + b*y + c over y's interior (x may be NULL when
   *   a == 0; x has y's shape); *sum (host, may be NULL) receives the sum
   *   of the new y's interior, accumulated in double. */
  strata_status (*mg_axpby)(strata_field *y, const strata_field *x, double a,
                            double b, double c, double *sum);
  /* Dense host transfers (strata_field_read/write[_ghosted]), optional:
   * copy the interior (ghosted = 0) or the ghosted box (ghosted = 1) of f
   * between field memory and a host array of f's precision, x fastest, no
   * padding; field memory outside the box is left as it is.  Synchronous:
   * done when the call returns.  NULL: the core copies rows through a host
   * image of the whole allocation (to_host/from_host), which on a
   * host_accessible backend (the CPU engine) is the field memory itself. */
  strata_status (*read_dense)(const strata_field *f, int ghosted, void *host);
  strata_status (*write_dense)(strata_field *f, int ghosted,
                               const void *host);
  /* Two wave steps in one sweep (temporal blocking), optional: from a->u
   * (u^n) and a->up (u^{n-1}, only read) writes u^{n+1} into o1 and
   * u^{n+2} into o2 (their interiors; the ghosts are left as they are, and
   * the cases taken have faces whose ghosts are 0), with a->src_val added
   * at step n+1 and val2 at step n+2.  o1 and o2 have u's layout.  *used =
   * 0, with nothing launched and no error, where the backend does not
   * take the case: the caller then steps twice.  The result equals two
   * wave_step calls to rounding.  NULL: never. */
  strata_status (*wave_pair)(const strata__wave_args *a, const double *val2,
                             strata_field *o1, strata_field *o2, int *used);
  /* The blow-up check (strata__check_finite): over f's interior, *count
   * receives how many points are NaN or infinite and *first the dense
   * index (x fastest, f's interior) of the first of them, UINT64_MAX when
   * none, and *value its value.  One reduction over the field on the
   * device; only the count, the index and the value come back to the
   * host.  NULL: the solvers cannot check (STRATA_ENOTSUP). */
  strata_status (*nonfinite)(const strata_field *f, uint64_t *count,
                             uint64_t *first, double *value);
  /* Variable-coefficient multigrid (src/solvers/mg_fv.c), NULL = absent.
   * fv_residual: r = b - A u (b NULL: 0), *r2 (may be NULL) = sum r^2;
   *   r is distinct from u.
   * fv_gsrb: in place on the cells with (i + j + k) % 2 == color:
   *   u += dinv (b - A u).
   * fv_update: d = c1 d + c2 dinv r, u += d; d NULL: u += c2 dinv r.
   * fv_restrict: coarse = the mean of each coarse cell's children (the
   *   axes below dims halve, n_coarse = n_fine / 2).
   * fv_prolong: fine = add * fine + interpolation of coarse, linear or
   *   (quadratic) the parabola through the parent and its two neighbours
   *   per axis (coarse's first ghost layer, edges and corners included,
   *   filled).
   * fv_dot: *out = sum x y (y NULL: sum x), accumulated in double. */
  strata_status (*fv_residual)(const strata__fv_op *op, const strata_field *u,
                               const strata_field *b, strata_field *r,
                               double *r2);
  strata_status (*fv_gsrb)(const strata__fv_op *op, strata_field *u,
                           const strata_field *b, int color);
  strata_status (*fv_update)(const strata__fv_op *op, strata_field *u,
                             const strata_field *r, strata_field *d,
                             double c1, double c2);
  strata_status (*fv_restrict)(const strata_field *fine, strata_field *coarse);
  strata_status (*fv_prolong)(const strata_field *coarse, strata_field *fine,
                              double add, int quadratic);
  strata_status (*fv_dot)(const strata_field *x, const strata_field *y,
                          double *out);
  /* Recording a sequence of queued work and replaying it (CUDA graphs),
   * optional (NULL: the backend runs everything as it comes).
   * capture_begin: from now on the work the backend queues is recorded,
   *   not run; nothing may wait for the device or read back until
   *   capture_end, which stops the recording and makes *graph the
   *   executable recording (on failure the recording is dropped and
   *   *graph is NULL).  graph_run queues a recording; graph_free releases
   *   one (NULL is harmless). */
  strata_status (*capture_begin)(strata_context *ctx);
  strata_status (*capture_end)(strata_context *ctx, void **graph);
  strata_status (*graph_run)(strata_context *ctx, void *graph);
  void (*graph_free)(strata_context *ctx, void *graph);
  /* One red-black Gauss-Seidel step of the FV operator in one pass,
   * optional (NULL: the caller runs fv_gsrb twice): out's interior
   * receives what fv_gsrb colour 0, the ghost rules g on u, fv_gsrb colour
   * 1 would leave in u's interior, starting from u's interior with the
   * rules g.  u is only read (its ghost layer is not used), out is a
   * distinct field of u's shape (its ghosts are left as they are).
   * *used = 0, with nothing launched and no error, where the backend does
   * not take the case (2D, periodic faces). */
  strata_status (*fv_gsrb2)(const strata__fv_op *op, const strata_field *u,
                            const strata_field *b, strata_field *out,
                            const strata__mg_ghost *g, int *used);
  /* fv_residual then fv_restrict without the fine residual field,
   * optional (NULL: the caller runs the two): coarse = the mean of each
   * coarse cell's children of b - A u (u's ghosts filled, b NULL: 0),
   * *r2 (may be NULL) = the sum of the fine residual's squares.  *used =
   * 0, with nothing launched and no error, where the backend does not
   * take the case (a fine axis that is not twice the coarse one or equal
   * to it). */
  strata_status (*fv_residual_restrict)(const strata__fv_op *op,
                                        const strata_field *u,
                                        const strata_field *b,
                                        strata_field *coarse, double *r2,
                                        int *used);
};

extern const strata__backend strata__cpu_backend;
/* The CPU engine's solver kernels (src/cpu/cpu_solvers.c). */
strata_status strata__cpu_apply_fused(const strata_stencil *op,
                                      const strata_boundary *bc, int steps,
                                      const strata_field *in,
                                      strata_field *out, long k0, long k1);
strata_status strata__cpu_wave_step(const strata__wave_args *a);
strata_status strata__cpu_yee_step(const strata__yee_args *a);
strata_status strata__cpu_sample(const strata_field *f, int npts, int nw,
                                 const long *off, const double *w,
                                 double *dst);
/* The CPU engine's multigrid kernels (src/cpu/cpu_multigrid.c). */
strata_status strata__cpu_mg_ghosts(strata_field *f,
                                    const strata__mg_ghost *g);
strata_status strata__cpu_mg_sweep(const strata__mg_sweep_args *a);
strata_status strata__cpu_mg_transfer(const strata__mg_transfer_args *a);
strata_status strata__cpu_mg_axpby(strata_field *y, const strata_field *x,
                                   double a, double b, double c, double *sum);
/* The CPU engine's variable-coefficient kernels (src/cpu/cpu_mgfv.c). */
strata_status strata__cpu_fv_residual(const strata__fv_op *op,
                                      const strata_field *u,
                                      const strata_field *b, strata_field *r,
                                      double *r2);
strata_status strata__cpu_fv_gsrb(const strata__fv_op *op, strata_field *u,
                                  const strata_field *b, int color);
strata_status strata__cpu_fv_update(const strata__fv_op *op, strata_field *u,
                                    const strata_field *r, strata_field *d,
                                    double c1, double c2);
strata_status strata__cpu_fv_restrict(const strata_field *fine,
                                      strata_field *coarse);
strata_status strata__cpu_fv_prolong(const strata_field *coarse,
                                     strata_field *fine, double add,
                                     int quadratic);
strata_status strata__cpu_fv_dot(const strata_field *x, const strata_field *y,
                                 double *out);
#ifdef STRATA_HAVE_CUDA
/* The CUDA engine's multigrid kernels (src/cuda/mg/multigrid.cu). */
strata_status strata__cuda_mg_ghosts(strata_field *f,
                                     const strata__mg_ghost *g);
strata_status strata__cuda_mg_sweep(const strata__mg_sweep_args *a);
strata_status strata__cuda_mg_transfer(const strata__mg_transfer_args *a);
strata_status strata__cuda_mg_axpby(strata_field *y, const strata_field *x,
                                    double a, double b, double c,
                                    double *sum);
/* The CUDA engine's variable-coefficient kernels (src/cuda/mg/fv.cu). */
strata_status strata__cuda_fv_residual(const strata__fv_op *op,
                                       const strata_field *u,
                                       const strata_field *b, strata_field *r,
                                       double *r2);
strata_status strata__cuda_fv_gsrb(const strata__fv_op *op, strata_field *u,
                                   const strata_field *b, int color);
strata_status strata__cuda_fv_update(const strata__fv_op *op, strata_field *u,
                                     const strata_field *r, strata_field *d,
                                     double c1, double c2);
strata_status strata__cuda_fv_restrict(const strata_field *fine,
                                       strata_field *coarse);
strata_status strata__cuda_fv_prolong(const strata_field *coarse,
                                      strata_field *fine, double add,
                                      int quadratic);
strata_status strata__cuda_fv_dot(const strata_field *x, const strata_field *y,
                                  double *out);
strata_status strata__cuda_fv_gsrb2(const strata__fv_op *op,
                                    const strata_field *u,
                                    const strata_field *b, strata_field *out,
                                    const strata__mg_ghost *g, int *used);
strata_status strata__cuda_fv_residual_restrict(const strata__fv_op *op,
                                                const strata_field *u,
                                                const strata_field *b,
                                                strata_field *coarse,
                                                double *r2, int *used);
strata_status strata__cuda_capture_begin(strata_context *ctx);
strata_status strata__cuda_capture_end(strata_context *ctx, void **graph);
strata_status strata__cuda_graph_run(strata_context *ctx, void *graph);
void strata__cuda_graph_free(strata_context *ctx, void *graph);
#endif
#ifdef STRATA_HAVE_CUDA
extern const strata__backend strata__cuda_backend;
int strata__cuda_probe(char *why, size_t n);
#endif

/* Whether the context's interrupt hook asks the work in progress to stop
 * (0 without a hook; ctx may be NULL). */
int strata__interrupted(const strata_context *ctx);

/* Records a detailed message on ctx and returns s; the failure is about
 * no one argument (strata_context_error_arg() gives ""). */
strata_status strata__fail(strata_context *ctx, strata_status s,
                           const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#if defined(__GNUC__)
#define STRATA__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define STRATA__PRINTF(f, a)
#endif
/* The last failure kept aside while a fallback is tried, then put back
 * exactly (message, argument's name and value); a fallback that works
 * clears the record instead (strata__error_clear). */
typedef struct strata__kept_error {
  char msg[STRATA__ERRMSG_SIZE];
  char arg[STRATA__ARGNAME_SIZE];
  char value[STRATA__ARGVALUE_SIZE];
  int elsewhere;
} strata__kept_error;
void strata__error_keep(const strata_context *ctx, strata__kept_error *k);
void strata__error_restore(strata_context *ctx, const strata__kept_error *k);
void strata__error_clear(strata_context *ctx);

/* strata__fail for a collective call that failed because another rank did
 * (strata_context_error_elsewhere() gives 1): that rank's context holds
 * the reason, this one says so. */
strata_status strata__fail_elsewhere(strata_context *ctx, strata_status s,
                                     const char *fmt, ...) STRATA__PRINTF(3, 4);

/* strata__fail for a failure about one option or argument: name is the
 * options struct's field or the parameter as strata.h spells it ("dt",
 * "n[2]", "face[4]", "bc.kind[1]", "path"), value its current value as
 * text.  strata__fail_arg takes the value in its own C type (in C). */
strata_status strata__fail_arg_s(strata_context *ctx, strata_status s,
                                 const char *name, const char *value,
                                 const char *fmt, ...) STRATA__PRINTF(5, 6);
/* A value as text: numbers as C prints them (a double in the fewest
 * digits that read back as it), a string cut to the context's room. */
typedef struct strata__argval {
  char s[STRATA__ARGVALUE_SIZE];
} strata__argval;
strata__argval strata__argval_d(double v);
strata__argval strata__argval_i(long long v);
strata__argval strata__argval_u(unsigned long long v);
strata__argval strata__argval_s(const char *v);
/* A value and the limit it is compared with, as text for one message: in
 * %g's 6 significant digits, or in as many more as it takes to show them
 * different when they are (D = 0.2500001 against 0.25), up to the digits
 * that read back as each.  Every message that puts a value beside its
 * limit prints both through this: strata__vs(v, lim).v, .lim. */
typedef struct strata__versus {
  char v[32], lim[32];
} strata__versus;
strata__versus strata__vs(double v, double limit);
/* A pointer argument: its value is "NULL" or "set". */
#define strata__fail_arg_p(ctx_, st_, name_, ptr_, ...)                      \
  strata__fail_arg_s(ctx_, st_, name_, (ptr_) ? "set" : "NULL", __VA_ARGS__)
#ifndef __cplusplus
#define strata__fail_arg(ctx_, st_, name_, value_, ...)                      \
  strata__fail_arg_s(ctx_, st_, name_,                                       \
                     _Generic((value_),                                      \
                         double: strata__argval_d, float: strata__argval_d,  \
                         char *: strata__argval_s,                           \
                         const char *: strata__argval_s,                     \
                         int: strata__argval_i, long: strata__argval_i,      \
                         long long: strata__argval_i,                        \
                         unsigned: strata__argval_u,                         \
                         unsigned long: strata__argval_u,                    \
                         unsigned long long: strata__argval_u)(value_)       \
                         .s,                                                 \
                     __VA_ARGS__)
#endif
/* The name of an array element, "base[i]", written to buf (at least
 * STRATA__ARGNAME_SIZE bytes) and returned. */
const char *strata__idx(char *buf, const char *base, long i);

/* strata_stencil_validate with a message: STRATA_OK, or STRATA_EINVAL
 * naming the field of op at fault ("op.radius", "op.coef[0][1]") and its
 * value; what starts the message ("apply"). */
strata_status strata__stencil_check(strata_context *ctx,
                                    const strata_stencil *op,
                                    const char *what);

/* A backend's variants entry hands its list of names here: copied to buf
 * when it fits in n bytes, else STRATA_EINVAL naming buf_size with the
 * bytes needed (buf untouched). */
strata_status strata__variants_out(strata_context *ctx, const char *names,
                                   char *buf, size_t n);

/* Validation shared by the front end and the backends: b against a, same
 * context, precision and shape; a failure names b as bname, the caller's
 * parameter. */
strata_status strata__check_pair(const strata_field *a, const strata_field *b,
                                 const char *what, const char *bname);

/* The random value of a point: a counter-based hash, identical on every
 * backend.  idx is the linear index of the point in the ghosted box. */
static inline uint64_t strata__mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
static inline double strata__rand01(uint64_t seed, uint64_t idx) {
  return (double)(strata__mix64(seed ^ strata__mix64(idx)) >> 11) *
         (1.0 / 9007199254740992.0);
}

/* Linear index of (i,j,k) in the ghosted box of f, i.e. in the dense
 * array of strata_field_read_ghosted. */
static inline uint64_t strata__ghosted_index(const strata_field *f, long i,
                                             long j, long k) {
  uint64_t gx = f->d.n[0] + 2 * (uint64_t)f->g[0];
  uint64_t gy = f->d.n[1] + 2 * (uint64_t)f->g[1];
  return (uint64_t)(i + f->g[0]) +
         gx * ((uint64_t)(j + f->g[1]) + gy * (uint64_t)(k + f->g[2]));
}

/* Element offset of interior point (i,j,k). */
static inline size_t strata__offset(const strata_field *f, long i, long j,
                                    long k) {
  return (size_t)((long)f->L.origin + i + (long)f->L.pitch_x *
                  (j + (long)f->L.pitch_y * k));
}

/* Distributed fields: src/core/dist_part.h (included at the end). */

#ifdef STRATA_HAVE_CUDA
/* The variant and block shape of the fixed table (what "auto" runs with
 * autotuning off) for op on these fields: the same on every rank and for
 * every part of a slab, whatever its size. */
strata_status strata__cuda_resolve_variant(const strata_stencil *op,
                                           const strata_field *in,
                                           strata_field *out, char *name,
                                           size_t n, int block[3]);
#endif

/* strata_field_fill_ghosts without the exchange of a distributed field:
 * this rank's slab only, faces by bc as given. */
strata_status strata__fill_ghosts_local(strata_field *f,
                                        const strata_boundary *bc);

/* The blow-up check: STRATA_OK when f's interior (over several processes
 * the owned planes of every rank: collective) holds no NaN or infinity;
 * else STRATA_ENONFINITE with the message "WHO: FIELD is not finite after
 * UNIT STEP: FIELD(i, j[, k]) = VALUE is the first of C non-finite points
 * of N" (global grid indices), the same on every rank. */
strata_status strata__check_finite(const strata_field *f, const char *who,
                                   const char *field, const char *unit,
                                   long step);
/* Whether a step call that took the count from before to after passed a
 * multiple of every (the solvers' check_every; 0 = never). */
static inline int strata__check_due(long before, long after, int every) {
  return every > 0 && before / every != after / every;
}
/* The first NaN or infinity of a dense host array of n values of
 * precision p: its index, or -1 when every value is finite. */
long long strata__host_nonfinite(const void *host, size_t n,
                                 strata_precision p);

/* Fills the ghost layers of an image of f's allocation (host memory). */
strata_status strata__fill_ghosts_host(const strata_field *f, void *img,
                                       const strata_boundary *bc);

/* Time in seconds from a monotonic clock (benchmarks, autotuning). */
double strata__now(void);

#ifdef __cplusplus
}
#endif

#include "dist_part.h" /* strata__window, the distributed fields' calls */
#endif
