/* The colour maps of the PNG writers: anchors at 0, 1/8, ..., 1,
 * interpolated linearly; their names for strata_colormap_name and
 * strata_colormap_parse. */
#include "io_internal.h"

#include <math.h>
#include <string.h>

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

void strata__cmap_rgb(strata_colormap c, double t, unsigned char *out) {
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

int strata__cmap_diverging(strata_colormap c) {
  return (unsigned)c < NCMAPS ? cmaps[c].diverging : -1;
}
