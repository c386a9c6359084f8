/* strata run's snapshots: the files of one snapshot (.npy, .vti, .png),
 * and a background thread that writes them while the solver steps on. */
#ifndef STRATA_CLI_SNAP_WRITER_H
#define STRATA_CLI_SNAP_WRITER_H

#include <stddef.h>

#include "strata.h"

/* What a snapshot is written as. */
typedef struct snap_format {
  const char *dir;        /* output folder */
  int npy, vti, png;      /* the files asked for */
  strata_png_options po;  /* the PNG slice */
  double h;               /* grid spacing, recorded in .vti */
  const char *field_name; /* the .vti array's name */
} snap_format;

/* Writes f as DIR/STEM.npy, .vti and .png (those asked for) through the
 * library, which writes each file under a temporary name and renames it
 * when complete.  Returns 0, or -1 with "cannot write PATH: reason" in err
 * (the first file that failed).  The library's message lands on f's
 * context: call it only from the thread that uses that context. */
int snap_write_files(const snap_format *fmt, const strata_field *f,
                     const char *stem, char *err, size_t errn);

/* The background writer: nbuf host buffers of one snapshot each (dense, x
 * fastest, the precision of the description), one thread, and a CPU
 * context of its own with a field the thread copies each buffer into and
 * writes with snap_write_files.  The caller fills a buffer (acquire, then
 * its field's or its solver's read) and hands it over (submit); the
 * thread writes the snapshots in the order they were handed over. */
typedef struct snap_writer snap_writer;

/* Creates the writer for snapshots of shape d (its ghost width is not
 * used) and starts its thread; fmt is copied.  Returns 0, or -1 with the
 * reason in err when the memory or the thread cannot be had: the buffers
 * would take more than half of the memory the system reports available,
 * an allocation failed, or pthread_create did. */
int snap_writer_create(snap_writer **w, const snap_format *fmt,
                       const strata_field_desc *d, int nbuf, char *err,
                       size_t errn);

/* A free buffer for the next snapshot, waiting while the thread holds
 * every one (the back-pressure that bounds the memory).  Never NULL. */
void *snap_writer_acquire(snap_writer *w);

/* Gives an acquired buffer back unwritten (its capture failed). */
void snap_writer_release(snap_writer *w, void *buf);

/* Hands the acquired buffer to the thread to be written as STEM.*, and
 * returns at once.  Returns 0, or -1 with the message of a write that
 * failed earlier in err: the buffer is then given back unwritten, and
 * nothing more is written. */
int snap_writer_submit(snap_writer *w, void *buf, const char *stem,
                       char *err, size_t errn);

/* Waits until every snapshot handed over is written.  Returns 0, or -1
 * with the first failure's message in err. */
int snap_writer_drain(snap_writer *w, char *err, size_t errn);

/* Without waiting: 0, or -1 with the message of a write that failed in
 * err (the run should stop now rather than at its next snapshot). */
int snap_writer_failed(snap_writer *w, char *err, size_t errn);

/* Seconds the thread has spent writing (copying a buffer into its field
 * and writing the files). */
double snap_writer_busy_s(snap_writer *w);

/* Writes what is still handed over (unless a write failed), stops the
 * thread and frees everything; sets *w = NULL; NULL is harmless. */
void snap_writer_destroy(snap_writer **w);

#endif
