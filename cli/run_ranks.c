/* strata run over one or several processes: the agreement of the ranks
 * on each stage's outcome, the engine's start. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

/* ---- several processes ---------------------------------------------------- */

static double msg_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return (double)h;
}

/* The outcome of a stage every rank went through: rc is this rank's (0 =
 * ok, else an exit code, r->err saying why); returns the worst over the
 * ranks, on every rank.  Rank 0 prints its own message, or names a rank
 * that failed; another rank prints its own only when it differs from rank
 * 0's and is its own (not the library's report of another rank's failure,
 * strata_context_error_elsewhere).  Collective over
 * several processes; with one it prints r->err when rc != 0. */
int run_agree(run_state *r, int rc) {
  if (!r->dist) {
    if (rc) cli_err("%s", r->err);
    return rc;
  }
  double v[3] = {rc, rc ? r->rank : -1, r->rank == 0 ? msg_hash(r->err) : -1};
  if (strata_dist_allreduce(r->dist, v, 3, 1) != STRATA_OK && !rc) {
    snprintf(r->err, sizeof r->err, "the ranks could not agree: %s",
             strata_context_error(r->ctx));
    v[0] = rc = CLI_FAIL;
  }
  int all = (int)v[0];
  if (!all) return 0;
  if (r->rank == 0) {
    if (rc)
      cli_err("%s", r->err);
    else
      cli_err("rank %d failed (its message says why)", (int)v[1]);
  } else if (rc && msg_hash(r->err) != v[2] &&
             !strata_context_error_elsewhere(r->ctx)) {
    cli_err_rank("%s", r->err);
  }
  return all;
}

/* What cannot run over several processes.  It reads only the case and the
 * options, so every rank gives the same answer.  0, or -1 with r->err. */
int run_dist_refusal(run_state *r, int nranks) {
  char over[64] = "over several processes";
  if (nranks > 1) snprintf(over, sizeof over, "over %d processes", nranks);
  if (!r->solver->distributed)
    return run_fail(r, "%s: solver '%s' cannot run %s (heat, wave, fdtd and "
                    "operator can); run it as one process, without the MPI "
                    "launcher", r->cf.path, r->solver->kind, over);
  if (r->dims < 2)
    return run_fail(r, "%s: a 1D grid cannot be split %s (a 2D grid is "
                    "split along y, a 3D grid along z)", r->cf.path, over);
  const long py = cf_int(&r->cf, "run", "ranks_y", 0);
  if (py > 1 && nranks > 1 && nranks % py != 0)
    return run_case_fail(r, "run", "ranks_y", "ranks_y = %ld does not "
                         "divide the %d processes", py, nranks);
  return 0;
}

/* The case's solver (r->solver->create: with r->estimating, its
 * estimate), on the CPU when "auto" found a GPU engine without the
 * solver's kernels.  Returns 0 or an exit code with r->err (not yet
 * agreed over the ranks). */
static int make_solver(run_state *r, const run_args *a, strata_backend be,
                       int device, int threads) {
  int crc = r->solver->create(r) == 0 ? 0
            : r->case_error           ? CLI_USAGE
                                      : CLI_FAIL;
  int unsupported = crc && r->unsupported;
  if (r->dist) {
    double u = unsupported;
    strata_dist_allreduce(r->dist, &u, 1, 1);
    unsupported = u > 0;
  }
  if (unsupported && be == STRATA_BACKEND_AUTO &&
      strata_context_backend(r->ctx) != STRATA_BACKEND_CPU) {
    /* "auto" means the best engine that can run the case: the GPU engine
     * lacks this solver's kernels, so say so and run on the CPU */
    if (!a->quiet && r->rank == 0)
      fprintf(stderr, "strata: %s; running on the CPU instead\n",
              strata_context_error(r->ctx));
    strata_solver_destroy(&r->sv);
    if (r->solver->destroy && r->impl) r->solver->destroy(r);
    r->unsupported = 0;
    r->case_error = 0;
    if (r->dist) {
      r->ctx = NULL;
      strata_dist_destroy(&r->dist);
      r->dist = cli_dist(STRATA_BACKEND_CPU, threads,
                         (int)cf_int(&r->cf, "run", "ranks_y", 0));
      if (!r->dist) return run_fail(r, "cannot start the CPU engine"), CLI_FAIL;
      r->ctx = strata_dist_context(r->dist);
    } else {
      strata_context_destroy(&r->ctx);
      r->ctx = cli_context(STRATA_BACKEND_CPU, device, threads);
      if (!r->ctx) return run_fail(r, "cannot start the CPU engine"), CLI_FAIL;
    }
    crc = r->solver->create(r) == 0 ? 0
          : r->case_error           ? CLI_USAGE
                                    : CLI_FAIL;
  }
  return crc;
}

/* The engine the case and the options ask for (run.h). */
int run_open(run_state *r, const run_args *a, const cli_launch *L,
             int multi) {
  int rc = 0;
  strata_backend be = STRATA_BACKEND_AUTO;
  strata_backend_parse(a->backend ? a->backend
                                 : cf_string(&r->cf, "run", "backend", "auto"),
                       &be);
  if (a->backend && strata_backend_parse(a->backend, &be) != STRATA_OK) {
    cli_err("run: --backend '%s': expected auto, cpu or cuda", a->backend);
    rc = CLI_USAGE;
    return rc;
  }
  const int device = (int)cf_int(&r->cf, "run", "device", 0);
  const int threads = (int)cf_int(&r->cf, "run", "threads", 0);
  const int ranks_y = (int)cf_int(&r->cf, "run", "ranks_y", 0);
  if (multi) {
    char why[256];
    if (!strata_dist_available(why, sizeof why)) {
      if (L->size > 1 || L->rank > 0) {
        char as[64] = "as one of several processes";
        if (L->size > 1) snprintf(as, sizeof as, "as %d processes", L->size);
        cli_err("%s: started by an MPI launcher %s (%s), but this strata "
                "cannot run over several processes: %s", r->cf.path, as,
                L->by, why);
        rc = CLI_USAGE;
        return rc;
      }
      multi = 0; /* PMIx alone, rank 0 or unknown: as one process */
      cli_set_rank(-1);
    }
  }
  /* every refusal before any rank starts MPI or a device */
  if (multi && L->size > 1 && run_dist_refusal(r, L->size)) {
    cli_err("%s", r->err);
    rc = CLI_USAGE;
    return rc;
  }
  if (multi) {
    r->dist = cli_dist(be, threads, ranks_y);
    if (!r->dist) {
      rc = CLI_FAIL;
      return rc;
    }
    r->ctx = strata_dist_context(r->dist);
    r->rank = strata_dist_rank(r->dist);
    r->nranks = strata_dist_size(r->dist);
    if (L->size > 0 && r->nranks != L->size) {
      cli_err("%s: the MPI launcher started %d processes (%s) but MPI "
              "counts %d: strata was built with another MPI than the "
              "launcher's; use the mpiexec of the MPI strata was built with",
              r->cf.path, L->size, L->by, r->nranks);
      rc = CLI_FAIL;
      return rc;
    }
    if (r->nranks == 1) { /* PMIx alone, and one process after all */
      r->ctx = NULL;
      strata_dist_destroy(&r->dist);
      r->rank = 0;
      cli_set_rank(-1);
    } else {
      cli_set_rank(r->rank);
      if (L->size < 1 && run_dist_refusal(r, r->nranks)) {
        cli_err("%s", r->err);
        rc = CLI_USAGE;
        return rc;
      }
    }
  }
  if (!r->ctx) {
    r->ctx = cli_context(be, device, threads);
    if (!r->ctx) {
      rc = CLI_FAIL;
      return rc;
    }
  }
  return 0;
}

/* Starts the engine the case and the options ask for: a context, or over
 * several processes (started by an MPI launcher) a group of ranks; checks
 * the case through the library's estimate and the memory the case needs
 * (*need) and, unless a->check_only, creates the solver, on the CPU when
 * "auto" found a GPU engine without the solver's kernels.  Returns 0 or
 * an exit code, the message printed. */
int run_start(run_state *r, const run_args *a, const cli_launch *L,
              int multi, size_t *need) {
  int rc = run_open(r, a, L, multi);
  if (rc) return rc;
  strata_backend be = STRATA_BACKEND_AUTO;
  strata_backend_parse(a->backend ? a->backend
                                 : cf_string(&r->cf, "run", "backend", "auto"),
                       &be);
  const int device = (int)cf_int(&r->cf, "run", "device", 0);
  const int threads = (int)cf_int(&r->cf, "run", "threads", 0);
  /* the case's options through the library's checks and the footprint,
   * nothing allocated; then the memory, then the solver */
  r->estimating = 1;
  int rc2 = make_solver(r, a, be, device, threads);
  r->estimating = 0;
  if (r->solver->destroy && r->impl) r->solver->destroy(r);
  if (rc2 == 0 && run_check_memory(r, need))
    rc2 = r->case_error ? CLI_USAGE : CLI_FAIL;
  if ((rc = run_agree(r, rc2)) || a->check_only) return rc;
  return run_agree(r, make_solver(r, a, be, device, threads));
}
