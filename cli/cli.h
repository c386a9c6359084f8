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
int cli_view_cmd(int argc, char **argv);

/* Prints "strata: " + message + newline to stderr. */
void cli_err(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Prints "strata: rank R: " + message + newline to stderr on every rank
 * (plain cli_err when the program runs as one process): for failures that
 * only this rank saw. */
void cli_err_rank(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Creates a context; on failure prints the reason and returns NULL. */
strata_context *cli_context(strata_backend b, int device, int threads);

/* ---- several processes (mpiexec -n P strata run CASE) ------------------- */

/* What the environment says about an MPI launcher. */
typedef struct cli_launch {
  int launched; /* 1: started by an MPI launcher */
  int size;     /* processes it started; -1 when the environment does not
                   say (PMIx alone: MPI tells once it is initialised) */
  int rank;     /* this process's rank; -1 when unknown */
  const char *by; /* the variable that told, e.g. "OMPI_COMM_WORLD_SIZE" */
} cli_launch;

/* Reads, in this order: OMPI_COMM_WORLD_SIZE / OMPI_COMM_WORLD_RANK (Open
 * MPI), PMI_SIZE / PMI_RANK (MPICH and Intel MPI's Hydra, Slurm's PMI-2),
 * MV2_COMM_WORLD_SIZE / MV2_COMM_WORLD_RANK (MVAPICH2), PMIX_RANK (PMIx
 * launchers; size unknown). */
void cli_launch_detect(cli_launch *l);
/* From here cli_err prints on rank 0 only (rank < 0: every message again)
 * and cli_err_rank prefixes "rank R: ". */
void cli_set_rank(int rank);
/* Joins the ranks through strata_dist_create with the context options
 * cli_context builds; on failure prints the reason (rank 0, and a rank
 * whose own context failed) and returns NULL.  Collective. */
strata_dist *cli_dist(strata_backend b, int threads, int ranks_y);

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

/* Installs a SIGINT/SIGTERM handler (and SIGUSR1 when usr1, for runs over
 * several processes: Open MPI's mpiexec forwards it to every rank) that
 * only sets a flag; a second signal restores the default action. */
void cli_install_interrupt(int usr1);
/* 1 once the user asked to stop. */
int cli_interrupted(void);
/* Stops the run as Ctrl-C does (the live view's stop). */
void cli_interrupt_request(void);
/* on = 1: a signal ends the process at once (exit 130, a line on stderr),
 * for the setup before anything is written, where a long allocation or a
 * blocking read would otherwise hold the request; on = 0: it only sets
 * the flag of cli_interrupted (the default). */
void cli_interrupt_exits(int on);

#endif
