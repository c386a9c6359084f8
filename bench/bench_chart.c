/* The benchmark's PNG chart: one horizontal bar per measured row, its
 * length the percentage of the copy ceiling, fp32 and fp64 in two colours,
 * lines at 90% (the targets) and 100%.  Labelled with the library's font
 * (strata_image_draw_text) and written by its PNG writer, so it needs
 * neither matplotlib nor gnuplot. */
#include "bench_chart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Draws text at scale s with the library's font; returns the end x. */
static int text(canvas *cv, int x, int y, const char *s, int scale,
                const unsigned char rgb[3]) {
  return (int)strata_image_draw_text(cv->px, (size_t)cv->w, (size_t)cv->h, x,
                                     y, s, scale, rgb);
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
