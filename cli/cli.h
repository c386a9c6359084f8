/* Shared by the subcommands of the strata program. */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H

#include <stdio.h>

#include "strata.h"

/* Exit codes of every subcommand. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

int cli_demo(int argc, char **argv);
int cli_info(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_run(int argc, char **argv);

/* Prints "strata: " + message + newline to stderr. */
void cli_err(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Creates a context; on failure prints the reason and returns NULL. */
strata_context *cli_context(strata_backend b, int device, int threads);

/* Seconds from a monotonic clock. */
double cli_now(void);

/* Parses a whole decimal integer in [lo, hi]; 0 on success. */
int cli_parse_long(const char *s, long lo, long hi, long *out);

/* Measures the copy ceiling: points per second of strata_copy_kernel on
 * fields of n points (3D, the given precision), median of a few batches.
 * Returns 0 and fills *pts_per_s, or -1 after printing why. */
int cli_copy_rate(strata_context *ctx, const size_t n[3], strata_precision p,
                  double *pts_per_s);

/* Times fn(arg) (one operation, synchronized) for the median of samples
 * batches of at least min_s seconds each; returns seconds per call, or a
 * negative value when fn fails. */
double cli_time(int (*fn)(void *), void *arg, strata_context *ctx,
                int samples, double min_s);

/* ---- progress ------------------------------------------------------------ */

typedef struct cli_progress {
  long total;          /* steps in the run */
  long first;          /* step the run (or restart) began at */
  double points;       /* grid points updated per step */
  double t0, last_draw, last_log;
  int tty, quiet, drawn;
  long next_log_step;
} cli_progress;

/* Starts a progress display on stderr: a bar on a terminal, a log line per
 * tenth of the run otherwise, nothing when quiet. */
void cli_progress_start(cli_progress *p, long first, long total,
                        double points, int quiet);
/* Reports that step `done` (counted from 0) is complete. */
void cli_progress_update(cli_progress *p, long done);
/* Ends the display (clears the bar's line). */
void cli_progress_finish(cli_progress *p);

/* ---- Ctrl-C ------------------------------------------------------------- */

/* Installs a SIGINT/SIGTERM handler that only sets a flag; a second
 * signal restores the default action. */
void cli_install_interrupt(void);
/* 1 once the user asked to stop. */
int cli_interrupted(void);

#endif
