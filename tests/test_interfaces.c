/* A model's interfaces: marked where neighbouring values jump by more than
 * the threshold (strata_model_interfaces, strata_wave_interfaces on dense
 * models and on layers), and drawn as lines over PNG images
 * (strata_png_options.lines): a two-layer model's line at the interface's
 * pixel row, flipped too, a vertical interface's column, none for a
 * constant model, through the snapshot writer (which keeps its own copy
 * of the lines) and the PNG in memory. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reference.h"
#include "runner.h"

static char tmpdir[256];

static const char *tpath(const char *name) {
  static char buf[512];
  snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
  return buf;
}

static strata_context *cpu(void) {
  if (!tmpdir[0]) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/strata_test_interfaces.XXXXXX");
    if (!mkdtemp(tmpdir)) return NULL;
  }
  return strata_test_cpu_context();
}

/* The bits mask[q] must hold, else 0: want[q] (NULL: none anywhere). */
static int mask_is(const unsigned char *mask, const unsigned char *want,
                   size_t n) {
  for (size_t q = 0; q < n; q++)
    CHECKF(mask[q] == (want ? want[q] : 0), "point %zu: bits %d, want %d",
           q, mask[q], want ? want[q] : 0);
  return 0;
}

TEST(interfaces_marked_where_values_jump) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  /* two layers: the jump between z = 3 and 4 on every column */
  enum { NX = 5, NY = 4, NZ = 9, N = NX * NY * NZ };
  const size_t n[3] = {NX, NY, NZ};
  double v[N];
  unsigned char m[N], want[N];
  for (size_t q = 0; q < N; q++) {
    v[q] = q / (NX * NY) < 4 ? 1500 : 2500;
    want[q] = q / (NX * NY) == 3 ? 4 : 0;
  }
  memset(m, 0, sizeof m);
  size_t count = 0;
  CHECK_OK(strata_model_interfaces(ctx, n, v, 0.05, m, &count), ctx);
  CHECK(mask_is(m, want, N) == 0 && count == NX * NY);
  /* a constant model has none */
  for (size_t q = 0; q < N; q++) v[q] = 1800;
  memset(m, 0, sizeof m);
  CHECK_OK(strata_model_interfaces(ctx, n, v, 0, m, &count), ctx);
  CHECK(mask_is(m, NULL, N) == 0 && count == 0);
  /* bits add up: a density jump along x at x = 1 | 2, into the velocity's
   * mask (the two layers again) */
  double rho[N];
  for (size_t q = 0; q < N; q++) {
    v[q] = q / (NX * NY) < 4 ? 1500 : 2500;
    rho[q] = q % NX < 2 ? 1000 : 2000;
    want[q] = (unsigned char)((q / (NX * NY) == 3 ? 4 : 0) |
                              (q % NX == 1 ? 1 : 0));
  }
  memset(m, 0, sizeof m);
  CHECK_OK(strata_model_interfaces(ctx, n, v, 0.05, m, NULL), ctx);
  CHECK_OK(strata_model_interfaces(ctx, n, rho, 0.05, m, &count), ctx);
  CHECK(mask_is(m, want, N) == 0 && count == NY * (NX + NZ - 1));
  /* along one column: the threshold (4% no, 6% yes), a jump spread over
   * two equal steps (once, at the first), a thin layer (both sides) */
  const size_t c[3] = {1, 1, 12};
  const double col[12] = {1000, 1040, 1040, 1104, 1104, 1232,
                          1360, 1360, 1600, 1360, 1360, 1360};
  const unsigned char cw[12] = {0, 0, 4, 0, 4, 0, 0, 4, 4, 0, 0, 0};
  unsigned char cm[12] = {0};
  CHECK_OK(strata_model_interfaces(ctx, c, col, 0.05, cm, &count), ctx);
  CHECK(mask_is(cm, cw, 12) == 0 && count == 4);
  /* a larger second step wins over the first */
  const double up[4] = {1000, 1100, 1300, 1300};
  const unsigned char uw[4] = {0, 4, 0, 0};
  const size_t c4[3] = {1, 1, 4};
  memset(cm, 0, sizeof cm);
  CHECK_OK(strata_model_interfaces(ctx, c4, up, 0.05, cm, NULL), ctx);
  CHECK(mask_is(cm, uw, 4) == 0);
  /* refusals */
  CHECK_STATUS(strata_model_interfaces(ctx, n, v, -0.1, m, NULL),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "threshold", "-0.1");
  CHECK_STATUS(strata_model_interfaces(ctx, n, v, NAN, m, NULL),
               STRATA_EINVAL, ctx);
  const size_t bad[3] = {5, 0, 9};
  CHECK_STATUS(strata_model_interfaces(ctx, bad, v, 0.05, m, NULL),
               STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_model_interfaces(ctx, n, NULL, 0.05, m, NULL),
               STRATA_EINVAL, ctx);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(wave_interfaces_of_layers_and_models) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_wave_options o;
  strata_wave_options_init(&o);
  enum { NX = 6, NZ = 10, N = NX * NZ };
  o.n[0] = NX;
  o.n[1] = 1;
  o.n[2] = NZ;
  o.h = 10;
  /* the second layer's top at 45 m: node z = 40 (k 4) is the first
   * layer's, z = 50 the second's */
  double top[2] = {0, 45}, vel[2] = {1500, 2000}, rho[2] = {1000, 1000};
  o.nlayers = 2;
  o.layer_top = top;
  o.layer_velocity = vel;
  unsigned char m[N], want[N];
  for (size_t q = 0; q < N; q++) want[q] = q / NX == 4 ? 4 : 0;
  size_t count = 0;
  memset(m, 0, sizeof m);
  CHECK_OK(strata_wave_interfaces(ctx, &o, NULL, NULL, 0.05, m, &count), ctx);
  CHECK(mask_is(m, want, N) == 0 && count == NX);
  /* a density contrast alone is an interface too; equal layers are not */
  vel[1] = 1500;
  o.layer_density = rho;
  memset(m, 0, sizeof m);
  CHECK_OK(strata_wave_interfaces(ctx, &o, NULL, NULL, 0.05, m, &count), ctx);
  CHECK(mask_is(m, NULL, N) == 0 && count == 0);
  rho[1] = 2200;
  CHECK_OK(strata_wave_interfaces(ctx, &o, NULL, NULL, 0.05, m, &count), ctx);
  CHECK(mask_is(m, want, N) == 0 && count == NX);
  /* a constant model: none */
  o.nlayers = 0;
  o.layer_density = NULL;
  memset(m, 0, sizeof m);
  CHECK_OK(strata_wave_interfaces(ctx, &o, NULL, NULL, 0.05, m, &count), ctx);
  CHECK(count == 0 && mask_is(m, NULL, N) == 0);
  /* dense models: those of strata_model_interfaces, velocity and density */
  double v[N], d[N];
  for (size_t q = 0; q < N; q++) {
    v[q] = q % NX < 3 ? 1500 : 3000;
    d[q] = q / NX < 7 ? 1000 : 1200;
    want[q] = (unsigned char)((q % NX == 2 ? 1 : 0) | (q / NX == 6 ? 4 : 0));
  }
  CHECK_OK(strata_wave_interfaces(ctx, &o, v, d, 0.05, m, &count), ctx);
  CHECK(mask_is(m, want, N) == 0 && count == NZ + NX - 1);
  /* layers create refuses are refused here too */
  o.nlayers = 2;
  top[0] = 5;
  CHECK_STATUS(strata_wave_interfaces(ctx, &o, NULL, NULL, 0.05, m, NULL),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "layer_top[0]", "5");
  CHECK_STATUS(strata_wave_interfaces(ctx, &o, v, NULL, -1, m, NULL),
               STRATA_EINVAL, ctx);
  strata_context_destroy(&ctx);
  return 0;
}

/* The bare image of an x-z section (NX x 1 x NZ, gray, value 0.5 of 0..1,
 * cells of S pixels from (8, 8)): *rgb (malloc'd) of *w x *h. */
enum { S = 3, NX = 6, NZ = 10, N = NX * NZ };
static void bare_options(strata_png_options *po, const unsigned char *lines,
                         int flip) {
  strata_png_options_init(po);
  po->axis = 1;
  po->index = 0;
  po->cmap = STRATA_CMAP_GRAY;
  po->lo = 0;
  po->hi = 1;
  po->axes = 0;
  po->colorbar = 0;
  po->scale = S;
  po->flip = flip;
  po->lines = lines;
}

/* Every plot pixel is black on the rows in ys (NULL: none) and the
 * columns in xs, else the field's grey. */
static int plot_has_lines(const unsigned char *rgb, size_t w, size_t h,
                          long yline, long xline) {
  CHECKF(w == NX * S + 16 && h == NZ * S + 16, "%zu x %zu", w, h);
  for (long y = 8; y < 8 + NZ * S; y++)
    for (long x = 8; x < 8 + NX * S; x++) {
      const unsigned char *px = rgb + 3 * ((size_t)y * w + (size_t)x);
      int line = y == yline || x == xline;
      CHECKF(line ? px[0] == 0 && px[1] == 0 && px[2] == 0
                  : abs(px[0] - 128) <= 1 && px[0] == px[1] && px[1] == px[2],
             "pixel (%ld, %ld) = %d %d %d, %s", x, y, px[0], px[1], px[2],
             line ? "want the line's black" : "want the field's grey");
    }
  return 0;
}

TEST(lines_drawn_at_the_interfaces) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_wave_options o;
  strata_wave_options_init(&o);
  o.n[0] = NX;
  o.n[1] = 1;
  o.n[2] = NZ;
  o.h = 10;
  double top[2] = {0, 45}, vel[2] = {1500, 2500};
  o.nlayers = 2;
  o.layer_top = top;
  o.layer_velocity = vel;
  unsigned char *mask = calloc(N, 1);
  float field[N];
  for (size_t q = 0; q < N; q++) field[q] = 0.5f;
  CHECK(mask);
  CHECK_OK(strata_wave_interfaces(ctx, &o, NULL, NULL, 0.05, mask, NULL), ctx);
  /* through the snapshot writer, which copies the lines: the caller's
   * mask is gone before the file is written */
  strata_snapshot_options so;
  strata_snapshot_options_init(&so);
  so.dir = tmpdir;
  so.npy = 0;
  so.async = 0;
  bare_options(&so.png_options, mask, 0);
  const strata_field_desc d = {3, {NX, 1, NZ}, 1, STRATA_F32};
  strata_snapshot_writer *sw = NULL;
  CHECK_OK(strata_snapshot_writer_create(ctx, &d, &so, &sw), ctx);
  memset(mask, 0xff, N);
  free(mask);
  float *host = strata_snapshot_acquire(sw);
  CHECK(host);
  memcpy(host, field, sizeof field);
  CHECK_OK(strata_snapshot_submit_host(sw, host, "two"), ctx);
  CHECK_OK(strata_snapshot_flush(sw), ctx);
  strata_snapshot_writer_destroy(&sw);
  size_t w, h;
  unsigned char *rgb = ref_png_decode(tpath("two.png"), &w, &h);
  CHECK(rgb);
  /* the bottom row of the cells of z = 40 m (k 4) */
  CHECK(plot_has_lines(rgb, w, h, 8 + 5 * S - 1, -1) == 0);
  free(rgb);
  /* flipped: the top row of those cells, next to the deeper layer above */
  unsigned char m2[N] = {0};
  CHECK_OK(strata_wave_interfaces(ctx, &o, NULL, NULL, 0.05, m2, NULL), ctx);
  strata_png_options po;
  bare_options(&po, m2, 1);
  const size_t n[3] = {NX, 1, NZ};
  void *png = NULL;
  size_t size = 0;
  CHECK_OK(strata_png_encode_grid(ctx, STRATA_F32, 3, n, field, &po, &png,
                                  &size), ctx);
  FILE *fp = fopen(tpath("flip.png"), "wb");
  CHECK(fp && fwrite(png, 1, size, fp) == size && fclose(fp) == 0);
  free(png);
  rgb = ref_png_decode(tpath("flip.png"), &w, &h);
  CHECK(rgb);
  CHECK(plot_has_lines(rgb, w, h, 8 + (NZ - 1 - 4) * S, -1) == 0);
  free(rgb);
  /* a vertical interface between x = 2 and 3 and the layers: a column on
   * the right of the cells of x = 2, and the row */
  double v[N];
  for (size_t q = 0; q < N; q++) v[q] = q % NX < 3 ? 1500 : 3000;
  memset(m2, 0, sizeof m2);
  CHECK_OK(strata_wave_interfaces(ctx, &o, v, NULL, 0.05, m2, NULL), ctx);
  CHECK_OK(strata_wave_interfaces(ctx, &o, NULL, NULL, 0.05, m2, NULL), ctx);
  bare_options(&po, m2, 0);
  CHECK_OK(strata_png_encode_grid(ctx, STRATA_F32, 3, n, field, &po, &png,
                                  &size), ctx);
  fp = fopen(tpath("xz.png"), "wb");
  CHECK(fp && fwrite(png, 1, size, fp) == size && fclose(fp) == 0);
  free(png);
  rgb = ref_png_decode(tpath("xz.png"), &w, &h);
  CHECK(rgb);
  CHECK(plot_has_lines(rgb, w, h, 8 + 5 * S - 1, 8 + 3 * S - 1) == 0);
  free(rgb);
  /* the same lines over a w x h array: bit 0 across, bit 1 down */
  for (size_t q = 0; q < N; q++)
    m2[q] = (unsigned char)((q / NX == 4 ? 2 : 0) | (q % NX == 2 ? 1 : 0));
  CHECK_OK(strata_png_write_image(ctx, tpath("xz.png"), STRATA_F32, NX, NZ,
                                  field, &po), ctx);
  rgb = ref_png_decode(tpath("xz.png"), &w, &h);
  CHECK(rgb);
  CHECK(plot_has_lines(rgb, w, h, 8 + 5 * S - 1, 8 + 3 * S - 1) == 0);
  free(rgb);
  /* a constant model: no line, the image of no lines at all */
  o.nlayers = 0;
  memset(m2, 0, sizeof m2);
  CHECK_OK(strata_wave_interfaces(ctx, &o, NULL, NULL, 0.05, m2, NULL), ctx);
  bare_options(&po, m2, 0);
  CHECK_OK(strata_png_write_image(ctx, tpath("c.png"), STRATA_F32, NX, NZ,
                                  field, &po), ctx);
  rgb = ref_png_decode(tpath("c.png"), &w, &h);
  CHECK(rgb);
  CHECK(plot_has_lines(rgb, w, h, -1, -1) == 0);
  free(rgb);
  remove(tpath("two.png"));
  remove(tpath("flip.png"));
  remove(tpath("xz.png"));
  remove(tpath("c.png"));
  strata_context_destroy(&ctx);
  return 0;
}

TEST(cleanup) {
  if (tmpdir[0]) CHECK(rmdir(tmpdir) == 0);
  return 0;
}

RUN_TESTS(interfaces_marked_where_values_jump,
          wave_interfaces_of_layers_and_models, lines_drawn_at_the_interfaces,
          cleanup)
