/* The CUDA autotuner and its cache file.
 *
 * For the operator's shape, the precision, the size class (each extent
 * rounded up: to a power of two up to 64, then to a multiple of 64) and the
 * device, the fastest (variant, block, z chunks) measured on first use,
 * among the candidates whose output matches the plain kernel's, remembered
 * on the context and in a small text file.  The cache never fails a run: a
 * missing, unreadable or damaged file is ignored and rewritten; an entry
 * that no longer launches is dropped. */
#include "cuda_device.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

/* The size class of an extent: powers of two up to 64, then multiples of
 * 64.  (Powers of two throughout lumped 376 with 512, and a launch shape
 * tuned at one size can run much slower at the other.) */
size_t size_class(size_t n) {
  if (n > 64) return (n + 63) / 64 * 64;
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

void tune_key(const strata__cuda_state *st, const strata_stencil *op,
              const strata_field *in, char *key, size_t n) {
  static const char *const kinds[] = {"?", "star", "deriv", "box", "sym27"};
  char dev[96];
  snprintf(dev, sizeof dev, "%s", st->prop.name);
  for (char *c = dev; *c; c++)
    if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '|') *c = '_';
  const int k = op->kind >= 1 && op->kind <= 4 ? (int)op->kind : 0;
  snprintf(key, n, "%s|d%d|r%d|a%d|f%d|%zux%zux%zu|%s|cc%d%d", kinds[k],
           op->dims, op->radius,
           op->kind == STRATA_STENCIL_DERIVATIVE ? op->axis : 0,
           (int)in->d.precision * 8, size_class(in->d.n[0]),
           size_class(in->d.n[1]), size_class(in->d.n[2]), dev,
           st->prop.major, st->prop.minor);
}

strata__tune_entry *tune_find(strata__cuda_state *st, const char *key) {
  for (int i = 0; i < st->ntune; i++)
    if (strcmp(st->tune[i].key, key) == 0) return &st->tune[i];
  return NULL;
}

void tune_put(strata__cuda_state *st, const strata__tune_entry *e) {
  strata__tune_entry *t = tune_find(st, e->key);
  if (!t) {
    if (st->ntune == STRATA__TUNE_MAX) { /* drop the oldest */
      memmove(&st->tune[0], &st->tune[1],
              sizeof(st->tune[0]) * (STRATA__TUNE_MAX - 1));
      st->ntune--;
    }
    t = &st->tune[st->ntune++];
  }
  *t = *e;
  st->tune_dirty = 1;
}

void tune_drop(strata__cuda_state *st, const char *key) {
  strata__tune_entry *t = tune_find(st, key);
  if (!t) return;
  const long i = t - st->tune;
  memmove(t, t + 1, sizeof(*t) * (size_t)(st->ntune - i - 1));
  st->ntune--;
  st->tune_dirty = 1;
}

void mkdirs_for(const char *path) {
  char d[1024];
  snprintf(d, sizeof d, "%s", path);
  char *slash = strrchr(d, '/');
  if (!slash || slash == d) return;
  *slash = '\0';
  for (char *c = d + 1; *c; c++)
    if (*c == '/') {
      *c = '\0';
      mkdir(d, 0755);
      *c = '/';
    }
  mkdir(d, 0755);
}

/* Parses one cache line "key\tvariant\tbx\tby\tbz\tzchunks\tus"; 0 when
 * malformed. */
int parse_line(char *line, strata__tune_entry *e) {
  char *f[8];
  int n = 0;
  for (char *tok = strtok(line, "\t\r\n"); tok && n < 8;
       tok = strtok(NULL, "\t\r\n"))
    f[n++] = tok;
  if (n != 7 || strlen(f[0]) >= sizeof e->key) return 0;
  int v = -1;
  for (int i = 0; i < STRATA__V_COUNT; i++)
    if (strcmp(f[1], strata__cuda_variant_names[i]) == 0) v = i;
  if (v < 0) return 0;
  char *end;
  for (int a = 0; a < 3; a++) {
    long b = strtol(f[2 + a], &end, 10);
    if (*end || b < 1 || b > 1024) return 0;
    e->block[a] = (int)b;
  }
  long zc = strtol(f[5], &end, 10);
  if (*end || zc < 0 || zc > 4096) return 0;
  e->zchunks = (int)zc;
  e->us = strtod(f[6], &end);
  if (*end || !(e->us >= 0)) return 0;
  snprintf(e->key, sizeof e->key, "%s", f[0]);
  e->variant = v;
  return 1;
}

} // namespace

void strata__cuda_tune_init(strata_context *ctx) {
  strata__cuda_state *st = strata__cu_state(ctx);
  st->ntune = 0;
  st->tune_dirty = 0;
  st->cache_path[0] = '\0';
  snprintf(st->cache_path, sizeof st->cache_path, "%s", ctx->tune_cache);
  if (!st->cache_path[0]) return;
  FILE *fp = fopen(st->cache_path, "r");
  if (!fp) return;
  char line[512];
  int bad = 0;
  while (fgets(line, sizeof line, fp)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    strata__tune_entry e;
    if (parse_line(line, &e))
      tune_put(st, &e);
    else
      bad = 1;
  }
  fclose(fp);
  st->tune_dirty = bad; /* rewrite a damaged file */
}

void strata__cuda_tune_save(strata_context *ctx) {
  strata__cuda_state *st = strata__cu_state(ctx);
  if (!st || !st->tune_dirty || !st->cache_path[0]) return;
  mkdirs_for(st->cache_path);
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", st->cache_path, (long)getpid());
  FILE *fp = fopen(tmp, "w");
  if (!fp) return; /* never fails a run */
  int ok = fputs("# strata CUDA autotune cache v1: key\tvariant\tblock x\t"
                 "y\tz\tz chunks (0 = model)\tmicroseconds\n", fp) >= 0;
  for (int i = 0; i < st->ntune && ok; i++) {
    const strata__tune_entry *e = &st->tune[i];
    char line[STRATA__TUNE_KEY + 128];
    snprintf(line, sizeof line, "%s\t%s\t%d\t%d\t%d\t%d\t%.3f\n", e->key,
             strata__cuda_variant_names[e->variant], e->block[0], e->block[1],
             e->block[2], e->zchunks, e->us);
    ok = fputs(line, fp) >= 0;
  }
  ok = fclose(fp) == 0 && ok;
  if (ok && rename(tmp, st->cache_path) == 0)
    st->tune_dirty = 0;
  else
    remove(tmp);
}

namespace {

typedef struct {
  int v;
  int b[3];
  int zc; /* z chunks, 0 = model */
} candidate;

/* The launch shapes timed besides each variant's default (those of
 * variants outside m are left out), appended to c[0..n). */
int add_shapes(const strata_stencil *op, unsigned m, candidate *c, int n,
               int max) {
#define ADD(var, x, y, z)                                                      \
  do {                                                                         \
    if ((m >> (var) & 1) && n < max) c[n++] = candidate{(var), {(x), (y), (z)}, 0}; \
  } while (0)
  if (op->dims == 3) {
    ADD(STRATA__V_STREAM, 32, 8, 1);
    ADD(STRATA__V_STREAMV, 32, 8, 1);
    ADD(STRATA__V_STREAMV, 16, 8, 1);
    ADD(STRATA__V_STREAMV, 32, 4, 2);
    ADD(STRATA__V_STREAMV, 32, 8, 2);
    ADD(STRATA__V_STREAMCP, 32, 4, 1);
    ADD(STRATA__V_STREAMCP, 16, 8, 1);
    ADD(STRATA__V_STREAMCP, 32, 16, 1);
    ADD(STRATA__V_STREAMCP, 32, 4, 2);
    ADD(STRATA__V_STREAMCP, 32, 8, 2);
    ADD(STRATA__V_STREAMCP, 16, 8, 2);
    ADD(STRATA__V_STREAMRQ, 32, 4, 1);
    ADD(STRATA__V_STREAMRQ, 16, 8, 1);
    ADD(STRATA__V_STREAMRQ, 32, 8, 1);
    ADD(STRATA__V_STREAMRQ, 32, 4, 2);
    ADD(STRATA__V_STREAMRQ, 16, 8, 2);
    /* streamtma: block z is the rows per thread (1 or 2) */
    ADD(STRATA__V_STREAMTMA, 32, 16, 1);
    ADD(STRATA__V_STREAMTMA, 32, 8, 1);
    ADD(STRATA__V_STREAMTMA, 32, 4, 1);
    ADD(STRATA__V_STREAMTMA, 32, 8, 2);
    ADD(STRATA__V_STREAMTMA, 32, 4, 2);
    ADD(STRATA__V_STREAMTMA, 32, 16, 2); /* taller tiles: less y halo */
    ADD(STRATA__V_STREAMWS, 32, 16, 1);
    ADD(STRATA__V_STREAMWS, 16, 32, 1); /* taller tiles: less y halo */
    ADD(STRATA__V_STREAMWS, 32, 8, 1);
    ADD(STRATA__V_STREAMWS, 32, 8, 2);
    ADD(STRATA__V_STREAMWS, 32, 15, 1); /* 16 warps with the copier */
    ADD(STRATA__V_STREAMWS, 32, 12, 1); /* 13: a 128-register cap */
    ADD(STRATA__V_KD, 32, 6, 1);
    ADD(STRATA__V_KDV, 32, 8, 1);
    ADD(STRATA__V_KDV, 16, 8, 1);
    ADD(STRATA__V_KDV, 32, 16, 1);
    ADD(STRATA__V_KDV, 32, 4, 2);
    ADD(STRATA__V_KDV, 32, 8, 2);
    ADD(STRATA__V_KDV, 16, 8, 2);
    ADD(STRATA__V_KDCP, 32, 4, 1);
    ADD(STRATA__V_KDCP, 32, 16, 1);
    ADD(STRATA__V_KDCP, 16, 8, 1);
    /* kdcp: block z is the rows per thread (1, 2 or 4) */
    ADD(STRATA__V_KDCP, 32, 8, 2);
    ADD(STRATA__V_KDCP, 32, 16, 2);
    ADD(STRATA__V_KDCP, 32, 4, 4);
    ADD(STRATA__V_KDCP, 32, 8, 4);
    /* kdtma / kdws: block z is the rows per thread */
    ADD(STRATA__V_KDTMA, 32, 8, 2);
    ADD(STRATA__V_KDTMA, 32, 16, 1);
    ADD(STRATA__V_KDTMA, 32, 8, 4);
    ADD(STRATA__V_KDTMA, 32, 16, 2);
    ADD(STRATA__V_KDWS, 32, 8, 2);
    ADD(STRATA__V_KDWS, 32, 4, 4);
    ADD(STRATA__V_KDWS, 32, 8, 4);
    ADD(STRATA__V_KDWS, 32, 8, 1);
    if (op->kind == STRATA_STENCIL_DERIVATIVE) {
      ADD(STRATA__V_PENCIL, 32, 4, 1);
      ADD(STRATA__V_PENCIL, 16, 8, 1);
      ADD(STRATA__V_PENCIL, 64, 4, 1);
    }
    /* vec: block z is the z points per thread (1, 2 or 4) */
    ADD(STRATA__V_VEC, 32, 8, 1);
    ADD(STRATA__V_VEC, 32, 8, 2);
    ADD(STRATA__V_VEC, 32, 4, 4);
    ADD(STRATA__V_VEC, 64, 4, 2);
    ADD(STRATA__V_VEC, 32, 8, 4);
    /* vecz: block z is the rows per thread */
    ADD(STRATA__V_VECZ, 32, 1, 4);
    ADD(STRATA__V_VECZ, 32, 4, 2);
    ADD(STRATA__V_VECZ, 32, 4, 1);
    ADD(STRATA__V_VECZ, 64, 1, 4);
    ADD(STRATA__V_VECZ, 32, 8, 1);
  } else if (op->dims == 2) {
    ADD(STRATA__V_SMEM, 32, 4, 1);
    ADD(STRATA__V_SMEM, 64, 4, 1);
    ADD(STRATA__V_NAIVE, 64, 4, 1);
    /* vec: block z is the rows per thread (stars of r >= 2: 2 or 4) */
    ADD(STRATA__V_VEC, 32, 4, 4);
    ADD(STRATA__V_VEC, 64, 4, 2);
    if (op->kind == STRATA_STENCIL_BOX || op->radius == 1)
      ADD(STRATA__V_VEC, 32, 8, 1);
    if (op->kind == STRATA_STENCIL_DERIVATIVE) {
      ADD(STRATA__V_PENCIL, 32, 4, 1);
      ADD(STRATA__V_PENCIL, 64, 1, 1);
    }
  } else {
    ADD(STRATA__V_SMEM, 512, 1, 1);
    ADD(STRATA__V_NAIVE, 512, 1, 1);
    ADD(STRATA__V_PENCIL, 128, 1, 1);
  }
#undef ADD
  return n;
}

/* Appends the z chunkings timed besides the model's to the first k
 * candidates. */
int add_chunks(const strata_stencil *op, candidate *c, int k, int max) {
  /* the fast 2.5D kernels also with a single z chunk: every block walks
   * the whole depth, all of them in step (DRAM locality vs. fill) */
  const int base = k;
  for (int i = 0; i < base && k < max; i++)
    if (c[i].v == STRATA__V_STREAMV || c[i].v == STRATA__V_STREAMCP ||
        c[i].v == STRATA__V_STREAMRQ || c[i].v == STRATA__V_STREAMTMA ||
        c[i].v == STRATA__V_STREAMWS || c[i].v == STRATA__V_KDTMA ||
        c[i].v == STRATA__V_KDWS || c[i].v == STRATA__V_VECZ ||
        c[i].v == STRATA__V_KDV || c[i].v == STRATA__V_KDCP ||
        (c[i].v == STRATA__V_PENCIL && op->axis != 0)) {
      c[k] = c[i];
      c[k++].zc = 1;
    }
  /* the tensor-copy kernels also with 2 and 4 chunks (a whole-depth walk
   * of 128 tiles leaves 4 of 132 SMs idle at 512^3), and the pencils that
   * walk y or z (fewer chunks than the occupancy model's can be a little
   * faster for them) */
  for (int i = 0; i < base && k + 2 <= max; i++)
    if (c[i].v == STRATA__V_STREAMTMA || c[i].v == STRATA__V_STREAMWS ||
        c[i].v == STRATA__V_KDTMA || c[i].v == STRATA__V_KDWS ||
        (c[i].v == STRATA__V_PENCIL && op->axis != 0)) {
      c[k] = c[i];
      c[k++].zc = 2;
      c[k] = c[i];
      c[k++].zc = 4;
    }
  /* vecz also in short columns (16 and 64 chunks: 32 and 8 planes at 512):
   * closer to vec's plain-grid order, which suits the 7-point best */
  for (int i = 0; i < base && k + 2 <= max; i++)
    if (c[i].v == STRATA__V_VECZ) {
      c[k] = c[i];
      c[k++].zc = 16;
      c[k] = c[i];
      c[k++].zc = 64;
    }
  /* the radius-4 star's streamcp also with 4 and 8 chunks: its warm-up is
   * 8 planes, and the model's one-wave choice leaves SMs idle at sizes
   * like 376^3 */
  for (int i = 0; i < base && op->radius >= 4 && k + 2 <= max; i++)
    if (c[i].v == STRATA__V_STREAMCP && op->kind == STRATA_STENCIL_STAR) {
      c[k] = c[i];
      c[k++].zc = 4;
      c[k] = c[i];
      c[k++].zc = 8;
    }
  return k;
}

/* The (variant, block) pairs timed for op. */
int candidates(const strata_stencil *op, int prec, int major, candidate *c,
               int max) {
  const unsigned m = strata__cu_applicable(op, major);
  int n = 0;
  candidate d;
  for (int v = 0; v < STRATA__V_COUNT; v++) {
    if (!(m >> v & 1)) continue;
    d.v = v;
    d.zc = 0;
    strata__cu_default_block(v, op, prec, d.b);
    if (n < max) c[n++] = d;
  }
  n = add_shapes(op, m, c, n, max);
  /* drop duplicates (a default block listed again) */
  int k = 0;
  for (int i = 0; i < n; i++) {
    int dup = 0;
    for (int j = 0; j < k; j++)
      if (c[j].v == c[i].v && c[j].b[0] == c[i].b[0] &&
          c[j].b[1] == c[i].b[1] && c[j].b[2] == c[i].b[2])
        dup = 1;
    if (!dup) c[k++] = c[i];
  }
  return add_chunks(op, c, k, max);
}

/* ---- checking the candidates' outputs ------------------------------------ */

/* max |x| of non-negative doubles through their bit patterns (which order
 * as the values do); NaN counts as +inf. */
__device__ __forceinline__ void max_into(unsigned long long *m, double x) {
  if (x != x) x = __longlong_as_double(0x7ff0000000000000LL);
  atomicMax(m, (unsigned long long)__double_as_longlong(x));
}

/* The interior [0, n) of a field (strides sy, sz from its point (0,0,0)),
 * or with halo (r.x, r.y or r.z > 0) the box [-r, n + r): v == NULL
 * poisons the interior with NaN; else m[0] gets max |p - v| (NaN: +inf)
 * and m[1] max |v|; with a halo only m[1] = max |p| (the input around the
 * interior). */
template <typename T>
__global__ void k_tune_check(T *p, const T *v, long long sy, long long sz,
                             int nx, int ny, int nz, int3 rr,
                             unsigned long long *m) {
  const int wy = ny + 2 * rr.y, wz = nz + 2 * rr.z;
  const bool halo = rr.x + rr.y + rr.z > 0;
  const long long rows = (long long)wy * wz;
  double dmax = 0, vmax = 0;
  for (long long q = blockIdx.x; q < rows; q += gridDim.x) {
    const int j = (int)(q % wy) - rr.y, k = (int)(q / wy) - rr.z;
    T *pr = p + j * sy + k * sz;
    const T *vr = v ? v + j * sy + k * sz : nullptr;
    for (int i = (int)threadIdx.x - rr.x; i < nx + rr.x; i += blockDim.x) {
      if (halo) { /* NaN counts as +inf: then nothing is rejected */
        const double a = fabs((double)pr[i]);
        vmax = a == a ? fmax(vmax, a) : __longlong_as_double(0x7ff0000000000000LL);
      } else if (!v) {
        pr[i] = (T)__longlong_as_double(0x7ff8000000000000LL);
      } else {
        const double d = fabs((double)pr[i] - (double)vr[i]);
        dmax = d == d ? fmax(dmax, d)
                      : __longlong_as_double(0x7ff0000000000000LL);
        vmax = fmax(vmax, fabs((double)vr[i]));
      }
    }
  }
  if (v || halo) { /* the warp's maxima, then one atomic each */
    for (int o = 16; o > 0; o >>= 1) {
      dmax = fmax(dmax, __shfl_xor_sync(0xffffffffu, dmax, o));
      vmax = fmax(vmax, __shfl_xor_sync(0xffffffffu, vmax, o));
    }
    if ((threadIdx.x & 31) == 0) {
      if (v) max_into(&m[0], dmax);
      max_into(&m[1], vmax);
    }
  }
}

/* An upper bound of the sum of |weights| of op (the fields a kind does not
 * use are zero). */
double weight_sum(const strata_stencil *op) {
  double s = fabs(op->center);
  for (int a = 0; a < 3; a++)
    for (int k = 1; k <= STRATA_MAX_RADIUS; k++) s += 2 * fabs(op->coef[a][k]);
  for (int k = 0; k < 4; k++) s += 12 * fabs(op->sym[k]);
  for (int k = 0; k < 27; k++) s += fabs(op->box[k]);
  return s;
}

/* The tuner's reference: op applied by the naive kernel (one thread a
 * point, every read from global memory) into scratch memory laid out as
 * the output, and the bound a candidate's output must meet against it. */
struct tune_ref {
  void *out = nullptr;            /* interior (0,0,0) of the reference */
  unsigned long long *m = nullptr; /* two maxima (device) */
  double tol = 0;
};

template <typename T>
strata_status check_launch(const strata__launch *L, T *p, const T *v,
                           long long sy, long long sz, int r,
                           unsigned long long *m) {
  const int3 rr = make_int3(r, L->g.dims >= 2 ? r : 0, L->g.dims >= 3 ? r : 0);
  k_tune_check<T><<<L->sms * 8, 256, 0, L->stream>>>(
      p, v, sy, sz, L->g.nx, L->g.ny, L->g.nz, rr, m);
  STRATA__LAUNCHED(L->ctx, "autotune: output check kernel launch");
  return STRATA_OK;
}

strata_status run_check(const strata__launch *L, void *p, const void *v,
                        long long sy, long long sz, int r,
                        unsigned long long *m) {
  if (L->prec == 8)
    return check_launch<double>(L, (double *)p, (const double *)v, sy, sz, r,
                                m);
  return check_launch<float>(L, (float *)p, (const float *)v, sy, sz, r, m);
}

/* Reads the two maxima (and zeroes them for the next check). */
strata_status read_max(const strata__launch *L, unsigned long long *m,
                       double out[2]) {
  unsigned long long h[2];
  STRATA__CU(L->ctx, cudaMemcpyAsync(h, m, sizeof h, cudaMemcpyDeviceToHost,
                                     L->stream));
  STRATA__CU(L->ctx, cudaMemsetAsync(m, 0, sizeof h, L->stream));
  STRATA__CU(L->ctx, cudaStreamSynchronize(L->stream));
  memcpy(&out[0], &h[0], sizeof(double));
  memcpy(&out[1], &h[1], sizeof(double));
  return STRATA_OK;
}

/* Sets up the reference; without memory for it (the output's size again)
 * the tuner goes on unchecked (ref->out stays NULL). */
strata_status ref_init(const strata__launch *L, const strata_stencil *op,
                       tune_ref *ref) {
  strata_context *ctx = L->ctx;
  const size_t es = (size_t)L->prec;
  const size_t bytes =
      ((size_t)L->g.osz * (L->g.nz - 1) + (size_t)L->g.osy * (L->g.ny - 1) +
       (size_t)L->g.nx) * es;
  if (cudaMalloc(&ref->out, bytes) != cudaSuccess) {
    cudaGetLastError();
    ref->out = nullptr;
    return STRATA_OK;
  }
  if (cudaMalloc(&ref->m, 2 * sizeof(unsigned long long)) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(ref->out);
    ref->out = nullptr;
    return STRATA_OK;
  }
  STRATA__CU(ctx, cudaMemsetAsync(ref->m, 0, 2 * sizeof(unsigned long long),
                                  L->stream));
  strata__launch R = *L;
  R.out = ref->out;
  strata__cu_default_block(STRATA__V_NAIVE, op, L->prec, R.block);
  R.zchunks = 0;
  strata_status s = strata__cu_run_variant(STRATA__V_NAIVE, &R, op);
  if (s == STRATA_EINVAL || s == STRATA_ENOTSUP) { /* go on unchecked */
    strata__error_clear(ctx);
    cudaFree(ref->out);
    ref->out = nullptr;
    return STRATA_OK;
  }
  if (s != STRATA_OK) return s;
  /* |a candidate - the reference| <= 64 eps (sum |w|) max |in| near the
   * interior: any order of the same sums is inside it by far, an unwritten
   * point (NaN), a wrong neighbour or a wrong weight is not (on data that
   * is not constant) */
  s = run_check(L, (void *)L->in, nullptr, L->g.sy, L->g.sz, op->radius,
                ref->m);
  if (s != STRATA_OK) return s;
  double mx[2];
  s = read_max(L, ref->m, mx);
  if (s != STRATA_OK) return s;
  const double eps = L->prec == 8 ? 2.220446049250313e-16 : 1.1920929e-07;
  ref->tol = 64 * eps * weight_sum(op) * mx[1];
  if (!(ref->tol == ref->tol)) ref->tol = INFINITY; /* 0 x inf */
  return STRATA_OK;
}

void ref_free(tune_ref *ref) {
  if (ref->out) cudaFree(ref->out);
  if (ref->m) cudaFree(ref->m);
  ref->out = nullptr;
  ref->m = nullptr;
}

/* The tuning switch tune_break (tests): variants, joined by '+', whose runs
 * inside the tuner are skipped, leaving the poisoned output, as a kernel
 * that writes nothing would. */
bool tune_broken(const strata_context *ctx, int v) {
  char buf[256];
  const char *e = strata__tuning(ctx, "tune_break", buf, sizeof buf);
  if (!e) return false;
  const char *name = strata__cuda_variant_names[v];
  const size_t n = strlen(name);
  for (const char *p = e; *p;) {
    const char *c = strchr(p, '+');
    const size_t len = c ? (size_t)(c - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return true;
    if (!c) break;
    p = c + 1;
  }
  return false;
}

/* Mean milliseconds of reps back-to-back runs of candidate cd (broken:
 * tune_break's, which run nothing). */
strata_status time_candidate(strata__launch *L, const strata_stencil *op,
                             const candidate &cd, bool broken, int reps,
                             double *ms_out) {
  strata_context *ctx = L->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  memcpy(L->block, cd.b, sizeof cd.b);
  L->zchunks = cd.zc;
  strata_status s = STRATA_OK;
  STRATA__CU(ctx, cudaEventRecord(st->ev0, st->stream));
  for (int r = 0; r < reps && s == STRATA_OK; r++)
    s = broken ? STRATA_OK : strata__cu_run_variant(cd.v, L, op);
  if (s != STRATA_OK) return s;
  STRATA__CU(ctx, cudaEventRecord(st->ev1, st->stream));
  STRATA__CU(ctx, cudaEventSynchronize(st->ev1));
  float ms = 0;
  STRATA__CU(ctx, cudaEventElapsedTime(&ms, st->ev0, st->ev1));
  *ms_out = ms / reps;
  return STRATA_OK;
}

/* Times every candidate on the caller's own fields (out is overwritten by
 * each, then by the winner) and records the fastest of those whose output
 * matches the naive kernel's (each candidate's first run goes into an
 * output poisoned with NaN, so points it does not write show).  The first
 * pass times each candidate once (3 runs); those within kTuneClose of the
 * fastest (at most kTuneFinal of them) are timed again, in turns, and the
 * best of each one's turns decides.  One pass alone picked one z chunk
 * where another ran faster (docs/performance.md). */
constexpr double kTuneClose = 0.05;
constexpr int kTuneFinal = 6;

strata_status tune(strata_context *ctx, strata__launch *L,
                   const strata_stencil *op, const char *key,
                   strata__tune_entry *best) {
  strata__cuda_state *st = strata__cu_state(ctx);
  candidate c[160]; /* radius-1 stars list about 100 */
  double t[160];    /* first-pass milliseconds a run, < 0: not valid */
  const int n = candidates(op, L->prec, st->prop.major, c, 160);
  tune_ref ref;
  strata_status s0 = ref_init(L, op, &ref);
  if (s0 != STRATA_OK) {
    ref_free(&ref);
    return s0;
  }
  struct guard {
    tune_ref *r;
    ~guard() { ref_free(r); }
  } g{&ref};
  double first_best = 1e300;
  for (int i = 0; i < n; i++) {
    t[i] = -1;
    memcpy(L->block, c[i].b, sizeof c[i].b);
    L->zchunks = c[i].zc;
    if (ref.out) {
      strata_status sp =
          run_check(L, L->out, nullptr, L->g.osy, L->g.osz, 0, ref.m);
      if (sp != STRATA_OK) return sp;
    }
    const bool broken = tune_broken(ctx, c[i].v);
    strata_status s = broken ? STRATA_OK : strata__cu_run_variant(c[i].v, L, op);
    if (s == STRATA_EINVAL || s == STRATA_ENOTSUP) continue; /* shape unfit */
    if (s != STRATA_OK) return s;
    if (ref.out) { /* wrong results never win */
      s = run_check(L, L->out, ref.out, L->g.osy, L->g.osz, 0, ref.m);
      double mx[2];
      if (s == STRATA_OK) s = read_max(L, ref.m, mx);
      if (s != STRATA_OK) return s;
      if (!(mx[0] <= ref.tol)) continue;
    }
    s = time_candidate(L, op, c[i], broken, 3, &t[i]);
    if (s != STRATA_OK) return s;
    if (t[i] < first_best) first_best = t[i];
  }
  strata__error_clear(ctx);
  if (first_best == 1e300)
    return strata__fail(ctx, STRATA_EINVAL,
                        "autotune: no variant could run this operator");
  /* the finalists: the fastest first, then the others close to it */
  int fin[kTuneFinal], nf = 0;
  while (nf < kTuneFinal) { /* in increasing time */
    int k = -1;
    for (int i = 0; i < n; i++) {
      bool taken = false;
      for (int f = 0; f < nf; f++) taken = taken || fin[f] == i;
      if (!taken && t[i] >= 0 && t[i] <= first_best * (1 + kTuneClose) &&
          (k < 0 || t[i] < t[k]))
        k = i;
    }
    if (k < 0) break;
    fin[nf++] = k;
  }
  double fbest[kTuneFinal];
  for (int f = 0; f < nf; f++) fbest[f] = t[fin[f]];
  if (nf > 1)
    for (int turn = 0; turn < 3; turn++)
      for (int f = 0; f < nf; f++) {
        double ms = 0;
        strata_status s = time_candidate(L, op, c[fin[f]],
                                         tune_broken(ctx, c[fin[f]].v), 5, &ms);
        if (s != STRATA_OK) return s;
        if (ms < fbest[f]) fbest[f] = ms;
      }
  int w = 0;
  for (int f = 1; f < nf; f++)
    if (fbest[f] < fbest[w]) w = f;
  const candidate &cw = c[fin[w]];
  best->variant = cw.v;
  best->zchunks = cw.zc;
  memcpy(best->block, cw.b, sizeof cw.b);
  snprintf(best->key, sizeof best->key, "%s", key);
  best->us = fbest[w] * 1000.0;
  return STRATA_OK;
}
} // namespace

/* op on L (whose block and z chunks it sets) with the tuned choice for in's
 * size class: the cached one, else the tuner's, which is then cached. */
strata_status strata__cuda_apply_tuned(strata__launch *L,
                                       const strata_stencil *op,
                                       const strata_field *in) {
  strata_context *ctx = L->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  const unsigned m = strata__cu_applicable(op, st->prop.major);
  strata_status s;
  char key[STRATA__TUNE_KEY];
  tune_key(st, op, in, key, sizeof key);
  strata__tune_entry *e = tune_find(st, key);
  if (e && (m >> e->variant & 1)) {
    memcpy(L->block, e->block, sizeof L->block);
    L->zchunks = e->zchunks;
    s = strata__cu_run_variant(e->variant, L, op);
    if (s != STRATA_EINVAL && s != STRATA_ENOTSUP) return s;
    tune_drop(st, key); /* a stale entry: tune again */
  }
  strata__tune_entry best;
  s = tune(ctx, L, op, key, &best);
  if (s != STRATA_OK) return s;
  tune_put(st, &best);
  strata__cuda_tune_save(ctx);
  memcpy(L->block, best.block, sizeof L->block);
  L->zchunks = best.zchunks;
  return strata__cu_run_variant(best.variant, L, op);
}

