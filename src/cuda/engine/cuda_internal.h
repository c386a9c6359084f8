/* Private header of the CUDA engine: state kept on the context, the
 * parameter blocks the kernels take, error helpers, and the launchers each
 * .cu file exports.  Only src/cuda/ includes it; it is C++ (nvcc).
 *
 * src/cuda by job: engine/ (this header, the backend table, memory and
 * transfers, apply dispatch and autotuning, the shared device helpers),
 * ops/ (the operator kernels the engine selects), seeds/ (the seeds'
 * strategies, built with STRATA_CUDA_SEEDS), and one folder per solver. */
#ifndef STRATA_CUDA_INTERNAL_H
#define STRATA_CUDA_INTERNAL_H

#include <cuda_runtime.h>

#include "core/internal.h"

/* Every CUDA call goes through STRATA__CU: on failure it records the CUDA
 * message on ctx and returns STRATA_EDEVICE from the enclosing function. */
#define STRATA__CU(ctx, call)                                                  \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess)                                                     \
      return strata__cuda_fail((ctx), e_, #call, __FILE__, __LINE__);          \
  } while (0)

/* After every launch: the launch's own error (bad configuration, too much
 * shared memory) and any sticky error from earlier asynchronous work. */
#define STRATA__LAUNCHED(ctx, what)                                            \
  do {                                                                         \
    cudaError_t e_ = cudaGetLastError();                                       \
    if (e_ != cudaSuccess)                                                     \
      return strata__cuda_fail((ctx), e_, what, __FILE__, __LINE__);           \
  } while (0)

strata_status strata__cuda_fail(strata_context *ctx, cudaError_t e,
                                const char *what, const char *file, int line);

/* Makes ctx's device current; STRATA__USE_DEVICE returns from the enclosing
 * function when that fails. */
static inline strata_status strata__cu_use_device(strata_context *ctx);
#define STRATA__USE_DEVICE(ctx)                                                \
  do {                                                                         \
    strata_status s_ = strata__cu_use_device(ctx);                             \
    if (s_ != STRATA_OK) return s_;                                            \
  } while (0)

/* Blocks of a 1D grid over n items (at most 65535: the kernels loop). */
static inline unsigned strata__cu_grid1d(long long n, int threads) {
  long long b = (n + threads - 1) / threads;
  if (b > 65535) b = 65535;
  return (unsigned)(b < 1 ? 1 : b);
}

/* ---- per-context state ------------------------------------------------ */

#define STRATA__TUNE_MAX 256
#define STRATA__TUNE_KEY 192

typedef struct strata__tune_entry {
  char key[STRATA__TUNE_KEY];
  int variant; /* strata__cuda_variant */
  int block[3];
  int zchunks; /* 0 = the launcher's model */
  double us;   /* measured time of the winner, microseconds */
} strata__tune_entry;

typedef struct strata__cuda_state {
  int device;
  cudaStream_t stream;
  cudaDeviceProp prop;
  double *scratch;          /* reduction partials (device) */
  size_t scratch_n;         /* doubles in scratch */
  cudaEvent_t ev0, ev1;     /* autotuning */
  /* tile shapes and z chunk lengths timed for the fused 3D heat kernels: key = sizes, steps, precision, kernel, the
   * shape asked for (-1: any) */
  struct {
    int key[7];
    int shape, planes;
  } fz3[32];
  int nfz3;
  strata__tune_entry tune[STRATA__TUNE_MAX];
  int ntune;
  int tune_dirty;
  char cache_path[1024];    /* "" = memory only */
  /* host transfers (engine/transfer.cu): two bounce slots in pinned host
   * memory (malloc'd when pinning fails) and two pack slots in device
   * memory, xfer_slot / xfer_dev_slot bytes each (0: none yet), allocated
   * on first use and grown up to the chunk size; xfer_ev[s] marks the end
   * of the last copy through host slot s.  Freed in fini. */
  char *xfer_host[2], *xfer_dev[2];
  size_t xfer_slot, xfer_dev_slot;
  int xfer_pinned;
  cudaEvent_t xfer_ev[2];
  /* a second stream for kernels that may run beside the main stream's
   * (the wave step's y CPML tiles), and the events that fork it from and
   * join it to the main stream; created on first use, freed in fini */
  cudaStream_t side;
  cudaEvent_t side_fork, side_join;
} strata__cuda_state;

static inline strata__cuda_state *strata__cu_state(strata_context *ctx) {
  return (strata__cuda_state *)ctx->impl;
}

static inline strata_status strata__cu_use_device(strata_context *ctx) {
  STRATA__CU(ctx, cudaSetDevice(strata__cu_state(ctx)->device));
  return STRATA_OK;
}

/* ---- kernel variants ---------------------------------------------------- */

typedef enum strata__cuda_variant {
  STRATA__V_NAIVE = 0,  /* one thread per point, every read from global */
  STRATA__V_SMEM,       /* 2D/3D shared-memory tile with halo, one point/thread */
  STRATA__V_STREAM,     /* 2.5D: xy tile in smem, z-neighbours in registers */
  STRATA__V_STREAMV,    /* stream with 16-byte vectors, prefetch, 2 buffers */
  STRATA__V_STREAMCP,   /* streamv fed by cp.async, a ring of tiles */
  STRATA__V_STREAMRQ,   /* streamcp, rotating queue, register-capped */
  STRATA__V_KD,         /* one plane in smem, 3 partial sums */
  STRATA__V_KDV,        /* kd with 16-byte vectors */
  STRATA__V_KDCP,       /* kdv fed by cp.async, a ring of tiles */
  STRATA__V_PENCIL,     /* derivatives: register queue along the axis */
  STRATA__V_VEC,        /* 2D/3D stars and boxes: plain grid, a vector and a
                           short z (2D: y) column per thread, neighbours
                           via L1 */
  STRATA__V_STREAMTMA,  /* 3D stars: the 2.5D walk with each plane's tile
                           copied by one Hopper bulk tensor copy (TMA),
                           rotating register queue (sm_90) */
  STRATA__V_STREAMWS,   /* streamtma, warp-specialised: a copier warp and
                           per-slot mbarriers instead of a block barrier */
  STRATA__V_KDTMA,      /* kdcp's method fed by one tensor copy a plane */
  STRATA__V_KDWS,       /* kdtma, warp-specialised */
  STRATA__V_VECZ,       /* 3D boxes: vec's vectors and shuffles, Y rows a
                           thread, a z walk with rolling partial sums */
  STRATA__V_COUNT
} strata__cuda_variant;

extern const char *const strata__cuda_variant_names[STRATA__V_COUNT];

/* ---- what the kernels take ----------------------------------------------- */

/* Geometry of an in/out pair: interior sizes and element strides.  The
 * kernels get base pointers already moved to interior point (0,0,0). */
typedef struct strata__geom {
  int nx, ny, nz;
  int dims;
  long long sy, sz;   /* input strides (elements) */
  long long osy, osz; /* output strides */
} strata__geom;

/* Operator weights in the field's precision. */
template <typename T> struct strata__w {
  T c0;
  T cx[STRATA_MAX_RADIUS + 1], cy[STRATA_MAX_RADIUS + 1],
      cz[STRATA_MAX_RADIUS + 1];
  T K[27]; /* BOX: as strata_stencil.box; SYM: C0..C3 in K[0..3] */
  int kind, R, axis, dims;
};

/* What every launcher receives. */
typedef struct strata__launch {
  strata_context *ctx;
  cudaStream_t stream;
  const void *in;  /* interior (0,0,0) of the input */
  void *out;       /* interior (0,0,0) of the output */
  strata__geom g;
  int prec;        /* 4 or 8 */
  int block[3];
  int zchunks;     /* z chunks of the 2.5D kernels, 0 = the model's choice */
  int sms;         /* multiprocessors, for z-chunking */
  size_t smem_max; /* opt-in dynamic shared memory per block */
  /* the input's whole allocation, for tensor-map (TMA) copies: its start,
   * its extents in elements (row pitch, rows a plane, planes) and the
   * coordinates of interior point (0,0,0) in them */
  const void *in_data;
  unsigned long long in_ext[3];
  int in_org[3];
  int cc_major;    /* compute capability of the device */
} strata__launch;

/* A field's whole allocation as a tensor map sees it: the extents in
 * elements (row pitch, rows a plane, planes) and the coordinates of the
 * interior point (0,0,0) in them. */
static inline void strata__cu_alloc_geom(const strata_field *f,
                                         unsigned long long ext[3],
                                         int org[3]) {
  const size_t plane = f->L.pitch_x * f->L.pitch_y;
  ext[0] = f->L.pitch_x;
  ext[1] = f->L.pitch_y;
  ext[2] = f->L.planes;
  org[0] = (int)(f->L.origin % f->L.pitch_x);
  org[1] = (int)(f->L.origin % plane / f->L.pitch_x);
  org[2] = (int)(f->L.origin / plane);
}

/* Launchers: validate the block shape (STRATA_EINVAL with a message), launch
 * and check the launch.  op is validated by the front end.  Those of the
 * seeds' strategies (stream, kd, kdtma) are built with STRATA_CUDA_SEEDS
 * only (seeds/); strata__cuda_variant lists every variant either way. */
strata_status strata__cu_naive(const strata__launch *L, const strata_stencil *op);
strata_status strata__cu_smem(const strata__launch *L, const strata_stencil *op);
/* mode 0: scalar (seed), 1: 16-byte vectors, 2: vectors fed by cp.async,
 * 3 (stream only): cp.async with a rotating register queue */
strata_status strata__cu_stream(const strata__launch *L, const strata_stencil *op,
                                int mode);
strata_status strata__cu_kd(const strata__launch *L, const strata_stencil *op,
                            int mode);
strata_status strata__cu_pencil(const strata__launch *L,
                                const strata_stencil *op);
/* block z = 1 or 2: rows per thread (ops/star_tma.cuh, sm_90 and later); ws:
 * the warp-specialised form (streamws) */
strata_status strata__cu_streamtma(const strata__launch *L,
                                   const strata_stencil *op, int ws);
/* radius-1 operators, block z = 1, 2 or 4 rows per thread (seeds/kd_tma.cu) */
strata_status strata__cu_kdtma(const strata__launch *L, const strata_stencil *op,
                               int ws);
/* block z = 1, 2 or 4: z points (2D: rows) per thread (ops/vec.cu) */
strata_status strata__cu_vec(const strata__launch *L, const strata_stencil *op);
/* 3D boxes; block z = 1, 2 or 4 rows per thread, z chunks as the 2.5D
 * kernels (ops/vec.cu) */
strata_status strata__cu_vecz(const strata__launch *L, const strata_stencil *op);
/* copycube (16-byte vectors, 2.5D; ops/copy.cu) */
strata_status strata__cu_copy(const strata__launch *L);
/* copycube_halo: the kd kernel's reads (seeds/kd.cu) */
strata_status strata__cu_copy_halo(const strata__launch *L);

/* Fills L from a validated in/out pair (pointers, strides, device limits). */
strata_status strata__cuda_launch_init(strata__launch *L, const strata_field *in,
                                       strata_field *out);

/* engine/apply.cu: the variants that apply to op on a device of compute
 * capability major.x (bit v for variant v; only those built), each one's
 * default launch shape, and running one on L. */
unsigned strata__cu_applicable(const strata_stencil *op, int major);
void strata__cu_default_block(int v, const strata_stencil *op, int prec,
                              int b[3]);
strata_status strata__cu_run_variant(int v, const strata__launch *L,
                                     const strata_stencil *op);
/* engine/autotune.cu: op on L with the tuned (variant, block, z chunks)
 * for in's size class, tuning first when there is none. */
strata_status strata__cuda_apply_tuned(strata__launch *L,
                                       const strata_stencil *op,
                                       const strata_field *in);

/* engine/apply.cu: the backend's apply and variants entries;
 * engine/autotune.cu: the autotune cache (loaded at init, written when it
 * changes and at fini). */
strata_status strata__cuda_apply(const strata_stencil *op, const strata_field *in,
                                 strata_field *out,
                                 const strata_apply_options *opt);
strata_status strata__cuda_variants(strata_context *ctx, const strata_stencil *op,
                                    char *buf, size_t n);
void strata__cuda_tune_init(strata_context *ctx);
void strata__cuda_tune_save(strata_context *ctx);

/* engine/transfer.cu: the backend's transfer entries. */
strata_status strata__cuda_read_dense(const strata_field *f, int ghosted,
                                      void *host);
strata_status strata__cuda_write_dense(strata_field *f, int ghosted,
                                       const void *host);
strata_status strata__cuda_to_host(strata_context *ctx, void *dst,
                                   const void *src, size_t bytes);
strata_status strata__cuda_from_host(strata_context *ctx, void *dst,
                                     const void *src, size_t bytes);

/* z-chunking shared by the 2.5D kernels (engine/zchunks.cu): the number of
 * z chunks that minimises waves x (planes per chunk + warm-up planes). */
int strata__cu_zchunks(int xy_blocks, int blocks_per_sm, int sms, int nz,
                       int warmup);
/* The z chunks a launcher uses: L->zchunks when set (at most nz), else the
 * model's choice. */
static inline int strata__cu_chunks(const strata__launch *L, int xy_blocks,
                                    int blocks_per_sm, int nz, int warmup) {
  if (L->zchunks > 0) return L->zchunks < nz ? L->zchunks : nz;
  return strata__cu_zchunks(xy_blocks, blocks_per_sm, L->sms, nz, warmup);
}

/* The solver entries (contracts in src/core/internal.h): the fused heat
 * steps, the wave step, the Yee step and sampling. */
strata_status strata__cuda_apply_fused(const strata_stencil *op,
                                       const strata_boundary *bc, int steps,
                                       const strata_field *in,
                                       strata_field *out, long k0, long k1);
strata_status strata__cuda_wave_step(const strata__wave_args *a);
/* The wave_pair entry (two steps in one sweep). */
strata_status strata__cuda_wave_pair(const strata__wave_args *a,
                                     const double *val2, strata_field *o1,
                                     strata_field *o2, int *used);
strata_status strata__cuda_yee_step(const strata__yee_args *a);
strata_status strata__cuda_sample(const strata_field *f, int npts, int nw,
                                  const long *off, const double *w,
                                  double *dst);

#endif
