/* The exchange model of docs/distributed.md: the machine numbers (the
 * rate of an unfused sweep, a halo message's bandwidth and latency), the
 * gain of fused heat steps, and the predicted time a step on a y-z split
 * of py x pz ranks, by which strata__dist_grid chooses the split when the
 * group leaves it open.  No MPI here: the choice is the same arithmetic on
 * every rank. */
#define _POSIX_C_SOURCE 200809L
#include "dist_internal.h"

#include <math.h>
#include <stdlib.h>

double strata__fuse_gain(int dims, int s) {
  const double p = dims == 2 ? 64 : 32;
  const double q1 = pow(p - 2, dims), qs = pow(p - 2.0 * s, dims);
  const double pd = pow(p, dims);
  return (s * qs / (pd + qs)) / (q1 / (pd + q1));
}

strata__dist_machine strata__dist_machine_of(const strata_context *ctx) {
  const int cuda = strata_context_backend(ctx) == STRATA_BACKEND_CUDA;
  strata__dist_machine m = {cuda ? 2.32e12 : 1e10, cuda ? 159e9 : INFINITY,
                            cuda ? 42e-6 : 0};
  m.mem = strata__tuning_double(ctx, "dist_mem_gbs", m.mem / 1e9) * 1e9;
  m.link = strata__tuning_double(ctx, "dist_link_gbs", m.link / 1e9) * 1e9;
  m.lat = strata__tuning_double(ctx, "dist_link_us", m.lat * 1e6) * 1e-6;
  if (!(m.mem > 0)) m.mem = 1e10;
  if (!(m.link > 0)) m.link = 1e-3;
  return m;
}

/* Predicted seconds a step of a 3D sweep fused s deep (radius 1, values of
 * e bytes) takes on the largest part of n over py x pz ranks:
 *   - the part: nx x Y x Z points, Y = ceil(ny / py), Z = ceil(nz / pz),
 *     recomputing s - 1 rows of each y neighbour;
 *   - the x-z faces (py > 1): one message of s Z nx values to each y
 *     neighbour, packed and unpacked (a read and a write of its bytes at
 *     the sweep's rate on each side), before the sweep and not hidden;
 *   - the x-y faces (pz > 1): s (Y + 2 s) nx values to each z neighbour,
 *     hidden behind the inner planes (Z - 2 s of them) as far as their
 *     work goes; the parts at those faces after;
 *   - a sweep moves 2e bytes a point at M g(s) (strata__fuse_gain).
 * Both neighbours' messages of a phase travel at once: a phase costs
 * lat + bytes / link.  Divided by s: the time of one step. */
double strata__dist_split_time(const strata__dist_machine *m,
                               const size_t n[3], double e, int py, int pz,
                               int s) {
  const double nx = (double)n[0];
  const double Y = ceil((double)n[1] / py), Z = ceil((double)n[2] / pz);
  const int sy = py > 2 ? 2 : py - 1, sz = pz > 2 ? 2 : pz - 1;
  const double tpt = 2.0 * e / (m->mem * strata__fuse_gain(3, s));
  const double A = nx * (Y + sy * (s - 1.0)); /* a plane of the part */
  double ty = 0;
  if (py > 1) {
    const double by = s * Z * nx * e;
    ty = m->lat + by / m->link + sy * 4.0 * by / m->mem;
  }
  double t;
  if (pz > 1) {
    const double tz = m->lat + s * (Y + 2.0 * s) * nx * e / m->link;
    const double K = Z - 2.0 * s;
    if (K >= 1) {
      const double tin = (K * s + s * (s - 1.0)) * A * tpt;
      const double tb = sz * (s * (double)s + s * (s - 1.0)) * A * tpt;
      t = (tin > tz ? tin : tz) + tb;
    } else {
      t = tz + (Z + sz * (s - 1.0)) * s * A * tpt;
    }
  } else {
    t = Z * s * A * tpt;
  }
  return (ty + t) / s;
}

/* The split of P ranks with the least predicted step for a sweep fused
 * s deep: slabs unless a split is predicted faster by more than 1%, so
 * that rounding never moves a run off the slabs.  Parts thinner than need
 * planes (or rows) are left out; when none is left, slabs (whose creation
 * then says what is too thin). */
int strata__dist_choose_py(const strata__dist_machine *m, const size_t n[3],
                           double e, int P, int s, long need) {
  double t1 = INFINITY;
  if ((long)(n[2] / (size_t)P) >= need)
    t1 = strata__dist_split_time(m, n, e, 1, P, s);
  double best = t1;
  int by = 1;
  for (int py = 2; py <= P; py++) {
    if (P % py) continue;
    const int pz = P / py;
    if ((long)(n[2] / (size_t)pz) < need || (long)(n[1] / (size_t)py) < need)
      continue;
    const double t = strata__dist_split_time(m, n, e, py, pz, s);
    if (t < best && t < 0.99 * t1) {
      best = t;
      by = py;
    }
  }
  return by;
}
