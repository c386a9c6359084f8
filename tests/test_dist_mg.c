/* The variable-coefficient multigrid solver over several ranks against one
 * process: the grid split in slabs along its last axis over however many
 * ranks mpirun started (CTest runs this with 1, 2 and 4), the coarse
 * levels gathered onto rank 0 at the automatic level and at chosen ones,
 * compared with the same solve on rank 0 by the ordinary one-process
 * path.  Every smoother, V/F/W cycles and full multigrid, both bottom
 * solvers, Dirichlet values, Neumann and periodic faces (periodic along
 * the split axis wraps between the end ranks), beta with a jump, alpha.
 * The solution is the same bits; only the residual norms (sums over the
 * ranks in another order) and the singular problem (whose mean removal is
 * such a sum) agree to a stated tolerance.
 *
 * STRATA_TEST_BACKEND=cuda runs it on GPUs (one rank per GPU, NCCL).
 * Every rank makes the same collective calls in the same order; only rank
 * 0 checks, after the last collective of a case. */
#include "reference.h"
#include "runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static strata_dist *D;
static int skip_all;
static char skip_why[256];

static strata_status make_dist(const char *tuning, strata_dist **out) {
  strata_context_options co;
  strata_context_options_init(&co);
  co.tuning = tuning;
  co.backend = ref_test_backend();
  co.autotune = 0;
  co.tune_cache = "";
  co.errbuf = skip_why;
  co.errbuf_size = sizeof skip_why;
  strata_dist_options o;
  strata_dist_options_init(&o);
  return strata_dist_create(&co, &o, out);
}

static int rank0(void) { return strata_dist_rank(D) == 0; }

static double zerof(long i, long j, long k, void *u) {
  (void)i, (void)j, (void)k, (void)u;
  return 0;
}

typedef struct {
  const char *name;
  int dims;
  size_t n[3];
  int bcs;    /* 0 Dirichlet (values), 1 mixed with periodic z, 2 all
                 Neumann (singular, projected) */
  int coef;   /* 0 beta 1; 1 beta 1 | 100 across x = n/2, alpha 0;
                 2 beta smooth, alpha 1 */
  strata_mg_smoother sm;
  strata_mg_cycle cyc;
  int fmg, cycles, agglomerate;
  strata_mg_bottom bottom;
} mg_case;

static void bc_of(const mg_case *c, strata_boundary *bc) {
  strata_boundary_uniform(bc, STRATA_BC_DIRICHLET, 0.0);
  if (c->bcs == 0) {
    bc->value[0] = 0.5;
    bc->value[1] = 1.75;
    bc->value[2 * (c->dims - 1) + 1] = -0.25; /* the split axis's top */
  } else if (c->bcs == 1) {
    bc->value[0] = 0.5;
    bc->kind[2] = bc->kind[3] = STRATA_BC_NEUMANN;
    if (c->dims == 3) bc->kind[4] = bc->kind[5] = STRATA_BC_PERIODIC;
    else bc->kind[2] = bc->kind[3] = STRATA_BC_PERIODIC;
  } else {
    for (int f = 0; f < 6; f++) bc->kind[f] = STRATA_BC_NEUMANN;
  }
}

/* The coefficients of the whole grid (every rank the same arrays). */
static void coef_of(const mg_case *c, double *beta, double *alpha) {
  const size_t nx = c->n[0], ny = c->n[1], nz = c->n[2];
  for (size_t k = 0; k < nz; k++)
    for (size_t j = 0; j < ny; j++)
      for (size_t i = 0; i < nx; i++) {
        size_t p = i + nx * (j + ny * k);
        double x = (i + 0.5) / (double)nx, y = (j + 0.5) / (double)ny,
               z = (k + 0.5) / (double)nz;
        beta[p] = c->coef == 1 ? (2 * i < nx ? 1.0 : 100.0)
                  : 1 + 0.25 * sin(6.283185307179586 * x) *
                            sin(6.283185307179586 * y) *
                            cos(6.283185307179586 * z);
        alpha[p] = c->coef == 2 ? 1.0 : 0.0;
      }
}

/* Solves c with opt.dist = d (or in one process: d NULL) into phi_host
 * (rank 0); fills *res and the level ranks. */
static int solve(const mg_case *c, strata_dist *d, double *phi_host,
                 strata_mg_result *res, double *hist, int *ranks) {
  strata_context *ctx = strata_dist_context(D);
  strata_mg_options o;
  strata_mg_options_init(&o);
  o.dims = c->dims;
  memcpy(o.n, c->n, sizeof o.n);
  o.h = 1.0 / (double)c->n[0];
  o.disc = STRATA_MG_FV;
  o.smoother = c->sm;
  o.cycle = c->cyc;
  o.fmg = c->fmg;
  o.pre_fine = o.pre = o.post = c->sm == STRATA_MG_CHEBYSHEV ? 3 : 2;
  o.max_cycles = c->cycles;
  o.rtol = 0;
  o.stall = 0;
  o.project = 1;
  o.bottom = c->bottom;
  o.coarse_max_sweeps = c->bottom == STRATA_MG_BOTTOM_SMOOTH ? 40 : 200;
  o.agglomerate = c->agglomerate;
  o.dist = d;
  bc_of(c, &o.bc);
  const size_t cells = c->n[0] * c->n[1] * c->n[2];
  double *beta = malloc(cells * sizeof *beta),
         *alpha = malloc(cells * sizeof *alpha);
  CHECK(beta && alpha);
  coef_of(c, beta, alpha);
  strata_field_desc fd = {c->dims, {c->n[0], c->n[1], c->n[2]}, 1,
                          STRATA_F64};
  strata_field *phi = NULL, *psi = NULL;
  if (d) {
    CHECK_OK(strata_dist_field_create(d, &fd, &phi), ctx);
    CHECK_OK(strata_dist_field_create(d, &fd, &psi), ctx);
  } else {
    CHECK_OK(strata_field_create(ctx, &fd, &phi), ctx);
    CHECK_OK(strata_field_create(ctx, &fd, &psi), ctx);
  }
  CHECK_OK(strata_field_fill_fn(psi, ref_hash_point, NULL), ctx);
  CHECK_OK(strata_field_fill_fn(phi, zerof, NULL), ctx);
  strata_mg *mg = NULL;
  CHECK_OK(strata_mg_create(ctx, &o, &mg), ctx);
  CHECK_OK(strata_mg_set_coefficients(mg, beta, c->coef ? alpha : NULL), ctx);
  CHECK_OK(strata_mg_solve(mg, phi, psi, res), ctx);
  for (int q = 0; q <= res->cycles; q++) hist[q] = res->history[q];
  const int nl = strata_mg_levels(mg);
  for (int l = 0; l < nl; l++) {
    strata_mg_level_info li;
    CHECK_OK(strata_mg_get_level(mg, l, &li), ctx);
    ranks[l] = li.ranks;
  }
  ranks[nl] = 0;
  CHECK_OK(d ? strata_dist_gather(phi, 0, phi_host)
             : strata_field_read(phi, phi_host), ctx);
  strata_mg_destroy(&mg);
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  free(beta);
  free(alpha);
  return 0;
}

/* The ranks' solve against one process's; *gl the first gathered level. */
static int one_case(const mg_case *c, int *gl) {
  const size_t cells = c->n[0] * c->n[1] * c->n[2];
  double *got = malloc(cells * sizeof *got), *want = malloc(cells * sizeof *want);
  double hg[64], hw[64];
  int rg[32], rw[32];
  strata_mg_result a, b;
  CHECK(got && want);
  if (solve(c, D, got, &a, hg, rg)) return 1;
  *gl = 0;
  while (rg[*gl] > 1) ++*gl;
  if (!rank0()) {
    free(got);
    free(want);
    return 0;
  }
  if (solve(c, NULL, want, &b, hw, rw)) return 1;
  CHECKF(a.cycles == b.cycles, "%s: %d cycles against %d", c->name, a.cycles,
         b.cycles);
  /* the residual norms are sums over the ranks: rounding apart */
  for (int q = 0; q <= a.cycles; q++)
    CHECKF(fabs(hg[q] - hw[q]) <= 1e-12 * hw[0], "%s: residual %d %.17g "
           "against %.17g", c->name, q, hg[q], hw[q]);
  double worst = 0, scale = 0;
  size_t bad = cells;
  for (size_t q = 0; q < cells; q++) {
    if (bad == cells && memcmp(&got[q], &want[q], sizeof got[q])) bad = q;
    worst = fmax(worst, fabs(got[q] - want[q]));
    scale = fmax(scale, fabs(want[q]));
  }
  if (c->bcs == 2) /* the mean removed by a sum over the ranks */
    CHECKF(worst <= 1e-12 * scale, "%s: differs by %.3g (max %.3g)", c->name,
           worst, scale);
  else
    CHECKF(bad == cells, "%s on %d ranks (levels [0, %d) split): first "
           "difference at cell %zu, %.17g against %.17g", c->name,
           strata_dist_size(D), *gl, bad, got[bad == cells ? 0 : bad],
           want[bad == cells ? 0 : bad]);
  free(got);
  free(want);
  return 0;
}

/* The options of a small FV solver over d: 16 x 16 x 32, the rest the
 * defaults. */
static void small_fv(strata_mg_options *o, strata_dist *d) {
  strata_mg_options_init(o);
  o->disc = STRATA_MG_FV;
  o->n[0] = o->n[1] = 16;
  o->n[2] = 32;
  o->dist = d;
}

TEST(fv_equals_one_process) {
  if (skip_all) SKIP("%s", skip_why);
  const int P = strata_dist_size(D);
  const int cuda = strata_context_backend(strata_dist_context(D)) ==
                   STRATA_BACKEND_CUDA;
  const size_t z3 = 32, z2 = 16 * (size_t)(P > 1 ? P : 2);
  const mg_case cases[] = {
      {"gsrb V dirichlet", 3, {16, 24, z3}, 0, 0, STRATA_MG_GSRB,
       STRATA_MG_V, 0, 4, 0, STRATA_MG_BOTTOM_CG},
      {"gsrb FMG jump", 3, {16, 24, z3}, 0, 1, STRATA_MG_GSRB, STRATA_MG_V,
       1, 2, 0, STRATA_MG_BOTTOM_CG},
      {"gsrb F periodic z, gathered at 1", 3, {16, 24, z3}, 1, 2,
       STRATA_MG_GSRB, STRATA_MG_F, 0, 3, 1, STRATA_MG_BOTTOM_CG},
      {"jacobi W, smoothing bottom", 3, {16, 24, z3}, 1, 0, STRATA_MG_JACOBI,
       STRATA_MG_W, 0, 3, 0, STRATA_MG_BOTTOM_SMOOTH},
      {"chebyshev FMG F, gathered at 2", 3, {16, 24, z3}, 0, 2,
       STRATA_MG_CHEBYSHEV, STRATA_MG_F, 1, 2, 2, STRATA_MG_BOTTOM_CG},
      {"gsrb 2D FMG mixed", 2, {48, z2, 1}, 1, 1, STRATA_MG_GSRB,
       STRATA_MG_V, 1, 3, 0, STRATA_MG_BOTTOM_CG},
      {"singular neumann", 3, {16, 24, z3}, 2, 0, STRATA_MG_GSRB, STRATA_MG_V,
       1, 3, 0, STRATA_MG_BOTTOM_CG},
  };
  const int nc = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < nc; i++) {
    int gl;
    if (one_case(&cases[i], &gl)) return 1;
    if (rank0())
      printf("  %-34s levels [0, %d) split over %d ranks: %s\n",
             cases[i].name, gl, P,
             cases[i].bcs == 2 ? "within 1e-12" : "same bits");
    /* the automatic level: on the CPU engine the deepest the slabs allow;
     * over GPUs the cost rule weighs the link's latency, gathering sooner */
    const int deep = cases[i].agglomerate ? cases[i].agglomerate
                     : cases[i].dims == 2 ? 4 : 3;
    if (P > 1 && (cases[i].agglomerate || !cuda))
      CHECKF(gl == deep, "%s: gathered at level %d", cases[i].name, gl);
    if (P > 1 && !cases[i].agglomerate && cuda)
      CHECKF(gl >= 1 && gl <= deep, "%s: gathered at level %d", cases[i].name,
             gl);
  }
  return 0;
}

/* The cost rule: with an exchange that costs more than any level saves,
 * only the finest level stays split; a free link splits as deep as the
 * slabs halve.  Refusals: a split axis the ranks cannot halve, FD/FE over
 * several ranks, a one-process field given to a split solver. */
TEST(gather_rule_and_refusals) {
  if (skip_all) SKIP("%s", skip_why);
  const int P = strata_dist_size(D);
  if (P == 1) SKIP("needs several ranks");
  strata_dist *slow = NULL;
  CHECK(make_dist("dist_link_us=1000", &slow) == STRATA_OK);
  strata_context *ctx = strata_dist_context(slow);
  strata_mg_options o;
  small_fv(&o, slow);
  strata_mg *mg = NULL;
  CHECK_OK(strata_mg_create(ctx, &o, &mg), ctx);
  strata_mg_level_info li;
  CHECK_OK(strata_mg_get_level(mg, 0, &li), ctx);
  CHECKF(li.ranks == P, "level 0 over %d ranks", li.ranks);
  CHECK_OK(strata_mg_get_level(mg, 1, &li), ctx);
  CHECKF(li.ranks == 1, "level 1 over %d ranks with a slow link", li.ranks);
  strata_mg_destroy(&mg);
  o.n[2] = (size_t)(2 * P + 1) * 2 + 2; /* not a multiple of 2 P */
  if (o.n[2] % (size_t)(2 * P) == 0) o.n[2] += 2;
  strata_status s = strata_mg_create(ctx, &o, &mg);
  CHECKF(s == STRATA_EINVAL && strstr(strata_context_error(ctx), "along z") &&
             strstr(strata_context_error(ctx), "multiple of"),
         "%s: %s", strata_status_name(s), strata_context_error(ctx));
  o.n[0] = 15; /* one level: nothing to gather */
  o.n[2] = 32;
  s = strata_mg_create(ctx, &o, &mg);
  CHECKF(s == STRATA_EINVAL && strstr(strata_context_error(ctx), "one level"),
         "%s: %s", strata_status_name(s), strata_context_error(ctx));
  o.n[0] = 16;
  o.disc = STRATA_MG_FE;
  s = strata_mg_create(ctx, &o, &mg);
  CHECKF(s == STRATA_EINVAL && strstr(strata_context_error(ctx), "FE"),
         "FE over ranks: %s", strata_status_name(s));
  o.disc = STRATA_MG_FV;
  CHECK_OK(strata_mg_create(ctx, &o, &mg), ctx);
  strata_field_desc fd = {3, {16, 16, 32}, 1, STRATA_F64};
  strata_field *whole = NULL, *part = NULL;
  CHECK_OK(strata_field_create(ctx, &fd, &whole), ctx);
  CHECK_OK(strata_dist_field_create(slow, &fd, &part), ctx);
  s = strata_mg_solve(mg, whole, part, NULL);
  CHECKF(s == STRATA_EINVAL && strstr(strata_context_error(ctx), "phi"),
         "a whole phi: %s %s", strata_status_name(s),
         strata_context_error(ctx));
  strata_mg_destroy(&mg);
  strata_field_destroy(&whole);
  strata_field_destroy(&part);
  strata_dist_destroy(&slow);
  return 0;
}

int main(int argc, char **argv) {
  if (ref_dist_start(&D, &skip_all, skip_why, sizeof skip_why)) return 1;
  static const strata_test_entry tests[] = {STRATA__FOR_EACH(
      STRATA__TE, fv_equals_one_process, gather_rule_and_refusals)};
  int rc = strata_test_main(argc, argv, tests,
                            (int)(sizeof tests / sizeof tests[0]));
  strata_dist_destroy(&D);
  strata_dist_finalize();
  return rc;
}
