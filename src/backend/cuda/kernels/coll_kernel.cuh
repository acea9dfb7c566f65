/* A collective: a kernel per path of the COLL program (cuda_programs.c picks
 * the call's), each in a file of its own holding that path's code alone. */
#ifndef SC_BACKEND_CUDA_KERNELS_COLL_KERNEL_CUH
#define SC_BACKEND_CUDA_KERNELS_COLL_KERNEL_CUH

#include "backend/cuda/kernels/kernel.cuh" /* first: the runtime the programs use */

#include "device/coll.h"

#define SC_CUDA_COLL_KERNEL_BOUNDED(BOUNDS, NAME, PATH)                                            \
  SC_DEV_FN void NAME##_run(sc_dev_ctx_t *ctx, const sc_coll_args_t *a, sc_dev_error_t *err) {    \
    sc_dev_coll_run_on(ctx, a, err, PATH);                                                         \
  }                                                                                                \
  SC_CUDA_KERNEL_BOUNDED(BOUNDS, 0, NAME, sc_coll_args_t, sc_coll_args_t, NAME##_run)
#define SC_CUDA_COLL_KERNEL(NAME, PATH)                                                            \
  SC_CUDA_COLL_KERNEL_BOUNDED(__launch_bounds__(SC_CUDA_THREADS), NAME, PATH)

#endif
