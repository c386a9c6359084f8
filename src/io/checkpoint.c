/* Checkpoint images: the bytes of a saved solver state, in memory or as a
 * file (layout in io_internal.h).  Version 1: one process.  Version 2: one
 * rank's part of a state over several processes. */
#include "io_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CK_VERSION 1u
#define CK_VERSION_PART 2u

typedef struct {
  char magic[8];
  uint32_t version, nfields;
  char kind[16];
  uint64_t tag;
  int64_t step;
} ck_head;

typedef struct {
  uint32_t dims, precision;
  uint64_t n[3];
} ck_field;

typedef struct {
  uint32_t rank, nranks;
} ck_part;

static uint32_t ck_crc(const void *p, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  const unsigned char *b = p;
  /* zlib takes lengths as uInt: feed a large image in pieces */
  while (n > 0) {
    uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
    c = crc32(c, b, k);
    b += k;
    n -= k;
  }
  return (uint32_t)c;
}

static size_t head_bytes(int part) {
  return sizeof(ck_head) + (part ? sizeof(ck_part) : 0);
}

/* The dense shape an image holds of f: its interior, or the planes this
 * rank owns of a distributed field. */
static void dense_shape(const strata_field *f, strata_field_desc *d) {
  strata_field_get_desc(f, d);
  strata_field_window w;
  if (strata_field_get_window(f, &w) == STRATA_OK && w.distributed)
    d->n[w.axis] = w.owned_count;
}

static size_t dense_bytes(const strata_field_desc *d) {
  return d->n[0] * d->n[1] * d->n[2] * (size_t)d->precision;
}

/* The header (and a part's record) at the start of buf; returns its
 * bytes. */
static size_t put_head(const strata__ck *ck, uint32_t nfields, void *buf) {
  ck_head h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, "STRATACK", 8);
  h.version = ck->part ? CK_VERSION_PART : CK_VERSION;
  h.nfields = nfields;
  snprintf(h.kind, sizeof h.kind, "%s", ck->kind);
  h.tag = ck->tag;
  h.step = ck->step;
  memcpy(buf, &h, sizeof h);
  if (ck->part) {
    ck_part cp = {(uint32_t)ck->rank, (uint32_t)ck->nranks};
    memcpy((unsigned char *)buf + sizeof h, &cp, sizeof cp);
  }
  return head_bytes(ck->part);
}

void strata__ck_seal(void *buf, size_t size) {
  uint32_t crc = ck_crc(buf, size - 4);
  memcpy((unsigned char *)buf + size - 4, &crc, 4);
}

size_t strata__ck_fields_bytes(strata_field *const *f, int nf, int part) {
  size_t b = head_bytes(part) + (size_t)nf * sizeof(ck_field) + 4;
  for (int i = 0; i < nf; i++) {
    strata_field_desc d;
    dense_shape(f[i], &d);
    b += dense_bytes(&d);
  }
  return b;
}

strata_status strata__ck_fields_save(const strata__ck *ck,
                                     strata_field *const *f, int nf,
                                     void *buf, size_t size) {
  strata_context *ctx = strata_field_context(f[0]);
  size_t need = strata__ck_fields_bytes(f, nf, ck->part);
  if (!buf || size < need)
    return strata__fail_arg_s(ctx, STRATA_EINVAL, buf ? "size" : "buf",
                              buf ? strata__argval_u(size).s : "NULL",
                              "checkpoint: the buffer holds %zu bytes; the "
                              "state needs %zu", buf ? size : 0, need);
  unsigned char *p = buf;
  size_t pos = put_head(ck, (uint32_t)nf, p);
  for (int i = 0; i < nf; i++) {
    strata_field_desc d;
    dense_shape(f[i], &d);
    ck_field cf = {(uint32_t)d.dims, (uint32_t)d.precision,
                   {d.n[0], d.n[1], d.n[2]}};
    memcpy(p + pos, &cf, sizeof cf);
    pos += sizeof cf;
  }
  for (int i = 0; i < nf; i++) {
    strata_field_desc d;
    dense_shape(f[i], &d);
    strata_status s = strata_field_read(f[i], p + pos);
    if (s != STRATA_OK) return s;
    pos += dense_bytes(&d);
  }
  strata__ck_seal(buf, need);
  return STRATA_OK;
}

size_t strata__ck_blob_bytes(size_t n, int part) {
  return head_bytes(part) + 8 + n + 4;
}

unsigned char *strata__ck_blob_begin(const strata__ck *ck, size_t n,
                                     void *buf) {
  unsigned char *p = buf;
  size_t pos = put_head(ck, 0, p);
  uint64_t len = n;
  memcpy(p + pos, &len, 8);
  return p + pos + 8;
}

/* Checks what every image shares: the magic, the CRC, the version, the
 * kind, the tag, and whose part it is.  *h receives the header and *pos
 * where the contents start. */
static strata_status ck_check(strata_context *ctx, const char *name,
                              const unsigned char *all, size_t len,
                              const strata__ck *want, ck_head *h,
                              size_t *pos) {
  if (!all || len < sizeof *h + 4 || memcmp(all, "STRATACK", 8) != 0)
    return strata__fail(ctx, STRATA_EFORMAT, "%s is not a strata checkpoint",
                        name);
  uint32_t crc;
  memcpy(&crc, all + len - 4, 4);
  if (ck_crc(all, len - 4) != crc)
    return strata__fail(ctx, STRATA_EFORMAT, "%s is damaged (CRC-32 "
                        "mismatch): it was truncated or altered", name);
  memcpy(h, all, sizeof *h);
  if (h->version != CK_VERSION && h->version != CK_VERSION_PART)
    return strata__fail(ctx, STRATA_EFORMAT, "%s: checkpoint version %u; "
                        "this strata reads %u and %u", name, h->version,
                        CK_VERSION, CK_VERSION_PART);
  h->kind[sizeof h->kind - 1] = 0;
  if (strcmp(h->kind, want->kind) != 0)
    return strata__fail(ctx, STRATA_EINVAL, "%s was written by solver '%s', "
                        "not '%s'", name, h->kind, want->kind);
  if (h->tag != want->tag)
    return strata__fail(ctx, STRATA_EINVAL, "%s was written for a different "
                        "case (its tag %016llx is not the solver's %016llx: "
                        "grid, physics, boundaries, sources or initial "
                        "state differ)", name, (unsigned long long)h->tag,
                        (unsigned long long)want->tag);
  *pos = sizeof *h;
  if (h->version == CK_VERSION && want->part)
    return strata__fail(ctx, STRATA_EINVAL, "%s was written by one process; "
                        "this run is over %d processes: restart it as one "
                        "process (without the MPI launcher)", name,
                        want->nranks);
  if (h->version == CK_VERSION_PART) {
    ck_part cp;
    if (len < sizeof *h + sizeof cp + 4)
      return strata__fail(ctx, STRATA_EFORMAT, "%s is truncated", name);
    memcpy(&cp, all + sizeof *h, sizeof cp);
    *pos += sizeof cp;
    if (!want->part)
      return strata__fail(ctx, STRATA_EINVAL, "%s is rank %u's part of a "
                          "checkpoint over %u processes: restart with "
                          "mpiexec -n %u", name, cp.rank, cp.nranks,
                          cp.nranks);
    if (cp.nranks != (uint32_t)want->nranks)
      return strata__fail(ctx, STRATA_EINVAL, "%s is part of a checkpoint "
                          "over %u processes; this run is over %d: restart "
                          "with mpiexec -n %u", name, cp.nranks,
                          want->nranks, cp.nranks);
    if (cp.rank != (uint32_t)want->rank)
      return strata__fail(ctx, STRATA_EINVAL, "%s holds rank %u's part, not "
                          "rank %d's (a renamed file?)", name, cp.rank,
                          want->rank);
  }
  return STRATA_OK;
}

strata_status strata__ck_fields_load(strata_context *ctx, const char *name,
                                     const void *buf, size_t len,
                                     const strata__ck *want,
                                     strata_field *const *f, int nf,
                                     long *step) {
  const unsigned char *all = buf;
  ck_head h;
  size_t pos = 0;
  strata_status s = ck_check(ctx, name, all, len, want, &h, &pos);
  if (s != STRATA_OK) return s;
  if (h.nfields != (uint32_t)nf)
    return strata__fail(ctx, STRATA_EINVAL, "%s holds %u fields, expected "
                        "%d", name, h.nfields, nf);
  size_t need = pos + (size_t)nf * sizeof(ck_field) + 4;
  for (int i = 0; i < nf; i++) {
    ck_field cf;
    if (pos + sizeof cf > len - 4)
      return strata__fail(ctx, STRATA_EFORMAT, "%s is truncated", name);
    memcpy(&cf, all + pos, sizeof cf);
    pos += sizeof cf;
    strata_field_desc d;
    dense_shape(f[i], &d);
    if (cf.dims != (uint32_t)d.dims || cf.precision != (uint32_t)d.precision ||
        cf.n[0] != d.n[0] || cf.n[1] != d.n[1] || cf.n[2] != d.n[2])
      return strata__fail(ctx, STRATA_EINVAL, "%s: field %d is %ux%ux%u %s, "
                          "the solver's is %zux%zux%zu %s", name, i,
                          (unsigned)cf.n[0], (unsigned)cf.n[1],
                          (unsigned)cf.n[2],
                          cf.precision == 8 ? "f64" : "f32", d.n[0], d.n[1],
                          d.n[2], d.precision == STRATA_F64 ? "f64" : "f32");
    need += dense_bytes(&d);
  }
  if (need != len)
    return strata__fail(ctx, STRATA_EFORMAT, "%s has %zu bytes, expected %zu",
                        name, len, need);
  for (int i = 0; i < nf; i++) {
    strata_field_desc d;
    dense_shape(f[i], &d);
    s = strata_field_write(f[i], all + pos);
    if (s != STRATA_OK)
      return strata__fail(ctx, s, "%s: cannot load field %d: %s", name, i,
                          strata_context_error(strata_field_context(f[i])));
    pos += dense_bytes(&d);
  }
  *step = (long)h.step;
  return STRATA_OK;
}

strata_status strata__ck_blob(strata_context *ctx, const char *name,
                              const void *buf, size_t len,
                              const strata__ck *want, const void **blob,
                              size_t *n, long *step) {
  const unsigned char *all = buf;
  ck_head h;
  size_t pos = 0;
  strata_status s = ck_check(ctx, name, all, len, want, &h, &pos);
  if (s != STRATA_OK) return s;
  uint64_t bl = 0;
  if (h.nfields != 0 || len < pos + 12 ||
      (memcpy(&bl, all + pos, 8), bl != len - pos - 12))
    return strata__fail(ctx, STRATA_EFORMAT, "%s: the checkpoint's layout is "
                        "not the %s solver's", name, want->kind);
  *blob = all + pos + 8;
  *n = (size_t)bl;
  *step = (long)h.step;
  return STRATA_OK;
}

strata_status strata__ck_read_file(strata_context *ctx, const char *path,
                                   void **pbuf, size_t *psize) {
  *pbuf = NULL;
  *psize = 0;
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return strata__fail_arg(ctx, STRATA_EIO, "path", path,
                            "%s: cannot open the checkpoint: %s", path,
                            strerror(errno));
  unsigned char *all = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      cap = cap ? 2 * cap : 1 << 16;
      unsigned char *p = realloc(all, cap);
      if (!p) {
        free(all);
        fclose(fp);
        return strata__fail(ctx, STRATA_ENOMEM, "%s: out of memory", path);
      }
      all = p;
    }
    size_t got = fread(all + len, 1, cap - len, fp);
    len += got;
    if (got == 0) break;
  }
  int bad = ferror(fp);
  fclose(fp);
  if (bad) {
    free(all);
    return strata__fail_arg(ctx, STRATA_EIO, "path", path,
                            "%s: read error", path);
  }
  *pbuf = all;
  *psize = len;
  return STRATA_OK;
}
