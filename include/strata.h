/*
 * strata.h -- the one public header of libstrata, a finite-difference
 * (stencil) engine for structured grids on GPUs and CPUs.
 *
 * Plain C11, no CUDA types.  Conventions:
 *   - every function that can fail returns a strata_status; STRATA_OK is 0;
 *   - handles are opaque; strata_X_destroy(&h) releases h, sets it to NULL
 *     and accepts NULL;
 *   - the detailed message of the last failure is kept on the context and
 *     read with strata_context_error(), and the option or argument it is
 *     about, with its value, with strata_context_error_arg() and
 *     strata_context_error_value(); the library never prints and never
 *     exits;
 *   - a call that fails validation touches nothing.
 *
 * Lifecycle: create a context (which picks the backend), create fields on
 * it, describe an operator as a strata_stencil, fill ghost layers with
 * strata_field_fill_ghosts(), apply the operator with strata_apply(), read
 * results back with strata_field_read().
 */
#ifndef STRATA_H
#define STRATA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_VERSION_MAJOR 0
#define STRATA_VERSION_MINOR 1
#define STRATA_VERSION_PATCH 0

/* ------------------------------------------------------------------------ */
/* Status codes: one table, X(name, message).                               */
/* ------------------------------------------------------------------------ */
#define STRATA_STATUS_MAP(X)                                                  \
  X(OK, "success")                                                            \
  X(EINVAL, "invalid argument")                                               \
  X(ENOMEM, "out of memory")                                                  \
  X(ESHAPE, "field shapes do not match")                                      \
  X(EPRECISION, "field precisions do not match")                              \
  X(EGHOST, "ghost width too small for the operator")                         \
  X(EOVERFLOW, "size overflows the address space")                            \
  X(ENOBACKEND, "backend not available")                                      \
  X(EDEVICE, "device (CUDA) error")                                           \
  X(EIO, "input/output error")                                                \
  X(EFORMAT, "malformed input")                                               \
  X(EUNSTABLE, "parameters violate a stability limit")                        \
  X(ENOTSUP, "operation not supported by this backend or build")              \
  X(EINTERRUPTED, "interrupted")                                              \
  X(ENONFINITE, "a field holds NaN or infinity (the run blew up)")

typedef enum strata_status {
#define STRATA__STATUS_ENUM(name, msg) STRATA_##name,
  STRATA_STATUS_MAP(STRATA__STATUS_ENUM)
#undef STRATA__STATUS_ENUM
  STRATA__STATUS_COUNT
} strata_status;

/* Short message for a status ("invalid argument"); never NULL. */
const char *strata_strerror(strata_status s);
/* The code's name ("STRATA_EINVAL"); never NULL. */
const char *strata_status_name(strata_status s);

/* Library version as "MAJOR.MINOR.PATCH"; build options are described by
 * strata_build_info(). */
const char *strata_version(void);
/* One line naming the build options (CUDA, OpenMP, compiler). */
const char *strata_build_info(void);

/* ------------------------------------------------------------------------ */
/* Context and backend                                                      */
/* ------------------------------------------------------------------------ */
typedef struct strata_context strata_context;
/* A group of processes (one per GPU) sharing one grid: see "Several
 * processes and GPUs" below. */
typedef struct strata_dist strata_dist;

typedef enum strata_backend {
  STRATA_BACKEND_AUTO = 0, /* CUDA when a usable GPU is present, else CPU */
  STRATA_BACKEND_CPU = 1,
  STRATA_BACKEND_CUDA = 2
} strata_backend;

/* "auto", "cpu", "cuda"; "?" for anything else. */
const char *strata_backend_name(strata_backend b);
/* Parses "auto", "cpu" or "cuda" into *b.  Returns STRATA_EINVAL otherwise. */
strata_status strata_backend_parse(const char *name, strata_backend *b);
/* 1 when backend b can be used in this build on this machine, else 0; when
 * 0 and why != NULL, a reason is written to why (at most why_size bytes). */
int strata_backend_available(strata_backend b, char *why, size_t why_size);

typedef struct strata_context_options {
  strata_backend backend; /* default STRATA_BACKEND_AUTO */
  int device;             /* CUDA device ordinal, default 0 */
  int threads;            /* CPU threads, 0 = OpenMP default */
  int autotune;           /* CUDA: time variants on first use (default 1);
                             a variant whose output differs from the plain
                             kernel's is never chosen */
  const char *tune_cache; /* CUDA: autotune cache file, NULL = the default
                             path ($XDG_CACHE_HOME/strata/tune-v1.txt, else
                             $HOME/.cache/strata/tune-v1.txt; the only
                             environment variables the library reads),
                             "" = keep results in memory only */
  const char *tuning;     /* engine tuning switches, NULL = none: entries
                             KEY=VALUE separated by ',' ';' or spaces; the
                             keys are listed in docs/tuning.md and an
                             unknown key is refused (STRATA_EINVAL) */
  char *errbuf;           /* optional: receives the reason a create failed */
  size_t errbuf_size;
  int (*interrupt)(void *arg); /* optional: asked between the pieces of
                             long work (reading a checkpoint file); when it
                             returns non-zero the work stops with
                             STRATA_EINTERRUPTED and changes nothing (a
                             program's SIGINT/SIGTERM flag, say) */
  void *interrupt_arg;    /* passed to interrupt */
} strata_context_options;

/* Fills *o with the defaults listed above. */
void strata_context_options_init(strata_context_options *o);

/* Creates a context.  opt may be NULL for defaults.  Errors: STRATA_EINVAL
 * (bad options), STRATA_ENOBACKEND (the backend asked for is not usable;
 * the reason goes to opt->errbuf), STRATA_ENOMEM. */
strata_status strata_context_create(strata_context **out,
                                    const strata_context_options *opt);
/* Releases the context; sets *ctx = NULL; NULL and *ctx == NULL are
 * harmless.  Fields and snapshot writers made on it (and the solvers
 * holding fields) must be destroyed first: while any exists the context
 * is not released, *ctx is left as it was, and strata_context_error says
 * how many remain; destroy them, then the context. */
void strata_context_destroy(strata_context **ctx);
/* The backend the context runs on (never AUTO). */
strata_backend strata_context_backend(const strata_context *ctx);
/* The detailed message of the last failure on this context ("" if none). */
const char *strata_context_error(const strata_context *ctx);
/* When the last failure is about one option or argument, its name and its
 * value as text, beside the message; both "" when the failure is about no
 * one argument (every failure sets or clears them, with the message; they
 * stay until the next failure on the context).  The name is the options
 * struct's field as strata.h spells it, with an index for an element of an
 * array field ("dt", "min_ppw", "n[2]", "src[0]", "face[4]", "bc.kind[1]",
 * "receivers[5]", "layer_velocity[1]"; a strata_field_desc's "ghost",
 * "n[1]"), or the function's parameter ("nsteps", "path", "level", "out").
 * The value reads as C prints it (a double in the fewest digits that read
 * back as it: "0.3", "inf"; an enum as its number), a pointer as "NULL" or
 * "set", a string cut at 255 bytes.  When a limit ties several options
 * together (CFL: velocity, dt, h) the name is the one the message tells to
 * change (dt).  Programs use the name to point at their own input (a case
 * file's line, a form's field), never the message's text. */
const char *strata_context_error_arg(const strata_context *ctx);
const char *strata_context_error_value(const strata_context *ctx);
/* 1 when the last failure on ctx is another process's: a collective call
 * (over a strata_dist's ranks) failed here because it failed on another
 * rank, whose context holds the reason; 0 otherwise (set and cleared with
 * the message).  Programs print the failing rank's message, not these. */
int strata_context_error_elsewhere(const strata_context *ctx);
/* Waits until all work queued on the context is done. */
strata_status strata_context_sync(strata_context *ctx);

typedef struct strata_device_info {
  char name[128];        /* CPU model or GPU name */
  size_t memory_bytes;   /* device memory (GPU) or physical memory (CPU) */
  size_t memory_free;    /* free memory when asked, 0 if unknown */
  int multiprocessors;   /* SMs (GPU) or logical CPUs usable (CPU) */
  size_t l2_bytes;       /* L2 (GPU) or last-level cache (CPU), 0 if unknown */
  int cc_major, cc_minor;/* compute capability (GPU), 0 on CPU */
  int threads;           /* OpenMP threads (CPU backend) */
} strata_device_info;

/* Host memory this process may still allocate, in bytes: the system's
 * MemAvailable, bounded by the room its cgroup's memory limit leaves
 * (cgroup v1 or v2: a container's or a batch job's limit); 0 if unknown.
 * The solvers' memory checks use it. */
size_t strata_host_memory_available(void);

/* Describes the machine the context runs on. */
strata_status strata_context_device_info(strata_context *ctx,
                                         strata_device_info *info);

/* ------------------------------------------------------------------------ */
/* Fields: 1D, 2D and 3D grids with ghost layers                             */
/* ------------------------------------------------------------------------ */
typedef struct strata_field strata_field;

typedef enum strata_precision {
  STRATA_F32 = 4,
  STRATA_F64 = 8
} strata_precision;

#define STRATA_MAX_GHOST 8

typedef struct strata_field_desc {
  int dims;          /* 1, 2 or 3 */
  size_t n[3];       /* interior points along x, y, z; unused dims must be 1 */
  int ghost;         /* ghost layers on every side of every used axis, 1..8 */
  strata_precision precision;
} strata_field_desc;

/* The memory layout, for backends, I/O and tests.  Element (i,j,k) of the
 * interior (ghost points have indices -ghost..-1 and n..n+ghost-1) lives at
 * element offset  origin + i + j*pitch_x + k*pitch_x*pitch_y.  origin is
 * chosen so that every row's first interior point is 128-byte aligned. */
typedef struct strata_field_layout {
  size_t pitch_x;    /* elements per row (>= n[0] + 2*ghost) */
  size_t pitch_y;    /* rows per plane (n[1] + 2*ghost in 2D/3D, else 1) */
  size_t planes;     /* n[2] + 2*ghost in 3D, else 1 */
  size_t origin;     /* element offset of interior point (0,0,0) */
  size_t elements;   /* elements allocated */
  size_t bytes;      /* bytes allocated */
} strata_field_layout;

/* Bytes a field of this description needs, without creating it.
 * Errors: STRATA_EINVAL, STRATA_EOVERFLOW. */
strata_status strata_field_bytes(const strata_field_desc *d, size_t *bytes);

/* Creates a field on the context's backend.  Contents start at zero.
 * Errors: STRATA_EINVAL (dims, sizes, ghost, precision), STRATA_EOVERFLOW
 * (byte count overflows), STRATA_ENOMEM (does not fit: the message names
 * the bytes needed and the bytes available), STRATA_EDEVICE. */
strata_status strata_field_create(strata_context *ctx,
                                  const strata_field_desc *d,
                                  strata_field **out);
/* Releases the field; sets *f = NULL; NULL is harmless. */
void strata_field_destroy(strata_field **f);
/* The description and layout the field was created with. */
strata_status strata_field_get_desc(const strata_field *f,
                                    strata_field_desc *d);
strata_status strata_field_get_layout(const strata_field *f,
                                      strata_field_layout *L);
/* The field's context. */
strata_context *strata_field_context(const strata_field *f);
/* The layout strata_field_create gives a field of description d, without
 * creating it.  Errors: those of strata_field_bytes. */
strata_status strata_field_layout_for(const strata_field_desc *d,
                                      strata_field_layout *L);
/* The field's memory: element 0 of its layout (the interior point (0,0,0)
 * is at element L.origin), a host pointer on the CPU backend and a device
 * pointer on the CUDA backend.  Borrowed: valid until the field is
 * destroyed.  Work queued on the context may still be writing it:
 * strata_context_sync first when reading it from another stream or
 * thread.  NULL for f == NULL. */
void *strata_field_data(const strata_field *f);
/* Creates a field of description d on the caller's memory instead of
 * allocating: data (bytes bytes) holds the field in the layout
 * strata_field_layout_for(d) gives, must be aligned to 128 bytes (the
 * kernels load whole aligned rows), must be memory of the context's
 * backend (host memory on the CPU backend, device memory of the
 * context's device on CUDA), and must outlive the field: destroying the
 * field leaves it alone.  Contents are used as they are (not zeroed).
 * Errors: those of strata_field_create for d; STRATA_EINVAL ("data"
 * NULL or not aligned, "bytes" smaller than the layout's). */
strata_status strata_field_wrap(strata_context *ctx,
                                const strata_field_desc *d, void *data,
                                size_t bytes, strata_field **out);
/* sizeof of the public struct named (e.g. "strata_wave_options"), for
 * bindings that mirror the structs in another language; 0 for a name
 * that is not one. */
size_t strata_abi_sizeof(const char *name);

/* Copies a dense host array into the field.  The host array has the field's
 * precision, x fastest.  strata_field_write covers the interior only
 * (n[0]*n[1]*n[2] values); the _ghosted forms cover interior and ghosts
 * ((n[0]+2g)*(n[1]+2g)*(n[2]+2g) values, unused axes without ghosts). */
strata_status strata_field_write(strata_field *f, const void *host);
strata_status strata_field_read(const strata_field *f, void *host);
strata_status strata_field_write_ghosted(strata_field *f, const void *host);
strata_status strata_field_read_ghosted(const strata_field *f, void *host);
/* Copies the box lo[a] .. lo[a] + n[a] - 1 of f's interior (unused axes:
 * lo 0, n 1) to a dense host array, x fastest: a slice of a 3D field
 * (n 1 along its normal) without copying the rest; on a GPU the transfer
 * moves the box's bytes only.  Errors: STRATA_EINVAL (a box outside the
 * field: the message names the axis and both ranges), STRATA_ENOTSUP (a
 * distributed field), those of strata_field_read. */
strata_status strata_field_read_box(const strata_field *f, const size_t lo[3],
                                   const size_t n[3], void *host);

/* Sets every point, ghosts included, to value (NaN is a good poison). */
strata_status strata_field_fill(strata_field *f, double value);
/* Sets every point, ghosts included, to fn(i, j, k, user); indices run from
 * -ghost to n+ghost-1 on used axes, 0 on unused ones. */
typedef double (*strata_point_fn)(long i, long j, long k, void *user);
strata_status strata_field_fill_fn(strata_field *f, strata_point_fn fn,
                                   void *user);
/* Sets every point, ghosts included, to a uniform pseudo-random value in
 * [lo, hi).  The value at a point depends only on seed and the point's
 * indices, so every backend gives the same field. */
strata_status strata_field_fill_random(strata_field *f, uint64_t seed,
                                       double lo, double hi);
/* dst = src, ghosts included.  Shapes and precisions must match. */
strata_status strata_field_copy(strata_field *dst, const strata_field *src);

typedef enum strata_norm {
  STRATA_NORM_L2 = 0,  /* sqrt(sum x^2) */
  STRATA_NORM_RMS = 1, /* sqrt(sum x^2 / N) */
  STRATA_NORM_MAX = 2, /* max |x| */
  STRATA_NORM_SUM = 3  /* plain sum (not a norm: for conservation checks) */
} strata_norm;

/* A norm of the interior, accumulated in double.  NaN in the field gives
 * NaN (never a silently small number). */
strata_status strata_field_norm(const strata_field *f, strata_norm which,
                                double *out);
/* The norm of (a - b) over the interior. */
strata_status strata_field_diff(const strata_field *a, const strata_field *b,
                                strata_norm which, double *out);

/* ------------------------------------------------------------------------ */
/* Boundary conditions                                                       */
/* ------------------------------------------------------------------------ */
typedef enum strata_bc_kind {
  STRATA_BC_DIRICHLET = 0, /* every ghost layer = value */
  STRATA_BC_NEUMANN = 1,   /* zero flux: ghost(-k) = interior(k-1), a mirror
                              about the face halfway between points, so the
                              discrete Laplacian conserves the sum */
  STRATA_BC_PERIODIC = 2,  /* ghost(-k) = interior(n-k); both faces of the
                              axis must be periodic */
  STRATA_BC_NONE = 3       /* leave the ghost layers as they are */
} strata_bc_kind;

enum { STRATA_FACE_XLO, STRATA_FACE_XHI, STRATA_FACE_YLO, STRATA_FACE_YHI,
       STRATA_FACE_ZLO, STRATA_FACE_ZHI };

typedef struct strata_boundary {
  strata_bc_kind kind[6]; /* per face, in STRATA_FACE_* order */
  double value[6];        /* Dirichlet values */
} strata_boundary;

/* The same condition (and Dirichlet value) on every face. */
void strata_boundary_uniform(strata_boundary *bc, strata_bc_kind kind,
                             double value);
/* "dirichlet", "neumann", "periodic", "none"; "?" for anything else. */
const char *strata_bc_name(strata_bc_kind k);
/* Parses the names above. */
strata_status strata_bc_parse(const char *name, strata_bc_kind *k);

/* Fills all ghost layers of f from its interior and bc.  Faces are filled
 * axis by axis (x, then y over the x-extended rows, then z over whole
 * planes), so edges and corners are consistent for box stencils.
 * Errors: STRATA_EINVAL (periodic on one face only, bad kind). */
strata_status strata_field_fill_ghosts(strata_field *f,
                                       const strata_boundary *bc);

/* ------------------------------------------------------------------------ */
/* Operators as data                                                         */
/* ------------------------------------------------------------------------ */
#define STRATA_MAX_RADIUS 4

typedef enum strata_stencil_kind {
  STRATA_STENCIL_STAR = 1,          /* center + symmetric axis pairs, r=1..4 */
  STRATA_STENCIL_DERIVATIVE = 2,    /* antisymmetric pairs along one axis */
  STRATA_STENCIL_BOX = 3,           /* general 3x3 (2D) or 3x3x3 (3D) */
  STRATA_STENCIL_BOX_SYMMETRIC = 4  /* 3x3x3 with C0..C3 */
} strata_stencil_kind;

/* out(p) = sum over the stencil's points q of w(q) * in(p + q).
 *  STAR:           w(0) = center; w(+-k e_a) = coef[a][k], k = 1..radius
 *  DERIVATIVE:     w(+k e_axis) = coef[axis][k], w(-k e_axis) = -coef[axis][k]
 *  BOX:            w(dx,dy,dz) = box[(dz+1)*9 + (dy+1)*3 + (dx+1)] in 3D,
 *                  box[(dy+1)*3 + (dx+1)] in 2D
 *  BOX_SYMMETRIC:  C0 center, C1 the 6 faces, C2 the 12 edges, C3 the 8
 *                  corners (sym[0..3]); 3D only. */
typedef struct strata_stencil {
  strata_stencil_kind kind;
  int dims;   /* 1, 2 or 3: must equal the fields' dims */
  int radius; /* ghost width the stencil needs */
  int axis;   /* DERIVATIVE: 0 = x, 1 = y, 2 = z */
  double center;
  double coef[3][STRATA_MAX_RADIUS + 1]; /* index 0 unused */
  double sym[4];
  double box[27];
} strata_stencil;

/* The standard central Laplacian of order 2, 4, 6 or 8 (radius order/2) on
 * spacing h in 1, 2 or 3 dimensions.  The 3D order-8 one is the 25-point
 * stencil of seismic wave propagation.
 * The builders below have no context, so their status is all they say:
 * STRATA_EINVAL for an argument out of range, and for a spacing h that
 * leaves a weight infinite or zero (1/h^2 overflows below h of about
 * 1e-154 and vanishes above 1e154; the derivative's 1/h, near the ends
 * of the double range); *s is then left as it was.  strata_apply and the
 * operator solver name a hand-filled stencil's non-finite weight
 * ("op.coef[0][1]") in the context's message. */
strata_status strata_stencil_laplacian(strata_stencil *s, int dims, int order,
                                       double h);
/* An isotropic star: center and coef[k-1] for offsets +-k on every axis. */
strata_status strata_stencil_star(strata_stencil *s, int dims, int radius,
                                  double center, const double *coef);
/* The central first derivative d/d(axis) of order 2, 4, 6 or 8 on spacing
 * h (order 8: coefficients 4/5, -1/5, 4/105, -1/280, over h). */
strata_status strata_stencil_derivative(strata_stencil *s, int dims, int axis,
                                        int order, double h);
/* The symmetric 27-point stencil.  Presets: the 7-point
 * finite-difference stencil is (1, -1/6, 0, 0); the trilinear finite-element
 * stencil is (8/3, 0, -1/6, -1/12). */
strata_status strata_stencil_box_symmetric(strata_stencil *s, double c0,
                                           double c1, double c2, double c3);
/* A general box: K has 9 (2D) or 27 (3D) weights, layout as above. */
strata_status strata_stencil_box(strata_stencil *s, int dims, const double *K);
/* The compact 9-point 2D Laplacian (1/(6h^2)) [1 4 1; 4 -20 4; 1 4 1]. */
strata_status strata_stencil_laplacian9(strata_stencil *s, double h);

/* Checks a hand-filled stencil.  Errors: STRATA_EINVAL. */
strata_status strata_stencil_validate(const strata_stencil *s);
/* Number of points with a (structurally) non-zero weight slot. */
int strata_stencil_points(const strata_stencil *s);

/* ------------------------------------------------------------------------ */
/* Applying operators                                                        */
/* ------------------------------------------------------------------------ */
typedef struct strata_apply_options {
  const char *variant; /* kernel variant by name; NULL or "auto" = fastest */
  int block[3];        /* CUDA thread-block shape, 0 = the variant's default */
} strata_apply_options;

/* out = op(in) over the interior of out.  The ghost layers of in must
 * already hold what the boundary conditions say (strata_field_fill_ghosts);
 * the ghost layers of out are not written.  in and out must be distinct
 * fields of the same context, shape and precision, with ghost >= radius.
 * opt may be NULL.  Errors: STRATA_EINVAL, STRATA_ESHAPE, STRATA_EPRECISION,
 * STRATA_EGHOST, STRATA_ENOTSUP (unknown variant for this backend and
 * operator; the message lists the known ones), STRATA_EDEVICE. */
strata_status strata_apply(const strata_stencil *op, const strata_field *in,
                           strata_field *out, const strata_apply_options *opt);

/* The bandwidth ceilings: out = in over the interior, with the traversal of
 * variant ("copy" on the CPU; "copycube", a plain 2.5D copy, and
 * "copycube_halo", the copy with the halo reads of the "kd" variant, on
 * CUDA; NULL = the backend's plain copy).  Ghost layers of out are not
 * written.  Used by benchmarks to measure the machine's own ceiling. */
strata_status strata_copy_kernel(const strata_field *in, strata_field *out,
                                 const char *variant);

/* Names of the kernel variants the context's backend has for op, separated
 * by commas, written to buf (buf_size bytes).  Errors: STRATA_EINVAL (an
 * invalid op; or the names with their terminating NUL need more than
 * buf_size bytes: the message gives the size needed, and buf is left as
 * it was). */
strata_status strata_variants(strata_context *ctx, const strata_stencil *op,
                              char *buf, size_t buf_size);

/* ------------------------------------------------------------------------ */
/* Output: NumPy, VTK image data, PNG images, seismic traces                 */
/* ------------------------------------------------------------------------ */
/* Every writer writes PATH.tmp.<pid> and renames it to PATH only when the
 * whole file is written and synced, so an interrupted run never leaves a
 * truncated file under the final name; on failure the temporary file is
 * removed and PATH is left as it was.  Writers that take a context put
 * their message there (ctx may be NULL); field writers use the field's.
 * Common errors: STRATA_EINVAL, STRATA_EIO (cannot create, write or rename:
 * the message names the file and the system's reason), STRATA_ENOMEM. */

/* Removes the PATH.tmp.<pid> files in folder dir (not below it) that
 * writers of processes no longer running left behind: a killed run's
 * partial files.  Those of live processes, this one's included, are kept
 * (a process is gone when kill(pid, 0) says ESRCH: the PIDs are this
 * machine's, so a folder that processes of other machines write into may
 * lose a live one's file).  *removed (may be NULL) receives the number of
 * files removed.  Errors: STRATA_EINVAL (dir NULL or empty), STRATA_EIO
 * (cannot read dir, or remove a file: the message names it; the others
 * are still removed), STRATA_ENOMEM. */
strata_status strata_remove_stale_temporaries(strata_context *ctx,
                                              const char *dir, int *removed);

/* Writes a dense host array as a NumPy .npy file, format 1.0, dtype '<f4'
 * or '<f8' by p, C order: shape[0] is the slowest axis, ndim 1..4.  Also
 * STRATA_EOVERFLOW when the shape's byte count overflows. */
strata_status strata_npy_write(strata_context *ctx, const char *path,
                               strata_precision p, int ndim,
                               const size_t *shape, const void *data);
/* Reads an .npy file of dtype '<f4' or '<f8', C order, format 1.0 to 3.0
 * into *data (malloc'd: the caller frees it with free()); *ndim and
 * shape[0..*ndim-1] receive its shape (ndim 0..4).  Errors: STRATA_EIO
 * (cannot open), STRATA_EFORMAT (not .npy, other dtype, Fortran order,
 * truncated or longer than its shape), STRATA_ENOMEM. */
strata_status strata_npy_read(strata_context *ctx, const char *path,
                              strata_precision *p, int *ndim, size_t shape[4],
                              void **data);
/* Writes f's interior as .npy of shape (nz, ny, nx), (ny, nx) or (nx,):
 * element [k][j][i] is point (i, j, k). */
strata_status strata_field_save_npy(const strata_field *f, const char *path);

/* Writes fields (all of one shape) as point data of one VTK XML ImageData
 * file (.vti, appended raw little-endian data, opens in ParaView), named
 * names[i] (no quotes, <, > or &).  spacing and origin (3 values each, NULL
 * = 1 and 0) place the points: point (i,j,k) is at origin + (i,j,k) *
 * spacing.  Errors also STRATA_ESHAPE; the message goes to fields[0]'s
 * context. */
strata_status strata_vti_write(const char *path, int nfields,
                               const strata_field *const *fields,
                               const char *const *names,
                               const double spacing[3],
                               const double origin[3]);
/* strata_vti_write of one field (name NULL = "u"). */
strata_status strata_field_save_vti(const strata_field *f, const char *name,
                                    const char *path, const double spacing[3],
                                    const double origin[3]);

/* Writes a ParaView collection (.pvd): the time series of n datasets,
 * files[i] (e.g. .vti files; a relative name is found beside the .pvd) at
 * times[i].  Errors: STRATA_EINVAL (n < 1; a name empty or holding " < >
 * &; times not finite or not increasing), STRATA_EIO. */
strata_status strata_pvd_write(strata_context *ctx, const char *path, int n,
                               const char *const *files,
                               const double *times);

typedef enum strata_colormap {
  STRATA_CMAP_VIRIDIS = 0, /* perceptually uniform, dark blue to yellow */
  STRATA_CMAP_INFERNO = 1, /* black to yellow through red */
  STRATA_CMAP_GRAY = 2,
  STRATA_CMAP_SEISMIC = 3  /* diverging blue-white-red; the automatic range
                              is symmetric about 0 */
} strata_colormap;

/* "viridis", "inferno", "gray", "seismic"; "?" for anything else. */
const char *strata_colormap_name(strata_colormap c);
/* Parses the names above.  Returns STRATA_EINVAL otherwise. */
strata_status strata_colormap_parse(const char *name, strata_colormap *c);

/* The coordinates of one axis of an image: index i lies at origin + i *
 * step, shown as "name (unit)" with ticks at round values. */
typedef struct strata_png_coord {
  const char *name; /* the axis's title, e.g. "x", "depth z", "time";
                       NULL = none */
  const char *unit; /* e.g. "m", "s"; NULL or "" = none */
  double origin;    /* the coordinate of index 0; default 0 */
  double step;      /* the coordinate per index, finite and not 0;
                       default 1 */
} strata_png_coord;

typedef struct strata_png_options {
  int axis;        /* 3D fields: the slice's normal, 0 = x (image y-z),
                      1 = y (image x-z), 2 = z (image x-y); default 2 */
  long index;      /* 3D fields: the slice's index along axis, -1 (default)
                      = the middle */
  strata_colormap cmap;  /* default viridis */
  double lo, hi;   /* colour range; both 0 (default) = the finite values'
                      range (symmetric for diverging maps) */
  int colorbar;    /* 1 (default): a colour bar labelled at its ends and
                      at 0 (or its middle when 0 is outside) */
  int scale;       /* pixels per point, 0 (default) = chosen so that the
                      longer side is about 512 pixels (1..16), a side
                      shorter than 32 pixels stretched to 32, and a side
                      of more than 4096 points averaged over blocks of
                      points down to at most 4096 pixels */
  int flip;        /* 0 (default): the vertical axis's index 0 is the top
                      row, as NumPy and imshow show it; 1: the bottom row */
  int axes;        /* 1 (default): a frame, ticks at round coordinates
                      labelled on both axes, the axes' titles, the title
                      and the values' name over the colour bar; 0: the
                      bare image (and the colour bar) */
  strata_png_coord coord[3]; /* the coordinates of the grid's axes x, y,
                      z (a slice shows two of them; an image of a w x h
                      array: [0] across, [1] down); default "x", "y", "z",
                      no unit, origin 0, step 1 */
  const char *title;      /* above the image; NULL (default) = none */
  const char *value_name; /* the values' name over the colour bar, e.g.
                             "p"; NULL (default) = none */
  const char *value_unit; /* their unit, e.g. "Pa"; NULL or "" = none */
  const unsigned char *lines; /* NULL (default), or lines drawn over the
                      values one pixel thick in line_rgb, e.g. a model's
                      interfaces (strata_model_interfaces): one byte per
                      value of the data drawn (of a grid: per point of the
                      whole grid, a slice cut from it as from the values;
                      of a w x h array: per value, bit 0 across, bit 1
                      down), bit a set where a line separates the point
                      from the next one along axis a (x 0, y 1, z 2); the
                      line runs along that edge of the point's cell */
  unsigned char line_rgb[3]; /* the lines' colour; default black */
} strata_png_options;

/* Fills *o with the defaults listed above. */
void strata_png_options_init(strata_png_options *o);
/* Writes an RGB image (3 bytes per pixel, rows top to bottom) as PNG
 * (deflate-compressed).  Errors: STRATA_EINVAL (a side outside 1..2^24 or
 * more than 2^28 pixels), STRATA_ENOMEM, STRATA_EIO. */
strata_status strata_png_write_rgb(strata_context *ctx, const char *path,
                                   size_t width, size_t height,
                                   const unsigned char *rgb);
/* Draws text into an RGB image (3 bytes per pixel, rows top to bottom,
 * width x height) with the library's 5x7 font, the one that labels every
 * image: the top-left corner of the first glyph at (x, y), each font
 * pixel a scale x scale square of color, 6 * scale pixels a character,
 * 8 * scale a line (the descenders of g j p q y take the eighth row).
 * Capital and small letters, digits and . - + / % ( ) [ ] < > = : , _ ^
 * | * ' are drawn; anything else is a blank.
 * Pixels outside the image are skipped.  Returns the x after the text. */
long strata_image_draw_text(unsigned char *rgb, size_t width, size_t height,
                            long x, long y, const char *text, int scale,
                            const unsigned char color[3]);
/* Writes a w x h array of values (data[row * w + col], precision p) as a
 * colour-mapped PNG image, NaN shown magenta, with the axes, title and
 * colour bar that opt asks for (opt may be NULL: the defaults).  The title
 * says what the colour bar cannot: ": all zero" or ": constant = V" when
 * every finite value is the same (the image is then grey and the colour
 * bar a swatch of that value unless a range is set), ": all NaN", or
 * "(N NaN, magenta)"; it is also stored as the PNG's Title text.  Errors
 * also STRATA_EINVAL for an origin or step that is not finite or a step
 * of 0. */
strata_status strata_png_write_image(strata_context *ctx, const char *path,
                                     strata_precision p, size_t w, size_t h,
                                     const void *data,
                                     const strata_png_options *opt);
/* Writes a slice of f's interior as a PNG image: the whole field in 1D and
 * 2D (x across, y down), the slice opt->axis / opt->index in 3D.  Errors
 * also: STRATA_EINVAL for an axis or index outside the field. */
strata_status strata_field_save_png(const strata_field *f, const char *path,
                                    const strata_png_options *opt);
/* The PNG strata_field_save_png writes, of a dense host grid (dims 1..3,
 * n[3] with the unused axes 1, x fastest, precision p), made in memory:
 * *png (malloc'd; the caller frees it) of *size bytes, byte for byte the
 * file's.  For programs that serve images rather than write them.
 * Errors: STRATA_EINVAL (as strata_field_save_png's, a bad shape),
 * STRATA_ENOMEM. */
strata_status strata_png_encode_grid(strata_context *ctx, strata_precision p,
                                     int dims, const size_t n[3],
                                     const void *host,
                                     const strata_png_options *opt,
                                     void **png, size_t *size);

/* Snapshots: a field written as DIR/STEM.npy, .vti and .png (those asked
 * for), by a background thread while the caller steps on.  Each snapshot
 * is staged on the host once (a dense copy of the field's interior) and
 * every format is written from that copy.  The writer holds `buffers`
 * such copies: a submit waits while all are being written (the
 * back-pressure that bounds the memory).  The writer has a CPU context of
 * its own for the files; the failure of a write is reported by the next
 * submit, flush or status call (ctx's message: "cannot write PATH:
 * reason"), and after it nothing more is written. */
typedef struct strata_snapshot_writer strata_snapshot_writer;

typedef struct strata_snapshot_options {
  const char *dir;        /* the folder of the files (must exist); copied */
  int npy, vti, png;      /* the formats wanted; default npy and png */
  int h5;                 /* also STEM.h5 (dataset field_name, with
                             attributes spacing and origin); needs
                             strata_h5_available() */
  strata_png_options png_options; /* the PNG slice, colours and axes;
                             its strings and lines (one byte per point of
                             the grid) are copied; each PNG's title is
                             the submit's (strata_snapshot_submit_titled),
                             else png_options.title */
  double spacing;         /* .vti: the points' spacing; default 1 */
  const char *field_name; /* .vti: the array's name; default "u"; copied */
  int buffers;            /* host copies in flight, 2 (default) or more */
  int async;              /* 1 (default): a background thread writes;
                             0: submit writes the files before returning */
} strata_snapshot_options;

/* Fills *o with the defaults listed above (dir "."). */
void strata_snapshot_options_init(strata_snapshot_options *o);
/* Creates a writer of snapshots of shape d (dims, n, precision; the ghost
 * width is not used: a snapshot is the interior).  Messages go to ctx.
 * Errors: STRATA_EINVAL (NULL, no format, a bad shape), STRATA_ENOMEM
 * (the host copies would take more than half of the memory the system
 * reports available: the message gives both; or an allocation failed),
 * STRATA_EIO (the thread cannot be started). */
strata_status strata_snapshot_writer_create(strata_context *ctx,
                                            const strata_field_desc *d,
                                            const strata_snapshot_options *o,
                                            strata_snapshot_writer **out);
/* Stages f's interior (of the writer's shape and precision) on the host
 * and hands it over to be written as STEM.*; waits for a free host copy
 * first.  Errors: STRATA_ESHAPE, STRATA_EPRECISION, those of
 * strata_field_read, and an earlier write's failure (then f is not
 * written). */
strata_status strata_snapshot_submit(strata_snapshot_writer *w,
                                     const strata_field *f, const char *stem);
/* The same in two steps, for data staged by the caller (e.g. a field
 * gathered from several processes, strata_solver_read): acquire a free
 * host copy (dense, x fastest, the writer's precision; waits while all
 * are in flight), fill it, then submit it (or release it unwritten).
 * acquire returns NULL only for w == NULL. */
void *strata_snapshot_acquire(strata_snapshot_writer *w);
strata_status strata_snapshot_submit_host(strata_snapshot_writer *w,
                                          void *host, const char *stem);
/* strata_snapshot_submit_host with the PNG's title (e.g. the step and the
 * time; copied, at most 191 bytes; NULL = as without it). */
strata_status strata_snapshot_submit_titled(strata_snapshot_writer *w,
                                            void *host, const char *stem,
                                            const char *title);
void strata_snapshot_release(strata_snapshot_writer *w, void *host);
/* Waits until every snapshot handed over is written.  Errors: the first
 * failed write's. */
strata_status strata_snapshot_flush(strata_snapshot_writer *w);
/* Without waiting: STRATA_OK, or the failure of a write so far (a caller
 * may stop now rather than at its next snapshot). */
strata_status strata_snapshot_status(strata_snapshot_writer *w);
/* Seconds spent writing files so far (the thread's, or submit's when not
 * asynchronous). */
double strata_snapshot_busy_seconds(strata_snapshot_writer *w);
/* Writes what is still handed over (unless a write failed), stops the
 * thread and frees everything; sets *w = NULL; NULL is harmless. */
void strata_snapshot_writer_destroy(strata_snapshot_writer **w);

/* Receiver traces: ntraces traces of nsamples samples, trace r's samples
 * at data[r * nsamples + s]. */
typedef struct strata_traces {
  size_t ntraces, nsamples;
  double dt;                  /* sample interval in seconds */
  strata_precision precision; /* of data */
  const void *data;
  const double *receivers;    /* NULL or 3 * ntraces: x, y, z of each
                                 receiver in metres (z = depth) */
  double source[3];           /* x, y, z of the source in metres */
  int shot;                   /* the shot's number (SEG-Y field record
                                 and source point); 0 = 1 */
} strata_traces;

/* Writes traces as .npy of shape (ntraces, nsamples). */
strata_status strata_traces_save_npy(strata_context *ctx, const char *path,
                                     const strata_traces *t);
/* Writes traces as SEG-Y revision 1: EBCDIC textual header, binary header,
 * 240-byte trace headers, samples as big-endian 4-byte IEEE floats (format
 * code 5).  Each trace header holds (byte positions from 1, as segyio's
 * TraceField names them): the trace's sequence numbers (1, 5), the field
 * record and energy source point = t->shot (9, 17), the channel = the
 * receiver's number from 1 (13), the offset (37: the horizontal distance
 * from source to receiver in whole metres, negative when the receiver's x
 * is below the source's), the receiver's elevation = -z (41) and the
 * source's depth (49) with scalar -100 (69), the source's and receiver's
 * x and y with scalar -100 (71 .. 87, coordinate units metres at 89), the
 * sample count (115) and interval in microseconds (117).  Errors:
 * STRATA_EINVAL also when nsamples > 32767, when dt is not 1..65535
 * microseconds, or a coordinate does not fit. */
strata_status strata_segy_write(strata_context *ctx, const char *path,
                                const strata_traces *t);
/* Writes traces as a PNG image, the gather: one column per receiver, time
 * down from sample 0 at t = 0, through strata_png_write_image with opt
 * (NULL: the defaults, in the seismic colour map).  The horizontal axis is
 * the receivers' coordinate in metres when they are evenly spaced along
 * one of x, y, z ("receiver x (m)"), their distance along the line when
 * they are evenly spaced along another line ("offset (m)"), else their
 * number; the vertical axis is time in seconds (dt).  At the automatic
 * scale (opt->scale 0) each receiver's column is repeated so the plot is
 * at least two thirds as wide as it is tall (a record has many more
 * samples than receivers).  opt's coord[0], coord[1] are replaced by these; the
 * rest (range, colour map, title, value_name, value_unit) is used as
 * given. */
strata_status strata_traces_save_png(strata_context *ctx, const char *path,
                                     const strata_traces *t,
                                     const strata_png_options *opt);
/* The same PNG made in memory: *png (malloc'd; the caller frees it) of
 * *size bytes, byte for byte the file's. */
strata_status strata_traces_encode_png(strata_context *ctx,
                                       const strata_traces *t,
                                       const strata_png_options *opt,
                                       void **png, size_t *size);

/* ---- Earth models from files (velocity, density, ...) -------------------
 * A model is a property sampled on its own regular grid: n[0] x n[1] x
 * n[2] samples along x, y, z (z = depth, down), x fastest, spacing[a]
 * metres apart, sample (0, 0, 0) at origin (metres, in the frame of the
 * simulation grid, whose first point is at 0).  A 2D model (dims 2, n[1]
 * = 1) is an x-z section, the same at every y.  Reading keeps the file's
 * values as they are; strata_model_check refuses non-physical ones, and
 * strata_model_resample puts a model on a simulation grid. */
typedef enum strata_model_format {
  STRATA_MODEL_AUTO = 0, /* by the name: .npy, .sgy / .segy; else refused */
  STRATA_MODEL_NPY = 1,  /* NumPy, '<f4' or '<f8', 2 or 3 axes, C or
                            Fortran order (axes name numpy's shape) */
  STRATA_MODEL_SEGY = 2, /* SEG-Y rev 0-2: one trace per x (or x, y)
                            position, samples along z; IBM or IEEE floats
                            (codes 1, 5), 8-, 16- and 32-bit integers (8,
                            3, 2); big- or little-endian */
  STRATA_MODEL_RAW = 3   /* bare samples: shape, axes, precision and byte
                            order as stated */
} strata_model_format;

typedef enum strata_segy_geometry {
  STRATA_SEGY_AUTO = 0,    /* HEADERS when the inline numbers take more
                              than one value, else TRACES */
  STRATA_SEGY_TRACES = 1,  /* in file order: x fastest, lines of segy_nx
                              traces along x (segy_nx 0: one line, 2D) */
  STRATA_SEGY_HEADERS = 2  /* each trace's inline (y) and crossline (x)
                              numbers place it: every pair once, on a
                              regular lattice of inline and crossline
                              numbers (any file order) */
} strata_segy_geometry;

typedef struct strata_model_file {
  const char *path;
  strata_model_format format; /* default AUTO */
  const char *axes;           /* NPY and RAW: the file's axes from the
                                 slowest to the fastest, "zyx" (default in
                                 3D: the layout strata writes) or any
                                 order of x, y, z ("xyz": Devito, SEG-Y
                                 order); 2D "zx" (default) or "xz" */
  int ndim;                   /* RAW: 2 or 3 */
  size_t shape[3];            /* RAW: sizes along the axes, in their
                                 order (slowest first) */
  strata_precision precision; /* RAW: the samples' type; default F32 */
  int big_endian;             /* RAW: 1 = big-endian samples; default 0 */
  strata_segy_geometry segy_geometry; /* SEGY; default AUTO */
  size_t segy_nx;             /* SEGY TRACES: traces per line along x
                                 (3D); 0 = all traces along x (2D) */
  int inline_byte, crossline_byte; /* SEGY HEADERS: 1-based byte of the
                                 4-byte inline and crossline numbers in
                                 the trace header; default 189, 193 */
  double spacing[3];          /* metres between samples along x, y, z;
                                 <= 0 (default): set later (the CLI uses
                                 the grid's) */
  double origin[3];           /* position of sample (0, 0, 0); default 0 */
} strata_model_file;

typedef struct strata_model {
  int dims;           /* 2 or 3 */
  size_t n[3];        /* samples along x, y, z; n[1] = 1 in 2D */
  double spacing[3];  /* metres */
  double origin[3];   /* metres */
  double *data;       /* n[0] n[1] n[2] doubles, x fastest (owned) */
} strata_model;

/* Fills *f with the defaults listed above (path NULL). */
void strata_model_file_init(strata_model_file *f);
/* Reads the model f describes into *m (its data malloc'd; release it with
 * strata_model_free).  A field of another format set (axes for SEG-Y,
 * ndim for .npy or SEG-Y, segy_nx for .npy or raw) is refused rather
 * than ignored.  The file is checked before anything is allocated
 * (its header and its size against the shape it declares: a file of
 * another size is refused with both numbers), the memory against what the
 * machine has, and read in bounded pieces (the context's interrupt hook is
 * asked between them); on failure *m is left empty.  Errors: STRATA_EINVAL
 * (arguments: axes, shape, geometry), STRATA_EIO (cannot open or read),
 * STRATA_EFORMAT (not a file of the format, an unsupported sample type,
 * traces of varying length, inline/crossline numbers off a lattice or
 * repeated: the message says which and where), STRATA_ENOMEM,
 * STRATA_EINTERRUPTED. */
strata_status strata_model_read(strata_context *ctx,
                                const strata_model_file *f, strata_model *m);
/* Releases m's data and empties it; NULL is harmless. */
void strata_model_free(strata_model *m);
/* STRATA_OK when every sample of m is finite and > 0 (velocity, density,
 * Q); else STRATA_EINVAL naming what (e.g. "velocity"), the first bad
 * value, its sample index (i, j, k) and its position in metres.  *lo and
 * *hi (may be NULL) receive the smallest and largest values. */
strata_status strata_model_check(strata_context *ctx, const strata_model *m,
                                 const char *what, double *lo, double *hi);

typedef enum strata_resample {
  STRATA_RESAMPLE_LINEAR = 0, /* trilinear (bilinear in 2D); exact for
                                 fields linear along each axis */
  STRATA_RESAMPLE_NEAREST = 1 /* the nearest sample (ties: the lower) */
} strata_resample;
/* Samples m at the points (i h, j h, k h) of a grid of n[0] x n[1] x n[2]
 * points into out (n[0] n[1] n[2] doubles, x fastest).  Every point must
 * lie inside the model (its first to its last sample, to 1e-9 of a
 * spacing); along an axis where the model has one sample it is constant
 * (a 2D model's y).  Errors: STRATA_EINVAL (m's spacing not > 0; the
 * model not covering the grid: the message names the axis, the model's
 * extent and the grid's, in metres). */
strata_status strata_model_resample(strata_context *ctx,
                                    const strata_model *m, const size_t n[3],
                                    double h, strata_resample how,
                                    double *out);
/* Marks the interfaces of a model on a grid (n[0] x n[1] x n[2] values,
 * x fastest; an axis of one point has none) in mask (one byte per point),
 * for strata_png_options.lines: bit a (1 << a) of a point is set where
 * the value at the next point along axis a differs from the point's by
 * more than threshold times the smaller of the two magnitudes, |v1 - v0|
 * > threshold min(|v0|, |v1|) (0.05: a jump of more than 5%), and the
 * step v1 - v0 is the largest of its run along a (neither neighbouring
 * step along a of the same sign is larger; of equal ones the first): a
 * jump that resampling spread over two steps is one line.  Bits are
 * added to what mask holds (zero it first), so that the interfaces of
 * several properties (velocity, density) go into one mask.  *count (may
 * be NULL) receives the number of points of mask with a bit set after the
 * call.  Errors: STRATA_EINVAL (NULL, a side of 0, threshold not finite
 * or < 0). */
strata_status strata_model_interfaces(strata_context *ctx, const size_t n[3],
                                      const double *values, double threshold,
                                      unsigned char *mask, size_t *count);

/* HDF5 (when the library was built with it: strata_h5_available() = 1;
 * otherwise the .h5 writers return STRATA_ENOTSUP).  Each file is built in
 * memory and written like every other file (temporary name, then rename).
 * Over several processes: with parallel HDF5 (strata_h5_parallel() = 1:
 * the library built with MPI against an MPI build of HDF5) each rank
 * writes its own part of a snapshot or of the receiver traces into the
 * file (strata_solver_save_h5, strata_solver_save_traces_h5); with serial
 * HDF5 the data is gathered on one rank first. */
int strata_h5_available(void);
int strata_h5_parallel(void);
/* Writes traces as HDF5: dataset "traces" (ntraces, nsamples) in t's
 * precision, "receivers" (ntraces, 3) in metres when t has them, and the
 * root's attributes "dt" (s), "source" (x, y, z in m) and "shot". */
strata_status strata_traces_save_h5(strata_context *ctx, const char *path,
                                    const strata_traces *t);
/* The grid of a series of HDF5 snapshots (strata_snapshot_options.h5):
 * each file holds the dataset `name` of shape (nz, ny, nx) or (ny, nx). */
typedef struct strata_xdmf_grid {
  int dims;                   /* 2 or 3 */
  size_t n[3];                /* points along x, y, z */
  double spacing;             /* the points' spacing */
  strata_precision precision; /* of the datasets */
  const char *name;           /* the dataset's name, e.g. "p" */
} strata_xdmf_grid;
/* Writes an XDMF 3 file (.xmf) describing files[i] (HDF5, relative to
 * the .xmf's folder) at times[i] as one time series of the grid g, which
 * ParaView (XDMF3 reader) and VisIt open as an animation.  Errors:
 * STRATA_EINVAL (n < 1; a name empty or holding " < > & :; times not
 * finite or not increasing; a bad grid), STRATA_EIO. */
strata_status strata_xdmf_write(strata_context *ctx, const char *path, int n,
                                const char *const *files,
                                const double *times,
                                const strata_xdmf_grid *g);

/* ------------------------------------------------------------------------ */
/* Solvers: explicit time stepping (heat, acoustic wave, FDTD)              */
/* ------------------------------------------------------------------------ */
/* Every solver has one lifecycle:
 *   strata_X_options_init(&o); set the fields of o that matter;
 *   strata_X_create(ctx, &o, &h): validates everything up front (sizes,
 *     stability, resolution); a refused request creates nothing, returns
 *     STRATA_EINVAL or STRATA_EUNSTABLE, and the context's message names
 *     the limit; a backend without the solver's kernels gives
 *     STRATA_ENOTSUP with the reason; then it adds up everything it will
 *     allocate (strata_solver_estimate) and refuses a footprint that does
 *     not fit the memory available with STRATA_ENOMEM, naming the bytes
 *     needed and available, before allocating anything;
 *   set the initial state (a function, a host array, or the borrowed
 *     fields);
 *   strata_X_step(h, n) as often as needed: the time loop runs on the
 *     context's backend, with no host round trip per step;
 *   read fields (and traces);  strata_X_destroy(&h).
 * Equations, discretisations and limits: docs/solvers.md.
 *
 * Blow-ups: every check_every steps (an option of each solver, default
 * STRATA_CHECK_EVERY; 0 = never) a step call looks for a NaN or an
 * infinity in the solution (one reduction on the device; a flag and an
 * index come back).  When it finds one the call stops there and returns
 * STRATA_ENONFINITE; the message names the solver, the field, the step
 * count, the first bad point's grid index (i, j[, k]) and value, and how
 * many points are bad.  Over several processes every rank stops at the
 * same step with the same message.  The check only reads: a run gives
 * the same bits with any check_every.  strata_solver_check checks every
 * field now; the Poisson solver's check is the residual norm it takes
 * every cycle. */
#define STRATA_CHECK_EVERY 500

/* ---- Heat (diffusion), 2D and 3D: u' = u + D lap(u) ---- */
typedef struct strata_heat strata_heat;

typedef enum strata_heat_operator {
  STRATA_HEAT_FD = 0,  /* 5-point (2D) / 7-point (3D) Laplacian:
                          u' = u + D (sum of the 2*dims neighbours -
                          2*dims u); stable for D <= 1/(2*dims) */
  STRATA_HEAT_FE27 = 1 /* 3D only: the 27-point trilinear finite-element
                          operator K with lumped mass (C0..C3 =
                          8/3, 0, -1/6, -1/12): u' = u - D K u; stable for
                          D <= 1/2 (K's largest eigenvalue is 4) */
} strata_heat_operator;

typedef struct strata_heat_options {
  int dims;                   /* 2 or 3; default 2 */
  size_t n[3];                /* interior points; default 256 x 256 x 1 */
  strata_precision precision; /* default STRATA_F64 */
  strata_heat_operator op;    /* default STRATA_HEAT_FD */
  double D;                   /* kappa * dt / h^2; default 0.1 */
  strata_boundary bc;         /* default Dirichlet 0 on every face; any mix
                                 of Dirichlet, Neumann and periodic */
  int fuse;                   /* steps fused per sweep (temporal blocking),
                                 1..8; 0 (default) = the backend's choice */
  strata_dist *dist;          /* NULL (default): one process.  Else n is the
                                 global grid, split over dist's ranks, and
                                 ctx must be strata_dist_context(dist): see
                                 "Several processes and GPUs" */
  int check_every;            /* every check_every steps, stop with
                                 STRATA_ENONFINITE when the solution holds
                                 a NaN or an infinity (a reduction: one
                                 read of one field); 0 = never; default
                                 STRATA_CHECK_EVERY */
} strata_heat_options;

/* Fills *o with the defaults listed above. */
void strata_heat_options_init(strata_heat_options *o);
/* The largest stable D for dims (2 or 3) and op: 1/(2*dims) for FD, 1/2
 * for FE27; 0 for a combination that does not exist. */
double strata_heat_stability_limit(int dims, strata_heat_operator op);
/* Creates a heat solver with u = 0.  Errors: STRATA_EINVAL (sizes, dims,
 * operator, boundary, fuse), STRATA_EUNSTABLE (D above the stability
 * limit: the message gives the limit), STRATA_ENOTSUP (fuse > 1 on a
 * backend without fused steps), STRATA_ENOMEM. */
strata_status strata_heat_create(strata_context *ctx,
                                 const strata_heat_options *o,
                                 strata_heat **out);
/* Releases the solver and its fields; sets *h = NULL; NULL is harmless. */
void strata_heat_destroy(strata_heat **h);
/* Sets u(i,j,k) = fn(i, j, k, user) at every interior point (fn is called
 * once per point, serially).  Errors: STRATA_EINVAL. */
strata_status strata_heat_set_initial(strata_heat *h, strata_point_fn fn,
                                      void *user);
/* Sets u's interior from a dense host array of the solver's precision, x
 * fastest (n[0]*n[1]*n[2] values), e.g. read from a file.
 * Errors: STRATA_EINVAL (also a NaN or an infinity in host: the message
 * names its index; u is left as it was). */
strata_status strata_heat_write(strata_heat *h, const void *host);
/* Advances nsteps >= 0 steps: nsteps / fuse sweeps of fuse steps, then
 * one of nsteps % fuse.  With autotune on, the CUDA engine times the
 * kernel shapes of each sweep length on its first use in the context (a
 * one-time cost): to time a run, warm it up with
 * the same remainder.  Errors: STRATA_EINVAL, STRATA_EDEVICE,
 * STRATA_ENONFINITE (a check found u blown up: "Blow-ups" above). */
strata_status strata_heat_step(strata_heat *h, long nsteps);
/* Copies u's interior to a dense host array of the solver's precision. */
strata_status strata_heat_read(const strata_heat *h, void *host);
/* The field holding u (borrowed: valid until the next step or destroy).
 * Its interior may be written before stepping; its ghost layers belong to
 * the solver.  NULL for h == NULL. */
strata_field *strata_heat_field(strata_heat *h);

typedef struct strata_heat_info {
  long steps;          /* steps taken */
  int fuse;            /* steps fused per sweep in use */
  double D, D_limit;   /* D and its stability limit */
  double bytes_per_point_step; /* bytes a step must move per point: one
                                  read and one write per sweep / fuse */
} strata_heat_info;
/* Describes the solver's state.  Errors: STRATA_EINVAL. */
strata_status strata_heat_get_info(const strata_heat *h,
                                   strata_heat_info *info);

/* ---- Acoustic wave, 3D or 2D: p_tt = rho v^2 div(grad(p) / rho)
 *      + f(t) delta(x - x_s); with constant density (the default)
 *      p_tt = v^2 lap(p) + f(t) delta(x - x_s) ----
 * A grid one point thick in y (n[1] == 1) is a 2D x-z section: the 2D
 * solver (2D Laplacian, 2D CFL limit, the source a 2D delta; faces,
 * sources, receivers and models as in 3D, with the y faces ignored and
 * y = 0). */
typedef struct strata_wave strata_wave;

typedef enum strata_wave_face {
  STRATA_WAVE_CPML = 0,    /* convolutional PML, absorb_width points thick
                              (default) */
  STRATA_WAVE_SPONGE = 1,  /* damping sponge, absorb_width points thick */
  STRATA_WAVE_FREE = 2,    /* free surface: p = 0 on the boundary plane
                              (odd image), e.g. the top, z = 0 */
  STRATA_WAVE_PERIODIC = 3 /* wraps; both faces of the axis */
} strata_wave_face;

typedef struct strata_wave_options {
  size_t n[3];                /* grid points along x, y, z; z is depth
                                 (down), z = 0 the top; default 128^3 */
  double h;                   /* grid spacing in metres; default 10 */
  double dt;                  /* time step in seconds; 0 (default) = 0.8
                                 of the CFL limit at the largest velocity */
  strata_precision precision; /* default STRATA_F32 */
  int order;                  /* spatial order 2, 4, 6 or 8; default 8
                                 (the 25-point stencil) */
  double velocity;            /* m/s: the constant model (default 2000);
                                 for a model set later with
                                 strata_wave_set_velocity, its maximum
                                 (it sets dt = 0's choice and the CPML) */
  int nlayers;                /* > 0: a layered model instead */
  const double *layer_top;    /* nlayers depths (m) of the layers' tops,
                                 increasing, the first <= 0 */
  const double *layer_velocity; /* nlayers velocities (m/s) */
  const double *layer_density;  /* NULL (default): constant density; else
                                   nlayers densities (kg/m^3, > 0) of the
                                   layers: variable-density acoustics
                                   (see strata_wave_set_density) */
  strata_wave_face face[6];   /* STRATA_FACE_* order; default all CPML */
  int absorb_width;           /* points; default 20 */
  double absorb_reflection;   /* design reflection of the CPML and sponge
                                 profiles; default 1e-4 */
  double src[3];              /* source position in metres; a negative
                                 coordinate (default) = the grid's centre */
  double f0;                  /* Ricker peak frequency in Hz; default 10 */
  double amplitude;           /* default 1; 0 = no source (then the
                                 dispersion check is skipped) */
  double delay;               /* time of the wavelet's peak (s); 0
                                 (default) = 1.5 / f0 */
  int nreceivers;             /* receivers at receivers[3r .. 3r+2] (m) */
  const double *receivers;
  int record_every;           /* record every k-th step; default 1 */
  double min_ppw;             /* refuse fewer points per wavelength than
                                 this at the smallest velocity and the
                                 Ricker's highest significant frequency,
                                 2.5 f0; default 4 */
  strata_dist *dist;          /* NULL (default): one process; else as for
                                 the heat solver */
  int check_every;            /* every check_every steps, stop with
                                 STRATA_ENONFINITE when p holds
                                 a NaN or an infinity (a reduction: one
                                 read of one field); 0 = never; default
                                 STRATA_CHECK_EVERY */
} strata_wave_options;

/* Fills *o with the defaults listed above. */
void strata_wave_options_init(strata_wave_options *o);
/* The CFL limit on v dt / h of leapfrog with the order-`order` Laplacian
 * in dims dimensions: 2 / sqrt(dims * W) with W the 1D operator's largest
 * eigenvalue (h = 1): 0.4529 for order 8 in 3D, 1/sqrt(3) for order 2.
 * 0 for invalid arguments. */
double strata_wave_cfl_limit(int dims, int order);
/* The Ricker wavelet (1 - 2 (pi f0 t)^2) exp(-(pi f0 t)^2). */
double strata_wave_ricker(double f0, double t);
/* Creates a wave solver with p = 0.  Errors: STRATA_EINVAL (sizes, faces,
 * layers, source or receivers outside the grid, the absorbing layers
 * leaving too few points), STRATA_EUNSTABLE (v_max dt / h above the CFL
 * limit, or fewer than min_ppw points per wavelength: the message gives
 * the numbers), STRATA_ENOTSUP (the backend lacks the wave kernel),
 * STRATA_ENOMEM. */
strata_status strata_wave_create(strata_context *ctx,
                                 const strata_wave_options *o,
                                 strata_wave **out);
/* Releases the solver and its fields; sets *w = NULL; NULL is harmless. */
void strata_wave_destroy(strata_wave **w);
/* Replaces the velocity model by v (m/s), a dense host array of
 * n[0]*n[1]*n[2] doubles, x fastest.  Checked like create (CFL at the
 * solver's dt, dispersion); a refused model leaves the old one.
 * Errors: STRATA_EINVAL (non-finite or non-positive values),
 * STRATA_EUNSTABLE. */
strata_status strata_wave_set_velocity(strata_wave *w, const double *v);
/* Replaces the density model by rho (kg/m^3), a dense host array of
 * n[0]*n[1]*n[2] doubles, x fastest; the solver then steps the
 * variable-density equation (its own kernels; a solver never given a
 * density keeps the constant-density ones).  Only ratios of densities
 * matter.  The operator is rho_i sum_k c_k sum_j (b_i + b_j) / 2 (p_j -
 * p_i) over the stencil's pairs (b = 1 / rho): symmetric, of the
 * stencil's full order where rho is smooth, and equal to the
 * constant-density Laplacian (to rounding) where rho is constant.  Inside
 * CPML layers the memory terms take the density as locally constant
 * (extend the model into them).  A refused model leaves the old one.
 * Errors: STRATA_EINVAL (NULL, non-finite or non-positive values). */
strata_status strata_wave_set_density(strata_wave *w, const double *rho);
/* Shots of a survey on one solver, reusing its fields and buffers.
 * set_source moves the source to src (m; a negative coordinate = the
 * grid's centre), from the next step on.  set_receivers replaces the
 * receivers by n at pos[3r .. 3r+2] (m), only while no sample is recorded
 * (after create or strata_wave_reset); their buffers are kept when n is
 * no larger than before.  set_wavelet makes the source's time function
 * amplitude * samples[k] at t = k dt (linear between samples, 0 after the
 * last; sample 0 at t = 0, no delay) instead of the Ricker; NULL goes back
 * to the Ricker; f0 still sets the dispersion check and the CPML.  reset
 * sets p, p_prev and the CPML memory to zero and the step count and the
 * traces to none, keeping the model, the source and the receivers: the
 * solver then runs as one just created.  With options.dist, every rank
 * calls them with the same arguments (set_receivers is collective).
 * Errors: STRATA_EINVAL (a position outside the grid, as create says;
 * receivers moved after a sample; a wavelet sample not finite, n = 0, dt
 * not > 0), STRATA_ENOMEM, STRATA_EDEVICE. */
strata_status strata_wave_set_source(strata_wave *w, const double src[3]);
strata_status strata_wave_set_receivers(strata_wave *w, int n,
                                        const double *pos);
strata_status strata_wave_set_wavelet(strata_wave *w, const double *samples,
                                      size_t n, double dt);
strata_status strata_wave_reset(strata_wave *w);
/* Sets p at t = 0 to u0(i,j,k) and at t = -dt to um1 (NULL: the same as
 * u0, i.e. zero initial velocity to first order), at every grid point.
 * Errors: STRATA_EINVAL. */
strata_status strata_wave_set_state(strata_wave *w, strata_point_fn u0,
                                    strata_point_fn um1, void *user);
/* Advances nsteps >= 0 steps, recording the receivers when due.
 * Errors: STRATA_EINVAL, STRATA_ENOMEM, STRATA_EDEVICE,
 * STRATA_ENONFINITE (a check found p blown up: "Blow-ups" above). */
strata_status strata_wave_step(strata_wave *w, long nsteps);
/* Copies p^n's interior to a dense host array of the solver's precision. */
strata_status strata_wave_read(const strata_wave *w, void *host);
/* The field holding p^n (previous = 0) or p^{n-1} (previous = 1),
 * borrowed: valid until the next step or destroy.  The interior may be
 * written before stepping (the solver refreshes the ghost layers).  NULL
 * for w == NULL. */
strata_field *strata_wave_field(strata_wave *w, int previous);
/* The seismograms: *nsamples receives the number of samples recorded per
 * receiver (the initial state and every record_every-th step); when out
 * is not NULL, trace r's samples go to out[r * *nsamples + s] (capacity:
 * the number of doubles out holds).  Errors: STRATA_EINVAL (capacity
 * smaller than nreceivers * nsamples). */
strata_status strata_wave_traces(const strata_wave *w, double *out,
                                 size_t capacity, size_t *nsamples);

typedef struct strata_wave_info {
  long steps;
  double dt, h, time;         /* time = steps * dt */
  double vmin, vmax;          /* of the model in use */
  double cfl, cfl_limit;      /* vmax dt / h and its limit */
  double fmax, ppw, min_ppw;  /* 2.5 f0, vmin / (fmax h), the minimum */
  size_t nsamples;            /* trace samples per receiver */
  double bytes_per_point_step;/* bytes the step moves per point at least:
                                 read p^n, p^{n-1} (and v, 1/rho), write p^{n+1};
                                 with CPML layers also read and write psi
                                 and zeta of their points (averaged over
                                 the grid) */
} strata_wave_info;
/* Describes the solver's state.  Errors: STRATA_EINVAL. */
strata_status strata_wave_get_info(const strata_wave *w,
                                   strata_wave_info *info);
/* Checkpoints: the solver's whole state (p^n and p^{n-1} with their ghost
 * layers, the CPML memory psi and zeta, the density model 1/rho when
 * there is one, the step count, the traces recorded so far) as a byte buffer of *bytes bytes (native byte order,
 * for this build; wrap it in a checksum before storing it).  Loading a
 * saved state into a solver created with the same options continues the
 * run bit for bit as if it had not been interrupted.  With options.dist
 * each rank's state is its own part (its slab's fields, ghost planes
 * included, its CPML memory and its receivers' samples) with a record of
 * the rank, the number of ranks, the global grid and its owned planes;
 * save and load are then collective (every rank calls them; when one rank
 * fails, every rank returns an error, the others saying another rank
 * failed), and a part loads only into the same rank of the same
 * decomposition.  Errors: STRATA_EINVAL (NULL, a buffer too small, the
 * state of a solver of another precision, shape, absorbing layers or
 * receiver count, or of another rank, rank count or grid: the message
 * names both), STRATA_EFORMAT (not a wave state, or inconsistent; nothing
 * is changed), STRATA_EDEVICE. */
strata_status strata_wave_state_size(const strata_wave *w, size_t *bytes);
strata_status strata_wave_save_state(const strata_wave *w, void *buf,
                                     size_t size);
strata_status strata_wave_load_state(strata_wave *w, const void *buf,
                                     size_t size);
/* A model from a file on the solver's grid, checked where it matters
 * before anything is created: v (n[0] n[1] n[2] doubles, x fastest, as
 * strata_wave_set_velocity takes it) against options o.  The CFL number
 * uses the fastest point and dt (o->dt, or 0 = the step create would
 * choose: 0.8 of the limit at that point's velocity), the points per
 * wavelength the slowest point; the message of a refusal names the point
 * (i, j, k) and its position in metres.  *info (may be NULL) receives the
 * extremes, where they are, and the numbers.  Errors: STRATA_EINVAL (a
 * value not finite or not > 0, named with its position), STRATA_EUNSTABLE
 * (CFL above the limit, or fewer than o->min_ppw points per wavelength). */
typedef struct strata_wave_model_info {
  double vmin, vmax;          /* m/s */
  size_t at_min[3], at_max[3];/* grid points (i, j, k) where they are */
  double dt, cfl, cfl_limit;  /* the step, vmax dt / h and its limit */
  double ppw;                 /* vmin / (2.5 f0 h) */
} strata_wave_model_info;
strata_status strata_wave_check_model(strata_context *ctx,
                                      const strata_wave_options *o,
                                      const double *v,
                                      strata_wave_model_info *info);
/* The interfaces of the model a wave solver of options o steps, marked
 * as strata_model_interfaces marks them (threshold, mask of o->n[0]
 * o->n[1] o->n[2] bytes, bits added, *count): those of the velocity v and
 * the density rho, dense host arrays as strata_wave_set_velocity and
 * strata_wave_set_density take them, or with v NULL o's layers (their
 * velocities and densities at the grid's nodes) or constant velocity (no
 * interface), and with rho NULL o's layer densities or none.  Errors:
 * STRATA_EINVAL (as strata_model_interfaces; layers as create refuses
 * them). */
strata_status strata_wave_interfaces(strata_context *ctx,
                                     const strata_wave_options *o,
                                     const double *v, const double *rho,
                                     double threshold, unsigned char *mask,
                                     size_t *count);
/* Replaces the density model by rho (kg/m^3), a dense host array as for
 * strata_wave_set_velocity.  Errors: STRATA_EINVAL (non-finite or
 * non-positive values), STRATA_ENOTSUP (a solver without variable
 * density). */
strata_status strata_wave_set_density(strata_wave *w, const double *rho);

/* ---- Surveys: many shots of the acoustic wave solver ----------------- */
/* A survey runs one wave solver per process and its shots one after
 * another on it (strata_wave_reset, set_source, set_receivers: the grid is
 * allocated once), each shot's gather written as DIR/STEM_NNNN.sgy (and
 * .npy), NNNN the shot's number, through the library's writers (complete
 * files only).  Several processes (MPI ranks, job-array tasks) share the
 * shots out: process `rank` of `nranks` runs shots s with s % nranks ==
 * rank; a shot's gather does not depend on which process ran it, nor on
 * how many there are (byte for byte).  The survey's record DIR/STEM.survey
 * holds a fingerprint of everything that shapes the gathers (grid, model,
 * time step, faces, wavelet, shots, receivers, steps, formats); with
 * resume, a survey run again into the same folder skips the shots whose
 * files are all there (a killed survey goes on from the shots not yet
 * done), and refuses to mix its gathers with another survey's. */
typedef struct strata_survey_options {
  strata_wave_options wave;   /* the solver of every shot: grid, model,
                                 precision, order, faces, f0, amplitude,
                                 record_every, check_every; wave.src is
                                 replaced by each shot's position;
                                 wave.receivers are the receivers'
                                 positions (fixed) or their x, y offsets
                                 from the source (moving); wave.dist
                                 NULL: a shot runs on one process; set:
                                 every shot runs over all of dist's ranks
                                 (collective; rank 0 writes; rank and
                                 nranks must be 0 and 1) */
  const double *velocity;     /* NULL, or a per-point model set once, as
                                 strata_wave_set_velocity takes it (then
                                 wave.velocity is its maximum, as there) */
  const double *density;      /* NULL, or a per-point density set once, as
                                 strata_wave_set_density takes it */
  int nshots;                 /* >= 1 */
  const double *shots;        /* 3 * nshots source positions (m) */
  int moving;                 /* 0 (default): fixed receivers; 1: the
                                 spread moves with the source: receiver r
                                 of a shot at x, y = the shot's x, y +
                                 wave.receivers[3r], [3r+1], and at depth
                                 wave.receivers[3r+2] */
  const double *wavelet;      /* NULL (default): the Ricker of wave.f0;
                                 else wavelet_n samples at wavelet_dt s,
                                 as strata_wave_set_wavelet takes them */
  size_t wavelet_n;
  double wavelet_dt;
  long nsteps;                /* time steps per shot, >= 1 */
  const char *dir;            /* the gathers' folder (must exist) */
  const char *stem;           /* file names' stem; default "shot" */
  int segy, npy, h5;          /* formats of the gathers (.sgy, .npy, .h5
                                 as strata_traces_save_h5: with wave.dist
                                 and parallel HDF5 written by every rank,
                                 its receivers' rows); default SEG-Y */
  int first_number;           /* the first shot's number; default 1 */
  int rank, nranks;           /* this process's share; default 0 of 1 */
  int resume;                 /* 1 (default): skip the shots already
                                 written by this same survey; 0: run
                                 every shot of the share again */
  int check_only;             /* 1: every check (shots, receivers, the
                                 solver's options and footprint, the
                                 folder's record), then return: nothing
                                 run, allocated or written */
  /* NULL, or called after each shot of the share (skipped = 1 when its
   * files were there), with the seconds it took; a non-zero return stops
   * the survey there (STRATA_OK, result.stopped = 1). */
  int (*on_shot)(void *user, int shot, int skipped, double seconds);
  void *user;
} strata_survey_options;

typedef struct strata_survey_result {
  int run, skipped;           /* shots of this process's share */
  int stopped;                /* on_shot asked to stop */
  double seconds;             /* the shots' time, setup excluded */
  double setup_seconds;       /* creating the solver and the model */
  long steps;                 /* time steps run */
  size_t device_bytes;        /* the solver's footprint on the context's */
  size_t host_bytes;          /* backend and on the host (one process) */
  int to_run;                 /* shots of the share not yet written */
} strata_survey_result;

/* Fills *o with the defaults listed above (wave: strata_wave_options_init's). */
void strata_survey_options_init(strata_survey_options *o);
/* Runs this process's share of the survey; *r (may be NULL) says what it
 * did.  Every shot's source and receivers are checked before the first
 * runs.  Errors: STRATA_EINVAL (no shots, a shot or a receiver outside the
 * grid: the message names the shot; nsteps < 1; rank outside 0..nranks-1;
 * wave.dist set; the folder holding another survey's gathers: its record
 * and this survey's fingerprints differ), those of strata_wave_create and
 * its shot calls, and the writers' (STRATA_EIO); a shot written is kept
 * when a later one fails. */
strata_status strata_survey_run(strata_context *ctx,
                                const strata_survey_options *o,
                                strata_survey_result *r);
/* The path of shot s's (0-based) gather with extension ext ("sgy", "npy")
 * into buf: DIR/STEM_NNNN.ext, NNNN = first_number + s, at least 4
 * digits.  Returns the length snprintf does. */
int strata_survey_shot_path(const strata_survey_options *o, int s,
                            const char *ext, char *buf, size_t size);

/* ---- FDTD, 2D, grid units: h = 1, c = 1, dt = courant ---------------- */
typedef struct strata_fdtd strata_fdtd;

typedef enum strata_fdtd_scheme {
  STRATA_FDTD_EXPLICIT = 0, /* the explicit E update: E+ = 2(1 - 2dt^2)
                               E - E- + dt^2 (4 neighbours) + dt (J - J-) */
  STRATA_FDTD_YEE_TM = 1    /* Yee's TM scheme: Ez, Hx, Hy staggered */
} strata_fdtd_scheme;

typedef enum strata_fdtd_face {
  STRATA_FDTD_PEC = 0,     /* perfect conductor: E = 0 on the boundary
                              nodes (default) */
  STRATA_FDTD_MUR = 1,     /* first-order Mur absorbing boundary */
  STRATA_FDTD_PML = 2,     /* convolutional PML of pml_width nodes, PEC
                              behind it */
  STRATA_FDTD_PERIODIC = 3 /* both faces of the axis */
} strata_fdtd_face;

typedef enum strata_fdtd_waveform {
  STRATA_FDTD_NO_SOURCE = 0,
  STRATA_FDTD_SINE = 1,     /* J = A sin(2 pi t / period)  (default) */
  STRATA_FDTD_GAUSSIAN = 2, /* J = A exp(-((t - delay) / period)^2) */
  STRATA_FDTD_RICKER = 3    /* J = A ricker(1 / period, t - delay) */
} strata_fdtd_waveform;

typedef struct strata_fdtd_options {
  size_t n[2];                 /* nodes along x, y; default 256 x 256 */
  strata_precision precision;  /* default STRATA_F32 */
  strata_fdtd_scheme scheme;   /* default STRATA_FDTD_EXPLICIT */
  double courant;              /* S = c dt / h; default 0.5; limit
                                  1/sqrt(2) */
  strata_fdtd_face face[4];    /* x-low, x-high, y-low, y-high; default
                                  PEC */
  int pml_width;               /* nodes; default 16 */
  strata_fdtd_waveform waveform; /* of the source current J */
  double src[2];               /* source node (i, j); negative (default) =
                                  the centre */
  double amplitude;            /* default 1 */
  double period;               /* time units; default 20 */
  double delay;                /* time units; default 0 */
  strata_dist *dist;           /* NULL (default): one process; else as for
                                  the heat solver (split along y) */
  int check_every;             /* every check_every steps, stop with
                                  STRATA_ENONFINITE when Ez holds a NaN or
                                  an infinity (a reduction: one read of
                                  one field); 0 = never; default
                                  STRATA_CHECK_EVERY */
} strata_fdtd_options;

typedef enum strata_fdtd_component {
  STRATA_FDTD_EZ = 0,     /* Ez (Yee), E (explicit scheme) */
  STRATA_FDTD_HX = 1,     /* Yee only: Hx(i,j) lives at (i, j + 1/2) */
  STRATA_FDTD_HY = 2,     /* Yee only: Hy(i,j) lives at (i + 1/2, j) */
  STRATA_FDTD_EZ_PREV = 3 /* explicit scheme only: E one step earlier */
} strata_fdtd_component;

/* Fills *o with the defaults listed above (a demonstration case:
 * 256 x 256, explicit scheme, sine source at the centre, PEC walls). */
void strata_fdtd_options_init(strata_fdtd_options *o);
/* The Courant limit of both schemes in 2D: 1/sqrt(2). */
double strata_fdtd_courant_limit(void);
/* Creates an FDTD solver with all fields 0.  Errors: STRATA_EINVAL,
 * STRATA_EUNSTABLE (courant above the limit), STRATA_ENOTSUP,
 * STRATA_ENOMEM. */
strata_status strata_fdtd_create(strata_context *ctx,
                                 const strata_fdtd_options *o,
                                 strata_fdtd **out);
/* Releases the solver; sets *f = NULL; NULL is harmless. */
void strata_fdtd_destroy(strata_fdtd **f);
/* Advances nsteps >= 0 steps.  Errors: STRATA_EINVAL, STRATA_EDEVICE,
 * STRATA_ENONFINITE (a check found Ez blown up: "Blow-ups" above). */
strata_status strata_fdtd_step(strata_fdtd *f, long nsteps);
/* The field of a component (borrowed: valid until the next step or
 * destroy; its interior may be written before stepping to set an initial
 * state).  After n steps Ez/E is at time n dt and the Yee H fields at
 * (n - 1/2) dt.  NULL when the scheme has no such component. */
strata_field *strata_fdtd_field(strata_fdtd *f, strata_fdtd_component c);
/* Copies a component's interior to a dense host array of the solver's
 * precision.  Errors: STRATA_EINVAL (no such component). */
strata_status strata_fdtd_read(const strata_fdtd *f, strata_fdtd_component c,
                               void *host);
/* Steps taken so far. */
long strata_fdtd_steps(const strata_fdtd *f);
/* Checkpoints, as for the wave solver: the whole state (Ez, Hx, Hy and
 * the PML's psi fields, or E and E- with their absorbing memory, ghost
 * layers included, and the step count) as *bytes bytes; loading it into a
 * solver created with the same options continues bit for bit.  With
 * options.dist, as for the wave solver: each rank's own part, collective,
 * loaded only on the same decomposition.  Errors: STRATA_EINVAL (NULL,
 * buffer too small, another scheme, precision, shape or PML, or another
 * rank, rank count or grid), STRATA_EFORMAT (not an FDTD state; nothing
 * is changed), STRATA_EDEVICE. */
strata_status strata_fdtd_state_size(const strata_fdtd *f, size_t *bytes);
strata_status strata_fdtd_save_state(const strata_fdtd *f, void *buf,
                                     size_t size);
strata_status strata_fdtd_load_state(strata_fdtd *f, const void *buf,
                                     size_t size);

/* ------------------------------------------------------------------------ */
/* Multigrid: the Poisson equation -lap(phi) = psi                          */
/* ------------------------------------------------------------------------ */
/* Geometric multigrid for -lap(phi) = psi on a 2D or 3D box of spacing h
 * (docs/multigrid.md).  The faces take the conditions of
 * strata_field_fill_ghosts: Dirichlet (the value sits on the ghost node,
 * one spacing outside the first interior point), zero-flux Neumann (the
 * face lies halfway between the ghost and the first interior point) and
 * periodic, in any mix.  The discrete problem is
 *     S phi = sigma h^2 psi   at every interior point,
 * phi's ghosts filled from bc, S the dimensionless stencil of the
 * discretisation (C0..C3 of strata_stencil_box_symmetric) and sigma its
 * scale, so that S u = sigma h^2 (-lap u) + O(h^4): sigma = 1/6 (FD,
 * 3D), 1/4 (FD, 2D), 1 (FE).
 * The source is scaled once, so S is the same on every level.  Without a
 * Dirichlet face the solution is defined up to a constant: psi must then
 * have zero mean (or opt.project = 1), and the result has zero mean.
 * Lifecycle: strata_mg_options_init(&o), set the problem (dims, n,
 * precision, h, bc) and the method; strata_mg_create(ctx, &o, &mg);
 * strata_mg_solve(mg, phi, psi, &res) as often as needed;
 * strata_mg_destroy(&mg).  Discretisation, coarsening of any size, cycles
 * and measurements: docs/multigrid.md. */
typedef struct strata_mg strata_mg;

typedef enum strata_mg_discretization {
  STRATA_MG_FD = 0, /* finite differences: 7-point in 3D (C0..C3 = 1, -1/6,
                       0, 0), 5-point in 2D (1, -1/4, 0) */
  STRATA_MG_FE = 1, /* trilinear (3D, 27-point: 8/3, 0, -1/6, -1/12) or
                       bilinear (2D, 9-point: 8/3, -1/3, -1/3) finite
                       elements with a lumped mass */
  STRATA_MG_FV = 2  /* cell-centred finite volumes (7-point in 3D, 5 in
                       2D) for -div(beta grad phi) + alpha phi = psi with
                       beta and alpha per cell (strata_mg_set_coefficients;
                       default 1 and 0); fp64 only; see "Variable
                       coefficients" below */
} strata_mg_discretization;

/* Smoothers.  FD and FE take weighted Jacobi only; FV takes all three. */
typedef enum strata_mg_smoother {
  STRATA_MG_SMOOTHER_DEFAULT = 0, /* Jacobi for FD/FE, GSRB for FV */
  STRATA_MG_JACOBI = 1,           /* weighted Jacobi (opt.omega) */
  STRATA_MG_CHEBYSHEV = 2,        /* Chebyshev polynomial of degree = the
                                     sweep count, on [lmax/8, lmax] of
                                     D^-1 A (lmax: Gershgorin bound) */
  STRATA_MG_GSRB = 3              /* red-black Gauss-Seidel; a sweep is one
                                     red and one black half-sweep */
} strata_mg_smoother;

/* The coarsest level's solver (FV). */
typedef enum strata_mg_bottom {
  STRATA_MG_BOTTOM_DEFAULT = 0,   /* CG for FV (Jacobi smoothing for FD/FE) */
  STRATA_MG_BOTTOM_CG = 1,        /* conjugate gradients preconditioned by
                                     the diagonal, to coarse_rtol within
                                     coarse_max_sweeps iterations */
  STRATA_MG_BOTTOM_SMOOTH = 2     /* the smoother, checked as the FD/FE
                                     coarsest solve is */
} strata_mg_bottom;

/* How FV face coefficients come from the cells' beta. */
typedef enum strata_mg_face_mean {
  STRATA_MG_HARMONIC = 0,  /* 2 b1 b2 / (b1 + b2): the flux of a layered
                              medium, right across jumps (default) */
  STRATA_MG_ARITHMETIC = 1 /* (b1 + b2) / 2 */
} strata_mg_face_mean;

typedef enum strata_mg_cycle {
  STRATA_MG_V = 0, /* V-cycle: one coarse-grid correction per level */
  STRATA_MG_F = 1, /* F-cycle: an F-cycle then a V-cycle on the coarse
                      level */
  STRATA_MG_W = 2  /* W-cycle: two coarse-grid corrections per level */
} strata_mg_cycle;

typedef struct strata_mg_options {
  /* the problem */
  int dims;                   /* 2 or 3; default 3 */
  size_t n[3];                /* interior points, any sizes >= 1 (unused
                                 axes 1); default 63 x 63 x 63 */
  strata_precision precision; /* default STRATA_F64 */
  double h;                   /* grid spacing; default 1/64 */
  strata_boundary bc;         /* default Dirichlet 0 on every face; any mix
                                 of Dirichlet, Neumann and periodic */
  strata_mg_discretization disc; /* default STRATA_MG_FE */
  /* the method (the defaults: strata_mg_options_seed004) */
  strata_mg_cycle cycle;      /* default STRATA_MG_V */
  int fmg;                    /* 1: start with a full-multigrid pass (the
                                 correction of the initial guess solved
                                 coarse to fine); default 0 */
  int pre_fine;               /* Jacobi sweeps before the coarse-grid
                                 correction on the finest level; default 2 */
  int pre, post;              /* sweeps before and after it on the other
                                 levels (post also on the finest); 1, 1 */
  double omega;               /* Jacobi weight; 0 (default) = the smoothing
                                 optimum of the stencil (8/9 for FE, 6/7
                                 for FD in 3D, 4/5 for FD in 2D) */
  int max_cycles;             /* default 30 */
  double rtol;                /* stop when the residual has fallen by rtol
                                 relative to the initial guess's; 0 = no
                                 relative test; negative (default) = 1e-5
                                 in fp32, 1e-10 in fp64 */
  double atol;                /* stop when the RMS residual (units of psi)
                                 is <= atol; default 0 (off) */
  int stall;                  /* 1 (default): also stop when the residual
                                 fell by less than 10% in each of two
                                 consecutive cycles (rounding floor) */
  int max_levels;             /* 0 (default) = coarsen while every axis has
                                 at least 3 points */
  int coarse_max_sweeps;      /* coarsest level: Jacobi sweeps at most
                                 (default 1000) ... */
  double coarse_rtol;         /* ... until its residual fell by this factor
                                 (default 1e-3) */
  int project;                /* no Dirichlet face: 1 = subtract psi's mean
                                 and say so (result.source_mean); 0
                                 (default) = refuse a psi whose mean
                                 exceeds 32 eps rms(psi) */
  int profile;                /* 1: time every level (waits for the device
                                 at each level change); default 0 */
  strata_mg_smoother smoother; /* default STRATA_MG_SMOOTHER_DEFAULT */
  strata_mg_bottom bottom;     /* default STRATA_MG_BOTTOM_DEFAULT */
  strata_mg_face_mean face_mean; /* FV only; default harmonic */
  int graph;                   /* FV only: 1 = record the finest level's
                                  cycle and the full-multigrid pass once
                                  (CUDA graphs) and replay the recordings,
                                  which removes the per-kernel launch cost;
                                  needs bottom = STRATA_MG_BOTTOM_SMOOTH,
                                  which then runs exactly coarse_max_sweeps
                                  steps (a recording cannot branch on a
                                  residual), on every backend, and profile
                                  = 0; a backend that cannot record (CPU)
                                  runs the same work directly; default 0 */
  strata_dist *dist;           /* NULL (default): one process.  Else n is
                                  the global grid, split over dist's ranks
                                  in slabs along the last axis as
                                  strata_dist_split splits it; ctx must be
                                  strata_dist_context(dist); phi and psi
                                  are fields of strata_dist_field_create.
                                  FV only; the split axis's n must be a
                                  multiple of 2 x the ranks
                                  (docs/multigrid.md, "Several ranks") */
  int agglomerate;             /* several ranks: the first level gathered
                                  onto rank 0, which solves it and the
                                  coarser levels whole; 0 (default) = the
                                  cost rule of docs/multigrid.md; at most
                                  the deepest level the split allows */
} strata_mg_options;

/* Fills *o with the defaults listed above. */
void strata_mg_options_init(strata_mg_options *o);
/* Sets the method fields of *o to the reference setting (named after the
 * source whose setting it reproduces, docs/multigrid.md) and keeps the
 * problem fields: FE stencil, V-cycles, 2 pre-smoothing sweeps on the
 * finest level, 1 pre and 1 post elsewhere, 1 post on the finest, optimal
 * Jacobi weight, no full multigrid. */
void strata_mg_options_seed004(strata_mg_options *o);

/* Creates the solver: the level hierarchy, its fields and transfer tables
 * on ctx's backend.  Errors: STRATA_EINVAL (a bad option: the message
 * names it), STRATA_EOVERFLOW, STRATA_ENOTSUP (the backend lacks the
 * multigrid kernels), STRATA_ENOMEM, STRATA_EDEVICE. */
strata_status strata_mg_create(strata_context *ctx,
                               const strata_mg_options *o, strata_mg **out);
/* Releases the solver; sets *mg = NULL; NULL is harmless. */
void strata_mg_destroy(strata_mg **mg);

typedef struct strata_mg_result {
  int cycles;            /* cycles done (a full-multigrid pass counts 1) */
  int converged;         /* 1: rtol or atol met */
  int stalled;           /* 1: stopped because the residual stopped
                            falling (opt.stall) */
  double residual0;      /* RMS residual of the initial guess, units of psi */
  double residual;       /* RMS residual of the result */
  double relative;       /* residual / residual0 (0 when residual0 == 0) */
  double factor;         /* mean convergence factor per cycle,
                            relative^(1/cycles) */
  double last_factor;    /* the last cycle's factor */
  double source_mean;    /* the mean subtracted from psi (no Dirichlet
                            face), else 0 */
  double seconds;        /* wall time of the solve */
  const double *history; /* RMS residual after 0..cycles cycles (cycles+1
                            values); owned by the solver, valid until the
                            next solve or destroy */
} strata_mg_result;

/* Solves for phi, starting from phi's interior as the initial guess.  phi
 * and psi are fields of the solver's context, shape and precision (any
 * ghost widths; psi is only read).  On return phi holds the solution, its
 * ghosts filled from bc.  Stops when rtol or atol is met, the residual
 * stalls, or after max_cycles; *res (may be NULL) receives the history.
 * Returns STRATA_OK also when the tolerance was not met (res->converged
 * says).  Errors: STRATA_EINVAL (NULL, same field twice, another context;
 * psi with a nonzero mean and no Dirichlet face, unless opt.project),
 * STRATA_ESHAPE, STRATA_EPRECISION, STRATA_ENONFINITE (the residual,
 * taken every cycle, became NaN or infinite: the message names the first
 * non-finite point of the iterate phi, else of psi), STRATA_EDEVICE. */
strata_status strata_mg_solve(strata_mg *mg, strata_field *phi,
                              const strata_field *psi, strata_mg_result *res);

typedef struct strata_mg_level_info {
  size_t n[3];           /* points */
  double h;              /* nominal spacing opt.h * 2^level (an odd
                            Neumann-Neumann or periodic length makes the
                            coarse spacing a little smaller; exact = 0) */
  double offset[3];      /* where point 0 lies, in units of the finer
                            level's spacing from its point 0 (0.5: between
                            two fine points, 1: on fine point 1); 0 on the
                            finest */
  double face[6];        /* distance from the first/last point to each
                            face, in this level's spacing (Dirichlet: where
                            the coarse correction vanishes; Neumann: 0.5) */
  int exact;             /* 1: every face lies where the finest level puts
                            it (see docs/multigrid.md) */
  long sweeps;           /* Jacobi sweeps here in the last solve */
  double seconds;        /* time spent here in the last solve (opt.profile;
                            else 0); restriction and prolongation count for
                            the finer level */
  int ranks;             /* ranks this level is split over: opt.dist's
                            size, or 1 (one process, or a level gathered
                            onto rank 0, whose counts are rank 0's) */
} strata_mg_level_info;

/* Variable coefficients (opt.disc = STRATA_MG_FV).  The discrete problem
 * on cells of size h (cell i's centre at (i + 1/2) h, the box n h long):
 *   alpha_i phi_i + sum over the faces f of cell i of
 *     beta_f (phi_i - phi_nb(f)) / h^2  =  psi_i,
 * beta_f the mean (opt.face_mean) of the two cells' beta.  Dirichlet
 * values lie on the face (ghost = 2 value - phi, the face at h/2 from the
 * first centre), Neumann faces carry no flux, periodic faces wrap.  No
 * Dirichlet face and alpha = 0 everywhere: singular, as for FD/FE.
 * Coarse levels (cells merged 2 by 2 along every axis) take the average
 * of the fine faces covering a coarse face as its beta, the average of the
 * children's alpha, the average of the children's residual, and linear
 * interpolation back.  docs/multigrid.md, "Variable coefficients". */
/* Sets beta (> 0) and alpha (>= 0) per cell: host arrays of n[0] n[1]
 * n[2] doubles, x fastest; beta NULL = 1, alpha NULL = 0.  Over several
 * ranks (opt.dist) every rank passes the whole grid's arrays (or NULL),
 * the same on every rank; collective.  Rebuilds every
 * level's coefficients.  Errors: STRATA_EINVAL (not FV; a value out of
 * range or not finite: the message names the first bad cell),
 * STRATA_ENOMEM. */
strata_status strata_mg_set_coefficients(strata_mg *mg, const double *beta,
                                         const double *alpha);

/* The number of levels (1 = the finest only). */
int strata_mg_levels(const strata_mg *mg);
/* Describes level (0 = finest).  Errors: STRATA_EINVAL. */
strata_status strata_mg_get_level(const strata_mg *mg, int level,
                                  strata_mg_level_info *info);
/* The options in effect, with omega and rtol resolved.  Errors:
 * STRATA_EINVAL. */
strata_status strata_mg_get_options(const strata_mg *mg,
                                    strata_mg_options *o);


/* ------------------------------------------------------------------------ */
/* One solver interface: heat, wave, FDTD and Poisson behind one handle     */
/* ------------------------------------------------------------------------ */
/* strata_solver drives any of the solvers above through one set of calls,
 * for programs that treat them alike (the strata program, bindings):
 *   strata_solver_options_init(&o, kind); point o.heat / o.wave / o.fdtd /
 *     o.poisson at that solver's own options (NULL = its defaults);
 *   strata_solver_create(ctx, &o, &s): the kind's own create, with its
 *     checks and messages;
 *   set the initial state through the fields (strata_solver_field) or the
 *     kind's own handle (strata_solver_heat, ...);
 *   strata_solver_step(s, n); read fields, traces and info;
 *   save and load the state (strata_solver_save / strata_solver_load to a
 *     checkpoint file, strata_solver_save_state / _load_state in memory);
 *   strata_solver_destroy(&s).
 * Every call dispatches to the kind's own API, so a run through the
 * interface equals the same run through that API bit for bit.  Over
 * several processes (the options' dist), the calls that the kind's API
 * makes collective are collective here too. */
typedef struct strata_solver strata_solver;

typedef enum strata_solver_kind {
  STRATA_SOLVER_HEAT = 1,    /* strata_heat_*: field "u" */
  STRATA_SOLVER_WAVE = 2,    /* strata_wave_*: fields "p", "p_prev";
                                receiver traces */
  STRATA_SOLVER_FDTD = 3,    /* strata_fdtd_*: fields "Ez", "Ez_prev"
                                (explicit scheme) or "Ez", "Hx", "Hy" (Yee) */
  STRATA_SOLVER_POISSON = 4, /* strata_mg_*: fields "phi" (the solution,
                                zero initial guess) and "psi" (the source,
                                zero until written) */
  STRATA_SOLVER_OPERATOR = 5 /* an operator applied step after step,
                                u <- op(u) (strata_apply): field "u" */
} strata_solver_kind;

/* The options of STRATA_SOLVER_OPERATOR, which has no API of its own:
 * each step fills u's ghosts from bc (over several processes, with the
 * neighbours' planes) and replaces u by op(u). */
typedef struct strata_operator_options {
  int dims;                   /* 1, 2 or 3; default 2 */
  size_t n[3];                /* interior points; default 256 x 256 x 1 */
  strata_precision precision; /* default STRATA_F32 */
  strata_stencil op;          /* default: the order-2 Laplacian, h = 1 */
  strata_boundary bc;         /* default Dirichlet 0 on every face */
  const char *variant;        /* kernel variant (strata_apply_options);
                                 NULL (default) = "auto" */
  strata_point_fn init;       /* u at create, ghosts included; NULL
                                 (default) = 0.  create then applies the
                                 operator to it once (the result is
                                 discarded), so that a variant the backend
                                 lacks is refused there */
  void *init_user;
  strata_dist *dist;          /* NULL (default): one process; else as for
                                 the heat solver (dims 2 or 3) */
  int check_every;            /* every check_every steps, stop with
                                 STRATA_ENONFINITE when u holds
                                 a NaN or an infinity (a reduction: one
                                 read of one field); 0 = never; default
                                 STRATA_CHECK_EVERY */
} strata_operator_options;

/* Fills *o with the defaults listed above. */
void strata_operator_options_init(strata_operator_options *o);

/* "heat", "wave", "fdtd", "poisson", "operator"; "?" for anything
 * else. */
const char *strata_solver_kind_name(strata_solver_kind k);
/* Parses the names above.  Returns STRATA_EINVAL otherwise. */
strata_status strata_solver_kind_parse(const char *name,
                                       strata_solver_kind *k);

typedef struct strata_solver_options {
  strata_solver_kind kind;
  /* the options of kind, read at create and not kept; exactly the one of
   * kind may be set, NULL = that solver's defaults */
  const strata_heat_options *heat;
  const strata_wave_options *wave;
  const strata_fdtd_options *fdtd;
  const strata_mg_options *poisson;
  const strata_operator_options *op;
  uint64_t tag; /* recorded in saved states; loading a state saved with
                   another tag is refused.  A caller sets it to a hash of
                   what the state must agree on (the strata program: the
                   case's physics); default 0 */
} strata_solver_options;

/* Fills *o for kind: no per-solver options (their defaults), tag 0. */
void strata_solver_options_init(strata_solver_options *o,
                                strata_solver_kind kind);
/* Creates a solver of o->kind on ctx.  Poisson: phi = 0 (its ghosts
 * filled from the boundary conditions) and psi = 0.  Errors: STRATA_EINVAL
 * (NULL, an unknown kind, another kind's options set: the message names
 * them), and every error of the kind's own create, with its message.  The
 * operator: those of strata_field_create and of strata_apply (STRATA_
 * ENOTSUP for a variant the backend lacks, STRATA_EGHOST, ...). */
strata_status strata_solver_create(strata_context *ctx,
                                   const strata_solver_options *o,
                                   strata_solver **out);
/* What strata_solver_create(ctx, o, ...) would allocate, without
 * allocating anything: o is checked exactly as create checks it (the same
 * errors, messages and argument names), then the footprint is added up
 * from the same descriptions create uses.  *device_bytes: the context's
 * backend memory (the fields with their ghost layers, absorbing-layer
 * memory, multigrid levels and transfer tables, profiles, receiver
 * tables; host memory on the CPU backend).  *host_bytes: host memory
 * besides, at its peak: what the solver holds, and its largest transient
 * buffer of create and the first step (a field staged through the host
 * to set an initial state where the backend's memory is not host memory;
 * the wave and explicit FDTD solvers set their ghost layers once through
 * the host, one field at a time in fp64 beside its own precision).
 * Receiver traces grow with the steps and are not counted (8 bytes per
 * receiver and sample, on the backend and again on the host).  Either
 * pointer may be NULL.  Returns STRATA_ENOMEM, with both sizes set, when
 * the footprint does not fit what the machine has now (host memory
 * available, /proc/meminfo; the device's free memory; on the CPU backend
 * the sum against host memory): the message names the bytes needed and
 * available.  strata_solver_create and each kind's own create make the
 * same check before allocating and refuse the same way.  Over several
 * processes: this rank's part, not collective. */
strata_status strata_solver_estimate(strata_context *ctx,
                                     const strata_solver_options *o,
                                     size_t *host_bytes,
                                     size_t *device_bytes);
/* Releases the solver and its fields; sets *s = NULL; NULL is harmless. */
void strata_solver_destroy(strata_solver **s);

/* Advances n >= 0 steps (the kind's strata_X_step; the operator: n
 * applications).  Poisson: n
 * multigrid cycles, each one strata_mg_solve of the solver's options with
 * max_cycles = 1 and no tolerance or stall test, so that the residual is
 * measured before and after every cycle (info.residual); with opt.fmg the
 * solver's first cycle is the full-multigrid pass (one FMG solve), the
 * later ones cycles of opt.cycle; the caller decides when to stop
 * (strata_solver_solve stops by itself).
 * Returns when the work is done on the device, so that info's throughput
 * is the call's.  Errors: those of the kind's step (STRATA_ENONFINITE
 * when a check finds the state blown up: see "Blow-ups" above; Poisson:
 * a cycle whose residual is not finite); STRATA_EINVAL for n < 0. */
strata_status strata_solver_step(strata_solver *s, long n);
/* Poisson only: solves to the tolerance of the solver's options
 * (strata_mg_solve on phi and psi, full-multigrid pass included), its
 * cycles counted as steps; res may be NULL.  Errors: STRATA_EINVAL (not
 * a Poisson solver), and those of strata_mg_solve. */
strata_status strata_solver_solve(strata_solver *s, strata_mg_result *res);

/* The number of fields (1 to 3; 0 for s == NULL). */
int strata_solver_field_count(const strata_solver *s);
/* The name of field index (0 .. count-1; field 0 is the solution the
 * solver is about: u, p, Ez, phi); NULL for a bad index. */
const char *strata_solver_field_name(const strata_solver *s, int index);
/* The unit of field index's values: "Pa" for the wave solver's pressure
 * (with the source amplitude in Pa m^3 / s^2), "" where the solver has
 * none (heat and the operator: the initial state's unit; FDTD: grid
 * units; Poisson); NULL for a bad index. */
const char *strata_solver_field_unit(const strata_solver *s, int index);
/* The index of the field called name, or -1. */
int strata_solver_field_index(const strata_solver *s, const char *name);
/* Field index (borrowed: valid until the next step, load or destroy; its
 * interior may be written before stepping, as the kind's API says); NULL
 * for a bad index.  Over several processes, this rank's part. */
strata_field *strata_solver_field(strata_solver *s, int index);
/* Copies field index's interior to a dense host array of the solver's
 * precision, x fastest: the whole grid.  Over several processes a gather
 * to rank 0 (host may be NULL on the other ranks), collective.  Errors:
 * STRATA_EINVAL (bad index), those of strata_field_read. */
strata_status strata_solver_read(strata_solver *s, int index, void *host);
/* Writes field index's interior as an HDF5 file at path, as the snapshot
 * writer's .h5 (dataset name, NULL = the field's name, of the solver's
 * grid's shape slowest axis first, attributes spacing (the points'
 * spacing) and origin), byte for byte the writer's on one process.  Over
 * several processes collective: with parallel HDF5 (strata_h5_parallel)
 * every rank writes its own planes with MPI-IO's collective writes, no
 * gather; else gathered to rank 0, which writes it.  The file is
 * complete under its final name, or absent.  Errors: STRATA_EINVAL,
 * STRATA_ENOTSUP (no HDF5), STRATA_ENOMEM, STRATA_EIO. */
strata_status strata_solver_save_h5(strata_solver *s, int index,
                                    const char *path, const char *name,
                                    double spacing);
/* strata_field_read_box of field index, read without telling the solver
 * its state may have been written (as strata_solver_read): a program's
 * look at the running state changes nothing.  Errors: those of
 * strata_field_read_box; STRATA_ENOTSUP over several processes. */
strata_status strata_solver_read_box(strata_solver *s, int index,
                                    const size_t lo[3], const size_t n[3],
                                    void *host);
/* Checks every field of the solver for a NaN or an infinity now (over
 * several processes collective): STRATA_OK, or STRATA_ENONFINITE with a
 * message naming the field, the step count and the first bad point's
 * grid index and value.  Costs one read of each field.  Errors also:
 * STRATA_EINVAL, STRATA_EDEVICE. */
strata_status strata_solver_check(strata_solver *s);
/* The receiver traces recorded so far, in *t: the wave solver's
 * receivers (positions in metres, samples in fp64, dt the sampling
 * interval); t->ntraces = 0 for a solver without receivers.  t->data and
 * t->receivers are owned by the solver, valid until the next call of
 * this function, step, load or destroy.  Over several processes
 * collective, the traces gathered on rank 0 (0 traces elsewhere).
 * Errors: STRATA_EINVAL, STRATA_ENOMEM. */
strata_status strata_solver_traces(strata_solver *s, strata_traces *t);
/* Writes the receiver traces recorded so far as an HDF5 file at path, as
 * strata_traces_save_h5 writes strata_solver_traces' result (dataset
 * "traces" (receivers, samples) in fp64, "receivers" (receivers, 3) in
 * metres, the root's attributes "dt", "source" and "shot"): the same
 * content on any number of processes.  Over several processes
 * collective: with parallel HDF5 (strata_h5_parallel) every rank writes
 * the rows of the receivers it samples with MPI-IO's collective writes, no
 * gather; else the traces are gathered to rank 0, which writes them.  The
 * file is complete under its final name, or absent.  Errors: STRATA_EINVAL
 * (a solver without receivers, path NULL), STRATA_ENOTSUP (no HDF5),
 * STRATA_ENOMEM, STRATA_EIO. */
strata_status strata_solver_save_traces_h5(strata_solver *s,
                                           const char *path);

/* The kind's own handle, for what only it offers (e.g. a velocity model:
 * strata_wave_set_velocity); NULL when s is of another kind.  Borrowed:
 * the solver owns it. */
strata_heat *strata_solver_heat(strata_solver *s);
strata_wave *strata_solver_wave(strata_solver *s);
strata_fdtd *strata_solver_fdtd(strata_solver *s);
strata_mg *strata_solver_mg(strata_solver *s);

typedef struct strata_solver_info {
  strata_solver_kind kind;
  int dims;                   /* 1 (the operator only), 2 or 3 */
  size_t n[3];                /* the (global) grid; unused axes 1 */
  strata_precision precision;
  double h;                   /* spacing: wave and Poisson as set, heat and
                                 FDTD 1 (grid units) */
  double dt;                  /* time step: wave in seconds, FDTD in grid
                                 units (the Courant number), heat 1 (D
                                 holds kappa dt / h^2), Poisson 0 */
  double time;                /* simulated time, steps * dt */
  long steps;                 /* steps (Poisson: cycles) done, counting
                                 those of a loaded state */
  size_t device_bytes;        /* bytes of the solver's fields on the
                                 context's backend (host memory on the
                                 CPU backend); this rank's */
  size_t host_bytes;          /* host memory the interface holds besides
                                 (traces, receiver positions, the residual
                                 history) */
  double bytes_per_point_step;/* least traffic of a step per point */
  long last_steps;            /* the last strata_solver_step call: steps */
  double last_seconds;        /* its wall time */
  double points_per_s;        /* its throughput, points x steps / s (this
                                 rank's points over several processes) */
  double residual0;           /* Poisson: RMS residual of phi before the
                                 first cycle after create or load */
  double residual;            /* Poisson: after the last cycle */
  const double *history;      /* Poisson: the residual before the first
                                 cycle and after each (steps + 1 values;
                                 NULL before the first cycle); owned by the
                                 solver, valid until its next step, solve,
                                 load or destroy, and saved with its state */
  double source_mean;         /* Poisson: the mean subtracted from psi
                                 (no Dirichlet face, project = 1) */
} strata_solver_info;

/* Describes the solver's state.  Errors: STRATA_EINVAL. */
strata_status strata_solver_get_info(const strata_solver *s,
                                     strata_solver_info *info);

/* Saved states are checkpoint images (format: docs/solvers.md,
 * "Checkpoints"): a header naming the kind, the options' tag and the step
 * count, the state, and a CRC-32 of it all.  The state is what continues
 * the run bit for bit: heat's and the operator's u (interior); Poisson
 * phi and psi and the residual history; the wave and FDTD solvers' own state
 * (strata_X_save_state).
 * Loading it into a solver created with the same options continues as if
 * the run had not been interrupted.  Over several processes each rank's
 * image is its own part (a record of the rank and the number of ranks
 * follows the header), and saving and loading are collective.
 * strata_solver_state_size gives the bytes of this solver's image;
 * _save_state writes it into buf (size bytes, at least that);
 * _load_state reads one.  Errors: STRATA_EINVAL (NULL, buffer too small,
 * an image of another kind, tag, shape or precision, or another rank or
 * rank count: the message names both), STRATA_EFORMAT (not a checkpoint,
 * damaged: the CRC-32 does not match, or a header value out of range,
 * such as a step outside 0..2^53; nothing is changed),
 * STRATA_ENOMEM, STRATA_EDEVICE. */
strata_status strata_solver_state_size(const strata_solver *s, size_t *bytes);
strata_status strata_solver_save_state(const strata_solver *s, void *buf,
                                       size_t size);
strata_status strata_solver_load_state(strata_solver *s, const void *buf,
                                       size_t size);
/* The same image as a file at path (written as PATH.tmp.<pid> and renamed
 * when complete).  Over several processes rank 0 writes path and rank r
 * path.rank<r>; every part is renamed into place only once every rank
 * wrote its own, so a failure leaves the previous parts together; load
 * reads each rank's part and refuses parts of different steps.  Load
 * checks the file's header and its size against the solver before reading
 * the rest (a file that is not a checkpoint of this solver is refused
 * without being read whole), then reads it in pieces, asking the
 * context's interrupt hook before each.  Errors: those above; STRATA_EIO
 * (cannot create, write or read the file: the message names it and the
 * system's reason), STRATA_EINTERRUPTED (the hook asked to stop; nothing
 * is changed). */
strata_status strata_solver_save(const strata_solver *s, const char *path);
strata_status strata_solver_load(strata_solver *s, const char *path);
/* The file rank uses for path: path itself for rank 0 (or one process),
 * path.rank<r> for rank r > 0, written to out (n bytes).  Returns out, or
 * NULL (out empty) when the name does not fit in n bytes: a name cut
 * short would be another file's. */
char *strata_checkpoint_part_path(const char *path, int rank, char *out,
                                  size_t n);

/* ------------------------------------------------------------------------ */
/* Several processes and GPUs: slab decomposition over MPI                   */
/* ------------------------------------------------------------------------ */
/* One rank (MPI process) per GPU, or per CPU socket on the CPU engine.  A
 * global grid of dims 2 or 3 is split into slabs along its last axis (y in
 * 2D, z in 3D); rank r owns the planes [lo, lo + count) of
 * strata_dist_split, the first n % P ranks one plane more.  Each rank's
 * field holds its slab plus ghost layers; the ghost planes between ranks
 * are exchanged on the device (NCCL send/receive between GPUs, MPI between
 * CPU processes), never staged through host memory.  Every function below
 * taking a strata_dist, or a field made by strata_dist_field_create, is
 * collective: all ranks call it in the same order.  Results on any number
 * of ranks equal the one-rank results bit for bit (the CUDA engine runs the
 * same kernel variant on every rank and every part of the slab: see
 * docs/distributed.md).  The library needs MPI (and NCCL for GPUs) at build
 * time for this; without them strata_dist_create returns STRATA_ENOTSUP. */

typedef enum strata_transport {
  STRATA_TRANSPORT_AUTO = 0, /* NCCL for a CUDA context, MPI for the CPU */
  STRATA_TRANSPORT_MPI = 1,  /* MPI on host memory (CPU engine only) */
  STRATA_TRANSPORT_NCCL = 2  /* NCCL between GPUs (CUDA engine) */
} strata_transport;

typedef struct strata_dist_options {
  const void *comm;   /* points to the MPI_Comm of the ranks to use; NULL
                         (default) = MPI_COMM_WORLD.  MPI is initialised
                         here when the caller has not done it; then
                         strata_dist_finalize finalises it. */
  strata_transport transport; /* default AUTO */
  int overlap;        /* 1 (default): compute the planes next to other
                         ranks first and exchange while the interior is
                         computed; 0: exchange, then compute */
  int exchange;       /* 1 (default).  0 skips every exchange between ranks
                         (wrong results): only for measuring how much time
                         the exchange costs */
  int device_by_rank; /* CUDA: 1 (default) = this rank uses GPU
                         (node-local rank mod GPU count), overriding the
                         context options' device */
  int ranks_y;        /* 3D grids of operators, heat and wave: the ranks
                         along y of a y-z split (py x P/py ranks; it must
                         divide the rank count).  0 (default): the split
                         the exchange model predicts fastest for the grid
                         (docs/distributed.md) on the CPU engine, slabs on
                         the CUDA engine (measured faster within a node);
                         1: slabs along z.  2D grids (wave sections, FDTD):
                         slabs.  The wave solver's split runs on the CPU
                         engine (a CUDA group refuses it, STRATA_ENOTSUP) */
} strata_dist_options;

/* Fills *o with the defaults listed above. */
void strata_dist_options_init(strata_dist_options *o);
/* 1 if the library was built with MPI (and fills why with what it has),
 * else 0 with the reason in why. */
int strata_dist_available(char *why, size_t why_size);
/* Joins the ranks of o->comm and creates this rank's context from copt
 * (NULL = defaults), owned by the group.  Collective.  Errors:
 * STRATA_ENOTSUP (built without MPI; NCCL asked for or needed and not
 * built in), STRATA_EINVAL, STRATA_ENOBACKEND, STRATA_EDEVICE.  copt's
 * errbuf receives the message when no context could be made. */
strata_status strata_dist_create(const strata_context_options *copt,
                                 const strata_dist_options *o,
                                 strata_dist **out);
/* Releases the group and its context (fields made on it must be destroyed
 * first); sets *d = NULL; NULL is harmless.  Collective. */
void strata_dist_destroy(strata_dist **d);
/* Finalises MPI if strata_dist_create initialised it (and nothing has
 * finalised it since); otherwise does nothing, so MPI that the caller
 * initialised stays the caller's to finalise.  Call it once, after every
 * strata_dist is destroyed and before the program exits: the library
 * registers nothing to run at exit.  Collective when it finalises.
 * Harmless when called again and in a build without MPI (STRATA_OK).
 * Errors: STRATA_EINVAL (MPI_Finalize failed). */
strata_status strata_dist_finalize(void);
/* This rank's context (borrowed). */
strata_context *strata_dist_context(const strata_dist *d);
int strata_dist_rank(const strata_dist *d);
int strata_dist_size(const strata_dist *d);
/* The transport in use ("mpi", "nccl" or "none" for one rank). */
const char *strata_dist_transport(const strata_dist *d);
/* The planes of an axis of n points that rank owns on slabs: [*lo, *lo +
 * *count).  (On a y-z split a rank owns a box: strata_field_get_window.)
 * Errors: STRATA_EINVAL. */
strata_status strata_dist_split(const strata_dist *d, size_t n, int rank,
                                size_t *lo, size_t *count);

/* Where a field's interior lies in the global grid. */
typedef struct strata_field_window {
  int distributed;     /* 0: an ordinary field (the rest describes it) */
  int axis;            /* the split axis: dims - 1 */
  size_t global_n[3];  /* the global grid */
  size_t offset;       /* global index along axis of local interior 0 */
  size_t owned_lo;     /* global index of the first plane this rank owns */
  size_t owned_count;  /* planes owned; the local interior may hold extra
                          planes of the neighbours (solvers' fused steps) */
  int ranks_y;         /* 3D y-z split: ranks along y (1: slabs along z) */
  size_t offset_y;     /* the same three along y (slabs: 0, 0, global_n[1]) */
  size_t owned_lo_y;
  size_t owned_count_y;
} strata_field_window;
strata_status strata_field_get_window(const strata_field *f,
                                      strata_field_window *w);

/* Creates this rank's part of a distributed field: global->n is the whole
 * grid (dims 2 or 3); the local field holds the owned planes with
 * global->ghost ghost layers.  Contents start at zero.  On a distributed
 * field, strata_field_fill_fn gets global indices, strata_field_fill_random
 * gives the values of the same global field on any number of ranks,
 * strata_field_read/write cover the owned planes (x fastest), and
 * strata_field_norm/diff are collective norms of the whole grid.  Errors:
 * those of strata_field_create; STRATA_EINVAL when a rank would own fewer
 * planes than the ghost width (the message names the limit). */
strata_status strata_dist_field_create(strata_dist *d,
                                       const strata_field_desc *global,
                                       strata_field **out);
/* Fills f's ghosts: the faces of the global grid by bc, the planes between
 * ranks (and periodic wrap-around) from the neighbours.
 * strata_field_fill_ghosts does the same on a distributed field. */
strata_status strata_dist_fill_ghosts(strata_field *f,
                                      const strata_boundary *bc);
/* strata_dist_fill_ghosts(in, bc) then strata_apply(op, in, out, opt), with
 * the exchange overlapping the interior when the group's overlap is on.
 * opt->variant "auto" is resolved once per operator and local shape (rank
 * 0 tunes, all ranks use its choice).  Also works on ordinary fields. */
strata_status strata_dist_apply(const strata_stencil *op, strata_field *in,
                                const strata_boundary *bc, strata_field *out,
                                const strata_apply_options *opt);
/* Gathers the owned planes of every rank into host on rank root (a dense
 * global array of f's precision, x fastest; may be NULL elsewhere). */
strata_status strata_dist_gather(const strata_field *f, int root, void *host);
/* The reverse: rank root's dense global array into every rank's planes. */
strata_status strata_dist_scatter(strata_field *f, int root,
                                  const void *host);

typedef struct strata_dist_stats {
  long exchanges;       /* halo exchanges done */
  double bytes_sent;    /* by this rank */
  double wait_seconds;  /* host time blocked on exchanges (CPU engine; on
                           GPUs the wait is on the device and not seen) */
} strata_dist_stats;
strata_status strata_dist_get_stats(const strata_dist *d,
                                    strata_dist_stats *s);
/* Sum (op 0), max (1) or min (2) of n doubles over the ranks, in place on
 * every rank. */
strata_status strata_dist_allreduce(const strata_dist *d, double *v, int n,
                                    int op);
/* A barrier over the ranks, after this rank's device work is done. */
strata_status strata_dist_barrier(const strata_dist *d);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_H */
