/* libFuzzer harness for reading checkpoints: every input goes to a small
 * solver of each kind as an image in memory (strata_solver_load_state),
 * as it is and resealed with a valid CRC-32 (so that the header checks
 * behind the CRC are reached), and as a file (strata_solver_load, the
 * header-first bounded reader).  Any input must be loaded or refused with
 * a message, never crash, leak or reach undefined behaviour (build with
 * -fsanitize=fuzzer,address,undefined: cmake -DSTRATA_FUZZ=ON, clang).
 *
 * With STRATA_FUZZ_SEEDS=DIR in the environment it first writes each
 * solver's saved state (after a few steps) into DIR, the seed corpus. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "strata.h"

#define NKINDS 5

static strata_context *ctx;
static strata_solver *sv[NKINDS];
static char path[64];

static const double receivers[6] = {2, 2, 2, 5, 4, 3};
static const strata_solver_kind kinds[NKINDS] = {
    STRATA_SOLVER_HEAT, STRATA_SOLVER_WAVE, STRATA_SOLVER_FDTD,
    STRATA_SOLVER_POISSON, STRATA_SOLVER_OPERATOR};

/* A small solver of kind k (0 .. NKINDS-1). */
static strata_solver *make(int k) {
  strata_solver_options o;
  strata_heat_options ho;
  strata_wave_options wo;
  strata_fdtd_options fo;
  strata_mg_options mo;
  strata_operator_options oo;
  strata_solver_options_init(&o, kinds[k]);
  o.tag = 0x5eed;
  switch (kinds[k]) {
  case STRATA_SOLVER_HEAT:
    strata_heat_options_init(&ho);
    ho.dims = 2;
    ho.n[0] = 9;
    ho.n[1] = 7;
    ho.D = 0.2;
    o.heat = &ho;
    break;
  case STRATA_SOLVER_WAVE:
    strata_wave_options_init(&wo);
    wo.n[0] = wo.n[1] = wo.n[2] = 8;
    wo.order = 2;
    wo.absorb_width = 2;
    wo.nreceivers = 2;
    wo.receivers = receivers;
    wo.record_every = 2;
    o.wave = &wo;
    break;
  case STRATA_SOLVER_FDTD:
    strata_fdtd_options_init(&fo);
    fo.n[0] = 12;
    fo.n[1] = 10;
    fo.pml_width = 2;
    o.fdtd = &fo;
    break;
  case STRATA_SOLVER_POISSON:
    strata_mg_options_init(&mo);
    mo.dims = 2;
    mo.n[0] = mo.n[1] = 9;
    mo.n[2] = 1;
    o.poisson = &mo;
    break;
  default:
    strata_operator_options_init(&oo);
    oo.n[0] = 9;
    oo.n[1] = 7;
    o.op = &oo;
    break;
  }
  strata_solver *s = NULL;
  if (strata_solver_create(ctx, &o, &s) != STRATA_OK) {
    fprintf(stderr, "fuzz_checkpoint: cannot create solver %d: %s\n", k,
            strata_context_error(ctx));
    abort();
  }
  return s;
}

/* Writes each solver's state after 3 steps into folder dir. */
static void write_seeds(const char *dir) {
  for (int k = 0; k < NKINDS; k++) {
    strata_solver *s = make(k);
    char p[512];
    snprintf(p, sizeof p, "%s/%s.stck", dir,
             strata_solver_kind_name(kinds[k]));
    if (strata_solver_step(s, 3) != STRATA_OK ||
        strata_solver_save(s, p) != STRATA_OK) {
      fprintf(stderr, "fuzz_checkpoint: cannot write %s: %s\n", p,
              strata_context_error(ctx));
      abort();
    }
    strata_solver_destroy(&s);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  o.threads = 1;
  if (strata_context_create(&ctx, &o) != STRATA_OK) abort();
  const char *seeds = getenv("STRATA_FUZZ_SEEDS");
  if (seeds && *seeds) write_seeds(seeds);
  for (int k = 0; k < NKINDS; k++) sv[k] = make(k);
  snprintf(path, sizeof path, "/tmp/strata_fuzz_ck.%ld", (long)getpid());
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int k = 0; k < NKINDS; k++)
    (void)strata_solver_load_state(sv[k], data, size);
  if (size < 4) return 0;
  unsigned char *b = malloc(size);
  if (!b) return 0;
  memcpy(b, data, size);
  uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), b, (uInt)(size - 4));
  memcpy(b + size - 4, &crc, 4);
  for (int k = 0; k < NKINDS; k++)
    (void)strata_solver_load_state(sv[k], b, size);
  FILE *f = fopen(path, "wb");
  if (f) {
    int ok = fwrite(b, 1, size, f) == size;
    if (fclose(f) == 0 && ok)
      for (int k = 0; k < NKINDS; k++) (void)strata_solver_load(sv[k], path);
    remove(path);
  }
  free(b);
  return 0;
}
