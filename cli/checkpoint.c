/* Checkpoint files: "STRATACK", version, header, interiors, CRC-32.
 * Version 1: one process.  Version 2: one rank's part of a checkpoint over
 * several processes; the header is followed by the part record (rank,
 * ranks), then the same contents as version 1 for that rank's slab. */
#define _POSIX_C_SOURCE 200809L
#include "checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CK_VERSION 1u
#define CK_VERSION_PART 2u

static uint32_t crc32_update(uint32_t c, const unsigned char *p, size_t n) {
  static uint32_t table[256];
  if (!table[1])
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t v = i;
      for (int k = 0; k < 8; k++) v = (v & 1) ? 0xedb88320u ^ (v >> 1) : v >> 1;
      table[i] = v;
    }
  c = ~c;
  for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return ~c;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

uint64_t ckpt_case_hash(const cf_file *f) {
  char **lines = calloc((size_t)f->n + 1, sizeof *lines);
  int m = 0;
  for (int i = 0; lines && i < f->n; i++) {
    const char *s = f->e[i].section;
    if (!strcmp(s, "case") || !strcmp(s, "run") || !strcmp(s, "output"))
      continue;
    size_t L = strlen(s) + strlen(f->e[i].key) + strlen(f->e[i].value) + 3;
    lines[m] = malloc(L);
    if (!lines[m]) break;
    snprintf(lines[m++], L, "%s.%s=%s", s, f->e[i].key, f->e[i].value);
  }
  if (lines) qsort(lines, (size_t)m, sizeof *lines, cmp_str);
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < m; i++) {
    for (const char *p = lines[i]; *p; p++)
      h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    h = (h ^ '\n') * 0x100000001b3ull;
    free(lines[i]);
  }
  free(lines);
  return h;
}

typedef struct {
  char magic[8];
  uint32_t version, nfields;
  char kind[16];
  uint64_t hash;
  int64_t step;
} ck_head;

typedef struct {
  uint32_t dims, precision;
  uint64_t n[3];
} ck_field;

typedef struct {
  uint32_t rank, nranks;
} ck_part;

void ckpt_part_path(const char *path, int rank, char *out, size_t n) {
  if (rank > 0)
    snprintf(out, n, "%s.rank%d", path, rank);
  else
    snprintf(out, n, "%s", path);
}

static void tmp_name(const char *path, char *tmp, size_t n) {
  snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
}

/* Ends a write: flushes and closes fp, then renames its temporary file to
 * path (one process) or leaves it for ckpt_commit (a part). */
static int ck_finish(FILE *fp, int ok, const char *path, const char *tmp,
                     const ckpt_part *part, char *err, size_t en) {
  ok = ok && fflush(fp) == 0 && fsync(fileno(fp)) == 0;
  ok = (fclose(fp) == 0) && ok;
  if (!ok || (!part && rename(tmp, path) != 0)) {
    snprintf(err, en, "cannot write %s: %s", path, strerror(errno));
    remove(tmp);
    return -1;
  }
  return 0;
}

int ckpt_commit(const char *path, int keep, char *err, size_t en) {
  char tmp[4200];
  tmp_name(path, tmp, sizeof tmp);
  if (!keep) {
    remove(tmp);
    return 0;
  }
  if (rename(tmp, path) != 0) {
    snprintf(err, en, "cannot write %s: %s", path, strerror(errno));
    remove(tmp);
    return -1;
  }
  return 0;
}

/* The dense shape a checkpoint holds of f: its interior, or the planes
 * this rank owns of a distributed field. */
static void dense_shape(strata_field *f, strata_field_desc *d) {
  strata_field_get_desc(f, d);
  strata_field_window w;
  if (strata_field_get_window(f, &w) == STRATA_OK && w.distributed)
    d->n[w.axis] = w.owned_count;
}

/* The header (and a part's record) at the start of a new file. */
static uint32_t ck_start(ck_head *h, const char *kind, uint64_t hash,
                         long step, int nfields, const ckpt_part *part) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, "STRATACK", 8);
  h->version = part ? CK_VERSION_PART : CK_VERSION;
  h->nfields = (uint32_t)nfields;
  snprintf(h->kind, sizeof h->kind, "%s", kind);
  h->hash = hash;
  h->step = step;
  return crc32_update(0, (const unsigned char *)h, sizeof *h);
}

static int ck_write_part(FILE *fp, const ckpt_part *part, uint32_t *crc) {
  if (!part) return 1;
  ck_part cp = {(uint32_t)part->rank, (uint32_t)part->nranks};
  *crc = crc32_update(*crc, (const unsigned char *)&cp, sizeof cp);
  return fwrite(&cp, sizeof cp, 1, fp) == 1;
}

/* Creates path's temporary file (name in tmp) and writes the header and
 * the part record; *crc and *ok carry on from there.  NULL (message in
 * err) when the file cannot be created. */
static FILE *ck_open(const char *path, char *tmp, size_t tn, const char *kind,
                     uint64_t hash, long step, int nfields,
                     const ckpt_part *part, uint32_t *crc, int *ok, char *err,
                     size_t en) {
  tmp_name(path, tmp, tn);
  FILE *fp = fopen(tmp, "wb");
  if (!fp) {
    snprintf(err, en, "cannot create %s: %s", tmp, strerror(errno));
    return NULL;
  }
  ck_head h;
  *crc = ck_start(&h, kind, hash, step, nfields, part);
  *ok = fwrite(&h, sizeof h, 1, fp) == 1 && ck_write_part(fp, part, crc);
  return fp;
}

int ckpt_save(const char *path, const char *kind, uint64_t hash, long step,
              int nfields, strata_field *const *fields,
              const ckpt_part *part, char *err, size_t en) {
  char tmp[4200];
  uint32_t crc;
  int ok;
  FILE *fp = ck_open(path, tmp, sizeof tmp, kind, hash, step, nfields, part,
                     &crc, &ok, err, en);
  if (!fp) return -1;
  for (int i = 0; i < nfields && ok; i++) {
    strata_field_desc d;
    dense_shape(fields[i], &d);
    ck_field cf = {(uint32_t)d.dims, (uint32_t)d.precision,
                   {d.n[0], d.n[1], d.n[2]}};
    crc = crc32_update(crc, (const unsigned char *)&cf, sizeof cf);
    ok = fwrite(&cf, sizeof cf, 1, fp) == 1;
  }
  for (int i = 0; i < nfields && ok; i++) {
    strata_field_desc d;
    dense_shape(fields[i], &d);
    size_t bytes = d.n[0] * d.n[1] * d.n[2] * (size_t)d.precision;
    void *buf = malloc(bytes);
    if (!buf || strata_field_read(fields[i], buf) != STRATA_OK) {
      free(buf);
      snprintf(err, en, "cannot read field %d for the checkpoint", i);
      fclose(fp);
      remove(tmp);
      return -1;
    }
    crc = crc32_update(crc, buf, bytes);
    ok = fwrite(buf, 1, bytes, fp) == bytes;
    free(buf);
  }
  ok = ok && fwrite(&crc, 4, 1, fp) == 1;
  return ck_finish(fp, ok, path, tmp, part, err, en);
}

/* Reads path whole and checks what every checkpoint shares: the magic,
 * the CRC, the version, the solver kind, the case hash and whose part it
 * is (part: this rank's, NULL for one process).  On success *all
 * (malloc'd) holds the file, *len its length, *h its header and *pos where
 * the contents after the header (and part record) start. */
static int ck_read(const char *path, const char *kind, uint64_t hash,
                   const ckpt_part *part, unsigned char **pall, size_t *plen,
                   ck_head *h, size_t *pos, char *err, size_t en) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    snprintf(err, en, "%s: cannot open the checkpoint: %s", path,
             strerror(errno));
    return -1;
  }
  unsigned char *all = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      cap = cap ? 2 * cap : 1 << 16;
      unsigned char *p = realloc(all, cap);
      if (!p) {
        free(all);
        fclose(fp);
        snprintf(err, en, "%s: out of memory", path);
        return -1;
      }
      all = p;
    }
    size_t got = fread(all + len, 1, cap - len, fp);
    len += got;
    if (got == 0) break;
  }
  int rd_err = ferror(fp);
  fclose(fp);
  int r = -1;
  if (rd_err) {
    snprintf(err, en, "%s: read error", path);
    goto bad;
  }
  if (len < sizeof *h + 4 || memcmp(all, "STRATACK", 8) != 0) {
    snprintf(err, en, "%s is not a strata checkpoint", path);
    goto bad;
  }
  uint32_t crc;
  memcpy(&crc, all + len - 4, 4);
  if (crc32_update(0, all, len - 4) != crc) {
    snprintf(err, en, "%s is damaged (CRC-32 mismatch): it was truncated or "
             "altered", path);
    goto bad;
  }
  memcpy(h, all, sizeof *h);
  if (h->version != CK_VERSION && h->version != CK_VERSION_PART) {
    snprintf(err, en, "%s: checkpoint version %u; this strata reads %u and "
             "%u", path, h->version, CK_VERSION, CK_VERSION_PART);
    goto bad;
  }
  h->kind[sizeof h->kind - 1] = 0;
  if (strcmp(h->kind, kind) != 0) {
    snprintf(err, en, "%s was written by solver '%s', not '%s'", path, h->kind,
             kind);
    goto bad;
  }
  if (h->hash != hash) {
    snprintf(err, en, "%s was written for a different case (grid, physics, "
             "boundaries, sources or initial state differ; only [run] and "
             "[output] may change on restart)", path);
    goto bad;
  }
  *pos = sizeof *h;
  if (h->version == CK_VERSION && part) {
    snprintf(err, en, "%s was written by one process; this run is over %d "
             "processes: restart it as one process (without the MPI "
             "launcher)", path, part->nranks);
    goto bad;
  }
  if (h->version == CK_VERSION_PART) {
    ck_part cp;
    if (len < sizeof *h + sizeof cp + 4) {
      snprintf(err, en, "%s is truncated", path);
      goto bad;
    }
    memcpy(&cp, all + sizeof *h, sizeof cp);
    *pos += sizeof cp;
    if (!part) {
      snprintf(err, en, "%s is rank %u's part of a checkpoint over %u "
               "processes: restart with mpiexec -n %u", path, cp.rank,
               cp.nranks, cp.nranks);
      goto bad;
    }
    if (cp.nranks != (uint32_t)part->nranks) {
      snprintf(err, en, "%s is part of a checkpoint over %u processes; this "
               "run is over %d: restart with mpiexec -n %u", path, cp.nranks,
               part->nranks, cp.nranks);
      goto bad;
    }
    if (cp.rank != (uint32_t)part->rank) {
      snprintf(err, en, "%s holds rank %u's part, not rank %d's (a renamed "
               "file?)", path, cp.rank, part->rank);
      goto bad;
    }
  }
  *pall = all;
  *plen = len;
  return 0;
bad:
  free(all);
  return r;
}

int ckpt_load(const char *path, const char *kind, uint64_t hash, long *step,
              int nfields, strata_field *const *fields,
              const ckpt_part *part, char *err, size_t en) {
  unsigned char *all = NULL;
  size_t len = 0, pos = 0;
  ck_head h;
  int r = -1;
  if (ck_read(path, kind, hash, part, &all, &len, &h, &pos, err, en))
    return -1;
  if (h.nfields != (uint32_t)nfields) {
    snprintf(err, en, "%s holds %u fields, expected %d", path, h.nfields,
             nfields);
    goto done;
  }
  size_t need = pos + (size_t)nfields * sizeof(ck_field) + 4;
  for (int i = 0; i < nfields; i++) {
    ck_field cf;
    if (pos + sizeof cf > len - 4) {
      snprintf(err, en, "%s is truncated", path);
      goto done;
    }
    memcpy(&cf, all + pos, sizeof cf);
    pos += sizeof cf;
    strata_field_desc d;
    dense_shape(fields[i], &d);
    if (cf.dims != (uint32_t)d.dims || cf.precision != (uint32_t)d.precision ||
        cf.n[0] != d.n[0] || cf.n[1] != d.n[1] || cf.n[2] != d.n[2]) {
      snprintf(err, en, "%s: field %d is %ux%ux%u %s, the case's is "
               "%zux%zux%zu %s", path, i, (unsigned)cf.n[0],
               (unsigned)cf.n[1], (unsigned)cf.n[2],
               cf.precision == 8 ? "f64" : "f32", d.n[0], d.n[1], d.n[2],
               d.precision == STRATA_F64 ? "f64" : "f32");
      goto done;
    }
    need += d.n[0] * d.n[1] * d.n[2] * (size_t)d.precision;
  }
  if (need != len) {
    snprintf(err, en, "%s has %zu bytes, expected %zu", path, len, need);
    goto done;
  }
  for (int i = 0; i < nfields; i++) {
    strata_field_desc d;
    dense_shape(fields[i], &d);
    if (strata_field_write(fields[i], all + pos) != STRATA_OK) {
      snprintf(err, en, "%s: cannot load field %d: %s", path, i,
               strata_context_error(strata_field_context(fields[i])));
      goto done;
    }
    pos += d.n[0] * d.n[1] * d.n[2] * (size_t)d.precision;
  }
  *step = (long)h.step;
  r = 0;
done:
  free(all);
  return r;
}

/* Blob checkpoints: the header with nfields = 0, the blob's length (8
 * bytes), the blob, the CRC-32. */
int ckpt_save_blob(const char *path, const char *kind, uint64_t hash,
                   long step, const void *blob, size_t n,
                   const ckpt_part *part, char *err, size_t en) {
  char tmp[4200];
  uint32_t crc;
  int ok;
  FILE *fp = ck_open(path, tmp, sizeof tmp, kind, hash, step, 0, part, &crc,
                     &ok, err, en);
  if (!fp) return -1;
  uint64_t len = n;
  crc = crc32_update(crc, (const unsigned char *)&len, 8);
  crc = crc32_update(crc, blob, n);
  ok = ok && fwrite(&len, 8, 1, fp) == 1 && fwrite(blob, 1, n, fp) == n &&
       fwrite(&crc, 4, 1, fp) == 1;
  return ck_finish(fp, ok, path, tmp, part, err, en);
}

int ckpt_load_blob(const char *path, const char *kind, uint64_t hash,
                   long *step, void **blob, size_t *n, const ckpt_part *part,
                   char *err, size_t en) {
  unsigned char *all = NULL;
  size_t len = 0, pos = 0;
  ck_head h;
  if (ck_read(path, kind, hash, part, &all, &len, &h, &pos, err, en))
    return -1;
  uint64_t bl = 0;
  if (h.nfields != 0 || len < pos + 12 ||
      (memcpy(&bl, all + pos, 8), bl != len - pos - 12)) {
    snprintf(err, en, "%s: the checkpoint's layout is not the %s solver's",
             path, kind);
    free(all);
    return -1;
  }
  memmove(all, all + pos + 8, (size_t)bl);
  *blob = all;
  *n = (size_t)bl;
  *step = (long)h.step;
  return 0;
}
