#include "test_device.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static struct {
  bool open, cuda;
  int device;
  void *ctx;
  void *copies; /* a non-blocking stream of our own for uploads and downloads */
} td_dev = {.device = -1};

static tdev_driver_t td_cu;
static bool td_cu_loaded;

/* cuGetProcAddress_v2: an entry point at the version that fixes its signature. */
typedef int (*td_get_proc_t)(const char *symbol, void **fn, int version, unsigned long long flags,
                             int *status);

static void td_cu_get(td_get_proc_t get, const char *name, int version, void *slot) {
  void *fn = NULL;
  int status = -1;
  int rc = get(name, &fn, version, 0 /* CU_GET_PROC_ADDRESS_DEFAULT */, &status);
  TEST_ASSERT(rc == 0 && fn != NULL && status == 0,
              "cuGetProcAddress(%s, version %d): CUresult %d, status %d", name, version, rc, status);
  memcpy(slot, &fn, sizeof(fn));
}

static void td_cu_load(void) {
  if (td_cu_loaded)
    return;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  TEST_ASSERT(lib != NULL, "the test runs on CUDA, but cannot load libcuda.so.1: %s",
              dlerror());
  td_get_proc_t get = NULL;
  void *sym = dlsym(lib, "cuGetProcAddress_v2");
  TEST_ASSERT(sym != NULL, "libcuda.so.1 has no cuGetProcAddress_v2 (a driver older than 12.0)");
  memcpy(&get, &sym, sizeof(sym));
#define TD_GET(name, version) td_cu_get(get, #name, version, &td_cu.name)
  TD_GET(cuGetErrorName, 6000);
  TD_GET(cuInit, 2000);
  TD_GET(cuDeviceGet, 2000);
  TD_GET(cuDeviceGetCount, 2000);
  TD_GET(cuDevicePrimaryCtxRetain, 7000);
  TD_GET(cuCtxSetCurrent, 4000);
  TD_GET(cuCtxGetCurrent, 4000);
  TD_GET(cuMemAlloc, 3020);
  TD_GET(cuMemFree, 3020);
  TD_GET(cuMemcpyHtoDAsync, 3020);
  TD_GET(cuMemcpyDtoHAsync, 3020);
  TD_GET(cuMemsetD8Async, 3020);
  TD_GET(cuStreamCreate, 2000);
  TD_GET(cuStreamDestroy, 4000);
  TD_GET(cuStreamSynchronize, 2000);
  TD_GET(cuStreamQuery, 2000);
  TD_GET(cuStreamBeginCapture, 10010);
  TD_GET(cuStreamEndCapture, 10000);
  TD_GET(cuGraphGetNodes, 10000);
  TD_GET(cuGraphInstantiateWithFlags, 11040);
  TD_GET(cuGraphLaunch, 10000);
  TD_GET(cuGraphExecDestroy, 10000);
  TD_GET(cuGraphDestroy, 10000);
  TD_GET(cuLaunchHostFunc, 10000);
  TD_GET(cuModuleLoadData, 2000);
  TD_GET(cuModuleUnload, 2000);
  TD_GET(cuModuleGetFunction, 2000);
  TD_GET(cuLaunchKernel, 4000);
#undef TD_GET
  td_cu_loaded = true;
}

const char *tdev_cu_name(int rc) {
  const char *name = NULL;
  if (!td_cu_loaded || td_cu.cuGetErrorName(rc, &name) != 0 || name == NULL)
    return "an unknown CUresult";
  return name;
}

void tdev_cu_check(int rc, const char *call, const char *file, int line) {
  if (rc != 0)
    test_fail(file, line, "%s returned %s (%d)", call, tdev_cu_name(rc), rc);
}

const tdev_driver_t *tdev_cu(void) {
  TEST_ASSERT(td_dev.open && td_dev.cuda,
              "the CUDA driver was asked for, but the communicator's backend is not \"cuda\" "
              "(run with SYMCOMM_BACKEND=cuda on a GPU host)");
  return &td_cu;
}

void tdev_open(symcomm_comm_t comm) {
  const char *backend = NULL;
  int device = -1;
  TEST_OK(symcomm_comm_device(comm, &backend, &device));
  bool cuda = strcmp(backend, "cuda") == 0;
  TEST_ASSERT(cuda || strcmp(backend, "host") == 0, "unknown backend \"%s\"", backend);
  if (td_dev.open) {
    TEST_ASSERT(td_dev.cuda == cuda && (!cuda || td_dev.device == device),
                "a second communicator on backend %s device %d, the first was on %s device %d",
                backend, device, td_dev.cuda ? "cuda" : "host", td_dev.device);
    if (cuda) /* maybe another thread */
      TDEV_CU(td_cu.cuCtxSetCurrent(td_dev.ctx));
    return;
  }
  if (cuda) {
    tdev_open_device(device);
    return;
  }
  td_dev.device = device;
  td_dev.open = true;
}

void tdev_open_device(int ordinal) {
  TEST_ASSERT(!td_dev.open, "the device was opened already");
  td_dev.cuda = true;
  td_dev.device = ordinal;
  td_cu_load();
  TDEV_CU(td_cu.cuInit(0));
  int dev = -1;
  TDEV_CU(td_cu.cuDeviceGet(&dev, ordinal));
  /* The library works in the primary context: so do the tests (as the CUDA
   * runtime and PyTorch do). */
  TDEV_CU(td_cu.cuDevicePrimaryCtxRetain(&td_dev.ctx, dev));
  TDEV_CU(td_cu.cuCtxSetCurrent(td_dev.ctx));
  TDEV_CU(td_cu.cuStreamCreate(&td_dev.copies, TDEV_STREAM_NON_BLOCKING));
  td_dev.open = true;
}

void tdev_init_job(symcomm_comm_t *comm, int *rank, int *size, bool need_cuda) {
  TEST_OK(symcomm_init_from_env(comm, NULL));
  TEST_OK(symcomm_comm_rank(*comm, rank));
  TEST_OK(symcomm_comm_size(*comm, size));
  tdev_open(*comm);
  TEST_ASSERT(td_dev.cuda || !need_cuda,
              "this test needs the CUDA backend (SYMCOMM_BACKEND=cuda on a GPU host)");
  TEST_ASSERT(*size >= 2, "run it on 2 ranks or more");
}

bool tdev_cuda(void) {
  TEST_ASSERT(td_dev.open, "tdev_open was not called");
  return td_dev.cuda;
}

int tdev_device(void) { return td_dev.device; }

void *tdev_alloc(size_t bytes) {
  if (!tdev_cuda()) {
    void *p = malloc(bytes > 0 ? bytes : 1);
    TEST_ASSERT(p != NULL, "no memory for %zu bytes", bytes);
    return p;
  }
  tdev_ptr_t p = 0;
  int rc = td_cu.cuMemAlloc(&p, bytes > 0 ? bytes : 1);
  if (rc != 0)
    test_fail(__FILE__, __LINE__, "cuMemAlloc of %zu bytes on device %d returned %s (%d)", bytes,
              td_dev.device, tdev_cu_name(rc), rc);
  return (void *)(uintptr_t)p;
}

void tdev_free(void *p) {
  if (p == NULL)
    return;
  if (!tdev_cuda())
    free(p);
  else
    TDEV_CU(td_cu.cuMemFree((tdev_ptr_t)(uintptr_t)p));
}

void tdev_upload(void *dev, const void *host, size_t bytes) {
  if (bytes == 0 || dev == host)
    return;
  if (!tdev_cuda()) {
    memcpy(dev, host, bytes);
    return;
  }
  /* On our own stream, then waited for: the data is in place before any
   * later launch, whichever stream that is on. */
  int rc = td_cu.cuMemcpyHtoDAsync((tdev_ptr_t)(uintptr_t)dev, host, bytes, td_dev.copies);
  if (rc == 0)
    rc = td_cu.cuStreamSynchronize(td_dev.copies);
  if (rc != 0)
    test_fail(__FILE__, __LINE__, "copying %zu bytes from the host to %p on device %d: %s (%d)",
              bytes, dev, td_dev.device, tdev_cu_name(rc), rc);
}

void tdev_download(void *host, const void *dev, size_t bytes) {
  if (bytes == 0 || dev == host)
    return;
  if (!tdev_cuda()) {
    memcpy(host, dev, bytes);
    return;
  }
  int rc = td_cu.cuMemcpyDtoHAsync(host, (tdev_ptr_t)(uintptr_t)dev, bytes, td_dev.copies);
  if (rc == 0)
    rc = td_cu.cuStreamSynchronize(td_dev.copies);
  if (rc != 0)
    test_fail(__FILE__, __LINE__, "copying %zu bytes from %p on device %d to the host: %s (%d)",
              bytes, dev, td_dev.device, tdev_cu_name(rc), rc);
}

/* ---- buffers with a host copy */

tdev_buf_t tdev_buf_alloc(size_t bytes, size_t misalign) {
  tdev_buf_t b = {.host = td_buf_alloc(bytes, misalign)};
  if (!tdev_cuda()) {
    b.data = b.host.data;
    return b;
  }
  b.dmem = tdev_alloc(bytes + 2 * TD_GUARD + 128);
  uintptr_t base = ((uintptr_t)b.dmem + 63) / 64 * 64;
  b.data = (unsigned char *)(base + TD_GUARD + misalign % 64);
  tdev_buf_push(&b);
  return b;
}

void tdev_buf_push(tdev_buf_t *b) {
  tdev_upload(b->data - TD_GUARD, b->host.data - TD_GUARD, b->host.bytes + 2 * TD_GUARD);
}

void tdev_buf_pull(tdev_buf_t *b) {
  tdev_download(b->host.data - TD_GUARD, b->data - TD_GUARD, b->host.bytes + 2 * TD_GUARD);
}

void tdev_buf_free(tdev_buf_t *b) {
  if (b->dmem != NULL)
    tdev_free(b->dmem);
  td_buf_free(&b->host);
  b->data = b->dmem = NULL;
}

/* ---- host copies of memory the test did not allocate */

tdev_mirror_t tdev_mirror(void *dev, size_t bytes) {
  tdev_mirror_t m = {.dev = dev, .host = dev, .bytes = bytes};
  if (tdev_cuda()) {
    m.owned = true;
    m.host = malloc(bytes > 0 ? bytes : 1);
    TEST_ASSERT(m.host != NULL, "no memory for a host copy of %zu bytes", bytes);
    tdev_download(m.host, dev, bytes);
  }
  return m;
}

tdev_mirror_t tdev_buf_mirror(tdev_buf_t *b) {
  return (tdev_mirror_t){.dev = b->data - TD_GUARD, .host = b->host.data - TD_GUARD,
                         .bytes = b->host.bytes + 2 * TD_GUARD};
}

unsigned char *tdev_host_of(const tdev_mirror_t *m, const void *dev) {
  const unsigned char *p = dev;
  TEST_ASSERT(p >= m->dev && p <= m->dev + m->bytes, "%p is outside the mirrored %zu bytes at %p",
              dev, m->bytes, (void *)m->dev);
  return m->host + (p - m->dev);
}

static void td_mirror_range(const tdev_mirror_t *m, const void *dev, size_t bytes) {
  const unsigned char *p = dev;
  TEST_ASSERT(p >= m->dev && (size_t)(p - m->dev) <= m->bytes && bytes <= m->bytes - (size_t)(p - m->dev),
              "%zu bytes at %p are outside the mirrored %zu bytes at %p", bytes, dev, m->bytes,
              (void *)m->dev);
}

void tdev_mirror_push(tdev_mirror_t *m, const void *dev, size_t bytes) {
  td_mirror_range(m, dev, bytes);
  tdev_upload((void *)(uintptr_t)dev, tdev_host_of(m, dev), bytes);
}

void tdev_mirror_pull(tdev_mirror_t *m, const void *dev, size_t bytes) {
  td_mirror_range(m, dev, bytes);
  tdev_download(tdev_host_of(m, dev), dev, bytes);
}

void tdev_mirror_free(tdev_mirror_t *m) {
  if (m->owned)
    free(m->host);
  m->host = m->dev = NULL;
}
