/* The COLL program's twoshot path (device/coll.h). */
#include "backend/cuda/kernels/coll_kernel.cuh"

SC_CUDA_COLL_KERNEL(sc_kernel_coll_twoshot, SC_COLL_PATH_TWOSHOT)
