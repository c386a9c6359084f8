/* The library's solvers (heat, wave, fdtd) as `strata run` sees them: the
 * case's keys become the solvers' options; the library checks stability
 * and resolution, and its refusals are reported at the key that set the
 * option the library names (a table per solver). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "run.h"

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

int run_lib_fail(run_state *r, strata_status s, const run_optkey *map,
                 const char *solver_section) {
  r->unsupported = s == STRATA_ENOTSUP;
  const char *msg = strata_context_error(r->ctx);
  if (s != STRATA_EINVAL && s != STRATA_EUNSTABLE)
    return run_fail(r, "%s: %s", strata_strerror(s), msg);
  /* "n[2]" is option n, index 2 */
  char base[64];
  snprintf(base, sizeof base, "%s", strata_context_error_arg(r->ctx));
  long index = -1;
  char *br = strchr(base, '[');
  if (br) {
    index = strtol(br + 1, NULL, 10);
    *br = '\0';
  }
  const char *section = solver_section, *key = NULL;
  for (const run_optkey *m = map; base[0] && m && m->arg; m++)
    if (!strcmp(m->arg, base)) {
      section = m->section;
      key = m->key;
      if (m->where) m->where(r, index, &section, &key);
      break;
    }
  /* an option the case left at its default: the section names it */
  if (key && !cf_has(&r->cf, section, key)) key = NULL;
  return run_case_fail(r, section, key, "%s: %s", strata_strerror(s), msg);
}

static size_t field_bytes(run_state *r, int ghost) {
  strata_field_desc d = {r->dims, {r->n[0], r->n[1], r->n[2]}, ghost,
                         r->precision};
  size_t b = 0;
  if (strata_field_bytes(&d, &b) != STRATA_OK) return 0;
  return b;
}

static int estimate_fields(run_state *r, int nfields, int ghost,
                           size_t *bytes) {
  size_t one = field_bytes(r, ghost);
  if (!one)
    return run_case_fail(r, "grid", "n", "the grid's size overflows");
  *bytes = one * (size_t)nfields;
  return 0;
}

/* ---- checkpoints ----------------------------------------------------------- */

/* this rank's part over several processes, NULL for one process */
static const ckpt_part *part_of(run_state *r, ckpt_part *p) {
  if (!r->dist) return NULL;
  p->rank = r->rank;
  p->nranks = r->nranks;
  return p;
}

/* A solver whose state is one blob (wave, fdtd).  Over several processes
 * the library's save and load are collective: every rank calls them, a
 * rank that has nothing to give passes no buffer (and fails, as do the
 * others then), so no rank waits for another. */
typedef struct {
  const char *kind;
  strata_status (*size)(const void *solver, size_t *bytes);
  strata_status (*save)(const void *solver, void *buf, size_t size);
  strata_status (*load)(void *solver, const void *buf, size_t size);
} blob_ops;

static int blob_ck_save(run_state *r, void *solver, const blob_ops *ops,
                        const char *path) {
  size_t n = 0;
  void *buf = NULL;
  ckpt_part pt;
  strata_status s = ops->size(solver, &n);
  int nomem = s == STRATA_OK && !(buf = malloc(n ? n : 1));
  if (s == STRATA_OK || r->dist) {
    strata_status s2 = ops->save(solver, nomem ? NULL : buf, nomem ? 0 : n);
    if (s == STRATA_OK) s = s2;
  }
  int rc = nomem ? run_fail(r, "checkpoint: out of memory (%zu bytes)", n)
           : s != STRATA_OK
               ? run_fail(r, "checkpoint: %s", strata_context_error(r->ctx))
               : ckpt_save_blob(path, ops->kind, ckpt_case_hash(&r->cf),
                                r->step, buf, n, part_of(r, &pt), r->err,
                                sizeof r->err);
  free(buf);
  return rc;
}

static int blob_ck_load(run_state *r, void *solver, const blob_ops *ops,
                        const char *path) {
  void *buf = NULL;
  size_t n = 0;
  long step = 0;
  ckpt_part pt;
  int bad = ckpt_load_blob(path, ops->kind, ckpt_case_hash(&r->cf), &step,
                           &buf, &n, part_of(r, &pt), r->err, sizeof r->err);
  if (bad && !r->dist) return -1;
  strata_status s = ops->load(solver, bad ? NULL : buf, bad ? 0 : n);
  free(buf);
  if (bad) return -1; /* its own message, not the library's */
  if (s != STRATA_OK)
    return run_fail(r, "%s: %s", path, strata_context_error(r->ctx));
  r->step = step;
  return 0;
}

/* ---- heat ---------------------------------------------------------------- */

static int heat_estimate(run_state *r, size_t *bytes) {
  long fuse = cf_int(&r->cf, "heat", "fuse", 0);
  return estimate_fields(r, 2, fuse > 1 ? (int)fuse : 2, bytes);
}

/* strata_heat_options' fields as heat_create reads them from the case */
static const run_optkey heat_keys[] = {
    RUN_GRID_KEYS,
    {"op", "heat", "operator", NULL},
    {"D", "heat", "diffusion_number", NULL},
    {"fuse", "heat", "fuse", NULL},
    {"bc.kind", NULL, NULL, run_where_face},
    {"bc.value", "boundary", "value", NULL},
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
  o.dist = r->dist;
  double value = cf_float(&r->cf, "boundary", "value", 0);
  for (int face = 0; face < 6; face++) {
    strata_bc_parse(run_face_value(r, face, "dirichlet"), &o.bc.kind[face]);
    o.bc.value[face] = value;
  }
  r->bc = o.bc;
  strata_heat *h = NULL;
  strata_status s = strata_heat_create(r->ctx, &o, &h);
  if (s != STRATA_OK) return run_lib_fail(r, s, heat_keys, "heat");
  r->impl = h;
  s = strata_heat_set_initial(h, run_initial_value, NULL);
  if (s != STRATA_OK)
    return run_fail(r, "initial state: %s", strata_context_error(r->ctx));
  return 0;
}

static int heat_step(run_state *r, long n) {
  strata_status s = strata_heat_step(r->impl, n);
  return s == STRATA_OK ? 0 : run_fail(r, "%s", strata_context_error(r->ctx));
}

static strata_field *heat_field(run_state *r) {
  return strata_heat_field(r->impl);
}

static int heat_read(run_state *r, void *host) {
  strata_status s = strata_heat_read(r->impl, host);
  return s == STRATA_OK ? 0 : run_fail(r, "%s", strata_context_error(r->ctx));
}

static double heat_bpp(run_state *r) {
  strata_heat_info i;
  if (strata_heat_get_info(r->impl, &i) != STRATA_OK) return 0;
  return i.bytes_per_point_step;
}

static void heat_describe(run_state *r, FILE *json) {
  strata_heat_info i;
  if (strata_heat_get_info(r->impl, &i) != STRATA_OK) return;
  fprintf(json, "  \"diffusion_number\": %.17g,\n  \"diffusion_limit\": "
          "%.17g,\n  \"fuse\": %d,\n", i.D, i.D_limit, i.fuse);
}

static int heat_ck_save(run_state *r, const char *path) {
  strata_field *f = strata_heat_field(r->impl);
  ckpt_part pt;
  return ckpt_save(path, "heat", ckpt_case_hash(&r->cf), r->step, 1, &f,
                   part_of(r, &pt), r->err, sizeof r->err);
}

static int heat_ck_load(run_state *r, const char *path) {
  strata_field *f = strata_heat_field(r->impl);
  ckpt_part pt;
  return ckpt_load(path, "heat", ckpt_case_hash(&r->cf), &r->step, 1, &f,
                   part_of(r, &pt), r->err, sizeof r->err);
}

static void heat_destroy(run_state *r) {
  strata_heat *h = r->impl;
  strata_heat_destroy(&h);
  r->impl = NULL;
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
    .estimate = heat_estimate,
    .create = heat_create,
    .step = heat_step,
    .field = heat_field,
    .read = heat_read,
    .bytes_per_point_step = heat_bpp,
    .describe = heat_describe,
    .checkpoint_save = heat_ck_save,
    .checkpoint_load = heat_ck_load,
    .destroy = heat_destroy,
};

/* ---- wave ----------------------------------------------------------------- */

typedef struct {
  strata_wave *w;
  double *rec;
  int nrec, every;
  double src[3];
} wave_state;

static int wave_estimate(run_state *r, size_t *bytes) {
  /* p^n, p^{n-1}, the velocity model and the absorbing layers' memory */
  return estimate_fields(r, 5, 4, bytes);
}

/* strata_wave_options' fields as wave_create reads them from the case */
static const run_optkey wave_keys[] = {
    RUN_GRID_KEYS,
    {"dt", "wave", "dt", NULL},
    {"order", "wave", "order", NULL},
    {"velocity", "wave", "velocity", NULL},
    {"min_ppw", "wave", "min_ppw", NULL},
    {"absorb_reflection", "wave", "absorb_reflection", NULL},
    {"nlayers", "wave", "layer_tops", NULL},
    {"layer_top", "wave", "layer_tops", NULL},
    {"layer_velocity", "wave", "layer_velocities", NULL},
    {"face", NULL, NULL, run_where_face},
    {"absorb_width", "boundary", "width", NULL},
    {"src", "source", "position", NULL},
    {"f0", "source", "frequency", NULL},
    {"amplitude", "source", "amplitude", NULL},
    {"delay", "source", "delay", NULL},
    {"nreceivers", "receivers", "count", NULL},
    {"receivers", NULL, NULL, where_receiver},
    {"record_every", "receivers", "every", NULL},
    {NULL, NULL, NULL, NULL}};

static int wave_create(run_state *r) {
  cf_file *f = &r->cf;
  wave_state *ws = calloc(1, sizeof *ws);
  if (!ws) return run_fail(r, "out of memory");
  r->impl = ws;
  strata_wave_options o;
  strata_wave_options_init(&o);
  for (int a = 0; a < 3; a++) o.n[a] = r->n[a];
  o.h = r->h;
  o.precision = r->precision;
  o.dt = cf_float(f, "wave", "dt", 0);
  o.order = (int)cf_int(f, "wave", "order", 8);
  o.velocity = cf_float(f, "wave", "velocity", 2000);
  o.min_ppw = cf_float(f, "wave", "min_ppw", 4);
  o.absorb_reflection = cf_float(f, "wave", "absorb_reflection", 1e-4);
  double tops[64], vels[64];
  int nt = cf_floats(f, "wave", "layer_tops", tops, 64);
  int nv = cf_floats(f, "wave", "layer_velocities", vels, 64);
  if (nt != nv)
    return run_case_fail(r, "wave", nt ? "layer_tops" : "layer_velocities",
                         "layer_tops has %d values and layer_velocities %d; "
                         "they need one each per layer", nt, nv);
  if (nt) {
    o.nlayers = nt;
    o.layer_top = tops;
    o.layer_velocity = vels;
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
  for (int a = 0; a < 3; a++)
    ws->src[a] = o.src[a] >= 0 ? o.src[a] : 0.5 * (double)(r->n[a] - 1) * r->h;
  if (cf_section_line(f, "receivers")) {
    double s[3], e[3];
    cf_floats(f, "receivers", "start", s, 3);
    cf_floats(f, "receivers", "end", e, 3);
    ws->nrec = (int)cf_int(f, "receivers", "count", 1);
    ws->every = (int)cf_int(f, "receivers", "every", 1);
    ws->rec = malloc(3 * (size_t)ws->nrec * sizeof *ws->rec);
    if (!ws->rec) return run_fail(r, "out of memory");
    for (int i = 0; i < ws->nrec; i++) {
      double t = ws->nrec > 1 ? (double)i / (ws->nrec - 1) : 0;
      for (int a = 0; a < 3; a++)
        ws->rec[3 * i + a] = s[a] + t * (e[a] - s[a]);
    }
    o.nreceivers = ws->nrec;
    o.receivers = ws->rec;
    o.record_every = ws->every;
  }
  o.dist = r->dist;
  strata_status st = strata_wave_create(r->ctx, &o, &ws->w);
  if (st != STRATA_OK) return run_lib_fail(r, st, wave_keys, "wave");
  const char *ik = cf_string(f, "initial", "kind", "zero");
  if (strcmp(ik, "zero") != 0) {
    st = strata_wave_set_state(ws->w, run_initial_value, NULL, NULL);
    if (st != STRATA_OK)
      return run_fail(r, "initial state: %s", strata_context_error(r->ctx));
  }
  return 0;
}

static int wave_step(run_state *r, long n) {
  wave_state *ws = r->impl;
  strata_status s = strata_wave_step(ws->w, n);
  return s == STRATA_OK ? 0 : run_fail(r, "%s", strata_context_error(r->ctx));
}

static strata_field *wave_field(run_state *r) {
  return strata_wave_field(((wave_state *)r->impl)->w, 0);
}

static int wave_read(run_state *r, void *host) {
  strata_status s = strata_wave_read(((wave_state *)r->impl)->w, host);
  return s == STRATA_OK ? 0 : run_fail(r, "%s", strata_context_error(r->ctx));
}

/* The seismograms d (ns samples per receiver) as the writers take them. */
static void fill_traces(const wave_state *ws, const strata_wave_info *i,
                        size_t ns, double *d, strata_traces *t,
                        double **buf) {
  memset(t, 0, sizeof *t);
  t->ntraces = (size_t)ws->nrec;
  t->nsamples = ns;
  t->dt = i->dt * ws->every;
  t->precision = STRATA_F64;
  t->data = d;
  t->receivers = ws->rec;
  for (int a = 0; a < 3; a++) t->source[a] = ws->src[a];
  *buf = d;
}

/* Over several processes: strata_wave_traces gathers to rank 0 and every
 * rank calls it once; the sample count is the same on every rank. */
static int wave_traces_dist(run_state *r, strata_traces *t, double **buf) {
  wave_state *ws = r->impl;
  strata_wave_info i;
  if (strata_wave_get_info(ws->w, &i) != STRATA_OK || i.nsamples == 0)
    return 0;
  size_t ns = i.nsamples, cap = 0;
  double *d = NULL;
  if (r->rank == 0) {
    d = malloc((size_t)ws->nrec * ns * sizeof *d);
    cap = d ? (size_t)ws->nrec * ns : 0;
  }
  /* rank 0 calls even without a buffer, so the others are not left
   * waiting in the gather */
  strata_status s = strata_wave_traces(ws->w, d, cap, &ns);
  if (r->rank == 0 && !d) return run_fail(r, "out of memory for the traces");
  if (s != STRATA_OK) {
    free(d);
    return run_fail(r, "traces: %s", strata_context_error(r->ctx));
  }
  if (r->rank != 0) return 0;
  fill_traces(ws, &i, ns, d, t, buf);
  return 0;
}

static double wave_bpp(run_state *r) {
  strata_wave_info i;
  if (strata_wave_get_info(((wave_state *)r->impl)->w, &i) != STRATA_OK)
    return 0;
  return i.bytes_per_point_step;
}

static void wave_describe(run_state *r, FILE *json) {
  strata_wave_info i;
  if (strata_wave_get_info(((wave_state *)r->impl)->w, &i) != STRATA_OK)
    return;
  fprintf(json, "  \"dt\": %.9g,\n  \"time\": %.9g,\n  \"vmin\": %.9g,\n"
          "  \"vmax\": %.9g,\n  \"cfl\": %.6g,\n  \"cfl_limit\": %.6g,\n"
          "  \"points_per_wavelength\": %.6g,\n", i.dt, i.time, i.vmin,
          i.vmax, i.cfl, i.cfl_limit, i.ppw);
}

static int wave_traces(run_state *r, strata_traces *t, double **buf) {
  wave_state *ws = r->impl;
  *buf = NULL;
  if (!ws->nrec) return 0;
  if (r->dist) return wave_traces_dist(r, t, buf);
  size_t ns = 0;
  if (strata_wave_traces(ws->w, NULL, 0, &ns) != STRATA_OK || ns == 0)
    return 0;
  double *d = malloc((size_t)ws->nrec * ns * sizeof *d);
  if (!d) return run_fail(r, "out of memory for the traces");
  if (strata_wave_traces(ws->w, d, (size_t)ws->nrec * ns, &ns) != STRATA_OK) {
    free(d);
    return run_fail(r, "traces: %s", strata_context_error(r->ctx));
  }
  strata_wave_info i;
  strata_wave_get_info(ws->w, &i);
  fill_traces(ws, &i, ns, d, t, buf);
  return 0;
}

static strata_status wave_size(const void *w, size_t *n) {
  return strata_wave_state_size(w, n);
}
static strata_status wave_save(const void *w, void *b, size_t n) {
  return strata_wave_save_state(w, b, n);
}
static strata_status wave_load(void *w, const void *b, size_t n) {
  return strata_wave_load_state(w, b, n);
}
static const blob_ops wave_blob = {"wave", wave_size, wave_save, wave_load};

static int wave_ck_save(run_state *r, const char *path) {
  return blob_ck_save(r, ((wave_state *)r->impl)->w, &wave_blob, path);
}

static int wave_ck_load(run_state *r, const char *path) {
  return blob_ck_load(r, ((wave_state *)r->impl)->w, &wave_blob, path);
}

static void wave_destroy(run_state *r) {
  wave_state *ws = r->impl;
  strata_wave_destroy(&ws->w);
  free(ws->rec);
  free(ws);
  r->impl = NULL;
}

static const run_solver wave_solver = {
    .kind = "wave",
    .sections = "wave|source|receivers|initial",
    .bcs = "cpml|sponge|free|periodic",
    .dims_min = 3,
    .dims_max = 3,
    .precision = STRATA_F32,
    .cmap = "seismic",
    .field_name = "p",
    .estimate = wave_estimate,
    .create = wave_create,
    .step = wave_step,
    .field = wave_field,
    .read = wave_read,
    .bytes_per_point_step = wave_bpp,
    .traces = wave_traces,
    .describe = wave_describe,
    .checkpoint_save = wave_ck_save,
    .checkpoint_load = wave_ck_load,
    .destroy = wave_destroy,
};

/* ---- fdtd ---------------------------------------------------------------- */

typedef struct {
  strata_fdtd *f;
  int yee;
} fdtd_state;

static int fdtd_estimate(run_state *r, size_t *bytes) {
  /* E, E- and J (explicit) or Ez, Hx, Hy and the PML's memory (Yee) */
  return estimate_fields(r, 5, 2, bytes);
}

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
    {NULL, NULL, NULL, NULL}};

static int fdtd_create(run_state *r) {
  cf_file *cf = &r->cf;
  fdtd_state *fs = calloc(1, sizeof *fs);
  if (!fs) return run_fail(r, "out of memory");
  r->impl = fs;
  strata_fdtd_options o;
  strata_fdtd_options_init(&o);
  o.n[0] = r->n[0];
  o.n[1] = r->n[1];
  o.precision = r->precision;
  fs->yee = !strcmp(cf_string(cf, "fdtd", "scheme", "explicit"), "yee");
  o.scheme = fs->yee ? STRATA_FDTD_YEE_TM : STRATA_FDTD_EXPLICIT;
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
  strata_status s = strata_fdtd_create(r->ctx, &o, &fs->f);
  if (s != STRATA_OK) return run_lib_fail(r, s, fdtd_keys, "fdtd");
  return 0;
}

static int fdtd_step(run_state *r, long n) {
  strata_status s = strata_fdtd_step(((fdtd_state *)r->impl)->f, n);
  return s == STRATA_OK ? 0 : run_fail(r, "%s", strata_context_error(r->ctx));
}

static strata_field *fdtd_field(run_state *r) {
  return strata_fdtd_field(((fdtd_state *)r->impl)->f, STRATA_FDTD_EZ);
}

static int fdtd_read(run_state *r, void *host) {
  strata_status s =
      strata_fdtd_read(((fdtd_state *)r->impl)->f, STRATA_FDTD_EZ, host);
  return s == STRATA_OK ? 0 : run_fail(r, "%s", strata_context_error(r->ctx));
}

/* the least traffic of a step: explicit reads E and E- and writes E+;
 * Yee reads and writes Ez, Hx and Hy */
static double fdtd_bpp(run_state *r) {
  return (((fdtd_state *)r->impl)->yee ? 6.0 : 3.0) * (double)r->precision;
}

static strata_status fdtd_size(const void *f, size_t *n) {
  return strata_fdtd_state_size(f, n);
}
static strata_status fdtd_save(const void *f, void *b, size_t n) {
  return strata_fdtd_save_state(f, b, n);
}
static strata_status fdtd_load(void *f, const void *b, size_t n) {
  return strata_fdtd_load_state(f, b, n);
}
static const blob_ops fdtd_blob = {"fdtd", fdtd_size, fdtd_save, fdtd_load};

static int fdtd_ck_save(run_state *r, const char *path) {
  return blob_ck_save(r, ((fdtd_state *)r->impl)->f, &fdtd_blob, path);
}

static int fdtd_ck_load(run_state *r, const char *path) {
  return blob_ck_load(r, ((fdtd_state *)r->impl)->f, &fdtd_blob, path);
}

static void fdtd_destroy(run_state *r) {
  fdtd_state *fs = r->impl;
  strata_fdtd_destroy(&fs->f);
  free(fs);
  r->impl = NULL;
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
    .estimate = fdtd_estimate,
    .create = fdtd_create,
    .step = fdtd_step,
    .field = fdtd_field,
    .read = fdtd_read,
    .bytes_per_point_step = fdtd_bpp,
    .checkpoint_save = fdtd_ck_save,
    .checkpoint_load = fdtd_ck_load,
    .destroy = fdtd_destroy,
};

const run_solver *const run_solvers_extra[] = {
    &heat_solver, &wave_solver, &fdtd_solver, &run_solver_multigrid, NULL};
