/* Receiver traces (seismograms): NumPy arrays and SEG-Y revision 1 with
 * 4-byte IEEE floats (format code 5), big-endian, EBCDIC textual header. */
#define _POSIX_C_SOURCE 200809L
#include "io_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static strata_status check_traces(strata_context *ctx, const strata_traces *t) {
  if (!t)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "t", t, "traces are NULL");
  if (t->precision != STRATA_F32 && t->precision != STRATA_F64)
    return strata__fail_arg(ctx, STRATA_EINVAL, "precision",
                            (int)t->precision, "trace precision is %d",
                            (int)t->precision);
  if (t->ntraces < 1 || t->nsamples < 1)
    return strata__fail_arg(ctx, STRATA_EINVAL,
                            t->ntraces < 1 ? "ntraces" : "nsamples",
                            t->ntraces < 1 ? t->ntraces : t->nsamples,
                            "%zu traces of %zu samples: both must be at "
                            "least 1", t->ntraces, t->nsamples);
  if (!t->data)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "data", t->data,
                              "the traces' data is NULL");
  return STRATA_OK;
}

strata_status strata_traces_save_npy(strata_context *ctx, const char *path,
                                     const strata_traces *t) {
  strata_status s = check_traces(ctx, t);
  if (s != STRATA_OK) return s;
  size_t shape[2] = {t->ntraces, t->nsamples};
  return strata_npy_write(ctx, path, t->precision, 2, shape, t->data);
}

static unsigned char ebcdic(char c) {
  static const char *punct = " .<(+|&!$*);-/,%_>?:#@'=\"";
  static const unsigned char pcode[] = {0x40, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,
                                        0x50, 0x5a, 0x5b, 0x5c, 0x5d, 0x5e,
                                        0x60, 0x61, 0x6b, 0x6c, 0x6d, 0x6e,
                                        0x6f, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e,
                                        0x7f};
  if (c >= '0' && c <= '9') return (unsigned char)(0xf0 + (c - '0'));
  if (c >= 'a' && c <= 'i') return (unsigned char)(0x81 + (c - 'a'));
  if (c >= 'j' && c <= 'r') return (unsigned char)(0x91 + (c - 'j'));
  if (c >= 's' && c <= 'z') return (unsigned char)(0xa2 + (c - 's'));
  if (c >= 'A' && c <= 'I') return (unsigned char)(0xc1 + (c - 'A'));
  if (c >= 'J' && c <= 'R') return (unsigned char)(0xd1 + (c - 'J'));
  if (c >= 'S' && c <= 'Z') return (unsigned char)(0xe2 + (c - 'S'));
  const char *q = c ? strchr(punct, c) : NULL;
  return q ? pcode[q - punct] : 0x40;
}

/* value * 100 as a 32-bit integer (coordinates with scalar -100). */
static int scaled(double v, int32_t *out) {
  double s = nearbyint(v * 100.0);
  if (!isfinite(s) || fabs(s) > 2147483647.0) return 0;
  *out = (int32_t)s;
  return 1;
}

strata_status strata_segy_write(strata_context *ctx, const char *path,
                                const strata_traces *t) {
  strata_status s = check_traces(ctx, t);
  if (s != STRATA_OK) return s;
  if (t->nsamples > 32767)
    return strata__fail_arg(ctx, STRATA_EINVAL, "nsamples", t->nsamples,
                        "%zu samples per trace; SEG-Y "
                        "rev 1 allows at most 32767", t->nsamples);
  double us = nearbyint(t->dt * 1e6);
  if (!(us >= 1 && us <= 65535))
    return strata__fail_arg(ctx, STRATA_EINVAL, "dt", t->dt,
                        "sample interval %g s is %.0f "
                        "microseconds; SEG-Y needs 1..65535", t->dt, us);
  int32_t src[3] = {0, 0, 0};
  char nm[STRATA__ARGNAME_SIZE];
  for (int a = 0; a < 3; a++)
    if (!scaled(t->source[a], &src[a]))
      return strata__fail_arg(ctx, STRATA_EINVAL,
                          strata__idx(nm, "source", a), t->source[a],
                          "source coordinate %g does not "
                          "fit SEG-Y's scaled 32-bit integers", t->source[a]);
  if (t->receivers)
    for (size_t i = 0; i < 3 * t->ntraces; i++) {
      int32_t dummy;
      if (!scaled(t->receivers[i], &dummy))
        return strata__fail_arg(ctx, STRATA_EINVAL,
                            strata__idx(nm, "receivers", (long)i),
                            t->receivers[i], "receiver coordinate %g does "
                            "not fit SEG-Y's scaled 32-bit integers",
                            t->receivers[i]);
    }
  if (t->shot < 0)
    return strata__fail_arg(ctx, STRATA_EINVAL, "shot", t->shot,
                            "shot number %d; it must be >= 0", t->shot);
  const int shot = t->shot > 0 ? t->shot : 1;
  strata__ofile o;
  if ((s = strata__ofile_open(&o, ctx, path)) != STRATA_OK) return s;
  /* 3200-byte textual header: 40 card images of 80 characters */
  unsigned char text[3200];
  for (int line = 0; line < 40; line++) {
    char card[96];
    switch (line) {
    case 0:
      snprintf(card, sizeof card, "C 1 SYNTHETIC SEISMOGRAMS WRITTEN BY "
               "STRATA %s", strata_version());
      break;
    case 1:
      snprintf(card, sizeof card, "C 2 TRACES %zu  SAMPLES PER TRACE %zu  "
               "SAMPLE INTERVAL %.0f US", t->ntraces, t->nsamples, us);
      break;
    case 2:
      snprintf(card, sizeof card, "C 3 FORMAT 5 (IEEE FLOAT)  COORDINATES "
               "IN METRES, SCALAR -100");
      break;
    case 3:
      snprintf(card, sizeof card, "C 4 SHOT %d  SOURCE X %.2f Y %.2f "
               "DEPTH %.2f M", shot, t->source[0], t->source[1],
               t->source[2]);
      break;
    case 38: snprintf(card, sizeof card, "C39 SEG Y REV1"); break;
    case 39: snprintf(card, sizeof card, "C40 END TEXTUAL HEADER"); break;
    default: snprintf(card, sizeof card, "C%2d", line + 1); break;
    }
    size_t L = strlen(card);
    for (int c = 0; c < 80; c++)
      text[line * 80 + c] = ebcdic(c < (int)L ? card[c] : ' ');
  }
  strata__ofile_write(&o, text, sizeof text);
  /* 400-byte binary header; offsets below are from its start */
  unsigned char bin[400];
  memset(bin, 0, sizeof bin);
  strata__put_be32(bin + 0, 1);  /* job */
  strata__put_be32(bin + 4, 1);  /* line */
  strata__put_be32(bin + 8, 1);  /* reel */
  strata__put_be16(bin + 12, t->ntraces > 32767 ? 0 : (unsigned)t->ntraces);
  strata__put_be16(bin + 16, (unsigned)us);
  strata__put_be16(bin + 18, (unsigned)us);
  strata__put_be16(bin + 20, (unsigned)t->nsamples);
  strata__put_be16(bin + 22, (unsigned)t->nsamples);
  strata__put_be16(bin + 24, 5); /* 4-byte IEEE floating point */
  strata__put_be16(bin + 26, 1); /* ensemble fold */
  strata__put_be16(bin + 28, 1); /* sorting: as recorded */
  strata__put_be16(bin + 54, 1); /* metres */
  strata__put_be16(bin + 300, 0x0100); /* SEG-Y revision 1.0 */
  strata__put_be16(bin + 302, 1);      /* fixed-length traces */
  strata__put_be16(bin + 304, 0);      /* no extended textual headers */
  strata__ofile_write(&o, bin, sizeof bin);
  unsigned char *buf = malloc(4 * t->nsamples);
  if (!buf) {
    strata__ofile_abort(&o);
    return strata__fail(ctx, STRATA_ENOMEM, "out of memory");
  }
  for (size_t r = 0; r < t->ntraces && o.status == STRATA_OK; r++) {
    unsigned char th[240];
    memset(th, 0, sizeof th);
    strata__put_be32(th + 0, (uint32_t)(r + 1));  /* sequence in line */
    strata__put_be32(th + 4, (uint32_t)(r + 1));  /* sequence in file */
    strata__put_be32(th + 8, (uint32_t)shot);     /* field record */
    strata__put_be32(th + 12, (uint32_t)(r + 1)); /* trace in record */
    strata__put_be32(th + 16, (uint32_t)shot);    /* energy source point */
    strata__put_be16(th + 28, 1);                 /* seismic data */
    strata__put_be16(th + 34, 1);                 /* production */
    int32_t rc[3] = {0, 0, 0};
    if (t->receivers)
      for (int a = 0; a < 3; a++) scaled(t->receivers[3 * r + a], &rc[a]);
    if (t->receivers) {
      const double *q = t->receivers + 3 * r;
      double dx = q[0] - t->source[0], dy = q[1] - t->source[1];
      double off = nearbyint(sqrt(dx * dx + dy * dy));
      if (dx < 0) off = -off;
      strata__put_be32(th + 36, (uint32_t)(int32_t)off);
    }
    strata__put_be32(th + 40, (uint32_t)-rc[2]); /* receiver elevation */
    strata__put_be32(th + 48, (uint32_t)src[2]); /* source depth */
    strata__put_be16(th + 68, (unsigned)(uint16_t)-100);
    strata__put_be16(th + 70, (unsigned)(uint16_t)-100);
    strata__put_be32(th + 72, (uint32_t)src[0]);
    strata__put_be32(th + 76, (uint32_t)src[1]);
    strata__put_be32(th + 80, (uint32_t)rc[0]);
    strata__put_be32(th + 84, (uint32_t)rc[1]);
    strata__put_be16(th + 88, 1); /* length units */
    strata__put_be16(th + 114, (unsigned)t->nsamples);
    strata__put_be16(th + 116, (unsigned)us);
    strata__ofile_write(&o, th, sizeof th);
    for (size_t i = 0; i < t->nsamples; i++) {
      size_t k = r * t->nsamples + i;
      float v = t->precision == STRATA_F32
                    ? ((const float *)t->data)[k]
                    : (float)((const double *)t->data)[k];
      uint32_t u;
      memcpy(&u, &v, 4);
      strata__put_be32(buf + 4 * i, u);
    }
    strata__ofile_write(&o, buf, 4 * t->nsamples);
  }
  free(buf);
  return strata__ofile_commit(&o);
}

/* How the receivers are laid out: coordinate axis a (0..2) when they are
 * evenly spaced along it and fixed in the others, 3 when evenly spaced
 * along another line, -1 otherwise (or without positions); *origin and
 * *step place receiver r at origin + r * step on that axis. */
static int receiver_axis(const strata_traces *t, double *origin,
                         double *step) {
  *origin = 0;
  *step = 1;
  if (!t->receivers || t->ntraces < 2) return -1;
  const double *p = t->receivers;
  const size_t n = t->ntraces;
  double d[3], len = 0;
  for (int a = 0; a < 3; a++) {
    d[a] = (p[3 * (n - 1) + a] - p[a]) / (double)(n - 1);
    len += d[a] * d[a];
  }
  len = sqrt(len);
  if (!(len > 0) || !isfinite(len)) return -1;
  for (size_t r = 0; r < n; r++) /* on the line, evenly */
    for (int a = 0; a < 3; a++)
      if (fabs(p[3 * r + a] - (p[a] + (double)r * d[a])) > 1e-6 * len)
        return -1;
  int moving = 0, axis = 3;
  for (int a = 0; a < 3; a++)
    if (d[a] != 0) moving++, axis = a;
  if (moving == 1) {
    *origin = p[axis];
    *step = d[axis];
    return axis;
  }
  *step = len; /* the distance from the first receiver */
  return 3;
}

/* The gather's PNG at path, or with path NULL in memory. */
static strata_status gather_png(strata_context *ctx, const char *path,
                                void **png, size_t *size,
                                const strata_traces *t,
                                const strata_png_options *opt) {
  strata_status s = check_traces(ctx, t);
  if (s != STRATA_OK) return s;
  if (!(t->dt > 0) || !isfinite(t->dt))
    return strata__fail_arg(ctx, STRATA_EINVAL, "dt", t->dt, "the sample "
                            "interval %g s must be positive and finite",
                            t->dt);
  strata_png_options o;
  if (opt)
    o = *opt;
  else {
    strata_png_options_init(&o);
    o.cmap = STRATA_CMAP_SEISMIC;
  }
  /* the gather: time down, kx columns per receiver.  A record has many
   * more samples than receivers; at the automatic scale each receiver's
   * column is repeated so the plot is at least two thirds as wide as it
   * is tall (the picture's aspect means nothing physical here) */
  const size_t nr = t->ntraces, ns = t->nsamples;
  size_t kx = 1;
  if (o.scale == 0) {
    const size_t rows = ns < 4096 ? ns : 4096; /* the renderer's cap */
    kx = (2 * rows + 3 * nr - 1) / (3 * nr);    /* rounded up */
    if (kx < 1) kx = 1;
    if (nr * kx > 4096) kx = 4096 / nr > 1 ? 4096 / nr : 1;
  }
  const size_t nc = nr * kx;
  double *img = malloc(nc * ns * sizeof *img);
  if (!img)
    return strata__fail(ctx, STRATA_ENOMEM, "out of memory for the trace "
                        "image");
  for (size_t c = 0; c < nc; c++)
    for (size_t k = 0; k < ns; k++)
      img[k * nc + c] =
          t->precision == STRATA_F32
              ? (double)((const float *)t->data)[(c / kx) * ns + k]
              : ((const double *)t->data)[(c / kx) * ns + k];
  static const char *const names[5] = {"receiver", "receiver x",
                                       "receiver y", "receiver depth z",
                                       "offset"};
  double origin, step;
  int a = receiver_axis(t, &origin, &step);
  o.coord[0].name = names[a + 1];
  o.coord[0].unit = a < 0 ? NULL : "m";
  /* column c shows receiver c / kx: its coordinate at the middle of the
   * receiver's kx columns */
  o.coord[0].origin = origin - step * (double)(kx - 1) / (double)(2 * kx);
  o.coord[0].step = step / (double)kx;
  o.coord[1].name = "time";
  o.coord[1].unit = "s";
  o.coord[1].origin = 0;
  o.coord[1].step = t->dt;
  o.flip = 0;
  s = strata__png_image(ctx, path, png, size, STRATA_F64, nc, ns, img, &o);
  free(img);
  return s;
}

strata_status strata_traces_save_png(strata_context *ctx, const char *path,
                                     const strata_traces *t,
                                     const strata_png_options *opt) {
  return gather_png(ctx, path, NULL, NULL, t, opt);
}

strata_status strata_traces_encode_png(strata_context *ctx,
                                       const strata_traces *t,
                                       const strata_png_options *opt,
                                       void **png, size_t *size) {
  if (!png || !size)
    return strata__fail(ctx, STRATA_EINVAL, "traces PNG in memory: NULL "
                        "output");
  *png = NULL;
  *size = 0;
  return gather_png(ctx, NULL, png, size, t, opt);
}
