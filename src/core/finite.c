/* The blow-up check: one reduction over a field (the backend's nonfinite
 * entry) that finds its NaNs and infinities, and the message that names
 * the first of them by its grid index.  Over several processes each rank
 * reduces its owned planes and the ranks agree on the first bad point, so
 * that every rank stops at the same step with the same message. */
#include "internal.h"

#include <math.h>
#include <stdio.h>

long long strata__host_nonfinite(const void *host, size_t n,
                                 strata_precision p) {
  if (p == STRATA_F32) {
    const float *v = host;
    for (size_t i = 0; i < n; i++)
      if (!isfinite(v[i])) return (long long)i;
  } else {
    const double *v = host;
    for (size_t i = 0; i < n; i++)
      if (!isfinite(v[i])) return (long long)i;
  }
  return -1;
}

static const char *value_text(double v) {
  return isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

strata_status strata__check_finite(const strata_field *f, const char *who,
                                   const char *field, const char *unit,
                                   long step) {
  strata_context *ctx = f->ctx;
  if (!ctx->be->nonfinite)
    return strata__fail(ctx, STRATA_ENOTSUP, "%s: the %s engine cannot "
                        "check %s for NaN and infinity", who, ctx->be->name,
                        field);
  /* over several ranks: this rank's owned planes, in global indices */
  const strata__window *w = f->win;
  strata_field view;
  const strata_field *part = f;
  size_t gn[3] = {f->d.n[0], f->d.n[1], f->d.n[2]};
  long plane0 = 0;
  if (w) {
    strata__field_owned(f, &view);
    part = &view;
    for (int a = 0; a < 3; a++) gn[a] = w->gn[a];
    plane0 = w->own_lo;
  }
  uint64_t count = 0, first = UINT64_MAX;
  double value = 0;
  strata_status s = ctx->be->nonfinite(part, &count, &first, &value);
  /* the first bad point's global index: i + nx (j + ny k) */
  const int ax = f->d.dims - 1;
  const uint64_t pnx = part->d.n[0], pny = part->d.n[1];
  uint64_t idx[3] = {0, 0, 0};
  if (first != UINT64_MAX) {
    idx[0] = first % pnx;
    idx[1] = first / pnx % pny;
    idx[2] = first / pnx / pny;
    if (w) idx[ax] += (uint64_t)plane0;
    if (w && w->py > 1) idx[1] += (uint64_t)w->own_lo_y;
  }
  double gfirst = first == UINT64_MAX
                      ? INFINITY
                      : (double)(idx[0] + gn[0] * (idx[1] + gn[1] * idx[2]));
  double npts = (double)gn[0] * (double)gn[1] * (double)gn[2];
  double total = (double)count;
  if (w) {
    /* a failed reduction counts as a finding, so that no rank steps on
     * alone; the count and the value of the first point only when one is
     * found, in a second reduction */
    double v[1] = {s == STRATA_OK ? gfirst : -1};
    strata_status t = strata_dist_allreduce(w->dist, v, 1, 2);
    if (s != STRATA_OK) return s;
    if (t != STRATA_OK) return strata__fail(ctx, t, "%s: the ranks could "
                                            "not agree on the check of %s",
                                            who, field);
    if (v[0] < 0)
      return strata__fail_elsewhere(ctx, STRATA_EDEVICE, "%s: another rank failed to "
                          "check %s", who, field);
    if (isinf(v[0])) return STRATA_OK;
    const int mine = gfirst == v[0];
    double c[2] = {total, mine ? (isnan(value) ? 1 : value > 0 ? 2 : 3) : 0};
    t = strata_dist_allreduce(w->dist, c, 2, 0);
    if (t != STRATA_OK) return strata__fail(ctx, t, "%s: the ranks could "
                                            "not agree on the check of %s",
                                            who, field);
    total = c[0];
    value = c[1] == 1 ? NAN : c[1] == 2 ? INFINITY : -INFINITY;
    gfirst = v[0];
    const uint64_t g = (uint64_t)gfirst;
    idx[0] = g % gn[0];
    idx[1] = g / gn[0] % gn[1];
    idx[2] = g / gn[0] / gn[1];
  } else {
    if (s != STRATA_OK) return s;
    if (first == UINT64_MAX) return STRATA_OK;
  }
  char at[96];
  if (f->d.dims == 1)
    snprintf(at, sizeof at, "%llu", (unsigned long long)idx[0]);
  else if (f->d.dims == 2)
    snprintf(at, sizeof at, "%llu, %llu", (unsigned long long)idx[0],
             (unsigned long long)idx[1]);
  else
    snprintf(at, sizeof at, "%llu, %llu, %llu", (unsigned long long)idx[0],
             (unsigned long long)idx[1], (unsigned long long)idx[2]);
  return strata__fail(ctx, STRATA_ENONFINITE,
                      "%s: %s is not finite after %s %ld: %s(%s) = %s is "
                      "the first of %.0f non-finite points of %.0f", who,
                      field, unit, step, field, at, value_text(value), total,
                      npts);
}
