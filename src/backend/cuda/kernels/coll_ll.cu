/* The COLL program's LL path (device/coll_ll.h): a kernel per kind, and for
 * the kinds that reduce one more per common reduction (float32, bfloat16 and
 * float16 sums), so that a small call branches on neither (cuda_programs.c
 * picks the kernel; the lists there and here are in the same order). Each
 * runs small calls on few blocks (SC_COLL_LL_MAX_BLOCKS): one block an SM
 * lets ptxas give a thread 128 registers instead of spilling to the stack, 2
 * us less per call on 4 H200s (docs/PERFORMANCE.md), at the cost of a whole
 * SM's registers for each of those few blocks. */
#include "backend/cuda/kernels/coll_kernel.cuh"

/* DTYPE and OP -1: the reduction the arguments name. */
#define SC_CUDA_COLL_LL_KERNEL(NAME, KIND, DTYPE, OP)                                              \
  SC_DEV_FN void NAME##_run(sc_dev_ctx_t *ctx, const sc_coll_args_t *a, sc_dev_error_t *err) {    \
    sc_coll_ll_call(ctx, a, err, KIND, DTYPE, OP);                                                 \
  }                                                                                                \
  SC_CUDA_KERNEL_BOUNDED(__launch_bounds__(SC_CUDA_THREADS, 1), 0, NAME, sc_coll_args_t,          \
                         sc_coll_args_t, NAME##_run)

SC_CUDA_COLL_LL_KERNEL(sc_kernel_coll_ll_allreduce, SC_COLL_ALLREDUCE, -1, -1)
SC_CUDA_COLL_LL_KERNEL(sc_kernel_coll_ll_reduce, SC_COLL_REDUCE, -1, -1)
SC_CUDA_COLL_LL_KERNEL(sc_kernel_coll_ll_broadcast, SC_COLL_BROADCAST, -1, -1)
SC_CUDA_COLL_LL_KERNEL(sc_kernel_coll_ll_allgather, SC_COLL_ALLGATHER, -1, -1)
SC_CUDA_COLL_LL_KERNEL(sc_kernel_coll_ll_reducescatter, SC_COLL_REDUCESCATTER, -1, -1)
SC_CUDA_COLL_LL_KERNEL(sc_kernel_coll_ll_alltoall, SC_COLL_ALLTOALL, -1, -1)

#define SC_CUDA_COLL_LL_SUMS(KIND, NAME)                                                           \
  SC_CUDA_COLL_LL_KERNEL(sc_kernel_coll_ll_##NAME##_f32_sum, KIND, SYMCOMM_FLOAT32, SYMCOMM_SUM)    \
  SC_CUDA_COLL_LL_KERNEL(sc_kernel_coll_ll_##NAME##_bf16_sum, KIND, SYMCOMM_BFLOAT16, SYMCOMM_SUM)  \
  SC_CUDA_COLL_LL_KERNEL(sc_kernel_coll_ll_##NAME##_f16_sum, KIND, SYMCOMM_FLOAT16, SYMCOMM_SUM)

SC_CUDA_COLL_LL_SUMS(SC_COLL_ALLREDUCE, allreduce)
SC_CUDA_COLL_LL_SUMS(SC_COLL_REDUCE, reduce)
SC_CUDA_COLL_LL_SUMS(SC_COLL_REDUCESCATTER, reducescatter)
