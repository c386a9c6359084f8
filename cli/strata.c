/* The strata program: one binary, one subcommand per job.
 *   strata demo | info | bench | run CASE | view DIR     (--help for each)
 * Exit codes: 0 ok, 1 a runtime failure, 2 bad usage or a bad case file. */
#include <string.h>

#include "cli.h"

static void usage(FILE *o) {
  fprintf(o,
          "usage: strata COMMAND [options]\n"
          "\n"
          "commands:\n"
          "  demo        apply each operator family once on this machine, check\n"
          "              it, time it next to the copy ceiling, write a picture\n"
          "  info        backends, devices, measured copy bandwidth, build\n"
          "  bench       time every operator x variant x precision (--quick)\n"
          "  run CASE    run a case file (see docs/cases.md)\n"
          "  view DIR    browse a run's output folder in the browser\n"
          "  version     print the version\n"
          "\n"
          "'strata COMMAND --help' describes each.  Exit codes: 0 ok, 1 runtime\n"
          "failure, 2 bad usage or case file.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *c = argv[1];
  if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
    usage(stdout);
    return CLI_OK;
  }
  if (!strcmp(c, "version") || !strcmp(c, "--version")) {
    printf("strata %s (%s)\n", strata_version(), strata_build_info());
    return CLI_OK;
  }
  if (!strcmp(c, "demo")) return cli_demo(argc - 1, argv + 1);
  if (!strcmp(c, "info")) return cli_info(argc - 1, argv + 1);
  if (!strcmp(c, "bench")) return cli_bench(argc - 1, argv + 1);
  if (!strcmp(c, "view")) return cli_view_cmd(argc - 1, argv + 1);
  if (!strcmp(c, "run")) {
    int rc = cli_run(argc - 1, argv + 1);
    strata_dist_finalize(); /* MPI, if a run over several ranks began it */
    return rc;
  }
  cli_err("unknown command '%s' (commands: demo, info, bench, run, view, version; "
          "see strata --help)", c);
  return CLI_USAGE;
}
