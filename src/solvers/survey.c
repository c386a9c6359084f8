/* Surveys: the shots of one process's share run one after another on one
 * wave solver (reset, source and receivers moved between shots), each
 * shot's gather written whole through the library's writers, and a record
 * of the survey's fingerprint beside them so that a survey run again goes
 * on from the shots not yet written, and never mixes its gathers with
 * another survey's. */
#define _POSIX_C_SOURCE 200809L
#include "wave_internal.h"
#include "../io/io_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void strata_survey_options_init(strata_survey_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  strata_wave_options_init(&o->wave);
  o->stem = "shot";
  o->segy = 1;
  o->first_number = 1;
  o->nranks = 1;
  o->resume = 1;
}

static const char *stem_of(const strata_survey_options *o) {
  return o->stem && *o->stem ? o->stem : "shot";
}

int strata_survey_shot_path(const strata_survey_options *o, int s,
                            const char *ext, char *buf, size_t size) {
  if (!o || !ext) return -1;
  return snprintf(buf, size, "%s/%s_%04d.%s", o->dir ? o->dir : ".",
                  stem_of(o), o->first_number + s, ext);
}

/* ---- the fingerprint: FNV-1a over what shapes the gathers -------------- */

static void mix(uint64_t *h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 1099511628211ull;
}
static void mixd(uint64_t *h, double v) { mix(h, &v, sizeof v); }
static void mixl(uint64_t *h, long v) { mix(h, &v, sizeof v); }

static uint64_t fingerprint(const strata_survey_options *o) {
  uint64_t h = 14695981039346656037ull;
  const strata_wave_options *w = &o->wave;
  for (int a = 0; a < 3; a++) mixl(&h, (long)w->n[a]);
  mixd(&h, w->h);
  mixd(&h, w->dt);
  mixl(&h, w->precision);
  mixl(&h, w->order);
  mixd(&h, w->velocity);
  mixl(&h, w->nlayers);
  for (int m = 0; m < w->nlayers; m++) {
    mixd(&h, w->layer_top[m]);
    mixd(&h, w->layer_velocity[m]);
  }
  for (int f = 0; f < 6; f++) mixl(&h, w->face[f]);
  mixl(&h, w->absorb_width);
  mixd(&h, w->absorb_reflection);
  mixd(&h, w->f0);
  mixd(&h, w->amplitude);
  mixd(&h, w->delay);
  mixl(&h, w->nreceivers);
  if (w->nreceivers > 0)
    mix(&h, w->receivers, 3 * sizeof(double) * (size_t)w->nreceivers);
  mixl(&h, w->record_every);
  if (o->velocity)
    mix(&h, o->velocity, sizeof(double) * w->n[0] * w->n[1] * w->n[2]);
  if (o->density)
    mix(&h, o->density, sizeof(double) * w->n[0] * w->n[1] * w->n[2]);
  for (int m = 0; m < w->nlayers && w->layer_density; m++)
    mixd(&h, w->layer_density[m]);
  mixl(&h, o->nshots);
  mix(&h, o->shots, 3 * sizeof(double) * (size_t)o->nshots);
  mixl(&h, o->moving);
  mixl(&h, (long)o->wavelet_n);
  if (o->wavelet) {
    mix(&h, o->wavelet, o->wavelet_n * sizeof(double));
    mixd(&h, o->wavelet_dt);
  }
  mixl(&h, o->nsteps);
  mixl(&h, o->first_number);
  mixl(&h, o->segy);
  mixl(&h, o->npy);
  if (o->h5) mixl(&h, o->h5); /* the fingerprints of earlier surveys hold */
  return h;
}

/* The process that writes: every one when the shots are shared out, rank
 * 0 of wave.dist when each shot is split over its ranks. */
static int writer(const strata_survey_options *o) {
  return !o->wave.dist || strata__dist_rank(o->wave.dist) == 0;
}

/* With wave.dist, the ranks' flags agreed: the least (all = 0) or the
 * greatest (all = 1) over them, so that every rank takes the same path. */
static int agree_flag(const strata_survey_options *o, int v, int all) {
  if (!o->wave.dist) return v;
  double d = v;
  if (strata_dist_allreduce(o->wave.dist, &d, 1, all ? 2 : 1) != STRATA_OK)
    return v;
  return d > 0;
}

/* ---- checks ------------------------------------------------------------- */

static int inside(const strata_wave_options *w, int a, double x) {
  const double ext = (double)(w->n[a] - 1) * w->h;
  return x >= 0 && x <= ext * (1 + 1e-12);
}

static strata_status check_options(strata_context *ctx,
                                   const strata_survey_options *o) {
  char nm[STRATA__ARGNAME_SIZE];
  if (o->wave.dist && (o->rank != 0 || o->nranks != 1))
    return strata__fail_arg(ctx, STRATA_EINVAL, "nranks", o->nranks,
                            "survey: with wave.dist every shot runs over "
                            "all of its ranks: rank and nranks must be 0 "
                            "and 1 (sharing the shots out is the other "
                            "way)");
  if (o->nshots < 1 || !o->shots)
    return strata__fail_arg(ctx, STRATA_EINVAL, "nshots", o->nshots,
                            "survey: %d shots%s; it needs at least one",
                            o->nshots, o->shots ? "" : " (shots NULL)");
  if (o->nsteps < 1)
    return strata__fail_arg(ctx, STRATA_EINVAL, "nsteps", o->nsteps,
                            "survey: nsteps is %ld; it must be >= 1",
                            o->nsteps);
  if (o->nranks < 1 || o->rank < 0 || o->rank >= o->nranks)
    return strata__fail_arg(ctx, STRATA_EINVAL, "rank", o->rank,
                            "survey: rank %d of %d processes; it must be in "
                            "0..nranks-1", o->rank, o->nranks);
  if (!o->segy && !o->npy && !o->h5)
    return strata__fail_arg(ctx, STRATA_EINVAL, "segy", o->segy,
                            "survey: no format asked for (segy, npy, h5)");
  if (o->h5 && !strata_h5_available())
    return strata__fail_arg(ctx, STRATA_ENOTSUP, "h5", o->h5, "survey: "
                            "this strata was built without HDF5 (install "
                            "libhdf5-dev and build again)");
  if (o->wave.nreceivers < 1)
    return strata__fail_arg(ctx, STRATA_EINVAL, "nreceivers",
                            o->wave.nreceivers, "survey: %d receivers; a "
                            "gather needs at least one",
                            o->wave.nreceivers);
  if (!o->dir || !*o->dir)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "dir", o->dir,
                              "survey: no output folder");
  if (o->first_number < 0 || o->first_number > 99999999 - o->nshots)
    return strata__fail_arg(ctx, STRATA_EINVAL, "first_number",
                            o->first_number, "survey: the first shot's "
                            "number %d is outside 0..%d", o->first_number,
                            99999999 - o->nshots);
  for (int s = 0; s < o->nshots; s++)
    for (int a = 0; a < 3; a++) {
      const double x = o->shots[3 * s + a];
      if (!inside(&o->wave, a, x))
        return strata__fail_arg(ctx, STRATA_EINVAL,
                                strata__idx(nm, "shots", 3L * s + a), x,
                                "survey: shot %d's source %c = %g m is "
                                "outside the grid [0, %g] m", s + 1,
                                "xyz"[a], x,
                                (double)(o->wave.n[a] - 1) * o->wave.h);
      for (int r = 0; o->moving && a < 2 && r < o->wave.nreceivers; r++) {
        const double y = x + o->wave.receivers[3 * r + a];
        if (!inside(&o->wave, a, y))
          return strata__fail_arg(ctx, STRATA_EINVAL,
                                  strata__idx(nm, "receivers", 3L * r + a),
                                  o->wave.receivers[3 * r + a],
                                  "survey: shot %d's receiver %d lies at "
                                  "%c = %g m, outside the grid [0, %g] m "
                                  "(the receivers move with the source)",
                                  s + 1, r, "xyz"[a], y,
                                  (double)(o->wave.n[a] - 1) * o->wave.h);
      }
    }
  return STRATA_OK;
}

/* ---- the record --------------------------------------------------------- */

/* *found = 1 and *fp the fingerprint when DIR/STEM.survey is there. */
static strata_status read_record(strata_context *ctx, const char *path,
                                 int *found, unsigned long long *fp) {
  *found = 0;
  FILE *f = fopen(path, "r");
  if (!f) return STRATA_OK;
  int ok = fscanf(f, "strata survey record fingerprint %llx", fp) == 1;
  fclose(f);
  if (!ok)
    return strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "survey: %s "
                            "is not a survey record", path);
  *found = 1;
  return STRATA_OK;
}

static strata_status write_record(strata_context *ctx, const char *path,
                                  const strata_survey_options *o,
                                  uint64_t fp) {
  strata__ofile f;
  strata_status s = strata__ofile_open(&f, ctx, path);
  if (s != STRATA_OK) return s;
  strata__ofile_format(&f, "strata survey record fingerprint %016llx\n"
                       "shots %d first %d stem %s\n",
                       (unsigned long long)fp, o->nshots, o->first_number,
                       stem_of(o));
  return strata__ofile_commit(&f);
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int shot_done(const strata_survey_options *o, int s) {
  char p[4096];
  if (o->segy && (strata_survey_shot_path(o, s, "sgy", p, sizeof p),
                  !exists(p)))
    return 0;
  if (o->npy && (strata_survey_shot_path(o, s, "npy", p, sizeof p),
                 !exists(p)))
    return 0;
  if (o->h5 && (strata_survey_shot_path(o, s, "h5", p, sizeof p),
                !exists(p)))
    return 0;
  return 1;
}

/* The record's check: *skip = 1 when shots already written by this
 * survey are to be skipped; rank 0 writes the record when it is missing or
 * another survey's is overwritten (resume = 0). */
static strata_status check_record(strata_context *ctx,
                                  const strata_survey_options *o, int *skip) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.survey", o->dir, stem_of(o));
  const uint64_t fp = fingerprint(o);
  unsigned long long old = 0;
  int found = 0;
  strata_status s = read_record(ctx, path, &found, &old);
  if (s != STRATA_OK) return s;
  *skip = 0;
  if (found && old == fp) {
    *skip = o->resume;
    return STRATA_OK;
  }
  if (found && o->resume)
    return strata__fail_arg(ctx, STRATA_EINVAL, "dir", o->dir, "survey: %s holds "
                            "the gathers of another survey (its record %s "
                            "has fingerprint %016llx, this survey's is "
                            "%016llx): use another folder, or resume = 0 to "
                            "write over them", o->dir, path, old,
                            (unsigned long long)fp);
  return o->rank == 0 && writer(o) && !o->check_only
             ? write_record(ctx, path, o, fp)
             : STRATA_OK;
}

/* Shot s's receivers into pos (moving: x and y offsets from its source,
 * z their depth). */
static void shot_receivers(const strata_survey_options *o, int s,
                           double *pos) {
  const int n = o->wave.nreceivers;
  for (int r = 0; r < n; r++)
    for (int a = 0; a < 3; a++)
      pos[3 * r + a] = o->wave.receivers[3 * r + a] +
                       (o->moving && a < 2 ? o->shots[3 * s + a] : 0);
}

/* With a shot split over the ranks and parallel HDF5, its .h5 gather is
 * written by every rank, each the rows of the receivers it samples. */
static int h5_by_ranks(const strata_survey_options *o) {
  return o->h5 && o->wave.dist && strata_h5_parallel();
}

/* Writes shot s's gather (t filled; its .h5 unless h5_by_ranks). */
static strata_status write_gather(strata_context *ctx,
                                  const strata_survey_options *o, int s,
                                  const strata_traces *t) {
  char p[4096];
  strata_status st = STRATA_OK;
  if (o->segy) {
    strata_survey_shot_path(o, s, "sgy", p, sizeof p);
    st = strata_segy_write(ctx, p, t);
  }
  if (st == STRATA_OK && o->npy) {
    strata_survey_shot_path(o, s, "npy", p, sizeof p);
    st = strata_traces_save_npy(ctx, p, t);
  }
  if (st == STRATA_OK && o->h5 && !h5_by_ranks(o)) {
    strata_survey_shot_path(o, s, "h5", p, sizeof p);
    st = strata_traces_save_h5(ctx, p, t);
  }
  return st;
}

/* One shot on w: placed (unless it is the solver's first), stepped,
 * written. */
static strata_status run_shot(strata_wave *w, const strata_survey_options *o,
                              int s, int fresh, double *pos, strata_traces *t,
                              double *buf) {
  strata_status st = STRATA_OK;
  if (!fresh) {
    st = strata_wave_reset(w);
    if (st == STRATA_OK) st = strata_wave_set_source(w, o->shots + 3 * s);
    if (st == STRATA_OK && o->moving) {
      shot_receivers(o, s, pos);
      st = strata_wave_set_receivers(w, o->wave.nreceivers, pos);
    }
  }
  if (st == STRATA_OK) st = strata_wave_step(w, o->nsteps);
  size_t ns = 0;
  /* gathered on the writer for the formats it writes */
  if (st == STRATA_OK && (o->segy || o->npy || (o->h5 && !h5_by_ranks(o))))
    st = strata_wave_traces(w, buf, t->ntraces * t->nsamples, &ns);
  if (st == STRATA_OK && o->moving) shot_receivers(o, s, pos);
  t->shot = o->first_number + s;
  for (int a = 0; a < 3; a++) t->source[a] = o->shots[3 * s + a];
  if (st == STRATA_OK && h5_by_ranks(o)) {
    char p[4096];
    strata_survey_shot_path(o, s, "h5", p, sizeof p);
    st = strata__wave_save_traces_h5_dist(w, p, t);
  }
  if (st == STRATA_OK && writer(o)) st = write_gather(w->ctx, o, s, t);
  if (o->wave.dist) st = strata__dist_agree(o->wave.dist, st);
  return st;
}

/* The solver of the first shot to run, its model and wavelet set. */
static strata_status make_solver(strata_context *ctx,
                                 const strata_survey_options *o, int s,
                                 double *pos, strata_wave **w) {
  strata_wave_options wo = o->wave;
  memcpy(wo.src, o->shots + 3 * s, sizeof wo.src);
  shot_receivers(o, s, pos);
  wo.receivers = pos;
  strata_status st = strata_wave_create(ctx, &wo, w);
  if (st == STRATA_OK && o->velocity)
    st = strata_wave_set_velocity(*w, o->velocity);
  if (st == STRATA_OK && o->density)
    st = strata_wave_set_density(*w, o->density);
  if (st == STRATA_OK && o->wavelet)
    st = strata_wave_set_wavelet(*w, o->wavelet, o->wavelet_n,
                                 o->wavelet_dt);
  if (st != STRATA_OK) strata_wave_destroy(w);
  return st;
}

strata_status strata_survey_run(strata_context *ctx,
                                const strata_survey_options *o,
                                strata_survey_result *r) {
  if (!ctx) return STRATA_EINVAL;
  strata_survey_result dummy;
  if (!r) r = &dummy;
  memset(r, 0, sizeof *r);
  if (!o)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "o", o,
                              "survey: options are NULL");
  int skip = 0;
  strata_status st = check_options(ctx, o);
  if (st != STRATA_OK) return st;
  const int nrec = o->wave.nreceivers;
  const size_t ns = (size_t)(o->nsteps / o->wave.record_every) + 1;
  double *pos = malloc(3 * sizeof(double) * (size_t)nrec);
  double *buf = malloc(sizeof(double) * ns * (size_t)nrec);
  if (!pos || !buf) {
    free(pos);
    free(buf);
    return strata__fail(ctx, STRATA_ENOMEM, "survey: out of host memory "
                        "for %d receivers x %zu samples", nrec, ns);
  }
  /* the solver's checks and footprint before anything is written */
  {
    strata_wave_options wo = o->wave;
    strata__footprint fp;
    memcpy(wo.src, o->shots, sizeof wo.src);
    shot_receivers(o, 0, pos);
    wo.receivers = pos;
    st = strata__wave_footprint(ctx, &wo, &fp);
    if (st == STRATA_OK) st = strata__fp_check(ctx, "survey", &fp);
    r->device_bytes = fp.device;
    r->host_bytes = fp.host + sizeof(double) * ns * (size_t)nrec;
  }
  if (st == STRATA_OK) st = check_record(ctx, o, &skip);
  if (o->wave.dist) st = strata__dist_agree(o->wave.dist, st);
  for (int s = o->rank; st == STRATA_OK && s < o->nshots; s += o->nranks)
    r->to_run += !agree_flag(o, skip && shot_done(o, s), 1);
  if (st != STRATA_OK || o->check_only) {
    free(pos);
    free(buf);
    return st;
  }
  strata_traces t;
  memset(&t, 0, sizeof t);
  t.ntraces = (size_t)nrec;
  t.nsamples = ns;
  t.precision = STRATA_F64;
  t.data = buf;
  t.receivers = pos;
  strata_wave *w = NULL;
  for (int s = o->rank; s < o->nshots && st == STRATA_OK; s += o->nranks) {
    const double t0 = strata__now();
    const int done = agree_flag(o, skip && shot_done(o, s), 1);
    if (!done && !w) {
      st = make_solver(ctx, o, s, pos, &w);
      if (st == STRATA_OK) {
        strata_wave_info wi;
        strata_wave_get_info(w, &wi);
        t.dt = wi.dt * o->wave.record_every;
        r->setup_seconds = strata__now() - t0;
        st = run_shot(w, o, s, 1, pos, &t, buf);
      }
    } else if (!done) {
      st = run_shot(w, o, s, 0, pos, &t, buf);
    }
    if (st != STRATA_OK && !w) break; /* create's own refusal */
    if (st != STRATA_OK) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", strata_context_error(ctx));
      st = strata__fail(ctx, st, "survey: shot %d: %s", o->first_number + s,
                        msg);
      break;
    }
    const double dt = strata__now() - t0;
    if (done) {
      r->skipped++;
    } else {
      r->run++;
      r->steps += o->nsteps;
      r->seconds += dt;
    }
    if (o->on_shot &&
        agree_flag(o, o->on_shot(o->user, o->first_number + s, done, dt) != 0,
                   0)) {
      r->stopped = 1;
      break;
    }
  }
  if (r->run > 0) r->seconds -= r->setup_seconds;
  strata_wave_destroy(&w);
  free(pos);
  free(buf);
  return st;
}
