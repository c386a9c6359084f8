/* End-to-end tests of strata run on a case with a [survey] section: the
 * gathers of one process are the bytes of 2 and 4 (mpiexec, CPU); a
 * survey killed mid-way and run again writes only the shots not yet
 * written, with the same bytes; segyio reads the gathers with the
 * geometry of the case (when /usr/bin/python3 has segyio); a wavelet from
 * a file; the case's mistakes refused naming their keys; and the .pvd
 * index of a run's .vti snapshots; HDF5 snapshots (XDMF index) and
 * gathers read back by h5dump, and the snapshots of 2 and 4 ranks (each
 * writing its own part with parallel HDF5) the same as one process's. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reference.h"
#include "runner.h"

#define CLI_TEST_NAME "test_cli_survey"
#include "cli_test_util.h"

/* A thin 3D survey on nx x 8 x 36 points, steps a shot, a receiver
 * spread moving with the shots; survey: the [survey] section's shots and
 * more keys. */
static int write_case_full(const char *name, const char *out, int steps,
                           int nx, const char *survey) {
  char text[2048];
  snprintf(text, sizeof text,
           "[case]\nname = %s\n[solver]\nkind = wave\n"
           "[grid]\nn = %d, 8, 36\nspacing = 10\nprecision = f32\n"
           "[run]\nsteps = %d\n"
           "[wave]\nlayer_tops = 0, 180\nlayer_velocities = 1800, 2600\n"
           "[boundary]\nall = cpml\ny_lo = periodic\ny_hi = periodic\n"
           "z_lo = free\nwidth = 8\n"
           "[source]\nfrequency = 14\n"
           "[receivers]\nstart = -100, 0, 10\nend = 100, 0, 10\n"
           "count = 21\nevery = 2\n"
           "[survey]\n%sreceivers = moving\nformats = segy, npy\n"
           "[output]\ndir = %s\n",
           name, nx, steps, survey, out);
  return write_file(tp(name), text);
}

/* A line of shots along x from 110 m to 110 m short of the far end. */
static int write_case(const char *name, const char *out, int steps, int nx,
                      int shots, const char *extra) {
  char survey[512];
  snprintf(survey, sizeof survey, "start = 110, 35, 10\nend = %d, 35, 10\n"
           "count = %d\n%s", (nx - 1) * 10 - 110, shots, extra);
  return write_case_full(name, out, steps, nx, survey);
}

static int same_file(const char *a, const char *b) {
  size_t na = 0, nb = 0;
  char *x = slurp(a, &na), *y = slurp(b, &nb);
  int same = x && y && na == nb && memcmp(x, y, na) == 0;
  free(x);
  free(y);
  return same;
}

/* every gather of folder a has the bytes of folder b's */
static int same_gathers(const char *a, const char *b, int shots) {
  for (int s = 1; s <= shots; s++)
    for (int e = 0; e < 2; e++) {
      char na[64], nb[64];
      snprintf(na, sizeof na, "%s/shot_%04d.%s", a, s, e ? "npy" : "sgy");
      snprintf(nb, sizeof nb, "%s/shot_%04d.%s", b, s, e ? "npy" : "sgy");
      if (!same_file(tp(na), tp(nb))) {
        fprintf(stderr, "  %s and %s differ\n", na, nb);
        return 0;
      }
    }
  return 1;
}

static int count_in(const char *sub, const char *part) {
  DIR *d = opendir(tp(sub));
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, part)) n++;
  if (d) closedir(d);
  return n;
}

TEST(survey_one_process) {
  CHECK(setup() == 0);
  CHECK(write_case("s1.ini", "one", 120, 48, 4, "") == 0);
  int rc = strata("run s1.ini --backend cpu");
  char *out = out_text();
  CHECKF(rc == 0, "exit %d: %s", rc, err_text());
  CHECK(out && strstr(out, "4 run, 0 already written"));
  CHECK(strstr(out, "shots per hour"));
  free(out);
  CHECK(count_in("one", ".sgy") == 4 && count_in("one", ".npy") == 4);
  CHECK(exists(tp("one/shot.survey")));
  /* run again: every shot is there; --check says so */
  CHECK(strata("run s1.ini --backend cpu") == 0);
  out = out_text();
  CHECK(out && strstr(out, "0 run, 4 already written"));
  free(out);
  CHECK(strata("run s1.ini --backend cpu --check") == 0);
  out = out_text();
  CHECK(out && strstr(out, "ok (survey of 4 shots, 0 to run"));
  free(out);
  CHECK(remove(tp("one/shot_0003.sgy")) == 0);
  CHECK(strata("run s1.ini --backend cpu --check") == 0);
  out = out_text();
  CHECK(out && strstr(out, "ok (survey of 4 shots, 1 to run"));
  free(out);
  CHECK(!exists(tp("one/shot_0003.sgy")));
  CHECK(strata("run s1.ini --backend cpu") == 0);
  out = out_text();
  CHECK(out && strstr(out, "1 run, 3 already written"));
  free(out);
  return 0;
}

static int write_case_shots(const char *name, const char *out,
                            const char *survey) {
  return write_case_full(name, out, 120, 48, survey);
}

/* shots as a list and from a file: the gathers of the line's shots 1 and
 * 4 (x = 110 and 360 m) of survey_one_process; a grid of shots */
TEST(survey_shot_layouts) {
  CHECK(setup() == 0);
  CHECK(write_case_shots("l.ini", "list",
                         "shots = 110, 35, 10, 360, 35, 10\n") == 0);
  int rc = strata("run l.ini --backend cpu --quiet");
  CHECKF(rc == 0, "exit %d: %s", rc, err_text());
  CHECK(same_file(tp("list/shot_0001.npy"), tp("one/shot_0001.npy")));
  CHECK(same_file(tp("list/shot_0002.npy"), tp("one/shot_0004.npy")));
  const double pos[6] = {110, 35, 10, 360, 35, 10};
  const size_t shape[2] = {2, 3};
  CHECK(strata_npy_write(NULL, tp("shots.npy"), STRATA_F64, 2, shape, pos) ==
        STRATA_OK);
  CHECK(write_case_shots("f.ini", "file", "shots_file = shots.npy\n") == 0);
  rc = strata("run f.ini --backend cpu --quiet");
  CHECKF(rc == 0, "exit %d: %s", rc, err_text());
  CHECK(same_file(tp("file/shot_0002.npy"), tp("one/shot_0004.npy")));
  /* a shots file of another shape, and a list not of x, y, z triples */
  const size_t bad[2] = {3, 2};
  CHECK(strata_npy_write(NULL, tp("shots.npy"), STRATA_F64, 2, bad, pos) ==
        STRATA_OK);
  CHECK(strata("run f.ini --backend cpu") == 2);
  char *err = err_text();
  CHECK(err && strstr(err, "shots_file") && strstr(err, "(shots, 3)"));
  free(err);
  CHECK(strata("run l.ini --backend cpu --set survey.shots=1,2,3,4") == 2);
  err = err_text();
  CHECK(err && strstr(err, "multiple of 3"));
  free(err);
  /* a grid: 3 along x, 2 along y, at one depth */
  CHECK(write_case_shots("g.ini", "grid", "start = 110, 20, 10\n"
                         "end = 360, 45, 10\ncount = 3, 2\n") == 0);
  CHECK(strata("run g.ini --backend cpu --check") == 0);
  char *out = out_text();
  CHECK(out && strstr(out, "ok (survey of 6 shots, 6 to run"));
  free(out);
  CHECK(strata("run g.ini --backend cpu --check --set survey.end=360,45,20") ==
        2);
  err = err_text();
  CHECK(err && strstr(err, "one depth"));
  free(err);
  return 0;
}

TEST(survey_segyio_geometry) {
  if (system("/usr/bin/python3 -c 'import segyio' >/dev/null 2>&1") != 0) {
    SKIP("segyio is not installed for /usr/bin/python3 "
         "(python3-segyio, scripts/deps.sh)");
  }
  /* shot 2 of 4: source x = 110 + (360 - 110) / 3 m, receivers every
   * 10 m from 100 m before it to 100 m after, 10 m deep; 61 samples at
   * twice the step */
  char py[2048];
  snprintf(py, sizeof py,
           "cd '%s' && /usr/bin/python3 - <<'EOF'\n"
           "import segyio, numpy as np\n"
           "T = segyio.TraceField\n"
           "with segyio.open('one/shot_0002.sgy', ignore_geometry=True) as f:\n"
           "    assert f.tracecount == 21, f.tracecount\n"
           "    assert len(f.samples) == 61, len(f.samples)\n"
           "    sx = 110 + 250 / 3\n"
           "    for r in range(21):\n"
           "        h = f.header[r]\n"
           "        assert h[T.FieldRecord] == 2 and h[T.EnergySourcePoint] == 2\n"
           "        assert h[T.TraceNumber] == r + 1\n"
           "        assert h[T.SourceGroupScalar] == -100\n"
           "        assert h[T.SourceX] == round(sx * 100), h[T.SourceX]\n"
           "        assert h[T.SourceY] == 3500\n"
           "        assert h[T.GroupX] == round((sx - 100 + 10 * r) * 100)\n"
           "        assert h[T.offset] == round(-100 + 10 * r), h[T.offset]\n"
           "        assert h[T.ElevationScalar] == -100\n"
           "        assert h[T.SourceDepth] == 1000\n"
           "        assert h[T.ReceiverGroupElevation] == -1000\n"
           "        assert h[T.TRACE_SAMPLE_COUNT] == 61\n"
           "    d = np.load('one/shot_0002.npy')\n"
           "    assert d.shape == (21, 61)\n"
           "    assert np.array_equal(f.trace.raw[:], d.astype(np.float32))\n"
           "    assert np.abs(d).max() > 0\n"
           "EOF\n", dir);
  CHECKF(system(py) == 0, "segyio read the gather otherwise (see above)");
  return 0;
}

TEST(survey_killed_and_resumed) {
  CHECK(setup() == 0);
  /* longer shots, so that the kill comes mid-way */
  CHECK(write_case("k.ini", "full", 400, 90, 6, "") == 0);
  CHECK(strata("run k.ini --backend cpu --quiet") == 0);
  CHECK(count_in("full", ".sgy") == 6);
  CHECK(write_case("k.ini", "part", 400, 90, 6, "") == 0);
  pid_t pid = spawn_cli("k.ini", "cpu");
  CHECK(pid > 0);
  wait_for_path("part/shot_0002.npy", 120, 0);
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFSIGNALED(st));
  const int written = count_in("part", ".npy");
  CHECKF(written >= 2 && written < 6, "%d gathers before the kill", written);
  CHECK(strata("run k.ini --backend cpu") == 0);
  char *out = out_text();
  char want[64];
  snprintf(want, sizeof want, "%d run, %d already written", 6 - written,
           written);
  CHECKF(out && strstr(out, want), "wanted '%s' in: %s", want, out);
  free(out);
  CHECK(same_gathers("full", "part", 6));
  CHECK(count_in("part", ".tmp.") == 0); /* the killed run's partial file */
  /* another survey into the folder is refused; resume = false rewrites */
  CHECK(write_case("k2.ini", "part", 100, 90, 6, "") == 0);
  CHECK(strata("run k2.ini --backend cpu --quiet") == 2);
  char *err = err_text();
  CHECK(err && strstr(err, "another survey"));
  free(err);
  CHECK(write_case("k2.ini", "part", 100, 90, 6, "resume = false\n") == 0);
  CHECK(strata("run k2.ini --backend cpu --quiet") == 0);
  CHECK(!same_file(tp("full/shot_0001.npy"), tp("part/shot_0001.npy")));
  return 0;
}

#ifdef STRATA_MPIEXEC
TEST(survey_ranks_match_one_process) {
  CHECK(setup() == 0);
  const int np[2] = {2, 4};
  for (int q = 0; q < 2; q++) {
    char ini[32], out[32];
    snprintf(ini, sizeof ini, "m%d.ini", np[q]);
    snprintf(out, sizeof out, "np%d", np[q]);
    CHECK(write_case(ini, out, 120, 48, 4, "") == 0);
    char args[128];
    snprintf(args, sizeof args, "run %s --backend cpu", ini);
    int rc = strata_mpi(np[q], args);
    CHECKF(rc == 0, "%d ranks: exit %d: %s", np[q], rc, err_text());
    char *o = out_text();
    CHECK(o && strstr(o, "4 run, 0 already written"));
    free(o);
    CHECK(same_gathers("one", out, 4));
  }
  /* every shot split over 2 ranks (the grid's z planes shared) */
  CHECK(write_case("sp.ini", "split", 120, 48, 4, "split = true\n") == 0);
  int rc = strata_mpi(2, "run sp.ini --backend cpu");
  CHECKF(rc == 0, "split: exit %d: %s", rc, err_text());
  char *o = out_text();
  CHECK(o && strstr(o, "4 run, 0 already written") &&
        strstr(o, "each shot split over them"));
  free(o);
  CHECK(same_gathers("one", "split", 4));
  return 0;
}
#endif

TEST(survey_wavelet_file) {
  CHECK(setup() == 0);
  /* a Ricker of 14 Hz sampled at 0.5 ms, as a file */
  enum { NW = 400 };
  double w[NW];
  for (int k = 0; k < NW; k++)
    w[k] = strata_wave_ricker(14, k * 0.0005 - 1.5 / 14);
  size_t shape[1] = {NW};
  CHECK(strata_npy_write(NULL, tp("w.npy"), STRATA_F64, 1, shape, w) ==
        STRATA_OK);
  CHECK(write_case("w.ini", "wl", 120, 48, 2,
                   "wavelet_file = w.npy\nwavelet_dt = 0.0005\n") == 0);
  int rc = strata("run w.ini --backend cpu --quiet");
  CHECKF(rc == 0, "exit %d: %s", rc, err_text());
  CHECK(count_in("wl", ".sgy") == 2);
  CHECK(write_case("w.ini", "wl", 120, 48, 2, "wavelet_file = w.npy\n") == 0);
  CHECK(strata("run w.ini --backend cpu") == 2);
  char *err = err_text();
  CHECK(err && strstr(err, "wavelet_dt"));
  free(err);
  return 0;
}

TEST(survey_refusals) {
  CHECK(setup() == 0);
  /* shots both listed and on a line */
  CHECK(write_case("r.ini", "r", 50, 48, 2, "shots = 100, 35, 10\n") == 0);
  CHECK(strata("run r.ini --backend cpu") == 2);
  char *err = err_text();
  CHECK(err && strstr(err, "[survey]") && strstr(err, "one way"));
  free(err);
  /* the moving spread leaves the grid at the first shot */
  CHECK(write_case("r.ini", "r", 50, 48, 2, "") == 0);
  CHECK(strata("run r.ini --backend cpu --set survey.start=50,35,10") == 2);
  err = err_text();
  CHECKF(err && strstr(err, "receivers") && strstr(err, "outside the grid"),
         "%s", err);
  free(err);
  /* a shot outside the grid, named by its key */
  CHECK(strata("run r.ini --backend cpu --set survey.end=900,35,10") == 2);
  err = err_text();
  CHECKF(err && strstr(err, "key 'end' in [survey]") &&
         strstr(err, "outside the grid"), "%s", err);
  free(err);
  /* no checkpoints: a survey resumes from its gathers */
  CHECK(strata("run r.ini --backend cpu --checkpoint-every 10") == 2);
  err = err_text();
  CHECK(err && strstr(err, "no checkpoints"));
  free(err);
  CHECK(!exists(tp("r/shot_0001.sgy")));
  return 0;
}

/* the example survey, shortened */
TEST(example_survey_runs) {
  CHECK(setup() == 0);
  int rc = strata("run '" STRATA_SOURCE_DIR "/examples/survey_line.ini' "
                  "--out ex --quiet --backend cpu --set survey.count=3 "
                  "--set run.steps=150");
  CHECKF(rc == 0, "exit %d: %s", rc, err_text());
  CHECK(count_in("ex", ".sgy") == 3 && count_in("ex", ".npy") == 3);
  return 0;
}

/* snapshots.pvd indexes the .vti series, at step x dt; a shorter run into
 * the same folder leaves the longer run's later snapshots out */
TEST(vti_series_indexed) {
  CHECK(setup() == 0);
  const char *base = "run '" STRATA_SOURCE_DIR "/examples/heat2d.ini' --out "
                     "pv --quiet --backend cpu --set output.formats=vti,png "
                     "--set output.movie=false --set output.every=20";
  char args[1024];
  snprintf(args, sizeof args, "%s --set run.steps=60", base);
  CHECK(strata(args) == 0);
  char *t = slurp(tp("pv/snapshots.pvd"), NULL);
  CHECK(t && strstr(t, "type=\"Collection\""));
  CHECK(strstr(t, "timestep=\"40\" group=\"\" part=\"0\" "
                  "file=\"snap_000040.vti\""));
  CHECK(strstr(t, "snap_000060.vti") && !strstr(t, "final.vti"));
  free(t);
  snprintf(args, sizeof args, "%s --set run.steps=50", base);
  CHECK(strata(args) == 0);
  t = slurp(tp("pv/snapshots.pvd"), NULL);
  CHECK(t && strstr(t, "snap_000040.vti") && !strstr(t, "snap_000060.vti"));
  CHECK(strstr(t, "timestep=\"50\" group=\"\" part=\"0\" "
                  "file=\"final.vti\""));
  free(t);
  t = slurp(tp("pv/summary.json"), NULL);
  CHECK(t && strstr(t, "\"pvd\": \"snapshots.pvd\""));
  free(t);
  return 0;
}

/* The numbers h5dump prints of dataset set of dir/file (at most max into
 * v): their count, or -1 when h5dump failed. */
static int h5_values(const char *file, const char *set, double *v, int max) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "h5dump -d '%s' -y -w 0 -m %%.17g -o '%s' '%s' "
           ">/dev/null 2>&1", set, tp("h5vals.txt"), tp(file));
  if (system(cmd) != 0) return -1;
  char *t = slurp(tp("h5vals.txt"), NULL);
  if (!t) return -1;
  int n = 0;
  for (char *p = t; *p && n < max;) {
    char *end;
    double x = strtod(p, &end);
    if (end == p) {
      p++;
      continue;
    }
    v[n++] = x;
    p = end;
  }
  free(t);
  return n;
}

/* HDF5 snapshots with their XDMF index, and HDF5 gathers: the numbers of
 * the .npy files; without HDF5 in the build, a clear refusal */
TEST(hdf5_snapshots_and_gathers) {
  CHECK(setup() == 0);
  const char *base = "run '" STRATA_SOURCE_DIR "/examples/heat2d.ini' --out "
                     "h5 --quiet --backend cpu --set output.movie=false "
                     "--set output.every=20 --set run.steps=40 "
                     "--set output.formats=npy,png,h5";
  if (!strata_h5_available()) {
    CHECK(strata(base) == 2);
    char *err = err_text();
    CHECK(err && strstr(err, "without HDF5"));
    free(err);
    SKIP("this strata was built without HDF5");
  }
  if (system("h5dump --version >/dev/null 2>&1") != 0)
    SKIP("h5dump is not installed (hdf5-tools)");
  int rc = strata(base);
  CHECKF(rc == 0, "exit %d: %s", rc, err_text());
  char *x = slurp(tp("h5/snapshots.xmf"), NULL);
  CHECK(x && strstr(x, "CollectionType=\"Temporal\""));
  CHECK(strstr(x, "<Time Value=\"20\"/>") &&
        strstr(x, "Format=\"HDF\">snap_000020.h5:/u</DataItem>"));
  free(x);
  strata_precision p;
  int nd;
  size_t sh[4];
  void *d = NULL;
  CHECK(strata_npy_read(NULL, tp("h5/snap_000020.npy"), &p, &nd, sh, &d) ==
        STRATA_OK);
  CHECK(p == STRATA_F64 && nd == 2);
  const size_t n = sh[0] * sh[1];
  double *v = malloc((n + 1) * sizeof *v);
  CHECK(v);
  CHECK(h5_values("h5/snap_000020.h5", "/u", v, (int)n + 1) == (int)n);
  CHECK(memcmp(v, d, n * sizeof *v) == 0);
  free(d);
  free(v);
  /* a survey's gathers as HDF5 */
  CHECK(write_case("h.ini", "h5s", 120, 48, 2, "") == 0);
  rc = strata("run h.ini --backend cpu --quiet --set survey.formats=npy,h5");
  CHECKF(rc == 0, "exit %d: %s", rc, err_text());
  CHECK(strata_npy_read(NULL, tp("h5s/shot_0002.npy"), &p, &nd, sh, &d) ==
        STRATA_OK);
  double *t = malloc((sh[0] * sh[1] + 1) * sizeof *t);
  CHECK(t && nd == 2 && sh[0] == 21 && sh[1] == 61);
  CHECK(h5_values("h5s/shot_0002.h5", "/traces", t, 21 * 61 + 1) == 21 * 61);
  CHECK(memcmp(t, d, 21 * 61 * sizeof *t) == 0);
  CHECK(h5_values("h5s/shot_0002.h5", "/receivers", t, 64) == 63);
  CHECK(t[0] == 360 - 100 && t[1] == 35 && t[2] == 10);
  free(t);
  free(d);
  return 0;
}

#ifdef STRATA_MPIEXEC
/* h5dump's text of a file in the test's folder (reference.c) */
static char *h5_text(const char *file) { return ref_h5_text(tp(file)); }

/* HDF5 snapshots over 2 and 4 ranks: every snapshot's content (h5dump)
 * and the XDMF index are those of one process; with parallel HDF5 every
 * rank wrote its own part (the summary's h5_writers), else rank 0 */
TEST(hdf5_snapshots_over_ranks) {
  CHECK(setup() == 0);
  if (!strata_h5_available()) SKIP("this strata was built without HDF5");
  if (system("h5dump --version >/dev/null 2>&1") != 0)
    SKIP("h5dump is not installed (hdf5-tools)");
  CHECK(write_file(tp("hr.ini"),
                   "[solver]\nkind = heat\n[grid]\nn = 20, 18, 23\n"
                   "[run]\nsteps = 20\n[output]\nevery = 10\n"
                   "formats = h5\n") == 0);
  int rc = strata("run hr.ini --quiet --no-ceiling --backend cpu --out r1");
  CHECKF(rc == 0, "exit %d: %s", rc, err_text());
  static const char *const files[] = {"snap_000000.h5", "snap_000010.h5",
                                      "snap_000020.h5", "final.h5"};
  const int np[2] = {2, 4};
  for (int q = 0; q < 2; q++) {
    char args[160], out[16], path[64];
    snprintf(out, sizeof out, "r%d", np[q]);
    snprintf(args, sizeof args, "run hr.ini --quiet --no-ceiling --backend "
             "cpu --out %s", out);
    rc = strata_mpi(np[q], args);
    CHECKF(rc == 0, "%d ranks: exit %d: %s", np[q], rc, err_text());
    for (int i = 0; i < 4; i++) {
      snprintf(path, sizeof path, "r1/%s", files[i]);
      char *a = h5_text(path);
      snprintf(path, sizeof path, "%s/%s", out, files[i]);
      char *b = h5_text(path);
      CHECKF(a && b && strstr(a, "DATASET \"u\"") && !strcmp(a, b),
             "%s differs from one process's", path);
      free(a);
      free(b);
    }
    snprintf(path, sizeof path, "%s/snapshots.xmf", out);
    char *x1 = slurp(tp("r1/snapshots.xmf"), NULL), *x = slurp(tp(path), NULL);
    CHECK(x1 && x && !strcmp(x1, x) &&
          strstr(x, "Format=\"HDF\">snap_000020.h5:/u</DataItem>"));
    free(x1);
    free(x);
    snprintf(path, sizeof path, "%s/summary.json", out);
    char *sum = slurp(tp(path), NULL), want[32];
    snprintf(want, sizeof want, "\"h5_writers\": %d,",
             strata_h5_parallel() ? np[q] : 1);
    CHECKF(sum && strstr(sum, want), "no '%s' in %s", want, path);
    free(sum);
  }
  return 0;
}

/* HDF5 traces over 2 and 4 ranks: traces.h5's content (h5dump) is one
 * process's, receivers on 4 ranks' plane boundaries and the last rank
 * sampling none; with parallel HDF5 every rank wrote its own receivers'
 * rows (the summary's traces.h5_writers), else rank 0; alone and beside
 * the gathered formats.  And a split survey's .h5 gathers. */
TEST(hdf5_traces_over_ranks) {
  CHECK(setup() == 0);
  if (!strata_h5_available()) SKIP("this strata was built without HDF5");
  if (system("h5dump --version >/dev/null 2>&1") != 0)
    SKIP("h5dump is not installed (hdf5-tools)");
  CHECK(write_file(tp("ht.ini"),
                   "[solver]\nkind = wave\n[grid]\nn = 40, 8, 64\n"
                   "spacing = 10\nprecision = f32\n[run]\nsteps = 60\n"
                   "[boundary]\nall = cpml\ny_lo = periodic\n"
                   "y_hi = periodic\nz_lo = free\nwidth = 8\n"
                   "[source]\nfrequency = 14\nposition = 200, 35, 150\n"
                   "[receivers]\nstart = 20, 0, 10\nend = 380, 0, 400\n"
                   "count = 9\nevery = 2\n"
                   "[output]\nformats = npy\ntraces = h5\n") == 0);
  int rc = strata("run ht.ini --quiet --no-ceiling --backend cpu --out t1");
  CHECKF(rc == 0, "exit %d: %s", rc, err_text());
  char *a = h5_text("t1/traces.h5");
  CHECK(a && strstr(a, "DATASET \"traces\"") &&
        strstr(a, "DATASPACE  SIMPLE { ( 9, 31 ) / ( 9, 31 ) }"));
  const int np[2] = {2, 4};
  for (int q = 0; q < 4; q++) {
    const int n = np[q % 2], also_npy = q >= 2;
    char args[200], out[16], path[64], want[48];
    snprintf(out, sizeof out, "t%d%s", n, also_npy ? "n" : "");
    snprintf(args, sizeof args, "run ht.ini --quiet --no-ceiling --backend "
             "cpu --out %s%s", out,
             also_npy ? " --set output.traces=h5,npy" : "");
    rc = strata_mpi(n, args);
    CHECKF(rc == 0, "%d ranks: exit %d: %s", n, rc, err_text());
    snprintf(path, sizeof path, "%s/traces.h5", out);
    char *b = h5_text(path);
    CHECKF(b && !strcmp(a, b), "%s differs from one process's", path);
    free(b);
    snprintf(path, sizeof path, "%s/summary.json", out);
    char *sum = slurp(tp(path), NULL);
    snprintf(want, sizeof want, "\"h5_writers\": %d}",
             strata_h5_parallel() ? n : 1);
    CHECKF(sum && strstr(sum, "\"traces\": {\"receivers\": 9, "
                              "\"samples\": 31,") && strstr(sum, want),
           "no '%s' in %s", want, path);
    free(sum);
    snprintf(path, sizeof path, "%s/traces.npy", out);
    CHECKF(access(tp(path), F_OK) == (also_npy ? 0 : -1), "%s %s", path,
           also_npy ? "is missing" : "was written");
  }
  free(a);
  /* a survey's shots split over 2 ranks: each .h5 gather (written by the
   * ranks with parallel HDF5) is one process's */
  CHECK(write_case("hs1.ini", "hs1", 120, 48, 2, "") == 0);
  CHECK(write_case("hs2.ini", "hs2", 120, 48, 2, "split = true\n") == 0);
  rc = strata("run hs1.ini --backend cpu --quiet --set survey.formats=h5");
  CHECKF(rc == 0, "exit %d: %s", rc, err_text());
  rc = strata_mpi(2, "run hs2.ini --backend cpu --quiet "
                     "--set survey.formats=h5");
  CHECKF(rc == 0, "split: exit %d: %s", rc, err_text());
  for (int k = 1; k <= 2; k++) {
    char p1[64], p2[64];
    snprintf(p1, sizeof p1, "hs1/shot_%04d.h5", k);
    snprintf(p2, sizeof p2, "hs2/shot_%04d.h5", k);
    a = h5_text(p1);
    char *b = h5_text(p2);
    CHECKF(a && b && strstr(a, "DATASET \"traces\"") && !strcmp(a, b),
           "%s differs from one process's", p2);
    free(a);
    free(b);
  }
  return 0;
}
#endif

TEST(cleanup) {
  if (dir[0]) CHECK(rm_rf(dir) == 0);
  return 0;
}

RUN_TESTS(survey_one_process, survey_shot_layouts, survey_segyio_geometry,
          survey_killed_and_resumed,
#ifdef STRATA_MPIEXEC
          survey_ranks_match_one_process,
#endif
          survey_wavelet_file, survey_refusals, example_survey_runs,
          vti_series_indexed, hdf5_snapshots_and_gathers,
#ifdef STRATA_MPIEXEC
          hdf5_snapshots_over_ranks, hdf5_traces_over_ranks,
#endif
          cleanup)
