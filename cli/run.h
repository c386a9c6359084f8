/* strata run: the case schema, the solver adapters and the driver. */
#ifndef STRATA_CLI_RUN_H
#define STRATA_CLI_RUN_H

#include "casefile.h"
#include "cli.h"
#include "../src/core/text.h"

extern const cf_key run_schema[];
extern const int run_schema_count;

/* Everything the driver knows about one run. */
typedef struct run_state run_state;

/* A solver kind as the driver sees it: the case's keys it reads, and the
 * translation of the case into the library solver's options (one file per
 * kind); stepping, fields, traces, checkpoints and info then go through
 * the library's strata_solver.  Every function returns 0, or -1 after
 * writing the reason to r->err (and, for create, setting r->case_error
 * when the case's parameters are at fault). */
typedef struct run_solver {
  const char *kind;      /* [solver] kind */
  const char *sections;  /* its own sections, "a|b" */
  const char *bcs;       /* boundary kinds it accepts, "a|b" */
  int dims_min, dims_max;
  strata_precision precision; /* default */
  const char *cmap;      /* default colour map */
  const char *field_name;
  int own_progress;      /* 1: step() reports its own progress (a line per
                            multigrid cycle); the driver's display is off */
  int distributed;       /* 1: it runs over several processes */
  int checkpoints;       /* 1: --checkpoint-every and --restart apply */
  /* reads the case into the solver's options and creates r->sv
   * (run_solver_create); with r->estimating set, only checks them and
   * adds up what create would allocate (strata_solver_estimate), then
   * returns: nothing is allocated and r->sv stays NULL */
  int (*create)(run_state *r);
  /* optional: steps itself (NULL: strata_solver_step) */
  int (*step)(run_state *r, long n);
  void (*describe)(run_state *r, FILE *json); /* extra summary members */
  void (*destroy)(run_state *r);              /* frees r->impl */
} run_solver;

struct run_state {
  cf_file cf;
  const run_solver *solver;
  strata_solver *sv;         /* the library's solver */
  strata_context *ctx;
  strata_dist *dist;         /* several processes: owns ctx; else NULL */
  int rank, nranks;          /* 0 and 1 for one process */
  char name[256];
  int dims;
  size_t n[3];
  double h;
  strata_precision precision;
  strata_boundary bc;        /* heat / operator boundaries */
  int face_kind[6];          /* solver-specific face codes */
  long steps, step;          /* total, done */
  void *impl;                /* the adapter's state */
  char err[4096]; /* cut at a word, ending in "...", when longer */
  int case_error;
  int file_error;  /* the case file itself could not be read */
  int unsupported; /* create failed with STRATA_ENOTSUP (engine lacks it) */
  int quiet;       /* --quiet: adapters print nothing */
  long stop_at;    /* set by step() when the run is complete before
                      r->steps (multigrid converged): the steps done */
  strata_status step_status; /* the library's status of a failed step */
  /* the outputs the run wrote, each after a check found its state
   * finite: what a blow-up keeps */
  char kept_snap[64];  /* the last snapshot's stem, "" = none */
  long kept_snap_step;
  long kept_ck_step;   /* the last checkpoint's step, -1 = none */
  int estimating;  /* create() only estimates (see run_solver) */
  size_t fp_host, fp_dev; /* what the estimate found (this rank's) */
  size_t copy_host, copy_dev; /* the run's own copies (run_check_memory) */
  unsigned char *interfaces; /* rank 0: the model's interfaces on the grid
                                (strata_png_options.lines), or NULL */
};

/* The solvers this build knows (NULL-terminated). */
extern const run_solver run_solver_operator;
extern const run_solver run_solver_multigrid;
/* [poisson] beta (discretization = fv7) set on mg (cli/poisson_beta.c);
 * 0, or -1 with the failure recorded. */
int poisson_set_beta(run_state *r, strata_mg *mg);
extern const run_solver *const run_solvers[];

/* Creates r->sv from o (its tag set to the case's hash, so a checkpoint
 * loads only into the case that wrote it): the library's status, its
 * message on r->ctx.  With r->estimating, strata_solver_estimate instead:
 * r->fp_host and r->fp_dev receive the footprint, and a footprint too
 * large for the machine is left to run_check_memory (STRATA_OK). */
strata_status run_solver_create(run_state *r, strata_solver_options *o);

/* The boundary face name ("x_lo", ...) and the case's kind for it. */
const char *run_face_key(int face);
const char *run_face_value(run_state *r, int face, const char *def);

/* sets r->err and returns -1 */
int run_fail(run_state *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* a case error tied to section.key: "file:line: key 'k' in [s]: ..." */
int run_case_fail(run_state *r, const char *section, const char *key,
                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* an error in a command-line option's value: "--out: ..." (exit 2) */
int run_flag_fail(run_state *r, const char *flag, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Which case key set a library option, so a refusal names the key's line.
 * arg is the option's name as strata_context_error_arg() gives it, less
 * any index ("n" for "n[2]", "face" for "face[4]"); section and key are
 * where the case sets it, or where(), when set, finds them from the index
 * (a face's key, a receiver's end).  A table ends with arg NULL. */
typedef struct run_optkey {
  const char *arg, *section, *key;
  void (*where)(const run_state *r, long index, const char **section,
                const char **key);
} run_optkey;
/* The [grid] rows every table starts with (over several processes the
 * split's refusals name the global grid's n too). */
#define RUN_GRID_KEYS                                                        \
  {"n", "grid", "n", NULL}, {"dims", "grid", "n", NULL},                     \
      {"h", "grid", "spacing", NULL}, {"precision", "grid", "precision", NULL}
/* where(): the boundary key of face index: its own (x_lo...) when the
 * case has it, else all, else the other face of its axis. */
void run_where_face(const run_state *r, long index, const char **section,
                    const char **key);
/* A library call on the case's options failed with s: EINVAL and
 * EUNSTABLE are the case's errors, reported at the key that set the
 * option the library names (through map), or at solver_section when it
 * names none; the rest are runtime failures.  Returns -1. */
int run_lib_fail(run_state *r, strata_status s, const run_optkey *map,
                 const char *solver_section);
/* Whether the argument the library's last failure named is one of map's. */
int run_lib_names(const run_state *r, const run_optkey *map);

/* The wave solver's options as the case sets them ([grid], [wave],
 * [boundary], [source], [receivers], [run] check_every), with o->dist =
 * r->dist; *buf (malloc'd, the caller frees it, also after a failure)
 * holds the layers and the receivers o points to.  0, or -1 with r->err. */
int run_wave_options(run_state *r, strata_wave_options *o, double **buf);
/* The library's wave options' names -> the case's keys. */
extern const run_optkey run_wave_keys[];

/* The initial condition of [initial] as a point function. */
double run_initial_value(long i, long j, long k, void *user);


/* ---- the driver's parts (cmd_run.c, run_case.c, run_output.c,
 * run_ranks.c) ------------------------------------------------------------- */

/* [output] as read from the case, and rank 0's snapshot writer. */
typedef struct {
  const char *dir;
  long every;
  int npy, vti, png, h5, movie, fps;
  strata_png_options po;
  int trace_npy, trace_segy, trace_png, trace_h5;
  long frames;
  int async;      /* [output] async: snapshots through the writer thread */
  double write_s; /* the run waited for snapshot output (summary output_s) */
  /* rank 0: the library's snapshot writer, in the background (async) or
   * writing at each hand-over */
  strata_snapshot_writer *writer;
  int in_background; /* the writer writes while the loop steps on */
  struct cli_view *view; /* --view: the live view's server, or NULL */
} output_cfg;

/* The command line. */
typedef struct {
  const char *case_path;
  const char *out_dir;
  const char *restart;
  const char *backend;
  long checkpoint_every;
  int check_only, quiet, no_ceiling;
  const char *view;  /* --view [ADDR:]PORT, or NULL */
  const char *sets[64];
  int nsets;
} run_args;

/* What the summary reports of the run. */
typedef struct {
  long first;          /* the step the run (or restart) began at */
  double wall, kernel_s, copy_pts;
  size_t need;         /* memory the case needs (per rank) */
  int interrupted, quiet;
  double points;
  strata_device_info di;
  const char *transport;
} run_totals;

/* run_case.c: 0, 1 (--help, --keys: done) or -1 (message printed). */
int run_parse_args(int argc, char **argv, run_args *a);
/* Reads and checks the case: 0, or -1 with r->err (r->case_error,
 * r->file_error say whose fault). */
int run_load_case(run_state *r, const run_args *a);
int run_read_output(run_state *r, output_cfg *o, const char *dir_opt,
                    char *dirbuf, size_t dn);
/* The memory the run needs (*need: this rank's, in bytes): the solver's
 * footprint (r->fp_host, r->fp_dev) and the run's own copies (snapshot
 * staging, traces); 0, or -1 with r->err naming both numbers when it does
 * not fit (a case error). */
int run_check_memory(run_state *r, size_t *need);

/* run_ranks.c: the worst exit code of a stage over the ranks (printed);
 * rc alone for one process. */
int run_agree(run_state *r, int rc);
/* The output folder, made by rank 0, which removes the partial files of a
 * killed run there; every rank learns whether it was made (collective):
 * 0, or the exit code with r->err. */
int run_open_dir(run_state *r, const char *dir);
int run_dist_refusal(run_state *r, int nranks);
/* The engine alone: a context, or over several processes (started by an
 * MPI launcher) a group of ranks (r->dist, r->rank, r->nranks).  Returns
 * 0 or an exit code, the message printed. */
int run_open(run_state *r, const run_args *a, const cli_launch *L,
             int multi);
/* With a->check_only, everything up to the solver's estimate (nothing
 * allocated, r->sv stays NULL). */
int run_start(run_state *r, const run_args *a, const cli_launch *L,
              int multi, size_t *need);
int run_save_checkpoint(run_state *r, const char *dir);
int run_load_checkpoint(run_state *r, const char *path);

/* run_survey.c: a case with a [survey] section, its gathers into dir.
 * Returns 0 or an exit code, the message printed. */
int run_survey(run_state *r, const run_args *a, const cli_launch *L,
               int multi, const char *dir);

/* run_output.c */
/* The check before an output (collective): 0 when every field of the
 * solver is finite, so that a blown-up state is never written under a
 * final name; else -1 with r->err from run_blew_up (or the failure). */
int run_check_state(run_state *r, const char *dir);
/* r->err = "the run blew up: MSG; kept ..." naming the last snapshot and
 * checkpoint written in dir (or that none was); returns -1. */
int run_blew_up(run_state *r, const char *dir, const char *msg);
int run_make_dir(const char *dir);
int run_output_setup(run_state *r, output_cfg *o);
int run_write_snapshot(run_state *r, output_cfg *o, const char *stem);
int run_drain_snapshots(run_state *r, output_cfg *o);
int run_summary(run_state *r, output_cfg *o, const run_totals *t);
/* The units of the solver kind's space and time ("m", "s"), NULL: none. */
void run_units(const run_state *r, const char **len, const char **time);
/* The snapshots' PNG options (o's, with the case's axes and units) and a
 * snapshot's title (the case, the step and the time): the live view's
 * frames are drawn with the same. */
void run_png_options(run_state *r, const output_cfg *o,
                     strata_png_options *po);
void run_snapshot_title(run_state *r, char *b, size_t n);
/* The gather's PNG options (traces.png, and the live view's): the seismic
 * map clipped at a tenth of the peak, a title (in title) saying so. */
void run_traces_png_options(run_state *r, const output_cfg *o,
                            const strata_traces *t, strata_png_options *po,
                            char *title, size_t tn);

#endif
