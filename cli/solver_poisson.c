/* The Poisson equation -lap(phi) = psi through the library's geometric
 * multigrid (strata_mg_*), as `strata run` sees it: one driver "step" is
 * one multigrid cycle (cycle = fmg: the first is the full-multigrid pass),
 * so the progress display, Ctrl-C and the snapshots work per cycle; the
 * run ends early when the tolerance is met or the
 * residual stalls.  The source is a manufactured function whose exact
 * solution is known (the summary then gives the error), a Gaussian, or an
 * .npy file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct {
  strata_field *phi, *psi; /* the solver's */
  int source;     /* 0 manufactured, 1 gaussian, 2 file */
  int exact;      /* manufactured with homogeneous Dirichlet values */
  double k2;      /* manufactured: sum of the squared wave numbers */
  int fn[3];      /* manufactured: per axis 0 sin, 1 cos */
  double kx[3], x0[3]; /* per axis: wave number, offset (points) */
  double amp, width, tol;
  int converged, stalled, nlev;
  double seconds;
  double err_max, err_rms;
  int have_err;
} mg_state;

static const char *mg_disc_names[] = {"fd7", "fe27", "fv7"};
static const char *mg_smoother_names[] = {"default", "jacobi", "chebyshev",
                                          "gsrb"};
static const char *mg_cycle_names[] = {"v", "f", "w"};

/* The manufactured solution per axis, from the kinds of its two faces:
 * Dirichlet-Dirichlet sin(pi x / L), Neumann-Neumann cos(pi x / L),
 * periodic cos(2 pi x / L), Dirichlet-Neumann sin(pi x / 2L), Neumann-
 * Dirichlet cos(pi x / 2L), with x measured from the lower face (a
 * Dirichlet face one spacing before point 0, a Neumann face half a spacing
 * before it) and L the axis's length between its faces. */
static void manufactured_axis(mg_state *ms, int a, strata_bc_kind lo,
                              strata_bc_kind hi, size_t n) {
  double off = lo == STRATA_BC_DIRICHLET ? 1.0
               : lo == STRATA_BC_NEUMANN ? 0.5
                                         : 0.0;
  double L = (double)n - 1 + off +
             (hi == STRATA_BC_DIRICHLET ? 1.0
              : hi == STRATA_BC_NEUMANN ? 0.5
                                        : 1.0);
  ms->x0[a] = off;
  if (lo == STRATA_BC_PERIODIC) {
    ms->fn[a] = 1;
    ms->kx[a] = 2 * M_PI / L;
  } else if (lo == hi) {
    ms->fn[a] = lo == STRATA_BC_NEUMANN;
    ms->kx[a] = M_PI / L;
  } else {
    ms->fn[a] = lo == STRATA_BC_NEUMANN;
    ms->kx[a] = M_PI / (2 * L);
  }
}

/* phi(i, j, k) of the manufactured solution (k in units of 1/point) */
static double manufactured_phi(const mg_state *ms, int dims, long i, long j,
                               long k) {
  long idx[3] = {i, j, k};
  double v = ms->amp;
  for (int a = 0; a < dims; a++) {
    double x = ms->kx[a] * ((double)idx[a] + ms->x0[a]);
    v *= ms->fn[a] ? cos(x) : sin(x);
  }
  return v;
}

static int g_dims;
static double g_h;
static mg_state *g_ms;
static size_t g_n[3];

static double psi_fn(long i, long j, long k, void *user) {
  (void)user;
  const mg_state *ms = g_ms;
  if (ms->source == 0)
    return ms->k2 / (g_h * g_h) * manufactured_phi(ms, g_dims, i, j, k);
  long idx[3] = {i, j, k};
  double r2 = 0;
  for (int a = 0; a < g_dims; a++) {
    double d = (double)idx[a] - 0.5 * ((double)g_n[a] - 1);
    r2 += d * d;
  }
  return ms->amp * exp(-r2 / (2 * ms->width * ms->width));
}

static int read_source_file(run_state *r, mg_state *ms) {
  const char *path = cf_string(&r->cf, "poisson", "source_file", NULL);
  if (!path)
    return run_case_fail(r, "poisson", "source", "source = file needs "
                         "[poisson] source_file");
  strata_precision p;
  int nd = 0;
  size_t sh[4];
  void *data = NULL;
  strata_status s = strata_npy_read(r->ctx, path, &p, &nd, sh, &data);
  if (s != STRATA_OK)
    return run_case_fail(r, "poisson", "source_file", "%s",
                         strata_context_error(r->ctx));
  int ok = nd == r->dims;
  for (int a = 0; ok && a < r->dims; a++)
    ok = sh[a] == r->n[r->dims - 1 - a];
  if (!ok) {
    free(data);
    return run_case_fail(r, "poisson", "source_file", "'%s' has %d axes, "
                         "not the grid's shape (%s %zu, %zu%s%zu)", path, nd,
                         r->dims == 3 ? "nz, ny, nx =" : "ny, nx =",
                         r->n[r->dims - 1], r->n[r->dims - 2],
                         r->dims == 3 ? ", " : "", r->dims == 3 ? r->n[0] : 0);
  }
  size_t np = r->n[0] * r->n[1] * r->n[2];
  void *conv = data;
  if (p != r->precision) {
    conv = malloc(np * (size_t)r->precision);
    if (!conv) {
      free(data);
      return run_fail(r, "out of memory");
    }
    for (size_t i = 0; i < np; i++) {
      double v = p == STRATA_F32 ? ((float *)data)[i] : ((double *)data)[i];
      if (r->precision == STRATA_F32)
        ((float *)conv)[i] = (float)v;
      else
        ((double *)conv)[i] = v;
    }
  }
  for (size_t i = 0; i < np; i++) {
    double v = r->precision == STRATA_F32 ? ((float *)conv)[i]
                                          : ((double *)conv)[i];
    if (!isfinite(v)) {
      if (conv != data) free(conv);
      free(data);
      return run_case_fail(r, "poisson", "source_file", "'%s' holds a value "
                           "that is not finite (element %zu)", path, i);
    }
  }
  s = strata_field_write(ms->psi, conv);
  if (conv != data) free(conv);
  free(data);
  if (s != STRATA_OK)
    return run_fail(r, "source: %s", strata_context_error(r->ctx));
  return 0;
}

/* a face's Dirichlet value: [poisson] dirichlet_values when the case has
 * it, else [boundary] value */
static void where_value(const run_state *r, long index, const char **section,
                        const char **key) {
  int own = cf_has(&r->cf, "poisson", "dirichlet_values");
  *section = own ? "poisson" : "boundary";
  *key = own ? "dirichlet_values" : "value";
  (void)index;
}

/* strata_mg_options' fields as mg_create reads them from the case */
static const run_optkey mg_keys[] = {
    RUN_GRID_KEYS,
    {"disc", "poisson", "discretization", NULL},
    {"cycle", "poisson", "cycle", NULL},
    {"smoother", "poisson", "smoother", NULL},
    {"face_mean", "poisson", "face_mean", NULL},
    {"bc.kind", NULL, NULL, run_where_face},
    {"bc.value", NULL, NULL, where_value},
    {NULL, NULL, NULL, NULL}};

static int mg_create(run_state *r) {
  cf_file *f = &r->cf;
  if (cf_line(f, "run", "steps") > 0)
    return run_case_fail(r, "run", "steps", "multigrid runs cycles, not "
                         "steps: set [poisson] max_cycles");
  mg_state *ms = calloc(1, sizeof *ms);
  if (!ms) return run_fail(r, "out of memory");
  r->impl = ms;
  strata_mg_options o;
  strata_mg_options_init(&o);
  o.dims = r->dims;
  for (int a = 0; a < 3; a++) o.n[a] = r->n[a];
  o.precision = r->precision;
  o.h = r->h;
  const char *disc = cf_string(f, "poisson", "discretization", "fe27");
  o.disc = !strcmp(disc, "fd7")   ? STRATA_MG_FD
           : !strcmp(disc, "fv7") ? STRATA_MG_FV
                                  : STRATA_MG_FE;
  const char *sm = cf_string(f, "poisson", "smoother", "default");
  for (int q = 0; q < 4; q++)
    if (!strcmp(sm, mg_smoother_names[q])) o.smoother = (strata_mg_smoother)q;
  o.face_mean = !strcmp(cf_string(f, "poisson", "face_mean", "harmonic"),
                        "arithmetic")
                    ? STRATA_MG_ARITHMETIC
                    : STRATA_MG_HARMONIC;
  if (o.disc != STRATA_MG_FV)
    for (size_t q = 0; q < 4; q++) {
      const char *fv_only[] = {"beta", "beta_file", "beta_amplitude",
                               "face_mean"};
      if (cf_has(f, "poisson", fv_only[q]))
        return run_case_fail(r, "poisson", fv_only[q], "%s is for "
                             "discretization = fv7 (variable coefficients)",
                             fv_only[q]);
    }
  const char *cy = cf_string(f, "poisson", "cycle", "v");
  o.fmg = !strcmp(cy, "fmg");
  o.cycle = !strcmp(cy, "w") ? STRATA_MG_W : !strcmp(cy, "f") ? STRATA_MG_F
                                                             : STRATA_MG_V;
  long maxc = cf_int(f, "poisson", "max_cycles", 30);
  ms->tol = cf_float(f, "poisson", "tolerance",
                     r->precision == STRATA_F32 ? 1e-5 : 1e-10);
  ms->amp = cf_float(f, "poisson", "amplitude", 1);
  /* one cycle per solve: the driver tests the tolerance between cycles */
  o.max_cycles = 1;
  o.rtol = 0;
  o.atol = 0;
  o.stall = 0;
  double vals[6];
  int nv = cf_floats(f, "poisson", "dirichlet_values", vals, 6);
  if (nv && nv != 2 * r->dims)
    return run_case_fail(r, "poisson", "dirichlet_values", "a %dD grid has "
                         "%d faces (x_lo, x_hi, ...), got %d values", r->dims,
                         2 * r->dims, nv);
  double value = cf_float(f, "boundary", "value", 0);
  int dirichlet = 0, homogeneous = 1;
  for (int face = 0; face < 6; face++) {
    o.bc.kind[face] = STRATA_BC_DIRICHLET;
    o.bc.value[face] = 0;
    if (face >= 2 * r->dims) continue;
    strata_bc_parse(run_face_value(r, face, "dirichlet"), &o.bc.kind[face]);
    o.bc.value[face] = nv ? vals[face] : value;
    if (o.bc.kind[face] == STRATA_BC_DIRICHLET) {
      dirichlet = 1;
      homogeneous &= o.bc.value[face] == 0;
    }
  }
  for (int a = 0; a < r->dims; a++)
    if ((o.bc.kind[2 * a] == STRATA_BC_PERIODIC) !=
        (o.bc.kind[2 * a + 1] == STRATA_BC_PERIODIC))
      return run_case_fail(r, "boundary", cf_has(f, "boundary",
                                                 run_face_key(2 * a))
                                              ? run_face_key(2 * a)
                                              : run_face_key(2 * a + 1),
                           "periodic needs both faces of the %c axis",
                           "xyz"[a]);
  o.project = !dirichlet; /* no Dirichlet face: solve for psi - mean(psi) */
  r->bc = o.bc;
  strata_solver_options so;
  strata_solver_options_init(&so, STRATA_SOLVER_POISSON);
  so.poisson = &o;
  strata_status s = run_solver_create(r, &so);
  if (s != STRATA_OK) return run_lib_fail(r, s, mg_keys, "poisson");
  r->steps = maxc;
  if (r->estimating) return 0;
  ms->nlev = strata_mg_levels(strata_solver_mg(r->sv));
  ms->phi = strata_solver_field(r->sv, 0);
  ms->psi = strata_solver_field(r->sv, 1);
  if (o.disc == STRATA_MG_FV &&
      poisson_set_beta(r, strata_solver_mg(r->sv)))
    return -1;
  const char *src = cf_string(f, "poisson", "source",
                             o.disc == STRATA_MG_FV ? "gaussian"
                                                    : "manufactured");
  if (o.disc == STRATA_MG_FV && !strcmp(src, "manufactured"))
    return run_case_fail(r, "poisson", "source", "the manufactured source "
                         "is for fd7 and fe27; fv7 takes source = gaussian "
                         "or file");
  ms->source = !strcmp(src, "file") ? 2 : !strcmp(src, "gaussian") ? 1 : 0;
  size_t mn = r->n[0];
  for (int a = 1; a < r->dims; a++) mn = r->n[a] < mn ? r->n[a] : mn;
  ms->width = cf_float(f, "poisson", "width", mn / 10.0 > 1 ? mn / 10.0 : 1);
  if (ms->source == 2) {
    if (read_source_file(r, ms)) return -1;
  } else {
    if (ms->source == 0) {
      for (int a = 0; a < r->dims; a++) {
        manufactured_axis(ms, a, o.bc.kind[2 * a], o.bc.kind[2 * a + 1],
                          r->n[a]);
        ms->k2 += ms->kx[a] * ms->kx[a];
      }
      ms->exact = homogeneous;
    }
    g_dims = r->dims;
    g_h = r->h;
    g_ms = ms;
    for (int a = 0; a < 3; a++) g_n[a] = r->n[a];
    s = strata_field_fill_fn(ms->psi, psi_fn, NULL);
    if (s != STRATA_OK)
      return run_fail(r, "source: %s", strata_context_error(r->ctx));
  }
  return 0;
}

/* One cycle at a time: the residual history (the library's, which a
 * checkpoint carries) decides when the run is complete. */
static int mg_step(run_state *r, long n) {
  mg_state *ms = r->impl;
  for (long c = 0; c < n; c++) {
    strata_solver_info si;
    strata_status s = strata_solver_step(r->sv, 1);
    r->step_status = s;
    if (s != STRATA_OK)
      return run_fail(r, "cycle %ld: %s", r->step + c + 1,
                      strata_context_error(r->ctx));
    strata_solver_get_info(r->sv, &si);
    ms->seconds += si.last_seconds;
    const double *h = si.history;
    long k = si.steps;
    double r0 = h[0], rk = h[k];
    if (!r->quiet)
      fprintf(stderr, "strata: cycle %3ld  residual %.4e  relative %.3e  "
              "factor %.4f\n", k, rk, r0 > 0 ? rk / r0 : 0,
              h[k - 1] > 0 ? rk / h[k - 1] : 0);
    int stop = 0;
    if (r0 == 0 || rk <= ms->tol * r0) {
      ms->converged = stop = 1;
    } else if (k >= 3 && rk > 0.9 * h[k - 1] && h[k - 1] > 0.9 * h[k - 2]) {
      ms->stalled = stop = 1; /* the rounding floor */
    }
    if (stop) {
      r->stop_at = r->step + c + 1;
      break;
    }
  }
  return 0;
}

static void mg_error(run_state *r, mg_state *ms) {
  size_t np = r->n[0] * r->n[1] * r->n[2];
  double *u = malloc(np * sizeof *u);
  float *uf = r->precision == STRATA_F32 ? malloc(np * sizeof *uf) : NULL;
  if (!u || (r->precision == STRATA_F32 && !uf) ||
      strata_field_read(ms->phi, uf ? (void *)uf : (void *)u) != STRATA_OK) {
    free(u);
    free(uf);
    return;
  }
  double emax = 0, e2 = 0;
  size_t p = 0;
  for (size_t k = 0; k < r->n[2]; k++)
    for (size_t j = 0; j < r->n[1]; j++)
      for (size_t i = 0; i < r->n[0]; i++, p++) {
        double v = uf ? uf[p] : u[p];
        double e = fabs(v - manufactured_phi(ms, r->dims, (long)i, (long)j,
                                             (long)k));
        emax = e > emax ? e : emax;
        e2 += e * e;
      }
  ms->err_max = emax;
  ms->err_rms = sqrt(e2 / (double)np);
  ms->have_err = 1;
  free(u);
  free(uf);
}

static void mg_describe(run_state *r, FILE *json) {
  mg_state *ms = r->impl;
  strata_mg_options o;
  if (strata_mg_get_options(strata_solver_mg(r->sv), &o) != STRATA_OK)
    return;
  strata_solver_info si;
  strata_solver_get_info(r->sv, &si);
  static const double none[1] = {0};
  const double *h = si.history ? si.history : none;
  int k = si.history ? (int)si.steps : 0;
  double r0 = h[0], rel = r0 > 0 ? h[k] / r0 : 0;
  fprintf(json, "  \"poisson\": {\"discretization\": \"%s\", \"cycle\": "
          "\"%s\", \"levels\": %d, \"omega\": %.17g, \"tolerance\": %.6g,\n"
          "    \"cycles\": %d, \"converged\": %s, \"stalled\": %s, "
          "\"solve_s\": %.6f,\n    \"residual0\": %.17g, \"residual\": "
          "%.17g, \"relative\": %.17g,\n    \"convergence_factor\": %.6g, "
          "\"last_factor\": %.6g, \"source_mean\": %.17g,\n",
          mg_disc_names[o.disc], o.fmg ? "fmg" : mg_cycle_names[o.cycle],
          ms->nlev, o.omega, ms->tol, k, ms->converged ? "true" : "false",
          ms->stalled ? "true" : "false", ms->seconds, r0, h[k], rel,
          k > 0 && r0 > 0 ? pow(rel, 1.0 / k) : 0,
          k > 0 && h[k - 1] > 0 ? h[k] / h[k - 1] : 0, si.source_mean + 0.0);
  fprintf(json, "    \"smoother\": \"%s\",\n",
          mg_smoother_names[o.smoother]);
  fprintf(json, "    \"residual_history\": [");
  for (int i = 0; i <= k; i++) {
    fputs(i ? ", " : "", json);
    json_number(json, "%.9g", h[i]);
  }
  fprintf(json, "]");
  if (ms->source == 0 && ms->exact) {
    mg_error(r, ms);
    if (ms->have_err)
      fprintf(json, ",\n    \"error_max\": %.9g, \"error_rms\": %.9g",
              ms->err_max, ms->err_rms);
  }
  fprintf(json, "},\n");
}

static void mg_destroy(run_state *r) {
  mg_state *ms = r->impl;
  free(ms);
  r->impl = NULL;
}

const run_solver run_solver_multigrid = {
    .kind = "multigrid",
    .sections = "poisson",
    .bcs = "dirichlet|neumann|periodic",
    .dims_min = 2,
    .dims_max = 3,
    .precision = STRATA_F64,
    .cmap = "viridis",
    .field_name = "phi",
    .own_progress = 1,
    .checkpoints = 1,
    .create = mg_create,
    .step = mg_step,
    .describe = mg_describe,
    .destroy = mg_destroy,
};
