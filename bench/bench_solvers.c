/* CPU benchmark of the solvers: points x steps per second, GB/s at the bytes
 * each step must move, and the percentage of the copy ceiling
 * (strata_copy_kernel "copy", measured in the same run on fields of the same
 * size and precision).  Heat: temporal blocking depth s = 1..8 next to the
 * temporal-blocking model f(s).  Wave: the 25-point acoustic step;
 * wave-density its variable-density form; wave2d the 2D section.  FDTD: the
 * reference paper's table (1M, 4M, 16M cells), step time and transfer
 * (read-back) time separately.  Prints markdown tables.  Each figure is timed
 * g_reps times after a warm-up; throughput is given as median / best, and the
 * percentages compare best with best (the ceiling is a best case, and on a
 * shared machine the median carries other processes' load).  A copy
 * ceiling that cannot be right (strata_bench_ceiling_suspect) is warned
 * about on stderr.
 *
 *   bench_solvers [heat|heat2d|heat3d|wave|wave-density|wave2d|fdtd|all]
 *                 [--small] [--reps N]
 *                 [--backend cpu|cuda|auto] [--tuning KEY=VALUE,...]
 *
 * --tuning passes the engine's tuning switches (docs/tuning.md) to the
 * context. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "runner.h"
#include "strata.h"

static int g_reps = 5;
static strata_backend g_backend = STRATA_BACKEND_CPU;
static const char *g_tuning = ""; /* --tuning */

/* A context of the benchmark's backend with the tuning switches of
 * --tuning and then extra (either may be ""), or NULL (why says). */
static strata_context *open_ctx(const char *extra, char *why, size_t n) {
  char t[1024];
  snprintf(t, sizeof t, "%s%s%s", g_tuning, *g_tuning && *extra ? "," : "",
           extra);
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = g_backend;
  co.tuning = *t ? t : NULL;
  co.errbuf = why;
  co.errbuf_size = n;
  strata_context *ctx = NULL;
  if (strata_context_create(&ctx, &co) != STRATA_OK) return NULL;
  return ctx;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The shortest time (v must be sorted by median() first). */
static double best(const double *v) { return v[0]; }

#define DIE(ctx, expr)                                                         \
  do {                                                                         \
    strata_status s_ = (expr);                                                 \
    if (s_ != STRATA_OK) {                                                     \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #expr,        \
              strata_status_name(s_), strata_context_error(ctx));              \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* Warns on stderr when the copy ceiling cgb (GB/s) cannot be believed:
 * slower than any memory, or (gpts > 0) beaten by what, running gpts
 * Gpts x steps/s at its minimum of bpp bytes per point and step. */
static void check_ceiling(strata_context *ctx, double cgb, const char *what,
                          double gpts, double bpp) {
  char warn[512];
  if (gpts > 0 && cgb < STRATA_BENCH_MIN_COPY_GBS)
    return; /* said once, when the copy was measured */
  if (strata_bench_ceiling_suspect(
          cgb, gpts > 0 ? gpts * bpp / cgb : 0, what, bpp,
          strata_context_backend(ctx) == STRATA_BACKEND_CPU, warn,
          sizeof warn)) {
    fflush(stdout); /* after the table's lines so far */
    fprintf(stderr, "bench_solvers: warning: %s\n", warn);
  }
}

/* Copy bandwidth (GB/s, read + write) of the CPU engine's copy kernel on
 * fields of this shape and precision: the best of g_reps. */
static double copy_gbs(strata_context *ctx, int dims, const size_t n[3],
                       strata_precision p) {
  strata_field_desc d = {dims, {n[0], n[1], n[2]}, 1, p};
  strata_field *a = NULL, *b = NULL;
  DIE(ctx, strata_field_create(ctx, &d, &a));
  DIE(ctx, strata_field_create(ctx, &d, &b));
  DIE(ctx, strata_field_fill(a, 1.0));
  DIE(ctx, strata_copy_kernel(a, b, NULL)); /* warm-up */
  double t[32];
  for (int r = 0; r < g_reps; r++) {
    double t0 = strata_test_clock();
    DIE(ctx, strata_copy_kernel(a, b, NULL));
    DIE(ctx, strata_context_sync(ctx));
    t[r] = strata_test_clock() - t0;
  }
  double pts = (double)n[0] * n[1] * n[2];
  strata_field_destroy(&a);
  strata_field_destroy(&b);
  median(t, g_reps);
  double gbs = 2.0 * (double)p * pts / best(t) / 1e9;
  check_ceiling(ctx, gbs, "", 0, 0);
  return gbs;
}

/* the temporal-blocking model (docs/performance.md#temporal-blocking-fs):
 * f(s) = a s (p - 2s)^D / (p^D + (p - 2s)^D) */
static double blocking_model(double a, double p, int D, int s) {
  double in = pow(p - 2 * s, D);
  return a * s * in / (pow(p, D) + in);
}

/* One heat case: the table of s against the model, and against EBISU's
 * published figure for the grid when there is one (ebisu > 0). */
typedef struct {
  int dims;
  size_t n[3];
  strata_precision p;
  strata_heat_operator op;
  double ebisu; /* Gcells/s, EBISU's published table; 0 = none */
  int ns, s[6];
} heat_case;

static void bench_heat_case(strata_context *ctx, const heat_case *c) {
  const int dims = c->dims;
  const size_t *n = c->n;
  const int es = (int)c->p;
  double pts = (double)n[0] * n[1] * n[2];
  double cgb = copy_gbs(ctx, dims, n, c->p);
  double ceiling = cgb / (2.0 * es); /* Gpts/s at 2 es bytes per point */
  printf("%dD %zu x %zu x %zu, %s, %s: copy %.1f GB/s -> single-sweep "
         "ceiling %.2f Gpts/s (%d B per point per step)%s", dims, n[0], n[1],
         n[2], c->p == STRATA_F32 ? "fp32" : "fp64",
         c->op == STRATA_HEAT_FE27 ? "27-point FE" : "5/7-point", cgb,
         ceiling, 2 * es, c->ebisu > 0 ? "" : "\n\n");
  if (c->ebisu > 0)
    printf("; EBISU %.0f Gcells/s, target (+10%%) %.0f\n\n", c->ebisu,
           1.1 * c->ebisu);
  printf("| s (fused steps) | model f(s)/f(1), p = 32 | Gpts x steps/s "
         "(median / best) | GB/s at %d B/pt-step (best) | %% of single-sweep "
         "ceiling | %s\n|---|---|---|---|---|%s\n", 2 * es,
         c->ebisu > 0 ? "% of EBISU |" : "",
         c->ebisu > 0 ? "---|" : "");
  for (int q = 0; q < c->ns; q++) {
    int s = c->s[q];
    strata_heat_options o;
    strata_heat_options_init(&o);
    o.dims = dims;
    memcpy(o.n, n, sizeof o.n);
    o.precision = c->p;
    o.op = c->op;
    o.D = c->op == STRATA_HEAT_FE27 ? 0.3 : dims == 2 ? 0.2 : 0.15;
    o.fuse = s;
    strata_heat *h = NULL;
    DIE(ctx, strata_heat_create(ctx, &o, &h));
    DIE(ctx, strata_field_fill_random(strata_heat_field(h), 1, 0, 1));
    long steps = 48; /* a multiple of every s */
    DIE(ctx, strata_heat_step(h, steps)); /* warm-up */
    DIE(ctx, strata_context_sync(ctx));
    double t[32];
    for (int r = 0; r < g_reps; r++) {
      double t0 = strata_test_clock();
      DIE(ctx, strata_heat_step(h, steps));
      DIE(ctx, strata_context_sync(ctx));
      t[r] = strata_test_clock() - t0;
    }
    double tm = median(t, g_reps);
    double gmed = pts * steps / tm / 1e9, gpts = pts * steps / best(t) / 1e9;
    double a = dims == 2 ? 7 : 9;
    printf("| %d | %.2f | %.2f / %.2f | %.1f | %.0f%% |", s,
           blocking_model(a, 32, dims, s) / blocking_model(a, 32, dims, 1),
           gmed, gpts, gpts * 2 * es, 100 * gpts / ceiling);
    if (c->ebisu > 0) printf(" %.0f%% |", 100 * gmed / c->ebisu);
    printf("\n");
    char what[64];
    snprintf(what, sizeof what, "heat with %d fused steps", s);
    check_ceiling(ctx, cgb, what, gpts, 2.0 * es / s);
    strata_heat_destroy(&h);
  }
  printf("\n");
}

/* which: 0 all, 2 the 2D cases, 3 the 3D cases */
static void bench_heat(strata_context *ctx, int small, int which) {
  printf("\n### Heat (u' = u + D lap u), Dirichlet\n\n");
  if (strata_context_backend(ctx) == STRATA_BACKEND_CUDA && !small) {
    /* EBISU's grids and published figures */
    static const heat_case cuda[] = {
        {2, {10472, 10472, 1}, STRATA_F32, STRATA_HEAT_FD, 1111, 5,
         {1, 4, 6, 7, 8}},
        {2, {10472, 10472, 1}, STRATA_F64, STRATA_HEAT_FD, 901, 5,
         {1, 4, 6, 7, 8}},
        {2, {16384, 16384, 1}, STRATA_F32, STRATA_HEAT_FD, 567, 2, {1, 8}},
        {2, {16384, 16384, 1}, STRATA_F64, STRATA_HEAT_FD, 0, 2, {1, 8}},
        {3, {512, 512, 512}, STRATA_F32, STRATA_HEAT_FD, 588, 4, {1, 2, 3, 4}},
        {3, {768, 352, 2560}, STRATA_F32, STRATA_HEAT_FD, 632, 4, {1, 2, 3, 4}},
        {3, {512, 512, 512}, STRATA_F64, STRATA_HEAT_FD, 323, 4, {1, 2, 3, 4}},
        {3, {512, 512, 512}, STRATA_F32, STRATA_HEAT_FE27, 370, 2, {1, 2}},
        {3, {512, 512, 512}, STRATA_F64, STRATA_HEAT_FE27, 179, 2, {1, 2}},
    };
    for (size_t q = 0; q < sizeof cuda / sizeof cuda[0]; q++)
      if (!which || which == cuda[q].dims) bench_heat_case(ctx, &cuda[q]);
    return;
  }
  heat_case cpu[2] = {
      {2, {4096, 4096, 1}, STRATA_F32, STRATA_HEAT_FD, 0, 6,
       {1, 2, 3, 4, 6, 8}},
      {3, {256, 256, 256}, STRATA_F32, STRATA_HEAT_FD, 0, 6,
       {1, 2, 3, 4, 6, 8}},
  };
  if (small) {
    cpu[0].n[0] = cpu[0].n[1] = 1024;
    cpu[1].n[0] = cpu[1].n[1] = cpu[1].n[2] = 96;
  }
  for (int q = 0; q < 2; q++)
    if (!which || which == cpu[q].dims) bench_heat_case(ctx, &cpu[q]);
}

/* One row of a wave table: w stepped steps at a time g_reps times after
 * a warm-up, against the single-sweep ceiling cgb / (bytes per point and
 * step). */
static void wave_row(strata_context *ctx, strata_wave *w, const char *name,
                     long steps, double pts, double cgb) {
  strata_wave_info info;
  DIE(ctx, strata_wave_get_info(w, &info));
  DIE(ctx, strata_wave_step(w, 2));
  double t[32];
  for (int r = 0; r < g_reps; r++) {
    double t0 = strata_test_clock();
    DIE(ctx, strata_wave_step(w, steps));
    DIE(ctx, strata_context_sync(ctx));
    t[r] = strata_test_clock() - t0;
  }
  double tm = median(t, g_reps), gmed = pts * steps / tm / 1e9;
  double gpts = pts * steps / best(t) / 1e9;
  double B = info.bytes_per_point_step, ceil_ = cgb / B;
  printf("| %s | %.2f | %.3f / %.3f | %.1f | %.3f | %.0f%% |\n", name, B,
         gmed, gpts, gpts * B, ceil_, 100 * gpts / ceil_);
  check_ceiling(ctx, cgb, name, gpts, B);
}

static void bench_wave(strata_context *ctx, int small) {
  printf("\n### Acoustic wave, 3D, order 8 (25 points), fp32\n\n");
  size_t n = small ? 96 : 256;
  if (strata_context_backend(ctx) == STRATA_BACKEND_CUDA && !small) n = 512;
  size_t nn[3] = {n, n, n};
  double pts = (double)n * n * n;
  double cgb = copy_gbs(ctx, 3, nn, STRATA_F32);
  printf("%zu^3: copy %.1f GB/s\n\n", n, cgb);
  printf("| case | bytes/pt-step | Gpts x steps/s (median / best) | GB/s "
         "(best) | single-sweep ceiling (Gpts/s) | %% of ceiling |\n"
         "|---|---|---|---|---|---|\n");
  /* case 4 (CUDA): the sponge case again, two steps per sweep (the fused
   * kernel, on a context with the tuning switch wave_pair=1; even step
   * counts, so only fused sweeps) */
  const int ncase =
      strata_context_backend(ctx) == STRATA_BACKEND_CUDA ? 5 : 4;
  strata_context *const main_ctx = ctx;
  for (int c = 0; c < ncase; c++) {
    ctx = main_ctx;
    strata_wave_options o;
    strata_wave_options_init(&o);
    o.n[0] = o.n[1] = o.n[2] = n;
    o.amplitude = 1;
    const char *name = "";
    switch (c) {
    case 0:
      name = "free surfaces, constant v";
      for (int f = 0; f < 6; f++) o.face[f] = STRATA_WAVE_FREE;
      break;
    case 1: name = "CPML (20) all faces, constant v"; break;
    case 2:
      name = "sponge (20) all faces, constant v";
      for (int f = 0; f < 6; f++) o.face[f] = STRATA_WAVE_SPONGE;
      break;
    case 3:
      name = "CPML + free top, velocity field";
      o.face[STRATA_FACE_ZLO] = STRATA_WAVE_FREE;
      break;
    case 4:
      name = "sponge (20) all faces, two steps per sweep (wave_pair=1)";
      for (int f = 0; f < 6; f++) o.face[f] = STRATA_WAVE_SPONGE;
      char why[256] = "";
      if (!(ctx = open_ctx("wave_pair=1", why, sizeof why))) {
        fprintf(stderr, "cannot create the wave_pair context: %s\n", why);
        exit(1);
      }
      break;
    }
    strata_wave *w = NULL;
    DIE(ctx, strata_wave_create(ctx, &o, &w));
    if (c == 3) {
      double *v = malloc(n * n * n * sizeof(double));
      for (size_t q = 0; q < n * n * n; q++)
        v[q] = 1500 + 500.0 * (double)(q / (n * n)) / (double)n;
      DIE(ctx, strata_wave_set_velocity(w, v));
      free(v);
    }
    wave_row(ctx, w, name, small ? 10 : c == 4 ? 6 : 5, pts, cgb);
    strata_wave_destroy(&w);
    if (ctx != main_ctx) strata_context_destroy(&ctx);
  }
  printf("\n");
}

/* wave-density and wave2d: the variable-density 3D step (order 8, CPML
 * all faces, velocity and density fields) and the 2D x-z section (order
 * 8, 17 points; CPML sides and bottom, free top; constant, then velocity
 * and density fields), fp32 and fp64, against the copy ceiling of fields
 * of the same size and precision. */
static void bench_wave_vd(strata_context *ctx, int small, int two) {
  const int cuda = strata_context_backend(ctx) == STRATA_BACKEND_CUDA;
  size_t n = two ? (small ? 512 : cuda ? 8192 : 2048)
                 : (small ? 96 : cuda ? 512 : 256);
  const size_t nn[3] = {n, two ? 1 : n, n}, cn[3] = {n, n, two ? 1 : n};
  const double pts = (double)nn[0] * (double)nn[1] * (double)nn[2];
  const size_t cnt = nn[0] * nn[1] * nn[2];
  for (int p = 0; p < 2; p++) {
    const strata_precision prec = p ? STRATA_F64 : STRATA_F32;
    if (two)
      printf("\n### Acoustic wave, 2D x-z section, order 8 (17 points), "
             "%s\n\n", p ? "fp64" : "fp32");
    else
      printf("\n### Acoustic wave, 3D, variable density, order 8, %s\n\n",
             p ? "fp64" : "fp32");
    const double cgb = copy_gbs(ctx, two ? 2 : 3, cn, prec);
    if (two)
      printf("%zu x %zu: copy %.1f GB/s\n\n", n, n, cgb);
    else
      printf("%zu^3: copy %.1f GB/s\n\n", n, cgb);
    printf("| case | bytes/pt-step | Gpts x steps/s (median / best) | GB/s "
           "(best) | single-sweep ceiling (Gpts/s) | %% of ceiling |\n"
           "|---|---|---|---|---|---|\n");
    for (int c = two ? 0 : 1; c < 2; c++) {
      strata_wave_options o;
      strata_wave_options_init(&o);
      memcpy(o.n, nn, sizeof o.n);
      o.precision = prec;
      o.amplitude = 1;
      o.velocity = 2500;
      if (two) o.face[STRATA_FACE_ZLO] = STRATA_WAVE_FREE;
      strata_wave *w = NULL;
      DIE(ctx, strata_wave_create(ctx, &o, &w));
      if (c == 1) { /* velocity and density fields, varying with depth */
        double *m = malloc(cnt * sizeof(double));
        if (!m) exit(1);
        for (size_t q = 0; q < cnt; q++)
          m[q] = 1500 + 1000.0 * (double)(q / (nn[0] * nn[1])) / (double)n;
        DIE(ctx, strata_wave_set_velocity(w, m));
        for (size_t q = 0; q < cnt; q++) m[q] *= 0.9;
        DIE(ctx, strata_wave_set_density(w, m));
        free(m);
      }
      const char *name =
          two ? (c ? "CPML + free top, velocity and density fields"
                   : "CPML + free top, constant v and rho")
              : "CPML (20) all faces, velocity and density fields";
      wave_row(ctx, w, name, small ? 10 : two ? 20 : 5, pts, cgb);
      strata_wave_destroy(&w);
    }
  }
  printf("\n");
}

static void bench_fdtd(strata_context *ctx, int small) {
  printf("\n### FDTD 2D (seed 002's table), fp32, PEC walls, sine source\n\n");
  printf("| cells | scheme | step, ms (median / best) | transfer E to host, "
         "ms (median) | Gcells x steps/s (best) | GB/s at B/cell-step (best) "
         "| %% of copy |\n|---|---|---|---|---|---|---|\n");
  const size_t sizes[3] = {1024, 2048, 4096};
  for (int q = 0; q < 3; q++) {
    size_t n = small ? sizes[q] / 4 : sizes[q];
    size_t nn[3] = {n, n, 1};
    double cells = (double)n * n, cgb = copy_gbs(ctx, 2, nn, STRATA_F32);
    for (int sc = 0; sc < 2; sc++) {
      strata_fdtd_options o;
      strata_fdtd_options_init(&o);
      o.n[0] = o.n[1] = n;
      o.scheme = sc ? STRATA_FDTD_YEE_TM : STRATA_FDTD_EXPLICIT;
      strata_fdtd *f = NULL;
      DIE(ctx, strata_fdtd_create(ctx, &o, &f));
      DIE(ctx, strata_fdtd_step(f, 2));
      long steps = 10;
      double t[32], tx[32];
      float *host = malloc(n * n * sizeof(float));
      for (int r = 0; r < g_reps; r++) {
        double t0 = strata_test_clock();
        DIE(ctx, strata_fdtd_step(f, steps));
        DIE(ctx, strata_context_sync(ctx));
        double t1 = strata_test_clock();
        DIE(ctx, strata_fdtd_read(f, STRATA_FDTD_EZ, host));
        tx[r] = strata_test_clock() - t1;
        t[r] = (t1 - t0) / steps;
      }
      free(host);
      double tm = median(t, g_reps), txm = median(tx, g_reps);
      double tb = best(t);
      /* bytes each step must move: explicit reads E and E- and writes E+
       * (12 B/cell); Yee reads and writes Ez, Hx, Hy once (24 B/cell) */
      double B = sc ? 24 : 12, gc = cells / tb / 1e9;
      printf("| %.0fM (%zu^2) | %s | %.2f / %.2f | %.2f | %.3f | %.1f at %.0f "
             "| %.0f%% |\n", cells / 1048576.0, n,
             sc ? "Yee TM" : "explicit E (seed)", tm * 1e3, tb * 1e3,
             txm * 1e3, gc, gc * B, B, 100 * gc * B / cgb);
    check_ceiling(ctx, cgb, sc ? "FDTD Yee TM" : "FDTD explicit E", gc, B);
      strata_fdtd_destroy(&f);
    }
  }
  printf("\n");
}

int main(int argc, char **argv) {
  const char *what = "all";
  int small = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--small") == 0)
      small = 1;
    else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      if (strata_backend_parse(argv[++i], &g_backend) != STRATA_OK) {
        fprintf(stderr, "unknown backend '%s' (auto, cpu, cuda)\n", argv[i]);
        return 2;
      }
    }
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      g_reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--tuning") == 0 && i + 1 < argc)
      g_tuning = argv[++i];
    else
      what = argv[i];
  }
  if (g_reps < 1 || g_reps > 32) g_reps = 5;
  char why[256] = "";
  strata_context *ctx = open_ctx("", why, sizeof why);
  if (!ctx) {
    fprintf(stderr, "cannot create a %s context: %s\n",
            strata_backend_name(g_backend), why);
    return 1;
  }
  strata_device_info info;
  DIE(ctx, strata_context_device_info(ctx, &info));
  printf("%s engine: %s, %d threads; %d timed runs each\n",
         strata_backend_name(strata_context_backend(ctx)), info.name,
         info.threads, g_reps);
  if (!strcmp(what, "heat") || !strcmp(what, "all")) bench_heat(ctx, small, 0);
  if (!strcmp(what, "heat2d")) bench_heat(ctx, small, 2);
  if (!strcmp(what, "heat3d")) bench_heat(ctx, small, 3);
  if (!strcmp(what, "wave") || !strcmp(what, "all")) bench_wave(ctx, small);
  if (!strcmp(what, "wave-density") || !strcmp(what, "all"))
    bench_wave_vd(ctx, small, 0);
  if (!strcmp(what, "wave2d") || !strcmp(what, "all"))
    bench_wave_vd(ctx, small, 1);
  if (!strcmp(what, "fdtd") || !strcmp(what, "all")) bench_fdtd(ctx, small);
  strata_context_destroy(&ctx);
  return 0;
}
