/* Helpers shared by the subcommands: messages, contexts, timing, progress
 * display and the Ctrl-C flag. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int interrupt_hook(void *arg);

/* -1: one process (or rank unknown): cli_err always prints */
static int g_rank = -1;

void cli_set_rank(int rank) { g_rank = rank; }

void cli_err(const char *fmt, ...) {
  if (g_rank > 0) return; /* rank 0 speaks for every rank */
  va_list ap;
  va_start(ap, fmt);
  fputs("strata: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void cli_err_rank(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (g_rank >= 0)
    fprintf(stderr, "strata: rank %d: ", g_rank);
  else
    fputs("strata: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

strata_context *cli_context(strata_backend b, int device, int threads) {
  strata_context_options o;
  strata_context_options_init(&o);
  char why[512] = "";
  o.backend = b;
  o.device = device;
  o.threads = threads;
  o.errbuf = why;
  o.errbuf_size = sizeof why;
  o.interrupt = interrupt_hook; /* long library work stops on Ctrl-C too */
  strata_context *ctx = NULL;
  strata_status s = strata_context_create(&ctx, &o);
  if (s != STRATA_OK) {
    cli_err("cannot use backend '%s': %s%s%s", strata_backend_name(b),
            strata_strerror(s), why[0] ? ": " : "", why);
    return NULL;
  }
  return ctx;
}

/* ---- several processes -------------------------------------------------- */

static int env_int(const char *name, int *out) {
  long v;
  if (cli_parse_long(getenv(name), 0, 1L << 30, &v)) return 0;
  *out = (int)v;
  return 1;
}

void cli_launch_detect(cli_launch *l) {
  static const char *const vars[][2] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
      {"PMI_SIZE", "PMI_RANK"},
      {"MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"},
      {NULL, "PMIX_RANK"},
  };
  memset(l, 0, sizeof *l);
  l->size = l->rank = -1;
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    int size = -1, rank = -1;
    int has_size = vars[i][0] && env_int(vars[i][0], &size);
    int has_rank = env_int(vars[i][1], &rank);
    if (!has_size && !has_rank) continue;
    l->launched = 1;
    l->size = has_size && size > 0 ? size : -1;
    l->rank = has_rank ? rank : -1;
    l->by = vars[i][0] && has_size ? vars[i][0] : vars[i][1];
    return;
  }
}

strata_dist *cli_dist(strata_backend b, int threads, int ranks_y) {
  strata_context_options o;
  strata_context_options_init(&o);
  char why[512] = "";
  o.backend = b;
  o.threads = threads;
  o.errbuf = why;
  o.errbuf_size = sizeof why;
  o.interrupt = interrupt_hook; /* long library work stops on Ctrl-C too */
  strata_dist_options dopt;
  strata_dist_options_init(&dopt); /* one GPU per rank (node-local rank) */
  dopt.ranks_y = ranks_y;
  strata_dist *d = NULL;
  strata_status s = strata_dist_create(&o, &dopt, &d);
  if (s != STRATA_OK) {
    /* the library's "dist: ..." messages are the same on every rank (rank
     * 0 says them); a rank's own context failure is said by that rank */
    if (g_rank > 0 && strncmp(why, "dist:", 5) != 0)
      cli_err_rank("cannot use backend '%s': %s%s%s", strata_backend_name(b),
                   strata_strerror(s), why[0] ? ": " : "", why);
    else
      cli_err("cannot use backend '%s' over several processes: %s%s%s",
              strata_backend_name(b), strata_strerror(s), why[0] ? ": " : "",
              why);
    return NULL;
  }
  return d;
}

double cli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cli_parse_long(const char *s, long lo, long hi, long *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double cli_time(int (*fn)(void *), void *arg, strata_context *ctx,
                int samples, double min_s) {
  double t[16];
  if (samples > 16) samples = 16;
  if (fn(arg) || strata_context_sync(ctx) != STRATA_OK) return -1; /* warm */
  for (int s = 0; s < samples; s++) {
    long reps = 0;
    double t0 = cli_now(), dt;
    do {
      if (fn(arg)) return -1;
      reps++;
      if (strata_context_sync(ctx) != STRATA_OK) return -1;
      dt = cli_now() - t0;
    } while (dt < min_s);
    t[s] = dt / (double)reps;
  }
  qsort(t, (size_t)samples, sizeof t[0], cmp_double);
  return t[samples / 2];
}

typedef struct {
  strata_field *a, *b;
} copy_arg;

static int do_copy(void *p) {
  copy_arg *c = p;
  return strata_copy_kernel(c->a, c->b, NULL) != STRATA_OK;
}

int cli_copy_rate(strata_context *ctx, const size_t n[3], strata_precision p,
                  double *pts_per_s) {
  strata_field_desc d = {3, {n[0], n[1], n[2]}, 1, p};
  copy_arg c = {NULL, NULL};
  strata_status s = strata_field_create(ctx, &d, &c.a);
  if (s == STRATA_OK) s = strata_field_create(ctx, &d, &c.b);
  if (s == STRATA_OK) s = strata_field_fill_random(c.a, 1, -1, 1);
  double t = -1;
  if (s == STRATA_OK) t = cli_time(do_copy, &c, ctx, 5, 0.05);
  if (s != STRATA_OK || t <= 0) {
    cli_err("copy benchmark failed: %s", strata_context_error(ctx));
    strata_field_destroy(&c.a);
    strata_field_destroy(&c.b);
    return -1;
  }
  *pts_per_s = (double)(n[0] * n[1] * n[2]) / t;
  strata_field_destroy(&c.a);
  strata_field_destroy(&c.b);
  return 0;
}

/* ---- progress ------------------------------------------------------------ */

static void fmt_time(double s, char *buf, size_t n) {
  if (!(s >= 0) || s > 359999) {
    snprintf(buf, n, "--:--");
    return;
  }
  long t = lround(s);
  if (t >= 3600)
    snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

/* A tenth of the steps from first to total (at least 1): the steps
 * between two progress lines in a log. */
static long log_stride(const cli_progress *p) {
  double t = ceil(((double)p->total - (double)p->first) / 10);
  return t < 1 ? 1 : t < 1e18 ? (long)t : (long)1e18;
}

void cli_progress_start(cli_progress *p, long first, long total,
                        double points, int quiet) {
  memset(p, 0, sizeof *p);
  p->first = first;
  p->total = total;
  p->points = points;
  p->quiet = quiet;
  p->tty = isatty(fileno(stderr));
  p->t0 = p->last_draw = p->last_log = cli_now();
  p->next_log_step = first + log_stride(p);
}

static void rates(const cli_progress *p, long done, double now, double *sps,
                  double *gpts, double *eta) {
  double dt = now - p->t0;
  double steps = (double)done - (double)p->first;
  *sps = dt > 0 ? steps / dt : 0;
  *gpts = *sps * p->points * 1e-9;
  *eta = *sps > 0 ? ((double)p->total - (double)done) / *sps : -1;
}

void cli_progress_update(cli_progress *p, long done) {
  if (p->quiet) return;
  double now = cli_now(), sps, gpts, eta;
  char e[32];
  if (p->tty) {
    if (now - p->last_draw < 0.1 && done < p->total) return;
    p->last_draw = now;
    rates(p, done, now, &sps, &gpts, &eta);
    fmt_time(eta, e, sizeof e);
    int width = 30;
    int fill = p->total ? (int)(width * (double)done / (double)p->total)
                        : width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r[%s] %3d%% %ld/%ld steps  %.1f steps/s  %.3f Gpts/s  "
            "ETA %s \033[K", bar,
            p->total ? (int)(100 * (double)done / (double)p->total) : 100,
            done, p->total, sps, gpts, e);
    fflush(stderr);
    p->drawn = 1;
  } else if ((done >= p->next_log_step && now - p->last_log >= 2) ||
             now - p->last_log >= 30) {
    p->last_log = now;
    while (p->next_log_step <= done) p->next_log_step += log_stride(p);
    rates(p, done, now, &sps, &gpts, &eta);
    fmt_time(eta, e, sizeof e);
    fprintf(stderr, "strata: step %ld/%ld  %.1f steps/s  %.3f Gpts/s  "
            "remaining %s\n", done, p->total, sps, gpts, e);
  }
}

void cli_progress_finish(cli_progress *p) {
  if (p->quiet) return;
  if (p->tty && p->drawn) fputs("\r\033[K", stderr);
}

/* ---- Ctrl-C ------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag, exit_now;

static void on_signal(int sig) {
  if (exit_now) { /* setting up: nothing written yet, nothing to keep */
    static const char m[] = "strata: interrupted while setting up the run; "
                            "nothing was written\n";
    ssize_t w = write(STDERR_FILENO, m, sizeof m - 1);
    (void)w;
    _exit(130);
  }
  stop_flag = 1;
  signal(sig, SIG_DFL); /* a second Ctrl-C stops at once */
}

void cli_interrupt_exits(int on) { exit_now = on; }

void cli_install_interrupt(int usr1) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (usr1) sigaction(SIGUSR1, &sa, NULL);
}

int cli_interrupted(void) { return stop_flag != 0; }

void cli_interrupt_request(void) { stop_flag = 1; }

static int interrupt_hook(void *arg) {
  (void)arg;
  return stop_flag != 0;
}
