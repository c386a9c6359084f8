/* PNG images of fields: a colour map (src/io/colormap.c), an optional
 * colour bar with labelled ends and middle, axes, a model's interfaces,
 * labelled in the one 5x7 font (src/io/font.c) of every image the
 * library and its programs draw.  zlib does the deflate stream and the
 * chunks' CRC-32. */
#define _POSIX_C_SOURCE 200809L
#include "io_internal.h"

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

/* Where a PNG goes: the file path, or with path NULL memory (*data,
 * malloc'd, of *size bytes): the same bytes either way. */
typedef struct {
  const char *path;
  void **data;
  size_t *size;
} png_sink;

/* The PNG of rgb, with title (UTF-8, or NULL) as its Title text. */
static strata_status write_png(strata_context *ctx, const png_sink *to,
                               size_t width, size_t height,
                               const unsigned char *rgb, const char *title) {
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
  strata_status s = to->path ? strata__ofile_open(&o, ctx, to->path)
                             : strata__ofile_open_memory(&o, ctx);
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
  if (title && *title) {
    /* iTXt: keyword, NUL, uncompressed, no language, no translation */
    unsigned char t[512];
    static const unsigned char head[] = "Title\0\0\0\0";
    size_t hn = sizeof head - 1, tn = strlen(title);
    if (tn > sizeof t - hn) { /* cut at a character's start */
      tn = sizeof t - hn;
      while (tn > 0 && ((unsigned char)title[tn] & 0xc0) == 0x80) tn--;
    }
    memcpy(t, head, hn);
    memcpy(t + hn, title, tn);
    chunk(&o, "iTXt", t, hn + tn);
  }
  chunk(&o, "IDAT", z, (size_t)zn);
  chunk(&o, "IEND", NULL, 0);
  free(z);
  return to->path ? strata__ofile_commit(&o)
                  : strata__ofile_commit_memory(&o, to->data, to->size);
}

strata_status strata_png_write_rgb(strata_context *ctx, const char *path,
                                   size_t width, size_t height,
                                   const unsigned char *rgb) {
  const png_sink to = {path, NULL, NULL};
  return write_png(ctx, &to, width, height, rgb, NULL);
}

/* ---- images of 2D arrays ------------------------------------------------ */

void strata_png_options_init(strata_png_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->axis = 2;
  o->index = -1;
  o->cmap = STRATA_CMAP_VIRIDIS;
  o->colorbar = 1;
  o->axes = 1;
  static const char *const names[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; a++) {
    o->coord[a].name = names[a];
    o->coord[a].step = 1;
  }
}

static double value_at(const void *data, strata_precision p, size_t i) {
  return p == STRATA_F32 ? (double)((const float *)data)[i]
                         : ((const double *)data)[i];
}

/* C's exponents made short: 1.5e+06 -> 1.5e6, 2e-05 -> 2e-5. */
static void short_exponent(char *b) {
  char *e = strchr(b, 'e');
  if (!e) return;
  char *d = e + 1, *q = d;
  if (*q == '+') q++;
  else if (*q == '-') d++, q++;
  while (*q == '0' && q[1]) q++;
  memmove(d, q, strlen(q) + 1);
}

/* v with 3 significant digits: the colour bar's labels. */
static void fmt_value(char *b, size_t n, double v) {
  snprintf(b, n, "%.3g", v == 0 ? 0.0 : v);
  short_exponent(b);
}

/* A tick's value v on a scale of round steps: as many decimals as the
 * step needs, in exponent form outside 1e-3..1e6. */
static void fmt_tick(char *b, size_t n, double v, double step) {
  if (fabs(v) < 1e-9 * step) v = 0;
  double a = fmax(fabs(v), step);
  if (a >= 1e6 || a < 1e-3) {
    int digits = (int)(floor(log10(a)) - floor(log10(step) + 1e-9));
    snprintf(b, n, "%.*e", digits < 0 ? 0 : digits > 6 ? 6 : digits, v);
    short_exponent(b);
  } else {
    int dec = (int)ceil(-log10(step) - 1e-9);
    snprintf(b, n, "%.*f", dec < 0 ? 0 : dec, v);
  }
}

/* 1, 2 or 5 times a power of ten: about range / target. */
static double nice_step(double range, int target) {
  double raw = range / target, e = pow(10, floor(log10(raw))), f = raw / e;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e;
}

enum { MAX_TICKS = 24 };
typedef struct {
  double pos; /* pixels from the side's start to the tick */
  char s[32];
} tick;

/* Where coordinate v lies along a side of n points shown in cells of cell
 * pixels, each of d points (flipped: index 0 at the far end). */
static double side_pos(const strata_png_coord *c, size_t n, size_t d,
                       double cell, int flipped, double v) {
  double i = (v - c->origin) / c->step, dn = (double)((n + d - 1) / d);
  return (flipped ? dn - (i + 0.5) / (double)d : (i + 0.5) / (double)d) *
         cell;
}

/* Ticks at round values of c along a side of n points (len pixels), at
 * least `apart` pixels apart, or wider than their labels (text of cw
 * pixels a character) when across.  Returns how many. */
static int make_ticks(const strata_png_coord *c, size_t n, size_t d,
                      double cell, int flipped, int across, int apart,
                      int cw, tick *t) {
  double a = c->origin, b = c->origin + (double)(n - 1) * c->step;
  double lo = fmin(a, b), hi = fmax(a, b), len = cell * (double)((n + d - 1) / d);
  if (n == 1 || !(hi > lo)) {
    t[0].pos = side_pos(c, n, d, cell, flipped, a);
    snprintf(t[0].s, sizeof t[0].s, "%.6g", a == 0 ? 0.0 : a);
    short_exponent(t[0].s);
    return 1;
  }
  int target = (int)(len / apart);
  if (target > 10) target = 10;
  if (target < 1) target = 1;
  for (;; target--) {
    double st = nice_step(hi - lo, target);
    double v0 = ceil(lo / st - 1e-9) * st;
    int k = 0, fits = 1;
    for (double v = v0; v <= hi + 1e-9 * st && k < MAX_TICKS; v = v0 + k * st) {
      t[k].pos = side_pos(c, n, d, cell, flipped, v);
      fmt_tick(t[k].s, sizeof t[k].s, v, st);
      k++;
    }
    for (int i = 1; i < k && across; i++) {
      double need = 0.5 * (double)(strlen(t[i].s) + strlen(t[i - 1].s)) * cw +
                    2.0 * cw;
      if (fabs(t[i].pos - t[i - 1].pos) < need) fits = 0;
    }
    if (fits || target == 1) return k;
  }
}

static long lmax(long a, long b) { return a > b ? a : b; }

static void text_at(unsigned char *img, size_t W, size_t H, long x, long y,
                    const char *s, int fs) {
  static const unsigned char black[3] = {0, 0, 0};
  strata_image_draw_text(img, W, H, x, y, s, fs, black);
}

static long text_w(const char *s, int fs) {
  size_t n = strlen(s);
  return n ? (long)n * 6 * fs - fs : 0;
}

/* "name (unit)", "name", or "" */
static void axis_title(char *b, size_t n, const char *name, const char *unit) {
  if (!name) name = "";
  if (unit && *unit)
    snprintf(b, n, "%s%s(%s)", name, *name ? " " : "", unit);
  else
    snprintf(b, n, "%s", name);
}

/* The image's layout, in pixels. */
typedef struct {
  size_t W, H;
  long left, top;      /* the plot's top-left pixel */
  long pw, ph;         /* the plot's size */
  long bx, bh;         /* the colour bar's left edge and height */
  int fs;              /* font scale */
} layout;

/* The options and the data a renderer is given. */
static strata_status png_check(strata_context *ctx, strata_precision p,
                               size_t w, size_t h, const void *data,
                               const strata_png_options *opt) {
  const strata_png_options o = *opt;
  if (p != STRATA_F32 && p != STRATA_F64)
    return strata__fail(ctx, STRATA_EINVAL, "precision is %d", (int)p);
  if (!data || w < 1 || h < 1 || w > 65536 || h > 65536)
    return strata__fail(ctx, STRATA_EINVAL, "image of %zu x %zu values: each "
                        "side must be 1..65536", w, h);
  if (strata__cmap_diverging(o.cmap) < 0)
    return strata__fail(ctx, STRATA_EINVAL, "unknown colour map %d",
                        (int)o.cmap);
  if (o.scale < 0 || o.scale > 64)
    return strata__fail(ctx, STRATA_EINVAL, "scale is %d; it must be 0 "
                        "(automatic) to 64", o.scale);
  if (!isfinite(o.lo) || !isfinite(o.hi) || o.lo > o.hi)
    return strata__fail(ctx, STRATA_EINVAL, "colour range [%g, %g] must be "
                        "finite with lo <= hi", o.lo, o.hi);
  for (int a = 0; a < 2 && o.axes; a++)
    if (!isfinite(o.coord[a].origin) || !isfinite(o.coord[a].step) ||
        o.coord[a].step == 0)
      return strata__fail(ctx, STRATA_EINVAL, "axis %d: origin %g and step "
                          "%g must be finite, the step not 0", a,
                          o.coord[a].origin, o.coord[a].step);
  return STRATA_OK;
}

/* The values' range, the colour range and what the colour bar cannot say
 * (note). */
typedef struct {
  double mn, mx, lo, hi;
  int flat; /* one value and no range set: a swatch, not a bar */
  char note[64];
} vrange;

static void png_range(const void *data, strata_precision p, size_t n,
                      const strata_png_options *opt, vrange *R) {
  const strata_png_options o = *opt;
  double mn = INFINITY, mx = -INFINITY;
  size_t nnan = 0;
  for (size_t i = 0; i < n; i++) {
    double v = value_at(data, p, i);
    if (isnan(v)) nnan++;
    if (!isfinite(v)) continue;
    if (v < mn) mn = v;
    if (v > mx) mx = v;
  }
  char *note = R->note;
  const size_t nsz = sizeof R->note;
  note[0] = 0;
  if (mn > mx)
    snprintf(note, nsz, nnan ? "all NaN" : "no finite value");
  else if (mn == mx && mn == 0)
    snprintf(note, nsz, "all zero");
  else if (mn == mx)
    snprintf(note, nsz, "constant = %.6g", mn);
  if (nnan && mn <= mx)
    snprintf(note + strlen(note), nsz - strlen(note), "%s%zu NaN "
             "(magenta)", *note ? ", " : "", nnan);
  double lo = o.lo, hi = o.hi;
  int flat = 0;
  if (lo == hi && lo == 0) { /* automatic: the finite values' range */
    if (mn > mx) mn = mx = 0;
    if (strata__cmap_diverging(o.cmap) == 1) {
      double a = fmax(fabs(mn), fabs(mx));
      mn = -a;
      mx = a;
    }
    lo = mn;
    hi = mx;
    flat = lo == hi;
  }
  if (lo == hi) { /* a constant range: centre it in the map */
    double d = lo != 0 ? fabs(lo) * 0.5 : 1.0;
    lo -= d;
    hi += d;
  }
  R->mn = mn;
  R->mx = mx;
  R->lo = lo;
  R->hi = hi;
  R->flat = flat;
}

/* The texts around the plot: tick labels, titles, the colour bar's. */
typedef struct {
  tick xt[MAX_TICKS], yt[MAX_TICKS];
  int nxt, nyt;
  char xtitle[128], ytitle[128], vtitle[128], title[512];
  char lab[3][32];  /* the colour bar's labels: max, min, and 0 (or the
                       middle) */
  double labv[3];
} texts;

/* The frame, the ticks and the titles. */
static void draw_axes(unsigned char *img, const layout *Lp,
                      const strata_png_options *o, const texts *T) {
  const layout L = *Lp;
  const int fs = L.fs, th = 8 * fs;
  const long m = 8;
  static const unsigned char black[3] = {0, 0, 0};
  const tick *xt = T->xt, *yt = T->yt;
  for (long x = L.left - 1; x <= L.left + L.pw; x++) { /* the frame */
    strata__put_px(img, L.W, L.H, x, L.top - 1, black);
    strata__put_px(img, L.W, L.H, x, L.top + L.ph, black);
  }
  for (long y = L.top - 1; y <= L.top + L.ph; y++) {
    strata__put_px(img, L.W, L.H, L.left - 1, y, black);
    strata__put_px(img, L.W, L.H, L.left + L.pw, y, black);
  }
  for (int k = 0; k < T->nxt; k++) {
    long x = L.left + (long)floor(xt[k].pos);
    for (long d = 1; d <= 4; d++)
      strata__put_px(img, L.W, L.H, x, L.top + L.ph + d, black);
    text_at(img, L.W, L.H, x - text_w(xt[k].s, fs) / 2,
            L.top + L.ph + 1 + 4 + 3, xt[k].s, fs);
  }
  for (int k = 0; k < T->nyt; k++) {
    long y = L.top + (long)floor(yt[k].pos);
    for (long d = 2; d <= 5; d++) strata__put_px(img, L.W, L.H, L.left - d, y, black);
    text_at(img, L.W, L.H, L.left - 1 - 4 - 3 - text_w(yt[k].s, fs),
            y - 3 * fs, yt[k].s, fs);
  }
  text_at(img, L.W, L.H, L.left + (L.pw - text_w(T->xtitle, fs)) / 2,
          L.top + L.ph + 1 + 4 + 3 + th + 4, T->xtitle, fs);
  text_at(img, L.W, L.H, m, m + th + 6, T->ytitle, fs);
  text_at(img, L.W, L.H, ((long)L.W - text_w(T->title, fs)) / 2, m, T->title,
          fs);
  if (o->colorbar)
    text_at(img, L.W, L.H, L.bx, m + th + 6, T->vtitle, fs);
}

/* The colour bar, its frame and labels. */
static void draw_bar(unsigned char *img, const layout *Lp,
                     const strata_png_options *o, const texts *T, double lo,
                     double hi, int flat) {
  const layout L = *Lp;
  const int fs = L.fs, th = 8 * fs;
  static const unsigned char flat_rgb[3] = {225, 225, 225},
                             black[3] = {0, 0, 0};
  long bx = L.bx, by = L.top;
  for (long y = 0; y < L.bh; y++) {
    unsigned char rgb[3];
    if (flat)
      memcpy(rgb, flat_rgb, 3);
    else
      strata__cmap_rgb(o->cmap, 1.0 - (double)y / (double)(L.bh - 1), rgb);
    for (long x = 1; x < 15; x++) strata__put_px(img, L.W, L.H, bx + x, by + y, rgb);
  }
  for (long x = 0; x < 16; x++) { /* frame */
    strata__put_px(img, L.W, L.H, bx + x, by, black);
    strata__put_px(img, L.W, L.H, bx + x, by + L.bh - 1, black);
  }
  for (long y = 0; y < L.bh; y++) {
    strata__put_px(img, L.W, L.H, bx, by + y, black);
    strata__put_px(img, L.W, L.H, bx + 15, by + y, black);
  }
  long ys[3] = {by, by + L.bh - 1,
                by + (long)lround((hi - T->labv[2]) / (hi - lo) *
                                  (double)(L.bh - 1))};
  /* the middle label only where it clears the ends' */
  int nl = flat ? 1
           : ys[2] - ys[0] > th + 2 && ys[1] - ys[2] > th + 2 ? 3 : 2;
  if (flat) ys[0] = by + L.bh / 2;
  for (int k = 0; k < nl; k++) {
    for (long x = 16; x < 20; x++) strata__put_px(img, L.W, L.H, bx + x, ys[k], black);
    text_at(img, L.W, L.H, bx + 22, ys[k] - 3 * fs, T->lab[k], fs);
  }
}

/* The image's scale: pixels per point (sx, sy) when the options give
 * none (scale 0) chosen for a plot of about 512 pixels, no side under 32;
 * above 4096 points a side, points per pixel (dx, dy). */
static void png_scale(int scale, size_t w, size_t h, size_t *sxp, size_t *syp,
                      size_t *dxp, size_t *dyp) {
  size_t sx = (size_t)scale, sy = sx, dx = 1, dy = 1;
  if (sx == 0) {
    enum { CAP = 4096, TARGET = 512, MIN_SIDE = 32 };
    dx = (w + CAP - 1) / CAP;
    dy = (h + CAP - 1) / CAP;
    size_t vw = (w + dx - 1) / dx, vh = (h + dy - 1) / dy;
    size_t big = vw > vh ? vw : vh;
    sx = big >= TARGET ? 1 : TARGET / big;
    if (sx > 16) sx = 16;
    sy = sx;
    if (vw * sx < MIN_SIDE) sx = (MIN_SIDE + vw - 1) / vw;
    if (vh * sy < MIN_SIDE) sy = (MIN_SIDE + vh - 1) / vh;
  }
  *sxp = sx;
  *syp = sy;
  *dxp = dx;
  *dyp = dy;
}

/* The plot: each cell the mean of its dx x dy points (NaN if one is),
 * sx x sy pixels. */
static void draw_plot(unsigned char *img, const layout *Lp, const void *data,
                      strata_precision p, size_t w, size_t h,
                      const strata_png_options *o, const vrange *R, size_t dx,
                      size_t dy, size_t sx, size_t sy) {
  const layout L = *Lp;
  const double lo = R->lo, hi = R->hi;
  const int flat = R->flat;
  const size_t vw = (w + dx - 1) / dx, vh = (h + dy - 1) / dy;
  static const unsigned char nan_rgb[3] = {255, 0, 255},
                             flat_rgb[3] = {225, 225, 225};
  for (size_t r = 0; r < vh; r++) {
    size_t br = o->flip ? vh - 1 - r : r;
    for (size_t c = 0; c < vw; c++) {
      double sum = 0;
      size_t cnt = 0;
      for (size_t i = br * dy; i < (br + 1) * dy && i < h; i++)
        for (size_t j = c * dx; j < (c + 1) * dx && j < w; j++, cnt++)
          sum += value_at(data, p, i * w + j);
      double v = sum / (double)cnt;
      unsigned char rgb[3];
      if (isnan(v))
        memcpy(rgb, nan_rgb, 3);
      else if (flat)
        memcpy(rgb, flat_rgb, 3);
      else
        strata__cmap_rgb(o->cmap, (v - lo) / (hi - lo), rgb);
      for (size_t yy = 0; yy < sy; yy++)
        for (size_t xx = 0; xx < sx; xx++)
          memcpy(img + 3 * (((size_t)L.top + r * sy + yy) * L.W +
                            (size_t)L.left + c * sx + xx),
                 rgb, 3);
    }
  }
}

/* o->lines over the plot of a w x h array drawn in cells of sx x sy
 * pixels, each of dx x dy values: a value's bit 0 as the column of its
 * cell next to the following value across, its bit 1 as the row next to
 * the following value down (the cell's bottom row, or its top row when
 * flipped). */
static void draw_lines(unsigned char *img, const layout *L,
                       const strata_png_options *o, size_t w, size_t h,
                       size_t dx, size_t dy, size_t sx, size_t sy) {
  const size_t vh = (h + dy - 1) / dy;
  for (size_t i = 0; i < h; i++) {
    const long y0 = L->top + (long)((o->flip ? vh - 1 - i / dy : i / dy) * sy);
    for (size_t j = 0; j < w; j++) {
      const unsigned m = o->lines[i * w + j];
      const long x0 = L->left + (long)(j / dx * sx);
      if (m & 1 && j + 1 < w)
        for (long y = y0; y < y0 + (long)sy; y++)
          strata__put_px(img, L->W, L->H, x0 + (long)sx - 1, y, o->line_rgb);
      if (m & 2 && i + 1 < h) {
        const long y = o->flip ? y0 : y0 + (long)sy - 1;
        for (long x = x0; x < x0 + (long)sx; x++)
          strata__put_px(img, L->W, L->H, x, y, o->line_rgb);
      }
    }
  }
}

static strata_status png_image(strata_context *ctx, const png_sink *to,
                               strata_precision p, size_t w, size_t h,
                               const void *data,
                               const strata_png_options *opt) {
  strata_png_options o;
  if (opt)
    o = *opt;
  else
    strata_png_options_init(&o);
  strata_status st = png_check(ctx, p, w, h, data, &o);
  if (st != STRATA_OK) return st;
  vrange R;
  png_range(data, p, w * h, &o, &R);
  const double lo = R.lo, hi = R.hi, mn = R.mn;
  const int flat = R.flat;
  const char *note = R.note;
  /* pixels per point (sx, sy), or points per pixel (dx, dy) */
  size_t sx, sy, dx, dy;
  png_scale(o.scale, w, h, &sx, &sy, &dx, &dy);
  const size_t vw = (w + dx - 1) / dx, vh = (h + dy - 1) / dy;
  layout L;
  L.pw = (long)(vw * sx);
  L.ph = (long)(vh * sy);
  L.fs = o.axes ? (L.pw >= 384 || L.ph >= 384 ? 2 : 1)
                : (L.ph >= 400 ? 2 : 1);
  const int fs = L.fs, cw = 6 * fs, gh = 7 * fs, th = 8 * fs;
  const long m = 8;
  /* the colour bar's labels: max, min, and 0 (or the middle) */
  texts T;
  memset(&T, 0, sizeof T);
  T.labv[0] = hi;
  T.labv[1] = lo;
  T.labv[2] = lo < 0 && hi > 0 ? 0 : 0.5 * (lo + hi);
  long labw = 0;
  if (flat) {
    fmt_value(T.lab[0], sizeof T.lab[0], mn);
    labw = text_w(T.lab[0], fs);
  } else {
    for (int k = 0; k < 3; k++) {
      fmt_value(T.lab[k], sizeof T.lab[k], T.labv[k]);
      if (text_w(T.lab[k], fs) > labw) labw = text_w(T.lab[k], fs);
    }
  }
  tick *xt = T.xt, *yt = T.yt;
  long ylw = 0;
  if (o.axes) {
    /* a side of one point has no scale to show */
    T.nxt = w > 1 ? make_ticks(&o.coord[0], w, dx, (double)sx, 0, 1, 4 * cw,
                               cw, xt)
                  : 0;
    T.nyt = h > 1 ? make_ticks(&o.coord[1], h, dy, (double)sy, o.flip, 0,
                               3 * th, cw, yt)
                  : 0;
    for (int k = 0; k < T.nyt; k++)
      if (text_w(yt[k].s, fs) > ylw) ylw = text_w(yt[k].s, fs);
    axis_title(T.xtitle, sizeof T.xtitle, o.coord[0].name, o.coord[0].unit);
    axis_title(T.ytitle, sizeof T.ytitle, o.coord[1].name, o.coord[1].unit);
    axis_title(T.vtitle, sizeof T.vtitle, o.value_name, o.value_unit);
    snprintf(T.title, sizeof T.title, "%s%s%s", o.title ? o.title : "",
             o.title && *o.title && *note ? ": " : "", note);
  }
  const int nxt = T.nxt;
  const char *title = T.title, *ytitle = T.ytitle, *vtitle = T.vtitle;
  long right; /* from the plot's right edge to the image's */
  if (o.axes) {
    L.left = m + ylw + 3 + 4 + 1;
    L.top = m + th + 6 + th + 8 + 1;
    right = 1 + m;
    if (nxt) right = lmax(right, text_w(xt[nxt - 1].s, fs) / 2 + m -
                                     (L.pw - (long)xt[nxt - 1].pos));
    if (nxt) L.left = lmax(L.left, m + text_w(xt[0].s, fs) / 2 -
                                       (long)xt[0].pos);
  } else {
    L.left = m;
    L.top = m + (o.colorbar ? 4 * fs : 0);
    right = m;
  }
  L.bx = 0;
  L.bh = o.colorbar ? (flat ? 16 : L.ph < 64 ? 64 : L.ph) : 0;
  if (o.colorbar) {
    L.bx = L.left + L.pw + 12 + (o.axes ? 1 : 0);
    long r = (L.bx - L.left - L.pw) + 16 + 6 + labw + m;
    if (o.axes && text_w(vtitle, fs) + (L.bx - L.left - L.pw) + m > r)
      r = text_w(vtitle, fs) + (L.bx - L.left - L.pw) + m;
    if (r > right) right = r;
  }
  long W = L.left + L.pw + right, H;
  if (o.axes) {
    long below = L.top + L.ph + 1 + 4 + 3 + th + 4 + th + m;
    H = lmax(below, L.top + L.bh + gh / 2 + m);
    if (text_w(title, fs) + 2 * m > W) W = text_w(title, fs) + 2 * m;
    if (text_w(ytitle, fs) + m > L.left + L.pw + 12 &&
        text_w(ytitle, fs) + 2 * m > W)
      W = text_w(ytitle, fs) + 2 * m;
  } else {
    H = L.top + (o.colorbar ? L.bh : L.ph) + m + (o.colorbar ? 4 * fs : 0);
  }
  L.W = (size_t)W;
  L.H = (size_t)H;
  if (L.W * L.H > ((size_t)1 << 28))
    return strata__fail(ctx, STRATA_EINVAL, "the image would be %zu x %zu "
                        "pixels; lower the scale", L.W, L.H);
  unsigned char *img = malloc(L.W * L.H * 3);
  if (!img)
    return strata__fail(ctx, STRATA_ENOMEM, "cannot allocate %zu bytes for "
                        "the image", L.W * L.H * 3);
  memset(img, 255, L.W * L.H * 3);
  draw_plot(img, &L, data, p, w, h, &o, &R, dx, dy, sx, sy);
  if (o.lines) draw_lines(img, &L, &o, w, h, dx, dy, sx, sy);
  if (o.axes) draw_axes(img, &L, &o, &T);
  if (o.colorbar) draw_bar(img, &L, &o, &T, lo, hi, flat);
  strata_status s = write_png(ctx, to, L.W, L.H, img,
                              o.axes ? title : note);
  free(img);
  return s;
}

strata_status strata_png_write_image(strata_context *ctx, const char *path,
                                     strata_precision p, size_t w, size_t h,
                                     const void *data,
                                     const strata_png_options *opt) {
  const png_sink to = {path, NULL, NULL};
  return png_image(ctx, &to, p, w, h, data, opt);
}

strata_status strata__png_image(strata_context *ctx, const char *path,
                                void **png, size_t *size, strata_precision p,
                                size_t w, size_t h, const void *data,
                                const strata_png_options *opt) {
  const png_sink to = {path, png, size};
  return png_image(ctx, &to, p, w, h, data, opt);
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

static strata_status png_slice(strata_context *ctx, const png_sink *to,
                               strata_precision p, int dims,
                               const size_t n[3], const void *host,
                               const strata_png_options *o, void *scratch) {
  int ax[3];
  long idx;
  strata_status s = strata__png_slice(ctx, dims, n, o, "", ax, &idx);
  if (s != STRATA_OK) return s;
  const size_t es = (size_t)p, w = n[ax[0]], h = n[ax[1]];
  const size_t st[3] = {1, n[0], n[0] * n[1]};
  unsigned char *sl = scratch ? scratch : malloc(w * h * es);
  /* the lines of the slice: the grid's bits of its two axes */
  unsigned char *ln = o->lines ? malloc(w * h) : NULL;
  if (!sl || (o->lines && !ln)) {
    if (!scratch) free(sl);
    return strata__fail(ctx, STRATA_ENOMEM, "out of memory for a slice");
  }
  for (size_t r = 0; r < h; r++)
    for (size_t c = 0; c < w; c++) {
      const size_t q = c * st[ax[0]] + r * st[ax[1]] + (size_t)idx * st[ax[2]];
      memcpy(sl + (r * w + c) * es, (const unsigned char *)host + q * es, es);
      if (ln)
        ln[r * w + c] = (unsigned char)((o->lines[q] >> ax[0] & 1) |
                                        (o->lines[q] >> ax[1] & 1) << 1);
    }
  /* the slice's axes are two of the grid's; its plane goes in the title */
  strata_png_options so = *o;
  so.lines = ln;
  so.coord[0] = o->coord[ax[0]];
  so.coord[1] = o->coord[ax[1]];
  if (dims == 1) so.coord[1].name = NULL; /* a line has no y */
  char title[512];
  if (dims == 3 && o->axes) {
    const strata_png_coord *c = &o->coord[ax[2]];
    char at[48], nm[2] = {"xyz"[ax[2]], 0};
    snprintf(at, sizeof at, "%.6g", c->origin + (double)idx * c->step);
    short_exponent(at);
    snprintf(title, sizeof title, "%s%s%s = %s%s%s",
             o->title ? o->title : "", o->title && *o->title ? ", " : "",
             c->name ? c->name : nm, at,
             c->unit && *c->unit ? " " : "", c->unit ? c->unit : "");
    so.title = title;
  }
  s = png_image(ctx, to, p, w, h, sl, &so);
  if (!scratch) free(sl);
  free(ln);
  return s;
}

strata_status strata__png_write_slice(strata_context *ctx, const char *path,
                                      strata_precision p, int dims,
                                      const size_t n[3], const void *host,
                                      const strata_png_options *o,
                                      void *scratch) {
  const png_sink to = {path, NULL, NULL};
  return png_slice(ctx, &to, p, dims, n, host, o, scratch);
}

strata_status strata_png_encode_grid(strata_context *ctx, strata_precision p,
                                     int dims, const size_t n[3],
                                     const void *host,
                                     const strata_png_options *opt,
                                     void **png, size_t *size) {
  if (!png || !size || !n || !host || dims < 1 || dims > 3)
    return strata__fail(ctx, STRATA_EINVAL, "PNG in memory: NULL argument "
                        "or dims %d outside 1..3", dims);
  *png = NULL;
  *size = 0;
  for (int a = 0; a < 3; a++)
    if (n[a] < 1 || (a >= dims && n[a] != 1))
      return strata__fail_arg(ctx, STRATA_EINVAL, "n", (long)n[a],
                              "PNG in memory: n[%d] = %zu (1.. for the "
                              "grid's axes, 1 beyond them)", a, n[a]);
  strata_png_options o;
  if (opt)
    o = *opt;
  else
    strata_png_options_init(&o);
  const png_sink to = {NULL, png, size};
  return png_slice(ctx, &to, p, dims, n, host, &o, NULL);
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
