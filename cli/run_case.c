/* strata run: the command line, the case file (its schema checked, the
 * keys every solver shares read) and the memory the case needs. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"
#include "wave_model.h"

static void usage(FILE *o) {
  fprintf(o,
          "usage: strata run CASE [options]\n"
          "  Runs the case file CASE (reference: docs/cases.md) and writes its\n"
          "  output folder: snapshots (.npy, .vti, .png), receiver traces\n"
          "  (.npy, SEG-Y, .png), a movie, summary.json.  Files are written\n"
          "  under a temporary name and renamed when complete; snapshots by a\n"
          "  background thread while the run steps on ([output] async);\n"
          "  Ctrl-C stops after the current step and keeps what was written.\n"
          "options:\n"
          "  --set SECTION.KEY=VALUE   override a key of the case (repeatable)\n"
          "  --out DIR                 output folder (overrides [output] dir)\n"
          "  --backend auto|cpu|cuda   overrides [run] backend\n"
          "  --checkpoint-every N      checkpoint every N steps (multigrid: cycles)\n"
          "  --restart FILE            continue from a checkpoint of this case\n"
          "  --check                   check the case and the memory; run nothing\n"
          "  --no-ceiling              skip the copy-ceiling measurement\n"
          "  --quiet                   no progress display\n"
          "  --view [ADDR:]PORT        watch the run in a browser: serves a page\n"
          "                            on 127.0.0.1:PORT (or ADDR), printing its\n"
          "                            address with the access token\n"
          "  --keys                    print every case key as Markdown\n"
          "over several processes: mpiexec -n P strata run CASE splits the\n"
          "  grid over P ranks (one GPU each), rank 0 writes (docs/cli.md)\n"
          "exit codes: 0 ok, 1 runtime failure, 2 bad usage or case file,\n"
          "130 interrupted (outputs so far are kept).\n");
}

int run_fail(run_state *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  strata__fit(r->err, sizeof r->err, vsnprintf(r->err, sizeof r->err, fmt, ap));
  va_end(ap);
  return -1;
}

int run_case_fail(run_state *r, const char *section, const char *key,
                  const char *fmt, ...) {
  char msg[sizeof r->err];
  va_list ap;
  va_start(ap, fmt);
  strata__fit(msg, sizeof msg, vsnprintf(msg, sizeof msg, fmt, ap));
  va_end(ap);
  cf_fail(&r->cf, section, key, "%s", msg);
  run_fail(r, "%s", r->cf.err);
  r->case_error = 1;
  return -1;
}

int run_flag_fail(run_state *r, const char *flag, const char *fmt, ...) {
  char msg[sizeof r->err];
  va_list ap;
  va_start(ap, fmt);
  strata__fit(msg, sizeof msg, vsnprintf(msg, sizeof msg, fmt, ap));
  va_end(ap);
  run_fail(r, "%s: %s", flag, msg);
  r->case_error = 1;
  return -1;
}

static const char *face_keys[6] = {"x_lo", "x_hi", "y_lo",
                                   "y_hi", "z_lo", "z_hi"};

const char *run_face_key(int face) { return face_keys[face]; }

const char *run_face_value(run_state *r, int face, const char *def) {
  const char *v = cf_string(&r->cf, "boundary", face_keys[face], NULL);
  if (v) return v;
  return cf_string(&r->cf, "boundary", "all", def);
}

/* ---- the initial condition ---------------------------------------------- */

typedef struct {
  int kind; /* 0 zero, 1 constant, 2 random, 3 gaussian */
  double amp, c[3], w, value;
  uint64_t seed;
} initial_spec;

static initial_spec g_init;

double run_initial_value(long i, long j, long k, void *user) {
  const initial_spec *s = user ? user : &g_init;
  switch (s->kind) {
  case 1: return s->value;
  case 2: {
    uint64_t x = s->seed * 0x9e3779b97f4a7c15ull ^
                 ((uint64_t)(i + 1024) | (uint64_t)(j + 1024) << 21 |
                  (uint64_t)(k + 1024) << 42);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return s->amp * (2.0 * ((double)(x >> 11) * 0x1p-53) - 1.0);
  }
  case 3: {
    double dx = i - s->c[0], dy = j - s->c[1], dz = k - s->c[2];
    return s->amp * exp(-(dx * dx + dy * dy + dz * dz) / (2 * s->w * s->w));
  }
  }
  return 0;
}

static void read_initial(run_state *r, const char *def_kind) {
  static const char *kinds[] = {"zero", "constant", "random", "gaussian"};
  const char *k = cf_string(&r->cf, "initial", "kind", def_kind);
  g_init.kind = 0;
  for (int i = 0; i < 4; i++)
    if (!strcmp(k, kinds[i])) g_init.kind = i;
  g_init.amp = cf_float(&r->cf, "initial", "amplitude", 1);
  g_init.value = cf_float(&r->cf, "initial", "value", 0);
  g_init.seed = (uint64_t)cf_int(&r->cf, "initial", "seed", 1);
  size_t mn = r->n[0];
  for (int a = 0; a < r->dims; a++) {
    g_init.c[a] = 0.5 * ((double)r->n[a] - 1);
    if (r->n[a] < mn) mn = r->n[a];
  }
  double c[3];
  int nc = cf_floats(&r->cf, "initial", "center", c, 3);
  for (int a = 0; a < nc && a < 3; a++) g_init.c[a] = c[a];
  g_init.w = cf_float(&r->cf, "initial", "width", mn / 10.0 > 1 ? mn / 10.0 : 1);
}

/* ---- the solvers ---------------------------------------------------------- */

static const run_solver *find_solver(const char *kind) {
  for (int i = 0; run_solvers[i]; i++)
    if (!strcmp(kind, run_solvers[i]->kind)) return run_solvers[i];
  return NULL;
}

static const char *common_sections = "case|solver|grid|run|boundary|output";
static const char *all_solver_kinds = "operator|heat|wave|fdtd|multigrid";

static int section_allowed(const char *sec, void *user, char *why, size_t n) {
  const run_solver *s = user;
  if (cf_in_choices(common_sections, sec) || cf_in_choices(s->sections, sec))
    return 1;
  char secs[256];
  cf_choices_text(s->sections[0] ? s->sections : "none", secs, sizeof secs);
  snprintf(why, n, "does not apply to solver '%s' (its sections: %s)",
           s->kind, secs);
  return 0;
}

/* The keys whose values go into the fields (or the operator's weights)
 * as they are: in fp32 a value beyond FLT_MAX would be infinite before
 * the first step, so it is refused here, at its line. */
static const char *const fp32_keys[][2] = {
    {"initial", "amplitude"}, {"initial", "value"},
    {"boundary", "value"},    {"source", "amplitude"},
    {"operator", "center"},   {"operator", "coefficients"},
    {"operator", "scale"},    {"poisson", "amplitude"},
    {"poisson", "dirichlet_values"}};

static int check_fp32(run_state *r) {
  for (size_t i = 0; i < sizeof fp32_keys / sizeof fp32_keys[0]; i++) {
    const char *sec = fp32_keys[i][0], *key = fp32_keys[i][1];
    if (!cf_has(&r->cf, sec, key)) continue;
    double v[8];
    int n = cf_floats(&r->cf, sec, key, v, 8);
    if (n == 0) { /* a single value */
      v[0] = cf_float(&r->cf, sec, key, 0);
      n = 1;
    }
    for (int k = 0; k < n && k < 8; k++)
      if (fabs(v[k]) > FLT_MAX)
        return run_case_fail(r, sec, key, "%g is beyond the fp32 range "
                             "(largest %g): set [grid] precision = f64 or "
                             "use a smaller value", v[k], (double)FLT_MAX);
  }
  return 0;
}

/* Reads what every solver shares: grid, precision, steps, boundaries. */
static int read_common(run_state *r) {
  cf_file *f = &r->cf;
  long n[3] = {1, 1, 1};
  r->dims = cf_ints(f, "grid", "n", n, 3);
  if (r->dims < r->solver->dims_min || r->dims > r->solver->dims_max)
    return run_case_fail(r, "grid", "n", "solver '%s' needs %d%s%d values "
                         "(its dimension), got %d", r->solver->kind,
                         r->solver->dims_min,
                         r->solver->dims_min == r->solver->dims_max ? "" : "..",
                         r->solver->dims_max == r->solver->dims_min ? 0
                                                                    : r->solver->dims_max,
                         r->dims);
  for (int a = 0; a < 3; a++) r->n[a] = a < r->dims ? (size_t)n[a] : 1;
  r->h = cf_float(f, "grid", "spacing",
                  !strcmp(r->solver->kind, "wave") ? 10.0 : 1.0);
  const char *p = cf_string(f, "grid", "precision", NULL);
  r->precision = p ? (!strcmp(p, "f64") ? STRATA_F64 : STRATA_F32)
                   : r->solver->precision;
  r->steps = cf_int(f, "run", "steps", 1);
  if (r->precision == STRATA_F32 && check_fp32(r)) return -1;
  for (int face = 0; face < 6; face++) {
    const char *v = run_face_value(r, face, NULL);
    if (!v) continue;
    if (face / 2 >= r->dims && cf_has(f, "boundary", face_keys[face]))
      return run_case_fail(r, "boundary", face_keys[face], "a %dD grid has "
                           "no %c axis", r->dims, "xyz"[face / 2]);
    if (!cf_in_choices(r->solver->bcs, v)) {
      const char *key = cf_has(f, "boundary", face_keys[face])
                            ? face_keys[face]
                            : "all";
      char ok[256];
      cf_choices_text(r->solver->bcs, ok, sizeof ok);
      return run_case_fail(r, "boundary", key, "'%s' is not a boundary of "
                           "solver '%s' (it takes: %s)", v, r->solver->kind,
                           ok);
    }
  }
  read_initial(r, !strcmp(r->solver->kind, "heat")       ? "gaussian"
                  : !strcmp(r->solver->kind, "operator") ? "random"
                                                         : "zero");
  return 0;
}

int run_read_output(run_state *r, output_cfg *o, const char *dir_opt,
                       char *dirbuf, size_t dn) {
  cf_file *f = &r->cf;
  memset(o, 0, sizeof *o);
  if (dir_opt)
    snprintf(dirbuf, dn, "%s", dir_opt);
  else if (cf_has(f, "output", "dir"))
    snprintf(dirbuf, dn, "%s", cf_string(f, "output", "dir", ""));
  else
    snprintf(dirbuf, dn, "%s.out", r->name);
  if (!dirbuf[0])
    return dir_opt ? run_flag_fail(r, "--out", "the output folder is empty")
                   : run_case_fail(r, "output", "dir",
                                   "the output folder is empty");
  o->dir = dirbuf;
  o->every = cf_int(f, "output", "every", 0);
  o->npy = cf_enums_has(f, "output", "formats", "npy, png", "npy");
  o->vti = cf_enums_has(f, "output", "formats", "npy, png", "vti");
  o->png = cf_enums_has(f, "output", "formats", "npy, png", "png");
  o->h5 = cf_enums_has(f, "output", "formats", "npy, png", "h5");
  o->movie = cf_bool(f, "output", "movie", 0);
  o->async = cf_bool(f, "output", "async", 1);
  o->fps = (int)cf_int(f, "output", "fps", 10);
  if (o->movie && !o->png)
    return run_case_fail(r, "output", "movie", "a movie needs png among "
                         "[output] formats");
  if (o->movie && o->every == 0)
    return run_case_fail(r, "output", "movie", "a movie needs snapshots: "
                         "set [output] every");
  o->trace_npy = cf_enums_has(f, "output", "traces", "npy, segy, png", "npy");
  o->trace_segy = cf_enums_has(f, "output", "traces", "npy, segy, png",
                               "segy");
  o->trace_png = cf_enums_has(f, "output", "traces", "npy, segy, png", "png");
  o->trace_h5 = cf_enums_has(f, "output", "traces", "npy, segy, png", "h5");
  if ((o->h5 || o->trace_h5) && !strata_h5_available())
    return run_case_fail(r, "output", o->h5 ? "formats" : "traces",
                         "h5: this strata was built without HDF5 (install "
                         "libhdf5-dev and build again)");
  strata_png_options_init(&o->po);
  const char *ax = cf_string(f, "output", "slice_axis",
                             !strcmp(r->solver->kind, "wave") ? "y" : "z");
  o->po.axis = ax[0] - 'x';
  if (r->dims < 3 && cf_has(f, "output", "slice_axis"))
    return run_case_fail(r, "output", "slice_axis", "only 3D grids are "
                         "sliced");
  o->po.index = cf_int(f, "output", "slice_index", -1);
  if (r->dims == 3 && o->po.index >= (long)r->n[o->po.axis])
    return run_case_fail(r, "output", "slice_index", "%ld is outside the "
                         "grid: 0..%zu along %c", o->po.index,
                         r->n[o->po.axis] - 1, "xyz"[o->po.axis]);
  strata_colormap_parse(cf_string(f, "output", "colormap", r->solver->cmap),
                        &o->po.cmap);
  double range[2];
  if (cf_floats(f, "output", "range", range, 2) == 2) {
    if (!(range[0] < range[1]))
      return run_case_fail(r, "output", "range", "lo must be below hi, got "
                           "%g, %g", range[0], range[1]);
    o->po.lo = range[0];
    o->po.hi = range[1];
  }
  o->po.flip = cf_bool(f, "output", "flip", 0);
  return 0;
}

/* ---- memory -------------------------------------------------------------- */

static double gib(size_t b) { return (double)b / 1073741824.0; }

/* The run's own host copies beside the solver's: rank 0 stages each
 * snapshot (the whole grid, gathered over several processes) in one host
 * copy (a second one only when asynchronous and it fits), a PNG's slice
 * in another and its image (3 bytes a pixel, its row data and the
 * compressed stream about as much again each; 2^28 pixels at most, the
 * writer's limit); the receivers' traces are
 * kept by the solver on the device and copied out (8 bytes a sample; the
 * device buffer grows by doubling). */
static void run_copies(const run_state *r, size_t *host, size_t *dev) {
  const cf_file *f = &r->cf;
  *host = *dev = 0;
  if (r->rank == 0) {
    *host += r->n[0] * r->n[1] * r->n[2] * (size_t)r->precision;
    if (cf_enums_has(f, "output", "formats", "npy, png", "png")) {
      int axis = 2;
      if (r->dims == 3) {
        const char *ax = cf_string(f, "output", "slice_axis",
                                   !strcmp(r->solver->kind, "wave") ? "y"
                                                                    : "z");
        axis = ax[0] - 'x';
      }
      size_t w = r->n[axis == 0 ? 1 : 0], h = r->n[axis == 2 ? 1 : 2];
      size_t side = w > h ? w : h, scale = side >= 512 ? 1 : 512 / side;
      if (scale > 16) scale = 16;
      size_t pixels = w * h * scale * scale;
      if (pixels > ((size_t)1 << 28)) pixels = (size_t)1 << 28; /* at most */
      *host += w * h * (size_t)r->precision + 9 * pixels;
    }
  }
  if (!strcmp(r->solver->kind, "wave"))
    *host += run_wave_model_bytes(r); /* [model] on the grid, every rank */
  if (!strcmp(r->solver->kind, "wave") &&
      cf_section_line(f, "receivers")) {
    long every = cf_int(f, "receivers", "every", 1);
    size_t rec = (size_t)cf_int(f, "receivers", "count", 1);
    size_t samples = (size_t)(r->steps / (every > 0 ? every : 1)) + 1;
    *dev += 2 * rec * samples * sizeof(double);
    if (r->rank == 0) *host += rec * samples * sizeof(double);
  }
}

int run_check_memory(run_state *r, size_t *need) {
  size_t chost, cdev;
  run_copies(r, &chost, &cdev);
  r->copy_host = chost;
  r->copy_dev = cdev;
  const size_t dev = r->fp_dev + cdev, host = r->fp_host + chost;
  const int on_host = strata_context_backend(r->ctx) == STRATA_BACKEND_CPU;
  const size_t avail = strata_host_memory_available();
  const char *rank = r->dist ? " on this rank" : "";
  *need = dev + host;
  if (on_host) {
    if (avail && *need > avail) {
      r->case_error = 1;
      return run_fail(r, "%s: the case needs %zu bytes (%.2f GiB) of memory%s "
                      "(the solver's fields and tables %.2f GiB, its host "
                      "buffers %.2f GiB, snapshot and trace copies %.2f GiB) "
                      "but %zu bytes (%.2f GiB) are available; reduce [grid] "
                      "n", r->cf.path, *need, gib(*need), rank, gib(dev),
                      gib(r->fp_host), gib(chost), avail, gib(avail));
    }
    return 0;
  }
  strata_device_info di;
  if (strata_context_device_info(r->ctx, &di) == STRATA_OK &&
      di.memory_free && dev > di.memory_free) {
    r->case_error = 1;
    return run_fail(r, "%s: the case needs %zu bytes (%.2f GiB) of %s "
                    "memory%s but the device (%s) has %zu bytes (%.2f GiB) "
                    "free; reduce [grid] n", r->cf.path, dev, gib(dev),
                    strata_backend_name(strata_context_backend(r->ctx)),
                    rank, di.name, di.memory_free, gib(di.memory_free));
  }
  if (avail && host > avail) {
    r->case_error = 1;
    return run_fail(r, "%s: the case needs %zu bytes (%.2f GiB) of host "
                    "memory%s (the solver's %.2f GiB, snapshot and trace "
                    "copies %.2f GiB) but %zu bytes (%.2f GiB) are "
                    "available; reduce [grid] n", r->cf.path, host,
                    gib(host), rank, gib(r->fp_host), gib(chost), avail,
                    gib(avail));
  }
  return 0;
}

int run_parse_args(int argc, char **argv, run_args *a) {
  memset(a, 0, sizeof *a);
  a->checkpoint_every = -1;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
      usage(stdout);
      return 1;
    } else if (!strcmp(s, "--keys")) {
      printf("<!-- generated by `strata run --keys` from cli/case_schema.c "
             "-->\n\n");
      cf_write_docs(run_schema, run_schema_count, stdout);
      return 1;
    } else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
      a->quiet = 1;
    } else if (!strcmp(s, "--check")) {
      a->check_only = 1;
    } else if (!strcmp(s, "--no-ceiling")) {
      a->no_ceiling = 1;
    } else if (!strcmp(s, "--set") || !strcmp(s, "--out") ||
               !strcmp(s, "--restart") || !strcmp(s, "--backend") ||
               !strcmp(s, "--checkpoint-every") || !strcmp(s, "--view")) {
      if (!v) {
        cli_err("run: %s needs a value (see strata run --help)", s);
        return -1;
      }
      i++;
      if (!strcmp(s, "--set")) {
        if (a->nsets == 64) {
          cli_err("run: at most 64 --set options");
          return -1;
        }
        a->sets[a->nsets++] = v;
      } else if (!strcmp(s, "--out")) {
        a->out_dir = v;
      } else if (!strcmp(s, "--restart")) {
        a->restart = v;
      } else if (!strcmp(s, "--backend")) {
        a->backend = v;
      } else if (!strcmp(s, "--view")) {
        a->view = v;
      } else if (cli_parse_long(v, 0, 2000000000, &a->checkpoint_every)) {
        cli_err("run: --checkpoint-every '%s': expected an integer "
                "0..2000000000", v);
        return -1;
      }
    } else if (s[0] == '-' && s[1]) {
      cli_err("run: unknown option '%s' (see strata run --help)", s);
      return -1;
    } else if (a->case_path) {
      cli_err("run: one case file at a time ('%s' and '%s')", a->case_path, s);
      return -1;
    } else {
      a->case_path = s;
    }
  }
  if (!a->case_path) {
    cli_err("run: no case file given (see strata run --help)");
    return -1;
  }
  return 0;
}

static void base_name(const char *path, char *out, size_t n) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  snprintf(out, n, "%s", b);
  char *dot = strrchr(out, '.');
  if (dot && dot != out) *dot = 0;
}

int run_load_case(run_state *r, const run_args *a) {
  cf_file *f = &r->cf;
  r->case_error = 1; /* every failure from here to create is the case's */
  if (cf_load(f, a->case_path)) {
    r->file_error = 1;
    return run_fail(r, "%s", f->err);
  }
  for (int i = 0; i < a->nsets; i++) {
    const char *s = a->sets[i], *dot = strchr(s, '.'), *eq = strchr(s, '=');
    if (!dot || !eq || dot > eq) {
      r->case_error = 1;
      return run_fail(r, "--set '%s': expected SECTION.KEY=VALUE", s);
    }
    char sec[128], key[128];
    snprintf(sec, sizeof sec, "%.*s", (int)(dot - s), s);
    snprintf(key, sizeof key, "%.*s", (int)(eq - dot - 1), dot + 1);
    if (cf_set(f, sec, key, eq + 1)) {
      r->case_error = 1;
      return run_fail(r, "%s", f->err);
    }
  }
  const char *kind = cf_string(f, "solver", "kind", NULL);
  if (!kind) {
    /* validate for the message about the missing key */
    if (cf_validate(f, run_schema, run_schema_count, "solver|grid|run", NULL,
                    NULL))
      return run_fail(r, "%s", f->err);
    return run_fail(r, "%s: [solver] kind is required", f->path);
  }
  r->solver = find_solver(kind);
  if (!r->solver) {
    if (cf_in_choices(all_solver_kinds, kind))
      return run_case_fail(r, "solver", "kind", "solver '%s' is not part "
                           "of this build of strata yet", kind);
    return run_case_fail(r, "solver", "kind", "'%s' is not one of: "
                         "operator, heat, wave, fdtd, multigrid", kind);
  }
  /* multigrid runs cycles ([poisson] max_cycles), not [run] steps */
  if (r->solver == &run_solver_multigrid && !cf_has(f, "run", "steps") &&
      cf_set(f, "run", "steps", "1"))
    return run_fail(r, "%s", f->err);
  if (cf_validate(f, run_schema, run_schema_count, "solver|grid|run",
                  section_allowed, (void *)r->solver))
    return run_fail(r, "%s", f->err);
  if (cf_has(f, "case", "name"))
    snprintf(r->name, sizeof r->name, "%s", cf_string(f, "case", "name", ""));
  else
    base_name(a->case_path, r->name, sizeof r->name);
  if (read_common(r)) return -1;
  r->case_error = 0;
  return 0;
}

