/* strata view DIR: a finished (or stopped) run's output folder in the live
 * view's page: its snapshots (the .npy files, drawn as the run drew its
 * PNGs: the solver's colour map and slice), its summary and its traces.
 * The folder is listed once at start; a request picks a snapshot by its
 * number in that list, never by a name. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run.h"
#include "view.h"
#include "wave_model.h"

enum { MAX_SNAPS = 100000 };
#define MAX_SUMMARY (1 << 20)
#define MAX_TRACES_PNG (64 << 20)

typedef struct {
  char *path;
  long step;
} snap;

typedef struct {
  const char *dir;
  snap *s;
  int n;
  char name[256];
  strata_context *ctx;
} folder;

static void usage(FILE *o) {
  fprintf(o,
          "usage: strata view DIR [--listen [ADDR:]PORT]\n"
          "  Serves a run's output folder DIR (strata run's snapshots .npy,\n"
          "  summary.json, traces.png) as the page of strata run --view, on\n"
          "  127.0.0.1 (or ADDR) at PORT (default 0: a free port), and prints\n"
          "  its address with the access token.  Ctrl-C ends it.\n");
}

/* The whole file when it is at most max bytes (0-terminated), else NULL. */
static char *read_small(const char *path, size_t max, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *b = NULL;
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
      (size_t)st.st_size <= max && (b = malloc((size_t)st.st_size + 1)) &&
      fread(b, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) {
    b[st.st_size] = 0;
    if (n) *n = (size_t)st.st_size;
  }
  return b;
}

/* A string or number member of the summary (the writer's layout: one
 * "key": value per line), or NULL. */
static const char *member(const char *json, const char *key, char *b,
                          size_t n) {
  char k[64];
  snprintf(k, sizeof k, "\"%s\": ", key);
  const char *p = json ? strstr(json, k) : NULL;
  if (!p) return NULL;
  p += strlen(k);
  if (*p == '"') p++;
  size_t m = strcspn(p, "\",\n}");
  snprintf(b, n, "%.*s", (int)(m < n ? m : n - 1), p);
  return b;
}

static int by_step(const void *a, const void *b) {
  long x = ((const snap *)a)->step, y = ((const snap *)b)->step;
  return (x > y) - (x < y);
}

/* snap_NNNNNN.npy at their steps, final.npy / interrupted.npy at the
 * summary's last step. */
static int list_snaps(folder *f, long last) {
  DIR *d = opendir(f->dir);
  if (!d) return -1;
  struct dirent *e;
  while ((e = readdir(d)) && f->n < MAX_SNAPS) {
    long step = -1;
    const char *nm = e->d_name;
    size_t len = strlen(nm), digits = strspn(nm + 5 * (len > 5), "0123456789");
    if (len >= 15 && !strncmp(nm, "snap_", 5) && digits >= 6 &&
        digits <= 12 && !strcmp(nm + 5 + digits, ".npy")) {
      step = atol(nm + 5);
    } else if (!strcmp(e->d_name, "final.npy") ||
               !strcmp(e->d_name, "interrupted.npy")) {
      step = last;
    } else {
      continue;
    }
    snap *ns = realloc(f->s, (size_t)(f->n + 1) * sizeof *ns);
    size_t pn = strlen(f->dir) + strlen(e->d_name) + 2;
    char *p = malloc(pn);
    if (!ns || !p) {
      free(p);
      if (ns) f->s = ns;
      closedir(d);
      return -1;
    }
    f->s = ns;
    snprintf(p, pn, "%s/%s", f->dir, e->d_name);
    f->s[f->n].path = p;
    f->s[f->n].step = step;
    f->n++;
  }
  closedir(d);
  qsort(f->s, (size_t)f->n, sizeof *f->s, by_step);
  return 0;
}

/* The shape and precision of a snapshot: 0, or -1 with err. */
static int npy_shape(folder *f, const char *path, cli_view_desc *d, void **data,
                     char *err, size_t en) {
  strata_precision p;
  int nd = 0;
  size_t shape[4];
  if (strata_npy_read(f->ctx, path, &p, &nd, shape, data) != STRATA_OK) {
    snprintf(err, en, "%s", strata_context_error(f->ctx));
    return -1;
  }
  if (nd < 1 || nd > 3) {
    free(*data);
    *data = NULL;
    snprintf(err, en, "%s: %d axes; a snapshot has 1 to 3", path, nd);
    return -1;
  }
  d->dims = nd;
  d->precision = p;
  for (int a = 0; a < 3; a++) d->n[a] = a < nd ? shape[nd - 1 - a] : 1;
  return 0;
}

static int load_snap(void *arg, int k, void *host, char *title, size_t tn,
                     char *err, size_t en) {
  folder *f = arg;
  cli_view_desc want, got;
  void *data = NULL;
  memset(&want, 0, sizeof want);
  memset(&got, 0, sizeof got);
  if (npy_shape(f, f->s[0].path, &want, &data, err, en)) return -1;
  free(data);
  if (npy_shape(f, f->s[k].path, &got, &data, err, en)) return -1;
  if (got.dims != want.dims || got.precision != want.precision ||
      memcmp(got.n, want.n, sizeof got.n)) {
    free(data);
    snprintf(err, en, "%s: its shape or precision differs from %s's",
             f->s[k].path, f->s[0].path);
    return -1;
  }
  memcpy(host, data, got.n[0] * got.n[1] * got.n[2] * (size_t)got.precision);
  free(data);
  snprintf(title, tn, "%.64s  step %ld", f->name, f->s[k].step);
  return 0;
}

/* The descriptor of the folder: its first snapshot's shape, the solver
 * kind's colours, slice and units. */
static int describe(folder *f, const char *sum, cli_view_desc *d,
                    char *kind, size_t kn, char *err, size_t en) {
  char b[64];
  void *data = NULL;
  if (npy_shape(f, f->s[0].path, d, &data, err, en)) return -1;
  free(data);
  if (!member(sum, "solver", kind, kn)) snprintf(kind, kn, "?");
  if (!member(sum, "case", f->name, sizeof f->name))
    snprintf(f->name, sizeof f->name, "%s", f->dir);
  d->name = f->name;
  d->kind = kind;
  d->h = member(sum, "spacing", b, sizeof b) ? atof(b) : 1;
  if (!(d->h > 0)) d->h = 1;
  d->steps = member(sum, "steps", b, sizeof b) ? atol(b) : 0;
  strata_png_options_init(&d->po);
  const run_solver *rs = NULL;
  for (int i = 0; run_solvers[i]; i++)
    if (!strcmp(run_solvers[i]->kind, kind)) rs = run_solvers[i];
  d->field = rs ? rs->field_name : "u";
  int wave = !strcmp(kind, "wave");
  d->unit = wave ? "Pa" : "";
  d->len_unit = wave ? "m" : NULL;
  d->time_unit = wave ? "s" : !strcmp(kind, "fdtd") ? "h/c" : NULL;
  if (rs) strata_colormap_parse(rs->cmap, &d->po.cmap);
  d->po.axis = wave ? 1 : 2;
  for (int a = 0; a < 3; a++) d->po.coord[a].step = d->h;
  if (wave && d->dims == 3) d->po.coord[2].name = "depth z";
  return 0;
}

/* A wave case's model interfaces, as the run drew them (its model files
 * read again on ctx), or NULL with a notice. */
static unsigned char *case_interfaces(run_state *r, strata_context *ctx) {
  r->ctx = ctx;
  strata_wave_options o;
  double *buf = NULL;
  run_wave_model wm;
  memset(&wm, 0, sizeof wm);
  unsigned char *m = NULL;
  if (run_wave_options(r, &o, &buf) == 0 &&
      run_wave_model_load(r, &o, &wm) == 0 &&
      run_wave_interfaces(r, &o, &wm) == 0) {
    m = r->interfaces;
    r->interfaces = NULL;
  } else {
    fprintf(stderr, "strata: view: the model's interfaces are not drawn: "
            "%s\n", r->err);
  }
  run_wave_model_free(&wm);
  free(buf);
  r->ctx = NULL;
  return m;
}

/* The case's own colours and slice ([output] colormap, range, flip,
 * slice_axis, slice_index) when the case file the summary names still
 * reads as a case of this grid, so that the frames are the run's PNGs
 * (keys the run set with --set are not known), and a wave model's
 * interfaces (*lines, malloc'd, or NULL); else a notice. */
static void case_colours(const char *sum, const char *dir, cli_view_desc *d,
                         strata_context *ctx, unsigned char **lines) {
  *lines = NULL;
  char path[4096];
  if (!member(sum, "case_file", path, sizeof path)) return;
  run_state *r = calloc(1, sizeof *r);
  run_args a;
  memset(&a, 0, sizeof a);
  a.case_path = path;
  output_cfg o;
  char db[4096];
  int ok = r && run_load_case(r, &a) == 0 &&
           run_read_output(r, &o, dir, db, sizeof db) == 0 &&
           r->dims == d->dims && !memcmp(r->n, d->n, sizeof r->n);
  if (ok) {
    d->po.cmap = o.po.cmap;
    d->po.lo = o.po.lo;
    d->po.hi = o.po.hi;
    d->po.flip = o.po.flip;
    d->po.axis = o.po.axis;
    d->po.index = o.po.index;
    if (!strcmp(r->solver->kind, "wave"))
      d->po.lines = *lines = case_interfaces(r, ctx);
  } else {
    fprintf(stderr, "strata: view: the case file %s %s: the solver's "
            "colours and slice\n", path,
            r && r->err[0] ? "cannot be read" : "is not this grid's");
  }
  if (r) cf_free(&r->cf);
  free(r);
}

int cli_view_cmd(int argc, char **argv) {
  const char *dir = NULL, *listen = "0";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return CLI_OK;
    } else if (!strcmp(argv[i], "--listen") && i + 1 < argc) {
      listen = argv[++i];
    } else if (argv[i][0] == '-' || dir) {
      cli_err("view: unexpected '%s' (see strata view --help)", argv[i]);
      return CLI_USAGE;
    } else {
      dir = argv[i];
    }
  }
  if (!dir) {
    usage(stderr);
    return CLI_USAGE;
  }
  folder f;
  memset(&f, 0, sizeof f);
  f.dir = dir;
  int rc = CLI_FAIL;
  char err[1024] = "", kind[64];
  size_t tn = 0;
  char *sum = NULL, *traces = NULL;
  cli_view *v = NULL;
  unsigned char *lines = NULL; /* the model's interfaces, copied by the view */
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = STRATA_BACKEND_CPU;
  if (strata_context_create(&f.ctx, &co) != STRATA_OK) {
    cli_err("view: cannot create a CPU context");
    return CLI_FAIL;
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  sum = read_small(path, MAX_SUMMARY, NULL);
  if (sum && sum[0] != '{') { /* not the run's summary: left out */
    free(sum);
    sum = NULL;
  }
  snprintf(path, sizeof path, "%s/traces.png", dir);
  traces = read_small(path, MAX_TRACES_PNG, &tn);
  char b[64];
  long last = member(sum, "steps_done", b, sizeof b) ? atol(b) : 0;
  cli_view_desc d;
  memset(&d, 0, sizeof d);
  if (list_snaps(&f, last)) {
    cli_err("view: cannot read the folder '%s'", dir);
    goto done;
  }
  if (f.n == 0) {
    cli_err("view: '%s' has no snapshots (snap_NNNNNN.npy, final.npy or "
            "interrupted.npy: strata run writes them with npy among "
            "[output] formats)", dir);
    goto done;
  }
  if (describe(&f, sum, &d, kind, sizeof kind, err, sizeof err)) {
    cli_err("view: %s", err);
    goto done;
  }
  case_colours(sum, dir, &d, f.ctx, &lines);
  long *steps = malloc((size_t)f.n * sizeof *steps);
  if (!steps) {
    cli_err("view: out of memory");
    goto done;
  }
  for (int i = 0; i < f.n; i++) steps[i] = f.s[i].step;
  d.nframes = f.n;
  d.frame_steps = steps;
  d.load = load_snap;
  d.load_arg = &f;
  d.summary_json = sum;
  d.traces_png = traces;
  d.traces_png_size = traces ? tn : 0;
  int s = cli_view_start(&v, listen, &d, err, sizeof err);
  free(steps);
  if (s) {
    cli_err("view: --listen: %s", err);
    rc = s == -2 ? CLI_USAGE : CLI_FAIL;
    goto done;
  }
  cli_install_interrupt(0);
  fprintf(stderr, "strata: %s: %d snapshots; open %s (Ctrl-C ends)\n", dir,
          f.n, cli_view_url(v));
  cli_view_serve_forever(v);
  rc = CLI_OK;
done:
  cli_view_destroy(&v);
  free(lines);
  free(sum);
  free(traces);
  for (int i = 0; i < f.n; i++) free(f.s[i].path);
  free(f.s);
  strata_context_destroy(&f.ctx);
  return rc;
}
