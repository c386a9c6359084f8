/* The benchmark's PNG chart: one horizontal bar per measured row, its
 * length the percentage of the copy ceiling, fp32 and fp64 in two colours,
 * lines at 90% (the targets) and 100%.  Drawn here with a 5x7 bitmap font
 * and written by the library's PNG writer, so it needs neither matplotlib
 * nor gnuplot. */
#include "bench_chart.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 5x7 glyphs, rows top to bottom, bit 4 the leftmost column. */
typedef struct {
  char c;
  unsigned char rows[7];
} glyph;

static const glyph font[] = {
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
    {'.', {0, 0, 0, 0, 0, 12, 12}},      {'-', {0, 0, 0, 31, 0, 0, 0}},
    {'/', {1, 2, 2, 4, 8, 8, 16}},       {'%', {24, 25, 2, 4, 8, 19, 3}},
    {'(', {2, 4, 8, 8, 8, 4, 2}},        {')', {8, 4, 2, 2, 2, 4, 8}},
    {'=', {0, 0, 31, 0, 31, 0, 0}},      {':', {0, 12, 12, 0, 12, 12, 0}},
    {'+', {0, 4, 4, 31, 4, 4, 0}},       {',', {0, 0, 0, 0, 12, 4, 8}},
    {'_', {0, 0, 0, 0, 0, 0, 31}},       {'^', {4, 10, 17, 0, 0, 0, 0}},
};

static const unsigned char *glyph_rows(char c) {
  c = (char)toupper((unsigned char)c);
  for (size_t i = 0; i < sizeof font / sizeof font[0]; i++)
    if (font[i].c == c) return font[i].rows;
  return NULL; /* space and anything unknown: blank */
}

typedef struct {
  unsigned char *px;
  int w, h;
} canvas;

static void put(canvas *cv, int x, int y, const unsigned char rgb[3]) {
  if (x < 0 || y < 0 || x >= cv->w || y >= cv->h) return;
  memcpy(cv->px + 3 * ((size_t)y * (size_t)cv->w + (size_t)x), rgb, 3);
}

static void rect(canvas *cv, int x0, int y0, int x1, int y1,
                 const unsigned char rgb[3]) {
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++) put(cv, x, y, rgb);
}

/* Draws text at scale s (each font pixel s x s); returns the end x. */
static int text(canvas *cv, int x, int y, const char *s, int scale,
                const unsigned char rgb[3]) {
  for (; *s; s++, x += 6 * scale) {
    const unsigned char *g = glyph_rows(*s);
    if (!g) continue;
    for (int r = 0; r < 7; r++)
      for (int c = 0; c < 5; c++)
        if (g[r] & (16 >> c))
          rect(cv, x + c * scale, y + r * scale, x + (c + 1) * scale,
               y + (r + 1) * scale, rgb);
  }
  return x;
}

int strata_bench_chart(strata_context *ctx, const char *path,
                       const char *title, const bench_chart_row *rows,
                       int n) {
  static const unsigned char white[3] = {255, 255, 255},
                             black[3] = {20, 20, 20}, grey[3] = {200, 200, 200},
                             f32c[3] = {52, 101, 164}, f64c[3] = {230, 126, 34},
                             copyc[3] = {140, 140, 140},
                             target[3] = {200, 30, 30};
  const int label_w = 600, bar_w = 560, row_h = 20, top = 50, bottom = 50;
  const double max_pct = 125.0;
  canvas cv;
  cv.w = label_w + bar_w + 40;
  cv.h = top + n * row_h + bottom;
  cv.px = malloc((size_t)cv.w * (size_t)cv.h * 3);
  if (!cv.px) return -1;
  rect(&cv, 0, 0, cv.w, cv.h, white);
  text(&cv, 10, 12, title, 2, black);
  text(&cv, 10, 34, "% of the copy ceiling measured in the same run;", 1,
       black);
  int lx = text(&cv, 300, 34, "fp32", 1, f32c);
  lx = text(&cv, lx + 12, 34, "fp64", 1, f64c);
  lx = text(&cv, lx + 12, 34, "copy", 1, copyc);
  text(&cv, lx + 12, 34, "| 90% target", 1, target);
  const int x0 = label_w;
  /* grid lines every 25% */
  for (int p = 0; p <= 125; p += 25) {
    int x = x0 + (int)(bar_w * p / max_pct);
    rect(&cv, x, top - 4, x + 1, top + n * row_h, grey);
    char lab[16];
    snprintf(lab, sizeof lab, "%d%%", p);
    text(&cv, x - 8, top + n * row_h + 8, lab, 1, black);
  }
  for (int i = 0; i < n; i++) {
    int y = top + i * row_h;
    char lab[160];
    snprintf(lab, sizeof lab, "%.40s %s %s", rows[i].op, rows[i].variant,
             rows[i].f64 ? "f64" : "f32");
    text(&cv, 10, y + 6, lab, 1, black);
    double p = rows[i].pct;
    if (!(p >= 0)) p = 0;
    if (p > max_pct) p = max_pct;
    int len = (int)(bar_w * p / max_pct);
    rect(&cv, x0, y + 3, x0 + len, y + row_h - 3,
         rows[i].is_copy ? copyc : rows[i].f64 ? f64c : f32c);
    char val[32];
    snprintf(val, sizeof val, "%.1f", rows[i].pct);
    text(&cv, x0 + len + 4, y + 6, val, 1, black);
  }
  /* the 90% target and the 100% ceiling */
  int x90 = x0 + (int)(bar_w * 90 / max_pct);
  int x100 = x0 + (int)(bar_w * 100 / max_pct);
  for (int y = top - 4; y < top + n * row_h; y += 6)
    rect(&cv, x90, y, x90 + 2, y + 3, target);
  rect(&cv, x100, top - 4, x100 + 2, top + n * row_h, black);
  strata_status s =
      strata_png_write_rgb(ctx, path, (size_t)cv.w, (size_t)cv.h, cv.px);
  free(cv.px);
  return s == STRATA_OK ? 0 : -1;
}
