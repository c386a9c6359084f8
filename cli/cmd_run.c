#include "cli.h"
int cli_run(int argc, char **argv) { (void)argc; (void)argv; return CLI_USAGE; }
