/* Output files written under a temporary name and renamed when complete:
 * an interrupted run never leaves a truncated file under the final name. */
#define _POSIX_C_SOURCE 200809L
#include "io_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file being written is PATH.tmp.PID until it is complete. */
#define TMP_MARK ".tmp."

void strata__ofile_tmp_name(char *buf, size_t n, const char *path) {
  snprintf(buf, n, "%s" TMP_MARK "%ld", path, (long)getpid());
}

strata_status strata__ofile_open(strata__ofile *o, strata_context *ctx,
                                 const char *path) {
  memset(o, 0, sizeof *o);
  o->ctx = ctx;
  if (!path || !*path)
    return o->status = strata__fail_arg_s(ctx, STRATA_EINVAL, "path",
                                          path ? "" : "NULL",
                                          "output path is %s",
                                          path ? "empty" : "NULL");
  size_t n = strlen(path);
  o->path = malloc(n + 1);
  o->tmp = malloc(n + 32);
  if (!o->path || !o->tmp) {
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    return o->status = strata__fail(ctx, STRATA_ENOMEM,
                                    "out of memory naming '%s'", path);
  }
  memcpy(o->path, path, n + 1);
  strata__ofile_tmp_name(o->tmp, n + 32, path);
  o->fp = fopen(o->tmp, "wb");
  if (!o->fp) {
    int e = errno;
    strata__fail_arg(ctx, STRATA_EIO, "path", path, "cannot create '%s': %s",
                     o->tmp, strerror(e));
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    return o->status = STRATA_EIO;
  }
  return STRATA_OK;
}

strata_status strata__ofile_write(strata__ofile *o, const void *p, size_t n) {
  if (o->status != STRATA_OK) return o->status;
  if (n && fwrite(p, 1, n, o->fp) != n) {
    int e = errno;
    o->status = strata__fail(o->ctx, STRATA_EIO, "cannot write '%s': %s",
                             o->tmp, strerror(e));
  }
  return o->status;
}

strata_status strata__ofile_format(strata__ofile *o, const char *fmt, ...) {
  if (o->status != STRATA_OK) return o->status;
  va_list ap;
  va_start(ap, fmt);
  int r = vfprintf(o->fp, fmt, ap);
  va_end(ap);
  if (r < 0) {
    int e = errno;
    o->status = strata__fail(o->ctx, STRATA_EIO, "cannot write '%s': %s",
                             o->tmp, strerror(e));
  }
  return o->status;
}

strata_status strata__ofile_write_le(strata__ofile *o, const void *p,
                                     size_t n, size_t es) {
  if (strata__little_endian()) return strata__ofile_write(o, p, n * es);
  unsigned char buf[4096];
  const unsigned char *src = p;
  size_t per = sizeof buf / es;
  while (n && o->status == STRATA_OK) {
    size_t m = n < per ? n : per;
    for (size_t i = 0; i < m; i++)
      for (size_t b = 0; b < es; b++) buf[i * es + b] = src[i * es + es - 1 - b];
    strata__ofile_write(o, buf, m * es);
    src += m * es;
    n -= m;
  }
  return o->status;
}

static void release(strata__ofile *o) {
  free(o->path);
  free(o->tmp);
  o->path = o->tmp = NULL;
  o->fp = NULL;
}

void strata__ofile_abort(strata__ofile *o) {
  if (o->fp) {
    fclose(o->fp);
    if (o->tmp) remove(o->tmp);
  }
  free(o->mem); /* memory mode */
  o->mem = NULL;
  release(o);
}

strata_status strata__ofile_commit(strata__ofile *o) {
  if (!o->fp) return o->status != STRATA_OK ? o->status : STRATA_EINVAL;
  if (o->status == STRATA_OK && (fflush(o->fp) != 0 || fsync(fileno(o->fp)))) {
    int e = errno;
    o->status = strata__fail(o->ctx, STRATA_EIO, "cannot write '%s': %s",
                             o->tmp, strerror(e));
  }
  if (fclose(o->fp) != 0 && o->status == STRATA_OK) {
    int e = errno;
    o->status = strata__fail(o->ctx, STRATA_EIO, "cannot close '%s': %s",
                             o->tmp, strerror(e));
  }
  o->fp = NULL;
  if (o->status == STRATA_OK && rename(o->tmp, o->path) != 0) {
    int e = errno;
    o->status = strata__fail(o->ctx, STRATA_EIO, "cannot rename '%s' to "
                             "'%s': %s", o->tmp, o->path, strerror(e));
  }
  if (o->status != STRATA_OK) remove(o->tmp);
  strata_status s = o->status;
  release(o);
  return s;
}

strata_status strata__ofile_open_memory(strata__ofile *o,
                                        strata_context *ctx) {
  memset(o, 0, sizeof *o);
  o->ctx = ctx;
  o->fp = open_memstream(&o->mem, &o->mem_size);
  if (!o->fp)
    return o->status = strata__fail(ctx, STRATA_ENOMEM, "out of memory for "
                                    "an image in memory");
  return STRATA_OK;
}

strata_status strata__ofile_commit_memory(strata__ofile *o, void **data,
                                          size_t *size) {
  *data = NULL;
  *size = 0;
  if (!o->fp) return o->status != STRATA_OK ? o->status : STRATA_EINVAL;
  if (fclose(o->fp) != 0 && o->status == STRATA_OK)
    o->status = strata__fail(o->ctx, STRATA_ENOMEM, "out of memory for an "
                             "image in memory");
  o->fp = NULL;
  if (o->status == STRATA_OK) {
    *data = o->mem;
    *size = o->mem_size;
  } else {
    free(o->mem);
  }
  o->mem = NULL;
  return o->status;
}

/* The PID of a temporary file's name (NAME.tmp.PID), or 0. */
static long tmp_pid(const char *name) {
  const char *t = NULL;
  for (const char *p = strstr(name, TMP_MARK); p; p = strstr(p + 1, TMP_MARK))
    t = p;
  if (!t || t == name || !t[sizeof TMP_MARK - 1]) return 0;
  long v = 0;
  for (const char *d = t + sizeof TMP_MARK - 1; *d; d++) {
    if (*d < '0' || *d > '9') return 0;
    v = 10 * v + (*d - '0');
    if (v > INT_MAX) return 0;
  }
  return v;
}

strata_status strata_remove_stale_temporaries(strata_context *ctx,
                                              const char *dir, int *removed) {
  if (removed) *removed = 0;
  if (!dir || !*dir)
    return strata__fail_arg_s(ctx, STRATA_EINVAL, "dir", dir ? "" : "NULL",
                              "temporary files: the folder is %s",
                              dir ? "empty" : "NULL");
  DIR *d = opendir(dir);
  if (!d)
    return strata__fail_arg(ctx, STRATA_EIO, "dir", dir,
                            "cannot read the folder '%s': %s", dir,
                            strerror(errno));
  strata_status s = STRATA_OK;
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d))) {
    const long pid = tmp_pid(e->d_name);
    /* a live process (EPERM: someone else's) may still be writing it */
    if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    char *path = malloc(len);
    if (!path) {
      s = strata__fail(ctx, STRATA_ENOMEM, "out of memory naming a file "
                       "of '%s'", dir);
      break;
    }
    snprintf(path, len, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      if (remove(path) == 0)
        n++;
      else if (s == STRATA_OK)
        s = strata__fail_arg(ctx, STRATA_EIO, "dir", dir,
                             "cannot remove '%s', left by process %ld, "
                             "which is gone: %s", path, pid, strerror(errno));
    }
    free(path);
  }
  closedir(d);
  if (removed) *removed = n;
  return s;
}

strata_status strata__field_to_host(const strata_field *f, void **out) {
  *out = NULL;
  size_t n = f->d.n[0] * f->d.n[1] * f->d.n[2];
  void *p = malloc(n * f->esize);
  if (!p)
    return strata__fail(f->ctx, STRATA_ENOMEM,
                        "cannot allocate %zu bytes of host memory for output",
                        n * f->esize);
  strata_status s = strata_field_read(f, p);
  if (s != STRATA_OK) {
    free(p);
    return s;
  }
  *out = p;
  return STRATA_OK;
}
