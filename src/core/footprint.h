/* Footprints: what a solver's create will allocate, added up before it
 * allocates anything, and the memory the machine has for it (the library's
 * internal interface, included through internal.h). */
#ifndef STRATA_CORE_FOOTPRINT_H
#define STRATA_CORE_FOOTPRINT_H

#include "strata.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a solver's create will allocate, added up before it allocates
 * anything: device = bytes asked of the backend's alloc (fields with their
 * ghosts, profiles, tables), host = host memory the solver holds besides,
 * host_peak = the largest transient host buffer of create or the first
 * step (staging a field through the host), counted once. */
typedef struct strata__footprint {
  size_t device, host, host_peak;
} strata__footprint;
/* MemAvailable and MemTotal of /proc/meminfo in bytes, each bounded by the
 * process's cgroup (the room its memory limit leaves, the limit); 0 when
 * unknown. */
size_t strata__host_available(void);
size_t strata__host_total(void);
/* The tightest memory limit over the cgroup that the file self
 * (/proc/self/cgroup's format) names and its ancestors, under root
 * (/sys/fs/cgroup; v2 memory.max / memory.current, v1
 * memory/.../memory.limit_in_bytes / memory.usage_in_bytes), and the room
 * it leaves (limit - usage); both SIZE_MAX when nothing limits. */
void strata__cgroup_memory(const char *root, const char *self,
                           size_t *limit, size_t *room);
void strata__fp_device(strata__footprint *fp, size_t bytes);
void strata__fp_host(strata__footprint *fp, size_t bytes);
void strata__fp_host_peak(strata__footprint *fp, size_t bytes);
/* Adds a field of description d (device); a description whose bytes
 * overflow is refused (STRATA_EOVERFLOW naming n). */
strata_status strata__fp_field(strata_context *ctx, strata__footprint *fp,
                               const strata_field_desc *d);
/* Where the backend's memory is not host memory, a fill or ghosted
 * transfer of a field of description d stages it whole through the host. */
void strata__fp_staging(const strata_context *ctx, strata__footprint *fp,
                        const strata_field_desc *d);
/* The totals: host (held plus the peak) and device. */
void strata__fp_result(const strata_context *ctx, const strata__footprint *fp,
                       size_t *host, size_t *device);
/* STRATA_OK when fp fits what the machine has now (host memory available;
 * the device's free memory, from the backend's info), else STRATA_ENOMEM
 * with a message from who naming the bytes needed and available.  On a
 * backend whose memory is host memory, device and host share one budget. */
strata_status strata__fp_check(strata_context *ctx, const char *who,
                               const strata__footprint *fp);

#ifdef __cplusplus
}
#endif
#endif
