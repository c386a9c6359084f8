/* strata run CASE: reads and checks a case file, checks the memory it
 * needs, runs the solver with a progress display, writes snapshots,
 * traces, checkpoints, a movie and a JSON summary. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkpoint.h"
#include "run.h"
#include "snap_writer.h"

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
          "  --checkpoint-every N      checkpoint every N steps (not multigrid)\n"
          "  --restart FILE            continue from a checkpoint of this case\n"
          "  --check                   check the case and the memory; run nothing\n"
          "  --no-ceiling              skip the copy-ceiling measurement\n"
          "  --quiet                   no progress display\n"
          "  --keys                    print every case key as Markdown\n"
          "over several processes: mpiexec -n P strata run CASE splits the\n"
          "  grid over P ranks (one GPU each), rank 0 writes (docs/cli.md)\n"
          "exit codes: 0 ok, 1 runtime failure, 2 bad usage or case file,\n"
          "130 interrupted (outputs so far are kept).\n");
}

int run_fail(run_state *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, sizeof r->err, fmt, ap);
  va_end(ap);
  return -1;
}

int run_case_fail(run_state *r, const char *section, const char *key,
                  const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cf_fail(&r->cf, section, key, "%s", msg);
  snprintf(r->err, sizeof r->err, "%s", r->cf.err);
  r->case_error = 1;
  return -1;
}

int run_flag_fail(run_state *r, const char *flag, const char *fmt, ...) {
  int k = snprintf(r->err, sizeof r->err, "%s: ", flag);
  va_list ap;
  va_start(ap, fmt);
  if (k > 0 && (size_t)k < sizeof r->err)
    vsnprintf(r->err + k, sizeof r->err - (size_t)k, fmt, ap);
  va_end(ap);
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
  if (!strcmp(kind, run_solver_operator.kind)) return &run_solver_operator;
  for (int i = 0; run_solvers_extra[i]; i++)
    if (!strcmp(kind, run_solvers_extra[i]->kind)) return run_solvers_extra[i];
  return NULL;
}

static const char *common_sections = "case|solver|grid|run|boundary|output";
static const char *all_solver_kinds = "operator|heat|wave|fdtd|multigrid";

static int in_list(const char *list, const char *s) {
  size_t n = strlen(s);
  for (const char *c = list; *c;) {
    const char *bar = strchr(c, '|');
    size_t L = bar ? (size_t)(bar - c) : strlen(c);
    if (L == n && !memcmp(c, s, n)) return 1;
    if (!bar) break;
    c = bar + 1;
  }
  return 0;
}

static int section_allowed(const char *sec, void *user, char *why, size_t n) {
  const run_solver *s = user;
  if (in_list(common_sections, sec) || in_list(s->sections, sec)) return 1;
  snprintf(why, n, "does not apply to solver '%s' (its sections: %s)",
           s->kind, s->sections[0] ? s->sections : "none");
  char *bar;
  while ((bar = strchr(why, '|'))) {
    memmove(bar + 2, bar + 1, strlen(bar + 1) + 1);
    bar[0] = ',';
    bar[1] = ' ';
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
  for (int face = 0; face < 6; face++) {
    const char *v = run_face_value(r, face, NULL);
    if (!v) continue;
    if (face / 2 >= r->dims && cf_has(f, "boundary", face_keys[face]))
      return run_case_fail(r, "boundary", face_keys[face], "a %dD grid has "
                           "no %c axis", r->dims, "xyz"[face / 2]);
    if (!in_list(r->solver->bcs, v)) {
      const char *key = cf_has(f, "boundary", face_keys[face])
                            ? face_keys[face]
                            : "all";
      char ok[256], *q = ok;
      for (const char *c = r->solver->bcs; *c && q < ok + sizeof ok - 3; c++)
        if (*c == '|')
          *q++ = ',', *q++ = ' ';
        else
          *q++ = *c;
      *q = 0;
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

/* ---- output ------------------------------------------------------------- */

typedef struct {
  const char *dir;
  long every;
  int npy, vti, png, movie, fps;
  strata_png_options po;
  int trace_npy, trace_segy, trace_png;
  long frames;
  int async;      /* [output] async: snapshots through the writer thread */
  double write_s; /* the run waited for snapshot output (summary output_s) */
  double files_s; /* synchronous: writing the files (output_writer_s) */
  /* rank 0: what a snapshot is written as, and the background writer
   * (NULL: snapshots are written synchronously, as below) */
  snap_format fmt;
  snap_writer *writer;
  /* several processes, rank 0, synchronous: the gathered grid, and a
   * plain field on a CPU context that the same writers as one process
   * read it from */
  void *host;
  strata_context *wctx;
  strata_field *wfield;
} output_cfg;

static int make_dir(const char *dir) {
  if (mkdir(dir, 0755) == 0 || errno == EEXIST) {
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    errno = ENOTDIR;
  }
  return -1;
}

/* Synchronous: the time loop waits while the files are written. */
static int snapshot_sync(run_state *r, output_cfg *o, const char *stem) {
  strata_field *f = r->solver->field(r);
  if (r->dist) {
    /* collective: every rank sends its planes, rank 0 writes */
    if (r->solver->read(r, o->host)) return -1;
    f = o->wfield;
    if (strata_field_write(f, o->host) != STRATA_OK)
      return run_fail(r, "snapshot %s: %s", stem,
                      strata_context_error(o->wctx));
  }
  double t0 = cli_now();
  int rc = snap_write_files(&o->fmt, f, stem, r->err, sizeof r->err);
  o->files_s += cli_now() - t0;
  return rc;
}

/* Asynchronous: the field is copied into a free buffer of the writer
 * (over several processes, gathered into it), which writes the files
 * while the loop steps on.  A write that failed since the last hand-off
 * fails this one, with that write's message. */
static int snapshot_async(run_state *r, output_cfg *o, const char *stem) {
  void *buf = snap_writer_acquire(o->writer);
  int bad;
  if (r->dist)
    bad = r->solver->read(r, buf); /* collective, as above */
  else if (strata_field_read(r->solver->field(r), buf) != STRATA_OK)
    bad = run_fail(r, "snapshot %s: %s", stem, strata_context_error(r->ctx));
  else
    bad = 0;
  if (bad) {
    snap_writer_release(o->writer, buf);
    return -1;
  }
  return snap_writer_submit(o->writer, buf, stem, r->err, sizeof r->err);
}

static int write_snapshot(run_state *r, output_cfg *o, const char *stem) {
  if (r->dist && r->rank != 0) /* collective: send this rank's planes */
    return r->solver->read(r, NULL);
  double t0 = cli_now();
  int rc = o->writer ? snapshot_async(r, o, stem) : snapshot_sync(r, o, stem);
  o->write_s += cli_now() - t0;
  return rc;
}

/* Waits until the writer has written every snapshot handed to it: 0, or
 * -1 with the first failed write's message in r->err. */
static int drain_snapshots(run_state *r, output_cfg *o) {
  if (!o->writer) return 0;
  double t0 = cli_now();
  int rc = snap_writer_drain(o->writer, r->err, sizeof r->err);
  o->write_s += cli_now() - t0;
  return rc;
}

static int write_traces(run_state *r, output_cfg *o, FILE *json) {
  if (!r->solver->traces) return 0;
  strata_traces t;
  double *buf = NULL;
  if (r->solver->traces(r, &t, &buf)) return -1;
  if (!buf) return 0; /* no receivers (or not rank 0) */
  char path[4096];
  strata_status s = STRATA_OK;
  fprintf(json, "  \"traces\": {\"receivers\": %zu, \"samples\": %zu, "
          "\"dt\": %.9g", t.ntraces, t.nsamples, t.dt);
  if (o->trace_npy) {
    snprintf(path, sizeof path, "%s/traces.npy", o->dir);
    s = strata_traces_save_npy(r->ctx, path, &t);
  }
  if (o->trace_segy && s == STRATA_OK) {
    snprintf(path, sizeof path, "%s/traces.sgy", o->dir);
    s = strata_segy_write(r->ctx, path, &t);
    if (s == STRATA_EINVAL) { /* a sampling SEG-Y cannot hold: say so */
      fprintf(stderr, "strata: traces.sgy not written: %s\n",
              strata_context_error(r->ctx));
      fprintf(json, ", \"segy\": \"not written: sampling out of range\"");
      s = STRATA_OK;
    }
  }
  if (o->trace_png && s == STRATA_OK) {
    /* the gather: time down, one column per receiver */
    double *img = malloc(t.ntraces * t.nsamples * sizeof *img);
    if (!img) {
      free(buf);
      return run_fail(r, "out of memory for the trace image");
    }
    for (size_t rr = 0; rr < t.ntraces; rr++)
      for (size_t k = 0; k < t.nsamples; k++)
        img[k * t.ntraces + rr] = buf[rr * t.nsamples + k];
    strata_png_options po;
    strata_png_options_init(&po);
    po.cmap = STRATA_CMAP_SEISMIC;
    /* clip at a tenth of the peak so later, weaker arrivals show */
    double mx = 0;
    for (size_t i = 0; i < t.ntraces * t.nsamples; i++)
      if (fabs(img[i]) > mx) mx = fabs(img[i]);
    if (mx > 0) {
      po.lo = -0.1 * mx;
      po.hi = 0.1 * mx;
    }
    size_t w = t.ntraces, hgt = t.nsamples;
    po.scale = w < 256 ? (int)(256 / w) : 1;
    if (po.scale > 8) po.scale = 8;
    if (hgt * (size_t)po.scale > 2048) po.scale = 1;
    snprintf(path, sizeof path, "%s/traces.png", o->dir);
    s = strata_png_write_image(r->ctx, path, STRATA_F64, w, hgt, img, &po);
    free(img);
  }
  fprintf(json, "},\n");
  free(buf);
  if (s != STRATA_OK)
    return run_fail(r, "cannot write %s: %s", path,
                    strata_context_error(r->ctx));
  return 0;
}

/* MP4 through ffmpeg when it is installed; otherwise the frames stay. */
static void make_movie(run_state *r, output_cfg *o, FILE *json, int quiet) {
  char cmd[8192];
  if (system("command -v ffmpeg >/dev/null 2>&1") != 0) {
    if (!quiet)
      fprintf(stderr, "strata: ffmpeg not found: the movie is the numbered "
              "frames %s/snap_*.png\n", o->dir);
    fprintf(json, "  \"movie\": \"frames: snap_*.png (no ffmpeg)\",\n");
    return;
  }
  snprintf(cmd, sizeof cmd,
           "ffmpeg -loglevel error -y -framerate %d -pattern_type glob -i "
           "'%s/snap_*.png' -vf 'pad=ceil(iw/2)*2:ceil(ih/2)*2' -pix_fmt "
           "yuv420p '%s/movie.tmp.mp4' </dev/null && mv '%s/movie.tmp.mp4' "
           "'%s/movie.mp4'",
           o->fps, o->dir, o->dir, o->dir, o->dir);
  int rc = strchr(o->dir, '\'') ? -1 : system(cmd);
  if (rc != 0) {
    fprintf(stderr, "strata: ffmpeg failed; the frames stay as "
            "%s/snap_*.png\n", o->dir);
    fprintf(json, "  \"movie\": \"ffmpeg failed; frames: snap_*.png\",\n");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/movie.tmp.mp4", o->dir);
    remove(tmp);
  } else {
    fprintf(json, "  \"movie\": \"movie.mp4\",\n");
  }
  (void)r;
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static int read_output(run_state *r, output_cfg *o, const char *dir_opt,
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

static int check_memory(run_state *r, size_t *need) {
  int e;
  if (r->dist) { /* this rank's slab */
    const int ax = r->dims - 1;
    size_t keep = r->n[ax], lo = 0, cnt = keep;
    strata_dist_split(r->dist, keep, r->rank, &lo, &cnt);
    r->n[ax] = cnt;
    e = r->solver->estimate(r, need);
    r->n[ax] = keep;
  } else {
    e = r->solver->estimate(r, need);
  }
  if (e) return -1;
  strata_device_info di;
  if (strata_context_device_info(r->ctx, &di) != STRATA_OK) return 0;
  size_t have = di.memory_free ? di.memory_free : di.memory_bytes;
  if (have && *need > have) {
    r->case_error = 1;
    return run_fail(r, "%s: the case needs %.3f GiB of %s memory%s but the "
                    "device (%s) has %.3f GiB %s; reduce [grid] n",
                    r->cf.path, *need / 1073741824.0,
                    strata_backend_name(strata_context_backend(r->ctx)),
                    r->dist ? " on this rank" : "", di.name,
                    have / 1073741824.0,
                    di.memory_free ? "free" : "in all");
  }
  return 0;
}

/* ---- the driver ----------------------------------------------------------- */

typedef struct {
  const char *case_path;
  const char *out_dir;
  const char *restart;
  const char *backend;
  long checkpoint_every;
  int check_only, quiet, no_ceiling;
  const char *sets[64];
  int nsets;
} run_args;

static int parse_args(int argc, char **argv, run_args *a) {
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
               !strcmp(s, "--checkpoint-every")) {
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

static int load_case(run_state *r, const run_args *a) {
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
    if (in_list(all_solver_kinds, kind))
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

/* ---- several processes ---------------------------------------------------- */

static double msg_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return (double)h;
}

/* The outcome of a stage every rank went through: rc is this rank's (0 =
 * ok, else an exit code, r->err saying why); returns the worst over the
 * ranks, on every rank.  Rank 0 prints its own message, or names a rank
 * that failed; another rank prints its own only when it differs from rank
 * 0's (and is not the library's "another rank failed").  Collective over
 * several processes; with one it prints r->err when rc != 0. */
static int run_agree(run_state *r, int rc) {
  if (!r->dist) {
    if (rc) cli_err("%s", r->err);
    return rc;
  }
  double v[3] = {rc, rc ? r->rank : -1, r->rank == 0 ? msg_hash(r->err) : -1};
  if (strata_dist_allreduce(r->dist, v, 3, 1) != STRATA_OK && !rc) {
    snprintf(r->err, sizeof r->err, "the ranks could not agree: %s",
             strata_context_error(r->ctx));
    v[0] = rc = CLI_FAIL;
  }
  int all = (int)v[0];
  if (!all) return 0;
  if (r->rank == 0) {
    if (rc)
      cli_err("%s", r->err);
    else
      cli_err("rank %d failed (its message says why)", (int)v[1]);
  } else if (rc && msg_hash(r->err) != v[2] && !strstr(r->err, "another rank")) {
    cli_err_rank("%s", r->err);
  }
  return all;
}

/* What cannot run over several processes.  It reads only the case and the
 * options, so every rank gives the same answer.  0, or -1 with r->err. */
static int dist_refusal(run_state *r, int nranks) {
  char over[64] = "over several processes";
  if (nranks > 1) snprintf(over, sizeof over, "over %d processes", nranks);
  if (!r->solver->read)
    return run_fail(r, "%s: solver '%s' cannot run %s (heat, wave, fdtd and "
                    "operator can); run it as one process, without the MPI "
                    "launcher", r->cf.path, r->solver->kind, over);
  if (r->dims < 2)
    return run_fail(r, "%s: a 1D grid cannot be split %s (a 2D grid is "
                    "split along y, a 3D grid along z)", r->cf.path, over);
  return 0;
}

/* Writes the checkpoint of r->step into dir: checkpoint.stck for one
 * process.  Over several, every rank writes its own part (rank 0 that
 * name, rank r checkpoint.stck.rank<r>), each whole under a temporary name
 * first, renamed only once every rank's part is written, so a failure on
 * one rank leaves the previous checkpoint's parts together.  Returns 0 or
 * an exit code (over several processes the same on every rank), the
 * message printed. */
static int save_checkpoint(run_state *r, const char *dir) {
  char path[4096], mine[4200];
  snprintf(path, sizeof path, "%s/checkpoint.stck", dir);
  if (!r->dist) {
    if (!r->solver->checkpoint_save(r, path)) return 0;
    cli_err("%s", r->err);
    return CLI_FAIL;
  }
  ckpt_part_path(path, r->rank, mine, sizeof mine);
  int rc = run_agree(r, r->solver->checkpoint_save(r, mine) ? CLI_FAIL : 0);
  int crc = ckpt_commit(mine, rc == 0, r->err, sizeof r->err) ? CLI_FAIL : 0;
  return rc ? rc : run_agree(r, crc);
}

/* Loads the checkpoint path (over several processes, every rank its part:
 * path for rank 0, path.rank<r> for rank r) into the solver.  Returns 0
 * or an exit code, the same on every rank, the message printed. */
static int load_checkpoint(run_state *r, const char *path) {
  char mine[4200];
  ckpt_part_path(path, r->dist ? r->rank : 0, mine, sizeof mine);
  int rc = run_agree(r, r->solver->checkpoint_load(r, mine) ? CLI_USAGE : 0);
  if (rc || !r->dist) return rc;
  /* parts of different checkpoints (one rank's write failed, or files
   * were copied together by hand) */
  double v[2] = {(double)r->step, -(double)r->step};
  strata_dist_allreduce(r->dist, v, 2, 1);
  if (v[0] != -v[1]) {
    run_fail(r, "%s: the parts hold different steps (%.0f to %.0f): they "
             "are not of one checkpoint", path, -v[1], v[0]);
    return run_agree(r, CLI_USAGE);
  }
  return 0;
}

/* Rank 0 holds the whole grid to write it: a host array the solver
 * gathers into and a plain field on a CPU context, so that every file is
 * written by the same writers as in a one-process run. */
static int dist_output_setup(run_state *r, output_cfg *o) {
  if (r->rank != 0) return 0;
  strata_field_desc d = {r->dims, {r->n[0], r->n[1], r->n[2]}, 1,
                         r->precision};
  size_t bytes = r->n[0] * r->n[1] * r->n[2] * (size_t)r->precision;
  o->host = malloc(bytes);
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = STRATA_BACKEND_CPU;
  co.threads = 1;
  strata_status s = STRATA_ENOMEM;
  if (o->host && strata_context_create(&o->wctx, &co) == STRATA_OK)
    s = strata_field_create(o->wctx, &d, &o->wfield);
  if (s != STRATA_OK)
    return run_fail(r, "rank 0 cannot hold the whole grid for writing it "
                    "(twice %.1f MiB of host memory): %s", bytes / 1048576.0,
                    o->wctx ? strata_context_error(o->wctx)
                            : "out of memory");
  return 0;
}

/* Rank 0's means of writing snapshots: the background writer
 * (snap_writer.c) when the loop writes snapshots ([output] every), unless
 * [output] async = false or its memory cannot be had (then after a
 * one-line notice); otherwise synchronously, over several processes
 * through dist_output_setup.  0, or -1 with r->err. */
static int output_setup(run_state *r, output_cfg *o) {
  if (r->rank != 0) return 0;
  o->fmt.dir = o->dir;
  o->fmt.npy = o->npy;
  o->fmt.vti = o->vti;
  o->fmt.png = o->png;
  o->fmt.po = o->po;
  o->fmt.h = r->h;
  o->fmt.field_name = r->solver->field_name;
  /* the final state alone has nothing to overlap with */
  if (o->async && o->every > 0) {
    /* the shape the synchronous path writes: the gathered grid over
     * several processes, the solver's field for one */
    strata_field_desc d = {r->dims, {r->n[0], r->n[1], r->n[2]}, 1,
                           r->precision};
    char why[1024];
    int ok = r->dist || strata_field_get_desc(r->solver->field(r), &d) ==
                            STRATA_OK;
    if (!ok)
      snprintf(why, sizeof why, "%s", strata_context_error(r->ctx));
    if (ok && snap_writer_create(&o->writer, &o->fmt, &d, 2, why,
                                 sizeof why) == 0)
      return 0;
    if (!r->quiet)
      fprintf(stderr, "strata: snapshots are written synchronously: %s\n",
              why);
  }
  return r->dist ? dist_output_setup(r, o) : 0;
}

int cli_run(int argc, char **argv) {
  /* started by an MPI launcher as several processes (or by PMIx alone,
   * which does not say how many: MPI tells once it is up) */
  cli_launch L;
  cli_launch_detect(&L);
  int multi = L.launched && L.size != 1;
  if (multi) cli_set_rank(L.rank);
  run_args a;
  int pr = parse_args(argc, argv, &a);
  if (pr) return pr > 0 ? CLI_OK : CLI_USAGE;
  cli_install_interrupt(multi); /* from here Ctrl-C only asks the loop to stop */
  run_state *r = calloc(1, sizeof *r);
  if (!r) {
    cli_err_rank("out of memory");
    return CLI_FAIL;
  }
  r->quiet = a.quiet;
  r->nranks = 1;
  int rc = CLI_OK;
  output_cfg o;
  memset(&o, 0, sizeof o);
  char dir[4096];
  FILE *json = NULL;
  char *json_buf = NULL;
  size_t json_len = 0;
  if (load_case(r, &a) || read_output(r, &o, a.out_dir, dir, sizeof dir)) {
    /* the same on every rank, except a case file some rank cannot read */
    if (r->file_error)
      cli_err_rank("%s", r->err);
    else
      cli_err("%s", r->err);
    rc = r->case_error ? CLI_USAGE : CLI_FAIL;
    goto done;
  }
  long ck_every = a.checkpoint_every >= 0
                      ? a.checkpoint_every
                      : cf_int(&r->cf, "run", "checkpoint_every", 0);
  if ((ck_every || a.restart) && !r->solver->checkpoint_save) {
    cli_err("%s: solver '%s' cannot checkpoint (operator, heat, wave and fdtd "
            "can)",
            r->cf.path, r->solver->kind);
    rc = CLI_USAGE;
    goto done;
  }
  strata_backend be = STRATA_BACKEND_AUTO;
  strata_backend_parse(a.backend ? a.backend
                                 : cf_string(&r->cf, "run", "backend", "auto"),
                       &be);
  if (a.backend && strata_backend_parse(a.backend, &be) != STRATA_OK) {
    cli_err("run: --backend '%s': expected auto, cpu or cuda", a.backend);
    rc = CLI_USAGE;
    goto done;
  }
  const int device = (int)cf_int(&r->cf, "run", "device", 0);
  const int threads = (int)cf_int(&r->cf, "run", "threads", 0);
  if (multi) {
    char why[256];
    if (!strata_dist_available(why, sizeof why)) {
      if (L.size > 1 || L.rank > 0) {
        char as[64] = "as one of several processes";
        if (L.size > 1) snprintf(as, sizeof as, "as %d processes", L.size);
        cli_err("%s: started by an MPI launcher %s (%s), but this strata "
                "cannot run over several processes: %s", r->cf.path, as,
                L.by, why);
        rc = CLI_USAGE;
        goto done;
      }
      multi = 0; /* PMIx alone, rank 0 or unknown: as one process */
      cli_set_rank(-1);
    }
  }
  /* every refusal before any rank starts MPI or a device */
  if (multi && L.size > 1 && dist_refusal(r, L.size)) {
    cli_err("%s", r->err);
    rc = CLI_USAGE;
    goto done;
  }
  if (multi) {
    r->dist = cli_dist(be, threads);
    if (!r->dist) {
      rc = CLI_FAIL;
      goto done;
    }
    r->ctx = strata_dist_context(r->dist);
    r->rank = strata_dist_rank(r->dist);
    r->nranks = strata_dist_size(r->dist);
    if (L.size > 0 && r->nranks != L.size) {
      cli_err("%s: the MPI launcher started %d processes (%s) but MPI "
              "counts %d: strata was built with another MPI than the "
              "launcher's; use the mpiexec of the MPI strata was built with",
              r->cf.path, L.size, L.by, r->nranks);
      rc = CLI_FAIL;
      goto done;
    }
    if (r->nranks == 1) { /* PMIx alone, and one process after all */
      r->ctx = NULL;
      strata_dist_destroy(&r->dist);
      r->rank = 0;
      cli_set_rank(-1);
    } else {
      cli_set_rank(r->rank);
      if (L.size < 1 && dist_refusal(r, r->nranks)) {
        cli_err("%s", r->err);
        rc = CLI_USAGE;
        goto done;
      }
    }
  }
  if (!r->ctx) {
    r->ctx = cli_context(be, device, threads);
    if (!r->ctx) {
      rc = CLI_FAIL;
      goto done;
    }
  }
  size_t need = 0;
  if ((rc = run_agree(r, check_memory(r, &need) ? (r->case_error ? CLI_USAGE
                                                                 : CLI_FAIL)
                                                : 0)))
    goto done;
  int crc = r->solver->create(r) == 0 ? 0
            : r->case_error           ? CLI_USAGE
                                      : CLI_FAIL;
  int unsupported = crc && r->unsupported;
  if (r->dist) {
    double u = unsupported;
    strata_dist_allreduce(r->dist, &u, 1, 1);
    unsupported = u > 0;
  }
  if (unsupported && be == STRATA_BACKEND_AUTO &&
      strata_context_backend(r->ctx) != STRATA_BACKEND_CPU) {
    /* "auto" means the best engine that can run the case: the GPU engine
     * lacks this solver's kernels, so say so and run on the CPU */
    if (!a.quiet && r->rank == 0)
      fprintf(stderr, "strata: %s; running on the CPU instead\n",
              strata_context_error(r->ctx));
    if (r->solver->destroy && r->impl) r->solver->destroy(r);
    r->unsupported = 0;
    if (r->dist) {
      r->ctx = NULL;
      strata_dist_destroy(&r->dist);
      r->dist = cli_dist(STRATA_BACKEND_CPU, threads);
      if (!r->dist) {
        rc = CLI_FAIL;
        goto done;
      }
      r->ctx = strata_dist_context(r->dist);
    } else {
      strata_context_destroy(&r->ctx);
      r->ctx = cli_context(STRATA_BACKEND_CPU, device, threads);
      if (!r->ctx) {
        rc = CLI_FAIL;
        goto done;
      }
    }
    crc = r->solver->create(r) == 0 ? 0
          : r->case_error           ? CLI_USAGE
                                    : CLI_FAIL;
  }
  if ((rc = run_agree(r, crc))) goto done;
  if (a.restart && (rc = load_checkpoint(r, a.restart))) goto done;
  if (r->step > r->steps) {
    cli_err("%s: the checkpoint is at step %ld, past the case's %ld steps",
            a.restart, r->step, r->steps);
    rc = CLI_USAGE;
    goto done;
  }
  strata_device_info di;
  if (strata_context_device_info(r->ctx, &di) != STRATA_OK)
    memset(&di, 0, sizeof di);
  double points = (double)r->n[0] * r->n[1] * r->n[2];
  const char *transport = r->dist ? strata_dist_transport(r->dist) : "none";
  const int talk = !a.quiet && r->rank == 0;
  if (talk) {
    fprintf(stderr, "strata: %s: %s %zu", r->name, r->solver->kind, r->n[0]);
    for (int d = 1; d < r->dims; d++) fprintf(stderr, "x%zu", r->n[d]);
    fprintf(stderr, " %s, %ld steps on %s (%s), %.1f MiB",
            r->precision == STRATA_F32 ? "fp32" : "fp64", r->steps,
            strata_backend_name(strata_context_backend(r->ctx)), di.name,
            need / 1048576.0);
    if (r->dist)
      fprintf(stderr, " per rank, over %d processes (%s)", r->nranks,
              transport);
    fputc('\n', stderr);
  }
  if (a.check_only) {
    if (r->rank == 0) {
      printf("%s: ok (%s, %.1f MiB needed", r->cf.path, r->solver->kind,
             need / 1048576.0);
      if (r->dist) printf(" per rank, %d processes", r->nranks);
      printf(")\n");
    }
    goto done;
  }
  if ((rc = run_agree(r, output_setup(r, &o) ? CLI_FAIL : 0))) goto done;
  double copy_pts = 0;
  if (!a.no_ceiling) {
    size_t cn[3] = {r->n[0], r->n[1], r->n[2]};
    if (r->dist) { /* every rank on its slab at once: the sum is the ceiling */
      size_t lo;
      strata_dist_split(r->dist, r->n[r->dims - 1], r->rank, &lo,
                        &cn[r->dims - 1]);
      strata_dist_barrier(r->dist);
    }
    int bad = cli_copy_rate(r->ctx, cn, r->precision, &copy_pts) != 0;
    if (bad) copy_pts = 0;
    if (r->dist) {
      double v[2] = {copy_pts, bad};
      strata_dist_allreduce(r->dist, v, 2, 0);
      copy_pts = v[1] > 0 ? 0 : v[0];
    }
  }
  int mrc = 0;
  if (r->rank == 0 && make_dir(o.dir)) {
    run_fail(r, "cannot create the output folder '%s': %s", o.dir,
             strerror(errno));
    mrc = CLI_FAIL;
  }
  if (!mrc && !(json = open_memstream(&json_buf, &json_len))) {
    run_fail(r, "out of memory");
    mrc = CLI_FAIL;
  }
  if ((rc = run_agree(r, mrc))) goto done;
  cli_progress pg;
  long first = r->step;
  double t_start = cli_now(), kernel_s = 0;
  long chunk = 1;
  int interrupted = 0, stop = 0;
  if (o.every && r->step == 0 &&
      (rc = run_agree(r, write_snapshot(r, &o, "snap_000000") ? CLI_FAIL : 0)))
    goto done;
  cli_progress_start(&pg, first, r->steps, points,
                     a.quiet || r->solver->own_progress || r->rank != 0);
  while (r->step < r->steps) {
    /* over several processes the ranks stop together: at the step where
     * the flag of any of them was seen (the allreduce below) */
    if (r->dist ? stop : cli_interrupted()) {
      interrupted = 1;
      break;
    }
    long n = chunk;
    if (n > r->steps - r->step) n = r->steps - r->step;
    if (o.every && n > o.every - r->step % o.every)
      n = o.every - r->step % o.every;
    if (ck_every && n > ck_every - r->step % ck_every)
      n = ck_every - r->step % ck_every;
    double t0 = cli_now();
    if (r->solver->step(r, n) || strata_context_sync(r->ctx) != STRATA_OK) {
      cli_progress_finish(&pg);
      if (r->dist) {
        /* the other ranks may be waiting for this one inside their step,
         * where no agreement reaches them: end this process, and the
         * launcher ends the others (every rank exits non-zero) */
        cli_err_rank("step %ld: %s", r->step,
                     r->err[0] ? r->err : strata_context_error(r->ctx));
        char werr[8];
        if (o.writer) /* the snapshots handed over before this step */
          snap_writer_drain(o.writer, werr, sizeof werr);
        fflush(NULL);
        _exit(CLI_FAIL);
      }
      cli_err("step %ld: %s", r->step, r->err[0] ? r->err
                                                  : strata_context_error(r->ctx));
      rc = CLI_FAIL;
      goto done;
    }
    double dt = cli_now() - t0;
    /* a snapshot the writer thread failed to write stops the run now, not
     * at the next snapshot, which may be far away */
    int wfail = o.writer && snap_writer_failed(o.writer, r->err,
                                               sizeof r->err) != 0;
    if (r->dist) { /* the slowest rank's time, anyone's stop flag, and
                    * rank 0's writer */
      double v[3] = {dt, cli_interrupted(), wfail};
      strata_dist_allreduce(r->dist, v, 3, 1);
      dt = v[0];
      stop = v[1] > 0;
      if (v[2] > 0) {
        cli_progress_finish(&pg);
        rc = run_agree(r, wfail ? CLI_FAIL : 0);
        if (!rc) rc = CLI_FAIL;
        goto done;
      }
    } else if (wfail) {
      cli_progress_finish(&pg);
      rc = run_agree(r, CLI_FAIL);
      goto done;
    }
    kernel_s += dt;
    r->step += n;
    if (r->stop_at) /* complete early (multigrid converged) */
      r->step = r->steps = r->stop_at;
    /* aim at about 0.1 s per call so progress and Ctrl-C stay responsive */
    if (dt < 0.05 && n == chunk && chunk < (1L << 20))
      chunk *= 2;
    else if (dt > 0.2 && chunk > 1)
      chunk /= 2;
    cli_progress_update(&pg, r->step);
    if (o.every && r->step % o.every == 0 && r->step < r->steps) {
      char stem[64];
      snprintf(stem, sizeof stem, "snap_%06ld", r->step);
      if ((rc = run_agree(r, write_snapshot(r, &o, stem) ? CLI_FAIL : 0)))
        goto done;
    }
    /* a checkpoint comes after every earlier snapshot is on disk */
    if (ck_every && r->step % ck_every == 0 && r->step < r->steps &&
        ((rc = run_agree(r, drain_snapshots(r, &o) ? CLI_FAIL : 0)) ||
         (rc = save_checkpoint(r, o.dir))))
      goto done;
  }
  cli_progress_finish(&pg);
  /* the loop's time includes writing its snapshots, as when synchronous */
  if ((rc = run_agree(r, drain_snapshots(r, &o) ? CLI_FAIL : 0))) goto done;
  double wall = cli_now() - t_start;
  if (o.every && r->step % o.every == 0 && r->step == r->steps) {
    char stem[64];
    snprintf(stem, sizeof stem, "snap_%06ld", r->step);
    if ((rc = run_agree(r, write_snapshot(r, &o, stem) ? CLI_FAIL : 0)))
      goto done;
  }
  if ((rc = run_agree(r, write_snapshot(r, &o, interrupted ? "interrupted"
                                                           : "final")
                             ? CLI_FAIL
                             : 0)))
    goto done;
  /* every snapshot is written before the checkpoint and the summary */
  if ((rc = run_agree(r, drain_snapshots(r, &o) ? CLI_FAIL : 0))) goto done;
  if (interrupted && r->solver->checkpoint_save &&
      (rc = save_checkpoint(r, o.dir)))
    goto done;
  /* the summary (every rank builds it; rank 0 writes it) */
  long done_steps = r->step - first;
  double gpts = kernel_s > 0 ? done_steps * points / kernel_s * 1e-9 : 0;
  double bpp = r->solver->bytes_per_point_step(r);
  fprintf(json, "{\n  \"case\": ");
  json_str(json, r->name);
  fprintf(json, ",\n  \"case_file\": ");
  json_str(json, r->cf.path);
  fprintf(json, ",\n  \"description\": ");
  json_str(json, cf_string(&r->cf, "case", "description", ""));
  fprintf(json, ",\n  \"solver\": \"%s\",\n  \"backend\": \"%s\",\n"
          "  \"device\": ", r->solver->kind,
          strata_backend_name(strata_context_backend(r->ctx)));
  json_str(json, di.name);
  fprintf(json, ",\n  \"ranks\": %d,\n  \"transport\": \"%s\"", r->nranks,
          transport);
  fprintf(json, ",\n  \"strata\": \"%s\",\n  \"build\": ", strata_version());
  json_str(json, strata_build_info());
  fprintf(json, ",\n  \"dims\": %d,\n  \"n\": [%zu, %zu, %zu],\n"
          "  \"spacing\": %.17g,\n  \"precision\": \"%s\",\n"
          "  \"steps\": %ld,\n  \"steps_done\": %ld,\n  \"first_step\": %ld,\n"
          "  \"interrupted\": %s,\n  \"wall_s\": %.6f,\n  \"kernel_s\": %.6f,\n"
          "  \"output_s\": %.6f,\n  \"output_writer_s\": %.6f,\n"
          "  \"output_async\": %s,\n  \"gpts_per_s\": %.6f,\n"
          "  \"bytes_per_point_step\": %.3f,\n  \"gb_per_s\": %.6f,\n",
          r->dims, r->n[0], r->n[1], r->n[2], r->h,
          r->precision == STRATA_F32 ? "f32" : "f64", r->steps, r->step, first,
          interrupted ? "true" : "false", wall, kernel_s, o.write_s,
          o.writer ? snap_writer_busy_s(o.writer) : o.files_s,
          o.writer ? "true" : "false", gpts, bpp, gpts * bpp);
  if (copy_pts > 0)
    fprintf(json, "  \"copy_gb_per_s\": %.6f,\n  \"percent_of_copy\": %.3f,\n",
            copy_pts * 2 * (double)r->precision * 1e-9,
            100 * gpts * bpp / (copy_pts * 2 * (double)r->precision * 1e-9));
  else
    fprintf(json, "  \"copy_gb_per_s\": null,\n  \"percent_of_copy\": null,\n");
  fprintf(json, "  \"memory_bytes\": %zu,\n  \"device_memory_bytes\": %zu,\n",
          need, di.memory_bytes);
  if (r->solver->describe) r->solver->describe(r, json);
  if ((rc = run_agree(r, write_traces(r, &o, json) ? CLI_FAIL : 0))) goto done;
  if (o.movie && !interrupted && r->rank == 0) make_movie(r, &o, json, a.quiet);
  fprintf(json, "  \"output_dir\": ");
  json_str(json, o.dir);
  fprintf(json, "\n}\n");
  fclose(json);
  json = NULL;
  int src = 0;
  if (r->rank == 0) {
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/summary.json", o.dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *fp = fopen(tmp, "wb");
    if (!fp || fwrite(json_buf, 1, json_len, fp) != json_len ||
        fclose(fp) != 0 || rename(tmp, path) != 0) {
      run_fail(r, "cannot write %s: %s", path, strerror(errno));
      remove(tmp);
      src = CLI_FAIL;
    }
  }
  if ((rc = run_agree(r, src))) goto done;
  if (talk) {
    fprintf(stderr, "strata: %s %ld steps in %.2f s (kernels %.2f s): %.3f "
            "Gpts/s, %.1f GB/s", interrupted ? "interrupted after" : "done:",
            done_steps, wall, kernel_s, gpts, gpts * bpp);
    if (copy_pts > 0)
      fprintf(stderr, " (%.0f%% of copy)",
              100 * gpts * bpp / (copy_pts * 2 * (double)r->precision * 1e-9));
    fprintf(stderr, "; output in %s/\n", o.dir);
  }
  if (interrupted) rc = 130;
done:
  if (json) fclose(json);
  free(json_buf);
  snap_writer_destroy(&o.writer); /* writes what is still handed over */
  if (r->solver && r->solver->destroy && r->impl) r->solver->destroy(r);
  strata_field_destroy(&o.wfield);
  strata_context_destroy(&o.wctx);
  free(o.host);
  if (r->dist) { /* collective: every rank arrives here together */
    r->ctx = NULL;
    strata_dist_destroy(&r->dist);
  }
  strata_context_destroy(&r->ctx);
  cf_free(&r->cf);
  free(r);
  return rc;
}
