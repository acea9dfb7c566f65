/* What every kernel file (src/backend/cuda/kernels/) shares: the wrappers
 * that make a device program (device/program.h, its portable code in
 * src/device/) a kernel. Each file there is compiled by nvcc into a fatbin of
 * its own, which libsymcomm_cuda.so embeds and loads (cuda_module.c): a change
 * to one program rebuilds its file only, and the files build in parallel.
 * Adding a program is one line in a kernel file and one in cuda_programs.c.
 *
 * Every kernel takes (the communicator's status block, the stream's failure
 * record, arguments by value): the arguments last, at SC_CUDA_ARGS_AT, where
 * a launch may cut them short (cuda_record.h). SC_CUDA_KERNEL runs a program
 * written for a block of threads (SC_CUDA_THREADS of them);
 * SC_CUDA_SOLO_KERNEL runs one written for a single thread, on a writable
 * copy of its arguments, in blocks of one thread. */
#ifndef SC_BACKEND_CUDA_KERNELS_KERNEL_CUH
#define SC_BACKEND_CUDA_KERNELS_KERNEL_CUH

#include "backend/cuda/cuda_runtime.cuh" /* first: the runtime the programs use */

#include "device/status.h"

/* A parameter for arguments of variable size (a header and items). */
typedef struct __align__(16) sc_cuda_args_upto {
  unsigned char bytes[SC_CUDA_ARGS_UPTO_BYTES];
} sc_cuda_args_upto_t;

/* The leader of a block, at its end (or earlier: sc_dev_publish_early). A
 * block that heard of this launch's failure from another block's mark ends
 * after it: the fence orders its record after the mark it read. */
static __device__ __forceinline__ void sc_cuda_finish(const sc_dev_ctx_t *ctx, const sc_dev_error_t *err,
                                                      sc_dev_status_t *status,
                                                      sc_cuda_record_t *record) {
  if (err->kind == SC_DEV_OK)
    return;
  __threadfence_system();
  sc_dev_publish_failure(status != 0 ? status : ctx->guard.status, err);
  if (record != 0 && sc_dev_cas32(&record->failed, 0, 1)) {
    record->error = *err;
    sc_dev_store32(&record->failed, 2);
  }
}

/* The blocks of a launch run at once: a block whose wait gave up records
 * its failure before its mark can reach another block of the launch, which
 * would otherwise end first with the echo (the stream saying "rank 1 timed
 * out waiting for rank 0" as a peer's failure on rank 1 itself, while the
 * communicator says rank 1 timed out). The record's first writer wins, so
 * the block's own end records nothing more. */
SC_DEV_FN void sc_dev_publish_early(sc_dev_ctx_t *ctx, const sc_dev_error_t *err) {
  sc_cuda_finish(ctx, err, ctx->status, ctx->record);
  __threadfence_system();
}

static __device__ __forceinline__ void sc_cuda_error_clear(sc_dev_error_t *err) {
  err->kind = SC_DEV_OK;
  err->call = 0;
  err->seq = 0;
  err->a = err->b = err->c = err->d = err->e = 0;
  err->stop = 0;
  err->stop_rank = -1;
  err->stop_result = 0;
  err->untaken = 0;
  err->why = 0;
}

/* BOUNDS: the kernel's __launch_bounds__. With SC_CUDA_KERNEL's, ptxas gives a
 * thread 64 registers: a block takes half an SM's, and computation
 * beside it keeps the rest. */
#define SC_CUDA_KERNEL(NAME, PARAM_T, ARGS_T, RUN)                                                 \
  SC_CUDA_KERNEL_BOUNDED(__launch_bounds__(SC_CUDA_THREADS), 1, NAME, PARAM_T, ARGS_T, RUN)
/* EARLY_STOP: whether block 0's leader reads the stop word at the start
 * (sc_cuda_read_stop_early); 0 for a program that never calls sc_dev_begin
 * on its fast path, where the read, 1.1 us to host memory, would only hold
 * the kernel's end back. */
#define SC_CUDA_KERNEL_BOUNDED(BOUNDS, EARLY_STOP, NAME, PARAM_T, ARGS_T, RUN)                     \
  static_assert(alignof(PARAM_T) <= SC_CUDA_ARGS_AT, "the arguments start at SC_CUDA_ARGS_AT");  \
  extern "C" __global__ void BOUNDS                                                                \
      NAME(sc_dev_status_t *status, sc_cuda_record_t *record, const PARAM_T args) {                \
    __shared__ sc_dev_error_t err;                                                                 \
    __shared__ int share;                                                                          \
    sc_dev_ctx_t ctx;                                                                              \
    if (threadIdx.x == 0)                                                                          \
      sc_cuda_error_clear(&err);                                                                   \
    __syncthreads();                                                                               \
    sc_cuda_ctx_init(&ctx, &err, &share, status, record);                                          \
    if (EARLY_STOP)                                                                                \
      sc_cuda_read_stop_early(&ctx, status);                                                       \
    RUN(&ctx, (const ARGS_T *)&args, &err);                                                        \
    __syncthreads();                                                                               \
    if (threadIdx.x == 0)                                                                          \
      sc_cuda_finish(&ctx, &err, status, record);                                                  \
  }

#define SC_CUDA_SOLO_KERNEL(NAME, PARAM_T, ARGS_T, RUN)                                            \
  static_assert(alignof(PARAM_T) <= SC_CUDA_ARGS_AT, "the arguments start at SC_CUDA_ARGS_AT");  \
  extern "C" __global__ void __launch_bounds__(1)                                                  \
      NAME(sc_dev_status_t *status, sc_cuda_record_t *record, const PARAM_T args) {                \
    __shared__ sc_dev_error_t err;                                                                 \
    __shared__ int share;                                                                          \
    PARAM_T mine = args; /* programs of one thread keep their progress in their arguments */      \
    sc_dev_ctx_t ctx;                                                                              \
    sc_cuda_error_clear(&err);                                                                     \
    sc_cuda_ctx_init(&ctx, &err, &share, status, record);                                          \
    RUN(&ctx, (const ARGS_T *)&mine, &err);                                                        \
    sc_cuda_finish(&ctx, &err, status, record);                                                    \
  }

#endif
