/* Models from SEG-Y files (rev 0 to 2, as segyio and most tools write
 * them): the 3200-byte textual header, the 400-byte binary header (sample
 * format, samples per trace, extended textual headers), then traces of a
 * 240-byte header and their samples, all of one length.  Each trace is a
 * column of the model along z; its place along x (and y) comes from the
 * file order or from its inline and crossline numbers. */
#define _POSIX_C_SOURCE 200809L
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

static unsigned get16(const unsigned char *p, int big) {
  return big ? (unsigned)p[0] << 8 | p[1] : (unsigned)p[1] << 8 | p[0];
}
static int32_t get32(const unsigned char *p, int big) {
  uint32_t u = big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                         (uint32_t)p[2] << 8 | p[3]
                   : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
                         (uint32_t)p[1] << 8 | p[0];
  return (int32_t)u;
}

static int known_code(unsigned c) {
  return c == STRATA__MS_IBM || c == STRATA__MS_I32 || c == STRATA__MS_I16 ||
         c == STRATA__MS_F32 || c == STRATA__MS_I8;
}

typedef struct segy_layout {
  int big, code;
  size_t ns, es, ntr, trace_bytes;
  long data0; /* offset of the first trace */
} segy_layout;

/* The binary header and the file's size give the layout. */
static strata_status layout(strata_context *ctx, const char *path, FILE *fp,
                            size_t size, segy_layout *L) {
  unsigned char b[400];
  if (size < 3600)
    return strata__fail_arg(ctx, STRATA_EFORMAT, "path", path,
                            "model '%s' (%zu bytes) is not SEG-Y: shorter "
                            "than its 3600 bytes of headers", path, size);
  strata_status s;
  if (fseek(fp, 3200, SEEK_SET) != 0 ||
      (s = strata__model_fread(ctx, fp, path, b, 400)) != STRATA_OK)
    return strata__fail_arg(ctx, STRATA_EIO, "path", path,
                            "model '%s': cannot read the binary header", path);
  /* the format code (bytes 3225-3226) tells the byte order */
  unsigned cb = get16(b + 24, 1), cl = get16(b + 24, 0);
  if (known_code(cb))
    L->big = 1;
  else if (known_code(cl))
    L->big = 0;
  else
    return strata__fail_arg(ctx, STRATA_EFORMAT, "path", path,
                            "model '%s': SEG-Y sample format code %u is not "
                            "supported (1 IBM float, 2 int32, 3 int16, 5 "
                            "IEEE float, 8 int8)", path, cb);
  L->code = (int)(L->big ? cb : cl);
  L->es = strata__model_code_size(L->code);
  int ext = (int16_t)get16(b + 304, L->big);
  if (ext < 0)
    return strata__fail_arg(ctx, STRATA_EFORMAT, "path", path,
                            "model '%s': a variable number of extended "
                            "textual headers (%d) is not supported", path,
                            ext);
  L->data0 = 3600 + 3200L * ext;
  L->ns = get16(b + 20, L->big);
  if (L->ns == 0 && size >= (size_t)L->data0 + 240) { /* the first trace's */
    unsigned char t[240];
    if (fseek(fp, L->data0, SEEK_SET) == 0 &&
        strata__model_fread(ctx, fp, path, t, 240) == STRATA_OK)
      L->ns = get16(t + 114, L->big);
  }
  if (L->ns == 0)
    return strata__fail_arg(ctx, STRATA_EFORMAT, "path", path,
                            "model '%s': SEG-Y traces of 0 samples", path);
  L->trace_bytes = 240 + L->ns * L->es;
  size_t body = size > (size_t)L->data0 ? size - (size_t)L->data0 : 0;
  if (body == 0 || body % L->trace_bytes != 0)
    return strata__fail_arg(ctx, STRATA_EFORMAT, "path", path,
                            "model '%s': %zu bytes after the headers are "
                            "not a whole number of traces of %zu samples "
                            "(%zu bytes each): truncated, or traces of "
                            "varying length", path, body, L->ns,
                            L->trace_bytes);
  L->ntr = body / L->trace_bytes;
  return STRATA_OK;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The distinct values of v[0..n-1], sorted, into u; their count. */
static size_t distinct(const int32_t *v, size_t n, int32_t *u) {
  memcpy(u, v, n * sizeof *u);
  qsort(u, n, sizeof *u, cmp_i32);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (k == 0 || u[k - 1] != u[i]) u[k++] = u[i];
  return k;
}

/* The lattice of numbers u[0..k-1]: a constant step; *step receives it. */
static int regular(const int32_t *u, size_t k, int64_t *step) {
  *step = k > 1 ? (int64_t)u[1] - u[0] : 1;
  for (size_t i = 2; i < k; i++)
    if ((int64_t)u[i] - u[i - 1] != *step) return 0;
  return 1;
}

/* Places trace t at column place[t] = ix + nx iy, from the inline (y) and
 * crossline (x) numbers il, xl. */
static strata_status by_headers(strata_context *ctx, const char *path,
                                size_t ntr, const int32_t *il,
                                const int32_t *xl, size_t *place, size_t *nx,
                                size_t *ny) {
  int32_t *u = malloc(2 * ntr * sizeof *u);
  unsigned char *seen = calloc(ntr, 1);
  strata_status s = STRATA_OK;
  if (!u || !seen) {
    s = strata__fail(ctx, STRATA_ENOMEM, "out of memory");
    goto done;
  }
  int32_t *ui = u, *ux = u + ntr;
  size_t ki = distinct(il, ntr, ui), kx = distinct(xl, ntr, ux);
  int64_t si, sx;
  if (!regular(ui, ki, &si) || !regular(ux, kx, &sx) || ki * kx != ntr) {
    s = strata__fail_arg(ctx, STRATA_EFORMAT, "path", path,
                         "model '%s': %zu traces with %zu inline and %zu "
                         "crossline numbers (from %d to %d and %d to %d) "
                         "are not a full regular lattice", path, ntr, ki, kx,
                         ui[0], ui[ki - 1], ux[0], ux[kx - 1]);
    goto done;
  }
  for (size_t t = 0; t < ntr; t++) {
    size_t iy = (size_t)(((int64_t)il[t] - ui[0]) / si);
    size_t ix = (size_t)(((int64_t)xl[t] - ux[0]) / sx);
    size_t q = ix + kx * iy;
    if (seen[q]++) {
      s = strata__fail_arg(ctx, STRATA_EFORMAT, "path", path,
                           "model '%s': trace %zu repeats inline %d "
                           "crossline %d", path, t + 1, il[t], xl[t]);
      goto done;
    }
    place[t] = q;
  }
  *nx = kx;
  *ny = ki;
done:
  free(u);
  free(seen);
  return s;
}

/* Reads every trace header: the inline and crossline numbers, and checks
 * the samples per trace where a header states them. */
static strata_status scan_headers(strata_context *ctx, const strata_model_file *f,
                                  FILE *fp, const segy_layout *L, int32_t *il,
                                  int32_t *xl) {
  unsigned char t[240];
  size_t bi = (size_t)f->inline_byte - 1, bx = (size_t)f->crossline_byte - 1;
  for (size_t k = 0; k < L->ntr; k++) {
    strata_status s;
    if (fseek(fp, L->data0 + (long)(k * L->trace_bytes), SEEK_SET) != 0)
      return strata__fail_arg(ctx, STRATA_EIO, "path", f->path,
                              "model '%s': cannot seek", f->path);
    if ((s = strata__model_fread(ctx, fp, f->path, t, 240)) != STRATA_OK)
      return s;
    unsigned ns = get16(t + 114, L->big);
    if (ns != 0 && ns != L->ns)
      return strata__fail_arg(ctx, STRATA_EFORMAT, "path", f->path,
                              "model '%s': trace %zu has %u samples, the "
                              "binary header %zu; traces of varying length "
                              "are not supported", f->path, k + 1, ns, L->ns);
    il[k] = get32(t + bi, L->big);
    xl[k] = get32(t + bx, L->big);
  }
  return STRATA_OK;
}

/* Where the traces go: place[t] = ix + nx iy. */
static strata_status geometry(strata_context *ctx, const strata_model_file *f,
                              FILE *fp, const segy_layout *L, size_t *place,
                              size_t *nx, size_t *ny) {
  for (int w = 0; w < 2; w++) {
    int b = w ? f->crossline_byte : f->inline_byte;
    if (b < 1 || b > 237)
      return strata__fail_arg(ctx, STRATA_EINVAL,
                              w ? "crossline_byte" : "inline_byte", b,
                              "model: %s byte %d must be 1..237 (a 4-byte "
                              "number in the 240-byte trace header)",
                              w ? "crossline" : "inline", b);
  }
  int32_t *il = malloc(2 * L->ntr * sizeof *il);
  if (!il) return strata__fail(ctx, STRATA_ENOMEM, "out of memory");
  int32_t *xl = il + L->ntr;
  strata_status s = scan_headers(ctx, f, fp, L, il, xl);
  strata_segy_geometry g = f->segy_geometry;
  if (s == STRATA_OK && g == STRATA_SEGY_AUTO) {
    g = STRATA_SEGY_TRACES;
    for (size_t k = 1; k < L->ntr; k++)
      if (il[k] != il[0]) g = STRATA_SEGY_HEADERS;
  }
  if (s != STRATA_OK)
    ; /* reported */
  else if (g == STRATA_SEGY_HEADERS) {
    s = by_headers(ctx, f->path, L->ntr, il, xl, place, nx, ny);
  } else if (g == STRATA_SEGY_TRACES) {
    *nx = f->segy_nx ? f->segy_nx : L->ntr;
    if (L->ntr % *nx != 0)
      s = strata__fail_arg(ctx, STRATA_EINVAL, "segy_nx", f->segy_nx,
                           "model '%s': %zu traces are not lines of %zu "
                           "(segy_nx)", f->path, L->ntr, f->segy_nx);
    *ny = L->ntr / *nx;
    for (size_t t = 0; t < L->ntr; t++) place[t] = t;
  } else {
    s = strata__fail_arg(ctx, STRATA_EINVAL, "segy_geometry", (int)g,
                         "model: segy_geometry %d is not a "
                         "strata_segy_geometry", (int)g);
  }
  free(il);
  return s;
}

strata_status strata__segy_read_model(strata_context *ctx,
                                      const strata_model_file *f,
                                      strata_model *m) {
  FILE *fp;
  size_t size;
  strata_status s = strata__model_open(ctx, f->path, &fp, &size);
  if (s != STRATA_OK) return s;
  segy_layout L;
  memset(&L, 0, sizeof L);
  size_t *place = NULL, nx = 0, ny = 0;
  unsigned char *buf = NULL;
  if ((s = layout(ctx, f->path, fp, size, &L)) != STRATA_OK) goto done;
  place = malloc(L.ntr * sizeof *place);
  buf = malloc(L.trace_bytes);
  if (!place || !buf) {
    s = strata__fail(ctx, STRATA_ENOMEM, "out of memory");
    goto done;
  }
  if ((s = geometry(ctx, f, fp, &L, place, &nx, &ny)) != STRATA_OK)
    goto done;
  size_t n[3] = {nx, ny, L.ns};
  if ((s = strata__model_alloc(ctx, f, ny > 1 ? 3 : 2, n, 0, m)) != STRATA_OK)
    goto done;
  if (fseek(fp, L.data0, SEEK_SET) != 0) {
    s = strata__fail_arg(ctx, STRATA_EIO, "path", f->path,
                         "model '%s': cannot seek", f->path);
    goto done;
  }
  const size_t plane = nx * ny;
  for (size_t t = 0; t < L.ntr && s == STRATA_OK; t++) {
    s = strata__model_fread(ctx, fp, f->path, buf, L.trace_bytes);
    for (size_t k = 0; s == STRATA_OK && k < L.ns; k++)
      m->data[k * plane + place[t]] =
          strata__model_sample(buf + 240 + k * L.es, L.code, L.big);
  }
  if (s != STRATA_OK) strata_model_free(m);
done:
  free(place);
  free(buf);
  fclose(fp);
  return s;
}
