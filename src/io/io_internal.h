/* Shared by the output writers: files written under a temporary name and
 * renamed when complete, and byte-order helpers.  Not installed. */
#ifndef STRATA_IO_INTERNAL_H
#define STRATA_IO_INTERNAL_H

#include "../core/internal.h"

#include <stdio.h>

/* An output file in progress: data goes to tmp, which commit renames to
 * path.  Any failed write is remembered; commit then removes tmp and
 * returns the first failure. */
typedef struct strata__ofile {
  FILE *fp;
  strata_context *ctx;
  char *path;
  char *tmp;
  strata_status status;
} strata__ofile;

/* Opens PATH.tmp.<pid> for writing.  Errors: STRATA_EINVAL (path NULL or
 * empty), STRATA_EIO (cannot create it: the message names it and errno). */
strata_status strata__ofile_open(strata__ofile *o, strata_context *ctx,
                                 const char *path);
/* Appends n bytes; failures are kept in o->status and returned. */
strata_status strata__ofile_write(strata__ofile *o, const void *p, size_t n);
/* printf-style append. */
strata_status strata__ofile_printf(strata__ofile *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Flushes, syncs, closes and renames to the final name; on any failure
 * (earlier or now) removes the temporary file and returns the status. */
strata_status strata__ofile_commit(strata__ofile *o);
/* Closes and removes the temporary file (after a failure elsewhere). */
void strata__ofile_abort(strata__ofile *o);

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

/* The interior of f as a newly allocated dense host array (x fastest), in
 * the field's precision.  Errors: STRATA_ENOMEM and those of
 * strata_field_read. */
strata_status strata__field_to_host(const strata_field *f, void **out);

#endif
