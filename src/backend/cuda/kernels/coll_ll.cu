/* The COLL program's LL path (device/coll_ll.h). It runs small calls on few
 * blocks (SC_COLL_LL_MAX_BLOCKS): one block an SM lets ptxas give a thread
 * 128 registers instead of spilling to the stack, 2 us less per call on 4
 * H200s (docs/PERFORMANCE.md), at the cost of a whole SM's registers for
 * each of those few blocks. */
#include "backend/cuda/kernels/coll_kernel.cuh"

SC_CUDA_COLL_KERNEL_BOUNDED(__launch_bounds__(SC_CUDA_THREADS, 1), sc_kernel_coll_ll, SC_COLL_PATH_LL)
