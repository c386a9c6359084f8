/* test_view.c's browser test: headless Chromium opens the page of a
 * running heat case.  A screenshot while the run steps and one while it
 * is paused differ where the field is drawn; the paused one's colourful
 * pixels (the field and its colour bar: the rest of the page is grey) are
 * those of the frame the server sends for the paused step, in number and
 * in mean colour; and the step counter the page shows stands still while
 * the run is paused.  Included by test_view.c. */
#ifndef STRATA_TEST_VIEW_BROWSER_H
#define STRATA_TEST_VIEW_BROWSER_H

/* An 8-bit RGB or RGBA PNG (no interlace) as RGB, or NULL. */
static unsigned char *png_rgb(const unsigned char *b, size_t n, size_t *w,
                              size_t *h) {
  if (n < 33 || memcmp(b, "\x89PNG\r\n\x1a\n", 8)) return NULL;
  size_t W = 0, H = 0, zn = 0;
  int ch = 0;
  unsigned char *z = NULL;
  for (size_t p = 8; p + 12 <= n;) {
    size_t len = (size_t)b[p] << 24 | (size_t)b[p + 1] << 16 |
                 (size_t)b[p + 2] << 8 | b[p + 3];
    const unsigned char *t = b + p + 4, *d = b + p + 8;
    if (p + 12 + len > n) break;
    if (!memcmp(t, "IHDR", 4)) {
      W = (size_t)d[0] << 24 | (size_t)d[1] << 16 | (size_t)d[2] << 8 | d[3];
      H = (size_t)d[4] << 24 | (size_t)d[5] << 16 | (size_t)d[6] << 8 | d[7];
      ch = d[9] == 2 ? 3 : d[9] == 6 ? 4 : 0;
      if (d[8] != 8 || d[12] != 0) ch = 0;
    } else if (!memcmp(t, "IDAT", 4)) {
      unsigned char *nz = realloc(z, zn + len + 1);
      if (!nz) break;
      z = nz;
      memcpy(z + zn, d, len);
      zn += len;
    }
    p += 12 + len;
  }
  if (!ch || !W || !H || W > 8192 || H > 8192) {
    free(z);
    return NULL;
  }
  size_t row = 1 + (size_t)ch * W;
  uLongf rn = (uLongf)(row * H);
  unsigned char *raw = malloc(rn), *out = malloc(3 * W * H),
                *prev = calloc(row, 1);
  if (!raw || !out || !prev || uncompress(raw, &rn, z, (uLong)zn) != Z_OK ||
      rn != row * H) {
    free(z), free(raw), free(out), free(prev);
    return NULL;
  }
  free(z);
  for (size_t y = 0; y < H; y++) {
    unsigned char *r = raw + y * row + 1;
    int f = r[-1];
    for (size_t i = 0; i < row - 1; i++) {
      int a = i >= (size_t)ch ? r[i - ch] : 0, up = prev[i + 1],
          c = i >= (size_t)ch ? prev[i + 1 - ch] : 0;
      int pa = abs(up - c), pb = abs(a - c), pc = abs(a + up - 2 * c);
      int pred = f == 1 ? a : f == 2 ? up : f == 3 ? (a + up) / 2
               : f == 4 ? (pa <= pb && pa <= pc ? a : pb <= pc ? up : c) : 0;
      r[i] = (unsigned char)(r[i] + pred);
    }
    prev[0] = 0;
    memcpy(prev + 1, r, row - 1);
    for (size_t x = 0; x < W; x++)
      memcpy(out + 3 * (y * W + x), r + (size_t)ch * x, 3);
  }
  free(raw);
  free(prev);
  *w = W;
  *h = H;
  return out;
}

/* The colourful pixels (channels more than 40 apart: the colour map's;
 * the page around them is grey): how many, and their mean colour. */
static long colourful(const unsigned char *rgb, size_t w, size_t h,
                      double mean[3]) {
  long k = 0;
  mean[0] = mean[1] = mean[2] = 0;
  for (size_t i = 0; i < w * h; i++) {
    const unsigned char *p = rgb + 3 * i;
    int mx = p[0] > p[1] ? p[0] : p[1], mn = p[0] < p[1] ? p[0] : p[1];
    mx = p[2] > mx ? p[2] : mx;
    mn = p[2] < mn ? p[2] : mn;
    if (mx - mn <= 40) continue;
    for (int c = 0; c < 3; c++) mean[c] += p[c];
    k++;
  }
  for (int c = 0; k && c < 3; c++) mean[c] /= (double)k;
  return k;
}

static const char *chromium_path(void) {
  static const char *const names[] = {"/usr/bin/chromium",
                                      "/usr/bin/chromium-browser",
                                      "/usr/bin/google-chrome"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (access(names[i], X_OK) == 0) return names[i];
  return NULL;
}

/* Chromium, headless, on the page: a screenshot (what = "--screenshot=F")
 * or the page's DOM into F (what = "--dump-dom"), after 2.5 s of the
 * page's time.  The exit code. */
static int chromium(const char *what, const char *file) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && timeout 60 '%s' --headless --no-sandbox --disable-gpu "
           "--hide-scrollbars --no-first-run --disable-dev-shm-usage "
           "--window-size=1000,900 "
           "--user-data-dir='%s/chromium' --virtual-time-budget=2500 %s "
           "'http://127.0.0.1:%d/?token=%s' >'%s' 2>chromium.err",
           dir, chromium_path(), dir, what, port, token,
           strstr(what, "screenshot") ? "chromium.out" : file);
  return exit_code(system(cmd));
}

static long dom_step(const char *file, char *state, size_t sn) {
  char *d = slurp(tp(file), NULL);
  const char *s = d ? strstr(d, "id=\"step\">") : NULL;
  const char *t = d ? strstr(d, "id=\"state\"") : NULL;
  long v = s ? strtol(s + 10, NULL, 10) : -1;
  state[0] = 0;
  if (t && (t = strchr(t, '>'))) snprintf(state, sn, "%.*s",
                                          (int)strcspn(t + 1, "<"), t + 1);
  free(d);
  return v;
}

TEST(browser_shows_the_run) {
  if (!chromium_path())
    SKIP("no chromium (sudo apt-get install chromium; scripts/deps.sh "
         "installs it with STRATA_BROWSER_DEPS=1)");
  CHECK(setup() == 0);
  CHECK(write_file(tp("vb.ini"),
                   "[case]\nname = vb\n[solver]\nkind = heat\n[grid]\n"
                   "n = 120, 90\nprecision = f32\n[run]\nsteps = 2000000000\n"
                   "[heat]\ndiffusion_number = 0.05\n[initial]\n"
                   "kind = gaussian\nwidth = 4\namplitude = 10\n"
                   "[boundary]\nall = neumann\n") == 0);
  pid_t pid = start_viewed("vb.ini", "--out o_browser");
  CHECK(pid > 0);
  /* one screenshot while the run steps, one while it is paused: the
   * second shows the paused step's frame, which the server sends again */
  unsigned char *shot[2] = {NULL, NULL};
  size_t w[2] = {0, 0}, h[2] = {0, 0};
  http_reply r;
  long held = -1;
  for (int i = 0; i < 2; i++) {
    char arg[600], name[16];
    snprintf(name, sizeof name, "shot%d.png", i);
    snprintf(arg, sizeof arg, "--screenshot=%s", tp(name));
    if (i == 1) {
      held = pause_run();
      CHECK(held > 0);
    }
    int rc = chromium(arg, NULL);
    size_t n = 0;
    unsigned char *b = (unsigned char *)slurp(tp(name), &n);
    CHECKF(rc == 0 && b, "chromium exit %d (%s/chromium.err)", rc, dir);
    shot[i] = png_rgb(b, n, &w[i], &h[i]);
    free(b);
    CHECK(shot[i]);
    if (i == 0) {
      sleep_s(1.0);
      continue;
    }
    CHECK(http("GET", "/frame.png", 1, &r) == 0 && r.code == 200);
    const char *fs = strstr(r.head, "X-Strata-Step: ");
    CHECK(fs && atol(fs + 15) == held);
    size_t fw = 0, fh = 0;
    unsigned char *frame = png_rgb(r.body, r.n, &fw, &fh);
    free(r.body);
    CHECK(frame);
    double ms[3], mf[3];
    long ks = colourful(shot[i], w[i], h[i], ms);
    long kf = colourful(frame, fw, fh, mf);
    free(frame);
    /* the frame's pixels, and the page's few coloured words beside them */
    CHECKF(kf > 10000 && ks >= kf && ks < kf + 1500,
           "the screenshot has %ld colourful pixels, the frame %ld", ks, kf);
    for (int c = 0; c < 3; c++)
      CHECKF(fabs(ms[c] - mf[c]) < 6, "channel %d: mean %.1f, the frame's "
             "%.1f", c, ms[c], mf[c]);
  }
  CHECK(w[0] == w[1] && h[0] == h[1]);
  long changed = 0;
  for (size_t i = 0; i < w[0] * h[0]; i++) {
    const unsigned char *a = shot[0] + 3 * i, *b = shot[1] + 3 * i;
    int mx = a[0] > a[1] ? a[0] : a[1];
    mx = a[2] > mx ? a[2] : mx;
    int mn = a[0] < a[1] ? a[0] : a[1];
    mn = a[2] < mn ? a[2] : mn;
    if (mx - mn > 40 && memcmp(a, b, 3)) changed++; /* in the field */
  }
  free(shot[0]);
  free(shot[1]);
  CHECKF(changed > 200, "%ld pixels of the field changed", changed);
  /* paused: the page's step counter stands still */
  char st0[32], st1[32];
  CHECK(chromium("--dump-dom", tp("dom0.html")) == 0);
  long d0 = dom_step("dom0.html", st0, sizeof st0);
  sleep_s(1.0);
  CHECK(chromium("--dump-dom", tp("dom1.html")) == 0);
  long d1 = dom_step("dom1.html", st1, sizeof st1);
  CHECKF(d0 == held && d1 == held && !strcmp(st0, "paused") &&
         !strcmp(st1, "paused"), "paused at %ld: the page showed %ld (%s) "
         "then %ld (%s)", held, d0, st0, d1, st1);
  CHECK(http("POST", "/stop", 1, &r) == 0 && r.code == 200);
  free(r.body);
  int st = 0;
  CHECK(wait_bounded(pid, &st, 30) == pid && exit_code(st) == 130);
  return 0;
}

#endif
