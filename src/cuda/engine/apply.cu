/* Applying operators on the CUDA backend: variant names and applicability,
 * default launch shapes, the fixed table and the dispatch.
 *
 * "auto" (or no variant) takes the autotuner's choice (autotune.cu); with
 * autotune off the fixed table is used. */
#include "cuda_device.cuh"

#include <stdio.h>
#include <stdlib.h>

const char *const strata__cuda_variant_names[STRATA__V_COUNT] = {
    "naive", "smem", "stream", "streamv", "streamcp", "streamrq", "kd", "kdv",
    "kdcp", "pencil", "vec", "streamtma", "streamws", "kdtma", "kdws", "vecz"};

/* Bit v set when variant v applies to op on a device of compute capability
 * major.x (the tensor copies of streamtma need 9.0). */
unsigned strata__cu_applicable(const strata_stencil *op, int major) {
  unsigned m = 1u << STRATA__V_NAIVE | 1u << STRATA__V_SMEM;
  switch (op->kind) {
  case STRATA_STENCIL_STAR:
    if (op->dims == 3) {
      m |= 1u << STRATA__V_STREAM | 1u << STRATA__V_STREAMV |
           1u << STRATA__V_STREAMCP | 1u << STRATA__V_STREAMRQ;
      if (op->radius == 1)
        m |= 1u << STRATA__V_KD | 1u << STRATA__V_KDV | 1u << STRATA__V_KDCP |
             1u << STRATA__V_VEC;
      if (op->radius == 1 && major >= 9)
        m |= 1u << STRATA__V_KDTMA | 1u << STRATA__V_KDWS;
      if (major >= 9)
        m |= 1u << STRATA__V_STREAMTMA | 1u << STRATA__V_STREAMWS;
    } else if (op->dims == 2) {
      m |= 1u << STRATA__V_VEC;
    }
    break;
  case STRATA_STENCIL_DERIVATIVE: m |= 1u << STRATA__V_PENCIL; break;
  case STRATA_STENCIL_BOX:
    if (op->dims == 3) {
      m |= 1u << STRATA__V_KD | 1u << STRATA__V_KDV | 1u << STRATA__V_KDCP |
           1u << STRATA__V_VECZ;
      if (major >= 9) m |= 1u << STRATA__V_KDTMA | 1u << STRATA__V_KDWS;
    } else if (op->dims == 2)
      m |= 1u << STRATA__V_VEC;
    break;
  case STRATA_STENCIL_BOX_SYMMETRIC:
    m |= 1u << STRATA__V_KD | 1u << STRATA__V_KDV | 1u << STRATA__V_KDCP |
         1u << STRATA__V_VECZ;
    if (major >= 9) m |= 1u << STRATA__V_KDTMA | 1u << STRATA__V_KDWS;
    break;
  }
#ifndef STRATA_CUDA_SEEDS
  /* the seeds' strategies, built only with STRATA_CUDA_SEEDS */
  m &= ~(1u << STRATA__V_STREAM | 1u << STRATA__V_STREAMV |
         1u << STRATA__V_STREAMCP | 1u << STRATA__V_STREAMRQ |
         1u << STRATA__V_KD | 1u << STRATA__V_KDV | 1u << STRATA__V_KDCP |
         1u << STRATA__V_KDTMA | 1u << STRATA__V_KDWS);
#endif
  return m;
}

void strata__cu_default_block(int v, const strata_stencil *op, int prec, int b[3]) {
  b[0] = 32;
  b[1] = 8;
  b[2] = 1;
  switch (v) {
  case STRATA__V_NAIVE:
    if (op->dims == 1) { b[0] = 256; b[1] = 1; }
    else if (op->dims == 3) { b[1] = 4; b[2] = 2; }
    break;
  case STRATA__V_SMEM:
    if (op->dims == 1) { b[0] = 256; b[1] = 1; }
    break;
  case STRATA__V_KD:
    b[0] = prec == 4 ? 32 : 16; /* the block the kd method was designed for */
    b[1] = 6;
    break;
  case STRATA__V_KDV:
  case STRATA__V_STREAMV:
  case STRATA__V_STREAMRQ:
    b[1] = 4; /* the fastest shape tried on the H100 */
    break;
  case STRATA__V_PENCIL:
    if (op->axis == 0 && op->dims == 1) { b[0] = 256; b[1] = 1; }
    else if (op->axis != 0 && op->dims == 2) { b[0] = 128; b[1] = 1; }
    break;
  case STRATA__V_KDTMA:
  case STRATA__V_KDWS:
    b[1] = 4; /* 32x4 threads, 4 rows each: a 128 x 16 tile (fp32) */
    b[2] = 4;
    break;
  case STRATA__V_STREAMTMA:
    b[1] = 16; /* 32x16 threads, a row each: one block a multiprocessor */
    break;
  case STRATA__V_STREAMWS:
    /* a row each, one block a multiprocessor: fp32 16x32 threads (a 64 x
     * 32 tile: 1.41 tile-and-halo reads a point against 1.59 for 128 x
     * 16), fp64 32x16: each the faster of the two on the H100 for the
     * 25-point star (docs/performance.md#operators-on-the-h100) */
    if (prec == 4) b[0] = 16;
    b[1] = prec == 4 ? 32 : 16;
    break;
  case STRATA__V_VEC:
    b[1] = 4; /* 32x4 threads, 2 planes (2D: rows) each: 128 x 4 x 2 points
                 (fp32); 2 is valid for every operator vec takes */
    b[2] = 2;
    break;
  case STRATA__V_VECZ:
    b[1] = 2; /* 32x2 threads, 4 rows each: 120 x 8 points a plane (fp32),
                 the fastest shape tried on the H100 */
    b[2] = 4;
    break;
  default: break;
  }
}

strata_status strata__cu_run_variant(int v, const strata__launch *L,
                          const strata_stencil *op) {
  switch (v) {
  case STRATA__V_NAIVE: return strata__cu_naive(L, op);
  case STRATA__V_SMEM: return strata__cu_smem(L, op);
  case STRATA__V_PENCIL: return strata__cu_pencil(L, op);
  case STRATA__V_VEC: return strata__cu_vec(L, op);
  case STRATA__V_STREAMTMA: return strata__cu_streamtma(L, op, 0);
  case STRATA__V_STREAMWS: return strata__cu_streamtma(L, op, 1);
  case STRATA__V_VECZ: return strata__cu_vecz(L, op);
#ifdef STRATA_CUDA_SEEDS
  case STRATA__V_STREAM: return strata__cu_stream(L, op, 0);
  case STRATA__V_STREAMV: return strata__cu_stream(L, op, 1);
  case STRATA__V_STREAMCP: return strata__cu_stream(L, op, 2);
  case STRATA__V_STREAMRQ: return strata__cu_stream(L, op, 3);
  case STRATA__V_KD: return strata__cu_kd(L, op, 0);
  case STRATA__V_KDV: return strata__cu_kd(L, op, 1);
  case STRATA__V_KDCP: return strata__cu_kd(L, op, 2);
  case STRATA__V_KDTMA: return strata__cu_kdtma(L, op, 0);
  case STRATA__V_KDWS: return strata__cu_kdtma(L, op, 1);
#endif
  }
  return strata__fail(L->ctx, STRATA_ENOTSUP, "variant %s is not built",
                      v >= 0 && v < STRATA__V_COUNT
                          ? strata__cuda_variant_names[v]
                          : "?");
}

namespace {

void list_variants(unsigned m, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (int v = 0; v < STRATA__V_COUNT; v++)
    if (m >> v & 1) {
      int w = snprintf(buf + used, n - used, "%s%s", used ? "," : "",
                       strata__cuda_variant_names[v]);
      if (w < 0 || (size_t)w >= n - used) break;
      used += (size_t)w;
    }
}

/* The fixed table used when autotuning is off (major: the device's compute
 * capability), from the measurements of docs/performance.md on the H100:
 * pencil for the derivatives, vec for the radius-1 stars in 2D and 3D,
 * streamtma for the other 3D stars (tensor copies: 9.0 and later) and vecz
 * for the 3x3x3 boxes; smem for the rest. */
int default_variant(const strata_stencil *op, int major) {
  if (op->kind == STRATA_STENCIL_DERIVATIVE) return STRATA__V_PENCIL;
  if (op->kind == STRATA_STENCIL_STAR && op->radius == 1 && op->dims >= 2)
    return STRATA__V_VEC;
  if (op->dims == 3) {
    if (op->kind == STRATA_STENCIL_STAR) {
      if (major >= 9) return STRATA__V_STREAMTMA;
#ifdef STRATA_CUDA_SEEDS
      return STRATA__V_STREAMCP;
#else
      return STRATA__V_SMEM;
#endif
    }
    return STRATA__V_VECZ; /* the boxes */
  }
  return STRATA__V_SMEM;
}

int find_variant(const char *name) {
  for (int v = 0; v < STRATA__V_COUNT; v++)
    if (strcmp(name, strata__cuda_variant_names[v]) == 0) return v;
  return -1;
}

} // namespace

strata_status strata__cuda_variants(strata_context *ctx, const strata_stencil *op,
                                    char *buf, size_t n) {
  char all[512]; /* room for every name in strata__cuda_variant_names */
  list_variants(strata__cu_applicable(op, strata__cu_state(ctx)->prop.major),
                all, sizeof all);
  return strata__variants_out(ctx, all, buf, n);
}

strata_status strata__cuda_apply(const strata_stencil *op, const strata_field *in,
                                 strata_field *out,
                                 const strata_apply_options *opt) {
  strata_context *ctx = in->ctx;
  strata__cuda_state *st = strata__cu_state(ctx);
  STRATA__CU(ctx, cudaSetDevice(st->device));
  const char *name = opt && opt->variant ? opt->variant : "auto";
  const unsigned m = strata__cu_applicable(op, st->prop.major);
  strata__launch L;
  strata_status s = strata__cuda_launch_init(&L, in, out);
  if (s != STRATA_OK) return s;

  if (strcmp(name, "auto") != 0) {
    const int v = find_variant(name);
    if (v < 0 || !(m >> v & 1)) {
      char known[128];
      list_variants(m, known, sizeof known);
      return strata__fail(ctx, STRATA_ENOTSUP,
                          "apply: the CUDA backend has no variant '%s' for "
                          "this %dD operator (kind %d, radius %d); known: "
                          "auto,%s%s",
                          name, op->dims, (int)op->kind, op->radius, known,
#ifdef STRATA_CUDA_SEEDS
                          ""
#else
                          " (the seeds' strategies stream, streamv, "
                          "streamcp, streamrq, kd, kdv, kdcp, kdtma and kdws "
                          "are built with -DSTRATA_CUDA_SEEDS=ON)"
#endif
                          );
    }
    strata__cu_default_block(v, op, L.prec, L.block);
    if (opt)
      for (int a = 0; a < 3; a++)
        if (opt->block[a] > 0) L.block[a] = opt->block[a];
    /* z chunks of the 2.5D kernels, the tuning switch zchunks (tests and
     * experiments; the model's choice otherwise, at most nz) */
    L.zchunks = (int)strata__tuning_long(ctx, "zchunks", 0);
    return strata__cu_run_variant(v, &L, op);
  }

  if (!ctx->autotune) {
    const int v = default_variant(op, st->prop.major);
    strata__cu_default_block(v, op, L.prec, L.block);
    return strata__cu_run_variant(v, &L, op);
  }
  return strata__cuda_apply_tuned(&L, op, in);
}

strata_status strata__cuda_resolve_variant(const strata_stencil *op,
                                           const strata_field *in,
                                           strata_field *out, char *name,
                                           size_t n, int block[3]) {
  strata__launch L;
  strata_status s = strata__cuda_launch_init(&L, in, out);
  if (s != STRATA_OK) return s;
  const int v = default_variant(op, strata__cu_state(in->ctx)->prop.major);
  strata__cu_default_block(v, op, L.prec, L.block);
  snprintf(name, n, "%s", strata__cuda_variant_names[v]);
  memcpy(block, L.block, sizeof L.block);
  return STRATA_OK;
}