/* strata run: the case schema, the solver adapters and the driver. */
#ifndef STRATA_CLI_RUN_H
#define STRATA_CLI_RUN_H

#include "casefile.h"
#include "cli.h"

extern const cf_key run_schema[];
extern const int run_schema_count;

/* Everything the driver knows about one run. */
typedef struct run_state run_state;

/* A solver as the driver sees it.  Every function returns 0, or -1 after
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
  /* bytes of device memory it will need (before any allocation) */
  int (*estimate)(run_state *r, size_t *bytes);
  int (*create)(run_state *r);
  int (*step)(run_state *r, long n);
  strata_field *(*field)(run_state *r); /* the field written as output */
  /* copies the output field's interior to host (dense, global, x
   * fastest); over several processes a gather to rank 0 (host NULL
   * elsewhere), collective.  NULL: the solver cannot run over several
   * processes. */
  int (*read)(run_state *r, void *host);
  double (*bytes_per_point_step)(run_state *r);
  /* optional */
  int (*traces)(run_state *r, strata_traces *t, double **buf);
  void (*describe)(run_state *r, FILE *json); /* extra summary members */
  int (*checkpoint_save)(run_state *r, const char *path);
  int (*checkpoint_load)(run_state *r, const char *path);
  void (*destroy)(run_state *r);
} run_solver;

struct run_state {
  cf_file cf;
  const run_solver *solver;
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
  char err[1024];
  int case_error;
  int file_error;  /* the case file itself could not be read */
  int unsupported; /* create failed with STRATA_ENOTSUP (engine lacks it) */
  int quiet;       /* --quiet: adapters print nothing */
  long stop_at;    /* set by step() when the run is complete before
                      r->steps (multigrid converged): the steps done */
};

/* The solvers this build knows. */
extern const run_solver run_solver_operator;
extern const run_solver run_solver_multigrid;
extern const run_solver *const run_solvers_extra[]; /* NULL-terminated */

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

/* The initial condition of [initial] as a point function. */
double run_initial_value(long i, long j, long k, void *user);

#endif
