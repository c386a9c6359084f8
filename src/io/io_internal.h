/* Shared by the output writers: files written under a temporary name and
 * renamed when complete, and byte-order helpers.  Not installed. */
#ifndef STRATA_IO_INTERNAL_H
#define STRATA_IO_INTERNAL_H

#include "../core/internal.h"

#include <stdio.h>
#include <string.h>

/* An output file in progress: data goes to tmp, which commit renames to
 * path.  Any failed write is remembered; commit then removes tmp and
 * returns the first failure. */
typedef struct strata__ofile {
  FILE *fp;
  strata_context *ctx;
  char *path;
  char *tmp;
  strata_status status;
  char *mem;       /* memory mode (strata__ofile_open_memory): the bytes */
  size_t mem_size;
} strata__ofile;

/* Opens PATH.tmp.<pid> for writing.  Errors: STRATA_EINVAL (path NULL or
 * empty), STRATA_EIO (cannot create it: the message names it and errno). */
/* The temporary name PATH.tmp.PID a file is written under until it is
 * complete (n: at least strlen(path) + 32), for writers that cannot go
 * through strata__ofile (several processes writing one file). */
void strata__ofile_tmp_name(char *buf, size_t n, const char *path);
strata_status strata__ofile_open(strata__ofile *o, strata_context *ctx,
                                 const char *path);
/* Appends n bytes; failures are kept in o->status and returned. */
strata_status strata__ofile_write(strata__ofile *o, const void *p, size_t n);
/* Appends formatted text (a C format string and its arguments) to the file;
 * the library writes files, never to the console. */
strata_status strata__ofile_format(strata__ofile *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Flushes, syncs, closes and renames to the final name; on any failure
 * (earlier or now) removes the temporary file and returns the status. */
strata_status strata__ofile_commit(strata__ofile *o);
/* Closes and removes the temporary file (after a failure elsewhere). */
void strata__ofile_abort(strata__ofile *o);
/* The same writer into memory (open_memstream): the writers that make a
 * file make the same bytes for a caller that serves them (the PNG of a
 * frame).  commit_memory hands over the bytes (*data, malloc'd, *size), or
 * frees them and returns the first failure.  Errors: STRATA_ENOMEM. */
strata_status strata__ofile_open_memory(strata__ofile *o, strata_context *ctx);
strata_status strata__ofile_commit_memory(strata__ofile *o, void **data,
                                          size_t *size);

/* Byte order of this machine. */
static inline int strata__little_endian(void) {
  const unsigned int one = 1;
  return *(const unsigned char *)&one == 1;
}
static inline void strata__put_be16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)(v >> 8);
  p[1] = (unsigned char)v;
}
static inline void strata__put_be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}
static inline void strata__put_le16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}

/* Writes n elements of size es (4 or 8) in little-endian order, swapping
 * through a buffer on a big-endian host. */
strata_status strata__ofile_write_le(strata__ofile *o, const void *p,
                                     size_t n, size_t es);

/* strata_npy_read that also takes Fortran-ordered arrays when fortran is
 * not NULL: *fortran is then 1 for one (shape[0] the fastest axis). */
strata_status strata__npy_read(strata_context *ctx, const char *path,
                               strata_precision *p, int *ndim,
                               size_t shape[4], void **data, int *fortran);

/* The interior of f as a newly allocated dense host array (x fastest), in
 * the field's precision.  Errors: STRATA_ENOMEM and those of
 * strata_field_read. */
strata_status strata__field_to_host(const strata_field *f, void **out);

/* The datasets of a time series index (.pvd, .xmf, who names it): each
 * file's name not empty, without control characters nor any of bad, the
 * times finite and increasing.  STRATA_OK or STRATA_EINVAL naming the
 * first that is not (vti.c). */
strata_status strata__series_check(strata_context *ctx, const char *who,
                                   int n, const char *const *files,
                                   const double *times, const char *bad);

/* Writes a dense host grid (x fastest, dims axes) as an HDF5 file with
 * one dataset `name` of shape (nz, ny, nx) (h5.c); STRATA_ENOTSUP without
 * HDF5. */
strata_status strata__h5_write_grid(strata_context *ctx, const char *path,
                                    int dims, const size_t n[3],
                                    strata_precision p, const void *data,
                                    const char *name, double spacing);

/* Over the ranks of d, collectively: the grid of global shape n (dims
 * axes, split along the last) as strata__h5_write_grid writes it, each
 * rank writing its own planes [own_lo, own_lo + own_n) from data (dense,
 * x fastest) with MPI-IO's collective writes, no gather; the file is
 * complete under its final name (rank 0 renames it once every rank has
 * written).  STRATA_ENOTSUP without parallel HDF5 (strata_h5_parallel). */
strata_status strata__h5_write_grid_dist(strata_context *ctx, strata_dist *d,
                                         const char *path, int dims,
                                         const size_t n[3], size_t own_lo,
                                         size_t own_n, strata_precision p,
                                         const void *data, const char *name,
                                         double spacing);

/* Over the ranks of d, collectively: traces as strata_traces_save_h5
 * writes them, t giving the whole set (ntraces, nsamples, precision, dt,
 * source, shot and receivers, the same on every rank; t->data unused),
 * each rank writing the rows of its own nown traces ids[0 .. nown)
 * (increasing) from rows (nown x nsamples, of t's precision) with MPI-IO's
 * collective writes, no gather, rank 0 the receivers' positions; every
 * trace must be one rank's (STRATA_EINVAL otherwise).  The file is
 * complete under its final name.  STRATA_ENOTSUP without parallel HDF5. */
strata_status strata__h5_write_traces_dist(strata_context *ctx,
                                           strata_dist *d, const char *path,
                                           const strata_traces *t, int nown,
                                           const int *ids, const void *rows);

/* Writes dense host arrays (x fastest, n[0] x n[1] x n[2] points each, of
 * precisions prec) as the point data of one .vti file (vti.c). */
strata_status strata__vti_write_host(strata_context *ctx, const char *path,
                                     const size_t n[3], int nfields,
                                     const void *const *data,
                                     const strata_precision *prec,
                                     const char *const *names,
                                     const double spacing[3],
                                     const double origin[3]);

/* The PNG image of a dense host grid (dims, n[3] with unused axes 1, x
 * fastest) that o picks (png.c): the whole grid in 1D and 2D, the slice
 * o->axis / o->index in 3D.  strata__png_slice checks the slice and gives
 * its horizontal, vertical and normal axes and its index (STRATA_EINVAL
 * outside the grid, naming argpre "axis" or argpre "index");
 * strata__png_write_slice writes it at path, through scratch (room for
 * the slice, or NULL: allocated). */
strata_status strata__png_slice(strata_context *ctx, int dims,
                               const size_t n[3],
                               const strata_png_options *o,
                               const char *argpre, int ax[3], long *index);
/* strata_png_write_image, or with path NULL the same bytes in memory
 * (*png malloc'd, *size). */
strata_status strata__png_image(strata_context *ctx, const char *path,
                                void **png, size_t *size, strata_precision p,
                                size_t w, size_t h, const void *data,
                                const strata_png_options *opt);
strata_status strata__png_write_slice(strata_context *ctx, const char *path,
                                      strata_precision p, int dims,
                                      const size_t n[3], const void *host,
                                      const strata_png_options *o,
                                      void *scratch);

/* ---- checkpoint images (checkpoint.c) ------------------------------------
 * "STRATACK", version, the number of fields, the solver kind (16 bytes),
 * a tag, the step; for version 2 (one rank's part of a state over several
 * processes) a record of the rank and the number of ranks; then either
 * nfields field records (dims, precision, n[3]) and their dense interiors
 * (a distributed field: the planes this rank owns), or, with nfields 0,
 * an opaque state's length (8 bytes) and the state; last the CRC-32
 * (zlib's) of everything before it.  Native byte order. */
typedef struct strata__ck {
  const char *kind; /* at most 15 characters */
  uint64_t tag;
  long step;
  int part;         /* 1: a rank's part (version 2) */
  int rank, nranks;
} strata__ck;

/* Bytes of a field image of f[0..nf-1] (their dense shapes). */
size_t strata__ck_fields_bytes(strata_field *const *f, int nf, int part);
/* Writes the field image of ck and f into buf (size bytes, at least
 * strata__ck_fields_bytes), sealed.  f[0]'s context gets the message. */
strata_status strata__ck_fields_save(const strata__ck *ck,
                                     strata_field *const *f, int nf,
                                     void *buf, size_t size);
/* The largest step an image may hold: steps are exact as doubles up to
 * there (the time is steps * dt; the ranks compare their steps as
 * doubles). */
#define STRATA__CK_STEP_MAX ((int64_t)1 << 53)
/* What a solver accepts: want's kind, tag and part (want.step unused),
 * and either nf > 0 fields f (the field form, their dense shapes) or, with
 * nf 0, an opaque state of at most most(arg, step) bytes at the image's
 * step. */
typedef struct strata__ck_expect {
  strata__ck want;
  strata_field *const *f;
  int nf;
  size_t (*most)(const void *arg, long step);
  const void *arg;
} strata__ck_expect;
/* Checks an image named name (a path, or "the state") against e: the
 * magic, the CRC-32, then every header field (version, kind, tag, step in
 * 0..STRATA__CK_STEP_MAX, the part, the field records or the state's
 * length) and the length; the message names both sides of a difference.
 * Then writes the interiors into e->f; *step receives the image's step. */
strata_status strata__ck_fields_load(strata_context *ctx, const char *name,
                                     const void *buf, size_t size,
                                     const strata__ck_expect *e, long *step);
/* Bytes of an image holding an opaque state of n bytes. */
size_t strata__ck_blob_bytes(size_t n, int part);
/* Writes the header of such an image into buf; returns where the n bytes
 * of the state go.  strata__ck_seal(buf, size) then closes it. */
unsigned char *strata__ck_blob_begin(const strata__ck *ck, size_t n,
                                     void *buf);
void strata__ck_seal(void *buf, size_t size);
/* Checks an opaque-state image as strata__ck_fields_load does; *blob and
 * *n receive the state inside buf, *step its step. */
strata_status strata__ck_blob(strata_context *ctx, const char *name,
                              const void *buf, size_t size,
                              const strata__ck_expect *e, const void **blob,
                              size_t *n, long *step);
/* Reads the checkpoint file path into *buf (malloc'd; the caller frees it)
 * without trusting it: its header is checked against e first (as
 * strata__ck_fields_load does, the CRC-32 aside), the bytes it and the
 * solver say the image has are compared with the file's size, and only
 * then is the rest read, in pieces, asking the context's interrupt hook
 * before each.  Errors: STRATA_EIO, STRATA_EFORMAT, STRATA_EINVAL,
 * STRATA_ENOMEM, STRATA_EINTERRUPTED. */
strata_status strata__ck_read_file(strata_context *ctx, const char *path,
                                   const strata__ck_expect *e, void **buf,
                                   size_t *size);

/* The colour of t in [0, 1] (clamped) in map c (src/io/colormap.c), and
 * whether c is diverging (its middle colour at 0): 1 or 0, -1 when c is
 * no colour map. */
void strata__cmap_rgb(strata_colormap c, double t, unsigned char *out);
int strata__cmap_diverging(strata_colormap c);

/* Sets pixel (x, y) of a W x H RGB image to c; outside, nothing. */
static inline void strata__put_px(unsigned char *img, size_t W, size_t H,
                                  long x, long y, const unsigned char *c) {
  if (x < 0 || y < 0 || (size_t)x >= W || (size_t)y >= H) return;
  memcpy(img + 3 * ((size_t)y * W + (size_t)x), c, 3);
}

#endif
