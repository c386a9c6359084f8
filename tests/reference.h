/* The oracle's own check: a deliberately plain scalar stencil, computed in
 * long double on dense ghosted host arrays, with no shared code with the
 * engines beyond the public strata_stencil description.  Also helpers the
 * tests and benchmarks share. */
#ifndef STRATA_TEST_REFERENCE_H
#define STRATA_TEST_REFERENCE_H

#include "strata.h"

/* One stencil point: offset and weight. */
typedef struct {
  int d[3];
  double w;
} ref_point;

/* Expands op into its points; returns the count (at most 27). */
int ref_points(const strata_stencil *op, ref_point *pts);

/* out[interior] = op(in), where in is a dense ghosted array (ghost width g on
 * used axes, as strata_field_read_ghosted writes it) and out is a dense
 * interior array.  scale[p] (if not NULL) receives sum |w_q * in(p+q)|, the
 * magnitude that bounds rounding error at p. */
void ref_apply(const strata_stencil *op, const strata_field_desc *d, int g,
               const double *in, double *out, double *scale);

/* Reads f (interior or ghosted) into a newly allocated double array. */
double *ref_read(const strata_field *f, int ghosted);

/* Number of points in the interior, and in the ghosted box. */
size_t ref_count(const strata_field_desc *d, int ghosted);

/* Worst ratio |got - want| / (tol * scale + tiny) over all points, where
 * tol = (npts + 2) * eps of the precision: the classical bound for a dot
 * product of npts terms in any summation order (with or without fused
 * multiply-add), plus one rounding of the coefficients and one of the
 * result.  A ratio <= 1 means every point is within the bound.  *worst
 * receives the index of the worst point. */
double ref_error_ratio(const double *got, const double *want,
                       const double *scale, size_t n, int npts,
                       strata_precision p, size_t *worst);

/* A field created, checked and filled with random values in [-1, 1). */
strata_field *ref_random_field(strata_context *ctx, int dims, size_t nx,
                               size_t ny, size_t nz, int ghost,
                               strata_precision p, uint64_t seed);

/* Unit roundoff of a precision. */
double ref_eps(strata_precision p);

/* The engine the tests run on: the CPU, or STRATA_TEST_BACKEND's
 * ("cuda" runs the same tests on GPUs). */
strata_backend ref_test_backend(void);

/* The multi-process tests' start: *d over the ranks mpiexec started (one
 * without it) on ref_test_backend(), fixed variant tables, and the other
 * ranks' stdout sent to /dev/null.  0 with *skip = 0 when made; 0 with
 * *skip = 1 where there is no MPI or no such backend (why says so); 1
 * after printing any other failure (MPI finalized). */
int ref_dist_start(strata_dist **d, int *skip, char *why, size_t why_size);

/* A value in [-1, 1) hashed from the global point (i, j, k), smooth-free:
 * the same field on any number of ranks (strata_field_fill_fn's shape). */
double ref_hash_point(long i, long j, long k, void *unused);
/* strata_field_read_box on ctx's backend: every slice of a 33 x 17 x 9
 * field (ghost 2, precision p) along each axis, and boxes of every size at
 * the corners and inside, equal the same points of the whole interior's
 * read; boxes outside are refused.  0, or -1 after printing the first
 * difference. */
int ref_check_boxes(strata_context *ctx, strata_precision p);

/* A named operator of the test sets. */
typedef struct {
  char name[64];
  strata_stencil op;
} ref_named_op;

/* Every operator family of the given dimension, with presets, random
 * coefficients and anisotropic stars (at most 40); returns the count. */
int ref_operator_set(int dims, ref_named_op *ops);

/* Dirichlet (two values), Neumann, periodic, a per-face mix and none;
 * returns the count (5); names[i] names set i. */
int ref_boundary_set(int dims, strata_boundary *bc, const char **names);

/* The id of a process that has ended (forked, exited and reaped): a PID
 * that no live process has, for the tests of stale temporary files. */
long ref_dead_pid(void);

/* The CRC-32 a checkpoint image ends with (zlib's polynomial), computed
 * bit by bit here: the tests reseal the images they alter. */
uint32_t ref_crc32(const void *p, size_t n);

/* The whole file at path (malloc'd, with a NUL after its *n bytes), or
 * NULL. */
unsigned char *ref_slurp(const char *path, size_t *n);

/* h5dump's text of the HDF5 file at path (every value to 17 digits) less
 * its first line, which names the file: malloc'd, or NULL when h5dump
 * failed.  Two files of the same content give the same text. */
char *ref_h5_text(const char *path);

/* Decodes a PNG as strata writes it (8-bit RGB) into RGB, rows top to
 * bottom (malloc'd), *w x *h pixels; checks the signature, every chunk's
 * CRC, IHDR, the zlib stream (inflated whole, Adler-32 included) and each
 * row's filter type, and undoes the five PNG filters.  Returns NULL
 * (after printing) on any violation.  ref_png_title receives its Title
 * text, or "". */
unsigned char *ref_png_decode(const char *path, size_t *w, size_t *h);
extern char ref_png_title[512];

#endif

/* The value the ghost point (i,j,k) of a dense ghosted array must hold
 * after strata_field_fill_ghosts(bc), computed plainly, axis by axis from
 * z down to x (equivalent to filling x, then y, then z). */
double ref_ghost_value(const strata_field_desc *d, const double *ghosted,
                       const strata_boundary *bc, long i, long j, long k);

/* The whole check of one operator on one backend: a random input (ghosts
 * random too) of shape n with ghost width ghost, ghosts filled with bc and
 * compared bit for bit with ref_ghost_value, an output poisoned with NaN,
 * apply with variant (NULL = default), the interior compared with
 * ref_apply within the bound of ref_error_ratio, the output's ghosts
 * checked untouched.  If result != NULL it receives the output interior
 * (malloc'd; the caller frees).  Returns 0 when everything holds; prints
 * what failed. */
int ref_check_apply(strata_context *ctx, const strata_stencil *op,
                    const size_t n[3], int ghost, strata_precision p,
                    const strata_boundary *bc, const char *variant,
                    uint64_t seed, double *ratio, double **result);
