/* The multigrid Poisson solver.
 *
 *  - the backend's four multigrid kernels against plain long-double
 *    references on random data (ghosts random, outputs poisoned with NaN),
 *    odd sizes, fp32 and fp64, 2D and 3D, every stencil shape, on the CPU
 *    and (when present) CUDA;
 *  - manufactured solutions: the discretisation error falls at second
 *    order in h (FD and FE, 2D and 3D, Dirichlet with nonzero values,
 *    Neumann, periodic, and the all-Neumann/periodic singular case);
 *  - the reference setting (strata_mg_options_seed004) on the FE stencil:
 *    the residual factor per V-cycle and the machine-precision level in
 *    fp32 within about 7 cycles;
 *  - the solver's reported residual against one computed independently
 *    (strata_apply of the stencil, host arithmetic);
 *  - odd sizes and every boundary mix converge; F-, W-cycles and FMG;
 *  - incompatible sources on singular problems refused (or projected);
 *  - bad input refused, touching nothing;
 *  - CPU and CUDA agree to rounding (skips without a GPU). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "reference.h"
#include "runner.h"

static strata_context *make_ctx(strata_backend b) {
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = b;
  o.tune_cache = "";
  strata_context *ctx = NULL;
  if (strata_context_create(&ctx, &o) != STRATA_OK) return NULL;
  return ctx;
}

static int have_cuda(char *why, size_t n) {
  return strata_backend_available(STRATA_BACKEND_CUDA, why, n);
}

/* uniform in [-1, 1) from a counter */
static double urand(uint64_t seed, uint64_t i) {
  return 2 * strata__rand01(seed, i) - 1;
}

/* ======================================================================== */
/* Kernels against plain references                                          */
/* ======================================================================== */

/* Index of (i,j,k) (ghost indices allowed) in a dense ghosted array. */
static size_t gidx(const strata_field_desc *d, long i, long j, long k) {
  long g[3];
  for (int a = 0; a < 3; a++) g[a] = a < d->dims ? d->ghost : 0;
  long gx = (long)d->n[0] + 2 * g[0], gy = (long)d->n[1] + 2 * g[1];
  return (size_t)((i + g[0]) + gx * ((j + g[1]) + gy * (k + g[2])));
}

/* Stencil weight of offset (dx,dy,dz) for the level operator. */
static double op_weight(const strata__mg_op *op, int dx, int dy, int dz) {
  int m = abs(dx) + abs(dy) + abs(dz);
  return op->c[m];
}

static int check_sweep_case(strata_context *ctx, const strata__mg_op *op,
                            const size_t n[3], strata_precision p, int mode,
                            uint64_t seed) {
  int rc = 1, dims = op->dims;
  strata_field_desc du = {dims, {n[0], n[1], n[2]}, 1, p};
  strata_field_desc db = {dims, {n[0], n[1], n[2]}, 2, p}; /* other layout */
  strata_field *u = NULL, *b = NULL, *out = NULL;
  double *gu = NULL, *gb = NULL, *go = NULL;
  if (strata_field_create(ctx, &du, &u) || strata_field_create(ctx, &db, &b) ||
      strata_field_create(ctx, &du, &out))
    goto done;
  CHECK_OK(strata_field_fill_random(u, seed, -1, 1), ctx);
  CHECK_OK(strata_field_fill_random(b, seed + 1, -1, 1), ctx);
  CHECK_OK(strata_field_fill(out, NAN), ctx);
  double bs = 0.3 + 0.5 * strata__rand01(seed, 1),
         bsh = 0.1 * urand(seed, 2), cu = mode == 0 ? 1.0 : 0.0,
         cr = mode == 0 ? 0.8 + 0.3 * strata__rand01(seed, 3) : 1.0;
  double res2 = -1;
  strata__mg_sweep_args a = {*op, u, b, mode == 2 ? NULL : out, bs, bsh, cu,
                             cr, mode == 0 ? NULL : &res2};
  CHECK_OK(ctx->be->mg_sweep(&a), ctx);
  gu = ref_read(u, 1);
  gb = ref_read(b, 1);
  go = ref_read(out, 1);
  if (!gu || !gb || !go) goto done;
  double eps = ref_eps(p), worst = 0;
  long double r2 = 0, r2mag = 0;
  int zr = dims == 3 ? 1 : 0;
  for (long k = 0; k < (long)n[2]; k++)
    for (long j = 0; j < (long)n[1]; j++)
      for (long i = 0; i < (long)n[0]; i++) {
        long double su = 0, mag = 0;
        for (int dz = -zr; dz <= zr; dz++)
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
              long double w = op_weight(op, dx, dy, dz);
              long double v = gu[gidx(&du, i + dx, j + dy, k + dz)];
              su += w * v;
              mag += fabsl(w * v);
            }
        long double bv = gb[gidx(&db, i, j, k)];
        long double res = (long double)bs * (bv + bsh) - su;
        long double resmag = fabsl((long double)bs * (fabsl(bv) + fabsl(bsh))) + mag;
        long double uv = gu[gidx(&du, i, j, k)];
        long double want = cu * uv + cr * res;
        long double wmag = fabsl(cu * uv) + fabsl(cr) * resmag;
        r2 += res * res;
        r2mag += resmag * resmag;
        if (mode != 2) {
          double got = go[gidx(&du, i, j, k)];
          double e = fabs(got - (double)want) / (40 * eps * (double)wmag + 1e-300);
          if (!(e <= worst)) worst = e;
        }
      }
  CHECKF(worst <= 1, "sweep %dD shape c=(%g,%g,%g,%g) mode %d: error %.3g of "
         "the bound", dims, op->c[0], op->c[1], op->c[2], op->c[3], mode,
         worst);
  if (mode != 0) {
    double e = fabs(res2 - (double)r2) / (80 * eps * (double)r2mag);
    CHECKF(e <= 1, "sweep norm: got %.10g want %.10g (%.3g of the bound)",
           res2, (double)r2, e);
  }
  /* out's ghosts untouched; with mode 2 nothing written at all */
  {
    long g = 1, zg = dims == 3 ? 1 : 0;
    for (long k = -zg; k < (long)n[2] + zg; k++)
      for (long j = -g; j < (long)n[1] + g; j++)
        for (long i = -g; i < (long)n[0] + g; i++) {
          int ghost = i < 0 || j < 0 || k < 0 || i >= (long)n[0] ||
                      j >= (long)n[1] || k >= (long)n[2];
          if (ghost || mode == 2)
            CHECKF(isnan(go[gidx(&du, i, j, k)]),
                   "sweep wrote point (%ld,%ld,%ld) it must not", i, j, k);
        }
  }
  rc = 0;
done:
  strata_field_destroy(&u);
  strata_field_destroy(&b);
  strata_field_destroy(&out);
  free(gu);
  free(gb);
  free(go);
  return rc;
}

static int check_ghost_case(strata_context *ctx, int dims, const size_t n[3],
                            int ghost, strata_precision p, uint64_t seed) {
  int rc = 1;
  strata_field_desc d = {dims, {n[0], n[1], n[2]}, ghost, p};
  strata_field *f = ref_random_field(ctx, dims, n[0], n[1], n[2], ghost, p,
                                     seed);
  double *before = NULL, *after = NULL;
  if (!f) return 1;
  strata__mg_ghost g;
  for (int a = 0; a < 3; a++) {
    int periodic = strata__rand01(seed, 10 + a) < 0.3;
    for (int s = 0; s < 2; s++) {
      int face = 2 * a + s;
      g.kind[face] = periodic ? STRATA__MG_PERIODIC
                     : strata__rand01(seed, 20 + face) < 0.5
                         ? STRATA__MG_MIRROR
                         : STRATA__MG_LINEAR;
      g.alpha[face] = urand(seed, 30 + face);
    }
  }
  before = ref_read(f, 1);
  CHECK_OK(ctx->be->mg_ghosts(f, &g), ctx);
  after = ref_read(f, 1);
  if (!before || !after) goto done;
  long gg[3], lo[3], hi[3];
  for (int a = 0; a < 3; a++) {
    gg[a] = a < dims ? ghost : 0;
    lo[a] = -gg[a];
    hi[a] = (long)n[a] + gg[a];
  }
  double eps = ref_eps(p);
  for (long k = lo[2]; k < hi[2]; k++)
    for (long j = lo[1]; j < hi[1]; j++)
      for (long i = lo[0]; i < hi[0]; i++) {
        long idx[3] = {i, j, k};
        int layer1 = 1, inside = 1;
        for (int a = 0; a < dims; a++) {
          if (idx[a] < -1 || idx[a] > (long)n[a]) layer1 = 0;
          if (idx[a] < 0 || idx[a] >= (long)n[a]) inside = 0;
        }
        double got = after[gidx(&d, i, j, k)];
        if (inside || !layer1) {
          /* interior and deeper ghost layers: untouched, bit for bit */
          CHECKF(memcmp(&got, &before[gidx(&d, i, j, k)], sizeof got) == 0,
                 "mg_ghosts changed point (%ld,%ld,%ld)", i, j, k);
          continue;
        }
        /* the rule, axis by axis (a tensor product: any order) */
        long src[3] = {i, j, k};
        double fac = 1;
        for (int a = 0; a < dims; a++) {
          long t = src[a], nn = (long)n[a];
          if (t >= 0 && t < nn) continue;
          int face = 2 * a + (t < 0 ? 0 : 1);
          if (g.kind[face] == STRATA__MG_PERIODIC)
            src[a] = t < 0 ? nn - 1 : 0;
          else {
            src[a] = t < 0 ? 0 : nn - 1;
            if (g.kind[face] == STRATA__MG_LINEAR) fac *= g.alpha[face];
          }
        }
        double want = fac * before[gidx(&d, src[0], src[1], src[2])];
        CHECKF(fabs(got - want) <= 4 * eps * fabs(want),
               "ghost (%ld,%ld,%ld): got %.9g want %.9g", i, j, k, got, want);
      }
  rc = 0;
done:
  strata_field_destroy(&f);
  free(before);
  free(after);
  return rc;
}

/* Random bands in backend memory. */
typedef struct {
  strata__mg_band b;
  int *hidx;
  double *hwt;
  void *didx, *dwt;
} test_band;

static int make_band(strata_context *ctx, test_band *tb, long nout, long nin,
                     int w, uint64_t seed) {
  memset(tb, 0, sizeof *tb);
  tb->hidx = malloc((size_t)(nout * w) * sizeof(int));
  tb->hwt = malloc((size_t)(nout * w) * sizeof(double));
  if (!tb->hidx || !tb->hwt) return 1;
  for (long q = 0; q < nout * w; q++) {
    tb->hidx[q] = (int)(strata__rand01(seed, 2 * q) * nin) % (int)nin;
    tb->hwt[q] = strata__rand01(seed, 2 * q + 1) < 0.15 ? 0 : urand(seed, 7 * q);
  }
  size_t bi = (size_t)(nout * w) * sizeof(int), bw = (size_t)(nout * w) * sizeof(double);
  if (ctx->be->alloc(ctx, bi, &tb->didx) || ctx->be->alloc(ctx, bw, &tb->dwt) ||
      ctx->be->from_host(ctx, tb->didx, tb->hidx, bi) ||
      ctx->be->from_host(ctx, tb->dwt, tb->hwt, bw))
    return 1;
  tb->b = (strata__mg_band){nout, w, tb->didx, tb->dwt};
  return 0;
}

static void free_band(strata_context *ctx, test_band *tb) {
  if (tb->didx) ctx->be->release(ctx, tb->didx);
  if (tb->dwt) ctx->be->release(ctx, tb->dwt);
  free(tb->hidx);
  free(tb->hwt);
}

static int check_transfer_case(strata_context *ctx, int dims,
                               const size_t nin[3], const size_t nout[3],
                               const int w[3], double beta,
                               strata_precision p, uint64_t seed) {
  int rc = 1;
  strata_field *in = NULL, *out = NULL;
  double *gi = NULL, *go = NULL, *gb = NULL;
  test_band tb[3];
  memset(tb, 0, sizeof tb);
  strata_field_desc di = {dims, {nin[0], nin[1], nin[2]}, 1, p};
  strata_field_desc dout = {dims, {nout[0], nout[1], nout[2]}, 2, p};
  in = ref_random_field(ctx, dims, nin[0], nin[1], nin[2], 1, p, seed);
  if (!in || strata_field_create(ctx, &dout, &out)) goto done;
  if (beta != 0)
    CHECK_OK(strata_field_fill_random(out, seed + 5, -1, 1), ctx);
  else
    CHECK_OK(strata_field_fill(out, NAN), ctx);
  gb = ref_read(out, 1);
  for (int a = 0; a < 3; a++)
    if (make_band(ctx, &tb[a], (long)nout[a], (long)nin[a], w[a], seed + 10 + a))
      goto done;
  double scale = 0.5 + strata__rand01(seed, 99);
  strata__mg_transfer_args t = {in, out, beta != 0 ? out : NULL, beta, scale,
                                {tb[0].b, tb[1].b, tb[2].b}};
  CHECK_OK(ctx->be->mg_transfer(&t), ctx);
  gi = ref_read(in, 1);
  go = ref_read(out, 1);
  if (!gi || !go || !gb) goto done;
  double eps = ref_eps(p), worst = 0;
  for (long K = 0; K < (long)nout[2]; K++)
    for (long J = 0; J < (long)nout[1]; J++)
      for (long I = 0; I < (long)nout[0]; I++) {
        long double s = 0, mag = 0;
        for (int qz = 0; qz < w[2]; qz++)
          for (int qy = 0; qy < w[1]; qy++)
            for (int qx = 0; qx < w[0]; qx++) {
              long double wt = (long double)tb[0].hwt[I * w[0] + qx] *
                               tb[1].hwt[J * w[1] + qy] *
                               tb[2].hwt[K * w[2] + qz];
              long double v = gi[gidx(&di, tb[0].hidx[I * w[0] + qx],
                                      tb[1].hidx[J * w[1] + qy],
                                      tb[2].hidx[K * w[2] + qz])];
              s += wt * v;
              mag += fabsl(wt * v);
            }
        long double base = beta != 0 ? gb[gidx(&dout, I, J, K)] : 0;
        long double want = beta * base + scale * s;
        long double wm = fabsl(beta * base) + scale * mag;
        double got = go[gidx(&dout, I, J, K)];
        double e = fabs(got - (double)want) / (80 * eps * (double)wm + 1e-300);
        if (!(e <= worst)) worst = e;
      }
  CHECKF(worst <= 1, "transfer %dD %zux%zux%zu <- %zux%zux%zu (w %d,%d,%d, "
         "beta %g): error %.3g of the bound", dims, nout[0], nout[1], nout[2],
         nin[0], nin[1], nin[2], w[0], w[1], w[2], beta, worst);
  /* ghosts of out untouched */
  for (long K = -(dims == 3 ? 2 : 0); K < (long)nout[2] + (dims == 3 ? 2 : 0); K++)
    for (long J = -2; J < (long)nout[1] + 2; J++)
      for (long I = -2; I < (long)nout[0] + 2; I++) {
        if (I >= 0 && J >= 0 && K >= 0 && I < (long)nout[0] &&
            J < (long)nout[1] && K < (long)nout[2])
          continue;
        size_t q = gidx(&dout, I, J, K);
        CHECKF(memcmp(&go[q], &gb[q], sizeof(double)) == 0,
               "transfer wrote ghost (%ld,%ld,%ld)", I, J, K);
      }
  rc = 0;
done:
  for (int a = 0; a < 3; a++) free_band(ctx, &tb[a]);
  strata_field_destroy(&in);
  strata_field_destroy(&out);
  free(gi);
  free(go);
  free(gb);
  return rc;
}

static int check_axpby_case(strata_context *ctx, int dims, const size_t n[3],
                            strata_precision p, uint64_t seed) {
  int rc = 1;
  strata_field *x = ref_random_field(ctx, dims, n[0], n[1], n[2], 2, p, seed);
  strata_field *y = ref_random_field(ctx, dims, n[0], n[1], n[2], 1, p,
                                     seed + 1);
  double *gx = NULL, *gy0 = NULL, *gy = NULL;
  if (!x || !y) goto done;
  strata_field_desc dx, dy;
  strata_field_get_desc(x, &dx);
  strata_field_get_desc(y, &dy);
  double eps = ref_eps(p);
  /* (a, b, c, x?) cases: general, b = 0 over NaN, constant, sum only */
  struct { double a, b, c; int usex, poison; } cs[] = {
      {0.7, -1.3, 0.25, 1, 0}, {1.5, 0, 0, 1, 1}, {0, 0, 0.5, 0, 1},
      {0, 1, 0, 0, 0}, {0, 1, -0.125, 0, 0}};
  for (size_t q = 0; q < sizeof cs / sizeof cs[0]; q++) {
    if (cs[q].poison) CHECK_OK(strata_field_fill(y, NAN), ctx);
    free(gy0);
    gy0 = ref_read(y, 1);
    double sum = NAN;
    CHECK_OK(ctx->be->mg_axpby(y, cs[q].usex ? x : NULL, cs[q].a, cs[q].b,
                               cs[q].c, &sum),
             ctx);
    free(gx);
    free(gy);
    gx = ref_read(x, 1);
    gy = ref_read(y, 1);
    if (!gx || !gy || !gy0) goto done;
    long double want_sum = 0, mag = 0;
    for (long k = 0; k < (long)n[2]; k++)
      for (long j = 0; j < (long)n[1]; j++)
        for (long i = 0; i < (long)n[0]; i++) {
          long double xv = cs[q].usex ? gx[gidx(&dx, i, j, k)] : 0;
          long double yv = cs[q].b != 0 ? gy0[gidx(&dy, i, j, k)] : 0;
          long double want = cs[q].a * xv + cs[q].b * yv + cs[q].c;
          double got = gy[gidx(&dy, i, j, k)];
          double bound = 4 * eps * (double)(fabsl(cs[q].a * xv) +
                                            fabsl(cs[q].b * yv) +
                                            fabs(cs[q].c));
          CHECKF(fabs(got - (double)want) <= bound,
                 "axpby case %zu at (%ld,%ld,%ld): got %.9g want %.9g", q, i,
                 j, k, got, (double)want);
          want_sum += got;
          mag += fabs(got);
        }
    CHECKF(fabs(sum - (double)want_sum) <= 1e-12 * (double)mag + 1e-300,
           "axpby case %zu: sum %.12g want %.12g", q, sum, (double)want_sum);
    /* ghosts untouched */
    long zg = dims == 3 ? 1 : 0;
    for (long k = -zg; k < (long)n[2] + zg; k++)
      for (long j = -1; j < (long)n[1] + 1; j++)
        for (long i = -1; i < (long)n[0] + 1; i++) {
          if (i >= 0 && j >= 0 && k >= 0 && i < (long)n[0] &&
              j < (long)n[1] && k < (long)n[2])
            continue;
          size_t o = gidx(&dy, i, j, k);
          CHECKF(memcmp(&gy[o], &gy0[o], sizeof(double)) == 0,
                 "axpby wrote ghost (%ld,%ld,%ld)", i, j, k);
        }
  }
  rc = 0;
done:
  strata_field_destroy(&x);
  strata_field_destroy(&y);
  free(gx);
  free(gy0);
  free(gy);
  return rc;
}

static int kernels_on(strata_backend b) {
  strata_context *ctx = make_ctx(b);
  CHECK(ctx != NULL);
  int rc = 0;
  if (!ctx->be->mg_sweep || !ctx->be->mg_transfer || !ctx->be->mg_axpby ||
      !ctx->be->mg_ghosts) {
    fprintf(stderr, "  the %s backend lacks multigrid kernels\n",
            ctx->be->name);
    strata_context_destroy(&ctx);
    return 1;
  }
  static const strata__mg_op ops[] = {
      {3, {1, -1.0 / 6, 0, 0}},             /* FD 7-point */
      {3, {8.0 / 3, 0, -1.0 / 6, -1.0 / 12}}, /* FE */
      {3, {2.5, -0.15, -0.07, -0.03}},       /* general 27 */
      {2, {1, -0.25, 0, 0}},                 /* FD 5-point */
      {2, {8.0 / 3, -1.0 / 3, -1.0 / 3, 0}}  /* FE 9-point */
  };
  static const size_t n3[][3] = {{13, 7, 5}, {1, 9, 4}, {40, 3, 70}};
  static const size_t n2[][3] = {{17, 11, 1}, {1, 6, 1}, {300, 230, 1}};
  for (int pi = 0; pi < 2 && !rc; pi++) {
    strata_precision p = pi ? STRATA_F64 : STRATA_F32;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0] && !rc; o++)
      for (int si = 0; si < 3 && !rc; si++)
        for (int mode = 0; mode < 3 && !rc; mode++)
          rc |= check_sweep_case(ctx, &ops[o],
                                 ops[o].dims == 3 ? n3[si] : n2[si], p, mode,
                                 100 * o + 10 * si + mode + 1000 * pi);
    for (int si = 0; si < 3 && !rc; si++) {
      rc |= check_ghost_case(ctx, 3, n3[si], 1, p, 7 + si + 100 * pi);
      rc |= check_ghost_case(ctx, 3, n3[si], 2, p, 17 + si + 100 * pi);
      rc |= check_ghost_case(ctx, 2, n2[si], 1, p, 27 + si + 100 * pi);
      rc |= check_axpby_case(ctx, 3, n3[si], p, 37 + si);
      rc |= check_axpby_case(ctx, 2, n2[si], p, 47 + si);
    }
    {
      size_t fi[3] = {23, 14, 9}, co[3] = {12, 7, 5};
      int w4[3] = {4, 3, 2}, w2[3] = {2, 2, 1}, w1[3] = {1, 1, 1};
      rc |= rc ? 0 : check_transfer_case(ctx, 3, fi, co, w4, 0, p, 5 + pi);
      rc |= rc ? 0 : check_transfer_case(ctx, 3, co, fi, w2, 1, p, 6 + pi);
      rc |= rc ? 0 : check_transfer_case(ctx, 3, co, fi, w1, -0.5, p, 8);
      size_t f2[3] = {31, 20, 1}, c2[3] = {16, 10, 1}, big[3] = {250, 130, 1};
      int v4[3] = {4, 4, 1}, v2[3] = {2, 2, 1};
      rc |= rc ? 0 : check_transfer_case(ctx, 2, f2, c2, v4, 0, p, 9 + pi);
      rc |= rc ? 0 : check_transfer_case(ctx, 2, c2, f2, v2, 1, p, 11 + pi);
      rc |= rc ? 0 : check_transfer_case(ctx, 2, big, big, v2, 1, p, 13);
      size_t b3[3] = {70, 60, 40}, b3c[3] = {35, 30, 20};
      rc |= rc ? 0 : check_transfer_case(ctx, 3, b3, b3c, w4, 0, p, 14);
    }
  }
  strata_context_destroy(&ctx);
  return rc;
}

TEST(kernels_cpu) { return kernels_on(STRATA_BACKEND_CPU); }

TEST(kernels_cuda) {
  char why[256];
  if (!have_cuda(why, sizeof why)) SKIP("no CUDA: %s", why);
  return kernels_on(STRATA_BACKEND_CUDA);
}

/* ======================================================================== */
/* Manufactured solutions: second order in h                                 */
/* ======================================================================== */

/* The exact solution on the grid of a problem: per axis, x = position of
 * point i in [0, 1]: Dirichlet axis x = (i + 1) h, Neumann axis (i + 1/2)
 * h, periodic axis i h. */
typedef struct {
  int dims;
  int kind[3];       /* per axis: 0 Dirichlet, 1 Neumann, 2 periodic */
  double a, b;       /* phi += a + b x on a Dirichlet x axis */
  double h;
} manuf;

static double pos(const manuf *m, int a, long i) {
  return m->kind[a] == 0 ? (i + 1) * m->h
         : m->kind[a] == 1 ? (i + 0.5) * m->h
                           : i * m->h;
}

/* per axis mode: Dirichlet sin(pi x), Neumann cos(pi x), periodic
 * cos(2 pi x) + 0.5 sin(2 pi x); -lap = sum of k^2 */
static double mode1(int kind, double x, double *k2) {
  const double pi = 3.14159265358979323846;
  if (kind == 0) {
    *k2 = pi * pi;
    return sin(pi * x);
  }
  if (kind == 1) {
    *k2 = pi * pi;
    return cos(pi * x);
  }
  *k2 = 4 * pi * pi;
  return cos(2 * pi * x) + 0.5 * sin(2 * pi * x);
}

static double exact_fn(long i, long j, long k, void *p) {
  const manuf *m = p;
  long c[3] = {i, j, k};
  double v = 1, k2sum = 0;
  for (int a = 0; a < m->dims; a++) {
    double k2;
    v *= mode1(m->kind[a], pos(m, a, c[a]), &k2);
    k2sum += k2;
  }
  (void)k2sum;
  double lin = m->kind[0] == 0 ? m->a + m->b * pos(m, 0, i) : 0;
  return v + lin;
}

static double source_fn(long i, long j, long k, void *p) {
  const manuf *m = p;
  long c[3] = {i, j, k};
  double v = 1, k2sum = 0;
  for (int a = 0; a < m->dims; a++) {
    double k2;
    v *= mode1(m->kind[a], pos(m, a, c[a]), &k2);
    k2sum += k2;
  }
  return k2sum * v;
}

/* Solves the manufactured problem on 1/h points per unit length and
 * returns the max error (means removed when singular). */
static int manufactured_error(strata_context *ctx, const manuf *m,
                              strata_mg_discretization disc,
                              strata_precision p, double *err) {
  strata_mg_options o;
  strata_mg_options_init(&o);
  o.dims = m->dims;
  o.precision = p;
  o.h = m->h;
  o.disc = disc;
  o.rtol = 1e-11;
  o.max_cycles = 60;
  long N = lround(1 / m->h);
  int singular = 1;
  for (int a = 0; a < 3; a++) {
    o.n[a] = a < m->dims ? (size_t)(m->kind[a] == 0 ? N - 1 : N) : 1;
    strata_bc_kind k = m->kind[a] == 0   ? STRATA_BC_DIRICHLET
                       : m->kind[a] == 1 ? STRATA_BC_NEUMANN
                                         : STRATA_BC_PERIODIC;
    if (m->kind[a] == 0) singular = 0;
    o.bc.kind[2 * a] = o.bc.kind[2 * a + 1] = k;
    o.bc.value[2 * a] = o.bc.value[2 * a + 1] = 0;
  }
  if (m->kind[0] == 0) {
    o.bc.value[0] = m->a;
    o.bc.value[1] = m->a + m->b;
  }
  strata_mg *mg = NULL;
  CHECK_OK(strata_mg_create(ctx, &o, &mg), ctx);
  strata_field_desc d = {m->dims, {o.n[0], o.n[1], o.n[2]}, 1, p};
  strata_field *phi = NULL, *psi = NULL, *ex = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &phi), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &psi), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &ex), ctx);
  CHECK_OK(strata_field_fill_fn(psi, source_fn, (void *)m), ctx);
  CHECK_OK(strata_field_fill_fn(ex, exact_fn, (void *)m), ctx);
  CHECK_OK(strata_field_fill_random(phi, 3, -1, 1), ctx);
  strata_mg_result r;
  CHECK_OK(strata_mg_solve(mg, phi, psi, &r), ctx);
  CHECKF(r.converged, "manufactured solve did not converge: %d cycles, "
         "relative %.3g", r.cycles, r.relative);
  if (singular) {
    double s;
    CHECK_OK(strata_field_norm(ex, STRATA_NORM_SUM, &s), ctx);
    CHECK_OK(strata_field_fill_fn(ex, exact_fn, (void *)m), ctx);
    size_t cnt = o.n[0] * o.n[1] * o.n[2];
    /* subtract the exact solution's discrete mean */
    double *v = ref_read(ex, 0);
    CHECK(v != NULL);
    for (size_t q = 0; q < cnt; q++) v[q] -= s / (double)cnt;
    if (p == STRATA_F64) {
      CHECK_OK(strata_field_write(ex, v), ctx);
    } else {
      float *f = malloc(cnt * sizeof *f);
      CHECK(f != NULL);
      for (size_t q = 0; q < cnt; q++) f[q] = (float)v[q];
      CHECK_OK(strata_field_write(ex, f), ctx);
      free(f);
    }
    free(v);
  }
  CHECK_OK(strata_field_diff(phi, ex, STRATA_NORM_MAX, err), ctx);
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_field_destroy(&ex);
  strata_mg_destroy(&mg);
  return 0;
}

static int order_case(strata_context *ctx, const manuf *base,
                      strata_mg_discretization disc, const char *what) {
  double e[3];
  int N0 = base->dims == 3 ? 8 : 16;
  for (int q = 0; q < 3; q++) {
    manuf m = *base;
    m.h = 1.0 / (N0 << q);
    if (manufactured_error(ctx, &m, disc, STRATA_F64, &e[q])) return 1;
  }
  double o1 = log2(e[0] / e[1]), o2 = log2(e[1] / e[2]);
  printf("  %-28s %s: errors %.3e %.3e %.3e, orders %.3f %.3f\n", what,
         disc == STRATA_MG_FE ? "FE" : "FD", e[0], e[1], e[2], o1, o2);
  CHECKF(o2 > 1.85 && o2 < 2.2 && o1 > 1.7 && o1 < 2.3,
         "%s: measured orders %.3f, %.3f are not 2", what, o1, o2);
  return 0;
}

TEST(second_order) {
  strata_context *ctx = make_ctx(STRATA_BACKEND_CPU);
  CHECK(ctx != NULL);
  int rc = 0;
  manuf cases[] = {
      {3, {0, 0, 0}, 0, 0, 0},   /* Dirichlet 0 */
      {3, {0, 1, 2}, 0.5, -1.25, 0}, /* Dirichlet 0.5 | 1.75 on x, Neumann
                                        y, periodic z */
      {3, {1, 1, 2}, 0, 0, 0},   /* no Dirichlet face: singular */
      {2, {0, 1, 0}, -0.3, 2, 0},
      {2, {2, 2, 0}, 0, 0, 0}};
  const char *names[] = {"3D Dirichlet", "3D Dirichlet/Neumann/periodic",
                         "3D Neumann/periodic", "2D Dirichlet/Neumann",
                         "2D periodic"};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0] && !rc; c++)
    for (int disc = 0; disc < 2 && !rc; disc++)
      rc |= order_case(ctx, &cases[c], (strata_mg_discretization)disc,
                       names[c]);
  strata_context_destroy(&ctx);
  return rc;
}

/* ======================================================================== */
/* The reference setting on the FE stencil                                  */
/* ======================================================================== */

/* Solves with a random psi (mean removed when singular) from a random
 * initial guess (or 0 when seed has bit 62 set). */
#define ZERO_INIT ((uint64_t)1 << 62)
static int solve_random(strata_context *ctx, const strata_mg_options *o,
                        uint64_t seed, strata_mg_result *r,
                        double *hist, int nhist, strata_field **keep) {
  strata_mg *mg = NULL;
  CHECK_OK(strata_mg_create(ctx, o, &mg), ctx);
  strata_field_desc d = {o->dims, {o->n[0], o->n[1], o->n[2]}, 1,
                         o->precision};
  strata_field *phi = NULL, *psi = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &phi), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &psi), ctx);
  int zero = (seed & ZERO_INIT) != 0;
  seed &= ~ZERO_INIT;
  CHECK_OK(strata_field_fill_random(psi, seed, -1, 1), ctx);
  if (zero)
    CHECK_OK(strata_field_fill(phi, 0), ctx);
  else
    CHECK_OK(strata_field_fill_random(phi, seed + 1, -1, 1), ctx);
  int singular = 1;
  for (int f = 0; f < 2 * o->dims; f++)
    if (o->bc.kind[f] == STRATA_BC_DIRICHLET) singular = 0;
  if (singular) {
    double s;
    CHECK_OK(strata_field_norm(psi, STRATA_NORM_SUM, &s), ctx);
    CHECK_OK(ctx->be->mg_axpby(psi, NULL, 0, 1,
                               -s / (double)(o->n[0] * o->n[1] * o->n[2]),
                               NULL),
             ctx);
  }
  CHECK_OK(strata_mg_solve(mg, phi, psi, r), ctx);
  for (int k = 0; k < nhist && k <= r->cycles; k++) hist[k] = r->history[k];
  if (keep)
    *keep = phi;
  else
    strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_mg_destroy(&mg);
  return 0;
}

static void print_hist(const char *what, const strata_mg_result *r,
                       const double *h) {
  printf("  %s: %d cycles, factors", what, r->cycles);
  for (int k = 1; k <= r->cycles && k <= 20; k++)
    printf(" %.3f", h[k] / h[k - 1]);
  printf("\n");
}

TEST(seed004_fe_vcycle) {
  strata_context *ctx = make_ctx(STRATA_BACKEND_CPU);
  CHECK(ctx != NULL);
  strata_mg_options o;
  strata_mg_options_init(&o);
  o.n[0] = o.n[1] = o.n[2] = 63;
  o.h = 1.0 / 64;
  o.rtol = 0;
  o.stall = 0;
  o.max_cycles = 10;
  strata_mg_result r;
  double h[64];
  /* fp64: the reference setting, from phi = 0 */
  CHECK(solve_random(ctx, &o, 11 | ZERO_INIT, &r, h, 64, NULL) == 0);
  print_hist("fp64 V(2,1)/(1,1) FE 63^3", &r, h);
  double first6 = pow(h[6] / h[0], 1.0 / 6);
  printf("  mean factor over cycles 1-6 %.4f, cycle 10 %.4f\n", first6,
         h[10] / h[9]);
  CHECKF(first6 <= 0.1, "mean factor %.3f over 6 cycles > 0.1", first6);
  for (int k = 1; k <= 10; k++)
    CHECKF(h[k] / h[k - 1] <= 0.13, "cycle %d factor %.3f > 0.13", k,
           h[k] / h[k - 1]);
  /* one more post-smoothing sweep: every cycle better than 10x */
  o.post = 2;
  CHECK(solve_random(ctx, &o, 11 | ZERO_INIT, &r, h, 64, NULL) == 0);
  print_hist("fp64 V(2,2)/(1,2) FE 63^3", &r, h);
  for (int k = 1; k <= 10; k++)
    CHECKF(h[k] / h[k - 1] <= 0.1, "post=2: cycle %d factor %.3f > 0.1", k,
           h[k] / h[k - 1]);
  /* fp32: machine-precision level within about 7 cycles: the residual
   * reaches within 2x of the floor it stalls at after 20 cycles */
  o.post = 1;
  o.precision = STRATA_F32;
  o.max_cycles = 20;
  CHECK(solve_random(ctx, &o, 11 | ZERO_INIT, &r, h, 64, NULL) == 0);
  print_hist("fp32 V(2,1)/(1,1) FE 63^3", &r, h);
  double floor_ = h[0];
  for (int k = 0; k <= r.cycles; k++)
    if (h[k] < floor_) floor_ = h[k];
  int reach = -1;
  for (int k = 0; k <= r.cycles && reach < 0; k++)
    if (h[k] <= 2 * floor_) reach = k;
  printf("  fp32: floor %.3e relative, reached (within 2x) at cycle %d\n",
         floor_ / h[0], reach);
  CHECKF(reach >= 0 && reach <= 8, "fp32 floor reached at cycle %d", reach);
  CHECKF(floor_ / h[0] < 1e-6, "fp32 floor %.3g relative is not machine "
         "precision level", floor_ / h[0]);
  strata_context_destroy(&ctx);
  return 0;
}

/* ======================================================================== */
/* Independent residual, odd sizes, boundary mixes, cycles                   */
/* ======================================================================== */

/* RMS of sigma h^2 psi - S phi over the interior, computed with
 * strata_apply of the stencil on a copy of phi with ghosts from bc, and
 * divided by sigma h^2 (psi's units). */
static int independent_residual(strata_context *ctx,
                                const strata_mg_options *o,
                                strata_field *phi, const strata_field *psi,
                                double shift, double *rms) {
  strata_stencil st;
  double c0, c1, c2, c3, sigma;
  if (o->dims == 3) {
    if (o->disc == STRATA_MG_FD) {
      c0 = 1; c1 = -1.0 / 6; c2 = 0; c3 = 0;
    } else {
      c0 = 8.0 / 3; c1 = 0; c2 = -1.0 / 6; c3 = -1.0 / 12;
    }
    sigma = -(c1 + 4 * c2 + 4 * c3);
    CHECK_OK(strata_stencil_box_symmetric(&st, c0, c1, c2, c3), ctx);
  } else {
    if (o->disc == STRATA_MG_FD) {
      c0 = 1; c1 = -0.25; c2 = 0;
    } else {
      c0 = 8.0 / 3; c1 = -1.0 / 3; c2 = -1.0 / 3;
    }
    sigma = -(c1 + 2 * c2);
    double K[9] = {c2, c1, c2, c1, c0, c1, c2, c1, c2};
    CHECK_OK(strata_stencil_box(&st, 2, K), ctx);
  }
  strata_field_desc d;
  strata_field_get_desc(phi, &d);
  d.precision = STRATA_F64; /* the check in double */
  strata_field *u = NULL, *su = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &u), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &su), ctx);
  double *v = ref_read(phi, 0), *f = ref_read(psi, 0);
  CHECK(v && f);
  CHECK_OK(strata_field_write(u, v), ctx);
  CHECK_OK(strata_field_fill_ghosts(u, &o->bc), ctx);
  CHECK_OK(strata_apply(&st, u, su, NULL), ctx);
  double *s = ref_read(su, 0);
  CHECK(s != NULL);
  size_t cnt = o->n[0] * o->n[1] * o->n[2];
  double bs = sigma * o->h * o->h;
  long double acc = 0;
  for (size_t q = 0; q < cnt; q++) {
    double r = (bs * (f[q] + shift) - s[q]) / bs;
    acc += (long double)r * r;
  }
  *rms = sqrt((double)(acc / cnt));
  free(v);
  free(f);
  free(s);
  strata_field_destroy(&u);
  strata_field_destroy(&su);
  return 0;
}

typedef struct {
  int dims;
  size_t n[3];
  const char *bc; /* 6 letters: d, n, p */
  strata_mg_discretization disc;
  double maxfactor;
} mix_case;

/* bc: a letter per face (d, n or p); a 2D case names 4, its z faces are
 * left periodic */
static void set_bc(strata_mg_options *o, const char *bc) {
  const size_t nb = strlen(bc);
  for (int f = 0; f < 6; f++) {
    char c = (size_t)f < nb ? bc[f] : 'p';
    o->bc.kind[f] = c == 'd'   ? STRATA_BC_DIRICHLET
                    : c == 'n' ? STRATA_BC_NEUMANN
                               : STRATA_BC_PERIODIC;
    o->bc.value[f] = 0.25 * f - 0.4; /* nonzero, different per face */
  }
}

TEST(any_size_any_mix) {
  strata_context *ctx = make_ctx(STRATA_BACKEND_CPU);
  CHECK(ctx != NULL);
  /* factors measured: docs/multigrid.md; the bounds leave ~25% margin */
  const mix_case cases[] = {
      {3, {31, 31, 31}, "dddddd", STRATA_MG_FE, 0.12},
      {3, {32, 32, 32}, "dddddd", STRATA_MG_FE, 0.18},
      {3, {32, 32, 32}, "nnnnnn", STRATA_MG_FE, 0.16},
      {3, {32, 32, 32}, "pppppp", STRATA_MG_FE, 0.12},
      {3, {33, 33, 33}, "pppppp", STRATA_MG_FE, 0.19},
      {3, {31, 31, 31}, "nnnnnn", STRATA_MG_FE, 0.18},
      {3, {37, 26, 19}, "ddnnpp", STRATA_MG_FE, 0.45},
      {3, {25, 30, 41}, "dnndpp", STRATA_MG_FD, 0.65},
      {3, {31, 31, 31}, "dddddd", STRATA_MG_FD, 0.45},
      {3, {20, 20, 21}, "nndndn", STRATA_MG_FD, 0.57},
      {2, {127, 127, 1}, "dddd", STRATA_MG_FE, 0.12},
      {2, {100, 77, 1}, "dnpp", STRATA_MG_FD, 0.42},
      {2, {64, 65, 1}, "nnnn", STRATA_MG_FE, 0.24},
      {2, {1, 50, 1}, "ddnd", STRATA_MG_FD, 0.25},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const mix_case *m = &cases[c];
    for (int pi = 0; pi < 2; pi++) {
      strata_mg_options o;
      strata_mg_options_init(&o);
      o.dims = m->dims;
      memcpy(o.n, m->n, sizeof o.n);
      o.h = 0.7 / (double)m->n[0];
      o.disc = m->disc;
      o.precision = pi ? STRATA_F64 : STRATA_F32;
      o.max_cycles = 100;
      o.rtol = pi ? 1e-10 : 1e-5;
      o.stall = 1;
      set_bc(&o, m->bc);
      strata_mg_result r;
      double h[64];
      strata_field *phi = NULL;
      CHECK(solve_random(ctx, &o, 21 + c, &r, h, 64, &phi) == 0);
      printf("  %dD %3zux%3zux%3zu %s %s fp%d: %2d cycles, factor %.3f, "
             "relative %.2e\n", m->dims, m->n[0], m->n[1], m->n[2],
             m->bc, m->disc == STRATA_MG_FE ? "FE" : "FD", pi ? 64 : 32,
             r.cycles, r.factor, r.relative);
      CHECKF(r.converged, "not converged");
      if (pi) {
        CHECKF(r.factor <= m->maxfactor, "factor %.3f > %.3f", r.factor,
               m->maxfactor);
        /* the reported residual is the true one; random psi has its mean
         * removed when singular (regenerate it the same way) */
        strata_field_desc d = {o.dims, {o.n[0], o.n[1], o.n[2]}, 1,
                               o.precision};
        strata_field *psi = NULL;
        CHECK_OK(strata_field_create(ctx, &d, &psi), ctx);
        CHECK_OK(strata_field_fill_random(psi, 21 + c, -1, 1), ctx);
        double shift = 0, rms;
        if (strchr(m->bc, 'd') == NULL ||
            memchr(m->bc, 'd', (size_t)(2 * m->dims)) == NULL) {
          double s;
          CHECK_OK(strata_field_norm(psi, STRATA_NORM_SUM, &s), ctx);
          shift = -s / (double)(o.n[0] * o.n[1] * o.n[2]);
        }
        CHECK(independent_residual(ctx, &o, phi, psi, shift, &rms) == 0);
        CHECKF(fabs(rms - r.residual) <= 1e-6 * r.residual0,
               "independent residual %.6e vs reported %.6e (initial %.3e)",
               rms, r.residual, r.residual0);
        strata_field_destroy(&psi);
      }
      strata_field_destroy(&phi);
    }
  }
  strata_context_destroy(&ctx);
  return 0;
}

TEST(cycles_and_fmg) {
  strata_context *ctx = make_ctx(STRATA_BACKEND_CPU);
  CHECK(ctx != NULL);
  strata_mg_options o;
  strata_mg_options_init(&o);
  o.n[0] = o.n[1] = o.n[2] = 47;
  o.h = 1.0 / 48;
  set_bc(&o, "ddnndd");
  o.rtol = 1e-9;
  o.stall = 0;
  const char *names[] = {"V", "F", "W"};
  double fac[3][2];
  for (int c = 0; c < 3; c++)
    for (int f = 0; f < 2; f++) {
      o.cycle = (strata_mg_cycle)c;
      o.fmg = f;
      strata_mg_result r;
      double h[64];
      CHECK(solve_random(ctx, &o, 5, &r, h, 64, NULL) == 0);
      printf("  %s-cycle%s: %d cycles to 1e-9, factor %.3f\n", names[c],
             f ? " + FMG" : "      ", r.cycles, r.factor);
      CHECKF(r.converged, "%s-cycle fmg %d did not converge", names[c], f);
      fac[c][f] = r.factor;
    }
  /* the extra coarse work of F and W must not make a cycle worse */
  CHECK(fac[1][0] <= fac[0][0] * 1.02 && fac[2][0] <= fac[0][0] * 1.02);
  strata_context_destroy(&ctx);
  return 0;
}

/* ======================================================================== */
/* Singular problems, bad input                                              */
/* ======================================================================== */

TEST(singular_sources) {
  strata_context *ctx = make_ctx(STRATA_BACKEND_CPU);
  CHECK(ctx != NULL);
  const char *bcs[] = {"nnnnnn", "pppppp", "nnppnn"};
  for (int b = 0; b < 3; b++) {
    strata_mg_options o;
    strata_mg_options_init(&o);
    o.n[0] = 20;
    o.n[1] = 17;
    o.n[2] = 12;
    set_bc(&o, bcs[b]);
    strata_mg *mg = NULL;
    CHECK_OK(strata_mg_create(ctx, &o, &mg), ctx);
    strata_field_desc d = {3, {20, 17, 12}, 1, STRATA_F64};
    strata_field *phi = NULL, *psi = NULL;
    CHECK_OK(strata_field_create(ctx, &d, &phi), ctx);
    CHECK_OK(strata_field_create(ctx, &d, &psi), ctx);
    CHECK_OK(strata_field_fill_random(psi, 4, -0.8, 1.2), ctx); /* mean 0.2 */
    CHECK_OK(strata_field_fill_random(phi, 5, -1, 1), ctx);
    double *before = ref_read(phi, 1);
    strata_mg_result r;
    CHECK_STATUS(strata_mg_solve(mg, phi, psi, &r), STRATA_EINVAL, ctx);
    printf("  %s refused: %s\n", bcs[b], strata_context_error(ctx));
    CHECK(strstr(strata_context_error(ctx), "zero mean") != NULL);
    double *after = ref_read(phi, 1);
    CHECK(before && after);
    CHECK(memcmp(before, after, ref_count(&d, 1) * sizeof(double)) == 0);
    free(before);
    free(after);
    strata_mg_destroy(&mg);
    /* projected */
    o.project = 1;
    CHECK_OK(strata_mg_create(ctx, &o, &mg), ctx);
    CHECK_OK(strata_mg_solve(mg, phi, psi, &r), ctx);
    double sum, mean;
    CHECK_OK(strata_field_norm(psi, STRATA_NORM_SUM, &sum), ctx);
    mean = sum / (20 * 17 * 12);
    printf("  %s projected: source mean %.6f removed, %d cycles, relative "
           "%.2e\n", bcs[b], r.source_mean, r.cycles, r.relative);
    CHECK(fabs(r.source_mean - mean) <= 1e-12);
    CHECK(r.converged);
    double phisum;
    CHECK_OK(strata_field_norm(phi, STRATA_NORM_SUM, &phisum), ctx);
    CHECKF(fabs(phisum) <= 1e-10, "solution mean %g", phisum);
    double rms;
    CHECK(independent_residual(ctx, &o, phi, psi, -mean, &rms) == 0);
    CHECKF(rms <= 1e-9 * r.residual0, "residual %g", rms);
    strata_field_destroy(&phi);
    strata_field_destroy(&psi);
    strata_mg_destroy(&mg);
  }
  strata_context_destroy(&ctx);
  return 0;
}

TEST(bad_input) {
  strata_context *ctx = make_ctx(STRATA_BACKEND_CPU);
  CHECK(ctx != NULL);
  strata_mg_options o;
  strata_mg *mg = (strata_mg *)0x1;
  /* each case: options_init, one change, create refused, *out NULL */
#define REFUSE(change, st)                                                     \
  do {                                                                         \
    strata_mg_options_init(&o);                                                \
    change;                                                                    \
    mg = (strata_mg *)0x1;                                                     \
    CHECK_STATUS(strata_mg_create(ctx, &o, &mg), st, ctx);                    \
    CHECK(mg == NULL);                                                         \
    printf("  %-40s %s\n", #change, strata_context_error(ctx));               \
  } while (0)
  REFUSE(o.dims = 1, STRATA_EINVAL);
  REFUSE(o.n[1] = 0, STRATA_EINVAL);
  REFUSE((o.dims = 2, o.n[2] = 5), STRATA_EINVAL);
  REFUSE(o.h = -1, STRATA_EINVAL);
  REFUSE(o.h = NAN, STRATA_EINVAL);
  REFUSE(o.precision = 3, STRATA_EINVAL);
  REFUSE(o.disc = 7, STRATA_EINVAL);
  REFUSE(o.cycle = 9, STRATA_EINVAL);
  REFUSE(o.omega = 1.5, STRATA_EINVAL); /* FE: stable below 4/3 */
  REFUSE((o.disc = STRATA_MG_FD, o.omega = 1.01), STRATA_EINVAL);
  /* a hair above FE's 4/3: the message shows the two apart */
  REFUSE(o.omega = 1.3333334, STRATA_EINVAL);
  CHECK(strstr(strata_context_error(ctx), "omega 1.3333334 is outside "
                                          "(0, 1.3333333)") != NULL);
  REFUSE((o.pre = 0, o.post = 0), STRATA_EINVAL);
  REFUSE(o.pre_fine = -1, STRATA_EINVAL);
  REFUSE(o.max_cycles = -1, STRATA_EINVAL);
  REFUSE(o.rtol = 1, STRATA_EINVAL);
  REFUSE(o.atol = -1, STRATA_EINVAL);
  REFUSE(o.coarse_rtol = 0, STRATA_EINVAL);
  REFUSE(o.coarse_max_sweeps = 0, STRATA_EINVAL);
  REFUSE(o.max_levels = 100, STRATA_EINVAL);
  REFUSE(o.bc.kind[3] = STRATA_BC_NONE, STRATA_EINVAL);
  REFUSE(o.bc.kind[4] = STRATA_BC_PERIODIC, STRATA_EINVAL);
  REFUSE(o.bc.value[0] = INFINITY, STRATA_EINVAL);
  REFUSE(o.n[0] = (size_t)-5, STRATA_EOVERFLOW);
  CHECK_STATUS(strata_mg_create(ctx, NULL, NULL), STRATA_EINVAL, ctx);
  CHECK(strata_mg_create(NULL, &o, &mg) == STRATA_EINVAL);

  /* solve: wrong fields are refused and touch nothing */
  strata_mg_options_init(&o);
  o.n[0] = 9;
  o.n[1] = 8;
  o.n[2] = 7;
  CHECK_OK(strata_mg_create(ctx, &o, &mg), ctx);
  strata_field *phi = ref_random_field(ctx, 3, 9, 8, 7, 1, STRATA_F64, 1);
  strata_field *psi = ref_random_field(ctx, 3, 9, 8, 7, 2, STRATA_F64, 2);
  strata_field *f32 = ref_random_field(ctx, 3, 9, 8, 7, 1, STRATA_F32, 3);
  strata_field *wrong = ref_random_field(ctx, 3, 9, 8, 6, 1, STRATA_F64, 4);
  CHECK(phi && psi && f32 && wrong);
  double *before = ref_read(phi, 1);
  CHECK_STATUS(strata_mg_solve(mg, phi, phi, NULL), STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_mg_solve(mg, NULL, psi, NULL), STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_mg_solve(mg, phi, NULL, NULL), STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_mg_solve(mg, phi, f32, NULL), STRATA_EPRECISION, ctx);
  CHECK_STATUS(strata_mg_solve(mg, phi, wrong, NULL), STRATA_ESHAPE, ctx);
  CHECK_STATUS(strata_mg_solve(NULL, phi, psi, NULL), STRATA_EINVAL, ctx);
  strata_context *other = make_ctx(STRATA_BACKEND_CPU);
  strata_field *alien = ref_random_field(other, 3, 9, 8, 7, 1, STRATA_F64, 5);
  CHECK_STATUS(strata_mg_solve(mg, phi, alien, NULL), STRATA_EINVAL, ctx);
  double *after = ref_read(phi, 1);
  strata_field_desc d;
  strata_field_get_desc(phi, &d);
  CHECK(before && after &&
        memcmp(before, after, ref_count(&d, 1) * sizeof(double)) == 0);
  /* NaN in psi: the first cycle's residual is not finite, and the
   * message names the field and the point */
  CHECK_OK(strata_field_fill(psi, NAN), ctx);
  CHECK_STATUS(strata_mg_solve(mg, phi, psi, NULL), STRATA_ENONFINITE, ctx);
  CHECKF(strstr(strata_context_error(ctx), "psi(0, 0, 0) = nan") &&
             strstr(strata_context_error(ctx), "after cycle 0"),
         "%s", strata_context_error(ctx));
  /* level queries */
  strata_mg_level_info li;
  CHECK_STATUS(strata_mg_get_level(mg, -1, &li), STRATA_EINVAL, ctx);
  CHECK_STATUS(strata_mg_get_level(mg, strata_mg_levels(mg), &li),
               STRATA_EINVAL, ctx);
  CHECK_OK(strata_mg_get_level(mg, 0, &li), ctx);
  CHECK(li.n[0] == 9 && li.exact == 1);
  free(before);
  free(after);
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_field_destroy(&f32);
  strata_field_destroy(&wrong);
  strata_field_destroy(&alien);
  strata_context_destroy(&other);
  strata_mg_destroy(&mg);
  CHECK(mg == NULL);
  strata_mg_destroy(&mg);
  strata_mg_destroy(NULL);
  strata_context_destroy(&ctx);
  return 0;
}

/* One bad option at a time: create refuses it and names it, with its
 * value, beside the message. */
TEST(refusals_name_the_option) {
  strata_context *ctx = make_ctx(STRATA_BACKEND_CPU);
  CHECK(ctx != NULL);
  strata_mg_options o;
  strata_mg *mg = NULL;
  /* REFUSE of bad_input, then the name and value */
#define REFUSE_ARG(change, st, arg, value)                                     \
  do {                                                                         \
    REFUSE(change, st);                                                        \
    CHECK_ARG(ctx, arg, value);                                                \
  } while (0)
  REFUSE_ARG(o.dims = 1, STRATA_EINVAL, "dims", "1");
  REFUSE_ARG(o.n[1] = 0, STRATA_EINVAL, "n[1]", "0");
  REFUSE_ARG((o.dims = 2, o.n[2] = 5), STRATA_EINVAL, "n[2]", "5");
  REFUSE_ARG(o.h = -1, STRATA_EINVAL, "h", "-1");
  REFUSE_ARG(o.precision = 3, STRATA_EINVAL, "precision", "3");
  REFUSE_ARG(o.disc = 7, STRATA_EINVAL, "disc", "7");
  REFUSE_ARG(o.cycle = 9, STRATA_EINVAL, "cycle", "9");
  REFUSE_ARG(o.omega = 1.5, STRATA_EINVAL, "omega", "1.5");
  REFUSE_ARG((o.pre = 0, o.post = 0), STRATA_EINVAL, "post", "0");
  REFUSE_ARG(o.pre_fine = -1, STRATA_EINVAL, "pre_fine", "-1");
  REFUSE_ARG(o.post = 65, STRATA_EINVAL, "post", "65");
  REFUSE_ARG(o.max_cycles = -1, STRATA_EINVAL, "max_cycles", "-1");
  REFUSE_ARG(o.rtol = 1, STRATA_EINVAL, "rtol", "1");
  REFUSE_ARG(o.atol = -1, STRATA_EINVAL, "atol", "-1");
  REFUSE_ARG(o.coarse_rtol = 0, STRATA_EINVAL, "coarse_rtol", "0");
  REFUSE_ARG(o.coarse_max_sweeps = 0, STRATA_EINVAL, "coarse_max_sweeps",
             "0");
  REFUSE_ARG(o.max_levels = 100, STRATA_EINVAL, "max_levels", "100");
  REFUSE_ARG(o.bc.kind[3] = STRATA_BC_NONE, STRATA_EINVAL, "bc.kind[3]", "3");
  REFUSE_ARG(o.bc.kind[4] = STRATA_BC_PERIODIC, STRATA_EINVAL, "bc.kind[5]",
             "0");
  REFUSE_ARG(o.bc.value[0] = INFINITY, STRATA_EINVAL, "bc.value[0]", "inf");
  REFUSE_ARG(o.n[0] = (size_t)1 << 32, STRATA_EOVERFLOW, "n[0]",
             "4294967296");
#undef REFUSE_ARG
  /* solve names the field at fault */
  strata_mg_options_init(&o);
  o.n[0] = 9;
  o.n[1] = 8;
  o.n[2] = 7;
  CHECK_OK(strata_mg_create(ctx, &o, &mg), ctx);
  strata_field *phi = ref_random_field(ctx, 3, 9, 8, 7, 1, STRATA_F64, 1);
  strata_field *f32 = ref_random_field(ctx, 3, 9, 8, 7, 1, STRATA_F32, 3);
  CHECK(phi && f32);
  CHECK_STATUS(strata_mg_solve(mg, phi, f32, NULL), STRATA_EPRECISION, ctx);
  CHECK_ARG(ctx, "psi", "4");
  CHECK_STATUS(strata_mg_solve(mg, NULL, f32, NULL), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "phi", "NULL");
  strata_mg_level_info li;
  CHECK_STATUS(strata_mg_get_level(mg, -1, &li), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "level", "-1");
  strata_field_destroy(&phi);
  strata_field_destroy(&f32);
  strata_mg_destroy(&mg);
  strata_context_destroy(&ctx);
  return 0;
}

/* ======================================================================== */
/* CPU and CUDA                                                              */
/* ======================================================================== */

TEST(cpu_vs_cuda) {
  char why[256];
  if (!have_cuda(why, sizeof why)) SKIP("no CUDA: %s", why);
  strata_context *cpu = make_ctx(STRATA_BACKEND_CPU),
                 *gpu = make_ctx(STRATA_BACKEND_CUDA);
  CHECK(cpu && gpu);
  const mix_case cases[] = {
      {3, {63, 63, 63}, "dddddd", STRATA_MG_FE, 0},
      {3, {37, 26, 19}, "ddnnpp", STRATA_MG_FD, 0},
      {2, {100, 77, 1}, "dnpp", STRATA_MG_FE, 0},
      {3, {32, 32, 32}, "pppppp", STRATA_MG_FE, 0},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int pi = 0; pi < 2; pi++) {
      strata_mg_options o;
      strata_mg_options_init(&o);
      o.dims = cases[c].dims;
      memcpy(o.n, cases[c].n, sizeof o.n);
      o.disc = cases[c].disc;
      o.precision = pi ? STRATA_F64 : STRATA_F32;
      o.rtol = 0;
      o.stall = 0;
      o.max_cycles = 4;
      set_bc(&o, cases[c].bc);
      strata_mg_result rc_, rg;
      double hc[64], hg[64];
      strata_field *pc = NULL, *pg = NULL;
      CHECK(solve_random(cpu, &o, 31 + c, &rc_, hc, 64, &pc) == 0);
      CHECK(solve_random(gpu, &o, 31 + c, &rg, hg, 64, &pg) == 0);
      CHECK(rc_.cycles == rg.cycles);
      double tol = pi ? 1e-9 : 2e-3;
      for (int k = 0; k <= rc_.cycles; k++)
        CHECKF(fabs(hc[k] - hg[k]) <= tol * hc[k],
               "case %zu fp%d cycle %d: residual %.9e (CPU) vs %.9e (CUDA)",
               c, pi ? 64 : 32, k, hc[k], hg[k]);
      double *vc = ref_read(pc, 0), *vg = ref_read(pg, 0);
      CHECK(vc && vg);
      size_t cnt = o.n[0] * o.n[1] * o.n[2];
      double mx = 0, diff = 0;
      for (size_t q = 0; q < cnt; q++) {
        if (fabs(vc[q]) > mx) mx = fabs(vc[q]);
        if (!(fabs(vc[q] - vg[q]) <= diff)) diff = fabs(vc[q] - vg[q]);
      }
      printf("  case %zu fp%d: max |phi_cpu - phi_cuda| / max|phi| = %.2e\n",
             c, pi ? 64 : 32, diff / mx);
      CHECKF(diff <= (pi ? 1e-11 : 1e-4) * mx, "solutions differ by %.3g",
             diff / mx);
      free(vc);
      free(vg);
      strata_field_destroy(&pc);
      strata_field_destroy(&pg);
    }
  strata_context_destroy(&cpu);
  strata_context_destroy(&gpu);
  return 0;
}

RUN_TESTS(kernels_cpu, kernels_cuda, second_order, seed004_fe_vcycle,
          any_size_any_mix, cycles_and_fmg, singular_sources, bad_input,
          refusals_name_the_option, cpu_vs_cuda)
