/* strata run CASE: reads and checks a case file, checks the memory it
 * needs, runs the solver (the library's strata_solver) with a progress
 * display, writes snapshots, traces, checkpoints, a movie and a JSON
 * summary.  The case's keys, the output and the ranks are in run_case.c,
 * run_output.c and run_ranks.c. */
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
#include "view.h"

/* The run's one line on stderr: case, grid, engine and memory. */
static void run_announce(const run_state *r, const strata_device_info *di,
                         const char *transport, size_t need) {
  fprintf(stderr, "strata: %s: %s %zu", r->name, r->solver->kind, r->n[0]);
  for (int d = 1; d < r->dims; d++) fprintf(stderr, "x%zu", r->n[d]);
  fprintf(stderr, " %s, %ld steps on %s (%s), %.1f MiB",
          r->precision == STRATA_F32 ? "fp32" : "fp64", r->steps,
          strata_backend_name(strata_context_backend(r->ctx)), di->name,
          need / 1048576.0);
  if (r->dist)
    fprintf(stderr, " per rank, over %d processes (%s)", r->nranks,
            transport);
  fputc('\n', stderr);
}

/* The copy kernel's rate on this grid, the run's ceiling (over several
 * processes every rank on its slab at once, summed); 0 when it could not
 * be measured. */
static double run_ceiling(run_state *r) {
  double copy_pts = 0;
  size_t cn[3] = {r->n[0], r->n[1], r->n[2]};
  if (r->dist) { /* every rank on its slab at once: the sum is the ceiling */
    size_t lo;
    strata_dist_split(r->dist, r->n[r->dims - 1], r->rank, &lo,
                      &cn[r->dims - 1]);
    strata_dist_barrier(r->dist);
  }
  /* two more fields of the grid: measured only where they fit beside the
   * solver's, in the memory free now */
  strata_field_desc d = {3, {cn[0], cn[1], cn[2]}, 1, r->precision};
  strata_device_info di;
  size_t fb = 0;
  int room = strata_field_bytes(&d, &fb) == STRATA_OK &&
             strata_context_device_info(r->ctx, &di) == STRATA_OK &&
             (!di.memory_free || (double)fb * 2 < 0.9 * (double)di.memory_free);
  if (!room && !r->quiet && r->rank == 0)
    fprintf(stderr, "strata: the copy ceiling is not measured: its two "
            "fields (%.2f GiB) do not fit beside the solver's\n",
            2.0 * (double)fb / 1073741824.0);
  int bad = !room || cli_copy_rate(r->ctx, cn, r->precision, &copy_pts) != 0;
  if (bad) copy_pts = 0;
  if (r->dist) {
    double v[2] = {copy_pts, bad};
    strata_dist_allreduce(r->dist, v, 2, 0);
    copy_pts = v[1] > 0 ? 0 : v[0];
  }
  return copy_pts;
}

/* The live view's side of the run: the slice a viewer asked for (a read
 * that leaves the solver's state as it is) and the snapshot's title. */
static int view_read(void *arg, const size_t lo[3], const size_t n[3],
                     void *host) {
  run_state *r = arg;
  return strata_solver_read_box(r->sv, 0, lo, n, host) == STRATA_OK ? 0 : -1;
}
static void view_title(void *arg, char *b, size_t n) {
  run_snapshot_title(arg, b, n);
}
static output_cfg *view_output; /* the run's [output], for the gather */
static int view_traces(void *arg, void **png, size_t *size) {
  run_state *r = arg;
  strata_traces t;
  strata_png_options po;
  char title[160];
  if (strata_solver_traces(r->sv, &t) != STRATA_OK || !t.ntraces ||
      !t.nsamples)
    return -1;
  run_traces_png_options(r, view_output, &t, &po, title, sizeof title);
  return strata_traces_encode_png(r->ctx, &t, &po, png, size) == STRATA_OK
             ? 0 : -1;
}

/* Between chunks: the view's status, a frame when a viewer asked, a pause;
 * its stop is Ctrl-C's. */
static void view_tick(run_state *r, output_cfg *o) {
  if (!o->view) return;
  const cli_view_source src = {view_read, view_traces, view_title, r};
  strata_solver_info si;
  double t = strata_solver_get_info(r->sv, &si) == STRATA_OK ? si.time : 0;
  if (cli_view_tick(o->view, r->step, t, &src)) cli_interrupt_request();
}

/* --view or [run] view: the server starts, its address (with the token)
 * printed.  0, or an exit code. */
static int view_start(run_state *r, output_cfg *o, const run_args *a) {
  const char *spec = a->view ? a->view : cf_string(&r->cf, "run", "view",
                                                   NULL);
  if (!spec || (!a->view && !strcmp(spec, "off"))) return 0;
  char where[300];
  if (a->view)
    snprintf(where, sizeof where, "--view");
  else
    snprintf(where, sizeof where, "%s: key 'view' in [run]", r->cf.path);
  if (r->dist) {
    cli_err("%s: a run over several processes cannot be watched (yet): "
            "watch it on one process, or use strata view DIR afterwards",
            where);
    return CLI_USAGE;
  }
  cli_view_desc d;
  memset(&d, 0, sizeof d);
  d.name = r->name;
  d.kind = r->solver->kind;
  d.field = r->solver->field_name;
  d.unit = strata_solver_field_unit(r->sv, 0);
  run_units(r, &d.len_unit, &d.time_unit);
  d.dims = r->dims;
  memcpy(d.n, r->n, sizeof d.n);
  d.h = r->h;
  d.precision = r->precision;
  d.steps = r->steps;
  run_png_options(r, o, &d.po);
  strata_traces t;
  d.live_traces = strata_solver_traces(r->sv, &t) == STRATA_OK &&
                  t.ntraces > 0; /* samples come as the run steps */
  view_output = o;
  char err[512];
  int s = cli_view_start(&o->view, spec, &d, err, sizeof err);
  if (s) {
    cli_err("%s: %s", where, err);
    return s == -2 ? CLI_USAGE : CLI_FAIL;
  }
  fprintf(stderr, "strata: watch the run at %s\n", cli_view_url(o->view));
  return 0;
}

/* The time loop: steps in chunks of about 0.1 s so progress and Ctrl-C
 * stay responsive, snapshots and checkpoints at their steps.  Returns the
 * exit code so far; *interrupted and *kernel_s say how it went. */
static int run_steps(run_state *r, output_cfg *o, const run_args *a,
                     long ck_every, double points, long first,
                     int *interrupted, double *kernel_s) {
  cli_progress pg;
  int rc;
  long chunk = 1;
  int stop = 0;
  if (o->every && r->step == 0 &&
      (rc = run_agree(r, run_write_snapshot(r, o, "snap_000000") ? CLI_FAIL
                                                                  : 0)))
    return rc;
  cli_progress_start(&pg, first, r->steps, points,
                     a->quiet || r->solver->own_progress || r->rank != 0);
  while (r->step < r->steps) {
    view_tick(r, o);
    /* over several processes the ranks stop together: at the step where
     * the flag of any of them was seen (the allreduce below) */
    if (r->dist ? stop : cli_interrupted()) {
      *interrupted = 1;
      break;
    }
    long n = chunk;
    if (n > r->steps - r->step) n = r->steps - r->step;
    if (o->every && n > o->every - r->step % o->every)
      n = o->every - r->step % o->every;
    if (ck_every && n > ck_every - r->step % ck_every)
      n = ck_every - r->step % ck_every;
    double t0 = cli_now();
    r->step_status = STRATA_OK;
    if (r->solver->step ? r->solver->step(r, n)
                        : (r->step_status = strata_solver_step(r->sv, n)) !=
                              STRATA_OK) {
      cli_progress_finish(&pg);
      if (r->step_status == STRATA_ENONFINITE) {
        /* every rank's check found it at the same step: they stop
         * together, and nothing more is written */
        char m[sizeof r->err];
        snprintf(m, sizeof m, "%s",
                 r->solver->step ? r->err : strata_context_error(r->ctx));
        rc = run_agree(r, run_blew_up(r, o->dir, m) ? CLI_FAIL : 0);
        return rc ? rc : CLI_FAIL;
      }
      if (r->dist) {
        /* the other ranks may be waiting for this one inside their step,
         * where no agreement reaches them: end this process, and the
         * launcher ends the others (every rank exits non-zero) */
        cli_err_rank("step %ld: %s", r->step,
                     r->err[0] ? r->err : strata_context_error(r->ctx));
        if (o->writer) /* the snapshots handed over before this step */
          strata_snapshot_flush(o->writer);
        fflush(NULL);
        _exit(CLI_FAIL);
      }
      cli_err("step %ld: %s", r->step,
              r->err[0] ? r->err : strata_context_error(r->ctx));
      rc = CLI_FAIL;
      return rc;
    }
    double dt = cli_now() - t0;
    /* a snapshot the writer thread failed to write stops the run now, not
     * at the next snapshot, which may be far away */
    int wfail = 0;
    if (o->writer && strata_snapshot_status(o->writer) != STRATA_OK)
      wfail = run_fail(r, "%s", strata_context_error(r->ctx)) != 0;
    if (r->dist) { /* the slowest rank's time, anyone's stop flag, and
                    * rank 0's writer */
      double v[3] = {dt, cli_interrupted(), wfail};
      strata_dist_allreduce(r->dist, v, 3, 1);
      dt = v[0];
      stop = v[1] > 0;
      if (v[2] > 0) {
        cli_progress_finish(&pg);
        rc = run_agree(r, wfail ? CLI_FAIL : 0);
        if (!rc) rc = CLI_FAIL;
        return rc;
      }
    } else if (wfail) {
      cli_progress_finish(&pg);
      rc = run_agree(r, CLI_FAIL);
      return rc;
    }
    *kernel_s += dt;
    r->step += n;
    if (r->stop_at) /* complete early (multigrid converged) */
      r->step = r->steps = r->stop_at;
    /* aim at about 0.1 s per call so progress and Ctrl-C stay responsive */
    if (dt < 0.05 && n == chunk && chunk < (1L << 20))
      chunk *= 2;
    else if (dt > 0.2 && chunk > 1)
      chunk /= 2;
    cli_progress_update(&pg, r->step);
    if (o->every && r->step % o->every == 0 && r->step < r->steps) {
      char stem[64];
      snprintf(stem, sizeof stem, "snap_%06ld", r->step);
      if ((rc = run_agree(r, run_write_snapshot(r, o, stem) ? CLI_FAIL : 0)))
        return rc;
    }
    /* a checkpoint comes after every earlier snapshot is on disk */
    if (ck_every && r->step % ck_every == 0 && r->step < r->steps &&
        ((rc = run_agree(r, run_drain_snapshots(r, o) ? CLI_FAIL : 0)) ||
         (rc = run_save_checkpoint(r, o->dir))))
      return rc;
  }
  cli_progress_finish(&pg);
  return CLI_OK;
}

/* --check's answer: the case is valid, and the memory it would take. */
static void run_print_check(const run_state *r, size_t need) {
  const char *be = strata_backend_name(strata_context_backend(r->ctx));
  printf("%s: ok (%s %zu", r->cf.path, r->solver->kind, r->n[0]);
  for (int d = 1; d < r->dims; d++) printf("x%zu", r->n[d]);
  printf(" %s on %s, needs %zu bytes = %.1f MiB", r->precision == STRATA_F32
                                                  ? "fp32" : "fp64",
         be, need, need / 1048576.0);
  if (r->dist) printf(" per rank, %d processes", r->nranks);
  printf(")\n  %s memory: %zu bytes (the solver's fields and tables), "
         "%zu bytes (traces)\n  host memory: %zu bytes (the solver's "
         "buffers), %zu bytes (snapshot and trace copies)\n", be, r->fp_dev,
         r->copy_dev, r->fp_host, r->copy_host);
}

/* --restart: the state of the checkpoint at path. */
static int run_restart(run_state *r, const char *path) {
  /* the library's reader stops between its bounded reads on Ctrl-C (the
   * context's interrupt hook) and names the file */
  cli_interrupt_exits(0);
  int rc = run_load_checkpoint(r, path);
  if (!rc && cli_interrupted()) {
    cli_err("interrupted while setting up the run; nothing was written");
    rc = 130;
  }
  if (rc) return rc;
  cli_interrupt_exits(1);
  return CLI_OK;
}

/* The output folder, made by rank 0, which removes the partial files of a
 * killed run there; every rank learns whether it was made. */
int run_open_dir(run_state *r, const char *dir) {
  int mrc = 0;
  if (r->rank == 0 && run_make_dir(dir)) {
    run_fail(r, "cannot create the output folder '%s': %s", dir,
             strerror(errno));
    mrc = CLI_FAIL;
  } else if (r->rank == 0 && /* the partial files of a killed run */
             strata_remove_stale_temporaries(r->ctx, dir, NULL) !=
                 STRATA_OK) {
    cli_err("%s", strata_context_error(r->ctx));
  }
  return run_agree(r, mrc);
}

int cli_run(int argc, char **argv) {
  /* started by an MPI launcher as several processes (or by PMIx alone,
   * which does not say how many: MPI tells once it is up) */
  cli_launch L;
  cli_launch_detect(&L);
  int multi = L.launched && L.size != 1;
  if (multi) cli_set_rank(L.rank);
  run_args a;
  int pr = run_parse_args(argc, argv, &a);
  if (pr) return pr > 0 ? CLI_OK : CLI_USAGE;
  /* until the output folder is made, Ctrl-C (SIGINT, SIGTERM) ends the
   * process at once: setting up allocates, fills and reads, and has
   * written nothing; from then on it asks the loop to stop */
  cli_install_interrupt(multi);
  cli_interrupt_exits(1);
  run_state *r = calloc(1, sizeof *r);
  if (!r) {
    cli_err_rank("out of memory");
    return CLI_FAIL;
  }
  r->quiet = a.quiet;
  r->nranks = 1;
  r->kept_ck_step = -1;
  int rc = CLI_OK;
  output_cfg o;
  memset(&o, 0, sizeof o);
  char dir[4096];
  if (run_load_case(r, &a) ||
      run_read_output(r, &o, a.out_dir, dir, sizeof dir)) {
    /* the same on every rank, except a case file some rank cannot read */
    if (r->file_error)
      cli_err_rank("%s", r->err);
    else
      cli_err("%s", r->err);
    rc = r->case_error ? CLI_USAGE : CLI_FAIL;
    goto done;
  }
  if (cf_section_line(&r->cf, "survey")) {
    if (a.checkpoint_every > 0 || a.restart ||
        cf_int(&r->cf, "run", "checkpoint_every", 0)) {
      cli_err("%s: a survey takes no checkpoints: run it again and it goes "
              "on from the shots not yet written", r->cf.path);
      rc = CLI_USAGE;
      goto done;
    }
    rc = run_survey(r, &a, &L, multi, o.dir);
    goto done;
  }
  long ck_every = a.checkpoint_every >= 0
                      ? a.checkpoint_every
                      : cf_int(&r->cf, "run", "checkpoint_every", 0);
  if ((ck_every || a.restart) && !r->solver->checkpoints) {
    cli_err("%s: solver '%s' cannot checkpoint", r->cf.path,
            r->solver->kind);
    rc = CLI_USAGE;
    goto done;
  }
  size_t need = 0;
  if ((rc = run_start(r, &a, &L, multi, &need))) goto done;
  if (a.check_only) { /* nothing was allocated: say what would be */
    if (r->rank == 0) run_print_check(r, need);
    if (r->rank == 0 && a.restart)
      printf("  the checkpoint %s is not read (--check allocates nothing)\n",
             a.restart);
    goto done;
  }
  if (a.restart && (rc = run_restart(r, a.restart))) goto done;
  if (r->step < 0 || r->step > r->steps) { /* the steps left are >= 0 */
    cli_err("%s: the checkpoint is at step %ld, outside the case's 0..%ld",
            a.restart, r->step, r->steps);
    rc = CLI_USAGE;
    goto done;
  }
  strata_device_info di;
  if (strata_context_device_info(r->ctx, &di) != STRATA_OK)
    memset(&di, 0, sizeof di);
  double points = (double)r->n[0] * r->n[1] * r->n[2];
  const char *transport = r->dist ? strata_dist_transport(r->dist) : "none";
  if (!a.quiet && r->rank == 0)
    run_announce(r, &di, transport, need);
  if ((rc = run_agree(r, run_output_setup(r, &o) ? CLI_FAIL : 0))) goto done;
  double copy_pts = a.no_ceiling ? 0 : run_ceiling(r);
  cli_interrupt_exits(0);
  if ((rc = run_open_dir(r, o.dir))) goto done;
  if ((rc = view_start(r, &o, &a))) goto done;
  long first = r->step;
  double t_start = cli_now(), kernel_s = 0;
  int interrupted = 0;
  rc = run_steps(r, &o, &a, ck_every, points, first, &interrupted,
                 &kernel_s);
  cli_view_finish(o.view, interrupted ? "stopped" : "finished");
  if (rc) goto done;
  /* the loop's time includes writing its snapshots, as when synchronous */
  if ((rc = run_agree(r, run_drain_snapshots(r, &o) ? CLI_FAIL : 0))) goto done;
  double wall = cli_now() - t_start;
  if (o.every && r->step % o.every == 0 && r->step == r->steps) {
    char stem[64];
    snprintf(stem, sizeof stem, "snap_%06ld", r->step);
    if ((rc = run_agree(r, run_write_snapshot(r, &o, stem) ? CLI_FAIL : 0)))
      goto done;
  }
  if ((rc = run_agree(r, run_write_snapshot(r, &o, interrupted ? "interrupted"
                                                           : "final")
                             ? CLI_FAIL
                             : 0)))
    goto done;
  /* every snapshot is written before the checkpoint and the summary */
  if ((rc = run_agree(r, run_drain_snapshots(r, &o) ? CLI_FAIL : 0))) goto done;
  if (interrupted && r->solver->checkpoints &&
      (rc = run_save_checkpoint(r, o.dir)))
    goto done;
  run_totals t = {first, wall, kernel_s, copy_pts, need, interrupted, a.quiet,
                  points, di, transport};
  if ((rc = run_summary(r, &o, &t))) goto done;
  if (interrupted) rc = 130;
done:
  cli_view_destroy(&o.view);
  strata_snapshot_writer_destroy(&o.writer); /* writes what is handed over */
  strata_solver_destroy(&r->sv);
  if (r->solver && r->solver->destroy && r->impl) r->solver->destroy(r);
  if (r->dist) { /* collective: every rank arrives here together */
    r->ctx = NULL;
    strata_dist_destroy(&r->dist);
  }
  strata_context_destroy(&r->ctx);
  cf_free(&r->cf);
  free(r->interfaces);
  free(r);
  return rc;
}
