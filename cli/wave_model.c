/* The case's [model]: the wave solver's velocity and density from files
 * (.npy, SEG-Y, raw), resampled onto the grid and checked before the
 * solver is created; each refusal names the [model] key at fault. */
#include "run.h"
#include "wave_model.h"

#include <stdlib.h>
#include <string.h>

/* The [model] key behind a library argument name (less its index). */
static const char *model_key(const char *arg, const char *file_key) {
  static const struct {
    const char *arg, *key;
  } map[] = {{"axes", "axes"},           {"ndim", "shape"},
             {"shape", "shape"},         {"precision", "dtype"},
             {"format", "format"},       {"segy_nx", "segy_nx"},
             {"segy_geometry", "segy_geometry"},
             {"inline_byte", "inline_byte"},
             {"crossline_byte", "crossline_byte"},
             {"origin", "origin"},       {"spacing", "spacing"}};
  size_t n = strcspn(arg, "[");
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strlen(map[i].arg) == n && !strncmp(arg, map[i].arg, n))
      return map[i].key;
  return file_key; /* path, the values, the CFL and dispersion checks */
}

static int lib_fail(run_state *r, strata_status s, const char *file_key) {
  if (s == STRATA_ENOMEM || s == STRATA_EINTERRUPTED)
    return run_fail(r, "[model] %s: %s", file_key,
                    strata_context_error(r->ctx));
  return run_case_fail(r, "model",
                       model_key(strata_context_error_arg(r->ctx), file_key),
                       "%s", strata_context_error(r->ctx));
}

/* The file's description from [model]; path from key file_key. */
static void file_options(const cf_file *f, const char *file_key,
                         strata_model_file *mf, double h) {
  strata_model_file_init(mf);
  mf->path = cf_string(f, "model", file_key, NULL);
  static const char *formats[] = {"auto", "npy", "segy", "raw"};
  const char *fmt = cf_string(f, "model", "format", "auto");
  for (int i = 0; i < 4; i++)
    if (!strcmp(fmt, formats[i])) mf->format = (strata_model_format)i;
  mf->axes = cf_string(f, "model", "axes", NULL);
  long shape[3];
  mf->ndim = cf_ints(f, "model", "shape", shape, 3);
  for (int i = 0; i < mf->ndim; i++) mf->shape[i] = (size_t)shape[i];
  mf->precision =
      !strcmp(cf_string(f, "model", "dtype", "f32"), "f64") ? STRATA_F64
                                                           : STRATA_F32;
  mf->big_endian = !strcmp(cf_string(f, "model", "byte_order", "little"),
                           "big");
  static const char *geo[] = {"auto", "traces", "headers"};
  const char *g = cf_string(f, "model", "segy_geometry", "auto");
  for (int i = 0; i < 3; i++)
    if (!strcmp(g, geo[i])) mf->segy_geometry = (strata_segy_geometry)i;
  mf->segy_nx = (size_t)cf_int(f, "model", "segy_nx", 0);
  mf->inline_byte = (int)cf_int(f, "model", "inline_byte", 189);
  mf->crossline_byte = (int)cf_int(f, "model", "crossline_byte", 193);
  /* one value: every axis; two: x and z (a section); three: x, y, z */
  double sp[3], og[3] = {0, 0, 0};
  int ns = cf_floats(f, "model", "spacing", sp, 3);
  int no = cf_floats(f, "model", "origin", og, 3);
  for (int a = 0; a < 3; a++) {
    mf->spacing[a] = ns == 0 ? h : ns == 1 ? sp[0]
                   : ns == 2 ? sp[a == 2 ? 1 : 0] : sp[a];
    mf->origin[a] = no == 2 ? (a == 1 ? 0 : og[a == 2 ? 1 : 0]) : og[a];
  }
}

/* Reads the model of key file_key onto the grid into *out (malloc'd);
 * what names it ("velocity", "density"). */
static int load(run_state *r, const char *file_key, const char *what,
                double **out) {
  const cf_file *f = &r->cf;
  strata_model_file mf;
  file_options(f, file_key, &mf, r->h);
  strata_model m;
  strata_status s = strata_model_read(r->ctx, &mf, &m);
  if (s == STRATA_OK) s = strata_model_check(r->ctx, &m, what, NULL, NULL);
  if (s != STRATA_OK) {
    strata_model_free(&m);
    return lib_fail(r, s, file_key);
  }
  size_t cnt = r->n[0] * r->n[1] * r->n[2];
  *out = malloc(cnt * sizeof **out);
  if (!*out) {
    strata_model_free(&m);
    return run_fail(r, "[model] %s: cannot allocate %zu bytes for the model "
                    "on the grid", file_key, cnt * sizeof **out);
  }
  const char *how = cf_string(f, "model", "interpolation", "linear");
  s = strata_model_resample(r->ctx, &m, r->n, r->h,
                            !strcmp(how, "nearest") ? STRATA_RESAMPLE_NEAREST
                                                    : STRATA_RESAMPLE_LINEAR,
                            *out);
  strata_model_free(&m);
  if (s != STRATA_OK) {
    free(*out);
    *out = NULL;
    return lib_fail(r, s, file_key);
  }
  return 0;
}

/* The models the estimating pass read and checked, kept for the run that
 * follows it (the same case and grid): a file is read once per run. */
static struct {
  const run_state *r;
  size_t n[3];
  double vmax;
  run_wave_model wm;
} kept;

static void keep(const run_state *r, const run_wave_model *wm, double vmax) {
  run_wave_model_free(&kept.wm);
  kept.r = r;
  memcpy(kept.n, r->n, sizeof kept.n);
  kept.vmax = vmax;
  kept.wm = *wm;
}

int run_wave_model_load(run_state *r, strata_wave_options *o,
                        run_wave_model *wm) {
  memset(wm, 0, sizeof *wm);
  const cf_file *f = &r->cf;
  if (!r->estimating && kept.r == r && kept.wm.v &&
      !memcmp(kept.n, r->n, sizeof kept.n)) {
    *wm = kept.wm;
    o->velocity = kept.vmax;
    o->nlayers = 0;
    memset(&kept, 0, sizeof kept);
    return 0;
  }
  if (!cf_has(f, "model", "velocity")) {
    if (cf_has(f, "model", "density"))
      return run_case_fail(r, "model", "density", "a density model needs "
                           "a velocity model ([model] velocity)");
    return 0;
  }
  static const char *const other[] = {"velocity", "layer_tops",
                                      "layer_velocities"};
  for (int i = 0; i < 3; i++)
    if (cf_has(f, "wave", other[i]))
      return run_case_fail(r, "wave", other[i], "the velocity comes from "
                           "[model] velocity; remove this key");
  static const char *const raw_only[] = {"dtype", "byte_order"};
  for (int i = 0; i < 2; i++)
    if (cf_has(f, "model", raw_only[i]) &&
        strcmp(cf_string(f, "model", "format", "auto"), "raw") != 0)
      return run_case_fail(r, "model", raw_only[i], "%s applies to raw "
                           "files (format = raw)", raw_only[i]);
  if (load(r, "velocity", "velocity", &wm->v)) return -1;
  strata_wave_model_info in;
  strata_status s = strata_wave_check_model(r->ctx, o, wm->v, &in);
  if (s != STRATA_OK) {
    run_wave_model_free(wm);
    return lib_fail(r, s, "velocity");
  }
  /* the fastest velocity sets dt = 0's choice and the absorbing layers */
  o->velocity = in.vmax;
  o->nlayers = 0;
  if (cf_has(f, "model", "density") && load(r, "density", "density",
                                            &wm->rho)) {
    run_wave_model_free(wm);
    return -1;
  }
  if (r->estimating) { /* for the run: the caller's copy is left empty */
    keep(r, wm, in.vmax);
    memset(wm, 0, sizeof *wm);
  }
  return 0;
}

/* Whether the run draws its model's interfaces (rank 0). */
static int draws_interfaces(const run_state *r) {
  const cf_file *f = &r->cf;
  return r->rank == 0 && cf_bool(f, "output", "interfaces", 1) &&
         (cf_has(f, "model", "velocity") || cf_has(f, "wave", "layer_tops"));
}

int run_wave_interfaces(run_state *r, const strata_wave_options *o,
                        const run_wave_model *wm) {
  free(r->interfaces);
  r->interfaces = NULL;
  if (!draws_interfaces(r)) return 0;
  const size_t cnt = r->n[0] * r->n[1] * r->n[2];
  if (!(r->interfaces = calloc(cnt, 1)))
    return run_fail(r, "cannot allocate %zu bytes for the model's "
                    "interfaces", cnt);
  double t = cf_float(&r->cf, "output", "interface_threshold", 0.05);
  if (strata_wave_interfaces(r->ctx, o, wm->v, wm->rho, t, r->interfaces,
                             NULL) != STRATA_OK) {
    free(r->interfaces);
    r->interfaces = NULL;
    return run_fail(r, "the model's interfaces: %s",
                    strata_context_error(r->ctx));
  }
  return 0;
}

int run_wave_model_apply(run_state *r, run_wave_model *wm) {
  strata_wave *w = strata_solver_wave(r->sv);
  strata_status s = STRATA_OK;
  const char *key = "velocity";
  if (wm->v) s = strata_wave_set_velocity(w, wm->v);
  if (s == STRATA_OK && wm->rho) {
    key = "density";
    s = strata_wave_set_density(w, wm->rho);
    if (s == STRATA_ENOTSUP) r->unsupported = 1;
  }
  run_wave_model_free(wm);
  if (s != STRATA_OK) return lib_fail(r, s, key);
  return 0;
}

void run_wave_model_free(run_wave_model *wm) {
  free(wm->v);
  free(wm->rho);
  wm->v = wm->rho = NULL;
}

size_t run_wave_model_bytes(const run_state *r) {
  size_t grid = r->n[0] * r->n[1] * r->n[2] * sizeof(double);
  return (cf_has(&r->cf, "model", "velocity") ? grid : 0) +
         (cf_has(&r->cf, "model", "density") ? grid : 0) +
         (draws_interfaces(r) ? grid / sizeof(double) : 0);
}
