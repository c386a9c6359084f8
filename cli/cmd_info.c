/* strata info: what this build and this machine offer. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "cli.h"

static void usage(FILE *o) {
  fprintf(o,
          "usage: strata info [options]\n"
          "  Prints the version and build options, each backend (available or\n"
          "  why not), its device (name, memory, SMs or CPUs, L2 or last-level\n"
          "  cache) and its copy bandwidth measured now.\n"
          "options:\n"
          "  --no-measure   skip the copy measurement (instant)\n");
}

static void print_bytes(const char *label, size_t b) {
  if (!b)
    printf("  %-17s unknown\n", label);
  else if (b >= (size_t)1 << 30)
    printf("  %-17s %.1f GiB\n", label, b / 1073741824.0);
  else
    printf("  %-17s %.1f MiB\n", label, b / 1048576.0);
}

int cli_info(int argc, char **argv) {
  int measure = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return CLI_OK;
    } else if (!strcmp(argv[i], "--no-measure")) {
      measure = 0;
    } else {
      cli_err("info: unknown option '%s' (see strata info --help)", argv[i]);
      return CLI_USAGE;
    }
  }
  printf("strata %s\nbuild: %s\n", strata_version(), strata_build_info());
  {
    char why[256];
    int ok = strata_dist_available(why, sizeof why);
    printf("several processes (mpiexec -n P strata run): %s%s\n",
           ok ? "yes, " : "no: ", why);
  }
  strata_backend auto_pick = STRATA_BACKEND_CPU;
  static const strata_backend all[] = {STRATA_BACKEND_CPU, STRATA_BACKEND_CUDA};
  int rc = CLI_OK;
  for (int b = 0; b < 2; b++) {
    char why[512];
    printf("\nbackend %s: ", strata_backend_name(all[b]));
    if (!strata_backend_available(all[b], why, sizeof why)) {
      printf("not available (%s)\n", why[0] ? why : "no reason given");
      continue;
    }
    printf("available\n");
    if (all[b] == STRATA_BACKEND_CUDA) auto_pick = STRATA_BACKEND_CUDA;
    strata_context *ctx = cli_context(all[b], 0, 0);
    if (!ctx) {
      rc = CLI_FAIL;
      continue;
    }
    strata_device_info di;
    if (strata_context_device_info(ctx, &di) != STRATA_OK) {
      cli_err("info: %s", strata_context_error(ctx));
      strata_context_destroy(&ctx);
      rc = CLI_FAIL;
      continue;
    }
    int gpu = all[b] == STRATA_BACKEND_CUDA;
    printf("  %-17s %s\n", "device", di.name);
    print_bytes("memory", di.memory_bytes);
    if (di.memory_free) print_bytes("memory free", di.memory_free);
    printf("  %-17s %d\n", gpu ? "SMs" : "logical CPUs", di.multiprocessors);
    print_bytes(gpu ? "L2 cache" : "last-level cache", di.l2_bytes);
    if (gpu)
      printf("  %-17s %d.%d\n", "compute", di.cc_major, di.cc_minor);
    else
      printf("  %-17s %d\n", "OpenMP threads", di.threads);
    if (measure) {
      size_t n = gpu ? 384 : 160, n3[3] = {n, n, n};
      for (int p = 0; p < 2; p++) {
        strata_precision pr = p ? STRATA_F64 : STRATA_F32;
        double pts;
        if (cli_copy_rate(ctx, n3, pr, &pts)) {
          rc = CLI_FAIL;
          break;
        }
        printf("  %-17s %.1f GB/s (%s, %zu^3, read + write)\n",
               p ? "" : "copy", pts * 2 * (double)pr * 1e-9,
               p ? "fp64" : "fp32", n);
      }
    }
    strata_context_destroy(&ctx);
  }
  printf("\nbackend auto picks: %s\n", strata_backend_name(auto_pick));
  return rc;
}
