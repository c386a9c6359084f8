#include "reference.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

int ref_points(const strata_stencil *op, ref_point *pts) {
  int n = 0;
  switch (op->kind) {
  case STRATA_STENCIL_STAR:
    pts[n++] = (ref_point){{0, 0, 0}, op->center};
    for (int a = 0; a < op->dims; a++)
      for (int k = 1; k <= op->radius; k++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
          ref_point p = {{0, 0, 0}, op->coef[a][k]};
          p.d[a] = sgn * k;
          pts[n++] = p;
        }
    break;
  case STRATA_STENCIL_DERIVATIVE:
    for (int k = 1; k <= op->radius; k++)
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        ref_point p = {{0, 0, 0}, sgn * op->coef[op->axis][k]};
        p.d[op->axis] = sgn * k;
        pts[n++] = p;
      }
    break;
  case STRATA_STENCIL_BOX:
  case STRATA_STENCIL_BOX_SYMMETRIC: {
    int zr = op->dims == 3 ? 1 : 0;
    for (int dz = -zr; dz <= zr; dz++)
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
          double w;
          if (op->kind == STRATA_STENCIL_BOX)
            w = op->box[(dz + zr) * 9 + (dy + 1) * 3 + (dx + 1)];
          else
            w = op->sym[abs(dx) + abs(dy) + abs(dz)];
          pts[n++] = (ref_point){{dx, dy, dz}, w};
        }
    break;
  }
  }
  return n;
}

size_t ref_count(const strata_field_desc *d, int ghosted) {
  size_t c = 1;
  for (int a = 0; a < 3; a++)
    c *= d->n[a] + (ghosted && a < d->dims ? 2 * (size_t)d->ghost : 0);
  return c;
}

void ref_apply(const strata_stencil *op, const strata_field_desc *d, int g,
               const double *in, double *out, double *scale) {
  ref_point pts[27];
  int np = ref_points(op, pts);
  long n[3] = {(long)d->n[0], (long)d->n[1], (long)d->n[2]};
  long gg[3];
  for (int a = 0; a < 3; a++) gg[a] = a < d->dims ? g : 0;
  long gx = n[0] + 2 * gg[0], gy = n[1] + 2 * gg[1];
  for (long k = 0; k < n[2]; k++)
    for (long j = 0; j < n[1]; j++)
      for (long i = 0; i < n[0]; i++) {
        long double acc = 0, mag = 0;
        for (int q = 0; q < np; q++) {
          long ii = i + pts[q].d[0] + gg[0], jj = j + pts[q].d[1] + gg[1],
               kk = k + pts[q].d[2] + gg[2];
          long double v = in[ii + gx * (jj + gy * kk)];
          acc += (long double)pts[q].w * v;
          mag += fabsl((long double)pts[q].w * v);
        }
        size_t o = (size_t)(i + n[0] * (j + n[1] * k));
        out[o] = (double)acc;
        if (scale) scale[o] = (double)mag;
      }
}

double *ref_read(const strata_field *f, int ghosted) {
  strata_field_desc d;
  strata_field_get_desc(f, &d);
  size_t n = ref_count(&d, ghosted);
  double *out = malloc(n * sizeof(double));
  if (!out) return NULL;
  strata_status s;
  if (d.precision == STRATA_F64) {
    s = ghosted ? strata_field_read_ghosted(f, out) : strata_field_read(f, out);
  } else {
    float *tmp = malloc(n * sizeof(float));
    if (!tmp) {
      free(out);
      return NULL;
    }
    s = ghosted ? strata_field_read_ghosted(f, tmp) : strata_field_read(f, tmp);
    for (size_t i = 0; i < n; i++) out[i] = tmp[i];
    free(tmp);
  }
  if (s != STRATA_OK) {
    fprintf(stderr, "  ref_read: %s: %s\n", strata_status_name(s),
            strata_context_error(strata_field_context(f)));
    free(out);
    return NULL;
  }
  return out;
}

double ref_eps(strata_precision p) {
  return p == STRATA_F32 ? FLT_EPSILON / 2 : DBL_EPSILON / 2;
}

double ref_error_ratio(const double *got, const double *want,
                       const double *scale, size_t n, int npts,
                       strata_precision p, size_t *worst) {
  double tol = (npts + 2) * ref_eps(p);
  double tiny = p == STRATA_F32 ? FLT_MIN : DBL_MIN;
  double r = 0;
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs(got[i] - want[i]) / (tol * scale[i] + tiny);
    if (!(e <= r)) { /* catches NaN */
      r = e;
      w = i;
      if (e != e) break;
    }
  }
  if (worst) *worst = w;
  return r;
}

strata_field *ref_random_field(strata_context *ctx, int dims, size_t nx,
                               size_t ny, size_t nz, int ghost,
                               strata_precision p, uint64_t seed) {
  strata_field_desc d = {dims, {nx, ny, nz}, ghost, p};
  strata_field *f = NULL;
  strata_status s = strata_field_create(ctx, &d, &f);
  if (s == STRATA_OK) s = strata_field_fill_random(f, seed, -1.0, 1.0);
  if (s != STRATA_OK) {
    fprintf(stderr, "  ref_random_field: %s: %s\n", strata_status_name(s),
            strata_context_error(ctx));
    strata_field_destroy(&f);
  }
  return f;
}

static long ref_src(strata_bc_kind k, long t, long n) {
  if (k == STRATA_BC_PERIODIC) return t < 0 ? t + n : t - n;
  return t < 0 ? -t - 1 : 2 * n - 1 - t; /* Neumann mirror */
}

double ref_ghost_value(const strata_field_desc *d, const double *gh,
                       const strata_boundary *bc, long i, long j, long k) {
  long n[3] = {(long)d->n[0], (long)d->n[1], (long)d->n[2]};
  long idx[3] = {i, j, k};
  for (int a = d->dims - 1; a >= 0; a--) {
    long t = idx[a];
    if (t >= 0 && t < n[a]) continue;
    strata_bc_kind kind = bc->kind[2 * a + (t < 0 ? 0 : 1)];
    if (kind == STRATA_BC_DIRICHLET) return bc->value[2 * a + (t < 0 ? 0 : 1)];
    if (kind == STRATA_BC_NONE) break; /* keeps the original value */
    idx[a] = ref_src(kind, t, n[a]);
  }
  long g = d->ghost;
  long gg[3];
  for (int a = 0; a < 3; a++) gg[a] = a < d->dims ? g : 0;
  long gx = n[0] + 2 * gg[0], gy = n[1] + 2 * gg[1];
  return gh[(idx[0] + gg[0]) + gx * ((idx[1] + gg[1]) + gy * (idx[2] + gg[2]))];
}

int ref_check_apply(strata_context *ctx, const strata_stencil *op,
                    const size_t n[3], int ghost, strata_precision p,
                    const strata_boundary *bc, const char *variant,
                    uint64_t seed, double *ratio, double **result) {
  int rc = 1;
  strata_field *in = NULL, *out = NULL;
  double *before = NULL, *gin = NULL, *gout = NULL, *want = NULL, *scale = NULL,
         *got = NULL;
  strata_field_desc d = {op->dims, {n[0], n[1], n[2]}, ghost, p};
  in = ref_random_field(ctx, op->dims, n[0], n[1], n[2], ghost, p, seed);
  strata_field_desc od = d;
  if (!in || strata_field_create(ctx, &od, &out) != STRATA_OK) goto done;
  before = ref_read(in, 1);
  strata_status s = strata_field_fill_ghosts(in, bc);
  if (s != STRATA_OK) {
    fprintf(stderr, "  fill_ghosts: %s: %s\n", strata_status_name(s),
            strata_context_error(ctx));
    goto done;
  }
  gin = ref_read(in, 1);
  if (!before || !gin) goto done;
  /* ghosts must match the plain reference bit for bit */
  {
    long g[3];
    for (int a = 0; a < 3; a++) g[a] = a < d.dims ? ghost : 0;
    long gx = (long)n[0] + 2 * g[0], gy = (long)n[1] + 2 * g[1],
         gz = (long)n[2] + 2 * g[2];
    for (long k = 0; k < gz; k++)
      for (long j = 0; j < gy; j++)
        for (long i = 0; i < gx; i++) {
          long ii = i - g[0], jj = j - g[1], kk = k - g[2];
          int interior = ii >= 0 && ii < (long)n[0] && jj >= 0 &&
                         jj < (long)n[1] && kk >= 0 && kk < (long)n[2];
          size_t o = (size_t)(i + gx * (j + gy * k));
          double want_v = interior ? before[o]
                                   : ref_ghost_value(&d, before, bc, ii, jj, kk);
          if (p == STRATA_F32) want_v = (float)want_v;
          if (gin[o] != want_v) {
            fprintf(stderr, "  ghost (%ld,%ld,%ld) is %.9g, expected %.9g\n",
                    ii, jj, kk, gin[o], want_v);
            goto done;
          }
        }
  }
  if (strata_field_fill(out, NAN) != STRATA_OK) goto done;
  strata_apply_options opt = {variant, {0, 0, 0}};
  s = strata_apply(op, in, out, &opt);
  if (s != STRATA_OK) {
    fprintf(stderr, "  apply: %s: %s\n", strata_status_name(s),
            strata_context_error(ctx));
    goto done;
  }
  gout = ref_read(out, 1);
  size_t cnt = ref_count(&d, 0);
  want = malloc(cnt * sizeof(double));
  scale = malloc(cnt * sizeof(double));
  got = malloc(cnt * sizeof(double));
  if (!gout || !want || !scale || !got) goto done;
  ref_apply(op, &d, ghost, gin, want, scale);
  {
    long g[3];
    for (int a = 0; a < 3; a++) g[a] = a < d.dims ? ghost : 0;
    long gx = (long)n[0] + 2 * g[0], gy = (long)n[1] + 2 * g[1],
         gz = (long)n[2] + 2 * g[2];
    for (long k = 0; k < gz; k++)
      for (long j = 0; j < gy; j++)
        for (long i = 0; i < gx; i++) {
          long ii = i - g[0], jj = j - g[1], kk = k - g[2];
          int interior = ii >= 0 && ii < (long)n[0] && jj >= 0 &&
                         jj < (long)n[1] && kk >= 0 && kk < (long)n[2];
          double v = gout[i + gx * (j + gy * k)];
          if (interior)
            got[ii + (long)n[0] * (jj + (long)n[1] * kk)] = v;
          else if (v == v) {
            fprintf(stderr, "  output ghost (%ld,%ld,%ld) was written (%g)\n",
                    ii, jj, kk, v);
            goto done;
          }
        }
  }
  size_t worst = 0;
  double r = ref_error_ratio(got, want, scale, cnt, ref_points(op, (ref_point[27]){0}), p, &worst);
  if (ratio) *ratio = r;
  if (!(r <= 1.0)) {
    fprintf(stderr, "  point %zu: got %.10g, reference %.10g (error %.3g x "
            "the bound)\n", worst, got[worst], want[worst], r);
    goto done;
  }
  if (result) {
    *result = got;
    got = NULL;
  }
  rc = 0;
done:
  free(before);
  free(gin);
  free(gout);
  free(want);
  free(scale);
  free(got);
  strata_field_destroy(&in);
  strata_field_destroy(&out);
  return rc;
}

/* ---- the operator and boundary sets every engine is checked on ---- */

int ref_operator_set(int dims, ref_named_op *ops) {
  int n = 0;
  unsigned seed = 777u + (unsigned)dims;
  for (int order = 2; order <= 8; order += 2) {
    snprintf(ops[n].name, 64, "laplacian%d", order);
    strata_stencil_laplacian(&ops[n++].op, dims, order, 0.7);
  }
  for (int a = 0; a < dims; a++) {
    snprintf(ops[n].name, 64, "d/d%c order 8", "xyz"[a]);
    strata_stencil_derivative(&ops[n++].op, dims, a, 8, 0.3);
    snprintf(ops[n].name, 64, "d/d%c order 2", "xyz"[a]);
    strata_stencil_derivative(&ops[n++].op, dims, a, 2, 0.3);
    snprintf(ops[n].name, 64, "d/d%c order 6", "xyz"[a]);
    strata_stencil_derivative(&ops[n++].op, dims, a, 6, 0.3);
  }
  double c[4];
  for (int r = 1; r <= 4; r++) {
    for (int k = 0; k < r; k++) c[k] = rand_r(&seed) / (double)RAND_MAX - 0.5;
    snprintf(ops[n].name, 64, "star r=%d random coefficients", r);
    strata_stencil_star(&ops[n++].op, dims, r, 0.9, c);
  }
  for (int r = 1; r <= 3; r += 2) { /* anisotropic: catches swapped axes */
    strata_stencil *s = &ops[n].op;
    snprintf(ops[n++].name, 64, "anisotropic star r=%d", r);
    strata_stencil_laplacian(s, dims, 2 * r, 1.0);
    for (int a = 0; a < dims; a++)
      for (int k = 1; k <= r; k++) s->coef[a][k] *= (a + 1) * 0.5 + 0.1 * k;
  }
  if (dims >= 2) {
    double K[27];
    for (int q = 0; q < 27; q++) K[q] = rand_r(&seed) / (double)RAND_MAX - 0.5;
    snprintf(ops[n].name, 64, "general box %d", dims == 3 ? 27 : 9);
    strata_stencil_box(&ops[n++].op, dims, K);
  }
  if (dims == 2) {
    snprintf(ops[n].name, 64, "9-point laplacian");
    strata_stencil_laplacian9(&ops[n++].op, 0.5);
  }
  if (dims == 3) {
    snprintf(ops[n].name, 64, "symmetric 27 (FD 7-point preset)");
    strata_stencil_box_symmetric(&ops[n++].op, 1.0, -1.0 / 6, 0, 0);
    snprintf(ops[n].name, 64, "symmetric 27 (FE preset)");
    strata_stencil_box_symmetric(&ops[n++].op, 8.0 / 3, 0, -1.0 / 6, -1.0 / 12);
    snprintf(ops[n].name, 64, "symmetric 27 (random)");
    strata_stencil_box_symmetric(&ops[n++].op, 0.3, -0.7, 0.11, 0.05);
  }
  return n;
}

int ref_boundary_set(int dims, strata_boundary *bc, const char **names) {
  int n = 0;
  strata_boundary_uniform(&bc[n], STRATA_BC_DIRICHLET, 0.37);
  bc[n].value[1] = -1.25;
  names[n++] = "dirichlet";
  strata_boundary_uniform(&bc[n], STRATA_BC_NEUMANN, 0);
  names[n++] = "neumann";
  strata_boundary_uniform(&bc[n], STRATA_BC_PERIODIC, 0);
  names[n++] = "periodic";
  strata_boundary_uniform(&bc[n], STRATA_BC_PERIODIC, 0);
  if (dims >= 2) {
    bc[n].kind[2] = STRATA_BC_DIRICHLET;
    bc[n].value[2] = 2.5;
    bc[n].kind[3] = STRATA_BC_NEUMANN;
  }
  if (dims >= 3) {
    bc[n].kind[4] = STRATA_BC_NEUMANN;
    bc[n].kind[5] = STRATA_BC_DIRICHLET;
    bc[n].value[5] = -0.5;
  }
  names[n++] = "mixed";
  strata_boundary_uniform(&bc[n], STRATA_BC_NONE, 0);
  names[n++] = "none";
  return n;
}


uint32_t ref_crc32(const void *p, size_t n) {
  const unsigned char *b = p;
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    c ^= b[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
  }
  return ~c;
}

long ref_dead_pid(void) {
  pid_t p = fork();
  if (p == 0) _exit(0);
  if (p > 0) waitpid(p, NULL, 0);
  return (long)p;
}

/* Compares box (lo, n) read on its own with the same points of all. */
static int box_matches(const strata_field *f, const unsigned char *all,
                       size_t es, const size_t N[3], const size_t lo[3],
                       const size_t n[3], unsigned char *box) {
  strata_context *ctx = strata_field_context(f);
  if (strata_field_read_box(f, lo, n, box) != STRATA_OK) {
    fprintf(stderr, "  read_box: %s\n", strata_context_error(ctx));
    return -1;
  }
  size_t o = 0;
  for (size_t k = 0; k < n[2]; k++)
    for (size_t j = 0; j < n[1]; j++)
      for (size_t i = 0; i < n[0]; i++, o++) {
        size_t g = (lo[0] + i) + N[0] * ((lo[1] + j) + N[1] * (lo[2] + k));
        if (memcmp(box + o * es, all + g * es, es)) {
          fprintf(stderr, "  box (%zu,%zu,%zu)+(%zu,%zu,%zu): point (%zu,%zu,"
                  "%zu) differs\n", lo[0], lo[1], lo[2], n[0], n[1], n[2], i,
                  j, k);
          return -1;
        }
      }
  return 0;
}

int ref_check_boxes(strata_context *ctx, strata_precision p) {
  const size_t N[3] = {33, 17, 9};
  strata_field_desc d = {3, {N[0], N[1], N[2]}, 2, p};
  strata_field *f = NULL;
  if (strata_field_create(ctx, &d, &f) != STRATA_OK ||
      strata_field_fill_random(f, 7, -1, 1) != STRATA_OK) {
    fprintf(stderr, "  %s\n", strata_context_error(ctx));
    strata_field_destroy(&f);
    return -1;
  }
  size_t es = (size_t)p, total = N[0] * N[1] * N[2];
  unsigned char *all = malloc(total * es), *box = malloc(total * es);
  int rc = all && box && strata_field_read(f, all) == STRATA_OK ? 0 : -1;
  for (int a = 0; a < 3 && rc == 0; a++)
    for (size_t idx = 0; idx < N[a] && rc == 0; idx++) {
      size_t lo[3] = {0, 0, 0}, n[3] = {N[0], N[1], N[2]};
      lo[a] = idx;
      n[a] = 1;
      rc = box_matches(f, all, es, N, lo, n, box);
    }
  const size_t sizes[][3] = {{1, 1, 1}, {2, 3, 4}, {33, 1, 9}, {5, 17, 2}};
  for (size_t s = 0; s < 4 && rc == 0; s++)
    for (int c = 0; c < 3 && rc == 0; c++) {
      size_t lo[3];
      for (int a = 0; a < 3; a++)
        lo[a] = c == 0 ? 0 : c == 1 ? N[a] - sizes[s][a] : (N[a] - sizes[s][a]) / 2;
      rc = box_matches(f, all, es, N, lo, sizes[s], box);
    }
  if (rc == 0) { /* past the end along z; empty */
    const size_t lo[3] = {0, 0, 5}, n[3] = {1, 1, 5}, z[3] = {1, 0, 1},
                 o[3] = {0, 0, 0};
    if (strata_field_read_box(f, lo, n, box) != STRATA_EINVAL ||
        strata_field_read_box(f, o, z, box) != STRATA_EINVAL) {
      fprintf(stderr, "  a box outside the field was not refused\n");
      rc = -1;
    }
  }
  free(all);
  free(box);
  strata_field_destroy(&f);
  return rc;
}

unsigned char *ref_slurp(const char *path, size_t *n) {
  *n = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long L = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = L >= 0 ? malloc((size_t)L + 1) : NULL;
  if (b && fread(b, 1, (size_t)L, f) != (size_t)L) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (!b) return NULL;
  b[L] = 0;
  *n = (size_t)L;
  return b;
}

char *ref_h5_text(const char *path) {
  char cmd[2048], out[1024];
  snprintf(out, sizeof out, "%s.txt", path);
  snprintf(cmd, sizeof cmd, "h5dump -m %%.17g '%s' 2>/dev/null | tail -n +2 "
           ">'%s'", path, out);
  size_t n = 0;
  char *t = system(cmd) == 0 ? (char *)ref_slurp(out, &n) : NULL;
  remove(out);
  if (t && n == 0) {
    free(t);
    t = NULL;
  }
  return t;
}

/* ---- PNG ---------------------------------------------------------------- */

char ref_png_title[512];

static uint32_t png_be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

unsigned char *ref_png_decode(const char *path, size_t *w, size_t *h) {
  size_t len;
  unsigned char *b = ref_slurp(path, &len), *rgb = NULL, *z = NULL;
  size_t zn = 0;
  ref_png_title[0] = 0;
  if (!b) return NULL;
  if (len < 8 || memcmp(b, "\x89PNG\r\n\x1a\n", 8) != 0) goto bad;
  size_t pos = 8;
  int seen_end = 0;
  while (pos + 12 <= len && !seen_end) {
    uint32_t n = png_be32(b + pos);
    if (pos + 12 + n > len) goto bad;
    const unsigned char *type = b + pos + 4, *data = b + pos + 8;
    if (ref_crc32(type, 4 + n) != png_be32(data + n)) {
      fprintf(stderr, "  CRC mismatch in chunk %.4s\n", type);
      goto bad;
    }
    if (memcmp(type, "IHDR", 4) == 0) {
      if (n != 13 || data[8] != 8 || data[9] != 2 || data[12] != 0) goto bad;
      *w = png_be32(data);
      *h = png_be32(data + 4);
    } else if (memcmp(type, "IDAT", 4) == 0) {
      z = realloc(z, zn + n);
      memcpy(z + zn, data, n);
      zn += n;
    } else if (memcmp(type, "iTXt", 4) == 0 && n >= 9 &&
               memcmp(data, "Title\0\0\0\0", 9) == 0) {
      snprintf(ref_png_title, sizeof ref_png_title, "%.*s", (int)(n - 9), data + 9);
    } else if (memcmp(type, "IEND", 4) == 0) {
      seen_end = 1;
    }
    pos += 12 + n;
  }
  if (!seen_end || pos != len || !z || zn < 6) goto bad;
  size_t row = 1 + 3 * *w, raw = row * *h;
  unsigned char *r = malloc(raw + 1);
  uLongf got = (uLongf)raw + 1; /* one more: a longer stream is an error */
  int zs = uncompress(r, &got, z, (uLong)zn);
  if (zs != Z_OK || got != raw) {
    fprintf(stderr, "  zlib stream: %d, %lu of %zu bytes\n", zs,
            (unsigned long)got, raw);
    goto bad_r;
  }
  /* undo the filters in place, row by row (bpp = 3) */
  for (size_t y = 0; y < *h; y++) {
    unsigned char *c = r + y * row + 1;
    const unsigned char *u = y ? r + (y - 1) * row + 1 : NULL;
    unsigned f = c[-1];
    if (f > 4) goto bad_r;
    for (size_t i = 0; i < 3 * *w; i++) {
      int a = i >= 3 ? c[i - 3] : 0, up = u ? u[i] : 0,
          ul = u && i >= 3 ? u[i - 3] : 0, p = a + up - ul;
      int pa = abs(p - a), pb = abs(p - up), pc = abs(p - ul);
      int pred = f == 0   ? 0
                 : f == 1 ? a
                 : f == 2 ? up
                 : f == 3 ? (a + up) / 2
                 : pa <= pb && pa <= pc ? a
                 : pb <= pc             ? up
                                        : ul;
      c[i] = (unsigned char)(c[i] + pred);
    }
  }
  rgb = malloc(3 * *w * *h);
  for (size_t y = 0; y < *h; y++) {
    memcpy(rgb + 3 * *w * y, r + y * row + 1, 3 * *w);
  }
  free(r);
  free(z);
  free(b);
  return rgb;
bad_r:
  free(r);
bad:
  fprintf(stderr, "  %s: not a valid PNG as written by strata\n", path);
  free(rgb);
  free(z);
  free(b);
  return NULL;
}

double ref_hash_point(long i, long j, long k, void *unused) {
  (void)unused;
  unsigned long long x = (unsigned long long)(i * 73856093L ^ j * 19349663L ^
                                              k * 83492791L);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 29;
  return (double)(x % 2000003ull) / 1000001.5 - 1.0;
}

int ref_dist_start(strata_dist **d, int *skip, char *why, size_t why_size) {
  *skip = 0;
  if (!strata_dist_available(why, why_size)) {
    *skip = 1;
    return 0;
  }
  strata_context_options co;
  strata_context_options_init(&co);
  co.backend = ref_test_backend();
  co.autotune = 0; /* the fixed variant table, as the ranks use */
  co.tune_cache = "";
  co.errbuf = why;
  co.errbuf_size = why_size;
  strata_dist_options o;
  strata_dist_options_init(&o);
  strata_status s = strata_dist_create(&co, &o, d);
  if (s == STRATA_ENOBACKEND || s == STRATA_ENOTSUP) {
    *skip = 1;
    return 0;
  }
  if (s != STRATA_OK) {
    fprintf(stderr, "strata_dist_create: %s: %s\n", strata_status_name(s),
            why);
    strata_dist_finalize();
    return 1;
  }
  if (strata_dist_rank(*d) != 0 && !freopen("/dev/null", "w", stdout))
    return 1;
  return 0;
}

strata_backend ref_test_backend(void) {
  const char *b = getenv("STRATA_TEST_BACKEND");
  strata_backend k = STRATA_BACKEND_CPU;
  if (b) strata_backend_parse(b, &k);
  return k;
}
