/* The COLL program's windows path (device/coll.h). */
#include "backend/cuda/kernels/coll_kernel.cuh"

SC_CUDA_COLL_KERNEL(sc_kernel_coll_windows, SC_COLL_PATH_WINDOWS)
