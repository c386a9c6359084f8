/* The library's solvers (heat, wave, fdtd) as `strata run` sees them: the
 * case's keys become the solvers' options; the library checks stability
 * and resolution, and its refusals are reported at the key that set the
 * option the library names (a table per solver).  The run itself goes
 * through strata_solver. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "wave_model.h"

/* ---- which case key set which library option ----------------------------- */

void run_where_face(const run_state *r, long index, const char **section,
                    const char **key) {
  *section = "boundary";
  *key = "all";
  if (index < 0 || index >= 6) return;
  /* the face's own key, else all; when neither is set, the face was
   * refused for its partner on the axis (periodic on one face only) */
  const char *own = run_face_key((int)index),
             *other = run_face_key((int)(index ^ 1));
  if (cf_has(&r->cf, "boundary", own))
    *key = own;
  else if (!cf_has(&r->cf, "boundary", "all") &&
           cf_has(&r->cf, "boundary", other))
    *key = other;
}

/* receivers[3 r + a]: receiver r lies on the line from start to end, so
 * only an end can be outside the grid: the first is start, the last end */
static void where_receiver(const run_state *r, long index,
                           const char **section, const char **key) {
  *section = "receivers";
  *key = index < 3 ? "start" : "end";
  (void)r;
}

/* The row of map that names the context's recorded argument ("n[2]" is
 * option n, index 2), or NULL. */
static const run_optkey *lib_row(const run_state *r, const run_optkey *map,
                                 long *index) {
  char base[64];
  snprintf(base, sizeof base, "%s", strata_context_error_arg(r->ctx));
  *index = -1;
  char *br = strchr(base, '[');
  if (br) {
    *index = strtol(br + 1, NULL, 10);
    *br = '\0';
  }
  for (const run_optkey *m = map; base[0] && m && m->arg; m++)
    if (!strcmp(m->arg, base)) return m;
  return NULL;
}

int run_lib_names(const run_state *r, const run_optkey *map) {
  long index;
  return lib_row(r, map, &index) != NULL;
}

int run_lib_fail(run_state *r, strata_status s, const run_optkey *map,
                 const char *solver_section) {
  r->unsupported = s == STRATA_ENOTSUP;
  const char *msg = strata_context_error(r->ctx);
  if (s != STRATA_EINVAL && s != STRATA_EUNSTABLE)
    return run_fail(r, "%s: %s", strata_strerror(s), msg);
  long index;
  const run_optkey *m = lib_row(r, map, &index);
  const char *section = solver_section, *key = NULL;
  if (m) {
    section = m->section;
    key = m->key;
    if (m->where) m->where(r, index, &section, &key);
  }
  /* an option the case left at its default: the section names it */
  if (key && !cf_has(&r->cf, section, key)) key = NULL;
  return run_case_fail(r, section, key, "%s: %s", strata_strerror(s), msg);
}

/* ---- the library solver ---------------------------------------------------- */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A hash of the case's entries outside [case], [run] and [output]: what a
 * restart must share with the run that wrote the checkpoint. */
static uint64_t case_hash(const cf_file *f) {
  char **lines = calloc((size_t)f->n + 1, sizeof *lines);
  int m = 0;
  for (int i = 0; lines && i < f->n; i++) {
    const char *s = f->e[i].section;
    if (!strcmp(s, "case") || !strcmp(s, "run") || !strcmp(s, "output"))
      continue;
    size_t L = strlen(s) + strlen(f->e[i].key) + strlen(f->e[i].value) + 3;
    lines[m] = malloc(L);
    if (!lines[m]) break;
    snprintf(lines[m++], L, "%s.%s=%s", s, f->e[i].key, f->e[i].value);
  }
  if (lines) qsort(lines, (size_t)m, sizeof *lines, cmp_str);
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < m; i++) {
    for (const char *p = lines[i]; *p; p++)
      h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    h = (h ^ '\n') * 0x100000001b3ull;
    free(lines[i]);
  }
  free(lines);
  return h;
}

strata_status run_solver_create(run_state *r, strata_solver_options *o) {
  o->tag = case_hash(&r->cf);
  if (!r->estimating) return strata_solver_create(r->ctx, o, &r->sv);
  strata_status s = strata_solver_estimate(r->ctx, o, &r->fp_host, &r->fp_dev);
  /* too large: run_check_memory says so, with the run's own copies */
  return s == STRATA_ENOMEM ? STRATA_OK : s;
}

/* ---- heat ---------------------------------------------------------------- */

/* strata_heat_options' fields as heat_create reads them from the case */
static const run_optkey heat_keys[] = {
    RUN_GRID_KEYS,
    {"op", "heat", "operator", NULL},
    {"D", "heat", "diffusion_number", NULL},
    {"fuse", "heat", "fuse", NULL},
    {"bc.kind", NULL, NULL, run_where_face},
    {"bc.value", "boundary", "value", NULL},
    {"check_every", "run", "check_every", NULL},
    {NULL, NULL, NULL, NULL}};

static int heat_create(run_state *r) {
  strata_heat_options o;
  strata_heat_options_init(&o);
  o.dims = r->dims;
  for (int a = 0; a < 3; a++) o.n[a] = r->n[a];
  o.precision = r->precision;
  o.op = !strcmp(cf_string(&r->cf, "heat", "operator", "fd"), "fe27")
             ? STRATA_HEAT_FE27
             : STRATA_HEAT_FD;
  if (o.op == STRATA_HEAT_FE27 && r->dims != 3)
    return run_case_fail(r, "heat", "operator", "fe27 needs a 3D grid");
  o.D = cf_float(&r->cf, "heat", "diffusion_number", 0.1);
  o.fuse = (int)cf_int(&r->cf, "heat", "fuse", 0);
  o.check_every = (int)cf_int(&r->cf, "run", "check_every",
                              STRATA_CHECK_EVERY);
  o.dist = r->dist;
  double value = cf_float(&r->cf, "boundary", "value", 0);
  for (int face = 0; face < 6; face++) {
    strata_bc_parse(run_face_value(r, face, "dirichlet"), &o.bc.kind[face]);
    o.bc.value[face] = value;
  }
  r->bc = o.bc;
  strata_solver_options so;
  strata_solver_options_init(&so, STRATA_SOLVER_HEAT);
  so.heat = &o;
  strata_status s = run_solver_create(r, &so);
  if (s != STRATA_OK) return run_lib_fail(r, s, heat_keys, "heat");
  if (r->estimating) return 0;
  s = strata_heat_set_initial(strata_solver_heat(r->sv), run_initial_value,
                              NULL);
  if (s != STRATA_OK)
    return run_fail(r, "initial state: %s", strata_context_error(r->ctx));
  return 0;
}

static void heat_describe(run_state *r, FILE *json) {
  strata_heat_info i;
  if (strata_heat_get_info(strata_solver_heat(r->sv), &i) != STRATA_OK)
    return;
  fprintf(json, "  \"diffusion_number\": %.17g,\n  \"diffusion_limit\": "
          "%.17g,\n  \"fuse\": %d,\n", i.D, i.D_limit, i.fuse);
}

static const run_solver heat_solver = {
    .kind = "heat",
    .sections = "heat|initial",
    .bcs = "dirichlet|neumann|periodic",
    .dims_min = 2,
    .dims_max = 3,
    .precision = STRATA_F64,
    .cmap = "inferno",
    .field_name = "u",
    .distributed = 1,
    .checkpoints = 1,
    .create = heat_create,
    .describe = heat_describe,
};

/* ---- wave ----------------------------------------------------------------- */


/* strata_wave_options' fields as run_wave_options reads them from the case */
const run_optkey run_wave_keys[] = {
    RUN_GRID_KEYS,
    {"dt", "wave", "dt", NULL},
    {"order", "wave", "order", NULL},
    {"velocity", "wave", "velocity", NULL},
    {"min_ppw", "wave", "min_ppw", NULL},
    {"absorb_reflection", "wave", "absorb_reflection", NULL},
    {"nlayers", "wave", "layer_tops", NULL},
    {"layer_top", "wave", "layer_tops", NULL},
    {"layer_velocity", "wave", "layer_velocities", NULL},
    {"layer_density", "wave", "layer_densities", NULL},
    {"face", NULL, NULL, run_where_face},
    {"absorb_width", "boundary", "width", NULL},
    {"src", "source", "position", NULL},
    {"f0", "source", "frequency", NULL},
    {"amplitude", "source", "amplitude", NULL},
    {"delay", "source", "delay", NULL},
    {"nreceivers", "receivers", "count", NULL},
    {"receivers", NULL, NULL, where_receiver},
    {"record_every", "receivers", "every", NULL},
    {"check_every", "run", "check_every", NULL},
    {NULL, NULL, NULL, NULL}};

int run_wave_options(run_state *r, strata_wave_options *op, double **recp) {
  cf_file *f = &r->cf;
  strata_wave_options o;
  strata_wave_options_init(&o);
  *recp = NULL;
  for (int a = 0; a < 3; a++) o.n[a] = r->n[a];
  o.h = r->h;
  o.precision = r->precision;
  o.dt = cf_float(f, "wave", "dt", 0);
  o.check_every = (int)cf_int(f, "run", "check_every", STRATA_CHECK_EVERY);
  o.order = (int)cf_int(f, "wave", "order", 8);
  o.velocity = cf_float(f, "wave", "velocity", 2000);
  o.min_ppw = cf_float(f, "wave", "min_ppw", 4);
  o.absorb_reflection = cf_float(f, "wave", "absorb_reflection", 1e-4);
  int nt = cf_floats(f, "wave", "layer_tops", NULL, 0);
  int nv = cf_floats(f, "wave", "layer_velocities", NULL, 0);
  int nr = cf_floats(f, "wave", "layer_densities", NULL, 0);
  if (nt != nv)
    return run_case_fail(r, "wave", nt ? "layer_tops" : "layer_velocities",
                         "layer_tops has %d values and layer_velocities %d; "
                         "they need one each per layer", nt, nv);
  if (nr && nr != nt)
    return run_case_fail(r, "wave", "layer_densities",
                         "layer_densities has %d values and layer_tops %d; "
                         "they need one each per layer", nr, nt);
  /* the layers, then the receivers, in one block the caller frees */
  const int nrec = cf_section_line(f, "receivers")
                       ? (int)cf_int(f, "receivers", "count", 1) : 0;
  double *buf = malloc(sizeof(double) * (3 * (size_t)nt + 3 * (size_t)nrec + 1));
  if (!buf) return run_fail(r, "out of memory");
  double *tops = buf, *vels = buf + nt, *rhos = buf + 2 * nt,
         *rec = buf + 3 * nt;
  cf_floats(f, "wave", "layer_tops", tops, nt);
  cf_floats(f, "wave", "layer_velocities", vels, nv);
  cf_floats(f, "wave", "layer_densities", rhos, nr);
  *recp = buf;
  if (nt) {
    o.nlayers = nt;
    o.layer_top = tops;
    o.layer_velocity = vels;
    o.layer_density = nr ? rhos : NULL;
    double vmax = 0;
    for (int i = 0; i < nv; i++) vmax = vels[i] > vmax ? vels[i] : vmax;
    o.velocity = vmax;
  }
  static const char *names[] = {"cpml", "sponge", "free", "periodic"};
  static const strata_wave_face kinds[] = {STRATA_WAVE_CPML,
                                           STRATA_WAVE_SPONGE,
                                           STRATA_WAVE_FREE,
                                           STRATA_WAVE_PERIODIC};
  for (int face = 0; face < 6; face++) {
    const char *v = run_face_value(r, face, "cpml");
    for (int k = 0; k < 4; k++)
      if (!strcmp(v, names[k])) o.face[face] = kinds[k];
  }
  o.absorb_width = (int)cf_int(f, "boundary", "width", 20);
  double p[3];
  int np = cf_floats(f, "source", "position", p, 3);
  if (np == 2)
    return run_case_fail(r, "source", "position", "the wave solver needs "
                         "x, y, z (metres)");
  if (np == 3)
    for (int a = 0; a < 3; a++) o.src[a] = p[a];
  o.f0 = cf_float(f, "source", "frequency", 10);
  o.amplitude = cf_float(f, "source", "amplitude", 1);
  o.delay = cf_float(f, "source", "delay", 0);
  if (nrec > 0) {
    double s[3], e[3];
    cf_floats(f, "receivers", "start", s, 3);
    cf_floats(f, "receivers", "end", e, 3);
    for (int i = 0; i < nrec; i++) {
      double t = nrec > 1 ? (double)i / (nrec - 1) : 0;
      for (int a = 0; a < 3; a++)
        rec[3 * i + a] = s[a] + t * (e[a] - s[a]);
    }
    o.nreceivers = nrec;
    o.receivers = rec; /* the solver keeps a copy */
    o.record_every = (int)cf_int(f, "receivers", "every", 1);
  }
  o.dist = r->dist;
  *op = o;
  return 0;
}

static int wave_create(run_state *r) {
  cf_file *f = &r->cf;
  strata_wave_options o;
  double *rec = NULL;
  if (run_wave_options(r, &o, &rec)) {
    free(rec);
    return -1;
  }
  run_wave_model wm;
  if (run_wave_model_load(r, &o, &wm)) {
    free(rec);
    return -1;
  }
  strata_solver_options so;
  strata_solver_options_init(&so, STRATA_SOLVER_WAVE);
  so.wave = &o;
  strata_status st = run_solver_create(r, &so);
  if (st != STRATA_OK || r->estimating) run_wave_model_free(&wm);
  int fail = st == STRATA_OK && !r->estimating &&
             run_wave_interfaces(r, &o, &wm); /* o's layers: in rec */
  free(rec);
  if (st != STRATA_OK) return run_lib_fail(r, st, run_wave_keys, "wave");
  if (r->estimating) return 0;
  if (fail) {
    run_wave_model_free(&wm);
    return -1;
  }
  if (run_wave_model_apply(r, &wm)) return -1;
  const char *ik = cf_string(f, "initial", "kind", "zero");
  if (strcmp(ik, "zero") != 0) {
    st = strata_wave_set_state(strata_solver_wave(r->sv), run_initial_value,
                               NULL, NULL);
    if (st != STRATA_OK)
      return run_fail(r, "initial state: %s", strata_context_error(r->ctx));
  }
  return 0;
}

static void wave_describe(run_state *r, FILE *json) {
  strata_wave_info i;
  if (strata_wave_get_info(strata_solver_wave(r->sv), &i) != STRATA_OK)
    return;
  fprintf(json, "  \"dt\": %.9g,\n  \"time\": %.9g,\n  \"vmin\": %.9g,\n"
          "  \"vmax\": %.9g,\n  \"cfl\": %.6g,\n  \"cfl_limit\": %.6g,\n"
          "  \"points_per_wavelength\": %.6g,\n", i.dt, i.time, i.vmin,
          i.vmax, i.cfl, i.cfl_limit, i.ppw);
}

static const run_solver wave_solver = {
    .kind = "wave",
    .sections = "wave|source|receivers|initial|model|survey",
    .bcs = "cpml|sponge|free|periodic",
    .dims_min = 3,
    .dims_max = 3,
    .precision = STRATA_F32,
    .cmap = "seismic",
    .field_name = "p",
    .distributed = 1,
    .checkpoints = 1,
    .create = wave_create,
    .describe = wave_describe,
};

/* ---- fdtd ---------------------------------------------------------------- */

/* strata_fdtd_options' fields as fdtd_create reads them from the case */
static const run_optkey fdtd_keys[] = {
    RUN_GRID_KEYS,
    {"scheme", "fdtd", "scheme", NULL},
    {"courant", "fdtd", "courant", NULL},
    {"face", NULL, NULL, run_where_face},
    {"pml_width", "boundary", "width", NULL},
    {"waveform", "source", "waveform", NULL},
    {"src", "source", "position", NULL},
    {"amplitude", "source", "amplitude", NULL},
    {"period", "source", "period", NULL},
    {"delay", "source", "delay", NULL},
    {"check_every", "run", "check_every", NULL},
    {NULL, NULL, NULL, NULL}};

static int fdtd_create(run_state *r) {
  cf_file *cf = &r->cf;
  strata_fdtd_options o;
  strata_fdtd_options_init(&o);
  o.n[0] = r->n[0];
  o.n[1] = r->n[1];
  o.precision = r->precision;
  o.check_every = (int)cf_int(cf, "run", "check_every", STRATA_CHECK_EVERY);
  o.scheme = !strcmp(cf_string(cf, "fdtd", "scheme", "explicit"), "yee")
                 ? STRATA_FDTD_YEE_TM
                 : STRATA_FDTD_EXPLICIT;
  o.courant = cf_float(cf, "fdtd", "courant", 0.5);
  static const char *names[] = {"pec", "mur", "pml", "periodic"};
  static const strata_fdtd_face kinds[] = {STRATA_FDTD_PEC, STRATA_FDTD_MUR,
                                           STRATA_FDTD_PML,
                                           STRATA_FDTD_PERIODIC};
  for (int face = 0; face < 4; face++) {
    const char *v = run_face_value(r, face, "pec");
    for (int k = 0; k < 4; k++)
      if (!strcmp(v, names[k])) o.face[face] = kinds[k];
  }
  o.pml_width = (int)cf_int(cf, "boundary", "width", 16);
  static const char *wf[] = {"none", "sine", "gaussian", "ricker"};
  static const strata_fdtd_waveform wk[] = {
      STRATA_FDTD_NO_SOURCE, STRATA_FDTD_SINE, STRATA_FDTD_GAUSSIAN,
      STRATA_FDTD_RICKER};
  const char *w = cf_string(cf, "source", "waveform", "sine");
  for (int k = 0; k < 4; k++)
    if (!strcmp(w, wf[k])) o.waveform = wk[k];
  double p[3];
  int np = cf_floats(cf, "source", "position", p, 3);
  if (np == 3)
    return run_case_fail(r, "source", "position", "the fdtd solver is 2D: "
                         "give node i, j");
  if (np == 2) {
    o.src[0] = p[0];
    o.src[1] = p[1];
  }
  o.amplitude = cf_float(cf, "source", "amplitude", 1);
  o.period = cf_float(cf, "source", "period", 20);
  o.delay = cf_float(cf, "source", "delay", 0);
  o.dist = r->dist;
  strata_solver_options so;
  strata_solver_options_init(&so, STRATA_SOLVER_FDTD);
  so.fdtd = &o;
  strata_status s = run_solver_create(r, &so);
  if (s != STRATA_OK) return run_lib_fail(r, s, fdtd_keys, "fdtd");
  return 0;
}

static const run_solver fdtd_solver = {
    .kind = "fdtd",
    .sections = "fdtd|source",
    .bcs = "pec|mur|pml|periodic",
    .dims_min = 2,
    .dims_max = 2,
    .precision = STRATA_F32,
    .cmap = "seismic",
    .field_name = "Ez",
    .distributed = 1,
    .checkpoints = 1,
    .create = fdtd_create,
};

const run_solver *const run_solvers[] = {&run_solver_operator, &heat_solver,
                                         &wave_solver, &fdtd_solver,
                                         &run_solver_multigrid, NULL};
