/* The kernel of test_gpu_bulk: block b runs case b (gpu_bulk.h) with the CUDA
 * backend's runtime, as the collective and send/recv programs do, every
 * thread of the block together. A reduction runs twice, through the
 * backend's sc_dev_reduce and through the portable loop on its own copy of
 * the buffers, so that the test compares them bit for bit on the GPU too
 * (where a NaN that arithmetic makes has the GPU's bits, not the host's). */
#include "backend/cuda/cuda_runtime.cuh"

#include "gpu_bulk.h"

extern "C" __global__ void __launch_bounds__(SC_CUDA_THREADS) tg_bulk(const tg_case_t *cases) {
  __shared__ sc_dev_error_t err;
  __shared__ int share;
  sc_dev_ctx_t ctx;
  sc_cuda_ctx_init(&ctx, &err, &share, 0, 0);
  const tg_case_t *c = &cases[blockIdx.x];
  if (c->kind == TG_COPY) {
    sc_dev_copy(&ctx, (void *)c->dst, (const void *)c->src, c->count);
    return;
  }
  sc_dev_reduce(&ctx, (void *)c->dst, (const void *const *)c->src, c->nsrcs, c->count, c->dtype,
                c->op, c->divisor);
  sc_dev_reduce_elems(&ctx, (void *)c->ref_dst, (const void *const *)c->ref_src, c->nsrcs, c->count,
                      c->dtype, c->op, c->divisor);
}
