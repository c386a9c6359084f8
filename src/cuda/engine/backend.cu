/* The CUDA backend: its table, device selection, a stream, device memory
 * (cudaMalloc only), and the device versions of the fills, norms and ghost
 * filling.  Host transfers are in transfer.cu, operators in apply.cu and
 * autotune.cu. */
#include "cuda_device.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Bytes allocated past every field: vector loads near a row's end may run
 * up to one 16-byte vector (plus a halo vector) past the last ghost. */
#define STRATA__CUDA_SLACK 512

strata_status strata__cuda_fail(strata_context *ctx, cudaError_t e,
                                const char *what, const char *file, int line) {
  const char *base = strrchr(file, '/');
  return strata__fail(ctx, STRATA_EDEVICE, "CUDA error in %s (%s:%d): %s: %s",
                      what, base ? base + 1 : file, line, cudaGetErrorName(e),
                      cudaGetErrorString(e));
}

namespace {

__global__ void k_probe(int *p) {
  if (p) *p = 1;
}

/* Whether this build carries machine code (or PTX) for the current device. */
cudaError_t image_ok(void) {
  cudaFuncAttributes a;
  return cudaFuncGetAttributes(&a, k_probe);
}

/* ---- fills -------------------------------------------------------------- */

template <typename T>
__global__ void k_fill_value(T *p, long long n, T v) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    p[i] = v;
}

__device__ __forceinline__ unsigned long long mix64(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Exactly strata__rand01 and the host's lo + w * r (no contraction), so the
 * device field equals the CPU engine's bit for bit. */
template <typename T>
__global__ void k_fill_random(T *origin, int gx, int gy, int gz, int g0,
                              int g1, int g2, long long px, long long pxy,
                              unsigned long long seed, double lo, double w) {
  const int xg = blockIdx.x * blockDim.x + threadIdx.x;
  if (xg >= gx) return;
  const long long rows = (long long)gy * gz;
  for (long long r = blockIdx.y * (long long)blockDim.y + threadIdx.y; r < rows;
       r += (long long)gridDim.y * blockDim.y) {
    const int yg = (int)(r % gy), zg = (int)(r / gy);
    const unsigned long long idx =
        (unsigned long long)xg +
        (unsigned long long)gx * ((unsigned long long)yg +
                                  (unsigned long long)gy * (unsigned long long)zg);
    const double u =
        __dmul_rn(__ull2double_rn(mix64(seed ^ mix64(idx)) >> 11),
                  1.0 / 9007199254740992.0);
    const double v = __dadd_rn(lo, __dmul_rn(w, u));
    origin[(xg - g0) + px * (long long)(yg - g1) + pxy * (long long)(zg - g2)] =
        (T)v;
  }
}

/* ---- ghost layers ---------------------------------------------------------- */

struct ghost_args {
  long long n[3], g[3], stride[3];
  int a, b, c;
  long long blo, bn, clo, cn; /* ranges of the other two axes */
  int kind[2];
  double value[2];
};

__device__ __forceinline__ long long ghost_src(int kind, long long t,
                                               long long n) {
  if (kind == STRATA_BC_PERIODIC) return t < 0 ? t + n : t - n;
  if (kind == STRATA_BC_NEUMANN) return t < 0 ? -t - 1 : 2 * n - 1 - t;
  return -1;
}

/* One thread per ghost point of axis a: (other axes) x side x layer.  The
 * sources are interior points (n >= ghost is validated), so the writes of
 * one axis do not depend on each other; axes go in separate launches. */
template <typename T>
__global__ void k_ghosts(T *origin, ghost_args A, long long total) {
  const long long ga = A.g[A.a];
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
       t < total; t += (long long)gridDim.x * blockDim.x) {
    long long u = t;
    const long long q = u % ga + 1;
    u /= ga;
    const int side = (int)(u % 2);
    u /= 2;
    const long long ib = A.blo + u % A.bn, ic = A.clo + u / A.bn;
    const int kind = A.kind[side];
    if (kind == STRATA_BC_NONE) continue;
    T *line = origin + ib * A.stride[A.b] + ic * A.stride[A.c];
    const long long na = A.n[A.a], sa = A.stride[A.a];
    const long long tt = side ? na - 1 + q : -q;
    const long long s = ghost_src(kind, tt, na);
    line[tt * sa] = s < 0 ? (T)A.value[side] : line[s * sa];
  }
}

/* ---- norms ----------------------------------------------------------------- */

constexpr int kNormThreads = 256;
constexpr int kNormBlocks = 1024;

/* Per block: sum (of v or v^2), max |v|, NaN seen; rows spread over blocks. */
template <typename T>
__global__ void __launch_bounds__(kNormThreads)
    k_norm_partial(const T *a, long long asy, long long asz, const T *b,
                   long long bsy, long long bsz, int nx, int ny, long long rows,
                   int which, double *part) {
  __shared__ double ssum[kNormThreads], smax[kNormThreads];
  __shared__ int snan[kNormThreads];
  double sum = 0, mx = 0;
  int nan = 0;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const long long j = r % ny, k = r / ny;
    const T *pa = a + j * asy + k * asz;
    const T *pb = b ? b + j * bsy + k * bsz : NULL;
    for (int i = threadIdx.x; i < nx; i += blockDim.x) {
      double v = (double)pa[i];
      if (pb) v -= (double)pb[i];
      if (v != v) nan = 1;
      if (which == STRATA_NORM_SUM)
        sum += v;
      else if (which == STRATA_NORM_MAX)
        mx = fabs(v) > mx ? fabs(v) : mx;
      else
        sum += v * v;
    }
  }
  ssum[threadIdx.x] = sum;
  smax[threadIdx.x] = mx;
  snan[threadIdx.x] = nan;
  __syncthreads();
  for (int h = kNormThreads / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) {
      ssum[threadIdx.x] += ssum[threadIdx.x + h];
      smax[threadIdx.x] = fmax(smax[threadIdx.x], smax[threadIdx.x + h]);
      snan[threadIdx.x] |= snan[threadIdx.x + h];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    part[3 * blockIdx.x + 0] = ssum[0];
    part[3 * blockIdx.x + 1] = smax[0];
    part[3 * blockIdx.x + 2] = snan[0];
  }
}

/* One block folds the partials in a fixed order: deterministic results. */
__global__ void __launch_bounds__(kNormThreads)
    k_norm_final(const double *part, int nparts, double *res) {
  __shared__ double ssum[kNormThreads], smax[kNormThreads], snan[kNormThreads];
  double sum = 0, mx = 0, nan = 0;
  for (int p = threadIdx.x; p < nparts; p += blockDim.x) {
    sum += part[3 * p];
    mx = fmax(mx, part[3 * p + 1]);
    nan = fmax(nan, part[3 * p + 2]);
  }
  ssum[threadIdx.x] = sum;
  smax[threadIdx.x] = mx;
  snan[threadIdx.x] = nan;
  __syncthreads();
  for (int h = kNormThreads / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) {
      ssum[threadIdx.x] += ssum[threadIdx.x + h];
      smax[threadIdx.x] = fmax(smax[threadIdx.x], smax[threadIdx.x + h]);
      snan[threadIdx.x] = fmax(snan[threadIdx.x], snan[threadIdx.x + h]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    res[0] = ssum[0];
    res[1] = smax[0];
    res[2] = snan[0];
  }
}

/* ---- the blow-up check -------------------------------------------------------- */

/* rec[0] += the NaNs and infinities seen, rec[1] = min(rec[1], the dense
 * index of the first); a thread that saw none touches nothing, so a
 * finite field costs one read and no atomics. */
template <typename T>
__global__ void __launch_bounds__(kNormThreads)
    k_nonfinite(const T *a, long long sy, long long sz, int nx, int ny,
                long long rows, unsigned long long *rec) {
  unsigned long long cnt = 0, first = ~0ull;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *p = a + (r % ny) * sy + (r / ny) * sz;
    for (int i = threadIdx.x; i < nx; i += blockDim.x)
      if (!isfinite(p[i])) {
        const unsigned long long idx = (unsigned long long)r * nx + i;
        cnt++;
        if (idx < first) first = idx;
      }
  }
  if (cnt) {
    atomicAdd(&rec[0], cnt);
    atomicMin(&rec[1], first);
  }
}

/* ---- backend entries --------------------------------------------------------- */

void free_state(strata__cuda_state *st) {
  if (!st) return;
  if (st->scratch) cudaFree(st->scratch);
  if (st->xfer_dev[0]) cudaFree(st->xfer_dev[0]);
  if (st->xfer_host[0]) {
    if (st->xfer_pinned)
      cudaFreeHost(st->xfer_host[0]);
    else
      free(st->xfer_host[0]);
  }
  for (int i = 0; i < 2; i++)
    if (st->xfer_ev[i]) cudaEventDestroy(st->xfer_ev[i]);
  if (st->ev0) cudaEventDestroy(st->ev0);
  if (st->ev1) cudaEventDestroy(st->ev1);
  if (st->side_fork) cudaEventDestroy(st->side_fork);
  if (st->side_join) cudaEventDestroy(st->side_join);
  if (st->side) cudaStreamDestroy(st->side);
  if (st->stream) cudaStreamDestroy(st->stream);
  free(st);
}

/* Why no CUDA device can be used, from cudaGetDeviceCount's error e.
 * Without any NVIDIA driver the runtime reports cudaErrorInsufficientDriver
 * ("CUDA driver version is insufficient"), which reads as "upgrade your
 * driver": the driver's version, 0 when there is none, tells the two
 * apart. */
void no_device_reason(cudaError_t e, char *why, size_t n) {
  int drv = 0, rt = 0;
  if (e == cudaErrorInsufficientDriver &&
      (cudaDriverGetVersion(&drv) != cudaSuccess || drv == 0)) {
    snprintf(why, n, "no NVIDIA driver found: this machine has no NVIDIA "
             "GPU, or its driver is not installed");
  } else if (e == cudaErrorInsufficientDriver) {
    cudaRuntimeGetVersion(&rt);
    snprintf(why, n, "the NVIDIA driver supports CUDA up to %d.%d, older "
             "than this build's CUDA runtime %d.%d: update the driver",
             drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
  } else if (e == cudaErrorNoDevice) {
    snprintf(why, n, "no NVIDIA GPU found: the driver is installed but "
             "reports no device; nvidia-smi lists what it sees, and "
             "CUDA_VISIBLE_DEVICES may hide devices");
  } else {
    snprintf(why, n, "no usable CUDA device: %s", cudaGetErrorString(e));
  }
  cudaGetLastError();
}

strata_status cuda_init(strata_context *ctx, const strata_context_options *o) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    char why[256];
    no_device_reason(e, why, sizeof why);
    return strata__fail(ctx, STRATA_ENOBACKEND, "%s", why);
  }
  if (o->device >= count)
    return strata__fail(ctx, STRATA_EINVAL,
                        "CUDA device %d was asked for; this machine has %d "
                        "(ordinals 0..%d)", o->device, count, count - 1);
  strata__cuda_state *st =
      (strata__cuda_state *)calloc(1, sizeof(strata__cuda_state));
  if (!st) return strata__fail(ctx, STRATA_ENOMEM, "out of host memory");
  st->device = o->device;
  ctx->impl = st;
  strata_status s = STRATA_OK;
#define INIT_CU(call)                                                          \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      s = strata__cuda_fail(ctx, e_, #call, __FILE__, __LINE__);               \
      goto fail;                                                               \
    }                                                                          \
  } while (0)
  INIT_CU(cudaSetDevice(st->device));
  INIT_CU(cudaGetDeviceProperties(&st->prop, st->device));
  e = image_ok();
  if (e != cudaSuccess) {
    cudaGetLastError();
    s = strata__fail(ctx, STRATA_ENOBACKEND,
                     "this build of strata has no kernels for %s (compute "
                     "capability %d.%d): %s; rebuild with "
                     "-DCMAKE_CUDA_ARCHITECTURES=%d%d",
                     st->prop.name, st->prop.major, st->prop.minor,
                     cudaGetErrorString(e), st->prop.major, st->prop.minor);
    goto fail;
  }
  INIT_CU(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
  INIT_CU(cudaEventCreate(&st->ev0));
  INIT_CU(cudaEventCreate(&st->ev1));
  /* the norms' partials and result, then the blow-up check's record */
  st->scratch_n = 3 * (kNormBlocks + 1) + 2;
  INIT_CU(cudaMalloc((void **)&st->scratch, st->scratch_n * sizeof(double)));
#undef INIT_CU
  strata__cuda_tune_init(ctx);
  return STRATA_OK;
fail:
  free_state(st);
  ctx->impl = NULL;
  return s;
}

void cuda_fini(strata_context *ctx) {
  strata__cuda_state *st = strata__cu_state(ctx);
  if (!st) return;
  cudaSetDevice(st->device);
  cudaStreamSynchronize(st->stream);
  strata__cuda_tune_save(ctx);
  free_state(st);
  ctx->impl = NULL;
}

strata_status cuda_info(strata_context *ctx, strata_device_info *info) {
  strata__cuda_state *st = strata__cu_state(ctx);
  STRATA__USE_DEVICE(ctx);
  snprintf(info->name, sizeof info->name, "%s", st->prop.name);
  size_t fr = 0, tot = 0;
  STRATA__CU(ctx, cudaMemGetInfo(&fr, &tot));
  info->memory_bytes = st->prop.totalGlobalMem;
  info->memory_free = fr;
  info->multiprocessors = st->prop.multiProcessorCount;
  info->l2_bytes = (size_t)st->prop.l2CacheSize;
  info->cc_major = st->prop.major;
  info->cc_minor = st->prop.minor;
  info->threads = 0;
  return STRATA_OK;
}

strata_status cuda_alloc(strata_context *ctx, size_t bytes, void **p) {
  strata__cuda_state *st = strata__cu_state(ctx);
  STRATA__USE_DEVICE(ctx);
  size_t fr = 0, tot = 0;
  STRATA__CU(ctx, cudaMemGetInfo(&fr, &tot));
  const size_t want = bytes + STRATA__CUDA_SLACK;
  if (want < bytes || want > fr)
    return strata__fail(ctx, STRATA_ENOMEM,
                        "field needs %zu bytes (%.2f GiB) but %s has %zu bytes "
                        "(%.2f GiB) free of %zu",
                        bytes, bytes / 1073741824.0, st->prop.name, fr,
                        fr / 1073741824.0, tot);
  void *q = NULL;
  cudaError_t e = cudaMalloc(&q, want);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return strata__fail(ctx, STRATA_ENOMEM,
                        "cudaMalloc of %zu bytes failed (%zu bytes were free): "
                        "%s", want, fr, cudaGetErrorString(e));
  }
  e = cudaMemsetAsync(q, 0, want, st->stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(st->stream);
  if (e != cudaSuccess) {
    cudaFree(q);
    return strata__cuda_fail(ctx, e, "cudaMemsetAsync (zeroing a new field)",
                             __FILE__, __LINE__);
  }
  ctx->alloc_total += bytes;
  *p = q;
  return STRATA_OK;
}

void cuda_release(strata_context *ctx, void *p) {
  if (!p) return;
  cudaSetDevice(strata__cu_state(ctx)->device);
  cudaFree(p);
}

strata_status cuda_copy(strata_context *ctx, void *dst, const void *src,
                        size_t bytes) {
  strata__cuda_state *st = strata__cu_state(ctx);
  STRATA__USE_DEVICE(ctx);
  STRATA__CU(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                  st->stream));
  return STRATA_OK;
}

strata_status cuda_sync(strata_context *ctx) {
  STRATA__USE_DEVICE(ctx);
  STRATA__CU(ctx, cudaStreamSynchronize(strata__cu_state(ctx)->stream));
  return STRATA_OK;
}

strata_status cuda_fill_value(strata_field *f, double v) {
  strata_context *ctx = f->ctx;
  STRATA__USE_DEVICE(ctx);
  cudaStream_t s = strata__cu_state(ctx)->stream;
  const long long n = (long long)f->L.elements;
  if (f->d.precision == STRATA_F32)
    k_fill_value<float><<<strata__cu_grid1d(n, 256), 256, 0, s>>>((float *)f->data, n,
                                                       (float)v);
  else
    k_fill_value<double><<<strata__cu_grid1d(n, 256), 256, 0, s>>>((double *)f->data, n,
                                                        v);
  STRATA__LAUNCHED(ctx, "fill kernel launch");
  return STRATA_OK;
}

strata_status cuda_fill_random(strata_field *f, uint64_t seed, double lo,
                               double hi) {
  strata_context *ctx = f->ctx;
  STRATA__USE_DEVICE(ctx);
  cudaStream_t s = strata__cu_state(ctx)->stream;
  const int gx = (int)f->d.n[0] + 2 * f->g[0], gy = (int)f->d.n[1] + 2 * f->g[1],
            gz = (int)f->d.n[2] + 2 * f->g[2];
  const long long px = (long long)f->L.pitch_x,
                  pxy = px * (long long)f->L.pitch_y;
  const double w = hi - lo;
  dim3 block(128, 2), grid((gx + 127) / 128,
                           strata__cu_grid1d((long long)gy * gz, 2));
  if (f->d.precision == STRATA_F32)
    k_fill_random<float><<<grid, block, 0, s>>>(
        (float *)f->data + f->L.origin, gx, gy, gz, f->g[0], f->g[1], f->g[2],
        px, pxy, (unsigned long long)seed, lo, w);
  else
    k_fill_random<double><<<grid, block, 0, s>>>(
        (double *)f->data + f->L.origin, gx, gy, gz, f->g[0], f->g[1], f->g[2],
        px, pxy, (unsigned long long)seed, lo, w);
  STRATA__LAUNCHED(ctx, "fill_random kernel launch");
  return STRATA_OK;
}

strata_status cuda_fill_ghosts(strata_field *f, const strata_boundary *bc) {
  strata_context *ctx = f->ctx;
  STRATA__USE_DEVICE(ctx);
  cudaStream_t s = strata__cu_state(ctx)->stream;
  ghost_args A;
  const long long px = (long long)f->L.pitch_x, py = (long long)f->L.pitch_y;
  for (int d = 0; d < 3; d++) {
    A.n[d] = (long long)f->d.n[d];
    A.g[d] = f->g[d];
  }
  A.stride[0] = 1;
  A.stride[1] = px;
  A.stride[2] = px * py;
  for (int a = 0; a < f->d.dims; a++) {
    if (bc->kind[2 * a] == STRATA_BC_NONE && bc->kind[2 * a + 1] == STRATA_BC_NONE)
      continue;
    A.a = a;
    A.b = (a + 1) % 3;
    A.c = (a + 2) % 3;
    A.blo = A.b < a ? -A.g[A.b] : 0;
    A.bn = A.n[A.b] + (A.b < a ? 2 * A.g[A.b] : 0);
    A.clo = A.c < a ? -A.g[A.c] : 0;
    A.cn = A.n[A.c] + (A.c < a ? 2 * A.g[A.c] : 0);
    A.kind[0] = (int)bc->kind[2 * a];
    A.kind[1] = (int)bc->kind[2 * a + 1];
    A.value[0] = bc->value[2 * a];
    A.value[1] = bc->value[2 * a + 1];
    const long long total = A.bn * A.cn * 2 * A.g[a];
    if (f->d.precision == STRATA_F32)
      k_ghosts<float><<<strata__cu_grid1d(total, 256), 256, 0, s>>>(
          (float *)f->data + f->L.origin, A, total);
    else
      k_ghosts<double><<<strata__cu_grid1d(total, 256), 256, 0, s>>>(
          (double *)f->data + f->L.origin, A, total);
    STRATA__LAUNCHED(ctx, "ghost-fill kernel launch");
  }
  return STRATA_OK;
}

strata_status cuda_norm(const strata_field *a, const strata_field *b,
                        strata_norm which, double *out) {
  strata_context *ctx = a->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  STRATA__USE_DEVICE(ctx);
  const int nx = (int)a->d.n[0], ny = (int)a->d.n[1];
  const long long rows = (long long)a->d.n[1] * (long long)a->d.n[2];
  const int blocks = rows < kNormBlocks ? (int)rows : kNormBlocks;
  const long long asy = (long long)a->L.pitch_x,
                  asz = asy * (long long)a->L.pitch_y;
  const long long bsy = b ? (long long)b->L.pitch_x : 0,
                  bsz = b ? bsy * (long long)b->L.pitch_y : 0;
  double *part = st->scratch, *res = st->scratch + 3 * kNormBlocks;
  if (a->d.precision == STRATA_F32)
    k_norm_partial<float><<<blocks, kNormThreads, 0, st->stream>>>(
        (const float *)a->data + a->L.origin, asy, asz,
        b ? (const float *)b->data + b->L.origin : NULL, bsy, bsz, nx, ny, rows,
        (int)which, part);
  else
    k_norm_partial<double><<<blocks, kNormThreads, 0, st->stream>>>(
        (const double *)a->data + a->L.origin, asy, asz,
        b ? (const double *)b->data + b->L.origin : NULL, bsy, bsz, nx, ny,
        rows, (int)which, part);
  STRATA__LAUNCHED(ctx, "norm kernel launch");
  k_norm_final<<<1, kNormThreads, 0, st->stream>>>(part, blocks, res);
  STRATA__LAUNCHED(ctx, "norm (final) kernel launch");
  double h[3];
  STRATA__CU(ctx, cudaMemcpyAsync(h, res, sizeof h, cudaMemcpyDeviceToHost,
                                  st->stream));
  STRATA__CU(ctx, cudaStreamSynchronize(st->stream));
  const double npts =
      (double)a->d.n[0] * (double)a->d.n[1] * (double)a->d.n[2];
  switch (which) {
  case STRATA_NORM_L2: *out = sqrt(h[0]); break;
  case STRATA_NORM_RMS: *out = sqrt(h[0] / npts); break;
  case STRATA_NORM_MAX: *out = h[1]; break;
  case STRATA_NORM_SUM: *out = h[0]; break;
  }
  if (h[2] != 0) *out = NAN;
  return STRATA_OK;
}

/* The flag (a count) and the first index come back in one small copy; the
 * bad value only when there is one. */
strata_status cuda_nonfinite(const strata_field *f, uint64_t *count,
                             uint64_t *first, double *value) {
  strata_context *ctx = f->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  STRATA__USE_DEVICE(ctx);
  const int nx = (int)f->d.n[0], ny = (int)f->d.n[1];
  const long long rows = (long long)f->d.n[1] * (long long)f->d.n[2];
  const int blocks = rows < kNormBlocks ? (int)rows : kNormBlocks;
  const long long sy = (long long)f->L.pitch_x,
                  sz = sy * (long long)f->L.pitch_y;
  unsigned long long *rec =
      (unsigned long long *)(st->scratch + 3 * (kNormBlocks + 1));
  STRATA__CU(ctx, cudaMemsetAsync(rec, 0, sizeof *rec, st->stream));
  STRATA__CU(ctx, cudaMemsetAsync(rec + 1, 0xff, sizeof *rec, st->stream));
  if (f->d.precision == STRATA_F32)
    k_nonfinite<float><<<blocks, kNormThreads, 0, st->stream>>>(
        (const float *)f->data + f->L.origin, sy, sz, nx, ny, rows, rec);
  else
    k_nonfinite<double><<<blocks, kNormThreads, 0, st->stream>>>(
        (const double *)f->data + f->L.origin, sy, sz, nx, ny, rows, rec);
  STRATA__LAUNCHED(ctx, "non-finite check kernel launch");
  unsigned long long h[2];
  STRATA__CU(ctx, cudaMemcpyAsync(h, rec, sizeof h, cudaMemcpyDeviceToHost,
                                  st->stream));
  STRATA__CU(ctx, cudaStreamSynchronize(st->stream));
  *count = h[0];
  *first = h[1];
  if (h[1] == ~0ull) return STRATA_OK;
  const unsigned long long i = h[1] % (unsigned long long)nx,
                           j = h[1] / nx % (unsigned long long)ny,
                           k = h[1] / nx / (unsigned long long)ny;
  const size_t off = strata__offset(f, (long)i, (long)j, (long)k);
  if (f->d.precision == STRATA_F32) {
    float v;
    STRATA__CU(ctx, cudaMemcpy(&v, (const float *)f->data + off, sizeof v,
                               cudaMemcpyDeviceToHost));
    *value = v;
  } else {
    STRATA__CU(ctx, cudaMemcpy(value, (const double *)f->data + off,
                               sizeof *value, cudaMemcpyDeviceToHost));
  }
  return STRATA_OK;
}

strata_status cuda_copy_kernel(const strata_field *in, strata_field *out,
                               const char *variant) {
  strata_context *ctx = in->ctx;
#ifdef STRATA_CUDA_SEEDS
  const char *known = "copycube, copycube_halo";
  const bool halo = variant && strcmp(variant, "copycube_halo") == 0;
#else
  const char *known = "copycube; copycube_halo is built with "
                      "STRATA_CUDA_SEEDS";
  const bool halo = false;
#endif
  if (variant && strcmp(variant, "copycube") != 0 && !halo)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "copy_kernel: the CUDA backend has no copy variant "
                        "'%s' (known: %s)", variant, known);
  if (halo && in->d.dims < 2)
    return strata__fail(ctx, STRATA_ENOTSUP,
                        "copy_kernel: copycube_halo reads y halos and needs a "
                        "2D or 3D field");
  STRATA__USE_DEVICE(ctx);
  strata__launch L;
  strata_status s = strata__cuda_launch_init(&L, in, out);
  if (s != STRATA_OK) return s;
#ifdef STRATA_CUDA_SEEDS
  if (halo) return strata__cu_copy_halo(&L);
#endif
  return strata__cu_copy(&L);
}

} // namespace

int strata__cuda_probe(char *why, size_t n) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why && n) no_device_reason(e, why, n);
    return 0;
  }
  if (count < 1) {
    if (why && n) snprintf(why, n, "no CUDA device on this machine");
    return 0;
  }
  e = image_ok();
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why && n) snprintf(why, n, "this build has no kernels for the CUDA "
                           "device: %s", cudaGetErrorString(e));
    return 0;
  }
  return 1;
}

strata_status strata__cuda_launch_init(strata__launch *L, const strata_field *in,
                                       strata_field *out) {
  strata_context *ctx = in->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  for (int a = 0; a < 3; a++)
    if (in->d.n[a] > (size_t)1 << 30)
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "the CUDA kernels take at most 2^30 points per axis "
                          "(axis %c has %zu)", "xyz"[a], in->d.n[a]);
  memset(L, 0, sizeof *L);
  L->ctx = ctx;
  L->stream = st->stream;
  L->in = (const char *)in->data + in->L.origin * in->esize;
  L->out = (char *)out->data + out->L.origin * out->esize;
  L->g.nx = (int)in->d.n[0];
  L->g.ny = (int)in->d.n[1];
  L->g.nz = (int)in->d.n[2];
  L->g.dims = in->d.dims;
  L->g.sy = (long long)in->L.pitch_x;
  L->g.sz = L->g.sy * (long long)in->L.pitch_y;
  L->g.osy = (long long)out->L.pitch_x;
  L->g.osz = L->g.osy * (long long)out->L.pitch_y;
  L->prec = (int)in->d.precision;
  L->sms = st->prop.multiProcessorCount;
  L->smem_max = st->prop.sharedMemPerBlockOptin;
  L->in_data = in->data;
  strata__cu_alloc_geom(in, L->in_ext, L->in_org);
  L->cc_major = st->prop.major;
  return STRATA_OK;
}

const strata__backend strata__cuda_backend = {
    /* name */ "cuda",
    /* host_accessible */ 0,
    /* init */ cuda_init,
    /* fini */ cuda_fini,
    /* info */ cuda_info,
    /* alloc */ cuda_alloc,
    /* release */ cuda_release,
    /* to_host */ strata__cuda_to_host,
    /* from_host */ strata__cuda_from_host,
    /* copy */ cuda_copy,
    /* sync */ cuda_sync,
    /* apply */ strata__cuda_apply,
    /* fill_ghosts */ cuda_fill_ghosts,
    /* copy_kernel */ cuda_copy_kernel,
    /* variants */ strata__cuda_variants,
    /* fill_random */ cuda_fill_random,
    /* fill_value */ cuda_fill_value,
    /* norm */ cuda_norm,
    /* apply_fused */ strata__cuda_apply_fused,
    /* wave_step */ strata__cuda_wave_step,
    /* yee_step */ strata__cuda_yee_step,
    /* sample */ strata__cuda_sample,
    /* mg_ghosts */ strata__cuda_mg_ghosts,
    /* mg_sweep */ strata__cuda_mg_sweep,
    /* mg_transfer */ strata__cuda_mg_transfer,
    /* mg_axpby */ strata__cuda_mg_axpby,
    /* read_dense */ strata__cuda_read_dense,
    /* write_dense */ strata__cuda_write_dense,
    /* wave_pair */ strata__cuda_wave_pair,
    /* nonfinite */ cuda_nonfinite,
    /* fv_residual */ strata__cuda_fv_residual,
    /* fv_gsrb */ strata__cuda_fv_gsrb,
    /* fv_update */ strata__cuda_fv_update,
    /* fv_restrict */ strata__cuda_fv_restrict,
    /* fv_prolong */ strata__cuda_fv_prolong,
    /* fv_dot */ strata__cuda_fv_dot,
    /* capture_begin */ strata__cuda_capture_begin,
    /* capture_end */ strata__cuda_capture_end,
    /* graph_run */ strata__cuda_graph_run,
    /* graph_free */ strata__cuda_graph_free,
    /* fv_gsrb2 */ strata__cuda_fv_gsrb2,
    /* fv_residual_restrict */ strata__cuda_fv_residual_restrict,
};
