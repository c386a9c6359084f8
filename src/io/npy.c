/* NumPy .npy files: format 1.0 written ('<f4' or '<f8', C order), formats
 * 1.0 to 3.0 read back. */
#define _POSIX_C_SOURCE 200809L
#include "io_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NPY_MAX_DIMS 4

static strata_status check_shape(strata_context *ctx, strata_precision p,
                                 int ndim, const size_t *shape,
                                 size_t *count) {
  if (p != STRATA_F32 && p != STRATA_F64)
    return strata__fail_arg(ctx, STRATA_EINVAL, "p", (int)p,
                            "precision is %d; it must be STRATA_F32 or "
                            "STRATA_F64", (int)p);
  if (ndim < 1 || ndim > NPY_MAX_DIMS)
    return strata__fail_arg(ctx, STRATA_EINVAL, "ndim", ndim,
                            "ndim is %d; it must be 1..%d", ndim,
                            NPY_MAX_DIMS);
  if (!shape)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "shape", shape,
                              "shape is NULL");
  size_t c = 1;
  for (int i = 0; i < ndim; i++)
    if (__builtin_mul_overflow(c, shape[i], &c) ||
        __builtin_mul_overflow(c, (size_t)p, &(size_t){0}))
      return strata__fail_arg_s(ctx, STRATA_EOVERFLOW, "shape", "set",
                                "array shape overflows");
  *count = c;
  return STRATA_OK;
}

strata_status strata_npy_write(strata_context *ctx, const char *path,
                               strata_precision p, int ndim,
                               const size_t *shape, const void *data) {
  size_t count = 0;
  strata_status s = check_shape(ctx, p, ndim, shape, &count);
  if (s != STRATA_OK) return s;
  if (!data && count)
    return strata__fail_arg_p(ctx, STRATA_EINVAL, "data", data,
                              "data is NULL");
  char dict[256];
  int len = snprintf(dict, sizeof dict, "{'descr': '<f%d', 'fortran_order': "
                     "False, 'shape': (", (int)p);
  for (int i = 0; i < ndim; i++)
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%zu,%s", shape[i],
                    i + 1 < ndim ? " " : "");
  if (ndim > 1) len--; /* "(3, 4)" but "(5,)" */
  len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
  /* magic (6) + version (2) + length (2) + dict + padding + '\n' is a
   * multiple of 64, so the data that follows is aligned */
  size_t total = 10 + (size_t)len + 1;
  size_t pad = (64 - total % 64) % 64;
  unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  strata__put_le16(head + 8, (unsigned)((size_t)len + pad + 1));
  strata__ofile o;
  if ((s = strata__ofile_open(&o, ctx, path)) != STRATA_OK) return s;
  strata__ofile_write(&o, head, sizeof head);
  strata__ofile_write(&o, dict, (size_t)len);
  for (size_t i = 0; i < pad; i++) strata__ofile_write(&o, " ", 1);
  strata__ofile_write(&o, "\n", 1);
  strata__ofile_write_le(&o, data, count, (size_t)p);
  return strata__ofile_commit(&o);
}

strata_status strata_field_save_npy(const strata_field *f, const char *path) {
  if (!f) return STRATA_EINVAL;
  size_t shape[3];
  int nd = f->d.dims;
  for (int i = 0; i < nd; i++) shape[i] = f->d.n[nd - 1 - i];
  void *host = NULL;
  strata_status s = strata__field_to_host(f, &host);
  if (s != STRATA_OK) return s;
  s = strata_npy_write(f->ctx, path, f->d.precision, nd, shape, host);
  free(host);
  return s;
}

/* ---- reading ------------------------------------------------------------ */

static const char *skip_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* Parses the header dictionary of an .npy file; Fortran order is refused
 * unless fortran is not NULL (then set to 1 for it). */
static strata_status parse_dict(strata_context *ctx, const char *path,
                                const char *d, size_t n, strata_precision *p,
                                int *ndim, size_t shape[NPY_MAX_DIMS],
                                int *fortran) {
  const char *e = d + n, *q;
  int have_descr = 0, have_order = 0, have_shape = 0;
  q = skip_ws(d, e);
  if (q >= e || *q != '{') goto bad;
  q++;
  for (;;) {
    q = skip_ws(q, e);
    if (q < e && *q == '}') break;
    if (q >= e || (*q != '\'' && *q != '"')) goto bad;
    char quote = *q++;
    const char *k = q;
    while (q < e && *q != quote) q++;
    if (q >= e) goto bad;
    size_t kl = (size_t)(q - k);
    q = skip_ws(q + 1, e);
    if (q >= e || *q != ':') goto bad;
    q = skip_ws(q + 1, e);
    if (kl == 5 && memcmp(k, "descr", 5) == 0) {
      if (q >= e || (*q != '\'' && *q != '"')) goto bad;
      char qq = *q++;
      const char *v = q;
      while (q < e && *q != qq) q++;
      if (q >= e) goto bad;
      size_t vl = (size_t)(q - v);
      q++;
      int little = strata__little_endian();
      if (vl == 3 && (v[0] == '<' || (v[0] == '=' && little)) && v[1] == 'f' &&
          (v[2] == '4' || v[2] == '8'))
        *p = v[2] == '4' ? STRATA_F32 : STRATA_F64;
      else
        return strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "'%s': dtype '%.*s' is not "
                            "supported (only '<f4' and '<f8')", path, (int)vl,
                            v);
      have_descr = 1;
    } else if (kl == 13 && memcmp(k, "fortran_order", 13) == 0) {
      if ((size_t)(e - q) >= 5 && memcmp(q, "False", 5) == 0)
        q += 5;
      else if ((size_t)(e - q) >= 4 && memcmp(q, "True", 4) == 0 && fortran)
        q += 4, *fortran = 1;
      else if ((size_t)(e - q) >= 4 && memcmp(q, "True", 4) == 0)
        return strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "'%s': Fortran-ordered "
                            "arrays are not supported", path);
      else
        goto bad;
      have_order = 1;
    } else if (kl == 5 && memcmp(k, "shape", 5) == 0) {
      if (q >= e || *q != '(') goto bad;
      q++;
      *ndim = 0;
      for (;;) {
        q = skip_ws(q, e);
        if (q < e && *q == ')') {
          q++;
          break;
        }
        if (q >= e || *q < '0' || *q > '9') goto bad;
        size_t v = 0;
        while (q < e && *q >= '0' && *q <= '9') {
          if (__builtin_mul_overflow(v, 10, &v) ||
              __builtin_add_overflow(v, (size_t)(*q - '0'), &v))
            goto bad;
          q++;
        }
        if (*ndim >= NPY_MAX_DIMS)
          return strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "'%s': more than %d "
                              "dimensions", path, NPY_MAX_DIMS);
        shape[(*ndim)++] = v;
        q = skip_ws(q, e);
        if (q < e && *q == ',') q++;
      }
      have_shape = 1;
    } else {
      goto bad;
    }
    q = skip_ws(q, e);
    if (q < e && *q == ',') q++;
  }
  if (!have_descr || !have_order || !have_shape) goto bad;
  return STRATA_OK;
bad:
  return strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "'%s': malformed .npy header",
                      path);
}

strata_status strata_npy_read(strata_context *ctx, const char *path,
                              strata_precision *p, int *ndim, size_t shape[4],
                              void **data) {
  return strata__npy_read(ctx, path, p, ndim, shape, data, NULL);
}

strata_status strata__npy_read(strata_context *ctx, const char *path,
                               strata_precision *p, int *ndim,
                               size_t shape[4], void **data, int *fortran) {
  if (!path || !p || !ndim || !shape || !data)
    return strata__fail_arg_p(ctx, STRATA_EINVAL,
                              !path ? "path" : !p ? "p" : !ndim ? "ndim"
                              : !shape ? "shape" : "data", NULL,
                              "NULL argument to strata_npy_read");
  *data = NULL;
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    int e = errno;
    return strata__fail_arg(ctx, STRATA_EIO, "path", path,
                            "cannot open '%s': %s", path, strerror(e));
  }
  strata_status s = STRATA_OK;
  char *dict = NULL;
  void *buf = NULL;
  unsigned char h[12];
  if (fread(h, 1, 8, fp) != 8 || memcmp(h, "\x93NUMPY", 6) != 0) {
    s = strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "'%s' is not an .npy file", path);
    goto done;
  }
  size_t hl;
  if (h[6] == 1) {
    if (fread(h + 8, 1, 2, fp) != 2) goto truncated;
    hl = (size_t)h[8] | (size_t)h[9] << 8;
  } else if (h[6] == 2 || h[6] == 3) {
    if (fread(h + 8, 1, 4, fp) != 4) goto truncated;
    hl = (size_t)h[8] | (size_t)h[9] << 8 | (size_t)h[10] << 16 |
         (size_t)h[11] << 24;
    if (hl > (1u << 20)) {
      s = strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "'%s': header of %zu bytes is "
                       "too long", path, hl);
      goto done;
    }
  } else {
    s = strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "'%s': .npy format version %d is "
                     "not supported", path, h[6]);
    goto done;
  }
  dict = malloc(hl + 1);
  if (!dict) {
    s = strata__fail(ctx, STRATA_ENOMEM, "out of memory");
    goto done;
  }
  if (fread(dict, 1, hl, fp) != hl) goto truncated;
  dict[hl] = '\0';
  if (fortran) *fortran = 0;
  s = parse_dict(ctx, path, dict, hl, p, ndim, shape, fortran);
  if (s != STRATA_OK) goto done;
  size_t count = 0;
  if ((s = check_shape(ctx, *p, *ndim > 0 ? *ndim : 1,
                       *ndim > 0 ? shape : (size_t[]){1}, &count)) !=
      STRATA_OK)
    goto done;
  /* the data's size against what is left of the file, before allocating */
  long at = ftell(fp);
  struct stat st;
  if (at >= 0 && fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode)) {
    size_t left = (size_t)st.st_size > (size_t)at
                      ? (size_t)st.st_size - (size_t)at : 0;
    if (left < count * (size_t)*p) goto truncated;
    if (left > count * (size_t)*p) {
      s = strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "'%s': data "
                           "longer than the shape says", path);
      goto done;
    }
  }
  buf = malloc(count ? count * (size_t)*p : 1);
  if (!buf) {
    s = strata__fail(ctx, STRATA_ENOMEM, "cannot allocate %zu bytes for '%s'",
                     count * (size_t)*p, path);
    goto done;
  }
  if (fread(buf, (size_t)*p, count, fp) != count) goto truncated;
  if (fgetc(fp) != EOF) {
    s = strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "'%s': data longer than the shape "
                     "says", path);
    goto done;
  }
  if (!strata__little_endian()) {
    unsigned char *b = buf;
    size_t es = (size_t)*p;
    for (size_t i = 0; i < count; i++)
      for (size_t k = 0; k < es / 2; k++) {
        unsigned char t = b[i * es + k];
        b[i * es + k] = b[i * es + es - 1 - k];
        b[i * es + es - 1 - k] = t;
      }
  }
  *data = buf;
  buf = NULL;
  goto done;
truncated:
  s = strata__fail_arg(ctx, STRATA_EFORMAT, "path", path, "'%s' is truncated", path);
done:
  free(dict);
  free(buf);
  fclose(fp);
  return s;
}
