/* libFuzzer harness for the model readers: every input is written to a
 * file and read as SEG-Y (the geometry from its headers, and in lines of
 * 3 traces), as .npy, and as raw samples of a shape taken from its first
 * bytes; then resampled onto a small grid when it was read.  Any input
 * must be read or refused with a message, never crash, leak or reach
 * undefined behaviour (build with -fsanitize=fuzzer,address,undefined:
 * cmake -DSTRATA_FUZZ=ON, clang). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strata.h"

static strata_context *ctx;

static void read_one(const strata_model_file *f) {
  strata_model m;
  if (strata_model_read(ctx, f, &m) != STRATA_OK) {
    if (m.data) abort(); /* a refusal leaves nothing */
    return;
  }
  double lo, hi;
  (void)strata_model_check(ctx, &m, "velocity", &lo, &hi);
  for (int a = 0; a < 3; a++) m.spacing[a] = 1;
  size_t n[3] = {3, 2, 4};
  double out[24];
  (void)strata_model_resample(ctx, &m, n, 0.5, STRATA_RESAMPLE_LINEAR, out);
  strata_model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx) {
    strata_context_options o;
    strata_context_options_init(&o);
    o.backend = STRATA_BACKEND_CPU;
    if (strata_context_create(&ctx, &o) != STRATA_OK) abort();
  }
  char path[64];
  snprintf(path, sizeof path, "/tmp/fuzz_model.%ld", (long)getpid());
  FILE *fp = fopen(path, "wb");
  if (!fp) return 0;
  fwrite(data, 1, size, fp);
  fclose(fp);
  strata_model_file f;
  strata_model_file_init(&f);
  f.path = path;
  f.format = STRATA_MODEL_SEGY;
  read_one(&f);
  f.segy_geometry = STRATA_SEGY_TRACES;
  f.segy_nx = 3;
  read_one(&f);
  strata_model_file_init(&f);
  f.path = path;
  f.format = STRATA_MODEL_NPY;
  read_one(&f);
  if (size >= 3) {
    f.format = STRATA_MODEL_RAW;
    f.ndim = 2 + (data[0] & 1);
    f.shape[0] = 1 + data[1] % 8;
    f.shape[1] = 1 + data[2] % 8;
    f.shape[2] = 1 + (size_t)(size % 5);
    f.precision = data[0] & 2 ? STRATA_F64 : STRATA_F32;
    f.big_endian = (data[0] & 4) != 0;
    f.axes = f.ndim == 3 ? "xzy" : "xz";
    read_one(&f);
  }
  unlink(path);
  return 0;
}
