/* Shared by the model readers (model.c, segy_read.c).  Not installed. */
#ifndef STRATA_MODEL_INTERNAL_H
#define STRATA_MODEL_INTERNAL_H

#include "io_internal.h"

#include <stdint.h>

/* Sample types of model files: SEG-Y's format codes, and 64 for
 * 8-byte IEEE floats (raw files). */
enum {
  STRATA__MS_IBM = 1,
  STRATA__MS_I32 = 2,
  STRATA__MS_I16 = 3,
  STRATA__MS_F32 = 5,
  STRATA__MS_I8 = 8,
  STRATA__MS_F64 = 64
};
/* Bytes of one sample of type code. */
size_t strata__model_code_size(int code);
/* The sample at p of type code, big-endian when big. */
double strata__model_sample(const unsigned char *p, int code, int big);
/* An IBM System/360 single-precision float as a double (exact). */
double strata__ibm_to_double(uint32_t w);

/* Writes samples in a file's order into a model: the file's axes slowest
 * first, nd of them, ax[i] the model axis of file axis i. */
typedef struct strata__scatter {
  strata_model *m;
  int nd;
  size_t size[3], stride[3], idx[3], at;
} strata__scatter;
void strata__scatter_init(strata__scatter *sc, strata_model *m, int nd,
                          const int ax[3]);
void strata__scatter_put(strata__scatter *sc, double v);

/* Opens path for reading: a regular file, *size its bytes. */
strata_status strata__model_open(strata_context *ctx, const char *path,
                                 FILE **fp, size_t *size);
/* Reads n bytes, asking the interrupt hook first; EFORMAT when short. */
strata_status strata__model_fread(strata_context *ctx, FILE *fp,
                                  const char *path, void *buf, size_t n);
/* Allocates m's data for shape n (x, y, z) after checking the memory,
 * extra host bytes besides; spacing and origin from f. */
strata_status strata__model_alloc(strata_context *ctx,
                                  const strata_model_file *f, int dims,
                                  const size_t n[3], size_t extra,
                                  strata_model *m);

/* The SEG-Y reader (segy_read.c). */
strata_status strata__segy_read_model(strata_context *ctx,
                                      const strata_model_file *f,
                                      strata_model *m);

#endif
