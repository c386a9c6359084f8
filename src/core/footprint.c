/* Footprints: the memory a solver will allocate, added up from the same
 * descriptions its create uses, and the check of that sum against what the
 * machine has, so that create refuses a request that does not fit before
 * allocating anything (fields that fit one by one may not fit together). */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t meminfo_bytes(const char *key) {
  FILE *fp = fopen("/proc/meminfo", "r");
  if (!fp) return 0;
  char line[256];
  size_t v = 0, klen = strlen(key);
  while (fgets(line, sizeof line, fp))
    if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
      v = (size_t)strtoull(line + klen + 1, NULL, 10) * 1024;
      break;
    }
  fclose(fp);
  return v;
}

/* A number read from dir/name, or -1: absent, "max" or a v1 "unlimited"
 * (page-rounded LONG_MAX: anything from 2^62 up). */
static double cg_value(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "r");
  if (!fp) return -1;
  char buf[64] = "";
  char *end = NULL;
  double v = fgets(buf, sizeof buf, fp) ? strtod(buf, &end) : -1;
  fclose(fp);
  return end != buf && v >= 0 && v < 4611686018427387904.0 ? v : -1;
}

void strata__cgroup_memory(const char *root, const char *self,
                           size_t *limit, size_t *room) {
  *limit = *room = SIZE_MAX;
  FILE *fp = fopen(self, "r");
  if (!fp) return;
  char line[4096];
  while (fgets(line, sizeof line, fp)) {
    line[strcspn(line, "\n")] = '\0';
    /* "0::/path" (v2), or "N:a,memory,b:/path" (v1) */
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || c2[1] != '/') continue;
    *c1 = *c2 = '\0';
    const char *ctl = c1 + 1;
    int v2 = !strcmp(line, "0") && !*ctl, v1 = 0;
    for (const char *t = ctl; *t && !v2;) {
      size_t n = strcspn(t, ",");
      if (n == 6 && !strncmp(t, "memory", 6)) v1 = 1;
      t += n + (t[n] == ',');
    }
    if (!v1 && !v2) continue;
    const char *lim = v2 ? "memory.max" : "memory.limit_in_bytes";
    const char *use = v2 ? "memory.current" : "memory.usage_in_bytes";
    /* the cgroup and each ancestor up to the root: the tightest */
    char rel[4096];
    snprintf(rel, sizeof rel, "%s", c2 + 1);
    for (;;) {
      char dir[8192];
      snprintf(dir, sizeof dir, "%s%s%s", root, v2 ? "" : "/memory",
               strcmp(rel, "/") ? rel : "");
      const double l = cg_value(dir, lim), u = cg_value(dir, use);
      if (l >= 0 && (size_t)l < *limit) *limit = (size_t)l;
      if (l >= 0) {
        const size_t r = u >= 0 && u < l ? (size_t)(l - u) : u >= 0 ? 0
                                                                     : (size_t)l;
        if (r < *room) *room = r;
      }
      char *slash = strrchr(rel, '/');
      if (!slash || slash == rel) {
        if (!strcmp(rel, "/")) break;
        snprintf(rel, sizeof rel, "/");
      } else {
        *slash = '\0';
      }
    }
  }
  fclose(fp);
}

/* /proc/meminfo's figure bounded by the process's cgroup: 0 when neither
 * says. */
static size_t bounded(size_t meminfo, size_t cgroup) {
  if (cgroup == SIZE_MAX) return meminfo;
  return meminfo && meminfo < cgroup ? meminfo : cgroup;
}

size_t strata__host_available(void) {
  size_t limit, room;
  strata__cgroup_memory("/sys/fs/cgroup", "/proc/self/cgroup", &limit, &room);
  return bounded(meminfo_bytes("MemAvailable"), room);
}

size_t strata__host_total(void) {
  size_t limit, room;
  strata__cgroup_memory("/sys/fs/cgroup", "/proc/self/cgroup", &limit, &room);
  return bounded(meminfo_bytes("MemTotal"), limit);
}

size_t strata_host_memory_available(void) { return strata__host_available(); }

static size_t sat_add(size_t a, size_t b) {
  size_t r;
  return __builtin_add_overflow(a, b, &r) ? (size_t)-1 : r;
}

void strata__fp_device(strata__footprint *fp, size_t bytes) {
  fp->device = sat_add(fp->device, bytes);
}

void strata__fp_host(strata__footprint *fp, size_t bytes) {
  fp->host = sat_add(fp->host, bytes);
}

void strata__fp_host_peak(strata__footprint *fp, size_t bytes) {
  if (bytes > fp->host_peak) fp->host_peak = bytes;
}

strata_status strata__fp_field(strata_context *ctx, strata__footprint *fp,
                               const strata_field_desc *d) {
  size_t b = 0;
  strata_status s = strata_field_bytes(d, &b);
  if (s != STRATA_OK) {
    char v[96];
    snprintf(v, sizeof v, "%zu, %zu, %zu", d->n[0], d->n[1], d->n[2]);
    return strata__fail_arg(ctx, s, "n", v,
                            "the grid %zu x %zu x %zu (ghost %d) needs more "
                            "bytes than the address space holds", d->n[0],
                            d->n[1], d->n[2], d->ghost);
  }
  strata__fp_device(fp, b);
  return STRATA_OK;
}

void strata__fp_staging(const strata_context *ctx, strata__footprint *fp,
                        const strata_field_desc *d) {
  size_t b = 0;
  if (!ctx->be->host_accessible && strata_field_bytes(d, &b) == STRATA_OK)
    strata__fp_host_peak(fp, b);
}

void strata__fp_result(const strata_context *ctx, const strata__footprint *fp,
                       size_t *host, size_t *device) {
  (void)ctx;
  if (host) *host = sat_add(fp->host, fp->host_peak);
  if (device) *device = fp->device;
}

static double gib(size_t b) { return (double)b / 1073741824.0; }

strata_status strata__fp_check(strata_context *ctx, const char *who,
                               const strata__footprint *fp) {
  size_t host = 0, dev = 0;
  strata__fp_result(ctx, fp, &host, &dev);
  const size_t avail = strata__host_available();
  if (ctx->be->host_accessible) {
    /* the backend's memory is host memory: one budget */
    const size_t need = sat_add(host, dev);
    if (avail && need > avail)
      return strata__fail(ctx, STRATA_ENOMEM,
                          "%s: needs %zu bytes (%.2f GiB) of memory (fields "
                          "%.2f GiB, host buffers %.2f GiB) but %zu bytes "
                          "(%.2f GiB) are available; reduce the grid",
                          who, need, gib(need), gib(dev), gib(host), avail,
                          gib(avail));
    return STRATA_OK;
  }
  strata_device_info di;
  memset(&di, 0, sizeof di);
  if (ctx->be->info && ctx->be->info(ctx, &di) == STRATA_OK &&
      di.memory_free && dev > di.memory_free)
    return strata__fail(ctx, STRATA_ENOMEM,
                        "%s: needs %zu bytes (%.2f GiB) of %s memory but "
                        "%s has %zu bytes (%.2f GiB) free; reduce the grid",
                        who, dev, gib(dev), ctx->be->name, di.name,
                        di.memory_free, gib(di.memory_free));
  if (avail && host > avail)
    return strata__fail(ctx, STRATA_ENOMEM,
                        "%s: needs %zu bytes (%.2f GiB) of host memory "
                        "besides its %.2f GiB of %s memory, but %zu bytes "
                        "(%.2f GiB) are available; reduce the grid",
                        who, host, gib(host), gib(dev), ctx->be->name, avail,
                        gib(avail));
  return STRATA_OK;
}
