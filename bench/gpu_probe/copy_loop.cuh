/* The probes' SM copy loop, as symcomm's (src/backend/cuda/cuda_runtime.cuh):
 * dst[i] = src[i] over n 16-byte words, blocks of COPY_LOOP_THREADS threads,
 * 4 words in flight per thread. */
#ifndef GPU_PROBE_COPY_LOOP_CUH
#define GPU_PROBE_COPY_LOOP_CUH

#include <cuda_runtime.h>
#include <stddef.h>

#define COPY_LOOP_THREADS 512

__global__ void __launch_bounds__(COPY_LOOP_THREADS) k_copy(uint4 *dst, const uint4 *src, size_t n) {
  const int U = 4;
  size_t stride = (size_t)gridDim.x * COPY_LOOP_THREADS;
  size_t i = (size_t)blockIdx.x * COPY_LOOP_THREADS + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++)
      v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < U; u++)
      dst[i + u * stride] = v[u];
  }
  for (; i < n; i += stride)
    dst[i] = src[i];
}

#endif
