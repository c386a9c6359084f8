/* Receiver traces written as HDF5 over several ranks (CTest runs this on
 * 1, 2 and 4): strata_solver_save_traces_h5 of the wave solver split over
 * the ranks writes a file whose content (h5dump, every value to 17
 * digits) is that of the same solver on one process, with receivers on
 * and beside the ranks' plane boundaries, the receivers of one rank not
 * contiguous, and some ranks sampling none.  With parallel HDF5 every rank
 * writes its own receivers' rows; with the serial library rank 0 writes
 * the gathered traces.  And the refusals: a solver without receivers, and
 * (parallel HDF5) ranks' receivers that are not each receiver once.
 *
 * Every rank makes the same collective calls in the same order; only rank
 * 0 checks, after the last collective of a test. */
#include "reference.h"
#include "runner.h"

#include "io/io_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static strata_dist *D;
static int skip_all;
static char skip_why[256];

static int rank0(void) { return strata_dist_rank(D) == 0; }

/* This run's file name for stem (the rank count in it: CTest may run the
 * 1, 2 and 4 rank programs at once in one folder). */
static const char *name_of(const char *stem, char *buf, size_t n) {
  snprintf(buf, n, "test_dist_h5_np%d_%s.h5", strata_dist_size(D), stem);
  return buf;
}

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

/* Eight receivers on a grid of 40 planes along z (h = 10 m): on 4 ranks
 * (10 planes each) rank 0 samples receivers 0, 2, 5, rank 1 1, 3, 4 (a
 * receiver on the boundary plane 10 is rank 1's, one at 9.5 rank 0's),
 * rank 2 6, 7 and rank 3 none; on 2 ranks rank 0 0-5, rank 1 6, 7. */
static const double rec[8 * 3] = {
    40, 50, 20,  60, 40, 105, 80, 50, 95, 100, 40, 199.9,
    120, 50, 100, 140, 40, 0, 90, 50, 205, 70, 40, 200};

static strata_status make_wave(strata_context *ctx, strata_dist *d, int nrec,
                               strata_solver **s) {
  strata_wave_options w;
  strata_wave_options_init(&w);
  w.n[0] = 22;
  w.n[1] = 10;
  w.n[2] = 40;
  w.h = 10;
  w.f0 = 10;
  w.absorb_width = 4;
  w.face[STRATA_FACE_YLO] = w.face[STRATA_FACE_YHI] = STRATA_WAVE_PERIODIC;
  w.face[STRATA_FACE_ZLO] = w.face[STRATA_FACE_ZHI] = STRATA_WAVE_PERIODIC;
  w.src[0] = 110;
  w.src[1] = 45;
  w.src[2] = 150;
  w.nreceivers = nrec;
  w.receivers = nrec ? rec : NULL;
  w.record_every = 2;
  w.dist = d;
  strata_solver_options o;
  strata_solver_options_init(&o, STRATA_SOLVER_WAVE);
  o.wave = &w;
  return strata_solver_create(ctx, &o, s);
}

TEST(traces_match_one_process) {
  if (skip_all) SKIP("%s", skip_why);
  if (!strata_h5_available()) SKIP("this strata was built without HDF5");
  strata_context *ctx = strata_dist_context(D);
  char many[128], one[128];
  name_of("ranks", many, sizeof many);
  name_of("one", one, sizeof one);
  strata_solver *s = NULL;
  CHECK_OK(make_wave(ctx, D, 8, &s), ctx);
  CHECK_OK(strata_solver_step(s, 80), ctx);
  CHECK_OK(strata_solver_save_traces_h5(s, many), ctx);
  strata_traces t;
  CHECK_OK(strata_solver_traces(s, &t), ctx); /* gathered on rank 0 */
  double peak = 0;
  for (size_t q = 0; q < t.ntraces * t.nsamples; q++)
    if (fabs(((const double *)t.data)[q]) > peak)
      peak = fabs(((const double *)t.data)[q]);
  const size_t ns = t.nsamples;
  strata_solver_destroy(&s);
  if (!rank0()) return 0;
  CHECK(t.ntraces == 8 && ns == 41);
  CHECKF(peak > 0, "the wave never reached a receiver");
  CHECK_OK(make_wave(ctx, NULL, 8, &s), ctx);
  CHECK_OK(strata_solver_step(s, 80), ctx);
  CHECK_OK(strata_solver_save_traces_h5(s, one), ctx);
  strata_solver_destroy(&s);
  if (system("h5dump --version >/dev/null 2>&1") != 0) {
    remove(one);
    remove(many);
    SKIP("h5dump is not installed (hdf5-tools)");
  }
  char *a = ref_h5_text(one), *b = ref_h5_text(many);
  remove(one);
  remove(many);
  CHECKF(a && strstr(a, "DATASET \"traces\"") &&
             strstr(a, "DATASPACE  SIMPLE { ( 8, 41 ) / ( 8, 41 ) }") &&
             strstr(a, "DATASET \"receivers\"") &&
             strstr(a, "ATTRIBUTE \"dt\"") && strstr(a, "ATTRIBUTE \"shot\""),
         "h5dump of one process's traces: %.400s", a ? a : "(failed)");
  CHECKF(b && !strcmp(a, b), "the traces of %d ranks differ from one "
         "process's:\n%.600s", strata_dist_size(D), b ? b : "(h5dump failed)");
  free(a);
  free(b);
  return 0;
}

TEST(refusals) {
  if (skip_all) SKIP("%s", skip_why);
  if (!strata_h5_available()) SKIP("this strata was built without HDF5");
  strata_context *ctx = strata_dist_context(D);
  char path[128];
  name_of("refused", path, sizeof path);
  /* a wave solver without receivers: refused on every rank, no file */
  strata_solver *s = NULL;
  CHECK_OK(make_wave(ctx, D, 0, &s), ctx);
  strata_status st = strata_solver_save_traces_h5(s, path);
  const int said = strstr(strata_context_error(ctx), "no receivers") != NULL;
  strata_solver_destroy(&s);
  CHECK(st == STRATA_EINVAL && said && !file_exists(path));
  /* a folder that does not exist: STRATA_EIO naming the file, on every
   * rank, and nothing printed (HDF5's own error report silenced) */
  CHECK_OK(make_wave(ctx, D, 8, &s), ctx);
  CHECK_OK(strata_solver_step(s, 4), ctx); /* samples to write */
  char err[160];
  snprintf(err, sizeof err, "test_dist_h5_np%d_r%d.err", strata_dist_size(D),
           strata_dist_rank(D));
  fflush(stderr);
  int saved = dup(2), fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) dup2(fd, 2);
  st = strata_solver_save_traces_h5(s, "test_dist_h5_no_such_dir/t.h5");
  fflush(stderr);
  if (saved >= 0) dup2(saved, 2);
  struct stat sb;
  double quiet = fd >= 0 && stat(err, &sb) == 0 && sb.st_size == 0;
  if (fd >= 0) close(fd);
  if (saved >= 0) close(saved);
  remove(err);
  const int named = strstr(strata_context_error(ctx), "no_such_dir/t.h5") != 0;
  strata_solver_destroy(&s);
  CHECK_OK(strata_dist_allreduce(D, &quiet, 1, 2), ctx);
  /* without parallel HDF5 rank 0 writes the gathered traces: the others
   * learn that it failed */
  const int elsewhere = !strata_h5_parallel() && strata_dist_rank(D) > 0 &&
                        st != STRATA_OK && strata_context_error_elsewhere(ctx);
  CHECKF((st == STRATA_EIO && named) || elsewhere, "%s: %s",
         strata_status_name(st), strata_context_error(ctx));
  CHECKF(quiet == 1, "something was printed on stderr");
  if (!strata_h5_parallel()) return 0;
  /* the writer of the ranks: every rank claiming every receiver (one
   * rank: receivers out of order) is refused before anything is written */
  strata_traces t;
  memset(&t, 0, sizeof t);
  t.ntraces = 3;
  t.nsamples = 4;
  t.precision = STRATA_F64;
  t.dt = 1e-3;
  const int all[3] = {0, 1, 2}, swapped[3] = {1, 0, 2};
  const double rows[12] = {0};
  const int one = strata_dist_size(D) == 1;
  st = strata__h5_write_traces_dist(ctx, D, path, &t, 3, one ? swapped : all,
                                    rows);
  CHECKF(st == STRATA_EINVAL && !file_exists(path), "%s: %s",
         strata_status_name(st), strata_context_error(ctx));
  CHECK(strstr(strata_context_error(ctx), "not each of the 3 receivers"));
  /* and the same call with the receivers shared out is written */
  const int r = strata_dist_rank(D), mine = r == 0 ? 3 : 0;
  st = strata__h5_write_traces_dist(ctx, D, path, &t, mine, all, rows);
  const int written = file_exists(path);
  strata_dist_barrier(D);
  if (rank0()) remove(path);
  CHECK_OK(st, ctx);
  CHECK(written);
  return 0;
}

int main(int argc, char **argv) {
  if (ref_dist_start(&D, &skip_all, skip_why, sizeof skip_why)) return 1;
  static const strata_test_entry tests[] = {
      STRATA__FOR_EACH(STRATA__TE, traces_match_one_process, refusals)};
  int rc = strata_test_main(argc, argv, tests,
                            (int)(sizeof tests / sizeof tests[0]));
  strata_dist_destroy(&D);
  strata_dist_finalize();
  return rc;
}
