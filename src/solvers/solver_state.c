/* Saved states of the solver interface: checkpoint images (the format in
 * src/io/checkpoint.c) in memory and as files, over one or several
 * processes. */
#define _POSIX_C_SOURCE 200809L
#include "solver_internal.h"
#include "../io/io_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- saved states ----------------------------------------------------------
 * Heat, operator: the field image of u (as the strata program wrote them).
 * Wave, FDTD: the opaque image of the solver's own state.  Poisson: the
 * opaque image of POISSON_HEAD doubles (the source's mean, the length of
 * the residual history), the history, then phi's and psi's dense
 * interiors. */

#define POISSON_HEAD 4

/* Heat and the operator save u as a field image. */
static int field_form(const strata_solver *s) {
  return s->kind == STRATA_SOLVER_HEAT || s->kind == STRATA_SOLVER_OPERATOR;
}

static void ck_of(const strata_solver *s, strata__ck *ck) {
  memset(ck, 0, sizeof *ck);
  ck->kind = strata__solver_kinds[s->kind];
  ck->tag = s->tag;
  ck->step = strata__solver_steps(s);
  if (s->dist) {
    ck->part = 1;
    ck->rank = strata_dist_rank(s->dist);
    ck->nranks = strata_dist_size(s->dist);
  }
}

/* Bytes of the kind's opaque state. */
static strata_status blob_size(const strata_solver *s, size_t *n) {
  switch (s->kind) {
  case STRATA_SOLVER_WAVE: return strata_wave_state_size(s->wave, n);
  case STRATA_SOLVER_FDTD: return strata_fdtd_state_size(s->fdtd, n);
  default: {
    size_t f = s->n[0] * s->n[1] * s->n[2] * (size_t)s->precision;
    *n = (POISSON_HEAD + s->nhist) * sizeof(double) + 2 * f;
    return STRATA_OK;
  }
  }
}

strata_status strata_solver_state_size(const strata_solver *s,
                                       size_t *bytes) {
  if (!s) return STRATA_EINVAL;
  if (!bytes)
    return strata__fail_arg_p(s->ctx, STRATA_EINVAL, "bytes", bytes,
                              "solver: bytes is NULL");
  if (field_form(s)) {
    strata_field *u = strata_solver_field((strata_solver *)s, 0);
    *bytes = strata__ck_fields_bytes(&u, 1, s->dist != NULL);
    return STRATA_OK;
  }
  size_t n = 0;
  strata_status st = blob_size(s, &n);
  if (st == STRATA_OK) *bytes = strata__ck_blob_bytes(n, s->dist != NULL);
  return st;
}

static strata_status poisson_save(const strata_solver *s, unsigned char *p) {
  double head[POISSON_HEAD] = {s->source_mean, (double)s->nhist, 0, 0};
  memcpy(p, head, sizeof head);
  p += sizeof head;
  memcpy(p, s->hist, s->nhist * sizeof(double));
  p += s->nhist * sizeof(double);
  size_t f = s->n[0] * s->n[1] * s->n[2] * (size_t)s->precision;
  strata_status st = strata_field_read(s->phi, p);
  if (st == STRATA_OK) st = strata_field_read(s->psi, p + f);
  return st;
}

strata_status strata_solver_save_state(const strata_solver *s, void *buf,
                                       size_t size) {
  if (!s) return STRATA_EINVAL;
  strata__ck ck;
  ck_of(s, &ck);
  if (field_form(s)) {
    strata_field *u = strata_solver_field((strata_solver *)s, 0);
    return strata__ck_fields_save(&ck, &u, 1, buf, size);
  }
  size_t n = 0, need = 0;
  strata_status st = blob_size(s, &n);
  if (st != STRATA_OK) return st;
  need = strata__ck_blob_bytes(n, ck.part);
  int room = buf && size >= need;
  unsigned char *p = room ? strata__ck_blob_begin(&ck, n, buf) : NULL;
  /* the wave and FDTD saves are collective over several processes: every
   * rank calls them, one without room with no buffer (and all fail) */
  switch (s->kind) {
  case STRATA_SOLVER_WAVE:
    st = strata_wave_save_state(s->wave, p, room ? n : 0);
    break;
  case STRATA_SOLVER_FDTD:
    st = strata_fdtd_save_state(s->fdtd, p, room ? n : 0);
    break;
  default: st = room ? poisson_save(s, p) : STRATA_OK; break;
  }
  if (!room)
    return strata__fail_arg_s(s->ctx, STRATA_EINVAL, buf ? "size" : "buf",
                              buf ? strata__argval_u(size).s : "NULL",
                              "solver: the buffer holds %zu bytes; the "
                              "state needs %zu", buf ? size : 0, need);
  if (st != STRATA_OK) return st;
  strata__ck_seal(buf, need);
  return STRATA_OK;
}

static strata_status poisson_load(strata_solver *s, const unsigned char *p,
                                  size_t n, long step) {
  size_t f = s->n[0] * s->n[1] * s->n[2] * (size_t)s->precision;
  double head[POISSON_HEAD] = {0, 0, 0, 0};
  if (n >= sizeof head) memcpy(head, p, sizeof head);
  const size_t nh = head[1] >= 0 && head[1] < 1e15 ? (size_t)head[1] : 0;
  if (n < sizeof head || n != (POISSON_HEAD + nh) * sizeof(double) + 2 * f ||
      (nh != 0 && nh != (size_t)step + 1))
    return strata__fail(s->ctx, STRATA_EINVAL, "solver: the Poisson state "
                        "holds %zu bytes; this solver's grid needs %zu with "
                        "the %zu residuals of %ld cycles", n,
                        (POISSON_HEAD + nh) * sizeof(double) + 2 * f, nh,
                        step);
  s->nhist = 0;
  strata_status st = strata__solver_hist_room(s, nh);
  if (st != STRATA_OK) return st;
  p += sizeof head;
  const unsigned char *hp = p;
  p += nh * sizeof(double);
  st = strata_field_write(s->phi, p);
  if (st == STRATA_OK) st = strata_field_write(s->psi, p + f);
  if (st != STRATA_OK) return st;
  strata_mg_options o;
  strata_mg_get_options(s->mg, &o);
  st = strata_field_fill_ghosts(s->phi, &o.bc);
  if (st != STRATA_OK) return st;
  memcpy(s->hist, hp, nh * sizeof(double));
  s->nhist = nh;
  s->source_mean = head[0];
  s->cycles = step;
  return STRATA_OK;
}

/* The most bytes s's opaque state may have at step: the wave's traces
 * grow by a sample per receiver every record_every steps, the Poisson
 * history by a residual a cycle (bounds above those of the state now). */
static size_t state_most(const void *arg, long step) {
  const strata_solver *s = arg;
  size_t n = 0, per = 0;
  uint64_t k = 0;
  if (blob_size(s, &n) != STRATA_OK) return 0;
  if (s->kind == STRATA_SOLVER_WAVE) {
    per = (size_t)strata__solver_nrec(s) * sizeof(double);
    k = (uint64_t)step / (uint64_t)s->every + 1;
  } else if (s->kind == STRATA_SOLVER_POISSON) {
    per = sizeof(double);
    k = (uint64_t)step + 1;
  }
  if (per && k > (SIZE_MAX - n) / per) return SIZE_MAX;
  return n + (size_t)k * per;
}

/* What s accepts: its kind, tag and part, and its field (heat, operator)
 * or the most bytes of its state; *u holds the field. */
static void expect_of(strata_solver *s, strata_field **u,
                      strata__ck_expect *e) {
  memset(e, 0, sizeof *e);
  ck_of(s, &e->want);
  if (field_form(s)) {
    *u = strata_solver_field(s, 0);
    e->f = u;
    e->nf = 1;
  } else {
    e->most = state_most;
    e->arg = s;
  }
}

/* The step inside a wave's or FDTD solver's own state (its header's fifth
 * value, strata__state_head), which must be the image's. */
static int blob_step(const void *blob, size_t n, uint64_t *step) {
  if (n < STRATA__STATE_HEAD * 8) return 0;
  memcpy(step, (const unsigned char *)blob + 4 * 8, 8);
  return 1;
}

/* Loads an image named name (a path or "the state"). */
static strata_status load_image(strata_solver *s, const char *name,
                                const void *buf, size_t size) {
  strata_field *u = NULL;
  strata__ck_expect e;
  expect_of(s, &u, &e);
  long step = 0;
  strata_status st;
  if (field_form(s)) {
    st = strata__ck_fields_load(s->ctx, name, buf, size, &e, &step);
    if (st == STRATA_OK && s->heat) strata__heat_set_steps(s->heat, step);
    if (st == STRATA_OK && s->op) strata__op_set_steps(s->op, step);
    return st;
  }
  const void *blob = NULL;
  size_t n = 0;
  st = strata__ck_blob(s->ctx, name, buf, size, &e, &blob, &n, &step);
  uint64_t own = 0;
  if (st == STRATA_OK &&
      (s->kind == STRATA_SOLVER_WAVE || s->kind == STRATA_SOLVER_FDTD) &&
      blob_step(blob, n, &own) && own != (uint64_t)step)
    st = strata__fail(s->ctx, STRATA_EFORMAT, "%s: its header is at step "
                      "%ld, its %s state at step %llu (a damaged or crafted "
                      "checkpoint)", name, step, e.want.kind,
                      (unsigned long long)own);
  /* the wave and FDTD loads are collective over several processes: a rank
   * whose image was refused takes part with nothing (and all fail); its
   * own message is kept */
  if (st != STRATA_OK && !s->dist) return st;
  const int ok = st == STRATA_OK;
  strata_status l;
  strata__kept_error kept;
  strata__error_keep(s->ctx, &kept);
  switch (s->kind) {
  case STRATA_SOLVER_WAVE:
    l = strata_wave_load_state(s->wave, ok ? blob : NULL, ok ? n : 0);
    break;
  case STRATA_SOLVER_FDTD:
    l = strata_fdtd_load_state(s->fdtd, ok ? blob : NULL, ok ? n : 0);
    break;
  default: l = ok ? poisson_load(s, blob, n, step) : STRATA_OK; break;
  }
  if (!ok) {
    strata__error_restore(s->ctx, &kept);
    return st;
  }
  return l;
}

strata_status strata_solver_load_state(strata_solver *s, const void *buf,
                                       size_t size) {
  if (!s) return STRATA_EINVAL;
  return load_image(s, "the state", buf, size);
}

/* ---- checkpoint files --------------------------------------------------- */

char *strata_checkpoint_part_path(const char *path, int rank, char *out,
                                  size_t n) {
  if (!out || !n) return NULL;
  int k = rank > 0 ? snprintf(out, n, "%s.rank%d", path ? path : "", rank)
                   : snprintf(out, n, "%s", path ? path : "");
  if (k < 0 || (size_t)k >= n) { /* a cut name is another file's */
    out[0] = '\0';
    return NULL;
  }
  return out;
}

/* Over several processes: s when this rank failed, else a failure when
 * another did (collective). */
static strata_status agree(const strata_solver *s, strata_status st) {
  return s->dist ? strata__dist_agree_as(s->dist, st, STRATA_EIO,
                                         "to save or load its part of the "
                                         "checkpoint")
                 : st;
}

/* This rank's file of path: malloc'd. */
static char *part_path(const strata_solver *s, const char *path) {
  size_t n = strlen(path) + 32;
  char *p = malloc(n);
  if (p)
    strata_checkpoint_part_path(path, s->dist ? strata_dist_rank(s->dist) : 0,
                                p, n);
  return p;
}

strata_status strata_solver_save(const strata_solver *s, const char *path) {
  if (!s) return STRATA_EINVAL;
  if (!path || !*path)
    return strata__fail_arg_s(s->ctx, STRATA_EINVAL, "path",
                              path ? "" : "NULL", "solver: the checkpoint "
                              "path is %s", path ? "empty" : "NULL");
  size_t size = 0;
  void *buf = NULL;
  strata_status st = strata_solver_state_size(s, &size);
  if (st == STRATA_OK && !(buf = malloc(size)))
    st = strata__fail(s->ctx, STRATA_ENOMEM, "checkpoint: out of memory "
                      "(%zu bytes)", size);
  /* collective over several processes: every rank saves, one that has
   * no buffer too (and fails) */
  if (st == STRATA_OK || s->dist) {
    strata_status s2 = strata_solver_save_state(s, buf, buf ? size : 0);
    if (st == STRATA_OK) st = s2;
  }
  char *mine = part_path(s, path);
  size_t stage_size = mine ? strlen(mine) + 8 : 0;
  char *stage = mine ? malloc(stage_size) : NULL;
  if (st == STRATA_OK && !stage)
    st = strata__fail(s->ctx, STRATA_ENOMEM, "checkpoint: out of memory");
  /* one process: the file under its name; several: a staged part, moved
   * into place once every rank wrote its own */
  if (stage) snprintf(stage, stage_size, "%s%s", mine, s->dist ? ".part" : "");
  if (st == STRATA_OK) {
    strata__ofile of;
    st = strata__ofile_open(&of, s->ctx, stage);
    if (st == STRATA_OK) {
      strata__ofile_write(&of, buf, size);
      st = strata__ofile_commit(&of);
    }
  }
  free(buf);
  if (s->dist) {
    st = agree(s, st);
    if (st == STRATA_OK && rename(stage, mine) != 0)
      st = strata__fail(s->ctx, STRATA_EIO, "cannot write %s: cannot "
                        "rename %s", mine, stage);
    else if (st != STRATA_OK && stage)
      remove(stage);
    st = agree(s, st);
  }
  free(stage);
  free(mine);
  return st;
}

strata_status strata_solver_load(strata_solver *s, const char *path) {
  if (!s) return STRATA_EINVAL;
  if (!path || !*path)
    return strata__fail_arg_s(s->ctx, STRATA_EINVAL, "path",
                              path ? "" : "NULL", "solver: the checkpoint "
                              "path is %s", path ? "empty" : "NULL");
  char *mine = part_path(s, path);
  void *buf = NULL;
  size_t size = 0;
  strata_field *u = NULL;
  strata__ck_expect e;
  expect_of(s, &u, &e);
  strata_status st =
      mine ? strata__ck_read_file(s->ctx, mine, &e, &buf, &size)
           : strata__fail(s->ctx, STRATA_ENOMEM, "checkpoint: out of memory");
  if (st == STRATA_OK) {
    st = load_image(s, mine, buf, size);
  } else if (s->dist) {
    /* over several processes every rank takes part in the wave and FDTD
     * loads, one that could not read its part with nothing (it fails, and
     * so do the others); its own message is kept */
    strata__kept_error kept;
    strata__error_keep(s->ctx, &kept);
    if (s->wave) strata_wave_load_state(s->wave, NULL, 0);
    if (s->fdtd) strata_fdtd_load_state(s->fdtd, NULL, 0);
    strata__error_restore(s->ctx, &kept);
  }
  free(buf);
  free(mine);
  if (!s->dist) return st;
  st = agree(s, st);
  if (st != STRATA_OK) return st;
  /* parts of different checkpoints (a rank's write failed, or files were
   * copied together by hand) */
  const double k = (double)strata__solver_steps(s);
  double v[2] = {k, -k};
  st = strata_dist_allreduce(s->dist, v, 2, 1);
  if (st == STRATA_OK && v[0] != -v[1])
    st = strata__fail(s->ctx, STRATA_EFORMAT, "%s: the parts hold different "
                      "steps (%.0f to %.0f): they are not of one checkpoint",
                      path, -v[1], v[0]);
  return st;
}
