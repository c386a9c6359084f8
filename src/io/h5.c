/* HDF5 files: a grid (a snapshot), receiver traces, and the XDMF index of a
 * series of snapshot files that ParaView and VisIt open as one time series.
 * Each HDF5 file is built in memory (the core driver, no backing store)
 * and its image written through the library's one file writer (ofile.c),
 * so an .h5 file under its final name is always whole.  The HDF5 library
 * may be built without thread safety, and the snapshot writer's thread
 * writes while the caller may write traces: one lock around every call. */
#define _POSIX_C_SOURCE 200809L
#include "io_internal.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef STRATA_HAVE_HDF5
#include <hdf5.h>
#endif
#ifdef STRATA_HAVE_HDF5_MPI
#include <stdio.h>

#include "../dist/dist_internal.h"
#endif

int strata_h5_available(void) {
#ifdef STRATA_HAVE_HDF5
  return 1;
#else
  return 0;
#endif
}

int strata_h5_parallel(void) {
#ifdef STRATA_HAVE_HDF5_MPI
  return 1;
#else
  return 0;
#endif
}

#ifdef STRATA_HAVE_HDF5
static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;
static H5E_auto2_t h5_print; /* the program's own HDF5 error printer */
static void *h5_print_data;

/* Takes the lock and silences HDF5's printing of its error stack (the
 * library reports failures through its status and message, and never
 * prints); h5_leave restores the program's printer and unlocks. */
static void h5_enter(void) {
  pthread_mutex_lock(&h5_lock);
  H5Eget_auto2(H5E_DEFAULT, &h5_print, &h5_print_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void h5_leave(void) {
  H5Eset_auto2(H5E_DEFAULT, h5_print, h5_print_data);
  pthread_mutex_unlock(&h5_lock);
}

/* A file in memory, named uniquely (the core driver's names must differ
 * between files open at once). */
static hid_t mem_create(void) {
  static unsigned long count;
  char name[64];
  snprintf(name, sizeof name, "strata-memory-%lu.h5", ++count);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0) return -1;
  hid_t f = H5Pset_fapl_core(fapl, 1 << 20, 0) < 0
                ? -1
                : H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  return f;
}

/* Writes the in-memory file's image to path and closes it. */
static strata_status mem_commit(strata_context *ctx, hid_t f,
                                const char *path) {
  ssize_t n = H5Fflush(f, H5F_SCOPE_LOCAL) < 0
                  ? -1
                  : H5Fget_file_image(f, NULL, 0);
  void *img = n > 0 ? malloc((size_t)n) : NULL;
  if (img && H5Fget_file_image(f, img, (size_t)n) != n) n = -1;
  H5Fclose(f);
  if (n <= 0 || !img) {
    free(img);
    return strata__fail_arg(ctx, n <= 0 ? STRATA_EIO : STRATA_ENOMEM, "path",
                            path, "cannot build the HDF5 file '%s'%s", path,
                            n <= 0 ? " (the HDF5 library failed)"
                                   : ": out of memory");
  }
  strata__ofile o;
  strata_status s = strata__ofile_open(&o, ctx, path);
  if (s == STRATA_OK) {
    strata__ofile_write(&o, img, (size_t)n);
    s = strata__ofile_commit(&o);
  }
  free(img);
  return s;
}

/* Ends a file built under the lock: written (ok) or dropped, unlocked. */
static strata_status finish(strata_context *ctx, hid_t f, int ok,
                            const char *path) {
  strata_status s;
  if (!ok) {
    if (f >= 0) H5Fclose(f);
    s = strata__fail_arg(ctx, STRATA_EIO, "path", path, "cannot build the "
                         "HDF5 file '%s' (the HDF5 library failed)", path);
  } else {
    s = mem_commit(ctx, f, path);
  }
  h5_leave();
  return s;
}

/* A dataset of rank dims (C order) of doubles or floats at loc. */
static int put_set(hid_t loc, const char *name, int rank, const hsize_t *dims,
                   strata_precision p, const void *data) {
  hid_t sp = H5Screate_simple(rank, dims, NULL);
  hid_t t = p == STRATA_F32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
  hid_t mt = p == STRATA_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  hid_t d = sp < 0 ? -1
                   : H5Dcreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT);
  int ok = d >= 0 && H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
  if (d >= 0) H5Dclose(d);
  if (sp >= 0) H5Sclose(sp);
  return ok;
}

/* An attribute of n doubles (n = 1: a scalar) on obj. */
static int put_attr(hid_t obj, const char *name, int n, const double *v) {
  hsize_t dim = (hsize_t)n;
  hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
  hid_t a = sp < 0 ? -1
                   : H5Acreate2(obj, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT,
                                H5P_DEFAULT);
  int ok = a >= 0 && H5Awrite(a, H5T_NATIVE_DOUBLE, v) >= 0;
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  return ok;
}
#endif

#ifndef STRATA_HAVE_HDF5
static strata_status no_hdf5(strata_context *ctx, const char *path) {
  return strata__fail_arg_s(ctx, STRATA_ENOTSUP, "path", path ? path : "",
                            "cannot write '%s': this strata was built "
                            "without HDF5 (install libhdf5-dev and build "
                            "again)", path ? path : "");
}
#endif

strata_status strata__h5_write_grid(strata_context *ctx, const char *path,
                                    int dims, const size_t n[3],
                                    strata_precision p, const void *data,
                                    const char *name, double spacing) {
#ifdef STRATA_HAVE_HDF5
  hsize_t d[3];
  for (int a = 0; a < dims; a++) d[a] = (hsize_t)n[dims - 1 - a];
  const double h[3] = {spacing, spacing, spacing}, o[3] = {0, 0, 0};
  h5_enter();
  hid_t f = mem_create();
  int ok = f >= 0 && put_set(f, name, dims, d, p, data);
  hid_t ds = ok ? H5Dopen2(f, name, H5P_DEFAULT) : -1;
  ok = ok && ds >= 0 && put_attr(ds, "spacing", dims, h) &&
       put_attr(ds, "origin", dims, o);
  if (ds >= 0) H5Dclose(ds);
  return finish(ctx, f, ok, path);
#else
  (void)dims, (void)n, (void)p, (void)data, (void)name, (void)spacing;
  return no_hdf5(ctx, path);
#endif
}

#ifdef STRATA_HAVE_HDF5_MPI
/* A dataset of a file opened over the ranks, written collectively: its
 * file and memory spaces, the dataset and the transfer list. */
typedef struct {
  hid_t fs, ms, d, x;
} coll_set;

/* Creates dataset name of shape gd (dims axes) and type p in f (every
 * rank with the same shape), a memory space of shape mn (mdims axes) and
 * a collective transfer: 1 when all were made. */
static int coll_open(coll_set *c, hid_t f, const char *name, int dims,
                     const hsize_t *gd, int mdims, const hsize_t *mn,
                     strata_precision p) {
  hid_t t = p == STRATA_F32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
  c->fs = H5Screate_simple(dims, gd, NULL);
  c->ms = H5Screate_simple(mdims, mn, NULL);
  c->d = c->fs < 0 ? -1
                   : H5Dcreate2(f, name, t, c->fs, H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT);
  c->x = H5Pcreate(H5P_DATASET_XFER);
  return c->fs >= 0 && c->ms >= 0 && c->d >= 0 && c->x >= 0 &&
         H5Pset_dxpl_mpio(c->x, H5FD_MPIO_COLLECTIVE) >= 0;
}

/* Selects nothing: a rank without a part still takes part in the write. */
static int coll_none(coll_set *c) {
  return H5Sselect_none(c->fs) >= 0 && H5Sselect_none(c->ms) >= 0;
}

/* The collective write of this rank's selection from data, when ok (the
 * set and the selections were made); 1 when written. */
static int coll_write(coll_set *c, int ok, strata_precision p,
                      const void *data) {
  static const double nothing; /* the buffer of an empty selection */
  hid_t mt = p == STRATA_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  return ok &&
         H5Dwrite(c->d, mt, c->ms, c->fs, c->x, data ? data : &nothing) >= 0;
}

static void coll_close(coll_set *c) {
  if (c->x >= 0) H5Pclose(c->x);
  if (c->d >= 0) H5Dclose(c->d);
  if (c->ms >= 0) H5Sclose(c->ms);
  if (c->fs >= 0) H5Sclose(c->fs);
}

/* The dataset of the grid in the file f opened over the ranks (every rank
 * calls it with the same shape): this rank's planes written collectively
 * into its hyperslab, the attributes as strata__h5_write_grid's.  1 when
 * this rank's calls succeeded. */
static int put_slab(hid_t f, const char *name, int dims, const hsize_t *gd,
                    hsize_t own_lo, hsize_t own_n, strata_precision p,
                    const void *data, double spacing) {
  hsize_t start[3] = {own_lo, 0, 0},
          cnt[3] = {own_n, gd[1], dims > 2 ? gd[2] : 0};
  coll_set c;
  int ok = coll_open(&c, f, name, dims, gd, dims, cnt, p);
  if (ok && own_n == 0) ok = coll_none(&c);
  else if (ok)
    ok = H5Sselect_hyperslab(c.fs, H5S_SELECT_SET, start, NULL, cnt, NULL) >=
         0;
  ok = coll_write(&c, ok, p, data);
  const double h[3] = {spacing, spacing, spacing}, o[3] = {0, 0, 0};
  ok = c.d >= 0 && put_attr(c.d, "spacing", dims, h) &&
       put_attr(c.d, "origin", dims, o) && ok;
  coll_close(&c);
  return ok;
}
#endif

#ifdef STRATA_HAVE_HDF5_MPI
/* A file created collectively over the ranks of d with the MPI-IO
 * driver, under rank 0's temporary name for path (into tmp, tn bytes):
 * its handle (-1 when this rank's creation failed), with the lock held;
 * dist_close ends it.  The file's creation and closing are collective:
 * every rank calls both whatever failed on its own side. */
static hid_t dist_open(strata_dist *d, const char *path, char *tmp,
                       size_t tn) {
  if (d->rank == 0) strata__ofile_tmp_name(tmp, tn, path);
  MPI_Bcast(tmp, (int)tn, MPI_CHAR, 0, d->comm);
  h5_enter();
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  int ok = fapl >= 0 && H5Pset_fapl_mpio(fapl, d->comm, MPI_INFO_NULL) >= 0;
  hid_t f = ok ? H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : -1;
  if (fapl >= 0) H5Pclose(fapl);
  return f;
}

/* Closes dist_open's file f (ok: this rank's writes succeeded) and, once
 * every rank has written, renames it to path on rank 0 (else removes it);
 * unlocks. */
static strata_status dist_close(strata_context *ctx, strata_dist *d,
                                const char *path, const char *tmp, hid_t f,
                                int ok) {
  if (f < 0 || H5Fclose(f) < 0) ok = 0;
  h5_leave();
  ok = all_ok(d->comm, ok);
  int renamed = 1;
  if (d->rank == 0) {
    renamed = ok && rename(tmp, path) == 0;
    if (!renamed) remove(tmp);
  }
  MPI_Bcast(&renamed, 1, MPI_INT, 0, d->comm);
  if (ok && renamed) return STRATA_OK;
  return strata__fail_arg(ctx, STRATA_EIO, "path", path, "cannot write the "
                          "HDF5 file '%s' over %d ranks (%s)", path, d->size,
                          ok ? "the rename failed"
                             : "the parallel HDF5 library failed on a rank");
}
#endif

/* The path's check for the ranks' writers; STRATA_ENOTSUP without
 * parallel HDF5. */
static strata_status dist_path(strata_context *ctx, const char *path) {
#ifdef STRATA_HAVE_HDF5_MPI
  if (strlen(path) > 4096)
    return strata__fail_arg_s(ctx, STRATA_EINVAL, "path", path, "the path "
                              "'%s' is longer than 4096 bytes", path);
  return STRATA_OK;
#else
  return strata__fail_arg_s(ctx, STRATA_ENOTSUP, "path", path ? path : "",
                            "cannot write '%s' over several processes: this "
                            "strata was built without parallel HDF5 (install "
                            "libhdf5-openmpi-dev and build again)",
                            path ? path : "");
#endif
}

strata_status strata__h5_write_grid_dist(strata_context *ctx, strata_dist *d,
                                         const char *path, int dims,
                                         const size_t n[3], size_t own_lo,
                                         size_t own_n, strata_precision p,
                                         const void *data, const char *name,
                                         double spacing) {
  strata_status s = dist_path(ctx, path);
  if (s != STRATA_OK) return s;
#ifdef STRATA_HAVE_HDF5_MPI
  /* every rank writes under rank 0's temporary name */
  char tmp[4096 + 32];
  hsize_t gd[3] = {1, 1, 1};
  for (int a = 0; a < dims; a++) gd[a] = (hsize_t)n[dims - 1 - a];
  hid_t f = dist_open(d, path, tmp, sizeof tmp);
  int ok = f >= 0 && put_slab(f, name, dims, gd, (hsize_t)own_lo,
                              (hsize_t)own_n, p, data, spacing);
  return dist_close(ctx, d, path, tmp, f, ok);
#else
  (void)d, (void)dims, (void)n, (void)own_lo, (void)own_n, (void)p,
      (void)data, (void)name, (void)spacing;
  return s;
#endif
}

#ifdef STRATA_HAVE_HDF5_MPI
/* Selects in c's file space of (ntraces, ns) the rows ids[0 .. nown)
 * (increasing), one hyperslab per run of consecutive rows, and in its
 * memory space their nown * ns samples; none on a rank that has none. */
static int select_rows(coll_set *c, int nown, const int *ids, hsize_t ns) {
  if (nown == 0) return coll_none(c);
  int ok = 1;
  for (int i = 0; ok && i < nown;) {
    int j = i + 1;
    while (j < nown && ids[j] == ids[j - 1] + 1) j++;
    hsize_t start[2] = {(hsize_t)ids[i], 0}, cnt[2] = {(hsize_t)(j - i), ns};
    ok = H5Sselect_hyperslab(c->fs, i ? H5S_SELECT_OR : H5S_SELECT_SET,
                             start, NULL, cnt, NULL) >= 0;
    i = j;
  }
  return ok &&
         H5Sget_select_npoints(c->fs) == (hssize_t)((hsize_t)nown * ns);
}

/* A dataset of rank 2 and shape gd of type p in f, written collectively:
 * this rank's rows ids[0 .. nown) (all of them when ids is NULL and nown
 * is gd[0]) from data. */
static int put_rows(hid_t f, const char *name, const hsize_t gd[2],
                    strata_precision p, int nown, const int *ids,
                    const void *data) {
  const hsize_t mn = nown > 0 ? (hsize_t)nown * gd[1] : 1;
  coll_set c;
  int ok = coll_open(&c, f, name, 2, gd, 1, &mn, p);
  if (ok && ids) ok = select_rows(&c, nown, ids, gd[1]);
  else if (ok && nown == 0) ok = coll_none(&c);
  ok = coll_write(&c, ok, p, data);
  coll_close(&c);
  return ok;
}

/* 1 on every rank when every trace of ntraces is one rank's: ids
 * increasing and in range on each rank, each trace counted once. */
static int rows_cover(strata_dist *d, int ntraces, int nown,
                      const int *ids) {
  int ok = nown >= 0 && nown <= ntraces;
  for (int i = 0; ok && i < nown; i++)
    ok = ids[i] >= 0 && ids[i] < ntraces && (i == 0 || ids[i] > ids[i - 1]);
  int *cnt = calloc((size_t)ntraces, sizeof *cnt);
  ok = all_ok(d->comm, ok && cnt);
  if (ok) {
    for (int i = 0; i < nown; i++) cnt[ids[i]] = 1;
    MPI_Allreduce(MPI_IN_PLACE, cnt, ntraces, MPI_INT, MPI_SUM, d->comm);
    for (int r = 0; ok && r < ntraces; r++) ok = cnt[r] == 1;
  }
  free(cnt);
  return ok;
}
#endif

strata_status strata__h5_write_traces_dist(strata_context *ctx,
                                           strata_dist *d, const char *path,
                                           const strata_traces *t, int nown,
                                           const int *ids, const void *rows) {
  strata_status s = dist_path(ctx, path);
  if (s != STRATA_OK) return s;
#ifdef STRATA_HAVE_HDF5_MPI
  if (t->ntraces > (size_t)INT_MAX || !rows_cover(d, (int)t->ntraces, nown,
                                                  ids))
    return strata__fail_arg(ctx, STRATA_EINVAL, "ids", nown, "traces over "
                            "%d ranks: the ranks' receivers are not each of "
                            "the %zu receivers once", d->size, t->ntraces);
  char tmp[4096 + 32];
  const hsize_t gd[2] = {t->ntraces, t->nsamples}, gr[2] = {t->ntraces, 3};
  const double dt = t->dt, shot = t->shot > 0 ? t->shot : 1;
  /* the receivers' positions (the same on every rank) from rank 0 */
  const int nr = d->rank == 0 ? (int)t->ntraces : 0;
  hid_t f = dist_open(d, path, tmp, sizeof tmp);
  int ok = f >= 0 &&
           put_rows(f, "traces", gd, t->precision, nown, ids, rows) &&
           (!t->receivers ||
            put_rows(f, "receivers", gr, STRATA_F64, nr, NULL,
                     t->receivers)) &&
           put_attr(f, "dt", 1, &dt) && put_attr(f, "source", 3, t->source) &&
           put_attr(f, "shot", 1, &shot);
  return dist_close(ctx, d, path, tmp, f, ok);
#else
  (void)d, (void)t, (void)nown, (void)ids, (void)rows;
  return s;
#endif
}

strata_status strata_traces_save_h5(strata_context *ctx, const char *path,
                                    const strata_traces *t) {
  if (!t || !t->data || t->ntraces < 1 || t->nsamples < 1)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "t", t, "traces: none to "
                              "write (NULL, no data, or no samples)");
  if (t->precision != STRATA_F32 && t->precision != STRATA_F64)
    return strata__fail_arg(ctx, STRATA_EINVAL, "precision",
                            (int)t->precision, "trace precision is %d",
                            (int)t->precision);
#ifdef STRATA_HAVE_HDF5
  const hsize_t d[2] = {t->ntraces, t->nsamples}, r[2] = {t->ntraces, 3};
  const double dt = t->dt, shot = t->shot > 0 ? t->shot : 1;
  h5_enter();
  hid_t f = mem_create();
  int ok = f >= 0 && put_set(f, "traces", 2, d, t->precision, t->data) &&
           (!t->receivers ||
            put_set(f, "receivers", 2, r, STRATA_F64, t->receivers)) &&
           put_attr(f, "dt", 1, &dt) && put_attr(f, "source", 3, t->source) &&
           put_attr(f, "shot", 1, &shot);
  return finish(ctx, f, ok, path);
#else
  return no_hdf5(ctx, path);
#endif
}

strata_status strata_xdmf_write(strata_context *ctx, const char *path, int n,
                                const char *const *files,
                                const double *times,
                                const strata_xdmf_grid *g) {
  if (n < 1 || !files || !times || !g)
    return strata__fail_arg(ctx, STRATA_EINVAL, "n", n, "xdmf: %d files%s; "
                            "a series needs at least one", n,
                            files && times && g ? "" : " (or a NULL list)");
  if (g->dims < 2 || g->dims > 3 || !(g->spacing > 0) ||
      !isfinite(g->spacing) || !g->name || !*g->name ||
      (g->precision != STRATA_F32 && g->precision != STRATA_F64))
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "g", g, "xdmf: the grid "
                              "needs dims 2 or 3, a spacing > 0, a dataset "
                              "name and precision f32 or f64");
  strata_status s = strata__series_check(ctx, "xdmf", n, files, times,
                                         "\"<>&:");
  if (s != STRATA_OK) return s;
  /* XDMF lists sizes, origin and spacing slowest axis first (z, y, x) */
  char dimstr[96];
  if (g->dims == 3)
    snprintf(dimstr, sizeof dimstr, "%zu %zu %zu", g->n[2], g->n[1], g->n[0]);
  else
    snprintf(dimstr, sizeof dimstr, "%zu %zu", g->n[1], g->n[0]);
  const char *zero = g->dims == 3 ? "0 0 0" : "0 0";
  char h[96];
  if (g->dims == 3)
    snprintf(h, sizeof h, "%.17g %.17g %.17g", g->spacing, g->spacing,
             g->spacing);
  else
    snprintf(h, sizeof h, "%.17g %.17g", g->spacing, g->spacing);
  strata__ofile o;
  if ((s = strata__ofile_open(&o, ctx, path)) != STRATA_OK) return s;
  strata__ofile_format(&o, "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">"
                       "\n  <Domain>\n    <Grid Name=\"series\" GridType="
                       "\"Collection\" CollectionType=\"Temporal\">\n");
  for (int i = 0; i < n; i++)
    strata__ofile_format(
        &o,
        "      <Grid Name=\"%d\" GridType=\"Uniform\">\n"
        "        <Time Value=\"%.17g\"/>\n"
        "        <Topology TopologyType=\"%dDCoRectMesh\" Dimensions=\"%s\"/>\n"
        "        <Geometry GeometryType=\"%s\">\n"
        "          <DataItem Dimensions=\"%d\" Format=\"XML\">%s</DataItem>\n"
        "          <DataItem Dimensions=\"%d\" Format=\"XML\">%s</DataItem>\n"
        "        </Geometry>\n"
        "        <Attribute Name=\"%s\" AttributeType=\"Scalar\" "
        "Center=\"Node\">\n"
        "          <DataItem Dimensions=\"%s\" NumberType=\"Float\" "
        "Precision=\"%d\" Format=\"HDF\">%s:/%s</DataItem>\n"
        "        </Attribute>\n"
        "      </Grid>\n",
        i, times[i], g->dims, dimstr,
        g->dims == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY", g->dims, zero,
        g->dims, h, g->name, dimstr, (int)g->precision, files[i], g->name);
  strata__ofile_format(&o, "    </Grid>\n  </Domain>\n</Xdmf>\n");
  return strata__ofile_commit(&o);
}
