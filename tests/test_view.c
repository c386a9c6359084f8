/* End-to-end tests of the live view (strata run --view, strata view DIR):
 * over HTTP, the token, refused paths, bodies and oversized requests,
 * many connections, pause, resume and stop; the frame of step N is the
 * library's PNG of step N (the snapshot's); a run with --view that no one
 * watches writes the bytes of one without; and in headless Chromium the
 * page shows the field, changes as the run steps and stops counting when
 * the run is paused.  Skipped without libmicrohttpd (after checking that
 * --view says how to get it); the browser test is skipped without
 * chromium. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <zlib.h>

#include "reference.h"
#include "runner.h"

#define CLI_TEST_NAME "test_view"
#include "cli_test_util.h"

static const char *heat2d =
    "[case]\nname = v2\n[solver]\nkind = heat\n[grid]\nn = 96, 80\n"
    "precision = f32\n[run]\nsteps = 2000000000\n[heat]\n"
    "diffusion_number = 0.2\n[initial]\nkind = gaussian\nwidth = 6\n"
    "amplitude = 100\n[boundary]\nall = dirichlet\nvalue = 0\n"
    "[output]\nevery = 0\nformats = npy\ncolormap = inferno\n";

#ifdef STRATA_HAVE_MHD

/* ---- HTTP, by hand: requests exactly as written ------------------------ */

static int port;
static char token[64];

static int connect_local(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return -1;
  struct timeval tv = {10, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
    close(s);
    return -1;
  }
  return s;
}

typedef struct {
  int code;          /* 0: no status line came back */
  char head[4096];
  unsigned char *body;
  size_t n;
} http_reply;

/* Sends raw (the whole request) and reads the reply until the server
 * closes the connection. */
static int http_raw(const char *raw, size_t rn, http_reply *r) {
  memset(r, 0, sizeof *r);
  int s = connect_local();
  if (s < 0) return -1;
  for (size_t o = 0; o < rn;) {
    ssize_t w = send(s, raw + o, rn - o, MSG_NOSIGNAL);
    if (w <= 0) break; /* the server may close early: read its answer */
    o += (size_t)w;
  }
  size_t cap = 1 << 16, n = 0;
  unsigned char *b = malloc(cap);
  for (ssize_t k; b && (k = recv(s, b + n, cap - n, 0)) > 0;) {
    n += (size_t)k;
    if (n == cap) {
      unsigned char *nb = realloc(b, cap *= 2);
      if (!nb) break;
      b = nb;
    }
  }
  close(s);
  if (!b) return -1;
  unsigned char *e = NULL;
  for (size_t i = 0; i + 3 < n; i++)
    if (!memcmp(b + i, "\r\n\r\n", 4)) {
      e = b + i;
      break;
    }
  if (n > 12 && !memcmp(b, "HTTP/1.", 7)) r->code = atoi((char *)b + 9);
  if (e) {
    size_t hn = (size_t)(e - b);
    if (hn >= sizeof r->head) hn = sizeof r->head - 1;
    memcpy(r->head, b, hn);
    r->n = n - (size_t)(e + 4 - b);
    memmove(b, e + 4, r->n);
  }
  r->body = b;
  b[r->n < cap ? r->n : cap - 1] = 0;
  return 0;
}

/* METHOD path (with the token appended when tok) */
static int http(const char *method, const char *path, int tok,
                http_reply *r) {
  char req[2048];
  const char *sep = strchr(path, '?') ? "&" : "?";
  int k = snprintf(req, sizeof req,
                   "%s %s%s%s%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Connection: close\r\n%s\r\n",
                   method, path, tok ? sep : "", tok ? "token=" : "",
                   tok ? token : "",
                   !strcmp(method, "POST") ? "Content-Length: 0\r\n" : "");
  return http_raw(req, (size_t)k, r);
}

static long json_long(const char *j, const char *key) {
  char k[64];
  snprintf(k, sizeof k, "\"%s\": ", key);
  const char *p = j ? strstr(j, k) : NULL;
  return p ? strtol(p + strlen(k), NULL, 10) : -999;
}

static long status_step(void) {
  http_reply r;
  if (http("GET", "/status", 1, &r) || r.code != 200) {
    free(r.body);
    return -1;
  }
  long s = json_long((char *)r.body, "step");
  free(r.body);
  return s;
}

/* POST /pause, then the status until the run holds: the pause answers
 * within its own wait, but a run whose current steps take longer (a
 * loaded machine stretches them) holds later.  The held step, or -1. */
static long pause_run(void) {
  http_reply r;
  if (http("POST", "/pause", 1, &r) || r.code != 200) {
    free(r.body);
    return -1;
  }
  free(r.body);
  for (int i = 0; i < 600; i++, sleep_s(0.1)) {
    if (http("GET", "/status", 1, &r) || r.code != 200) {
      free(r.body);
      return -1;
    }
    int held = strstr((char *)r.body, "\"state\": \"paused\"") != NULL;
    long s = json_long((char *)r.body, "step");
    free(r.body);
    if (held) return s;
  }
  return -1;
}

/* the runs in the background: a test that failed leaves its run to the
 * next start_viewed and to cleanup, which end it */
static pid_t viewed[16];
static int nviewed;

static void end_viewed(void) {
  for (int i = 0; i < nviewed; i++)
    if (waitpid(viewed[i], NULL, WNOHANG) == 0) {
      kill(viewed[i], SIGKILL);
      waitpid(viewed[i], NULL, 0);
    }
  nviewed = 0;
}

/* Starts `strata run CASE ARGS --view 0` in the background and reads the
 * port and the token from the address it prints: the child, or -1. */
static pid_t start_viewed(const char *ini, const char *extra) {
  char *argv[24] = {"strata", "run", (char *)ini, "--no-ceiling", "--quiet",
                    "--view", "0"};
  int n = 7;
  if (!strcmp(ini, "view")) { /* strata view EXTRA */
    argv[1] = "view";
    n = 2;
  }
  static char buf[1024];
  snprintf(buf, sizeof buf, "%s", extra ? extra : "");
  for (char *t = strtok(buf, " "); t && n < 22; t = strtok(NULL, " "))
    argv[n++] = t;
  argv[n] = NULL;
  end_viewed();
  remove(tp("err.txt")); /* an earlier run's address is not this one's */
  pid_t pid = spawn_in_dir(STRATA_CLI_PATH, argv, 0);
  if (pid < 0) return -1;
  viewed[nviewed++] = pid;
  for (int i = 0; i < 200; i++) {
    char *e = err_text();
    const char *u = e ? strstr(e, "http://127.0.0.1:") : NULL;
    const char *t = u ? strstr(u, "token=") : NULL;
    if (t && strlen(t) >= 6 + 32) {
      port = atoi(u + strlen("http://127.0.0.1:"));
      snprintf(token, sizeof token, "%.32s", t + 6);
      free(e);
      return pid;
    }
    free(e);
    sleep_s(0.05);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return -1;
}

TEST(http_token_paths_and_sizes) {
  CHECK(setup() == 0);
  CHECK(write_file(tp("v2.ini"), heat2d) == 0);
  pid_t pid = start_viewed("v2.ini", "--out o_http");
  CHECK(pid > 0);
  http_reply r;
  /* no token, a wrong one, one in the header */
  CHECK(http("GET", "/status", 0, &r) == 0 && r.code == 403);
  free(r.body);
  CHECK(http("GET", "/", 0, &r) == 0 && r.code == 403);
  free(r.body);
  CHECK(http("GET", "/frame.png?token=0123456789abcdef0123456789abcdef", 0,
             &r) == 0 && r.code == 403);
  free(r.body);
  char req[512];
  int k = snprintf(req, sizeof req, "GET /status HTTP/1.1\r\nHost: x\r\n"
                   "X-Strata-Token: %s\r\nConnection: close\r\n\r\n", token);
  CHECK(http_raw(req, (size_t)k, &r) == 0 && r.code == 200 &&
        strstr((char *)r.body, "\"state\": \"running\""));
  free(r.body);
  /* the page, with the token */
  CHECK(http("GET", "/", 1, &r) == 0 && r.code == 200 &&
        strstr((char *)r.body, "<html") && strstr(r.head, "text/html"));
  free(r.body);
  /* no path reaches the file system */
  const char *bad[] = {"/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                       "/..%2f..%2fetc%2fpasswd", "/view_page.html",
                       "//etc/passwd", "/status/../../etc/passwd"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK(http("GET", bad[i], 1, &r) == 0);
    CHECKF(r.code == 404 && !strstr((char *)r.body, "root:"), "%s: %d",
           bad[i], r.code);
    free(r.body);
  }
  /* a body, an oversized request line and header, a wrong method */
  k = snprintf(req, sizeof req, "POST /pause?token=%s HTTP/1.1\r\nHost: x\r\n"
               "Content-Length: 100000000\r\nConnection: close\r\n\r\n",
               token);
  CHECK(http_raw(req, (size_t)k, &r) == 0 && r.code == 413);
  free(r.body);
  size_t big = 200000;
  char *huge = malloc(big + 256);
  CHECK(huge);
  k = snprintf(huge, 256, "GET /status?token=%s&x=", token);
  memset(huge + k, 'a', big);
  const char *tail = " HTTP/1.1\r\nHost: x\r\n\r\n";
  memcpy(huge + k + big, tail, strlen(tail));
  CHECK(http_raw(huge, (size_t)k + big + strlen(tail), &r) == 0);
  CHECKF(r.code == 0 || (r.code >= 400 && r.code < 500), "%d", r.code);
  free(r.body);
  k = snprintf(huge, 256, "GET /status?token=%s HTTP/1.1\r\nX-Big: ", token);
  memset(huge + k, 'b', big);
  memcpy(huge + k + big, "\r\n\r\n", 5);
  CHECK(http_raw(huge, (size_t)k + big + 4, &r) == 0);
  CHECKF(r.code == 0 || (r.code >= 400 && r.code < 500), "%d", r.code);
  free(r.body);
  free(huge);
  CHECK(http("GET", "/stop", 1, &r) == 0 && r.code == 405);
  free(r.body);
  CHECK(http("GET", "/frame.png?axis=7", 1, &r) == 0 && r.code == 400);
  free(r.body);
  /* many connections, held open: the run steps on, the server recovers */
  long s0 = status_step();
  CHECK(s0 >= 0);
  int socks[300], ns = 0;
  for (int i = 0; i < 300; i++)
    if ((socks[ns] = connect_local()) >= 0) ns++;
  sleep_s(1.0);
  for (int i = 0; i < ns; i++) close(socks[i]);
  long s1 = -1;
  for (int i = 0; i < 100 && s1 <= s0; i++, sleep_s(0.1)) s1 = status_step();
  CHECKF(s1 > s0, "step %ld then %ld", s0, s1);
  /* pause holds the step, resume goes on, stop ends as Ctrl-C does */
  long p0 = pause_run();
  sleep_s(0.6);
  long p1 = status_step();
  CHECKF(p0 > 0 && p0 == p1, "paused at %ld, then %ld", p0, p1);
  CHECK(http("GET", "/frame.png", 1, &r) == 0 && r.code == 200 &&
        !memcmp(r.body, "\x89PNG", 4));
  free(r.body);
  CHECK(http("POST", "/resume", 1, &r) == 0 && r.code == 200);
  free(r.body);
  long p2 = p1;
  for (int i = 0; i < 100 && p2 <= p1; i++, sleep_s(0.1)) p2 = status_step();
  CHECKF(p2 > p1, "resumed at %ld, then %ld", p1, p2);
  CHECK(http("POST", "/stop", 1, &r) == 0 && r.code == 200);
  free(r.body);
  int st = 0;
  CHECK(wait_bounded(pid, &st, 30) == pid);
  CHECKF(exit_code(st) == 130, "exit %d", exit_code(st));
  CHECK(exists(tp("o_http/interrupted.npy")) &&
        exists(tp("o_http/checkpoint.stck")));
  char *e = err_text();
  CHECK(e && strstr(e, "watch the run at http://127.0.0.1:"));
  free(e);
  return 0;
}

/* The live frame, asked for until it is one of a step that wrote a
 * snapshot (a multiple of every), into *r (r->body NULL when none came):
 * its step, or -1. */
static long frame_of_a_snapshot(long every, http_reply *r) {
  long step = -1;
  r->body = NULL;
  for (int i = 0; i < 40; i++) {
    if (http("GET", "/frame.png", 1, r) || r->code != 200) {
      free(r->body);
      r->body = NULL;
      return -1;
    }
    const char *h = strstr(r->head, "X-Strata-Step: ");
    step = h ? atol(h + 15) : -1;
    if (step > 0 && step % every == 0) return step;
    free(r->body);
    r->body = NULL;
    sleep_s(0.05);
  }
  return step;
}

TEST(frame_is_the_snapshot_png) {
  /* a 3D case: the frame of step S (a multiple of every) is, byte for
   * byte, the snapshot PNG the library wrote at S, of the case's slice */
  CHECK(setup() == 0);
  CHECK(write_file(tp("v3.ini"),
                   "[case]\nname = v3\n[solver]\nkind = heat\n[grid]\n"
                   "n = 40, 36, 32\nprecision = f64\n[run]\nsteps = 200000000\n"
                   "[heat]\ndiffusion_number = 0.1\n[initial]\nkind = gaussian\n"
                   "width = 5\namplitude = 50\n[boundary]\nall = dirichlet\n"
                   "value = 0\n[output]\nevery = 40\nformats = png\n"
                   "slice_axis = y\nslice_index = 11\n") == 0);
  pid_t pid = start_viewed("v3.ini", "--out o_frame");
  CHECK(pid > 0);
  http_reply r;
  long step = frame_of_a_snapshot(40, &r);
  CHECKF(r.body && step > 0 && step % 40 == 0, "step %ld", step);
  char name[64];
  snprintf(name, sizeof name, "o_frame/snap_%06ld.png", step);
  wait_for_path(name, 10, 0.3);
  size_t fn = 0;
  char *file = slurp(tp(name), &fn);
  CHECKF(file && fn == r.n && !memcmp(file, r.body, fn),
         "%s: %zu bytes, the frame %zu", name, fn, r.n);
  free(file);
  free(r.body);
  /* another slice of the same frame is a PNG too; the run stops cleanly */
  CHECK(http("GET", "/frame.png?axis=0&index=3", 1, &r) == 0 &&
        r.code == 200 && !memcmp(r.body, "\x89PNG", 4));
  free(r.body);
  kill(pid, SIGINT);
  int st = 0;
  CHECK(wait_bounded(pid, &st, 30) == pid && exit_code(st) == 130);
  return 0;
}

/* The rows of the PNG body with a black run of 100 pixels or more (the
 * plot's frame, top and bottom, and lines across it); -1 when not a PNG. */
static int black_rows(const void *png, size_t n) {
  FILE *f = fopen(tp("frame.png"), "wb");
  if (!f || fwrite(png, 1, n, f) != n || fclose(f) != 0) return -1;
  size_t w, h;
  unsigned char *rgb = ref_png_decode(tp("frame.png"), &w, &h);
  if (!rgb) return -1;
  int rows = 0;
  for (size_t y = 0; y < h; y++) {
    size_t run = 0, best = 0;
    for (size_t x = 0; x < w; x++) {
      run = memcmp(rgb + 3 * (y * w + x), "\0\0\0", 3) ? 0 : run + 1;
      if (run > best) best = run;
    }
    rows += best >= 100;
  }
  free(rgb);
  return rows;
}

TEST(frame_draws_the_interfaces) {
  /* a layered wave case: the live frame is the snapshot PNG, the layers'
   * interface drawn across it (a third long black row besides the frame's
   * two), in the case's slice and in another; and in strata view DIR's */
  CHECK(setup() == 0);
  CHECK(write_file(tp("vl.ini"),
                   "[case]\nname = vl\n[solver]\nkind = wave\n[grid]\n"
                   "n = 40, 24, 32\nspacing = 10\n[run]\nsteps = 200000\n"
                   "[wave]\norder = 4\nlayer_tops = 0, 155\n"
                   "layer_velocities = 1500, 2500\n[boundary]\nall = sponge\n"
                   "width = 6\n[source]\nposition = 200, 120, 100\n"
                   "[output]\nevery = 20\nformats = npy, png\n") == 0);
  pid_t pid = start_viewed("vl.ini", "--out o_layers");
  CHECK(pid > 0);
  /* the frames first, the run stopped, then the checks */
  http_reply r = {0}, r0 = {0};
  long step = frame_of_a_snapshot(20, &r);
  int got0 = http("GET", "/frame.png?axis=0&index=3", 1, &r0) == 0 &&
             r0.code == 200;
  kill(pid, SIGINT);
  int st = 0;
  CHECK(wait_bounded(pid, &st, 30) == pid && exit_code(st) == 130);
  CHECKF(r.body && step > 0 && step % 20 == 0, "step %ld", step);
  char name[64];
  snprintf(name, sizeof name, "o_layers/snap_%06ld.png", step);
  size_t fn = 0;
  char *file = slurp(tp(name), &fn);
  CHECKF(file && fn == r.n && !memcmp(file, r.body, fn),
         "%s: %zu bytes, the frame %zu", name, fn, r.n);
  free(file);
  int rows = black_rows(r.body, r.n);
  CHECKF(rows == 3, "%d long black rows", rows);
  free(r.body);
  CHECK(got0);
  rows = black_rows(r0.body, r0.n);
  CHECKF(rows == 3, "axis 0: %d long black rows", rows);
  free(r0.body);
  /* strata view DIR on the finished run draws them too (the case's model
   * read again) */
  pid = start_viewed("view", "o_layers --listen 127.0.0.1:0");
  CHECK(pid > 0);
  int got = http("GET", "/frame.png?snap=1", 1, &r) == 0 && r.code == 200;
  kill(pid, SIGINT);
  CHECK(wait_bounded(pid, &st, 20) == pid && exit_code(st) == 0);
  CHECK(got);
  rows = black_rows(r.body, r.n);
  CHECKF(rows == 3, "strata view: %d long black rows", rows);
  free(r.body);
  return 0;
}

TEST(live_traces_of_a_wave_run) {
  /* a run with receivers: the status says so, and the gather so far is a
   * PNG that grows as the run steps */
  CHECK(setup() == 0);
  CHECK(write_file(tp("vw.ini"),
                   "[case]\nname = vw\n[solver]\nkind = wave\n[grid]\n"
                   "n = 48, 40, 40\nspacing = 10\nprecision = f32\n[run]\n"
                   "steps = 200000\n[wave]\norder = 4\nvelocity = 2000\n"
                   "[boundary]\nall = sponge\nwidth = 8\n[source]\n"
                   "position = 200, 200, 150\nfrequency = 10\n[receivers]\n"
                   "start = 100, 200, 100\nend = 370, 200, 100\ncount = 10\n"
                   "[output]\nevery = 0\nformats = npy\n") == 0);
  pid_t pid = start_viewed("vw.ini", "--out o_wave");
  CHECK(pid > 0);
  http_reply r;
  CHECK(http("GET", "/status", 1, &r) == 0 && r.code == 200 &&
        strstr((char *)r.body, "\"traces\": true"));
  free(r.body);
  sleep_s(0.5);
  http_reply g[2];
  for (int i = 0; i < 2; i++) {
    CHECK(http("GET", "/traces.png", 1, &g[i]) == 0);
    CHECKF(g[i].code == 200 && g[i].n > 33 &&
           !memcmp(g[i].body, "\x89PNG", 4), "%d: %s", g[i].code,
           (char *)g[i].body);
    sleep_s(1.0);
  }
  CHECK(g[0].n != g[1].n || memcmp(g[0].body, g[1].body, g[0].n));
  free(g[0].body);
  free(g[1].body);
  kill(pid, SIGINT);
  int st = 0;
  CHECK(wait_bounded(pid, &st, 30) == pid && exit_code(st) == 130);
  CHECK(exists(tp("o_wave/traces.png")));
  return 0;
}

/* Every file of folder a is in b with the same bytes (summary.json, whose
 * timings differ, left out). */
static int same_files(const char *a, const char *b) {
  DIR *d = opendir(tp(a));
  if (!d) return -1;
  struct dirent *e;
  int n = 0, bad = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "summary.json")) continue;
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/%s", a, e->d_name);
    snprintf(pb, sizeof pb, "%s/%s", b, e->d_name);
    size_t na = 0, nb = 0;
    char *x = slurp(tp(pa), &na), *y = slurp(tp(pb), &nb);
    if (!x || !y || na != nb || memcmp(x, y, na)) {
      fprintf(stderr, "  %s differs\n", e->d_name);
      bad = 1;
    }
    free(x);
    free(y);
    n++;
  }
  closedir(d);
  return bad ? -1 : n;
}

TEST(unwatched_view_changes_nothing) {
  CHECK(setup() == 0);
  CHECK(write_file(tp("v4.ini"),
                   "[case]\nname = v4\n[solver]\nkind = heat\n[grid]\n"
                   "n = 48, 40\n[run]\nsteps = 300\n[heat]\n"
                   "diffusion_number = 0.2\n[initial]\nkind = gaussian\n"
                   "width = 5\namplitude = 10\n[boundary]\nall = neumann\n"
                   "[output]\nevery = 100\nformats = npy, png, vti\n"
                   "colormap = gray\nrange = 0, 3\n") == 0);
  CHECK(strata("run v4.ini --no-ceiling --quiet --out o_plain") == 0);
  CHECK(strata("run v4.ini --no-ceiling --quiet --out o_viewed "
               "--view 127.0.0.1:0") == 0);
  char *e = err_text();
  CHECK(e && strstr(e, "watch the run at"));
  free(e);
  CHECK(same_files("o_plain", "o_viewed") >= 12);
  CHECK(same_files("o_viewed", "o_plain") >= 12);
  /* a wave run with receivers (its traces looked at when the view
   * starts): the same snapshots and traces (vw.ini: the test above) */
  CHECK(strata("run vw.ini --no-ceiling --quiet --set run.steps=60 "
               "--set output.every=30 --out o_wplain") == 0);
  CHECK(strata("run vw.ini --no-ceiling --quiet --set run.steps=60 "
               "--set output.every=30 --out o_wviewed --view 0") == 0);
  CHECK(same_files("o_wplain", "o_wviewed") >= 6);
  CHECK(exists(tp("o_wviewed/traces.sgy")));
  /* the case key does the same; a bad address is a usage error */
  CHECK(strata("run v4.ini --no-ceiling --quiet --out o_key "
               "--set run.view=localhost:0") == 0);
  CHECK(same_files("o_plain", "o_key") >= 12);
  CHECK(strata("run v4.ini --quiet --view 1.2.3:80") == 2);
  e = err_text();
  CHECK(e && strstr(e, "--view: '1.2.3:80': the address"));
  free(e);
  CHECK(strata("run v4.ini --quiet --view 99999") == 2);
  return 0;
}

TEST(view_dir_serves_the_snapshots) {
  /* strata view DIR on the folder the test above wrote: its snapshots by
   * number, each drawn as the run drew it; nothing to pause */
  CHECK(setup() == 0);
  CHECK(exists(tp("o_plain/snap_000100.npy")));
  pid_t pid = start_viewed("view", "o_plain --listen 127.0.0.1:0");
  CHECK(pid > 0);
  http_reply r;
  CHECK(http("GET", "/status", 1, &r) == 0 && r.code == 200);
  CHECKF(strstr((char *)r.body, "\"snapshots\": [0, 100, 200, 300, 300]") &&
         strstr((char *)r.body, "\"mode\": \"dir\"") &&
         strstr((char *)r.body, "\"case\": \"v4\""), "%s", (char *)r.body);
  free(r.body);
  for (int k = 0; k < 3; k++) {
    char q[64], name[64];
    snprintf(q, sizeof q, "/frame.png?snap=%d", k);
    snprintf(name, sizeof name, "o_plain/snap_%06d.png", 100 * k);
    CHECK(http("GET", q, 1, &r) == 0 && r.code == 200);
    size_t fn = 0;
    char *file = slurp(tp(name), &fn);
    CHECKF(file && fn == r.n && !memcmp(file, r.body, fn), "%s", name);
    free(file);
    free(r.body);
  }
  CHECK(http("GET", "/frame.png?snap=5", 1, &r) == 0 && r.code == 400);
  free(r.body);
  CHECK(http("POST", "/pause", 1, &r) == 0 && r.code == 409);
  free(r.body);
  CHECK(http("GET", "/status", 0, &r) == 0 && r.code == 403);
  free(r.body);
  kill(pid, SIGINT);
  int st = 0;
  CHECK(wait_bounded(pid, &st, 20) == pid && exit_code(st) == 0);
  CHECK(strata("view no_such_dir") == 1);
  return 0;
}

#else

TEST(view_says_how_to_get_it) {
  CHECK(setup() == 0);
  CHECK(write_file(tp("v2.ini"), heat2d) == 0);
  CHECK(strata("run v2.ini --quiet --view 0") == 1);
  char *e = err_text();
  CHECK(e && strstr(e, "libmicrohttpd-dev"));
  free(e);
  SKIP("no libmicrohttpd in this build: the HTTP tests need it");
}

#endif

#ifdef STRATA_HAVE_MHD
#include "test_view_browser.h"
#endif

TEST(cleanup) {
#ifdef STRATA_HAVE_MHD
  end_viewed();
#endif
  rm_rf(dir);
  return 0;
}

#ifdef STRATA_HAVE_MHD
RUN_TESTS(http_token_paths_and_sizes, frame_is_the_snapshot_png,
          frame_draws_the_interfaces, live_traces_of_a_wave_run, unwatched_view_changes_nothing,
          view_dir_serves_the_snapshots,
          browser_shows_the_run, cleanup)
#else
RUN_TESTS(view_says_how_to_get_it, cleanup)
#endif
