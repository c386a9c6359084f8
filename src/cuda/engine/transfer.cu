/* Host transfers of the CUDA backend: field reads and writes and the large
 * to_host / from_host copies, through pinned bounce slots and a pack
 * kernel. */
#include "cuda_device.cuh"

#include <string.h>

namespace {

/* Field reads and writes (read_dense, write_dense), and to_host/from_host
 * calls of kXferDirect bytes or more,
 * go through a pipeline over the dense bytes only:
 *
 *   field (pitched) --pack kernel--> device slot --DMA--> pinned slot
 *                                                  --memcpy--> user array
 *
 * in chunks of at most kXferChunk bytes, with two slots of each kind: the
 * DMA of chunk k+1 runs while the CPU copies chunk k out of the other pinned
 * slot (one event per slot says when a slot's DMA is done).  Writes run the
 * same way backwards (memcpy into a pinned slot, DMA, unpack kernel).
 *
 * Why a pack kernel and not a cudaMemcpy2D/3D from the pitched field:
 * - to pageable memory a 2D/3D copy is staged by the driver as well, often
 *   row by row: no faster than copying through a host image;
 * - into a pinned slot the copy engine would walk the interior rows itself,
 *   which is fine for long rows but loses much of the link on short ones
 *   (a 33-double row is 264 bytes: many small, unaligned PCIe writes);
 * - the pack kernel gathers a chunk at HBM speed (more than ten times
 *   the PCIe link's rate), so the DMA is always one
 *   contiguous copy at the link's full rate, whatever the row length.
 * The 3D copy into the pinned slot is kept as the fallback when the two
 * device slots cannot be allocated (a device filled to the last MiB), and
 * rows longer than a chunk (1D fields) need neither: they are contiguous.
 * The user's array is never registered (cudaHostRegister pins page by page,
 * milliseconds per call); the pinned slots are allocated once per context,
 * lazily, grown up to the chunk size, and freed in fini. */

constexpr size_t kXferChunk = (size_t)8 << 20;    /* largest chunk */
constexpr size_t kXferMinSlot = (size_t)1 << 20;  /* smallest slot */
constexpr size_t kXferGranule = (size_t)64 << 10; /* chunk sizes round to it */
constexpr size_t kXferDirect = (size_t)256 << 10; /* contiguous copies below
                                                     this go straight */

/* A box of field memory: nx x ny x nz elements of es bytes from first, rows
 * sy bytes apart, planes sy * py bytes apart. */
struct xbox {
  char *first;
  size_t es, nx, ny, nz, sy, py;
};

/* A chunk of a box: w x h x d elements from (x, j, k).  Chunks follow the
 * dense order and are contiguous in it: whole planes, or rows of one plane,
 * or a piece of one row. */
struct xchunk {
  size_t x, j, k, w, h, d;
};

xchunk next_chunk(const xbox &b, size_t cap, size_t x, size_t j, size_t k) {
  const size_t row = b.nx * b.es, plane = row * b.ny;
  xchunk c = {x, j, k, b.nx, 1, 1};
  if (x == 0 && j == 0 && plane <= cap) {
    c.h = b.ny;
    c.d = cap / plane < b.nz - k ? cap / plane : b.nz - k;
  } else if (x == 0 && row <= cap) {
    c.h = cap / row < b.ny - j ? cap / row : b.ny - j;
  } else {
    c.w = cap / b.es < b.nx - x ? cap / b.es : b.nx - x;
  }
  return c;
}

/* dense[t] <-> element t of a w x h x d box whose rows are sy bytes and
 * planes sz bytes apart (t < n = w*h*d <= kXferChunk / 4).  T is an integer
 * of the element's size: the bits move unchanged. */
template <typename T, bool UNPACK>
__global__ void k_pack(T *dense, char *box, unsigned w, unsigned h, unsigned n,
                       long long sy, long long sz) {
  for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < n;
       t += gridDim.x * blockDim.x) {
    const unsigned r = t / w, x = t - r * w, j = r % h, k = r / h;
    T *p = (T *)(box + (long long)k * sz + (long long)j * sy) + x;
    if (UNPACK)
      *p = dense[t];
    else
      dense[t] = *p;
  }
}

/* Makes the two host slots (and, when dev is set, the two device slots)
 * hold at least chunk bytes each.  Host slots are pinned when the driver
 * allows, else malloc'd (correct, only slower).  *have_dev is false when
 * the device slots cannot be had (device memory full): the caller then uses
 * the 3D copy. */
strata_status xfer_reserve(strata_context *ctx, size_t chunk, bool dev,
                           bool *have_dev) {
  strata__cuda_state *st = strata__cu_state(ctx);
  size_t want = kXferMinSlot;
  while (want < chunk) want *= 2;
  for (int i = 0; i < 2; i++)
    if (!st->xfer_ev[i])
      STRATA__CU(ctx, cudaEventCreateWithFlags(&st->xfer_ev[i],
                                               cudaEventDisableTiming));
  if (st->xfer_slot < chunk) {
    if (st->xfer_host[0]) {
      if (st->xfer_pinned)
        STRATA__CU(ctx, cudaFreeHost(st->xfer_host[0]));
      else
        free(st->xfer_host[0]);
    }
    st->xfer_host[0] = st->xfer_host[1] = NULL;
    st->xfer_slot = 0;
    void *p = NULL;
    cudaError_t e = cudaHostAlloc(&p, 2 * want, cudaHostAllocDefault);
    st->xfer_pinned = e == cudaSuccess;
    if (e != cudaSuccess) {
      cudaGetLastError();
      p = malloc(2 * want);
      if (!p)
        return strata__fail(ctx, STRATA_ENOMEM,
                            "cannot allocate %zu bytes of transfer buffers in "
                            "host memory (pinning failed too: %s)",
                            2 * want, cudaGetErrorString(e));
    }
    st->xfer_host[0] = (char *)p;
    st->xfer_host[1] = (char *)p + want;
    st->xfer_slot = want;
  }
  *have_dev = dev && st->xfer_dev_slot >= chunk;
  if (dev && !*have_dev) {
    if (st->xfer_dev[0]) STRATA__CU(ctx, cudaFree(st->xfer_dev[0]));
    st->xfer_dev[0] = st->xfer_dev[1] = NULL;
    st->xfer_dev_slot = 0;
    void *p = NULL;
    if (cudaMalloc(&p, 2 * want) == cudaSuccess) {
      st->xfer_dev[0] = (char *)p;
      st->xfer_dev[1] = (char *)p + want;
      st->xfer_dev_slot = want;
      *have_dev = true;
    } else {
      cudaGetLastError(); /* not sticky: fall back to the 3D copy */
    }
  }
  return STRATA_OK;
}

/* Enqueues the copy of chunk c between field memory and host slot `slot`
 * (through device slot `slot` when have_dev), and records the slot's event
 * as soon as the host slot is no longer needed by the device. */
strata_status xfer_enqueue(strata_context *ctx, const xbox &b, const xchunk &c,
                           int slot, bool to_dev, bool have_dev) {
  strata__cuda_state *st = strata__cu_state(ctx);
  cudaStream_t s = st->stream;
  char *field = b.first + (c.k * b.py + c.j) * b.sy + c.x * b.es;
  char *hs = st->xfer_host[slot], *ds = st->xfer_dev[slot];
  const size_t n = c.w * c.h * c.d, bytes = n * b.es;
  const cudaMemcpyKind kind =
      to_dev ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (c.h * c.d == 1) { /* a piece of one row: contiguous both sides */
    STRATA__CU(ctx, cudaMemcpyAsync(to_dev ? field : hs, to_dev ? hs : field,
                                    bytes, kind, s));
    STRATA__CU(ctx, cudaEventRecord(st->xfer_ev[slot], s));
  } else if (have_dev) {
    const long long sy = (long long)b.sy, sz = (long long)(b.sy * b.py);
    const unsigned w = (unsigned)c.w, h = (unsigned)c.h, un = (unsigned)n;
    const unsigned grid = strata__cu_grid1d((long long)n, 256);
    if (to_dev) {
      STRATA__CU(ctx, cudaMemcpyAsync(ds, hs, bytes, kind, s));
      STRATA__CU(ctx, cudaEventRecord(st->xfer_ev[slot], s));
      if (b.es == 4)
        k_pack<unsigned, true><<<grid, 256, 0, s>>>((unsigned *)ds, field, w,
                                                    h, un, sy, sz);
      else
        k_pack<unsigned long long, true><<<grid, 256, 0, s>>>(
            (unsigned long long *)ds, field, w, h, un, sy, sz);
      STRATA__LAUNCHED(ctx, "unpack kernel launch (field write)");
    } else {
      if (b.es == 4)
        k_pack<unsigned, false><<<grid, 256, 0, s>>>((unsigned *)ds, field, w,
                                                     h, un, sy, sz);
      else
        k_pack<unsigned long long, false><<<grid, 256, 0, s>>>(
            (unsigned long long *)ds, field, w, h, un, sy, sz);
      STRATA__LAUNCHED(ctx, "pack kernel launch (field read)");
      STRATA__CU(ctx, cudaMemcpyAsync(hs, ds, bytes, kind, s));
      STRATA__CU(ctx, cudaEventRecord(st->xfer_ev[slot], s));
    }
  } else { /* no device slots: the copy engine walks the rows */
    cudaPitchedPtr dev = make_cudaPitchedPtr(field, b.sy, c.w * b.es, b.py);
    cudaPitchedPtr host = make_cudaPitchedPtr(hs, c.w * b.es, c.w * b.es, c.h);
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = to_dev ? host : dev;
    p.dstPtr = to_dev ? dev : host;
    p.extent = make_cudaExtent(c.w * b.es, c.h, c.d);
    p.kind = kind;
    STRATA__CU(ctx, cudaMemcpy3DAsync(&p, s));
    STRATA__CU(ctx, cudaEventRecord(st->xfer_ev[slot], s));
  }
  return STRATA_OK;
}

/* The pipeline over the dense bytes of b (see above).  host is dense. */
strata_status xfer_run(strata_context *ctx, const xbox &b, char *host,
                       bool to_dev) {
  strata__cuda_state *st = strata__cu_state(ctx);
  const size_t total = b.nx * b.ny * b.nz * b.es;
  /* about four chunks for mid-sized transfers, so that even they overlap
   * the DMA with the host copy; at least one slot, at most kXferChunk */
  size_t chunk = (total / 4 + kXferGranule - 1) / kXferGranule * kXferGranule;
  if (chunk < kXferMinSlot) chunk = kXferMinSlot;
  if (chunk > kXferChunk) chunk = kXferChunk;
  const bool rows = b.ny * b.nz > 1 && b.nx * b.es <= chunk;
  bool have_dev = false;
  strata_status s = xfer_reserve(ctx, chunk, rows, &have_dev);
  if (s != STRATA_OK) return s;
  size_t x = 0, j = 0, k = 0, off = 0, prev_off = 0, prev_bytes = 0;
  for (int n = 0; off < total; n++) {
    const xchunk c = next_chunk(b, chunk, x, j, k);
    const size_t bytes = c.w * c.h * c.d * b.es;
    const int slot = n & 1;
    if (to_dev) {
      /* host slot free again once chunk n-2's DMA is done */
      if (n >= 2) STRATA__CU(ctx, cudaEventSynchronize(st->xfer_ev[slot]));
      memcpy(st->xfer_host[slot], host + off, bytes);
      s = xfer_enqueue(ctx, b, c, slot, true, have_dev);
      if (s != STRATA_OK) return s;
    } else {
      s = xfer_enqueue(ctx, b, c, slot, false, have_dev);
      if (s != STRATA_OK) return s;
      /* while chunk n moves, copy chunk n-1 out of the other slot */
      if (n >= 1) {
        STRATA__CU(ctx, cudaEventSynchronize(st->xfer_ev[slot ^ 1]));
        memcpy(host + prev_off, st->xfer_host[slot ^ 1], prev_bytes);
      }
      prev_off = off;
      prev_bytes = bytes;
      if (off + bytes == total) { /* the last chunk */
        STRATA__CU(ctx, cudaEventSynchronize(st->xfer_ev[slot]));
        memcpy(host + prev_off, st->xfer_host[slot], prev_bytes);
      }
    }
    off += bytes;
    if (c.w < b.nx) { /* a piece of a row */
      if ((x += c.w) == b.nx) {
        x = 0;
        j++;
      }
    } else if (c.h == b.ny) { /* whole planes */
      k += c.d;
    } else { /* rows of one plane */
      j += c.h;
    }
    if (j == b.ny) {
      j = 0;
      k++;
    }
  }
  /* writes: the data is in the field when the call returns (and the slots
   * are free for the next call) */
  if (to_dev) STRATA__CU(ctx, cudaStreamSynchronize(st->stream));
  return STRATA_OK;
}

/* On failure, waits for what was enqueued (the slots may be in use) and
 * clears the error state; the first failure's message stays on ctx. */
strata_status xfer(strata_context *ctx, const xbox &b, char *host,
                   bool to_dev) {
  STRATA__USE_DEVICE(ctx);
  strata_status s = xfer_run(ctx, b, host, to_dev);
  if (s != STRATA_OK) {
    cudaStreamSynchronize(strata__cu_state(ctx)->stream);
    cudaGetLastError();
  }
  return s;
}

/* The dense box of f: its interior, or its ghosted box. */
xbox field_box(const strata_field *f, int ghosted) {
  const long g0 = ghosted ? f->g[0] : 0, g1 = ghosted ? f->g[1] : 0,
             g2 = ghosted ? f->g[2] : 0;
  xbox b;
  b.first = (char *)f->data + strata__offset(f, -g0, -g1, -g2) * f->esize;
  b.es = f->esize;
  b.nx = f->d.n[0] + 2 * (size_t)g0;
  b.ny = f->d.n[1] + 2 * (size_t)g1;
  b.nz = f->d.n[2] + 2 * (size_t)g2;
  b.sy = f->L.pitch_x * f->esize;
  b.py = f->L.pitch_y;
  return b;
}

strata_status memcpy_sync(strata_context *ctx, void *dst, const void *src,
                          size_t bytes, cudaMemcpyKind kind) {
  strata__cuda_state *st = strata__cu_state(ctx);
  STRATA__USE_DEVICE(ctx);
  STRATA__CU(ctx, cudaMemcpyAsync(dst, src, bytes, kind, st->stream));
  STRATA__CU(ctx, cudaStreamSynchronize(st->stream));
  return STRATA_OK;
}

} // namespace

strata_status strata__cuda_read_dense(const strata_field *f, int ghosted, void *host) {
  return xfer(f->ctx, field_box(f, ghosted), (char *)host, false);
}

strata_status strata__cuda_write_dense(strata_field *f, int ghosted,
                               const void *host) {
  return xfer(f->ctx, field_box(f, ghosted), (char *)host, true);
}

/* Whole allocations and solver tables: large ones through the pinned
 * pipeline as one contiguous row of bytes, small ones straight. */
strata_status strata__cuda_to_host(strata_context *ctx, void *dst, const void *src,
                           size_t bytes) {
  if (bytes < kXferDirect)
    return memcpy_sync(ctx, dst, src, bytes, cudaMemcpyDeviceToHost);
  const xbox b = {(char *)src, 1, bytes, 1, 1, bytes, 1};
  return xfer(ctx, b, (char *)dst, false);
}

strata_status strata__cuda_from_host(strata_context *ctx, void *dst, const void *src,
                             size_t bytes) {
  if (bytes < kXferDirect)
    return memcpy_sync(ctx, dst, src, bytes, cudaMemcpyHostToDevice);
  const xbox b = {(char *)dst, 1, bytes, 1, 1, bytes, 1};
  return xfer(ctx, b, (char *)src, true);
}
