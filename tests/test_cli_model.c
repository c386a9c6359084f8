/* The strata program with [model]: a velocity model from an .npy file of
 * its own spacing runs bit for bit as the library does with the same model
 * resampled; a SEG-Y model written by the library's trace writer gives
 * the same run, and so does a run over 2 processes (with MPI); bad models
 * (NaN, not covering the grid, a raw file of the wrong size, a dt too
 * large at the fastest point, [wave] velocity beside [model]) are refused
 * with exit 2, the file, the line, the key and the reason, and leave no
 * output; the model's interfaces are drawn over the PNG snapshots (by
 * default; [output] interfaces = false turns them off), none for a
 * constant model or a jump below the threshold. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"
#include "runner.h"

#define CLI_TEST_NAME "test_cli_model"
#include "cli_test_util.h"

enum { NX = 52, NY = 50, NZ = 54 };
static const double H = 10;
/* the model: 27 x 26 x 28 samples 20 m apart (covers the grid) */
enum { MX = 27, MY = 26, MZ = 28 };
static const double MH = 20;

static double model_v(size_t i, size_t j, size_t k) {
  return 1800 + 40.0 * (double)k + 3.0 * (double)i + (i == 13 && j == 12 &&
                                                      k == 14 ? 900 : 0);
}

static void fill_model(float vz[MZ][MY][MX]) {
  for (size_t k = 0; k < MZ; k++)
    for (size_t j = 0; j < MY; j++)
      for (size_t i = 0; i < MX; i++) vz[k][j][i] = (float)model_v(i, j, k);
}

static const char *case_text =
    "[solver]\nkind = wave\n"
    "[grid]\nn = 52, 50, 54\nspacing = 10\n"
    "[run]\nsteps = 30\n"
    "[boundary]\nwidth = 8\n"
    "[source]\nposition = 250, 240, 200\nfrequency = 12\n"
    "[model]\nvelocity = %s\nspacing = 20\n%s"
    "[output]\nformats = npy\n";

static int write_case(const char *name, const char *model, const char *extra) {
  char text[2048];
  snprintf(text, sizeof text, case_text, model, extra);
  return write_file(tp(name), text);
}

/* The library's run of the case: the model read, resampled and checked as
 * the program does, p after 30 steps (f32) into out. */
static int library_run(strata_context *ctx, float *out) {
  strata_model_file f;
  strata_model_file_init(&f);
  f.path = tp("v.npy");
  for (int a = 0; a < 3; a++) f.spacing[a] = MH;
  strata_model m;
  CHECK_OK(strata_model_read(ctx, &f, &m), ctx);
  size_t n[3] = {NX, NY, NZ};
  double *v = malloc(NX * NY * NZ * sizeof *v);
  CHECK(v);
  CHECK_OK(strata_model_resample(ctx, &m, n, H, STRATA_RESAMPLE_LINEAR, v),
           ctx);
  strata_model_free(&m);
  strata_wave_options o;
  strata_wave_options_init(&o);
  for (int a = 0; a < 3; a++) o.n[a] = n[a];
  o.h = H;
  o.absorb_width = 8;
  o.src[0] = 250;
  o.src[1] = 240;
  o.src[2] = 200;
  o.f0 = 12;
  strata_wave_model_info in;
  CHECK_OK(strata_wave_check_model(ctx, &o, v, &in), ctx);
  o.velocity = in.vmax;
  strata_wave *w = NULL;
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  CHECK_OK(strata_wave_set_velocity(w, v), ctx);
  CHECK_OK(strata_wave_step(w, 30), ctx);
  CHECK_OK(strata_wave_read(w, out), ctx);
  strata_wave_destroy(&w);
  free(v);
  return 0;
}

/* dir/name.out/final.npy equals ref exactly. */
static int final_equals(const char *out, const float *ref) {
  char p[256];
  snprintf(p, sizeof p, "%s/final.npy", out);
  strata_precision pr;
  int nd;
  size_t sh[4];
  void *d = NULL;
  CHECK(strata_npy_read(NULL, tp(p), &pr, &nd, sh, &d) == STRATA_OK);
  CHECK(pr == STRATA_F32 && nd == 3 && sh[0] == NZ && sh[1] == NY &&
        sh[2] == NX);
  int same = memcmp(d, ref, NX * NY * NZ * sizeof(float)) == 0;
  double peak = 0;
  for (size_t q = 0; q < NX * NY * NZ; q++)
    peak = fmax(peak, fabs(ref[q]));
  free(d);
  CHECKF(same, "%s differs from the library's run", p);
  CHECK(peak > 0); /* the source has radiated */
  return 0;
}

TEST(model_npy_and_segy_run_as_the_library) {
  CHECK(setup() == 0);
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  static float vz[MZ][MY][MX];
  fill_model(vz);
  size_t shape[3] = {MZ, MY, MX};
  CHECK_OK(strata_npy_write(ctx, tp("v.npy"), STRATA_F32, 3, shape, vz), ctx);
  float *ref = malloc(NX * NY * NZ * sizeof *ref);
  CHECK(ref);
  CHECK(library_run(ctx, ref) == 0);
  CHECK(write_case("m.ini", "v.npy", "") == 0);
  int rc = strata("run m.ini --quiet --backend cpu");
  char *e = err_text();
  CHECKF(rc == 0, "exit %d: %s", rc, e ? e : "");
  free(e);
  CHECK(final_equals("m.out", ref) == 0);
  char *sum = slurp(tp("m.out/summary.json"), NULL);
  CHECK(sum && strstr(sum, "\"vmin\": 1800,") &&
        strstr(sum, "\"vmax\": 3299,"));
  free(sum);
  /* the same model as a SEG-Y file from the library's trace writer, one
   * trace per (x, y) column in file order: lines of MX traces */
  static double cols[MY * MX][MZ];
  for (size_t j = 0; j < MY; j++)
    for (size_t i = 0; i < MX; i++)
      for (size_t k = 0; k < MZ; k++) cols[j * MX + i][k] = vz[k][j][i];
  strata_traces t = {MY * MX, MZ, 0.004, STRATA_F64, cols, NULL, {0, 0, 0}, 0};
  CHECK_OK(strata_segy_write(ctx, tp("v.sgy"), &t), ctx);
  CHECK(write_case("s.ini", "v.sgy", "segy_nx = 27\n") == 0);
  rc = strata("run s.ini --quiet --backend cpu");
  e = err_text();
  CHECKF(rc == 0, "exit %d: %s", rc, e ? e : "");
  free(e);
  CHECK(final_equals("s.out", ref) == 0);
#ifdef STRATA_MPIEXEC
  /* over 2 processes every rank reads the model and takes its slab */
  rc = strata_mpi(2, "run m.ini --quiet --backend cpu --no-ceiling --out "
                  "mpi.out");
  e = err_text();
  CHECKF(rc == 0, "2 ranks: exit %d: %s", rc, e ? e : "");
  free(e);
  CHECK(final_equals("mpi.out", ref) == 0);
#endif
  free(ref);
  strata_context_destroy(&ctx);
  return 0;
}

/* The case refused: exit 2, every piece of text in want on stderr, no
 * output folder. */
static int refused(const char *args, const char *const *want, int nwant) {
  rm_rf(tp("r.out"));
  int rc = strata(args);
  char *e = err_text();
  CHECKF(rc == 2, "%s: exit %d: %s", args, rc, e ? e : "");
  for (int i = 0; i < nwant; i++)
    CHECKF(e && strstr(e, want[i]), "%s: '%s' not in: %s", args, want[i],
           e ? e : "");
  free(e);
  CHECKF(!exists(tp("r.out/final.npy")), "%s left output", args);
  return 0;
}

TEST(bad_models_refused_with_the_reason) {
  CHECK(setup() == 0);
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  static float vz[MZ][MY][MX];
  fill_model(vz);
  size_t shape[3] = {MZ, MY, MX};
  vz[4][3][2] = NAN;
  CHECK_OK(strata_npy_write(ctx, tp("nan.npy"), STRATA_F32, 3, shape, vz),
           ctx);
  vz[4][3][2] = -1500;
  CHECK_OK(strata_npy_write(ctx, tp("neg.npy"), STRATA_F32, 3, shape, vz),
           ctx);
  vz[4][3][2] = 1800;
  shape[1] = MY - 3; /* ends at y = 440 m, short of the grid's 490 */
  CHECK_OK(strata_npy_write(ctx, tp("short.npy"), STRATA_F32, 3, shape, vz),
           ctx);
  CHECK(write_file(tp("raw.bin"), "0123456789") == 0);
  CHECK(write_case("r.ini", "nan.npy", "") == 0);
  const char *nan[] = {"r.ini:", "key 'velocity' in [model]",
                       "sample (2, 3, 4) at x = 40, y = 60, z = 80 m is nan"};
  CHECK(refused("run r.ini --quiet", nan, 3) == 0);
  const char *neg[] = {"sample (2, 3, 4)", "is -1500; it must be finite and "
                       "> 0"};
  CHECK(refused("run r.ini --quiet --set model.velocity=neg.npy", neg, 2) ==
        0);
  const char *cover[] = {"key 'origin' in [model]",
                         "along y it covers [0, 440] m",
                         "the grid spans [0, 490] m"};
  CHECK(refused("run r.ini --quiet --set model.velocity=short.npy", cover,
                3) == 0);
  const char *origin[] = {"along z it covers [5, 545] m"};
  CHECK(refused("run r.ini --quiet --set model.velocity=v.npy --set "
                "model.origin=0,0,5", origin, 1) == 0);
  const char *raw[] = {"key 'velocity' in [model]", "has 10 bytes",
                       "needs 156"};
  CHECK(refused("run r.ini --quiet --set model.velocity=raw.bin --set "
                "model.format=raw --set model.shape=3,13 --set "
                "model.dtype=f32", raw, 3) == 0);
  const char *cfl[] = {"fastest point (26, 24, 28) at x = 260, y = 240, "
                       "z = 280 m has v = 3299 m/s", "reduce dt"};
  CHECK(refused("run r.ini --quiet --set model.velocity=v.npy --set "
                "wave.dt=0.0015", cfl, 2) == 0);
  const char *both[] = {"key 'velocity' in [wave]",
                        "the velocity comes from [model] velocity"};
  CHECK(refused("run r.ini --quiet --set model.velocity=v.npy --set "
                "wave.velocity=2000", both, 2) == 0);
  const char *missing[] = {"key 'velocity' in [model]", "cannot open "
                           "'none.npy'"};
  CHECK(refused("run r.ini --quiet --set model.velocity=none.npy", missing,
                2) == 0);
  const char *axes[] = {"key 'axes' in [model]", "axes 'xy'"};
  CHECK(refused("run r.ini --quiet --set model.velocity=v.npy --set "
                "model.axes=xy", axes, 2) == 0);
  const char *dtype[] = {"key 'dtype' in [model]", "applies to raw files"};
  CHECK(refused("run r.ini --quiet --set model.velocity=v.npy --set "
                "model.dtype=f64", dtype, 2) == 0);
  const char *segy_axes[] = {"key 'axes' in [model]", "does not apply to a "
                             "SEG-Y file"};
  CHECK(refused("run r.ini --quiet --set model.velocity=v.sgy --set "
                "model.axes=zyx", segy_axes, 2) == 0);
  /* density: refused where the solver has none, else it runs */
  int rc = strata("run r.ini --quiet --out r.out --set model.velocity=v.npy "
                  "--set model.density=v.npy");
  char *e = err_text();
  CHECKF(rc == 0 || (rc == 2 && e && strstr(e, "key 'density' in [model]") &&
                     strstr(e, "density model is not supported")),
         "exit %d: %s", rc, e ? e : "");
  free(e);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- the model's interfaces over the snapshots ------------------------- */

static const char *layers_text =
    "[solver]\nkind = wave\n"
    "[grid]\nn = 40, 1, 30\nspacing = 10\n"
    "[run]\nsteps = 20\n"
    "[boundary]\nwidth = 6\n"
    "[source]\nposition = 200, 0, 100\nfrequency = 12\n"
    "%s"
    "[output]\nformats = png\n";

/* The final.png of the case layers_text with model (sections), with the
 * options set (--set ...) and with `interfaces = false`: equal but for one
 * row of the plot, black in `on`: the bottom pixel row of the points at
 * depth index kline (-1: no row). */
static int line_at(const char *model, const char *set, long kline) {
  char text[1024];
  snprintf(text, sizeof text, layers_text, model);
  CHECK(write_file(tp("i.ini"), text) == 0);
  rm_rf(tp("on.out"));
  rm_rf(tp("off.out"));
  char args[512];
  snprintf(args, sizeof args, "run i.ini --quiet --backend cpu --no-ceiling "
           "--out on.out %s", set);
  int rc = strata(args);
  snprintf(args, sizeof args, "run i.ini --quiet --backend cpu --no-ceiling "
           "--out off.out %s --set output.interfaces=false", set);
  if (rc == 0) rc = strata(args);
  char *e = err_text();
  CHECKF(rc == 0, "exit %d: %s", rc, e ? e : "");
  free(e);
  size_t w, h, w2, h2;
  unsigned char *on = ref_png_decode(tp("on.out/final.png"), &w, &h),
                *off = ref_png_decode(tp("off.out/final.png"), &w2, &h2);
  CHECK(on && off && w == w2 && h == h2);
  /* the plot's frame: the first row of off with a long black run */
  long top = -1, left = -1, pw = 0;
  for (size_t y = 0; y < h && top < 0; y++)
    for (size_t x = 0; x + 100 < w && top < 0; x++) {
      size_t run = 0;
      while (x + run < w && !memcmp(off + 3 * (y * w + x + run), "\0\0\0", 3))
        run++;
      if (run >= 100) {
        top = (long)y + 1;
        left = (long)x + 1;
        pw = (long)run - 2;
      }
    }
  CHECK(top > 0 && pw % 40 == 0);
  const long sc = pw / 40, yline = kline < 0 ? -1 : top + (kline + 1) * sc - 1;
  size_t differ = 0;
  for (long y = 0; y < (long)h; y++)
    for (long x = 0; x < (long)w; x++) {
      const unsigned char *a = on + 3 * (y * (long)w + x),
                          *b = off + 3 * (y * (long)w + x);
      if (y == yline && x >= left && x < left + pw) {
        CHECKF(!memcmp(a, "\0\0\0", 3), "(%ld, %ld) is not the line's "
               "black", x, y);
        differ += memcmp(a, b, 3) != 0;
      } else {
        CHECKF(!memcmp(a, b, 3), "(%ld, %ld) differs off the line (row "
               "%ld)", x, y, yline);
      }
    }
  CHECK(kline < 0 || differ > (size_t)pw / 2); /* the line is drawn */
  free(on);
  free(off);
  return 0;
}

TEST(interfaces_drawn_over_the_snapshots) {
  CHECK(setup() == 0);
  /* two layers, the second's top at 195 m: between z = 190 and 200 m */
  CHECK(line_at("[wave]\nlayer_tops = 0, 195\n"
                "layer_velocities = 1500, 2500\n", "", 19) == 0);
  /* a density contrast alone */
  CHECK(line_at("[wave]\nlayer_tops = 0, 195\n"
                "layer_velocities = 2000, 2000\n"
                "layer_densities = 1000, 2000\n", "", 19) == 0);
  /* the same model from a file */
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  static float v[30][40];
  for (int k = 0; k < 30; k++)
    for (int i = 0; i < 40; i++) v[k][i] = k < 20 ? 1500.0f : 2500.0f;
  size_t shape[2] = {30, 40};
  CHECK_OK(strata_npy_write(ctx, tp("two.npy"), STRATA_F32, 2, shape, v),
           ctx);
  strata_context_destroy(&ctx);
  CHECK(line_at("[model]\nvelocity = two.npy\n", "", 19) == 0);
  /* a jump below the threshold, and a constant model: none */
  CHECK(line_at("[wave]\nlayer_tops = 0, 195\n"
                "layer_velocities = 2000, 2080\n", "", -1) == 0);
  CHECK(line_at("[wave]\nlayer_tops = 0, 195\n"
                "layer_velocities = 2000, 2080\n",
                "--set output.interface_threshold=0.03", 19) == 0);
  CHECK(line_at("[wave]\nlayer_tops = 0, 195\n"
                "layer_velocities = 2000, 2000\n", "", -1) == 0);
  return 0;
}

TEST(cleanup) {
  if (dir[0]) rm_rf(dir);
  return 0;
}

RUN_TESTS(model_npy_and_segy_run_as_the_library,
          bad_models_refused_with_the_reason,
          interfaces_drawn_over_the_snapshots, cleanup)
