/* A stand-in for an old libcuda.so.1, for checking that the CUDA backend
 * refuses a driver it cannot work with, on machines with or without a GPU:
 * the build puts it in $(BUILD)/tests/fake_cuda/, and a process with that
 * folder in LD_LIBRARY_PATH loads it instead of the real driver. It answers
 * cuGetProcAddress_v2 for cuDriverGetVersion only, which reports
 * FAKE_CUDA_DRIVER_VERSION (1000 x major + 10 x minor; default 12000, CUDA
 * 12.0); every other entry point is missing, as the backend must never get
 * that far. Written from the driver API's documented interface, without its
 * headers. */
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_FOUND 500
enum { CU_GET_PROC_ADDRESS_SUCCESS = 0, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1 };

static CUresult fake_driver_get_version(int *version) {
  if (version == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  const char *v = getenv("FAKE_CUDA_DRIVER_VERSION");
  *version = v != NULL ? atoi(v) : 12000;
  return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                    int *status) {
  (void)version;
  (void)flags;
  if (symbol == NULL || pfn == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (strcmp(symbol, "cuDriverGetVersion") == 0) {
    *pfn = (void *)fake_driver_get_version;
    if (status != NULL)
      *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  *pfn = NULL;
  if (status != NULL)
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}
