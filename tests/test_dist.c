/* Several ranks against one: every operator, the heat, wave and FDTD
 * solvers on a grid split over however many ranks mpirun started (CTest
 * runs this with 1, 2 and 4), compared bit for bit with the same problem
 * solved on rank 0 by the ordinary one-process path.  Uneven splits
 * (sizes not divisible by the rank count), every boundary kind including
 * wrap-around along the split axis, fp32 and fp64, overlap on and off.
 *
 * STRATA_TEST_BACKEND=cuda runs it on GPUs (one rank per GPU, NCCL).
 * Every rank makes the same collective calls in the same order; only rank
 * 0 checks, after the last collective of a test. */
#include "reference.h"
#include "runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static strata_dist *D;       /* overlap on */
static strata_dist *D_plain; /* overlap off */
static int ranks_y;          /* --yz: 2 ranks along y (odd counts: 1) */
static int skip_all;
static char skip_why[256];

static strata_status make_dist_tuned(int overlap, const char *tuning,
                                     strata_dist **out) {
  strata_context_options co;
  strata_context_options_init(&co);
  co.tuning = tuning;
  co.backend = ref_test_backend();
  co.autotune = 0; /* the fixed variant table, as the ranks use */
  co.tune_cache = "";
  co.errbuf = skip_why;
  co.errbuf_size = sizeof skip_why;
  strata_dist_options o;
  strata_dist_options_init(&o);
  o.overlap = overlap;
  o.ranks_y = ranks_y;
  return strata_dist_create(&co, &o, out);
}

static strata_status make_dist(int overlap, strata_dist **out) {
  return make_dist_tuned(overlap, NULL, out);
}

static int rank0(void) { return strata_dist_rank(D) == 0; }

/* The index of the first of cnt values of es bytes where a and b differ,
 * or cnt when they are the same bits. */
static size_t first_diff(const unsigned char *a, const unsigned char *b,
                         size_t cnt, size_t es) {
  for (size_t q = 0; q < cnt; q++)
    if (memcmp(a + q * es, b + q * es, es) != 0) return q;
  return cnt;
}

/* ---- operators ---------------------------------------------------------- */

typedef struct {
  const char *name;
  int dims;
  strata_stencil op;
} op_case;

static int make_ops(op_case *c) {
  int n = 0;
  double coef[4] = {0.3, -0.11, 0.05, -0.02};
  c[n].name = "7-point";
  c[n].dims = 3;
  strata_stencil_star(&c[n++].op, 3, 1, -6.1, coef);
  c[n].name = "25-point";
  c[n].dims = 3;
  strata_stencil_laplacian(&c[n++].op, 3, 8, 0.7);
  c[n].name = "sym27";
  c[n].dims = 3;
  strata_stencil_box_symmetric(&c[n++].op, -2.5, 0.21, 0.07, 0.013);
  double K[27];
  for (int q = 0; q < 27; q++) K[q] = ref_hash_point(q, 1, 2, NULL);
  c[n].name = "box27";
  c[n].dims = 3;
  strata_stencil_box(&c[n++].op, 3, K);
  c[n].name = "d/dz order 8";
  c[n].dims = 3;
  strata_stencil_derivative(&c[n++].op, 3, 2, 8, 0.5);
  c[n].name = "d/dx order 4";
  c[n].dims = 3;
  strata_stencil_derivative(&c[n++].op, 3, 0, 4, 0.5);
  c[n].name = "2D 5-point";
  c[n].dims = 2;
  strata_stencil_star(&c[n++].op, 2, 1, -3.9, coef);
  c[n].name = "2D r=4 star";
  c[n].dims = 2;
  strata_stencil_star(&c[n++].op, 2, 4, -2.0, coef);
  c[n].name = "2D 9-point box";
  c[n].dims = 2;
  strata_stencil_box(&c[n++].op, 2, K);
  return n;
}

static void bc_set(strata_boundary *bc, int which, int dims) {
  switch (which) {
  case 0: strata_boundary_uniform(bc, STRATA_BC_DIRICHLET, 0.25); break;
  case 1: strata_boundary_uniform(bc, STRATA_BC_NEUMANN, 0); break;
  case 2: strata_boundary_uniform(bc, STRATA_BC_PERIODIC, 0); break;
  default: /* mixed: periodic x, Neumann y, Dirichlet/Neumann on the last */
    strata_boundary_uniform(bc, STRATA_BC_PERIODIC, 0);
    bc->kind[2] = bc->kind[3] = STRATA_BC_NEUMANN;
    if (dims == 3) {
      bc->kind[4] = STRATA_BC_DIRICHLET;
      bc->value[4] = -1.5;
      bc->kind[5] = STRATA_BC_NEUMANN;
    } else {
      bc->kind[2] = STRATA_BC_DIRICHLET;
      bc->value[2] = 0.5;
    }
    break;
  }
}

static const char *bc_names[] = {"dirichlet", "neumann", "periodic", "mixed"};

/* One operator, precision and boundary set on dist d: 0 = equal. */
static int one_apply(strata_dist *d, const op_case *c, strata_precision p,
                     int bcw, long *checked) {
  strata_context *ctx = strata_dist_context(d);
  const int P = strata_dist_size(d);
  /* at least radius planes per rank, uneven split */
  size_t nz = (size_t)(P * (c->op.radius + 2) + 3);
  strata_field_desc gd = {c->dims, {37, 29, 1}, c->op.radius, p};
  if (c->dims == 3) {
    gd.n[1] = 23;
    gd.n[2] = nz < 19 ? 19 : nz;
  } else {
    gd.n[1] = nz < 41 ? 41 : nz;
  }
  strata_boundary bc;
  bc_set(&bc, bcw, c->dims);
  strata_field *in = NULL, *out = NULL;
  CHECK_OK(strata_dist_field_create(d, &gd, &in), ctx);
  CHECK_OK(strata_dist_field_create(d, &gd, &out), ctx);
  CHECK_OK(strata_field_fill_random(in, 1234 + (uint64_t)bcw, -1, 1), ctx);
  { /* the owned values only: every ghost must come from the exchange or
     * the boundary conditions */
    strata_field_window w;
    CHECK_OK(strata_field_get_window(in, &w), ctx);
    size_t own = gd.n[0] * w.owned_count *
                 (c->dims == 3 ? w.owned_count_y : 1) * (size_t)p;
    void *mine = malloc(own);
    CHECK(mine);
    CHECK_OK(strata_field_read(in, mine), ctx);
    CHECK_OK(strata_field_fill(in, NAN), ctx);
    CHECK_OK(strata_field_write(in, mine), ctx);
    free(mine);
  }
  CHECK_OK(strata_field_fill(out, NAN), ctx); /* poison */
  CHECK_OK(strata_dist_apply(&c->op, in, &bc, out, NULL), ctx);
  size_t cnt = gd.n[0] * gd.n[1] * gd.n[2], es = (size_t)p;
  unsigned char *got = rank0() ? malloc(cnt * es) : NULL;
  CHECK_OK(strata_dist_gather(out, 0, got), ctx);
  double nd = 0;
  CHECK_OK(strata_field_norm(out, STRATA_NORM_L2, &nd), ctx);
  strata_field_destroy(&in);
  strata_field_destroy(&out);
  if (!rank0()) return 0;
  /* the one-process answer, on rank 0's context */
  strata_field *a = NULL, *b = NULL;
  unsigned char *want = malloc(cnt * es);
  CHECK(got && want);
  CHECK_OK(strata_field_create(ctx, &gd, &a), ctx);
  CHECK_OK(strata_field_create(ctx, &gd, &b), ctx);
  CHECK_OK(strata_field_fill_random(a, 1234 + (uint64_t)bcw, -1, 1), ctx);
  CHECK_OK(strata_field_fill(b, NAN), ctx);
  CHECK_OK(strata_field_fill_ghosts(a, &bc), ctx);
  CHECK_OK(strata_apply(&c->op, a, b, NULL), ctx);
  CHECK_OK(strata_field_read(b, want), ctx);
  double n1 = 0;
  CHECK_OK(strata_field_norm(b, STRATA_NORM_L2, &n1), ctx);
  strata_field_destroy(&a);
  strata_field_destroy(&b);
  size_t bad = first_diff(got, want, cnt, es);
  free(got);
  free(want);
  CHECKF(bad == cnt,
         "%s %s %s on %d ranks, %d along y (%zux%zux%zu): first difference "
         "at point %zu", c->name, p == STRATA_F32 ? "fp32" : "fp64",
         bc_names[bcw], P, c->dims == 3 && ranks_y ? ranks_y : 1, gd.n[0],
         gd.n[1], gd.n[2], bad);
  CHECKF(fabs(nd - n1) <= 1e-12 * n1, "collective norm %.17g vs %.17g", nd,
         n1);
  (*checked)++;
  return 0;
}

static int apply_all(strata_dist *d) {
  if (skip_all) SKIP("%s", skip_why);
  op_case c[16];
  int n = make_ops(c);
  long checked = 0;
  for (int i = 0; i < n; i++)
    for (int p = 0; p < 2; p++)
      for (int b = 0; b < 4; b++)
        if (one_apply(d, &c[i], p ? STRATA_F64 : STRATA_F32, b, &checked))
          return 1;
  if (rank0())
    printf("  %ld operator x precision x boundary cases equal one rank's "
           "bit for bit on %d ranks, 3D ones %d along y (%s)\n",
           checked, strata_dist_size(d), ranks_y ? ranks_y : 1,
           strata_dist_transport(d));
  return 0;
}

TEST(operators_overlapped) { return apply_all(D); }
TEST(operators_not_overlapped) { return apply_all(D_plain); }

/* ---- heat ----------------------------------------------------------------- */

static double bump(long i, long j, long k, void *u) {
  (void)u;
  return ref_hash_point(i, j, k, NULL) +
         0.5 * sin(0.3 * (double)i + 0.2 * (double)j + 0.1 * (double)k);
}

/* thin: 1, slabs of 5 planes (rows in 2D) a rank, where an automatic fuse
 * must shrink to 3 (3 ghost planes and 2 recomputed); 2, slabs of 12 or
 * 13, where fused sweeps of up to 4 steps have inner planes to compute
 * while the exchange travels.  dd: the group (overlap on or off). */
static int one_heat(strata_dist *dd, int dims, strata_heat_operator op,
                    int fuse, int bcw, strata_precision p, long steps,
                    int thin) {
  strata_context *ctx = strata_dist_context(dd);
  const int P = strata_dist_size(dd);
  strata_heat_options o;
  strata_heat_options_init(&o);
  o.dims = dims;
  o.op = op;
  o.precision = p;
  o.fuse = fuse;
  o.D = op == STRATA_HEAT_FD ? 0.9 / (2.0 * dims) : 0.4;
  if (dims == 2) {
    o.n[0] = 45;
    o.n[1] = (size_t)(thin == 1 ? P * 5 + 2 : P * 16 + 3);
    o.n[2] = 1;
  } else {
    o.n[0] = 21;
    o.n[1] = 19;
    o.n[2] = (size_t)(thin == 2 ? P * 12 + 3 : P * 5 + 2);
  }
  if (dims == 2 && thin == 2) o.n[1] = (size_t)(P * 12 + 3);
  bc_set(&o.bc, bcw, dims);
  size_t cnt = o.n[0] * o.n[1] * o.n[2], es = (size_t)p;
  unsigned char *got = rank0() ? malloc(cnt * es) : NULL;
  strata_heat *h = NULL;
  o.dist = dd;
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  CHECK_OK(strata_heat_set_initial(h, bump, NULL), ctx);
  CHECK_OK(strata_heat_step(h, steps), ctx);
  CHECK_OK(strata_heat_read(h, got), ctx);
  strata_heat_info info;
  strata_heat_get_info(h, &info);
  strata_field_window hw;
  CHECK_OK(strata_field_get_window(strata_heat_field(h), &hw), ctx);
  strata_heat_destroy(&h);
  if (fuse == 0 && P > 1) { /* each part holds what the chosen depth needs */
    const int py = dims == 3 ? hw.ranks_y : 1;
    size_t thin = o.n[dims - 1] / (size_t)(P / py);
    if (py > 1 && o.n[1] / (size_t)py < thin) thin = o.n[1] / (size_t)py;
    CHECKF(2L * info.fuse - 1 <= (long)thin,
           "automatic fuse %d on parts of %zu planes", info.fuse, thin);
  }
  if (!rank0()) return 0;
  /* one process at the depth the ranks used: fused sweeps of different
   * depths round alike on the CPU engine but not on a GPU (FMA) */
  o.dist = NULL;
  o.fuse = info.fuse;
  unsigned char *want = malloc(cnt * es);
  CHECK(got && want);
  CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
  CHECK_OK(strata_heat_set_initial(h, bump, NULL), ctx);
  CHECK_OK(strata_heat_step(h, steps), ctx);
  CHECK_OK(strata_heat_read(h, want), ctx);
  strata_heat_destroy(&h);
  size_t bad = first_diff(got, want, cnt, es);
  free(got);
  free(want);
  CHECKF(bad == cnt,
         "heat %dD %s fuse %d (in use %d) %s %s, %ld steps on %d ranks, "
         "overlap %s, %d ranks along y: first difference at point %zu",
         dims, op == STRATA_HEAT_FD ? "FD" : "FE27", fuse, info.fuse,
         bc_names[bcw], p == STRATA_F32 ? "fp32" : "fp64", steps, P,
         dd == D ? "on" : "off", dims == 3 ? hw.ranks_y : 1, bad);
  return 0;
}

TEST(heat_equals_one_rank) {
  if (skip_all) SKIP("%s", skip_why);
  int n = 0;
  for (int b = 0; b < 4; b++) {
    for (int p = 0; p < 2; p++) {
      strata_precision pr = p ? STRATA_F64 : STRATA_F32;
      if (one_heat(D, 3, STRATA_HEAT_FD, 1, b, pr, 11, 0)) return 1;
      if (one_heat(D, 3, STRATA_HEAT_FE27, 1, b, pr, 7, 0)) return 1;
      n += 2;
      /* fused sweeps with inner planes (the last sweep partial), the
       * exchange overlapped and not */
      for (int ov = 0; ov < 2; ov++) {
        strata_dist *dd = ov ? D : D_plain;
        if (one_heat(dd, 3, STRATA_HEAT_FD, 4, b, pr, 10, 2)) return 1;
        if (one_heat(dd, 3, STRATA_HEAT_FE27, 2, b, pr, 5, 2)) return 1;
        if (one_heat(dd, 2, STRATA_HEAT_FD, 3, b, pr, 8, 2)) return 1;
        n += 3;
      }
    }
    /* fused steps (the engine's choice, then 3 with a partial last sweep;
     * the engine's choice on slabs of 5: 3D 7-point 4 on CUDA, 2D 8) */
    if (one_heat(D, 2, STRATA_HEAT_FD, 0, b, STRATA_F64, 21, 0)) return 1;
    if (one_heat(D, 2, STRATA_HEAT_FD, 3, b, STRATA_F32, 13, 0)) return 1;
    if (one_heat(D, 2, STRATA_HEAT_FD, 1, b, STRATA_F32, 9, 0)) return 1;
    if (one_heat(D, 2, STRATA_HEAT_FD, 0, b, STRATA_F32, 10, 1)) return 1;
    if (one_heat(D, 3, STRATA_HEAT_FD, 0, b, STRATA_F32, 10, 0)) return 1;
    n += 5;
  }
  if (rank0())
    printf("  %d heat runs equal one rank's bit for bit on %d ranks\n", n,
           strata_dist_size(D));
  return 0;
}

/* The automatic fuse over several ranks follows the model of
 * docs/distributed.md, whose machine numbers the tuning switches set: a
 * link that costs nothing keeps the engine's depth (2D: 8), a link whose
 * bytes dominate picks 1 when the exchange overlaps (the exchange a step
 * is the same at every depth; deeper sweeps only add work at the faces)
 * and keeps 8 when it does not (then fusing still saves compute), a link
 * whose latency dominates keeps 8 (one exchange for 8 steps).  One rank:
 * always the engine's depth.  Each choice gives one rank's bits. */
TEST(heat_fuse_model_choices) {
  if (skip_all) SKIP("%s", skip_why);
  static const struct {
    int overlap;
    const char *tuning;
    int want;
  } c[] = {
      {1, "dist_mem_gbs=10,dist_link_gbs=1e9,dist_link_us=0", 8},
      {1, "dist_mem_gbs=10,dist_link_gbs=0.001,dist_link_us=0", 1},
      {0, "dist_mem_gbs=10,dist_link_gbs=0.001,dist_link_us=0", 8},
      {1, "dist_mem_gbs=10,dist_link_gbs=1e9,dist_link_us=1e6", 8},
  };
  const int P = strata_dist_size(D);
  for (size_t q = 0; q < sizeof c / sizeof c[0]; q++) {
    strata_dist *dd = NULL;
    strata_status st = make_dist_tuned(c[q].overlap, c[q].tuning, &dd);
    CHECKF(st == STRATA_OK, "dist_create with %s: %s", c[q].tuning,
           skip_why);
    strata_context *ctx = strata_dist_context(dd);
    strata_heat_options o;
    strata_heat_options_init(&o);
    o.dims = 2;
    o.n[0] = 45;
    o.n[1] = (size_t)(P * 200 + 3);
    o.precision = STRATA_F32;
    o.dist = dd;
    strata_heat *h = NULL;
    CHECK_OK(strata_heat_create(ctx, &o, &h), ctx);
    strata_heat_info info;
    CHECK_OK(strata_heat_get_info(h, &info), ctx);
    strata_heat_destroy(&h);
    const int want = P == 1 ? 8 : c[q].want;
    CHECKF(info.fuse == want, "%s, overlap %d, %d ranks: fuse %d, the model "
           "gives %d", c[q].tuning, c[q].overlap, P, info.fuse, want);
    if (one_heat(dd, 2, STRATA_HEAT_FD, 0, 1, STRATA_F32, 19, 0)) return 1;
    strata_dist_destroy(&dd);
  }
  if (rank0())
    printf("  the automatic fuse follows the exchange model on %d ranks\n",
           P);
  return 0;
}

/* The split chosen by the exchange model when the group leaves ranks_y
 * open (docs/distributed.md): a link that costs nothing keeps slabs (a
 * y-z split only adds packing and recomputed rows), a link slow for its
 * bytes on a grid long in y takes the split whose faces are smallest (the
 * x-z faces of 16 x 32 points instead of x-y faces of 16 x 64).  Heat on
 * the chosen split equals one rank's bit for bit. */
/* A wave on the model's split: taken with sponges on the y faces; with
 * CPML layers there that the split's y parts cannot hold, slabs instead
 * of a refusal (the model knows nothing of absorbing layers). */
static int wave_split_or_slabs(strata_dist *dd) {
  strata_context *ctx = strata_dist_context(dd);
  for (int cpml = 0; cpml < 2; cpml++) {
    strata_wave_options o;
    strata_wave_options_init(&o);
    o.n[0] = 22;
    o.n[1] = 26; /* 13 or 6 rows a part: under CPML's 6 + 2 x 4 */
    o.n[2] = 22;
    o.h = 10;
    o.absorb_width = 6;
    o.f0 = 12;
    o.dist = dd;
    for (int f = 0; f < 6; f++) o.face[f] = STRATA_WAVE_SPONGE;
    if (cpml) o.face[STRATA_FACE_YLO] = o.face[STRATA_FACE_YHI] = STRATA_WAVE_CPML;
    strata_wave *w = NULL;
    CHECK_OK(strata_wave_create(ctx, &o, &w), ctx);
    strata_field_window win;
    CHECK_OK(strata_field_get_window(strata_wave_field(w, 0), &win), ctx);
    strata_wave_destroy(&w);
    CHECKF(cpml ? win.ranks_y == 1 : win.ranks_y > 1, "wave, %s on the y "
           "faces: %d ranks along y", cpml ? "CPML" : "sponges", win.ranks_y);
  }
  return 0;
}

static int split_model_run(void) {
  static const struct {
    const char *tuning;
    int split; /* 1: a y-z split expected on 2 and 4 ranks */
  } c[] = {
      {"dist_mem_gbs=10,dist_link_gbs=1e9,dist_link_us=0", 0},
      {"dist_mem_gbs=10,dist_link_gbs=0.001,dist_link_us=0", 1},
  };
  const int P = strata_dist_size(D);
  for (size_t q = 0; q < sizeof c / sizeof c[0]; q++) {
    strata_dist *dd = NULL;
    strata_status st = make_dist_tuned(1, c[q].tuning, &dd);
    CHECKF(st == STRATA_OK, "dist_create with %s: %s", c[q].tuning,
           skip_why);
    strata_context *ctx = strata_dist_context(dd);
    strata_field_desc gd = {3, {16, 64, 32}, 1, STRATA_F32};
    strata_field *f = NULL;
    CHECK_OK(strata_dist_field_create(dd, &gd, &f), ctx);
    strata_field_window w;
    CHECK_OK(strata_field_get_window(f, &w), ctx);
    strata_field_destroy(&f);
    /* two ranks: 2 x 1; four: 4 x 1 (x-z faces of 16 x 32 against 2 x
     * 2's x-z and x-y faces of 16 x 16 and 16 x 32); GPUs: slabs */
    const int cuda = strata_context_backend(ctx) == STRATA_BACKEND_CUDA;
    const int want = !cuda && c[q].split && (P == 2 || P == 4) ? P : 1;
    CHECKF(w.ranks_y == want, "%s on %d ranks: %d ranks along y, the model "
           "gives %d", c[q].tuning, P, w.ranks_y, want);
    if (one_heat(dd, 3, STRATA_HEAT_FD, 2, 2, STRATA_F32, 7, 2)) return 1;
    if (want > 1 && wave_split_or_slabs(dd)) return 1;
    strata_dist_destroy(&dd);
  }
  /* GPUs: the model's choice is slabs, and an asked y-z split is taken */
  if (strata_context_backend(strata_dist_context(D)) == STRATA_BACKEND_CUDA &&
      P % 2 == 0) {
    strata_dist *dd = NULL;
    ranks_y = 2;
    strata_status st = make_dist(1, &dd);
    ranks_y = 0;
    CHECKF(st == STRATA_OK && dd, "ranks_y = 2 on GPUs: %s (%s)",
           strata_status_name(st), skip_why);
    if (one_heat(dd, 3, STRATA_HEAT_FD, 2, 2, STRATA_F32, 7, 2)) return 1;
    strata_dist_destroy(&dd);
  }
  if (rank0())
    printf("  the split follows the exchange model on %d ranks\n", P);
  return 0;
}

TEST(split_model_choices) {
  if (skip_all) SKIP("%s", skip_why);
  const int saved = ranks_y;
  ranks_y = 0; /* the model's choice */
  int r = split_model_run();
  ranks_y = saved;
  return r;
}

/* ---- wave: tests/test_dist_wave.inc --------------------------------------- */
#include "test_dist_wave.inc"

/* ---- FDTD ----------------------------------------------------------------- */

static int one_fdtd(strata_fdtd_scheme scheme, int faces, strata_precision p) {
  strata_context *ctx = strata_dist_context(D);
  const int P = strata_dist_size(D);
  strata_fdtd_options o;
  strata_fdtd_options_init(&o);
  o.scheme = scheme;
  o.precision = p;
  o.n[0] = 47;
  o.n[1] = (size_t)(P * 15 + 2);
  o.pml_width = 6;
  o.src[0] = 20;
  o.src[1] = 15; /* on rank 1's first row with several ranks */
  o.waveform = STRATA_FDTD_GAUSSIAN;
  o.period = 8;
  o.delay = 10;
  const char *fname = "PEC";
  switch (faces) {
  case 0: break;
  case 1:
    for (int q = 0; q < 4; q++) o.face[q] = STRATA_FDTD_MUR;
    fname = "Mur";
    break;
  case 2:
    for (int q = 0; q < 4; q++) o.face[q] = STRATA_FDTD_PML;
    fname = "PML";
    break;
  default:
    for (int q = 0; q < 4; q++) o.face[q] = STRATA_FDTD_PERIODIC;
    o.face[0] = o.face[1] = STRATA_FDTD_PML;
    fname = "periodic y, PML x";
    break;
  }
  const long steps = 70;
  size_t cnt = o.n[0] * o.n[1], es = (size_t)p;
  int ncomp = scheme == STRATA_FDTD_YEE_TM ? 3 : 2;
  strata_fdtd_component comp[3] = {STRATA_FDTD_EZ,
                                   scheme == STRATA_FDTD_YEE_TM
                                       ? STRATA_FDTD_HX
                                       : STRATA_FDTD_EZ_PREV,
                                   STRATA_FDTD_HY};
  unsigned char *got = rank0() ? malloc(3 * cnt * es) : NULL;
  strata_fdtd *f = NULL;
  o.dist = D;
  CHECK_OK(strata_fdtd_create(ctx, &o, &f), ctx);
  CHECK_OK(strata_fdtd_step(f, steps), ctx);
  for (int c = 0; c < ncomp; c++)
    CHECK_OK(strata_fdtd_read(f, comp[c], got ? got + c * cnt * es : NULL),
             ctx);
  strata_fdtd_destroy(&f);
  if (!rank0()) return 0;
  o.dist = NULL;
  unsigned char *want = malloc(3 * cnt * es);
  CHECK(got && want);
  CHECK_OK(strata_fdtd_create(ctx, &o, &f), ctx);
  CHECK_OK(strata_fdtd_step(f, steps), ctx);
  for (int c = 0; c < ncomp; c++)
    CHECK_OK(strata_fdtd_read(f, comp[c], want + c * cnt * es), ctx);
  strata_fdtd_destroy(&f);
  size_t bad = 3 * cnt;
  double mx = 0;
  for (size_t q = 0; q < (size_t)ncomp * cnt; q++) {
    if (bad == 3 * cnt && memcmp(got + q * es, want + q * es, es) != 0)
      bad = q;
    double v = p == STRATA_F32 ? ((float *)want)[q] : ((double *)want)[q];
    if (fabs(v) > mx) mx = fabs(v);
  }
  free(got);
  free(want);
  CHECKF(mx > 0, "no field (all zero)");
  CHECKF(bad == 3 * cnt,
         "fdtd %s %s %s on %d ranks: first difference in component %zu at "
         "point %zu", scheme == STRATA_FDTD_YEE_TM ? "Yee" : "explicit", fname,
         p == STRATA_F32 ? "fp32" : "fp64", P, bad / cnt, bad % cnt);
  return 0;
}

TEST(fdtd_equals_one_rank) {
  if (skip_all) SKIP("%s", skip_why);
  for (int s = 0; s < 2; s++)
    for (int fc = 0; fc < 4; fc++)
      for (int p = 0; p < 2; p++)
        if (one_fdtd(s ? STRATA_FDTD_YEE_TM : STRATA_FDTD_EXPLICIT, fc,
                     p ? STRATA_F64 : STRATA_F32))
          return 1;
  if (rank0())
    printf("  16 FDTD runs (explicit and Yee; PEC, Mur, PML, periodic) "
           "equal one rank's on %d ranks\n", strata_dist_size(D));
  return 0;
}

/* ---- refusals ------------------------------------------------------------- */

TEST(refuses_slabs_thinner_than_the_halo) {
  if (skip_all) SKIP("%s", skip_why);
  strata_context *ctx = strata_dist_context(D);
  const int P = strata_dist_size(D);
  if (P < 2) SKIP("one rank: no slab to be too thin");
  const int py = ranks_y ? ranks_y : 1, pz = P / py;
  /* 6 rows along y: no y-z split the model could choose instead */
  strata_field_desc gd = {3, {16, 6, (size_t)(4 * pz - 1)}, 4, STRATA_F32};
  strata_field *f = NULL;
  if (pz > 1) {
    CHECK_STATUS(strata_dist_field_create(D, &gd, &f), STRATA_EINVAL, ctx);
    CHECK(f == NULL);
    CHECK(strstr(strata_context_error(ctx), "fewer than the 4") != NULL);
  }
  if (py > 1) { /* rows along y too few for the ghost width */
    gd.n[1] = (size_t)(4 * py - 1);
    gd.n[2] = 64;
    CHECK_STATUS(strata_dist_field_create(D, &gd, &f), STRATA_EINVAL, ctx);
    CHECK(f == NULL);
    CHECKF(strstr(strata_context_error(ctx), "along y") != NULL &&
               strstr(strata_context_error(ctx), "fewer than the 4") != NULL,
           "%s", strata_context_error(ctx));
  }
  /* a CPML layer deeper than the slab at its face */
  strata_wave_options o;
  strata_wave_options_init(&o);
  o.n[0] = o.n[1] = 28;
  o.n[2] = (size_t)(13 * P); /* 13 planes a rank: the layer needs 16 */
  o.absorb_width = 8;
  o.dist = D;
  strata_wave *w = NULL;
  CHECK_STATUS(strata_wave_create(ctx, &o, &w), STRATA_EINVAL, ctx);
  CHECKF(strstr(strata_context_error(ctx), "CPML") != NULL, "%s",
         strata_context_error(ctx));
  /* a 1D field cannot be split */
  strata_field_desc d1 = {1, {100, 1, 1}, 1, STRATA_F64};
  CHECK_STATUS(strata_dist_field_create(D, &d1, &f), STRATA_EINVAL, ctx);
  return 0;
}

TEST(split_and_window) {
  if (skip_all) SKIP("%s", skip_why);
  const int P = strata_dist_size(D);
  size_t lo, cnt, total = 0;
  for (int r = 0; r < P; r++) {
    CHECK(strata_dist_split(D, 103, r, &lo, &cnt) == STRATA_OK);
    CHECK(lo == total);
    CHECK(cnt == 103 / (size_t)P || cnt == 103 / (size_t)P + 1);
    total += cnt;
  }
  CHECK(total == 103);
  strata_field_desc gd = {3, {9, 8, 103}, 2, STRATA_F64};
  strata_field *f = NULL;
  strata_context *ctx = strata_dist_context(D);
  CHECK_OK(strata_dist_field_create(D, &gd, &f), ctx);
  strata_field_window w;
  CHECK_OK(strata_field_get_window(f, &w), ctx);
  /* ranks in rows of py along y: rank = cz py + cy */
  const int py = ranks_y ? ranks_y : 1, me = strata_dist_rank(D);
  CHECK(w.ranks_y == py);
  size_t ylo = 0, ycnt = 8;
  if (py > 1) { /* the y split is the same split over py parts */
    ylo = (size_t)(me % py) * (8 / (size_t)py) +
          ((size_t)(me % py) < 8 % (size_t)py ? (size_t)(me % py)
                                              : 8 % (size_t)py);
    ycnt = 8 / (size_t)py + ((size_t)(me % py) < 8 % (size_t)py);
  }
  lo = 0;
  cnt = 103;
  for (int c = 0, pz = P / py; c <= me / py; c++) {
    lo = c == 0 ? 0 : lo + cnt;
    cnt = 103 / (size_t)pz + ((size_t)c < 103 % (size_t)pz);
  }
  if (py == 1) { /* slabs: strata_dist_split's planes */
    size_t l2, c2;
    strata_dist_split(D, 103, me, &l2, &c2);
    CHECK(l2 == lo && c2 == cnt);
  }
  CHECK(w.distributed == 1 && w.axis == 2 && w.global_n[2] == 103);
  CHECK(w.owned_lo == lo && w.owned_count == cnt && w.offset == lo);
  CHECKF(w.owned_lo_y == ylo && w.owned_count_y == ycnt && w.offset_y == ylo,
         "rows %zu+%zu (offset %zu), expected %zu+%zu", w.owned_lo_y,
         w.owned_count_y, w.offset_y, ylo, ycnt);
  strata_field_desc ld;
  strata_field_get_desc(f, &ld);
  CHECK(ld.n[2] == cnt && ld.n[0] == 9 && ld.n[1] == ycnt);
  { /* a scatter from rank 0 and a gather back give the same array */
    const size_t cnt = 9 * 8 * 103;
    double *a = malloc(cnt * sizeof *a), *b = malloc(cnt * sizeof *b);
    CHECK(a && b);
    for (size_t i = 0; i < cnt; i++) a[i] = (double)i;
    memset(b, 0, cnt * sizeof *b);
    CHECK_OK(strata_dist_scatter(f, 0, a), ctx);
    CHECK_OK(strata_dist_gather(f, 0, b), ctx);
    const int same = !rank0() || memcmp(a, b, cnt * sizeof *a) == 0;
    free(a);
    free(b);
    CHECKF(same, "scatter then gather on %d ranks, %d along y changed the "
           "array", P, py);
  }
  /* fill_fn sees global indices; the collective sum knows the whole grid */
  CHECK_OK(strata_field_fill(f, 1.0), ctx);
  double sum = 0;
  CHECK_OK(strata_field_norm(f, STRATA_NORM_SUM, &sum), ctx);
  CHECKF(sum == 9.0 * 8 * 103, "sum %g", sum);
  /* strata_field_fill_ghosts on a distributed field exchanges too: then a
   * plain strata_apply gives what strata_dist_apply gives */
  strata_field *g = NULL, *o1 = NULL, *o2 = NULL;
  CHECK_OK(strata_dist_field_create(D, &gd, &g), ctx);
  CHECK_OK(strata_dist_field_create(D, &gd, &o1), ctx);
  CHECK_OK(strata_dist_field_create(D, &gd, &o2), ctx);
  CHECK_OK(strata_field_fill_random(g, 99, -1, 1), ctx);
  strata_boundary bc;
  strata_boundary_uniform(&bc, STRATA_BC_PERIODIC, 0);
  strata_stencil op;
  double cf[2] = {0.5, -0.125};
  strata_stencil_star(&op, 3, 2, -1.0, cf);
  CHECK_OK(strata_dist_apply(&op, g, &bc, o1, NULL), ctx);
  CHECK_OK(strata_field_fill(g, NAN), ctx); /* ghosts must come back */
  CHECK_OK(strata_field_fill_random(g, 99, -1, 1), ctx);
  CHECK_OK(strata_field_fill_ghosts(g, &bc), ctx);
  strata_apply_options ao;
  memset(&ao, 0, sizeof ao);
  if (strata_context_backend(ctx) == STRATA_BACKEND_CUDA) {
    /* the fixed table's kernel for this star: the tensor-copy walk from
     * compute capability 9.0 on */
    strata_device_info di;
    CHECK_OK(strata_context_device_info(ctx, &di), ctx);
    ao.variant = di.cc_major >= 9 ? "streamtma" : "streamcp";
  }
  CHECK_OK(strata_apply(&op, g, o2, &ao), ctx);
  double dd = -1;
  CHECK_OK(strata_field_diff(o1, o2, STRATA_NORM_MAX, &dd), ctx);
  CHECKF(dd == 0, "fill_ghosts + apply differs from dist_apply by %g", dd);
  strata_field_destroy(&g);
  strata_field_destroy(&o1);
  strata_field_destroy(&o2);
  strata_field_destroy(&f);
  return 0;
}

/* ---- checkpoints: tests/test_dist_restart.inc -------------------------- */
#include "test_dist_restart.inc"

int main(int argc, char **argv) {
  /* --yz: every test again on a y-z split of 3D grids (2 ranks along y,
   * on odd rank counts 1); FDTD, which is 2D, stays on slabs */
  const int yz = argc > 1 && strcmp(argv[1], "--yz") == 0;
  if (yz) {
    argc--;
    argv++;
  }
  if (!strata_dist_available(skip_why, sizeof skip_why)) {
    skip_all = 1;
  } else {
    strata_status s = make_dist(1, &D);
    if (s == STRATA_OK && yz) {
      ranks_y = strata_dist_size(D) % 2 == 0 ? 2 : 1;
      strata_dist_destroy(&D);
      s = make_dist(1, &D);
    }
    if (s == STRATA_OK) s = make_dist(0, &D_plain);
    if (s != STRATA_OK) {
      if (s != STRATA_ENOBACKEND && s != STRATA_ENOTSUP) {
        fprintf(stderr, "strata_dist_create: %s: %s\n", strata_status_name(s),
                skip_why);
        strata_dist_destroy(&D);
        strata_dist_finalize();
        return 1;
      }
      skip_all = 1;
    }
  }
  if (!skip_all && !rank0()) /* the other ranks: the same calls, quietly */
    if (!freopen("/dev/null", "w", stdout)) return 1;
  static const strata_test_entry tests[] = {
      STRATA__FOR_EACH(STRATA__TE, operators_overlapped,
                       operators_not_overlapped, heat_equals_one_rank,
                       heat_fuse_model_choices, split_model_choices,
                       wave_equals_one_rank, fdtd_equals_one_rank,
                       refuses_slabs_thinner_than_the_halo, split_and_window,
                       checkpoint_restart_over_ranks)};
  int rc = strata_test_main(argc, argv, tests,
                            (int)(sizeof tests / sizeof tests[0]));
  strata_dist_destroy(&D_plain);
  strata_dist_destroy(&D);
  strata_dist_finalize();
  return rc;
}
