/* strata run's snapshot files, and the thread that writes them in the
 * background (issue #4: the time loop does not wait for the disk). */
#define _POSIX_C_SOURCE 200809L
#include "snap_writer.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int snap_write_files(const snap_format *fmt, const strata_field *f,
                     const char *stem, char *err, size_t errn) {
  char path[4200];
  strata_status s = STRATA_OK;
  if (fmt->npy) {
    snprintf(path, sizeof path, "%s/%s.npy", fmt->dir, stem);
    s = strata_field_save_npy(f, path);
  }
  if (fmt->vti && s == STRATA_OK) {
    snprintf(path, sizeof path, "%s/%s.vti", fmt->dir, stem);
    double h[3] = {fmt->h, fmt->h, fmt->h};
    s = strata_field_save_vti(f, fmt->field_name, path, h, NULL);
  }
  if (fmt->png && s == STRATA_OK) {
    snprintf(path, sizeof path, "%s/%s.png", fmt->dir, stem);
    s = strata_field_save_png(f, path, &fmt->po);
  }
  if (s == STRATA_OK) return 0;
  snprintf(err, errn, "cannot write %s: %s", path,
           strata_context_error(strata_field_context(f)));
  return -1;
}

/* ---- the writer thread ---------------------------------------------------- */

enum { SLOT_FREE, SLOT_HELD, SLOT_QUEUED };

typedef struct slot {
  void *buf;
  int state;
  char stem[64];
} slot;

struct snap_writer {
  pthread_mutex_t mu;
  pthread_cond_t work;  /* to the thread: a snapshot was queued, or stop */
  pthread_cond_t freed; /* to the caller: a buffer is free, or all done */
  pthread_t thread;
  int nbuf;
  slot *slots;
  int *queue; /* slot numbers in hand-over order: a ring of nbuf */
  int head, queued;
  int writing; /* the thread holds a snapshot */
  int stop;
  int failed;
  char err[1200];
  double busy_s;
  /* the thread's own: its fmt (with copied strings), context and field */
  snap_format fmt;
  char *dir, *field_name;
  strata_context *ctx;
  strata_field *field;
};

static int write_one(snap_writer *w, const slot *s, char *err, size_t n) {
  if (strata_field_write(w->field, s->buf) != STRATA_OK) {
    snprintf(err, n, "snapshot %s: %s", s->stem, strata_context_error(w->ctx));
    return -1;
  }
  return snap_write_files(&w->fmt, w->field, s->stem, err, n);
}

static void *writer_main(void *arg) {
  snap_writer *w = arg;
  char err[sizeof w->err];
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->queued && !w->stop) pthread_cond_wait(&w->work, &w->mu);
    if (!w->queued) break; /* stop, and nothing left */
    int k = w->queue[w->head];
    w->head = (w->head + 1) % w->nbuf;
    w->queued--;
    w->writing = 1;
    int skip = w->failed; /* after a failure nothing more is written */
    pthread_mutex_unlock(&w->mu);
    int rc = 0;
    double t0 = cli_now(), dt = 0;
    if (!skip) {
      rc = write_one(w, &w->slots[k], err, sizeof err);
      dt = cli_now() - t0;
    }
    pthread_mutex_lock(&w->mu);
    w->busy_s += dt;
    if (rc && !w->failed) {
      w->failed = 1;
      memcpy(w->err, err, sizeof w->err);
    }
    w->slots[k].state = SLOT_FREE;
    w->writing = 0;
    pthread_cond_broadcast(&w->freed);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* ---- the caller's side ---------------------------------------------------- */

/* Bytes of memory the system reports available (MemAvailable), 0 when it
 * does not say. */
static size_t mem_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kb = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
  fclose(f);
  return (size_t)kb * 1024;
}

static void free_all(snap_writer *w) {
  for (int i = 0; w->slots && i < w->nbuf; i++) free(w->slots[i].buf);
  free(w->slots);
  free(w->queue);
  strata_field_destroy(&w->field);
  strata_context_destroy(&w->ctx);
  free(w->dir);
  free(w->field_name);
  free(w);
}

int snap_writer_create(snap_writer **out, const snap_format *fmt,
                       const strata_field_desc *d, int nbuf, char *err,
                       size_t errn) {
  *out = NULL;
  strata_field_desc fd = *d;
  fd.ghost = 1;
  size_t bytes = (size_t)fd.precision, field_bytes = 0;
  for (int a = 0; a < fd.dims; a++) bytes *= fd.n[a];
  if (nbuf < 2) nbuf = 2;
  if (strata_field_bytes(&fd, &field_bytes) != STRATA_OK)
    field_bytes = bytes;
  double need = (double)bytes * nbuf + (double)field_bytes;
  size_t avail = mem_available();
  if (avail && need > 0.5 * (double)avail) {
    snprintf(err, errn, "the snapshot buffers would take %.1f MiB, more "
             "than half of the %.1f MiB of memory available",
             need / 1048576.0, avail / 1048576.0);
    return -1;
  }
  snap_writer *w = calloc(1, sizeof *w);
  if (!w) goto nomem;
  w->nbuf = nbuf;
  w->slots = calloc((size_t)nbuf, sizeof *w->slots);
  w->queue = calloc((size_t)nbuf, sizeof *w->queue);
  w->dir = strdup(fmt->dir);
  w->field_name = strdup(fmt->field_name ? fmt->field_name : "u");
  if (!w->slots || !w->queue || !w->dir || !w->field_name) goto nomem;
  for (int i = 0; i < nbuf; i++)
    if (!(w->slots[i].buf = malloc(bytes))) goto nomem;
  w->fmt = *fmt;
  w->fmt.dir = w->dir;
  w->fmt.field_name = w->field_name;
  /* the thread's own context: contexts hold the last error's message */
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = STRATA_BACKEND_CPU;
  co.threads = 1;
  char why[256] = "";
  co.errbuf = why;
  co.errbuf_size = sizeof why;
  if (strata_context_create(&w->ctx, &co) != STRATA_OK) {
    snprintf(err, errn, "cannot create the writer's CPU context: %s", why);
    free_all(w);
    return -1;
  }
  if (strata_field_create(w->ctx, &fd, &w->field) != STRATA_OK) {
    snprintf(err, errn, "%s", strata_context_error(w->ctx));
    free_all(w);
    return -1;
  }
  if (pthread_mutex_init(&w->mu, NULL)) goto nothread;
  if (pthread_cond_init(&w->work, NULL)) {
    pthread_mutex_destroy(&w->mu);
    goto nothread;
  }
  if (pthread_cond_init(&w->freed, NULL)) {
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->mu);
    goto nothread;
  }
  /* the thread takes no signals: Ctrl-C, SIGTERM and SIGUSR1 reach the
   * main thread, whose handler asks the time loop to stop */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int e = pthread_create(&w->thread, NULL, writer_main, w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (e) {
    pthread_cond_destroy(&w->freed);
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->mu);
    snprintf(err, errn, "cannot start the writer thread: %s", strerror(e));
    free_all(w);
    return -1;
  }
  *out = w;
  return 0;
nothread:
  snprintf(err, errn, "cannot set up the writer thread's locks");
  free_all(w);
  return -1;
nomem:
  snprintf(err, errn, "cannot allocate %.1f MiB of snapshot buffers",
           need / 1048576.0);
  if (w) free_all(w);
  return -1;
}

void *snap_writer_acquire(snap_writer *w) {
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

static int slot_of(const snap_writer *w, const void *buf) {
  for (int i = 0; i < w->nbuf; i++)
    if (w->slots[i].buf == buf) return i;
  return -1;
}

void snap_writer_release(snap_writer *w, void *buf) {
  pthread_mutex_lock(&w->mu);
  int k = slot_of(w, buf);
  if (k >= 0) w->slots[k].state = SLOT_FREE;
  pthread_mutex_unlock(&w->mu);
}

int snap_writer_submit(snap_writer *w, void *buf, const char *stem,
                       char *err, size_t errn) {
  pthread_mutex_lock(&w->mu);
  int k = slot_of(w, buf);
  if (k < 0 || w->slots[k].state != SLOT_HELD || w->failed) {
    if (k >= 0) w->slots[k].state = SLOT_FREE;
    snprintf(err, errn, "%s", w->failed ? w->err
                                        : "snapshot buffer not acquired");
    pthread_mutex_unlock(&w->mu);
    return -1;
  }
  snprintf(w->slots[k].stem, sizeof w->slots[k].stem, "%s", stem);
  w->slots[k].state = SLOT_QUEUED;
  w->queue[(w->head + w->queued) % w->nbuf] = k;
  w->queued++;
  pthread_cond_signal(&w->work);
  pthread_mutex_unlock(&w->mu);
  return 0;
}

int snap_writer_drain(snap_writer *w, char *err, size_t errn) {
  pthread_mutex_lock(&w->mu);
  while (w->queued || w->writing) pthread_cond_wait(&w->freed, &w->mu);
  int failed = w->failed;
  if (failed) snprintf(err, errn, "%s", w->err);
  pthread_mutex_unlock(&w->mu);
  return failed ? -1 : 0;
}

int snap_writer_failed(snap_writer *w, char *err, size_t errn) {
  pthread_mutex_lock(&w->mu);
  int failed = w->failed;
  if (failed) snprintf(err, errn, "%s", w->err);
  pthread_mutex_unlock(&w->mu);
  return failed ? -1 : 0;
}

double snap_writer_busy_s(snap_writer *w) {
  pthread_mutex_lock(&w->mu);
  double s = w->busy_s;
  pthread_mutex_unlock(&w->mu);
  return s;
}

void snap_writer_destroy(snap_writer **pw) {
  snap_writer *w = *pw;
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_signal(&w->work);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->freed);
  pthread_cond_destroy(&w->work);
  pthread_mutex_destroy(&w->mu);
  free_all(w);
  *pw = NULL;
}
