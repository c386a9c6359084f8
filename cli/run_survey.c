/* strata run on a case with a [survey] section: the wave case's solver
 * run shot after shot (strata_survey_run), the shots shared out over the
 * processes an MPI launcher started, each shot's gather written into the
 * output folder; run again, it goes on from the shots not yet written. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "wave_model.h"

/* What the survey's options point into. */
typedef struct {
  double *shots, *rec, *wavelet;
  run_wave_model model; /* [model]'s velocity and density on the grid */
} survey_bufs;

static void bufs_free(survey_bufs *b) {
  free(b->shots);
  free(b->rec);
  free(b->wavelet);
  run_wave_model_free(&b->model);
}

/* [survey] key's .npy file as doubles (*out, malloc'd), *nd axes of
 * shape sh; 0, or -1 with the case's error. */
static int read_npy_key(run_state *r, const char *key, int *nd, size_t sh[4],
                        double **out) {
  const char *path = cf_string(&r->cf, "survey", key, "");
  strata_precision p;
  void *data = NULL;
  if (strata_npy_read(r->ctx, path, &p, nd, sh, &data) != STRATA_OK)
    return run_case_fail(r, "survey", key, "%s",
                         strata_context_error(r->ctx));
  size_t n = 1;
  for (int a = 0; a < *nd; a++) n *= sh[a];
  *out = malloc((n ? n : 1) * sizeof(double));
  for (size_t k = 0; *out && k < n; k++)
    (*out)[k] = p == STRATA_F32 ? (double)((float *)data)[k]
                                : ((double *)data)[k];
  free(data);
  return *out ? 0 : run_fail(r, "out of memory");
}

/* The shots: [survey] shots, or a line / grid from start, end, count. */
static int read_shots(run_state *r, strata_survey_options *so,
                      survey_bufs *b) {
  cf_file *f = &r->cf;
  const int listed = cf_has(f, "survey", "shots") +
                     cf_has(f, "survey", "shots_file");
  const int line = cf_has(f, "survey", "start") || cf_has(f, "survey", "end") ||
                   cf_has(f, "survey", "count");
  if (listed + line != 1)
    return run_case_fail(r, "survey", listed ? "shots" : NULL,
                         "give the shots one way: a list (shots), a file "
                         "(shots_file) or a line or grid (start, end, "
                         "count)");
  if (cf_has(f, "survey", "shots_file")) {
    int nd = 0;
    size_t sh[4];
    if (read_npy_key(r, "shots_file", &nd, sh, &b->shots)) return -1;
    if (nd != 2 || sh[1] != 3 || sh[0] < 1 || sh[0] > 1000000)
      return run_case_fail(r, "survey", "shots_file", "'%s' is not of shape "
                           "(shots, 3) with 1 to 1000000 shots",
                           cf_string(f, "survey", "shots_file", ""));
    so->nshots = (int)sh[0];
  } else if (listed) {
    int n = cf_floats(f, "survey", "shots", NULL, 0);
    if (n % 3)
      return run_case_fail(r, "survey", "shots", "%d values: x, y, z of "
                           "each shot make a multiple of 3", n);
    b->shots = malloc(sizeof(double) * (size_t)n);
    if (!b->shots) return run_fail(r, "out of memory");
    cf_floats(f, "survey", "shots", b->shots, n);
    so->nshots = n / 3;
  } else {
    double s[3], e[3];
    long cnt[2] = {1, 1};
    if (!cf_has(f, "survey", "start") || !cf_has(f, "survey", "end") ||
        !cf_has(f, "survey", "count"))
      return run_case_fail(r, "survey", NULL, "a line or grid of shots "
                           "needs start, end and count");
    cf_floats(f, "survey", "start", s, 3);
    cf_floats(f, "survey", "end", e, 3);
    const int grid = cf_ints(f, "survey", "count", cnt, 2) == 2;
    if (grid && s[2] != e[2])
      return run_case_fail(r, "survey", "end", "a grid of shots lies at one "
                           "depth: start's z is %g m, end's %g m", s[2], e[2]);
    if (cnt[0] * cnt[1] > 100000)
      return run_case_fail(r, "survey", "count", "%ld shots; at most 100000",
                           cnt[0] * cnt[1]);
    so->nshots = (int)(cnt[0] * cnt[1]);
    b->shots = malloc(sizeof(double) * 3 * (size_t)so->nshots);
    if (!b->shots) return run_fail(r, "out of memory");
    for (long j = 0, q = 0; j < cnt[1]; j++)
      for (long i = 0; i < cnt[0]; i++, q++) {
        const double u = cnt[0] > 1 ? (double)i / (double)(cnt[0] - 1) : 0;
        const double v = cnt[1] > 1 ? (double)j / (double)(cnt[1] - 1) : 0;
        b->shots[3 * q] = s[0] + u * (e[0] - s[0]);
        b->shots[3 * q + 1] = grid ? s[1] + v * (e[1] - s[1])
                                   : s[1] + u * (e[1] - s[1]);
        b->shots[3 * q + 2] = grid ? s[2] : s[2] + u * (e[2] - s[2]);
      }
  }
  so->shots = b->shots;
  return 0;
}

/* The wavelet file, a 1D .npy of samples. */
static int read_wavelet(run_state *r, strata_survey_options *so,
                        survey_bufs *b) {
  cf_file *f = &r->cf;
  const char *path = cf_string(f, "survey", "wavelet_file", NULL);
  if (!path) {
    if (cf_has(f, "survey", "wavelet_dt"))
      return run_case_fail(r, "survey", "wavelet_dt", "wavelet_dt is for a "
                           "wavelet_file, and none is given");
    return 0;
  }
  if (!cf_has(f, "survey", "wavelet_dt"))
    return run_case_fail(r, "survey", "wavelet_file", "the wavelet's sample "
                         "interval is needed: set wavelet_dt (seconds)");
  int nd = 0;
  size_t sh[4];
  if (read_npy_key(r, "wavelet_file", &nd, sh, &b->wavelet)) return -1;
  if (nd != 1 || sh[0] < 1)
    return run_case_fail(r, "survey", "wavelet_file", "'%s' has %d axes; a "
                         "wavelet is one axis of samples", path, nd);
  so->wavelet = b->wavelet;
  so->wavelet_n = sh[0];
  so->wavelet_dt = cf_float(f, "survey", "wavelet_dt", 0);
  return 0;
}

/* The survey's options from the case (so->dir, rank, nranks by the caller). */
static int read_survey(run_state *r, strata_survey_options *so,
                       survey_bufs *b) {
  cf_file *f = &r->cf;
  strata_survey_options_init(so);
  if (!cf_section_line(f, "receivers"))
    return run_case_fail(r, "survey", NULL, "a survey records gathers: it "
                         "needs a [receivers] section");
  if (run_wave_options(r, &so->wave, &b->rec) ||
      run_wave_model_load(r, &so->wave, &b->model))
    return -1;
  so->velocity = b->model.v;
  so->density = b->model.rho;
  so->wave.dist = NULL; /* one process a shot, unless split (below) */
  if (read_shots(r, so, b) || read_wavelet(r, so, b)) return -1;
  so->moving = !strcmp(cf_string(f, "survey", "receivers", "fixed"), "moving");
  so->nsteps = r->steps;
  so->segy = cf_enums_has(f, "survey", "formats", "segy", "segy");
  so->npy = cf_enums_has(f, "survey", "formats", "segy", "npy");
  so->h5 = cf_enums_has(f, "survey", "formats", "segy", "h5");
  so->first_number = (int)cf_int(f, "survey", "first_number", 1);
  so->resume = cf_bool(f, "survey", "resume", 1);
  return 0;
}

/* The library's survey options' names -> the case's keys (then the wave
 * solver's). */
static void shot_where(const run_state *r, long index, const char **section,
                       const char **key) {
  *section = "survey";
  *key = cf_has(&r->cf, "survey", "shots")        ? "shots"
         : cf_has(&r->cf, "survey", "shots_file") ? "shots_file"
         : index / 3 == 0                         ? "start"
                                                  : "end";
}
static const run_optkey survey_own_keys[] = {
    {"shots", NULL, NULL, shot_where},
    {"nshots", NULL, NULL, shot_where},
    {"nsteps", "run", "steps", NULL},
    {"first_number", "survey", "first_number", NULL},
    {"dir", "output", "dir", NULL},
    {"n", "survey", "wavelet_file", NULL},
    {"samples", "survey", "wavelet_file", NULL},
    {"dt", "survey", "wavelet_dt", NULL},
    {"h5", "survey", "formats", NULL},
    {NULL, NULL, NULL, NULL}};

static int survey_fail(run_state *r, strata_status st) {
  if (run_lib_names(r, survey_own_keys))
    return run_lib_fail(r, st, survey_own_keys, "survey");
  return run_lib_fail(r, st, run_wave_keys, "wave");
}

typedef struct {
  run_state *r;
  int split; /* every shot over all the ranks: rank 0 reports */
} shot_report;

static int on_shot(void *user, int shot, int skipped, double seconds) {
  const shot_report *p = user;
  if (!p->r->quiet && (!p->split || p->r->rank == 0)) {
    if (p->r->nranks > 1 && !p->split)
      printf("rank %d: ", p->r->rank);
    if (skipped)
      printf("shot %d: already written\n", shot);
    else
      printf("shot %d: %.2f s\n", shot, seconds);
    fflush(stdout);
  }
  return cli_interrupted();
}

/* Rank 0's closing lines: what every rank did, and the rate. */
static int survey_summary(run_state *r, const strata_survey_options *so,
                          const strata_survey_result *res, double wall) {
  double v[4] = {res->run, res->skipped, res->stopped, 0};
  double m[2] = {wall, res->setup_seconds};
  /* shared out, the ranks' counts add up; split, each rank ran them all */
  const int op = so->wave.dist ? 1 : 0;
  if (r->dist && (strata_dist_allreduce(r->dist, v, 4, op) != STRATA_OK ||
                  strata_dist_allreduce(r->dist, m, 2, 1) != STRATA_OK))
    return run_fail(r, "the ranks could not agree: %s",
                    strata_context_error(r->ctx));
  if (r->rank != 0 || r->quiet) return 0;
  printf("survey: %d shots into %s: %.0f run, %.0f already written%s; "
         "%.2f s on %d process%s%s (setup %.2f s)", so->nshots, so->dir,
         v[0], v[1], v[2] > 0 ? ", stopped" : "", m[0], r->nranks,
         r->nranks > 1 ? "es" : "",
         so->wave.dist ? ", each shot split over them" : "", m[1]);
  if (v[0] > 0 && m[0] > 0) printf(", %.1f shots per hour", v[0] * 3600 / m[0]);
  printf("\n");
  return 0;
}

int run_survey(run_state *r, const run_args *a, const cli_launch *L,
               int multi, const char *dir) {
  int rc = run_open(r, a, L, multi);
  if (rc) return rc;
  strata_survey_options so;
  survey_bufs b = {NULL, NULL, NULL, {NULL, NULL}};
  int prc = read_survey(r, &so, &b) ? (r->case_error ? CLI_USAGE : CLI_FAIL)
                                    : 0;
  if ((rc = run_agree(r, prc))) goto out;
  so.dir = dir;
  const int split = r->dist && cf_bool(&r->cf, "survey", "split", 0);
  so.rank = split ? 0 : r->rank;
  so.nranks = split ? 1 : r->nranks;
  if (split) so.wave.dist = r->dist;
  if (a->check_only) { /* the library's checks, nothing run or written */
    so.check_only = 1;
    strata_survey_result res;
    strata_status st = strata_survey_run(r->ctx, &so, &res);
    int crc = st == STRATA_OK ? 0
              : (survey_fail(r, st), r->case_error ? CLI_USAGE : CLI_FAIL);
    double v = res.to_run;
    if (!crc && r->dist) strata_dist_allreduce(r->dist, &v, 1, split);
    if (!(rc = run_agree(r, crc)) && r->rank == 0)
      printf("%s: ok (survey of %d shots, %.0f to run, %d receivers each, "
             "%ld steps, over %d process%s; %s memory %zu bytes = %.1f MiB "
             "per process)\n", r->cf.path, so.nshots, v, so.wave.nreceivers,
             so.nsteps, r->nranks, r->nranks > 1 ? "es" : "",
             strata_backend_name(strata_context_backend(r->ctx)),
             res.device_bytes, res.device_bytes / 1048576.0);
    goto out;
  }
  cli_interrupt_exits(0);
  if ((rc = run_open_dir(r, dir))) goto out;
  shot_report rep = {r, split};
  so.on_shot = on_shot;
  so.user = &rep;
  strata_survey_result res;
  const double t0 = cli_now();
  strata_status st = strata_survey_run(r->ctx, &so, &res);
  const double wall = cli_now() - t0;
  int src = 0;
  if (st != STRATA_OK)
    src = survey_fail(r, st) ? (r->case_error ? CLI_USAGE : CLI_FAIL) : 0;
  if ((rc = run_agree(r, src))) goto out;
  if (survey_summary(r, &so, &res, wall)) rc = run_agree(r, CLI_FAIL);
  if (!rc && cli_interrupted()) rc = 130;
out:
  bufs_free(&b);
  return rc;
}
