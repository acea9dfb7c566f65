/* What test_gpu_bulk.c hands its kernel (gpu_bulk_kernels.cu): cases of the
 * CUDA backend's bulk data paths, one block each. Plain C, addresses as
 * 64-bit integers, the same layout on both sides. */
#ifndef SC_TEST_GPU_BULK_H
#define SC_TEST_GPU_BULK_H

#include <stdint.h>

enum { TG_COPY = 0, TG_REDUCE = 1 };

typedef struct tg_case {
  int32_t kind;
  int32_t nsrcs, dtype, op, divisor; /* TG_REDUCE */
  int32_t unused;
  uint64_t count; /* elements (TG_REDUCE) or bytes (TG_COPY) */
  /* TG_COPY: sc_dev_copy(dst, src). TG_REDUCE: sc_dev_reduce into dst from
   * the nsrcs pointers at src, and the portable loop (sc_dev_reduce_elems)
   * into ref_dst from the pointers at ref_src (a second set of buffers). */
  uint64_t dst, src, ref_dst, ref_src;
} tg_case_t;

#endif
