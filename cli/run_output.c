/* strata run's output: snapshots through the library's writer,
 * checkpoints, receiver traces, the movie and the summary. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "run.h"

int run_make_dir(const char *dir) {
  if (mkdir(dir, 0755) == 0 || errno == EEXIST) {
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    errno = ENOTDIR;
  }
  return -1;
}

/* The units of a solver kind's space and time: metres and seconds for
 * the wave solver; FDTD works in grid units (h = 1, c = 1, time in h/c);
 * the others have a spacing but no time step of their own.  NULL: none. */
void run_units(const run_state *r, const char **len, const char **time) {
  *len = *time = NULL;
  if (!strcmp(r->solver->kind, "wave")) {
    *len = "m";
    *time = "s";
  } else if (!strcmp(r->solver->kind, "fdtd")) {
    *time = "h/c";
  }
}

void run_snapshot_title(run_state *r, char *b, size_t n) {
  const char *len, *time;
  run_units(r, &len, &time);
  strata_solver_info si;
  int k = snprintf(b, n, "%.64s  %s %ld", r->name,
                   strcmp(r->solver->kind, "poisson") ? "step" : "cycle",
                   r->step);
  if (k > 0 && (size_t)k < n && time &&
      strata_solver_get_info(r->sv, &si) == STRATA_OK)
    snprintf(b + k, n - (size_t)k, ", t = %.4g %s", si.time, time);
}

/* A snapshot: the solver's field staged once into a host copy of the
 * writer (over several processes, gathered into it: collective, rank 0
 * writes), which writes every format from it, in the background when
 * asynchronous.  A write that failed since the last hand-off fails this
 * one, with that write's message. */
int run_blew_up(run_state *r, const char *dir, const char *msg) {
  char m[1024], kept[1024];
  snprintf(m, sizeof m, "%s", msg);
  if (r->kept_snap[0] && r->kept_ck_step >= 0)
    snprintf(kept, sizeof kept, "kept the last good snapshot %s/%s (step "
             "%ld) and checkpoint %s/checkpoint.stck (step %ld)", dir,
             r->kept_snap, r->kept_snap_step, dir, r->kept_ck_step);
  else if (r->kept_snap[0])
    snprintf(kept, sizeof kept, "kept the last good snapshot %s/%s (step "
             "%ld); no checkpoint was written", dir, r->kept_snap,
             r->kept_snap_step);
  else if (r->kept_ck_step >= 0)
    snprintf(kept, sizeof kept, "kept the last good checkpoint "
             "%s/checkpoint.stck (step %ld); no snapshot was written", dir,
             r->kept_ck_step);
  else
    snprintf(kept, sizeof kept, "no snapshot or checkpoint was written "
             "(set [output] every or --checkpoint-every to keep earlier "
             "states)");
  return run_fail(r, "the run blew up: %s; %s", m, kept);
}

int run_check_state(run_state *r, const char *dir) {
  strata_status s = strata_solver_check(r->sv);
  if (s == STRATA_OK) return 0;
  if (s == STRATA_ENONFINITE)
    return run_blew_up(r, dir, strata_context_error(r->ctx));
  return run_fail(r, "%s", strata_context_error(r->ctx));
}

/* Writes the checkpoint of r->step into dir: checkpoint.stck for one
 * process; over several, every rank its own part (rank r > 0 as
 * checkpoint.stck.rank<r>), renamed into place only once every rank's
 * part is written (strata_solver_save).  Returns 0 or an exit code (over
 * several processes the same on every rank), the message printed. */
int run_save_checkpoint(run_state *r, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/checkpoint.stck", dir);
  int rc = run_check_state(r, dir) ? CLI_FAIL
           : strata_solver_save(r->sv, path) == STRATA_OK
               ? 0
               : (run_fail(r, "%s", strata_context_error(r->ctx)), CLI_FAIL);
  if (!rc) r->kept_ck_step = r->step;
  return run_agree(r, rc);
}

/* Loads the checkpoint path (over several processes every rank its part)
 * into the solver.  Returns 0 or an exit code (130 when Ctrl-C stopped the
 * reading), the same on every rank, the message printed. */
int run_load_checkpoint(run_state *r, const char *path) {
  strata_status st = strata_solver_load(r->sv, path);
  int rc = st == STRATA_OK ? 0
                           : (run_fail(r, "%s", strata_context_error(r->ctx)),
                              st == STRATA_EINTERRUPTED ? 130 : CLI_USAGE);
  if ((rc = run_agree(r, rc))) return rc;
  strata_solver_info i;
  strata_solver_get_info(r->sv, &i);
  r->step = i.steps;
  return 0;
}

/* Over several processes with parallel HDF5 the .h5 snapshots are written
 * by every rank, each its own planes (strata_solver_save_h5), not by rank
 * 0's writer. */
static int h5_by_ranks(const run_state *r, const output_cfg *o) {
  return r->dist && o->h5 && strata_h5_parallel();
}

int run_write_snapshot(run_state *r, output_cfg *o, const char *stem) {
  if (run_check_state(r, o->dir)) return -1;
  snprintf(r->kept_snap, sizeof r->kept_snap, "%s.*", stem);
  r->kept_snap_step = r->step;
  if (h5_by_ranks(r, o)) { /* collective */
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.h5", o->dir, stem);
    double t0 = cli_now();
    strata_status s = strata_solver_save_h5(r->sv, 0, path,
                                            r->solver->field_name, r->h);
    o->write_s += cli_now() - t0;
    if (s != STRATA_OK) {
      r->kept_snap[0] = 0;
      return run_fail(r, "%s", strata_context_error(r->ctx));
    }
    if (!o->npy && !o->vti && !o->png) return 0;
  }
  if (r->dist && r->rank != 0) /* collective: send this rank's planes */
    return strata_solver_read(r->sv, 0, NULL) == STRATA_OK
               ? 0
               : run_fail(r, "%s", strata_context_error(r->ctx));
  double t0 = cli_now();
  void *buf = strata_snapshot_acquire(o->writer);
  int rc = 0;
  char title[160];
  if (strata_solver_read(r->sv, 0, buf) != STRATA_OK) {
    strata_snapshot_release(o->writer, buf);
    rc = run_fail(r, "snapshot %s: %s", stem, strata_context_error(r->ctx));
  } else if (run_snapshot_title(r, title, sizeof title),
             strata_snapshot_submit_titled(o->writer, buf, stem, title) !=
                 STRATA_OK) {
    rc = run_fail(r, "%s", strata_context_error(r->ctx));
  }
  o->write_s += cli_now() - t0;
  if (rc) r->kept_snap[0] = 0;
  return rc;
}

/* Waits until the writer has written every snapshot handed to it: 0, or
 * -1 with the first failed write's message in r->err. */
int run_drain_snapshots(run_state *r, output_cfg *o) {
  if (!o->writer) return 0;
  double t0 = cli_now();
  strata_status s = strata_snapshot_flush(o->writer);
  o->write_s += cli_now() - t0;
  return s == STRATA_OK ? 0
                        : run_fail(r, "%s", strata_context_error(r->ctx));
}

void run_traces_png_options(run_state *r, const output_cfg *o,
                            const strata_traces *t, strata_png_options *po,
                            char *title, size_t tn) {
  const double *buf = t->data;
  *po = o->po;
  po->cmap = STRATA_CMAP_SEISMIC;
  po->lo = po->hi = 0;
  po->flip = 0;
  po->scale = 0;
  /* clip at a tenth of the peak so later, weaker arrivals show */
  double mx = 0;
  for (size_t i = 0; i < t->ntraces * t->nsamples; i++)
    if (fabs(buf[i]) > mx) mx = fabs(buf[i]);
  snprintf(title, tn, "%.64s  traces", r->name);
  if (mx > 0) {
    po->lo = -0.1 * mx;
    po->hi = 0.1 * mx;
    const char *u = strata_solver_field_unit(r->sv, 0);
    snprintf(title, tn, "%.64s  traces, clipped at 10%% of the peak "
             "%.3g%s%s", r->name, mx, u && *u ? " " : "", u ? u : "");
  }
  po->title = title;
  po->value_name = r->solver->field_name;
  po->value_unit = strata_solver_field_unit(r->sv, 0);
  po->lines = r->interfaces;
}

/* Over several processes with parallel HDF5, traces.h5 is written by
 * every rank, each the rows of the receivers it samples
 * (strata_solver_save_traces_h5); the other formats of the traces gather
 * them on rank 0. */
static int traces_h5_by_ranks(const run_state *r, const output_cfg *o) {
  return r->dist && o->trace_h5 && strata_h5_parallel() &&
         !strcmp(r->solver->kind, "wave") &&
         cf_section_line(&r->cf, "receivers");
}

/* traces.h5 written by the ranks (collective): 0, or -1 with the message;
 * *done = 1 when no other format of the traces is wanted, the summary's
 * entry then written here from the solver's description. */
static int write_traces_h5_by_ranks(run_state *r, output_cfg *o, FILE *json,
                                    int *done) {
  char path[4096];
  snprintf(path, sizeof path, "%s/traces.h5", o->dir);
  if (strata_solver_save_traces_h5(r->sv, path) != STRATA_OK)
    return run_fail(r, "cannot write %s: %s", path,
                    strata_context_error(r->ctx));
  *done = !o->trace_npy && !o->trace_segy && !o->trace_png;
  strata_wave_info wi;
  if (!*done || r->rank != 0 ||
      strata_wave_get_info(strata_solver_wave(r->sv), &wi) != STRATA_OK)
    return 0;
  long every = cf_int(&r->cf, "receivers", "every", 1);
  fprintf(json, "  \"traces\": {\"receivers\": %ld, \"samples\": %zu, "
          "\"dt\": %.9g, \"h5_writers\": %d},\n",
          cf_int(&r->cf, "receivers", "count", 1), wi.nsamples,
          wi.dt * (double)(every > 0 ? every : 1), r->nranks);
  return 0;
}

static int write_traces(run_state *r, output_cfg *o, FILE *json) {
  const int by_ranks = traces_h5_by_ranks(r, o);
  int done = 0;
  if (by_ranks && (write_traces_h5_by_ranks(r, o, json, &done) || done))
    return done ? 0 : -1;
  strata_traces t;
  /* collective over several processes: rank 0 receives the traces */
  if (strata_solver_traces(r->sv, &t) != STRATA_OK)
    return run_fail(r, "traces: %s", strata_context_error(r->ctx));
  if (t.ntraces == 0 || t.nsamples == 0) return 0; /* none, or not rank 0 */
  char path[4096];
  strata_status s = STRATA_OK;
  fprintf(json, "  \"traces\": {\"receivers\": %zu, \"samples\": %zu, "
          "\"dt\": %.9g", t.ntraces, t.nsamples, t.dt);
  if (o->trace_h5) /* who wrote traces.h5: every rank its rows, or rank 0 */
    fprintf(json, ", \"h5_writers\": %d", by_ranks ? r->nranks : 1);
  if (o->trace_npy) {
    snprintf(path, sizeof path, "%s/traces.npy", o->dir);
    s = strata_traces_save_npy(r->ctx, path, &t);
  }
  if (o->trace_segy && s == STRATA_OK) {
    snprintf(path, sizeof path, "%s/traces.sgy", o->dir);
    s = strata_segy_write(r->ctx, path, &t);
    if (s == STRATA_EINVAL) { /* a sampling SEG-Y cannot hold: say so */
      fprintf(stderr, "strata: traces.sgy not written: %s\n",
              strata_context_error(r->ctx));
      fprintf(json, ", \"segy\": \"not written: sampling out of range\"");
      s = STRATA_OK;
    }
  }
  if (o->trace_h5 && !by_ranks && s == STRATA_OK) {
    snprintf(path, sizeof path, "%s/traces.h5", o->dir);
    s = strata_traces_save_h5(r->ctx, path, &t);
  }
  if (o->trace_png && s == STRATA_OK) {
    strata_png_options po;
    char title[160];
    run_traces_png_options(r, o, &t, &po, title, sizeof title);
    snprintf(path, sizeof path, "%s/traces.png", o->dir);
    s = strata_traces_save_png(r->ctx, path, &t, &po);
  }
  fprintf(json, "},\n");
  if (s != STRATA_OK)
    return run_fail(r, "cannot write %s: %s", path,
                    strata_context_error(r->ctx));
  return 0;
}

/* MP4 through ffmpeg when it is installed; otherwise the frames stay. */
static void make_movie(run_state *r, output_cfg *o, FILE *json, int quiet) {
  char cmd[8192];
  if (system("command -v ffmpeg >/dev/null 2>&1") != 0) {
    if (!quiet)
      fprintf(stderr, "strata: ffmpeg not found: the movie is the numbered "
              "frames %s/snap_*.png\n", o->dir);
    fprintf(json, "  \"movie\": \"frames: snap_*.png (no ffmpeg)\",\n");
    return;
  }
  snprintf(cmd, sizeof cmd,
           "ffmpeg -loglevel error -y -framerate %d -pattern_type glob -i "
           "'%s/snap_*.png' -vf 'pad=ceil(iw/2)*2:ceil(ih/2)*2' -pix_fmt "
           "yuv420p '%s/movie.tmp.mp4' </dev/null && mv '%s/movie.tmp.mp4' "
           "'%s/movie.mp4'",
           o->fps, o->dir, o->dir, o->dir, o->dir);
  int rc = strchr(o->dir, '\'') ? -1 : system(cmd);
  if (rc != 0) {
    fprintf(stderr, "strata: ffmpeg failed; the frames stay as "
            "%s/snap_*.png\n", o->dir);
    fprintf(json, "  \"movie\": \"ffmpeg failed; frames: snap_*.png\",\n");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/movie.tmp.mp4", o->dir);
    remove(tmp);
  } else {
    fprintf(json, "  \"movie\": \"movie.mp4\",\n");
  }
  (void)r;
}

void run_png_options(run_state *r, const output_cfg *o,
                     strata_png_options *po) {
  *po = o->po;
  /* axes in the case's spacing (metres for the wave solver, whose z is
   * depth), the values' name and unit over the colour bar */
  const char *len, *time;
  run_units(r, &len, &time);
  for (int a = 0; a < 3; a++) {
    po->coord[a].unit = len;
    po->coord[a].step = r->h;
  }
  if (len && r->dims == 3) po->coord[2].name = "depth z";
  po->value_name = r->solver->field_name;
  po->value_unit = strata_solver_field_unit(r->sv, 0);
  po->lines = r->interfaces;
}

/* Rank 0's snapshot writer (the library's): in the background when the
 * loop writes snapshots ([output] every), unless [output] async = false
 * or its memory cannot be had (then after a one-line notice); otherwise
 * writing at each hand-over.  0, or -1 with r->err. */
int run_output_setup(run_state *r, output_cfg *o) {
  if (r->rank != 0) return 0;
  strata_snapshot_options so;
  strata_snapshot_options_init(&so);
  so.dir = o->dir;
  so.npy = o->npy;
  so.vti = o->vti;
  so.png = o->png;
  so.h5 = o->h5 && !h5_by_ranks(r, o);
  if (!so.npy && !so.vti && !so.png && !so.h5) return 0; /* no writer */
  run_png_options(r, o, &so.png_options);
  so.spacing = r->h;
  so.field_name = r->solver->field_name;
  /* the final state alone has nothing to overlap with */
  so.async = o->async && o->every > 0;
  /* the whole grid, gathered over several processes */
  strata_field_desc d = {r->dims, {r->n[0], r->n[1], r->n[2]}, 1,
                         r->precision};
  if (strata_snapshot_writer_create(r->ctx, &d, &so, &o->writer) ==
      STRATA_OK) {
    o->in_background = so.async;
    return 0;
  }
  if (!so.async)
    return run_fail(r, "snapshots: %s", strata_context_error(r->ctx));
  if (!r->quiet)
    fprintf(stderr, "strata: snapshots are written synchronously: %s\n",
            strata_context_error(r->ctx));
  so.async = 0;
  if (strata_snapshot_writer_create(r->ctx, &d, &so, &o->writer) ==
      STRATA_OK)
    return 0;
  return run_fail(r, "snapshots: %s", strata_context_error(r->ctx));
}

static int by_step(const void *a, const void *b) {
  const long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Rank 0: the time series of the snapshots in the folder with extension
 * ext (snap_NNNNNN.EXT, also those of the run before a restart, and the
 * final or interrupted state when it is a later step), at step x dt, as
 * ParaView opens it: snapshots.pvd for "vti", snapshots.xmf (XDMF) for
 * "h5". */
static void write_series(run_state *r, output_cfg *o, FILE *json, double dt,
                         const char *ext) {
  DIR *d = opendir(o->dir);
  if (!d) return;
  size_t cap = 64, n = 0;
  long *steps = malloc(cap * sizeof *steps);
  struct dirent *e;
  char pat[32];
  snprintf(pat, sizeof pat, "snap_%%ld.%s%%n", ext);
  while (steps && (e = readdir(d))) {
    long k = -1;
    int end = 0;
    if (sscanf(e->d_name, pat, &k, &end) != 1 || k < 0 || end == 0 ||
        e->d_name[end] != 0 || k > r->step)
      continue; /* not a snapshot, or one of an earlier, longer run */
    if (n == cap) {
      long *m = realloc(steps, 2 * cap * sizeof *steps);
      if (!m) break;
      steps = m;
      cap *= 2;
    }
    steps[n++] = k;
  }
  closedir(d);
  if (!steps) return;
  qsort(steps, n, sizeof *steps, by_step);
  char **names = calloc(n + 1, sizeof *names);
  double *times = malloc((n + 1) * sizeof *times);
  int m = 0;
  for (size_t i = 0; names && times && i < n; i++) {
    names[m] = malloc(40);
    if (!names[m]) break;
    snprintf(names[m], 40, "snap_%06ld.%s", steps[i], ext);
    times[m++] = (double)steps[i] * dt;
  }
  char last[32], p[4096];
  snprintf(last, sizeof last, "%s.%s",
           cli_interrupted() ? "interrupted" : "final", ext);
  snprintf(p, sizeof p, "%s/%s", o->dir, last);
  struct stat st;
  if (names && times && (m == 0 || steps[m - 1] < r->step) &&
      stat(p, &st) == 0 && (names[m] = strdup(last)))
    times[m++] = (double)r->step * dt;
  const int xmf = !strcmp(ext, "h5");
  snprintf(p, sizeof p, "%s/snapshots.%s", o->dir, xmf ? "xmf" : "pvd");
  strata_status s = STRATA_OK;
  if (m > 0 && xmf) {
    strata_xdmf_grid g = {r->dims, {r->n[0], r->n[1], r->n[2]}, r->h,
                          r->precision, r->solver->field_name};
    s = strata_xdmf_write(r->ctx, p, m, (const char *const *)names, times,
                          &g);
  } else if (m > 0) {
    s = strata_pvd_write(r->ctx, p, m, (const char *const *)names, times);
  }
  if (m > 0 && s == STRATA_OK)
    fprintf(json, "  \"%s\": \"snapshots.%s\",\n", xmf ? "xdmf" : "pvd",
            xmf ? "xmf" : "pvd");
  else if (m > 0)
    fprintf(stderr, "strata: %s not written: %s\n", p,
            strata_context_error(r->ctx));
  for (int i = 0; names && i < m; i++) free(names[i]);
  free(names);
  free(times);
  free(steps);
}

/* The summary (every rank builds it; rank 0 writes summary.json and the
 * traces and prints the last line).  Returns 0 or an exit code, the same on
 * every rank, the message printed. */
int run_summary(run_state *r, output_cfg *o, const run_totals *t) {
  int rc = 0;
  char *json_buf = NULL;
  size_t json_len = 0;
  FILE *json = open_memstream(&json_buf, &json_len);
  if ((rc = run_agree(r, json ? 0 : (run_fail(r, "out of memory"), CLI_FAIL))))
    return rc;
  long done_steps = r->step - t->first;
  double gpts =
      t->kernel_s > 0 ? done_steps * t->points / t->kernel_s * 1e-9 : 0;
  strata_solver_info si;
  strata_solver_get_info(r->sv, &si);
  double bpp = si.bytes_per_point_step;
  /* the copy ceiling, and whether it can be believed */
  double copy_gbs = t->copy_pts * 2 * (double)r->precision * 1e-9;
  char warn[512] = "";
  int suspect = t->copy_pts > 0 && strata_bench_ceiling_suspect(
      copy_gbs, gpts * bpp / copy_gbs, "the run", bpp,
      strata_context_backend(r->ctx) == STRATA_BACKEND_CPU, warn,
      sizeof warn);
  fprintf(json, "{\n  \"case\": ");
  json_string(json, cf_string(&r->cf, "case", "name", r->name));
  fprintf(json, ",\n  \"case_file\": ");
  json_string(json, r->cf.path);
  fprintf(json, ",\n  \"description\": ");
  json_string(json, cf_string(&r->cf, "case", "description", ""));
  fprintf(json, ",\n  \"solver\": \"%s\",\n  \"backend\": \"%s\",\n"
          "  \"device\": ", r->solver->kind,
          strata_backend_name(strata_context_backend(r->ctx)));
  json_string(json, t->di.name);
  fprintf(json, ",\n  \"ranks\": %d,\n  \"transport\": \"%s\"", r->nranks,
          t->transport);
  /* the decomposition of the solver's first field: ranks along y of a
   * y-z split (1: slabs) */
  strata_field_window win;
  if (r->dist && r->sv &&
      strata_field_get_window(strata_solver_field(r->sv, 0), &win) ==
          STRATA_OK)
    fprintf(json, ",\n  \"ranks_y\": %d", win.ranks_y);
  fprintf(json, ",\n  \"strata\": \"%s\",\n  \"build\": ", strata_version());
  json_string(json, strata_build_info());
  fprintf(json, ",\n  \"dims\": %d,\n  \"n\": [%zu, %zu, %zu],\n"
          "  \"spacing\": %.17g,\n  \"precision\": \"%s\",\n"
          "  \"steps\": %ld,\n  \"steps_done\": %ld,\n  \"first_step\": %ld,\n"
          "  \"interrupted\": %s,\n  \"wall_s\": %.6f,\n"
          "  \"kernel_s\": %.6f,\n"
          "  \"output_s\": %.6f,\n  \"output_writer_s\": %.6f,\n"
          "  \"output_async\": %s,\n  \"gpts_per_s\": %.6f,\n"
          "  \"bytes_per_point_step\": %.3f,\n  \"gb_per_s\": %.6f,\n",
          r->dims, r->n[0], r->n[1], r->n[2], r->h,
          r->precision == STRATA_F32 ? "f32" : "f64", r->steps, r->step,
          t->first,
          t->interrupted ? "true" : "false", t->wall, t->kernel_s, o->write_s,
          o->writer ? strata_snapshot_busy_seconds(o->writer) : 0.0,
          o->in_background ? "true" : "false",
          gpts, bpp, gpts * bpp);
  if (t->copy_pts > 0)
    fprintf(json, "  \"copy_gb_per_s\": %.6f,\n  \"percent_of_copy\": %.3f,\n",
            copy_gbs, 100 * gpts * bpp / copy_gbs);
  else
    fprintf(json, "  \"copy_gb_per_s\": null,\n  \"percent_of_copy\": null,\n");
  fprintf(json, "  \"copy_warning\": ");
  if (suspect)
    json_string(json, warn);
  else
    fprintf(json, "null");
  fprintf(json, ",\n");
  fprintf(json, "  \"memory_bytes\": %zu,\n  \"device_memory_bytes\": %zu,\n",
          t->need, t->di.memory_bytes);
  if (r->solver->describe) r->solver->describe(r, json);
  if ((rc = run_agree(r, write_traces(r, o, json) ? CLI_FAIL : 0))) {
    fclose(json);
    free(json_buf);
    return rc;
  }
  if (o->movie && !t->interrupted && r->rank == 0)
    make_movie(r, o, json, t->quiet);
  if (o->vti && r->rank == 0) write_series(r, o, json, si.dt, "vti");
  if (o->h5 && r->rank == 0) {
    write_series(r, o, json, si.dt, "h5");
    /* who wrote the .h5 snapshots: every rank its part, or rank 0 */
    fprintf(json, "  \"h5_writers\": %d,\n", h5_by_ranks(r, o) ? r->nranks
                                                                  : 1);
  }
  fprintf(json, "  \"output_dir\": ");
  json_string(json, o->dir);
  fprintf(json, "\n}\n");
  fclose(json);
  json = NULL;
  int src = 0;
  if (r->rank == 0) {
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/summary.json", o->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *fp = fopen(tmp, "wb");
    if (!fp || fwrite(json_buf, 1, json_len, fp) != json_len ||
        fclose(fp) != 0 || rename(tmp, path) != 0) {
      run_fail(r, "cannot write %s: %s", path, strerror(errno));
      remove(tmp);
      src = CLI_FAIL;
    }
  }
  free(json_buf);
  if ((rc = run_agree(r, src))) return rc;
  if (!t->quiet && r->rank == 0) {
    fprintf(stderr, "strata: %s %ld steps in %.2f s (kernels %.2f s): %.3f "
            "Gpts/s, %.1f GB/s",
            t->interrupted ? "interrupted after" : "done:",
            done_steps, t->wall, t->kernel_s, gpts, gpts * bpp);
    if (t->copy_pts > 0)
      fprintf(stderr, " (%.0f%% of the copy ceiling, %.1f GB/s)",
              100 * gpts * bpp / copy_gbs, copy_gbs);
    fprintf(stderr, "; output in %s/\n", o->dir);
    if (suspect) fprintf(stderr, "strata: warning: %s\n", warn);
  }
  return 0;
}
