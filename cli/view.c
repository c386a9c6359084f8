/* The live view's server (see view.h): libmicrohttpd, a thread per
 * connection (at most VIEW_CONNECTIONS), every request checked for the
 * token; requests name no files: the page is compiled in, frames are made
 * from the run's field (or a snapshot the folder listed at start). */
#define _DEFAULT_SOURCE
#include "view.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "../src/core/text.h"

#ifdef STRATA_HAVE_MHD
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>

enum {
  VIEW_CONNECTIONS = 32,    /* at once, over every client */
  VIEW_TIMEOUT_S = 30,      /* an idle connection is closed */
  VIEW_REQUEST_BYTES = 16384 /* a request's line and headers; no bodies */
};

struct cli_view {
  struct MHD_Daemon *d;
  char token[33];
  char url[160];
  cli_view_desc desc;          /* strings and buffers copied below */
  char *strs[6];
  unsigned char *lines; /* desc.po.lines, copied */
  char *summary;
  void *traces;
  long *frame_steps;
  size_t grid_bytes;
  pthread_mutex_t mu;          /* everything below, with cv */
  pthread_cond_t cv;
  /* a live run: the last frame's slice (front_axis, front_index) and the
   * run's next, the slice the latest request asked for; a folder: the
   * loaded snapshot's whole grid in front */
  void *front, *back;
  size_t slice_bytes;
  int front_axis, req_axis;
  long front_index, req_index;
  int have_front;
  long front_step;
  char front_title[192];
  char frame_err[256];
  unsigned long seq;           /* frames handed over so far */
  long step;
  double time, rate, elapsed;  /* steps per second of running */
  double t0, t_mark;
  long step_mark;
  const char *state;           /* running, paused, stopped, finished */
  int want, paused, stop;      /* also read without mu: atomics */
  int loaded;                  /* view DIR: the snapshot in front, or -1 */
  int want_traces;             /* a live run's gather: asked for, made */
  void *tr_png;
  size_t tr_size;
  unsigned long tr_seq;
  pthread_mutex_t enc;         /* one PNG made at a time, and its cache */
  strata_context *ctx;
  unsigned long c_seq;
  int c_axis, c_snap;
  long c_index;
  void *c_png;
  size_t c_size;
};

static int aload(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void astore(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

/* ---- responses --------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code,
                             const char *type, void *data, size_t n,
                             int owned) {
  struct MHD_Response *r =
      owned ? MHD_create_response_from_buffer(n, data, MHD_RESPMEM_MUST_FREE)
            : MHD_create_response_from_buffer(n, data,
                                              MHD_RESPMEM_PERSISTENT);
  if (!r) {
    if (owned) free(data);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", type);
  MHD_add_response_header(r, "Cache-Control", "no-store");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  /* the token is in the page's address: never sent on to another site */
  MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
  MHD_add_response_header(r, "Content-Security-Policy",
                          "default-src 'self'; img-src 'self' blob:; "
                          "style-src 'unsafe-inline'; script-src "
                          "'unsafe-inline'; connect-src 'self'");
  enum MHD_Result res = MHD_queue_response(c, code, r);
  MHD_destroy_response(r);
  return res;
}

/* {"error": msg} with code */
static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned code,
                                   const char *msg) {
  char *b = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&b, &n);
  if (!f) return MHD_NO;
  fputs("{\"error\": ", f);
  json_string(f, msg);
  fputs("}\n", f);
  if (fclose(f) != 0) return MHD_NO;
  return reply(c, code, "application/json", b, n, 1);
}

/* ---- status ------------------------------------------------------------ */

static void json_opt(FILE *f, const char *s) {
  if (s)
    json_string(f, s);
  else
    fputs("null", f);
}

static enum MHD_Result reply_status(cli_view *v, struct MHD_Connection *c) {
  char *b = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&b, &n);
  if (!f) return MHD_NO;
  const cli_view_desc *d = &v->desc;
  fprintf(f, "{\"mode\": \"%s\", \"name\": ", d->nframes ? "dir" : "run");
  json_string(f, d->name);
  fputs(", \"kind\": ", f);
  json_string(f, d->kind);
  fputs(", \"field\": ", f);
  json_string(f, d->field);
  fputs(", \"unit\": ", f);
  json_opt(f, d->unit);
  fputs(", \"len_unit\": ", f);
  json_opt(f, d->len_unit);
  fputs(", \"time_unit\": ", f);
  json_opt(f, d->time_unit);
  fprintf(f, ", \"dims\": %d, \"n\": [%zu, %zu, %zu], \"h\": %.9g, "
          "\"cmap\": \"%s\", \"axis\": %d, \"index\": %ld, \"steps\": %ld",
          d->dims, d->n[0], d->n[1], d->n[2], d->h,
          strata_colormap_name(d->po.cmap), d->po.axis, d->po.index,
          d->steps);
  pthread_mutex_lock(&v->mu);
  double left = v->rate > 0 ? (double)(d->steps - v->step) / v->rate : NAN;
  fprintf(f, ", \"state\": \"%s\", \"step\": %ld, \"time\": ", v->state,
          v->step);
  json_number(f, "%.9g", v->time);
  fputs(", \"steps_per_s\": ", f);
  json_number(f, "%.6g", v->rate);
  fputs(", \"points_per_s\": ", f);
  json_number(f, "%.6g",
              v->rate * (double)d->n[0] * (double)d->n[1] * (double)d->n[2]);
  fputs(", \"seconds_left\": ", f);
  json_number(f, "%.3f", d->nframes ? NAN : left);
  fprintf(f, ", \"frame_step\": %ld", v->have_front ? v->front_step : -1);
  pthread_mutex_unlock(&v->mu);
  fputs(", \"snapshots\": [", f);
  for (int k = 0; k < d->nframes; k++)
    fprintf(f, "%s%ld", k ? ", " : "", v->frame_steps[k]);
  fprintf(f, "], \"traces\": %s, \"summary\": %s}\n",
          v->traces || d->live_traces ? "true" : "false",
          v->summary ? v->summary : "null");
  if (fclose(f) != 0) return MHD_NO;
  return reply(c, 200, "application/json", b, n, 1);
}

/* ---- frames ------------------------------------------------------------ */

/* A request's integer argument: def when absent, -1 on a bad value. */
static int arg_long(struct MHD_Connection *c, const char *key, long lo,
                    long hi, long def, long *out) {
  const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
  *out = def;
  if (!s) return 0;
  return cli_parse_long(s, lo, hi, out) ? -1 : 0;
}

/* The plane index along axis of a grid of n points (x fastest, es bytes
 * each) into dst. */
static void cut_plane(void *dst, const void *src, size_t es, const size_t n[3],
                      int axis, long index) {
  size_t sn[3] = {n[0], n[1], n[2]};
  sn[axis] = 1;
  const size_t st[3] = {1, n[0], n[0] * n[1]};
  const unsigned char *g = src;
  unsigned char *s = dst;
  size_t o = 0;
  for (size_t k = 0; k < sn[2]; k++)
    for (size_t j = 0; j < sn[1]; j++)
      for (size_t i = 0; i < sn[0]; i++, o++) {
        size_t idx[3] = {i, j, k};
        idx[axis] = (size_t)index;
        memcpy(s + o * es, g + (idx[0] * st[0] + idx[1] * st[1] +
                                idx[2] * st[2]) * es, es);
      }
}

/* The slice axis / index as a grid of its own (the normal axis 1 point
 * thick, its coordinate moved to the slice), and the options that make it
 * the snapshot's PNG: copied from front (a folder's snapshot: cut out of
 * its grid), the lines (the model's interfaces) cut out of the whole
 * grid's into the same block.  Under v->mu. */
static void *cut_slice(cli_view *v, int axis, long index, size_t sn[3],
                       strata_png_options *po) {
  const cli_view_desc *d = &v->desc;
  const size_t es = (size_t)d->precision;
  *po = d->po;
  po->title = v->front_title[0] ? v->front_title : d->po.title;
  memcpy(sn, d->n, sizeof d->n);
  if (d->dims == 3) {
    sn[axis] = 1;
    po->axis = axis;
    po->index = 0;
    po->coord[axis].origin += (double)index * po->coord[axis].step;
  }
  size_t count = sn[0] * sn[1] * sn[2];
  const unsigned char *lines = d->po.lines;
  unsigned char *s = malloc(count * es + (lines ? count : 0));
  if (!s) return NULL;
  if (d->dims != 3 || !d->nframes) /* the slice itself */
    memcpy(s, v->front, count * es);
  else
    cut_plane(s, v->front, es, d->n, axis, index);
  if (lines) {
    unsigned char *l = s + count * es;
    if (d->dims != 3)
      memcpy(l, lines, count);
    else
      cut_plane(l, lines, 1, d->n, axis, index);
    po->lines = l;
  }
  return s;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits (under v->mu) for the run to hand over a frame of slice axis /
 * index newer than the one in front (viewers of other slices may take
 * turns: the latest request wins): at most a few seconds, and not once
 * the run is over.  Whether front holds that slice. */
static int await_frame(cli_view *v, int axis, long index) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 3;
  int got = 0;
  while (!got &&
         (!strcmp(v->state, "running") || !strcmp(v->state, "paused"))) {
    unsigned long seq = v->seq;
    v->req_axis = axis;
    v->req_index = index;
    astore(&v->want, 1);
    int late = 0;
    while (v->seq == seq && !late &&
           (!strcmp(v->state, "running") || !strcmp(v->state, "paused")))
      late = pthread_cond_timedwait(&v->cv, &v->mu, &until) == ETIMEDOUT;
    got = v->seq != seq && v->have_front && v->front_axis == axis &&
          v->front_index == index;
    if (late) break;
  }
  return got || (v->have_front && v->front_axis == axis &&
                 v->front_index == index);
}

static enum MHD_Result reply_frame(cli_view *v, struct MHD_Connection *c) {
  const cli_view_desc *d = &v->desc;
  long axis, index, snap;
  long nax = d->dims == 3 ? 2 : 0;
  if (arg_long(c, "axis", 0, nax, d->dims == 3 ? d->po.axis : 0, &axis) ||
      arg_long(c, "snap", 0, d->nframes ? d->nframes - 1 : 0,
               d->nframes ? d->nframes - 1 : 0, &snap))
    return reply_error(c, 400, "axis or snap outside the grid's");
  long nn = d->dims == 3 ? (long)d->n[axis] : 1;
  if (arg_long(c, "index", -1, nn - 1, d->dims == 3 ? d->po.index : -1,
               &index))
    return reply_error(c, 400, "index outside the slice axis");
  if (index == -1) index = nn / 2;
  if (d->dims != 3) index = 0;
  char err[512] = "";
  /* a folder: one snapshot loaded and drawn at a time; a live run: each
   * waits for its frame, then draws in turn */
  if (d->nframes) pthread_mutex_lock(&v->enc);
  if (d->nframes && v->loaded != (int)snap) {
    /* a finished run's snapshot, read on this thread (one at a time) */
    v->loaded = -1;
    pthread_mutex_lock(&v->mu);
    v->have_front = 0;
    pthread_mutex_unlock(&v->mu);
    if (d->load(d->load_arg, (int)snap, v->front, v->front_title,
                sizeof v->front_title, err, sizeof err) == 0) {
      pthread_mutex_lock(&v->mu);
      v->have_front = 1;
      v->front_step = d->frame_steps[snap];
      v->seq++;
      pthread_mutex_unlock(&v->mu);
      v->loaded = (int)snap;
    }
  }
  pthread_mutex_lock(&v->mu);
  int have = d->nframes ? v->have_front : await_frame(v, (int)axis, index);
  size_t sn[3];
  strata_png_options po;
  void *slice = NULL;
  unsigned long seq = v->seq;
  long step = v->front_step;
  if (have)
    slice = cut_slice(v, (int)axis, index, sn, &po);
  else if (!err[0])
    snprintf(err, sizeof err, "%s", v->frame_err[0] ? v->frame_err
                                    : d->nframes ? "no snapshot loaded"
                                                 : "no frame: the run is "
                                                   "not stepping");
  pthread_mutex_unlock(&v->mu);
  if (!d->nframes) pthread_mutex_lock(&v->enc);
  void *png = NULL;
  size_t size = 0;
  if (slice && v->c_png && v->c_seq == seq && v->c_axis == (int)axis &&
      v->c_index == index && v->c_snap == (int)snap) {
    png = malloc(v->c_size); /* several viewers of one frame: made once */
    if (png) memcpy(png, v->c_png, size = v->c_size);
  } else if (slice) {
    if (strata_png_encode_grid(v->ctx, d->precision, d->dims, sn, slice, &po,
                               &png, &size) != STRATA_OK)
      snprintf(err, sizeof err, "%s", strata_context_error(v->ctx));
    else if ((free(v->c_png), v->c_png = malloc(size)) != NULL) {
      memcpy(v->c_png, png, size);
      v->c_size = size;
      v->c_seq = seq;
      v->c_axis = (int)axis;
      v->c_index = index;
      v->c_snap = (int)snap;
    }
  } else if (have && !err[0]) {
    snprintf(err, sizeof err, "out of memory for a slice");
  }
  free(slice);
  pthread_mutex_unlock(&v->enc);
  if (!png) return reply_error(c, 503, err[0] ? err : "out of memory");
  struct MHD_Response *r =
      MHD_create_response_from_buffer(size, png, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(png);
    return MHD_NO;
  }
  char sv[32];
  snprintf(sv, sizeof sv, "%ld", step);
  MHD_add_response_header(r, "Content-Type", "image/png");
  MHD_add_response_header(r, "Cache-Control", "no-store");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(r, "X-Strata-Step", sv);
  enum MHD_Result res = MHD_queue_response(c, 200, r);
  MHD_destroy_response(r);
  return res;
}

/* A live run's gather: asked of the run, made between its steps. */
static enum MHD_Result reply_traces(cli_view *v, struct MHD_Connection *c) {
  pthread_mutex_lock(&v->mu);
  unsigned long seq = v->tr_seq;
  astore(&v->want_traces, 1);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 3;
  while (v->tr_seq == seq &&
         (!strcmp(v->state, "running") || !strcmp(v->state, "paused")))
    if (pthread_cond_timedwait(&v->cv, &v->mu, &until) == ETIMEDOUT) break;
  void *png = v->tr_png ? malloc(v->tr_size) : NULL;
  size_t size = v->tr_size;
  if (png) memcpy(png, v->tr_png, size);
  pthread_mutex_unlock(&v->mu);
  if (!png) return reply_error(c, 503, "no traces yet");
  return reply(c, 200, "image/png", png, size, 1);
}

/* ---- requests ---------------------------------------------------------- */

/* The token, compared in constant time. */
static int token_ok(const cli_view *v, struct MHD_Connection *c) {
  const char *t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
                                              "token");
  if (!t) t = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                          "X-Strata-Token");
  if (!t || strlen(t) != sizeof v->token - 1) return 0;
  unsigned diff = 0;
  for (size_t i = 0; i < sizeof v->token - 1; i++)
    diff |= (unsigned)(t[i] ^ v->token[i]);
  return diff == 0;
}

static enum MHD_Result control(cli_view *v, struct MHD_Connection *c,
                               const char *what) {
  if (v->desc.nframes)
    return reply_error(c, 409, "a finished run's folder: nothing to pause, "
                       "resume or stop");
  pthread_mutex_lock(&v->mu);
  int over = strcmp(v->state, "running") && strcmp(v->state, "paused");
  if (!over && !strcmp(what, "/pause")) {
    astore(&v->paused, 1);
    /* the answer comes once the run holds (at the end of its current
     * steps), with the step it holds */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    while (aload(&v->paused) && !strcmp(v->state, "running"))
      if (pthread_cond_timedwait(&v->cv, &v->mu, &until) == ETIMEDOUT) break;
  } else if (!over && !strcmp(what, "/resume")) {
    astore(&v->paused, 0);
  } else if (!over) {
    astore(&v->stop, 1);
  }
  pthread_cond_broadcast(&v->cv);
  pthread_mutex_unlock(&v->mu);
  return reply_status(v, c);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_size, void **con_cls) {
  cli_view *v = cls;
  (void)version;
  (void)upload;
  static int seen;
  if (!*con_cls) { /* the headers: refuse a body before reading it */
    *con_cls = &seen;
    const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                  "Content-Length");
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 "Transfer-Encoding");
    if ((len && strcmp(len, "0")) || te)
      return reply_error(c, 413, "requests carry no body");
    return MHD_YES;
  }
  if (*upload_size) { /* not reached: refused above */
    *upload_size = 0;
    return MHD_YES;
  }
  if (!token_ok(v, c))
    return reply_error(c, 403, "the token is missing or wrong: open the "
                       "address strata printed at start");
  int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
  int post = !strcmp(method, "POST");
  if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
    return get ? reply(c, 200, "text/html; charset=utf-8",
                       (void *)cli_view_page, cli_view_page_size, 0)
               : reply_error(c, 405, "GET the page");
  if (!strcmp(url, "/status"))
    return get ? reply_status(v, c) : reply_error(c, 405, "GET /status");
  if (!strcmp(url, "/frame.png"))
    return get ? reply_frame(v, c) : reply_error(c, 405, "GET /frame.png");
  if (!strcmp(url, "/traces.png")) {
    if (!get) return reply_error(c, 405, "GET /traces.png");
    if (v->traces)
      return reply(c, 200, "image/png", v->traces, v->desc.traces_png_size,
                   0);
    if (!v->desc.live_traces) return reply_error(c, 404, "no traces");
    return reply_traces(v, c);
  }
  if (!strcmp(url, "/pause") || !strcmp(url, "/resume") ||
      !strcmp(url, "/stop"))
    return post ? control(v, c, url)
                : reply_error(c, 405, "POST to pause, resume or stop");
  return reply_error(c, 404, "no such page (the server serves /, /status, "
                     "/frame.png, /traces.png, /pause, /resume, /stop)");
}

/* ---- life -------------------------------------------------------------- */

static int make_token(char *t, size_t n) {
  unsigned char b[16];
  FILE *f = fopen("/dev/urandom", "rb");
  int ok = f && fread(b, 1, sizeof b, f) == sizeof b;
  if (f) fclose(f);
  if (!ok || n < 2 * sizeof b + 1) return -1;
  for (size_t i = 0; i < sizeof b; i++) snprintf(t + 2 * i, 3, "%02x", b[i]);
  return 0;
}

static int parse_spec(const char *spec, struct sockaddr_in *sa, char *host,
                      size_t hn, char *err, size_t en) {
  memset(sa, 0, sizeof *sa);
  sa->sin_family = AF_INET;
  const char *colon = strrchr(spec, ':');
  const char *port = colon ? colon + 1 : spec;
  snprintf(host, hn, "127.0.0.1");
  if (colon) {
    size_t n = (size_t)(colon - spec);
    if (n == 0 || n >= hn) {
      snprintf(err, en, "'%s': expected [ADDR:]PORT", spec);
      return -1;
    }
    memcpy(host, spec, n);
    host[n] = 0;
    if (!strcmp(host, "localhost")) snprintf(host, hn, "127.0.0.1");
  }
  long p;
  if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
    snprintf(err, en, "'%s': the address '%s' is not an IPv4 "
             "address (or localhost)", spec, host);
    return -1;
  }
  if (cli_parse_long(port, 0, 65535, &p)) {
    snprintf(err, en, "'%s': the port '%s' is not 0..65535 (0: any "
             "free port)", spec, port);
    return -1;
  }
  sa->sin_port = htons((unsigned short)p);
  return 0;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static int copy_desc(cli_view *v, const cli_view_desc *d) {
  v->desc = *d;
  const char **s[6] = {&v->desc.name, &v->desc.kind, &v->desc.field,
                       &v->desc.unit, &v->desc.len_unit, &v->desc.time_unit};
  for (int i = 0; i < 6; i++) {
    v->strs[i] = dup_or_null(*s[i]);
    if (*s[i] && !v->strs[i]) return -1;
    *s[i] = v->strs[i];
  }
  /* the options' strings: their units are the descriptor's, no title */
  strata_png_options *po = &v->desc.po;
  po->title = NULL;
  po->value_name = v->desc.field;
  po->value_unit = v->desc.unit;
  for (int a = 0; a < 3; a++) po->coord[a].unit = v->desc.len_unit;
  if (d->po.lines) {
    const size_t cnt = d->n[0] * d->n[1] * d->n[2];
    if (!(v->lines = malloc(cnt))) return -1;
    memcpy(v->lines, d->po.lines, cnt);
    po->lines = v->lines;
  }
  v->summary = dup_or_null(d->summary_json);
  if (d->summary_json && !v->summary) return -1;
  if (d->traces_png) {
    if (!(v->traces = malloc(d->traces_png_size))) return -1;
    memcpy(v->traces, d->traces_png, d->traces_png_size);
  }
  if (d->nframes) {
    v->frame_steps = malloc((size_t)d->nframes * sizeof *v->frame_steps);
    if (!v->frame_steps) return -1;
    memcpy(v->frame_steps, d->frame_steps,
           (size_t)d->nframes * sizeof *v->frame_steps);
    v->desc.frame_steps = v->frame_steps;
  }
  return 0;
}

int cli_view_start(cli_view **out, const char *spec, const cli_view_desc *d,
                   char *err, size_t en) {
  *out = NULL;
  struct sockaddr_in sa;
  char host[64];
  if (parse_spec(spec, &sa, host, sizeof host, err, en)) return -2;
  cli_view *v = calloc(1, sizeof *v);
  if (!v || copy_desc(v, d)) {
    snprintf(err, en, "out of memory");
    cli_view_destroy(&v);
    return -1;
  }
  v->grid_bytes = d->n[0] * d->n[1] * d->n[2] * (size_t)d->precision;
  size_t thin = d->dims == 3 ? d->n[0] : 1; /* the largest slice's normal */
  for (int a = 1; d->dims == 3 && a < 3; a++)
    if (d->n[a] < thin) thin = d->n[a];
  v->slice_bytes = v->grid_bytes / thin;
  pthread_mutex_init(&v->mu, NULL);
  pthread_mutex_init(&v->enc, NULL);
  pthread_cond_init(&v->cv, NULL);
  v->state = d->nframes ? "finished" : "running";
  v->loaded = -1;
  v->rate = NAN;
  v->t0 = v->t_mark = now_s();
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = STRATA_BACKEND_CPU;
  co.threads = 1;
  if (make_token(v->token, sizeof v->token)) {
    snprintf(err, en, "cannot read /dev/urandom for the token");
    cli_view_destroy(&v);
    return -1;
  }
  if (strata_context_create(&v->ctx, &co) != STRATA_OK ||
      (d->nframes && (!(v->front = malloc(v->grid_bytes))))) {
    snprintf(err, en, "out of memory");
    cli_view_destroy(&v);
    return -1;
  }
  v->d = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
      ntohs(sa.sin_port), NULL, NULL, handle, v, MHD_OPTION_SOCK_ADDR,
      (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT,
      (unsigned)VIEW_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
      (unsigned)VIEW_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      (size_t)VIEW_REQUEST_BYTES, MHD_OPTION_END);
  if (!v->d) {
    snprintf(err, en, "cannot listen on %s:%u (the port is taken, "
             "or the address is not this machine's)", host,
             (unsigned)ntohs(sa.sin_port));
    cli_view_destroy(&v);
    return -1;
  }
  const union MHD_DaemonInfo *i =
      MHD_get_daemon_info(v->d, MHD_DAEMON_INFO_BIND_PORT);
  unsigned port = i ? i->port : ntohs(sa.sin_port);
  snprintf(v->url, sizeof v->url, "http://%s:%u/?token=%s", host, port,
           v->token);
  *out = v;
  return 0;
}

const char *cli_view_url(const cli_view *v) { return v->url; }

/* The run hands over the slice asked for: read into back, swapped in. */
static void hand_over(cli_view *v, long step, const cli_view_source *src) {
  char title[sizeof v->front_title] = "", e[sizeof v->frame_err] = "";
  pthread_mutex_lock(&v->mu);
  const int axis = v->req_axis;
  const long index = v->req_index;
  pthread_mutex_unlock(&v->mu);
  size_t lo[3] = {0, 0, 0}, n[3];
  memcpy(n, v->desc.n, sizeof n);
  if (v->desc.dims == 3) {
    lo[axis] = (size_t)index;
    n[axis] = 1;
  }
  if (!v->front) v->front = malloc(v->slice_bytes);
  if (!v->back) v->back = malloc(v->slice_bytes);
  if (!v->front || !v->back)
    snprintf(e, sizeof e, "no frames: cannot allocate 2 x %zu bytes of host "
             "memory for them", v->slice_bytes);
  else if (src->read(src->arg, lo, n, v->back))
    snprintf(e, sizeof e, "no frame: the field could not be read");
  else if (src->title)
    src->title(src->arg, title, sizeof title);
  pthread_mutex_lock(&v->mu);
  if (!e[0]) {
    void *t = v->front;
    v->front = v->back;
    v->back = t;
    v->have_front = 1;
    v->front_step = step;
    v->front_axis = axis;
    v->front_index = index;
    memcpy(v->front_title, title, sizeof title);
  }
  memcpy(v->frame_err, e, sizeof e);
  v->seq++;
  astore(&v->want, 0);
  pthread_cond_broadcast(&v->cv);
  pthread_mutex_unlock(&v->mu);
}

/* The run hands over its gather. */
static void hand_over_traces(cli_view *v, const cli_view_source *src) {
  void *png = NULL;
  size_t size = 0;
  if (src->traces && src->traces(src->arg, &png, &size)) png = NULL;
  pthread_mutex_lock(&v->mu);
  if (png) {
    free(v->tr_png);
    v->tr_png = png;
    v->tr_size = size;
  }
  v->tr_seq++;
  astore(&v->want_traces, 0);
  pthread_cond_broadcast(&v->cv);
  pthread_mutex_unlock(&v->mu);
}

int cli_view_tick(cli_view *v, long step, double time,
                  const cli_view_source *src) {
  if (!v) return 0;
  double t = now_s();
  /* the status is skipped, never waited for, while a request holds it */
  if (pthread_mutex_trylock(&v->mu) == 0) {
    v->step = step;
    v->time = time;
    if (t - v->t_mark >= 1 || !isfinite(v->rate)) {
      if (t > v->t_mark && step > v->step_mark)
        v->rate = (double)(step - v->step_mark) / (t - v->t_mark);
      v->t_mark = t;
      v->step_mark = step;
    }
    pthread_mutex_unlock(&v->mu);
  }
  if (aload(&v->want)) hand_over(v, step, src);
  if (aload(&v->want_traces)) hand_over_traces(v, src);
  if (aload(&v->paused) && !aload(&v->stop)) {
    pthread_mutex_lock(&v->mu);
    v->state = "paused";
    v->step = step;
    v->time = time;
    pthread_cond_broadcast(&v->cv);
    while (aload(&v->paused) && !aload(&v->stop) && !cli_interrupted()) {
      if (aload(&v->want) || aload(&v->want_traces)) {
        pthread_mutex_unlock(&v->mu);
        if (aload(&v->want)) hand_over(v, step, src);
        if (aload(&v->want_traces)) hand_over_traces(v, src);
        pthread_mutex_lock(&v->mu);
        continue;
      }
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      until.tv_nsec += 50 * 1000000L;
      if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&v->cv, &v->mu, &until);
    }
    v->state = "running";
    v->t_mark = now_s(); /* the rate counts running time only */
    v->step_mark = step;
    pthread_mutex_unlock(&v->mu);
  }
  if (!aload(&v->stop)) return 0;
  pthread_mutex_lock(&v->mu);
  v->state = "stopping";
  pthread_mutex_unlock(&v->mu);
  return 1;
}

void cli_view_finish(cli_view *v, const char *state) {
  if (!v) return;
  pthread_mutex_lock(&v->mu);
  v->state = !strcmp(state, "stopped") ? "stopped" : "finished";
  pthread_cond_broadcast(&v->cv);
  pthread_mutex_unlock(&v->mu);
}

void cli_view_serve_forever(cli_view *v) {
  while (v && !cli_interrupted()) {
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
  }
}

void cli_view_destroy(cli_view **pv) {
  cli_view *v = pv ? *pv : NULL;
  if (!v) return;
  if (v->d) {
    cli_view_finish(v, "finished"); /* waiting requests return */
    MHD_stop_daemon(v->d);
  }
  if (v->ctx) {
    pthread_mutex_destroy(&v->mu);
    pthread_mutex_destroy(&v->enc);
    pthread_cond_destroy(&v->cv);
  }
  strata_context_destroy(&v->ctx);
  for (int i = 0; i < 6; i++) free(v->strs[i]);
  free(v->summary);
  free(v->lines);
  free(v->traces);
  free(v->frame_steps);
  free(v->front);
  free(v->back);
  free(v->c_png);
  free(v->tr_png);
  free(v);
  *pv = NULL;
}

#else /* no libmicrohttpd in this build */

struct cli_view {
  int unused;
};

int cli_view_start(cli_view **out, const char *spec, const cli_view_desc *d,
                   char *err, size_t en) {
  (void)spec;
  (void)d;
  *out = NULL;
  snprintf(err, en, "the live view needs libmicrohttpd, which this build "
           "of strata does not have: install it (sudo apt-get install "
           "libmicrohttpd-dev, or sh scripts/deps.sh) and build again");
  return -1;
}
const char *cli_view_url(const cli_view *v) { return v ? "" : ""; }
int cli_view_tick(cli_view *v, long step, double time,
                  const cli_view_source *src) {
  (void)v, (void)step, (void)time, (void)src;
  return 0;
}
void cli_view_finish(cli_view *v, const char *state) { (void)v, (void)state; }
void cli_view_serve_forever(cli_view *v) { (void)v; }
void cli_view_destroy(cli_view **v) {
  if (v) *v = NULL;
}

#endif
