/* Earth models from files: SEG-Y (written here byte by byte: IBM floats
 * against known words, both byte orders, trace order and inline/crossline
 * headers in any order), raw samples and .npy in every axis order, read
 * back exactly; bad files and non-physical models refused with the
 * reason; resampling against analytic fields (trilinear reproduces
 * multilinear fields); the wave solver's model check naming the point at
 * fault.  python_files reads what numpy and segyio wrote
 * (tests/model_files.py, run by the model_npy and model_segyio tests). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

static char tmpdir[256];

static const char *tpath(const char *name) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
  return buf[k];
}

static strata_context *cpu(void) {
  if (!tmpdir[0]) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/strata_test_model.XXXXXX");
    if (!mkdtemp(tmpdir)) return NULL;
  }
  return strata_test_cpu_context();
}

static int write_bytes(const char *path, const void *p, size_t n) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return -1;
  size_t w = fwrite(p, 1, n, fp);
  return fclose(fp) == 0 && w == n ? 0 : -1;
}

/* The test field: sample (i, j, k) along x, y, z. */
static double fval(size_t i, size_t j, size_t k) {
  return 1500.25 + 3.0 * (double)i + 7.0 * (double)j + 11.0 * (double)k;
}

/* m holds fval everywhere, exactly, with shape nx, ny, nz. */
static int holds_field(const strata_model *m, int dims, size_t nx, size_t ny,
                       size_t nz) {
  CHECKF(m->dims == dims && m->n[0] == nx && m->n[1] == ny && m->n[2] == nz,
         "dims %d, shape %zu %zu %zu", m->dims, m->n[0], m->n[1], m->n[2]);
  for (size_t k = 0; k < nz; k++)
    for (size_t j = 0; j < ny; j++)
      for (size_t i = 0; i < nx; i++) {
        double v = m->data[(k * ny + j) * nx + i];
        CHECKF(v == fval(i, j, k), "(%zu,%zu,%zu) = %.17g", i, j, k, v);
      }
  return 0;
}

/* ---- SEG-Y written by hand ------------------------------------------------ */

static void put(unsigned char *p, uint64_t v, int bytes, int big) {
  for (int b = 0; b < bytes; b++)
    p[big ? bytes - 1 - b : b] = (unsigned char)(v >> (8 * b));
}

/* A SEG-Y file of ntr traces of ns samples of format code, given as
 * words (bytes es each, native integers), il / xl numbers per trace. */
static int write_segy(const char *path, int code, int big, size_t ns,
                      size_t ntr, const uint64_t *words, const int32_t *il,
                      const int32_t *xl) {
  size_t es = code == 3 ? 2 : code == 8 ? 1 : 4;
  size_t n = 3600 + ntr * (240 + ns * es);
  unsigned char *b = calloc(n, 1);
  if (!b) return -1;
  memset(b, 0x40, 3200); /* EBCDIC blanks */
  put(b + 3216, 1000, 2, big);
  put(b + 3220, ns, 2, big);
  put(b + 3224, (uint64_t)code, 2, big);
  put(b + 3500, 0x0100, 2, big);
  for (size_t t = 0; t < ntr; t++) {
    unsigned char *h = b + 3600 + t * (240 + ns * es);
    put(h + 114, ns, 2, big);
    put(h + 188, (uint32_t)(il ? il[t] : 0), 4, big);
    put(h + 192, (uint32_t)(xl ? xl[t] : 0), 4, big);
    for (size_t s = 0; s < ns; s++)
      put(h + 240 + s * es, words[t * ns + s], (int)es, big);
  }
  int r = write_bytes(path, b, n);
  free(b);
  return r;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

TEST(segy_ibm_known_values) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  /* words and their values (the second from SEG-Y's own example) */
  static const uint64_t w[8] = {0x42640000, 0xC276A000, 0x435DC000,
                                0x42064000, 0x00000000, 0x41100000,
                                0x3F800000, 0x7FFFFFFF};
  const double want[8] = {100.0, -118.625, 1500.0, 6.25, 0.0, 1.0, 0.03125,
                          (1.0 - ldexp(1, -24)) * ldexp(1, 252)};
  for (int big = 1; big >= 0; big--) {
    CHECK(write_segy(tpath("ibm.sgy"), 1, big, 4, 2, w, NULL, NULL) == 0);
    strata_model_file f;
    strata_model_file_init(&f);
    f.path = tpath("ibm.sgy");
    strata_model m;
    CHECK_OK(strata_model_read(ctx, &f, &m), ctx);
    CHECK(m.dims == 2 && m.n[0] == 2 && m.n[1] == 1 && m.n[2] == 4);
    for (size_t t = 0; t < 2; t++)
      for (size_t s = 0; s < 4; s++)
        CHECKF(m.data[s * 2 + t] == want[t * 4 + s], "%s-endian word %zu: "
               "%.17g", big ? "big" : "little", t * 4 + s, m.data[s * 2 + t]);
    strata_model_free(&m);
    CHECK(m.data == NULL);
  }
  remove(tpath("ibm.sgy"));
  strata_context_destroy(&ctx);
  return 0;
}

TEST(segy_geometries) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  enum { NX = 4, NY = 3, NZ = 5, NT = NX * NY };
  uint64_t w[NT * NZ];
  int32_t il[NT], xl[NT];
  /* traces in reverse order, inlines 20, 25, 30 along y, crosslines 1..4 */
  for (size_t t = 0; t < NT; t++) {
    size_t q = NT - 1 - t, i = q % NX, j = q / NX;
    il[t] = 20 + 5 * (int32_t)j;
    xl[t] = 1 + (int32_t)i;
    for (size_t k = 0; k < NZ; k++)
      w[t * NZ + k] = f32_bits((float)fval(i, j, k));
  }
  strata_model_file f;
  strata_model_file_init(&f);
  f.path = tpath("hdr.sgy");
  strata_model m;
  CHECK(write_segy(f.path, 5, 1, NZ, NT, w, il, xl) == 0);
  CHECK_OK(strata_model_read(ctx, &f, &m), ctx); /* AUTO: headers */
  CHECK(holds_field(&m, 3, NX, NY, NZ) == 0);
  strata_model_free(&m);
  /* the same cube in file order, no headers: lines of segy_nx traces */
  for (size_t t = 0; t < NT; t++)
    for (size_t k = 0; k < NZ; k++)
      w[t * NZ + k] = f32_bits((float)fval(t % NX, t / NX, k));
  CHECK(write_segy(f.path, 5, 0, NZ, NT, w, NULL, NULL) == 0);
  f.segy_nx = NX;
  CHECK_OK(strata_model_read(ctx, &f, &m), ctx);
  CHECK(holds_field(&m, 3, NX, NY, NZ) == 0);
  strata_model_free(&m);
  f.segy_nx = 5; /* 12 traces are not lines of 5 */
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "segy_nx", "5");
  CHECK(m.data == NULL);
  f.segy_nx = 0;
  f.axes = "zyx"; /* SEG-Y's axes are its traces and samples */
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "axes", "set");
  CHECK(strstr(strata_context_error(ctx), "does not apply to a SEG-Y file"));
  f.axes = NULL;
  /* 16-bit integers, 2D */
  for (size_t q = 0; q < NX * NZ; q++) w[q] = (uint16_t)(int16_t)(q * 100 - 300);
  CHECK(write_segy(f.path, 3, 1, NZ, NX, w, NULL, NULL) == 0);
  f.segy_nx = 0;
  CHECK_OK(strata_model_read(ctx, &f, &m), ctx);
  CHECK(m.dims == 2 && m.n[0] == NX && m.n[2] == NZ);
  CHECK(m.data[1 * NX + 2] == 2.0 * NZ * 100 + 100 - 300);
  strata_model_free(&m);
  remove(f.path);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(segy_bad_files_refused) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  uint64_t w[12] = {0};
  int32_t il[4] = {1, 1, 2, 2}, xl[4] = {1, 2, 1, 1};
  strata_model_file f;
  strata_model_file_init(&f);
  f.path = tpath("bad.sgy");
  strata_model m;
  /* a repeated inline/crossline pair */
  CHECK(write_segy(f.path, 5, 1, 3, 4, w, il, xl) == 0);
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EFORMAT, ctx);
  CHECK(strstr(strata_context_error(ctx), "repeats inline 2 crossline 1"));
  /* inlines off a regular lattice */
  int32_t il2[4] = {1, 1, 2, 2}, il3[6] = {1, 1, 2, 2, 4, 4},
          xl3[6] = {1, 2, 1, 2, 1, 2};
  (void)il2;
  CHECK(write_segy(f.path, 5, 1, 2, 6, w, il3, xl3) == 0);
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EFORMAT, ctx);
  CHECK(strstr(strata_context_error(ctx), "not a full regular lattice"));
  /* truncated: the last trace short by a byte */
  CHECK(write_segy(f.path, 5, 1, 3, 4, w, NULL, NULL) == 0);
  CHECK(truncate(f.path, 3600 + 4 * (240 + 12) - 1) == 0);
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EFORMAT, ctx);
  CHECK(strstr(strata_context_error(ctx), "not a whole number of traces"));
  /* an unknown sample format */
  CHECK(write_segy(f.path, 5, 1, 3, 4, w, NULL, NULL) == 0);
  {
    FILE *fp = fopen(f.path, "r+b");
    CHECK(fp && fseek(fp, 3224, SEEK_SET) == 0);
    fputc(0, fp);
    fputc(4, fp);
    fclose(fp);
  }
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EFORMAT, ctx);
  CHECK(strstr(strata_context_error(ctx), "format code 4"));
  /* too short to be SEG-Y */
  CHECK(write_bytes(f.path, "abc", 3) == 0);
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EFORMAT, ctx);
  CHECK(strstr(strata_context_error(ctx), "not SEG-Y"));
  CHECK(m.data == NULL);
  remove(f.path);
  /* a missing file, and a name that does not tell the format */
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EIO, ctx);
  CHECK_ARG(ctx, "path", f.path);
  f.path = tpath("model.dat");
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "format", "0");
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- raw and .npy ---------------------------------------------------------- */

TEST(raw_and_npy_axis_orders) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  enum { NX = 5, NY = 4, NZ = 3, N = NX * NY * NZ };
  /* big-endian f64 in x, y, z order (z fastest) */
  unsigned char be[N * 8];
  float zyx[N];
  size_t q = 0;
  for (size_t i = 0; i < NX; i++)
    for (size_t j = 0; j < NY; j++)
      for (size_t k = 0; k < NZ; k++, q++) {
        double v = fval(i, j, k);
        uint64_t u;
        memcpy(&u, &v, 8);
        put(be + q * 8, u, 8, 1);
        zyx[(k * NY + j) * NX + i] = (float)v;
      }
  strata_model_file f;
  strata_model_file_init(&f);
  f.path = tpath("m.bin");
  f.format = STRATA_MODEL_RAW;
  f.ndim = 3;
  f.axes = "xyz";
  f.shape[0] = NX;
  f.shape[1] = NY;
  f.shape[2] = NZ;
  f.precision = STRATA_F64;
  f.big_endian = 1;
  strata_model m;
  CHECK(write_bytes(f.path, be, sizeof be) == 0);
  CHECK_OK(strata_model_read(ctx, &f, &m), ctx);
  CHECK(holds_field(&m, 3, NX, NY, NZ) == 0);
  strata_model_free(&m);
  /* a stated shape the file's size does not match: both numbers */
  f.shape[2] = NZ + 1;
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EFORMAT, ctx);
  CHECK(strstr(strata_context_error(ctx), "has 480 bytes") &&
        strstr(strata_context_error(ctx), "needs 640"));
  f.shape[2] = NZ;
  f.axes = "xxz";
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "axes", "xxz");
  remove(f.path);
  /* .npy in strata's own order (nz, ny, nx) */
  size_t shape[3] = {NZ, NY, NX};
  f.path = tpath("m.npy");
  CHECK_OK(strata_npy_write(ctx, f.path, STRATA_F32, 3, shape, zyx), ctx);
  strata_model_file_init(&f);
  f.path = tpath("m.npy");
  CHECK_OK(strata_model_read(ctx, &f, &m), ctx);
  CHECK(holds_field(&m, 3, NX, NY, NZ) == 0);
  strata_model_free(&m);
  /* the same bytes read as (nx, nz) would be a 2D section: refused as
   * 3 axes are not 2 */
  f.axes = "xz";
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EINVAL, ctx);
  /* a 1D array is no model */
  CHECK_OK(strata_npy_write(ctx, f.path, STRATA_F32, 1, shape, zyx), ctx);
  f.axes = NULL;
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EFORMAT, ctx);
  CHECK(strstr(strata_context_error(ctx), "has 1 axes"));
  remove(f.path);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(npy_forged_shape_refused_before_allocating) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  /* a header declaring 2^40 samples over 8 bytes of data: refused as
   * truncated, not tried as an allocation of 4 TiB */
  char head[128];
  int len = snprintf(head, sizeof head, "{'descr': '<f4', 'fortran_order': "
                     "False, 'shape': (1099511627776,), }");
  while ((10 + len + 1) % 64) head[len++] = ' ';
  head[len++] = '\n';
  unsigned char file[256] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)len, 0};
  memcpy(file + 10, head, (size_t)len);
  CHECK(write_bytes(tpath("forged.npy"), file, 10 + (size_t)len + 8) == 0);
  strata_model_file f;
  strata_model_file_init(&f);
  f.path = tpath("forged.npy");
  strata_model m;
  CHECK_STATUS(strata_model_read(ctx, &f, &m), STRATA_EFORMAT, ctx);
  CHECK(strstr(strata_context_error(ctx), "is truncated"));
  remove(f.path);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- physical checks -------------------------------------------------------- */

TEST(non_physical_models_refused) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  double d[24];
  for (int q = 0; q < 24; q++) d[q] = 1500 + q;
  strata_model m = {3, {4, 3, 2}, {10, 10, 5}, {0, 0, 100}, d};
  double lo, hi;
  CHECK_OK(strata_model_check(ctx, &m, "velocity", &lo, &hi), ctx);
  CHECK(lo == 1500 && hi == 1523);
  const double bad[3] = {NAN, -1, 0};
  for (int b = 0; b < 3; b++) {
    d[1 + 2 * 4 + 12] = bad[b]; /* sample (1, 2, 1) */
    CHECK_STATUS(strata_model_check(ctx, &m, "velocity", NULL, NULL),
                 STRATA_EINVAL, ctx);
    const char *e = strata_context_error(ctx);
    CHECKF(strstr(e, "sample (1, 2, 1) at x = 10, y = 20, z = 105 m"), "%s",
           e);
    CHECK(!strcmp(strata_context_error_arg(ctx), "velocity"));
  }
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- resampling ------------------------------------------------------------ */

static double lin3(double x, double y, double z) {
  return 1000 + 2.5 * x - 1.25 * y + 4 * z + 0.01 * x * y * z;
}

TEST(resample_analytic_fields) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  /* a model of spacing 7, 5, 3 m from (-10, -4, -2) m holding a
   * multilinear field, on a grid of h = 2 m: trilinear reproduces it */
  enum { MX = 10, MY = 8, MZ = 13 };
  static double d[MX * MY * MZ];
  strata_model m = {3, {MX, MY, MZ}, {7, 5, 3}, {-10, -4, -2}, d};
  for (size_t k = 0; k < MZ; k++)
    for (size_t j = 0; j < MY; j++)
      for (size_t i = 0; i < MX; i++)
        d[(k * MY + j) * MX + i] = lin3(-10 + 7.0 * (double)i,
                                        -4 + 5.0 * (double)j,
                                        -2 + 3.0 * (double)k);
  size_t n[3] = {27, 15, 18};
  double *out = malloc(27 * 15 * 18 * sizeof *out);
  CHECK(out);
  CHECK_OK(strata_model_resample(ctx, &m, n, 2.0, STRATA_RESAMPLE_LINEAR, out),
           ctx);
  double err = 0;
  for (size_t k = 0; k < n[2]; k++)
    for (size_t j = 0; j < n[1]; j++)
      for (size_t i = 0; i < n[0]; i++) {
        double want = lin3(2.0 * (double)i, 2.0 * (double)j, 2.0 * (double)k);
        double e = fabs(out[(k * n[1] + j) * n[0] + i] - want) / want;
        if (e > err) err = e;
      }
  CHECKF(err < 1e-13, "relative error %g", err);
  /* nearest: a model of spacing 4 on a grid of h = 2 from 0 takes the
   * lower sample at the ties (odd points), the same one at even points */
  strata_model m2 = {3, {MX, MY, MZ}, {4, 4, 4}, {0, 0, 0}, d};
  size_t n2[3] = {17, 11, 20};
  CHECK_OK(strata_model_resample(ctx, &m2, n2, 2.0, STRATA_RESAMPLE_NEAREST,
                                 out), ctx);
  for (size_t k = 0; k < n2[2]; k++)
    for (size_t j = 0; j < n2[1]; j++)
      for (size_t i = 0; i < n2[0]; i++)
        CHECK(out[(k * n2[1] + j) * n2[0] + i] ==
              d[(k / 2 * MY + j / 2) * MX + i / 2]);
  /* the model ends at 36 m along x; a grid to 40 m is refused */
  n2[0] = 21;
  CHECK_STATUS(strata_model_resample(ctx, &m2, n2, 2.0,
                                     STRATA_RESAMPLE_LINEAR, out),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "origin[0]", "0");
  CHECKF(strstr(strata_context_error(ctx), "along x it covers [0, 36] m") &&
         strstr(strata_context_error(ctx), "grid spans [0, 40] m"), "%s",
         strata_context_error(ctx));
  /* a model starting below the top is refused along z */
  n2[0] = 17;
  m2.origin[2] = 1;
  CHECK_STATUS(strata_model_resample(ctx, &m2, n2, 2.0,
                                     STRATA_RESAMPLE_LINEAR, out),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "origin[2]", "1");
  m2.origin[2] = 0;
  m2.spacing[1] = 0;
  CHECK_STATUS(strata_model_resample(ctx, &m2, n2, 2.0,
                                     STRATA_RESAMPLE_LINEAR, out),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "spacing[1]", "0");
  /* a 2D section (x, z) is the same at every y */
  static double sec[MX * MZ]; /* the model's first y */
  for (size_t k = 0; k < MZ; k++)
    for (size_t i = 0; i < MX; i++) sec[k * MX + i] = d[k * MY * MX + i];
  strata_model s = {2, {MX, 1, MZ}, {7, 0, 3}, {-10, 0, -2}, sec};
  CHECK_OK(strata_model_resample(ctx, &s, n, 2.0, STRATA_RESAMPLE_LINEAR,
                                 out), ctx);
  for (size_t k = 0; k < n[2]; k++)
    for (size_t j = 0; j < n[1]; j++)
      for (size_t i = 0; i < n[0]; i++) {
        double want = lin3(2.0 * (double)i, -4, 2.0 * (double)k);
        CHECK(fabs(out[(k * n[1] + j) * n[0] + i] - want) < 1e-9 * want);
      }
  free(out);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- the wave solver's check -------------------------------------------- */

TEST(wave_model_check_names_the_point) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_wave_options o;
  strata_wave_options_init(&o);
  o.n[0] = 12;
  o.n[1] = 10;
  o.n[2] = 8;
  o.h = 10;
  o.f0 = 10;
  size_t cnt = 12 * 10 * 8;
  double *v = malloc(cnt * sizeof *v);
  CHECK(v);
  for (size_t q = 0; q < cnt; q++) v[q] = 2000;
  v[(5 * 10 + 4) * 12 + 3] = 4000; /* the fastest point (3, 4, 5) */
  v[(7 * 10 + 9) * 12 + 11] = 1500; /* the slowest (11, 9, 7) */
  strata_wave_model_info in;
  CHECK_OK(strata_wave_check_model(ctx, &o, v, &in), ctx);
  CHECK(in.vmin == 1500 && in.vmax == 4000);
  CHECK(in.at_max[0] == 3 && in.at_max[1] == 4 && in.at_max[2] == 5);
  CHECK(in.at_min[0] == 11 && in.at_min[1] == 9 && in.at_min[2] == 7);
  CHECK(fabs(in.cfl - 0.8 * in.cfl_limit) < 1e-12);
  CHECK(fabs(in.ppw - 1500.0 / (25.0 * 10)) < 1e-12);
  /* a dt fine for 2000 m/s but not for the fast point */
  o.dt = 1.1 * in.cfl_limit * 10 / 4000;
  CHECK_STATUS(strata_wave_check_model(ctx, &o, v, NULL), STRATA_EUNSTABLE,
               ctx);
  CHECKF(strstr(strata_context_error(ctx), "fastest point (3, 4, 5) at x = "
                "30, y = 40, z = 50 m"), "%s", strata_context_error(ctx));
  CHECK_ARG(ctx, "v", "4000");
  /* a frequency fine for 2000 m/s but not for the slow point */
  o.dt = 0;
  o.f0 = 1500.0 / (2.5 * 10 * 4) * 1.05;
  CHECK_STATUS(strata_wave_check_model(ctx, &o, v, NULL), STRATA_EUNSTABLE,
               ctx);
  CHECKF(strstr(strata_context_error(ctx), "slowest point (11, 9, 7) at x = "
                "110, y = 90, z = 70 m"), "%s", strata_context_error(ctx));
  o.f0 = 10;
  v[3] = -5;
  CHECK_STATUS(strata_wave_check_model(ctx, &o, v, NULL), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "point (3, 0, 0), x = 30"));
  /* the model's checked velocity goes to the solver; a density where the
   * solver has one */
  v[3] = 2000;
  o.velocity = 4000;
  for (int face = 0; face < 6; face++) o.face[face] = STRATA_WAVE_PERIODIC;
  strata_wave *w = NULL;
  CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
  CHECK_OK(strata_wave_set_velocity(w, v), ctx);
  strata_wave_info wi;
  CHECK_OK(strata_wave_get_info(w, &wi), ctx);
  CHECK(wi.vmin == 1500 && wi.vmax == 4000);
  for (size_t q = 0; q < cnt; q++) v[q] = 2200;
  strata_status s = strata_wave_set_density(w, v);
  strata_wave_destroy(&w);
  free(v);
  strata_context_destroy(&ctx);
  if (s == STRATA_ENOTSUP) SKIP("the wave solver has no variable density");
  CHECK(s == STRATA_OK);
  return 0;
}

/* ---- files numpy and segyio wrote ------------------------------------------ */

TEST(python_files) {
  const char *dir = getenv("STRATA_MODEL_FILES"), *what =
                    getenv("STRATA_MODEL_KIND");
  if (!dir || !what)
    SKIP("STRATA_MODEL_FILES unset (the model_npy and model_segyio tests "
         "set it)");
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  enum { NX = 7, NY = 5, NZ = 6 };
  char path[512];
  strata_model m;
  strata_model_file f;
  if (!strcmp(what, "npy")) {
    static const struct {
      const char *name, *axes;
      int raw_big, raw_prec, dims;
    } c[] = {{"zyx_f4.npy", NULL, 0, 0, 3}, {"xyz_f8.npy", "xyz", 0, 0, 3},
             {"zyx_fortran_f4.npy", "zyx", 0, 0, 3},
             {"zx_f8.npy", NULL, 0, 0, 2},  {"xz_f4.npy", "xz", 0, 0, 2},
             {"xyz_be_f4.bin", "xyz", 1, 4, 3},
             {"zyx_le_f8.bin", "zyx", 0, 8, 3}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
      strata_model_file_init(&f);
      snprintf(path, sizeof path, "%s/%s", dir, c[i].name);
      f.path = path;
      f.axes = c[i].axes;
      if (c[i].raw_prec) {
        f.format = STRATA_MODEL_RAW;
        f.ndim = 3;
        for (int a = 0; a < 3; a++)
          f.shape[a] = c[i].axes[a] == 'x' ? NX : c[i].axes[a] == 'y' ? NY : NZ;
        f.precision = (strata_precision)c[i].raw_prec;
        f.big_endian = c[i].raw_big;
      }
      CHECK_OK(strata_model_read(ctx, &f, &m), ctx);
      printf("  %s read back\n", c[i].name);
      CHECK(holds_field(&m, c[i].dims, NX, c[i].dims == 3 ? NY : 1, NZ) == 0);
      strata_model_free(&m);
    }
  } else {
    static const char *names[] = {"cube_ibm.sgy", "cube_ieee_shuffled.sgy",
                                  "section_ieee.sgy"};
    for (int i = 0; i < 3; i++) {
      strata_model_file_init(&f);
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      f.path = path;
      CHECK_OK(strata_model_read(ctx, &f, &m), ctx);
      printf("  %s read back\n", names[i]);
      CHECK(holds_field(&m, i < 2 ? 3 : 2, NX, i < 2 ? NY : 1, NZ) == 0);
      strata_model_free(&m);
    }
  }
  strata_context_destroy(&ctx);
  return 0;
}

TEST(cleanup) {
  if (tmpdir[0]) CHECK(rmdir(tmpdir) == 0);
  return 0;
}

RUN_TESTS(segy_ibm_known_values, segy_geometries, segy_bad_files_refused,
          raw_and_npy_axis_orders, npy_forged_shape_refused_before_allocating,
          non_physical_models_refused,
          resample_analytic_fields, wave_model_check_names_the_point,
          python_files, cleanup)
