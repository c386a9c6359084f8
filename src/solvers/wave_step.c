/* The running side of the acoustic wave solver (set up in wave.c): the
 * initial state, time stepping with the receivers' sampling, the seismograms
 * (gathered from every rank when distributed), the info query, and saved
 * states for checkpoints.  Kept apart from creation and validation because
 * it works only on a solver already built and checked. */
#include "wave_internal.h"
#include "../io/io_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The receivers' samples of f (u, or u^{n-1} after a fused pair). */
static strata_status record_of(strata_wave *w, const strata_field *f) {
  if (w->nrec_all == 0) return STRATA_OK;
  strata_status s = STRATA_OK;
  if (w->nrec > 0) /* with dist, ranks without receivers count samples too */
    s = w->ctx->be->sample(f, w->nrec, 8, w->rec_off, w->rec_w,
                           w->trace + w->nsamples * w->nrec);
  if (s == STRATA_OK) w->nsamples++;
  return s;
}

static strata_status record(strata_wave *w) { return record_of(w, w->e->u); }

static strata_status grow_traces(strata_wave *w, size_t need) {
  if (w->nrec == 0 || need <= w->cap) return STRATA_OK;
  size_t cap = w->cap ? w->cap : 256;
  while (cap < need) cap *= 2;
  strata_context *ctx = w->ctx;
  void *p = NULL;
  size_t row = (size_t)w->nrec * sizeof(double);
  strata_status s = ctx->be->alloc(ctx, cap * row, &p);
  if (s != STRATA_OK) return s;
  if (w->nsamples) {
    s = ctx->be->copy(ctx, p, w->trace, w->nsamples * row);
    if (s != STRATA_OK) {
      ctx->be->release(ctx, p);
      return s;
    }
  }
  if (w->trace) ctx->be->release(ctx, w->trace);
  w->trace = p;
  w->cap = cap;
  return STRATA_OK;
}

/* A section's engine point (i, j = z, 0) seen as the solver's (i, 0, z). */
static double call_section(long i, long j, long k, void *p) {
  return strata__call_interior(i, k, j, p);
}

strata_status strata_wave_set_state(strata_wave *w, strata_point_fn u0,
                                    strata_point_fn um1, void *user) {
  if (!w) return STRATA_EINVAL;
  if (!u0)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "u0", u0,
                              "wave: u0 is NULL");
  strata__interior_fn c = {u0, user, {(long)w->o.n[0], (long)w->o.n[1],
                              (long)w->o.n[2]}};
  strata_point_fn at = w->dims == 2 ? call_section : strata__call_interior;
  strata_status s = strata_field_fill_fn(w->e->u, at, &c);
  if (s != STRATA_OK) return s;
  c.fn = um1 ? um1 : u0;
  s = strata_field_fill_fn(w->e->up, at, &c);
  w->e->dirty = 1;
  return s;
}

const strata_field *strata__wave_peek(const strata_wave *w, int previous) {
  if (!w) return NULL;
  return previous ? w->e->up : w->e->u;
}

strata_field *strata_wave_field(strata_wave *w, int previous) {
  if (!w) return NULL;
  w->e->dirty = 1; /* the caller may write the state */
  return previous ? w->e->up : w->e->u;
}

strata_status strata_wave_read(const strata_wave *w, void *host) {
  if (!w) return STRATA_EINVAL;
  if (w->o.dist) return strata_dist_gather(w->e->u, 0, host);
  return strata_field_read(w->e->u, host);
}

strata_status strata_wave_step(strata_wave *w, long nsteps) {
  if (!w) return STRATA_EINVAL;
  if (nsteps < 0)
    return strata__fail_arg(w->ctx, STRATA_EINVAL, "nsteps", nsteps,
                            "wave: nsteps is %ld; it must be >= 0", nsteps);
  strata_status s;
  if (w->e->dirty && (s = strata__we_refresh(w->e)) != STRATA_OK) return s;
  long k = w->o.record_every;
  if ((s = grow_traces(w, (size_t)((w->steps + nsteps) / k) + 1)) !=
      STRATA_OK)
    return s;
  if (w->nsamples == 0 && (s = record(w)) != STRATA_OK) return s;
  /* the delta of the source: 1 / h^dims at the node */
  const double scale =
      w->dt * w->dt / (w->o.h * w->o.h * (w->dims == 3 ? w->o.h : 1.0));
  const int ns = w->o.amplitude != 0 ? w->nsrc : 0;
  const int pairs = strata__we_pair_wanted(w->ctx);
  long before = w->steps; /* the count at the last chance to check */
  for (long q = 0; q < nsteps;) {
    if (q > 0 && strata__check_due(before, w->steps, w->o.check_every) &&
        (s = strata__check_finite(w->e->u, "wave", "p", "step", w->steps)) !=
            STRATA_OK)
      return s;
    before = w->steps;
    /* the sources' values at this step, and the next when a pair may run */
    const int nh = pairs && nsteps - q >= 2 ? 2 : 1;
    double val[2][8];
    for (int h = 0; h < nh; h++) {
      double t = (double)(w->steps + h) * w->dt;
      double f = strata__wave_source_value(w, t);
      for (int m = 0; m < w->nsrc; m++) val[h][m] = scale * f * w->src_w[m];
    }
    int did = 0;
    if (nh == 2 &&
        (s = strata__we_step2(w->e, ns, w->src, val[0], val[1], &did)) !=
            STRATA_OK)
      return s;
    if (did) { /* two steps: u^{n+1} is now up */
      w->steps++;
      if (w->steps % k == 0 && (s = record_of(w, w->e->up)) != STRATA_OK)
        return s;
      w->steps++;
      if (w->steps % k == 0 && (s = record(w)) != STRATA_OK) return s;
      q += 2;
      continue;
    }
    s = strata__we_step(w->e, ns, w->src, val[0]);
    if (s != STRATA_OK) return s;
    w->steps++;
    if (w->steps % k == 0 && (s = record(w)) != STRATA_OK) return s;
    q++;
  }
  if (strata__check_due(before, w->steps, w->o.check_every))
    return strata__check_finite(w->e->u, "wave", "p", "step", w->steps);
  return STRATA_OK;
}

/* The seismograms of every rank, on rank 0: each rank sends
 * [receiver id, samples...] rows for its receivers. */
static strata_status dist_traces(const strata_wave *w, double *out,
                                 size_t capacity) {
  strata_dist *d = w->o.dist;
  const size_t ns = w->nsamples, row = ns + 1;
  const size_t cnt = ns * (size_t)w->nrec_all;
  int bad = strata__dist_rank(d) == 0 && out && capacity < cnt;
  double flag = bad;
  strata_status s = strata_dist_allreduce(d, &flag, 1, 1);
  if (s != STRATA_OK) return s;
  if (flag > 0)
    return strata__fail_arg(w->ctx, STRATA_EINVAL, "capacity", capacity,
                        "wave: traces need %zu doubles (%d receivers x %zu "
                        "samples); the buffer on rank 0 holds %zu",
                        cnt, w->nrec_all, ns, capacity);
  double *mine = malloc(sizeof(double) * (row * (size_t)w->nrec + 1));
  double *tmp = malloc(sizeof(double) * (ns * (size_t)w->nrec + 1));
  double *all = strata__dist_rank(d) == 0
                    ? malloc(sizeof(double) * (row * (size_t)w->nrec_all + 1))
                    : NULL;
  int ok = mine && tmp && (strata__dist_rank(d) != 0 || all);
  s = ok ? STRATA_OK : strata__fail(w->ctx, STRATA_ENOMEM, "out of host memory");
  if (s == STRATA_OK && w->nrec && ns)
    s = w->ctx->be->to_host(w->ctx, tmp, w->trace,
                            ns * (size_t)w->nrec * sizeof(double));
  double okd = s == STRATA_OK;
  strata_status s2 = strata_dist_allreduce(d, &okd, 1, 2);
  if (s == STRATA_OK && s2 != STRATA_OK) s = s2;
  if (s == STRATA_OK && okd < 1)
    s = strata__fail_elsewhere(w->ctx, STRATA_EIO,
                               "wave: traces: another rank failed");
  if (s == STRATA_OK) {
    for (int r = 0; r < w->nrec; r++) {
      mine[(size_t)r * row] = (double)w->rec_id[r];
      for (size_t t = 0; t < ns; t++)
        mine[(size_t)r * row + 1 + t] = tmp[t * (size_t)w->nrec + r];
    }
    s = strata__dist_gatherv(d, mine, sizeof(double) * row * (size_t)w->nrec,
                             all, 0);
  }
  if (s == STRATA_OK && all && out)
    for (int r = 0; r < w->nrec_all; r++) {
      const double *q = all + (size_t)r * row;
      memcpy(out + (size_t)q[0] * ns, q + 1, ns * sizeof(double));
    }
  free(mine);
  free(tmp);
  free(all);
  return s;
}

strata_status strata__wave_own_traces(const strata_wave *w, double *out,
                                     const int **ids, int *n) {
  *n = w->nrec;
  *ids = w->rec_id;
  const size_t cnt = w->nsamples * (size_t)w->nrec;
  if (!out || cnt == 0) return STRATA_OK;
  double *tmp = malloc(cnt * sizeof(double));
  if (!tmp) return strata__fail(w->ctx, STRATA_ENOMEM, "out of host memory");
  strata_status s = w->ctx->be->to_host(w->ctx, tmp, w->trace,
                                        cnt * sizeof(double));
  if (s == STRATA_OK)
    for (size_t t = 0; t < w->nsamples; t++)
      for (int r = 0; r < w->nrec; r++)
        out[(size_t)r * w->nsamples + t] = tmp[t * (size_t)w->nrec + r];
  free(tmp);
  return s;
}

strata_status strata__wave_save_traces_h5_dist(const strata_wave *w,
                                              const char *path,
                                              const strata_traces *t) {
  const int *ids;
  int nown;
  strata__wave_own_traces(w, NULL, &ids, &nown);
  double *rows = malloc(sizeof(double) * ((size_t)nown * w->nsamples + 1));
  strata_status st =
      rows ? strata__wave_own_traces(w, rows, &ids, &nown)
           : strata__fail(w->ctx, STRATA_ENOMEM, "out of host memory for "
                          "the traces of '%s'", path);
  st = strata__dist_agree(w->o.dist, st);
  if (st == STRATA_OK)
    st = strata__h5_write_traces_dist(w->ctx, w->o.dist, path, t, nown, ids,
                                      rows);
  free(rows);
  return st;
}

strata_status strata_wave_traces(const strata_wave *w, double *out,
                                 size_t capacity, size_t *nsamples) {
  if (!w) return STRATA_EINVAL;
  if (!nsamples)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "nsamples", nsamples,
                              "wave: nsamples is NULL");
  *nsamples = w->nsamples;
  if (w->o.dist) return dist_traces(w, out, capacity);
  if (!out || w->nrec == 0 || w->nsamples == 0) return STRATA_OK;
  size_t cnt = w->nsamples * (size_t)w->nrec;
  if (capacity < cnt)
    return strata__fail_arg(w->ctx, STRATA_EINVAL, "capacity", capacity,
                        "wave: traces need %zu doubles (%d receivers x %zu "
                        "samples); the buffer holds %zu",
                        cnt, w->nrec, w->nsamples, capacity);
  const int *ids;
  int n;
  return strata__wave_own_traces(w, out, &ids, &n);
}

strata_status strata_wave_get_info(const strata_wave *w,
                                   strata_wave_info *info) {
  if (!w) return STRATA_EINVAL;
  if (!info)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "info", info,
                              "wave: info is NULL");
  memset(info, 0, sizeof *info);
  info->steps = w->steps;
  info->dt = w->dt;
  info->h = w->o.h;
  info->time = (double)w->steps * w->dt;
  info->vmin = w->vmin;
  info->vmax = w->vmax;
  info->cfl = w->vmax * w->dt / w->o.h;
  info->cfl_limit = w->cfl_limit;
  info->fmax = STRATA__RICKER_FMAX * w->o.f0;
  info->ppw = w->vmin / (info->fmax * w->o.h);
  info->min_ppw = w->o.min_ppw;
  info->nsamples = w->nsamples;
  /* u^n, u^{n-1} (and c2, b = 1/rho) read, u^{n+1} written; in a CPML
   * layer psi and zeta read and written once more per point and axis */
  double words = (w->e->c2 ? 4.0 : 3.0) + (w->e->rb ? 1.0 : 0.0);
  for (int ax = 0; ax < 3; ax++)
    for (int side = 0; side < 2; side++) {
      const strata__wave_slab *S = &w->e->a.slab[ax][side];
      const double n = (double)w->e->u->d.n[ax];
      if (S->psi && n > 0) words += 4.0 * (double)(S->hi - S->lo) / n;
    }
  info->bytes_per_point_step = (double)w->o.precision * words;
  return STRATA_OK;
}

/* ---- state (checkpoints) -------------------------------------------------- */

/* 02: the high CPML slabs' fields start at the layer (01: R before it) */
#define WAVE_STATE_TAG 0x3230455441565753ull /* "SWVATE02" */
/* a rank's part of a distributed solver: the part record follows */
#define WAVE_STATE_TAG_PART 0x3230505441565753ull /* "SWVATP02" */

static size_t wave_state_size(strata_wave *w, strata_field **f, int *nf) {
  *nf = strata__we_state_fields(w->e, f);
  return STRATA__STATE_HEAD * 8 +
         (w->o.dist ? STRATA__STATE_PART * 8 : 0) +
         strata__state_fields_bytes(f, *nf) +
         w->nsamples * (size_t)w->nrec * sizeof(double);
}

strata_status strata_wave_state_size(const strata_wave *w, size_t *bytes) {
  if (!w) return STRATA_EINVAL;
  if (!bytes)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "bytes", bytes,
                              "wave: bytes is NULL");
  strata_field *f[STRATA__WE_STATE_MAX];
  int nf;
  *bytes = wave_state_size((strata_wave *)w, f, &nf);
  return STRATA_OK;
}

static strata_status wave_save(strata_wave *w, void *buf, size_t size) {
  strata_field *f[STRATA__WE_STATE_MAX];
  int nf;
  size_t need = wave_state_size(w, f, &nf);
  if (!buf || size < need)
    return strata__fail_arg(w->ctx, STRATA_EINVAL, buf ? "size" : "buf",
                        buf ? size : 0, "wave: the state needs %zu "
                        "bytes, the buffer has %zu%s", need, size,
                        buf ? "" : " (NULL)");
  uint64_t h[STRATA__STATE_HEAD] = {
      w->o.dist ? WAVE_STATE_TAG_PART : WAVE_STATE_TAG,
      (uint64_t)w->o.precision, (uint64_t)nf,
      (uint64_t)strata__state_fields_bytes(f, nf), (uint64_t)w->steps,
      (uint64_t)w->nsamples, (uint64_t)w->nrec, (uint64_t)w->e->dirty};
  unsigned char *p = buf;
  memcpy(p, h, sizeof h);
  p += sizeof h;
  if (w->o.dist) {
    uint64_t part[STRATA__STATE_PART];
    strata__state_part(w->e->u, part);
    memcpy(p, part, sizeof part);
    p += sizeof part;
  }
  strata_status s = strata__state_fields_save(f, nf, p);
  if (s != STRATA_OK) return s;
  p += h[3];
  if (w->nrec && w->nsamples)
    s = w->ctx->be->to_host(w->ctx, p, w->trace,
                            w->nsamples * (size_t)w->nrec * sizeof(double));
  return s;
}

strata_status strata_wave_save_state(const strata_wave *cw, void *buf,
                                     size_t size) {
  if (!cw) return STRATA_EINVAL;
  strata_wave *w = (strata_wave *)cw;
  return strata__state_agree(w->e->u, wave_save(w, buf, size), "wave",
                             "save");
}

/* psi of a CPML slab is zero outside its layer [lo, hi) along its axis,
 * ghosts included: neither engine writes it there, and the CUDA engine's
 * tiles take it as zero rather than read it.  A state (p: its fields f,
 * strata__we_state_fields' list, as ghosted images) whose psi is not zero
 * there was not saved by a solver: refused. */
static strata_status psi_outside_zero(strata_wave *w, strata_field *const *f,
                                      const unsigned char *p) {
  strata__wengine *e = w->e;
  int q = 2; /* u, up, then psi and zeta per slab */
  p += strata__state_fields_bytes(f, 2);
  static const char *const face[3][2] = {
      {"x low", "x high"}, {"y low", "y high"}, {"z low", "z high"}};
  for (int a = 0; a < 3; a++)
    for (int sd = 0; sd < 2; sd++) {
      const strata__wave_slab *S = &e->a.slab[a][sd];
      if (!S->psi) continue;
      strata_field_desc d;
      strata_field_get_desc(S->psi, &d);
      const long g = d.ghost;
      long ext[3] = {1, 1, 1};
      for (int t = 0; t < d.dims; t++) ext[t] = (long)d.n[t] + 2 * g;
      const size_t es = (size_t)d.precision;
      size_t at = 0;
      for (long k = 0; k < ext[2]; k++)
        for (long j = 0; j < ext[1]; j++)
          for (long i = 0; i < ext[0]; i++, at += es) {
            const long c = (a == 0 ? i : a == 1 ? j : k) - g + S->origin;
            if (c >= S->lo && c < S->hi) continue;
            double v;
            if (es == 4) {
              float x;
              memcpy(&x, p + at, 4);
              v = x;
            } else {
              memcpy(&v, p + at, 8);
            }
            if (v != 0.0)
              return strata__fail(w->ctx, STRATA_EFORMAT,
                                  "wave: the state's CPML psi of the %s face "
                                  "is %g at index %ld of its axis, outside "
                                  "the layer [%ld, %ld), where it must be 0",
                                  face[a][sd], v, c, S->lo, S->hi);
          }
      p += strata__state_fields_bytes(f + q, 2);
      q += 2;
    }
  return STRATA_OK;
}

/* Checks a state against this solver; on success *fb, *tb are its fields'
 * and traces' bytes and *hdr the header (h, then the part record). */
static strata_status wave_check(strata_wave *w, const void *buf, size_t size,
                                uint64_t *h, size_t *fb, size_t *tb) {
  strata_field *f[STRATA__WE_STATE_MAX];
  int nf;
  wave_state_size(w, f, &nf);
  *fb = strata__state_fields_bytes(f, nf);
  size_t hb = 0;
  strata_status s =
      strata__state_head(w->ctx, "wave", "a wave solver", w->e->u, buf, size,
                         WAVE_STATE_TAG, WAVE_STATE_TAG_PART, h, &hb);
  if (s != STRATA_OK) return s;
  if (h[1] != (uint64_t)w->o.precision || h[2] != (uint64_t)nf ||
      h[3] != *fb || h[6] != (uint64_t)w->nrec)
    return strata__fail(w->ctx, STRATA_EINVAL, "wave: the state is of "
                        "another solver setup (precision %u, %u fields of "
                        "%zu bytes, %u receivers; this solver: %u, %d, %zu, "
                        "%d)", (unsigned)h[1], (unsigned)h[2], (size_t)h[3],
                        (unsigned)h[6], (unsigned)w->o.precision, nf, *fb,
                        w->nrec);
  *tb = (size_t)h[5] * (size_t)w->nrec * sizeof(double);
  if (h[5] > ((uint64_t)h[4] / (uint64_t)w->o.record_every) + 1 ||
      size != hb + *fb + *tb || h[7] > 1 || h[4] > (uint64_t)LONG_MAX)
    return strata__fail(w->ctx, STRATA_EFORMAT, "wave: the state is "
                        "inconsistent (%zu bytes for %llu steps and %llu "
                        "samples)", size, (unsigned long long)h[4],
                        (unsigned long long)h[5]);
  s = psi_outside_zero(w, f, (const unsigned char *)buf + hb);
  if (s != STRATA_OK) return s;
  return grow_traces(w, (size_t)h[5] + 1);
}

strata_status strata_wave_load_state(strata_wave *w, const void *buf,
                                     size_t size) {
  if (!w) return STRATA_EINVAL;
  uint64_t h[STRATA__STATE_HEAD + STRATA__STATE_PART];
  size_t fb = 0, tb = 0;
  /* with dist: every rank checks its part, then all load or none does */
  strata_status s = strata__state_agree(
      w->e->u, wave_check(w, buf, size, h, &fb, &tb), "wave", "load");
  if (s != STRATA_OK) return s;
  strata_field *f[STRATA__WE_STATE_MAX];
  int nf;
  wave_state_size(w, f, &nf);
  const unsigned char *p =
      (const unsigned char *)buf + STRATA__STATE_HEAD * 8 +
      (h[0] == WAVE_STATE_TAG_PART ? STRATA__STATE_PART * 8 : 0);
  s = strata__state_fields_load(f, nf, p);
  if (s == STRATA_OK && tb)
    s = w->ctx->be->from_host(w->ctx, w->trace, p + fb, tb);
  if (s == STRATA_OK) {
    w->steps = (long)h[4];
    w->nsamples = (size_t)h[5];
    w->e->dirty = (int)h[7];
  }
  return strata__state_agree(w->e->u, s, "wave", "load");
}
