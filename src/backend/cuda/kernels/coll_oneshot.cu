/* The COLL program's oneshot path (device/coll.h). */
#include "backend/cuda/kernels/coll_kernel.cuh"

SC_CUDA_COLL_KERNEL(sc_kernel_coll_oneshot, SC_COLL_PATH_ONESHOT)
