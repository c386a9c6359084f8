/* Checkpoint images: the bytes of a saved solver state, in memory or as a
 * file (layout in io_internal.h).  Version 1: one process.  Version 2: one
 * rank's part of a state over several processes. */
#define _POSIX_C_SOURCE 200809L
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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
  if (strata_field_get_window(f, &w) == STRATA_OK && w.distributed) {
    d->n[w.axis] = w.owned_count;
    if (w.ranks_y > 1) d->n[1] = w.owned_count_y;
  }
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

static const char *prec_name(uint32_t p, char *buf, size_t n) {
  if (p == 4) return "f32";
  if (p == 8) return "f64";
  snprintf(buf, n, "precision %u", p);
  return buf;
}

/* The largest prefix ck_head_check reads: the head, a part's record, and
 * the field records (at most nf of them) or an opaque state's length. */
static size_t prefix_bytes(int nf) {
  size_t rec = (size_t)nf * sizeof(ck_field);
  return sizeof(ck_head) + sizeof(ck_part) + (rec > 8 ? rec : 8);
}

/* What the header says of an image. */
typedef struct {
  ck_head h;
  size_t pos;  /* where the contents (interiors, or the state) start */
  size_t need; /* the bytes the whole image has */
  size_t bl;   /* opaque form: the state's bytes */
} ck_layout;

/* Checks the header of an image (its first avail bytes at p) against e,
 * field by field, before any of its contents: the magic, the version,
 * the kind, the tag, the step, whose part it is, then the field records
 * against e's fields or the opaque state's length against the most e
 * allows at that step.  *L receives the layout. */
static strata_status ck_head_check(strata_context *ctx, const char *name,
                                   const unsigned char *p, size_t avail,
                                   const strata__ck_expect *e, ck_layout *L) {
  const strata__ck *want = &e->want;
  ck_head *h = &L->h;
  if (avail < sizeof *h || memcmp(p, "STRATACK", 8) != 0)
    return strata__fail(ctx, STRATA_EFORMAT, "%s is not a strata checkpoint",
                        name);
  memcpy(h, p, sizeof *h);
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
  if (h->step < 0 || h->step > STRATA__CK_STEP_MAX)
    return strata__fail(ctx, STRATA_EFORMAT, "%s: its step is %lld, outside "
                        "0..%lld (a damaged or crafted checkpoint)", name,
                        (long long)h->step, (long long)STRATA__CK_STEP_MAX);
  L->pos = sizeof *h;
  if (h->version == CK_VERSION && want->part)
    return strata__fail(ctx, STRATA_EINVAL, "%s was written by one process; "
                        "this run is over %d processes: restart it as one "
                        "process (without the MPI launcher)", name,
                        want->nranks);
  if (h->version == CK_VERSION_PART) {
    ck_part cp;
    if (avail < sizeof *h + sizeof cp)
      return strata__fail(ctx, STRATA_EFORMAT, "%s is truncated", name);
    memcpy(&cp, p + sizeof *h, sizeof cp);
    L->pos += sizeof cp;
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
  if (h->nfields != (uint32_t)e->nf)
    return strata__fail(ctx, STRATA_EINVAL, "%s holds %u fields; the %s "
                        "solver's checkpoint holds %d", name, h->nfields,
                        want->kind, e->nf);
  if (e->nf == 0) { /* the opaque form: the state's length */
    uint64_t bl;
    if (avail < L->pos + 8)
      return strata__fail(ctx, STRATA_EFORMAT, "%s is truncated", name);
    memcpy(&bl, p + L->pos, 8);
    L->pos += 8;
    size_t most = e->most(e->arg, (long)h->step);
    if (bl > most)
      return strata__fail(ctx, STRATA_EFORMAT, "%s: its %s state has %llu "
                          "bytes; this solver's at step %lld has at most "
                          "%zu", name, want->kind, (unsigned long long)bl,
                          (long long)h->step, most);
    L->bl = (size_t)bl;
    L->need = L->pos + L->bl + 4;
    return STRATA_OK;
  }
  size_t need = L->pos + (size_t)e->nf * sizeof(ck_field) + 4;
  for (int i = 0; i < e->nf; i++) {
    ck_field cf;
    if (avail < L->pos + sizeof cf)
      return strata__fail(ctx, STRATA_EFORMAT, "%s is truncated", name);
    memcpy(&cf, p + L->pos, sizeof cf);
    L->pos += sizeof cf;
    strata_field_desc d;
    dense_shape(e->f[i], &d);
    const int dims = cf.dims != (uint32_t)d.dims;
    const int sizes = cf.n[0] != d.n[0] || cf.n[1] != d.n[1] ||
                      cf.n[2] != d.n[2];
    const int prec = cf.precision != (uint32_t)d.precision;
    if (dims || sizes || prec) {
      char pa[32], pb[32], what[64] = "";
      const char *diff[3];
      int k = 0;
      if (dims) diff[k++] = "dimensions";
      if (sizes) diff[k++] = "sizes";
      if (prec) diff[k++] = "precisions";
      for (int q = 0; q < k; q++) {
        size_t at = strlen(what);
        snprintf(what + at, sizeof what - at, "%s%s",
                 q == 0 ? "" : q == k - 1 ? " and " : ", ", diff[q]);
      }
      return strata__fail(ctx, STRATA_EINVAL, "%s: field %d is a %uD grid "
                          "of %llux%llux%llu %s, the solver's is a %dD grid "
                          "of %zux%zux%zu %s (the %s differ)", name, i,
                          cf.dims, (unsigned long long)cf.n[0],
                          (unsigned long long)cf.n[1],
                          (unsigned long long)cf.n[2],
                          prec_name(cf.precision, pa, sizeof pa), d.dims,
                          d.n[0], d.n[1], d.n[2],
                          prec_name((uint32_t)d.precision, pb, sizeof pb),
                          what);
    }
    need += dense_bytes(&d);
  }
  L->need = need;
  return STRATA_OK;
}

/* Checks an image in memory against e: the magic, the CRC-32, then every
 * header field (ck_head_check) and the length. */
static strata_status ck_check(strata_context *ctx, const char *name,
                              const unsigned char *all, size_t len,
                              const strata__ck_expect *e, ck_layout *L) {
  if (!all || len < sizeof(ck_head) + 4 || memcmp(all, "STRATACK", 8) != 0)
    return strata__fail(ctx, STRATA_EFORMAT, "%s is not a strata checkpoint",
                        name);
  uint32_t crc;
  memcpy(&crc, all + len - 4, 4);
  if (ck_crc(all, len - 4) != crc)
    return strata__fail(ctx, STRATA_EFORMAT, "%s is damaged (CRC-32 "
                        "mismatch): it was truncated or altered", name);
  strata_status s = ck_head_check(ctx, name, all, len - 4, e, L);
  if (s != STRATA_OK) return s;
  if (L->need != len)
    return strata__fail(ctx, STRATA_EFORMAT, "%s has %zu bytes; its header "
                        "and the solver say %zu", name, len, L->need);
  return STRATA_OK;
}

strata_status strata__ck_fields_load(strata_context *ctx, const char *name,
                                     const void *buf, size_t len,
                                     const strata__ck_expect *e, long *step) {
  const unsigned char *all = buf;
  ck_layout L;
  strata_status s = ck_check(ctx, name, all, len, e, &L);
  if (s != STRATA_OK) return s;
  size_t pos = L.pos;
  for (int i = 0; i < e->nf; i++) {
    strata_field_desc d;
    dense_shape(e->f[i], &d);
    s = strata_field_write(e->f[i], all + pos);
    if (s != STRATA_OK)
      return strata__fail(ctx, s, "%s: cannot load field %d: %s", name, i,
                          strata_context_error(strata_field_context(e->f[i])));
    pos += dense_bytes(&d);
  }
  *step = (long)L.h.step;
  return STRATA_OK;
}

strata_status strata__ck_blob(strata_context *ctx, const char *name,
                              const void *buf, size_t len,
                              const strata__ck_expect *e, const void **blob,
                              size_t *n, long *step) {
  const unsigned char *all = buf;
  ck_layout L;
  strata_status s = ck_check(ctx, name, all, len, e, &L);
  if (s != STRATA_OK) return s;
  *blob = all + L.pos;
  *n = L.bl;
  *step = (long)L.h.step;
  return STRATA_OK;
}

/* Reads up to n bytes of fd into p, in pieces of at most 4 MiB, asking
 * ctx's interrupt hook before each; *got receives the bytes read (fewer
 * at the end of the file).  STRATA_EINTERRUPTED when the hook said so,
 * STRATA_EIO on a read error. */
static strata_status read_bounded(strata_context *ctx, const char *path,
                                  int fd, unsigned char *p, size_t n,
                                  size_t *got) {
  *got = 0;
  while (*got < n) {
    if (strata__interrupted(ctx))
      return strata__fail(ctx, STRATA_EINTERRUPTED, "%s: interrupted while "
                          "reading the checkpoint", path);
    size_t k = n - *got < ((size_t)1 << 22) ? n - *got : (size_t)1 << 22;
    ssize_t r = read(fd, p + *got, k);
    if (r < 0 && errno == EINTR) continue; /* the hook decides */
    if (r < 0)
      return strata__fail_arg(ctx, STRATA_EIO, "path", path,
                              "%s: cannot read the checkpoint: %s", path,
                              strerror(errno));
    if (r == 0) break;
    *got += (size_t)r;
  }
  return STRATA_OK;
}

strata_status strata__ck_read_file(strata_context *ctx, const char *path,
                                   const strata__ck_expect *e, void **pbuf,
                                   size_t *psize) {
  *pbuf = NULL;
  *psize = 0;
  int fd;
  do {
    if (strata__interrupted(ctx))
      return strata__fail(ctx, STRATA_EINTERRUPTED, "%s: interrupted while "
                          "opening the checkpoint", path);
    fd = open(path, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return strata__fail_arg(ctx, STRATA_EIO, "path", path,
                            "%s: cannot open the checkpoint: %s", path,
                            strerror(errno));
  struct stat st;
  const int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  /* the header first: what it says, with the solver, bounds the rest */
  const size_t pre = prefix_bytes(e->nf);
  size_t got = 0;
  ck_layout L;
  unsigned char *all = NULL, *head = malloc(pre);
  strata_status s =
      head ? read_bounded(ctx, path, fd, head, pre, &got)
           : strata__fail(ctx, STRATA_ENOMEM, "%s: out of memory", path);
  if (s == STRATA_OK) s = ck_head_check(ctx, path, head, got, e, &L);
  if (s == STRATA_OK && regular && (uintmax_t)st.st_size != L.need)
    s = strata__fail(ctx, STRATA_EFORMAT, "%s has %jd bytes; its header and "
                     "the solver say %zu%s", path, (intmax_t)st.st_size,
                     L.need, (uintmax_t)st.st_size < L.need
                                 ? " (it is truncated)" : "");
  if (s == STRATA_OK && !(all = malloc(L.need)))
    s = strata__fail(ctx, STRATA_ENOMEM, "%s: out of memory (%zu bytes)",
                     path, L.need);
  if (s == STRATA_OK) {
    size_t have = got < L.need ? got : L.need, more = 0;
    memcpy(all, head, have);
    s = read_bounded(ctx, path, fd, all + have, L.need - have, &more);
    if (s == STRATA_OK && have + more < L.need)
      s = strata__fail(ctx, STRATA_EFORMAT, "%s is truncated: %zu bytes; its "
                       "header and the solver say %zu", path, have + more,
                       L.need);
    /* a file that is not a regular one (a pipe) must end there too */
    unsigned char extra;
    size_t over = got > L.need;
    if (s == STRATA_OK && !over)
      s = read_bounded(ctx, path, fd, &extra, 1, &over);
    if (s == STRATA_OK && over)
      s = strata__fail(ctx, STRATA_EFORMAT, "%s is longer than the %zu bytes "
                       "its header and the solver say", path, L.need);
  }
  close(fd);
  free(head);
  if (s != STRATA_OK) {
    free(all);
    return s;
  }
  *pbuf = all;
  *psize = L.need;
  return STRATA_OK;
}
