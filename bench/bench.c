/* Operator benchmark: the machine's copy ceiling and every operator x
 * variant x precision, each checked against the CPU engine before it is
 * timed.  Reports Gpts/s, GB/s at the minimum footprint (each point read
 * once and written once: 8 bytes per point in fp32, 16 in fp64), percent of
 * the copy kernel on the same fields (timed in alternation with the
 * operator, sample by sample: the median of the per-sample ratios), and the
 * effective bytes per point (the copy's bandwidth times the operator's time
 * per point).  Warns when the copy cannot be the ceiling: too slow for any
 * memory, or beaten by an operator by more than noise allows
 * (strata_bench_ceiling_suspect). */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "bench_chart.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strata.h"
#include "../src/core/text.h" /* json_string: the device's name as JSON */

typedef struct {
  const char *name; /* what the table shows */
  const char *key;  /* what --ops takes */
  int dims;
  strata_stencil op;
} bench_op;

typedef struct {
  strata_backend backend;
  size_t sizes[8][3];
  int nsizes;
  int precisions[2];
  int nprec;
  const char *ops;      /* comma list of keys, NULL = all */
  const char *variants; /* "all", "auto" or a comma list */
  int samples;
  double min_batch_s;
  const char *csv, *json, *png;
  const char *tuning; /* the context's tuning switches (docs/tuning.md) */
  int quick;
} bench_cfg;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int make_ops(bench_op *ops) {
  int n = 0;
  const double h = 1.0;
  ops[n] = (bench_op){"7-point (laplacian2)", "7pt", 3, {0}};
  strata_stencil_laplacian(&ops[n++].op, 3, 2, h);
  ops[n] = (bench_op){"27-point symmetric (FE)", "sym27", 3, {0}};
  strata_stencil_box_symmetric(&ops[n++].op, 8.0 / 3, 0, -1.0 / 6, -1.0 / 12);
  ops[n] = (bench_op){"27-point general", "box27", 3, {0}};
  {
    double K[27];
    for (int q = 0; q < 27; q++) K[q] = 0.01 * (q + 1) * (q % 2 ? -1 : 1);
    strata_stencil_box(&ops[n++].op, 3, K);
  }
  ops[n] = (bench_op){"25-point star (laplacian8)", "25pt", 3, {0}};
  strata_stencil_laplacian(&ops[n++].op, 3, 8, h);
  for (int a = 0; a < 3; a++) {
    static const char *names[] = {"d/dx order 8", "d/dy order 8",
                                  "d/dz order 8"};
    static const char *keys[] = {"dx", "dy", "dz"};
    ops[n] = (bench_op){names[a], keys[a], 3, {0}};
    strata_stencil_derivative(&ops[n++].op, 3, a, 8, h);
  }
  ops[n] = (bench_op){"2D 5-point", "5pt", 2, {0}};
  strata_stencil_laplacian(&ops[n++].op, 2, 2, h);
  return n;
}

static int in_list(const char *list, const char *key) {
  if (!list) return 1;
  size_t k = strlen(key);
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == k && strncmp(p, key, k) == 0) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

static void usage(FILE *o) {
  fprintf(o,
          "usage: strata bench [options]\n"
          "  Times the copy ceiling and every operator x variant x precision,\n"
          "  after checking each against the CPU engine.\n"
          "options:\n"
          "  --backend auto|cpu|cuda   engine (default auto)\n"
          "  --size NXxNYxNZ           3D grid (repeatable; default 512^3 on\n"
          "                            CUDA also 1024x512x256; 2D operators run\n"
          "                            on NX x (NY*NZ))\n"
          "  --precision f32|f64|both  (default both)\n"
          "  --ops LIST                comma list of 7pt,sym27,box27,25pt,dx,dy,\n"
          "                            dz,5pt (default all)\n"
          "  --variants all|auto|LIST  kernel variants (default all)\n"
          "  --samples N               timed samples, the median is kept (default 7)\n"
          "  --quick                   small grid, few samples (about a minute)\n"
          "  --tuning STRING           engine tuning switches KEY=VALUE,...\n"
          "                            (docs/tuning.md)\n"
          "  --csv FILE, --json FILE   also write the table\n"
          "  --png FILE                and a bar chart of %% of copy\n");
}

static int parse_size(const char *s, size_t out[3]) {
  unsigned long a, b, c;
  char tail;
  if (sscanf(s, "%lux%lux%lu%c", &a, &b, &c, &tail) != 3) return -1;
  if (a < 8 || b < 8 || c < 8 || a > 1u << 16 || b > 1u << 16 || c > 1u << 16)
    return -1;
  out[0] = a;
  out[1] = b;
  out[2] = c;
  return 0;
}

static int parse_args(int argc, char **argv, bench_cfg *c) {
  memset(c, 0, sizeof *c);
  c->backend = STRATA_BACKEND_AUTO;
  c->precisions[0] = STRATA_F32;
  c->precisions[1] = STRATA_F64;
  c->nprec = 2;
  c->variants = "all";
  c->samples = 7;
  c->min_batch_s = 0.05;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED()                                                                 \
  do {                                                                         \
    if (!v) {                                                                  \
      fprintf(stderr, "strata bench: %s needs a value\n", a);                  \
      return 2;                                                                \
    }                                                                          \
    i++;                                                                       \
  } while (0)
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 1;
    } else if (!strcmp(a, "--backend")) {
      NEED();
      if (strata_backend_parse(v, &c->backend) != STRATA_OK) {
        fprintf(stderr, "strata bench: unknown backend '%s' (auto, cpu, cuda)\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--size")) {
      NEED();
      if (c->nsizes == 8 || parse_size(v, c->sizes[c->nsizes])) {
        fprintf(stderr, "strata bench: bad size '%s' (NXxNYxNZ, each 8..65536, "
                "at most 8 sizes)\n", v);
        return 2;
      }
      c->nsizes++;
    } else if (!strcmp(a, "--precision")) {
      NEED();
      if (!strcmp(v, "f32")) {
        c->precisions[0] = STRATA_F32;
        c->nprec = 1;
      } else if (!strcmp(v, "f64")) {
        c->precisions[0] = STRATA_F64;
        c->nprec = 1;
      } else if (strcmp(v, "both")) {
        fprintf(stderr, "strata bench: precision '%s' is not f32, f64 or both\n", v);
        return 2;
      }
    } else if (!strcmp(a, "--ops")) {
      NEED();
      c->ops = v;
    } else if (!strcmp(a, "--variants")) {
      NEED();
      c->variants = v;
    } else if (!strcmp(a, "--samples")) {
      NEED();
      c->samples = atoi(v);
      if (c->samples < 1 || c->samples > 1000) {
        fprintf(stderr, "strata bench: samples must be 1..1000\n");
        return 2;
      }
    } else if (!strcmp(a, "--quick")) {
      c->quick = 1;
    } else if (!strcmp(a, "--tuning")) {
      NEED();
      c->tuning = v;
    } else if (!strcmp(a, "--csv")) {
      NEED();
      c->csv = v;
    } else if (!strcmp(a, "--json")) {
      NEED();
      c->json = v;
    } else if (!strcmp(a, "--png")) {
      NEED();
      c->png = v;
    } else {
      fprintf(stderr, "strata bench: unknown option '%s' (see --help)\n", a);
      return 2;
    }
#undef NEED
  }
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median seconds per call of fn over cfg->samples batches.  With a
 * reference (ref != NULL), each sample also times a batch of ref just
 * before, and *ratio receives the median of t_ref / t_fn over the samples:
 * measured side by side, the ratio is immune to the slow drifts of a shared
 * machine's bandwidth. */
typedef strata_status (*bench_fn)(void *arg);
static strata_status batch_size(strata_context *ctx, bench_fn fn, void *arg,
                                const bench_cfg *cfg, int *batch) {
  strata_status s;
  /* warm-up, and an estimate of one call */
  for (int w = 0; w < 2; w++)
    if ((s = fn(arg)) != STRATA_OK) return s;
  if ((s = strata_context_sync(ctx)) != STRATA_OK) return s;
  double t0 = now();
  if ((s = fn(arg)) != STRATA_OK) return s;
  if ((s = strata_context_sync(ctx)) != STRATA_OK) return s;
  double one = now() - t0;
  *batch = one > 0 ? (int)(cfg->min_batch_s / one) : 1;
  if (*batch < 1) *batch = 1;
  if (*batch > 1000) *batch = 1000;
  return STRATA_OK;
}

static strata_status time_batch(strata_context *ctx, bench_fn fn, void *arg,
                                int batch, double *t) {
  strata_status s;
  double t0 = now();
  for (int b = 0; b < batch; b++)
    if ((s = fn(arg)) != STRATA_OK) return s;
  if ((s = strata_context_sync(ctx)) != STRATA_OK) return s;
  *t = (now() - t0) / batch;
  return STRATA_OK;
}

static strata_status time_median(strata_context *ctx, bench_fn fn, void *arg,
                                 bench_fn ref, void *ref_arg,
                                 const bench_cfg *cfg, double *out,
                                 double *ratio) {
  strata_status s;
  int batch = 1, rbatch = 1;
  if ((s = batch_size(ctx, fn, arg, cfg, &batch)) != STRATA_OK) return s;
  if (ref && (s = batch_size(ctx, ref, ref_arg, cfg, &rbatch)) != STRATA_OK)
    return s;
  double t[1000], q[1000];
  for (int r = 0; r < cfg->samples; r++) {
    double tr = 0;
    if (ref && (s = time_batch(ctx, ref, ref_arg, rbatch, &tr)) != STRATA_OK)
      return s;
    if ((s = time_batch(ctx, fn, arg, batch, &t[r])) != STRATA_OK) return s;
    q[r] = tr / t[r];
  }
  qsort(t, (size_t)cfg->samples, sizeof(double), cmp_double);
  qsort(q, (size_t)cfg->samples, sizeof(double), cmp_double);
  *out = t[cfg->samples / 2];
  if (ratio) *ratio = q[cfg->samples / 2];
  return STRATA_OK;
}

typedef struct {
  const strata_stencil *op;
  const strata_field *in;
  strata_field *out;
  strata_apply_options opt;
  const char *copy_variant;
} call_arg;

static strata_status call_apply(void *p) {
  call_arg *a = p;
  return strata_apply(a->op, a->in, a->out, &a->opt);
}
static strata_status call_copy(void *p) {
  call_arg *a = p;
  return strata_copy_kernel(a->in, a->out, a->copy_variant);
}

/* Checks variant against the CPU engine on a small odd-sized grid: every
 * point within 2 (points + 2) eps sum|w| max|in| (two roundings bounded by
 * the classical dot-product bound). */
static int check_variant(strata_context *ctx, strata_context *cpu,
                         const bench_op *bo, strata_precision p,
                         const char *variant, double *err_out) {
  size_t n[3] = {67, 45, bo->dims == 3 ? 38 : 1};
  strata_field_desc d = {bo->dims, {n[0], n[1], n[2]}, 4, p};
  strata_field *gi = NULL, *go = NULL, *ci = NULL, *co = NULL;
  int rc = 1;
  strata_boundary bc;
  strata_boundary_uniform(&bc, STRATA_BC_PERIODIC, 0);
  strata_apply_options opt = {variant, {0, 0, 0}};
  if (strata_field_create(ctx, &d, &gi) || strata_field_create(ctx, &d, &go) ||
      strata_field_create(cpu, &d, &ci) || strata_field_create(cpu, &d, &co) ||
      strata_field_fill_random(gi, 42, -1, 1) ||
      strata_field_fill_random(ci, 42, -1, 1) ||
      strata_field_fill_ghosts(gi, &bc) || strata_field_fill_ghosts(ci, &bc) ||
      strata_field_fill(go, NAN) || strata_apply(&bo->op, gi, go, &opt) ||
      strata_apply(&bo->op, ci, co, NULL)) {
    fprintf(stderr, "strata bench: check of %s/%s failed: %s %s\n", bo->key,
            variant, strata_context_error(ctx), strata_context_error(cpu));
    goto done;
  }
  {
    double *a = malloc(n[0] * n[1] * n[2] * sizeof(double));
    double *b = malloc(n[0] * n[1] * n[2] * sizeof(double));
    size_t cnt = n[0] * n[1] * n[2];
    int ok = a && b;
    if (ok && p == STRATA_F32) {
      float *fa = (float *)a, *fb = (float *)b;
      ok = !strata_field_read(go, fa) && !strata_field_read(co, fb);
      for (size_t i = cnt; ok && i-- > 0;) {
        a[i] = fa[i];
        b[i] = fb[i];
      }
    } else if (ok) {
      ok = !strata_field_read(go, a) && !strata_field_read(co, b);
    }
    double wsum = 0, err = 0;
    const strata_stencil *s = &bo->op;
    wsum = fabs(s->center);
    for (int ax = 0; ax < 3; ax++)
      for (int k = 1; k <= STRATA_MAX_RADIUS; k++) wsum += 2 * fabs(s->coef[ax][k]);
    for (int q = 0; q < 27; q++) wsum += fabs(s->box[q]);
    wsum += fabs(s->sym[0]) + 6 * fabs(s->sym[1]) + 12 * fabs(s->sym[2]) +
            8 * fabs(s->sym[3]);
    double tol = 2.0 * (strata_stencil_points(s) + 2) *
                 (p == STRATA_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2) * wsum;
    for (size_t i = 0; ok && i < cnt; i++) {
      double e = fabs(a[i] - b[i]);
      if (!(e <= err)) err = e; /* NaN sticks */
    }
    free(a);
    free(b);
    *err_out = err;
    if (!ok || !(err <= tol)) {
      fprintf(stderr, "strata bench: %s variant %s (%s) differs from the CPU "
              "engine by %.3g (bound %.3g)\n", bo->key, variant,
              p == STRATA_F32 ? "f32" : "f64", err, tol);
      goto done;
    }
  }
  rc = 0;
done:
  strata_field_destroy(&gi);
  strata_field_destroy(&go);
  strata_field_destroy(&ci);
  strata_field_destroy(&co);
  return rc;
}

typedef struct {
  char op[40], variant[32];
  int prec;
  size_t n[3];
  double t, gpts, gbs, pct, bpp, err;
} row;

/* Whether variant v is built and applies to op on ctx. */
static int variant_listed(strata_context *ctx, const strata_stencil *op,
                          const char *v) {
  char buf[512];
  if (strata_variants(ctx, op, buf, sizeof buf) != STRATA_OK) return 0;
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
    if (!strcmp(t, v)) return 1;
  return 0;
}

/* The state one run of the benchmark shares between its parts. */
typedef struct {
  bench_cfg *cfg;
  strata_context *ctx, *cpu;
  bench_op *ops;
  int nops, on_cpu;
  const char **copies;
  row *rows;
  int nrows, failures;
} bench_run;

/* One grid size in one precision: the copies, then every operator and
 * variant asked for, each checked on the CPU before it is timed. */
static void bench_size(bench_run *B, const size_t *n, strata_precision p) {
  bench_cfg cfg = *B->cfg;
  strata_context *ctx = B->ctx, *cpu = B->cpu;
  bench_op *ops = B->ops;
  const char **copies = B->copies;
  row *rows = B->rows;
  int on_cpu = B->on_cpu, nops = B->nops;
  strata_status s;
  size_t npts = n[0] * n[1] * n[2];
  double bpp_min = 2.0 * (double)p;
  /* one pair of fields per dimensionality, ghost 4 for every operator */
  strata_field *in3 = NULL, *out3 = NULL, *in2 = NULL, *out2 = NULL;
  strata_field_desc d3 = {3, {n[0], n[1], n[2]}, 4, p};
  strata_field_desc d2 = {2, {n[0], n[1] * n[2], 1}, 4, p};
  strata_boundary bc;
  strata_boundary_uniform(&bc, STRATA_BC_PERIODIC, 0);
  if ((s = strata_field_create(ctx, &d3, &in3)) ||
      (s = strata_field_create(ctx, &d3, &out3)) ||
      (s = strata_field_fill_random(in3, 1, -1, 1)) ||
      (s = strata_field_fill_ghosts(in3, &bc))) {
    fprintf(stderr, "strata bench: %zux%zux%zu %s: %s\n", n[0], n[1], n[2],
            p == STRATA_F32 ? "f32" : "f64", strata_context_error(ctx));
    B->failures++;
    strata_field_destroy(&in3);
    strata_field_destroy(&out3);
    return;
  }
  printf("\n== %zux%zux%zu %s (%.2f GB per field) ==\n", n[0], n[1], n[2],
         p == STRATA_F32 ? "fp32" : "fp64", npts * (double)p / 1e9);
  printf("%-28s %-14s %9s %9s %8s %8s\n", "operator", "variant", "Gpts/s",
         "GB/s", "% copy", "B/pt");
  double t_copy = 0, worst = 0, worst_copy_gbs = 0;
  char worst_name[80] = "";
  for (int ci = 0; copies[ci]; ci++) {
    call_arg ca = {NULL, in3, out3, {NULL, {0, 0, 0}}, copies[ci]};
    double t;
    s = time_median(ctx, call_copy, &ca, NULL, NULL, &cfg, &t, NULL);
    if (s != STRATA_OK) {
      fprintf(stderr, "strata bench: copy %s: %s\n", copies[ci],
              strata_context_error(ctx));
      B->failures++;
      continue;
    }
    if (ci == 0) t_copy = t;
    row *r = &rows[B->nrows++];
    snprintf(r->op, sizeof r->op, "copy");
    snprintf(r->variant, sizeof r->variant, "%s", copies[ci]);
    r->prec = (int)p;
    memcpy(r->n, n, sizeof r->n);
    r->t = t;
    r->gpts = npts / t / 1e9;
    r->gbs = npts * bpp_min / t / 1e9;
    r->pct = 100.0 * t_copy / t;
    r->bpp = bpp_min * t / t_copy;
    printf("%-28s %-14s %9.2f %9.1f %7.1f%% %8.2f\n", r->op, r->variant,
           r->gpts, r->gbs, r->pct, r->bpp);
    fflush(stdout);
  }
  if (t_copy <= 0) {
    strata_field_destroy(&in3);
    strata_field_destroy(&out3);
    return;
  }
  for (int q = 0; q < nops; q++) {
    if (!in_list(cfg.ops, ops[q].key)) continue;
    strata_field *in = in3, *out = out3;
    if (ops[q].dims == 2) {
      if (!in2) {
        strata_field_destroy(&in3); /* keep the memory footprint */
        strata_field_destroy(&out3);
        if ((s = strata_field_create(ctx, &d2, &in2)) ||
            (s = strata_field_create(ctx, &d2, &out2)) ||
            (s = strata_field_fill_random(in2, 1, -1, 1)) ||
            (s = strata_field_fill_ghosts(in2, &bc))) {
          fprintf(stderr, "strata bench: 2D field: %s\n",
                  strata_context_error(ctx));
          B->failures++;
          break;
        }
      }
      in = in2;
      out = out2;
    } else if (!in3) {
      continue;
    }
    char list[512] = "auto";
    if (!strcmp(cfg.variants, "all"))
      strata_variants(ctx, &ops[q].op, list, sizeof list);
    else if (strcmp(cfg.variants, "auto"))
      snprintf(list, sizeof list, "%s", cfg.variants);
    char *save = NULL;
    for (char *v = strtok_r(list, ",", &save); v;
         v = strtok_r(NULL, ",", &save)) {
      double err = 0;
      if (check_variant(ctx, cpu, &ops[q], p, v, &err)) {
        B->failures++;
        continue;
      }
      call_arg ca = {&ops[q].op, in, out, {v, {0, 0, 0}}, NULL};
      /* the copy ceiling on the same fields, timed side by side */
      call_arg cc = {NULL, in, out, {NULL, {0, 0, 0}}, copies[0]};
      double t, ratio = 1;
      s = time_median(ctx, call_apply, &ca, call_copy, &cc, &cfg, &t,
                      &ratio);
      if (s != STRATA_OK) {
        fprintf(stderr, "strata bench: %s/%s: %s\n", ops[q].key, v,
                strata_context_error(ctx));
        B->failures++;
        continue;
      }
      row *r = &rows[B->nrows++];
      snprintf(r->op, sizeof r->op, "%s", ops[q].name);
      snprintf(r->variant, sizeof r->variant, "%s", v);
      r->prec = (int)p;
      memcpy(r->n, n, sizeof r->n);
      r->t = t;
      r->gpts = npts / t / 1e9;
      r->gbs = npts * bpp_min / t / 1e9;
      r->pct = 100.0 * ratio;
      r->bpp = bpp_min / ratio;
      r->err = err;
      printf("%-28s %-14s %9.2f %9.1f %7.1f%% %8.2f\n", r->op, r->variant,
             r->gpts, r->gbs, r->pct, r->bpp);
      fflush(stdout);
      if (ratio > worst) {
        worst = ratio;
        worst_copy_gbs = r->gbs / ratio; /* the copy beside it */
        snprintf(worst_name, sizeof worst_name, "%s/%s", r->op, v);
      }
    }
  }
  /* the copy ceiling itself, then the operator that beat it most
   * against the copy timed beside it */
  char warn[512];
  if (strata_bench_ceiling_suspect(npts * bpp_min / t_copy / 1e9, 0, "",
                                   0, on_cpu, warn, sizeof warn) ||
      strata_bench_ceiling_suspect(worst_copy_gbs, worst, worst_name,
                                   bpp_min, on_cpu, warn, sizeof warn)) {
    fflush(stdout);
    fprintf(stderr, "strata bench: warning: %s\n", warn);
  }
  strata_field_destroy(&in3);
  strata_field_destroy(&out3);
  strata_field_destroy(&in2);
  strata_field_destroy(&out2);
}

/* The rows as CSV, JSON and a chart, as asked. */
static void bench_outputs(bench_run *B, const strata_device_info *info) {
  bench_cfg cfg = *B->cfg;
  strata_context *ctx = B->ctx;
  const row *rows = B->rows;
  const int nrows = B->nrows;
  if (cfg.csv && rows) {
    FILE *f = fopen(cfg.csv, "w");
    if (!f) {
      fprintf(stderr, "strata bench: cannot write %s\n", cfg.csv);
      B->failures++;
    } else {
      fprintf(f, "operator,variant,precision,nx,ny,nz,seconds,gpts_per_s,"
                 "gb_per_s,percent_of_copy,bytes_per_point,check_error\n");
      for (int i = 0; i < nrows; i++)
        fprintf(f, "\"%s\",%s,%s,%zu,%zu,%zu,%.6e,%.4f,%.3f,%.2f,%.3f,%.3e\n",
                rows[i].op, rows[i].variant, rows[i].prec == 4 ? "f32" : "f64",
                rows[i].n[0], rows[i].n[1], rows[i].n[2], rows[i].t,
                rows[i].gpts, rows[i].gbs, rows[i].pct, rows[i].bpp,
                rows[i].err);
      fclose(f);
    }
  }
  if (cfg.json && rows) {
    FILE *f = fopen(cfg.json, "w");
    if (!f) {
      fprintf(stderr, "strata bench: cannot write %s\n", cfg.json);
      B->failures++;
    } else {
      fprintf(f, "{\"backend\": \"%s\", \"device\": ",
              strata_backend_name(strata_context_backend(ctx)));
      json_string(f, info->name);
      fprintf(f, ", \"rows\": [\n");
      for (int i = 0; i < nrows; i++)
        fprintf(f, "  {\"operator\": \"%s\", \"variant\": \"%s\", "
                   "\"precision\": \"%s\", \"size\": [%zu, %zu, %zu], "
                   "\"seconds\": %.6e, \"gpts_per_s\": %.4f, \"gb_per_s\": "
                   "%.3f, \"percent_of_copy\": %.2f, \"bytes_per_point\": "
                   "%.3f}%s\n",
                rows[i].op, rows[i].variant, rows[i].prec == 4 ? "f32" : "f64",
                rows[i].n[0], rows[i].n[1], rows[i].n[2], rows[i].t,
                rows[i].gpts, rows[i].gbs, rows[i].pct, rows[i].bpp,
                i + 1 < nrows ? "," : "");
      fprintf(f, "]}\n");
      fclose(f);
    }
  }
  if (cfg.png && rows && nrows > 0) {
    bench_chart_row *cr = calloc((size_t)nrows, sizeof *cr);
    char title[256];
    snprintf(title, sizeof title, "strata bench: %s (%s)",
             strata_backend_name(strata_context_backend(ctx)), info->name);
    for (int i = 0; cr && i < nrows; i++)
      cr[i] = (bench_chart_row){rows[i].op, rows[i].variant,
                                rows[i].prec == 8, !strcmp(rows[i].op, "copy"),
                                rows[i].pct};
    if (!cr || strata_bench_chart(ctx, cfg.png, title, cr, nrows)) {
      fprintf(stderr, "strata bench: cannot write %s: %s\n", cfg.png,
              strata_context_error(ctx));
      B->failures++;
    }
    free(cr);
  }
}

int strata_bench_main(int argc, char **argv) {
  bench_cfg cfg;
  int rc = parse_args(argc, argv, &cfg);
  if (rc) return rc == 1 ? 0 : rc;
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = cfg.backend;
  o.tuning = cfg.tuning;
  char why[512] = "";
  o.errbuf = why;
  o.errbuf_size = sizeof why;
  strata_context *ctx = NULL, *cpu = NULL;
  strata_status s = strata_context_create(&ctx, &o);
  if (s != STRATA_OK) {
    fprintf(stderr, "strata bench: %s: %s\n", strata_strerror(s), why);
    return 1;
  }
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  if (strata_context_create(&cpu, &o) != STRATA_OK) {
    strata_context_destroy(&ctx);
    return 1;
  }
  int on_cpu = strata_context_backend(ctx) == STRATA_BACKEND_CPU;
  if (cfg.nsizes == 0) {
    if (cfg.quick) {
      size_t q[3] = {256, 256, on_cpu ? 128 : 256};
      memcpy(cfg.sizes[cfg.nsizes++], q, sizeof q);
    } else {
      size_t a[3] = {512, 512, 512};
      memcpy(cfg.sizes[cfg.nsizes++], a, sizeof a);
      if (!on_cpu) {
        size_t b[3] = {1024, 512, 256};
        memcpy(cfg.sizes[cfg.nsizes++], b, sizeof b);
      }
    }
  }
  if (cfg.quick && cfg.samples > 3) cfg.samples = 3;
  strata_device_info info;
  strata_context_device_info(ctx, &info);
  printf("strata bench: backend %s, device %s, %s\n",
         strata_backend_name(strata_context_backend(ctx)), info.name,
         strata_build_info());
  bench_op ops[16];
  int nops = make_ops(ops);
  row *rows = calloc(4096, sizeof(row));
  const char *copies_cpu[] = {"copy", NULL};
  const char *copies_gpu[] = {"copycube", "copycube_halo", NULL};
  const char **copies = on_cpu ? copies_cpu : copies_gpu;
  /* copycube_halo is built with the seeds' strategies (kd's reads) */
  if (!on_cpu && !variant_listed(ctx, &ops[0].op, "kd")) copies_gpu[1] = NULL;

  bench_run B = {&cfg, ctx, cpu, ops, nops, on_cpu, copies, rows, 0, 0};
  for (int si = 0; si < cfg.nsizes && rows; si++)
    for (int pi = 0; pi < cfg.nprec; pi++)
      bench_size(&B, cfg.sizes[si], (strata_precision)cfg.precisions[pi]);
  bench_outputs(&B, &info);
  int failures = B.failures;
  free(rows);
  strata_context_destroy(&cpu);
  strata_context_destroy(&ctx);
  if (failures) {
    fprintf(stderr, "strata bench: %d failure(s)\n", failures);
    return 1;
  }
  return 0;
}
