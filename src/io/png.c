/* PNG images of fields: a colour map, an optional colour bar with labelled
 * ends and middle, and the one 5x7 font that labels every image the
 * library and its programs draw.  zlib does the deflate stream and the
 * chunks' CRC-32. */
#define _POSIX_C_SOURCE 200809L
#include "io_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void chunk(strata__ofile *o, const char *type, const unsigned char *d,
                  size_t n) {
  unsigned char b[4];
  strata__put_be32(b, (uint32_t)n);
  strata__ofile_write(o, b, 4);
  strata__ofile_write(o, type, 4);
  strata__ofile_write(o, d, n);
  uLong c = crc32(0L, (const Bytef *)type, 4);
  if (n) c = crc32(c, d, (uInt)n); /* n < 2^31: PNG's own chunk limit */
  strata__put_be32(b, (uint32_t)c);
  strata__ofile_write(o, b, 4);
}

strata_status strata_png_write_rgb(strata_context *ctx, const char *path,
                                   size_t width, size_t height,
                                   const unsigned char *rgb) {
  if (!rgb || width < 1 || height < 1 || width > (1u << 24) ||
      height > (1u << 24) || width * height > ((size_t)1 << 28))
    return strata__fail(ctx, STRATA_EINVAL, "image of %zu x %zu pixels: each "
                        "side must be 1..2^24 and the area at most 2^28",
                        width, height);
  /* the scanlines, each behind its filter byte: Sub (1) turns the smooth
   * colour ramps of a field into runs of small differences that deflate
   * packs tightly, at one subtraction a byte */
  size_t row = 1 + 3 * width, raw = row * height;
  unsigned char *r = malloc(raw);
  uLong zn = compressBound((uLong)raw);
  unsigned char *z = r ? malloc(zn) : NULL;
  if (!z) {
    free(r);
    return strata__fail(ctx, STRATA_ENOMEM, "cannot allocate %zu bytes for "
                        "the image", raw + (size_t)zn);
  }
  for (size_t y = 0; y < height; y++) {
    unsigned char *o = r + y * row;
    const unsigned char *in = rgb + y * 3 * width;
    o[0] = 1;
    for (size_t i = 0; i < 3 * width; i++)
      o[1 + i] = (unsigned char)(in[i] - (i >= 3 ? in[i - 3] : 0));
  }
  int zs = compress2(z, &zn, r, (uLong)raw, Z_DEFAULT_COMPRESSION);
  free(r);
  if (zs != Z_OK || zn > 0x7fffffffu) {
    free(z);
    return strata__fail(ctx, zs == Z_MEM_ERROR ? STRATA_ENOMEM : STRATA_EINVAL,
                        "zlib could not compress the %zu x %zu image (%d)",
                        width, height, zs);
  }
  strata__ofile o;
  strata_status s = strata__ofile_open(&o, ctx, path);
  if (s != STRATA_OK) {
    free(z);
    return s;
  }
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a,
                                       '\n'};
  strata__ofile_write(&o, sig, 8);
  unsigned char ihdr[13];
  strata__put_be32(ihdr, (uint32_t)width);
  strata__put_be32(ihdr + 4, (uint32_t)height);
  ihdr[8] = 8;  /* bits per channel */
  ihdr[9] = 2;  /* RGB */
  ihdr[10] = 0; /* deflate */
  ihdr[11] = 0; /* adaptive filtering */
  ihdr[12] = 0; /* no interlace */
  chunk(&o, "IHDR", ihdr, 13);
  chunk(&o, "IDAT", z, (size_t)zn);
  chunk(&o, "IEND", NULL, 0);
  free(z);
  return strata__ofile_commit(&o);
}

/* ---- colour maps ------------------------------------------------------- */

typedef struct {
  const char *name;
  int diverging;
  unsigned char a[9][3]; /* anchors at 0, 1/8, ..., 1 */
} cmap_def;

static const cmap_def cmaps[] = {
    [STRATA_CMAP_VIRIDIS] = {"viridis", 0,
                             {{68, 1, 84}, {71, 44, 122}, {59, 81, 139},
                              {44, 113, 142}, {33, 144, 141}, {39, 173, 129},
                              {92, 200, 99}, {170, 220, 50}, {253, 231, 37}}},
    [STRATA_CMAP_INFERNO] = {"inferno", 0,
                             {{0, 0, 4}, {31, 12, 72}, {85, 15, 109},
                              {136, 34, 106}, {186, 54, 85}, {227, 89, 51},
                              {249, 140, 10}, {249, 201, 50},
                              {252, 255, 164}}},
    [STRATA_CMAP_GRAY] = {"gray", 0,
                          {{0, 0, 0}, {32, 32, 32}, {64, 64, 64},
                           {96, 96, 96}, {128, 128, 128}, {159, 159, 159},
                           {191, 191, 191}, {223, 223, 223},
                           {255, 255, 255}}},
    [STRATA_CMAP_SEISMIC] = {"seismic", 1,
                             {{5, 48, 97}, {33, 102, 172}, {67, 147, 195},
                              {146, 197, 222}, {247, 247, 247},
                              {244, 165, 130}, {214, 96, 77}, {178, 24, 43},
                              {103, 0, 31}}},
};
#define NCMAPS (sizeof cmaps / sizeof cmaps[0])

const char *strata_colormap_name(strata_colormap c) {
  if ((unsigned)c >= NCMAPS) return "?";
  return cmaps[c].name;
}

strata_status strata_colormap_parse(const char *name, strata_colormap *c) {
  if (!name || !c) return STRATA_EINVAL;
  for (unsigned i = 0; i < NCMAPS; i++)
    if (strcmp(name, cmaps[i].name) == 0) {
      *c = (strata_colormap)i;
      return STRATA_OK;
    }
  return STRATA_EINVAL;
}

static void cmap_rgb(strata_colormap c, double t, unsigned char *out) {
  if (!(t >= 0)) t = 0; /* also NaN t, though callers catch NaN first */
  if (t > 1) t = 1;
  double x = t * 8;
  int i = (int)x;
  if (i > 7) i = 7;
  double w = x - i;
  for (int k = 0; k < 3; k++)
    out[k] = (unsigned char)lround((1 - w) * cmaps[c].a[i][k] +
                                   w * cmaps[c].a[i + 1][k]);
}

/* ---- the 5x7 font ----------------------------------------------------- */

/* Rows top to bottom, bit 4 the leftmost column.  Capitals only: lower
 * case is drawn as upper case (1.5e-05 as 1.5E-05), which keeps the
 * table to the characters labels and numbers use. */
static const struct {
  char c;
  unsigned char rows[7];
} glyphs[] = {
    {'A', {14, 17, 17, 31, 17, 17, 17}}, {'B', {30, 17, 17, 30, 17, 17, 30}},
    {'C', {14, 17, 16, 16, 16, 17, 14}}, {'D', {30, 17, 17, 17, 17, 17, 30}},
    {'E', {31, 16, 16, 30, 16, 16, 31}}, {'F', {31, 16, 16, 30, 16, 16, 16}},
    {'G', {14, 17, 16, 23, 17, 17, 15}}, {'H', {17, 17, 17, 31, 17, 17, 17}},
    {'I', {14, 4, 4, 4, 4, 4, 14}},      {'J', {7, 2, 2, 2, 2, 18, 12}},
    {'K', {17, 18, 20, 24, 20, 18, 17}}, {'L', {16, 16, 16, 16, 16, 16, 31}},
    {'M', {17, 27, 21, 21, 17, 17, 17}}, {'N', {17, 17, 25, 21, 19, 17, 17}},
    {'O', {14, 17, 17, 17, 17, 17, 14}}, {'P', {30, 17, 17, 30, 16, 16, 16}},
    {'Q', {14, 17, 17, 17, 21, 18, 13}}, {'R', {30, 17, 17, 30, 20, 18, 17}},
    {'S', {15, 16, 16, 14, 1, 1, 30}},   {'T', {31, 4, 4, 4, 4, 4, 4}},
    {'U', {17, 17, 17, 17, 17, 17, 14}}, {'V', {17, 17, 17, 17, 17, 10, 4}},
    {'W', {17, 17, 17, 21, 21, 21, 10}}, {'X', {17, 17, 10, 4, 10, 17, 17}},
    {'Y', {17, 17, 10, 4, 4, 4, 4}},     {'Z', {31, 1, 2, 4, 8, 16, 31}},
    {'0', {14, 17, 19, 21, 25, 17, 14}}, {'1', {4, 12, 4, 4, 4, 4, 14}},
    {'2', {14, 17, 1, 2, 4, 8, 31}},     {'3', {31, 2, 4, 2, 1, 17, 14}},
    {'4', {2, 6, 10, 18, 31, 2, 2}},     {'5', {31, 16, 30, 1, 1, 17, 14}},
    {'6', {6, 8, 16, 30, 17, 17, 14}},   {'7', {31, 1, 2, 4, 8, 8, 8}},
    {'8', {14, 17, 17, 14, 17, 17, 14}}, {'9', {14, 17, 17, 15, 1, 2, 12}},
    {'.', {0, 0, 0, 0, 0, 12, 12}},
    {'-', {0, 0, 0, 31, 0, 0, 0}},       {'+', {0, 4, 4, 31, 4, 4, 0}},
    {'/', {1, 2, 2, 4, 8, 8, 16}},       {'%', {24, 25, 2, 4, 8, 19, 3}},
    {'(', {2, 4, 8, 8, 8, 4, 2}},        {')', {8, 4, 2, 2, 2, 4, 8}},
    {'=', {0, 0, 31, 0, 31, 0, 0}},      {':', {0, 12, 12, 0, 12, 12, 0}},
    {',', {0, 0, 0, 0, 12, 4, 8}},       {'_', {0, 0, 0, 0, 0, 0, 31}},
    {'^', {4, 10, 17, 0, 0, 0, 0}},      {'|', {4, 4, 4, 4, 4, 4, 4}},
};

static const unsigned char *glyph_rows(char c) {
  c = (char)toupper((unsigned char)c);
  for (size_t g = 0; g < sizeof glyphs / sizeof glyphs[0]; g++)
    if (glyphs[g].c == c) return glyphs[g].rows;
  return NULL; /* space and anything else: blank */
}

static void put_px(unsigned char *img, size_t W, size_t H, long x, long y,
                   const unsigned char *c) {
  if (x < 0 || y < 0 || (size_t)x >= W || (size_t)y >= H) return;
  memcpy(img + 3 * ((size_t)y * W + (size_t)x), c, 3);
}

long strata_image_draw_text(unsigned char *rgb, size_t width, size_t height,
                            long x, long y, const char *text, int scale,
                            const unsigned char color[3]) {
  if (!rgb || !text || !color || scale < 1) return x;
  for (; *text; text++, x += 6L * scale) {
    const unsigned char *g = glyph_rows(*text);
    if (!g) continue;
    for (int r = 0; r < 7; r++)
      for (int b = 0; b < 5; b++)
        if (g[r] >> (4 - b) & 1)
          for (int dy = 0; dy < scale; dy++)
            for (int dx = 0; dx < scale; dx++)
              put_px(rgb, width, height, x + (long)b * scale + dx,
                     y + (long)r * scale + dy, color);
  }
  return x;
}

/* ---- images of 2D arrays ------------------------------------------------ */

void strata_png_options_init(strata_png_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->axis = 2;
  o->index = -1;
  o->cmap = STRATA_CMAP_VIRIDIS;
  o->colorbar = 1;
}

static double value_at(const void *data, strata_precision p, size_t i) {
  return p == STRATA_F32 ? (double)((const float *)data)[i]
                         : ((const double *)data)[i];
}

strata_status strata_png_write_image(strata_context *ctx, const char *path,
                                     strata_precision p, size_t w, size_t h,
                                     const void *data,
                                     const strata_png_options *opt) {
  strata_png_options o;
  if (opt)
    o = *opt;
  else
    strata_png_options_init(&o);
  if (p != STRATA_F32 && p != STRATA_F64)
    return strata__fail(ctx, STRATA_EINVAL, "precision is %d", (int)p);
  if (!data || w < 1 || h < 1 || w > 65536 || h > 65536)
    return strata__fail(ctx, STRATA_EINVAL, "image of %zu x %zu values: each "
                        "side must be 1..65536", w, h);
  if ((unsigned)o.cmap >= NCMAPS)
    return strata__fail(ctx, STRATA_EINVAL, "unknown colour map %d",
                        (int)o.cmap);
  if (o.scale < 0 || o.scale > 64)
    return strata__fail(ctx, STRATA_EINVAL, "scale is %d; it must be 0 "
                        "(automatic) to 64", o.scale);
  if (!isfinite(o.lo) || !isfinite(o.hi) || o.lo > o.hi)
    return strata__fail(ctx, STRATA_EINVAL, "colour range [%g, %g] must be "
                        "finite with lo <= hi", o.lo, o.hi);
  double lo = o.lo, hi = o.hi;
  if (lo == hi && lo == 0) { /* automatic: the finite values' range */
    double mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < w * h; i++) {
      double v = value_at(data, p, i);
      if (!isfinite(v)) continue;
      if (v < mn) mn = v;
      if (v > mx) mx = v;
    }
    if (mn > mx) mn = mx = 0;
    if (cmaps[o.cmap].diverging) {
      double a = fmax(fabs(mn), fabs(mx));
      mn = -a;
      mx = a;
    }
    lo = mn;
    hi = mx;
  }
  if (lo == hi) { /* a constant image: centre it in the map */
    double d = lo != 0 ? fabs(lo) * 0.5 : 1.0;
    lo -= d;
    hi += d;
  }
  size_t sc = (size_t)o.scale;
  if (sc == 0) {
    size_t big = w > h ? w : h;
    sc = big >= 512 ? 1 : 512 / big;
    if (sc > 16) sc = 16;
  }
  size_t iw = w * sc, ih = h * sc, m = 8;
  int fs = ih >= 400 ? 2 : 1;
  char lab[3][32];
  size_t labw = 0;
  if (o.colorbar) {
    double v[3] = {hi, 0.5 * (lo + hi), lo};
    for (int k = 0; k < 3; k++) {
      snprintf(lab[k], sizeof lab[k], "%.3g", v[k]);
      size_t L = strlen(lab[k]) * 6 * (size_t)fs;
      if (L > labw) labw = L;
    }
  }
  size_t barh = ih < 64 ? 64 : ih;
  size_t W = m + iw + (o.colorbar ? 12 + 16 + 6 + labw : 0) + m;
  size_t H = m + (o.colorbar ? barh : ih) + m;
  if (o.colorbar) H += 8 * (size_t)fs; /* room for half a label above/below */
  if (W * H > ((size_t)1 << 28))
    return strata__fail(ctx, STRATA_EINVAL, "the image would be %zu x %zu "
                        "pixels; lower the scale", W, H);
  unsigned char *img = malloc(W * H * 3);
  if (!img)
    return strata__fail(ctx, STRATA_ENOMEM, "cannot allocate %zu bytes for "
                        "the image", W * H * 3);
  memset(img, 255, W * H * 3);
  size_t top = m + (o.colorbar ? 4 * (size_t)fs : 0);
  static const unsigned char nan_rgb[3] = {255, 0, 255};
  for (size_t r = 0; r < h; r++) {
    size_t src_r = o.flip ? h - 1 - r : r;
    for (size_t c = 0; c < w; c++) {
      double v = value_at(data, p, src_r * w + c);
      unsigned char rgb[3];
      if (isnan(v))
        memcpy(rgb, nan_rgb, 3);
      else
        cmap_rgb(o.cmap, (v - lo) / (hi - lo), rgb);
      for (size_t dy = 0; dy < sc; dy++)
        for (size_t dx = 0; dx < sc; dx++)
          memcpy(img + 3 * ((top + r * sc + dy) * W + m + c * sc + dx), rgb,
                 3);
    }
  }
  if (o.colorbar) {
    static const unsigned char black[3] = {0, 0, 0};
    long bx = (long)(m + iw + 12), by = (long)top;
    for (size_t y = 0; y < barh; y++) {
      unsigned char rgb[3];
      cmap_rgb(o.cmap, 1.0 - (double)y / (double)(barh - 1), rgb);
      for (long x = 1; x < 15; x++)
        put_px(img, W, H, bx + x, by + (long)y, rgb);
    }
    for (long x = 0; x < 16; x++) { /* frame */
      put_px(img, W, H, bx + x, by, black);
      put_px(img, W, H, bx + x, by + (long)barh - 1, black);
    }
    for (long y = 0; y < (long)barh; y++) {
      put_px(img, W, H, bx, by + y, black);
      put_px(img, W, H, bx + 15, by + y, black);
    }
    long ys[3] = {by, by + (long)barh / 2, by + (long)barh - 1};
    for (int k = 0; k < 3; k++) {
      for (long x = 16; x < 20; x++) put_px(img, W, H, bx + x, ys[k], black);
      strata_image_draw_text(img, W, H, bx + 22, ys[k] - 3 * fs, lab[k], fs,
                             black);
    }
  }
  strata_status s = strata_png_write_rgb(ctx, path, W, H, img);
  free(img);
  return s;
}

/* ---- slices of fields -------------------------------------------------- */

strata_status strata__png_slice(strata_context *ctx, int dims,
                               const size_t n[3],
                               const strata_png_options *o,
                               const char *argpre, int ax[3], long *index) {
  char nm[STRATA__ARGNAME_SIZE];
  ax[0] = 0;
  ax[1] = 1;
  ax[2] = 2;
  *index = 0;
  if (dims != 3) return STRATA_OK;
  if (o->axis < 0 || o->axis > 2) {
    snprintf(nm, sizeof nm, "%saxis", argpre);
    return strata__fail_arg(ctx, STRATA_EINVAL, nm, o->axis,
                            "slice axis is %d; it must be 0 (x), 1 (y) or "
                            "2 (z)", o->axis);
  }
  ax[2] = o->axis;
  ax[0] = o->axis == 0 ? 1 : 0;
  ax[1] = o->axis == 2 ? 1 : 2;
  const long nn = (long)n[ax[2]];
  *index = o->index == -1 ? nn / 2 : o->index;
  if (*index < 0 || *index >= nn) {
    snprintf(nm, sizeof nm, "%sindex", argpre);
    return strata__fail_arg(ctx, STRATA_EINVAL, nm, o->index,
                            "slice index %ld along %c is outside 0..%ld",
                            *index, "xyz"[ax[2]], nn - 1);
  }
  return STRATA_OK;
}

strata_status strata__png_write_slice(strata_context *ctx, const char *path,
                                      strata_precision p, int dims,
                                      const size_t n[3], const void *host,
                                      const strata_png_options *o,
                                      void *scratch) {
  int ax[3];
  long idx;
  strata_status s = strata__png_slice(ctx, dims, n, o, "", ax, &idx);
  if (s != STRATA_OK) return s;
  const size_t es = (size_t)p, w = n[ax[0]], h = n[ax[1]];
  const size_t st[3] = {1, n[0], n[0] * n[1]};
  unsigned char *sl = scratch ? scratch : malloc(w * h * es);
  if (!sl)
    return strata__fail(ctx, STRATA_ENOMEM, "out of memory for a slice");
  for (size_t r = 0; r < h; r++)
    for (size_t c = 0; c < w; c++)
      memcpy(sl + (r * w + c) * es,
             (const unsigned char *)host +
                 (c * st[ax[0]] + r * st[ax[1]] + (size_t)idx * st[ax[2]]) *
                     es,
             es);
  s = strata_png_write_image(ctx, path, p, w, h, sl, o);
  if (!scratch) free(sl);
  return s;
}

strata_status strata_field_save_png(const strata_field *f, const char *path,
                                    const strata_png_options *opt) {
  if (!f) return STRATA_EINVAL;
  strata_png_options o;
  if (opt)
    o = *opt;
  else
    strata_png_options_init(&o);
  int ax[3];
  long idx;
  /* refused before the host copy is made */
  strata_status s = strata__png_slice(f->ctx, f->d.dims, f->d.n, &o, "", ax,
                                      &idx);
  if (s != STRATA_OK) return s;
  void *host = NULL;
  s = strata__field_to_host(f, &host);
  if (s != STRATA_OK) return s;
  s = strata__png_write_slice(f->ctx, path, f->d.precision, f->d.dims,
                              f->d.n, host, &o, NULL);
  free(host);
  return s;
}
