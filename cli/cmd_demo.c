/* strata demo: the first thing to run on a new machine.  Applies each
 * operator family once per timed call on a moderate 3D grid, checks every
 * result against the CPU engine when running on CUDA, prints Gpts/s, GB/s
 * and the percentage of the copy ceiling measured in the same run (warning
 * when that ceiling cannot be right), and writes a PNG slice of the
 * 25-point Laplacian of a wave packet. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

static void usage(FILE *o) {
  fprintf(o,
          "usage: strata demo [options]\n"
          "  Applies the 7-point, symmetric 27-point, 25-point (8th order)\n"
          "  Laplacians, an 8th-order d/dx and the 2D 5-point Laplacian on a\n"
          "  random N^3 grid; checks each against the CPU engine when running\n"
          "  on a GPU; prints Gpts/s, GB/s (2 x element size per point, the\n"
          "  minimum traffic) and %% of the copy ceiling of the same run; writes\n"
          "  a PNG slice of the 25-point Laplacian of a wave packet.\n"
          "options:\n"
          "  --backend auto|cpu|cuda   engine (default auto)\n"
          "  --size N                  grid N^3, 16..1024 (default 192 on the\n"
          "                            CPU, 256 on CUDA)\n"
          "  --precision f32|f64       (default f32)\n"
          "  --png FILE                picture to write (default strata_demo.png)\n"
          "  --no-png                  write no picture\n");
}

typedef struct {
  const char *name;
  strata_stencil op;
  int dims;
} demo_op;

typedef struct {
  const strata_stencil *op;
  strata_field *in, *out;
} apply_arg;

static int do_apply(void *p) {
  apply_arg *a = p;
  return strata_apply(a->op, a->in, a->out, NULL) != STRATA_OK;
}

/* sum |w| over the stencil's points: with |input| <= 1 it bounds every
 * term, hence the rounding error of any summation order */
static double abs_weight(const strata_stencil *s) {
  double t = 0;
  switch (s->kind) {
  case STRATA_STENCIL_STAR:
    t = fabs(s->center);
    for (int a = 0; a < s->dims; a++)
      for (int k = 1; k <= s->radius; k++) t += 2 * fabs(s->coef[a][k]);
    break;
  case STRATA_STENCIL_DERIVATIVE:
    for (int k = 1; k <= s->radius; k++) t += 2 * fabs(s->coef[s->axis][k]);
    break;
  case STRATA_STENCIL_BOX_SYMMETRIC:
    t = fabs(s->sym[0]) + 6 * fabs(s->sym[1]) + 12 * fabs(s->sym[2]) +
        8 * fabs(s->sym[3]);
    break;
  case STRATA_STENCIL_BOX:
    for (int q = 0; q < (s->dims == 3 ? 27 : 9); q++) t += fabs(s->box[q]);
    break;
  }
  return t;
}

/* Runs op on the CPU engine from the same ghosted input and compares.
 * Returns the worst error as a fraction of the rounding bound (<= 1 ok),
 * or -1 on failure. */
static double check_on_cpu(strata_context **cpu, const demo_op *d,
                           const strata_field *in, const strata_field *out) {
  if (!*cpu && !(*cpu = cli_context(STRATA_BACKEND_CPU, 0, 0))) return -1;
  strata_field_desc fd;
  strata_field_get_desc(in, &fd);
  size_t gx = fd.n[0] + 2 * (size_t)fd.ghost;
  size_t gy = fd.dims >= 2 ? fd.n[1] + 2 * (size_t)fd.ghost : 1;
  size_t gz = fd.dims >= 3 ? fd.n[2] + 2 * (size_t)fd.ghost : 1;
  size_t es = (size_t)fd.precision, ng = gx * gy * gz,
         ni = fd.n[0] * fd.n[1] * fd.n[2];
  void *gh = malloc(ng * es), *got = malloc(ni * es), *want = malloc(ni * es);
  strata_field *ci = NULL, *co = NULL;
  double worst = -1;
  if (!gh || !got || !want) goto done;
  if (strata_field_read_ghosted(in, gh) != STRATA_OK ||
      strata_field_read(out, got) != STRATA_OK)
    goto done;
  if (strata_field_create(*cpu, &fd, &ci) != STRATA_OK ||
      strata_field_create(*cpu, &fd, &co) != STRATA_OK ||
      strata_field_write_ghosted(ci, gh) != STRATA_OK ||
      strata_apply(&d->op, ci, co, NULL) != STRATA_OK ||
      strata_field_read(co, want) != STRATA_OK) {
    cli_err("CPU check failed: %s", strata_context_error(*cpu));
    goto done;
  }
  double eps = fd.precision == STRATA_F32 ? 0x1p-24 : 0x1p-53;
  double bound = (strata_stencil_points(&d->op) + 2) * eps * abs_weight(&d->op);
  worst = 0;
  for (size_t i = 0; i < ni; i++) {
    double a = fd.precision == STRATA_F32 ? ((float *)got)[i]
                                          : ((double *)got)[i];
    double b = fd.precision == STRATA_F32 ? ((float *)want)[i]
                                          : ((double *)want)[i];
    double r = fabs(a - b) / bound;
    if (!(r <= worst)) worst = isnan(r) ? INFINITY : r;
  }
done:
  strata_field_destroy(&ci);
  strata_field_destroy(&co);
  free(gh);
  free(got);
  free(want);
  return worst;
}

typedef struct {
  double n, k;
} packet;

/* a Gaussian-modulated plane wave centred in the box */
static double wave_packet(long i, long j, long k, void *user) {
  const packet *p = user;
  double c = 0.5 * (p->n - 1), x = (i - c) / p->n, y = (j - c) / p->n,
         z = (k - c) / p->n;
  return exp(-(x * x + y * y + z * z) * 40) * cos(p->k * (x + 0.5 * y));
}

typedef struct {
  strata_backend be;
  strata_precision prec;
  long size;
  const char *png;
} demo_args;

/* CLI_OK, or the exit code; *done when --help was answered */
static int demo_parse(int argc, char **argv, demo_args *o, int *done) {
  *o = (demo_args){STRATA_BACKEND_AUTO, STRATA_F32, 0, "strata_demo.png"};
  *done = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      *done = 1;
      return CLI_OK;
    } else if (!strcmp(a, "--no-png")) {
      o->png = NULL;
      continue;
    }
    if (!v) {
      cli_err("demo: %s needs a value (see strata demo --help)", a);
      return CLI_USAGE;
    }
    i++;
    if (!strcmp(a, "--backend")) {
      if (strata_backend_parse(v, &o->be) != STRATA_OK) {
        cli_err("demo: --backend '%s': expected auto, cpu or cuda", v);
        return CLI_USAGE;
      }
    } else if (!strcmp(a, "--size")) {
      if (cli_parse_long(v, 16, 1024, &o->size)) {
        cli_err("demo: --size '%s': expected an integer 16..1024", v);
        return CLI_USAGE;
      }
    } else if (!strcmp(a, "--precision")) {
      if (!strcmp(v, "f32"))
        o->prec = STRATA_F32;
      else if (!strcmp(v, "f64"))
        o->prec = STRATA_F64;
      else {
        cli_err("demo: --precision '%s': expected f32 or f64", v);
        return CLI_USAGE;
      }
    } else if (!strcmp(a, "--png")) {
      o->png = v;
    } else {
      cli_err("demo: unknown option '%s' (see strata demo --help)", a);
      return CLI_USAGE;
    }
  }
  return CLI_OK;
}

static void demo_header(strata_context *ctx, strata_backend asked) {
  strata_backend kind = strata_context_backend(ctx);
  strata_device_info di;
  if (strata_context_device_info(ctx, &di) != STRATA_OK) memset(&di, 0, sizeof di);
  printf("strata %s demo\n", strata_version());
  printf("backend: %s", strata_backend_name(kind));
  if (asked == STRATA_BACKEND_AUTO) printf(" (auto)");
  printf("\ndevice:  %s, %.1f GiB, %d %s", di.name,
         di.memory_bytes / 1073741824.0, di.multiprocessors,
         kind == STRATA_BACKEND_CUDA ? "SMs" : "logical CPUs");
  if (kind == STRATA_BACKEND_CPU) printf(", %d OpenMP threads", di.threads);
  if (kind == STRATA_BACKEND_CUDA) printf(", compute %d.%d", di.cc_major, di.cc_minor);
  printf("\n");
}

static void demo_ops(demo_op ops[5]) {
  memset(ops, 0, 5 * sizeof *ops);
  ops[0].name = "7-point Laplacian";
  strata_stencil_laplacian(&ops[0].op, 3, 2, 1.0);
  ops[1].name = "symmetric 27-point (FE)";
  strata_stencil_box_symmetric(&ops[1].op, 8.0 / 3, 0, -1.0 / 6, -1.0 / 12);
  ops[2].name = "25-point, 8th order";
  strata_stencil_laplacian(&ops[2].op, 3, 8, 1.0);
  ops[3].name = "d/dx, 8th order";
  strata_stencil_derivative(&ops[3].op, 3, 0, 8, 1.0);
  ops[4].name = "2D 5-point Laplacian";
  strata_stencil_laplacian(&ops[4].op, 2, 2, 1.0);
  for (int i = 0; i < 5; i++) ops[i].dims = ops[i].op.dims;
}

/* Times one operator on n^3 random points and checks it against the CPU
 * engine; prints its row.  Returns its rate in points/s, or -1 (failed or
 * wrong: *rc set). */
static double demo_row(strata_context *ctx, strata_context **cpu, demo_op *d,
                       int seed, size_t n, strata_precision prec,
                       double copy_pts, int *rc) {
  const size_t es = (size_t)prec;
  strata_boundary bc;
  strata_boundary_uniform(&bc, STRATA_BC_PERIODIC, 0);
  strata_field_desc fd = {3, {n, n, n}, 4, prec};
  if (d->dims == 2) fd = (strata_field_desc){2, {n, n * n, 1}, 4, prec};
  apply_arg a = {&d->op, NULL, NULL};
  strata_status s = strata_field_create(ctx, &fd, &a.in);
  if (s == STRATA_OK) s = strata_field_create(ctx, &fd, &a.out);
  if (s == STRATA_OK) s = strata_field_fill_random(a.in, 42 + seed, -1, 1);
  if (s == STRATA_OK) s = strata_field_fill_ghosts(a.in, &bc);
  if (s == STRATA_OK) s = strata_field_fill(a.out, NAN);
  double t = s == STRATA_OK ? cli_time(do_apply, &a, ctx, 5, 0.05) : -1;
  double pts = -1;
  if (t <= 0) {
    cli_err("demo: %s failed: %s", d->name, strata_context_error(ctx));
    *rc = CLI_FAIL;
  } else {
    pts = (double)(n * n * n) / t;
    char check[64] = "reference engine";
    if (strata_context_backend(ctx) != STRATA_BACKEND_CPU) {
      double r = check_on_cpu(cpu, d, a.in, a.out);
      if (r < 0)
        *rc = CLI_FAIL;
      else if (r <= 1)
        snprintf(check, sizeof check, "ok (%.2g of bound)", r);
      else {
        snprintf(check, sizeof check, "WRONG (%.3g x bound)", r);
        *rc = CLI_FAIL;
      }
    }
    /* effective bytes per point: the copy's bandwidth x the time per
     * point (2 x element size when the operator runs at the copy's rate) */
    printf("%-24s %9.3f %9.2f %7.1f%% %7.2f  %s\n", d->name, pts * 1e-9,
           pts * 2 * es * 1e-9, 100 * pts / copy_pts,
           2.0 * es * copy_pts / pts, check);
  }
  strata_field_destroy(&a.in);
  strata_field_destroy(&a.out);
  return *rc == CLI_OK ? pts : -1;
}

/* the picture: the 25-point Laplacian of a wave packet, mid-z slice */
static int demo_picture(strata_context *ctx, const strata_stencil *op,
                        size_t n, strata_precision prec, const char *png) {
  size_t m = n < 128 ? n : 128;
  strata_boundary bc;
  strata_boundary_uniform(&bc, STRATA_BC_PERIODIC, 0);
  strata_field_desc fd = {3, {m, m, m}, 4, prec};
  strata_field *in = NULL, *out = NULL;
  packet pk = {(double)m, 40};
  strata_status s = strata_field_create(ctx, &fd, &in);
  if (s == STRATA_OK) s = strata_field_create(ctx, &fd, &out);
  if (s == STRATA_OK) s = strata_field_fill_fn(in, wave_packet, &pk);
  if (s == STRATA_OK) s = strata_field_fill_ghosts(in, &bc);
  if (s == STRATA_OK) s = strata_apply(op, in, out, NULL);
  strata_png_options po;
  strata_png_options_init(&po);
  po.cmap = STRATA_CMAP_SEISMIC;
  po.title = "the 25-point Laplacian of a wave packet";
  po.value_name = "lap u";
  if (s == STRATA_OK) s = strata_field_save_png(out, png, &po);
  int rc = CLI_OK;
  if (s != STRATA_OK) {
    cli_err("demo: cannot write %s: %s", png, strata_context_error(ctx));
    rc = CLI_FAIL;
  } else {
    printf("\nwrote %s: the 25-point Laplacian of a wave packet, slice z = "
           "%zu of %zu^3\n", png, m / 2, m);
  }
  strata_field_destroy(&in);
  strata_field_destroy(&out);
  return rc;
}

int cli_demo(int argc, char **argv) {
  demo_args o;
  int done, rc = demo_parse(argc, argv, &o, &done);
  if (rc != CLI_OK || done) return rc;
  strata_context *ctx = cli_context(o.be, 0, 0), *cpu = NULL;
  if (!ctx) return CLI_FAIL;
  strata_backend kind = strata_context_backend(ctx);
  demo_header(ctx, o.be);
  size_t n = o.size ? (size_t)o.size : kind == STRATA_BACKEND_CUDA ? 256 : 192;
  size_t es = (size_t)o.prec, n3[3] = {n, n, n};
  double copy_pts = 0;
  if (cli_copy_rate(ctx, n3, o.prec, &copy_pts)) {
    strata_context_destroy(&ctx);
    return CLI_FAIL;
  }
  printf("grid:    %zu^3 %s, copy ceiling %.2f Gpts/s = %.1f GB/s\n\n", n,
         o.prec == STRATA_F32 ? "fp32" : "fp64", copy_pts * 1e-9,
         copy_pts * 2 * es * 1e-9);

  demo_op ops[5];
  demo_ops(ops);
  printf("%-24s %9s %9s %8s %7s  %s\n", "operator", "Gpts/s", "GB/s", "% copy",
         "B/pt", kind == STRATA_BACKEND_CUDA ? "check vs CPU" : "check");
  double worst = 0; /* the fastest operator over the copy */
  const char *worst_name = "";
  for (int i = 0; i < 5 && rc == CLI_OK; i++) {
    double pts = demo_row(ctx, &cpu, &ops[i], i, n, o.prec, copy_pts, &rc);
    if (pts > 0 && pts / copy_pts > worst) {
      worst = pts / copy_pts;
      worst_name = ops[i].name;
    }
  }
  char warn[512];
  double copy_gbs = copy_pts * 2 * es * 1e-9;
  if (rc == CLI_OK &&
      strata_bench_ceiling_suspect(copy_gbs, worst, worst_name, 2.0 * es,
                                   kind == STRATA_BACKEND_CPU, warn,
                                   sizeof warn)) {
    fflush(stdout);
    cli_err("demo: warning: %s", warn);
  }
  if (rc == CLI_OK && o.png) rc = demo_picture(ctx, &ops[2].op, n, o.prec, o.png);
  strata_context_destroy(&cpu);
  strata_context_destroy(&ctx);
  return rc;
}
