/* The CUDA driver API, reached at run time: dlopen("libcuda.so.1"), then
 * cuGetProcAddress for every entry point at the version whose signature this
 * file names (cudaTypedefs.h's PFN_<name>_v<version>), so that a newer
 * driver's changed signatures never reach us. Nothing links libcuda. */
#ifndef SC_BACKEND_CUDA_DRIVER_H
#define SC_BACKEND_CUDA_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stddef.h>

#include "util/error.h"

/* The oldest driver the backend works with: 12.4, for what it asks of the
 * driver (the send/recv kernel's 4 KiB parameter block needs CUDA 12.1's
 * large kernel parameters; cuFuncGetParamInfo, which checks that kernels and
 * library agree, came with 12.4), or the major version of the toolkit that
 * compiled the kernels if that is newer (a toolkit's code needs at least its
 * own major driver version). */
#define SC_CUDA_DRIVER_FEATURES 12040
#define SC_CUDA_DRIVER_TOOLKIT ((CUDA_VERSION / 1000) * 1000)
#define SC_CUDA_DRIVER_MIN                                                                         \
  (SC_CUDA_DRIVER_TOOLKIT > SC_CUDA_DRIVER_FEATURES ? SC_CUDA_DRIVER_TOOLKIT : SC_CUDA_DRIVER_FEATURES)

/* X(name, version): the driver entry points the backend uses. cuda.h renames
 * some (cuMemAlloc is cuMemAlloc_v2): the table's fields carry those names
 * and SC_CU uses them alike; cuGetProcAddress gets the plain name (#name)
 * and the version that fixes the signature. */
#define SC_CUDA_DRIVER_FNS(X)                                                                      \
  X(cuGetErrorName, 6000)                                                                          \
  X(cuGetErrorString, 6000)                                                                        \
  X(cuInit, 2000)                                                                                  \
  X(cuDriverGetVersion, 2020)                                                                      \
  X(cuDeviceGet, 2000)                                                                             \
  X(cuDeviceGetCount, 2000)                                                                        \
  X(cuDeviceGetAttribute, 2000)                                                                    \
  X(cuDeviceGetPCIBusId, 4010)                                                                     \
  X(cuDevicePrimaryCtxRetain, 7000)                                                                \
  X(cuDevicePrimaryCtxRelease, 11000)                                                              \
  X(cuCtxGetCurrent, 4000)                                                                         \
  X(cuCtxPushCurrent, 4000)                                                                        \
  X(cuCtxPopCurrent, 4000)                                                                         \
  X(cuMemGetAllocationGranularity, 10020)                                                          \
  X(cuMemCreate, 10020)                                                                            \
  X(cuMemRelease, 10020)                                                                           \
  X(cuMemAddressReserve, 10020)                                                                    \
  X(cuMemAddressFree, 10020)                                                                       \
  X(cuMemMap, 10020)                                                                               \
  X(cuMemUnmap, 10020)                                                                             \
  X(cuMemSetAccess, 10020)                                                                         \
  X(cuMemExportToShareableHandle, 10020)                                                           \
  X(cuMemImportFromShareableHandle, 10020)                                                         \
  X(cuMemAlloc, 3020)                                                                              \
  X(cuMemFree, 3020)                                                                               \
  X(cuMemsetD8, 3020)                                                                              \
  X(cuMemcpyHtoD, 3020)                                                                            \
  X(cuMemcpyAsync, 4000)                                                                           \
  X(cuMemHostAlloc, 2020)                                                                          \
  X(cuMemFreeHost, 2000)                                                                           \
  X(cuMemHostGetDevicePointer, 3020)                                                               \
  X(cuIpcGetMemHandle, 4010)                                                                       \
  X(cuIpcOpenMemHandle, 11000)                                                                     \
  X(cuIpcCloseMemHandle, 4010)                                                                     \
  X(cuPointerGetAttribute, 4000)                                                                   \
  X(cuStreamCreate, 2000)                                                                          \
  X(cuStreamDestroy, 4000)                                                                         \
  X(cuStreamQuery, 2000)                                                                           \
  X(cuStreamSynchronize, 2000)                                                                     \
  X(cuStreamGetCtx, 9020)                                                                          \
  X(cuStreamIsCapturing, 10000)                                                                    \
  X(cuStreamWaitEvent, 3020)                                                                       \
  X(cuEventCreate, 2000)                                                                           \
  X(cuEventDestroy, 4000)                                                                          \
  X(cuEventRecord, 2000)                                                                           \
  X(cuEventQuery, 2000)                                                                            \
  X(cuModuleLoadData, 2000)                                                                        \
  X(cuModuleUnload, 2000)                                                                          \
  X(cuModuleGetFunction, 2000)                                                                     \
  X(cuFuncGetParamInfo, 12040)                                                                     \
  X(cuLaunchKernel, 4000)                                                                          \
  X(cuLaunchKernelEx, 11060)

#define SC_CUDA_PFN_FIELD(name, version) PFN_##name##_v##version name;
typedef struct sc_cuda_driver {
  SC_CUDA_DRIVER_FNS(SC_CUDA_PFN_FIELD)
  int version; /* cuDriverGetVersion: 1000 x major + 10 x minor */
} sc_cuda_driver_t;
#undef SC_CUDA_PFN_FIELD

/* The driver, loaded and initialised once per process; NULL with the reason
 * in `why` ("no libcuda.so.1 ...", "no CUDA device ...", "driver older than
 * ...") when there is none usable. Quiet: the caller decides what to log. */
const sc_cuda_driver_t *sc_cuda_driver(char *why, size_t len);

/* The driver table after a successful sc_cuda_driver() (every entry of the
 * backend runs after device_open succeeded). */
extern sc_cuda_driver_t sc_cu;

/* Checks a driver call: `SC_CU(cuMemCreate, (&h, size, &prop, 0), "allocating %zu bytes", size)`
 * returns SYMCOMM_OK or raises SYMCOMM_ERR_DEVICE (OUT_OF_MEMORY for the
 * driver's out-of-memory) naming the call and its CUresult. */
#define SC_CU(fn, args, ...) sc_cuda_call(sc_cu.fn args, #fn, __FILE__, __LINE__, __VA_ARGS__)
sc_result_t sc_cuda_call(CUresult rc, const char *call, const char *file, int line, const char *fmt,
                         ...) __attribute__((format(printf, 5, 6)));

/* "CUDA_ERROR_..." for rc (also before the driver loaded: "CUresult <n>"). */
const char *sc_cuda_result_name(CUresult rc);

#endif
