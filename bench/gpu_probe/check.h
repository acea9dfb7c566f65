/* The probes' one error rule: a failed CUDA call ends the probe, naming the
 * call and where it was made (they measure; there is nothing to recover). */
#ifndef GPU_PROBE_CHECK_H
#define GPU_PROBE_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));          \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#endif
