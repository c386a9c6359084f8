/* Surveys on the CPU engine: a solver reset and moved to another shot runs
 * it bit for bit as a solver made for it; a wavelet given as samples
 * reproduces the Ricker; a survey's gathers are the same bytes whatever
 * the number of processes sharing its shots; a survey stopped mid-way and
 * run again writes the rest, identical; a folder of another survey's
 * gathers is refused; shots and moving receivers outside the grid are
 * refused naming them.  STRATA_TEST_BACKEND=cuda runs them on a GPU. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reference.h"
#include "runner.h"

static char tmpdir[256];

static const char *tpath(const char *name) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
  return buf[k];
}

static int same_file(const char *a, const char *b) {
  size_t na = 0, nb = 0;
  unsigned char *x = ref_slurp(a, &na), *y = ref_slurp(b, &nb);
  int same = x && y && na == nb && memcmp(x, y, na) == 0;
  free(x);
  free(y);
  return same;
}

/* The CPU engine; STRATA_TEST_BACKEND=cuda runs the same tests on a GPU. */
static strata_context *cpu(void) {
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = ref_test_backend();
  strata_context *ctx = NULL;
  if (!tmpdir[0]) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/strata_test_survey.XXXXXX");
    if (!mkdtemp(tmpdir)) return NULL;
  }
  if (strata_context_create(&ctx, &o) != STRATA_OK) return NULL;
  return ctx;
}

/* A small 3D grid with CPML faces and a free top, a receiver line. */
static double line[3 * 7];
static void small(strata_wave_options *o, int moving) {
  strata_wave_options_init(o);
  o->n[0] = 40;
  o->n[1] = 8; /* a thin slab, periodic across the line */
  o->n[2] = 30;
  o->h = 10;
  o->velocity = 2000;
  o->f0 = 12;
  o->absorb_width = 6;
  o->face[STRATA_FACE_ZLO] = STRATA_WAVE_FREE;
  o->face[STRATA_FACE_YLO] = o->face[STRATA_FACE_YHI] = STRATA_WAVE_PERIODIC;
  o->precision = STRATA_F64;
  for (int r = 0; r < 7; r++) {
    line[3 * r] = moving ? -60 + 20.0 * r : 85 + 35.0 * r;
    line[3 * r + 1] = moving ? 0 : 35;
    line[3 * r + 2] = 20;
  }
  o->nreceivers = 7;
  o->receivers = line;
}

static int traces_of(strata_wave *w, double *out, size_t cap) {
  size_t ns = 0;
  return strata_wave_traces(w, out, cap, &ns) == STRATA_OK ? (int)ns : -1;
}

TEST(reset_runs_a_shot_as_new) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_wave_options o;
  small(&o, 0);
  o.src[0] = 120, o.src[1] = 35, o.src[2] = 30;
  strata_wave *a = NULL, *b = NULL;
  CHECK_OK(strata_wave_create(ctx, &o, &a), ctx);
  CHECK_OK(strata_wave_step(a, 90), ctx);
  /* the second shot: another source, receivers moved (fewer of them) */
  const double src2[3] = {250, 45, 10};
  double rec2[3 * 5];
  for (int r = 0; r < 5; r++)
    rec2[3 * r] = 30 + 60.0 * r, rec2[3 * r + 1] = 40, rec2[3 * r + 2] = 20;
  CHECK_STATUS(strata_wave_set_receivers(a, 5, rec2), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "strata_wave_reset"));
  CHECK_OK(strata_wave_reset(a), ctx);
  CHECK_OK(strata_wave_set_source(a, src2), ctx);
  CHECK_OK(strata_wave_set_receivers(a, 5, rec2), ctx);
  CHECK_OK(strata_wave_step(a, 130), ctx);
  memcpy(o.src, src2, sizeof src2);
  o.nreceivers = 5;
  o.receivers = rec2;
  CHECK_OK(strata_wave_create(ctx, &o, &b), ctx);
  CHECK_OK(strata_wave_step(b, 130), ctx);
  enum { CAP = 5 * 200 };
  static double ta[CAP], tb[CAP];
  int na = traces_of(a, ta, CAP), nb = traces_of(b, tb, CAP);
  CHECK(na == 131 && nb == 131);
  CHECK(memcmp(ta, tb, sizeof(double) * 5 * 131) == 0);
  double peak = 0;
  for (int i = 0; i < 5 * 131; i++) peak = fmax(peak, fabs(ta[i]));
  CHECK(peak > 0);
  size_t pts = o.n[0] * o.n[1] * o.n[2];
  double *pa = malloc(pts * 8), *pb = malloc(pts * 8);
  CHECK(pa && pb);
  CHECK_OK(strata_wave_read(a, pa), ctx);
  CHECK_OK(strata_wave_read(b, pb), ctx);
  CHECK(memcmp(pa, pb, pts * 8) == 0);
  /* positions outside the grid are refused, naming them */
  const double out[3] = {100, 500, 10};
  CHECK_STATUS(strata_wave_set_source(a, out), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "outside the grid"));
  free(pa);
  free(pb);
  strata_wave_destroy(&a);
  strata_wave_destroy(&b);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(sampled_wavelet_matches_ricker) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_wave_options o;
  small(&o, 0);
  strata_wave *a = NULL, *b = NULL;
  CHECK_OK(strata_wave_create(ctx, &o, &a), ctx);
  CHECK_OK(strata_wave_create(ctx, &o, &b), ctx);
  strata_wave_info wi;
  CHECK_OK(strata_wave_get_info(a, &wi), ctx);
  /* the Ricker delayed by 1.5 / f0, sampled at half the step: every step
   * falls on a sample, so the interpolation is exact */
  enum { NW = 400 };
  static double wl[NW];
  const double wdt = wi.dt / 2;
  for (int k = 0; k < NW; k++)
    wl[k] = strata_wave_ricker(o.f0, k * wdt - 1.5 / o.f0);
  CHECK_OK(strata_wave_set_wavelet(b, wl, NW, wdt), ctx);
  CHECK_OK(strata_wave_step(a, 120), ctx);
  CHECK_OK(strata_wave_step(b, 120), ctx);
  enum { CAP = 7 * 200 };
  static double ta[CAP], tb[CAP];
  CHECK(traces_of(a, ta, CAP) == 121 && traces_of(b, tb, CAP) == 121);
  double peak = 0, err = 0;
  for (int i = 0; i < 7 * 121; i++) {
    peak = fmax(peak, fabs(ta[i]));
    err = fmax(err, fabs(ta[i] - tb[i]));
  }
  CHECKF(peak > 0 && err <= 1e-12 * peak, "peak %g, difference %g", peak,
         err);
  /* a bad wavelet is refused and the old one kept */
  wl[3] = NAN;
  CHECK_STATUS(strata_wave_set_wavelet(b, wl, NW, wdt), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "samples[3]", "nan");
  CHECK_STATUS(strata_wave_set_wavelet(b, wl, NW, 0), STRATA_EINVAL, ctx);
  CHECK_OK(strata_wave_set_wavelet(b, NULL, 0, 0), ctx);
  strata_wave_destroy(&a);
  strata_wave_destroy(&b);
  strata_context_destroy(&ctx);
  return 0;
}

static const double SHOTS[3 * 5] = {70,  30, 10, 110, 30, 10, 190, 20, 10,
                                    260, 30, 20, 320, 70, 10};

static void survey(strata_survey_options *s, const char *dir) {
  strata_survey_options_init(s);
  small(&s->wave, 1);
  s->nshots = 5;
  s->shots = SHOTS;
  s->moving = 1;
  s->nsteps = 60;
  s->wave.record_every = 2;
  s->dir = dir;
  s->npy = 1;
}

static int mkdir_fresh(const char *d) {
  return mkdir(d, 0755) == 0 || access(d, W_OK) == 0;
}

/* the gathers of dir a and b, shot by shot, same bytes */
static int same_gathers(const strata_survey_options *s, const char *b) {
  strata_survey_options t = *s;
  t.dir = b;
  for (int k = 0; k < s->nshots; k++) {
    char pa[600], pb[600];
    for (int e = 0; e < 2; e++) {
      const char *ext = e ? "npy" : "sgy";
      strata_survey_shot_path(s, k, ext, pa, sizeof pa);
      strata_survey_shot_path(&t, k, ext, pb, sizeof pb);
      if (!same_file(pa, pb)) {
        fprintf(stderr, "  %s and %s differ\n", pa, pb);
        return 0;
      }
    }
  }
  return 1;
}

static int stop_after_two(void *user, int shot, int skipped, double sec) {
  (void)shot, (void)sec;
  int *n = user;
  if (!skipped) ++*n;
  return *n >= 2;
}

TEST(survey_shared_out_and_resumed) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_survey_options s;
  char one[600], sh[2][600];
  snprintf(one, sizeof one, "%s", tpath("one"));
  CHECK(mkdir_fresh(one));
  survey(&s, one);
  strata_survey_result r;
  CHECK_OK(strata_survey_run(ctx, &s, &r), ctx);
  CHECK(r.run == 5 && r.skipped == 0 && r.steps == 300 && !r.stopped);
  /* shared over 2 and 4 processes (each share run here in turn) */
  const int procs[2] = {2, 4};
  for (int q = 0; q < 2; q++) {
    snprintf(sh[q], sizeof sh[q], "%s/p%d", tmpdir, procs[q]);
    CHECK(mkdir_fresh(sh[q]));
    int total = 0;
    for (int k = 0; k < procs[q]; k++) {
      strata_survey_options t;
      survey(&t, sh[q]);
      t.rank = k;
      t.nranks = procs[q];
      CHECK_OK(strata_survey_run(ctx, &t, &r), ctx);
      total += r.run;
    }
    CHECK(total == 5);
    CHECK(same_gathers(&s, sh[q]));
  }
  /* stopped after two shots, then run again: the other three are run */
  char part[600];
  snprintf(part, sizeof part, "%s", tpath("part"));
  CHECK(mkdir_fresh(part));
  strata_survey_options t;
  survey(&t, part);
  int count = 0;
  t.on_shot = stop_after_two;
  t.user = &count;
  CHECK_OK(strata_survey_run(ctx, &t, &r), ctx);
  CHECK(r.run == 2 && r.stopped);
  char p[700];
  strata_survey_shot_path(&t, 2, "sgy", p, sizeof p);
  CHECK(access(p, F_OK) != 0);
  t.on_shot = NULL;
  CHECK_OK(strata_survey_run(ctx, &t, &r), ctx);
  CHECK(r.run == 3 && r.skipped == 2);
  CHECK(same_gathers(&s, part));
  /* a gather lost (or never renamed into place) is run again */
  strata_survey_shot_path(&t, 1, "npy", p, sizeof p);
  CHECK(remove(p) == 0);
  CHECK_OK(strata_survey_run(ctx, &t, &r), ctx);
  CHECK(r.run == 1 && r.skipped == 4);
  CHECK(same_gathers(&s, part));
  /* another survey into the same folder is refused, unless resume = 0 */
  t.wave.f0 = 10;
  CHECK_STATUS(strata_survey_run(ctx, &t, &r), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "another survey"));
  CHECK(r.run == 0);
  t.resume = 0;
  CHECK_OK(strata_survey_run(ctx, &t, &r), ctx);
  CHECK(r.run == 5);
  CHECK(!same_file(tpath("one/shot_0001.sgy"), tpath("part/shot_0001.sgy")));
  strata_context_destroy(&ctx);
  return 0;
}

TEST(survey_refusals) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_survey_options s;
  survey(&s, tmpdir);
  double bad[3 * 5];
  memcpy(bad, SHOTS, sizeof bad);
  bad[3 * 2 + 1] = 400; /* shot 3's y */
  s.shots = bad;
  CHECK_STATUS(strata_survey_run(ctx, &s, NULL), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "shots[7]", "400");
  CHECK(strstr(strata_context_error(ctx), "shot 3"));
  /* the receivers move with the source: the first shot's leave the grid */
  s.shots = SHOTS;
  bad[0] = 10;
  memcpy(bad + 3, SHOTS + 3, sizeof(double) * 12);
  bad[1] = 30, bad[2] = 10;
  s.shots = bad;
  CHECK_STATUS(strata_survey_run(ctx, &s, NULL), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "receiver 0"));
  CHECK_ARG(ctx, "receivers[0]", "-60");
  s.shots = SHOTS;
  s.rank = 2;
  s.nranks = 2;
  CHECK_STATUS(strata_survey_run(ctx, &s, NULL), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "rank", "2");
  s.rank = 0;
  s.nsteps = 0;
  CHECK_STATUS(strata_survey_run(ctx, &s, NULL), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "nsteps", "0");
  strata_context_destroy(&ctx);
  return 0;
}

TEST(cleanup) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (tmpdir[0]) CHECK(system(cmd) == 0);
  return 0;
}

RUN_TESTS(reset_runs_a_shot_as_new, sampled_wavelet_matches_ricker,
          survey_shared_out_and_resumed, survey_refusals, cleanup)
