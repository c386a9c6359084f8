/* The live view: a small HTTP server (libmicrohttpd) that serves a page,
 * the run's status and frames of its field to browsers, and takes pause,
 * resume and stop.  The run's loop hands it frames only when a viewer has
 * asked for one (latest wins); nothing a browser does makes the loop
 * wait.  Also the server of `strata view DIR`, over a finished run's
 * snapshots.  Every request needs the token printed at start. */
#ifndef STRATA_CLI_VIEW_H
#define STRATA_CLI_VIEW_H

#include <stddef.h>

#include "strata.h"

typedef struct cli_view cli_view;

/* What the page shows of a run or of a folder (the strings are copied). */
typedef struct cli_view_desc {
  const char *name;      /* the case */
  const char *kind;      /* the solver kind */
  const char *field;     /* the field's name and unit */
  const char *unit;
  const char *len_unit;  /* the grid's unit ("m"), NULL: grid points */
  const char *time_unit; /* NULL: steps have no time of their own */
  int dims;
  size_t n[3];
  double h;
  strata_precision precision;
  long steps;
  strata_png_options po; /* the snapshots' options (colours, axes, slice;
                            the axes' names static strings; the units are
                            len_unit, field and unit; no title) */
  /* `strata view DIR`: nframes snapshots (0 for a live run), frame k
   * loaded by load (host: the whole grid; *step, and title for the PNG),
   * 0 or -1 with err; the summary's JSON text and the gather's PNG, or
   * NULL (copied) */
  int nframes;
  const long *frame_steps;
  int (*load)(void *arg, int k, void *host, char *title, size_t tn,
              char *err, size_t en);
  void *load_arg;
  int live_traces;        /* a live run with receivers: its gather */
  const char *summary_json;
  const void *traces_png;
  size_t traces_png_size;
} cli_view_desc;

/* Starts the server on spec ("PORT" or "ADDR:PORT", ADDR an IPv4 address
 * or localhost, default 127.0.0.1; port 0 picks a free one).  0; -2 for a
 * bad spec, -1 for the rest (no libmicrohttpd in this build: how to get
 * it; the port taken), the reason in err. */
int cli_view_start(cli_view **out, const char *spec, const cli_view_desc *d,
                   char *err, size_t en);
/* The URL to open, with the token. */
const char *cli_view_url(const cli_view *v);

/* The run's side.  read copies the box lo, n of the field (the slice a
 * viewer asked for) to host, title gives the PNG's title (the
 * snapshot's), both on the run's thread. */
typedef struct cli_view_source {
  int (*read)(void *arg, const size_t lo[3], const size_t n[3], void *host);
  /* the receivers' traces so far as traces.png draws them (*png
   * malloc'd), or NULL when the run has none */
  int (*traces)(void *arg, void **png, size_t *size);
  void (*title)(void *arg, char *b, size_t n);
  void *arg;
} cli_view_source;
/* Between steps: records the step and the simulated time, hands over a
 * frame (and the traces) when a viewer asked for one, and holds the run while it is
 * paused (serving frames, until resume, stop or Ctrl-C).  Returns 1 when
 * a viewer asked to stop (the run then ends as on Ctrl-C). */
int cli_view_tick(cli_view *v, long step, double time,
                  const cli_view_source *src);
/* The run is over: the status says so (state "finished" or "stopped"). */
void cli_view_finish(cli_view *v, const char *state);
/* For `strata view DIR`: serves until Ctrl-C. */
void cli_view_serve_forever(cli_view *v);
/* Stops the server and frees everything; *v = NULL; NULL is harmless. */
void cli_view_destroy(cli_view **v);

/* The page (cli/view_page.html, embedded at build time). */
extern const unsigned char cli_view_page[];
extern const size_t cli_view_page_size;

#endif
