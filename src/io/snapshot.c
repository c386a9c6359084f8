/* The snapshot writer: one host copy of a field per snapshot, written as
 * .npy, .vti and .png from that copy, by a background thread so that the
 * caller's time loop does not wait for the disk. */
#define _POSIX_C_SOURCE 200809L
#include "io_internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SLOT_FREE, SLOT_HELD, SLOT_QUEUED };

typedef struct slot {
  void *buf;
  int state;
  char stem[64];
  char title[192]; /* the PNG's; "" = the options' */
} slot;

struct strata_snapshot_writer {
  strata_context *ctx;  /* the caller's: messages of submit and flush */
  strata_context *wctx; /* the writing thread's: messages of the files */
  strata_snapshot_options o;
  char *dir, *name;
  char *strs[9]; /* png_options' strings, copied */
  int dims;
  size_t n[3];
  strata_precision precision;
  size_t bytes;
  int threaded;
  pthread_mutex_t mu;
  pthread_cond_t work;  /* to the thread: a snapshot was queued, or stop */
  pthread_cond_t freed; /* to the caller: a copy is free, or all done */
  pthread_t thread;
  int nbuf;
  slot *slots;
  int *queue; /* slot numbers in hand-over order: a ring of nbuf */
  int head, queued;
  int writing;
  int stop;
  strata_status failed;
  char err[1024 + STRATA__ERRMSG_SIZE + 32];
  double busy_s;
  unsigned char *slice; /* the PNG slice (the writing thread's) */
  unsigned char *lines; /* png_options.lines, copied */
};

void strata_snapshot_options_init(strata_snapshot_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->dir = ".";
  o->npy = 1;
  o->png = 1;
  strata_png_options_init(&o->png_options);
  o->spacing = 1;
  o->field_name = "u";
  o->buffers = 2;
  o->async = 1;
}

/* Writes the host copy buf as the formats asked for: 0, or -1 with "cannot
 * write PATH: reason" in err. */
static int write_files(strata_snapshot_writer *w, const void *buf,
                       const char *stem, const char *title, char *err,
                       size_t errn) {
  char path[1024];
  strata_status s = STRATA_OK;
  if (w->o.npy) {
    snprintf(path, sizeof path, "%s/%s.npy", w->dir, stem);
    size_t shape[3];
    for (int a = 0; a < w->dims; a++) shape[a] = w->n[w->dims - 1 - a];
    s = strata_npy_write(w->wctx, path, w->precision, w->dims, shape, buf);
  }
  if (w->o.vti && s == STRATA_OK) {
    snprintf(path, sizeof path, "%s/%s.vti", w->dir, stem);
    double h[3] = {w->o.spacing, w->o.spacing, w->o.spacing};
    const char *names[1] = {w->name};
    s = strata__vti_write_host(w->wctx, path, w->n, 1, &buf, &w->precision,
                               names, h, NULL);
  }
  if (w->o.h5 && s == STRATA_OK) {
    snprintf(path, sizeof path, "%s/%s.h5", w->dir, stem);
    s = strata__h5_write_grid(w->wctx, path, w->dims, w->n, w->precision, buf,
                              w->name, w->o.spacing);
  }
  if (w->o.png && s == STRATA_OK) {
    snprintf(path, sizeof path, "%s/%s.png", w->dir, stem);
    strata_png_options po = w->o.png_options;
    if (*title) po.title = title;
    s = strata__png_write_slice(w->wctx, path, w->precision, w->dims, w->n,
                                buf, &po, w->slice);
  }
  if (s == STRATA_OK) return 0;
  snprintf(err, errn, "cannot write %s: %s", path,
           strata_context_error(w->wctx));
  return -1;
}

static void *writer_main(void *arg) {
  strata_snapshot_writer *w = arg;
  char err[sizeof w->err];
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->queued && !w->stop) pthread_cond_wait(&w->work, &w->mu);
    if (!w->queued) break; /* stop, and nothing left */
    int k = w->queue[w->head];
    w->head = (w->head + 1) % w->nbuf;
    w->queued--;
    w->writing = 1;
    int skip = w->failed != STRATA_OK; /* nothing more after a failure */
    pthread_mutex_unlock(&w->mu);
    int rc = 0;
    double t0 = strata__now(), dt = 0;
    if (!skip) {
      rc = write_files(w, w->slots[k].buf, w->slots[k].stem,
                       w->slots[k].title, err, sizeof err);
      dt = strata__now() - t0;
    }
    pthread_mutex_lock(&w->mu);
    w->busy_s += dt;
    if (rc && w->failed == STRATA_OK) {
      w->failed = STRATA_EIO;
      memcpy(w->err, err, sizeof w->err);
    }
    w->slots[k].state = SLOT_FREE;
    w->writing = 0;
    pthread_cond_broadcast(&w->freed);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static void free_all(strata_snapshot_writer *w) {
  for (int i = 0; w->slots && i < w->nbuf; i++) free(w->slots[i].buf);
  free(w->slots);
  free(w->queue);
  free(w->slice);
  free(w->lines);
  strata_context_destroy(&w->wctx);
  free(w->dir);
  free(w->name);
  for (size_t i = 0; i < sizeof w->strs / sizeof w->strs[0]; i++)
    free(w->strs[i]);
  free(w);
}

/* Copies the strings of w->o.png_options and points it at the copies:
 * 0, or -1 when out of memory. */
static int copy_png_strings(strata_snapshot_writer *w) {
  strata_png_options *po = &w->o.png_options;
  const char **p[9] = {&po->title, &po->value_name, &po->value_unit};
  for (int a = 0; a < 3; a++) {
    p[3 + 2 * a] = &po->coord[a].name;
    p[4 + 2 * a] = &po->coord[a].unit;
  }
  for (int i = 0; i < 9; i++) {
    if (!*p[i]) continue;
    if (!(w->strs[i] = strdup(*p[i]))) return -1;
    *p[i] = w->strs[i];
  }
  return 0;
}

static strata_status start_thread(strata_snapshot_writer *w) {
  if (pthread_mutex_init(&w->mu, NULL)) goto fail;
  if (pthread_cond_init(&w->work, NULL)) {
    pthread_mutex_destroy(&w->mu);
    goto fail;
  }
  if (pthread_cond_init(&w->freed, NULL)) {
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->mu);
    goto fail;
  }
  if (!w->o.async) return STRATA_OK;
  /* the thread takes no signals: they reach the caller's threads */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int e = pthread_create(&w->thread, NULL, writer_main, w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!e) {
    w->threaded = 1;
    return STRATA_OK;
  }
  pthread_cond_destroy(&w->freed);
  pthread_cond_destroy(&w->work);
  pthread_mutex_destroy(&w->mu);
  return strata__fail(w->ctx, STRATA_EIO, "snapshot: cannot start the "
                      "writer thread: %s", strerror(e));
fail:
  return strata__fail(w->ctx, STRATA_EIO, "snapshot: cannot set up the "
                      "writer thread's locks");
}

strata_status strata_snapshot_writer_create(strata_context *ctx,
                                            const strata_field_desc *d,
                                            const strata_snapshot_options *o,
                                            strata_snapshot_writer **out) {
  if (!ctx) return STRATA_EINVAL;
  if (!out || !d || !o)
    return strata__fail_arg_s(ctx, STRATA_EINVAL,
                              !out ? "out" : !d ? "d" : "o", "NULL",
                              "snapshot: %s is NULL",
                              !out ? "the output pointer"
                              : !d ? "the shape"
                                   : "the options");
  *out = NULL;
  if (!o->npy && !o->vti && !o->png && !o->h5)
    return strata__fail(ctx, STRATA_EINVAL, "snapshot: no format asked for "
                        "(npy, vti, png, h5)");
  if (o->h5 && !strata_h5_available())
    return strata__fail_arg(ctx, STRATA_ENOTSUP, "h5", o->h5, "snapshot: "
                            "this strata was built without HDF5 (install "
                            "libhdf5-dev and build again)");
  if (!o->dir || !*o->dir)
    return strata__fail_arg_s(ctx, STRATA_EINVAL, "dir",
                              o->dir ? "" : "NULL",
                              "snapshot: the folder is %s",
                              o->dir ? "empty" : "NULL");
  strata_field_desc fd = *d;
  fd.ghost = 1;
  size_t fb = 0;
  strata_status s = strata_field_bytes(&fd, &fb);
  if (s != STRATA_OK)
    return strata__fail(ctx, s, "snapshot: the shape is not a field's "
                        "(dims %d, %zu x %zu x %zu)", d->dims, d->n[0],
                        d->n[1], d->n[2]);
  const int nbuf = o->buffers > 2 ? o->buffers : 2;
  const size_t points = fd.n[0] * fd.n[1] * fd.n[2];
  size_t bytes = points * (size_t)fd.precision;
  const int lines = o->png && o->png_options.lines;
  double need = (double)bytes * (o->async ? nbuf : 1) +
                (lines ? (double)points : 0);
  /* copies in flight are memory the caller did not plan for: bound them */
  size_t avail = o->async ? strata__host_available() : 0;
  if (avail && need > 0.5 * (double)avail)
    return strata__fail(ctx, STRATA_ENOMEM, "snapshot: the host copies "
                        "would take %.1f MiB, more than half of the %.1f MiB "
                        "of memory available", need / 1048576.0,
                        avail / 1048576.0);
  strata_snapshot_writer *w = calloc(1, sizeof *w);
  if (!w) return strata__fail(ctx, STRATA_ENOMEM, "snapshot: out of memory");
  w->ctx = ctx;
  w->o = *o;
  w->dims = fd.dims;
  for (int a = 0; a < 3; a++) w->n[a] = a < fd.dims ? fd.n[a] : 1;
  w->precision = fd.precision;
  w->bytes = bytes;
  w->nbuf = o->async ? nbuf : 1;
  int ax[3];
  long idx;
  if (o->png && (s = strata__png_slice(ctx, w->dims, w->n, &o->png_options,
                                       "png_options.", ax, &idx)) !=
                    STRATA_OK) {
    free(w);
    return s;
  }
  w->slots = calloc((size_t)w->nbuf, sizeof *w->slots);
  w->queue = calloc((size_t)w->nbuf, sizeof *w->queue);
  w->dir = strdup(o->dir);
  w->name = strdup(o->field_name ? o->field_name : "u");
  w->slice = o->png ? malloc(w->n[ax[0]] * w->n[ax[1]] * (size_t)w->precision)
                    : NULL;
  w->lines = lines ? malloc(points) : NULL;
  if (w->lines) memcpy(w->lines, o->png_options.lines, points);
  w->o.png_options.lines = w->lines;
  int ok = w->slots && w->queue && w->dir && w->name &&
           (w->slice || !o->png) && (w->lines || !lines) &&
           copy_png_strings(w) == 0;
  for (int i = 0; ok && i < w->nbuf; i++)
    ok = (w->slots[i].buf = malloc(bytes ? bytes : 1)) != NULL;
  if (!ok) {
    free_all(w);
    return strata__fail(ctx, STRATA_ENOMEM, "snapshot: cannot allocate %.1f "
                        "MiB of host copies", need / 1048576.0);
  }
  w->o.dir = w->dir;
  w->o.field_name = w->name;
  /* the thread's own context: a context holds the last message */
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = STRATA_BACKEND_CPU;
  co.threads = 1;
  char why[256] = "";
  co.errbuf = why;
  co.errbuf_size = sizeof why;
  if (strata_context_create(&w->wctx, &co) != STRATA_OK) {
    free_all(w);
    return strata__fail(ctx, STRATA_ENOBACKEND, "snapshot: cannot create the "
                        "writer's CPU context: %s", why);
  }
  s = start_thread(w);
  if (s != STRATA_OK) {
    free_all(w);
    return s;
  }
  ctx->live_writers++; /* its messages go to ctx: ctx outlives it */
  *out = w;
  return STRATA_OK;
}

void *strata_snapshot_acquire(strata_snapshot_writer *w) {
  if (!w) return NULL;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    for (int i = 0; i < w->nbuf; i++)
      if (w->slots[i].state == SLOT_FREE) {
        w->slots[i].state = SLOT_HELD;
        pthread_mutex_unlock(&w->mu);
        return w->slots[i].buf;
      }
    pthread_cond_wait(&w->freed, &w->mu);
  }
}

static int slot_of(const strata_snapshot_writer *w, const void *buf) {
  for (int i = 0; i < w->nbuf; i++)
    if (w->slots[i].buf == buf) return i;
  return -1;
}

void strata_snapshot_release(strata_snapshot_writer *w, void *host) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  int k = slot_of(w, host);
  if (k >= 0) w->slots[k].state = SLOT_FREE;
  pthread_cond_broadcast(&w->freed);
  pthread_mutex_unlock(&w->mu);
}

/* The failure so far, on the caller's context (mu held). */
static strata_status report(strata_snapshot_writer *w) {
  if (w->failed == STRATA_OK) return STRATA_OK;
  return strata__fail(w->ctx, w->failed, "%s", w->err);
}

strata_status strata_snapshot_submit_host(strata_snapshot_writer *w,
                                          void *host, const char *stem) {
  return strata_snapshot_submit_titled(w, host, stem, NULL);
}

strata_status strata_snapshot_submit_titled(strata_snapshot_writer *w,
                                            void *host, const char *stem,
                                            const char *title) {
  if (!w) return STRATA_EINVAL;
  pthread_mutex_lock(&w->mu);
  int k = slot_of(w, host);
  strata_status s = STRATA_OK;
  if (!stem || !*stem || strlen(stem) >= sizeof w->slots[0].stem)
    s = strata__fail_arg_s(w->ctx, STRATA_EINVAL, "stem",
                           stem ? strata__argval_s(stem).s : "NULL",
                           "snapshot: the stem is %s",
                           !stem ? "NULL" : *stem ? "too long" : "empty");
  else if (title && strlen(title) >= sizeof w->slots[0].title)
    s = strata__fail_arg_s(w->ctx, STRATA_EINVAL, "title",
                           strata__argval_s(title).s,
                           "snapshot: the title is longer than %zu bytes",
                           sizeof w->slots[0].title - 1);
  else if (k < 0 || w->slots[k].state != SLOT_HELD)
    s = strata__fail_arg_p(w->ctx, STRATA_EINVAL, "host", host,
                           "snapshot: the host copy was not acquired from "
                           "this writer");
  else
    s = report(w);
  if (s != STRATA_OK) {
    if (k >= 0) w->slots[k].state = SLOT_FREE;
    pthread_cond_broadcast(&w->freed);
    pthread_mutex_unlock(&w->mu);
    return s;
  }
  if (!w->threaded) { /* write now, on the caller's thread */
    pthread_mutex_unlock(&w->mu);
    char err[sizeof w->err];
    double t0 = strata__now();
    int rc = write_files(w, host, stem, title ? title : "", err,
                         sizeof err);
    pthread_mutex_lock(&w->mu);
    w->busy_s += strata__now() - t0;
    w->slots[k].state = SLOT_FREE;
    if (rc) {
      w->failed = STRATA_EIO;
      memcpy(w->err, err, sizeof w->err);
    }
    s = report(w);
    pthread_mutex_unlock(&w->mu);
    return s;
  }
  snprintf(w->slots[k].stem, sizeof w->slots[k].stem, "%s", stem);
  snprintf(w->slots[k].title, sizeof w->slots[k].title, "%s",
           title ? title : "");
  w->slots[k].state = SLOT_QUEUED;
  w->queue[(w->head + w->queued) % w->nbuf] = k;
  w->queued++;
  pthread_cond_signal(&w->work);
  pthread_mutex_unlock(&w->mu);
  return STRATA_OK;
}

strata_status strata_snapshot_submit(strata_snapshot_writer *w,
                                     const strata_field *f, const char *stem) {
  if (!w) return STRATA_EINVAL;
  strata_field_desc d;
  if (!f || strata_field_get_desc(f, &d) != STRATA_OK)
    return strata__fail_arg_p(w->ctx, STRATA_EINVAL, "f", f,
                              "snapshot: the field is NULL");
  for (int a = 0; a < 3; a++)
    if ((a < d.dims ? d.n[a] : 1) != w->n[a] || d.dims != w->dims)
      return strata__fail_arg_s(w->ctx, STRATA_ESHAPE, "f", "set",
                                "snapshot: the field is %zu x %zu x %zu, "
                                "the writer's snapshots %zu x %zu x %zu",
                                d.n[0], d.n[1], d.n[2], w->n[0], w->n[1],
                                w->n[2]);
  if (d.precision != w->precision)
    return strata__fail_arg_s(w->ctx, STRATA_EPRECISION, "f", "set",
                              "snapshot: the field is fp%d, the writer's "
                              "snapshots fp%d", 8 * (int)d.precision,
                              8 * (int)w->precision);
  void *host = strata_snapshot_acquire(w);
  strata_status s = strata_field_read(f, host);
  if (s != STRATA_OK) {
    strata_snapshot_release(w, host);
    return strata__fail(w->ctx, s, "snapshot %s: %s", stem ? stem : "?",
                        strata_context_error(strata_field_context(f)));
  }
  return strata_snapshot_submit_host(w, host, stem);
}

strata_status strata_snapshot_flush(strata_snapshot_writer *w) {
  if (!w) return STRATA_EINVAL;
  pthread_mutex_lock(&w->mu);
  while (w->queued || w->writing) pthread_cond_wait(&w->freed, &w->mu);
  strata_status s = report(w);
  pthread_mutex_unlock(&w->mu);
  return s;
}

strata_status strata_snapshot_status(strata_snapshot_writer *w) {
  if (!w) return STRATA_EINVAL;
  pthread_mutex_lock(&w->mu);
  strata_status s = report(w);
  pthread_mutex_unlock(&w->mu);
  return s;
}

double strata_snapshot_busy_seconds(strata_snapshot_writer *w) {
  if (!w) return 0;
  pthread_mutex_lock(&w->mu);
  double s = w->busy_s;
  pthread_mutex_unlock(&w->mu);
  return s;
}

void strata_snapshot_writer_destroy(strata_snapshot_writer **pw) {
  if (!pw || !*pw) return;
  strata_snapshot_writer *w = *pw;
  if (w->threaded) {
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
  }
  pthread_cond_destroy(&w->freed);
  pthread_cond_destroy(&w->work);
  pthread_mutex_destroy(&w->mu);
  w->ctx->live_writers--;
  free_all(w);
  *pw = NULL;
}
