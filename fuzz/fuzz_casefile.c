/* libFuzzer harness for the case-file parser: parse, check against the
 * whole schema with every section allowed, then read every key through
 * its typed getter.  Any input must give a result or a message, never a
 * crash, a leak or undefined behaviour (build with
 * -fsanitize=fuzzer,address,undefined: cmake -DSTRATA_FUZZ=ON, clang). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "casefile.h"
#include "run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cf_file f;
  if (cf_parse(&f, "fuzz.ini", (const char *)data, size) == 0 &&
      cf_validate(&f, run_schema, run_schema_count, "solver|grid|run", NULL,
                  NULL) == 0) {
    for (int i = 0; i < run_schema_count; i++) {
      const cf_key *k = &run_schema[i];
      long iv[8];
      double fv[8];
      switch (k->type) {
      case CF_INT: (void)cf_int(&f, k->section, k->key, 0); break;
      case CF_FLOAT: (void)cf_float(&f, k->section, k->key, 0); break;
      case CF_BOOL: (void)cf_bool(&f, k->section, k->key, 0); break;
      case CF_STRING:
      case CF_ENUM: (void)cf_string(&f, k->section, k->key, ""); break;
      case CF_INTS: (void)cf_ints(&f, k->section, k->key, iv, 8); break;
      case CF_FLOATS: (void)cf_floats(&f, k->section, k->key, fv, 8); break;
      case CF_ENUMS:
        (void)cf_enums_has(&f, k->section, k->key, "npy", "png");
        break;
      }
    }
    (void)cf_set(&f, "output", "every", "7");
    (void)cf_set(&f, "new", "key", "x");
  }
  if (f.err[0] && strlen(f.err) >= sizeof f.err) abort();
  cf_free(&f);
  return 0;
}
