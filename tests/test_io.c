/* The output writers, read back by plain independent parsers: .npy headers
 * and data, .vti XML and appended data, PNG chunks, zlib stream and pixels
 * (ref_png_decode: a bitwise CRC of the tests' own, zlib's inflate), SEG-Y
 * headers and big-endian samples.  Random data at odd sizes, fp32 and
 * fp64; and the temporary-name rule: nothing but the final file is left
 * behind, and a failed write leaves nothing. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* Files in tmpdir whose name contains ".tmp." (leftovers). */
static int leftovers(void) {
  DIR *d = opendir(tmpdir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".tmp.")) n++;
  if (d) closedir(d);
  return n;
}

static strata_context *cpu(void) {
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  strata_context *ctx = NULL;
  if (!tmpdir[0]) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/strata_test_io.XXXXXX");
    if (!mkdtemp(tmpdir)) return NULL;
  }
  if (strata_context_create(&ctx, &o) != STRATA_OK) return NULL;
  return ctx;
}

static double val(const void *p, strata_precision pr, size_t i) {
  return pr == STRATA_F32 ? ((const float *)p)[i] : ((const double *)p)[i];
}

static uint32_t le32(const unsigned char *p) {
  return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}
static unsigned be16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }

/* ---- npy ---------------------------------------------------------------- */

TEST(npy_fields_read_back) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  const size_t shapes[3][3] = {{37, 1, 1}, {13, 7, 1}, {11, 5, 3}};
  for (int dims = 1; dims <= 3; dims++)
    for (int pi = 0; pi < 2; pi++) {
      strata_precision p = pi ? STRATA_F64 : STRATA_F32;
      const size_t *n = shapes[dims - 1];
      strata_field *f = ref_random_field(ctx, dims, n[0], n[1], n[2], 2, p,
                                         100 + dims);
      CHECK(f);
      const char *path = tpath("f.npy");
      CHECK_OK(strata_field_save_npy(f, path), ctx);
      size_t len;
      unsigned char *b = ref_slurp(path, &len);
      CHECK(b);
      CHECK(memcmp(b, "\x93NUMPY\x01\x00", 8) == 0);
      size_t hl = b[8] | (size_t)b[9] << 8;
      CHECK((10 + hl) % 64 == 0);
      CHECK(b[10 + hl - 1] == '\n');
      char want[200];
      if (dims == 1)
        snprintf(want, sizeof want, "{'descr': '<f%d', 'fortran_order': "
                 "False, 'shape': (%zu,), }", (int)p, n[0]);
      else if (dims == 2)
        snprintf(want, sizeof want, "{'descr': '<f%d', 'fortran_order': "
                 "False, 'shape': (%zu, %zu), }", (int)p, n[1], n[0]);
      else
        snprintf(want, sizeof want, "{'descr': '<f%d', 'fortran_order': "
                 "False, 'shape': (%zu, %zu, %zu), }", (int)p, n[2], n[1],
                 n[0]);
      CHECKF(memcmp(b + 10, want, strlen(want)) == 0, "header %.*s",
             (int)hl, b + 10);
      for (size_t i = 10 + strlen(want); i < 10 + hl - 1; i++)
        CHECK(b[i] == ' ');
      size_t count = n[0] * n[1] * n[2];
      CHECK(len == 10 + hl + count * (size_t)p);
      void *host = malloc(count * (size_t)p);
      CHECK_OK(strata_field_read(f, host), ctx);
      CHECK(memcmp(b + 10 + hl, host, count * (size_t)p) == 0);
      /* and through the library's reader */
      strata_precision rp;
      int nd;
      size_t sh[4];
      void *data = NULL;
      CHECK_OK(strata_npy_read(ctx, path, &rp, &nd, sh, &data), ctx);
      CHECK(rp == p && nd == dims);
      for (int a = 0; a < dims; a++) CHECK(sh[a] == n[dims - 1 - a]);
      CHECK(memcmp(data, host, count * (size_t)p) == 0);
      /* values are not trivially equal: the data are random, not zero */
      CHECK(val(host, p, 0) != val(host, p, count - 1));
      free(data);
      free(host);
      free(b);
      strata_field_destroy(&f);
    }
  CHECK(leftovers() == 0);
  strata_context_destroy(&ctx);
  return 0;
}

static int write_bytes(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  size_t w = fwrite(p, 1, n, f);
  fclose(f);
  return w == n;
}

TEST(npy_bad_files_refused) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  double d[6] = {1, 2, 3, 4, 5, 6};
  size_t shape[2] = {2, 3};
  const char *path = tpath("g.npy");
  CHECK_OK(strata_npy_write(ctx, path, STRATA_F64, 2, shape, d), ctx);
  size_t len;
  unsigned char *b = ref_slurp(path, &len);
  CHECK(b);
  strata_precision p;
  int nd;
  size_t sh[4];
  void *data = NULL;
  const char *bad = tpath("bad.npy");
  /* truncated data */
  CHECK(write_bytes(bad, b, len - 3));
  CHECK_STATUS(strata_npy_read(ctx, bad, &p, &nd, sh, &data), STRATA_EFORMAT,
               ctx);
  CHECK(strstr(strata_context_error(ctx), "truncated"));
  /* extra data */
  unsigned char *b2 = malloc(len + 8);
  memcpy(b2, b, len);
  memset(b2 + len, 0, 8);
  CHECK(write_bytes(bad, b2, len + 8));
  CHECK_STATUS(strata_npy_read(ctx, bad, &p, &nd, sh, &data), STRATA_EFORMAT,
               ctx);
  /* another dtype */
  memcpy(b2, b, len);
  char *q = strstr((char *)b2 + 10, "<f8");
  CHECK(q);
  q[1] = 'i';
  CHECK(write_bytes(bad, b2, len));
  CHECK_STATUS(strata_npy_read(ctx, bad, &p, &nd, sh, &data), STRATA_EFORMAT,
               ctx);
  CHECK(strstr(strata_context_error(ctx), "<i8"));
  /* Fortran order */
  memcpy(b2, b, len);
  q = strstr((char *)b2 + 10, "False");
  memcpy(q, "True ", 5);
  CHECK(write_bytes(bad, b2, len));
  CHECK_STATUS(strata_npy_read(ctx, bad, &p, &nd, sh, &data), STRATA_EFORMAT,
               ctx);
  /* not npy at all */
  CHECK(write_bytes(bad, "hello world", 11));
  CHECK_STATUS(strata_npy_read(ctx, bad, &p, &nd, sh, &data), STRATA_EFORMAT,
               ctx);
  CHECK(data == NULL);
  CHECK_STATUS(strata_npy_read(ctx, tpath("missing.npy"), &p, &nd, sh, &data),
               STRATA_EIO, ctx);
  free(b2);
  free(b);
  remove(bad);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- the temporary-name rule -------------------------------------------- */

TEST(failed_writes_leave_nothing) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  double d[3] = {1, 2, 3};
  size_t shape[1] = {3};
  /* a directory that does not exist: nothing can be created */
  CHECK_STATUS(strata_npy_write(ctx, tpath("nodir/x.npy"), STRATA_F64, 1,
                                shape, d),
               STRATA_EIO, ctx);
  CHECK(strstr(strata_context_error(ctx), "nodir"));
  /* the final name is a directory: the rename fails, the temporary file
   * must be removed and the directory left alone */
  const char *dir = tpath("adir");
  CHECK(mkdir(dir, 0755) == 0);
  CHECK_STATUS(strata_npy_write(ctx, dir, STRATA_F64, 1, shape, d),
               STRATA_EIO, ctx);
  CHECK(strstr(strata_context_error(ctx), "rename"));
  struct stat st;
  CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(leftovers() == 0);
  rmdir(dir);
  /* an existing file is replaced whole */
  const char *path = tpath("replace.npy");
  CHECK(write_bytes(path, "old contents", 12));
  CHECK_OK(strata_npy_write(ctx, path, STRATA_F64, 1, shape, d), ctx);
  size_t len;
  unsigned char *b = ref_slurp(path, &len);
  CHECK(b && len == 10 + (b[8] | (size_t)b[9] << 8) + 24 &&
        memcmp(b, "\x93NUMPY", 6) == 0);
  free(b);
  remove(path);
  CHECK(leftovers() == 0);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- vti ---------------------------------------------------------------- */

static int attr(const char *s, const char *name, char *out, size_t n) {
  char key[64];
  snprintf(key, sizeof key, " %s=\"", name);
  const char *p = strstr(s, key);
  if (!p) return 0;
  p += strlen(key);
  const char *e = strchr(p, '"');
  if (!e || (size_t)(e - p) >= n) return 0;
  memcpy(out, p, (size_t)(e - p));
  out[e - p] = 0;
  return 1;
}

TEST(vti_two_fields_read_back) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_field *a = ref_random_field(ctx, 3, 9, 6, 5, 1, STRATA_F32, 7);
  strata_field *b = ref_random_field(ctx, 3, 9, 6, 5, 2, STRATA_F64, 8);
  CHECK(a && b);
  const strata_field *fs[2] = {a, b};
  const char *names[2] = {"pressure", "velocity"};
  double h[3] = {0.5, 0.25, 2}, o[3] = {-1, 0, 3.5};
  const char *path = tpath("f.vti");
  CHECK_OK(strata_vti_write(path, 2, fs, names, h, o), ctx);
  size_t len;
  unsigned char *buf = ref_slurp(path, &len);
  CHECK(buf);
  const char *s = (const char *)buf;
  CHECK(strncmp(s, "<?xml", 5) == 0);
  CHECK(strstr(s, "type=\"ImageData\""));
  CHECK(strstr(s, "byte_order=\"LittleEndian\""));
  char v[128];
  CHECK(attr(s, "WholeExtent", v, sizeof v) && strcmp(v, "0 8 0 5 0 4") == 0);
  CHECK(attr(s, "Spacing", v, sizeof v));
  double x, y, z;
  CHECK(sscanf(v, "%lf %lf %lf", &x, &y, &z) == 3 && x == 0.5 && y == 0.25 &&
        z == 2);
  CHECK(attr(s, "Origin", v, sizeof v));
  CHECK(sscanf(v, "%lf %lf %lf", &x, &y, &z) == 3 && x == -1 && y == 0 &&
        z == 3.5);
  const char *app = strstr(s, "<AppendedData encoding=\"raw\">");
  CHECK(app);
  const unsigned char *raw = (const unsigned char *)strchr(app, '_') + 1;
  size_t count = 9 * 6 * 5;
  const char *da = s;
  for (int i = 0; i < 2; i++) {
    da = strstr(da + 1, "<DataArray");
    CHECK(da && (const char *)da < app);
    char type[32], name[32], off[32];
    CHECK(attr(da, "type", type, sizeof type));
    CHECK(attr(da, "Name", name, sizeof name));
    CHECK(attr(da, "offset", off, sizeof off));
    CHECK(strcmp(name, names[i]) == 0);
    strata_precision p = i ? STRATA_F64 : STRATA_F32;
    CHECK(strcmp(type, i ? "Float64" : "Float32") == 0);
    const unsigned char *blk = raw + strtoull(off, NULL, 10);
    uint64_t nb = le32(blk) | (uint64_t)le32(blk + 4) << 32;
    CHECK(nb == count * (size_t)p);
    void *host = malloc(nb);
    CHECK_OK(strata_field_read(fs[i], host), ctx);
    CHECK(memcmp(blk + 8, host, nb) == 0);
    if (i == 1)
      CHECK(strncmp((const char *)blk + 8 + nb, "\n  </AppendedData>", 18) ==
            0);
    free(host);
  }
  free(buf);
  /* mismatched shapes and bad names are refused, leaving nothing */
  strata_field *c = ref_random_field(ctx, 3, 9, 6, 4, 1, STRATA_F32, 9);
  fs[1] = c;
  remove(path);
  CHECK_STATUS(strata_vti_write(path, 2, fs, names, h, o), STRATA_ESHAPE, ctx);
  const char *badn[1] = {"a\"b"};
  CHECK_STATUS(strata_vti_write(path, 1, fs, badn, h, o), STRATA_EINVAL, ctx);
  double h0[3] = {1, 0, 1};
  CHECK_STATUS(strata_vti_write(path, 1, fs, names, h0, o), STRATA_EINVAL,
               ctx);
  CHECK(access(path, F_OK) != 0 && leftovers() == 0);
  strata_field_destroy(&a);
  strata_field_destroy(&b);
  strata_field_destroy(&c);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- png ---------------------------------------------------------------- */

TEST(png_pixels_and_checksums) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  /* a 3D fp64 field of known values: v = i + 10 j + 100 k, one NaN */
  strata_field *f = ref_random_field(ctx, 3, 7, 5, 3, 1, STRATA_F64, 1);
  CHECK(f);
  double *host = malloc(7 * 5 * 3 * sizeof *host);
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 5; j++)
      for (int i = 0; i < 7; i++) host[i + 7 * (j + 5 * k)] = i + 10 * j + 100 * k;
  host[3 + 7 * (2 + 5 * 1)] = NAN;
  CHECK_OK(strata_field_write(f, host), ctx);
  strata_png_options o;
  strata_png_options_init(&o);
  o.cmap = STRATA_CMAP_GRAY;
  o.colorbar = 0;
  o.axes = 0; /* the bare image: pixels at fixed places */
  o.scale = 2;
  o.lo = 0;
  o.hi = 300;
  for (int axis = 0; axis < 3; axis++) {
    o.axis = axis;
    o.index = 1;
    const char *path = tpath("s.png");
    CHECK_OK(strata_field_save_png(f, path, &o), ctx);
    size_t w = 0, h = 0;
    unsigned char *rgb = ref_png_decode(path, &w, &h);
    CHECK(rgb);
    size_t sw = axis == 0 ? 5 : 7, sh = axis == 2 ? 5 : 3;
    CHECKF(w == 2 * sw + 16 && h == 2 * sh + 16, "%zu x %zu", w, h);
    for (size_t y = 0; y < h; y++)
      for (size_t x = 0; x < w; x++) {
        const unsigned char *px = rgb + 3 * (y * w + x);
        if (x < 8 || y < 8 || x >= 8 + 2 * sw || y >= 8 + 2 * sh) {
          CHECK(px[0] == 255 && px[1] == 255 && px[2] == 255);
          continue;
        }
        size_t c = (x - 8) / 2, r = (y - 8) / 2;
        size_t i = axis == 0 ? 1 : c, j = axis == 0 ? c : axis == 1 ? 1 : r,
               k = axis == 2 ? 1 : r;
        double v = host[i + 7 * (j + 5 * k)];
        if (isnan(v)) {
          CHECK(px[0] == 255 && px[1] == 0 && px[2] == 255);
          continue;
        }
        double want = 255.0 * v / 300.0;
        CHECKF(px[0] == px[1] && px[1] == px[2] && fabs(px[0] - want) <= 1.0,
               "axis %d pixel (%zu,%zu) = %d for value %g", axis, x, y, px[0],
               v);
      }
    free(rgb);
  }
  /* flip puts index 0 at the bottom */
  o.axis = 2;
  o.flip = 1;
  o.scale = 1;
  CHECK_OK(strata_field_save_png(f, tpath("flip.png"), &o), ctx);
  size_t w, h;
  unsigned char *rgb = ref_png_decode(tpath("flip.png"), &w, &h);
  CHECK(rgb && w == 7 + 16 && h == 5 + 16);
  /* bottom-left interior pixel is (0, 0, 1): 100 -> 85 */
  CHECK(abs(rgb[3 * ((8 + 4) * w + 8)] - 85) <= 1);
  free(rgb);
  /* a colour bar and automatic range: the image grows to the right and the
   * bar runs from the map's top colour (max) to its bottom colour (min) */
  strata_png_options_init(&o);
  o.cmap = STRATA_CMAP_GRAY;
  o.axes = 0;
  CHECK_OK(strata_field_save_png(f, tpath("bar.png"), &o), ctx);
  rgb = ref_png_decode(tpath("bar.png"), &w, &h);
  CHECK(rgb);
  size_t sc = 16 /* 512 / 7, capped */, iw = 7 * sc, ih = 5 * sc;
  CHECKF(w > 8 + iw + 12 + 16 && h >= 16 + ih, "%zu x %zu", w, h);
  size_t bx = 8 + iw + 12 + 8, top = 8 + (ih >= 400 ? 8 : 4);
  CHECK(rgb[3 * ((top + 1) * w + bx)] >= 250);
  size_t barh = ih < 64 ? 64 : ih;
  CHECK(rgb[3 * ((top + barh - 2) * w + bx)] <= 5);
  /* some black label pixels right of the bar */
  int dark = 0;
  for (size_t y = 0; y < h; y++)
    for (size_t x = bx + 14; x < w; x++) dark += rgb[3 * (y * w + x)] == 0;
  CHECK(dark > 20);
  free(rgb);
  /* bad slices are refused */
  o.axis = 3;
  CHECK_STATUS(strata_field_save_png(f, tpath("x.png"), &o), STRATA_EINVAL,
               ctx);
  o.axis = 0;
  o.index = 7;
  CHECK_STATUS(strata_field_save_png(f, tpath("x.png"), &o), STRATA_EINVAL,
               ctx);
  CHECK(access(tpath("x.png"), F_OK) != 0);
  free(host);
  strata_field_destroy(&f);
  remove(tpath("s.png"));
  remove(tpath("flip.png"));
  remove(tpath("bar.png"));
  strata_context_destroy(&ctx);
  return 0;
}

TEST(png_large_image_spans_blocks) {
  /* more than 65535 bytes of noisy scanlines: several deflate blocks */
  strata_context *ctx = cpu();
  CHECK(ctx);
  size_t w = 301, h = 257;
  float *v = malloc(w * h * sizeof *v);
  unsigned seed = 5;
  for (size_t i = 0; i < w * h; i++) v[i] = (float)rand_r(&seed) / RAND_MAX;
  strata_png_options o;
  strata_png_options_init(&o);
  o.scale = 1;
  o.colorbar = 0;
  o.axes = 0;
  o.cmap = STRATA_CMAP_VIRIDIS;
  o.lo = 0;
  o.hi = 1;
  CHECK_OK(strata_png_write_image(ctx, tpath("big.png"), STRATA_F32, w, h, v,
                                  &o),
           ctx);
  size_t W, H;
  unsigned char *rgb = ref_png_decode(tpath("big.png"), &W, &H);
  CHECK(rgb && W == w + 16 && H == h + 16);
  /* viridis ends: 0 -> (68,1,84), 1 -> (253,231,37); monotone in green */
  float lo_v = 2, hi_v = -1;
  size_t lo_i = 0, hi_i = 0;
  for (size_t i = 0; i < w * h; i++) {
    if (v[i] < lo_v) lo_v = v[i], lo_i = i;
    if (v[i] > hi_v) hi_v = v[i], hi_i = i;
  }
  const unsigned char *a = rgb + 3 * ((8 + lo_i / w) * W + 8 + lo_i % w);
  const unsigned char *b = rgb + 3 * ((8 + hi_i / w) * W + 8 + hi_i % w);
  CHECK(abs(a[0] - 68) <= 2 && abs(a[1] - 1) <= 2 && abs(a[2] - 84) <= 2);
  CHECK(abs(b[0] - 253) <= 2 && abs(b[1] - 231) <= 2 && abs(b[2] - 37) <= 2);
  free(rgb);
  free(v);
  remove(tpath("big.png"));
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- axes, colour bar and title ----------------------------------------- */

static int is_black(const unsigned char *p) {
  return p[0] == 0 && p[1] == 0 && p[2] == 0;
}

/* Whether text, drawn in the library's font at scale 1 or 2, appears in
 * black on white somewhere in rows y0..y1 of the image. */
static int has_text(const unsigned char *rgb, size_t W, size_t H, size_t y0,
                    size_t y1, const char *text) {
  static const unsigned char black[3] = {0, 0, 0};
  for (int fs = 1; fs <= 2; fs++) {
    size_t tw = strlen(text) * 6 * (size_t)fs, th = 8 * (size_t)fs;
    unsigned char *ref = malloc(tw * th * 3);
    memset(ref, 255, tw * th * 3);
    strata_image_draw_text(ref, tw, th, 0, 0, text, fs, black);
    for (size_t y = y0; y + th <= y1 && y + th <= H; y++)
      for (size_t x = 0; x + tw <= W; x++) {
        int same = 1;
        for (size_t j = 0; j < th && same; j++)
          for (size_t i = 0; i < tw && same; i++)
            same = is_black(ref + 3 * (j * tw + i)) ==
                   is_black(rgb + 3 * ((y + j) * W + x + i));
        if (same) {
          free(ref);
          return 1;
        }
      }
    free(ref);
  }
  return 0;
}

/* The plot's box inside the frame: the black frame pixel left of a plot
 * pixel of colour c on row y, then the frame's other sides. */
static int find_plot(const unsigned char *rgb, size_t W, size_t H, size_t y,
                     const unsigned char c[3], size_t box[4]) {
  for (size_t x = 0; x + 1 < W; x++) {
    const unsigned char *q = rgb + 3 * (y * W + x + 1);
    if (!is_black(rgb + 3 * (y * W + x)) || abs(q[0] - c[0]) > 2 ||
        abs(q[1] - c[1]) > 2 || abs(q[2] - c[2]) > 2)
      continue;
    size_t l = x + 1, r = l, t = y, b = y;
    while (r < W && !is_black(rgb + 3 * (y * W + r))) r++;
    while (t > 0 && !is_black(rgb + 3 * ((t - 1) * W + l))) t--;
    while (b < H && !is_black(rgb + 3 * (b * W + l))) b++;
    box[0] = l, box[1] = t, box[2] = r, box[3] = b; /* right, bottom: past */
    return r < W && t > 0 && b < H;
  }
  return 0;
}

/* Black pixels in the rectangle [x0, x1) x [y0, y1). */
static size_t dark_in(const unsigned char *rgb, size_t W, size_t x0,
                      size_t y0, size_t x1, size_t y1) {
  size_t n = 0;
  for (size_t y = y0; y < y1; y++)
    for (size_t x = x0; x < x1; x++) n += is_black(rgb + 3 * (y * W + x));
  return n;
}

TEST(png_axes_colour_bar_and_title) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  /* a ramp across: v = column; x in metres, y in seconds */
  size_t w = 40, h = 30;
  double *v = malloc(w * h * sizeof *v);
  for (size_t i = 0; i < w * h; i++) v[i] = (double)(i % w);
  strata_png_options o;
  strata_png_options_init(&o);
  o.coord[0].unit = "m";
  o.coord[0].step = 10;
  o.coord[1].name = "time";
  o.coord[1].unit = "s";
  o.coord[1].step = 0.5;
  o.title = "ramp";
  o.value_name = "u";
  o.value_unit = "Pa";
  CHECK_OK(strata_png_write_image(ctx, tpath("axes.png"), STRATA_F64, w, h, v,
                                  &o),
           ctx);
  size_t W, H, box[4];
  unsigned char *rgb = ref_png_decode(tpath("axes.png"), &W, &H);
  CHECK(rgb);
  CHECKF(!strcmp(ref_png_title, "ramp"), "title '%s'", ref_png_title);
  /* the plot, framed, at an integer scale; margins all round */
  static const unsigned char v0[3] = {68, 1, 84}; /* viridis' low end */
  CHECK(find_plot(rgb, W, H, H / 2, v0, box));
  size_t pw = box[2] - box[0], ph = box[3] - box[1], sc = pw / w;
  CHECKF(sc >= 1 && pw == sc * w && ph == sc * h, "plot %zu x %zu", pw, ph);
  CHECKF(box[0] > 20 && box[1] > 20 && H - box[3] > 20 && W - box[2] > 40,
         "plot at %zu..%zu x %zu..%zu in %zu x %zu", box[0], box[2], box[1],
         box[3], W, H);
  /* its colours rise across (viridis: green grows), each point sc wide */
  for (size_t c = 1; c < w; c++) {
    const unsigned char *a = rgb + 3 * (box[1] * W + box[0] + (c - 1) * sc),
                        *b = rgb + 3 * (box[1] * W + box[0] + c * sc);
    CHECK(b[1] > a[1]);
  }
  /* the colour bar right of the plot: its colours ordered, max at the top */
  size_t bx = box[2] + 1;
  while (bx < W && !is_black(rgb + 3 * ((box[1] + ph / 2) * W + bx))) bx++;
  CHECK(bx < W);
  int prev = 256, steps = 0;
  for (size_t y = box[1] + 1; y + 1 < box[1] + ph; y++) {
    int g = rgb[3 * (y * W + bx + 7) + 1];
    CHECKF(g <= prev, "bar row %zu: green %d after %d", y, g, prev);
    steps += g < prev;
    prev = g;
  }
  CHECK(steps > 50 && prev < 10);
  /* labels: tick values below and left of the plot, the axes' titles, the
   * bar's ends and name, the title */
  CHECK(dark_in(rgb, W, 0, box[3] + 1, W, H) > 100);
  CHECK(dark_in(rgb, W, 0, box[1], box[0] - 1, box[3]) > 50);
  CHECK(has_text(rgb, W, H, box[3], H, "x (m)"));
  CHECK(has_text(rgb, W, H, box[3], H, "200"));
  CHECK(has_text(rgb, W, H, 0, box[1], "time (s)"));
  CHECK(has_text(rgb, W, H, 0, box[3], "10.0") ||
        has_text(rgb, W, H, 0, box[3], "10"));
  CHECK(has_text(rgb, W, H, 0, box[1], "u (Pa)"));
  CHECK(has_text(rgb, W, H, 0, H, "39"));
  CHECK(has_text(rgb, W, H, 0, box[1], "ramp"));
  free(rgb);

  /* an all-zero field: the title says so, the image is one neutral grey
   * and there is no colour ramp anywhere */
  memset(v, 0, w * h * sizeof *v);
  o.title = "step 0";
  CHECK_OK(strata_png_write_image(ctx, tpath("zero.png"), STRATA_F64, w, h, v,
                                  &o),
           ctx);
  rgb = ref_png_decode(tpath("zero.png"), &W, &H);
  CHECK(rgb);
  CHECKF(!strcmp(ref_png_title, "step 0: all zero"), "title '%s'", ref_png_title);
  CHECK(has_text(rgb, W, H, 0, 40, "step 0: all zero"));
  static const unsigned char grey[3] = {225, 225, 225};
  CHECK(find_plot(rgb, W, H, H / 2, grey, box));
  size_t other = 0;
  for (size_t i = 0; i < W * H; i++) {
    const unsigned char *q = rgb + 3 * i;
    other += !(q[0] == q[1] && q[1] == q[2] &&
               (q[0] == 0 || q[0] == 255 || q[0] == 225));
  }
  CHECKF(other == 0, "%zu pixels of colour", other);
  free(rgb);
  /* a constant: its value; fp32 too */
  float *f = malloc(w * h * sizeof *f);
  for (size_t i = 0; i < w * h; i++) f[i] = 3.5f;
  o.title = NULL;
  CHECK_OK(strata_png_write_image(ctx, tpath("c.png"), STRATA_F32, w, h, f,
                                  &o),
           ctx);
  rgb = ref_png_decode(tpath("c.png"), &W, &H);
  CHECKF(rgb && !strcmp(ref_png_title, "constant = 3.5"), "title '%s'",
         ref_png_title);
  free(rgb);
  free(f);
  /* a bad coordinate step is refused */
  o.coord[1].step = 0;
  CHECK_STATUS(strata_png_write_image(ctx, tpath("bad.png"), STRATA_F64, w, h,
                                      v, &o),
               STRATA_EINVAL, ctx);
  CHECK(access(tpath("bad.png"), F_OK) != 0);
  /* a long side is averaged down to 4096 pixels, a short one stretched */
  size_t lw = 9000;
  double *l = malloc(lw * sizeof *l);
  for (size_t i = 0; i < lw; i++) l[i] = (double)i;
  strata_png_options_init(&o);
  CHECK_OK(strata_png_write_image(ctx, tpath("long.png"), STRATA_F64, lw, 1,
                                  l, &o),
           ctx);
  rgb = ref_png_decode(tpath("long.png"), &W, &H);
  CHECK(rgb && find_plot(rgb, W, H, H / 2, v0, box));
  CHECKF(box[2] - box[0] == 3000 && box[3] - box[1] >= 32,
         "plot %zu x %zu", box[2] - box[0], box[3] - box[1]);
  free(rgb);
  free(l);
  free(v);
  remove(tpath("axes.png"));
  remove(tpath("zero.png"));
  remove(tpath("c.png"));
  remove(tpath("long.png"));
  CHECK(leftovers() == 0);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(png_traces_gather) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  size_t nt = 12, ns = 50;
  double *d = malloc(nt * ns * sizeof *d), rec[36];
  for (size_t i = 0; i < nt * ns; i++) d[i] = sin(0.3 * (double)i);
  for (size_t r = 0; r < nt; r++) {
    rec[3 * r] = 100.0 + 25.0 * (double)r;
    rec[3 * r + 1] = 50;
    rec[3 * r + 2] = 10;
  }
  strata_traces t = {nt, ns, 0.002, STRATA_F64, d, rec, {0, 0, 0}, 0};
  CHECK_OK(strata_traces_save_png(ctx, tpath("tr.png"), &t, NULL), ctx);
  size_t W, H;
  unsigned char *rgb = ref_png_decode(tpath("tr.png"), &W, &H);
  CHECK(rgb && W > nt && H > ns);
  CHECK(has_text(rgb, W, H, H / 2, H, "receiver x (m)"));
  CHECK(has_text(rgb, W, H, 0, H / 2, "time (s)"));
  CHECK(has_text(rgb, W, H, 0, H, "0.05"));
  free(rgb);
  /* receivers along a diagonal: the offset along the line */
  for (size_t r = 0; r < nt; r++) rec[3 * r + 1] = 50 + 10.0 * (double)r;
  CHECK_OK(strata_traces_save_png(ctx, tpath("tr.png"), &t, NULL), ctx);
  rgb = ref_png_decode(tpath("tr.png"), &W, &H);
  CHECK(rgb && has_text(rgb, W, H, H / 2, H, "offset (m)"));
  free(rgb);
  /* anywhere: their number */
  rec[4] = 0;
  CHECK_OK(strata_traces_save_png(ctx, tpath("tr.png"), &t, NULL), ctx);
  rgb = ref_png_decode(tpath("tr.png"), &W, &H);
  CHECK(rgb && has_text(rgb, W, H, H / 2, H, "receiver"));
  CHECK(!has_text(rgb, W, H, H / 2, H, "offset (m)"));
  free(rgb);
  /* a long record on few receivers: each receiver's column widened so the
   * plot is at least two thirds as wide as tall (10 receivers, 600 samples:
   * 40 columns each), the receivers alternating +1 / -1 */
  {
    size_t nr = 10, nk = 600;
    double *g = malloc(nr * nk * sizeof *g);
    CHECK(g);
    for (size_t i = 0; i < nr * nk; i++) g[i] = (i / nk) % 2 ? -1 : 1;
    strata_traces lt = {nr, nk, 0.001, STRATA_F64, g, NULL, {0, 0, 0}, 0};
    CHECK_OK(strata_traces_save_png(ctx, tpath("long.png"), &lt, NULL), ctx);
    free(g);
    rgb = ref_png_decode(tpath("long.png"), &W, &H);
    CHECK(rgb);
    size_t y = H / 2, x = 0, box[4];
    /* the frame's left side: a black pixel, then the first receiver's
     * 40 columns of one colour */
    for (; x + 41 < W; x++) {
      const unsigned char *q = rgb + 3 * (y * W + x);
      if (!is_black(q) || is_black(q + 3)) continue;
      size_t k = 1;
      while (k < 40 && !memcmp(q + 3, q + 3 * (k + 1), 3)) k++;
      if (k == 40) break;
    }
    unsigned char c0[3];
    memcpy(c0, rgb + 3 * (y * W + x + 1), 3);
    CHECK(find_plot(rgb, W, H, y, c0, box));
    CHECKF(box[2] - box[0] == 400 && box[3] - box[1] == 600, "plot %zu x %zu",
           box[2] - box[0], box[3] - box[1]);
    const unsigned char *row = rgb + 3 * (y * W + box[0]);
    CHECK(!memcmp(row, row + 3 * 39, 3) && memcmp(row, row + 3 * 40, 3) &&
          !memcmp(row, row + 3 * 80, 3));
    free(rgb);
    remove(tpath("long.png"));
  }
  /* made in memory: the file's bytes */
  size_t fn = 0, mn = 0;
  unsigned char *file = ref_slurp(tpath("tr.png"), &fn);
  void *mem = NULL;
  CHECK_OK(strata_traces_encode_png(ctx, &t, NULL, &mem, &mn), ctx);
  CHECK(file && mem && fn == mn && !memcmp(file, mem, fn));
  free(file);
  free(mem);
  remove(tpath("tr.png"));
  free(d);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- traces ------------------------------------------------------------- */

TEST(segy_and_npy_traces) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  size_t nt = 5, ns = 37;
  double *d = malloc(nt * ns * sizeof *d);
  unsigned seed = 3;
  for (size_t i = 0; i < nt * ns; i++) d[i] = rand_r(&seed) / (double)RAND_MAX - 0.5;
  double rec[15];
  for (size_t r = 0; r < nt; r++) {
    rec[3 * r] = 100.0 + 12.5 * r;
    rec[3 * r + 1] = 50.25;
    rec[3 * r + 2] = 10;
  }
  strata_traces t = {nt, ns, 0.0005, STRATA_F64, d, rec, {120.5, 30, 40},
                     7};
  CHECK_OK(strata_segy_write(ctx, tpath("t.sgy"), &t), ctx);
  size_t len;
  unsigned char *b = ref_slurp(tpath("t.sgy"), &len);
  CHECK(b && len == 3600 + nt * (240 + 4 * ns));
  CHECK(b[0] == 0xC3); /* 'C' in EBCDIC */
  const unsigned char *bh = b + 3200;
  CHECK(be16(bh + 16) == 500 && be16(bh + 20) == ns && be16(bh + 24) == 5);
  CHECK(be16(bh + 300) == 0x0100 && be16(bh + 302) == 1);
  for (size_t r = 0; r < nt; r++) {
    const unsigned char *th = b + 3600 + r * (240 + 4 * ns);
    CHECK(be32(th) == r + 1 && be16(th + 114) == ns && be16(th + 116) == 500);
    CHECK((int16_t)be16(th + 70) == -100);
    CHECK((int32_t)be32(th + 80) == (int32_t)lround(rec[3 * r] * 100));
    CHECK((int32_t)be32(th + 84) == 5025);
    CHECK((int32_t)be32(th + 72) == 12050);
    /* the shot, the channel and the offset (receivers from x = 100 m) */
    CHECK(be32(th + 8) == 7 && be32(th + 16) == 7 && be32(th + 12) == r + 1);
    double dx = rec[3 * r] - 120.5, dy = 50.25 - 30;
    CHECK((int32_t)be32(th + 36) ==
          (int32_t)((dx < 0 ? -1 : 1) * nearbyint(sqrt(dx * dx + dy * dy))));
    CHECK((int32_t)be32(th + 48) == 4000 && (int32_t)be32(th + 40) == -1000);
    for (size_t s = 0; s < ns; s++) {
      uint32_t u = be32(th + 240 + 4 * s);
      float v;
      memcpy(&v, &u, 4);
      CHECK(v == (float)d[r * ns + s]);
    }
  }
  free(b);
  CHECK_OK(strata_traces_save_npy(ctx, tpath("t.npy"), &t), ctx);
  strata_precision p;
  int nd;
  size_t sh[4];
  void *data;
  CHECK_OK(strata_npy_read(ctx, tpath("t.npy"), &p, &nd, sh, &data), ctx);
  CHECK(p == STRATA_F64 && nd == 2 && sh[0] == nt && sh[1] == ns);
  CHECK(memcmp(data, d, nt * ns * 8) == 0);
  free(data);
  /* an interval SEG-Y cannot hold */
  t.dt = 0.5;
  CHECK_STATUS(strata_segy_write(ctx, tpath("u.sgy"), &t), STRATA_EINVAL, ctx);
  CHECK(strstr(strata_context_error(ctx), "65535"));
  CHECK_ARG(ctx, "dt", "0.5");
  CHECK(access(tpath("u.sgy"), F_OK) != 0);
  t.dt = 0.0005;
  rec[4] = 1e12; /* receiver 1's y does not fit */
  CHECK_STATUS(strata_segy_write(ctx, tpath("u.sgy"), &t), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "receivers[4]", "1e+12");
  rec[4] = 50.25;
  t.shot = -1;
  CHECK_STATUS(strata_segy_write(ctx, tpath("u.sgy"), &t), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "shot", "-1");
  t.shot = 7;
  /* a file that cannot be read or written names the path */
  const char *gone = tpath("nothere/t.npy");
  CHECK_STATUS(strata_npy_read(ctx, gone, &p, &nd, sh, &data), STRATA_EIO,
               ctx);
  CHECK_ARG(ctx, "path", gone);
  CHECK_STATUS(strata_traces_save_npy(ctx, gone, &t), STRATA_EIO, ctx);
  CHECK_ARG(ctx, "path", gone);
  remove(tpath("t.sgy"));
  remove(tpath("t.npy"));
  free(d);
  CHECK(leftovers() == 0);
  strata_context_destroy(&ctx);
  return 0;
}

/* The NAME.tmp.PID files of a process that is gone are removed, those of
 * a live one (this one) kept, and nothing else is touched. */
TEST(stale_temporaries_removed) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  long gone = ref_dead_pid();
  CHECK(gone > 0);
  CHECK(mkdir(tpath("stale"), 0755) == 0);
  char dead1[64], dead2[64], live[64], deaddir[64];
  snprintf(dead1, sizeof dead1, "stale/snap_000010.npy.tmp.%ld", gone);
  snprintf(dead2, sizeof dead2, "stale/a.tmp.b.tmp.%ld", gone);
  snprintf(live, sizeof live, "stale/final.npy.tmp.%ld", (long)getpid());
  snprintf(deaddir, sizeof deaddir, "stale/sub.tmp.%ld", gone);
  static const char *const keep[] = {"stale/final.npy", "stale/x.tmp.12ab",
                                     "stale/x.tmp.", "stale/.tmp.7",
                                     "stale/y.tmp.99999999999"};
  const char *const files[] = {dead1, dead2, live, keep[0], keep[1], keep[2],
                               keep[3], keep[4]};
  for (int i = 0; i < 8; i++) CHECK(write_bytes(tpath(files[i]), "x", 1));
  CHECK(mkdir(tpath(deaddir), 0755) == 0);
  int removed = -1;
  CHECK_OK(strata_remove_stale_temporaries(ctx, tpath("stale"), &removed),
           ctx);
  CHECKF(removed == 2, "%d removed", removed);
  CHECK(access(tpath(dead1), F_OK) != 0 && access(tpath(dead2), F_OK) != 0);
  CHECK(access(tpath(live), F_OK) == 0 && access(tpath(deaddir), F_OK) == 0);
  for (int i = 0; i < 5; i++) CHECK(access(tpath(keep[i]), F_OK) == 0);
  for (int i = 2; i < 8; i++) CHECK(remove(tpath(files[i])) == 0);
  CHECK(rmdir(tpath(deaddir)) == 0 && rmdir(tpath("stale")) == 0);
  CHECK_STATUS(strata_remove_stale_temporaries(ctx, NULL, NULL),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "dir", "NULL");
  CHECK_STATUS(strata_remove_stale_temporaries(ctx, tpath("none"), NULL),
               STRATA_EIO, ctx);
  CHECK(strstr(strata_context_error(ctx), "cannot read the folder"));
  strata_context_destroy(&ctx);
  return 0;
}

TEST(png_in_memory_matches_file) {
  /* the PNG a server sends is the file's bytes, for a 3D slice with axes,
   * colour bar and title, and for a 2D grid */
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_field *f = ref_random_field(ctx, 3, 9, 6, 5, 1, STRATA_F32, 7);
  CHECK(f);
  float *host = malloc(9 * 6 * 5 * sizeof *host);
  CHECK(host);
  CHECK_OK(strata_field_read(f, host), ctx);
  strata_png_options o;
  strata_png_options_init(&o);
  o.title = "memory";
  o.coord[0].unit = "m";
  for (int axis = 0; axis < 3; axis++) {
    o.axis = axis;
    o.index = axis;
    CHECK_OK(strata_field_save_png(f, tpath("m.png"), &o), ctx);
    size_t fn = 0, mn = 0;
    unsigned char *file = ref_slurp(tpath("m.png"), &fn);
    void *mem = NULL;
    const size_t n[3] = {9, 6, 5};
    CHECK_OK(strata_png_encode_grid(ctx, STRATA_F32, 3, n, host, &o, &mem,
                                    &mn), ctx);
    CHECK(file && mem && fn == mn && fn > 100 && !memcmp(file, mem, fn));
    free(file);
    free(mem);
  }
  const size_t n2[3] = {9, 30, 1}, bad[3] = {9, 6, 5};
  void *mem = NULL;
  size_t mn = 0;
  CHECK_OK(strata_png_encode_grid(ctx, STRATA_F32, 2, n2, host, NULL, &mem,
                                  &mn), ctx);
  CHECK(mn > 8 && !memcmp(mem, "\x89PNG", 4));
  free(mem);
  /* a third axis in 2D, and a slice outside the grid */
  CHECK_STATUS(strata_png_encode_grid(ctx, STRATA_F32, 2, bad, host, NULL,
                                      &mem, &mn), STRATA_EINVAL, ctx);
  o.axis = 2;
  o.index = 5;
  CHECK_STATUS(strata_png_encode_grid(ctx, STRATA_F32, 3, bad, host, &o,
                                      &mem, &mn), STRATA_EINVAL, ctx);
  CHECK(mem == NULL && mn == 0);
  remove(tpath("m.png"));
  free(host);
  strata_field_destroy(&f);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(pvd_collection) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  const char *files[3] = {"snap_000000.vti", "snap_000010.vti", "final.vti"};
  double times[3] = {0, 0.5, 0.75};
  CHECK_OK(strata_pvd_write(ctx, tpath("s.pvd"), 3, files, times), ctx);
  char *t = (char *)ref_slurp(tpath("s.pvd"), &(size_t){0});
  CHECK(t && strstr(t, "type=\"Collection\""));
  CHECK(strstr(t, "<DataSet timestep=\"0.5\" group=\"\" part=\"0\" "
                  "file=\"snap_000010.vti\"/>"));
  CHECK(strstr(t, "timestep=\"0.75\"") > strstr(t, "timestep=\"0.5\""));
  free(t);
  times[2] = 0.5; /* not increasing */
  CHECK_STATUS(strata_pvd_write(ctx, tpath("u.pvd"), 3, files, times),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "times[2]", "0.5");
  files[1] = "a<b.vti";
  times[2] = 1;
  CHECK_STATUS(strata_pvd_write(ctx, tpath("u.pvd"), 3, files, times),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "files[1]", "a<b.vti");
  CHECK(access(tpath("u.pvd"), F_OK) != 0);
  remove(tpath("s.pvd"));
  strata_context_destroy(&ctx);
  return 0;
}

TEST(xdmf_series) {
  strata_context *ctx = cpu();
  CHECK(ctx);
  const char *files[2] = {"snap_000000.h5", "snap_000010.h5"};
  double times[2] = {0, 0.25};
  strata_xdmf_grid g = {3, {5, 4, 3}, 12.5, STRATA_F32, "p"};
  CHECK_OK(strata_xdmf_write(ctx, tpath("s.xmf"), 2, files, times, &g), ctx);
  char *t = (char *)ref_slurp(tpath("s.xmf"), &(size_t){0});
  CHECK(t && strstr(t, "CollectionType=\"Temporal\""));
  /* sizes and spacing slowest axis first; the dataset named in the file */
  CHECK(strstr(t, "TopologyType=\"3DCoRectMesh\" Dimensions=\"3 4 5\""));
  CHECK(strstr(t, "<Time Value=\"0.25\"/>"));
  CHECK(strstr(t, "Precision=\"4\" Format=\"HDF\">snap_000010.h5:/p<"));
  CHECK(strstr(t, ">12.5 12.5 12.5<"));
  free(t);
  times[1] = 0;
  CHECK_STATUS(strata_xdmf_write(ctx, tpath("u.xmf"), 2, files, times, &g),
               STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "times[1]", "0");
  times[1] = 1;
  g.dims = 1;
  CHECK_STATUS(strata_xdmf_write(ctx, tpath("u.xmf"), 2, files, times, &g),
               STRATA_EINVAL, ctx);
  CHECK(access(tpath("u.xmf"), F_OK) != 0);
  /* HDF5 traces, or a clear refusal in a build without HDF5 */
  double d[6] = {1, 2, 3, 4, 5, 6};
  strata_traces tr = {2, 3, 0.004, STRATA_F64, d, NULL, {1, 2, 3}, 4};
  strata_status st = strata_traces_save_h5(ctx, tpath("t.h5"), &tr);
  if (strata_h5_available()) {
    CHECK_OK(st, ctx);
    size_t len = 0;
    unsigned char *b = ref_slurp(tpath("t.h5"), &len);
    CHECK(b && len > 8 && memcmp(b, "\211HDF\r\n\032\n", 8) == 0);
    free(b);
  } else {
    CHECK_STATUS(st, STRATA_ENOTSUP, ctx);
    CHECK(strstr(strata_context_error(ctx), "without HDF5"));
  }
  remove(tpath("t.h5"));
  remove(tpath("s.xmf"));
  strata_context_destroy(&ctx);
  return 0;
}

TEST(solver_save_h5_is_the_snapshot_writers) {
  /* on one process strata_solver_save_h5 writes the bytes the snapshot
   * writer's .h5 holds; a bad index is refused */
  strata_context *ctx = cpu();
  CHECK(ctx);
  strata_heat_options ho;
  strata_heat_options_init(&ho);
  ho.dims = 3;
  ho.n[0] = 9;
  ho.n[1] = 7;
  ho.n[2] = 5;
  strata_solver_options so;
  strata_solver_options_init(&so, STRATA_SOLVER_HEAT);
  so.heat = &ho;
  strata_solver *s = NULL;
  CHECK_OK(strata_solver_create(ctx, &so, &s), ctx);
  double host[9 * 7 * 5];
  for (int q = 0; q < 9 * 7 * 5; q++) host[q] = 0.25 * q - 3;
  CHECK_OK(strata_field_write(strata_solver_field(s, 0), host), ctx);
  strata_status st = strata_solver_save_h5(s, 0, tpath("a.h5"), "u", 2.5);
  if (!strata_h5_available()) {
    CHECK_STATUS(st, STRATA_ENOTSUP, ctx);
    strata_solver_destroy(&s);
    strata_context_destroy(&ctx);
    SKIP("this strata was built without HDF5");
  }
  CHECK_OK(st, ctx);
  strata_snapshot_options wo;
  strata_snapshot_options_init(&wo);
  wo.dir = tmpdir;
  wo.npy = wo.png = 0;
  wo.h5 = 1;
  wo.async = 0;
  wo.spacing = 2.5;
  const strata_field_desc d = {3, {9, 7, 5}, 1, STRATA_F64};
  strata_snapshot_writer *w = NULL;
  CHECK_OK(strata_snapshot_writer_create(ctx, &d, &wo, &w), ctx);
  double *buf = strata_snapshot_acquire(w);
  memcpy(buf, host, sizeof host);
  CHECK_OK(strata_snapshot_submit_host(w, buf, "b"), ctx);
  strata_snapshot_writer_destroy(&w);
  size_t na = 0, nb = 0;
  unsigned char *a = ref_slurp(tpath("a.h5"), &na),
                *b = ref_slurp(tpath("b.h5"), &nb);
  CHECK(a && b && na == nb && na > 0 && !memcmp(a, b, na));
  free(a);
  free(b);
  CHECK_STATUS(strata_solver_save_h5(s, 3, tpath("c.h5"), NULL, 1),
               STRATA_EINVAL, ctx);
  CHECK(access(tpath("c.h5"), F_OK) != 0);
  remove(tpath("a.h5"));
  remove(tpath("b.h5"));
  strata_solver_destroy(&s);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(cleanup) {
  /* removes the scratch directory (last test) */
  remove(tpath("f.npy"));
  remove(tpath("g.npy"));
  remove(tpath("f.vti"));
  CHECK(rmdir(tmpdir) == 0);
  return 0;
}

RUN_TESTS(npy_fields_read_back, npy_bad_files_refused,
          failed_writes_leave_nothing, vti_two_fields_read_back,
          png_pixels_and_checksums, png_large_image_spans_blocks,
          png_axes_colour_bar_and_title, png_traces_gather,
          segy_and_npy_traces, stale_temporaries_removed,
          png_in_memory_matches_file, pvd_collection, xdmf_series,
          solver_save_h5_is_the_snapshot_writers, cleanup)
