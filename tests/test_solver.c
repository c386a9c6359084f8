/* The solver interface (strata_solver_*) on the CPU engine: every kind
 * through the interface equals the same run through its own API bit for
 * bit; saved states (in memory and as files) continue bit for bit; info;
 * bad arguments and bad images are refused with messages that name the
 * problem; the snapshot writer writes every format from one host copy,
 * byte for byte as the field writers do. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h" /* the context's allocation counter */
#include "reference.h"
#include "runner.h"
#include "strata.h"

/* The interiors of two fields are equal bit for bit. */
static int same_bits(const strata_field *a, const strata_field *b) {
  strata_field_desc d;
  strata_field_get_desc(a, &d);
  size_t n = d.n[0] * d.n[1] * d.n[2] * (size_t)d.precision;
  unsigned char *x = malloc(n), *y = malloc(n);
  int same = x && y && strata_field_read(a, x) == STRATA_OK &&
             strata_field_read(b, y) == STRATA_OK && !memcmp(x, y, n);
  free(x);
  free(y);
  return same;
}

static double bump(long i, long j, long k, void *user) {
  (void)user;
  return sin(0.3 * (double)i + 0.1) * cos(0.2 * (double)j) +
         0.01 * (double)k;
}

/* ---- the options of each kind's test case ---------------------------------- */

static void heat_opts(strata_heat_options *o) {
  strata_heat_options_init(o);
  o->dims = 2;
  o->n[0] = 37;
  o->n[1] = 29;
  o->D = 0.2;
  o->bc.kind[STRATA_FACE_XLO] = STRATA_BC_NEUMANN;
  o->bc.value[STRATA_FACE_YHI] = 1.0;
}

static const double receivers[9] = {100, 100, 50, 200, 150, 60, 300, 300, 70};

static void wave_opts(strata_wave_options *o) {
  strata_wave_options_init(o);
  o->n[0] = o->n[1] = o->n[2] = 40;
  o->absorb_width = 6;
  o->face[STRATA_FACE_ZLO] = STRATA_WAVE_FREE;
  o->face[STRATA_FACE_XLO] = STRATA_WAVE_SPONGE;
  o->nreceivers = 3;
  o->receivers = receivers;
  o->record_every = 2;
}

static void fdtd_opts(strata_fdtd_options *o, int yee) {
  strata_fdtd_options_init(o);
  o->n[0] = 61;
  o->n[1] = 47;
  o->scheme = yee ? STRATA_FDTD_YEE_TM : STRATA_FDTD_EXPLICIT;
  o->pml_width = 8;
  o->face[0] = STRATA_FDTD_PML;
  o->face[1] = STRATA_FDTD_MUR;
  o->waveform = STRATA_FDTD_RICKER;
  o->period = 8;
  o->delay = 10;
}

static void mg_opts(strata_mg_options *o) {
  strata_mg_options_init(o);
  o->dims = 3;
  o->n[0] = 17;
  o->n[1] = 15;
  o->n[2] = 13;
  o->disc = STRATA_MG_FD;
  o->bc.kind[STRATA_FACE_ZHI] = STRATA_BC_NEUMANN;
}

static void op_opts(strata_operator_options *o) {
  strata_operator_options_init(o);
  o->n[0] = 33;
  o->n[1] = 21;
  o->precision = STRATA_F64;
  const double c = 0.1;
  strata_stencil_star(&o->op, 2, 1, 0.6, &c);
  o->bc.kind[STRATA_FACE_XLO] = STRATA_BC_NEUMANN;
  o->bc.value[STRATA_FACE_YHI] = 1.0;
  o->init = bump;
}

/* A solver of kind with the options above (fdtd: Yee when yee). */
static strata_status make(strata_context *ctx, strata_solver_kind kind,
                          int yee, uint64_t tag, strata_solver **s) {
  strata_solver_options o;
  strata_solver_options_init(&o, kind);
  o.tag = tag;
  strata_heat_options ho;
  strata_wave_options wo;
  strata_fdtd_options fo;
  strata_mg_options mo;
  strata_operator_options oo;
  switch (kind) {
  case STRATA_SOLVER_HEAT: heat_opts(&ho); o.heat = &ho; break;
  case STRATA_SOLVER_WAVE: wave_opts(&wo); o.wave = &wo; break;
  case STRATA_SOLVER_FDTD: fdtd_opts(&fo, yee); o.fdtd = &fo; break;
  case STRATA_SOLVER_OPERATOR: op_opts(&oo); o.op = &oo; break;
  default: mg_opts(&mo); o.poisson = &mo; break;
  }
  strata_status st = strata_solver_create(ctx, &o, s);
  if (st != STRATA_OK) return st;
  /* a state that is not trivial: the initial fields */
  if (kind == STRATA_SOLVER_HEAT || kind == STRATA_SOLVER_POISSON)
    return strata_field_fill_fn(
        strata_solver_field(*s, kind == STRATA_SOLVER_HEAT ? 0 : 1), bump,
        NULL);
  return STRATA_OK;
}

/* ---- each kind against its own API ---------------------------------------- */

TEST(heat_matches_own_api) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_solver *s = NULL;
  CHECK_OK(make(ctx, STRATA_SOLVER_HEAT, 0, 0, &s), ctx);
  strata_heat_options ho;
  heat_opts(&ho);
  strata_heat *h = NULL;
  CHECK_OK(strata_heat_create(ctx, &ho, &h), ctx);
  CHECK_OK(strata_field_fill_fn(strata_heat_field(h), bump, NULL), ctx);
  CHECK_OK(strata_solver_step(s, 13), ctx);
  CHECK_OK(strata_heat_step(h, 13), ctx);
  CHECK(same_bits(strata_solver_field(s, 0), strata_heat_field(h)));
  strata_solver_info i;
  CHECK_OK(strata_solver_get_info(s, &i), ctx);
  CHECK(i.kind == STRATA_SOLVER_HEAT && i.dims == 2 && i.n[0] == 37 &&
        i.n[1] == 29 && i.n[2] == 1 && i.precision == STRATA_F64);
  CHECK(i.steps == 13 && i.last_steps == 13 && i.time == 13);
  CHECK(i.device_bytes >= 2 * 37 * 29 * 8 && i.bytes_per_point_step > 0);
  CHECK(i.points_per_s > 0);
  CHECK(strata_solver_field_count(s) == 1);
  CHECK(!strcmp(strata_solver_field_name(s, 0), "u"));
  CHECK(strata_solver_heat(s) && !strata_solver_wave(s));
  strata_heat_destroy(&h);
  strata_solver_destroy(&s);
  CHECK(!s);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(wave_matches_own_api) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_solver *s = NULL;
  CHECK_OK(make(ctx, STRATA_SOLVER_WAVE, 0, 0, &s), ctx);
  strata_wave_options wo;
  wave_opts(&wo);
  strata_wave *w = NULL;
  CHECK_OK(strata_wave_create(ctx, &wo, &w), ctx);
  CHECK_OK(strata_solver_step(s, 25), ctx);
  CHECK_OK(strata_wave_step(w, 25), ctx);
  CHECK(same_bits(strata_solver_field(s, 0), strata_wave_field(w, 0)));
  CHECK(same_bits(strata_solver_field(s, 1), strata_wave_field(w, 1)));
  strata_traces t;
  CHECK_OK(strata_solver_traces(s, &t), ctx);
  size_t ns = 0;
  CHECK_OK(strata_wave_traces(w, NULL, 0, &ns), ctx);
  double *own = malloc(3 * ns * sizeof *own);
  CHECK(own);
  CHECK_OK(strata_wave_traces(w, own, 3 * ns, &ns), ctx);
  CHECK(t.ntraces == 3 && t.nsamples == ns && ns == 13);
  CHECK(!memcmp(t.data, own, 3 * ns * sizeof *own));
  CHECK(t.receivers && t.receivers[3] == 200);
  CHECK(t.source[0] == 0.5 * 39 * 10);
  strata_wave_info wi;
  strata_wave_get_info(w, &wi);
  CHECK(t.dt == 2 * wi.dt);
  strata_solver_info i;
  CHECK_OK(strata_solver_get_info(s, &i), ctx);
  CHECK(i.steps == 25 && i.dt == wi.dt && i.time == 25 * wi.dt);
  CHECK(i.bytes_per_point_step == wi.bytes_per_point_step);
  CHECK(strata_solver_field_index(s, "p_prev") == 1);
  free(own);
  strata_wave_destroy(&w);
  strata_solver_destroy(&s);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(fdtd_matches_own_api) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  for (int yee = 0; yee < 2; yee++) {
    strata_solver *s = NULL;
    CHECK_OK(make(ctx, STRATA_SOLVER_FDTD, yee, 0, &s), ctx);
    strata_fdtd_options fo;
    fdtd_opts(&fo, yee);
    strata_fdtd *f = NULL;
    CHECK_OK(strata_fdtd_create(ctx, &fo, &f), ctx);
    CHECK_OK(strata_solver_step(s, 40), ctx);
    CHECK_OK(strata_fdtd_step(f, 40), ctx);
    CHECK(strata_solver_field_count(s) == (yee ? 3 : 2));
    static const strata_fdtd_component yc[3] = {STRATA_FDTD_EZ, STRATA_FDTD_HX,
                                                STRATA_FDTD_HY};
    static const strata_fdtd_component ec[2] = {STRATA_FDTD_EZ,
                                                STRATA_FDTD_EZ_PREV};
    for (int q = 0; q < strata_solver_field_count(s); q++)
      CHECKF(same_bits(strata_solver_field(s, q),
                       strata_fdtd_field(f, yee ? yc[q] : ec[q])),
             "yee %d field %s", yee, strata_solver_field_name(s, q));
    CHECK(!strcmp(strata_solver_field_name(s, 1), yee ? "Hx" : "Ez_prev"));
    strata_solver_info i;
    CHECK_OK(strata_solver_get_info(s, &i), ctx);
    CHECK(i.steps == 40 && i.dt == 0.5 && i.dims == 2 && i.n[2] == 1);
    strata_fdtd_destroy(&f);
    strata_solver_destroy(&s);
  }
  strata_context_destroy(&ctx);
  return 0;
}

TEST(poisson_matches_own_api) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_solver *s = NULL;
  CHECK_OK(make(ctx, STRATA_SOLVER_POISSON, 0, 0, &s), ctx);
  /* step(n): n solves of one cycle without tolerance tests */
  strata_mg_options mo;
  mg_opts(&mo);
  mo.max_cycles = 1;
  mo.rtol = 0;
  mo.atol = 0;
  mo.stall = 0;
  strata_mg *mg = NULL;
  CHECK_OK(strata_mg_create(ctx, &mo, &mg), ctx);
  strata_field_desc d = {3, {17, 15, 13}, 1, STRATA_F64};
  strata_field *phi = NULL, *psi = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &phi), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &psi), ctx);
  CHECK_OK(strata_field_fill_fn(psi, bump, NULL), ctx);
  strata_mg_result r, first;
  memset(&first, 0, sizeof first);
  for (int c = 0; c < 4; c++) {
    CHECK_OK(strata_mg_solve(mg, phi, psi, &r), ctx);
    if (c == 0) first = r;
  }
  CHECK_OK(strata_solver_step(s, 4), ctx);
  CHECK(same_bits(strata_solver_field(s, 0), phi));
  strata_solver_info i;
  CHECK_OK(strata_solver_get_info(s, &i), ctx);
  CHECK(i.steps == 4 && i.residual0 == first.residual0 &&
        i.residual == r.residual && i.residual < 0.5 * i.residual0);
  CHECK(i.dt == 0 && i.time == 0);
  CHECK(i.history && i.history[0] == first.residual0 &&
        i.history[4] == r.residual);
  strata_mg_destroy(&mg);
  /* solve: strata_mg_solve with the options as given */
  strata_solver_destroy(&s);
  CHECK_OK(make(ctx, STRATA_SOLVER_POISSON, 0, 0, &s), ctx);
  mg_opts(&mo);
  CHECK_OK(strata_mg_create(ctx, &mo, &mg), ctx);
  CHECK_OK(strata_field_fill(phi, 0), ctx);
  strata_mg_result a, b;
  CHECK_OK(strata_mg_solve(mg, phi, psi, &a), ctx);
  CHECK_OK(strata_solver_solve(s, &b), ctx);
  CHECK(same_bits(strata_solver_field(s, 0), phi));
  CHECK(a.cycles == b.cycles && a.converged && b.converged &&
        a.residual == b.residual);
  CHECK_OK(strata_solver_get_info(s, &i), ctx);
  CHECK(i.steps == b.cycles && i.residual == b.residual);
  strata_mg_destroy(&mg);
  strata_field_destroy(&phi);
  strata_field_destroy(&psi);
  strata_solver_destroy(&s);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(operator_matches_own_api) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_solver *s = NULL;
  CHECK_OK(make(ctx, STRATA_SOLVER_OPERATOR, 0, 0, &s), ctx);
  strata_operator_options oo;
  op_opts(&oo);
  strata_field_desc d = {2, {33, 21, 1}, 1, STRATA_F64};
  strata_field *u = NULL, *v = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &u), ctx);
  CHECK_OK(strata_field_create(ctx, &d, &v), ctx);
  CHECK_OK(strata_field_fill_fn(u, bump, NULL), ctx);
  for (int i = 0; i < 9; i++) {
    CHECK_OK(strata_field_fill_ghosts(u, &oo.bc), ctx);
    CHECK_OK(strata_apply(&oo.op, u, v, NULL), ctx);
    strata_field *t = u;
    u = v;
    v = t;
  }
  CHECK_OK(strata_solver_step(s, 9), ctx);
  CHECK(same_bits(strata_solver_field(s, 0), u));
  strata_solver_info i;
  CHECK_OK(strata_solver_get_info(s, &i), ctx);
  CHECK(i.kind == STRATA_SOLVER_OPERATOR && i.steps == 9 &&
        i.bytes_per_point_step == 16);
  /* a variant the backend lacks is refused at create */
  oo.variant = "nope";
  strata_solver_options o;
  strata_solver_options_init(&o, STRATA_SOLVER_OPERATOR);
  o.op = &oo;
  strata_solver *bad = NULL;
  CHECK_STATUS(strata_solver_create(ctx, &o, &bad), STRATA_ENOTSUP, ctx);
  CHECK(!bad);
  strata_field_destroy(&u);
  strata_field_destroy(&v);
  strata_solver_destroy(&s);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- saved states ------------------------------------------------------------ */

/* Runs a steps, saves (in memory, or to a file when path), runs b more;
 * a second solver loads the state and runs b: every field is the same. */
static int round_trip(strata_solver_kind kind, int yee, const char *path) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_solver *s = NULL, *t = NULL;
  CHECK_OK(make(ctx, kind, yee, 42, &s), ctx);
  CHECK_OK(strata_solver_step(s, 6), ctx);
  size_t n = 0;
  void *buf = NULL;
  if (path) {
    CHECK_OK(strata_solver_save(s, path), ctx);
  } else {
    CHECK_OK(strata_solver_state_size(s, &n), ctx);
    CHECK(n > 0 && (buf = malloc(n)));
    CHECK_OK(strata_solver_save_state(s, buf, n), ctx);
  }
  CHECK_OK(strata_solver_step(s, 5), ctx);
  CHECK_OK(make(ctx, kind, yee, 42, &t), ctx);
  if (path)
    CHECK_OK(strata_solver_load(t, path), ctx);
  else
    CHECK_OK(strata_solver_load_state(t, buf, n), ctx);
  strata_solver_info i;
  CHECK_OK(strata_solver_get_info(t, &i), ctx);
  CHECK(i.steps == 6);
  CHECK_OK(strata_solver_step(t, 5), ctx);
  for (int q = 0; q < strata_solver_field_count(s); q++)
    CHECKF(same_bits(strata_solver_field(s, q), strata_solver_field(t, q)),
           "%s field %s", strata_solver_kind_name(kind),
           strata_solver_field_name(s, q));
  strata_solver_info a, b;
  CHECK_OK(strata_solver_get_info(s, &a), ctx);
  CHECK_OK(strata_solver_get_info(t, &b), ctx);
  CHECK(a.steps == 11 && b.steps == 11 && a.residual == b.residual &&
        a.residual0 == b.residual0);
  if (kind == STRATA_SOLVER_WAVE) {
    strata_traces ta, tb;
    CHECK_OK(strata_solver_traces(s, &ta), ctx);
    size_t bytes = ta.ntraces * ta.nsamples * sizeof(double);
    double *keep = malloc(bytes);
    CHECK(keep);
    memcpy(keep, ta.data, bytes);
    CHECK_OK(strata_solver_traces(t, &tb), ctx);
    CHECK(tb.nsamples == ta.nsamples && !memcmp(keep, tb.data, bytes));
    free(keep);
  }
  free(buf);
  strata_solver_destroy(&s);
  strata_solver_destroy(&t);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(save_load_memory_continues_bit_for_bit) {
  for (int k = STRATA_SOLVER_HEAT; k <= STRATA_SOLVER_OPERATOR; k++)
    if (round_trip((strata_solver_kind)k, 0, NULL)) return 1;
  return round_trip(STRATA_SOLVER_FDTD, 1, NULL);
}

TEST(save_load_file_continues_bit_for_bit) {
  char path[128];
  snprintf(path, sizeof path, "test_solver_%ld.stck", (long)getpid());
  for (int k = STRATA_SOLVER_HEAT; k <= STRATA_SOLVER_OPERATOR; k++) {
    if (round_trip((strata_solver_kind)k, 0, path)) return 1;
    CHECK(remove(path) == 0); /* the final name, no temporary left */
  }
  return 0;
}

/* A heat checkpoint as the strata program wrote it before the library had
 * the format (version 1: header, one field record, the interior, CRC-32
 * computed bit by bit here) loads, its step restored. */
TEST(program_checkpoint_v1_loads) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_solver *s = NULL;
  CHECK_OK(make(ctx, STRATA_SOLVER_HEAT, 0, 0x1234, &s), ctx);
  const size_t np = 37 * 29;
  size_t len = 48 + 32 + np * 8 + 4;
  unsigned char *b = calloc(1, len);
  CHECK(b);
  uint32_t u32[2] = {1, 1};          /* version, fields */
  uint64_t tag = 0x1234;
  int64_t step = 77;
  uint32_t fd[2] = {2, 8};           /* dims, precision */
  uint64_t fn[3] = {37, 29, 1};
  memcpy(b, "STRATACK", 8);
  memcpy(b + 8, u32, 8);
  memcpy(b + 16, "heat", 4);
  memcpy(b + 32, &tag, 8);
  memcpy(b + 40, &step, 8);
  memcpy(b + 48, fd, 8);
  memcpy(b + 56, fn, 24);
  for (size_t i = 0; i < np; i++) {
    double v = (double)i / 7.0;
    memcpy(b + 80 + 8 * i, &v, 8);
  }
  uint32_t crc = ref_crc32(b, len - 4);
  memcpy(b + len - 4, &crc, 4);
  CHECK_OK(strata_solver_load_state(s, b, len), ctx);
  strata_solver_info i;
  CHECK_OK(strata_solver_get_info(s, &i), ctx);
  CHECK(i.steps == 77);
  double *u = malloc(np * sizeof *u);
  CHECK(u);
  CHECK_OK(strata_solver_read(s, 0, u), ctx);
  CHECK(u[100] == 100 / 7.0 && u[np - 1] == (double)(np - 1) / 7.0);
  /* and what the library writes is that format, byte for byte */
  size_t n = 0;
  CHECK_OK(strata_solver_state_size(s, &n), ctx);
  CHECK(n == len);
  unsigned char *c = malloc(n);
  CHECK(c);
  CHECK_OK(strata_solver_save_state(s, c, n), ctx);
  CHECK(!memcmp(b, c, n));
  free(c);
  free(u);
  free(b);
  strata_solver_destroy(&s);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- refusals ----------------------------------------------------------------- */

static int says(strata_context *ctx, const char *what) {
  const char *m = strata_context_error(ctx);
  if (strstr(m, what)) return 1;
  fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", m, what);
  return 0;
}

TEST(bad_arguments_refused) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_solver *s = NULL;
  CHECK_STATUS(strata_solver_create(ctx, NULL, &s), STRATA_EINVAL, ctx);
  CHECK(says(ctx, "options are NULL") && !s);
  CHECK_ARG(ctx, "o", "NULL");
  strata_solver_options o;
  strata_solver_options_init(&o, (strata_solver_kind)9);
  CHECK_STATUS(strata_solver_create(ctx, &o, &s), STRATA_EINVAL, ctx);
  CHECK(says(ctx, "kind 9 is not one of"));
  CHECK_ARG(ctx, "kind", "9");
  strata_wave_options wo;
  strata_wave_options_init(&wo);
  strata_solver_options_init(&o, STRATA_SOLVER_HEAT);
  o.wave = &wo;
  CHECK_STATUS(strata_solver_create(ctx, &o, &s), STRATA_EINVAL, ctx);
  CHECK(says(ctx, "the kind is heat, but options.wave is set"));
  CHECK_ARG(ctx, "wave", "set");
  /* the kind's own refusal, with its message */
  strata_heat_options ho;
  strata_heat_options_init(&ho);
  ho.D = 0.3;
  strata_solver_options_init(&o, STRATA_SOLVER_HEAT);
  o.heat = &ho;
  CHECK_STATUS(strata_solver_create(ctx, &o, &s), STRATA_EUNSTABLE, ctx);
  CHECK(!s);
  CHECK_ARG(ctx, "D", "0.3"); /* the kind's argument passes through */
  CHECK(strata_solver_kind_name(STRATA_SOLVER_POISSON)[0] == 'p');
  CHECK(!strcmp(strata_solver_kind_name((strata_solver_kind)0), "?"));
  strata_solver_kind k;
  CHECK(strata_solver_kind_parse("fdtd", &k) == STRATA_OK &&
        k == STRATA_SOLVER_FDTD);
  CHECK(strata_solver_kind_parse("multigrid", &k) == STRATA_EINVAL);

  CHECK_OK(make(ctx, STRATA_SOLVER_HEAT, 0, 7, &s), ctx);
  CHECK_STATUS(strata_solver_step(s, -1), STRATA_EINVAL, ctx);
  CHECK(says(ctx, "-1 steps"));
  CHECK_ARG(ctx, "n", "-1");
  CHECK(!strata_solver_field(s, 1) && !strata_solver_field_name(s, -1));
  CHECK(strata_solver_field_index(s, "p") == -1);
  CHECK_STATUS(strata_solver_read(s, 3, NULL), STRATA_EINVAL, ctx);
  CHECK(says(ctx, "field 3; the heat solver has fields 0..0"));
  CHECK_ARG(ctx, "index", "3");
  CHECK_STATUS(strata_solver_solve(s, NULL), STRATA_EINVAL, ctx);
  CHECK(says(ctx, "solve is for the Poisson solver"));
  strata_traces t;
  CHECK_OK(strata_solver_traces(s, &t), ctx);
  CHECK(t.ntraces == 0);
  CHECK_STATUS(strata_solver_save(s, ""), STRATA_EINVAL, ctx);
  CHECK_ARG(ctx, "path", "");
  CHECK_STATUS(strata_solver_load(s, "no/such/file.stck"), STRATA_EIO, ctx);
  CHECK(says(ctx, "cannot open the checkpoint"));
  CHECK_ARG(ctx, "path", "no/such/file.stck");

  /* images: too small a buffer, another kind, another tag, damage */
  size_t n = 0;
  CHECK_OK(strata_solver_state_size(s, &n), ctx);
  unsigned char *buf = malloc(n);
  CHECK(buf);
  CHECK_STATUS(strata_solver_save_state(s, buf, n - 1), STRATA_EINVAL, ctx);
  CHECK(says(ctx, "the state needs"));
  char nv[32];
  snprintf(nv, sizeof nv, "%zu", n - 1);
  CHECK_ARG(ctx, "size", nv);
  CHECK_OK(strata_solver_save_state(s, buf, n), ctx);
  strata_solver *f = NULL, *h2 = NULL;
  CHECK_OK(make(ctx, STRATA_SOLVER_FDTD, 0, 7, &f), ctx);
  CHECK_STATUS(strata_solver_load_state(f, buf, n), STRATA_EINVAL, ctx);
  CHECK(says(ctx, "written by solver 'heat', not 'fdtd'"));
  CHECK_OK(make(ctx, STRATA_SOLVER_HEAT, 0, 8, &h2), ctx);
  CHECK_STATUS(strata_solver_load_state(h2, buf, n), STRATA_EINVAL, ctx);
  CHECK(says(ctx, "written for a different case"));
  buf[n / 2] ^= 1;
  CHECK_STATUS(strata_solver_load_state(s, buf, n), STRATA_EFORMAT, ctx);
  CHECK(says(ctx, "damaged (CRC-32 mismatch)"));
  CHECK_STATUS(strata_solver_load_state(s, "not a checkpoint", 16),
               STRATA_EFORMAT, ctx);
  CHECK(says(ctx, "is not a strata checkpoint"));
  /* another shape */
  strata_heat_options_init(&ho);
  ho.n[0] = 36;
  ho.n[1] = 29;
  strata_solver_options_init(&o, STRATA_SOLVER_HEAT);
  o.heat = &ho;
  o.tag = 7;
  strata_solver *h3 = NULL;
  CHECK_OK(strata_solver_create(ctx, &o, &h3), ctx);
  buf[n / 2] ^= 1;
  CHECK_STATUS(strata_solver_load_state(h3, buf, n), STRATA_EINVAL, ctx);
  CHECK(says(ctx, "field 0 is a 2D grid of 37x29x1 f64, the solver's is a "
                 "2D grid of 36x29x1 f64 (the sizes differ)"));
  free(buf);
  strata_solver_destroy(&h3);
  strata_solver_destroy(&h2);
  strata_solver_destroy(&f);
  strata_solver_destroy(&s);
  strata_solver_destroy(&s); /* NULL is harmless */
  CHECK(strata_solver_field_count(NULL) == 0);
  CHECK(strata_solver_step(NULL, 1) == STRATA_EINVAL);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- the snapshot writer ------------------------------------------------------ */

static int same_file(const char *a, const char *b) {
  size_t na = 0, nb = 0;
  char *x = (char *)ref_slurp(a, &na), *y = (char *)ref_slurp(b, &nb);
  int same = x && y && na == nb && !memcmp(x, y, na);
  if (!same) fprintf(stderr, "  %s and %s differ\n", a, b);
  free(x);
  free(y);
  return same;
}

/* Every format from the one host copy equals the field's own writer. */
TEST(snapshot_writer_matches_field_writers) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  char dir[64];
  snprintf(dir, sizeof dir, "snap_%ld", (long)getpid());
  CHECK(mkdir(dir, 0755) == 0);
  strata_field_desc d = {3, {19, 14, 11}, 2, STRATA_F32};
  strata_field *f = NULL;
  CHECK_OK(strata_field_create(ctx, &d, &f), ctx);
  CHECK_OK(strata_field_fill_fn(f, bump, NULL), ctx);
  for (int async = 0; async < 2; async++) {
    strata_snapshot_options o;
    strata_snapshot_options_init(&o);
    o.dir = dir;
    o.vti = 1;
    o.spacing = 2.5;
    o.field_name = "p";
    o.png_options.axis = 1;
    o.png_options.cmap = STRATA_CMAP_SEISMIC;
    o.async = async;
    strata_snapshot_writer *w = NULL;
    CHECK_OK(strata_snapshot_writer_create(ctx, &d, &o, &w), ctx);
    CHECK_OK(strata_snapshot_submit(w, f, "a"), ctx);
    void *host = strata_snapshot_acquire(w);
    CHECK(host);
    CHECK_OK(strata_field_read(f, host), ctx);
    CHECK_OK(strata_snapshot_submit_host(w, host, "b"), ctx);
    CHECK_OK(strata_snapshot_flush(w), ctx);
    CHECK(strata_snapshot_busy_seconds(w) > 0);
    strata_snapshot_writer_destroy(&w);
    CHECK(!w);
    char p[128], q[128];
    const double h[3] = {2.5, 2.5, 2.5};
    snprintf(p, sizeof p, "%s/ref.npy", dir);
    CHECK_OK(strata_field_save_npy(f, p), ctx);
    snprintf(p, sizeof p, "%s/ref.vti", dir);
    CHECK_OK(strata_field_save_vti(f, "p", p, h, NULL), ctx);
    snprintf(p, sizeof p, "%s/ref.png", dir);
    CHECK_OK(strata_field_save_png(f, p, &o.png_options), ctx);
    static const char *const ext[3] = {"npy", "vti", "png"};
    for (int e = 0; e < 3; e++)
      for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/%s.%s", dir, k ? "b" : "a", ext[e]);
        snprintf(q, sizeof q, "%s/ref.%s", dir, ext[e]);
        CHECK(same_file(p, q));
        CHECK(remove(p) == 0);
      }
    for (int e = 0; e < 3; e++) {
      snprintf(q, sizeof q, "%s/ref.%s", dir, ext[e]);
      remove(q);
    }
  }
  /* a folder that is not there: the failure comes back at flush, and the
   * next submit is refused with it */
  strata_snapshot_options o;
  strata_snapshot_options_init(&o);
  o.dir = "no/such/folder";
  strata_snapshot_writer *w = NULL;
  CHECK_OK(strata_snapshot_writer_create(ctx, &d, &o, &w), ctx);
  CHECK_OK(strata_snapshot_submit(w, f, "x"), ctx);
  CHECK_STATUS(strata_snapshot_flush(w), STRATA_EIO, ctx);
  CHECK(says(ctx, "cannot write no/such/folder/x.npy"));
  CHECK_STATUS(strata_snapshot_submit(w, f, "y"), STRATA_EIO, ctx);
  CHECK_STATUS(strata_snapshot_status(w), STRATA_EIO, ctx);
  strata_snapshot_writer_destroy(&w);
  /* refusals at create and submit */
  o.npy = o.png = 0;
  CHECK_STATUS(strata_snapshot_writer_create(ctx, &d, &o, &w), STRATA_EINVAL,
               ctx);
  CHECK(says(ctx, "no format asked for"));
  strata_snapshot_options_init(&o);
  o.png_options.index = 11;
  CHECK_STATUS(strata_snapshot_writer_create(ctx, &d, &o, &w), STRATA_EINVAL,
               ctx);
  CHECK(says(ctx, "slice index 11 along z is outside 0..10"));
  CHECK_ARG(ctx, "png_options.index", "11");
  strata_snapshot_options_init(&o);
  o.dir = "";
  CHECK_STATUS(strata_snapshot_writer_create(ctx, &d, &o, &w), STRATA_EINVAL,
               ctx);
  CHECK_ARG(ctx, "dir", "");
  strata_snapshot_options_init(&o);
  o.dir = dir;
  strata_field_desc d2 = d;
  d2.n[0] = 18;
  CHECK_OK(strata_snapshot_writer_create(ctx, &d2, &o, &w), ctx);
  CHECK_STATUS(strata_snapshot_submit(w, f, "z"), STRATA_ESHAPE, ctx);
  CHECK_ARG(ctx, "f", "set");
  strata_snapshot_writer_destroy(&w);
  strata_snapshot_writer_destroy(&w);
  CHECK(rmdir(dir) == 0);
  strata_field_destroy(&f);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- blow-ups ------------------------------------------------------------- */

static double noise(long i, long j, long k, void *user) {
  (void)user;
  uint64_t x = (uint64_t)(i + 7) * 0x9e3779b97f4a7c15ull ^
               (uint64_t)(j + 3) * 0xbf58476d1ce4e5b9ull ^ (uint64_t)k;
  x ^= x >> 29;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 32;
  return (double)(x >> 11) * 0x1p-53 * 2 - 1;
}

/* u' = u + scale lap(u) on 64 x 64 random values (the operator case's
 * [operator] scale, identity = true) */
static void unstable_opts(strata_operator_options *o, double scale,
                          strata_precision p) {
  strata_operator_options_init(o);
  o->n[0] = o->n[1] = 64;
  o->precision = p;
  strata_stencil_laplacian(&o->op, 2, 2, 1.0);
  o->op.center = 1 + scale * o->op.center;
  for (int a = 0; a < 2; a++) o->op.coef[a][1] *= scale;
  o->init = noise;
}

static strata_solver *op_solver(strata_context *ctx,
                                const strata_operator_options *o) {
  strata_solver_options so;
  strata_solver_options_init(&so, STRATA_SOLVER_OPERATOR);
  so.op = o;
  strata_solver *s = NULL;
  return strata_solver_create(ctx, &so, &s) == STRATA_OK ? s : NULL;
}

/* Two solvers of so from the same initial state, one checked every step
 * and one never (*check_every is the kind's option), n steps each: 1 when
 * their solutions agree bit for bit. */
static int checks_change_no_bits(strata_context *ctx,
                                 const strata_solver_options *so,
                                 int *check_every, long n) {
  strata_solver *s[2] = {NULL, NULL};
  int ok = 1;
  for (int c = 0; c < 2; c++) {
    *check_every = 1 - c;
    ok &= strata_solver_create(ctx, so, &s[c]) == STRATA_OK &&
          strata_field_fill_fn(strata_solver_field(s[c], 0), bump, NULL) ==
              STRATA_OK &&
          strata_solver_step(s[c], n) == STRATA_OK;
  }
  ok = ok && strata_solver_check(s[0]) == STRATA_OK &&
       same_bits(strata_solver_field(s[0], 0), strata_solver_field(s[1], 0));
  if (!ok)
    fprintf(stderr, "  %s: %s\n", strata_solver_kind_name(so->kind),
            strata_context_error(ctx));
  strata_solver_destroy(&s[0]);
  strata_solver_destroy(&s[1]);
  return ok;
}

/* An unstable run stops at the first check after it overflows, with the
 * step and the point; one that blows up between checks is found by
 * strata_solver_check; a stable run checked every step gives the same
 * bits as one never checked. */
TEST(blowups_stop_and_checks_change_no_bits) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_operator_options o;
  /* scale = 0.3 > 1/4, fp32: all infinite or NaN long before 3000 steps */
  unstable_opts(&o, 0.3, STRATA_F32);
  CHECK(o.check_every == STRATA_CHECK_EVERY);
  strata_solver *s = op_solver(ctx, &o);
  CHECK(s);
  CHECK_STATUS(strata_solver_step(s, 3000), STRATA_ENONFINITE, ctx);
  strata_solver_info info;
  CHECK_OK(strata_solver_get_info(s, &info), ctx);
  CHECKF(info.steps > 0 && info.steps < 3000 &&
             info.steps % STRATA_CHECK_EVERY == 0,
         "stopped after %ld steps", info.steps);
  char want[96];
  snprintf(want, sizeof want, "operator: u is not finite after step %ld: u(",
           info.steps);
  CHECKF(strstr(strata_context_error(ctx), want), "%s",
         strata_context_error(ctx));
  CHECK_STATUS(strata_solver_check(s), STRATA_ENONFINITE, ctx);
  strata_solver_destroy(&s);
  /* scale = 1e300 in fp64: NaN after a few steps, found by the check */
  unstable_opts(&o, 1e300, STRATA_F64);
  s = op_solver(ctx, &o);
  CHECK(s);
  CHECK_OK(strata_solver_step(s, 10), ctx); /* no check due yet */
  CHECK_STATUS(strata_solver_check(s), STRATA_ENONFINITE, ctx);
  CHECKF(strstr(strata_context_error(ctx), "after step 10: u(0, 0) = nan is "
                "the first of 4096 non-finite points of 4096"),
         "%s", strata_context_error(ctx));
  strata_solver_destroy(&s);
  o.check_every = 10;
  s = op_solver(ctx, &o);
  CHECK(s);
  CHECK_STATUS(strata_solver_step(s, 25), STRATA_ENONFINITE, ctx);
  CHECKF(strstr(strata_context_error(ctx), "after step 10:"), "%s",
         strata_context_error(ctx));
  strata_solver_destroy(&s);
  o.check_every = -1;
  CHECK(op_solver(ctx, &o) == NULL);
  CHECK_ARG(ctx, "check_every", "-1");
  /* stable and long: checked every step or never, the same bits, for
   * each kind (heat in fused sweeps) */
  unstable_opts(&o, 0.2, STRATA_F32);
  strata_solver_options so;
  strata_solver_options_init(&so, STRATA_SOLVER_OPERATOR);
  so.op = &o;
  CHECK(checks_change_no_bits(ctx, &so, &o.check_every, 3000));
  strata_heat_options ho;
  heat_opts(&ho);
  strata_solver_options_init(&so, STRATA_SOLVER_HEAT);
  so.heat = &ho;
  CHECK(checks_change_no_bits(ctx, &so, &ho.check_every, 1001));
  strata_wave_options wo;
  wave_opts(&wo);
  strata_solver_options_init(&so, STRATA_SOLVER_WAVE);
  so.wave = &wo;
  CHECK(checks_change_no_bits(ctx, &so, &wo.check_every, 60));
  strata_fdtd_options fo;
  fdtd_opts(&fo, 1);
  strata_solver_options_init(&so, STRATA_SOLVER_FDTD);
  so.fdtd = &fo;
  CHECK(checks_change_no_bits(ctx, &so, &fo.check_every, 200));
  /* a NaN written into Hx: the check names the field it is in */
  strata_solver *a = NULL;
  CHECK_OK(strata_solver_create(ctx, &so, &a), ctx);
  CHECK_OK(strata_solver_step(a, 20), ctx);
  CHECK_OK(strata_solver_check(a), ctx);
  CHECK_OK(strata_field_fill(strata_solver_field(a, 1), NAN), ctx);
  CHECK_STATUS(strata_solver_check(a), STRATA_ENONFINITE, ctx);
  CHECKF(strstr(strata_context_error(ctx), "fdtd: Hx is not finite after "
                "step 20: Hx(0, 0) = nan"),
         "%s", strata_context_error(ctx));
  strata_solver_destroy(&a);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- crafted and hostile checkpoints ---------------------------------------- */

/* img (n bytes) with bytes [off, off + vb) replaced by v, resealed (a valid
 * CRC-32): loading it into s fails with st and a message holding what. */
static int refused(strata_solver *s, strata_context *ctx,
                   const unsigned char *img, size_t n, size_t off,
                   const void *v, size_t vb, strata_status st,
                   const char *what) {
  unsigned char *b = malloc(n);
  CHECK(b);
  memcpy(b, img, n);
  memcpy(b + off, v, vb);
  uint32_t crc = ref_crc32(b, n - 4);
  memcpy(b + n - 4, &crc, 4);
  strata_status got = strata_solver_load_state(s, b, n);
  free(b);
  CHECKF(got == st, "status %d, wanted %d (%s)", (int)got, (int)st, what);
  return !says(ctx, what);
}

/* Every header field, altered under a valid CRC-32, is refused with a
 * message showing both sides; the solver keeps its state. */
TEST(crafted_headers_refused) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_solver *s = NULL, *w = NULL;
  CHECK_OK(make(ctx, STRATA_SOLVER_HEAT, 0, 7, &s), ctx);
  CHECK_OK(strata_solver_step(s, 3), ctx);
  size_t n = 0;
  CHECK_OK(strata_solver_state_size(s, &n), ctx);
  unsigned char *img = malloc(n);
  CHECK(img);
  CHECK_OK(strata_solver_save_state(s, img, n), ctx);
  /* header: magic 0, version 8, fields 12, kind 16, tag 32, step 40;
   * the field record: dims 48, precision 52, n 56 */
  const int64_t steps[3] = {-5, INT64_MIN, ((int64_t)1 << 53) + 1};
  const char *const says_step[3] = {
      "its step is -5, outside 0..9007199254740992",
      "its step is -9223372036854775808, outside 0..",
      "its step is 9007199254740993, outside 0.."};
  for (int i = 0; i < 3; i++)
    CHECK(!refused(s, ctx, img, n, 40, &steps[i], 8, STRATA_EFORMAT,
                   says_step[i]));
  const uint32_t version = 3, fields = 2, dims = 3, prec = 4;
  CHECK(!refused(s, ctx, img, n, 8, &version, 4, STRATA_EFORMAT,
                 "checkpoint version 3; this strata reads 1 and 2"));
  CHECK(!refused(s, ctx, img, n, 12, &fields, 4, STRATA_EINVAL,
                 "holds 2 fields; the heat solver's checkpoint holds 1"));
  CHECK(!refused(s, ctx, img, n, 16, "wave", 5, STRATA_EINVAL,
                 "written by solver 'wave', not 'heat'"));
  const uint64_t tag = 8;
  CHECK(!refused(s, ctx, img, n, 32, &tag, 8, STRATA_EINVAL,
                 "its tag 0000000000000008 is not the solver's "
                 "0000000000000007"));
  CHECK(!refused(s, ctx, img, n, 48, &dims, 4, STRATA_EINVAL,
                 "field 0 is a 3D grid of 37x29x1 f64, the solver's is a 2D "
                 "grid of 37x29x1 f64 (the dimensions differ)"));
  CHECK(!refused(s, ctx, img, n, 52, &prec, 4, STRATA_EINVAL,
                 "field 0 is a 2D grid of 37x29x1 f32, the solver's is a 2D "
                 "grid of 37x29x1 f64 (the precisions differ)"));
  const uint64_t nx = 37 + ((uint64_t)1 << 32), ny = 30;
  CHECK(!refused(s, ctx, img, n, 56, &nx, 8, STRATA_EINVAL,
                 "a 2D grid of 4294967333x29x1 f64, the solver's is a 2D "
                 "grid of 37x29x1 f64 (the sizes differ)"));
  CHECK(!refused(s, ctx, img, n, 64, &ny, 8, STRATA_EINVAL,
                 "37x30x1 f64, the solver's is a 2D grid of 37x29x1 f64"));
  const uint32_t v2 = 2;
  CHECK(!refused(s, ctx, img, n, 8, &v2, 4, STRATA_EINVAL,
                 "is rank 2's part of a checkpoint over 8 processes"));
  strata_solver_info i;
  CHECK_OK(strata_solver_get_info(s, &i), ctx);
  CHECK(i.steps == 3);
  free(img);
  /* an opaque state: its step must be its header's, its length what the
   * solver's state can have at that step */
  CHECK_OK(make(ctx, STRATA_SOLVER_WAVE, 0, 7, &w), ctx);
  CHECK_OK(strata_solver_step(w, 6), ctx);
  CHECK_OK(strata_solver_state_size(w, &n), ctx);
  CHECK((img = malloc(n)));
  CHECK_OK(strata_solver_save_state(w, img, n), ctx);
  const int64_t five = 5;
  CHECK(!refused(w, ctx, img, n, 40, &five, 8, STRATA_EFORMAT,
                 "its header is at step 5, its wave state at step 6"));
  const uint64_t huge = (uint64_t)1 << 40;
  CHECK(!refused(w, ctx, img, n, 48, &huge, 8, STRATA_EFORMAT,
                 "its wave state has 1099511627776 bytes; this solver's at "
                 "step 6 has at most"));
  const uint64_t step_in_state = (uint64_t)1 << 63;
  CHECK(!refused(w, ctx, img, n, 56 + 32, &step_in_state, 8, STRATA_EFORMAT,
                 "its header is at step 6, its wave state at step "
                 "9223372036854775808"));
  free(img);
  strata_solver_destroy(&w);
  strata_solver_destroy(&s);
  strata_context_destroy(&ctx);
  return 0;
}

/* ---- footprints --------------------------------------------------------- */

/* Options of kind k with a variant v of the test cases above. */
typedef struct {
  strata_solver_options o;
  strata_heat_options ho;
  strata_wave_options wo;
  strata_fdtd_options fo;
  strata_mg_options mo;
  strata_operator_options oo;
} any_options;

static void variant_options(any_options *a, strata_solver_kind k, int v) {
  strata_solver_options_init(&a->o, k);
  switch (k) {
  case STRATA_SOLVER_HEAT:
    heat_opts(&a->ho);
    if (v == 1) { /* 3D, fused steps, fp32 */
      a->ho.dims = 3;
      a->ho.n[2] = 19;
      a->ho.fuse = 3;
      a->ho.D = 0.1;
      a->ho.precision = STRATA_F32;
    }
    a->o.heat = &a->ho;
    break;
  case STRATA_SOLVER_WAVE:
    wave_opts(&a->wo);
    if (v == 1) { /* CPML everywhere, order 4, fp64 */
      for (int f = 0; f < 6; f++) a->wo.face[f] = STRATA_WAVE_CPML;
      a->wo.order = 4;
      a->wo.precision = STRATA_F64;
    }
    a->o.wave = &a->wo;
    break;
  case STRATA_SOLVER_FDTD:
    fdtd_opts(&a->fo, v);
    if (v == 1) a->fo.face[3] = STRATA_FDTD_PML;
    a->o.fdtd = &a->fo;
    break;
  case STRATA_SOLVER_POISSON:
    mg_opts(&a->mo);
    if (v == 1) { /* 2D, odd periodic and Neumann axes */
      a->mo.dims = 2;
      a->mo.n[0] = 45;
      a->mo.n[1] = 30;
      a->mo.n[2] = 1;
      a->mo.bc.kind[0] = a->mo.bc.kind[1] = STRATA_BC_PERIODIC;
      a->mo.bc.kind[2] = STRATA_BC_NEUMANN;
    }
    a->o.poisson = &a->mo;
    break;
  default:
    op_opts(&a->oo);
    if (v == 1) { /* 3D, radius 4 */
      a->oo.dims = 3;
      a->oo.n[2] = 11;
      a->oo.precision = STRATA_F32;
      strata_stencil_laplacian(&a->oo.op, 3, 8, 1.0);
    }
    a->o.op = &a->oo;
    break;
  }
}

/* The estimate is what create allocates, counted by the backend's
 * allocator, for every kind on backend be. */
static int estimate_matches_on(strata_backend be) {
  strata_context *ctx;
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = be;
  co.tune_cache = "";
  CHECK(strata_context_create(&ctx, &co) == STRATA_OK);
  for (int k = STRATA_SOLVER_HEAT; k <= STRATA_SOLVER_OPERATOR; k++)
    for (int v = 0; v < 2; v++) {
      any_options a;
      variant_options(&a, (strata_solver_kind)k, v);
      size_t host = 0, dev = 0;
      const size_t before = ctx->alloc_total;
      CHECKF(strata_solver_estimate(ctx, &a.o, &host, &dev) == STRATA_OK,
             "%s", strata_context_error(ctx));
      CHECK(ctx->alloc_total == before && ctx->live_fields == 0);
      strata_solver *s = NULL;
      CHECK_OK(strata_solver_create(ctx, &a.o, &s), ctx);
      const size_t got = ctx->alloc_total - before;
      strata_solver_info i;
      CHECK_OK(strata_solver_get_info(s, &i), ctx);
      CHECKF(dev == got, "%s %s %d: estimate %zu bytes, create allocated "
             "%zu", strata_backend_name(be),
             strata_solver_kind_name((strata_solver_kind)k), v, dev, got);
      CHECK(i.device_bytes <= dev && i.device_bytes > dev / 2);
      CHECK(host >= i.host_bytes);
      strata_solver_destroy(&s);
    }
  strata_context_destroy(&ctx);
  return 0;
}

/* ... on the CPU engine and, when there is one, on the GPU. */
TEST(estimate_matches_allocations) {
  CHECK(estimate_matches_on(STRATA_BACKEND_CPU) == 0);
  if (strata_backend_available(STRATA_BACKEND_CUDA, NULL, 0))
    CHECK(estimate_matches_on(STRATA_BACKEND_CUDA) == 0);
  return 0;
}

/* The estimate checks the options as create does: the same status,
 * message and argument, and nothing allocated. */
TEST(estimate_validates_like_create) {
  strata_context *ctx;
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = STRATA_BACKEND_CPU;
  CHECK(strata_context_create(&ctx, &co) == STRATA_OK);
  for (int c = 0; c < 7; c++) {
    any_options a;
    const strata_solver_kind kinds[7] = {
        STRATA_SOLVER_HEAT, STRATA_SOLVER_HEAT,  STRATA_SOLVER_WAVE,
        STRATA_SOLVER_WAVE, STRATA_SOLVER_FDTD,  STRATA_SOLVER_POISSON,
        STRATA_SOLVER_OPERATOR};
    variant_options(&a, kinds[c], 0);
    switch (c) {
    case 0: a.ho.D = 0.3; break;                       /* unstable */
    case 1: a.ho.n[2] = 4; break;                      /* unused axis */
    case 2: a.wo.order = 3; break;
    case 3: a.wo.dt = 0.01; break;                     /* CFL */
    case 4: a.fo.pml_width = 60; break;                /* too few nodes */
    case 5: a.mo.omega = 5; break;
    default: a.oo.variant = "nosuch"; break;
    }
    char msg[1024], arg[64], val[256];
    const size_t before = ctx->alloc_total;
    strata_status e = strata_solver_estimate(ctx, &a.o, NULL, NULL);
    CHECKF(e != STRATA_OK && ctx->alloc_total == before, "case %d", c);
    snprintf(msg, sizeof msg, "%s", strata_context_error(ctx));
    snprintf(arg, sizeof arg, "%s", strata_context_error_arg(ctx));
    snprintf(val, sizeof val, "%s", strata_context_error_value(ctx));
    strata_solver *s = NULL;
    CHECK(strata_solver_create(ctx, &a.o, &s) == e && !s);
    CHECKF(!strcmp(msg, strata_context_error(ctx)), "%s | %s", msg,
           strata_context_error(ctx));
    CHECK(!strcmp(arg, strata_context_error_arg(ctx)) && arg[0]);
    CHECK(!strcmp(val, strata_context_error_value(ctx)));
    CHECK(ctx->alloc_total == before && ctx->live_fields == 0);
  }
  /* the solver interface's own checks too */
  strata_solver_options o;
  strata_solver_options_init(&o, (strata_solver_kind)9);
  CHECK(strata_solver_estimate(ctx, &o, NULL, NULL) == STRATA_EINVAL);
  CHECK(!strcmp(strata_context_error_arg(ctx), "kind"));
  CHECK(strata_solver_estimate(ctx, NULL, NULL, NULL) == STRATA_EINVAL);
  strata_context_destroy(&ctx);
  return 0;
}

/* A grid whose two fields fit one by one but not together is refused
 * before anything is allocated, by the estimate, the solver interface and
 * the heat solver's own create, with the bytes needed and available. */
TEST(footprint_refused_before_allocating) {
  const size_t avail = strata__host_available();
  if (!avail) SKIP("the system does not report its available memory");
  strata_context *ctx;
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = STRATA_BACKEND_CPU;
  CHECK(strata_context_create(&ctx, &co) == STRATA_OK);
  strata_heat_options ho;
  strata_heat_options_init(&ho);
  ho.fuse = 1;
  /* one field: about 0.6 of the available memory */
  ho.n[0] = ho.n[1] = (size_t)sqrt(0.6 * (double)avail / 8);
  strata_field_desc d = {2, {ho.n[0], ho.n[1], 1}, 1, STRATA_F64};
  size_t one = 0;
  CHECK(strata_field_bytes(&d, &one) == STRATA_OK && one < avail);
  strata_solver_options o;
  strata_solver_options_init(&o, STRATA_SOLVER_HEAT);
  o.heat = &ho;
  size_t host = 0, dev = 0;
  /* never create unless the estimate refused first: a wrong estimate
   * would allocate more than the machine has */
  strata_status e = strata_solver_estimate(ctx, &o, &host, &dev);
  CHECKF(e == STRATA_ENOMEM, "%d: %s", (int)e, strata_context_error(ctx));
  CHECK(dev == 2 * one);
  char want[64], have[64];
  snprintf(want, sizeof want, "%zu bytes", host + dev);
  const char *m = strata_context_error(ctx);
  CHECKF(strstr(m, "heat: needs ") && strstr(m, want) &&
             strstr(m, "are available"), "%s", m);
  snprintf(have, sizeof have, "%.0f", (double)avail);
  (void)have;
  strata_solver *s = NULL;
  CHECK(strata_solver_create(ctx, &o, &s) == STRATA_ENOMEM && !s);
  strata_heat *h = NULL;
  CHECK(strata_heat_create(ctx, &ho, &h) == STRATA_ENOMEM && !h);
  CHECK(strstr(strata_context_error(ctx), "heat: needs "));
  CHECK(ctx->alloc_total == 0 && ctx->live_fields == 0);
  strata_context_destroy(&ctx);
  return 0;
}

static int put(const char *dir, const char *name, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  return fclose(f);
}

/* The memory checks see a container's or a batch job's limit: the
 * tightest of the process's cgroup and its ancestors, v2 and v1, in a
 * made-up tree (root and /proc/self/cgroup's text given). */
TEST(cgroup_memory_limits) {
  char root[] = "/tmp/strata_cg_XXXXXX", d[512], self[600];
  CHECK(mkdtemp(root));
  size_t limit = 0, room = 0;
  /* v2: /a/b limited to 1 MB with 400 kB used; /a unlimited ("max") */
  snprintf(d, sizeof d, "%s/a", root);
  CHECK(mkdir(d, 0700) == 0 && put(d, "memory.max", "max\n") == 0);
  snprintf(d, sizeof d, "%s/a/b", root);
  CHECK(mkdir(d, 0700) == 0 && put(d, "memory.max", "1000000\n") == 0 &&
        put(d, "memory.current", "400000\n") == 0);
  snprintf(self, sizeof self, "%s/self", root);
  CHECK(put(root, "self", "0::/a/b\n") == 0);
  strata__cgroup_memory(root, self, &limit, &room);
  CHECKF(limit == 1000000 && room == 600000, "v2: %zu, %zu", limit, room);
  /* v1, the controller beside another: the parent's limit is tighter */
  snprintf(d, sizeof d, "%s/memory", root);
  CHECK(mkdir(d, 0700) == 0 &&
        put(d, "memory.limit_in_bytes", "2000000\n") == 0 &&
        put(d, "memory.usage_in_bytes", "1900000\n") == 0);
  snprintf(d, sizeof d, "%s/memory/x", root);
  CHECK(mkdir(d, 0700) == 0 &&
        put(d, "memory.limit_in_bytes", "9223372036854771712\n") == 0 &&
        put(d, "memory.usage_in_bytes", "5000\n") == 0);
  CHECK(put(root, "self", "7:pids:/\n5:cpu,memory:/x\n") == 0);
  strata__cgroup_memory(root, self, &limit, &room);
  CHECKF(limit == 2000000 && room == 100000, "v1: %zu, %zu", limit, room);
  /* no memory controller named, or none limiting: nothing bounds */
  CHECK(put(root, "self", "3:cpuset:/\n") == 0);
  strata__cgroup_memory(root, self, &limit, &room);
  CHECK(limit == SIZE_MAX && room == SIZE_MAX);
  /* this machine: the public figure is what the checks use, and no more
   * than /proc/meminfo's */
  const size_t avail = strata_host_memory_available();
  CHECK(avail == strata__host_available());
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  CHECK(system(cmd) == 0);
  return 0;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int stop_now(void *arg) {
  ++*(int *)arg;
  return 1;
}

/* Checkpoint files are read header first: /dev/zero, a sparse 3 GB file of
 * zeros and one with a valid header are refused before their contents are
 * read; a truncated file says so; an interrupt hook that asks to stop
 * stops the reading, the solver unchanged. */
TEST(hostile_checkpoint_files_refused) {
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_solver *s = NULL;
  CHECK_OK(make(ctx, STRATA_SOLVER_HEAT, 0, 7, &s), ctx);
  CHECK_STATUS(strata_solver_load(s, "/dev/zero"), STRATA_EFORMAT, ctx);
  CHECK(says(ctx, "/dev/zero is not a strata checkpoint"));
  char path[128], big[128];
  snprintf(path, sizeof path, "test_solver_ck_%ld.stck", (long)getpid());
  snprintf(big, sizeof big, "test_solver_big_%ld.stck", (long)getpid());
  CHECK_OK(strata_solver_step(s, 4), ctx);
  CHECK_OK(strata_solver_save(s, path), ctx);
  size_t n = 0;
  char *img = (char *)ref_slurp(path, &n);
  CHECK(img && n > 100);
  const off_t gb3 = (off_t)3 << 30;
  for (int head = 0; head < 2; head++) {
    FILE *f = fopen(big, "wb");
    CHECK(f);
    if (head) CHECK(fwrite(img, 1, 80, f) == 80);
    CHECK(fflush(f) == 0 && ftruncate(fileno(f), gb3) == 0);
    fclose(f);
    double t0 = now_s();
    CHECK_STATUS(strata_solver_load(s, big), STRATA_EFORMAT, ctx);
    CHECKF(now_s() - t0 < 1.0, "%.2f s to refuse",
           now_s() - t0);
    CHECK(says(ctx, head ? "has 3221225472 bytes; its header and the solver "
                           "say"
                         : "is not a strata checkpoint"));
  }
  CHECK(remove(big) == 0);
  FILE *f = fopen(big, "wb");
  CHECK(f && fwrite(img, 1, n - 10, f) == n - 10);
  fclose(f);
  CHECK_STATUS(strata_solver_load(s, big), STRATA_EFORMAT, ctx);
  CHECK(says(ctx, "(it is truncated)"));
  CHECK(remove(big) == 0);
  /* the hook is asked before each piece: asked to stop, nothing changes */
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  int asked = 0;
  o.interrupt = stop_now;
  o.interrupt_arg = &asked;
  strata_context *ic = NULL;
  CHECK(strata_context_create(&ic, &o) == STRATA_OK);
  strata_solver *t = NULL;
  CHECK_OK(make(ic, STRATA_SOLVER_HEAT, 0, 7, &t), ic);
  CHECK_STATUS(strata_solver_load(t, path), STRATA_EINTERRUPTED, ic);
  CHECK(says(ic, "interrupted while"));
  CHECK(asked >= 1);
  strata_solver_info i;
  CHECK_OK(strata_solver_get_info(t, &i), ic);
  CHECK(i.steps == 0);
  strata_solver_destroy(&t);
  strata_context_destroy(&ic);
  CHECK_OK(strata_solver_load(s, path), ctx); /* and the file itself loads */
  CHECK(remove(path) == 0);
  free(img);
  strata_solver_destroy(&s);
  strata_context_destroy(&ctx);
  return 0;
}

TEST(traces_follow_moved_shots) {
  /* the source and the receivers moved through the wave's own calls are
   * what the interface's traces report (positions, count, samples) */
  strata_context *ctx = strata_test_cpu_context();
  CHECK(ctx);
  strata_solver *s = NULL;
  CHECK_OK(make(ctx, STRATA_SOLVER_WAVE, 0, 0, &s), ctx);
  strata_wave *w = strata_solver_wave(s);
  CHECK(w);
  CHECK_OK(strata_solver_step(s, 4), ctx);
  CHECK_OK(strata_wave_reset(w), ctx);
  const double src[3] = {120, 130, 110}, rec[3 * 4] = {50, 60, 70,  80, 90, 100,
                                                      110, 120, 130, 140, 150, 160};
  CHECK_OK(strata_wave_set_source(w, src), ctx);
  CHECK_OK(strata_wave_set_receivers(w, 4, rec), ctx);
  CHECK_OK(strata_solver_step(s, 6), ctx);
  strata_traces t;
  CHECK_OK(strata_solver_traces(s, &t), ctx);
  size_t ns = 0;
  CHECK_OK(strata_wave_traces(w, NULL, 0, &ns), ctx);
  CHECK(t.ntraces == 4 && t.nsamples == ns && ns > 0);
  CHECK(t.receivers && !memcmp(t.receivers, rec, sizeof rec));
  CHECK(t.source[0] == 120 && t.source[1] == 130 && t.source[2] == 110);
  double *own = malloc(4 * ns * sizeof *own);
  CHECK(own);
  CHECK_OK(strata_wave_traces(w, own, 4 * ns, &ns), ctx);
  CHECK(!memcmp(t.data, own, 4 * ns * sizeof *own));
  free(own);
  strata_solver_destroy(&s);
  strata_context_destroy(&ctx);
  return 0;
}

RUN_TESTS(cgroup_memory_limits, heat_matches_own_api, wave_matches_own_api, fdtd_matches_own_api,
          poisson_matches_own_api, operator_matches_own_api, save_load_memory_continues_bit_for_bit,
          save_load_file_continues_bit_for_bit, program_checkpoint_v1_loads,
          bad_arguments_refused, crafted_headers_refused,
          hostile_checkpoint_files_refused,
          snapshot_writer_matches_field_writers,
          blowups_stop_and_checks_change_no_bits, estimate_matches_allocations,
          estimate_validates_like_create, footprint_refused_before_allocating,
          traces_follow_moved_shots)
