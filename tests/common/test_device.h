/* Test buffers on the communicator's device, so that one test program runs on
 * both backends: on "cuda" a buffer is GPU memory (cuMemAlloc) and data moves
 * with synchronous copies; on "host" (simulated GPUs) the buffer is the host
 * memory itself and the copies do nothing. Tests fill and check a host copy
 * (tests/common/test_data.h works on it unchanged), push it before a call and
 * pull it after the stream's synchronize.
 *
 * The driver is reached like the library reaches it: dlopen("libcuda.so.1")
 * and cuGetProcAddress, at fixed versions; no CUDA header. Every driver call
 * is checked and a failure ends the test naming the call and its CUresult. */
#ifndef SC_TEST_DEVICE_H
#define SC_TEST_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symcomm.h"
#include "test_data.h"

/* Looks at comm's backend (symcomm_comm_device); on "cuda", loads the driver
 * and makes the device's primary context (the library's) current in the
 * calling thread. Call it after init in every process, and again in any other
 * thread that uses these helpers. A later communicator must be on the same
 * backend and device. */
void tdev_open(symcomm_comm_t comm);
/* A rank of a job under a launcher (symcomm_init_from_env) with tdev_open
 * done; fails clearly unless it has 2 ranks or more and, with need_cuda,
 * runs on the CUDA backend. */
void tdev_init_job(symcomm_comm_t *comm, int *rank, int *size, bool need_cuda);
/* For a GPU test without a communicator: the driver, CUDA device `ordinal`
 * and its primary context, as tdev_open gives them on "cuda". */
void tdev_open_device(int ordinal);
/* Whether buffers are GPU memory; the device index. */
bool tdev_cuda(void);
int tdev_device(void);

/* `bytes` (0 allowed) of device memory, or host memory on "host"; never NULL. */
void *tdev_alloc(size_t bytes);
void tdev_free(void *p);
/* Synchronous copies between host memory and device memory (memcpy on "host"). */
void tdev_upload(void *dev, const void *host, size_t bytes);
void tdev_download(void *host, const void *dev, size_t bytes);

/* A buffer with its host copy: `host` is a td_buf_t (guards around, the
 * sentinel inside); `data` is what calls get, at the same misalignment, with
 * room for the same guards around it (== host.data on "host"). */
typedef struct tdev_buf {
  unsigned char *data;
  td_buf_t host;
  unsigned char *dmem; /* the device allocation (NULL on "host") */
} tdev_buf_t;
/* Allocated, the host copy as td_buf_alloc makes it, and pushed. */
tdev_buf_t tdev_buf_alloc(size_t bytes, size_t misalign);
/* The whole buffer, guards included: host copy -> device, device -> host copy. */
void tdev_buf_push(tdev_buf_t *b);
void tdev_buf_pull(tdev_buf_t *b);
void tdev_buf_free(tdev_buf_t *b);

/* A host copy of device memory the test did not allocate (a window, a
 * symcomm_mem_alloc buffer): `host` mirrors [dev, dev + bytes) byte for byte
 * (it is dev itself on "host"). Push and pull move a part of it. */
typedef struct tdev_mirror {
  unsigned char *dev, *host;
  size_t bytes;
  bool owned; /* host was allocated for it */
} tdev_mirror_t;
tdev_mirror_t tdev_mirror(void *dev, size_t bytes);
/* A tdev_buf_t (guards included) seen as a mirror: its own host copy. */
tdev_mirror_t tdev_buf_mirror(tdev_buf_t *b);
/* The host copy's byte for a device address inside the mirrored range. */
unsigned char *tdev_host_of(const tdev_mirror_t *m, const void *dev);
void tdev_mirror_push(tdev_mirror_t *m, const void *dev, size_t bytes);
void tdev_mirror_pull(tdev_mirror_t *m, const void *dev, size_t bytes);
void tdev_mirror_free(tdev_mirror_t *m);

/* ---- the driver, for the GPU-only tests (tests/gpu/): CUDA 12 signatures,
 * CUresult as int, handles as void pointers */

typedef unsigned long long tdev_ptr_t; /* CUdeviceptr */
typedef struct tdev_driver {
  int (*cuGetErrorName)(int rc, const char **name);
  int (*cuInit)(unsigned int flags);
  int (*cuDeviceGet)(int *dev, int ordinal);
  int (*cuDeviceGetCount)(int *count);
  int (*cuDevicePrimaryCtxRetain)(void **ctx, int dev);
  int (*cuCtxSetCurrent)(void *ctx);
  int (*cuCtxGetCurrent)(void **ctx);
  int (*cuMemAlloc)(tdev_ptr_t *ptr, size_t bytes);
  int (*cuMemFree)(tdev_ptr_t ptr);
  int (*cuMemcpyHtoDAsync)(tdev_ptr_t dst, const void *src, size_t bytes, void *stream);
  int (*cuMemcpyDtoHAsync)(void *dst, tdev_ptr_t src, size_t bytes, void *stream);
  int (*cuMemsetD8Async)(tdev_ptr_t dst, unsigned char value, size_t bytes, void *stream);
  int (*cuStreamCreate)(void **stream, unsigned int flags);
  int (*cuStreamDestroy)(void *stream);
  int (*cuStreamSynchronize)(void *stream);
  int (*cuStreamQuery)(void *stream);
  int (*cuStreamBeginCapture)(void *stream, int mode);
  int (*cuStreamEndCapture)(void *stream, void **graph);
  int (*cuGraphGetNodes)(void *graph, void **nodes, size_t *count);
  int (*cuGraphInstantiateWithFlags)(void **exec, void *graph, unsigned long long flags);
  int (*cuGraphLaunch)(void *exec, void *stream);
  int (*cuGraphExecDestroy)(void *exec);
  int (*cuGraphDestroy)(void *graph);
  /* fn(user) runs on a driver thread once the stream's earlier work is done;
   * later work waits for it to return */
  int (*cuLaunchHostFunc)(void *stream, void (*fn)(void *user), void *user);
  int (*cuModuleLoadData)(void **module, const void *image);
  int (*cuModuleUnload)(void *module);
  int (*cuModuleGetFunction)(void **fn, void *module, const char *name);
  int (*cuLaunchKernel)(void *fn, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                        unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                        void *stream, void **params, void **extra);
} tdev_driver_t;

/* The driver (after tdev_open on a "cuda" communicator; fails the test otherwise). */
const tdev_driver_t *tdev_cu(void);
/* Fails the test unless rc is CUDA_SUCCESS: "<what>: CUDA_ERROR_... (<rc>)". */
#define TDEV_CU(call) tdev_cu_check((call), #call, __FILE__, __LINE__)
void tdev_cu_check(int rc, const char *call, const char *file, int line);
/* "CUDA_ERROR_..." for rc. */
const char *tdev_cu_name(int rc);

/* CUresult values and flags the tests use. */
enum {
  TDEV_CUDA_SUCCESS = 0,
  TDEV_CUDA_ERROR_NOT_READY = 600,
  TDEV_STREAM_DEFAULT = 0,
  TDEV_STREAM_NON_BLOCKING = 1,
  TDEV_CAPTURE_MODE_GLOBAL = 0
};

#endif
